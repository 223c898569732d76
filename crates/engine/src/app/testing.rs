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
    /// Frame groups announced, feedback and timers seen: their times.
    pub groups: Vec<(SimTime, SimTime)>,
    pub feedback: Vec<SimTime>,
    pub timers: Vec<SimTime>,
    pub sent: u64,
}

/// Paces at the scripted rate (a packet of b bytes holds the next back by
/// b * 8 / rate), stamps packets 0, 1, ..., and answers every feedback
/// with `release_at`, or else the caller's next-send time.
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
        self.0.lock().unwrap().timers.push(now);
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
