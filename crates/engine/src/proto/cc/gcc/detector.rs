//! The overuse detector with its adaptive threshold
//! (draft-ietf-rmcat-gcc-02 5.4; libwebrtc's form of the time rule).
//!
//! The estimate m (the filtered gradient, or the trendline's scaled
//! trend) is compared with the threshold gamma: above it for more than
//! `overuse_time` (accumulated over send deltas, the first counted half,
//! and at least two deltas) while not decreasing, the path is overused;
//! below -gamma it is underused; otherwise normal. The threshold follows
//! |m|: gamma += dt K (|m| - gamma), K = k_up when |m| > gamma, else
//! k_down, dt the time since the last update in ms (at most 100), gamma
//! within [6, 600] ms, left alone when |m| exceeds it by more than 15 ms
//! (a sudden spike must not raise it).

use crate::sim::SimTime;

pub const THRESHOLD_MIN_MS: f64 = 6.0;
pub const THRESHOLD_MAX_MS: f64 = 600.0;
/// |m| - gamma above which gamma is not adapted, ms.
pub const MAX_ADAPT_OFFSET_MS: f64 = 15.0;
/// Longest time step of one adaptation, ms.
const MAX_TIME_DELTA_MS: f64 = 100.0;

/// What the detector says of the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Usage {
    Normal,
    Underuse,
    Overuse,
}

pub struct Detector {
    pub threshold_ms: f64,
    k_up: f64,
    k_down: f64,
    overuse_time_ms: f64,
    usage: Usage,
    time_over_ms: Option<f64>,
    over_count: u32,
    prev_raw: f64,
    last_update: Option<SimTime>,
    /// Times overuse was signalled.
    pub overuses: u64,
}

impl Detector {
    pub fn new(threshold_ms: f64, k_up: f64, k_down: f64, overuse_time_ms: f64) -> Self {
        Detector {
            threshold_ms,
            k_up,
            k_down,
            overuse_time_ms,
            usage: Usage::Normal,
            time_over_ms: None,
            over_count: 0,
            prev_raw: 0.0,
            last_update: None,
            overuses: 0,
        }
    }

    /// The estimate `m` (ms; `raw` the unscaled value whose growth is
    /// checked) after `deltas` deltas, for groups `send_ms` apart, at
    /// `now`.
    pub fn detect(&mut self, m: f64, raw: f64, send_ms: f64, deltas: u32, now: SimTime) -> Usage {
        if deltas < 2 {
            self.usage = Usage::Normal;
            return self.usage;
        }
        if m > self.threshold_ms {
            let t = match self.time_over_ms {
                None => send_ms / 2.0,
                Some(t) => t + send_ms,
            };
            self.time_over_ms = Some(t);
            self.over_count += 1;
            if t > self.overuse_time_ms && self.over_count > 1 && raw >= self.prev_raw {
                self.time_over_ms = Some(0.0);
                self.over_count = 0;
                self.usage = Usage::Overuse;
                self.overuses += 1;
            }
        } else if m < -self.threshold_ms {
            self.time_over_ms = None;
            self.over_count = 0;
            self.usage = Usage::Underuse;
        } else {
            self.time_over_ms = None;
            self.over_count = 0;
            self.usage = Usage::Normal;
        }
        self.prev_raw = raw;
        self.adapt(m, now);
        self.usage
    }

