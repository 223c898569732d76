//! The arrival-time filter of draft-ietf-rmcat-gcc-02 (5.3): a scalar
//! Kalman filter whose state m_hat is the queuing-delay gradient, measured
//! by each inter-group delay variation d(i):
//!
//! - z(i) = d(i) - m_hat(i-1)
//! - var_v_hat(i) = max(alpha var_v_hat(i-1) + (1 - alpha) z(i)^2, 1),
//!   alpha = (1 - chi)^(30 / (1000 f_max)), f_max = 1 / the shortest send
//!   spacing of the last K groups (ms)
//! - k(i) = (e(i-1) + q) / (var_v_hat(i) + e(i-1) + q)
//! - m_hat(i) = m_hat(i-1) + z(i) k(i)
//! - e(i) = (1 - k(i)) (e(i-1) + q)
//!
//! z(i) enters the noise estimate clamped to 3 sqrt(var_v_hat(i-1)), so
//! one outlier does not inflate it (the draft's outlier rule). The draft
//! gives no starting var_v_hat: it starts at its floor, 1. K is 60 groups
//! (libwebrtc's history of frame periods; the draft leaves it open).

use std::collections::VecDeque;

/// Groups whose send spacing sets f_max.
pub const K_GROUPS: usize = 60;

pub struct Kalman {
    q: f64,
    chi: f64,
    m_hat: f64,
    e: f64,
    var_v: f64,
    spacings_ms: VecDeque<f64>,
}

impl Kalman {
    pub fn new(q: f64, chi: f64, e0: f64) -> Self {
        Kalman {
            q,
            chi,
            m_hat: 0.0,
            e: e0,
            var_v: 1.0,
            spacings_ms: VecDeque::with_capacity(K_GROUPS + 1),
        }
    }

    /// Takes d(i) (ms) of groups sent `send_ms` apart; returns m_hat(i).
    pub fn update(&mut self, d_ms: f64, send_ms: f64) -> f64 {
        self.spacings_ms.push_back(send_ms.max(0.0));
        if self.spacings_ms.len() > K_GROUPS {
            self.spacings_ms.pop_front();
        }
        let shortest_ms = self
            .spacings_ms
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let alpha = (1.0 - self.chi).powf(30.0 * shortest_ms / 1000.0);
        let z = d_ms - self.m_hat;
        let bound = 3.0 * self.var_v.sqrt();
        let zc = z.clamp(-bound, bound);
        self.var_v = (alpha * self.var_v + (1.0 - alpha) * zc * zc).max(1.0);
        let k = (self.e + self.q) / (self.var_v + self.e + self.q);
        self.m_hat += z * k;
        self.e = (1.0 - k) * (self.e + self.q);
        self.m_hat
    }

    pub fn estimate(&self) -> f64 {
        self.m_hat
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One step by hand (q 1e-3, chi 0.01, e0 0.1, groups 10 ms apart):
    /// alpha = 0.99^0.3; d = 2: z = 2, clamped to 3 (no change); var_v =
    /// alpha + (1 - alpha) 4; k = 0.101 / (var_v + 0.101); m = 2 k.
    #[test]
    fn one_step_by_hand() {
        let mut f = Kalman::new(1e-3, 0.01, 0.1);
        let m = f.update(2.0, 10.0);
        let alpha: f64 = 0.99f64.powf(0.3);
        let var_v = alpha + (1.0 - alpha) * 4.0;
        let k = 0.101 / (var_v + 0.101);
        assert!((m - 2.0 * k).abs() < 1e-15, "{m}");
        assert!((f.e - (1.0 - k) * 0.101).abs() < 1e-15);
    }

    /// A second step by hand, from the first's var_v (above its floor):
    /// var_v = alpha var_v(1) + (1 - alpha) z^2 with z = d - m_hat(1).
    #[test]
    fn two_steps_by_hand() {
        let mut f = Kalman::new(1e-3, 0.01, 0.1);
        let m1 = f.update(2.0, 10.0);
        let alpha: f64 = 0.99f64.powf(0.3);
        let var1 = alpha + (1.0 - alpha) * 4.0;
        let e1 = (1.0 - 0.101 / (var1 + 0.101)) * 0.101;
        let m2 = f.update(1.0, 10.0);
        let z = 1.0 - m1;
        let var2 = alpha * var1 + (1.0 - alpha) * z * z;
        assert!((f.var_v - var2).abs() < 1e-15, "{}", f.var_v);
        let k = (e1 + 1e-3) / (var2 + e1 + 1e-3);
        assert!((m2 - (m1 + z * k)).abs() < 1e-15);
        assert_eq!(f.estimate(), m2);
    }

    /// f_max comes from the last 60 groups' spacings: a short spacing
    /// 60 groups back still counts, 61 back it does not.
    #[test]
    fn the_shortest_spacing_of_the_last_sixty_groups() {
        let mut f = Kalman::new(1e-3, 0.01, 0.1);
        f.update(0.0, 1.0);
        for _ in 0..K_GROUPS - 1 {
            f.update(0.0, 10.0);
        }
        assert_eq!(f.spacings_ms.len(), K_GROUPS);
        assert_eq!(f.spacings_ms.front(), Some(&1.0));
        f.update(0.0, 10.0);
        assert_eq!(f.spacings_ms.len(), K_GROUPS);
        assert!(f.spacings_ms.iter().all(|&s| s == 10.0));
    }

    /// The outlier bound is 3 sqrt(var_v): with var_v 4, a deviation of
    /// 10 enters the noise estimate as 6.
    #[test]
    fn the_outlier_bound_is_three_standard_deviations() {
        let mut f = Kalman::new(1e-3, 0.01, 0.1);
        f.var_v = 4.0;
        f.update(10.0, 10.0);
        let alpha: f64 = 0.99f64.powf(0.3);
        assert!((f.var_v - (alpha * 4.0 + (1.0 - alpha) * 36.0)).abs() < 1e-12);
    }

    /// A constant gradient is tracked: the estimate converges to it.
    #[test]
    fn a_constant_gradient_is_tracked() {
        let mut f = Kalman::new(1e-3, 0.01, 0.1);
        let mut m = 0.0;
        for _ in 0..2000 {
            m = f.update(1.5, 10.0);
        }
        assert!((m - 1.5).abs() < 1e-3, "{m}");
    }

    /// An outlier moves the estimate by the gain times its size, but the
    /// noise estimate only by the clamped value.
    #[test]
    fn an_outlier_enters_the_noise_estimate_clamped() {
        let mut f = Kalman::new(1e-3, 0.01, 0.1);
        f.update(0.0, 10.0);
        let var_before = f.var_v;
        f.update(100.0, 10.0);
        let alpha: f64 = 0.99f64.powf(0.3);
        let clamped = 3.0 * var_before.sqrt();
        let want = (alpha * var_before + (1.0 - alpha) * clamped * clamped).max(1.0);
        assert!((f.var_v - want).abs() < 1e-12);
    }
}
