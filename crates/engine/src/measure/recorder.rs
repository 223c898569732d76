//! The recorder: the fate of every packet, kept in columnar buffers.
//!
//! Flows are measured per (flow, receiver) pair ("fr"): a unicast flow has
//! one, a multicast flow one per group member other than its sender. Each
//! drop is charged to the receivers it deprives of the packet, so that for
//! every pair `sent = received + lost + in_flight` holds exactly at the end.
//!
//! A flow with many receivers whose individual fates nobody reads (the RTCP
//! of a multicast session, where every member sends to every other) is
//! "pooled": one row sums its copies over all receivers, so the recorder
//! grows with the number of flows, not flows x members.

use super::delay::DelayStats;
use crate::net::{DropReason, FlowId, LinkDirId, NodeId, Packet};
use crate::sim::SimTime;

/// Where a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropSite {
    /// In the queue or on the wire of a link direction.
    Link(LinkDirId),
    /// At a node (no route, or at local delivery).
    Node(NodeId),
}

/// Trace event kinds (ns-2 style letters).
pub mod trace_kind {
    /// Enqueued at a link.
    pub const ENQUEUE: u8 = b'+';
    /// Transmission started on a link.
    pub const DEQUEUE: u8 = b'-';
    /// Arrived at the far end of a link.
    pub const RECEIVE: u8 = b'r';
    /// Dropped at a link.
    pub const DROP: u8 = b'd';
    /// Dropped at a node (reported as `d`, with the node instead of a link).
    pub const NODE_DROP: u8 = b'x';
    /// Delivered to an application.
    pub const DELIVER: u8 = b'D';
}

/// Where a flow is measured.
#[derive(Clone, Debug)]
pub enum Receivers {
    /// One row per receiver.
    Each(Vec<NodeId>),
    /// One row for all this many receivers: counts are summed over them
    /// (`sent` counts one copy per receiver); jitter and loss runs, which
    /// are per-receiver sequences, are not kept.
    Pooled(u32),
}

pub struct FlowMeta {
    pub name: String,
    pub kind: &'static str,
    pub src: NodeId,
    pub receivers: Receivers,
    pub start: SimTime,
    pub stop: SimTime,
}

const NONE: u32 = u32::MAX;
/// `fr_node` of a pooled row.
pub const POOLED: NodeId = u32::MAX;

/// A flow's receivers -> row index: a short list for a flow with few
/// receivers (a unicast flow, a HACK), a table over all nodes for one with
/// many (a multicast flow). A table per flow would take flows x nodes
/// entries: 400 MB for 10,000 unicast flows among 10,000 nodes.
enum FrMap {
    /// A unicast flow's one receiver, held inline: a delivery then reads
    /// no other allocation (a cache miss each with hundreds of flows).
    One(NodeId, u32),
    Few(Vec<(NodeId, u32)>),
    Dense(Vec<u32>),
}

/// Up to this many receivers, a list (searched linearly).
const FEW_RECEIVERS: usize = 16;

impl FrMap {
    fn new(pairs: Vec<(NodeId, u32)>, num_nodes: usize) -> Self {
        if let [(n, i)] = pairs[..] {
            return FrMap::One(n, i);
        }
        if pairs.len() <= FEW_RECEIVERS {
            return FrMap::Few(pairs);
        }
        let mut map = vec![NONE; num_nodes];
        for (n, i) in pairs {
            map[n as usize] = i;
        }
        FrMap::Dense(map)
    }

    fn get(&self, node: NodeId) -> Option<usize> {
        match *self {
            FrMap::One(n, i) => (n == node).then_some(i as usize),
            // The last entry wins, as it would in the table.
            FrMap::Few(ref v) => v.iter().rev().find(|p| p.0 == node).map(|p| p.1 as usize),
            FrMap::Dense(ref m) => m
                .get(node as usize)
                .filter(|&&i| i != NONE)
                .map(|&i| i as usize),
        }
    }
}

/// Deliveries to one (flow, receiver).
#[derive(Clone, Debug, Default)]
pub struct Delivered {
    pub received: u64,
    pub received_bytes: u64,
    /// RFC 3550 A.8 interarrival jitter, in nanoseconds.
    pub jitter_ns: f64,
    last_transit: Option<i64>,
    /// Delays, without the packet log.
    pub delay: DelayStats,
}

