//! Deterministic losses: by arrival ordinal at the attachment point, by
//! (flow, sequence number), or by time window.

use super::LossModel;
use crate::net::{FlowId, Packet};
use crate::sim::SimTime;
use std::collections::HashSet;

pub struct ExplicitLoss {
    /// 0-based ordinals of packets crossing this point.
    ordinals: HashSet<u64>,
    /// (flow, seq) pairs.
    flow_seqs: HashSet<(FlowId, u64)>,
    /// Half-open windows [start, end) in which every packet is lost.
    windows: Vec<(SimTime, SimTime)>,
    seen: u64,
}

impl ExplicitLoss {
    pub fn new(
        ordinals: Vec<u64>,
        flow_seqs: Vec<(FlowId, u64)>,
        windows: Vec<(SimTime, SimTime)>,
    ) -> Self {
        ExplicitLoss {
            ordinals: ordinals.into_iter().collect(),
            flow_seqs: flow_seqs.into_iter().collect(),
            windows,
            seen: 0,
        }
    }
}

impl LossModel for ExplicitLoss {
    fn is_lost(&mut self, pkt: &Packet, now: SimTime) -> bool {
        let n = self.seen;
        self.seen += 1;
        self.ordinals.contains(&n)
            || self.flow_seqs.contains(&(pkt.flow, pkt.seq))
            || self.windows.iter().any(|&(a, b)| now >= a && now < b)
    }
    fn kind(&self) -> &'static str {
        "explicit"
    }
}
