//! libwebrtc's video jitter estimate (its `JitterEstimator` and
//! `FrameDelayVariationKalmanFilter`, modules/video_coding/timing), the
//! delay the receiver adds for the variation in frame arrival:
//! - each frame's delay variation (arrival gap less capture gap, whole
//!   ms) is modelled as `slope x (size change) + offset` by a Kalman
//!   filter: the slope is the time a byte takes on the path, the offset
//!   the queueing change;
//! - what that line does not explain is noise, whose variance follows an
//!   EWMA (its weight scaled to 30 frames/s);
//! - the estimate is `slope x (max frame size - mean frame size)` (a
//!   large frame's extra time on the path) plus 2.33 standard deviations
//!   of the noise less 30 ms (libwebrtc accepts a 1% chance of a 30 ms
//!   late frame), at least 1 ms; reading it adds 10 ms of operating-system
//!   jitter, and a stream under 10 frames/s gets less (none under 5).
//!
//! Outliers: a delay variation is capped at 3.5 noise deviations; one over
//! 15 counts as 15 in the noise and leaves the line alone, unless the
//! frame is itself a size outlier (over the mean by 3 deviations); a frame
//! much smaller than the one before (by a quarter of the max frame size,
//! the frame after a delayed key frame) leaves the line alone. Constants
//! are libwebrtc's defaults; its field trials and its NACK round-trip
//! term (added only under the RttMult trial) are not modelled.

use crate::sim::SimTime;
use std::collections::VecDeque;

/// Frames before the estimate is post-processed (kFrameCountStartupCount).
const STARTUP_FRAMES: u32 = 30;
/// Frames whose mean seeds the mean frame size (kFrameSizeStartupCount).
const SIZE_STARTUP_FRAMES: u32 = 5;
const INITIAL_FRAME_BYTES: f64 = 500.0;
/// EWMA weight of the mean frame size and its variance (kPhi).
const PHI: f64 = 0.97;
/// Decay of the max frame size per frame (kPsi).
const PSI: f64 = 0.9999;
const MAX_DEVIATION_SIGMAS: f64 = 3.5;
const DELAY_OUTLIER_SIGMAS: f64 = 15.0;
const SIZE_OUTLIER_SIGMAS: f64 = 3.0;
const CONGESTION_REJECTION: f64 = -0.25;
const ALPHA_COUNT_MAX: u32 = 400;
const NOISE_STD_DEVS: f64 = 2.33;
const NOISE_STD_DEV_OFFSET_MS: f64 = 30.0;
const MIN_ESTIMATE_MS: f64 = 1.0;
const MAX_ESTIMATE_MS: f64 = 10_000.0;
const OS_JITTER_MS: f64 = 10.0;
/// Frame periods averaged for the frame rate (libwebrtc's 30 samples).
const RATE_SAMPLES: usize = 30;
const MAX_FRAME_RATE: f64 = 200.0;

/// The line `delay variation = x[0] x size change + x[1]` (ms, bytes).
#[derive(Clone, Debug)]
struct Kalman {
    x: [f64; 2],
    p: [[f64; 2]; 2],
}

impl Kalman {
    fn new() -> Self {
        Kalman {
            // 512 kbit/s in bytes per ms (libwebrtc's start).
            x: [1.0 / (512e3 / 8.0), 0.0],
            p: [[1e-4, 0.0], [0.0, 1e2]],
        }
    }

    fn total(&self, size_change: f64) -> f64 {
        self.x[0] * size_change + self.x[1]
    }

