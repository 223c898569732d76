//! SCReAM (RFC 8298) and SCReAMv2 (draft-johansson-ccwg-rfc8298bis-
//! screamv2) on an RTP member's per-packet feedback: a window of bytes in
//! flight self-clocks the member's pacer queue (SCReAM's RTP queue), and
//! the media rate follows the window.
//!
//! The parts shared by both versions live here: the list of packets in
//! flight and the queuing delay against the base one-way delay
//! (`flight`), the smoothed RTT, the transmitted and acknowledged rates
//! over 200 ms, the loss event rate, and the competing-flows adjustment of
//! the delay target (`compete`). Each version's window and rate rules are
//! in `rfc8298` and `v2`.

pub mod compete;
pub mod flight;
pub mod rfc8298;
pub mod v2;

use super::fixed::NoFeedback;
use super::{CcMedia, CcModel, CcSite, Departure, FeedbackReceiver, RateController, Stamp};
use crate::net::Payload;
use crate::proto::feedback::PacketResult;
use crate::scenario::check::Checker;
use crate::sim::{Series, SimTime};
use flight::{Acked, BaseDelay, Flight, WindowMax};
use schemars::JsonSchema;
use serde::Deserialize;

/// Which SCReAM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    /// RFC 8298 (2017).
    #[default]
    Rfc8298,
    /// SCReAMv2, the draft that obsoletes it (L4S support).
    V2,
}

fn yes() -> bool {
    true
}

