//! A flow placed in the built network: its default ports, its random
//! start, its stop within the run.

use crate::app::Action;
use crate::net::Packet;
use crate::scenario::{build::build, parse_and_validate};
use crate::sim::{RngStreams, SimTime};
use crate::world::World;

/// Flows from a to b over one link for 10 s, with `flows` (JSON objects).
fn scenario(flows: &str) -> String {
    format!(
        r#"{{"duration_s": 10, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
        "links": [{{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 1}}],
        "flows": [{flows}]}}"#
    )
}

/// `scenario(flows)` built for `seed`.
fn world(flows: &str, seed: u64) -> World {
    let s = parse_and_validate(&scenario(flows)).expect("a valid scenario");
    build(&s, &RngStreams::new(seed, 0)).unwrap_or_else(|e| panic!("{e:?}"))
}

fn cbr(name: &str, more: &str) -> String {
    format!(
        r#"{{"name": "{name}", "type": "cbr", "src": "a", "dst": "b",
            "payload_bytes": 100, "interval_ms": 10{more}}}"#
    )
}

/// The first packet the application `i` sends.
fn first_packet(w: &mut World, i: usize) -> Packet {
    let mut out = Vec::new();
    w.apps[i].app.on_start(SimTime::ZERO, &mut out);
    out.into_iter()
        .find_map(|a| match a {
            Action::Send(p) => Some(p),
            Action::Timer { .. } => None,
        })
        .expect("a packet")
}

