//! SCReAM's rules, each step computed by hand from RFC 8298 and the v2
//! draft.

use super::flight::{Acked, BaseDelay, Flight, WindowMax};
use super::rfc8298::Rfc8298;
use super::v2::V2;
use super::*;
use crate::proto::feedback::PacketResult;

pub(super) fn ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}

pub(super) fn spec(json: serde_json::Value) -> Params {
    serde_json::from_value::<ScreamSpec>(json)
        .expect("spec")
        .params()
}

fn result(seq: u64, received: bool, sent_ms: u64, arrival_ms: u64, ecn: u8) -> PacketResult {
    PacketResult {
        seq,
        sent_at: ms(sent_ms),
        bytes: 1000,
        received,
        arrival: received.then(|| ms(arrival_ms)),
        ecn,
    }
}

#[test]
fn bytes_in_flight_run_from_the_newest_down_to_the_highest_acknowledged() {
    let mut f = Flight::default();
    (0..6).for_each(|s| f.on_send(s, 1000));
    assert_eq!(f.bytes_in_flight(), 6000);
    // 0 and 2 received, 1 lost: 0..=2 newly acknowledged (the lost one
    // too), 3..=5 still in flight.
    let a = f.on_feedback(&[
        result(0, true, 0, 50, 0),
        result(1, false, 1, 0, 0),
        result(2, true, 2, 60, 3),
    ]);
    assert_eq!(a.bytes_newly_acked, 3000);
    assert_eq!(a.bytes_newly_acked_ce, 1000);
    assert_eq!((a.packets_acked, a.packets_ce, a.lost), (2, 1, 1));
    assert_eq!(a.owd, Some(ms(58)));
    assert_eq!(f.bytes_in_flight(), 3000);
    // A later message repeating 2 acknowledges nothing new.
    let a = f.on_feedback(&[result(2, true, 2, 60, 0)]);
    assert_eq!((a.bytes_newly_acked, a.lost), (0, 0));
}

#[test]
fn queuing_delay_is_the_one_way_delay_over_its_minimum() {
    let mut b = BaseDelay::new(10);
    assert_eq!(b.qdelay(ms(0), ms(50)), ms(0));
    assert_eq!(b.qdelay(ms(100), ms(80)), ms(30));
    assert_eq!(b.qdelay(ms(200), ms(45)), ms(0));
    assert_eq!(b.qdelay(ms(300), ms(60)), ms(15));
}

pub(super) fn measures(qdelay_s: f64, bif: u64) -> Measures {
    Measures {
        now: SimTime::from_secs(1),
        qdelay_s,
        s_rtt_s: 0.1,
        bytes_in_flight: bif,
        bytes_in_flight_before: bif,
        max_bytes_in_flight: 100_000,
        max_bytes_in_flight_rtt: 100_000,
        max_bytes_in_flight_prev: 100_000,
        mss: 1000.0,
        ..Measures::default()
    }
}

pub(super) fn acked(bytes: u64, lost: u64) -> Acked {
    Acked {
        bytes_newly_acked: bytes,
        packets_acked: bytes / 1000,
        lost,
        ..Acked::default()
    }
}

#[test]
fn fast_increase_grows_the_window_by_what_was_acknowledged_while_it_is_used() {
    let p = spec(serde_json::json!({}));
    let mut c = Rfc8298::new(&p);
    c.cwnd = 10_000.0;
    // Used: 8000 x 1.5 + 2000 > 10000.
    c.on_feedback(&p, &measures(0.0, 8000), &acked(2000, 0));
    assert_eq!(c.cwnd, 12_000.0);
    // Unused: 2000 x 1.5 + 2000 <= 12000, no growth.
    c.on_feedback(&p, &measures(0.0, 2000), &acked(2000, 0));
    assert_eq!(c.cwnd, 12_000.0);
    // Used by the 1.5 factor alone: 7000 x 1.5 + 2000 > 12000 > 7000 + 2000.
    c.on_feedback(&p, &measures(0.0, 7000), &acked(2000, 0));
    assert_eq!(c.cwnd, 14_000.0);
    // Exactly at the window: 8000 x 1.5 + 2000 = 14000 is not over it.
    c.on_feedback(&p, &measures(0.0, 8000), &acked(2000, 0));
    assert_eq!(c.cwnd, 14_000.0);
}

