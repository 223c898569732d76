//! The PPACC sender's target rate: a three-state machine updated at each
//! GOP start, driven by the receiver's available-bandwidth feedback and
//! its loss notices (the SVC study's state diagram).
//!
//! - Bias removal: at each loss notice, beta = EWMA of (A - sending rate);
//!   the machine works with A_adj = A - beta.
//! - INCREASE, per GOP: while target <= A_adj, target += max(eps,
//!   min(kappa, dA/dt t_GOP)); above it, target += eps if dA/dt >= 0,
//!   else unchanged.
//! - DECREASE, per GOP (our reconstruction, the mirror image, as the study
//!   only calls it "equivalent"): while target >= A_adj, target -= max(eps,
//!   min(kappa, -dA/dt t_GOP)); below it, target -= eps if dA/dt <= 0,
//!   else unchanged.
//! - FLAT: the rate holds.
//! - Transitions: a congestion event moves INCREASE or FLAT to DECREASE
//!   and (re)starts the no-loss short timer; more events in DECREASE keep
//!   it there and restart the timer; the short timer expiring moves
//!   DECREASE to FLAT, which holds for a random whole number of GOPs
//!   (1..=long_timer_max_gops, the long timer), then INCREASE.
//! - A congestion event: loss notices within `event_window` of the first
//!   one are one event.
//! - dA/dt is the change of the available-bandwidth estimate between GOP
//!   updates over the time between them.

use super::PpaccConfig;
use crate::sim::{uniform, Series, SimRng, SimTime};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Increase,
    Decrease,
    Flat,
}

pub struct PpaccControl {
    cfg: PpaccConfig,
    rng: SimRng,
    pub state: State,
    target_bps: f64,
    /// Latest available-bandwidth estimate from the receiver.
    a_bps: Option<f64>,
    /// The estimate at the last GOP update, and when.
    a_prev: Option<(SimTime, f64)>,
    bias_bps: f64,
    short_until: Option<SimTime>,
    long_until: Option<SimTime>,
    event_until: Option<SimTime>,
    pub events: u64,
    /// Packets the sender sent (kept here for the report).
    pub packets: u64,
    /// (time, target bit/s), recorded when it changes.
    pub target_series: Series,
}

impl PpaccControl {
    pub fn new(cfg: PpaccConfig, initial_bps: f64, rng: SimRng) -> Self {
        PpaccControl {
            target_bps: initial_bps.max(cfg.min_rate_bps),
            cfg,
            rng,
            state: State::Increase,
            a_bps: None,
            a_prev: None,
            bias_bps: 0.0,
            short_until: None,
            long_until: None,
            event_until: None,
            events: 0,
            packets: 0,
            target_series: Series::default(),
        }
    }

    pub fn target_bps(&self) -> f64 {
        self.target_bps
    }
    pub fn bias_bps(&self) -> f64 {
        self.bias_bps
    }

    /// The receiver's smoothed available bandwidth.
    pub fn on_feedback(&mut self, a_bps: f64) {
        self.a_bps = Some(a_bps);
    }

    /// A loss notice while sending at `sending_bps`; `window` is how long
    /// after a first notice others belong to the same event (the RTT).
    pub fn on_loss(&mut self, now: SimTime, sending_bps: f64, window: Option<SimTime>) {
        if let Some(a) = self.a_bps {
            let w = self.cfg.bias_weight;
            self.bias_bps = (1.0 - w) * self.bias_bps + w * (a - sending_bps);
        }
        if self.event_until.is_some_and(|t| now < t) {
            return;
        }
        self.events += 1;
        self.event_until = Some(now + window.unwrap_or(self.cfg.event_window));
        self.state = State::Decrease;
        self.short_until = Some(now + self.cfg.short_timer);
        self.long_until = None;
    }

