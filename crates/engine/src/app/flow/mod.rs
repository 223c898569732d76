//! Flows in scenarios: the fields every flow has (name, endpoints, timing,
//! ports, DSCP), their checks and their resolution in the built network,
//! and the registry of flow kinds (one line each). A kind's own fields,
//! checks and construction live beside its application (`cbr.rs`,
//! `poisson.rs`, `tcp/spec.rs`).

mod parse;

use super::PacketTemplate;
use crate::net::{Dest, NodeId, Transport};
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};
use crate::scenario::tagged;
use crate::sim::SimTime;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::Value;

/// A flow kind's scenario spec.
pub trait FlowModel {
    /// Flows this one derives besides itself, by the suffix of their
    /// names: "ack" for "<name>/ack".
    fn derived_suffixes(&self) -> &'static [&'static str] {
        &[]
    }
    /// True if the destination must also reach the source (ACKs).
    fn needs_return_route(&self) -> bool {
        false
    }
    /// Reports every problem of the kind's own fields (and of common
    /// fields the kind restricts), each at its field below `path`.
    fn validate(&self, flow: &FlowCommon, path: &str, scope: &Scope<'_>, c: &mut Checker);
    /// Adds the flow's applications and flow metadata.
    fn build(&self, flow: &ResolvedFlow<'_>, ctx: &mut BuildCtx<'_>);
}

crate::model_family! {
    /// What a flow sends, chosen by "type".
    pub enum FlowKind: dyn FlowModel {
        Cbr(super::cbr::CbrSpec) = "cbr",
        Poisson(super::poisson::PoissonSpec) = "poisson",
        Tcp(super::tcp::spec::TcpFlowSpec) = "tcp",
        MediaScaling(super::scaling::MediaScalingSpec) = "media_scaling",
        Tfrc(super::tfrc::TfrcFlowSpec) = "tfrc",
        Svc(super::svc::SvcSpec) = "svc",
        Paced(super::paced::PacedSpec) = "paced",
    }
}

/// The fields every flow has.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowCommon {
    /// Unique flow name.
    pub name: String,
    pub src: String,
    /// Destination node (unicast). Give exactly one of `dst` and `group`.
    #[serde(default)]
    pub dst: Option<String>,
    /// Destination multicast group.
    #[serde(default)]
    pub group: Option<String>,
    /// Start time in seconds (default 0).
    #[serde(default)]
    pub start_s: f64,
    /// Random start: the flow starts uniformly in [start_s, start_s +
    /// start_jitter_s], drawn from the flow's own random stream.
    #[serde(default)]
    pub start_jitter_s: Option<f64>,
    /// No packet is sent at or after this time (default: end of run).
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// Source port (default 10000 + flow index).
    #[serde(default)]
    pub src_port: Option<u16>,
    /// Destination port (default 20000 + flow index).
    #[serde(default)]
    pub dst_port: Option<u16>,
    /// DiffServ code point, 0-63 (default 0).
    #[serde(default)]
    #[schemars(range(max = 63))]
    pub dscp: u8,
}

/// A traffic flow from `src` to a node (`dst`) or a multicast group
/// (`group`): the common fields plus its kind's (chosen by "type").
///
/// Sizes: `payload_bytes` is the application payload; the packet on the
/// wire adds UDP (8 B) and IPv4 (20 B) headers. Rates (`rate_bps`) count
/// payload bits, like a codec's bit rate. A TCP flow sends MSS-sized
/// segments (see `tcp`) and also creates the flow "<name>/ack" for its ACKs.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub common: FlowCommon,
    pub kind: FlowKind,
    /// Fields of other kinds given to this one: (field, problem).
    pub misplaced: Vec<(String, String)>,
}

impl FlowSpec {
    /// This flow's name and the names of the flows it derives.
    pub fn flow_names(&self) -> Vec<String> {
        let name = &self.common.name;
        let mut v = vec![name.clone()];
        v.extend(
            self.kind
                .model()
                .derived_suffixes()
                .iter()
                .map(|s| derived_name(name, s)),
        );
        v
    }

    /// How many flows this one makes, itself included.
    pub fn flow_count(&self) -> usize {
        1 + self.kind.model().derived_suffixes().len()
    }
}