/// An ECN event without loss cuts window and target by BETA_ECN (0.9),
/// not the window by BETA_LOSS (0.8).
#[test]
fn an_ecn_mark_without_loss_cuts_by_beta_ecn() {
    let p = spec(serde_json::json!({"start_bps": 1e6}));
    let mut c = Rfc8298::new(&p);
    c.cwnd = 20_000.0;
    let a = Acked {
        packets_ce: 1,
        ..acked(1000, 0)
    };
    c.on_feedback(&p, &measures(0.0, 10_000), &a);
    assert!((c.cwnd - 18_000.0).abs() < 1e-9, "{}", c.cwnd);
    assert!((c.target_bps - 900e3).abs() < 1e-6, "{}", c.target_bps);
}

#[test]
fn off_fast_increase_the_window_follows_ledbats_off_target_rule() {
    let p = spec(serde_json::json!({}));
    let mut c = Rfc8298::new(&p);
    c.in_fast_increase = false;
    c.cwnd = 20_000.0;
    // qdelay 50 ms of a 100 ms target: off_target 0.5; delta = 1 x 0.5 x
    // 4000 x 1000 / 20000 = 100 bytes.
    c.on_feedback(&p, &measures(0.05, 19_000), &acked(4000, 0));
    assert!((c.cwnd - 20_100.0).abs() < 1e-9);
    // qdelay 200 ms: off_target -1; delta = -4000 x 1000 / 20100.
    c.on_feedback(&p, &measures(0.2, 19_000), &acked(4000, 0));
    assert!((c.cwnd - (20_100.0 - 4e6 / 20_100.0)).abs() < 1e-9);
    // The window never passes 1.1 x the most in flight in 5 s.
    let mut m = measures(0.0, 19_000);
    m.max_bytes_in_flight = 10_000;
    c.on_feedback(&p, &m, &acked(4000, 0));
    assert!((c.cwnd - 11_000.0).abs() < 1e-9);
}

#[test]
fn a_loss_cuts_window_and_target_once_per_rtt_and_ends_fast_increase() {
    let p = spec(serde_json::json!({"start_bps": 1e6}));
    let mut c = Rfc8298::new(&p);
    c.cwnd = 20_000.0;
    c.on_feedback(&p, &measures(0.0, 10_000), &acked(1000, 1));
    assert_eq!(c.cwnd, 16_000.0);
    assert_eq!(c.target_bps, 900e3);
    assert!(!c.in_fast_increase);
    // Within the same RTT a second loss changes nothing.
    c.on_feedback(&p, &measures(0.0, 10_000), &acked(1000, 1));
    assert_eq!((c.cwnd, c.target_bps), (16_000.0, 900e3));
}

#[test]
fn the_trend_is_the_lag_one_autocorrelation_times_the_average_fraction() {
    let p = spec(serde_json::json!({}));
    let mut c = Rfc8298::new(&p);
    // Fractions 0, 1/3, 2/3, 1 of the 100 ms target.
    for (i, q) in [0.0, 0.1 / 3.0, 0.2 / 3.0, 0.1].iter().enumerate() {
        c.update_trend(&p, ms(50 * i as u64), *q);
    }
    // Deviations -1/2, -1/6, 1/6, 1/2: R0 = 5/9, R1 = 5/36, a = 1/4.
    // EWMA (0.1) of the fractions: 0, 1/30, 0.09667, 0.187.
    let avg = ((0.9 / 30.0) + 0.2 / 3.0) * 0.9 + 0.1;
    assert!(
        (c.qdelay_trend - 0.25 * avg).abs() < 1e-12,
        "{}",
        c.qdelay_trend
    );
    assert_eq!(c.qdelay_trend_mem, c.qdelay_trend);
    // A steady delay has no trend.
    let mut c = Rfc8298::new(&p);
    (0..20).for_each(|i| c.update_trend(&p, ms(50 * i), 0.05));
    assert_eq!(c.qdelay_trend, 0.0);
}

#[test]
fn the_send_window_has_one_mss_of_slack_while_the_delay_is_on_target() {
    let p = spec(serde_json::json!({}));
    let mut c = Rfc8298::new(&p);
    c.cwnd = 10_000.0;
    assert_eq!(c.send_window(&measures(0.05, 4000)), 7000);
    assert_eq!(c.send_window(&measures(0.15, 4000)), 6000);
    assert_eq!(c.send_window(&measures(0.15, 12_000)), 0);
    // Paced at cwnd / s_rtt = 800 kbit/s.
    assert_eq!(c.pacing_bps(&p, &measures(0.0, 0)), 800e3);
}

