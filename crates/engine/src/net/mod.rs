//! Network: packets, nodes, links, routing.

pub mod header;
pub mod mcast;
pub mod packet;
pub mod ports;
pub mod routes;
pub mod routing;
pub mod store;
pub mod topology;
pub mod transit;

pub use header::{tcp_flags, TcpHeader};
pub use packet::{Dest, DropReason, FlowId, GroupId, LinkDirId, NodeId, Packet, Transport};
pub use store::{PacketRef, Packets};
pub use topology::{LinkDir, Node};
