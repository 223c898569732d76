//! TCP-Friendly Rate Control (RFC 5348) as sans-IO state machines: the
//! throughput equation, the receiver's loss history (`loss.rs`), the
//! receiver (`receiver.rs`) and the sender (`sender.rs`).
//!
//! Differences from RFC 3448 (which the reference study's ns-2 agent
//! implemented) that matter for media: RFC 5348 bounds the sending rate by
//! a set of recent receive rates rather than one (section 4.3), halves it
//! after an idle or data-limited period more gently, sets t_RTO =
//! max(4R, 2s/X), and starts from an initial window of up to four packets
//! (section 4.2) instead of one packet per RTT.

pub mod loss;
pub mod receiver;
pub mod sender;

#[cfg(test)]
mod tests;

pub use receiver::TfrcReceiver;
pub use sender::TfrcSender;

use crate::sim::SimTime;

/// The TCP throughput equation (RFC 5348 section 3.1), in bytes per
/// second: `s` segment size (bytes), `r` round-trip time (s), `p` loss
/// event rate, `b` packets acknowledged per ACK, `t_rto` (s).
pub fn throughput_bps(s: f64, r: f64, p: f64, b: f64, t_rto: f64) -> f64 {
    let denom = r * (2.0 * b * p / 3.0).sqrt()
        + t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / denom
}

/// The loss event rate at which the equation gives `x` bytes/s (for the
/// first loss interval, RFC 5348 section 6.3.1), by bisection on log p.
pub fn loss_rate_for(x: f64, s: f64, r: f64, b: f64, t_rto: f64) -> f64 {
    let (mut lo, mut hi) = (1e-12_f64, 1.0_f64);
    if throughput_bps(s, r, hi, b, t_rto) >= x {
        return hi;
    }
    if throughput_bps(s, r, lo, b, t_rto) <= x {
        return lo;
    }
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if throughput_bps(s, r, mid, b, t_rto) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt()
}

/// Parameters both ends share.
#[derive(Clone, Debug)]
pub struct TfrcConfig {
    /// Segment size in bytes (the packets' size on the wire).
    pub s: u32,
    /// Packets acknowledged by one TCP ACK in the equation (RFC 5348: 1).
    pub b: f64,
    /// Maximum back-off interval (RFC 5348: 64 s).
    pub t_mbi: SimTime,
    /// Loss intervals averaged (RFC 5348: 8).
    pub n_intervals: usize,
    /// Discount old loss intervals after a long loss-free period (RFC 5348
    /// section 5.5).
    pub history_discounting: bool,
    /// Space packets by the instantaneous RTT (RFC 5348 section 4.5).
    pub oscillation_prevention: bool,
}

impl Default for TfrcConfig {
    fn default() -> Self {
        TfrcConfig {
            s: 1000,
            b: 1.0,
            t_mbi: SimTime::from_secs(64),
            n_intervals: 8,
            history_discounting: true,
            oscillation_prevention: true,
        }
    }
}

/// What a data packet carries (RFC 5348 section 3.2.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataHeader {
    pub seq: u64,
    pub sent_at: SimTime,
    /// The sender's RTT estimate (zero before it has one).
    pub rtt: SimTime,
}

/// What a feedback packet carries (RFC 5348 section 3.2.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Feedback {
    /// Send time of the last data packet received.
    pub t_recvdata: SimTime,
    /// Time between that packet's arrival and this feedback.
    pub t_delay: SimTime,
    /// Receive rate since the last feedback, bytes/s.
    pub x_recv: f64,
    /// Loss event rate.
    pub p: f64,
}

// Both travel as packet payloads; pcap shows them as bare UDP payload.
impl crate::net::AppPayload for DataHeader {
    crate::payload_eq!();
}
impl crate::net::AppPayload for Feedback {
    crate::payload_eq!();
}
