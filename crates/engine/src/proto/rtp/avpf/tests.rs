//! Tests of the avpf rules.
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

/// The next Regular slot's outcome, past reconsideration reschedules:
/// (time, what goes; None when suppressed).
fn regular_slot(s: &mut RtcpScheduler, rng: &mut SimRng) -> (SimTime, Option<Transmit>) {
    loop {
        let now = s.deadline();
        let suppressed = s.stats.regular_suppressed;
        let x = s.on_timer(now, rng);
        if x.is_some() || s.stats.regular_suppressed > suppressed {
            return (now, x);
        }
    }
}

/// RFC 4585 3.5.3 with T_rr_interval (10 s here, T_rr about 0.3 s): the
/// first Regular packet goes in full and sets t_rr_last; a slot less than
/// 0.5 T_rr_interval after it is suppressed (2c: tp and tn move on as if
/// sent) unless feedback waits, which goes in a packet of its own (2b,
/// t_rr_last unchanged); a slot 1.5 T_rr_interval after it sends in full.
#[test]
fn t_rr_interval_cases_full_feedback_only_and_suppressed() {
    let cfg = AvpfConfig {
        trr_interval_s: 10.0,
        ..Default::default()
    };
    let (mut s, mut rng) = member(Some(cfg), 5);
    let (t1, x) = regular_slot(&mut s, &mut rng);
    let x = x.expect("the first Regular packet goes");
    s.on_sent(t1, &x, 80.0, &mut rng);
    assert_eq!(s.t_rr_last, Some(t1));
    let half = SimTime::from_secs(5);

    let (t2, x) = regular_slot(&mut s, &mut rng);
    assert!(t2 < t1 + half);
    assert_eq!(x, None, "2c: suppressed");
    assert_eq!(s.stats.regular_suppressed, 1);
    assert_eq!(s.timing.last_time(), t2, "tp moves on as if sent");
    assert!(s.deadline() > t2, "tn moves on");

    let item = FbItem {
        media_ssrc: 7,
        seqs: vec![3],
        t0: s.deadline() - SimTime::from_millis(10),
    };
    s.pending.push(item.clone());
    let (t3, x) = regular_slot(&mut s, &mut rng);
    assert!(t3 < t1 + half);
    assert_eq!(
        x,
        Some(Transmit::Regular(vec![item])),
        "2b: the feedback goes"
    );
    assert_eq!(s.t_rr_last, Some(t1), "2b leaves t_rr_last");
    s.on_sent(t3, &Transmit::Regular(vec![]), 80.0, &mut rng);

    let (t4, x) = regular_slot(&mut s, &mut rng);
    assert!(t4 < t1 + half);
    assert_eq!(x, None, "still within T_rr_interval");
    assert_eq!(s.stats.regular_suppressed, 2);

    // Past 1.5 T_rr_interval, the next slot sends in full.
    let mut last = (t4, None);
    while last.0 < t1 + SimTime::from_secs(15) {
        assert_eq!(
            last.1, None,
            "no full packet before 1.5 T_rr_interval is certain"
        );
        last = regular_slot(&mut s, &mut rng);
        if last.1.is_some() {
            break;
        }
    }
    let (t5, x) = last;
    assert!(matches!(x, Some(Transmit::Regular(_))));
    assert!(t5 >= t1 + half, "not before 0.5 T_rr_interval");
    assert_eq!(s.t_rr_last, Some(t5));
}

#[test]
fn mean_waiting_time_is_the_sum_over_the_count() {
    let st = FbStats {
        sent: 4,
        wait_sum_s: 6.0,
        ..Default::default()
    };
    assert_eq!(st.mean_wait_s(), 1.5);
    assert!(FbStats::default().mean_wait_s().is_nan(), "nothing sent");
}

#[test]
fn the_profile_is_avpf_only_with_an_avpf_configuration() {
    assert!(!member(None, 1).0.is_avpf());
    assert!(member(Some(AvpfConfig::default()), 1).0.is_avpf());
}

