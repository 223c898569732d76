//! Closed-loop transfers on a `tcp` flow: a sequence of downloads
//! interleaved with idle periods (RFC 8867 5.7's short TCP flows, after
//! draft-ietf-rmcat-eval-criteria 6.1). Each transfer is a connection of
//! its own (handshake, slow start from the initial window, a fresh RTT
//! estimate), opened an exponential off time after the previous one
//! completed; sizes are uniform in a range.
//!
//! "Completed" is the sender's view: every byte and the FIN acknowledged
//! (without the handshake, every byte). The receiver has had the data half
//! a round trip earlier; a source that starts its next transfer at a fixed
//! schedule instead (open loop) is a list of `bytes` flows.

use crate::scenario::check::Checker;
use crate::sim::{uniform, SimRng, SimTime};
use rand_distr::{Distribution, Exp};
use schemars::JsonSchema;
use serde::Deserialize;

/// Longest mean off time, s: a draw stays well inside the clock's range.
pub const MAX_OFF_MEAN_S: f64 = 1e6;

fn yes() -> bool {
    true
}

/// A flow of successive transfers, each on a new connection.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransfersSpec {
    /// Each transfer's size in bytes, uniform in [low, high] (the same
    /// value twice for a fixed size).
    pub size_bytes: [u64; 2],
    /// Mean idle time from a transfer's completion to the next one's
    /// start, s (exponential).
    pub off_mean_s: f64,
    /// Start with a transfer at the flow's `start_s` (true, the default)
    /// or with an idle period (RFC 8867 5.7: two of ten sources start on).
    #[serde(default = "yes")]
    pub start_on: bool,
    /// Stop after this many transfers (default: until the run ends).
    #[serde(default)]
    pub max_transfers: Option<u64>,
}

impl TransfersSpec {
    pub fn validate(&self, path: &str, c: &mut Checker) {
        let [lo, hi] = self.size_bytes;
        if lo == 0 || lo > hi {
            let msg = format!("must be [low, high] with 1 <= low <= high (got [{lo}, {hi}])");
            c.err(format!("{path}.size_bytes"), msg);
        }
        c.positive(format_args!("{path}.off_mean_s"), self.off_mean_s);
        c.at_most(
            format_args!("{path}.off_mean_s"),
            self.off_mean_s,
            MAX_OFF_MEAN_S,
        );
        c.at_least_one(format_args!("{path}.max_transfers"), self.max_transfers);
    }
}

/// The draws and the tally of a flow's transfers.
pub struct Transfers {
    size: [u64; 2],
    off: Exp<f64>,
    pub start_on: bool,
    max: u64,
    rng: SimRng,
    /// Transfers started.
    pub started: u64,
    /// Transfers completed, and their durations' sum (s).
    pub done: u64,
    pub time_sum_s: f64,
    /// Bytes of the transfers started.
    pub bytes: u64,
    /// When the next transfer starts, once the current one has completed.
    pub next_at: Option<SimTime>,
}

impl Transfers {
    pub fn new(spec: &TransfersSpec, rng: SimRng) -> Self {
        Transfers {
            size: spec.size_bytes,
            off: Exp::new(1.0 / spec.off_mean_s).expect("validated off_mean_s"),
            start_on: spec.start_on,
            max: spec.max_transfers.unwrap_or(u64::MAX),
            rng,
            started: 0,
            done: 0,
            time_sum_s: 0.0,
            bytes: 0,
            next_at: None,
        }
    }

    /// An idle period's length.
    pub fn off_time(&mut self) -> SimTime {
        SimTime::from_secs_f64(self.off.sample(&mut self.rng))
    }

    /// The next transfer's size, counted as started.
    pub fn next_size(&mut self) -> u64 {
        let [lo, hi] = self.size;
        // Uniform over the whole bytes lo..=hi.
        let span = (hi - lo) as f64 + 1.0;
        let size = lo + ((uniform(&mut self.rng) * span) as u64).min(hi - lo);
        self.started += 1;
        self.bytes += size;
        size
    }

    /// A transfer completed after `took`: the time of the next one's
    /// start, if another is due.
    pub fn completed(&mut self, now: SimTime, took: SimTime) -> Option<SimTime> {
        self.done += 1;
        self.time_sum_s += took.as_secs_f64();
        if self.started >= self.max {
            return None;
        }
        let at = now + self.off_time();
        self.next_at = Some(at);
        Some(at)
    }

