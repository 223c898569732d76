//! Arrivals through both formats and back: what the sender learns is what
//! happened, to the format's resolution.
use super::*;
use crate::sim::SimTime;
use crate::wire::rtcp::{Metric, RtcpPacket, Status};

/// Sends `n` packets from extended number `first`, 5 ms apart, 1000 bytes;
/// those in `lost` never arrive, the others after `transit` plus `extra(i)`.
fn exchange(
    format: Format,
    first: u64,
    n: u64,
    lost: &[u64],
    extra: impl Fn(u64) -> SimTime,
    flush_every: u64,
) -> (Vec<PacketResult>, Vec<(u64, SimTime)>, usize) {
    let mut log = ArrivalLog::new(format, 2, 1);
    let mut hist = SendHistory::new(4096);
    let transit = SimTime::from_millis(30);
    let mut results = Vec::new();
    let mut truth = Vec::new();
    let mut messages = 0;
    for i in 0..n {
        let seq = first + i;
        let sent = SimTime::from_millis(1000 + 5 * i);
        hist.on_sent(seq, sent, 1000);
        if !lost.contains(&i) {
            let at = sent + transit + extra(i);
            // The receiver sees a 16-bit number and extends it.
            let ext = extend16(seq as u16, log.highest().unwrap_or(first));
            assert_eq!(ext, seq);
            log.on_packet(at, ext, (i % 4) as u8);
            truth.push((seq, at));
        }
        if (i + 1) % flush_every == 0 || i + 1 == n {
            let now = sent + transit + extra(i) + SimTime::from_millis(1);
            for m in log.flush(now) {
                let mut b = Vec::new();
                m.emit(&mut b);
                let (parsed, _) = crate::wire::rtcp::RtcpPacket::parse(&b).expect("valid");
                assert_eq!(parsed, m);
                messages += 1;
                results.extend(hist.on_feedback(now + transit, &parsed));
            }
        }
    }
    (results, truth, messages)
}

fn check(
    results: &[PacketResult],
    truth: &[(u64, SimTime)],
    (first, n): (u64, u64),
    lost: &[u64],
    tol_ns: u64,
) {
    assert_eq!(results.len() as u64, n, "every packet reported once");
    for r in results {
        let i = r.seq - first;
        match truth.iter().find(|t| t.0 == r.seq) {
            Some(&(_, at)) => {
                let got = r.arrival.expect("received with a time");
                assert!(
                    r.received && got.as_nanos().abs_diff(at.as_nanos()) <= tol_ns,
                    "{r:?} vs {at:?}"
                );
            }
            None => assert!(lost.contains(&i) && !r.received && r.arrival.is_none()),
        }
        assert_eq!(r.bytes, 1000);
    }
}

#[test]
fn rfc8888_reports_arrivals_to_half_a_1024th_and_ecn() {
    let lost = [3, 4, 50];
    let (res, truth, msgs) = exchange(
        Format::Rfc8888,
        65_500,
        120,
        &lost,
        |i| SimTime::from_micros(37 * i),
        10,
    );
    // 1/2048 s from rounding the offset, 1/65536 s from the timestamp.
    check(&res, &truth, (65_500, 120), &lost, 488_282 + 15_259 + 1);
    assert_eq!(msgs, 12);
    // ECN bits come back as received.
    let r = res.iter().find(|r| r.seq == 65_501).unwrap();
    assert_eq!(r.ecn, 1);
}

#[test]
fn twcc_reports_arrivals_to_250_us_across_wraps_and_long_gaps() {
    let lost = [0, 7, 8, 9, 10, 11, 12, 13, 14, 99];
    // Packet 60 arrives 9 s late: its delta does not fit 16 bits, so the
    // message splits there; packets 61.. are reordered before it.
    let (res, truth, msgs) = exchange(
        Format::Twcc,
        65_530,
        100,
        &lost,
        |i| {
            if i == 60 {
                SimTime::from_secs(9)
            } else {
                SimTime::from_micros(113 * i)
            }
        },
        100,
    );
    // The receiver learns of the session at its first arrival, and a
    // message ends at the highest packet received: packets 0 and 99 (lost,
    // at the ends) are not reported.
    check(&res, &truth, (65_530, 98), &lost, 250_000);
    assert_eq!(res[0].seq, 65_531);
    assert!(msgs >= 2, "{msgs}");
}

