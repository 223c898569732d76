//! Turns a validated scenario into a [`World`].

use super::model::*;
use super::validate::FieldError;
use crate::app::rtp::{MediaConfig, NewpredConfig, RtpMember};
use crate::app::{CbrSource, PacketTemplate, PoissonSource, Sink, StopRule, TcpSink, TcpSource};
use crate::loss::{
    BitErrorRate, ByteErrorRate, ExplicitLoss, GilbertElliott, LossModel, PacketLossRate,
};
use crate::measure::recorder::FlowMeta;
use crate::measure::Recorder;
use crate::net::routing::{multicast_tree, unicast_table, Graph, McastTree};
use crate::net::topology::{group_addr, node_addr};
use crate::net::{Dest, LinkDir, LinkDirId, Node, NodeId, Transport};
use crate::proto::rtp::{AvpfConfig, DitherRule, RtcpScheduler, RtcpTiming, TimingConfig};
use crate::proto::tcp::{Flavor, InitialWindow, NewRenoRecovery, TcpConfig};
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

/// The TCP configuration of a flow: scenario options over RFC defaults.
pub fn tcp_config(t: Option<&TcpSpec>, finite: bool) -> TcpConfig {
    let d = TcpConfig::default();
    let Some(t) = t else {
        return TcpConfig {
            handshake: finite,
            ..d
        };
    };
    let ms = |x: Option<f64>, def: SimTime| x.map_or(def, SimTime::from_millis_f64);
    TcpConfig {
        flavor: match t.flavor {
            TcpFlavor::Reno => Flavor::Reno,
            TcpFlavor::Newreno => Flavor::NewReno,
            TcpFlavor::Sack => Flavor::Sack,
        },
        mss: t.mss_bytes.unwrap_or(d.mss),
        initial_window: match t.initial_window {
            None | Some(InitialWindowSpec::Named(InitialWindowName::Rfc3390)) => {
                InitialWindow::Rfc3390
            }
            Some(InitialWindowSpec::Segments(n)) => InitialWindow::Segments(n),
        },
        max_window_packets: t.max_window_packets,
        rwnd_bytes: t.rwnd_bytes.unwrap_or(d.rwnd_bytes),
        initial_rto: ms(t.initial_rto_ms, d.initial_rto),
        min_rto: ms(t.min_rto_ms, d.min_rto),
        max_rto: ms(t.max_rto_ms, d.max_rto),
        clock_granularity: d.clock_granularity,
        dupthresh: t.dupthresh.unwrap_or(d.dupthresh),
        limited_transmit: t.limited_transmit.unwrap_or(d.limited_transmit),
        newreno_impatient: t.newreno_timer.unwrap_or_default() == NewRenoTimer::Impatient,
        newreno_recovery: match t.newreno_recovery.unwrap_or_default() {
            NewRenoRecoverySpec::Rfc6582 => NewRenoRecovery::Rfc6582,
            NewRenoRecoverySpec::Ns2 => NewRenoRecovery::Ns2,
        },
        handshake: t.handshake.unwrap_or(finite),
        delayed_ack: t.delayed_ack.unwrap_or(d.delayed_ack),
        delack_timeout: ms(t.delack_timeout_ms, d.delack_timeout),
    }
}

/// The multicast tree of (`root`, group `gid`) over `members`, built on
/// first use. Returns its index, and (when just built) the members it
/// cannot reach.
fn tree_index(
    trees: &mut Vec<McastTree>,
    tree_of: &mut HashMap<(NodeId, u32), u32>,
    graph: &Graph,
    root: NodeId,
    gid: u32,
    members: &[NodeId],
    from_of: impl Fn(LinkDirId) -> NodeId,
) -> (u32, Vec<NodeId>) {
    if let Some(&i) = tree_of.get(&(root, gid)) {
        return (i, Vec::new());
    }
    let (tree, unreachable) = multicast_tree(graph, root, gid, members, from_of);
    let i = trees.len() as u32;
    tree_of.insert((root, gid), i);
    trees.push(tree);
    (i, unreachable)
}

