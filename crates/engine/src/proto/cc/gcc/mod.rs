//! Google Congestion Control (draft-ietf-rmcat-gcc-02), sender-side as
//! libwebrtc runs it: the per-packet feedback (transport-wide or RFC
//! 8888) gives each packet's arrival time; packets are grouped
//! (`arrival`), the delay gradient between groups is filtered (the
//! draft's Kalman filter, `kalman`, or libwebrtc's trendline,
//! `trendline`), compared with an adaptive threshold (`detector`), and
//! the signal drives the AIMD rate controller (`aimd`) against the
//! received rate (`rate`). The loss-based controller (`loss`) caps the
//! result; the target is within [min_bps, max_bps].
//!
//! With `probing`, the start of a call probes the path as libwebrtc does
//! (`probe`): a probe's estimate sets the delay-based and the loss-based
//! rate at once, and for the first `start_phase_ms` while no loss is
//! reported the loss-based rate follows the delay-based one.
//!
//! What it leaves out (docs/models/gcc.md): probing beyond the start
//! (after a large drop in the application-limited region, on a raised
//! maximum), the application-limited region detector and the newer
//! loss-based estimator of libwebrtc; the RTT is the newest packet's
//! feedback delay (it includes the feedback interval), smoothed.

pub mod aimd;
pub mod arrival;
pub mod detector;
pub mod kalman;
pub mod loss;
pub mod probe;
pub mod rate;
pub mod trendline;

use super::fixed::NoFeedback;
use super::{CcMedia, CcModel, CcSite, Departure, FeedbackReceiver, RateController, Stamp};
use crate::net::Payload;
use crate::proto::feedback::PacketResult;
use crate::scenario::check::{Checker, MAX_DELAY_MS};
use crate::sim::{Series, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

use aimd::Aimd;
use arrival::InterArrival;
use detector::{Detector, Usage};
use kalman::Kalman;
use loss::LossBased;
use rate::RateWindow;
use trendline::Trendline;

/// Which filter estimates the delay gradient.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GccEstimator {
    /// libwebrtc's trendline (window 20, smoothing 0.9, gain 4).
    #[default]
    Trendline,
    /// The draft's scalar Kalman filter (5.3).
    Kalman,
}

macro_rules! defaults {
    ($($f:ident: $t:ty = $v:expr;)*) => { $(fn $f() -> $t { $v })* };
}
defaults! {
    d_start: f64 = 300e3;
    d_min: f64 = 150e3;
    d_max: f64 = 1.5e6;
    d_beta: f64 = 0.85;
    d_eta: f64 = 1.08;
    d_group_ms: f64 = 5.0;
    d_overuse_ms: f64 = 10.0;
    d_threshold_ms: f64 = 12.5;
    d_window: u32 = 20;
    d_smoothing: f64 = 0.9;
    d_gain: f64 = 4.0;
    d_q: f64 = 1e-3;
    d_chi: f64 = 0.01;
    d_e0: f64 = 0.1;
    d_rate_window_ms: f64 = 500.0;
    d_loss_min_packets: u32 = 20;
    d_loss_high: f64 = 0.1;
    d_loss_low: f64 = 0.02;
    d_loss_increase: f64 = 1.08;
    d_loss_increase_window_ms: f64 = 1000.0;
    d_loss_decrease_interval_ms: f64 = 300.0;
    d_probing: bool = true;
    d_probe_first: f64 = 3.0;
    d_probe_second: f64 = 6.0;
    d_probe_min_packets: u32 = 5;
    d_probe_min_ms: f64 = 15.0;
    d_start_phase_ms: f64 = 2000.0;
}

