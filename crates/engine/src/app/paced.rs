//! Paced flows: a bulk source (always data to send) paced by any rate
//! controller behind the seam (`proto::cc`), and a receiver that returns
//! the feedback that controller's receiving half makes. Data packets are
//! `packet_bytes` on the wire and carry the controller's stamp; feedback
//! returns in the flow "<name>/fb", `feedback_bytes` each.
//!
//! The `paced` table has per flow: packets sent, the final target rate,
//! packets received and feedback packets sent; `paced_series` the target
//! rate over time (`rate_bps`).

use super::flow::{
    add_flow_pair_meta, claim_and_add, require_unicast, return_template, FlowCommon, FlowModel,
    ResolvedFlow,
};
use super::{Action, App, AppStats, PacketTemplate};
use crate::net::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::net::{Packet, Payload};
use crate::proto::cc::{
    CcMedia, CcSite, CcSpec, Departure, FeedbackReceiver, RateController, Stamp,
};
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::Deserialize;

use super::Col::{Count, Measure};

/// The `paced` table (the sender's columns, then the receiver's).
pub const TABLE: super::AppTable = super::AppTable {
    name: "paced",
    // Count: an integer (nullable Int64 in Python); Measure: a float in its unit.
    columns: &[
        Count("packets_sent"),
        Measure("final_target_bps"),
        Count("packets_received"),
        Count("feedback_sent"),
    ],
    series: true,
};

const HEADERS: u32 = IPV4_HEADER_BYTES + UDP_HEADER_BYTES;

/// Values and time series of one table row.
pub type Row = (
    Vec<(&'static str, f64)>,
    Vec<(&'static str, Vec<(SimTime, f64)>)>,
);

/// What a paced flow reports, and into which table: each end's part of
/// the row. The `paced` table's is [`PACED`]; a flow kind built on paced
/// flows with a table of its own (`tfrc`) gives its own.
#[derive(Clone, Copy)]
pub struct Reporting {
    pub table: &'static str,
    /// The `kind` of the feedback flow in the `flows` table.
    pub feedback_kind: &'static str,
    pub sender: fn(&dyn RateController) -> Row,
    /// With the data packets received and the feedback packets sent.
    pub receiver: fn(&dyn FeedbackReceiver, u64, u64) -> Row,
}

/// The `paced` table's row.
pub const PACED: Reporting = Reporting {
    table: "paced",
    feedback_kind: "paced_feedback",
    sender: |cc| {
        (
            vec![
                ("packets_sent", cc.packets() as f64),
                ("final_target_bps", cc.target_bps()),
            ],
            vec![("rate_bps", cc.rate_series())],
        )
    },
    receiver: |_, received, sent| {
        (
            vec![
                ("packets_received", received as f64),
                ("feedback_sent", sent as f64),
            ],
            vec![],
        )
    },
};

fn d_packet() -> u32 {
    1000
}
fn d_feedback() -> u32 {
    44
}

/// A bulk flow paced by a rate controller.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacedSpec {
    /// The rate controller: `{type = "tfrc"}`, `{type = "fixed", rate_bps
    /// = ...}`, ...
    pub cc: CcSpec,
    /// Data packet size on the wire.
    #[serde(default = "d_packet")]
    pub packet_bytes: u32,
    /// Feedback packet size on the wire.
    #[serde(default = "d_feedback")]
    pub feedback_bytes: u32,
}

impl FlowModel for PacedSpec {
    fn derived_suffixes(&self) -> &'static [&'static str] {
        &["fb"]
    }
    fn needs_return_route(&self) -> bool {
        true
    }
    fn validate(&self, flow: &FlowCommon, p: &str, _scope: &Scope<'_>, c: &mut Checker) {
        require_unicast(flow, p, "paced", c);
        self.cc
            .model()
            .validate(&format!("{p}.cc"), CcMedia::default(), c);
        c.wire_bytes(format_args!("{p}.packet_bytes"), self.packet_bytes, HEADERS);
        c.wire_bytes(
            format_args!("{p}.feedback_bytes"),
            self.feedback_bytes,
            HEADERS,
        );
    }
    fn build(&self, f: &ResolvedFlow<'_>, ctx: &mut BuildCtx<'_>) {
        let site = CcSite {
            rng: ctx.rng,
            flow: &f.spec.name,
            packet_bytes: self.packet_bytes,
            levels_bps: &[],
            longest_interval: None,
        };
        let (cc, rx) = self.cc.model().build(&site);
        let sizes = (self.packet_bytes, self.feedback_bytes);
        add_paced_flow(f, (cc, rx), sizes, PACED, ctx);
    }
}

