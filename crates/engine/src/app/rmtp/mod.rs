//! RMTP sessions (docs/models/rmtp.md): `spec.rs` (fields and checks),
//! `build.rs` (channels, flows and applications), `apps.rs` (the sender,
//! DR and receiver applications around proto/rmtp's state machines).

pub mod apps;
pub mod build;
pub mod spec;
#[cfg(test)]
mod tests;

pub use spec::RmtpSessionSpec;

use super::Col::{Count, Measure};

/// The `rmtp` table (the sender's, receivers' and DRs' columns; NaN where a role has none).
pub const TABLE: super::AppTable = super::AppTable {
    name: "rmtp",
    // Count: an integer (nullable Int64 in Python); Measure: a float in its unit.
    columns: &[
        Count("role"),
        Count("new_sent"),
        Count("retx_sent"),
        Count("premature_retx"),
        Count("final_buffer_at_end"),
        Count("final_buffer_peak"),
        Count("retx_queued_at_end"),
        Count("cwnd_at_end"),
        Count("delivered"),
        Measure("throughput_pps"),
        Measure("delay_mean_s"),
        Count("waiting_at_end"),
        Count("gaps_at_end"),
        Count("highest_received"),
        Count("duplicates"),
        Count("recovered"),
        Count("hacks_sent"),
        Count("local_retx"),
        Count("dr_buffer_overflows"),
        Count("dr_buffer_peak"),
        Count("dr_buffer_at_end"),
    ],
    series: true,
};
