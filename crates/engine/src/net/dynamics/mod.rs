//! Links whose properties change over time: a rate or delay schedule,
//! trace-driven delivery opportunities (Mahimahi), outages and delay
//! jitter. A link direction with any of these is driven by the world's
//! changing-link path (`world::dynamic`); one without them keeps the fixed
//! path, untouched.
//!
//! This file holds the transmitter's state: what is being sent, how much
//! of it is left, and the capacity offered so far. The parts are plain
//! models with their own tests: [`steps`], [`opportunities`], [`outage`],
//! [`jitter`].

pub mod jitter;
pub mod opportunities;
pub mod outage;
pub mod spec;
pub mod steps;

use super::store::PacketRef;
use crate::sim::SimTime;
use jitter::Jitter;
use opportunities::Opportunities;
use outage::UpDown;
use steps::Steps;

/// How the link direction sends: at a rate (bit/s, in steps), or on a
/// trace's delivery opportunities.
#[derive(Debug)]
pub enum Capacity {
    Rate(Steps<u64>),
    Trace(Opportunities),
}

/// What a link direction does when it goes down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DownPolicy {
    /// Drop the packets waiting in the queue, and those arriving while
    /// down (reason `link_down`); else they wait for the link to come up.
    pub drop_queued: bool,
    /// Lose the packets propagating on the wire; else they arrive.
    pub lose_wire: bool,
}

/// A change due at some time, in the order they apply at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Change {
    Down,
    Up,
    Rate(u64),
    Delay(SimTime),
}

/// The changing state of one link direction.
#[derive(Debug)]
pub struct LinkDynamics {
    pub capacity: Capacity,
    pub delay: Steps<SimTime>,
    pub outages: Option<UpDown>,
    pub on_down: DownPolicy,
    pub jitter: Option<Jitter>,
    /// Packets may overtake each other when jitter would have them.
    pub reorder: bool,
    // -- state --
    pub rate_bps: u64,
    pub delay_now: SimTime,
    /// The packet being sent and what is left of it: in rate mode bits
    /// times 1e9 (so that progress over whole nanoseconds is exact), in
    /// trace mode bytes.
    pub current: Option<(PacketRef, u128)>,
    /// Rate mode: progress is accounted up to here.
    pub progress_at: SimTime,
    /// Trace mode: the next opportunity (see [`Opportunities`]).
    pub cursor: u64,
    /// Rate mode: the last rate or up/down change (offered capacity is
    /// accounted up to here, in bits times 1e9).
    pub offered_at: SimTime,
    offered: u128,
    /// Trace mode: opportunities offered while up, before `cursor_from`,
    /// and where the current up period's count starts.
    offered_ops: u64,
    cursor_from: u64,
    /// The latest arrival time put on the wire (no reordering).
    pub last_arrival: SimTime,
    /// The earliest wake-up event scheduled and not yet run (MAX: none).
    pub armed: SimTime,
    /// When the rate and the delay schedules last changed.
    rate_at: SimTime,
    delay_at: SimTime,
    /// Since when the transmitter is idle (for RED's idle-time estimate).
    pub idle_since: SimTime,
    /// Bytes whose last bit has left.
    pub carried_bytes: u64,
}

impl LinkDynamics {
    pub fn new(
        capacity: Capacity,
        delay: Steps<SimTime>,
        outages: Option<UpDown>,
        on_down: DownPolicy,
        jitter: Option<Jitter>,
        reorder: bool,
    ) -> Self {
        let rate_bps = match &capacity {
            Capacity::Rate(s) => s.value_at(SimTime::ZERO),
            Capacity::Trace(_) => 0,
        };
        let delay_now = delay.value_at(SimTime::ZERO);
        LinkDynamics {
            capacity,
            delay,
            outages,
            on_down,
            jitter,
            reorder,
            rate_bps,
            delay_now,
            current: None,
            progress_at: SimTime::ZERO,
            cursor: 0,
            offered_at: SimTime::ZERO,
            offered: 0,
            offered_ops: 0,
            cursor_from: 0,
            last_arrival: SimTime::ZERO,
            armed: SimTime::MAX,
            rate_at: SimTime::ZERO,
            delay_at: SimTime::ZERO,
            idle_since: SimTime::ZERO,
            carried_bytes: 0,
        }
    }

    pub fn is_up(&self) -> bool {
        self.outages.as_ref().is_none_or(|o| o.is_up())
    }

