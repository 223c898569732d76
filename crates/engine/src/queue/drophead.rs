//! Drop-head (drop-from-front) FIFO: when an arrival does not fit, the
//! oldest packets are discarded to make room for it.
//!
//! For real-time media the packets that wait longest are the ones most
//! likely to arrive too late to be played, and a TCP sender hears of a loss
//! one queueing delay sooner than with drop-tail (Lakshman, Neidhardt and
//! Ott, "The drop from front strategy in TCP and in TCP over ATM",
//! INFOCOM 1996). Linux offers it as `pfifo_head_drop`.
//!
//! Rule: an arrival larger than the byte limit on its own is dropped (it
//! could never fit); otherwise head packets are dropped, oldest first,
//! until the arrival fits, and the arrival joins the tail. Drops count as
//! `queue_overflow`: the queue was full, only the victim differs.

use super::droptail::check_limits;
use super::fifo::Fifo;
use super::spec::{QueueModel, QueueSite};
use super::{QueueCtx, QueueDiscipline};
use crate::net::{DropReason, PacketRef};
use crate::scenario::check::Checker;
use schemars::JsonSchema;
use serde::Deserialize;

/// FIFO that, when full, drops the oldest packets to make room for an
/// arrival. Give a packet limit, a byte limit, or both.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropHeadSpec {
    #[serde(default)]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
}

impl super::spec::Drops for DropHeadSpec {}

impl QueueModel for DropHeadSpec {
    fn validate(&self, path: &str, _rate_bps: f64, c: &mut Checker) {
        check_limits("drophead", path, self.limit_packets, self.limit_bytes, c);
    }
    fn build(&self, _site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        Box::new(DropHead::new(
            self.limit_packets.map(|x| x as usize),
            self.limit_bytes,
        ))
    }
}

pub struct DropHead {
    fifo: Fifo,
}

impl DropHead {
    pub fn new(limit_packets: Option<usize>, limit_bytes: Option<u64>) -> Self {
        DropHead {
            fifo: Fifo::new(limit_packets, limit_bytes),
        }
    }
}

impl QueueDiscipline for DropHead {
    fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
        let size_bytes = ctx.packets[pkt].size_bytes;
        let size = size_bytes as u64;
        if !self.fifo.could_ever_fit(size) {
            ctx.dropped.push((pkt, DropReason::QUEUE_OVERFLOW));
            return;
        }
        while !self.fifo.fits(size) {
            let Some(old) = self.fifo.pop_front() else {
                break;
            };
            ctx.dropped.push((old, DropReason::QUEUE_OVERFLOW));
        }
        self.fifo.push_back(pkt, size_bytes);
    }
    crate::fifo_queue_methods!();
    fn kind(&self) -> &'static str {
        "drophead"
    }
    fn passes_through_up_to(&self) -> Option<u64> {
        self.fifo.largest_fit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::pkt;
    use crate::queue::tests::TestQueue;
    use crate::sim::SimTime;

    fn drain(q: &mut TestQueue) -> Vec<u64> {
        let mut d = Vec::new();
        std::iter::from_fn(|| q.dequeue(SimTime(1), &mut d).map(|p| p.seq)).collect()
    }

    #[test]
    fn a_full_queue_keeps_the_newest_packets() {
        let mut q = TestQueue::new(Box::new(DropHead::new(Some(3), None)));
        let mut d = Vec::new();
        for s in 0..5 {
            q.enqueue(pkt(s, 100), SimTime(0), &mut d);
        }
        let dropped: Vec<u64> = d.iter().map(|(p, _)| p.seq).collect();
        assert_eq!(dropped, vec![0, 1], "the two oldest make room");
        assert!(d.iter().all(|(_, r)| *r == DropReason::QUEUE_OVERFLOW));
        assert_eq!(drain(&mut q), vec![2, 3, 4]);
        assert!(q.balanced());
    }

    #[test]
    fn byte_limit_drops_as_many_head_packets_as_needed() {
        let mut q = TestQueue::new(Box::new(DropHead::new(None, Some(300))));
        let mut d = Vec::new();
        for s in 0..3 {
            q.enqueue(pkt(s, 100), SimTime(0), &mut d);
        }
        q.enqueue(pkt(3, 250), SimTime(0), &mut d);
        let dropped: Vec<u64> = d.iter().map(|(p, _)| p.seq).collect();
        assert_eq!(
            dropped,
            vec![0, 1, 2],
            "250 bytes need room of three 100-byte packets"
        );
        q.enqueue(pkt(4, 50), SimTime(0), &mut d);
        assert_eq!(q.len_bytes(), 300);
        assert_eq!(drain(&mut q), vec![3, 4]);
    }

    #[test]
    fn an_arrival_larger_than_the_limit_is_itself_dropped() {
        let mut q = TestQueue::new(Box::new(DropHead::new(None, Some(300))));
        let mut d = Vec::new();
        q.enqueue(pkt(0, 100), SimTime(0), &mut d);
        q.enqueue(pkt(1, 400), SimTime(0), &mut d);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].0.seq, 1);
        assert_eq!(drain(&mut q), vec![0]);
        assert!(q.balanced());
    }
}
