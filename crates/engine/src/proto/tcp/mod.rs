//! TCP as sans-IO state machines: [`TcpSender`] and [`TcpReceiver`].
//!
//! Each takes the current time and an input (a segment, a timer expiry) and
//! appends the segments to send to an output vector; `deadline()` says when
//! it next needs to be woken. Neither knows the simulator.
//!
//! Sequence numbers: the SYN is 0, data byte i (0-based) is 1 + i, a FIN
//! follows the last data byte. Data segments are cut at fixed MSS
//! boundaries, so retransmissions reuse the original boundaries.

pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod sender;

#[cfg(test)]
mod tests;

pub use receiver::TcpReceiver;
pub use sender::TcpSender;

use crate::net::TcpHeader;
use crate::sim::SimTime;

/// Loss recovery flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// RFC 5681 fast retransmit / fast recovery.
    Reno,
    /// RFC 6582 NewReno (partial ACKs keep recovery going).
    NewReno,
    /// RFC 6675 SACK-based loss recovery with RFC 2018 SACK.
    Sack,
}

/// NewReno's window rules during and after recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewRenoRecovery {
    /// RFC 6582 3.2: a partial ACK deflates cwnd by the amount acknowledged
    /// and adds back one SMSS; a full ACK sets cwnd = min(ssthresh,
    /// max(FlightSize, SMSS) + SMSS) (option 1).
    Rfc6582,
    /// ns-2's Agent/TCP/Newreno defaults: a partial ACK removes all
    /// inflation (window = ssthresh, `partial_window_deflation_ 0`); a full
    /// ACK sets cwnd = ssthresh (RFC 6582 option 2); entering recovery
    /// halves cwnd rather than FlightSize.
    Ns2,
}

/// Initial congestion window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialWindow {
    /// RFC 3390: min(4*MSS, max(2*MSS, 4380 bytes)).
    Rfc3390,
    /// A number of segments (10 is RFC 6928's IW10).
    Segments(u32),
}

#[derive(Clone, Debug)]
pub struct TcpConfig {
    pub flavor: Flavor,
    /// Sender maximum segment size (payload bytes).
    pub mss: u32,
    pub initial_window: InitialWindow,
    /// ns-2 style cap on the window in packets (None: no cap).
    pub max_window_packets: Option<u32>,
    /// Receive window the receiver advertises, in bytes.
    pub rwnd_bytes: u64,
    pub initial_rto: SimTime,
    pub min_rto: SimTime,
    pub max_rto: SimTime,
    pub clock_granularity: SimTime,
    pub dupthresh: u32,
    /// RFC 3042 limited transmit.
    pub limited_transmit: bool,
    /// NewReno partial ACKs reset the retransmission timer only for the
    /// first one (RFC 6582's "Impatient" variant, the default) or for every
    /// one ("Slow-but-Steady", ns-2's default).
    pub newreno_impatient: bool,
    /// NewReno partial/full ACK rules: RFC 6582 (default), or the variant
    /// ns-2 implements by default.
    pub newreno_recovery: NewRenoRecovery,
    /// Three-way handshake before data (and FIN at the end of a finite
    /// transfer). Without it the sender starts established.
    pub handshake: bool,
    /// Receiver: delay ACKs (RFC 5681 4.2: at least every second full-sized
    /// segment, and within the timeout).
    pub delayed_ack: bool,
    pub delack_timeout: SimTime,
    /// RFC 3168 ECN: negotiated on the SYN and SYN-ACK (or assumed on
    /// both ends without a handshake).
    pub ecn: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            flavor: Flavor::Sack,
            mss: 1460,
            initial_window: InitialWindow::Rfc3390,
            max_window_packets: None,
            rwnd_bytes: 1 << 20,
            initial_rto: SimTime::from_secs(1),
            min_rto: SimTime::from_secs(1),
            max_rto: SimTime::from_secs(60),
            clock_granularity: SimTime::from_millis(1),
            dupthresh: 3,
            limited_transmit: true,
            newreno_impatient: true,
            newreno_recovery: NewRenoRecovery::Rfc6582,
            handshake: true,
            delayed_ack: true,
            delack_timeout: SimTime::from_millis(200),
            ecn: false,
        }
    }
}

impl TcpConfig {
    /// Initial window in bytes.
    pub fn initial_window_bytes(&self) -> u64 {
        let mss = self.mss as u64;
        match self.initial_window {
            InitialWindow::Rfc3390 => (4 * mss).min((2 * mss).max(4380)),
            InitialWindow::Segments(n) => n as u64 * mss,
        }
    }
}

/// A segment to send: header plus payload length (the payload is not
/// materialised). The header is written once, into the box the packet
/// carries: copied from the segment to the packet's box, its 16-byte
/// loads read stores of single fields still in flight (a store-forwarding
/// stall on every segment; `perf` put 3-4% of a one-flow run there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub hdr: Box<TcpHeader>,
    pub payload: u32,
    /// Send as ECN-capable (ECT(0) in the IP header): new data of a
    /// connection that negotiated ECN (RFC 3168 6.1.1, 6.1.5).
    pub ect: bool,
}
