//! Controllers in scenarios: each controller's spec, checks and
//! construction live in its own file; this file registers them (one line
//! each).

use super::{FeedbackReceiver, RateController};
use crate::scenario::check::Checker;
use crate::sim::{RngStreams, SimRng, SimTime};

/// What a controller may use when it is built for one flow.
pub struct CcSite<'a> {
    pub rng: &'a RngStreams,
    /// The flow's name.
    pub flow: &'a str,
    /// The flow's data packet size on the wire.
    pub packet_bytes: u32,
    /// The media's discrete levels, their rates on the wire in bit/s
    /// (empty for media without levels).
    pub levels_bps: &'a [f64],
    /// The media's longest gap between packets at any level, if it has
    /// frames (a floor for a receiver's control RTT).
    pub longest_interval: Option<SimTime>,
}

#[cfg(test)]
impl<'a> CcSite<'a> {
    /// The site of a controller driven alone in a unit test: flow "f",
    /// media without levels or frames.
    pub fn alone(rng: &'a RngStreams, packet_bytes: u32) -> Self {
        CcSite {
            rng,
            flow: "f",
            packet_bytes,
            levels_bps: &[],
            longest_interval: None,
        }
    }
}

/// What a controller may check its spec against before the run: the shape
/// of the media it will drive.
#[derive(Clone, Copy, Debug, Default)]
pub struct CcMedia {
    /// The media's discrete levels (0: none, the media follows a rate).
    pub levels: usize,
    /// Per-packet feedback (RFC 8888 or transport-wide) comes back about
    /// the media (an RTP member's `feedback`).
    pub packet_feedback: bool,
    /// The media goes through a pacer (an RTP member's `pacer`).
    pub pacer: bool,
}

impl CcSite<'_> {
    /// The controller's own random stream, `flow:<name>:<what>`.
    pub fn stream(&self, what: &str) -> SimRng {
        self.rng.stream(&format!("flow:{}:{what}", self.flow))
    }
}

/// A controller's scenario spec.
pub trait CcModel {
    /// Reports every problem, each at its field below `path`, for media
    /// of the shape `media`.
    fn validate(&self, path: &str, media: CcMedia, c: &mut Checker);
    /// The two halves for one flow: the sender's and the receiver's.
    fn build(&self, site: &CcSite<'_>) -> (Box<dyn RateController>, Box<dyn FeedbackReceiver>);
    /// Its receiving half returns feedback of its own (so per-packet
    /// feedback cannot share the feedback flow).
    fn own_feedback(&self) -> bool {
        true
    }
}

crate::model_family! {
    /// A rate controller, chosen by "type".
    pub enum CcSpec: dyn CcModel {
        Tfrc(super::tfrc::TfrcCcSpec) = "tfrc",
        Ppacc(super::ppacc::PpaccSpec) = "ppacc",
        Fixed(super::fixed::FixedSpec) = "fixed",
        Scale(super::scale::ScaleCcSpec) = "scale",
        Gcc(super::gcc::GccSpec) = "gcc",
        Nada(super::nada::NadaSpec) = "nada",
        Scream(super::scream::ScreamSpec) = "scream",
    }
}
