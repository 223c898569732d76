//! A 4-ary min-heap on a u128 key, for the event queue.
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
}
