//! The receiver-driven five-scale control of the media-scaling study, as a
//! plain state machine: it takes arrivals and time-outs with the time and
//! answers with the scale to request, if it changed.
//!
//! - A loss is a data packet with a sequence number above the one expected
//!   (a frame sent as several packets counts as lost when any of them is),
//!   or no packet for the time-out.
//! - On a loss the scale is halved (integer division). Losses within one
//!   control RTT of a decrease belong to the same congestion (the packets
//!   were sent at the old rate) and are not acted on (`holdoff`).
//! - After one control RTT without loss since the last checkpoint (the
//!   last scale change, or the last loss acted on), the scale rises by one.
//! - The control RTT is max(measured RTT, longest frame interval): the
//!   study's text breaks off at "the Round Trip Time (RTT) of the
//!   connection is greater than the longest possible frame transmission
//!   interval"; this is our reading of it. The time-out is
//!   `timeout_factor` control RTTs (queueing jitter alone would trip a
//!   time-out of exactly one frame interval).
//! - The RTT is measured from the sender's echo of the last request's send
//!   time minus the time the sender held it (RFC 3550's LSR/DLSR idea),
//!   smoothed with gain 1/8; until a first sample the control RTT is the
//!   longest frame interval.

use crate::sim::SimTime;

use super::policy::MAX_SCALE;

#[derive(Clone, Debug)]
pub struct ControlConfig {
    pub longest_interval: SimTime,
    pub timeout_factor: f64,
    pub holdoff: bool,
    pub initial_scale: u8,
}

/// Counters reported at the end of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ControlCounts {
    /// Packets found missing from sequence gaps.
    pub missing_packets: u64,
    /// Loss indications (gaps and time-outs), acted on or not.
    pub loss_indications: u64,
    pub timeouts: u64,
    pub decreases: u64,
    pub increases: u64,
}

#[derive(Clone, Debug)]
pub struct ScaleControl {
    cfg: ControlConfig,
    scale: u8,
    srtt: Option<SimTime>,
    expected_seq: u64,
    checkpoint: SimTime,
    holdoff_until: SimTime,
    /// No packet by this time is a time-out (None before the first packet).
    deadline: Option<SimTime>,
    pub counts: ControlCounts,
}

impl ScaleControl {
    pub fn new(cfg: ControlConfig) -> Self {
        ScaleControl {
            scale: cfg.initial_scale,
            cfg,
            srtt: None,
            expected_seq: 0,
            checkpoint: SimTime::ZERO,
            holdoff_until: SimTime::ZERO,
            deadline: None,
            counts: ControlCounts::default(),
        }
    }

