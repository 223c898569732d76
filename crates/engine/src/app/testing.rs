//! Test helpers for applications driven alone: an event loop over one
//! application's timers, and a rate controller the test scripts.

use crate::app::{Action, App, AppStats};
use crate::net::{Packet, Payload};
use crate::proto::cc::{Departure, RateController, Stamp};
use crate::sim::SimTime;
use std::sync::{Arc, Mutex};

/// Runs an application from time zero, firing its timers in time order
/// (ties in the order asked), until `until`, with `before` called ahead
/// of each timer; returns the packets it sent with their times.
pub fn drive(
    app: &mut dyn App,
    until: SimTime,
    mut before: impl FnMut(SimTime),
) -> Vec<(SimTime, Packet)> {
    let mut sent = Vec::new();
    let mut timers: Vec<(SimTime, u64, u64)> = Vec::new();
    let mut order = 0;
    let mut take = |now: SimTime, out: &mut Vec<Action>, timers: &mut Vec<(SimTime, u64, u64)>| {
        for a in out.drain(..) {
            match a {
                Action::Send(p) => sent.push((now, p)),
                Action::Timer { at, token } => {
                    assert!(at >= now, "a timer in the past");
                    timers.push((at, order, token));
                    order += 1;
                }
            }
        }
    };
    let mut out = Vec::new();
    app.on_start(SimTime::ZERO, &mut out);
    take(SimTime::ZERO, &mut out, &mut timers);
    while let Some(i) = (0..timers.len()).min_by_key(|&i| (timers[i].0, timers[i].1)) {
        let (at, _, token) = timers.remove(i);
        if at > until {
            break;
        }
        before(at);
        app.on_timer(at, token, &mut out);
        take(at, &mut out, &mut timers);
    }
    sent
}

/// A value of an application's result row.
pub fn value(st: &AppStats, name: &str) -> f64 {
    st.values.iter().find(|v| v.0 == name).expect(name).1
}

/// What the scripted controller shares with the test: what it says (its
/// rate, its level, its deadline), and what it was told.
#[derive(Default)]
pub struct Script {
    pub rate_bps: f64,
    pub level: Option<usize>,
    pub deadline: Option<SimTime>,
    /// The next-send time feedback gives (default: the caller's).
    pub release_at: Option<SimTime>,
    /// The send window it says (a window-based controller's), if any.
    pub window: Option<u64>,
    /// Frame groups announced, feedback and timers seen: their times.
    pub groups: Vec<(SimTime, SimTime)>,
    pub feedback: Vec<SimTime>,
    pub timers: Vec<SimTime>,
    pub sent: u64,
}

/// Paces at the scripted rate (a packet of b bytes holds the next back by
/// b * 8 / rate), stamps packets 0, 1, ..., and answers every feedback
/// with `release_at`, or else the caller's next-send time. Its timer,
/// once fired, is not due again until the test sets a new deadline. It
/// leaves the trait's defaults of what it does not script (its pacing
/// rate is its target).
pub struct ScriptCc(pub Arc<Mutex<Script>>);

impl ScriptCc {
    pub fn boxed(rate_bps: f64) -> (Box<dyn RateController>, Arc<Mutex<Script>>) {
        let s = Arc::new(Mutex::new(Script {
            rate_bps,
            ..Script::default()
        }));
        (Box::new(ScriptCc(s.clone())), s)
    }
}

