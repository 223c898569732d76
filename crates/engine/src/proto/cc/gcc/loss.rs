//! The loss-based controller (draft-ietf-rmcat-gcc-02 6): the fraction
//! p of packets reported lost sets As = As (1 - 0.5 p) above `high`
//! (10%), raises As below `low` (2%), else As holds; As never exceeds
//! the delay-based estimate. The draft acts on every feedback message;
//! per-packet feedback comes every few tens of milliseconds with a
//! handful of packets, where one loss would read as 20%, so reports are
//! pooled until they cover `min_packets` (libwebrtc's 20) and p is taken
//! over those. A decrease waits `decrease_interval` plus an RTT after the
//! last (libwebrtc's kBweDecreaseInterval, 300 ms): one episode of losses
//! spans several pools, and the draft's reports, a second apart, would
//! have cut once for it; a pool over `high` within that time holds As.
//!
//! While the last pool's fraction is under `low`, every report sets As
//! to `increase` times the least As of the last `increase_window` plus
//! 1 kbit/s (libwebrtc: 1.08 over the last second, kBweIncreaseInterval):
//! at most `increase` a window, however many reports come in it, as the
//! draft's reports a second apart raised As once a second. With no
//! window, As rises `increase` times on every pool under `low` (the
//! draft's rule applied per pool: at 100 packets/s, five times a second).

use std::collections::VecDeque;

use crate::sim::SimTime;

/// libwebrtc's extra on every rise, so that a low rate does not stall.
const RISE_EXTRA_BPS: f64 = 1000.0;

pub struct LossBased {
    pub as_bps: f64,
    min_packets: u64,
    high: f64,
    low: f64,
    increase: f64,
    increase_window: SimTime,
    /// (time, As) at each report within the window, As rising from the
    /// front: the front is the window's least (a sliding minimum).
    history: VecDeque<(SimTime, f64)>,
    decrease_interval: SimTime,
    last_decrease: Option<SimTime>,
    received: u64,
    lost: u64,
    /// The last interval's loss fraction.
    pub last_p: f64,
}

impl LossBased {
    pub fn new(
        start_bps: f64,
        min_packets: u64,
        (high, low, increase): (f64, f64, f64),
        (increase_window, decrease_interval): (SimTime, SimTime),
    ) -> Self {
        LossBased {
            as_bps: start_bps,
            min_packets,
            high,
            low,
            increase,
            increase_window,
            history: VecDeque::new(),
            decrease_interval,
            last_decrease: None,
            received: 0,
            lost: 0,
            last_p: 0.0,
        }
    }

    /// A feedback message at `now` reported `received` and `lost`
    /// packets; `a_hat_bps` is the delay-based estimate, `rtt` the
    /// round-trip time. Returns As.
    pub fn on_report(
        &mut self,
        now: SimTime,
        received: u64,
        lost: u64,
        a_hat_bps: f64,
        rtt: SimTime,
    ) -> f64 {
        self.received += received;
        self.lost += lost;
        self.remember(now);
        let n = self.received + self.lost;
        if n >= self.min_packets.max(1) {
            let p = self.lost as f64 / n as f64;
            self.last_p = p;
            if p > self.high {
                // No interval: no wait at all (the draft).
                let wait = if self.decrease_interval == SimTime::ZERO {
                    SimTime::ZERO
                } else {
                    self.decrease_interval + rtt
                };
                if self
                    .last_decrease
                    .is_none_or(|t| now.saturating_sub(t) >= wait)
                {
                    self.as_bps *= 1.0 - 0.5 * p;
                    self.last_decrease = Some(now);
                }
            } else if p < self.low && self.increase_window == SimTime::ZERO {
                self.as_bps *= self.increase;
            }
            (self.received, self.lost) = (0, 0);
        }
        // libwebrtc updates on every report (and on a timer) with the last
        // pool's fraction, so As keeps up with the window as it slides
        // rather than waiting for the next pool.
        if self.increase_window > SimTime::ZERO && self.last_p < self.low {
            self.as_bps = self.history[0].1 * self.increase + RISE_EXTRA_BPS;
        }
        self.as_bps = self.as_bps.min(a_hat_bps);
        self.as_bps
    }

