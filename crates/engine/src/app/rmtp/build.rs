//! Construction of an RMTP session: the data channel (a group of every DR
//! and receiver, on the sender's tree), a local channel per DR (a group of
//! its children, on the DR's tree), unicast HACKs up the tree, and one
//! application per member.

use super::apps::{Period, RmtpDrApp, RmtpReceiverApp, RmtpSenderApp};
use super::spec::RmtpSessionSpec;
use crate::app::session::SessionModel;
use crate::app::PacketTemplate;
use crate::measure::recorder::{FlowMeta, Receivers};
use crate::net::{Dest, NodeId};
use crate::proto::rmtp::{RmtpDr, RmtpReceiver, RmtpSender};
use crate::scenario::build::{BuildCtx, PortClaim};
use crate::sim::{uniform, SimTime};

/// RMTP header on every packet (docs/models/rmtp.md).
const RMTP_HEADER_BYTES: u32 = 16;

struct Plan<'s> {
    s: &'s RmtpSessionSpec,
    sender: NodeId,
    /// Per subgroup: its DR's node and its parent's (the sender's, or a DR's).
    drs: Vec<NodeId>,
    parents: Vec<NodeId>,
    /// Per subgroup: its index among its parent's children.
    child_index: Vec<u32>,
    data_port: u16,
    local_port: u16,
    hack_port: u16,
    start: SimTime,
    stop: SimTime,
}

impl Plan<'_> {
    fn data_payload(&self) -> u32 {
        self.s.data_packet_bytes - 28
    }

    /// The children of subgroup `i` in child-index order: its receivers,
    /// then the DRs directly below it.
    fn children(&self, i: usize, ctx: &BuildCtx<'_>) -> Vec<NodeId> {
        let g = &self.s.subgroups[i];
        let mut v: Vec<NodeId> = g.receivers.iter().map(|r| ctx.node(r)).collect();
        for (j, h) in self.s.subgroups.iter().enumerate() {
            if h.parent.as_deref() == Some(g.dr.as_str()) {
                v.push(self.drs[j]);
            }
        }
        v
    }

    fn period(&self, ms: f64, stream: &str, ctx: &BuildCtx<'_>) -> Period {
        let every = SimTime::from_millis_f64(ms);
        let mut rng = ctx.stream(stream);
        let offset = SimTime::from_secs_f64(every.as_secs_f64() * uniform(&mut rng));
        Period { every, offset }
    }
}

/// Adds session `s` (number `k` among the RMTP sessions, at `p`).
pub fn build_session(s: &RmtpSessionSpec, k: usize, p: &str, ctx: &mut BuildCtx<'_>) {
    let idx = s.dr_index();
    let sender = ctx.node(&s.sender);
    let drs: Vec<NodeId> = s.subgroups.iter().map(|g| ctx.node(&g.dr)).collect();
    let parents: Vec<NodeId> = (s.subgroups.iter())
        .map(|g| g.parent.as_ref().map_or(sender, |d| drs[idx[d.as_str()]]))
        .collect();
    // A DR's index among its parent's children: the sender's are its DRs
    // in order; a DR's are its receivers, then the DRs below it in order.
    let mut child_index = vec![0u32; s.subgroups.len()];
    let mut count: std::collections::HashMap<NodeId, u32> = Default::default();
    for (i, g) in s.subgroups.iter().enumerate() {
        let base = g
            .parent
            .as_ref()
            .map_or(0, |d| s.subgroups[idx[d.as_str()]].receivers.len() as u32);
        let n = count.entry(parents[i]).or_insert(0);
        child_index[i] = base + *n;
        *n += 1;
    }
    let port = 7000u16.wrapping_add(4 * k as u16);
    let plan = Plan {
        s,
        sender,
        drs,
        parents,
        child_index,
        data_port: port,
        local_port: port.wrapping_add(1),
        hack_port: port.wrapping_add(2),
        start: SimTime::from_secs_f64(s.start_s),
        stop: s.stop_s.map_or(ctx.horizon, SimTime::from_secs_f64),
    };
    let mut ids = s
        .flow_names()
        .into_iter()
        .map(|n| ctx.flow_id(&n))
        .collect::<Vec<_>>()
        .into_iter();
    let (data_flow, retx_flow) = (ids.next().expect("named"), ids.next().expect("named"));
    add_sender(&plan, (data_flow, retx_flow), p, ctx);
    for i in 0..s.subgroups.len() {
        let repair_flow = ids.next().expect("named");
        let hack_flow = ids.next().expect("named");
        add_dr(&plan, i, (repair_flow, hack_flow), p, ctx);
        for j in 0..s.subgroups[i].receivers.len() {
            add_receiver(&plan, i, j, ids.next().expect("named"), p, ctx);
        }
    }
}

