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
use super::spec::{QueueModel, QueueSite};
use super::{QueueCtx, QueueDiscipline};
use crate::net::packet::ecn;
use crate::net::{DropReason, Packet};
use crate::scenario::check::Checker;
use crate::sim::{uniform, SimRng};
use schemars::JsonSchema;
use serde::Deserialize;

fn default_w_q() -> f64 {
    0.002
}
fn default_max_p() -> f64 {
    0.02
}
fn default_mean_packet_bytes() -> u32 {
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

impl QueueModel for RedSpec {
    fn validate(&self, path: &str, c: &mut Checker) {
        check_limits("red", path, self.limit_packets, self.limit_bytes, c);
        c.non_negative(&format!("{path}.min_th"), self.min_th);
        c.positive(&format!("{path}.max_th"), self.max_th);
        if self.min_th >= self.max_th {
            let msg = format!(
                "must be above min_th (got min_th {} and max_th {})",
                self.min_th, self.max_th
            );
            c.err(format!("{path}.max_th"), msg);
        }
        unit_interval(c, &format!("{path}.w_q"), self.w_q);
        unit_interval(c, &format!("{path}.max_p"), self.max_p);
        if self.mean_packet_bytes == 0 {
            c.err(format!("{path}.mean_packet_bytes"), "must be at least 1");
        }
    }
    fn build(&self, site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        Box::new(Red::new(self.clone(), site.rate_bps, site.stream()))
    }
}

/// `x` must be in (0, 1].
fn unit_interval(c: &mut Checker, path: &str, x: f64) {
    if !(x > 0.0 && x <= 1.0) {
        c.err(path, format!("must be in (0, 1] (got {x})"));
    }
}

/// What RED decided for one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Mark,
    Drop(DropReason),
}

pub struct Red {
    spec: RedSpec,
    fifo: Fifo,
    /// Mean-sized packets the link sends per second (ns-2's ptc).
    packets_per_s: f64,
    rng: SimRng,
    avg: f64,
    /// Arrivals (and their bytes) since the last early or forced drop.
    count: u64,
    count_bytes: u64,
    /// The average was between the thresholds at the last arrival.
    above_min: bool,
}

impl Red {
    pub fn new(spec: RedSpec, rate_bps: u64, rng: SimRng) -> Self {
        let fifo = Fifo::new(spec.limit_packets.map(|x| x as usize), spec.limit_bytes);
        Red {
            packets_per_s: rate_bps as f64 / (8.0 * spec.mean_packet_bytes as f64),
            spec,
            fifo,
            rng,
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            above_min: false,
        }
    }

    pub fn avg(&self) -> f64 {
        self.avg
    }

    fn queue_len(&self) -> f64 {
        if self.spec.queue_in_bytes {
            self.fifo.len_bytes() as f64
        } else {
            self.fifo.len_packets() as f64
        }
    }

    /// The EWMA update for one arrival, after `idle_s` of idle link.
    fn update_avg(&mut self, idle_s: f64) {
        let w = self.spec.w_q;
        let m = (self.packets_per_s * idle_s).floor();
        let decay = if m >= i32::MAX as f64 {
            0.0
        } else {
            (1.0 - w).powi(m as i32 + 1)
        };
        self.avg = self.avg * decay + w * self.queue_len();
    }

    /// The drop probability from the average alone (p_b).
    pub fn base_probability(&self) -> f64 {
        let s = &self.spec;
        let p = if self.avg >= s.max_th {
            if s.gentle {
                s.max_p + (1.0 - s.max_p) * (self.avg - s.max_th) / s.max_th
            } else {
                1.0
            }
        } else {
            s.max_p * (self.avg - s.min_th) / (s.max_th - s.min_th)
        };
        p.min(1.0)
    }

    /// The probability for this arrival (p_a): p_b spaced by the count,
    /// then scaled by size in byte mode.
    pub fn arrival_probability(&self, p_b: f64, size: u32) -> f64 {
        let s = &self.spec;
        let mean = s.mean_packet_bytes as f64;
        let count = if s.byte_mode {
            (self.count_bytes / s.mean_packet_bytes as u64) as f64
        } else {
            self.count as f64
        };
        let cp = count * p_b;
        let mut p = match (s.wait, cp) {
            (true, cp) if cp < 1.0 => 0.0,
            (true, cp) if cp < 2.0 => p_b / (2.0 - cp),
            (false, cp) if cp < 1.0 => p_b / (1.0 - cp),
            _ => 1.0,
        };
        if s.byte_mode && p < 1.0 {
            p = p * size as f64 / mean;
        }
        p.min(1.0)
    }

