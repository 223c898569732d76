//! The scenario document: the single source of truth for the schema.
//!
//! This file holds what every scenario has (nodes, links, groups, routing,
//! measurement) and the lists of models; each model's own spec type lives
//! beside its code (queue disciplines in `queue/`, loss models in `loss/`,
//! flow kinds in `app/`, session protocols in `app/<protocol>/spec.rs`).
//! Units are in the field names (`_s`, `_ms`, `_bps`, `_bytes`). Defaults
//! are stated on each field and in docs/scenario.md.

use crate::app::flow::FlowSpec;
use crate::app::rtp::RtpSessionSpec;
use crate::app::session::SessionModel;
use crate::loss::LossSpec;
use crate::net::dynamics::spec::{DirDynamics, JitterSpec, OutageSpec, Schedule, TraceSpec};
use crate::queue::QueueSpec;
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::Deserialize;

/// A complete simulation scenario.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used in result files.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Simulated time to run, in seconds.
    pub duration_s: f64,
    /// Nodes (hosts and routers alike).
    pub nodes: Vec<NodeSpec>,
    /// Full-duplex point-to-point links.
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// Multicast groups.
    #[serde(default)]
    pub groups: Vec<GroupSpec>,
    /// Traffic flows.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// RTP sessions (media and RTCP among a set of members).
    #[serde(default)]
    pub rtp_sessions: Vec<RtpSessionSpec>,
    /// RMTP sessions (reliable multicast with designated receivers).
    #[serde(default)]
    pub rmtp_sessions: Vec<crate::app::rmtp::RmtpSessionSpec>,
    #[serde(default)]
    pub routing: RoutingSpec,
    #[serde(default)]
    pub measure: MeasureSpec,
    /// Limits on the run's size (docs/scenario.md, "Limits").
    #[serde(default)]
    pub limits: super::limits::LimitsSpec,
    /// Splitting the run over threads (docs/scenario.md, "Parallel runs").
    #[serde(default)]
    pub parallel: crate::world::partition::ParallelSpec,
}

/// A session of some protocol: where it sits in the document, its index
/// among its protocol's sessions, and the model.
pub struct SessionRef<'a> {
    pub path: String,
    pub index: usize,
    pub model: &'a dyn SessionModel,
}

impl Scenario {
    /// Forgets what only building the world reads (nodes, links, groups,
    /// flows, sessions, routes), keeping the name, duration, measurement
    /// and limits that the run's output reads. The memory goes back to the
    /// allocator for the run to reuse: with hundreds of flows the document
    /// is a megabyte, and a fresh process pays for every page it touches.
    pub fn keep_only_run_settings(&mut self) {
        self.nodes = Vec::new();
        self.links = Vec::new();
        self.groups = Vec::new();
        self.flows = Vec::new();
        self.rtp_sessions = Vec::new();
        self.rmtp_sessions = Vec::new();
        self.routing = RoutingSpec::default();
    }

    /// Every session, protocol by protocol. A new session protocol adds its
    /// list to [`Scenario`] and one line here.
    pub fn sessions(&self) -> Vec<SessionRef<'_>> {
        let mut out = Vec::new();
        list(&mut out, "rtp_sessions", &self.rtp_sessions);
        list(&mut out, "rmtp_sessions", &self.rmtp_sessions);
        out
    }

    /// The name of every flow in recorder-id order: each scenario flow (and
    /// the flows it derives, such as "<tcp flow>/ack"), then each session's.
    pub fn flow_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for f in &self.flows {
            names.extend(f.flow_names());
        }
        for s in self.sessions() {
            names.extend(s.model.flow_names());
        }
        names
    }

    /// How many flows `flow_names` gives, without making the names (the
    /// scenario flows' are counted; sessions, few, are named).
    pub fn flow_count(&self) -> usize {
        let sessions: usize = (self.sessions().iter())
            .map(|s| s.model.flow_names().len())
            .sum();
        self.flows.iter().map(|f| f.flow_count()).sum::<usize>() + sessions
    }
}

fn list<'a, T: SessionModel>(out: &mut Vec<SessionRef<'a>>, field: &str, items: &'a [T]) {
    for (index, model) in items.iter().enumerate() {
        out.push(SessionRef {
            path: format!("{field}[{index}]"),
            index,
            model,
        });
    }
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique node name.
    pub name: String,
    /// Loss applied to packets delivered to applications on this node
    /// (a receiver's own error model; forwarded traffic is not affected).
    #[serde(default)]
    pub receiver_loss: Option<LossSpec>,
}

/// A full-duplex link between nodes `a` and `b`. The top-level fields apply
/// to both directions; `ab` (a to b) and `ba` (b to a) override them per
/// direction.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Unique link name; default "<a>-<b>".
    #[serde(default)]
    pub name: Option<String>,
    pub a: String,
    pub b: String,
    /// Transmission rate in bit/s: a number, or steps `[[t_s, bit/s], ...]`
    /// (optionally `{steps = [...], repeat_s = P}`). A packet being sent
    /// when the rate changes sends its remaining bits at the new rate.
    /// Leave it out when a `trace` gives the capacity.
    #[serde(default)]
    pub rate_bps: Option<Schedule>,
    /// One-way propagation delay in milliseconds: a number or steps like
    /// `rate_bps`. A packet takes the delay in force when its last bit
    /// leaves; packets never overtake each other on the wire.
    pub delay_ms: Schedule,
    /// Capacity from a delivery-opportunity trace (Mahimahi format)
    /// instead of `rate_bps`.
    #[serde(default)]
    pub trace: Option<TraceSpec>,
    /// When the link is down (windows or an on/off process).
    #[serde(default)]
    pub outages: Option<OutageSpec>,
    /// Delay jitter (a truncated Gaussian on the one-way delay).
    #[serde(default)]
    pub jitter: Option<JitterSpec>,
    /// Transmit queue of each direction; default drop-tail of 100 packets.
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    /// Loss model of each direction (each direction gets its own instance
    /// and random stream).
    #[serde(default)]
    pub loss: Option<LossSpec>,
    /// Routing cost; default 1 (metric "hops") or the delay in ms (metric
    /// "delay").
    #[serde(default)]
    pub cost: Option<f64>,
    #[serde(default)]
    pub ab: Option<Box<DirSpec>>,
    #[serde(default)]
    pub ba: Option<Box<DirSpec>>,
}

