//! Drop-tail FIFO with a packet limit, a byte limit, or both.

use super::fifo::Fifo;
use super::spec::{QueueModel, QueueSite};
use super::{QueueCtx, QueueDiscipline};
use crate::net::{DropReason, PacketRef};
use crate::scenario::check::Checker;
use schemars::JsonSchema;
use serde::Deserialize;

/// FIFO that drops arrivals when full. Give a packet limit, a byte limit,
/// or both (the first reached applies).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropTailSpec {
    #[serde(default)]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
}

/// Checks of a FIFO's limits, shared by the FIFO disciplines.
pub fn check_limits(
    kind: &str,
    path: &str,
    limit_packets: Option<u64>,
    limit_bytes: Option<u64>,
    c: &mut Checker,
) {
    if limit_packets.is_none() && limit_bytes.is_none() {
        c.err(path, format!("{kind} needs limit_packets or limit_bytes"));
    }
    c.at_least_one(format_args!("{path}.limit_packets"), limit_packets);
    c.at_least_one(format_args!("{path}.limit_bytes"), limit_bytes);
}

impl super::spec::Drops for DropTailSpec {}

impl QueueModel for DropTailSpec {
    fn validate(&self, path: &str, _rate_bps: f64, c: &mut Checker) {
        check_limits("droptail", path, self.limit_packets, self.limit_bytes, c);
    }
    fn build(&self, _site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        Box::new(DropTail::new(
            self.limit_packets.map(|x| x as usize),
            self.limit_bytes,
        ))
    }
}

pub struct DropTail {
    fifo: Fifo,
}

impl DropTail {
    pub fn new(limit_packets: Option<usize>, limit_bytes: Option<u64>) -> Self {
        DropTail {
            fifo: Fifo::new(limit_packets, limit_bytes),
        }
    }
    pub fn packets(limit: usize) -> Self {
        Self::new(Some(limit), None)
    }
    pub fn bytes(limit: u64) -> Self {
        Self::new(None, Some(limit))
    }
}

impl QueueDiscipline for DropTail {
    fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
        let size = ctx.packets[pkt].size_bytes;
        if self.fifo.fits(size as u64) {
            self.fifo.push_back(pkt, size);
        } else {
            ctx.dropped.push((pkt, DropReason::QUEUE_OVERFLOW));
        }
    }
    crate::fifo_queue_methods!();
    fn kind(&self) -> &'static str {
        "droptail"
    }
    fn passes_through_up_to(&self) -> Option<u64> {
        // An empty FIFO accepts any packet within its limits.
        self.fifo.largest_fit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::pkt;
    use crate::queue::tests::TestQueue;
    use crate::sim::SimTime;

    #[test]
    fn fifo_order_and_byte_limit() {
        let mut q = TestQueue::new(Box::new(DropTail::bytes(250)));
        let mut d = Vec::new();
        for s in 0..3 {
            q.enqueue(pkt(s, 100), SimTime(0), &mut d);
        }
        assert_eq!(d.len(), 1, "third 100-byte packet exceeds 250 bytes");
        q.enqueue(pkt(9, 50), SimTime(0), &mut d);
        assert_eq!(q.len_bytes(), 250);
        let order: Vec<u64> =
            std::iter::from_fn(|| q.dequeue(SimTime(1), &mut d).map(|p| p.seq)).collect();
        assert_eq!(order, vec![0, 1, 9]);
        assert!(q.balanced());
    }
}