/// GCC (draft-ietf-rmcat-gcc-02) on the member's per-packet feedback.
/// Rates are on the wire (IP, UDP and RTP headers included).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GccSpec {
    /// "trendline" (libwebrtc, default) or "kalman" (the draft).
    #[serde(default)]
    pub estimator: GccEstimator,
    /// The first target, bit/s (libwebrtc's default start).
    #[serde(default = "d_start")]
    pub start_bps: f64,
    /// The lowest target, bit/s (RFC 8867's R_min).
    #[serde(default = "d_min")]
    pub min_bps: f64,
    /// The highest target, bit/s (RFC 8867's R_max).
    #[serde(default = "d_max")]
    pub max_bps: f64,
    /// A decrease sets the estimate to beta times the received rate.
    #[serde(default = "d_beta")]
    pub beta: f64,
    /// Multiplicative increase per second.
    #[serde(default = "d_eta")]
    pub eta: f64,
    /// Packets sent within this of a group's first form the group, and
    /// a burst joins it if it arrives within this of its last, ms.
    #[serde(default = "d_group_ms")]
    pub group_ms: f64,
    /// Time above the threshold before overuse is signalled, ms.
    #[serde(default = "d_overuse_ms")]
    pub overuse_time_ms: f64,
    /// The adaptive threshold's start, ms.
    #[serde(default = "d_threshold_ms")]
    pub threshold_ms: f64,
    /// The threshold's gain upwards (|m| above it); default 0.0087 with
    /// the trendline (libwebrtc), 0.01 with the Kalman filter (the draft).
    #[serde(default)]
    pub k_up: Option<f64>,
    /// Its gain downwards; default 0.039 with the trendline, 0.00018 with
    /// the Kalman filter.
    #[serde(default)]
    pub k_down: Option<f64>,
    /// Trendline: points in the regression.
    #[serde(default = "d_window")]
    pub trendline_window: u32,
    /// Trendline: smoothing of the accumulated delay.
    #[serde(default = "d_smoothing")]
    pub trendline_smoothing: f64,
    /// Trendline: gain on the slope.
    #[serde(default = "d_gain")]
    pub trendline_gain: f64,
    /// Kalman: the state noise variance q.
    #[serde(default = "d_q")]
    pub kalman_q: f64,
    /// Kalman: chi, the noise variance's filter coefficient.
    #[serde(default = "d_chi")]
    pub kalman_chi: f64,
    /// Kalman: the error variance's start e(0).
    #[serde(default = "d_e0")]
    pub kalman_e0: f64,
    /// The received rate's window, ms (the draft: 500 to 1000).
    #[serde(default = "d_rate_window_ms")]
    pub rate_window_ms: f64,
    /// Feedback is pooled until it covers this many packets before the
    /// loss-based controller acts (libwebrtc's 20).
    #[serde(default = "d_loss_min_packets")]
    pub loss_min_packets: u32,
    /// Above this loss fraction the loss-based rate falls.
    #[serde(default = "d_loss_high")]
    pub loss_high: f64,
    /// Below this it rises.
    #[serde(default = "d_loss_low")]
    pub loss_low: f64,
    /// Its factor when it rises (libwebrtc's 1.08; the draft's 1.05).
    #[serde(default = "d_loss_increase")]
    pub loss_increase: f64,
    /// A rise sets the loss-based rate to `loss_increase` times its least
    /// over this window, plus 1 kbit/s, ms (libwebrtc's 1000; 0: it
    /// multiplies by `loss_increase` on every pool under `loss_low`).
    #[serde(default = "d_loss_increase_window_ms")]
    pub loss_increase_window_ms: f64,
    /// A loss-based decrease waits this long plus an RTT after the last,
    /// ms (libwebrtc's 300; 0: no wait, every pool over `loss_high` cuts,
    /// as the draft acts on every report).
    #[serde(default = "d_loss_decrease_interval_ms")]
    pub loss_decrease_interval_ms: f64,
    /// Probe the path at the start (libwebrtc's initial exponential
    /// probing; the pacer pads when media does not fill a probe).
    #[serde(default = "d_probing")]
    pub probing: bool,
    /// The first probe's rate over `start_bps` (libwebrtc's 3).
    #[serde(default = "d_probe_first")]
    pub probe_first_scale: f64,
    /// The second probe's, sent right after it (6; 0: none).
    #[serde(default = "d_probe_second")]
    pub probe_second_scale: f64,
    /// Packets in a probe (libwebrtc's 5).
    #[serde(default = "d_probe_min_packets")]
    pub probe_min_packets: u32,
    /// A probe's bytes: at least its rate times this, ms (libwebrtc's 15).
    #[serde(default = "d_probe_min_ms")]
    pub probe_min_ms: f64,
    /// With `probing`: for this long after the first feedback, while none
    /// reports a loss, the loss-based rate follows the delay-based
    /// estimate up (libwebrtc's start phase, 2000 ms).
    #[serde(default = "d_start_phase_ms")]
    pub start_phase_ms: f64,
}

impl GccSpec {
    fn k_up(&self) -> f64 {
        self.k_up.unwrap_or(match self.estimator {
            GccEstimator::Trendline => 0.0087,
            GccEstimator::Kalman => 0.01,
        })
    }
    fn k_down(&self) -> f64 {
        self.k_down.unwrap_or(match self.estimator {
            GccEstimator::Trendline => 0.039,
            GccEstimator::Kalman => 0.00018,
        })
    }

