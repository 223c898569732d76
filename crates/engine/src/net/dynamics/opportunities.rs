//! Trace-driven capacity in Mahimahi's `mm-link` format: each line of the
//! trace is one delivery opportunity, in milliseconds from the start,
//! worth a fixed number of bytes (1504 in Mahimahi).
//!
//! Opportunity number g (from zero, counted over repetitions) falls at
//! `ms[g % n] + (g / n) * ms[n - 1]`: as in Mahimahi, a repeating trace
//! starts again at its last timestamp (so a trace whose first line is 0
//! has two opportunities at each junction). A trace that does not repeat
//! offers nothing after its last line.

use crate::sim::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct Opportunities {
    /// Opportunity times within one pass, non-decreasing.
    at: Vec<SimTime>,
    /// One pass's length: the last timestamp (positive).
    period: SimTime,
    repeat: bool,
    /// Bytes one opportunity can carry.
    pub bytes: u32,
}

impl Opportunities {
    /// From validated milliseconds (non-empty, non-decreasing, the last
    /// positive).
    pub fn new(ms: &[u64], repeat: bool, bytes: u32) -> Self {
        debug_assert!(ms.last().is_some_and(|&l| l > 0));
        debug_assert!(ms.windows(2).all(|w| w[0] <= w[1]));
        let at: Vec<SimTime> = ms.iter().map(|&m| SimTime::from_millis(m)).collect();
        let period = *at.last().expect("a validated trace is not empty");
        Opportunities {
            at,
            period,
            repeat,
            bytes,
        }
    }

    /// The mean capacity over one pass, in bit/s.
    pub fn mean_rate_bps(&self) -> f64 {
        self.at.len() as f64 * self.bytes as f64 * 8.0 / self.period.as_secs_f64()
    }

    /// When opportunity `g` falls (None: past a trace that does not repeat).
    pub fn time_of(&self, g: u64) -> Option<SimTime> {
        let n = self.at.len() as u64;
        if !self.repeat && g >= n {
            return None;
        }
        let pass = (g / n).checked_mul(self.period.0)?;
        Some(SimTime(pass.checked_add(self.at[(g % n) as usize].0)?))
    }

    /// The first opportunity falling strictly after `t`; every opportunity
    /// before it falls at or before `t` (times never decrease with g). Past
    /// the end of a trace that does not repeat: the number of its
    /// opportunities, one past the last.
    pub fn first_after(&self, t: SimTime) -> u64 {
        let n = self.at.len() as u64;
        let pass = t.0 / self.period.0;
        let r = SimTime(t.0 - pass * self.period.0);
        let i = self.at.partition_point(|&a| a <= r) as u64;
        if !self.repeat && pass > 0 {
            return n;
        }
        pass * n + i
    }

    /// The first opportunity falling at or after `t`.
    pub fn first_at_or_after(&self, t: SimTime) -> u64 {
        if t.0 == 0 {
            0
        } else {
            self.first_after(SimTime(t.0 - 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn a_repeating_trace_starts_again_at_its_last_timestamp() {
        // Mahimahi: base += last timestamp at each wrap.
        let o = Opportunities::new(&[0, 4, 4, 10], true, 1504);
        let times: Vec<u64> = (0..9)
            .map(|g| o.time_of(g).unwrap().0 / 1_000_000)
            .collect();
        assert_eq!(times, [0, 4, 4, 10, 10, 14, 14, 20, 20]);
        assert_eq!(o.first_after(ms(0)), 1);
        assert_eq!(o.first_after(ms(3)), 1);
        assert_eq!(o.first_after(ms(4)), 3, "both at 4 ms are at or before");
        assert_eq!(
            o.first_after(ms(10)),
            5,
            "10 ms: the last of one pass and the first of the next"
        );
        assert_eq!(o.first_after(ms(19)), 7);
        assert_eq!(o.first_at_or_after(ms(4)), 1);
        assert_eq!(o.first_at_or_after(ms(0)), 0);
        assert_eq!(o.first_at_or_after(ms(10)), 3);
        // Over a whole pass: 4 opportunities of 1504 bytes in 10 ms.
        assert!((o.mean_rate_bps() - 4.0 * 1504.0 * 8.0 / 0.01).abs() < 1e-6);
    }

    #[test]
    fn first_after_agrees_with_the_times_everywhere() {
        let o = Opportunities::new(&[1, 1, 3, 7, 7, 8], true, 1504);
        for t in 0..40_000_000u64 / 250_000 {
            let t = SimTime(t * 250_000);
            let g = o.first_after(t);
            assert!(o.time_of(g).unwrap() > t, "{t}");
            assert!(g == 0 || o.time_of(g - 1).unwrap() <= t, "{t}");
            let h = o.first_at_or_after(t);
            assert!(o.time_of(h).unwrap() >= t);
            assert!(h == 0 || o.time_of(h - 1).unwrap() < t);
        }
    }

    #[test]
    fn a_trace_that_runs_once_offers_nothing_after_its_end() {
        let o = Opportunities::new(&[5, 10], false, 1504);
        assert_eq!(o.time_of(1), Some(ms(10)));
        assert_eq!(o.time_of(2), None);
        assert_eq!(o.first_after(ms(7)), 1);
        assert_eq!(o.time_of(o.first_after(ms(10))), None);
        assert_eq!(o.time_of(o.first_after(ms(500))), None);
        assert_eq!((o.first_after(ms(10)), o.first_after(ms(500))), (2, 2));
    }
}
