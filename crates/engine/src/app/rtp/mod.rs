//! RTP sessions: the member application, its RTCP compounds on the wire,
//! and the session's scenario spec.

pub mod build;
pub mod compound;
pub mod frames;
mod held;
pub mod member;
pub mod payload;
pub mod rtx;
mod sent;
pub mod spec;
pub mod viewer;
pub mod xr;

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
        Count("rrtr_sent"),
        Count("dlrr_sent"),
        Count("loss_reports"),
        Count("losses_multiply_reported"),
        Count("loss_reports_unplaced"),
        Measure("loss_report_delay_mean_s"),
        Count("media_packets_sent"),
        Count("repairs_sent"),
        Count("recoveries"),
        Measure("recovery_time_mean_s"),
        Measure("waiting_time_mean_s"),
    ],
    series: true,
};

/// The `media` table: one row per frame-based media stream (a member with
/// a `source`), the sender's columns then the receiver's (`playout`,
/// per-packet `feedback`, voice quality for voice sources).
pub const MEDIA_TABLE: super::AppTable = super::AppTable {
    name: "media",
    columns: &[
        Count("frames_sent"),
        Count("key_frames"),
        Count("pli_received"),
        Count("key_frames_on_request"),
        Count("nack_received"),
        Count("rtx_packets"),
        Count("rtx_bytes"),
        Count("rtx_refused"),
        Count("rtx_rate_limited"),
        Count("media_payload_bytes"),
        Measure("media_rate_bps"),
        Measure("target_gap_mean_bps"),
        Measure("paused_s"),
        Measure("pacer_delay_mean_ms"),
        Measure("pacer_delay_max_ms"),
        Count("pacer_queue_max_bytes"),
        Count("pacer_discarded_packets"),
        Count("padding_packets"),
        Count("padding_bytes"),
        Count("feedback_received"),
        Count("feedback_bytes_received"),
        Count("packets_reported_received"),
        Count("packets_reported_lost"),
        Count("packets_reported_recovered"),
        Count("frames_played"),
        Count("frames_late"),
        Count("frames_lost"),
        Count("frames_undecodable"),
        Count("key_frame_requests"),
        Count("nack_sent"),
        Count("nack_requests"),
        Count("packets_recovered"),
        Count("packets_given_up"),
        Count("rtx_duplicates"),
        Count("nack_spurious"),
        Measure("frame_delay_mean_ms"),
        Measure("frame_delay_p95_ms"),
        Measure("frame_delay_max_ms"),
        Measure("playout_delay_mean_ms"),
        Count("freezes"),
        Measure("freeze_total_s"),
        Count("pauses"),
        Measure("pause_total_s"),
        Count("frames_level_0"),
        Count("frames_level_1"),
        Count("frames_level_2"),
        Count("frames_level_3"),
        Count("frames_level_4"),
        Count("frames_level_5"),
        Measure("good_quality_pct"),
        Count("feedback_sent"),
        Count("feedback_bytes_sent"),
        Count("feedback_late_packets"),
        Measure("voice_loss_pct"),
        Measure("voice_burst_ratio"),
        Measure("mouth_to_ear_ms"),
        Measure("r_factor"),
        Measure("mos"),
    ],
    series: true,
};
