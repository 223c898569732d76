//! PIE, Proportional Integral controller Enhanced (RFC 8033).
//!
//! Every `t_update` (15 ms) the drop probability moves by
//! `alpha (qdelay - target) + beta (qdelay - qdelay_old)` (section 4.2),
//! the step scaled down while the probability is small (the auto-tuning of
//! section 5.2: / 2048 below 1e-6 ... / 2 below 0.1) and held to 0.02 once
//! the probability is 0.1 or more; with no delay now or last time the
//! probability decays by 2% (section 4.2). Arrivals are dropped at random
//! with that probability (`pie`), except during the burst allowance
//! (`max_burst`, 150 ms, re-armed when the probability is 0 and the delay
//! stays under target / 2), when the delay is under target / 2 and the
//! probability under 0.2, or when at most two MTUs are queued (section
//! 4.1). With `ecn`, ECN-capable packets are marked instead while the
//! probability is at most 0.1 (section 5.1).
//!
//! The queueing delay is the sojourn time of the last packet dequeued (the
//! timestamp method RFC 8033 section 4.3 allows), 0 when the queue is
//! empty. The periodic update runs lazily: at each enqueue or dequeue,
//! once per period that has ended since the last update (between events
//! nothing it reads changes). Derandomisation (section 5.4) is left out.

use super::codel::TimedQueue;
use super::spec::{QueueModel, QueueSite};
use super::{QueueCtx, QueueDiscipline};
use crate::net::packet::ecn;
use crate::net::{DropReason, PacketRef};
use crate::scenario::check::Checker;
use crate::sim::{uniform, SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

/// PIE's random drop on enqueue.
pub const DROP: DropReason = DropReason::new("pie");

fn d_target() -> f64 {
    15.0
}
fn d_tupdate() -> f64 {
    15.0
}
fn d_alpha() -> f64 {
    0.125
}
fn d_beta() -> f64 {
    1.25
}
fn d_burst() -> f64 {
    150.0
}
fn d_limit() -> u64 {
    1000
}
fn d_mtu() -> u32 {
    1500
}

/// PIE (RFC 8033); defaults are the RFC's.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PieSpec {
    /// Target queueing delay.
    #[serde(default = "d_target")]
    pub target_ms: f64,
    /// Period of the probability update.
    #[serde(default = "d_tupdate")]
    pub t_update_ms: f64,
    /// Weight of the delay error, per second.
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    /// Weight of the delay trend, per second.
    #[serde(default = "d_beta")]
    pub beta: f64,
    #[serde(default = "d_burst")]
    pub max_burst_ms: f64,
    #[serde(default = "d_limit")]
    pub limit_packets: u64,
    #[serde(default = "d_mtu")]
    pub mtu_bytes: u32,
    #[serde(default)]
    pub ecn: bool,
}

impl super::spec::Drops for PieSpec {
    const DROP_REASONS: &'static [DropReason] = &[DROP];
}

impl QueueModel for PieSpec {
    fn validate(&self, path: &str, _rate_bps: f64, c: &mut Checker) {
        for (f, x) in [
            ("target_ms", self.target_ms),
            ("t_update_ms", self.t_update_ms),
            ("alpha", self.alpha),
            ("beta", self.beta),
        ] {
            c.positive(format_args!("{path}.{f}"), x);
        }
        c.non_negative(format_args!("{path}.max_burst_ms"), self.max_burst_ms);
        c.at_least_one(
            format_args!("{path}.limit_packets"),
            Some(self.limit_packets),
        );
    }
    fn build(&self, site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        Box::new(Pie::new(self, site.stream()))
    }
}

pub struct Pie {
    q: TimedQueue,
    target: SimTime,
    t_update: SimTime,
    alpha: f64,
    beta: f64,
    max_burst: SimTime,
    limit: usize,
    mtu: u64,
    ecn: bool,
    rng: SimRng,
    drop_prob: f64,
    qdelay: SimTime,
    qdelay_old: SimTime,
    burst_allowance: SimTime,
    /// The last periodic update ran at this time.
    last_update: SimTime,
}

