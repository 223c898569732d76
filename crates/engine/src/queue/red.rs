//! Random Early Detection (Floyd and Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", IEEE/ACM ToN 1993), with the
//! refinements of ns-2's Queue/RED, Floyd's own implementation, which the
//! reference studies ran:
//!
//! - The average is an EWMA of the queue length seen by each arrival,
//!   `avg <- (1 - w_q) avg + w_q q`. After an idle period the average
//!   first decays as if `m` packets of `mean_packet_bytes` had gone by on
//!   the link (`m` = idle time x link rate / (8 x mean size), the paper's
//!   `f(time - q_time)`); as in ns-2 that decay is applied together with
//!   the arrival's own update, `avg <- (1 - w_q)^(m+1) avg + w_q q`.
//! - Between the thresholds the drop probability is
//!   `p_b = max_p (avg - min_th) / (max_th - min_th)`, spaced by the count
//!   of arrivals since the last drop: `p_a = p_b / (1 - count p_b)` (the
//!   paper), or with `wait` (ns-2's option) `p_b / (2 - count p_b)` after at
//!   least `1 / p_b` arrivals. The arrival that takes the average above
//!   min_th is never dropped and starts the count at 1 (ns-2).
//! - Above max_th every arrival is dropped (forced); in gentle mode
//!   (Floyd 2000) the probability rises from max_p at max_th to 1 at
//!   2 max_th instead, and only above that is the drop forced.
//! - Byte mode scales the probability by size / mean_packet_bytes, and
//!   counts arrivals in mean-sized packets. With `queue_in_bytes` the
//!   average and the thresholds are in bytes.
//! - As in ns-2, nothing is dropped early while at most one packet waits.
//! - With `ecn`, an early drop of an ECN-capable packet (RFC 3168 5) marks
//!   it CE instead; forced drops and overflows of the hard limit are drops.
//!
//! Drops: `red_early`, `red_forced`, and `queue_overflow` for the hard
//! limit (`limit_packets` / `limit_bytes`). The queues table reports the
//! final average (`red_avg`) and the queue samples its value over time.

use super::droptail::check_limits;
use super::fifo::Fifo;
use super::red_core::{Average, Dropper, Profile, Verdict};
use super::spec::{QueueModel, QueueSite};
use super::{QueueCtx, QueueDiscipline};
use crate::net::packet::ecn;
use crate::net::{DropReason, PacketRef};
use crate::scenario::check::Checker;
use crate::sim::SimRng;
use schemars::JsonSchema;
use serde::Deserialize;

pub fn default_w_q() -> f64 {
    0.002
}
fn default_max_p() -> f64 {
    0.02
}
pub fn default_mean_packet_bytes() -> u32 {
    500
}

/// RED queue. Thresholds in packets (bytes with `queue_in_bytes`); the
/// defaults are Floyd and Jacobson's (w_q 0.002, max_p 1/50); ns-2's
/// defaults for mean_packet_bytes (500).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    /// Lower threshold of the average queue.
    pub min_th: f64,
    /// Upper threshold of the average queue.
    pub max_th: f64,
    /// EWMA weight of the average, in (0, 1].
    #[serde(default = "default_w_q")]
    pub w_q: f64,
    /// Drop probability at max_th, in (0, 1].
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    /// Hard limit in packets (the physical buffer).
    #[serde(default)]
    pub limit_packets: Option<u64>,
    /// Hard limit in bytes.
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Probability from max_p at max_th to 1 at 2 max_th (Floyd 2000).
    #[serde(default)]
    pub gentle: bool,
    /// ns-2's `wait_`: space drops uniformly after 1/p_b arrivals.
    #[serde(default)]
    pub wait: bool,
    /// Scale the drop probability by packet size (ns-2's `bytes_`).
    #[serde(default)]
    pub byte_mode: bool,
    /// Average and thresholds in bytes (ns-2's `queue_in_bytes_`).
    #[serde(default)]
    pub queue_in_bytes: bool,
    /// Typical packet size for idle-time decay and byte mode.
    #[serde(default = "default_mean_packet_bytes")]
    pub mean_packet_bytes: u32,
    /// Mark ECN-capable packets CE instead of dropping them early.
    #[serde(default)]
    pub ecn: bool,
}

impl super::spec::Drops for RedSpec {
    const DROP_REASONS: &'static [DropReason] = super::red_core::DROP_REASONS;
}

