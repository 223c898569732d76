//! The loss-based controller (draft-ietf-rmcat-gcc-02 6): the fraction
//! p of packets reported lost sets As = As (1 - 0.5 p) above `high`
//! (10%), As = `increase` As below `low` (2%), else As holds; As never
//! exceeds the delay-based estimate. The draft acts on every feedback
//! message; per-packet feedback comes every few tens of milliseconds with
//! a handful of packets, where one loss would read as 20%, so reports are
//! pooled until they cover `min_packets` (libwebrtc's 20) and p is taken
//! over those.

pub struct LossBased {
    pub as_bps: f64,
    min_packets: u64,
    high: f64,
    low: f64,
    increase: f64,
    received: u64,
    lost: u64,
    /// The last interval's loss fraction.
    pub last_p: f64,
}

impl LossBased {
    pub fn new(start_bps: f64, min_packets: u64, high: f64, low: f64, increase: f64) -> Self {
        LossBased {
            as_bps: start_bps,
            min_packets,
            high,
            low,
            increase,
            received: 0,
            lost: 0,
            last_p: 0.0,
        }
    }

    /// A feedback message reported `received` and `lost` packets;
    /// `a_hat_bps` is the delay-based estimate. Returns As.
    pub fn on_report(&mut self, received: u64, lost: u64, a_hat_bps: f64) -> f64 {
        self.received += received;
        self.lost += lost;
        let n = self.received + self.lost;
        if n >= self.min_packets.max(1) {
            let p = self.lost as f64 / n as f64;
            self.last_p = p;
            if p > self.high {
                self.as_bps *= 1.0 - 0.5 * p;
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

    #[test]
    fn the_drafts_three_bands() {
        let mut l = LossBased::new(1e6, 100, 0.1, 0.02, 1.05);
        // Pooled until 100 packets are covered: 20% lost in all.
        assert_eq!(l.on_report(40, 10, 1e9), 1e6);
        let x = l.on_report(40, 10, 1e9);
        assert!((x - 1e6 * 0.9).abs() < 1e-6 && (l.last_p - 0.2).abs() < 1e-12);
        // 5%: holds.
        assert_eq!(l.on_report(95, 5, 1e9), x);
        // 1%: up 5%.
        let y = l.on_report(99, 1, 1e9);
        assert!((y - x * 1.05).abs() < 1e-6);
        // Never above the delay-based estimate.
        assert_eq!(l.on_report(10, 0, 5e5), 5e5);
    }

    /// The bands are open at their ends (the draft: "more than 10%",
    /// "less than 2%"): exactly 2% or 10% lost holds As.
    #[test]
    fn the_band_edges_hold() {
        let mut l = LossBased::new(1e6, 100, 0.1, 0.02, 1.05);
        assert_eq!(l.on_report(98, 2, 1e9), 1e6);
        assert_eq!(l.last_p, 0.02);
        assert_eq!(l.on_report(90, 10, 1e9), 1e6);
        assert_eq!(l.last_p, 0.1);
    }
}
