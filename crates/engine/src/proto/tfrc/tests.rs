//! RFC 5348 rule tests for the TFRC state machines.

use super::loss::{weights, LossHistory};
use super::*;

fn ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}

/// Section 3.1 by hand: s = 1000, R = 0.1 s, p = 0.01, b = 1, t_RTO = 0.4:
/// R sqrt(2p/3) = 0.0081650, t_RTO 3 sqrt(3p/8) p (1 + 32 p^2) =
/// 0.4 x 0.1837117 x 0.01 x 1.0032 = 0.00073720; X = 1000 / 0.0089022
/// = 112,332.2 bytes/s.
#[test]
fn the_equation_matches_a_hand_computed_value() {
    let x = throughput_bps(1000.0, 0.1, 0.01, 1.0, 0.4);
    assert!((x - 112_332.2).abs() < 0.1, "{x}");
    // b = 2 (delayed ACKs) lowers the rate.
    assert!(throughput_bps(1000.0, 0.1, 0.01, 2.0, 0.4) < x);
    let p = loss_rate_for(x, 1000.0, 0.1, 1.0, 0.4);
    assert!((p - 0.01).abs() < 1e-9, "{p}");
}

#[test]
fn the_weights_are_the_rfcs() {
    assert_eq!(weights(8), vec![1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]);
}

/// Feeds sequence numbers arriving 10 ms apart (by sequence number).
fn feed(h: &mut LossHistory, seqs: impl IntoIterator<Item = u64>, rtt: SimTime) -> Vec<LossNews> {
    seqs.into_iter()
        .map(|s| h.on_packet(s, ms(10 * s), rtt))
        .collect()
}

use super::loss::LossNews;

#[test]
fn a_packet_is_lost_after_three_later_ones_arrive() {
    let mut h = LossHistory::new(8, false);
    let news = feed(&mut h, (0..10).filter(|&s| s != 5), ms(100));
    // 6, 7, 8 arrive: at 8 the loss of 5 is decided.
    let at: Vec<usize> = (news.iter().enumerate())
        .filter(|(_, n)| n.lost > 0)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at, vec![7], "the 8th arrival (seq 8)");
    assert!(news[7].new_event && news[7].first);
    assert_eq!(h.lost_packets, 1);
    assert_eq!(h.open_interval(), 5, "packets 5..=9 since the event began");
}

#[test]
fn losses_within_an_rtt_of_the_event_start_are_one_event() {
    let mut h = LossHistory::new(8, false);
    // RTT 100 ms = 10 packets: losses at 20, 25 (one event), 40 (a new one).
    let lost = [20, 25, 40];
    feed(&mut h, (0..60).filter(|s| !lost.contains(s)), ms(100));
    assert_eq!((h.lost_packets, h.loss_events), (3, 2));
    assert_eq!(
        h.intervals().copied().collect::<Vec<_>>(),
        vec![20],
        "40 - 20"
    );
    assert_eq!(h.open_interval(), 20, "packets 40..=59");
}

#[test]
fn the_mean_interval_weights_recent_intervals_and_the_open_one() {
    let mut h = LossHistory::new(8, false);
    // Loss events every 100 packets, RTT short: intervals of 100.
    let lost: Vec<u64> = (1..=9).map(|k| 100 * k).collect();
    feed(&mut h, (0..1000).filter(|s| !lost.contains(s)), ms(10));
    h.set_first_interval(100); // replaces the synthesised one for the check
                               // Closed: only the seeded one (set_first_interval clears), open 100.
    assert_eq!(h.mean_interval(), Some(100.0));
    let mut h = LossHistory::new(8, false);
    feed(&mut h, (0..1000).filter(|s| !lost.contains(s)), ms(10));
    let closed: Vec<u64> = h.intervals().copied().collect();
    assert_eq!(closed, vec![100; 8]);
    // I_0 = 100 (900..=999): I_tot0 = I_tot1 = 100 x 6: mean 100.
    assert!((h.mean_interval().unwrap() - 100.0).abs() < 1e-9);
    assert!((h.loss_event_rate() - 0.01).abs() < 1e-12);
}

#[test]
fn the_open_interval_counts_only_when_it_raises_the_mean() {
    let mut h = LossHistory::new(8, false);
    let lost = [100, 150];
    feed(&mut h, (0..170).filter(|s| !lost.contains(s)), ms(10));
    // Closed [50] (after the first event's synthesised... none here: the
    // first event has no closed interval), open 150..=169 = 20.
    assert_eq!(h.intervals().copied().collect::<Vec<_>>(), vec![50]);
    // I_tot0 = 20 x 1 + 50 x 1 over 2 = 35; I_tot1 = 50: mean 50.
    assert_eq!(h.mean_interval(), Some(50.0));
    feed(&mut h, 170..400, ms(10));
    // Open 250: I_tot0 = (250 + 50) / 2 = 150 > 50.
    assert_eq!(h.mean_interval(), Some(150.0));
}

