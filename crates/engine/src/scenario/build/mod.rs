//! Turns a validated scenario into a [`World`]: the topology first, then
//! every flow and session through its own model, then the recorder.

mod ctx;
mod topology;

pub use crate::world::Topology;
pub use ctx::{BuildCtx, PortClaim};

use super::check::FieldError;
use super::document::Scenario;
use crate::app::flow::build_flow;
use crate::measure::capacity::CapacityProbe;
use crate::measure::recorder::RecorderOptions;
use crate::measure::Recorder;
use crate::net::addr::group_addr;
use crate::net::{LinkDirId, NodeId};
use crate::sim::{RngStreams, SimTime};
use crate::world::{LinkDir, World};
use rustc_hash::FxHashMap as HashMap;

/// Builds the world for one (seed, replication). The scenario must have
/// passed [`super::validate::validate`]; remaining errors are the ones only
/// the built topology reveals (unreachable destinations, routing loops,
/// port collisions, intervals that round to zero).
pub fn build(s: &Scenario, rng: &RngStreams) -> Result<World, Vec<FieldError>> {
    let flow_id: HashMap<String, u32> = (s.flow_names().into_iter().enumerate())
        .map(|(i, n)| (n, i as u32))
        .collect();
    let topo = topology::build(s, rng, &|name| flow_id[name]);
    let horizon = SimTime::from_secs_f64(s.duration_s);
    let groups = scenario_groups(s, &topo.nodes);
    let mut ctx = BuildCtx::new(rng, horizon, topo, groups, flow_id);
    for (i, f) in s.flows.iter().enumerate() {
        build_flow(i, f, &mut ctx);
    }
    for r in s.sessions() {
        r.model.build(r.index, &r.path, &mut ctx);
    }
    if !ctx.errors.is_empty() {
        return Err(ctx.errors);
    }
    Ok(world(s, ctx))
}

/// The scenario's groups with their members (sorted, each once).
fn scenario_groups(
    s: &Scenario,
    nodes: &[crate::world::topology::Node],
) -> Vec<(String, Vec<NodeId>)> {
    let id: HashMap<&str, NodeId> = (nodes.iter().enumerate())
        .map(|(i, n)| (n.name.as_str(), i as NodeId))
        .collect();
    (s.groups.iter())
        .map(|g| {
            let mut m: Vec<NodeId> = g.members.iter().map(|m| id[m.as_str()]).collect();
            m.sort_unstable();
            m.dedup();
            (g.name.clone(), m)
        })
        .collect()
}

fn world(s: &Scenario, mut ctx: BuildCtx<'_>) -> World {
    let opts = RecorderOptions {
        trace_limit: s.limits.max_trace_rows,
        queue_sample_limit: s.limits.max_queue_sample_rows,
        trace: s.measure.trace,
        packet_log: s.measure.packets,
        series_log: s.measure.series,
        series_rows: s.limits.max_series_rows,
        warmup: SimTime::from_secs_f64(s.measure.warmup_s),
        windows: s.measure.windows(),
        reasons: crate::queue::spec::drop_reasons(),
    };
    for slot in &mut ctx.apps {
        slot.app.set_series(if s.measure.series {
            usize::try_from(s.limits.max_series_rows).unwrap_or(usize::MAX)
        } else {
            0
        });
    }
    let rec = Recorder::new(ctx.metas, ctx.nodes.len(), opts);
    let sample_every = (s.measure.queue_sample_ms)
        .map(SimTime::from_millis_f64)
        .filter(|t| *t > SimTime::ZERO);
    let group_addrs = (0..ctx.group_members.len() as u32)
        .map(group_addr)
        .collect();
    let capacity = capacity_probe(s, &ctx.links);
    let mut w = World::new(
        Topology {
            nodes: ctx.nodes,
            links: ctx.links,
            link_names: ctx.link_names,
            graph: ctx.graph,
            routes: ctx.routes,
        },
        ctx.trees,
        ctx.tree_of,
        ctx.apps,
        ctx.ports,
        rec,
        ctx.horizon,
        sample_every,
        group_addrs,
    );
    w.capacity = capacity;
    w
}

/// What `measure.capacity_interval_ms` asks for: every direction when it
/// is given (0: none), else the changing ones every 100 ms.
fn capacity_probe(s: &Scenario, links: &[LinkDir]) -> Option<CapacityProbe> {
    let (every_ms, all) = match s.measure.capacity_interval_ms {
        Some(x) => (x, true),
        None => (DEFAULT_CAPACITY_INTERVAL_MS, false),
    };
    let dirs: Vec<LinkDirId> = (0..links.len() as LinkDirId)
        .filter(|&ld| all || links[ld as usize].dynamic)
        .collect();
    (every_ms > 0.0 && !dirs.is_empty()).then(|| {
        CapacityProbe::new(
            SimTime::from_millis_f64(every_ms),
            dirs,
            s.limits.max_queue_sample_rows,
        )
    })
}