    fn adapt(&mut self, m: f64, now: SimTime) {
        let last = *self.last_update.get_or_insert(now);
        self.last_update = Some(now);
        if m.abs() > self.threshold_ms + MAX_ADAPT_OFFSET_MS {
            return;
        }
        let k = if m.abs() < self.threshold_ms {
            self.k_down
        } else {
            self.k_up
        };
        let dt_ms = ((now.saturating_sub(last)).as_secs_f64() * 1e3).min(MAX_TIME_DELTA_MS);
        self.threshold_ms += k * (m.abs() - self.threshold_ms) * dt_ms;
        self.threshold_ms = self.threshold_ms.clamp(THRESHOLD_MIN_MS, THRESHOLD_MAX_MS);
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> SimTime {
        SimTime::from_millis_f64(x)
    }

    /// Above the threshold for 5 + 10 ms = 15 ms > 10 ms and two deltas:
    /// overuse at the second; at the first only 5 ms had passed.
    #[test]
    fn overuse_needs_time_and_two_deltas() {
        let mut d = Detector::new(12.5, 0.01, 0.00018, 10.0);
        assert_eq!(d.detect(20.0, 1.0, 10.0, 5, ms(0.0)), Usage::Normal);
        assert_eq!(d.detect(20.0, 1.0, 10.0, 6, ms(10.0)), Usage::Overuse);
        assert_eq!(d.overuses, 1);
        // A decreasing estimate does not signal.
        let mut d = Detector::new(12.5, 0.01, 0.00018, 10.0);
        d.detect(20.0, 2.0, 10.0, 5, ms(0.0));
        assert_eq!(d.detect(20.0, 1.0, 10.0, 6, ms(10.0)), Usage::Normal);
        assert_eq!(d.detect(-20.0, -1.0, 10.0, 7, ms(20.0)), Usage::Underuse);
        assert_eq!(d.detect(1.0, 0.1, 10.0, 8, ms(30.0)), Usage::Normal);
    }

    /// Fewer than two deltas: always normal, and nothing accumulates; from
    /// two on the rule applies.
    #[test]
    fn under_two_deltas_the_usage_is_normal() {
        let mut d = Detector::new(12.5, 0.01, 0.00018, 10.0);
        for i in 0..3 {
            let at = ms(10.0 * i as f64);
            assert_eq!(d.detect(20.0, 1.0, 30.0, 1, at), Usage::Normal);
        }
        assert_eq!(d.overuses, 0);
        let mut d = Detector::new(12.5, 0.01, 0.00018, 10.0);
        d.detect(20.0, 1.0, 30.0, 2, ms(0.0));
        assert_eq!(d.detect(20.0, 1.0, 30.0, 2, ms(30.0)), Usage::Overuse);
    }

    /// Overuse needs more than `overuse_time_ms` over the threshold: at
    /// exactly 10 ms (2 + 8) it does not signal yet.
    #[test]
    fn exactly_the_overuse_time_is_not_over_it() {
        let mut d = Detector::new(12.5, 0.01, 0.00018, 10.0);
        d.detect(20.0, 1.0, 4.0, 5, ms(0.0));
        assert_eq!(d.detect(20.0, 1.0, 8.0, 6, ms(8.0)), Usage::Normal);
        assert_eq!(d.detect(20.0, 1.0, 8.0, 7, ms(16.0)), Usage::Overuse);
    }

    /// The bands are open: an estimate of exactly +gamma or -gamma is
    /// normal, however long it lasts.
    #[test]
    fn exactly_the_threshold_is_normal() {
        for m in [12.5, -12.5] {
            let mut d = Detector::new(12.5, 0.0, 0.0, 10.0);
            for i in 0..4 {
                let at = ms(10.0 * i as f64);
                assert_eq!(d.detect(m, m / 10.0, 10.0, 5 + i, at), Usage::Normal, "{m}");
            }
        }
    }

    /// The time over the threshold starts at half a group interval
    /// (libwebrtc's overuse detector): with groups 5 ms apart and 10 ms
    /// needed, 2.5, 7.5, 12.5 ms: the third delta over signals.
    #[test]
    fn the_time_over_starts_at_half_a_group_interval() {
        let mut d = Detector::new(12.5, 0.01, 0.00018, 10.0);
        assert_eq!(d.detect(20.0, 1.0, 5.0, 5, ms(0.0)), Usage::Normal);
        assert_eq!(d.detect(20.0, 1.0, 5.0, 6, ms(5.0)), Usage::Normal);
        assert_eq!(d.detect(20.0, 1.0, 5.0, 7, ms(10.0)), Usage::Overuse);
    }

    /// gamma += dt K (|m| - gamma): from 12.5 with |m| = 14 for 100 ms at
    /// K_u = 0.01: 12.5 + 100 x 0.01 x 1.5 = 14; with |m| = 2 at K_d =
    /// 0.00018 for 50 ms: 14 - 50 x 0.00018 x 12 = 13.892; a spike of 40
    /// (over gamma + 15) leaves it; steps longer than 100 ms count 100.
    #[test]
    fn the_threshold_adapts_by_hand() {
        let mut d = Detector::new(12.5, 0.01, 0.00018, 10.0);
        d.detect(14.0, 1.0, 10.0, 5, ms(0.0)); // first update: dt = 0
        assert_eq!(d.threshold_ms, 12.5);
        d.detect(14.0, 1.0, 10.0, 6, ms(100.0));
        assert!((d.threshold_ms - 14.0).abs() < 1e-12);
        d.detect(2.0, 1.0, 10.0, 7, ms(150.0));
        assert!((d.threshold_ms - 13.892).abs() < 1e-12);
        d.detect(40.0, 1.0, 10.0, 8, ms(250.0));
        assert!((d.threshold_ms - 13.892).abs() < 1e-12);
        d.detect(-2.0, 1.0, 10.0, 9, ms(1250.0));
        assert!((d.threshold_ms - (13.892 - 100.0 * 0.00018 * 11.892)).abs() < 1e-12);
    }

    /// The spike rule is strict (libwebrtc: left alone when |m| is more
    /// than gamma + 15): |m| exactly gamma + 15 still adapts it.
    #[test]
    fn a_spike_of_exactly_fifteen_over_still_adapts() {
        let mut d = Detector::new(12.5, 0.01, 0.00018, 1e9);
        d.detect(0.0, 0.0, 10.0, 5, ms(0.0)); // dt = 0: no change
        assert_eq!(d.threshold_ms, 12.5);
        d.detect(27.5, 1.0, 10.0, 6, ms(10.0));
        assert!((d.threshold_ms - (12.5 + 10.0 * 0.01 * 15.0)).abs() < 1e-12);
    }

    #[test]
    fn the_threshold_stays_within_its_bounds() {
        let mut d = Detector::new(12.5, 0.5, 0.5, 10.0);
        for i in 0..100 {
            d.detect(0.0, 0.0, 10.0, 10, ms(100.0 * i as f64));
        }
        assert_eq!(d.threshold_ms, THRESHOLD_MIN_MS);
    }
}
