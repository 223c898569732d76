//! Runs of consecutive lost sequence numbers, counted as losses happen, so
//! that memory does not grow with a run's length: open runs are kept as
//! intervals, and a run whose end lies more than [`HORIZON`] sequence
//! numbers below the highest loss seen is final and goes into the
//! histogram. Losses may arrive in any order and twice (a retransmission
//! dropped again); the result equals grouping the whole sorted, deduplicated
//! list, unless a loss arrives more than the horizon behind the highest
//! one, which is then left out and counted in [`LossRuns::late`].

use std::collections::BTreeMap;

/// How far (in sequence numbers) below the highest loss a run stays open.
/// A flow that reorders its losses by more than this (a window of 65,536
/// packets) would see them counted late.
pub const HORIZON: u64 = 1 << 16;

#[derive(Clone, Debug, Default)]
pub struct LossRuns {
    /// Open runs, start -> end (inclusive); neither overlapping nor adjacent.
    open: BTreeMap<u64, u64>,
    /// Final runs: length -> count.
    closed: BTreeMap<u64, u64>,
    /// Losses below this may touch a final run: counted late.
    frontier: u64,
    highest: u64,
    late: u64,
}

impl LossRuns {
    /// One lost sequence number.
    pub fn add(&mut self, seq: u64) {
        if seq < self.frontier {
            self.late += 1;
            return;
        }
        let before = self.open.range(..=seq).next_back().map(|(&s, &e)| (s, e));
        if before.is_some_and(|(_, e)| seq <= e) {
            return; // lost before
        }
        let after = (self.open.range(seq + 1..).next()).map(|(&s, &e)| (s, e));
        let start = match before {
            Some((s, e)) if e + 1 == seq => s,
            _ => seq,
        };
        let end = match after {
            Some((s, e)) if s == seq + 1 => {
                self.open.remove(&s);
                e
            }
            _ => seq,
        };
        self.open.insert(start, end);
        self.highest = self.highest.max(seq);
        self.close_old();
    }

    fn close_old(&mut self) {
        while let Some((&s, &e)) = self.open.first_key_value() {
            if e + HORIZON >= self.highest {
                break;
            }
            self.open.remove(&s);
            *self.closed.entry(e - s + 1).or_default() += 1;
            // e + 1 was not lost; a loss of it now would join a final run.
            self.frontier = e + 2;
        }
    }

    /// Run length -> number of runs, open runs included.
    pub fn histogram(&self) -> BTreeMap<u64, u64> {
        let mut h = self.closed.clone();
        for (&s, &e) in &self.open {
            *h.entry(e - s + 1).or_default() += 1;
        }
        h
    }

    /// Losses that arrived too far behind to be placed in a run.
    pub fn late(&self) -> u64 {
        self.late
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{uniform, RngStreams};

    /// The definition: sort, deduplicate, group consecutive numbers.
    fn reference(lost: &[u64]) -> BTreeMap<u64, u64> {
        let mut s = lost.to_vec();
        s.sort_unstable();
        s.dedup();
        let mut h = BTreeMap::new();
        let mut i = 0;
        while i < s.len() {
            let mut j = i;
            while j + 1 < s.len() && s[j + 1] == s[j] + 1 {
                j += 1;
            }
            *h.entry((j - i + 1) as u64).or_default() += 1;
            i = j + 1;
        }
        h
    }

    fn runs(lost: &[u64]) -> LossRuns {
        let mut r = LossRuns::default();
        for &s in lost {
            r.add(s);
        }
        r
    }

    #[test]
    fn groups_consecutive_numbers_in_any_order() {
        let r = runs(&[7, 3, 4, 5, 9, 10, 20, 4, 8]);
        // 3-5, 7-10 (8 joins 7 and 9-10), 20.
        assert_eq!(r.histogram(), BTreeMap::from([(1, 1), (3, 1), (4, 1)]));
        assert!(runs(&[]).histogram().is_empty());
    }

    #[test]
    fn equals_the_definition_on_shuffled_duplicated_losses() {
        let mut rng = RngStreams::new(9, 0).stream("loss_runs");
        for case in 0..300 {
            let span = [20.0, 500.0, 3.0 * HORIZON as f64][case % 3];
            let n = 1 + (uniform(&mut rng) * 400.0) as usize;
            let mut lost: Vec<u64> = (0..n).map(|_| (uniform(&mut rng) * span) as u64).collect();
            // Mostly in order, as drops happen, with local disorder.
            lost.sort_unstable();
            for k in 1..lost.len() {
                if uniform(&mut rng) < 0.3 {
                    lost.swap(k - 1, k);
                }
            }
            let r = runs(&lost);
            assert_eq!(r.histogram(), reference(&lost), "case {case}");
            assert_eq!(r.late(), 0);
        }
    }

    #[test]
    fn old_runs_close_and_a_loss_far_behind_is_counted_late() {
        let mut r = runs(&[10, 11, 12]);
        r.add(12 + HORIZON + 1);
        assert_eq!(r.open.len(), 1, "the run 10-12 is final");
        r.add(13); // would have joined 10-12
        assert_eq!(r.late(), 1);
        assert_eq!(r.histogram(), BTreeMap::from([(1, 1), (3, 1)]));
    }
}
