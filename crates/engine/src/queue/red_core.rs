//! The parts of RED that RED and WRED share (see `red.rs` for the rules and
//! their sources): the average queue, a drop profile (thresholds and
//! max_p), and the per-profile count that spaces the drops.

use crate::net::packet::ecn;
use crate::net::{DropReason, Packet};
use crate::sim::{uniform, SimRng};

/// RED's random early drop (average queue between the thresholds).
pub const EARLY: DropReason = DropReason::new("red_early");
/// RED's forced drop (average queue above max_th, or twice it in gentle
/// mode).
pub const FORCED: DropReason = DropReason::new("red_forced");
/// What RED and WRED declare (`QueueModel::DROP_REASONS`).
pub const DROP_REASONS: &[DropReason] = &[EARLY, FORCED];

/// What RED decided for one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Mark,
    Drop(DropReason),
}

/// The EWMA of the queue length seen by arrivals.
#[derive(Clone, Debug)]
pub struct Average {
    pub value: f64,
    pub w_q: f64,
    /// Mean-sized packets the link sends per second (ns-2's ptc).
    pub packets_per_s: f64,
}

impl Average {
    pub fn new(w_q: f64, rate_bps: u64, mean_packet_bytes: u32) -> Self {
        Average {
            value: 0.0,
            w_q,
            packets_per_s: rate_bps as f64 / (8.0 * mean_packet_bytes as f64),
        }
    }

    /// One arrival seeing `q` waiting, after `idle_s` of idle link:
    /// `avg <- (1 - w_q)^(m+1) avg + w_q q`, m the packets that could
    /// have gone by while idle.
    pub fn update(&mut self, idle_s: f64, q: f64) {
        let m = (self.packets_per_s * idle_s).floor();
        let decay = if m >= i32::MAX as f64 {
            0.0
        } else {
            (1.0 - self.w_q).powi(m as i32 + 1)
        };
        self.value = self.value * decay + self.w_q * q;
    }
}

/// Thresholds and drop probability of one RED profile (a drop precedence
/// in WRED).
#[derive(Clone, Debug)]
pub struct Profile {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub gentle: bool,
    pub wait: bool,
    pub byte_mode: bool,
    pub mean_packet_bytes: u32,
}

impl Profile {
    /// The drop probability from the average alone (p_b).
    pub fn base_probability(&self, avg: f64) -> f64 {
        let p = if avg >= self.max_th {
            if self.gentle {
                self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
            } else {
                1.0
            }
        } else {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        };
        p.min(1.0)
    }

    /// Above this average every arrival is dropped.
    pub fn forced_at(&self) -> f64 {
        if self.gentle {
            2.0 * self.max_th
        } else {
            self.max_th
        }
    }
}

/// The count of arrivals since the last drop, per profile.
#[derive(Clone, Debug, Default)]
pub struct Dropper {
    pub count: u64,
    pub count_bytes: u64,
    /// The average was between the thresholds at the last arrival.
    pub above_min: bool,
}

impl Dropper {
    /// The probability for this arrival (p_a): p_b spaced by the count,
    /// then scaled by size in byte mode.
    pub fn arrival_probability(&self, pr: &Profile, p_b: f64, size: u32) -> f64 {
        let count = if pr.byte_mode {
            (self.count_bytes / pr.mean_packet_bytes as u64) as f64
        } else {
            self.count as f64
        };
        let cp = count * p_b;
        let mut p = match (pr.wait, cp) {
            (true, cp) if cp < 1.0 => 0.0,
            (true, cp) if cp < 2.0 => p_b / (2.0 - cp),
            (false, cp) if cp < 1.0 => p_b / (1.0 - cp),
            _ => 1.0,
        };
        if pr.byte_mode && p < 1.0 {
            p = p * size as f64 / pr.mean_packet_bytes as f64;
        }
        p.min(1.0)
    }

    pub fn restart(&mut self) {
        self.count = 0;
        self.count_bytes = 0;
    }

