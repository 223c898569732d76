//! The packets on a link direction's wire (being serialised or
//! propagating), in arrival order, with their arrival times and where
//! each goes from the far end (found as it went on the wire).
//!
//! The first one is kept inline, in the link direction's own cache line;
//! only the ones behind it go to a ring of their own. An access link of a
//! dumbbell with hundreds of flows rarely has two packets on its wire at
//! once, and its ring's buffer (a separate allocation) was one more cache
//! line to miss on every hop.

use super::store::PacketRef;
use crate::sim::SimTime;
use std::collections::VecDeque;

pub struct InTransit {
    /// When the first packet arrives (`SimTime::MAX`: the wire is empty).
    first_at: SimTime,
    first: PacketRef,
    /// Where the first packet goes at the far end (the world's `Hop`,
    /// found as it went on the wire).
    first_hop: u32,
    rest: VecDeque<(SimTime, PacketRef, u32)>,
}

impl Default for InTransit {
    fn default() -> Self {
        InTransit {
            first_at: SimTime::MAX,
            first: PacketRef::NONE,
            first_hop: 0,
            rest: VecDeque::new(),
        }
    }
}

impl InTransit {
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.first_at == SimTime::MAX
    }

    /// The first packet, its arrival time and its hop.
    #[inline(always)]
    pub fn front(&self) -> Option<(SimTime, PacketRef, u32)> {
        (!self.is_empty()).then_some((self.first_at, self.first, self.first_hop))
    }

    /// Puts `p`, arriving at `at` (no earlier than those on the wire) and
    /// going to `hop` from there, last.
    #[inline(always)]
    pub fn push_back(&mut self, at: SimTime, p: PacketRef, hop: u32) {
        debug_assert!(at < SimTime::MAX, "an arrival time");
        if self.is_empty() {
            (self.first_at, self.first, self.first_hop) = (at, p, hop);
        } else {
            self.rest.push_back((at, p, hop));
        }
    }

    /// Puts `p`, arriving at `at`, after every packet arriving no later;
    /// returns whether it is now the first (its arrival needs an event).
    pub fn insert_ordered(&mut self, at: SimTime, p: PacketRef, hop: u32) -> bool {
        debug_assert!(at < SimTime::MAX, "an arrival time");
        if self.is_empty() {
            (self.first_at, self.first, self.first_hop) = (at, p, hop);
            return true;
        }
        if at < self.first_at {
            let old = (self.first_at, self.first, self.first_hop);
            self.rest.push_front(old);
            (self.first_at, self.first, self.first_hop) = (at, p, hop);
            return true;
        }
        let k = self.rest.partition_point(|e| e.0 <= at);
        self.rest.insert(k, (at, p, hop));
        false
    }

    /// Puts back a packet taken off first (a changing link's stale
    /// arrival event).
    #[cold]
    pub fn push_front(&mut self, at: SimTime, p: PacketRef, hop: u32) {
        if !self.is_empty() {
            let old = (self.first_at, self.first, self.first_hop);
            self.rest.push_front(old);
        }
        (self.first_at, self.first, self.first_hop) = (at, p, hop);
    }

    /// Takes the first packet off the wire.
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<(SimTime, PacketRef, u32)> {
        let first = self.front()?;
        (self.first_at, self.first, self.first_hop) =
            self.rest
                .pop_front()
                .unwrap_or((SimTime::MAX, PacketRef::NONE, 0));
        Some(first)
    }

    /// The packets on the wire, first to last.
    pub fn iter(&self) -> impl Iterator<Item = (SimTime, PacketRef)> + '_ {
        let rest = self.rest.iter().map(|&(at, p, _)| (at, p));
        self.front()
            .map(|(at, p, _)| (at, p))
            .into_iter()
            .chain(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::test_packet;
    use crate::net::Packets;

    #[test]
    fn packets_leave_in_the_order_they_went_on_with_their_hops() {
        let mut store = Packets::new();
        let refs: Vec<PacketRef> = (0..5)
            .map(|s| store.insert(test_packet(0, s, 100)))
            .collect();
        let mut w = InTransit::default();
        assert!(w.is_empty() && w.front().is_none() && w.pop_front().is_none());
        w.push_back(SimTime(10), refs[0], 100);
        assert_eq!(w.front(), Some((SimTime(10), refs[0], 100)));
        for (i, &r) in refs.iter().enumerate().skip(1) {
            w.push_back(SimTime(10 * (i as u64 + 1)), r, 100 + i as u32);
        }
        let on: Vec<PacketRef> = w.iter().map(|(_, p)| p).collect();
        assert_eq!(on, refs);
        assert_eq!(w.pop_front(), Some((SimTime(10), refs[0], 100)));
        assert_eq!(w.front(), Some((SimTime(20), refs[1], 101)));
        w.push_back(SimTime(60), refs[0], 7);
        let left: Vec<(u64, u32)> = std::iter::from_fn(|| w.pop_front())
            .map(|(t, _, hop)| (t.0, hop))
            .collect();
        assert_eq!(
            left,
            vec![(20, 101), (30, 102), (40, 103), (50, 104), (60, 7)]
        );
        assert!(w.is_empty());
    }

    #[test]
    fn an_ordered_insert_keeps_arrival_order_and_says_when_it_leads() {
        let mut store = Packets::new();
        let r: Vec<PacketRef> = (0..5)
            .map(|s| store.insert(test_packet(0, s, 100)))
            .collect();
        let mut w = InTransit::default();
        assert!(
            w.insert_ordered(SimTime(30), r[0], 0),
            "first on an empty wire"
        );
        assert!(!w.insert_ordered(SimTime(50), r[1], 1));
        assert!(
            !w.insert_ordered(SimTime(30), r[2], 2),
            "after an equal time"
        );
        assert!(w.insert_ordered(SimTime(10), r[3], 3), "ahead of all");
        assert!(!w.insert_ordered(SimTime(40), r[4], 4));
        let order: Vec<(u64, u32)> = std::iter::from_fn(|| w.pop_front())
            .map(|(t, _, h)| (t.0, h))
            .collect();
        assert_eq!(order, [(10, 3), (30, 0), (30, 2), (40, 4), (50, 1)]);
        // Taken off and put back: the same wire.
        w.insert_ordered(SimTime(5), r[0], 0);
        w.insert_ordered(SimTime(6), r[1], 1);
        let (at, p, hop) = w.pop_front().unwrap();
        w.push_front(at, p, hop);
        assert_eq!(w.iter().map(|(t, _)| t.0).collect::<Vec<_>>(), [5, 6]);
        w.pop_front();
        w.pop_front();
        w.push_front(SimTime(9), r[2], 2);
        assert_eq!(w.front(), Some((SimTime(9), r[2], 2)));
    }
}
