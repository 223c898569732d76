//! The changing-link path: link directions whose rate, delay or state
//! changes (schedules, traces, outages, jitter; `net::dynamics`). Fixed
//! links never come here: their path in `world` stays as it was.
//!
//! Rules (docs/models/links.md):
//! - Changes at one instant apply before any transmission at it: a rate
//!   step at t serves the bits sent from t on; a packet being sent when
//!   the rate changes sends its remaining bits at the new rate.
//! - A packet takes the delay (and jitter draw) in force when its last
//!   bit leaves, and without `reorder` never arrives before one that left
//!   ahead of it.
//! - Trace mode follows Mahimahi's `mm-link`: at each opportunity up to
//!   its bytes go, from the packet under way and then from the queue; a
//!   packet leaves at the opportunity that carries its last byte; an
//!   opportunity at the instant a packet arrives to an idle link has
//!   already passed unused.
//! - Down: the packet being sent is lost (`link_down`); the queue and the
//!   wire as the outage policy says. Routes do not change.
//!
//! One wake-up event (`Ev::Link`) is pending per direction at most that
//! counts (`LinkDynamics::armed`); others that a change made stale are
//! skipped when they run.

use super::{hop_of, Ev, World};
use crate::measure::recorder::trace_kind;
use crate::measure::DropSite;
use crate::net::dynamics::{Capacity, Change};
use crate::net::{DropReason, LinkDirId, PacketRef};
use crate::sim::SimTime;

impl World {
    fn dynamics(&mut self, ld: LinkDirId) -> &mut crate::net::dynamics::LinkDynamics {
        self.links[ld as usize]
            .dynamics
            .as_deref_mut()
            .expect("a changing link direction")
    }

    /// A packet for a changing link direction (called by `enqueue`; cold,
    /// so that the fixed path keeps its layout).
    #[cold]
    #[inline(never)]
    pub(super) fn enqueue_dynamic(&mut self, ld: LinkDirId, p: PacketRef, now: SimTime) {
        self.service(ld, now);
        let link = &mut self.links[ld as usize];
        let idle_queue = link.queue.is_empty();
        let d = link.dynamics.as_deref_mut().expect("a changing link");
        if !d.is_up() && d.on_down.drop_queued {
            return self.drop(p, DropReason::LINK_DOWN, DropSite::Link(ld), now);
        }
        let idle = idle_queue && d.current.is_none();
        if idle && d.is_up() {
            // Opportunities up to now went by unused (Mahimahi burns them
            // before it queues the packet).
            if let Capacity::Trace(o) = &d.capacity {
                d.cursor = d.cursor.max(o.first_after(now));
            }
        }
        let idle_since = idle.then_some(d.idle_since);
        let mut drops = std::mem::take(&mut self.drops);
        link.queue
            .enqueue_at(p, &mut self.packets, now, idle_since, &mut drops);
        self.drop_all(ld, drops, now);
        self.service(ld, now);
    }

    /// A wake-up of link direction `ld`.
    pub(super) fn on_link_event(&mut self, ld: LinkDirId, now: SimTime) {
        let d = self.dynamics(ld);
        if d.armed != now {
            return; // made stale by a change
        }
        d.armed = SimTime::MAX;
        self.service(ld, now);
    }

    /// Brings `ld` up to `now`: everything due at or before it, in time
    /// order (changes before transmissions at one instant); then arms the
    /// next wake-up.
    pub(super) fn service(&mut self, ld: LinkDirId, now: SimTime) {
        loop {
            let (change, tx) = self.due(ld);
            let change = change.filter(|c| c.0 <= now);
            let tx = tx.filter(|&t| t <= now);
            match (change, tx) {
                (Some((t, c)), Some(x)) if t <= x => self.apply_change(ld, t, c),
                (Some((t, c)), None) => self.apply_change(ld, t, c),
                (_, Some(t)) => self.transmit(ld, t),
                (None, None) => break,
            }
        }
        self.start_next(ld, now);
        let (change, tx) = self.due(ld);
        let at = change
            .map_or(SimTime::MAX, |c| c.0)
            .min(tx.unwrap_or(SimTime::MAX));
        let d = self.dynamics(ld);
        if at < SimTime::MAX && (at < d.armed || d.armed <= now) {
            d.armed = at;
            self.q.schedule(at, Ev::Link(ld)).expect("not in the past");
        }
    }

