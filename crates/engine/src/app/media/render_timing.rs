//! libwebrtc's video render timing (`VCMTiming`, `TimestampExtrapolator`
//! and the frame buffer's calls to them): when a frame is shown.
//! - The **extrapolator** fits, by recursive least squares over all
//!   complete frames (no forgetting), the line from arrival time to RTP
//!   time; a frame's expected completion is that line read backwards at
//!   its RTP time. A CUSUM on the residuals (15 ms of drift, a 60,000-tick
//!   alarm) reopens the offset after a sudden delay change; ten seconds
//!   without a frame start the fit again.
//! - The **render time** is that expected completion plus the current
//!   delay, held within [min, max].
//! - The **target delay** is the jitter estimate (`jitter_estimate.rs`)
//!   plus the decode time and the render delay (10 ms).
//! - The **current delay** starts at the first jitter estimate. A frame
//!   released to the decoder after its time (`render time - decode -
//!   render delay`) raises it by its lateness, up to the target; a target
//!   below it lowers it at the next frame.
//!
//! Frames completed by a retransmission feed neither the fit nor the
//! estimate, as in libwebrtc. Here the estimate and the current delay
//! are updated when a frame completes, not when it is released.

use super::jitter_estimate::JitterEstimate;
use crate::sim::SimTime;

/// RTP ticks per ms of a video clock (90 kHz).
const TICKS_PER_MS: f64 = 90.0;
const START_UP_FRAMES: u32 = 2;
const ALARM_TICKS: f64 = 60e3;
const DRIFT_TICKS: f64 = 6600.0;
const MAX_ERROR_TICKS: f64 = 7000.0;
const P11: f64 = 1e10;
/// A gap without a complete frame that restarts the fit.
const RESTART: SimTime = SimTime::from_millis(10_000);

/// A frame's capture time on a 90 kHz RTP clock (never wraps here).
fn ticks(capture: SimTime) -> i64 {
    (capture.as_nanos() as i128 * 9 / 100_000) as i64
}

/// Whole milliseconds, rounded (libwebrtc's `TimeDelta::ms()`).
fn whole_ms(t: SimTime) -> f64 {
    ((t.as_nanos() + 500_000) / 1_000_000) as f64
}

/// The line from arrival time (ms since `start`) to RTP ticks.
#[derive(Clone, Debug)]
struct Extrapolator {
    start: SimTime,
    prev: SimTime,
    first_ticks: Option<i64>,
    prev_ticks: Option<i64>,
    w: [f64; 2],
    p: [[f64; 2]; 2],
    count: u32,
    acc_pos: f64,
    acc_neg: f64,
}

impl Extrapolator {
    fn new(start: SimTime) -> Self {
        Extrapolator {
            start,
            prev: start,
            first_ticks: None,
            prev_ticks: None,
            w: [TICKS_PER_MS, 0.0],
            p: [[1.0, 0.0], [0.0, P11]],
            count: 0,
            acc_pos: 0.0,
            acc_neg: 0.0,
        }
    }

    fn update(&mut self, now: SimTime, ts: i64) {
        if now.saturating_sub(self.prev) > RESTART {
            *self = Extrapolator::new(now);
        } else {
            self.prev = now;
        }
        let t = whole_ms(now - self.start);
        // The fit starts at its first frame (t = 0), where libwebrtc's
        // first offset, -w[0] t, is the 0 it already holds.
        let first = *self.first_ticks.get_or_insert(ts);
        let residual = (ts - first) as f64 - t * self.w[0] - self.w[1];
        if self.delay_changed(residual) && self.count >= START_UP_FRAMES {
            self.p[1][1] = P11;
        }
        if self.prev_ticks.is_some_and(|p| ts < p) {
            return; // reordered
        }
        let p = &mut self.p;
        let k0 = p[0][0] * t + p[0][1];
        let k1 = p[1][0] * t + p[1][1];
        let tpt = 1.0 + t * k0 + k1;
        let k = [k0 / tpt, k1 / tpt];
        self.w[0] += k[0] * residual;
        self.w[1] += k[1] * residual;
        let p00 = p[0][0] - (k[0] * t * p[0][0] + k[0] * p[1][0]);
        let p01 = p[0][1] - (k[0] * t * p[0][1] + k[0] * p[1][1]);
        p[1][0] -= k[1] * t * p[0][0] + k[1] * p[1][0];
        p[1][1] -= k[1] * t * p[0][1] + k[1] * p[1][1];
        p[0][0] = p00;
        p[0][1] = p01;
        self.prev_ticks = Some(ts);
        self.count = (self.count + 1).min(START_UP_FRAMES);
    }

