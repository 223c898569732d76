//! RMTP sessions in scenarios: the sender, the subgroups (a DR, its
//! receivers, and the DR above it if any), the study's timers and window
//! rule, and their checks. Construction is in `build.rs`.

use std::collections::{HashMap, HashSet};

use crate::app::session::SessionModel;
use crate::proto::rmtp::RmtpConfig;
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope, MAX_DELAY_MS};
use schemars::JsonSchema;
use serde::Deserialize;

fn d_data_bytes() -> u32 {
    500
}
fn d_send_interval() -> f64 {
    2000.0
}
fn d_rcv_hack() -> f64 {
    300.0
}
fn d_dr_hack() -> f64 {
    800.0
}
fn d_ws() -> u32 {
    10
}
fn d_cong_c() -> u32 {
    30
}
fn d_cong_a() -> u32 {
    20
}
fn d_one() -> u32 {
    1
}
fn d_dr_buffer() -> u32 {
    500
}

/// How the window opens when few packets were lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WindowGrowth {
    /// cwnd + 1 per send interval (the study's text).
    #[default]
    Linear,
    /// cwnd x 2 per send interval.
    Doubling,
}

/// A reliable multicast session (RMTP, docs/models/rmtp.md): data from
/// `sender` on a group channel to every DR and receiver, local repairs
/// from each DR to its subgroup, HACKs up the tree.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RmtpSessionSpec {
    /// Unique session name (no '/').
    pub name: String,
    pub sender: String,
    pub subgroups: Vec<RmtpSubgroupSpec>,
    #[serde(default)]
    pub start_s: f64,
    /// No new data from this time on (default: the end of the run);
    /// retransmissions and repairs go on.
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// Data packet size on the wire (IP, UDP and the 16-byte RMTP header
    /// included). Chosen: 500.
    #[serde(default = "d_data_bytes")]
    pub data_packet_bytes: u32,
    #[serde(default = "d_send_interval")]
    pub send_interval_ms: f64,
    /// Receivers' HACK period (Rcv_hack_int).
    #[serde(default = "d_rcv_hack")]
    pub rcv_hack_interval_ms: f64,
    /// DRs' HACK period towards their parent (DR_hack_int).
    #[serde(default = "d_dr_hack")]
    pub dr_hack_interval_ms: f64,
    /// DRs' repair rounds (default: rcv_hack_interval_ms).
    #[serde(default)]
    pub repair_interval_ms: Option<f64>,
    /// Window ceiling Ws, packets per send interval.
    #[serde(default = "d_ws")]
    pub ws: u32,
    #[serde(default = "d_cong_c")]
    pub cong_c: u32,
    #[serde(default = "d_cong_a")]
    pub cong_a: u32,
    #[serde(default = "d_one")]
    pub initial_window: u32,
    #[serde(default)]
    pub window_growth: WindowGrowth,
    /// DR final buffer, packets.
    #[serde(default = "d_dr_buffer")]
    pub dr_buffer_packets: u32,
    /// A DR does not repair the same packet again within this time of its
    /// last repair (default 0: every round repairs what was asked for,
    /// as the study's DRs do).
    #[serde(default)]
    pub dr_repair_holdoff_ms: f64,
    /// What a DR's HACK to its parent acknowledges.
    #[serde(default)]
    pub dr_acknowledges: DrAcknowledges,
}

/// What a DR's HACK to its parent acknowledges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DrAcknowledges {
    /// What it and every child below it have: the HACK aggregates the
    /// subgroup's, so the parent retransmits what any member still misses
    /// (the study's original agents).
    #[default]
    Subgroup,
    /// What it has and either holds in its final buffer or knows every
    /// child has: the DR takes custody of the repairs it can make.
    Custody,
}

/// A DR and the nodes it serves.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RmtpSubgroupSpec {
    pub dr: String,
    #[serde(default)]
    pub receivers: Vec<String>,
    /// The DR above this one (default: none, it reports to the sender).
    #[serde(default)]
    pub parent: Option<String>,
}

impl RmtpSessionSpec {
    pub fn config(&self) -> RmtpConfig {
        RmtpConfig {
            ws: self.ws,
            cong_c: self.cong_c,
            cong_a: self.cong_a,
            initial_window: self.initial_window,
            doubling: self.window_growth == WindowGrowth::Doubling,
        }
    }

    pub fn repair_interval_ms(&self) -> f64 {
        self.repair_interval_ms.unwrap_or(self.rcv_hack_interval_ms)
    }

    /// Index of each DR's subgroup.
    pub fn dr_index(&self) -> HashMap<&str, usize> {
        (self.subgroups.iter().enumerate())
            .map(|(i, g)| (g.dr.as_str(), i))
            .collect()
    }
}

impl SessionModel for RmtpSessionSpec {
    fn name(&self) -> &str {
        &self.name
    }

