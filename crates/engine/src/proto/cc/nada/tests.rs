//! NADA's equations by hand (RFC 8698 4.2-4.4, the default constants).

use super::signal::{Consts, Signal};
use super::*;

fn nada() -> Nada {
    Nada::new(serde_json::from_str("{}").expect("defaults"))
}

/// Ramp-up: gamma = min(0.5, 50 ms / (100 + 100 + 120 ms)) = 0.15625; r_ref
/// = max(r_ref, 1.15625 r_recv).
#[test]
fn accelerated_ramp_up_by_hand() {
    let mut n = nada();
    n.r_ref = 500e3;
    n.update_ref(0.0, 600e3, 0, 0.1, 0.1);
    assert!((n.reference_bps() - 1.15625 * 600e3).abs() < 1e-6);
    // Never down in ramp-up.
    n.update_ref(0.0, 100e3, 0, 0.1, 0.1);
    assert!((n.reference_bps() - 1.15625 * 600e3).abs() < 1e-6);
}

/// Gradual update at r_ref 1 Mbit/s, x 30 ms after 20 ms, delta 100 ms:
/// x_offset = 30 - 10 x 1.5e6 / 1e6 = 15 ms, x_diff = 10 ms; r_ref -=
/// 0.5 (0.1 / 0.5)(0.015 / 0.5) 1e6 + 0.5 x 2 (0.010 / 0.5) 1e6 = 3000 +
/// 20000.
#[test]
fn gradual_update_by_hand() {
    let mut n = nada();
    n.r_ref = 1e6;
    n.x_prev_ms = 20.0;
    n.update_ref(30.0, 0.0, 1, 0.1, 0.1);
    assert!(
        (n.reference_bps() - 977e3).abs() < 1e-6,
        "{}",
        n.reference_bps()
    );
    // At x = XREF RMAX / r_ref with no change, r_ref holds (equilibrium).
    let mut n = nada();
    n.r_ref = 1e6;
    n.x_prev_ms = 15.0;
    n.update_ref(15.0, 0.0, 1, 0.1, 0.1);
    assert!((n.reference_bps() - 1e6).abs() < 1e-6);
    // Within [RMIN, RMAX].
    n.update_ref(5000.0, 0.0, 1, 0.1, 0.1);
    assert_eq!(n.reference_bps(), 150e3);
}

/// 1000 bytes in the pacer: 8 x 1000 x 30 = 240 kbit/s of shaping, a
/// tenth of it off the encoder's target and onto the pacing rate.
#[test]
fn the_rate_shaping_buffer_splits_the_rates() {
    let mut n = nada();
    n.r_ref = 1e6;
    n.x_prev_ms = 15.0;
    n.on_send_queue(1000);
    n.update_ref(15.0, 0.0, 1, 0.1, 0.1);
    assert!((n.target_bps() - (1e6 - 24e3)).abs() < 1e-6);
    assert!((n.pacing_bps() - (1e6 + 24e3)).abs() < 1e-6);
}

pub(super) fn signal() -> Signal {
    signal_testing(false)
}

/// The signal with the RFC's constants, its ramp-up test on each
/// packet's delay (`rampup_raw`) or on d_tilde.
fn signal_testing(rampup_raw: bool) -> Signal {
    Signal::new(Consts {
        qth_ms: 50.0,
        lambda: 0.5,
        dloss_ms: 10.0,
        plrref: 0.01,
        dmark_ms: 2.0,
        pmrref: 0.01,
        alpha: 0.1,
        multiloss: 7.0,
        logwin: SimTime::from_millis(500),
        qeps_ms: 10.0,
        x_max_ms: 500.0,
        rampup_raw,
    })
}

fn at(ms: f64) -> SimTime {
    SimTime::from_millis_f64(ms)
}

/// Queuing delay against the least one-way delay, through a 15-tap
/// minimum filter: one late packet among steady ones does not count. With
/// the ramp-up's test on each packet's own delay (ns3-rmcat's), that
/// packet ends the ramp-up, and the signal is still the filtered delay.
#[test]
fn queuing_delay_is_the_minimum_of_the_last_fifteen() {
    for (raw, rmode) in [(false, 0), (true, 1)] {
        let mut s = signal_testing(raw);
        for i in 0..20 {
            let extra = if i == 19 { 40.0 } else { 5.0 };
            let base = if i == 0 { 50.0 } else { 50.0 + extra };
            s.on_received(at(10.0 * i as f64), at(10.0 * i as f64 + base), 1000, 0);
        }
        let x = s.update(at(300.0), 20, 0, 0);
        assert!((x - 5.0).abs() < 1e-9, "{x}");
        assert_eq!(
            s.rmode(),
            rmode,
            "under QEPS, no loss; raw delays tested: {raw}"
        );
    }
}

