//! RTCP scheduling with feedback: the AVP profile (RFC 3550 alone) and the
//! AVPF profile (RFC 4585 section 3.5): Early RTCP packets, allow_early,
//! T_dither_max, T_rr_interval, feedback waiting for a Regular packet,
//! max feedback delay, and suppression on hearing the same feedback.
//!
//! Feedback is modelled as "loss events": the sequence numbers of one media
//! source a receiver wants to NACK, detected at t0. The caller turns what
//! `on_timer` returns into RTCP packets (Generic NACK or application-layer
//! feedback).

use super::rtcp_timing::{Expiry, RtcpTiming};
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
    /// Exactly two members, no change expected (T_dither_max = 0, initial
    /// Tmin = 0).
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
}

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
        let Some(cfg) = self.avpf.clone() else {
            return Some(Transmit::Regular(std::mem::take(&mut self.pending)));
        };
        // The Regular slot is reached: early packets are allowed again.
        self.allow_early = true;
        if cfg.trr_interval_s <= 0.0 {
            let fb = self.take_pending_within(now, cfg.max_feedback_delay_s);
            return Some(Transmit::Regular(fb));
        }
        // RFC 4585 3.5.3 with T_rr_interval.
        let send_full = match self.t_rr_last {
            None => true,
            Some(last) => {
                let current = (uniform(rng) + 0.5) * cfg.trr_interval_s;
                last + SimTime::from_secs_f64(current) <= now
            }
        };
        if send_full {
            self.t_rr_last = Some(now);
            let fb = self.take_pending_within(now, cfg.max_feedback_delay_s);
            return Some(Transmit::Regular(fb));
        }
        let fb = self.take_pending_within(now, cfg.max_feedback_delay_s);
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
        let (keep, late): (Vec<FbItem>, Vec<FbItem>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|it| (now - it.t0).as_secs_f64() <= max_delay_s);
        self.stats.discarded += late.len() as u64;
        keep
    }

    /// The packet returned by `on_timer` left at `now`, `bytes` long.
    pub fn on_sent(&mut self, now: SimTime, sent: &Transmit, bytes: f64, rng: &mut SimRng) {
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
mod tests {
    use super::super::rtcp_timing::TimingConfig;
    use super::*;
    use crate::sim::RngStreams;

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// An AVPF member of a multiparty session that already knows `others`
    /// members, with its first Regular packet sent at 1 s.
    fn member(avpf: Option<AvpfConfig>, others: u32) -> (RtcpScheduler, SimRng) {
        let mut rng = RngStreams::new(5, 0).stream("m");
        let p2p = avpf.as_ref().is_some_and(|c| c.point_to_point);
        let cfg = match &avpf {
            Some(_) => TimingConfig {
                session_bw_bps: 200e3,
                min_interval_s: 0.0,
                initial_min_interval_s: if p2p { 0.0 } else { 1.0 },
                ..Default::default()
            },
            None => TimingConfig {
                session_bw_bps: 200e3,
                ..Default::default()
            },
        };
        let mut timing = RtcpTiming::new(cfg, 100, 80.0, SimTime::ZERO, &mut rng);
        for s in 1..=others {
            timing.on_rtcp(s, 80.0, SimTime::ZERO);
        }
        let mut s = RtcpScheduler::new(timing, avpf);
        let first = Transmit::Regular(vec![]);
        s.on_sent(t(1000), &first, 80.0, &mut rng);
        (s, rng)
    }

    #[test]
    fn initial_tmin_is_one_second_multiparty_and_zero_point_to_point() {
        // RFC 4585 3.5.1. With a tiny avg size the bandwidth term is ~0,
        // so Td is the minimum itself.
        let mut rng = RngStreams::new(1, 0).stream("x");
        let multi = TimingConfig {
            min_interval_s: 0.0,
            initial_min_interval_s: 1.0,
            ..Default::default()
        };
        let tm = RtcpTiming::new(multi, 1, 1.0, SimTime::ZERO, &mut rng);
        assert!((tm.td() - 1.0).abs() < 1e-9);
        let p2p = TimingConfig {
            min_interval_s: 0.0,
            initial_min_interval_s: 0.0,
            ..Default::default()
        };
        let tp = RtcpTiming::new(p2p, 1, 1.0, SimTime::ZERO, &mut rng);
        // No minimum: only the bandwidth term, 1 B over 75% of 400 B/s.
        assert!((tp.td() - 1.0 / 300.0).abs() < 1e-12);
    }

    #[test]
    fn step_4b_schedules_an_early_packet_within_t_dither_max() {
        let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
        let t0 = t(1010);
        s.on_loss(t0, 7, vec![42], &mut rng);
        let te = s.early_at().expect("early packet scheduled");
        let dither = s.t_dither_max();
        assert!(
            (dither - 0.5 * s.timing.t_rr()).abs() < 1e-12,
            "T_dither_max = l * T_rr, l = 0.5"
        );
        assert!(te >= t0 && te <= t0 + SimTime::from_secs_f64(dither));
        assert_eq!(s.deadline(), te);
    }

    #[test]
    fn step_6_after_an_early_packet_the_next_regular_slot_is_skipped() {
        let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
        let (tp, tn) = (s.timing.last_time(), s.timing.next_time());
        let t_rr = SimTime::from_secs_f64(s.timing.t_rr());
        s.on_loss(t(1010), 7, vec![42], &mut rng);
        let te = s.early_at().unwrap();
        let sent = s.on_timer(te, &mut rng).expect("early packet due");
        assert_eq!(
            sent,
            Transmit::Early(vec![FbItem {
                media_ssrc: 7,
                seqs: vec![42],
                t0: t(1010)
            }])
        );
        s.on_sent(te, &sent, 80.0, &mut rng);
        assert!(
            !s.allow_early(),
            "allow_early = FALSE after an Early packet"
        );
        assert_eq!(s.timing.next_time(), tp + t_rr + t_rr, "tn = tp + 2 T_rr");
        assert_eq!(s.timing.last_time(), tn, "tp = the previous tn");
        assert_eq!(s.stats.sent_early, 1);
        assert!((s.stats.mean_wait_s() - (te - t(1010)).as_secs_f64()).abs() < 1e-12);
    }

    #[test]
    fn step_2a_new_feedback_joins_the_scheduled_packet() {
        let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
        s.on_loss(t(1010), 7, vec![42], &mut rng);
        let te = s.early_at().unwrap();
        s.on_loss(t(1011), 7, vec![50, 51], &mut rng);
        assert_eq!(s.early_at(), Some(te), "scheduling unchanged");
        match s.on_timer(te, &mut rng) {
            Some(Transmit::Early(fb)) => assert_eq!(fb.len(), 2),
            other => panic!("expected an early packet, got {other:?}"),
        }
    }

    #[test]
    fn step_3a_feedback_rides_the_regular_packet_when_it_is_within_reach() {
        let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
        let tn = s.timing.next_time();
        let just_before = tn.saturating_sub(SimTime::from_micros(10));
        s.on_loss(just_before, 7, vec![9], &mut rng);
        assert_eq!(
            s.early_at(),
            None,
            "t0 + T_dither_max > tn: no Early packet"
        );
        let mut got = None;
        let mut now = s.deadline();
        for _ in 0..10 {
            if let Some(x) = s.on_timer(now, &mut rng) {
                got = Some(x);
                break;
            }
            now = s.deadline(); // reconsideration may move tn
        }
        match got {
            Some(Transmit::Regular(fb)) => assert_eq!(fb[0].seqs, vec![9]),
            other => panic!("expected the regular packet to carry it, got {other:?}"),
        }
    }

    #[test]
    fn step_4a_without_allow_early_feedback_waits_or_is_discarded() {
        let cfg = AvpfConfig {
            max_feedback_delay_s: 1.0,
            ..Default::default()
        };
        let (mut s, mut rng) = member(Some(cfg), 30);
        s.on_loss(t(1001), 7, vec![1], &mut rng);
        let te = s.early_at().unwrap();
        let sent = s.on_timer(te, &mut rng).unwrap();
        s.on_sent(te, &sent, 80.0, &mut rng);
        assert!(!s.allow_early());
        let tn = s.timing.next_time();
        // A loss detected more than T_max_fb_delay before tn is discarded.
        let far = tn.saturating_sub(SimTime::from_millis(1500));
        if far > te {
            s.on_loss(far, 7, vec![2], &mut rng);
            assert_eq!(s.stats.discarded, 1);
        }
        // One within it waits for the Regular packet.
        let near = tn.saturating_sub(SimTime::from_millis(500)).max(te);
        s.on_loss(near, 7, vec![3], &mut rng);
        assert_eq!(s.early_at(), None);
        assert_eq!(
            s.stats.wanted - s.stats.discarded - s.stats.sent,
            1,
            "one waiting"
        );
    }

    #[test]
    fn step_5_feedback_heard_from_another_member_suppresses_ours() {
        let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
        s.on_loss(t(1010), 7, vec![42, 43], &mut rng);
        // Partial overlap (5b): ours still goes out.
        s.on_feedback_heard(t(1011), 7, &[42]);
        assert!(s.early_at().is_some());
        // A superset (5a): ours is discarded and the Early packet cancelled.
        s.on_feedback_heard(t(1012), 7, &[42, 43, 44]);
        assert_eq!(s.early_at(), None);
        assert_eq!(s.stats.suppressed, 1);
        assert!(s.allow_early(), "nothing was sent early");
        // Feedback heard within T_retention before t0 suppresses at once.
        s.on_loss(t(1500), 7, vec![44], &mut rng);
        assert_eq!(s.stats.suppressed, 2);
        assert_eq!(s.early_at(), None);
    }

    #[test]
    fn point_to_point_sends_early_feedback_at_once() {
        let cfg = AvpfConfig {
            point_to_point: true,
            ..Default::default()
        };
        let (mut s, mut rng) = member(Some(cfg), 1);
        assert_eq!(s.t_dither_max(), 0.0);
        s.on_loss(t(1010), 7, vec![1], &mut rng);
        assert_eq!(s.early_at(), Some(t(1010)), "te = t0");
    }

    #[test]
    fn draft_rule_uses_k_rtt_over_two_times_members_when_rtt_is_known() {
        let cfg = AvpfConfig {
            dither: DitherRule::RttDraft { k: 1.0, l: 0.5 },
            ..Default::default()
        };
        let (mut s, _) = member(Some(cfg), 4);
        assert!(
            (s.t_dither_max() - 0.5 * s.timing.t_rr()).abs() < 1e-12,
            "no RTT yet: l * T_rr"
        );
        s.set_rtt(0.1);
        assert!((s.t_dither_max() - 1.0 * 0.1 / 2.0 * 5.0).abs() < 1e-12);
    }

    #[test]
    fn t_rr_interval_suppresses_regular_packets_without_feedback() {
        let cfg = AvpfConfig {
            trr_interval_s: 5.0,
            ..Default::default()
        };
        let (mut s, mut rng) = member(Some(cfg), 5);
        let mut now = s.deadline();
        let mut sent = 0;
        for _ in 0..200 {
            if now > SimTime::from_secs(30) {
                break;
            }
            if let Some(x) = s.on_timer(now, &mut rng) {
                s.on_sent(now, &x, 80.0, &mut rng);
                sent += 1;
            }
            now = s.deadline();
        }
        // T_rr is well below a second here; with T_rr_interval = 5 s only
        // about one Regular packet per 5 s goes out, the rest are suppressed.
        assert!(
            s.stats.regular_suppressed > 10 * sent as u64 / 2,
            "suppressed {} sent {sent}",
            s.stats.regular_suppressed
        );
        assert!((4..=9).contains(&sent), "sent {sent}");
        assert!(
            s.allow_early(),
            "a suppressed regular slot re-allows early packets"
        );
    }

    #[test]
    fn avp_members_never_send_early_and_ignore_feedback() {
        let (mut s, mut rng) = member(None, 5);
        s.on_loss(t(1010), 7, vec![1], &mut rng);
        assert_eq!(s.early_at(), None);
        s.on_feedback_heard(t(1011), 7, &[1]);
        assert_eq!(s.stats.suppressed, 0, "AVP ignores feedback");
        let mut now = s.deadline();
        let got = loop {
            if let Some(x) = s.on_timer(now, &mut rng) {
                break x;
            }
            now = s.deadline();
        };
        assert!(matches!(got, Transmit::Regular(ref fb) if fb.len() == 1));
        // The next AVP slot is at least 0.5 * 5 s / (e - 3/2) after the last one.
        let min_gap = 5.0 * 0.5 / super::super::rtcp_timing::COMPENSATION;
        assert!(
            now.as_secs_f64() - 1.0 >= min_gap - 1e-9,
            "AVP waits for a 5 s-minimum slot"
        );
    }
}