    fn update(&mut self, delay_ms: f64, size_change: f64, max_size: f64, var_noise: f64) {
        if max_size < 1.0 || var_noise <= 0.0 {
            return;
        }
        let innovation = delay_ms - self.total(size_change);
        let p = &mut self.p;
        p[0][0] += 2.5e-10;
        p[1][1] += 1e-10;
        let ph = [
            p[0][0] * size_change + p[0][1],
            p[1][0] * size_change + p[1][1],
        ];
        // Large size changes are trusted more (libwebrtc's observation noise).
        let r = ((300.0 * (-size_change.abs() / max_size).exp() + 1.0) * var_noise.sqrt()).max(1.0);
        // S = H P H' + r is at least r >= 1 (P stays positive
        // semi-definite), so it needs no guard against 0.
        let s = size_change * ph[0] + ph[1] + r;
        let k = [ph[0] / s, ph[1] / s];
        self.x[0] = (self.x[0] + k[0] * innovation).max(1e-6);
        self.x[1] += k[1] * innovation;
        let (t00, t01) = (p[0][0], p[0][1]);
        p[0][0] = (1.0 - k[0] * size_change) * t00 - k[0] * p[1][0];
        p[0][1] = (1.0 - k[0] * size_change) * t01 - k[0] * p[1][1];
        p[1][0] = p[1][0] * (1.0 - k[1]) - k[1] * size_change * t00;
        p[1][1] = p[1][1] * (1.0 - k[1]) - k[1] * size_change * t01;
    }
}

/// The video jitter estimate of one stream (module docs).
#[derive(Clone, Debug)]
pub struct JitterEstimate {
    line: Kalman,
    avg_bytes: f64,
    max_bytes: f64,
    var_bytes: f64,
    startup_sum: f64,
    startup_count: u32,
    prev_bytes: Option<f64>,
    avg_noise: f64,
    var_noise: f64,
    alpha_count: u32,
    frames: u32,
    filtered_ms: f64,
    prev_estimate_ms: Option<f64>,
    last_update: Option<SimTime>,
    /// Recent times between updates, us (a bounded window).
    periods_us: VecDeque<u64>,
}

impl Default for JitterEstimate {
    fn default() -> Self {
        JitterEstimate {
            line: Kalman::new(),
            avg_bytes: INITIAL_FRAME_BYTES,
            max_bytes: INITIAL_FRAME_BYTES,
            var_bytes: 100.0,
            startup_sum: 0.0,
            startup_count: 0,
            prev_bytes: None,
            avg_noise: 0.0,
            var_noise: 4.0,
            alpha_count: 1,
            frames: 0,
            filtered_ms: 0.0,
            prev_estimate_ms: None,
            last_update: None,
            periods_us: VecDeque::with_capacity(RATE_SAMPLES),
        }
    }
}

impl JitterEstimate {
    /// A frame of `bytes` arrived at `now` with `delay_ms` more (or less)
    /// between it and the one before than between their captures.
    pub fn update(&mut self, now: SimTime, delay_ms: f64, bytes: f64) {
        if bytes <= 0.0 {
            return;
        }
        let size_change = bytes - self.prev_bytes.unwrap_or(0.0);
        if self.startup_count < SIZE_STARTUP_FRAMES {
            self.startup_sum += bytes;
            self.startup_count += 1;
        } else if self.startup_count == SIZE_STARTUP_FRAMES {
            self.avg_bytes = self.startup_sum / SIZE_STARTUP_FRAMES as f64;
            self.startup_count += 1;
        }
        let avg = PHI * self.avg_bytes + (1.0 - PHI) * bytes;
        // A key frame (over the mean by two deviations) leaves the mean.
        if bytes < self.avg_bytes + 2.0 * self.var_bytes.sqrt() {
            self.avg_bytes = avg;
        }
        let d = bytes - avg;
        self.var_bytes = (PHI * self.var_bytes + (1.0 - PHI) * d * d).max(1.0);
        self.max_bytes = (PSI * self.max_bytes).max(bytes);
        if self.prev_bytes.replace(bytes).is_none() {
            return;
        }
        let cap = MAX_DEVIATION_SIGMAS * self.var_noise.sqrt() + 0.5;
        let delay = delay_ms.clamp(-cap, cap).round();
        let deviation = delay - self.line.total(size_change);
        let size_outlier = bytes > self.avg_bytes + SIZE_OUTLIER_SIGMAS * self.var_bytes.sqrt();
        if deviation.abs() < DELAY_OUTLIER_SIGMAS * self.var_noise.sqrt() || size_outlier {
            self.random_jitter(now, deviation);
            if size_change > CONGESTION_REJECTION * self.max_bytes {
                let (max, var) = (self.max_bytes, self.var_noise);
                self.line.update(delay, size_change, max, var);
            }
        } else {
            let n = if deviation >= 0.0 {
                DELAY_OUTLIER_SIGMAS
            } else {
                -DELAY_OUTLIER_SIGMAS
            };
            self.random_jitter(now, n * self.var_noise.sqrt());
        }
        if self.frames >= STARTUP_FRAMES {
            self.filtered_ms = self.calculate();
        } else {
            self.frames += 1;
        }
    }