/// A member of 100 (T_rr several seconds) under the draft rule with a
/// tiny RTT (T_dither_max far below the distance to tn), T_max_fb_delay
/// 1 s, that has just sent an Early packet (allow_early is now false).
/// Returns it with its rng and tn.
fn early_sent_with_tiny_dither() -> (RtcpScheduler, SimRng, SimTime) {
    let cfg = AvpfConfig {
        dither: DitherRule::RttDraft { k: 1.0, l: 0.5 },
        max_feedback_delay_s: 1.0,
        ..Default::default()
    };
    let (mut s, mut rng) = member(Some(cfg), 100);
    s.set_rtt(1e-4);
    s.on_loss(t(1001), 7, vec![1], &mut rng);
    let te = s.early_at().unwrap();
    let sent = s.on_timer(te, &mut rng).unwrap();
    s.on_sent(te, &sent, 80.0, &mut rng);
    let tn = s.timing.next_time();
    assert!(tn > te + SimTime::from_secs(2), "tn {tn:?} te {te:?}");
    assert!(s.t_dither_max() < 0.01);
    (s, rng, tn)
}

/// Step 4a with a dither far below the distance to tn (draft rule, tiny
/// RTT), so 3a does not apply: feedback 0.5 s before tn waits for the
/// Regular packet, feedback 1.5 s before it (T_max_fb_delay 1 s) is dropped.
#[test]
fn step_4a_compares_the_wait_until_tn_with_the_maximum_delay() {
    let (mut s, mut rng, tn) = early_sent_with_tiny_dither();
    s.on_loss(tn - SimTime::from_millis(1500), 7, vec![2], &mut rng);
    assert_eq!(s.stats.discarded, 1, "waits 1.5 s > 1 s");
    s.on_loss(tn - SimTime::from_millis(500), 7, vec![3], &mut rng);
    assert_eq!(s.stats.discarded, 1, "waits 0.5 s < 1 s");
    assert_eq!(s.pending.len(), 1);
}

/// Feedback heard is kept for T_retention (2 s), not less: hearing newer
/// feedback does not forget older feedback that is still within it.
#[test]
fn heard_feedback_is_kept_for_the_retention_time() {
    let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
    s.on_feedback_heard(t(1000), 7, &[10]);
    s.on_feedback_heard(t(1500), 7, &[20]);
    s.on_loss(t(2000), 7, vec![10], &mut rng);
    assert_eq!(s.stats.suppressed, 1, "heard 1 s before t0");
    // Past T_retention the old entry is pruned when new feedback arrives.
    s.on_feedback_heard(t(3200), 7, &[30]);
    s.on_loss(t(3300), 7, vec![10], &mut rng);
    assert_eq!(s.stats.suppressed, 1, "heard 2.3 s before t0");
}

/// on_timer before te and before tn does nothing; past tn it sends.
#[test]
fn timer_calls_before_the_scheduled_times_send_nothing() {
    let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
    s.on_loss(t(1010), 7, vec![42], &mut rng);
    let te = s.early_at().unwrap();
    assert!(te > t(1010), "a dithered te (this seed)");
    assert_eq!(s.on_timer(t(1010), &mut rng), None, "before te");
    assert_eq!(s.early_at(), Some(te));
    let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
    let tn = s.timing.next_time();
    assert_eq!(s.on_timer(tn - SimTime::from_millis(1), &mut rng), None);
    // A call late after tn still sends (reconsideration from tp: tn' <= now
    // once the wait is long enough).
    let late = tn + SimTime::from_secs(5);
    assert!(matches!(
        s.on_timer(late, &mut rng),
        Some(Transmit::Regular(_))
    ));
}

/// T_rr_interval 1 ms with Regular slots tens of ms apart: every slot is
/// past 1.5 T_rr_interval, so every Regular packet goes in full.
#[test]
fn a_short_t_rr_interval_suppresses_nothing() {
    let cfg = AvpfConfig {
        trr_interval_s: 0.001,
        ..Default::default()
    };
    let (mut s, mut rng) = member(Some(cfg), 5);
    let mut sent = 0;
    while sent < 50 {
        let now = s.deadline();
        if let Some(x) = s.on_timer(now, &mut rng) {
            s.on_sent(now, &x, 80.0, &mut rng);
            sent += 1;
        }
    }
    assert_eq!(s.stats.regular_suppressed, 0);
}

