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
use crate::net::{DropReason, DropReasons, FlowId, LinkDirId, NodeId, Packet};
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

/// A flow's rows: where a delivery of it to a node is counted. Held in
/// one small table over flows (12 bytes a flow) so that a delivery's
/// look-up reads one entry; only a flow with several receivers goes on to
/// its receivers' map.
#[derive(Clone, Copy)]
enum FlowRows {
    /// A unicast flow: its one receiver and row.
    One { node: NodeId, row: u32 },
    /// A pooled flow: its one row, for any node.
    Pooled(u32),
    /// Several receivers: the index of their map in `Recorder::maps`.
    Many(u32),
}

/// Several receivers -> row index: a short list for a flow with a few
/// receivers (a HACK), a table over all nodes for one with many (a
/// multicast flow). A table per flow would take flows x nodes entries:
/// 400 MB for 10,000 unicast flows among 10,000 nodes.
enum FrMap {
    Few(Vec<(NodeId, u32)>),
    Dense(Vec<u32>),
}

/// Up to this many receivers, a list (searched linearly).
const FEW_RECEIVERS: usize = 16;

impl FrMap {
    fn new(pairs: Vec<(NodeId, u32)>, num_nodes: usize) -> Self {
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
            // The last entry wins, as it would in the table.
            FrMap::Few(ref v) => v.iter().rev().find(|p| p.0 == node).map(|p| p.1 as usize),
            FrMap::Dense(ref m) => m
                .get(node as usize)
                .filter(|&&i| i != NONE)
                .map(|&i| i as usize),
        }
    }
}

/// Deliveries to one (flow, receiver): everything a delivery updates, in
/// two cache lines of their own (with hundreds of flows a delivery's row
/// is rarely in the nearest cache, and a row straddling three lines cost a
/// third more misses).
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct Delivered {
    pub received: u64,
    pub received_bytes: u64,
    /// RFC 3550 A.8 interarrival jitter, in nanoseconds.
    pub jitter_ns: f64,
    /// The last packet's transit time (ns), NO_TRANSIT before the first.
    last_transit: i64,
    /// Delays, without the packet log.
    pub delay: DelayStats,
}

/// `last_transit` before the first delivery (a transit time is a
/// difference of two u64 times below 2^63, never this).
const NO_TRANSIT: i64 = i64::MIN;

impl Default for Delivered {
    fn default() -> Self {
        Delivered {
            received: 0,
            received_bytes: 0,
            jitter_ns: 0.0,
            last_transit: NO_TRANSIT,
            delay: DelayStats::default(),
        }
    }
}

/// Packets of a flow sent (one copy per flow, however many receivers).
#[derive(Clone, Copy, Debug, Default)]
struct Sent {
    packets: u64,
    bytes: u64,
}

#[derive(Default)]
pub struct Recorder {
    pub flows: Vec<FlowMeta>,
    /// Per flow: its rows.
    rows_of: Vec<FlowRows>,
    /// The receivers' maps of flows with several receivers.
    maps: Vec<FrMap>,
    pub fr_flow: Vec<FlowId>,
    /// The receiver of each row ([`POOLED`] for a pooled row).
    pub fr_node: Vec<NodeId>,
    /// Receivers each row covers (1, or a pooled flow's count).
    pub fr_copies: Vec<u64>,
    /// Per flow: what it sent.
    sent: Vec<Sent>,
    /// Per (flow, receiver): what each delivery updates, kept together so
    /// that a delivery touches one place.
    pub got: Vec<Delivered>,
    /// The reasons this run counts (the columns' order).
    pub reasons: DropReasons,
    /// Per (flow, receiver), row-major: drops by reason (see `reasons`).
    dropped: Vec<u64>,
    /// Per (flow, receiver) but pooled rows: runs of lost sequence numbers.
    pub loss_runs: Vec<super::loss_runs::LossRuns>,
    /// In a run split into partitions: per row, whether its receiver is in
    /// another partition (empty otherwise). A loss of such a row goes to
    /// `foreign_losses`, to be counted into its runs by the receiver's
    /// partition, where its deliveries are (see `merge`).
    pub foreign_rows: Vec<bool>,
    /// Losses (row, sequence number) for other partitions' rows.
    pub foreign_losses: Vec<(u32, u64)>,
    /// Keep the per-delivery log (the packets table). Without it, delays
    /// are summarised as they arrive (`Delivered::delay`) and memory stays
    /// flat.
    pub packet_log: bool,
    /// Keep the applications' time series (the `*_series` tables).
    pub series_log: bool,
    /// Rows of each time series kept at most (limits.max_series_rows); a
    /// series found full at the end sets `series_truncated`.
    pub series_rows: u64,
    pub series_truncated: bool,
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
    /// The reason's position in `reasons`.
    pub dl_reason: Vec<u8>,
    pub dl_site: Vec<DropSite>,
    // optional per-hop trace
    pub trace_on: bool,
    trace_limit: u64,
    queue_sample_limit: u64,
    /// The queue samples reached their limit and stopped.
    pub queue_samples_truncated: bool,
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
    /// Rows of the queue samples kept at most (limits.max_queue_sample_rows).
    pub queue_sample_limit: u64,
    /// The per-delivery log (the packets table).
    pub packet_log: bool,
    /// The applications' time series.
    pub series_log: bool,
    /// Rows of each time series kept at most (limits.max_series_rows).
    pub series_rows: u64,
    /// The warm-up left out of the flow summaries.
    pub warmup: SimTime,
    /// Throughput windows.
    pub windows: Vec<(SimTime, SimTime)>,
    /// The drop reasons the run may give (the network's and the queue
    /// disciplines').
    pub reasons: DropReasons,
}

