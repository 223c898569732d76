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
        let params = CodelParams {
            target: SimTime::from_millis_f64(self.target_ms),
            interval: SimTime::from_millis_f64(self.interval_ms),
            mtu: self.quantum_bytes as u64,
            ecn: self.ecn,
        };
        Box::new(FqCodel {
            queues: (0..self.flows)
                .map(|_| FlowQueue {
                    q: TimedQueue::default(),
                    codel: CodelState::new(params),
                    deficit: 0,
                    listed: false,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            quantum: self.quantum_bytes as i64,
            limit: self.limit_packets as usize,
            salt: site.stream().random::<u64>(),
            packets: 0,
            bytes: 0,
        })
    }
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
        let mut h = self.salt;
        for x in [
            p.src as u64,
            dst,
            p.src_port as u64,
            p.dst_port as u64,
            proto,
        ] {
            // SplitMix64 steps: a fixed, well-mixed function of the tuple.
            h = (h ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
            h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            h ^= h >> 31;
        }
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
    use crate::sim::RngStreams;

    fn build(flows: u32, limit: u64) -> TestQueue {
        let spec = FqCodelSpec {
            target_ms: 5.0,
            interval_ms: 100.0,
            limit_packets: limit,
            flows,
            quantum_bytes: 1514,
            ecn: false,
        };
        let rng = RngStreams::new(1, 0);
        let site = QueueSite {
            rng: &rng,
            name: "l",
            rate_bps: 1_000_000,
        };
        TestQueue::new(spec.build(&site))
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