    /// Every transfer the flow will make has completed.
    pub fn finished(&self) -> bool {
        self.done >= self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    fn spec(json: &str) -> TransfersSpec {
        serde_json::from_str(json).expect("a valid TransfersSpec")
    }

    #[test]
    fn sizes_are_uniform_over_the_range_and_off_times_exponential() {
        let s = spec(r#"{"size_bytes": [30000, 50000], "off_mean_s": 10}"#);
        assert!(s.start_on && s.max_transfers.is_none());
        let mut t = Transfers::new(&s, RngStreams::new(1, 0).stream("t"));
        let n = 200_000;
        let sizes: Vec<u64> = (0..n).map(|_| t.next_size()).collect();
        assert_eq!(t.started, n as u64);
        assert_eq!(t.bytes, sizes.iter().sum::<u64>());
        assert!(sizes.iter().all(|&x| (30_000..=50_000).contains(&x)));
        // Mean 40,000.5, standard deviation 20,001 / sqrt(12) = 5,774: the
        // sample mean within 4 standard errors (52 bytes).
        let mean = sizes.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 40_000.5).abs() < 52.0, "{mean}");
        // Both ends are drawn.
        assert!(sizes.contains(&30_000) && sizes.contains(&50_000));
        // Exponential: mean 10 s, and P(X > 10 s) = 1/e.
        let offs: Vec<f64> = (0..n).map(|_| t.off_time().as_secs_f64()).collect();
        let mean = offs.iter().sum::<f64>() / n as f64;
        // Standard error 10 / sqrt(n) = 0.022 s.
        assert!((mean - 10.0).abs() < 0.09, "{mean}");
        let above = offs.iter().filter(|&&x| x > 10.0).count() as f64 / n as f64;
        assert!((above - (-1f64).exp()).abs() < 0.005, "{above}");
    }

