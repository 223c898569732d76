//! RMTP sessions (docs/models/rmtp.md): `spec.rs` (fields and checks),
//! `build.rs` (channels, flows and applications), `apps.rs` (the sender,
//! DR and receiver applications around proto/rmtp's state machines).

pub mod apps;
pub mod build;
pub mod spec;

pub use spec::RmtpSessionSpec;

/// The `rmtp` table (the sender's, receivers' and DRs' columns; NaN where a role has none).
pub const TABLE: super::AppTable = super::AppTable {
    name: "rmtp",
    columns: &[
        "role",
        "new_sent",
        "retx_sent",
        "premature_retx",
        "final_buffer_at_end",
        "final_buffer_peak",
        "retx_queued_at_end",
        "cwnd_at_end",
        "delivered",
        "throughput_pps",
        "delay_mean_s",
        "waiting_at_end",
        "gaps_at_end",
        "highest_received",
        "duplicates",
        "recovered",
        "hacks_sent",
        "local_retx",
        "dr_buffer_overflows",
        "dr_buffer_peak",
        "dr_buffer_at_end",
    ],
    // Counts (integers; the others are measures in their units).
    integers: &[
        "role",
        "new_sent",
        "retx_sent",
        "premature_retx",
        "final_buffer_at_end",
        "final_buffer_peak",
        "retx_queued_at_end",
        "cwnd_at_end",
        "delivered",
        "waiting_at_end",
        "gaps_at_end",
        "highest_received",
        "duplicates",
        "recovered",
        "hacks_sent",
        "local_retx",
        "dr_buffer_overflows",
        "dr_buffer_peak",
        "dr_buffer_at_end",
    ],
    series: true,
};
