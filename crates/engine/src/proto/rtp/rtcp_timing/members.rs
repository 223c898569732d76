//! The member table of RFC 3550 6.3: who is in the session, when each
//! member was last heard (for the 6.3.5 time-out) and who sent RTP lately
//! (the senders count).
//!
//! Every member keeps one, and in a session of n members each learns of
//! all the others: n tables of n entries, the one part of a session's
//! memory that grows with the square of its size. A hash map entry costs
//! about 40 bytes; the SSRCs a session's builder hands out form a range,
//! kept as a plain array of last-heard times, 4 bytes each, allocated when
//! the first of them is heard. SSRCs outside the range go to a map.
//!
//! Last-heard times are stamped by a millisecond clock (the time in whole
//! milliseconds, rounded down), as a stack with a millisecond clock would
//! stamp them; RFC 3550 does not ask for more, and its time-outs are at
//! least 5 x 2.5 s. That is what lets a stamp fit in 4 bytes for the first
//! 49.7 days of a run; later stamps of a range member go to the map too.

use crate::sim::SimTime;
// FxHash: the keys are SSRCs we hand out, hashed on every media packet.
use rustc_hash::FxHashMap as HashMap;

/// `dense` slot of a non-member.
const ABSENT: u32 = u32::MAX;
/// `dense` slot of a member whose stamp is in `sparse` (past 49.7 days).
const IN_MAP: u32 = u32::MAX - 1;

/// The millisecond clock's reading at `t`.
pub fn stamp_ms(t: SimTime) -> u64 {
    t.as_nanos() / 1_000_000
}

#[derive(Clone, Debug, Default)]
pub struct MemberTable {
    /// First SSRC and number of SSRCs of the dense range.
    base: u32,
    slots: u32,
    /// Last heard (ms stamp) per SSRC of the range, ABSENT for
    /// non-members, IN_MAP for stamps too late for 4 bytes.
    dense: Vec<u32>,
    /// Members outside the range, and IN_MAP ones: last heard (ms stamp).
    sparse: HashMap<u32, u64>,
    /// Members that sent RTP within the sender time-out: last RTP.
    senders: HashMap<u32, SimTime>,
    count: u32,
    /// No member was last heard before this (ms stamp): hearing only moves
    /// times later, so a time-out check with nobody older than its limit
    /// skips the scan (checks run every second; sessions of 10,000 have
    /// member time-outs of hours).
    oldest_bound: u64,
}

impl MemberTable {
    /// A table whose SSRCs `base..base + slots` are kept densely.
    pub fn new(base: u32, slots: u32) -> Self {
        MemberTable {
            base,
            slots,
            ..Default::default()
        }
    }

    fn slot(&self, ssrc: u32) -> Option<usize> {
        let i = ssrc.wrapping_sub(self.base);
        (i < self.slots).then_some(i as usize)
    }

    /// Other members in the table.
    pub fn len(&self) -> u32 {
        self.count
    }
    /// Members that sent RTP lately.
    pub fn senders(&self) -> u32 {
        self.senders.len() as u32
    }

    /// `ssrc` was heard at `now` (added if new).
    pub fn heard(&mut self, ssrc: u32, now: SimTime) {
        let ms = stamp_ms(now);
        if self.count == 0 {
            self.oldest_bound = ms;
        }
        let Some(i) = self.slot(ssrc) else {
            self.count += self.sparse.insert(ssrc, ms).is_none() as u32;
            return;
        };
        if self.dense.is_empty() {
            self.dense = vec![ABSENT; self.slots as usize];
        }
        self.count += (self.dense[i] == ABSENT) as u32;
        self.dense[i] = match u32::try_from(ms) {
            Ok(ms) if ms < IN_MAP => ms,
            _ => {
                self.sparse.insert(ssrc, ms);
                IN_MAP
            }
        };
    }

    /// `ssrc` sent RTP at `now`: heard, and a sender.
    pub fn sent_rtp(&mut self, ssrc: u32, now: SimTime) {
        self.heard(ssrc, now);
        self.senders.insert(ssrc, now);
    }

    /// Removes `ssrc` (a BYE); whether it was a member.
    pub fn remove(&mut self, ssrc: u32) -> bool {
        self.senders.remove(&ssrc);
        let in_map = self.sparse.remove(&ssrc).is_some();
        let was = match self.slot(ssrc) {
            Some(i) => self
                .dense
                .get_mut(i)
                .is_some_and(|t| std::mem::replace(t, ABSENT) != ABSENT),
            None => in_map,
        };
        self.count -= was as u32;
        was
    }

    /// 6.3.5: removes members not heard for `member_limit` or longer and
    /// ends the sender status of those without RTP for `sender_limit`;
    /// returns how many members left.
    pub fn time_out(&mut self, now: SimTime, member_limit: SimTime, sender_limit: SimTime) -> u32 {
        let keep = |ms: u64| {
            let heard = SimTime::from_nanos(ms.saturating_mul(1_000_000));
            now.saturating_sub(heard) < member_limit
        };
        self.senders
            .retain(|_, t| now.saturating_sub(*t) < sender_limit);
        if keep(self.oldest_bound) {
            return 0;
        }
        let before = self.count;
        for (i, t) in self.dense.iter_mut().enumerate() {
            if *t < IN_MAP && !keep(*t as u64) {
                *t = ABSENT;
                self.count -= 1;
                self.senders.remove(&(self.base + i as u32));
            }
        }
        let gone: Vec<u32> = (self.sparse.iter())
            .filter(|&(_, &ms)| !keep(ms))
            .map(|(&s, _)| s)
            .collect();
        for s in gone {
            self.remove(s);
        }
        let dense = self
            .dense
            .iter()
            .filter(|&&t| t < IN_MAP)
            .map(|&t| t as u64);
        let sparse = self.sparse.values().copied();
        self.oldest_bound = dense.chain(sparse).min().unwrap_or(u64::MAX);
        before - self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: u64) -> SimTime {
        SimTime::from_secs(secs)
    }

