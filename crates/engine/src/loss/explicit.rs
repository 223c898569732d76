//! Deterministic losses: by arrival ordinal at the attachment point, by
//! (flow, sequence number), or by time window.

use super::spec::LossModelSpec;
use super::LossModel;
use crate::net::{FlowId, Packet};
use crate::scenario::check::{Checker, Scope};
use crate::sim::{SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashSet;

/// Deterministic losses.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplicitLossSpec {
    /// 0-based ordinals of the packets crossing this point.
    #[serde(default)]
    pub ordinals: Vec<u64>,
    /// Specific packets by flow name and sequence number.
    #[serde(default)]
    pub packets: Vec<FlowSeq>,
    /// Time windows [start_s, end_s) in which every packet is lost; the
    /// time is when the packet reaches the loss point (the far end of a
    /// link, or the receiving node).
    #[serde(default)]
    pub windows_s: Vec<[f64; 2]>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSeq {
    pub flow: String,
    pub seq: u64,
}

impl LossModelSpec for ExplicitLossSpec {
    fn validate(&self, path: &str, scope: &Scope<'_>, c: &mut Checker) {
        for (i, p) in self.packets.iter().enumerate() {
            scope.flow(c, format_args!("{path}.packets[{i}].flow"), &p.flow);
        }
        for (i, w) in self.windows_s.iter().enumerate() {
            c.window(format_args!("{path}.windows_s[{i}]"), w);
        }
    }
    fn build(&self, _rng: SimRng, flow_id: &dyn Fn(&str) -> u32) -> Box<dyn LossModel> {
        Box::new(ExplicitLoss::new(
            self.ordinals.clone(),
            self.packets
                .iter()
                .map(|p| (flow_id(&p.flow), p.seq))
                .collect(),
            self.windows_s
                .iter()
                .map(|w| (SimTime::from_secs_f64(w[0]), SimTime::from_secs_f64(w[1])))
                .collect(),
        ))
    }
}

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
}
