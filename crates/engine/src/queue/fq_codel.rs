//! FQ-CoDel (RFC 8290): packets are hashed by flow (source, destination,
//! ports, transport) into `flows` queues, each managed by CoDel
//! (`codel.rs`) and served by deficit round robin with a `quantum` of
//! bytes. Queues that just became active go on the new-flows list, served
//! before the old-flows list (section 4.2), so sparse flows (a voice call,
//! DNS) see almost no queueing. When the total exceeds `limit_packets`
//! the head packet of the queue with the most bytes is dropped (section
//! 4.1, `queue_overflow`); CoDel's drops count as `codel`.
//!
//! The hash is a fixed function of the five-tuple salted per link
//! direction (deterministic for a seed); with the default 1024 queues,
//! distinct flows rarely share one.

use super::codel::{
    check_codel, default_interval_ms, default_target_ms, CodelParams, CodelState, TimedQueue,
};
use super::spec::{QueueModel, QueueSite};
use super::{QueueCtx, QueueDiscipline};
use crate::net::{DropReason, Packet, PacketRef, Transport};
use crate::scenario::check::Checker;
use crate::sim::SimTime;
use rand::RngExt;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::VecDeque;

fn default_limit() -> u64 {
    10_240
}
fn default_flows() -> u32 {
    1024
}
fn default_quantum() -> u32 {
    1514
}

/// FQ-CoDel (RFC 8290); defaults are the RFC's (Linux's).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FqCodelSpec {
    #[serde(default = "default_target_ms")]
    pub target_ms: f64,
    #[serde(default = "default_interval_ms")]
    pub interval_ms: f64,
    /// Packets held in all queues together.
    #[serde(default = "default_limit")]
    pub limit_packets: u64,
    /// Number of flow queues.
    #[serde(default = "default_flows")]
    pub flows: u32,
    /// Bytes a queue may send per round.
    #[serde(default = "default_quantum")]
    pub quantum_bytes: u32,
    #[serde(default)]
    pub ecn: bool,
}

impl super::spec::Drops for FqCodelSpec {
    const DROP_REASONS: &'static [DropReason] = &[super::codel::DROP];
}

impl QueueModel for FqCodelSpec {
    fn validate(&self, path: &str, _rate_bps: f64, c: &mut Checker) {
        check_codel(path, self.target_ms, self.interval_ms, c);
        c.at_least_one(
            format_args!("{path}.limit_packets"),
            Some(self.limit_packets),
        );
        if !(1..=65_536).contains(&self.flows) {
            let msg = format!("must be 1..=65536 (got {})", self.flows);
            c.err(format!("{path}.flows"), msg);
        }
        c.at_least_one(
            format_args!("{path}.quantum_bytes"),
            Some(self.quantum_bytes as u64),
        );
    }
    fn build(&self, site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        Box::new(FqCodel::new(self, site.stream().random::<u64>()))
    }
}

