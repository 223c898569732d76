//! RTCP scheduling with feedback: the AVP profile (RFC 3550 alone) and the
//! AVPF profile (RFC 4585 section 3.5): Early RTCP packets, allow_early,
//! T_dither_max, T_rr_interval, feedback waiting for a Regular packet,
//! max feedback delay, and suppression on hearing the same feedback.
//!
//! Feedback is modelled as "loss events": the sequence numbers of one media
//! source a receiver wants to NACK, detected at t0. The caller turns what
//! `on_timer` returns into RTCP packets (Generic NACK or application-layer
//! feedback).

use super::rtcp_timing::{Expiry, RtcpTiming, SlotState, SlotsRan};
use crate::sim::{uniform, SimRng, SimTime};
use std::collections::VecDeque;

/// How T_dither_max is chosen for a multiparty session.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DitherRule {
    /// RFC 4585 3.5.2 step 2b: 0 point-to-point, otherwise l * T_rr.
    Rfc { l: f64 },
    /// The earlier draft rule: a member with an RTT estimate to the media
    /// sender uses k * RTT / 2 * members; one without uses l * T_rr.
    RttDraft { k: f64, l: f64 },
}

#[derive(Clone, Debug)]
pub struct AvpfConfig {
    /// T_rr_interval in seconds (0: none).
    pub trr_interval_s: f64,
    pub dither: DitherRule,
    /// T_max_fb_delay: feedback that would wait longer is discarded.
    pub max_feedback_delay_s: f64,
    /// T_dither_max = 0 (RFC 4585 3.5.2 step 2b, a session of exactly two
    /// members); the initial Tmin of 3.4 is the timing's own setting.
    pub point_to_point: bool,
    /// T_retention: how long received feedback is kept for suppression
    /// (at least 2 s).
    pub retention_s: f64,
}

impl Default for AvpfConfig {
    fn default() -> Self {
        AvpfConfig {
            trr_interval_s: 0.0,
            dither: DitherRule::Rfc { l: 0.5 },
            max_feedback_delay_s: 1.0,
            point_to_point: false,
            retention_s: 2.0,
        }
    }
}

/// One piece of feedback a member wants to send.
#[derive(Clone, Debug, PartialEq)]
pub struct FbItem {
    pub media_ssrc: u32,
    pub seqs: Vec<u16>,
    /// When the loss was detected.
    pub t0: SimTime,
}

/// What to send now.
#[derive(Clone, Debug, PartialEq)]
pub enum Transmit {
    /// A Regular (full compound) RTCP packet, with any stored feedback.
    Regular(Vec<FbItem>),
    /// An Early RTCP packet (RFC 4585: minimal compound) with feedback.
    Early(Vec<FbItem>),
}

/// Feedback counters of one member (the study's metrics).
#[derive(Clone, Debug, Default)]
pub struct FbStats {
    /// Loss events the member wanted to report.
    pub wanted: u64,
    /// Loss events reported (in an Early or a Regular packet).
    pub sent: u64,
    pub sent_early: u64,
    pub suppressed: u64,
    pub discarded: u64,
    /// Sum of (sending time - detection time) over sent events, seconds.
    pub wait_sum_s: f64,
    pub early_packets: u64,
    pub regular_packets: u64,
    /// Regular packets suppressed under T_rr_interval.
    pub regular_suppressed: u64,
}

impl FbStats {
    /// Mean waiting time of sent feedback (MWT), seconds.
    pub fn mean_wait_s(&self) -> f64 {
        if self.sent == 0 {
            f64::NAN
        } else {
            self.wait_sum_s / self.sent as f64
        }
    }
}

#[derive(Clone)]
pub struct RtcpScheduler {
    pub timing: RtcpTiming,
    /// None: the AVP profile (no early packets, feedback ignored).
    avpf: Option<AvpfConfig>,
    allow_early: bool,
    /// te, if an Early RTCP packet is scheduled.
    early_at: Option<SimTime>,
    /// Feedback waiting for the Early packet or the next Regular one.
    pending: Vec<FbItem>,
    /// t_rr_last: the last Regular packet actually sent (None: never).
    t_rr_last: Option<SimTime>,
    /// Feedback heard from others: (arrival, media ssrc, seqs).
    heard: VecDeque<(SimTime, u32, Vec<u16>)>,
    rtt_s: Option<f64>,
    pub stats: FbStats,
    /// The first Regular slot found to send by a trial run of the slots
    /// ahead ([`Self::wake_at`]): every slot before it is suppressed, as
    /// long as nothing the slots depend on changes (the timing's
    /// generation, and no feedback or Early packet in between).
    forecast: Option<Forecast>,
}

