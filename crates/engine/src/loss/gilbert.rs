//! Gilbert-Elliott two-state Markov loss.
//!
//! The chain steps once per packet: first the state transition (Good->Bad
//! with probability `p_good_to_bad`, Bad->Good with `p_bad_to_good`), then
//! the packet is lost with the new state's loss probability. Stationary loss
//! is pi_B * loss_bad + pi_G * loss_good with pi_B = p_gb / (p_gb + p_bg);
//! with loss_bad = 1, loss_good = 0 the mean loss burst is 1 / p_bg packets.

use super::spec::LossModelSpec;
use super::LossModel;
use crate::net::Packet;
use crate::scenario::check::{Checker, Scope};
use crate::sim::{uniform, SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

/// Two-state Markov chain stepped once per packet.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottSpec {
    pub p_good_to_bad: f64,
    pub p_bad_to_good: f64,
    /// Loss probability in the good state (default 0).
    #[serde(default)]
    pub loss_good: Option<f64>,
    /// Loss probability in the bad state (default 1).
    #[serde(default)]
    pub loss_bad: Option<f64>,
}

impl LossModelSpec for GilbertElliottSpec {
    fn validate(&self, path: &str, _scope: &Scope<'_>, c: &mut Checker) {
        c.probability(format_args!("{path}.p_good_to_bad"), self.p_good_to_bad);
        c.probability(format_args!("{path}.p_bad_to_good"), self.p_bad_to_good);
        if let Some(x) = self.loss_good {
            c.probability(format_args!("{path}.loss_good"), x);
        }
        if let Some(x) = self.loss_bad {
            c.probability(format_args!("{path}.loss_bad"), x);
        }
        if self.p_good_to_bad + self.p_bad_to_good <= 0.0 {
            c.err(path, "p_good_to_bad and p_bad_to_good must not both be 0");
        }
    }
    fn build(&self, rng: SimRng, _flow_id: &dyn Fn(&str) -> u32) -> Box<dyn LossModel> {
        Box::new(GilbertElliott::new(
            self.p_good_to_bad,
            self.p_bad_to_good,
            self.loss_good.unwrap_or(0.0),
            self.loss_bad.unwrap_or(1.0),
            rng,
        ))
    }
}

pub struct GilbertElliott {
    p_good_to_bad: f64,
    p_bad_to_good: f64,
    loss_good: f64,
    loss_bad: f64,
    bad: bool,
    rng: SimRng,
}

impl GilbertElliott {
    pub fn new(
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_good: f64,
        loss_bad: f64,
        rng: SimRng,
    ) -> Self {
        GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_good,
            loss_bad,
            bad: false,
            rng,
        }
    }
}

impl LossModel for GilbertElliott {
    fn is_lost(&mut self, _pkt: &Packet, _now: SimTime) -> bool {
        let u = uniform(&mut self.rng);
        self.bad = if self.bad {
            u >= self.p_bad_to_good
        } else {
            u < self.p_good_to_bad
        };
        let h = if self.bad {
            self.loss_bad
        } else {
            self.loss_good
        };
        uniform(&mut self.rng) < h
    }
}
