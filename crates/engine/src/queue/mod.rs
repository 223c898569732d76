//! Queue disciplines behind one trait, with one base that does the
//! accounting.
//!
//! A discipline ([`QueueDiscipline`]) decides policy only: what to hold,
//! what to drop (on enqueue or on dequeue, the arriving packet or another
//! one) and what to send next. [`Queue`] wraps it and keeps the books:
//! arrivals, departures, drops by reason, time-averaged and peak length, and
//! the conservation rule `arrivals = departures + drops + length`, which it
//! checks after every operation in debug builds and at the end of each run.
//! RED, WRED, schedulers (WFQ, DRR) and CoDel fit the same trait: a drop is
//! reported by pushing the packet with its reason into the context.

pub mod classes;
pub mod codel;
pub mod drophead;
pub mod droptail;
pub mod dualpi2;
pub mod fifo;
pub mod fq_codel;
pub mod pie;
pub mod red;
pub mod red_core;
pub mod spec;
pub mod wred;

use crate::net::{DropReason, PacketRef, Packets};
use crate::sim::SimTime;

pub use drophead::DropHead;
pub use droptail::DropTail;
pub use spec::{build_queue, QueueModel, QueueSite, QueueSpec};

/// What a discipline may use and report during one operation.
pub struct QueueCtx<'a> {
    pub now: SimTime,
    /// The packets themselves: a discipline holds references and reads
    /// (or marks) the packets where they lie.
    pub packets: &'a mut Packets,
    /// Packets the discipline dropped during this call, with the reason.
    pub dropped: &'a mut Vec<(PacketRef, DropReason)>,
    /// On enqueue: when the link's transmitter went idle, if it is idle
    /// now (RED ages its average over idle time).
    pub idle_since: Option<SimTime>,
    /// Packets the discipline marked CE (ECN) during this call.
    pub marked: u64,
}

pub trait QueueDiscipline: Send {
    /// Takes `pkt`: holds it, or reports it (or another held packet) dropped.
    fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>);
    /// The next packet to transmit, if any (may also report drops).
    fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<PacketRef>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
    /// The most packets it may hold, if it has a packet limit: the engine
    /// checks every run that it never held more.
    fn limit_packets(&self) -> Option<usize> {
        None
    }
    /// Held packets, in no particular order (end-of-run accounting).
    fn held(&self) -> Vec<PacketRef>;
    /// Short name of the discipline, e.g. "droptail".
    fn kind(&self) -> &'static str;
    /// The largest packet (bytes) that the discipline, while empty, would
    /// accept and hand straight back on the next dequeue with no other
    /// effect (a FIFO: any packet within its limits). The engine then skips
    /// the round trip when the link is idle. Asked once, when the queue is
    /// made, so it must not change during the run. Disciplines that act on
    /// every arrival (RED's average, schedulers' virtual times) keep the
    /// default, None.
    fn passes_through_up_to(&self) -> Option<u64> {
        None
    }
    /// Values of the discipline's own to report at the end of the run, as
    /// extra columns of the queues table (e.g. RED's average queue).
    fn stats(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Values of the discipline's own to sample over time with the queue
    /// length (`measure.queue_sample_ms`), e.g. RED's average.
    fn sample(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// A scheduler's classes and their figures (the `queue_classes` table).
    fn classes(&self) -> Vec<(String, ClassStats)> {
        Vec::new()
    }
}

/// What a scheduler counts per class.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassStats {
    pub arrivals: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    /// Dropped by the class's own discipline (on enqueue or dequeue).
    pub drops: u64,
    /// The class discipline's own end-of-run values (WRED's per-profile
    /// bytes, RED's average...).
    pub extra: Vec<(&'static str, f64)>,
}

/// Counters a [`Queue`] keeps. `repr(C)`: the four an idle link's
/// pass-through touches come first, on the queue's first cache line.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct QueueStats {
    pub arrivals: u64,
    pub arrival_bytes: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    /// Drops by reason, in the order the reasons first occurred.
    pub drops: Vec<(DropReason, u64)>,
    pub drop_bytes: u64,
    /// Packets marked CE instead of dropped (ECN).
    pub ecn_marks: u64,
    pub max_packets: usize,
    pub max_bytes: u64,
    /// Time integrals of the length (packet*ns and byte*ns).
    pub area_packets: u128,
    pub area_bytes: u128,
    pub last_change: SimTime,
}