#[test]
fn the_media_rate_ramps_in_fast_increase_and_follows_the_rate_after() {
    let p = spec(serde_json::json!({"start_bps": 1e6}));
    let mut c = Rfc8298::new(&p);
    let mut m = measures(0.0, 0);
    m.rate_transmit_bps = 1e6;
    m.now = ms(200);
    // Fast increase: + min(200k, 500k) x 0.2 x scale 1.
    c.adjust_rate(&p, &m);
    assert!((c.target_bps - 1.04e6).abs() < 1e-6);
    // Not before 200 ms have passed.
    m.now = ms(300);
    c.adjust_rate(&p, &m);
    assert!((c.target_bps - 1.04e6).abs() < 1e-6);
    // Off fast increase, 10 kB in the RTP queue: the target moves to
    // the rate minus the queue, 1e6 - 80e3; the queue's 80 ms at 1 Mbit/s
    // is past RTP_QDELAY_TH, so x0.95 too.
    c.in_fast_increase = false;
    m.now = ms(400);
    m.rtp_queue_bytes = 10_000;
    c.adjust_rate(&p, &m);
    assert!(
        (c.target_bps - 920e3 * 0.95).abs() < 1e-6,
        "{}",
        c.target_bps
    );
}

#[test]
fn v2_targets_the_window_per_rtt_and_cuts_it_by_loss_and_by_virtual_marks() {
    let p = spec(serde_json::json!({"version": "v2"}));
    let mut c = V2::new(&p);
    c.ref_wnd = 20_000.0;
    let mut m = measures(0.0, 10_000);
    m.now = SimTime::from_secs(10);
    // No congestion: ref_wnd grows; the target is 8 ref_wnd / s_rtt,
    // less (ref_wnd_ratio - 0.1) = 0.05 - 0.1 < 0: no scaling.
    c.on_feedback(&p, &m, &acked(0, 0));
    assert_eq!(c.ref_wnd, 20_000.0);
    assert!((c.target_bps - 1.5e6f64.min(8.0 * 20_000.0 / 0.1)).abs() < 1e-6);
    // A loss: x BETA_LOSS = 0.7.
    m.now += ms(100);
    c.on_feedback(&p, &m, &acked(1000, 1));
    assert!((c.ref_wnd - 14_000.0).abs() < 1e-9);
    // qdelay and its average at 45 ms of the 60 ms target: the virtual
    // alpha is (45 - 30) / 30 = 0.5, a cut by a quarter.
    m.now += ms(100);
    m.qdelay_s = 0.045;
    c.qdelay_avg_s = 0.045;
    c.on_feedback(&p, &m, &acked(0, 0));
    assert!((c.ref_wnd - 14_000.0 * 0.75).abs() < 1e-9, "{}", c.ref_wnd);
    // Sent at the target times PACKET_PACING_HEADROOM.
    assert_eq!(c.pacing_bps(&p), c.target_bps * 1.5);
}

#[test]
fn v2_grows_by_about_an_mss_per_window_acknowledged_right_after_congestion() {
    let p = spec(serde_json::json!({"version": "v2"}));
    let mut c = V2::new(&p);
    c.ref_wnd = 20_000.0;
    let mut m = measures(0.0, 15_000);
    m.now = SimTime::from_secs(10);
    // A loss sets ref_wnd_i = 20000 and cuts to 14000.
    c.on_feedback(&p, &m, &acked(0, 1));
    assert!((c.ref_wnd - 14_000.0).abs() < 1e-9);
    // 14000 acknowledged just after: increment = 14000 x 1000/14000 =
    // 1000, x scl = ((14000 - 20000)/20000 x 4)^2 = 1.44 -> 1, x (1 + 0)
    // (post-congestion scale 0): 1000.
    c.on_feedback(&p, &m, &acked(14_000, 0));
    assert!((c.ref_wnd - 15_000.0).abs() < 1e-9, "{}", c.ref_wnd);
}