    /// CUSUM of the residuals: a sudden change of the mean delay.
    fn delay_changed(&mut self, residual: f64) -> bool {
        let e = residual.clamp(-MAX_ERROR_TICKS, MAX_ERROR_TICKS);
        self.acc_pos = (self.acc_pos + e - DRIFT_TICKS).max(0.0);
        self.acc_neg = (self.acc_neg + e + DRIFT_TICKS).min(0.0);
        if self.acc_pos > ALARM_TICKS || self.acc_neg < -ALARM_TICKS {
            self.acc_pos = 0.0;
            self.acc_neg = 0.0;
            return true;
        }
        false
    }

    /// The expected completion of the frame with RTP time `ts`: whole ms
    /// after `start` (at start-up, the last frame's arrival plus the RTP
    /// gap); `None` before any frame or before time zero.
    fn local_time(&self, ts: i64) -> Option<SimTime> {
        let first = self.first_ticks?;
        let (base, ms) = if self.count < START_UP_FRAMES {
            let prev_ticks = self.prev_ticks?;
            (
                self.prev,
                ((ts - prev_ticks) as f64 / TICKS_PER_MS * 1000.0).trunc() / 1000.0,
            )
        } else if self.w[0] < 1e-3 {
            (self.start, 0.0)
        } else {
            (
                self.start,
                (((ts - first) as f64 - self.w[1]) / self.w[0] + 0.5).trunc(),
            )
        };
        let ns = base.as_nanos() as f64 + ms * 1e6;
        (ns >= 0.0).then(|| SimTime::from_nanos(ns.round() as u64))
    }
}

/// A frame's delay variation against the last one the variation was
/// taken from (`last`: its RTP time and completion), ms: the completion
/// gap less the RTP gap (in whole microseconds, as libwebrtc's). 0 for
/// the first frame; none for a frame no newer than `last`.
fn delay_variation(last: Option<(i64, SimTime)>, ts: i64, now: SimTime) -> Option<f64> {
    match last {
        None => Some(0.0),
        Some((prev_ts, prev_at)) if ts > prev_ts => {
            let rtp_us = (ts - prev_ts) as f64 * 1000.0 / TICKS_PER_MS;
            Some((now - prev_at).as_nanos() as f64 / 1e6 - rtp_us.trunc() / 1000.0)
        }
        Some(_) => None,
    }
}

/// One stream's render timing (module docs).
#[derive(Clone, Debug)]
pub struct RenderTiming {
    fit: Option<Extrapolator>,
    /// The last frame the delay variation was taken from: RTP time and
    /// completion.
    last: Option<(i64, SimTime)>,
    pub jitter: JitterEstimate,
    jitter_ms: f64,
    /// 0 until the first jitter estimate.
    current_ms: f64,
    min_ms: f64,
    max_ms: f64,
    /// Decode time plus render delay: a frame must be complete this long
    /// before its render time.
    slack_ms: f64,
}

impl RenderTiming {
    pub fn new(min: SimTime, max: SimTime, decode: SimTime, render: SimTime) -> Self {
        RenderTiming {
            fit: None,
            last: None,
            jitter: JitterEstimate::default(),
            jitter_ms: 0.0,
            current_ms: 0.0,
            min_ms: min.as_millis_f64(),
            max_ms: max.as_millis_f64(),
            slack_ms: (decode + render).as_millis_f64(),
        }
    }

    /// How long before its render time a frame must be complete.
    pub fn slack(&self) -> SimTime {
        SimTime::from_millis_f64(self.slack_ms)
    }

    /// The delay from expected completion to render now in force, ms.
    pub fn current_ms(&self) -> f64 {
        self.current_ms.clamp(self.min_ms, self.max_ms)
    }

    /// The target delay, ms: the jitter estimate, decode and render.
    pub fn target_ms(&self) -> f64 {
        (self.jitter_ms + self.slack_ms).max(self.min_ms)
    }

    /// The render time of a frame captured at `capture`, asked at `now`
    /// (before the fit has a frame: `now` plus the current delay).
    pub fn render_time(&self, now: SimTime, capture: SimTime) -> SimTime {
        let expected = self.fit.as_ref().and_then(|f| f.local_time(ticks(capture)));
        expected.unwrap_or(now) + SimTime::from_millis_f64(self.current_ms())
    }