impl QueueStats {
    fn count_drop(&mut self, r: DropReason) {
        match self.drops.iter_mut().find(|(x, _)| *x == r) {
            Some((_, n)) => *n += 1,
            None => self.drops.push((r, 1)),
        }
    }

    /// Packets dropped for reason `r`.
    pub fn drops_of(&self, r: DropReason) -> u64 {
        self.drops.iter().find(|(x, _)| *x == r).map_or(0, |x| x.1)
    }
}

impl QueueStats {
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().map(|x| x.1).sum()
    }
}

/// A queue: a discipline plus the bookkeeping every discipline shares.
/// `repr(C)`: what a packet crossing an idle link reads and counts (the
/// kept length, the pass-through size, the first four counters) fills the
/// first 64 bytes; the discipline and the rest follow.
#[repr(C)]
pub struct Queue {
    /// The discipline's length, kept from what goes in and out (a packet
    /// offered, the one dequeued, the ones dropped): the link asks whether
    /// the queue is empty on every packet, and the time integrals need the
    /// length at every change, without a call through the discipline's
    /// vtable (a cache miss each with hundreds of links). Debug builds check
    /// it against the discipline's own count after every call.
    held_packets: usize,
    held_bytes: u64,
    /// The discipline's `passes_through_up_to`, kept here so that a packet
    /// crossing an idle link never touches the discipline (another cache
    /// miss per hop with hundreds of links).
    pass_through_max: Option<u64>,
    pub stats: QueueStats,
    disc: Box<dyn QueueDiscipline>,
}

impl Queue {
    pub fn new(disc: Box<dyn QueueDiscipline>) -> Self {
        let (held_packets, held_bytes) = (disc.len_packets(), disc.len_bytes());
        let pass_through_max = disc.passes_through_up_to();
        Queue {
            disc,
            stats: QueueStats::default(),
            held_packets,
            held_bytes,
            pass_through_max,
        }
    }