    /// RED's decision for an arrival of `pkt` (the average already updated).
    fn judge(&mut self, pkt: &Packet) -> Verdict {
        let s = &self.spec;
        self.count += 1;
        self.count_bytes += pkt.size_bytes as u64;
        let forced_at = if s.gentle { 2.0 * s.max_th } else { s.max_th };
        let mut verdict = Verdict::Accept;
        if self.avg >= s.min_th && self.queue_len() > 1.0 {
            if self.avg >= forced_at {
                verdict = Verdict::Drop(DropReason::RedForced);
            } else if !self.above_min {
                // Just crossed min_th: start counting, no drop (ns-2).
                self.above_min = true;
                self.count = 1;
                self.count_bytes = pkt.size_bytes as u64;
            } else {
                let p = self.arrival_probability(self.base_probability(), pkt.size_bytes);
                if uniform(&mut self.rng) <= p {
                    self.count = 0;
                    self.count_bytes = 0;
                    verdict = if self.spec.ecn && ecn::capable(pkt.ecn) {
                        Verdict::Mark
                    } else {
                        Verdict::Drop(DropReason::RedEarly)
                    };
                }
            }
        } else {
            self.above_min = false;
        }
        if verdict == Verdict::Drop(DropReason::RedForced) {
            self.count = 0;
            self.count_bytes = 0;
        }
        verdict
    }
}

