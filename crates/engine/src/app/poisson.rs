//! Poisson source: fixed-size packets with exponential inter-departure times.

use super::{Action, App, PacketTemplate, StopRule};
use crate::sim::{SimRng, SimTime};
use rand_distr::{Distribution, Exp};

pub struct PoissonSource {
    tpl: PacketTemplate,
    exp: Exp<f64>,
    rng: SimRng,
    stop: StopRule,
    next_seq: u64,
}

impl PoissonSource {
    /// `rate_pps` must be positive and finite (the scenario validator checks).
    pub fn new(tpl: PacketTemplate, rate_pps: f64, stop: StopRule, rng: SimRng) -> Self {
        let exp = Exp::new(rate_pps).expect("validated rate");
        PoissonSource {
            tpl,
            exp,
            rng,
            stop,
            next_seq: 0,
        }
    }

    fn gap(&mut self) -> SimTime {
        SimTime::from_secs_f64(self.exp.sample(&mut self.rng))
    }
}

impl App for PoissonSource {
    /// A Poisson process started at `now`: the first packet comes one
    /// exponential gap later.
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let at = now + self.gap();
        out.push(Action::Timer { at, token: 0 });
    }

    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        if !self.stop.allows(now, self.next_seq) {
            return;
        }
        out.push(Action::Send(self.tpl.make(self.next_seq)));
        self.next_seq += 1;
        let at = now + self.gap();
        out.push(Action::Timer { at, token: 0 });
    }
}
