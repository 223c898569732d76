//! Network: packets, nodes, links, routing.

pub mod addr;
pub mod disjoint;
pub mod dynamics;
pub mod header;
pub mod mcast;
pub mod packet;
pub mod payload;
pub mod ports;
pub mod routes;
pub mod routing;
pub mod spare;
pub mod store;
pub mod transit;

pub use header::{tcp_flags, TcpHeader};
pub use packet::{
    Dest, DropReason, DropReasons, FlowId, GroupId, LinkDirId, NodeId, Packet, Transport,
};
pub use payload::{AppPayload, Payload};
pub use store::{PacketRef, Packets};
