//! Loss models behind one trait. A model sees every packet that crosses its
//! attachment point (a link direction, or a node's local delivery) and says
//! whether it is lost. Each model owns its random stream.

pub mod explicit;
pub mod gilbert;
pub mod rate;
pub mod spec;

use crate::net::Packet;
use crate::sim::SimTime;

pub use explicit::ExplicitLoss;
pub use gilbert::GilbertElliott;
pub use rate::{BitErrorRate, ByteErrorRate, PacketLossRate};
pub use spec::{LossModelSpec, LossSpec};

pub trait LossModel: Send {
    /// True if `pkt`, crossing at `now`, is lost.
    fn is_lost(&mut self, pkt: &Packet, now: SimTime) -> bool;
}

#[cfg(test)]
mod tests;