/// With raw delays, every packet's just under QEPS (9.9 ms over the
/// least) keeps the ramp-up.
#[test]
fn with_raw_delays_each_under_qeps_keeps_the_ramp_up() {
    let mut s = signal_testing(true);
    for i in 0..20 {
        let owd = if i == 0 { 50.0 } else { 59.9 };
        s.on_received(at(10.0 * i as f64), at(10.0 * i as f64 + owd), 1000, 0);
    }
    s.update(at(300.0), 20, 0, 0);
    assert_eq!(s.rmode(), 0);
}

/// Ramp-up needs every filtered delay in LOGWIN under QEPS (10 ms): a
/// queue of exactly 10 ms is not under it.
#[test]
fn a_queue_of_exactly_qeps_ends_the_ramp_up() {
    assert_eq!(queued(10.0, 15).rmode(), 1);
}

/// The spec's LOGWIN (500 ms) reaches the signal: of 20 packets of 1000
/// bytes arriving 50 ms apart, the 11 within 500 ms of the newest make
/// r_recv = 11 x 8000 / 0.5 s.
#[test]
fn the_receiving_rate_is_over_the_specs_logwin() {
    let mut n = nada();
    let rs: Vec<PacketResult> = (0..20)
        .map(|k| result(k, 50.0 * k as f64, Some(50.0 * k as f64 + 20.0), 0))
        .collect();
    n.on_packet_feedback(at(1000.0), &rs);
    assert!(
        (n.signal.recv_bps() - 176e3).abs() < 1e-6,
        "{}",
        n.signal.recv_bps()
    );
}

/// NADA's receiving half sends nothing of its own: the per-packet
/// feedback flow carries what its sender needs.
#[test]
fn nada_uses_the_shared_feedback() {
    let spec: NadaSpec = serde_json::from_str("{}").expect("defaults");
    assert!(!spec.own_feedback());
}

/// The least one-way delay 50 ms, then `n` packets 10 ms apart over a
/// queue of `queue_ms`.
fn queued(queue_ms: f64, n: usize) -> Signal {
    let mut s = signal();
    s.on_received(at(0.0), at(50.0), 1000, 0);
    for i in 1..=n {
        let sent = 10.0 * i as f64;
        s.on_received(at(sent), at(sent + 50.0 + queue_ms), 1000, 0);
    }
    s
}

/// A queue of 100 ms (15 packets), over QTH.
fn queue_of_100_ms() -> Signal {
    queued(100.0, 15)
}

/// After a loss, a queue over QTH is warped: d_hat = 50 exp(-0.5 (100 -
/// 50) / 50); the loss ratio (smoothed, alpha 0.1) adds DLOSS (p /
/// PLRREF)^2.
#[test]
fn a_queue_over_qth_after_loss_is_warped_and_loss_penalised() {
    let mut s = queue_of_100_ms();
    s.on_lost(at(200.0));
    let x = s.update(at(200.0), 15, 1, 0);
    let p = 0.1 * (1.0 / 16.0);
    let want = 50.0 * (-0.5f64).exp() + 10.0 * (p / 0.01f64).powi(2);
    assert!((x - want).abs() < 1e-9, "{x} {want}");
    assert_eq!(s.rmode(), 1);
}

#[test]
fn the_signal_is_capped() {
    let mut s = signal();
    // Every packet lost: p_loss 0.1 after one message, the loss term 10 x
    // (0.1 / 0.01)^2 = 1000 ms, capped at 500.
    s.on_lost(at(100.0));
    assert_eq!(s.update(at(100.0), 0, 10, 0), 500.0);
}

/// A queue over QTH with no loss is not warped: the signal is the
/// filtered queuing delay itself.
#[test]
fn without_a_loss_a_queue_over_qth_is_not_warped() {
    let mut s = queue_of_100_ms();
    assert!((s.update(at(200.0), 16, 0, 0) - 100.0).abs() < 1e-9);
}