impl RateController for ScriptCc {
    fn start(&mut self, _now: SimTime, _rows: usize) {}
    fn on_send(&mut self, now: SimTime, d: Departure) -> (Stamp, SimTime) {
        let mut s = self.0.lock().unwrap();
        let stamp = Stamp {
            seq: s.sent,
            sent_at: now,
            ..Stamp::default()
        };
        s.sent += 1;
        let gap = SimTime::from_secs_f64(d.bytes as f64 * 8.0 / s.rate_bps);
        (stamp, now.max(d.due) + gap)
    }
    fn on_feedback(&mut self, now: SimTime, _fb: &Payload, next: SimTime) -> Option<SimTime> {
        let mut s = self.0.lock().unwrap();
        s.feedback.push(now);
        Some(s.release_at.unwrap_or(next))
    }
    fn deadline(&self) -> Option<SimTime> {
        self.0.lock().unwrap().deadline
    }
    fn on_timer(&mut self, now: SimTime) {
        let mut s = self.0.lock().unwrap();
        s.timers.push(now);
        s.deadline = None;
    }
    fn send_window(&self) -> Option<u64> {
        self.0.lock().unwrap().window
    }
    fn target_bps(&self) -> f64 {
        self.0.lock().unwrap().rate_bps
    }
    fn level(&self) -> Option<usize> {
        self.0.lock().unwrap().level
    }
    fn on_frame_group(&mut self, now: SimTime, len: SimTime) {
        self.0.lock().unwrap().groups.push((now, len));
    }
    fn packets(&self) -> u64 {
        self.0.lock().unwrap().sent
    }
    fn rate_series(&self) -> Vec<(SimTime, f64)> {
        Vec::new()
    }
}

/// A two-node scenario (a to b over a 10 Mbit/s, 1 ms link) with one
/// flow "f" of `kind` from a to b and `fields` (", ..." or "").
fn one_flow(kind: &str, fields: &str, duration_s: f64) -> String {
    format!(
        r#"{{"duration_s": {duration_s}, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
        "links": [{{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 1}}],
        "flows": [{{"name": "f", "type": "{kind}", "src": "a", "dst": "b"{fields}}}]}}"#
    )
}

/// Runs `one_flow` for `duration_s`: the packets the flow sent and their
/// bytes on the wire (the `flows` table's first row).
pub fn run_one_flow(kind: &str, fields: &str, duration_s: f64) -> (u64, u64) {
    let out = run_text(&one_flow(kind, fields, duration_s));
    let first = |c: &str| numbers(&out, "flows", c)[0] as u64;
    (first("sent"), first("sent_bytes"))
}

/// What `check` says, as "path: message" lines.
pub fn said(check: impl FnOnce(&mut crate::scenario::check::Checker)) -> Vec<String> {
    let mut c = crate::scenario::check::Checker::default();
    check(&mut c);
    c.errs.iter().map(ToString::to_string).collect()
}

/// The errors `one_flow` gets, as "path: message" lines.
pub fn flow_errors(kind: &str, fields: &str) -> Vec<String> {
    match crate::scenario::parse_and_validate(&one_flow(kind, fields, 1.0)) {
        Ok(_) => Vec::new(),
        Err(errs) => errs.iter().map(ToString::to_string).collect(),
    }
}

/// A UDP packet template of `payload_bytes` from node 0 to node 1.
pub fn udp_template(payload_bytes: u32) -> crate::app::PacketTemplate {
    crate::app::PacketTemplate {
        flow: 0,
        dst: crate::net::Dest::Node(1),
        src_port: 5,
        dst_port: 6,
        dscp: 0,
        ecn: crate::net::packet::ecn::NOT_ECT,
        payload_bytes,
        transport: crate::net::Transport::Udp,
    }
}

/// Runs a scenario given as JSON text with the default options.
pub fn run_text(text: &str) -> crate::RunOutput {
    crate::run_json(text, &crate::RunOptions::default(), &mut |_, _| true)
        .expect("a valid scenario")
}

/// A table's column as numbers (counts and measures alike).
pub fn numbers(out: &crate::RunOutput, table: &str, column: &str) -> Vec<f64> {
    use crate::measure::Column;
    let t = out.tables.iter().find(|t| t.name == table).expect(table);
    match t.get(column) {
        Some(Column::U64(v)) => v.iter().map(|&x| x as f64).collect(),
        Some(Column::I64(v)) => v.iter().map(|&x| x as f64).collect(),
        Some(Column::F64(v)) => v.clone(),
        other => panic!("{table}.{column}: {other:?}"),
    }
}

/// A table's column of names (the flows table's `flow`).
pub fn names(out: &crate::RunOutput, table: &str, column: &str) -> Vec<String> {
    use crate::measure::Column;
    let t = out.tables.iter().find(|t| t.name == table).expect(table);
    match t.get(column) {
        Some(Column::Names { names, codes }) => {
            codes.iter().map(|&c| names[c as usize].clone()).collect()
        }
        other => panic!("{table}.{column}: {other:?}"),
    }
}