/// Losses at the start of a message's range (packets 10, 11, 20, 30 and
/// 31 follow the last packet an earlier message reported) are reported
/// lost at the head of the next message, in both formats: every packet
/// from the first received to the last is reported once.
#[test]
fn losses_at_the_start_of_a_range_are_reported() {
    let lost = [10, 11, 20, 30, 31, 35];
    for format in [Format::Twcc, Format::Rfc8888] {
        let (res, truth, msgs) = exchange(
            format,
            65_530,
            40,
            &lost,
            |i| SimTime::from_micros(113 * i),
            10,
        );
        check(&res, &truth, (65_530, 40), &lost, 500_000);
        assert_eq!(
            res.iter().filter(|r| !r.received).count(),
            lost.len(),
            "{format:?}"
        );
        assert_eq!(msgs, 4, "{format:?}");
    }
    // The message after packet 9's starts at lost packet 10, and its first
    // receive delta (packet 12's) counts from the reference time.
    let mut log = ArrivalLog::new(Format::Twcc, 2, 1);
    log.on_packet(SimTime::from_millis(5), 9, 0);
    log.flush(SimTime::from_millis(6));
    log.on_packet(SimTime::from_millis(70), 12, 0);
    let RtcpPacket::Twcc(t) = log.flush(SimTime::from_millis(71)).remove(0) else {
        panic!("a TWCC message");
    };
    assert_eq!(t.base_seq, 10);
    assert_eq!(t.reference_time, 1);
    assert_eq!(
        t.statuses,
        [
            Status::NotReceived,
            Status::NotReceived,
            Status::Received(24)
        ]
    );
}

#[test]
fn nothing_new_sends_nothing_and_old_reports_are_unmatched() {
    let mut log = ArrivalLog::new(Format::Rfc8888, 2, 1);
    assert!(log.flush(SimTime::ZERO).is_empty());
    log.on_packet(SimTime::from_millis(1), 5, 0);
    assert_eq!(log.flush(SimTime::from_millis(2)).len(), 1);
    assert_eq!(log.held(), 0, "nothing reported lost: nothing kept");
    assert!(log.flush(SimTime::from_millis(3)).is_empty());
    // Older than the first packet logged: not reported.
    log.on_packet(SimTime::from_millis(4), 4, 0);
    assert!(log.flush(SimTime::from_millis(5)).is_empty());
    // A history of 2 after 5 sends: 3 reports below it.
    assert_eq!(matched_of(2, 5, 5), (2, 3));
    // Reports of packets not sent yet (above the history) are unmatched
    // too, each counted.
    assert_eq!(matched_of(8, 1, 3), (1, 2));
}

/// Packets 0..`sent` sent into a history of `capacity`, packets
/// 0..`reported` reported received in one TWCC message: the results
/// matched and the reports left unmatched.
fn matched_of(capacity: usize, sent: u64, reported: u64) -> (usize, u64) {
    let mut hist = SendHistory::new(capacity);
    for s in 0..sent {
        hist.on_sent(s, SimTime::ZERO, 100);
    }
    let mut l = ArrivalLog::new(Format::Twcc, 2, 1);
    for s in 0..reported {
        l.on_packet(SimTime::from_millis(10), s, 0);
    }
    let msg = l.flush(SimTime::from_millis(11)).remove(0);
    let res = hist.on_feedback(SimTime::from_millis(20), &msg);
    (res.len(), hist.unmatched)
}

