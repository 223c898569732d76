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

#[cfg(test)]
mod tests {
    use super::outage::Outages;
    use super::*;

    const MS: fn(u64) -> SimTime = SimTime::from_millis;
    const US: fn(u64) -> SimTime = SimTime::from_micros;

    fn rate_link(
        rate: Steps<u64>,
        delay: Steps<SimTime>,
        down: &[(SimTime, SimTime)],
    ) -> LinkDynamics {
        let outages = (!down.is_empty()).then(|| UpDown::new(Outages::Windows(down.to_vec())));
        let policy = DownPolicy {
            drop_queued: false,
            lose_wire: false,
        };
        LinkDynamics::new(Capacity::Rate(rate), delay, outages, policy, None, false)
    }

    /// Applies every change due up to `until`, in order.
    fn apply_until(l: &mut LinkDynamics, until: SimTime) -> Vec<(SimTime, Change)> {
        let mut seen = Vec::new();
        while let Some((t, c)) = l.next_change().filter(|(t, _)| *t <= until) {
            l.apply(t, c);
            seen.push((t, c));
        }
        seen
    }

    #[test]
    fn changes_at_one_instant_apply_state_then_rate_then_delay() {
        let rate = Steps::new(
            vec![(SimTime::ZERO, 1_000_000), (MS(1000), 2_000_000)],
            None,
        );
        let delay = Steps::new(vec![(SimTime::ZERO, MS(10)), (MS(1000), MS(50))], None);
        let mut l = rate_link(rate, delay, &[(MS(1000), MS(2000))]);
        assert_eq!((l.rate_bps, l.delay_now), (1_000_000, MS(10)));
        assert!(l.is_up() && !l.is_trace());
        let seen = apply_until(&mut l, MS(5000));
        assert_eq!(
            seen,
            vec![
                (MS(1000), Change::Down),
                (MS(1000), Change::Rate(2_000_000)),
                (MS(1000), Change::Delay(MS(50))),
                (MS(2000), Change::Up),
            ]
        );
        assert_eq!((l.rate_bps, l.delay_now), (2_000_000, MS(50)));
        assert!(l.is_up());
        assert_eq!(l.next_change(), None);
        // The same changes in the other order of sources: the delay's step
        // first, then the rate's, when they do not coincide.
        let rate = Steps::new(vec![(SimTime::ZERO, 1), (MS(30), 2)], None);
        let delay = Steps::new(vec![(SimTime::ZERO, MS(1)), (MS(20), MS(2))], None);
        let mut l = rate_link(rate, delay, &[]);
        assert!(l.is_up());
        let seen = apply_until(&mut l, MS(100));
        assert_eq!(
            seen,
            vec![(MS(20), Change::Delay(MS(2))), (MS(30), Change::Rate(2))]
        );
    }

