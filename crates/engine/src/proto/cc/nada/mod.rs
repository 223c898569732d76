//! NADA (RFC 8698): network-assisted dynamic adaptation. The congestion
//! signal x_curr (queuing delay, warped after loss, plus loss and marking
//! penalties; `signal`) drives a reference rate r_ref at each feedback
//! message (4.3):
//!
//! - accelerated ramp-up (rmode 0: no loss or mark in LOGWIN, every
//!   filtered queuing delay, or each packet's, under QEPS): r_ref = max(r_ref, (1 + gamma) r_recv),
//!   gamma = min(GAMMA_MAX, QBOUND / (rtt + DELTA + DFILT));
//! - gradual update (rmode 1): x_offset = x_curr - PRIO XREF RMAX / r_ref,
//!   x_diff = x_curr - x_prev; r_ref -= KAPPA (delta / TAU) (x_offset /
//!   TAU) r_ref + KAPPA ETA (x_diff / TAU) r_ref;
//! - r_ref within [RMIN, RMAX]; the encoder's target r_vin = max(RMIN,
//!   r_ref - BETA_V 8 buffer FPS) and the pacing rate r_send = min(RMAX,
//!   r_ref + BETA_S 8 buffer FPS), buffer the bytes in the pacer (the
//!   rate-shaping buffer, 4.4).
//!
//! Computed at the sender from the member's per-packet feedback (RFC 8888
//! or transport-wide; the RFC's sender-side variant): one-way delays
//! against their minimum, so the clocks need no sync in a simulation.
//! delta is the time since the last update (the feedback interval; the RFC
//! sends feedback every 100 ms).

pub mod signal;

use super::fixed::NoFeedback;
use super::{CcMedia, CcModel, CcSite, Departure, FeedbackReceiver, RateController, Stamp};
use crate::net::Payload;
use crate::proto::feedback::PacketResult;
use crate::scenario::check::Checker;
use crate::sim::{Series, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;
use signal::{Consts, Signal};

macro_rules! defaults {
    ($($f:ident: $v:expr;)*) => { $(fn $f() -> f64 { $v })* };
}
defaults! {
    d_prio: 1.0; d_rmin: 150e3; d_rmax: 1.5e6; d_start: 150e3; d_xref: 10.0; d_kappa: 0.5;
    d_eta: 2.0; d_tau: 500.0; d_delta: 100.0; d_logwin: 500.0; d_qeps: 10.0; d_dfilt: 120.0;
    d_gamma_max: 0.5; d_qbound: 50.0; d_multiloss: 7.0; d_qth: 50.0; d_lambda: 0.5;
    d_plrref: 0.01; d_pmrref: 0.01; d_dloss: 10.0; d_dmark: 2.0; d_fps: 30.0; d_beta_s: 0.1;
    d_beta_v: 0.1; d_alpha: 0.1; d_x_max: 500.0;
}

/// Which queuing delays the accelerated ramp-up's test looks at (RFC
/// 8698 4.2 asks that "d_fwd - d_base < QEPS for all previous delay
/// samples within the observation window LOGWIN", and leaves the delay's
/// filtering open).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NadaRampUpDelay {
    /// The filtered delay d_tilde (the least of the last 15): one late
    /// packet does not end the ramp-up.
    #[default]
    Filtered,
    /// Each packet's own queuing delay, as Cisco's ns3-rmcat tests it.
    Raw,
}