/// One packet a second for 70 s: the history keeps only those sent in
/// the last 60 s (libwebrtc's window), whatever its capacity; a report
/// about packet 0 (sent at 0 s, reported at 70 s) is unmatched, one about
/// packet 10 (sent at 10 s, exactly 60 s before the newest) is matched.
#[test]
fn the_history_forgets_packets_older_than_its_window() {
    let mut hist = SendHistory::new(1 << 15);
    for s in 0..=70 {
        hist.on_sent(s, SimTime::from_secs(s), 100);
    }
    let mut l = ArrivalLog::new(Format::Twcc, 2, 1);
    for s in [0, 10] {
        l.on_packet(SimTime::from_secs(70), s, 0);
    }
    let msg = l.flush(SimTime::from_secs(70)).remove(0);
    let res = hist.on_feedback(SimTime::from_secs(70), &msg);
    let matched: Vec<u64> = res.iter().filter(|r| r.received).map(|r| r.seq).collect();
    assert_eq!(matched, [10]);
    assert_eq!(res[0].sent_at, SimTime::from_secs(10));
    assert!(hist.unmatched >= 1);
}

#[test]
fn sequence_numbers_extend_to_the_nearest() {
    assert_eq!(extend16(2, 65_535), 65_538);
    assert_eq!(extend16(65_535, 65_538), 65_535);
    assert_eq!(extend16(7, 7), 7);
    assert_eq!(extend16(65_535, 0), 65_535); // never below zero
                                             // A tie (2^15 either way) goes to the lower value.
    assert_eq!(extend16(0, 0x1_8000), 0x1_0000);
    assert_eq!(extend16(0x8000, 0), 0x8000);
}

/// The definition: of the values congruent to `s` in the 2^16 blocks
/// around `near`'s, the nearest, the lower on a tie, never below zero.
fn extend16_by_candidates(s: u16, near: u64) -> u64 {
    let base = near & !0xFFFF;
    let below = base.checked_sub(0x1_0000).map(|b| b | s as u64);
    [
        below,
        Some(base | s as u64),
        Some((base + 0x1_0000) | s as u64),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|&c| c.abs_diff(near))
    .expect("candidates")
}

#[test]
fn sequence_numbers_extend_as_the_nearest_candidate_does() {
    let mut rng = crate::sim::RngStreams::new(3, 0).stream("extend16");
    let mut near_values: Vec<u64> = vec![
        0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1_0000, 0x1_7FFF, 0x1_8000, 0x1_8001,
    ];
    near_values.extend((0..2000).map(|_| (crate::sim::uniform(&mut rng) * 3e6) as u64));
    for near in near_values {
        let s_values = [
            near as u16,
            (near as u16).wrapping_add(0x8000),
            (near as u16).wrapping_add(0x7FFF),
            (near as u16).wrapping_sub(0x7FFF),
            0,
            0xFFFF,
            (crate::sim::uniform(&mut rng) * 65536.0) as u16,
        ];
        for s in s_values {
            assert_eq!(
                extend16(s, near),
                extend16_by_candidates(s, near),
                "s {s} near {near}"
            );
        }
    }
}

/// A feedback message in a packet writes its own bytes (pcap): parsed
/// back, it is the message.
#[test]
fn a_message_emits_its_wire_bytes() {
    use crate::net::AppPayload;
    let mut log = ArrivalLog::new(Format::Rfc8888, 2, 1);
    for s in [0, 1, 3] {
        log.on_packet(SimTime::from_millis(10 + s), s, 1);
    }
    let m = log.flush(SimTime::from_millis(20)).remove(0);
    let mut buf = vec![0u8; m.wire_len()];
    let p = crate::net::packet::test_packet(0, 0, 100);
    FeedbackMessage(m.clone()).emit(&p, SimTime::ZERO, &mut buf);
    let (parsed, _) = crate::wire::rtcp::RtcpPacket::parse(&buf).expect("valid");
    assert_eq!(parsed, m);
}

