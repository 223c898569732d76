//! Nodes and point-to-point links. A full-duplex link is two independent
//! directions ("link-dirs"), each with its own rate, delay, queue and loss.

use super::packet::{LinkDirId, NodeId};
use crate::loss::LossModel;
use crate::queue::Queue;

pub struct Node {
    pub name: String,
    /// Outgoing link-dirs.
    pub out: Vec<LinkDirId>,
    /// Loss applied to packets delivered to applications on this node.
    pub receiver_loss: Option<Box<dyn LossModel>>,
    /// IPv4 address used for pcap export (10.0.0.0/8, assigned by index).
    pub addr: [u8; 4],
}

/// One direction of a link.
pub struct LinkDir {
    /// Link name and direction, e.g. `bottleneck:r1->r2`.
    pub name: String,
    /// Index of the full-duplex link this direction belongs to.
    pub link: u32,
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: u64,
    /// 1e9 / rate_bps when that is a whole number (then serialisation is a
    /// multiplication, exact), else 0.
    pub ns_per_bit: u64,
    pub delay: crate::sim::SimTime,
    pub queue: Queue,
    pub loss: Option<Box<dyn LossModel>>,
    /// Routing cost of this direction.
    pub cost: f64,
    // -- transmitter state --
    /// When the packet being serialised (if any) is fully sent.
    pub busy_until: crate::sim::SimTime,
    /// A TxDone event is scheduled (at `busy_until`).
    pub done_pending: bool,
    /// Packets on the wire (being serialised or propagating), with their
    /// arrival times, in order.
    pub in_transit: std::collections::VecDeque<(crate::sim::SimTime, crate::net::Packet)>,
    /// Sub-nanosecond remainder of serialisation times (see `sim::time::tx_time`).
    pub tx_carry: u64,
    // -- statistics --
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub busy_ns: u64,
    pub lost_packets: u64,
}

/// IPv4 address of node `i`: 10.0.0.1 + i.
pub fn node_addr(i: u32) -> [u8; 4] {
    let v = 0x0A00_0001u32 + i;
    v.to_be_bytes()
}

/// Multicast address of group `g`: 239.1.0.1 + g.
pub fn group_addr(g: u32) -> [u8; 4] {
    let v = 0xEF01_0001u32 + g;
    v.to_be_bytes()
}
