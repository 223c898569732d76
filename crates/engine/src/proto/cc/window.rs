//! Window controllers: how a TCP sender's congestion window grows on ACKs
//! and where its slow-start threshold goes on a congestion event. Loss
//! recovery's mechanics (fast retransmit, window inflation and deflation,
//! partial ACKs, SACK's pipe) stay in the TCP sender, which asks the
//! controller only for these two numbers, so that another growth rule
//! (CUBIC, RFC 9438) is one file and one registration line.

use crate::scenario::check::Checker;
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::Deserialize;

/// New data acknowledged outside loss recovery.
#[derive(Clone, Copy, Debug)]
pub struct Ack {
    pub now: SimTime,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Bytes newly acknowledged.
    pub acked: u64,
    pub mss: u64,
    /// The smoothed RTT, once there is one.
    pub srtt: Option<SimTime>,
}

/// A congestion event: a loss detected by duplicate ACKs or SACK, an ECN
/// echo, or a retransmission timeout.
#[derive(Clone, Copy, Debug)]
pub struct Congestion {
    pub now: SimTime,
    pub cwnd: u64,
    /// The bytes the reduction is based on (RFC 5681 eq. 4: FlightSize).
    pub flight: u64,
    pub mss: u64,
    pub timeout: bool,
}

pub trait WindowController: Send {
    /// The window after `a` (outside recovery).
    fn on_ack(&mut self, a: &Ack) -> u64;
    /// The slow-start threshold after a congestion event.
    fn ssthresh(&mut self, c: &Congestion) -> u64;
}

/// Reno's growth (RFC 5681): slow start below ssthresh, at most one SMSS
/// per ACK (eq. 2); congestion avoidance above, SMSS*SMSS/cwnd per ACK
/// (eq. 3); ssthresh = max(FlightSize / 2, 2 SMSS) on every congestion
/// event (eq. 4). NewReno and SACK differ in recovery only.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl WindowController for Reno {
    fn on_ack(&mut self, a: &Ack) -> u64 {
        if a.cwnd < a.ssthresh {
            a.cwnd + a.acked.min(a.mss)
        } else {
            a.cwnd + (a.mss * a.mss / a.cwnd).max(1)
        }
    }
    fn ssthresh(&mut self, c: &Congestion) -> u64 {
        (c.flight / 2).max(2 * c.mss)
    }
}

/// A window controller's scenario spec.
pub trait WindowModel {
    fn validate(&self, path: &str, c: &mut Checker);
    /// The controller, or `None` for Reno (which the TCP sender runs
    /// inline, without a call through a vtable on every ACK).
    fn build(&self) -> Option<Box<dyn WindowController>>;
}

/// Reno's growth (RFC 5681), with whichever recovery the flow's `flavor`
/// chooses.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenoSpec {}

impl WindowModel for RenoSpec {
    fn validate(&self, _path: &str, _c: &mut Checker) {}
    fn build(&self) -> Option<Box<dyn WindowController>> {
        None
    }
}

crate::model_family! {
    /// A window controller, chosen by "type".
    pub enum WindowSpec: dyn WindowModel {
        Reno(RenoSpec) = "reno",
        Cubic(super::cubic::CubicSpec) = "cubic",
    }
}

impl Default for WindowSpec {
    fn default() -> Self {
        WindowSpec::Reno(Box::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(cwnd: u64, ssthresh: u64, acked: u64) -> Ack {
        Ack {
            now: SimTime::ZERO,
            cwnd,
            ssthresh,
            acked,
            mss: 1000,
            srtt: None,
        }
    }

    /// RFC 5681 eqs. 2-4 by hand.
    #[test]
    fn reno_grows_and_halves_as_rfc_5681_says() {
        let mut r = Reno;
        assert_eq!(
            r.on_ack(&ack(4000, 10_000, 3000)),
            5000,
            "slow start: one SMSS at most"
        );
        assert_eq!(r.on_ack(&ack(4000, 10_000, 500)), 4500);
        assert_eq!(
            r.on_ack(&ack(10_000, 10_000, 1000)),
            10_100,
            "1000*1000/10000"
        );
        assert_eq!(
            r.on_ack(&ack(2_000_000, 1000, 1000)),
            2_000_001,
            "at least one byte"
        );
        let c = |flight| Congestion {
            now: SimTime::ZERO,
            cwnd: 0,
            flight,
            mss: 1000,
            timeout: false,
        };
        assert_eq!((r.ssthresh(&c(9000)), r.ssthresh(&c(3000))), (4500, 2000));
    }
}
