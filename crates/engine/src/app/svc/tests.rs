//! The SVC sender and receiver driven alone, event by event, with
//! hand-worked figures: layer choice against the backlog, packetisation,
//! pacing, the IDR rule, the send-buffer bound, FEC blocks; reassembly
//! against the playout deadline, FEC recovery and what counts as
//! decodable.

use super::fec::FecCode;
use super::sink::SvcSink;
use super::source::{FecSetup, Packetiser, RepairInfo, SvcInfo, SvcSource};
use super::trace::{temporal_level, Nal, NalFeed, GOP};
use crate::app::testing::{drive, value, Script, ScriptCc};
use crate::app::{Action, App, PacketTemplate};
use crate::net::{Dest, Packet, Payload};
use crate::proto::cc::{FeedbackReceiver, Stamp};
use crate::sim::SimTime;
use std::sync::{Arc, Mutex};

const FPS: f64 = 20.0; // frames 50 ms apart, GOPs of 400 ms
const HEADERS: u32 = 40;
const BASE: u8 = 10;
const ENH: u8 = 12;

fn ms(x: f64) -> SimTime {
    SimTime::from_secs_f64(x / 1000.0)
}

/// Every frame: (s0, q0) 1000 bytes, (s0, q1) 500, (s1, q0) 2000, (s1,
/// q1) 1000. Per GOP the q0 bytes of the points are s0: t0 1000, t1 2000,
/// t2 4000, t3 8000; s1: t0 3000, t1 6000, t2 12000, t3 24000.
fn trace(gops: u32) -> Vec<Nal> {
    (0..gops * GOP)
        .flat_map(|f| {
            [(0u8, 0u8, 1000), (0, 1, 500), (1, 0, 2000), (1, 1, 1000)].map(|(s, q, bytes)| Nal {
                frame: f,
                time: SimTime::from_secs_f64(f as f64 / FPS),
                bytes,
                s,
                t: temporal_level(f),
                q,
            })
        })
        .collect()
}

fn source(
    rate_bps: f64,
    gops: u32,
    payload: u32,
    idr_gops: u32,
) -> (SvcSource, Arc<Mutex<Script>>) {
    source_of(
        rate_bps,
        trace(gops),
        payload,
        idr_gops,
        SimTime::from_secs(100),
    )
}

fn source_of(
    rate_bps: f64,
    nals: Vec<Nal>,
    payload: u32,
    idr_gops: u32,
    stop: SimTime,
) -> (SvcSource, Arc<Mutex<Script>>) {
    let (cc, script) = ScriptCc::boxed(rate_bps);
    let src = SvcSource::new(
        PacketTemplate::session_udp(7, Dest::Node(1), 5004, payload),
        cc,
        Packetiser {
            payload,
            headers: HEADERS,
            base_dscp: BASE,
            enhancement_dscp: ENH,
        },
        NalFeed::Trace(nals),
        FPS,
        idr_gops,
        stop,
    );
    (src, script)
}

/// The source's operating point per GOP: 4 s + t, plus the FGS share.
fn operating_points(src: &SvcSource, end: SimTime) -> Vec<(SimTime, f64)> {
    let st = src.stats(end).expect("started");
    let s = st.series.into_iter().find(|s| s.0 == "operating_point");
    s.expect("a series").1
}

fn info(p: &Packet) -> SvcInfo {
    *p.app.get::<SvcInfo>().expect("a media packet")
}