macro_rules! params {
    ($($(#[doc = $d:literal])* $f:ident: $v1:expr, $v2:expr;)*) => {
        /// SCReAM's constants resolved for one version.
        #[derive(Clone, Debug)]
        pub struct Params {
            pub version: Version,
            pub l4s: bool,
            pub competing_flows: bool,
            $(pub $f: f64,)*
        }

        /// SCReAM on the member's per-packet feedback. Every constant is a
        /// field; one left out takes the version's value (RFC 8298's, or
        /// the v2 draft's where they differ).
        #[derive(Clone, Debug, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct ScreamSpec {
            #[serde(default)]
            pub version: Version,
            /// v2: react to CE marks in proportion to the marked fraction
            /// (IS_L4S); otherwise CE is classic ECN (BETA_ECN).
            #[serde(default)]
            pub l4s: bool,
            /// The competing flows compensation of the delay target (the
            /// RFC says it MAY be turned off where no loss-based flow
            /// shares the bottleneck).
            #[serde(default = "yes")]
            pub competing_flows: bool,
            $($(#[doc = $d])* #[serde(default)] pub $f: Option<f64>,)*
        }

        impl ScreamSpec {
            pub fn params(&self) -> Params {
                let v2 = self.version == Version::V2;
                Params {
                    version: self.version,
                    l4s: self.l4s,
                    competing_flows: self.competing_flows,
                    $($f: self.$f.unwrap_or(if v2 { $v2 } else { $v1 }),)*
                }
            }
        }
    };
}

params! {
    /// The first target bitrate, bit/s (RFC 8867's R_min).
    start_bps: 150e3, 150e3;
    /// TARGET_BITRATE_MIN, bit/s.
    min_bps: 150e3, 150e3;
    /// TARGET_BITRATE_MAX, bit/s.
    max_bps: 1.5e6, 1.5e6;
    /// MSS, bytes: the largest packet sent raises it.
    mss_bytes: 1000.0, 1000.0;
    /// MIN_CWND (v2: MIN_REF_WND), bytes.
    min_cwnd_bytes: 3000.0, 3000.0;
    /// QDELAY_TARGET_LO, ms.
    qdelay_target_lo_ms: 100.0, 60.0;
    /// QDELAY_TARGET_HI, ms.
    qdelay_target_hi_ms: 400.0, 400.0;
    /// BETA_LOSS.
    beta_loss: 0.8, 0.7;
    /// BETA_ECN.
    beta_ecn: 0.9, 0.8;
    /// RATE_PACE_MIN, bit/s.
    rate_pace_min_bps: 50e3, 50e3;
    /// No transmission for this long with bytes in flight: forget them,
    /// so that lost feedback cannot shut the window for good (the
    /// reference code's 0.5 s), ms.
    stall_ms: 500.0, 500.0;
    /// The RTP queue is discarded when its head has waited longer than
    /// this (RFC 8298 4.1.3's SHOULD; the reference code's 0.1 s), ms; 0:
    /// never.
    max_rtp_queue_delay_ms: 100.0, 100.0;
    /// At most one discard in this long, ms (the reference code's 1 s).
    rtp_queue_discard_interval_ms: 1000.0, 1000.0;
    /// The loss event rate's weight per RTT (an EWMA of "this RTT had a
    /// loss"; the RFC leaves the estimator open).
    loss_event_weight: 0.1, 0.1;
    /// RFC 8298: QDELAY_WEIGHT.
    qdelay_weight: 0.1, 0.1;
    /// RFC 8298: QDELAY_TREND_TH.
    qdelay_trend_th: 0.2, 0.2;
    /// RFC 8298: QDELAY_TREND_LO.
    qdelay_trend_lo: 0.2, 0.2;
    /// RFC 8298: T_RESUME_FAST_INCREASE, s.
    t_resume_fast_increase_s: 5.0, 5.0;
    /// RFC 8298: GAIN.
    gain: 1.0, 1.0;
    /// RFC 8298: BETA_R, the target's cut on loss.
    beta_r: 0.9, 0.9;
    /// RFC 8298: MAX_BYTES_IN_FLIGHT_HEAD_ROOM.
    max_bytes_in_flight_head_room: 1.1, 1.1;
    /// RFC 8298: RATE_ADJUST_INTERVAL, ms.
    rate_adjust_interval_ms: 200.0, 200.0;
    /// RFC 8298: RAMP_UP_SPEED, bit/s per second.
    ramp_up_speed_bps: 200e3, 200e3;
    /// RFC 8298: PRE_CONGESTION_GUARD.
    pre_congestion_guard: 0.1, 0.1;
    /// RFC 8298: TX_QUEUE_SIZE_FACTOR.
    tx_queue_size_factor: 1.0, 1.0;
    /// RFC 8298: RTP_QDELAY_TH, ms.
    rtp_qdelay_th_ms: 20.0, 20.0;
    /// RFC 8298: TARGET_RATE_SCALE_RTP_QDELAY.
    target_rate_scale_rtp_qdelay: 0.95, 0.95;
    /// v2: L4S_AVG_G.
    l4s_avg_g: 1.0 / 16.0, 1.0 / 16.0;
    /// v2: QDELAY_AVG_G.
    qdelay_avg_g: 0.25, 0.25;
    /// v2: VIRTUAL_RTT, ms.
    virtual_rtt_ms: 25.0, 25.0;
    /// v2: POST_CONGESTION_DELAY, s.
    post_congestion_delay_s: 4.0, 4.0;
    /// v2: MUL_INCREASE_FACTOR.
    mul_increase_factor: 0.02, 0.02;
    /// v2: BYTES_IN_FLIGHT_HEAD_ROOM.
    bytes_in_flight_head_room: 2.0, 2.0;
    /// v2: BYTES_IN_FLIGHT_LIMIT (not valued in the draft).
    bytes_in_flight_limit: 0.9, 0.9;
    /// v2: BYTES_IN_FLIGHT_LIMIT_COMPENSATION (not valued in the draft).
    bytes_in_flight_limit_compensation: 1.5, 1.5;
    /// v2: REF_WND_OVERHEAD.
    ref_wnd_overhead: 1.5, 1.5;
    /// v2: PACKET_PACING_HEADROOM.
    packet_pacing_headroom: 1.5, 1.5;
}

impl CcModel for ScreamSpec {
    fn validate(&self, path: &str, media: CcMedia, c: &mut Checker) {
        super::require_packet_feedback("scream", path, media, c);
        if media.packet_feedback && !media.pacer {
            c.err(path, "scream keeps its RTP queue in the member's `pacer`: set one (RFC 8298 paces at the window per RTT: `pacer = {factor = 1, burst_ms = 0}`)");
        }
        let p = self.params();
        for (name, x) in [
            ("start_bps", p.start_bps),
            ("min_bps", p.min_bps),
            ("max_bps", p.max_bps),
            ("mss_bytes", p.mss_bytes),
            ("min_cwnd_bytes", p.min_cwnd_bytes),
            ("qdelay_target_lo_ms", p.qdelay_target_lo_ms),
            ("qdelay_target_hi_ms", p.qdelay_target_hi_ms),
            ("rate_pace_min_bps", p.rate_pace_min_bps),
            ("gain", p.gain),
            (
                "max_bytes_in_flight_head_room",
                p.max_bytes_in_flight_head_room,
            ),
            ("ramp_up_speed_bps", p.ramp_up_speed_bps),
            ("virtual_rtt_ms", p.virtual_rtt_ms),
            ("post_congestion_delay_s", p.post_congestion_delay_s),
            ("bytes_in_flight_head_room", p.bytes_in_flight_head_room),
            ("bytes_in_flight_limit", p.bytes_in_flight_limit),
            (
                "bytes_in_flight_limit_compensation",
                p.bytes_in_flight_limit_compensation,
            ),
            ("ref_wnd_overhead", p.ref_wnd_overhead),
            ("packet_pacing_headroom", p.packet_pacing_headroom),
        ] {
            c.positive(format_args!("{path}.{name}"), x);
        }
        for (name, x) in [
            ("beta_loss", p.beta_loss),
            ("beta_ecn", p.beta_ecn),
            ("beta_r", p.beta_r),
            ("loss_event_weight", p.loss_event_weight),
            ("qdelay_weight", p.qdelay_weight),
            ("qdelay_trend_th", p.qdelay_trend_th),
            ("qdelay_trend_lo", p.qdelay_trend_lo),
            (
                "target_rate_scale_rtp_qdelay",
                p.target_rate_scale_rtp_qdelay,
            ),
            ("l4s_avg_g", p.l4s_avg_g),
            ("qdelay_avg_g", p.qdelay_avg_g),
        ] {
            c.probability(format_args!("{path}.{name}"), x);
        }
        for (name, x) in [
            ("pre_congestion_guard", p.pre_congestion_guard),
            ("tx_queue_size_factor", p.tx_queue_size_factor),
            ("t_resume_fast_increase_s", p.t_resume_fast_increase_s),
            ("rtp_qdelay_th_ms", p.rtp_qdelay_th_ms),
            ("mul_increase_factor", p.mul_increase_factor),
            ("max_rtp_queue_delay_ms", p.max_rtp_queue_delay_ms),
            (
                "rtp_queue_discard_interval_ms",
                p.rtp_queue_discard_interval_ms,
            ),
        ] {
            c.non_negative(format_args!("{path}.{name}"), x);
        }
        c.interval_ms(
            format_args!("{path}.rate_adjust_interval_ms"),
            p.rate_adjust_interval_ms,
        );
        c.interval_ms(format_args!("{path}.stall_ms"), p.stall_ms);
        // The target is divided by up to this while bytes in flight run
        // over the limit: under 1 it would rise instead.
        let comp = p.bytes_in_flight_limit_compensation;
        if comp.is_finite() && comp < 1.0 {
            let msg = format!("must be at least 1 (got {comp})");
            c.err(format!("{path}.bytes_in_flight_limit_compensation"), msg);
        }
        if p.qdelay_target_lo_ms > p.qdelay_target_hi_ms {
            let msg = format!(
                "must be at most qdelay_target_hi_ms ({})",
                p.qdelay_target_hi_ms
            );
            c.err(format!("{path}.qdelay_target_lo_ms"), msg);
        }
        if self.l4s && self.version != Version::V2 {
            c.err(
                format!("{path}.l4s"),
                "L4S is SCReAMv2's: set version = \"v2\"",
            );
        }
        super::check_rate_range(
            path,
            ("min_bps", p.min_bps),
            ("start_bps", p.start_bps),
            ("max_bps", p.max_bps),
            c,
        );
    }

    fn build(&self, _site: &CcSite<'_>) -> (Box<dyn RateController>, Box<dyn FeedbackReceiver>) {
        (Box::new(Scream::new(self.params())), Box::new(NoFeedback))
    }

    fn own_feedback(&self) -> bool {
        false
    }
}

/// What the version's rules read at a feedback message.
#[derive(Clone, Copy, Debug, Default)]
pub struct Measures {
    pub now: SimTime,
    pub qdelay_s: f64,
    pub s_rtt_s: f64,
    pub bytes_in_flight: u64,
    /// Bytes in flight as the message arrived (before it acknowledged any).
    pub bytes_in_flight_before: u64,
    /// The most in flight over the last 5 s (RFC 8298).
    pub max_bytes_in_flight: u64,
    /// The most in flight in this round trip and the last (v2).
    pub max_bytes_in_flight_rtt: u64,
    pub max_bytes_in_flight_prev: u64,
    pub rate_transmit_bps: f64,
    pub rate_ack_bps: f64,
    /// Bytes waiting in the RTP queue (the member's pacer).
    pub rtp_queue_bytes: u64,
    pub mss: f64,
}

enum Core {
    Rfc8298(rfc8298::Rfc8298),
    V2(v2::V2),
}

/// The rates' measuring interval (RFC 8298 4.1.3: every 200 ms).
const RATE_WINDOW: SimTime = SimTime::from_millis(200);
/// The queuing delay trend's and the delay target's sampling interval.
const TREND_INTERVAL: SimTime = SimTime::from_millis(50);

/// SCReAM's sending half.
pub struct Scream {
    p: Params,
    core: Core,
    flight: Flight,
    base: BaseDelay,
    rtt: super::FeedbackRtt,
    bif_5s: WindowMax,
    bif_rtt: u64,
    bif_prev: u64,
    rtt_epoch: SimTime,
    qdelay_s: f64,
    last_trend: Option<SimTime>,
    loss_event_rate: f64,
    loss_in_rtt: bool,
    window_start: SimTime,
    bytes_sent_window: u64,
    bytes_acked_window: u64,
    rate_transmit_bps: f64,
    rate_ack_bps: f64,
    rtp_queue_bytes: u64,
    mss: f64,
    sent: u64,
    last_send: SimTime,
    last_discard: Option<SimTime>,
    /// RTP queue discards so far.
    pub discards: u64,
    series: Series,
}

impl Scream {
    pub fn new(p: Params) -> Self {
        let core = match p.version {
            Version::Rfc8298 => Core::Rfc8298(rfc8298::Rfc8298::new(&p)),
            Version::V2 => Core::V2(v2::V2::new(&p)),
        };
        Scream {
            core,
            flight: Flight::default(),
            // LEDBAT's BASE_HISTORY: ten one-minute minima.
            base: BaseDelay::new(10),
            rtt: super::FeedbackRtt::default(),
            bif_5s: WindowMax::new(SimTime::from_secs(5), 10),
            bif_rtt: 0,
            bif_prev: 0,
            rtt_epoch: SimTime::ZERO,
            qdelay_s: 0.0,
            last_trend: None,
            loss_event_rate: 0.0,
            loss_in_rtt: false,
            window_start: SimTime::ZERO,
            bytes_sent_window: 0,
            bytes_acked_window: 0,
            rate_transmit_bps: 0.0,
            rate_ack_bps: 0.0,
            rtp_queue_bytes: 0,
            mss: p.mss_bytes,
            sent: 0,
            last_send: SimTime::ZERO,
            last_discard: None,
            discards: 0,
            series: Series::default(),
            p,
        }
    }

    fn measures(&self, now: SimTime, before: u64) -> Measures {
        Measures {
            now,
            qdelay_s: self.qdelay_s,
            s_rtt_s: self.rtt.get().map_or(0.0, |r| r.as_secs_f64()),
            bytes_in_flight: self.flight.bytes_in_flight(),
            bytes_in_flight_before: before,
            max_bytes_in_flight: self.bif_5s.max(),
            max_bytes_in_flight_rtt: self.bif_rtt,
            max_bytes_in_flight_prev: self.bif_prev,
            rate_transmit_bps: self.rate_transmit_bps,
            rate_ack_bps: self.rate_ack_bps,
            rtp_queue_bytes: self.rtp_queue_bytes,
            mss: self.mss,
        }
    }

    /// The transmitted and acknowledged rates over the last whole window.
    fn roll_rates(&mut self, now: SimTime) {
        let elapsed = now.saturating_sub(self.window_start);
        if elapsed >= RATE_WINDOW {
            let s = elapsed.as_secs_f64();
            self.rate_transmit_bps = self.bytes_sent_window as f64 * 8.0 / s;
            self.rate_ack_bps = self.bytes_acked_window as f64 * 8.0 / s;
            self.bytes_sent_window = 0;
            self.bytes_acked_window = 0;
            self.window_start = now;
        }
    }

    pub fn cwnd_bytes(&self) -> f64 {
        match &self.core {
            Core::Rfc8298(c) => c.cwnd,
            Core::V2(c) => c.ref_wnd,
        }
    }

    fn delay_target_s(&self) -> f64 {
        match &self.core {
            Core::Rfc8298(c) => c.delay_target.target_s,
            Core::V2(c) => c.delay_target.target_s,
        }
    }
}

impl RateController for Scream {
    fn start(&mut self, now: SimTime, series_rows: usize) {
        self.series.set_rows(series_rows);
        self.series.push(now, self.target_bps());
        self.window_start = now;
        self.rtt_epoch = now;
        self.last_send = now;
    }

    fn on_send(&mut self, now: SimTime, d: Departure) -> (Stamp, SimTime) {
        let seq = self.sent;
        self.sent += 1;
        self.flight.on_send(seq, d.bytes);
        let bif = self.flight.bytes_in_flight();
        self.bif_5s.add(now, bif);
        self.bif_rtt = self.bif_rtt.max(bif);
        self.mss = self.mss.max(d.bytes as f64);
        self.bytes_sent_window += d.bytes as u64;
        self.last_send = now;
        self.roll_rates(now);
        d.at_rate(now, seq, self.pacing_bps())
    }

    fn on_feedback(&mut self, _now: SimTime, _fb: &Payload, _next: SimTime) -> Option<SimTime> {
        None
    }

    fn on_send_queue(&mut self, bytes: u64) {
        self.rtp_queue_bytes = bytes;
    }

    fn discard_send_queue(&mut self, now: SimTime, head_wait: SimTime) -> bool {
        let max = self.p.max_rtp_queue_delay_ms;
        let interval = SimTime::from_millis_f64(self.p.rtp_queue_discard_interval_ms);
        let due = max > 0.0
            && head_wait > SimTime::from_millis_f64(max)
            && self
                .last_discard
                .is_none_or(|t| now.saturating_sub(t) > interval);
        if due {
            self.last_discard = Some(now);
            self.discards += 1;
            self.rtp_queue_bytes = 0;
        }
        due
    }

    fn on_packet_feedback(&mut self, now: SimTime, results: &[PacketResult]) {
        let before = self.flight.bytes_in_flight();
        let a: Acked = self.flight.on_feedback(results);
        self.rtt.update(now, results);
        if let Some(owd) = a.owd {
            self.qdelay_s = self.base.qdelay(now, owd).as_secs_f64();
        }
        self.bytes_acked_window += a.bytes_received;
        self.roll_rates(now);
        self.loss_in_rtt |= a.lost > 0;
        let s_rtt = self.rtt.get().unwrap_or(SimTime::ZERO);
        if now.saturating_sub(self.rtt_epoch) >= s_rtt {
            self.rtt_epoch = now;
            self.bif_prev = self.bif_rtt;
            self.bif_rtt = self.flight.bytes_in_flight();
            let w = self.p.loss_event_weight;
            self.loss_event_rate =
                (1.0 - w) * self.loss_event_rate + w * f64::from(u8::from(self.loss_in_rtt));
            self.loss_in_rtt = false;
        }
        let sample = self
            .last_trend
            .is_none_or(|t| now.saturating_sub(t) >= TREND_INTERVAL);
        if sample {
            self.last_trend = Some(now);
        }
        let m = self.measures(now, before);
        let (p, qdelay, ler) = (&self.p, self.qdelay_s, self.loss_event_rate);
        match &mut self.core {
            Core::Rfc8298(c) => {
                if sample {
                    c.update_trend(p, now, qdelay);
                    if p.competing_flows {
                        c.delay_target.adjust(qdelay, ler);
                    }
                }
                c.on_feedback(p, &m, &a);
                c.adjust_rate(p, &m);
            }
            Core::V2(c) => {
                if sample && p.competing_flows {
                    c.delay_target.adjust(qdelay, ler);
                }
                c.on_feedback(p, &m, &a);
            }
        }
        let target = self.target_bps();
        self.series.push_change(now, target);
    }

    fn send_window(&self) -> Option<u64> {
        let m = self.measures(SimTime::ZERO, 0);
        Some(match &self.core {
            Core::Rfc8298(c) => c.send_window(&m),
            Core::V2(c) => c.send_window(&self.p, &m),
        })
    }

    fn deadline(&self) -> Option<SimTime> {
        (self.flight.bytes_in_flight() > 0)
            .then(|| self.last_send + SimTime::from_millis_f64(self.p.stall_ms))
    }

    fn on_timer(&mut self, now: SimTime) {
        if now >= self.last_send + SimTime::from_millis_f64(self.p.stall_ms) {
            self.flight.clear();
        }
    }

    fn target_bps(&self) -> f64 {
        match &self.core {
            Core::Rfc8298(c) => c.target_bps,
            Core::V2(c) => c.target_bps,
        }
    }

    fn pacing_bps(&self) -> f64 {
        match &self.core {
            Core::Rfc8298(c) => c.pacing_bps(&self.p, &self.measures(SimTime::ZERO, 0)),
            Core::V2(c) => c.pacing_bps(&self.p),
        }
    }

    fn packets(&self) -> u64 {
        self.sent
    }

    fn rate_series(&self) -> Vec<(SimTime, f64)> {
        self.series.points().to_vec()
    }

    fn value(&self, name: &str) -> Option<f64> {
        Some(match name {
            "cwnd_bytes" => self.cwnd_bytes(),
            "qdelay_ms" => self.qdelay_s * 1e3,
            "qdelay_target_ms" => self.delay_target_s() * 1e3,
            "s_rtt_ms" => self.rtt.get().map_or(f64::NAN, |r| r.as_secs_f64() * 1e3),
            "loss_event_rate" => self.loss_event_rate,
            "rtp_queue_discards" => self.discards as f64,
            "l4s_alpha" => match &self.core {
                Core::V2(c) => c.l4s_alpha,
                Core::Rfc8298(_) => return None,
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests;
