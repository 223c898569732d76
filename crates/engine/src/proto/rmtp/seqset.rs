//! Received sequence numbers as a bitmap that forgets its fully received
//! prefix, and the HACK report made from it.

use std::collections::VecDeque;

/// The set of sequence numbers received, from 0 up. Memory: one bit per
/// number from the first missing one to the highest received.
#[derive(Clone, Debug, Default)]
pub struct SeqSet {
    /// Bit i of word w is sequence number 64 * (first_word + w) + i.
    words: VecDeque<u64>,
    first_word: u64,
    /// One past the highest number received (0: none yet).
    end: u64,
    /// Every number below this is received.
    prefix: u64,
}

impl SeqSet {
    pub fn contains(&self, seq: u64) -> bool {
        seq < self.prefix || self.contains_bit(seq)
    }

    /// Adds `seq`; false if it was already in.
    pub fn insert(&mut self, seq: u64) -> bool {
        if self.contains(seq) {
            return false;
        }
        let w = (seq / 64 - self.first_word) as usize;
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (seq % 64);
        self.end = self.end.max(seq + 1);
        self.advance();
        true
    }

    /// Moves the prefix past what is now contiguous, dropping full words.
    fn advance(&mut self) {
        while self.contains_bit(self.prefix) {
            self.prefix += 1;
        }
        while self.words.front() == Some(&u64::MAX) && 64 * (self.first_word + 1) <= self.prefix {
            self.words.pop_front();
            self.first_word += 1;
        }
    }

    fn contains_bit(&self, seq: u64) -> bool {
        let w = seq / 64;
        w >= self.first_word
            && self
                .words
                .get((w - self.first_word) as usize)
                .is_some_and(|x| x >> (seq % 64) & 1 == 1)
    }

    #[cfg(test)]
    pub fn first_word_for_test(&self) -> u64 {
        self.first_word
    }

    /// Every number below this is received (the in-order point).
    pub fn prefix(&self) -> u64 {
        self.prefix
    }

    /// One past the highest number received.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Numbers in [prefix, end) not received, in order.
    pub fn missing(&self) -> impl Iterator<Item = u64> + '_ {
        (self.prefix..self.end).filter(|&s| !self.contains(s))
    }

    /// How many numbers in [prefix, end) are received.
    pub fn held_above_prefix(&self) -> u64 {
        (self.prefix..self.end)
            .filter(|&s| self.contains(s))
            .count() as u64
    }

    /// The HACK describing this set: its bitmap copied a word at a time
    /// (every receiver sends one every few hundred ms).
    pub fn report(&self) -> HackReport {
        let n = self.end.saturating_sub(self.prefix);
        let mut bits: Vec<u64> = (0..n.div_ceil(64))
            .map(|i| self.bits_from(self.prefix + 64 * i))
            .collect();
        if n % 64 != 0 {
            if let Some(last) = bits.last_mut() {
                *last &= (1u64 << (n % 64)) - 1;
            }
        }
        HackReport {
            base: self.prefix,
            end: self.end,
            bits,
        }
    }

    /// The 64 membership bits of pos, pos + 1, ..., pos + 63 (pos at or
    /// above the first kept word).
    fn bits_from(&self, pos: u64) -> u64 {
        let word = |w: u64| -> u64 {
            (w.checked_sub(self.first_word))
                .and_then(|i| self.words.get(i as usize).copied())
                .unwrap_or(0)
        };
        let (w, off) = (pos / 64, pos % 64);
        if off == 0 {
            word(w)
        } else {
            word(w) >> off | word(w + 1) << (64 - off)
        }
    }
}

/// A hierarchical acknowledgement: everything below `base` received;
/// in [base, end) bit i says whether base + i is; nothing is said about
/// numbers from `end` on (not yet covered).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct HackReport {
    pub base: u64,
    pub end: u64,
    pub bits: Vec<u64>,
}

/// Wire size of a HACK's RMTP part: the 16-byte RMTP header (docs/models/
/// rmtp.md) and the bitmap, one bit per number in [base, end), in bytes.
pub fn hack_payload_bytes(r: &HackReport) -> u32 {
    16 + r.end.saturating_sub(r.base).div_ceil(8) as u32
}

impl HackReport {
    /// The report of the numbers below `end` for which `has` holds, given
    /// that all below `lo` do; its base is the first one that does not.
    pub fn from_fn(lo: u64, end: u64, has: impl Fn(u64) -> bool) -> Self {
        let base = (lo..end).find(|&s| !has(s)).unwrap_or(end.max(lo));
        let mut bits = vec![0u64; end.saturating_sub(base).div_ceil(64) as usize];
        for s in base..end {
            if has(s) {
                let i = s - base;
                bits[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        HackReport { base, end, bits }
    }

    /// The report of the numbers below `end` whose bit is set in
    /// `word(p)` (the 64 membership bits of p, p + 1, ..., p + 63), given
    /// that all below `lo` are set: `from_fn` a word at a time.
    pub fn from_words(lo: u64, end: u64, word: impl Fn(u64) -> u64) -> Self {
        let mut base = lo;
        while base < end {
            let w = word(base);
            if w != u64::MAX {
                base += w.trailing_ones() as u64;
                break;
            }
            base += 64;
        }
        let base = base.min(end.max(lo));
        let n = end.saturating_sub(base);
        let mut bits: Vec<u64> = (0..n.div_ceil(64)).map(|i| word(base + 64 * i)).collect();
        if n % 64 != 0 {
            if let Some(last) = bits.last_mut() {
                *last &= (1u64 << (n % 64)) - 1;
            }
        }
        HackReport { base, end, bits }
    }

    /// The 64 membership bits of pos, pos + 1, ..., pos + 63 as this
    /// report gives them (set below `base`, clear from `end` on).
    pub fn bits_from(&self, pos: u64) -> u64 {
        let below = self.base.saturating_sub(pos);
        if below >= 64 {
            return u64::MAX;
        }
        let mut out = (1u64 << below) - 1;
        let start = pos + below;
        if start < self.end {
            let get = |k: u64| self.bits.get(k as usize).copied().unwrap_or(0);
            let i = start - self.base;
            let (w, off) = (i / 64, i % 64);
            let chunk = if off == 0 {
                get(w)
            } else {
                get(w) >> off | get(w + 1) << (64 - off)
            };
            let mut chunk = chunk << below;
            let valid = self.end - pos;
            if valid < 64 {
                chunk &= (1u64 << valid) - 1;
            }
            out |= chunk;
        }
        out
    }

    /// Whether `seq` is reported received (false also when not covered).
    pub fn has(&self, seq: u64) -> bool {
        if seq < self.base {
            return true;
        }
        let i = seq - self.base;
        seq < self.end && self.bits[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    /// Numbers reported missing, in order.
    pub fn missing(&self) -> impl Iterator<Item = u64> + '_ {
        (self.base..self.end).filter(|&s| !self.has(s))
    }

    /// Whether `seq` is covered (below `end`).
    pub fn covers(&self, seq: u64) -> bool {
        seq < self.end
    }
}
