//! A set of sequence numbers as a bitmap over the span they cover: what a
//! DR's children asked for since its last repair round. A child that has
//! missed thousands of packets reports them all in every HACK; adding a
//! report's missing numbers is a word-wise OR of its complemented bitmap
//! instead of a tree insertion per number (the slow tree's collapse in
//! the RMTP study sent millions).

use super::seqset::HackReport;

#[derive(Clone, Debug, Default)]
pub struct SeqBits {
    /// Bit i of word w is sequence number 64 * (first_word + w) + i.
    words: Vec<u64>,
    first_word: u64,
}

impl SeqBits {
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// How many numbers are in.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn contains(&self, seq: u64) -> bool {
        (seq / 64)
            .checked_sub(self.first_word)
            .and_then(|i| self.words.get(i as usize))
            .is_some_and(|w| w >> (seq % 64) & 1 == 1)
    }

    pub fn insert(&mut self, seq: u64) {
        self.cover(seq / 64, seq / 64);
        self.words[(seq / 64 - self.first_word) as usize] |= 1 << (seq % 64);
    }

    /// Adds every number `r` reports missing (in [base, end), its bit 0).
    pub fn insert_missing(&mut self, r: &HackReport) {
        if r.end <= r.base {
            return;
        }
        self.cover(r.base / 64, (r.end - 1) / 64);
        let n = r.end - r.base;
        for (i, &bits) in r.bits.iter().enumerate() {
            let mut missing = !bits;
            let covered = n - 64 * i as u64;
            if covered < 64 {
                missing &= (1u64 << covered) - 1;
            }
            if missing == 0 {
                continue;
            }
            let pos = r.base + 64 * i as u64;
            let w = (pos / 64 - self.first_word) as usize;
            let off = pos % 64;
            self.words[w] |= missing << off;
            if off != 0 {
                // Bits shifted past this word's end belong to the next; they
                // are numbers below `end`, so the next word is covered.
                let high = missing >> (64 - off);
                if high != 0 {
                    self.words[w + 1] |= high;
                }
            }
        }
    }

    /// Makes words `lo..=hi` (absolute word numbers) part of the bitmap.
    fn cover(&mut self, lo: u64, hi: u64) {
        if self.words.is_empty() {
            self.first_word = lo;
        }
        if lo < self.first_word {
            let more = (self.first_word - lo) as usize;
            self.words.splice(0..0, std::iter::repeat_n(0, more));
            self.first_word = lo;
        }
        let need = (hi - self.first_word + 1) as usize;
        if need > self.words.len() {
            self.words.resize(need, 0);
        }
    }

    /// The numbers in, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(move |(i, &w)| {
            let base = 64 * (self.first_word + i as u64);
            std::iter::successors((w != 0).then_some(w), |&x| {
                let rest = x & (x - 1);
                (rest != 0).then_some(rest)
            })
            .map(move |x| base + x.trailing_zeros() as u64)
        })
    }

    /// The least and one past the greatest number that can be in (an
    /// empty range when the bitmap covers nothing).
    pub fn span(&self) -> std::ops::Range<u64> {
        64 * self.first_word..64 * (self.first_word + self.words.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{uniform, RngStreams};
    use std::collections::BTreeSet;

    /// Random reports (bases and ends on and off word boundaries, empty
    /// ones) and single numbers, against a BTreeSet of what each report's
    /// `missing()` lists.
    #[test]
    fn holds_what_the_reports_miss_as_a_tree_of_them_would() {
        let mut rng = RngStreams::new(7, 0).stream("seqbits");
        for _ in 0..300 {
            let mut bits = SeqBits::default();
            let mut want = BTreeSet::new();
            for _ in 0..6 {
                if uniform(&mut rng) < 0.2 {
                    let s = (uniform(&mut rng) * 1000.0) as u64;
                    bits.insert(s);
                    want.insert(s);
                    continue;
                }
                let lo = (uniform(&mut rng) * 600.0) as u64;
                let end = lo + (uniform(&mut rng) * 300.0) as u64;
                let p = uniform(&mut rng);
                let r =
                    HackReport::from_fn(lo, end, |s| (s * 2654435761 % 1000) as f64 / 1000.0 < p);
                bits.insert_missing(&r);
                want.extend(r.missing());
            }
            assert_eq!(
                bits.iter().collect::<Vec<_>>(),
                want.iter().copied().collect::<Vec<_>>()
            );
            assert_eq!(bits.len(), want.len());
            assert_eq!(bits.is_empty(), want.is_empty());
            for s in 0..1100 {
                assert_eq!(bits.contains(s), want.contains(&s), "{s}");
                if want.contains(&s) {
                    assert!(bits.span().contains(&s));
                }
            }
        }
    }

    #[test]
    fn a_report_with_nothing_missing_or_nothing_covered_adds_nothing() {
        let mut bits = SeqBits::default();
        bits.insert_missing(&HackReport::from_fn(0, 200, |_| true));
        bits.insert_missing(&HackReport::from_fn(300, 300, |_| false));
        assert!(bits.is_empty() && bits.iter().next().is_none());
        bits.insert_missing(&HackReport::from_fn(0, 130, |s| s != 129 && s != 63));
        assert_eq!(bits.iter().collect::<Vec<_>>(), vec![63, 129]);
    }
}
