//! PPACC (packet-pair assisted congestion control) behind the
//! rate-controller seam: the sender paces at its target rate and sends
//! equal-sized successors as pairs s/Cb apart; the receiver half measures
//! the pairs' dispersion, reports the available-bandwidth estimate every
//! `feedback_ms` and a loss notice at once. The rules are in
//! `proto::ppacc` (docs/models/ppacc.md); this file only adapts them.

use super::{CcMedia, CcModel, CcSite, Departure, FeedbackReceiver, RateController, Stamp};
use crate::net::Payload;
use crate::proto::ppacc::endpoints::{PairTag, PpaccReceiver, PpaccSender, Report};
use crate::proto::ppacc::PpaccConfig;
use crate::scenario::check::Checker;
use crate::sim::{Series, SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

fn d_fb_ms() -> f64 {
    100.0
}
fn d_initial() -> f64 {
    300e3
}

/// PPACC's settings (docs/models/ppacc.md has each default's reason).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PpaccSpec {
    /// Bottleneck capacity known beforehand (Cb), bit/s.
    pub capacity_bps: f64,
    /// Period of the receiver's estimate reports.
    #[serde(default = "d_fb_ms")]
    pub feedback_ms: f64,
    /// Target rate at the start.
    #[serde(default = "d_initial")]
    pub initial_bps: f64,
    #[serde(default)]
    pub eps_bps: Option<f64>,
    #[serde(default)]
    pub kappa_bps: Option<f64>,
    #[serde(default)]
    pub a_weight: Option<f64>,
    #[serde(default)]
    pub bias_weight: Option<f64>,
    #[serde(default)]
    pub short_timer_ms: Option<f64>,
    #[serde(default)]
    pub long_timer_max_gops: Option<u32>,
    #[serde(default)]
    pub min_rate_bps: Option<f64>,
    /// Pace packets at the target rate (default true); false: packets
    /// leave as the media makes them, only the pairs spaced.
    #[serde(default)]
    pub shaping: Option<bool>,
    /// Without shaping: no two packets leave closer than s / Cb (default
    /// false: back to back between pairs).
    #[serde(default)]
    pub capacity_spacing: Option<bool>,
    /// With shaping: pace at this times the target (default 1).
    #[serde(default)]
    pub pacing_factor: Option<f64>,
}

impl PpaccSpec {
    pub fn config(&self) -> crate::proto::ppacc::PpaccConfig {
        let d = crate::proto::ppacc::PpaccConfig::default();
        crate::proto::ppacc::PpaccConfig {
            eps_bps: self.eps_bps.unwrap_or(d.eps_bps),
            kappa_bps: self.kappa_bps.unwrap_or(d.kappa_bps),
            a_weight: self.a_weight.unwrap_or(d.a_weight),
            bias_weight: self.bias_weight.unwrap_or(d.bias_weight),
            short_timer: self
                .short_timer_ms
                .map_or(d.short_timer, SimTime::from_millis_f64),
            long_timer_max_gops: self.long_timer_max_gops.unwrap_or(d.long_timer_max_gops),
            event_window: d.event_window,
            min_rate_bps: self.min_rate_bps.unwrap_or(d.min_rate_bps),
            shaping: self.shaping.unwrap_or(d.shaping),
            pacing_factor: self.pacing_factor.unwrap_or(d.pacing_factor),
            capacity_spacing: self.capacity_spacing.unwrap_or(d.capacity_spacing),
        }
    }

