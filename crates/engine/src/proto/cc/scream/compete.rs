//! Competing flows compensation (RFC 8298 4.1.2.3, kept in SCReAMv2): the
//! queuing delay target rises towards the delay a loss-based flow holds
//! the queue at, between `lo` and `hi`, when losses show or the delay is
//! steady; otherwise it falls back.

use std::collections::VecDeque;

/// Samples of qdelay / lo: the variance over the last 200, the mean over
/// the last 50 (the RFC's history lengths).
const VAR_SAMPLES: usize = 200;
const AVG_SAMPLES: usize = 50;

pub struct QdelayTarget {
    pub lo_s: f64,
    pub hi_s: f64,
    pub target_s: f64,
    norm: VecDeque<f64>,
}

impl QdelayTarget {
    pub fn new(lo_s: f64, hi_s: f64) -> Self {
        QdelayTarget {
            lo_s,
            hi_s,
            target_s: lo_s,
            norm: VecDeque::with_capacity(VAR_SAMPLES),
        }
    }

    /// adjust_qdelay_target(qdelay) with the loss event rate now.
    pub fn adjust(&mut self, qdelay_s: f64, loss_event_rate: f64) {
        if self.norm.len() == VAR_SAMPLES {
            self.norm.pop_front();
        }
        self.norm.push_back(qdelay_s / self.lo_s);
        let n = self.norm.len() as f64;
        let mean = self.norm.iter().sum::<f64>() / n;
        let var = self.norm.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        let recent = self.norm.len().min(AVG_SAMPLES);
        let avg = self.norm.iter().rev().take(recent).sum::<f64>() / recent as f64;
        let new_target = (avg + var.sqrt()) * self.lo_s;
        self.target_s = if loss_event_rate > 0.002 {
            1.5 * new_target
        } else if var < 0.2 {
            new_target
        } else if new_target < self.lo_s {
            (self.target_s * 0.5).max(new_target)
        } else {
            self.target_s * 0.9
        };
        self.target_s = self.target_s.clamp(self.lo_s, self.hi_s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_delay_above_lo_raises_the_target_to_it_and_losses_by_half_again() {
        let mut t = QdelayTarget::new(0.1, 0.4);
        for _ in 0..200 {
            t.adjust(0.2, 0.0);
        }
        // Variance 0: the target is the delay itself.
        assert!((t.target_s - 0.2).abs() < 1e-12);
        t.adjust(0.2, 0.01);
        assert!((t.target_s - 0.3).abs() < 1e-12);
        for _ in 0..200 {
            t.adjust(1.0, 0.01);
        }
        assert_eq!(t.target_s, 0.4);
    }

    #[test]
    fn a_varying_delay_lets_the_target_fall_back_by_a_tenth() {
        let mut t = QdelayTarget::new(0.1, 0.4);
        // Alternating 0 and 0.3 s: norm mean 1.5, variance 2.25 >= 0.2;
        // the new target (1.5 + 1.5) x 0.1 = 0.3 s is not below lo, so the
        // target falls by a tenth per sample.
        for i in 0..200 {
            t.adjust(if i % 2 == 0 { 0.0 } else { 0.3 }, 0.0);
        }
        t.target_s = 0.4;
        t.adjust(0.0, 0.0);
        assert!((t.target_s - 0.36).abs() < 1e-12);
    }

    /// The edges: a loss event rate of exactly 0.002 is not over it; a
    /// new target of exactly lo (norm 0 then 1: mean and deviation 0.5,
    /// variance 0.25) is not under it, so the target falls by a tenth.
    #[test]
    fn the_rules_at_their_edges() {
        let mut t = QdelayTarget::new(0.1, 0.4);
        t.adjust(0.2, 0.002);
        assert!((t.target_s - 0.2).abs() < 1e-12, "{}", t.target_s);
        let mut t = QdelayTarget::new(0.1, 0.4);
        t.adjust(0.0, 0.0);
        t.target_s = 0.3;
        t.adjust(0.1, 0.0);
        assert!((t.target_s - 0.27).abs() < 1e-12, "{}", t.target_s);
    }

    /// A variance of exactly 0.2 is not steady: norm 0 then three times
    /// c, c chosen so that the variance comes out 0.2 in f64 arithmetic;
    /// the new target (3c / 4 + sqrt 0.2) lo is not under lo, so the
    /// target falls by a tenth instead of taking the new one.
    #[test]
    fn a_variance_of_exactly_the_limit_is_not_steady() {
        let c = 1.0327955589886446;
        let mut t = QdelayTarget::new(1.0, 4.0);
        for q in [0.0, c, c] {
            t.adjust(q, 0.0);
        }
        t.target_s = 4.0;
        t.adjust(c, 0.0);
        let mean = (c + c + c) / 4.0;
        let var = (mean * mean + 3.0 * (c - mean) * (c - mean)) / 4.0;
        assert!((var - 0.2).abs() < 1e-15, "{var}");
        assert!((t.target_s - 3.6).abs() < 1e-12, "{}", t.target_s);
    }

    /// Varying (variance 0.21 >= 0.2) but the new target under lo: the
    /// target halves, no lower than the new one (then within [lo, hi]).
    #[test]
    fn a_varying_delay_under_lo_halves_the_target() {
        let mut t = QdelayTarget::new(0.1, 0.4);
        // 60 samples at lo (norm 1) then 140 at 0: of the last 200 after
        // one more 0, 59 ones: variance 0.295 - 0.295^2 = 0.208; the mean
        // of the last 50 is 0, so the new target is 0.1 sqrt(0.208).
        for i in 0..200 {
            t.adjust(if i < 60 { 0.1 } else { 0.0 }, 0.0);
        }
        t.target_s = 0.4;
        t.adjust(0.0, 0.0);
        assert!((t.target_s - 0.2).abs() < 1e-12, "{}", t.target_s);
    }
}
