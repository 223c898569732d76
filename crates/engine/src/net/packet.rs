//! The packet: a small plain struct. No byte buffers on the hot path; real
//! byte formats live in `wire/` and are produced only for pcap export.

use super::header::TcpHeader;
use crate::sim::SimTime;

pub type NodeId = u32;
pub type LinkDirId = u32;
pub type FlowId = u32;
pub type GroupId = u32;

/// The ECN codepoints of the IP header (RFC 3168 5).
pub mod ecn {
    pub const NOT_ECT: u8 = 0b00;
    pub const ECT1: u8 = 0b01;
    pub const ECT0: u8 = 0b10;
    pub const CE: u8 = 0b11;

    /// The sender declared the transport ECN-capable (ECT(0), ECT(1) or CE).
    pub fn capable(field: u8) -> bool {
        field != NOT_ECT
    }
}

/// IPv4 header bytes (no options).
pub const IPV4_HEADER_BYTES: u32 = 20;
/// UDP header bytes.
pub const UDP_HEADER_BYTES: u32 = 8;

/// Where a packet is going.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dest {
    /// One node (unicast).
    Node(NodeId),
    /// A multicast group, delivered along the shortest-path tree `tree`
    /// rooted at the sender (stamped by the engine at origination).
    Group { group: GroupId, tree: u32 },
}

/// The transport header carried, enough to account sizes and write pcap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    Udp,
    // Boxed: a TCP header with its SACK blocks is most of a packet's size,
    // and packets are moved several times per hop.
    Tcp(Box<TcpHeader>),
}