impl LinkSpec {
    /// The link's name: `name`, or "<a>-<b>" (made only then).
    pub fn display_name(&self) -> std::borrow::Cow<'_, str> {
        match &self.name {
            Some(n) => n.as_str().into(),
            None => [self.a.as_str(), "-", self.b.as_str()].concat().into(),
        }
    }
}

/// Per-direction overrides of a link.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirSpec {
    #[serde(default)]
    pub rate_bps: Option<Schedule>,
    #[serde(default)]
    pub delay_ms: Option<Schedule>,
    /// This direction's trace (it then ignores the link's `rate_bps`).
    #[serde(default)]
    pub trace: Option<TraceSpec>,
    #[serde(default)]
    pub outages: Option<OutageSpec>,
    #[serde(default)]
    pub jitter: Option<JitterSpec>,
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    #[serde(default)]
    pub loss: Option<LossSpec>,
    #[serde(default)]
    pub cost: Option<f64>,
}

impl LinkSpec {
    /// Direction `d`'s changing properties (its own fields over the
    /// link's; a direction's rate or trace replaces both of the link's).
    pub fn dynamics<'a>(&'a self, d: Option<&'a DirSpec>) -> DirDynamics<'a> {
        let own_capacity = d.is_some_and(|d| d.rate_bps.is_some() || d.trace.is_some());
        let (rate_bps, trace) = match d {
            Some(d) if own_capacity => (d.rate_bps.as_ref(), d.trace.as_ref()),
            _ => (self.rate_bps.as_ref(), self.trace.as_ref()),
        };
        DirDynamics {
            rate_bps,
            trace,
            delay_ms: d
                .and_then(|d| d.delay_ms.as_ref())
                .unwrap_or(&self.delay_ms),
            outages: d.and_then(|d| d.outages.as_ref()).or(self.outages.as_ref()),
            jitter: d.and_then(|d| d.jitter.as_ref()).or(self.jitter.as_ref()),
        }
    }
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    pub name: String,
    /// Member nodes; each receives the group's flows (except its own).
    pub members: Vec<String>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RouteMetric {
    /// Every link costs 1 (unless it sets `cost`).
    #[default]
    Hops,
    /// A link costs its propagation delay in ms (unless it sets `cost`).
    Delay,
}

#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoutingSpec {
    #[serde(default)]
    pub metric: RouteMetric,
    /// Explicit unicast routes that override the computed ones.
    #[serde(default)]
    pub routes: Vec<RouteSpec>,
}

/// At `node`, send packets for `dst` to the neighbour `next_hop`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    pub node: String,
    pub dst: String,
    pub next_hop: String,
}

#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeasureSpec {
    /// Record a per-hop packet trace (enqueue, transmit, receive, drop,
    /// deliver). Large; off by default.
    #[serde(default)]
    pub trace: bool,
    /// Sample every queue's length at this period, in ms (off if absent).
    #[serde(default)]
    pub queue_sample_ms: Option<f64>,
    /// Record the capacity each link direction offered and the bytes it
    /// carried every this many ms (the `link_capacity` table). Default:
    /// every 100 ms for the directions whose rate, delay or state changes,
    /// none for the others; when given, every direction; 0: off.
    #[serde(default)]
    pub capacity_interval_ms: Option<f64>,
    /// Windows [start_s, end_s) over which to report per-flow throughput.
    #[serde(default)]
    pub windows_s: Vec<[f64; 2]>,
    /// Write one pcap file per link (needs an output directory).
    #[serde(default)]
    pub pcap: bool,
    /// Bytes captured per packet in pcap files (0 = whole packet).
    #[serde(default)]
    pub pcap_snaplen: u32,
    /// Keep the per-packet tables: packets (one row per delivered copy) and
    /// drops (one row per dropped copy). Off by default, so that memory
    /// does not grow with delivered packets: the flows table's delay
    /// percentiles then come from a histogram (within 0.1%; mean, min and
    /// max exact), and drops are counted per flow, link and queue only.
    #[serde(default)]
    pub packets: bool,
    /// Leave packets sent before this time (s) out of the flow summaries
    /// (flows, loss_runs): a warm-up. Their counts, losses, delays,
    /// jitter and loss runs then cover packets sent from here on, and
    /// throughput the time from here on. Other tables cover the whole run.
    #[serde(default)]
    pub warmup_s: f64,
    /// Keep the applications' time series (the `*_series` tables: TCP's
    /// window and RTT, TFRC's rate, ...), recorded on change. Off by
    /// default: TCP's window changes on nearly every ACK.
    #[serde(default)]
    pub series: bool,
}

impl MeasureSpec {
    /// The throughput windows as simulated times.
    pub fn windows(&self) -> Vec<(SimTime, SimTime)> {
        (self.windows_s.iter())
            .map(|x| (SimTime::from_secs_f64(x[0]), SimTime::from_secs_f64(x[1])))
            .collect()
    }
}
