//! Every wire parser takes arbitrary bytes without panicking: random
//! buffers, and valid packets with random bytes flipped or cut short.

use crate::net::TcpHeader;
use crate::sim::{uniform, RngStreams, SimRng};
use crate::wire::rtcp::{
    Ccfb, CcfbBlock, DlrrItem, Metric, ReportBlock, RtcpPacket, Status, Twcc, Xr,
};
use crate::wire::{ipv4, rtp, tcp, udp};

fn bytes(rng: &mut SimRng, max: usize) -> Vec<u8> {
    let n = (uniform(rng) * max as f64) as usize;
    (0..n).map(|_| (uniform(rng) * 256.0) as u8).collect()
}

fn parse_all(b: &[u8]) {
    let a = [10, 0, 0, 1];
    let _ = ipv4::Ipv4Repr::parse(b);
    let _ = udp::UdpRepr::parse(b, a, a);
    let _ = tcp::parse(b, a, a);
    let _ = rtp::RtpHeader::parse(b);
    let _ = RtcpPacket::parse(b);
    let _ = RtcpPacket::parse_compound(b);
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = RngStreams::new(1, 0).stream("fuzz");
    for _ in 0..50_000 {
        parse_all(&bytes(&mut rng, 96));
    }
}

#[test]
fn mutated_and_truncated_valid_packets_never_panic() {
    let mut rng = RngStreams::new(2, 0).stream("fuzz");
    let block = ReportBlock {
        ssrc: 1,
        fraction_lost: 3,
        cumulative_lost: -2,
        ext_highest_seq: 9,
        jitter: 4,
        lsr: 5,
        dlsr: 6,
    };
    let mut compound = Vec::new();
    for p in [
        RtcpPacket::SenderReport {
            ssrc: 1,
            ntp: 2,
            rtp_ts: 3,
            packet_count: 4,
            octet_count: 5,
            reports: vec![block],
        },
        RtcpPacket::Sdes {
            ssrc: 1,
            cname: "x@y".into(),
        },
        RtcpPacket::Nack {
            sender_ssrc: 1,
            media_ssrc: 2,
            entries: vec![(5, 3)],
        },
        RtcpPacket::AppFeedback {
            sender_ssrc: 1,
            media_ssrc: 2,
            data: vec![1, 2, 3, 4],
        },
        RtcpPacket::Bye { ssrcs: vec![1] },
    ] {
        p.emit(&mut compound);
    }
    let h = TcpHeader {
        seq: 1,
        ack: 2,
        flags: 0x10,
        wnd: 1000,
        sack: [(10, 20), (30, 40), (0, 0)],
        n_sack: 2,
        mss: 0,
        conn: 0,
    };
    let mut seg = vec![0u8; h.header_bytes() as usize + 8];
    tcp::emit(&h, 1, 2, &mut seg, [10, 0, 0, 1], [10, 0, 0, 1]);
    for base in [compound, seg] {
        for _ in 0..20_000 {
            let mut b = base.clone();
            let flips = 1 + (uniform(&mut rng) * 4.0) as usize;
            for _ in 0..flips {
                let i = (uniform(&mut rng) * b.len() as f64) as usize;
                b[i] = (uniform(&mut rng) * 256.0) as u8;
            }
            let cut = (uniform(&mut rng) * (b.len() + 1) as f64) as usize;
            parse_all(&b[..cut]);
            parse_all(&b);
        }
    }
}

fn below(rng: &mut SimRng, n: usize) -> usize {
    (uniform(rng) * n as f64) as usize
}

/// TCP options built option by option (known and unknown kinds, lengths
/// right, wrong and overlong), with a valid checksum so that the parser gets
/// past it: the options parser must never panic, and never hold more SACK
/// blocks than the header has room for.
#[test]
fn structured_tcp_options_with_valid_checksums_never_panic() {
    let mut rng = RngStreams::new(3, 0).stream("fuzz");
    let a = [10, 0, 0, 1];
    for _ in 0..50_000 {
        let mut opts = Vec::new();
        while opts.len() < 40 && uniform(&mut rng) < 0.8 {
            let kind = [0u8, 1, 2, 3, 4, 5, 5, 5, 8, 254][below(&mut rng, 10)];
            if kind <= 1 {
                opts.push(kind);
                continue;
            }
            let len = match below(&mut rng, 4) {
                0 => below(&mut rng, 3),                // 0..2: too short
                1 => 2 + 8 * below(&mut rng, 5),        // SACK-shaped
                2 => [4, 3, 2, 10][below(&mut rng, 4)], // MSS, WS, SACK-ok, TS
                _ => below(&mut rng, 48),               // anything
            };
            opts.push(kind);
            opts.push(len as u8);
            for _ in 0..len.saturating_sub(2) {
                opts.push((uniform(&mut rng) * 256.0) as u8);
            }
        }
        opts.truncate(40);
        while opts.len() % 4 != 0 {
            opts.push(0);
        }
        let mut seg = vec![0u8; 20];
        seg[12] = ((20 + opts.len()) as u8 / 4) << 4;
        seg[13] = [0x10, 0x02, 0x12][below(&mut rng, 3)];
        seg.extend_from_slice(&opts);
        seg.extend((0..below(&mut rng, 16)).map(|_| 7u8));
        tcp::fill_checksum(&mut seg, a, a);
        if let Ok((h, ..)) = tcp::parse(&seg, a, a) {
            assert!(h.sack_blocks().len() <= 3);
        }
    }
}

