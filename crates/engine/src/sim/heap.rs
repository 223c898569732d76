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
/// The order is ascending, so that a push of an event later than all the
/// others (most: a packet put on a wire arrives after those ahead of it)
/// is an append (sorted the other way, that push would scan and move every
/// event: 2-4% slower at one flow and 5-6% at 256). The
/// short form is a ring of `RING` slots inside the lane: a push or a pop
/// is an index and a masked slot, with no vector's length, capacity or
/// compaction to keep (a vector with a moving start was slower). A multicast fan-out can put thousands of events in the lane,
/// where a sorted insert would move them all: past `SORTED_MAX` events
/// the lane turns into a heap (the ascending events are one), and back,
/// sorted again, once it has shrunk to `SORTED_MIN`. (With 48 and 12 the
/// 1,000-member RTP session, whose lane hovers there, ran 8% slower; with
/// 24 it runs as fast as with a heap.) `SORTED_MIN` is 16, not lower: 64
/// paced calls keep their lane near 18 events, which with a lower bound
/// stayed a heap nearly throughout (a sorted lane cut their instructions
/// by 3%, and left the other benchmark workloads as they were, by
/// cachegrind). Keys are unique, so the
/// order, and every result, is the same in either form.
pub struct Lane<T> {
    /// While `sorted`: the events at slots `head..tail` (indices taken
    /// modulo `RING`, counting up without bound), least key first.
    ring: [(u128, T); RING],
    head: usize,
    tail: usize,
    /// The events while the lane is long.
    heap: QuadHeap<T>,
    sorted: bool,
}

/// Longest sorted lane: the next push makes it a heap.
const SORTED_MAX: usize = 24;
/// A heap this short is sorted again.
const SORTED_MIN: usize = 16;
/// Slots of the sorted form: a power of two above `SORTED_MAX`.
const RING: usize = 32;
const MASK: usize = RING - 1;
const _: () = assert!(RING.is_power_of_two() && RING > SORTED_MAX);

impl<T: Copy + Default> Lane<T> {
    pub fn with_capacity(n: usize) -> Self {
        Lane {
            ring: [(0, T::default()); RING],
            head: 0,
            tail: 0,
            heap: QuadHeap::with_capacity(n),
            sorted: true,
        }
    }

    fn short_len(&self) -> usize {
        self.tail.wrapping_sub(self.head)
    }

    pub fn len(&self) -> usize {
        self.short_len() + self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn peek(&self) -> Option<&(u128, T)> {
        if !self.sorted {
            self.heap.peek()
        } else if self.head == self.tail {
            None
        } else {
            Some(&self.ring[self.head & MASK])
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &(u128, T)> {
        let short = (self.head..self.tail).map(|i| &self.ring[i & MASK]);
        short.chain(self.heap.iter())
    }

    /// A new event is often later than those waiting (a packet put on a
    /// wire arrives after the ones ahead of it) or before only the last:
    /// three pushes in four at one flow. The scan from the back then stops
    /// at once or after one step, and the insertion moves only the events
    /// after it.
    #[inline(always)]
    pub fn push(&mut self, key: u128, item: T) {
        if !self.sorted || self.short_len() >= SORTED_MAX {
            return self.push_long(key, item);
        }
        let t = time_part(key);
        let mut at = self.tail;
        self.tail = at.wrapping_add(1);
        // Insertion sort's step: each later event moves up one as the
        // scan passes it.
        while at != self.head && time_part(self.ring[at.wrapping_sub(1) & MASK].0) > t {
            self.ring[at & MASK] = self.ring[at.wrapping_sub(1) & MASK];
            at = at.wrapping_sub(1);
        }
        self.ring[at & MASK] = (key, item);
    }

    /// A push into a long lane (a heap, or one now to become a heap).
    #[cold]
    #[inline(never)]
    fn push_long(&mut self, key: u128, item: T) {
        if self.sorted {
            // Least first: ascending order is a valid heap.
            let ring = &self.ring;
            (self.heap.v).extend((self.head..self.tail).map(|i| ring[i & MASK]));
            (self.head, self.tail) = (0, 0);
            self.sorted = false;
        }
        self.heap.push(key, item)
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<(u128, T)> {
        (!self.is_empty()).then(|| self.pop_nonempty())
    }

    /// `pop` of a lane known not to be empty (its head was just seen).
    #[inline(always)]
    pub fn pop_nonempty(&mut self) -> (u128, T) {
        if !self.sorted {
            return self.pop_long().expect("not empty");
        }
        let e = self.ring[self.head & MASK];
        self.head = self.head.wrapping_add(1);
        e
    }

    /// A pop from a heap: sorted again once it is short.
    #[cold]
    #[inline(never)]
    fn pop_long(&mut self) -> Option<(u128, T)> {
        let top = self.heap.pop_inline();
        if self.heap.len() <= SORTED_MIN {
            self.heap.v.sort_unstable_by_key(|e| e.0);
            let n = self.heap.v.len();
            self.ring[..n].copy_from_slice(&self.heap.v);
            self.heap.v.clear();
            (self.head, self.tail) = (0, n);
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
            assert_eq!(q.is_empty(), reference.is_empty());
        }
        while let Some(std::cmp::Reverse(want)) = reference.pop() {
            assert_eq!(q.pop(), Some(want));
        }
        assert!(q.is_empty() && q.pop().is_none());
    }

    /// A lane that never empties (three events always waiting) goes
    /// round its ring many times, with insertion steps across its end,
    /// and pops as a reference heap does, in its sorted form throughout.
    #[test]
    fn a_lane_that_never_empties_wraps_its_ring() {
        let mut lane = Lane::with_capacity(4);
        let mut reference = BinaryHeap::new();
        for k in 0..1000u128 {
            // Every fourth event is due before the one pushed last.
            let at = if k % 4 == 3 { k - 2 } else { k };
            lane.push(at << 64 | k, k as u32);
            reference.push(std::cmp::Reverse((at << 64 | k, k as u32)));
            if k >= 3 {
                assert_eq!(lane.pop(), reference.pop().map(|r| r.0));
                assert!(lane.sorted && lane.short_len() == 3, "{k}");
            }
        }
        let rest: Vec<_> = std::iter::from_fn(|| lane.pop()).collect();
        let want: Vec<_> = std::iter::from_fn(|| reference.pop().map(|r| r.0)).collect();
        assert_eq!(rest, want);
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
            // The form follows the length: sorted while short, a heap past
            // the longest sorted lane, either in between (hysteresis).
            if lane.len() <= SORTED_MIN {
                assert!(lane.sorted, "a lane of {} is sorted", lane.len());
            } else if lane.len() > SORTED_MAX {
                assert!(!lane.sorted, "a lane of {} is a heap", lane.len());
            }
            forms[lane.sorted as usize] += 1;
        }
        assert!(
            forms[0] > 1000 && forms[1] > 1000,
            "both forms used: {forms:?}"
        );
    }
}