/// 100 kbit/s: a GOP's budget is 5000 bytes. GOP 0 (empty buffer) takes
/// (s0, t2), 4000 bytes of base, and half of each FGS unit (1000 left over
/// 4 x 500): frames 0, 2, 4, 6 send a 1040-byte base packet (83.2 ms at
/// 100 kbit/s) and a 290-byte FGS packet (23.2 ms). The packets leave at
/// 0, 83.2, 106.4, 189.6, 212.8, 296.0, 319.2 and 402.4 ms, so at 400 ms
/// the last FGS packet (290 bytes) still waits: GOP 1's budget is 4710,
/// (s0, t2) again with 710 over 2000 FGS bytes, 177 bytes per FGS unit.
#[test]
fn the_source_chooses_each_gop_within_the_rate_less_the_backlog() {
    let (mut src, script) = source(100e3, 2, 1460, 4);
    let sent = drive(&mut src, ms(550.0), |_| {});
    let first: Vec<(f64, u32, u32, u8)> = (sent.iter().take(8))
        .map(|(t, p)| (t.as_secs_f64() * 1e3, p.size_bytes, info(p).frame, p.dscp))
        .collect();
    let want = [
        (0.0, 1040, 0, BASE),
        (83.2, 290, 0, ENH),
        (106.4, 1040, 2, BASE),
        (189.6, 290, 2, ENH),
        (212.8, 1040, 4, BASE),
        (296.0, 290, 4, ENH),
        (319.2, 1040, 6, BASE),
        (402.4, 290, 6, ENH),
    ];
    for (got, want) in first.iter().zip(want) {
        assert!((got.0 - want.0).abs() < 1e-3, "{first:?}");
        assert_eq!((got.1, got.2, got.3), (want.1, want.2, want.3), "{first:?}");
    }
    // GOP 1: frame 8's base, then its FGS unit cut to 177 bytes.
    let (t, p) = &sent[8];
    assert_eq!((info(p).frame, p.size_bytes), (8, 1040));
    assert!((t.as_secs_f64() * 1e3 - 425.6).abs() < 1e-3);
    assert_eq!(sent[9].1.size_bytes, 177 + HEADERS);
    assert_eq!(info(&sent[9].1).nal_bytes, 177);
    // Every packet is dated by its frame, and stamped in sending order.
    for (k, (_, p)) in sent.iter().enumerate() {
        let i = info(p);
        assert_eq!(p.created_at, SimTime::from_secs_f64(i.frame as f64 / FPS));
        assert_eq!(
            (i.frame_time, i.stamp.seq, p.seq),
            (p.created_at, k as u64, k as u64)
        );
    }
    let groups = script.lock().unwrap().groups.clone();
    assert_eq!(groups, vec![(ms(0.0), ms(400.0)), (ms(400.0), ms(400.0))]);
    // By 550 ms: GOP 0's four frames, and frames 8 and 10 of GOP 1.
    assert_eq!(src.offered, [[4000 + 2000, 4 * 250 + 2 * 177], [0, 0]]);
    let points = operating_points(&src, ms(550.0));
    assert_eq!(points.len(), 2);
    assert_eq!(points[0], (ms(0.0), 2.5));
    assert_eq!(points[1].0, ms(400.0));
    assert!((points[1].1 - 2.355).abs() < 1e-12, "{points:?}");
}

/// Feedback reaches the controller and lets the buffer out at the time
/// it gives; the controller's timer is asked for at its deadline and
/// passed on. At 100 kbit/s frame 0's base packet leaves at 0 and its FGS
/// packet would wait until 83.2 ms: feedback at 10 ms releasing at once
/// sends it then.
#[test]
fn feedback_and_the_controllers_timer_reach_the_controller() {
    let (mut src, script) = source(100e3, 1, 1460, 4);
    script.lock().unwrap().deadline = Some(ms(30.0));
    let mut out = Vec::new();
    src.on_start(SimTime::ZERO, &mut out);
    let timers = |out: &[Action]| -> Vec<(SimTime, u64)> {
        (out.iter())
            .filter_map(|a| match a {
                Action::Timer { at, token } => Some((*at, *token)),
                _ => None,
            })
            .collect()
    };
    let sends = |out: &[Action]| out.iter().filter(|a| matches!(a, Action::Send(_))).count();
    let mut t = timers(&out);
    t.sort();
    // The controller's timer (token 1), the release of frame 1 (token 2)
    // and the next packet (token 0).
    assert_eq!(t, vec![(ms(30.0), 1), (ms(50.0), 2), (ms(83.2), 0)]);
    assert_eq!(sends(&out), 1);
    out.clear();
    script.lock().unwrap().release_at = Some(ms(10.0));
    src.on_packet(ms(10.0), &sink_feedback(), &mut out);
    assert_eq!(script.lock().unwrap().feedback, vec![ms(10.0)]);
    assert_eq!(sends(&out), 1, "the FGS packet, released by the feedback");
    out.clear();
    script.lock().unwrap().deadline = None;
    src.on_timer(ms(30.0), 1, &mut out);
    assert_eq!(script.lock().unwrap().timers, vec![ms(30.0)]);
    assert!(out.is_empty(), "nothing waits, and no deadline");
}