/// The minimum filter has 15 taps: a queuing delay of 0 fifteen packets
/// back still counts, sixteen back it does not.
#[test]
fn the_minimum_filter_has_fifteen_taps() {
    let mut s = queued(20.0, 14);
    assert_eq!(s.update(at(200.0), 15, 0, 0), 0.0);
    s.on_received(at(150.0), at(220.0), 1000, 0);
    assert!((s.update(at(250.0), 1, 0, 0) - 20.0).abs() < 1e-9);
}

/// ECN marks: p_mark smoothed (alpha 0.1) over the packets received,
/// adding DMARK (p_mark / PMRREF)^2: 2 of 10 marked, then none of 10.
#[test]
fn marks_add_their_penalty() {
    let mut s = signal();
    for i in 0..10 {
        let ecn = if i < 2 { 3 } else { 1 };
        s.on_received(at(10.0 * i as f64), at(10.0 * i as f64 + 50.0), 1000, ecn);
    }
    let x = s.update(at(100.0), 10, 0, 2);
    assert!((s.p_mark - 0.02).abs() < 1e-15);
    assert!((x - 2.0 * (0.02f64 / 0.01).powi(2)).abs() < 1e-9, "{x}");
    s.update(at(200.0), 10, 0, 0);
    assert!((s.p_mark - 0.9 * 0.02).abs() < 1e-15);
    assert_eq!(s.rmode(), 1, "a mark within LOGWIN ends the ramp-up");
}

/// r_recv: the bytes received over LOGWIN (500 ms) ending at the newest
/// arrival.
#[test]
fn the_receiving_rate_is_over_logwin() {
    let mut s = signal();
    for i in 0..100 {
        s.on_received(at(10.0 * i as f64), at(10.0 * i as f64 + 50.0), 1250, 0);
    }
    s.update(at(1100.0), 100, 0, 0);
    // Arrivals from 540 to 1040 ms: 51 packets of 10,000 bits in 0.5 s.
    assert!(
        (s.recv_bps() - 51.0 * 10_000.0 / 0.5).abs() < 1e-6,
        "{}",
        s.recv_bps()
    );
}

fn result(seq: u64, sent_ms: f64, arrival_ms: Option<f64>, ecn: u8) -> PacketResult {
    PacketResult {
        seq,
        sent_at: at(sent_ms),
        bytes: 1000,
        received: arrival_ms.is_some(),
        arrival: arrival_ms.map(at),
        ecn,
    }
}

/// Through the controller: a message's received, lost and marked counts
/// reach the signal (p_loss over received and lost, p_mark over received),
/// and its values read them.
#[test]
fn feedback_reaches_the_signal() {
    let mut n = nada();
    n.start(at(0.0), usize::MAX);
    assert_eq!(n.rate_series(), vec![(at(0.0), 150e3)]);
    // 7 received (2 of them marked), 3 lost.
    let mut rs: Vec<PacketResult> = (0..7)
        .map(|i| {
            result(
                i,
                10.0 * i as f64,
                Some(10.0 * i as f64 + 50.0),
                if i < 2 { 3 } else { 1 },
            )
        })
        .collect();
    rs.extend((7..10).map(|i| result(i, 10.0 * i as f64, None, 0)));
    n.on_packet_feedback(at(150.0), &rs);
    assert!((n.value("loss_ratio").unwrap() - 0.1 * 0.3).abs() < 1e-15);
    assert!((n.signal.p_mark - 0.1 * 2.0 / 7.0).abs() < 1e-15);
    assert_eq!(n.value("rmode"), Some(1.0));
    let x = n.value("x_curr_ms").unwrap();
    let want = 10.0 * (0.03f64 / 0.01).powi(2) + 2.0 * (0.1 * 2.0 / 7.0 / 0.01f64).powi(2);
    assert!((x - want).abs() < 1e-9, "{x} {want}");
    assert_eq!(n.value("reference_bps"), Some(n.reference_bps()));
    assert_eq!(n.value("nonsense"), None);
}

