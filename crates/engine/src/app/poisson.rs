//! Poisson source: fixed-size packets with exponential inter-departure times.

use super::flow::{
    add_udp_sinks_and_meta, check_udp_payload, check_udp_rate, FlowCommon, FlowModel, ResolvedFlow,
};
use super::{Action, App, PacketTemplate, StopRule};
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};
use crate::sim::{SimRng, SimTime};
use rand_distr::{Distribution, Exp};
use schemars::JsonSchema;
use serde::Deserialize;

/// Poisson arrivals over UDP: `payload_bytes` packets at a mean of
/// `rate_pps` per second, or at a mean payload bit rate `rate_bps`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoissonSpec {
    /// Application payload per packet, in bytes.
    #[serde(default)]
    pub payload_bytes: Option<u32>,
    /// Mean payload bit rate (give this or `rate_pps`).
    #[serde(default)]
    pub rate_bps: Option<f64>,
    /// Mean packets per second.
    #[serde(default)]
    pub rate_pps: Option<f64>,
    /// Stop after this many packets.
    #[serde(default)]
    pub max_packets: Option<u64>,
}

impl FlowModel for PoissonSpec {
    fn validate(&self, _flow: &FlowCommon, p: &str, _scope: &Scope<'_>, c: &mut Checker) {
        check_udp_payload(p, self.payload_bytes, c);
        match (self.rate_bps, self.rate_pps) {
            (Some(r), None) => check_udp_rate(p, r, self.payload_bytes, c),
            (None, Some(x)) => {
                c.positive(format_args!("{p}.rate_pps"), x);
                c.packet_rate(format_args!("{p}.rate_pps"), x, "the mean packet rate");
            }
            (Some(_), Some(_)) => c.err(p, "poisson takes rate_bps or rate_pps, not both"),
            (None, None) => c.err(p, "poisson needs rate_bps or rate_pps"),
        }
        c.at_least_one(format_args!("{p}.max_packets"), self.max_packets);
    }

    fn build(&self, f: &ResolvedFlow<'_>, ctx: &mut BuildCtx<'_>) {
        let payload = self.payload_bytes.expect("validated");
        let pps = (self.rate_pps)
            .unwrap_or_else(|| self.rate_bps.expect("validated") / (payload as f64 * 8.0));
        let stop = StopRule {
            stop: f.stop,
            max_packets: self.max_packets,
        };
        let rng = ctx.stream(&format!("flow:{}:arrivals", f.spec.name));
        let app = PoissonSource::new(f.udp_template(payload), pps, stop, rng);
        ctx.add_app(f.src, f.start, Box::new(app));
        add_udp_sinks_and_meta(f, "poisson", ctx);
    }
}

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
