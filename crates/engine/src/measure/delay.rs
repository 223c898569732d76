//! One-way delay statistics kept as packets arrive, for runs without the
//! per-packet log (`measure.packets = false`), so memory does not grow
//! with simulated time.
//!
//! Count, sum, minimum and maximum are exact. Percentiles come from a
//! log-linear histogram (HDR style): values below 2^SUB_BITS ns in buckets
//! of 1 ns, above that 2^SUB_BITS buckets per power of two, so a bucket's
//! width is at most 2^-SUB_BITS of its values (0.1%).
//!
//! The histogram starts as a sorted list of the buckets in use (a path
//! without queueing fills a handful). Once the list takes as much memory as
//! dense pages would (16 bytes a bucket against 8 KiB for each power of two
//! its buckets span: a flow that saw queueing delays), it switches to those
//! pages of 2^SUB_BITS counters: a count is then one indexed increment
//! instead of a binary search over thousands of buckets. It switches too
//! once the flow has counted a thousand delays per page the pages would
//! take (8 bytes a delay at most): a busy flow's binary search per packet
//! cost more than the pages.

const SUB_BITS: u32 = 10;
const SUB: u64 = 1 << SUB_BITS;

/// Buckets per octave at which the sorted list (16 bytes a bucket) takes
/// as much memory as a dense page (8 bytes a bucket, all of them).
const DENSE_AT: usize = SUB as usize / 2;

/// Delays counted per octave spanned at which dense pages (8 KiB each) cost
/// at most 8 bytes per delay counted.
const BUSY_PER_OCTAVE: u64 = SUB;

#[derive(Clone, Debug, Default)]
pub struct DelayStats {
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    /// (bucket, count), sorted by bucket, while `pages` is empty.
    buckets: Vec<(u32, u64)>,
    /// Index of the bucket counted last: a flow's delays come in runs
    /// (a path without queueing, a slowly moving queue), and a hit here
    /// skips the binary search and its cache misses.
    last: usize,
    /// Dense form: page `b >> SUB_BITS` counts buckets `b` by `b % SUB`.
    pages: Vec<Option<Box<[u64]>>>,
}

/// The bucket of `v` and its value range [lo, hi].
fn bucket(v: u64) -> u32 {
    if v < SUB {
        return v as u32;
    }
    let e = 63 - v.leading_zeros(); // floor(log2 v) >= SUB_BITS
    let shift = e - SUB_BITS;
    ((shift as u64 + 1) * SUB + ((v >> shift) - SUB)) as u32
}

fn bucket_range(b: u32) -> (u64, u64) {
    let b = b as u64;
    if b < SUB {
        return (b, b);
    }
    let shift = b / SUB - 1;
    let lo = (SUB + b % SUB) << shift;
    (lo, lo + (1u64 << shift) - 1)
}

impl DelayStats {
    pub fn add(&mut self, ns: u64) {
        if self.count == 0 || ns < self.min_ns {
            self.min_ns = ns;
        }
        self.max_ns = self.max_ns.max(ns);
        self.count += 1;
        self.sum_ns += ns as u128;
        let b = bucket(ns);
        if !self.pages.is_empty() {
            return self.count_dense(b, 1);
        }
        let found = match self.buckets.get(self.last) {
            Some(e) if e.0 == b => Ok(self.last),
            _ => self.buckets.binary_search_by_key(&b, |e| e.0),
        };
        match found {
            Ok(i) => {
                self.buckets[i].1 += 1;
                self.last = i;
            }
            Err(i) => {
                self.buckets.insert(i, (b, 1));
                self.last = i;
                if self.dense_pays() {
                    for (b, c) in std::mem::take(&mut self.buckets) {
                        self.count_dense(b, c);
                    }
                }
            }
        }
    }

    /// Whether to switch to dense pages, asked when a bucket is added:
    /// once the list takes as much memory as the pages would, or once the
    /// flow has counted so many delays (`BUSY_PER_OCTAVE` per page) that
    /// the pages cost at most 8 bytes per delay. A busy flow whose delay
    /// moves (a queue filling and draining) would otherwise pay a binary
    /// search per packet (a one-flow TCP dumbbell ran 5-6% faster with
    /// this rule).
    fn dense_pays(&self) -> bool {
        let len = self.buckets.len();
        let busy = self.count >= BUSY_PER_OCTAVE;
        if len % 64 != 0 && !busy {
            return false;
        }
        let octaves = self.octaves() as u64;
        len as u64 >= DENSE_AT as u64 * octaves || self.count >= BUSY_PER_OCTAVE * octaves
    }

    /// Powers of two the sorted list's buckets span.
    fn octaves(&self) -> usize {
        let mut pages = self.buckets.iter().map(|e| e.0 >> SUB_BITS);
        let first = pages.next().map_or(0, |p| p as usize);
        pages
            .fold((1, first), |(n, last), p| {
                (n + (p as usize != last) as usize, p as usize)
            })
            .0
    }

    fn count_dense(&mut self, b: u32, c: u64) {
        let page = (b >> SUB_BITS) as usize;
        if page >= self.pages.len() {
            self.pages.resize(page + 1, None);
        }
        let counts = self.pages[page].get_or_insert_with(|| vec![0; SUB as usize].into());
        counts[(b as u64 % SUB) as usize] += c;
    }

    /// (bucket, count) of the buckets in use, in order.
    fn in_order(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        let dense = self.pages.iter().enumerate().flat_map(|(page, counts)| {
            let first = (page as u32) << SUB_BITS;
            counts.iter().flat_map(move |cs| {
                (cs.iter().enumerate())
                    .filter(|e| *e.1 > 0)
                    .map(move |(i, &c)| (first + i as u32, c))
            })
        });
        self.buckets.iter().copied().chain(dense)
    }

