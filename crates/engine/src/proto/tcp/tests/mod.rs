//! RFC rule tests for the TCP state machines, driven by hand (crafted
//! ACKs) and through a loopback with scripted losses.

use super::sender::SenderState;
use super::*;
use crate::net::tcp_flags::{ACK, FIN, SYN};
use std::collections::{BTreeMap, HashSet};

const MSS: u64 = 1000;

fn cfg(flavor: Flavor) -> TcpConfig {
    TcpConfig {
        flavor,
        mss: MSS as u32,
        initial_window: InitialWindow::Segments(4),
        handshake: false,
        delayed_ack: false,
        ..Default::default()
    }
}

fn ack(n: u64) -> TcpHeader {
    TcpHeader {
        seq: 1,
        ack: n,
        flags: ACK,
        wnd: 1 << 20,
        ..Default::default()
    }
}

fn ack_sack(n: u64, blocks: &[(u64, u64)]) -> TcpHeader {
    let mut h = ack(n);
    for (i, b) in blocks.iter().enumerate() {
        h.sack[i] = *b;
    }
    h.n_sack = blocks.len() as u8;
    h
}

fn seqs(out: &[Segment]) -> Vec<u64> {
    out.iter().map(|s| s.hdr.seq).collect()
}

/// Data segment k (0-based) starts at 1 + k*MSS.
fn seg(k: u64) -> u64 {
    1 + k * MSS
}

fn t(ms: u64) -> SimTime {
    SimTime::from_millis(ms)
}

#[test]
fn initial_windows_rfc3390_and_iw10() {
    let mut c = TcpConfig::default();
    assert_eq!(
        c.initial_window_bytes(),
        4380,
        "RFC 3390 with MSS 1460: min(4*1460, max(2*1460, 4380))"
    );
    c.mss = 1000;
    assert_eq!(c.initial_window_bytes(), 4000);
    c.mss = 3000;
    assert_eq!(
        c.initial_window_bytes(),
        6000,
        "max(2*MSS, 4380) for large MSS"
    );
    c.mss = 1460;
    c.initial_window = InitialWindow::Segments(10);
    assert_eq!(c.initial_window_bytes(), 14600, "RFC 6928 IW10");
}

