//! Frames from a trace: a list of frame sizes in bytes played at a frame
//! rate, looping, scaled so that their mean rate is the target (the
//! trace-driven model of RFC 8593 section 5 without its resolution
//! switching: one size list, scaled linearly). Frames marked as key
//! frames in the trace stay key frames. With `key_on_request`, a
//! receiver's request (a PLI) makes the next frame a key frame the size
//! of the trace's mean key frame, as a live encoder would; the frames
//! after it follow the trace as before, so the extra bytes are not paid
//! back (the synthetic codec's transient pays them back; a trace has no
//! model of how).

use super::spec::{SourceModel, SourceSite};
use super::{Frame, FrameSource};
use crate::scenario::check::Checker;
use crate::sim::{SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// Most frames a trace may list.
const MAX_FRAMES: usize = 1_000_000;

fn d_true() -> bool {
    true
}

/// Frames from a list of sizes.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    pub fps: f64,
    /// Frame payload sizes in bytes, played in a loop.
    #[serde(default)]
    pub frames_bytes: Vec<u32>,
    /// A frame-size trace file (one frame per line: bytes, then `I` for a
    /// key frame), read by the mediasim package before the run.
    #[serde(default)]
    pub file: Option<String>,
    /// Indices (in `frames_bytes`) of key frames.
    #[serde(default)]
    pub key_frames: Vec<usize>,
    /// Scale the sizes so the mean rate follows the target (true), or play
    /// them as listed (false).
    #[serde(default = "d_true")]
    pub follow_target: bool,
    /// A key-frame request makes the next frame a key frame of the
    /// trace's mean key-frame size (false: requests are ignored, as a
    /// pre-encoded stream would).
    #[serde(default)]
    pub key_on_request: bool,
}

impl SourceModel for TraceSpec {
    fn validate(&self, p: &str, c: &mut Checker) {
        c.positive(format_args!("{p}.fps"), self.fps);
        c.at_most(format_args!("{p}.fps"), self.fps, 1000.0);
        if self.frames_bytes.is_empty() && self.file.is_some() {
            let msg = "the engine needs the sizes themselves: `file` is read by the mediasim package (mediasim.run) before the run";
            c.err(format!("{p}.frames_bytes"), msg);
        } else if self.frames_bytes.is_empty() || self.frames_bytes.len() > MAX_FRAMES {
            let msg = format!(
                "must list 1..={MAX_FRAMES} frames (got {})",
                self.frames_bytes.len()
            );
            c.err(format!("{p}.frames_bytes"), msg);
        }
        if let Some(i) = self
            .frames_bytes
            .iter()
            .position(|&b| b == 0 || b > 10_000_000)
        {
            let msg = format!(
                "frame {i} has {} bytes: must be 1..=10000000",
                self.frames_bytes[i]
            );
            c.err(format!("{p}.frames_bytes"), msg);
        }
        if let Some(&k) = self
            .key_frames
            .iter()
            .find(|&&k| k >= self.frames_bytes.len())
        {
            let msg = format!(
                "{k} is not a frame index (the trace has {})",
                self.frames_bytes.len()
            );
            c.err(format!("{p}.key_frames"), msg);
        }
        if self.key_on_request && self.key_frames.is_empty() {
            let msg = "needs key frames in the trace (`key_frames`, or `I` in the file): \
                       their mean size is the size of a key frame made on request";
            c.err(format!("{p}.key_on_request"), msg);
        }
    }
    fn build(&self, site: &SourceSite) -> Box<dyn FrameSource> {
        let frames = (self.frames_bytes.iter().enumerate())
            .map(|(i, &b)| (b, self.key_frames.contains(&i)))
            .collect();
        let mut t = FrameTrace::new(Arc::new(frames), self.fps, self.follow_target);
        t.key_on_request = self.key_on_request;
        t.set_target(SimTime::ZERO, site.start_bps);
        Box::new(t)
    }
    fn frame_interval(&self, _site: &SourceSite) -> SimTime {
        SimTime::from_secs_f64(1.0 / self.fps)
    }
}