/// Feedback older than T_max_fb_delay at the Regular slot is dropped and
/// counted, each item once.
#[test]
fn stale_feedback_at_the_regular_slot_is_counted_as_discarded() {
    let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
    let tn = s.timing.next_time();
    for seq in [1, 2] {
        s.pending.push(FbItem {
            media_ssrc: 7,
            seqs: vec![seq],
            t0: tn.saturating_sub(SimTime::from_secs(3)),
        });
    }
    let (_, x) = regular_slot(&mut s, &mut rng);
    assert_eq!(x, Some(Transmit::Regular(vec![])));
    assert_eq!(s.stats.discarded, 2);
}

/// Step 5 matches feedback by media source: NACKs for the same numbers of
/// another source do not suppress ours.
#[test]
fn feedback_about_another_media_source_does_not_suppress() {
    let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
    s.on_feedback_heard(t(1000), 8, &[42]);
    s.on_loss(t(1010), 7, vec![42], &mut rng);
    assert_eq!(s.stats.suppressed, 0);
    assert!(s.early_at().is_some());
}

/// Step 2a: with feedback already waiting for the Regular packet, new
/// feedback joins it, whatever the distance to tn.
#[test]
fn step_2a_feedback_joins_what_is_already_waiting() {
    let (mut s, mut rng) = member(Some(AvpfConfig::default()), 100);
    let tn = s.timing.next_time();
    s.pending.push(FbItem {
        media_ssrc: 7,
        seqs: vec![1],
        t0: t(1000),
    });
    s.on_loss(t(1001), 7, vec![2], &mut rng);
    assert_eq!(s.early_at(), None, "no Early packet of its own");
    assert_eq!(s.pending.len(), 2);
    assert!(tn > t(1001) + SimTime::from_secs(1));
}

/// Step 3a at the boundary: with T_dither_max = 0 (point-to-point) a loss
/// at exactly tn is not "t0 + T_dither_max > tn": an Early packet at t0.
#[test]
fn step_3a_boundary_a_loss_at_tn_with_no_dither_goes_early() {
    let cfg = AvpfConfig {
        point_to_point: true,
        ..Default::default()
    };
    let (mut s, mut rng) = member(Some(cfg), 1);
    let tn = s.timing.next_time();
    s.on_loss(tn, 7, vec![1], &mut rng);
    assert_eq!(s.early_at(), Some(tn));
}

/// Step 4a at the boundary: waiting exactly T_max_fb_delay is too long.
#[test]
fn step_4a_boundary_a_wait_of_exactly_the_maximum_delay_is_discarded() {
    let (mut s, mut rng, tn) = early_sent_with_tiny_dither();
    s.on_loss(tn - SimTime::from_secs(1), 7, vec![2], &mut rng);
    assert_eq!(s.stats.discarded, 1);
}

/// Heard feedback exactly T_retention old still counts (it is pruned only
/// once older than that). Pruning itself only bounds memory: `covered`
/// checks the time again.
#[test]
fn heard_feedback_exactly_at_the_retention_time_still_suppresses() {
    let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
    s.on_feedback_heard(t(1000), 7, &[10]);
    s.on_feedback_heard(t(3000), 7, &[20]);
    s.on_loss(t(3000), 7, vec![10], &mut rng);
    assert_eq!(s.stats.suppressed, 1);
}

/// on_sent counts each feedback item sent, and the early ones.
#[test]
fn sent_feedback_is_counted_per_item_and_early() {
    let (mut s, mut rng) = member(Some(AvpfConfig::default()), 5);
    s.on_loss(t(1010), 7, vec![1], &mut rng);
    s.on_loss(t(1011), 7, vec![2], &mut rng);
    let te = s.early_at().unwrap();
    let x = s.on_timer(te, &mut rng).unwrap();
    s.on_sent(te, &x, 80.0, &mut rng);
    assert_eq!((s.stats.sent, s.stats.sent_early), (2, 2));
    assert_eq!(s.stats.early_packets, 1);
    assert_eq!(s.stats.regular_packets, 1, "the helper's first packet");
}

