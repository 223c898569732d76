//! The member driven alone, or two of them joined by a lossless path of
//! fixed delay: media under a scripted controller (the pacer's rate, the
//! controller's timer and window), NEWPRED's repairs, sequence gaps across
//! the 16-bit wrap, and round trips from the reports of several sources.

use super::*;
use crate::app::media::pacer::Pacer;
use crate::app::media::spec::{ConstantSpec, SourceModel, SourceSite};
use crate::app::testing::{drive, value, Script, ScriptCc};
use crate::net::Dest;
use crate::proto::rtp::{AvpfConfig, RtcpTiming, TimingConfig};
use crate::sim::RngStreams;
use std::sync::{Arc, Mutex};

const MEDIA_FLOW: u32 = 0;
const RTCP_FLOW: u32 = 1;

fn ms(x: f64) -> SimTime {
    SimTime::from_millis_f64(x)
}

/// Member `ssrc` (1 or 2) of a point-to-point AVPF session of 1 Mbit/s,
/// sending to the other until `stop`; a media sender (1000-byte payloads
/// every 8 ms unless a controller paces them) if `media`.
fn member(ssrc: u32, media: bool, stop: SimTime) -> RtpMember {
    let mut rng = RngStreams::new(1, 0).stream(&format!("member {ssrc}"));
    let cfg = TimingConfig {
        session_bw_bps: 1e6,
        rtcp_fraction: 0.05,
        sender_fraction: 0.25,
        min_interval_s: 0.0,
        initial_min_interval_s: 0.0,
        reconsideration: true,
        ssrc_range: (1, 2),
    };
    let timing = RtcpTiming::new(cfg, ssrc, 100.0, SimTime::ZERO, &mut rng);
    let avpf = AvpfConfig {
        point_to_point: true,
        ..AvpfConfig::default()
    };
    let tpl =
        |flow, payload| PacketTemplate::session_udp(flow, Dest::Node(3 - ssrc), 5004, payload);
    let media = media.then(|| MediaConfig {
        template: tpl(MEDIA_FLOW, 1012),
        rtx_template: None,
        interval: ms(8.0),
    });
    let sched = RtcpScheduler::new(timing, Some(avpf));
    let cname = format!("member {ssrc}");
    let rtcp = tpl(RTCP_FLOW, 0);
    RtpMember::new(
        ssrc,
        cname,
        media,
        false,
        rtcp,
        sched,
        rng,
        SimTime::ZERO,
        stop,
        1e6,
    )
}

/// Frames of `frame_bytes` every 40 ms from a constant source, in packets
/// of at most 1200 bytes on the wire (1160 of payload), through a pacer
/// at 2.5 times the rate with no burst.
fn frames(frame_bytes: u32) -> FrameSender {
    let site = SourceSite {
        start_bps: 0.0,
        plan: (frame_bytes, ms(40.0)),
    };
    let rng = RngStreams::new(1, 0).stream("frames");
    let pacer = Pacer::new(2.5, SimTime::ZERO);
    FrameSender::new(
        ConstantSpec {}.build(&site),
        rng,
        Some(pacer),
        1200,
        1e6,
        None,
    )
}

/// A frame media sender under a scripted controller at `rate_bps`.
fn paced_frames(frame_bytes: u32, rate_bps: f64) -> (RtpMember, Arc<Mutex<Script>>) {
    let (cc, script) = ScriptCc::boxed(rate_bps);
    let m = member(1, true, SimTime::from_secs(10))
        .with_cc(Some(PacedMedia::new(cc)), None)
        .with_frames(Some(frames(frame_bytes)), None, None);
    (m, script)
}

/// The media packets among `sent`: (time, RTP sequence number, the
/// controller's stamp number).
fn media(sent: &[(SimTime, Packet)]) -> Vec<(SimTime, u16, Option<u64>)> {
    (sent.iter())
        .filter(|(_, p)| p.flow == MEDIA_FLOW)
        .map(|(t, p)| {
            let d = p.app.get::<RtpData>().expect("RTP data");
            (*t, d.seq, d.stamp.map(|s| s.seq))
        })
        .collect()
}

