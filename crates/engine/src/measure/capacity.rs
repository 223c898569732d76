//! The capacity a link direction offered over time next to what it
//! carried: one row per direction and interval, so that a flow's rate can
//! be plotted against the capacity it had (`link_capacity` table).

use crate::net::LinkDirId;
use crate::sim::SimTime;

pub struct CapacityProbe {
    pub every: SimTime,
    /// The directions sampled, with their totals at the last sample
    /// (bytes offered, bytes carried).
    pub links: Vec<(LinkDirId, f64, u64)>,
    /// Rows kept at most (limits.max_queue_sample_rows).
    pub limit: u64,
    pub truncated: bool,
    pub time_ns: Vec<u64>,
    pub link_dir: Vec<u32>,
    pub capacity_bytes: Vec<f64>,
    pub carried_bytes: Vec<u64>,
}

impl CapacityProbe {
    pub fn new(every: SimTime, links: Vec<LinkDirId>, limit: u64) -> Self {
        CapacityProbe {
            every,
            links: links.into_iter().map(|l| (l, 0.0, 0)).collect(),
            limit,
            truncated: false,
            time_ns: Vec::new(),
            link_dir: Vec::new(),
            capacity_bytes: Vec::new(),
            carried_bytes: Vec::new(),
        }
    }

    /// Records direction `k` of `links` at `now` from its totals; false
    /// once the rows are at their limit.
    pub fn record(&mut self, now: SimTime, k: usize, offered: f64, carried: u64) -> bool {
        if self.time_ns.len() as u64 >= self.limit {
            self.truncated = true;
            return false;
        }
        let (ld, last_offered, last_carried) = &mut self.links[k];
        self.time_ns.push(now.as_nanos());
        self.link_dir.push(*ld);
        self.capacity_bytes.push(offered - *last_offered);
        self.carried_bytes.push(carried - *last_carried);
        (*last_offered, *last_carried) = (offered, carried);
        true
    }
}

impl CapacityProbe {
    /// Takes in another partition's rows (each partition samples the
    /// directions it transmits on): merged by time, and at one instant in
    /// the order of `links`, as one probe records them.
    pub fn absorb(&mut self, mut o: CapacityProbe) {
        use super::merge::{order, truncate_fields, weave_fields};
        let pos: rustc_hash::FxHashMap<u32, usize> = (self.links.iter().enumerate())
            .map(|(k, l)| (l.0, k))
            .collect();
        let key = |p: &CapacityProbe| -> Vec<(u64, usize)> {
            (p.time_ns.iter().zip(&p.link_dir))
                .map(|(&t, l)| (t, pos.get(l).copied().unwrap_or(usize::MAX)))
                .collect()
        };
        let by = order(&key(self), &key(&o));
        weave_fields!(
            &by,
            self,
            o,
            [time_ns, link_dir, capacity_bytes, carried_bytes]
        );
        self.truncated |= o.truncated;
        if self.time_ns.len() as u64 > self.limit {
            let n = self.limit as usize;
            truncate_fields!(self, n, [time_ns, link_dir, capacity_bytes, carried_bytes]);
            self.truncated = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row is what the direction offered and carried since its last.
    #[test]
    fn rows_hold_each_interval_and_stop_at_their_limit() {
        let mut p = CapacityProbe::new(SimTime(100), vec![7, 2], 3);
        assert!(p.record(SimTime(100), 0, 1_250.0, 1_000));
        assert!(p.record(SimTime(100), 1, 500.5, 40));
        assert!(p.record(SimTime(200), 0, 2_000.0, 1_900));
        assert!(!p.truncated);
        assert!(!p.record(SimTime(200), 1, 900.0, 80));
        assert!(p.truncated);
        assert_eq!(p.time_ns, [100, 100, 200]);
        assert_eq!(p.link_dir, [7, 2, 7]);
        assert_eq!(p.capacity_bytes, [1_250.0, 500.5, 750.0]);
        assert_eq!(p.carried_bytes, [1_000, 40, 900]);
    }

    /// Two partitions' rows merge by time, and at one instant in the
    /// order of the directions, as one probe records them; the merge keeps
    /// the limit and says when it cut.
    #[test]
    fn partitions_merge_as_one_probe_records() {
        let probe = |limit| CapacityProbe::new(SimTime(10), vec![4, 9], limit);
        let (mut a, mut b, mut one) = (probe(10), probe(10), probe(10));
        for (t, k, offered, carried) in [
            (10, 1, 5.0, 3),
            (10, 0, 8.0, 6),
            (20, 0, 9.0, 7),
            (30, 1, 7.0, 5),
        ] {
            let in_a = k == 0;
            assert!((if in_a { &mut a } else { &mut b }).record(SimTime(t), k, offered, carried));
        }
        for (t, k, offered, carried) in [
            (10, 0, 8.0, 6),
            (10, 1, 5.0, 3),
            (20, 0, 9.0, 7),
            (30, 1, 7.0, 5),
        ] {
            assert!(one.record(SimTime(t), k, offered, carried));
        }
        let mut merged = probe(10);
        merged.absorb(b);
        merged.absorb(a);
        assert_eq!(merged.time_ns, one.time_ns);
        assert_eq!(merged.link_dir, one.link_dir);
        assert_eq!(merged.capacity_bytes, one.capacity_bytes);
        assert_eq!(merged.carried_bytes, one.carried_bytes);
        assert!(!merged.truncated);

        let (mut short, mut other) = (probe(2), probe(2));
        short.record(SimTime(10), 0, 1.0, 1);
        other.record(SimTime(5), 1, 2.0, 2);
        other.record(SimTime(20), 1, 3.0, 3);
        short.absorb(other);
        assert_eq!(
            (short.time_ns.as_slice(), short.link_dir.as_slice()),
            (&[5, 10][..], &[9, 4][..])
        );
        assert!(short.truncated);
        let (mut full, mut half) = (probe(2), probe(2));
        full.record(SimTime(10), 0, 1.0, 1);
        half.record(SimTime(10), 1, 1.0, 1);
        full.absorb(half);
        assert!(
            full.time_ns.len() == 2 && !full.truncated,
            "exactly at the limit: not cut"
        );
        let (mut clean, mut cut) = (probe(5), probe(1));
        cut.record(SimTime(1), 0, 1.0, 1);
        assert!(!cut.record(SimTime(2), 0, 1.0, 1));
        clean.absorb(cut);
        assert!(clean.truncated && clean.time_ns.len() == 1);
    }
}
