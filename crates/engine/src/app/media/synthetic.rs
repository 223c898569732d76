//! RFC 8593's statistical video codec (section 4; the reference is Cisco's
//! syncodecs "statistics codec", whose rules and defaults these are).
//!
//! - Steady phase: each frame is `rate / (8 fps)` bytes.
//! - A target change larger than `big_change` (50%) of the current rate is
//!   taken at once and starts a transient phase of `transient_frames`
//!   (10) frames: the first an I-frame of `i_frame_bytes` (4.17 KiB), the
//!   others shrunk so the phase carries what as many steady frames would,
//!   but never below 0.2 of a steady frame.
//! - A smaller change moves the rate by at most `max_step` (10%), and
//!   after any accepted change the codec ignores new targets for
//!   `update_interval` (100 ms).
//! - A key-frame request (a receiver's PLI) starts a transient phase too.
//! - Frame sizes and intervals get zero-mean Laplacian noise relative to
//!   their value (scale `size_noise` and `interval_noise`, 0.15 each);
//!   a frame has at least 1 byte and an interval is never negative.

use super::spec::{SourceModel, SourceSite};
use super::{Frame, FrameSource};
use crate::scenario::check::Checker;
use crate::sim::{uniform, SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

/// RFC 8593's statistical codec in a scenario; every field defaults to
/// syncodecs' value.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyntheticSpec {
    /// Frames per second (25).
    pub fps: Option<f64>,
    /// Largest change of the rate per accepted update, as a fraction (0.1).
    pub max_step: Option<f64>,
    /// Time after an accepted update during which targets are ignored, ms
    /// (100).
    pub update_interval_ms: Option<f64>,
    /// A target change above this fraction starts a transient (0.5).
    pub big_change: Option<f64>,
    /// Frames in a transient phase, the I-frame included (10).
    pub transient_frames: Option<u32>,
    /// I-frame size, bytes (4270, i.e. 4.17 KiB).
    pub i_frame_bytes: Option<f64>,
    /// Laplacian scale of the frame-size noise, relative (0.15).
    pub size_noise: Option<f64>,
    /// Laplacian scale of the frame-interval noise, relative (0.15).
    pub interval_noise: Option<f64>,
}

impl SyntheticSpec {
    fn params(&self) -> SyntheticParams {
        let d = SyntheticParams::default();
        SyntheticParams {
            fps: self.fps.unwrap_or(d.fps),
            max_step: self.max_step.unwrap_or(d.max_step),
            update_interval: self
                .update_interval_ms
                .map_or(d.update_interval, SimTime::from_millis_f64),
            big_change: self.big_change.unwrap_or(d.big_change),
            transient_frames: self.transient_frames.unwrap_or(d.transient_frames),
            i_frame_bytes: self.i_frame_bytes.unwrap_or(d.i_frame_bytes),
            size_noise: self.size_noise.unwrap_or(d.size_noise),
            interval_noise: self.interval_noise.unwrap_or(d.interval_noise),
        }
    }
}

impl SourceModel for SyntheticSpec {
    fn validate(&self, p: &str, c: &mut Checker) {
        let q = self.params();
        c.positive(format_args!("{p}.fps"), q.fps);
        c.at_most(format_args!("{p}.fps"), q.fps, 1000.0);
        c.probability(format_args!("{p}.max_step"), q.max_step);
        c.non_negative(
            format_args!("{p}.update_interval_ms"),
            q.update_interval.as_secs_f64(),
        );
        c.positive(format_args!("{p}.big_change"), q.big_change);
        if q.transient_frames < 2 || q.transient_frames > 1000 {
            let msg = format!("must be 2..=1000 frames (got {})", q.transient_frames);
            c.err(format!("{p}.transient_frames"), msg);
        }
        c.positive(format_args!("{p}.i_frame_bytes"), q.i_frame_bytes);
        c.at_most(format_args!("{p}.i_frame_bytes"), q.i_frame_bytes, 1e7);
        for (name, x) in [
            ("size_noise", q.size_noise),
            ("interval_noise", q.interval_noise),
        ] {
            c.positive(format_args!("{p}.{name}"), x);
            c.at_most(format_args!("{p}.{name}"), x, 10.0);
        }
    }
    fn build(&self, site: &SourceSite) -> Box<dyn FrameSource> {
        Box::new(Synthetic::new(self.params(), site.start_bps))
    }
    fn frame_interval(&self, _site: &SourceSite) -> SimTime {
        SimTime::from_secs_f64(1.0 / self.params().fps)
    }
}