    /// RED's decision for an arrival of `pkt` with average `avg` and `q`
    /// waiting (in the average's unit); `ecn_on` marks capable packets.
    pub fn judge(
        &mut self,
        pr: &Profile,
        avg: f64,
        q: f64,
        pkt: &Packet,
        ecn_on: bool,
        rng: &mut SimRng,
    ) -> Verdict {
        self.count += 1;
        self.count_bytes += pkt.size_bytes as u64;
        if avg < pr.min_th || q <= 1.0 {
            self.above_min = false;
            return Verdict::Accept;
        }
        if avg >= pr.forced_at() {
            self.restart();
            return Verdict::Drop(FORCED);
        }
        if !self.above_min {
            // Just crossed min_th: start counting, no drop (ns-2).
            self.above_min = true;
            self.count = 1;
            self.count_bytes = pkt.size_bytes as u64;
            return Verdict::Accept;
        }
        let p = self.arrival_probability(pr, pr.base_probability(avg), pkt.size_bytes);
        if uniform(rng) > p {
            return Verdict::Accept;
        }
        self.restart();
        if ecn_on && ecn::capable(pkt.ecn) {
            Verdict::Mark
        } else {
            Verdict::Drop(EARLY)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::test_packet;
    use crate::sim::RngStreams;

    fn profile(wait: bool, gentle: bool, byte_mode: bool) -> Profile {
        Profile {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            gentle,
            wait,
            byte_mode,
            mean_packet_bytes: 1000,
        }
    }

    fn dropper(count: u64, count_bytes: u64) -> Dropper {
        Dropper {
            count,
            count_bytes,
            above_min: true,
        }
    }

    /// Floyd and Jacobson's p_a = p_b / (1 - count p_b); with `wait` (ns-2)
    /// no drop before count p_b reaches 1, then p_b / (2 - count p_b), and
    /// 1 from 2 on. At the boundaries exactly: count p_b = 1 is past the
    /// wait, and every rule gives 1 from its pole on.
    #[test]
    fn the_arrival_probability_spaces_drops_by_the_count() {
        let p_b = 0.25;
        let at = |wait: bool, count: u64| {
            dropper(count, 0).arrival_probability(&profile(wait, false, false), p_b, 1000)
        };
        assert_eq!(at(false, 0), 0.25);
        assert_eq!(at(false, 2), 0.25 / 0.5);
        assert_eq!(at(false, 4), 1.0);
        assert_eq!(at(false, 9), 1.0);
        assert_eq!(at(true, 3), 0.0);
        assert_eq!(at(true, 4), 0.25, "count p_b = 1: the wait is over");
        assert_eq!(at(true, 6), 0.25 / 0.5);
        assert_eq!(at(true, 8), 1.0);
        assert_eq!(at(true, 10), 1.0, "count p_b past 2");
    }

    /// In byte mode the count is in mean-sized packets and the
    /// probability scales with the arrival's size, except once it is 1.
    #[test]
    fn byte_mode_counts_bytes_and_scales_by_size() {
        let pr = profile(false, false, true);
        let d = dropper(99, 2500); // two mean-sized packets counted
        assert_eq!(d.arrival_probability(&pr, 0.25, 500), 0.25 / 0.5 * 0.5);
        assert_eq!(d.arrival_probability(&pr, 0.25, 1500), 0.25 / 0.5 * 1.5);
        let full = dropper(0, 4000); // count p_b = 1: certain, whatever the size
        assert_eq!(full.arrival_probability(&pr, 0.25, 100), 1.0);
    }

    /// p_b rises linearly to max_p between the thresholds; above max_th
    /// it is 1, or in gentle mode rises on to 1 at twice max_th, where
    /// forced drops begin.
    #[test]
    fn the_base_probability_and_the_forced_threshold() {
        let (plain, gentle) = (profile(false, false, false), profile(false, true, false));
        assert_eq!(plain.base_probability(10.0), 0.05);
        assert_eq!(plain.base_probability(15.0), 1.0);
        assert_eq!(gentle.base_probability(15.0), 0.1);
        assert!((gentle.base_probability(22.5) - 0.55).abs() < 1e-12);
        assert_eq!(gentle.base_probability(40.0), 1.0);
        assert_eq!((plain.forced_at(), gentle.forced_at()), (15.0, 30.0));
    }

    /// An arrival below min_th (or with at most one packet waiting) is
    /// accepted and stops the count; at min_th exactly counting starts,
    /// with no drop; at the forced threshold every arrival is dropped.
    #[test]
    fn judging_an_arrival_by_the_average() {
        let rng_streams = RngStreams::new(1, 0);
        let mut rng = rng_streams.stream("red");
        let pr = profile(false, true, false);
        let pkt = test_packet(0, 1, 1000);
        let mut d = dropper(7, 7000);
        assert_eq!(
            d.judge(&pr, 4.9, 3.0, &pkt, false, &mut rng),
            Verdict::Accept
        );
        assert!(!d.above_min, "below min_th with a queue: not counting");
        d.above_min = true;
        assert_eq!(
            d.judge(&pr, 10.0, 1.0, &pkt, false, &mut rng),
            Verdict::Accept
        );
        assert!(!d.above_min, "one packet waiting: not counting");
        assert_eq!(
            d.judge(&pr, 5.0, 3.0, &pkt, false, &mut rng),
            Verdict::Accept
        );
        assert!(
            d.above_min && d.count == 1 && d.count_bytes == 1000,
            "min_th exactly: counting from 1"
        );
        assert_eq!(
            d.judge(&pr, 29.9, 3.0, &pkt, false, &mut rng),
            Verdict::Drop(EARLY),
            "gentle: p_b near 1 short of twice max_th"
        );
        assert_eq!(
            d.judge(&pr, 30.0, 3.0, &pkt, false, &mut rng),
            Verdict::Drop(FORCED)
        );
        assert_eq!((d.count, d.count_bytes), (0, 0));
    }
}
