//! Loss models against their formulas, sized to detect a 5% error: each
//! tolerance below is 4.5 standard deviations of the estimate (with the
//! variance inflated by the correlation where losses are correlated) and
//! smaller than 5% of the expected value.

use super::*;
use crate::sim::RngStreams;

fn pkt(flow: u32, seq: u64, size: u32) -> Packet {
    crate::net::packet::test_packet(flow, seq, size)
}

fn rng(name: &str) -> crate::sim::SimRng {
    RngStreams::new(11, 0).stream(name)
}

/// Losses of `n` packets of `size` bytes.
fn losses(m: &mut dyn LossModel, n: u64, size: u32) -> Vec<bool> {
    (0..n)
        .map(|i| m.is_lost(&pkt(0, i, size), SimTime(i)))
        .collect()
}

/// |count - n p| is within 4.5 binomial standard deviations, and that
/// bound is below 5% of n p (so a 5% error in the rate would fail).
fn assert_rate(lost: &[bool], p: f64) {
    let n = lost.len() as f64;
    let k = lost.iter().filter(|&&x| x).count() as f64;
    let tol = 4.5 * (n * p * (1.0 - p)).sqrt();
    assert!(tol < 0.05 * n * p, "test too small to see a 5% error");
    assert!(
        (k - n * p).abs() <= tol,
        "lost {k}, expected {} +- {tol}",
        n * p
    );
}

#[test]
fn packet_loss_rate() {
    let mut m = PacketLossRate::new(0.05, rng("p"));
    assert_rate(&losses(&mut m, 1_000_000, 1000), 0.05);
}

#[test]
fn byte_error_rate_depends_on_the_packet_size() {
    for (size, seed) in [(1000u32, "b1"), (100, "b2")] {
        let mut m = ByteErrorRate::new(1e-4, rng(seed));
        let p = 1.0 - (1.0 - 1e-4f64).powi(size as i32);
        assert_rate(&losses(&mut m, 1_000_000, size), p);
    }
}

#[test]
fn bit_error_rate_counts_eight_bits_a_byte() {
    let mut m = BitErrorRate::new(1e-5, rng("bit"));
    let p = 1.0 - (1.0 - 1e-5f64).powi(8000);
    assert_rate(&losses(&mut m, 1_000_000, 1000), p);
}

/// Stationary loss and the probability that two consecutive packets are
/// both lost, from the chain (state step first, then the loss draw):
/// q11 = sum over s, s' of pi_s h_s P(s -> s') h_s'.
#[test]
fn gilbert_elliott_stationary_loss_and_lag_one_joint_loss() {
    let (gb, bg, hg, hb) = (0.01, 0.25, 0.01, 0.8);
    let mut m = GilbertElliott::new(gb, bg, hg, hb, rng("ge"));
    let n = 10_000_000u64;
    let lost = losses(&mut m, n, 1000);
    let (pi_b, pi_g) = (gb / (gb + bg), bg / (gb + bg));
    let mean = pi_g * hg + pi_b * hb;
    let q11 = pi_g * hg * ((1.0 - gb) * hg + gb * hb) + pi_b * hb * (bg * hg + (1.0 - bg) * hb);
    // Variance of a sum of losses: n (Var L + 2 sum_k Cov(L_t, L_t+k)),
    // Cov at lag k = (hb - hg)^2 pi_g pi_b r^k with r = 1 - gb - bg.
    let r = 1.0 - gb - bg;
    let cov_sum = (hb - hg).powi(2) * pi_g * pi_b * r / (1.0 - r);
    let nf = n as f64;
    let k = lost.iter().filter(|&&x| x).count() as f64;
    let tol = 4.5 * (nf * (mean * (1.0 - mean) + 2.0 * cov_sum)).sqrt();
    assert!(tol < 0.05 * nf * mean);
    assert!(
        (k - nf * mean).abs() <= tol,
        "lost {k}, expected {}",
        nf * mean
    );
    // Pairs of consecutive losses; the pair indicators are correlated like
    // the states: inflate their variance by (1 + r) / (1 - r).
    let pairs = lost.windows(2).filter(|w| w[0] && w[1]).count() as f64;
    let tol = 4.5 * (nf * q11 * (1.0 - q11) * (1.0 + r) / (1.0 - r)).sqrt();
    assert!(tol < 0.05 * nf * q11);
    assert!(
        (pairs - nf * q11).abs() <= tol,
        "pairs {pairs}, expected {}",
        nf * q11
    );
}

#[test]
fn gilbert_elliott_with_certain_transitions_alternates() {
    // p_gb = p_bg = 1: the state flips every packet (first step: Good ->
    // Bad), and with h_bad = 1, h_good = 0 every other packet is lost.
    let mut m = GilbertElliott::new(1.0, 1.0, 0.0, 1.0, rng("alt"));
    let lost = losses(&mut m, 6, 100);
    assert_eq!(lost, [true, false, true, false, true, false]);
}

#[test]
fn explicit_losses_by_ordinal_flow_sequence_and_window() {
    let ms = SimTime::from_millis;
    let mut m = ExplicitLoss::new(vec![0, 3], vec![(7, 42)], vec![(ms(10), ms(20))]);
    let at = |m: &mut ExplicitLoss, flow, seq, t| m.is_lost(&pkt(flow, seq, 100), t);
    assert!(at(&mut m, 1, 100, ms(0)), "ordinal 0");
    assert!(!at(&mut m, 1, 101, ms(1)));
    assert!(!at(&mut m, 1, 102, ms(2)));
    assert!(at(&mut m, 1, 103, ms(3)), "ordinal 3");
    assert!(at(&mut m, 7, 42, ms(4)), "flow 7, seq 42");
    assert!(!at(&mut m, 7, 43, ms(5)));
    assert!(!at(&mut m, 6, 42, ms(6)), "seq 42 of another flow");
    assert!(
        !at(&mut m, 1, 0, ms(10) - SimTime(1)),
        "just before the window"
    );
    assert!(at(&mut m, 1, 0, ms(10)), "window start is inside");
    assert!(at(&mut m, 1, 0, ms(20) - SimTime(1)));
    assert!(!at(&mut m, 1, 0, ms(20)), "window end is outside");
}
