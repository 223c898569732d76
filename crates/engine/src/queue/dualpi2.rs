//! DualPI2, the coupled dual-queue AQM of RFC 9332 (its Appendix A):
//! packets with ECT(1) or CE go to the L4S queue, all others to the
//! Classic queue, both within one shared `limit`.
//!
//! - **PI2** (A.1): every `t_update` the base probability moves by
//!   `alpha (qdelay - target) + beta (qdelay - qdelay_prev)`, qdelay the
//!   Classic queue's head sojourn; the Classic queue drops (or marks
//!   ECT(0)) with p_C = p'^2, at most p_Cmax = min(1 / k^2, 1), at random.
//! - **Coupling**: the L4S queue marks with p_L = max(p'_L, p_CL), p_CL =
//!   min(k p', 1), where p'_L is its native ramp (0 below `min_th_us` of
//!   head sojourn, 1 above `min_th_us + range_us`, linear between, and 0
//!   while it holds no more than `th_len_packets`); marking is linear, not
//!   random (A.1's `recur`).
//! - **Overload** (section 4.2.3): once p_C saturates at p_Cmax, L4S
//!   packets are dropped with p_C as Classic ones are, so unresponsive
//!   traffic cannot take the L4S queue.
//! - **Scheduler**: a time-shifted FIFO (section 4.2.2 names it as one of
//!   the choices): the head that arrived first goes, the L4S head counted
//!   as `tshift_ms` earlier than it arrived.
//!
//! Defaults are A.1's for RTT_max 100 ms and target 15 ms: t_update =
//! min(target, RTT_max / 3) = 15 ms, alpha = 0.1 t_update / RTT_max^2 =
//! 0.15 Hz, beta = 0.3 / RTT_max = 3 Hz, k = 2, min_th 800 us, range
//! 400 us, th_len 1 packet; `limit_ms` 250 ms at the link rate. The
//! scheduler's time shift (the RFC leaves it to the implementation) is
//! `tshift_ms` (30 ms, twice the Classic target).

use super::codel::TimedQueue;
use super::spec::{QueueModel, QueueSite};
use super::{QueueCtx, QueueDiscipline};
use crate::net::packet::ecn;
use crate::net::{DropReason, PacketRef};
use crate::scenario::check::Checker;
use crate::sim::{uniform, SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

/// A Classic drop (p_C), or an L4S drop in overload.
pub const DROP: DropReason = DropReason::new("dualpi2");

macro_rules! defaults {
    ($($f:ident: $t:ty = $v:expr;)*) => { $(fn $f() -> $t { $v })* };
}
defaults! {
    d_target: f64 = 15.0; d_tupdate: f64 = 15.0; d_alpha: f64 = 0.15; d_beta: f64 = 3.0;
    d_k: f64 = 2.0; d_min_th: f64 = 800.0; d_range: f64 = 400.0; d_th_len: u64 = 1;
    d_limit_ms: f64 = 250.0; d_tshift: f64 = 30.0; d_mtu: u32 = 1500;
}

/// DualPI2 (RFC 9332 Appendix A).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DualPi2Spec {
    /// The Classic queue's delay target, ms.
    #[serde(default = "d_target")]
    pub target_ms: f64,
    /// PI2's update interval, ms.
    #[serde(default = "d_tupdate")]
    pub t_update_ms: f64,
    /// PI2's integral gain, Hz.
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    /// PI2's proportional gain, Hz.
    #[serde(default = "d_beta")]
    pub beta: f64,
    /// The coupling factor k.
    #[serde(default = "d_k")]
    pub k: f64,
    /// The L4S ramp's start, us of head sojourn.
    #[serde(default = "d_min_th")]
    pub min_th_us: f64,
    /// The L4S ramp's width, us (0: a step at min_th).
    #[serde(default = "d_range")]
    pub range_us: f64,
    /// The L4S queue marks only when it holds more packets than this.
    #[serde(default = "d_th_len")]
    pub th_len_packets: u64,
    /// The shared buffer, ms at the link rate.
    #[serde(default = "d_limit_ms")]
    pub limit_ms: f64,
    /// The scheduler's time shift in favour of the L4S queue, ms.
    #[serde(default = "d_tshift")]
    pub tshift_ms: f64,
    /// The MTU the buffer keeps room for, bytes.
    #[serde(default = "d_mtu")]
    pub mtu_bytes: u32,
}

impl super::spec::Drops for DualPi2Spec {
    const DROP_REASONS: &'static [DropReason] = &[DROP];
}

