//! The event queue: a contract in three rules.
//!
//! 1. Events pop in order of (time, insertion sequence), so events scheduled
//!    for the same instant run in the order they were scheduled. Runs are
//!    therefore bit-for-bit repeatable.
//! 2. Scheduling before the current time is an error.
//! 3. An event scheduled with [`EventQueue::schedule_cancellable`] gets an
//!    [`EventKey`]; cancelling it removes it lazily (it is skipped when it
//!    reaches the head). Cancelling an event that already ran, or twice, is
//!    reported and changes nothing. Plain events (the packet hot path) carry
//!    no cancellation bookkeeping.
//!
//! Two lanes keep the hot path short: packet events (a link finishing a
//! transmission, a packet reaching the far end) come and go in a few
//! microseconds, while timers ([`EventQueue::schedule_timer`], one per
//! endpoint, mostly a retransmission timeout seconds ahead) sit for long.
//! Each lane is a heap and a pop takes the lesser of the two heads, so
//! the order is exactly rule 1's; but a pop among a dumbbell's few busy
//! links no longer sinks through hundreds of dormant timers.

use super::heap::{Lane, QuadHeap};
use super::time::SimTime;
use rustc_hash::FxHashSet as HashSet;

/// Handle of a scheduled event, usable to cancel it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventKey(pub u64);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("cannot schedule at {at} which is before now ({now})")]
pub struct PastSchedule {
    pub at: SimTime,
    pub now: SimTime,
}

/// The queue's order: time, then insertion sequence, packed in one key.
fn key(at: SimTime, seq: u64) -> u128 {
    (at.0 as u128) << 64 | seq as u128
}

fn time_of(key: u128) -> SimTime {
    SimTime((key >> 64) as u64)
}

fn seq_of(key: u128) -> u64 {
    key as u64
}

