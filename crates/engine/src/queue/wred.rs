//! Weighted RED for DiffServ assured forwarding (RFC 2597): one physical
//! FIFO, one average queue (RED's, `red_core.rs`), and a RED profile per
//! drop precedence chosen by the packet's DSCP. AFx1 packets get the
//! highest thresholds, AFx3 the lowest, so under load AFx3 goes first
//! (RFC 2597 section 2: "a lower drop precedence ... is less likely to be
//! dropped"). Each profile keeps its own count since its last drop.
//!
//! A packet whose DSCP no profile lists uses the profile with no `dscp`
//! list (the default), or else the last profile. Drops: `red_early`,
//! `red_forced`, `queue_overflow`; the queues table reports `red_avg` and
//! the drops of each profile (`wred_drops_<i>`).

use super::droptail::check_limits;
use super::fifo::Fifo;
use super::red::{admit, default_mean_packet_bytes, default_w_q, idle_seconds, queue_len};
use super::red_core::{Average, Dropper, Profile, Verdict};
use super::spec::{QueueModel, QueueSite};
use super::{QueueCtx, QueueDiscipline};
use crate::net::PacketRef;
use crate::scenario::check::Checker;
use crate::sim::SimRng;
use schemars::JsonSchema;
use serde::Deserialize;

/// One drop precedence: the DSCPs it serves and its RED thresholds.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WredProfile {
    /// DSCPs of this precedence (none: the default profile).
    #[serde(default)]
    #[schemars(inner(range(max = 63)))]
    pub dscp: Vec<u8>,
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    #[serde(default)]
    pub gentle: bool,
}

/// WRED: one queue, one average, a RED profile per drop precedence.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WredSpec {
    /// Profiles, e.g. AF11, AF12, AF13 (at least one).
    pub profiles: Vec<WredProfile>,
    #[serde(default = "default_w_q")]
    pub w_q: f64,
    #[serde(default)]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    #[serde(default)]
    pub wait: bool,
    #[serde(default)]
    pub queue_in_bytes: bool,
    #[serde(default = "default_mean_packet_bytes")]
    pub mean_packet_bytes: u32,
    #[serde(default)]
    pub ecn: bool,
}

impl super::spec::Drops for WredSpec {
    const DROP_REASONS: &'static [crate::net::DropReason] = super::red_core::DROP_REASONS;
}

impl QueueModel for WredSpec {
    fn validate(&self, path: &str, _rate_bps: f64, c: &mut Checker) {
        check_limits("wred", path, self.limit_packets, self.limit_bytes, c);
        if self.profiles.is_empty() || self.profiles.len() > MAX_PROFILES {
            let msg = format!(
                "give 1 to {MAX_PROFILES} profiles (got {})",
                self.profiles.len()
            );
            c.err(format!("{path}.profiles"), msg);
        }
        let mut seen = std::collections::HashSet::new();
        for (i, pr) in self.profiles.iter().enumerate() {
            let p = format!("{path}.profiles[{i}]");
            super::red::check_thresholds(&p, pr.min_th, pr.max_th, pr.max_p, c);
            for &d in &pr.dscp {
                if d > 63 {
                    c.err(format!("{p}.dscp"), format!("must be 0..=63 (got {d})"));
                } else if !seen.insert(d) {
                    c.err(format!("{p}.dscp"), format!("DSCP {d} is in two profiles"));
                }
            }
        }
        let defaults = self.profiles.iter().filter(|p| p.dscp.is_empty()).count();
        if defaults > 1 {
            c.err(
                format!("{path}.profiles"),
                "at most one profile without dscp (the default)",
            );
        }
        super::red::check_common(path, self.w_q, self.mean_packet_bytes, c);
    }
    fn build(&self, site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        Box::new(Wred::new(self, site.rate_bps, site.stream()))
    }
}

pub struct Wred {
    fifo: Fifo,
    queue_in_bytes: bool,
    ecn: bool,
    ewma: Average,
    profiles: Vec<(Profile, Dropper)>,
    /// Profile index per DSCP.
    by_dscp: [usize; 64],
    /// Per profile: packets dropped, bytes arrived, bytes dropped.
    drops: Vec<[u64; 3]>,
    rng: SimRng,
}

