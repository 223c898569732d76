//! The receiver's retransmission requests (`playout.nack`): which lost
//! packets of the stream it plays to ask for in a Generic NACK (RFC 4585
//! 6.2.1), and when to ask again, as libwebrtc's NACK module does:
//! - a gap in sequence numbers is asked for at once, even on a path that
//!   reorders (libwebrtc's reordering estimate never gets a value, since
//!   it takes every packet for a retransmission, and its send_nack_delay
//!   is 0 by default);
//! - a packet asked for whose original comes after all, out of order,
//!   is no longer asked for (`spurious`); a retransmission of it that
//!   still comes is a duplicate;
//! - a packet not yet recovered is asked for again once a round trip has
//!   passed since the last request (`rtt`: the member's RFC 3550 estimate,
//!   or `default_rtt` without one: libwebrtc's 100 ms);
//! - after `retries` requests (libwebrtc's kMaxNackRetries, 10) it is
//!   given up;
//! - a packet more than `MAX_AGE` behind the end of a new gap is given up
//!   (libwebrtc's kMaxPacketAge);
//! - at most `MAX_LIST` packets wait (libwebrtc's kMaxNackPackets,
//!   1000): a gap that would take the list past it first gives up the
//!   packets older than the first packet of a key frame that came in
//!   order, the oldest such key frame first, until the gap fits
//!   (RemovePacketsUntilKeyFrame); if it still does not fit, the list is
//!   cleared (its packets given up), none of the gap is asked for, and a
//!   key frame is asked for instead (NackRequester::AddPacketsToNack);
//! - with reference decoding, a key frame that completes makes the older
//!   packets useless: those still asked for are given up (`clear_up_to`:
//!   libwebrtc's ClearUpTo when the frame buffer finds a frame
//!   continuous; with one reference per frame the newest continuous
//!   frame's chain starts at the newest complete key frame, and none of
//!   its frames' packets is missing).
//!
//! A retransmission (RFC 4588) names its original sequence number: it is
//! taken in if that packet is still asked for, else it is a duplicate (its
//! original was recovered already, came late, or was given up). The
//! packets recovered within the last `MAX_AGE` are remembered, so that an
//! original arriving after its retransmission is known for a copy
//! (libwebrtc's recovered list). `clear_up_to` keeps them (libwebrtc
//! clears that list too, but its packet buffer still drops a second copy;
//! here the list is what tells a copy apart). A retransmission of a packet
//! given up is a duplicate and is not taken in (libwebrtc's packet buffer
//! would still take it, which matters only when it completes a frame not
//! yet rendered).
//!
//! Sequence numbers here are extended past 16-bit wraps.

use crate::sim::SimTime;
use std::collections::VecDeque;

/// Most packets waiting to be recovered (libwebrtc's kMaxNackPackets).
pub const MAX_LIST: usize = 1000;
/// How far behind the newest recovered packet one is still remembered
/// (libwebrtc's kMaxPacketAge).
pub const MAX_AGE: u64 = 10_000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NackParams {
    /// Requests per packet before it is given up.
    pub retries: u32,
    /// The round trip assumed before the member has an estimate.
    pub default_rtt: SimTime,
}

#[derive(Clone, Copy, Debug)]
struct Missing {
    seq: u64,
    /// When it was last asked for.
    asked: SimTime,
    tries: u32,
}

/// What the requester counts (the `media` table's receiver columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NackStats {
    /// Packets asked for, each request counted (retries included).
    pub requested: u64,
    /// Lost packets whose retransmission arrived in time to be taken in.
    pub recovered: u64,
    /// Lost packets given up: retries spent, too old (`MAX_AGE`), removed
    /// to make room for a gap (older than a key frame, or the whole list
    /// cleared), or made useless by a complete key frame.
    pub given_up: u64,
    /// Retransmissions of packets not asked for any more.
    pub duplicates: u64,
    /// Packets asked for whose original came after all, out of order.
    pub spurious: u64,
}

/// What an original packet arriving behind the newest one is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Late {
    /// Not asked for: new to the receiver.
    New,
    /// Asked for: new to the receiver, and no longer asked for.
    Asked,
    /// Its retransmission came first: a copy.
    Recovered,
}

