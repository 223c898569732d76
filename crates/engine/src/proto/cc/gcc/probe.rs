//! Bandwidth probing as libwebrtc's GoogCC runs it at the start of a call:
//! the probe controller asks for clusters of packets sent at a rate above
//! the target (3 and 6 times the start rate, then twice each estimate
//! that reaches 0.7 of the last probe's rate), and the probe estimator
//! turns each cluster's send and arrival spacing into a rate.
//!
//! A cluster is `min_packets` packets (5) and at least `min_ms` (15 ms)
//! of the probe rate's bytes. Every packet sent while a cluster is under
//! way belongs to it; the pacer sends at the probe rate, media first and
//! padding when it holds none. A cluster starts only once media is
//! queued, as libwebrtc's prober waits for a packet.
//!
//! The estimate of a cluster (libwebrtc's ProbeBitrateEstimator), once at
//! least 80% of its packets and of its bytes are reported received: the
//! send rate is the bytes but the last sent over the send interval, the
//! receive rate the bytes but the first received over the arrival
//! interval (each interval positive and at most 1 s); a receive rate
//! above twice the send rate is no estimate; the estimate is the lesser,
//! or 0.95 of the receive rate when that is under 0.9 of the send rate
//! (the probe saturated the path).
//!
//! Left out: the probe after a large drop in the application-limited
//! region, and probes on a change of the allocated or maximum rate
//! (libwebrtc's periodic probes there are off unless a field trial or a
//! screen share asks for them).

use crate::proto::cc::ProbeSend;
use crate::proto::feedback::PacketResult;
use crate::sim::SimTime;

/// libwebrtc's constants (probe_controller.cc, bitrate_prober.cc,
/// probe_bitrate_estimator.cc).
const FURTHER_SCALE: f64 = 2.0;
const FURTHER_THRESHOLD: f64 = 0.7;
/// Without a result this long after the last probe, probing ends.
const MAX_WAIT: SimTime = SimTime::from_millis(1000);
const MIN_RECEIVED_PACKETS: f64 = 0.8;
const MIN_RECEIVED_BYTES: f64 = 0.8;
const MAX_VALID_RATIO: f64 = 2.0;
const MIN_RATIO_UNSATURATED: f64 = 0.9;
const TARGET_UTILISATION: f64 = 0.95;
const MAX_INTERVAL: SimTime = SimTime::from_millis(1000);
/// Clusters whose results are older than this are forgotten.
const CLUSTER_HISTORY: SimTime = SimTime::from_millis(1000);

/// The probe's shape: the initial scales and the cluster's size.
#[derive(Clone, Copy, Debug)]
pub struct ProbeShape {
    pub first_scale: f64,
    pub second_scale: f64,
    pub min_packets: u32,
    pub min_duration: SimTime,
}

/// One cluster: asked for, under way or done, and what its feedback says.
#[derive(Clone, Debug)]
struct Cluster {
    rate_bps: f64,
    min_bytes: u64,
    /// When its first packet left.
    started: Option<SimTime>,
    sent_packets: u32,
    sent_bytes: u64,
    /// Send indices of its packets: first..=last.
    first_seq: u64,
    last_seq: u64,
    agg: Aggregate,
}

/// What the feedback reported of a cluster's packets.
#[derive(Clone, Copy, Debug, Default)]
struct Aggregate {
    packets: u32,
    bytes: u64,
    first_send: Option<(SimTime, u32)>,
    last_send: Option<(SimTime, u32)>,
    first_arrival: Option<(SimTime, u32)>,
    last_arrival: Option<SimTime>,
    /// The newest arrival the estimate saw (clusters older than the
    /// history are dropped).
    newest: SimTime,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for a result above the threshold to probe further.
    Waiting,
    Done,
}

/// The probe controller and the probe estimator together.
pub struct Prober {
    shape: ProbeShape,
    max_bps: f64,
    state: State,
    /// Clusters not yet sent in full, in order; the first is under way or next.
    queue: Vec<Cluster>,
    /// Clusters sent, awaiting or taking feedback.
    sent: Vec<Cluster>,
    last_probe_bps: f64,
    last_probe_at: SimTime,
    /// Clusters asked for so far.
    pub clusters: u64,
}