    #[test]
    fn a_fixed_size_and_the_last_transfer() {
        let s = spec(r#"{"size_bytes": [1000, 1000], "off_mean_s": 1, "max_transfers": 2}"#);
        let mut t = Transfers::new(&s, RngStreams::new(1, 0).stream("t"));
        let ms = SimTime::from_millis;
        assert_eq!(t.next_size(), 1000);
        let next = t.completed(ms(100), ms(40)).expect("a second transfer");
        assert!(next >= ms(100) && t.next_at == Some(next));
        assert!(!t.finished());
        assert_eq!(t.next_size(), 1000);
        assert_eq!(t.completed(ms(900), ms(60)), None);
        assert!(t.finished());
        assert_eq!((t.started, t.done, t.bytes), (2, 2, 2000));
        assert!((t.time_sum_s - 0.1).abs() < 1e-12);
    }

    #[test]
    fn bad_values_are_named() {
        let errs = |json: &str| {
            let mut c = Checker::default();
            spec(json).validate("flows[0].transfers", &mut c);
            c.errs
                .iter()
                .map(|e| format!("{}: {}", e.path, e.message))
                .collect::<Vec<_>>()
        };
        assert!(errs(r#"{"size_bytes": [1, 1], "off_mean_s": 1e-9}"#).is_empty());
        for (json, field) in [
            (r#"{"size_bytes": [0, 10], "off_mean_s": 1}"#, "size_bytes"),
            (r#"{"size_bytes": [20, 10], "off_mean_s": 1}"#, "size_bytes"),
            (r#"{"size_bytes": [1, 10], "off_mean_s": 0}"#, "off_mean_s"),
            (
                r#"{"size_bytes": [1, 10], "off_mean_s": 2e6}"#,
                "off_mean_s",
            ),
            (
                r#"{"size_bytes": [1, 10], "off_mean_s": 1, "max_transfers": 0}"#,
                "max_transfers",
            ),
        ] {
            let e = errs(json);
            assert_eq!(e.len(), 1, "{json}: {e:?}");
            assert!(
                e[0].contains(&format!("flows[0].transfers.{field}")),
                "{e:?}"
            );
        }
    }

    use crate::app::testing::{flow_errors, names, numbers, run_text};

    /// A 10 Mbit/s, 5 ms link from a to b and one TCP flow "t" with
    /// `fields`, with series, for `duration_s`.
    fn run(fields: &str, duration_s: f64) -> crate::RunOutput {
        run_text(&format!(
            r#"{{"duration_s": {duration_s}, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
            "links": [{{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 5}}],
            "flows": [{{"name": "t", "type": "tcp", "src": "a", "dst": "b", "start_s": 0.5{fields}}}],
            "measure": {{"series": true}}}}"#
        ))
    }

    fn one(out: &crate::RunOutput, column: &str) -> f64 {
        numbers(out, "tcp", column)[0]
    }

    /// (completion time s, duration s) of each transfer, from `transfer_s`.
    fn completions(out: &crate::RunOutput) -> Vec<(f64, f64)> {
        let vars = names(out, "tcp_series", "var");
        let t = numbers(out, "tcp_series", "time_ns");
        let v = numbers(out, "tcp_series", "value");
        (0..vars.len())
            .filter(|&i| vars[i] == "transfer_s")
            .map(|i| (t[i] / 1e9, v[i]))
            .collect()
    }

    #[test]
    fn each_transfer_is_a_fresh_connection_taking_what_a_lone_transfer_takes() {
        // On an otherwise empty path every connection starts alike (SYN,
        // slow start from the initial window), so each of three transfers
        // takes exactly as long as a `bytes` flow of the same size.
        let lone = run(r#", "bytes": 100000"#, 5.0);
        let took = one(&lone, "sender_done_s") - 0.5;
        let out = run(
            r#", "transfers": {"size_bytes": [100000, 100000], "off_mean_s": 0.5, "max_transfers": 3}"#,
            20.0,
        );
        let c = completions(&out);
        assert_eq!(c.len(), 3);
        for &(_, d) in &c {
            assert!((d - took).abs() < 1e-9, "{d} against {took}");
        }
        assert_eq!(
            (one(&out, "transfers"), one(&out, "transfers_done")),
            (3.0, 3.0)
        );
        assert!((one(&out, "transfer_time_mean_s") - took).abs() < 1e-9);
        assert_eq!(one(&out, "bytes"), 300_000.0);
        assert_eq!(one(&out, "bytes_acked"), 300_000.0);
        assert_eq!(one(&out, "bytes_delivered"), 300_000.0);
        assert_eq!(one(&out, "data_bytes_sent"), 300_000.0);
        assert_eq!(
            one(&out, "segments_sent"),
            3.0 * one(&lone, "segments_sent")
        );
        assert_eq!(one(&out, "acks_sent"), 3.0 * one(&lone, "acks_sent"));
        assert_eq!(one(&out, "stale_segments"), 0.0);
        // The flow ends with its last transfer; the sink has no one end.
        assert_eq!(one(&out, "sender_done_s"), c[2].0);
        assert_eq!(one(&out, "start_s"), 0.5);
        assert!(one(&out, "receiver_done_s").is_nan());
        // A `bytes` flow reports none of the transfers' columns.
        for col in [
            "transfers",
            "transfers_done",
            "transfer_time_mean_s",
            "stale_segments",
        ] {
            assert!(one(&lone, col).is_nan(), "{col}");
        }
    }

    #[test]
    fn idle_times_between_transfers_are_exponential_with_the_mean_given() {
        // Small transfers, 0.2 s apart on average, for 400 s: about 1,900
        // idle periods. A transfer starts its duration before it completes.
        let out = run(
            r#", "transfers": {"size_bytes": [1000, 3000], "off_mean_s": 0.2}"#,
            400.0,
        );
        let c = completions(&out);
        let n = c.len();
        assert!(n > 1500, "{n}");
        let gaps: Vec<f64> = (1..n).map(|i| (c[i].0 - c[i].1) - c[i - 1].0).collect();
        assert!(gaps.iter().all(|&g| g >= 0.0));
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        // Standard error 0.2 / sqrt(1,900) = 4.6 ms.
        assert!((mean - 0.2).abs() < 0.02, "{mean}");
        let above = gaps.iter().filter(|&&g| g > 0.2).count() as f64 / gaps.len() as f64;
        assert!((above - (-1f64).exp()).abs() < 0.05, "{above}");
        // The first starts at the flow's start; one may be under way at the end.
        assert!((c[0].0 - c[0].1 - 0.5).abs() < 1e-9);
        let (started, done) = (one(&out, "transfers"), one(&out, "transfers_done"));
        assert!(started == done || started == done + 1.0, "{started} {done}");
        assert_eq!(done as usize, n);
        assert!(one(&out, "sender_done_s").is_nan());
        // Sizes uniform in 1,000-3,000 bytes: the mean within 5%.
        let per = one(&out, "bytes") / started;
        assert!((per - 2000.0).abs() < 100.0, "{per}");
    }

    #[test]
    fn no_transfer_goes_on_past_the_flows_stop() {
        let t = r#""transfers": {"size_bytes": [20000, 20000], "off_mean_s": 0.2}, "stop_s": 5"#;
        let out = run(&format!(", {t}"), 20.0);
        let c = completions(&out);
        assert!(c.len() > 10 && c.iter().all(|&(at, _)| at < 5.0), "{c:?}");
        let (started, done) = (one(&out, "transfers"), one(&out, "transfers_done"));
        assert!(started == done || started == done + 1.0, "{started} {done}");
        assert_eq!(done as usize, c.len());
    }

    #[test]
    fn a_flow_that_starts_idle_waits_an_off_time_first() {
        let t = r#"{"size_bytes": [5000, 5000], "off_mean_s": 2, "max_transfers": 1, "start_on": false}"#;
        let out = run(&format!(r#", "transfers": {t}"#), 60.0);
        let start = one(&out, "start_s");
        assert!(start > 0.5, "{start}");
        assert_eq!(one(&out, "transfers_done"), 1.0);
        let c = completions(&out);
        assert!((c[0].0 - c[0].1 - start).abs() < 1e-9);
    }

    #[test]
    fn bytes_and_transfers_together_are_refused() {
        let e = flow_errors(
            "tcp",
            r#", "bytes": 10, "transfers": {"size_bytes": [1, 2], "off_mean_s": 1}"#,
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].contains("flows[0].transfers") && e[0].contains("not both"),
            "{e:?}"
        );
    }

    #[test]
    fn the_first_transfer_is_connection_zero() {
        // Its numbers on the wire are then those of a lone connection.
        use crate::app::testing::udp_template;
        use crate::app::{Action, App, TcpSource};
        use crate::net::Transport;
        let s = spec(r#"{"size_bytes": [1000, 1000], "off_mean_s": 1}"#);
        let cfg = crate::proto::tcp::TcpConfig::default();
        let plan = Transfers::new(&s, RngStreams::new(1, 0).stream("t"));
        let mut src = TcpSource::transfers(udp_template(0), cfg, Default::default(), plan);
        let mut out = Vec::new();
        src.on_start(SimTime::ZERO, &mut out);
        let conns: Vec<u32> = (out.iter())
            .filter_map(|a| match a {
                Action::Send(p) => match &p.transport {
                    Transport::Tcp(h) => Some(h.conn),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        assert_eq!(conns, [0]);
    }

    #[test]
    fn a_sink_of_transfers_opens_a_new_connection_and_ignores_earlier_ones() {
        use crate::app::testing::udp_template;
        use crate::app::{Action, App, TcpSink};
        use crate::net::tcp_flags::{ACK, FIN, SYN};
        use crate::net::{TcpHeader, Transport};
        let cfg = crate::proto::tcp::TcpConfig::default();
        let mut sink =
            TcpSink::new(udp_template(0), cfg.clone(), 0, SimTime::ZERO).of_transfers(cfg);
        let seg = |conn: u32, flags: u8, seq: u64, payload: u32| {
            let mut p = udp_template(0).make(0);
            let h = TcpHeader {
                seq,
                flags,
                conn,
                ..Default::default()
            };
            p.size_bytes = crate::net::packet::IPV4_HEADER_BYTES + h.header_bytes() + payload;
            p.transport = Transport::Tcp(Box::new(h));
            p
        };
        // The ACKs a segment brings: (connection, acknowledged sequence).
        let mut feed = |p| {
            let mut out = Vec::new();
            sink.on_packet(SimTime::from_millis(1), &p, &mut out);
            (out.iter())
                .filter_map(|a| match a {
                    Action::Send(p) => match &p.transport {
                        Transport::Tcp(h) => Some((h.conn, h.ack)),
                        _ => None,
                    },
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        // Connection 0 carries 100 bytes and its FIN.
        assert_eq!(feed(seg(0, SYN, 0, 0)), [(0, 1)]);
        assert_eq!(feed(seg(0, ACK | FIN, 1, 100)), [(0, 102)]);
        // Connection 1 begins afresh: its SYN and first byte are answered
        // from sequence 1, not from where connection 0 ended.
        assert_eq!(feed(seg(1, SYN, 0, 0)), [(1, 1)]);
        assert_eq!(feed(seg(1, ACK | FIN, 1, 50)), [(1, 52)]);
        // A late copy of connection 0's data is not answered.
        assert!(feed(seg(0, ACK | FIN, 1, 100)).is_empty());
        let st = sink.stats(SimTime::from_secs(1)).expect("a row");
        let v = |n: &str| crate::app::testing::value(&st, n);
        assert_eq!(v("bytes_delivered"), 150.0);
        assert_eq!(v("stale_segments"), 1.0);
        assert_eq!(v("acks_sent"), 4.0);
        assert!(v("receiver_done_s").is_nan());
    }
}
