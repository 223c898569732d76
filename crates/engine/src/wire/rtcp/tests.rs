//! RTCP packets against hand-built bytes, round trips and malformed input.
use super::*;

fn block() -> ReportBlock {
    ReportBlock {
        ssrc: 0x01020304,
        fraction_lost: 64,
        cumulative_lost: -3,
        ext_highest_seq: 70000,
        jitter: 12,
        lsr: 0xaabbccdd,
        dlsr: 65536,
    }
}

#[test]
fn receiver_report_bytes_are_as_specified() {
    let mut b = Vec::new();
    RtcpPacket::ReceiverReport {
        ssrc: 9,
        reports: vec![block()],
    }
    .emit(&mut b);
    assert_eq!(b.len(), 32);
    // V=2 RC=1, PT=201, length 7 words - 1 = 7
    assert_eq!(&b[..8], &[0x81, 201, 0, 7, 0, 0, 0, 9]);
    // fraction 64, cumulative lost -3 as 24-bit two's complement
    assert_eq!(&b[12..16], &[64, 0xff, 0xff, 0xfd]);
}

fn bytes_of(p: &RtcpPacket) -> Vec<u8> {
    let mut b = Vec::new();
    p.emit(&mut b);
    b
}

/// Each packet type against bytes written out by hand from the RFC
/// layouts (RFC 3550 6.4.1, 6.4.2, 6.5, 6.6; RFC 4585 6.1, 6.2.1, 6.4).
#[test]
fn every_packet_type_matches_hand_built_bytes() {
    let block_bytes = [
        1, 2, 3, 4, // SSRC_1
        64, 0xff, 0xff, 0xfd, // fraction lost, cumulative -3 (24-bit)
        0, 1, 0x11, 0x70, // extended highest sequence 70000
        0, 0, 0, 12, // jitter
        0xaa, 0xbb, 0xcc, 0xdd, // LSR
        0, 1, 0, 0, // DLSR 65536 (1 s)
    ];
    let sr = RtcpPacket::SenderReport {
        ssrc: 0x11223344,
        ntp: 0x0102030405060708,
        rtp_ts: 0x0a0b0c0d,
        packet_count: 16,
        octet_count: 512,
        reports: vec![block()],
    };
    let mut want = vec![0x81, 200, 0, 12, 0x11, 0x22, 0x33, 0x44];
    want.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d]);
    want.extend_from_slice(&[0, 0, 0, 16, 0, 0, 2, 0]);
    want.extend_from_slice(&block_bytes);
    assert_eq!(bytes_of(&sr), want, "SR");
    let rr = RtcpPacket::ReceiverReport {
        ssrc: 9,
        reports: vec![block()],
    };
    let mut want = vec![0x81, 201, 0, 7, 0, 0, 0, 9];
    want.extend_from_slice(&block_bytes);
    assert_eq!(bytes_of(&rr), want, "RR");
    let sdes = RtcpPacket::Sdes {
        ssrc: 7,
        cname: "ab".into(),
    };
    let want = [0x81, 202, 0, 3, 0, 0, 0, 7, 1, 2, b'a', b'b', 0, 0, 0, 0];
    assert_eq!(bytes_of(&sdes), want, "SDES");
    let bye = RtcpPacket::Bye { ssrcs: vec![1, 5] };
    assert_eq!(
        bytes_of(&bye),
        [0x82, 203, 0, 2, 0, 0, 0, 1, 0, 0, 0, 5],
        "BYE"
    );
    let nack = RtcpPacket::Nack {
        sender_ssrc: 2,
        media_ssrc: 1,
        entries: vec![(100, 0b101), (300, 0)],
    };
    let want = [
        0x81, 205, 0, 4, 0, 0, 0, 2, 0, 0, 0, 1, 0, 100, 0, 5, 0x01, 0x2c, 0, 0,
    ];
    assert_eq!(bytes_of(&nack), want, "Generic NACK");
    let afb = RtcpPacket::AppFeedback {
        sender_ssrc: 2,
        media_ssrc: 1,
        data: vec![9, 8, 7, 6, 5],
    };
    let want = [
        0x8f, 206, 0, 4, 0, 0, 0, 2, 0, 0, 0, 1, 9, 8, 7, 6, 5, 0, 0, 0,
    ];
    assert_eq!(bytes_of(&afb), want, "PSFB application-layer feedback");
}