/// 1200-byte packets paced at 2.5 times a controller's 1 Mbit/s target
/// leave 3.84 ms apart (a controller that says no pacing rate paces at
/// its target). Frames of 12 packets every 40 ms need 46.08 ms each, so
/// the pacer never empties: packets leave every 3.84 ms from the start,
/// none discarded by a frame coming in behind them, each stamped by the
/// controller in turn: 53 in the first 200 ms.
#[test]
fn frame_packets_leave_at_the_pacing_factor_times_the_controllers_target() {
    let (mut m, script) = paced_frames(12 * 1160, 1e6);
    let sent = media(&drive(&mut m, ms(200.0), |_| {}));
    let expected: Vec<(SimTime, u16, Option<u64>)> = (0..53u16)
        .map(|i| (SimTime::from_nanos(3_840_000 * i as u64), i, Some(i as u64)))
        .collect();
    assert_eq!(sent, expected);
    assert_eq!(script.lock().unwrap().sent, 53);
    let st = &m.more_stats(ms(200.0))[0];
    assert_eq!(value(st, "frames_sent"), 6.0);
    assert_eq!(value(st, "pacer_discarded_packets"), 0.0);
    // The wait grows by 6.08 ms a frame: the longest is frame 3's last
    // packet's (the 48th), queued at 120 ms.
    assert!((value(st, "pacer_delay_max_ms") - (47.0 * 3.84 - 120.0)).abs() < 1e-6);
    // Packet i left at 3.84 i ms, queued with its frame at 40 (i / 12).
    let waits = (0..53).map(|i| 3.84 * i as f64 - 40.0 * (i / 12) as f64);
    let mean = waits.sum::<f64>() / 53.0;
    assert!((value(st, "pacer_delay_mean_ms") - mean).abs() < 1e-6);
}

/// A window-based controller's window holds the pacer: with no room
/// nothing leaves; the controller's timer, asked for at its deadline
/// (20 ms), reaches the controller, and the window it has opened by then
/// lets the pacer go on at once. The timer is not asked for again once
/// the controller has no deadline.
#[test]
fn the_controllers_timer_lets_the_pacer_go_on_when_its_window_opens() {
    let (mut m, script) = paced_frames(3 * 1160, 1e6);
    {
        let mut s = script.lock().unwrap();
        s.window = Some(0);
        s.deadline = Some(ms(20.0));
    }
    let sent = media(&drive(&mut m, ms(50.0), |at| {
        if at >= ms(20.0) {
            script.lock().unwrap().window = Some(u64::MAX);
        }
    }));
    let times: Vec<SimTime> = sent.iter().map(|s| s.0).collect();
    // Frame 0's three packets from 20 ms, 3.84 ms apart; frame 1's at 40 ms.
    let expected: Vec<SimTime> = [20.0, 23.84, 27.68, 40.0, 43.84, 47.68].map(ms).to_vec();
    assert_eq!(times, expected);
    assert_eq!(script.lock().unwrap().timers, vec![ms(20.0)]);
}

/// One packet per interval under a controller: each leaves when the
/// controller's last answer allows (1040 bytes at 1 Mbit/s: 8.32 ms, not
/// the session's 8 ms), and a controller's timer, passed on at its
/// deadline, does not send a packet before its time.
#[test]
fn constant_media_leaves_when_its_controller_allows() {
    let (cc, script) = ScriptCc::boxed(1e6);
    script.lock().unwrap().deadline = Some(ms(10.0));
    let mut m = member(1, true, SimTime::from_secs(10)).with_cc(Some(PacedMedia::new(cc)), None);
    let sent = media(&drive(&mut m, ms(50.0), |_| {}));
    let expected: Vec<(SimTime, u16, Option<u64>)> = (0..7u16)
        .map(|i| (SimTime::from_nanos(8_320_000 * i as u64), i, Some(i as u64)))
        .collect();
    assert_eq!(sent, expected);
    assert_eq!(script.lock().unwrap().timers, vec![ms(10.0)]);
    assert_eq!(
        value(&m.stats(ms(50.0)).unwrap(), "media_packets_sent"),
        7.0
    );
}

