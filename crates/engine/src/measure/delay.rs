//! One-way delay statistics kept as packets arrive, for runs without the
//! per-packet log (`measure.packets = false`), so memory does not grow
//! with simulated time.
//!
//! Count, sum, minimum and maximum are exact. Percentiles come from a
//! log-linear histogram (HDR style): values below 2^SUB_BITS ns in buckets
//! of 1 ns, above that 2^SUB_BITS buckets per power of two, so a bucket's
//! width is at most 2^-SUB_BITS of its values (0.1%).
//!
//! The histogram starts as a hash map of the buckets in use (a path
//! without queueing fills a handful), with the current run of equal buckets
//! counted aside: a flow's delays come in runs, and a run costs one map
//! update when it ends. Once the map takes as much memory as dense pages
//! would (8 KiB for each power of two its buckets span: a flow that saw
//! queueing delays), it switches to those pages of 2^SUB_BITS counters: a
//! count is then one indexed increment. It switches too once the flow has
//! counted a thousand delays per page the pages would take (8 bytes a
//! delay at most). The map replaced a sorted list whose binary search, a
//! chain of dependent loads over the flow's buckets, was a third of a
//! delivery's time with 64 busy flows (AVPF case 10, `perf`). Percentiles
//! sort the buckets once, at the end.
//!
//! A delay that ends a run of one bucket (a delay unlike both its
//! neighbours, as behind a queue that moves with every packet) waits in a
//! short list of buckets, appended in order; when the list is full it is
//! counted in one pass. With a thousand such flows each count was a cache
//! miss or two into the flow's map or pages, each waited for before the
//! delivery went on, the largest single cost of a delivery (`perf`, 1,000
//! CBR flows through a full 300 ms queue). Appended, a delay costs a
//! sixteenth of a line; in the pass, the map's updates do not depend on
//! one another, so their misses overlap, and pages are counted sorted,
//! each bucket once and the pages in address order. Counting is a sum, so
//! the order does not change any count.

use rustc_hash::FxHashMap;

const SUB_BITS: u32 = 10;
const SUB: u64 = 1 << SUB_BITS;

/// Bytes of one dense page (2^SUB_BITS counters of 8 bytes).
const PAGE_BYTES: usize = SUB as usize * 8;

/// Bytes the hash map holds per slot of its capacity: a (bucket, count)
/// entry and a control byte.
const MAP_SLOT_BYTES: usize = 16 + 1;

/// Delays counted per octave spanned at which dense pages (8 KiB each) cost
/// at most 8 bytes per delay counted.
const BUSY_PER_OCTAVE: u64 = SUB;

/// Single delays' buckets waiting to be counted, at most (1 KiB).
const PENDING: usize = 256;

#[derive(Clone, Debug, Default)]
pub struct DelayStats {
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    /// The current run of equal buckets: (bucket, delays in the run not
    /// yet in `form`); 0 delays before the first.
    run: (u32, u32),
    /// Octaves (`bucket >> SUB_BITS`, at most 54) the map's buckets span,
    /// one bit each.
    octaves: u64,
    form: Form,
    /// Buckets of runs of one delay not yet in `form` (allocated at the
    /// first; a thin pointer, so that a recorder row stays two lines).
    pending: Option<Box<Pending>>,
}

/// Single delays' buckets, in arrival order.
#[derive(Clone, Debug)]
struct Pending {
    len: usize,
    buckets: [u32; PENDING],
}

/// Where finished runs are counted. 32 bytes (the map's pointer leaves
/// room for the tag), so that a recorder row with its `DelayStats` stays
/// two cache lines.
#[derive(Clone, Debug)]
enum Form {
    Sparse {
        /// Bucket -> count.
        buckets: FxHashMap<u32, u64>,
    },
    /// Page `b >> SUB_BITS` counts buckets `b` by `b % SUB`.
    Dense(Vec<Option<Box<[u64]>>>),
}

