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
//!   goes whatever the round trip;
//! - retransmissions may use at most the sender's target rate, measured
//!   over the last 500 ms (libwebrtc's retransmission rate limiter,
//!   kRetransmitWindowSizeMs; `RateLimit`).

use std::collections::VecDeque;

use super::frames::Queued;
use crate::sim::SimTime;

/// Packets the history holds (a ring by sequence number: 65536 is a
/// multiple of it, so wraps keep the slots).
pub const HISTORY: usize = 4096;
/// A packet is kept at least this long after it was sent.
const KEEP_MIN: SimTime = SimTime::from_millis(1000);
/// ... and at least this many round trips.
const KEEP_RTTS: u64 = 3;

/// The window over which retransmissions' rate is measured.
pub const RATE_WINDOW: SimTime = SimTime::from_millis(500);

/// The rate retransmissions have used over the last `RATE_WINDOW`, as
/// libwebrtc's RateLimiter over its RateStatistics measures it, in
/// continuous time where they use 1 ms buckets. A retransmission is
/// refused when the rate with it would pass the limit. The rate is not
/// known (and nothing is refused) while the window holds nothing, or one
/// retransmission only before the window has filled, or in the instant
/// of the first retransmission (so a first burst goes whole, as there).
#[derive(Default)]
pub struct RateLimit {
    /// Admitted retransmissions within the window: (time, wire bytes).
    recent: VecDeque<(SimTime, u32)>,
    bytes: u64,
    first: Option<SimTime>,
}

impl RateLimit {
    /// Whether a retransmission of `bytes` may go at `now` within
    /// `max_bps`; if it may, it is counted.
    pub fn try_use(&mut self, now: SimTime, bytes: u32, max_bps: f64) -> bool {
        while let Some(&(t, b)) = self.recent.front() {
            if t + RATE_WINDOW > now {
                break;
            }
            self.bytes -= b as u64;
            self.recent.pop_front();
        }
        if let Some(rate) = self.rate_bps(now) {
            let add = bytes as f64 * 8.0 / RATE_WINDOW.as_secs_f64();
            if rate + add > max_bps {
                return false;
            }
        }
        self.first.get_or_insert(now);
        self.bytes += bytes as u64;
        self.recent.push_back((now, bytes));
        true
    }

    /// The rate (bit/s) over the window ending at `now`, if known.
    fn rate_bps(&self, now: SimTime) -> Option<f64> {
        let active = RATE_WINDOW.min(now.saturating_sub(self.first?));
        let n = self.recent.len();
        if n == 0 || active == SimTime::ZERO || (n == 1 && active < RATE_WINDOW) {
            return None;
        }
        Some(self.bytes as f64 * 8.0 / active.as_secs_f64())
    }
}

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
    /// less than a round trip before, or retransmissions had used the
    /// rate they may (checked in that order, as libwebrtc does).
    pub not_kept: u64,
    pub too_soon: u64,
    pub rate_limited: u64,
}

/// What a Generic NACK is answered within: the sender's round trip
/// estimate, if any; the rate retransmissions may use (bit/s on the
/// wire: the sender's target); and the bytes a retransmission carries
/// beyond its original payload (OSN and headers).
#[derive(Clone, Copy, Debug)]
pub struct Answer {
    pub rtt: Option<SimTime>,
    pub max_bps: f64,
    pub extra_bytes: u32,
}

pub struct RtxSender {
    /// Slot `seq % HISTORY`; `None` until a packet used it.
    ring: Vec<Option<Stored>>,
    limit: RateLimit,
    /// The retransmission stream's SSRC and its next sequence number.
    pub ssrc: u32,
    pub seq: u16,
    pub stats: RtxStats,
}

