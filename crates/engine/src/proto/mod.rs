//! Transport and session protocols as sans-IO state machines: each takes
//! (now, input) and returns what to send and when it next needs to be woken;
//! none knows the simulator.

pub mod cc;
pub mod feedback;
pub mod ppacc;
pub mod rmtp;
pub mod rtp;
pub mod tcp;
pub mod tfrc;
