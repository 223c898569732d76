//! A 4-ary min-heap on a u128 key, for the event queue, and the packet
//! lane that uses it only when it is long.
//!
//! Four children per node halve the heap's depth against a binary heap, and
//! a node's children share a cache line or two: with tens of thousands of
//! pending events (a timer per receiver of a large multicast session) the
//! pops are bound by memory, not by comparisons. Keys are unique (time and
//! insertion sequence), so the order, and hence every result, is the same
//! as any other correct priority queue's. A key pushed is always the
//! newest (the event queue's sequence only grows), which lets a push
//! compare times alone.

const D: usize = 4;

/// A key's high half: its time. A key pushed is the newest (its low half,
/// the insertion sequence, exceeds every waiting key's), so against a
/// waiting key it compares as its time does: ties in time go after. One
/// 64-bit comparison instead of two.
#[inline(always)]
fn time_part(key: u128) -> u64 {
    (key >> 64) as u64
}

pub struct QuadHeap<T> {
    v: Vec<(u128, T)>,
}

impl<T> QuadHeap<T> {
    pub fn with_capacity(n: usize) -> Self {
        QuadHeap {
            v: Vec::with_capacity(n),
        }
    }

    pub fn len(&self) -> usize {
        self.v.len()
    }

    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    pub fn peek(&self) -> Option<&(u128, T)> {
        self.v.first()
    }

    pub fn iter(&self) -> impl Iterator<Item = &(u128, T)> {
        self.v.iter()
    }

    /// Inlined: the event is then written straight into its slot, not
    /// passed through memory (its 16 bytes were stored piecewise by the
    /// caller and loaded whole here, a store-forwarding stall).
    #[inline(always)]
    pub fn push(&mut self, key: u128, item: T) {
        self.v.push((key, item));
        let mut i = self.v.len() - 1;
        let at = time_part(key);
        while i > 0 {
            let p = (i - 1) / D;
            if time_part(self.v[p].0) <= at {
                break;
            }
            self.v.swap(i, p);
            i = p;
        }
    }

    pub fn pop(&mut self) -> Option<(u128, T)> {
        self.pop_inline()
    }

    /// `pop`, inlined where a lane that is a heap pops.
    #[inline(always)]
    fn pop_inline(&mut self) -> Option<(u128, T)> {
        let n = self.v.len();
        if n == 0 {
            return None;
        }
        let top = self.v.swap_remove(0);
        let n = n - 1;
        let mut i = 0;
        loop {
            let first = D * i + 1;
            if first >= n {
                break;
            }
            let m = if first + D <= n {
                // A full set of children: the least by a fixed tournament
                // of selects, which compile without branches. With many
                // flows the keys' order is a coin toss, and a mispredicted
                // branch per child cost more than the comparisons.
                let k = |c: usize| self.v[c].0;
                let a = if k(first + 1) < k(first) {
                    first + 1
                } else {
                    first
                };
                let b = if k(first + 3) < k(first + 2) {
                    first + 3
                } else {
                    first + 2
                };
                if k(b) < k(a) {
                    b
                } else {
                    a
                }
            } else {
                let mut m = first;
                for c in first + 1..n {
                    if self.v[c].0 < self.v[m].0 {
                        m = c;
                    }
                }
                m
            };
            if self.v[m].0 >= self.v[i].0 {
                break;
            }
            self.v.swap(i, m);
            i = m;
        }
        Some(top)
    }
}

/// A lane of events kept sorted while short, a heap while long.
///
/// A dumbbell's packet lane holds 5 to 10 events (one arrival per busy
/// wire, one transmission end per busy queue), and with many flows which
/// one is next is a coin toss: a heap's pop then mispredicted a branch or
/// two per level. Sorted, a pop takes the first event and a push scans
/// from the back: the TCP dumbbell ran 6% faster at 1 and at 256 flows.
/// The order is ascending with a moving start (`head`), so that a push of
/// an event later than all the others (most: a packet put on a wire
/// arrives after those ahead of it) is an append. Sorted the other way, a
/// pop was the vector's `pop` but that push scanned and moved every event
/// (eighth session: 2-4% slower at one flow and 5-6% at 256, where the
/// lane is longer). A multicast fan-out can put thousands of events in
/// the lane, where a sorted insert would move them all: past
/// `SORTED_MAX` events the lane turns into a heap (the ascending events
/// are one), and back, sorted again, once it has shrunk to `SORTED_MIN`.
/// (With 48 and 12 the 1,000-member RTP session, whose lane hovers there,
/// ran 8% slower; with 24 and 6 it runs as fast as with a heap.) Keys are
/// unique, so the order, and every result, is the same in either form.
pub struct Lane<T> {
    /// While `sorted`: the events from `head` on, least key first (those
    /// before `head` have been popped).
    short: Vec<(u128, T)>,
    head: usize,
    /// The events while the lane is long.
    heap: QuadHeap<T>,
    sorted: bool,
}

/// Longest sorted lane: the next push makes it a heap.
const SORTED_MAX: usize = 24;
/// A heap this short is sorted again.
const SORTED_MIN: usize = 6;
/// Popped slots kept at the front of the sorted vector before they are
/// given back (one move of the few events behind them).
const POPPED_MAX: usize = 32;

impl<T: Copy> Lane<T> {
    pub fn with_capacity(n: usize) -> Self {
        Lane {
            short: Vec::with_capacity(SORTED_MAX + POPPED_MAX),
            head: 0,
            heap: QuadHeap::with_capacity(n),
            sorted: true,
        }
    }