#[derive(Default)]
pub struct Recorder {
    pub flows: Vec<FlowMeta>,
    /// Per flow: its receivers' rows (empty for pooled flows).
    fr_of: Vec<FrMap>,
    /// Per flow: its one row, if pooled.
    pooled_fr: Vec<u32>,
    pub fr_flow: Vec<FlowId>,
    /// The receiver of each row ([`POOLED`] for a pooled row).
    pub fr_node: Vec<NodeId>,
    /// Receivers each row covers (1, or a pooled flow's count).
    pub fr_copies: Vec<u64>,
    // per flow
    pub sent: Vec<u64>,
    pub sent_bytes: Vec<u64>,
    /// Per (flow, receiver): what each delivery updates, kept together so
    /// that a delivery touches one place.
    pub got: Vec<Delivered>,
    pub dropped: Vec<[u64; DropReason::COUNT]>,
    /// Per (flow, receiver) but pooled rows: runs of lost sequence numbers.
    pub loss_runs: Vec<super::loss_runs::LossRuns>,
    /// Keep the per-delivery log (the packets table). Without it, delays
    /// are summarised as they arrive (`Delivered::delay`) and memory stays
    /// flat.
    pub packet_log: bool,
    /// Keep the applications' time series (the `*_series` tables).
    pub series_log: bool,
    /// Packets sent before this (ns) stay out of the flow summaries.
    pub warmup_ns: u64,
    /// Throughput windows [start, end) in ns, and bytes received per
    /// (flow, receiver) and window (row-major).
    pub windows: Vec<(u64, u64)>,
    pub window_bytes: Vec<u64>,
    // per-delivery log
    pub log_fr: Vec<u32>,
    /// The receiving node (a pooled row covers several).
    pub log_node: Vec<NodeId>,
    pub log_seq: Vec<u64>,
    pub log_size: Vec<u32>,
    pub log_sent: Vec<u64>,
    pub log_recv: Vec<u64>,
    // drop log (one row per dropped copy)
    pub dl_time: Vec<u64>,
    pub dl_flow: Vec<u32>,
    pub dl_seq: Vec<u64>,
    pub dl_id: Vec<u64>,
    pub dl_size: Vec<u32>,
    pub dl_reason: Vec<DropReason>,
    pub dl_site: Vec<DropSite>,
    // optional per-hop trace
    pub trace_on: bool,
    trace_limit: u64,
    /// The trace reached its limit and stopped.
    pub trace_truncated: bool,
    pub tr_time: Vec<u64>,
    pub tr_kind: Vec<u8>,
    /// Link-dir for link events, node for deliveries and node drops.
    pub tr_at: Vec<u32>,
    pub tr_id: Vec<u64>,
    pub tr_flow: Vec<u32>,
    pub tr_seq: Vec<u64>,
    pub tr_size: Vec<u32>,
    // queue samples
    pub qs_time: Vec<u64>,
    pub qs_ld: Vec<u32>,
    pub qs_packets: Vec<u64>,
    pub qs_bytes: Vec<u64>,
    /// The discipline's own sampled values (RED's average...), per sample.
    pub qs_values: Vec<Vec<(&'static str, f64)>>,
}

/// What a recorder keeps besides the counts.
#[derive(Clone, Debug, Default)]
pub struct RecorderOptions {
    /// The per-hop trace.
    pub trace: bool,
    /// Rows of the trace kept at most (limits.max_trace_rows).
    pub trace_limit: u64,
    /// The per-delivery log (the packets table).
    pub packet_log: bool,
    /// The applications' time series.
    pub series_log: bool,
    /// The warm-up left out of the flow summaries.
    pub warmup: SimTime,
    /// Throughput windows.
    pub windows: Vec<(SimTime, SimTime)>,
}

impl Recorder {
    pub fn new(flows: Vec<FlowMeta>, num_nodes: usize, opts: RecorderOptions) -> Self {
        let mut r = Recorder {
            trace_on: opts.trace,
            trace_limit: opts.trace_limit,
            packet_log: opts.packet_log,
            series_log: opts.series_log,
            warmup_ns: opts.warmup.as_nanos(),
            windows: (opts.windows.iter())
                .map(|(a, b)| (a.as_nanos(), b.as_nanos()))
                .collect(),
            ..Default::default()
        };
        for (f, meta) in flows.iter().enumerate() {
            match &meta.receivers {
                Receivers::Each(nodes) => {
                    let mut pairs = Vec::with_capacity(nodes.len());
                    for &n in nodes {
                        pairs.push((n, r.fr_flow.len() as u32));
                        r.fr_flow.push(f as FlowId);
                        r.fr_node.push(n);
                        r.fr_copies.push(1);
                    }
                    r.fr_of.push(FrMap::new(pairs, num_nodes));
                    r.pooled_fr.push(NONE);
                }
                Receivers::Pooled(count) => {
                    r.pooled_fr.push(r.fr_flow.len() as u32);
                    r.fr_flow.push(f as FlowId);
                    r.fr_node.push(POOLED);
                    r.fr_copies.push(*count as u64);
                    r.fr_of.push(FrMap::Few(Vec::new()));
                }
            }
        }
        let n_fr = r.fr_flow.len();
        r.sent = vec![0; flows.len()];
        r.sent_bytes = vec![0; flows.len()];
        r.got = vec![Delivered::default(); n_fr];
        r.dropped = vec![[0; DropReason::COUNT]; n_fr];
        r.loss_runs = vec![Default::default(); n_fr];
        r.window_bytes = vec![0; n_fr * r.windows.len()];
        r.flows = flows;
        r
    }

