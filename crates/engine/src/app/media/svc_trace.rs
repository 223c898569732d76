//! Frames from a scalable (SVC) NAL-unit trace: the trace format and the
//! layer choice of the `svc` flow (`app::svc::trace`), played as the
//! frames of an RTP call.
//!
//! - A frame is the NAL units of one time; its size is the bytes of the
//!   units in the chosen layers, its temporal level that of its units.
//! - The layers are chosen once per GOP of 8 frames: with `follow_target`,
//!   the operating point with the most bytes within the target over the
//!   GOP and the rest of that budget to the FGS layer (`select`, as the
//!   `svc` flow chooses); a higher spatial layer is taken up only at an
//!   IDR GOP (every `idr_gops`). Otherwise the fixed point `spatial`,
//!   `temporal`, `fgs`.
//! - Frames above the chosen temporal level are not sent: the time to the
//!   next frame spans them (the frame rate halves per level left out).
//! - Temporal level 0 frames are key frames. The trace plays in a loop,
//!   its period the span of its frame times plus one mean frame interval.
//!
//! Left out: the `svc` flow's send-buffer term in the budget (here the
//! pacer holds the backlog) and its per-layer DSCPs (an RTP member sends
//! at one DSCP).

use super::spec::{SourceModel, SourceSite};
use super::{Frame, FrameSource};
use crate::app::svc::trace::{nals_from_rows, select, Nal, NalRow, Selection, GOP};
use crate::scenario::check::Checker;
use crate::sim::{SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// Largest NAL unit, bytes.
const MAX_UNIT_BYTES: u32 = 10_000_000;
/// Most GOPs between IDR pictures.
const MAX_IDR_GOPS: u32 = 1_000_000;

fn d_true() -> bool {
    true
}
fn d_spatial() -> u8 {
    1
}
fn d_temporal() -> u8 {
    3
}
fn d_fgs() -> f64 {
    1.0
}
fn d_idr() -> u32 {
    4
}

/// Frames from an SVC NAL-unit trace.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SvcTraceSpec {
    /// The trace: [time_s, bytes, spatial, temporal, quality] per NAL unit,
    /// in decoding order (the `svc` flow's format).
    #[serde(default)]
    pub nal_units: Vec<NalRow>,
    /// A NAL-unit trace file (`time_s bytes spatial temporal quality` per
    /// line), read by the mediasim package before the run.
    #[serde(default)]
    pub file: Option<String>,
    /// Choose each GOP's layers from the target (true), or play the fixed
    /// point below (false).
    #[serde(default = "d_true")]
    pub follow_target: bool,
    /// The fixed point: highest spatial layer (0-1).
    #[serde(default = "d_spatial")]
    pub spatial: u8,
    /// The fixed point: highest temporal level (0-3).
    #[serde(default = "d_temporal")]
    pub temporal: u8,
    /// The fixed point: the fraction of each FGS unit sent (0-1).
    #[serde(default = "d_fgs")]
    pub fgs: f64,
    /// Following the target, a higher spatial layer is taken up only every
    /// this many GOPs (an IDR picture; 4, about 1 s at 30 frames/s).
    #[serde(default = "d_idr")]
    pub idr_gops: u32,
}

/// One frame of the trace.
#[derive(Clone, Copy, Debug)]
struct TraceFrame {
    /// From the trace's first frame.
    offset: SimTime,
    level: u8,
    /// Its units: `nals[first..first + count]`.
    first: usize,
    count: usize,
}

/// A checked trace.
#[derive(Debug)]
struct Layered {
    nals: Vec<Nal>,
    frames: Vec<TraceFrame>,
    /// The loop's length.
    period: SimTime,
    /// The mean time between frames.
    interval: SimTime,
}

