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