    /// The noise's mean and variance, its weight scaled to 30 frames/s.
    fn random_jitter(&mut self, now: SimTime, d: f64) {
        if let Some(t) = self.last_update {
            if self.periods_us.len() == RATE_SAMPLES {
                self.periods_us.pop_front();
            }
            self.periods_us.push_back((now - t).as_nanos() / 1000);
        }
        self.last_update = Some(now);
        let n = self.alpha_count as f64;
        let mut alpha = (n - 1.0) / n;
        self.alpha_count = (self.alpha_count + 1).min(ALPHA_COUNT_MAX);
        let fps = self.frame_rate();
        if fps > 0.0 {
            let mut scale = 30.0 / fps;
            let (count, startup) = (self.alpha_count as f64, STARTUP_FRAMES as f64);
            if self.alpha_count < STARTUP_FRAMES {
                // A noisy rate at the start: from 1 to 30 / fps linearly.
                scale = (count * scale + (startup - count)) / startup;
            }
            alpha = alpha.powf(scale);
        }
        let avg = alpha * self.avg_noise + (1.0 - alpha) * d;
        let e = d - self.avg_noise;
        self.var_noise = (alpha * self.var_noise + (1.0 - alpha) * e * e).max(1.0);
        self.avg_noise = avg;
    }

    /// The frame rate from the recent periods, Hz (libwebrtc's whole
    /// microseconds and millihertz), at most 200; 0 before two updates.
    fn frame_rate(&self) -> f64 {
        if self.periods_us.is_empty() {
            return 0.0;
        }
        let mean = self.periods_us.iter().sum::<u64>() as f64 / self.periods_us.len() as f64;
        let period_us = mean as u64;
        if period_us == 0 {
            return 0.0;
        }
        ((1_000_000_000 / period_us) as f64 / 1000.0).min(MAX_FRAME_RATE)
    }

    fn calculate(&mut self) -> f64 {
        let noise = (NOISE_STD_DEVS * self.var_noise.sqrt() - NOISE_STD_DEV_OFFSET_MS).max(1.0);
        let raw = self.line.x[0] * (self.max_bytes - self.avg_bytes) + noise;
        // libwebrtc holds it in whole microseconds.
        let mut ms = (raw * 1000.0).trunc() / 1000.0;
        if ms < MIN_ESTIMATE_MS {
            ms = self.prev_estimate_ms.unwrap_or(MIN_ESTIMATE_MS);
        } else if ms > MAX_ESTIMATE_MS {
            ms = MAX_ESTIMATE_MS;
        }
        self.prev_estimate_ms = Some(ms);
        ms
    }

