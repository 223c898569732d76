//! Delay jitter as RFC 8867 models it (random bounded PDV): each packet's
//! one-way delay varies by a draw from a Gaussian truncated at a bound.

use crate::sim::{SimRng, SimTime};
use rand_distr::{Distribution, Normal};

#[derive(Debug)]
pub struct Jitter {
    normal: Normal<f64>,
    /// Draws beyond mean +- max_ms are drawn again (a truncated Gaussian).
    max_ms: f64,
    mean_ms: f64,
    rng: Box<SimRng>,
}

/// Redraws before settling on the bound: with max >= 0.1 sigma a draw lands
/// inside with probability at least 8%, so 1000 tries fail with odds
/// below 1e-36.
const MAX_DRAWS: u32 = 1000;

impl Jitter {
    /// A validated std_ms >= 0 and max_ms >= 0.
    pub fn new(mean_ms: f64, std_ms: f64, max_ms: f64, rng: SimRng) -> Self {
        Jitter {
            normal: Normal::new(mean_ms, std_ms).expect("validated standard deviation"),
            max_ms,
            mean_ms,
            rng: Box::new(rng),
        }
    }

    /// The delay of one packet: `base` plus a draw, not below zero.
    pub fn delay(&mut self, base: SimTime) -> SimTime {
        let mut x = self.mean_ms;
        for _ in 0..MAX_DRAWS {
            let d = self.normal.sample(&mut *self.rng);
            if (d - self.mean_ms).abs() <= self.max_ms {
                x = d;
                break;
            }
        }
        let ns = base.0 as f64 + x * 1e6;
        SimTime(crate::sim::time::round_to_u64(ns))
    }
}

/// The standard deviation of a Gaussian of `std` truncated at +- `max`
/// around its mean: std * sqrt(1 - 2 a phi(a) / (2 Phi(a) - 1)), a = max / std.
pub fn truncated_std(std: f64, max: f64) -> f64 {
    if std == 0.0 {
        return 0.0;
    }
    let a = max / std;
    let phi = (-a * a / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let mass = libm_erf(a / std::f64::consts::SQRT_2); // 2 Phi(a) - 1
    std * (1.0 - 2.0 * a * phi / mass).sqrt()
}

/// erf by Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7).
fn libm_erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    y.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    #[test]
    fn draws_have_the_truncated_gaussians_mean_and_spread() {
        // RFC 8867's example: at most 30 ms, 2 sigma (sigma 15 ms).
        let mut j = Jitter::new(0.0, 15.0, 30.0, RngStreams::new(3, 0).stream("j"));
        let base = SimTime::from_millis(50);
        let n = 40_000;
        let xs: Vec<f64> = (0..n)
            .map(|_| (j.delay(base).0 as f64 - base.0 as f64) / 1e6)
            .collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!(xs.iter().all(|x| x.abs() <= 30.0 + 1e-6));
        let want = truncated_std(15.0, 30.0);
        assert!((want - 13.2).abs() < 0.1, "{want}");
        assert!(mean.abs() < 0.3, "{mean}");
        assert!((sd - want).abs() < 0.25, "{sd} vs {want}");
    }

    #[test]
    fn the_bound_is_around_the_mean_and_a_delay_never_goes_below_zero() {
        // Mean 20 ms, sigma 10, bound 5: draws within 15-25 ms of the base.
        let mut j = Jitter::new(20.0, 10.0, 5.0, RngStreams::new(1, 0).stream("j"));
        let base = SimTime::from_millis(100);
        let xs: Vec<f64> = (0..5_000)
            .map(|_| (j.delay(base).0 - base.0) as f64 / 1e6)
            .collect();
        assert!(xs.iter().all(|x| (15.0..=25.0).contains(x)), "{xs:?}");
        // Half a sigma each side: the draws spread over the whole interval.
        let (lo, hi) = xs
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
        assert!(lo < 15.1 && hi > 24.9, "{lo} {hi}");
        // Without spread every delay is the base plus the mean, rounded to
        // the nanosecond; a negative mean larger than the base gives zero.
        let mut fixed = Jitter::new(0.000_000_6, 0.0, 0.0, RngStreams::new(1, 0).stream("j"));
        assert_eq!(fixed.delay(base), SimTime(base.0 + 1));
        let mut back = Jitter::new(-150.0, 0.0, 0.0, RngStreams::new(1, 0).stream("j"));
        assert_eq!(back.delay(base), SimTime::ZERO);
        let mut early = Jitter::new(-30.0, 0.0, 0.0, RngStreams::new(1, 0).stream("j"));
        assert_eq!(early.delay(base), SimTime::from_millis(70));
    }

    #[test]
    fn erf_matches_tabulated_values() {
        // Abramowitz and Stegun's table 7.1, to the approximation's 1.5e-7.
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (-1.0, -0.842_700_792_9),
            (-0.25, -0.276_326_390_2),
        ] {
            let got = libm_erf(x);
            assert!((got - want).abs() < 1.5e-7, "erf({x}) = {got}, not {want}");
        }
    }

    #[test]
    fn the_truncated_spread_matches_known_values() {
        assert!((truncated_std(1.0, 8.0) - 1.0).abs() < 1e-6);
        // At one sigma: 1 - 2 phi(1) / (2 Phi(1) - 1) = 0.29113.
        assert!((truncated_std(2.0, 2.0) - 2.0 * 0.29113f64.sqrt()).abs() < 1e-4);
        assert_eq!(truncated_std(0.0, 5.0), 0.0);
    }
}