fn claim(
    plan: &Plan<'_>,
    node: NodeId,
    ports: &[u16],
    app: u32,
    path: &str,
    ctx: &mut BuildCtx<'_>,
) {
    for &port in ports {
        if let PortClaim::Taken(_) = ctx.claim_port(node, port, app, &plan.s.name, false) {
            let msg = format!("port {port} on \"{}\" is taken", ctx.node_name(node));
            ctx.err(path, msg);
        }
    }
}

/// Reports a child that cannot reach its parent by unicast.
fn check_route(from: NodeId, to: NodeId, path: &str, ctx: &mut BuildCtx<'_>) {
    if let Some(why) = ctx.route_problem(from, to) {
        let msg = format!(
            "{why} from \"{}\" to \"{}\"",
            ctx.node_name(from),
            ctx.node_name(to)
        );
        ctx.err(path, msg);
    }
}

/// A multicast channel from `root` to `members`, or the problems found.
fn channel(root: NodeId, members: &[NodeId], path: &str, ctx: &mut BuildCtx<'_>) -> Dest {
    let gid = ctx.new_group(members);
    let (tree, unreachable) = ctx.tree(root, gid, members);
    for u in unreachable {
        let msg = format!(
            "\"{}\" is unreachable from \"{}\"",
            ctx.node_name(u),
            ctx.node_name(root)
        );
        ctx.err(path, msg);
    }
    Dest::Group { group: gid, tree }
}

fn add_sender(plan: &Plan<'_>, (data, retx): (u32, u32), p: &str, ctx: &mut BuildCtx<'_>) {
    let s = plan.s;
    let mut all: Vec<NodeId> = plan.drs.clone();
    for g in &s.subgroups {
        all.extend(g.receivers.iter().map(|r| ctx.node(r)));
    }
    let dst = channel(plan.sender, &all, &format!("{p}.subgroups"), ctx);
    let top = s.subgroups.iter().filter(|g| g.parent.is_none()).count();
    let app = RmtpSenderApp {
        sender: RmtpSender::new(s.config(), top),
        data: PacketTemplate::session_udp(data, dst, plan.data_port, plan.data_payload()),
        retx: PacketTemplate::session_udp(retx, dst, plan.data_port, plan.data_payload()),
        interval: SimTime::from_millis_f64(s.send_interval_ms),
        stop: plan.stop,
    };
    let idx = ctx.next_app();
    claim(
        plan,
        plan.sender,
        &[plan.hack_port],
        idx,
        &format!("{p}.sender"),
        ctx,
    );
    ctx.add_app(plan.sender, plan.start, Box::new(app));
    for (flow, kind) in [(data, "rmtp_data"), (retx, "rmtp_retx")] {
        let meta = FlowMeta {
            name: format!(
                "{}/{}",
                s.name,
                if kind == "rmtp_data" { "data" } else { "retx" }
            ),
            kind,
            src: plan.sender,
            receivers: Receivers::Each(all.clone()),
            start: plan.start,
            stop: ctx.horizon,
        };
        ctx.add_flow_meta(flow, meta);
    }
}