    /// The GOP starting at `now`, `gop` long: timers, then the rate rule of
    /// the state. Returns the new target.
    pub fn on_gop(&mut self, now: SimTime, gop: SimTime) -> f64 {
        if self.state == State::Decrease && self.short_until.is_some_and(|t| now >= t) {
            self.state = State::Flat;
            let max = self.cfg.long_timer_max_gops.max(1);
            let n = 1 + ((uniform(&mut self.rng) * max as f64) as u32).min(max - 1);
            self.long_until = Some(now + SimTime::from_nanos(gop.as_nanos() * n as u64));
        }
        if self.state == State::Flat && self.long_until.is_some_and(|t| now >= t) {
            self.state = State::Increase;
        }
        let Some(a) = self.a_bps else {
            return self.target_bps;
        };
        let slope = match self.a_prev {
            Some((t, prev)) if now > t => (a - prev) / (now - t).as_secs_f64(),
            _ => 0.0,
        };
        self.a_prev = Some((now, a));
        let (eps, kappa, t_gop) = (self.cfg.eps_bps, self.cfg.kappa_bps, gop.as_secs_f64());
        let a_adj = a - self.bias_bps;
        let step = |s: f64| eps.max(kappa.min(s * t_gop));
        match self.state {
            State::Increase if self.target_bps <= a_adj => self.target_bps += step(slope),
            State::Increase if slope >= 0.0 => self.target_bps += eps,
            State::Decrease if self.target_bps >= a_adj => self.target_bps -= step(-slope),
            State::Decrease if slope <= 0.0 => self.target_bps -= eps,
            _ => {}
        }
        self.target_bps = self.target_bps.max(self.cfg.min_rate_bps);
        self.target_series.push_change(now, self.target_bps);
        self.target_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }
    const GOP: u64 = 267;

    /// Round steps and timers for the arithmetic below: eps 10 kbit/s,
    /// kappa 100 kbit/s, short timer 533 ms (two GOPs), FLAT 1-4 GOPs.
    fn cfg() -> PpaccConfig {
        PpaccConfig {
            eps_bps: 10e3,
            kappa_bps: 100e3,
            short_timer: ms(533),
            long_timer_max_gops: 4,
            ..PpaccConfig::default()
        }
    }

    fn ctl(initial: f64) -> PpaccControl {
        PpaccControl::new(cfg(), initial, RngStreams::new(1, 0).stream("p"))
    }

    #[test]
    fn increase_follows_the_estimate_within_eps_and_kappa() {
        let mut c = ctl(200e3);
        c.on_feedback(1e6);
        // First GOP: no slope yet: the smallest step.
        assert_eq!(c.on_gop(ms(0), ms(GOP)), 210e3);
        // A rises 150 kbit/s over one GOP: dA/dt t_GOP = 150 k, capped at
        // kappa = 100 k.
        c.on_feedback(1.15e6);
        assert!((c.on_gop(ms(GOP), ms(GOP)) - 310e3).abs() < 1e-6);
        // A rises 30 k: step 30 k.
        c.on_feedback(1.18e6);
        assert!((c.on_gop(ms(2 * GOP), ms(GOP)) - 340e3).abs() < 1e-6);
        // Above A_adj: eps while A still rises, nothing when it falls.
        let mut c = ctl(900e3);
        c.on_feedback(500e3);
        c.on_gop(ms(0), ms(GOP));
        c.on_feedback(510e3);
        assert!((c.on_gop(ms(GOP), ms(GOP)) - 920e3).abs() < 1e-6);
        c.on_feedback(400e3);
        assert!((c.on_gop(ms(2 * GOP), ms(GOP)) - 920e3).abs() < 1e-6);
    }