impl QueueModel for DualPi2Spec {
    fn validate(&self, path: &str, _rate_bps: f64, c: &mut Checker) {
        for (f, x) in [
            ("target_ms", self.target_ms),
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("k", self.k),
            ("limit_ms", self.limit_ms),
        ] {
            c.positive(format_args!("{path}.{f}"), x);
        }
        c.interval_ms(format_args!("{path}.t_update_ms"), self.t_update_ms);
        for (f, x) in [
            ("min_th_us", self.min_th_us),
            ("range_us", self.range_us),
            ("tshift_ms", self.tshift_ms),
        ] {
            c.non_negative(format_args!("{path}.{f}"), x);
        }
        c.at_most(format_args!("{path}.limit_ms"), self.limit_ms, 60_000.0);
        c.wire_bytes(format_args!("{path}.mtu_bytes"), self.mtu_bytes, 1);
    }
    fn build(&self, site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        let limit = (site.rate_bps as f64 * self.limit_ms / 1e3 / 8.0) as u64;
        Box::new(DualPi2::new(
            self,
            limit.max(self.mtu_bytes as u64),
            site.stream(),
        ))
    }
}

pub struct DualPi2 {
    l: TimedQueue,
    c: TimedQueue,
    limit_bytes: u64,
    mtu: u64,
    target_s: f64,
    t_update: SimTime,
    alpha: f64,
    beta: f64,
    k: f64,
    p_cmax: f64,
    min_th_s: f64,
    range_s: f64,
    th_len: usize,
    tshift: SimTime,
    rng: SimRng,
    /// The base probability p'.
    pub p: f64,
    qdelay_prev_s: f64,
    last_update: SimTime,
    /// `recur`'s accumulator for the L4S queue.
    count_l: f64,
    pub l4s_marks: u64,
    pub classic_marks: u64,
}

impl DualPi2 {
    pub fn new(s: &DualPi2Spec, limit_bytes: u64, rng: SimRng) -> Self {
        DualPi2 {
            l: TimedQueue::default(),
            c: TimedQueue::default(),
            limit_bytes,
            mtu: s.mtu_bytes as u64,
            target_s: s.target_ms / 1e3,
            t_update: SimTime::from_millis_f64(s.t_update_ms).max(SimTime(1)),
            alpha: s.alpha,
            beta: s.beta,
            k: s.k,
            p_cmax: (1.0 / (s.k * s.k)).min(1.0),
            min_th_s: s.min_th_us / 1e6,
            range_s: s.range_us / 1e6,
            th_len: s.th_len_packets as usize,
            tshift: SimTime::from_millis_f64(s.tshift_ms),
            rng,
            p: 0.0,
            qdelay_prev_s: 0.0,
            last_update: SimTime::ZERO,
            count_l: 0.0,
            l4s_marks: 0,
            classic_marks: 0,
        }
    }

    /// p_C = p'^2, at most p_Cmax.
    pub fn p_c(&self) -> f64 {
        (self.p * self.p).min(self.p_cmax)
    }

    /// p_CL = k p', at most 1.
    pub fn p_cl(&self) -> f64 {
        (self.k * self.p).min(1.0)
    }

    /// The L4S queue's native ramp on its head sojourn `qdelay_s`.
    pub fn laqm(&self, qdelay_s: f64) -> f64 {
        if self.range_s <= 0.0 {
            return f64::from(u8::from(qdelay_s >= self.min_th_s));
        }
        ((qdelay_s - self.min_th_s) / self.range_s).clamp(0.0, 1.0)
    }

    /// One PI2 update (A.1's dualpi2_update) with the Classic delay now.
    pub fn update(&mut self, qdelay_s: f64) {
        self.p +=
            self.alpha * (qdelay_s - self.target_s) + self.beta * (qdelay_s - self.qdelay_prev_s);
        self.p = self.p.clamp(0.0, 1.0);
        self.qdelay_prev_s = qdelay_s;
    }

    /// Runs the updates of every period that ended by `now` (the Classic
    /// head's sojourn is read at each; between events nothing it reads
    /// changes but the time, which the sojourn accounts for).
    fn catch_up(&mut self, now: SimTime) {
        while self.last_update + self.t_update <= now {
            self.last_update += self.t_update;
            let q = self
                .c
                .head_sojourn(self.last_update)
                .map_or(0.0, |t| t.as_secs_f64());
            self.update(q);
        }
    }

    /// A.1's recur: true once the likelihoods add up past 1.
    fn recur_l(&mut self, likelihood: f64) -> bool {
        self.count_l += likelihood;
        if self.count_l > 1.0 {
            self.count_l -= 1.0;
            true
        } else {
            false
        }
    }

