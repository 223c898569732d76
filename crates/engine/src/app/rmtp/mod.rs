//! RMTP sessions (docs/models/rmtp.md): `spec.rs` (fields and checks),
//! `build.rs` (channels, flows and applications), `apps.rs` (the sender,
//! DR and receiver applications around proto/rmtp's state machines).

pub mod apps;
pub mod build;
pub mod spec;

pub use spec::RmtpSessionSpec;
