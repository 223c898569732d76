//! RTCP compounds as wire packets (for their size and for pcap), and the
//! NTP and RTP timestamps they carry.

use super::member::RTP_CLOCK_HZ;
use super::payload::RtcpCompound;
use crate::proto::rtp::FbItem;
use crate::sim::SimTime;
use crate::wire::rtcp::{nack_entries, DlrrItem, RtcpPacket, Xr};

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
    // The report, the SDES, an XR, the NACKs and a BYE.
    let mut v = Vec::with_capacity(4 + c.nacks.len());
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
    if c.rrtr || !c.dlrr.is_empty() {
        v.push(RtcpPacket::Xr(Xr {
            ssrc: c.ssrc,
            rrtr: c.rrtr.then(|| ntp64(now)),
            dlrr: c
                .dlrr
                .iter()
                .map(|d| DlrrItem {
                    ssrc: d.ssrc,
                    lrr: ntp_short(d.lrr),
                    dlrr: ntp_short_duration(d.delay),
                })
                .collect(),
        }));
    }
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
    use super::{
        compound_bytes, compound_packets, merge_nacks, ntp64, ntp_short_duration, rtp_clock,
        RTP_CLOCK_HZ,
    };
    use crate::app::rtp::payload::{RtcpCompound, RtcpReport};
    use crate::app::rtp::xr::Dlrr;
    use crate::proto::rtp::FbItem;
    use crate::sim::SimTime;
    use crate::wire::rtcp::{DlrrItem, RtcpPacket, Xr};

    /// RFC 3550 4: the 64-bit NTP timestamp is seconds in its high 32 bits
    /// and the fraction of a second in units of 2^-32 (truncated) in its
    /// low 32; the "middle 32 bits" (LSR, DLSR) are 16.16 in the same way.
    #[test]
    fn ntp_timestamps_are_32_32_and_16_16_fixed_point() {
        let at = |s: u64, ns: u64| SimTime::from_nanos(s * 1_000_000_000 + ns);
        assert_eq!(ntp64(at(1, 500_000_000)), (1 << 32) | 0x8000_0000);
        assert_eq!(ntp64(at(0, 250_000_000)), 0x4000_0000);
        // 1 ns is 4.29 units of 2^-32 s: truncated to 4.
        assert_eq!(ntp64(at(3, 1)), (3 << 32) | 4);
        assert_eq!(ntp_short_duration(at(2, 500_000_000)), (2 << 16) | 0x8000);
        // 1 ms is 65.536 units of 2^-16 s.
        assert_eq!(ntp_short_duration(at(0, 1_000_000)), 65);
    }

    #[test]
    fn nacks_merge_per_media_source_in_the_order_first_seen() {
        let item = |media_ssrc, seqs: &[u16]| FbItem {
            media_ssrc,
            seqs: seqs.to_vec(),
            t0: SimTime::ZERO,
        };
        let got = merge_nacks(&[item(7, &[1, 2]), item(9, &[40]), item(7, &[5])]);
        assert_eq!(got, vec![(7, vec![1, 2, 5]), (9, vec![40])]);
    }

    fn compound(sender: Option<(u32, u32)>) -> RtcpCompound {
        RtcpCompound {
            ssrc: 0x1111,
            sender,
            reports: vec![RtcpReport {
                ssrc: 0x2222,
                fraction_lost: 3,
                cumulative_lost: 4,
                ext_highest_seq: 500,
                jitter: 6,
                lsr: Some(SimTime::from_millis(1_500)),
                dlsr: SimTime::from_millis(250),
            }],
            nacks: vec![(0x2222, vec![1, 2, 5])],
            rrtr: false,
            dlrr: Vec::new(),
            app_layer_fb: false,
            bye: true,
            early: false,
            cname: "a@b".into(),
        }
    }

    /// RFC 3550 6.1: the report first (an SR from a sender, else an RR),
    /// then SDES, then the feedback (RFC 4585 6.1), BYE last. The SR
    /// carries the send time as NTP and RTP timestamps and each report
    /// block LSR and DLSR as 16.16, at the offsets of RFC 3550 6.4.1.
    #[test]
    fn a_compound_is_its_report_sdes_feedback_and_bye_in_order() {
        let now = SimTime::from_secs(2);
        let v = compound_packets(&compound(Some((10, 1000))), now);
        let mut sr = Vec::new();
        v[0].emit(&mut sr);
        let word = |at: usize| u32::from_be_bytes(sr[at..at + 4].try_into().expect("4 bytes"));
        assert_eq!(sr[1], 200, "an SR first: {v:?}");
        // SSRC, NTP (seconds, fraction), RTP timestamp, packets, octets.
        assert_eq!(
            [word(4), word(8), word(12), word(16)],
            [0x1111, 2, 0, 180_000]
        );
        assert_eq!([word(20), word(24)], [10, 1000]);
        // The block: SSRC, loss, highest, jitter, LSR, DLSR.
        assert_eq!(
            [word(28), word(32) >> 24, word(32) & 0xFF_FFFF],
            [0x2222, 3, 4]
        );
        assert_eq!(
            [word(36), word(40), word(44), word(48)],
            [500, 6, 0x1_8000, 0x4000]
        );
        assert!(matches!(v[1], RtcpPacket::Sdes { ssrc: 0x1111, .. }));
        // Lost 1, 2 and 5: one entry, PID 1 with BLP bits 0 (2) and 3 (5).
        assert!(
            matches!(&v[2], RtcpPacket::Nack { media_ssrc: 0x2222, entries, .. }
            if entries == &vec![(1, 0b1001)])
        );
        assert!(matches!(&v[3], RtcpPacket::Bye { ssrcs } if ssrcs == &vec![0x1111]));
        assert_eq!(v.len(), 4);
        let rr = compound_packets(&compound(None), now);
        assert!(matches!(
            rr[0],
            RtcpPacket::ReceiverReport { ssrc: 0x1111, .. }
        ));
    }

    /// The sizes RFC 3550 6.4-6.6 and RFC 4585 6.1-6.2.1 give: an RR with
    /// one block 8 + 24 bytes (an SR 20 more), an SDES with a 3-byte CNAME
    /// 4 + 4 + 2 + 3 + a null, padded to 16, a Generic NACK with one entry
    /// 12 + 4, a BYE for one source 8.
    #[test]
    fn a_compound_has_the_rfc_sizes() {
        assert_eq!(compound_bytes(&compound(None)), 32 + 16 + 16 + 8);
        assert_eq!(compound_bytes(&compound(Some((1, 1)))), 52 + 16 + 16 + 8);
    }

    /// RFC 3611: the XR goes after the SDES, before the feedback; its
    /// RRTR carries the send time as a 64-bit NTP timestamp (4.4) and each
    /// DLRR sub-block the RRTR's middle 32 bits and the time held, 16.16
    /// (4.5). With both, the compound grows by 8 + 12 + 4 + 12 bytes.
    #[test]
    fn an_extended_report_carries_the_rrtr_and_the_answers() {
        let mut c = compound(None);
        c.rrtr = true;
        c.dlrr = vec![Dlrr {
            ssrc: 0x3333,
            lrr: SimTime::from_millis(1_500),
            delay: SimTime::from_millis(250),
        }];
        let now = SimTime::from_millis(2_250);
        let v = compound_packets(&c, now);
        let want = Xr {
            ssrc: 0x1111,
            rrtr: Some((2 << 32) | 0x4000_0000),
            dlrr: vec![DlrrItem {
                ssrc: 0x3333,
                lrr: 0x1_8000,
                dlrr: 0x4000,
            }],
        };
        assert_eq!(v[2], RtcpPacket::Xr(want));
        assert!(matches!(v[3], RtcpPacket::Nack { .. }));
        assert_eq!(compound_bytes(&c), compound_bytes(&compound(None)) + 36);
        // A report with neither has no XR.
        assert!(!compound_packets(&compound(None), now)
            .iter()
            .any(|p| matches!(p, RtcpPacket::Xr(_))));
    }

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