/// Adds a paced flow's two ends: data packets and feedback packets of
/// `sizes` bytes on the wire, reporting as `report` says.
pub fn add_paced_flow(
    f: &ResolvedFlow<'_>,
    (cc, rx): (Box<dyn RateController>, Box<dyn FeedbackReceiver>),
    (packet_bytes, feedback_bytes): (u32, u32),
    report: Reporting,
    ctx: &mut BuildCtx<'_>,
) {
    let data = f.udp_template(packet_bytes - HEADERS);
    let fb = PacketTemplate {
        payload_bytes: feedback_bytes - HEADERS,
        ..return_template(f, &data)
    };
    let source = PacedSource::new(data, cc, f.stop, report);
    claim_and_add(f, "src_port", f.src, f.src_port, Box::new(source), ctx);
    let sink = FeedbackSink::new(fb, rx, f.id, report);
    claim_and_add(
        f,
        "dst_port",
        f.receivers[0],
        f.dst_port,
        Box::new(sink),
        ctx,
    );
    add_flow_pair_meta(f, report.table, "fb", report.feedback_kind, ctx);
}

/// Timer tokens of the source.
const SEND: u64 = 0;
const CC_TIMER: u64 = 1;

/// A source that always has a packet ready, sending as its controller
/// allows.
pub struct PacedSource {
    tpl: PacketTemplate,
    cc: Box<dyn RateController>,
    report: Reporting,
    started: bool,
    stop: SimTime,
    /// The next packet may leave at this time.
    next_send: SimTime,
    /// Pending engine timers: (send, controller).
    pending: [Option<SimTime>; 2],
    series_rows: usize,
}

impl PacedSource {
    pub fn new(
        tpl: PacketTemplate,
        cc: Box<dyn RateController>,
        stop: SimTime,
        report: Reporting,
    ) -> Self {
        PacedSource {
            tpl,
            cc,
            report,
            started: false,
            stop,
            next_send: SimTime::ZERO,
            pending: [None; 2],
            series_rows: usize::MAX,
        }
    }

    fn arm(&mut self, token: u64, at: SimTime, out: &mut Vec<Action>) {
        crate::app::arm_timer(&mut self.pending[token as usize], at, token, out);
    }

    /// Sends the packets due by `now`, then waits for the next one.
    fn send_due(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let bytes = self.tpl.payload_bytes + HEADERS;
        while self.next_send <= now && now < self.stop {
            let d = Departure {
                bytes,
                due: self.next_send,
                next_same_size: true,
            };
            let (stamp, next) = self.cc.on_send(now, d);
            let mut p = self.tpl.make(stamp.seq);
            p.app = Payload::new(stamp);
            out.push(Action::Send(p));
            self.next_send = next;
        }
        if self.next_send < self.stop {
            self.arm(SEND, self.next_send, out);
        }
        if let Some(at) = self.cc.deadline() {
            self.arm(CC_TIMER, at, out);
        }
    }
}

impl App for PacedSource {
    fn set_series(&mut self, rows: usize) {
        self.series_rows = rows;
    }
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.cc.start(now, self.series_rows);
        self.started = true;
        self.next_send = now;
        self.send_due(now, out);
    }
    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        crate::app::timer_fired(&mut self.pending[token as usize & 1], now);
        if token == CC_TIMER {
            self.cc.on_timer(now);
        }
        self.send_due(now, out);
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Some(next) = self.cc.on_feedback(now, &pkt.app, self.next_send) {
            self.next_send = next;
            self.send_due(now, out);
        }
    }
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        if !self.started {
            return None;
        }
        let (values, series) = (self.report.sender)(&*self.cc);
        Some(AppStats {
            table: self.report.table,
            flow: self.tpl.flow,
            values,
            series,
        })
    }
}

