//! Tests of the rtcp timing rules.
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

/// RFC 3550 6.3.4 with one BYE (members 10 -> 9 at tc):
/// tn = tc + (members/pmembers)(tn - tc), tp = tc - (members/pmembers)(tc - tp).
#[test]
fn reverse_reconsideration_exact_tn_and_tp() {
    let mut rng = RngStreams::new(2, 0).stream("t");
    let cfg = TimingConfig {
        session_bw_bps: 20e3,
        ..Default::default()
    };
    let mut t = RtcpTiming::new(cfg, 1, 100.0, SimTime::ZERO, &mut rng);
    for s in 2..=10 {
        t.on_rtcp(s, 100.0, SimTime::ZERO);
    }
    t.on_sent(SimTime::from_secs(1), 100.0, &mut rng); // tp = 1 s, pmembers = 10
    let (tn, tp) = (t.next_time().as_secs_f64(), t.last_time().as_secs_f64());
    let tc = 3.0;
    assert!(tn > tc, "the next packet is still ahead (tn = {tn})");
    t.on_bye(2, SimTime::from_secs_f64(tc));
    let want_tn = tc + 0.9 * (tn - tc);
    let want_tp = tc - 0.9 * (tc - tp);
    assert!((t.next_time().as_secs_f64() - want_tn).abs() < 2e-9);
    assert!((t.last_time().as_secs_f64() - want_tp).abs() < 2e-9);
    // pmembers is now 9: a BYE from an unknown member changes nothing.
    let (tn2, tp2) = (t.next_time(), t.last_time());
    t.on_bye(99, SimTime::from_secs_f64(tc));
    assert_eq!((t.next_time(), t.last_time()), (tn2, tp2));
}

/// RFC 3550 6.3.5: a sender stops counting as one when no RTP came for
/// 2 Td, a member is removed when nothing came for M Td, M = 5; Td here is
/// the 5 s minimum. Checked on both sides of each boundary.
#[test]
fn time_outs_at_exactly_two_and_five_intervals() {
    let mut rng = RngStreams::new(3, 0).stream("t");
    let mut t = RtcpTiming::new(TimingConfig::default(), 1, 100.0, SimTime::ZERO, &mut rng);
    t.on_rtp(2, SimTime::ZERO);
    t.on_rtcp(3, 100.0, SimTime::ZERO);
    t.on_own_rtp(SimTime::ZERO);
    let before = |s: f64| SimTime::from_secs_f64(s) - SimTime(1);
    assert_eq!(t.check_timeouts(before(10.0)), 0);
    assert_eq!(t.senders(), 2, "still senders just before 2 Td");
    assert_eq!(t.check_timeouts(SimTime::from_secs(10)), 0);
    assert_eq!(
        t.senders(),
        0,
        "no longer senders at 2 Td (both the other and we)"
    );
    assert!(!t.we_sent());
    assert_eq!(t.check_timeouts(before(25.0)), 0);
    assert_eq!(t.members(), 3, "members just before 5 Td");
    assert_eq!(t.check_timeouts(SimTime::from_secs(25)), 2);
    assert_eq!(t.members(), 1);
}

/// RFC 3550 6.3.2-6.3.3: avg_rtcp_size starts at the first packet's size
/// and moves by 1/16 toward each packet sent or received.
#[test]
fn avg_rtcp_size_is_a_one_sixteenth_moving_average() {
    let mut rng = RngStreams::new(1, 0).stream("x");
    let mut tm = RtcpTiming::new(TimingConfig::default(), 1, 100.0, SimTime::ZERO, &mut rng);
    assert_eq!(tm.avg_rtcp_size(), 100.0);
    tm.on_rtcp(2, 260.0, SimTime::from_secs(1));
    assert_eq!(tm.avg_rtcp_size(), 110.0);
    tm.on_sent(SimTime::from_secs(2), 30.0, &mut rng);
    assert_eq!(tm.avg_rtcp_size(), 30.0 / 16.0 + 110.0 * 15.0 / 16.0);
}

/// The compensation factor of A.7 is e - 3/2 = 1.21828 (an independent
/// literal, not the constant itself).
#[test]
fn compensation_is_e_minus_three_halves() {
    assert!((COMPENSATION - 1.218_281_828).abs() < 1e-9);
}

/// Our own RTP makes us a sender until the 2 Td time-out.
#[test]
fn own_rtp_makes_us_a_sender() {
    let mut rng = RngStreams::new(3, 0).stream("t");
    let mut t = RtcpTiming::new(TimingConfig::default(), 1, 100.0, SimTime::ZERO, &mut rng);
    assert!(!t.we_sent());
    t.on_own_rtp(SimTime::from_secs(1));
    assert!(t.we_sent());
    assert_eq!(t.senders(), 1);
}

/// packets_sent, bytes_sent and reconsiderations count one by one.
#[test]
fn counters_count_packets_bytes_and_reconsiderations() {
    let mut rng = RngStreams::new(3, 0).stream("t");
    let mut t = RtcpTiming::new(TimingConfig::default(), 1, 100.0, SimTime::ZERO, &mut rng);
    t.on_sent(SimTime::from_secs(3), 120.0, &mut rng);
    t.on_early_sent(80.0);
    assert_eq!((t.packets_sent, t.bytes_sent), (2, 200));
    // Right after tp, a recomputed time is in the future: reschedule.
    assert_eq!(
        t.on_expire(SimTime::from_secs(3), &mut rng),
        Expiry::Reschedule
    );
    assert_eq!(
        t.on_expire(SimTime::from_secs(3), &mut rng),
        Expiry::Reschedule
    );
    assert_eq!(t.reconsiderations, 2);
}

