//! Parsing and validation. Every problem is reported as a [`FieldError`]
//! naming the path of the offending field (`links[2].rate_bps`) and what is
//! wrong with it; validation collects all problems rather than stopping at
//! the first.

use super::model::*;
use std::collections::{HashMap, HashSet};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Parses a scenario from JSON text; structural errors (wrong type, unknown
/// or missing field) name their path.
pub fn parse_json(text: &str) -> Result<Scenario, Vec<FieldError>> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." {
            "(scenario)".to_string()
        } else {
            path
        };
        let msg = e.inner().to_string();
        // Line/column refer to the JSON handed over, not the user's file.
        let msg = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        vec![FieldError { path, message: msg }]
    })
}

/// Parses and validates.
pub fn parse_and_validate(text: &str) -> Result<Scenario, Vec<FieldError>> {
    let s = parse_json(text)?;
    let errs = validate(&s);
    if errs.is_empty() {
        Ok(s)
    } else {
        Err(errs)
    }
}

/// Longest run accepted: about 3 years of simulated time.
pub const MAX_DURATION_S: f64 = 1e8;
/// Longest propagation delay accepted: about 11 days.
pub const MAX_DELAY_MS: f64 = 1e9;

struct V {
    errs: Vec<FieldError>,
}

impl V {
    fn err(&mut self, path: impl Into<String>, msg: impl Into<String>) {
        self.errs.push(FieldError {
            path: path.into(),
            message: msg.into(),
        });
    }
    fn positive(&mut self, path: &str, x: f64) {
        if !x.is_finite() || x <= 0.0 {
            self.err(path, format!("must be a positive number (got {x})"));
        }
    }
    fn non_negative(&mut self, path: &str, x: f64) {
        if !x.is_finite() || x < 0.0 {
            self.err(path, format!("must be a non-negative number (got {x})"));
        }
    }
    fn at_most(&mut self, path: &str, x: f64, max: f64) {
        if x.is_finite() && x > max {
            self.err(path, format!("must be at most {max} (got {x})"));
        }
    }
    fn probability(&mut self, path: &str, x: f64) {
        if !x.is_finite() || !(0.0..=1.0).contains(&x) {
            self.err(path, format!("must be a probability in [0, 1] (got {x})"));
        }
    }
    fn unique<'a>(&mut self, what: &str, names: impl Iterator<Item = (String, &'a str)>) {
        let mut seen = HashSet::new();
        for (path, n) in names {
            if n.is_empty() {
                self.err(path, format!("{what} name must not be empty"));
            } else if !seen.insert(n) {
                self.err(path, format!("duplicate {what} name \"{n}\""));
            }
        }
    }
    fn known(&mut self, path: &str, name: &str, set: &HashSet<&str>, what: &str) -> bool {
        if set.contains(name) {
            true
        } else {
            self.err(path, format!("unknown {what} \"{name}\""));
            false
        }
    }

    fn queue(&mut self, path: &str, q: &QueueSpec) {
        match q {
            QueueSpec::Droptail {
                limit_packets,
                limit_bytes,
            } => {
                if limit_packets.is_none() && limit_bytes.is_none() {
                    self.err(path, "droptail needs limit_packets or limit_bytes");
                }
                if *limit_packets == Some(0) {
                    self.err(format!("{path}.limit_packets"), "must be at least 1");
                }
                if *limit_bytes == Some(0) {
                    self.err(format!("{path}.limit_bytes"), "must be at least 1");
                }
            }
        }
    }

    fn loss(&mut self, path: &str, l: &LossSpec, flows: &HashSet<&str>) {
        match l {
            LossSpec::Packet { rate }
            | LossSpec::ByteError { rate }
            | LossSpec::BitError { rate } => self.probability(&format!("{path}.rate"), *rate),
            LossSpec::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                self.probability(&format!("{path}.p_good_to_bad"), *p_good_to_bad);
                self.probability(&format!("{path}.p_bad_to_good"), *p_bad_to_good);
                if let Some(x) = loss_good {
                    self.probability(&format!("{path}.loss_good"), *x);
                }
                if let Some(x) = loss_bad {
                    self.probability(&format!("{path}.loss_bad"), *x);
                }
                if *p_good_to_bad + *p_bad_to_good <= 0.0 {
                    self.err(path, "p_good_to_bad and p_bad_to_good must not both be 0");
                }
            }
            LossSpec::Explicit {
                packets, windows_s, ..
            } => {
                for (i, p) in packets.iter().enumerate() {
                    self.known(&format!("{path}.packets[{i}].flow"), &p.flow, flows, "flow");
                }
                for (i, w) in windows_s.iter().enumerate() {
                    self.window(&format!("{path}.windows_s[{i}]"), w);
                }
            }
        }
    }

    fn tcp(&mut self, path: &str, t: &TcpSpec) {
        if let Some(m) = t.mss_bytes {
            if m == 0 || m > 65_495 {
                self.err(
                    format!("{path}.mss_bytes"),
                    format!("must be 1..=65495 (got {m})"),
                );
            }
        }
        if let Some(InitialWindowSpec::Segments(0)) = t.initial_window {
            self.err(
                format!("{path}.initial_window"),
                "must be at least 1 segment",
            );
        }
        if t.max_window_packets == Some(0) {
            self.err(format!("{path}.max_window_packets"), "must be at least 1");
        }
        if let Some(r) = t.rwnd_bytes {
            let mss = t.mss_bytes.unwrap_or(1460) as u64;
            if r < mss {
                self.err(
                    format!("{path}.rwnd_bytes"),
                    format!("must be at least one MSS ({mss} bytes)"),
                );
            }
        }
        for (name, x) in [
            ("min_rto_ms", t.min_rto_ms),
            ("initial_rto_ms", t.initial_rto_ms),
            ("max_rto_ms", t.max_rto_ms),
            ("delack_timeout_ms", t.delack_timeout_ms),
        ] {
            if let Some(x) = x {
                self.positive(&format!("{path}.{name}"), x);
                self.at_most(&format!("{path}.{name}"), x, MAX_DELAY_MS);
            }
        }
        if let (Some(a), Some(b)) = (t.min_rto_ms, t.max_rto_ms) {
            if a > b {
                self.err(
                    format!("{path}.max_rto_ms"),
                    format!("must be at least min_rto_ms ({a})"),
                );
            }
        }
        if t.dupthresh == Some(0) {
            self.err(format!("{path}.dupthresh"), "must be at least 1");
        }
    }

    fn window(&mut self, path: &str, w: &[f64; 2]) {
        if !w[0].is_finite() || !w[1].is_finite() || w[0] < 0.0 || w[1] <= w[0] {
            self.err(
                path,
                format!(
                    "must be [start, end] with 0 <= start < end (got [{}, {}])",
                    w[0], w[1]
                ),
            );
        }
    }
}