    /// Which queue the time-shifted FIFO serves: the L4S one unless the
    /// Classic head has waited `tshift` longer.
    fn serve_l4s(&self) -> bool {
        match (self.l.head_time(), self.c.head_time()) {
            (Some(l), Some(c)) => l.saturating_sub(self.tshift) <= c,
            (Some(_), None) => true,
            _ => false,
        }
    }
}

impl QueueDiscipline for DualPi2 {
    fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
        self.catch_up(ctx.now);
        let size = ctx.packets[pkt].size_bytes;
        if self.l.bytes() + self.c.bytes() + self.mtu > self.limit_bytes {
            return ctx.dropped.push((pkt, DropReason::QUEUE_OVERFLOW));
        }
        // ECT(1) or CE: the L4S identifier (RFC 9331).
        if ctx.packets[pkt].ecn & 1 == 1 {
            self.l.push(ctx.now, pkt, size);
        } else {
            self.c.push(ctx.now, pkt, size);
        }
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
        self.catch_up(ctx.now);
        loop {
            if self.l.is_empty() && self.c.is_empty() {
                return None;
            }
            let p_c = self.p_c();
            if self.serve_l4s() {
                let held = self.l.len();
                let (t, pkt) = self.l.pop()?;
                let sojourn = ctx.now.saturating_sub(t).as_secs_f64();
                if p_c >= self.p_cmax && uniform(&mut self.rng) < p_c {
                    ctx.dropped.push((pkt, DROP));
                    continue;
                }
                let native = if held > self.th_len {
                    self.laqm(sojourn)
                } else {
                    0.0
                };
                let p_l = native.max(self.p_cl());
                if self.recur_l(p_l) {
                    ctx.packets[pkt].ecn = ecn::CE;
                    ctx.marked += 1;
                    self.l4s_marks += 1;
                }
                return Some(pkt);
            }
            let (_, pkt) = self.c.pop()?;
            if uniform(&mut self.rng) < p_c {
                let field = &mut ctx.packets[pkt].ecn;
                if ecn::capable(*field) {
                    *field = ecn::CE;
                    ctx.marked += 1;
                    self.classic_marks += 1;
                } else {
                    ctx.dropped.push((pkt, DROP));
                    continue;
                }
            }
            return Some(pkt);
        }
    }

    fn len_packets(&self) -> usize {
        self.l.len() + self.c.len()
    }

    fn len_bytes(&self) -> u64 {
        self.l.bytes() + self.c.bytes()
    }

    fn held(&self) -> Vec<PacketRef> {
        self.l.held().chain(self.c.held()).collect()
    }

    fn kind(&self) -> &'static str {
        "dualpi2"
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("dualpi2_p", self.p),
            ("dualpi2_l4s_marks", self.l4s_marks as f64),
            ("dualpi2_classic_marks", self.classic_marks as f64),
        ]
    }

    fn sample(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("dualpi2_p", self.p),
            ("l4s_packets", self.l.len() as f64),
            ("classic_packets", self.c.len() as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Packet;
    use crate::queue::tests::TestQueue;
    use crate::sim::RngStreams;

    fn dualpi2() -> DualPi2 {
        let spec: DualPi2Spec = serde_json::from_value(serde_json::json!({})).expect("defaults");
        DualPi2::new(&spec, 1_000_000, RngStreams::new(1, 0).stream("dualpi2"))
    }

    /// A.1's update by hand: Classic delay 25 ms (target 15), 20 ms before:
    /// p' += 0.15 x 0.010 + 3 x 0.005 = 0.0165; p_C = p'^2, p_CL = 2 p'.
    #[test]
    fn the_pi2_update_and_the_coupling_are_rfc_9332s() {
        let mut d = dualpi2();
        d.qdelay_prev_s = 0.020;
        d.update(0.025);
        assert!((d.p - 0.0165).abs() < 1e-12);
        assert!((d.p_c() - 0.0165f64.powi(2)).abs() < 1e-15);
        assert!((d.p_cl() - 0.033).abs() < 1e-12);
        // p_C saturates at 1/k^2 = 0.25, p_CL at 1.
        d.p = 0.8;
        assert_eq!((d.p_c(), d.p_cl()), (0.25, 1.0));
    }

    #[test]
    fn the_l4s_ramp_runs_from_min_th_over_range() {
        let d = dualpi2();
        assert_eq!(d.laqm(0.0007), 0.0);
        assert!((d.laqm(0.001) - 0.5).abs() < 1e-9);
        assert_eq!(d.laqm(0.0013), 1.0);
        // A range of 0: a step at min_th, marking from it on.
        let mut step = dualpi2();
        step.range_s = 0.0;
        let min_th = step.min_th_s;
        assert_eq!(step.laqm(min_th * 0.99), 0.0);
        assert_eq!(step.laqm(min_th), 1.0);
        assert_eq!(step.laqm(min_th * 2.0), 1.0);
    }

    #[test]
    fn recur_marks_exactly_the_likelihood_share() {
        let mut d = dualpi2();
        let marks = (0..1000).filter(|_| d.recur_l(0.25)).count();
        assert_eq!(marks, 249, "the 4th, 8th, ... but the count must pass 1");
    }

    #[test]
    fn the_time_shifted_fifo_favours_l4s_by_tshift() {
        let mut d = dualpi2();
        let mut store = crate::net::Packets::new();
        let a = store.insert(crate::queue::tests::pkt(0, 1000));
        let b = store.insert(crate::queue::tests::pkt(1, 1000));
        d.c.push(SimTime::from_millis(0), a, 1000);
        d.l.push(SimTime::from_millis(25), b, 1000);
        assert!(
            d.serve_l4s(),
            "L4S head 25 ms younger, within the 30 ms shift"
        );
        d.l.pop();
        d.l.push(SimTime::from_millis(35), b, 1000);
        assert!(!d.serve_l4s(), "35 ms younger: the Classic head goes");
    }

    fn built(rate_bps: u64, fields: serde_json::Value) -> TestQueue {
        let spec: DualPi2Spec = serde_json::from_value(fields).expect("spec");
        TestQueue::new(crate::queue::tests::discipline(&spec, "l", rate_bps))
    }

    fn with_ecn(seq: u64, bits: u8) -> Packet {
        let mut p = crate::queue::tests::pkt(seq, 1000);
        p.ecn = bits;
        p
    }

    /// One of the discipline's table values.
    fn stat(q: &TestQueue, name: &str) -> f64 {
        let stats = q.q.disc.stats();
        stats.iter().find(|s| s.0 == name).expect("a value").1
    }

    /// The defaults with p' set, a limit out of the way.
    fn at_p(p: f64) -> TestQueue {
        let spec: DualPi2Spec = serde_json::from_value(serde_json::json!({})).expect("defaults");
        let mut d = DualPi2::new(&spec, 1 << 40, RngStreams::new(1, 0).stream("q"));
        d.p = p;
        TestQueue::new(Box::new(d))
    }

    /// The shared limit: `limit_ms` at the link rate (250 ms at 8 Mbit/s
    /// is 250,000 bytes), keeping an MTU (1500) of room: 1000-byte packets
    /// fit while at most 248,500 bytes are held.
    #[test]
    fn the_shared_limit_keeps_an_mtu_of_room() {
        let mut q = built(8_000_000, serde_json::json!({}));
        let mut d = vec![];
        for i in 0..250 {
            q.enqueue(
                with_ecn(i, if i % 2 == 0 { ecn::ECT1 } else { 0 }),
                SimTime::ZERO,
                &mut d,
            );
        }
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].1, DropReason::QUEUE_OVERFLOW);
        assert_eq!((q.q.len_packets(), q.q.len_bytes()), (249, 249_000));
        // With an MTU of 2000, 248,000 bytes held leave exactly an MTU of
        // room: the next packet is still taken.
        let mut q = built(8_000_000, serde_json::json!({"mtu_bytes": 2000}));
        let mut d = vec![];
        for i in 0..250 {
            q.enqueue(with_ecn(i, 0), SimTime::ZERO, &mut d);
        }
        assert_eq!((q.q.len_packets(), d.len()), (249, 1));
    }

    /// ECT(1) and CE go to the L4S queue, ECT(0) and not-ECT to the
    /// Classic one; the tables read both.
    #[test]
    fn classification_and_what_the_tables_read() {
        let mut q = built(8_000_000, serde_json::json!({}));
        let mut d = vec![];
        for (i, bits) in [ecn::ECT1, ecn::CE, ecn::ECT0, 0, ecn::ECT1]
            .into_iter()
            .enumerate()
        {
            q.enqueue(with_ecn(i as u64, bits), SimTime::ZERO, &mut d);
        }
        let sample = q.q.disc.sample();
        assert_eq!(
            sample,
            [
                ("dualpi2_p", 0.0),
                ("l4s_packets", 3.0),
                ("classic_packets", 2.0)
            ]
        );
        assert_eq!((q.q.len_packets(), q.q.len_bytes()), (5, 5000));
        // Every packet held, each once (the run's end counts them in flight).
        let mut held: Vec<usize> = q.q.disc.held().iter().map(|r| r.index()).collect();
        held.sort_unstable();
        held.dedup();
        assert_eq!(held.len(), 5);
        assert_eq!(q.q.disc.kind(), "dualpi2");
        let names: Vec<&str> = q.q.disc.stats().iter().map(|s| s.0).collect();
        assert_eq!(
            names,
            ["dualpi2_p", "dualpi2_l4s_marks", "dualpi2_classic_marks"]
        );
    }

    /// PI2 runs every t_update (15 ms) on the Classic head's sojourn, also
    /// between packets: a Classic packet queued at 0 and dequeued at 100
    /// ms has seen updates at 15, 30, ..., 90 ms of sojourns 15i ms:
    /// p = 6 x 3 x 0.015 + 0.15 x 0.015 x (0 + 1 + ... + 5) = 0.30375.
    #[test]
    fn pi2_catches_up_on_the_updates_between_events() {
        let mut q = built(8_000_000, serde_json::json!({}));
        let mut d = vec![];
        q.enqueue(with_ecn(0, 0), SimTime::ZERO, &mut d);
        q.dequeue(SimTime::from_millis(100), &mut d);
        let p = stat(&q, "dualpi2_p");
        assert!((p - 0.30375).abs() < 1e-12, "{p}");
    }

    /// The native ramp marks only while the L4S queue holds more than
    /// th_len (1) packets: three packets 1.3 ms old (ramp 1) give one
    /// mark (the second; recur's first crossing of 1), none for the last.
    #[test]
    fn the_native_ramp_needs_more_than_th_len_packets() {
        let mut q = built(8_000_000, serde_json::json!({}));
        let mut d = vec![];
        for i in 0..3 {
            q.enqueue(with_ecn(i, ecn::ECT1), SimTime::ZERO, &mut d);
        }
        let now = SimTime::from_micros(1300);
        let out: Vec<u8> = (0..3)
            .map(|_| q.dequeue(now, &mut d).expect("a packet").ecn)
            .collect();
        assert_eq!(out, [ecn::ECT1, ecn::CE, ecn::ECT1]);
        assert_eq!(
            (stat(&q, "dualpi2_l4s_marks"), q.q.stats.ecn_marks),
            (1.0, 1)
        );
    }

    /// With p' at 0.5 (p_C = 0.25): Classic ECT(0) packets are marked,
    /// not-ECT ones dropped, each about a quarter; at p' 0.8 p_C is at
    /// p_Cmax (overload) and L4S packets are dropped a quarter of the time
    /// too, before any marking.
    #[test]
    fn classic_marks_and_drops_and_l4s_drops_in_overload() {
        let run = |p: f64, bits: u8| {
            let mut q = at_p(p);
            let mut d = vec![];
            for i in 0..2000 {
                q.enqueue(with_ecn(i, bits), SimTime::ZERO, &mut d);
            }
            let now = SimTime::from_millis(1);
            let marked = (0..2000)
                .filter_map(|_| q.dequeue(now, &mut d))
                .filter(|p| p.ecn == ecn::CE)
                .count();
            (
                marked,
                d.len(),
                stat(&q, "dualpi2_classic_marks"),
                q.q.stats.ecn_marks,
            )
        };
        let (marked, dropped, classic, stats) = run(0.5, ecn::ECT0);
        assert!(
            (400..600).contains(&marked) && dropped == 0,
            "{marked} {dropped}"
        );
        assert_eq!((classic, stats), (marked as f64, marked as u64));
        let (marked, dropped, ..) = run(0.5, 0);
        assert!(
            marked == 0 && (400..600).contains(&dropped),
            "{marked} {dropped}"
        );
        let (_, dropped, ..) = run(0.8, ecn::ECT1);
        assert!((400..600).contains(&dropped), "{dropped}");
        let (_, dropped, ..) = run(0.4, ecn::ECT1);
        assert_eq!(dropped, 0, "under p_Cmax no L4S packet is dropped");
    }

    #[test]
    fn bad_fields_are_named() {
        let spec: DualPi2Spec = serde_json::from_value(
            serde_json::json!({"k": 0, "t_update_ms": 0, "range_us": -1, "mtu_bytes": 0}),
        )
        .expect("spec");
        let mut c = Checker::default();
        spec.validate("q", 1e6, &mut c);
        let fields: Vec<String> = c.errs.iter().map(|e| e.path.clone()).collect();
        assert_eq!(
            fields,
            ["q.k", "q.t_update_ms", "q.range_us", "q.mtu_bytes"]
        );
    }
}
