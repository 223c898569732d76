//! Scalable video over a rate-controlled transport (the SVC study): the
//! trace model and layer selection (`trace.rs`). The source, receiver and
//! the flow type come with the transports that carry them.

pub mod decode;
pub mod trace;
