//! CoDel, Controlled Delay (RFC 8289), as a queue discipline, and its
//! per-queue state machine shared with FQ-CoDel (`fq_codel.rs`).
//!
//! CoDel watches the sojourn time of the packets it dequeues. Once it has
//! been above `target` (5 ms) for at least `interval` (100 ms) it enters
//! the dropping state and drops a head packet; further drops follow at
//! `interval / sqrt(count)` (the control law, RFC 8289 section 3.3) until
//! a packet's sojourn falls below target. Re-entering the dropping state
//! soon after leaving it (within 16 intervals) starts the count near where
//! it stopped (section 5.4). A queue holding at most one MTU is never
//! "above target" (section 5.3). With `ecn`, ECN-capable packets are marked
//! CE instead of dropped. Arrivals beyond `limit_packets` are dropped
//! (`queue_overflow`); CoDel's own drops count as `codel`.

use super::spec::{QueueModel, QueueSite};
use super::{QueueCtx, QueueDiscipline};
use crate::net::packet::ecn;
use crate::net::{DropReason, PacketRef};
use crate::scenario::check::Checker;
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::VecDeque;

/// CoDel's (and FQ-CoDel's) drop from the head of a queue.
pub const DROP: DropReason = DropReason::new("codel");

pub fn default_target_ms() -> f64 {
    5.0
}
pub fn default_interval_ms() -> f64 {
    100.0
}
fn default_limit() -> u64 {
    1000
}
fn default_mtu() -> u32 {
    1500
}

/// CoDel (RFC 8289); defaults are the RFC's.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodelSpec {
    #[serde(default = "default_target_ms")]
    pub target_ms: f64,
    #[serde(default = "default_interval_ms")]
    pub interval_ms: f64,
    #[serde(default = "default_limit")]
    pub limit_packets: u64,
    /// Largest packet: a queue of at most this many bytes is never above target.
    #[serde(default = "default_mtu")]
    pub mtu_bytes: u32,
    #[serde(default)]
    pub ecn: bool,
}

/// Checks of the CoDel parameters (CoDel's and FQ-CoDel's).
pub fn check_codel(path: &str, target_ms: f64, interval_ms: f64, c: &mut Checker) {
    c.positive(format_args!("{path}.target_ms"), target_ms);
    c.positive(format_args!("{path}.interval_ms"), interval_ms);
    if target_ms >= interval_ms {
        let msg = format!("must be above target_ms ({target_ms}); RFC 8289 uses 5 and 100 ms");
        c.err(format!("{path}.interval_ms"), msg);
    }
}

impl super::spec::Drops for CodelSpec {
    const DROP_REASONS: &'static [DropReason] = &[DROP];
}

impl QueueModel for CodelSpec {
    fn validate(&self, path: &str, _rate_bps: f64, c: &mut Checker) {
        check_codel(path, self.target_ms, self.interval_ms, c);
        c.at_least_one(
            format_args!("{path}.limit_packets"),
            Some(self.limit_packets),
        );
    }
    fn build(&self, _site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        Box::new(Codel {
            q: TimedQueue::default(),
            state: CodelState::new(self.params()),
            limit: self.limit_packets as usize,
        })
    }
}

impl CodelSpec {
    fn params(&self) -> CodelParams {
        CodelParams {
            target: SimTime::from_millis_f64(self.target_ms),
            interval: SimTime::from_millis_f64(self.interval_ms),
            mtu: self.mtu_bytes as u64,
            ecn: self.ecn,
        }
    }
}

/// Packets with their enqueue times and sizes (bytes).
#[derive(Default)]
pub struct TimedQueue {
    q: VecDeque<(SimTime, PacketRef, u32)>,
    bytes: u64,
}