impl RtxSender {
    pub fn new(ssrc: u32) -> Self {
        RtxSender {
            ring: Vec::new(),
            limit: RateLimit::default(),
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

    /// A Generic NACK named `seqs` at `now`, answered within `answer`.
    /// Appends the retransmissions to make to `out` (each its original
    /// packet with `rtx` set to the OSN).
    pub fn on_nack(&mut self, now: SimTime, seqs: &[u16], answer: Answer, out: &mut Vec<Queued>) {
        self.stats.nacks += 1;
        let rtt = answer.rtt.unwrap_or(SimTime::ZERO);
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
            let bytes = s.q.payload.saturating_add(answer.extra_bytes);
            if !self.limit.try_use(now, bytes, answer.max_bps) {
                self.stats.rate_limited += 1;
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
            first: false,
            rtx: None,
        }
    }

    fn nack(r: &mut RtxSender, now: SimTime, seqs: &[u16], rtt: Option<SimTime>) -> Vec<Queued> {
        let mut out = Vec::new();
        let answer = Answer {
            rtt,
            max_bps: f64::INFINITY,
            extra_bytes: 0,
        };
        r.on_nack(now, seqs, answer, &mut out);
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
                too_soon: 0,
                rate_limited: 0
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

    /// The limit at 79 kbit/s with 1000-byte retransmissions (16 kbit/s
    /// each over the window): the rate is unknown for a first burst in
    /// one instant, then measured over the time since the first, then
    /// over the last 500 ms (a retransmission 500 ms old has left it); a
    /// retransmission goes while the rate with it stays within the limit.
    #[test]
    fn retransmissions_stay_within_the_rate_over_the_window() {
        let mut l = RateLimit::default();
        let max = 79_000.0;
        let mut go = |t: SimTime| l.try_use(t, 1000, max);
        assert!(go(ms(0)) && go(ms(0)), "unknown rate: a first burst goes");
        assert!(!go(ms(100)), "2000 B over 100 ms is 160 kbit/s");
        assert!(go(ms(400)), "2000 B over 400 ms + 16 kbit/s = 56 kbit/s");
        assert!(go(ms(450)), "3000 B over 450 ms + 16 = 69.3 kbit/s");
        assert!(!go(ms(499)), "4000 B over 499 ms + 16 = 80.1 kbit/s");
        assert!(
            go(ms(500)),
            "the two at 0 left: 2000 B + 16 = 48 kbit/s (80 with them)"
        );
        // One retransmission before the window has filled: unknown.
        let mut l = RateLimit::default();
        assert!(l.try_use(ms(0), 1000, max));
        assert!(l.try_use(ms(10), 1000, max), "one sample, 10 ms: unknown");
        assert!(!l.try_use(ms(20), 1000, max), "2000 B over 20 ms");
        // An empty window: unknown again, whatever came before.
        assert!(l.try_use(ms(2000), 1_000_000, max));
        // One in a full window (the first was 500 ms or more before):
        // known, 16 kbit/s + 16 over a 30 kbit/s limit.
        let mut l = RateLimit::default();
        assert!(l.try_use(ms(0), 1000, 30_000.0));
        assert!(l.try_use(ms(300), 1000, 30_000.0), "one, 300 ms: unknown");
        assert!(
            !l.try_use(ms(700), 1000, 30_000.0),
            "one, a full window: known"
        );
    }

    /// Asked for a 1000-byte retransmission every millisecond, the sender
    /// keeps every 500 ms window within the limit, less than one packet
    /// short of it.
    #[test]
    fn a_steady_stream_of_requests_is_held_to_the_rate() {
        let mut l = RateLimit::default();
        let max = 400_000.0;
        let sent: Vec<u64> = (0..5000u64)
            .filter(|&t| l.try_use(ms(t), 1000, max))
            .collect();
        let per_window = max * RATE_WINDOW.as_secs_f64() / 8.0 / 1000.0;
        for start in 1000..4500u64 {
            let n = sent
                .iter()
                .filter(|&&t| t >= start && t < start + 500)
                .count() as f64;
            assert!(n <= per_window && n >= per_window - 2.0, "{n} at {start}");
        }
    }

    /// A retransmission refused by the limit is counted, and left free to
    /// go when asked again within the round trip.
    #[test]
    fn a_rate_limited_packet_is_counted_and_not_marked_resent() {
        let mut r = RtxSender::new(99);
        for seq in 0..4 {
            r.on_sent(ms(0), seq, &q(960));
        }
        let answer = |max_bps| Answer {
            rtt: Some(ms(50)),
            max_bps,
            extra_bytes: 40,
        };
        let mut out = Vec::new();
        r.on_nack(ms(10), &[0, 1], answer(1e5), &mut out);
        assert_eq!(out.len(), 2, "a first burst goes whole");
        r.on_nack(ms(20), &[2, 3], answer(1e5), &mut out);
        assert_eq!((out.len(), r.stats.rate_limited), (2, 2));
        r.on_nack(ms(30), &[2], answer(1e9), &mut out);
        assert_eq!(out.len(), 3, "not resent: the round trip does not hold it");
        r.on_nack(ms(40), &[0], answer(1e9), &mut out);
        assert_eq!(r.stats.too_soon, 1, "the round trip is checked first");
        assert_eq!(r.stats.rate_limited, 2);
    }
}
