//! libwebrtc's trendline estimator of the delay gradient: the inter-group
//! delay variations accumulate into a delay curve, smoothed
//! exponentially; the slope of a least-squares line through the last
//! `window` points of the curve (against arrival time) is the trend. What
//! the overuse detector compares with its threshold is the trend times
//! `gain` and times the number of deltas seen so far, at most 60 (so a
//! young estimate is damped).

use super::arrival::Delta;
use crate::sim::SimTime;
use std::collections::VecDeque;

/// Deltas after which the detector's input is no longer damped.
pub const MIN_NUM_DELTAS: u32 = 60;
/// Deltas counted at most.
const DELTA_COUNTER_MAX: u32 = 1000;

pub struct Trendline {
    window: usize,
    smoothing: f64,
    gain: f64,
    num_deltas: u32,
    first_arrival: Option<SimTime>,
    accumulated_ms: f64,
    smoothed_ms: f64,
    /// (ms since the first arrival, smoothed delay ms).
    points: VecDeque<(f64, f64)>,
    trend: f64,
}

impl Trendline {
    pub fn new(window: usize, smoothing: f64, gain: f64) -> Self {
        Trendline {
            window,
            smoothing,
            gain,
            num_deltas: 0,
            first_arrival: None,
            accumulated_ms: 0.0,
            smoothed_ms: 0.0,
            points: VecDeque::with_capacity(window + 1),
            trend: 0.0,
        }
    }

    /// Takes a delta; returns (the detector's input, the trend).
    pub fn update(&mut self, d: &Delta) -> (f64, f64) {
        self.num_deltas = (self.num_deltas + 1).min(DELTA_COUNTER_MAX);
        let first = *self.first_arrival.get_or_insert(d.at);
        self.accumulated_ms += d.gradient_ms();
        self.smoothed_ms =
            self.smoothing * self.smoothed_ms + (1.0 - self.smoothing) * self.accumulated_ms;
        let x = (d.at.saturating_sub(first)).as_secs_f64() * 1e3;
        self.points.push_back((x, self.smoothed_ms));
        if self.points.len() > self.window {
            self.points.pop_front();
        }
        if self.points.len() == self.window {
            if let Some(slope) = linear_fit_slope(&self.points) {
                self.trend = slope;
            }
        }
        (self.modified(), self.trend)
    }

    /// The detector's input: the trend scaled by the gain and the number
    /// of deltas (at most `MIN_NUM_DELTAS`).
    pub fn modified(&self) -> f64 {
        self.num_deltas.min(MIN_NUM_DELTAS) as f64 * self.trend * self.gain
    }

    pub fn num_deltas(&self) -> u32 {
        self.num_deltas
    }
}

/// The least-squares slope of y against x; `None` if the x are all equal.
pub fn linear_fit_slope(points: &VecDeque<(f64, f64)>) -> Option<f64> {
    let n = points.len() as f64;
    let x_avg = points.iter().map(|p| p.0).sum::<f64>() / n;
    let y_avg = points.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for &(x, y) in points {
        num += (x - x_avg) * (y - y_avg);
        den += (x - x_avg) * (x - x_avg);
    }
    (den != 0.0).then(|| num / den)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(at_ms: f64, gradient_ms: f64) -> Delta {
        Delta {
            send_ms: 10.0,
            arrival_ms: 10.0 + gradient_ms,
            size_bytes: 0.0,
            at: SimTime::from_millis_f64(at_ms),
        }
    }

    #[test]
    fn the_slope_of_a_line_is_its_gradient() {
        let pts: VecDeque<(f64, f64)> = (0..10).map(|i| (i as f64, 3.0 * i as f64 + 1.0)).collect();
        assert!((linear_fit_slope(&pts).unwrap() - 3.0).abs() < 1e-12);
        let flat: VecDeque<(f64, f64)> = (0..3).map(|i| (1.0, i as f64)).collect();
        assert_eq!(linear_fit_slope(&flat), None);
    }

    /// No trend until the window is full; a constant gradient g every
    /// 10 ms accumulates into a delay ramp of g per 10 ms, whose smoothed
    /// curve's slope tends to g / 10 ms; the detector's input is that
    /// slope x gain x min(deltas, 60).
    #[test]
    fn a_steady_gradient_gives_its_slope() {
        let mut t = Trendline::new(20, 0.9, 4.0);
        for i in 0..19 {
            assert_eq!(t.update(&delta(10.0 * i as f64, 1.0)).1, 0.0);
        }
        for i in 19..400 {
            t.update(&delta(10.0 * i as f64, 1.0));
        }
        let (modified, trend) = t.update(&delta(4000.0, 1.0));
        assert!((trend - 0.1).abs() < 1e-6, "{trend}");
        assert!((modified - 60.0 * 0.1 * 4.0).abs() < 1e-4);
        assert_eq!(t.num_deltas(), 401);
    }

    /// Hand-computed: gradients 1 then 0 with the window of 2 and
    /// smoothing 0.5: accumulated 1, 1; smoothed 0.5, 0.75; points
    /// (0, 0.5), (10, 0.75): slope 0.025; input 2 x 0.025 x 4 = 0.2.
    #[test]
    fn a_two_point_window_by_hand() {
        let mut t = Trendline::new(2, 0.5, 4.0);
        assert_eq!(t.update(&delta(0.0, 1.0)), (0.0, 0.0));
        let (m, trend) = t.update(&delta(10.0, 0.0));
        assert!((trend - 0.025).abs() < 1e-12 && (m - 0.2).abs() < 1e-12);
    }
}