impl Wred {
    pub fn new(spec: &WredSpec, rate_bps: u64, rng: SimRng) -> Self {
        let default = (spec.profiles.iter())
            .position(|p| p.dscp.is_empty())
            .unwrap_or(spec.profiles.len().saturating_sub(1));
        let mut by_dscp = [default; 64];
        for (i, p) in spec.profiles.iter().enumerate() {
            for &d in &p.dscp {
                by_dscp[(d & 63) as usize] = i;
            }
        }
        let profile = |p: &WredProfile| Profile {
            min_th: p.min_th,
            max_th: p.max_th,
            max_p: p.max_p,
            gentle: p.gentle,
            wait: spec.wait,
            byte_mode: false,
            mean_packet_bytes: spec.mean_packet_bytes,
        };
        Wred {
            fifo: Fifo::new(spec.limit_packets.map(|x| x as usize), spec.limit_bytes),
            queue_in_bytes: spec.queue_in_bytes,
            ecn: spec.ecn,
            ewma: Average::new(spec.w_q, rate_bps, spec.mean_packet_bytes),
            profiles: (spec.profiles.iter())
                .map(|p| (profile(p), Dropper::default()))
                .collect(),
            by_dscp,
            drops: vec![[0; 3]; spec.profiles.len()],
            rng,
        }
    }
}

/// At most this many profiles (DiffServ AF has three precedences).
pub const MAX_PROFILES: usize = 8;

/// Names of the per-profile columns: packets dropped, bytes arrived, bytes
/// dropped (the byte loss ratio per code point).
const DROP_COLUMNS: [[&str; 3]; MAX_PROFILES] = [
    ["wred_drops_0", "wred_arrival_bytes_0", "wred_drop_bytes_0"],
    ["wred_drops_1", "wred_arrival_bytes_1", "wred_drop_bytes_1"],
    ["wred_drops_2", "wred_arrival_bytes_2", "wred_drop_bytes_2"],
    ["wred_drops_3", "wred_arrival_bytes_3", "wred_drop_bytes_3"],
    ["wred_drops_4", "wred_arrival_bytes_4", "wred_drop_bytes_4"],
    ["wred_drops_5", "wred_arrival_bytes_5", "wred_drop_bytes_5"],
    ["wred_drops_6", "wred_arrival_bytes_6", "wred_drop_bytes_6"],
    ["wred_drops_7", "wred_arrival_bytes_7", "wred_drop_bytes_7"],
];