#[test]
fn bad_fields_are_named_and_l4s_needs_v2() {
    let mut c = crate::scenario::check::Checker::default();
    let s: ScreamSpec = serde_json::from_value(
        serde_json::json!({"beta_loss": 1.5, "l4s": true, "qdelay_target_lo_ms": 500,
                           "bytes_in_flight_limit_compensation": 0.5}),
    )
    .unwrap();
    let media = CcMedia {
        packet_feedback: true,
        pacer: false,
        ..CcMedia::default()
    };
    s.validate("cc", media, &mut c);
    let text: String = c.errs.iter().map(|e| format!("{e}\n")).collect();
    for want in [
        "cc.beta_loss",
        "cc.l4s",
        "cc.qdelay_target_lo_ms",
        "pacer",
        "cc.bytes_in_flight_limit_compensation: must be at least 1 (got 0.5)",
    ] {
        assert!(text.contains(want), "{want} not in {text}");
    }
    // The delay target's bounds may be equal; with a pacer and per-packet
    // feedback, nothing else is asked; without per-packet feedback that
    // alone is named, not the pacer too.
    let s: ScreamSpec = serde_json::from_value(
        serde_json::json!({"qdelay_target_lo_ms": 100, "qdelay_target_hi_ms": 100}),
    )
    .unwrap();
    for (packet_feedback, errors) in [(true, 0), (false, 1)] {
        let mut c = crate::scenario::check::Checker::default();
        let media = CcMedia {
            packet_feedback,
            pacer: true,
            ..CcMedia::default()
        };
        s.validate("cc", media, &mut c);
        assert_eq!(c.errs.len(), errors, "{:?}", c.errs);
    }
    // Its receiving half sends nothing of its own; it asks no timer on an
    // RTCP payload.
    assert!(!s.own_feedback());
    let mut sc = Scream::new(s.params());
    assert_eq!(sc.on_feedback(ms(1), &Payload::NONE, ms(2)), None);
}

#[test]
fn the_rtp_queue_is_discarded_past_its_delay_at_most_once_a_second() {
    let mut s = Scream::new(spec(serde_json::json!({})));
    assert!(!s.discard_send_queue(ms(1000), ms(100)), "not past 100 ms");
    assert!(s.discard_send_queue(ms(1000), ms(150)));
    assert!(
        !s.discard_send_queue(ms(1900), ms(500)),
        "within a second of the last"
    );
    assert!(s.discard_send_queue(ms(2100), ms(500)));
    assert_eq!(s.discards, 2);
    let mut never = Scream::new(spec(serde_json::json!({"max_rtp_queue_delay_ms": 0})));
    assert!(!never.discard_send_queue(ms(1000), ms(10_000)));
}

#[test]
fn a_later_message_counts_no_loss_or_mark_twice() {
    let mut f = Flight::default();
    (0..4).for_each(|s| f.on_send(s, 1000));
    let a = f.on_feedback(&[
        result(0, true, 0, 50, 0),
        result(1, false, 1, 0, 0),
        result(2, true, 2, 60, 3),
    ]);
    assert_eq!((a.lost, a.bytes_newly_acked_ce), (1, 1000));
    // 1 reported lost again and 2 marked again, below or at the highest
    // acknowledged (2): neither counts; 3 is newly acknowledged.
    let a = f.on_feedback(&[
        result(1, false, 1, 0, 0),
        result(2, true, 2, 60, 3),
        result(3, true, 3, 61, 0),
    ]);
    assert_eq!(
        (a.lost, a.bytes_newly_acked_ce, a.bytes_newly_acked),
        (0, 0, 1000)
    );
    assert_eq!(
        a.packets_ce, 1,
        "a mark reported is still counted as a mark"
    );
    // Above the highest acknowledged (3): 4 lost and 5 marked count.
    (4..6).for_each(|s| f.on_send(s, 1000));
    let a = f.on_feedback(&[result(4, false, 4, 0, 0), result(5, true, 5, 70, 3)]);
    assert_eq!((a.lost, a.bytes_newly_acked_ce), (1, 1000));
}

fn departure(bytes: u32) -> Departure {
    Departure {
        bytes,
        due: SimTime::ZERO,
        next_same_size: false,
    }
}

/// The transmitted and acknowledged rates are measured over 200 ms
/// windows (RFC 8298 4.1.3): 21 packets of 1000 bytes sent in the first
/// 200 ms are 840 kbit/s; acknowledged in the next window, the
/// acknowledged rate is the same and nothing more was sent.
#[test]
fn the_rates_are_measured_over_200_ms() {
    let mut s = Scream::new(spec(serde_json::json!({})));
    s.start(ms(0), usize::MAX);
    for i in 0..=20 {
        s.on_send(ms(10 * i), departure(1000));
    }
    assert!(
        (s.rate_transmit_bps - 840e3).abs() < 1e-6,
        "{}",
        s.rate_transmit_bps
    );
    let rs: Vec<PacketResult> = (0..=20)
        .map(|i| result(i, true, 10 * i, 10 * i + 50, 0))
        .collect();
    s.on_packet_feedback(ms(400), &rs);
    assert!((s.rate_ack_bps - 840e3).abs() < 1e-6, "{}", s.rate_ack_bps);
    assert_eq!(s.rate_transmit_bps, 0.0);
    assert_eq!(s.packets(), 21);
}

