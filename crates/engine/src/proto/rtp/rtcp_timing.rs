//! When to send RTCP (RFC 3550 section 6.3 and appendix A.7).
//!
//! The state machine keeps tp (last transmission), tn (next scheduled),
//! pmembers, members, senders, avg_rtcp_size, we_sent and initial, and the
//! member table learned from received packets. The caller owns the timer:
//! it calls `on_expire` at `next_time()`, sends a compound packet when told
//! to, and reports it with `on_sent`.

use crate::sim::{uniform, SimRng, SimTime};
use std::collections::HashMap;

/// e - 3/2: compensates the randomisation of timer reconsideration
/// (RFC 3550 6.3.1), which otherwise makes the mean interval too short.
pub const COMPENSATION: f64 = std::f64::consts::E - 1.5;

/// RFC 3550 6.3.5: a member is timed out after this many intervals.
pub const MEMBER_TIMEOUT_INTERVALS: f64 = 5.0;

#[derive(Clone, Debug)]
pub struct TimingConfig {
    /// Session bandwidth in bit/s (media, all senders).
    pub session_bw_bps: f64,
    /// Share of the session bandwidth for RTCP (0.05).
    pub rtcp_fraction: f64,
    /// Share of the RTCP bandwidth for senders when they are at most this
    /// share of the members (0.25).
    pub sender_fraction: f64,
    /// Minimum interval Tmin after the first packet (AVP: 5 s; AVPF: 0).
    pub min_interval_s: f64,
    /// Tmin before the first packet (AVP: half of 5 s; AVPF: 1 s in
    /// multiparty sessions, 0 point-to-point; RFC 4585 3.5.1).
    pub initial_min_interval_s: f64,
    /// Timer reconsideration (6.3.3/6.3.6). Off only to show what it
    /// prevents.
    pub reconsideration: bool,
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            session_bw_bps: 64_000.0,
            rtcp_fraction: 0.05,
            sender_fraction: 0.25,
            min_interval_s: 5.0,
            initial_min_interval_s: 2.5,
            reconsideration: true,
        }
    }
}

/// The deterministic interval Td of RFC 3550 A.7, in seconds (before the
/// [0.5, 1.5] randomisation and the compensation), with minimum `tmin_s`
/// (A.7 halves its 5 s minimum before the first packet; the caller passes
/// the minimum that applies). `rtcp_bw` is in
/// octets per second; `avg_rtcp_size` in octets including lower layers.
pub fn deterministic_interval(
    members: u32,
    senders: u32,
    rtcp_bw: f64,
    we_sent: bool,
    avg_rtcp_size: f64,
    tmin_s: f64,
    sender_fraction: f64,
) -> f64 {
    let rtcp_min_time = tmin_s;
    let mut bw = rtcp_bw;
    let mut n = members as f64;
    // Senders get their share only while they are at most a quarter of
    // the members; otherwise everyone shares alike.
    if senders as f64 <= members as f64 * sender_fraction {
        if we_sent {
            bw *= sender_fraction;
            n = senders as f64;
        } else {
            bw *= 1.0 - sender_fraction;
            n -= senders as f64;
        }
    }
    let t = avg_rtcp_size * n / bw;
    t.max(rtcp_min_time)
}

/// The randomised interval of A.7: Td * U[0.5, 1.5] / (e - 3/2).
pub fn rtcp_interval(td_s: f64, rng: &mut SimRng) -> f64 {
    td_s * (uniform(rng) + 0.5) / COMPENSATION
}

#[derive(Clone, Copy, Debug)]
struct Member {
    last_heard: SimTime,
    last_rtp: Option<SimTime>,
}

/// What to do when the timer expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// Send a compound RTCP packet now, then call `on_sent`.
    Send,
    /// Reconsideration moved the transmission; the timer is now `next_time()`.
    Reschedule,
}

pub struct RtcpTiming {
    cfg: TimingConfig,
    own: u32,
    tp: SimTime,
    tn: SimTime,
    pmembers: u32,
    /// Members other than ourselves.
    table: HashMap<u32, Member>,
    we_sent: bool,
    last_own_rtp: Option<SimTime>,
    avg_rtcp_size: f64,
    initial: bool,
    /// T_rr: the last (randomised) interval computed (RFC 4585 3.4 e).
    last_t: f64,
    /// Tmin used for member time-outs: 5 s (RFC 3550 6.3.5), or
    /// T_rr_interval in AVPF when that is set (RFC 4585 3.5.4).
    pub timeout_tmin_s: f64,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub reconsiderations: u64,
}

