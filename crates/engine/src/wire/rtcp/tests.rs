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
    // RFC 4585 6.3.1: PSFB (206), FMT 1, length 2 (three words), the
    // sender's and the media source's SSRCs, no FCI.
    let pli = RtcpPacket::Pli {
        sender_ssrc: 2,
        media_ssrc: 0x0102_0304,
    };
    let want = [0x81, 206, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4];
    assert_eq!(bytes_of(&pli), want, "PSFB Picture Loss Indication");
}

/// A PLI carries no FCI: a PSFB FMT 1 with a longer or shorter body is
/// malformed, not read as a PLI.
#[test]
fn a_pli_with_a_body_of_other_than_two_ssrcs_is_refused() {
    for body_words in [1u8, 3] {
        let mut pkt = vec![0x81, 206, 0, body_words];
        pkt.resize(4 + 4 * body_words as usize, 7);
        assert!(RtcpPacket::parse(&pkt).is_err(), "{body_words} words");
    }
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
        RtcpPacket::Pli {
            sender_ssrc: 2,
            media_ssrc: 1,
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

/// The counted length is the written one, for every packet type at every
/// size its fields allow in a report: 0 to 31 blocks, CNAMEs of 0 to 300
/// bytes (cut at 255), FCI of 0 to 12 bytes (padded to words).
#[test]
fn counted_length_is_the_written_length_at_every_size() {
    let mut packets = Vec::new();
    for n in 0..32 {
        let reports = vec![block(); n];
        packets.push(RtcpPacket::SenderReport {
            ssrc: 1,
            ntp: 2,
            rtp_ts: 3,
            packet_count: 4,
            octet_count: 5,
            reports: reports.clone(),
        });
        packets.push(RtcpPacket::ReceiverReport { ssrc: 1, reports });
        packets.push(RtcpPacket::Bye {
            ssrcs: (0..n as u32).collect(),
        });
        packets.push(RtcpPacket::Nack {
            sender_ssrc: 1,
            media_ssrc: 2,
            entries: vec![(7, 1); n],
        });
    }
    for len in 0..=300 {
        packets.push(RtcpPacket::Sdes {
            ssrc: 1,
            cname: "c".repeat(len),
        });
    }
    for len in 0..=12 {
        packets.push(RtcpPacket::AppFeedback {
            sender_ssrc: 1,
            media_ssrc: 2,
            data: vec![9; len],
        });
    }
    for p in &packets {
        assert_eq!(p.wire_len(), bytes_of(p).len(), "{p:?}");
    }
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

/// RFC 8888 3.1, written out by hand: one block of three packets (received
/// with ECT(0) 0x123/1024 s before the report, lost, received with CE
/// over-range), padded to 32 bits, then the report timestamp.
#[test]
fn ccfb_matches_hand_built_bytes() {
    let p = RtcpPacket::Ccfb(Ccfb {
        sender_ssrc: 0x01020304,
        blocks: vec![CcfbBlock {
            media_ssrc: 0x0A0B0C0D,
            begin_seq: 0xFFFE,
            metrics: vec![
                Metric::Received { ecn: 2, ato: 0x123 },
                Metric::Lost,
                Metric::Received {
                    ecn: 3,
                    ato: ccfb::ATO_OVER_RANGE,
                },
            ],
        }],
        report_timestamp: 0xDEADBEEF,
    });
    let want = [
        0x8B, 205, 0, 6, // V=2 FMT=11, RTPFB, 7 words - 1
        1, 2, 3, 4, // sender SSRC
        0x0A, 0x0B, 0x0C, 0x0D, // media SSRC
        0xFF, 0xFE, 0, 3, // begin_seq, num_reports
        0xC1, 0x23, // R=1 ECN=10 ATO=0x123
        0, 0, // lost
        0xFF, 0xFE, // R=1 ECN=11 ATO=0x1FFE
        0, 0, // padding
        0xDE, 0xAD, 0xBE, 0xEF, // report timestamp
    ];
    assert_eq!(bytes_of(&p), want);
    assert_eq!(p.wire_len(), 28);
    assert_eq!(RtcpPacket::parse(&want), Ok((p, 28)));
    // Two blocks, the second even-length (no padding), and no blocks at all.
    let two = RtcpPacket::Ccfb(Ccfb {
        sender_ssrc: 1,
        blocks: vec![
            CcfbBlock {
                media_ssrc: 2,
                begin_seq: 0,
                metrics: vec![Metric::Lost],
            },
            CcfbBlock {
                media_ssrc: 3,
                begin_seq: 9,
                metrics: vec![Metric::Received { ecn: 0, ato: 1 }; 2],
            },
        ],
        report_timestamp: 5,
    });
    let b = bytes_of(&two);
    assert_eq!(b.len(), 8 + 12 + 12 + 4);
    assert_eq!(RtcpPacket::parse(&b), Ok((two, 36)));
    let none = RtcpPacket::Ccfb(Ccfb {
        sender_ssrc: 1,
        blocks: vec![],
        report_timestamp: 5,
    });
    assert_eq!(bytes_of(&none), [0x8B, 205, 0, 2, 0, 0, 0, 1, 0, 0, 0, 5]);
    // A block claiming more words than the packet holds.
    let mut bad = want;
    bad[15] = 9;
    assert!(RtcpPacket::parse(&bad).is_err());
}

#[test]
fn ccfb_arrival_offsets_round_to_1024ths_and_saturate() {
    assert_eq!(ccfb::ato_of(0.0), 0);
    assert_eq!(ccfb::ato_of(1.0), 1024);
    assert_eq!(ccfb::ato_of(0.0014), 1); // 1.43/1024 s rounds to 1
    assert_eq!(ccfb::ato_of(8189.0 / 1024.0), 0x1FFD);
    assert_eq!(ccfb::ato_of(8.0), ccfb::ATO_OVER_RANGE);
    assert_eq!(ccfb::ato_of(-0.01), ccfb::ATO_UNAVAILABLE);
}

/// The transport-wide feedback, written out by hand from the draft's
/// layout (3.1): a one-bit status vector, a run of 8 not received, a
/// two-bit vector with two large deltas (300 and -4), the deltas, no
/// padding needed (40 bytes).
#[test]
fn twcc_matches_hand_built_bytes() {
    use twcc::Status::{NotReceived as N, Received as R};
    let mut statuses = vec![
        R(1),
        N,
        R(2),
        N,
        R(3),
        R(4),
        N,
        R(5),
        R(6),
        R(7),
        R(8),
        R(9),
        R(10),
        N,
    ];
    statuses.extend([N; 8]);
    statuses.extend([R(300), N, R(-4)]);
    let p = RtcpPacket::Twcc(Twcc {
        sender_ssrc: 1,
        media_ssrc: 2,
        base_seq: 0xFFFF,
        reference_time: -2,
        fb_count: 7,
        statuses,
    });
    let want = [
        0x8F, 205, 0, 9, // V=2 FMT=15, RTPFB, 10 words - 1
        0, 0, 0, 1, 0, 0, 0, 2, // SSRCs
        0xFF, 0xFF, 0, 25, // base sequence, status count
        0xFF, 0xFF, 0xFE, 7, // reference time -2 (24 bits), fb count
        0xAB, 0x7E, // 1-bit vector: 10101101111110
        0x00, 0x08, // run: symbol 0, length 8
        0xE2, 0x00, // 2-bit vector: 2, 0, 2 (then padding symbols)
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, // small deltas
        0x01, 0x2C, 0xFF, 0xFC, // large deltas 300, -4
    ];
    assert_eq!(bytes_of(&p), want);
    assert_eq!(RtcpPacket::parse(&want), Ok((p, 40)));
    // A long run of small deltas is one run-length chunk; padding to 32 bits.
    let run = RtcpPacket::Twcc(Twcc {
        sender_ssrc: 1,
        media_ssrc: 2,
        base_seq: 3,
        reference_time: 4,
        fb_count: 0,
        statuses: vec![R(0); 9],
    });
    let b = bytes_of(&run);
    assert_eq!(&b[20..22], &[0x20, 0x09]);
    assert_eq!(b.len(), 20 + 2 + 9 + 1);
    assert_eq!(RtcpPacket::parse(&b), Ok((run, 32)));
}

#[test]
fn twcc_rejects_reserved_symbols_empty_runs_and_missing_deltas() {
    let base = |chunk: [u8; 2], deltas: &[u8]| {
        let mut b = vec![
            0x8F, 205, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0,
        ];
        b.extend_from_slice(&chunk);
        b.extend_from_slice(deltas);
        b.resize(b.len().div_ceil(4) * 4, 0);
        b[3] = (b.len() / 4 - 1) as u8;
        b
    };
    // Run of 2 reserved symbols (3).
    assert!(RtcpPacket::parse(&base([0x60, 0x02], &[])).is_err());
    // Run of length 0, and a run longer than the status count.
    assert!(RtcpPacket::parse(&base([0x20, 0x00], &[1, 1])).is_err());
    assert!(RtcpPacket::parse(&base([0x20, 0x03], &[1, 1, 1])).is_err());
    // Two large deltas announced, the second cut short by the length.
    let mut b = base([0x40, 0x02], &[0, 1]);
    b[3] = 5;
    b.truncate(24);
    assert!(RtcpPacket::parse(&b).is_err());
    // Well formed: two small deltas.
    assert!(RtcpPacket::parse(&base([0x20, 0x02], &[1, 1])).is_ok());
}

/// The counted length equals the written one for messages that fit the
/// counter's stack buffer and for longer ones, with every chunk kind.
#[test]
fn twcc_length_is_counted_as_written_short_and_long() {
    use super::twcc::{Status, Twcc};
    for n in [1usize, 13, 14, 15, 511, 512, 513, 2000] {
        let statuses = (0..n)
            .map(|i| match i % 23 {
                0 | 5 => Status::NotReceived,
                7 => Status::Received(300),
                11 => Status::Received(-4),
                k if k > 15 => Status::Received(1),
                _ => Status::Received(i as i32 % 200),
            })
            .collect();
        let p = RtcpPacket::Twcc(Twcc {
            sender_ssrc: 1,
            media_ssrc: 2,
            base_seq: 65530,
            reference_time: 77,
            fb_count: 3,
            statuses,
        });
        let mut bytes = Vec::new();
        p.emit(&mut bytes);
        assert_eq!(p.wire_len(), bytes.len(), "{n} statuses");
        assert_eq!(RtcpPacket::parse(&bytes).unwrap(), (p, bytes.len()));
    }
}

/// Bytes a libwebrtc-style encoder writes for short messages: a message
/// whose statuses are all one symbol is one run-length chunk however short
/// (three received: 0x2003), and so is a run that ends the message after a
/// vector chunk. A message of two run-length chunks and no received packet
/// (no deltas, no padding) parses to its end.
#[test]
fn twcc_short_runs_at_the_end_are_run_length_chunks() {
    use twcc::Status::{NotReceived as N, Received as R};
    let msg = |statuses: Vec<twcc::Status>| {
        RtcpPacket::Twcc(Twcc {
            sender_ssrc: 1,
            media_ssrc: 2,
            base_seq: 3,
            reference_time: 4,
            fb_count: 0,
            statuses,
        })
    };
    let three = msg(vec![R(5); 3]);
    let b = bytes_of(&three);
    assert_eq!(&b[20..], &[0x20, 0x03, 5, 5, 5, 0, 0, 0]);
    assert_eq!(RtcpPacket::parse(&b), Ok((three, 28)));
    let mut statuses: Vec<_> = (0..14).map(|i| if i % 2 == 0 { R(1) } else { N }).collect();
    statuses.extend([R(2); 3]);
    let tail = msg(statuses);
    let b = bytes_of(&tail);
    assert_eq!(&b[20..24], &[0xAA, 0xAA, 0x20, 0x03]);
    assert_eq!(RtcpPacket::parse(&b), Ok((tail, b.len())));
    // 7 lost, then 7 lost (two runs of 7: 0x0007 0x0007), 24 bytes in all.
    let lost = [
        0x8F, 205, 0, 5, 0, 0, 0, 1, 0, 0, 0, 2, 0, 3, 0, 14, 0, 0, 4, 0, 0x00, 0x07, 0x00, 0x07,
    ];
    let (p, n) = RtcpPacket::parse(&lost).expect("two chunks to the end");
    assert_eq!((p, n), (msg(vec![N; 14]), 24));
}

/// A message cut short is an error that says how many bytes the part it
/// reached needs and how many there are (common header included).
#[test]
fn truncated_feedback_says_what_it_needs() {
    let body = |len: usize, fill: &[u8]| {
        let mut b = vec![0x8F, 205, 0, (len / 4) as u8];
        b.extend_from_slice(fill);
        b.resize(4 + len, 0);
        b
    };
    let need = |need: usize, have: usize| Err(WireError::Truncated { need, have });
    // 12 bytes of body: the fixed part needs 16.
    assert_eq!(RtcpPacket::parse(&body(12, &[])), need(20, 16));
    // A status count of 2 and no room for a chunk.
    let fixed = [0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0];
    assert_eq!(RtcpPacket::parse(&body(16, &fixed)), need(22, 20));
    // Two received packets with large deltas (a 2-bit vector 2, 2): the
    // first delta fills the body's last two bytes, the second is missing.
    let mut two = fixed.to_vec();
    two.extend([0xE8, 0x00, 0x01, 0x2C]);
    assert_eq!(RtcpPacket::parse(&body(20, &two)), need(26, 24));
    // Three with small deltas (a run of three 1s): the third is missing.
    let mut three = fixed.to_vec();
    three[11] = 3;
    three.extend([0x20, 0x03, 7, 7]);
    assert_eq!(RtcpPacket::parse(&body(20, &three)), need(25, 24));
}

/// RFC 8888 (3.1): a report block is cut short, or reports more packets
/// than a message may (16,384): an error naming the field, with the
/// packet's length (common header included) or the count it gave.
#[test]
fn ccfb_blocks_cut_short_or_too_long_are_named() {
    let ccfb = |block: &[u8], metrics_bytes: usize| {
        let mut b = vec![0x8B, 205, 0, 0, 0, 0, 0, 1];
        b.extend_from_slice(block);
        b.resize(b.len() + metrics_bytes, 0);
        b.extend([0, 0, 0, 9]); // report timestamp
        let words = (b.len() / 4 - 1) as u16;
        b[2..4].copy_from_slice(&words.to_be_bytes());
        RtcpPacket::parse(&b)
    };
    let length = |value: u64| {
        Err(WireError::BadField {
            field: "ccfb length",
            value,
        })
    };
    // No block at all; a body shorter than its SSRC and timestamp; half a
    // block's header.
    assert_eq!(ccfb(&[], 0).map(|(_, n)| n), Ok(12));
    assert_eq!(RtcpPacket::parse(&[0x8B, 205, 0, 1, 0, 0, 0, 1]), length(8));
    assert_eq!(ccfb(&[0, 0, 0, 2], 0), length(16));
    // Four packets announced (8 bytes of metrics), none there.
    assert_eq!(ccfb(&[0, 0, 0, 2, 0, 5, 0, 4], 0), length(20));
    // The most a block may report, and one more.
    let (p, _) = ccfb(&[0, 0, 0, 2, 0, 5, 0x40, 0x00], 2 * 16_384).expect("16,384 reports");
    let RtcpPacket::Ccfb(c) = p else {
        panic!("RFC 8888")
    };
    assert_eq!(c.blocks[0].metrics.len(), 16_384);
    assert_eq!(
        ccfb(&[0, 0, 0, 2, 0, 5, 0x40, 0x01], 2 * 16_386),
        Err(WireError::BadField {
            field: "ccfb num_reports",
            value: 16_385
        })
    );
}

fn xr(rrtr: Option<u64>, n: usize) -> Xr {
    Xr {
        ssrc: 0x0a0b0c0d,
        rrtr,
        dlrr: (0..n as u32)
            .map(|i| DlrrItem {
                ssrc: 0x100 + i,
                lrr: 0x00011000 + i,
                dlrr: 0x8000,
            })
            .collect(),
    }
}

/// RFC 3611 2, 4.4 and 4.5 written out by hand: the XR header (PT 207,
/// reserved bits zero), an RRTR block (BT 4, block length 2) and a DLRR
/// block (BT 5, block length 3 per sub-block).
#[test]
fn extended_report_matches_hand_built_bytes() {
    let p = RtcpPacket::Xr(xr(Some(0x0102030405060708), 2));
    let want = [
        0x80, 207, 0, 11, // V=2, PT=XR, 12 words - 1
        0x0a, 0x0b, 0x0c, 0x0d, // SSRC
        4, 0, 0, 2, // RRTR: BT 4, reserved, block length 2
        1, 2, 3, 4, 5, 6, 7, 8, // NTP timestamp
        5, 0, 0, 6, // DLRR: BT 5, reserved, block length 3 x 2
        0, 0, 1, 0, 0, 1, 0x10, 0, 0, 0, 0x80, 0, // SSRC_1, LRR, DLRR (0.5 s)
        0, 0, 1, 1, 0, 1, 0x10, 1, 0, 0, 0x80, 0, // SSRC_2, LRR, DLRR
    ];
    assert_eq!(bytes_of(&p), want);
    assert_eq!(RtcpPacket::parse(&want).unwrap(), (p, want.len()));
    // Each block alone: an RRTR is 20 bytes, a lone DLRR 8 + 4 + 12 n.
    let rrtr = RtcpPacket::Xr(xr(Some(7), 0));
    assert_eq!(
        bytes_of(&rrtr)[..12],
        [0x80, 207, 0, 4, 0x0a, 0x0b, 0x0c, 0x0d, 4, 0, 0, 2]
    );
    for n in 0..60 {
        for r in [None, Some(9)] {
            let p = RtcpPacket::Xr(xr(r, n));
            let b = bytes_of(&p);
            assert_eq!(
                (p.wire_len(), b.len()),
                (
                    b.len(),
                    8 + 12 * r.iter().len() + (4 + 12 * n) * (n > 0) as usize
                )
            );
            assert_eq!(RtcpPacket::parse_compound(&b).unwrap(), vec![p]);
        }
    }
}

/// RFC 3611 3: a block of a type the receiver does not know is skipped by
/// its length; DLRR blocks add up; malformed blocks are named.
#[test]
fn extended_report_skips_unknown_blocks_and_names_bad_ones() {
    let mut b = vec![0x80, 207, 0, 11, 0, 0, 0, 1];
    b.extend_from_slice(&[1, 0, 0, 1, 9, 9, 9, 9]); // BT 1 (loss RLE), one word
    b.extend_from_slice(&[5, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4]);
    b.extend_from_slice(&[5, 0, 0, 0]); // an empty DLRR block
    b.extend_from_slice(&[4, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 5]);
    let p = RtcpPacket::parse(&b).unwrap().0;
    let want = Xr {
        ssrc: 1,
        rrtr: Some(5),
        dlrr: vec![DlrrItem {
            ssrc: 2,
            lrr: 3,
            dlrr: 4,
        }],
    };
    assert_eq!(p, RtcpPacket::Xr(want));
    let bad = |bytes: &[u8]| RtcpPacket::parse(bytes).unwrap_err().to_string();
    let rrtr3 = [
        0x80, 207, 0, 5, 0, 0, 0, 1, 4, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    assert!(
        bad(&rrtr3).contains("xr rrtr block length"),
        "{}",
        bad(&rrtr3)
    );
    let dlrr2 = [
        0x80, 207, 0, 4, 0, 0, 0, 1, 5, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    assert!(
        bad(&dlrr2).contains("xr dlrr block length"),
        "{}",
        bad(&dlrr2)
    );
    let mut two = vec![0x80, 207, 0, 7, 0, 0, 0, 1];
    two.extend_from_slice(&[
        4, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2,
    ]);
    assert!(bad(&two).contains("xr rrtr blocks"), "{}", bad(&two));
    // A block running past the packet; a packet with no SSRC.
    let long = [0x80, 207, 0, 3, 0, 0, 0, 1, 5, 0, 0, 3, 0, 0, 0, 0];
    assert!(matches!(
        RtcpPacket::parse(&long),
        Err(WireError::Truncated { need: 24, have: 16 })
    ));
    assert!(matches!(
        RtcpPacket::parse(&[0x80, 207, 0, 0]),
        Err(WireError::BadField {
            field: "xr length",
            value: 4
        })
    ));
}
