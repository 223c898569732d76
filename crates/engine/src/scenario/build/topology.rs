//! Nodes, link directions (each with its queue and loss model), the
//! routing graph and the unicast routing table.

use super::super::document::{DirSpec, LinkSpec, RouteMetric, Scenario};
use crate::loss::LossSpec;
use crate::net::addr::node_addr;
use crate::net::routes::RouteTable;
use crate::net::routing::Graph;
use crate::net::{LinkDirId, NodeId};
use crate::queue::{build_queue, QueueSite};
use crate::sim::{RngStreams, SimTime};
use crate::world::topology::{LinkDir, Node};
use crate::world::Topology;
use rustc_hash::FxHashMap as HashMap;

/// Builds the topology; `flow_id` maps flow names (for explicit losses).
pub fn build(s: &Scenario, rng: &RngStreams, flow_id: &dyn Fn(&str) -> u32) -> Topology {
    let node_id: HashMap<&str, NodeId> = (s.nodes.iter().enumerate())
        .map(|(i, n)| (n.name.as_str(), i as NodeId))
        .collect();
    let mut nodes: Vec<Node> = (s.nodes.iter().enumerate())
        .map(|(i, n)| Node {
            name: n.name.clone(),
            out: Vec::new(),
            receiver_loss: n.receiver_loss.as_ref().map(|l| {
                let stream = format!("node:{}:receiver_loss", n.name);
                build_loss(l, rng, &stream, flow_id)
            }),
            addr: node_addr(i as u32),
        })
        .collect();
    let mut links: Vec<LinkDir> = Vec::with_capacity(2 * s.links.len());
    let mut link_names = Vec::with_capacity(s.links.len());
    let no_overrides = DirSpec::default();
    for (i, l) in s.links.iter().enumerate() {
        let name = l.display_name().into_owned();
        for (from, to, dir) in [(&l.a, &l.b, &l.ab), (&l.b, &l.a, &l.ba)] {
            let (f, t) = (node_id[from.as_str()], node_id[to.as_str()]);
            nodes[f as usize].out.push(links.len() as LinkDirId);
            // One allocation (`concat`), not `format!`: a dumbbell of 256
            // flows names 1,030 directions.
            let dname = [name.as_str(), ":", from, "->", to].concat();
            let dir = dir.as_deref().unwrap_or(&no_overrides);
            let ends = LinkEnds {
                link: i as u32,
                from: f,
                to: t,
            };
            links.push(link_dir(s, l, dir, ends, dname, rng, flow_id));
        }
        link_names.push(name);
    }
    let graph = Graph {
        adj: (nodes.iter())
            .map(|n| {
                (n.out.iter())
                    .map(|&ld| (ld, links[ld as usize].to, links[ld as usize].cost))
                    .collect()
            })
            .collect(),
    };
    let routes = routes(s, &node_id, &nodes, &links, &graph);
    Topology {
        nodes,
        links,
        link_names,
        graph,
        routes,
    }
}

fn build_loss(
    spec: &LossSpec,
    rng: &RngStreams,
    stream: &str,
    flow_id: &dyn Fn(&str) -> u32,
) -> Box<dyn crate::loss::LossModel> {
    spec.model().build(rng.stream(stream), flow_id)
}

/// Which link a direction belongs to, and its ends.
struct LinkEnds {
    link: u32,
    from: NodeId,
    to: NodeId,
}

/// One direction of link `l`, with the direction's overrides `d`.
fn link_dir(
    s: &Scenario,
    l: &LinkSpec,
    d: &DirSpec,
    ends: LinkEnds,
    name: String,
    rng: &RngStreams,
    flow_id: &dyn Fn(&str) -> u32,
) -> LinkDir {
    let dd = l.dynamics(Some(d));
    // A changing delay routes by its value at time zero.
    let delay_ms = dd.delay_ms.initial();
    let cost = d.cost.or(l.cost).unwrap_or(match s.routing.metric {
        RouteMetric::Hops => 1.0,
        RouteMetric::Delay => delay_ms,
    });
    let loss = (d.loss.as_ref().or(l.loss.as_ref()))
        .map(|x| build_loss(x, rng, &format!("link:{name}:loss"), flow_id));
    let dynamics = dd.changes().then(|| Box::new(dd.build(rng, &name)));
    // The rate the queue discipline is built for (RED's idle-time
    // estimate): the rate at time zero, or a trace's mean.
    let rate_bps = match (dd.trace, dd.rate_bps) {
        (Some(t), _) => t.build().mean_rate_bps().round() as u64,
        (None, Some(r)) => r.initial().round() as u64,
        (None, None) => unreachable!("validated: a rate or a trace"),
    };
    let site = QueueSite {
        rng,
        name: &name,
        rate_bps,
    };
    let queue = build_queue(d.queue.as_ref().or(l.queue.as_ref()), &site);
    LinkDir {
        name,
        link: ends.link,
        from: ends.from,
        to: ends.to,
        rate_bps,
        ns_per_bit: exact_ns_per_bit(rate_bps),
        delay: SimTime::from_millis_f64(delay_ms),
        queue,
        loss,
        cost,
        busy_until: SimTime::ZERO,
        done_pending: false,
        dynamic: dynamics.is_some(),
        cut: false,
        dynamics,
        in_transit: Default::default(),
        tx_carry: 0,
        busy_ns: 0,
        lost_packets: 0,
    }
}

/// 1e9 / rate when that is a whole number (serialisation is then one exact
/// multiplication), else 0.
fn exact_ns_per_bit(rate_bps: u64) -> u64 {
    if rate_bps > 0 && 1_000_000_000 % rate_bps == 0 {
        1_000_000_000 / rate_bps
    } else {
        0
    }
}

/// Shortest-path routes, then the scenario's explicit routes over them.
fn routes(
    s: &Scenario,
    node_id: &HashMap<&str, NodeId>,
    nodes: &[Node],
    links: &[LinkDir],
    graph: &Graph,
) -> RouteTable {
    let from = links.iter().map(|l| l.from).collect();
    let mut routes = RouteTable::new(graph.clone(), from);
    for r in &s.routing.routes {
        let (a, b, dst) = (
            node_id[r.node.as_str()],
            node_id[r.next_hop.as_str()],
            node_id[r.dst.as_str()],
        );
        let ld = (nodes[a as usize].out.iter().copied()).find(|&ld| links[ld as usize].to == b);
        routes.set(a, dst, ld);
    }
    routes
}

#[cfg(test)]
mod tests {
    use super::exact_ns_per_bit;
    use crate::sim::time::tx_time;

    /// The one-multiplication serialisation: only for rates that divide
    /// 10^9 (then the same times as the general rule, carry-free), 0 for
    /// the others and for a zero rate.
    #[test]
    fn whole_nanoseconds_per_bit_only_for_rates_dividing_a_second() {
        for (rate, ns) in [
            (1_000_000_000, 1),
            (1_000_000, 1000),
            (8_000_000, 125),
            (1, 1_000_000_000),
        ] {
            assert_eq!(exact_ns_per_bit(rate), ns, "{rate}");
            for bits in [1u64, 8 * 40, 8 * 1500, 8 * 65_535] {
                assert_eq!(tx_time(bits, rate, 0), (crate::sim::SimTime(bits * ns), 0));
            }
        }
        for rate in [0, 3_000_000, 2_000_000_000, 999_999_999] {
            assert_eq!(exact_ns_per_bit(rate), 0, "{rate}");
        }
    }
}
