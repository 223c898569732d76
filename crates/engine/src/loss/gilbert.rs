//! Gilbert-Elliott two-state Markov loss.
//!
//! The chain steps once per packet: first the state transition (Good->Bad
//! with probability `p_good_to_bad`, Bad->Good with `p_bad_to_good`), then
//! the packet is lost with the new state's loss probability. Stationary loss
//! is pi_B * loss_bad + pi_G * loss_good with pi_B = p_gb / (p_gb + p_bg);
//! with loss_bad = 1, loss_good = 0 the mean loss burst is 1 / p_bg packets.

use super::LossModel;
use crate::net::Packet;
use crate::sim::{uniform, SimRng, SimTime};

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

    /// Long-run loss probability.
    pub fn stationary_loss(&self) -> f64 {
        let pb = self.p_good_to_bad / (self.p_good_to_bad + self.p_bad_to_good);
        pb * self.loss_bad + (1.0 - pb) * self.loss_good
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
    fn kind(&self) -> &'static str {
        "gilbert_elliott"
    }
}