pub struct FrameTrace {
    /// (bytes, key frame) per frame.
    frames: Arc<Vec<(u32, bool)>>,
    interval: SimTime,
    /// Multiplies the sizes: target / the trace's own mean rate; 1 when
    /// the trace plays as recorded.
    scale: f64,
    /// The trace's own mean rate, bit/s.
    mean_bps: f64,
    follows_target: bool,
    next: usize,
    /// Requests make key frames (`key_on_request`).
    pub key_on_request: bool,
    /// The trace's mean key-frame size, bytes, if it has key frames.
    key_bytes: Option<f64>,
    /// A request is waiting for the next frame.
    key_due: bool,
}

impl FrameTrace {
    /// `frames` non-empty; `follows_target`: scale to the target rate.
    pub fn new(frames: Arc<Vec<(u32, bool)>>, fps: f64, follows_target: bool) -> Self {
        let mean_bytes =
            frames.iter().map(|f| f.0 as f64).sum::<f64>() / frames.len().max(1) as f64;
        let (keys, key_sum) = (frames.iter().filter(|f| f.1))
            .fold((0usize, 0.0), |(n, s), f| (n + 1, s + f.0 as f64));
        FrameTrace {
            frames,
            interval: SimTime::from_secs_f64(1.0 / fps),
            scale: 1.0,
            mean_bps: mean_bytes * 8.0 * fps,
            follows_target,
            next: 0,
            key_on_request: false,
            key_bytes: (keys > 0).then(|| key_sum / keys as f64),
            key_due: false,
        }
    }
}