fn random_block(rng: &mut SimRng) -> ReportBlock {
    let mut u32r = || (uniform(rng) * 4_294_967_296.0) as u32;
    ReportBlock {
        ssrc: u32r(),
        fraction_lost: (u32r() & 0xff) as u8,
        // 24-bit signed.
        cumulative_lost: ((u32r() & 0xff_ffff) as i32) - 0x80_0000,
        ext_highest_seq: u32r(),
        jitter: u32r(),
        lsr: u32r(),
        dlsr: u32r(),
    }
}

fn random_rtcp(rng: &mut SimRng) -> RtcpPacket {
    let ssrc = (uniform(rng) * 4e9) as u32;
    let blocks = |rng: &mut SimRng| (0..below(rng, 32)).map(|_| random_block(rng)).collect();
    match below(rng, 10) {
        9 => RtcpPacket::Xr(random_xr(rng, ssrc)),
        8 => RtcpPacket::Pli {
            sender_ssrc: ssrc,
            media_ssrc: ssrc ^ 3,
        },
        6 => RtcpPacket::Ccfb(random_ccfb(rng, ssrc)),
        7 => RtcpPacket::Twcc(random_twcc(rng, ssrc)),
        0 => RtcpPacket::SenderReport {
            ssrc,
            ntp: (uniform(rng) * 1.8e19) as u64,
            rtp_ts: (uniform(rng) * 4e9) as u32,
            packet_count: (uniform(rng) * 4e9) as u32,
            octet_count: (uniform(rng) * 4e9) as u32,
            reports: blocks(rng),
        },
        1 => RtcpPacket::ReceiverReport {
            ssrc,
            reports: blocks(rng),
        },
        2 => RtcpPacket::Sdes {
            ssrc,
            cname: (0..below(rng, 255))
                .map(|i| (b'a' + (i % 26) as u8) as char)
                .collect(),
        },
        3 => RtcpPacket::Bye {
            ssrcs: (0..below(rng, 32))
                .map(|i| ssrc.wrapping_add(i as u32))
                .collect(),
        },
        4 => RtcpPacket::Nack {
            sender_ssrc: ssrc,
            media_ssrc: ssrc ^ 1,
            entries: (0..1 + below(rng, 8))
                .map(|_| {
                    (
                        (uniform(rng) * 65536.0) as u16,
                        (uniform(rng) * 65536.0) as u16,
                    )
                })
                .collect(),
        },
        _ => RtcpPacket::AppFeedback {
            sender_ssrc: ssrc,
            media_ssrc: ssrc ^ 2,
            data: (0..4 * below(rng, 8)).map(|i| i as u8).collect(),
        },
    }
}

/// Compounds of random, well-formed RTCP packets (any count of report
/// blocks, CNAME lengths, BYE lists, NACK entries) parse back to exactly
/// what was written; with a length field changed they are rejected or
/// parsed, never a panic.
#[test]
fn structured_rtcp_compounds_round_trip_and_survive_bad_lengths() {
    let mut rng = RngStreams::new(4, 0).stream("fuzz");
    for _ in 0..5_000 {
        let pkts: Vec<RtcpPacket> = (0..1 + below(&mut rng, 5))
            .map(|_| random_rtcp(&mut rng))
            .collect();
        let mut buf = Vec::new();
        let mut starts = Vec::new();
        for p in &pkts {
            starts.push(buf.len());
            p.emit(&mut buf);
        }
        assert_eq!(RtcpPacket::parse_compound(&buf).expect("well-formed"), pkts);
        let at = starts[below(&mut rng, starts.len())];
        buf[at + 3] = (uniform(&mut rng) * 256.0) as u8;
        buf[at + 2] = [0u8, 0, 1, 255][below(&mut rng, 4)];
        let _ = RtcpPacket::parse_compound(&buf);
    }
}

