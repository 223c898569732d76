//! Real byte formats, used for pcap export and round-trip tests only; the
//! simulation hot path never serialises.
//!
//! Per protocol: a typed `Repr` with `emit` (write the header into a buffer)
//! and `parse` (read it back, checking lengths and checksums).

pub mod checksum;
pub mod ipv4;
pub mod rmtp;
pub mod rtcp;
pub mod rtp;
pub mod tcp;
pub mod udp;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    #[error("buffer too short: need {need} bytes, have {have}")]
    Truncated { need: usize, have: usize },
    #[error("bad {field}: {value}")]
    BadField { field: &'static str, value: u64 },
    #[error("checksum mismatch")]
    Checksum,
}

#[cfg(test)]
mod error_tests;
#[cfg(test)]
mod fuzz_tests;
