//! When to send RTCP (RFC 3550 section 6.3 and appendix A.7).
//!
//! The state machine keeps tp (last transmission), tn (next scheduled),
//! pmembers, members, senders, avg_rtcp_size, we_sent and initial, and the
//! member table learned from received packets. The caller owns the timer:
//! it calls `on_expire` at `next_time()`, sends a compound packet when told
//! to, and reports it with `on_sent`.

use crate::sim::{uniform, SimRng, SimTime};

mod members;
use members::MemberTable;

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
    /// The session's SSRCs, when they form a range (first, count): the
    /// member table keeps those in an array (members.rs).
    pub ssrc_range: (u32, u32),
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
            ssrc_range: (0, 0),
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

/// What [`RtcpTiming::run_suppressed_slots`] ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotsRan {
    /// Expiries run, rescheduled by reconsideration or suppressed.
    pub expiries: u32,
    /// Slots suppressed.
    pub suppressed: u64,
    /// Stopped before a slot that sends.
    pub sends_next: bool,
}

/// What to do when the timer expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// Send a compound RTCP packet now, then call `on_sent`.
    Send,
    /// Reconsideration moved the transmission; the timer is now `next_time()`.
    Reschedule,
}

#[derive(Clone)]
pub struct RtcpTiming {
    cfg: TimingConfig,
    own: u32,
    tp: SimTime,
    tn: SimTime,
    pmembers: u32,
    /// Members other than ourselves.
    table: MemberTable,
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
    /// Counts the changes to what the interval is computed from (members,
    /// senders, our sender status, avg_rtcp_size, initial) and to tp and
    /// tn from outside the slots: a forecast of the slots made at one
    /// generation holds while it stands (`avpf::RtcpScheduler::wake_at`).
    generation: u64,
    /// Td and the generation it was computed at: its inputs stay the same
    /// until the next generation, and every slot (run, or on trial for a
    /// forecast) draws two intervals from it.
    td_memo: (u64, f64),
}

