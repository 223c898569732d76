//! RTCP compounds as wire packets (for their size and for pcap), and the
//! NTP and RTP timestamps they carry.

use super::member::RTP_CLOCK_HZ;
use super::payload::RtcpCompound;
use crate::proto::rtp::FbItem;
use crate::sim::SimTime;
use crate::wire::rtcp::{nack_entries, RtcpPacket};

/// RTP timestamp of simulated time `now` (90 kHz clock).
pub fn rtp_ts(now: SimTime) -> u32 {
    (now.as_nanos() as u128 * RTP_CLOCK_HZ as u128 / 1_000_000_000) as u32
}

/// One Generic NACK per media source, merging the loss events.
pub fn merge_nacks(fb: &[FbItem]) -> Vec<(u32, Vec<u16>)> {
    let mut by: Vec<(u32, Vec<u16>)> = Vec::new();
    for it in fb {
        match by.iter_mut().find(|(m, _)| *m == it.media_ssrc) {
            Some((_, s)) => s.extend_from_slice(&it.seqs),
            None => by.push((it.media_ssrc, it.seqs.clone())),
        }
    }
    by
}

/// The wire packets of a compound sent at `now` (for its size and for
/// pcap export; the SR's NTP and RTP timestamps are `now`).
pub fn compound_packets(c: &RtcpCompound, now: SimTime) -> Vec<RtcpPacket> {
    let blocks = c
        .reports
        .iter()
        .map(|r| crate::wire::rtcp::ReportBlock {
            ssrc: r.ssrc,
            fraction_lost: r.fraction_lost,
            cumulative_lost: r.cumulative_lost,
            ext_highest_seq: r.ext_highest_seq,
            jitter: r.jitter,
            lsr: r.lsr.map_or(0, ntp_short),
            dlsr: ntp_short_duration(r.dlsr),
        })
        .collect();
    let mut v = vec![match c.sender {
        Some((packets, octets)) => RtcpPacket::SenderReport {
            ssrc: c.ssrc,
            ntp: ntp64(now),
            rtp_ts: rtp_ts(now),
            packet_count: packets,
            octet_count: octets,
            reports: blocks,
        },
        None => RtcpPacket::ReceiverReport {
            ssrc: c.ssrc,
            reports: blocks,
        },
    }];
    v.push(RtcpPacket::Sdes {
        ssrc: c.ssrc,
        cname: c.cname.clone(),
    });
    for (media, seqs) in &c.nacks {
        v.push(RtcpPacket::Nack {
            sender_ssrc: c.ssrc,
            media_ssrc: *media,
            entries: nack_entries(seqs),
        });
    }
    if c.bye {
        v.push(RtcpPacket::Bye {
            ssrcs: vec![c.ssrc],
        });
    }
    v
}

pub fn compound_bytes(c: &RtcpCompound) -> usize {
    // The length does not depend on the timestamps.
    compound_packets(c, SimTime::ZERO)
        .iter()
        .map(|p| p.wire_len())
        .sum()
}

/// 64-bit NTP timestamp (seconds since the simulation start, 32.32).
fn ntp64(t: SimTime) -> u64 {
    let secs = t.as_nanos() / 1_000_000_000;
    let frac = (((t.as_nanos() % 1_000_000_000) as u128) << 32) / 1_000_000_000;
    (secs << 32) | frac as u64
}

pub use crate::wire::rtcp::ntp_short;

fn ntp_short_duration(d: SimTime) -> u32 {
    ntp_short(d)
}