/// With packets in flight and no transmission for 500 ms (`stall_ms`),
/// the list of packets in flight is cleared so the window cannot stay
/// shut; with none in flight there is no timer.
#[test]
fn a_stall_clears_the_flight_at_its_deadline() {
    let mut s = Scream::new(spec(serde_json::json!({})));
    s.start(ms(0), usize::MAX);
    assert_eq!(s.deadline(), None);
    let (stamp, _) = s.on_send(ms(100), departure(1200));
    assert_eq!((stamp.seq, stamp.sent_at), (0, ms(100)));
    assert_eq!(s.deadline(), Some(ms(600)));
    s.on_timer(ms(599));
    assert_eq!(s.flight.bytes_in_flight(), 1200);
    s.on_timer(ms(600));
    assert_eq!(s.flight.bytes_in_flight(), 0);
    assert_eq!(s.deadline(), None);
}

/// The loss event rate: once per smoothed RTT, (1 - w) ler + w (a loss
/// in that RTT), w = 0.1.
#[test]
fn the_loss_event_rate_is_smoothed_once_per_rtt() {
    let mut s = Scream::new(spec(serde_json::json!({})));
    s.start(ms(0), usize::MAX);
    for i in 0..10 {
        s.on_send(ms(i), departure(1000));
    }
    // RTT 100 ms from the first message (sent 0..4, fed back at 104).
    let first: Vec<PacketResult> = (0..5).map(|i| result(i, i != 2, i, i + 50, 0)).collect();
    s.on_packet_feedback(ms(104), &first);
    assert!((s.value("loss_event_rate").unwrap() - 0.1).abs() < 1e-12);
    // The next RTT without a loss.
    let second: Vec<PacketResult> = (5..10).map(|i| result(i, true, i, i + 50, 0)).collect();
    s.on_packet_feedback(ms(300), &second);
    assert!((s.value("loss_event_rate").unwrap() - 0.09).abs() < 1e-12);
    assert!((s.value("qdelay_ms").unwrap() - 0.0).abs() < 1e-12);
    assert!((s.value("s_rtt_ms").unwrap() - (0.875 * 100.0 + 0.125 * 291.0)).abs() < 1e-6);
}

/// The queuing delay is read in ms; the values name their parts; the
/// series starts at the start target.
#[test]
fn values_and_series() {
    let mut s = Scream::new(spec(serde_json::json!({})));
    s.start(ms(5), usize::MAX);
    let t0 = s.target_bps();
    assert!(t0 > 1.0);
    assert_eq!(s.rate_series(), vec![(ms(5), t0)]);
    assert!(s.pacing_bps() > 0.0);
    assert_eq!(s.value("cwnd_bytes"), Some(s.cwnd_bytes()));
    // QDELAY_TARGET_LO: 100 ms in RFC 8298 (60 ms in v2).
    assert_eq!(s.value("qdelay_target_ms"), Some(100.0));
    assert!(s.cwnd_bytes() > 0.0);
    s.on_send(ms(5), departure(1000));
    // A one-way delay 30 ms over the base (50 ms).
    s.on_packet_feedback(ms(100), &[result(0, true, 5, 55, 0)]);
    s.on_send(ms(100), departure(1000));
    s.on_packet_feedback(ms(200), &[result(1, true, 100, 180, 0)]);
    assert!((s.value("qdelay_ms").unwrap() - 30.0).abs() < 1e-9);
    assert!(s.discard_send_queue(ms(1000), ms(150)));
    assert_eq!(s.value("rtp_queue_discards"), Some(1.0));
    // At most once a second: exactly a second later is not yet.
    assert!(!s.discard_send_queue(ms(2000), ms(150)));
    assert!(s.discard_send_queue(ms(2001), ms(150)));
    assert_eq!(s.value("l4s_alpha"), None, "RFC 8298 has no L4S");
    assert_eq!(s.value("nonsense"), None);
    assert!(
        s.send_window().is_some_and(|w| w > 0),
        "{:?}",
        s.send_window()
    );
    let mut v2 = Scream::new(spec(serde_json::json!({"version": "v2"})));
    v2.start(ms(5), usize::MAX);
    assert_eq!(v2.value("l4s_alpha"), Some(0.0));
    assert!(v2.send_window().is_some_and(|w| w > 0));
}