impl Prober {
    /// The start of a call at `start_bps`: the two initial clusters.
    pub fn new(shape: ProbeShape, start_bps: f64, max_bps: f64, now: SimTime) -> Self {
        let mut p = Prober {
            shape,
            max_bps,
            state: State::Done,
            queue: Vec::new(),
            sent: Vec::new(),
            last_probe_bps: 0.0,
            last_probe_at: now,
            clusters: 0,
        };
        let scales = [shape.first_scale, shape.second_scale];
        p.initiate(
            now,
            scales.iter().filter(|&&s| s > 0.0).map(|s| s * start_bps),
        );
        p
    }

    /// Asks for a cluster at each rate (capped at the maximum, past which
    /// probing goes no further), libwebrtc's InitiateProbing.
    fn initiate(&mut self, now: SimTime, rates: impl Iterator<Item = f64>) {
        let mut further = true;
        for r in rates {
            let rate = if r >= self.max_bps {
                further = false;
                self.max_bps
            } else {
                r
            };
            let min_bytes = (rate * self.shape.min_duration.as_secs_f64() / 8.0).ceil() as u64;
            self.queue.push(Cluster {
                rate_bps: rate,
                min_bytes,
                started: None,
                sent_packets: 0,
                sent_bytes: 0,
                first_seq: 0,
                last_seq: 0,
                agg: Aggregate::default(),
            });
            self.clusters += 1;
            self.last_probe_bps = rate;
        }
        self.last_probe_at = now;
        self.state = if further { State::Waiting } else { State::Done };
    }

    /// When the next probe packet may leave (`None`: no cluster to send):
    /// its start plus its bytes so far at its rate.
    pub fn next_send(&self) -> Option<ProbeSend> {
        let c = self.queue.first()?;
        Some(match c.started {
            None => ProbeSend::WithMedia,
            Some(t) => {
                ProbeSend::At(t + SimTime::from_secs_f64(c.sent_bytes as f64 * 8.0 / c.rate_bps))
            }
        })
    }

    /// A packet of `bytes` (send index `seq`) left at `now`: it belongs to
    /// the cluster under way, if any. Returns whether it did.
    pub fn on_send(&mut self, now: SimTime, seq: u64, bytes: u32) -> bool {
        let Some(c) = self.queue.first_mut() else {
            return false;
        };
        if c.started.is_none() {
            c.started = Some(now);
            c.first_seq = seq;
        }
        c.last_seq = seq;
        c.sent_packets += 1;
        c.sent_bytes += bytes as u64;
        if c.sent_packets >= self.shape.min_packets && c.sent_bytes >= c.min_bytes {
            let done = self.queue.remove(0);
            self.sent.push(done);
        }
        true
    }

    /// Feedback: each reported packet of a sent cluster into its
    /// aggregate. Returns the last estimate it gave, bit/s.
    pub fn on_feedback(&mut self, results: &[PacketResult]) -> Option<f64> {
        if self.sent.is_empty() {
            return None;
        }
        let mut estimate = None;
        let min_packets = self.shape.min_packets;
        for r in results {
            let (true, Some(at)) = (r.received, r.arrival) else {
                continue;
            };
            let Some(c) = self
                .sent
                .iter_mut()
                .find(|c| (c.first_seq..=c.last_seq).contains(&r.seq))
            else {
                continue;
            };
            c.agg.add(r.sent_at, at, r.bytes);
            if let Some(e) = c.agg.estimate(min_packets, c.min_bytes) {
                estimate = Some(e);
            }
        }
        // A cluster whose feedback ended a second before the newest is
        // done with (libwebrtc's kMaxClusterHistory); there are a handful
        // at most, since probing ends at the maximum rate.
        if let Some(newest) = self.sent.iter().map(|c| c.agg.newest).max() {
            self.sent
                .retain(|c| c.agg.packets == 0 || c.agg.newest + CLUSTER_HISTORY >= newest);
        }
        estimate
    }