    pub fn scale(&self) -> u8 {
        self.scale
    }
    pub fn srtt(&self) -> Option<SimTime> {
        self.srtt
    }
    pub fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }

    /// max(measured RTT, longest frame interval).
    pub fn control_rtt(&self) -> SimTime {
        self.srtt
            .unwrap_or(SimTime::ZERO)
            .max(self.cfg.longest_interval)
    }

    fn timeout(&self) -> SimTime {
        SimTime::from_secs_f64(self.control_rtt().as_secs_f64() * self.cfg.timeout_factor)
    }

    /// An RTT sample (from an echo).
    pub fn rtt_sample(&mut self, rtt: SimTime) {
        self.srtt = Some(match self.srtt {
            None => rtt,
            Some(s) => SimTime::from_nanos((7 * s.as_nanos() + rtt.as_nanos()) / 8),
        });
    }

    /// The control starts counting at `now` (the flow's start).
    pub fn start(&mut self, now: SimTime) {
        self.checkpoint = now;
    }

    /// A data packet `seq` arrived; returns the new scale to request.
    pub fn on_packet(&mut self, now: SimTime, seq: u64) -> Option<u8> {
        let gap = seq.saturating_sub(self.expected_seq);
        self.expected_seq = self.expected_seq.max(seq + 1);
        let change = if gap > 0 {
            self.counts.missing_packets += gap;
            self.loss(now)
        } else {
            self.maybe_increase(now)
        };
        self.deadline = Some(now + self.timeout());
        change
    }

    /// The time-out check at `now`: a loss if nothing arrived in time.
    pub fn on_timer(&mut self, now: SimTime) -> Option<u8> {
        match self.deadline {
            Some(d) if now >= d => {
                self.counts.timeouts += 1;
                let change = self.loss(now);
                self.deadline = Some(now + self.timeout());
                change
            }
            _ => None,
        }
    }

    fn loss(&mut self, now: SimTime) -> Option<u8> {
        self.counts.loss_indications += 1;
        if self.cfg.holdoff && now < self.holdoff_until {
            return None;
        }
        let old = self.scale;
        self.scale /= 2;
        self.checkpoint = now;
        self.holdoff_until = now + self.control_rtt();
        self.counts.decreases += 1;
        (self.scale != old).then_some(self.scale)
    }

    fn maybe_increase(&mut self, now: SimTime) -> Option<u8> {
        if self.scale >= MAX_SCALE || now < self.checkpoint + self.control_rtt() {
            return None;
        }
        self.scale += 1;
        self.checkpoint = now;
        self.counts.increases += 1;
        Some(self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn control(longest_ms: u64, holdoff: bool) -> ScaleControl {
        let mut c = ScaleControl::new(ControlConfig {
            longest_interval: ms(longest_ms),
            timeout_factor: 1.5,
            holdoff,
            initial_scale: 0,
        });
        c.start(SimTime::ZERO);
        c
    }

    #[test]
    fn one_step_up_per_loss_free_control_rtt() {
        let mut c = control(40, true);
        // Packets every 10 ms; the control RTT is 40 ms (no RTT sample).
        let mut ups = Vec::new();
        for k in 0..20u64 {
            if let Some(s) = c.on_packet(ms(10 * k), k) {
                ups.push((10 * k, s));
            }
        }
        assert_eq!(ups, vec![(40, 1), (80, 2), (120, 3), (160, 4)]);
        assert_eq!(c.counts.increases, 4);
    }

    #[test]
    fn a_gap_halves_and_losses_within_a_control_rtt_do_not_halve_again() {
        let mut c = control(40, true);
        for k in 0..17u64 {
            c.on_packet(ms(10 * k), k);
        }
        assert_eq!(c.scale(), 4);
        assert_eq!(c.on_packet(ms(170), 18), Some(2), "packet 17 missing");
        assert_eq!(
            c.on_packet(ms(180), 20),
            None,
            "19 missing: same congestion"
        );
        assert_eq!(c.scale(), 2);
        assert_eq!(c.counts.missing_packets, 2);
        assert_eq!(c.counts.loss_indications, 2);
        // Beyond the hold-off (40 ms after 170) a new gap halves again.
        assert_eq!(c.on_packet(ms(210), 22), Some(1));
        let mut no_holdoff = control(40, false);
        for k in 0..17u64 {
            no_holdoff.on_packet(ms(10 * k), k);
        }
        no_holdoff.on_packet(ms(170), 18);
        assert_eq!(no_holdoff.on_packet(ms(180), 20), Some(1));
    }

    #[test]
    fn the_increase_waits_a_control_rtt_after_a_decrease() {
        let mut c = control(40, true);
        for k in 0..9u64 {
            c.on_packet(ms(10 * k), k); // scale 2 at 80 ms
        }
        assert_eq!(c.on_packet(ms(90), 10), Some(1));
        for k in 11..14u64 {
            assert_eq!(c.on_packet(ms(10 * (k - 1)), k), None, "before 130 ms");
        }
        assert_eq!(c.on_packet(ms(130), 14), Some(2));
    }

    #[test]
    fn a_silent_sender_times_out_after_factor_times_the_control_rtt() {
        let mut c = control(300, true);
        c.rtt_sample(ms(60)); // below the longest interval: 300 ms rules
        assert_eq!(c.control_rtt(), ms(300));
        assert_eq!(c.on_timer(ms(1000)), None, "no packet yet: no time-out");
        c.on_packet(ms(0), 0);
        assert_eq!(c.deadline(), Some(ms(450)));
        assert_eq!(c.on_timer(ms(449)), None);
        assert_eq!(
            c.on_timer(ms(450)),
            None,
            "a loss at scale 0 changes nothing"
        );
        assert_eq!((c.counts.timeouts, c.counts.decreases), (1, 1));
        assert_eq!(c.deadline(), Some(ms(900)));
    }

    #[test]
    fn rtt_samples_are_smoothed_with_gain_one_eighth() {
        let mut c = control(10, true);
        c.rtt_sample(ms(80));
        assert_eq!(c.srtt(), Some(ms(80)));
        c.rtt_sample(ms(160));
        assert_eq!(c.srtt(), Some(ms(90)));
        assert_eq!(c.control_rtt(), ms(90));
    }
}
