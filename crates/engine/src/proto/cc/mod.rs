//! The congestion-controller seam: every rate controller behind
//! [`RateController`], with its receiver half behind [`FeedbackReceiver`],
//! each chosen in a scenario by a tagged `cc` spec registered in one line
//! ([`CcSpec`]); and TCP's window growth behind [`WindowController`]
//! ([`WindowSpec`], `window.rs`).
//!
//! A rate controller sees the packets its flow sends and the feedback
//! its receiver half returns, and says when the next packet may leave
//! (pacing) and what rate the media should aim at (target). The receiver
//! half sees each data packet's [`Stamp`] and returns the feedback the
//! controller asks for, as its own payload type. Neither knows the
//! application around it: the generic paced sender (`app::media`) and
//! the SVC video source drive the same controllers.
//!
//! Adding a controller: one file here with its spec (validate, build) and
//! its two halves, and one line in [`CcSpec`] (docs/architecture.md,
//! "Adding a controller", works one through: `fixed.rs`).

pub mod cubic;
pub mod fixed;
pub mod gcc;
pub mod nada;
pub mod ppacc;
pub mod scale;
pub mod scream;
pub mod spec;
pub mod tfrc;
pub mod window;

pub use spec::{CcMedia, CcModel, CcSite, CcSpec};
pub use window::{WindowController, WindowSpec};

use crate::net::Payload;
use crate::sim::SimTime;

/// What a rate controller stamps on each data packet it lets go, and its
/// receiver half reads back.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stamp {
    /// Data packets of the flow in sending order: 0, 1, ...
    pub seq: u64,
    pub sent_at: SimTime,
    /// The sender's RTT estimate, zero before it has one (TFRC carries it
    /// in every data packet, RFC 5348 3.2.1).
    pub rtt: SimTime,
    /// Packet-pair tag (PPACC): 0 alone, 1 first of a pair, 2 second.
    pub pair: u8,
    /// The echo of the receiver's last feedback, for a controller whose
    /// receiver half measures the RTT (`scale`).
    pub echo: Option<Echo>,
}

/// The echo of a feedback packet: when the receiver sent it and how long
/// the sender held it before this data packet left (RFC 3550 6.4.1's
/// LSR/DLSR idea): the receiver's RTT sample is now - sent_at - held.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Echo {
    pub sent_at: SimTime,
    pub held: SimTime,
}

impl crate::net::AppPayload for Stamp {
    crate::payload_eq!();
}

/// One packet about to leave.
#[derive(Clone, Copy, Debug)]
pub struct Departure {
    pub bytes: u32,
    /// When the controller said it might leave (it leaves at `now` >= due).
    pub due: SimTime,
    /// The packet queued behind it has the same size (packet pairs).
    pub next_same_size: bool,
}

impl Departure {
    /// A packet of a controller that paces at `rate_bps` by itself leaves
    /// `now` as its `seq`-th: its stamp, and when the next may leave (its
    /// serialisation time at the rate after it left, or after it was due).
    pub fn at_rate(&self, now: SimTime, seq: u64, rate_bps: f64) -> (Stamp, SimTime) {
        let stamp = Stamp {
            seq,
            sent_at: now,
            ..Stamp::default()
        };
        let gap = SimTime::from_secs_f64(self.bytes as f64 * 8.0 / rate_bps);
        (stamp, now.max(self.due) + gap)
    }
}

/// The checks of a controller that reads per-packet feedback (`name` in
/// its message): only an RTP member's frame-based media with `feedback`
/// gets it.
pub fn require_packet_feedback(
    name: &str,
    path: &str,
    media: CcMedia,
    c: &mut crate::scenario::check::Checker,
) {
    if !media.packet_feedback {
        let msg = format!("{name} reads per-packet feedback: only an RTP member's media with a `source` (frame-based media) and `feedback` (format \"twcc\" or \"rfc8888\") gets it");
        c.err(path, msg);
    }
}

/// Rate bounds `(name, bit/s)`: the least at most the greatest, the
/// start between them (each named at its field under `path`).
pub fn check_rate_range(
    path: &str,
    (min_name, min): (&str, f64),
    (start_name, start): (&str, f64),
    (max_name, max): (&str, f64),
    c: &mut crate::scenario::check::Checker,
) {
    if min.is_finite() && max.is_finite() && min > max {
        c.err(
            format!("{path}.{min_name}"),
            format!("must be at most {max_name} ({max})"),
        );
    } else if start.is_finite() && !(min..=max).contains(&start) {
        let msg = format!("must be within [{min_name}, {max_name}] = [{min}, {max}] (got {start})");
        c.err(format!("{path}.{start_name}"), msg);
    }
}