/// The codec's parameters (RFC 8593 4; syncodecs' defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyntheticParams {
    pub fps: f64,
    pub max_step: f64,
    pub update_interval: SimTime,
    pub big_change: f64,
    pub transient_frames: u32,
    pub i_frame_bytes: f64,
    pub size_noise: f64,
    pub interval_noise: f64,
}

impl Default for SyntheticParams {
    fn default() -> Self {
        SyntheticParams {
            fps: 25.0,
            max_step: 0.1,
            update_interval: SimTime::from_millis(100),
            big_change: 0.5,
            transient_frames: 10,
            i_frame_bytes: 4.17 * 1024.0,
            size_noise: 0.15,
            interval_noise: 0.15,
        }
    }
}

/// A zero-mean Laplacian draw of scale `b` (inverse CDF).
pub fn laplace(rng: &mut SimRng, b: f64) -> f64 {
    let u = uniform(rng) - 0.5;
    // 1 - 2|u| is in (0, 1]; the floor keeps ln finite at u = -0.5.
    -b * u.signum() * (1.0 - 2.0 * u.abs()).max(1e-300).ln()
}

/// The statistical codec's state.
pub struct Synthetic {
    p: SyntheticParams,
    rate_bps: f64,
    /// No new target accepted before this time.
    locked_until: SimTime,
    /// Frames left in the transient phase.
    transient_left: u32,
}

impl Synthetic {
    /// Starts at `rate_bps` with a transient phase (the first frame is an
    /// I-frame), as the reference codec does.
    pub fn new(p: SyntheticParams, rate_bps: f64) -> Self {
        Synthetic {
            transient_left: p.transient_frames,
            p,
            rate_bps,
            locked_until: SimTime::ZERO,
        }
    }
}

impl FrameSource for Synthetic {
    fn set_target(&mut self, now: SimTime, bps: f64) {
        if bps.is_nan() || bps <= 0.0 || now < self.locked_until || bps == self.rate_bps {
            return;
        }
        self.locked_until = now + self.p.update_interval;
        let change = (bps - self.rate_bps) / self.rate_bps;
        if change.abs() > self.p.big_change {
            self.rate_bps = bps;
            self.transient_left = self.p.transient_frames;
        } else {
            let (lo, hi) = (
                self.rate_bps * (1.0 - self.p.max_step),
                self.rate_bps * (1.0 + self.p.max_step),
            );
            self.rate_bps = bps.clamp(lo, hi);
        }
    }

    fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// A requested key frame starts a transient phase, as a big target
    /// change does (RFC 8593 4.2): an I-frame, then frames shrunk to pay
    /// for it. A transient under way restarts.
    fn request_key_frame(&mut self) -> bool {
        self.transient_left = self.p.transient_frames;
        true
    }

