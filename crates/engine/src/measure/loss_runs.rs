//! Runs of consecutive lost sequence numbers, counted as losses happen, so
//! that memory does not grow with a run's length: open runs are kept as
//! intervals, and a run whose end lies more than [`HORIZON`] sequence
//! numbers below the highest loss seen is final and goes into the
//! histogram. Losses may arrive in any order and twice (a retransmission
//! dropped again); the result equals grouping the whole sorted, deduplicated
//! list, unless a loss arrives more than the horizon behind the highest
//! one, which is then left out and counted in [`LossRuns::late`].

use std::collections::{BTreeMap, VecDeque};

/// How far (in sequence numbers) below the highest loss a run stays open.
/// A flow that reorders its losses by more than this (a window of 65,536
/// packets) would see them counted late.
pub const HORIZON: u64 = 1 << 16;

/// Runs up to this long are counted in a plain array.
const SHORT: usize = 64;

#[derive(Clone, Debug, Default)]
pub struct LossRuns {
    /// Open runs (start, end), inclusive, in order; neither overlapping
    /// nor adjacent. A deque, not a tree: losses come mostly in order, so
    /// nearly every one extends or follows the last run, and the oldest
    /// runs close from the front.
    open: VecDeque<(u64, u64)>,
    /// Final runs of at most [`SHORT`] losses: `short[len - 1]` counts
    /// those of `len` (grown to the longest seen). A tree look-up per run
    /// closed was a sixth of a run that drops millions of copies.
    short: Vec<u64>,
    /// Final runs longer than that: length -> count.
    long: BTreeMap<u64, u64>,
    /// Where `add_behind` last found its run: repairs are sent, and
    /// dropped, in increasing order, so the next one's run is at or just
    /// after it (a guess, checked before it is used).
    behind_at: usize,
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
        match self.open.back_mut() {
            // In order: at or after the last run (the common case).
            Some(last) if seq >= last.0 => {
                if seq == last.1 + 1 {
                    last.1 = seq;
                } else if seq > last.1 {
                    self.open.push_back((seq, seq));
                }
            }
            None => self.open.push_back((seq, seq)),
            Some(_) => self.add_behind(seq),
        }
        self.highest = self.highest.max(seq);
        self.close_old();
    }

    /// A loss before the last run's start: joins the runs around it, or
    /// opens its own between them.
    fn add_behind(&mut self, seq: u64) {
        // The first run that does not end before `seq`: the last run at
        // least, since `seq` is before its start.
        let i = self.first_ending_at_or_after(seq);
        self.behind_at = i;
        if self.open[i].0 <= seq {
            return; // lost before
        }
        let joins_before = i > 0 && self.open[i - 1].1 + 1 == seq;
        let joins_after = self.open[i].0 == seq + 1;
        match (joins_before, joins_after) {
            (true, true) => {
                let end = self.open[i].1;
                self.open[i - 1].1 = end;
                self.open.remove(i);
            }
            (true, false) => self.open[i - 1].1 = seq,
            (false, true) => self.open[i].0 = seq,
            (false, false) => self.open.insert(i, (seq, seq)),
        }
    }

    /// `open.partition_point(|r| r.1 < seq)`, searched from `behind_at`
    /// outwards in steps that double (a few probes when the guess is
    /// near, twice a binary search's at worst), then by halves.
    fn first_ending_at_or_after(&self, seq: u64) -> usize {
        let before = |i: usize| self.open[i].1 < seq;
        let n = self.open.len();
        let at = self.behind_at.min(n - 1);
        // Bracket the answer in [lo, hi], stepping away from `at`.
        let ahead = before(at);
        let (mut lo, mut hi) = if ahead { (at + 1, n) } else { (0, at) };
        let mut step = 1;
        if ahead {
            while at + step < n {
                if !before(at + step) {
                    hi = at + step;
                    break;
                }
                lo = at + step + 1;
                step *= 2;
            }
        } else {
            while step <= at {
                if before(at - step) {
                    lo = at - step + 1;
                    break;
                }
                hi = at - step;
                step *= 2;
            }
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn close_old(&mut self) {
        while let Some(&(s, e)) = self.open.front() {
            if e + HORIZON >= self.highest {
                break;
            }
            self.open.pop_front();
            self.count_final(e - s + 1);
            // e + 1 was not lost; a loss of it now would join a final run.
            self.frontier = e + 2;
        }
    }

    fn count_final(&mut self, len: u64) {
        let i = len as usize - 1;
        if i >= SHORT {
            *self.long.entry(len).or_default() += 1;
            return;
        }
        if i >= self.short.len() {
            self.short.resize(i + 1, 0);
        }
        self.short[i] += 1;
    }

    /// Run length -> number of runs, open runs included.
    pub fn histogram(&self) -> BTreeMap<u64, u64> {
        let mut h = self.long.clone();
        let short = (self.short.iter().enumerate()).filter(|(_, &n)| n > 0);
        h.extend(short.map(|(i, &n)| (i as u64 + 1, n)));
        for &(s, e) in &self.open {
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
    fn final_runs_of_every_length_are_counted_as_the_definition() {
        // Runs of 1 to 150 losses (short ones counted in the array, long
        // ones in the tree), far enough apart that each closes.
        let mut rng = RngStreams::new(11, 0).stream("loss_runs_long");
        let mut lost = Vec::new();
        let mut at = 0;
        for k in 0..600u64 {
            let len = if k < 150 {
                1 + k
            } else {
                1 + (uniform(&mut rng) * 150.0) as u64
            };
            lost.extend(at..at + len);
            at += len + 1 + (uniform(&mut rng) * 3.0 * HORIZON as f64 / 100.0) as u64;
        }
        let r = runs(&lost);
        assert!(r.open.len() < 100, "most runs are final");
        assert_eq!(r.histogram(), reference(&lost));
        assert_eq!(r.late(), 0);
    }

    #[test]
    fn the_search_from_the_last_place_finds_what_a_binary_search_finds() {
        let mut rng = RngStreams::new(5, 0).stream("loss_runs_search");
        for n in [1usize, 2, 3, 7, 64, 300] {
            let mut r = LossRuns::default();
            let mut at = 10;
            for _ in 0..n {
                let len = 1 + (uniform(&mut rng) * 4.0) as u64;
                r.open.push_back((at, at + len - 1));
                at += len + 1 + (uniform(&mut rng) * 5.0) as u64;
            }
            for hint in [0, 1, n / 3, n / 2, n - 1, n, n + 5] {
                r.behind_at = hint;
                for seq in 0..at + 3 {
                    let want = r.open.partition_point(|x| x.1 < seq);
                    assert_eq!(
                        r.first_ending_at_or_after(seq),
                        want,
                        "n {n} hint {hint} seq {seq}"
                    );
                }
            }
        }
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