fn add_dr(plan: &Plan<'_>, i: usize, (repair, hack): (u32, u32), p: &str, ctx: &mut BuildCtx<'_>) {
    let s = plan.s;
    let g = &s.subgroups[i];
    let (node, parent) = (plan.drs[i], plan.parents[i]);
    let path = format!("{p}.subgroups[{i}]");
    let children = plan.children(i, ctx);
    let local = channel(node, &children, &path, ctx);
    check_route(node, parent, &path, ctx);
    let stream = format!("rmtp:{}:{}", s.name, g.dr);
    let mut dr = RmtpDr::new(
        children.len(),
        s.dr_buffer_packets as usize,
        SimTime::from_millis_f64(s.dr_repair_holdoff_ms),
        // Two send intervals and the hold-off without new data: the
        // sender has stopped.
        SimTime::from_millis_f64(2.0 * s.send_interval_ms + s.dr_repair_holdoff_ms),
    );
    dr.ack_subgroup = s.dr_acknowledges == super::spec::DrAcknowledges::Subgroup;
    let app = RmtpDrApp {
        dr,
        repair: PacketTemplate::session_udp(repair, local, plan.local_port, plan.data_payload()),
        hack: PacketTemplate::session_udp(
            hack,
            Dest::Node(parent),
            plan.hack_port,
            RMTP_HEADER_BYTES,
        ),
        child: plan.child_index[i],
        hack_period: plan.period(s.dr_hack_interval_ms, &format!("{stream}:hack"), ctx),
        repair_period: plan.period(s.repair_interval_ms(), &format!("{stream}:repair"), ctx),
        start: plan.start,
        hacks_sent: 0,
    };
    let idx = ctx.next_app();
    let ports = [plan.data_port, plan.local_port, plan.hack_port];
    claim(plan, node, &ports, idx, &format!("{path}.dr"), ctx);
    ctx.add_app(node, plan.start, Box::new(app));
    let meta = |name: &str, kind, receivers| FlowMeta {
        name: format!("{}/{}/{name}", s.name, g.dr),
        kind,
        src: node,
        receivers,
        start: plan.start,
        stop: ctx.horizon,
    };
    let (m_repair, m_hack) = (
        meta("repair", "rmtp_repair", Receivers::Each(children)),
        meta("hack", "rmtp_hack", Receivers::Each(vec![parent])),
    );
    ctx.add_flow_meta(repair, m_repair);
    ctx.add_flow_meta(hack, m_hack);
}

fn add_receiver(plan: &Plan<'_>, i: usize, j: usize, hack: u32, p: &str, ctx: &mut BuildCtx<'_>) {
    let s = plan.s;
    let name = &s.subgroups[i].receivers[j];
    let (node, dr) = (ctx.node(name), plan.drs[i]);
    let path = format!("{p}.subgroups[{i}].receivers[{j}]");
    check_route(node, dr, &path, ctx);
    let app = RmtpReceiverApp {
        rx: RmtpReceiver::default(),
        hack: PacketTemplate::session_udp(hack, Dest::Node(dr), plan.hack_port, RMTP_HEADER_BYTES),
        child: j as u32,
        period: plan.period(
            s.rcv_hack_interval_ms,
            &format!("rmtp:{}:{name}:hack", s.name),
            ctx,
        ),
        start: plan.start,
        hacks_sent: 0,
    };
    let idx = ctx.next_app();
    claim(
        plan,
        node,
        &[plan.data_port, plan.local_port],
        idx,
        &path,
        ctx,
    );
    ctx.add_app(node, plan.start, Box::new(app));
    ctx.add_flow_meta(
        hack,
        FlowMeta {
            name: format!("{}/{name}/hack", s.name),
            kind: "rmtp_hack",
            src: node,
            receivers: Receivers::Each(vec![dr]),
            start: plan.start,
            stop: ctx.horizon,
        },
    );
}