impl RtcpTiming {
    /// Joins the session at `now` (RFC 3550 6.3.2): tp = now, members = 1,
    /// initial = true, avg_rtcp_size = the size of the first packet.
    pub fn new(
        cfg: TimingConfig,
        own_ssrc: u32,
        first_packet_bytes: f64,
        now: SimTime,
        rng: &mut SimRng,
    ) -> Self {
        let mut t = RtcpTiming {
            cfg,
            own: own_ssrc,
            tp: now,
            tn: now,
            pmembers: 1,
            table: HashMap::new(),
            we_sent: false,
            last_own_rtp: None,
            avg_rtcp_size: first_packet_bytes,
            initial: true,
            last_t: 0.0,
            timeout_tmin_s: 5.0,
            packets_sent: 0,
            bytes_sent: 0,
            reconsiderations: 0,
        };
        let first = t.randomised(rng);
        t.tn = now + SimTime::from_secs_f64(first);
        t
    }

    /// T_rr, the Regular RTCP interval: the last interval computed.
    pub fn t_rr(&self) -> f64 {
        self.last_t
    }

    fn tmin(&self) -> f64 {
        if self.initial {
            self.cfg.initial_min_interval_s
        } else {
            self.cfg.min_interval_s
        }
    }

    pub fn members(&self) -> u32 {
        1 + self.table.len() as u32
    }
    pub fn senders(&self) -> u32 {
        self.table.values().filter(|m| m.last_rtp.is_some()).count() as u32 + self.we_sent as u32
    }
    pub fn next_time(&self) -> SimTime {
        self.tn
    }
    pub fn last_time(&self) -> SimTime {
        self.tp
    }
    pub fn avg_rtcp_size(&self) -> f64 {
        self.avg_rtcp_size
    }
    pub fn we_sent(&self) -> bool {
        self.we_sent
    }

    fn rtcp_bw(&self) -> f64 {
        self.cfg.session_bw_bps * self.cfg.rtcp_fraction / 8.0
    }

    /// Td with the current state.
    pub fn td(&self) -> f64 {
        deterministic_interval(
            self.members(),
            self.senders(),
            self.rtcp_bw(),
            self.we_sent,
            self.avg_rtcp_size,
            self.tmin(),
            self.cfg.sender_fraction,
        )
    }

    fn randomised(&mut self, rng: &mut SimRng) -> f64 {
        self.last_t = rtcp_interval(self.td(), rng);
        self.last_t
    }

    /// The timer fired (A.7 OnExpire for a regular packet).
    pub fn on_expire(&mut self, now: SimTime, rng: &mut SimRng) -> Expiry {
        if !self.cfg.reconsideration {
            return Expiry::Send;
        }
        // 6.3.6: recompute with the current state; send only if the new
        // time has passed.
        let t = SimTime::from_secs_f64(self.randomised(rng));
        let candidate = self.tp + t;
        if candidate <= now {
            Expiry::Send
        } else {
            self.tn = candidate;
            self.reconsiderations += 1;
            Expiry::Reschedule
        }
    }

    /// A regular compound packet of `bytes` (IP and UDP included) left at
    /// `now` (A.7 OnExpire after sending).
    pub fn on_sent(&mut self, now: SimTime, bytes: f64, rng: &mut SimRng) {
        self.count_sent(bytes);
        self.initial = false;
        self.advance(now, rng);
    }

    fn count_sent(&mut self, bytes: f64) {
        self.packets_sent += 1;
        self.bytes_sent += bytes as u64;
        // 6.3.3: avg_rtcp_size is a 1/16 moving average over all packets.
        self.avg_rtcp_size = bytes / 16.0 + self.avg_rtcp_size * 15.0 / 16.0;
    }

    /// tp = now, tn = now + T: after a regular packet is sent, or suppressed
    /// under T_rr_interval (RFC 4585 3.5.3).
    pub fn advance(&mut self, now: SimTime, rng: &mut SimRng) {
        self.tp = now;
        let t = self.randomised(rng);
        self.tn = now + SimTime::from_secs_f64(t);
        self.pmembers = self.members();
    }

    /// An Early RTCP packet of `bytes` left (RFC 4585 3.5.2 step 6): the
    /// next regular slot is skipped: tn = tp + 2 T_rr, tp = the old tn.
    pub fn on_early_sent(&mut self, bytes: f64) {
        self.count_sent(bytes);
        let t_rr = SimTime::from_secs_f64(self.last_t);
        let old_tn = self.tn;
        self.tn = self.tp + t_rr + t_rr;
        self.tp = old_tn;
    }

    /// We sent an RTP packet (we count as a sender for 2 intervals).
    pub fn on_own_rtp(&mut self, now: SimTime) {
        self.last_own_rtp = Some(now);
        self.we_sent = true;
    }

