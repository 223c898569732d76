//! The loss-based controller (draft-ietf-rmcat-gcc-02 6): the fraction
//! p of packets reported lost sets As = As (1 - 0.5 p) above `high`
//! (10%), As = `increase` As below `low` (2%), else As holds; As never
//! exceeds the delay-based estimate. The draft acts on every feedback
//! message; per-packet feedback comes every few tens of milliseconds with
//! a handful of packets, where one loss would read as 20%, so reports are
//! pooled until they cover `min_packets` (libwebrtc's 20) and p is taken
//! over those. A decrease waits `decrease_interval` plus an RTT after the
//! last (libwebrtc's kBweDecreaseInterval, 300 ms): one episode of losses
//! spans several pools, and the draft's reports, a second apart, would
//! have cut once for it; a pool over `high` within that time holds As.

use crate::sim::SimTime;

pub struct LossBased {
    pub as_bps: f64,
    min_packets: u64,
    high: f64,
    low: f64,
    increase: f64,
    decrease_interval: SimTime,
    last_decrease: Option<SimTime>,
    received: u64,
    lost: u64,
    /// The last interval's loss fraction.
    pub last_p: f64,
}

impl LossBased {
    pub fn new(
        start_bps: f64,
        min_packets: u64,
        (high, low, increase): (f64, f64, f64),
        decrease_interval: SimTime,
    ) -> Self {
        LossBased {
            as_bps: start_bps,
            min_packets,
            high,
            low,
            increase,
            decrease_interval,
            last_decrease: None,
            received: 0,
            lost: 0,
            last_p: 0.0,
        }
    }

    /// A feedback message at `now` reported `received` and `lost`
    /// packets; `a_hat_bps` is the delay-based estimate, `rtt` the
    /// round-trip time. Returns As.
    pub fn on_report(
        &mut self,
        now: SimTime,
        received: u64,
        lost: u64,
        a_hat_bps: f64,
        rtt: SimTime,
    ) -> f64 {
        self.received += received;
        self.lost += lost;
        let n = self.received + self.lost;
        if n >= self.min_packets.max(1) {
            let p = self.lost as f64 / n as f64;
            self.last_p = p;
            if p > self.high {
                // No interval: no wait at all (the draft).
                let wait = if self.decrease_interval == SimTime::ZERO {
                    SimTime::ZERO
                } else {
                    self.decrease_interval + rtt
                };
                if self
                    .last_decrease
                    .is_none_or(|t| now.saturating_sub(t) >= wait)
                {
                    self.as_bps *= 1.0 - 0.5 * p;
                    self.last_decrease = Some(now);
                }
            } else if p < self.low {
                self.as_bps *= self.increase;
            }
            (self.received, self.lost) = (0, 0);
        }
        self.as_bps = self.as_bps.min(a_hat_bps);
        self.as_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn new(min_packets: u64, interval_ms: u64) -> LossBased {
        LossBased::new(1e6, min_packets, (0.1, 0.02, 1.05), ms(interval_ms))
    }

    #[test]
    fn the_drafts_three_bands() {
        let mut l = new(100, 0);
        let rtt = ms(100);
        // Pooled until 100 packets are covered: 20% lost in all.
        assert_eq!(l.on_report(ms(0), 40, 10, 1e9, rtt), 1e6);
        let x = l.on_report(ms(50), 40, 10, 1e9, rtt);
        assert!((x - 1e6 * 0.9).abs() < 1e-6 && (l.last_p - 0.2).abs() < 1e-12);
        // 5%: holds.
        assert_eq!(l.on_report(ms(200), 95, 5, 1e9, rtt), x);
        // 1%: up 5%.
        let y = l.on_report(ms(300), 99, 1, 1e9, rtt);
        assert!((y - x * 1.05).abs() < 1e-6);
        // Never above the delay-based estimate.
        assert_eq!(l.on_report(ms(400), 10, 0, 5e5, rtt), 5e5);
    }

    /// libwebrtc's pace of decreases: a pool over 10% lost within 300 ms
    /// plus the RTT (100 ms) of the last decrease holds As; at 400 ms it
    /// cuts again. With no interval (the draft) every such pool cuts, the
    /// RTT apart or not.
    #[test]
    fn decreases_wait_the_interval_and_an_rtt() {
        let rtt = ms(100);
        let mut l = new(20, 300);
        let cut = |x: f64| x * (1.0 - 0.5 * 0.25);
        assert_eq!(l.on_report(ms(1000), 15, 5, 1e9, rtt), cut(1e6));
        assert_eq!(l.on_report(ms(1100), 15, 5, 1e9, rtt), cut(1e6));
        assert_eq!(l.on_report(ms(1399), 15, 5, 1e9, rtt), cut(1e6));
        assert_eq!(l.on_report(ms(1400), 15, 5, 1e9, rtt), cut(cut(1e6)));
        // The pool that held was spent: the next 20 packets are a pool of their own.
        assert_eq!(l.on_report(ms(1500), 10, 0, 1e9, rtt), cut(cut(1e6)));
        let mut draft = new(20, 0);
        draft.on_report(ms(1000), 15, 5, 1e9, rtt);
        assert_eq!(draft.on_report(ms(1001), 15, 5, 1e9, rtt), cut(cut(1e6)));
    }

    /// The bands are open at their ends (the draft: "more than 10%",
    /// "less than 2%"): exactly 2% or 10% lost holds As.
    #[test]
    fn the_band_edges_hold() {
        let mut l = new(100, 0);
        assert_eq!(l.on_report(ms(0), 98, 2, 1e9, ms(100)), 1e6);
        assert_eq!(l.last_p, 0.02);
        assert_eq!(l.on_report(ms(100), 90, 10, 1e9, ms(100)), 1e6);
        assert_eq!(l.last_p, 0.1);
    }
}