/// The competing flows compensation is on unless turned off; off, v2's
/// delay target stays at its lower end whatever the losses.
#[test]
fn competing_flows_compensation_is_on_by_default_and_can_be_off() {
    let on: ScreamSpec = serde_json::from_value(serde_json::json!({})).expect("spec");
    assert!(on.competing_flows);
    for (flag, rises) in [(false, false), (true, true)] {
        let mut s = Scream::new(spec(
            serde_json::json!({"version": "v2", "competing_flows": flag}),
        ));
        s.start(ms(0), usize::MAX);
        let lo = s.value("qdelay_target_ms").unwrap();
        // Packets with a 100 ms queuing delay and every fourth lost.
        for i in 0..400u64 {
            s.on_send(ms(10 * i), departure(1000));
            let extra = if i == 0 { 0 } else { 100 };
            let r = result(i, i % 4 != 3, 10 * i, 10 * i + 50 + extra, 0);
            s.on_packet_feedback(ms(10 * i + 60 + extra), &[r]);
        }
        let target = s.value("qdelay_target_ms").unwrap();
        assert_eq!(
            target > lo,
            rises,
            "competing_flows {flag}: {lo} -> {target}"
        );
    }
}

/// Off fast increase, a window the flight does not use (bytes in flight
/// x 1.25 + newly acknowledged at most cwnd) does not grow though the
/// delay is under target; one used a little more does.
#[test]
fn an_unused_window_does_not_grow_under_target() {
    let p = spec(serde_json::json!({}));
    for (bif, want) in [(10_000, 20_000.0), (13_000, 20_100.0)] {
        let mut c = Rfc8298::new(&p);
        c.in_fast_increase = false;
        c.cwnd = 20_000.0;
        c.on_feedback(&p, &measures(0.05, bif), &acked(4000, 0));
        assert!((c.cwnd - want).abs() < 1e-9, "{bif}: {}", c.cwnd);
    }
}

/// Fast increase resumes T_RESUME_FAST_INCREASE (5 s) after the last
/// congestion or the last time the trend was at or above
/// QDELAY_TREND_LO, whichever came later.
#[test]
fn fast_increase_resumes_five_seconds_after_the_trend_was_last_high() {
    let p = spec(serde_json::json!({}));
    let mut c = Rfc8298::new(&p);
    c.cwnd = 20_000.0;
    let at = |t_ms: u64| Measures {
        now: ms(t_ms),
        ..measures(0.0, 10_000)
    };
    c.on_feedback(&p, &at(1000), &acked(1000, 1));
    assert!(!c.in_fast_increase);
    // A growing delay: the trend reaches 1 by 2.95 s.
    for i in 0..20 {
        c.update_trend(&p, ms(2000 + 50 * i), 0.1 * i as f64);
    }
    assert!(c.qdelay_trend >= 0.2, "{}", c.qdelay_trend);
    // Then no queue for 2 s: the trend falls to 0 within the 20 samples
    // of its history, by 4 s.
    for i in 0..40 {
        c.update_trend(&p, ms(3000 + 50 * i), 0.0);
    }
    assert_eq!(c.qdelay_trend, 0.0);
    c.on_feedback(&p, &at(7000), &acked(1000, 0));
    assert!(
        !c.in_fast_increase,
        "at most 4.05 s after the trend was high"
    );
    // 5 s after the last high trend (before 4 s), not after the last
    // low one (4.95 s).
    c.on_feedback(&p, &at(9500), &acked(1000, 0));
    assert!(c.in_fast_increase);
}

/// A controller whose last congestion was at 1 Mbit/s, in fast increase
/// at `target_bps`, after one rate adjustment (at 1.2 s, 1 Mbit/s sent).
fn ramped_once(target_bps: f64) -> (Params, Rfc8298, Measures) {
    let p = spec(serde_json::json!({"start_bps": 1e6}));
    let mut c = Rfc8298::new(&p);
    c.cwnd = 20_000.0;
    // A loss sets target_last_max = 1e6 (and cuts the target).
    c.on_feedback(&p, &measures(0.0, 10_000), &acked(1000, 1));
    c.in_fast_increase = true;
    c.target_bps = target_bps;
    let mut m = measures(0.0, 0);
    m.rate_transmit_bps = 1e6;
    m.now = ms(1200);
    c.adjust_rate(&p, &m);
    (p, c, m)
}

