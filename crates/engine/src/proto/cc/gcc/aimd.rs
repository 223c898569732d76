//! The delay-based rate controller (draft-ietf-rmcat-gcc-02 5.5): a
//! state machine of Hold, Increase and Decrease driven by the detector's
//! signal, and the estimate A_hat it sets.
//!
//! - Overuse: Decrease, A_hat = beta R_hat (R_hat the received rate; never
//!   above A_hat), at most once per RTT (libwebrtc's rules; the draft
//!   names neither), then Hold.
//! - Normal: Hold becomes Increase (Decrease becomes Hold).
//! - Underuse: Hold (the queues drain).
//! - Increase: multiplicative, A_hat = eta^min(dt, 1 s) A_hat, while the
//!   received rate is far from where it was at recent decreases;
//!   additive near it, A_hat += max(1000, alpha x a packet's bits), alpha
//!   = 0.5 min(dt / (100 ms + RTT), 1). "Near" is within three standard
//!   deviations of the average received rate at decreases (an exponential
//!   average with weight 0.05 and a normalised variance within [0.4,
//!   2.5], libwebrtc's values); a received rate above it starts
//!   multiplicative increase again.
//! - A_hat never rises above 1.5 R_hat (it may stay where it is).

use crate::sim::SimTime;

use super::detector::Usage;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Hold,
    Increase,
    Decrease,
}

/// Frames a second the additive step assumes (a packet's size is a
/// frame's bits over the packets it takes).
const FPS: f64 = 30.0;
/// Largest packet the additive step assumes, bytes.
const PACKET_BYTES: f64 = 1200.0;
const MAX_AVG_WEIGHT: f64 = 0.05;

pub struct Aimd {
    pub state: State,
    pub a_hat_bps: f64,
    beta: f64,
    eta: f64,
    min_bps: f64,
    max_bps: f64,
    last_change: Option<SimTime>,
    last_decrease: Option<SimTime>,
    avg_max_kbps: Option<f64>,
    var_max_kbps: f64,
    near_max: bool,
    pub decreases: u64,
}

impl Aimd {
    pub fn new(start_bps: f64, beta: f64, eta: f64, min_bps: f64, max_bps: f64) -> Self {
        Aimd {
            state: State::Hold,
            a_hat_bps: start_bps,
            beta,
            eta,
            min_bps,
            max_bps,
            last_change: None,
            last_decrease: None,
            avg_max_kbps: None,
            var_max_kbps: 0.4,
            near_max: false,
            decreases: 0,
        }
    }

    /// The detector says `usage` at `now`; `r_hat_bps` is the received
    /// rate (None before a full window), `rtt` the round-trip time.
    pub fn update(
        &mut self,
        now: SimTime,
        usage: Usage,
        r_hat_bps: Option<f64>,
        rtt: SimTime,
    ) -> f64 {
        self.state = match (usage, self.state) {
            (Usage::Overuse, _) => State::Decrease,
            (Usage::Normal, State::Hold) => {
                self.last_change = Some(now);
                State::Increase
            }
            (Usage::Normal, s) => s,
            (Usage::Underuse, _) => State::Hold,
        };
        let dt_s = self
            .last_change
            .map_or(0.0, |t| now.saturating_sub(t).as_secs_f64());
        let mut a = self.a_hat_bps;
        match self.state {
            State::Hold => {}
            State::Increase => {
                if let (Some(avg), Some(r)) = (self.avg_max_kbps, r_hat_bps) {
                    let sigma = (self.var_max_kbps * avg).sqrt();
                    if r / 1e3 >= avg + 3.0 * sigma {
                        self.near_max = false;
                        self.avg_max_kbps = None;
                    }
                }
                a = if self.near_max {
                    let response_s = 0.1 + rtt.as_secs_f64();
                    let alpha = 0.5 * (dt_s / response_s).min(1.0);
                    a + (alpha * packet_bits(a)).max(1000.0)
                } else {
                    a * self.eta.powf(dt_s.min(1.0))
                };
                self.last_change = Some(now);
            }
            State::Decrease => {
                let soon = self
                    .last_decrease
                    .is_some_and(|t| now.saturating_sub(t) < rtt);
                if !soon {
                    let r = r_hat_bps.unwrap_or(a);
                    if let Some(avg) = self.avg_max_kbps {
                        let sigma = (self.var_max_kbps * avg).sqrt();
                        if r / 1e3 < avg - 3.0 * sigma {
                            self.avg_max_kbps = None;
                        }
                    }
                    self.update_max(r / 1e3);
                    self.near_max = true;
                    // Never a rise: a second overuse soon after the first
                    // sees a received rate still above the cut estimate.
                    a = a.min(self.beta * r);
                    self.last_decrease = Some(now);
                    self.decreases += 1;
                }
                self.last_change = Some(now);
                self.state = State::Hold;
            }
        }
        if let Some(r) = r_hat_bps {
            let cap = 1.5 * r;
            if a > cap {
                a = cap.max(self.a_hat_bps.min(a));
            }
        }
        self.a_hat_bps = a.clamp(self.min_bps, self.max_bps);
        self.a_hat_bps
    }

