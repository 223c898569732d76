//! Media that reacts: frame sources (RFC 8593's synthetic video codec,
//! frame-size and SVC NAL-unit traces, voice), the packetiser that cuts
//! frames into RTP packets, the pacer between the encoder and the wire,
//! and the receiver's playout buffer with what the viewer sees. Plain
//! state machines; the RTP member drives them (`app::rtp`), and `spec.rs`
//! holds their scenario fields.

pub mod audio;
pub mod jitter_estimate;
pub mod nack;
pub mod pacer;
pub mod packetiser;
pub mod playout;
pub mod render_timing;
pub mod spec;
pub mod svc_trace;
pub mod synthetic;
pub mod trace;

use crate::sim::{SimRng, SimTime};

/// One encoded frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Payload bytes (RTP payload, headers not included).
    pub bytes: u32,
    /// An intra-coded (key) frame.
    pub key: bool,
}

/// A source of frames that may follow a target rate.
pub trait FrameSource: Send {
    /// The controller asks for `bps` of media payload; the source follows
    /// within its own limits.
    fn set_target(&mut self, now: SimTime, bps: f64);
    /// The payload rate the source now aims at, bit/s.
    fn rate_bps(&self) -> f64;
    /// The frame captured at `now`, and the time until the next one.
    fn next_frame(&mut self, now: SimTime, rng: &mut SimRng) -> (Frame, SimTime);
    /// The receiver asked for a key frame (a PLI): a source that can make
    /// one makes the next frame a key frame and says so. A trace cannot,
    /// and ignores it; voice frames need none.
    fn request_key_frame(&mut self) -> bool {
        false
    }
}