    pub fn kind(&self) -> &'static str {
        self.disc.kind()
    }
    pub fn len_packets(&self) -> usize {
        self.held_packets
    }
    pub fn len_bytes(&self) -> u64 {
        self.held_bytes
    }
    pub fn is_empty(&self) -> bool {
        self.held_packets == 0
    }

    /// The kept length is the discipline's (see `held_packets`).
    fn len_agrees(&self) -> bool {
        (self.held_packets, self.held_bytes) == (self.disc.len_packets(), self.disc.len_bytes())
    }
    pub fn held(&self) -> Vec<PacketRef> {
        self.disc.held()
    }
    /// The scheduler's classes (see [`QueueDiscipline::classes`]).
    pub fn classes(&self) -> Vec<(String, ClassStats)> {
        self.disc.classes()
    }
    /// The discipline's own values now (see [`QueueDiscipline::sample`]).
    pub fn discipline_sample(&self) -> Vec<(&'static str, f64)> {
        self.disc.sample()
    }
    /// The discipline's own end-of-run values (see [`QueueDiscipline::stats`]).
    pub fn discipline_stats(&self) -> Vec<(&'static str, f64)> {
        self.disc.stats()
    }

    fn integrate(&mut self, now: SimTime) {
        let dt = now.saturating_sub(self.stats.last_change).as_nanos() as u128;
        self.stats.area_packets += dt * self.held_packets as u128;
        self.stats.area_bytes += dt * self.held_bytes as u128;
        self.stats.last_change = now;
    }

    /// Counts the drops in `dropped[from..]`, which have left the queue
    /// (a packet dropped on arrival counts as having come in first).
    #[inline]
    fn count_drops(&mut self, packets: &Packets, dropped: &[(PacketRef, DropReason)], from: usize) {
        // Most operations drop nothing: that check stays inline, the
        // counting does not.
        if dropped.len() > from {
            self.count_dropped(packets, &dropped[from..]);
        }
    }

    #[cold]
    #[inline(never)]
    fn count_dropped(&mut self, packets: &Packets, dropped: &[(PacketRef, DropReason)]) {
        for &(p, r) in dropped {
            let size = packets[p].size_bytes as u64;
            self.stats.count_drop(r);
            self.stats.drop_bytes += size;
            self.held_packets -= 1;
            self.held_bytes -= size;
        }
    }

    /// For an idle link: if the queue is empty and its discipline passes
    /// packets straight through, counts `pkt` as arrived and departed and
    /// gives it back; otherwise returns None and the caller must go through
    /// `enqueue`/`dequeue`. The books are the same either way (the length
    /// stays 0, so the time integrals do not change).
    #[inline]
    pub fn pass_through(&mut self, pkt: &crate::net::Packet) -> bool {
        let fits = self
            .pass_through_max
            .is_some_and(|max| pkt.size_bytes as u64 <= max);
        if self.held_packets == 0 && fits {
            self.stats.arrivals += 1;
            self.stats.arrival_bytes += pkt.size_bytes as u64;
            self.stats.departures += 1;
            self.stats.departure_bytes += pkt.size_bytes as u64;
            true
        } else {
            false
        }
    }

    /// Offers `pkt` while the transmitter is busy; drops (if any) are
    /// appended to `dropped`.
    pub fn enqueue(
        &mut self,
        pkt: PacketRef,
        packets: &mut Packets,
        now: SimTime,
        dropped: &mut Vec<(PacketRef, DropReason)>,
    ) {
        self.enqueue_at(pkt, packets, now, None, dropped)
    }

    /// Offers `pkt`; `idle_since` is when the transmitter went idle, if it
    /// is idle now.
    pub fn enqueue_at(
        &mut self,
        pkt: PacketRef,
        packets: &mut Packets,
        now: SimTime,
        idle_since: Option<SimTime>,
        dropped: &mut Vec<(PacketRef, DropReason)>,
    ) {
        self.integrate(now);
        let size = packets[pkt].size_bytes as u64;
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += size;
        self.held_packets += 1;
        self.held_bytes += size;
        let before = dropped.len();
        let mut ctx = QueueCtx {
            now,
            packets,
            dropped,
            idle_since,
            marked: 0,
        };
        self.disc.enqueue(pkt, &mut ctx);
        self.stats.ecn_marks += ctx.marked;
        self.count_drops(packets, dropped, before);
        debug_assert!(self.len_agrees(), "queue length kept wrong on enqueue");
        self.stats.max_packets = self.stats.max_packets.max(self.held_packets);
        self.stats.max_bytes = self.stats.max_bytes.max(self.held_bytes);
        debug_assert!(self.balanced(), "queue conservation broken on enqueue");
    }

    /// Takes the next packet to send; drops (if any) are appended to `dropped`.
    pub fn dequeue(
        &mut self,
        packets: &mut Packets,
        now: SimTime,
        dropped: &mut Vec<(PacketRef, DropReason)>,
    ) -> Option<PacketRef> {
        self.integrate(now);
        let before = dropped.len();
        let mut ctx = QueueCtx {
            now,
            packets,
            dropped,
            idle_since: None,
            marked: 0,
        };
        let p = self.disc.dequeue(&mut ctx);
        self.stats.ecn_marks += ctx.marked;
        self.count_drops(packets, dropped, before);
        if let Some(p) = p {
            let size = packets[p].size_bytes as u64;
            self.stats.departures += 1;
            self.stats.departure_bytes += size;
            self.held_packets -= 1;
            self.held_bytes -= size;
        }
        debug_assert!(self.len_agrees(), "queue length kept wrong on dequeue");
        debug_assert!(self.balanced(), "queue conservation broken on dequeue");
        p
    }

    /// arrivals == departures + drops + held.
    pub fn balanced(&self) -> bool {
        self.stats.arrivals
            == self.stats.departures + self.stats.total_drops() + self.disc.len_packets() as u64
    }

    /// It never held more packets than its limit allows.
    pub fn within_limit(&self) -> bool {
        self.disc
            .limit_packets()
            .is_none_or(|l| self.stats.max_packets <= l)
    }

    /// Closes the time integrals at `end`.
    pub fn finish(&mut self, end: SimTime) {
        self.integrate(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Packet;

    /// An idle link's pass-through reads and counts only the queue's
    /// first 64 bytes (see `Queue`).
    #[test]
    fn the_pass_through_fields_fill_the_first_line() {
        use std::mem::offset_of;
        let stats = offset_of!(Queue, stats);
        for off in [
            offset_of!(Queue, held_packets),
            offset_of!(Queue, held_bytes),
            offset_of!(Queue, pass_through_max) + 8,
            stats + offset_of!(QueueStats, arrivals),
            stats + offset_of!(QueueStats, arrival_bytes),
            stats + offset_of!(QueueStats, departures),
            stats + offset_of!(QueueStats, departure_bytes),
        ] {
            assert!(off < 64, "offset {off}");
        }
    }

    pub fn pkt(seq: u64, size: u32) -> Packet {
        crate::net::packet::test_packet(0, seq, size)
    }

    /// `m`'s discipline at the queue of link `name` of `rate_bps`, with
    /// seed 1's streams (a discipline's random stream follows the name).
    pub fn discipline(
        m: &dyn spec::QueueModel,
        name: &str,
        rate_bps: u64,
    ) -> Box<dyn QueueDiscipline> {
        let rng = crate::sim::RngStreams::new(1, 0);
        m.build(&spec::QueueSite {
            rng: &rng,
            name,
            rate_bps,
        })
    }

    /// A queue with a packet store of its own, for tests: packets go in
    /// and come out (dequeued, dropped, held) by value.
    pub struct TestQueue {
        pub q: Queue,
        pub packets: Packets,
    }

    impl TestQueue {
        pub fn new(disc: Box<dyn QueueDiscipline>) -> Self {
            TestQueue {
                q: Queue::new(disc),
                packets: Packets::new(),
            }
        }

        fn out(&mut self, refs: Vec<(PacketRef, DropReason)>, d: &mut Vec<(Packet, DropReason)>) {
            d.extend(refs.into_iter().map(|(r, why)| (self.packets.take(r), why)));
        }

        pub fn enqueue(&mut self, p: Packet, now: SimTime, d: &mut Vec<(Packet, DropReason)>) {
            self.enqueue_at(p, now, None, d)
        }

        pub fn enqueue_at(
            &mut self,
            p: Packet,
            now: SimTime,
            idle_since: Option<SimTime>,
            d: &mut Vec<(Packet, DropReason)>,
        ) {
            let r = self.packets.insert(p);
            let mut refs = Vec::new();
            (self.q).enqueue_at(r, &mut self.packets, now, idle_since, &mut refs);
            self.out(refs, d);
        }

        pub fn dequeue(
            &mut self,
            now: SimTime,
            d: &mut Vec<(Packet, DropReason)>,
        ) -> Option<Packet> {
            let mut refs = Vec::new();
            let r = self.q.dequeue(&mut self.packets, now, &mut refs);
            self.out(refs, d);
            r.map(|r| self.packets.take(r))
        }

        pub fn held(&self) -> Vec<Packet> {
            self.q
                .held()
                .into_iter()
                .map(|r| self.packets[r].clone())
                .collect()
        }
    }

    impl std::ops::Deref for TestQueue {
        type Target = Queue;
        fn deref(&self) -> &Queue {
            &self.q
        }
    }

    impl std::ops::DerefMut for TestQueue {
        fn deref_mut(&mut self) -> &mut Queue {
            &mut self.q
        }
    }

    /// What a discipline called directly in a test needs: a packet store
    /// and a list for its drops.
    #[derive(Default)]
    pub struct TestCtx {
        pub packets: Packets,
        pub dropped: Vec<(PacketRef, DropReason)>,
    }

    impl TestCtx {
        pub fn at(&mut self, now: SimTime) -> QueueCtx<'_> {
            QueueCtx {
                now,
                packets: &mut self.packets,
                dropped: &mut self.dropped,
                idle_since: None,
                marked: 0,
            }
        }
        /// The packets dropped so far, taken out of the store.
        pub fn take_dropped(&mut self) -> Vec<(Packet, DropReason)> {
            let refs = std::mem::take(&mut self.dropped);
            refs.into_iter()
                .map(|(r, why)| (self.packets.take(r), why))
                .collect()
        }
    }

    #[test]
    fn base_accounts_and_averages() {
        let mut q = TestQueue::new(Box::new(DropTail::packets(2)));
        let mut d = Vec::new();
        q.enqueue(pkt(0, 100), SimTime(0), &mut d);
        q.enqueue(pkt(1, 100), SimTime(10), &mut d);
        q.enqueue(pkt(2, 100), SimTime(10), &mut d);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].1, DropReason::QUEUE_OVERFLOW);
        assert_eq!(q.dequeue(SimTime(20), &mut d).unwrap().seq, 0);
        q.finish(SimTime(40));
        assert!(q.balanced());
        assert_eq!(q.stats.drops_of(DropReason::QUEUE_OVERFLOW), 1);
        // 1 pkt for 10 ns, 2 for 10 ns, 1 for 20 ns = 50 packet*ns.
        assert_eq!(q.stats.area_packets, 50);
        assert_eq!(q.stats.max_packets, 2);
        // An arrival not accounted for (neither sent, dropped nor held)
        // breaks the balance the run's end checks.
        q.stats.arrivals += 1;
        assert!(!q.balanced());
    }

    #[test]
    fn pass_through_only_when_empty_and_the_packet_fits() {
        let mut q = TestQueue::new(Box::new(DropTail::bytes(500)));
        assert!(
            !q.pass_through(&pkt(0, 600)),
            "larger than the byte limit: enqueue must drop it"
        );
        assert!(q.pass_through(&pkt(1, 400)));
        let mut d = Vec::new();
        q.enqueue(pkt(2, 100), SimTime(5), &mut d);
        assert!(!q.pass_through(&pkt(3, 100)), "not empty");
        assert_eq!((q.stats.arrivals, q.stats.departures), (2, 1));
        assert!(q.balanced());
    }

    /// The FIFO disciplines: their name in the queues table, the packets
    /// held in order, and the pass-through rule of an idle link: an empty
    /// queue lets through a packet it could ever hold, none larger than
    /// its limit.
    #[test]
    fn fifo_kinds_held_packets_and_pass_through() {
        let fifos: [(Box<dyn QueueDiscipline>, &str); 2] = [
            (Box::new(DropTail::new(None, Some(300))), "droptail"),
            (Box::new(DropHead::new(None, Some(300))), "drophead"),
        ];
        for (disc, kind) in fifos {
            let mut q = TestQueue::new(disc);
            assert_eq!(q.kind(), kind);
            assert!(q.pass_through(&pkt(0, 300)), "{kind}");
            assert!(
                !q.pass_through(&pkt(1, 301)),
                "{kind}: larger than the limit"
            );
            let mut d = Vec::new();
            for s in 2..4 {
                q.enqueue(pkt(s, 100), SimTime(0), &mut d);
            }
            let held: Vec<u64> = q.held().iter().map(|p| p.seq).collect();
            assert_eq!(held, vec![2, 3], "{kind}");
        }
    }

    /// A last-in first-out test discipline that keeps the trait's defaults
    /// (no pass-through, no values of its own) unless told to report one.
    struct Lifo {
        q: Vec<(PacketRef, u64)>,
        report: bool,
    }

    /// Claims a limit of one packet and keeps everything.
    struct Leaky(Lifo);

    impl QueueDiscipline for Leaky {
        fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
            self.0.enqueue(pkt, ctx)
        }
        fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
            self.0.dequeue(ctx)
        }
        fn len_packets(&self) -> usize {
            self.0.len_packets()
        }
        fn len_bytes(&self) -> u64 {
            self.0.len_bytes()
        }
        fn held(&self) -> Vec<PacketRef> {
            self.0.held()
        }
        fn kind(&self) -> &'static str {
            "leaky"
        }
        fn limit_packets(&self) -> Option<usize> {
            Some(1)
        }
    }

    /// The end-of-run check sees a discipline hold more than its limit,
    /// and the real ones at their limit pass.
    #[test]
    fn holding_more_than_the_limit_is_caught() {
        let lifo = Lifo {
            q: Vec::new(),
            report: false,
        };
        let mut q = TestQueue::new(Box::new(Leaky(lifo)));
        let mut d = Vec::new();
        q.enqueue(pkt(1, 100), SimTime(0), &mut d);
        assert!(q.within_limit());
        q.enqueue(pkt(2, 100), SimTime(0), &mut d);
        assert!(!q.within_limit());
        let mut full = TestQueue::new(Box::new(DropTail::packets(2)));
        for s in 0..5 {
            full.enqueue(pkt(s, 100), SimTime(0), &mut d);
        }
        assert!(full.within_limit() && full.stats.max_packets == 2);
    }

    impl QueueDiscipline for Lifo {
        fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
            self.q.push((pkt, ctx.packets[pkt].size_bytes as u64));
        }
        fn dequeue(&mut self, _ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
            self.q.pop().map(|(p, _)| p)
        }
        fn len_packets(&self) -> usize {
            self.q.len()
        }
        fn len_bytes(&self) -> u64 {
            self.q.iter().map(|&(_, size)| size).sum()
        }
        fn held(&self) -> Vec<PacketRef> {
            self.q.iter().map(|&(p, _)| p).collect()
        }
        fn kind(&self) -> &'static str {
            "lifo"
        }
        fn stats(&self) -> Vec<(&'static str, f64)> {
            if self.report {
                vec![("depth_x2", 2.0 * self.q.len() as f64)]
            } else {
                Vec::new()
            }
        }
    }

    #[test]
    fn the_base_forwards_what_the_discipline_says() {
        let mut q = TestQueue::new(Box::new(Lifo {
            q: Vec::new(),
            report: true,
        }));
        assert_eq!(q.kind(), "lifo");
        assert!(q.is_empty());
        assert!(
            !q.pass_through(&pkt(0, 100)),
            "the trait's default: no pass-through"
        );
        let mut d = Vec::new();
        q.enqueue(pkt(1, 100), SimTime(0), &mut d);
        q.enqueue(pkt(2, 300), SimTime(0), &mut d);
        assert!(!q.is_empty());
        assert_eq!((q.len_packets(), q.len_bytes()), (2, 400));
        let mut held: Vec<u64> = q.held().iter().map(|p| p.seq).collect();
        held.sort_unstable();
        assert_eq!(held, vec![1, 2]);
        assert_eq!(q.discipline_stats(), vec![("depth_x2", 4.0)]);
        assert_eq!(q.dequeue(SimTime(5), &mut d).map(|p| p.seq), Some(2));
        assert!(
            DropTail::packets(5).stats().is_empty(),
            "FIFOs report nothing of their own"
        );
    }

    #[test]
    fn the_base_keeps_byte_books_too() {
        let mut q = TestQueue::new(Box::new(DropTail::packets(2)));
        let mut d = Vec::new();
        assert!(q.pass_through(&pkt(9, 50)));
        assert_eq!(q.stats.arrival_bytes, 50);
        assert_eq!(q.stats.departure_bytes, 50);
        q.enqueue(pkt(0, 100), SimTime(0), &mut d);
        q.enqueue(pkt(1, 200), SimTime(10), &mut d);
        q.enqueue(pkt(2, 400), SimTime(10), &mut d); // dropped: full
        assert_eq!(q.stats.drop_bytes, 400);
        assert_eq!(q.dequeue(SimTime(20), &mut d).map(|p| p.seq), Some(0));
        q.finish(SimTime(30));
        // 100 B for 10 ns, 300 B for 10 ns, 200 B for 10 ns.
        assert_eq!(q.stats.area_bytes, 1000 + 3000 + 2000);
        assert_eq!(q.stats.max_bytes, 300);
        assert_eq!(q.stats.arrival_bytes, 50 + 700);
        assert_eq!(q.stats.departure_bytes, 50 + 100);
    }
}
