//! What each of the five scales sends: MM_APP's frame interval, MPEG_APP's
//! frames of a GOP. Plain functions of (scale, frame), shared by the sender
//! and by the per-scale rate report.

use crate::net::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::sim::SimTime;

/// Scales 0..=MAX_SCALE.
pub const MAX_SCALE: u8 = 4;
pub const SCALES: usize = MAX_SCALE as usize + 1;
const HEADERS: u32 = IPV4_HEADER_BYTES + UDP_HEADER_BYTES;

/// An MPEG frame type (its value indexes per-type tables: I, P, B).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameType {
    I = 0,
    P = 1,
    B = 2,
}

impl FrameType {
    pub fn parse(c: char) -> Option<Self> {
        match c {
            'I' => Some(FrameType::I),
            'P' => Some(FrameType::P),
            'B' => Some(FrameType::B),
            _ => None,
        }
    }
}

/// One trace frame with its place in its GOP: how many P and B frames
/// came before it since the GOP's I frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: FrameType,
    pub bytes: u32,
    pub p_before: u32,
    pub b_before: u32,
}

/// Frames in trace order, each placed in its GOP (a GOP starts at an I).
pub fn place_in_gops(frames: &[(FrameType, u32)]) -> Vec<Frame> {
    let (mut p, mut b) = (0, 0);
    let mut out = Vec::with_capacity(frames.len());
    for &(kind, bytes) in frames {
        if kind == FrameType::I {
            (p, b) = (0, 0);
        }
        out.push(Frame {
            kind,
            bytes,
            p_before: p,
            b_before: b,
        });
        match kind {
            FrameType::P => p += 1,
            FrameType::B => b += 1,
            FrameType::I => {}
        }
    }
    out
}

/// MPEG_APP's policy (the study's, for both GOP patterns): 4 all frames;
/// 3 every second B dropped (the first of each pair: I . B P . B P . B);
/// 2 I and P; 1 I and the GOP's first P; 0 I only.
pub fn keeps(scale: u8, f: &Frame) -> bool {
    match f.kind {
        FrameType::I => true,
        FrameType::P => scale >= 2 || (scale == 1 && f.p_before == 0),
        FrameType::B => scale >= 4 || (scale == 3 && f.b_before % 2 == 1),
    }
}

/// Packets of a frame of `bytes` payload with at most `max_packet_bytes`
/// on the wire each: (payload bytes per packet).
pub fn fragments(bytes: u32, max_packet_bytes: u32) -> Vec<u32> {
    let per = max_packet_bytes - HEADERS;
    let n = bytes.div_ceil(per).max(1);
    (0..n).map(|i| (bytes - i * per).min(per)).collect()
}

/// A scale's average rates over the trace, (payload, on the wire) in bit/s.
pub fn mpeg_rates(frames: &[Frame], fps: f64, max_packet_bytes: u32) -> [(f64, f64); SCALES] {
    let secs = frames.len() as f64 / fps;
    std::array::from_fn(|s| {
        let kept = frames.iter().filter(|f| keeps(s as u8, f));
        let (mut payload, mut wire) = (0u64, 0u64);
        for f in kept {
            let frags = fragments(f.bytes, max_packet_bytes);
            payload += f.bytes as u64;
            wire += f.bytes as u64 + (frags.len() as u32 * HEADERS) as u64;
        }
        (payload as f64 * 8.0 / secs, wire as f64 * 8.0 / secs)
    })
}

/// The longest time between two frames sent at any scale (the trace read
/// as a loop), in frame slots.
pub fn longest_gap_slots(frames: &[Frame]) -> usize {
    let n = frames.len();
    let mut longest = 0;
    for s in 0..=MAX_SCALE {
        let kept: Vec<usize> = (0..n).filter(|&i| keeps(s, &frames[i])).collect();
        let Some(&first) = kept.first() else {
            return n; // a scale that sends nothing: one loop of the trace
        };
        for w in kept.windows(2) {
            longest = longest.max(w[1] - w[0]);
        }
        longest = longest.max(first + n - kept[kept.len() - 1]);
    }
    longest
}