#[test]
fn every_packet_type_round_trips_alone_and_in_a_compound() {
    let packets = vec![
        RtcpPacket::SenderReport {
            ssrc: 1,
            ntp: 0x0102030405060708,
            rtp_ts: 9,
            packet_count: 10,
            octet_count: 11,
            reports: vec![block(), block()],
        },
        RtcpPacket::ReceiverReport {
            ssrc: 2,
            reports: vec![],
        },
        RtcpPacket::Sdes {
            ssrc: 1,
            cname: "a1@mediasim".to_string(),
        },
        RtcpPacket::Bye { ssrcs: vec![1, 5] },
        RtcpPacket::Nack {
            sender_ssrc: 2,
            media_ssrc: 1,
            entries: vec![(100, 0b101), (300, 0)],
        },
        RtcpPacket::AppFeedback {
            sender_ssrc: 2,
            media_ssrc: 1,
            data: vec![0, 7, 0, 2, 0, 7, 0, 3],
        },
    ];
    let mut compound = Vec::new();
    for p in &packets {
        let mut one = Vec::new();
        p.emit(&mut one);
        assert_eq!(one.len() % 4, 0, "{p:?} is 32-bit aligned");
        assert_eq!(RtcpPacket::parse(&one).unwrap(), (p.clone(), one.len()));
        assert_eq!(p.wire_len(), one.len());
        compound.extend_from_slice(&one);
    }
    assert_eq!(RtcpPacket::parse_compound(&compound).unwrap(), packets);
}

#[test]
fn sdes_cname_is_padded_and_null_terminated() {
    let mut b = Vec::new();
    RtcpPacket::Sdes {
        ssrc: 1,
        cname: "ab".into(),
    }
    .emit(&mut b);
    // 4 header + 4 SSRC + 1 type + 1 len + 2 text + 1 end = 13 -> 16
    assert_eq!(b.len(), 16);
    assert_eq!(&b[8..16], &[1, 2, b'a', b'b', 0, 0, 0, 0]);
}

#[test]
fn generic_nack_packs_losses_into_pid_and_bitmask() {
    let lost = [100u16, 101, 103, 116, 117, 200, 65535, 0];
    let e = nack_entries(&lost);
    // 0 and 65535 sort apart (no wrap merging across the sort), each alone or grouped
    assert_eq!(e[0], (0, 0));
    assert_eq!(e[1], (100, 0b1000_0000_0000_0101)); // 101 (bit0), 103 (bit2), 116 (bit15)
    assert_eq!(e[2], (117, 0));
    let mut back = nack_seqs(&e);
    back.sort_unstable();
    let mut want = lost.to_vec();
    want.sort_unstable();
    assert_eq!(back, want);
}

#[test]
fn malformed_input_is_an_error_not_a_panic() {
    assert!(RtcpPacket::parse(&[0x81, 201, 0]).is_err());
    assert!(
        RtcpPacket::parse(&[0x81, 201, 0, 9, 0, 0, 0, 1]).is_err(),
        "length beyond the buffer"
    );
    assert!(
        RtcpPacket::parse(&[0x81, 201, 0, 0]).is_err(),
        "RC=1 but no room for a block"
    );
    assert!(
        RtcpPacket::parse(&[0x80, 199, 0, 0]).is_err(),
        "unknown type"
    );
    assert!(RtcpPacket::parse(&[0x40, 201, 0, 0]).is_err(), "version 1");
}