/// Without a controller a media sender sends one packet per interval (8
/// ms), and none at or after its stop.
#[test]
fn constant_media_keeps_its_interval_until_the_stop() {
    let mut m = member(1, true, ms(40.0));
    let sent = media(&drive(&mut m, ms(100.0), |_| {}));
    let times: Vec<SimTime> = sent.iter().map(|s| s.0).collect();
    assert_eq!(times, [0.0, 8.0, 16.0, 24.0, 32.0].map(ms).to_vec());
}

/// What the pair of members sent and when.
type Log = Vec<(SimTime, usize, Packet)>;

/// Two members joined both ways by a path of 10 ms without a rate; media
/// packets whose first sending `lose` names are lost (their repairs are
/// not). Runs until `until`; returns what each sent.
fn pair(mut m: [RtpMember; 2], lose: &[u16], until: SimTime) -> ([RtpMember; 2], Log) {
    enum Ev {
        Timer(u64),
        Packet(Packet),
    }
    let delay = ms(10.0);
    let mut queue: Vec<(SimTime, u64, usize, Ev)> = Vec::new();
    let mut order = 0;
    let mut log = Vec::new();
    let mut take = |now: SimTime, from: usize, out: &mut Vec<Action>, queue: &mut Vec<_>| {
        for a in out.drain(..) {
            order += 1;
            match a {
                Action::Timer { at, token } => queue.push((at, order, from, Ev::Timer(token))),
                Action::Send(mut p) => {
                    p.created_at = now;
                    log.push((now, from, p.clone()));
                    let first = p.app.get::<RtpData>().is_some_and(|d| d.repair.is_none());
                    let d = p.app.get::<RtpData>().map(|d| d.seq);
                    if !(first && d.is_some_and(|s| lose.contains(&s))) {
                        queue.push((now + delay, order, 1 - from, Ev::Packet(p)));
                    }
                }
            }
        }
    };
    let mut out = Vec::new();
    for (i, x) in m.iter_mut().enumerate() {
        x.on_start(SimTime::ZERO, &mut out);
        take(SimTime::ZERO, i, &mut out, &mut queue);
    }
    while let Some(i) = (0..queue.len()).min_by_key(|&i| (queue[i].0, queue[i].1)) {
        let (at, _, to, ev) = queue.swap_remove(i);
        if at > until {
            break;
        }
        match ev {
            Ev::Timer(token) => m[to].on_timer(at, token, &mut out),
            Ev::Packet(p) => m[to].on_packet(at, &p, &mut out),
        }
        take(at, to, &mut out, &mut queue);
    }
    (m, log)
}

