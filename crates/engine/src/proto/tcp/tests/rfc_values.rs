//! Exact values the RFCs give, step by step: NewReno's full and partial
//! ACKs with both timer variants (RFC 6582), RFC 6675's duplicate-ACK rule
//! and pipe, the ssthresh floor (RFC 5681 eq. 4) and the receive window.

use super::*;

/// A sender of `iw` segments (no handshake, no limited transmit) that has
/// sent its initial window at t = 0.
fn started(flavor: Flavor, iw: u32, tune: impl FnOnce(&mut TcpConfig)) -> TcpSender {
    let mut c = cfg(flavor);
    c.limited_transmit = false;
    c.initial_window = InitialWindow::Segments(iw);
    tune(&mut c);
    let mut s = TcpSender::new(c, None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    assert_eq!(out.len(), iw as usize);
    s
}

fn dupacks(s: &mut TcpSender, n: usize, at_ms: u64) -> Vec<u64> {
    let mut out = Vec::new();
    for i in 0..n {
        s.on_segment(t(at_ms + i as u64), &ack(s.snd_una()), &mut out);
    }
    seqs(&out)
}

/// RFC 6582 3.2 step 3, option 1: on the full ACK,
/// cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
#[test]
fn newreno_full_ack_sets_cwnd_from_the_flight_left() {
    let mut s = started(Flavor::NewReno, 10, |_| {});
    // Segment 0 lost: three dupacks retransmit it, ssthresh = 10/2 = 5 MSS,
    // cwnd = 8 MSS; four more inflate cwnd to 12 MSS, which lets segments
    // 10 and 11 out (10 MSS outstanding).
    assert_eq!(dupacks(&mut s, 3, 100), vec![seg(0)]);
    assert_eq!((s.ssthresh(), s.cwnd()), (5 * MSS, 8 * MSS));
    assert_eq!(dupacks(&mut s, 4, 110), vec![seg(10), seg(11)]);
    assert_eq!(s.cwnd(), 12 * MSS);
    let mut out = Vec::new();
    s.on_segment(t(200), &ack(seg(10)), &mut out);
    assert!(!s.in_recovery());
    // FlightSize after the ACK: segments 10 and 11 = 2 MSS.
    assert_eq!(s.cwnd(), (5 * MSS).min(2 * MSS + MSS));
    assert_eq!(s.cwnd(), 3 * MSS);
}

#[test]
fn newreno_full_ack_with_a_large_flight_is_capped_at_ssthresh() {
    let mut s = started(Flavor::NewReno, 10, |_| {});
    dupacks(&mut s, 3, 100);
    dupacks(&mut s, 10, 110); // cwnd 18 MSS: segments 10..17 out
    assert_eq!(s.snd_max(), seg(18));
    let mut out = Vec::new();
    s.on_segment(t(200), &ack(seg(10)), &mut out);
    assert_eq!(s.cwnd(), 5 * MSS, "min(ssthresh 5, flight 8 + 1) = 5 MSS");
}

/// Losses of segments 0, 5 and 7; the retransmissions of 0 and 5 bring
/// partial ACKs at 200 and 300 ms. Returns the deadlines after each.
fn partial_acks(timer: bool) -> (SimTime, SimTime, TcpSender) {
    let mut s = started(Flavor::NewReno, 10, |c| c.newreno_impatient = timer);
    dupacks(&mut s, 3, 100);
    let cwnd_before = s.cwnd();
    let mut out = Vec::new();
    s.on_segment(t(200), &ack(seg(5)), &mut out);
    assert_eq!(out[0].hdr.seq, seg(5), "the next hole at once");
    // Deflate by the 5 MSS acked, add back one SMSS (>= SMSS was acked).
    assert_eq!(s.cwnd(), cwnd_before - 5 * MSS + MSS);
    let first = s.deadline().expect("timer runs");
    let cwnd_before = s.cwnd();
    out.clear();
    s.on_segment(t(300), &ack(seg(7)), &mut out);
    assert_eq!(out[0].hdr.seq, seg(7));
    assert_eq!(s.cwnd(), cwnd_before - 2 * MSS + MSS);
    assert!(s.in_recovery());
    (first, s.deadline().expect("timer runs"), s)
}

/// RFC 6582 section 4: the Impatient variant resets the retransmission
/// timer on the first partial ACK only, Slow-but-Steady on every one. No
/// RTT sample exists (Karn), so the RTO is the initial 1 s.
#[test]
fn newreno_partial_acks_reset_the_timer_by_variant() {
    let (first, second, _) = partial_acks(true);
    assert_eq!((first, second), (t(1200), t(1200)), "impatient");
    let (first, second, _) = partial_acks(false);
    assert_eq!((first, second), (t(1200), t(1300)), "slow but steady");
}

#[test]
fn newreno_partial_ack_below_one_smss_adds_nothing_back() {
    let mut s = started(Flavor::NewReno, 10, |_| {});
    dupacks(&mut s, 3, 100);
    let before = s.cwnd();
    let mut out = Vec::new();
    s.on_segment(t(200), &ack(seg(0) + 500), &mut out);
    assert_eq!(
        s.cwnd(),
        before - 500,
        "acked 500 bytes < SMSS: no SMSS added"
    );
}

/// RFC 6675 section 2: with SACK, a duplicate ACK counts only if it brings
/// new SACK information.
#[test]
fn sack_dupack_without_new_information_does_not_count() {
    let mut s = started(Flavor::Sack, 10, |_| {});
    let mut out = Vec::new();
    s.on_segment(t(100), &ack_sack(seg(0), &[(seg(1), seg(2))]), &mut out);
    s.on_segment(t(101), &ack_sack(seg(0), &[(seg(1), seg(3))]), &mut out);
    // The same blocks again: no new information, not the third dupack.
    s.on_segment(t(102), &ack_sack(seg(0), &[(seg(1), seg(3))]), &mut out);
    assert!(!s.in_recovery());
    assert!(out.is_empty());
    assert_eq!(s.stats.fast_recoveries, 0);
    // New information: now the third.
    s.on_segment(
        t(103),
        &ack_sack(seg(0), &[(seg(1), seg(3)), (seg(4), seg(5))]),
        &mut out,
    );
    assert!(s.in_recovery());
    assert_eq!(out[0].hdr.seq, seg(0));
}

/// RFC 6675 section 4 SetPipe, and section 5: cwnd = ssthresh, then
/// NextSeg sends while cwnd - pipe >= 1 SMSS.
#[test]
fn sack_pipe_counts_what_is_in_the_network() {
    let mut s = started(Flavor::Sack, 10, |_| {});
    let mut out = Vec::new();
    // Segments 0 and 5 lost; 1-4 and 6-9 SACKed over four ACKs.
    let blocks: [&[(u64, u64)]; 4] = [
        &[(seg(1), seg(3))],
        &[(seg(1), seg(5))],
        &[(seg(6), seg(8)), (seg(1), seg(5))],
        &[(seg(6), seg(10)), (seg(1), seg(5))],
    ];
    for (i, b) in blocks.iter().enumerate() {
        s.on_segment(t(100 + i as u64), &ack_sack(seg(0), b), &mut out);
    }
    assert!(s.in_recovery());
    assert_eq!(s.ssthresh(), 5 * MSS);
    assert_eq!(s.cwnd(), 5 * MSS);
    // ACK 2: 4 MSS SACKed above segment 0 makes it lost (IsLost: more than
    // (DupThresh - 1) SMSS above): recovery, retransmit 0; pipe = 0's
    // retransmission + 5..9 = 6 MSS, nothing more.
    // ACK 3 (6, 7 SACKed): 5 is not lost yet (2 MSS above is not more than
    // 2 MSS); pipe = 0 + 5 + 8 + 9 = 4 MSS: NextSeg rule 2 sends new 10.
    // ACK 4 (6..9 SACKed): 5 is lost; pipe = 0 + 10 = 2 MSS: retransmit 5,
    // then 11 and 12 until pipe = cwnd.
    assert_eq!(seqs(&out), vec![seg(0), seg(10), seg(5), seg(11), seg(12)]);
    assert_eq!(s.pipe(), 5 * MSS, "retransmitted 0 and 5, new 10, 11, 12");
}

/// RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2 * SMSS).
#[test]
fn ssthresh_never_falls_below_two_segments() {
    let mut s = started(Flavor::Sack, 3, |_| {});
    let mut out = Vec::new();
    s.on_timer(t(1000), &mut out);
    assert_eq!(s.ssthresh(), 2 * MSS, "FlightSize/2 = 1.5 MSS, floored");
    let mut s = started(Flavor::NewReno, 5, |_| {});
    dupacks(&mut s, 3, 100);
    assert_eq!(s.ssthresh(), (5 * MSS / 2).max(2 * MSS));
}

/// The sender keeps at most the peer's advertised window outstanding.
#[test]
fn the_receive_window_caps_what_is_outstanding() {
    let mut s = started(Flavor::Sack, 10, |_| {});
    let mut out = Vec::new();
    let small = |n: u64| TcpHeader {
        wnd: 3 * MSS,
        ..ack(n)
    };
    s.on_segment(t(100), &small(seg(1)), &mut out);
    assert!(
        out.is_empty(),
        "9 MSS outstanding, window 3 MSS: nothing new"
    );
    s.on_segment(t(101), &small(seg(9)), &mut out);
    assert_eq!(seqs(&out), vec![seg(10), seg(11)], "up to snd_una + 3 MSS");
    assert!(s.cwnd() > 3 * MSS, "the window, not cwnd, is the limit");
}