fn sink_feedback() -> Packet {
    let mut p = PacketTemplate::session_udp(8, Dest::Node(0), 5005, 16).make(0);
    p.app = Payload::new(blank());
    p
}

/// A NAL unit larger than a packet's payload: full fragments, then the
/// rest, each with its index, all at the unit's DSCP.
#[test]
fn the_source_fragments_units_to_the_payload_size() {
    // 400 kbit/s: budget 20000, (s1, t2) 12000 with 8000 over 6000 FGS
    // bytes: every FGS unit whole. Payload 600: a 2000-byte unit is 600,
    // 600, 600, 200; a 1000-byte unit 600, 400; a 500-byte one 500.
    let frame0 = trace(1)[..4].to_vec();
    let (mut src, _) = source_of(400e3, frame0, 600, 4, SimTime::from_secs(100));
    let sent = drive(&mut src, SimTime::from_secs(1), |_| {});
    let frame0: Vec<(u8, u8, u16, u16, u32, u8)> = (sent.iter())
        .map(|(_, p)| p)
        .filter(|p| info(p).frame == 0)
        .map(|p| {
            let i = info(p);
            (i.s, i.q, i.frag, i.frags, p.size_bytes - HEADERS, p.dscp)
        })
        .collect();
    assert_eq!(
        frame0,
        vec![
            (0, 0, 0, 2, 600, BASE),
            (0, 0, 1, 2, 400, BASE),
            (0, 1, 0, 1, 500, ENH),
            (1, 0, 0, 4, 600, ENH),
            (1, 0, 1, 4, 600, ENH),
            (1, 0, 2, 4, 600, ENH),
            (1, 0, 3, 4, 200, ENH),
            (1, 1, 0, 2, 600, ENH),
            (1, 1, 1, 2, 400, ENH),
        ]
    );
}