/// NEWPRED (the AVPF study's case 9): frames of six segments every
/// 100 ms. Segments 8 and 9 (frame 1) are lost, then 17 and 18 (the end
/// of frame 2 and the start of frame 3): the receiver asks for each frame
/// with lost segments in its own feedback message (three), the sender
/// answers each lost segment with a repair, and each repair arrives one
/// round trip (20 ms) after the loss was detected: feedback leaves at
/// once point-to-point (RFC 4585 3.5.2: no dither), so none waited.
#[test]
fn newpred_repairs_each_lost_segment_one_round_trip_after_its_detection() {
    let np = NewpredConfig { segments: 6 };
    let mut sender = member(1, true, SimTime::from_secs(10)).with_newpred(np);
    if let Some(m) = sender.media.as_mut() {
        m.interval = ms(100.0);
    }
    let receiver = member(2, false, SimTime::from_secs(10)).with_newpred(np);
    let ([s, r], log) = pair([sender, receiver], &[8, 9, 17, 18], ms(600.0));
    let repairs: Vec<(SimTime, u16, Option<SimTime>)> = (log.iter())
        .filter_map(|(t, _, p)| p.app.get::<RtpData>().map(|d| (*t, d.seq, d.repair)))
        .filter(|x| x.2.is_some())
        .collect();
    // Losses seen when the next segment arrived (110 and 310 ms); the
    // feedback leaves then and arrives 10 ms later.
    let repaired_at = |t: f64| (ms(t + 10.0), ms(t));
    let expected: Vec<(SimTime, u16, Option<SimTime>)> =
        [(110.0, 8), (110.0, 9), (310.0, 17), (310.0, 18)]
            .iter()
            .map(|&(t, seq)| (repaired_at(t).0, seq, Some(repaired_at(t).1)))
            .collect();
    assert_eq!(repairs, expected);
    let at = |m: &RtpMember, col| value(&m.stats(ms(600.0)).unwrap(), col);
    assert_eq!(at(&s, "repairs_sent"), 4.0);
    assert_eq!(
        at(&s, "media_packets_sent"),
        42.0,
        "7 frames of 6, 0 to 600 ms"
    );
    assert_eq!(at(&r, "fb_wanted"), 3.0, "frame 1; frames 2 and 3");
    assert_eq!(at(&r, "recoveries"), 4.0);
    assert!((at(&r, "recovery_time_mean_s") - 0.020).abs() < 1e-9);
    assert!(at(&r, "waiting_time_mean_s").abs() < 1e-9);
    // Each loss reported once, and placed in the sender's record.
    assert_eq!(at(&s, "loss_reports"), 4.0);
    assert_eq!(at(&s, "loss_reports_unplaced"), 0.0);
}

/// A plain media packet (no stamp, no repair) from `ssrc`.
fn media_packet(ssrc: u32, seq: u16) -> Packet {
    let mut p = PacketTemplate::session_udp(MEDIA_FLOW, Dest::Node(3 - ssrc), 5004, 1012).make(0);
    p.app = RtpData::payload(RtpData {
        ssrc,
        seq,
        timestamp: 0,
        repair: None,
        stamp: None,
        frame: None,
        marker: false,
        first: false,
        transport_seq: None,
        padding: false,
        rtx: None,
    });
    p
}

/// A NEWPRED receiver numbers frames by the extended sequence number, so
/// the frames keep their bounds across the 16-bit wrap: segments 65534,
/// 65535, 0 and 1 (extended 65534 to 65537) are all of frame 10922 (six
/// segments a frame): one feedback message, not two.
#[test]
fn newpred_frames_keep_their_bounds_across_the_wrap() {
    let np = NewpredConfig { segments: 6 };
    let mut r = member(2, false, SimTime::from_secs(100)).with_newpred(np);
    let mut out = Vec::new();
    let mut deliver = |r: &mut RtpMember, i: u64, seq: u16| {
        r.on_packet(
            SimTime::from_micros(i * 100),
            &media_packet(1, seq),
            &mut out,
        );
        out.clear();
    };
    for seq in 0..=65533u16 {
        deliver(&mut r, seq as u64, seq);
    }
    deliver(&mut r, 65540, 2);
    assert_eq!(
        value(&r.stats(SimTime::from_secs(7)).unwrap(), "fb_wanted"),
        1.0
    );
}

/// A compound from `ssrc` with a report block about member 1 whose LSR
/// says member 1's SR left at `lsr_ms` and was held `dlsr_ms`.
fn report_about_1(ssrc: u32, sender: bool, lsr_ms: f64, dlsr_ms: f64) -> Packet {
    let mut p = PacketTemplate::session_udp(RTCP_FLOW, Dest::Node(1), 5004, 60).make(0);
    p.app = Payload::new(RtcpCompound {
        ssrc,
        sender: sender.then_some((0, 0)),
        reports: vec![RtcpReport {
            ssrc: 1,
            fraction_lost: 0,
            cumulative_lost: 0,
            ext_highest_seq: 0,
            jitter: 0,
            lsr: Some(ms(lsr_ms)),
            dlsr: ms(dlsr_ms),
        }],
        nacks: Vec::new(),
        rrtr: false,
        dlrr: Vec::new(),
        app_layer_fb: false,
        bye: false,
        early: false,
        cname: String::new(),
    });
    p
}