impl QueueDiscipline for Wred {
    fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
        let q = queue_len(&self.fifo, self.queue_in_bytes);
        self.ewma.update(idle_seconds(ctx, &self.fifo), q);
        let p = &ctx.packets[pkt];
        let i = self.by_dscp[(p.dscp & 63) as usize];
        let size = p.size_bytes as u64;
        let (pr, dropper) = &mut self.profiles[i];
        let verdict = dropper.judge(pr, self.ewma.value, q, p, self.ecn, &mut self.rng);
        let dropped = matches!(verdict, Verdict::Drop(_));
        let overflow = admit(&mut self.fifo, pkt, verdict, ctx);
        if overflow {
            dropper.restart();
        }
        let lost = (dropped || overflow) as u64;
        let c = &mut self.drops[i];
        (c[0], c[1], c[2]) = (c[0] + lost, c[1] + size, c[2] + lost * size);
    }
    crate::fifo_queue_methods!();
    fn kind(&self) -> &'static str {
        "wred"
    }
    fn stats(&self) -> Vec<(&'static str, f64)> {
        let mut v = vec![("red_avg", self.ewma.value)];
        for (names, counts) in DROP_COLUMNS.iter().zip(&self.drops) {
            v.extend(names.iter().zip(counts).map(|(k, &d)| (*k, d as f64)));
        }
        v
    }
    fn sample(&self) -> Vec<(&'static str, f64)> {
        vec![("red_avg", self.ewma.value)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::pkt;
    use crate::queue::tests::TestQueue;
    use crate::sim::{RngStreams, SimTime};

    fn af1() -> WredSpec {
        let pr = |dscp: u8, min_th: f64, max_th: f64, max_p: f64| WredProfile {
            dscp: vec![dscp],
            min_th,
            max_th,
            max_p,
            gentle: false,
        };
        WredSpec {
            // AF11 (DSCP 10) 30-60, AF12 (12) 20-40, AF13 (14) 10-20.
            profiles: vec![
                pr(10, 30.0, 60.0, 0.02),
                pr(12, 20.0, 40.0, 0.05),
                pr(14, 10.0, 20.0, 0.1),
            ],
            w_q: 0.002,
            limit_packets: Some(100),
            limit_bytes: None,
            wait: false,
            queue_in_bytes: false,
            mean_packet_bytes: 1000,
            ecn: false,
        }
    }

    /// An overloaded link (arrivals twice the departures, equal thirds of
    /// AF11, AF12 and AF13): AF13 loses most, AF11 least.
    #[test]
    fn under_load_af13_drops_more_than_af12_more_than_af11() {
        let mut q = TestQueue::new(Box::new(Wred::new(
            &af1(),
            8_000_000,
            RngStreams::new(1, 0).stream("w"),
        )));
        let mut d = Vec::new();
        let mut lost = [0u64; 3];
        for s in 0..60_000u64 {
            let mut p = pkt(s, 1000);
            p.dscp = [10, 12, 14][(s % 3) as usize];
            q.enqueue(p, SimTime(s), &mut d);
            for (p, _) in d.drain(..) {
                lost[[10u8, 12, 14].iter().position(|&x| x == p.dscp).unwrap()] += 1;
            }
            if s % 2 == 0 {
                q.dequeue(SimTime(s), &mut d);
            }
        }
        assert!(lost[2] > lost[1] && lost[1] > lost[0], "{lost:?}");
        let stats: std::collections::HashMap<&str, f64> =
            q.discipline_stats().into_iter().collect();
        for (i, &l) in lost.iter().enumerate() {
            assert_eq!(stats[DROP_COLUMNS[i][0]], l as f64);
            assert_eq!(stats[DROP_COLUMNS[i][2]], l as f64 * 1000.0);
            assert_eq!(
                stats[DROP_COLUMNS[i][1]],
                20_000.0 * 1000.0,
                "a third of the arrivals"
            );
        }
        assert!(q.balanced());
    }

    #[test]
    fn unlisted_dscps_use_the_default_profile() {
        let mut spec = af1();
        spec.profiles[1].dscp.clear(); // AF12's profile becomes the default
        let w = Wred::new(&spec, 1_000_000, RngStreams::new(1, 0).stream("w"));
        assert_eq!(
            (w.by_dscp[0], w.by_dscp[10], w.by_dscp[14], w.by_dscp[46]),
            (1, 0, 2, 1)
        );
        let w = Wred::new(&af1(), 1_000_000, RngStreams::new(1, 0).stream("w"));
        assert_eq!(w.by_dscp[0], 2, "no default: the last profile");
    }

    #[test]
    fn bad_profiles_are_named() {
        let mut spec = af1();
        spec.profiles[0].max_th = 10.0; // below min_th 30
        spec.profiles[2].dscp = vec![10, 70]; // 10 twice; 70 out of range
        let default = WredProfile {
            dscp: vec![],
            min_th: 1.0,
            max_th: 2.0,
            max_p: 0.1,
            gentle: false,
        };
        spec.profiles.extend([default.clone(), default]); // two defaults
        let mut c = Checker::default();
        spec.validate("q", 1e6, &mut c);
        let msgs: Vec<String> = c.errs.iter().map(|e| e.to_string()).collect();
        for want in [
            "q.profiles[0].max_th: must be above min_th",
            "q.profiles[2].dscp: DSCP 10 is in two profiles",
            "q.profiles[2].dscp: must be 0..=63 (got 70)",
            "q.profiles: at most one profile without dscp",
        ] {
            assert!(
                msgs.iter().any(|m| m.starts_with(want)),
                "{want} not in {msgs:?}"
            );
        }
        let mut empty = af1();
        empty.profiles.clear();
        let mut c = Checker::default();
        empty.validate("q", 1e6, &mut c);
        assert!(c.errs.iter().any(|e| e.path == "q.profiles"));
    }

    /// At the bounds: 8 profiles, DSCP 63 and one default are valid; a
    /// ninth profile is not.
    #[test]
    fn a_spec_at_its_bounds_is_valid() {
        let mut spec = af1();
        spec.profiles = (0..MAX_PROFILES as u8)
            .map(|i| WredProfile {
                dscp: if i == 0 { vec![] } else { vec![56 + i] },
                min_th: 1.0,
                max_th: 2.0,
                max_p: 0.1,
                gentle: false,
            })
            .collect();
        assert_eq!(spec.profiles[7].dscp, [63]);
        let errors = |s: &WredSpec| {
            let mut c = Checker::default();
            s.validate("q", 1e6, &mut c);
            c.errs.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        };
        assert_eq!(errors(&spec), Vec::<String>::new());
        spec.profiles.push(spec.profiles[1].clone());
        spec.profiles[8].dscp = vec![1];
        assert_eq!(errors(&spec), ["q.profiles: give 1 to 8 profiles (got 9)"]);
    }

    /// The queue names itself and samples its average over time; its
    /// final figures add each profile's drops.
    #[test]
    fn the_queue_reports_its_kind_and_average() {
        let mut w = Wred::new(&af1(), 8_000_000, RngStreams::new(1, 0).stream("w"));
        w.ewma.value = 12.5;
        assert_eq!(w.kind(), "wred");
        assert_eq!(w.sample(), [("red_avg", 12.5)]);
        assert_eq!(w.stats()[0], ("red_avg", 12.5));
        assert_eq!(w.stats().len(), 1 + 3 * 3);
    }
}
