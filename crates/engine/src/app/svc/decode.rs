//! Which received SVC NAL units a decoder can use (the receiver's
//! decodability accounting).
//!
//! Dependencies of the dyadic GOP of 8 (`trace.rs`), our model of the
//! JSVM prediction structure the study used:
//! - Temporal: the key frame of a GOP (position 0, level 0) is predicted
//!   from the previous key frame, except every `idr_gops`-th GOP's, an IDR
//!   picture (the first frame is one; a layer left out can be taken up
//!   again only from an IDR picture, as SVC switching points require); the
//!   other frames from their two neighbours one level up: position 4 from 0
//!   and 8 (the next key frame), 2 from 0 and 4, 6 from 4 and 8, an odd
//!   position p from p - 1 and p + 1. References are base-quality (q = 0)
//!   NAL units of the same spatial layer.
//! - Spatial: a spatial-1 NAL unit needs the spatial-0, q = 0 NAL unit of
//!   its frame.
//! - Quality: an FGS (q = 1) NAL unit needs the q = 0 NAL unit of its
//!   frame and layer; nothing is predicted from FGS data, and a cut or
//!   partly received FGS unit counts the bytes of its first fragments up
//!   to the first one missing.
//!
//! A q = 0 NAL unit counts only when all its fragments arrived in time and
//! all it depends on counts.

use super::trace::GOP;
use std::collections::HashMap;

/// A NAL unit's identity: (frame, spatial, quality).
pub type NalId = (u32, u8, u8);

/// The frames a frame's pictures are predicted from, with an IDR picture
/// every `idr_gops` GOPs.
pub fn references(frame: u32, idr_gops: u32) -> Vec<u32> {
    let (gop_start, pos) = (frame - frame % GOP, frame % GOP);
    match pos {
        0 if (frame / GOP) % idr_gops.max(1) == 0 => vec![],
        0 => vec![frame - GOP],
        4 => vec![gop_start, gop_start + 8],
        2 => vec![gop_start, gop_start + 4],
        6 => vec![gop_start + 4, gop_start + 8],
        _ => vec![frame - 1, frame + 1],
    }
}

/// What the receiver got of each NAL unit: the bytes usable (complete for
/// q = 0, a prefix for q = 1) and whether a q = 0 unit is complete.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    pub bytes: u32,
    pub complete: bool,
}

