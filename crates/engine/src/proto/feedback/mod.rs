//! Per-packet congestion control feedback, both formats: the receiver's
//! arrival log that turns arrivals into RFC 8888 or transport-wide
//! feedback messages (`log.rs`), and the sender's history that turns those
//! messages back into per-packet results for a controller (`history.rs`).
//! Arrival times travel as the formats carry them (1/1024 s offsets from a
//! 1/65536 s report timestamp; 250 us deltas from a 64 ms reference), so
//! a controller sees them at the resolution a real one would.

pub mod history;
pub mod log;

pub use history::SendHistory;
pub use log::ArrivalLog;

use crate::sim::SimTime;
use crate::wire::rtcp::RtcpPacket;

/// Which feedback format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// RFC 8888 (RTPFB FMT 11), per-stream RTP sequence numbers.
    Rfc8888,
    /// Transport-wide congestion control (RTPFB FMT 15), transport-wide
    /// sequence numbers in an RTP header extension.
    Twcc,
}

/// What the feedback says about one packet the sender sent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacketResult {
    /// The sequence number feedback is keyed by, extended (RTP or
    /// transport-wide, per the format).
    pub seq: u64,
    pub sent_at: SimTime,
    /// Bytes on the wire.
    pub bytes: u32,
    /// Reported received.
    pub received: bool,
    /// When it arrived (receiver's clock, at the format's resolution);
    /// `None` if not received or its time is out of the format's range.
    pub arrival: Option<SimTime>,
    /// ECN bits as received (RFC 8888; 0 for transport-wide feedback,
    /// which carries none).
    pub ecn: u8,
}

/// A feedback message in a packet, with its bytes for pcap export.
#[derive(Clone, Debug, PartialEq)]
pub struct FeedbackMessage(pub RtcpPacket);

impl crate::net::AppPayload for FeedbackMessage {
    fn emit(&self, _p: &crate::net::Packet, _now: SimTime, buf: &mut [u8]) {
        let mut b = Vec::with_capacity(buf.len());
        self.0.emit(&mut b);
        let n = b.len().min(buf.len());
        buf[..n].copy_from_slice(&b[..n]);
    }
    crate::payload_eq!();
}

/// The extended value of a 16-bit sequence number `s`, taking the one
/// nearest `near` (RFC 3550 A.1's idea): `near` moved by the 16-bit
/// difference read as signed, so a tie (2^15 either way) goes to the
/// lower value; a value that would fall below zero is the one 2^16 above
/// it instead, the nearest that is not negative. Called for every packet
/// a feedback log takes in, so without the three candidates' search.
#[inline]
pub fn extend16(s: u16, near: u64) -> u64 {
    let d = s.wrapping_sub(near as u16) as i16 as i64;
    let c = near as i128 + d as i128;
    if c < 0 {
        (c + 0x1_0000) as u64
    } else {
        c as u64
    }
}

#[cfg(test)]
mod tests;