    /// Index of the (flow, receiver) pair, if `node` receives `flow`; a
    /// pooled flow's one row for any node.
    pub fn fr(&self, flow: FlowId, node: NodeId) -> Option<usize> {
        let pooled = *self.pooled_fr.get(flow as usize)?;
        if pooled != NONE {
            return Some(pooled as usize);
        }
        self.fr_of.get(flow as usize)?.get(node)
    }

    /// Copies of `flow` addressed to row `i`'s receivers.
    pub fn sent_to(&self, i: usize) -> u64 {
        self.sent[self.fr_flow[i] as usize] * self.fr_copies[i]
    }
    pub fn sent_bytes_to(&self, i: usize) -> u64 {
        self.sent_bytes[self.fr_flow[i] as usize] * self.fr_copies[i]
    }
    pub fn is_pooled(&self, i: usize) -> bool {
        self.fr_node[i] == POOLED
    }

    pub fn num_fr(&self) -> usize {
        self.fr_flow.len()
    }

    /// Whether `p` counts in the flow summaries (sent after the warm-up).
    pub fn measured(&self, p: &Packet) -> bool {
        p.created_at.as_nanos() >= self.warmup_ns
    }

    pub fn on_send(&mut self, p: &Packet) {
        if !self.measured(p) {
            return;
        }
        self.sent[p.flow as usize] += 1;
        self.sent_bytes[p.flow as usize] += p.size_bytes as u64;
    }

    /// A packet handed to an application on `node` at `now`.
    pub fn on_deliver(&mut self, p: &Packet, node: NodeId, now: SimTime) {
        if self.trace_on {
            self.trace(trace_kind::DELIVER, node, p, now);
        }
        let Some(i) = self.fr(p.flow, node) else {
            return;
        };
        if !self.measured(p) {
            return self.log(i, node, p, now, false);
        }
        let pooled = self.is_pooled(i);
        let g = &mut self.got[i];
        g.received += 1;
        g.received_bytes += p.size_bytes as u64;
        if !pooled {
            // RFC 3550 A.8: J += (|D(i-1,i)| - J) / 16 over transit times,
            // in arrival order.
            let transit = now.as_nanos() as i64 - p.created_at.as_nanos() as i64;
            if let Some(prev) = g.last_transit {
                let d = (transit - prev).abs() as f64;
                g.jitter_ns += (d - g.jitter_ns) / 16.0;
            }
            g.last_transit = Some(transit);
        }
        self.log(i, node, p, now, true);
    }