impl QueueModel for RedSpec {
    fn validate(&self, path: &str, _rate_bps: f64, c: &mut Checker) {
        check_limits("red", path, self.limit_packets, self.limit_bytes, c);
        check_thresholds(path, self.min_th, self.max_th, self.max_p, c);
        check_common(path, self.w_q, self.mean_packet_bytes, c);
    }
    fn build(&self, site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        Box::new(Red::new(self.clone(), site.rate_bps, site.stream()))
    }
}

/// A profile's thresholds and max_p (RED's, or one of WRED's).
pub fn check_thresholds(path: &str, min_th: f64, max_th: f64, max_p: f64, c: &mut Checker) {
    c.non_negative(format_args!("{path}.min_th"), min_th);
    c.positive(format_args!("{path}.max_th"), max_th);
    if min_th >= max_th {
        let msg = format!("must be above min_th (got min_th {min_th} and max_th {max_th})");
        c.err(format!("{path}.max_th"), msg);
    }
    unit_interval(c, &format!("{path}.max_p"), max_p);
}

/// The average's weight and the mean packet size.
pub fn check_common(path: &str, w_q: f64, mean_packet_bytes: u32, c: &mut Checker) {
    unit_interval(c, &format!("{path}.w_q"), w_q);
    if mean_packet_bytes == 0 {
        c.err(format!("{path}.mean_packet_bytes"), "must be at least 1");
    }
}

/// `x` must be in (0, 1].
fn unit_interval(c: &mut Checker, path: &str, x: f64) {
    if !(x > 0.0 && x <= 1.0) {
        c.err(path, format!("must be in (0, 1] (got {x})"));
    }
}

pub struct Red {
    fifo: Fifo,
    queue_in_bytes: bool,
    ecn: bool,
    ewma: Average,
    profile: Profile,
    dropper: Dropper,
    rng: SimRng,
}

impl RedSpec {
    pub fn profile(&self) -> Profile {
        Profile {
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            gentle: self.gentle,
            wait: self.wait,
            byte_mode: self.byte_mode,
            mean_packet_bytes: self.mean_packet_bytes,
        }
    }
}

impl Red {
    pub fn new(spec: RedSpec, rate_bps: u64, rng: SimRng) -> Self {
        Red {
            fifo: Fifo::new(spec.limit_packets.map(|x| x as usize), spec.limit_bytes),
            queue_in_bytes: spec.queue_in_bytes,
            ecn: spec.ecn,
            ewma: Average::new(spec.w_q, rate_bps, spec.mean_packet_bytes),
            profile: spec.profile(),
            dropper: Dropper::default(),
            rng,
        }
    }

    pub fn avg(&self) -> f64 {
        self.ewma.value
    }
}

/// The time the link was idle before an arrival to an empty queue (0 if
/// the queue holds packets or the transmitter is busy).
pub fn idle_seconds(ctx: &QueueCtx<'_>, fifo: &Fifo) -> f64 {
    (ctx.idle_since)
        .filter(|_| fifo.len_packets() == 0)
        .map_or(0.0, |t| ctx.now.saturating_sub(t).as_secs_f64())
}

/// Queues `pkt` after RED's `verdict` (a drop, a CE mark, or as it is),
/// unless the physical buffer is full; returns whether it overflowed.
pub fn admit(fifo: &mut Fifo, pkt: PacketRef, verdict: Verdict, ctx: &mut QueueCtx<'_>) -> bool {
    let size = ctx.packets[pkt].size_bytes;
    if !fifo.fits(size as u64) {
        ctx.dropped.push((pkt, DropReason::QUEUE_OVERFLOW));
        return true;
    }
    match verdict {
        Verdict::Drop(reason) => ctx.dropped.push((pkt, reason)),
        Verdict::Mark => {
            ctx.packets[pkt].ecn = ecn::CE;
            ctx.marked += 1;
            fifo.push_back(pkt, size);
        }
        Verdict::Accept => fifo.push_back(pkt, size),
    }
    false
}

/// The queue length in the average's unit.
pub fn queue_len(fifo: &Fifo, in_bytes: bool) -> f64 {
    if in_bytes {
        fifo.len_bytes() as f64
    } else {
        fifo.len_packets() as f64
    }
}