impl Pie {
    pub fn new(s: &PieSpec, rng: SimRng) -> Self {
        let max_burst = SimTime::from_millis_f64(s.max_burst_ms);
        Pie {
            q: TimedQueue::default(),
            target: SimTime::from_millis_f64(s.target_ms),
            t_update: SimTime::from_millis_f64(s.t_update_ms).max(SimTime(1)),
            alpha: s.alpha,
            beta: s.beta,
            max_burst,
            limit: s.limit_packets as usize,
            mtu: s.mtu_bytes as u64,
            ecn: s.ecn,
            rng,
            drop_prob: 0.0,
            qdelay: SimTime::ZERO,
            qdelay_old: SimTime::ZERO,
            burst_allowance: max_burst,
            last_update: SimTime::ZERO,
        }
    }

    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// Section 4.2 with the section 5.2 scaling: one period's update.
    fn update(&mut self) {
        let (now_s, old_s, target_s) = (
            self.qdelay.as_secs_f64(),
            self.qdelay_old.as_secs_f64(),
            self.target.as_secs_f64(),
        );
        let mut p = self.alpha * (now_s - target_s) + self.beta * (now_s - old_s);
        let scale = match self.drop_prob {
            x if x < 1e-6 => 1.0 / 2048.0,
            x if x < 1e-5 => 1.0 / 512.0,
            x if x < 1e-4 => 1.0 / 128.0,
            x if x < 1e-3 => 1.0 / 32.0,
            x if x < 1e-2 => 1.0 / 8.0,
            x if x < 1e-1 => 1.0 / 2.0,
            _ => 1.0,
        };
        p *= scale;
        if self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob = (self.drop_prob + p).clamp(0.0, 1.0);
        if self.qdelay == SimTime::ZERO && self.qdelay_old == SimTime::ZERO {
            self.drop_prob *= 0.98;
        }
        self.burst_allowance = self.burst_allowance.saturating_sub(self.t_update);
        let half = SimTime(self.target.as_nanos() / 2);
        if self.drop_prob == 0.0 && self.qdelay < half && self.qdelay_old < half {
            self.burst_allowance = self.max_burst;
        }
        self.qdelay_old = self.qdelay;
    }

    /// Runs the updates of every period that ended by `now`.
    fn catch_up(&mut self, now: SimTime) {
        while self.last_update + self.t_update <= now {
            self.last_update += self.t_update;
            if self.q.is_empty() {
                self.qdelay = SimTime::ZERO;
            }
            self.update();
        }
    }

    /// Section 4.1: whether an arrival is spared the random drop.
    fn spared(&self) -> bool {
        let half = SimTime(self.target.as_nanos() / 2);
        self.burst_allowance > SimTime::ZERO
            || (self.qdelay_old < half && self.drop_prob < 0.2)
            || self.q.bytes() <= 2 * self.mtu
    }
}

