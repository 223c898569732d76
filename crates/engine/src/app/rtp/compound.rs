//! RTCP compounds as wire packets (for their size and for pcap), and the
//! NTP and RTP timestamps they carry.

use super::member::RTP_CLOCK_HZ;
use super::payload::RtcpCompound;
use crate::proto::rtp::FbItem;
use crate::sim::SimTime;
use crate::wire::rtcp::{nack_entries, RtcpPacket};

/// RTP timestamp of simulated time `now` (90 kHz clock).
pub fn rtp_ts(now: SimTime) -> u32 {
    rtp_clock(now) as u32
}

/// `now` in ticks of the RTP clock, whole: floor(ns x 90000 / 10^9) in
/// 64-bit arithmetic (every received packet needs it for the jitter).
pub fn rtp_clock(now: SimTime) -> u64 {
    const NS_PER_STEP: u64 = 1_000_000_000 / 10_000; // 10 kHz steps of 9 ticks
    const _: () = assert!(RTP_CLOCK_HZ == 90_000);
    let ns = now.as_nanos();
    ns / NS_PER_STEP * 9 + ns % NS_PER_STEP * 9 / NS_PER_STEP
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
    // The report, the SDES, the NACKs and a BYE.
    let mut v = Vec::with_capacity(3 + c.nacks.len());
    v.push(match c.sender {
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
    });
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

#[cfg(test)]
mod tests {
    use super::{rtp_clock, RTP_CLOCK_HZ};
    use crate::sim::SimTime;

    #[test]
    fn the_rtp_clock_is_the_exact_floor_of_90_khz() {
        for ns in [
            0,
            1,
            11_111,
            11_112,
            99_999,
            100_000,
            1_000_000_007,
            u64::MAX / 2,
            u64::MAX,
        ] {
            let exact = (ns as u128 * RTP_CLOCK_HZ as u128 / 1_000_000_000) as u64;
            assert_eq!(rtp_clock(SimTime::from_nanos(ns)), exact, "{ns}");
        }
    }
}