    pub fn len(&self) -> usize {
        self.short.len() - self.head + self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn peek(&self) -> Option<&(u128, T)> {
        if self.sorted {
            self.short.get(self.head)
        } else {
            self.heap.peek()
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &(u128, T)> {
        self.short[self.head..].iter().chain(self.heap.iter())
    }

    /// A new event is most often later than those waiting (a packet put
    /// on a wire arrives after the ones ahead of it): the scan from the
    /// back stops at once, and the insertion moves only the events after
    /// it.
    #[inline(always)]
    pub fn push(&mut self, key: u128, item: T) {
        let v = &mut self.short;
        if !self.sorted || v.len() - self.head >= SORTED_MAX {
            return self.push_long(key, item);
        }
        let t = time_part(key);
        let n = v.len();
        if n == self.head || time_part(v[n - 1].0) <= t {
            return v.push((key, item));
        }
        // Insertion sort's step: each later event moves up one as the
        // scan passes it (a few 32-byte moves, where `insert` called
        // memmove after the scan).
        v.push(v[n - 1]);
        let mut at = n - 1;
        while at > self.head && time_part(v[at - 1].0) > t {
            v[at] = v[at - 1];
            at -= 1;
        }
        v[at] = (key, item);
    }

    /// A push into a long lane (a heap, or one now to become a heap).
    #[cold]
    #[inline(never)]
    fn push_long(&mut self, key: u128, item: T) {
        if self.sorted {
            // Least first: ascending order is a valid heap.
            self.heap.v.extend(self.short.drain(self.head..));
            self.short.clear();
            self.head = 0;
            self.sorted = false;
        }
        self.heap.push(key, item)
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<(u128, T)> {
        if !self.sorted {
            return self.pop_long();
        }
        let e = *self.short.get(self.head)?;
        self.head += 1;
        if self.head == self.short.len() {
            self.short.clear();
            self.head = 0;
        } else if self.head >= POPPED_MAX {
            self.short.drain(..self.head);
            self.head = 0;
        }
        Some(e)
    }

    /// A pop from a heap: sorted again once it is short.
    #[cold]
    #[inline(never)]
    fn pop_long(&mut self) -> Option<(u128, T)> {
        let top = self.heap.pop_inline();
        if self.heap.len() <= SORTED_MIN {
            self.heap.v.sort_unstable_by_key(|e| e.0);
            self.short.append(&mut self.heap.v);
            self.sorted = true;
        }
        top
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{uniform, RngStreams};
    use std::collections::BinaryHeap;

    #[test]
    fn pops_in_key_order_like_a_binary_heap() {
        let mut rng = RngStreams::new(11, 0).stream("heap");
        let mut q = QuadHeap::with_capacity(4);
        let mut reference = BinaryHeap::new();
        let mut seq = 0u128;
        for round in 0..20_000 {
            if uniform(&mut rng) < 0.55 || round < 100 {
                let key = ((uniform(&mut rng) * 1000.0) as u128) << 64 | seq;
                seq += 1;
                q.push(key, round);
                reference.push(std::cmp::Reverse((key, round)));
            } else {
                let got = q.pop();
                let want = reference.pop().map(|r| r.0);
                assert_eq!(got, want);
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(std::cmp::Reverse(want)) = reference.pop() {
            assert_eq!(q.pop(), Some(want));
        }
        assert!(q.is_empty() && q.pop().is_none());
    }

    /// A lane that never empties (three events always waiting) gives the
    /// slots of popped events back: its vector stays short.
    #[test]
    fn a_lane_that_never_empties_stays_compact() {
        let mut lane = Lane::with_capacity(4);
        for k in 0..3u128 {
            lane.push(k << 64, k as u32);
        }
        for k in 3..1000u128 {
            lane.push(k << 64, k as u32);
            let (key, item) = lane.pop().expect("three waiting");
            assert_eq!((key >> 64, item as u128), (k - 3, k - 3));
            assert!(lane.short.len() <= POPPED_MAX + 4, "{}", lane.short.len());
        }
        assert_eq!(lane.len(), 3);
        assert_eq!(lane.peek().map(|e| e.0 >> 64), Some(997));
    }

    /// Pushes and pops that keep the lane short, then grow it well past
    /// `SORTED_MAX` (a fan-out) and drain it below `SORTED_MIN`, twice: the
    /// order is a reference heap's throughout, in both forms.
    #[test]
    fn a_lane_pops_in_key_order_sorted_and_as_a_heap() {
        let mut rng = RngStreams::new(12, 0).stream("lane");
        let mut lane = Lane::with_capacity(4);
        let mut reference = BinaryHeap::new();
        let (mut seq, mut now, mut forms) = (0u128, 0u128, [0u32; 2]);
        for round in 0..40_000u32 {
            let phase = round / 5_000 % 4; // short, growing, draining, short
            let p_push = [0.5, 0.9, 0.1, 0.5][phase as usize];
            if uniform(&mut rng) < p_push || reference.is_empty() {
                // Never before the last key popped, as in the event queue.
                let key = (now + (uniform(&mut rng) * 1000.0) as u128) << 64 | seq;
                seq += 1;
                lane.push(key, round);
                reference.push(std::cmp::Reverse((key, round)));
            } else {
                let got = lane.pop();
                let want = reference.pop().map(|r| r.0);
                assert_eq!(got, want);
                now = got.expect("not empty").0 >> 64;
            }
            assert_eq!(lane.len(), reference.len());
            assert_eq!(lane.peek().map(|e| e.0), reference.peek().map(|r| r.0 .0));
            forms[lane.sorted as usize] += 1;
        }
        assert!(
            forms[0] > 1000 && forms[1] > 1000,
            "both forms used: {forms:?}"
        );
    }
}
