//! The TFRC sender (RFC 5348 section 4): the allowed sending rate X from
//! the receiver's feedback, slow start, and the no-feedback timer.
//!
//! - Start (4.2): X = one packet per second, no-feedback timer at 2 s. On
//!   the first feedback, R = the RTT sample and X = W_init / R with
//!   W_init = min(4s, max(2s, 4380 bytes)).
//! - Each feedback (4.3): R_sample = now - t_recvdata - t_delay, R =
//!   0.9 R plus 0.1 R_sample, t_RTO = max(4R, 2s/X). With p > 0, X = max(min(X_Bps,
//!   recv_limit), s / t_mbi), X_Bps from the equation; with p = 0 (slow
//!   start), X doubles at most once per RTT: X = max(min(2X, recv_limit),
//!   W_init / R). recv_limit is twice the largest receive rate reported in
//!   the last two RTTs, or, when the feedback reports a higher p (a new
//!   loss event), that largest rate after halving the older ones and
//!   taking 0.85 of the new one.
//! - No feedback for max(4R, 2s/X) (4.4): a sender idle since the timer
//!   was set keeps a rate already below twice its initial rate (p = 0) or
//!   a receive rate below it (p > 0); otherwise, before any RTT or with
//!   p = 0, X = max(X/2, s/t_mbi); with p > 0 the receive-rate limit
//!   becomes X_recv (when X_Bps > 2 X_recv) or X_Bps / 2 (update_limits),
//!   and X is held under it.
//!
//! - Oscillation prevention (4.5, `oscillation_prevention`): packets are
//!   spaced at the instantaneous rate X sqrt(R_sqmean) / sqrt(R_sample),
//!   R_sqmean the EWMA (0.9) of the RTT samples' square roots, so that a
//!   growing queue (a longer RTT) slows the sender at once, as ns-2's
//!   agent does with its `ca_` option.
//!
//! - Segment size (4.1): packets of varying size (media fragments) make s
//!   the mean size of the packets sent, an EWMA (1/16) from the flow's
//!   nominal size, for the equation and the spacing alike; then X and the
//!   receiver's X_recv, both in bytes, stay comparable. A fixed-size flow
//!   keeps s exactly.
//!
//! Left out: the data-limited refinements of sections 4.3 and 8.2 (a
//! sender that runs out of data is treated as one that is not).

use super::{throughput_bps, DataHeader, Feedback, TfrcConfig};
use crate::sim::{Series, SimTime};

/// RFC 5348 4.1 lets s be the mean packet size when sizes vary: an EWMA
/// with weight 1/16 (exact for a constant size: 15/16 and 1/16 are binary
/// fractions).
pub fn mean_size(s: f64, bytes: u32) -> f64 {
    s * (15.0 / 16.0) + bytes as f64 / 16.0
}

#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub packets: u64,
    pub feedbacks: u64,
    pub nofeedback_expiries: u64,
}

pub struct TfrcSender {
    cfg: TfrcConfig,
    s: f64,
    /// Allowed sending rate, bytes/s.
    x: f64,
    /// RTT estimate, seconds (None before the first feedback).
    r: Option<f64>,
    t_rto: f64,
    p: f64,
    /// Time last doubled in slow start.
    tld: SimTime,
    /// Recent receive rates: (when reported, bytes/s).
    x_recv_set: Vec<(SimTime, f64)>,
    /// Section 4.5: EWMA of sqrt(RTT samples), and the last sample.
    sqrt_rtt_mean: f64,
    last_sample: f64,
    nofeedback_at: SimTime,
    /// A packet left since the no-feedback timer was last set (4.4: an
    /// idle sender is not penalised below its initial rate).
    sent_since_timer: bool,
    next_seq: u64,
    pub stats: SenderStats,
    /// (time, X in bytes/s), recorded when X changes.
    pub rate_series: Series,
}

