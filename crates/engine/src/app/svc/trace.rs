//! Scalable video (SVC) traces: NAL units with their spatial, temporal and
//! quality layers, a synthetic generator with a documented model, and the
//! per-GOP layer selection.
//!
//! ## The synthetic model
//! The SVC study's stream (JSVM 5.2, 2 spatial x 4 temporal x 2 quality
//! layers, one FGS quality enhancement) is not available; the generator
//! makes one of the same structure:
//! - `fps` frames per second (30) in dyadic GOPs of 8 frames: the frame at
//!   GOP position 0 is temporal level 0, position 4 level 1, positions 2
//!   and 6 level 2, the odd positions level 3.
//! - Every frame has one NAL unit per (spatial s, quality q) layer: s = 0
//!   (the base resolution) and 1, q = 0 (base quality) and 1 (the FGS
//!   enhancement, which may be cut at any byte).
//! - A layer's bytes per GOP are its mean rate times the GOP duration; they
//!   are shared among the GOP's frames by temporal level (`level_share`:
//!   37.5% to the level-0 frame, 22.5% to level 1, 13.125% to each level-2
//!   frame and 3.4375% to each level-3 frame, as key frames are larger), and
//!   each NAL unit's size is log-normal around that mean with coefficient
//!   of variation `cv` (0.3).
//! - Default mean rates: 160 kbit/s for (s0, q0), 160 for (s0, q1), 400
//!   for (s1, q0), 400 for (s1, q1): 1.12 Mbit/s in all, 160 kbit/s of base
//!   layer.
//!
//! ## Layer selection (per GOP, from the transport's target rate)
//! The operating points are (s_max, t_max): every q = 0 NAL unit with s <=
//! s_max and t <= t_max. At each GOP start the selector knows the GOP's
//! NAL units (the study's selector also looks ahead) and picks the point
//! with the most bytes that fits the budget (the target rate over the GOP,
//! less what still waits in the send buffer; on a tie the higher spatial
//! layer); the rest of the budget goes to the FGS layer: every
//! q = 1 NAL unit of the chosen point is cut to the same fraction of its
//! bytes. Even the lowest point is sent when the budget is below it (the
//! base layer is never skipped). Our reading of "similar to Nguyen and
//! Ostermann 2006", which the study does not give in full.

use crate::sim::{SimRng, SimTime};
use rand_distr::{Distribution, LogNormal};

/// One NAL unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nal {
    /// Frame number (decoding order) and its presentation time.
    pub frame: u32,
    pub time: SimTime,
    pub bytes: u32,
    pub s: u8,
    pub t: u8,
    pub q: u8,
}

pub const GOP: u32 = 8;
pub const SPATIAL: usize = 2;
pub const TEMPORAL: usize = 4;

/// Temporal level of GOP position `pos` in a dyadic GOP of 8.
pub fn temporal_level(pos: u32) -> u8 {
    match pos % GOP {
        0 => 0,
        4 => 1,
        2 | 6 => 2,
        _ => 3,
    }
}

/// The share of a layer's GOP bytes one frame of each level gets.
pub const LEVEL_SHARE: [f64; TEMPORAL] = [0.375, 0.225, 0.131_25, 0.034_375];

#[derive(Clone, Debug)]
pub struct SvcModel {
    pub fps: f64,
    /// Mean rate of each (spatial, quality) layer, bit/s.
    pub layer_bps: [[f64; 2]; SPATIAL],
    pub cv: f64,
}

impl Default for SvcModel {
    fn default() -> Self {
        SvcModel {
            fps: 30.0,
            layer_bps: [[160e3, 160e3], [400e3, 400e3]],
            cv: 0.3,
        }
    }
}

impl SvcModel {
    pub fn gop_seconds(&self) -> f64 {
        GOP as f64 / self.fps
    }

    /// `frames` frames of NAL units, in decoding order (one per layer per
    /// frame, base layers first).
    pub fn generate(&self, frames: u32, rng: &mut SimRng) -> Vec<Nal> {
        let mut out = Vec::with_capacity(frames as usize * 4);
        self.generate_into(0, frames, rng, &mut out);
        out
    }

    /// Frames `from..to` appended to `out`; successive ranges draw the same
    /// sizes as one call over their union.
    pub fn generate_into(&self, from: u32, to: u32, rng: &mut SimRng, out: &mut Vec<Nal>) {
        let sigma = (1.0 + self.cv * self.cv).ln().sqrt();
        for f in from..to {
            let t = temporal_level(f);
            let time = SimTime::from_secs_f64(f as f64 / self.fps);
            for s in 0..SPATIAL {
                for q in 0..2 {
                    let gop_bytes = self.layer_bps[s][q] / 8.0 * self.gop_seconds();
                    let mean = gop_bytes * LEVEL_SHARE[t as usize];
                    // A log-normal of this mean and coefficient of variation.
                    let mu = mean.ln() - sigma * sigma / 2.0;
                    let size = LogNormal::new(mu, sigma).expect("finite").sample(rng);
                    out.push(Nal {
                        frame: f,
                        time,
                        bytes: size.round().max(1.0) as u32,
                        s: s as u8,
                        t,
                        q: q as u8,
                    });
                }
            }
        }
    }
}