    /// An RTP packet from `ssrc` (6.3.3: a new sender and member).
    pub fn on_rtp(&mut self, ssrc: u32, now: SimTime) {
        if ssrc == self.own {
            return;
        }
        let m = self.table.entry(ssrc).or_insert(Member {
            last_heard: now,
            last_rtp: None,
        });
        m.last_heard = now;
        m.last_rtp = Some(now);
    }

    /// An RTCP compound packet of `bytes` from `ssrc` (6.3.3).
    pub fn on_rtcp(&mut self, ssrc: u32, bytes: f64, now: SimTime) {
        self.avg_rtcp_size = bytes / 16.0 + self.avg_rtcp_size * 15.0 / 16.0;
        if ssrc == self.own {
            return;
        }
        self.table
            .entry(ssrc)
            .or_insert(Member {
                last_heard: now,
                last_rtp: None,
            })
            .last_heard = now;
    }

    /// A BYE from `ssrc` (6.3.4): the member leaves, with reverse
    /// reconsideration.
    pub fn on_bye(&mut self, ssrc: u32, now: SimTime) {
        if self.table.remove(&ssrc).is_some() {
            self.reverse_reconsider(now);
        }
    }

    /// 6.3.4: when members drop below pmembers, pull tn and tp in
    /// proportionally, so the remaining members do not wait needlessly.
    fn reverse_reconsider(&mut self, now: SimTime) {
        let members = self.members();
        if members < self.pmembers {
            let f = members as f64 / self.pmembers as f64;
            let ahead = self.tn.saturating_sub(now).as_secs_f64();
            let behind = now.saturating_sub(self.tp).as_secs_f64();
            self.tn = now + SimTime::from_secs_f64(f * ahead);
            self.tp = now.saturating_sub(SimTime::from_secs_f64(f * behind));
            self.pmembers = members;
        }
    }

