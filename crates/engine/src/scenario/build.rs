//! Turns a validated scenario into a [`World`].

use super::model::*;
use super::validate::FieldError;
use crate::app::{CbrSource, PacketTemplate, PoissonSource, Sink, StopRule};
use crate::loss::{
    BitErrorRate, ByteErrorRate, ExplicitLoss, GilbertElliott, LossModel, PacketLossRate,
};
use crate::measure::recorder::FlowMeta;
use crate::measure::Recorder;
use crate::net::routing::{multicast_tree, unicast_table, Graph};
use crate::net::topology::{group_addr, node_addr};
use crate::net::{Dest, LinkDir, LinkDirId, Node, NodeId, Transport};
use crate::queue::{DropTail, Queue};
use crate::sim::{RngStreams, SimTime};
use crate::world::{AppSlot, World};
use std::collections::HashMap;

/// Default transmit queue when a link gives none.
pub const DEFAULT_QUEUE_PACKETS: u64 = 100;

fn err(path: impl Into<String>, msg: impl Into<String>) -> FieldError {
    FieldError {
        path: path.into(),
        message: msg.into(),
    }
}

fn build_loss(
    spec: &LossSpec,
    rng: &RngStreams,
    stream: &str,
    flow_ids: &HashMap<&str, u32>,
) -> Box<dyn LossModel> {
    let r = rng.stream(stream);
    match spec {
        LossSpec::Packet { rate } => Box::new(PacketLossRate::new(*rate, r)),
        LossSpec::ByteError { rate } => Box::new(ByteErrorRate::new(*rate, r)),
        LossSpec::BitError { rate } => Box::new(BitErrorRate::new(*rate, r)),
        LossSpec::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_good,
            loss_bad,
        } => Box::new(GilbertElliott::new(
            *p_good_to_bad,
            *p_bad_to_good,
            loss_good.unwrap_or(0.0),
            loss_bad.unwrap_or(1.0),
            r,
        )),
        LossSpec::Explicit {
            ordinals,
            packets,
            windows_s,
        } => Box::new(ExplicitLoss::new(
            ordinals.clone(),
            packets
                .iter()
                .map(|p| (flow_ids[p.flow.as_str()], p.seq))
                .collect(),
            windows_s
                .iter()
                .map(|w| (SimTime::from_secs_f64(w[0]), SimTime::from_secs_f64(w[1])))
                .collect(),
        )),
    }
}

fn build_queue(spec: Option<&QueueSpec>) -> Queue {
    match spec {
        None => Queue::new(Box::new(DropTail::packets(DEFAULT_QUEUE_PACKETS as usize))),
        Some(QueueSpec::Droptail {
            limit_packets,
            limit_bytes,
        }) => Queue::new(Box::new(DropTail::new(
            limit_packets.map(|x| x as usize),
            *limit_bytes,
        ))),
    }
}

