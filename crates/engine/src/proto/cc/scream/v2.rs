//! SCReAMv2 (draft-johansson-ccwg-rfc8298bis-screamv2): a reference
//! window cut by loss (BETA_LOSS), classic ECN (BETA_ECN), L4S marking in
//! proportion to l4s_alpha, or a "virtual" L4S mark when the averaged
//! queuing delay passes half its target; grown by about one MSS per RTT
//! plus a multiplicative part that returns slowly after congestion; the
//! target bitrate is 8 ref_wnd / s_rtt; packets paced at the target times
//! PACKET_PACING_HEADROOM.

use super::compete::QdelayTarget;
use super::flight::Acked;
use super::{Measures, Params};
use crate::sim::SimTime;

/// How long after the last CE mark L4S counts as active (the draft's
/// l4s_active: "L4S is enabled and packets are indeed marked").
const L4S_ACTIVE_FOR: SimTime = SimTime::from_secs(10);

pub struct V2 {
    pub ref_wnd: f64,
    ref_wnd_i: f64,
    pub delay_target: QdelayTarget,
    pub qdelay_avg_s: f64,
    pub l4s_alpha: f64,
    packets_delivered: u64,
    packets_marked: u64,
    last_alpha_update: SimTime,
    last_qdelay_avg_update: SimTime,
    last_congestion: SimTime,
    last_ref_wnd_i_update: SimTime,
    last_ce: Option<SimTime>,
    bytes_newly_acked: f64,
    bytes_newly_acked_ce: f64,
    pub target_bps: f64,
}

impl V2 {
    pub fn new(s: &Params) -> Self {
        V2 {
            ref_wnd: s.min_cwnd_bytes,
            ref_wnd_i: 1.0,
            delay_target: QdelayTarget::new(
                s.qdelay_target_lo_ms / 1e3,
                s.qdelay_target_hi_ms / 1e3,
            ),
            qdelay_avg_s: 0.0,
            l4s_alpha: 0.0,
            packets_delivered: 0,
            packets_marked: 0,
            last_alpha_update: SimTime::ZERO,
            last_qdelay_avg_update: SimTime::ZERO,
            last_congestion: SimTime::ZERO,
            last_ref_wnd_i_update: SimTime::ZERO,
            last_ce: None,
            bytes_newly_acked: 0.0,
            bytes_newly_acked_ce: 0.0,
            target_bps: s.start_bps,
        }
    }

    fn l4s_active(&self, s: &Params, now: SimTime) -> bool {
        s.l4s
            && self
                .last_ce
                .is_some_and(|t| now.saturating_sub(t) < L4S_ACTIVE_FOR)
    }