impl TimedQueue {
    /// Holds `p`, of `size` bytes, from `now`.
    pub fn push(&mut self, now: SimTime, p: PacketRef, size: u32) {
        self.bytes += size as u64;
        self.q.push_back((now, p, size));
    }
    pub fn pop(&mut self) -> Option<(SimTime, PacketRef)> {
        let (t, p, size) = self.q.pop_front()?;
        self.bytes -= size as u64;
        Some((t, p))
    }
    pub fn len(&self) -> usize {
        self.q.len()
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn held(&self) -> impl Iterator<Item = PacketRef> + '_ {
        self.q.iter().map(|&(_, p, _)| p)
    }
    /// When the head packet arrived.
    pub fn head_time(&self) -> Option<SimTime> {
        self.q.front().map(|x| x.0)
    }
    /// How long the head packet has waited.
    pub fn head_sojourn(&self, now: SimTime) -> Option<SimTime> {
        self.q.front().map(|(t, _, _)| now.saturating_sub(*t))
    }
}

#[derive(Clone, Copy, Debug)]
pub struct CodelParams {
    pub target: SimTime,
    pub interval: SimTime,
    pub mtu: u64,
    pub ecn: bool,
}

/// The RFC 8289 section 5 state of one queue.
#[derive(Clone, Debug)]
pub struct CodelState {
    p: CodelParams,
    first_above_time: Option<SimTime>,
    drop_next: SimTime,
    count: u32,
    lastcount: u32,
    dropping: bool,
    /// Sojourn time of the last packet dequeued.
    pub last_sojourn: SimTime,
}

impl CodelState {
    pub fn new(p: CodelParams) -> Self {
        CodelState {
            p,
            first_above_time: None,
            drop_next: SimTime::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
            last_sojourn: SimTime::ZERO,
        }
    }

    /// t + interval / sqrt(count) (section 3.3).
    fn control_law(&self, t: SimTime) -> SimTime {
        let gap = self.p.interval.as_secs_f64() / (self.count.max(1) as f64).sqrt();
        t + SimTime::from_secs_f64(gap)
    }

    /// Pops the head; whether it may be dropped (sojourn above target for
    /// an interval, and more than one MTU queued).
    fn dodequeue(&mut self, q: &mut TimedQueue, now: SimTime) -> Option<(PacketRef, bool)> {
        let Some((t, p)) = q.pop() else {
            self.first_above_time = None;
            return None;
        };
        let sojourn = now.saturating_sub(t);
        self.last_sojourn = sojourn;
        let mut ok_to_drop = false;
        if sojourn < self.p.target || q.bytes() <= self.p.mtu {
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(now + self.p.interval),
                Some(f) if now >= f => ok_to_drop = true,
                Some(_) => {}
            }
        }
        Some((p, ok_to_drop))
    }

    /// Marks `p` if it and CoDel are ECN-capable (then it is sent), else
    /// drops it; returns it if marked.
    fn signal(&self, p: PacketRef, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
        let field = &mut ctx.packets[p].ecn;
        if self.p.ecn && ecn::capable(*field) {
            *field = ecn::CE;
            ctx.marked += 1;
            Some(p)
        } else {
            ctx.dropped.push((p, DROP));
            None
        }
    }

    /// The next packet to send (section 5.5), dropping as CoDel says.
    pub fn dequeue(&mut self, q: &mut TimedQueue, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
        let now = ctx.now;
        let Some((mut p, mut ok)) = self.dodequeue(q, now) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if let Some(marked) = self.signal(p, ctx) {
                    self.drop_next = self.control_law(self.drop_next);
                    return Some(marked);
                }
                match self.dodequeue(q, now) {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some((next, next_ok)) => {
                        (p, ok) = (next, next_ok);
                        if ok {
                            self.drop_next = self.control_law(self.drop_next);
                        } else {
                            self.dropping = false;
                        }
                    }
                }
            }
        } else if ok {
            self.enter_dropping(now);
            match self.signal(p, ctx) {
                Some(marked) => return Some(marked),
                None => p = self.dodequeue(q, now)?.0,
            }
        }
        Some(p)
    }

    /// Section 5.4: a new dropping state, its count reused when the last
    /// one ended lately.
    fn enter_dropping(&mut self, now: SimTime) {
        self.dropping = true;
        let delta = self.count.saturating_sub(self.lastcount);
        let recent =
            now.saturating_sub(self.drop_next).as_nanos() < 16 * self.p.interval.as_nanos();
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.drop_next = self.control_law(now);
        self.lastcount = self.count;
    }
}