fn ccfb(begin_seq: u16, report_timestamp: u32, metrics: Vec<Metric>) -> RtcpPacket {
    RtcpPacket::Ccfb(crate::wire::rtcp::ccfb::Ccfb {
        sender_ssrc: 2,
        blocks: vec![crate::wire::rtcp::ccfb::CcfbBlock {
            media_ssrc: 1,
            begin_seq,
            metrics,
        }],
        report_timestamp,
    })
}

/// RFC 8888 3.1: an arrival time offset of 0x1FFE means over-range and
/// 0x1FFF unavailable: received, time unknown; 0x1FFD is a time,
/// 0x1FFD / 1024 s before the report.
#[test]
fn rfc8888_over_range_and_unavailable_offsets() {
    let mut hist = SendHistory::new(16);
    for s in 0..3 {
        hist.on_sent(s, SimTime::from_secs(1), 100);
    }
    // Reported at 10 s (NTP short 10 << 16).
    let rx = |ato| Metric::Received { ecn: 0, ato };
    let msg = ccfb(0, 10 << 16, vec![rx(0x1FFD), rx(0x1FFE), rx(0x1FFF)]);
    let res = hist.on_feedback(SimTime::from_secs(10), &msg);
    let back = 0x1FFD_u64 * 1_000_000_000 / 1024;
    assert_eq!(
        res[0].arrival,
        Some(SimTime::from_nanos(10_000_000_000 - back))
    );
    assert!(res[1..].iter().all(|r| r.received && r.arrival.is_none()));
}

/// An RFC 8888 report about packets the history no longer holds counts
/// them unmatched, one each.
#[test]
fn rfc8888_reports_below_the_history_are_unmatched() {
    let mut hist = SendHistory::new(2);
    for s in 0..5 {
        hist.on_sent(s, SimTime::ZERO, 100);
    }
    let msg = ccfb(0, 1 << 16, vec![Metric::Lost; 5]);
    let res = hist.on_feedback(SimTime::from_secs(1), &msg);
    assert_eq!((res.len(), hist.unmatched), (2, 3));
}

/// Past 65,536 s (18.2 h) the report timestamp wraps: it is taken as the
/// one nearest before the message's arrival, and arrivals come out right.
#[test]
fn rfc8888_report_times_unwrap_past_eighteen_hours() {
    let (mut log, mut hist) = (ArrivalLog::new(Format::Rfc8888, 2, 1), SendHistory::new(16));
    let t0 = SimTime::from_secs(70_000);
    for s in 0..4 {
        let sent = t0 + SimTime::from_millis(10 * s);
        hist.on_sent(s, sent, 100);
        log.on_packet(sent + SimTime::from_millis(30), s, 0);
    }
    let now = t0 + SimTime::from_millis(100);
    let msg = log.flush(now).remove(0);
    let res = hist.on_feedback(now + SimTime::from_millis(30), &msg);
    for r in &res {
        let want = r.sent_at + SimTime::from_millis(30);
        let got = r.arrival.expect("a time");
        assert!(
            got.as_nanos().abs_diff(want.as_nanos()) < 1_000_000,
            "{got:?} {want:?}"
        );
    }
}

