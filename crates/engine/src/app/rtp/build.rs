//! Construction of an RTP session: one [`RtpMember`] per member, with its
//! media plan, RTCP timing (RFC 3550 6.2, RFC 4585 3.4) and AVPF
//! scheduler, its destination (the session's multicast tree or the other
//! member) and its flows.

use super::frames::FrameSender;
use super::member::{MediaConfig, NewpredConfig, PacedMedia, RtpMember, TOKEN_FB};
use super::spec::{
    AvpfSpec, DitherRuleSpec, PointToPointDither, RtpMemberSpec, RtpProfile, RtpSessionSpec,
    RtpTransport,
};
use super::viewer::{FeedbackOut, Viewer};
use crate::app::media::nack::NackRequester;
use crate::app::media::playout::Playout;
use crate::app::media::spec::SourceSite;
use crate::app::paced::FeedbackEnd;
use crate::app::session::SessionModel;
use crate::app::PacketTemplate;
use crate::measure::recorder::{FlowMeta, Receivers};
use crate::net::{Dest, NodeId};
use crate::proto::cc::{CcSite, FeedbackReceiver, RateController};
use crate::proto::feedback::ArrivalLog;
use crate::proto::rtp::{AvpfConfig, DitherRule, RtcpScheduler, RtcpTiming, TimingConfig};
use crate::scenario::build::{BuildCtx, PortClaim};
use crate::sim::SimTime;

/// Adds session `s` (number `k` among the RTP sessions, at `p`).
pub fn build_session(s: &RtpSessionSpec, k: usize, p: &str, ctx: &mut BuildCtx<'_>) {
    let nodes: Vec<NodeId> = s.members.iter().map(|m| ctx.node(&m.node)).collect();
    let plan = SessionPlan::new(s, k, &nodes, ctx);
    let ids: Vec<u32> = s.flow_names().iter().map(|n| ctx.flow_id(n)).collect();
    let mut ids = ids.into_iter();
    let mut halves = s.controllers(&plan, ctx);
    let flows: Vec<MemberFlows> = (s.members.iter())
        .map(|m| {
            let rtp_flow = m.media.then(|| ids.next().expect("named"));
            let rtcp_flow = ids.next().expect("named");
            let fb_flow = s.peer_feedback(m).map(|_| ids.next().expect("named"));
            let rtx_flow = s.retransmits(m).then(|| ids.next().expect("named"));
            (rtp_flow, rtcp_flow, fb_flow, rtx_flow)
        })
        .collect();
    for (j, cc) in halves.iter_mut().enumerate() {
        let path = format!("{p}.members[{j}]");
        s.build_member(&plan, j, &flows, std::mem::take(cc), &path, ctx);
    }
}

/// A member's flows: RTP (a media sender), RTCP, feedback it returns,
/// retransmissions (RFC 4588) it sends.
type MemberFlows = (Option<u32>, u32, Option<u32>, Option<u32>);

/// One member's part of the media controllers: its own media's sending
/// half, and the receiving half of its peer's (with the feedback size).
type Halves = (
    Option<Box<dyn RateController>>,
    Option<(Box<dyn FeedbackReceiver>, u32)>,
);

impl RtpSessionSpec {
    /// Each member's controller halves (`cc`): the sender keeps the
    /// sending half, its peer gets the receiving half.
    fn controllers(&self, plan: &SessionPlan, ctx: &BuildCtx<'_>) -> Vec<Halves> {
        let mut halves: Vec<Halves> = (0..self.members.len()).map(|_| (None, None)).collect();
        for (j, m) in self.members.iter().enumerate() {
            let Some(cc) = m.cc.as_ref().filter(|_| m.media) else {
                continue;
            };
            let Some(peer) = (0..self.members.len()).find(|&k| k != j) else {
                continue;
            };
            let flow = format!("{}/{}/rtp", self.name, m.node);
            let site = CcSite {
                rng: ctx.rng,
                flow: &flow,
                packet_bytes: plan.payload + 12 + 28,
                levels_bps: &[],
                longest_interval: None,
            };
            let (tx, rx) = cc.model().build(&site);
            halves[j].0 = Some(tx);
            halves[peer].1 = Some((rx, m.feedback_bytes));
        }
        halves
    }
}

impl RtpSessionSpec {
    /// Media payload per packet (bytes) and the time between packets.
    pub(super) fn media_plan(&self) -> (u32, SimTime) {
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
    fn timing_config(&self, avpf: bool, point_to_point: bool, ssrc_base: u32) -> TimingConfig {
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
            ssrc_range: (ssrc_base, self.members.len() as u32),
        }
    }

