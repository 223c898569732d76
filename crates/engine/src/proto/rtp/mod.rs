//! RTP (RFC 3550): per-source reception statistics and the RTCP timing
//! state machine. Sans-IO like every protocol here.

pub mod avpf;
pub mod rtcp_timing;
pub mod stats;

pub use avpf::{AvpfConfig, DitherRule, FbItem, FbStats, RtcpScheduler, Transmit};
pub use rtcp_timing::{rtcp_interval, RtcpTiming, TimingConfig};
pub use stats::SourceStats;