/// A controller's receiving half with the packets it sends back: the
/// paced flow's sink and an RTP member returning its peer's feedback use
/// it alike.
pub struct FeedbackEnd {
    pub rx: Box<dyn FeedbackReceiver>,
    tpl: PacketTemplate,
    /// The timer token the owning application gives the receiver.
    token: u64,
    sent: u64,
    timer_at: Option<SimTime>,
    fb: Vec<Payload>,
}

impl FeedbackEnd {
    pub fn new(rx: Box<dyn FeedbackReceiver>, tpl: PacketTemplate, token: u64) -> Self {
        FeedbackEnd {
            rx,
            tpl,
            token,
            sent: 0,
            timer_at: None,
            fb: Vec::new(),
        }
    }

    /// A data packet stamped `s` of `bytes` arrived.
    pub fn on_data(&mut self, now: SimTime, s: &Stamp, bytes: u32, out: &mut Vec<Action>) {
        self.rx.on_data(now, s, bytes, &mut self.fb);
        self.send(out);
    }

    /// The receiver's timer (token `token`) fired.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.timer_at = None;
        self.rx.on_timer(now, &mut self.fb);
        self.send(out);
    }

    /// Feedback packets sent.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    fn send(&mut self, out: &mut Vec<Action>) {
        for app in std::mem::take(&mut self.fb) {
            let mut p = self.tpl.make(self.sent);
            self.sent += 1;
            p.app = app;
            out.push(Action::Send(p));
        }
        if let (None, Some(d)) = (self.timer_at, self.rx.deadline()) {
            self.timer_at = Some(d);
            out.push(Action::Timer {
                at: d,
                token: self.token,
            });
        }
    }
}

/// The receiving end of any rate-controlled flow: hands each data
/// packet's stamp to the controller's receiving half and sends what it
/// returns.
pub struct FeedbackSink {
    end: FeedbackEnd,
    report: Reporting,
    data_flow: u32,
    received: u64,
}

impl FeedbackSink {
    pub fn new(
        tpl: PacketTemplate,
        rcv: Box<dyn FeedbackReceiver>,
        data_flow: u32,
        report: Reporting,
    ) -> Self {
        FeedbackSink {
            end: FeedbackEnd::new(rcv, tpl, 0),
            report,
            data_flow,
            received: 0,
        }
    }
}