    /// The throughput windows and the packet log see every delivery; the
    /// delay summary only `measured` ones.
    fn log(&mut self, i: usize, node: NodeId, p: &Packet, now: SimTime, measured: bool) {
        let t = now.as_nanos();
        let nw = self.windows.len();
        for (w, &(a, b)) in self.windows.iter().enumerate() {
            if t >= a && t < b {
                self.window_bytes[i * nw + w] += p.size_bytes as u64;
            }
        }
        if !self.packet_log {
            if measured {
                self.got[i].delay.add(t - p.created_at.as_nanos());
            }
            return;
        }
        self.log_fr.push(i as u32);
        self.log_node.push(node);
        self.log_seq.push(p.seq);
        self.log_size.push(p.size_bytes);
        self.log_sent.push(p.created_at.as_nanos());
        self.log_recv.push(now.as_nanos());
    }

    /// A dropped packet copy; `receivers` are the receivers it would have
    /// reached.
    pub fn on_drop(
        &mut self,
        p: &Packet,
        reason: DropReason,
        site: DropSite,
        now: SimTime,
        receivers: &[NodeId],
    ) {
        if self.trace_on {
            let (kind, at) = match site {
                DropSite::Link(l) => (trace_kind::DROP, l),
                DropSite::Node(n) => (trace_kind::NODE_DROP, n),
            };
            self.trace(kind, at, p, now);
        }
        let counted = if self.measured(p) { receivers } else { &[] };
        for &n in counted {
            if let Some(i) = self.fr(p.flow, n) {
                self.dropped[i][reason.index()] += 1;
                if !self.is_pooled(i) {
                    self.loss_runs[i].add(p.seq);
                }
            }
        }
        if !self.packet_log {
            return;
        }
        self.dl_time.push(now.as_nanos());
        self.dl_flow.push(p.flow);
        self.dl_seq.push(p.seq);
        self.dl_id.push(p.id);
        self.dl_size.push(p.size_bytes);
        self.dl_reason.push(reason);
        self.dl_site.push(site);
    }

    #[inline]
    pub fn trace(&mut self, kind: u8, at: u32, p: &Packet, now: SimTime) {
        if self.tr_time.len() as u64 >= self.trace_limit {
            self.trace_truncated = true;
            return;
        }
        self.tr_time.push(now.as_nanos());
        self.tr_kind.push(kind);
        self.tr_at.push(at);
        self.tr_id.push(p.id);
        self.tr_flow.push(p.flow);
        self.tr_seq.push(p.seq);
        self.tr_size.push(p.size_bytes);
    }

    pub fn sample_queue(&mut self, now: SimTime, ld: LinkDirId, q: &crate::queue::Queue) {
        self.qs_time.push(now.as_nanos());
        self.qs_ld.push(ld);
        self.qs_packets.push(q.len_packets() as u64);
        self.qs_bytes.push(q.len_bytes());
        self.qs_values.push(q.discipline_sample());
    }

    pub fn total_dropped(&self, fr: usize) -> u64 {
        self.dropped[fr].iter().sum()
    }
}

#[cfg(test)]
mod fr_map_tests {
    use super::*;

    /// One receiver, a few, many: each form answers as a table over all
    /// nodes in which the last pair for a node wins.
    #[test]
    fn each_form_answers_as_the_table() {
        let nodes = 40;
        let lists: Vec<Vec<(NodeId, u32)>> = vec![
            vec![],
            vec![(7, 3)],
            vec![(7, 3), (9, 4), (7, 5)],
            (0..30).map(|k| ((k * 7 % nodes) as NodeId, k)).collect(),
        ];
        for pairs in lists {
            let mut table = vec![None; nodes as usize];
            for &(n, i) in &pairs {
                table[n as usize] = Some(i as usize);
            }
            let map = FrMap::new(pairs.clone(), nodes as usize);
            let form = match map {
                FrMap::One(..) => "one",
                FrMap::Few(_) => "few",
                FrMap::Dense(_) => "dense",
            };
            let want = match pairs.len() {
                1 => "one",
                n if n <= FEW_RECEIVERS => "few",
                _ => "dense",
            };
            assert_eq!(form, want, "{pairs:?}");
            for node in 0..nodes {
                assert_eq!(
                    map.get(node as NodeId),
                    table[node as usize],
                    "{pairs:?} {node}"
                );
            }
        }
    }
}