/// More packets than one message holds arrive before a flush: the log
/// keeps the newest MAX_REPORTS (16,384, RFC 8888 3.1) in order, and the
/// message reports each at its own time; the highest number is known.
#[test]
fn a_log_longer_than_a_message_keeps_the_newest_in_order() {
    use crate::wire::rtcp::ccfb::MAX_REPORTS;
    let n = 20_000u64;
    let mut log = ArrivalLog::new(Format::Rfc8888, 2, 1);
    let mut hist = SendHistory::new(n as usize);
    // 250 us apart: the oldest reported is 4.1 s old, within RFC 8888's
    // 13-bit offset (8 s).
    let at = |seq: u64| SimTime::from_micros(1_000_000 + 250 * seq);
    assert_eq!(log.highest(), None);
    for seq in 0..n {
        hist.on_sent(seq, at(seq) - SimTime::from_millis(30), 1000);
        log.on_packet(at(seq), seq, 0);
    }
    assert_eq!(log.highest(), Some(n - 1));
    // Older arrivals are let go as newer ones come: the log stays bounded.
    assert_eq!(log.held(), MAX_REPORTS);
    let now = at(n);
    let msgs = log.flush(now);
    assert_eq!(msgs.len(), 1);
    let res = hist.on_feedback(now, &msgs[0]);
    assert_eq!(res.len(), MAX_REPORTS);
    let first = n - MAX_REPORTS as u64;
    for (r, seq) in res.iter().zip(first..) {
        assert_eq!(r.seq, seq);
        let got = r.arrival.expect("received with a time");
        // 1/2048 s from rounding the offset, 1/65536 s from the timestamp.
        let tol = 488_282 + 15_259 + 1;
        assert!(got.as_nanos().abs_diff(at(seq).as_nanos()) <= tol, "{r:?}");
    }
}

/// The log's append for the next packet in order leaves it as the general
/// path would: arrivals in order, with gaps, late and duplicate packets,
/// jumps past MAX_REPORTS, flushed now and then, give the same messages
/// either way, in both formats.
#[test]
fn the_in_order_append_is_the_general_path() {
    use crate::wire::rtcp::ccfb::MAX_REPORTS;
    let mut rng = crate::sim::RngStreams::new(5, 0).stream("log");
    for format in [Format::Rfc8888, Format::Twcc] {
        let (mut fast, mut general) =
            (ArrivalLog::new(format, 1, 2), ArrivalLog::new(format, 1, 2));
        let (mut seq, mut now, mut messages) = (100u64, SimTime::ZERO, 0);
        for i in 0..20_000u64 {
            let u = crate::sim::uniform(&mut rng);
            seq = if u < 0.8 {
                seq + 1
            } else if u < 0.9 {
                seq + 2 + (crate::sim::uniform(&mut rng) * 5.0) as u64
            } else if u < 0.98 {
                seq.saturating_sub((crate::sim::uniform(&mut rng) * 8.0) as u64)
            } else if u < 0.99 {
                seq
            } else {
                seq + MAX_REPORTS as u64 + (crate::sim::uniform(&mut rng) * 100.0) as u64
            };
            now += SimTime::from_micros(200 + (crate::sim::uniform(&mut rng) * 3000.0) as u64);
            let ecn = (i % 4) as u8;
            fast.on_packet(now, seq, ecn);
            general.on_packet_general(now, seq, ecn);
            assert_eq!(
                (fast.highest(), fast.held()),
                (general.highest(), general.held())
            );
            if crate::sim::uniform(&mut rng) < 0.05 {
                let (a, b) = (fast.flush(now), general.flush(now));
                messages += a.len();
                assert_eq!(a, b);
            }
        }
        assert!(messages > 500, "{messages}");
    }
}

/// The first packet number a message reports.
fn begin_of(m: &RtcpPacket) -> u16 {
    match m {
        RtcpPacket::Ccfb(c) => c.blocks[0].begin_seq,
        RtcpPacket::Twcc(t) => t.base_seq,
        _ => panic!("not feedback"),
    }
}

/// Each message of `msgs` through the wire and the sender's history at
/// `now`: the results the controller is handed.
fn through(hist: &mut SendHistory, now: SimTime, msgs: &[RtcpPacket]) -> Vec<PacketResult> {
    let mut out = Vec::new();
    for m in msgs {
        let mut b = Vec::new();
        m.emit(&mut b);
        let (parsed, _) = RtcpPacket::parse(&b).expect("valid");
        assert_eq!(&parsed, m);
        out.extend(hist.on_feedback(now, &parsed));
    }
    out
}