/// An RFC 8888 packet with 0-3 blocks of 0-40 packets each, any mix of
/// lost and received with any ECN bits and offsets.
fn random_ccfb(rng: &mut SimRng, ssrc: u32) -> Ccfb {
    Ccfb {
        sender_ssrc: ssrc,
        blocks: (0..below(rng, 4))
            .map(|i| CcfbBlock {
                media_ssrc: ssrc ^ i as u32,
                begin_seq: below(rng, 65536) as u16,
                metrics: (0..below(rng, 41))
                    .map(|_| {
                        if uniform(rng) < 0.3 {
                            Metric::Lost
                        } else {
                            Metric::Received {
                                ecn: below(rng, 4) as u8,
                                ato: below(rng, 0x2000) as u16,
                            }
                        }
                    })
                    .collect(),
            })
            .collect(),
        report_timestamp: (uniform(rng) * 4e9) as u32,
    }
}

/// An extended report with or without an RRTR block and 0-60 DLRR
/// sub-blocks.
fn random_xr(rng: &mut SimRng, ssrc: u32) -> Xr {
    let mut u32r = || (uniform(rng) * 4_294_967_296.0) as u32;
    Xr {
        ssrc,
        rrtr: (u32r() % 2 == 0).then(|| (u32r() as u64) << 32 | u32r() as u64),
        dlrr: (0..u32r() % 61)
            .map(|_| DlrrItem {
                ssrc: u32r(),
                lrr: u32r(),
                dlrr: u32r(),
            })
            .collect(),
    }
}

/// A transport-wide packet whose statuses come in stretches (runs of one
/// kind, long enough for run-length chunks, and mixes that need one- and
/// two-bit vectors), with small, large and negative deltas.
fn random_twcc(rng: &mut SimRng, ssrc: u32) -> Twcc {
    let mut statuses = Vec::new();
    for _ in 0..below(rng, 6) {
        let n = [1, 3, 7, 14, 20, 300][below(rng, 6)];
        let kind = below(rng, 4);
        for _ in 0..n {
            statuses.push(match (kind, below(rng, 3)) {
                (0, _) | (3, 0) => Status::NotReceived,
                (1, _) | (3, 1) => Status::Received(below(rng, 256) as i32),
                _ => Status::Received(below(rng, 65536) as i32 - 32768),
            });
        }
    }
    Twcc {
        sender_ssrc: ssrc,
        media_ssrc: ssrc ^ 7,
        base_seq: below(rng, 65536) as u16,
        reference_time: below(rng, 1 << 24) as i32 - (1 << 23),
        fb_count: below(rng, 256) as u8,
        statuses,
    }
}

/// Both per-packet feedback formats and extended reports: random
/// well-formed packets parse back to what was written; with any one 16-bit
/// word of the body replaced (a status chunk, a count, a metric word, a
/// block type or length) or the packet cut, the parser returns an error or
/// a packet, never panics, never reports more statuses than the count
/// field allows, and never more DLRR sub-blocks than the packet holds.
#[test]
fn structured_feedback_formats_round_trip_and_survive_bad_words() {
    let mut rng = RngStreams::new(5, 0).stream("fuzz");
    for i in 0..20_000 {
        let p = match i % 3 {
            0 => RtcpPacket::Ccfb(random_ccfb(&mut rng, i)),
            1 => RtcpPacket::Twcc(random_twcc(&mut rng, i)),
            _ => RtcpPacket::Xr(random_xr(&mut rng, i)),
        };
        let mut buf = Vec::new();
        p.emit(&mut buf);
        assert_eq!(buf.len(), p.wire_len());
        assert_eq!(RtcpPacket::parse(&buf), Ok((p, buf.len())));
        let at = 4 + 2 * below(&mut rng, (buf.len() - 4) / 2);
        let w = (below(&mut rng, 65536) as u16).to_be_bytes();
        buf[at..at + 2].copy_from_slice(&w);
        if let Ok((RtcpPacket::Twcc(t), _)) = RtcpPacket::parse(&buf) {
            assert_eq!(
                t.statuses.len(),
                u16::from_be_bytes([buf[14], buf[15]]) as usize
            );
        }
        if let Ok((RtcpPacket::Xr(x), _)) = RtcpPacket::parse(&buf) {
            // Header and SSRC, a DLRR block header, 12 bytes a sub-block.
            assert!(x.dlrr.is_empty() || 12 + 12 * x.dlrr.len() <= buf.len());
        }
        let cut = below(&mut rng, buf.len() + 1);
        let _ = RtcpPacket::parse(&buf[..cut]);
    }
}