#[derive(Clone, Debug)]
struct Forecast {
    generation: u64,
    send_at: SimTime,
    /// The state after the suppressed slots before `send_at`: a catch-up
    /// to `send_at` or later takes it instead of running them again.
    end: SlotsRun,
}

/// What the suppressed slots move: the timing's slot state, allow_early,
/// the suppressed count and the member's random stream.
#[derive(Clone, Debug)]
struct SlotsRun {
    timing: SlotState,
    allow_early: bool,
    suppressed: u64,
    rng: SimRng,
}

/// Whether the slot at `now` sends a Regular packet under T_rr_interval:
/// once T_rr_current_interval, (u + 0.5) T_rr_interval with u uniform in
/// [0, 1), has passed since the last one (RFC 4585 3.5.3).
fn regular_due(last: SimTime, trr_interval_s: f64, now: SimTime, rng: &mut SimRng) -> bool {
    let current = (uniform(rng) + 0.5) * trr_interval_s;
    last + SimTime::from_secs_f64(current) <= now
}

/// Most slots a forecast runs ahead: a Regular packet goes within 1.5
/// T_rr_interval, some 40 to 80 slots in a two-party call; a longer
/// stretch is forecast in parts.
const FORECAST_SLOTS: u32 = 256;

impl RtcpScheduler {
    pub fn new(timing: RtcpTiming, avpf: Option<AvpfConfig>) -> Self {
        RtcpScheduler {
            timing,
            avpf,
            allow_early: true,
            early_at: None,
            pending: Vec::new(),
            t_rr_last: None,
            heard: VecDeque::new(),
            rtt_s: None,
            stats: FbStats::default(),
            forecast: None,
        }
    }

    pub fn is_avpf(&self) -> bool {
        self.avpf.is_some()
    }
    pub fn allow_early(&self) -> bool {
        self.allow_early
    }
    pub fn early_at(&self) -> Option<SimTime> {
        self.early_at
    }
    /// The member's RTT estimate to the media sender (from LSR/DLSR).
    pub fn set_rtt(&mut self, rtt_s: f64) {
        self.rtt_s = Some(rtt_s);
    }

    /// When `on_timer` must next be called.
    pub fn deadline(&self) -> SimTime {
        match self.early_at {
            Some(te) => te.min(self.timing.next_time()),
            None => self.timing.next_time(),
        }
    }

    /// With T_rr_interval, the time before which every Regular slot is
    /// certainly suppressed, if the next slot is. A slot sends a Regular
    /// packet only once (u + 0.5) T_rr_interval has passed since the last
    /// one, u uniform in [0, 1) (RFC 4585 3.5.3), or when feedback waits:
    /// with none waiting and no Early packet scheduled, the slots before
    /// t_rr_last + T_rr_interval / 2 only move tp and tn on and draw from
    /// the member's random stream, whatever the draws. Beyond that, the
    /// slots before a standing forecast's sending slot are suppressed too:
    /// the same state and draws give the same outcomes. None when the next
    /// slot might send.
    pub fn quiet_until(&self) -> Option<SimTime> {
        let half = self.quiet_half_end()?;
        let end = match self.standing_forecast() {
            Some(f) => f.send_at.max(half),
            None => half,
        };
        (self.timing.next_time() < end).then_some(end)
    }

    /// t_rr_last + T_rr_interval / 2, when slots can be quiet at all:
    /// T_rr_interval set, a Regular packet sent, no feedback waiting and
    /// no Early packet scheduled.
    fn quiet_half_end(&self) -> Option<SimTime> {
        let cfg = self.avpf.as_ref()?;
        if cfg.trr_interval_s <= 0.0 || self.early_at.is_some() || !self.pending.is_empty() {
            return None;
        }
        Some(self.t_rr_last? + SimTime::from_secs_f64(0.5 * cfg.trr_interval_s))
    }