impl QueueDiscipline for Pie {
    fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
        self.catch_up(ctx.now);
        if self.q.len() >= self.limit {
            return ctx.dropped.push((pkt, DropReason::QUEUE_OVERFLOW));
        }
        if !self.spared() && uniform(&mut self.rng) < self.drop_prob {
            let field = &mut ctx.packets[pkt].ecn;
            if self.ecn && ecn::capable(*field) && self.drop_prob <= 0.1 {
                *field = ecn::CE;
                ctx.marked += 1;
            } else {
                return ctx.dropped.push((pkt, DROP));
            }
        }
        self.q.push(ctx.now, pkt, ctx.packets[pkt].size_bytes);
    }
    fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
        self.catch_up(ctx.now);
        let (t, p) = self.q.pop()?;
        self.qdelay = ctx.now.saturating_sub(t);
        Some(p)
    }
    crate::timed_queue_methods!();
    fn kind(&self) -> &'static str {
        "pie"
    }
    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![("pie_drop_prob", self.drop_prob)]
    }
    fn sample(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("pie_drop_prob", self.drop_prob),
            ("sojourn_ms", self.qdelay.as_secs_f64() * 1e3),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    fn pie() -> Pie {
        let spec: PieSpec = serde_json::from_value(serde_json::json!({})).expect("defaults");
        Pie::new(&spec, RngStreams::new(1, 0).stream("pie"))
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// RFC 8033 5.2's table, band by band and at each band's lower edge:
    /// a steady delay 10 ms over target gives p = 0.125 x 0.010 =
    /// 0.00125, divided by 2048 below 1e-6, 512 below 1e-5, 128 below
    /// 1e-4, 32 below 1e-3, 8 below 1e-2, 2 below 0.1, and taken whole
    /// from 0.1 on.
    #[test]
    fn auto_tuning_scales_the_step_by_the_probability_band() {
        for (from, divisor) in [
            (0.0, 2048.0),
            (0.9e-6, 2048.0),
            (1e-6, 512.0),
            (5e-6, 512.0),
            (1e-5, 128.0),
            (1e-4, 32.0),
            (1e-3, 8.0),
            (1e-2, 2.0),
            (0.05, 2.0),
            (0.1, 1.0),
        ] {
            let mut p = pie();
            (p.drop_prob, p.qdelay, p.qdelay_old) = (from, ms(25), ms(25));
            p.update();
            let step = p.drop_prob() - from;
            assert!(
                (step * divisor / 0.00125 - 1.0).abs() < 1e-9,
                "from {from}: step {step}, want 0.00125 / {divisor}"
            );
        }
    }

    /// Section 4.2's decay: with no delay now and last time the
    /// probability falls by 2% after the step; one delay left keeps it.
    #[test]
    fn the_probability_decays_only_with_no_delay_twice() {
        let mut p = pie();
        (p.drop_prob, p.qdelay, p.qdelay_old) = (0.5, ms(0), ms(0));
        p.update();
        assert!((p.drop_prob - (0.5 - 0.125 * 0.015) * 0.98).abs() < 1e-12);
        (p.drop_prob, p.qdelay, p.qdelay_old) = (0.5, ms(0), ms(10));
        p.update();
        assert!((p.drop_prob - (0.5 - 0.125 * 0.015 - 1.25 * 0.010)).abs() < 1e-12);
    }

    /// Section 4.2's burst allowance: it shrinks by t_update each period
    /// and is re-armed only when the probability is 0 and both delays are
    /// under half the target (7.5 ms).
    #[test]
    fn the_burst_allowance_is_rearmed_only_when_calm() {
        let rearmed = |drop_prob: f64, now_ms: f64, old_ms: f64| {
            let mut p = pie();
            p.burst_allowance = SimTime::ZERO;
            p.drop_prob = drop_prob;
            p.qdelay = SimTime::from_millis_f64(now_ms);
            p.qdelay_old = SimTime::from_millis_f64(old_ms);
            p.update();
            p.burst_allowance
        };
        assert_eq!(rearmed(0.0, 5.0, 5.0), ms(150));
        assert_eq!(
            rearmed(0.0, 7.5, 7.0),
            SimTime::ZERO,
            "now at half the target"
        );
        assert_eq!(
            rearmed(0.0, 5.0, 7.5),
            SimTime::ZERO,
            "last at half the target"
        );
        assert_eq!(rearmed(0.3, 5.0, 5.0), SimTime::ZERO, "a probability left");
        let mut p = pie();
        (p.qdelay, p.qdelay_old) = (ms(20), ms(20));
        p.update();
        assert_eq!(p.burst_allowance, ms(135));
    }

    /// Section 4.1: an arrival is spared the random drop during the
    /// burst allowance, while the last delay is under half the target
    /// with a probability under 0.2, or with at most two MTUs queued.
    #[test]
    fn arrivals_are_spared_as_section_4_1_says() {
        let mut tc = crate::queue::tests::TestCtx::default();
        let spared = |burst_ms: u64,
                      old_ms: f64,
                      drop_prob: f64,
                      queued: &[u32],
                      tc: &mut crate::queue::tests::TestCtx| {
            let mut p = pie();
            p.burst_allowance = ms(burst_ms);
            p.qdelay_old = SimTime::from_millis_f64(old_ms);
            p.drop_prob = drop_prob;
            for (i, &size) in queued.iter().enumerate() {
                let r = tc.packets.insert(crate::queue::tests::pkt(i as u64, size));
                p.q.push(SimTime::ZERO, r, size);
            }
            p.spared()
        };
        let big = [1500, 1500, 1]; // one byte over two MTUs
        assert!(
            spared(10, 20.0, 0.5, &big, &mut tc),
            "in the burst allowance"
        );
        assert!(!spared(0, 20.0, 0.5, &big, &mut tc));
        assert!(
            spared(0, 7.4, 0.19, &big, &mut tc),
            "calm: delay and probability low"
        );
        assert!(
            !spared(0, 7.5, 0.19, &big, &mut tc),
            "delay at half the target"
        );
        assert!(!spared(0, 7.4, 0.2, &big, &mut tc), "probability at 0.2");
        assert!(
            spared(0, 20.0, 0.5, &[1500, 1500], &mut tc),
            "two MTUs queued"
        );
    }

    /// A PIE queue at `drop_prob`, its burst allowance spent and its last
    /// delay over target (no arrival spared but for the first two MTUs),
    /// offered `n` packets of 1500 bytes at 0 (before any update), ECT(0)
    /// if `ect`; returns the queue and its drops.
    fn offered(
        drop_prob: f64,
        ecn_on: bool,
        ect: bool,
        n: u64,
    ) -> (
        crate::queue::tests::TestQueue,
        Vec<(crate::net::Packet, DropReason)>,
    ) {
        let spec: PieSpec = serde_json::from_value(serde_json::json!({"ecn": ecn_on})).unwrap();
        let mut p = Pie::new(&spec, RngStreams::new(1, 0).stream("pie"));
        (p.drop_prob, p.burst_allowance, p.qdelay_old) = (drop_prob, SimTime::ZERO, ms(20));
        let mut q = crate::queue::tests::TestQueue::new(Box::new(p));
        let mut d = Vec::new();
        for s in 0..n {
            let mut pkt = crate::queue::tests::pkt(s, 1500);
            if ect {
                pkt.ecn = ecn::ECT0;
            }
            q.enqueue(pkt, SimTime::ZERO, &mut d);
        }
        (q, d)
    }

    /// Arrivals past the first two MTUs are dropped (`pie`) with the
    /// probability: 1,000 at 0.5 lose about half (binomial sd 16).
    #[test]
    fn arrivals_are_dropped_with_the_probability() {
        let (q, d) = offered(0.5, false, false, 1000);
        assert!(d.iter().all(|(_, why)| *why == DROP));
        assert!((430..=570).contains(&d.len()), "{} dropped", d.len());
        assert_eq!(q.len_packets() + d.len(), 1000);
        let (_, none) = offered(0.0, false, false, 1000);
        assert!(none.is_empty());
    }

    /// With `ecn`, ECN-capable arrivals are marked instead while the
    /// probability is at most 0.1 (section 5.1); above it, or for packets
    /// that are not ECN-capable, they are dropped.
    #[test]
    fn ecn_marks_up_to_a_tenth_and_drops_above() {
        let (q, d) = offered(0.1, true, true, 1000);
        assert!(d.is_empty());
        assert!(
            (60..=140).contains(&q.stats.ecn_marks),
            "{} marked",
            q.stats.ecn_marks
        );
        let (q, d) = offered(0.3, true, true, 1000);
        assert!(
            q.stats.ecn_marks == 0 && (240..=360).contains(&d.len()),
            "{}",
            d.len()
        );
        let (q, d) = offered(0.1, true, false, 1000);
        assert!(
            q.stats.ecn_marks == 0 && (60..=140).contains(&d.len()),
            "{}",
            d.len()
        );
    }

    /// The hard limit overflows, packets leave in order with their
    /// sojourn as the queue's delay, and the queue reports itself.
    #[test]
    fn the_discipline_limits_serves_and_reports() {
        let spec: PieSpec =
            serde_json::from_value(serde_json::json!({"limit_packets": 3})).unwrap();
        let mut q = crate::queue::tests::TestQueue::new(Box::new(Pie::new(
            &spec,
            RngStreams::new(1, 0).stream("pie"),
        )));
        let mut d = Vec::new();
        for s in 0..5 {
            q.enqueue(crate::queue::tests::pkt(s, 100), SimTime::ZERO, &mut d);
        }
        assert_eq!(d.len(), 2);
        assert!(d.iter().all(|(_, why)| *why == DropReason::QUEUE_OVERFLOW));
        assert_eq!(q.dequeue(ms(4), &mut d).map(|p| p.seq), Some(0));
        assert_eq!(q.kind(), "pie");
        assert_eq!(q.discipline_stats(), [("pie_drop_prob", 0.0)]);
        assert_eq!(
            q.discipline_sample(),
            [("pie_drop_prob", 0.0), ("sojourn_ms", 4.0)]
        );
        assert!(q.balanced());
    }

    /// Left out, every parameter is RFC 8033's, with a 1000-packet limit
    /// and a 1500-byte MTU; a non-positive target is refused.
    #[test]
    fn the_defaults_are_the_rfcs_and_are_checked() {
        let spec: PieSpec = serde_json::from_str("{}").unwrap();
        assert_eq!(
            (spec.target_ms, spec.t_update_ms, spec.max_burst_ms),
            (15.0, 15.0, 150.0)
        );
        assert_eq!((spec.alpha, spec.beta), (0.125, 1.25));
        assert_eq!(
            (spec.limit_packets, spec.mtu_bytes, spec.ecn),
            (1000, 1500, false)
        );
        let mut c = Checker::default();
        spec.validate("q", 1e6, &mut c);
        assert!(c.errs.is_empty());
        PieSpec {
            target_ms: 0.0,
            ..spec
        }
        .validate("q", 1e6, &mut c);
        assert_eq!(c.errs[0].path, "q.target_ms");
    }

    /// One update by hand: delay 25 ms (target 15), 20 ms before: p =
    /// 0.125 x 0.010 + 1.25 x 0.005 = 0.0075, scaled by 1/2048 from 0.
    #[test]
    fn the_update_is_the_rfcs_with_auto_tuning() {
        let mut p = pie();
        (p.qdelay, p.qdelay_old) = (ms(25), ms(20));
        p.update();
        assert!((p.drop_prob - 0.0075 / 2048.0).abs() < 1e-15);
        assert_eq!(p.qdelay_old, ms(25));
        // At 0.05 the step is halved; at 0.5 a large step is held to 0.02.
        p.drop_prob = 0.05;
        (p.qdelay, p.qdelay_old) = (ms(25), ms(25));
        p.update();
        assert!((p.drop_prob - (0.05 + 0.00125 / 2.0)).abs() < 1e-12);
        p.drop_prob = 0.5;
        (p.qdelay, p.qdelay_old) = (ms(200), ms(25));
        p.update();
        assert!((p.drop_prob - 0.52).abs() < 1e-12);
        // No delay now or before: the probability decays by 2%.
        p.drop_prob = 0.5;
        (p.qdelay, p.qdelay_old) = (SimTime::ZERO, SimTime::ZERO);
        p.update();
        let want = (0.5 + 0.125 * -0.015) * 0.98;
        assert!((p.drop_prob - want).abs() < 1e-12, "{}", p.drop_prob);
    }

    #[test]
    fn the_burst_allowance_runs_down_and_rearms() {
        let mut p = pie();
        assert_eq!(p.burst_allowance, ms(150));
        (p.qdelay, p.qdelay_old) = (ms(30), ms(30));
        for _ in 0..10 {
            p.update();
        }
        assert_eq!(p.burst_allowance, SimTime::ZERO, "10 x 15 ms");
        p.drop_prob = 0.0;
        (p.qdelay, p.qdelay_old) = (ms(1), ms(1));
        p.alpha = 1e-9;
        p.beta = 1e-9;
        p.update();
        assert_eq!(p.burst_allowance, ms(150));
    }

    #[test]
    fn updates_catch_up_once_per_period() {
        let mut p = pie();
        (p.qdelay, p.qdelay_old) = (ms(100), ms(100));
        let mut store = crate::net::Packets::new();
        let one = store.insert(crate::queue::tests::pkt(0, 1000));
        p.q.push(ms(0), one, 1000);
        p.catch_up(ms(44));
        assert_eq!(p.last_update, ms(30), "two periods ended by 44 ms");
        assert!(p.drop_prob > 0.0);
    }
}