/// Each packet sent is stamped with its number from 0 and spaced at the
/// pacing rate r_send.
#[test]
fn sends_are_numbered_and_paced_at_r_send() {
    let mut n = nada();
    let d = Departure {
        bytes: 1500,
        due: SimTime::ZERO,
        next_same_size: false,
    };
    let (a, next) = n.on_send(at(10.0), d);
    let (b, _) = n.on_send(at(10.0), d);
    assert_eq!((a.seq, b.seq, a.sent_at), (0, 1, at(10.0)));
    assert_eq!(next, at(10.0) + SimTime::from_secs_f64(12_000.0 / 150e3));
    assert_eq!(n.packets(), 2);
}

#[test]
fn bad_fields_are_named() {
    let s: NadaSpec = serde_json::from_value(
        serde_json::json!({"tau_ms": 0, "kappa": -1, "alpha": 1.5, "rmin_bps": 2e6}),
    )
    .expect("spec");
    let mut c = Checker::default();
    let media = CcMedia {
        packet_feedback: false,
        pacer: true,
        ..CcMedia::default()
    };
    s.validate("cc", media, &mut c);
    let text: String = c.errs.iter().map(|e| format!("{e}\n")).collect();
    for want in [
        "cc.tau_ms",
        "cc.kappa",
        "cc.alpha",
        "cc.rmin_bps",
        "feedback",
    ] {
        assert!(text.contains(want), "{want} not in {text}");
    }
    let ok: NadaSpec = serde_json::from_str("{}").expect("defaults");
    let mut c = Checker::default();
    ok.validate(
        "cc",
        CcMedia {
            packet_feedback: true,
            ..media
        },
        &mut c,
    );
    assert!(c.errs.is_empty());
}

/// The first message's update takes delta as the default interval
/// (DELTA, 100 ms): there is no earlier message to measure it from. The
/// same update by hand with delta 0.1 s gives the same reference rate.
/// NADA asks for no timer on an RTCP feedback payload: it takes the
/// per-packet results only.
#[test]
fn the_first_update_takes_the_default_interval() {
    let mut n = nada();
    n.start(at(0.0), 0);
    n.r_ref = 1e6;
    let rs: Vec<PacketResult> = (0..10)
        .map(|i| {
            let arrival = (i < 9).then_some(10.0 * i as f64 + 50.0);
            result(i, 10.0 * i as f64, arrival, 1)
        })
        .collect();
    n.on_packet_feedback(at(150.0), &rs);
    assert_eq!(n.value("rmode"), Some(1.0));
    let x = n.value("x_curr_ms").unwrap();
    let rtt_s = n.rtt.get().map_or(0.0, |r| r.as_secs_f64());
    let mut m = nada();
    m.r_ref = 1e6;
    m.update_ref(x, n.signal.recv_bps(), 1, 0.1, rtt_s);
    let want = m.reference_bps();
    assert!(want > 150e3 && want < 1e6, "{want}");
    assert_eq!(n.reference_bps(), want);
    assert_eq!(n.on_feedback(at(150.0), &Payload::NONE, at(200.0)), None);
}

/// A packet reported received without an arrival time (RFC 8888's
/// over-range offset) counts as received: 1 lost of 10 gives p_loss
/// 0.1 x 1 / 10.
#[test]
fn received_without_a_time_counts_as_received() {
    let mut n = nada();
    n.start(at(0.0), 0);
    let mut rs: Vec<PacketResult> = (0..8)
        .map(|i| result(i, 10.0 * i as f64, Some(10.0 * i as f64 + 50.0), 1))
        .collect();
    rs.push(PacketResult {
        received: true,
        ..result(8, 80.0, None, 0)
    });
    rs.push(result(9, 90.0, None, 0));
    n.on_packet_feedback(at(150.0), &rs);
    assert!(
        (n.signal.p_loss - 0.01).abs() < 1e-15,
        "{}",
        n.signal.p_loss
    );
}

/// The loss ratio is smoothed with ALPHA (0.1): 1 lost of 10, twice,
/// gives 0.01 and then 0.1 x 0.1 + 0.9 x 0.01 = 0.019.
#[test]
fn the_loss_ratio_is_smoothed() {
    let mut s = signal();
    s.update(at(0.0), 9, 1, 0);
    assert!((s.p_loss - 0.01).abs() < 1e-15);
    s.update(at(100.0), 9, 1, 0);
    assert!((s.p_loss - 0.019).abs() < 1e-15, "{}", s.p_loss);
}