impl Recorder {
    pub fn new(flows: Vec<FlowMeta>, num_nodes: usize, opts: RecorderOptions) -> Self {
        let mut r = Recorder {
            reasons: opts.reasons,
            trace_on: opts.trace,
            trace_limit: opts.trace_limit,
            queue_sample_limit: opts.queue_sample_limit,
            queue_samples_truncated: false,
            packet_log: opts.packet_log,
            series_log: opts.series_log,
            series_rows: opts.series_rows,
            series_truncated: false,
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
                    let rows = match pairs[..] {
                        [(node, row)] => FlowRows::One { node, row },
                        _ => {
                            r.maps.push(FrMap::new(pairs, num_nodes));
                            FlowRows::Many(r.maps.len() as u32 - 1)
                        }
                    };
                    r.rows_of.push(rows);
                }
                Receivers::Pooled(count) => {
                    r.rows_of.push(FlowRows::Pooled(r.fr_flow.len() as u32));
                    r.fr_flow.push(f as FlowId);
                    r.fr_node.push(POOLED);
                    r.fr_copies.push(*count as u64);
                }
            }
        }
        let n_fr = r.fr_flow.len();
        r.sent = vec![Sent::default(); flows.len()];
        r.got = vec![Delivered::default(); n_fr];
        r.dropped = vec![0; n_fr * r.reasons.len()];
        r.loss_runs = vec![Default::default(); n_fr];
        r.window_bytes = vec![0; n_fr * r.windows.len()];
        r.flows = flows;
        r
    }

    /// Index of the (flow, receiver) pair, if `node` receives `flow`; a
    /// pooled flow's one row for any node.
    pub fn fr(&self, flow: FlowId, node: NodeId) -> Option<usize> {
        self.row(flow, node).map(|(i, _)| i)
    }

    /// The row of (`flow`, `node`) and whether it is pooled.
    #[inline]
    fn row(&self, flow: FlowId, node: NodeId) -> Option<(usize, bool)> {
        match *self.rows_of.get(flow as usize)? {
            FlowRows::One { node: n, row } => (n == node).then_some((row as usize, false)),
            FlowRows::Pooled(row) => Some((row as usize, true)),
            FlowRows::Many(m) => self.maps[m as usize].get(node).map(|i| (i, false)),
        }
    }

    /// Copies of `flow` addressed to row `i`'s receivers.
    pub fn sent_to(&self, i: usize) -> u64 {
        self.sent[self.fr_flow[i] as usize].packets * self.fr_copies[i]
    }
    pub fn sent_bytes_to(&self, i: usize) -> u64 {
        self.sent[self.fr_flow[i] as usize].bytes * self.fr_copies[i]
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
        let sent = &mut self.sent[p.flow as usize];
        sent.packets += 1;
        sent.bytes += p.size_bytes as u64;
    }

    /// A packet handed to an application on `node` at `now`.
    pub fn on_deliver(&mut self, p: &Packet, node: NodeId, now: SimTime) {
        if self.trace_on {
            self.trace(trace_kind::DELIVER, node, p, now);
        }
        let Some((i, pooled)) = self.row(p.flow, node) else {
            return;
        };
        if !self.measured(p) {
            return self.log(i, node, p, now, false);
        }
        let g = &mut self.got[i];
        g.received += 1;
        g.received_bytes += p.size_bytes as u64;
        if !pooled {
            // RFC 3550 A.8: J += (|D(i-1,i)| - J) / 16 over transit times,
            // in arrival order.
            let transit = now.as_nanos() as i64 - p.created_at.as_nanos() as i64;
            if g.last_transit != NO_TRANSIT {
                g.jitter_ns =
                    crate::sim::jitter::jitter_step(g.jitter_ns, transit.abs_diff(g.last_transit));
            }
            g.last_transit = transit;
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
        let k = self.reasons.index(reason);
        let counted = if self.measured(p) { receivers } else { &[] };
        for &n in counted {
            if let Some((i, pooled)) = self.row(p.flow, n) {
                self.dropped[i * self.reasons.len() + k] += 1;
                if !pooled {
                    if self.foreign_rows.get(i) == Some(&true) {
                        self.foreign_losses.push((i as u32, p.seq));
                    } else {
                        self.loss_runs[i].add(p.seq);
                    }
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
        self.dl_reason.push(k as u8);
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

    /// One row of the queue samples (the queue's packets and bytes, its
    /// discipline's own sampled values); false once they are at their limit
    /// (the row is not kept, and sampling can stop).
    pub fn sample_queue(
        &mut self,
        now: SimTime,
        ld: LinkDirId,
        (packets, bytes): (u64, u64),
        values: Vec<(&'static str, f64)>,
    ) -> bool {
        if self.qs_time.len() as u64 >= self.queue_sample_limit {
            self.queue_samples_truncated = true;
            return false;
        }
        self.qs_time.push(now.as_nanos());
        self.qs_ld.push(ld);
        self.qs_packets.push(packets);
        self.qs_bytes.push(bytes);
        self.qs_values.push(values);
        true
    }

    /// Takes in what another partition of a split run recorded (the same
    /// flows and rows, built from the same scenario). `theirs[i]` says
    /// that row `i`'s receiver is in `o`'s partition: its deliveries, delay
    /// summary, jitter and loss runs are `o`'s. A pooled row's deliveries
    /// add up. Counts add up (each packet
    /// is counted once, where it was sent, dropped or delivered); the logs
    /// interleave by time, then within the row limits.
    pub fn absorb(&mut self, mut o: Recorder, theirs: &[bool]) {
        use super::merge::{order, truncate_fields, weave_fields};
        for (a, b) in self.sent.iter_mut().zip(&o.sent) {
            a.packets += b.packets;
            a.bytes += b.bytes;
        }
        for (i, &t) in theirs.iter().enumerate() {
            if self.fr_node[i] == POOLED {
                // Copies to any receiver, in any partition: the counts and
                // delays add up (jitter and loss runs are not kept).
                let (a, b) = (&mut self.got[i], &o.got[i]);
                a.received += b.received;
                a.received_bytes += b.received_bytes;
                a.delay.absorb(&b.delay);
            } else if t {
                std::mem::swap(&mut self.got[i], &mut o.got[i]);
                std::mem::swap(&mut self.loss_runs[i], &mut o.loss_runs[i]);
            }
        }
        for (a, b) in self.dropped.iter_mut().zip(&o.dropped) {
            *a += b;
        }
        for (a, b) in self.window_bytes.iter_mut().zip(&o.window_bytes) {
            *a += b;
        }
        self.series_truncated |= o.series_truncated;
        let by = order(&self.log_recv, &o.log_recv);
        weave_fields!(
            &by,
            self,
            o,
            [log_fr, log_node, log_seq, log_size, log_sent, log_recv]
        );
        let by = order(&self.dl_time, &o.dl_time);
        weave_fields!(
            &by,
            self,
            o,
            [dl_time, dl_flow, dl_seq, dl_id, dl_size, dl_reason, dl_site]
        );
        let by = order(&self.tr_time, &o.tr_time);
        weave_fields!(
            &by,
            self,
            o,
            [tr_time, tr_kind, tr_at, tr_id, tr_flow, tr_seq, tr_size]
        );
        // Each partition kept its first rows up to the limit, so the first
        // rows of the merge up to the limit are all there.
        self.trace_truncated |= o.trace_truncated;
        if self.tr_time.len() as u64 > self.trace_limit {
            let n = self.trace_limit as usize;
            truncate_fields!(
                self,
                n,
                [tr_time, tr_kind, tr_at, tr_id, tr_flow, tr_seq, tr_size]
            );
            self.trace_truncated = true;
        }
        // One instant's samples go in link-dir order, as one recorder
        // takes them.
        let key =
            |t: &[u64], l: &[u32]| t.iter().copied().zip(l.iter().copied()).collect::<Vec<_>>();
        let by = order(&key(&self.qs_time, &self.qs_ld), &key(&o.qs_time, &o.qs_ld));
        weave_fields!(
            &by,
            self,
            o,
            [qs_time, qs_ld, qs_packets, qs_bytes, qs_values]
        );
        self.queue_samples_truncated |= o.queue_samples_truncated;
        if self.qs_time.len() as u64 > self.queue_sample_limit {
            let n = self.queue_sample_limit as usize;
            truncate_fields!(self, n, [qs_time, qs_ld, qs_packets, qs_bytes, qs_values]);
            self.queue_samples_truncated = true;
        }
    }

    pub fn total_dropped(&self, fr: usize) -> u64 {
        self.dropped_by_reason(fr).iter().sum()
    }

    /// Row `fr`'s drops, one count per reason in `reasons`.
    pub fn dropped_by_reason(&self, fr: usize) -> &[u64] {
        let n = self.reasons.len();
        &self.dropped[fr * n..(fr + 1) * n]
    }
}

#[cfg(test)]
mod fr_map_tests {
    use super::*;

    /// A few receivers, many: each form answers as a table over all
    /// nodes in which the last pair for a node wins.
    #[test]
    fn each_form_answers_as_the_table() {
        let nodes = 40;
        let lists: Vec<Vec<(NodeId, u32)>> = vec![
            vec![],
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
                FrMap::Few(_) => "few",
                FrMap::Dense(_) => "dense",
            };
            let want = match pairs.len() {
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

    fn meta(receivers: Receivers) -> FlowMeta {
        FlowMeta {
            name: String::new(),
            kind: "cbr",
            src: 0,
            receivers,
            start: SimTime::ZERO,
            stop: SimTime::ZERO,
        }
    }

    /// A delivery's row is two whole cache lines.
    #[test]
    fn a_row_is_two_lines() {
        assert_eq!(std::mem::size_of::<Delivered>(), 128);
        assert_eq!(std::mem::align_of::<Delivered>(), 64);
    }

    /// A recorder's rows: a unicast flow's for its receiver only, a pooled
    /// flow's for any node, a multicast flow's per member; rows numbered
    /// in flow order; deliveries counted in the row they name.
    #[test]
    fn rows_by_flow_and_node() {
        let flows = vec![
            meta(Receivers::Each(vec![5])),
            meta(Receivers::Pooled(3)),
            meta(Receivers::Each(vec![2, 4, 6])),
            meta(Receivers::Each((0..20).collect())),
            meta(Receivers::Each(vec![9])),
        ];
        let mut r = Recorder::new(flows, 30, RecorderOptions::default());
        assert_eq!((r.fr(0, 5), r.fr(0, 4)), (Some(0), None));
        assert_eq!((r.fr(1, 0), r.fr(1, 29)), (Some(1), Some(1)));
        assert!(r.is_pooled(1) && !r.is_pooled(0));
        assert_eq!(
            (r.fr(2, 2), r.fr(2, 6), r.fr(2, 5)),
            (Some(2), Some(4), None)
        );
        assert_eq!(
            (r.fr(3, 0), r.fr(3, 19), r.fr(3, 20)),
            (Some(5), Some(24), None)
        );
        assert_eq!((r.fr(4, 9), r.fr(5, 9)), (Some(25), None));
        let mut p = crate::net::packet::test_packet(4, 0, 100);
        p.created_at = SimTime::ZERO;
        r.on_send(&p);
        r.on_deliver(&p, 9, SimTime(1_000));
        p.created_at = SimTime(500);
        r.on_deliver(&p, 9, SimTime(2_000));
        r.on_deliver(&p, 8, SimTime(2_000)); // not a receiver of flow 4
        let g = &r.got[25];
        assert_eq!((g.received, g.received_bytes), (2, 200));
        // Transit 1000 then 1500: J = |1500 - 1000| / 16.
        assert_eq!(g.jitter_ns, 500.0 / 16.0);
        assert_eq!((r.sent_to(25), r.sent_bytes_to(25)), (1, 100));
        assert_eq!(r.got.iter().map(|g| g.received).sum::<u64>(), 2);
        // A pooled row counts a copy per receiver.
        r.on_send(&crate::net::packet::test_packet(1, 0, 100));
        assert_eq!((r.sent_to(1), r.sent_bytes_to(1)), (3, 300));
    }

    /// Queue samples stop at their limit, which says the table was cut.
    #[test]
    fn queue_samples_stop_at_their_limit() {
        let opts = RecorderOptions {
            queue_sample_limit: 2,
            ..RecorderOptions::default()
        };
        let mut r = Recorder::new(vec![meta(Receivers::Each(vec![1]))], 2, opts);
        assert!(r.sample_queue(SimTime(10), 3, (4, 500), vec![("p", 0.5)]));
        assert!(!r.queue_samples_truncated);
        assert!(r.sample_queue(SimTime(20), 1, (0, 0), vec![]));
        assert!(!r.sample_queue(SimTime(30), 3, (9, 900), vec![]));
        assert!(r.queue_samples_truncated);
        assert_eq!(
            (r.qs_time.as_slice(), r.qs_ld.as_slice()),
            (&[10, 20][..], &[3, 1][..])
        );
        assert_eq!(
            (r.qs_packets.as_slice(), r.qs_bytes.as_slice()),
            (&[4, 0][..], &[500, 0][..])
        );
        assert_eq!(r.qs_values, vec![vec![("p", 0.5)], vec![]]);
    }
}