/// What running a slot changes in the timing ([`RtcpTiming::slot_state`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlotState {
    tp: SimTime,
    tn: SimTime,
    pmembers: u32,
    last_t: f64,
    reconsiderations: u64,
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
        let (ssrc_base, ssrc_slots) = cfg.ssrc_range;
        let mut t = RtcpTiming {
            cfg,
            own: own_ssrc,
            tp: now,
            tn: now,
            pmembers: 1,
            table: MemberTable::new(ssrc_base, ssrc_slots),
            we_sent: false,
            last_own_rtp: None,
            avg_rtcp_size: first_packet_bytes,
            initial: true,
            last_t: 0.0,
            timeout_tmin_s: 5.0,
            packets_sent: 0,
            bytes_sent: 0,
            reconsiderations: 0,
            generation: 0,
            td_memo: (u64::MAX, 0.0),
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
        1 + self.table.len()
    }
    pub fn senders(&self) -> u32 {
        self.table.senders() + self.we_sent as u32
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
    /// See the field: equal generations, the same interval inputs.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// What the slots move (tp, tn, pmembers, the interval last drawn
    /// and the reconsiderations), to be put back with
    /// [`Self::set_slot_state`] after a trial run of slots.
    pub fn slot_state(&self) -> SlotState {
        SlotState {
            tp: self.tp,
            tn: self.tn,
            pmembers: self.pmembers,
            last_t: self.last_t,
            reconsiderations: self.reconsiderations,
        }
    }

    pub fn set_slot_state(&mut self, s: SlotState) {
        (self.tp, self.tn, self.pmembers) = (s.tp, s.tn, s.pmembers);
        (self.last_t, self.reconsiderations) = (s.last_t, s.reconsiderations);
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
        if self.td_memo.0 != self.generation {
            self.td_memo = (self.generation, self.td());
        }
        self.last_t = rtcp_interval(self.td_memo.1, rng);
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
        self.generation += 1;
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

    /// Runs the timer's expiries from tn on, while tn < `limit` and fewer
    /// than `max` have run, each as `on_expire` at tn and, once due,
    /// `advance` would: the same draws in the same order. At each due
    /// expiry `sends(tn, rng)` draws what decides whether that slot sends
    /// (RFC 4585 3.5.3); if it does, the run stops before the slot, the
    /// state and `rng` as they were before it. Otherwise the slot is
    /// suppressed: tp = tn, tn = tn + T. Nothing outside the slots may
    /// change the interval's inputs meanwhile (one generation), so Td is
    /// taken once: a stretch of suppressed slots costs a few draws each,
    /// not a call through the whole timer (about 40 a second per member in
    /// an AVPF call with T_rr_interval).
    pub fn run_suppressed_slots(
        &mut self,
        limit: SimTime,
        max: u32,
        rng: &mut SimRng,
        mut sends: impl FnMut(SimTime, &mut SimRng) -> bool,
    ) -> SlotsRan {
        let mut ran = SlotsRan::default();
        if self.tn >= limit || max == 0 {
            return ran;
        }
        if self.td_memo.0 != self.generation {
            self.td_memo = (self.generation, self.td());
        }
        let td = self.td_memo.1;
        let (mut tp, mut tn, mut last_t) = (self.tp, self.tn, self.last_t);
        while tn < limit && ran.expiries < max {
            let before = (rng.clone(), last_t);
            if self.cfg.reconsideration {
                // 6.3.6, as on_expire.
                let t = rtcp_interval(td, rng);
                last_t = t;
                let candidate = tp + SimTime::from_secs_f64(t);
                if candidate > tn {
                    tn = candidate;
                    self.reconsiderations += 1;
                    ran.expiries += 1;
                    continue;
                }
            }
            if sends(tn, rng) {
                (*rng, last_t) = before;
                ran.sends_next = true;
                break;
            }
            tp = tn;
            last_t = rtcp_interval(td, rng);
            tn += SimTime::from_secs_f64(last_t);
            ran.suppressed += 1;
            ran.expiries += 1;
        }
        (self.tp, self.tn) = (tp, tn);
        self.last_t = last_t;
        if ran.suppressed > 0 {
            self.pmembers = self.members();
        }
        ran
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
        self.generation += !self.we_sent as u64;
        self.we_sent = true;
    }

    /// An RTP packet from `ssrc` (6.3.3: a new sender and member).
    pub fn on_rtp(&mut self, ssrc: u32, now: SimTime) {
        if ssrc == self.own {
            return;
        }
        let before = (self.table.len(), self.table.senders());
        self.table.sent_rtp(ssrc, now);
        self.generation += (before != (self.table.len(), self.table.senders())) as u64;
    }

    /// An RTCP compound packet of `bytes` from `ssrc` (6.3.3).
    pub fn on_rtcp(&mut self, ssrc: u32, bytes: f64, now: SimTime) {
        self.generation += 1;
        self.avg_rtcp_size = bytes / 16.0 + self.avg_rtcp_size * 15.0 / 16.0;
        if ssrc == self.own {
            return;
        }
        self.table.heard(ssrc, now);
    }

    /// A BYE from `ssrc` (6.3.4): the member leaves, with reverse
    /// reconsideration.
    pub fn on_bye(&mut self, ssrc: u32, now: SimTime) {
        if self.table.remove(ssrc) {
            self.generation += 1;
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
        let before = (self.table.senders(), self.we_sent);
        let gone = self.table.time_out(now, member_limit, sender_limit) as usize;
        if self
            .last_own_rtp
            .is_some_and(|t| now.saturating_sub(t) >= sender_limit)
        {
            self.we_sent = false;
        }
        if gone > 0 {
            self.reverse_reconsider(now);
        }
        self.generation += (gone > 0 || before != (self.table.senders(), self.we_sent)) as u64;
        gone
    }
}

#[cfg(test)]
mod tests;
