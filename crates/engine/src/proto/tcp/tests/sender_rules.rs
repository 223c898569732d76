//! The sender's segments field by field, its counters and series, the
//! handshake, finite transfers and the checks on incoming ACKs.

use super::*;

fn handshake_cfg() -> TcpConfig {
    let mut c = cfg(Flavor::Sack);
    c.handshake = true;
    c.rwnd_bytes = 40_000;
    c
}

#[test]
fn the_syn_carries_window_and_mss_and_the_syn_ack_times_the_first_rtt() {
    let mut s = TcpSender::new(handshake_cfg(), Some(3500));
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    let h = *out[0].hdr;
    assert_eq!(
        (h.seq, h.ack, h.flags, h.wnd, h.mss),
        (0, 0, SYN, 40_000, MSS as u16)
    );
    assert_eq!(s.stats.segments_sent, 1);
    // A SYN-ACK that does not acknowledge the SYN is ignored.
    let mut bad = ack(2);
    bad.flags = SYN | ACK;
    s.on_segment(t(30), &bad, &mut out);
    assert_eq!(out.len(), 1);
    let mut synack = ack(1);
    synack.flags = SYN | ACK;
    synack.wnd = 2000;
    s.on_segment(t(40), &synack, &mut out);
    assert_eq!(
        s.srtt(),
        Some(t(40)),
        "the SYN's round trip is the first sample"
    );
    assert_eq!(s.stats.rtt_samples, 1);
    // Established, window 2000 bytes from the SYN-ACK: two segments.
    let sent: Vec<(u64, u64, u8, u32)> = out[1..]
        .iter()
        .map(|x| (x.hdr.seq, x.hdr.ack, x.hdr.flags, x.payload))
        .collect();
    assert_eq!(sent, vec![(1, 1, ACK, 1000), (1001, 1, ACK, 1000)]);
    assert!(out[1..].iter().all(|x| x.hdr.wnd == 40_000));
}

/// With the handshake, a finite transfer ends with a FIN on its last
/// segment (one sequence number after the data); without, it just ends.
#[test]
fn a_finite_transfer_ends_with_a_fin_and_counts_its_bytes() {
    let mut c = handshake_cfg();
    c.initial_window = InitialWindow::Segments(10);
    let mut s = TcpSender::new(c.clone(), Some(2500));
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    let mut synack = ack(1);
    synack.flags = SYN | ACK;
    s.on_segment(t(10), &synack, &mut out);
    let segs: Vec<(u64, u32, bool)> = out[1..]
        .iter()
        .map(|x| (x.hdr.seq, x.payload, x.hdr.has(FIN)))
        .collect();
    assert_eq!(
        segs,
        vec![(1, 1000, false), (1001, 1000, false), (2001, 500, true)]
    );
    assert_eq!((s.stats.segments_sent, s.stats.data_bytes_sent), (4, 2500));
    assert_eq!(s.snd_max(), 2502, "500 bytes and the FIN after 2001");
    s.on_segment(t(50), &ack(2001), &mut out);
    assert_eq!(s.bytes_acked(), 2000);
    assert_eq!(s.state, SenderState::Established);
    s.on_segment(t(60), &ack(2501), &mut out);
    assert_eq!(
        s.state,
        SenderState::Established,
        "the FIN is not yet acknowledged"
    );
    s.on_segment(t(70), &ack(2502), &mut out);
    assert_eq!(s.bytes_acked(), 2500, "the FIN is no data byte");
    assert_eq!(s.state, SenderState::Done);
    assert_eq!(s.stats.done_at, Some(t(70)));
    assert_eq!(s.deadline(), None);
    // Without the handshake: no FIN, done when the data is acknowledged.
    c.handshake = false;
    let mut s = TcpSender::new(c, Some(2500));
    out.clear();
    s.start(t(0), &mut out);
    assert!(out.iter().all(|x| !x.hdr.has(FIN)));
    assert_eq!(s.snd_max(), 2501);
    s.on_segment(t(50), &ack(2501), &mut out);
    assert_eq!(s.state, SenderState::Done);
}

