//! RTP sessions: the member application, its RTCP compounds on the wire,
//! and the session's scenario spec.

pub mod build;
pub mod compound;
pub mod member;
pub mod spec;

pub use compound::compound_packets;
pub use member::{MediaConfig, NewpredConfig, RtpMember, RTP_CLOCK_HZ};
pub use spec::RtpSessionSpec;

/// The `rtp` table (one row per session member).
pub const TABLE: super::AppTable = super::AppTable {
    name: "rtp",
    columns: &[
        "ssrc",
        "avpf",
        "media_sender",
        "rtcp_packets",
        "rtcp_bytes",
        "rtcp_bps",
        "rtcp_share_pct",
        "early_packets",
        "regular_packets",
        "regular_suppressed",
        "fb_wanted",
        "fb_sent",
        "fb_sent_early",
        "fb_suppressed",
        "fb_discarded",
        "mwt_s",
        "members",
        "rtt_s",
        "loss_reports",
        "losses_multiply_reported",
        "loss_report_delay_mean_s",
        "media_packets_sent",
        "repairs_sent",
        "recoveries",
        "recovery_time_mean_s",
        "waiting_time_mean_s",
    ],
    // Counts (integers; the others are measures in their units).
    integers: &[
        "ssrc",
        "avpf",
        "media_sender",
        "rtcp_packets",
        "rtcp_bytes",
        "early_packets",
        "regular_packets",
        "regular_suppressed",
        "fb_wanted",
        "fb_sent",
        "fb_sent_early",
        "fb_suppressed",
        "fb_discarded",
        "members",
        "loss_reports",
        "losses_multiply_reported",
        "media_packets_sent",
        "repairs_sent",
        "recoveries",
    ],
    series: false,
};