impl TfrcSender {
    pub fn new(cfg: TfrcConfig, now: SimTime) -> Self {
        let s = cfg.s as f64;
        let mut snd = TfrcSender {
            s,
            x: s,
            r: None,
            t_rto: 2.0,
            p: 0.0,
            tld: now,
            x_recv_set: Vec::new(),
            sqrt_rtt_mean: 0.0,
            last_sample: 0.0,
            nofeedback_at: now + SimTime::from_secs(2),
            sent_since_timer: false,
            next_seq: 0,
            cfg,
            stats: SenderStats::default(),
            rate_series: Series::default(),
        };
        snd.record(now);
        snd
    }

    /// Allowed sending rate, bytes/s.
    pub fn rate(&self) -> f64 {
        self.x
    }
    pub fn rtt(&self) -> Option<f64> {
        self.r
    }
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }
    pub fn nofeedback_deadline(&self) -> SimTime {
        self.nofeedback_at
    }
    /// Time between packets (t_ipi): at the allowed rate, or with
    /// oscillation prevention at the instantaneous rate (section 4.5).
    pub fn interval(&self) -> SimTime {
        let mut x = self.x;
        if self.cfg.oscillation_prevention && self.last_sample > 0.0 {
            x *= self.sqrt_rtt_mean / self.last_sample.sqrt();
        }
        SimTime::from_secs_f64(self.s / x)
    }

    fn w_init(&self) -> f64 {
        (4.0 * self.s).min((2.0 * self.s).max(4380.0))
    }
    fn min_rate(&self) -> f64 {
        self.s / self.cfg.t_mbi.as_secs_f64()
    }

    fn record(&mut self, now: SimTime) {
        self.rate_series.push_change(now, self.x);
    }

    /// The mean segment size s in use, bytes.
    pub fn segment_size(&self) -> f64 {
        self.s
    }

    /// The header of the next data packet, `bytes` long, sent now.
    pub fn on_send(&mut self, now: SimTime, bytes: u32) -> DataHeader {
        self.s = mean_size(self.s, bytes);
        self.sent_since_timer = true;
        let h = DataHeader {
            seq: self.next_seq,
            sent_at: now,
            rtt: SimTime::from_secs_f64(self.r.unwrap_or(0.0)),
        };
        self.next_seq += 1;
        self.stats.packets += 1;
        h
    }

    /// The limit from recent receive rates (section 4.3 step 4).
    fn recv_limit(&mut self, now: SimTime, x_recv: f64, more_loss: bool, r: f64) -> f64 {
        let horizon = SimTime::from_secs_f64(2.0 * r);
        self.x_recv_set
            .retain(|(t, _)| now.saturating_sub(*t) <= horizon);
        if more_loss {
            for e in &mut self.x_recv_set {
                e.1 /= 2.0;
            }
            self.x_recv_set.push((now, 0.85 * x_recv));
            self.x_recv_set.iter().map(|e| e.1).fold(0.0, f64::max)
        } else {
            self.x_recv_set.push((now, x_recv));
            2.0 * self.x_recv_set.iter().map(|e| e.1).fold(0.0, f64::max)
        }
    }

    fn equation(&self) -> f64 {
        throughput_bps(
            self.s,
            self.r.unwrap_or(1.0),
            self.p,
            self.cfg.b,
            self.t_rto,
        )
    }

    /// Feedback from the receiver (section 4.3).
    pub fn on_feedback(&mut self, now: SimTime, fb: &Feedback) {
        self.stats.feedbacks += 1;
        let sample = now
            .saturating_sub(fb.t_recvdata)
            .saturating_sub(fb.t_delay)
            .as_secs_f64()
            .max(1e-6);
        let first = self.r.is_none();
        let r = self.r.map_or(sample, |r| 0.9 * r + 0.1 * sample);
        self.sqrt_rtt_mean = if first {
            sample.sqrt()
        } else {
            0.9 * self.sqrt_rtt_mean + 0.1 * sample.sqrt()
        };
        self.last_sample = sample;
        self.r = Some(r);
        self.t_rto = (4.0 * r).max(2.0 * self.s / self.x);
        let more_loss = fb.p > self.p;
        self.p = fb.p;
        if first && fb.p == 0.0 {
            self.x_recv_set = vec![(now, fb.x_recv)];
            self.x = self.w_init() / r;
            self.tld = now;
        } else {
            let limit = self.recv_limit(now, fb.x_recv, more_loss, r);
            if self.p > 0.0 {
                self.x = self.equation().min(limit).max(self.min_rate());
            } else if now.saturating_sub(self.tld).as_secs_f64() >= r {
                self.x = (2.0 * self.x).min(limit).max(self.w_init() / r);
                self.tld = now;
            }
        }
        self.restart_nofeedback(now);
        self.record(now);
    }

    /// Feedback for a pacing sender whose next packet is due at
    /// `next_send`: a faster rate moves that packet earlier (not before
    /// `now`). Returns when the next packet may leave.
    pub fn on_feedback_paced(
        &mut self,
        now: SimTime,
        fb: &Feedback,
        next_send: SimTime,
    ) -> SimTime {
        let before = self.interval();
        self.on_feedback(now, fb);
        let after = self.interval();
        if after < before {
            next_send.saturating_sub(before - after).max(now)
        } else {
            next_send
        }
    }

    fn restart_nofeedback(&mut self, now: SimTime) {
        let r = self.r.unwrap_or(0.0);
        let t = (4.0 * r).max(2.0 * self.s / self.x);
        self.nofeedback_at = now + SimTime::from_secs_f64(t);
        self.sent_since_timer = false;
    }

    /// The no-feedback timer (section 4.4), at or after its deadline.
    pub fn on_nofeedback(&mut self, now: SimTime) {
        if now < self.nofeedback_at {
            return;
        }
        self.stats.nofeedback_expiries += 1;
        let idle = !self.sent_since_timer;
        let x_recv = self.x_recv_set.iter().map(|e| e.1).fold(0.0, f64::max);
        // recover_rate: the initial rate (W_init / R; one packet per
        // second before any RTT).
        let recover = self.r.map_or(self.s, |r| self.w_init() / r);
        if self.r.is_none() && !idle {
            self.x = (self.x / 2.0).max(self.min_rate());
        } else if idle
            && ((self.p > 0.0 && x_recv < recover) || (self.p == 0.0 && self.x < 2.0 * recover))
        {
            // An idle sender already below its initial rate keeps it.
        } else if self.p == 0.0 {
            // No X_Bps yet: halve.
            self.x = (self.x / 2.0).max(self.min_rate());
        } else {
            let x_bps = self.equation();
            // 2 X_recv already limited the rate: halve X_recv; otherwise
            // halve the equation's rate.
            let limit = if x_bps > 2.0 * x_recv {
                x_recv
            } else {
                x_bps / 2.0
            };
            self.update_limits(now, limit);
        }
        self.restart_nofeedback(now);
        self.record(now);
    }

    /// Section 4.4's update_limits: X_recv_set = {limit / 2} (limit at
    /// least s / t_mbi), then X from 4.3 step 4 with that set.
    fn update_limits(&mut self, now: SimTime, limit: f64) {
        let limit = limit.max(self.min_rate());
        self.x_recv_set = vec![(now, limit / 2.0)];
        self.x = self.equation().min(limit).max(self.min_rate());
    }
}

#[cfg(test)]
mod recv_limit_tests {
    use super::*;

    /// Section 4.3 step 4 with more loss: the rates remembered within 2 R
    /// are halved and the new one counts at 0.85: 100,000 B/s remembered
    /// and 50,000 received give max(50,000, 42,500); without more loss,
    /// twice the largest remembered (200,000).
    #[test]
    fn more_loss_halves_the_remembered_receive_rates() {
        let cfg = TfrcConfig {
            s: 1000,
            ..Default::default()
        };
        let ms = SimTime::from_millis;
        let mut s = TfrcSender::new(cfg.clone(), SimTime::ZERO);
        s.recv_limit(ms(0), 100e3, false, 0.1);
        assert_eq!(s.recv_limit(ms(50), 50e3, true, 0.1), 50e3);
        let mut s = TfrcSender::new(cfg, SimTime::ZERO);
        s.recv_limit(ms(0), 100e3, false, 0.1);
        assert_eq!(s.recv_limit(ms(50), 50e3, false, 0.1), 200e3);
    }
}