/// NADA (RFC 8698) on the member's per-packet feedback; the RFC's
/// constants (Figure 3) as defaults. Rates on the wire.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NadaSpec {
    /// PRIO, the flow's weight.
    #[serde(default = "d_prio")]
    pub prio: f64,
    /// RMIN, bit/s.
    #[serde(default = "d_rmin")]
    pub rmin_bps: f64,
    /// RMAX, bit/s.
    #[serde(default = "d_rmax")]
    pub rmax_bps: f64,
    /// The first reference rate, bit/s (the RFC starts at RMIN).
    #[serde(default = "d_start")]
    pub start_bps: f64,
    /// XREF, ms.
    #[serde(default = "d_xref")]
    pub xref_ms: f64,
    #[serde(default = "d_kappa")]
    pub kappa: f64,
    #[serde(default = "d_eta")]
    pub eta: f64,
    /// TAU, ms.
    #[serde(default = "d_tau")]
    pub tau_ms: f64,
    /// DELTA, the nominal feedback interval, ms (the ramp-up's gamma).
    #[serde(default = "d_delta")]
    pub delta_ms: f64,
    /// LOGWIN, ms.
    #[serde(default = "d_logwin")]
    pub logwin_ms: f64,
    /// QEPS, ms.
    #[serde(default = "d_qeps")]
    pub qeps_ms: f64,
    /// DFILT, ms.
    #[serde(default = "d_dfilt")]
    pub dfilt_ms: f64,
    #[serde(default = "d_gamma_max")]
    pub gamma_max: f64,
    /// QBOUND, ms.
    #[serde(default = "d_qbound")]
    pub qbound_ms: f64,
    #[serde(default = "d_multiloss")]
    pub multiloss: f64,
    /// QTH, ms.
    #[serde(default = "d_qth")]
    pub qth_ms: f64,
    #[serde(default = "d_lambda")]
    pub lambda: f64,
    #[serde(default = "d_plrref")]
    pub plrref: f64,
    #[serde(default = "d_pmrref")]
    pub pmrref: f64,
    /// DLOSS, ms.
    #[serde(default = "d_dloss")]
    pub dloss_ms: f64,
    /// DMARK, ms.
    #[serde(default = "d_dmark")]
    pub dmark_ms: f64,
    /// FPS, the rate-shaping buffer's frames per second.
    #[serde(default = "d_fps")]
    pub fps: f64,
    #[serde(default = "d_beta_s")]
    pub beta_s: f64,
    #[serde(default = "d_beta_v")]
    pub beta_v: f64,
    /// ALPHA, the loss and marking ratios' smoothing.
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    /// The congestion signal's cap, ms.
    #[serde(default = "d_x_max")]
    pub x_max_ms: f64,
    /// The delays the ramp-up's QEPS test looks at: `filtered` (d_tilde)
    /// or `raw` (each packet's).
    #[serde(default)]
    pub rampup_delay: NadaRampUpDelay,
}

impl CcModel for NadaSpec {
    fn validate(&self, path: &str, media: CcMedia, c: &mut Checker) {
        super::require_packet_feedback("nada", path, media, c);
        for (name, x) in [
            ("prio", self.prio),
            ("rmin_bps", self.rmin_bps),
            ("rmax_bps", self.rmax_bps),
            ("start_bps", self.start_bps),
            ("tau_ms", self.tau_ms),
            ("qth_ms", self.qth_ms),
            ("plrref", self.plrref),
            ("pmrref", self.pmrref),
            ("fps", self.fps),
            ("x_max_ms", self.x_max_ms),
        ] {
            c.positive(format_args!("{path}.{name}"), x);
        }
        for (name, x) in [
            ("xref_ms", self.xref_ms),
            ("kappa", self.kappa),
            ("eta", self.eta),
            ("delta_ms", self.delta_ms),
            ("qeps_ms", self.qeps_ms),
            ("dfilt_ms", self.dfilt_ms),
            ("gamma_max", self.gamma_max),
            ("qbound_ms", self.qbound_ms),
            ("multiloss", self.multiloss),
            ("lambda", self.lambda),
            ("dloss_ms", self.dloss_ms),
            ("dmark_ms", self.dmark_ms),
            ("beta_s", self.beta_s),
            ("beta_v", self.beta_v),
        ] {
            c.non_negative(format_args!("{path}.{name}"), x);
        }
        c.interval_ms(format_args!("{path}.logwin_ms"), self.logwin_ms);
        c.probability(format_args!("{path}.alpha"), self.alpha);
        super::check_rate_range(
            path,
            ("rmin_bps", self.rmin_bps),
            ("start_bps", self.start_bps),
            ("rmax_bps", self.rmax_bps),
            c,
        );
    }

    fn build(&self, _site: &CcSite<'_>) -> (Box<dyn RateController>, Box<dyn FeedbackReceiver>) {
        (Box::new(Nada::new(self.clone())), Box::new(NoFeedback))
    }

    fn own_feedback(&self) -> bool {
        false
    }
}

/// NADA's sending half.
pub struct Nada {
    s: NadaSpec,
    signal: Signal,
    r_ref: f64,
    r_vin: f64,
    r_send: f64,
    x_prev_ms: f64,
    last_update: Option<SimTime>,
    rtt: super::FeedbackRtt,
    buffer_bytes: u64,
    sent: u64,
    rmode: u8,
    series: Series,
}

fn ms(x: f64) -> SimTime {
    SimTime::from_millis_f64(x)
}