    fn validate_probing(&self, path: &str, c: &mut Checker) {
        if !(self.probe_first_scale.is_finite() && self.probe_first_scale > 1.0) {
            let msg = format!("must be above 1 (got {})", self.probe_first_scale);
            c.err(format!("{path}.probe_first_scale"), msg);
        }
        let second = self.probe_second_scale;
        if !(second.is_finite() && (second == 0.0 || second > 1.0)) {
            c.err(
                format!("{path}.probe_second_scale"),
                format!("must be 0 (no second probe) or above 1 (got {second})"),
            );
        }
        if !(1..=100).contains(&self.probe_min_packets) {
            let msg = format!("must be 1..=100 packets (got {})", self.probe_min_packets);
            c.err(format!("{path}.probe_min_packets"), msg);
        }
        c.interval_ms(format_args!("{path}.probe_min_ms"), self.probe_min_ms);
        let field = format!("{path}.start_phase_ms");
        c.non_negative(&field, self.start_phase_ms);
        c.at_most(&field, self.start_phase_ms, MAX_DELAY_MS);
    }

    fn probe_shape(&self) -> probe::ProbeShape {
        probe::ProbeShape {
            first_scale: self.probe_first_scale,
            second_scale: self.probe_second_scale,
            min_packets: self.probe_min_packets,
            min_duration: SimTime::from_millis_f64(self.probe_min_ms),
        }
    }
}

impl CcModel for GccSpec {
    fn validate(&self, path: &str, media: CcMedia, c: &mut Checker) {
        super::require_packet_feedback("gcc", path, media, c);
        if self.probing && media.packet_feedback && !media.pacer {
            let msg = "probes leave through the member's pacer: give the member a `pacer` (or set probing = false)";
            c.err(format!("{path}.probing"), msg);
        }
        for (name, x) in [
            ("start_bps", self.start_bps),
            ("min_bps", self.min_bps),
            ("max_bps", self.max_bps),
            ("group_ms", self.group_ms),
            ("threshold_ms", self.threshold_ms),
            ("trendline_gain", self.trendline_gain),
            ("kalman_q", self.kalman_q),
            ("kalman_e0", self.kalman_e0),
        ] {
            c.positive(format_args!("{path}.{name}"), x);
        }
        c.non_negative(format_args!("{path}.overuse_time_ms"), self.overuse_time_ms);
        c.interval_ms(format_args!("{path}.rate_window_ms"), self.rate_window_ms);
        for (name, x) in [
            ("loss_decrease_interval_ms", self.loss_decrease_interval_ms),
            ("loss_increase_window_ms", self.loss_increase_window_ms),
        ] {
            let field = format!("{path}.{name}");
            c.non_negative(&field, x);
            c.at_most(&field, x, MAX_DELAY_MS);
        }
        c.at_least_one(
            format_args!("{path}.loss_min_packets"),
            Some(self.loss_min_packets as u64),
        );
        self.validate_probing(path, c);
        super::check_rate_range(
            path,
            ("min_bps", self.min_bps),
            ("start_bps", self.start_bps),
            ("max_bps", self.max_bps),
            c,
        );
        for (name, x) in [
            ("beta", self.beta),
            ("trendline_smoothing", self.trendline_smoothing),
            ("kalman_chi", self.kalman_chi),
        ] {
            if !(x.is_finite() && x > 0.0 && x < 1.0) {
                c.err(
                    format!("{path}.{name}"),
                    format!("must be in (0, 1) (got {x})"),
                );
            }
        }
        for (name, x) in [("eta", self.eta), ("loss_increase", self.loss_increase)] {
            if !(x.is_finite() && x >= 1.0) {
                c.err(
                    format!("{path}.{name}"),
                    format!("must be at least 1 (got {x})"),
                );
            }
        }
        c.probability(format_args!("{path}.loss_high"), self.loss_high);
        c.probability(format_args!("{path}.loss_low"), self.loss_low);
        if self.loss_low > self.loss_high {
            c.err(
                format!("{path}.loss_low"),
                format!("must be at most loss_high ({})", self.loss_high),
            );
        }
        for (name, x) in [("k_up", self.k_up), ("k_down", self.k_down)] {
            if let Some(x) = x {
                c.non_negative(format_args!("{path}.{name}"), x);
            }
        }
        if !(2..=1000).contains(&self.trendline_window) {
            let msg = format!("must be 2..=1000 points (got {})", self.trendline_window);
            c.err(format!("{path}.trendline_window"), msg);
        }
    }