/// The capacity sampling interval of changing links unless one is given.
pub const DEFAULT_CAPACITY_INTERVAL_MS: f64 = 100.0;

#[cfg(test)]
mod tests {
    use crate::app::testing::{numbers, run_text};

    /// The link_capacity table's (direction, time in ms) rows of a 1 s run
    /// of a static link and one whose rate changes at 0.5 s, with `measure`
    /// (fields of the measure object).
    fn capacity_rows(measure: &str) -> Vec<(u64, u64)> {
        let text = format!(
            r#"{{"duration_s": 1, "nodes": [{{"name": "a"}}, {{"name": "b"}}, {{"name": "c"}}],
            "links": [{{"a": "a", "b": "b", "rate_bps": [[0, 2e6], [0.5, 1e6]], "delay_ms": 1}},
                      {{"a": "b", "b": "c", "rate_bps": 1e6, "delay_ms": 1}}],
            "measure": {{{measure}}}}}"#
        );
        let out = run_text(&text);
        let dir = numbers(&out, "link_capacity", "link_dir");
        let t = numbers(&out, "link_capacity", "time_ns");
        (dir.iter().zip(&t))
            .map(|(&d, &t)| (d as u64, (t / 1e6).round() as u64))
            .collect()
    }

    /// Capacity is sampled every 100 ms on the directions that change
    /// unless `capacity_interval_ms` is given: then on every direction at
    /// that interval, or on none at 0.
    #[test]
    fn capacity_is_sampled_where_and_as_often_as_asked() {
        // The changing link's two directions (0 and 1) at the end of each
        // interval; the static link's (2 and 3) only when asked.
        let every = |ms: u64, dirs: u64| -> Vec<(u64, u64)> {
            (1..=1000 / ms)
                .flat_map(|i| (0..dirs).map(move |d| (d, i * ms)))
                .collect()
        };
        assert_eq!(capacity_rows(""), every(100, 2));
        let rows = capacity_rows(r#""capacity_interval_ms": 250"#);
        assert_eq!(rows, every(250, 4));
        assert!(capacity_rows(r#""capacity_interval_ms": 0"#).is_empty());
    }

    /// Each group, the scenario's and those its multicast sessions make,
    /// is its own: from a (the hub of a star to b, c and d), flows to
    /// groups {b} and {c} reach only their members, and multicast RTP
    /// sessions of {a, b} and {a, c, d} only theirs.
    #[test]
    fn each_group_reaches_only_its_members() {
        let text = r#"{"duration_s": 1,
            "nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}],
            "links": [{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 1},
                      {"a": "a", "b": "c", "rate_bps": 1e7, "delay_ms": 1},
                      {"a": "a", "b": "d", "rate_bps": 1e7, "delay_ms": 1}],
            "groups": [{"name": "g1", "members": ["b"]}, {"name": "g2", "members": ["c"]}],
            "flows": [
                {"name": "f1", "type": "cbr", "src": "a", "group": "g1", "payload_bytes": 100, "interval_ms": 10},
                {"name": "f2", "type": "cbr", "src": "a", "group": "g2", "payload_bytes": 100, "interval_ms": 10}],
            "rtp_sessions": [
                {"name": "s1", "session_bw_bps": 1e5, "media_payload_bytes": 100,
                 "members": [{"node": "a", "media": true}, {"node": "b"}]},
                {"name": "s2", "session_bw_bps": 1e5, "media_payload_bytes": 100,
                 "members": [{"node": "a", "media": true}, {"node": "c"}, {"node": "d"}]}]}"#;
        let out = run_text(text);
        let flows = crate::app::testing::names(&out, "flows", "flow");
        let receivers = crate::app::testing::names(&out, "flows", "receiver");
        let received = numbers(&out, "flows", "received");
        let got = |flow: &str| -> Vec<(String, bool)> {
            (0..flows.len())
                .filter(|&i| flows[i] == flow)
                .map(|i| (receivers[i].clone(), received[i] > 0.0))
                .collect()
        };
        let yes = |n: &[&str]| -> Vec<(String, bool)> {
            n.iter().map(|x| (x.to_string(), true)).collect()
        };
        assert_eq!(got("f1"), yes(&["b"]));
        assert_eq!(got("f2"), yes(&["c"]));
        assert_eq!(got("s1/a/rtp"), yes(&["b"]));
        assert_eq!(got("s2/a/rtp"), yes(&["c", "d"]));
    }

    /// A BuildCtx of nodes a..e with `links` ([a, b] pairs) and the group
    /// g of `members`.
    fn ctx_of<'a>(
        rng: &'a crate::sim::RngStreams,
        links: &[(&str, &str)],
        members: &[&str],
    ) -> super::BuildCtx<'a> {
        let links: Vec<String> = (links.iter())
            .map(|(a, b)| format!(r#"{{"a": "{a}", "b": "{b}", "rate_bps": 1e7, "delay_ms": 1}}"#))
            .collect();
        let members: Vec<String> = members.iter().map(|m| format!("\"{m}\"")).collect();
        let text = format!(
            r#"{{"duration_s": 1,
            "nodes": [{{"name": "a"}}, {{"name": "b"}}, {{"name": "c"}}, {{"name": "d"}}, {{"name": "e"}}],
            "links": [{}], "groups": [{{"name": "g", "members": [{}]}}]}}"#,
            links.join(", "),
            members.join(", ")
        );
        let s = crate::scenario::parse_and_validate(&text).expect("a valid scenario");
        let topo = super::topology::build(&s, rng, &|_| 0);
        let groups = super::scenario_groups(&s, &topo.nodes);
        let horizon = crate::sim::SimTime::from_secs(1);
        super::BuildCtx::new(rng, horizon, topo, groups, Default::default())
    }

    /// Per sender (node), whether its tree is the group's shared one, the
    /// index it got, and how many members it was told it cannot reach.
    fn trees_of(ctx: &mut super::BuildCtx<'_>, senders: &[u32]) -> Vec<(bool, u32, usize)> {
        let members = ctx.group_members[0].clone();
        (senders.iter())
            .map(|&n| {
                let (i, unreachable) = ctx.tree(n, 0, &members);
                let shared = matches!(ctx.trees[i as usize], crate::net::mcast::Tree::Shared(_));
                (shared, i, unreachable.len())
            })
            .collect()
    }

    /// A group's senders share one tree only on a forest, when the sender
    /// is a member and every member is in one component; otherwise each
    /// sender gets its own, once (net/mcast.rs).
    #[test]
    fn senders_share_a_tree_only_where_it_takes_their_own_links() {
        let rng = crate::sim::RngStreams::new(1, 0);
        // A star a-{b, c, d} and e alone: the members a, b and c share
        // one tree, asked twice by a; d, not a member, gets its own.
        let star = [("a", "b"), ("a", "c"), ("a", "d")];
        let mut ctx = ctx_of(&rng, &star, &["a", "b", "c"]);
        let got = trees_of(&mut ctx, &[0, 1, 0, 3, 2]);
        let want = [
            (true, 0, 0),
            (true, 0, 0),
            (true, 0, 0),
            (false, 1, 0),
            (true, 0, 0),
        ];
        assert_eq!(got, want);
        assert_eq!(ctx.trees.len(), 2);
        // The first sender not a member: its own tree, and the members
        // still share the next one.
        let mut ctx = ctx_of(&rng, &star, &["a", "b", "c"]);
        let got = trees_of(&mut ctx, &[3, 1, 2]);
        assert_eq!(got, [(false, 0, 0), (true, 1, 0), (true, 1, 0)]);
        // Members in two components: a tree per sender, which tells the
        // members it cannot reach once, when built.
        let two = [("a", "b"), ("a", "c"), ("d", "e")];
        let mut ctx = ctx_of(&rng, &two, &["a", "b", "d", "e"]);
        let got = trees_of(&mut ctx, &[0, 1, 1]);
        assert_eq!(got, [(false, 0, 2), (false, 1, 2), (false, 1, 0)]);
        // A cycle a-b-c: a tree per sender.
        let ring = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")];
        let mut ctx = ctx_of(&rng, &ring, &["a", "b", "c"]);
        let got = trees_of(&mut ctx, &[0, 1, 2]);
        assert_eq!(got, [(false, 0, 0), (false, 1, 0), (false, 2, 0)]);
    }

    /// Groups are numbered in order: the scenario's first, then each new
    /// one (a multicast session's) the next number, with its members.
    #[test]
    fn a_new_group_takes_the_next_number() {
        let text = r#"{"duration_s": 1, "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 1}],
            "groups": [{"name": "g1", "members": ["b", "a", "b"]}, {"name": "g2", "members": ["b"]}]}"#;
        let s = crate::scenario::parse_and_validate(text).expect("a valid scenario");
        let rng = crate::sim::RngStreams::new(1, 0);
        let topo = super::topology::build(&s, &rng, &|_| 0);
        let groups = super::scenario_groups(&s, &topo.nodes);
        assert_eq!(
            groups[0],
            ("g1".to_string(), vec![0, 1]),
            "sorted, each once"
        );
        let horizon = crate::sim::SimTime::from_secs(1);
        let mut ctx = super::BuildCtx::new(&rng, horizon, topo, groups, Default::default());
        assert_eq!((ctx.group("g1"), ctx.group("g2")), (0, 1));
        assert_eq!(ctx.new_group(&[0, 1]), 2);
        assert_eq!(ctx.new_group(&[1]), 3);
        assert_eq!(
            ctx.group_members,
            [vec![0, 1], vec![1], vec![0, 1], vec![1]]
        );
    }
}