/// A spatial layer is taken up only at an IDR GOP: with the rate raised
/// after GOP 0 (s0 only), GOP 1 stays at s0 and GOP 2, an IDR GOP with
/// `idr_gops` 2, adds s1.
#[test]
fn a_spatial_layer_is_taken_up_only_at_an_idr_gop() {
    let (mut src, script) = source(100e3, 3, 1460, 2);
    let sent = drive(&mut src, ms(1200.0), |now| {
        if now >= ms(100.0) {
            script.lock().unwrap().rate_bps = 10e6;
        }
    });
    let layers = |g: u32| -> Vec<(u8, u8)> {
        let mut v: Vec<(u8, u8)> = (sent.iter())
            .map(|(_, p)| info(p))
            .filter(|i| i.frame / GOP == g)
            .map(|i| (i.s, temporal_level(i.frame)))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    assert!(
        layers(0).iter().all(|l| l.0 == 0 && l.1 <= 2),
        "{:?}",
        layers(0)
    );
    assert_eq!(layers(1), vec![(0, 0), (0, 1), (0, 2), (0, 3)]);
    assert!(layers(2).contains(&(1, 3)), "{:?}", layers(2));
    // Operating points 4 s + t + FGS share: GOP 1 (s0, t3) with all its
    // FGS, GOP 2 (s1, t3) with all of it.
    let points = operating_points(&src, ms(1200.0));
    assert_eq!(points[1..], [(ms(400.0), 4.0), (ms(800.0), 8.0)]);
}

/// The send buffer's bound: a unit that would overflow it is left out
/// (counted in `skipped_bytes`), not offered.
#[test]
fn a_full_send_buffer_skips_units() {
    // 8 kbit/s: a GOP's budget (400 bytes) fits no point, so each GOP
    // takes the base of its key frame alone (the base is never left out)
    // and no FGS. Frame 0's 1040-byte packet leaves at once and holds the
    // next back for 1.04 s; frame 8's (400 ms) waits in the 1500-byte
    // buffer, and frame 16's (800 ms) would overflow it: skipped.
    let (src, _) = source(8e3, 3, 1460, 4);
    let mut src = src.with_buffer_limit(1500);
    let sent = drive(&mut src, ms(900.0), |_| {});
    assert_eq!(sent.len(), 1, "frame 0's base packet only");
    let st = src.stats(ms(900.0)).expect("started");
    assert_eq!(value(&st, "skipped_bytes"), 1000.0);
    assert_eq!(value(&st, "offered_bytes_base"), 2000.0);
    assert_eq!(value(&st, "offered_bytes_s0_fgs"), 0.0);
    assert_eq!(value(&st, "buffer_bytes_at_end"), 1040.0);

    // A unit larger than the whole buffer is skipped even when it is empty.
    let (src, _) = source(8e3, 1, 1460, 4);
    let mut src = src.with_buffer_limit(999);
    let sent = drive(&mut src, ms(100.0), |_| {});
    assert!(sent.is_empty());
    let st = src.stats(ms(100.0)).expect("started");
    assert_eq!(value(&st, "skipped_bytes"), 1000.0);
}

/// XOR FEC over blocks of 2: after every second media packet one repair
/// packet as large as the block's largest, at the repair DSCP, carrying
/// the block's media list.
#[test]
fn fec_blocks_follow_their_media_packets() {
    let frame0 = trace(1)[..4].to_vec();
    let (src, _) = source_of(400e3, frame0, 600, 4, SimTime::from_secs(100));
    let mut src = src.with_fec(Some(FecSetup {
        code: FecCode::Xor { k: 2 },
        dscp: 14,
    }));
    let sent = drive(&mut src, SimTime::from_secs(1), |_| {});
    // Frame 0 as in the fragmentation test: 9 media packets of 600, 400,
    // 500, 600, 600, 600, 200, 600, 400 payload bytes.
    let kinds: Vec<String> = (sent.iter())
        .map(
            |(_, p)| match (p.app.get::<SvcInfo>(), p.app.get::<RepairInfo>()) {
                (Some(i), _) => {
                    let (b, x) = i.fec.expect("in a block");
                    format!("m{b}.{x}")
                }
                (_, Some(r)) => {
                    assert_eq!(p.dscp, 14);
                    let largest = r.media.iter().map(|m| m.1).max().unwrap();
                    assert_eq!(p.size_bytes, largest + HEADERS);
                    assert_eq!(r.media.len(), 2);
                    format!("r{}.{}", r.block, r.index)
                }
                _ => panic!("neither"),
            },
        )
        .collect();
    assert_eq!(
        kinds.join(" "),
        "m0.0 m0.1 r0.2 m1.0 m1.1 r1.2 m2.0 m2.1 r2.2 m3.0 m3.1 r3.2 m4.0"
    );
    // Block 1 holds the 500-byte FGS unit and a 600-byte fragment.
    assert_eq!(sent[5].1.size_bytes, 600 + HEADERS);
    let st = src.stats(SimTime::from_secs(1)).expect("started");
    assert_eq!(value(&st, "media_packets"), 9.0);
    assert_eq!(value(&st, "fec_repair_packets"), 4.0);
    assert_eq!(value(&st, "packets_sent"), 13.0);
}

/// Nothing of a frame at or after the stop time is sent, and no timer is
/// asked for past it.
#[test]
fn the_source_stops_at_its_stop_time() {
    let (mut src, _) = source_of(10e6, trace(2), 1460, 4, ms(150.0));
    let sent = drive(&mut src, SimTime::from_secs(10), |_| {});
    let frames: Vec<u32> = sent.iter().map(|(_, p)| info(p).frame).collect();
    assert_eq!(
        *frames.iter().max().unwrap(),
        2,
        "frames 0-2 (0, 50, 100 ms)"
    );
    assert_eq!(frames.len(), 3 * 5, "5 packets a frame (s1's base in 2)");
    assert!(sent.iter().all(|(t, _)| *t < ms(150.0)));
}

/// The sink's receiving half: a packet arriving by its frame's deadline
/// counts, one after it is late; NAL units are judged from their
/// fragments at the end.
fn sink(playout_ms: f64, fec: Option<FecCode>) -> SvcSink {
    SvcSink::new(
        PacketTemplate::session_udp(8, Dest::Node(0), 5005, 16),
        Box::new(EveryPacket::default()),
        7,
        ms(playout_ms),
        HEADERS,
        4,
    )
    .with_fec(fec)
}

/// A receiving half that answers every data packet with one feedback
/// packet and asks for a timer 100 ms after the first.
#[derive(Default)]
struct EveryPacket {
    first: Option<SimTime>,
    /// The series rows it was given, reported as its one sample.
    rows: Option<usize>,
}

impl FeedbackReceiver for EveryPacket {
    fn on_data(&mut self, now: SimTime, stamp: &Stamp, _bytes: u32, out: &mut Vec<Payload>) {
        self.first.get_or_insert(now);
        out.push(Payload::new(SvcInfo {
            stamp: *stamp,
            ..blank()
        }));
    }
    fn deadline(&self) -> Option<SimTime> {
        self.first.map(|t| t + ms(100.0))
    }
    fn on_timer(&mut self, _now: SimTime, _out: &mut Vec<Payload>) {
        self.first = None;
    }
    fn set_series_rows(&mut self, rows: usize) {
        self.rows = Some(rows);
    }
    fn series(&self, name: &str) -> Option<Vec<(SimTime, f64)>> {
        let rows = self.rows.map_or(-1.0, |r| r as f64);
        (name == "available_bps").then(|| vec![(SimTime::ZERO, rows)])
    }
}

/// The run's series bound reaches the receiving half.
#[test]
fn the_sink_passes_its_series_bound_on() {
    let mut k = sink(200.0, None);
    k.set_series(7);
    let st = k.stats(SimTime::from_secs(1)).unwrap();
    assert_eq!(
        st.series,
        vec![("available_bps", vec![(SimTime::ZERO, 7.0)])]
    );
}

fn blank() -> SvcInfo {
    SvcInfo {
        stamp: Stamp::default(),
        frame: 0,
        s: 0,
        q: 0,
        frag: 0,
        frags: 1,
        nal_bytes: 0,
        frame_time: SimTime::ZERO,
        fec: None,
    }
}

/// A media packet: unit (frame, s, q) of `nal` bytes, fragment `frag` of
/// `frags` with `payload` bytes.
fn media(frame: u32, s: u8, q: u8, frag: u16, frags: u16, nal: u32, payload: u32) -> Packet {
    let mut p = PacketTemplate::session_udp(7, Dest::Node(1), 5004, 0).make(0);
    p.size_bytes = payload + HEADERS;
    p.app = Payload::new(SvcInfo {
        frame,
        s,
        q,
        frag,
        frags,
        nal_bytes: nal,
        frame_time: SimTime::from_secs_f64(frame as f64 / FPS),
        ..blank()
    });
    p
}

fn deliver(sink: &mut SvcSink, at: SimTime, p: &Packet) -> Vec<Action> {
    let mut out = Vec::new();
    sink.on_packet(at, p, &mut out);
    out
}

#[test]
fn the_sink_counts_by_the_playout_deadline() {
    let mut k = sink(200.0, None);
    // Frame 0 (deadline 200 ms): on time at the deadline itself.
    deliver(&mut k, ms(200.0), &media(0, 0, 0, 0, 1, 700, 700));
    // Frame 1 (50 ms, deadline 250 ms): a nanosecond late.
    deliver(
        &mut k,
        ms(250.0) + SimTime(1),
        &media(1, 0, 0, 0, 1, 300, 300),
    );
    let st = k.stats(SimTime::from_secs(1)).unwrap();
    assert_eq!(value(&st, "bytes_in_time"), 700.0);
    assert_eq!(value(&st, "bytes_late"), 300.0);
    assert_eq!(value(&st, "media_packets_received"), 2.0);
    assert_eq!(value(&st, "decodable_bytes_base"), 700.0);
    assert_eq!(value(&st, "decodable_base_frames"), 1.0);
}

/// Feedback: one packet per answer, numbered from 0, to the template's
/// destination; one timer at the receiving half's deadline, asked once.
#[test]
fn the_sink_sends_what_its_receiving_half_makes() {
    let mut k = sink(200.0, None);
    let a = deliver(&mut k, ms(10.0), &media(0, 0, 0, 0, 1, 100, 100));
    let b = deliver(&mut k, ms(20.0), &media(0, 0, 1, 0, 1, 100, 100));
    let sends = |v: &[Action]| -> Vec<u64> {
        (v.iter())
            .filter_map(|a| match a {
                Action::Send(p) => Some(p.seq),
                _ => None,
            })
            .collect()
    };
    let timers = |v: &[Action]| -> Vec<SimTime> {
        (v.iter())
            .filter_map(|a| match a {
                Action::Timer { at, .. } => Some(*at),
                _ => None,
            })
            .collect()
    };
    assert_eq!((sends(&a), sends(&b)), (vec![0], vec![1]));
    assert_eq!((timers(&a), timers(&b)), (vec![ms(110.0)], vec![]));
    let mut out = Vec::new();
    k.on_timer(ms(110.0), 0, &mut out);
    assert!(out.is_empty(), "the half asked for no timer after its own");
    let c = deliver(&mut k, ms(120.0), &media(1, 0, 0, 0, 1, 100, 100));
    assert_eq!((sends(&c), timers(&c)), (vec![2], vec![ms(220.0)]));
}

/// What a unit is worth: a base unit only whole; an FGS unit the
/// fragments before the first missing one, at the size of a full
/// fragment (the last may be short), never above the unit.
#[test]
fn units_count_whole_or_by_their_fgs_prefix() {
    let mut k = sink(1000.0, None);
    let t = ms(10.0);
    // Frame 0: base 1000 in 600 + 400, all arrived.
    deliver(&mut k, t, &media(0, 0, 0, 0, 2, 1000, 600));
    deliver(&mut k, t, &media(0, 0, 0, 1, 2, 1000, 400));
    // Its FGS unit of 1300 in 600, 600, 100: fragments 0 and 2 arrived.
    deliver(&mut k, t, &media(0, 0, 1, 0, 3, 1300, 600));
    deliver(&mut k, t, &media(0, 0, 1, 2, 3, 1300, 100));
    // s1's base of 1000 with its last fragment lost: nothing, and s1's FGS
    // (whole) cannot be used without it.
    deliver(&mut k, t, &media(0, 1, 0, 0, 2, 1000, 600));
    deliver(&mut k, t, &media(0, 1, 1, 0, 1, 200, 200));
    let st = k.stats(SimTime::from_secs(1)).unwrap();
    assert_eq!(value(&st, "decodable_bytes_base"), 1000.0);
    assert_eq!(value(&st, "decodable_bytes_s0_fgs"), 600.0);
    assert_eq!(value(&st, "decodable_bytes_s1"), 0.0);
    assert_eq!(value(&st, "decodable_bytes_s1_fgs"), 0.0);
    assert_eq!(value(&st, "bytes_in_time"), 2500.0);

    // An FGS unit whose last fragment only is missing, received out of
    // order: the prefix is two full fragments, capped at the unit.
    let mut k = sink(1000.0, None);
    deliver(&mut k, t, &media(0, 0, 0, 0, 1, 500, 500));
    deliver(&mut k, t, &media(0, 0, 1, 1, 3, 1250, 600));
    deliver(&mut k, t, &media(0, 0, 1, 0, 3, 1250, 600));
    let st = k.stats(SimTime::from_secs(1)).unwrap();
    assert_eq!(value(&st, "decodable_bytes_s0_fgs"), 1200.0);
}

fn in_block(mut p: Packet, block: u32, index: u16) -> Packet {
    let i = p.app.get_mut::<SvcInfo>().unwrap();
    i.fec = Some((block, index));
    p
}

fn repair(block: u32, index: u16, media: &[&Packet]) -> Packet {
    let list: Vec<(SvcInfo, u32)> = (media.iter())
        .map(|p| (info(p), p.size_bytes - HEADERS))
        .collect();
    let mut p = PacketTemplate::session_udp(7, Dest::Node(1), 5004, 0).make(0);
    p.size_bytes = 600 + HEADERS;
    p.app = Payload::new(RepairInfo {
        stamp: Stamp::default(),
        block,
        index,
        media: Arc::new(list),
    });
    p
}

/// XOR over 2: the lost packet is rebuilt when the repair arrives, and the
/// original arriving later is a duplicate, kept once.
#[test]
fn xor_fec_rebuilds_one_lost_packet_and_counts_it_once() {
    let mut k = sink(1000.0, Some(FecCode::Xor { k: 2 }));
    let a = in_block(media(0, 0, 0, 0, 2, 1000, 600), 0, 0);
    let b = in_block(media(0, 0, 0, 1, 2, 1000, 400), 0, 1);
    let r = repair(0, 2, &[&a, &b]);
    deliver(&mut k, ms(10.0), &a);
    deliver(&mut k, ms(20.0), &r);
    deliver(&mut k, ms(30.0), &b);
    let st = k.stats(SimTime::from_secs(1)).unwrap();
    assert_eq!(value(&st, "fec_recovered_packets"), 1.0);
    assert_eq!(value(&st, "fec_repair_received"), 1.0);
    assert_eq!(value(&st, "media_packets_received"), 2.0);
    assert_eq!(value(&st, "media_packets_kept"), 2.0);
    assert_eq!(value(&st, "bytes_in_time"), 1000.0, "the rebuilt 400 once");
    assert_eq!(value(&st, "decodable_bytes_base"), 1000.0);

    // Both originals lost: one repair cannot rebuild two.
    let mut k = sink(1000.0, Some(FecCode::Xor { k: 2 }));
    deliver(&mut k, ms(20.0), &r);
    let st = k.stats(SimTime::from_secs(1)).unwrap();
    assert_eq!(value(&st, "fec_recovered_packets"), 0.0);
    assert_eq!(value(&st, "media_packets_kept"), 0.0);
}

/// Reed-Solomon (2 of 4): the two repair packets alone rebuild both media
/// packets; a packet rebuilt after the deadline is late.
#[test]
fn rs_fec_rebuilds_from_any_k_packets_by_the_deadline() {
    let code = FecCode::Rs { k: 2, n: 4 };
    let a = in_block(media(0, 0, 0, 0, 2, 1000, 600), 0, 0);
    let b = in_block(media(0, 0, 0, 1, 2, 1000, 400), 0, 1);
    let mut k = sink(1000.0, Some(code));
    deliver(&mut k, ms(10.0), &repair(0, 2, &[&a, &b]));
    let st = k.stats(SimTime::from_secs(1)).unwrap();
    assert_eq!(value(&st, "fec_recovered_packets"), 0.0, "one of two");
    deliver(&mut k, ms(20.0), &repair(0, 3, &[&a, &b]));
    let st = k.stats(SimTime::from_secs(1)).unwrap();
    assert_eq!(value(&st, "fec_recovered_packets"), 2.0);
    assert_eq!(value(&st, "decodable_bytes_base"), 1000.0);
    // A packet after the block is decoded changes nothing.
    deliver(&mut k, ms(30.0), &repair(0, 3, &[&a, &b]));
    assert_eq!(
        value(
            &k.stats(SimTime::from_secs(1)).unwrap(),
            "fec_recovered_packets"
        ),
        2.0
    );

    // The same, rebuilt at 1.2 s: past frame 0's 1 s deadline.
    let mut k = sink(1000.0, Some(code));
    deliver(&mut k, ms(10.0), &a);
    deliver(&mut k, ms(1200.0), &repair(0, 2, &[&a, &b]));
    let st = k.stats(SimTime::from_secs(2)).unwrap();
    assert_eq!(value(&st, "fec_recovered_packets"), 1.0);
    assert_eq!(value(&st, "bytes_late"), 400.0);
    assert_eq!(value(&st, "decodable_bytes_base"), 0.0);
}

/// The spec's defaults, as its docs give them.
#[test]
fn the_spec_defaults_are_the_documented_ones() {
    let s: super::SvcSpec =
        serde_json::from_str(r#"{"cc": {"type": "fixed", "rate_bps": 1e6}}"#).expect("valid");
    assert_eq!((s.packet_bytes, s.fps, s.size_cv), (1250, 30.0, 0.3));
    assert_eq!(s.layer_bps, [[160e3, 160e3], [400e3, 400e3]]);
    assert_eq!((s.base_dscp, s.enhancement_dscp), (10, 12));
    assert_eq!(
        (s.playout_delay_ms, s.feedback_bytes, s.idr_gops),
        (1000.0, 44, 4)
    );
    assert_eq!(s.send_buffer_bytes, 64 * 1024 * 1024);
    assert!(s.fec.is_none() && s.nal_units.is_none());
    assert_eq!(super::HEADERS, 40, "IP, UDP and RTP headers");
}

/// FEC settings: Reed-Solomon's n above k and at most 255 (k + 1 when not
/// given), XOR's n always k + 1 and not given; k below 255; DSCP 0..=63.
#[test]
fn fec_settings_are_checked_and_make_their_code() {
    let spec = |j: &str| -> super::FecSpec { serde_json::from_str(j).expect(j) };
    let errs = |j: &str| {
        let mut c = crate::scenario::check::Checker::default();
        spec(j).validate("fec", &mut c);
        c.errs.iter().map(|e| e.to_string()).collect::<Vec<_>>()
    };
    for ok in [
        r#"{"code": "rs", "k": 4, "n": 5}"#,
        r#"{"code": "rs", "k": 4, "n": 255}"#,
        r#"{"code": "rs", "k": 254}"#,
        r#"{"code": "xor", "k": 4, "dscp": 63}"#,
    ] {
        assert_eq!(errs(ok), Vec::<String>::new(), "{ok}");
    }
    for (bad, field) in [
        (r#"{"code": "rs", "k": 4, "n": 4}"#, "fec.n"),
        (r#"{"code": "rs", "k": 4, "n": 256}"#, "fec.n"),
        (r#"{"code": "xor", "k": 4, "n": 5}"#, "fec.n"),
        (r#"{"code": "xor", "k": 255}"#, "fec.k"),
        (r#"{"code": "xor", "k": 0}"#, "fec.k"),
        (r#"{"code": "xor", "k": 4, "dscp": 64}"#, "fec.dscp"),
    ] {
        let e = errs(bad);
        assert!(e.len() == 1 && e[0].contains(field), "{bad}: {e:?}");
    }
    assert_eq!(
        spec(r#"{"code": "rs", "k": 4}"#).code(),
        FecCode::Rs { k: 4, n: 5 }
    );
    assert_eq!(
        spec(r#"{"code": "rs", "k": 4, "n": 7}"#).code(),
        FecCode::Rs { k: 4, n: 7 }
    );
    assert_eq!(
        spec(r#"{"code": "xor", "k": 3}"#).code(),
        FecCode::Xor { k: 3 }
    );
    assert_eq!(
        spec(r#"{"code": "xor", "k": 3}"#).dscp,
        14,
        "AF13 by default"
    );
}

/// A run of the built flow, 2 s over a 100 Mbit/s, 1 ms link: at a fixed
/// 10 Mbit/s every layer of the 60 frames (2 s at 30 frames/s) leaves,
/// each packet its payload plus 40 bytes of headers, and every frame's
/// base is decodable; over TFRC the receiver's feedback, 44 bytes a
/// packet, goes back in the flow "s/fb".
#[test]
fn a_built_flow_sends_its_frames_and_hears_its_feedback() {
    use crate::measure::Column;
    let run = |cc: serde_json::Value| {
        let sc = serde_json::json!({"duration_s": 2, "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"a": "a", "b": "b", "rate_bps": 100e6, "delay_ms": 1}],
            "flows": [{"name": "s", "type": "svc", "src": "a", "dst": "b", "cc": cc}]});
        crate::run_json(
            &sc.to_string(),
            &crate::RunOptions::default(),
            &mut |_, _| true,
        )
        .expect("a valid scenario")
        .tables
    };
    let get = |t: &[crate::measure::Table], table: &str, col: &str| -> Vec<f64> {
        let t = t.iter().find(|t| t.name == table).expect(table);
        match t.get(col) {
            Some(Column::U64(v)) => v.iter().map(|&x| x as f64).collect(),
            Some(Column::F64(v)) => v.clone(),
            other => panic!("{col}: {other:?}"),
        }
    };
    let t = run(serde_json::json!({"type": "fixed", "rate_bps": 10e6}));
    let Some(Column::Names { names, .. }) =
        t.iter().find(|t| t.name == "flows").unwrap().get("flow")
    else {
        panic!("flow names")
    };
    assert_eq!(
        names.iter().map(String::as_str).collect::<Vec<_>>(),
        ["s", "s/fb"]
    );
    let v = |c: &str| get(&t, "svc", c)[0];
    assert_eq!(v("decodable_base_frames"), 60.0);
    let offered: f64 = ["base", "s0_fgs", "s1", "s1_fgs"]
        .iter()
        .map(|l| v(&format!("offered_bytes_{l}")))
        .sum();
    assert_eq!(
        get(&t, "flows", "sent_bytes")[0],
        offered + 40.0 * v("media_packets")
    );
    assert_eq!(v("bytes_in_time"), offered);

    let t = run(serde_json::json!({"type": "tfrc"}));
    let (sent, bytes) = (get(&t, "flows", "sent"), get(&t, "flows", "sent_bytes"));
    assert!(sent[1] > 10.0, "TFRC feedback about once an RTT: {sent:?}");
    assert_eq!(bytes[1], 44.0 * sent[1]);
}