/// The round trip (RFC 3550 6.4.1: A - LSR - DLSR) from a report block
/// about this member: the first from anyone is taken; after that only
/// those from a source that sends media replace it, so a member that
/// sends none (here 9, unknown until it reports) does not.
#[test]
fn the_round_trip_comes_from_media_sources_once_there_is_one() {
    let mut m = member(1, true, SimTime::from_secs(10));
    let mut out = Vec::new();
    let rtt = |m: &RtpMember| value(&m.stats(ms(500.0)).unwrap(), "rtt_s");
    assert!(rtt(&m).is_nan());
    m.on_packet(ms(100.0), &report_about_1(9, false, 40.0, 20.0), &mut out);
    assert!((rtt(&m) - 0.040).abs() < 1e-12, "the first: {}", rtt(&m));
    // Member 2 sends media, then reports.
    m.on_packet(ms(150.0), &media_packet(2, 0), &mut out);
    m.on_packet(ms(200.0), &report_about_1(2, false, 170.0, 5.0), &mut out);
    assert!((rtt(&m) - 0.025).abs() < 1e-12, "from the media source");
    m.on_packet(ms(300.0), &report_about_1(9, true, 290.0, 0.0), &mut out);
    assert!(
        (rtt(&m) - 0.025).abs() < 1e-12,
        "not from a member without media"
    );
}

/// A paused sender captures no frame from the pause's start until its
/// end, and resumes on the frame clock's next beat from there: with
/// frames every 40 ms and a pause over [40, 100) ms, frames at 0, 100,
/// 140 and 180 ms in the first 200. The media rate counts the active
/// time only (140 ms).
#[test]
fn a_paused_sender_resumes_when_the_pause_ends() {
    let pauses = vec![(ms(40.0), ms(100.0))];
    let fs = frames(1160).with_pauses(pauses);
    let mut m = member(1, true, SimTime::from_secs(10)).with_frames(Some(fs), None, None);
    let sent = media(&drive(&mut m, ms(200.0), |_| {}));
    let times: Vec<SimTime> = sent.iter().map(|s| s.0).collect();
    assert_eq!(times, [0.0, 100.0, 140.0, 180.0].map(ms).to_vec());
    let st = &m.more_stats(ms(200.0))[0];
    assert!((value(st, "paused_s") - 0.06).abs() < 1e-12);
    let rate = value(st, "media_rate_bps");
    assert!((rate - 4.0 * 1160.0 * 8.0 / 0.14).abs() < 1e-6, "{rate}");
}

/// Members that leave at their stop (100 ms) each send one BYE then
/// (RFC 3550 6.3.7) and no RTCP after it; each takes the other's BYE
/// off its member table (6.3.4). Members staying to the end of the run
/// send none.
#[test]
fn members_leave_with_a_bye_at_their_stop() {
    let byes = |leave: bool| {
        let m = |ssrc, media| {
            let m = member(ssrc, media, ms(100.0));
            if leave {
                m.with_bye()
            } else {
                m
            }
        };
        let (m, log) = pair([m(1, true), m(2, false)], &[], ms(2000.0));
        let rtcp: Vec<(SimTime, usize, bool)> = (log.iter())
            .filter_map(|(t, from, p)| p.app.get::<RtcpCompound>().map(|c| (*t, *from, c.bye)))
            .collect();
        assert!(rtcp.len() > 4, "{rtcp:?}");
        let members = m.map(|x| value(&x.stats(ms(2000.0)).unwrap(), "members"));
        (rtcp, members)
    };
    let (rtcp, members) = byes(true);
    let at_stop: Vec<&(SimTime, usize, bool)> = rtcp.iter().filter(|x| x.0 >= ms(100.0)).collect();
    assert_eq!(at_stop, [&(ms(100.0), 0, true), &(ms(100.0), 1, true)]);
    assert!(rtcp.iter().filter(|x| x.2).count() == 2);
    assert_eq!(members, [1.0, 1.0]);
    let (rtcp, members) = byes(false);
    assert!(rtcp.iter().all(|x| !x.2 && x.0 < ms(100.0)));
    assert_eq!(members, [2.0, 2.0]);
}