    #[test]
    fn members_in_and_out_of_the_dense_range_count_alike() {
        let mut t = MemberTable::new(1001, 3);
        for ssrc in [1001, 1003, 7, 1003, 7] {
            t.heard(ssrc, s(1));
        }
        assert_eq!(t.len(), 3, "1001, 1003 and 7, each once");
        t.sent_rtp(1002, s(2));
        t.sent_rtp(9, s(2));
        assert_eq!((t.len(), t.senders()), (5, 2));
        assert!(t.remove(1002) && t.remove(9));
        assert!(!t.remove(1002) && !t.remove(1004));
        assert_eq!((t.len(), t.senders()), (3, 0));
    }

    #[test]
    fn time_out_removes_the_silent_and_ends_stale_sender_status() {
        let mut t = MemberTable::new(1, 4);
        t.heard(1, s(0)); // silent since 0
        t.sent_rtp(2, s(8)); // heard at 8, RTP at 8
        t.heard(100, s(2)); // outside the range, silent since 2
        t.sent_rtp(3, s(3));
        t.heard(3, s(9)); // heard at 9, last RTP at 3
                          // At 10 with limits 8 s (members) and 4 s (senders): 1 (10 s) and
                          // 100 (8 s, not < 8) leave; 3 stays but its RTP (7 s) is stale.
        assert_eq!(t.time_out(s(10), s(8), s(4)), 2);
        assert_eq!((t.len(), t.senders()), (2, 1));
        assert!(t.remove(2) && t.remove(3));
    }

    #[test]
    fn last_heard_is_stamped_by_a_millisecond_clock() {
        let mut t = MemberTable::new(1, 2);
        t.heard(1, SimTime::from_nanos(1_999_999)); // stamped 1 ms
        t.heard(5, SimTime::from_nanos(1_999_999)); // outside the range too
        let limit = SimTime::from_millis(8);
        // The stamps (1 ms) say 7.999999 ms since, just inside the limit...
        assert_eq!(t.time_out(SimTime::from_nanos(8_999_999), limit, limit), 0);
        // ...and at 9 ms 8 ms since, though they were heard 7.000001 ms ago.
        assert_eq!(t.time_out(SimTime::from_nanos(9_000_000), limit, limit), 2);
        assert_eq!(t.len(), 0);
    }

    /// Against the plain map of RFC 3550 6.3 (last heard on a millisecond
    /// clock, last RTP per member), over random hearing, BYEs and time-out
    /// checks: the same members, senders and time-out counts at every step.
    #[test]
    fn matches_a_plain_member_map_under_random_operations() {
        matches_a_plain_member_map_from(SimTime::ZERO);
    }

    /// The same across the end of the 4-byte stamps, 49.7 days in.
    #[test]
    fn matches_a_plain_member_map_past_the_4_byte_stamps() {
        matches_a_plain_member_map_from(SimTime::from_millis(u32::MAX as u64 - 2_000_000));
    }

    fn matches_a_plain_member_map_from(start: SimTime) {
        use crate::sim::{uniform, RngStreams};
        let mut rng = RngStreams::new(11, 0).stream("ops");
        let mut table = MemberTable::new(100, 20);
        let mut model: HashMap<u32, (SimTime, Option<SimTime>)> = HashMap::default();
        let mut now = start;
        // The millisecond clock's reading.
        let clock = |t: SimTime| SimTime::from_millis(t.as_nanos() / 1_000_000);
        for _ in 0..20_000 {
            now += SimTime::from_micros((uniform(&mut rng) * 400e3) as u64);
            // SSRCs 95..125: some outside the dense range 100..120.
            let ssrc = 95 + (uniform(&mut rng) * 30.0) as u32;
            match (uniform(&mut rng) * 10.0) as u32 {
                0..=4 => {
                    table.heard(ssrc, now);
                    model.entry(ssrc).or_insert((now, None)).0 = clock(now);
                }
                5 | 6 => {
                    table.sent_rtp(ssrc, now);
                    let m = model.entry(ssrc).or_insert((now, None));
                    *m = (clock(now), Some(now));
                }
                7 => {
                    assert_eq!(table.remove(ssrc), model.remove(&ssrc).is_some());
                }
                _ => {
                    let (ml, sl) = (s(4 + ssrc as u64 % 5), s(2));
                    let before = model.len();
                    model.retain(|_, m| now.saturating_sub(m.0) < ml);
                    for m in model.values_mut() {
                        if m.1.is_some_and(|t| now.saturating_sub(t) >= sl) {
                            m.1 = None;
                        }
                    }
                    let gone = (before - model.len()) as u32;
                    assert_eq!(table.time_out(now, ml, sl), gone);
                }
            }
            assert_eq!(table.len(), model.len() as u32);
            let senders = model.values().filter(|m| m.1.is_some()).count() as u32;
            assert_eq!(table.senders(), senders);
        }
    }
}