    /// One feedback message: the averages, then the reference window's
    /// cut (at most once per min(VIRTUAL_RTT, s_rtt)) or growth, then the
    /// target bitrate.
    pub fn on_feedback(&mut self, s: &Params, m: &Measures, a: &Acked) {
        let now = m.now;
        let since = |t: SimTime| now.saturating_sub(t).as_secs_f64();
        let mss = m.mss;
        let ref_wnd_ratio = mss / self.ref_wnd;
        // Capped at 1, as the reference code does: the draft lets bytes in
        // flight reach REF_WND_OVERHEAD x ref_wnd, and an uncapped ratio
        // would hold the target at 1 / 1.5 of the window per RTT.
        let bif_ratio = (m.bytes_in_flight_before as f64 / self.ref_wnd).min(1.0);
        if a.packets_ce > 0 {
            self.last_ce = Some(now);
        }
        self.packets_delivered += a.packets_acked;
        self.packets_marked += a.packets_ce;
        if since(self.last_alpha_update) >= m.s_rtt_s.min(0.01) && self.packets_delivered > 0 {
            let fraction = self.packets_marked as f64 / self.packets_delivered as f64;
            self.l4s_alpha = s.l4s_avg_g * fraction + (1.0 - s.l4s_avg_g) * self.l4s_alpha;
            self.last_alpha_update = now;
            self.packets_delivered = 0;
            self.packets_marked = 0;
        }
        if since(self.last_qdelay_avg_update) >= m.s_rtt_s {
            // Slow attack, fast decay.
            self.qdelay_avg_s = if m.qdelay_s < self.qdelay_avg_s {
                m.qdelay_s
            } else {
                s.qdelay_avg_g * m.qdelay_s + (1.0 - s.qdelay_avg_g) * self.qdelay_avg_s
            };
            self.last_qdelay_avg_update = now;
        }
        self.bytes_newly_acked += a.bytes_newly_acked as f64;
        self.bytes_newly_acked_ce += a.bytes_newly_acked_ce as f64;

        let l4s_active = self.l4s_active(s, now);
        let (mut is_loss, mut is_ce, mut virtual_alpha) = (false, false, None);
        if since(self.last_congestion) >= (s.virtual_rtt_ms / 1e3).min(m.s_rtt_s) {
            is_loss = a.lost > 0;
            is_ce = a.packets_ce > 0;
            let half = self.delay_target.target_s / 2.0;
            if m.qdelay_s > half {
                let lim = 2.0 / self.target_bps * mss * 8.0 / m.s_rtt_s.max(1e-6);
                if self.l4s_alpha < lim || !l4s_active {
                    let av = ((self.qdelay_avg_s - half) / half).clamp(0.0, 1.0);
                    virtual_alpha = Some(av);
                }
            }
        }
        let congested = is_loss || is_ce || virtual_alpha.is_some_and(|av| av > 0.0);
        if congested && since(self.last_ref_wnd_i_update) > 0.25 {
            self.last_ref_wnd_i_update = now;
            self.ref_wnd_i = self.ref_wnd;
        }
        if is_loss {
            self.ref_wnd *= s.beta_loss;
        }
        // A cut may come every min(VIRTUAL_RTT, s_rtt), several per RTT
        // when feedback is frequent; each scalable cut (L4S or virtual) is
        // scaled by the share of an RTT since the last, so that congestion
        // that lasts costs one whole cut per RTT whatever the feedback
        // interval (the reference code scales by 30 ms / s_rtt).
        let share = if m.s_rtt_s > 0.0 {
            (since(self.last_congestion) / m.s_rtt_s).min(1.0)
        } else {
            1.0
        };
        if is_ce {
            if s.l4s {
                let mut backoff =
                    share * self.l4s_alpha / 2.0 * (1.0 - ref_wnd_ratio * 2.0).max(0.8);
                if since(self.last_congestion) > 5.0 {
                    // Long uncongested (media limited): the window may have
                    // grown far past what is in flight.
                    self.ref_wnd = self
                        .ref_wnd
                        .min(m.max_bytes_in_flight_prev as f64)
                        .max(s.min_cwnd_bytes);
                    backoff = backoff.max(0.25);
                    self.l4s_alpha = 0.25;
                }
                self.ref_wnd *= 1.0 - backoff;
            } else {
                self.ref_wnd *= s.beta_ecn;
            }
        }
        if let Some(av) = virtual_alpha {
            self.ref_wnd *= 1.0 - share * av / 2.0;
        }
        self.ref_wnd = self.ref_wnd.max(s.min_cwnd_bytes);
        if congested {
            self.last_congestion = now;
        } else {
            self.grow(s, m);
        }
        self.bytes_newly_acked = 0.0;
        self.bytes_newly_acked_ce = 0.0;
        self.update_target(s, m, bif_ratio, l4s_active);
    }