impl FrameSource for FrameTrace {
    fn set_target(&mut self, _now: SimTime, bps: f64) {
        if self.follows_target && bps > 0.0 && self.mean_bps > 0.0 {
            self.scale = bps / self.mean_bps;
        }
    }
    fn rate_bps(&self) -> f64 {
        self.mean_bps * self.scale
    }
    fn request_key_frame(&mut self) -> bool {
        self.key_due = self.key_on_request && self.key_bytes.is_some();
        self.key_due
    }
    fn next_frame(&mut self, _now: SimTime, _rng: &mut SimRng) -> (Frame, SimTime) {
        let (listed, mut key) = self.frames[self.next % self.frames.len()];
        self.next = (self.next + 1) % self.frames.len();
        let mut bytes = listed as f64;
        if std::mem::take(&mut self.key_due) && !key {
            // In place of the trace's frame: a key frame of its mean size.
            (bytes, key) = (self.key_bytes.expect("key frames"), true);
        }
        let bytes = (bytes * self.scale).round().clamp(1.0, u32::MAX as f64) as u32;
        (Frame { bytes, key }, self.interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    #[test]
    fn plays_loops_and_scales_to_the_target() {
        let mut rng = RngStreams::new(1, 0).stream("t");
        let frames = Arc::new(vec![
            (3000, true),
            (1000, false),
            (1000, false),
            (1000, false),
        ]);
        let mut t = FrameTrace::new(frames.clone(), 25.0, true);
        assert_eq!(t.rate_bps(), 1500.0 * 8.0 * 25.0);
        let sizes: Vec<(u32, bool)> = (0..5)
            .map(|_| {
                let (f, gap) = t.next_frame(SimTime::ZERO, &mut rng);
                assert_eq!(gap, SimTime::from_millis(40));
                (f.bytes, f.key)
            })
            .collect();
        assert_eq!(sizes[..4], frames[..]);
        assert_eq!(sizes[4], (3000, true));
        t.set_target(SimTime::ZERO, 150_000.0); // half the trace's rate
        assert_eq!(t.next_frame(SimTime::ZERO, &mut rng).0.bytes, 500);
        // A target of 0 (no estimate yet) leaves the scale as it was.
        t.set_target(SimTime::ZERO, 0.0);
        assert_eq!(t.next_frame(SimTime::ZERO, &mut rng).0.bytes, 500);
        let mut fixed = FrameTrace::new(frames, 25.0, false);
        fixed.set_target(SimTime::ZERO, 1.0);
        assert_eq!(fixed.next_frame(SimTime::ZERO, &mut rng).0.bytes, 3000);
    }

    /// With `key_on_request`, a request makes the next frame a key frame
    /// of the trace's mean key-frame size (scaled with the rest) in place
    /// of the listed one, and the trace goes on where it was; a key frame
    /// due anyway stays as listed. Without it, requests are ignored.
    #[test]
    fn a_request_makes_the_next_frame_a_key_frame_of_the_mean_key_size() {
        let mut rng = RngStreams::new(1, 0).stream("t");
        let frames = Arc::new(vec![
            (3000, true),
            (1000, false),
            (1000, false),
            (5000, true),
            (1000, false),
        ]);
        let mut t = FrameTrace::new(frames.clone(), 25.0, true);
        let mut next = |t: &mut FrameTrace| {
            let f = t.next_frame(SimTime::ZERO, &mut rng).0;
            (f.bytes, f.key)
        };
        assert!(!t.request_key_frame(), "off by default: ignored");
        assert_eq!(next(&mut t), (3000, true));
        assert_eq!(next(&mut t), (1000, false));
        t.key_on_request = true;
        assert!(t.request_key_frame());
        assert_eq!(next(&mut t), (4000, true), "the mean of 3000 and 5000");
        assert_eq!(next(&mut t), (5000, true), "the trace goes on");
        assert!(t.request_key_frame());
        t.set_target(SimTime::ZERO, t.rate_bps() / 2.0);
        assert_eq!(next(&mut t), (2000, true), "scaled with the rest");
        assert!(t.request_key_frame());
        assert_eq!(next(&mut t), (1500, true), "a key frame due anyway");
        assert_eq!(next(&mut t), (500, false), "one request, one key frame");
        let mut no_keys = FrameTrace::new(Arc::new(vec![(1000, false)]), 25.0, true);
        no_keys.key_on_request = true;
        assert!(!no_keys.request_key_frame());
    }

    fn errors(spec: serde_json::Value) -> Vec<String> {
        let s: TraceSpec = serde_json::from_value(spec).expect("spec");
        let mut c = Checker::default();
        s.validate("m.source", &mut c);
        c.errs.iter().map(|e| e.to_string()).collect()
    }

    /// Sizes 1 to 10,000,000 bytes, at least one frame, key frames within
    /// the trace; the nominal interval is 1 / fps.
    #[test]
    fn checks_and_the_frame_interval() {
        assert!(errors(serde_json::json!({"fps": 25, "frames_bytes": [1, 10_000_000]})).is_empty());
        for sizes in [vec![], vec![0, 100], vec![100, 10_000_001]] {
            let e = errors(serde_json::json!({"fps": 25, "frames_bytes": sizes}));
            assert!(
                e.len() == 1 && e[0].contains("m.source.frames_bytes"),
                "{sizes:?}: {e:?}"
            );
        }
        // The sizes read from a file (`file` named, the sizes given): fine.
        let read = serde_json::json!({"fps": 25, "frames_bytes": [100, 200], "file": "f.csv"});
        assert!(errors(read).is_empty());
        // The most frames a trace may list.
        let most = vec![100u32; MAX_FRAMES];
        assert!(errors(serde_json::json!({"fps": 25, "frames_bytes": most})).is_empty());
        let e = errors(serde_json::json!({"fps": 25, "frames_bytes": [1, 2], "key_frames": [2]}));
        assert!(e[0].contains("m.source.key_frames"), "{e:?}");
        let e =
            errors(serde_json::json!({"fps": 25, "frames_bytes": [1, 2], "key_on_request": true}));
        assert!(
            e.len() == 1 && e[0].contains("m.source.key_on_request"),
            "{e:?}"
        );
        let keyed = serde_json::json!({"fps": 25, "frames_bytes": [1, 2], "key_frames": [0], "key_on_request": true});
        assert!(errors(keyed).is_empty());
        let s: TraceSpec =
            serde_json::from_value(serde_json::json!({"fps": 25, "frames_bytes": [1]})).unwrap();
        let site = SourceSite {
            start_bps: 0.0,
            plan: (0, SimTime::ZERO),
        };
        assert_eq!(s.frame_interval(&site), SimTime::from_millis(40));
    }
}
