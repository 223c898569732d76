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
