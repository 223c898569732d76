//! The received rate R_hat (draft-ietf-rmcat-gcc-02 5.5): bytes reported
//! received over the last `window` of arrival time, in `BINS` bins of
//! window / BINS each, so its memory is fixed whatever the rate.

use crate::sim::SimTime;

pub const BINS: usize = 50;

pub struct RateWindow {
    bin: SimTime,
    bytes: [u64; BINS],
    /// Index of the newest bin (in bins since time 0).
    newest: Option<u64>,
    first_arrival: Option<SimTime>,
    latest: SimTime,
}

impl RateWindow {
    pub fn new(window: SimTime) -> Self {
        RateWindow {
            bin: SimTime::from_nanos((window.as_nanos() / BINS as u64).max(1)),
            bytes: [0; BINS],
            newest: None,
            first_arrival: None,
            latest: SimTime::ZERO,
        }
    }

    /// A packet of `bytes` arrived at `arrival` (arrivals about in order;
    /// one older than the window is left out).
    pub fn add(&mut self, arrival: SimTime, bytes: u32) {
        self.first_arrival.get_or_insert(arrival);
        let idx = arrival.as_nanos() / self.bin.as_nanos();
        let newest = *self.newest.get_or_insert(idx);
        if idx > newest {
            for i in (newest + 1)..=idx.min(newest + BINS as u64) {
                self.bytes[(i % BINS as u64) as usize] = 0;
            }
            self.newest = Some(idx);
        } else if newest - idx >= BINS as u64 {
            return;
        }
        self.bytes[(idx % BINS as u64) as usize] += bytes as u64;
        self.latest = self.latest.max(arrival);
    }

    /// The rate over the window ending at the newest arrival, bit/s;
    /// `None` until a whole window has passed since the first arrival.
    pub fn rate_bps(&self) -> Option<f64> {
        let first = self.first_arrival?;
        let window = SimTime::from_nanos(self.bin.as_nanos() * BINS as u64);
        if self.latest.saturating_sub(first) < window {
            return None;
        }
        let total: u64 = self.bytes.iter().sum();
        Some(total as f64 * 8.0 / window.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1000-byte packets every 10 ms are 800 kbit/s; a gap longer than
    /// the window empties it.
    #[test]
    fn a_steady_stream_gives_its_rate() {
        let mut w = RateWindow::new(SimTime::from_millis(500));
        for i in 0..50 {
            w.add(SimTime::from_millis(10 * i), 1000);
            assert_eq!(w.rate_bps(), None);
        }
        for i in 50..200 {
            w.add(SimTime::from_millis(10 * i), 1000);
        }
        assert!((w.rate_bps().unwrap() - 800e3).abs() < 1e-6);
        w.add(SimTime::from_millis(5000), 1000);
        assert!((w.rate_bps().unwrap() - 16e3).abs() < 1e-6);
    }

    /// An arrival a whole window after the first lands in the first one's
    /// bin (index 50 modulo 50): the bin is emptied first, so only the
    /// new packet counts.
    #[test]
    fn a_bin_reused_a_window_later_starts_empty() {
        let mut w = RateWindow::new(SimTime::from_millis(500));
        w.add(SimTime::ZERO, 1000);
        w.add(SimTime::from_millis(500), 1000);
        assert!((w.rate_bps().unwrap() - 16e3).abs() < 1e-6);
    }
}