    /// "<session>/data" and "<session>/retx" (the sender), then per
    /// subgroup "<session>/<dr>/repair" and "<session>/<dr>/hack", then
    /// "<session>/<receiver>/hack" for its receivers.
    fn flow_names(&self) -> Vec<String> {
        let s = &self.name;
        let mut v = vec![format!("{s}/data"), format!("{s}/retx")];
        for g in &self.subgroups {
            v.push(format!("{s}/{}/repair", g.dr));
            v.push(format!("{s}/{}/hack", g.dr));
            v.extend(g.receivers.iter().map(|r| format!("{s}/{r}/hack")));
        }
        v
    }

    fn validate(&self, p: &str, scope: &Scope<'_>, c: &mut Checker) {
        self.validate_members(p, scope, c);
        self.validate_parents(p, c);
        c.wire_bytes(
            format_args!("{p}.data_packet_bytes"),
            self.data_packet_bytes,
            44,
        );
        for (f, v) in [
            ("send_interval_ms", self.send_interval_ms),
            ("rcv_hack_interval_ms", self.rcv_hack_interval_ms),
            ("dr_hack_interval_ms", self.dr_hack_interval_ms),
            ("repair_interval_ms", self.repair_interval_ms()),
        ] {
            c.positive(format_args!("{p}.{f}"), v);
            c.at_most(format_args!("{p}.{f}"), v, MAX_DELAY_MS);
            if v.is_finite() && v > 0.0 && v < 1e-3 {
                c.err(
                    format!("{p}.{f}"),
                    format!("must be at least 1 us (got {v} ms)"),
                );
            }
        }
        c.non_negative(
            format_args!("{p}.dr_repair_holdoff_ms"),
            self.dr_repair_holdoff_ms,
        );
        c.at_most(
            format_args!("{p}.dr_repair_holdoff_ms"),
            self.dr_repair_holdoff_ms,
            MAX_DELAY_MS,
        );
        for (f, v) in [("ws", self.ws), ("initial_window", self.initial_window)] {
            c.at_least_one(format_args!("{p}.{f}"), Some(v as u64));
        }
        if self.initial_window > self.ws {
            let msg = format!(
                "must be at most ws = {} (got {})",
                self.ws, self.initial_window
            );
            c.err(format!("{p}.initial_window"), msg);
        }
        if self.cong_a > self.cong_c {
            let msg = format!(
                "must be at most cong_c = {} (got {})",
                self.cong_c, self.cong_a
            );
            c.err(format!("{p}.cong_a"), msg);
        }
        c.non_negative(format_args!("{p}.start_s"), self.start_s);
        if self.start_s.is_finite() && self.start_s >= scope.duration_s {
            c.err(format!("{p}.start_s"), "must be before the end of the run");
        }
        if let Some(stop) = self.stop_s {
            if !stop.is_finite() || stop <= self.start_s {
                let msg = format!("must be after start_s = {}", self.start_s);
                c.err(format!("{p}.stop_s"), msg);
            }
        }
    }

    fn build(&self, k: usize, p: &str, ctx: &mut BuildCtx<'_>) {
        super::build::build_session(self, k, p, ctx);
    }
}

impl RmtpSessionSpec {
    /// Every node known and in at most one role.
    fn validate_members(&self, p: &str, scope: &Scope<'_>, c: &mut Checker) {
        if self.subgroups.is_empty() {
            c.err(format!("{p}.subgroups"), "a session needs at least one DR");
        }
        let mut seen = HashSet::new();
        let mut check = |c: &mut Checker, path: String, n: &str| {
            if scope.node(c, &path, n) && !seen.insert(n.to_string()) {
                c.err(path, format!("\"{n}\" already has a role in this session"));
            }
        };
        check(c, format!("{p}.sender"), &self.sender);
        for (i, g) in self.subgroups.iter().enumerate() {
            check(c, format!("{p}.subgroups[{i}].dr"), &g.dr);
            for (j, r) in g.receivers.iter().enumerate() {
                check(c, format!("{p}.subgroups[{i}].receivers[{j}]"), r);
            }
        }
    }

    /// Parents are DRs of this session, and the DR tree has no cycle.
    fn validate_parents(&self, p: &str, c: &mut Checker) {
        let idx = self.dr_index();
        for (i, g) in self.subgroups.iter().enumerate() {
            let Some(parent) = &g.parent else { continue };
            let path = format!("{p}.subgroups[{i}].parent");
            if !idx.contains_key(parent.as_str()) {
                c.err(path, format!("\"{parent}\" is not a DR of this session"));
                continue;
            }
            let mut at = i;
            for _ in 0..=self.subgroups.len() {
                match &self.subgroups[at].parent {
                    Some(up) => match idx.get(up.as_str()) {
                        Some(&u) => at = u,
                        None => break,
                    },
                    None => break,
                }
                if at == i {
                    c.err(path, "DR parents form a cycle");
                    break;
                }
            }
        }
    }
}
