//! RTP sessions: the member application, its RTCP compounds on the wire,
//! and the session's scenario spec.

pub mod build;
pub mod compound;
pub mod member;
pub mod spec;

pub use compound::compound_packets;
pub use member::{MediaConfig, NewpredConfig, RtpMember, RTP_CLOCK_HZ};
pub use spec::RtpSessionSpec;