/// 6.3.5 then 6.3.4: members timing out pull tn and tp in like a BYE.
#[test]
fn time_outs_trigger_reverse_reconsideration() {
    let mut rng = RngStreams::new(3, 0).stream("t");
    let mut t = RtcpTiming::new(TimingConfig::default(), 1, 100.0, SimTime::ZERO, &mut rng);
    for s in 2..=4 {
        t.on_rtcp(s, 100.0, SimTime::ZERO);
    }
    t.on_sent(SimTime::from_secs(24), 100.0, &mut rng);
    let (tp, tn) = (t.last_time(), t.next_time());
    assert_eq!(t.members(), 4);
    // Three of four members left by 25.5 s (silent for 5 Td = 25 s), before
    // tn (at least 24 s + 0.5 x 5 s / 1.21828).
    let now = SimTime::from_millis(25_500);
    assert!(tn > now);
    assert_eq!(t.check_timeouts(now), 3);
    let f = 1.0 / 4.0;
    let want_tn = now + SimTime::from_secs_f64(f * (tn - now).as_secs_f64());
    let want_tp = now - SimTime::from_secs_f64(f * (now - tp).as_secs_f64());
    assert_eq!((t.next_time(), t.last_time()), (want_tn, want_tp));
}

/// A two-party AVPF timing (no minimum interval) after its first packet.
fn avpf_pair(reconsideration: bool, rng: &mut SimRng) -> RtcpTiming {
    let cfg = TimingConfig {
        session_bw_bps: 1e6,
        min_interval_s: 0.0,
        initial_min_interval_s: 0.0,
        reconsideration,
        ..TimingConfig::default()
    };
    let mut t = RtcpTiming::new(cfg, 1, 100.0, SimTime::ZERO, rng);
    t.on_rtp(2, SimTime::ZERO);
    t.on_own_rtp(SimTime::ZERO);
    let first = t.next_time();
    t.on_sent(first, 100.0, rng);
    t
}

/// The expiries `run_suppressed_slots` runs, one by one as the timer runs
/// them: `on_expire`, and `advance` when due and the slot does not send.
/// Returns the slots suppressed and whether it stopped before a sender.
fn slots_step_by_step(
    t: &mut RtcpTiming,
    limit: SimTime,
    max: u32,
    rng: &mut SimRng,
    sends: &mut impl FnMut(SimTime, &mut SimRng) -> bool,
) -> (u64, bool) {
    let (mut suppressed, mut expiries) = (0, 0);
    while t.next_time() < limit && expiries < max {
        let before = (t.slot_state(), rng.clone());
        let tn = t.next_time();
        if t.on_expire(tn, rng) == Expiry::Reschedule {
            expiries += 1;
            continue;
        }
        if sends(tn, rng) {
            t.set_slot_state(before.0);
            *rng = before.1;
            return (suppressed, true);
        }
        t.advance(tn, rng);
        suppressed += 1;
        expiries += 1;
    }
    (suppressed, false)
}

/// The fast run of suppressed slots takes the same draws in the same order
/// and leaves the same state as the timer run expiry by expiry: to a time
/// limit, to a count, and up to a slot that sends (left unrun, the random
/// stream as before it); with reconsideration and without.
#[test]
fn suppressed_slots_run_as_the_timer_would_one_by_one() {
    for reconsideration in [true, false] {
        for (limit_s, max) in [(1.0, u32::MAX), (30.0, 17), (30.0, u32::MAX)] {
            let mut rng = RngStreams::new(7, 0).stream("slots");
            let mut fast = avpf_pair(reconsideration, &mut rng);
            let (mut slow, mut rng_slow) = (fast.clone(), rng.clone());
            // A slot sends once 0.8 s (and a draw) has passed since 0.5 s.
            let mut sends = |tn: SimTime, rng: &mut SimRng| {
                SimTime::from_secs_f64(0.5 + 0.8 * uniform(rng)) <= tn
            };
            let limit = SimTime::from_secs_f64(limit_s);
            let ran = fast.run_suppressed_slots(limit, max, &mut rng, &mut sends);
            let (suppressed, sends_next) =
                slots_step_by_step(&mut slow, limit, max, &mut rng_slow, &mut sends);
            assert_eq!(ran.suppressed, suppressed);
            assert_eq!(ran.sends_next, sends_next);
            assert!(ran.suppressed > 3, "some slots ran");
            assert_eq!(fast.slot_state(), slow.slot_state());
            assert_eq!(fast.members(), 2);
            assert_eq!(uniform(&mut rng), uniform(&mut rng_slow), "the same draws");
            if limit_s > 1.0 && max == u32::MAX {
                assert!(ran.sends_next, "stopped before the slot that sends");
                assert!(fast.next_time() >= SimTime::from_secs_f64(0.5));
            }
        }
    }
}