    /// The jitter delay now, ms (libwebrtc's GetJitterEstimate without
    /// the round-trip term).
    pub fn estimate_ms(&mut self) -> f64 {
        let jitter = (self.calculate() + OS_JITTER_MS).max(self.filtered_ms);
        let fps = self.frame_rate();
        let jitter = if fps == 0.0 {
            jitter
        } else if fps < 5.0 {
            0.0
        } else if fps < 10.0 {
            (fps - 5.0) / 5.0 * jitter
        } else {
            jitter
        };
        jitter.max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libwebrtc's unit-test sawtooth: delays (i mod 11 - 5) x amplitude
    /// ms, sizes 1000 + delay / 5 bytes.
    fn sawtooth(amplitude: i64, i: i64) -> (f64, f64) {
        let delay = ((i % 11) - 5) * amplitude;
        (delay as f64, (1000 + delay / 5) as f64)
    }

    /// `frames` frames of the sawtooth, one every `period_us`.
    fn run(est: &mut JitterEstimate, amplitude: i64, frames: i64, period_us: u64) -> SimTime {
        let mut now = SimTime::ZERO;
        for i in 0..frames {
            let (d, b) = sawtooth(amplitude, i);
            est.update(now, d, b);
            now += SimTime::from_nanos(period_us * 1000);
        }
        now
    }

    /// libwebrtc's SteadyStateConvergence: 60 s of the sawtooth with
    /// amplitude 10 at 30 frames/s gives 54 ms (its own expectation,
    /// jitter_estimator_unittest.cc).
    #[test]
    fn the_sawtooth_converges_to_libwebrtcs_figure() {
        let mut est = JitterEstimate::default();
        run(&mut est, 10, 60 * 30, 33_333);
        assert_eq!(est.estimate_ms().round(), 54.0, "{:?}", est.estimate_ms());
    }

    /// No variation: the noise floor (1 ms) plus the 10 ms of OS jitter;
    /// a steady 5 ms offset changes nothing.
    #[test]
    fn steady_arrivals_give_the_floor() {
        let mut est = JitterEstimate::default();
        let mut now = SimTime::ZERO;
        for _ in 0..300 {
            est.update(now, 0.0, 1000.0);
            now += SimTime::from_millis(33);
        }
        // Every frame 1000 bytes: the max and mean sizes are equal.
        assert!(
            (est.estimate_ms() - 11.0).abs() < 0.01,
            "{}",
            est.estimate_ms()
        );
    }

    /// libwebrtc's size-outlier cases: one frame ten (or two) times the
    /// size raises the estimate (by more than a quarter for ten).
    #[test]
    fn a_large_frame_raises_the_estimate() {
        for (factor, rise) in [(10.0, 1.25), (2.0, 1.0)] {
            let mut est = JitterEstimate::default();
            let now = run(&mut est, 10, 60 * 30, 33_333);
            let steady = est.estimate_ms();
            let (d, b) = sawtooth(10, 60 * 30);
            est.update(now, d, factor * b);
            let after = est.estimate_ms();
            assert!(
                after.round() > rise * steady.round(),
                "{factor}: {steady} -> {after}"
            );
        }
    }

    /// libwebrtc's LowFramerateDisablesJitterEstimator: at 5 frames/s the
    /// estimate is 0; at 7.5 half of it at 10 (the linear scale).
    #[test]
    fn low_frame_rates_scale_the_estimate_down() {
        let mut est = JitterEstimate::default();
        let mut now = SimTime::ZERO;
        for i in 0..60 {
            let (d, b) = sawtooth(10, i);
            est.update(now, d, b);
            now += SimTime::from_millis(200);
            if i > 2 {
                assert_eq!(est.estimate_ms(), 0.0, "frame {i}");
            }
        }
        let mut slow = JitterEstimate::default();
        run(&mut slow, 10, 600, 133_333);
        let j = slow.clone().estimate_ms();
        let unscaled = slow.calculate().max(0.0) + OS_JITTER_MS;
        let fps = slow.frame_rate();
        assert!((fps - 7.5).abs() < 0.01, "{fps}");
        assert!(
            (j - unscaled.max(slow.filtered_ms) * 0.5).abs() < 1e-9,
            "{j} {unscaled}"
        );
    }

    /// A delay variation is capped at 3.5 noise deviations (rounded to
    /// whole ms): a huge one does what the cap does. A frame without
    /// bytes changes nothing.
    #[test]
    fn delays_are_capped_and_empty_frames_ignored() {
        let mut est = JitterEstimate::default();
        let now = run(&mut est, 10, 600, 33_333);
        let cap = (MAX_DEVIATION_SIGMAS * est.var_noise.sqrt() + 0.5).round();
        let (mut huge, mut at_cap, mut below) = (est.clone(), est.clone(), est.clone());
        huge.update(now, 1e6, 1000.0);
        at_cap.update(now, cap, 1000.0);
        below.update(now, cap - 2.0, 1000.0);
        assert_eq!(format!("{huge:?}"), format!("{at_cap:?}"));
        assert_ne!(format!("{huge:?}"), format!("{below:?}"));
        let before = format!("{est:?}");
        est.update(now, 5.0, 0.0);
        assert_eq!(format!("{est:?}"), before);
    }

    /// The frame-size statistics by hand. The first five frames' mean
    /// seeds the mean at the sixth (during start-up, frames over the mean
    /// of 500 by two deviations leave it). A frame over the mean by two
    /// deviations (a key frame) leaves the mean but enters the variance
    /// (an EWMA of 0.03 of the squared distance to the would-be mean, at
    /// least 1) and the max, which decays by 0.9999 a frame.
    #[test]
    fn frame_size_statistics_by_hand() {
        let mut e = JitterEstimate::default();
        for b in [1000.0, 1100.0, 900.0, 1000.0, 1000.0] {
            e.update(SimTime::ZERO, 0.0, b);
        }
        assert_eq!(e.avg_bytes, 500.0);
        e.update(SimTime::ZERO, 0.0, 1000.0);
        assert_eq!(e.avg_bytes, 1000.0);
        for _ in 0..600 {
            e.update(SimTime::ZERO, 0.0, 1000.0);
        }
        assert_eq!((e.avg_bytes, e.var_bytes), (1000.0, 1.0));
        // The 1100-byte frame's max, 604 frames on.
        assert!(
            (e.max_bytes - 1100.0 * 0.9999f64.powi(604)).abs() < 1e-9,
            "{}",
            e.max_bytes
        );
        e.update(SimTime::ZERO, 0.0, 1500.0);
        let var = 0.97 + 0.03 * 485.0 * 485.0; // 1015 the would-be mean
        assert_eq!(e.avg_bytes, 1000.0);
        assert!((e.var_bytes - var).abs() < 1e-9, "{}", e.var_bytes);
        assert_eq!(e.max_bytes, 1500.0);
        e.update(SimTime::ZERO, 0.0, 1000.0);
        assert!((e.avg_bytes - 1000.0).abs() < 1e-9 && (e.var_bytes - 0.97 * var).abs() < 1e-9);
        assert!((e.max_bytes - 1499.85).abs() < 1e-9, "{}", e.max_bytes);
    }

    /// The noise's EWMA by hand: weight (n - 1) / n raised to 30 / fps
    /// (15 frames/s: squared), the scale eased from 1 over the first 30
    /// updates; the variance from the distance to the previous mean.
    #[test]
    fn the_noise_weight_follows_the_frame_rate() {
        for (count, scale) in [(400u32, 2.0), (10, (11.0 * 2.0 + 19.0) / 30.0)] {
            let mut e = JitterEstimate::default();
            e.periods_us.extend([66_666; RATE_SAMPLES]);
            e.last_update = Some(SimTime::ZERO);
            (e.alpha_count, e.avg_noise, e.var_noise) = (count, 1.0, 4.0);
            e.random_jitter(SimTime::from_micros(66_666), 5.0);
            let n = count.min(ALPHA_COUNT_MAX) as f64;
            let alpha = ((n - 1.0) / n).powf(scale);
            assert!(
                (e.avg_noise - (alpha + (1.0 - alpha) * 5.0)).abs() < 1e-12,
                "{count}"
            );
            assert!(
                (e.var_noise - (4.0 * alpha + (1.0 - alpha) * 16.0)).abs() < 1e-12,
                "{count}"
            );
            assert_eq!(e.alpha_count, (count + 1).min(ALPHA_COUNT_MAX));
        }
    }

    /// The estimate by hand: slope x (max - mean size) + 2.33 sigma - 30
    /// ms (at least 1), plus 10 ms of OS jitter; under 1 ms (a mean size
    /// over the max) it falls back on the last, or on 1 ms.
    #[test]
    fn the_estimate_by_hand() {
        let mut e = JitterEstimate::default();
        e.periods_us.extend([33_333; RATE_SAMPLES]);
        e.line.x = [0.01, 0.0];
        (e.max_bytes, e.avg_bytes, e.var_noise) = (1500.0, 1000.0, 400.0);
        let want = 5.0 + 2.33 * 20.0 - 30.0;
        assert!(
            (e.estimate_ms() - (want + 10.0)).abs() < 1e-9,
            "{}",
            e.estimate_ms()
        );
        // 0.01 x (1000 - 1500) + 1 < 1 ms: the previous estimate stands.
        (e.max_bytes, e.avg_bytes, e.var_noise) = (1000.0, 1500.0, 1.0);
        let low = e.calculate();
        assert!((low - want).abs() < 1e-9, "{low}");
        e.prev_estimate_ms = None;
        assert_eq!(e.calculate(), 1.0);
        // Above 10 s: 10 s.
        (e.max_bytes, e.avg_bytes) = (2e6, 0.0);
        assert_eq!(e.calculate(), 10_000.0);
    }

    /// The line's update is the textbook Kalman step, computed here with
    /// whole 2x2 matrices: P += Q; S = H P H' + r; K = P H' / S;
    /// x += K (z - H x); P = (I - K H) P, with H = [size change, 1] and
    /// libwebrtc's observation noise r = max(1, (300 exp(-|size change| /
    /// max) + 1) sqrt(noise variance)) and slope floor 1e-6.
    #[test]
    fn the_line_is_a_kalman_step() {
        type M = [[f64; 2]; 2];
        let mul = |a: &M, b: &M| -> M {
            let mut c = [[0.0; 2]; 2];
            for i in 0..2 {
                for j in 0..2 {
                    c[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j];
                }
            }
            c
        };
        let mut k = Kalman::new();
        let (mut x, mut p) = (k.x, k.p);
        for (z, dsize, max, var) in [
            (4.0, 300.0, 1300.0, 2.0),
            (-3.0, -200.0, 1300.0, 9.0),
            (1.0, 50.0, 1.0, 0.25),
            (7.0, 900.0, 2000.0, 16.0),
        ] {
            k.update(z, dsize, max, var);
            p[0][0] += 2.5e-10;
            p[1][1] += 1e-10;
            let h = [dsize, 1.0];
            let ph = [
                p[0][0] * h[0] + p[0][1] * h[1],
                p[1][0] * h[0] + p[1][1] * h[1],
            ];
            let r = ((300.0 * (-dsize.abs() / max).exp() + 1.0) * var.sqrt()).max(1.0);
            let s = h[0] * ph[0] + h[1] * ph[1] + r;
            let gain = [ph[0] / s, ph[1] / s];
            let innovation = z - (h[0] * x[0] + h[1] * x[1]);
            x = [
                (x[0] + gain[0] * innovation).max(1e-6),
                x[1] + gain[1] * innovation,
            ];
            let i_kh: M = [
                [1.0 - gain[0] * h[0], -gain[0] * h[1]],
                [-gain[1] * h[0], 1.0 - gain[1] * h[1]],
            ];
            p = mul(&i_kh, &p);
            for (a, b) in k.x.iter().zip(x) {
                assert!(
                    (a - b).abs() <= 1e-12 * b.abs().max(1e-9),
                    "{:?} {x:?}",
                    k.x
                );
            }
            for (a, b) in k.p.iter().flatten().zip(p.iter().flatten()) {
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1e-12),
                    "{:?} {p:?}",
                    k.p
                );
            }
        }
        assert!(k.x[0] > 1e-6 && k.x[1] != 0.0, "{:?}", k.x);
        // The line read at a size change: slope x change + offset.
        let line = Kalman {
            x: [0.01, 3.0],
            p: k.p,
        };
        assert_eq!(line.total(100.0), 4.0);
        // A max frame size under a byte or no noise: nothing changes.
        let before = format!("{k:?}");
        k.update(5.0, 100.0, 0.99, 4.0);
        k.update(5.0, 100.0, 1000.0, 0.0);
        assert_eq!(format!("{k:?}"), before);
        // A falling delay on a growing frame drives the slope to its floor.
        let mut floor = Kalman::new();
        for _ in 0..50 {
            floor.update(-50.0, 2000.0, 2000.0, 1.0);
        }
        assert_eq!(floor.x[0], 1e-6);
    }

    /// An estimator past its start-up, with the frame before of 1000
    /// bytes, a mean frame size of 1000 (variance 100), a noise variance
    /// of 4 (the delay cap 3.5 x 2 + 0.5 = 7.5 ms, the delay outlier bound
    /// 15 x 2 = 30), and a flat line. Its first noise sample has weight 1
    /// (alpha (n - 1) / n at n = 1 is 0), so the noise's mean after one
    /// update is the sample itself.
    fn primed(offset_ms: f64) -> JitterEstimate {
        let mut e = JitterEstimate {
            startup_count: SIZE_STARTUP_FRAMES + 1,
            prev_bytes: Some(1000.0),
            avg_bytes: 1000.0,
            var_bytes: 100.0,
            var_noise: 4.0,
            ..Default::default()
        };
        e.line.x = [0.0, offset_ms];
        e
    }

    /// One update by hand: the delay capped at 7.5 ms and rounded (8);
    /// a delay outlier counted as +-15 deviations (+-30), the sign its
    /// own, and leaving the line alone, at exactly 15 deviations too; a
    /// size outlier (over the mean by 3 deviations, after the variance
    /// has taken the frame in) kept whatever its delay; a size change of
    /// exactly -0.25 max leaving the line alone.
    #[test]
    fn one_update_by_hand() {
        let noise_after = |offset_ms: f64, delay_ms: f64, bytes: f64| {
            let mut e = primed(offset_ms);
            e.update(SimTime::ZERO, delay_ms, bytes);
            (e.avg_noise, e.line.x)
        };
        // Capped: 100 ms counts as round(7.5) = 8.
        assert_eq!(noise_after(0.0, 100.0, 1000.0).0, 8.0);
        // Outliers both ways: deviations 8 + 100 and -8 - 100.
        assert_eq!(noise_after(-100.0, 100.0, 1000.0), (30.0, [0.0, -100.0]));
        assert_eq!(noise_after(100.0, -100.0, 1000.0), (-30.0, [0.0, 100.0]));
        // Exactly 15 deviations (8 + 22 = 30) is an outlier: the line stays.
        assert_eq!(noise_after(-22.0, 100.0, 1000.0), (30.0, [0.0, -22.0]));
        // One under: kept, and the line moves.
        let (noise, x) = noise_after(-21.0, 100.0, 1000.0);
        assert_eq!(noise, 29.0);
        assert_ne!(x, [0.0, -21.0]);
        // Size outliers. A 1040-byte frame: the would-be mean 1001.2, the
        // variance 0.97 x 100 + 0.03 x 38.8^2 = 142.16, so the bound is
        // 1000 + 3 x 11.92 = 1035.8: an outlier, kept with its deviation
        // of 8 + 100 - 40 x 0. A 1030-byte frame (variance 122.4, bound
        // 1033.2) and a 1020-byte one are not, and count as 30.
        let var: f64 = 0.97 * 100.0 + 0.03 * (0.97f64 * 40.0).powi(2);
        assert!(1040.0 > 1000.0 + 3.0 * var.sqrt());
        assert_eq!(noise_after(-100.0, 100.0, 1040.0).0, 108.0);
        assert_eq!(noise_after(-100.0, 100.0, 1030.0).0, 30.0);
        assert_eq!(noise_after(-100.0, 100.0, 1020.0).0, 30.0);
        // At the bound exactly: a variance of 0.5 leaves the frame's at its
        // floor of 1, so the bound is 1003, and a 1003-byte frame is not an
        // outlier.
        let mut e = primed(-100.0);
        e.var_bytes = 0.5;
        e.update(SimTime::ZERO, 100.0, 1003.0);
        assert_eq!((e.var_bytes, e.avg_noise), (1.0, 30.0));
        // A size change of exactly -0.25 x the max (1000 after 1250; the
        // max is this frame's): the line stays. A little above: it moves.
        let line_after = |prev: f64| {
            let mut e = primed(0.0);
            (e.prev_bytes, e.max_bytes) = (Some(prev), 100.0);
            e.update(SimTime::ZERO, 0.0, 1000.0);
            e.line.x
        };
        assert_eq!(line_after(1250.0), [0.0, 0.0]);
        assert_ne!(line_after(1249.0), [0.0, 0.0]);
    }

    /// The mean frame size's key-frame rule at its bound (mean 1000,
    /// deviation 10: a frame under 1020 enters the mean, one of 1020 does
    /// not), and the mean after start-up following each frame (no second
    /// seeding from the start-up frames).
    #[test]
    fn the_key_frame_rule_and_the_mean_after_start_up() {
        for (bytes, enters) in [(1015.0, true), (1020.0, false)] {
            let mut e = primed(0.0);
            e.update(SimTime::ZERO, 0.0, bytes);
            let want = if enters {
                0.97 * 1000.0 + 0.03 * bytes
            } else {
                1000.0
            };
            assert!(
                (e.avg_bytes - want).abs() < 1e-9,
                "{bytes}: {}",
                e.avg_bytes
            );
        }
        let mut e = JitterEstimate::default();
        for _ in 0..6 {
            e.update(SimTime::ZERO, 0.0, 1000.0);
        }
        assert_eq!(e.avg_bytes, 1000.0);
        e.update(SimTime::ZERO, 0.0, 1010.0);
        let once = 0.97 * 1000.0 + 0.03 * 1010.0;
        assert!((e.avg_bytes - once).abs() < 1e-9, "{}", e.avg_bytes);
        e.update(SimTime::ZERO, 0.0, 1010.0);
        let twice = 0.97 * once + 0.03 * 1010.0;
        assert!((e.avg_bytes - twice).abs() < 1e-9, "{}", e.avg_bytes);
    }

    /// The estimate is post-processed (kept as a floor for the reading)
    /// from the 31st update that reaches the noise on; before, only the
    /// count moves.
    #[test]
    fn the_filtered_estimate_starts_after_thirty_frames() {
        let mut e = primed(0.0);
        for _ in 0..STARTUP_FRAMES {
            e.update(SimTime::ZERO, 0.0, 1000.0);
            assert_eq!(e.filtered_ms, 0.0);
        }
        assert_eq!(e.frames, STARTUP_FRAMES);
        e.update(SimTime::ZERO, 0.0, 1000.0);
        assert!(e.filtered_ms > 0.0 && e.filtered_ms == e.calculate());
    }

    /// The frame rate is over the last 30 periods: periods of 20 and
    /// 40 ms alternating give 33.333 Hz (the last one alone would give
    /// 25 or 50), and a first long period falls out of the window at the
    /// 31st. A period of 0 (two frames at once) gives no rate, and the
    /// weight is then the plain (n - 1) / n.
    #[test]
    fn the_frame_rate_window_and_a_zero_period() {
        let mut e = JitterEstimate::default();
        let mut now = SimTime::ZERO;
        e.random_jitter(now, 0.0);
        now += SimTime::from_millis(1000);
        e.random_jitter(now, 0.0);
        for i in 0..30 {
            now += SimTime::from_millis(if i % 2 == 0 { 20 } else { 40 });
            e.random_jitter(now, 0.0);
        }
        assert_eq!(e.periods_us.len(), RATE_SAMPLES);
        assert_eq!(e.frame_rate(), 33.333);
        let mut z = JitterEstimate::default();
        z.random_jitter(SimTime::ZERO, 4.0);
        z.random_jitter(SimTime::ZERO, 8.0);
        assert_eq!(z.frame_rate(), 0.0);
        assert_eq!(z.avg_noise, 6.0);
    }

    /// The line learns the path's time per byte: frames whose arrival gap
    /// grows by 1 ms per 100 bytes more than the frame before (800 kbit/s).
    #[test]
    fn the_line_learns_the_time_per_byte() {
        let mut est = JitterEstimate::default();
        let mut now = SimTime::ZERO;
        let mut prev = 1000.0;
        for i in 0..3000 {
            // Steps of +300 and -200 bytes.
            let bytes = 1000.0 + 100.0 * [0.0, 3.0, 1.0, 4.0, 2.0, 5.0][i % 6];
            est.update(now, (bytes - prev) / 100.0, bytes);
            prev = bytes;
            now += SimTime::from_millis(33);
        }
        assert!((est.line.x[0] - 0.01).abs() < 0.0005, "{:?}", est.line.x);
        assert!(est.line.x[1].abs() < 0.5, "{:?}", est.line.x);
    }
}