/// "<name>/<suffix>", the name of a derived flow (joined by `concat`, one
/// allocation, not `format!`: a scenario of hundreds of flows makes its
/// names several times).
pub fn derived_name(name: &str, suffix: &str) -> String {
    [name, "/", suffix].concat()
}

impl JsonSchema for FlowSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FlowSpec".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let common = FlowCommon::json_schema(g).to_value();
        let variants = (FlowKind::variant_schemas(g).into_iter())
            .map(|v| merge_object_schemas(&common, v))
            .collect();
        tagged::one_of(
            "A traffic flow from `src` to a node (`dst`) or a multicast group (`group`): \
             the common fields plus those of its kind, chosen by \"type\".",
            variants,
        )
    }
}

/// `kind`'s object schema with `common`'s properties and required fields.
fn merge_object_schemas(common: &Value, mut kind: Value) -> Value {
    for key in ["properties", "required"] {
        let (Some(from), Some(obj)) = (common.get(key), kind.as_object_mut()) else {
            continue;
        };
        let into = obj.entry(key).or_insert_with(|| from.clone());
        match (into, from) {
            (Value::Object(a), Value::Object(b)) => {
                a.extend(b.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            (Value::Array(a), Value::Array(b)) if !std::ptr::eq(a, b) => {
                a.extend(
                    b.iter()
                        .filter(|x| !a.contains(x))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
            }
            _ => {}
        }
    }
    kind
}

/// A kind with a return flow (ACKs, requests) is unicast: reports a group.
pub fn require_unicast(flow: &FlowCommon, p: &str, kind: &str, c: &mut Checker) {
    if flow.group.is_some() {
        c.err(format!("{p}.group"), format!("{kind} is unicast: give dst"));
    }
}

/// Checks of the common fields, then the kind's.
pub fn validate_flow(f: &FlowSpec, path: &str, scope: &Scope<'_>, c: &mut Checker) {
    let p = path;
    let cm = &f.common;
    if cm.name.contains('/') {
        let msg = "must not contain '/' (reserved for derived flows such as \"<tcp flow>/ack\")";
        c.err(format!("{p}.name"), msg);
    }
    scope.node(c, format_args!("{p}.src"), &cm.src);
    match (&cm.dst, &cm.group) {
        (Some(d), None) => {
            if scope.node(c, format_args!("{p}.dst"), d) && *d == cm.src {
                c.err(format!("{p}.dst"), "must differ from src");
            }
        }
        (None, Some(g)) => {
            scope.group(c, format_args!("{p}.group"), g);
        }
        (Some(_), Some(_)) => c.err(p, "give either dst or group, not both"),
        (None, None) => c.err(
            p,
            "give a destination: dst (a node) or group (a multicast group)",
        ),
    }
    for (field, msg) in &f.misplaced {
        c.err(format!("{p}.{field}"), msg.clone());
    }
    f.kind.model().validate(cm, p, scope, c);
    validate_timing(cm, p, scope, c);
    if cm.dscp > 63 {
        c.err(
            format!("{p}.dscp"),
            format!("must be 0..=63 (got {})", cm.dscp),
        );
    }
}

fn validate_timing(cm: &FlowCommon, p: &str, scope: &Scope<'_>, c: &mut Checker) {
    let end = scope.duration_s;
    if let Some(j) = cm.start_jitter_s {
        c.non_negative(format_args!("{p}.start_jitter_s"), j);
        if j.is_finite() && cm.start_s + j >= end {
            let latest = cm.start_s + j;
            let msg = format!("the latest start ({latest} s) is not before the end of the run");
            c.err(format!("{p}.start_jitter_s"), msg);
        }
    }
    c.non_negative(format_args!("{p}.start_s"), cm.start_s);
    if cm.start_s.is_finite() && end.is_finite() && cm.start_s >= end {
        let msg = format!(
            "starts at {} s, not before the end of the run (duration_s = {end})",
            cm.start_s
        );
        c.err(format!("{p}.start_s"), msg);
    }
    if let Some(stop) = cm.stop_s {
        if !stop.is_finite() || stop <= cm.start_s {
            let msg = format!("must be after start_s = {} (got {stop})", cm.start_s);
            c.err(format!("{p}.stop_s"), msg);
        }
    }
}

/// A flow placed in the built network: what every kind's construction needs.
pub struct ResolvedFlow<'a> {
    pub spec: &'a FlowCommon,
    /// Position in the scenario's flow list.
    pub index: usize,
    pub path: String,
    /// Recorder id of the flow (derived flows follow it).
    pub id: u32,
    pub src: NodeId,
    pub dst: Dest,
    /// Nodes that receive the flow (the group's members but the source).
    pub receivers: Vec<NodeId>,
    pub src_port: u16,
    pub dst_port: u16,
    pub start: SimTime,
    pub stop: SimTime,
}

impl ResolvedFlow<'_> {
    /// The fixed part of the flow's packets, UDP with `payload_bytes`.
    pub fn udp_template(&self, payload_bytes: u32) -> PacketTemplate {
        PacketTemplate {
            flow: self.id,
            dst: self.dst,
            src_port: self.src_port,
            dst_port: self.dst_port,
            dscp: self.spec.dscp,
            ecn: crate::net::packet::ecn::NOT_ECT,
            payload_bytes,
            transport: Transport::Udp,
        }
    }
}

/// Places flow `index` in the network, then lets its kind build it.
pub fn build_flow(index: usize, f: &FlowSpec, ctx: &mut BuildCtx<'_>) {
    let cm = &f.common;
    let path = format!("flows[{index}]");
    let src = ctx.node(&cm.src);
    let (dst, receivers) = match &cm.group {
        Some(g) => group_destination(&path, src, cm, g, ctx),
        None => unicast_destination(&path, src, cm, f.kind.model().needs_return_route(), ctx),
    };
    let mut start = SimTime::from_secs_f64(cm.start_s);
    if let Some(j) = cm.start_jitter_s.filter(|j| *j > 0.0) {
        let mut r = ctx.stream(&format!("flow:{}:start", cm.name));
        start = SimTime::from_secs_f64(cm.start_s + j * crate::sim::uniform(&mut r));
    }
    let resolved = ResolvedFlow {
        spec: cm,
        index,
        path,
        id: ctx.flow_id(&cm.name),
        src,
        dst,
        receivers,
        src_port: cm.src_port.unwrap_or(10_000u16.wrapping_add(index as u16)),
        dst_port: cm.dst_port.unwrap_or(20_000u16.wrapping_add(index as u16)),
        start,
        // A source never works for time past the run's end: whatever a
        // model sizes by its stop time is sized by what the run can use.
        stop: (cm.stop_s)
            .map_or(ctx.horizon, SimTime::from_secs_f64)
            .min(ctx.horizon),
    };
    f.kind.model().build(&resolved, ctx);
}

fn group_destination(
    path: &str,
    src: NodeId,
    cm: &FlowCommon,
    g: &str,
    ctx: &mut BuildCtx<'_>,
) -> (Dest, Vec<NodeId>) {
    let gid = ctx.group(g);
    let members = ctx.group_members[gid as usize].clone();
    let (tree, unreachable) = ctx.tree(src, gid, &members);
    for u in unreachable {
        let msg = format!(
            "member \"{}\" of group \"{g}\" is unreachable from \"{}\"",
            ctx.node_name(u),
            cm.src
        );
        ctx.err(format!("{path}.group"), msg);
    }
    let receivers = members.into_iter().filter(|&m| m != src).collect();
    (Dest::Group { group: gid, tree }, receivers)
}

fn unicast_destination(
    path: &str,
    src: NodeId,
    cm: &FlowCommon,
    return_route: bool,
    ctx: &mut BuildCtx<'_>,
) -> (Dest, Vec<NodeId>) {
    let d = ctx.node(cm.dst.as_deref().expect("validated"));
    let mut legs = vec![(src, d, "dst")];
    if return_route {
        legs.push((d, src, "src"));
    }
    for (a, b, field) in legs {
        if let Some(why) = ctx.route_problem(a, b) {
            let msg = format!(
                "{why} from \"{}\" to \"{}\"",
                ctx.node_name(a),
                ctx.node_name(b)
            );
            ctx.err(format!("{path}.{field}"), msg);
        }
    }
    (Dest::Node(d), vec![d])
}

/// Checks a UDP source's `rate_bps` (cbr, poisson): positive, and with
/// its payload no more than 10^6 packets/s.
pub fn check_udp_rate(path: &str, rate_bps: f64, payload_bytes: Option<u32>, c: &mut Checker) {
    c.positive(format_args!("{path}.rate_bps"), rate_bps);
    if let Some(b) = payload_bytes {
        let pps = rate_bps / (b as f64 * 8.0);
        c.packet_rate(format_args!("{path}.rate_bps"), pps, "the packet rate");
    }
}

/// Checks a UDP source's payload size (cbr, poisson).
pub fn check_udp_payload(path: &str, payload_bytes: Option<u32>, c: &mut Checker) {
    match payload_bytes {
        None => c.err(
            format!("{path}.payload_bytes"),
            "required for cbr and poisson flows",
        ),
        Some(b) if b == 0 || b > 65_507 => c.err(
            format!("{path}.payload_bytes"),
            format!("must be 1..=65507 bytes (got {b})"),
        ),
        _ => {}
    }
}

/// A UDP sink on every receiver of `f` (flows to the same port share one),
/// and the flow's metadata.
pub fn add_udp_sinks_and_meta(f: &ResolvedFlow<'_>, kind: &'static str, ctx: &mut BuildCtx<'_>) {
    use super::sink::Sink;
    use crate::scenario::build::PortClaim;
    for &r in &f.receivers {
        let idx = ctx.next_app();
        match ctx.claim_port(r, f.dst_port, idx, &f.spec.name, true) {
            PortClaim::Claimed => {
                ctx.add_app(r, f.start, Box::new(Sink));
            }
            PortClaim::Shared => {}
            PortClaim::Taken(owner) => port_taken(f, "dst_port", r, f.dst_port, &owner, ctx),
        }
    }
    let meta = crate::measure::recorder::FlowMeta {
        name: f.spec.name.clone(),
        kind,
        src: f.src,
        receivers: crate::measure::recorder::Receivers::Each(f.receivers.clone()),
        start: f.start,
        stop: f.stop,
    };
    ctx.add_flow_meta(f.id, meta);
}

/// Reports a port collision of flow `f` at `field`.
pub fn port_taken(
    f: &ResolvedFlow<'_>,
    field: &str,
    node: NodeId,
    port: u16,
    owner: &str,
    ctx: &mut BuildCtx<'_>,
) {
    let msg = format!(
        "port {port} on node \"{}\" is already used by flow \"{owner}\"",
        ctx.node_name(node)
    );
    ctx.err(format!("{}.{field}", f.path), msg);
}

/// Claims `port` on `node` for the next application, then adds `app`
/// (added even when the port is taken, so that indices stay in step; the
/// run does not start with a reported error).
pub fn claim_and_add(
    f: &ResolvedFlow<'_>,
    field: &str,
    node: crate::net::NodeId,
    port: u16,
    app: Box<dyn crate::app::App>,
    ctx: &mut BuildCtx<'_>,
) {
    let idx = ctx.next_app();
    use crate::scenario::build::PortClaim;
    if let PortClaim::Taken(owner) = ctx.claim_port(node, port, idx, &f.spec.name, false) {
        port_taken(f, field, node, port, &owner, ctx);
    }
    ctx.add_app(node, f.start, app);
}

/// Packets going back from a unicast flow's receiver to its source (ACKs,
/// requests): the flow after `f`'s, with the ports swapped.
pub fn return_template(f: &ResolvedFlow<'_>, tpl: &PacketTemplate) -> PacketTemplate {
    PacketTemplate {
        flow: f.id + 1,
        dst: Dest::Node(f.src),
        src_port: f.dst_port,
        dst_port: f.src_port,
        ..tpl.clone()
    }
}

/// Flow metadata of unicast flow `f` (of `kind`, to its receiver) and of
/// its return flow "<name>/<suffix>" (of `return_kind`).
pub fn add_flow_pair_meta(
    f: &ResolvedFlow<'_>,
    kind: &'static str,
    suffix: &str,
    return_kind: &'static str,
    ctx: &mut BuildCtx<'_>,
) {
    use crate::measure::recorder::{FlowMeta, Receivers};
    let d = f.receivers[0];
    let meta = |name: String, kind, src, to| FlowMeta {
        name,
        kind,
        src,
        receivers: Receivers::Each(vec![to]),
        start: f.start,
        stop: ctx.horizon,
    };
    let data = meta(f.spec.name.clone(), kind, f.src, d);
    let back = meta(derived_name(&f.spec.name, suffix), return_kind, d, f.src);
    ctx.add_flow_meta(f.id, data);
    ctx.add_flow_meta(f.id + 1, back);
}

#[cfg(test)]
mod tests;
