//! Loss models in scenarios. Each model's spec type, checks and
//! construction live beside the model; this file registers them (one line
//! each).

use super::LossModel;
use crate::scenario::check::{Checker, Scope};
use crate::sim::SimRng;

/// A loss model's scenario spec.
pub trait LossModelSpec {
    /// Reports every problem, each at its field below `path`.
    fn validate(&self, path: &str, scope: &Scope<'_>, c: &mut Checker);
    /// The model for one attachment point, with its own random stream;
    /// `flow_id` maps a flow name (validated) to its id.
    fn build(&self, rng: SimRng, flow_id: &dyn Fn(&str) -> u32) -> Box<dyn LossModel>;
}

crate::model_family! {
    /// A loss model, chosen by "type".
    pub enum LossSpec: dyn LossModelSpec {
        Packet(super::rate::PacketLossSpec) = "packet",
        ByteError(super::rate::ByteErrorSpec) = "byte_error",
        BitError(super::rate::BitErrorSpec) = "bit_error",
        GilbertElliott(super::gilbert::GilbertElliottSpec) = "gilbert_elliott",
        Explicit(super::explicit::ExplicitLossSpec) = "explicit",
    }
}