impl QueueDiscipline for Red {
    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut QueueCtx<'_>) {
        let idle_s = (ctx.idle_since)
            .filter(|_| self.fifo.len_packets() == 0)
            .map_or(0.0, |t| ctx.now.saturating_sub(t).as_secs_f64());
        self.update_avg(idle_s);
        let mut verdict = self.judge(&pkt);
        if !self.fifo.fits(pkt.size_bytes as u64) {
            // The physical buffer is full: a drop whatever RED said (ns-2
            // restarts the count as for any forced drop).
            verdict = Verdict::Drop(DropReason::QueueOverflow);
            self.count = 0;
            self.count_bytes = 0;
        }
        match verdict {
            Verdict::Drop(reason) => ctx.dropped.push((pkt, reason)),
            Verdict::Mark => {
                pkt.ecn = ecn::CE;
                ctx.marked += 1;
                self.fifo.push_back(pkt);
            }
            Verdict::Accept => self.fifo.push_back(pkt),
        }
    }
    crate::fifo_queue_methods!();
    fn kind(&self) -> &'static str {
        "red"
    }
    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![("red_avg", self.avg)]
    }
    fn sample(&self) -> Vec<(&'static str, f64)> {
        vec![("red_avg", self.avg)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::pkt;
    use crate::queue::Queue;
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

    fn ctx<'a>(d: &'a mut Vec<(Packet, DropReason)>, now: SimTime) -> QueueCtx<'a> {
        QueueCtx {
            now,
            dropped: d,
            idle_since: None,
            marked: 0,
        }
    }

    #[test]
    fn the_average_is_an_ewma_of_the_length_seen_by_arrivals() {
        let mut r = red(RedSpec {
            w_q: 0.5,
            ..spec(50.0, 60.0, 0.1)
        });
        let mut d = Vec::new();
        // Lengths seen: 0, 1, 2, 3 -> 0, 0.5, 1.25, 2.125.
        for (s, want) in [(0, 0.0), (1, 0.5), (2, 1.25), (3, 2.125)] {
            r.enqueue(pkt(s, 100), &mut ctx(&mut d, SimTime(0)));
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
        r.avg = 8.0;
        let mut d = Vec::new();
        let mut c = ctx(&mut d, SimTime::from_millis(3_500));
        c.idle_since = Some(SimTime::ZERO);
        // 3.5 s idle: m = 3 packet times, then the arrival's own update
        // (queue 0): 8 x 0.5^4.
        r.enqueue(pkt(0, 100), &mut c);
        assert_eq!(r.avg(), 0.5);
        // A busy link with an empty queue: no ageing, one update.
        let mut c = ctx(&mut d, SimTime::from_millis(9_000));
        r.dequeue(&mut c);
        r.enqueue(pkt(1, 100), &mut c);
        assert_eq!(r.avg(), 0.25);
    }

    #[test]
    fn probabilities_follow_the_paper_and_the_options() {
        let mut r = red(spec(5.0, 15.0, 0.1));
        r.avg = 10.0;
        assert!((r.base_probability() - 0.05).abs() < 1e-12);
        r.count = 10; // count x p_b = 0.5: p_b / (1 - 0.5)
        assert!((r.arrival_probability(0.05, 1000) - 0.1).abs() < 1e-12);
        r.count = 19; // 0.95
        assert!((r.arrival_probability(0.05, 1000) - 1.0).abs() < 1e-9);
        r.count = 20;
        assert_eq!(r.arrival_probability(0.05, 1000), 1.0);
        r.avg = 15.0;
        assert_eq!(r.base_probability(), 1.0, "at max_th without gentle");

        let mut g = red(RedSpec {
            gentle: true,
            wait: true,
            ..spec(5.0, 15.0, 0.1)
        });
        g.avg = 22.5; // halfway from max_th to 2 max_th: 0.1 + 0.9 / 2
        assert!((g.base_probability() - 0.55).abs() < 1e-12);
        g.count = 10; // wait: no drop before count x p_b reaches 1...
        assert_eq!(g.arrival_probability(0.05, 1000), 0.0);
        g.count = 30; // ...then p_b / (2 - 1.5)
        assert!((g.arrival_probability(0.05, 1000) - 0.1).abs() < 1e-12);
        g.count = 40;
        assert_eq!(g.arrival_probability(0.05, 1000), 1.0);

        let mut b = red(RedSpec {
            byte_mode: true,
            ..spec(5.0, 15.0, 0.1)
        });
        // Byte mode: count in mean-sized packets (2,500 B = 2), then the
        // probability scaled by size: 0.05 / 0.9 x 250 / 1000.
        b.count_bytes = 2_500;
        let want = 0.05 / 0.9 * 0.25;
        assert!((b.arrival_probability(0.05, 250) - want).abs() < 1e-12);
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
        let mut d = Vec::new();
        for s in 0..3 {
            r.enqueue(pkt(s, 100), &mut ctx(&mut d, SimTime(0)));
        }
        r.avg = 10.0; // p_b = 0.05
        r.above_min = true;
        r.count = 0;
        let (mut gaps, mut since) = (Vec::new(), 0u64);
        for s in 3..200_003 {
            since += 1;
            let before = d.len();
            r.enqueue(pkt(s, 100), &mut ctx(&mut d, SimTime(0)));
            if d.len() > before {
                assert_eq!(d[before].1, DropReason::RedEarly);
                gaps.push(since);
                since = 0;
            } else {
                r.dequeue(&mut ctx(&mut d, SimTime(0))); // 3 stay queued
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
        let mut d = Vec::new();
        for s in 0..2 {
            r.enqueue(pkt(s, 100), &mut ctx(&mut d, SimTime(0)));
        }
        r.avg = 2.9; // would be dropped with p = 1 but for the first crossing
        r.spec.w_q = 1e-9;
        r.enqueue(pkt(2, 100), &mut ctx(&mut d, SimTime(0)));
        assert!(d.is_empty() && r.above_min);
        r.avg = 3.0;
        r.enqueue(pkt(3, 100), &mut ctx(&mut d, SimTime(0)));
        assert_eq!(d.pop().map(|x| x.1), Some(DropReason::RedForced));
        r.spec.gentle = true; // forced only from 6; below, p = 1 anyway at count 1
        r.avg = 1.5;
        r.spec.max_p = 1e-9;
        r.enqueue(pkt(4, 100), &mut ctx(&mut d, SimTime(0)));
        assert!(d.is_empty(), "count 1: p_a tiny");
        r.enqueue(pkt(5, 100), &mut ctx(&mut d, SimTime(0)));
        assert_eq!(
            d.pop().map(|x| x.1),
            Some(DropReason::QueueOverflow),
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
        let mut d = Vec::new();
        for p in q_pkts {
            r.enqueue(p, &mut ctx(&mut d, SimTime(0)));
        }
        r.avg = 14.0;
        r.above_min = true;
        r.count = 5; // p_b = 0.9, count x p_b > 1: p_a = 1
        let mut capable = pkt(10, 100);
        capable.ecn = ecn::ECT0;
        let mut c = ctx(&mut d, SimTime(0));
        r.enqueue(capable, &mut c);
        assert_eq!(c.marked, 1);
        assert!(d.is_empty());
        assert_eq!(r.fifo.held().last().map(|p| p.ecn), Some(ecn::CE));
        r.count = 5;
        r.enqueue(pkt(11, 100), &mut ctx(&mut d, SimTime(0)));
        assert_eq!(d.pop().map(|x| x.1), Some(DropReason::RedEarly), "not ECT");
        r.avg = 15.5;
        let mut capable = pkt(12, 100);
        capable.ecn = ecn::ECT0;
        r.enqueue(capable, &mut ctx(&mut d, SimTime(0)));
        assert_eq!(
            d.pop().map(|x| x.1),
            Some(DropReason::RedForced),
            "forced: dropped"
        );
    }

    #[test]
    fn the_queue_counts_marks_and_reports_the_average() {
        let mut q = Queue::new(Box::new(red(RedSpec {
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
        bad.validate("q", &mut c);
        let fields: Vec<String> = c.errs.iter().map(|e| e.path.clone()).collect();
        for f in ["q", "q.max_th", "q.w_q", "q.max_p", "q.mean_packet_bytes"] {
            assert!(fields.iter().any(|x| x == f), "{f} not in {fields:?}");
        }
        let mut ok = Checker::default();
        spec(5.0, 15.0, 0.1).validate("q", &mut ok);
        assert!(ok.errs.is_empty());
    }
}