/// What a member's RTCP says (RFC 3550 6.4): a receiver reports on a
/// source once it is valid (two packets in sequence, A.1), before it has
/// heard an SR from it (no LSR then, and DLSR 0), and with the LSR and the
/// time since it arrived after; the sender's info counts its media
/// packets and their payload octets (1000 each, RTP's header not
/// counted). Every compound is its bytes plus UDP and IPv4 headers.
#[test]
fn reports_and_sender_info_say_what_was_received_and_sent() {
    let (_, log) = pair(
        [member(1, true, ms(500.0)), member(2, false, ms(500.0))],
        &[],
        ms(500.0),
    );
    let compounds: Vec<(SimTime, usize, &RtcpCompound, u32)> = (log.iter())
        .filter_map(|(t, from, p)| {
            p.app
                .get::<RtcpCompound>()
                .map(|c| (*t, *from, c, p.size_bytes))
        })
        .collect();
    for (_, _, c, size) in &compounds {
        assert_eq!(
            *size as usize,
            28 + super::super::compound::compound_bytes(c)
        );
    }
    let first_sr = (compounds.iter())
        .find(|x| x.1 == 0)
        .map(|x| x.0)
        .expect("the sender's first compound");
    let heard_at = first_sr + ms(10.0);
    let mut before = 0;
    let mut after = 0;
    for (t, from, c, _) in &compounds {
        if *from == 0 {
            // The media packets sent by then: one every 8 ms from 0.
            let n = (t.as_nanos() / 8_000_000 + 1) as u32;
            assert_eq!(c.sender, Some((n, 1000 * n)), "at {t:?}");
            assert!(c.reports.is_empty(), "the receiver sends no media");
            continue;
        }
        let [rb] = c.reports[..] else {
            panic!("one block about the sender: {c:?}");
        };
        assert_eq!(rb.ssrc, 1);
        // The newest packet arrived 10 ms after it left.
        let newest = ((t.as_nanos() - 10_000_000) / 8_000_000) as u32;
        assert_eq!((rb.ext_highest_seq, rb.cumulative_lost), (newest, 0));
        if *t < heard_at {
            assert_eq!((rb.lsr, rb.dlsr), (None, SimTime::ZERO));
            before += 1;
        } else {
            assert!(rb.lsr.is_some_and(|lsr| lsr >= first_sr));
            assert!(rb.dlsr < *t - first_sr);
            after += 1;
        }
    }
    assert!(before >= 1 && after >= 5, "{before} {after}");
}

/// Feedback for the controller moves the next packet: later (the timer
/// already asked for fires early, sends nothing and waits), or earlier
/// (asked for anew). At 1 Mbit/s, 1040-byte packets are 8.32 ms apart.
#[test]
fn controller_feedback_moves_the_next_media_packet() {
    let feedback = PacketTemplate::session_udp(RTCP_FLOW, Dest::Node(1), 5005, 16).make(0);
    let sent_with = |release_ms: f64| {
        let (cc, script) = ScriptCc::boxed(1e6);
        let mut m =
            member(1, true, SimTime::from_secs(10)).with_cc(Some(PacedMedia::new(cc)), None);
        let mut out = Vec::new();
        m.on_start(SimTime::ZERO, &mut out);
        let mut timers: Vec<(SimTime, u64)> = Vec::new();
        let mut sent = Vec::new();
        let mut take = |now: SimTime, out: &mut Vec<Action>, timers: &mut Vec<(SimTime, u64)>| {
            for a in out.drain(..) {
                match a {
                    Action::Send(p) if p.flow == MEDIA_FLOW => sent.push(now),
                    Action::Timer { at, token } => timers.push((at, token)),
                    _ => {}
                }
            }
        };
        take(SimTime::ZERO, &mut out, &mut timers);
        script.lock().unwrap().release_at = Some(ms(release_ms));
        m.on_packet(ms(1.0), &feedback, &mut out);
        take(ms(1.0), &mut out, &mut timers);
        script.lock().unwrap().release_at = None;
        while let Some(i) = (0..timers.len()).min_by_key(|&i| timers[i]) {
            let (at, token) = timers.remove(i);
            if at > ms(30.0) {
                break;
            }
            m.on_timer(at, token, &mut out);
            take(at, &mut out, &mut timers);
        }
        assert_eq!(script.lock().unwrap().feedback, vec![ms(1.0)]);
        sent
    };
    assert_eq!(sent_with(20.0), [0.0, 20.0, 28.32].map(ms).to_vec());
    assert_eq!(
        sent_with(2.0),
        [0.0, 2.0, 10.32, 18.64, 26.96].map(ms).to_vec()
    );
}

