//! A 4-ary min-heap on a u128 key, for the event queue, and the packet
//! lane that uses it only when it is long.
//!
//! Four children per node halve the heap's depth against a binary heap, and
//! a node's children share a cache line or two: with tens of thousands of
//! pending events (a timer per receiver of a large multicast session) the
//! pops are bound by memory, not by comparisons. Keys are unique (time and
//! insertion sequence), so the order, and hence every result, is the same
//! as any other correct priority queue's.

const D: usize = 4;

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
        while i > 0 {
            let p = (i - 1) / D;
            if self.v[p].0 <= key {
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
/// two per level. Sorted with the least key last, a pop is the vector's
/// `pop` and a push a short scan from the end: the TCP dumbbell ran 6%
/// faster at 1 and at 256 flows. A multicast fan-out can put thousands of
/// events in the lane, where a sorted insert would move them all: past
/// `SORTED_MAX` events the lane turns into a heap (the sorted vector
/// reversed is one), and back, sorted again, once it has shrunk to
/// `SORTED_MIN`. (With 48 and 12 the 1,000-member RTP session, whose lane
/// hovers there, ran 8% slower; with 24 and 6 it runs as fast as with a
/// heap.) Keys are unique, so the order, and every result, is the same in
/// either form.
pub struct Lane<T> {
    /// Sorted, least key last, while `sorted`; else a heap.
    heap: QuadHeap<T>,
    sorted: bool,
}

/// Longest sorted lane: the next push makes it a heap.
const SORTED_MAX: usize = 24;
/// A heap this short is sorted again.
const SORTED_MIN: usize = 6;

impl<T> Lane<T> {
    pub fn with_capacity(n: usize) -> Self {
        Lane {
            heap: QuadHeap::with_capacity(n),
            sorted: true,
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn peek(&self) -> Option<&(u128, T)> {
        if self.sorted {
            self.heap.v.last()
        } else {
            self.heap.peek()
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &(u128, T)> {
        self.heap.iter()
    }

    #[inline(always)]
    pub fn push(&mut self, key: u128, item: T) {
        let v = &mut self.heap.v;
        if !self.sorted || v.len() >= SORTED_MAX {
            return self.push_long(key, item);
        }
        let mut at = v.len();
        while at > 0 && v[at - 1].0 < key {
            at -= 1;
        }
        v.insert(at, (key, item));
    }

    /// A push into a long lane (a heap, or one now to become a heap).
    #[cold]
    #[inline(never)]
    fn push_long(&mut self, key: u128, item: T) {
        if self.sorted {
            self.heap.v.reverse(); // least first: ascending order is a valid heap
            self.sorted = false;
        }
        self.heap.push(key, item)
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<(u128, T)> {
        if self.sorted {
            return self.heap.v.pop();
        }
        self.pop_long()
    }

    /// A pop from a heap: sorted again once it is short.
    #[cold]
    #[inline(never)]
    fn pop_long(&mut self) -> Option<(u128, T)> {
        let top = self.heap.pop_inline();
        if self.heap.len() <= SORTED_MIN {
            self.heap.v.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
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
