//! TFRC flows: a sender with a send buffer (here always full: a bulk
//! source) and a receiver, wrapping `proto::tfrc`. Data packets are
//! `packet_bytes` on the wire; feedback returns in the flow "<name>/fb".
//!
//! The `tfrc` table has per flow: packets sent, feedback counts, the
//! final allowed rate, RTT and loss event rate; `tfrc_series` the allowed
//! rate over time (`rate_bps`) and the receiver's loss event rate (`p`).

use super::flow::{
    add_flow_pair_meta, claim_and_add, require_unicast, return_template, FlowCommon, FlowModel,
    ResolvedFlow,
};
use super::{Action, App, AppStats, PacketTemplate};
use crate::net::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::net::Packet;
use crate::net::Payload;
use crate::proto::tfrc::{DataHeader, Feedback};
use crate::proto::tfrc::{TfrcConfig, TfrcReceiver, TfrcSender};
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};
use crate::sim::{Series, SimTime};
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
        let data = f.udp_template(self.packet_bytes - HEADERS);
        let fb = PacketTemplate {
            payload_bytes: self.feedback_bytes - HEADERS,
            ..return_template(f, &data)
        };
        let source = TfrcSource::new(data, cfg.clone(), f.stop);
        claim_and_add(f, "src_port", f.src, f.src_port, Box::new(source), ctx);
        let sink = TfrcSink::new(fb, cfg, f.id);
        claim_and_add(
            f,
            "dst_port",
            f.receivers[0],
            f.dst_port,
            Box::new(sink),
            ctx,
        );
        add_flow_pair_meta(f, "tfrc", "fb", "tfrc_feedback", ctx);
    }
}

/// Timer tokens of the source.
const SEND: u64 = 0;
const NOFEEDBACK: u64 = 1;

pub struct TfrcSource {
    tpl: PacketTemplate,
    cfg: TfrcConfig,
    snd: Option<TfrcSender>,
    stop: SimTime,
    /// The next packet may leave at this time.
    next_send: SimTime,
    /// Pending engine timers: (send, no-feedback).
    pending: [Option<SimTime>; 2],
    series_rows: usize,
}

impl TfrcSource {
    pub fn new(tpl: PacketTemplate, cfg: TfrcConfig, stop: SimTime) -> Self {
        TfrcSource {
            tpl,
            cfg,
            snd: None,
            stop,
            next_send: SimTime::ZERO,
            pending: [None; 2],
            series_rows: usize::MAX,
        }
    }

    fn sender(&mut self) -> &mut TfrcSender {
        self.snd.as_mut().expect("started")
    }

    fn arm(&mut self, token: u64, at: SimTime, out: &mut Vec<Action>) {
        crate::app::arm_timer(&mut self.pending[token as usize], at, token, out);
    }

    /// Sends the packets due by `now`, then waits for the next one.
    fn send_due(&mut self, now: SimTime, out: &mut Vec<Action>) {
        while self.next_send <= now && now < self.stop {
            let h = self.sender().on_send(now);
            let mut p = self.tpl.make(h.seq);
            p.app = Payload::new(h);
            out.push(Action::Send(p));
            self.next_send = now.max(self.next_send) + self.sender().interval();
        }
        if self.next_send < self.stop {
            self.arm(SEND, self.next_send, out);
        }
        let nf = self.sender().nofeedback_deadline();
        self.arm(NOFEEDBACK, nf, out);
    }
}

impl App for TfrcSource {
    fn set_series(&mut self, rows: usize) {
        self.series_rows = rows;
    }
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let mut snd = TfrcSender::new(self.cfg.clone(), now);
        snd.rate_series.set_rows(self.series_rows);
        self.snd = Some(snd);
        self.next_send = now;
        self.send_due(now, out);
    }
    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        crate::app::timer_fired(&mut self.pending[token as usize & 1], now);
        if token == NOFEEDBACK {
            self.sender().on_nofeedback(now);
        }
        self.send_due(now, out);
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Some(fb) = pkt.app.get::<Feedback>() {
            let next = self.next_send;
            self.next_send = self.sender().on_feedback_paced(now, fb, next);
            self.send_due(now, out);
        }
    }
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        let snd = self.snd.as_ref()?;
        Some(AppStats {
            table: "tfrc",
            flow: self.tpl.flow,
            values: vec![
                ("packets_sent", snd.stats.packets as f64),
                ("feedbacks_received", snd.stats.feedbacks as f64),
                ("nofeedback_expiries", snd.stats.nofeedback_expiries as f64),
                ("final_rate_bps", snd.rate() * 8.0),
                ("rtt_ms", snd.rtt().map_or(f64::NAN, |r| r * 1e3)),
                ("sender_p", snd.loss_event_rate()),
            ],
            series: vec![("rate_bps", snd.rate_series.scaled(8.0))],
        })
    }
}

pub struct TfrcSink {
    tpl: PacketTemplate,
    rcv: TfrcReceiver,
    data_flow: u32,
    next_seq: u64,
    timer_at: Option<SimTime>,
    p_series: Series,
}

impl TfrcSink {
    pub fn new(tpl: PacketTemplate, cfg: TfrcConfig, data_flow: u32) -> Self {
        TfrcSink {
            tpl,
            rcv: TfrcReceiver::new(cfg),
            data_flow,
            next_seq: 0,
            timer_at: None,
            p_series: Series::default(),
        }
    }

    fn send(&mut self, now: SimTime, fb: crate::proto::tfrc::Feedback, out: &mut Vec<Action>) {
        let mut p = self.tpl.make(self.next_seq);
        self.next_seq += 1;
        p.app = Payload::new(fb);
        out.push(Action::Send(p));
        self.p_series.push_change(now, fb.p);
    }

    fn arm(&mut self, out: &mut Vec<Action>) {
        if let (None, Some(d)) = (self.timer_at, self.rcv.deadline()) {
            self.timer_at = Some(d);
            out.push(Action::Timer { at: d, token: 0 });
        }
    }
}

impl App for TfrcSink {
    fn set_series(&mut self, rows: usize) {
        self.p_series.set_rows(rows);
    }
    fn on_start(&mut self, _now: SimTime, _out: &mut Vec<Action>) {}
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Some(&h) = pkt.app.get::<DataHeader>() {
            if let Some(fb) = self.rcv.on_data(now, h, pkt.size_bytes) {
                self.send(now, fb, out);
            }
            self.arm(out);
        }
    }
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        self.timer_at = None;
        if let Some(fb) = self.rcv.on_timer(now) {
            self.send(now, fb, out);
        }
        self.arm(out);
    }
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        let h = &self.rcv.hist;
        Some(AppStats {
            table: "tfrc",
            flow: self.data_flow,
            values: vec![
                ("packets_received", self.rcv.stats.packets as f64),
                ("feedbacks_sent", self.rcv.stats.feedbacks as f64),
                ("lost_packets", h.lost_packets as f64),
                ("loss_events", h.loss_events as f64),
                ("p", self.rcv.loss_event_rate()),
            ],
            series: vec![("p", self.p_series.points().to_vec())],
        })
    }
}
