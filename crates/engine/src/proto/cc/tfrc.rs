//! TFRC (RFC 5348) behind the rate-controller seam: the sender's allowed
//! rate X paces the packets (with oscillation prevention, section 4.5),
//! the receiver half returns TFRC feedback (p and X_recv). The rules are in
//! `proto::tfrc`; this file only adapts them.

use super::{CcMedia, CcModel, CcSite, Departure, FeedbackReceiver, RateController, Stamp};
use crate::net::Payload;
use crate::proto::tfrc::{DataHeader, Feedback, TfrcConfig, TfrcReceiver, TfrcSender};
use crate::scenario::check::Checker;
use crate::sim::{Series, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

fn d_b() -> f64 {
    1.0
}
fn d_true() -> bool {
    true
}

/// TFRC (RFC 5348): the equation-based rate from the loss event rate and
/// the RTT, with slow start and the no-feedback timer. Its segment size s
/// is the flow's packet size.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TfrcCcSpec {
    /// Packets per ACK in the equation (RFC 5348: 1).
    #[serde(default = "d_b")]
    pub b: f64,
    /// RFC 5348 section 5.5.
    #[serde(default = "d_true")]
    pub history_discounting: bool,
    /// RFC 5348 section 4.5.
    #[serde(default = "d_true")]
    pub oscillation_prevention: bool,
}

impl TfrcCcSpec {
    fn config(&self, s: u32) -> TfrcConfig {
        TfrcConfig {
            s,
            b: self.b,
            history_discounting: self.history_discounting,
            oscillation_prevention: self.oscillation_prevention,
            ..Default::default()
        }
    }
}

impl CcModel for TfrcCcSpec {
    fn validate(&self, path: &str, _media: CcMedia, c: &mut Checker) {
        if !(self.b.is_finite() && self.b >= 1.0) {
            c.err(
                format!("{path}.b"),
                format!("must be at least 1 (got {})", self.b),
            );
        }
    }
    fn build(&self, site: &CcSite<'_>) -> (Box<dyn RateController>, Box<dyn FeedbackReceiver>) {
        let cfg = self.config(site.packet_bytes);
        (
            Box::new(TfrcRate::new(cfg.clone())),
            Box::new(TfrcFeedback::new(cfg)),
        )
    }
}

/// TFRC's sending half.
pub struct TfrcRate {
    cfg: TfrcConfig,
    snd: Option<TfrcSender>,
}

impl TfrcRate {
    pub fn new(cfg: TfrcConfig) -> Self {
        TfrcRate { cfg, snd: None }
    }
    fn snd(&self) -> &TfrcSender {
        self.snd.as_ref().expect("started")
    }
    fn snd_mut(&mut self) -> &mut TfrcSender {
        self.snd.as_mut().expect("started")
    }
}

impl RateController for TfrcRate {
    fn start(&mut self, now: SimTime, series_rows: usize) {
        let mut t = TfrcSender::new(self.cfg.clone(), now);
        t.rate_series.set_rows(series_rows);
        self.snd = Some(t);
    }
    fn on_send(&mut self, now: SimTime, d: Departure) -> (Stamp, SimTime) {
        let t = self.snd_mut();
        let h = t.on_send(now, d.bytes);
        let stamp = Stamp {
            seq: h.seq,
            sent_at: h.sent_at,
            rtt: h.rtt,
            pair: 0,
            echo: None,
        };
        (stamp, now.max(d.due) + t.interval())
    }
    fn on_feedback(&mut self, now: SimTime, fb: &Payload, next_send: SimTime) -> Option<SimTime> {
        let fb = fb.get::<Feedback>()?;
        Some(self.snd_mut().on_feedback_paced(now, fb, next_send))
    }
    fn deadline(&self) -> Option<SimTime> {
        Some(self.snd().nofeedback_deadline())
    }
    fn on_timer(&mut self, now: SimTime) {
        self.snd_mut().on_nofeedback(now);
    }
    fn target_bps(&self) -> f64 {
        self.snd().rate() * 8.0
    }
    fn packets(&self) -> u64 {
        self.snd().stats.packets
    }
    fn rate_series(&self) -> Vec<(SimTime, f64)> {
        self.snd().rate_series.scaled(8.0)
    }
    fn value(&self, name: &str) -> Option<f64> {
        let t = self.snd.as_ref()?;
        match name {
            "rtt_ms" => Some(t.rtt().map_or(f64::NAN, |r| r * 1e3)),
            "p" => Some(t.loss_event_rate()),
            "feedbacks" => Some(t.stats.feedbacks as f64),
            "nofeedback_expiries" => Some(t.stats.nofeedback_expiries as f64),
            _ => None,
        }
    }
}

/// TFRC's receiving half: loss history and feedback (RFC 5348 section 6),
/// with the loss event rate it reported over time (series "p").
pub struct TfrcFeedback {
    rx: TfrcReceiver,
    p_series: Series,
}

impl TfrcFeedback {
    pub fn new(cfg: TfrcConfig) -> Self {
        TfrcFeedback {
            rx: TfrcReceiver::new(cfg),
            p_series: Series::default(),
        }
    }

    fn send(&mut self, now: SimTime, fb: Feedback, out: &mut Vec<Payload>) {
        self.p_series.push_change(now, fb.p);
        out.push(Payload::new(fb));
    }
}

