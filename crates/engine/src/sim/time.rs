//! Simulated time as integer nanoseconds.
//!
//! Float seconds never drive the clock: conversions happen at the scenario
//! boundary only, so that event order and timing are exact and repeatable.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant or a span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimTime(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond. Callers validate that `s` is finite
    /// and non-negative (the scenario validator does).
    pub fn from_secs_f64(s: f64) -> Self {
        SimTime(round_to_u64(s * 1e9))
    }
    pub fn from_millis_f64(ms: f64) -> Self {
        SimTime(round_to_u64(ms * 1e6))
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

/// `x.round() as u64` (half away from zero; negative and NaN give 0, too
/// large saturates), without the call to libm's `round` that x86-64's
/// baseline instruction set (no SSE4.1 rounding) compiles it to: a pacer
/// and RTCP's timers convert a time per packet. Exact: below 2^52 the
/// fraction `x - trunc(x)` is representable, and from 2^52 on every f64
/// is an integer.
#[inline]
pub fn round_to_u64(x: f64) -> u64 {
    if x >= 4_503_599_627_370_496.0 {
        return x as u64;
    }
    // A negative x or NaN casts to 0, and `x - 0 >= 0.5` is false for both.
    let t = x as u64;
    t + (x - t as f64 >= 0.5) as u64
}

// Addition saturates: a time past the end of representable time (~584
// years) is "never", not a wrap-around into the past.
impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

/// Serialisation time of `bits` on a link of `rate_bps`, as whole nanoseconds
/// plus the sub-nanosecond remainder (numerator over `rate_bps`).
///
/// Carrying the remainder across back-to-back packets keeps a busy link's
/// long-run rate exact even when 8S/R is not a whole number of nanoseconds.
#[inline]
pub fn tx_time(bits: u64, rate_bps: u64, carry: u64) -> (SimTime, u64) {
    // 64-bit arithmetic whenever it cannot overflow (always, for real packet
    // sizes); 128-bit otherwise.
    if let Some(num) = bits
        .checked_mul(1_000_000_000)
        .and_then(|x| x.checked_add(carry))
    {
        return (SimTime(num / rate_bps), num % rate_bps);
    }
    let num = bits as u128 * 1_000_000_000u128 + carry as u128;
    let ns = num / rate_bps as u128;
    let rem = num % rate_bps as u128;
    // A span beyond u64's nanoseconds is "never", as addition's is.
    (SimTime(u64::try_from(ns).unwrap_or(u64::MAX)), rem as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_f64_round_then_a_saturating_cast() {
        let mut rng = crate::sim::RngStreams::new(5, 0).stream("round");
        let mut cases = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -0.4,
            -0.5,
            -3.7,
            0.49999999999999994,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9_007_199_254_740_993.0,
            1.8e19,
            1.9e19,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for _ in 0..200_000 {
            let u = crate::sim::uniform(&mut rng);
            let scale = 10f64.powi((u * 1e6) as i32 % 20);
            cases.push(u * scale);
            cases.push((u * scale).floor() + 0.5);
        }
        for x in cases {
            assert_eq!(round_to_u64(x), x.round() as u64, "{x:e}");
        }
    }

    #[test]
    fn conversions_round_to_nearest_nanosecond() {
        assert_eq!(SimTime::from_secs_f64(1.5).as_nanos(), 1_500_000_000);
        assert_eq!(SimTime::from_millis_f64(0.0000004).as_nanos(), 0);
        assert_eq!(SimTime::from_millis_f64(0.0000006).as_nanos(), 1);
        assert_eq!(
            SimTime::from_millis(25) + SimTime::from_micros(3),
            SimTime(25_003_000)
        );
    }

    #[test]
    fn tx_time_is_exact_with_carry() {
        // 1000 B at 3 Mbit/s = 2_666_666.67 ns: three packets take exactly 8 ms.
        let (a, c1) = tx_time(8000, 3_000_000, 0);
        let (b, c2) = tx_time(8000, 3_000_000, c1);
        let (c, c3) = tx_time(8000, 3_000_000, c2);
        assert_eq!(a.0 + b.0 + c.0, 8_000_000);
        assert_eq!(c3, 0);
        assert_eq!(tx_time(12_000, 10_000_000, 0), (SimTime(1_200_000), 0));
    }

    /// Past 64-bit range (about 1.8e10 bits at once) the 128-bit path
    /// gives the same division: whole nanoseconds times the rate plus the
    /// remainder is the bits in nanosecond-bits plus the carry, the
    /// remainder below the rate, on both sides of the switch.
    #[test]
    fn tx_time_is_exact_past_64_bits() {
        let limit = u64::MAX / 1_000_000_000;
        for bits in [limit - 1, limit, limit + 1, 1 << 40, u64::MAX / 3] {
            for (rate, carry) in [(3_000_000u64, 2_999_999u64), (1_000_000_000, 7), (7, 6)] {
                let (ns, rem) = tx_time(bits, rate, carry);
                let num = bits as u128 * 1_000_000_000 + carry as u128;
                assert!(rem < rate);
                if num / rate as u128 > u64::MAX as u128 {
                    assert_eq!(ns, SimTime::MAX, "too long a span is never");
                } else {
                    let back = ns.0 as u128 * rate as u128 + rem as u128;
                    assert_eq!(back, num, "{bits} {rate}");
                }
            }
        }
        // 2^40 bits at 1 Gbit/s: 2^40 ns exactly, carry kept.
        assert_eq!(tx_time(1 << 40, 1_000_000_000, 7), (SimTime(1 << 40), 7));
    }

    #[test]
    fn arithmetic_and_display() {
        let mut t = SimTime::from_secs(2);
        t += SimTime::from_millis(250);
        assert_eq!(t, SimTime(2_250_000_000));
        assert_eq!(t - SimTime::from_secs(1), SimTime(1_250_000_000));
        let mut never = SimTime::MAX;
        never += SimTime(1);
        assert_eq!(never, SimTime::MAX);
        assert_eq!(t.to_string(), "2.250000000s");
        assert_eq!(SimTime(1).to_string(), "0.000000001s");
    }

    #[test]
    fn saturating_sub_stops_at_zero() {
        assert_eq!(SimTime(7).saturating_sub(SimTime(3)), SimTime(4));
        assert_eq!(SimTime(3).saturating_sub(SimTime(7)), SimTime::ZERO);
        assert_eq!(SimTime::MAX + SimTime(1), SimTime::MAX);
    }
}