#[test]
fn history_discounting_lets_a_long_loss_free_stretch_count_more() {
    let lost = [100, 150];
    let mut plain = LossHistory::new(8, false);
    let mut disc = LossHistory::new(8, true);
    for h in [&mut plain, &mut disc] {
        feed(h, (0..1150).filter(|s| !lost.contains(s)), ms(10));
    }
    // Open 1000 > 2 x 50: the closed interval's weight is scaled by
    // max(0.5, 100 / 1000) = 0.5: (1000 + 0.5 x 50) / 1.5 = 683.3.
    assert_eq!(plain.mean_interval(), Some(525.0));
    assert!((disc.mean_interval().unwrap() - 1025.0 / 1.5).abs() < 1e-9);
}

fn cfg() -> TfrcConfig {
    TfrcConfig {
        s: 1000,
        ..Default::default()
    }
}

fn fb(t_recvdata: SimTime, x_recv: f64, p: f64) -> Feedback {
    Feedback {
        t_recvdata,
        t_delay: SimTime::ZERO,
        x_recv,
        p,
    }
}

#[test]
fn the_sender_starts_at_one_packet_per_second_then_w_init_over_r() {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    assert_eq!(s.rate(), 1000.0);
    assert_eq!(s.interval(), SimTime::from_secs(1));
    s.on_send(SimTime::ZERO);
    s.on_feedback(ms(100), &fb(SimTime::ZERO, 0.0, 0.0));
    // W_init = min(4 s, max(2 s, 4380)) = 4000 bytes over R = 0.1 s.
    assert_eq!(s.rtt(), Some(0.1));
    assert!((s.rate() - 40_000.0).abs() < 1e-6);
}

#[test]
fn slow_start_doubles_at_most_once_per_rtt_within_twice_the_receive_rate() {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    s.on_feedback(ms(100), &fb(SimTime::ZERO, 0.0, 0.0));
    // 50 ms later: less than an RTT since the last doubling.
    s.on_feedback(ms(150), &fb(ms(50), 40_000.0, 0.0));
    assert!((s.rate() - 40_000.0).abs() < 1e-6);
    s.on_feedback(ms(200), &fb(ms(100), 40_000.0, 0.0));
    assert!(
        (s.rate() - 80_000.0).abs() < 1e-6,
        "doubled, within 2 x 40,000"
    );
    // The receiver got only 30,000 B/s: the limit is 2 x max(recent).
    s.on_feedback(ms(320), &fb(ms(220), 30_000.0, 0.0));
    assert!(
        (s.rate() - 80_000.0).abs() < 1e-6,
        "2 x 40,000 still in the set"
    );
}

#[test]
fn with_losses_the_rate_follows_the_equation() {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    s.on_feedback(ms(100), &fb(SimTime::ZERO, 0.0, 0.0));
    s.on_feedback(ms(200), &fb(ms(100), 1e6, 0.01));
    // R = 0.1, t_RTO = max(0.4, 2 s / X) = 0.4: the hand-computed rate.
    let want = throughput_bps(1000.0, 0.1, 0.01, 1.0, 0.4).min(0.85 * 1e6);
    assert!((s.rate() - want).abs() < 1.0, "{} vs {want}", s.rate());
    assert_eq!(s.loss_event_rate(), 0.01);
}

#[test]
fn no_feedback_halves_before_any_rtt_and_falls_to_the_receive_rate_after() {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    assert_eq!(s.nofeedback_deadline(), SimTime::from_secs(2));
    s.on_nofeedback(SimTime::from_secs(2));
    assert_eq!(s.rate(), 500.0);
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    s.on_feedback(ms(100), &fb(SimTime::ZERO, 0.0, 0.0));
    s.on_feedback(ms(300), &fb(ms(200), 20_000.0, 0.0));
    let deadline = s.nofeedback_deadline();
    s.on_nofeedback(deadline);
    // p = 0: the limit is the last receive rate, 20,000 B/s.
    assert!((s.rate() - 20_000.0).abs() < 1e-6, "{}", s.rate());
    assert_eq!(s.stats.nofeedback_expiries, 1);
}

#[test]
fn the_receiver_sends_feedback_on_the_first_packet_each_rtt_and_on_new_loss() {
    let mut r = TfrcReceiver::new(cfg());
    let data = |seq: u64, t: u64| DataHeader {
        seq,
        sent_at: ms(t),
        rtt: ms(100),
    };
    assert!(
        r.on_data(ms(10), data(0, 0), 1000).is_some(),
        "first packet"
    );
    assert_eq!(r.deadline(), Some(ms(110)));
    for k in 1..10 {
        assert!(r.on_data(ms(10 + 10 * k), data(k, 10 * k), 1000).is_none());
    }
    let f = r.on_timer(ms(110)).expect("one RTT on");
    // 9,000 bytes since the first feedback (packets 1..=9) over 100 ms.
    assert!((f.x_recv - 90_000.0).abs() < 1e-6);
    assert_eq!((f.t_recvdata, f.t_delay), (ms(90), ms(10)));
    // Packet 10 lost: packets 11, 12, 13 make it a loss event: feedback at
    // once, with p from the synthesised first interval.
    for k in 11..13 {
        assert!(r.on_data(ms(10 + 10 * k), data(k, 10 * k), 1000).is_none());
    }
    let f = r
        .on_data(ms(140), data(13, 130), 1000)
        .expect("new loss event");
    assert!(f.p > 0.0 && f.p < 0.1, "{}", f.p);
}