    /// The reference window's increase (the draft's "reference window
    /// increase" block).
    fn grow(&mut self, s: &Params, m: &Measures) {
        let mss = m.mss;
        let ref_wnd_ratio = mss / self.ref_wnd;
        let post = (m.now.saturating_sub(self.last_congestion).as_secs_f64()
            / s.post_congestion_delay_s)
            .clamp(0.0, 1.0);
        let scale_factor = 1.0 + s.mul_increase_factor * self.ref_wnd / mss;
        let mut increment = (self.bytes_newly_acked - self.bytes_newly_acked_ce) * ref_wnd_ratio;
        let short = (m.s_rtt_s / (s.virtual_rtt_ms / 1e3)).min(1.0);
        increment *= short * short;
        let low = if self.l4s_active(s, m.now) {
            (0.02 / ref_wnd_ratio).clamp(0.1, 1.0)
        } else {
            0.1
        };
        let scl = ((self.ref_wnd - self.ref_wnd_i) / self.ref_wnd_i * 4.0)
            .powi(2)
            .clamp(low, 1.0);
        increment *= scl;
        let mut mul = scale_factor;
        if mul > 1.0 {
            mul = 1.0 + (mul - 1.0) * post * scl;
        }
        increment *= mul;
        let max_allowed = mss
            + (m.max_bytes_in_flight_rtt.max(m.max_bytes_in_flight_prev) as f64)
                * s.bytes_in_flight_head_room;
        if self.ref_wnd + increment <= max_allowed {
            self.ref_wnd += increment;
        }
    }

    /// The media rate control: 8 ref_wnd / s_rtt, held back while bytes
    /// in flight run over the window (without L4S) and when the window is
    /// only a few MSS.
    fn update_target(&mut self, s: &Params, m: &Measures, bif_ratio: f64, l4s_active: bool) {
        if m.s_rtt_s <= 0.0 {
            return;
        }
        let mut tmp = 1.0;
        if !l4s_active && bif_ratio > s.bytes_in_flight_limit {
            tmp /= s
                .bytes_in_flight_limit_compensation
                .min(bif_ratio / s.bytes_in_flight_limit);
        }
        let ref_wnd_ratio = m.mss / self.ref_wnd;
        tmp *= 1.0 - (ref_wnd_ratio - 0.1).clamp(0.0, 0.8);
        self.target_bps = (tmp * 8.0 * self.ref_wnd / m.s_rtt_s).clamp(s.min_bps, s.max_bps);
    }

    /// send_wnd = ref_wnd x REF_WND_OVERHEAD - bytes in flight (the
    /// draft's rel_framesize_high taken as 1).
    pub fn send_window(&self, s: &Params, m: &Measures) -> u64 {
        (self.ref_wnd * s.ref_wnd_overhead - m.bytes_in_flight as f64).max(0.0) as u64
    }

    pub fn pacing_bps(&self, s: &Params) -> f64 {
        self.target_bps.max(s.rate_pace_min_bps) * s.packet_pacing_headroom
    }
}

#[cfg(test)]
mod tests {
    //! SCReAMv2's rules, each step by hand with the draft's constants
    //! (BETA_LOSS 0.7, BETA_ECN 0.8, L4S_AVG_G 1/16, QDELAY_AVG_G 1/4,
    //! VIRTUAL_RTT 25 ms, QDELAY_TARGET_LO 60 ms).
    use super::super::tests::{acked, measures, ms, spec};
    use super::*;

    fn marked(packets: u64, ce: u64) -> Acked {
        Acked {
            packets_acked: packets,
            packets_ce: ce,
            bytes_newly_acked: packets * 1000,
            bytes_newly_acked_ce: ce * 1000,
            bytes_received: packets * 1000,
            ..Acked::default()
        }
    }

    fn at(m: &Measures, now: SimTime) -> Measures {
        Measures { now, ..*m }
    }

