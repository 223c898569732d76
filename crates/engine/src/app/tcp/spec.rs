//! TCP flows in scenarios: the flow's fields and TCP options, their
//! checks, the mapping onto [`TcpConfig`], and construction (a source, a
//! sink, and the flow "<name>/ack" for the ACKs).

use super::transfers::{Transfers, TransfersSpec};
use super::{TcpSink, TcpSource};
use crate::app::flow::{
    add_flow_pair_meta, claim_and_add, return_template, FlowCommon, FlowModel, ResolvedFlow,
};
use crate::proto::tcp::{Flavor, InitialWindow, NewRenoRecovery, TcpConfig};
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::Deserialize;

/// TCP: a finite transfer of `bytes`, or a bulk (FTP-like) source. It
/// sends MSS-sized segments (see `tcp`).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpFlowSpec {
    /// Bytes to transfer; absent means an unlimited (bulk) source.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// Instead of `bytes`: successive transfers, each on a new
    /// connection, with exponential idle times between them.
    #[serde(default)]
    pub transfers: Option<TransfersSpec>,
    /// TCP options.
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
    /// The window's growth: `{type = "reno"}` (RFC 5681, the default), with
    /// the loss recovery of `tcp.flavor`.
    #[serde(default)]
    pub cc: Option<crate::proto::cc::WindowSpec>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NewRenoRecoverySpec {
    #[default]
    Rfc6582,
    Ns2,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NewRenoTimer {
    #[default]
    Impatient,
    SlowButSteady,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TcpFlavor {
    /// RFC 5681 fast retransmit and fast recovery.
    Reno,
    /// RFC 6582.
    Newreno,
    /// RFC 2018 SACK with RFC 6675 loss recovery.
    #[default]
    Sack,
}

/// Initial window: a number of segments (e.g. 3, or 10 for RFC 6928) or
/// "rfc3390" for min(4*MSS, max(2*MSS, 4380 bytes)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum InitialWindowSpec {
    Segments(u32),
    Named(InitialWindowName),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InitialWindowName {
    Rfc3390,
}

/// TCP options. Defaults follow the RFCs (see docs/models/tcp.md).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Loss recovery: "reno", "newreno" or "sack" (default).
    #[serde(default)]
    pub flavor: TcpFlavor,
    /// Maximum segment size (payload bytes, default 1460).
    #[serde(default)]
    pub mss_bytes: Option<u32>,
    /// Default "rfc3390".
    #[serde(default)]
    pub initial_window: Option<InitialWindowSpec>,
    /// Cap on the window in packets (ns-2's window_), default none.
    #[serde(default)]
    pub max_window_packets: Option<u32>,
    /// Receive window in bytes (default 1048576).
    #[serde(default)]
    pub rwnd_bytes: Option<u64>,
    /// Minimum RTO in ms (RFC 6298: 1000, the default; 200 is common).
    #[serde(default)]
    pub min_rto_ms: Option<f64>,
    /// RTO before the first RTT sample, ms (default 1000).
    #[serde(default)]
    pub initial_rto_ms: Option<f64>,
    /// Maximum RTO in ms (default 60000).
    #[serde(default)]
    pub max_rto_ms: Option<f64>,
    /// Delayed ACKs at the receiver (default true).
    #[serde(default)]
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timeout in ms (default 200).
    #[serde(default)]
    pub delack_timeout_ms: Option<f64>,
    /// RFC 3042 limited transmit (default true).
    #[serde(default)]
    pub limited_transmit: Option<bool>,
    /// NewReno: reset the retransmission timer on the first partial ACK only
    /// ("impatient", RFC 6582's choice, default) or on every partial ACK
    /// ("slow_but_steady", ns-2's default).
    #[serde(default)]
    pub newreno_timer: Option<NewRenoTimer>,
    /// NewReno window rules: "rfc6582" (default) or "ns2" (ns-2's default
    /// Agent/TCP/Newreno: partial ACKs reset the window to ssthresh, full
    /// ACKs set cwnd = ssthresh, recovery halves cwnd).
    #[serde(default)]
    pub newreno_recovery: Option<NewRenoRecoverySpec>,
    /// Three-way handshake and FIN (default: on for finite transfers, off
    /// for bulk sources).
    #[serde(default)]
    pub handshake: Option<bool>,
    /// Duplicate ACK threshold (default 3).
    #[serde(default)]
    pub dupthresh: Option<u32>,
    /// ECN (RFC 3168): data ECT(0), ECE/CWR, one reduction per window
    /// (default false).
    #[serde(default)]
    pub ecn: bool,
}

impl FlowModel for TcpFlowSpec {
    fn derived_suffixes(&self) -> &'static [&'static str] {
        &["ack"]
    }
    fn needs_return_route(&self) -> bool {
        true
    }
    fn validate(&self, flow: &FlowCommon, p: &str, _scope: &Scope<'_>, c: &mut Checker) {
        crate::app::flow::require_unicast(flow, p, "tcp", c);
        c.at_least_one(format_args!("{p}.bytes"), self.bytes);
        if let Some(t) = &self.transfers {
            if self.bytes.is_some() {
                c.err(
                    format!("{p}.transfers"),
                    "give bytes or transfers, not both",
                );
            }
            t.validate(&format!("{p}.transfers"), c);
        }
        if let Some(t) = &self.tcp {
            t.validate(&format!("{p}.tcp"), c);
        }
        if let Some(cc) = &self.cc {
            cc.model().validate(&format!("{p}.cc"), c);
        }
    }
    fn build(&self, f: &ResolvedFlow<'_>, ctx: &mut BuildCtx<'_>) {
        let d = f.receivers[0];
        let finite = self.bytes.is_some() || self.transfers.is_some();
        let cfg = tcp_config(self.tcp.as_ref(), finite);
        let tpl = f.udp_template(0);
        let ack_tpl = return_template(f, &tpl);
        let window = self.cc.clone().unwrap_or_default();
        let mut sink = TcpSink::new(ack_tpl, cfg.clone(), f.id, f.start);
        let source = match &self.transfers {
            None => TcpSource::new(tpl, cfg.clone(), self.bytes, window.model().build()),
            Some(t) => {
                let rng = ctx.stream(&format!("flow:{}:transfers", f.spec.name));
                sink = sink.of_transfers(cfg.clone());
                TcpSource::transfers(tpl, cfg, window, Transfers::new(t, rng))
            }
        };
        let source = source.with_stop((f.stop < ctx.horizon).then_some(f.stop));
        claim_and_add(f, "src_port", f.src, f.src_port, Box::new(source), ctx);
        claim_and_add(f, "dst_port", d, f.dst_port, Box::new(sink), ctx);
        add_flow_pair_meta(f, "tcp", self.derived_suffixes()[0], "tcp_ack", ctx);
    }
}