    /// Runs, in order, the certainly suppressed slots (see
    /// [`Self::quiet_until`]) due at or before `now` and before `stop`,
    /// each as its own timer would have at its time. The member calls this
    /// before anything else it does at `now`, so the slots see the state
    /// and the random draws they would have seen on time: a session member
    /// wakes for a stretch of them once ([`Self::wake_at`]), not once per
    /// slot (about 40 slots a second each in a two-party AVPF call with
    /// T_rr_interval, nearly all suppressed).
    /// Returns whether it ran any.
    #[inline]
    pub fn catch_up(&mut self, now: SimTime, stop: SimTime, rng: &mut SimRng) -> bool {
        // Most calls come between slots: one comparison, the loop out of
        // line (it would crowd the member's per-packet code).
        self.timing.next_time() <= now && self.catch_up_due(now, stop, rng)
    }

    #[inline(never)]
    fn catch_up_due(&mut self, now: SimTime, stop: SimTime, rng: &mut SimRng) -> bool {
        let mut ran = false;
        // Every slot of a standing forecast's is due: take the state its
        // trial reached after them (the same state, run or taken).
        if let Some(f) = self.standing_forecast() {
            if now >= f.send_at
                && self.timing.next_time() < f.send_at
                && self.quiet_until().is_some()
            {
                let end = f.end.clone();
                self.set_slots_run(&end);
                *rng = end.rng;
                ran = true;
            }
        }
        if let Some(end) = self.quiet_until() {
            let limit = end.min(stop).min(SimTime(now.0.saturating_add(1)));
            let r = self.run_quiet_slots(limit, u32::MAX, rng);
            debug_assert!(!r.sends_next, "a quiet slot sends");
            ran |= r.expiries > 0;
        }
        ran
    }

    /// Runs the slots before `limit` (at most `max`), stopping before the
    /// first that sends a Regular packet. Only while slots can be quiet
    /// ([`Self::quiet_half_end`]): no feedback waits and no Early packet
    /// is scheduled, so each slot is rescheduled, suppressed or sends, and
    /// nothing but the draws decides which.
    fn run_quiet_slots(&mut self, limit: SimTime, max: u32, rng: &mut SimRng) -> SlotsRan {
        let (Some(cfg), Some(last)) = (&self.avpf, self.t_rr_last) else {
            return SlotsRan::default();
        };
        debug_assert!(self.quiet_half_end().is_some());
        let trr_interval_s = cfg.trr_interval_s;
        let r = self
            .timing
            .run_suppressed_slots(limit, max, rng, |tn, rng| {
                regular_due(last, trr_interval_s, tn, rng)
            });
        if r.suppressed > 0 {
            // Each slot reached allows early packets again.
            self.allow_early = true;
            self.stats.regular_suppressed += r.suppressed;
        }
        r
    }

    /// When the member must next wake for RTCP: [`Self::deadline`], or the
    /// end of a stretch of certainly suppressed slots (run late by
    /// [`Self::catch_up`]). With T_rr_interval and nothing waiting, the
    /// member wakes at the end of the quiet half; from there the slots
    /// ahead are first run on trial, from the present state and a copy of
    /// the member's random stream `rng`, up to the first that sends (or
    /// `stop`): the member then wakes about twice per Regular packet
    /// instead of at each of the 15 to 40 slots between the end of the
    /// quiet half and the slot that sends. No trial runs within the quiet
    /// half: the other members' reports, each of which ends a trial, come
    /// as often as the member's own, so a trial begun at the member's own
    /// packet would mostly be undone and would run the quiet half's slots
    /// once more (twice the slots in a two-party call). The trial's
    /// outcome stands until the timing's inputs change (its generation),
    /// feedback waits or a packet is sent; every such change comes after a
    /// catch-up to the present (the member's rule), so the slots run late
    /// see exactly the state and draws the trial saw.
    pub fn wake_at(&mut self, stop: SimTime, rng: &SimRng) -> SimTime {
        let past_half = self
            .quiet_half_end()
            .is_some_and(|h| self.timing.next_time() >= h);
        if self.standing_forecast().is_none() && past_half {
            let (send_at, end) = self.trial(stop, rng);
            self.forecast = Some(Forecast {
                generation: self.timing.generation(),
                send_at,
                end,
            });
        }
        self.quiet_until().unwrap_or_else(|| self.deadline())
    }

