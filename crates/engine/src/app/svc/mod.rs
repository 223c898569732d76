//! Scalable video over a rate-controlled transport (the SVC study):
//! - `trace.rs`: the NAL-unit trace model, its synthetic generator and
//!   parser, and the per-GOP layer selection with the FGS cut;
//! - `decode.rs`: which received NAL units a decoder can use;
//! - `fec.rs`: the systematic block codes and the residual-loss model.
//!
//! The source, receiver and flow type come with the transports that carry
//! them.

pub mod decode;
pub mod fec;
pub mod trace;