/// One SplitMix64 step with `x` mixed into the state `h`: a fixed,
/// well-mixed function of the tuple, folded over its fields.
fn splitmix_step(h: u64, x: u64) -> u64 {
    let mut z = (h ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

struct FlowQueue {
    q: TimedQueue,
    codel: CodelState,
    deficit: i64,
    /// On the new or the old list.
    listed: bool,
}

pub struct FqCodel {
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    quantum: i64,
    limit: usize,
    salt: u64,
    packets: usize,
    bytes: u64,
}

impl FqCodel {
    /// `spec`'s queues, hashing with `salt`.
    fn new(spec: &FqCodelSpec, salt: u64) -> Self {
        let params = CodelParams {
            target: SimTime::from_millis_f64(spec.target_ms),
            interval: SimTime::from_millis_f64(spec.interval_ms),
            mtu: spec.quantum_bytes as u64,
            ecn: spec.ecn,
        };
        FqCodel {
            queues: (0..spec.flows)
                .map(|_| FlowQueue {
                    q: TimedQueue::default(),
                    codel: CodelState::new(params),
                    deficit: 0,
                    listed: false,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            quantum: spec.quantum_bytes as i64,
            limit: spec.limit_packets as usize,
            salt,
            packets: 0,
            bytes: 0,
        }
    }

    /// The queue of a packet's five-tuple.
    fn queue_of(&self, p: &Packet) -> usize {
        let proto = match p.transport {
            Transport::Udp => 17u64,
            Transport::Tcp(_) => 6,
        };
        let dst = match p.dst {
            crate::net::Dest::Node(n) => n as u64,
            crate::net::Dest::Group { group, .. } => (1 << 32) | group as u64,
        };
        let tuple = [
            p.src as u64,
            dst,
            p.src_port as u64,
            p.dst_port as u64,
            proto,
        ];
        let h = tuple.into_iter().fold(self.salt, splitmix_step);
        (h % self.queues.len() as u64) as usize
    }

    /// Section 4.1: drops the head of the queue holding the most bytes.
    fn drop_from_fattest(&mut self, ctx: &mut QueueCtx<'_>) {
        let fattest = (0..self.queues.len())
            .max_by_key(|&i| (self.queues[i].q.bytes(), std::cmp::Reverse(i)))
            .expect("at least one queue");
        if let Some((_, p)) = self.queues[fattest].q.pop() {
            self.packets -= 1;
            self.bytes -= ctx.packets[p].size_bytes as u64;
            ctx.dropped.push((p, DropReason::QUEUE_OVERFLOW));
        }
    }

    /// The packet from queue `i` per CoDel, keeping the totals.
    fn codel_dequeue(&mut self, i: usize, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
        let fq = &mut self.queues[i];
        let before = (fq.q.len(), fq.q.bytes());
        let p = fq.codel.dequeue(&mut fq.q, ctx);
        // What left the flow's queue (the packet sent and CoDel's drops)
        // leaves the totals.
        self.packets -= before.0 - fq.q.len();
        self.bytes -= before.1 - fq.q.bytes();
        p
    }
}

impl QueueDiscipline for FqCodel {
    fn limit_packets(&self) -> Option<usize> {
        Some(self.limit)
    }
    fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
        let i = self.queue_of(&ctx.packets[pkt]);
        let size = ctx.packets[pkt].size_bytes;
        self.packets += 1;
        self.bytes += size as u64;
        let fq = &mut self.queues[i];
        fq.q.push(ctx.now, pkt, size);
        if !fq.listed {
            fq.listed = true;
            fq.deficit = self.quantum;
            self.new_flows.push_back(i);
        }
        if self.packets > self.limit {
            self.drop_from_fattest(ctx);
        }
    }

    /// Section 4.2: new flows first; a queue out of deficit gets a quantum
    /// and goes to the back of the old list; an empty new queue moves to
    /// the old list, an empty old queue leaves.
    fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
        loop {
            let (i, from_new) = match self.new_flows.front() {
                Some(&i) => (i, true),
                None => (*self.old_flows.front()?, false),
            };
            let list = if from_new {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };
            if self.queues[i].deficit <= 0 {
                self.queues[i].deficit += self.quantum;
                list.pop_front();
                self.old_flows.push_back(i);
                continue;
            }
            match self.codel_dequeue(i, ctx) {
                Some(p) => {
                    self.queues[i].deficit -= ctx.packets[p].size_bytes as i64;
                    return Some(p);
                }
                None => {
                    let list = if from_new {
                        &mut self.new_flows
                    } else {
                        &mut self.old_flows
                    };
                    list.pop_front();
                    if from_new && !self.old_flows.is_empty() {
                        self.old_flows.push_back(i);
                    } else {
                        self.queues[i].listed = false;
                    }
                }
            }
        }
    }
    fn len_packets(&self) -> usize {
        self.packets
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn held(&self) -> Vec<PacketRef> {
        self.queues.iter().flat_map(|f| f.q.held()).collect()
    }
    fn kind(&self) -> &'static str {
        "fq_codel"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::pkt;
    use crate::queue::tests::TestQueue;

    fn build(flows: u32, limit: u64) -> TestQueue {
        let spec = FqCodelSpec {
            target_ms: 5.0,
            interval_ms: 100.0,
            limit_packets: limit,
            flows,
            quantum_bytes: 1514,
            ecn: false,
        };
        TestQueue::new(crate::queue::tests::discipline(&spec, "l", 1_000_000))
    }

    /// SplitMix64's own outputs from state 0 (Vigna's splitmix64.c: the
    /// state advances by the golden gamma, then is mixed): x = 0 from
    /// state 0 gives the first, from state gamma the second, and x folds
    /// into the state before it advances.
    #[test]
    fn the_hash_step_is_splitmix64() {
        const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
        assert_eq!(splitmix_step(0, 0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix_step(GAMMA, 0), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(splitmix_step(0, GAMMA), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(
            splitmix_step(0, GAMMA.wrapping_mul(3)),
            0xf88b_b8a8_724c_81ec
        );
    }

    /// Every field of the five-tuple picks the queue: a group and the node
    /// of the same number, TCP and UDP, either port, the source.
    #[test]
    fn each_field_of_the_five_tuple_counts() {
        let spec: FqCodelSpec = serde_json::from_str("{}").unwrap();
        let fq = FqCodel::new(&spec, 0x5eed);
        let base = pkt(0, 100);
        let queue = |f: &dyn Fn(&mut Packet)| {
            let mut p = base.clone();
            f(&mut p);
            fq.queue_of(&p)
        };
        let q0 = queue(&|_| {});
        let mut groups = Vec::new();
        for n in 1..6u32 {
            let node = queue(&|p| p.dst = crate::net::Dest::Node(n));
            let group = queue(&|p| p.dst = crate::net::Dest::Group { group: n, tree: 0 });
            assert_ne!(node, group, "node and group {n}");
            groups.push(group);
        }
        groups.sort();
        groups.dedup();
        assert_eq!(groups.len(), 5, "each group its own queue");
        assert_ne!(queue(&|p| p.src = 7), q0);
        assert_ne!(queue(&|p| p.src_port = 7), q0);
        assert_ne!(queue(&|p| p.dst_port = 7), q0);
        assert_ne!(
            queue(&|p| p.transport = Transport::Tcp(Default::default())),
            q0
        );
        // The tuple alone: the same tuple, the same queue.
        assert_eq!(queue(&|p| p.seq = 99), q0);
    }

    /// Left out, the limit, queues and quantum are RFC 8290's (Linux's);
    /// the number of queues must be 1 to 65,536.
    #[test]
    fn the_defaults_are_the_rfcs_and_the_queues_are_bounded() {
        let spec: FqCodelSpec = serde_json::from_str("{}").unwrap();
        assert_eq!(
            (spec.limit_packets, spec.flows, spec.quantum_bytes),
            (10_240, 1024, 1514)
        );
        assert_eq!(
            (spec.target_ms, spec.interval_ms, spec.ecn),
            (5.0, 100.0, false)
        );
        let errors = |flows: u32| {
            let mut c = Checker::default();
            FqCodelSpec {
                flows,
                ..spec.clone()
            }
            .validate("q", 1e6, &mut c);
            c.errs.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        };
        assert!(errors(1).is_empty() && errors(65_536).is_empty());
        assert_eq!(errors(0), ["q.flows: must be 1..=65536 (got 0)"]);
        assert_eq!(errors(65_537), ["q.flows: must be 1..=65536 (got 65537)"]);
        let mut c = Checker::default();
        FqCodelSpec {
            limit_packets: 0,
            quantum_bytes: 0,
            ..spec.clone()
        }
        .validate("q", 1e6, &mut c);
        let paths: Vec<&str> = c.errs.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["q.limit_packets", "q.quantum_bytes"]);
        assert_eq!(FqCodel::new(&spec, 0).limit_packets(), Some(10_240));
        assert_eq!(FqCodel::new(&spec, 0).kind(), "fq_codel");
    }

    /// RFC 8290 4.2: a new flow's queue that empties while old flows wait
    /// goes to the back of the old list (it does not jump them again at
    /// once); one that empties with no old flow, or an old flow's, leaves
    /// the lists. The sparse flow's second packet arrives while it is
    /// still on the old list, so it waits for the bulk flow's turn; its
    /// third, after it left the lists, goes first again.
    #[test]
    fn an_emptied_new_queue_joins_the_old_list_behind_waiting_flows() {
        let mut q = build(1024, 10_240);
        let mut d = Vec::new();
        let mut order = Vec::new();
        for s in 0..20 {
            q.enqueue(from(1, s, 500), SimTime(0), &mut d);
        }
        let out = |q: &mut TestQueue, order: &mut Vec<u16>| {
            let p = q.dequeue(SimTime(0), &mut Vec::new()).expect("backlogged");
            order.push(p.src_port);
        };
        for _ in 0..5 {
            out(&mut q, &mut order); // the bulk flow's quantum, then to the old list
        }
        q.enqueue(from(2, 100, 100), SimTime(0), &mut d);
        out(&mut q, &mut order); // the sparse packet, from the new list
        out(&mut q, &mut order); // its queue empty: behind the bulk flow
        q.enqueue(from(2, 101, 100), SimTime(0), &mut d);
        for _ in 0..4 {
            out(&mut q, &mut order);
        }
        // Emptied on the old list, it left the lists: new again.
        q.enqueue(from(2, 102, 100), SimTime(0), &mut d);
        out(&mut q, &mut order);
        assert_eq!(order, [1, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 2]);
        assert!(d.is_empty());
        assert_eq!(
            (q.held().len(), q.len_packets()),
            (11, 11),
            "the bulk flow's 20 less 9"
        );
    }

    fn from(src_port: u16, seq: u64, size: u32) -> Packet {
        let mut p = pkt(seq, size);
        p.src_port = src_port;
        p
    }

    /// A sparse flow's packet arriving behind a bulk flow's backlog goes
    /// out as soon as the bulk flow's quantum is spent (the new-flows
    /// list), not after the backlog.
    #[test]
    fn a_sparse_flow_jumps_a_bulk_backlog() {
        let mut q = build(1024, 10_240);
        let mut d = Vec::new();
        for s in 0..50 {
            q.enqueue(from(1, s, 1500), SimTime(0), &mut d);
        }
        // The bulk flow has sent once, then a sparse packet arrives: the
        // bulk flow still has 14 bytes of its 1514-byte quantum, sends one
        // more packet, goes to the old list, and the sparse one is next.
        assert_eq!(q.dequeue(SimTime(0), &mut d).map(|p| p.src_port), Some(1));
        q.enqueue(from(2, 100, 100), SimTime(0), &mut d);
        let next: Vec<u64> = (0..3)
            .filter_map(|_| q.dequeue(SimTime(0), &mut d).map(|p| p.seq))
            .collect();
        assert_eq!(next, vec![1, 100, 2]);
        assert!(q.balanced());
    }

    /// Two backlogged flows of 1500- and 300-byte packets get equal bytes
    /// (within one quantum) however their packet sizes differ.
    #[test]
    fn backlogged_flows_share_bytes_equally() {
        let mut q = build(1024, 100_000);
        let mut d = Vec::new();
        for s in 0..2000 {
            q.enqueue(from(1, s, 1500), SimTime(0), &mut d);
            q.enqueue(from(2, 10_000 + s, 300), SimTime(0), &mut d);
        }
        let mut bytes = [0u64; 2];
        for _ in 0..1500 {
            let p = q.dequeue(SimTime(0), &mut d).expect("backlogged");
            bytes[(p.src_port - 1) as usize] += p.size_bytes as u64;
        }
        let diff = bytes[0].abs_diff(bytes[1]);
        assert!(diff <= 2 * 1514, "{bytes:?}");
        assert!(d.is_empty() && q.balanced());
    }

    #[test]
    fn over_the_limit_the_fattest_queue_loses_its_head() {
        let mut q = build(1024, 10);
        let mut d = Vec::new();
        for s in 0..8 {
            q.enqueue(from(1, s, 1500), SimTime(0), &mut d);
        }
        for s in 0..3 {
            q.enqueue(from(2, 100 + s, 100), SimTime(0), &mut d);
        }
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].0.src_port, d[0].0.seq),
            (1, 0),
            "the bulk flow's head"
        );
        assert_eq!(q.len_packets(), 10);
        assert_eq!(q.len_bytes(), 7 * 1500 + 300);
        assert!(q.balanced());
    }

    #[test]
    fn codel_drops_keep_the_totals() {
        let mut q = build(1, 10_000);
        let mut d = Vec::new();
        for s in 0..200 {
            q.enqueue(from(1, s, 1000), SimTime(0), &mut d);
        }
        let mut t = 0;
        while q.dequeue(SimTime::from_millis(t), &mut d).is_some() {
            t += 10;
        }
        assert!(!d.is_empty() && d.iter().all(|x| x.1 == crate::queue::codel::DROP));
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
        assert!(q.balanced());
    }
}
