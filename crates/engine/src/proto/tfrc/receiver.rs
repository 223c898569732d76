//! The TFRC receiver (RFC 5348 section 6): the loss history, and feedback
//! once per RTT, at once on the first packet and on a new loss event.
//!
//! - Feedback carries the send time of the last data packet received, how
//!   long ago it arrived, the rate received since the last feedback, and p.
//! - The first loss event's interval is synthesised (section 6.3.1): the
//!   loss rate at which the equation gives the rate received so far, with
//!   the sender's RTT and the mean size of the packets received.
//! - The feedback timer runs once per the sender's RTT estimate (carried in
//!   the data); it sends only if data arrived since the last feedback.

use super::loss::LossHistory;
use super::{loss_rate_for, DataHeader, Feedback, TfrcConfig};
use crate::sim::SimTime;

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    pub packets: u64,
    pub bytes: u64,
    pub feedbacks: u64,
}

pub struct TfrcReceiver {
    cfg: TfrcConfig,
    pub hist: LossHistory,
    /// The last data packet: its header and arrival time.
    last: Option<(DataHeader, SimTime)>,
    bytes_since_fb: u64,
    last_fb_at: Option<SimTime>,
    /// When the feedback timer next fires.
    fb_at: Option<SimTime>,
    first_at: Option<SimTime>,
    /// Mean size of the packets received (RFC 5348 4.1), for 6.3.1.
    s: f64,
    pub stats: ReceiverStats,
}

impl TfrcReceiver {
    pub fn new(cfg: TfrcConfig) -> Self {
        TfrcReceiver {
            hist: LossHistory::new(cfg.n_intervals, cfg.history_discounting),
            s: cfg.s as f64,
            cfg,
            last: None,
            bytes_since_fb: 0,
            last_fb_at: None,
            fb_at: None,
            first_at: None,
            stats: ReceiverStats::default(),
        }
    }

    pub fn deadline(&self) -> Option<SimTime> {
        self.fb_at
    }

    pub fn loss_event_rate(&self) -> f64 {
        self.hist.loss_event_rate()
    }

    /// A data packet of `size` bytes arrived; returns feedback to send now.
    pub fn on_data(&mut self, now: SimTime, h: DataHeader, size: u32) -> Option<Feedback> {
        self.stats.packets += 1;
        self.stats.bytes += size as u64;
        self.bytes_since_fb += size as u64;
        self.s = super::sender::mean_size(self.s, size);
        self.first_at.get_or_insert(now);
        if self.last.is_none_or(|(l, _)| h.seq > l.seq) {
            self.last = Some((h, now));
        }
        let news = self.hist.on_packet(h.seq, now, h.rtt);
        if news.first {
            self.seed_first_interval(now, h.rtt);
        }
        // First packet, or a new loss event: feedback at once (6.2, 6.3).
        if self.last_fb_at.is_none() || news.new_event {
            return Some(self.feedback(now));
        }
        self.ensure_timer(now);
        None
    }

    /// Section 6.3.1: the first interval is the one whose loss rate gives
    /// the rate received so far.
    fn seed_first_interval(&mut self, now: SimTime, rtt: SimTime) {
        let span = now
            .saturating_sub(self.first_at.unwrap_or(now))
            .as_secs_f64();
        let r = rtt.as_secs_f64();
        if span <= 0.0 || r <= 0.0 {
            return;
        }
        let x_recv = self.stats.bytes as f64 / span.max(r);
        let s = self.s;
        let p = loss_rate_for(x_recv, s, r, self.cfg.b, 4.0 * r);
        self.hist.set_first_interval((1.0 / p).round() as u64);
    }

    fn feedback(&mut self, now: SimTime) -> Feedback {
        let (h, arrived) = self.last.expect("data arrived");
        let since = self
            .last_fb_at
            .map_or(0.0, |t| now.saturating_sub(t).as_secs_f64());
        let x_recv = if since > 0.0 {
            self.bytes_since_fb as f64 / since
        } else {
            0.0
        };
        self.bytes_since_fb = 0;
        self.last_fb_at = Some(now);
        // Once per the sender's RTT (before it has one: once per 100 ms).
        let period = if h.rtt > SimTime::ZERO {
            h.rtt
        } else {
            SimTime::from_millis(100)
        };
        self.fb_at = Some(now + period);
        self.stats.feedbacks += 1;
        Feedback {
            t_recvdata: h.sent_at,
            t_delay: now.saturating_sub(arrived),
            x_recv,
            p: self.hist.loss_event_rate(),
        }
    }

    /// The feedback timer (at or after `deadline()`).
    pub fn on_timer(&mut self, now: SimTime) -> Option<Feedback> {
        if self.fb_at.is_none_or(|t| now < t) {
            return None;
        }
        if self.bytes_since_fb == 0 {
            // Nothing arrived: no feedback; wait for data (the sender's
            // no-feedback timer covers the silence).
            self.fb_at = None;
            return None;
        }
        Some(self.feedback(now))
    }

    /// Re-arms the feedback timer after data arrives following a silence.
    fn ensure_timer(&mut self, now: SimTime) {
        if self.fb_at.is_none() && self.last_fb_at.is_some() {
            let rtt = self.last.map_or(SimTime::ZERO, |(h, _)| h.rtt);
            self.fb_at = Some(now + rtt.max(SimTime::from_millis(1)));
        }
    }
}