impl FeedbackReceiver for TfrcFeedback {
    fn on_data(&mut self, now: SimTime, s: &Stamp, bytes: u32, out: &mut Vec<Payload>) {
        let h = DataHeader {
            seq: s.seq,
            sent_at: s.sent_at,
            rtt: s.rtt,
        };
        if let Some(fb) = self.rx.on_data(now, h, bytes) {
            self.send(now, fb, out);
        }
    }
    fn deadline(&self) -> Option<SimTime> {
        self.rx.deadline()
    }
    fn on_timer(&mut self, now: SimTime, out: &mut Vec<Payload>) {
        if let Some(fb) = self.rx.on_timer(now) {
            self.send(now, fb, out);
        }
    }
    fn set_series_rows(&mut self, rows: usize) {
        self.p_series.set_rows(rows);
    }
    fn value(&self, name: &str) -> Option<f64> {
        let h = &self.rx.hist;
        match name {
            "p" => Some(self.rx.loss_event_rate()),
            "packets" => Some(self.rx.stats.packets as f64),
            "feedbacks" => Some(self.rx.stats.feedbacks as f64),
            "lost_packets" => Some(h.lost_packets as f64),
            "loss_events" => Some(h.loss_events as f64),
            _ => None,
        }
    }
    fn series(&self, name: &str) -> Option<Vec<(SimTime, f64)>> {
        (name == "p").then(|| self.p_series.points().to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::said;

    fn spec(json: &str) -> TfrcCcSpec {
        serde_json::from_str(json).expect("a valid TFRC spec")
    }

    #[test]
    fn the_spec_reaches_the_configuration_with_the_flows_packet_size() {
        // RFC 5348's defaults: b = 1, history discounting (5.5) and
        // oscillation prevention (4.5) on.
        let c = spec("{}").config(1200);
        let d = TfrcConfig::default();
        assert_eq!((c.s, c.b), (1200, 1.0));
        assert!(c.history_discounting && c.oscillation_prevention);
        assert_eq!((c.t_mbi, c.n_intervals), (d.t_mbi, d.n_intervals));
        let c = spec(r#"{"b": 2, "history_discounting": false, "oscillation_prevention": false}"#)
            .config(500);
        assert_eq!((c.s, c.b), (500, 2.0));
        assert!(!c.history_discounting && !c.oscillation_prevention);
        let c = spec(r#"{"history_discounting": false}"#).config(500);
        assert!(!c.history_discounting && c.oscillation_prevention);
        // TFRC returns its own feedback (RFC 5348 6.2), not a session's
        // per-packet reports.
        assert!(spec("{}").own_feedback());
    }

    #[test]
    fn b_is_at_least_one_packet_per_ack() {
        let said = |b: f64| {
            let s = TfrcCcSpec {
                b,
                history_discounting: true,
                oscillation_prevention: true,
            };
            said(|c| s.validate("cc", CcMedia::default(), c))
        };
        assert!(said(1.0).is_empty() && said(2.5).is_empty());
        assert_eq!(said(0.99), ["cc.b: must be at least 1 (got 0.99)"]);
        for b in [f64::INFINITY, f64::NAN] {
            assert_eq!(said(b).len(), 1, "{b}");
        }
    }

    #[test]
    fn the_two_halves_report_their_state_by_name() {
        use crate::sim::RngStreams;
        let rng = RngStreams::new(1, 0);
        let site = CcSite::alone(&rng, 1000);
        let (mut tx, mut rx) = spec("{}").build(&site);
        tx.start(SimTime::ZERO, 10);
        // RFC 5348 4.2: one packet a second before feedback, in bit/s.
        assert_eq!(tx.target_bps(), 8000.0);
        assert!(tx.deadline().is_some());
        let t = SimTime::from_millis;
        let d = |due| Departure {
            bytes: 1000,
            due,
            next_same_size: false,
        };
        let mut stamps = Vec::new();
        for k in 0..6 {
            stamps.push(tx.on_send(t(k * 10), d(t(k * 10))).0);
        }
        // Packet 2 lost; three later arrivals reveal it (RFC 5348 5.1).
        let mut out = Vec::new();
        for (k, s) in stamps.iter().enumerate().filter(|(k, _)| *k != 2) {
            rx.on_data(t(k as u64 * 10 + 40), s, 1000, &mut out);
        }
        let v = |name: &str| rx.value(name).expect(name);
        assert_eq!(
            (v("packets"), v("lost_packets"), v("loss_events")),
            (5.0, 1.0, 1.0)
        );
        assert!(v("p") > 0.0 && v("feedbacks") >= 1.0);
        assert_eq!(v("feedbacks"), out.len() as f64);
        assert_eq!(rx.value("other"), None);
        // The first feedback gives the sender its RTT: 40 ms less the
        // receiver's hold (t_delay).
        assert!(tx.on_feedback(t(100), &out[0], t(100)).is_some());
        let rtt_ms = tx.value("rtt_ms").expect("rtt_ms");
        assert!(rtt_ms > 40.0 && rtt_ms <= 100.0, "{rtt_ms}");
        assert_eq!(tx.value("feedbacks"), Some(1.0));
        assert_eq!(tx.value("nofeedback_expiries"), Some(0.0));
        assert!(tx.value("p").is_some_and(|p| p >= 0.0));
        assert_eq!(tx.value("other"), None);
        // Silence: the no-feedback timer runs out, and is counted.
        let at = tx.deadline().expect("a no-feedback timer");
        tx.on_timer(at);
        assert_eq!(tx.value("nofeedback_expiries"), Some(1.0));
    }
}
