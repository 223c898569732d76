//! Nodes and point-to-point links as the event loop drives them. A
//! full-duplex link is two independent directions ("link-dirs"), each with
//! its own rate, delay, queue and loss. They sit above `net`, `queue` and
//! `loss`: a link direction holds its queue (inline, on its own cache
//! lines) and its loss model.

use crate::loss::LossModel;
use crate::net::{LinkDirId, NodeId};
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
///
/// Laid out for the packet path (`repr(C)`, declaration order, each link
/// direction on its own cache lines): a packet crossing an idle link reads
/// and writes the first three lines only, the transmitter and the wire
/// with its first packet inline (line 0), where the wire leads, the
/// serialisation rate and the counters (line 1), and the queue's length
/// and pass-through counters (line 2; the queue's departures are also the
/// link's transmissions, counted once there). In Rust's own
/// order these were spread over five or six lines of a 400-byte struct,
/// and with a few hundred flows the lines a round trip touches no longer
/// stay in the nearest caches.
#[repr(C, align(64))]
pub struct LinkDir {
    // -- line 0: transmitter and wire --
    /// When the packet being serialised (if any) is fully sent.
    pub busy_until: crate::sim::SimTime,
    pub delay: crate::sim::SimTime,
    /// Packets on the wire (being serialised or propagating), with their
    /// arrival times, in order.
    pub in_transit: crate::net::transit::InTransit,
    // -- line 1 --
    pub to: NodeId,
    /// Index of the full-duplex link this direction belongs to.
    pub link: u32,
    pub loss: Option<Box<dyn LossModel>>,
    pub busy_ns: u64,
    pub rate_bps: u64,
    /// 1e9 / rate_bps when that is a whole number (then serialisation is a
    /// multiplication, exact), else 0.
    pub ns_per_bit: u64,
    /// Sub-nanosecond remainder of serialisation times (see `sim::time::tx_time`).
    pub tx_carry: u64,
    /// A TxDone event is scheduled (at `busy_until`).
    pub done_pending: bool,
    /// The direction's rate, delay or state changes: packets take the
    /// changing-link path (`world::dynamic`, `dynamics` below).
    pub dynamic: bool,
    /// The far end belongs to another partition of a split run: packets
    /// are handed over to it as they go on the wire (`world::partition`).
    pub cut: bool,
    // -- line 2 on: the queue, its hot fields first --
    pub queue: Queue,
    // -- cold --
    pub from: NodeId,
    /// Link name and direction, e.g. `bottleneck:r1->r2`.
    pub name: String,
    /// Routing cost of this direction.
    pub cost: f64,
    pub lost_packets: u64,
    pub dynamics: Option<Box<crate::net::dynamics::LinkDynamics>>,
}

#[cfg(test)]
mod layout_tests {
    use super::LinkDir;
    use std::mem::{align_of, offset_of, size_of};

    /// What a packet crossing an idle link touches stays on the link
    /// direction's first three cache lines (see `LinkDir`).
    #[test]
    fn the_packet_path_fills_the_first_three_lines() {
        assert_eq!(align_of::<LinkDir>(), 64);
        let line = |off: usize| off / 64;
        for off in [offset_of!(LinkDir, busy_until), offset_of!(LinkDir, delay)] {
            assert_eq!(line(off), 0);
        }
        let wire = offset_of!(LinkDir, in_transit);
        let wire_end = wire + size_of::<crate::net::transit::InTransit>();
        assert!(line(wire) == 0 && wire_end <= 64);
        for off in [
            offset_of!(LinkDir, to),
            offset_of!(LinkDir, link),
            offset_of!(LinkDir, loss),
            offset_of!(LinkDir, busy_ns),
            offset_of!(LinkDir, ns_per_bit),
            offset_of!(LinkDir, tx_carry),
            offset_of!(LinkDir, done_pending),
            offset_of!(LinkDir, dynamic),
            offset_of!(LinkDir, cut),
        ] {
            assert_eq!(line(off), 1);
        }
        assert_eq!(
            offset_of!(LinkDir, queue),
            128,
            "the queue's hot line is line 2"
        );
    }
}
