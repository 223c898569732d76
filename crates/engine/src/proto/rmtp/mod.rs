//! RMTP, tree-based reliable multicast with designated receivers (DRs), as
//! the RMTP study describes it (docs/models/rmtp.md): the sender
//! (`sender.rs`), DRs (`dr.rs`) and receivers (`receiver.rs`) exchange
//! data, local repairs and hierarchical acknowledgements (HACKs,
//! `seqset.rs`). Plain state machines: the engine's `rmtp_sessions` drive
//! them (app/rmtp/).

pub mod dr;
pub mod receiver;
pub mod sender;
pub mod seqbits;
pub mod seqset;

pub use dr::RmtpDr;
pub use receiver::RmtpReceiver;
pub use sender::{RmtpSender, Transmission};
pub use seqset::{HackReport, SeqSet};

/// The sender's window rule (the study's parameters).
#[derive(Clone, Debug, PartialEq)]
pub struct RmtpConfig {
    /// Window ceiling, packets per send interval (Ws = 10).
    pub ws: u32,
    /// More lost than this in an interval closes the window to 1 (CongC = 30).
    pub cong_c: u32,
    /// More lost than this sets the window to Ws / 2 (CongA = 20).
    pub cong_a: u32,
    /// The window at the start (chosen: 1).
    pub initial_window: u32,
    /// Open by doubling instead of by one packet per interval (the study
    /// writes "cwnd = cwnd + 1"; doubling is the option).
    pub doubling: bool,
}

impl Default for RmtpConfig {
    fn default() -> Self {
        RmtpConfig {
            ws: 10,
            cong_c: 30,
            cong_a: 20,
            initial_window: 1,
            doubling: false,
        }
    }
}

#[cfg(test)]
mod tests;