    /// The next change and the next transmission (a packet's last bit, or
    /// a trace opportunity with something to carry), whenever they are.
    fn due(&mut self, ld: LinkDirId) -> (Option<(SimTime, Change)>, Option<SimTime>) {
        let link = &self.links[ld as usize];
        let busy = !link.queue.is_empty();
        let d = link.dynamics.as_deref().expect("a changing link");
        let tx = if !d.is_up() {
            None
        } else {
            match &d.capacity {
                Capacity::Rate(_) => Some(d.finish_time()).filter(|&t| t < SimTime::MAX),
                Capacity::Trace(o) if busy || d.current.is_some() => o.time_of(d.cursor),
                Capacity::Trace(_) => None,
            }
        };
        (d.next_change(), tx)
    }

    fn apply_change(&mut self, ld: LinkDirId, t: SimTime, c: Change) {
        let link = &mut self.links[ld as usize];
        let d = link.dynamics.as_deref_mut().expect("a changing link");
        d.apply(t, c);
        match c {
            Change::Rate(r) => link.rate_bps = r,
            Change::Delay(x) => link.delay = x,
            Change::Up => {
                self.start_next(ld, t);
                self.note_idle(ld, t);
            }
            Change::Down => self.go_down(ld, t),
        }
    }

    /// The link direction goes down at `t`.
    fn go_down(&mut self, ld: LinkDirId, t: SimTime) {
        let link = &mut self.links[ld as usize];
        let d = link.dynamics.as_deref_mut().expect("a changing link");
        let mut lost: Vec<PacketRef> = d.current.take().map(|(p, _)| p).into_iter().collect();
        d.idle_since = t;
        let policy = d.on_down;
        if policy.lose_wire {
            while let Some((_, p, _)) = link.in_transit.pop_front() {
                lost.push(p);
            }
            // Nothing ahead on the wire any more.
            d.last_arrival = t;
        }
        let mut drops = std::mem::take(&mut self.drops);
        if policy.drop_queued {
            while let Some(p) = link.queue.dequeue(&mut self.packets, t, &mut drops) {
                lost.push(p);
            }
        }
        self.drop_all(ld, drops, t);
        for p in lost {
            self.drop(p, DropReason::LINK_DOWN, DropSite::Link(ld), t);
        }
    }

    /// Rate mode: the packet under way leaves (its last bit at `t`), the
    /// next one starts. Trace mode: the opportunity at `t` carries what it
    /// can.
    fn transmit(&mut self, ld: LinkDirId, t: SimTime) {
        let d = self.dynamics(ld);
        if !d.is_trace() {
            d.progress(t);
            let (p, left) = d.current.take().expect("a packet under way");
            debug_assert_eq!(left, 0, "its last bit left");
            self.put_on_wire(ld, p, t);
            self.start_next(ld, t);
            return self.note_idle(ld, t);
        }
        let mut budget = match &d.capacity {
            Capacity::Trace(o) => o.bytes as u128,
            Capacity::Rate(_) => unreachable!(),
        };
        d.cursor += 1;
        while budget > 0 {
            let d = self.dynamics(ld);
            if d.current.is_none() {
                let Some(p) = self.take_next(ld, t) else {
                    break;
                };
                let size = self.packets[p].size_bytes as u128;
                let d = self.dynamics(ld);
                d.current = Some((p, size));
            }
            let d = self.dynamics(ld);
            let (p, left) = d.current.as_mut().expect("a packet under way");
            let (p, amount) = (*p, budget.min(*left));
            *left -= amount;
            budget -= amount;
            if *left == 0 {
                d.current = None;
                self.put_on_wire(ld, p, t);
            }
        }
        // With packets still queued the time is overwritten before an
        // arrival could read it (an arrival reads it only at an empty queue).
        self.note_idle(ld, t);
    }

