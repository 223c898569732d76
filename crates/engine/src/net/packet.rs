//! The packet: a small plain struct. No byte buffers on the hot path; real
//! byte formats live in `wire/` and are produced only for pcap export.

use super::header::TcpHeader;
use super::payload::Payload;
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
    /// What the application put in the payload, opaque to the network.
    pub app: Payload,
}

impl Packet {
    pub fn payload_bytes(&self) -> u32 {
        self.size_bytes - IPV4_HEADER_BYTES - self.transport.header_bytes()
    }
}

/// Why a packet was dropped. Every drop carries one: one of the network's
/// own reasons below, or one that a queue discipline declares beside its
/// code (`QueueModel::DROP_REASONS`, e.g. `red_early`). Each reason a run
/// can give is a `dropped_<name>` column of its tables.
#[derive(Clone, Copy, Debug)]
pub struct DropReason(&'static str);

// Drops are counted per reason on the hot path: the same constant's name
// is one string in the binary, so comparing addresses settles the usual
// case; equal names at different addresses still compare equal.
impl PartialEq for DropReason {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0) || self.0 == other.0
    }
}
impl Eq for DropReason {}

impl DropReason {
    /// A reason named `name` (lower case, a column name's suffix).
    pub const fn new(name: &'static str) -> Self {
        DropReason(name)
    }
    /// The queue was full (drop-tail overflow).
    pub const QUEUE_OVERFLOW: DropReason = DropReason("queue_overflow");
    /// Lost on a link by its loss model (bit/byte errors, random loss...).
    pub const LINK_LOSS: DropReason = DropReason("link_loss");
    /// Lost at the receiving node by its loss model.
    pub const RECEIVER_LOSS: DropReason = DropReason("receiver_loss");
    /// No route from the node to the destination.
    pub const NO_ROUTE: DropReason = DropReason("no_route");
    /// Reached its destination node, but no application listens on the port.
    pub const NO_LISTENER: DropReason = DropReason("no_listener");
    /// The link direction was down (outages): the packet being sent, those
    /// on the wire or in the queue as the link's outage policy says.
    pub const LINK_DOWN: DropReason = DropReason("link_down");

    /// The network's own reasons, first in every run's list.
    pub const NET: [DropReason; 6] = [
        Self::QUEUE_OVERFLOW,
        Self::LINK_LOSS,
        Self::RECEIVER_LOSS,
        Self::NO_ROUTE,
        Self::NO_LISTENER,
        Self::LINK_DOWN,
    ];

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// The reasons a run counts, in column order: the network's own, then the
/// queue disciplines' in their registration order. A reason's position is
/// its code in the run's tables.
#[derive(Clone, Debug, PartialEq)]
pub struct DropReasons(Vec<DropReason>);

impl DropReasons {
    /// The network's reasons followed by `more` (repeats left out).
    pub fn new(more: impl IntoIterator<Item = DropReason>) -> Self {
        let mut v = DropReason::NET.to_vec();
        for r in more {
            if !v.contains(&r) {
                v.push(r);
            }
        }
        // Drop logs keep a reason's position in one byte.
        assert!(v.len() <= 256, "at most 256 drop reasons");
        DropReasons(v)
    }

    /// The position of `r` (a drop with a reason no model declared is a
    /// bug, found by the tests that run every discipline).
    #[inline]
    pub fn index(&self, r: DropReason) -> usize {
        self.0
            .iter()
            .position(|&x| x == r)
            .unwrap_or_else(|| panic!("drop reason {:?} is not declared by any model", r.0))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = DropReason> + '_ {
        self.0.iter().copied()
    }
}

impl Default for DropReasons {
    fn default() -> Self {
        Self::new([])
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
    /// Packets stay put in the store, but a packet's size is the store's
    /// footprint per packet in flight.
    #[test]
    fn a_packet_stays_small() {
        assert_eq!(std::mem::size_of::<super::Packet>(), 80);
    }
}

#[cfg(test)]
mod reason_tests {
    use super::*;

    /// The network's six reasons come first in their order, then the
    /// models' in the order declared, each once; a reason's position is
    /// its code, found by name as well as by address.
    #[test]
    fn a_reasons_code_is_its_position_in_the_runs_list() {
        let red = DropReason::new("red_early");
        let codel = DropReason::new("codel_drop");
        let r = DropReasons::new([red, codel, red, DropReason::LINK_LOSS]);
        let names: Vec<&str> = r.iter().map(DropReason::as_str).collect();
        let net: Vec<&str> = DropReason::NET.iter().map(|x| x.as_str()).collect();
        assert_eq!(
            (&names[..6], &names[6..]),
            (&net[..], &["red_early", "codel_drop"][..])
        );
        assert_eq!((r.len(), r.is_empty()), (8, false));
        let codes: Vec<usize> = r.iter().map(|x| r.index(x)).collect();
        assert_eq!(codes, (0..8).collect::<Vec<_>>());
        let elsewhere: &'static str = Box::leak(String::from("red_early").into_boxed_str());
        assert_eq!(r.index(DropReason::new(elsewhere)), 6);
        assert_eq!(DropReasons::default().len(), 6);
    }

    #[test]
    #[should_panic(expected = "is not declared by any model")]
    fn a_drop_with_an_undeclared_reason_is_a_bug() {
        DropReasons::default().index(DropReason::new("made_up"));
    }

    /// A packet's payload is what its size leaves after the IPv4 header
    /// and its transport's: UDP 8 bytes; TCP 20, and its options.
    #[test]
    fn the_payload_is_the_size_less_the_headers() {
        let mut p = test_packet(0, 0, 1028);
        assert_eq!(p.payload_bytes(), 1000);
        p.transport = Transport::Tcp(Box::new(TcpHeader {
            flags: super::super::header::tcp_flags::SYN,
            ..TcpHeader::default()
        }));
        assert_eq!(p.payload_bytes(), 1028 - 20 - 32);
        assert!(ecn::capable(ecn::ECT0) && ecn::capable(ecn::CE) && !ecn::capable(ecn::NOT_ECT));
    }
}
