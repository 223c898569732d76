//! Every parser's error paths with exact errors at their boundaries: one
//! byte short, the exact minimum, bad fields, and the checksum.

use super::*;
use crate::net::tcp_flags::ACK;
use crate::net::TcpHeader;

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

#[test]
fn ipv4_lengths_version_and_fields() {
    let r = ipv4::Ipv4Repr {
        src: A,
        dst: B,
        protocol: 17,
        total_len: 48,
        ident: 0x1234,
        dscp: 46,
        ecn: 0,
        ttl: 64,
    };
    let mut b = vec![0u8; 20];
    r.emit(&mut b);
    assert_eq!(ipv4::Ipv4Repr::parse(&b), Ok(r));
    assert_eq!(
        ipv4::Ipv4Repr::parse(&b[..19]),
        Err(WireError::Truncated { need: 20, have: 19 })
    );
    let mut v6 = b.clone();
    v6[0] = 0x46; // IHL 6: options are not written, so not read
    assert_eq!(
        ipv4::Ipv4Repr::parse(&v6),
        Err(WireError::BadField {
            field: "version/ihl",
            value: 0x46
        })
    );
    assert_eq!(b[1], 46 << 2, "DSCP in the upper six bits");
    assert_eq!(b[8], 64, "TTL");
}

#[test]
fn udp_lengths_and_checksum() {
    let mut seg = vec![0u8; 12];
    let r = udp::UdpRepr {
        src_port: 5004,
        dst_port: 5005,
        len: 12,
    };
    seg[8..12].copy_from_slice(b"abcd");
    r.emit(&mut seg, A, B);
    assert_eq!(udp::UdpRepr::parse(&seg, A, B), Ok(r));
    assert_eq!(
        udp::UdpRepr::parse(&seg[..7], A, B),
        Err(WireError::Truncated { need: 8, have: 7 })
    );
    assert_eq!(
        udp::UdpRepr::parse(&seg[..11], A, B),
        Err(WireError::BadField {
            field: "udp length",
            value: 12
        }),
        "the length field says more than the buffer holds"
    );
    let mut short = seg.clone();
    short[4..6].copy_from_slice(&7u16.to_be_bytes());
    assert_eq!(
        udp::UdpRepr::parse(&short, A, B),
        Err(WireError::BadField {
            field: "udp length",
            value: 7
        })
    );
    assert_eq!(
        udp::UdpRepr::parse(&seg, A, [10, 0, 0, 3]),
        Err(WireError::Checksum),
        "the pseudo-header's addresses count"
    );
}

#[test]
fn a_udp_checksum_that_sums_to_zero_is_sent_as_all_ones() {
    // Search a payload whose checksum computes to 0: RFC 768 sends 0xffff.
    for x in 0..=u16::MAX {
        let mut seg = vec![0u8; 10];
        seg[8..10].copy_from_slice(&x.to_be_bytes());
        let r = udp::UdpRepr {
            src_port: 1,
            dst_port: 2,
            len: 10,
        };
        r.emit(&mut seg, A, B);
        if seg[6..8] == [0xff, 0xff] {
            assert_eq!(udp::UdpRepr::parse(&seg, A, B), Ok(r));
            return;
        }
        assert_ne!(seg[6..8], [0, 0], "a zero checksum means none");
    }
    panic!("no payload gave a zero checksum");
}

#[test]
fn rtp_length_version_and_marker() {
    let h = rtp::RtpHeader {
        marker: true,
        payload_type: 96,
        seq: 7,
        timestamp: 9000,
        ssrc: 42,
        transport_seq: None,
        padding: false,
    };
    let mut b = vec![0u8; 12];
    h.emit(&mut b);
    assert_eq!(b[..2], [0x80, 0x80 | 96]);
    assert_eq!(rtp::RtpHeader::parse(&b), Ok(h));
    assert_eq!(
        rtp::RtpHeader::parse(&b[..11]),
        Err(WireError::Truncated { need: 12, have: 11 })
    );
    b[0] = 0x40;
    assert_eq!(
        rtp::RtpHeader::parse(&b),
        Err(WireError::BadField {
            field: "rtp version",
            value: 1
        })
    );
}

