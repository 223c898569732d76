//! The validation walk: checks what every scenario has (names, links,
//! groups, routes, measurement) and hands each model its own spec to check
//! (queue disciplines, loss models, flow kinds, session protocols). Every
//! problem is reported with its field path; nothing stops at the first.

use super::check::{Checker, FieldError, Scope, MAX_DELAY_MS, MAX_DURATION_S};
use super::document::{DirSpec, LinkSpec, Scenario};
use super::parse::parse_json;
use crate::app::flow::validate_flow;
use crate::loss::LossSpec;
use crate::net::dynamics::spec::{JitterSpec, OutageSpec, Schedule, TraceSpec};
use crate::queue::QueueSpec;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Parses and validates, reporting every problem found, in the order
/// their fields are written: structural ones (wrong types, unknown
/// fields) and the checks of the fields that parsed (those set aside are
/// not checked again).
pub fn parse_and_validate(text: &str) -> Result<Scenario, Vec<FieldError>> {
    let s = match parse_json(text) {
        Ok(s) => s,
        Err(_) => {
            let (rest, mut errs, aside) = super::parse::parse_all(text);
            if let Some(rest) = rest {
                // Not reported: what a set-aside field's absence or stand-in
                // causes (its own path, below it, its container naming it,
                // or a check beside it quoting its stand-in value, as
                // "duration_s = 1" in a flow's start after the run's end).
                let under = |e: &FieldError| {
                    aside.iter().any(|a| {
                        let p = &e.path;
                        let (parent, key) = a.rsplit_once('.').unwrap_or(("", a));
                        let beside = parent.is_empty()
                            || p == parent
                            || p.starts_with(&format!("{parent}."));
                        p == a
                            || p.starts_with(&format!("{a}."))
                            || p.starts_with(&format!("{a}["))
                            || (a.starts_with(p.as_str()) && e.message.contains(key))
                            || (beside && e.message.contains(&format!("{key} = ")))
                    })
                };
                errs.extend(validate(&rest).into_iter().filter(|e| !under(e)));
            }
            super::order::in_document_order(text, &mut errs);
            return Err(errs);
        }
    };
    let mut errs = validate(&s);
    let mut c = Checker::default();
    super::units::check(text, &mut c);
    errs.extend(c.errs);
    if errs.is_empty() {
        Ok(s)
    } else {
        super::order::in_document_order(text, &mut errs);
        Err(errs)
    }
}

/// Everything `run` checks before the first event: the document's fields,
/// then the checks only construction can make (routes, reachability of
/// group members, port collisions, rates that round to nothing), by
/// building the world and dropping it. What this accepts, `run` builds.
pub fn check_all(text: &str) -> Result<Scenario, Vec<FieldError>> {
    let s = parse_and_validate(text)?;
    let rng = crate::sim::RngStreams::new(0, 0);
    if let Err(mut errs) = super::build::build(&s, &rng) {
        super::order::in_document_order(text, &mut errs);
        return Err(errs);
    }
    Ok(s)
}

/// Semantic checks of a parsed scenario.
pub fn validate(s: &Scenario) -> Vec<FieldError> {
    let mut c = Checker::default();
    run_time(s, &mut c);
    super::limits::check(s, &mut c);
    crate::world::partition::check(&s.parallel, s.measure.pcap, &mut c);
    names(s, &mut c);
    let scope = Scope {
        nodes: s.nodes.iter().map(|n| n.name.as_str()).collect(),
        groups: s.groups.iter().map(|g| g.name.as_str()).collect(),
        flows: super::check::Flows::of(s),
        duration_s: run_end_s(s),
    };
    for (i, n) in s.nodes.iter().enumerate() {
        if let Some(l) = &n.receiver_loss {
            loss(&format!("nodes[{i}].receiver_loss"), l, &scope, &mut c);
        }
    }
    links(s, &scope, &mut c);
    groups(s, &scope, &mut c);
    let mut p = String::new();
    for (i, f) in s.flows.iter().enumerate() {
        validate_flow(f, item_path(&mut p, "flows", i), &scope, &mut c);
    }
    for r in s.sessions() {
        r.model.validate(&r.path, &scope, &mut c);
    }
    routes(s, &scope, &mut c);
    measure(s, &mut c);
    c.errs
}

/// The run's length for the checks made against it: NaN when it is
/// itself invalid, so that those checks stay silent (see [`Scope`]).
fn run_end_s(s: &Scenario) -> f64 {
    if s.duration_s > 0.0 {
        s.duration_s
    } else {
        f64::NAN
    }
}

fn run_time(s: &Scenario, c: &mut Checker) {
    c.positive("duration_s", s.duration_s);
    if s.duration_s > MAX_DURATION_S {
        let msg = format!("must be at most {MAX_DURATION_S} s (got {})", s.duration_s);
        c.err("duration_s", msg);
    }
    if s.nodes.is_empty() {
        c.err("nodes", "at least one node is needed");
    }
}