    fn build_member(
        &self,
        plan: &SessionPlan,
        j: usize,
        all_flows: &[MemberFlows],
        (cc, fb): Halves,
        path: &str,
        ctx: &mut BuildCtx<'_>,
    ) {
        let flows = all_flows[j];
        let m = &self.members[j];
        let node = plan.nodes[j];
        let others: Vec<NodeId> = plan.nodes.iter().copied().filter(|&n| n != node).collect();
        let dst = plan.destination(j, &m.node, &others, path, ctx);
        let tpl = |flow: u32, port: u16, payload: u32| {
            PacketTemplate::session_udp(flow, dst, port, payload)
        };
        let (rtp_flow, rtcp_flow, fb_flow, rtx_flow) = flows;
        // RFC 4588's session multiplexing: the retransmissions share the
        // media's port, told apart by their SSRC.
        let media_tpl = |f| PacketTemplate {
            ecn: m.ecn.bits(),
            ..tpl(f, plan.rtp_port, plan.payload + 12)
        };
        let media = rtp_flow.map(|f| MediaConfig {
            template: media_tpl(f),
            rtx_template: rtx_flow.map(media_tpl),
            interval: plan.interval,
        });
        let feedback = fb_flow.zip(fb).map(|(f, (rx, bytes))| {
            FeedbackEnd::new(
                rx,
                tpl(f, plan.rtcp_port, bytes.saturating_sub(28)),
                TOKEN_FB,
            )
        });
        let frames = self.frame_sender(plan, j, ctx);
        let (viewer, pp_feedback) = match (0..self.members.len()).find(|&k| k != j) {
            Some(k) if plan.group.is_none() => (
                self.viewer(plan, j, k, all_flows[k].0),
                self.feedback_out(
                    plan,
                    (j, k),
                    fb_flow.map(|f| tpl(f, plan.rtcp_port, 0)),
                    all_flows[k].0,
                ),
            ),
            _ => (None, None),
        };
        let app = self
            .member_app(plan, j, media, tpl(rtcp_flow, plan.rtcp_port, 0), ctx)
            .with_cc(cc.map(PacedMedia::new), feedback)
            .with_frames(frames, viewer, pp_feedback);
        let idx = ctx.next_app();
        for (port, field) in [(plan.rtp_port, "rtp"), (plan.rtcp_port, "rtcp")] {
            if let PortClaim::Taken(_) = ctx.claim_port(node, port, idx, &self.name, false) {
                let msg = format!("{field} port {port} on \"{}\" is taken", m.node);
                ctx.err(path, msg);
            }
        }
        ctx.add_app(node, plan.start, Box::new(app));
        let meta = |kind, stop, receivers| FlowMeta {
            name: format!("{}/{}/{kind}", self.name, m.node),
            kind,
            src: node,
            receivers,
            start: plan.start,
            stop,
        };
        if let Some(f) = rtp_flow {
            let rtp = meta("rtp", plan.stop, Receivers::Each(others.clone()));
            ctx.add_flow_meta(f, rtp);
        }
        // Multicast RTCP goes from every member to every other: one pooled
        // row per sender keeps the recorder linear in members.
        let others_fb = others.clone();
        let receivers = match plan.group {
            Some(_) => Receivers::Pooled(others.len() as u32),
            None => Receivers::Each(others),
        };
        let rtcp = meta("rtcp", ctx.horizon, receivers);
        ctx.add_flow_meta(rtcp_flow, rtcp);
        if let Some(f) = fb_flow {
            let fb = FlowMeta {
                name: format!("{}/{}/fb", self.name, m.node),
                ..meta(
                    "rtp_feedback",
                    ctx.horizon,
                    Receivers::Each(others_fb.clone()),
                )
            };
            ctx.add_flow_meta(f, fb);
        }
        if let Some(f) = rtx_flow {
            ctx.add_flow_meta(f, meta("rtx", plan.stop, Receivers::Each(others_fb)));
        }
    }

    /// What a source may use: the member's share of the session.
    fn source_site(&self, plan: &SessionPlan, m: &RtpMemberSpec) -> SourceSite {
        let share = self.session_bw_bps / self.media_senders();
        let payload = m.max_packet_bytes.saturating_sub(40).max(1) as f64;
        SourceSite {
            start_bps: share * payload / (payload + 40.0),
            plan: (plan.payload, plan.interval),
        }
    }

    /// Member `j`'s frame-based media, if it has a source.
    fn frame_sender(
        &self,
        plan: &SessionPlan,
        j: usize,
        ctx: &BuildCtx<'_>,
    ) -> Option<FrameSender> {
        let m = &self.members[j];
        let src = m.source.as_ref().filter(|_| m.media)?;
        let site = self.source_site(plan, m);
        let rng = ctx.stream(&format!("rtp:{}:{}:source", self.name, m.node));
        Some(
            FrameSender::new(
                src.model().build(&site),
                rng,
                m.pacer.as_ref().map(|p| p.build()),
                m.max_packet_bytes,
                self.session_bw_bps / self.media_senders(),
                m.feedback.as_ref().map(|f| f.format()),
            )
            .with_pauses(
                m.pauses
                    .iter()
                    .map(|&[from, to]| (SimTime::from_secs_f64(from), SimTime::from_secs_f64(to)))
                    .collect(),
            ),
        )
        .map(|fs| match self.retransmits(m) {
            true => fs.with_retransmission(plan.rtx_ssrc(j)),
            false => fs,
        })
    }