/// The ramp's scale: ((target - target_last_max) / target_last_max x 4)^2
/// within [0.2, 1]; near the rate of the last congestion the target ramps
/// at a fifth of RAMP_UP_SPEED, and off fast increase a rise towards the
/// rate is scaled the same way.
#[test]
fn the_ramp_slows_near_the_rate_of_the_last_congestion() {
    let (p, mut c, mut m) = ramped_once(1.05e6);
    // (0.05 x 4)^2 = 0.04 -> 0.2: + 200k x 0.2 s x 0.2.
    assert!((c.target_bps - 1.058e6).abs() < 1e-6, "{}", c.target_bps);
    // Off fast increase at 1.1 Mbit/s: + min(52.2k x scale, 40k); scale
    // (0.058 x 4)^2 = 0.0538 -> 0.2.
    c.in_fast_increase = false;
    m.rate_transmit_bps = 1.11e6;
    m.now = ms(1400);
    c.adjust_rate(&p, &m);
    assert!(
        (c.target_bps - (1.058e6 + 52_000.0 * 0.2)).abs() < 1e-6,
        "{}",
        c.target_bps
    );
}

/// Between its bounds the ramp's scale is ((target - last max) / last max
/// x 4)^2: 0.36 at 15% over the rate of the last congestion.
#[test]
fn the_ramps_scale_between_its_bounds() {
    let (_, c, _) = ramped_once(1.15e6);
    let want = 1.15e6 + 200e3 * 0.2 * 0.36;
    assert!((c.target_bps - want).abs() < 1e-6, "{}", c.target_bps);
}

/// With no rate measured yet (transmitted and acknowledged both 0) the
/// median limit does not apply: in fast increase the target still ramps.
#[test]
fn with_no_rate_measured_the_target_ramps_unlimited() {
    let p = spec(serde_json::json!({"start_bps": 1e6}));
    let mut c = Rfc8298::new(&p);
    let mut m = measures(0.0, 0);
    m.now = ms(200);
    c.adjust_rate(&p, &m);
    // + 200 kbit/s per s x 0.2 s x scale 1 (no congestion yet).
    assert!((c.target_bps - 1.04e6).abs() < 1e-6, "{}", c.target_bps);
    // From 150 kbit/s the ramp is at most half the target per second:
    // + 75 kbit/s per s x 0.2 s.
    let p = spec(serde_json::json!({}));
    let mut c = Rfc8298::new(&p);
    c.adjust_rate(&p, &m);
    assert!((c.target_bps - 165e3).abs() < 1e-6, "{}", c.target_bps);
}

/// The trend's memory decays by 0.99 per update when the trend is lower.
#[test]
fn the_trends_memory_decays_by_a_hundredth_per_update() {
    let p = spec(serde_json::json!({}));
    let mut c = Rfc8298::new(&p);
    c.qdelay_trend_mem = 0.5;
    // One sample: no autocorrelation, a trend of 0.
    c.update_trend(&p, ms(0), 0.05);
    assert_eq!(c.qdelay_trend, 0.0);
    assert!(
        (c.qdelay_trend_mem - 0.495).abs() < 1e-15,
        "{}",
        c.qdelay_trend_mem
    );
}

/// The controller's window, pacing rate and measures from the start, as
/// the pacer and the frame sender read them: RFC 8298 starts at MIN_CWND
/// (3000 bytes) with one MSS of slack while the delay is on target and no
/// pacing limit before an RTT is measured; v2 allows REF_WND_OVERHEAD
/// (1.5) x its reference window less the bytes in flight, and paces at
/// PACKET_PACING_HEADROOM (1.5) x the target.
#[test]
fn windows_pacing_and_measures_from_the_start() {
    let mut s = Scream::new(spec(serde_json::json!({})));
    s.start(ms(0), usize::MAX);
    assert_eq!(s.cwnd_bytes(), 3000.0);
    assert_eq!(s.send_window(), Some(4000));
    assert_eq!(s.pacing_bps(), f64::INFINITY);
    s.on_send(ms(0), departure(1200));
    // The MSS is now 1200 bytes, all of them in flight.
    assert_eq!(s.send_window(), Some(3000));
    s.on_send_queue(5000);
    let m = s.measures(ms(1), 0);
    assert_eq!(
        (m.bytes_in_flight, m.mss, m.rtp_queue_bytes),
        (1200, 1200.0, 5000)
    );
    let mut v2 = Scream::new(spec(serde_json::json!({"version": "v2"})));
    v2.start(ms(0), usize::MAX);
    assert_eq!(v2.cwnd_bytes(), 3000.0);
    assert_eq!(v2.send_window(), Some(4500));
    assert_eq!(v2.pacing_bps(), 150e3 * 1.5);
}

