//! RTP sessions: the member application, its RTCP compounds on the wire,
//! and the session's scenario spec.

pub mod build;
pub mod compound;
pub mod member;
pub mod payload;
pub mod spec;

pub use compound::compound_packets;
pub use member::{MediaConfig, NewpredConfig, RtpMember, RTP_CLOCK_HZ};
pub use payload::{RtcpCompound, RtcpReport, RtpData};
pub use spec::RtpSessionSpec;

use super::Col::{Count, Measure};

/// The `rtp` table (one row per session member).
pub const TABLE: super::AppTable = super::AppTable {
    name: "rtp",
    // Count: an integer (nullable Int64 in Python); Measure: a float in its unit.
    columns: &[
        Count("ssrc"),
        Count("avpf"),
        Count("media_sender"),
        Count("rtcp_packets"),
        Count("rtcp_bytes"),
        Measure("rtcp_bps"),
        Measure("rtcp_share_pct"),
        Count("early_packets"),
        Count("regular_packets"),
        Count("regular_suppressed"),
        Count("fb_wanted"),
        Count("fb_sent"),
        Count("fb_sent_early"),
        Count("fb_suppressed"),
        Count("fb_discarded"),
        Measure("mwt_s"),
        Count("members"),
        Measure("rtt_s"),
        Count("loss_reports"),
        Count("losses_multiply_reported"),
        Measure("loss_report_delay_mean_s"),
        Count("media_packets_sent"),
        Count("repairs_sent"),
        Count("recoveries"),
        Measure("recovery_time_mean_s"),
        Measure("waiting_time_mean_s"),
    ],
    series: true,
};
