//! The receiver's answers field by field: the SYN-ACK, ACK contents,
//! counters, the FIN, and which ACKs go at once (RFC 5681 4.2, RFC 2018).

use super::*;

fn data(seq: u64, flags: u8) -> TcpHeader {
    TcpHeader {
        seq,
        ack: 1,
        flags: ACK | flags,
        wnd: 1 << 20,
        ..Default::default()
    }
}

fn receiver(delayed_ack: bool) -> TcpReceiver {
    let mut c = cfg(Flavor::Sack);
    c.delayed_ack = delayed_ack;
    c.rwnd_bytes = 50_000;
    c.mss = 1200;
    TcpReceiver::new(c)
}

#[test]
fn a_syn_is_answered_with_a_syn_ack_carrying_window_and_mss() {
    let mut r = receiver(true);
    let mut out = Vec::new();
    let syn = TcpHeader {
        flags: SYN,
        mss: 1460,
        ..Default::default()
    };
    r.on_segment(t(0), &syn, 0, &mut out);
    assert_eq!(r.state, super::receiver::ReceiverState::SynReceived);
    let h = *out[0].hdr;
    assert_eq!((h.seq, h.ack, h.flags), (0, 1, SYN | ACK));
    assert_eq!((h.wnd, h.mss, out[0].payload), (50_000, 1200, 0));
    assert_eq!(r.stats.acks_sent, 1);
    // Data establishes; a repeated SYN is answered again but the
    // connection stays established.
    r.on_segment(t(1), &data(1, 0), 1000, &mut out);
    r.on_segment(t(2), &syn, 0, &mut out);
    assert_eq!(r.state, super::receiver::ReceiverState::Established);
    assert_eq!(out.last().expect("answered").hdr.flags, SYN | ACK);
}

#[test]
fn acks_carry_the_next_expected_byte_and_the_window() {
    let mut r = receiver(false);
    let mut out = Vec::new();
    r.on_segment(t(0), &data(1, 0), 1000, &mut out);
    let h = *out[0].hdr;
    assert_eq!(
        (h.seq, h.ack, h.flags, h.wnd, h.mss),
        (1, 1001, ACK, 50_000, 0)
    );
    assert_eq!(r.bytes_in_order(), 1000);
}

#[test]
fn counters_count_each_kind_of_segment() {
    let mut r = receiver(true);
    let mut out = Vec::new();
    r.on_segment(t(0), &data(1, 0), 1000, &mut out); // in order, delayed
    r.on_segment(t(1), &data(2001, 0), 1000, &mut out); // out of order
    r.on_segment(t(2), &data(3001, 0), 1000, &mut out); // out of order
    r.on_segment(t(3), &data(1, 0), 1000, &mut out); // duplicate
    r.on_segment(t(4), &data(1001, 0), 1000, &mut out); // fills the hole
    let s = &r.stats;
    assert_eq!((s.segments, s.out_of_order, s.duplicates), (5, 2, 1));
    assert_eq!(s.acks_sent, 4, "all but the first at once");
    assert_eq!(s.first_data_at, Some(t(0)));
    assert_eq!(out.last().expect("acked").hdr.ack, 4001);
    assert_eq!(r.bytes_in_order(), 4000);
    // An empty segment (a pure ACK) changes nothing.
    r.on_segment(t(5), &data(4001, 0), 0, &mut out);
    assert_eq!(r.stats.segments, 5);
}

#[test]
fn the_fin_is_acked_at_once_and_marks_the_end() {
    let mut r = receiver(true);
    let mut out = Vec::new();
    r.on_segment(t(0), &data(1, 0), 1000, &mut out);
    assert!(out.is_empty());
    r.on_segment(t(7), &data(1001, FIN), 500, &mut out);
    assert_eq!(out.len(), 1, "FIN: at once");
    assert_eq!(out[0].hdr.ack, 1502, "500 bytes and the FIN");
    assert_eq!(r.stats.done_at, Some(t(7)));
    assert_eq!(r.bytes_in_order(), 1500, "the FIN is no data byte");
    // A FIN that arrives before a hole fills: done when the hole fills.
    let mut r = receiver(true);
    out.clear();
    r.on_segment(t(0), &data(1001, FIN), 500, &mut out);
    assert_eq!(r.stats.done_at, None);
    r.on_segment(t(9), &data(1, 0), 1000, &mut out);
    assert_eq!(r.stats.done_at, Some(t(9)));
    assert_eq!(out.last().expect("acked").hdr.ack, 1502);
}

#[test]
fn no_sack_blocks_without_sack_and_at_most_three() {
    let mut c = cfg(Flavor::NewReno);
    c.delayed_ack = false;
    let mut r = TcpReceiver::new(c);
    let mut out = Vec::new();
    r.on_segment(t(0), &data(2001, 0), 1000, &mut out);
    assert_eq!(out[0].hdr.n_sack, 0, "NewReno receivers send no SACK");
    let mut r = receiver(false);
    out.clear();
    for k in [2u64, 4, 6, 8] {
        r.on_segment(t(k), &data(1 + k * 1000, 0), 1000, &mut out);
    }
    let last = *out.last().expect("acked").hdr;
    assert_eq!(
        last.sack_blocks(),
        &[(8001, 9001), (6001, 7001), (4001, 5001)],
        "the three most recent, newest first"
    );
}

#[test]
fn sack_blocks_follow_arrival_recency_not_sequence_order() {
    // Segments 8, 4, 6 arrive in that order: the blocks name the most
    // recent first (6), then the others by recency (4, 8), RFC 2018 4.
    let mut r = receiver(false);
    let mut out = Vec::new();
    for k in [8u64, 4, 6] {
        r.on_segment(t(k), &data(1 + k * 1000, 0), 1000, &mut out);
    }
    assert_eq!(
        out.last().expect("acked").hdr.sack_blocks(),
        &[(6001, 7001), (4001, 5001), (8001, 9001)]
    );
    // Segment 5 joins 4 and 6 into one block, reported first.
    r.on_segment(t(9), &data(5001, 0), 1000, &mut out);
    assert_eq!(
        out.last().expect("acked").hdr.sack_blocks(),
        &[(4001, 7001), (8001, 9001)]
    );
}