impl Layered {
    /// The trace's frames; every problem as a message.
    fn load(rows: &[NalRow]) -> Result<Layered, String> {
        let nals = nals_from_rows(rows)?;
        if let Some(i) = (nals.iter()).position(|n| n.bytes == 0 || n.bytes > MAX_UNIT_BYTES) {
            return Err(format!(
                "unit {} has {} bytes: must be 1..={MAX_UNIT_BYTES}",
                i + 1,
                nals[i].bytes
            ));
        }
        let mut frames: Vec<TraceFrame> = Vec::new();
        for (i, n) in nals.iter().enumerate() {
            match frames.last_mut() {
                Some(f) if f.first + f.count == i && nals[f.first].frame == n.frame => {
                    if n.t != f.level {
                        return Err(format!(
                            "unit {}: the units of a frame must share its temporal level ({})",
                            i + 1,
                            f.level
                        ));
                    }
                    f.count += 1;
                }
                _ => frames.push(TraceFrame {
                    offset: n.time.saturating_sub(nals[0].time),
                    level: n.t,
                    first: i,
                    count: 1,
                }),
            }
        }
        for (k, f) in frames.iter().enumerate() {
            let units = &nals[f.first..f.first + f.count];
            if !units.iter().any(|n| n.s == 0 && n.q == 0) {
                return Err(format!(
                    "frame {k} (from unit {}) has no base-layer unit (spatial 0, quality 0)",
                    f.first + 1
                ));
            }
            if k as u32 % GOP == 0 && f.level != 0 {
                return Err(format!(
                    "frame {k} (from unit {}) starts a GOP of {GOP} frames: its temporal level must be 0 (got {})",
                    f.first + 1,
                    f.level
                ));
            }
        }
        if frames.len() < 2 {
            return Err(
                "the trace needs at least two frames (their times set the frame rate)".into(),
            );
        }
        let span = frames[frames.len() - 1].offset;
        let interval = SimTime::from_nanos(span.as_nanos() / (frames.len() as u64 - 1));
        Ok(Layered {
            nals,
            frames,
            period: span + interval,
            interval,
        })
    }

    /// The units of GOP `g` (frames `8g..8g+8`), and its nominal length.
    fn gop(&self, g: usize) -> (&[Nal], SimTime) {
        let from = g * GOP as usize;
        let to = (from + GOP as usize).min(self.frames.len());
        let (a, b) = (self.frames[from], self.frames[to - 1]);
        let len = SimTime::from_nanos(self.interval.as_nanos() * (to - from) as u64);
        (&self.nals[a.first..b.first + b.count], len)
    }
}

impl SvcTraceSpec {
    fn fixed(&self) -> Selection {
        Selection {
            s_max: self.spatial,
            t_max: self.temporal,
            fgs: self.fgs,
        }
    }
}

impl SourceModel for SvcTraceSpec {
    fn validate(&self, p: &str, c: &mut Checker) {
        if self.nal_units.is_empty() && self.file.is_some() {
            let msg = "the engine needs the units themselves: `file` is read by the mediasim package (mediasim.run) before the run";
            c.err(format!("{p}.nal_units"), msg);
        } else if let Err(e) = Layered::load(&self.nal_units) {
            c.err(format!("{p}.nal_units"), e);
        }
        if self.spatial > 1 {
            let msg = format!("must be 0 or 1 (got {})", self.spatial);
            c.err(format!("{p}.spatial"), msg);
        }
        if self.temporal > 3 {
            let msg = format!("must be 0..=3 (got {})", self.temporal);
            c.err(format!("{p}.temporal"), msg);
        }
        c.probability(format_args!("{p}.fgs"), self.fgs);
        if self.idr_gops == 0 || self.idr_gops > MAX_IDR_GOPS {
            let msg = format!("must be 1..={MAX_IDR_GOPS} (got {})", self.idr_gops);
            c.err(format!("{p}.idr_gops"), msg);
        }
    }
    fn build(&self, site: &SourceSite) -> Box<dyn FrameSource> {
        let trace = Layered::load(&self.nal_units).expect("checked by validate");
        let mut s = SvcFrames::new(Arc::new(trace), self.follow_target, self.fixed());
        s.idr_gops = self.idr_gops;
        s.set_target(SimTime::ZERO, site.start_bps);
        Box::new(s)
    }
    fn frame_interval(&self, _site: &SourceSite) -> SimTime {
        Layered::load(&self.nal_units).map_or(SimTime::ZERO, |t| t.interval)
    }
}

pub struct SvcFrames {
    trace: Arc<Layered>,
    follows_target: bool,
    fixed: Selection,
    idr_gops: u32,
    target_bps: f64,
    /// The next frame to capture, and the trace's loops before it.
    next: usize,
    laps: u64,
    /// The GOP of the frames being sent (numbered over the loops) and its
    /// layers; its payload rate.
    gop: Option<(u64, Selection)>,
    rate_bps: f64,
}

impl SvcFrames {
    fn new(trace: Arc<Layered>, follows_target: bool, fixed: Selection) -> Self {
        SvcFrames {
            trace,
            follows_target,
            fixed,
            idr_gops: d_idr(),
            target_bps: 0.0,
            next: 0,
            laps: 0,
            gop: None,
            rate_bps: 0.0,
        }
    }