/// The RTT a controller on per-packet feedback sees: now minus the send
/// time of the newest packet a message reports received (so it includes
/// the wait for the feedback interval), smoothed by 1/8 as RFC 6298 does.
#[derive(Clone, Copy, Debug, Default)]
pub struct FeedbackRtt(Option<SimTime>);

impl FeedbackRtt {
    pub fn update(&mut self, now: SimTime, results: &[crate::proto::feedback::PacketResult]) {
        let newest = results.iter().filter(|r| r.received).max_by_key(|r| r.seq);
        if let Some(r) = newest {
            let sample = now.saturating_sub(r.sent_at).as_secs_f64();
            self.0 = Some(SimTime::from_secs_f64(match self.0 {
                None => sample,
                Some(rtt) => 0.875 * rtt.as_secs_f64() + 0.125 * sample,
            }));
        }
    }

    pub fn get(&self) -> Option<SimTime> {
        self.0
    }
}

/// When a bandwidth probe's next packet leaves (GCC's start-up probes):
/// the pacer sends it, the head of its queue or padding when the queue is
/// empty, whatever its own pace says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeSend {
    /// A probe starts with the next media packet queued (none is yet).
    WithMedia,
    /// The next probe packet may leave at this time.
    At(SimTime),
}

/// A rate controller's sending half.
pub trait RateController: Send {
    /// The flow starts at `now`; time series keep at most `series_rows`.
    fn start(&mut self, now: SimTime, series_rows: usize);
    /// A packet leaves now: its stamp, and when the next may leave.
    fn on_send(&mut self, now: SimTime, d: Departure) -> (Stamp, SimTime);
    /// Feedback arrived. `None` if it is not this controller's; otherwise
    /// when the next packet may leave, given it was due at `next_send`.
    fn on_feedback(&mut self, now: SimTime, fb: &Payload, next_send: SimTime) -> Option<SimTime>;
    /// When the controller's own timer is due, if armed.
    fn deadline(&self) -> Option<SimTime> {
        None
    }
    /// The controller's timer fired (at or after its deadline).
    fn on_timer(&mut self, _now: SimTime) {}
    /// The rate the media should aim at, bit/s.
    fn target_bps(&self) -> f64;
    /// A probe under way or asked for; `None` for none (the default).
    fn probe(&self) -> Option<ProbeSend> {
        None
    }
    /// The rate packets are paced at, bit/s.
    fn pacing_bps(&self) -> f64 {
        self.target_bps()
    }
    /// Bytes the controller lets leave now beyond those in flight, for a
    /// window-based controller (SCReAM); `None` for one that only paces.
    /// The member's pacer holds packets that do not fit until feedback or
    /// the controller's timer opens the window.
    fn send_window(&self) -> Option<u64> {
        None
    }
    /// The media level the controller chose, for a controller that picks
    /// among the media's discrete levels (`scale`); `None` for one that
    /// aims at a rate, whose target the media maps to a level itself.
    fn level(&self) -> Option<usize> {
        None
    }
    /// A group of frames `len` long begins (an encoder's GOP).
    fn on_frame_group(&mut self, _now: SimTime, _len: SimTime) {}
    /// Per-packet feedback (RFC 8888 or transport-wide) arrived: what it
    /// says about each packet, matched to what was sent. A controller that
    /// does not read per-packet feedback ignores it.
    fn on_packet_feedback(
        &mut self,
        _now: SimTime,
        _results: &[crate::proto::feedback::PacketResult],
    ) {
    }
    /// The bytes waiting in the media's pacer (NADA's rate-shaping
    /// buffer), told before each per-packet feedback message.
    fn on_send_queue(&mut self, _bytes: u64) {}
    /// A frame is about to be queued while the pacer's head packet has
    /// waited `head_wait`: true if the controller wants the pacer's queue
    /// discarded first (SCReAM's RTP queue discard, RFC 8298 4.1.3).
    fn discard_send_queue(&mut self, _now: SimTime, _head_wait: SimTime) -> bool {
        false
    }
    /// Data packets stamped so far.
    fn packets(&self) -> u64;
    /// The target rate over time, (time, bit/s).
    fn rate_series(&self) -> Vec<(SimTime, f64)>;
    /// A value of the controller's own for result tables (e.g. "rtt_ms",
    /// "p"); `None` if it has no such value.
    fn value(&self, _name: &str) -> Option<f64> {
        None
    }
}