    /// Runs the slots ahead on trial and puts everything back: the time
    /// of the first that sends, or of the first at or after `stop` or
    /// past `FORECAST_SLOTS` (every slot before it was suppressed), and
    /// the state just before that slot.
    fn trial(&mut self, stop: SimTime, rng: &SimRng) -> (SimTime, SlotsRun) {
        let saved = self.slots_run(rng);
        let mut rng = rng.clone();
        self.run_quiet_slots(stop, FORECAST_SLOTS, &mut rng);
        let (at, end) = (self.timing.next_time(), self.slots_run(&rng));
        self.set_slots_run(&saved);
        (at, end)
    }

    fn slots_run(&self, rng: &SimRng) -> SlotsRun {
        SlotsRun {
            timing: self.timing.slot_state(),
            allow_early: self.allow_early,
            suppressed: self.stats.regular_suppressed,
            rng: rng.clone(),
        }
    }

    /// Puts back what `slots_run` took, but for the random stream.
    fn set_slots_run(&mut self, s: &SlotsRun) {
        self.timing.set_slot_state(s.timing);
        self.allow_early = s.allow_early;
        self.stats.regular_suppressed = s.suppressed;
    }

    /// The forecast, if it still stands (see the field).
    fn standing_forecast(&self) -> Option<&Forecast> {
        (self.forecast.as_ref()).filter(|f| f.generation == self.timing.generation())
    }

    /// T_dither_max (RFC 4585 3.5.2 step 2b, or the draft's RTT rule).
    pub fn t_dither_max(&self) -> f64 {
        let Some(cfg) = &self.avpf else { return 0.0 };
        if cfg.point_to_point {
            return 0.0;
        }
        let t_rr = self.timing.t_rr();
        match cfg.dither {
            DitherRule::Rfc { l } => l * t_rr,
            DitherRule::RttDraft { k, l } => match self.rtt_s {
                Some(rtt) => k * rtt / 2.0 * self.timing.members() as f64,
                None => l * t_rr,
            },
        }
    }

    /// Whether feedback heard in [t0 - T_retention, now] covers `seqs`.
    fn covered(&self, media: u32, seqs: &[u16], since: SimTime) -> bool {
        let heard: Vec<u16> = self
            .heard
            .iter()
            .filter(|(t, m, _)| *t >= since && *m == media)
            .flat_map(|(_, _, s)| s.iter().copied())
            .collect();
        seqs.iter().all(|s| heard.contains(s))
    }

    /// A loss event at `now` (t0) to be reported (RFC 4585 3.5.2 steps 1-4).
    pub fn on_loss(&mut self, now: SimTime, media_ssrc: u32, seqs: Vec<u16>, rng: &mut SimRng) {
        self.stats.wanted += 1;
        self.forecast = None; // it may draw from `rng`
        let Some(cfg) = self.avpf.clone() else {
            // AVP: no early packets and no feedback delay bound: the
            // feedback rides the next regular report, however far away.
            self.pending.push(FbItem {
                media_ssrc,
                seqs,
                t0: now,
            });
            return;
        };
        // Step 5 for feedback heard before t0 (within T_retention).
        let since = now.saturating_sub(SimTime::from_secs_f64(cfg.retention_s));
        if self.covered(media_ssrc, &seqs, since) {
            self.stats.suppressed += 1;
            return;
        }
        let item = FbItem {
            media_ssrc,
            seqs,
            t0: now,
        };
        // Step 2a: a compound packet with feedback is already scheduled.
        if self.early_at.is_some() || !self.pending.is_empty() {
            self.pending.push(item);
            return;
        }
        let dither = self.t_dither_max();
        let tn = self.timing.next_time();
        // Step 3a: the next Regular packet is within reach anyway.
        if now + SimTime::from_secs_f64(dither) > tn {
            self.pending.push(item);
            return;
        }
        if !self.allow_early {
            // Step 4a: wait for the Regular packet if useful, else discard.
            if (tn - now).as_secs_f64() < cfg.max_feedback_delay_s {
                self.pending.push(item);
            } else {
                self.stats.discarded += 1;
            }
            return;
        }
        // Step 4b.
        self.pending.push(item);
        self.early_at = Some(now + SimTime::from_secs_f64(uniform(rng) * dither));
    }

