//! TFRC flows: a paced bulk flow (`app::paced`) whose controller is TFRC
//! (`proto::cc::tfrc`, the rules in `proto::tfrc`), reporting into a table
//! of its own. Data packets are `packet_bytes` on the wire; feedback
//! returns in the flow "<name>/fb".
//!
//! The `tfrc` table has per flow: packets sent, feedback counts, the
//! final allowed rate, RTT and loss event rate; `tfrc_series` the allowed
//! rate over time (`rate_bps`) and the receiver's loss event rate (`p`).

use super::flow::{require_unicast, FlowCommon, FlowModel, ResolvedFlow};
use super::paced::{add_paced_flow, Reporting};
use crate::net::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::proto::cc::tfrc::{TfrcFeedback, TfrcRate};
use crate::proto::cc::{FeedbackReceiver, RateController};
use crate::proto::tfrc::TfrcConfig;
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};
use schemars::JsonSchema;
use serde::Deserialize;

use super::Col::{Count, Measure};

/// The `tfrc` table (the sender's columns, then the receiver's).
pub const TABLE: super::AppTable = super::AppTable {
    name: "tfrc",
    // Count: an integer (nullable Int64 in Python); Measure: a float in its unit.
    columns: &[
        Count("packets_sent"),
        Count("feedbacks_received"),
        Count("nofeedback_expiries"),
        Measure("final_rate_bps"),
        Measure("rtt_ms"),
        Measure("sender_p"),
        Count("packets_received"),
        Count("feedbacks_sent"),
        Count("lost_packets"),
        Count("loss_events"),
        Measure("p"),
    ],
    series: true,
};

const HEADERS: u32 = IPV4_HEADER_BYTES + UDP_HEADER_BYTES;

fn default_packet_bytes() -> u32 {
    1000
}
fn default_feedback_bytes() -> u32 {
    44
}
fn default_b() -> f64 {
    1.0
}
fn default_true() -> bool {
    true
}

/// A bulk TFRC flow (RFC 5348).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TfrcFlowSpec {
    /// Data packet size on the wire; TFRC's segment size s.
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: u32,
    /// Feedback packet size on the wire.
    #[serde(default = "default_feedback_bytes")]
    pub feedback_bytes: u32,
    /// Packets per ACK in the equation (RFC 5348: 1).
    #[serde(default = "default_b")]
    pub b: f64,
    /// RFC 5348 section 5.5.
    #[serde(default = "default_true")]
    pub history_discounting: bool,
    /// RFC 5348 section 4.5.
    #[serde(default = "default_true")]
    pub oscillation_prevention: bool,
}

impl FlowModel for TfrcFlowSpec {
    fn derived_suffixes(&self) -> &'static [&'static str] {
        &["fb"]
    }
    fn needs_return_route(&self) -> bool {
        true
    }
    fn validate(&self, flow: &FlowCommon, p: &str, _scope: &Scope<'_>, c: &mut Checker) {
        require_unicast(flow, p, "tfrc", c);
        c.wire_bytes(format_args!("{p}.packet_bytes"), self.packet_bytes, HEADERS);
        c.wire_bytes(
            format_args!("{p}.feedback_bytes"),
            self.feedback_bytes,
            HEADERS,
        );
        if !(self.b.is_finite() && self.b >= 1.0) {
            c.err(
                format!("{p}.b"),
                format!("must be at least 1 (got {})", self.b),
            );
        }
    }
    fn build(&self, f: &ResolvedFlow<'_>, ctx: &mut BuildCtx<'_>) {
        let cfg = TfrcConfig {
            s: self.packet_bytes,
            b: self.b,
            history_discounting: self.history_discounting,
            oscillation_prevention: self.oscillation_prevention,
            ..Default::default()
        };
        let halves: (Box<dyn RateController>, Box<dyn FeedbackReceiver>) = (
            Box::new(TfrcRate::new(cfg.clone())),
            Box::new(TfrcFeedback::new(cfg)),
        );
        let sizes = (self.packet_bytes, self.feedback_bytes);
        add_paced_flow(f, halves, sizes, REPORTING, ctx);
    }
}