impl TcpSpec {
    fn validate(&self, path: &str, c: &mut Checker) {
        if let Some(m) = self.mss_bytes {
            if m == 0 || m > 65_495 {
                c.err(
                    format!("{path}.mss_bytes"),
                    format!("must be 1..=65495 (got {m})"),
                );
            }
        }
        if let Some(InitialWindowSpec::Segments(0)) = self.initial_window {
            c.err(
                format!("{path}.initial_window"),
                "must be at least 1 segment",
            );
        }
        let max_window = self.max_window_packets.map(u64::from);
        c.at_least_one(format_args!("{path}.max_window_packets"), max_window);
        if let Some(r) = self.rwnd_bytes {
            let mss = self.mss_bytes.unwrap_or(1460) as u64;
            if r < mss {
                let msg = format!("must be at least one MSS ({mss} bytes)");
                c.err(format!("{path}.rwnd_bytes"), msg);
            }
        }
        self.validate_timers(path, c);
        c.at_least_one(
            format_args!("{path}.dupthresh"),
            self.dupthresh.map(u64::from),
        );
    }

    fn validate_timers(&self, path: &str, c: &mut Checker) {
        for (name, x) in [
            ("min_rto_ms", self.min_rto_ms),
            ("initial_rto_ms", self.initial_rto_ms),
            ("max_rto_ms", self.max_rto_ms),
            ("delack_timeout_ms", self.delack_timeout_ms),
        ] {
            if let Some(x) = x {
                c.interval_ms(format_args!("{path}.{name}"), x);
            }
        }
        // Compared with the defaults of the one not given: RTO clamping
        // needs min <= max (RFC 6298 2.4, 2.5).
        let d = crate::proto::tcp::TcpConfig::default();
        // In ms from whole nanoseconds: exact, where seconds times 1e3 is
        // not (60 s gave 60000.00000000001 ms).
        let ms = |t: SimTime| t.as_nanos() as f64 / 1e6;
        let min = (self.min_rto_ms).unwrap_or(ms(d.min_rto));
        let max = (self.max_rto_ms).unwrap_or(ms(d.max_rto));
        if min > max {
            if self.max_rto_ms.is_some() {
                let msg = format!("must be at least min_rto_ms ({min})");
                c.err(format!("{path}.max_rto_ms"), msg);
            } else {
                let msg = format!("must be at most max_rto_ms ({max}, the default; set it too)");
                c.err(format!("{path}.min_rto_ms"), msg);
            }
        }
    }
}