/// MM_APP: time between frames of `packet_bytes` at a scale's rate.
pub fn mm_interval(rate_bps: f64, packet_bytes: u32) -> SimTime {
    SimTime::from_secs_f64(packet_bytes as f64 * 8.0 / rate_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gop(pattern: &str, i: u32, p: u32, b: u32) -> Vec<Frame> {
        let frames: Vec<(FrameType, u32)> = (pattern.chars())
            .map(|c| {
                let t = FrameType::parse(c).unwrap();
                let size = match t {
                    FrameType::I => i,
                    FrameType::P => p,
                    FrameType::B => b,
                };
                (t, size)
            })
            .collect();
        place_in_gops(&frames)
    }

    fn kept(pattern: &str, scale: u8) -> String {
        (gop(pattern, 1, 1, 1).iter())
            .zip(pattern.chars())
            .map(|(f, c)| if keeps(scale, f) { c } else { '.' })
            .collect()
    }

    #[test]
    fn the_studys_policies_for_both_gop_patterns() {
        let p1 = "IBBPBBPBB";
        let want1 = ["I........", "I..P.....", "I..P..P..", "I.BP.BP.B", p1];
        for (s, w) in want1.iter().enumerate() {
            assert_eq!(kept(p1, s as u8), *w, "pattern 1, scale {s}");
        }
        let p2 = "IBBPBBPBBPBB";
        let want2 = [
            "I...........",
            "I..P........",
            "I..P..P..P..",
            "I.BP.BP.BP.B",
            p2,
        ];
        for (s, w) in want2.iter().enumerate() {
            assert_eq!(kept(p2, s as u8), *w, "pattern 2, scale {s}");
        }
    }

    /// The study's trace: 30 frames/s, IBBPBBPBB, I 11000, P 8000, B 2000
    /// bytes. By hand: per 0.3 s GOP scale 0 sends 11000 B (293.3 kbit/s),
    /// 1: 19000 (506.7), 2: 27000 (720), 3: 33000 (880), 4: 39000 (1040).
    #[test]
    fn the_studys_trace_rates_by_hand() {
        let rates = mpeg_rates(&gop("IBBPBBPBB", 11000, 8000, 2000), 30.0, 1500);
        let want = [293_333.3, 506_666.7, 720_000.0, 880_000.0, 1_040_000.0];
        for (s, w) in want.iter().enumerate() {
            assert!((rates[s].0 - w).abs() < 1.0, "scale {s}: {:?}", rates[s]);
        }
        // On the wire: an I frame is 8 packets (7 x 1472 + 696), a P 6, a
        // B 2, each with 28 bytes of headers: scale 0 adds 8 x 28 bytes per
        // GOP, 5973 bit/s.
        assert!((rates[0].1 - rates[0].0 - 8.0 * 28.0 * 8.0 / 0.3).abs() < 1e-6);
    }

    #[test]
    fn fragments_fill_packets_of_at_most_1500_bytes() {
        assert_eq!(
            fragments(11000, 1500),
            vec![1472, 1472, 1472, 1472, 1472, 1472, 1472, 696]
        );
        assert_eq!(fragments(1472, 1500), vec![1472]);
        assert_eq!(fragments(0, 1500), vec![0]);
    }

    #[test]
    fn the_longest_interval_is_a_gop_at_scale_0() {
        assert_eq!(longest_gap_slots(&gop("IBBPBBPBB", 1, 1, 1)), 9);
        assert_eq!(longest_gap_slots(&gop("IBBPBBPBBPBB", 1, 1, 1)), 12);
        assert_eq!(mm_interval(300e3, 1500), SimTime::from_millis(40));
    }
}
