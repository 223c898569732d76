//! The member table of RFC 3550 6.3: who is in the session, when each
//! member was last heard (for the 6.3.5 time-out) and who sent RTP lately
//! (the senders count).
//!
//! Every member keeps one, and in a session of n members each learns of
//! all the others, so n tables of n entries. A hash map entry costs about
//! 40 bytes; the SSRCs a session's builder hands out form a range, which is
//! kept as a plain array of last-heard times (8 bytes each), allocated when
//! the first of them is heard. SSRCs outside the range go to a map.

use crate::sim::SimTime;
// FxHash: the keys are SSRCs we hand out, hashed on every media packet.
use rustc_hash::FxHashMap as HashMap;

/// `dense` slot of a non-member.
const ABSENT: u64 = u64::MAX;

#[derive(Debug, Default)]
pub struct MemberTable {
    /// First SSRC and number of SSRCs of the dense range.
    base: u32,
    slots: u32,
    /// Last heard (ns) per SSRC of the range, ABSENT for non-members.
    dense: Vec<u64>,
    /// Members outside the range: last heard.
    sparse: HashMap<u32, SimTime>,
    /// Members that sent RTP within the sender time-out: last RTP.
    senders: HashMap<u32, SimTime>,
    count: u32,
    /// No member was last heard before this (ns): hearing only moves
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
        if self.count == 0 {
            self.oldest_bound = now.as_nanos();
        }
        match self.slot(ssrc) {
            Some(i) => {
                if self.dense.is_empty() {
                    self.dense = vec![ABSENT; self.slots as usize];
                }
                self.count += (self.dense[i] == ABSENT) as u32;
                self.dense[i] = now.as_nanos();
            }
            None => {
                self.count += self.sparse.insert(ssrc, now).is_none() as u32;
            }
        }
    }

    /// `ssrc` sent RTP at `now`: heard, and a sender.
    pub fn sent_rtp(&mut self, ssrc: u32, now: SimTime) {
        self.heard(ssrc, now);
        self.senders.insert(ssrc, now);
    }

    /// Removes `ssrc` (a BYE); whether it was a member.
    pub fn remove(&mut self, ssrc: u32) -> bool {
        self.senders.remove(&ssrc);
        let was = match self.slot(ssrc) {
            Some(i) => self
                .dense
                .get_mut(i)
                .is_some_and(|t| std::mem::replace(t, ABSENT) != ABSENT),
            None => self.sparse.remove(&ssrc).is_some(),
        };
        self.count -= was as u32;
        was
    }

    /// 6.3.5: removes members not heard for `member_limit` or longer and
    /// ends the sender status of those without RTP for `sender_limit`;
    /// returns how many members left.
    pub fn time_out(&mut self, now: SimTime, member_limit: SimTime, sender_limit: SimTime) -> u32 {
        let keep = |t: SimTime| now.saturating_sub(t) < member_limit;
        self.senders
            .retain(|_, t| now.saturating_sub(*t) < sender_limit);
        if keep(SimTime::from_nanos(self.oldest_bound)) {
            return 0;
        }
        let before = self.count;
        for (i, t) in self.dense.iter_mut().enumerate() {
            if *t != ABSENT && !keep(SimTime::from_nanos(*t)) {
                *t = ABSENT;
                self.count -= 1;
                self.senders.remove(&(self.base + i as u32));
            }
        }
        let gone: Vec<u32> = (self.sparse.iter())
            .filter(|&(_, &t)| !keep(t))
            .map(|(&s, _)| s)
            .collect();
        for s in gone {
            self.sparse.remove(&s);
            self.senders.remove(&s);
            self.count -= 1;
        }
        let dense = self.dense.iter().copied().filter(|&t| t != ABSENT);
        let sparse = self.sparse.values().map(|t| t.as_nanos());
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

    /// Against the plain map of RFC 3550 6.3 (last heard, last RTP per
    /// member), over random hearing, BYEs and time-out checks: the same
    /// members, senders and time-out counts at every step.
    #[test]
    fn matches_a_plain_member_map_under_random_operations() {
        use crate::sim::{uniform, RngStreams};
        let mut rng = RngStreams::new(11, 0).stream("ops");
        let mut table = MemberTable::new(100, 20);
        let mut model: HashMap<u32, (SimTime, Option<SimTime>)> = HashMap::default();
        let mut now = SimTime::ZERO;
        for _ in 0..20_000 {
            now += SimTime::from_millis((uniform(&mut rng) * 400.0) as u64);
            // SSRCs 95..125: some outside the dense range 100..120.
            let ssrc = 95 + (uniform(&mut rng) * 30.0) as u32;
            match (uniform(&mut rng) * 10.0) as u32 {
                0..=4 => {
                    table.heard(ssrc, now);
                    model.entry(ssrc).or_insert((now, None)).0 = now;
                }
                5 | 6 => {
                    table.sent_rtp(ssrc, now);
                    let m = model.entry(ssrc).or_insert((now, None));
                    *m = (now, Some(now));
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
