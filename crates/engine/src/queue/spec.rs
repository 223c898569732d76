//! Queue disciplines in scenarios. Each discipline's spec type, checks and
//! construction live in its own file; this file registers them (one line
//! each) and builds the queue of a link direction.

use super::{DropTail, Queue, QueueDiscipline};
use crate::net::{DropReason, DropReasons};
use crate::scenario::check::Checker;
use crate::sim::{RngStreams, SimRng};

/// What a discipline may use when it is built for one link direction.
pub struct QueueSite<'a> {
    pub rng: &'a RngStreams,
    /// The link direction's name, e.g. "bottleneck:r1->r2".
    pub name: &'a str,
    pub rate_bps: u64,
}

impl QueueSite<'_> {
    /// The discipline's own random stream (for randomised drops).
    pub fn stream(&self) -> SimRng {
        self.rng.stream(&format!("link:{}:queue", self.name))
    }
}

/// A queue discipline's scenario spec.
pub trait QueueModel {
    /// Reports every problem, each at its field below `path`; `rate_bps`
    /// is the rate of the link direction(s) the queue serves (the lowest
    /// where a link-wide queue serves two).
    fn validate(&self, path: &str, rate_bps: f64, c: &mut Checker);
    /// A fresh discipline for one link direction.
    fn build(&self, site: &QueueSite<'_>) -> Box<dyn QueueDiscipline>;
}

/// The drop reasons a discipline gives besides the network's own
/// ([`DropReason::NET`]); each becomes a `dropped_<name>` column. Declared
/// beside the discipline's spec (`impl Drops for RedSpec`), with none by
/// default.
pub trait Drops {
    const DROP_REASONS: &'static [DropReason] = &[];
}

/// Every reason a run may count, in column order: the network's, then the
/// registered disciplines'.
pub fn drop_reasons() -> DropReasons {
    DropReasons::new(QueueSpec::declared_drop_reasons())
}

crate::model_family! {
    /// A queue discipline, chosen by "type".
    pub enum QueueSpec: dyn QueueModel {
        Droptail(super::droptail::DropTailSpec) = "droptail",
        DropHead(super::drophead::DropHeadSpec) = "drophead",
        Red(super::red::RedSpec) = "red",
        Wred(super::wred::WredSpec) = "wred",
        Drr(super::classes::DrrSpec) = "drr",
        Priority(super::classes::PrioritySpec) = "priority",
        Codel(super::codel::CodelSpec) = "codel",
        FqCodel(super::fq_codel::FqCodelSpec) = "fq_codel",
        Pie(super::pie::PieSpec) = "pie",
        DualPi2(super::dualpi2::DualPi2Spec) = "dualpi2",
    }
    each declares Drops::DROP_REASONS: [DropReason] => declared_drop_reasons;
}

/// Transmit queue of a link direction that gives none: drop-tail of this
/// many packets.
pub const DEFAULT_QUEUE_PACKETS: u64 = 100;

/// The queue of one link direction.
pub fn build_queue(spec: Option<&QueueSpec>, site: &QueueSite<'_>) -> Queue {
    match spec {
        None => Queue::new(Box::new(DropTail::packets(DEFAULT_QUEUE_PACKETS as usize))),
        Some(s) => Queue::new(s.model().build(site)),
    }
}

#[cfg(test)]
mod tests {
    /// The columns every run's tables give, in order: the network's
    /// reasons, then those the registered disciplines declare, each once
    /// (WRED shares RED's, FQ-CoDel CoDel's).
    #[test]
    fn every_run_counts_the_same_reasons_in_registration_order() {
        let names: Vec<&str> = super::drop_reasons().iter().map(|r| r.as_str()).collect();
        assert_eq!(
            names,
            [
                "queue_overflow",
                "link_loss",
                "receiver_loss",
                "no_route",
                "no_listener",
                "link_down",
                "red_early",
                "red_forced",
                "codel",
                "pie",
                "dualpi2"
            ]
        );
    }
}