impl Default for Form {
    fn default() -> Self {
        Form::Sparse {
            buckets: FxHashMap::default(),
        }
    }
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

/// Whether to switch to dense pages, asked when a bucket is added to the
/// map: once the map (`capacity` slots) takes as much memory as the pages
/// of its `octaves` would, or once the flow has counted so many delays
/// (`BUSY_PER_OCTAVE` per page) that the pages cost at most 8 bytes per
/// delay. A busy flow whose delay moves (a queue filling and draining)
/// would otherwise pay a map update per packet.
fn dense_pays(capacity: usize, octaves: u32, count: u64) -> bool {
    let octaves = octaves as u64;
    (capacity * MAP_SLOT_BYTES) as u64 >= PAGE_BYTES as u64 * octaves
        || count >= BUSY_PER_OCTAVE * octaves
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
        if self.run.0 == b && self.run.1 < u32::MAX {
            self.run.1 += 1;
        } else {
            let (last, n) = std::mem::replace(&mut self.run, (b, 1));
            if n == 1 {
                self.hold(last);
            } else {
                self.count_run(last, n as u64);
            }
        }
    }

    /// Puts a single delay's bucket on the pending list, counting the list
    /// when it is full.
    #[inline]
    fn hold(&mut self, b: u32) {
        let mut p = self.pending.take().unwrap_or_else(|| {
            Box::new(Pending {
                len: 0,
                buckets: [0; PENDING],
            })
        });
        if p.len == PENDING {
            self.count_pending(&mut p.buckets);
            p.len = 0;
        }
        p.buckets[p.len] = b;
        p.len += 1;
        self.pending = Some(p);
    }

    /// Counts a full pending list: into the map as it came (its updates
    /// independent of one another, so their misses overlap), into dense
    /// pages sorted (one count per bucket, the pages in address order).
    #[inline(never)]
    fn count_pending(&mut self, list: &mut [u32; PENDING]) {
        if matches!(self.form, Form::Sparse { .. }) {
            for (i, &b) in list.iter().enumerate() {
                self.count_run(b, 1);
                if matches!(self.form, Form::Dense(_)) {
                    // The map just turned into pages: the rest sorted.
                    return self.count_sorted(&mut list[i + 1..]);
                }
            }
        } else {
            self.count_sorted(list);
        }
    }

    fn count_sorted(&mut self, list: &mut [u32]) {
        list.sort_unstable();
        for same in list.chunk_by(|a, b| a == b) {
            self.count_run(same[0], same.len() as u64);
        }
    }

    /// The buckets waiting on the pending list.
    fn pending(&self) -> &[u32] {
        self.pending.as_ref().map_or(&[], |p| &p.buckets[..p.len])
    }

    /// Adds a finished run of `n` delays in bucket `b`.
    fn count_run(&mut self, b: u32, n: u64) {
        if n == 0 {
            return;
        }
        let Form::Sparse { buckets } = &mut self.form else {
            return self.count_dense(b, n);
        };
        let before = buckets.len();
        *buckets.entry(b).or_insert(0) += n;
        if buckets.len() == before {
            return;
        }
        self.octaves |= 1 << (b >> SUB_BITS);
        if dense_pays(buckets.capacity(), self.octaves.count_ones(), self.count) {
            let buckets = std::mem::take(buckets);
            self.form = Form::Dense(Vec::new());
            for (b, c) in buckets {
                self.count_dense(b, c);
            }
        }
    }

    fn count_dense(&mut self, b: u32, c: u64) {
        let Form::Dense(pages) = &mut self.form else {
            unreachable!("counted densely only in the dense form")
        };
        let page = (b >> SUB_BITS) as usize;
        if page >= pages.len() {
            pages.resize(page + 1, None);
        }
        let counts = pages[page].get_or_insert_with(|| vec![0; SUB as usize].into());
        counts[(b as u64 % SUB) as usize] += c;
    }