impl QueueDiscipline for Red {
    fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
        let q = queue_len(&self.fifo, self.queue_in_bytes);
        self.ewma.update(idle_seconds(ctx, &self.fifo), q);
        let (pr, avg) = (&self.profile, self.ewma.value);
        let verdict = (self.dropper).judge(pr, avg, q, &ctx.packets[pkt], self.ecn, &mut self.rng);
        if admit(&mut self.fifo, pkt, verdict, ctx) {
            // The physical buffer was full: ns-2 restarts the count as for
            // any forced drop.
            self.dropper.restart();
        }
    }
    crate::fifo_queue_methods!();
    fn kind(&self) -> &'static str {
        "red"
    }
    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![("red_avg", self.avg())]
    }
    fn sample(&self) -> Vec<(&'static str, f64)> {
        vec![("red_avg", self.avg())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Packet;
    use crate::queue::tests::{pkt, TestCtx, TestQueue};
    use crate::sim::{RngStreams, SimTime};

    fn spec(min_th: f64, max_th: f64, max_p: f64) -> RedSpec {
        RedSpec {
            min_th,
            max_th,
            w_q: 0.002,
            max_p,
            limit_packets: Some(100),
            limit_bytes: None,
            gentle: false,
            wait: false,
            byte_mode: false,
            queue_in_bytes: false,
            mean_packet_bytes: 1000,
            ecn: false,
        }
    }

    fn red(s: RedSpec) -> Red {
        Red::new(s, 8_000, RngStreams::new(1, 0).stream("red"))
    }

    /// Offers `p` to `r` at `now`, the packet kept in `tc`'s store.
    fn offer(r: &mut Red, tc: &mut TestCtx, p: Packet, now: SimTime) {
        let p = tc.packets.insert(p);
        r.enqueue(p, &mut tc.at(now));
    }

    /// Left out, the weight and max_p are Floyd and Jacobson's (0.002,
    /// 1/50) and the mean packet size ns-2's (500 bytes).
    #[test]
    fn the_defaults_are_the_papers_and_ns2s() {
        let s: RedSpec = serde_json::from_str(r#"{"min_th": 5, "max_th": 15}"#).unwrap();
        assert_eq!((s.w_q, s.max_p, s.mean_packet_bytes), (0.002, 0.02, 500));
        assert!(!(s.gentle || s.wait || s.byte_mode || s.queue_in_bytes || s.ecn));
        assert_eq!((s.limit_packets, s.limit_bytes), (None, None));
    }

    #[test]
    fn the_average_is_an_ewma_of_the_length_seen_by_arrivals() {
        let mut r = red(RedSpec {
            w_q: 0.5,
            ..spec(50.0, 60.0, 0.1)
        });
        let mut d = TestCtx::default();
        // Lengths seen: 0, 1, 2, 3 -> 0, 0.5, 1.25, 2.125.
        for (s, want) in [(0, 0.0), (1, 0.5), (2, 1.25), (3, 2.125)] {
            offer(&mut r, &mut d, pkt(s, 100), SimTime(0));
            assert_eq!(r.avg(), want);
        }
    }

    #[test]
    fn idle_time_ages_the_average_as_packets_that_went_by() {
        // 8,000 bit/s and 1,000-byte packets: one packet time per second.
        let mut r = red(RedSpec {
            w_q: 0.5,
            ..spec(50.0, 60.0, 0.1)
        });
        r.ewma.value = 8.0;
        let mut d = TestCtx::default();
        let (p0, p1) = (d.packets.insert(pkt(0, 100)), d.packets.insert(pkt(1, 100)));
        let mut c = d.at(SimTime::from_millis(3_500));
        c.idle_since = Some(SimTime::ZERO);
        // 3.5 s idle: m = 3 packet times, then the arrival's own update
        // (queue 0): 8 x 0.5^4.
        r.enqueue(p0, &mut c);
        assert_eq!(r.avg(), 0.5);
        // A busy link with an empty queue: no ageing, one update.
        let mut c = d.at(SimTime::from_millis(9_000));
        r.dequeue(&mut c);
        r.enqueue(p1, &mut c);
        assert_eq!(r.avg(), 0.25);
    }

    #[test]
    fn probabilities_follow_the_paper_and_the_options() {
        let mut r = red(spec(5.0, 15.0, 0.1));
        r.ewma.value = 10.0;
        assert!((r.profile.base_probability(r.ewma.value) - 0.05).abs() < 1e-12);
        r.dropper.count = 10; // count x p_b = 0.5: p_b / (1 - 0.5)
        assert!((r.dropper.arrival_probability(&r.profile, 0.05, 1000) - 0.1).abs() < 1e-12);
        r.dropper.count = 19; // 0.95
        assert!((r.dropper.arrival_probability(&r.profile, 0.05, 1000) - 1.0).abs() < 1e-9);
        r.dropper.count = 20;
        assert_eq!(r.dropper.arrival_probability(&r.profile, 0.05, 1000), 1.0);
        r.ewma.value = 15.0;
        assert_eq!(
            r.profile.base_probability(r.ewma.value),
            1.0,
            "at max_th without gentle"
        );

        let mut g = red(RedSpec {
            gentle: true,
            wait: true,
            ..spec(5.0, 15.0, 0.1)
        });
        g.ewma.value = 22.5; // halfway from max_th to 2 max_th: 0.1 + 0.9 / 2
        assert!((g.profile.base_probability(g.ewma.value) - 0.55).abs() < 1e-12);
        g.dropper.count = 10; // wait: no drop before count x p_b reaches 1...
        assert_eq!(g.dropper.arrival_probability(&g.profile, 0.05, 1000), 0.0);
        g.dropper.count = 30; // ...then p_b / (2 - 1.5)
        assert!((g.dropper.arrival_probability(&g.profile, 0.05, 1000) - 0.1).abs() < 1e-12);
        g.dropper.count = 40;
        assert_eq!(g.dropper.arrival_probability(&g.profile, 0.05, 1000), 1.0);

        let mut b = red(RedSpec {
            byte_mode: true,
            ..spec(5.0, 15.0, 0.1)
        });
        // Byte mode: count in mean-sized packets (2,500 B = 2), then the
        // probability scaled by size: 0.05 / 0.9 x 250 / 1000.
        b.dropper.count_bytes = 2_500;
        let want = 0.05 / 0.9 * 0.25;
        assert!((b.dropper.arrival_probability(&b.profile, 0.05, 250) - want).abs() < 1e-12);
    }

    /// Floyd and Jacobson 1993, section 7: with p_a = p_b / (1 - count
    /// p_b) and a steady average the gaps between drops are uniform. With
    /// count the arrival's place since the last drop (the paper's
    /// pseudo-code and ns-2: count is raised before p_a is computed), the
    /// n-th arrival is dropped with probability p_b / (1 - p_b) for every
    /// n in 1..1/p_b: gaps uniform on 1..=19 for p_b = 0.05, mean 10.
    #[test]
    fn drops_are_spaced_uniformly_between_1_and_1_over_p_b() {
        let mut r = red(RedSpec {
            w_q: 1e-13, // the average stays where it is set
            ..spec(5.0, 15.0, 0.1)
        });
        let mut d = TestCtx::default();
        for s in 0..3 {
            offer(&mut r, &mut d, pkt(s, 100), SimTime(0));
        }
        r.ewma.value = 10.0; // p_b = 0.05
        r.dropper.above_min = true;
        r.dropper.count = 0;
        let (mut gaps, mut since) = (Vec::new(), 0u64);
        for s in 3..200_003 {
            since += 1;
            let before = d.dropped.len();
            offer(&mut r, &mut d, pkt(s, 100), SimTime(0));
            if d.dropped.len() > before {
                assert_eq!(d.dropped[before].1, crate::queue::red_core::EARLY);
                gaps.push(since);
                since = 0;
            } else {
                r.dequeue(&mut d.at(SimTime(0))); // 3 stay queued
            }
        }
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((mean - 10.0).abs() < 0.1, "mean gap {mean}");
        assert_eq!(gaps.iter().max(), Some(&19));
        assert_eq!(gaps.iter().min(), Some(&1));
    }

    /// The arrival that lifts the average over min_th is not dropped; above
    /// max_th every arrival is (gentle: only above 2 max_th); the hard
    /// limit overflows as drop-tail does.
    #[test]
    fn forced_drops_first_crossing_and_the_hard_limit() {
        let mut r = red(RedSpec {
            max_p: 1.0,
            wait: false,
            limit_packets: Some(4),
            ..spec(1.0, 3.0, 1.0)
        });
        let mut d = TestCtx::default();
        for s in 0..2 {
            offer(&mut r, &mut d, pkt(s, 100), SimTime(0));
        }
        r.ewma.value = 2.9; // would be dropped with p = 1 but for the first crossing
        r.ewma.w_q = 1e-9;
        offer(&mut r, &mut d, pkt(2, 100), SimTime(0));
        assert!(d.dropped.is_empty() && r.dropper.above_min);
        r.ewma.value = 3.0;
        offer(&mut r, &mut d, pkt(3, 100), SimTime(0));
        assert_eq!(
            d.dropped.pop().map(|x| x.1),
            Some(crate::queue::red_core::FORCED)
        );
        r.profile.gentle = true; // forced only from 6; below, p = 1 anyway at count 1
        r.ewma.value = 1.5;
        r.profile.max_p = 1e-9;
        offer(&mut r, &mut d, pkt(4, 100), SimTime(0));
        assert!(d.dropped.is_empty(), "count 1: p_a tiny");
        offer(&mut r, &mut d, pkt(5, 100), SimTime(0));
        assert_eq!(
            d.dropped.pop().map(|x| x.1),
            Some(DropReason::QUEUE_OVERFLOW),
            "4 held: the hard limit"
        );
        assert_eq!(r.len_packets(), 4);
    }

    #[test]
    fn ecn_marks_capable_packets_instead_of_early_drops() {
        let mut r = red(RedSpec {
            ecn: true,
            w_q: 1e-9,
            ..spec(5.0, 15.0, 1.0)
        });
        let mut q_pkts = Vec::new();
        for s in 0..3 {
            q_pkts.push(pkt(s, 100));
        }
        let mut d = TestCtx::default();
        for p in q_pkts {
            offer(&mut r, &mut d, p, SimTime(0));
        }
        r.ewma.value = 14.0;
        r.dropper.above_min = true;
        r.dropper.count = 5; // p_b = 0.9, count x p_b > 1: p_a = 1
        let mut capable = pkt(10, 100);
        capable.ecn = ecn::ECT0;
        let capable = d.packets.insert(capable);
        let mut c = d.at(SimTime(0));
        r.enqueue(capable, &mut c);
        assert_eq!(c.marked, 1);
        assert!(d.dropped.is_empty());
        assert_eq!(
            r.fifo.held().last().map(|&p| d.packets[p].ecn),
            Some(ecn::CE)
        );
        r.dropper.count = 5;
        offer(&mut r, &mut d, pkt(11, 100), SimTime(0));
        assert_eq!(
            d.dropped.pop().map(|x| x.1),
            Some(crate::queue::red_core::EARLY),
            "not ECT"
        );
        r.ewma.value = 15.5;
        let mut capable = pkt(12, 100);
        capable.ecn = ecn::ECT0;
        offer(&mut r, &mut d, capable, SimTime(0));
        assert_eq!(
            d.dropped.pop().map(|x| x.1),
            Some(crate::queue::red_core::FORCED),
            "forced: dropped"
        );
    }

    #[test]
    fn the_queue_counts_marks_and_reports_the_average() {
        let mut q = TestQueue::new(Box::new(red(RedSpec {
            ecn: true,
            ..spec(0.0, 1.0, 1.0)
        })));
        let mut d = Vec::new();
        for s in 0..40 {
            let mut p = pkt(s, 100);
            p.ecn = ecn::ECT1;
            q.enqueue(p, SimTime(0), &mut d);
        }
        assert!(q.stats.ecn_marks > 0);
        assert_eq!(q.kind(), "red");
        let avg = q.discipline_stats()[0];
        assert_eq!(avg.0, "red_avg");
        assert!(avg.1 > 0.0);
        assert_eq!(q.discipline_sample(), vec![avg]);
        assert!(q.balanced());
    }

    #[test]
    fn impossible_parameters_are_named() {
        let mut c = Checker::default();
        let bad = RedSpec {
            w_q: 0.0,
            max_p: 1.5,
            mean_packet_bytes: 0,
            limit_packets: None,
            ..spec(15.0, 5.0, 0.1)
        };
        bad.validate("q", 1e6, &mut c);
        let fields: Vec<String> = c.errs.iter().map(|e| e.path.clone()).collect();
        for f in ["q", "q.max_th", "q.w_q", "q.max_p", "q.mean_packet_bytes"] {
            assert!(fields.iter().any(|x| x == f), "{f} not in {fields:?}");
        }
        let mut ok = Checker::default();
        spec(5.0, 15.0, 0.1).validate("q", 1e6, &mut ok);
        assert!(ok.errs.is_empty());
    }
}