/// Semantic checks of a parsed scenario.
pub fn validate(s: &Scenario) -> Vec<FieldError> {
    let mut v = V { errs: Vec::new() };
    v.positive("duration_s", s.duration_s);
    if s.duration_s > MAX_DURATION_S {
        v.err(
            "duration_s",
            format!("must be at most {MAX_DURATION_S} s (got {})", s.duration_s),
        );
    }
    if s.nodes.is_empty() {
        v.err("nodes", "at least one node is needed");
    }
    v.unique(
        "node",
        s.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (format!("nodes[{i}].name"), n.name.as_str())),
    );
    v.unique(
        "group",
        s.groups
            .iter()
            .enumerate()
            .map(|(i, g)| (format!("groups[{i}].name"), g.name.as_str())),
    );
    v.unique(
        "flow",
        s.flows
            .iter()
            .enumerate()
            .map(|(i, f)| (format!("flows[{i}].name"), f.name.as_str())),
    );
    for (i, f) in s.flows.iter().enumerate() {
        if f.name.contains('/') {
            v.err(
                format!("flows[{i}].name"),
                "must not contain '/' (reserved for \"<tcp flow>/ack\")",
            );
        }
    }
    let nodes: HashSet<&str> = s.nodes.iter().map(|n| n.name.as_str()).collect();
    let groups: HashSet<&str> = s.groups.iter().map(|g| g.name.as_str()).collect();
    let ack_names: Vec<String> = s
        .flows
        .iter()
        .filter(|f| f.kind == FlowKind::Tcp)
        .map(|f| format!("{}/ack", f.name))
        .collect();
    let flows: HashSet<&str> = s
        .flows
        .iter()
        .map(|f| f.name.as_str())
        .chain(ack_names.iter().map(|n| n.as_str()))
        .collect();

    for (i, n) in s.nodes.iter().enumerate() {
        if let Some(l) = &n.receiver_loss {
            v.loss(&format!("nodes[{i}].receiver_loss"), l, &flows);
        }
    }

    let mut link_names = HashSet::new();
    let mut neighbours: HashMap<&str, HashSet<&str>> = HashMap::new();
    for (i, l) in s.links.iter().enumerate() {
        let p = format!("links[{i}]");
        let ka = v.known(&format!("{p}.a"), &l.a, &nodes, "node");
        let kb = v.known(&format!("{p}.b"), &l.b, &nodes, "node");
        if ka && kb && l.a == l.b {
            v.err(
                format!("{p}.b"),
                format!("a link cannot join node \"{}\" to itself", l.a),
            );
        }
        neighbours
            .entry(l.a.as_str())
            .or_default()
            .insert(l.b.as_str());
        neighbours
            .entry(l.b.as_str())
            .or_default()
            .insert(l.a.as_str());
        let name = l.name.clone().unwrap_or_else(|| format!("{}-{}", l.a, l.b));
        if name.is_empty() {
            v.err(format!("{p}.name"), "link name must not be empty");
        } else if !link_names.insert(name.clone()) {
            v.err(
                format!("{p}.name"),
                format!("duplicate link name \"{name}\" (parallel links need distinct names)"),
            );
        }
        v.positive(&format!("{p}.rate_bps"), l.rate_bps);
        if l.rate_bps.is_finite() && l.rate_bps > 0.0 && l.rate_bps < 1.0 {
            v.err(format!("{p}.rate_bps"), "must be at least 1 bit/s");
        }
        v.non_negative(&format!("{p}.delay_ms"), l.delay_ms);
        v.at_most(&format!("{p}.delay_ms"), l.delay_ms, MAX_DELAY_MS);
        if let Some(q) = &l.queue {
            v.queue(&format!("{p}.queue"), q);
        }
        if let Some(x) = &l.loss {
            v.loss(&format!("{p}.loss"), x, &flows);
        }
        if let Some(c) = l.cost {
            v.non_negative(&format!("{p}.cost"), c);
        }
        for (dname, d) in [("ab", &l.ab), ("ba", &l.ba)] {
            let Some(d) = d else { continue };
            let dp = format!("{p}.{dname}");
            if let Some(r) = d.rate_bps {
                v.positive(&format!("{dp}.rate_bps"), r);
            }
            if let Some(x) = d.delay_ms {
                v.non_negative(&format!("{dp}.delay_ms"), x);
                v.at_most(&format!("{dp}.delay_ms"), x, MAX_DELAY_MS);
            }
            if let Some(q) = &d.queue {
                v.queue(&format!("{dp}.queue"), q);
            }
            if let Some(x) = &d.loss {
                v.loss(&format!("{dp}.loss"), x, &flows);
            }
            if let Some(c) = d.cost {
                v.non_negative(&format!("{dp}.cost"), c);
            }
        }
    }

    for (i, g) in s.groups.iter().enumerate() {
        if g.members.is_empty() {
            v.err(
                format!("groups[{i}].members"),
                "a group needs at least one member",
            );
        }
        for (j, m) in g.members.iter().enumerate() {
            v.known(&format!("groups[{i}].members[{j}]"), m, &nodes, "node");
        }
    }

    for (i, f) in s.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        v.known(&format!("{p}.src"), &f.src, &nodes, "node");
        match (&f.dst, &f.group) {
            (Some(d), None) => {
                if v.known(&format!("{p}.dst"), d, &nodes, "node") && *d == f.src {
                    v.err(format!("{p}.dst"), "must differ from src");
                }
            }
            (None, Some(g)) => {
                v.known(&format!("{p}.group"), g, &groups, "group");
            }
            (Some(_), Some(_)) => v.err(&p, "give either dst or group, not both"),
            (None, None) => v.err(
                &p,
                "give a destination: dst (a node) or group (a multicast group)",
            ),
        }
        let udp = matches!(f.kind, FlowKind::Cbr | FlowKind::Poisson);
        match (udp, f.payload_bytes) {
            (true, None) => v.err(
                format!("{p}.payload_bytes"),
                "required for cbr and poisson flows",
            ),
            (true, Some(b)) if b == 0 || b > 65_507 => v.err(
                format!("{p}.payload_bytes"),
                format!("must be 1..=65507 bytes (got {b})"),
            ),
            (false, Some(_)) => v.err(
                format!("{p}.payload_bytes"),
                "not used by tcp (segments are MSS-sized; see tcp.mss_bytes)",
            ),
            _ => {}
        }
        if udp {
            if f.bytes.is_some() {
                v.err(format!("{p}.bytes"), "only tcp flows take bytes");
            }
            if f.tcp.is_some() {
                v.err(format!("{p}.tcp"), "only tcp flows take tcp options");
            }
        }
        match f.kind {
            FlowKind::Cbr => {
                match (f.rate_bps, f.interval_ms) {
                    (Some(r), None) => v.positive(&format!("{p}.rate_bps"), r),
                    (None, Some(x)) => v.positive(&format!("{p}.interval_ms"), x),
                    (Some(_), Some(_)) => v.err(&p, "cbr takes rate_bps or interval_ms, not both"),
                    (None, None) => v.err(&p, "cbr needs rate_bps or interval_ms"),
                }
                if f.rate_pps.is_some() {
                    v.err(
                        format!("{p}.rate_pps"),
                        "not used by cbr (give rate_bps or interval_ms)",
                    );
                }
            }
            FlowKind::Poisson => {
                match (f.rate_bps, f.rate_pps) {
                    (Some(r), None) => v.positive(&format!("{p}.rate_bps"), r),
                    (None, Some(x)) => v.positive(&format!("{p}.rate_pps"), x),
                    (Some(_), Some(_)) => v.err(&p, "poisson takes rate_bps or rate_pps, not both"),
                    (None, None) => v.err(&p, "poisson needs rate_bps or rate_pps"),
                }
                if f.interval_ms.is_some() {
                    v.err(
                        format!("{p}.interval_ms"),
                        "not used by poisson (give rate_bps or rate_pps)",
                    );
                }
            }
            FlowKind::Tcp => {
                for (name, given) in [
                    ("rate_bps", f.rate_bps.is_some()),
                    ("interval_ms", f.interval_ms.is_some()),
                    ("rate_pps", f.rate_pps.is_some()),
                    ("max_packets", f.max_packets.is_some()),
                ] {
                    if given {
                        v.err(
                            format!("{p}.{name}"),
                            "not used by tcp (it sends as fast as its window allows)",
                        );
                    }
                }
                if f.group.is_some() {
                    v.err(format!("{p}.group"), "tcp is unicast: give dst");
                }
                if f.bytes == Some(0) {
                    v.err(format!("{p}.bytes"), "must be at least 1");
                }
                if let Some(t) = &f.tcp {
                    v.tcp(&format!("{p}.tcp"), t);
                }
            }
        }
        if let Some(j) = f.start_jitter_s {
            v.non_negative(&format!("{p}.start_jitter_s"), j);
            if j.is_finite() && f.start_s + j >= s.duration_s {
                v.err(
                    format!("{p}.start_jitter_s"),
                    format!(
                        "the latest start ({} s) is not before the end of the run",
                        f.start_s + j
                    ),
                );
            }
        }
        v.non_negative(&format!("{p}.start_s"), f.start_s);
        if f.start_s.is_finite() && s.duration_s.is_finite() && f.start_s >= s.duration_s {
            v.err(
                format!("{p}.start_s"),
                format!(
                    "starts at {} s, not before the end of the run (duration_s = {})",
                    f.start_s, s.duration_s
                ),
            );
        }
        if let Some(stop) = f.stop_s {
            if !stop.is_finite() || stop <= f.start_s {
                v.err(
                    format!("{p}.stop_s"),
                    format!("must be after start_s = {} (got {stop})", f.start_s),
                );
            }
        }
        if f.max_packets == Some(0) {
            v.err(format!("{p}.max_packets"), "must be at least 1");
        }
        if f.dscp > 63 {
            v.err(
                format!("{p}.dscp"),
                format!("must be 0..=63 (got {})", f.dscp),
            );
        }
    }

    let mut session_names = HashSet::new();
    for (i, r) in s.rtp_sessions.iter().enumerate() {
        let p = format!("rtp_sessions[{i}]");
        if r.name.is_empty() || r.name.contains('/') {
            v.err(
                format!("{p}.name"),
                "must be non-empty and must not contain '/'",
            );
        } else if !session_names.insert(r.name.as_str()) {
            v.err(
                format!("{p}.name"),
                format!("duplicate session name \"{}\"", r.name),
            );
        }
        if r.members.len() < 2 {
            v.err(
                format!("{p}.members"),
                "a session needs at least two members",
            );
        }
        if r.transport == RtpTransport::Unicast && r.members.len() != 2 {
            v.err(
                format!("{p}.members"),
                format!(
                    "a unicast session has exactly two members (got {})",
                    r.members.len()
                ),
            );
        }
        let mut seen = HashSet::new();
        for (j, m) in r.members.iter().enumerate() {
            if v.known(&format!("{p}.members[{j}].node"), &m.node, &nodes, "node")
                && !seen.insert(m.node.as_str())
            {
                v.err(
                    format!("{p}.members[{j}].node"),
                    format!("\"{}\" is already a member", m.node),
                );
            }
        }
        v.positive(&format!("{p}.session_bw_bps"), r.session_bw_bps);
        if r.media_payload_bytes == 0 || r.media_payload_bytes > 65_495 {
            v.err(
                format!("{p}.media_payload_bytes"),
                format!("must be 1..=65495 bytes (got {})", r.media_payload_bytes),
            );
        }
        if let Some(f) = r.rtcp_fraction {
            if !f.is_finite() || f <= 0.0 || f > 1.0 {
                v.err(
                    format!("{p}.rtcp_fraction"),
                    format!("must be in (0, 1] (got {f})"),
                );
            }
        }
        v.non_negative(&format!("{p}.start_s"), r.start_s);
        if r.start_s.is_finite() && r.start_s >= s.duration_s {
            v.err(format!("{p}.start_s"), "must be before the end of the run");
        }
        if let Some(stop) = r.stop_s {
            if !stop.is_finite() || stop <= r.start_s {
                v.err(
                    format!("{p}.stop_s"),
                    format!("must be after start_s = {}", r.start_s),
                );
            }
        }
        if let Some(np) = &r.newpred {
            v.positive(&format!("{p}.newpred.frames_per_s"), np.frames_per_s);
            if np.segments_per_frame == 0 {
                v.err(
                    format!("{p}.newpred.segments_per_frame"),
                    "must be at least 1",
                );
            }
            let media = r.members.iter().filter(|m| m.media).count().max(1) as f64;
            let seg_bytes = r.session_bw_bps
                / media
                / np.frames_per_s.max(1e-9)
                / 8.0
                / np.segments_per_frame.max(1) as f64;
            if np.frames_per_s > 0.0 && seg_bytes < 41.0 {
                v.err(
                    format!("{p}.newpred"),
                    format!("segments of {seg_bytes:.1} bytes leave no room for RTP/UDP/IP headers (40 bytes)"),
                );
            }
        }
        if let Some(a) = &r.avpf {
            for (name, x) in [
                ("trr_interval_ms", a.trr_interval_ms),
                ("l", a.l),
                ("k", a.k),
            ] {
                if let Some(x) = x {
                    v.non_negative(&format!("{p}.avpf.{name}"), x);
                }
            }
            for (name, x) in [
                ("max_feedback_delay_ms", a.max_feedback_delay_ms),
                ("retention_ms", a.retention_ms),
            ] {
                if let Some(x) = x {
                    v.positive(&format!("{p}.avpf.{name}"), x);
                }
            }
            if a.retention_ms.is_some_and(|x| x < 2000.0) {
                v.err(
                    format!("{p}.avpf.retention_ms"),
                    "RFC 4585 requires at least 2000 ms",
                );
            }
        }
    }

    for (i, r) in s.routing.routes.iter().enumerate() {
        let p = format!("routing.routes[{i}]");
        let a = v.known(&format!("{p}.node"), &r.node, &nodes, "node");
        v.known(&format!("{p}.dst"), &r.dst, &nodes, "node");
        let b = v.known(&format!("{p}.next_hop"), &r.next_hop, &nodes, "node");
        if a && b
            && !neighbours
                .get(r.node.as_str())
                .is_some_and(|n| n.contains(r.next_hop.as_str()))
        {
            v.err(
                format!("{p}.next_hop"),
                format!("\"{}\" is not a neighbour of \"{}\"", r.next_hop, r.node),
            );
        }
    }

    if let Some(x) = s.measure.queue_sample_ms {
        v.positive("measure.queue_sample_ms", x);
    }
    for (i, w) in s.measure.windows_s.iter().enumerate() {
        v.window(&format!("measure.windows_s[{i}]"), w);
    }
    v.errs
}