    /// Feedback from another member arrived (step 5): drop our pending
    /// items it covers; if nothing is left, cancel the Early packet.
    pub fn on_feedback_heard(&mut self, now: SimTime, media_ssrc: u32, seqs: &[u16]) {
        let Some(cfg) = &self.avpf else { return };
        self.forecast = None;
        let retention = SimTime::from_secs_f64(cfg.retention_s);
        while self
            .heard
            .front()
            .is_some_and(|(t, _, _)| now.saturating_sub(*t) > retention)
        {
            self.heard.pop_front();
        }
        self.heard.push_back((now, media_ssrc, seqs.to_vec()));
        let before = self.pending.len();
        self.pending.retain(|it| {
            !(it.media_ssrc == media_ssrc && it.seqs.iter().all(|s| seqs.contains(s)))
        });
        self.stats.suppressed += (before - self.pending.len()) as u64;
        if self.pending.is_empty() && self.early_at.is_some() {
            // 5a: discard and fall back to the Regular schedule (tn as before).
            self.early_at = None;
        }
    }

    /// The timer fired (at `deadline()`). Returns what to send, if anything;
    /// after sending, call `on_sent` with the packet's size.
    pub fn on_timer(&mut self, now: SimTime, rng: &mut SimRng) -> Option<Transmit> {
        if let Some(te) = self.early_at {
            if now >= te && te <= self.timing.next_time() {
                self.early_at = None;
                let fb = std::mem::take(&mut self.pending);
                return Some(Transmit::Early(fb));
            }
        }
        if now < self.timing.next_time() {
            return None;
        }
        if self.timing.on_expire(now, rng) == Expiry::Reschedule {
            return None;
        }
        let Some(cfg) = &self.avpf else {
            return Some(Transmit::Regular(std::mem::take(&mut self.pending)));
        };
        let (trr_interval_s, max_feedback_delay_s) = (cfg.trr_interval_s, cfg.max_feedback_delay_s);
        // The Regular slot is reached: early packets are allowed again.
        self.allow_early = true;
        if trr_interval_s <= 0.0 {
            let fb = self.take_pending_within(now, max_feedback_delay_s);
            return Some(Transmit::Regular(fb));
        }
        // RFC 4585 3.5.3 with T_rr_interval.
        let send_full = match self.t_rr_last {
            None => true,
            Some(last) => regular_due(last, trr_interval_s, now, rng),
        };
        if send_full {
            self.t_rr_last = Some(now);
            let fb = self.take_pending_within(now, max_feedback_delay_s);
            return Some(Transmit::Regular(fb));
        }
        let fb = self.take_pending_within(now, max_feedback_delay_s);
        if !fb.is_empty() {
            // 2b: a packet with the stored feedback; t_rr_last unchanged.
            return Some(Transmit::Regular(fb));
        }
        // 2c: suppressed; tp and tn move on as if sent.
        self.stats.regular_suppressed += 1;
        self.timing.advance(now, rng);
        None
    }

    /// Pending feedback still useful (waited less than `max_delay_s`); the
    /// rest is discarded.
    fn take_pending_within(&mut self, now: SimTime, max_delay_s: f64) -> Vec<FbItem> {
        if self.pending.is_empty() {
            // Nearly every slot: nothing waits.
            return Vec::new();
        }
        let (keep, late): (Vec<FbItem>, Vec<FbItem>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|it| (now - it.t0).as_secs_f64() <= max_delay_s);
        self.stats.discarded += late.len() as u64;
        keep
    }

    /// The packet returned by `on_timer` left at `now`, `bytes` long.
    pub fn on_sent(&mut self, now: SimTime, sent: &Transmit, bytes: f64, rng: &mut SimRng) {
        self.forecast = None;
        let (fb, early) = match sent {
            Transmit::Early(fb) => (fb, true),
            Transmit::Regular(fb) => (fb, false),
        };
        for it in fb {
            self.stats.sent += 1;
            self.stats.wait_sum_s += (now - it.t0).as_secs_f64();
            if early {
                self.stats.sent_early += 1;
            }
        }
        if early {
            // Step 6.
            self.stats.early_packets += 1;
            self.allow_early = false;
            self.timing.on_early_sent(bytes);
        } else {
            self.stats.regular_packets += 1;
            self.timing.on_sent(now, bytes, rng);
        }
    }
}

#[cfg(test)]
mod tests;
