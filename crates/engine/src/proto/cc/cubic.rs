//! CUBIC (RFC 9438) behind the window seam: TCP's window grows as a cubic
//! function of the time since the last congestion event, so it returns to
//! the window at that event (W_max) after K seconds whatever the RTT, and
//! probes beyond it; a Reno-friendly estimate W_est keeps it at least as
//! fast as Reno where Reno would be faster (short RTTs, small windows).
//! Slow start, loss recovery and the window after a timeout stay the TCP
//! sender's (RFC 5681); this file gives the growth in congestion
//! avoidance and the slow-start threshold.
//!
//! Windows are in segments (bytes / SMSS) as RFC 9438 writes them:
//! - at a congestion event (4.6, 4.7): W_max = cwnd, or cwnd (1 + beta) / 2
//!   with fast convergence when cwnd is below the last W_max;
//!   ssthresh = max(flight beta, 2) segments;
//! - a congestion-avoidance epoch starts at its first ACK (4.2): K =
//!   cbrt((W_max - cwnd) / C) (0 when cwnd is above W_max, then W_max =
//!   cwnd), W_est = cwnd;
//! - per ACK, t the time since the epoch began: W_cubic(t) = W_max +
//!   C (t - K)^3; W_est += alpha acked / cwnd, alpha = 3 (1 - beta) /
//!   (1 + beta) below W_max and 1 above (4.3); if W_cubic(t) < W_est the window
//!   is W_est (Reno-friendly region, 4.3), else it moves towards target =
//!   W_cubic(t + RTT) within [cwnd, 1.5 cwnd] by (target - cwnd) / cwnd
//!   (4.4, 4.5);
//! - after a timeout the epoch ends too (4.8).
//!
//! Left out: HyStart++ (RFC 9406) in slow start, and undoing a spurious
//! congestion event (4.9).

use super::window::{Ack, Congestion, WindowController, WindowModel};
use crate::scenario::check::Checker;
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::Deserialize;

fn d_c() -> f64 {
    0.4
}
fn d_beta() -> f64 {
    0.7
}
fn d_true() -> bool {
    true
}

/// CUBIC (RFC 9438), with whichever recovery the flow's `flavor` chooses.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CubicSpec {
    /// The cubic's scale C (RFC 9438: 0.4), segments / s^3.
    #[serde(default = "d_c")]
    pub c: f64,
    /// The multiplicative decrease beta_cubic (0.7).
    #[serde(default = "d_beta")]
    pub beta: f64,
    /// Fast convergence (4.7).
    #[serde(default = "d_true")]
    pub fast_convergence: bool,
    /// The Reno-friendly region (4.3).
    #[serde(default = "d_true")]
    pub reno_friendly: bool,
}

impl WindowModel for CubicSpec {
    fn validate(&self, path: &str, c: &mut Checker) {
        c.positive(format_args!("{path}.c"), self.c);
        if !(self.beta.is_finite() && self.beta > 0.0 && self.beta < 1.0) {
            c.err(
                format!("{path}.beta"),
                format!("must be in (0, 1) (got {})", self.beta),
            );
        }
    }
    fn build(&self) -> Option<Box<dyn WindowController>> {
        Some(Box::new(Cubic::new(self)))
    }
}

pub struct Cubic {
    c: f64,
    beta: f64,
    fast_convergence: bool,
    reno_friendly: bool,
    /// W_max, segments (None before the first congestion event).
    w_max: Option<f64>,
    epoch: Option<Epoch>,
}

#[derive(Clone, Copy, Debug)]
struct Epoch {
    start: SimTime,
    k_s: f64,
    w_max: f64,
    w_est: f64,
}

impl Cubic {
    pub fn new(s: &CubicSpec) -> Self {
        Cubic {
            c: s.c,
            beta: s.beta,
            fast_convergence: s.fast_convergence,
            reno_friendly: s.reno_friendly,
            w_max: None,
            epoch: None,
        }
    }

    /// W_cubic(t), segments.
    fn w_cubic(&self, e: &Epoch, t_s: f64) -> f64 {
        self.c * (t_s - e.k_s).powi(3) + e.w_max
    }

    fn start_epoch(&mut self, now: SimTime, cwnd: f64) -> Epoch {
        let w_max = self.w_max.unwrap_or(cwnd).max(cwnd);
        let k_s = ((w_max - cwnd) / self.c).cbrt();
        let e = Epoch {
            start: now,
            k_s,
            w_max,
            w_est: cwnd,
        };
        self.epoch = Some(e);
        e
    }
}