    /// As set to `bps` at `now` (a probe's result, or the start phase's
    /// delay-based estimate: libwebrtc's SetSendBitrate), the window's
    /// history starting afresh from it.
    pub fn reset(&mut self, now: SimTime, bps: f64) {
        self.as_bps = bps;
        self.history.clear();
        self.remember(now);
    }

    /// As at `now` into the window's sliding minimum (libwebrtc records
    /// it before each update); entries older than the window leave, so
    /// the history holds at most the reports of one window.
    fn remember(&mut self, now: SimTime) {
        if self.increase_window == SimTime::ZERO {
            return;
        }
        while self
            .history
            .front()
            .is_some_and(|&(t, _)| now.saturating_sub(t) >= self.increase_window)
        {
            self.history.pop_front();
        }
        while self.history.back().is_some_and(|&(_, x)| x >= self.as_bps) {
            self.history.pop_back();
        }
        self.history.push_back((now, self.as_bps));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn new(min_packets: u64, interval_ms: u64) -> LossBased {
        LossBased::new(
            1e6,
            min_packets,
            (0.1, 0.02, 1.05),
            (SimTime::ZERO, ms(interval_ms)),
        )
    }

    fn windowed(window_ms: u64) -> LossBased {
        LossBased::new(1e6, 20, (0.1, 0.02, 1.08), (ms(window_ms), ms(300)))
    }

    #[test]
    fn the_drafts_three_bands() {
        let mut l = new(100, 0);
        let rtt = ms(100);
        // Pooled until 100 packets are covered: 20% lost in all.
        assert_eq!(l.on_report(ms(0), 40, 10, 1e9, rtt), 1e6);
        let x = l.on_report(ms(50), 40, 10, 1e9, rtt);
        assert!((x - 1e6 * 0.9).abs() < 1e-6 && (l.last_p - 0.2).abs() < 1e-12);
        // 5%: holds.
        assert_eq!(l.on_report(ms(200), 95, 5, 1e9, rtt), x);
        // 1%: up 5%.
        let y = l.on_report(ms(300), 99, 1, 1e9, rtt);
        assert!((y - x * 1.05).abs() < 1e-6);
        // Never above the delay-based estimate.
        assert_eq!(l.on_report(ms(400), 10, 0, 5e5, rtt), 5e5);
    }

    /// libwebrtc's pace of decreases: a pool over 10% lost within 300 ms
    /// plus the RTT (100 ms) of the last decrease holds As; at 400 ms it
    /// cuts again. With no interval (the draft) every such pool cuts, the
    /// RTT apart or not.
    #[test]
    fn decreases_wait_the_interval_and_an_rtt() {
        let rtt = ms(100);
        let mut l = new(20, 300);
        let cut = |x: f64| x * (1.0 - 0.5 * 0.25);
        assert_eq!(l.on_report(ms(1000), 15, 5, 1e9, rtt), cut(1e6));
        assert_eq!(l.on_report(ms(1100), 15, 5, 1e9, rtt), cut(1e6));
        assert_eq!(l.on_report(ms(1399), 15, 5, 1e9, rtt), cut(1e6));
        assert_eq!(l.on_report(ms(1400), 15, 5, 1e9, rtt), cut(cut(1e6)));
        // The pool that held was spent: the next 20 packets are a pool of their own.
        assert_eq!(l.on_report(ms(1500), 10, 0, 1e9, rtt), cut(cut(1e6)));
        let mut draft = new(20, 0);
        draft.on_report(ms(1000), 15, 5, 1e9, rtt);
        assert_eq!(draft.on_report(ms(1001), 15, 5, 1e9, rtt), cut(cut(1e6)));
    }

    /// The bands are open at their ends (the draft: "more than 10%",
    /// "less than 2%"): exactly 2% or 10% lost holds As.
    #[test]
    fn the_band_edges_hold() {
        let mut l = new(100, 0);
        assert_eq!(l.on_report(ms(0), 98, 2, 1e9, ms(100)), 1e6);
        assert_eq!(l.last_p, 0.02);
        assert_eq!(l.on_report(ms(100), 90, 10, 1e9, ms(100)), 1e6);
        assert_eq!(l.last_p, 0.1);
    }

    /// libwebrtc's rise: 1.08 times the least As of the last second, plus
    /// 1 kbit/s, however many pools come in that second.
    #[test]
    fn rises_are_paced_by_the_window() {
        let rtt = ms(100);
        let mut l = windowed(1000);
        // Five clean pools in a second: each rises to 1.08 x 1e6 + 1000,
        // the least As in the window staying the 1e6 of the first.
        for t in [0, 200, 400, 600, 800] {
            assert_eq!(l.on_report(ms(t), 20, 0, 1e9, rtt), 1.08e6 + 1000.0);
        }
        // At 1 s the first entry leaves: the least is now 1.08e6 + 1000.
        let second = (1.08e6 + 1000.0) * 1.08 + 1000.0;
        assert_eq!(l.on_report(ms(1000), 20, 0, 1e9, rtt), second);
        // After a cut As holds until a clean pool, then rises from the
        // cut: the window's least.
        let cut = second * (1.0 - 0.5 * 0.25);
        assert_eq!(l.on_report(ms(1100), 15, 5, 1e9, rtt), cut);
        assert_eq!(l.on_report(ms(1150), 10, 0, 1e9, rtt), cut);
        assert_eq!(l.on_report(ms(1200), 10, 0, 1e9, rtt), cut * 1.08 + 1000.0);
        // Capped by the delay-based estimate, and the cap is what the
        // window remembers.
        assert_eq!(l.on_report(ms(1300), 20, 0, 5e5, rtt), 5e5);
        assert_eq!(l.on_report(ms(1400), 20, 0, 1e9, rtt), 5e5 * 1.08 + 1000.0);
    }

    /// A report that completes no pool still moves As with the window,
    /// on the last pool's fraction: up while it was clean, held while it
    /// was between the bands.
    #[test]
    fn reports_between_pools_follow_the_window() {
        let rtt = ms(100);
        let mut l = windowed(1000);
        assert_eq!(l.on_report(ms(0), 20, 0, 1.0e6, rtt), 1.0e6);
        // A capped rise: As is the delay-based 1e6; then the cap lifts.
        assert_eq!(l.on_report(ms(50), 1, 0, 2e6, rtt), 1.08e6 + 1000.0);
        // 5% lost: As holds on this report and the ones after it.
        let held = l.on_report(ms(100), 19, 1, 2e6, rtt);
        assert_eq!(held, 1.08e6 + 1000.0);
        assert_eq!(l.on_report(ms(150), 1, 0, 2e6, rtt), held);
        // Exactly 2% (the band is open at its end): held too.
        let mut edge = windowed(1000);
        assert_eq!(edge.on_report(ms(0), 98, 2, 2e6, rtt), 1e6);
        assert_eq!(edge.on_report(ms(50), 1, 0, 2e6, rtt), 1e6);
    }

    /// Without a window every clean pool multiplies As (the draft's rule
    /// per pool): five pools in a second give 1.05^5.
    #[test]
    fn without_a_window_every_pool_rises() {
        let mut l = new(20, 300);
        let mut x = 1e6;
        for t in [0, 200, 400, 600, 800] {
            x *= 1.05;
            assert!((l.on_report(ms(t), 20, 0, 1e9, ms(100)) - x).abs() < 1e-6);
        }
        assert!(l.history.is_empty());
    }

    /// The window's history holds only its own reports, however long the
    /// run.
    #[test]
    fn the_history_is_bounded_by_the_window() {
        let mut l = windowed(1000);
        for i in 0..10_000u64 {
            l.on_report(ms(50 * i), 20, u64::from(i % 7 == 0) * 10, 1e9, ms(100));
            assert!(l.history.len() <= 20, "{}", l.history.len());
        }
    }
}
