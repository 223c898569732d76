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
            capacity_spacing: self.capacity_spacing.unwrap_or(d.capacity_spacing),
        }
    }

    pub fn check(&self, p: &str, c: &mut Checker) {
        for (f, v) in [
            ("capacity_bps", Some(self.capacity_bps)),
            ("feedback_ms", Some(self.feedback_ms)),
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
