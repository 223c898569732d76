//! PPACC's two ends as state machines around the estimator and the
//! control: the sender paces at the target rate and sends packet pairs;
//! the receiver measures pairs, reports the available bandwidth
//! periodically and each loss at once.
//!
//! - Pairs: when the packet about to leave has an equal-sized successor
//!   ready, the two leave as a pair: the first at its paced time, the
//!   second s / Cb later (the input gap of the probe-gap model). The first
//!   of a pair keeps the paced spacing from the packet before it.
//! - The receiver treats a second-of-pair packet that directly follows its
//!   first (consecutive sequence numbers) as a pair sample; any gap in the
//!   sequence numbers is a loss, notified at once (one notice per gap).
//! - Feedback every `feedback_period` carries the smoothed estimate and the
//!   echo of the last data packet's send time with the time held, which
//!   gives the sender an RTT sample (for the congestion event window).

use super::{PairEstimator, PpaccConfig, PpaccControl};
use crate::sim::{SimRng, SimTime};

/// A data packet's PPACC header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairTag {
    pub seq: u64,
    /// 0 alone, 1 first of a pair, 2 second of a pair.
    pub pair: u8,
}

/// What the receiver sends back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Report {
    Estimate {
        a_bps: f64,
        t_recvdata: SimTime,
        t_delay: SimTime,
    },
    Loss {
        first_missing: u64,
    },
}

impl crate::net::AppPayload for Report {
    crate::payload_eq!();
}

pub struct PpaccSender {
    /// Pace at the target rate (`PpaccConfig::shaping`).
    shaping: bool,
    /// Pace at this times the target (`PpaccConfig::pacing_factor`).
    pacing_factor: f64,
    /// Unshaped, keep s / Cb between packets (`PpaccConfig::capacity_spacing`).
    capacity_spacing: bool,
    pub control: PpaccControl,
    cb_bps: f64,
    next_seq: u64,
    /// The second of a pair is due at this time.
    pair_second_at: Option<SimTime>,
    rtt: Option<SimTime>,
    /// Bits sent since the last rate measurement, and since when.
    sent_bits: f64,
    since: SimTime,
    sending_bps: f64,
    pub pairs_sent: u64,
}

impl PpaccSender {
    pub fn new(cfg: PpaccConfig, cb_bps: f64, initial_bps: f64, rng: SimRng) -> Self {
        PpaccSender {
            shaping: cfg.shaping,
            pacing_factor: cfg.pacing_factor,
            capacity_spacing: cfg.capacity_spacing,
            control: PpaccControl::new(cfg, initial_bps, rng),
            cb_bps,
            next_seq: 0,
            pair_second_at: None,
            rtt: None,
            sent_bits: 0.0,
            since: SimTime::ZERO,
            sending_bps: 0.0,
            pairs_sent: 0,
        }
    }

    pub fn target_bps(&self) -> f64 {
        self.control.target_bps()
    }

    /// Time between packets of `bytes` at the pacing factor times the
    /// target rate (unshaped: s / Cb with capacity spacing, else none).
    pub fn interval(&self, bytes: u32) -> SimTime {
        if !self.shaping {
            return if self.capacity_spacing {
                self.pair_gap(bytes)
            } else {
                SimTime::ZERO
            };
        }
        SimTime::from_secs_f64(
            bytes as f64 * 8.0 / (self.pacing_factor * self.control.target_bps()),
        )
    }

