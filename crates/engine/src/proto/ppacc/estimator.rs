//! The PPACC receiver's estimator: for each packet pair (the second
//! packet following the first, sent s / Cb apart), the available
//! bandwidth by the probe-gap model, A = 2 Cb - d Cb^2 / s with d the
//! output gap, clamped to [0, Cb] (a pair squeezed closer than it was sent
//! says "the whole link", one spread beyond twice says "nothing"), and
//! its EWMA. Each pair also gives a capacity sample s / d; the capacity
//! estimate is the median of the last 9 samples within 0.8-1.25 times the
//! capacity given beforehand (the study: Cb is known beforehand and pairs
//! refine it; samples outside are pairs spread by cross traffic or
//! squeezed downstream).

use super::{probe_gap_bps, PpaccConfig};

const CAPACITY_SAMPLES: usize = 9;

#[derive(Clone, Debug)]
pub struct PairEstimator {
    weight: f64,
    /// Bottleneck capacity in use, bit/s.
    cb_bps: f64,
    /// The capacity given beforehand.
    cb_given: f64,
    avg_bps: Option<f64>,
    capacity_samples: Vec<f64>,
    pub pairs: u64,
}

impl PairEstimator {
    pub fn new(cfg: &PpaccConfig, cb_bps: f64) -> Self {
        PairEstimator {
            weight: cfg.a_weight,
            cb_bps,
            cb_given: cb_bps,
            avg_bps: None,
            capacity_samples: Vec::new(),
            pairs: 0,
        }
    }

    /// The smoothed available bandwidth (None before the first pair).
    pub fn available_bps(&self) -> Option<f64> {
        self.avg_bps
    }
    pub fn capacity_bps(&self) -> f64 {
        self.cb_bps
    }

    /// A pair of `s_bits` packets arrived `d_s` seconds apart; returns the
    /// sample.
    pub fn on_pair(&mut self, s_bits: f64, d_s: f64) -> f64 {
        self.pairs += 1;
        if d_s > 0.0 {
            let c = s_bits / d_s;
            if (0.8 * self.cb_given..=1.25 * self.cb_given).contains(&c) {
                self.capacity_samples.push(c);
                if self.capacity_samples.len() > CAPACITY_SAMPLES {
                    self.capacity_samples.remove(0);
                }
                let mut sorted = self.capacity_samples.clone();
                sorted.sort_by(f64::total_cmp);
                self.cb_bps = sorted[sorted.len() / 2];
            }
        }
        let a = probe_gap_bps(self.cb_bps, s_bits, d_s).clamp(0.0, self.cb_bps);
        self.avg_bps = Some(match self.avg_bps {
            None => a,
            Some(old) => (1.0 - self.weight) * old + self.weight * a,
        });
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_gap_model_by_hand() {
        // 1 Mbit/s link, 10,000-bit packets sent 10 ms apart. Arriving 10 ms
        // apart: nothing between them, A = Cb. 15 ms: 5 ms of cross traffic
        // per 10 ms, A = 0.5 Cb. 20 ms or more: A = 0.
        assert_eq!(probe_gap_bps(1e6, 1e4, 0.010), 1e6);
        assert_eq!(probe_gap_bps(1e6, 1e4, 0.015), 0.5e6);
        assert_eq!(probe_gap_bps(1e6, 1e4, 0.020), 0.0);
    }

    #[test]
    fn samples_are_clamped_and_smoothed() {
        let cfg = PpaccConfig {
            a_weight: 0.125,
            ..PpaccConfig::default()
        };
        let mut e = PairEstimator::new(&cfg, 1e6);
        assert_eq!(e.on_pair(1e4, 0.015), 0.5e6);
        assert_eq!(e.available_bps(), Some(0.5e6));
        assert_eq!(
            e.on_pair(1e4, 0.030),
            0.0,
            "spread beyond twice: nothing left"
        );
        assert_eq!(e.available_bps(), Some(0.5e6 * 7.0 / 8.0));
        assert_eq!(e.on_pair(1e4, 0.007), 1e6, "squeezed: the whole link");
        // 7/8 of 437.5 k plus 1/8 of 1 M.
        assert_eq!(e.available_bps(), Some(0.4375e6 * 7.0 / 8.0 + 1e6 / 8.0));
    }

    #[test]
    fn pairs_refine_the_capacity_with_a_median() {
        let cfg = PpaccConfig::default();
        let mut e = PairEstimator::new(&cfg, 1e6);
        // The link is really 1.1 Mbit/s: undisturbed pairs arrive 1/110 s apart.
        for _ in 0..5 {
            e.on_pair(1e4, 1.0 / 110.0);
        }
        assert!((e.capacity_bps() - 1.1e6).abs() < 1e-3);
        // Pairs spread by cross traffic, or squeezed, fall outside
        // 0.8-1.25 x the given capacity and leave it alone.
        e.on_pair(1e4, 0.015);
        e.on_pair(1e4, 0.002);
        assert!((e.capacity_bps() - 1.1e6).abs() < 1e-3);
        // Within the band, the median moves only with most samples.
        e.on_pair(1e4, 0.0095);
        assert!((e.capacity_bps() - 1.1e6).abs() < 1e-3);
    }
}