#[test]
fn slow_start_adds_one_smss_per_ack_then_congestion_avoidance_about_one_per_rtt() {
    let mut s = TcpSender::new(cfg(Flavor::NewReno), None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    assert_eq!(
        seqs(&out),
        vec![seg(0), seg(1), seg(2), seg(3)],
        "IW of 4 segments"
    );
    out.clear();
    s.on_segment(t(100), &ack(seg(1)), &mut out);
    assert_eq!(s.cwnd(), 5 * MSS);
    assert_eq!(out.len(), 2, "one ACK opens two segments in slow start");
    // Congestion avoidance: after Reno recovery cwnd = ssthresh, then
    // cwnd += SMSS*SMSS/cwnd per ACK (RFC 5681 eq. 3).
    let mut c = cfg(Flavor::Reno);
    c.limited_transmit = false;
    c.initial_window = InitialWindow::Segments(10);
    let mut s = TcpSender::new(c, None);
    s.start(t(0), &mut out);
    for i in 0..3 {
        s.on_segment(t(100 + i), &ack(seg(0)), &mut out);
    }
    s.on_segment(t(200), &ack(seg(10)), &mut out);
    assert_eq!(s.cwnd(), 5 * MSS);
    assert_eq!(s.cwnd(), s.ssthresh());
    s.on_segment(t(300), &ack(seg(11)), &mut out);
    assert_eq!(s.cwnd(), 5 * MSS + MSS * MSS / (5 * MSS));
}

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_dupacks() {
    let mut s = TcpSender::new(cfg(Flavor::NewReno), None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    out.clear();
    s.on_segment(t(100), &ack(seg(0)), &mut out); // dupack 1 (seg 0 lost)
    assert_eq!(seqs(&out), vec![seg(4)]);
    assert_eq!(s.cwnd(), 4 * MSS, "RFC 3042: cwnd unchanged");
    out.clear();
    s.on_segment(t(101), &ack(seg(0)), &mut out); // dupack 2
    assert_eq!(seqs(&out), vec![seg(5)]);
    out.clear();
    s.on_segment(t(102), &ack(seg(0)), &mut out); // dupack 3: fast retransmit
    assert_eq!(seqs(&out)[0], seg(0));
    assert_eq!(s.stats.limited_transmits, 2);
    // Without limited transmit nothing is sent on the first two dupacks.
    let mut c = cfg(Flavor::NewReno);
    c.limited_transmit = false;
    let mut s = TcpSender::new(c, None);
    s.start(t(0), &mut out);
    out.clear();
    s.on_segment(t(100), &ack(seg(0)), &mut out);
    s.on_segment(t(101), &ack(seg(0)), &mut out);
    assert!(out.is_empty());
}

#[test]
fn reno_fast_retransmit_sets_ssthresh_half_flight_and_inflates_cwnd() {
    let mut c = cfg(Flavor::Reno);
    c.limited_transmit = false;
    c.initial_window = InitialWindow::Segments(10);
    let mut s = TcpSender::new(c, None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    out.clear();
    for i in 0..3 {
        s.on_segment(t(100 + i), &ack(seg(0)), &mut out);
    }
    assert_eq!(seqs(&out), vec![seg(0)], "retransmit the missing segment");
    assert_eq!(
        s.ssthresh(),
        5 * MSS,
        "ssthresh = FlightSize / 2 (RFC 5681 eq. 4)"
    );
    assert_eq!(s.cwnd(), 8 * MSS, "cwnd = ssthresh + 3*SMSS");
    s.on_segment(t(104), &ack(seg(0)), &mut out);
    assert_eq!(
        s.cwnd(),
        9 * MSS,
        "each further dupack inflates by one SMSS"
    );
    s.on_segment(t(200), &ack(seg(10)), &mut out);
    assert!(!s.in_recovery());
    assert_eq!(s.cwnd(), 5 * MSS, "deflate to ssthresh on the new ACK");
}

#[test]
fn newreno_partial_ack_retransmits_next_hole_and_stays_in_recovery() {
    let mut c = cfg(Flavor::NewReno);
    c.limited_transmit = false;
    c.initial_window = InitialWindow::Segments(10);
    let mut s = TcpSender::new(c, None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    // segments 0 and 5 lost
    for i in 0..3 {
        s.on_segment(t(100 + i), &ack(seg(0)), &mut out);
    }
    out.clear();
    let cw = s.cwnd();
    // the retransmission of 0 arrives: ACK up to the next hole (5)
    s.on_segment(t(200), &ack(seg(5)), &mut out);
    assert!(
        s.in_recovery(),
        "RFC 6582: a partial ACK does not end recovery"
    );
    assert_eq!(
        out[0].hdr.seq,
        seg(5),
        "retransmit the first unacknowledged segment at once"
    );
    assert_eq!(
        s.cwnd(),
        cw - 5 * MSS + MSS,
        "deflate by the amount acked, add back one SMSS"
    );
    let recover = s.snd_max();
    s.on_segment(t(300), &ack(recover), &mut out);
    assert!(!s.in_recovery(), "full ACK ends recovery");
    assert!(s.cwnd() <= s.ssthresh());
}

#[test]
fn newreno_does_not_fast_retransmit_again_for_data_sent_before_recovery() {
    let mut c = cfg(Flavor::NewReno);
    c.limited_transmit = false;
    c.initial_window = InitialWindow::Segments(10);
    let mut s = TcpSender::new(c, None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    // RTO: recover is set to the highest data sent.
    s.on_timer(t(1000), &mut out);
    assert_eq!(s.stats.timeouts, 1);
    out.clear();
    for i in 0..3 {
        s.on_segment(t(1100 + i), &ack(seg(0)), &mut out);
    }
    assert_eq!(
        s.stats.fast_recoveries, 0,
        "dupacks below recover do not start recovery (RFC 6582 step 2)"
    );
}

#[test]
fn rto_backs_off_exponentially_and_resets_cwnd_to_one_segment() {
    let mut c = cfg(Flavor::Sack);
    c.initial_window = InitialWindow::Segments(10);
    let mut s = TcpSender::new(c, None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    assert_eq!(s.deadline(), Some(t(1000)), "RFC 6298: initial RTO 1 s");
    out.clear();
    s.on_timer(t(1000), &mut out);
    assert_eq!(seqs(&out), vec![seg(0)]);
    assert_eq!(s.cwnd(), MSS, "loss window is one segment");
    assert_eq!(s.ssthresh(), 5 * MSS);
    assert_eq!(s.deadline(), Some(t(3000)), "backoff: 2 s");
    s.on_timer(t(3000), &mut out);
    assert_eq!(s.deadline(), Some(t(7000)), "backoff: 4 s");
    assert_eq!(
        s.ssthresh(),
        5 * MSS,
        "ssthresh held on a repeated timeout (RFC 5681)"
    );
    s.on_timer(t(6999), &mut out);
    assert_eq!(s.stats.timeouts, 2, "no expiry before the deadline");
}

#[test]
fn karn_no_rtt_sample_from_retransmitted_segments() {
    let mut s = TcpSender::new(cfg(Flavor::NewReno), None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    s.on_timer(t(1000), &mut out); // retransmits seg 0, which was being timed
    s.on_segment(t(1050), &ack(seg(1)), &mut out);
    assert_eq!(
        s.stats.rtt_samples, 0,
        "the ACK of a retransmitted segment gives no sample"
    );
    assert_eq!(
        s.rto(),
        SimTime::from_secs(2),
        "backed-off RTO kept until a valid sample"
    );
    // Go-back-N resends segments already sent once: still no sample.
    let next = s.snd_max();
    s.on_segment(t(1100), &ack(next), &mut out);
    assert_eq!(s.stats.rtt_samples, 0);
    // Fresh data beyond the old snd_max is timed normally.
    let next = s.snd_max();
    s.on_segment(t(1200), &ack(next), &mut out);
    assert_eq!(s.stats.rtt_samples, 1);
    assert!(s.rto() < SimTime::from_secs(2));
}

#[test]
fn sack_rescue_retransmission_at_the_tail_of_a_transfer() {
    // The whole transfer is in flight, so NextSeg rule 2 has nothing new:
    // rule 4 sends one rescue retransmission of the highest unSACKed segment.
    let mut c = cfg(Flavor::Sack);
    c.initial_window = InitialWindow::Segments(20);
    let (snd, rcv, _) = loopback(c, 20_000, &[(seg(2), 1), (seg(5), 1), (seg(9), 1)], t(50));
    assert_eq!(rcv.bytes_in_order(), 20_000);
    assert_eq!(snd.stats.timeouts, 0);
    assert_eq!(snd.stats.retransmissions, 4, "three holes plus one rescue");
}

#[test]
fn sack_recovery_enters_on_is_lost_and_fills_holes_by_nextseg() {
    let mut c = cfg(Flavor::Sack);
    c.initial_window = InitialWindow::Segments(10);
    c.limited_transmit = false;
    let mut s = TcpSender::new(c, None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    out.clear();
    // seg 0 and seg 4 lost; 1..3 and 5.. arrive: SACK blocks report them.
    s.on_segment(t(100), &ack_sack(seg(0), &[(seg(1), seg(2))]), &mut out);
    s.on_segment(t(101), &ack_sack(seg(0), &[(seg(1), seg(3))]), &mut out);
    assert!(!s.in_recovery());
    s.on_segment(t(102), &ack_sack(seg(0), &[(seg(1), seg(4))]), &mut out);
    assert!(s.in_recovery(), "three SACKed segments above seg 0: IsLost");
    assert_eq!(out[0].hdr.seq, seg(0));
    assert_eq!(s.ssthresh(), 5 * MSS);
    assert_eq!(s.cwnd(), 5 * MSS, "RFC 6675: cwnd = ssthresh on entry");
    out.clear();
    // More SACKs above seg 4 make seg 4 lost too; it is retransmitted as
    // pipe allows.
    for k in 5..8 {
        s.on_segment(
            t(100 + k),
            &ack_sack(seg(0), &[(seg(5), seg(k + 1)), (seg(1), seg(4))]),
            &mut out,
        );
    }
    assert!(
        seqs(&out).contains(&seg(4)),
        "second hole retransmitted in the same recovery: {:?}",
        seqs(&out)
    );
    assert_eq!(s.stats.fast_recoveries, 1);
    let high = s.snd_max();
    s.on_segment(t(300), &ack(high), &mut out);
    assert!(!s.in_recovery());
}

#[test]
fn handshake_syn_retransmission_and_rto_of_three_seconds() {
    let mut c = cfg(Flavor::Sack);
    c.handshake = true;
    let mut s = TcpSender::new(c, Some(5000));
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    assert_eq!(out[0].hdr.flags, SYN);
    s.on_timer(t(1000), &mut out);
    assert_eq!(out.len(), 2, "SYN retransmitted after 1 s");
    let synack = TcpHeader {
        seq: 0,
        ack: 1,
        flags: SYN | ACK,
        wnd: 1 << 20,
        ..Default::default()
    };
    out.clear();
    s.on_segment(t(1100), &synack, &mut out);
    assert_eq!(s.state, SenderState::Established);
    assert_eq!(s.rto(), SimTime::from_secs(3), "RFC 6298 5.7");
    assert_eq!(
        s.stats.rtt_samples, 0,
        "Karn: no sample from a retransmitted SYN"
    );
    assert_eq!(out.len(), 4, "IW of 4 segments");
    assert!(!out.last().unwrap().hdr.has(FIN));
    s.on_segment(t(1200), &ack(seg(4)), &mut out);
    let fin_seg = out.last().unwrap();
    assert!(
        fin_seg.hdr.has(FIN),
        "the last data segment carries the FIN"
    );
    assert_eq!(fin_seg.hdr.seq + fin_seg.hdr.seq_len(fin_seg.payload), 5002);
    s.on_segment(t(1300), &ack(5002), &mut out);
    assert_eq!(s.state, SenderState::Done);
    assert_eq!(s.stats.done_at, Some(t(1300)));
}

mod ecn;
mod receiver_and_loopback;
mod receiver_rules;
mod rfc_values;
mod sender_rules;
use receiver_and_loopback::loopback;

/// A window controller other than the inline Reno is asked on every ACK
/// outside recovery and on every congestion event, and its answers are
/// the window: here a controller that grows by a fixed 100 bytes per ACK
/// and sets ssthresh to a quarter of the flight.
#[test]
fn a_window_controller_sets_the_growth_and_the_cut() {
    use crate::proto::cc::window::{Ack, Congestion, WindowController};
    struct Slow;
    impl WindowController for Slow {
        fn on_ack(&mut self, a: &Ack) -> u64 {
            a.cwnd + 100
        }
        fn ssthresh(&mut self, c: &Congestion) -> u64 {
            c.flight / 4
        }
    }
    let mut c = cfg(Flavor::Reno);
    c.limited_transmit = false;
    c.initial_window = InitialWindow::Segments(8);
    let mut s = TcpSender::new(c, None).with_window(Some(Box::new(Slow)));
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    s.on_segment(t(100), &ack(seg(1)), &mut out);
    assert_eq!(
        s.cwnd(),
        8 * MSS + 100,
        "the controller's growth, not slow start's SMSS"
    );
    for i in 0..3 {
        s.on_segment(t(110 + i), &ack(seg(1)), &mut out);
    }
    // Fast retransmit: ssthresh from the controller (flight 8 segments
    // and the 100 bytes' share of a ninth, as sent), inflation by 3 SMSS.
    let flight = s.ssthresh() * 4;
    assert!((8 * MSS..9 * MSS).contains(&flight), "{flight}");
    assert_eq!(s.cwnd(), s.ssthresh() + 3 * MSS);
}