    /// The packet of `bytes` leaves now; `next_equal` says whether the
    /// packet after it has the same size and is ready. Returns its tag and
    /// when the next packet may leave.
    pub fn on_send(&mut self, now: SimTime, bytes: u32, next_equal: bool) -> (PairTag, SimTime) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.control.packets += 1;
        self.account(now, bytes);
        let (interval, gap) = (self.interval(bytes), self.pair_gap(bytes));
        if let Some(second_at) = self.pair_second_at.take() {
            // The second of a pair: the pacing resumes two intervals after
            // the first, so the pair costs what two paced packets do.
            let first_at = second_at.saturating_sub(gap);
            return (
                PairTag { seq, pair: 2 },
                (first_at + interval + interval).max(now),
            );
        }
        if next_equal {
            self.pair_second_at = Some(now + gap);
            self.pairs_sent += 1;
            return (PairTag { seq, pair: 1 }, now + gap);
        }
        (PairTag { seq, pair: 0 }, now + interval)
    }

    /// The input gap of a pair of `bytes` packets: s / Cb.
    fn pair_gap(&self, bytes: u32) -> SimTime {
        SimTime::from_secs_f64(bytes as f64 * 8.0 / self.cb_bps)
    }

    /// The measured sending rate, over windows of at least 100 ms.
    fn account(&mut self, now: SimTime, bytes: u32) {
        self.sent_bits += bytes as f64 * 8.0;
        let span = now.saturating_sub(self.since).as_secs_f64();
        if span >= 0.1 {
            self.sending_bps = self.sent_bits / span;
            self.sent_bits = 0.0;
            self.since = now;
        }
    }

    /// A report from the receiver.
    pub fn on_report(&mut self, now: SimTime, r: &Report) {
        match *r {
            Report::Estimate {
                a_bps,
                t_recvdata,
                t_delay,
            } => {
                self.control.on_feedback(a_bps);
                let sample = now.saturating_sub(t_recvdata).saturating_sub(t_delay);
                self.rtt = Some(match self.rtt {
                    None => sample,
                    Some(r) => SimTime::from_nanos((7 * r.as_nanos() + sample.as_nanos()) / 8),
                });
            }
            Report::Loss { .. } => {
                let rate = if self.sending_bps > 0.0 {
                    self.sending_bps
                } else {
                    self.control.target_bps()
                };
                self.control.on_loss(now, rate, self.rtt);
            }
        }
    }

    pub fn rtt(&self) -> Option<SimTime> {
        self.rtt
    }
}

pub struct PpaccReceiver {
    pub estimator: PairEstimator,
    expected: u64,
    /// The last packet: its tag, send time and arrival.
    last: Option<(PairTag, SimTime, SimTime)>,
    feedback_period: SimTime,
    next_feedback: Option<SimTime>,
    pub losses: u64,
}

impl PpaccReceiver {
    pub fn new(cfg: &PpaccConfig, cb_bps: f64, feedback_period: SimTime) -> Self {
        PpaccReceiver {
            estimator: PairEstimator::new(cfg, cb_bps),
            expected: 0,
            last: None,
            feedback_period,
            next_feedback: None,
            losses: 0,
        }
    }

    pub fn deadline(&self) -> Option<SimTime> {
        self.next_feedback
    }

    /// A data packet of `bits` sent at `sent_at` arrived; reports to send.
    pub fn on_data(
        &mut self,
        now: SimTime,
        tag: PairTag,
        sent_at: SimTime,
        bits: f64,
    ) -> Vec<Report> {
        let mut out = Vec::new();
        if tag.seq > self.expected {
            self.losses += tag.seq - self.expected;
            out.push(Report::Loss {
                first_missing: self.expected,
            });
        }
        if tag.pair == 2 {
            if let Some((prev, _, at)) = self.last {
                if prev.pair == 1 && prev.seq + 1 == tag.seq {
                    self.estimator
                        .on_pair(bits, now.saturating_sub(at).as_secs_f64());
                }
            }
        }
        self.expected = self.expected.max(tag.seq + 1);
        self.last = Some((tag, sent_at, now));
        if self.next_feedback.is_none() {
            self.next_feedback = Some(now + self.feedback_period);
        }
        out
    }

