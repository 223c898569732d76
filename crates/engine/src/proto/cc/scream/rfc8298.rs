//! SCReAM as RFC 8298 specifies it: the congestion window (fast increase
//! like slow start until the queuing delay trend shows incipient
//! congestion, then LEDBAT's off-target rule, 4.1.2.2), the queuing delay
//! trend (an autocorrelation of the last 20 fractional delays), the send
//! window (4.1.2.5), pacing at cwnd / s_rtt (4.1.2.6), and the media rate
//! control (4.1.3) every RATE_ADJUST_INTERVAL.

use super::compete::QdelayTarget;
use super::flight::Acked;
use super::{Measures, Params};
use crate::sim::SimTime;
use std::collections::VecDeque;

/// qdelay_fraction_hist's length.
const FRACTION_SAMPLES: usize = 20;
/// Media rate samples kept for rate_media_median (10 s at 200 ms).
const MEDIA_SAMPLES: usize = 50;

pub struct Rfc8298 {
    pub cwnd: f64,
    pub in_fast_increase: bool,
    pub delay_target: QdelayTarget,
    qdelay_fraction_avg: f64,
    fraction_hist: VecDeque<f64>,
    pub qdelay_trend: f64,
    pub qdelay_trend_mem: f64,
    /// Last time qdelay_trend was at or above QDELAY_TREND_LO.
    trend_high_at: SimTime,
    last_congestion: Option<SimTime>,
    pub target_bps: f64,
    target_last_max: f64,
    last_rate_adjust: SimTime,
    media_hist: VecDeque<f64>,
}

impl Rfc8298 {
    pub fn new(s: &Params) -> Self {
        Rfc8298 {
            cwnd: s.min_cwnd_bytes,
            in_fast_increase: true,
            delay_target: QdelayTarget::new(
                s.qdelay_target_lo_ms / 1e3,
                s.qdelay_target_hi_ms / 1e3,
            ),
            qdelay_fraction_avg: 0.0,
            fraction_hist: VecDeque::with_capacity(FRACTION_SAMPLES),
            qdelay_trend: 0.0,
            qdelay_trend_mem: 0.0,
            trend_high_at: SimTime::ZERO,
            last_congestion: None,
            target_bps: s.start_bps,
            target_last_max: 1.0,
            last_rate_adjust: SimTime::ZERO,
            media_hist: VecDeque::with_capacity(MEDIA_SAMPLES),
        }
    }

    /// The queuing delay trend (4.1.2.2), every 50 ms: the lag-one
    /// autocorrelation of the fractional delays times their average.
    pub fn update_trend(&mut self, s: &Params, now: SimTime, qdelay_s: f64) {
        let fraction = qdelay_s / self.delay_target.target_s;
        self.qdelay_fraction_avg =
            (1.0 - s.qdelay_weight) * self.qdelay_fraction_avg + s.qdelay_weight * fraction;
        if self.fraction_hist.len() == FRACTION_SAMPLES {
            self.fraction_hist.pop_front();
        }
        self.fraction_hist.push_back(fraction);
        let n = self.fraction_hist.len() as f64;
        let mean = self.fraction_hist.iter().sum::<f64>() / n;
        let dev: Vec<f64> = self.fraction_hist.iter().map(|x| x - mean).collect();
        let r0: f64 = dev.iter().map(|d| d * d).sum();
        let r1: f64 = dev.windows(2).map(|w| w[0] * w[1]).sum();
        let a = if r0 > 0.0 { r1 / r0 } else { 0.0 };
        self.qdelay_trend = (a * self.qdelay_fraction_avg).clamp(0.0, 1.0);
        self.qdelay_trend_mem = (0.99 * self.qdelay_trend_mem).max(self.qdelay_trend);
        if self.qdelay_trend >= s.qdelay_trend_lo {
            self.trend_high_at = now;
        }
    }

    /// One feedback message: a loss or ECN event (at most once per RTT)
    /// cuts the window and the target; otherwise the window update.
    pub fn on_feedback(&mut self, s: &Params, m: &Measures, a: &Acked) {
        let congested = a.lost > 0 || a.packets_ce > 0;
        let once_per_rtt = self
            .last_congestion
            .is_none_or(|t| m.now.saturating_sub(t).as_secs_f64() >= m.s_rtt_s);
        if congested && once_per_rtt {
            self.last_congestion = Some(m.now);
            self.in_fast_increase = false;
            self.trend_high_at = m.now;
            self.target_last_max = self.target_bps;
            let (beta, beta_r) = if a.lost > 0 {
                (s.beta_loss, s.beta_r)
            } else {
                (s.beta_ecn, s.beta_ecn)
            };
            self.cwnd = (self.cwnd * beta).max(s.min_cwnd_bytes);
            // 4.1.3: the target follows at once, not at the next interval.
            self.target_bps = (self.target_bps * beta_r).max(s.min_bps);
            self.last_rate_adjust = m.now;
        } else if !congested {
            self.update_cwnd(s, m, a.bytes_newly_acked as f64);
        }
        if !self.in_fast_increase
            && m.now.saturating_sub(self.trend_high_at)
                >= SimTime::from_secs_f64(s.t_resume_fast_increase_s)
        {
            self.in_fast_increase = true;
        }
    }