/// Drives `s` to `end` waking at every slot (`deadline`), or lazily: at
/// `wake_at` only, running the quiet slots late with `catch_up`, as the
/// member does. Loss events at `losses` and RTCP packets from another
/// member at `heard` (times in ms) in both; after either, the lazy driver
/// asks `wake_at` again, as the member re-arms. Returns what was sent,
/// when, and how many times the driver woke.
fn drive_avpf(
    s: &mut RtcpScheduler,
    rng: &mut SimRng,
    end: SimTime,
    losses: &[u64],
    heard: &[u64],
    lazy: bool,
) -> (Vec<(SimTime, bool, usize)>, u64) {
    let (mut sent, mut wakes) = (Vec::new(), 0u64);
    let mut losses = losses.iter().map(|&ms| t(ms)).peekable();
    let mut heard = heard.iter().map(|&ms| t(ms)).peekable();
    loop {
        let timer = if lazy {
            s.wake_at(end + SimTime::from_secs(1), rng)
        } else {
            s.deadline()
        };
        let loss = losses.peek().copied().unwrap_or(SimTime::MAX);
        let rtcp = heard.peek().copied().unwrap_or(SimTime::MAX);
        let now = timer.min(loss).min(rtcp);
        if now > end {
            if lazy {
                // The quiet slots after the last wake (the member's stats).
                s.catch_up(end, SimTime::MAX, rng);
            }
            return (sent, wakes);
        }
        if lazy {
            s.catch_up(now, end + SimTime::from_secs(1), rng);
        }
        if rtcp <= timer.min(loss) {
            heard.next();
            // Another member's report: avg_rtcp_size moves, and with it
            // every interval after this.
            s.timing.on_rtcp(200, 150.0, now);
            continue;
        }
        if loss <= timer {
            losses.next();
            s.on_loss(now, 7, vec![(now.as_nanos() / 1_000_000) as u16], rng);
            continue;
        }
        wakes += 1;
        if now >= s.deadline() {
            if let Some(x) = s.on_timer(now, rng) {
                let (early, n) = match &x {
                    Transmit::Early(fb) => (true, fb.len()),
                    Transmit::Regular(fb) => (false, fb.len()),
                };
                s.on_sent(now, &x, 80.0, rng);
                sent.push((now, early, n));
            }
        }
    }
}

#[test]
fn quiet_slots_run_late_as_they_would_on_time() {
    // T_rr_interval 4 s over T_rr of about 0.2 s: most slots are
    // suppressed, those in the first 2 s after each Regular packet surely.
    let (mut a, mut rng_a) = member(Some(cfg_trr(4.0)), 2);
    let (mut b, mut rng_b) = (a.clone(), rng_a.clone());
    let end = SimTime::from_secs(60);
    let losses = [3_210, 3_215, 17_500, 30_001, 30_400, 44_444];
    let heard: Vec<u64> = (0..60).map(|k| 700 + 997 * k).collect();
    let (sent_a, wakes_a) = drive_avpf(&mut a, &mut rng_a, end, &losses, &heard, false);
    let (sent_b, wakes_b) = drive_avpf(&mut b, &mut rng_b, end, &losses, &heard, true);
    assert_eq!(sent_a, sent_b, "the same packets at the same times");
    assert!(sent_a.iter().any(|x| x.1), "early feedback was sent");
    let (sa, sb) = (&a.stats, &b.stats);
    assert_eq!(
        (sa.regular_suppressed, sa.regular_packets, sa.early_packets),
        (sb.regular_suppressed, sb.regular_packets, sb.early_packets)
    );
    assert_eq!(
        (sa.sent, sa.discarded, sa.wait_sum_s),
        (sb.sent, sb.discarded, sb.wait_sum_s)
    );
    assert_eq!(
        (
            a.timing.last_time(),
            a.timing.next_time(),
            a.timing.reconsiderations
        ),
        (
            b.timing.last_time(),
            b.timing.next_time(),
            b.timing.reconsiderations
        )
    );
    assert_eq!(uniform(&mut rng_a), uniform(&mut rng_b), "the same draws");
    assert!(sa.regular_suppressed > 50, "{}", sa.regular_suppressed);
    // Lazily, a member wakes about twice per packet it sends (the quiet
    // half's end and the sending slot), not for the slots between.
    let packets = sa.regular_packets + sa.early_packets;
    assert!(wakes_b <= 2 * packets, "lazy {wakes_b}, {packets} packets");
    assert!(wakes_b * 5 < wakes_a, "lazy {wakes_b} against {wakes_a}");
}

