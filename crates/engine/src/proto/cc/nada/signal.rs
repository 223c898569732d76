//! NADA's congestion signal (RFC 8698 4.2), computed at the sender from
//! per-packet feedback (the RFC's sender-side variant, 6.3): each
//! packet's one-way delay d_fwd against the least seen, d_base, gives its
//! queuing delay; d_tilde is the least of the last 15 (a minimum filter
//! against jitter); losses and ECN marks are smoothed ratios. The signal:
//!
//! x_curr = d_hat + DLOSS (p_loss / PLRREF)^2 + DMARK (p_mark / PMRREF)^2,
//!
//! where d_hat = d_tilde, warped to QTH exp(-LAMBDA (d_tilde - QTH) / QTH)
//! above QTH while a loss is recent (the last within MULTILOSS times the
//! mean interval between losses): a queue that drops packets is a
//! loss-based competitor's, and NADA then reacts to the loss, not the
//! delay. The receiving rate is the bytes received over the last LOGWIN.
//! rmode is 0 (accelerated ramp-up) while no loss or mark was seen within
//! LOGWIN and every filtered queuing delay (d_tilde) in it is under QEPS
//! (or, with `rampup_raw`, every packet's own queuing delay).

use crate::sim::SimTime;
use std::collections::VecDeque;

/// The minimum filter's taps.
pub const MIN_FILTER_TAPS: usize = 15;

pub struct Consts {
    pub qth_ms: f64,
    pub lambda: f64,
    pub dloss_ms: f64,
    pub plrref: f64,
    pub dmark_ms: f64,
    pub pmrref: f64,
    pub alpha: f64,
    pub multiloss: f64,
    pub logwin: SimTime,
    pub qeps_ms: f64,
    /// The signal's cap, ms.
    pub x_max_ms: f64,
    /// The ramp-up's test on each packet's queuing delay, not d_tilde.
    pub rampup_raw: bool,
}

pub struct Signal {
    c: Consts,
    d_base: Option<SimTime>,
    recent_queue_ms: VecDeque<f64>,
    pub p_loss: f64,
    pub p_mark: f64,
    last_loss: Option<SimTime>,
    loss_interval_s: Option<f64>,
    /// (arrival, bytes, the ramp-up test's delay ms, loss or mark) within LOGWIN.
    window: VecDeque<(SimTime, u32, f64, bool)>,
    /// The newest arrival time reported (receiver's clock).
    latest_arrival: SimTime,
    pub x_curr_ms: f64,
}

impl Signal {
    pub fn new(c: Consts) -> Self {
        Signal {
            c,
            d_base: None,
            recent_queue_ms: VecDeque::with_capacity(MIN_FILTER_TAPS + 1),
            p_loss: 0.0,
            p_mark: 0.0,
            last_loss: None,
            loss_interval_s: None,
            window: VecDeque::new(),
            latest_arrival: SimTime::ZERO,
            x_curr_ms: 0.0,
        }
    }

    /// One received packet sent at `sent`, arrived at `arrival`, with ECN
    /// bits `ecn` (CE marked: 3).
    pub fn on_received(&mut self, sent: SimTime, arrival: SimTime, bytes: u32, ecn: u8) {
        let d_fwd = arrival.saturating_sub(sent);
        let base = *self.d_base.get_or_insert(d_fwd);
        let base = base.min(d_fwd);
        self.d_base = Some(base);
        let q_ms = (d_fwd - base).as_secs_f64() * 1e3;
        self.recent_queue_ms.push_back(q_ms);
        if self.recent_queue_ms.len() > MIN_FILTER_TAPS {
            self.recent_queue_ms.pop_front();
        }
        // The window keeps the filtered delay, so one late packet does not
        // end the ramp-up (or, as an option, each packet's own).
        let tested = if self.c.rampup_raw {
            q_ms
        } else {
            self.d_tilde()
        };
        self.latest_arrival = self.latest_arrival.max(arrival);
        self.window.push_back((arrival, bytes, tested, ecn == 3));
    }

    /// A packet reported lost at `now`.
    pub fn on_lost(&mut self, now: SimTime) {
        if let Some(last) = self.last_loss {
            let gap = now.saturating_sub(last).as_secs_f64();
            if gap > 0.0 {
                let a = self.c.alpha;
                self.loss_interval_s = Some(
                    self.loss_interval_s
                        .map_or(gap, |m| a * gap + (1.0 - a) * m),
                );
            }
        }
        self.last_loss = Some(now);
        // On the receiver's clock, with the arrivals: as of the newest.
        self.window.push_back((self.latest_arrival, 0, 0.0, true));
    }