    pub fn check(&self, p: &str, c: &mut Checker) {
        // The receiver reports every feedback_ms: a period, so at least
        // 1 us (a report every nanosecond stalls the clock).
        c.interval_ms(format_args!("{p}.feedback_ms"), self.feedback_ms);
        for (f, v) in [
            ("capacity_bps", Some(self.capacity_bps)),
            ("initial_bps", Some(self.initial_bps)),
            ("eps_bps", self.eps_bps),
            ("kappa_bps", self.kappa_bps),
            ("short_timer_ms", self.short_timer_ms),
            ("min_rate_bps", self.min_rate_bps),
        ] {
            if let Some(v) = v {
                c.positive(format_args!("{p}.{f}"), v);
            }
        }
        for (f, v) in [
            ("a_weight", self.a_weight),
            ("bias_weight", self.bias_weight),
        ] {
            if let Some(v) = v.filter(|v| !(*v > 0.0 && *v <= 1.0)) {
                c.err(format!("{p}.{f}"), format!("must be in (0, 1] (got {v})"));
            }
        }
        c.at_least_one(
            format_args!("{p}.long_timer_max_gops"),
            self.long_timer_max_gops.map(u64::from),
        );
        if let Some(f) = self.pacing_factor {
            if self.shaping == Some(false) {
                c.err(format!("{p}.pacing_factor"), "not used without shaping");
            } else if !(f >= 1.0 && f.is_finite()) {
                c.err(
                    format!("{p}.pacing_factor"),
                    format!("must be a finite number of at least 1 (got {f})"),
                );
            }
        }
    }
}

impl CcModel for PpaccSpec {
    fn validate(&self, path: &str, _media: CcMedia, c: &mut Checker) {
        self.check(path, c);
    }
    fn build(&self, site: &CcSite<'_>) -> (Box<dyn RateController>, Box<dyn FeedbackReceiver>) {
        let cfg = self.config();
        let rng = site.stream("ppacc");
        let rx = PpaccReceiver::new(
            &cfg,
            self.capacity_bps,
            SimTime::from_millis_f64(self.feedback_ms),
        );
        (
            Box::new(PpaccRate {
                setup: Some((cfg, self.capacity_bps, self.initial_bps, rng)),
                snd: None,
            }),
            Box::new(PpaccFeedback {
                rx,
                a_series: Series::default(),
            }),
        )
    }
}

/// PPACC's sending half (made at the flow's start).
pub struct PpaccRate {
    setup: Option<(PpaccConfig, f64, f64, SimRng)>,
    snd: Option<PpaccSender>,
}

impl PpaccRate {
    fn snd(&self) -> &PpaccSender {
        self.snd.as_ref().expect("started")
    }
    fn snd_mut(&mut self) -> &mut PpaccSender {
        self.snd.as_mut().expect("started")
    }
}

impl RateController for PpaccRate {
    fn start(&mut self, _now: SimTime, series_rows: usize) {
        let (cfg, cb, initial, rng) = self.setup.take().expect("started once");
        let mut p = PpaccSender::new(cfg, cb, initial, rng);
        p.control.target_series.set_rows(series_rows);
        self.snd = Some(p);
    }
    fn on_send(&mut self, now: SimTime, d: Departure) -> (Stamp, SimTime) {
        let (tag, next) = self.snd_mut().on_send(now, d.bytes, d.next_same_size);
        let stamp = Stamp {
            seq: tag.seq,
            sent_at: now,
            rtt: SimTime::ZERO,
            pair: tag.pair,
            echo: None,
        };
        (stamp, next)
    }
    fn on_feedback(&mut self, now: SimTime, fb: &Payload, next_send: SimTime) -> Option<SimTime> {
        let r = fb.get::<Report>()?;
        self.snd_mut().on_report(now, r);
        Some(next_send)
    }
    fn target_bps(&self) -> f64 {
        self.snd().target_bps()
    }
    fn on_frame_group(&mut self, now: SimTime, len: SimTime) {
        self.snd_mut().control.on_gop(now, len);
    }
    fn packets(&self) -> u64 {
        self.snd().control.packets
    }
    fn rate_series(&self) -> Vec<(SimTime, f64)> {
        self.snd().control.target_series.points().to_vec()
    }
}

/// PPACC's receiving half, with its reported estimates over time.
pub struct PpaccFeedback {
    rx: PpaccReceiver,
    a_series: Series,
}