/// The target is scaled down (x 0.95) when the RTP queue holds more than
/// RTP_QDELAY_TH (20 ms) at the current rate; exactly 20 ms is not more.
#[test]
fn the_rtp_queues_delay_scales_the_target_past_its_threshold() {
    let adjusted = |queue_bytes: u64| {
        let p = spec(serde_json::json!({"start_bps": 1e6}));
        let mut c = Rfc8298::new(&p);
        c.in_fast_increase = false;
        let mut m = measures(0.0, 0);
        m.rate_transmit_bps = 1e6;
        m.rtp_queue_bytes = queue_bytes;
        m.now = ms(200);
        c.adjust_rate(&p, &m);
        c.target_bps
    };
    // 2500 bytes = 20,000 bits = 20 ms at 1 Mbit/s: the target moves
    // to the rate less the queue, 980 kbit/s, unscaled.
    assert!((adjusted(2500) - 980e3).abs() < 1e-6, "{}", adjusted(2500));
    let over = adjusted(2501);
    assert!((over - (1e6 - 20_008.0) * 0.95).abs() < 1e-6, "{over}");
}

/// One media rate adjustment off fast increase, from a 1 Mbit/s target,
/// at `rate_bps` transmitted and queuing delay trend `trend`.
fn adjusted_off_fast_increase(rate_bps: f64, trend: f64) -> f64 {
    let p = spec(serde_json::json!({"start_bps": 1e6}));
    let mut c = Rfc8298::new(&p);
    c.in_fast_increase = false;
    c.qdelay_trend = trend;
    let mut m = measures(0.0, 0);
    m.rate_transmit_bps = rate_bps;
    m.now = ms(200);
    c.adjust_rate(&p, &m);
    c.target_bps
}

/// Off fast increase a rise towards the rate is at most RAMP_UP_SPEED x
/// RATE_ADJUST_INTERVAL (200 kbit/s per s x 0.2 s), and the target moves
/// to the rate less PRE_CONGESTION_GUARD x the trend of it.
#[test]
fn off_fast_increase_the_ramp_caps_a_rise_and_the_guard_holds_back() {
    let rise = adjusted_off_fast_increase(1.3e6, 0.0);
    assert!((rise - 1.04e6).abs() < 1e-6, "{rise}");
    let guarded = adjusted_off_fast_increase(1e6, 0.5);
    assert!((guarded - 0.95e6).abs() < 1e-6, "{guarded}");
}

/// The target stays under max(current rate, the median of the positive
/// transmitted rates over 10 s) x (2 - qdelay_trend_mem).
#[test]
fn the_target_is_limited_by_the_median_rate() {
    let p = spec(serde_json::json!({"start_bps": 1e6}));
    let mut c = Rfc8298::new(&p);
    c.qdelay_trend_mem = 1.0;
    let mut m = measures(0.0, 0);
    for (i, rate) in [0.0, 0.0, 1.2e6, 0.5e6].into_iter().enumerate() {
        m.rate_transmit_bps = rate;
        m.now = ms(200 * (i as u64 + 1));
        if i == 3 {
            c.target_bps = 1.5e6;
            c.qdelay_trend_mem = 1.0;
        }
        c.adjust_rate(&p, &m);
    }
    // The median of 1.2 and 0.5 Mbit/s (the upper of the two; the zeros
    // are left out): 1.2 Mbit/s, x (2 - 1).
    assert!((c.target_bps - 1.2e6).abs() < 1e-6, "{}", c.target_bps);
}

/// The base delay is the least of the last `bins` one-minute minima: a
/// sample 60 s after a minute's start opens the next minute, and the
/// oldest minute goes when there are more than `bins`.
#[test]
fn the_base_delay_keeps_minute_minima() {
    let mut b = BaseDelay::new(2);
    let s = SimTime::from_secs;
    assert_eq!(b.qdelay(s(0), ms(50)), ms(0));
    assert_eq!(b.qdelay(s(30), ms(40)), ms(0));
    assert_eq!(b.qdelay(s(60), ms(70)), ms(30));
    assert_eq!(
        b.qdelay(s(120), ms(80)),
        ms(10),
        "the first minute (40) is gone"
    );
}

/// The most in flight over 5 s in 10 slots of 0.5 s: a slot is
/// [start, start + 0.5 s); a slot goes once it started 5 s ago.
#[test]
fn the_window_max_drops_slots_older_than_its_span() {
    let mut w = WindowMax::new(SimTime::from_secs(5), 10);
    w.add(ms(0), 10);
    w.add(ms(400), 5);
    w.add(ms(500), 3);
    assert_eq!(w.max(), 10);
    w.add(ms(5000), 1);
    assert_eq!(w.max(), 3, "the slot from 0 s is gone, and 5 with it");
}