/// A priority queue of events of type `E` with a clock.
pub struct EventQueue<E> {
    /// Packet events.
    heap: Lane<E>,
    /// Timers, cancellable events among them.
    timers: QuadHeap<E>,
    cancellable: HashSet<u64>,
    cancelled: HashSet<u64>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E: Copy + Default> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy + Default> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: Lane::with_capacity(1024),
            timers: QuadHeap::with_capacity(1024),
            cancellable: HashSet::default(),
            cancelled: HashSet::default(),
            next_seq: 0,
            now: SimTime::ZERO,
            popped: 0,
        }
    }

    /// The current simulated time: that of the last event popped.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of events executed so far (cancelled ones excluded).
    pub fn events_executed(&self) -> u64 {
        self.popped
    }

    /// Pending events, cancelled ones excluded.
    pub fn len(&self) -> usize {
        self.heap.len() + self.timers.len() - self.cancelled.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedules `event` at absolute time `at`.
    #[inline(always)]
    pub fn schedule(&mut self, at: SimTime, event: E) -> Result<(), PastSchedule> {
        self.push(at, event).map(|_| ())
    }

    /// Schedules `event` after `delay` from now (never in the past).
    #[inline(always)]
    pub fn schedule_in(&mut self, delay: SimTime, event: E) {
        let at = self.now + delay;
        let _ = self.push(at, event);
    }

    /// Schedules a timer at `at`: ordered exactly as [`Self::schedule`],
    /// but kept in the timer lane (see the module's notes).
    #[inline(always)]
    pub fn schedule_timer(&mut self, at: SimTime, event: E) -> Result<(), PastSchedule> {
        self.push_timer(at, event).map(|_| ())
    }

    /// Schedules a cancellable `event` at `at` and returns its key.
    pub fn schedule_cancellable(
        &mut self,
        at: SimTime,
        event: E,
    ) -> Result<EventKey, PastSchedule> {
        let seq = self.push_timer(at, event)?;
        self.cancellable.insert(seq);
        Ok(EventKey(seq))
    }

    /// Puts an event in the queue even before now: only for tests of the
    /// engine's own checks on the order it runs events in.
    #[cfg(test)]
    pub fn schedule_unchecked(&mut self, at: SimTime, event: E) {
        self.next_seq += 1;
        self.heap.push(key(at, self.next_seq - 1), event);
    }

    #[inline(always)]
    fn push(&mut self, at: SimTime, event: E) -> Result<u64, PastSchedule> {
        let seq = self.next_key(at)?;
        self.heap.push(key(at, seq), event);
        Ok(seq)
    }

    #[inline(always)]
    fn push_timer(&mut self, at: SimTime, event: E) -> Result<u64, PastSchedule> {
        let seq = self.next_key(at)?;
        self.timers.push(key(at, seq), event);
        Ok(seq)
    }

    #[inline(always)]
    fn next_key(&mut self, at: SimTime) -> Result<u64, PastSchedule> {
        if at < self.now {
            return Err(PastSchedule { at, now: self.now });
        }
        self.next_seq += 1;
        Ok(self.next_seq - 1)
    }

    /// Cancels a pending cancellable event. Returns false if it already ran
    /// or was already cancelled.
    pub fn cancel(&mut self, key: EventKey) -> bool {
        if self.cancellable.remove(&key.0) {
            self.cancelled.insert(key.0);
            true
        } else {
            false
        }
    }

    /// Time of the next live event, if any.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.head().map(|(k, _)| time_of(k))
    }

    /// The next live event's key, and whether it is a timer.
    #[inline(always)]
    fn head(&mut self) -> Option<(u128, bool)> {
        self.skip_cancelled();
        let packet = self.heap.peek().map(|e| e.0);
        let timer = self.timers.peek().map(|e| e.0);
        match (packet, timer) {
            (Some(p), Some(t)) => Some(if t < p { (t, true) } else { (p, false) }),
            (Some(p), None) => Some((p, false)),
            (None, t) => t.map(|t| (t, true)),
        }
    }

    /// Cancelled events are all timers (only those can be cancelled).
    #[inline(always)]
    fn skip_cancelled(&mut self) {
        if self.cancelled.is_empty() {
            return;
        }
        while let Some(top) = self.timers.peek() {
            if self.cancelled.remove(&seq_of(top.0)) {
                self.timers.pop();
            } else {
                break;
            }
        }
    }

    /// Pops the next live event and advances the clock to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let (_, timer) = self.head()?;
        Some(self.take(timer))
    }

    /// Pops the next live event if it is due at or before `until`.
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, E)> {
        let (k, timer) = self.head()?;
        if time_of(k) > until {
            return None;
        }
        Some(self.take(timer))
    }

    /// Pops the head of a lane known not to be empty.
    fn take(&mut self, timer: bool) -> (SimTime, E) {
        let (k, event) = if timer {
            self.timers.pop().expect("head() saw it")
        } else {
            self.heap.pop_nonempty()
        };
        if timer && !self.cancellable.is_empty() {
            self.cancellable.remove(&seq_of(k));
        }
        self.now = time_of(k);
        self.popped += 1;
        (self.now, event)
    }

    /// Moves the clock forward to `t` without running anything (used when a
    /// run stops at a horizon with no event exactly there).
    pub fn advance_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
    }

    /// Live pending events, in no particular order (for end-of-run accounting).
    pub fn pending(&self) -> impl Iterator<Item = (SimTime, &E)> {
        self.heap
            .iter()
            .chain(self.timers.iter())
            .filter(|e| !self.cancelled.contains(&seq_of(e.0)))
            .map(|e| (time_of(e.0), &e.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), "b").unwrap();
        q.schedule(SimTime(1), "a").unwrap();
        q.schedule(SimTime(5), "c").unwrap();
        q.schedule(SimTime(5), "d").unwrap();
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
        assert_eq!(order, vec!["a", "b", "c", "d"]);
        assert_eq!(q.now(), SimTime(5));
    }

    #[test]
    fn scheduling_in_the_past_is_an_error() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), 1).unwrap();
        q.pop();
        assert_eq!(
            q.schedule(SimTime(9), 2),
            Err(PastSchedule {
                at: SimTime(9),
                now: SimTime(10)
            })
        );
        assert!(q.schedule(SimTime(10), 3).is_ok());
    }

    #[test]
    fn cancelled_events_never_run() {
        let mut q = EventQueue::new();
        let a = q.schedule_cancellable(SimTime(1), 'a').unwrap();
        q.schedule(SimTime(2), 'b').unwrap();
        let c = q.schedule_cancellable(SimTime(3), 'c').unwrap();
        let d = q.schedule_cancellable(SimTime(0), 'd').unwrap();
        assert_eq!(q.pop(), Some((SimTime(0), 'd')));
        assert!(!q.cancel(d), "an event that ran cannot be cancelled");
        assert!(q.cancel(a));
        assert!(!q.cancel(a));
        assert!(q.cancel(c));
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop(), Some((SimTime(2), 'b')));
        assert_eq!(q.pop(), None);
        assert_eq!(q.events_executed(), 2, "d and b ran, a and c did not");
    }

    /// Random pops, packet events and timers: the order is a reference
    /// heap's, and `len`/`pending` count what is left.
    #[test]
    fn two_lanes_and_reused_slots_keep_the_order() {
        use std::cmp::Reverse;
        let mut rng = crate::sim::RngStreams::new(7, 0).stream("lanes");
        let mut q = EventQueue::new();
        let mut reference = std::collections::BinaryHeap::new();
        let mut seq = 0u64;
        for step in 0..20_000u32 {
            let u = crate::sim::uniform(&mut rng);
            if u < 0.45 && !reference.is_empty() {
                let Reverse((at, _, id)) = reference.pop().expect("not empty");
                assert_eq!(q.pop(), Some((SimTime(at), id)));
                assert_eq!(q.len(), reference.len());
                assert_eq!(q.pending().count(), reference.len());
            } else {
                let at = q.now().0 + (crate::sim::uniform(&mut rng) * 1000.0) as u64;
                if u < 0.8 {
                    q.schedule(SimTime(at), step).unwrap();
                } else {
                    q.schedule_timer(SimTime(at), step).unwrap();
                }
                reference.push(Reverse((at, seq, step)));
                seq += 1;
            }
        }
    }

    /// `schedule_in` counts from the clock (the time of the last event
    /// popped) and takes its place among events at the same instant by
    /// insertion order, as `schedule` does.
    #[test]
    fn schedule_in_counts_from_now() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), 'a').unwrap();
        q.schedule(SimTime(15), 'b').unwrap();
        assert_eq!(q.pop(), Some((SimTime(10), 'a')));
        q.schedule_in(SimTime(5), 'c');
        q.schedule_in(SimTime(2), 'd');
        assert_eq!(q.len(), 3);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(SimTime(12), 'd'), (SimTime(15), 'b'), (SimTime(15), 'c')]
        );
    }

    /// Empty when nothing live waits: a cancelled timer does not count.
    #[test]
    fn empty_counts_live_events_only() {
        let mut q = EventQueue::new();
        assert!(q.is_empty());
        q.schedule(SimTime(1), 1).unwrap();
        assert!(!q.is_empty());
        let t = q.schedule_cancellable(SimTime(2), 2).unwrap();
        assert!(q.cancel(t));
        assert!(!q.is_empty(), "the packet event still waits");
        assert_eq!(q.pop(), Some((SimTime(1), 1)));
        assert!(q.is_empty(), "only a cancelled timer is left");
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn pop_until_respects_horizon() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(1), 1).unwrap();
        q.schedule(SimTime(7), 2).unwrap();
        assert!(q.pop_until(SimTime(5)).is_some());
        assert!(q.pop_until(SimTime(5)).is_none());
        assert_eq!(q.len(), 1);
        assert_eq!(q.now(), SimTime(1), "the clock stays at the last event");
        assert_eq!(
            q.pop_until(SimTime(7)),
            Some((SimTime(7), 2)),
            "at the horizon runs"
        );
    }
}