/// Where a source's NAL units come from: a trace (all of it, as given),
/// or the model, one GOP at a time as the source reaches it, so that a
/// source holds one GOP whatever the length of the run.
pub enum NalFeed {
    Trace(Vec<Nal>),
    Model {
        model: SvcModel,
        rng: SimRng,
        /// Frames in all; the next one to generate.
        frames: u32,
        next: u32,
    },
}

impl NalFeed {
    /// The units given at the start (the whole trace, or nothing yet).
    pub fn initial(&mut self) -> Vec<Nal> {
        match self {
            NalFeed::Trace(v) => std::mem::take(v),
            NalFeed::Model { .. } => Vec::new(),
        }
    }

    /// Replaces `units` with the next GOP's (the model only); false when
    /// there is none.
    pub fn next_gop(&mut self, units: &mut Vec<Nal>) -> bool {
        let NalFeed::Model {
            model,
            rng,
            frames,
            next,
        } = self
        else {
            return false;
        };
        if *next >= *frames {
            return false;
        }
        let end = next.saturating_add(GOP).min(*frames);
        units.clear();
        model.generate_into(*next, end, rng, units);
        *next = end;
        true
    }
}

/// An operating point and the FGS cut.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selection {
    pub s_max: u8,
    pub t_max: u8,
    /// Fraction of each FGS (q = 1) NAL unit of the point that is sent.
    pub fgs: f64,
}

impl Selection {
    /// Bytes of `n` this selection sends (0 if the layer is left out).
    pub fn bytes_of(&self, n: &Nal) -> u32 {
        if n.s > self.s_max || n.t > self.t_max {
            return 0;
        }
        if n.q == 0 {
            n.bytes
        } else {
            (n.bytes as f64 * self.fgs).floor() as u32
        }
    }
}