    /// (bucket, count) of the buckets in use, in order, the current run
    /// included.
    fn in_order(&self) -> Vec<(u32, u64)> {
        let mut counts: Vec<(u32, u64)> = match &self.form {
            Form::Sparse { buckets, .. } => buckets.iter().map(|(&b, &c)| (b, c)).collect(),
            Form::Dense(pages) => pages
                .iter()
                .enumerate()
                .flat_map(|(page, cs)| {
                    let first = (page as u32) << SUB_BITS;
                    let used = cs
                        .iter()
                        .flat_map(|cs| cs.iter().enumerate())
                        .filter(|e| *e.1 > 0);
                    used.map(move |(i, &c)| (first + i as u32, c))
                })
                .collect(),
        };
        if self.run.1 > 0 {
            counts.push((self.run.0, self.run.1 as u64));
        }
        counts.extend(self.pending().iter().map(|&b| (b, 1)));
        counts.sort_unstable();
        // The run's and the pending buckets may have been counted before
        // as well.
        counts.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 += b.1;
            }
            same
        });
        counts
    }

    /// Takes in another summary of the same row (another partition's of
    /// a split run): the counts of each bucket add up, so the summary is
    /// the one these delays would give counted in one place.
    pub fn absorb(&mut self, o: &DelayStats) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 || o.min_ns < self.min_ns {
            self.min_ns = o.min_ns;
        }
        self.max_ns = self.max_ns.max(o.max_ns);
        self.count += o.count;
        self.sum_ns += o.sum_ns;
        for (b, c) in o.in_order() {
            self.count_run(b, c);
        }
    }

    /// The value of rank `k` (0-based, in sorted order): its bucket's
    /// midpoint, kept within [min, max].
    fn ranked(&self, order: &[(u32, u64)], k: u64) -> f64 {
        let mut seen = 0;
        for &(b, c) in order {
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
        let order = self.in_order();
        let pct = |q: f64| {
            let pos = q * (self.count - 1) as f64;
            let (lo, hi) = (pos.floor() as u64, pos.ceil() as u64);
            let (a, b) = (self.ranked(&order, lo), self.ranked(&order, hi));
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

    impl DelayStats {
        fn is_dense(&self) -> bool {
            matches!(self.form, Form::Dense(_))
        }
    }

    #[test]
    fn percentiles_of_a_few_delays_interpolate_between_ranks_as_numpy_does() {
        // numpy.percentile([100, 5000], [50, 95, 99]) = [2550, 4755, 4951]:
        // ranks 0 and 1 in buckets far apart (5000 ns rounds to its
        // bucket's midpoint, 5001.5, kept within the maximum).
        let mut d = DelayStats::default();
        d.add(5000);
        d.add(100);
        let s = d.summary_ns();
        let want = [2550.0, 100.0, 2550.0, 4755.0, 4951.0, 5000.0];
        for (got, want) in s.iter().zip(want) {
            assert!((got - want).abs() < 1e-9, "{s:?}");
        }
        // Three: the median is rank 1 itself.
        d.add(3000);
        assert_eq!(d.summary_ns()[2], bucket_mid(3000));
    }

    fn bucket_mid(v: u64) -> f64 {
        let (lo, hi) = bucket_range(bucket(v));
        (lo + hi) as f64 / 2.0
    }

    #[test]
    fn a_run_as_long_as_its_counter_holds_is_counted_and_a_new_one_starts() {
        let b = bucket(7);
        let mut d = DelayStats {
            count: u32::MAX as u64,
            sum_ns: 7 * u32::MAX as u128,
            min_ns: 7,
            max_ns: 7,
            run: (b, u32::MAX),
            ..DelayStats::default()
        };
        d.add(7);
        assert_eq!(d.run, (b, 1));
        assert_eq!(d.in_order(), vec![(b, 1 << 32)]);
        assert_eq!(d.summary_ns()[2], 7.0);
    }

    #[test]
    fn the_map_turns_into_pages_once_it_takes_as_much_memory_or_counts_enough() {
        // 17 bytes a slot: 482 slots (8,194 bytes) reach one 8 KiB page,
        // 481 (8,177) do not; two octaves need twice as much.
        assert!(dense_pays(482, 1, 0));
        assert!(!dense_pays(481, 1, 0));
        assert!(!dense_pays(963, 2, 0));
        assert!(dense_pays(964, 2, 0));
        // Or 1,024 delays counted per page the pages would take.
        assert!(!dense_pays(16, 2, 2047));
        assert!(dense_pays(16, 2, 2048));
        assert!(dense_pays(16, 1, 1024));
    }

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

    /// Delays counted in two summaries and merged give the summary of all
    /// of them counted in one, to the bit, whatever forms the two are in
    /// (a few delays in the map, many in dense pages, one empty).
    #[test]
    fn two_summaries_merged_are_the_summary_of_all() {
        let mut rng = RngStreams::new(9, 0).stream("merge");
        for (n_a, n_b) in [(0, 50), (50, 0), (30, 40), (5_000, 20), (20_000, 30_000)] {
            let d: Vec<u64> = (0..n_a + n_b)
                .map(|_| (1e5 * (1.0 + 99.0 * uniform(&mut rng).powi(2))) as u64)
                .collect();
            let (mut one, mut a, mut b) = Default::default();
            let (one, a, b): (&mut DelayStats, &mut DelayStats, &mut DelayStats) =
                (&mut one, &mut a, &mut b);
            for (i, &x) in d.iter().enumerate() {
                one.add(x);
                if i % (n_a + n_b).max(1) < n_a {
                    a.add(x);
                } else {
                    b.add(x);
                }
            }
            a.absorb(b);
            let (x, y) = (a.summary_ns(), one.summary_ns());
            assert_eq!(format!("{x:?}"), format!("{y:?}"), "{n_a} + {n_b}");
            assert_eq!(a.in_order(), one.in_order());
        }
    }

    /// Across the switch from the hash map to dense pages (values over many
    /// octaves, or packed in one), the buckets and counts are those a plain
    /// ordered map gives; the switch comes once the map is as large as the
    /// pages, or the flow busy.
    #[test]
    fn the_dense_form_counts_as_the_map_does() {
        let mut rng = RngStreams::new(5, 0).stream("dense");
        fn wide(r: &mut crate::sim::SimRng) -> u64 {
            10f64.powf(2.0 + 7.0 * uniform(r)) as u64
        }
        fn narrow(r: &mut crate::sim::SimRng) -> u64 {
            (1 << 20) + (uniform(r) * (1 << 20) as f64) as u64
        }
        // A handful of delays in random order: runs of one bucket (counted
        // aside while they last) broken by jumps.
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
            assert_eq!(s.is_dense(), dense, "n {n}, {} buckets", map.len());
            let got = s.in_order();
            let want: Vec<_> = map.into_iter().collect();
            assert_eq!(got, want, "n {n}");
        }
    }

    /// The current run of equal buckets joins its bucket's earlier count,
    /// in the map and in the pages alike.
    #[test]
    fn the_current_run_is_counted_with_its_bucket() {
        let (a, b) = (1_000_000, 2_000_000);
        let mut s = DelayStats::default();
        for x in [a, a, b, a, a, a] {
            s.add(x);
        }
        assert_eq!(s.in_order(), vec![(bucket(a), 5), (bucket(b), 1)]);
        // Then a new bucket between every two delays of `a`: dense pages,
        // with a run of `a` open at the end.
        let n = 3 * SUB;
        let mut others = std::collections::BTreeSet::from([bucket(b)]);
        for i in 0..n {
            s.add(a);
            s.add(2 * b + 2048 * i);
            others.insert(bucket(2 * b + 2048 * i));
        }
        s.add(a);
        s.add(a);
        assert!(s.is_dense(), "busy: dense");
        let order = s.in_order();
        assert_eq!(order[0], (bucket(a), 5 + n + 2));
        assert!(others.len() > 1_000);
        assert_eq!(order.len(), 1 + others.len());
        assert_eq!(order.iter().map(|e| e.1).sum::<u64>(), s.count);
    }

    /// Delays unlike their neighbours wait in the pending list, which
    /// never holds more than `PENDING`; before and after it is counted,
    /// the buckets are those a plain ordered map gives.
    #[test]
    fn single_delays_wait_in_a_bounded_list_and_count_as_the_map_does() {
        let mut s = DelayStats::default();
        let mut map = std::collections::BTreeMap::new();
        let mut rng = RngStreams::new(7, 0).stream("pending");
        for i in 0..(3 * PENDING + 17) {
            // Each delay in a bucket of its own neighbours' (a moving
            // queue), with some buckets coming back.
            let x = (1 << 24) + (uniform(&mut rng) * 64.0) as u64 * (1 << 14) + (i as u64 % 2) * 7;
            s.add(x);
            *map.entry(bucket(x)).or_insert(0u64) += 1;
            assert!(s.pending().len() <= PENDING);
            if i == PENDING / 2 || i == PENDING + 1 {
                let want: Vec<_> = map.clone().into_iter().collect();
                assert_eq!(s.in_order(), want, "after {} delays", i + 1);
            }
        }
        assert!(!s.pending().is_empty() && s.pending().len() < PENDING);
        let want: Vec<_> = map.into_iter().collect();
        assert_eq!(s.in_order(), want);
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