    /// l4s_alpha = g x marked fraction + (1 - g) l4s_alpha, the fraction
    /// over the packets since the last update; L4S is active for 10 s
    /// after the last mark.
    #[test]
    fn the_marked_fraction_and_l4s_active() {
        let p = spec(serde_json::json!({"version": "v2", "l4s": true}));
        let mut c = V2::new(&p);
        c.ref_wnd = 20_000.0;
        let m = measures(0.0, 10_000);
        c.on_feedback(&p, &at(&m, ms(500)), &marked(10, 0));
        assert_eq!((c.l4s_alpha, c.last_ce), (0.0, None));
        assert!(!c.l4s_active(&p, ms(500)));
        c.on_feedback(&p, &at(&m, ms(1000)), &marked(10, 4));
        assert!((c.l4s_alpha - 0.4 / 16.0).abs() < 1e-15, "{}", c.l4s_alpha);
        assert!(c.l4s_active(&p, SimTime::from_nanos(10_999_999_999)));
        assert!(!c.l4s_active(&p, ms(11_000)));
        // Without l4s, marks are classic ECN: never active.
        let q = spec(serde_json::json!({"version": "v2"}));
        assert!(!c.l4s_active(&q, ms(1000)));
    }

    /// The averaged queuing delay, once per RTT: slow attack (x 1/4),
    /// fast decay (straight to a lower sample).
    #[test]
    fn the_queuing_delay_average_attacks_slowly_and_decays_fast() {
        let p = spec(serde_json::json!({"version": "v2"}));
        let mut c = V2::new(&p);
        c.ref_wnd = 20_000.0;
        let m = measures(0.04, 10_000);
        c.on_feedback(&p, &at(&m, ms(1000)), &acked(0, 0));
        assert!((c.qdelay_avg_s - 0.01).abs() < 1e-15);
        // Within the RTT (100 ms): no update.
        c.on_feedback(&p, &at(&m, ms(1050)), &acked(0, 0));
        assert!((c.qdelay_avg_s - 0.01).abs() < 1e-15);
        c.on_feedback(&p, &at(&m, ms(1100)), &acked(0, 0));
        assert!((c.qdelay_avg_s - (0.01 + 0.25 * 0.03)).abs() < 1e-15);
        let low = measures(0.004, 10_000);
        c.on_feedback(&p, &at(&low, ms(1200)), &acked(0, 0));
        assert_eq!(c.qdelay_avg_s, 0.004);
    }

    /// A 20,000-byte window at 1 Mbit/s, L4S active (a mark at 9 s) with
    /// `alpha`, and an averaged queuing delay of 45 ms that the message at
    /// 10 s does not update.
    fn l4s_active_at_45_ms(p: &Params, alpha: f64) -> V2 {
        let mut c = V2::new(p);
        c.ref_wnd = 20_000.0;
        c.target_bps = 1e6;
        c.last_ce = Some(ms(9000));
        c.l4s_alpha = alpha;
        c.qdelay_avg_s = 0.045;
        c.last_qdelay_avg_update = ms(10_000);
        c
    }

    /// Over half the delay target, a virtual mark cuts the window by
    /// av / 2, av = (qdelay_avg - half) / half; with L4S active it does
    /// so only while l4s_alpha is under 2 MSS x 8 / (target x s_rtt)
    /// (0.16 at 1 Mbit/s, 1000 bytes, 100 ms).
    #[test]
    fn virtual_marks_only_while_l4s_marks_too_little() {
        let p = spec(serde_json::json!({"version": "v2", "l4s": true}));
        for (alpha, cut) in [(0.5, false), (0.1, true)] {
            let mut c = l4s_active_at_45_ms(&p, alpha);
            let m = at(&measures(0.045, 10_000), ms(10_000));
            c.on_feedback(&p, &m, &acked(0, 0));
            // av = (0.045 - 0.03) / 0.03 = 0.5: a quarter off.
            let want = if cut { 15_000.0 } else { 20_000.0 };
            assert!(
                (c.ref_wnd - want).abs() < 1e-9,
                "alpha {alpha}: {}",
                c.ref_wnd
            );
            // A virtual mark is congestion: the last congestion is now.
            assert_eq!(c.last_congestion == m.now, cut, "alpha {alpha}");
        }
    }