    /// A feedback message at `now` covered `received` packets, `lost`
    /// lost and `marked` CE-marked: updates the ratios and x_curr.
    pub fn update(&mut self, now: SimTime, received: u64, lost: u64, marked: u64) -> f64 {
        let n = (received + lost).max(1) as f64;
        let a = self.c.alpha;
        self.p_loss = a * (lost as f64 / n) + (1.0 - a) * self.p_loss;
        self.p_mark = a * (marked as f64 / received.max(1) as f64) + (1.0 - a) * self.p_mark;
        // LOGWIN ends at the newest arrival reported, the receiver's "now"
        // as far as the sender knows: ending it at the sender's now would
        // leave the last one-way delay and feedback wait of it empty, and
        // r_recv short by that share.
        let horizon = self.latest_arrival.saturating_sub(self.c.logwin);
        while self.window.front().is_some_and(|w| w.0 < horizon) {
            self.window.pop_front();
        }
        let d_tilde = self.d_tilde();
        let qth = self.c.qth_ms;
        let d_hat = if self.loss_recent(now) && d_tilde > qth {
            qth * (-self.c.lambda * (d_tilde - qth) / qth).exp()
        } else {
            d_tilde
        };
        // Capped: at 10% loss the loss term alone is 1 s, and the gradual
        // update's derivative term on a signal that large swings the rate
        // by multiples from one message to the next.
        self.x_curr_ms = (d_hat
            + self.c.dloss_ms * (self.p_loss / self.c.plrref).powi(2)
            + self.c.dmark_ms * (self.p_mark / self.c.pmrref).powi(2))
        .min(self.c.x_max_ms);
        self.x_curr_ms
    }

    /// d_tilde: the least of the last `MIN_FILTER_TAPS` queuing delays, ms.
    fn d_tilde(&self) -> f64 {
        let m = self
            .recent_queue_ms
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        if m.is_finite() {
            m
        } else {
            0.0
        }
    }

    /// The last loss is within MULTILOSS times the mean loss interval
    /// (one loss alone: within LOGWIN).
    fn loss_recent(&self, now: SimTime) -> bool {
        let Some(last) = self.last_loss else {
            return false;
        };
        let expiry = self
            .loss_interval_s
            .map_or(self.c.logwin.as_secs_f64(), |m| self.c.multiloss * m);
        now.saturating_sub(last).as_secs_f64() <= expiry
    }

    /// The receiving rate over LOGWIN, bit/s.
    pub fn recv_bps(&self) -> f64 {
        let bytes: u64 = self.window.iter().map(|w| w.1 as u64).sum();
        bytes as f64 * 8.0 / self.c.logwin.as_secs_f64()
    }

    /// 0: accelerated ramp-up; 1: gradual update.
    pub fn rmode(&self) -> u8 {
        let calm = self.window.iter().all(|w| !w.3 && w.2 < self.c.qeps_ms);
        u8::from(!calm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mean interval between losses is smoothed with ALPHA (0.1), and
    /// a loss is recent within MULTILOSS (7) times it: losses at 0, 1 and
    /// 3 s give 0.1 x 2 + 0.9 x 1 = 1.1 s, so recent until 3 + 7.7 s.
    #[test]
    fn a_loss_is_recent_within_multiloss_mean_intervals() {
        let mut s = super::super::tests::signal();
        assert!(!s.loss_recent(SimTime::ZERO));
        s.on_lost(SimTime::ZERO);
        // One loss alone: recent within LOGWIN.
        assert!(s.loss_recent(SimTime::from_millis(500)));
        assert!(!s.loss_recent(SimTime::from_millis(501)));
        s.on_lost(SimTime::from_secs(1));
        s.on_lost(SimTime::from_secs(3));
        let m = s.loss_interval_s.expect("a mean");
        assert!((m - 1.1).abs() < 1e-12, "{m}");
        assert!(s.loss_recent(SimTime::from_millis(10_690)));
        assert!(!s.loss_recent(SimTime::from_millis(10_710)));
        // Two losses at once are no interval: losses at 0, 0 and 1 s
        // give 1 s.
        let mut s = super::super::tests::signal();
        for t in [0, 0, 1] {
            s.on_lost(SimTime::from_secs(t));
        }
        assert_eq!(s.loss_interval_s, Some(1.0));
        // Losses at 0, 2 and 3 s: 0.1 x 1 + 0.9 x 2 = 1.9 s.
        let mut s = super::super::tests::signal();
        for t in [0, 2, 3] {
            s.on_lost(SimTime::from_secs(t));
        }
        let m = s.loss_interval_s.expect("a mean");
        assert!((m - 1.9).abs() < 1e-12, "{m}");
    }
}