#[derive(Clone, Debug)]
pub struct NackRequester {
    p: NackParams,
    /// Packets asked for and not yet recovered, in ascending order.
    list: VecDeque<Missing>,
    /// Packets recovered by a retransmission, ascending, within `MAX_AGE`
    /// of the newest of them.
    recovered: VecDeque<u64>,
    /// First packets of key frames that came in order, ascending, within
    /// `MAX_AGE` of the newest (libwebrtc's keyframe list).
    key_frames: VecDeque<u64>,
    pub stats: NackStats,
}

impl NackRequester {
    pub fn new(p: NackParams) -> Self {
        NackRequester {
            p,
            list: VecDeque::new(),
            recovered: VecDeque::new(),
            key_frames: VecDeque::new(),
            stats: NackStats::default(),
        }
    }

    /// `n` packets from `first` on (extended) are missing at `now`: each
    /// is asked for at once; returns them (as sent in the NACK) into `ask`.
    /// Packets more than `MAX_AGE` behind go first, then, while the list
    /// would hold more than `MAX_LIST`, those before key frames. Returns
    /// true when it still would: it is cleared instead, nothing asked for,
    /// and a key frame is needed.
    #[must_use]
    pub fn on_gap(&mut self, now: SimTime, first: u64, n: u64, ask: &mut Vec<u64>) -> bool {
        let end = first + n;
        self.give_up_before(end.saturating_sub(MAX_AGE));
        let fits = |r: &Self| r.list.len() as u64 + n <= MAX_LIST as u64;
        while !fits(self) && self.remove_until_key_frame() {}
        if !fits(self) {
            // libwebrtc's NackRequester: "NACK list full, clearing NACK
            // list and requesting keyframe". The gap's packets were never
            // asked for, so only the listed ones are given up.
            self.stats.given_up += self.list.len() as u64;
            self.list.clear();
            return true;
        }
        for seq in first..first + n {
            if self.list.back().is_some_and(|m| m.seq >= seq) {
                continue; // listed already (gaps start past the newest packet)
            }
            self.list.push_back(Missing {
                seq,
                asked: now,
                tries: 1,
            });
            self.stats.requested += 1;
            ask.push(seq);
        }
        false
    }

    /// Gives up the packets listed before `seq`; returns how many.
    fn give_up_before(&mut self, seq: u64) -> usize {
        let n = self.list.partition_point(|m| m.seq < seq);
        self.list.drain(..n);
        self.stats.given_up += n as u64;
        n
    }

    /// libwebrtc's RemovePacketsUntilKeyFrame: gives up the packets older
    /// than the oldest key frame that has any; key frames with none are
    /// forgotten. Returns whether any were given up.
    fn remove_until_key_frame(&mut self) -> bool {
        while let Some(&k) = self.key_frames.front() {
            if self.give_up_before(k) > 0 {
                return true;
            }
            self.key_frames.pop_front();
        }
        false
    }

    /// The first packet of a key frame, `seq`, came as the newest packet
    /// (in order, not a retransmission).
    #[cold]
    pub fn on_key_frame_start(&mut self, seq: u64) {
        if self.key_frames.back().is_some_and(|&k| k >= seq) {
            return;
        }
        self.key_frames.push_back(seq);
        while self.key_frames.front().is_some_and(|&k| k + MAX_AGE < seq) {
            self.key_frames.pop_front();
        }
    }

    /// With reference decoding, a key frame completed with its packet
    /// `seq`: the packets still asked for before it are given up
    /// (libwebrtc's ClearUpTo). That also forgets the key frames before
    /// it; here they stay until they age out, as they can no longer give
    /// anything up (every packet before them is gone).
    #[cold]
    pub fn clear_up_to(&mut self, seq: u64) {
        self.give_up_before(seq);
    }

    /// A retransmission of packet `seq` arrived: whether it is taken in
    /// (it was still asked for).
    pub fn on_retransmission(&mut self, seq: u64) -> bool {
        match self.list.binary_search_by_key(&seq, |m| m.seq) {
            Ok(i) => {
                self.list.remove(i);
                self.stats.recovered += 1;
                self.remember(seq);
                true
            }
            Err(_) => {
                self.stats.duplicates += 1;
                false
            }
        }
    }

    fn remember(&mut self, seq: u64) {
        let at = self.recovered.partition_point(|&s| s < seq);
        self.recovered.insert(at, seq);
        let newest = *self.recovered.back().expect("inserted");
        while self
            .recovered
            .front()
            .is_some_and(|&s| s + MAX_AGE < newest)
        {
            self.recovered.pop_front();
        }
    }