    #[test]
    fn a_packet_progresses_at_the_rate_in_force_and_not_while_down() {
        // 8 Mbit/s: a byte a microsecond. 1,000 bytes, in bits times 1e9.
        let rate = Steps::new(vec![(SimTime::ZERO, 8_000_000), (US(500), 4_000_000)], None);
        let mut l = rate_link(rate, Steps::constant(MS(1)), &[(US(600), US(800))]);
        assert_eq!(l.finish_time(), SimTime::MAX, "nothing being sent");
        l.current = Some((PacketRef::NONE, 8_000 * 1_000_000_000));
        assert_eq!(l.finish_time(), US(1000));
        l.progress(US(400));
        assert_eq!(l.current.unwrap().1, 4_800 * 1_000_000_000);
        assert_eq!(l.finish_time(), US(1000));
        // Progress to a time already accounted changes nothing.
        l.progress(US(300));
        assert_eq!(
            (l.progress_at, l.current.unwrap().1),
            (US(400), 4_800 * 1_000_000_000)
        );
        // Half the rate from 500 us: 400 bytes left take 800 us.
        apply_until(&mut l, US(500));
        assert_eq!(l.current.unwrap().1, 4_000 * 1_000_000_000);
        assert_eq!(l.finish_time(), US(1500));
        // Down over 600-800 us: 50 bytes sent before, none during.
        apply_until(&mut l, US(600));
        assert!(!l.is_up());
        assert_eq!(l.current.unwrap().1, 3_600 * 1_000_000_000);
        assert_eq!(l.finish_time(), SimTime::MAX);
        l.progress(US(700));
        assert_eq!(l.current.unwrap().1, 3_600 * 1_000_000_000);
        apply_until(&mut l, US(800));
        assert!(l.is_up());
        assert_eq!(l.finish_time(), US(800 + 900));
        // A rate of zero never finishes.
        let mut z = rate_link(Steps::constant(0), Steps::constant(MS(1)), &[]);
        z.current = Some((PacketRef::NONE, 1));
        assert_eq!(z.finish_time(), SimTime::MAX);
        // A finish beyond representable time is "never", not a wrap.
        let mut slow = rate_link(Steps::constant(1), Steps::constant(MS(1)), &[]);
        slow.current = Some((PacketRef::NONE, u128::MAX / 2));
        assert_eq!(slow.finish_time(), SimTime::MAX);
    }

    #[test]
    fn offered_capacity_counts_time_up_at_each_rate() {
        // 8 Mbit/s (1 MB/s) to 1 s, then 16 Mbit/s; down over [2 s, 3 s).
        let rate = Steps::new(
            vec![(SimTime::ZERO, 8_000_000), (MS(1000), 16_000_000)],
            None,
        );
        let mut l = rate_link(rate, Steps::constant(MS(1)), &[(MS(2000), MS(3000))]);
        assert_eq!(l.offered_bytes(MS(500)), 500_000.0);
        apply_until(&mut l, MS(1000));
        assert_eq!(l.offered_bytes(MS(1000)), 1_000_000.0);
        assert_eq!(l.offered_bytes(MS(1500)), 2_000_000.0);
        apply_until(&mut l, MS(2500));
        assert_eq!(l.offered_bytes(MS(2500)), 3_000_000.0, "nothing while down");
        apply_until(&mut l, MS(3000));
        assert_eq!(l.offered_bytes(MS(4000)), 5_000_000.0);
        // Accounting up to an earlier time than already counted adds nothing.
        l.account_offered(MS(3500));
        l.account_offered(MS(3200));
        assert_eq!(l.offered_at, MS(3500));
        assert_eq!(l.offered_bytes(MS(4000)), 5_000_000.0);
    }

    #[test]
    fn a_trace_offers_the_opportunities_of_its_up_periods() {
        // An opportunity of 1,500 bytes every 10 ms; down over [30, 60) ms:
        // those at 30, 40 and 50 ms are not offered.
        let ops = Opportunities::new(&[10], true, 1500);
        let outages = Some(UpDown::new(Outages::Windows(vec![(MS(30), MS(60))])));
        let policy = DownPolicy {
            drop_queued: true,
            lose_wire: true,
        };
        let mut l = LinkDynamics::new(
            Capacity::Trace(ops),
            Steps::constant(MS(5)),
            outages,
            policy,
            None,
            false,
        );
        assert!(l.is_trace());
        assert_eq!(l.rate_bps, 0);
        assert_eq!(l.offered_bytes(MS(25)), 2.0 * 1500.0);
        assert_eq!(
            apply_until(&mut l, MS(100)),
            vec![(MS(30), Change::Down), (MS(60), Change::Up)]
        );
        // Coming up at 60 ms, the opportunity at 60 ms is the next one.
        assert_eq!(l.cursor, 5);
        assert_eq!(l.offered_bytes(MS(100)), 7.0 * 1500.0);
        assert_eq!(l.offered_bytes(MS(60)), 3.0 * 1500.0);
    }
}
