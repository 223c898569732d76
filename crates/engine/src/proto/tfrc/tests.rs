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
fn history_discounting_weighs_old_intervals_by_twice_the_mean_over_the_open_one() {
    // Section 5.5: closed intervals of 100, then 300 loss-free packets:
    // DF = 2 x 100 / 300. I_tot0 = (300 + 100 x 5.0 x DF) / (1 + 5.0 x DF)
    // (the weights after the first sum to 5.0) = 146.15.
    let mut h = LossHistory::new(8, true);
    let lost: Vec<u64> = (1..=9).map(|k| 100 * k).collect();
    feed(&mut h, (0..1200).filter(|s| !lost.contains(s)), ms(10));
    assert_eq!(h.open_interval(), 300);
    let df = 2.0 * 100.0 / 300.0;
    let want = (300.0 + 100.0 * 5.0 * df) / (1.0 + 5.0 * df);
    assert!(
        (h.mean_interval().unwrap() - want).abs() < 1e-9,
        "{:?}",
        h.mean_interval()
    );
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
    s.on_send(SimTime::ZERO, 1000);
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
fn no_feedback_halves_a_sending_rate_and_keeps_an_idle_one() {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    assert_eq!(s.nofeedback_deadline(), SimTime::from_secs(2));
    s.on_send(SimTime::ZERO, 1000);
    s.on_nofeedback(SimTime::from_secs(2));
    assert_eq!(s.rate(), 500.0);
    // Nothing sent since the timer was set, at the initial rate: kept.
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    s.on_nofeedback(SimTime::from_secs(2));
    assert_eq!(s.rate(), 1000.0);
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    s.on_feedback(ms(100), &fb(SimTime::ZERO, 0.0, 0.0));
    s.on_feedback(ms(300), &fb(ms(200), 20_000.0, 0.0));
    assert!((s.rate() - 40_000.0).abs() < 1e-6, "{}", s.rate());
    s.on_send(ms(310), 1000);
    let deadline = s.nofeedback_deadline();
    s.on_nofeedback(deadline);
    // p = 0, a packet sent since the timer was set: X halves.
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

#[test]
fn the_segment_size_is_the_mean_of_the_packets_sent() {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    for _ in 0..5 {
        s.on_send(SimTime::ZERO, 1000);
    }
    assert_eq!(s.segment_size(), 1000.0, "a fixed size stays exact");
    s.on_send(SimTime::ZERO, 200);
    assert_eq!(s.segment_size(), 1000.0 * 15.0 / 16.0 + 200.0 / 16.0);
    for _ in 0..300 {
        s.on_send(SimTime::ZERO, 200);
    }
    assert!((s.segment_size() - 200.0).abs() < 1e-3);
    // The spacing follows: s / X at the start rate of one nominal packet
    // per second.
    assert!((s.interval().as_secs_f64() - 0.2).abs() < 1e-6);
}

#[test]
fn the_receivers_first_interval_uses_the_mean_size_received() {
    // The same 50,000 B/s received as 250 packets of 200 bytes or 50 of
    // 1000 in a second. Section 6.3.1 solves s / (R f(p)) = X_recv: with
    // s the mean size received, f(p) is 0.04 for the small packets and
    // 0.2 for the large ones (R = 0.1 s), p about 0.0024 against 0.05.
    let run = |size: u32, n: u64| {
        let mut r = TfrcReceiver::new(TfrcConfig {
            s: 1000,
            ..Default::default()
        });
        let gap = 1000 / n; // ms between packets over one second
        for k in 0..n {
            let h = DataHeader {
                seq: k,
                sent_at: ms(k * gap),
                rtt: ms(100),
            };
            r.on_data(ms(k * gap + 5), h, size);
        }
        // Packet n lost; three later ones make the loss event.
        for k in n + 1..n + 4 {
            let h = DataHeader {
                seq: k,
                sent_at: ms(k * gap),
                rtt: ms(100),
            };
            r.on_data(ms(k * gap + 5), h, size);
        }
        r.loss_event_rate()
    };
    let (small, large) = (run(200, 250), run(1000, 50));
    assert!(small > 0.0 && large > 0.0);
    assert!(small < large / 5.0, "small {small} large {large}");
}

/// A sender after two feedbacks 100 ms apart (R = 0.1 s), the second
/// reporting `x_recv` and `p`; the no-feedback timer set at 200 ms.
fn after_two_feedbacks(x_recv: f64, p: f64) -> TfrcSender {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    s.on_send(SimTime::ZERO, 1000);
    s.on_feedback(ms(100), &fb(SimTime::ZERO, 0.0, 0.0));
    s.on_feedback(ms(200), &fb(ms(100), x_recv, p));
    s
}

#[test]
fn an_idle_sender_below_its_initial_rate_keeps_it_when_no_feedback_comes() {
    // R = 0.1 s: recover_rate = W_init / R = 40,000 B/s.
    let start = after_two_feedbacks;
    // p = 0, X = 40,000 < 2 x recover_rate, nothing sent since the timer
    // was set: the rate stays.
    let mut s = start(20_000.0, 0.0);
    let x = s.rate();
    s.on_nofeedback(s.nofeedback_deadline());
    assert_eq!(s.rate(), x, "idle: kept");
    assert_eq!(s.stats.nofeedback_expiries, 1);
    // X = 60,000, between recover_rate and twice it: still kept.
    let mut s = start(30_000.0, 0.0);
    let x60 = s.rate();
    assert!((x60 - 60_000.0).abs() < 1e-6, "{x60}");
    s.on_nofeedback(s.nofeedback_deadline());
    assert_eq!(s.rate(), x60, "idle below 2 recover_rate: kept");
    // The same with a packet sent since: halved.
    let mut s = start(20_000.0, 0.0);
    s.on_send(ms(250), 1000);
    s.on_nofeedback(s.nofeedback_deadline());
    assert_eq!(s.rate(), x / 2.0, "sending: halved");
    // p > 0 and X_recv = 20,000 < recover_rate, idle: kept.
    let mut s = start(20_000.0, 0.01);
    let x = s.rate();
    s.on_nofeedback(s.nofeedback_deadline());
    assert_eq!(s.rate(), x);
    // p = 0.1: X (the equation's 17,700 B/s) is above X_recv but not twice
    // it, so update_limits would halve X_Bps; idle below recover_rate, the
    // rate is kept instead.
    let mut s = start(20_000.0, 0.1);
    let x = s.rate();
    assert!(x > 15_000.0 && x < 20_000.0, "{x}");
    s.on_nofeedback(s.nofeedback_deadline());
    assert_eq!(s.rate(), x, "idle with losses: kept");
    // p > 0, X_recv above recover_rate, idle: update_limits applies.
    let mut s = start(60_000.0, 0.01);
    s.on_nofeedback(s.nofeedback_deadline());
    assert!(s.rate() < 60_000.0);
}

#[test]
fn no_feedback_with_losses_halves_the_receive_rate_or_the_equation() {
    let setup = |x_recv: f64, p: f64| {
        let mut s = after_two_feedbacks(x_recv, p);
        s.on_send(ms(210), 1000);
        s
    };
    // p = 0.001: X_Bps (R = 0.1, t_RTO = 0.4) is about 370,000 B/s, more
    // than twice X_recv, the largest of the set: 0.85 x 50,000 after the
    // new loss event. The limit becomes X_recv: X = 42,500.
    let mut s = setup(50_000.0, 0.001);
    let x_bps = throughput_bps(1000.0, 0.1, 0.001, 1.0, 0.4);
    assert!(x_bps > 100_000.0);
    s.on_nofeedback(s.nofeedback_deadline());
    assert!((s.rate() - 42_500.0).abs() < 1e-6, "{}", s.rate());
    // p = 0.2: X_Bps is far below 2 X_recv: the limit is X_Bps / 2.
    let mut s = setup(1e6, 0.2);
    let t_rto = (0.4_f64).max(2.0 * 1000.0 / s.rate());
    let x_bps = throughput_bps(1000.0, 0.1, 0.2, 1.0, t_rto);
    s.on_nofeedback(s.nofeedback_deadline());
    assert!(
        (s.rate() - x_bps / 2.0).abs() < 1.0,
        "{} vs {}",
        s.rate(),
        x_bps / 2.0
    );
}

#[test]
fn a_lost_packets_time_is_interpolated_between_its_neighbours() {
    // Section 5.2: a loss's time is interpolated between the packets
    // around it. Packet 101 lost between 100 (1000 ms) and 102 (1020 ms):
    // 1010 ms. Packet 110 lost between 109 (1090 ms) and 111 (1091 ms):
    // 1090.5 ms. With RTT 50 ms, 80.5 ms apart: two loss events.
    let mut h = LossHistory::new(8, false);
    let rtt = ms(50);
    for s in (0..=100).chain(102..=109) {
        h.on_packet(s, ms(10 * s), rtt);
    }
    h.on_packet(111, ms(1091), rtt);
    for s in 112..130 {
        h.on_packet(s, ms(10 * s), rtt);
    }
    assert_eq!((h.lost_packets, h.loss_events), (2, 2));
}

#[test]
fn repeated_no_feedback_halves_down_to_one_packet_per_t_mbi() {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    for _ in 0..20 {
        let t = s.nofeedback_deadline();
        s.on_send(t, 1000);
        s.on_nofeedback(t);
    }
    // s / t_mbi = 1000 bytes / 64 s.
    assert_eq!(s.rate(), 1000.0 / 64.0);
    assert_eq!(s.stats.nofeedback_expiries, 20);
}

#[test]
fn the_receivers_feedback_period_is_the_senders_rtt() {
    let mut r = TfrcReceiver::new(cfg());
    let h = |seq: u64, rtt: u64| DataHeader {
        seq,
        sent_at: ms(seq),
        rtt: ms(rtt),
    };
    r.on_data(ms(5), h(0, 40), 1000).expect("first packet");
    assert_eq!(r.deadline(), Some(ms(45)), "one 40 ms RTT on");
    // Before the sender has an RTT (zero in the header): every 100 ms.
    let mut r = TfrcReceiver::new(cfg());
    r.on_data(ms(5), h(0, 0), 1000).expect("first packet");
    assert_eq!(r.deadline(), Some(ms(105)));
}

#[test]
fn without_an_rtt_the_first_loss_interval_is_not_synthesised() {
    // The sender has no RTT yet (zero in the headers): section 6.3.1 has
    // nothing to solve with, so p comes from the packets seen alone.
    let mut r = TfrcReceiver::new(cfg());
    for seq in (0..20).filter(|&s| s != 10) {
        let h = DataHeader {
            seq,
            sent_at: ms(10 * seq),
            rtt: SimTime::ZERO,
        };
        r.on_data(ms(10 * seq + 5), h, 1000);
    }
    assert_eq!(r.hist.loss_events, 1);
    assert_eq!(r.hist.intervals().count(), 0, "no synthesised interval");
    assert_eq!(r.loss_event_rate(), 1.0 / r.hist.open_interval() as f64);
}

#[test]
fn the_no_feedback_timer_runs_for_four_rtts_or_two_packets() {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    s.on_send(SimTime::ZERO, 1000);
    s.on_feedback(ms(100), &fb(SimTime::ZERO, 0.0, 0.0));
    // R = 0.1 s, X = 40,000 B/s: max(4R, 2s/X) = max(0.4, 0.05) = 0.4 s.
    assert_eq!(s.nofeedback_deadline(), ms(500));
}

#[test]
fn slow_start_never_falls_below_w_init_over_r() {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    s.on_feedback(ms(100), &fb(SimTime::ZERO, 0.0, 0.0));
    // An RTT later the receiver reports only 1,000 B/s: 2 X_recv would
    // allow 2,000, but slow start keeps W_init / R = 40,000.
    s.on_feedback(ms(200), &fb(ms(100), 1_000.0, 0.0));
    assert!((s.rate() - 40_000.0).abs() < 1e-6, "{}", s.rate());
}

#[test]
fn oscillation_prevention_spaces_packets_by_the_rtt_samples_square_roots() {
    let mut s = TfrcSender::new(cfg(), SimTime::ZERO);
    s.on_feedback(ms(100), &fb(SimTime::ZERO, 0.0, 0.0));
    // Second sample 0.4 s (sent at 100 ms, back at 500 ms): R_sqmean =
    // 0.9 sqrt(0.1) + 0.1 sqrt(0.4), and the packets are spaced at
    // s / (X R_sqmean / sqrt(0.4)), wider than s / X after the long sample.
    s.on_feedback(ms(500), &fb(ms(100), 40_000.0, 0.0));
    let x = s.rate();
    let sq = 0.9 * 0.1_f64.sqrt() + 0.1 * 0.4_f64.sqrt();
    let want = 1000.0 / (x * sq / 0.4_f64.sqrt());
    assert!(
        (s.interval().as_secs_f64() - want).abs() < 1e-6,
        "{:?} vs {want}",
        s.interval()
    );
}

/// Section 5.2's interpolation by hand: 11 and 12 lost between 10 (at 0
/// ms) and 13 (at 30 ms): the event starts with 11, due at 10 ms.
#[test]
fn the_interpolated_time_is_proportional_to_the_sequence_gap() {
    let mut h = LossHistory::new(8, false);
    let rtt = ms(50);
    for s in 0..=10 {
        h.on_packet(s, ms(0), rtt);
    }
    for s in 13..=16 {
        h.on_packet(s, ms(30 + 10 * (s - 13)), rtt);
    }
    assert_eq!(h.event(), Some((11, ms(10))));
    assert_eq!((h.lost_packets, h.loss_events), (2, 1));
}

/// The very first packet lost: packets 1, 2 and 3 make it a loss event,
/// due when the first of them arrived (nothing came before it).
#[test]
fn a_lost_first_packet_is_a_loss_event() {
    let mut h = LossHistory::new(8, false);
    for s in 1..=3 {
        h.on_packet(s, ms(10 * s), ms(50));
    }
    assert_eq!(h.event(), Some((0, ms(10))));
    assert_eq!((h.lost_packets, h.loss_events), (1, 1));
}

/// The first feedback (on the first packet) has no interval to measure a
/// receive rate over: it reports 0, not bytes over no time.
#[test]
fn the_first_feedback_reports_no_receive_rate() {
    let mut r = TfrcReceiver::new(cfg());
    let h = DataHeader {
        seq: 0,
        sent_at: ms(0),
        rtt: ms(40),
    };
    let fb = r
        .on_data(ms(5), h, 1000)
        .expect("feedback on the first packet");
    assert_eq!(fb.x_recv, 0.0);
}
