//! The scenario data model: the single source of truth for the schema.
//!
//! Units are in the field names (`_s`, `_ms`, `_bps`, `_bytes`). Defaults
//! are stated on each field and in docs/scenario.md.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A complete simulation scenario.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
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
    #[serde(default)]
    pub routing: RoutingSpec,
    #[serde(default)]
    pub measure: MeasureSpec,
}

/// An RTP session: media from the members that send it, RTCP from all,
/// over multicast (every member reaches every other along shortest-path
/// trees) or unicast (exactly two members).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
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

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewpredSpec {
    pub frames_per_s: f64,
    pub segments_per_frame: u16,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RtpTransport {
    #[default]
    Multicast,
    Unicast,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RtpProfile {
    Avp,
    #[default]
    Avpf,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
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

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DitherRuleSpec {
    /// RFC 4585: 0 point-to-point, else l * T_rr.
    #[default]
    Rfc,
    /// Draft rule: k * RTT / 2 * members with an RTT estimate, else l * T_rr.
    Rtt,
}

/// AVPF parameters (RFC 4585 section 3).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
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

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
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
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Unique link name; default "<a>-<b>".
    #[serde(default)]
    pub name: Option<String>,
    pub a: String,
    pub b: String,
    /// Transmission rate in bit/s.
    pub rate_bps: f64,
    /// One-way propagation delay in milliseconds.
    pub delay_ms: f64,
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
    pub ab: Option<DirSpec>,
    #[serde(default)]
    pub ba: Option<DirSpec>,
}

/// Per-direction overrides of a link.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirSpec {
    #[serde(default)]
    pub rate_bps: Option<f64>,
    #[serde(default)]
    pub delay_ms: Option<f64>,
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    #[serde(default)]
    pub loss: Option<LossSpec>,
    #[serde(default)]
    pub cost: Option<f64>,
}

/// A queue discipline.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    /// FIFO that drops arrivals when full. Give a packet limit, a byte
    /// limit, or both (the first reached applies).
    Droptail {
        #[serde(default)]
        limit_packets: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
    },
}