    /// Member `j`'s playout buffer for member `k`'s stream (flow `stream`).
    fn viewer(
        &self,
        plan: &SessionPlan,
        j: usize,
        k: usize,
        stream: Option<u32>,
    ) -> Option<Viewer> {
        let pl = self.members[j].playout.as_ref()?;
        let peer = &self.members[k];
        let src = peer.source.as_ref()?;
        let site = self.source_site(plan, peer);
        let voice = src.model().voice();
        let params = pl.params(src.model().frame_interval(&site), voice.is_some());
        Some(Viewer {
            playout: Playout::new(params).starting_at(plan.start),
            voice,
            media_ssrc: plan.ssrc_base + k as u32,
            stream: stream?,
            nack: pl.nack_params().map(NackRequester::new),
            nack_timer: None,
            nacks_sent: 0,
            key_wait_timer: None,
        })
    }

    /// The per-packet feedback member `j` returns about member `k`'s media.
    fn feedback_out(
        &self,
        plan: &SessionPlan,
        (j, k): (usize, usize),
        tpl: Option<PacketTemplate>,
        stream: Option<u32>,
    ) -> Option<FeedbackOut> {
        let fb = self.members[k].feedback.as_ref()?;
        let log = ArrivalLog::new(
            fb.format(),
            plan.ssrc_base + j as u32,
            plan.ssrc_base + k as u32,
        );
        Some(FeedbackOut::new(
            log,
            (SimTime::from_millis_f64(fb.interval_ms), fb.per_frame),
            tpl?,
            stream?,
        ))
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
        let ssrc = plan.ssrc_base + j as u32;
        let cname = format!("{}@{}", m.node, self.name);
        // A first compound is about an RR with one block plus SDES.
        let first_size = 28.0 + 32.0 + 8.0 + cname.len() as f64;
        let cfg = self.timing_config(avpf, plan.point_to_point, plan.ssrc_base);
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
        let app = if plan.leaves { app.with_bye() } else { app };
        let app = if m.xr_rtt { app.with_xr_rtt() } else { app };
        match &self.newpred {
            Some(np) => app.with_newpred(NewpredConfig {
                segments: np.segments_per_frame,
            }),
            None => app,
        }
    }
}

impl AvpfSpec {
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
            // Only the dither rule: initial Tmin stays point-to-point (3.4).
            point_to_point: point_to_point
                && self.point_to_point_dither == PointToPointDither::Zero,
            retention_s: self.retention_ms.unwrap_or(2000.0) / 1e3,
        }
    }
}

/// What all members of one session share once it is placed.
struct SessionPlan {
    nodes: Vec<NodeId>,
    /// The session's own multicast group (multicast sessions).
    group: Option<u32>,
    point_to_point: bool,
    /// SSRC of member 0; member j has ssrc_base + j.
    ssrc_base: u32,
    rtp_port: u16,
    rtcp_port: u16,
    start: SimTime,
    stop: SimTime,
    /// The members leave with a BYE at `stop` (`stop_s` before the end of
    /// the run).
    leaves: bool,
    payload: u32,
    interval: SimTime,
}

impl SessionPlan {
    fn new(s: &RtpSessionSpec, k: usize, nodes: &[NodeId], ctx: &mut BuildCtx<'_>) -> Self {
        let multicast = s.transport == RtpTransport::Multicast;
        let group = multicast.then(|| ctx.new_group(nodes));
        let rtp_port = 5004u16.wrapping_add(2 * k as u16);
        let (payload, interval) = s.media_plan();
        let stop = s.stop_s.map_or(ctx.horizon, SimTime::from_secs_f64);
        SessionPlan {
            nodes: nodes.to_vec(),
            group,
            point_to_point: !multicast,
            ssrc_base: 1000 * (k as u32 + 1) + 1,
            rtp_port,
            rtcp_port: rtp_port.wrapping_add(1),
            start: SimTime::from_secs_f64(s.start_s),
            stop,
            leaves: stop < ctx.horizon,
            payload,
            interval,
        }
    }