/// A rate controller's receiving half: turns data arrivals into the
/// feedback its sender half reads.
pub trait FeedbackReceiver: Send {
    /// The receiving end starts at `now` (the flow's start).
    fn start(&mut self, _now: SimTime) {}
    /// A data packet stamped `stamp`, `bytes` on the wire, arrived now;
    /// feedback to send goes in `out`.
    fn on_data(&mut self, now: SimTime, stamp: &Stamp, bytes: u32, out: &mut Vec<Payload>);
    /// When the receiver's timer is due, if armed.
    fn deadline(&self) -> Option<SimTime>;
    /// The timer fired; feedback to send goes in `out`.
    fn on_timer(&mut self, now: SimTime, out: &mut Vec<Payload>);
    /// Time series keep at most `rows` rows.
    fn set_series_rows(&mut self, _rows: usize) {}
    /// A value of the receiver's own (e.g. "p", "available_bps").
    fn value(&self, _name: &str) -> Option<f64> {
        None
    }
    /// A time series of the receiver's own (e.g. "available_bps").
    fn series(&self, _name: &str) -> Option<Vec<(SimTime, f64)>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::feedback::PacketResult;

    /// A controller of only what every controller must say, at 1 Mbit/s,
    /// and its receiver half of only what every receiver must do.
    struct Plain;
    impl RateController for Plain {
        fn start(&mut self, _now: SimTime, _rows: usize) {}
        fn on_send(&mut self, now: SimTime, d: Departure) -> (Stamp, SimTime) {
            d.at_rate(now, 0, self.target_bps())
        }
        fn on_feedback(&mut self, _: SimTime, _: &Payload, next: SimTime) -> Option<SimTime> {
            Some(next)
        }
        fn target_bps(&self) -> f64 {
            1e6
        }
        fn packets(&self) -> u64 {
            0
        }
        fn rate_series(&self) -> Vec<(SimTime, f64)> {
            Vec::new()
        }
    }
    impl FeedbackReceiver for Plain {
        fn on_data(&mut self, _: SimTime, _: &Stamp, _: u32, _: &mut Vec<Payload>) {}
        fn deadline(&self) -> Option<SimTime> {
            None
        }
        fn on_timer(&mut self, _: SimTime, _: &mut Vec<Payload>) {}
    }

    /// What a controller that only paces says by default, as the trait
    /// documents it: it paces at its target, has no window, no level, no
    /// timer, keeps the pacer's queue and has no values or series of its
    /// own (the tables then show NaN and no rows).
    #[test]
    fn a_controller_that_only_paces_says_what_the_trait_documents() {
        let mut c = Plain;
        assert_eq!(RateController::deadline(&c), None);
        assert_eq!(c.pacing_bps(), 1e6);
        assert_eq!(c.send_window(), None);
        assert_eq!(c.level(), None);
        assert!(!c.discard_send_queue(SimTime::from_secs(9), SimTime::from_secs(9)));
        assert_eq!(RateController::value(&c, "rtt_ms"), None);
        RateController::on_timer(&mut c, SimTime::ZERO);
        c.on_frame_group(SimTime::ZERO, SimTime::from_secs(1));
        c.on_send_queue(1);
        c.on_packet_feedback(SimTime::ZERO, &[] as &[PacketResult]);
        assert_eq!(c.target_bps(), 1e6, "the hooks it ignores change nothing");
        let mut rx = Plain;
        FeedbackReceiver::start(&mut rx, SimTime::ZERO);
        rx.set_series_rows(3);
        assert_eq!(FeedbackReceiver::value(&rx, "p"), None);
        assert_eq!(rx.series("p"), None);
    }