#[test]
fn acks_beyond_what_was_sent_or_with_syn_are_ignored() {
    let mut s = TcpSender::new(cfg(Flavor::Sack), None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    let before = (s.snd_una(), s.cwnd());
    s.on_segment(t(10), &ack(s.snd_max() + 1), &mut out);
    let mut syn = ack(seg(1));
    syn.flags = SYN | ACK;
    s.on_segment(t(11), &syn, &mut out);
    assert_eq!((s.snd_una(), s.cwnd()), before);
    s.on_segment(t(12), &ack(s.snd_max()), &mut out);
    assert_eq!(s.snd_una(), seg(4), "an ACK of everything sent is taken");
}

/// Karn: the timed segment is the first new one; its ACK gives the sample,
/// an ACK below its end does not.
#[test]
fn the_rtt_sample_comes_from_the_ack_covering_the_timed_segment() {
    let mut s = TcpSender::new(cfg(Flavor::Sack), None);
    let mut out = Vec::new();
    s.start(t(0), &mut out); // times segment 0, [1, 1001)
    s.on_segment(t(30), &ack(500), &mut out);
    assert_eq!(s.stats.rtt_samples, 0, "below the timed segment's end");
    s.on_segment(t(40), &ack(seg(1)), &mut out);
    assert_eq!(s.stats.rtt_samples, 1);
    assert_eq!(s.srtt(), Some(t(40)));
    let rtts: Vec<f64> = s.series().rtt.points().iter().map(|x| x.1).collect();
    assert_eq!(rtts, vec![0.040]);
}

#[test]
fn series_record_changes_only() {
    let mut s = TcpSender::new(cfg(Flavor::Sack), None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    assert_eq!(s.series().cwnd.points(), &[(t(0), 4000.0)]);
    assert_eq!(s.series().ssthresh.points(), &[(t(0), f64::INFINITY)]);
    assert_eq!(s.series().rto.points(), &[(t(0), 1.0)]);
    assert_eq!(s.series().recovery.points(), &[(t(0), 0.0)]);
    s.on_segment(t(10), &ack(seg(0)), &mut out); // a duplicate: nothing changes
    assert_eq!(s.series().cwnd.points().len(), 1);
    s.on_segment(t(20), &ack(seg(1)), &mut out);
    assert_eq!(s.series().cwnd.points().last(), Some(&(t(20), 5000.0)));
}

#[test]
fn series_off_record_nothing_and_change_nothing_else() {
    let (mut on, mut off) = (
        TcpSender::new(cfg(Flavor::Sack), None),
        TcpSender::new(cfg(Flavor::Sack), None),
    );
    off.set_series(0);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    on.start(t(0), &mut a);
    off.start(t(0), &mut b);
    for (ms, k) in [(40, 1), (50, 1), (60, 3)] {
        on.on_segment(t(ms), &ack(seg(k)), &mut a);
        off.on_segment(t(ms), &ack(seg(k)), &mut b);
    }
    assert_eq!(a, b);
    assert_eq!((on.cwnd(), on.srtt()), (off.cwnd(), off.srtt()));
    assert!(!on.series().cwnd.points().is_empty() && !on.series().rtt.points().is_empty());
    let sr = off.series();
    for x in [
        &sr.cwnd,
        &sr.ssthresh,
        &sr.rtt,
        &sr.srtt,
        &sr.rto,
        &sr.recovery,
    ] {
        assert!(x.points().is_empty());
    }
}

#[test]
fn after_a_timeout_sack_information_is_forgotten() {
    let mut s = TcpSender::new(cfg(Flavor::Sack), None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    s.on_segment(t(10), &ack_sack(seg(0), &[(seg(2), seg(4))]), &mut out);
    s.on_timer(t(1000), &mut out);
    // Everything from snd_una to snd_max (segments 0-4: limited transmit
    // sent 4 on the dupack) counts as in the network again (RFC 6675 5.1
    // lets the sender discard SACK information after an RTO).
    assert_eq!(s.snd_max() - s.snd_una(), 5 * MSS);
    assert_eq!(s.pipe(), 5 * MSS);
}

#[test]
fn the_window_cap_is_in_packets() {
    let mut c = cfg(Flavor::Sack);
    c.initial_window = InitialWindow::Segments(10);
    c.max_window_packets = Some(3);
    let mut s = TcpSender::new(c, None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    assert_eq!(seqs(&out), vec![seg(0), seg(1), seg(2)]);
}

/// A Reno sender without limited transmit, a duplicate-ACK threshold of
/// 1 and an initial window of two segments, started at 0 ms.
fn two_out_with_a_dupthresh_of_one() -> (TcpSender, Vec<Segment>) {
    let mut c = cfg(Flavor::Reno);
    c.limited_transmit = false;
    c.dupthresh = 1;
    c.initial_window = InitialWindow::Segments(2);
    let mut s = TcpSender::new(c, None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    (s, out)
}

/// RFC 5681 eq. 4 on fast retransmit: ssthresh = max(FlightSize / 2,
/// 2 SMSS). With a duplicate-ACK threshold of 1 and two segments out,
/// half the flight is one SMSS: the floor of two applies.
#[test]
fn fast_retransmit_ssthresh_has_a_floor_of_two_segments() {
    let (mut s, mut out) = two_out_with_a_dupthresh_of_one();
    out.clear();
    s.on_segment(t(100), &ack(seg(0)), &mut out);
    assert!(s.in_recovery());
    assert_eq!(seqs(&out)[0], seg(0), "the retransmission first");
    assert_eq!(s.ssthresh(), 2 * MSS);
    assert_eq!(s.cwnd(), 3 * MSS, "ssthresh + dupthresh SMSS");
}

/// The recovery series steps to 1 at a fast retransmit, and the RTO
/// series records the backoff of a time-out (RFC 6298 5.5: doubled).
#[test]
fn series_record_recovery_and_the_rtos_backoff() {
    let (mut s, mut out) = two_out_with_a_dupthresh_of_one();
    s.on_segment(t(100), &ack(seg(0)), &mut out);
    assert_eq!(s.series().recovery.points(), &[(t(0), 0.0), (t(100), 1.0)]);
    let rto = s.series().rto.points().last().expect("recorded").1;
    let at = s.deadline().expect("a retransmission timer");
    s.on_timer(at, &mut out);
    assert_eq!(s.series().rto.points().last(), Some(&(at, 2.0 * rto)));
}

/// RFC 3042: limited transmit sends a new segment only while the data out
/// stays within cwnd + 2 SMSS and the receiver's window.
#[test]
fn limited_transmit_respects_cwnd_plus_two_and_the_receiver_window() {
    let mut c = cfg(Flavor::Reno);
    c.initial_window = InitialWindow::Segments(4);
    let mut s = TcpSender::new(c.clone(), None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    out.clear();
    // Two dupacks: segments 4 and 5 (flight 5, then 6 <= 4 + 2).
    s.on_segment(t(100), &ack(seg(0)), &mut out);
    s.on_segment(t(101), &ack(seg(0)), &mut out);
    assert_eq!(seqs(&out), vec![seg(4), seg(5)]);
    // A receiver window of 4 segments stops it at once.
    let mut s = TcpSender::new(c, None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    out.clear();
    let mut small = ack(seg(0));
    small.wnd = 4 * MSS;
    s.on_segment(t(100), &small, &mut out);
    assert!(out.is_empty(), "flight 4 + 1 > rwnd 4");
}