    /// A probe measured `bps` at `now`: the estimate is set to it
    /// (libwebrtc's SetEstimate), within the bounds. Returns it.
    pub fn set_estimate(&mut self, now: SimTime, bps: f64) -> f64 {
        let a = bps.clamp(self.min_bps, self.max_bps);
        if a < self.a_hat_bps {
            self.last_decrease = Some(now);
        }
        self.a_hat_bps = a;
        self.last_change = Some(now);
        a
    }

    fn update_max(&mut self, r_kbps: f64) {
        let avg = match self.avg_max_kbps {
            None => r_kbps,
            Some(avg) => (1.0 - MAX_AVG_WEIGHT) * avg + MAX_AVG_WEIGHT * r_kbps,
        };
        self.avg_max_kbps = Some(avg);
        let norm = avg.max(1.0);
        self.var_max_kbps = ((1.0 - MAX_AVG_WEIGHT) * self.var_max_kbps
            + MAX_AVG_WEIGHT * (avg - r_kbps) * (avg - r_kbps) / norm)
            .clamp(0.4, 2.5);
    }

    pub fn near_max(&self) -> bool {
        self.near_max
    }
}

/// A packet's bits at `rate_bps`: a frame's bits (at `FPS`) over the
/// packets of at most `PACKET_BYTES` it takes.
fn packet_bits(rate_bps: f64) -> f64 {
    let frame_bits = rate_bps / FPS;
    let packets = (frame_bits / (8.0 * PACKET_BYTES)).ceil().max(1.0);
    frame_bits / packets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn aimd() -> Aimd {
        Aimd::new(1e6, 0.85, 1.08, 1e4, 1e8)
    }

    /// Normal from Hold starts Increase; a second later the estimate is
    /// 1.08 times; half a second later 1.08^0.5 times more.
    #[test]
    fn multiplicative_increase_is_eta_per_second() {
        let mut a = aimd();
        let rtt = ms(100);
        assert_eq!(a.update(ms(0), Usage::Normal, None, rtt), 1e6);
        assert_eq!(a.state, State::Increase);
        let x = a.update(ms(1000), Usage::Normal, None, rtt);
        assert!((x - 1.08e6).abs() < 1e-6, "{x}");
        let y = a.update(ms(1500), Usage::Normal, None, rtt);
        assert!((y - 1.08e6 * 1.08f64.sqrt()).abs() < 1e-6);
        // Longer than a second counts one second.
        let z = a.update(ms(4000), Usage::Normal, None, rtt);
        assert!((z - y * 1.08).abs() < 1e-6);
    }

    /// Overuse: 0.85 of the received rate, then Hold; a second overuse
    /// within an RTT does not cut again; after it, it does.
    #[test]
    fn decrease_is_beta_times_the_received_rate_once_per_rtt() {
        let mut a = aimd();
        let rtt = ms(100);
        let x = a.update(ms(0), Usage::Overuse, Some(8e5), rtt);
        assert!((x - 0.85 * 8e5).abs() < 1e-6);
        assert_eq!((a.state, a.decreases), (State::Hold, 1));
        assert_eq!(a.update(ms(50), Usage::Overuse, Some(6e5), rtt), x);
        // One RTT after the cut, to the nanosecond: no longer soon.
        let y = a.update(ms(100), Usage::Overuse, Some(6e5), rtt);
        assert!((y - 0.85 * 6e5).abs() < 1e-6);
        // A later overuse while the received rate is still above the
        // estimate / beta: no rise.
        assert_eq!(a.update(ms(300), Usage::Overuse, Some(9e5), rtt), y);
        // Underuse holds.
        assert_eq!(a.update(ms(500), Usage::Underuse, Some(6e5), rtt), y);
        assert_eq!(a.state, State::Hold);
    }

    /// After a decrease the increase is additive near the received rate
    /// of the decrease: 0.5 x min(dt / (100 ms + RTT), 1) of a packet's
    /// bits, at least 1000 bit/s.
    #[test]
    fn near_the_last_decrease_the_increase_is_additive() {
        let mut a = aimd();
        let rtt = ms(100);
        a.update(ms(0), Usage::Overuse, Some(1e6), rtt); // 850 kbit/s
        assert!(a.near_max());
        // Hold -> Increase: no time has passed, so the step is its floor.
        assert_eq!(a.update(ms(1000), Usage::Normal, Some(1e6), rtt), 851e3);
        let x = a.update(ms(1100), Usage::Normal, Some(1e6), rtt);
        // 851 kbit/s at 30 fps: 28,367 bits a frame in 3 packets; 100 ms
        // of a 200 ms response time: alpha 0.25.
        let pkt = 851e3 / 30.0 / 3.0;
        assert!((x - (851e3 + 0.25 * pkt)).abs() < 1e-6, "{x}");
        // A received rate far above the average at decreases: back to
        // multiplicative.
        a.update(ms(2100), Usage::Normal, Some(2e6), rtt);
        assert!(!a.near_max());
    }

    /// The received rate at decreases: an exponential average (weight
    /// 0.05) and a normalised variance clamped to [0.4, 2.5], by hand.
    #[test]
    fn the_average_at_decreases_and_its_variance() {
        let mut a = aimd();
        let rtt = ms(100);
        a.update(ms(0), Usage::Overuse, Some(1e6), rtt);
        // First: the rate itself; 0.95 x 0.4 + 0 = 0.38, clamped to 0.4.
        assert_eq!(a.avg_max_kbps, Some(1000.0));
        assert_eq!(a.var_max_kbps, 0.4);
        // 970 kbit/s is within 3 sigma (20) below: averaged in.
        a.update(ms(200), Usage::Overuse, Some(970e3), rtt);
        let avg = 0.95 * 1000.0 + 0.05 * 970.0;
        assert!((a.avg_max_kbps.unwrap() - avg).abs() < 1e-9);
        let var = 0.95 * 0.4 + 0.05 * (avg - 970.0) * (avg - 970.0) / avg;
        assert!((a.var_max_kbps - var).abs() < 1e-12, "{}", a.var_max_kbps);
        // A large jump: the variance stops at 2.5.
        let mut b = aimd();
        b.update(ms(0), Usage::Overuse, Some(1e6), rtt);
        b.update(ms(200), Usage::Overuse, Some(50e6), rtt);
        assert_eq!(b.var_max_kbps, 2.5);
    }

    /// Three standard deviations either side of the average at decreases:
    /// a received rate above the band starts multiplicative increase
    /// again; a decrease below it starts a new average.
    #[test]
    fn the_band_around_the_average_at_decreases() {
        let rtt = ms(100);
        // Average 1000 kbit/s, variance 0.4: sigma = sqrt(0.4 x 1000) = 20.
        let after_decrease = || {
            let mut a = aimd();
            a.update(ms(0), Usage::Overuse, Some(1e6), rtt);
            a
        };
        let mut a = after_decrease();
        a.update(ms(500), Usage::Normal, Some(1059e3), rtt);
        assert!(a.near_max(), "1059 is inside 1000 + 3 x 20");
        let mut a = after_decrease();
        a.update(ms(500), Usage::Normal, Some(1061e3), rtt);
        assert!(!a.near_max(), "1061 is above it");
        assert_eq!(a.avg_max_kbps, None);
        // A decrease at 939 kbit/s (below 1000 - 60) forgets the average:
        // the new one is 939 itself, not 0.95 x 1000 + 0.05 x 939.
        let mut a = after_decrease();
        a.update(ms(200), Usage::Overuse, Some(939e3), rtt);
        assert_eq!(a.avg_max_kbps, Some(939.0));
        // At 941 it is averaged in, and at 940, the band's edge, too
        // (libwebrtc forgets only below it).
        let mut a = after_decrease();
        a.update(ms(200), Usage::Overuse, Some(941e3), rtt);
        assert!((a.avg_max_kbps.unwrap() - (950.0 + 47.05)).abs() < 1e-9);
        let mut a = after_decrease();
        a.update(ms(200), Usage::Overuse, Some(940e3), rtt);
        assert!((a.avg_max_kbps.unwrap() - (950.0 + 47.0)).abs() < 1e-9);
    }

    #[test]
    fn the_estimate_stays_under_one_and_a_half_times_the_received_rate() {
        let mut a = Aimd::new(1e6, 0.85, 1.08, 1e4, 1e8);
        a.update(ms(0), Usage::Normal, Some(5e5), ms(100));
        // Already above 1.5 x 500k = 750k: it stays, it does not drop.
        assert_eq!(a.a_hat_bps, 1e6);
        let mut a = Aimd::new(7e5, 0.85, 1.08, 1e4, 1e8);
        a.update(ms(0), Usage::Normal, Some(5e5), ms(100));
        let x = a.update(ms(1000), Usage::Normal, Some(5e5), ms(100));
        assert_eq!(x, 7.5e5);
    }
}
