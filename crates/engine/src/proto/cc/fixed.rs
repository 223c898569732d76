//! The smallest controller: a fixed rate. Packets leave `bytes * 8 /
//! rate_bps` apart, whatever the network says; the receiver half sends no
//! feedback. A baseline for the adaptive controllers, and the worked
//! example of adding a controller (docs/architecture.md).

use super::{CcMedia, CcModel, CcSite, Departure, FeedbackReceiver, RateController, Stamp};
use crate::net::Payload;
use crate::scenario::check::Checker;
use crate::sim::{Series, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

/// A fixed sending rate, with no feedback.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixedSpec {
    /// The rate packets are paced at, bit/s (IP headers included).
    pub rate_bps: f64,
}

impl CcModel for FixedSpec {
    fn validate(&self, path: &str, _media: CcMedia, c: &mut Checker) {
        c.positive(format_args!("{path}.rate_bps"), self.rate_bps);
    }
    fn build(&self, _site: &CcSite<'_>) -> (Box<dyn RateController>, Box<dyn FeedbackReceiver>) {
        let rate = Fixed {
            rate_bps: self.rate_bps,
            sent: 0,
            series: Series::default(),
        };
        (Box::new(rate), Box::new(NoFeedback))
    }
    fn own_feedback(&self) -> bool {
        false
    }
}

/// The sending half: paces at `rate_bps`.
pub struct Fixed {
    rate_bps: f64,
    sent: u64,
    series: Series,
}

impl RateController for Fixed {
    fn start(&mut self, now: SimTime, series_rows: usize) {
        self.series.set_rows(series_rows);
        self.series.push(now, self.rate_bps);
    }
    fn on_send(&mut self, now: SimTime, d: Departure) -> (Stamp, SimTime) {
        self.sent += 1;
        d.at_rate(now, self.sent - 1, self.rate_bps)
    }
    fn on_feedback(&mut self, _now: SimTime, _fb: &Payload, _next: SimTime) -> Option<SimTime> {
        None
    }
    fn target_bps(&self) -> f64 {
        self.rate_bps
    }
    fn packets(&self) -> u64 {
        self.sent
    }
    fn rate_series(&self) -> Vec<(SimTime, f64)> {
        self.series.points().to_vec()
    }
}

/// The receiving half of a controller that needs no feedback.
pub struct NoFeedback;

impl FeedbackReceiver for NoFeedback {
    fn on_data(&mut self, _now: SimTime, _s: &Stamp, _bytes: u32, _out: &mut Vec<Payload>) {}
    fn deadline(&self) -> Option<SimTime> {
        None
    }
    fn on_timer(&mut self, _now: SimTime, _out: &mut Vec<Payload>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    #[test]
    fn packets_leave_their_serialisation_time_at_the_rate_apart() {
        let rng = RngStreams::new(1, 0);
        let site = CcSite::alone(&rng, 1000);
        let (mut tx, mut rx) = FixedSpec { rate_bps: 1e6 }.build(&site);
        tx.start(SimTime::ZERO, 10);
        let d = |due| Departure {
            bytes: 1000,
            due,
            next_same_size: false,
        };
        let (s0, next) = tx.on_send(SimTime::ZERO, d(SimTime::ZERO));
        assert_eq!((s0.seq, next), (0, SimTime::from_millis(8)));
        // Sent late: the gap counts from when it left.
        let (s1, next) = tx.on_send(SimTime::from_millis(10), d(next));
        assert_eq!((s1.seq, next), (1, SimTime::from_millis(18)));
        assert_eq!((tx.packets(), tx.target_bps()), (2, 1e6));
        let mut out = Vec::new();
        rx.on_data(SimTime::from_millis(20), &s1, 1000, &mut out);
        assert!(out.is_empty() && rx.deadline().is_none());
        // Whatever comes back changes nothing, and the controller does
        // not return feedback of its own (a session's per-packet feedback
        // may go with it).
        let fb = Payload::NONE;
        assert_eq!(
            tx.on_feedback(SimTime::from_millis(30), &fb, SimTime::from_millis(40)),
            None
        );
        assert!(!FixedSpec { rate_bps: 1e6 }.own_feedback());
    }
}