/// Flow i without ports sends from port 10000 + i to port 20000 + i,
/// where its sink listens; given ports are kept.
#[test]
fn flows_default_to_ports_by_their_index() {
    let flows = [
        cbr("f", ""),
        cbr("g", ""),
        cbr("h", r#", "src_port": 7, "dst_port": 9"#),
    ];
    let mut w = world(&flows.join(","), 1);
    // Each flow adds its source, then its sink on b (node 1).
    for (i, (src, dst)) in [(10_000, 20_000), (10_001, 20_001), (7, 9)]
        .into_iter()
        .enumerate()
    {
        let p = first_packet(&mut w, 2 * i);
        assert_eq!((p.src_port, p.dst_port), (src, dst), "flow {i}");
        assert_eq!(w.ports.listener(1, dst), Some(2 * i as u32 + 1));
    }
}

/// A random start falls in [start_s, start_s + start_jitter_s], drawn
/// from the flow's own stream: the same for a seed, another for another
/// seed; without jitter the flow starts at start_s.
#[test]
fn a_jittered_start_is_drawn_within_its_window() {
    let flows = |j: &str| [cbr("f", &format!(r#", "start_s": 1{j}"#))].join(",");
    let start = |j: &str, seed| world(&flows(j), seed).apps[0].start;
    assert_eq!(start("", 1), SimTime::from_secs(1));
    assert_eq!(start(r#", "start_jitter_s": 0"#, 1), SimTime::from_secs(1));
    let drawn: Vec<SimTime> = (1..=20)
        .map(|seed| start(r#", "start_jitter_s": 2"#, seed))
        .collect();
    assert!(drawn
        .iter()
        .all(|t| (SimTime::from_secs(1)..=SimTime::from_secs(3)).contains(t)));
    assert!(drawn.windows(2).any(|w| w[0] != w[1]), "{drawn:?}");
    assert_eq!(
        start(r#", "start_jitter_s": 2"#, 5),
        drawn[4],
        "one draw per seed"
    );
}

/// A flow's stop is its `stop_s`, the end of the run if that is later or
/// not given: the flows table says when each could send.
#[test]
fn a_flow_stops_at_its_stop_or_the_runs_end() {
    let flows = [
        cbr("f", r#", "stop_s": 4"#),
        cbr("g", r#", "stop_s": 50"#),
        cbr("h", ""),
    ];
    let text = scenario(&flows.join(","));
    let out = crate::app::testing::run_text(&text);
    let stops = crate::app::testing::numbers(&out, "flows", "stop_s");
    assert_eq!(stops, [4.0, 10.0, 10.0]);
    let sent = crate::app::testing::numbers(&out, "flows", "sent");
    assert_eq!(sent, [400.0, 1000.0, 1000.0], "every 10 ms before the stop");
}

/// The schema's flow is one variant per kind: the kind's own fields and
/// every common one, "type" and the common required fields required
/// once each.
#[test]
fn each_flow_kinds_schema_has_the_common_fields() {
    use super::{FlowCommon, FlowKind};
    use serde_json::Value;
    let schema: Value = serde_json::from_str(&crate::scenario::json_schema()).expect("json");
    let variants = schema["$defs"]["FlowSpec"]["oneOf"]
        .as_array()
        .expect("oneOf")
        .clone();
    let kinds = FlowKind::schema_fields_by_tag();
    assert_eq!(variants.len(), kinds.len());
    let common = crate::scenario::tagged::field_names::<FlowCommon>();
    for (v, (tag, own)) in variants.iter().zip(kinds) {
        assert_eq!(v["properties"]["type"]["const"], tag);
        let mut props: Vec<String> = v["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .cloned()
            .collect();
        let mut want: Vec<String> = common.iter().chain(&own).cloned().collect();
        want.push("type".into());
        props.sort();
        want.sort();
        want.dedup();
        assert_eq!(props, want, "{tag}");
        let required: Vec<&str> = (v["required"].as_array().expect("required").iter())
            .map(|x| x.as_str().expect("a name"))
            .collect();
        assert_eq!(required[0], "type", "{tag}");
        for name in ["name", "src"] {
            assert_eq!(
                required.iter().filter(|r| **r == name).count(),
                1,
                "{tag}: {required:?}"
            );
        }
    }
}

/// A UDP source's rate is positive, and with its payload at most 10^6
/// packets a second (packets under 1 us apart are refused).
#[test]
fn a_udp_sources_packet_rate_is_bounded() {
    let said = |rate_bps: f64, payload: Option<u32>| {
        crate::app::testing::said(|c| super::check_udp_rate("f", rate_bps, payload, c))
    };
    assert!(said(8e8, Some(100)).is_empty(), "exactly 10^6 packets/s");
    assert_eq!(
        said(8.8e8, Some(100)),
        ["f.rate_bps: the packet rate is 1.100e6 packets/s, more than 1e6 (packets under 1 us apart)"]
    );
    assert!(said(8.8e8, None).is_empty(), "no payload: its own error");
    assert_eq!(
        said(0.0, Some(100)),
        ["f.rate_bps: must be a positive number (got 0)"]
    );
}

/// A UDP source's payload: 1 to 65507 bytes (an IPv4 packet's 65535 less
/// 28 of headers), and required.
#[test]
fn a_udp_sources_payload_fits_an_ipv4_packet() {
    let said = |payload| crate::app::testing::said(|c| super::check_udp_payload("f", payload, c));
    assert!(said(Some(1)).is_empty() && said(Some(65_507)).is_empty());
    for bad in [0, 65_508] {
        let want = format!("f.payload_bytes: must be 1..=65507 bytes (got {bad})");
        assert_eq!(said(Some(bad)), [want]);
    }
    assert_eq!(
        said(None),
        ["f.payload_bytes: required for cbr and poisson flows"]
    );
}

/// The packets going back from a unicast flow's receiver (ACKs): the
/// flow after the data's, to the data's source, the two ports swapped,
/// the rest as the data's.
#[test]
fn return_packets_swap_the_ports_and_go_back_to_the_source() {
    use crate::net::Dest;
    let common: super::FlowCommon =
        serde_json::from_str(r#"{"name": "f", "src": "a", "dst": "b"}"#).expect("common fields");
    let f = super::ResolvedFlow {
        spec: &common,
        index: 0,
        path: "flows[0]".into(),
        id: 4,
        src: 0,
        dst: Dest::Node(1),
        receivers: vec![1],
        src_port: 10,
        dst_port: 20,
        start: SimTime::ZERO,
        stop: SimTime::from_secs(1),
    };
    let data = crate::app::PacketTemplate {
        dscp: 46,
        ecn: crate::net::packet::ecn::ECT0,
        ..f.udp_template(100)
    };
    assert_eq!(
        (data.flow, data.dst, data.src_port, data.dst_port),
        (4, Dest::Node(1), 10, 20)
    );
    let back = super::return_template(&f, &data);
    assert_eq!(
        (back.flow, back.dst, back.src_port, back.dst_port),
        (5, Dest::Node(0), 20, 10)
    );
    assert_eq!(
        (back.dscp, back.ecn, back.payload_bytes),
        (46, data.ecn, 100)
    );
}

/// A flow that is not an object says what it should be.
#[test]
fn a_flow_that_is_not_an_object_is_refused_as_such() {
    let e = serde_json::from_str::<super::FlowSpec>("5").expect_err("not a flow");
    assert!(e.to_string().contains("expected a map"), "{e}");
}