    /// update_cwnd(bytes_newly_acked), 4.1.2.2.
    fn update_cwnd(&mut self, s: &Params, m: &Measures, newly: f64) {
        let bif = m.bytes_in_flight as f64;
        if self.in_fast_increase {
            if self.qdelay_trend >= s.qdelay_trend_th {
                // Incipient congestion: the rate's inflection point.
                self.in_fast_increase = false;
                self.target_last_max = self.target_bps;
            } else {
                if bif * 1.5 + newly > self.cwnd {
                    self.cwnd += newly;
                }
                return;
            }
        }
        let target = self.delay_target.target_s;
        let off_target = (target - m.qdelay_s) / target;
        let mut delta = s.gain * off_target * newly * m.mss / self.cwnd;
        if off_target > 0.0 && bif * 1.25 + newly <= self.cwnd {
            // The window is not used enough to grow.
            delta = 0.0;
        }
        self.cwnd += delta;
        self.cwnd = self
            .cwnd
            .min(m.max_bytes_in_flight as f64 * s.max_bytes_in_flight_head_room)
            .max(s.min_cwnd_bytes);
    }

    /// send_wnd (4.1.2.5): one MSS of slack while the delay is on target.
    pub fn send_window(&self, m: &Measures) -> u64 {
        let slack = if m.qdelay_s <= self.delay_target.target_s {
            m.mss
        } else {
            0.0
        };
        (self.cwnd + slack - m.bytes_in_flight as f64).max(0.0) as u64
    }

    /// pace_bitrate (4.1.2.6): the window per smoothed RTT.
    pub fn pacing_bps(&self, s: &Params, m: &Measures) -> f64 {
        if m.s_rtt_s > 0.0 {
            (self.cwnd * 8.0 / m.s_rtt_s).max(s.rate_pace_min_bps)
        } else {
            f64::INFINITY
        }
    }

    /// The media rate control (4.1.3), at most every RATE_ADJUST_INTERVAL.
    pub fn adjust_rate(&mut self, s: &Params, m: &Measures) {
        let interval = s.rate_adjust_interval_ms / 1e3;
        if m.now.saturating_sub(self.last_rate_adjust).as_secs_f64() < interval {
            return;
        }
        self.last_rate_adjust = m.now;
        let current = m.rate_transmit_bps.max(m.rate_ack_bps);
        if self.media_hist.len() == MEDIA_SAMPLES {
            self.media_hist.pop_front();
        }
        self.media_hist.push_back(m.rate_transmit_bps);
        let ramp = s.ramp_up_speed_bps.min(self.target_bps / 2.0);
        let scale = ((self.target_bps - self.target_last_max) / self.target_last_max * 4.0)
            .powi(2)
            .clamp(0.2, 1.0);
        let queue_bits = m.rtp_queue_bytes as f64 * 8.0;
        if self.in_fast_increase {
            self.target_bps += ramp * interval * scale;
        } else {
            // RFC 8298's pseudocode adds current_rate_t itself; the
            // reference code (and the text: "a bitrate change") subtracts
            // the target, so that the target moves towards the rate.
            let mut delta = current * (1.0 - s.pre_congestion_guard * self.qdelay_trend)
                - s.tx_queue_size_factor * queue_bits
                - self.target_bps;
            if delta > 0.0 {
                delta = (delta * scale).min(ramp * interval);
            }
            self.target_bps += delta;
            if current > 0.0 && queue_bits / current > s.rtp_qdelay_th_ms / 1e3 {
                self.target_bps *= s.target_rate_scale_rtp_qdelay;
            }
        }
        if current > 0.0 {
            let median = median(&self.media_hist);
            let limit =
                current.max(m.rate_transmit_bps.max(median)) * (2.0 - self.qdelay_trend_mem);
            self.target_bps = self.target_bps.min(limit);
        }
        self.target_bps = self.target_bps.clamp(s.min_bps, s.max_bps);
    }
}

fn median(xs: &VecDeque<f64>) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| *x > 0.0).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
