//! RTP sessions in scenarios: the session's fields (members, bandwidth,
//! AVPF parameters, NEWPRED) and their checks. Construction is in
//! `build.rs` beside it.

use crate::app::session::SessionModel;
use crate::proto::cc::{CcMedia, CcSpec};
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};
use schemars::JsonSchema;
use serde::Deserialize;

/// Most pauses one member may list (each is a few bytes of state).
const MAX_PAUSES: usize = 100_000;

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
    /// RFC 3611's receiver RTT: sends a Receiver Reference Time block in
    /// its receiver reports and takes its RTT from the DLRR answers (every
    /// member answers the RRTRs it hears).
    #[serde(default)]
    pub xr_rtt: bool,
    /// A rate controller for this member's media (unicast sessions): one
    /// media packet leaves whenever it allows, and the other member
    /// returns its feedback in the flow "<session>/<other>/fb". Absent:
    /// the media's fixed rate from `session_bw_bps`.
    #[serde(default)]
    pub cc: Option<CcSpec>,
    /// Size on the wire of the feedback packets the other member returns
    /// for `cc`.
    #[serde(default = "d_feedback_bytes")]
    pub feedback_bytes: u32,
    /// Frame-based media: `{type = "synthetic"}` (RFC 8593's codec),
    /// `"trace"`, `"voice"` or `"constant"` (docs/models/media.md).
    /// Absent: one packet of `media_payload_bytes` per interval.
    #[serde(default)]
    pub source: Option<crate::app::media::spec::SourceSpec>,
    /// Largest media packet on the wire, bytes (frames are cut to fit).
    #[serde(default = "d_max_packet_bytes")]
    pub max_packet_bytes: u32,
    /// A pacer between the source and the wire (with `source`); absent,
    /// a frame's packets leave together.
    #[serde(default)]
    pub pacer: Option<crate::app::media::spec::PacerSpec>,
    /// The ECN codepoint of the member's media packets: "not_ect" (the
    /// default), "ect0" (classic ECN, RFC 3168) or "ect1" (L4S, RFC 9331).
    /// An AQM that marks sets CE; per-packet feedback (RFC 8888) carries
    /// the bits back to the controller.
    #[serde(default)]
    pub ecn: MediaEcn,
    /// Per-packet feedback (RFC 8888 or transport-wide) the other member
    /// of a unicast session returns about this member's media.
    #[serde(default)]
    pub feedback: Option<crate::app::media::spec::FeedbackSpec>,
    /// This member's playout buffer for the frame-based media it receives
    /// (unicast sessions).
    #[serde(default)]
    pub playout: Option<crate::app::media::spec::PlayoutSpec>,
    /// Times the source stops, as [from_s, to_s] pairs in seconds of the
    /// run, in order and apart (with `source`): no frame is captured
    /// within one, while the pacer sends what it holds and RTCP, feedback
    /// and the controller carry on (RFC 8867 5.8's media pause; RFC 7728
    /// resumes with the next sequence number, as here).
    #[serde(default)]
    pub pauses: Vec<[f64; 2]>,
}

fn d_max_packet_bytes() -> u32 {
    1200
}