    /// A frame captured at `capture`, of `bytes`, to be rendered at
    /// `render`, completed at `now` without a retransmission.
    pub fn on_complete(&mut self, now: SimTime, capture: SimTime, bytes: u32, render: SimTime) {
        let ts = ticks(capture);
        self.fit
            .get_or_insert_with(|| Extrapolator::new(now))
            .update(now, ts);
        let variation = delay_variation(self.last, ts, now);
        if variation.is_some() {
            self.last = Some((ts, now));
        }
        if let Some(d) = variation {
            self.jitter.update(now, d, bytes as f64);
        }
        let jitter = self.jitter.estimate_ms();
        if jitter != self.jitter_ms {
            self.jitter_ms = jitter;
            if self.current_ms == 0.0 {
                self.current_ms = jitter;
            }
        }
        // Released at its decode time, or on completion if later.
        let release_ms = now
            .as_millis_f64()
            .max(render.as_millis_f64() - self.slack_ms);
        let delayed = release_ms - render.as_millis_f64() + self.slack_ms;
        let target = self.target_ms();
        if self.current_ms + delayed <= target {
            self.current_ms += delayed;
        } else {
            self.current_ms = target;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn timing() -> RenderTiming {
        RenderTiming::new(ms(0), ms(10_000), ms(0), ms(10))
    }

    /// Frames every 33 ms arriving a steady 50 ms after capture: the fit
    /// expects each 50 ms after capture, and the render time adds the
    /// current delay, which the first late release raised to the target.
    #[test]
    fn a_steady_path_renders_at_its_delay_plus_the_target() {
        let mut t = timing();
        for i in 0..100u64 {
            let capture = ms(33 * i);
            let render = t.render_time(capture + ms(50), capture);
            t.on_complete(capture + ms(50), capture, 1000, render);
        }
        let capture = ms(3300);
        let expected = capture + ms(50);
        let render = t.render_time(expected, capture);
        // Jitter 1 ms (the floor) + 10 ms OS jitter, + 10 ms render delay.
        assert!((t.target_ms() - 21.0).abs() < 1e-9, "{}", t.target_ms());
        assert_eq!(t.current_ms(), t.target_ms());
        assert_eq!(render, expected + SimTime::from_millis_f64(21.0));
    }

    /// The first frame, with no fit yet, renders at `now` plus the delay
    /// in force (0 before any estimate); the second uses the start-up
    /// rule (the last arrival plus the RTP gap).
    #[test]
    fn start_up_uses_the_last_arrival() {
        let mut t = timing();
        assert_eq!(t.render_time(ms(70), ms(20)), ms(70));
        t.on_complete(ms(80), ms(20), 1000, ms(70));
        let current = SimTime::from_millis_f64(t.current_ms());
        assert!(t.current_ms() > 0.0);
        assert_eq!(t.render_time(ms(100), ms(53)), ms(80 + 33) + current);
    }

    /// A late frame raises the current delay by its lateness, up to the
    /// target; a lower target lowers it at the next frame.
    #[test]
    fn lateness_raises_the_current_delay_up_to_the_target() {
        let mut t = timing();
        t.on_complete(ms(50), ms(0), 1000, ms(70));
        let start = t.current_ms();
        // The first estimate: 1 ms (the noise floor), the slope's 500
        // bytes of a large frame, 10 ms of OS jitter.
        assert!((start - 11.0).abs() < 0.01, "{start}");
        // Released at 63 - 10 = 53 on time: nothing changes.
        t.on_complete(ms(52), ms(33), 1000, ms(63));
        assert_eq!(t.current_ms(), start);
        // Complete 4 ms after its release time: +4 ms.
        t.on_complete(ms(100), ms(66), 1000, ms(106));
        assert_eq!(t.current_ms(), start + 4.0);
        // Very late: held at the target.
        t.on_complete(ms(300), ms(99), 1000, ms(139));
        assert_eq!(t.current_ms(), t.target_ms());
        t.current_ms = 500.0;
        t.on_complete(ms(330), ms(132), 1000, ms(900));
        assert_eq!(t.current_ms(), t.target_ms());
    }

    /// A step of 100 ms in the path's delay: the fit, over all the frames
    /// before, follows by its slope and offset together, about half the
    /// way in 5 s and all of it in 10. The residual falls under the
    /// CUSUM's drift (6600 ticks, 73 ms) before the alarm's 60,000, so
    /// the offset is never reopened.
    #[test]
    fn the_fit_follows_a_delay_step() {
        let mut t = timing();
        let expected =
            |t: &RenderTiming, c: SimTime| t.fit.as_ref().unwrap().local_time(ticks(c)).unwrap();
        let mut lag = Vec::new();
        for i in 0..900u64 {
            let c = ms(33 * i);
            let delay = if i < 600 { 40 } else { 140 };
            if i == 600 {
                assert_eq!(expected(&t, c), c + ms(40));
            }
            if i >= 600 {
                lag.push((c + ms(140)).as_millis_f64() - expected(&t, c).as_millis_f64());
            }
            t.on_complete(c + ms(delay), c, 1000, c + ms(delay + 60));
            assert!(i == 0 || t.fit.as_ref().unwrap().p[1][1] < 1.0, "frame {i}");
        }
        assert_eq!(lag[0], 100.0);
        assert!((30.0..=70.0).contains(&lag[150]), "{lag:?}");
        assert!(lag[300..].iter().all(|l| l.abs() <= 1.0), "{lag:?}");
    }

    /// The CUSUM: a residual of 9000 ticks counts 7000 less the drift of
    /// 6600, 400 a frame; the alarm comes when the sum passes 60,000 (the
    /// 151st frame) and clears it. Within the drift, nothing adds up.
    #[test]
    fn the_cusum_alarm() {
        let mut f = Extrapolator::new(SimTime::ZERO);
        let alarms: Vec<usize> = (1..=400).filter(|_| f.delay_changed(-9000.0)).collect();
        assert_eq!(alarms, [151, 302]);
        assert!((0..1000).all(|_| !f.delay_changed(6000.0)));
        assert_eq!((f.acc_pos, f.acc_neg), (0.0, 0.0));
    }

    /// The fit is the textbook recursive least-squares step (no
    /// forgetting), computed here with whole 2x2 matrices: phi = [t, 1],
    /// e = y - phi' w, K = P phi / (1 + phi' P phi), w += K e,
    /// P -= K phi' P; y the RTP ticks since the first frame, t whole ms
    /// since the fit began. Frames from 1000 s on, arriving 40-47 ms
    /// after capture (residuals within the CUSUM's drift).
    #[test]
    fn the_fit_is_a_least_squares_step() {
        let t0 = ms(1_000_000);
        let mut f = Extrapolator::new(t0 + ms(40));
        let (mut w, mut p) = ([90.0, 0.0], [[1.0, 0.0], [0.0, P11]]);
        let first = ticks(t0);
        for (i, extra) in [0u64, 3, 7, 1, 5, 2, 6].into_iter().enumerate() {
            let capture = t0 + ms(33 * i as u64);
            let now = capture + ms(40 + extra);
            f.update(now, ticks(capture));
            let (t, y) = (
                whole_ms(now - (t0 + ms(40))),
                (ticks(capture) - first) as f64,
            );
            let phi = [t, 1.0];
            let e = y - (phi[0] * w[0] + phi[1] * w[1]);
            let p_phi = [
                p[0][0] * phi[0] + p[0][1] * phi[1],
                p[1][0] * phi[0] + p[1][1] * phi[1],
            ];
            let phi_p = [
                phi[0] * p[0][0] + phi[1] * p[1][0],
                phi[0] * p[0][1] + phi[1] * p[1][1],
            ];
            let denom = 1.0 + phi[0] * p_phi[0] + phi[1] * p_phi[1];
            let k = [p_phi[0] / denom, p_phi[1] / denom];
            w = [w[0] + k[0] * e, w[1] + k[1] * e];
            for (r, kr) in k.iter().enumerate() {
                for (c, pc) in phi_p.iter().enumerate() {
                    p[r][c] -= kr * pc;
                }
            }
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            assert!(
                close(f.w[0], w[0]) && close(f.w[1], w[1]),
                "{i}: {:?} {w:?}",
                f.w
            );
            for r in 0..2 {
                for c in 0..2 {
                    assert!(close(f.p[r][c], p[r][c]), "{i}: {:?} {p:?}", f.p);
                }
            }
        }
        assert_eq!((f.acc_pos, f.acc_neg), (0.0, 0.0));
    }

    /// A frame with the RTP time of the last one still updates the fit
    /// (only an older one is skipped as reordered); the CUSUM's alarm
    /// reopens the offset only after start-up (two frames).
    #[test]
    fn an_equal_rtp_time_updates_and_start_up_ignores_the_alarm() {
        let mut f = Extrapolator::new(ms(40));
        f.update(ms(40), 0);
        let w = f.w;
        f.update(ms(50), 0);
        assert_eq!(f.count, 2);
        assert_ne!(f.w, w);
        f.update(ms(60), -90);
        assert_eq!(f.count, 2);
        // Frames at 0, 5 and 10 s, all of RTP time 0, with the negative
        // sum brought past the alarm whatever the residual before frame
        // `alarm`: during start-up (the second frame) the fit is as
        // without it; after (the third) it differs.
        let run = |alarm: Option<usize>| {
            let mut g = Extrapolator::new(ms(0));
            for i in 0..3 {
                if alarm == Some(i) {
                    g.acc_neg = -ALARM_TICKS - DRIFT_TICKS - 1.0;
                }
                g.update(ms(5000 * i as u64), 0);
            }
            (g.w, g.p)
        };
        assert_eq!(run(Some(1)), run(None));
        assert_ne!(run(Some(2)), run(None));
    }

    /// The CUSUM's positive side: residuals of +9000 ticks alarm at the
    /// 151st frame, as the negative side does.
    #[test]
    fn the_cusum_alarm_upwards() {
        let mut f = Extrapolator::new(SimTime::ZERO);
        let alarms: Vec<usize> = (1..=400).filter(|_| f.delay_changed(9000.0)).collect();
        assert_eq!(alarms, [151, 302]);
    }

    /// The expected completion by hand: at start-up the last arrival
    /// plus the RTP gap in whole microseconds (3000 ticks: 33.333 ms);
    /// then the line read backwards from the first frame's RTP time,
    /// rounded to whole ms ((9900 - 900 - 900) / 90 = 90 ms after the
    /// start; at the least slope, 1e-3 ticks per ms, 9 / 1e-3); a line
    /// with less slope gives the start.
    #[test]
    fn expected_completion_by_hand() {
        let mut f = Extrapolator::new(ms(100));
        (f.first_ticks, f.prev_ticks, f.count) = (Some(0), Some(0), 1);
        assert_eq!(f.local_time(3000), Some(SimTime::from_micros(133_333)));
        (f.first_ticks, f.count, f.w) = (Some(900), START_UP_FRAMES, [90.0, 900.0]);
        assert_eq!(f.local_time(9900), Some(ms(190)));
        f.w = [1e-3, 0.0];
        assert_eq!(f.local_time(909), Some(ms(9100)));
        f.w = [0.0, 900.0];
        assert_eq!(f.local_time(9900), Some(ms(100)));
    }

    /// The delay variation by hand: 40 ms between completions, 3000
    /// ticks between captures (33.333 ms in whole microseconds): 6.667
    /// ms. None for a frame no newer than the last; 0 for the first.
    #[test]
    fn the_delay_variation_by_hand() {
        let last = Some((9000, ms(50)));
        let d = delay_variation(last, 12_000, ms(90)).unwrap();
        assert!((d - 6.667).abs() < 1e-9, "{d}");
        assert_eq!(delay_variation(last, 9000, ms(90)), None);
        assert_eq!(delay_variation(last, 8000, ms(90)), None);
        assert_eq!(delay_variation(None, 8000, ms(90)), Some(0.0));
    }

    /// Ten seconds exactly between frames keep the fit; more restart it.
    #[test]
    fn ten_seconds_exactly_keep_the_fit() {
        let mut f = Extrapolator::new(ms(0));
        f.update(ms(0), 0);
        f.update(ms(10_000), 900_000);
        assert_eq!((f.start, f.count), (ms(0), 2));
        f.update(ms(20_001), 1_800_000);
        assert_eq!((f.start, f.count), (ms(20_001), 1));
    }

    /// Ten seconds without a frame start the fit again at the next one.
    #[test]
    fn a_long_silence_restarts_the_fit() {
        let mut t = timing();
        for i in 0..50u64 {
            let c = ms(33 * i);
            t.on_complete(c + ms(40), c, 1000, c + ms(100));
        }
        let c = ms(33 * 50 + 20_000);
        t.on_complete(c + ms(90), c, 1000, c + ms(100));
        let fit = t.fit.as_ref().unwrap();
        assert_eq!((fit.start, fit.count), (c + ms(90), 1));
        assert_eq!(fit.local_time(ticks(c + ms(33))), Some(c + ms(123)));
    }
}