    /// The virtual mark's edges: a queuing delay of exactly half the
    /// target is not over it, and with L4S active an l4s_alpha exactly at
    /// its limit is not under it; neither cuts.
    #[test]
    fn no_virtual_mark_at_its_edges() {
        let p = spec(serde_json::json!({"version": "v2", "l4s": true}));
        let mut c = l4s_active_at_45_ms(&p, 0.1);
        let half = c.delay_target.target_s / 2.0;
        c.on_feedback(&p, &at(&measures(half, 10_000), ms(10_000)), &acked(0, 0));
        assert_eq!(c.ref_wnd, 20_000.0);
        let limit = 2.0 / 1e6 * 1000.0 * 8.0 / 0.1;
        let mut c = l4s_active_at_45_ms(&p, limit);
        c.on_feedback(&p, &at(&measures(0.045, 10_000), ms(10_000)), &acked(0, 0));
        assert_eq!(c.ref_wnd, 20_000.0);
    }

    /// An L4S mark more than 5 s after the last congestion: the window
    /// first drops to the most in flight in the previous RTTs, the cut is
    /// at least a quarter, and l4s_alpha restarts at 0.25.
    #[test]
    fn an_l4s_mark_after_a_long_uncongested_spell() {
        let p = spec(serde_json::json!({"version": "v2", "l4s": true}));
        let mut c = V2::new(&p);
        c.ref_wnd = 40_000.0;
        let mut m = at(&measures(0.0, 10_000), ms(10_000));
        m.max_bytes_in_flight_prev = 10_000;
        c.on_feedback(&p, &m, &marked(10, 5));
        assert!((c.ref_wnd - 7500.0).abs() < 1e-9, "{}", c.ref_wnd);
        assert_eq!(c.l4s_alpha, 0.25);
    }

    /// Exactly 5 s after the last congestion is not yet "more than 5 s":
    /// an L4S mark then cuts by share x l4s_alpha / 2 only (share 1,
    /// alpha 1/16 x 5/10 = 1/32, the factor 0.95: 1 - 1/64 x 0.95), and
    /// l4s_alpha is not restarted.
    #[test]
    fn an_l4s_mark_exactly_5_s_after_congestion() {
        let p = spec(serde_json::json!({"version": "v2", "l4s": true}));
        let mut c = V2::new(&p);
        c.ref_wnd = 40_000.0;
        c.last_congestion = ms(5000);
        let mut m = at(&measures(0.0, 10_000), ms(10_000));
        m.max_bytes_in_flight_prev = 10_000;
        c.on_feedback(&p, &m, &marked(10, 5));
        assert_eq!(c.l4s_alpha, 1.0 / 32.0);
        let want = 40_000.0 * (1.0 - 1.0 / 64.0 * 0.95);
        assert!((c.ref_wnd - want).abs() < 1e-9, "{}", c.ref_wnd);
    }

    /// A virtual mark of 0 (the delay over half the target, its average
    /// not) is no congestion: the window grows and the last congestion
    /// stays where it was.
    #[test]
    fn a_virtual_mark_of_zero_is_no_congestion() {
        let p = spec(serde_json::json!({"version": "v2"}));
        let mut c = V2::new(&p);
        c.ref_wnd = 20_000.0;
        c.target_bps = 1e6;
        c.last_qdelay_avg_update = ms(10_000);
        let m = at(&measures(0.045, 10_000), ms(10_000));
        c.on_feedback(&p, &m, &acked(1000, 0));
        assert_eq!(c.last_congestion, SimTime::ZERO);
        assert!(c.ref_wnd > 20_000.0, "{}", c.ref_wnd);
    }