    /// The target after an update is `bps` at `now`: probe further if it
    /// reached 0.7 of the last probe's rate (libwebrtc's
    /// SetEstimatedBitrate); stop waiting a second after the last probe.
    pub fn on_estimate(&mut self, now: SimTime, bps: f64) {
        if self.state != State::Waiting || !self.queue.is_empty() {
            return;
        }
        if now.saturating_sub(self.last_probe_at) > MAX_WAIT {
            self.state = State::Done;
        } else if bps > FURTHER_THRESHOLD * self.last_probe_bps {
            self.initiate(now, std::iter::once(FURTHER_SCALE * bps));
        }
    }
}

impl Aggregate {
    fn add(&mut self, sent_at: SimTime, at: SimTime, bytes: u32) {
        if self.first_send.is_none_or(|(t, _)| sent_at < t) {
            self.first_send = Some((sent_at, bytes));
        }
        if self.last_send.is_none_or(|(t, _)| sent_at > t) {
            self.last_send = Some((sent_at, bytes));
        }
        if self.first_arrival.is_none_or(|(t, _)| at < t) {
            self.first_arrival = Some((at, bytes));
        }
        if self.last_arrival.is_none_or(|t| at > t) {
            self.last_arrival = Some(at);
        }
        self.packets += 1;
        self.bytes += bytes as u64;
        self.newest = self.newest.max(at);
    }

