//! The SACK scoreboard (RFC 6675 section 4): which bytes above the
//! cumulative ACK the receiver has reported, and the IsLost test.

/// Sorted, merged, non-overlapping byte ranges [start, end), and the bytes
/// they cover (kept as they change: with many flows a scoreboard in
/// recovery holds several ranges, and every ACK asked for the total twice).
#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    ranges: Vec<(u64, u64)>,
    bytes: u64,
}

impl RangeSet {
    /// Adds [s, e), merging with overlapping or adjacent ranges.
    pub fn insert(&mut self, s: u64, e: u64) {
        let i = self.ranges.partition_point(|r| r.1 < s);
        let mut j = i;
        let (mut ns, mut ne) = (s, e);
        let mut merged = 0;
        while j < self.ranges.len() && self.ranges[j].0 <= ne {
            ns = ns.min(self.ranges[j].0);
            ne = ne.max(self.ranges[j].1);
            merged += self.ranges[j].1 - self.ranges[j].0;
            j += 1;
        }
        self.bytes = self.bytes + (ne - ns) - merged;
        if j == i {
            self.ranges.insert(i, (ns, ne));
        } else {
            self.ranges[i] = (ns, ne);
            self.ranges.drain(i + 1..j);
        }
    }

    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Bytes covered.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn first(&self) -> Option<(u64, u64)> {
        self.ranges.first().copied()
    }

    pub fn pop_first(&mut self) {
        let (s, e) = self.ranges.remove(0);
        self.bytes -= e - s;
    }

    pub fn clear(&mut self) {
        self.ranges.clear();
        self.bytes = 0;
    }

    /// Drops everything below `floor`.
    pub fn trim_below(&mut self, floor: u64) {
        let gone = self.ranges.partition_point(|r| r.1 <= floor);
        let removed: u64 = self.ranges[..gone].iter().map(|r| r.1 - r.0).sum();
        self.ranges.drain(..gone);
        self.bytes -= removed;
        if let Some(first) = self.ranges.first_mut() {
            if first.0 < floor {
                self.bytes -= floor - first.0;
                first.0 = floor;
            }
        }
    }
}

/// SACKed ranges [start, end) above the cumulative ACK.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    ranges: RangeSet,
}

impl Scoreboard {
    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        self.ranges.as_slice()
    }

    /// Adds SACK blocks (clipped above `una`); returns the number of bytes
    /// newly marked.
    pub fn update(&mut self, blocks: &[(u64, u64)], una: u64) -> u64 {
        let before = self.sacked_bytes();
        for &(s, e) in blocks {
            let s = s.max(una);
            if e > s {
                self.ranges.insert(s, e);
            }
        }
        self.sacked_bytes() - before
    }

    /// Forgets everything below the new cumulative ACK.
    pub fn advance(&mut self, una: u64) {
        self.ranges.trim_below(una);
    }

    pub fn sacked_bytes(&self) -> u64 {
        self.ranges.bytes()
    }

    pub fn is_sacked(&self, seq: u64) -> bool {
        let r = self.ranges();
        let i = r.partition_point(|r| r.1 <= seq);
        i < r.len() && r[i].0 <= seq
    }

    /// End of the highest SACKed range (0 if none).
    pub fn highest_sacked(&self) -> u64 {
        self.ranges().last().map_or(0, |r| r.1)
    }

    /// SACKed bytes strictly above `seq`.
    pub fn sacked_above(&self, seq: u64) -> u64 {
        self.ranges()
            .iter()
            .filter(|r| r.1 > seq + 1)
            .map(|r| r.1 - r.0.max(seq + 1))
            .sum()
    }

    /// IsLost(seq) (RFC 6675 section 4): true when DupThresh discontiguous
    /// SACKed segments, or more than (DupThresh - 1) * SMSS bytes, lie above
    /// `seq`. Segments here are full-sized, so DupThresh SACKed segments
    /// are more than (DupThresh - 1) * SMSS bytes: the byte test covers both.
    pub fn is_lost(&self, seq: u64, dupthresh: u32, smss: u64) -> bool {
        self.sacked_above(seq) > (dupthresh as u64 - 1) * smss
    }

    /// The point below which every sequence number is lost: IsLost(seq)
    /// holds exactly for seq < `lost_below` (the SACKed bytes above seq
    /// only grow as seq falls). 0 when nothing is lost.
    pub fn lost_below(&self, dupthresh: u32, smss: u64) -> u64 {
        let t = (dupthresh as u64 - 1) * smss;
        // Bytes of the ranges above the one looked at.
        let mut above = 0;
        for &(a, b) in self.ranges().iter().rev() {
            if above + (b - a) > t {
                // Here sacked_above(seq) = above + b - (seq + 1).
                return b - 1 - (t - above);
            }
            above += b - a;
        }
        0
    }

    /// A cursor that answers `is_sacked`, `sacked_above` and `is_lost` for
    /// non-decreasing sequence numbers. NextSeg's rescue rule asks about
    /// every segment in the window in order: through the cursor each
    /// answer costs O(1) amortized instead of a binary search plus a scan
    /// of all ranges.
    pub fn walk(&self) -> Walk<'_> {
        Walk {
            ranges: self.ranges(),
            total: self.sacked_bytes(),
            below_bytes: 0,
            above_i: 0,
            sacked_i: 0,
            last: 0,
        }
    }
}