    /// ref_wnd_i, the window before congestion, is set at a cut (at most
    /// every 250 ms), not while the window grows.
    #[test]
    fn the_window_before_congestion_is_kept_at_a_cut() {
        let p = spec(serde_json::json!({"version": "v2"}));
        let mut c = V2::new(&p);
        c.ref_wnd = 20_000.0;
        let m = measures(0.0, 10_000);
        c.on_feedback(&p, &at(&m, ms(10_000)), &acked(1000, 1));
        assert_eq!((c.ref_wnd_i, c.ref_wnd), (20_000.0, 14_000.0));
        c.on_feedback(&p, &at(&m, ms(10_500)), &acked(1000, 0));
        assert_eq!(c.ref_wnd_i, 20_000.0);
        assert!(c.ref_wnd > 14_000.0);
    }

    /// A cut exactly 250 ms after ref_wnd_i was last set keeps it; one
    /// just past 250 ms takes the window.
    #[test]
    fn the_window_before_congestion_at_exactly_250_ms() {
        let p = spec(serde_json::json!({"version": "v2"}));
        let cut_at = |now: SimTime| {
            let mut c = V2::new(&p);
            c.ref_wnd = 20_000.0;
            c.last_ref_wnd_i_update = ms(10_750);
            let m = at(&measures(0.0, 10_000), now);
            c.on_feedback(&p, &m, &acked(1000, 1));
            c.ref_wnd_i
        };
        assert_eq!(cut_at(ms(11_000)), 1.0, "the initial value, kept");
        assert_eq!(cut_at(SimTime::from_nanos(11_000_000_001)), 20_000.0);
    }

    /// An L4S cut: share x l4s_alpha / 2 x max(1 - 2 MSS / ref_wnd, 0.8),
    /// share the part of an RTT since the last cut; classic ECN cuts by
    /// BETA_ECN.
    #[test]
    fn l4s_and_classic_ecn_cuts() {
        let p = spec(serde_json::json!({"version": "v2", "l4s": true}));
        let mut c = V2::new(&p);
        c.ref_wnd = 20_000.0;
        c.l4s_alpha = 0.4;
        c.last_congestion = ms(9950);
        c.last_alpha_update = ms(9000);
        let m = at(&measures(0.0, 10_000), ms(10_000));
        c.on_feedback(&p, &m, &marked(10, 5));
        let alpha = 0.5 / 16.0 + 15.0 / 16.0 * 0.4;
        assert!((c.l4s_alpha - alpha).abs() < 1e-15);
        let backoff = 0.5 * alpha / 2.0 * 0.9;
        assert!(
            (c.ref_wnd - 20_000.0 * (1.0 - backoff)).abs() < 1e-9,
            "{}",
            c.ref_wnd
        );
        let q = spec(serde_json::json!({"version": "v2"}));
        let mut c = V2::new(&q);
        c.ref_wnd = 20_000.0;
        c.on_feedback(&q, &m, &marked(10, 5));
        assert!((c.ref_wnd - 16_000.0).abs() < 1e-9);
    }

    /// The increase: (newly acked - CE) x MSS / ref_wnd, x min(s_rtt /
    /// VIRTUAL_RTT, 1)^2, x scl (((ref_wnd - ref_wnd_i) / ref_wnd_i x 4)^2
    /// within [0.1, 1], or with L4S active within [0.02 / (MSS /
    /// ref_wnd), 1]), x (1 + (scale_factor - 1) x post x scl), with
    /// scale_factor = 1 + MUL_INCREASE_FACTOR ref_wnd / MSS and post the
    /// share of POST_CONGESTION_DELAY since the last congestion.
    #[test]
    fn the_increase_by_hand() {
        // scl: (1000 / 19000 x 4)^2 = 0.044, raised to 0.1; with L4S
        // active to 0.02 / 0.05 = 0.4.
        for (l4s, scl) in [(false, 0.1), (true, 0.4)] {
            let p = spec(serde_json::json!({"version": "v2", "l4s": l4s}));
            let mut c = V2::new(&p);
            c.ref_wnd = 20_000.0;
            c.ref_wnd_i = 19_000.0;
            c.last_congestion = ms(8000);
            c.last_ce = l4s.then_some(ms(9000));
            let mut m = at(&measures(0.0, 10_000), ms(10_000));
            m.s_rtt_s = 0.0125;
            c.on_feedback(&p, &m, &acked(4000, 0));
            let short = 0.5f64 * 0.5;
            let mul = 1.0 + (1.4 - 1.0) * 0.5 * scl;
            let want = 20_000.0 + 4000.0 * 0.05 * short * scl * mul;
            assert!(
                (c.ref_wnd - want).abs() < 1e-9,
                "{l4s}: {} {want}",
                c.ref_wnd
            );
        }
    }

