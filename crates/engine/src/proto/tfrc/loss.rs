//! The TFRC receiver's loss history (RFC 5348 section 5): which packets
//! are lost, how they group into loss events, the loss intervals, and
//! their weighted average.
//!
//! - A packet is lost once three packets with higher sequence numbers have
//!   arrived and it has not (section 5.1, NDUPACK = 3).
//! - Its arrival time is interpolated between the packets received around
//!   it (section 5.2). A loss starts a new loss event if that time is more
//!   than one RTT (the sender's estimate, carried in the data) after the
//!   start of the current loss event; otherwise it belongs to it.
//! - A loss interval is the number of packets from the first lost packet
//!   of one loss event to that of the next; the open interval I_0 counts
//!   the packets since the last loss event began (section 5.3).
//! - The average (section 5.4): weights 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 for
//!   n = 8, I_mean = max(I_tot0, I_tot1) / W_tot, over the intervals there
//!   are while fewer than n are known.
//! - History discounting (section 5.5): while the open interval is more
//!   than twice the average of the closed ones, the closed ones' weights
//!   are scaled by max(0.5, 2 I_mean / I_0). (RFC 5348 also carries the
//!   factor over into later intervals; this keeps only the current one.)

use crate::sim::SimTime;
use std::collections::{BTreeMap, VecDeque};

const NDUPACK: usize = 3;

/// The RFC 5348 section 5.4 weights for `n` intervals, most recent first.
pub fn weights(n: usize) -> Vec<f64> {
    (1..=n)
        .map(|i| {
            if i <= n / 2 {
                1.0
            } else {
                2.0 * (n - i + 1) as f64 / (n + 2) as f64
            }
        })
        .collect()
}

/// What an arrival changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossNews {
    /// Packets newly found lost.
    pub lost: u64,
    /// A new loss event began (the first one has `first`).
    pub new_event: bool,
    pub first: bool,
}

#[derive(Clone, Debug)]
pub struct LossHistory {
    n: usize,
    discounting: bool,
    /// Received packets not yet decided about (seq -> arrival).
    pending: BTreeMap<u64, SimTime>,
    /// Every sequence number up to this is decided (received or lost).
    settled: Option<u64>,
    /// The last received packet at or below `settled`: (seq, arrival).
    last_received: Option<(u64, SimTime)>,
    highest: Option<u64>,
    /// Closed intervals, most recent first (at most n).
    intervals: VecDeque<u64>,
    /// The current loss event: its first lost packet and when it was due.
    event: Option<(u64, SimTime)>,
    pub lost_packets: u64,
    pub loss_events: u64,
}

impl LossHistory {
    pub fn new(n: usize, discounting: bool) -> Self {
        LossHistory {
            n,
            discounting,
            pending: BTreeMap::new(),
            settled: None,
            last_received: None,
            highest: None,
            intervals: VecDeque::new(),
            event: None,
            lost_packets: 0,
            loss_events: 0,
        }
    }

    /// Packet `seq` arrived at `now`; `rtt` is the sender's estimate.
    pub fn on_packet(&mut self, seq: u64, now: SimTime, rtt: SimTime) -> LossNews {
        let mut news = LossNews::default();
        if self.settled.is_some_and(|s| seq <= s) || self.pending.contains_key(&seq) {
            return news; // late or duplicate
        }
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        self.pending.insert(seq, now);
        loop {
            let next = self.settled.map_or(0, |s| s + 1);
            if let Some(&t) = self.pending.get(&next) {
                self.pending.remove(&next);
                self.last_received = Some((next, t));
                self.settled = Some(next);
                continue;
            }
            if self.pending.range(next + 1..).count() < NDUPACK {
                break;
            }
            // `next` is lost.
            self.settled = Some(next);
            self.lost_packets += 1;
            news.lost += 1;
            let due = self.interpolate(next);
            match self.event {
                Some((_, start)) if due <= start + rtt => {}
                Some((first, _)) => {
                    self.intervals.push_front(next - first);
                    self.intervals.truncate(self.n);
                    self.event = Some((next, due));
                    self.loss_events += 1;
                    news.new_event = true;
                }
                None => {
                    self.event = Some((next, due));
                    self.loss_events += 1;
                    news.new_event = true;
                    news.first = true;
                }
            }
        }
        news
    }

    /// The current loss event's first lost packet and when it was due.
    #[cfg(test)]
    pub fn event(&self) -> Option<(u64, SimTime)> {
        self.event
    }

    /// When lost packet `seq` would have arrived: between the received
    /// packets around it, in proportion to sequence numbers.
    fn interpolate(&self, seq: u64) -> SimTime {
        let (after_seq, after_t) = self
            .pending
            .range(seq + 1..)
            .next()
            .map(|(&s, &t)| (s, t))
            .expect("three later packets arrived");
        let Some((before_seq, before_t)) = self.last_received else {
            return after_t;
        };
        let frac = (seq - before_seq) as f64 / (after_seq - before_seq) as f64;
        let gap = after_t.saturating_sub(before_t).as_nanos() as f64;
        before_t + SimTime::from_nanos((gap * frac) as u64)
    }

    /// The first loss interval, synthesised by the receiver (RFC 5348
    /// 6.3.1) once the first loss event begins.
    pub fn set_first_interval(&mut self, packets: u64) {
        self.intervals.clear();
        self.intervals.push_front(packets.max(1));
    }

    /// Packets since the current loss event began (I_0).
    pub fn open_interval(&self) -> u64 {
        match (self.event, self.highest) {
            (Some((first, _)), Some(h)) => h + 1 - first,
            _ => 0,
        }
    }

    /// The closed intervals, most recent first.
    pub fn intervals(&self) -> impl Iterator<Item = &u64> {
        self.intervals.iter()
    }

    /// I_mean (section 5.4, with 5.5's discounting); None before a loss.
    pub fn mean_interval(&self) -> Option<f64> {
        self.event?;
        let w = weights(self.n);
        let closed: Vec<f64> = self.intervals.iter().map(|&i| i as f64).collect();
        if closed.is_empty() {
            return Some(self.open_interval().max(1) as f64);
        }
        let i0 = self.open_interval() as f64;
        // I_tot1: the closed intervals alone.
        let k = closed.len().min(self.n);
        let (t1, w1) = (0..k).fold((0.0, 0.0), |(t, ws), i| (t + closed[i] * w[i], ws + w[i]));
        let mean1 = t1 / w1;
        // I_tot0: the open interval first, then the closed ones, whose
        // weights are discounted after a long loss-free stretch.
        let df = if self.discounting && i0 > 2.0 * mean1 {
            (2.0 * mean1 / i0).max(0.5)
        } else {
            1.0
        };
        let k0 = (closed.len() + 1).min(self.n);
        let (mut t0, mut w0) = (i0 * w[0], w[0]);
        for i in 1..k0 {
            t0 += closed[i - 1] * w[i] * df;
            w0 += w[i] * df;
        }
        Some((t0 / w0).max(mean1))
    }

    /// The loss event rate p = 1 / I_mean (0 before any loss).
    pub fn loss_event_rate(&self) -> f64 {
        self.mean_interval().map_or(0.0, |m| 1.0 / m)
    }
}