    fn gops_per_lap(&self) -> u64 {
        self.trace.frames.len().div_ceil(GOP as usize) as u64
    }

    /// Chooses the layers when the next frame starts a GOP.
    fn choose(&mut self) {
        let g = self.next / GOP as usize;
        let abs = self.laps * self.gops_per_lap() + g as u64;
        if self.gop.is_some_and(|(cur, _)| cur == abs) {
            return;
        }
        let (units, len) = self.trace.gop(g);
        let sel = if self.follows_target {
            // The svc flow's rule (app::svc::source::choose) without its
            // send-buffer term.
            let cap = match self.gop {
                Some((_, prev)) if abs % self.idr_gops as u64 != 0 => prev.s_max,
                _ => u8::MAX,
            };
            select(units, self.target_bps / 8.0 * len.as_secs_f64(), cap)
        } else {
            self.fixed
        };
        let bytes: u64 = units.iter().map(|n| sel.bytes_of(n) as u64).sum();
        self.rate_bps = bytes as f64 * 8.0 / len.as_secs_f64().max(1e-9);
        self.gop = Some((abs, sel));
    }
}

impl FrameSource for SvcFrames {
    fn set_target(&mut self, _now: SimTime, bps: f64) {
        self.target_bps = bps.max(0.0);
        self.choose();
    }
    fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
    fn next_frame(&mut self, _now: SimTime, _rng: &mut SimRng) -> (Frame, SimTime) {
        self.choose();
        let sel = self.gop.expect("chosen").1;
        let tr = Arc::clone(&self.trace);
        let f = tr.frames[self.next];
        let bytes = (tr.nals[f.first..f.first + f.count].iter())
            .map(|n| sel.bytes_of(n))
            .sum();
        let frame = Frame {
            bytes,
            key: f.level == 0,
        };
        // The next frame sent: the next of this GOP within the chosen
        // temporal levels, or the next GOP's first (level 0, always sent).
        let gop = self.next / GOP as usize;
        let mut q = self.next;
        let mut wrapped = false;
        loop {
            q += 1;
            if q == tr.frames.len() {
                (q, wrapped) = (0, true);
                break;
            }
            if q / GOP as usize != gop || tr.frames[q].level <= sel.t_max {
                break;
            }
        }
        let gap = if wrapped {
            self.laps += 1;
            tr.period - f.offset
        } else {
            tr.frames[q].offset - f.offset
        };
        self.next = q;
        (frame, gap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    const LEVELS: [u8; 8] = [0, 3, 2, 3, 1, 3, 2, 3];

    /// `gops` GOPs at 30 frames/s: per frame (s0 q0) 1000 bytes, (s0 q1)
    /// 500, (s1 q0) 2000, (s1 q1) 1000.
    fn rows(gops: usize) -> Vec<NalRow> {
        let mut v = Vec::new();
        for f in 0..gops * 8 {
            let t = f as f64 / 30.0;
            let l = LEVELS[f % 8];
            v.extend([
                (t, 1000, 0, l, 0),
                (t, 500, 0, l, 1),
                (t, 2000, 1, l, 0),
                (t, 1000, 1, l, 1),
            ]);
        }
        v
    }

    fn play(s: &mut SvcFrames, n: usize, target_bps: f64) -> Vec<(u32, bool, u64)> {
        let mut rng = RngStreams::new(1, 0).stream("t");
        let mut now = SimTime::ZERO;
        (0..n)
            .map(|_| {
                s.set_target(now, target_bps);
                let (f, gap) = s.next_frame(now, &mut rng);
                now += gap;
                (f.bytes, f.key, gap.as_nanos())
            })
            .collect()
    }

    fn source(gops: usize, follow: bool, fixed: (u8, u8, f64)) -> SvcFrames {
        let trace = Layered::load(&rows(gops)).expect("valid");
        let sel = Selection {
            s_max: fixed.0,
            t_max: fixed.1,
            fgs: fixed.2,
        };
        SvcFrames::new(Arc::new(trace), follow, sel)
    }

    #[test]
    fn a_fixed_point_sends_its_layers_at_its_frame_rate() {
        // All layers: 4500 bytes every 1/30 s, level-0 frames are key.
        let mut s = source(2, false, (1, 3, 1.0));
        let out = play(&mut s, 16, 0.0);
        assert!(out.iter().all(|&(b, _, _)| b == 4500));
        let keys: Vec<bool> = out.iter().map(|o| o.1).collect();
        assert_eq!(keys.iter().filter(|&&k| k).count(), 2);
        assert!(keys[0] && keys[8]);
        let third = 1e9 / 30.0;
        assert!(out.iter().all(|o| (o.2 as f64 - third).abs() < 2.0));
        assert!((s.rate_bps() - 4500.0 * 8.0 * 30.0).abs() < 1.0);
        // Base spatial layer, temporal levels 0-1, half the FGS: frames 0
        // and 4 of each GOP, 1000 + 250 bytes, 4/30 s apart.
        let mut s = source(2, false, (0, 1, 0.5));
        let out = play(&mut s, 4, 0.0);
        assert!(out.iter().all(|&(b, _, _)| b == 1250));
        assert!(out.iter().all(|o| (o.2 as f64 - 4.0 * third).abs() < 4.0));
        assert_eq!(
            out.iter().map(|o| o.1).collect::<Vec<_>>(),
            [true, false, true, false]
        );
    }

    #[test]
    fn following_the_target_chooses_each_gops_layers() {
        // Per GOP of 8/30 s: (s0, t3) base is 8000 bytes = 240 kbit/s; all
        // q0 layers 24000 bytes = 720 kbit/s; everything 36000 = 1.08 Mbit/s.
        let mut s = source(4, true, (1, 3, 1.0));
        // (A target a little above 720 kbit/s: the budget is exact.)
        let out = play(&mut s, 8, 720.1e3);
        assert!(out.iter().all(|&(b, _, _)| b == 3000), "{out:?}");
        assert!((s.rate_bps() - 720e3).abs() < 1.0);
        // Below the base of all levels: level 0-2 frames of the base layer
        // (4 of 8 frames, 4000 bytes = 120 kbit/s) and FGS with the rest.
        let mut s = source(4, true, (1, 3, 1.0));
        let out = play(&mut s, 4, 150e3);
        // 5000 bytes per GOP: 4000 of base, 1000 over 2000 of FGS.
        assert!(
            out.iter().all(|&(b, _, _)| (1249..=1250).contains(&b)),
            "{out:?}"
        );
        assert!(out.iter().all(|o| (o.2 as f64 - 2e9 / 30.0).abs() < 4.0));
    }

    #[test]
    fn spatial_layers_are_taken_up_only_at_an_idr_gop() {
        let mut s = source(8, true, (1, 3, 1.0));
        s.idr_gops = 4;
        // GOP 0 at 10000 bytes per GOP: (s0, t3) of 8000 bytes beats
        // (s1, t1) of 6000, and half its FGS; GOPs 1-3 stay at spatial 0
        // at a high target (all their FGS); GOP 4 (an IDR) takes up s1.
        let low = play(&mut s, 8, 300e3);
        assert!(
            low.iter().all(|&(b, _, _)| (1249..=1250).contains(&b)),
            "{low:?}"
        );
        let high = play(&mut s, 32, 2e6);
        assert!(high[..24].iter().all(|&(b, _, _)| b == 1500));
        assert!(high[24..].iter().all(|&(b, _, _)| b == 4500));
    }

    /// GOPs are numbered across the trace's loops: with two GOPs a loop
    /// and an IDR every 4, the spatial layer comes back at the third
    /// loop's first GOP (the fifth), not at the second loop's.
    #[test]
    fn idr_gops_count_across_loops() {
        let mut s = source(2, true, (1, 3, 1.0));
        s.idr_gops = 4;
        play(&mut s, 8, 300e3);
        let high = play(&mut s, 32, 2e6);
        assert!(high[..24].iter().all(|&(b, _, _)| b == 1500), "{high:?}");
        assert!(high[24..].iter().all(|&(b, _, _)| b == 4500), "{high:?}");
    }

    /// Defaults: all three temporal levels, spatial 1, all FGS, an IDR
    /// every 4 GOPs; the nominal frame interval is the trace's.
    #[test]
    fn defaults_and_the_frame_interval() {
        let spec: SvcTraceSpec =
            serde_json::from_value(serde_json::json!({ "nal_units": rows(2) })).expect("spec");
        assert_eq!(
            (spec.spatial, spec.temporal, spec.fgs, spec.idr_gops),
            (1, 3, 1.0, 4)
        );
        let site = SourceSite {
            start_bps: 0.0,
            plan: (0, SimTime::ZERO),
        };
        let want = 1e9 / 30.0;
        assert!((spec.frame_interval(&site).as_nanos() as f64 - want).abs() < 2.0);
    }

    #[test]
    fn the_trace_loops_with_one_interval_after_its_last_frame() {
        // 12 frames: a full GOP and a partial one, then frame 0 again.
        let mut r = rows(2);
        r.truncate(12 * 4);
        let trace = Layered::load(&r).expect("valid");
        let third = SimTime::from_nanos(1_000_000_000 / 30);
        assert!(trace.period.as_nanos().abs_diff(12 * third.as_nanos()) < 12);
        let mut s = SvcFrames::new(
            Arc::new(trace),
            false,
            Selection {
                s_max: 0,
                t_max: 0,
                fgs: 0.0,
            },
        );
        // Level 0 only: frames 0 and 8, then the loop to frame 0.
        let out = play(&mut s, 3, 0.0);
        assert!((out[0].2 as f64 - 8e9 / 30.0).abs() < 10.0);
        assert!((out[1].2 as f64 - 4e9 / 30.0).abs() < 10.0);
        assert_eq!(s.laps, 1);
    }

    #[test]
    fn bad_traces_are_named() {
        let err = |r: &[NalRow]| Layered::load(r).unwrap_err();
        assert!(err(&[(0.0, 100, 0, 0, 0)]).contains("at least two frames"));
        assert!(err(&[(0.0, 100, 0, 0, 0), (0.0, 100, 1, 1, 0)])
            .contains("unit 2: the units of a frame"));
        assert!(err(&[(0.0, 100, 1, 0, 0), (0.1, 100, 0, 3, 0)])
            .contains("frame 0 (from unit 1) has no base-layer"));
        assert!(err(&[(0.0, 100, 0, 2, 0), (0.1, 100, 0, 3, 0)]).contains("starts a GOP"));
        assert!(err(&[(0.0, 0, 0, 0, 0), (0.1, 100, 0, 3, 0)]).contains("unit 1 has 0 bytes"));
        let big = MAX_UNIT_BYTES + 1;
        assert!(err(&[(0.0, 100, 0, 0, 0), (0.1, big, 0, 3, 0)]).contains("unit 2 has"));
        let most = [(0.0, 100, 0, 0, 0), (0.1, MAX_UNIT_BYTES, 0, 3, 0)];
        assert!(Layered::load(&most).is_ok());
        let mut c = Checker::default();
        let spec = SvcTraceSpec {
            nal_units: rows(1),
            file: None,
            follow_target: false,
            spatial: 2,
            temporal: 4,
            fgs: 1.5,
            idr_gops: 0,
        };
        spec.validate("s", &mut c);
        let fields: Vec<String> = c.errs.iter().map(|e| e.path.clone()).collect();
        assert_eq!(fields, ["s.spatial", "s.temporal", "s.fgs", "s.idr_gops"]);
        let mut c = Checker::default();
        SvcTraceSpec {
            spatial: 1,
            temporal: 3,
            fgs: 1.0,
            idr_gops: MAX_IDR_GOPS + 1,
            ..spec.clone()
        }
        .validate("s", &mut c);
        assert_eq!(c.errs.len(), 1, "{:?}", c.errs);
        // Units given with the file they were read from, and the IDR
        // interval's bound itself: fine.
        for (idr_gops, file) in [(1, Some("units.csv")), (MAX_IDR_GOPS, None)] {
            let mut c = Checker::default();
            SvcTraceSpec {
                spatial: 1,
                temporal: 3,
                fgs: 1.0,
                idr_gops,
                file: file.map(String::from),
                ..spec.clone()
            }
            .validate("s", &mut c);
            assert!(c.errs.is_empty(), "{idr_gops} {file:?}: {:?}", c.errs);
        }
    }

    /// Each GOP's rate comes from its own units: with GOP 1's units twice
    /// GOP 0's, a fixed selection's rate doubles at frame 8.
    #[test]
    fn each_gop_is_read_from_its_own_frames() {
        let mut r = rows(2);
        for row in r.iter_mut().skip(8 * 4) {
            row.1 *= 2;
        }
        let trace = Layered::load(&r).expect("valid");
        let mut s = SvcFrames::new(
            Arc::new(trace),
            false,
            Selection {
                s_max: 1,
                t_max: 3,
                fgs: 1.0,
            },
        );
        let out = play(&mut s, 9, 0.0);
        assert!(out[..8].iter().all(|&(b, _, _)| b == 4500), "{out:?}");
        assert_eq!(out[8].0, 9000);
        assert!((s.rate_bps() - 9000.0 * 8.0 * 30.0).abs() < 1.0);
    }
}