    fn next_frame(&mut self, _now: SimTime, rng: &mut SimRng) -> (Frame, SimTime) {
        let steady = self.rate_bps / (self.p.fps * 8.0);
        let mut bytes = steady;
        let mut key = false;
        if self.transient_left > 0 {
            let n = self.p.transient_frames as f64;
            if self.transient_left == self.p.transient_frames {
                bytes = self.p.i_frame_bytes;
                key = true;
            } else {
                // The other n - 1 frames carry n steady frames less the
                // I-frame, at least 0.2 of a steady frame each.
                bytes *= ((n - self.p.i_frame_bytes / steady) / (n - 1.0)).max(0.2);
            }
            self.transient_left -= 1;
        }
        let bytes = (bytes * (1.0 + laplace(rng, self.p.size_noise))).max(1.0);
        let gap = (1.0 + laplace(rng, self.p.interval_noise)).max(0.0) / self.p.fps;
        let frame = Frame {
            bytes: bytes.min(u32::MAX as f64) as u32,
            key,
        };
        (frame, SimTime::from_secs_f64(gap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    fn quiet() -> SyntheticParams {
        SyntheticParams {
            size_noise: 1e-12,
            interval_noise: 1e-12,
            ..SyntheticParams::default()
        }
    }

    /// Runs the codec for `secs` of frames, returning (sizes, gaps in s).
    fn run(c: &mut Synthetic, rng: &mut SimRng, secs: f64) -> (Vec<f64>, Vec<f64>) {
        let (mut t, mut sizes, mut gaps) = (SimTime::ZERO, vec![], vec![]);
        while t.as_secs_f64() < secs {
            let (f, gap) = c.next_frame(t, rng);
            sizes.push(f.bytes as f64);
            gaps.push(gap.as_secs_f64());
            t += gap;
        }
        (sizes, gaps)
    }

    #[test]
    fn steady_mean_rate_is_within_2_percent_of_the_target() {
        let mut rng = RngStreams::new(1, 0).stream("codec");
        for target in [150e3, 1e6, 2.5e6] {
            let mut c = Synthetic::new(SyntheticParams::default(), target);
            c.transient_left = 0;
            let (sizes, gaps) = run(&mut c, &mut rng, 2000.0);
            let rate = sizes.iter().sum::<f64>() * 8.0 / gaps.iter().sum::<f64>();
            assert!((rate / target - 1.0).abs() < 0.02, "{target}: {rate}");
        }
    }

    /// Laplace(0, b) has mean |x| = b and median |x| = b ln 2: the noise on
    /// sizes and intervals has the configured scale. With b = 0.2 instead
    /// of 0.15, mean |x| moves by 0.05 (the standard error is ~0.001) and
    /// the share under 0.15 ln 2 from 0.5 to 0.41. (The variance, 2 b^2, is
    /// not tested: the 1-byte floor cuts the far left tail.)
    #[test]
    fn noise_has_the_configured_laplacian_scale() {
        let mut rng = RngStreams::new(2, 0).stream("codec");
        for b in [0.15, 0.25] {
            let p = SyntheticParams {
                size_noise: b,
                interval_noise: b / 3.0,
                ..SyntheticParams::default()
            };
            let mut c = Synthetic::new(p, 2e6);
            c.transient_left = 0;
            let (sizes, gaps) = run(&mut c, &mut rng, 1600.0); // 40,000 frames
            let steady = 2e6 / 200.0;
            let rel: Vec<f64> = sizes.iter().map(|s| s / steady - 1.0).collect();
            let n = rel.len() as f64;
            let mean_abs = rel.iter().map(|x| x.abs()).sum::<f64>() / n;
            let under = rel.iter().filter(|x| x.abs() < b * 2f64.ln()).count() as f64 / n;
            assert!((mean_abs - b).abs() < 0.006, "{b}: {mean_abs}");
            assert!((under - 0.5).abs() < 0.01, "{b}: {under}");
            let gabs = gaps.iter().map(|g| (g * 25.0 - 1.0).abs()).sum::<f64>() / n;
            assert!((gabs - b / 3.0).abs() < 0.004, "{b}: {gabs}");
        }
    }

    /// The transient phase: an I-frame of the configured size, then
    /// `transient_frames - 1` frames that together with it carry as much
    /// as that many steady frames; then steady frames.
    #[test]
    fn transient_has_the_i_frame_and_length_configured() {
        let mut rng = RngStreams::new(3, 0).stream("codec");
        for (frames, i_bytes) in [(10, 4270.0), (6, 9000.0)] {
            let p = SyntheticParams {
                transient_frames: frames,
                i_frame_bytes: i_bytes,
                ..quiet()
            };
            let mut c = Synthetic::new(p, 1e6); // 5000-byte steady frames
            let sizes: Vec<f64> = (0..frames + 3)
                .map(|_| c.next_frame(SimTime::ZERO, &mut rng).0.bytes as f64)
                .collect();
            assert!((sizes[0] - i_bytes).abs() <= 1.0, "{sizes:?}");
            let n = frames as usize;
            let rest = (n as f64 * 5000.0 - i_bytes) / (n as f64 - 1.0);
            for s in &sizes[1..n] {
                assert!((s - rest).abs() <= 1.0, "{sizes:?}");
            }
            for s in &sizes[n..] {
                assert!((s - 5000.0).abs() <= 1.0, "{sizes:?}");
            }
        }
        // An I-frame larger than the whole phase: the floor of 0.2.
        let p = SyntheticParams {
            i_frame_bytes: 60_000.0,
            ..quiet()
        };
        let mut c = Synthetic::new(p, 1e6);
        c.next_frame(SimTime::ZERO, &mut rng);
        let second = c.next_frame(SimTime::ZERO, &mut rng).0.bytes;
        assert!((second as f64 - 1000.0).abs() <= 1.0);
    }

    /// A key-frame request mid-stream: the next frame is the I-frame and
    /// the phase's other frames follow, the rate unchanged.
    #[test]
    fn a_key_frame_request_starts_a_transient() {
        let mut rng = RngStreams::new(4, 0).stream("codec");
        let mut c = Synthetic::new(quiet(), 1e6);
        for _ in 0..12 {
            c.next_frame(SimTime::ZERO, &mut rng);
        }
        let (f, _) = c.next_frame(SimTime::ZERO, &mut rng);
        assert!(!f.key && (f.bytes as f64 - 5000.0).abs() <= 1.0);
        c.request_key_frame();
        let (f, _) = c.next_frame(SimTime::ZERO, &mut rng);
        assert!(f.key && (f.bytes as f64 - 4270.0).abs() <= 1.0, "{f:?}");
        let (f, _) = c.next_frame(SimTime::ZERO, &mut rng);
        let rest = (10.0 * 5000.0 - 4270.0) / 9.0;
        assert!(!f.key && (f.bytes as f64 - rest).abs() <= 1.0, "{f:?}");
        assert_eq!((c.rate_bps(), c.transient_left), (1e6, 8));
    }

    #[test]
    fn targets_follow_within_10_percent_per_update_and_big_changes_jump() {
        let mut c = Synthetic::new(quiet(), 1e6);
        let ms = SimTime::from_millis;
        c.set_target(ms(0), 1.3e6);
        assert_eq!(c.rate_bps(), 1.1e6); // +10% at most
        c.set_target(ms(50), 1.3e6);
        assert_eq!(c.rate_bps(), 1.1e6); // within 100 ms of the last update
        c.set_target(ms(100), 0.9e6);
        assert!((c.rate_bps() - 0.99e6).abs() < 1e-6); // -10%
        c.transient_left = 0;
        c.set_target(ms(200), 3e6); // +203%: taken at once, transient
        assert_eq!((c.rate_bps(), c.transient_left), (3e6, 10));
        c.set_target(ms(300), 1e6); // -67%
        assert_eq!(c.rate_bps(), 1e6);
        c.set_target(ms(400), 0.0); // ignored
        assert_eq!(c.rate_bps(), 1e6);
    }

    /// A change of exactly `big_change` (50%) is not big: the rate moves
    /// by at most `max_step` (10%); above it, the rate jumps (with a
    /// transient).
    #[test]
    fn a_change_of_exactly_big_change_is_stepped() {
        let mut c = Synthetic::new(quiet(), 1e6);
        c.set_target(SimTime::ZERO, 1.5e6);
        assert_eq!(c.rate_bps(), 1.1e6);
        let mut c = Synthetic::new(quiet(), 1e6);
        c.set_target(SimTime::ZERO, 1.6e6);
        assert_eq!(c.rate_bps(), 1.6e6);
    }

    /// A spec's values replace the defaults; the nominal interval is
    /// 1 / fps; transients last 2 to 1000 frames.
    #[test]
    fn spec_values_and_checks() {
        let spec: SyntheticSpec =
            serde_json::from_value(serde_json::json!({"fps": 50, "transient_frames": 2})).unwrap();
        assert_eq!(
            (spec.params().fps, spec.params().transient_frames),
            (50.0, 2)
        );
        let site = SourceSite {
            start_bps: 0.0,
            plan: (0, SimTime::ZERO),
        };
        assert_eq!(spec.frame_interval(&site), SimTime::from_millis(20));
        for (frames, ok) in [(1, false), (2, true), (1000, true), (1001, false)] {
            let s: SyntheticSpec =
                serde_json::from_value(serde_json::json!({ "transient_frames": frames })).unwrap();
            let mut c = Checker::default();
            s.validate("m.source", &mut c);
            assert_eq!(c.errs.is_empty(), ok, "{frames}: {:?}", c.errs);
        }
    }
}
