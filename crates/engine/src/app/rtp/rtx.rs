//! A frame media sender's retransmissions (`retransmission = true`): the
//! packets it sent recently, kept to answer Generic NACKs (RFC 4585
//! 6.2.1) with RFC 4588 retransmissions on a stream of their own (its own
//! SSRC and sequence numbers; the payload starts with the original
//! sequence number, OSN). As libwebrtc's packet history and RTP sender do:
//! - a packet is kept for max(1 s, 3 round trips) after it was sent
//!   (kMinPacketDurationMs, kMinPacketDurationRtt), within the last
//!   `HISTORY` packets; a request for one not kept is refused;
//! - a packet retransmitted less than a round trip ago is not sent again
//!   (the request crossed the retransmission); the first retransmission
//!   goes whatever the round trip.

use super::frames::Queued;
use crate::sim::SimTime;

/// Packets the history holds (a ring by sequence number: 65536 is a
/// multiple of it, so wraps keep the slots).
pub const HISTORY: usize = 4096;
/// A packet is kept at least this long after it was sent.
const KEEP_MIN: SimTime = SimTime::from_millis(1000);
/// ... and at least this many round trips.
const KEEP_RTTS: u64 = 3;

#[derive(Clone, Copy)]
struct Stored {
    seq: u16,
    q: Queued,
    sent: SimTime,
    resent: Option<SimTime>,
}

/// What the sender counts (the `media` table's sender columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtxStats {
    /// Generic NACKs naming this stream, and the packets they named.
    pub nacks: u64,
    pub requested: u64,
    /// Retransmissions made (queued or sent), and their wire bytes.
    pub packets: u64,
    pub bytes: u64,
    /// Requests refused: the packet was not kept, or was retransmitted
    /// less than a round trip before.
    pub not_kept: u64,
    pub too_soon: u64,
}

pub struct RtxSender {
    /// Slot `seq % HISTORY`; `None` until a packet used it.
    ring: Vec<Option<Stored>>,
    /// The retransmission stream's SSRC and its next sequence number.
    pub ssrc: u32,
    pub seq: u16,
    pub stats: RtxStats,
}

impl RtxSender {
    pub fn new(ssrc: u32) -> Self {
        RtxSender {
            ring: Vec::new(),
            ssrc,
            seq: 0,
            stats: RtxStats::default(),
        }
    }

    /// Media packet `seq` (`q`) was sent at `now`.
    pub fn on_sent(&mut self, now: SimTime, seq: u16, q: &Queued) {
        let i = seq as usize % HISTORY;
        if i >= self.ring.len() {
            // Grown as packets are sent: a short call never holds the whole ring.
            self.ring.resize(i + 1, None);
        }
        self.ring[i] = Some(Stored {
            seq,
            q: *q,
            sent: now,
            resent: None,
        });
    }