    /// A packet of a controller pacing by itself: stamped with its
    /// sequence number and time, and the next one due a serialisation
    /// time at the rate after it left or after it was due (1250 bytes at
    /// 1 Mbit/s: 10 ms).
    #[test]
    fn a_self_paced_packet_holds_the_next_back_by_its_serialisation_time() {
        let ms = SimTime::from_millis;
        let d = |due| Departure {
            bytes: 1250,
            due,
            next_same_size: false,
        };
        let (stamp, next) = d(ms(3)).at_rate(ms(5), 7, 1e6);
        assert_eq!((stamp.seq, stamp.sent_at, stamp.pair), (7, ms(5), 0));
        assert_eq!((stamp.rtt, stamp.echo), (SimTime::ZERO, None));
        assert_eq!(next, ms(15));
        assert_eq!(d(ms(8)).at_rate(ms(5), 0, 1e6).1, ms(18), "not before due");
        assert_eq!(d(ms(0)).at_rate(ms(0), 0, 2e6).1, ms(5));
    }

    /// The rate bounds: the least above the greatest is one error at the
    /// least; a start outside them, one at the start; equal bounds and a
    /// start on either bound pass; a bound not given (infinite) checks
    /// nothing it takes part in.
    #[test]
    fn rate_bounds_are_checked_at_their_fields() {
        let said = |min: f64, start: f64, max: f64| {
            crate::app::testing::said(|c| {
                check_rate_range(
                    "cc",
                    ("min_bps", min),
                    ("start_bps", start),
                    ("max_bps", max),
                    c,
                )
            })
        };
        assert_eq!(
            said(2e6, 1e6, 1e6),
            ["cc.min_bps: must be at most max_bps (1000000)"]
        );
        assert_eq!(
            said(1e5, 3e6, 2e6),
            ["cc.start_bps: must be within [min_bps, max_bps] = [100000, 2000000] (got 3000000)"]
        );
        assert_eq!(
            said(1e5, 5e4, 2e6),
            ["cc.start_bps: must be within [min_bps, max_bps] = [100000, 2000000] (got 50000)"]
        );
        assert!(said(1e6, 1e6, 1e6).is_empty());
        assert!(said(1e5, 1e5, 2e6).is_empty() && said(1e5, 2e6, 2e6).is_empty());
        assert!(said(1e5, f64::INFINITY, 2e6).is_empty());
        assert!(
            said(f64::INFINITY, 5e6, 2e6).len() == 1,
            "the start is still checked"
        );
    }

    /// Only an RTP member's frame media with `feedback` gets per-packet
    /// feedback; a controller that reads it says so elsewhere.
    #[test]
    fn packet_feedback_is_required_where_it_is_read() {
        let media = |packet_feedback| CcMedia {
            packet_feedback,
            ..CcMedia::default()
        };
        let said = |m| crate::app::testing::said(|c| require_packet_feedback("gcc", "cc", m, c));
        assert!(said(media(true)).is_empty());
        let e = said(media(false));
        assert_eq!(e.len(), 1);
        assert!(
            e[0].starts_with("cc: gcc reads per-packet feedback"),
            "{e:?}"
        );
    }

    /// The RTT on per-packet feedback: the first sample as it is, then
    /// 7/8 of the last plus 1/8 of the new (RFC 6298 2.3); a sample is
    /// now less the newest packet reported received, lost ones left out.
    #[test]
    fn the_feedback_rtt_is_smoothed_by_an_eighth() {
        let ms = SimTime::from_millis;
        let r = |seq, sent_ms, received| PacketResult {
            seq,
            sent_at: ms(sent_ms),
            bytes: 1000,
            received,
            arrival: None,
            ecn: 0,
        };
        let mut rtt = FeedbackRtt::default();
        assert_eq!(rtt.get(), None);
        rtt.update(ms(100), &[r(3, 90, false)]);
        assert_eq!(rtt.get(), None, "nothing received");
        rtt.update(ms(100), &[r(1, 60, true), r(2, 20, true), r(3, 90, false)]);
        let ms_of = |rtt: FeedbackRtt| rtt.get().expect("an RTT").as_secs_f64() * 1e3;
        assert!(
            (ms_of(rtt) - 80.0).abs() < 1e-6,
            "the newest received: seq 2"
        );
        rtt.update(ms(200), &[r(4, 184, true)]);
        assert!((ms_of(rtt) - 72.0).abs() < 1e-6, "7/8 of 80 + 1/8 of 16");
    }
}