    /// The feedback timer: the estimate, if there is one.
    pub fn on_timer(&mut self, now: SimTime) -> Option<Report> {
        if self.next_feedback.is_none_or(|t| now < t) {
            return None;
        }
        self.next_feedback = Some(now + self.feedback_period);
        let a = self.estimator.available_bps()?;
        let (_, sent, at) = self.last?;
        Some(Report::Estimate {
            a_bps: a,
            t_recvdata: sent,
            t_delay: now.saturating_sub(at),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    fn sender() -> PpaccSender {
        let rng = RngStreams::new(1, 0).stream("p");
        PpaccSender::new(PpaccConfig::default(), 2e6, 400e3, rng)
    }

    #[test]
    fn equal_successors_leave_as_pairs_s_over_cb_apart() {
        let mut s = sender();
        let t0 = SimTime::ZERO;
        // 1250 bytes = 10,000 bits: s / Cb = 5 ms at 2 Mbit/s; the paced
        // interval at 400 kbit/s is 25 ms.
        let (a, next) = s.on_send(t0, 1250, true);
        assert_eq!((a.pair, next), (1, SimTime::from_millis(5)));
        let (b, after) = s.on_send(next, 1250, true);
        assert_eq!(b.pair, 2);
        // Two paced intervals from the first, less the pair gap: 45 ms on.
        assert_eq!(after, SimTime::from_millis(50));
        let (c, _) = s.on_send(after, 900, false);
        assert_eq!((c.pair, c.seq), (0, 2));
        assert_eq!(s.pairs_sent, 1);
    }

    #[test]
    fn a_pacing_factor_shortens_the_paced_interval_not_the_pair_gap() {
        // At 2 x 400 kbit/s a 1250-byte packet is paced 12.5 ms after the
        // one before; the pair's second still waits s / Cb (5 ms), and the
        // pair costs two paced intervals (25 ms from its first).
        let rng = RngStreams::new(1, 0).stream("p");
        let cfg = PpaccConfig {
            pacing_factor: 2.0,
            ..PpaccConfig::default()
        };
        let mut s = PpaccSender::new(cfg, 2e6, 400e3, rng);
        let us = SimTime::from_micros;
        let (_, next) = s.on_send(SimTime::ZERO, 1250, false);
        assert_eq!(next, us(12_500));
        let (_, second) = s.on_send(next, 1250, true);
        assert_eq!(second, us(17_500));
        let (_, after) = s.on_send(second, 1250, false);
        assert_eq!(after, us(37_500));
    }

    #[test]
    fn the_sender_counts_what_it_sends() {
        let mut s = sender();
        let mut t = SimTime::ZERO;
        for _ in 0..3 {
            t = s.on_send(t, 1250, false).1;
        }
        assert_eq!(s.control.packets, 3);
    }

    /// The receiver counts the packets a gap skips (5 after 0, 1, 2: 3 and
    /// 4), reports each gap, and sends its estimate once per feedback
    /// period (100 ms) from the first data packet: at 100 ms, then not
    /// before 200 ms.
    #[test]
    fn the_receiver_counts_gaps_and_reports_once_a_period() {
        let cfg = PpaccConfig::default();
        let mut r = PpaccReceiver::new(&cfg, 2e6, SimTime::from_millis(100));
        let ms = SimTime::from_millis;
        let tag = |seq, pair| PairTag { seq, pair };
        for (seq, pair, at) in [(0, 1, 0), (1, 2, 5), (2, 0, 10)] {
            assert!(r.on_data(ms(at), tag(seq, pair), ms(at), 1e4).is_empty());
        }
        let out = r.on_data(ms(20), tag(5, 0), ms(20), 1e4);
        assert!(
            matches!(out[..], [Report::Loss { first_missing: 3 }]),
            "{out:?}"
        );
        assert_eq!(r.losses, 2);
        assert!(r.on_timer(ms(99)).is_none(), "not yet");
        assert!(matches!(r.on_timer(ms(100)), Some(Report::Estimate { .. })));
        assert!(r.on_timer(ms(150)).is_none(), "one report a period");
        assert!(r.on_timer(ms(200)).is_some());
    }

    /// An unshaped sender (Cb 2 Mbit/s) and the times of a pair of 1250
    /// bytes sent at 0 and a lone 900-byte packet at 12 ms: (the first's
    /// next, the second's next, the lone one's next).
    fn unshaped_times(capacity_spacing: bool) -> [SimTime; 3] {
        let rng = RngStreams::new(1, 0).stream("p");
        let cfg = PpaccConfig {
            shaping: false,
            capacity_spacing,
            ..PpaccConfig::default()
        };
        let mut s = PpaccSender::new(cfg, 2e6, 400e3, rng);
        let (a, next) = s.on_send(SimTime::ZERO, 1250, true);
        let (b, after_pair) = s.on_send(next, 1250, false);
        let (c, after_lone) = s.on_send(SimTime::from_millis(12), 900, false);
        assert_eq!((a.pair, b.pair, c.pair), (1, 2, 0));
        [next, after_pair, after_lone]
    }

    #[test]
    fn without_shaping_only_the_pairs_are_spaced() {
        // The pair's second still waits s / Cb (5 ms), but after it, and
        // after a lone packet, the next may leave at once: no send buffer
        // drains at the target rate.
        let ms = SimTime::from_millis;
        assert_eq!(unshaped_times(false), [ms(5), ms(5), ms(12)]);
    }

    #[test]
    fn capacity_spacing_keeps_every_packet_s_over_cb_from_the_last() {
        // 1250 bytes at 2 Mbit/s: 5 ms, within a pair and after it; a lone
        // 900-byte packet: 3.6 ms to the next.
        let ms = SimTime::from_millis;
        let after_lone = SimTime::from_micros(15_600);
        assert_eq!(unshaped_times(true), [ms(5), ms(10), after_lone]);
    }

    #[test]
    fn the_receiver_measures_pairs_and_notices_losses() {
        let cfg = PpaccConfig::default();
        let mut r = PpaccReceiver::new(&cfg, 2e6, SimTime::from_millis(100));
        let ms = SimTime::from_millis;
        assert!(r
            .on_data(ms(10), PairTag { seq: 0, pair: 1 }, ms(0), 1e4)
            .is_empty());
        // Arriving 7.5 ms later: A = 2 Cb - d Cb^2 / s = 4e6 - 0.0075 x 4e12 / 1e4 = 1 Mbit/s.
        r.on_data(
            SimTime::from_micros(17_500),
            PairTag { seq: 1, pair: 2 },
            ms(5),
            1e4,
        );
        assert!((r.estimator.available_bps().unwrap() - 1e6).abs() < 1e-3);
        let loss = r.on_data(ms(60), PairTag { seq: 4, pair: 0 }, ms(50), 1e4);
        assert_eq!(loss, vec![Report::Loss { first_missing: 2 }]);
        assert_eq!(r.losses, 2);
        // A second of a pair whose first was lost gives no sample.
        r.on_data(ms(70), PairTag { seq: 6, pair: 2 }, ms(60), 1e4);
        assert_eq!(r.estimator.pairs, 1);
        let f = r
            .on_timer(ms(110))
            .expect("one period after the first packet");
        match f {
            Report::Estimate {
                a_bps,
                t_recvdata,
                t_delay,
            } => {
                assert!((a_bps - 1e6).abs() < 1e-3);
                assert_eq!((t_recvdata, t_delay), (ms(60), ms(40)));
            }
            _ => panic!("an estimate"),
        }
    }

    #[test]
    fn reports_drive_the_control() {
        let mut s = sender();
        let ms = SimTime::from_millis;
        s.on_report(
            ms(100),
            &Report::Estimate {
                a_bps: 1e6,
                t_recvdata: ms(20),
                t_delay: ms(30),
            },
        );
        assert_eq!(s.rtt(), Some(ms(50)));
        // A second sample of 80 ms: 7/8 of the old plus 1/8 of the new.
        s.on_report(
            ms(300),
            &Report::Estimate {
                a_bps: 1e6,
                t_recvdata: ms(200),
                t_delay: ms(20),
            },
        );
        assert_eq!(s.rtt(), Some(SimTime::from_micros(53_750)));
        s.on_report(ms(320), &Report::Loss { first_missing: 3 });
        assert_eq!(s.control.state, super::super::State::Decrease);
    }

    #[test]
    fn a_loss_biases_the_estimate_by_the_measured_sending_rate() {
        let mut s = sender();
        assert_eq!(s.target_bps(), 400e3);
        let ms = SimTime::from_millis;
        // 1000 bytes every 10 ms: 11 packets in the first 100 ms window
        // (880 kbit/s), then 10 in the next (800 kbit/s).
        for k in 0..=20 {
            s.on_send(ms(10 * k), 1000, false);
        }
        let est = Report::Estimate {
            a_bps: 1e6,
            t_recvdata: ms(150),
            t_delay: ms(0),
        };
        s.on_report(ms(200), &est);
        s.on_report(ms(210), &Report::Loss { first_missing: 5 });
        // Bias: 1/4 of (1 Mbit/s - 800 kbit/s).
        assert!(
            (s.control.bias_bps() - 50e3).abs() < 1e-6,
            "{}",
            s.control.bias_bps()
        );
    }
}
