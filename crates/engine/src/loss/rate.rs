//! Independent losses: per packet, per byte, per bit.

use super::spec::LossModelSpec;
use super::LossModel;
use crate::net::Packet;
use crate::scenario::check::{Checker, Scope};
use crate::sim::{uniform, SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

/// Declares the spec of a model given by one probability, `rate`.
macro_rules! rate_spec {
    ($(#[doc = $doc:literal])* $spec:ident => $model:ident) => {
        $(#[doc = $doc])*
        #[derive(Clone, Debug, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $spec {
            pub rate: f64,
        }

        impl LossModelSpec for $spec {
            fn validate(&self, path: &str, _scope: &Scope<'_>, c: &mut Checker) {
                c.probability(format_args!("{path}.rate"), self.rate);
            }
            fn build(&self, rng: SimRng, _flow_id: &dyn Fn(&str) -> u32) -> Box<dyn LossModel> {
                Box::new($model::new(self.rate, rng))
            }
        }
    };
}

rate_spec! {
    /// Each packet lost independently with probability `rate`.
    PacketLossSpec => PacketLossRate
}
rate_spec! {
    /// Each byte in error with probability `rate`; a packet of n bytes is
    /// lost with probability 1-(1-rate)^n.
    ByteErrorSpec => ByteErrorRate
}
rate_spec! {
    /// Each bit in error with probability `rate`; a packet of n bytes is
    /// lost with probability 1-(1-rate)^(8n).
    BitErrorSpec => BitErrorRate
}

/// Each packet is lost independently with probability `rate`.
pub struct PacketLossRate {
    rate: f64,
    rng: SimRng,
}

impl PacketLossRate {
    pub fn new(rate: f64, rng: SimRng) -> Self {
        PacketLossRate { rate, rng }
    }
}

impl LossModel for PacketLossRate {
    fn is_lost(&mut self, _pkt: &Packet, _now: SimTime) -> bool {
        uniform(&mut self.rng) < self.rate
    }
}

/// Probability that a unit of `n` independent elements, each in error with
/// probability `p`, has at least one in error: 1 - (1-p)^n, computed as
/// -expm1(n * ln1p(-p)) to keep precision for tiny p.
pub fn any_error_probability(p: f64, n: u64) -> f64 {
    if p >= 1.0 {
        return 1.0;
    }
    -((n as f64) * (-p).ln_1p()).exp_m1()
}

/// A packet of n bytes (IP total length) is lost with probability
/// 1 - (1 - p)^n: any byte in error discards it.
pub struct ByteErrorRate {
    rate: f64,
    rng: SimRng,
}

impl ByteErrorRate {
    pub fn new(rate: f64, rng: SimRng) -> Self {
        ByteErrorRate { rate, rng }
    }
}

impl LossModel for ByteErrorRate {
    fn is_lost(&mut self, pkt: &Packet, _now: SimTime) -> bool {
        uniform(&mut self.rng) < any_error_probability(self.rate, pkt.size_bytes as u64)
    }
}

/// A packet of n bytes is lost with probability 1 - (1 - p)^(8n).
pub struct BitErrorRate {
    rate: f64,
    rng: SimRng,
}

impl BitErrorRate {
    pub fn new(rate: f64, rng: SimRng) -> Self {
        BitErrorRate { rate, rng }
    }
}

impl LossModel for BitErrorRate {
    fn is_lost(&mut self, pkt: &Packet, _now: SimTime) -> bool {
        uniform(&mut self.rng) < any_error_probability(self.rate, 8 * pkt.size_bytes as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_error_probability_matches_closed_form() {
        let p: f64 = 1e-4;
        let exact = 1.0 - (1.0 - p).powi(1000);
        assert!((any_error_probability(p, 1000) - exact).abs() < 1e-12);
        assert_eq!(any_error_probability(0.0, 1500), 0.0);
        assert_eq!(any_error_probability(1.0, 1), 1.0);
    }
}