    pub fn is_trace(&self) -> bool {
        matches!(self.capacity, Capacity::Trace(_))
    }

    /// The next change not yet applied, with its time. At one instant the
    /// state (down, up) changes first, then the rate, then the delay.
    pub fn next_change(&self) -> Option<(SimTime, Change)> {
        let mut best: Option<(SimTime, Change)> = None;
        let mut consider = |c: Option<(SimTime, Change)>| {
            if let Some((t, ch)) = c {
                if best.is_none_or(|(b, _)| t < b) {
                    best = Some((t, ch));
                }
            }
        };
        if let Some(o) = &self.outages {
            let t = o.next_flip();
            if t < SimTime::MAX {
                consider(Some((t, if o.is_up() { Change::Down } else { Change::Up })));
            }
        }
        if let Capacity::Rate(s) = &self.capacity {
            consider(
                s.next_change(self.rate_at)
                    .map(|(t, r)| (t, Change::Rate(r))),
            );
        }
        consider(
            self.delay
                .next_change(self.delay_at)
                .map(|(t, d)| (t, Change::Delay(d))),
        );
        best
    }

    /// Applies `change` due at `t` to the state: capacity offered and the
    /// current packet's progress are accounted first at the old state.
    /// What it means for packets (drops at a down) is the caller's.
    pub fn apply(&mut self, t: SimTime, change: Change) {
        if !self.is_trace() {
            self.progress(t);
        }
        self.account_offered(t);
        match change {
            Change::Rate(r) => {
                self.rate_bps = r;
                self.rate_at = t;
            }
            Change::Delay(d) => {
                self.delay_now = d;
                self.delay_at = t;
            }
            Change::Down | Change::Up => {
                let up = change == Change::Up;
                self.trace_flip(t, up);
                self.outages.as_mut().expect("an outage plan").flip();
                self.progress_at = t;
            }
        }
    }

    /// Rate mode: the bits of the current packet sent up to `t`.
    pub fn progress(&mut self, t: SimTime) {
        if t <= self.progress_at {
            return;
        }
        if self.is_up() {
            if let Some((_, left)) = self.current.as_mut() {
                let done = (t.0 - self.progress_at.0) as u128 * self.rate_bps as u128;
                *left = left.saturating_sub(done);
            }
        }
        self.progress_at = t;
    }

    /// Rate mode: when the current packet's last bit leaves (MAX: not
    /// while down, or nothing is being sent).
    pub fn finish_time(&self) -> SimTime {
        match self.current {
            Some((_, left)) if self.is_up() && self.rate_bps > 0 => {
                let ns = left.div_ceil(self.rate_bps as u128);
                SimTime(
                    self.progress_at
                        .0
                        .saturating_add(ns.min(u64::MAX as u128) as u64),
                )
            }
            _ => SimTime::MAX,
        }
    }

    /// Accounts the capacity offered up to `t` under the state in force
    /// (call before each change).
    pub fn account_offered(&mut self, t: SimTime) {
        if let Capacity::Rate(_) = self.capacity {
            if t > self.offered_at && self.is_up() {
                self.offered += (t.0 - self.offered_at.0) as u128 * self.rate_bps as u128;
            }
            self.offered_at = self.offered_at.max(t);
        }
    }

    /// Trace mode: the link goes down at `t` (opportunities at `t` and
    /// after are not offered) or comes up (those at `t` and after are).
    pub fn trace_flip(&mut self, t: SimTime, going_up: bool) {
        if let Capacity::Trace(o) = &self.capacity {
            let g = o.first_at_or_after(t);
            if going_up {
                self.cursor_from = g;
                self.cursor = g;
            } else {
                self.offered_ops += g.saturating_sub(self.cursor_from);
            }
        }
    }

    /// The capacity offered from time zero up to `t`, in bytes (`t` no
    /// earlier than the last change applied).
    pub fn offered_bytes(&self, t: SimTime) -> f64 {
        match &self.capacity {
            Capacity::Rate(_) => {
                let mut bits_ns = self.offered;
                if self.is_up() && t > self.offered_at {
                    bits_ns += (t.0 - self.offered_at.0) as u128 * self.rate_bps as u128;
                }
                bits_ns as f64 / 8e9
            }
            Capacity::Trace(o) => {
                let mut ops = self.offered_ops;
                if self.is_up() {
                    ops += o.first_after(t).saturating_sub(self.cursor_from);
                }
                ops as f64 * o.bytes as f64
            }
        }
    }
}