    /// 6.3.5: time out members silent for 5 deterministic intervals (Tmin
    /// 5 s, not initial) and senders without RTP for 2 intervals; our own
    /// sender status lapses the same way. Returns how many left.
    pub fn check_timeouts(&mut self, now: SimTime) -> usize {
        let td = deterministic_interval(
            self.members(),
            self.senders(),
            self.rtcp_bw(),
            self.we_sent,
            self.avg_rtcp_size,
            self.timeout_tmin_s,
            self.cfg.sender_fraction,
        );
        let member_limit = SimTime::from_secs_f64(MEMBER_TIMEOUT_INTERVALS * td);
        let sender_limit = SimTime::from_secs_f64(2.0 * td);
        let before = self.table.len();
        self.table
            .retain(|_, m| now.saturating_sub(m.last_heard) < member_limit);
        for m in self.table.values_mut() {
            if m.last_rtp
                .is_some_and(|t| now.saturating_sub(t) >= sender_limit)
            {
                m.last_rtp = None;
            }
        }
        if self
            .last_own_rtp
            .is_some_and(|t| now.saturating_sub(t) >= sender_limit)
        {
            self.we_sent = false;
        }
        let gone = before - self.table.len();
        if gone > 0 {
            self.reverse_reconsider(now);
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    /// A.7 by hand: Td = max(Tmin, avg * n / bw_share).
    #[test]
    fn deterministic_interval_matches_rfc3550_a7_over_a_grid() {
        // (The initial Tmin of AVP is half of 5 s, passed as 2.5.)
        for &members in &[1u32, 2, 4, 10, 100, 1000] {
            for &senders in &[0u32, 1, 2, 50] {
                if senders > members {
                    continue;
                }
                for &bw_bps in &[20e3, 200e3, 2e6] {
                    for &avg in &[60.0, 100.0, 400.0] {
                        for we_sent in [false, true] {
                            let rtcp_bw = bw_bps * 0.05 / 8.0;
                            let (share, n) = if senders as f64 <= 0.25 * members as f64 {
                                if we_sent {
                                    (0.25 * rtcp_bw, senders as f64)
                                } else {
                                    (0.75 * rtcp_bw, (members - senders) as f64)
                                }
                            } else {
                                (rtcp_bw, members as f64)
                            };
                            let want = (avg * n / share).max(5.0);
                            let got = deterministic_interval(
                                members, senders, rtcp_bw, we_sent, avg, 5.0, 0.25,
                            );
                            assert!(
                                (got - want).abs() < 1e-12,
                                "{members} {senders} {bw_bps} {avg} {we_sent}"
                            );
                            let got_initial = deterministic_interval(
                                members, senders, rtcp_bw, we_sent, avg, 2.5, 0.25,
                            );
                            assert!((got_initial - (avg * n / share).max(2.5)).abs() < 1e-12);
                            let avpf = deterministic_interval(
                                members, senders, rtcp_bw, we_sent, avg, 0.0, 0.25,
                            );
                            assert!((avpf - avg * n / share).abs() < 1e-12, "AVPF: no minimum");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn randomised_interval_stays_in_bounds_and_averages_td_over_e_minus_three_halves() {
        let mut rng = RngStreams::new(1, 0).stream("t");
        let td = 5.0;
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let t = rtcp_interval(td, &mut rng);
            assert!(t >= 0.5 * td / COMPENSATION && t < 1.5 * td / COMPENSATION);
            sum += t;
        }
        let mean = sum / n as f64;
        assert!(
            (mean / (td / COMPENSATION) - 1.0).abs() < 0.005,
            "mean {mean}"
        );
    }

    #[test]
    fn reverse_reconsideration_pulls_the_timer_in() {
        let mut rng = RngStreams::new(2, 0).stream("t");
        let cfg = TimingConfig {
            session_bw_bps: 20e3,
            ..Default::default()
        };
        let mut t = RtcpTiming::new(cfg, 1, 100.0, SimTime::ZERO, &mut rng);
        for s in 2..=10 {
            t.on_rtcp(s, 100.0, SimTime::ZERO);
        }
        let now = SimTime::from_secs(1);
        t.on_sent(now, 100.0, &mut rng); // pmembers = 10
        let (tn, tp) = (t.next_time(), t.last_time());
        let later = SimTime::from_secs(2);
        for s in 2..=6 {
            t.on_bye(s, later);
        }
        // members 5 of pmembers 10 at the last step: both gaps shrink.
        assert_eq!(t.members(), 5);
        assert!(t.next_time() < tn);
        assert!(t.next_time() >= later);
        assert!(t.last_time() > tp.saturating_sub(SimTime::from_secs(1)));
    }

    #[test]
    fn silent_members_time_out_after_five_intervals_and_senders_after_two() {
        let mut rng = RngStreams::new(3, 0).stream("t");
        let mut t = RtcpTiming::new(TimingConfig::default(), 1, 100.0, SimTime::ZERO, &mut rng);
        t.on_rtp(2, SimTime::ZERO);
        t.on_rtcp(3, 100.0, SimTime::ZERO);
        assert_eq!((t.members(), t.senders()), (3, 1));
        // Td here is the 5 s minimum: sender status lapses after 10 s,
        // membership after 25 s.
        assert_eq!(t.check_timeouts(SimTime::from_secs(11)), 0);
        assert_eq!(t.senders(), 0);
        assert_eq!(t.check_timeouts(SimTime::from_secs(26)), 2);
        assert_eq!(t.members(), 1);
    }

    /// Step join: `n` members start at t = 0 on a shared medium with no
    /// delay. Returns the RTCP packets sent in the first `horizon_s`.
    fn step_join(n: u32, reconsideration: bool, horizon_s: f64) -> u64 {
        let streams = RngStreams::new(9, 0);
        let cfg = TimingConfig {
            session_bw_bps: 64e3,
            reconsideration,
            ..Default::default()
        };
        let mut rngs: Vec<SimRng> = (0..n).map(|i| streams.stream(&format!("m{i}"))).collect();
        let mut m: Vec<RtcpTiming> = (0..n)
            .map(|i| RtcpTiming::new(cfg.clone(), i, 100.0, SimTime::ZERO, &mut rngs[i as usize]))
            .collect();
        let horizon = SimTime::from_secs_f64(horizon_s);
        let mut sent = 0;
        loop {
            let (i, t) = m
                .iter()
                .enumerate()
                .map(|(i, x)| (i, x.next_time()))
                .min_by_key(|x| (x.1, x.0))
                .unwrap();
            if t > horizon {
                break;
            }
            match m[i].on_expire(t, &mut rngs[i]) {
                Expiry::Reschedule => {}
                Expiry::Send => {
                    sent += 1;
                    m[i].on_sent(t, 100.0, &mut rngs[i]);
                    for (j, other) in m.iter_mut().enumerate() {
                        if j != i {
                            other.on_rtcp(i as u32, 100.0, t);
                        }
                    }
                }
            }
        }
        sent
    }

    #[test]
    fn step_join_reconsideration_keeps_rtcp_near_its_share() {
        // 64 kbit/s session: RTCP gets 400 B/s, i.e. 4 packets of 100 B per
        // second. 500 members joining at once.
        let share_10s = 4.0 * 10.0;
        let without = step_join(500, false, 10.0);
        let with = step_join(500, true, 10.0);
        eprintln!("step join, 500 members, first 10 s: {without} packets without reconsideration, {with} with (share {share_10s})");
        assert!(
            without as f64 > 10.0 * share_10s,
            "without reconsideration: {without}"
        );
        assert!(
            (with as f64) < 3.0 * share_10s,
            "with reconsideration: {with}"
        );
    }
}
