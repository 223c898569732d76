//! The receiver's ACK rules, and sender and receiver together through a
//! loopback with scripted losses.

use super::*;

/// A data segment header (the payload length travels beside it).
fn data(seq: u64, _payload: u32) -> TcpHeader {
    TcpHeader {
        seq,
        ack: 1,
        flags: ACK,
        wnd: 1 << 20,
        ..Default::default()
    }
}

#[test]
fn receiver_delays_acks_every_second_segment_and_on_timeout() {
    let mut c = cfg(Flavor::Sack);
    c.delayed_ack = true;
    let mut r = TcpReceiver::new(c);
    let mut out = Vec::new();
    r.on_segment(t(0), &data(seg(0), 1000), 1000, &mut out);
    assert!(out.is_empty(), "first segment: ACK delayed");
    assert_eq!(r.deadline(), Some(t(200)), "delayed-ACK timer 200 ms");
    r.on_segment(t(10), &data(seg(1), 1000), 1000, &mut out);
    assert_eq!(out.len(), 1, "ACK every second full-sized segment");
    assert_eq!(out[0].hdr.ack, seg(2));
    assert_eq!(r.deadline(), None);
    r.on_segment(t(20), &data(seg(2), 1000), 1000, &mut out);
    r.on_timer(t(219), &mut out);
    assert_eq!(out.len(), 1);
    r.on_timer(t(220), &mut out);
    assert_eq!(out.len(), 2, "the timer sends the delayed ACK");
    assert_eq!(r.stats.delayed_acks, 1);
}

#[test]
fn receiver_acks_out_of_order_at_once_with_sack_and_when_a_hole_fills() {
    let mut c = cfg(Flavor::Sack);
    c.delayed_ack = true;
    let mut r = TcpReceiver::new(c);
    let mut out = Vec::new();
    r.on_segment(t(0), &data(seg(0), 1000), 1000, &mut out);
    r.on_segment(t(1), &data(seg(2), 1000), 1000, &mut out);
    assert_eq!(out.len(), 1, "out-of-order segment: immediate ACK");
    assert_eq!(out[0].hdr.ack, seg(1));
    assert_eq!(out[0].hdr.sack_blocks(), &[(seg(2), seg(3))]);
    r.on_segment(t(2), &data(seg(4), 1000), 1000, &mut out);
    assert_eq!(
        out[1].hdr.sack_blocks(),
        &[(seg(4), seg(5)), (seg(2), seg(3))],
        "newest block first"
    );
    r.on_segment(t(3), &data(seg(1), 1000), 1000, &mut out);
    assert_eq!(out.len(), 3, "filling a hole: immediate ACK");
    assert_eq!(out[2].hdr.ack, seg(3));
    assert_eq!(out[2].hdr.sack_blocks(), &[(seg(4), seg(5))]);
    r.on_segment(t(4), &data(seg(0), 1000), 1000, &mut out);
    assert_eq!(out.len(), 4, "duplicate segment: immediate ACK");
    assert_eq!(r.stats.duplicates, 1);
}

/// Loopback: sender and receiver joined by a fixed delay each way; data
/// segments whose (seq, transmission count) is listed are dropped.
pub(super) fn loopback(
    c: TcpConfig,
    bytes: u64,
    drops: &[(u64, u32)],
    one_way: SimTime,
) -> (TcpSender, TcpReceiver, Vec<(SimTime, u64)>) {
    let mut snd = TcpSender::new(c.clone(), Some(bytes));
    let mut rcv = TcpReceiver::new(c);
    let drops: HashSet<(u64, u32)> = drops.iter().copied().collect();
    let mut sent_count: BTreeMap<u64, u32> = BTreeMap::new();
    // (time, order, to_receiver, segment)
    let mut wire: BTreeMap<(SimTime, u64), (bool, Segment)> = BTreeMap::new();
    let mut order = 0u64;
    let mut out = Vec::new();
    let mut log = Vec::new();
    let mut now = SimTime::ZERO;
    snd.start(now, &mut out);
    for _ in 0..100_000 {
        for s in out.drain(..) {
            let n = sent_count.entry(s.hdr.seq).or_default();
            *n += 1;
            if s.payload > 0 {
                log.push((now, s.hdr.seq));
            }
            if !drops.contains(&(s.hdr.seq, *n)) || s.payload == 0 {
                wire.insert((now + one_way, order), (true, s));
                order += 1;
            }
        }
        let mut acks = Vec::new();
        // next event: wire delivery or a timer
        let next_wire = wire.keys().next().copied();
        let timers = [snd.deadline(), rcv.deadline()].into_iter().flatten().min();
        match (next_wire, timers) {
            (Some(w), Some(tm)) if tm < w.0 => {
                now = tm;
                snd.on_timer(now, &mut out);
                rcv.on_timer(now, &mut acks);
            }
            (Some(w), _) => {
                let (_, s) = wire.remove(&w).unwrap();
                now = w.0;
                if s.hdr.flags & SYN != 0 && s.hdr.flags & ACK != 0
                    || (s.payload == 0 && s.hdr.flags & FIN == 0 && s.hdr.seq == 1)
                {
                    snd.on_segment(now, &s.hdr, &mut out);
                } else {
                    rcv.on_segment(now, &s.hdr, s.payload, &mut acks);
                }
            }
            (None, Some(tm)) => {
                now = tm;
                snd.on_timer(now, &mut out);
                rcv.on_timer(now, &mut acks);
            }
            (None, None) => break,
        }
        for a in acks {
            wire.insert((now + one_way, order), (false, a));
            order += 1;
        }
        if snd.state == SenderState::Done && out.is_empty() && wire.is_empty() {
            break;
        }
    }
    (snd, rcv, log)
}

