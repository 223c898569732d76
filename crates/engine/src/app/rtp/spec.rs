//! RTP sessions in scenarios: the session's fields (members, bandwidth,
//! AVPF parameters, NEWPRED), their checks, and construction of one
//! [`RtpMember`] per member with its RTCP timing and AVPF scheduler.

use super::member::{MediaConfig, NewpredConfig, RtpMember};
use crate::app::session::SessionModel;
use crate::app::PacketTemplate;
use crate::measure::recorder::FlowMeta;
use crate::net::{Dest, NodeId, Transport};
use crate::proto::rtp::{AvpfConfig, DitherRule, RtcpScheduler, RtcpTiming, TimingConfig};
use crate::scenario::build::{BuildCtx, PortClaim};
use crate::scenario::check::{Checker, Scope};
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::Deserialize;

/// An RTP session: media from the members that send it, RTCP from all,
/// over multicast (every member reaches every other along shortest-path
/// trees) or unicast (exactly two members).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RtpSessionSpec {
    /// Unique session name (no '/').
    pub name: String,
    pub members: Vec<RtpMemberSpec>,
    /// "multicast" (default) or "unicast" (two members).
    #[serde(default)]
    pub transport: RtpTransport,
    /// Session bandwidth in bit/s: the media rate on the wire (IP, UDP and
    /// RTP headers included), shared equally by the media senders; RTCP
    /// gets `rtcp_fraction` of it on top.
    pub session_bw_bps: f64,
    /// RTP payload per media packet, in bytes (RTP 12, UDP 8, IPv4 20 are
    /// added on the wire).
    pub media_payload_bytes: u32,
    /// Default 0.05.
    #[serde(default)]
    pub rtcp_fraction: Option<f64>,
    #[serde(default)]
    pub start_s: f64,
    /// Members send BYE and stop at this time (default: end of run, no BYE).
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// AVPF parameters (used by members whose profile is "avpf").
    #[serde(default)]
    pub avpf: Option<AvpfSpec>,
    /// NEWPRED error repair: frames cut into segments, application-layer
    /// feedback per frame, repairs from the sender. With it, the media
    /// packet size follows from the bandwidth, the frame rate and the
    /// segments (media_payload_bytes is ignored).
    #[serde(default)]
    pub newpred: Option<NewpredSpec>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewpredSpec {
    pub frames_per_s: f64,
    pub segments_per_frame: u16,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RtpTransport {
    #[default]
    Multicast,
    Unicast,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RtpProfile {
    Avp,
    #[default]
    Avpf,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RtpMemberSpec {
    pub node: String,
    /// "avpf" (default) or "avp".
    #[serde(default)]
    pub profile: RtpProfile,
    /// Sends media (an RTP sender).
    #[serde(default)]
    pub media: bool,
    /// Sends sender reports even without media (so it gets an RTT estimate
    /// from the media sender's report blocks).
    #[serde(default)]
    pub sender_reports: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DitherRuleSpec {
    /// RFC 4585: 0 point-to-point, else l * T_rr.
    #[default]
    Rfc,
    /// Draft rule: k * RTT / 2 * members with an RTT estimate, else l * T_rr.
    Rtt,
}

/// AVPF parameters (RFC 4585 section 3).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AvpfSpec {
    /// T_rr_interval in ms (default 0: none).
    #[serde(default)]
    pub trr_interval_ms: Option<f64>,
    #[serde(default)]
    pub dither: DitherRuleSpec,
    /// l (default 0.5).
    #[serde(default)]
    pub l: Option<f64>,
    /// k of the draft rule (default 1).
    #[serde(default)]
    pub k: Option<f64>,
    /// T_max_fb_delay in ms (default 1000).
    #[serde(default)]
    pub max_feedback_delay_ms: Option<f64>,
    /// T_retention in ms (default 2000, the minimum RFC 4585 allows).
    #[serde(default)]
    pub retention_ms: Option<f64>,
}

impl SessionModel for RtpSessionSpec {
    fn name(&self) -> &str {
        &self.name
    }

    /// Per member: "<session>/<node>/rtp" (media senders), then
    /// "<session>/<node>/rtcp".
    fn flow_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for m in &self.members {
            if m.media {
                v.push(format!("{}/{}/rtp", self.name, m.node));
            }
            v.push(format!("{}/{}/rtcp", self.name, m.node));
        }
        v
    }

    fn validate(&self, p: &str, scope: &Scope<'_>, c: &mut Checker) {
        self.validate_members(p, scope, c);
        c.positive(&format!("{p}.session_bw_bps"), self.session_bw_bps);
        if self.media_payload_bytes == 0 || self.media_payload_bytes > 65_495 {
            let msg = format!("must be 1..=65495 bytes (got {})", self.media_payload_bytes);
            c.err(format!("{p}.media_payload_bytes"), msg);
        }
        if let Some(f) = self.rtcp_fraction {
            if !f.is_finite() || f <= 0.0 || f > 1.0 {
                c.err(
                    format!("{p}.rtcp_fraction"),
                    format!("must be in (0, 1] (got {f})"),
                );
            }
        }
        self.validate_timing(p, scope, c);
        if let Some(np) = &self.newpred {
            self.validate_newpred(np, p, c);
        }
        if let Some(a) = &self.avpf {
            a.validate(&format!("{p}.avpf"), c);
        }
    }

    fn build(&self, k: usize, p: &str, ctx: &mut BuildCtx<'_>) {
        let nodes: Vec<NodeId> = self.members.iter().map(|m| ctx.node(&m.node)).collect();
        let plan = SessionPlan::new(self, k, &nodes, ctx);
        let ids: Vec<u32> = self.flow_names().iter().map(|n| ctx.flow_id(n)).collect();
        let mut ids = ids.into_iter();
        for (j, m) in self.members.iter().enumerate() {
            let rtp_flow = m.media.then(|| ids.next().expect("named"));
            let rtcp_flow = ids.next().expect("named");
            self.build_member(
                &plan,
                j,
                (rtp_flow, rtcp_flow),
                &format!("{p}.members[{j}]"),
                ctx,
            );
        }
    }
}

impl RtpSessionSpec {
    fn validate_members(&self, p: &str, scope: &Scope<'_>, c: &mut Checker) {
        if self.members.len() < 2 {
            c.err(
                format!("{p}.members"),
                "a session needs at least two members",
            );
        }
        if self.transport == RtpTransport::Unicast && self.members.len() != 2 {
            let msg = format!(
                "a unicast session has exactly two members (got {})",
                self.members.len()
            );
            c.err(format!("{p}.members"), msg);
        }
        let mut seen = std::collections::HashSet::new();
        for (j, m) in self.members.iter().enumerate() {
            let path = format!("{p}.members[{j}].node");
            if scope.node(c, &path, &m.node) && !seen.insert(m.node.as_str()) {
                c.err(path, format!("\"{}\" is already a member", m.node));
            }
        }
    }

    fn validate_timing(&self, p: &str, scope: &Scope<'_>, c: &mut Checker) {
        c.non_negative(&format!("{p}.start_s"), self.start_s);
        if self.start_s.is_finite() && self.start_s >= scope.duration_s {
            c.err(format!("{p}.start_s"), "must be before the end of the run");
        }
        if let Some(stop) = self.stop_s {
            if !stop.is_finite() || stop <= self.start_s {
                c.err(
                    format!("{p}.stop_s"),
                    format!("must be after start_s = {}", self.start_s),
                );
            }
        }
    }

    fn validate_newpred(&self, np: &NewpredSpec, p: &str, c: &mut Checker) {
        c.positive(&format!("{p}.newpred.frames_per_s"), np.frames_per_s);
        if np.segments_per_frame == 0 {
            c.err(
                format!("{p}.newpred.segments_per_frame"),
                "must be at least 1",
            );
        }
        let seg_bytes = self.session_bw_bps
            / self.media_senders()
            / np.frames_per_s.max(1e-9)
            / 8.0
            / np.segments_per_frame.max(1) as f64;
        if np.frames_per_s > 0.0 && seg_bytes < 41.0 {
            let msg = format!(
                "segments of {seg_bytes:.1} bytes leave no room for RTP/UDP/IP headers (40 bytes)"
            );
            c.err(format!("{p}.newpred"), msg);
        }
    }

    /// Media senders sharing the bandwidth (at least 1, for the arithmetic).
    fn media_senders(&self) -> f64 {
        self.members.iter().filter(|m| m.media).count().max(1) as f64
    }

    /// Media payload per packet (bytes) and the time between packets.
    fn media_plan(&self) -> (u32, SimTime) {
        match &self.newpred {
            // NEWPRED: a frame every 1/fps, cut into equal segments that fill
            // the bandwidth on the wire.
            Some(np) => {
                let seg = self.session_bw_bps
                    / self.media_senders()
                    / np.frames_per_s
                    / 8.0
                    / np.segments_per_frame as f64;
                let payload = (seg - 40.0).round().max(1.0) as u32;
                (payload, SimTime::from_secs_f64(1.0 / np.frames_per_s))
            }
            None => {
                let wire_bytes = self.media_payload_bytes as f64 + 12.0 + 28.0;
                let per_sender_bps = self.session_bw_bps / self.media_senders();
                let interval = SimTime::from_secs_f64(wire_bytes * 8.0 / per_sender_bps);
                (self.media_payload_bytes, interval)
            }
        }
    }

    /// RTCP timing of one member (RFC 3550 6.2, RFC 4585 3.4).
    fn timing_config(&self, avpf: bool, point_to_point: bool) -> TimingConfig {
        TimingConfig {
            session_bw_bps: self.session_bw_bps,
            rtcp_fraction: self.rtcp_fraction.unwrap_or(0.05),
            sender_fraction: 0.25,
            min_interval_s: if avpf { 0.0 } else { 5.0 },
            initial_min_interval_s: if !avpf {
                2.5
            } else if point_to_point {
                0.0
            } else {
                1.0
            },
            reconsideration: true,
        }
    }

    fn build_member(
        &self,
        plan: &SessionPlan,
        j: usize,
        flows: (Option<u32>, u32),
        path: &str,
        ctx: &mut BuildCtx<'_>,
    ) {
        let m = &self.members[j];
        let node = plan.nodes[j];
        let others: Vec<NodeId> = plan.nodes.iter().copied().filter(|&n| n != node).collect();
        let dst = plan.destination(j, &m.node, &others, path, ctx);
        let tpl = |flow: u32, port: u16, payload: u32| PacketTemplate {
            flow,
            dst,
            src_port: port,
            dst_port: port,
            dscp: 0,
            payload_bytes: payload,
            transport: Transport::Udp,
        };
        let (rtp_flow, rtcp_flow) = flows;
        let media = rtp_flow.map(|f| MediaConfig {
            template: tpl(f, plan.rtp_port, plan.payload + 12),
            interval: plan.interval,
        });
        let app = self.member_app(plan, j, media, tpl(rtcp_flow, plan.rtcp_port, 0), ctx);
        let idx = ctx.next_app();
        for (port, field) in [(plan.rtp_port, "rtp"), (plan.rtcp_port, "rtcp")] {
            if let PortClaim::Taken(_) = ctx.claim_port(node, port, idx, &self.name, false) {
                let msg = format!("{field} port {port} on \"{}\" is taken", m.node);
                ctx.err(path, msg);
            }
        }
        ctx.add_app(node, plan.start, Box::new(app));
        let meta = |kind, stop| FlowMeta {
            name: format!("{}/{}/{kind}", self.name, m.node),
            kind,
            src: node,
            receivers: others.clone(),
            start: plan.start,
            stop,
        };
        if let Some(f) = rtp_flow {
            ctx.add_flow_meta(f, meta("rtp", plan.stop));
        }
        let rtcp = meta("rtcp", ctx.horizon);
        ctx.add_flow_meta(rtcp_flow, rtcp);
    }

    fn member_app(
        &self,
        plan: &SessionPlan,
        j: usize,
        media: Option<MediaConfig>,
        rtcp_tpl: PacketTemplate,
        ctx: &BuildCtx<'_>,
    ) -> RtpMember {
        let m = &self.members[j];
        let avpf = m.profile == RtpProfile::Avpf;
        let a = self.avpf.clone().unwrap_or_default();
        let mut rng = ctx.stream(&format!("rtp:{}:{}", self.name, m.node));
        let ssrc = 1000 * (plan.index as u32 + 1) + j as u32 + 1;
        let cname = format!("{}@{}", m.node, self.name);
        // A first compound is about an RR with one block plus SDES.
        let first_size = 28.0 + 32.0 + 8.0 + cname.len() as f64;
        let cfg = self.timing_config(avpf, plan.point_to_point);
        let mut timing = RtcpTiming::new(cfg, ssrc, first_size, plan.start, &mut rng);
        if avpf && a.trr_interval_ms.is_some_and(|x| x > 0.0) {
            timing.timeout_tmin_s = a.trr_interval_ms.unwrap_or(0.0) / 1e3;
        }
        let avpf_cfg = avpf.then(|| a.config(plan.point_to_point));
        let sched = RtcpScheduler::new(timing, avpf_cfg);
        let app = RtpMember::new(
            ssrc,
            cname,
            media,
            m.sender_reports,
            rtcp_tpl,
            sched,
            rng,
            plan.start,
            plan.stop,
            self.session_bw_bps,
        );
        match &self.newpred {
            Some(np) => app.with_newpred(NewpredConfig {
                segments: np.segments_per_frame,
            }),
            None => app,
        }
    }
}

impl AvpfSpec {
    fn validate(&self, p: &str, c: &mut Checker) {
        for (name, x) in [
            ("trr_interval_ms", self.trr_interval_ms),
            ("l", self.l),
            ("k", self.k),
        ] {
            if let Some(x) = x {
                c.non_negative(&format!("{p}.{name}"), x);
            }
        }
        for (name, x) in [
            ("max_feedback_delay_ms", self.max_feedback_delay_ms),
            ("retention_ms", self.retention_ms),
        ] {
            if let Some(x) = x {
                c.positive(&format!("{p}.{name}"), x);
            }
        }
        if self.retention_ms.is_some_and(|x| x < 2000.0) {
            c.err(
                format!("{p}.retention_ms"),
                "RFC 4585 requires at least 2000 ms",
            );
        }
    }

    fn config(&self, point_to_point: bool) -> AvpfConfig {
        AvpfConfig {
            trr_interval_s: self.trr_interval_ms.unwrap_or(0.0) / 1e3,
            dither: match self.dither {
                DitherRuleSpec::Rfc => DitherRule::Rfc {
                    l: self.l.unwrap_or(0.5),
                },
                DitherRuleSpec::Rtt => DitherRule::RttDraft {
                    k: self.k.unwrap_or(1.0),
                    l: self.l.unwrap_or(0.5),
                },
            },
            max_feedback_delay_s: self.max_feedback_delay_ms.unwrap_or(1000.0) / 1e3,
            point_to_point,
            retention_s: self.retention_ms.unwrap_or(2000.0) / 1e3,
        }
    }
}

/// What all members of one session share once it is placed.
struct SessionPlan {
    index: usize,
    nodes: Vec<NodeId>,
    /// The session's own multicast group (multicast sessions).
    group: Option<u32>,
    point_to_point: bool,
    rtp_port: u16,
    rtcp_port: u16,
    start: SimTime,
    stop: SimTime,
    payload: u32,
    interval: SimTime,
}

impl SessionPlan {
    fn new(s: &RtpSessionSpec, k: usize, nodes: &[NodeId], ctx: &mut BuildCtx<'_>) -> Self {
        let multicast = s.transport == RtpTransport::Multicast;
        let group = multicast.then(|| ctx.new_group(nodes));
        let rtp_port = 5004u16.wrapping_add(2 * k as u16);
        let (payload, interval) = s.media_plan();
        SessionPlan {
            index: k,
            nodes: nodes.to_vec(),
            group,
            point_to_point: !multicast,
            rtp_port,
            rtcp_port: rtp_port.wrapping_add(1),
            start: SimTime::from_secs_f64(s.start_s),
            stop: s.stop_s.map_or(ctx.horizon, SimTime::from_secs_f64),
            payload,
            interval,
        }
    }

    /// Where member `j` sends: the session's group along its tree, or the
    /// other member; reports what the topology cannot carry.
    fn destination(
        &self,
        j: usize,
        name: &str,
        others: &[NodeId],
        path: &str,
        ctx: &mut BuildCtx<'_>,
    ) -> Dest {
        let node = self.nodes[j];
        match self.group {
            Some(gid) => {
                let (tree, unreachable) = ctx.tree(node, gid, &self.nodes);
                for u in unreachable {
                    let msg = format!(
                        "member \"{}\" is unreachable from \"{name}\"",
                        ctx.node_name(u)
                    );
                    ctx.err(path, msg);
                }
                Dest::Group { group: gid, tree }
            }
            None => {
                let other = others[0];
                if let Some(why) = ctx.route_problem(node, other) {
                    ctx.err(path, format!("{why} from \"{name}\""));
                }
                Dest::Node(other)
            }
        }
    }
}
