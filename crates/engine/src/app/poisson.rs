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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::{drive, flow_errors, run_one_flow, udp_template};

    fn source(rate_pps: f64, max_packets: Option<u64>) -> PoissonSource {
        let tpl = udp_template(40);
        let stop = StopRule {
            stop: SimTime::from_secs(1000),
            max_packets,
        };
        PoissonSource::new(
            tpl,
            rate_pps,
            stop,
            crate::sim::RngStreams::new(7, 0).stream("p"),
        )
    }

    /// 100 packets a second for 100 s: about 10,000 (a Poisson count's
    /// standard deviation is 100), the gaps exponential (mean 10 ms, as
    /// many above the median ln 2 x 10 ms as below, a coefficient of
    /// variation of 1), numbered in order, the first a gap after the start.
    #[test]
    fn gaps_are_exponential_at_the_mean_rate() {
        let sent = drive(&mut source(100.0, None), SimTime::from_secs(100), |_| {});
        let n = sent.len() as f64;
        assert!((9_600.0..10_400.0).contains(&n), "{n}");
        assert!(sent[0].0 > SimTime::ZERO, "the first packet waits a gap");
        assert!(sent.iter().enumerate().all(|(i, (_, p))| p.seq == i as u64));
        let gaps: Vec<f64> = sent
            .windows(2)
            .map(|w| (w[1].0.as_nanos() - w[0].0.as_nanos()) as f64 / 1e9)
            .collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((mean - 0.010).abs() < 0.0004, "{mean}");
        assert!((sd / mean - 1.0).abs() < 0.05, "{}", sd / mean);
        let below = gaps.iter().filter(|&&g| g < 0.010 * 2f64.ln()).count() as f64;
        assert!((below / gaps.len() as f64 - 0.5).abs() < 0.02, "{below}");
    }

    #[test]
    fn max_packets_stops_the_source() {
        let sent = drive(&mut source(100.0, Some(5)), SimTime::from_secs(100), |_| {});
        assert_eq!(sent.len(), 5);
    }

    /// `rate_bps` is payload bits: 100 bytes at 80 kbit/s is 100 packets
    /// a second, about 1,000 in 10 s (within four standard deviations).
    #[test]
    fn a_bit_rate_gives_the_packet_rate_of_its_payload() {
        for rate in [r#""rate_bps": 80000"#, r#""rate_pps": 100"#] {
            let (sent, bytes) = run_one_flow(
                "poisson",
                &format!(r#", "payload_bytes": 100, {rate}"#),
                10.0,
            );
            assert!((874..1126).contains(&sent), "{rate}: {sent}");
            assert_eq!(bytes, sent * (100 + 28));
        }
    }

    #[test]
    fn a_flow_needs_one_of_the_rates() {
        let errs = |rate: &str| flow_errors("poisson", &format!(r#", "payload_bytes": 100{rate}"#));
        assert_eq!(errs(""), ["flows[0]: poisson needs rate_bps or rate_pps"]);
        assert_eq!(
            errs(r#", "rate_bps": 8000, "rate_pps": 10"#),
            ["flows[0]: poisson takes rate_bps or rate_pps, not both"]
        );
        let zero = errs(r#", "rate_pps": 0"#);
        assert!(
            !zero.is_empty() && zero.iter().all(|e| e.starts_with("flows[0].rate_pps")),
            "{zero:?}"
        );
        assert_eq!(errs(r#", "rate_pps": 10"#), Vec::<String>::new());
    }
}