#[test]
fn quiet_until_is_half_of_t_rr_interval_then_the_forecast_sending_slot() {
    let (mut s, mut rng) = member(Some(cfg_trr(1.0)), 2);
    assert_eq!(
        s.quiet_until(),
        None,
        "no Regular packet sent by a timer yet"
    );
    let mut now = s.deadline();
    let last = loop {
        if let Some(x) = s.on_timer(now, &mut rng) {
            s.on_sent(now, &x, 80.0, &mut rng);
            break now;
        }
        now = s.deadline();
    };
    let quiet_end = last + SimTime::from_millis(500);
    assert!(s.timing.next_time() < quiet_end);
    assert_eq!(s.quiet_until(), Some(quiet_end));
    // Slots from the end of the stretch on are not run late.
    let mut unforecast = s.clone();
    unforecast.catch_up(
        quiet_end + SimTime::from_secs(5),
        SimTime::MAX,
        &mut rng.clone(),
    );
    let tn = unforecast.timing.next_time();
    assert!(tn >= quiet_end && unforecast.quiet_until().is_none());
    // A forecast runs the slots on trial: the member wakes at the first
    // that sends on time, and nothing else moved.
    let mut on_time = (s.clone(), rng.clone());
    let sends_at = loop {
        let now = on_time.0.deadline();
        if on_time.0.on_timer(now, &mut on_time.1).is_some() {
            break now;
        }
    };
    assert!(sends_at > quiet_end, "{sends_at} {quiet_end}");
    // Within the quiet half no trial runs (a report heard there would end
    // it): the member wakes at the half's end, and nothing moved.
    let before = (s.timing.slot_state(), s.stats.regular_suppressed);
    assert_eq!(s.wake_at(SimTime::MAX, &rng), quiet_end);
    assert_eq!(s.quiet_until(), Some(quiet_end));
    assert_eq!(before, (s.timing.slot_state(), s.stats.regular_suppressed));
    // There the quiet half's slots run late, and the slots ahead run on
    // trial: the member wakes at the first that sends on time, and
    // nothing else moved.
    assert!(s.catch_up(quiet_end, SimTime::MAX, &mut rng));
    let first = s.timing.next_time();
    assert!(first >= quiet_end && first < sends_at, "{first} {sends_at}");
    let before = (s.timing.slot_state(), s.stats.regular_suppressed);
    assert_eq!(s.wake_at(SimTime::MAX, &rng), sends_at);
    assert_eq!(s.quiet_until(), Some(sends_at));
    assert_eq!(before, (s.timing.slot_state(), s.stats.regular_suppressed));
    // A stop before it bounds the trial.
    let mut bounded = s.clone();
    bounded.on_feedback_heard(last, 9, &[]); // clears the forecast
    assert_eq!(bounded.quiet_until(), None, "past the quiet half");
    let stop = first + SimTime(1);
    assert!(bounded.wake_at(stop, &rng) >= stop);
    // A change to the interval's inputs ends the forecast.
    s.timing.on_rtcp(200, 120.0, last);
    assert_eq!(s.quiet_until(), None);
    // Feedback waiting ends a quiet stretch.
    let (mut s, mut rng) = member(Some(cfg_trr(1.0)), 2);
    let mut now = s.deadline();
    while s.quiet_until().is_none() {
        if let Some(x) = s.on_timer(now, &mut rng) {
            s.on_sent(now, &x, 80.0, &mut rng);
        }
        now = s.deadline();
    }
    s.on_loss(now, 7, vec![1], &mut rng);
    assert_eq!(s.quiet_until(), None);
    assert_eq!(s.wake_at(SimTime::MAX, &rng), s.deadline());
    // Without T_rr_interval no slot is certainly suppressed.
    let (s, _) = member(Some(AvpfConfig::default()), 2);
    assert_eq!(s.quiet_until(), None);
}

fn cfg_trr(trr_interval_s: f64) -> AvpfConfig {
    AvpfConfig {
        trr_interval_s,
        ..Default::default()
    }
}