/// Names of nodes, groups, flows and sessions: unique, and for flows and
/// sessions free of '/' (which separates derived flow names).
fn names(s: &Scenario, c: &mut Checker) {
    c.unique("node", "nodes", s.nodes.iter().map(|n| n.name.as_str()));
    c.unique("group", "groups", s.groups.iter().map(|g| g.name.as_str()));
    c.unique(
        "flow",
        "flows",
        s.flows.iter().map(|f| f.common.name.as_str()),
    );
    let mut seen = HashSet::default();
    for r in s.sessions() {
        let name = r.model.name();
        if name.is_empty() || name.contains('/') {
            c.err(
                format!("{}.name", r.path),
                "must be non-empty and must not contain '/'",
            );
        } else if !seen.insert(name) {
            c.err(
                format!("{}.name", r.path),
                format!("duplicate session name \"{name}\""),
            );
        }
    }
}

fn queue(path: &str, q: &QueueSpec, rate_bps: f64, c: &mut Checker) {
    q.model().validate(path, rate_bps, c);
}

fn loss(path: &str, l: &LossSpec, scope: &Scope<'_>, c: &mut Checker) {
    l.model().validate(path, scope, c);
}

/// `list[i]`, written into `buf` (one buffer for a list of hundreds).
fn item_path<'a>(buf: &'a mut String, list: &str, i: usize) -> &'a str {
    use std::fmt::Write;
    buf.clear();
    write!(buf, "{list}[{i}]").expect("writing to a String");
    buf
}

fn links(s: &Scenario, scope: &Scope<'_>, c: &mut Checker) {
    let mut link_names = HashSet::default();
    let mut buf = String::new();
    for (i, l) in s.links.iter().enumerate() {
        let p = item_path(&mut buf, "links", i);
        let ka = scope.node(c, format_args!("{p}.a"), &l.a);
        let kb = scope.node(c, format_args!("{p}.b"), &l.b);
        if ka && kb && l.a == l.b {
            let msg = format!("a link cannot join node \"{}\" to itself", l.a);
            c.err(format!("{p}.b"), msg);
        }
        let name = l.display_name();
        if name.is_empty() {
            c.err(format!("{p}.name"), "link name must not be empty");
        } else if link_names.contains(&name) {
            let msg =
                format!("duplicate link name \"{name}\" (parallel links need distinct names)");
            c.err(format!("{p}.name"), msg);
        } else {
            link_names.insert(name);
        }
        link(p, l, scope, c);
        for (dname, d) in [("ab", &l.ab), ("ba", &l.ba)] {
            if let Some(d) = d {
                direction(&format!("{p}.{dname}"), l, d, scope, c);
            }
        }
    }
}

/// The rate a queue discipline is checked against: a schedule's lowest
/// rate, a trace's mean rate.
fn queue_rate(rate: Option<&Schedule>, trace: Option<&TraceSpec>) -> f64 {
    match (trace, rate) {
        (Some(t), _) if t.validated() => t.build().mean_rate_bps(),
        (None, Some(r)) => r.values().into_iter().fold(f64::INFINITY, f64::min),
        _ => f64::INFINITY,
    }
}

/// A rate schedule's or trace's checks, and that only one is given.
fn capacity(p: &str, rate: Option<&Schedule>, trace: Option<&TraceSpec>, c: &mut Checker) {
    if let (Some(_), Some(_)) = (rate, trace) {
        c.err(format!("{p}.trace"), "give rate_bps or trace, not both");
    }
    if let Some(r) = rate {
        r.validate(&format!("{p}.rate_bps"), c, &|path, v, c| {
            link_rate(path, v, c)
        });
    }
    if let Some(t) = trace {
        t.validate(&format!("{p}.trace"), c);
    }
}

fn delay(path: &str, d: &Schedule, c: &mut Checker) {
    d.validate(path, c, &|path, v, c| {
        c.non_negative(path, v);
        c.at_most(path, v, MAX_DELAY_MS);
    });
}

/// What both the link and a direction may give: outages and jitter.
fn changes(p: &str, outages: Option<&OutageSpec>, jitter: Option<&JitterSpec>, c: &mut Checker) {
    if let Some(o) = outages {
        o.validate(&format!("{p}.outages"), c);
    }
    if let Some(j) = jitter {
        j.validate(&format!("{p}.jitter"), c);
    }
}