impl FeedbackReceiver for PpaccFeedback {
    fn on_data(&mut self, now: SimTime, s: &Stamp, bytes: u32, out: &mut Vec<Payload>) {
        let tag = PairTag {
            seq: s.seq,
            pair: s.pair,
        };
        for rep in self.rx.on_data(now, tag, s.sent_at, bytes as f64 * 8.0) {
            out.push(Payload::new(rep));
        }
    }
    fn deadline(&self) -> Option<SimTime> {
        self.rx.deadline()
    }
    fn on_timer(&mut self, now: SimTime, out: &mut Vec<Payload>) {
        if let Some(f) = self.rx.on_timer(now) {
            if let Report::Estimate { a_bps, .. } = f {
                self.a_series.push(now, a_bps);
            }
            out.push(Payload::new(f));
        }
    }
    fn set_series_rows(&mut self, rows: usize) {
        self.a_series.set_rows(rows);
    }
    fn value(&self, name: &str) -> Option<f64> {
        (name == "available_bps").then(|| self.rx.estimator.available_bps().unwrap_or(f64::NAN))
    }
    fn series(&self, name: &str) -> Option<Vec<(SimTime, f64)>> {
        (name == "available_bps").then(|| self.a_series.points().to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::said;
    use crate::sim::RngStreams;

    fn spec(json: &str) -> PpaccSpec {
        serde_json::from_str(json).expect("a valid PPACC spec")
    }

    #[test]
    fn the_spec_reaches_the_configuration() {
        let s = spec(r#"{"capacity_bps": 3e6}"#);
        assert_eq!((s.feedback_ms, s.initial_bps), (100.0, 300e3));
        let (c, d) = (s.config(), PpaccConfig::default());
        assert_eq!(
            (c.eps_bps, c.kappa_bps, c.a_weight, c.bias_weight),
            (d.eps_bps, d.kappa_bps, d.a_weight, d.bias_weight)
        );
        assert_eq!(
            (c.short_timer, c.long_timer_max_gops, c.min_rate_bps),
            (d.short_timer, d.long_timer_max_gops, d.min_rate_bps)
        );
        assert_eq!(
            (c.shaping, c.capacity_spacing, c.event_window),
            (d.shaping, d.capacity_spacing, d.event_window)
        );
        assert_eq!((c.pacing_factor, d.pacing_factor), (1.0, 1.0));
        assert_eq!(
            spec(r#"{"capacity_bps": 3e6, "pacing_factor": 2.5}"#)
                .config()
                .pacing_factor,
            2.5
        );
        let s = spec(
            r#"{"capacity_bps": 3e6, "eps_bps": 1, "kappa_bps": 2, "a_weight": 0.5,
            "bias_weight": 0.75, "short_timer_ms": 10, "long_timer_max_gops": 9,
            "min_rate_bps": 3, "shaping": false, "capacity_spacing": true}"#,
        );
        let c = s.config();
        assert_eq!(
            (c.eps_bps, c.kappa_bps, c.a_weight, c.bias_weight),
            (1.0, 2.0, 0.5, 0.75)
        );
        assert_eq!(
            (c.short_timer, c.long_timer_max_gops, c.min_rate_bps),
            (SimTime::from_millis(10), 9, 3.0)
        );
        assert!(!c.shaping && c.capacity_spacing);
    }

    #[test]
    fn each_value_is_checked_at_its_bounds() {
        let said = |json: &str| said(|c| spec(json).validate("cc", CcMedia::default(), c));
        let ok =
            r#"{"capacity_bps": 1, "a_weight": 1, "bias_weight": 1e-9, "long_timer_max_gops": 1}"#;
        assert_eq!(said(ok), Vec::<String>::new());
        for (field, value) in [
            ("feedback_ms", "0"),
            ("feedback_ms", "0.0001"),
            ("initial_bps", "-1"),
            ("eps_bps", "0"),
            ("kappa_bps", "0"),
            ("short_timer_ms", "0"),
            ("min_rate_bps", "0"),
            ("a_weight", "0"),
            ("a_weight", "1.01"),
            ("bias_weight", "-0.5"),
            ("long_timer_max_gops", "0"),
        ] {
            let e = said(&format!(r#"{{"capacity_bps": 1e6, "{field}": {value}}}"#));
            assert_eq!(e.len(), 1, "{field} {value}: {e:?}");
            assert!(e[0].starts_with(&format!("cc.{field}: ")), "{e:?}");
        }
        assert_eq!(said(r#"{"capacity_bps": 0}"#).len(), 1);
        assert_eq!(
            said(r#"{"capacity_bps": 1e6, "a_weight": 2}"#),
            ["cc.a_weight: must be in (0, 1] (got 2)"]
        );
        // The pacing factor: at least 1, and only with shaping.
        assert!(said(r#"{"capacity_bps": 1e6, "pacing_factor": 1}"#).is_empty());
        assert!(said(r#"{"capacity_bps": 1e6, "shaping": true, "pacing_factor": 3}"#).is_empty());
        assert_eq!(
            said(r#"{"capacity_bps": 1e6, "pacing_factor": 0.99}"#),
            ["cc.pacing_factor: must be a finite number of at least 1 (got 0.99)"]
        );
        assert_eq!(
            said(r#"{"capacity_bps": 1e6, "shaping": false, "pacing_factor": 2}"#),
            ["cc.pacing_factor: not used without shaping"]
        );
    }

    #[test]
    fn pairs_leave_s_over_cb_apart_and_their_dispersion_comes_back_as_the_estimate() {
        let rng = RngStreams::new(1, 0);
        let site = CcSite::alone(&rng, 1000);
        let (mut tx, mut rx) = spec(r#"{"capacity_bps": 1e6}"#).build(&site);
        tx.start(SimTime::ZERO, 100);
        rx.set_series_rows(100);
        assert_eq!((tx.target_bps(), tx.packets()), (300e3, 0));
        let d = |due, next_same_size| Departure {
            bytes: 1000,
            due,
            next_same_size,
        };
        // Two equal packets ready: a pair, the second s / Cb = 8 ms after.
        let (s0, next) = tx.on_send(SimTime::ZERO, d(SimTime::ZERO, true));
        assert_eq!((s0.seq, s0.pair, next), (0, 1, SimTime::from_millis(8)));
        let (s1, _) = tx.on_send(next, d(next, false));
        assert_eq!((s1.seq, s1.pair, s1.sent_at), (1, 2, next));
        assert_eq!(tx.packets(), 2);
        // Arriving as they left, 8 ms apart: A = 2 Cb - d Cb^2 / s = Cb.
        let mut out = Vec::new();
        let t = SimTime::from_millis;
        rx.on_data(t(20), &s0, 1000, &mut out);
        rx.on_data(t(28), &s1, 1000, &mut out);
        assert!(out.is_empty());
        assert_eq!(rx.value("available_bps"), Some(1e6));
        assert_eq!(rx.value("other"), None);
        let at = rx.deadline().expect("a report due");
        rx.on_timer(at, &mut out);
        assert!(
            matches!(out[..], [ref p] if p.get::<Report>().is_some_and(|r| matches!(r, Report::Estimate { a_bps, .. } if *a_bps == 1e6)))
        );
        assert_eq!(rx.series("available_bps"), Some(vec![(at, 1e6)]));
        assert_eq!(rx.series("other"), None);
        // Series off (the scenario's `measure.series`): nothing kept.
        rx.set_series_rows(0);
        assert_eq!(rx.series("available_bps"), Some(vec![]));
        // The sender takes the report; at the next group of frames its
        // target climbs towards the estimate, by at least eps.
        assert_eq!(tx.on_feedback(at, &out[0], t(50)), Some(t(50)));
        tx.on_frame_group(t(100), t(267));
        assert!(tx.target_bps() >= 300e3 + 5e3, "{}", tx.target_bps());
        assert_eq!(tx.rate_series().last().map(|x| x.1), Some(tx.target_bps()));
        // A gap in the sequence is reported at once.
        let (_lost, _) = tx.on_send(t(200), d(t(200), false));
        let (s3, _) = tx.on_send(t(210), d(t(210), false));
        out.clear();
        rx.on_data(t(230), &s3, 1000, &mut out);
        assert!(out
            .iter()
            .any(|p| matches!(p.get::<Report>(), Some(Report::Loss { .. }))));
    }
}