    /// Member `j`'s retransmission stream's SSRC (RFC 4588: one of its
    /// own), clear of the members' (a unicast session has two).
    fn rtx_ssrc(&self, j: usize) -> u32 {
        self.ssrc_base + 500 + j as u32
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

#[cfg(test)]
mod tests {
    use super::RtpSessionSpec;
    use crate::proto::rtp::DitherRule;
    use crate::sim::SimTime;

    fn spec(extra: serde_json::Value) -> RtpSessionSpec {
        let mut v = serde_json::json!({
            "name": "s", "session_bw_bps": 64000, "media_payload_bytes": 160,
            "members": [{"node": "a", "media": true}, {"node": "b"}],
        });
        for (k, x) in extra.as_object().expect("an object") {
            v[k] = x.clone();
        }
        serde_json::from_value(v).expect("a session spec")
    }

    /// Constant media: a packet of the payload and 40 bytes of RTP, UDP
    /// and IP headers each time the sender's share of the session
    /// bandwidth has carried it. 200 bytes at 64 kbit/s: 25 ms; with two
    /// senders each has half: 50 ms.
    #[test]
    fn constant_media_fills_each_senders_share_on_the_wire() {
        assert_eq!(
            spec(serde_json::json!({})).media_plan(),
            (160, SimTime::from_millis(25))
        );
        let two = spec(serde_json::json!({"members": [{"node": "a", "media": true},
                                                      {"node": "b", "media": true}]}));
        assert_eq!(two.media_plan(), (160, SimTime::from_millis(50)));
    }

    /// NEWPRED (the AVPF study's case 9): a frame every 1/fps cut into
    /// segments that fill the bandwidth on the wire: at 128 kbit/s, 10
    /// frames/s and 6 segments, 128000 / 10 / 8 / 6 = 266.7 bytes a
    /// segment on the wire, 227 of payload (40 of headers), every 100 ms.
    #[test]
    fn newpred_cuts_each_frame_into_segments_that_fill_the_bandwidth() {
        let np = spec(serde_json::json!({"session_bw_bps": 128000,
                                          "newpred": {"frames_per_s": 10, "segments_per_frame": 6}}));
        assert_eq!(np.media_plan(), (227, SimTime::from_millis(100)));
    }

    /// RFC 3550 6.2: 5% of the session bandwidth, a quarter of it for
    /// senders, a 5 s minimum interval and half of it before the first
    /// packet; RFC 4585 3.4: AVPF has no minimum, and its first interval
    /// waits 1 s in a group, nothing point-to-point.
    #[test]
    fn rtcp_timing_follows_the_profiles() {
        let s = spec(serde_json::json!({}));
        let avp = s.timing_config(false, true, 7);
        assert_eq!(
            (avp.session_bw_bps, avp.rtcp_fraction, avp.sender_fraction),
            (64000.0, 0.05, 0.25)
        );
        assert_eq!((avp.min_interval_s, avp.initial_min_interval_s), (5.0, 2.5));
        assert!(avp.reconsideration);
        assert_eq!(avp.ssrc_range, (7, 2));
        let group = s.timing_config(true, false, 0);
        assert_eq!(
            (group.min_interval_s, group.initial_min_interval_s),
            (0.0, 1.0)
        );
        let p2p = s.timing_config(true, true, 0);
        assert_eq!((p2p.min_interval_s, p2p.initial_min_interval_s), (0.0, 0.0));
        let share = spec(serde_json::json!({"rtcp_fraction": 0.1})).timing_config(true, true, 0);
        assert_eq!(share.rtcp_fraction, 0.1);
    }

    /// AVPF's fields in ms become seconds; the defaults are RFC 4585's
    /// (l = 0.5, T_max_fb_delay 1 s here, T_retention 2 s) and the draft's
    /// k = 1; point-to-point dithering is zero unless asked otherwise.
    #[test]
    fn avpf_settings_become_its_configuration() {
        let avpf = |v: serde_json::Value| -> super::AvpfSpec {
            serde_json::from_value(v).expect("an avpf spec")
        };
        let c = avpf(serde_json::json!({})).config(true);
        assert_eq!(
            (c.trr_interval_s, c.max_feedback_delay_s, c.retention_s),
            (0.0, 1.0, 2.0)
        );
        assert_eq!(c.dither, DitherRule::Rfc { l: 0.5 });
        assert!(c.point_to_point);
        let c = avpf(
            serde_json::json!({"trr_interval_ms": 1500, "max_feedback_delay_ms": 250,
                                         "retention_ms": 3000, "dither": "rtt", "k": 2,
                                         "point_to_point_dither": "multiparty"}),
        )
        .config(true);
        assert_eq!(
            (c.trr_interval_s, c.max_feedback_delay_s, c.retention_s),
            (1.5, 0.25, 3.0)
        );
        assert_eq!(c.dither, DitherRule::RttDraft { k: 2.0, l: 0.5 });
        assert!(!c.point_to_point, "the dither rule of a group");
        assert!(!avpf(serde_json::json!({})).config(false).point_to_point);
    }
}