/// A packet that arrives after a message reported it lost (a path that
/// reorders) is reported again: the next message starts at it and
/// reports the packets after it once more, in both formats. The sender
/// hands the controller that packet, received at its own arrival time,
/// and the new ones; not those it has had already.
#[test]
fn a_late_packet_is_reported_again_from_where_it_falls() {
    let ms = SimTime::from_millis;
    let sent = |s: u64| ms(1000 + 5 * s);
    // Packet 4 is 40 ms later than the others: it comes after 11.
    let arrive = |s: u64| sent(s) + ms(if s == 4 { 70 } else { 30 });
    for format in [Format::Rfc8888, Format::Twcc] {
        let mut log = ArrivalLog::new(format, 2, 1);
        let mut hist = SendHistory::new(64);
        for s in 0..12 {
            hist.on_sent(s, sent(s), 1000);
        }
        for s in (0..10).filter(|&s| s != 4) {
            log.on_packet(arrive(s), s, 0);
        }
        let m1 = log.flush(ms(1080));
        let r1 = through(&mut hist, ms(1110), &m1);
        let lost: Vec<u64> = r1.iter().filter(|r| !r.received).map(|r| r.seq).collect();
        assert_eq!((r1.len(), lost), (10, vec![4]), "{format:?}");
        for s in [10, 11, 4] {
            log.on_packet(arrive(s), s, 0);
        }
        assert_eq!(log.reported_late, 1);
        let m2 = log.flush(ms(1100));
        assert_eq!(begin_of(&m2[0]), 4, "{format:?}: starts at the late packet");
        let r2 = through(&mut hist, ms(1130), &m2);
        let seqs: Vec<u64> = r2.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [4, 10, 11], "{format:?}");
        for r in &r2 {
            let at = r.arrival.expect("received with a time");
            assert!(
                at.as_nanos().abs_diff(arrive(r.seq).as_nanos()) < 1_000_000,
                "{r:?}"
            );
        }
        assert_eq!(hist.recovered, 1);
        assert!(log.flush(ms(1200)).is_empty(), "nothing new since");
    }
}

/// The log keeps what a message reported for 500 ms (as long as
/// libwebrtc keeps arrivals, kBackWindow), from the lowest packet reported
/// lost on: packet 2, reported lost at 130 ms, is reported again if it
/// comes at 629 ms, not at 630 ms. Once nothing reported lost is kept,
/// the log empties at each message.
#[test]
fn a_late_packet_is_reported_only_within_500_ms_of_its_report() {
    let ms = SimTime::from_millis;
    for (late_ms, reported, held_after) in [(629, 1, 0), (630, 0, 1)] {
        let mut log = ArrivalLog::new(Format::Rfc8888, 2, 1);
        for (s, at) in [(0, 100), (1, 110), (3, 120)] {
            log.on_packet(ms(at), s, 0);
        }
        assert_eq!(begin_of(&log.flush(ms(130))[0]), 0);
        assert_eq!(
            log.held(),
            2,
            "2 and 3 kept: from the packet reported lost on"
        );
        log.on_packet(ms(600), 4, 0);
        assert_eq!(begin_of(&log.flush(ms(610))[0]), 4);
        assert_eq!(log.held(), 3, "2 to 4 kept");
        log.on_packet(ms(late_ms), 2, 0);
        assert_eq!(log.reported_late, reported, "packet 2 at {late_ms} ms");
        let m = log.flush(ms(640));
        assert_eq!(m.len() as u64, reported);
        if let Some(m) = m.first() {
            assert_eq!(begin_of(m), 2);
        }
        assert_eq!(log.held(), held_after, "packet 2 at {late_ms} ms");
        // Packet 2's message is gone: nothing reported lost is kept, so
        // the next message empties the log.
        log.on_packet(ms(650), 5, 0);
        assert_eq!(begin_of(&log.flush(ms(660))[0]), 5);
        assert_eq!(log.held(), 0, "packet 2 at {late_ms} ms");
    }
}