impl Nada {
    pub fn new(s: NadaSpec) -> Self {
        let signal = Signal::new(Consts {
            qth_ms: s.qth_ms,
            lambda: s.lambda,
            dloss_ms: s.dloss_ms,
            plrref: s.plrref,
            dmark_ms: s.dmark_ms,
            pmrref: s.pmrref,
            alpha: s.alpha,
            multiloss: s.multiloss,
            logwin: ms(s.logwin_ms),
            qeps_ms: s.qeps_ms,
            x_max_ms: s.x_max_ms,
            rampup_raw: s.rampup_delay == NadaRampUpDelay::Raw,
        });
        Nada {
            r_ref: s.start_bps,
            r_vin: s.start_bps,
            r_send: s.start_bps,
            signal,
            x_prev_ms: 0.0,
            last_update: None,
            rtt: super::FeedbackRtt::default(),
            buffer_bytes: 0,
            sent: 0,
            rmode: 0,
            series: Series::default(),
            s,
        }
    }

    /// The reference rate update (4.3) at `now` with signal `x_ms`,
    /// receiving rate `r_recv`, mode `rmode`, `delta_s` since the last.
    pub fn update_ref(&mut self, x_ms: f64, r_recv: f64, rmode: u8, delta_s: f64, rtt_s: f64) {
        let s = &self.s;
        if rmode == 0 {
            let gamma = s
                .gamma_max
                .min(s.qbound_ms / 1e3 / (rtt_s + s.delta_ms / 1e3 + s.dfilt_ms / 1e3));
            self.r_ref = self.r_ref.max((1.0 + gamma) * r_recv);
        } else {
            let tau_s = s.tau_ms / 1e3;
            let x_offset_s = (x_ms - s.prio * s.xref_ms * s.rmax_bps / self.r_ref) / 1e3;
            let x_diff_s = (x_ms - self.x_prev_ms) / 1e3;
            self.r_ref -= s.kappa * (delta_s / tau_s) * (x_offset_s / tau_s) * self.r_ref
                + s.kappa * s.eta * (x_diff_s / tau_s) * self.r_ref;
        }
        self.x_prev_ms = x_ms;
        self.r_ref = self.r_ref.clamp(s.rmin_bps, s.rmax_bps);
        // 4.4: the rate-shaping buffer's bytes pull the encoder down and
        // push the pacer up.
        let shaping = 8.0 * self.buffer_bytes as f64 * s.fps;
        self.r_vin = (self.r_ref - s.beta_v * shaping).max(s.rmin_bps);
        self.r_send = (self.r_ref + s.beta_s * shaping).min(s.rmax_bps);
    }

    pub fn reference_bps(&self) -> f64 {
        self.r_ref
    }
}

impl RateController for Nada {
    fn start(&mut self, now: SimTime, series_rows: usize) {
        self.series.set_rows(series_rows);
        self.series.push(now, self.r_vin);
    }

    fn on_send(&mut self, now: SimTime, d: Departure) -> (Stamp, SimTime) {
        self.sent += 1;
        d.at_rate(now, self.sent - 1, self.r_send)
    }

    fn on_feedback(&mut self, _now: SimTime, _fb: &Payload, _next: SimTime) -> Option<SimTime> {
        None
    }

    fn on_send_queue(&mut self, bytes: u64) {
        self.buffer_bytes = bytes;
    }

    fn on_packet_feedback(&mut self, now: SimTime, results: &[PacketResult]) {
        let (mut received, mut lost, mut marked) = (0u64, 0u64, 0u64);
        for r in results {
            match (r.received, r.arrival) {
                (true, Some(at)) => {
                    self.signal.on_received(r.sent_at, at, r.bytes, r.ecn);
                    received += 1;
                    marked += u64::from(r.ecn == 3);
                }
                (true, None) => received += 1,
                (false, _) => {
                    self.signal.on_lost(now);
                    lost += 1;
                }
            }
        }
        self.rtt.update(now, results);
        let x = self.signal.update(now, received, lost, marked);
        let delta_s = self.last_update.map_or(self.s.delta_ms / 1e3, |t| {
            now.saturating_sub(t).as_secs_f64()
        });
        self.last_update = Some(now);
        let rtt_s = self.rtt.get().map_or(0.0, |r| r.as_secs_f64());
        self.rmode = self.signal.rmode();
        let r_recv = self.signal.recv_bps();
        self.update_ref(x, r_recv, self.rmode, delta_s, rtt_s);
        self.series.push_change(now, self.r_vin);
    }

    fn target_bps(&self) -> f64 {
        self.r_vin
    }

    fn pacing_bps(&self) -> f64 {
        self.r_send
    }

    fn packets(&self) -> u64 {
        self.sent
    }

    fn rate_series(&self) -> Vec<(SimTime, f64)> {
        self.series.points().to_vec()
    }

    fn value(&self, name: &str) -> Option<f64> {
        Some(match name {
            "x_curr_ms" => self.signal.x_curr_ms,
            "reference_bps" => self.r_ref,
            "rmode" => self.rmode as f64,
            "loss_ratio" => self.signal.p_loss,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests;
