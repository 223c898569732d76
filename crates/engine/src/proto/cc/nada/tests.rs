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

fn signal() -> Signal {
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
    })
}

fn at(ms: f64) -> SimTime {
    SimTime::from_millis_f64(ms)
}

/// Queuing delay against the least one-way delay, through a 15-tap
/// minimum filter: one late packet among steady ones does not count.
#[test]
fn queuing_delay_is_the_minimum_of_the_last_fifteen() {
    let mut s = signal();
    for i in 0..20 {
        let extra = if i == 19 { 40.0 } else { 5.0 };
        let base = if i == 0 { 50.0 } else { 50.0 + extra };
        s.on_received(at(10.0 * i as f64), at(10.0 * i as f64 + base), 1000, 0);
    }
    let x = s.update(at(300.0), 20, 0, 0);
    assert!((x - 5.0).abs() < 1e-9, "{x}");
    assert_eq!(s.rmode(), 0, "under QEPS, no loss");
}

/// After a loss, a queue over QTH is warped: d_hat = 50 exp(-0.5 (100 -
/// 50) / 50); the loss ratio (smoothed, alpha 0.1) adds DLOSS (p /
/// PLRREF)^2.
#[test]
fn a_queue_over_qth_after_loss_is_warped_and_loss_penalised() {
    let mut s = signal();
    s.on_received(at(0.0), at(50.0), 1000, 0);
    for i in 1..16 {
        s.on_received(at(10.0 * i as f64), at(10.0 * i as f64 + 150.0), 1000, 0);
    }
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