impl Transport {
    pub fn header_bytes(&self) -> u32 {
        match self {
            Transport::Udp => UDP_HEADER_BYTES,
            Transport::Tcp(h) => h.header_bytes(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Packet {
    /// Unique per packet originated in a run; multicast copies share it.
    pub id: u64,
    pub flow: FlowId,
    /// Per-flow sequence number, starting at 0.
    pub seq: u64,
    /// Size on the wire: IPv4 total length (IP header + transport + payload).
    pub size_bytes: u32,
    pub src: NodeId,
    pub dst: Dest,
    pub src_port: u16,
    pub dst_port: u16,
    /// DiffServ code point (6 bits).
    pub dscp: u8,
    /// ECN field (2 bits, RFC 3168 5): [`ecn::NOT_ECT`], [`ecn::ECT0`],
    /// [`ecn::ECT1`] or [`ecn::CE`].
    pub ecn: u8,
    /// When the application handed the packet to the network.
    pub created_at: SimTime,
    pub transport: Transport,
    /// Application header carried in the payload (RTP, RTCP), if any.
    pub app: AppData,
}

/// What an application put in the payload, for the receiving application
/// and for pcap export. RTCP compounds are shared (`Arc`): they keep the
/// packet small, and the copies a multicast tree makes of one compound (one
/// per member of a large session) share it instead of allocating each.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum AppData {
    #[default]
    None,
    /// `repair`: a NEWPRED repair answering feedback sent at that time.
    Rtp {
        ssrc: u32,
        seq: u16,
        timestamp: u32,
        repair: Option<SimTime>,
    },
    Rtcp(std::sync::Arc<RtcpCompound>),
    /// A media-scaling data packet: the sender's scale, the frame it
    /// belongs to, and the echo of the receiver's last request (its send
    /// time, and how long the sender held it before this packet).
    ScaledMedia {
        scale: u8,
        frame: u32,
        // Boxed, as the feedback variants below: they would make every
        // packet 8 bytes larger.
        echo: Option<Box<(SimTime, SimTime)>>,
    },
    /// A media-scaling receiver's request for a scale, stamped with its
    /// send time.
    ScaleRequest {
        scale: u8,
        sent_at: SimTime,
    },
    /// TFRC data header (RFC 5348 3.2.1).
    TfrcData(crate::proto::tfrc::DataHeader),
    /// TFRC feedback (RFC 5348 3.2.2).
    TfrcFeedback(Box<crate::proto::tfrc::Feedback>),
    /// A PPACC receiver's report (an estimate or a loss notice).
    PpaccReport(Box<crate::proto::ppacc::endpoints::Report>),
    /// An SVC packet: TFRC's header and the NAL fragment it carries.
    SvcData(Box<crate::app::svc::source::SvcInfo>),
    /// An SVC FEC repair packet.
    SvcRepair(Box<crate::app::svc::source::RepairInfo>),
    /// RMTP data (the packet's `seq`; `created_at` is its first
    /// transmission): `retx` for a sender's retransmission or a DR's
    /// local repair.
    RmtpData {
        retx: bool,
    },
    /// An RMTP HACK from child `child` of the DR or sender it goes to.
    RmtpHack(Box<(u32, crate::proto::rmtp::HackReport)>),
}

/// One report block, with LSR and DLSR as simulated times (exported as NTP
/// short format).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtcpReport {
    pub ssrc: u32,
    pub fraction_lost: u8,
    pub cumulative_lost: i32,
    pub ext_highest_seq: u32,
    pub jitter: u32,
    /// When the reported source's last SR was sent (its NTP timestamp).
    pub lsr: Option<SimTime>,
    /// Delay since that SR arrived.
    pub dlsr: SimTime,
}

/// A compound RTCP packet's contents.
#[derive(Clone, Debug, PartialEq)]
pub struct RtcpCompound {
    pub ssrc: u32,
    /// Sender info (SR) when the member sent RTP recently or sends SRs.
    pub sender: Option<(u32, u32)>,
    pub reports: Vec<RtcpReport>,
    /// Generic NACK feedback: (media SSRC, lost sequence numbers).
    pub nacks: Vec<(u32, Vec<u16>)>,
    /// Feedback sent as application-layer feedback (PSFB AFB) with one
    /// 4-byte NACK per lost segment (NEWPRED) instead of Generic NACK.
    pub app_layer_fb: bool,
    pub bye: bool,
    pub early: bool,
    pub cname: String,
}

impl Packet {
    pub fn payload_bytes(&self) -> u32 {
        self.size_bytes - IPV4_HEADER_BYTES - self.transport.header_bytes()
    }
}

/// Why a packet was dropped. Every drop carries one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The queue was full (drop-tail overflow).
    QueueOverflow,
    /// Lost on a link by its loss model (bit/byte errors, random loss...).
    LinkLoss,
    /// Lost at the receiving node by its loss model.
    ReceiverLoss,
    /// No route from the node to the destination.
    NoRoute,
    /// Reached its destination node, but no application listens on the port.
    NoListener,
    /// RED's random early drop (average queue between the thresholds).
    RedEarly,
    /// RED's forced drop (average queue above max_th, or twice it in
    /// gentle mode).
    RedForced,
    /// CoDel's (or FQ-CoDel's) drop from the head of a queue.
    Codel,
    /// PIE's random drop on enqueue.
    Pie,
}

impl DropReason {
    pub const ALL: [DropReason; 9] = [
        DropReason::QueueOverflow,
        DropReason::LinkLoss,
        DropReason::ReceiverLoss,
        DropReason::NoRoute,
        DropReason::NoListener,
        DropReason::RedEarly,
        DropReason::RedForced,
        DropReason::Codel,
        DropReason::Pie,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::QueueOverflow => "queue_overflow",
            DropReason::LinkLoss => "link_loss",
            DropReason::ReceiverLoss => "receiver_loss",
            DropReason::NoRoute => "no_route",
            DropReason::NoListener => "no_listener",
            DropReason::RedEarly => "red_early",
            DropReason::RedForced => "red_forced",
            DropReason::Codel => "codel",
            DropReason::Pie => "pie",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// A UDP packet of `size` bytes for tests: flow `flow`, sequence `seq`
/// (also its id), from node 0 to node 1.
#[cfg(test)]
pub fn test_packet(flow: FlowId, seq: u64, size: u32) -> Packet {
    Packet {
        id: seq,
        flow,
        seq,
        size_bytes: size,
        src: 0,
        dst: Dest::Node(1),
        src_port: 1,
        dst_port: 2,
        dscp: 0,
        ecn: ecn::NOT_ECT,
        created_at: crate::sim::SimTime::ZERO,
        transport: Transport::Udp,
        app: Default::default(),
    }
}

#[cfg(test)]
mod size_tests {
    /// Packets are moved several times per hop: the payload variants that
    /// only some applications use are boxed to keep every packet small.
    #[test]
    fn app_data_stays_small() {
        assert!(std::mem::size_of::<super::AppData>() <= 32);
    }
}
