//! Every wire parser takes arbitrary bytes without panicking: random
//! buffers, and valid packets with random bytes flipped or cut short.

use mediasim_engine::net::TcpHeader;
use mediasim_engine::sim::{uniform, RngStreams, SimRng};
use mediasim_engine::wire::rtcp::{ReportBlock, RtcpPacket};
use mediasim_engine::wire::{ipv4, rtp, tcp, udp};

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