/// Walks the unicast route from `a` to `b`: a dead end or a loop (possible
/// with explicit routes) is reported.
fn route_problem(
    routes: &[Vec<Option<LinkDirId>>],
    links: &[LinkDir],
    a: NodeId,
    b: NodeId,
    n: usize,
) -> Option<&'static str> {
    let mut at = a;
    let mut hops = 0;
    while at != b {
        if hops > n {
            return Some("routes loop");
        }
        match routes[at as usize][b as usize] {
            Some(ld) => at = links[ld as usize].to,
            None => return Some("no route"),
        }
        hops += 1;
    }
    None
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
    // Recorder flow ids: each scenario flow in order, a TCP flow followed by
    // its ACK flow "<name>/ack".
    let mut flow_names: Vec<String> = Vec::new();
    let mut data_flow_id: Vec<u32> = Vec::new();
    for f in &s.flows {
        data_flow_id.push(flow_names.len() as u32);
        flow_names.push(f.name.clone());
        if f.kind == FlowKind::Tcp {
            flow_names.push(format!("{}/ack", f.name));
        }
    }
    // RTP sessions: per member, "<session>/<node>/rtp" (media senders) and
    // "<session>/<node>/rtcp".
    let mut session_flow_ids: Vec<Vec<(Option<u32>, u32)>> = Vec::new();
    for r in &s.rtp_sessions {
        let mut ids = Vec::new();
        for m in &r.members {
            let rtp = m.media.then(|| {
                flow_names.push(format!("{}/{}/rtp", r.name, m.node));
                (flow_names.len() - 1) as u32
            });
            flow_names.push(format!("{}/{}/rtcp", r.name, m.node));
            ids.push((rtp, (flow_names.len() - 1) as u32));
        }
        session_flow_ids.push(ids);
    }
    let flow_ids: HashMap<&str, u32> = flow_names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i as u32))
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
                ns_per_bit: {
                    let r = d.rate_bps.unwrap_or(l.rate_bps).round() as u64;
                    if r > 0 && 1_000_000_000 % r == 0 {
                        1_000_000_000 / r
                    } else {
                        0
                    }
                },
                delay: SimTime::from_millis_f64(delay_ms),
                queue: build_queue(d.queue.as_ref().or(l.queue.as_ref())),
                loss,
                cost,
                busy_until: SimTime::ZERO,
                done_pending: false,
                in_transit: std::collections::VecDeque::new(),
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

    // (node, port) -> (app index, flow index, shareable by UDP sinks)
    let mut port_owner: HashMap<(NodeId, u16), (u32, usize, bool)> = HashMap::new();
    for (i, f) in s.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        let fid = data_flow_id[i];
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
            let (ti, unreachable) = tree_index(
                &mut trees,
                &mut tree_of,
                &graph,
                src,
                gid,
                &group_members[gid as usize],
                from_of,
            );
            for u in unreachable {
                errors.push(err(
                    format!("{p}.group"),
                    format!(
                        "member \"{}\" of group \"{g}\" is unreachable from \"{}\"",
                        nodes[u as usize].name, f.src
                    ),
                ));
            }
            (
                Dest::Group {
                    group: gid,
                    tree: ti,
                },
                receivers,
            )
        } else {
            let d = node_id[f.dst.as_deref().expect("validated")];
            for (a, b, field) in [(src, d, "dst"), (d, src, "src")] {
                if f.kind != FlowKind::Tcp && field == "src" {
                    continue; // only TCP needs the way back (ACKs)
                }
                if let Some(why) = route_problem(&routes, &links, a, b, nodes.len()) {
                    errors.push(err(
                        format!("{p}.{field}"),
                        format!(
                            "{why} from \"{}\" to \"{}\"",
                            nodes[a as usize].name, nodes[b as usize].name
                        ),
                    ));
                }
            }
            (Dest::Node(d), vec![d])
        };
        let tpl = PacketTemplate {
            flow: fid,
            dst,
            src_port,
            dst_port,
            dscp: f.dscp,
            payload_bytes: f.payload_bytes.unwrap_or(0),
            transport: Transport::Udp,
        };
        let mut start = SimTime::from_secs_f64(f.start_s);
        if let Some(j) = f.start_jitter_s.filter(|j| *j > 0.0) {
            let mut r = rng.stream(&format!("flow:{}:start", f.name));
            start = SimTime::from_secs_f64(f.start_s + j * crate::sim::uniform(&mut r));
        }
        let stop = f.stop_s.map_or(horizon, SimTime::from_secs_f64);
        let stop_rule = StopRule {
            stop,
            max_packets: f.max_packets,
        };
        let payload_bits = f.payload_bytes.unwrap_or(0) as f64 * 8.0;
        let mut claim = |node: NodeId,
                         port: u16,
                         app: u32,
                         shareable: bool,
                         field: &str,
                         errors: &mut Vec<FieldError>|
         -> bool {
            match port_owner.get(&(node, port)) {
                Some(&(_, _, true)) if shareable => false,
                Some(&(_, other, _)) => {
                    errors.push(err(
                        format!("{p}.{field}"),
                        format!(
                            "port {port} on node \"{}\" is already used by flow \"{}\"",
                            nodes[node as usize].name, s.flows[other].name
                        ),
                    ));
                    false
                }
                None => {
                    port_owner.insert((node, port), (app, i, shareable));
                    ports[node as usize].push((port, app));
                    true
                }
            }
        };
        let kind = match f.kind {
            FlowKind::Cbr => "cbr",
            FlowKind::Poisson => "poisson",
            FlowKind::Tcp => "tcp",
        };
        match f.kind {
            FlowKind::Cbr | FlowKind::Poisson => {
                let app: Box<dyn crate::app::App> = if f.kind == FlowKind::Cbr {
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
                } else {
                    let pps = f
                        .rate_pps
                        .unwrap_or_else(|| f.rate_bps.expect("validated") / payload_bits);
                    Box::new(PoissonSource::new(
                        tpl,
                        pps,
                        stop_rule,
                        rng.stream(&format!("flow:{}:arrivals", f.name)),
                    ))
                };
                apps.push(AppSlot {
                    node: src,
                    start,
                    app,
                });
                for &r in &receivers {
                    let idx = apps.len() as u32;
                    if claim(r, dst_port, idx, true, "dst_port", &mut errors) {
                        apps.push(AppSlot {
                            node: r,
                            start,
                            app: Box::new(Sink),
                        });
                    }
                }
                metas.push(FlowMeta {
                    name: f.name.clone(),
                    kind,
                    src,
                    receivers,
                    start,
                    stop,
                });
            }
            FlowKind::Tcp => {
                let d = receivers[0];
                let cfg = tcp_config(f.tcp.as_ref(), f.bytes.is_some());
                let ack_tpl = PacketTemplate {
                    flow: fid + 1,
                    dst: Dest::Node(src),
                    src_port: dst_port,
                    dst_port: src_port,
                    ..tpl.clone()
                };
                let src_idx = apps.len() as u32;
                claim(src, src_port, src_idx, false, "src_port", &mut errors);
                apps.push(AppSlot {
                    node: src,
                    start,
                    app: Box::new(TcpSource::new(tpl, cfg.clone(), f.bytes)),
                });
                let sink_idx = apps.len() as u32;
                claim(d, dst_port, sink_idx, false, "dst_port", &mut errors);
                apps.push(AppSlot {
                    node: d,
                    start,
                    app: Box::new(TcpSink::new(ack_tpl, cfg, fid, start)),
                });
                metas.push(FlowMeta {
                    name: f.name.clone(),
                    kind,
                    src,
                    receivers: vec![d],
                    start,
                    stop: horizon,
                });
                metas.push(FlowMeta {
                    name: format!("{}/ack", f.name),
                    kind: "tcp_ack",
                    src: d,
                    receivers: vec![src],
                    start,
                    stop: horizon,
                });
            }
        }
    }
    let mut extra_groups = 0u32;
    for (k, r) in s.rtp_sessions.iter().enumerate() {
        let p = format!("rtp_sessions[{k}]");
        let member_nodes: Vec<NodeId> =
            r.members.iter().map(|m| node_id[m.node.as_str()]).collect();
        let gid = (s.groups.len() as u32) + extra_groups;
        let multicast = r.transport == RtpTransport::Multicast;
        if multicast {
            extra_groups += 1;
        }
        let rtp_port = 5004u16.wrapping_add(2 * k as u16);
        let rtcp_port = rtp_port.wrapping_add(1);
        let start = SimTime::from_secs_f64(r.start_s);
        let stop = r.stop_s.map_or(horizon, SimTime::from_secs_f64);
        let media_senders = r.members.iter().filter(|m| m.media).count().max(1) as f64;
        let (payload, interval) = match &r.newpred {
            // NEWPRED: a frame every 1/fps, cut into equal segments that fill
            // the bandwidth on the wire.
            Some(np) => {
                let seg = r.session_bw_bps
                    / media_senders
                    / np.frames_per_s
                    / 8.0
                    / np.segments_per_frame as f64;
                (
                    (seg - 40.0).round().max(1.0) as u32,
                    SimTime::from_secs_f64(1.0 / np.frames_per_s),
                )
            }
            None => {
                let wire_bytes = r.media_payload_bytes as f64 + 12.0 + 28.0;
                (
                    r.media_payload_bytes,
                    SimTime::from_secs_f64(wire_bytes * 8.0 / (r.session_bw_bps / media_senders)),
                )
            }
        };
        let point_to_point = !multicast;
        let a = r.avpf.clone().unwrap_or_default();
        let avpf_cfg = AvpfConfig {
            trr_interval_s: a.trr_interval_ms.unwrap_or(0.0) / 1e3,
            dither: match a.dither {
                DitherRuleSpec::Rfc => DitherRule::Rfc {
                    l: a.l.unwrap_or(0.5),
                },
                DitherRuleSpec::Rtt => DitherRule::RttDraft {
                    k: a.k.unwrap_or(1.0),
                    l: a.l.unwrap_or(0.5),
                },
            },
            max_feedback_delay_s: a.max_feedback_delay_ms.unwrap_or(1000.0) / 1e3,
            point_to_point,
            retention_s: a.retention_ms.unwrap_or(2000.0) / 1e3,
        };
        for (j, m) in r.members.iter().enumerate() {
            let node = member_nodes[j];
            let others: Vec<NodeId> = member_nodes
                .iter()
                .copied()
                .filter(|&n| n != node)
                .collect();
            let dst = if multicast {
                let (ti, unreachable) = tree_index(
                    &mut trees,
                    &mut tree_of,
                    &graph,
                    node,
                    gid,
                    &member_nodes,
                    from_of,
                );
                for u in unreachable {
                    errors.push(err(
                        format!("{p}.members[{j}]"),
                        format!(
                            "member \"{}\" is unreachable from \"{}\"",
                            nodes[u as usize].name, m.node
                        ),
                    ));
                }
                Dest::Group {
                    group: gid,
                    tree: ti,
                }
            } else {
                let other = others[0];
                if let Some(why) = route_problem(&routes, &links, node, other, nodes.len()) {
                    errors.push(err(
                        format!("{p}.members[{j}]"),
                        format!("{why} from \"{}\"", m.node),
                    ));
                }
                Dest::Node(other)
            };
            let (rtp_flow, rtcp_flow) = session_flow_ids[k][j];
            let tpl = |flow: u32, port: u16, payload: u32| PacketTemplate {
                flow,
                dst,
                src_port: port,
                dst_port: port,
                dscp: 0,
                payload_bytes: payload,
                transport: Transport::Udp,
            };
            let media = rtp_flow.map(|f| MediaConfig {
                template: tpl(f, rtp_port, payload + 12),
                interval,
            });
            let avpf = m.profile == RtpProfile::Avpf;
            let timing_cfg = TimingConfig {
                session_bw_bps: r.session_bw_bps,
                rtcp_fraction: r.rtcp_fraction.unwrap_or(0.05),
                sender_fraction: 0.25,
                min_interval_s: if avpf { 0.0 } else { 5.0 },
                initial_min_interval_s: if !avpf {
                    2.5
                } else if point_to_point {
                    0.0
                } else {
                    1.0
                },
                reconsideration: true,
            };
            let mut rng = rng.stream(&format!("rtp:{}:{}", r.name, m.node));
            let ssrc = 1000 * (k as u32 + 1) + j as u32 + 1;
            let cname = format!("{}@{}", m.node, r.name);
            // A first compound is about an RR with one block plus SDES.
            let mut timing = RtcpTiming::new(
                timing_cfg,
                ssrc,
                28.0 + 32.0 + 8.0 + cname.len() as f64,
                start,
                &mut rng,
            );
            if avpf && a.trr_interval_ms.is_some_and(|x| x > 0.0) {
                timing.timeout_tmin_s = a.trr_interval_ms.unwrap_or(0.0) / 1e3;
            }
            let sched = RtcpScheduler::new(timing, avpf.then(|| avpf_cfg.clone()));
            let mut app = RtpMember::new(
                ssrc,
                cname,
                media,
                m.sender_reports,
                tpl(rtcp_flow, rtcp_port, 0),
                sched,
                rng,
                start,
                stop,
                r.session_bw_bps,
            );
            if let Some(np) = &r.newpred {
                app = app.with_newpred(NewpredConfig {
                    segments: np.segments_per_frame,
                });
            }
            let idx = apps.len() as u32;
            for (port, field) in [(rtp_port, "rtp"), (rtcp_port, "rtcp")] {
                if ports[node as usize].iter().any(|(q, _)| *q == port) {
                    errors.push(err(
                        format!("{p}.members[{j}]"),
                        format!("{field} port {port} on \"{}\" is taken", m.node),
                    ));
                } else {
                    ports[node as usize].push((port, idx));
                }
            }
            apps.push(AppSlot {
                node,
                start,
                app: Box::new(app),
            });
            if let Some(f) = rtp_flow {
                debug_assert_eq!(f as usize, metas.len());
                metas.push(FlowMeta {
                    name: flow_names[f as usize].clone(),
                    kind: "rtp",
                    src: node,
                    receivers: others.clone(),
                    start,
                    stop,
                });
            }
            debug_assert_eq!(rtcp_flow as usize, metas.len());
            metas.push(FlowMeta {
                name: flow_names[rtcp_flow as usize].clone(),
                kind: "rtcp",
                src: node,
                receivers: others,
                start,
                stop: horizon,
            });
        }
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
    let group_addrs = (0..s.groups.len() as u32 + extra_groups)
        .map(group_addr)
        .collect();
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