/// Builds the world for one (seed, replication). The scenario must have
/// passed [`super::validate::validate`]; remaining errors are the ones only
/// the built topology reveals (unreachable destinations, routing loops).
pub fn build(s: &Scenario, rng: &RngStreams) -> Result<World, Vec<FieldError>> {
    let node_id: HashMap<&str, NodeId> = s
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i as NodeId))
        .collect();
    let flow_ids: HashMap<&str, u32> = s
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i as u32))
        .collect();
    let mut errors = Vec::new();

    let mut nodes: Vec<Node> =
        s.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| Node {
                name: n.name.clone(),
                out: Vec::new(),
                receiver_loss: n.receiver_loss.as_ref().map(|l| {
                    build_loss(l, rng, &format!("node:{}:receiver_loss", n.name), &flow_ids)
                }),
                addr: node_addr(i as u32),
            })
            .collect();

    let mut links: Vec<LinkDir> = Vec::new();
    let mut link_names = Vec::new();
    for (i, l) in s.links.iter().enumerate() {
        let name = l.name.clone().unwrap_or_else(|| format!("{}-{}", l.a, l.b));
        for (from, to, d) in [(&l.a, &l.b, &l.ab), (&l.b, &l.a, &l.ba)] {
            let d = d.clone().unwrap_or_default();
            let delay_ms = d.delay_ms.unwrap_or(l.delay_ms);
            let cost = d.cost.or(l.cost).unwrap_or(match s.routing.metric {
                RouteMetric::Hops => 1.0,
                RouteMetric::Delay => delay_ms,
            });
            let dname = format!("{name}:{from}->{to}");
            let loss = d
                .loss
                .as_ref()
                .or(l.loss.as_ref())
                .map(|x| build_loss(x, rng, &format!("link:{dname}:loss"), &flow_ids));
            let (f, t) = (node_id[from.as_str()], node_id[to.as_str()]);
            nodes[f as usize].out.push(links.len() as LinkDirId);
            links.push(LinkDir {
                name: dname,
                link: i as u32,
                from: f,
                to: t,
                rate_bps: d.rate_bps.unwrap_or(l.rate_bps).round() as u64,
                delay: SimTime::from_millis_f64(delay_ms),
                queue: build_queue(d.queue.as_ref().or(l.queue.as_ref())),
                loss,
                cost,
                busy: false,
                tx_carry: 0,
                tx_packets: 0,
                tx_bytes: 0,
                busy_ns: 0,
                lost_packets: 0,
            });
        }
        link_names.push(name);
    }

    let graph = Graph {
        adj: nodes
            .iter()
            .map(|n| {
                n.out
                    .iter()
                    .map(|&ld| (ld, links[ld as usize].to, links[ld as usize].cost))
                    .collect()
            })
            .collect(),
    };
    let from_of = |ld: LinkDirId| links[ld as usize].from;
    let mut routes = unicast_table(&graph, from_of);
    for r in &s.routing.routes {
        let (a, b, dst) = (
            node_id[r.node.as_str()],
            node_id[r.next_hop.as_str()],
            node_id[r.dst.as_str()],
        );
        let ld = nodes[a as usize]
            .out
            .iter()
            .copied()
            .find(|&ld| links[ld as usize].to == b);
        routes[a as usize][dst as usize] = ld;
    }

    let group_id: HashMap<&str, u32> = s
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| (g.name.as_str(), i as u32))
        .collect();
    let group_members: Vec<Vec<NodeId>> = s
        .groups
        .iter()
        .map(|g| {
            let mut m: Vec<NodeId> = g.members.iter().map(|m| node_id[m.as_str()]).collect();
            m.sort_unstable();
            m.dedup();
            m
        })
        .collect();

    let horizon = SimTime::from_secs_f64(s.duration_s);
    let mut trees = Vec::new();
    let mut tree_of = HashMap::new();
    let mut apps: Vec<AppSlot> = Vec::new();
    let mut ports: Vec<Vec<(u16, u32)>> = vec![Vec::new(); nodes.len()];
    let mut metas = Vec::new();

    for (i, f) in s.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        let src = node_id[f.src.as_str()];
        let src_port = f.src_port.unwrap_or(10_000u16.wrapping_add(i as u16));
        let dst_port = f.dst_port.unwrap_or(20_000u16.wrapping_add(i as u16));
        let (dst, receivers) = if let Some(g) = &f.group {
            let gid = group_id[g.as_str()];
            let receivers: Vec<NodeId> = group_members[gid as usize]
                .iter()
                .copied()
                .filter(|&m| m != src)
                .collect();
            if !tree_of.contains_key(&(src, gid)) {
                let (tree, unreachable) =
                    multicast_tree(&graph, src, gid, &group_members[gid as usize], from_of);
                for u in unreachable {
                    errors.push(err(
                        format!("{p}.group"),
                        format!(
                            "member \"{}\" of group \"{g}\" is unreachable from \"{}\"",
                            nodes[u as usize].name, f.src
                        ),
                    ));
                }
                tree_of.insert((src, gid), trees.len() as u32);
                trees.push(tree);
            }
            (
                Dest::Group {
                    group: gid,
                    tree: tree_of[&(src, gid)],
                },
                receivers,
            )
        } else {
            let d = node_id[f.dst.as_deref().expect("validated")];
            // Walk the route: catches dead ends and loops (explicit routes).
            let mut at = src;
            let mut hops = 0;
            while at != d && hops <= nodes.len() {
                match routes[at as usize][d as usize] {
                    Some(ld) => at = links[ld as usize].to,
                    None => break,
                }
                hops += 1;
            }
            if at != d {
                let why = if hops > nodes.len() {
                    "routes loop"
                } else {
                    "no route"
                };
                errors.push(err(
                    format!("{p}.dst"),
                    format!("{why} from \"{}\" to \"{}\"", f.src, nodes[d as usize].name),
                ));
            }
            (Dest::Node(d), vec![d])
        };
        let tpl = PacketTemplate {
            flow: i as u32,
            dst,
            src_port,
            dst_port,
            dscp: f.dscp,
            payload_bytes: f.payload_bytes,
            transport: Transport::Udp,
        };
        let start = SimTime::from_secs_f64(f.start_s);
        let stop = f.stop_s.map_or(horizon, SimTime::from_secs_f64);
        let stop_rule = StopRule {
            stop,
            max_packets: f.max_packets,
        };
        let payload_bits = f.payload_bytes as f64 * 8.0;
        let app: Box<dyn crate::app::App> = match f.kind {
            FlowKind::Cbr => {
                let interval = match (f.interval_ms, f.rate_bps) {
                    (Some(ms), _) => SimTime::from_millis_f64(ms),
                    (None, Some(r)) => SimTime::from_secs_f64(payload_bits / r),
                    (None, None) => unreachable!("validated"),
                };
                if interval == SimTime::ZERO {
                    errors.push(err(
                        &p,
                        "packet interval rounds to 0 ns: rate too high for the packet size",
                    ));
                }
                Box::new(CbrSource::new(tpl, interval, stop_rule))
            }
            FlowKind::Poisson => {
                let pps = f
                    .rate_pps
                    .unwrap_or_else(|| f.rate_bps.expect("validated") / payload_bits);
                Box::new(PoissonSource::new(
                    tpl,
                    pps,
                    stop_rule,
                    rng.stream(&format!("flow:{}:arrivals", f.name)),
                ))
            }
        };
        apps.push(AppSlot {
            node: src,
            start,
            app,
        });
        for &r in &receivers {
            if !ports[r as usize].iter().any(|(port, _)| *port == dst_port) {
                ports[r as usize].push((dst_port, apps.len() as u32));
                apps.push(AppSlot {
                    node: r,
                    start,
                    app: Box::new(Sink),
                });
            }
        }
        metas.push(FlowMeta {
            name: f.name.clone(),
            kind: match f.kind {
                FlowKind::Cbr => "cbr",
                FlowKind::Poisson => "poisson",
            },
            src,
            receivers,
            start,
            stop,
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let rec = Recorder::new(metas, nodes.len(), s.measure.trace);
    let sample_every = s
        .measure
        .queue_sample_ms
        .map(SimTime::from_millis_f64)
        .filter(|t| *t > SimTime::ZERO);
    let group_addrs = (0..s.groups.len() as u32).map(group_addr).collect();
    Ok(World::new(
        nodes,
        links,
        link_names,
        routes,
        trees,
        tree_of,
        apps,
        ports,
        rec,
        horizon,
        sample_every,
        group_addrs,
    ))
}