fn d_feedback_bytes() -> u32 {
    44
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

/// T_dither_max in a session of exactly two members (unicast).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PointToPointDither {
    /// RFC 4585 3.5.2 step 2b: 0, Early packets go at once.
    #[default]
    Zero,
    /// The multiparty rule (l * T_rr, or the draft's RTT rule) as in a
    /// larger group: how the AVPF study's NEWPRED agent dithered.
    Multiparty,
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
    /// T_dither_max of a two-member (unicast) session: "zero" (RFC 4585,
    /// default) or "multiparty" (the dither rule above, as in a group).
    #[serde(default)]
    pub point_to_point_dither: PointToPointDither,
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
            if self.peer_feedback(m).is_some() {
                v.push(format!("{}/{}/fb", self.name, m.node));
            }
            if self.retransmits(m) {
                v.push(format!("{}/{}/rtx", self.name, m.node));
            }
        }
        v
    }

    fn validate(&self, p: &str, scope: &Scope<'_>, c: &mut Checker) {
        self.validate_members(p, scope, c);
        c.positive(format_args!("{p}.session_bw_bps"), self.session_bw_bps);
        if self.session_bw_bps.is_finite()
            && self.session_bw_bps > 0.0
            && self.media_senders() > 0.0
        {
            let (_, interval) = self.media_plan();
            if interval < crate::sim::SimTime::from_micros(1) {
                let msg = format!(
                    "media packets would go {} ns apart (under 1 us): too high for the packet size",
                    interval.as_nanos()
                );
                c.err(format!("{p}.session_bw_bps"), msg);
            }
        }
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
        super::build::build_session(self, k, p, ctx);
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
            if let Some(cc) = &m.cc {
                self.validate_cc(m, cc, &format!("{p}.members[{j}]"), c);
            }
            self.validate_frames(m, &format!("{p}.members[{j}]"), c);
        }
    }

    /// Frame-based media, per-packet feedback and playout of one member.
    fn validate_frames(&self, m: &RtpMemberSpec, p: &str, c: &mut Checker) {
        let unicast = self.transport == RtpTransport::Unicast;
        if let Some(src) = &m.source {
            src.model().validate(&format!("{p}.source"), c);
            let why = if !m.media {
                Some("needs media = true")
            } else if self.newpred.is_some() {
                Some("not with newpred (its frames are cut into segments)")
            } else {
                None
            };
            if let Some(why) = why {
                c.err(format!("{p}.source"), why);
            }
            c.wire_bytes(
                format_args!("{p}.max_packet_bytes"),
                m.max_packet_bytes,
                41 + 8,
            );
        }
        self.validate_pauses(m, p, c);
        if let Some(pacer) = &m.pacer {
            pacer.validate(&format!("{p}.pacer"), c);
            if m.source.is_none() {
                c.err(format!("{p}.pacer"), "needs a source (frames to pace)");
            }
        }
        if let Some(fb) = &m.feedback {
            fb.validate(&format!("{p}.feedback"), c);
            let why = if m.source.is_none() {
                Some("needs a source (frame-based media)")
            } else if !unicast {
                Some("needs a unicast session (one receiver returns the feedback)")
            } else if m.cc.as_ref().is_some_and(|cc| cc.model().own_feedback()) {
                Some("the controller returns feedback of its own; per-packet feedback serves a controller that reads it (`gcc`, `nada`), `fixed`, or none")
            } else {
                None
            };
            if let Some(why) = why {
                c.err(format!("{p}.feedback"), why);
            }
        }
        if let Some(pl) = &m.playout {
            pl.validate(&format!("{p}.playout"), c);
            let peer = self.members.iter().find(|x| x.node != m.node);
            let why = if !unicast || self.members.len() != 2 {
                Some("needs a unicast session (the stream it plays is the other member's)")
            } else if peer.is_none_or(|x| x.source.is_none()) {
                Some("the other member sends no frame-based media (`source`)")
            } else {
                None
            };
            if let Some(why) = why {
                c.err(format!("{p}.playout"), why);
            }
            let peer_voice = peer
                .and_then(|x| x.source.as_ref())
                .is_some_and(|s| s.model().voice().is_some());
            if pl.decode == crate::app::media::spec::DecodeSpec::Reference && peer_voice {
                let why = "`reference` is for video: voice frames decode alone";
                c.err(format!("{p}.playout.decode"), why);
            }
            if pl.estimator == crate::app::media::spec::EstimatorSpec::Webrtc && peer_voice {
                let why =
                    "`webrtc` is libwebrtc's video jitter estimate: a voice stream's is NetEQ's";
                c.err(format!("{p}.playout.estimator"), why);
            }
        }
    }

    /// `pauses`: each [from, to] with from < to, in order and apart, none
    /// before the session starts; only for frame-based media.
    fn validate_pauses(&self, m: &RtpMemberSpec, p: &str, c: &mut Checker) {
        if m.pauses.is_empty() {
            return;
        }
        if m.source.is_none() || !m.media {
            c.err(
                format!("{p}.pauses"),
                "needs frame-based media (media = true and a source)",
            );
        }
        if m.pauses.len() > MAX_PAUSES {
            let msg = format!("at most {MAX_PAUSES} pauses (got {})", m.pauses.len());
            c.err(format!("{p}.pauses"), msg);
            return;
        }
        let mut last_to = self.start_s;
        for (i, &[from, to]) in m.pauses.iter().enumerate() {
            let path = format!("{p}.pauses[{i}]");
            let why = if !from.is_finite() || !to.is_finite() {
                Some("both times must be finite".to_string())
            } else if from >= to {
                Some(format!("must end after it begins (got [{from}, {to}])"))
            } else if from < last_to {
                Some(if i == 0 {
                    format!(
                        "must begin at or after start_s = {} (got {from})",
                        self.start_s
                    )
                } else {
                    format!(
                        "must begin at or after the previous pause's end {last_to} (got {from})"
                    )
                })
            } else {
                None
            };
            if let Some(why) = why {
                c.err(path, why);
            } else {
                last_to = to;
            }
        }
    }

    /// Whether member `m` retransmits lost packets (RFC 4588): it sends
    /// frame-based media to a unicast peer whose playout asks for them
    /// (`playout.nack`).
    pub(super) fn retransmits(&self, m: &RtpMemberSpec) -> bool {
        if self.transport != RtpTransport::Unicast || self.members.len() != 2 {
            return false;
        }
        let peer = self.members.iter().find(|x| x.node != m.node);
        let asks = peer
            .and_then(|x| x.playout.as_ref())
            .is_some_and(|pl| pl.nack);
        m.media && m.source.is_some() && asks
    }

    /// The member whose media `m` returns feedback about (a controller's
    /// or per-packet), if any.
    pub(super) fn peer_feedback<'a>(&'a self, m: &RtpMemberSpec) -> Option<&'a RtpMemberSpec> {
        if self.transport != RtpTransport::Unicast || self.members.len() != 2 {
            return None;
        }
        let peer = self.members.iter().find(|x| x.node != m.node)?;
        (peer.media && (peer.cc.is_some() || peer.feedback.is_some())).then_some(peer)
    }

    fn validate_cc(&self, m: &RtpMemberSpec, cc: &CcSpec, p: &str, c: &mut Checker) {
        let media = CcMedia {
            packet_feedback: m.feedback.is_some() && m.source.is_some(),
            pacer: m.pacer.is_some(),
            ..CcMedia::default()
        };
        cc.model().validate(&format!("{p}.cc"), media, c);
        let why = if !m.media {
            Some("needs media = true")
        } else if self.transport != RtpTransport::Unicast {
            Some("needs a unicast session (one receiver returns the feedback)")
        } else if self.newpred.is_some() {
            Some("not with newpred (its frames are cut into segments)")
        } else {
            None
        };
        if let Some(why) = why {
            c.err(format!("{p}.cc"), why);
        }
        c.wire_bytes(format_args!("{p}.feedback_bytes"), m.feedback_bytes, 28);
    }

    fn validate_timing(&self, p: &str, scope: &Scope<'_>, c: &mut Checker) {
        c.non_negative(format_args!("{p}.start_s"), self.start_s);
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
        c.positive(format_args!("{p}.newpred.frames_per_s"), np.frames_per_s);
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
    pub(super) fn media_senders(&self) -> f64 {
        self.members.iter().filter(|m| m.media).count().max(1) as f64
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
                c.non_negative(format_args!("{p}.{name}"), x);
            }
        }
        for (name, x) in [
            ("max_feedback_delay_ms", self.max_feedback_delay_ms),
            ("retention_ms", self.retention_ms),
        ] {
            if let Some(x) = x {
                c.positive(format_args!("{p}.{name}"), x);
            }
        }
        if self.retention_ms.is_some_and(|x| x < 2000.0) {
            c.err(
                format!("{p}.retention_ms"),
                "RFC 4585 requires at least 2000 ms",
            );
        }
    }
}

/// An RTP member's media ECN codepoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MediaEcn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
}

impl MediaEcn {
    pub fn bits(self) -> u8 {
        use crate::net::packet::ecn;
        match self {
            MediaEcn::NotEct => ecn::NOT_ECT,
            MediaEcn::Ect0 => ecn::ECT0,
            MediaEcn::Ect1 => ecn::ECT1,
        }
    }
}