    /// The original packet `seq` arrived behind the newest one (the path
    /// reordered it): what it is to the receiver.
    #[cold]
    pub fn on_late(&mut self, seq: u64) -> Late {
        if let Ok(i) = self.list.binary_search_by_key(&seq, |m| m.seq) {
            self.list.remove(i);
            self.stats.spurious += 1;
            Late::Asked
        } else if self.recovered.binary_search(&seq).is_ok() {
            Late::Recovered
        } else {
            Late::New
        }
    }

    /// The packets to ask for again at `now` (a round trip `rtt`, if
    /// known, since their last request), into `ask`; those whose retries
    /// are spent are given up instead.
    pub fn due(&mut self, now: SimTime, rtt: Option<SimTime>, ask: &mut Vec<u64>) {
        let rtt = rtt.unwrap_or(self.p.default_rtt);
        let retries = self.p.retries;
        let stats = &mut self.stats;
        self.list.retain_mut(|m| {
            if m.asked + rtt > now {
                return true;
            }
            if m.tries >= retries {
                stats.given_up += 1;
                return false;
            }
            m.tries += 1;
            m.asked = now;
            stats.requested += 1;
            ask.push(m.seq);
            true
        });
    }

    /// When `due` next has something to do, with round trip `rtt`.
    pub fn next_due(&self, rtt: Option<SimTime>) -> Option<SimTime> {
        let rtt = rtt.unwrap_or(self.p.default_rtt);
        self.list.iter().map(|m| m.asked + rtt).min()
    }