#[test]
fn every_flavor_delivers_a_transfer_through_multiple_losses_per_window() {
    for flavor in [Flavor::Reno, Flavor::NewReno, Flavor::Sack] {
        let mut c = cfg(flavor);
        c.handshake = true;
        c.delayed_ack = true;
        c.initial_window = InitialWindow::Segments(10);
        let drops = [
            (seg(3), 1),
            (seg(6), 1),
            (seg(7), 1),
            (seg(20), 1),
            (seg(20), 2),
        ];
        let (snd, rcv, _) = loopback(c, 40_000, &drops, t(25));
        assert_eq!(snd.state, SenderState::Done, "{flavor:?}");
        assert_eq!(rcv.bytes_in_order(), 40_000, "{flavor:?}");
        assert!(rcv.stats.done_at.is_some());
        assert!(
            snd.stats.retransmissions >= 5,
            "{flavor:?}: {:?}",
            snd.stats
        );
    }
}

#[test]
fn sack_repairs_three_losses_in_one_window_without_timeout_newreno_needs_more_rtts() {
    let mut results = Vec::new();
    for flavor in [Flavor::NewReno, Flavor::Sack] {
        let mut c = cfg(flavor);
        c.initial_window = InitialWindow::Segments(20);
        let drops = [(seg(2), 1), (seg(5), 1), (seg(9), 1)];
        // 60 segments, so new data is always available (no rescue
        // retransmission at the tail, RFC 6675 NextSeg rule 4).
        let (snd, _, log) = loopback(c, 60_000, &drops, t(50));
        assert_eq!(snd.stats.timeouts, 0, "{flavor:?}");
        assert_eq!(snd.stats.fast_recoveries, 1, "{flavor:?}");
        assert_eq!(
            snd.stats.retransmissions, 3,
            "{flavor:?}: only the lost segments"
        );
        let second = |k: u64| log.iter().filter(|x| x.1 == seg(k)).nth(1).unwrap().0;
        results.push(second(9) - second(2));
    }
    // NewReno repairs one hole per RTT (100 ms here): the third hole goes
    // two RTTs after the first. SACK repairs all three within one RTT.
    assert!(results[0] >= t(200), "{results:?}");
    assert!(results[1] < t(100), "{results:?}");
}

/// ns-2's NewReno halves the window (`window()`), RFC 6582 the flight
/// size: with 6 segments to send under a window of 10, ssthresh is 5
/// segments in the one and 3 in the other.
#[test]
fn newreno_ns2_variant_halves_the_window_not_the_flight() {
    for (recovery, want) in [
        (NewRenoRecovery::Ns2, 5 * MSS),
        (NewRenoRecovery::Rfc6582, 3 * MSS),
    ] {
        let mut c = cfg(Flavor::NewReno);
        c.limited_transmit = false;
        c.initial_window = InitialWindow::Segments(10);
        c.newreno_recovery = recovery;
        let mut s = TcpSender::new(c, Some(6 * MSS));
        let mut out = Vec::new();
        s.start(t(0), &mut out);
        assert_eq!(s.snd_max(), seg(6), "all 6 segments out");
        for i in 0..3 {
            s.on_segment(t(100 + i), &ack(seg(0)), &mut out);
        }
        assert!(s.in_recovery());
        assert_eq!(s.ssthresh(), want, "{recovery:?}");
    }
}

#[test]
fn newreno_ns2_variant_resets_window_to_ssthresh_on_partial_and_full_acks() {
    let mut c = cfg(Flavor::NewReno);
    c.limited_transmit = false;
    c.initial_window = InitialWindow::Segments(10);
    c.newreno_recovery = NewRenoRecovery::Ns2;
    let mut s = TcpSender::new(c, None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    for i in 0..4 {
        s.on_segment(t(100 + i), &ack(seg(0)), &mut out);
    }
    assert_eq!(s.ssthresh(), 5 * MSS, "half the window");
    assert_eq!(
        s.cwnd(),
        9 * MSS,
        "ssthresh + 3 SMSS, one more for the fourth dupack"
    );
    s.on_segment(t(200), &ack(seg(5)), &mut out);
    assert!(s.in_recovery());
    assert_eq!(
        s.cwnd(),
        5 * MSS,
        "partial ACK: all inflation removed (ns-2 dupwnd_ = 0)"
    );
    let high = s.snd_max();
    s.on_segment(t(300), &ack(high), &mut out);
    assert!(!s.in_recovery());
    assert_eq!(
        s.cwnd(),
        5 * MSS,
        "full ACK: cwnd = ssthresh (RFC 6582 option 2)"
    );
}
