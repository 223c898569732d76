//! RFC 3550 A.8's interarrival jitter estimator, shared by RTP's reception
//! statistics (in timestamp units) and the per-flow delay results (in
//! nanoseconds).

/// Below this an estimate is 0 (2^-60).
///
/// On a path whose transit time does not change, D is 0 packet after
/// packet and J decays by 15/16 a packet: after some 11,000 packets it is
/// subnormal, where J / 16 rounds to 0 and J stops changing, and every
/// later step runs the floating-point unit's slow path for subnormal
/// operands (about a tenth of a one-call run's time went there). D is a
/// whole number of units, so a non-zero D is at least 1, and an estimate
/// under 2^-60 is under half the last bit of both D - J and J + D / 16:
/// the next non-zero D gives the same J from it as from 0. So setting it
/// to 0 changes no later estimate, and the estimate read until then
/// (truncated in a report block, or in nanoseconds in a result) differs
/// from the unset one by under 2^-60 of a unit.
const TINY: f64 = 1.0 / (1u64 << 60) as f64;

/// One step of J += (|D| - J) / 16 (RFC 3550 A.8), for a transit
/// difference of `d` whole units.
#[inline]
pub fn jitter_step(j: f64, d: u64) -> f64 {
    let j = j + (d as f64 - j) / 16.0;
    if j < TINY {
        0.0
    } else {
        j
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Constant transit: the estimate reaches 0 and stays there, instead
    /// of sticking at a subnormal value.
    #[test]
    fn constant_transit_decays_to_zero_not_to_a_subnormal() {
        let mut j = jitter_step(0.0, 1_000);
        assert_eq!(j, 62.5);
        let mut plain = j;
        for _ in 0..20_000 {
            j = jitter_step(j, 0);
            plain += (0.0 - plain) / 16.0;
        }
        assert_eq!(j, 0.0);
        // Without the floor the estimate sticks in the subnormal range.
        assert!(plain > 0.0 && !plain.is_normal(), "{plain:e}");
        // From there, a transit change gives the same estimate either way.
        for d in [1, 2, 7, 1_000_000] {
            assert_eq!(jitter_step(j, d), plain + (d as f64 - plain) / 16.0);
            assert_eq!(jitter_step(j, d), d as f64 / 16.0);
        }
    }

    /// Above the floor the step is RFC 3550's, bit for bit.
    #[test]
    fn above_the_floor_the_step_is_the_rfc_s() {
        let mut j = 0.0;
        let mut rfc = 0.0f64;
        for (k, d) in [160u64, 0, 3, 0, 0, 80, 1, 0, 0, 0]
            .iter()
            .cycle()
            .take(500)
            .enumerate()
        {
            j = jitter_step(j, *d);
            rfc += (*d as f64 - rfc) / 16.0;
            assert_eq!(j.to_bits(), rfc.to_bits(), "step {k}");
        }
        // The floor itself: just under it is 0, at it is kept.
        assert_eq!(jitter_step(TINY * 16.0 / 15.0 * 0.999, 0), 0.0);
        assert!(jitter_step(TINY * 16.0 / 15.0 * 1.001, 0) >= TINY);
    }
}