    /// Packets still asked for.
    pub fn waiting(&self) -> usize {
        self.list.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn requester(retries: u32) -> NackRequester {
        NackRequester::new(NackParams {
            retries,
            default_rtt: ms(100),
        })
    }

    /// A gap is asked for at once; a retransmission of a listed packet is
    /// taken in, a second copy of it is a duplicate.
    #[test]
    fn a_gap_is_asked_for_at_once_and_its_retransmission_taken_in_once() {
        let mut r = requester(10);
        let mut ask = Vec::new();
        assert!(!r.on_gap(ms(5), 70_000, 3, &mut ask));
        assert_eq!(ask, [70_000, 70_001, 70_002]);
        assert_eq!(r.waiting(), 3);
        assert!(r.on_retransmission(70_001));
        assert!(!r.on_retransmission(70_001), "a second copy");
        assert!(!r.on_retransmission(69_999), "never asked for");
        assert_eq!(
            r.stats,
            NackStats {
                requested: 3,
                recovered: 1,
                duplicates: 2,
                given_up: 0,
                spurious: 0
            }
        );
        assert_eq!(r.waiting(), 2);
    }

    /// A packet is asked for again once a round trip has passed since its
    /// last request (the default 100 ms without an estimate, not a
    /// nanosecond before), until its retries are spent; then it is given
    /// up at the next round trip.
    #[test]
    fn requests_repeat_every_round_trip_until_the_retries_are_spent() {
        let mut r = requester(3);
        let mut ask = Vec::new();
        assert!(!r.on_gap(ms(0), 10, 1, &mut ask));
        assert_eq!(r.next_due(None), Some(ms(100)));
        assert_eq!(r.next_due(Some(ms(30))), Some(ms(30)));
        ask.clear();
        r.due(ms(100) - SimTime::from_nanos(1), None, &mut ask);
        assert!(ask.is_empty());
        r.due(ms(100), None, &mut ask);
        assert_eq!(ask, [10]);
        // With a 40 ms estimate: the third request at 140 ms.
        ask.clear();
        r.due(ms(139), Some(ms(40)), &mut ask);
        assert!(ask.is_empty());
        r.due(ms(140), Some(ms(40)), &mut ask);
        assert_eq!(ask, [10]);
        // Three requests made: the next round trip gives it up.
        ask.clear();
        r.due(ms(180), Some(ms(40)), &mut ask);
        assert!(ask.is_empty());
        assert_eq!(r.waiting(), 0);
        assert_eq!(r.next_due(None), None);
        assert_eq!((r.stats.requested, r.stats.given_up), (3, 1));
        assert!(!r.on_retransmission(10), "given up: a duplicate");
    }

    /// One retry allowed: a single request, then given up.
    #[test]
    fn one_retry_means_one_request() {
        let mut r = requester(1);
        let mut ask = Vec::new();
        assert!(!r.on_gap(ms(0), 1, 2, &mut ask));
        ask.clear();
        r.due(ms(100), None, &mut ask);
        assert!(ask.is_empty());
        assert_eq!((r.stats.requested, r.stats.given_up), (2, 2));
    }

    /// The list holds at most MAX_LIST packets, as libwebrtc's: a gap
    /// that would take it past that clears it and asks for none of its
    /// own (a key frame is needed); the packets listed are given up. A
    /// gap that fills it exactly is asked for.
    #[test]
    fn a_gap_that_overflows_the_list_clears_it() {
        let mut r = requester(10);
        let mut ask = Vec::new();
        assert!(r.on_gap(ms(0), 0, MAX_LIST as u64 + 1, &mut ask));
        assert!(ask.is_empty());
        assert_eq!(
            (r.waiting(), r.stats.requested, r.stats.given_up),
            (0, 0, 0)
        );
        assert!(!r.on_gap(ms(1), 2000, 3, &mut ask));
        assert!(!r.on_gap(ms(1), 2004, MAX_LIST as u64 - 3, &mut ask));
        assert_eq!((r.waiting(), ask.len()), (MAX_LIST, MAX_LIST));
        ask.clear();
        assert!(r.on_gap(ms(2), 5000, 1, &mut ask));
        assert!(ask.is_empty());
        assert_eq!((r.waiting(), r.stats.given_up), (0, MAX_LIST as u64));
        assert!(!r.on_retransmission(2000), "cleared");
        assert!(!r.on_gap(ms(3), 6000, 2, &mut ask));
        assert_eq!(ask, [6000, 6001]);
    }

    /// A gap first gives up the packets more than MAX_AGE behind its end
    /// (libwebrtc's kMaxPacketAge), not one more.
    #[test]
    fn a_gap_gives_up_packets_more_than_max_age_behind_its_end() {
        let mut r = requester(10);
        let mut ask = Vec::new();
        assert!(!r.on_gap(ms(0), 100, 3, &mut ask));
        // The gap ends at 101 + MAX_AGE: 100 is more than MAX_AGE behind.
        assert!(!r.on_gap(ms(1), 100 + MAX_AGE, 1, &mut ask));
        assert_eq!((r.waiting(), r.stats.given_up), (3, 1));
        assert!(!r.on_retransmission(100), "given up");
        assert!(r.on_retransmission(101));
    }

    /// A gap that would overflow the list first gives up the packets
    /// before the oldest key frame that has any older, then the next, until
    /// it fits (libwebrtc's RemovePacketsUntilKeyFrame); no key frame is
    /// needed then. Key frames with no older packet are forgotten.
    #[test]
    fn an_overflow_first_gives_up_the_packets_before_a_key_frame() {
        let mut r = requester(10);
        let mut ask = Vec::new();
        r.on_key_frame_start(5); // older than every packet listed
        assert!(!r.on_gap(ms(0), 10, 400, &mut ask));
        r.on_key_frame_start(500);
        assert!(!r.on_gap(ms(0), 501, 400, &mut ask));
        r.on_key_frame_start(1000);
        assert!(!r.on_gap(ms(0), 1001, 200, &mut ask));
        assert_eq!(r.waiting(), 1000);
        // 300 more: the 400 before 500 go, and that is enough.
        ask.clear();
        assert!(!r.on_gap(ms(1), 2000, 300, &mut ask));
        assert_eq!(ask.len(), 300, "the gap is asked for");
        assert_eq!((r.waiting(), r.stats.given_up), (900, 400));
        assert!(!r.on_retransmission(409));
        assert!(r.on_retransmission(501));
        // 700 more: the 399 left before 1000 go, and still 200 + 300 +
        // 700 > 1000: the list is cleared.
        assert!(r.on_gap(ms(2), 3000, 700, &mut ask));
        assert_eq!((r.waiting(), r.stats.given_up), (0, 400 + 399 + 500));
    }

    /// Key frames are kept within MAX_AGE of the newest (a bound on the
    /// list when no gap overflows; older ones could give nothing up).
    #[test]
    fn key_frames_are_kept_within_max_age_of_the_newest() {
        let mut r = requester(10);
        let kept = |r: &NackRequester| r.key_frames.iter().copied().collect::<Vec<_>>();
        for k in [0, 5000, MAX_AGE] {
            r.on_key_frame_start(k);
        }
        assert_eq!(kept(&r), [0, 5000, MAX_AGE], "MAX_AGE behind: kept");
        r.on_key_frame_start(MAX_AGE + 1);
        assert_eq!(kept(&r), [5000, MAX_AGE, MAX_AGE + 1]);
        r.on_key_frame_start(2 * MAX_AGE + 1);
        assert_eq!(kept(&r), [MAX_AGE + 1, 2 * MAX_AGE + 1]);
        r.on_key_frame_start(2 * MAX_AGE); // not the newest: ignored
        assert_eq!(kept(&r), [MAX_AGE + 1, 2 * MAX_AGE + 1]);
    }

    /// A complete key frame (reference decoding) gives up what is asked
    /// for before its packet.
    #[test]
    fn a_complete_key_frame_gives_up_the_older_packets() {
        let mut r = requester(10);
        let mut ask = Vec::new();
        r.on_key_frame_start(1);
        assert!(!r.on_gap(ms(0), 10, 5, &mut ask));
        assert!(!r.on_gap(ms(0), 30, 2, &mut ask));
        r.clear_up_to(20);
        assert_eq!((r.waiting(), r.stats.given_up), (2, 5));
        ask.clear();
        r.due(ms(100), None, &mut ask);
        assert_eq!(ask, [30, 31]);
        assert!(!r.on_retransmission(12), "given up: a duplicate");
        // The key frame at 1 has nothing older left: an overflow clears.
        assert!(r.on_gap(ms(1), 40, MAX_LIST as u64 - 1, &mut ask));
    }

    /// Packets are listed in order and only once: a gap overlapping what
    /// is listed adds only the packets past it.
    #[test]
    fn a_gap_is_listed_once() {
        let mut r = requester(10);
        let mut ask = Vec::new();
        assert!(!r.on_gap(ms(0), 10, 3, &mut ask));
        assert!(!r.on_gap(ms(1), 11, 4, &mut ask));
        assert_eq!(ask, [10, 11, 12, 13, 14]);
        assert_eq!(r.waiting(), 5);
    }

    /// An original that comes out of order after its request is no longer
    /// asked for, and its retransmission is a duplicate; one that comes
    /// after its retransmission is a copy; one never asked for is new.
    #[test]
    fn a_late_original_ends_its_requests_or_is_a_copy() {
        let mut r = requester(10);
        let mut ask = Vec::new();
        assert!(!r.on_gap(ms(0), 100, 3, &mut ask));
        assert_eq!(r.on_late(101), Late::Asked);
        assert_eq!(r.waiting(), 2);
        ask.clear();
        r.due(ms(100), None, &mut ask);
        assert_eq!(ask, [100, 102], "no longer asked for");
        assert!(!r.on_retransmission(101), "its retransmission: a duplicate");
        assert!(r.on_retransmission(102));
        assert_eq!(r.on_late(102), Late::Recovered);
        assert_eq!(
            r.on_late(101),
            Late::New,
            "came already: the member's own check"
        );
        assert_eq!(r.on_late(99), Late::New);
        assert_eq!(
            (r.stats.spurious, r.stats.recovered, r.stats.duplicates),
            (1, 1, 1)
        );
    }

    /// Recovered packets are remembered within MAX_AGE of the newest of
    /// them, whatever order their retransmissions came in.
    #[test]
    fn recovered_packets_are_remembered_within_max_age() {
        let mut r = requester(10);
        let mut ask = Vec::new();
        assert!(!r.on_gap(ms(0), 10, 2, &mut ask));
        assert!(r.on_retransmission(11));
        assert!(r.on_retransmission(10));
        assert!(!r.on_gap(ms(1), 10 + MAX_AGE, 2, &mut ask));
        assert!(r.on_retransmission(10 + MAX_AGE));
        assert_eq!(r.on_late(10), Late::Recovered, "MAX_AGE behind: kept");
        assert_eq!(r.on_late(11), Late::Recovered);
        assert!(r.on_retransmission(11 + MAX_AGE));
        assert_eq!(
            r.on_late(10),
            Late::New,
            "more than MAX_AGE behind: forgotten"
        );
        assert_eq!(r.on_late(11), Late::Recovered);
        assert_eq!(r.on_late(10 + MAX_AGE), Late::Recovered);
    }
}