    /// Marks within a cut's quiet period (less than min(VIRTUAL_RTT,
    /// s_rtt) since the last) are no congestion, and their bytes are not
    /// grown on: the increase is on the 3000 unmarked bytes of 4000.
    #[test]
    fn the_increase_leaves_out_marked_bytes() {
        let p = spec(serde_json::json!({"version": "v2"}));
        let mut c = V2::new(&p);
        c.ref_wnd = 20_000.0;
        c.ref_wnd_i = 19_000.0;
        c.last_congestion = ms(9990);
        let mut m = at(&measures(0.0, 10_000), ms(10_000));
        m.s_rtt_s = 0.0125;
        c.on_feedback(&p, &m, &marked(4, 1));
        let (short, scl, post) = (0.25, 0.1, 0.01 / 4.0);
        let mul = 1.0 + (1.4 - 1.0) * post * scl;
        let want = 20_000.0 + 3000.0 * 0.05 * short * scl * mul;
        assert!((c.ref_wnd - want).abs() < 1e-9, "{} {want}", c.ref_wnd);
    }

    /// The window grows only while it stays within MSS + BYTES_IN_FLIGHT_
    /// HEAD_ROOM (2) x the most in flight: an increase of 280 bytes from
    /// 20,000 passes a bound of 20,380, not one of 20,100.
    #[test]
    fn the_increase_is_bounded_by_the_bytes_in_flight() {
        let p = spec(serde_json::json!({"version": "v2"}));
        for (most, want) in [(9550, 20_000.0), (9690, 20_280.0)] {
            let mut c = V2::new(&p);
            c.ref_wnd = 20_000.0;
            let mut m = at(&measures(0.0, 10_000), ms(10_000));
            (m.max_bytes_in_flight_rtt, m.max_bytes_in_flight_prev) = (most, most);
            c.on_feedback(&p, &m, &acked(4000, 0));
            assert!((c.ref_wnd - want).abs() < 1e-9, "{most}: {}", c.ref_wnd);
        }
    }

    /// The target: 8 ref_wnd / s_rtt, x (1 - (MSS / ref_wnd - 0.1)), and
    /// over BYTES_IN_FLIGHT_LIMIT of the window in flight (without L4S)
    /// divided by min(1.5, ratio / 0.9).
    #[test]
    fn the_target_by_hand() {
        let p = spec(serde_json::json!({"version": "v2"}));
        for (before, want) in [
            (1000, 0.9 * 8.0 * 5000.0 / 0.1),
            (5000, 0.9 * 0.9 * 8.0 * 5000.0 / 0.1),
        ] {
            let mut c = V2::new(&p);
            c.ref_wnd = 5000.0;
            let mut m = at(&measures(0.0, before), ms(10_000));
            m.bytes_in_flight_before = before;
            c.on_feedback(&p, &m, &acked(0, 0));
            assert!(
                (c.target_bps - want).abs() < 1e-6,
                "{before}: {}",
                c.target_bps
            );
        }
        // send_wnd = 1.5 ref_wnd - bytes in flight.
        let mut c = V2::new(&p);
        c.ref_wnd = 5000.0;
        assert_eq!(c.send_window(&p, &measures(0.0, 1000)), 6500);
        assert_eq!(c.send_window(&p, &measures(0.0, 9000)), 0);
    }
}
