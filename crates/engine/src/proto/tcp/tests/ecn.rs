//! RFC 3168 ECN: negotiation on the SYN, ECT on new data only, the
//! receiver's echo until CWR, and one window reduction per window of data.

use super::*;
use crate::net::tcp_flags::{CWR, ECE};

fn ecn_cfg(handshake: bool) -> TcpConfig {
    TcpConfig {
        ecn: true,
        handshake,
        ..cfg(Flavor::Sack)
    }
}

fn with_ece(mut h: TcpHeader) -> TcpHeader {
    h.flags |= ECE;
    h
}

#[test]
fn the_syn_and_syn_ack_negotiate_ecn() {
    let mut s = TcpSender::new(ecn_cfg(true), None);
    let mut r = TcpReceiver::new(ecn_cfg(true));
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    assert_eq!(out[0].hdr.flags, SYN | ECE | CWR, "ECN-setup SYN (6.1.1)");
    let syn = out.remove(0);
    r.on_segment(t(10), &syn.hdr, 0, &mut out);
    assert_eq!(out[0].hdr.flags, SYN | ACK | ECE, "ECN-setup SYN-ACK");
    let synack = out.remove(0);
    s.on_segment(t(20), &synack.hdr, &mut out);
    assert!(out.iter().all(|x| x.ect), "new data is ECT(0)");
    // A receiver without ECN answers a plain SYN-ACK: no ECT.
    let mut s = TcpSender::new(ecn_cfg(true), None);
    let mut plain = TcpReceiver::new(cfg(Flavor::Sack));
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    let syn = out.remove(0);
    plain.on_segment(t(10), &syn.hdr, 0, &mut out);
    assert_eq!(out[0].hdr.flags, SYN | ACK);
    let synack = out.remove(0);
    s.on_segment(t(20), &synack.hdr, &mut out);
    assert!(!out.is_empty() && out.iter().all(|x| !x.ect));
}

#[test]
fn the_receiver_echoes_ce_until_cwr() {
    let mut r = TcpReceiver::new(ecn_cfg(false));
    let mut out = Vec::new();
    let data = |k: u64, flags: u8| TcpHeader {
        seq: seg(k),
        ack: 0,
        flags: ACK | flags,
        ..Default::default()
    };
    r.on_segment(t(0), &data(0, 0), MSS as u32, &mut out);
    r.note_ce();
    r.on_segment(t(1), &data(1, 0), MSS as u32, &mut out);
    r.on_segment(t(2), &data(2, 0), MSS as u32, &mut out);
    r.on_segment(t(3), &data(3, CWR), MSS as u32, &mut out);
    let ece: Vec<bool> = out.iter().map(|s| s.hdr.has(ECE)).collect();
    assert_eq!(ece, vec![false, true, true, false]);
    // CE on the CWR packet itself starts a new echo.
    r.note_ce();
    r.on_segment(t(4), &data(4, CWR), MSS as u32, &mut out);
    assert!(out.last().unwrap().hdr.has(ECE));
    assert_eq!(r.stats.ce_received, 2);
    assert!(out.iter().all(|s| !s.ect), "ACKs are not ECN-capable");
}

#[test]
fn ece_halves_the_window_once_per_window_and_sets_cwr() {
    let mut s = TcpSender::new(ecn_cfg(false), None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    // Grow to 8 segments in slow start.
    for k in 1..=4 {
        s.on_segment(t(10), &ack(seg(k)), &mut out);
    }
    assert_eq!(s.cwnd(), 8 * MSS);
    out.clear();
    let flight = s.snd_max() - s.snd_una();
    s.on_segment(t(20), &with_ece(ack(seg(5))), &mut out);
    // RFC 3168 6.1.2 halves the window: the flight when the echo arrives
    // (8 segments, all of cwnd) over two.
    assert_eq!(flight, 8 * MSS);
    assert_eq!(s.ssthresh(), flight / 2);
    assert_eq!(s.cwnd(), s.ssthresh(), "no growth on the ECE ACK");
    assert_eq!(s.stats.ecn_reductions, 1);
    // More ECE within the same window: no further cut.
    s.on_segment(t(21), &with_ece(ack(seg(6))), &mut out);
    assert_eq!(s.stats.ecn_reductions, 1);
    // As the flight drains, new data goes out: the first carries CWR.
    for k in 7..=11 {
        s.on_segment(t(22), &ack(seg(k)), &mut out);
    }
    let new: Vec<&Segment> = out.iter().filter(|x| x.payload > 0).collect();
    assert!(new.len() >= 2);
    assert!(new[0].hdr.has(CWR) && new.iter().all(|x| x.ect));
    assert!(new[1..].iter().all(|x| !x.hdr.has(CWR)), "CWR once");
    // Once the window sent before the cut is acknowledged, ECE cuts again.
    let past = s.snd_max();
    s.on_segment(t(40), &with_ece(ack(past)), &mut out);
    assert_eq!(s.stats.ecn_reductions, 2);
}

#[test]
fn retransmissions_are_not_ecn_capable() {
    let mut s = TcpSender::new(ecn_cfg(false), None);
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    out.clear();
    s.on_timer(t(5000), &mut out);
    assert!(
        !out.is_empty() && out.iter().all(|x| !x.ect),
        "go-back-N after the RTO"
    );
}