impl App for FeedbackSink {
    fn set_series(&mut self, rows: usize) {
        self.end.rx.set_series_rows(rows);
    }
    fn on_start(&mut self, now: SimTime, _out: &mut Vec<Action>) {
        self.end.rx.start(now);
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Some(s) = pkt.app.get::<Stamp>() {
            self.received += 1;
            self.end.on_data(now, s, pkt.size_bytes, out);
        }
    }
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        self.end.on_timer(now, out);
    }
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        let (values, series) =
            (self.report.receiver)(&*self.end.rx, self.received, self.end.sent());
        Some(AppStats {
            table: self.report.table,
            flow: self.data_flow,
            values,
            series,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::app::testing::{flow_errors, names, numbers, run_text};

    fn run(fields: &str) -> crate::RunOutput {
        run_text(&format!(
            r#"{{"duration_s": 10, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
            "links": [{{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 5}}],
            "flows": [{{"name": "f", "type": "paced", "src": "a", "dst": "b"{fields}}}]}}"#
        ))
    }

    /// A fixed 800 kbit/s controller paces 1000-byte packets 10 ms apart:
    /// 1000 in 10 s, all received, and no feedback (its receiving half
    /// sends none); the `paced` row says the same.
    #[test]
    fn a_fixed_rate_paces_packets_of_packet_bytes() {
        let out = run(r#", "cc": {"type": "fixed", "rate_bps": 8e5}"#);
        assert_eq!(names(&out, "flows", "flow"), ["f", "f/fb"]);
        assert_eq!(numbers(&out, "flows", "sent"), [1000.0, 0.0]);
        assert_eq!(numbers(&out, "flows", "sent_bytes"), [1e6, 0.0]);
        let row = |c: &str| numbers(&out, "paced", c)[0];
        assert_eq!(
            [
                row("packets_sent"),
                row("final_target_bps"),
                row("packets_received"),
                row("feedback_sent")
            ],
            [1000.0, 8e5, 1000.0, 0.0]
        );
        let small = run(r#", "cc": {"type": "fixed", "rate_bps": 8e5}, "packet_bytes": 500"#);
        assert_eq!(numbers(&small, "flows", "sent"), [2000.0, 0.0]);
        assert_eq!(numbers(&small, "flows", "sent_bytes"), [1e6, 0.0]);
    }

    /// TFRC's receiving half returns feedback in "f/fb", `feedback_bytes`
    /// each on the wire (44 unless given).
    #[test]
    fn feedback_returns_in_packets_of_feedback_bytes() {
        for (fields, size) in [("", 44.0), (r#", "feedback_bytes": 60"#, 60.0)] {
            let out = run(&format!(r#", "cc": {{"type": "tfrc"}}{fields}"#));
            let (sent, bytes) = (
                numbers(&out, "flows", "sent"),
                numbers(&out, "flows", "sent_bytes"),
            );
            assert!(sent[1] > 50.0, "{sent:?}");
            assert_eq!(bytes[1], sent[1] * size);
            assert_eq!(numbers(&out, "paced", "feedback_sent")[0], sent[1]);
        }
    }

    #[test]
    fn sizes_hold_the_headers_and_the_controller_is_checked() {
        let errs = |fields: &str| flow_errors("paced", fields);
        assert_eq!(
            errs(r#", "cc": {"type": "fixed", "rate_bps": 1e5}, "packet_bytes": 27"#),
            ["flows[0].packet_bytes: must be 28..=65535 bytes on the wire (got 27)"]
        );
        assert_eq!(
            errs(r#", "cc": {"type": "fixed", "rate_bps": 1e5}, "feedback_bytes": 27"#),
            ["flows[0].feedback_bytes: must be 28..=65535 bytes on the wire (got 27)"]
        );
        let cc = errs(r#", "cc": {"type": "fixed", "rate_bps": 0}"#);
        assert!(
            cc.len() == 1 && cc[0].starts_with("flows[0].cc.rate_bps"),
            "{cc:?}"
        );
        assert_eq!(
            errs(r#", "cc": {"type": "fixed", "rate_bps": 1e5}, "packet_bytes": 28"#),
            Vec::<String>::new()
        );
    }

    /// With `measure.series`, the target rate over time (a fixed
    /// controller's one point); the feedback flow "f/fb" is a name the
    /// scenario can use (an explicit loss).
    #[test]
    fn the_target_rate_is_a_series() {
        let out = run_text(
            r#"{"duration_s": 1, "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 5,
                       "ba": {"loss": {"type": "explicit", "packets": [{"flow": "f/fb", "seq": 0}]}}}],
            "flows": [{"name": "f", "type": "paced", "src": "a", "dst": "b",
                       "cc": {"type": "fixed", "rate_bps": 8e5}}],
            "measure": {"series": true}}"#,
        );
        assert_eq!(names(&out, "paced_series", "var"), ["rate_bps"]);
        assert_eq!(numbers(&out, "paced_series", "value"), [8e5]);
    }

    /// A flow's run does not depend on when it starts: a media-scaling
    /// controller (whose receiver counts its control interval from the
    /// flow's start) started at 5 s does in its first 3 s what one
    /// started at 0 does.
    #[test]
    fn a_later_start_shifts_the_run() {
        let run = |start: f64| {
            let out = run_text(&format!(
                r#"{{"duration_s": {}, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
                "links": [{{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 5}}],
                "flows": [{{"name": "f", "type": "paced", "src": "a", "dst": "b", "start_s": {start},
                           "cc": {{"type": "scale", "levels_bps": [1e5, 2e5, 4e5, 8e5]}}}}]}}"#,
                start + 3.0
            ));
            let row = |c: &str| numbers(&out, "paced", c)[0];
            [
                row("packets_sent"),
                row("final_target_bps"),
                row("feedback_sent"),
            ]
        };
        let first = run(0.0);
        assert!(first[2] > 0.0, "{first:?}");
        assert_eq!(run(5.0), first);
    }
}