/// The fields a link gives for both directions.
fn link(p: &str, l: &LinkSpec, scope: &Scope<'_>, c: &mut Checker) {
    capacity(p, l.rate_bps.as_ref(), l.trace.as_ref(), c);
    let own = |d: &Option<Box<DirSpec>>| {
        d.as_ref()
            .is_some_and(|d| d.rate_bps.is_some() || d.trace.is_some())
    };
    if l.rate_bps.is_none() && l.trace.is_none() && !(own(&l.ab) && own(&l.ba)) {
        c.err(
            format!("{p}.rate_bps"),
            "missing: give rate_bps or a trace (for the link, or for both ab and ba)",
        );
    }
    delay(&format!("{p}.delay_ms"), &l.delay_ms, c);
    changes(p, l.outages.as_ref(), l.jitter.as_ref(), c);
    if let Some(q) = &l.queue {
        // A link-wide queue serves both directions: the slower one bounds
        // what its classes may reserve.
        let rate = [None, l.ab.as_deref(), l.ba.as_deref()]
            .into_iter()
            .map(|d| {
                let dd = l.dynamics(d);
                queue_rate(dd.rate_bps, dd.trace)
            })
            .fold(f64::INFINITY, f64::min);
        queue(&format!("{p}.queue"), q, rate, c);
    }
    if let Some(x) = &l.loss {
        loss(&format!("{p}.loss"), x, scope, c);
    }
    if let Some(x) = l.cost {
        c.non_negative(format_args!("{p}.cost"), x);
    }
}

/// A link rate: positive, and at least 1 bit/s (serialisation works in
/// whole bits per second; a smaller rate would round to zero).
fn link_rate(path: &str, r: f64, c: &mut Checker) {
    c.positive(path, r);
    if r.is_finite() && r > 0.0 && r < 1.0 {
        c.err(path, format!("must be at least 1 bit/s (got {r})"));
    }
}

/// One direction's overrides.
fn direction(dp: &str, l: &LinkSpec, d: &DirSpec, scope: &Scope<'_>, c: &mut Checker) {
    capacity(dp, d.rate_bps.as_ref(), d.trace.as_ref(), c);
    if let Some(x) = &d.delay_ms {
        delay(&format!("{dp}.delay_ms"), x, c);
    }
    changes(dp, d.outages.as_ref(), d.jitter.as_ref(), c);
    if let Some(q) = &d.queue {
        let dd = l.dynamics(Some(d));
        queue(
            &format!("{dp}.queue"),
            q,
            queue_rate(dd.rate_bps, dd.trace),
            c,
        );
    }
    if let Some(x) = &d.loss {
        loss(&format!("{dp}.loss"), x, scope, c);
    }
    if let Some(x) = d.cost {
        c.non_negative(format_args!("{dp}.cost"), x);
    }
}

fn groups(s: &Scenario, scope: &Scope<'_>, c: &mut Checker) {
    for (i, g) in s.groups.iter().enumerate() {
        if g.members.is_empty() {
            c.err(
                format!("groups[{i}].members"),
                "a group needs at least one member",
            );
        }
        for (j, m) in g.members.iter().enumerate() {
            scope.node(c, format_args!("groups[{i}].members[{j}]"), m);
        }
    }
}

fn routes(s: &Scenario, scope: &Scope<'_>, c: &mut Checker) {
    if s.routing.routes.is_empty() {
        return; // no neighbour sets to build (hundreds of links)
    }
    let mut neighbours: HashMap<&str, HashSet<&str>> = HashMap::default();
    for l in &s.links {
        neighbours.entry(&l.a).or_default().insert(&l.b);
        neighbours.entry(&l.b).or_default().insert(&l.a);
    }
    for (i, r) in s.routing.routes.iter().enumerate() {
        let p = format!("routing.routes[{i}]");
        let a = scope.node(c, format_args!("{p}.node"), &r.node);
        scope.node(c, format_args!("{p}.dst"), &r.dst);
        let b = scope.node(c, format_args!("{p}.next_hop"), &r.next_hop);
        let adjacent = neighbours
            .get(r.node.as_str())
            .is_some_and(|n| n.contains(r.next_hop.as_str()));
        if a && b && !adjacent {
            let msg = format!("\"{}\" is not a neighbour of \"{}\"", r.next_hop, r.node);
            c.err(format!("{p}.next_hop"), msg);
        }
    }
}

fn measure(s: &Scenario, c: &mut Checker) {
    let w = s.measure.warmup_s;
    c.non_negative("measure.warmup_s", w);
    if w.is_finite() && w >= run_end_s(s) {
        let msg = format!(
            "{w} s leaves nothing to measure (duration_s = {})",
            s.duration_s
        );
        c.err("measure.warmup_s", msg);
    }
    if let Some(x) = s.measure.capacity_interval_ms.filter(|&x| x != 0.0) {
        c.interval_ms("measure.capacity_interval_ms", x);
    }
    if let Some(x) = s.measure.queue_sample_ms {
        c.interval_ms("measure.queue_sample_ms", x);
    }
    for (i, w) in s.measure.windows_s.iter().enumerate() {
        c.window(format_args!("measure.windows_s[{i}]"), w);
    }
}