    #[test]
    fn a_congestion_event_moves_to_decrease_which_mirrors_increase() {
        let mut c = ctl(600e3);
        c.on_feedback(500e3);
        c.on_loss(ms(0), 600e3, None);
        assert_eq!((c.state, c.events), (State::Decrease, 1));
        // Bias: 1/4 of (500 k - 600 k); A_adj = 525 k.
        assert!((c.bias_bps() + 25e3).abs() < 1e-6);
        // First GOP, no slope yet: eps down.
        assert!((c.on_gop(ms(0), ms(GOP)) - 590e3).abs() < 1e-6);
        // A falls 60 k over a GOP: the target (590 k >= A_adj 465 k) falls
        // by 60 k.
        c.on_feedback(440e3);
        assert!((c.on_gop(ms(GOP), ms(GOP)) - 530e3).abs() < 1e-6);
        // A second notice within the event window is the same event.
        c.on_loss(ms(50), 600e3, None);
        assert_eq!(c.events, 1);
        // Below A_adj while A falls: eps down. (310 k after a first INCREASE
        // GOP; bias 1/4 of 200 k; A_adj 440 k.)
        let mut c = ctl(300e3);
        c.on_feedback(500e3);
        assert!((c.on_gop(ms(0), ms(GOP)) - 310e3).abs() < 1e-6);
        c.on_loss(ms(10), 300e3, None);
        c.on_feedback(490e3);
        assert!((c.on_gop(ms(GOP), ms(GOP)) - 300e3).abs() < 1e-6);
        // Below A_adj while A rises: the target holds.
        c.on_feedback(560e3);
        assert!((c.on_gop(ms(2 * GOP), ms(GOP)) - 300e3).abs() < 1e-6);
    }

    #[test]
    fn flat_holds_for_a_drawn_number_of_gops_from_one_to_the_maximum() {
        let mut seen = Vec::new();
        for seed in 0..60 {
            let mut c = PpaccControl::new(cfg(), 400e3, RngStreams::new(seed, 0).stream("p"));
            c.on_feedback(500e3);
            c.on_loss(ms(0), 400e3, None);
            let mut k = 2;
            c.on_gop(ms(k * GOP), ms(GOP));
            assert_eq!(c.state, State::Flat);
            let mut gops = 0;
            while c.state == State::Flat {
                k += 1;
                gops += 1;
                c.on_gop(ms(k * GOP), ms(GOP));
            }
            seen.push(gops);
        }
        // Uniform on 1..=4: every length drawn, mean 2.5.
        for n in 1..=4 {
            assert!(seen.contains(&n), "{n} GOPs never drawn: {seen:?}");
        }
        assert!(seen.iter().all(|&n| (1..=4).contains(&n)));
        let mean = seen.iter().sum::<u64>() as f64 / seen.len() as f64;
        assert!((mean - 2.5).abs() < 0.5, "{mean}");
    }

    #[test]
    fn the_short_timer_leads_to_flat_and_the_long_timer_back_to_increase() {
        let mut c = ctl(400e3);
        c.on_feedback(500e3);
        c.on_loss(ms(0), 400e3, None);
        c.on_gop(ms(GOP), ms(GOP));
        assert_eq!(c.state, State::Decrease, "533 ms not yet over");
        let t = c.on_gop(ms(2 * GOP), ms(GOP));
        assert_eq!(c.state, State::Flat);
        // FLAT holds the rate for 1-4 GOPs, then INCREASE.
        let mut flat_gops = 1;
        loop {
            let v = c.on_gop(ms((2 + flat_gops) * GOP), ms(GOP));
            if c.state != State::Flat {
                break;
            }
            assert_eq!(v, t);
            flat_gops += 1;
            assert!(flat_gops <= 4);
        }
        assert_eq!(c.state, State::Increase);
        // A congestion event in FLAT goes back to DECREASE.
        let mut c = ctl(400e3);
        c.on_feedback(500e3);
        c.on_loss(ms(0), 400e3, None);
        c.on_gop(ms(600), ms(GOP));
        assert_eq!(c.state, State::Flat);
        c.on_loss(ms(700), 400e3, None);
        assert_eq!(c.state, State::Decrease);
    }

    #[test]
    fn the_target_never_falls_below_the_floor() {
        let mut c = ctl(70e3);
        c.on_feedback(0.0);
        c.on_loss(ms(0), 70e3, None);
        for k in 0..5 {
            c.on_gop(ms(k * 100), ms(GOP));
        }
        assert_eq!(c.target_bps(), 64e3);
    }
}