    /// Rate mode: starts the next queued packet at `t` if the transmitter
    /// is up and free.
    fn start_next(&mut self, ld: LinkDirId, t: SimTime) {
        let d = self.dynamics(ld);
        if d.is_trace() || !d.is_up() || d.current.is_some() {
            return;
        }
        match self.take_next(ld, t) {
            Some(p) => {
                let bits = self.packets[p].size_bytes as u128 * 8;
                let d = self.dynamics(ld);
                d.current = Some((p, bits * 1_000_000_000));
                d.progress_at = t;
            }
            None => {
                let d = self.dynamics(ld);
                d.progress_at = d.progress_at.max(t);
            }
        }
    }

    /// The transmitter, just freed at `t` (a packet's last bit left, or
    /// the link came up), is idle from `t` if nothing followed. Only
    /// there: `service` also tries to start a packet at every arrival and
    /// capacity sample, and an idle period RED ages its average over
    /// would otherwise restart at each of them.
    fn note_idle(&mut self, ld: LinkDirId, t: SimTime) {
        let d = self.dynamics(ld);
        if d.current.is_none() {
            d.idle_since = t;
        }
    }

    /// Takes the next packet from `ld`'s queue at `t` (its start on the
    /// wire: captured and traced as the fixed path does).
    fn take_next(&mut self, ld: LinkDirId, t: SimTime) -> Option<PacketRef> {
        let mut drops = std::mem::take(&mut self.drops);
        let link = &mut self.links[ld as usize];
        let p = link.queue.dequeue(&mut self.packets, t, &mut drops);
        let lidx = link.link as usize;
        self.drop_all(ld, drops, t);
        let p = p?;
        if self.capturing {
            self.capture(lidx, p, t);
        }
        if self.rec.trace_on {
            self.rec.trace(trace_kind::DEQUEUE, ld, &self.packets[p], t);
        }
        Some(p)
    }

    /// `p`'s last bit leaves at `t`: it propagates with the delay (and
    /// jitter) in force.
    fn put_on_wire(&mut self, ld: LinkDirId, p: PacketRef, t: SimTime) {
        let link = &mut self.links[ld as usize];
        let d = link.dynamics.as_deref_mut().expect("a changing link");
        let delay = match d.jitter.as_mut() {
            Some(j) => j.delay(d.delay_now),
            None => d.delay_now,
        };
        let mut at = t + delay;
        if !d.reorder {
            at = at.max(d.last_arrival);
        }
        d.last_arrival = d.last_arrival.max(at);
        d.carried_bytes += self.packets[p].size_bytes as u64;
        let to = link.to;
        let hop = hop_of(&mut self.routes, &self.ports, to, &self.packets[p]);
        let link = &mut self.links[ld as usize];
        let front = link.in_transit.insert_ordered(at, p, hop);
        if front {
            self.q.schedule(at, Ev::Arrive(ld)).expect("future");
        }
    }

    /// Records the queue's drops and puts the scratch list back.
    fn drop_all(&mut self, ld: LinkDirId, mut drops: Vec<(PacketRef, DropReason)>, t: SimTime) {
        for (d, r) in drops.drain(..) {
            self.drop(d, r, DropSite::Link(ld), t);
        }
        self.drops = drops;
    }

    /// One row per sampled direction: the capacity it offered since the
    /// last sample and the bytes it carried (a changing link's whose last
    /// bit left; a fixed link's that started).
    pub(super) fn sample_capacity(&mut self, now: SimTime) {
        let Some(mut probe) = self.capacity.take() else {
            return;
        };
        let mut room = true;
        for k in 0..probe.links.len() {
            let ld = probe.links[k].0;
            if !self.owns_link(ld) {
                continue; // another partition's transmitter
            }
            let (offered, carried) = if self.links[ld as usize].dynamic {
                self.service(ld, now);
                let d = self.dynamics(ld);
                (d.offered_bytes(now), d.carried_bytes)
            } else {
                let l = &self.links[ld as usize];
                (
                    l.rate_bps as f64 * now.as_secs_f64() / 8.0,
                    l.queue.stats.departure_bytes,
                )
            };
            room &= probe.record(now, k, offered, carried);
        }
        if room {
            let at = now + probe.every;
            self.q.schedule_timer(at, Ev::Capacity).expect("future");
        }
        self.capacity = Some(probe);
    }
}