    /// The cluster's rate, once enough of it is reported.
    fn estimate(&self, min_packets: u32, min_bytes: u64) -> Option<f64> {
        if (self.packets as f64) < MIN_RECEIVED_PACKETS * min_packets as f64
            || (self.bytes as f64) < MIN_RECEIVED_BYTES * min_bytes as f64
        {
            return None;
        }
        let ((s0, _), (s1, last_bytes)) = (self.first_send?, self.last_send?);
        let ((a0, first_bytes), a1) = (self.first_arrival?, self.last_arrival?);
        let (send, recv) = (s1.saturating_sub(s0), a1.saturating_sub(a0));
        if send == SimTime::ZERO
            || send > MAX_INTERVAL
            || recv == SimTime::ZERO
            || recv > MAX_INTERVAL
        {
            return None;
        }
        let send_bps = (self.bytes - last_bytes as u64) as f64 * 8.0 / send.as_secs_f64();
        let recv_bps = (self.bytes - first_bytes as u64) as f64 * 8.0 / recv.as_secs_f64();
        if recv_bps > MAX_VALID_RATIO * send_bps {
            return None;
        }
        Some(if recv_bps < MIN_RATIO_UNSATURATED * send_bps {
            TARGET_UTILISATION * recv_bps
        } else {
            send_bps.min(recv_bps)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> SimTime {
        SimTime::from_millis_f64(x)
    }

    fn shape() -> ProbeShape {
        ProbeShape {
            first_scale: 3.0,
            second_scale: 6.0,
            min_packets: 5,
            min_duration: ms(15.0),
        }
    }

    /// Sends the next cluster from `t0` through a path of `capacity_bps`
    /// (its queue empty at the start) and 50 ms one way; returns what
    /// feedback would report.
    fn send_cluster(
        p: &mut Prober,
        seq: &mut u64,
        t0: f64,
        capacity_bps: f64,
        bytes: u32,
    ) -> Vec<PacketResult> {
        let mut out = Vec::new();
        let mut free_at = 0.0f64;
        let mut t = t0;
        while let Some(next) = p.next_send() {
            let at = match next {
                ProbeSend::WithMedia => t,
                ProbeSend::At(n) => n.as_secs_f64().max(t),
            };
            t = at;
            let leave = at.max(free_at) + bytes as f64 * 8.0 / capacity_bps;
            free_at = leave;
            out.push(PacketResult {
                seq: *seq,
                sent_at: ms(at * 1e3),
                bytes,
                received: true,
                arrival: Some(ms(leave * 1e3 + 50.0)),
                ecn: 0,
            });
            p.on_send(ms(at * 1e3), *seq, bytes);
            *seq += 1;
            if p.queue.is_empty() || p.queue[0].started.is_none() {
                break;
            }
        }
        out
    }

    #[test]
    fn the_start_asks_for_three_and_six_times_the_start_rate_capped_at_the_maximum() {
        let p = Prober::new(shape(), 300e3, 10e6, SimTime::ZERO);
        let rates: Vec<f64> = p.queue.iter().map(|c| c.rate_bps).collect();
        assert_eq!(rates, vec![900e3, 1.8e6]);
        // 15 ms at 900 kbit/s: 1688 bytes (rounded up).
        assert_eq!(p.queue[0].min_bytes, 1688);
        assert_eq!(p.state, State::Waiting);
        let p = Prober::new(shape(), 300e3, 1.5e6, SimTime::ZERO);
        let rates: Vec<f64> = p.queue.iter().map(|c| c.rate_bps).collect();
        assert_eq!(rates, vec![900e3, 1.5e6]);
        assert_eq!(
            p.state,
            State::Done,
            "a probe at the maximum goes no further"
        );
    }

    #[test]
    fn a_cluster_starts_with_its_first_packet_and_paces_at_its_rate() {
        let mut p = Prober::new(shape(), 300e3, 10e6, SimTime::ZERO);
        assert_eq!(p.next_send(), Some(ProbeSend::WithMedia), "waits for media");
        assert!(p.on_send(ms(10.0), 7, 1000));
        // 1000 bytes at 900 kbit/s: the next 8.89 ms later.
        let Some(ProbeSend::At(next)) = p.next_send() else {
            panic!("under way")
        };
        assert!((next.as_secs_f64() - (0.010 + 8000.0 / 900e3)).abs() < 1e-9);
        // Five packets of 1000 bytes: both minimums met (1688 bytes).
        for s in 8..12 {
            p.on_send(next, s, 1000);
        }
        assert_eq!(p.sent.len(), 1);
        assert_eq!((p.sent[0].first_seq, p.sent[0].last_seq), (7, 11));
        // The next cluster (1.8 Mbit/s) waits for its first packet.
        assert_eq!(p.next_send(), Some(ProbeSend::WithMedia));
    }

    #[test]
    fn a_cluster_needs_its_bytes_as_well_as_its_packets() {
        let mut p = Prober::new(shape(), 300e3, 10e6, SimTime::ZERO);
        for s in 0..8 {
            p.on_send(ms(s as f64), s, 200);
        }
        // 8 x 200 = 1600 < 1688 bytes: still under way.
        assert!(p.sent.is_empty() && p.queue[0].sent_packets == 8);
        p.on_send(ms(9.0), 8, 200);
        assert_eq!(p.sent.len(), 1);
    }

    #[test]
    fn an_unsaturated_path_gives_the_probe_rate_and_a_saturated_one_its_capacity() {
        // 900 kbit/s probe through a 5 Mbit/s path: the send rate.
        let mut p = Prober::new(shape(), 300e3, 10e6, SimTime::ZERO);
        let mut seq = 0;
        let r = send_cluster(&mut p, &mut seq, 0.0, 5e6, 1000);
        assert_eq!(r.len(), 5);
        let e = p.on_feedback(&r).expect("an estimate");
        // Bytes but the last over the send interval: 4000 B over 4 x 8.89 ms.
        assert!((e - 900e3).abs() < 1.0, "{e}");
        // 1.8 Mbit/s through a 1 Mbit/s path: 0.95 of the receive rate
        // (the bytes but the first over the arrival spacing of 8 ms each).
        let r = send_cluster(&mut p, &mut seq, 0.2, 1e6, 1000);
        let e = p.on_feedback(&r).expect("an estimate");
        assert!((e - 0.95 * 1e6).abs() < 1.0, "{e}");
    }

    #[test]
    fn too_few_packets_received_or_an_implausible_spacing_give_no_estimate() {
        let mut p = Prober::new(shape(), 300e3, 10e6, SimTime::ZERO);
        let mut seq = 0;
        let mut r = send_cluster(&mut p, &mut seq, 0.0, 5e6, 1000);
        // Two of five lost: 3 < 0.8 x 5.
        r[1].received = false;
        r[3].received = false;
        assert_eq!(p.on_feedback(&r), None);
        // Arrivals bunched (receive rate over twice the send rate).
        let mut r = send_cluster(&mut p, &mut seq, 0.2, 5e6, 1000);
        for x in r.iter_mut() {
            x.arrival = Some(ms(300.0) + SimTime::from_micros(x.seq * 100));
        }
        assert_eq!(p.on_feedback(&r), None);
        // Packets not of a cluster are ignored.
        let stray = PacketResult { seq: 999, ..r[0] };
        assert_eq!(p.on_feedback(&[stray]), None);
    }

    #[test]
    fn an_estimate_near_the_probe_rate_probes_twice_as_high_until_the_maximum() {
        let mut p = Prober::new(shape(), 300e3, 4e6, SimTime::ZERO);
        p.queue.clear();
        p.on_estimate(ms(300.0), 0.6 * 1.8e6);
        assert!(
            p.queue.is_empty(),
            "under 0.7 of the last probe: no further probe"
        );
        p.on_estimate(ms(400.0), 1.5e6);
        assert_eq!(p.queue.len(), 1);
        assert_eq!(p.queue[0].rate_bps, 3e6);
        p.queue.clear();
        p.on_estimate(ms(500.0), 2.5e6);
        assert_eq!(p.queue[0].rate_bps, 4e6, "capped at the maximum");
        p.queue.clear();
        p.on_estimate(ms(600.0), 3.9e6);
        assert!(p.queue.is_empty(), "done after a probe at the maximum");
    }

    /// An aggregate of packets (send ms, arrival ms, bytes), in the order
    /// given.
    fn agg(packets: &[(f64, f64, u32)]) -> Aggregate {
        let mut a = Aggregate::default();
        for &(s, r, b) in packets {
            a.add(ms(s), ms(r), b);
        }
        a
    }

    /// `n` packets of `bytes`, sent `send_gap` ms apart from 0 and arriving
    /// `recv_gap` ms apart from 50 ms, aggregated in order.
    fn spaced(n: usize, send_gap: f64, recv_gap: f64, bytes: u32) -> Aggregate {
        let p: Vec<_> = (0..n)
            .map(|i| (send_gap * i as f64, 50.0 + recv_gap * i as f64, bytes))
            .collect();
        agg(&p)
    }

    #[test]
    fn the_estimate_takes_first_and_last_by_time_whatever_the_order() {
        // 1000-byte packets 10 ms apart, arriving 12 ms apart.
        let p: Vec<(f64, f64, u32)> = (0..5)
            .map(|i| (10.0 * i as f64, 50.0 + 12.0 * i as f64, 1000))
            .collect();
        let forward = agg(&p).estimate(5, 1000).unwrap();
        let mut rev = p.clone();
        rev.reverse();
        assert_eq!(agg(&rev).estimate(5, 1000), Some(forward));
        // 4000 bytes over 48 ms of arrivals: 0.667 of the send rate, so
        // 0.95 of the receive rate.
        assert!(
            (forward - 0.95 * 4000.0 * 8.0 / 0.048).abs() < 1e-6,
            "{forward}"
        );
    }

    #[test]
    fn ties_keep_the_first_packet_seen() {
        // Two packets leave together (a burst) and the first two arrive
        // together (a link that delivers per ms): the earliest kept is the
        // first seen, libwebrtc's strict comparisons.
        let p = [
            (0.0, 50.0, 1000),
            (0.0, 50.0, 200),
            (10.0, 60.0, 1000),
            (20.0, 70.0, 1000),
        ];
        let a = agg(&p);
        assert_eq!(a.first_send.unwrap().1, 1000);
        assert_eq!(a.first_arrival.unwrap().1, 1000);
        let q = [
            (0.0, 50.0, 1000),
            (10.0, 60.0, 1000),
            (20.0, 70.0, 1000),
            (20.0, 70.0, 200),
        ];
        let b = agg(&q);
        assert_eq!(b.last_send.unwrap().1, 1000);
        assert_eq!(b.last_arrival, Some(ms(70.0)));
    }

    #[test]
    fn eighty_percent_of_the_packets_and_bytes_are_enough() {
        // 4 of 5 packets: enough; 3: not.
        assert!(spaced(4, 10.0, 10.0, 1000).estimate(5, 1000).is_some());
        assert!(spaced(3, 10.0, 10.0, 1000).estimate(5, 1000).is_none());
        // 1400 of 1688 bytes (0.83): enough; 1000 (0.59): not.
        assert!(spaced(7, 10.0, 10.0, 200).estimate(5, 1688).is_some());
        assert!(spaced(5, 10.0, 10.0, 200).estimate(5, 1688).is_none());
    }

    #[test]
    fn the_ratio_bounds_hold_at_their_edges() {
        // Exactly 80% of the bytes: enough.
        assert!(spaced(5, 10.0, 10.0, 200).estimate(5, 1250).is_some());
        // Arrivals at exactly twice the send rate (4000 bytes over 40 ms
        // sent, over 20 ms received): valid, the send rate; at 1.5 times too.
        assert_eq!(spaced(5, 10.0, 5.0, 1000).estimate(5, 1000), Some(800e3));
        assert_eq!(
            spaced(5, 10.0, 10.0 / 1.5, 1000).estimate(5, 1000),
            Some(800e3)
        );
        // A receive rate of exactly 0.9 of the send rate (9000 bytes but the
        // first received, 10000 but the last sent, over 40 ms each): the
        // path kept up, so the lesser rate, not 0.95 of it.
        let sizes = [2000, 3000, 3000, 2000, 1000];
        let edge: Vec<_> = (0..5)
            .map(|i| (10.0 * i as f64, 50.0 + 10.0 * i as f64, sizes[i]))
            .collect();
        assert_eq!(agg(&edge).estimate(5, 1000), Some(1.8e6));
    }

    #[test]
    fn intervals_of_zero_or_over_a_second_give_no_estimate() {
        assert!(spaced(5, 0.0, 1.0, 1000).estimate(5, 1000).is_none());
        assert!(spaced(5, 1.0, 0.0, 1000).estimate(5, 1000).is_none());
        // Exactly a second of sending and of arrivals: still valid.
        assert!(spaced(5, 250.0, 250.0, 1000).estimate(5, 1000).is_some());
        assert!(spaced(5, 251.0, 250.0, 1000).estimate(5, 1000).is_none());
        assert!(spaced(5, 250.0, 251.0, 1000).estimate(5, 1000).is_none());
    }

    #[test]
    fn a_clusters_feedback_is_forgotten_a_second_after_a_newer_ones() {
        let mut p = Prober::new(shape(), 300e3, 10e6, SimTime::ZERO);
        let mut seq = 0;
        let first = send_cluster(&mut p, &mut seq, 0.0, 5e6, 1000);
        p.on_feedback(&first);
        let mut second = send_cluster(&mut p, &mut seq, 0.1, 5e6, 1000);
        // Its newest arrival exactly a second after the first's: kept.
        let shift = first.last().unwrap().arrival.unwrap() + SimTime::from_secs(1);
        let last = second.len() - 1;
        second[last].arrival = Some(shift);
        p.on_feedback(&second);
        assert_eq!(p.sent.len(), 2);
        second[last].arrival = Some(shift + SimTime::from_nanos(1));
        p.on_feedback(&second[last..]);
        assert_eq!(p.sent.len(), 1);
    }

    #[test]
    fn the_thresholds_to_probe_further_are_strict() {
        let mut p = Prober::new(shape(), 300e3, 10e6, SimTime::ZERO);
        p.queue.clear();
        // Exactly 0.7 of the last probe (1.8 Mbit/s): no further probe.
        p.on_estimate(ms(100.0), 0.7 * 1.8e6);
        assert!(p.queue.is_empty());
        // Exactly a second after the last probe: still waiting.
        p.on_estimate(ms(1000.0), 1.3e6);
        assert_eq!(p.queue.len(), 1);
    }

    #[test]
    fn probing_ends_a_second_after_the_last_probe_without_a_result() {
        let mut p = Prober::new(shape(), 300e3, 10e6, SimTime::ZERO);
        p.queue.clear();
        p.on_estimate(ms(1001.0), 1.7e6);
        assert!(p.queue.is_empty() && p.state == State::Done);
        p.on_estimate(ms(1002.0), 1.7e6);
        assert!(p.queue.is_empty());
    }
}