#[test]
fn tcp_lengths_offsets_and_options() {
    let h = TcpHeader {
        seq: 1,
        ack: 2,
        flags: ACK,
        wnd: 1 << 16,
        ..Default::default()
    };
    let mut seg = vec![0u8; 20];
    tcp::emit(&h, 1, 2, &mut seg, A, B);
    assert_eq!(
        tcp::parse(&seg[..19], A, B),
        Err(WireError::Truncated { need: 20, have: 19 })
    );
    let mut bad = seg.clone();
    bad[12] = 4 << 4; // data offset 16 bytes
    assert_eq!(
        tcp::parse(&bad, A, B),
        Err(WireError::BadField {
            field: "data offset",
            value: 16
        })
    );
    bad[12] = 6 << 4; // 24 bytes, more than the segment
    assert!(matches!(
        tcp::parse(&bad, A, B),
        Err(WireError::BadField {
            field: "data offset",
            ..
        })
    ));
    // An option whose length runs past the header.
    let mut opt = vec![0u8; 24];
    opt[12] = 6 << 4;
    opt[13] = ACK;
    opt[20..24].copy_from_slice(&[2, 8, 5, 0xb4]);
    tcp::fill_checksum(&mut opt, A, B);
    assert_eq!(
        tcp::parse(&opt, A, B),
        Err(WireError::BadField {
            field: "option length",
            value: 8
        })
    );
    // NOPs and an MSS option of the right length are read.
    opt[20..24].copy_from_slice(&[1, 1, 1, 0]);
    let mut syn = vec![0u8; 28];
    syn[12] = 7 << 4;
    syn[13] = crate::net::tcp_flags::SYN;
    syn[20..28].copy_from_slice(&[1, 2, 4, 0x05, 0xb4, 1, 0, 0]);
    tcp::fill_checksum(&mut syn, A, B);
    let (back, ..) = tcp::parse(&syn, A, B).expect("valid");
    assert_eq!(back.mss, 1460);
    // The window of a non-SYN segment is scaled by the announced shift.
    let (back, ..) = tcp::parse(&seg, A, B).expect("valid");
    assert_eq!(
        back.wnd,
        (1 << 16) >> tcp::WINDOW_SHIFT << tcp::WINDOW_SHIFT
    );
}

/// Values computed independently (by hand from RFC 768 and RFC 1071).
#[test]
fn checksums_match_values_worked_out_by_hand() {
    // UDP 5004 -> 5005, 12 bytes with "abcd", 10.0.0.1 -> 10.0.0.2: the
    // pseudo-header (addresses, protocol 17, length 12) plus the segment
    // sums to 0x000c after folding; its complement is 0xfff3.
    let mut seg = vec![0u8; 12];
    seg[8..12].copy_from_slice(b"abcd");
    udp::UdpRepr {
        src_port: 5004,
        dst_port: 5005,
        len: 12,
    }
    .emit(&mut seg, A, B);
    assert_eq!(seg[6..8], [0xff, 0xf3]);
    // An odd byte is padded with zero on the right (RFC 1071 4.1).
    assert_eq!(checksum::finish(checksum::sum(0, &[0x01])), 0xfeff);
}

#[test]
fn rtp_marker_off_and_rtcp_feedback_of_unknown_formats() {
    let h = rtp::RtpHeader {
        marker: false,
        payload_type: 0,
        seq: 1,
        timestamp: 2,
        ssrc: 3,
        transport_seq: None,
        padding: false,
    };
    let mut b = vec![0u8; 12];
    h.emit(&mut b);
    assert_eq!(rtp::RtpHeader::parse(&b), Ok(h));
    // RTPFB with FMT 3 (TMMBR) and PSFB with FMT 2 (SLI) are not parsed as
    // Generic NACK, PLI or application feedback.
    for (first, pt) in [(0x83u8, 205u8), (0x82, 206)] {
        let pkt = [first, pt, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2];
        assert_eq!(
            rtcp::RtcpPacket::parse(&pkt),
            Err(WireError::BadField {
                field: "rtcp packet type",
                value: pt as u64
            })
        );
    }
}

/// The exact minimum: a UDP datagram of just its 8-byte header is valid.
#[test]
fn a_udp_datagram_of_only_its_header_parses() {
    let mut seg = vec![0u8; 8];
    let r = udp::UdpRepr {
        src_port: 7,
        dst_port: 9,
        len: 8,
    };
    r.emit(&mut seg, A, B);
    assert_eq!(udp::UdpRepr::parse(&seg, A, B), Ok(r));
}

/// An option kind in the header's last byte with no length byte after it:
/// truncated, needing one byte more than the 24 there are.
#[test]
fn a_tcp_option_cut_before_its_length_is_truncated_at_the_right_offset() {
    let mut seg = vec![0u8; 24];
    seg[12] = 6 << 4;
    seg[13] = ACK;
    seg[20..24].copy_from_slice(&[1, 1, 1, 2]);
    tcp::fill_checksum(&mut seg, A, B);
    assert_eq!(
        tcp::parse(&seg, A, B),
        Err(WireError::Truncated { need: 25, have: 24 })
    );
}