    /// The value of rank `k` (0-based, in sorted order): its bucket's
    /// midpoint, kept within [min, max].
    fn ranked(&self, k: u64) -> f64 {
        let mut seen = 0;
        for (b, c) in self.in_order() {
            seen += c;
            if k < seen {
                let (lo, hi) = bucket_range(b);
                let mid = (lo as f64 + hi as f64) / 2.0;
                return mid.clamp(self.min_ns as f64, self.max_ns as f64);
            }
        }
        self.max_ns as f64
    }

    /// Mean, min, median, 95th and 99th percentile and max in ns (NaN when
    /// empty); percentiles interpolate between ranks as numpy's "linear".
    pub fn summary_ns(&self) -> [f64; 6] {
        if self.count == 0 {
            return [f64::NAN; 6];
        }
        let pct = |q: f64| {
            let pos = q * (self.count - 1) as f64;
            let (lo, hi) = (pos.floor() as u64, pos.ceil() as u64);
            let (a, b) = (self.ranked(lo), self.ranked(hi));
            a + (b - a) * (pos - lo as f64)
        };
        [
            self.sum_ns as f64 / self.count as f64,
            self.min_ns as f64,
            pct(0.50),
            pct(0.95),
            pct(0.99),
            self.max_ns as f64,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::summary::percentile;
    use crate::sim::{uniform, RngStreams};

    #[test]
    fn buckets_cover_every_value_once_and_are_at_most_a_thousandth_wide() {
        let mut next = 0;
        for b in 0..(40 * SUB as u32) {
            let (lo, hi) = bucket_range(b);
            assert_eq!(lo, next, "bucket {b} starts where the last ended");
            assert_eq!(bucket(lo), b);
            assert_eq!(bucket(hi), b);
            assert!((hi - lo) as f64 <= lo as f64 / SUB as f64);
            next = hi + 1;
        }
    }

    /// Against exact percentiles of sorted data (numpy's linear method):
    /// mean, min and max exact, percentiles within 0.1%.
    #[test]
    fn summary_matches_exact_statistics_within_a_thousandth() {
        let mut rng = RngStreams::new(3, 0).stream("d");
        for scale in [1e3, 1e6, 4e7] {
            let mut d: Vec<u64> = (0..20_000)
                .map(|_| (scale * (1.0 + 9.0 * uniform(&mut rng).powi(3))) as u64)
                .collect();
            let mut s = DelayStats::default();
            for &x in &d {
                s.add(x);
            }
            d.sort_unstable();
            let got = s.summary_ns();
            let mean = d.iter().map(|&x| x as u128).sum::<u128>() as f64 / d.len() as f64;
            assert_eq!(got[0], mean);
            assert_eq!(got[1], d[0] as f64);
            assert_eq!(got[5], *d.last().unwrap() as f64);
            for (i, q) in [(2, 0.5), (3, 0.95), (4, 0.99)] {
                let want = percentile(&d, q);
                assert!(
                    (got[i] - want).abs() <= want / SUB as f64,
                    "{scale} q{q}: {} {want}",
                    got[i]
                );
            }
        }
        assert!(DelayStats::default().summary_ns()[2].is_nan());
    }

    /// Across the switch from the sorted list to dense pages (values over
    /// many octaves, or packed in one), the buckets and counts are those a
    /// plain ordered map gives; the switch comes once the list is as large
    /// as the pages.
    #[test]
    fn the_dense_form_counts_as_the_sorted_list_does() {
        let mut rng = RngStreams::new(5, 0).stream("dense");
        fn wide(r: &mut crate::sim::SimRng) -> u64 {
            10f64.powf(2.0 + 7.0 * uniform(r)) as u64
        }
        fn narrow(r: &mut crate::sim::SimRng) -> u64 {
            (1 << 20) + (uniform(r) * (1 << 20) as f64) as u64
        }
        // A handful of delays in random order: runs of one bucket (the
        // last-bucket shortcut) broken by jumps.
        fn few(r: &mut crate::sim::SimRng) -> u64 {
            (1 << 20) + (uniform(r) * 6.0) as u64 * 5_000
        }
        // A busy flow behind a moving queue: 200 buckets in one octave, the
        // last of them first seen after a thousand delays.
        fn busy(r: &mut crate::sim::SimRng) -> u64 {
            (1 << 24) + (uniform(r) * 200.0) as u64 * (1 << 14)
        }
        type Spread = fn(&mut crate::sim::SimRng) -> u64;
        let cases: [(usize, Spread, bool); 8] = [
            (1_000, busy, false),
            (3_000, busy, true),
            (2_000, few, false),
            (10, wide, false),
            (1_000, wide, false),
            (30_000, wide, true),
            (400, narrow, false),
            (5_000, narrow, true),
        ];
        for (n, spread, dense) in cases {
            let mut s = DelayStats::default();
            let mut map = std::collections::BTreeMap::new();
            for _ in 0..n {
                let x = spread(&mut rng);
                s.add(x);
                *map.entry(bucket(x)).or_insert(0u64) += 1;
            }
            assert_eq!(!s.pages.is_empty(), dense, "n {n}, {} buckets", map.len());
            let got: Vec<_> = s.in_order().collect();
            let want: Vec<_> = map.into_iter().collect();
            assert_eq!(got, want, "n {n}");
        }
    }

    #[test]
    fn a_constant_delay_is_exact() {
        let mut s = DelayStats::default();
        for _ in 0..5 {
            s.add(123_456_789);
        }
        assert_eq!(s.summary_ns(), [123_456_789.0; 6]);
    }
}