/// The `tfrc` table's row: the sender's counters and estimates, then the
/// receiver's loss history.
const REPORTING: Reporting = Reporting {
    table: "tfrc",
    feedback_kind: "tfrc_feedback",
    sender: |cc| {
        let v = |name| cc.value(name).unwrap_or(f64::NAN);
        (
            vec![
                ("packets_sent", cc.packets() as f64),
                ("feedbacks_received", v("feedbacks")),
                ("nofeedback_expiries", v("nofeedback_expiries")),
                ("final_rate_bps", cc.target_bps()),
                ("rtt_ms", v("rtt_ms")),
                ("sender_p", v("p")),
            ],
            vec![("rate_bps", cc.rate_series())],
        )
    },
    receiver: |rx, _, _| {
        let v = |name| rx.value(name).unwrap_or(f64::NAN);
        (
            vec![
                ("packets_received", v("packets")),
                ("feedbacks_sent", v("feedbacks")),
                ("lost_packets", v("lost_packets")),
                ("loss_events", v("loss_events")),
                ("p", v("p")),
            ],
            vec![("p", rx.series("p").unwrap_or_default())],
        )
    },
};

#[cfg(test)]
mod tests {
    use crate::app::testing::{flow_errors, names, numbers, run_text};

    /// A TFRC flow "f" from a to b for `duration_s` over one link from a to
    /// b (`link`: its fields after a and b), with the flow's `fields` and
    /// the document's `rest` (", ..." or "").
    fn run(duration_s: f64, link: &str, fields: &str, rest: &str) -> crate::RunOutput {
        run_text(&format!(
            r#"{{"duration_s": {duration_s}, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
            "links": [{{"a": "a", "b": "b", {link}}}],
            "flows": [{{"name": "f", "type": "tfrc", "src": "a", "dst": "b"{fields}}}]{rest}}}"#
        ))
    }

    /// A packet carries at least its IP and UDP headers (28 bytes).
    #[test]
    fn sizes_hold_at_least_the_headers() {
        let errs = |sizes: &str| flow_errors("tfrc", sizes);
        assert_eq!(
            errs(r#", "packet_bytes": 27, "feedback_bytes": 28"#),
            ["flows[0].packet_bytes: must be 28..=65535 bytes on the wire (got 27)"]
        );
        assert_eq!(
            errs(r#", "packet_bytes": 28, "feedback_bytes": 27"#),
            ["flows[0].feedback_bytes: must be 28..=65535 bytes on the wire (got 27)"]
        );
        assert_eq!(errs(""), Vec::<String>::new());
    }

    /// A TFRC flow through a 2 Mbit/s link with a 30-packet queue and 0.5%
    /// random loss, 20 s: its feedback flow "f/fb" back over the link,
    /// data packets of `packet_bytes` and feedback of `feedback_bytes` on
    /// the wire, TFRC's rate under the link's; each of its settings
    /// (oscillation prevention needs the queue's varying RTT) changes the
    /// run.
    #[test]
    fn a_flow_and_its_feedback_follow_its_settings() {
        let link = r#""rate_bps": 2e6, "delay_ms": 20,
            "queue": {"type": "droptail", "limit_packets": 30},
            "ab": {"loss": {"type": "packet", "rate": 0.005}}"#;
        let run = |fields: &str| run(20.0, link, fields, "");
        let base = run("");
        assert_eq!(names(&base, "flows", "flow"), ["f", "f/fb"]);
        let (sent, bytes) = (
            numbers(&base, "flows", "sent"),
            numbers(&base, "flows", "sent_bytes"),
        );
        assert_eq!(bytes[0], sent[0] * 1000.0, "data packets of 1000 bytes");
        assert_eq!(bytes[1], sent[1] * 44.0, "feedback of 44 bytes");
        let row = |out: &crate::RunOutput, c: &str| numbers(out, "tfrc", c)[0];
        assert_eq!(row(&base, "packets_sent"), sent[0]);
        assert!(row(&base, "feedbacks_received") > 100.0);
        let rate = row(&base, "final_rate_bps");
        assert!(rate > 2e5 && rate < 2.5e6, "{rate}");
        assert!(row(&base, "loss_events") > 10.0);
        for fields in [
            r#", "packet_bytes": 500"#,
            r#", "feedback_bytes": 100"#,
            r#", "b": 2"#,
            r#", "history_discounting": false"#,
            r#", "oscillation_prevention": false"#,
        ] {
            let other = run(fields);
            let differ = ["packets_sent", "final_rate_bps", "p", "feedbacks_received"]
                .iter()
                .any(|c| row(&other, c) != row(&base, c))
                || numbers(&other, "flows", "sent_bytes") != bytes;
            assert!(differ, "{fields} changed nothing");
        }
    }

    #[test]
    fn b_is_at_least_one() {
        let errs = |b: &str| flow_errors("tfrc", &format!(r#", "b": {b}"#));
        assert_eq!(errs("0.5"), ["flows[0].b: must be at least 1 (got 0.5)"]);
        assert_eq!(errs("1"), Vec::<String>::new());
        assert_eq!(errs("3"), Vec::<String>::new());
    }

    /// TFRC's s starts at `packet_bytes` (RFC 5348 4.2): 500-byte packets
    /// start at one a second (4 kbit/s), and the first feedback sets the
    /// rate to W_init / R with W_init = min(4s, max(2s, 4380)) = 2000
    /// bytes, R the first RTT sample: 2 x 20 ms, 0.4 ms of data and
    /// 0.0352 ms of feedback on the 10 Mbit/s link.
    #[test]
    fn the_first_rates_use_packet_bytes_for_s() {
        let out = run(
            0.2,
            r#""rate_bps": 1e7, "delay_ms": 20"#,
            r#", "packet_bytes": 500"#,
            r#", "measure": {"series": true}"#,
        );
        let vars = names(&out, "tfrc_series", "var");
        let values = numbers(&out, "tfrc_series", "value");
        let rate: Vec<f64> = (vars.iter().zip(values))
            .filter(|(v, _)| *v == "rate_bps")
            .map(|(_, x)| x)
            .collect();
        assert_eq!(rate[0], 4000.0);
        let expected = 2000.0 * 8.0 / 0.0404352;
        assert!((rate[1] / expected - 1.0).abs() < 1e-9, "{rate:?}");
    }

    /// Its feedback flow "f/fb" is a flow the scenario can name (here in
    /// an explicit loss), and both ends keep their series (the allowed
    /// rate, the receiver's loss event rate) to `limits.max_series_rows`.
    #[test]
    fn the_feedback_flow_is_named_and_both_ends_keep_series() {
        let link = r#""rate_bps": 1e7, "delay_ms": 20,
            "ab": {"loss": {"type": "packet", "rate": 0.02}},
            "ba": {"loss": {"type": "explicit", "packets": [{"flow": "f/fb", "seq": 3}]}}"#;
        let run = |limits: &str| {
            run(
                5.0,
                link,
                "",
                &format!(r#", "measure": {{"series": true}}, "limits": {{{limits}}}"#),
            )
        };
        let rows = |out: &crate::RunOutput, var: &str| {
            let vars = names(out, "tfrc_series", "var");
            vars.iter().filter(|v| *v == var).count()
        };
        let all = run("");
        assert!(rows(&all, "p") > 3 && rows(&all, "rate_bps") > 3);
        let cut = run(r#""max_series_rows": 3"#);
        assert_eq!((rows(&cut, "p"), rows(&cut, "rate_bps")), (3, 3));
    }
}