/// A lost media packet under AVPF without NEWPRED: the receiver sees the
/// gap when the next packet arrives and sends a Generic NACK at once
/// (point-to-point: no dither, RFC 4585 3.5.2); the sender places the
/// report and measures its delay from the lost packet's sending (packet
/// 5 left at 40 ms, 6 arrived at 58 ms, the NACK at 68 ms: 28 ms). It
/// repairs nothing: repairs are NEWPRED's.
#[test]
fn a_loss_is_reported_at_once_and_not_repaired_without_newpred() {
    let (m, log) = pair(
        [member(1, true, ms(500.0)), member(2, false, ms(500.0))],
        &[5],
        ms(500.0),
    );
    let nacks: Vec<_> = (log.iter())
        .filter_map(|(t, _, p)| {
            p.app
                .get::<RtcpCompound>()
                .map(|c| (*t, c.nacks.clone(), c.early))
        })
        .filter(|x| !x.1.is_empty())
        .collect();
    assert_eq!(nacks, vec![(ms(58.0), vec![(1, vec![5])], true)]);
    let at = |i: usize, col| value(&m[i].stats(ms(500.0)).unwrap(), col);
    assert_eq!((at(0, "loss_reports"), at(0, "repairs_sent")), (1.0, 0.0));
    assert!((at(0, "loss_report_delay_mean_s") - 0.028).abs() < 1e-9);
    assert_eq!((at(1, "fb_wanted"), at(1, "fb_sent_early")), (1.0, 1.0));
}

/// The number of receivers' losses in `seqs` (one per gap).
fn gaps_seen(seqs: &[u16]) -> f64 {
    let mut r = member(2, false, SimTime::from_secs(10));
    let mut out = Vec::new();
    for (i, &seq) in seqs.iter().enumerate() {
        r.on_packet(
            SimTime::from_millis(i as u64),
            &media_packet(1, seq),
            &mut out,
        );
    }
    value(&r.stats(SimTime::from_secs(1)).unwrap(), "fb_wanted")
}

/// A jump of fewer than 3000 sequence numbers is a gap of lost packets;
/// one of 3000 or more is taken for a packet out of its place (late, or
/// a restarted source) and moves nothing: the next packet in order after
/// it is checked against the sequence before it.
#[test]
fn only_a_jump_under_3000_is_a_loss() {
    assert_eq!(gaps_seen(&[0, 1, 3001, 3002]), 1.0, "2999 lost");
    assert_eq!(
        gaps_seen(&[0, 1, 3002, 2, 3]),
        0.0,
        "3000 ahead: not a loss"
    );
    assert_eq!(gaps_seen(&[0, 1, 3002, 2, 4]), 1.0, "3 lost");
}