/// See [`Scoreboard::walk`].
pub struct Walk<'a> {
    ranges: &'a [(u64, u64)],
    total: u64,
    /// Bytes of `ranges[..above_i]`, the ranges that end at or below the
    /// last `sacked_above` point + 1.
    below_bytes: u64,
    above_i: usize,
    /// The first range ending above the last `is_sacked` point.
    sacked_i: usize,
    /// The last sequence number asked about (they may not decrease).
    last: u64,
}

impl Walk<'_> {
    fn check_order(&mut self, seq: u64) {
        debug_assert!(seq >= self.last, "a scoreboard walk goes upwards");
        self.last = seq;
    }

    pub fn is_sacked(&mut self, seq: u64) -> bool {
        self.check_order(seq);
        let r = self.ranges;
        while self.sacked_i < r.len() && r[self.sacked_i].1 <= seq {
            self.sacked_i += 1;
        }
        self.sacked_i < r.len() && r[self.sacked_i].0 <= seq
    }

    /// SACKed bytes strictly above `seq` (as [`Scoreboard::sacked_above`]).
    pub fn sacked_above(&mut self, seq: u64) -> u64 {
        self.check_order(seq);
        let (r, from) = (self.ranges, seq + 1);
        while self.above_i < r.len() && r[self.above_i].1 <= from {
            self.below_bytes += r[self.above_i].1 - r[self.above_i].0;
            self.above_i += 1;
        }
        // The first range ending above seq + 1 may start below it.
        let cut = r.get(self.above_i).map_or(0, |x| from.saturating_sub(x.0));
        self.total - self.below_bytes - cut
    }

    /// IsLost (as [`Scoreboard::is_lost`]).
    pub fn is_lost(&mut self, seq: u64, dupthresh: u32, smss: u64) -> bool {
        self.sacked_above(seq) > (dupthresh as u64 - 1) * smss
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Numbers below `n` from a xorshift generator seeded with `x`.
    pub(crate) fn xorshift(mut x: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        }
    }

    #[test]
    fn blocks_merge_and_advance() {
        let mut sb = Scoreboard::default();
        assert_eq!(sb.update(&[(300, 400), (100, 200)], 50), 200);
        assert_eq!(sb.update(&[(200, 300)], 50), 100);
        assert_eq!(sb.ranges(), &[(100, 400)]);
        assert_eq!(sb.update(&[(150, 250)], 50), 0, "nothing new");
        sb.update(&[(500, 600)], 50);
        sb.advance(350);
        assert_eq!(sb.ranges(), &[(350, 400), (500, 600)]);
        assert!(sb.is_sacked(399) && !sb.is_sacked(400) && sb.is_sacked(500));
        assert_eq!(sb.highest_sacked(), 600);
    }

    #[test]
    fn is_lost_needs_dupthresh_segments_above() {
        // RFC 6675: segment 1 is lost once three segments above it are SACKed.
        let smss = 100;
        let mut sb = Scoreboard::default();
        sb.update(&[(101, 201)], 1);
        assert!(!sb.is_lost(1, 3, smss));
        sb.update(&[(201, 301)], 1);
        assert!(
            !sb.is_lost(1, 3, smss),
            "two segments: (DupThresh-1)*SMSS bytes, not more"
        );
        sb.update(&[(401, 501)], 1);
        assert!(sb.is_lost(1, 3, smss));
        assert!(
            !sb.is_lost(301, 3, smss),
            "only one SACKed segment above 301"
        );
    }

    #[test]
    fn sacked_above_counts_bytes_strictly_above() {
        let mut sb = Scoreboard::default();
        sb.update(&[(1001, 2001), (3001, 4001)], 1);
        assert_eq!(sb.sacked_above(1000), 2000);
        assert_eq!(sb.sacked_above(1500), 500 + 1000, "part of a range counts");
        assert_eq!(
            sb.sacked_above(2000),
            1000,
            "a range ending at seq + 1 adds nothing"
        );
        assert_eq!(sb.sacked_above(4000), 0);
        assert_eq!(sb.highest_sacked(), 4001);
        // IsLost with DupThresh 3, SMSS 1000: more than 2000 bytes above.
        assert!(!sb.is_lost(0, 3, 1000), "exactly 2000 above");
        sb.update(&[(5001, 5002)], 1);
        assert!(sb.is_lost(0, 3, 1000), "2001 above");
        assert!(!sb.is_lost(0, 4, 1000));
    }

    /// Fewer than `blocks` random SACK blocks, each starting below `span`
    /// and at most `len` long (above an ACK of 0).
    fn random_scoreboard(
        next: &mut impl FnMut(u64) -> u64,
        blocks: u64,
        span: u64,
        len: u64,
    ) -> Scoreboard {
        let mut sb = Scoreboard::default();
        for _ in 0..next(blocks) {
            let s = next(span);
            sb.update(&[(s, s + 1 + next(len))], 0);
        }
        sb
    }

    #[test]
    fn a_walk_answers_as_the_scoreboard_does() {
        // Random scoreboards, asked about every sequence number in order.
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let sb = random_scoreboard(&mut next, 6, 200, 30);
            let mut walk = sb.walk();
            let mut seq = next(5);
            while seq < 260 {
                assert_eq!(walk.is_sacked(seq), sb.is_sacked(seq), "{seq} {sb:?}");
                assert_eq!(walk.sacked_above(seq), sb.sacked_above(seq), "{seq} {sb:?}");
                assert_eq!(walk.is_lost(seq, 3, 10), sb.is_lost(seq, 3, 10), "{seq}");
                seq += next(4);
            }
        }
    }

    #[test]
    fn lost_below_splits_the_numbers_is_lost_answers() {
        let mut next = xorshift(0x51_7cc1_b727_220a);
        for _ in 0..500 {
            let sb = random_scoreboard(&mut next, 7, 300, 40);
            let (dt, smss) = (1 + next(4) as u32, 1 + next(12));
            let l = sb.lost_below(dt, smss);
            for seq in 0..360 {
                assert_eq!(sb.is_lost(seq, dt, smss), seq < l, "{seq} {l} {sb:?}");
            }
        }
    }

    #[test]
    fn the_byte_total_follows_every_change() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut r = RangeSet::default();
        for _ in 0..5_000 {
            match next(10) {
                0 => r.trim_below(next(400)),
                1 if !r.is_empty() => r.pop_first(),
                2 if next(20) == 0 => r.clear(),
                _ => {
                    let s = next(400);
                    r.insert(s, s + 1 + next(40));
                }
            }
            let sum: u64 = r.as_slice().iter().map(|r| r.1 - r.0).sum();
            assert_eq!(r.bytes(), sum, "{r:?}");
            assert!(
                r.as_slice().windows(2).all(|w| w[0].1 < w[1].0),
                "sorted, merged: {r:?}"
            );
        }
    }

    #[test]
    fn trimming_to_a_range_end_leaves_nothing_and_clear_forgets() {
        let mut r = RangeSet::default();
        r.insert(1, 5);
        r.trim_below(5);
        assert!(r.is_empty(), "[1, 5) lies wholly below 5");
        r.insert(10, 20);
        r.trim_below(15);
        assert_eq!(r.as_slice(), &[(15, 20)]);
        let mut sb = Scoreboard::default();
        assert_eq!(
            sb.update(&[(10, 20), (5, 30)], 8),
            22,
            "clipped at una, newly marked bytes"
        );
        assert_eq!(sb.update(&[(10, 20)], 8), 0, "nothing new");
        assert_eq!(sb.update(&[(3, 7)], 8), 0, "below una");
        sb.clear();
        assert_eq!(sb.sacked_bytes(), 0);
        assert!(!sb.is_sacked(10));
    }
}
