//! Limits on what one scenario may ask for, so that a typo (a million
//! flows, a trace of a ten-gigabit link for an hour) ends in a clear error
//! or a stopped capture, not in a machine out of memory or disk. Each is a
//! field of the scenario's `limits` table and can be raised there.

use super::check::Checker;
use super::document::Scenario;
use schemars::JsonSchema;
use serde::Deserialize;

fn d_nodes() -> u64 {
    200_000
}
fn d_links() -> u64 {
    400_000
}
fn d_flows() -> u64 {
    200_000
}
fn d_rtp_members() -> u64 {
    20_000
}
fn d_trace_rows() -> u64 {
    20_000_000
}
fn d_queue_sample_rows() -> u64 {
    20_000_000
}
fn d_series_rows() -> u64 {
    5_000_000
}
fn d_pcap_bytes() -> u64 {
    10 << 30
}

/// Limits of one scenario (raise any of them here).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    #[serde(default = "d_nodes")]
    pub max_nodes: u64,
    #[serde(default = "d_links")]
    pub max_links: u64,
    /// Flows of the run, those that flows and sessions derive included.
    #[serde(default = "d_flows")]
    pub max_flows: u64,
    /// Members of one RTP session (each keeps a table of all the others).
    #[serde(default = "d_rtp_members")]
    pub max_rtp_members: u64,
    /// Rows of the per-hop trace; recording stops there (meta.trace_truncated).
    #[serde(default = "d_trace_rows")]
    pub max_trace_rows: u64,
    /// Rows of the queue samples (one per link direction per sample);
    /// sampling stops there (meta.queue_samples_truncated).
    #[serde(default = "d_queue_sample_rows")]
    pub max_queue_sample_rows: u64,
    /// Rows of each time series (one variable of one flow, with
    /// measure.series); it stops there (meta.series_truncated).
    #[serde(default = "d_series_rows")]
    pub max_series_rows: u64,
    /// Bytes of all pcap files together; capture stops there
    /// (meta.pcap_truncated), the files stay valid.
    #[serde(default = "d_pcap_bytes")]
    pub max_pcap_bytes: u64,
}

impl Default for LimitsSpec {
    fn default() -> Self {
        LimitsSpec {
            max_nodes: d_nodes(),
            max_links: d_links(),
            max_flows: d_flows(),
            max_rtp_members: d_rtp_members(),
            max_trace_rows: d_trace_rows(),
            max_queue_sample_rows: d_queue_sample_rows(),
            max_series_rows: d_series_rows(),
            max_pcap_bytes: d_pcap_bytes(),
        }
    }
}

/// The scenario's sizes against its limits.
pub fn check(s: &Scenario, c: &mut Checker) {
    let l = &s.limits;
    let over = |c: &mut Checker, path: &str, n: u64, limit: u64, field: &str, what: &str| {
        if n > limit {
            let msg = format!(
                "{n} {what}, more than limits.{field} = {limit} (raise it there if this is meant)"
            );
            c.err(path, msg);
        }
    };
    over(
        c,
        "nodes",
        s.nodes.len() as u64,
        l.max_nodes,
        "max_nodes",
        "nodes",
    );
    over(
        c,
        "links",
        s.links.len() as u64,
        l.max_links,
        "max_links",
        "links",
    );
    over(
        c,
        "flows",
        s.flow_count() as u64,
        l.max_flows,
        "max_flows",
        "flows (derived ones included)",
    );
    for (i, r) in s.rtp_sessions.iter().enumerate() {
        let path = format!("rtp_sessions[{i}].members");
        over(
            c,
            &path,
            r.members.len() as u64,
            l.max_rtp_members,
            "max_rtp_members",
            "members",
        );
    }
    for (f, v) in [
        ("max_nodes", l.max_nodes),
        ("max_links", l.max_links),
        ("max_flows", l.max_flows),
        ("max_rtp_members", l.max_rtp_members),
        ("max_queue_sample_rows", l.max_queue_sample_rows),
        ("max_series_rows", l.max_series_rows),
    ] {
        c.at_least_one(format_args!("limits.{f}"), Some(v));
    }
}