/// Picks the operating point and FGS cut for one GOP's NAL units within
/// `budget` bytes, with spatial layers up to `s_cap` (a spatial layer can
/// be taken up only at an IDR picture; the source caps it in between).
pub fn select(gop: &[Nal], budget: f64, s_cap: u8) -> Selection {
    let base = |s_max: u8, t_max: u8, q: u8| -> f64 {
        (gop.iter())
            .filter(|n| n.q == q && n.s <= s_max && n.t <= t_max)
            .map(|n| n.bytes as f64)
            .sum()
    };
    let mut best = (0u8, 0u8);
    let mut best_bytes = -1.0;
    for s in 0..=(s_cap as usize).min(SPATIAL - 1) as u8 {
        for t in 0..TEMPORAL as u8 {
            let b = base(s, t, 0);
            if b <= budget && b >= best_bytes {
                (best, best_bytes) = ((s, t), b);
            }
        }
    }
    let (s_max, t_max) = best;
    let left = budget - base(s_max, t_max, 0);
    let fgs_total = base(s_max, t_max, 1);
    let fgs = if fgs_total > 0.0 {
        (left / fgs_total).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Selection { s_max, t_max, fgs }
}

/// One NAL unit of a trace as a scenario gives it: time (s), bytes,
/// spatial, temporal, quality.
pub type NalRow = (f64, u32, u8, u8, u8);

/// Most NAL units a trace may hold.
pub const MAX_NAL_UNITS: usize = 10_000_000;

/// The NAL units of a trace, in decoding order; frames are numbered by
/// distinct times. Every problem names the unit (from 1).
pub fn nals_from_rows(rows: &[NalRow]) -> Result<Vec<Nal>, String> {
    if rows.is_empty() {
        return Err("the trace holds no NAL units".into());
    }
    if rows.len() > MAX_NAL_UNITS {
        return Err(format!(
            "the trace holds {} NAL units: at most {MAX_NAL_UNITS}",
            rows.len()
        ));
    }
    let mut out = Vec::with_capacity(rows.len());
    let mut frame: Option<(u32, u64)> = None;
    for (i, &(time, bytes, s, t, q)) in rows.iter().enumerate() {
        if !(time.is_finite() && (0.0..=1e6).contains(&time))
            || s as usize >= SPATIAL
            || t as usize >= TEMPORAL
            || q > 1
        {
            return Err(format!(
                "unit {}: time must be 0..=1e6 s, spatial 0-1, temporal 0-3, quality 0-1",
                i + 1
            ));
        }
        let ns = SimTime::from_secs_f64(time).as_nanos();
        let n = match frame {
            Some((k, t0)) if t0 == ns => k,
            Some((k, t0)) if ns > t0 => k + 1,
            None => 0,
            Some(_) => return Err(format!("unit {}: times must not go back", i + 1)),
        };
        frame = Some((n, ns));
        out.push(Nal {
            frame: n,
            time: SimTime::from_nanos(ns),
            bytes,
            s,
            t,
            q,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    #[test]
    fn temporal_levels_of_a_dyadic_gop_of_8() {
        let levels: Vec<u8> = (0..9).map(temporal_level).collect();
        assert_eq!(levels, vec![0, 3, 2, 3, 1, 3, 2, 3, 0]);
        // The level shares add up to one GOP's bytes.
        let total = LEVEL_SHARE[0] + LEVEL_SHARE[1] + 2.0 * LEVEL_SHARE[2] + 4.0 * LEVEL_SHARE[3];
        assert!((total - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_generator_gives_each_layer_its_mean_rate() {
        let m = SvcModel::default();
        let mut rng = RngStreams::new(1, 0).stream("svc");
        let frames = 30 * 600; // 10 minutes
        let nals = m.generate(frames, &mut rng);
        assert_eq!(nals.len(), frames as usize * 4);
        let secs = frames as f64 / m.fps;
        for s in 0..2u8 {
            for q in 0..2u8 {
                let bytes: f64 = (nals.iter())
                    .filter(|n| n.s == s && n.q == q)
                    .map(|n| n.bytes as f64)
                    .sum();
                let want = m.layer_bps[s as usize][q as usize];
                assert!(
                    (bytes * 8.0 / secs / want - 1.0).abs() < 0.01,
                    "layer ({s}, {q})"
                );
            }
        }
        // Level-0 frames average 0.375 of a layer's GOP bytes.
        let t0: Vec<f64> = (nals.iter())
            .filter(|n| n.s == 0 && n.q == 0 && n.t == 0)
            .map(|n| n.bytes as f64)
            .collect();
        let mean = t0.iter().sum::<f64>() / t0.len() as f64;
        assert!((mean / (160e3 / 8.0 * 8.0 / 30.0 * 0.375) - 1.0).abs() < 0.03);
    }

    fn gop() -> Vec<Nal> {
        // A GOP with round sizes: q0 NALs 100 bytes (s0) and 200 (s1), q1
        // NALs 50 (s0) and 100 (s1), for every frame.
        (0..8)
            .flat_map(|f| {
                [(0u8, 0u8, 100), (0, 1, 50), (1, 0, 200), (1, 1, 100)].map(move |(s, q, b)| Nal {
                    frame: f,
                    time: SimTime::ZERO,
                    bytes: b,
                    s,
                    t: temporal_level(f),
                    q,
                })
            })
            .collect()
    }

    #[test]
    fn selection_takes_the_highest_point_that_fits_then_cuts_fgs() {
        let g = gop();
        // s0 points: t0 100, t1 200, t2 400, t3 800; s1: t0 300, t1 600,
        // t2 1200, t3 2400 (q0 bytes). At 450, (s0, t2) with 400 bytes
        // beats (s1, t0) with 300.
        assert_eq!(
            select(&g, 50.0, 1),
            Selection {
                s_max: 0,
                t_max: 0,
                fgs: 0.0
            },
            "never below the base"
        );
        let sel = select(&g, 450.0, 1);
        assert_eq!((sel.s_max, sel.t_max), (0, 2));
        // 50 bytes left over the point's 4 FGS NALs of 50: a quarter each.
        assert!((sel.fgs - 0.25).abs() < 1e-12);
        let sent: u32 = g.iter().map(|n| sel.bytes_of(n)).sum();
        assert_eq!(sent, 400 + 4 * 12, "each 50-byte FGS NAL cut to 12");
        let sel = select(&g, 1300.0, 1);
        assert_eq!((sel.s_max, sel.t_max), (1, 2));
        assert!(
            (sel.fgs - 100.0 / 600.0).abs() < 1e-12,
            "100 left over 600 FGS bytes"
        );
        let all = select(&g, 1e9, 1);
        assert_eq!((all.s_max, all.t_max, all.fgs), (1, 3, 1.0));
        // Capped at spatial 0: the best s0 point and all its FGS.
        let capped = select(&g, 1e9, 0);
        assert_eq!((capped.s_max, capped.t_max, capped.fgs), (0, 3, 1.0));
    }

    #[test]
    fn traces_load_and_bad_units_are_named() {
        let rows = [
            (0.0, 1000, 0, 0, 0),
            (0.0, 500, 0, 0, 1),
            (0.0333, 300, 0, 3, 0),
        ];
        let nals = nals_from_rows(&rows).expect("valid");
        assert_eq!(nals.len(), 3);
        assert_eq!((nals[0].frame, nals[2].frame, nals[2].t), (0, 1, 3));
        assert!(nals_from_rows(&[(0.0, 1000, 2, 0, 0)])
            .unwrap_err()
            .contains("unit 1: time must be 0..=1e6 s, spatial 0-1"));
        assert!(nals_from_rows(&[(-1.0, 1000, 0, 0, 0)]).is_err());
        assert!(nals_from_rows(&[(f64::NAN, 1000, 0, 0, 0)]).is_err());
        assert!(nals_from_rows(&[(1.0, 10, 0, 0, 0), (0.5, 10, 0, 0, 0)])
            .unwrap_err()
            .contains("unit 2: times must not go back"));
        assert!(nals_from_rows(&[]).is_err());
    }
}