/// The log's books hold wherever the numbers begin: from 1000, the
/// packet reported lost (1002) is kept with those after it and reported
/// again when it comes; a copy of the first packet logged (at 0) is a
/// duplicate, not the next packet.
#[test]
fn the_log_keeps_its_books_from_any_first_number() {
    let ms = SimTime::from_millis;
    let mut log = ArrivalLog::new(Format::Rfc8888, 2, 1);
    for (s, at) in [(1000, 100), (1001, 110), (1003, 120)] {
        log.on_packet(ms(at), s, 0);
    }
    assert_eq!(begin_of(&log.flush(ms(130))[0]), 1000);
    assert_eq!(log.held(), 2, "1002 and 1003");
    log.on_packet(ms(200), 1002, 0);
    assert_eq!(log.reported_late, 1);
    assert_eq!(begin_of(&log.flush(ms(210))[0]), 1002);

    let mut log = ArrivalLog::new(Format::Rfc8888, 2, 1);
    for s in 0..3 {
        log.on_packet(ms(100 + s), s, 0);
    }
    log.on_packet(ms(150), 0, 1);
    assert_eq!((log.highest(), log.held()), (Some(2), 3));
    let RtcpPacket::Ccfb(c) = &log.flush(ms(160))[0] else {
        panic!("RFC 8888")
    };
    assert_eq!(c.blocks[0].metrics.len(), 3);
    assert!(
        matches!(c.blocks[0].metrics[0], Metric::Received { ecn: 0, .. }),
        "the first copy's"
    );
}

/// A packet reported lost that comes late is still reported again after
/// a jump that moves the log's floor (the newest less MAX_REPORTS - 1)
/// up to it, past an older packet still missing: the message starts at
/// it.
#[test]
fn a_late_packet_at_the_floor_of_a_jump_is_reported_again() {
    use crate::wire::rtcp::ccfb::MAX_REPORTS;
    let ms = SimTime::from_millis;
    let mut log = ArrivalLog::new(Format::Rfc8888, 2, 1);
    // 10 and 50 reported lost: the log keeps 10 on; 50 comes late.
    for s in (0..100).filter(|&s| s != 10 && s != 50) {
        log.on_packet(ms(100), s, 0);
    }
    log.flush(ms(110));
    log.on_packet(ms(120), 50, 0);
    let newest = 50 + MAX_REPORTS as u64 - 1;
    log.on_packet(ms(130), newest, 0);
    let m = log.flush(ms(140));
    assert_eq!(begin_of(&m[0]), 50);
    let RtcpPacket::Ccfb(c) = &m[0] else {
        panic!("RFC 8888")
    };
    assert_eq!(c.blocks[0].metrics.len(), MAX_REPORTS);
}

/// The sender passes a packet on once, and once more when a message says
/// received a packet an earlier one said lost (counted in `recovered`);
/// a packet reported again as before, or lost after received, is not
/// passed on (libwebrtc passes a repeated loss on again).
#[test]
fn the_history_passes_on_only_what_is_new() {
    let mut hist = SendHistory::new(16);
    for s in 0..4 {
        hist.on_sent(s, SimTime::from_secs(1), 100);
    }
    let rx = Metric::Received { ecn: 0, ato: 10 };
    let at = SimTime::from_secs(2);
    let m1 = ccfb(0, 2 << 16, vec![rx, Metric::Lost, rx, Metric::Lost]);
    assert_eq!(hist.on_feedback(at, &m1).len(), 4);
    let m2 = ccfb(1, 2 << 16, vec![rx, Metric::Lost, Metric::Lost]);
    let r2 = hist.on_feedback(at, &m2);
    assert_eq!(
        r2.iter().map(|r| (r.seq, r.received)).collect::<Vec<_>>(),
        [(1, true)]
    );
    assert_eq!(hist.recovered, 1);
    let m3 = ccfb(0, 2 << 16, vec![rx, rx]);
    assert!(hist.on_feedback(at, &m3).is_empty());
    assert_eq!((hist.recovered, hist.unmatched), (1, 0));
}