/// The `QueueDiscipline` length and held-packet methods of a discipline
/// that keeps its packets in a `q: TimedQueue` field.
#[macro_export]
macro_rules! timed_queue_methods {
    () => {
        fn len_packets(&self) -> usize {
            self.q.len()
        }
        fn len_bytes(&self) -> u64 {
            self.q.bytes()
        }
        fn held(&self) -> Vec<$crate::net::PacketRef> {
            self.q.held().collect()
        }
        fn limit_packets(&self) -> Option<usize> {
            Some(self.limit)
        }
    };
}

pub struct Codel {
    q: TimedQueue,
    state: CodelState,
    limit: usize,
}

impl QueueDiscipline for Codel {
    fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
        if self.q.len() >= self.limit {
            ctx.dropped.push((pkt, DropReason::QUEUE_OVERFLOW));
        } else {
            self.q.push(ctx.now, pkt, ctx.packets[pkt].size_bytes);
        }
    }
    fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
        self.state.dequeue(&mut self.q, ctx)
    }
    crate::timed_queue_methods!();
    fn kind(&self) -> &'static str {
        "codel"
    }
    fn sample(&self) -> Vec<(&'static str, f64)> {
        vec![("sojourn_ms", self.state.last_sojourn.as_secs_f64() * 1e3)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Packet;
    use crate::queue::tests::{pkt, TestCtx};

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// Holds `p` in `q` from `at`, the packet kept in `tc`'s store.
    fn push(q: &mut TimedQueue, tc: &mut TestCtx, at: SimTime, p: Packet) {
        let size = p.size_bytes;
        q.push(at, tc.packets.insert(p), size);
    }

    fn state() -> CodelState {
        CodelState::new(CodelParams {
            target: ms(5),
            interval: ms(100),
            mtu: 1500,
            ecn: false,
        })
    }

    /// A standing queue: 20 packets of 1000 bytes enqueued at 0, one more
    /// each time one leaves, one dequeue every `step`; returns the drop
    /// times.
    fn standing(st: &mut CodelState, step: u64, until: u64) -> Vec<u64> {
        let (mut q, mut tc) = (TimedQueue::default(), TestCtx::default());
        for s in 0..20 {
            push(&mut q, &mut tc, ms(0), pkt(s, 1000));
        }
        let mut drops = Vec::new();
        let mut t = 0;
        let mut seq = 20;
        while t <= until {
            st.dequeue(&mut q, &mut tc.at(ms(t)));
            drops.extend(tc.take_dropped().iter().map(|_| t));
            while q.len() < 20 {
                push(&mut q, &mut tc, ms(t), pkt(seq, 1000));
                seq += 1;
            }
            t += step;
        }
        drops
    }

    /// RFC 8289: the first drop comes one interval after the sojourn time
    /// first exceeds target; later ones at interval / sqrt(count) after the
    /// previous: 100, 70.7, 57.7, 50 ms...
    #[test]
    fn drops_start_after_an_interval_above_target_and_follow_the_control_law() {
        let mut st = state();
        // Dequeue every 10 ms, 20 packets queued: every sojourn is 200 ms.
        let drops = standing(&mut st, 10, 600);
        // First above target at 0 ms (sojourn 0? no: the first packets
        // waited 0 ms at t = 0, so above target from 10 ms): drop at 110.
        assert_eq!(drops[0], 110);
        // Then at drop_next = 110 + 100/sqrt(1) = 210, + 100/sqrt(2) = 280.7
        // (seen at 290), + 100/sqrt(3) = 338.5 (at 340), + 50 = 388.5 (390).
        assert_eq!(&drops[1..5], &[210, 290, 340, 390]);
    }

    #[test]
    fn below_target_or_one_mtu_it_never_drops() {
        let mut st = state();
        let (mut q, mut tc) = (TimedQueue::default(), TestCtx::default());
        for t in 0..1000u64 {
            push(&mut q, &mut tc, ms(t), pkt(t, 1000));
            let mut ctx = tc.at(ms(t) + SimTime::from_micros(4_900));
            assert!(st.dequeue(&mut q, &mut ctx).is_some());
            assert!(tc.dropped.is_empty(), "sojourn 4.9 ms < target");
        }
        // A long sojourn but a single packet queued: not above target.
        let mut st = state();
        for t in 0..50u64 {
            push(&mut q, &mut tc, ms(10 * t), pkt(t, 1000));
            st.dequeue(&mut q, &mut tc.at(ms(10 * t + 50)));
            assert!(tc.dropped.is_empty());
        }
    }

    #[test]
    fn a_new_dropping_state_soon_after_reuses_the_count() {
        let mut st = state();
        standing(&mut st, 10, 600);
        let before = st.count;
        assert!(before > 3);
        // Leave the dropping state, then come back within 16 intervals.
        st.dropping = false;
        st.lastcount = 2;
        st.enter_dropping(st.drop_next + ms(200));
        assert_eq!(st.count, before - 2, "count - lastcount");
        st.dropping = false;
        st.enter_dropping(st.drop_next + ms(1700));
        assert_eq!(st.count, 1, "more than 16 intervals later: start again");
        // At the bounds (RFC 8289 5.4: delta > 1, now - drop_next < 16
        // intervals): exactly 16 intervals later starts again, and so
        // does a delta of 1.
        (st.count, st.lastcount, st.dropping) = (9, 2, false);
        st.enter_dropping(st.drop_next + ms(1600) - SimTime(1));
        assert_eq!(st.count, 7, "just under 16 intervals");
        (st.count, st.lastcount, st.dropping) = (9, 2, false);
        st.enter_dropping(st.drop_next + ms(1600));
        assert_eq!(st.count, 1, "16 intervals exactly");
        (st.count, st.lastcount, st.dropping) = (3, 2, false);
        st.enter_dropping(st.drop_next);
        assert_eq!(st.count, 1, "a delta of 1");
        (st.count, st.lastcount, st.dropping) = (4, 2, false);
        st.enter_dropping(st.drop_next);
        assert_eq!(st.count, 2, "a delta of 2");
    }

    #[test]
    fn with_ecn_capable_packets_it_marks_instead() {
        let mut st = CodelState::new(CodelParams {
            target: ms(5),
            interval: ms(100),
            mtu: 1500,
            ecn: true,
        });
        let (mut q, mut tc) = (TimedQueue::default(), TestCtx::default());
        for s in 0..20 {
            let mut p = pkt(s, 1000);
            p.ecn = ecn::ECT0;
            push(&mut q, &mut tc, ms(0), p);
        }
        let mut marks = 0;
        for t in (10..=300).step_by(10) {
            let mut ctx = tc.at(ms(t));
            if let Some(p) = st.dequeue(&mut q, &mut ctx) {
                let marked = ctx.marked;
                assert_eq!(
                    marked,
                    (tc.packets[p].ecn == ecn::CE) as u64,
                    "counted once"
                );
                marks += marked;
            }
            assert!(tc.dropped.is_empty(), "marked, not dropped");
            let mut p = pkt(100 + t, 1000);
            p.ecn = ecn::ECT0;
            push(&mut q, &mut tc, ms(t), p);
        }
        assert_eq!(marks, 3, "at 110, 210 and 290 ms");
    }

    /// Without `ecn`, ECN-capable packets are dropped like any other.
    #[test]
    fn without_ecn_capable_packets_are_dropped() {
        let (mut q, mut tc) = (TimedQueue::default(), TestCtx::default());
        for s in 0..20 {
            let mut p = pkt(s, 1000);
            p.ecn = ecn::ECT0;
            push(&mut q, &mut tc, ms(0), p);
        }
        let mut st = state();
        for t in (10..=120).step_by(10) {
            let mut ctx = tc.at(ms(t));
            st.dequeue(&mut q, &mut ctx);
            assert_eq!(ctx.marked, 0);
        }
        assert_eq!(tc.take_dropped().len(), 1, "at 110 ms");
    }

    /// The discipline: arrivals over its limit overflow, packets leave
    /// as the state machine says, and it samples the last sojourn.
    #[test]
    fn the_discipline_holds_its_limit_and_reports_sojourns() {
        let spec: CodelSpec = serde_json::from_str(r#"{"limit_packets": 3}"#).unwrap();
        let mut q = crate::queue::tests::TestQueue::new(crate::queue::tests::discipline(
            &spec, "l", 1_000_000,
        ));
        let mut d = Vec::new();
        for s in 0..5 {
            q.enqueue(pkt(s, 100), ms(0), &mut d);
        }
        assert_eq!(d.len(), 2);
        assert!(d.iter().all(|(_, why)| *why == DropReason::QUEUE_OVERFLOW));
        assert_eq!(q.dequeue(ms(2), &mut d).map(|p| p.seq), Some(0));
        assert_eq!(q.kind(), "codel");
        assert_eq!(q.discipline_sample(), [("sojourn_ms", 2.0)]);
        assert!(q.balanced());
    }

    /// A sojourn of exactly target is not below it (RFC 8289 5.5's
    /// `sojourn_time < TARGET`): with a standing queue of five packets,
    /// each leaving after exactly 5 ms, the first drop comes an interval
    /// after the first such departure.
    #[test]
    fn a_sojourn_of_exactly_target_counts_as_above() {
        let mut st = state();
        let (mut q, mut tc) = (TimedQueue::default(), TestCtx::default());
        let mut first_drop = None;
        for t in 0..300u64 {
            push(&mut q, &mut tc, ms(t), pkt(t, 1000));
            if t >= 5 {
                st.dequeue(&mut q, &mut tc.at(ms(t)));
                if first_drop.is_none() && !tc.dropped.is_empty() {
                    first_drop = Some(t);
                }
            }
        }
        assert_eq!(first_drop, Some(105));
    }

    /// An empty queue says so; a packet held makes it non-empty until it
    /// leaves.
    #[test]
    fn the_timed_queue_counts_its_packets_and_bytes() {
        let (mut q, mut tc) = (TimedQueue::default(), TestCtx::default());
        assert!(q.is_empty() && q.head_time().is_none());
        push(&mut q, &mut tc, ms(3), pkt(0, 700));
        push(&mut q, &mut tc, ms(4), pkt(1, 300));
        assert!(!q.is_empty());
        assert_eq!((q.len(), q.bytes(), q.head_time()), (2, 1000, Some(ms(3))));
        assert_eq!(q.head_sojourn(ms(10)), Some(ms(7)));
        assert_eq!(q.pop().map(|(t, _)| t), Some(ms(3)));
        assert_eq!((q.len(), q.bytes()), (1, 300));
        q.pop();
        assert!(q.is_empty() && q.bytes() == 0 && q.pop().is_none());
    }

    /// Left out, every parameter is RFC 8289's (5 and 100 ms), with a
    /// 1000-packet limit and a 1500-byte MTU; a zero limit is refused.
    #[test]
    fn the_defaults_are_the_rfcs_and_the_limit_is_checked() {
        let spec: CodelSpec = serde_json::from_str("{}").unwrap();
        assert_eq!((spec.target_ms, spec.interval_ms), (5.0, 100.0));
        assert_eq!(
            (spec.limit_packets, spec.mtu_bytes, spec.ecn),
            (1000, 1500, false)
        );
        let mut c = Checker::default();
        spec.validate("q", 1e6, &mut c);
        assert!(c.errs.is_empty());
        let zero = CodelSpec {
            limit_packets: 0,
            ..spec
        };
        zero.validate("q", 1e6, &mut c);
        assert_eq!(c.errs[0].path, "q.limit_packets");
    }

    #[test]
    fn bad_parameters_are_named() {
        let mut c = Checker::default();
        check_codel("q", 100.0, 5.0, &mut c);
        assert_eq!(c.errs[0].path, "q.interval_ms");
        let mut c = Checker::default();
        check_codel("q", -1.0, 100.0, &mut c);
        assert_eq!(c.errs[0].path, "q.target_ms");
    }
}