/// Decodable bytes per NAL unit, given what arrived. A frame whose
/// references lie beyond the received stream's last frame (the end of a
/// run) is judged without them.
pub fn decodable(
    got: &HashMap<NalId, Received>,
    last_frame: u32,
    idr_gops: u32,
) -> HashMap<NalId, u32> {
    let mut ok: HashMap<NalId, bool> = HashMap::new();
    let mut frames: Vec<u32> = got.keys().map(|k| k.0).collect();
    frames.sort_unstable();
    frames.dedup();
    // Resolve q = 0 units in an order where references come first: key
    // frames by frame number, then levels 1, 2, 3.
    let level_order = |f: &u32| (super::trace::temporal_level(*f), *f);
    frames.sort_by_key(level_order);
    for &f in &frames {
        for s in 0..super::trace::SPATIAL as u8 {
            let me = got.get(&(f, s, 0)).is_some_and(|r| r.complete);
            let spatial = s == 0 || ok.get(&(f, 0, 0)).copied().unwrap_or(false);
            let temporal = references(f, idr_gops)
                .into_iter()
                .filter(|&r| r <= last_frame)
                .all(|r| ok.get(&(r, s, 0)).copied().unwrap_or(false));
            ok.insert((f, s, 0), me && spatial && temporal);
        }
    }
    (got.iter())
        .map(|(&(f, s, q), r)| {
            let base = ok.get(&(f, s, 0)).copied().unwrap_or(false);
            let bytes = match q {
                0 if base => r.bytes,
                1 if base => r.bytes,
                _ => 0,
            };
            ((f, s, q), bytes)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_of_the_dyadic_gop() {
        assert_eq!(references(0, 4), Vec::<u32>::new(), "the IDR picture");
        assert_eq!(references(8, 4), vec![0]);
        assert_eq!(
            references(32, 4),
            Vec::<u32>::new(),
            "every fourth GOP an IDR"
        );
        assert_eq!(references(40, 4), vec![32]);
        assert_eq!(references(12, 4), vec![8, 16]);
        assert_eq!(references(10, 4), vec![8, 12]);
        assert_eq!(references(14, 4), vec![12, 16]);
        assert_eq!(references(13, 4), vec![12, 14]);
    }

    fn full(bytes: u32) -> Received {
        Received {
            bytes,
            complete: true,
        }
    }

    /// Two GOPs and the next key frame, every unit 100 bytes.
    fn stream() -> HashMap<NalId, Received> {
        let mut m = HashMap::new();
        for f in 0..=16 {
            for s in 0..2 {
                for q in 0..2 {
                    m.insert((f, s, q), full(100));
                }
            }
        }
        m
    }

    #[test]
    fn everything_received_is_decodable() {
        let d = decodable(&stream(), 16, 100);
        assert_eq!(d.values().sum::<u32>(), 17 * 4 * 100);
    }

    #[test]
    fn a_lost_key_frame_takes_its_dependants_with_it() {
        let mut m = stream();
        m.get_mut(&(8, 0, 0)).unwrap().complete = false;
        let d = decodable(&m, 16, 100);
        // Frame 8's base is lost: its spatial-1 unit, the next key frame
        // (16), and every frame predicted from them fail. In hierarchical
        // prediction that is every frame of both GOPs but the first key
        // frame (1-7 reach 8 through position 4).
        assert_eq!(
            d[&(0, 0, 0)] + d[&(0, 1, 0)] + d[&(0, 0, 1)] + d[&(0, 1, 1)],
            400
        );
        for f in 1..=16 {
            assert_eq!(
                d[&(f, 0, 0)] + d[&(f, 1, 0)] + d[&(f, 0, 1)] + d[&(f, 1, 1)],
                0,
                "frame {f}"
            );
        }
    }

    #[test]
    fn enhancement_losses_do_not_spread_to_the_base() {
        let mut m = stream();
        m.get_mut(&(4, 1, 0)).unwrap().complete = false; // spatial 1 of frame 4
        m.insert(
            (5, 0, 1),
            Received {
                bytes: 40,
                complete: false,
            },
        ); // FGS prefix
        let d = decodable(&m, 16, 100);
        // The spatial-1 layer of 4 and of every frame predicted through
        // it (1-7) fails; every base unit counts, and the key frames' (0,
        // 8, 16) spatial-1 units too.
        for f in 0..=16 {
            assert_eq!(d[&(f, 0, 0)], 100, "base of frame {f}");
        }
        for f in 1..=7 {
            assert_eq!(d[&(f, 1, 0)], 0, "spatial 1 of frame {f}");
        }
        for f in [0, 8, 9, 16] {
            assert_eq!(d[&(f, 1, 0)], 100, "spatial 1 of frame {f}");
        }
        assert_eq!(d[&(5, 0, 1)], 40, "the FGS prefix counts");
    }

    #[test]
    fn a_layer_taken_up_again_decodes_from_the_next_idr() {
        let mut m = stream();
        // Spatial 1 left out of the first GOP (frames 0-7); IDR every
        // second GOP: frames 8-15 still need frame 0's spatial 1, frame 16
        // is an IDR picture.
        m.retain(|k, _| !(k.0 < 8 && k.1 == 1));
        let d = decodable(&m, 16, 2);
        assert_eq!(d[&(8, 1, 0)], 0);
        assert_eq!(d[&(16, 1, 0)], 100);
    }

    #[test]
    fn frames_past_the_end_do_not_block_the_last_gop() {
        let mut m = stream();
        m.retain(|k, _| k.0 <= 12);
        // Frame 12 needs 16, which the run never reached.
        let d = decodable(&m, 12, 100);
        assert_eq!(d[&(12, 0, 0)], 100);
    }
}
