//! Frames from a trace: a list of frame sizes in bytes played at a frame
//! rate, looping, scaled so that their mean rate is the target (the
//! trace-driven model of RFC 8593 section 5 without its resolution
//! switching: one size list, scaled linearly). Frames marked as key
//! frames in the trace stay key frames.

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
    }
    fn build(&self, site: &SourceSite) -> Box<dyn FrameSource> {
        let frames = (self.frames_bytes.iter().enumerate())
            .map(|(i, &b)| (b, self.key_frames.contains(&i)))
            .collect();
        let mut t = FrameTrace::new(Arc::new(frames), self.fps, self.follow_target);
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
}

impl FrameTrace {
    /// `frames` non-empty; `follows_target`: scale to the target rate.
    pub fn new(frames: Arc<Vec<(u32, bool)>>, fps: f64, follows_target: bool) -> Self {
        let mean_bytes =
            frames.iter().map(|f| f.0 as f64).sum::<f64>() / frames.len().max(1) as f64;
        FrameTrace {
            frames,
            interval: SimTime::from_secs_f64(1.0 / fps),
            scale: 1.0,
            mean_bps: mean_bytes * 8.0 * fps,
            follows_target,
            next: 0,
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
    fn next_frame(&mut self, _now: SimTime, _rng: &mut SimRng) -> (Frame, SimTime) {
        let (bytes, key) = self.frames[self.next % self.frames.len()];
        self.next = (self.next + 1) % self.frames.len();
        let bytes = (bytes as f64 * self.scale)
            .round()
            .clamp(1.0, u32::MAX as f64) as u32;
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
        let s: TraceSpec =
            serde_json::from_value(serde_json::json!({"fps": 25, "frames_bytes": [1]})).unwrap();
        let site = SourceSite {
            start_bps: 0.0,
            plan: (0, SimTime::ZERO),
        };
        assert_eq!(s.frame_interval(&site), SimTime::from_millis(40));
    }
}