    fn build(&self, _site: &CcSite<'_>) -> (Box<dyn RateController>, Box<dyn FeedbackReceiver>) {
        (Box::new(Gcc::new(self)), Box::new(NoFeedback))
    }

    fn own_feedback(&self) -> bool {
        false
    }
}

enum Filter {
    Trendline(Trendline),
    Kalman(Kalman),
}

/// GCC's sending half.
pub struct Gcc {
    inter: InterArrival,
    filter: Filter,
    detector: Detector,
    aimd: Aimd,
    loss: LossBased,
    received: RateWindow,
    min_bps: f64,
    max_bps: f64,
    target_bps: f64,
    rtt: super::FeedbackRtt,
    sent: u64,
    /// Kalman: groups seen (the detector needs two).
    deltas: u32,
    /// The last message's received packets in arrival order (kept to
    /// reuse its memory).
    by_arrival: Vec<(SimTime, u64, SimTime, u32)>,
    series: Series,
    estimate_series: Series,
    threshold_series: Series,
    /// The probe's shape, with `probing`; the prober from the start.
    probing: Option<probe::ProbeShape>,
    prober: Option<probe::Prober>,
    start_bps: f64,
    start_phase: SimTime,
    first_report: Option<SimTime>,
    /// Probe estimates taken.
    probe_results: u64,
}

/// The RTT assumed before the first feedback (libwebrtc's default).
const RTT_START: SimTime = SimTime::from_millis(200);

impl Gcc {
    pub fn new(s: &GccSpec) -> Self {
        let filter = match s.estimator {
            GccEstimator::Trendline => Filter::Trendline(Trendline::new(
                s.trendline_window as usize,
                s.trendline_smoothing,
                s.trendline_gain,
            )),
            GccEstimator::Kalman => {
                Filter::Kalman(Kalman::new(s.kalman_q, s.kalman_chi, s.kalman_e0))
            }
        };
        let group = SimTime::from_millis_f64(s.group_ms);
        Gcc {
            inter: InterArrival::new(group, group),
            filter,
            detector: Detector::new(s.threshold_ms, s.k_up(), s.k_down(), s.overuse_time_ms),
            aimd: Aimd::new(s.start_bps, s.beta, s.eta, s.min_bps, s.max_bps),
            loss: LossBased::new(
                s.start_bps,
                s.loss_min_packets as u64,
                (s.loss_high, s.loss_low, s.loss_increase),
                (
                    SimTime::from_millis_f64(s.loss_increase_window_ms),
                    SimTime::from_millis_f64(s.loss_decrease_interval_ms),
                ),
            ),
            received: RateWindow::new(SimTime::from_millis_f64(s.rate_window_ms)),
            min_bps: s.min_bps,
            max_bps: s.max_bps,
            target_bps: s.start_bps,
            rtt: super::FeedbackRtt::default(),
            sent: 0,
            deltas: 0,
            by_arrival: Vec::new(),
            series: Series::default(),
            estimate_series: Series::default(),
            threshold_series: Series::default(),
            probing: s.probing.then(|| s.probe_shape()),
            prober: None,
            start_bps: s.start_bps,
            start_phase: SimTime::from_millis_f64(s.start_phase_ms),
            first_report: None,
            probe_results: 0,
        }
    }

    /// One packet group delta through the filter and the detector.
    fn on_delta(&mut self, d: &arrival::Delta) -> Usage {
        let (m, raw, deltas) = match &mut self.filter {
            Filter::Trendline(t) => {
                let (m, trend) = t.update(d);
                (m, trend, t.num_deltas())
            }
            Filter::Kalman(k) => {
                self.deltas = self.deltas.saturating_add(1).min(1000);
                let m = k.update(d.gradient_ms(), d.send_ms);
                // The detector sees m_hat times the deltas so far (at most
                // 60), as libwebrtc's detector does with its filter's
                // offset: the draft compares m_hat itself, a per-group
                // gradient of a few ms that its 12.5 ms threshold would
                // let pass long after a queue builds.
                let scaled = self.deltas.min(trendline::MIN_NUM_DELTAS) as f64 * m;
                (scaled, m, self.deltas)
            }
        };
        self.detector.detect(m, raw, d.send_ms, deltas, d.at)
    }

    /// The received rate (for tests and tables).
    pub fn received_bps(&self) -> Option<f64> {
        self.received.rate_bps()
    }
}

