//! Constant bit rate source: one packet of fixed size every `interval`.

use super::flow::{
    add_udp_sinks_and_meta, check_udp_payload, check_udp_rate, FlowCommon, FlowModel, ResolvedFlow,
};
use super::{Action, App, PacketTemplate, StopRule};
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::Deserialize;

/// Constant bit rate over UDP: `payload_bytes` every `interval_ms`, or at
/// `rate_bps` (payload bits).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CbrSpec {
    /// Application payload per packet, in bytes.
    #[serde(default)]
    pub payload_bytes: Option<u32>,
    /// Payload bit rate (give this or `interval_ms`).
    #[serde(default)]
    pub rate_bps: Option<f64>,
    /// Time between packets, in milliseconds.
    #[serde(default)]
    pub interval_ms: Option<f64>,
    /// Stop after this many packets.
    #[serde(default)]
    pub max_packets: Option<u64>,
}

impl FlowModel for CbrSpec {
    fn validate(&self, _flow: &FlowCommon, p: &str, _scope: &Scope<'_>, c: &mut Checker) {
        check_udp_payload(p, self.payload_bytes, c);
        match (self.rate_bps, self.interval_ms) {
            (Some(r), None) => check_udp_rate(p, r, self.payload_bytes, c),
            (None, Some(x)) => c.interval_ms(format_args!("{p}.interval_ms"), x),
            (Some(_), Some(_)) => c.err(p, "cbr takes rate_bps or interval_ms, not both"),
            (None, None) => c.err(p, "cbr needs rate_bps or interval_ms"),
        }
        c.at_least_one(format_args!("{p}.max_packets"), self.max_packets);
    }

    fn build(&self, f: &ResolvedFlow<'_>, ctx: &mut BuildCtx<'_>) {
        let payload = self.payload_bytes.expect("validated");
        let interval = match (self.interval_ms, self.rate_bps) {
            (Some(ms), _) => SimTime::from_millis_f64(ms),
            (None, Some(r)) => SimTime::from_secs_f64(payload as f64 * 8.0 / r),
            (None, None) => unreachable!("validated"),
        };
        if interval == SimTime::ZERO {
            let msg = "packet interval rounds to 0 ns: rate too high for the packet size";
            ctx.err(&f.path, msg);
        }
        let stop = StopRule {
            stop: f.stop,
            max_packets: self.max_packets,
        };
        let app = CbrSource::new(f.udp_template(payload), interval, stop);
        ctx.add_app(f.src, f.start, Box::new(app));
        add_udp_sinks_and_meta(f, "cbr", ctx);
    }
}

pub struct CbrSource {
    tpl: PacketTemplate,
    interval: SimTime,
    stop: StopRule,
    next_seq: u64,
}

impl CbrSource {
    pub fn new(tpl: PacketTemplate, interval: SimTime, stop: StopRule) -> Self {
        CbrSource {
            tpl,
            interval,
            stop,
            next_seq: 0,
        }
    }

    fn emit(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if !self.stop.allows(now, self.next_seq) {
            return;
        }
        out.push(Action::Send(self.tpl.make(self.next_seq)));
        self.next_seq += 1;
        out.push(Action::Timer {
            at: now + self.interval,
            token: 0,
        });
    }
}

impl App for CbrSource {
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.emit(now, out);
    }
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        self.emit(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::{flow_errors, run_one_flow, udp_template};

    #[test]
    fn sends_every_interval_until_stop() {
        let tpl = udp_template(40);
        let stop = StopRule {
            stop: SimTime::from_millis(60),
            max_packets: None,
        };
        let mut app = CbrSource::new(tpl, SimTime::from_millis(20), stop);
        let mut out = Vec::new();
        app.on_start(SimTime::ZERO, &mut out);
        let mut now = SimTime::ZERO;
        let mut seqs = Vec::new();
        let mut pending: std::collections::VecDeque<Action> = out.drain(..).collect();
        while let Some(a) = pending.pop_front() {
            match a {
                Action::Timer { at, .. } => {
                    now = at;
                    app.on_timer(now, 0, &mut out);
                    pending.extend(out.drain(..));
                }
                Action::Send(p) => {
                    assert_eq!(p.size_bytes, 40 + 28);
                    seqs.push((p.seq, now));
                }
            }
        }
        assert_eq!(
            seqs,
            vec![
                (0, SimTime::ZERO),
                (1, SimTime::from_millis(20)),
                (2, SimTime::from_millis(40))
            ]
        );
    }

    /// `rate_bps` gives the interval payload x 8 / rate: 100 bytes at 8
    /// kbit/s is a packet every 100 ms, so 10 in 1 s (from 0 to 0.9 s).
    #[test]
    fn a_rate_gives_the_interval_of_its_payload() {
        let run =
            |rate: &str| run_one_flow("cbr", &format!(r#", "payload_bytes": 100, {rate}"#), 1.0);
        let (sent, bytes) = run(r#""rate_bps": 8000"#);
        assert_eq!(sent, 10);
        assert_eq!(bytes, 10 * (100 + 28));
        assert_eq!(run(r#""interval_ms": 100"#).0, 10);
        assert_eq!(run(r#""rate_bps": 80000"#).0, 100);
    }

    #[test]
    fn a_flow_needs_one_of_rate_and_interval_and_a_payload() {
        let errs = |fields: &str| flow_errors("cbr", fields);
        assert_eq!(
            errs(r#", "payload_bytes": 100"#),
            ["flows[0]: cbr needs rate_bps or interval_ms"]
        );
        assert_eq!(
            errs(r#", "payload_bytes": 100, "rate_bps": 8000, "interval_ms": 10"#),
            ["flows[0]: cbr takes rate_bps or interval_ms, not both"]
        );
        let no_payload = errs(r#", "interval_ms": 10"#);
        assert!(
            no_payload.len() == 1 && no_payload[0].starts_with("flows[0].payload_bytes"),
            "{no_payload:?}"
        );
        let zero = errs(r#", "payload_bytes": 100, "interval_ms": 10, "max_packets": 0"#);
        assert!(
            zero.len() == 1 && zero[0].starts_with("flows[0].max_packets"),
            "{zero:?}"
        );
        assert_eq!(
            errs(r#", "payload_bytes": 100, "interval_ms": 10"#),
            Vec::<String>::new()
        );
    }
}