    /// A Generic NACK named `seqs` at `now`; `rtt` is the sender's round
    /// trip estimate, if any. Appends the retransmissions to make to
    /// `out` (each its original packet with `rtx` set to the OSN).
    pub fn on_nack(
        &mut self,
        now: SimTime,
        seqs: &[u16],
        rtt: Option<SimTime>,
        out: &mut Vec<Queued>,
    ) {
        self.stats.nacks += 1;
        let rtt = rtt.unwrap_or(SimTime::ZERO);
        let keep = KEEP_MIN.max(SimTime::from_nanos(
            rtt.as_nanos().saturating_mul(KEEP_RTTS),
        ));
        for &seq in seqs {
            self.stats.requested += 1;
            let slot = self
                .ring
                .get_mut(seq as usize % HISTORY)
                .and_then(|s| s.as_mut());
            let Some(s) = slot.filter(|s| s.seq == seq && now < s.sent + keep) else {
                self.stats.not_kept += 1;
                continue;
            };
            if s.resent.is_some_and(|t| now < t + rtt) {
                self.stats.too_soon += 1;
                continue;
            }
            s.resent = Some(now);
            self.stats.packets += 1;
            out.push(Queued {
                rtx: Some(seq),
                ..s.q
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::media::playout::FrameTag;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn q(payload: u32) -> Queued {
        Queued {
            payload,
            tag: FrameTag::test_frame(3, 2),
            marker: true,
            rtx: None,
        }
    }

    fn nack(r: &mut RtxSender, now: SimTime, seqs: &[u16], rtt: Option<SimTime>) -> Vec<Queued> {
        let mut out = Vec::new();
        r.on_nack(now, seqs, rtt, &mut out);
        out
    }

    /// A kept packet is retransmitted as it was sent, with its OSN; one
    /// never sent is refused.
    #[test]
    fn a_kept_packet_is_retransmitted_with_its_original_number() {
        let mut r = RtxSender::new(99);
        r.on_sent(ms(0), 7, &q(500));
        r.on_sent(ms(1), 8, &q(600));
        let out = nack(&mut r, ms(50), &[8, 9], None);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].payload, out[0].rtx, out[0].marker),
            (600, Some(8), true)
        );
        assert_eq!(out[0].tag, FrameTag::test_frame(3, 2));
        assert_eq!(
            r.stats,
            RtxStats {
                nacks: 1,
                requested: 2,
                packets: 1,
                bytes: 0,
                not_kept: 1,
                too_soon: 0
            }
        );
    }

    /// A packet is kept for 1 s, or three round trips when longer (not a
    /// nanosecond more); the ring keeps the last HISTORY packets.
    #[test]
    fn a_packet_is_kept_for_a_second_or_three_round_trips() {
        let mut r = RtxSender::new(99);
        r.on_sent(ms(0), 1, &q(100));
        let before = ms(1000) - SimTime::from_nanos(1);
        assert_eq!(nack(&mut r, before, &[1], None).len(), 1);
        let mut r = RtxSender::new(99);
        r.on_sent(ms(0), 1, &q(100));
        assert!(nack(&mut r, ms(1000), &[1], None).is_empty());
        assert_eq!(nack(&mut r, ms(1000), &[1], Some(ms(400))).len(), 1);
        assert!(
            nack(&mut r, ms(1100), &[1], Some(ms(400))).is_empty(),
            "too soon"
        );
        assert!(
            nack(&mut r, ms(1400), &[1], Some(ms(400))).is_empty(),
            "1.2 s is 3 RTTs"
        );
        // Slot 1 is taken by packet 1 + HISTORY: packet 1 is no longer kept.
        let mut r = RtxSender::new(99);
        r.on_sent(ms(0), 1, &q(100));
        r.on_sent(ms(1), 1 + HISTORY as u16, &q(100));
        assert!(nack(&mut r, ms(2), &[1], None).is_empty());
        assert_eq!(nack(&mut r, ms(2), &[1 + HISTORY as u16], None).len(), 1);
        assert_eq!(r.stats.not_kept, 1);
    }

    /// A retransmitted packet is sent again only a round trip after its
    /// last retransmission (with no estimate, at once).
    #[test]
    fn a_retransmission_repeats_only_after_a_round_trip() {
        let mut r = RtxSender::new(99);
        r.on_sent(ms(0), 5, &q(100));
        let rtt = Some(ms(80));
        assert_eq!(nack(&mut r, ms(100), &[5], rtt).len(), 1);
        assert!(nack(&mut r, ms(179), &[5], rtt).is_empty());
        assert_eq!(nack(&mut r, ms(180), &[5], rtt).len(), 1);
        assert_eq!(nack(&mut r, ms(180), &[5], None).len(), 1);
        assert_eq!((r.stats.packets, r.stats.too_soon), (3, 1));
    }

    /// Sequence numbers wrap: packet 65535 and packet 0 take their own
    /// slots.
    #[test]
    fn sequence_numbers_wrap_into_the_ring() {
        let mut r = RtxSender::new(99);
        r.on_sent(ms(0), u16::MAX, &q(1));
        r.on_sent(ms(0), 0, &q(2));
        let out = nack(&mut r, ms(10), &[u16::MAX, 0], None);
        assert_eq!(out.iter().map(|x| x.payload).collect::<Vec<_>>(), [1, 2]);
    }
}