impl RateController for Gcc {
    fn start(&mut self, now: SimTime, series_rows: usize) {
        for s in [
            &mut self.series,
            &mut self.estimate_series,
            &mut self.threshold_series,
        ] {
            s.set_rows(series_rows);
        }
        self.series.push(now, self.target_bps);
        self.prober = self
            .probing
            .map(|shape| probe::Prober::new(shape, self.start_bps, self.max_bps, now));
    }

    fn on_send(&mut self, now: SimTime, d: Departure) -> (Stamp, SimTime) {
        self.sent += 1;
        // The send index is the key feedback reports the packet by: both
        // count every packet the member sends, from 0.
        if let Some(p) = &mut self.prober {
            p.on_send(now, self.sent - 1, d.bytes);
        }
        d.at_rate(now, self.sent - 1, self.target_bps)
    }

    fn probe(&self) -> Option<super::ProbeSend> {
        self.prober.as_ref()?.next_send()
    }

    fn on_feedback(&mut self, _now: SimTime, _fb: &Payload, _next: SimTime) -> Option<SimTime> {
        None
    }

    fn on_packet_feedback(&mut self, now: SimTime, results: &[PacketResult]) {
        let mut by_arrival = std::mem::take(&mut self.by_arrival);
        by_arrival.clear();
        let mut lost = 0u64;
        for r in results {
            match (r.received, r.arrival) {
                (true, Some(at)) => by_arrival.push((at, r.seq, r.sent_at, r.bytes)),
                (true, None) => {}
                (false, _) => lost += 1,
            }
        }
        let received = results.len() as u64 - lost;
        // Arrival order (ties in sequence order), as libwebrtc sorts them.
        by_arrival.sort_unstable_by_key(|&(at, seq, _, _)| (at, seq));
        let mut usage = self.detector.usage();
        for &(at, _, sent_at, bytes) in &by_arrival {
            self.received.add(at, bytes);
            if let Some(d) = self.inter.on_packet(sent_at, at, bytes) {
                usage = self.on_delta(&d);
            }
        }
        self.by_arrival = by_arrival;
        self.rtt.update(now, results);
        let rtt = self.rtt.get().unwrap_or(RTT_START);
        let probed = self.prober.as_mut().and_then(|p| p.on_feedback(results));
        let a_hat = match probed {
            // libwebrtc: a probe's result, unless the path is overused,
            // sets the delay-based estimate and the loss-based rate.
            Some(bps) if usage != Usage::Overuse => {
                self.probe_results += 1;
                let a = self.aimd.set_estimate(now, bps);
                self.loss.reset(now, a);
                a
            }
            _ => self.aimd.update(now, usage, self.received.rate_bps(), rtt),
        };
        let mut as_bps = self.loss.on_report(now, received, lost, a_hat, rtt);
        let first = *self.first_report.get_or_insert(now);
        if self.probing.is_some()
            && now.saturating_sub(first) < self.start_phase
            && self.loss.last_p == 0.0
            && a_hat > as_bps
        {
            // libwebrtc's start phase: the delay-based estimate is trusted
            // while no loss is reported, so that probing can raise it.
            self.loss.reset(now, a_hat);
            as_bps = a_hat;
        }
        self.target_bps = as_bps.clamp(self.min_bps, self.max_bps);
        if let Some(p) = &mut self.prober {
            p.on_estimate(now, self.target_bps);
        }
        self.series.push_change(now, self.target_bps);
        self.estimate_series.push_change(now, a_hat);
        self.threshold_series
            .push_change(now, self.detector.threshold_ms);
    }

    fn target_bps(&self) -> f64 {
        self.target_bps
    }

    fn packets(&self) -> u64 {
        self.sent
    }

    fn rate_series(&self) -> Vec<(SimTime, f64)> {
        self.series.points().to_vec()
    }

    fn value(&self, name: &str) -> Option<f64> {
        Some(match name {
            "overuse_signals" => self.detector.overuses as f64,
            "decreases" => self.aimd.decreases as f64,
            "threshold_ms" => self.detector.threshold_ms,
            "estimate_bps" => self.aimd.a_hat_bps,
            "loss_based_bps" => self.loss.as_bps,
            "probe_clusters" => self.prober.as_ref().map_or(0, |p| p.clusters) as f64,
            "probe_results" => self.probe_results as f64,
            "rtt_ms" => self.rtt.get()?.as_secs_f64() * 1e3,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests;