impl WindowController for Cubic {
    fn on_ack(&mut self, a: &Ack) -> u64 {
        if a.cwnd < a.ssthresh {
            // Slow start as Reno's (RFC 5681 eq. 2).
            return a.cwnd + a.acked.min(a.mss);
        }
        let mss = a.mss as f64;
        let cwnd = a.cwnd as f64 / mss;
        let mut e = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(a.now, cwnd),
        };
        let t_s = a.now.saturating_sub(e.start).as_secs_f64();
        let rtt_s = a.srtt.map_or(0.0, |r| r.as_secs_f64());
        let alpha = if e.w_est < e.w_max {
            3.0 * (1.0 - self.beta) / (1.0 + self.beta)
        } else {
            1.0
        };
        e.w_est += alpha * (a.acked as f64 / mss) / cwnd;
        self.epoch = Some(e);
        let next = if self.reno_friendly && self.w_cubic(&e, t_s) < e.w_est {
            e.w_est
        } else {
            let target = self.w_cubic(&e, t_s + rtt_s).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd
        };
        // Never below the window it had (the target is at least cwnd; W_est
        // may trail it just after an epoch starts above W_max).
        ((next.max(cwnd)) * mss).round() as u64
    }

    fn ssthresh(&mut self, c: &Congestion) -> u64 {
        let mss = c.mss as f64;
        let cwnd = c.cwnd as f64 / mss;
        self.w_max = Some(match self.w_max {
            Some(last) if self.fast_convergence && cwnd < last => cwnd * (1.0 + self.beta) / 2.0,
            _ => cwnd,
        });
        self.epoch = None;
        let ssthresh = (c.flight as f64 / mss * self.beta).max(2.0);
        (ssthresh * mss).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn cubic() -> Cubic {
        Cubic::new(&CubicSpec {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
        })
    }

    fn ack(now_s: f64, cwnd_seg: f64, srtt_ms: Option<u64>) -> Ack {
        Ack {
            now: SimTime::from_secs_f64(now_s),
            cwnd: (cwnd_seg * MSS as f64) as u64,
            ssthresh: 1,
            acked: MSS,
            mss: MSS,
            srtt: srtt_ms.map(SimTime::from_millis),
        }
    }

    fn congestion(cwnd_seg: u64) -> Congestion {
        Congestion {
            now: SimTime::ZERO,
            cwnd: cwnd_seg * MSS,
            flight: cwnd_seg * MSS,
            mss: MSS,
            timeout: false,
        }
    }

    /// RFC 9438 by hand: a loss at 100 segments leaves ssthresh 70; the
    /// epoch at cwnd 70 has K = cbrt(30 / 0.4) = cbrt(75) = 4.2172 s, and
    /// W_cubic(K) = 100.
    #[test]
    fn k_and_the_plateau_by_hand() {
        let mut c = cubic();
        assert_eq!(c.ssthresh(&congestion(100)), 70 * MSS);
        c.on_ack(&ack(0.0, 70.0, None));
        let e = c.epoch.expect("an epoch");
        assert!((e.k_s - 75f64.cbrt()).abs() < 1e-12 && (e.k_s - 4.2172).abs() < 1e-4);
        assert!((c.w_cubic(&e, e.k_s) - 100.0).abs() < 1e-12);
        assert!((c.w_cubic(&e, 0.0) - 70.0).abs() < 1e-9);
    }

    /// In the concave region the window moves by (target - cwnd) / cwnd
    /// per ACK, target = W_cubic(t + RTT) capped at 1.5 cwnd: at t = 1 s,
    /// RTT 100 ms, cwnd 80: target = 0.4 (1.1 - K)^3 + 100.
    #[test]
    fn the_window_moves_towards_the_cubic_one_rtt_ahead() {
        let mut c = cubic();
        c.ssthresh(&congestion(100));
        c.on_ack(&ack(0.0, 70.0, Some(100)));
        let k = 75f64.cbrt();
        let target: f64 = 0.4 * (1.1 - k).powi(3) + 100.0;
        let want = 80.0 + (target - 80.0) / 80.0;
        let got = c.on_ack(&ack(1.0, 80.0, Some(100)));
        assert_eq!(got, (want * MSS as f64).round() as u64);
    }

    /// With a short RTT Reno would be faster: W_est grows by alpha =
    /// 3 (0.3) / 1.7 per window's worth of ACKs and the window follows it
    /// while the cubic is below.
    #[test]
    fn the_reno_friendly_region_follows_w_est() {
        let mut c = cubic();
        c.ssthresh(&congestion(10)); // W_max 10, K = cbrt(3 / 0.4) = 1.96 s
        let mut cwnd = 7.0;
        let mut now = 0.0;
        for _ in 0..7 {
            cwnd = c.on_ack(&ack(now, cwnd, Some(1))) as f64 / MSS as f64;
            now += 0.001;
        }
        // By hand: W_est += alpha / cwnd per one-segment ACK, and the
        // window is W_est (rounded to bytes) since the cubic is below.
        let alpha = 0.9 / 1.7;
        let (mut w, mut win) = (7.0f64, 7.0f64);
        for _ in 0..7 {
            w += alpha / win;
            win = (w * 1000.0).round() / 1000.0;
        }
        assert!((c.epoch.unwrap().w_est - w).abs() < 1e-9);
        assert_eq!(cwnd, win);
        assert!(w > 7.5, "about alpha in a window's worth of ACKs");
    }

    /// Fast convergence: a loss below the last W_max sets W_max to
    /// cwnd (1 + beta) / 2; ssthresh is beta x flight, at least 2.
    #[test]
    fn fast_convergence_and_the_floor() {
        let mut c = cubic();
        c.ssthresh(&congestion(100));
        c.ssthresh(&congestion(80));
        assert!((c.w_max.unwrap() - 80.0 * 1.7 / 2.0).abs() < 1e-12);
        // A loss above the last W_max sets W_max to cwnd itself.
        c.ssthresh(&congestion(120));
        assert_eq!(c.w_max, Some(120.0));
        // A loss at exactly W_max is not below it: W_max stays.
        c.ssthresh(&congestion(120));
        assert_eq!(c.w_max, Some(120.0));
        assert_eq!(c.ssthresh(&congestion(2)), 2 * MSS);
    }

    /// alpha_cubic is 1 once W_est has reached W_max (RFC 9438 4.3:
    /// "W_est >= W_max"): an epoch with no congestion before starts
    /// there, so W_est grows by a whole segment per window.
    #[test]
    fn alpha_is_one_from_w_max_on() {
        let mut c = cubic();
        c.on_ack(&ack(0.0, 10.0, None));
        assert!((c.epoch.unwrap().w_est - 10.1).abs() < 1e-12);
    }

    /// Reno-friendly only while W_cubic(t) is below W_est (4.3): where
    /// they are equal (an ACK of no new data at the epoch's start), the
    /// window follows the cubic one RTT ahead: 10 + (0.4 x 1^3) / 10.
    #[test]
    fn at_w_est_the_window_follows_the_cubic() {
        let mut c = cubic();
        let a = Ack {
            acked: 0,
            ..ack(0.0, 10.0, Some(1000))
        };
        assert_eq!(c.on_ack(&a), 10_040);
        // At cwnd = ssthresh, congestion avoidance (RFC 5681 3.1 allows
        // either; Linux's tcp_in_slow_start is cwnd < ssthresh).
        let mut c = cubic();
        let at_ssthresh = Ack {
            ssthresh: 10 * MSS,
            ..a
        };
        assert_eq!(c.on_ack(&at_ssthresh), 10_040);
    }

    #[test]
    fn defaults_and_bad_fields() {
        let s: CubicSpec = serde_json::from_str("{}").expect("defaults");
        assert_eq!(
            (s.c, s.beta, s.fast_convergence, s.reno_friendly),
            (0.4, 0.7, true, true)
        );
        assert!(s.build().is_some(), "a window controller");
        for (beta, ok) in [(0.0, false), (1.0, false), (0.5, true), (f64::NAN, false)] {
            let mut c = Checker::default();
            CubicSpec { beta, ..s.clone() }.validate("cc", &mut c);
            assert_eq!(c.errs.is_empty(), ok, "beta {beta}");
        }
        let mut c = Checker::default();
        CubicSpec { c: 0.0, ..s }.validate("cc", &mut c);
        assert!(c.errs[0].to_string().contains("cc.c"));
    }

    #[test]
    fn slow_start_is_renos() {
        let mut c = cubic();
        let a = Ack {
            ssthresh: 100 * MSS,
            acked: 3 * MSS,
            ..ack(0.0, 10.0, None)
        };
        assert_eq!(c.on_ack(&a), 11 * MSS);
        assert!(c.epoch.is_none());
    }
}