/// Series are kept as `measure.series` asks: none at 0 rows.
#[test]
fn series_follow_the_rows_asked_for() {
    let series = |rows: Option<usize>| {
        let (mut m, _) = paced_frames(3 * 1160, 1e6);
        if let Some(r) = rows {
            m.set_series(r);
        }
        drive(&mut m, ms(200.0), |_| {});
        let st = &m.more_stats(ms(200.0))[0];
        st.series.iter().map(|(_, s)| s.len()).sum::<usize>()
    };
    assert_eq!(series(Some(0)), 0);
    assert!(series(Some(1)) <= 5 && series(Some(1)) > 0);
    assert!(series(None) > 10);
}

/// A member that falls silent without a BYE (here the sender, stopped at
/// 100 ms) is timed out by the other after five deterministic intervals
/// (RFC 3550 6.3.5, Tmin 5 s for time-outs: about 25 s), checked once a
/// second; before that it still counts.
#[test]
fn a_silent_member_is_timed_out() {
    let members_at = |until_s: u64| {
        let quiet = member(1, true, ms(100.0));
        let stays = member(2, false, SimTime::from_secs(60));
        let (m, _) = pair([quiet, stays], &[], SimTime::from_secs(until_s));
        value(&m[1].stats(SimTime::from_secs(until_s)).unwrap(), "members")
    };
    assert_eq!(members_at(20), 2.0);
    assert_eq!(members_at(40), 1.0);
}

/// RFC 3611's receiver RTT over the 10 ms path: the member that sends no
/// media (2, `xr_rtt`) puts an RRTR in every regular report; the sender
/// answers each in its next regular report with the RRTR's time and the
/// time it held it, and member 2's RTT is exactly the 20 ms round trip.
/// Without `xr_rtt` member 2 has no RTT and no XR is sent.
#[test]
fn a_member_without_media_gets_its_round_trip_from_dlrr_answers() {
    let run = |xr: bool| {
        let b = member(2, false, SimTime::from_secs(10));
        let b = if xr { b.with_xr_rtt() } else { b };
        pair(
            [member(1, true, SimTime::from_secs(10)), b],
            &[],
            ms(5000.0),
        )
    };
    let (m, log) = run(true);
    let reports = |from: usize| -> Vec<(SimTime, RtcpCompound)> {
        (log.iter())
            .filter(|(_, f, _)| *f == from)
            .filter_map(|(t, _, p)| p.app.get::<RtcpCompound>().map(|c| (*t, c.clone())))
            .filter(|(_, c)| !c.early)
            .collect()
    };
    let (from_a, from_b) = (reports(0), reports(1));
    assert!(from_b.len() >= 3 && from_b.iter().all(|(_, c)| c.rrtr && c.dlrr.is_empty()));
    // Each answer names the latest RRTR that arrived (10 ms after it
    // left) before the answer was sent, with the time held since.
    let mut answered = 0;
    for (t, c) in &from_a {
        assert!(!c.rrtr);
        let heard: Vec<SimTime> = (from_b.iter())
            .map(|(s, _)| *s)
            .filter(|s| *s + ms(10.0) <= *t)
            .collect();
        match (c.dlrr.as_slice(), heard.last()) {
            ([d], Some(&sent)) => {
                assert_eq!((d.ssrc, d.lrr, d.delay), (2, sent, *t - sent - ms(10.0)));
                answered += 1;
            }
            (d, _) => assert!(d.is_empty(), "{t:?} {c:?}"),
        }
    }
    assert!(answered >= 2, "{answered}");
    let stat = |m: &RtpMember, k: &str| value(&m.stats(ms(5000.0)).unwrap(), k);
    assert_eq!(stat(&m[1], "rtt_s"), 0.020);
    assert_eq!(stat(&m[1], "rrtr_sent"), from_b.len() as f64);
    assert_eq!(stat(&m[0], "dlrr_sent"), answered as f64);
    let (m, log) = run(false);
    assert!(stat(&m[1], "rtt_s").is_nan());
    assert!(!log.iter().any(|(_, _, p)| p
        .app
        .get::<RtcpCompound>()
        .is_some_and(|c| c.rrtr || !c.dlrr.is_empty())));
}