/// A loss model.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    /// Each packet lost independently with probability `rate`.
    Packet { rate: f64 },
    /// Each byte in error with probability `rate`; a packet of n bytes is
    /// lost with probability 1-(1-rate)^n.
    ByteError { rate: f64 },
    /// Each bit in error with probability `rate`; a packet of n bytes is
    /// lost with probability 1-(1-rate)^(8n).
    BitError { rate: f64 },
    /// Two-state Markov chain stepped once per packet.
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        /// Loss probability in the good state (default 0).
        #[serde(default)]
        loss_good: Option<f64>,
        /// Loss probability in the bad state (default 1).
        #[serde(default)]
        loss_bad: Option<f64>,
    },
    /// Deterministic losses.
    Explicit {
        /// 0-based ordinals of the packets crossing this point.
        #[serde(default)]
        ordinals: Vec<u64>,
        /// Specific packets by flow name and sequence number.
        #[serde(default)]
        packets: Vec<FlowSeq>,
        /// Time windows [start_s, end_s) in which every packet is lost; the
        /// time is when the packet reaches the loss point (the far end of a
        /// link, or the receiving node).
        #[serde(default)]
        windows_s: Vec<[f64; 2]>,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSeq {
    pub flow: String,
    pub seq: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    pub name: String,
    /// Member nodes; each receives the group's flows (except its own).
    pub members: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowKind {
    /// Constant bit rate over UDP.
    Cbr,
    /// Poisson arrivals over UDP.
    Poisson,
    /// TCP: a finite transfer of `bytes`, or a bulk (FTP-like) source.
    Tcp,
}

/// A traffic flow from `src` to a node (`dst`) or a multicast group
/// (`group`).
///
/// Sizes: `payload_bytes` is the application payload; the packet on the
/// wire adds UDP (8 B) and IPv4 (20 B) headers. Rates (`rate_bps`) count
/// payload bits, like a codec's bit rate. A TCP flow sends MSS-sized
/// segments (see `tcp`) and also creates the flow "<name>/ack" for its ACKs.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Unique flow name.
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FlowKind,
    pub src: String,
    /// Destination node (unicast). Give exactly one of `dst` and `group`.
    #[serde(default)]
    pub dst: Option<String>,
    /// Destination multicast group.
    #[serde(default)]
    pub group: Option<String>,
    /// Application payload per packet, in bytes (cbr, poisson).
    #[serde(default)]
    pub payload_bytes: Option<u32>,
    /// tcp: bytes to transfer; absent means an unlimited (bulk) source.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// TCP options (tcp only).
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
    /// cbr: payload bit rate (give this or `interval_ms`); poisson: mean
    /// payload bit rate (give this or `rate_pps`).
    #[serde(default)]
    pub rate_bps: Option<f64>,
    /// cbr: time between packets, in milliseconds.
    #[serde(default)]
    pub interval_ms: Option<f64>,
    /// poisson: mean packets per second.
    #[serde(default)]
    pub rate_pps: Option<f64>,
    /// Start time in seconds (default 0).
    #[serde(default)]
    pub start_s: f64,
    /// Random start: the flow starts uniformly in [start_s, start_s +
    /// start_jitter_s], drawn from the flow's own random stream.
    #[serde(default)]
    pub start_jitter_s: Option<f64>,
    /// No packet is sent at or after this time (default: end of run).
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// Stop after this many packets.
    #[serde(default)]
    pub max_packets: Option<u64>,
    /// UDP source port (default 10000 + flow index).
    #[serde(default)]
    pub src_port: Option<u16>,
    /// UDP destination port (default 20000 + flow index).
    #[serde(default)]
    pub dst_port: Option<u16>,
    /// DiffServ code point, 0-63 (default 0).
    #[serde(default)]
    pub dscp: u8,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NewRenoRecoverySpec {
    #[default]
    Rfc6582,
    Ns2,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NewRenoTimer {
    #[default]
    Impatient,
    SlowButSteady,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TcpFlavor {
    /// RFC 5681 fast retransmit and fast recovery.
    Reno,
    /// RFC 6582.
    Newreno,
    /// RFC 2018 SACK with RFC 6675 loss recovery.
    #[default]
    Sack,
}

/// Initial window: a number of segments (e.g. 3, or 10 for RFC 6928) or
/// "rfc3390" for min(4*MSS, max(2*MSS, 4380 bytes)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum InitialWindowSpec {
    Segments(u32),
    Named(InitialWindowName),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InitialWindowName {
    Rfc3390,
}

/// TCP options. Defaults follow the RFCs (see docs/models/tcp.md).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Loss recovery: "reno", "newreno" or "sack" (default).
    #[serde(default)]
    pub flavor: TcpFlavor,
    /// Maximum segment size (payload bytes, default 1460).
    #[serde(default)]
    pub mss_bytes: Option<u32>,
    /// Default "rfc3390".
    #[serde(default)]
    pub initial_window: Option<InitialWindowSpec>,
    /// Cap on the window in packets (ns-2's window_), default none.
    #[serde(default)]
    pub max_window_packets: Option<u32>,
    /// Receive window in bytes (default 1048576).
    #[serde(default)]
    pub rwnd_bytes: Option<u64>,
    /// Minimum RTO in ms (RFC 6298: 1000, the default; 200 is common).
    #[serde(default)]
    pub min_rto_ms: Option<f64>,
    /// RTO before the first RTT sample, ms (default 1000).
    #[serde(default)]
    pub initial_rto_ms: Option<f64>,
    /// Maximum RTO in ms (default 60000).
    #[serde(default)]
    pub max_rto_ms: Option<f64>,
    /// Delayed ACKs at the receiver (default true).
    #[serde(default)]
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timeout in ms (default 200).
    #[serde(default)]
    pub delack_timeout_ms: Option<f64>,
    /// RFC 3042 limited transmit (default true).
    #[serde(default)]
    pub limited_transmit: Option<bool>,
    /// NewReno: reset the retransmission timer on the first partial ACK only
    /// ("impatient", RFC 6582's choice, default) or on every partial ACK
    /// ("slow_but_steady", ns-2's default).
    #[serde(default)]
    pub newreno_timer: Option<NewRenoTimer>,
    /// NewReno window rules: "rfc6582" (default) or "ns2" (ns-2's default
    /// Agent/TCP/Newreno: partial ACKs reset the window to ssthresh, full
    /// ACKs set cwnd = ssthresh, recovery halves cwnd).
    #[serde(default)]
    pub newreno_recovery: Option<NewRenoRecoverySpec>,
    /// Three-way handshake and FIN (default: on for finite transfers, off
    /// for bulk sources).
    #[serde(default)]
    pub handshake: Option<bool>,
    /// Duplicate ACK threshold (default 3).
    #[serde(default)]
    pub dupthresh: Option<u32>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RouteMetric {
    /// Every link costs 1 (unless it sets `cost`).
    #[default]
    Hops,
    /// A link costs its propagation delay in ms (unless it sets `cost`).
    Delay,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoutingSpec {
    #[serde(default)]
    pub metric: RouteMetric,
    /// Explicit unicast routes that override the computed ones.
    #[serde(default)]
    pub routes: Vec<RouteSpec>,
}

/// At `node`, send packets for `dst` to the neighbour `next_hop`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    pub node: String,
    pub dst: String,
    pub next_hop: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeasureSpec {
    /// Record a per-hop packet trace (enqueue, transmit, receive, drop,
    /// deliver). Large; off by default.
    #[serde(default)]
    pub trace: bool,
    /// Sample every queue's length at this period, in ms (off if absent).
    #[serde(default)]
    pub queue_sample_ms: Option<f64>,
    /// Windows [start_s, end_s) over which to report per-flow throughput.
    #[serde(default)]
    pub windows_s: Vec<[f64; 2]>,
    /// Write one pcap file per link (needs an output directory).
    #[serde(default)]
    pub pcap: bool,
    /// Bytes captured per packet in pcap files (0 = whole packet).
    #[serde(default)]
    pub pcap_snaplen: u32,
}