/// The TCP configuration of a flow: scenario options over RFC defaults.
pub fn tcp_config(t: Option<&TcpSpec>, finite: bool) -> TcpConfig {
    let d = TcpConfig::default();
    let Some(t) = t else {
        return TcpConfig {
            handshake: finite,
            ..d
        };
    };
    let ms = |x: Option<f64>, def: SimTime| x.map_or(def, SimTime::from_millis_f64);
    TcpConfig {
        flavor: match t.flavor {
            TcpFlavor::Reno => Flavor::Reno,
            TcpFlavor::Newreno => Flavor::NewReno,
            TcpFlavor::Sack => Flavor::Sack,
        },
        mss: t.mss_bytes.unwrap_or(d.mss),
        initial_window: match t.initial_window {
            None | Some(InitialWindowSpec::Named(InitialWindowName::Rfc3390)) => {
                InitialWindow::Rfc3390
            }
            Some(InitialWindowSpec::Segments(n)) => InitialWindow::Segments(n),
        },
        max_window_packets: t.max_window_packets,
        rwnd_bytes: t.rwnd_bytes.unwrap_or(d.rwnd_bytes),
        initial_rto: ms(t.initial_rto_ms, d.initial_rto),
        min_rto: ms(t.min_rto_ms, d.min_rto),
        max_rto: ms(t.max_rto_ms, d.max_rto),
        clock_granularity: d.clock_granularity,
        dupthresh: t.dupthresh.unwrap_or(d.dupthresh),
        limited_transmit: t.limited_transmit.unwrap_or(d.limited_transmit),
        newreno_impatient: t.newreno_timer.unwrap_or_default() == NewRenoTimer::Impatient,
        newreno_recovery: match t.newreno_recovery.unwrap_or_default() {
            NewRenoRecoverySpec::Rfc6582 => NewRenoRecovery::Rfc6582,
            NewRenoRecoverySpec::Ns2 => NewRenoRecovery::Ns2,
        },
        handshake: t.handshake.unwrap_or(finite),
        delayed_ack: t.delayed_ack.unwrap_or(d.delayed_ack),
        delack_timeout: ms(t.delack_timeout_ms, d.delack_timeout),
        ecn: t.ecn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> TcpSpec {
        serde_json::from_str(json).expect("a valid TcpSpec")
    }

    #[test]
    fn without_options_a_flow_has_the_defaults_and_a_handshake_if_finite() {
        let d = TcpConfig::default();
        for finite in [false, true] {
            for c in [
                tcp_config(None, finite),
                tcp_config(Some(&spec("{}")), finite),
            ] {
                assert_eq!(c.handshake, finite);
                assert_eq!(c.flavor, d.flavor);
                assert_eq!(c.mss, d.mss);
                assert_eq!(c.initial_window, InitialWindow::Rfc3390);
                assert_eq!(c.max_window_packets, None);
                assert_eq!(c.rwnd_bytes, d.rwnd_bytes);
                assert_eq!(
                    (c.initial_rto, c.min_rto, c.max_rto),
                    (d.initial_rto, d.min_rto, d.max_rto)
                );
                assert_eq!(c.dupthresh, d.dupthresh);
                assert_eq!(c.limited_transmit, d.limited_transmit);
                assert!(c.newreno_impatient);
                assert_eq!(c.newreno_recovery, NewRenoRecovery::Rfc6582);
                assert_eq!(c.delayed_ack, d.delayed_ack);
                assert_eq!(c.delack_timeout, d.delack_timeout);
                assert!(!c.ecn);
            }
        }
        // RFC 6298's timers, RFC 5681's dupthresh and delayed ACKs.
        assert_eq!(d.min_rto, SimTime::from_millis(1000));
        assert_eq!(d.initial_rto, SimTime::from_millis(1000));
        assert_eq!(d.max_rto, SimTime::from_millis(60_000));
        assert_eq!(d.dupthresh, 3);
        assert!(d.delayed_ack && d.limited_transmit);
        assert_eq!(d.delack_timeout, SimTime::from_millis(200));
        assert_eq!((d.mss, d.rwnd_bytes), (1460, 1 << 20));
    }

    #[test]
    fn every_option_reaches_the_configuration() {
        let t = spec(
            r#"{"flavor": "newreno", "mss_bytes": 1000, "initial_window": 10,
            "max_window_packets": 20, "rwnd_bytes": 50000, "min_rto_ms": 200,
            "initial_rto_ms": 3000, "max_rto_ms": 10000, "delayed_ack": false,
            "delack_timeout_ms": 40, "limited_transmit": false,
            "newreno_timer": "slow_but_steady", "newreno_recovery": "ns2",
            "handshake": false, "dupthresh": 5, "ecn": true}"#,
        );
        let c = tcp_config(Some(&t), true);
        assert_eq!(c.flavor, Flavor::NewReno);
        assert_eq!(c.mss, 1000);
        assert_eq!(c.initial_window, InitialWindow::Segments(10));
        assert_eq!(c.max_window_packets, Some(20));
        assert_eq!(c.rwnd_bytes, 50_000);
        assert_eq!(c.min_rto, SimTime::from_millis(200));
        assert_eq!(c.initial_rto, SimTime::from_millis(3000));
        assert_eq!(c.max_rto, SimTime::from_millis(10_000));
        assert!(!c.delayed_ack);
        assert_eq!(c.delack_timeout, SimTime::from_millis(40));
        assert!(!c.limited_transmit);
        assert!(!c.newreno_impatient);
        assert_eq!(c.newreno_recovery, NewRenoRecovery::Ns2);
        assert!(!c.handshake);
        assert_eq!(c.dupthresh, 5);
        assert!(c.ecn);
        // The other flavours and the named initial window; a bulk flow
        // asking for the handshake gets it.
        for (name, flavor) in [("reno", Flavor::Reno), ("sack", Flavor::Sack)] {
            let t = spec(&format!(
                r#"{{"flavor": "{name}", "initial_window": "rfc3390", "handshake": true}}"#
            ));
            let c = tcp_config(Some(&t), false);
            assert_eq!(c.flavor, flavor);
            assert_eq!(c.initial_window, InitialWindow::Rfc3390);
            assert!(c.handshake);
        }
        let t = spec(r#"{"newreno_timer": "impatient", "newreno_recovery": "rfc6582"}"#);
        let c = tcp_config(Some(&t), false);
        assert!(c.newreno_impatient && !c.handshake);
        assert_eq!(c.newreno_recovery, NewRenoRecovery::Rfc6582);
    }
}
