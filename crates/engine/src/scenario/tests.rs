//! Validation of every model's spec: each bad value is reported at its
//! field with the problem (the Python tests check the same through the
//! binding; these keep the rules visible to mutation testing).

use super::{parse_and_validate, FieldError};
use serde_json::{json, Value};

fn base() -> Value {
    json!({
        "duration_s": 5,
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 10}],
        "flows": [{"name": "f", "type": "cbr", "src": "a", "dst": "b",
                   "payload_bytes": 100, "interval_ms": 20}],
    })
}

fn errors(v: &Value) -> Vec<FieldError> {
    match parse_and_validate(&v.to_string()) {
        Ok(_) => Vec::new(),
        Err(e) => e,
    }
}

/// `base()` with `value` at `pointer` has an error at `path` containing
/// `fragment`.
fn check(pointer: &str, value: Value, path: &str, fragment: &str) {
    let mut v = base();
    *v.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer} in the base scenario")) = value;
    let errs = errors(&v);
    assert!(
        errs.iter()
            .any(|e| e.path == path && e.message.contains(fragment)),
        "{pointer}: expected {path}: ...{fragment}..., got {errs:?}"
    );
}

#[test]
fn the_base_scenario_is_valid() {
    assert_eq!(errors(&base()), vec![]);
}

#[test]
fn queue_disciplines() {
    for (tag, path) in [
        ("droptail", "links[0].queue"),
        ("drophead", "links[0].queue"),
    ] {
        let mut v = base();
        v["links"][0]["queue"] = json!({"type": tag});
        let errs = errors(&v);
        assert!(
            errs.iter().any(|e| e.path == path
                && e.message == format!("{tag} needs limit_packets or limit_bytes")),
            "{errs:?}"
        );
        for field in ["limit_packets", "limit_bytes"] {
            let mut v = base();
            v["links"][0]["queue"] = json!({"type": tag, field: 0});
            let errs = errors(&v);
            assert!(
                errs.iter()
                    .any(|e| e.path == format!("links[0].queue.{field}")
                        && e.message == "must be at least 1"),
                "{errs:?}"
            );
        }
        let mut v = base();
        v["links"][0]["ab"] = json!({"queue": {"type": tag, "limit_bytes": 1}});
        assert_eq!(errors(&v), vec![], "a 1-byte limit is legal");
    }
}

fn with_loss(loss: Value) -> Vec<FieldError> {
    let mut v = base();
    v["links"][0]["loss"] = loss;
    errors(&v)
}

#[test]
fn loss_models() {
    for tag in ["packet", "byte_error", "bit_error"] {
        for bad in [-0.1, 1.5] {
            let e = with_loss(json!({"type": tag, "rate": bad}));
            assert!(
                e.iter().any(|e| e.path == "links[0].loss.rate"
                    && e.message.contains("probability in [0, 1]")),
                "{e:?}"
            );
        }
        for ok in [0.0, 1.0] {
            assert_eq!(with_loss(json!({"type": tag, "rate": ok})), vec![]);
        }
    }
    let ge = |gb: f64, bg: f64, hg: f64, hb: f64| {
        with_loss(
            json!({"type": "gilbert_elliott", "p_good_to_bad": gb, "p_bad_to_good": bg,
                         "loss_good": hg, "loss_bad": hb}),
        )
    };
    assert_eq!(ge(0.1, 0.2, 0.0, 1.0), vec![]);
    assert_eq!(ge(0.0, 0.2, 0.0, 1.0), vec![], "one transition may be 0");
    for (args, field) in [
        ((1.5, 0.2, 0.0, 1.0), "p_good_to_bad"),
        ((0.1, -0.2, 0.0, 1.0), "p_bad_to_good"),
        ((0.1, 0.2, 1.1, 1.0), "loss_good"),
        ((0.1, 0.2, 0.0, 2.0), "loss_bad"),
    ] {
        let e = ge(args.0, args.1, args.2, args.3);
        assert!(
            e.iter().any(|e| e.path == format!("links[0].loss.{field}")),
            "{field}: {e:?}"
        );
    }
    let e = ge(0.0, 0.0, 0.0, 1.0);
    assert!(
        e.iter()
            .any(|e| e.path == "links[0].loss" && e.message.contains("must not both be 0")),
        "{e:?}"
    );
    let e = with_loss(
        json!({"type": "explicit", "packets": [{"flow": "nope", "seq": 1}],
                             "windows_s": [[2, 1]]}),
    );
    assert!(
        e.iter()
            .any(|e| e.path == "links[0].loss.packets[0].flow"
                && e.message == "unknown flow \"nope\""),
        "{e:?}"
    );
    assert!(
        e.iter().any(|e| e.path == "links[0].loss.windows_s[0]"),
        "{e:?}"
    );
    let ok = with_loss(
        json!({"type": "explicit", "packets": [{"flow": "f", "seq": 1}], "windows_s": [[0, 1]]}),
    );
    assert_eq!(ok, vec![]);
}

#[test]
fn flows() {
    check(
        "/flows/0/payload_bytes",
        json!(0),
        "flows[0].payload_bytes",
        "1..=65507",
    );
    check(
        "/flows/0/payload_bytes",
        json!(65508),
        "flows[0].payload_bytes",
        "1..=65507",
    );
    check(
        "/flows/0/interval_ms",
        json!(0),
        "flows[0].interval_ms",
        "positive",
    );
    check(
        "/flows/0/dst",
        json!("a"),
        "flows[0].dst",
        "must differ from src",
    );
    check(
        "/flows/0/src",
        json!("zz"),
        "flows[0].src",
        "unknown node \"zz\"",
    );
    let mut v = base();
    v["flows"][0]["dscp"] = json!(64);
    v["flows"][0]["max_packets"] = json!(0);
    v["flows"][0]["start_s"] = json!(5);
    let e = errors(&v);
    for (path, frag) in [
        ("flows[0].dscp", "0..=63"),
        ("flows[0].max_packets", "at least 1"),
        ("flows[0].start_s", "not before the end of the run"),
    ] {
        assert!(
            e.iter().any(|e| e.path == path && e.message.contains(frag)),
            "{path}: {e:?}"
        );
    }
}

#[test]
fn tcp_options() {
    let tcp = |opts: Value| {
        let mut v = base();
        v["flows"][0] = json!({"name": "t", "type": "tcp", "src": "a", "dst": "b", "tcp": opts});
        errors(&v)
    };
    assert_eq!(
        tcp(json!({"mss_bytes": 1000, "rwnd_bytes": 1000, "min_rto_ms": 200, "max_rto_ms": 200})),
        vec![]
    );
    // The bounds themselves are allowed; the minimum RTO alone is held to
    // the default maximum (60 s), the maximum alone to the default minimum
    // (1 s).
    for ok in [
        json!({"mss_bytes": 65495}),
        json!({"min_rto_ms": 60000}),
        json!({"max_rto_ms": 1000}),
    ] {
        assert_eq!(tcp(ok.clone()), vec![], "{ok}");
    }
    for (opts, path, frag) in [
        (json!({"mss_bytes": 0}), "mss_bytes", "1..=65495"),
        (json!({"mss_bytes": 65496}), "mss_bytes", "1..=65495"),
        (
            json!({"min_rto_ms": 60001}),
            "min_rto_ms",
            "at most max_rto_ms (60000, the default",
        ),
        (
            json!({"max_rto_ms": 999}),
            "max_rto_ms",
            "at least min_rto_ms (1000)",
        ),
        (
            json!({"initial_window": 0}),
            "initial_window",
            "at least 1 segment",
        ),
        (
            json!({"max_window_packets": 0}),
            "max_window_packets",
            "at least 1",
        ),
        (
            json!({"mss_bytes": 1000, "rwnd_bytes": 999}),
            "rwnd_bytes",
            "at least one MSS (1000 bytes)",
        ),
        (json!({"min_rto_ms": 0}), "min_rto_ms", "positive"),
        (
            json!({"delack_timeout_ms": 2e9}),
            "delack_timeout_ms",
            "at most",
        ),
        (
            json!({"min_rto_ms": 300, "max_rto_ms": 200}),
            "max_rto_ms",
            "at least min_rto_ms",
        ),
        (json!({"dupthresh": 0}), "dupthresh", "at least 1"),
    ] {
        let e = tcp(opts);
        let want = format!("flows[0].tcp.{path}");
        assert!(
            e.iter().any(|e| e.path == want && e.message.contains(frag)),
            "{want}: {e:?}"
        );
    }
}

#[test]
fn rtp_sessions() {
    let session = |patch: Value| {
        let mut v = base();
        let mut s = json!({"name": "s", "session_bw_bps": 64000, "media_payload_bytes": 160,
                           "members": [{"node": "a", "media": true}, {"node": "b"}]});
        for (k, x) in patch.as_object().expect("object") {
            s[k] = x.clone();
        }
        v["rtp_sessions"] = json!([s]);
        errors(&v)
    };
    assert_eq!(session(json!({})), vec![]);
    for (patch, path, frag) in rtp_cases() {
        let e = session(patch.clone());
        assert!(
            e.iter().any(|e| e.path == path && e.message.contains(frag)),
            "{patch}: {e:?}"
        );
    }
}

/// (patch of the session, the field reported, a fragment of the message).
fn rtp_cases() -> Vec<(Value, &'static str, &'static str)> {
    vec![
        (
            json!({"name": "a/b"}),
            "rtp_sessions[0].name",
            "must not contain '/'",
        ),
        (
            json!({"members": [{"node": "a"}]}),
            "rtp_sessions[0].members",
            "at least two members",
        ),
        (
            json!({"transport": "unicast", "members": [{"node": "a"}, {"node": "b"}, {"node": "a"}]}),
            "rtp_sessions[0].members",
            "exactly two members",
        ),
        (
            json!({"members": [{"node": "a"}, {"node": "a"}]}),
            "rtp_sessions[0].members[1].node",
            "already a member",
        ),
        (
            json!({"session_bw_bps": 0}),
            "rtp_sessions[0].session_bw_bps",
            "positive",
        ),
        (
            json!({"media_payload_bytes": 0}),
            "rtp_sessions[0].media_payload_bytes",
            "1..=65495",
        ),
        (
            json!({"rtcp_fraction": 1.5}),
            "rtp_sessions[0].rtcp_fraction",
            "(0, 1]",
        ),
        (
            json!({"start_s": 6}),
            "rtp_sessions[0].start_s",
            "before the end",
        ),
        (
            json!({"stop_s": 0}),
            "rtp_sessions[0].stop_s",
            "after start_s",
        ),
        (
            json!({"avpf": {"retention_ms": 1000}}),
            "rtp_sessions[0].avpf.retention_ms",
            "at least 2000",
        ),
        (
            json!({"avpf": {"l": -1}}),
            "rtp_sessions[0].avpf.l",
            "non-negative",
        ),
        (
            json!({"avpf": {"max_feedback_delay_ms": 0}}),
            "rtp_sessions[0].avpf.max_feedback_delay_ms",
            "positive",
        ),
        (
            json!({"newpred": {"frames_per_s": 10, "segments_per_frame": 0}}),
            "rtp_sessions[0].newpred.segments_per_frame",
            "at least 1",
        ),
        (
            json!({"newpred": {"frames_per_s": 100, "segments_per_frame": 10}}),
            "rtp_sessions[0].newpred",
            "no room",
        ),
    ]
}

#[test]
fn links_groups_routes_and_measurement() {
    check(
        "/links/0/rate_bps",
        json!(0.5),
        "links[0].rate_bps",
        "at least 1 bit/s",
    );
    // A direction's own rate too (a rate below 0.5 bit/s rounded to 0 and
    // divided by zero when the first packet was serialised).
    check(
        "/links/0",
        json!({"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 10, "ab": {"rate_bps": 0.3}}),
        "links[0].ab.rate_bps",
        "at least 1 bit/s",
    );
    check(
        "/links/0/delay_ms",
        json!(-1),
        "links[0].delay_ms",
        "non-negative",
    );
    check("/links/0/b", json!("a"), "links[0].b", "to itself");
    check("/duration_s", json!(2e8), "duration_s", "at most");
    let mut v = base();
    v["links"]
        .as_array_mut()
        .expect("list")
        .push(json!({"a": "a", "b": "b", "rate_bps": 1, "delay_ms": 0}));
    let e = errors(&v);
    assert!(
        e.iter()
            .any(|e| e.path == "links[1].name" && e.message.contains("duplicate link name")),
        "{e:?}"
    );
    let mut v = base();
    v["groups"] = json!([{"name": "g", "members": []}]);
    v["routing"] = json!({"routes": [{"node": "a", "dst": "b", "next_hop": "a"}]});
    v["measure"] = json!({"queue_sample_ms": 0, "windows_s": [[1, 1]]});
    let e = errors(&v);
    for (path, frag) in [
        ("groups[0].members", "at least one member"),
        ("routing.routes[0].next_hop", "not a neighbour"),
        ("measure.queue_sample_ms", "positive"),
        ("measure.windows_s[0]", "start < end"),
    ] {
        assert!(
            e.iter().any(|e| e.path == path && e.message.contains(frag)),
            "{path}: {e:?}"
        );
    }
}

#[test]
fn structural_errors_are_all_reported_with_the_semantic_ones_beside_them() {
    let mut v = base();
    v["links"][0]["delay_ms"] = json!("40ms");
    v["links"][0]["colour"] = json!("red");
    v["links"][0]["queue"] = json!({"type": "droptail", "limit_packets": -3});
    v["flows"][0]["interval_ms"] = json!("fast");
    v["flows"][0]["speling"] = json!(1);
    v["flows"][0]["dst"] = json!("nowhere");
    v["links"]
        .as_array_mut()
        .unwrap()
        .push(json!({"a": "a", "b": "zz", "rate_bps": 0, "delay_ms": 1}));
    let mut got: Vec<String> = errors(&v).into_iter().map(|e| e.path).collect();
    got.sort();
    assert_eq!(
        got,
        [
            "flows[0].dst",
            "flows[0].interval_ms",
            "flows[0].speling",
            "links[0].colour",
            "links[0].delay_ms",
            "links[0].queue.limit_packets",
            "links[1].b",
            "links[1].rate_bps",
        ]
    );
}

/// A required field that is absent is reported at its own path, and the
/// checks go on past it (a stand-in takes its place and is not
/// reported): every absent field and every other problem in one pass.
#[test]
fn absent_required_fields_are_all_reported_with_the_rest() {
    let mut v = base();
    v.as_object_mut().unwrap().remove("duration_s");
    v["links"][0].as_object_mut().unwrap().remove("b");
    v["flows"][0].as_object_mut().unwrap().remove("dst");
    v["nodes"][1].as_object_mut().unwrap().remove("name");
    v["flows"][0]["interval_ms"] = json!(-1);
    v["links"][0]["rate_mbps"] = json!(1);
    let got: Vec<(String, String)> = errors(&v)
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect();
    let given = "must be given (this field has no default)".to_string();
    let has = |path: &str, message: &str| got.contains(&(path.into(), message.into()));
    assert!(has("duration_s", &given), "{got:?}");
    assert!(has("links[0].b", &given), "{got:?}");
    assert!(has("nodes[1].name", &given), "{got:?}");
    // Not required by itself: the flow's check says what it needs.
    let dst = "give a destination: dst (a node) or group (a multicast group)";
    assert!(has("flows[0]", dst), "{got:?}");
    assert!(
        has(
            "links[0].rate_mbps",
            "unknown field; did you mean rate_bps? (expected one of \
             name, a, b, rate_bps, delay_ms, trace, outages, jitter, queue, loss, cost, ab, ba)"
        ),
        "{got:?}"
    );
    assert!(
        got.iter().any(|(p, _)| p == "flows[0].interval_ms"),
        "{got:?}"
    );
    assert_eq!(got.len(), 6, "{got:?}");
    assert!(
        got.iter().all(|(_, m)| !m.contains("the checks stop")),
        "{got:?}"
    );
}

#[test]
fn a_required_field_of_no_kind_that_parses_stops_the_checks_and_says_so() {
    let mut v = base();
    v["nodes"] = json!("a, b");
    let errs = errors(&v);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].path, "nodes");
    assert!(errs[0].message.contains("the checks stop here"), "{errs:?}");
}

#[test]
fn a_top_level_field_of_the_wrong_type_does_not_hide_the_others() {
    let mut v = base();
    v["duration_s"] = json!("10s");
    v["links"][0]["rate_bps"] = json!(-1);
    let mut got: Vec<String> = errors(&v).into_iter().map(|e| e.path).collect();
    got.sort();
    assert_eq!(got, ["duration_s", "links[0].rate_bps"]);
}

/// A field set aside gets a stand-in (1) so that the rest can be
/// checked; a check beside it that quotes it ("duration_s = 1", "start_s
/// = 1") would report the stand-in, not the user's value, so it is left
/// out. The same checks on fields that parsed still report.
#[test]
fn a_field_set_aside_is_not_quoted_by_the_checks_beside_it() {
    let mut v = base();
    v["duration_s"] = json!("inf");
    v["flows"][0]["start_s"] = json!(2); // after the stand-in's end
    let errs = errors(&v);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].path, "duration_s");
    assert_eq!(errs[0].message, "must be a finite number (got inf)");

    let mut v = base();
    v["flows"][0]["start_s"] = json!("soon");
    v["flows"][0]["stop_s"] = json!(0.5); // before the stand-in start
    let got: Vec<String> = errors(&v).into_iter().map(|e| e.path).collect();
    assert_eq!(got, ["flows[0].start_s"]);

    let mut v = base();
    v["flows"][0]["start_s"] = json!(9);
    v["flows"][0]["stop_s"] = json!(0.5);
    v["links"][0]["delay_ms"] = json!("nan");
    let errs = errors(&v);
    let said = |path: &str, frag: &str| {
        errs.iter()
            .any(|e| e.path == path && e.message.contains(frag))
    };
    assert!(
        said("links[0].delay_ms", "must be a finite number (got nan)"),
        "{errs:?}"
    );
    assert!(said("flows[0].start_s", "(duration_s = 5)"), "{errs:?}");
    assert!(
        said("flows[0].stop_s", "must be after start_s = 9"),
        "{errs:?}"
    );
}

/// What a set-aside field's stand-in causes is not reported, at its own
/// path (a flow's source "1" is no node; a link without its rate misses
/// one; RED's max_th of 1 is below min_th), but a check of another item
/// that quotes the same key still is.
#[test]
fn a_stand_in_is_not_reported_but_the_same_check_elsewhere_is() {
    let paths = |v: &Value| -> Vec<String> { errors(v).into_iter().map(|e| e.path).collect() };
    let mut v = base();
    v["flows"][0]["src"] = json!(5);
    v["links"][0]["rate_bps"] = json!("fast");
    v["links"][0]["queue"] =
        json!({"type": "red", "limit_packets": 50, "min_th": 5, "max_th": "x"});
    v["measure"] = json!({"windows_s": "x"});
    assert_eq!(
        paths(&v),
        [
            "flows[0].src",
            "links[0].queue.max_th",
            "links[0].rate_bps",
            "measure.windows_s"
        ]
    );
    let mut v = base();
    v["flows"][0]["start_s"] = json!("soon");
    let mut g = v["flows"][0].clone();
    (g["name"], g["start_s"], g["stop_s"]) = (json!("g"), json!(3), json!(0.5));
    v["flows"].as_array_mut().expect("flows").push(g);
    let errs = errors(&v);
    let said: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert_eq!(
        said[1],
        "flows[1].stop_s: must be after start_s = 3 (got 0.5)"
    );

    // A field set aside takes its default: a check beside it that quotes
    // the default (ws = 32) is left out; the same check on a given ws is
    // said.
    let rmtp = |extra: Value| {
        let mut v = base();
        let mut m =
            json!({"name": "m", "sender": "a", "subgroups": [{"dr": "b", "receivers": []}]});
        m.as_object_mut()
            .expect("a table")
            .extend(extra.as_object().expect("a table").clone());
        v["rmtp_sessions"] = json!([m]);
        errors(&v)
            .into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        rmtp(json!({"ws": "x", "initial_window": 500})),
        ["rmtp_sessions[0].ws: must be a whole number from 0 to 4294967295 (got \"x\")"]
    );
    assert_eq!(
        rmtp(json!({"ws": 4, "initial_window": 500})),
        ["rmtp_sessions[0].initial_window: must be at most ws = 4 (got 500)"]
    );
}

/// Class reservations are checked against the rate a link keeps at
/// worst: a schedule's lowest step, a trace's mean, the slower direction
/// for a link-wide queue (none against a trace that is itself invalid).
#[test]
fn reservations_are_checked_against_the_rate_a_link_keeps_at_worst() {
    let drr = |rate_bps: f64| {
        json!({"type": "drr", "classes": [
            {"name": "a", "dscp": [10], "rate_bps": rate_bps / 2.0, "queue": {"type": "droptail", "limit_packets": 10}},
            {"name": "b", "rate_bps": rate_bps / 2.0, "queue": {"type": "droptail", "limit_packets": 10}}]})
    };
    let reserve = |link: Value, rate_bps: f64| -> Vec<String> {
        let mut v = base();
        v["links"][0] = link;
        v["links"][0]["queue"] = drr(rate_bps);
        errors(&v).into_iter().map(|e| e.to_string()).collect()
    };
    let link = |fields: Value| {
        let mut l = json!({"a": "a", "b": "b", "delay_ms": 10});
        l.as_object_mut()
            .expect("a table")
            .extend(fields.as_object().expect("a table").clone());
        l
    };
    let over = "links[0].queue.classes: the classes reserve";
    // Steps of 1 and 0.5 Mbit/s.
    let steps = link(json!({"rate_bps": [[0, 1e6], [2, 5e5]]}));
    assert_eq!(reserve(steps.clone(), 5e5), Vec::<String>::new());
    let e = reserve(steps, 6e5);
    assert!(e.len() == 1 && e[0].starts_with(over), "{e:?}");
    assert!(e[0].ends_with("more than the link's 500000"), "{e:?}");
    // 1504 bytes (Mahimahi's opportunity) every 10 ms: 1.2032 Mbit/s.
    let trace = link(json!({"trace": {"opportunities_ms": [10]}}));
    assert_eq!(reserve(trace.clone(), 1.2032e6), Vec::<String>::new());
    let e = reserve(trace, 1.21e6);
    assert!(
        e.len() == 1 && e[0].ends_with("more than the link's 1203200"),
        "{e:?}"
    );
    // A direction's own, slower rate bounds the link-wide queue.
    let slow_ab = link(json!({"rate_bps": 1e6, "ab": {"rate_bps": 4e5}}));
    let e = reserve(slow_ab, 5e5);
    assert!(
        e.len() == 1 && e[0].ends_with("more than the link's 400000"),
        "{e:?}"
    );
    // An invalid trace is reported alone.
    let bad = link(json!({"trace": {"opportunities_ms": []}}));
    let e = reserve(bad, 1e12);
    assert!(
        e.len() == 1 && e[0].starts_with("links[0].trace.opportunities_ms"),
        "{e:?}"
    );
}

/// The run's and the link's fields at their bounds: the longest run, the
/// slowest rate, a capacity interval of 0 (off), a rate given per
/// direction only for both directions.
#[test]
fn run_and_link_fields_at_their_bounds() {
    let errs = |edit: &dyn Fn(&mut Value)| -> Vec<String> {
        let mut v = base();
        edit(&mut v);
        errors(&v).into_iter().map(|e| e.to_string()).collect()
    };
    let none = Vec::<String>::new();
    assert_eq!(errs(&|v| v["duration_s"] = json!(1e8)), none);
    assert_eq!(errs(&|v| v["links"][0]["rate_bps"] = json!(1.0)), none);
    assert_eq!(
        errs(&|v| v["measure"] = json!({"capacity_interval_ms": 0})),
        none
    );
    assert_eq!(
        errs(&|v| v["measure"] = json!({"capacity_interval_ms": -5})),
        ["measure.capacity_interval_ms: must be a positive number (got -5)"]
    );
    let per_direction = |ab: Value, ba: Value| {
        errs(&|v| {
            v["links"][0] = json!({"a": "a", "b": "b", "delay_ms": 1, "ab": ab, "ba": ba});
        })
    };
    assert_eq!(
        per_direction(
            json!({"rate_bps": 1e6}),
            json!({"trace": {"opportunities_ms": [1]}})
        ),
        none
    );
    // A warm-up as long as the run is refused; with a run of no length
    // only the run's length is said.
    assert_eq!(
        errs(&|v| v["measure"] = json!({"warmup_s": 5})),
        ["measure.warmup_s: 5 s leaves nothing to measure (duration_s = 5)"]
    );
    for d in [0, -1] {
        let e = errs(&|v| {
            v["duration_s"] = json!(d);
            v["measure"] = json!({"warmup_s": 0});
        });
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("duration_s: must be a positive number"),
            "{e:?}"
        );
    }
    let missing = per_direction(json!({"rate_bps": 1e6}), json!({"delay_ms": 5}));
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(
        missing[0].starts_with("links[0].rate_bps: missing"),
        "{missing:?}"
    );
}

/// The document's own derived facts: the flow count `flow_names` gives
/// (derived flows and sessions' included), the windows in simulated
/// time, and what a run keeps of the document once the world is built.
#[test]
fn a_documents_flow_count_windows_and_run_settings() {
    let mut v = base();
    v["flows"]
        .as_array_mut()
        .expect("flows")
        .push(json!({"name": "t", "type": "tcp", "src": "a", "dst": "b"}));
    v["rtp_sessions"] = json!([{"name": "s", "session_bw_bps": 1e6, "media_payload_bytes": 1000,
        "members": [{"node": "a", "media": true}, {"node": "b"}]}]);
    v["measure"] = json!({"windows_s": [[1, 2.5]], "warmup_s": 0.5});
    let mut s = parse_and_validate(&v.to_string()).expect("valid");
    let names = s.flow_names();
    assert!(names.len() > 4, "{names:?}");
    assert!(names.contains(&"t/ack".to_string()), "{names:?}");
    assert_eq!(s.flow_count(), names.len());
    let ns = |w: &[(crate::sim::SimTime, crate::sim::SimTime)]| -> Vec<(u64, u64)> {
        w.iter()
            .map(|(a, b)| (a.as_nanos(), b.as_nanos()))
            .collect()
    };
    assert_eq!(ns(&s.measure.windows()), [(1_000_000_000, 2_500_000_000)]);
    s.keep_only_run_settings();
    assert!(s.nodes.is_empty() && s.links.is_empty() && s.flows.is_empty());
    assert!(s.rtp_sessions.is_empty() && s.flow_count() == 0);
    assert_eq!((s.duration_s, s.measure.warmup_s), (5.0, 0.5));
}

/// The exported schema gives each model family as one object per model,
/// with its `"type"` constant, required and first.
#[test]
fn the_schema_has_one_variant_per_model_with_its_type() {
    let schema: Value = serde_json::from_str(&super::json_schema()).expect("json");
    let queue = &schema["$defs"]["QueueSpec"];
    assert_eq!(
        queue["description"],
        "A queue discipline, chosen by \"type\"."
    );
    let tags: Vec<&str> = (queue["oneOf"].as_array().expect("oneOf").iter())
        .map(|v| {
            assert_eq!(v["required"][0], "type", "{v}");
            assert_eq!(v["properties"]["type"]["type"], "string");
            v["properties"]["type"]["const"].as_str().expect("a tag")
        })
        .collect();
    assert_eq!(tags, crate::queue::QueueSpec::TAGS);
    assert!(
        tags.contains(&"droptail") && tags.contains(&"red"),
        "{tags:?}"
    );
}

/// A non-finite number inside a part parsed as its own document (a media
/// source, a queue) is said as such too, at its full path.
#[test]
fn a_non_finite_number_in_a_nested_part_is_said_as_one() {
    let mut v = base();
    v["rtp_sessions"] = json!([{"name": "s", "session_bw_bps": 1e6, "media_payload_bytes": 1000,
        "members": [{"node": "a", "media": true, "source": {"type": "synthetic", "fps": "nan"}},
                    {"node": "b"}]}]);
    v["links"][0]["queue"] = json!({"type": "red", "min_th": 5, "max_th": 15, "w_q": "-inf"});
    let errs = errors(&v);
    for (path, word) in [
        ("rtp_sessions[0].members[0].source.fps", "nan"),
        ("links[0].queue.w_q", "-inf"),
    ] {
        let want = format!("must be a finite number (got {word})");
        assert!(
            errs.iter().any(|e| e.path == path && e.message == want),
            "{path}: {errs:?}"
        );
    }
}

#[test]
fn changing_links_name_the_field_and_the_problem() {
    let link = |extra: Value| {
        let mut l = json!({"a": "a", "b": "b", "delay_ms": 10});
        for (k, v) in extra.as_object().expect("fields") {
            l[k] = v.clone();
        }
        l
    };
    let cases: Vec<(Value, &str, &str)> = vec![
        (json!({"rate_bps": [[0, 2e6], [5, 1e6]]}), "", ""),
        (
            json!({"rate_bps": [[1, 2e6]]}),
            "links[0].rate_bps[0][0]",
            "starts at 0 s",
        ),
        (
            json!({"rate_bps": [[0, 2e6], [5, 1e6], [3, 1e6]]}),
            "links[0].rate_bps[2][0]",
            "increasing",
        ),
        (
            json!({"rate_bps": [[0, 2e6], [-1, 1e6]]}),
            "links[0].rate_bps[1][0]",
            "from 0",
        ),
        (
            json!({"rate_bps": [[0, 2e6], [5, -1]]}),
            "links[0].rate_bps[1][1]",
            "positive",
        ),
        (json!({"rate_bps": []}), "links[0].rate_bps", "at least one"),
        (
            json!({"rate_bps": {"steps": [[0, 1e6], [5, 2e6]], "repeat_s": 5}}),
            "links[0].rate_bps.repeat_s",
            "longer than",
        ),
        (
            json!({"rate_bps": "fast"}),
            "links[0].rate_bps",
            "a list of [time_s, value] steps",
        ),
        (
            json!({"rate_bps": 1e6, "delay_ms": [[0, 10], [2, -3]]}),
            "links[0].delay_ms[1][1]",
            "non-negative",
        ),
        (json!({}), "links[0].rate_bps", "give rate_bps or a trace"),
        (
            json!({"rate_bps": 1e6, "trace": {"opportunities_ms": [1, 2]}}),
            "links[0].trace",
            "not both",
        ),
        (
            json!({"trace": {"opportunities_ms": []}}),
            "links[0].trace.opportunities_ms",
            "empty trace",
        ),
        (
            json!({"trace": {"opportunities_ms": [3, 5, 4]}}),
            "links[0].trace.opportunities_ms[2]",
            "go back",
        ),
        (
            json!({"trace": {"opportunities_ms": [0, 0]}}),
            "links[0].trace.opportunities_ms",
            "positive time",
        ),
        (
            json!({"trace": {"file": "x.trace"}}),
            "links[0].trace.opportunities_ms",
            "read by the mediasim package",
        ),
        (
            json!({"trace": {"opportunities_ms": [1], "bytes_per_opportunity": 0}}),
            "links[0].trace.bytes_per_opportunity",
            "at least 1",
        ),
        (
            json!({"rate_bps": 1e6, "outages": {}}),
            "links[0].outages",
            "either down_s",
        ),
        (
            json!({"rate_bps": 1e6, "outages": {"down_s": [[2, 1]]}}),
            "links[0].outages.down_s[0]",
            "start < end",
        ),
        (
            json!({"rate_bps": 1e6, "outages": {"down_s": [[1, 3], [2, 4]]}}),
            "links[0].outages.down_s[1]",
            "not overlap",
        ),
        (
            json!({"rate_bps": 1e6, "outages": {"mean_up_s": 1}}),
            "links[0].outages.mean_down_s",
            "needs both",
        ),
        (
            json!({"rate_bps": 1e6, "outages": {"mean_up_s": 1, "mean_down_s": -1}}),
            "links[0].outages.mean_down_s",
            "positive",
        ),
        (
            json!({"rate_bps": 1e6, "outages": {"down_s": [[1, 2]], "queued": "lose"}}),
            "links[0].outages.queued",
            "must be one of",
        ),
        (
            json!({"rate_bps": 1e6, "jitter": {"std_ms": -1}}),
            "links[0].jitter.std_ms",
            "non-negative",
        ),
        (
            json!({"rate_bps": 1e6, "jitter": {"std_ms": 10, "max_ms": 0.5}}),
            "links[0].jitter.max_ms",
            "a tenth",
        ),
        (
            json!({"rate_bps": 1e6, "ab": {"rate_bps": 2e6, "trace": {"opportunities_ms": [1]}}}),
            "links[0].ab.trace",
            "not both",
        ),
    ];
    for (fields, path, fragment) in cases {
        let mut v = base();
        v["links"][0] = link(fields.clone());
        let errs = errors(&v);
        if path.is_empty() {
            assert!(errs.is_empty(), "{fields}: {errs:?}");
        } else {
            assert!(
                errs.iter()
                    .any(|e| e.path == path && e.message.contains(fragment)),
                "{fields}: expected {path}: ...{fragment}..., got {errs:?}"
            );
        }
    }
    // Each direction its own trace: no link-wide rate needed.
    let mut v = base();
    v["links"][0] =
        link(json!({"ab": {"trace": {"opportunities_ms": [1]}}, "ba": {"rate_bps": 1e6}}));
    assert!(errors(&v).is_empty());
    let mut v = base();
    v["measure"] = json!({"capacity_interval_ms": -5});
    assert!(errors(&v)
        .iter()
        .any(|e| e.path == "measure.capacity_interval_ms"));
}

/// `base()` with its flow replaced by a media-scaling flow with `fields`.
fn media_scaling_errors(fields: Value) -> Vec<FieldError> {
    let mut v = base();
    let mut f = json!({"name": "f", "type": "media_scaling", "src": "a", "dst": "b"});
    for (k, x) in fields.as_object().expect("fields") {
        f[k] = x.clone();
    }
    v["flows"][0] = f;
    errors(&v)
}

#[test]
fn media_scaling_fields() {
    for ok in [
        json!({"app": "mm"}),
        json!({"app": "mm", "rates_bps": [1, 2, 3, 4, 5], "packet_bytes": 28}),
        json!({"app": "mpeg", "gop": "IBBP", "frame_bytes": {"I": 3, "P": 2, "B": 1}}),
        json!({"app": "mpeg", "frames": [["I", 10], ["P", 5], ["B", 1]], "frame_rate": 25}),
        json!({"app": "mpeg", "frame_dscp": {"I": 10, "B": 63}, "max_packet_bytes": 29}),
    ] {
        assert_eq!(media_scaling_errors(ok.clone()), vec![], "{ok}");
    }
    for (fields, path, fragment) in [
        (
            json!({"app": "mm", "rates_bps": [1, 2, 3, 4]}),
            "flows[0].rates_bps",
            "one rate per scale 0-4 (got 4)",
        ),
        (
            json!({"app": "mm", "rates_bps": [1, 0, 3, 4, 5]}),
            "flows[0].rates_bps[1]",
            "positive",
        ),
        (
            json!({"app": "mm", "packet_bytes": 27}),
            "flows[0].packet_bytes",
            "28..=65535",
        ),
        (
            json!({"app": "mm", "gop": "IBB"}),
            "flows[0].gop",
            "not used by app = \"mm\"",
        ),
        (
            json!({"app": "mm", "frame_dscp": {}}),
            "flows[0].frame_dscp",
            "not used by app = \"mm\"",
        ),
        (
            json!({"app": "mpeg", "gop": "BIP"}),
            "flows[0].gop",
            "starting with I",
        ),
        (
            json!({"app": "mpeg", "gop": "IXB"}),
            "flows[0].gop",
            "starting with I",
        ),
        (
            json!({"app": "mpeg", "frames": [["I", 1]], "gop": "I"}),
            "flows[0]",
            "not both",
        ),
        (
            json!({"app": "mpeg", "frames": [["I", 1]], "frame_bytes": {"I": 1, "P": 1, "B": 1}}),
            "flows[0]",
            "not both",
        ),
        (
            json!({"app": "mpeg", "frames": []}),
            "flows[0].frames",
            "at least one frame",
        ),
        (
            json!({"app": "mpeg", "frames": [["I", 1], ["X", 2]]}),
            "flows[0].frames[1]",
            "frame type",
        ),
        (
            json!({"app": "mpeg", "frame_rate": 0}),
            "flows[0].frame_rate",
            "positive",
        ),
        (
            json!({"app": "mpeg", "frame_dscp": {"B": 64}}),
            "flows[0].frame_dscp.B",
            "0..=63",
        ),
        (
            json!({"app": "mpeg", "max_packet_bytes": 28}),
            "flows[0].max_packet_bytes",
            "29..=65535",
        ),
        (
            json!({"app": "mpeg", "rates_bps": [1, 2, 3, 4, 5]}),
            "flows[0].rates_bps",
            "not used by app = \"mpeg\"",
        ),
        (
            json!({"app": "mm", "feedback_bytes": 27}),
            "flows[0].feedback_bytes",
            "28..=65535",
        ),
    ] {
        let e = media_scaling_errors(fields.clone());
        assert!(
            e.iter()
                .any(|e| e.path == path && e.message.contains(fragment)),
            "{fields}: expected {path}: ...{fragment}..., got {e:?}"
        );
    }
}

#[test]
fn svc_packet_size_leaves_room_for_payload() {
    let errs = |bytes: u32| {
        let mut v = base();
        v["flows"][0] = json!({"name": "f", "type": "svc", "src": "a", "dst": "b",
                               "cc": {"type": "fixed", "rate_bps": 1e6}, "packet_bytes": bytes});
        errors(&v)
    };
    assert_eq!(
        errs(41),
        vec![],
        "40 bytes of IP, UDP and RTP headers and 1 of payload"
    );
    let e = errs(40);
    assert!(
        e.iter()
            .any(|e| e.path == "flows[0].packet_bytes" && e.message.contains("41..=65535")),
        "{e:?}"
    );
}

/// Flows whose receiver answers (feedback, acks) need a route back: with
/// the way from b to a looping (r sends it to b, b to r), a CBR flow from
/// a to b is fine and the others are refused at `src`.
#[test]
fn answering_flows_need_a_route_back() {
    let run = |flow: Value| {
        let mut v = base();
        v["nodes"] = json!([{"name": "a"}, {"name": "r"}, {"name": "b"}]);
        v["links"] = json!([{"a": "a", "b": "r", "rate_bps": 1e6, "delay_ms": 1},
                            {"a": "r", "b": "b", "rate_bps": 1e6, "delay_ms": 1}]);
        v["routing"] = json!({"routes": [{"node": "r", "dst": "a", "next_hop": "b"},
                                         {"node": "b", "dst": "a", "next_hop": "r"}]});
        v["flows"] = json!([flow]);
        // Routes are checked as the world is built.
        super::validate::check_all(&v.to_string())
            .err()
            .unwrap_or_default()
    };
    let common = json!({"name": "f", "src": "a", "dst": "b"});
    let with = |extra: Value| {
        let mut f = common.clone();
        for (k, x) in extra.as_object().unwrap() {
            f[k] = x.clone();
        }
        f
    };
    assert_eq!(
        run(with(
            json!({"type": "cbr", "payload_bytes": 100, "interval_ms": 20})
        )),
        vec![]
    );
    for extra in [
        json!({"type": "media_scaling", "app": "mm"}),
        json!({"type": "svc", "cc": {"type": "fixed", "rate_bps": 1e5}}),
        json!({"type": "tcp"}),
        json!({"type": "tfrc"}),
        json!({"type": "paced", "cc": {"type": "fixed", "rate_bps": 1e5}}),
    ] {
        let e = run(with(extra.clone()));
        assert!(
            e.iter()
                .any(|e| e.path == "flows[0].src" && e.message.contains("routes loop")),
            "{extra}: {e:?}"
        );
    }
}

/// The limits' defaults are the ones docs/scenario.md gives.
#[test]
fn limits_default_to_the_documented_values() {
    let doc = include_str!("../../../../docs/scenario.md");
    let value = |field: &str| -> u64 {
        let row = (doc.lines())
            .find(|l| l.starts_with(&format!("| `{field}` |")))
            .unwrap_or_else(|| panic!("no row for {field} in docs/scenario.md"));
        let cell = row.split('|').nth(2).expect("a default").trim();
        match cell.strip_suffix(" GiB") {
            Some(g) => g.parse::<u64>().expect("GiB") << 30,
            None => cell.replace(',', "").parse().expect("a number"),
        }
    };
    let d = super::limits::LimitsSpec::default();
    let got = [
        ("max_nodes", d.max_nodes),
        ("max_links", d.max_links),
        ("max_flows", d.max_flows),
        ("max_rtp_members", d.max_rtp_members),
        ("max_trace_rows", d.max_trace_rows),
        ("max_series_rows", d.max_series_rows),
        ("max_queue_sample_rows", d.max_queue_sample_rows),
        ("max_pcap_bytes", d.max_pcap_bytes),
    ];
    for (field, v) in got {
        assert_eq!(v, value(field), "{field}");
    }
    // A scenario's own limits table keeps the defaults of the fields it leaves out.
    let s: super::document::Scenario = serde_json::from_value({
        let mut v = base();
        v["limits"] = json!({"max_nodes": 7});
        v
    })
    .expect("parses");
    assert_eq!((s.limits.max_nodes, s.limits.max_pcap_bytes), (7, 10 << 30));
}

/// At a size limit is allowed, one over is an error at the field that
/// grew, naming the limit to raise; a limit of 0 is refused.
#[test]
fn sizes_at_and_over_their_limits() {
    let mut v = base();
    v["limits"] = json!({"max_nodes": 2, "max_links": 1, "max_flows": 1});
    assert!(errors(&v).is_empty(), "{:?}", errors(&v));
    v["limits"] = json!({"max_nodes": 1, "max_links": 0, "max_flows": 0});
    let errs = errors(&v);
    for (path, fragment) in [
        ("nodes", "2 nodes, more than limits.max_nodes = 1"),
        ("links", "1 links, more than limits.max_links = 0"),
        ("limits.max_links", "at least 1"),
        ("limits.max_flows", "at least 1"),
    ] {
        assert!(
            errs.iter()
                .any(|e| e.path == path && e.message.contains(fragment)),
            "{path}: {fragment}: {errs:?}"
        );
    }
}

/// The fields every flow has, each problem said at its field: the
/// destination (a node or a group, exactly one), the name (no '/'), the
/// start, its jitter and the stop against the run's end, a field of
/// another kind, a UDP source without its payload, a unicast kind sent to
/// a group.
#[test]
fn a_flows_common_fields_are_checked_at_their_paths() {
    let said = |flow: Value| {
        let mut v = base();
        v["groups"] = json!([{"name": "g", "members": ["a", "b"]}]);
        let mut f = v["flows"][0].clone();
        for (k, x) in flow.as_object().expect("fields") {
            match x {
                Value::Null => f.as_object_mut().expect("a flow").remove(k),
                _ => f
                    .as_object_mut()
                    .expect("a flow")
                    .insert(k.clone(), x.clone()),
            };
        }
        v["flows"] = json!([f]);
        errors(&v)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        said(json!({"group": "g"})),
        ["flows[0]: give either dst or group, not both"]
    );
    assert_eq!(
        said(json!({"dst": null})),
        ["flows[0]: give a destination: dst (a node) or group (a multicast group)"]
    );
    assert_eq!(
        said(json!({"dst": null, "group": "g"})),
        Vec::<String>::new()
    );
    assert_eq!(
        said(json!({"name": "f/x"})),
        ["flows[0].name: must not contain '/' (reserved for derived flows such as \"<tcp flow>/ack\")"]
    );
    assert_eq!(
        said(json!({"start_s": 1, "stop_s": 1})),
        ["flows[0].stop_s: must be after start_s = 1 (got 1)"]
    );
    assert_eq!(
        said(json!({"start_s": 1, "stop_s": 1.5})),
        Vec::<String>::new()
    );
    assert_eq!(
        said(json!({"start_s": 1, "start_jitter_s": 4})),
        ["flows[0].start_jitter_s: the latest start (5 s) is not before the end of the run"]
    );
    assert_eq!(
        said(json!({"start_s": 1, "start_jitter_s": 3.5})),
        Vec::<String>::new()
    );
    assert_eq!(
        said(json!({"start_s": 5})),
        ["flows[0].start_s: starts at 5 s, not before the end of the run (duration_s = 5)"]
    );
    assert_eq!(said(json!({"dscp": 63})), Vec::<String>::new());
    assert_eq!(
        said(json!({"bytes": 1000})),
        ["flows[0].bytes: not used by cbr flows (a field of tcp flows)"]
    );
    assert_eq!(
        said(json!({"payload_bytes": null})),
        ["flows[0].payload_bytes: required for cbr and poisson flows"]
    );
    let tcp = json!({"type": "tcp", "payload_bytes": null, "interval_ms": null,
                     "dst": null, "group": "g"});
    assert_eq!(said(tcp), ["flows[0].group: tcp is unicast: give dst"]);
}

/// What only the built network shows, at the flow's field: a group member
/// the sender cannot reach, no route to the destination, a port another
/// flow holds (UDP sinks of two flows share a port; a TCP sink does not
/// share its port).
#[test]
fn a_flows_place_in_the_network_is_checked_as_it_is_built() {
    let built = |v: &Value| -> Vec<String> {
        super::validate::check_all(&v.to_string())
            .err()
            .unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let mut v = base();
    v["nodes"] = json!([{"name": "a"}, {"name": "b"}, {"name": "c"}]);
    v["groups"] = json!([{"name": "g", "members": ["b", "c"]}]);
    v["flows"][0]["dst"] = json!(null);
    v["flows"][0]["group"] = json!("g");
    assert_eq!(
        built(&v),
        ["flows[0].group: member \"c\" of group \"g\" is unreachable from \"a\""]
    );
    v["flows"][0]["group"] = json!(null);
    v["flows"][0]["dst"] = json!("c");
    assert_eq!(built(&v), ["flows[0].dst: no route from \"a\" to \"c\""]);
    let mut v = base();
    let mut second = base()["flows"][0].clone();
    second["name"] = json!("h");
    second["dst_port"] = json!(20000);
    v["flows"] = json!([base()["flows"][0].clone(), second]);
    assert_eq!(
        built(&v),
        Vec::<String>::new(),
        "two UDP sinks share a port"
    );
    let tcp = json!({"name": "h", "type": "tcp", "src": "a", "dst": "b", "dst_port": 20000});
    v["flows"] = json!([base()["flows"][0].clone(), tcp]);
    assert_eq!(
        built(&v),
        ["flows[1].dst_port: port 20000 on node \"b\" is already used by flow \"f\""]
    );
}

/// A record (a struct) is read from a table only: a list in its place,
/// which serde's derived readers would take field by field in order, is a
/// wrong type at the record's path, at every depth (a top-level field, a
/// list item, an optional field, a record inside a model family or a
/// session's member).
#[test]
fn a_list_in_place_of_a_table_of_fields_is_refused_wherever_it_is() {
    let said = |pointer: &str, value: Value| -> Vec<String> {
        let mut v = base();
        match v.pointer_mut(pointer) {
            Some(slot) => *slot = value,
            None => {
                let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
                v.pointer_mut(parent).expect("the parent")[key] = value;
            }
        }
        errors(&v).iter().map(ToString::to_string).collect()
    };
    let table = "must be a table of fields (got a list)";
    assert_eq!(
        said("/measure", json!([true])),
        [format!("measure: {table}")]
    );
    assert_eq!(
        said("/links/0/ab", json!([2e6, 5])),
        [format!("links[0].ab: {table}")]
    );
    assert_eq!(
        said("/links/0/jitter", json!([5])),
        [format!("links[0].jitter: {table}")]
    );
    assert_eq!(
        said("/nodes/0", json!(["a", null])),
        [format!(
            "nodes[0]: {table} (the checks stop here: fix this first to see what else is wrong)"
        )]
    );
    // Inside a model family (read from its own JSON value), a list of
    // every field in order, which serde alone would take.
    // The queue it is in is set aside whole and the checks go on.
    let class = json!(["ef", [46], 1, null, {"type": "droptail"}]);
    assert_eq!(
        said("/links/0/queue", json!({"type": "drr", "classes": [class]})),
        [format!("links[0].queue.classes[0]: {table}")]
    );
    let mut v = base();
    v["rtp_sessions"] = json!([{"name": "s", "transport": "unicast", "session_bw_bps": 1e6,
        "media_payload_bytes": 1000,
        "members": [{"node": "a", "media": true, "pacer": [2.5, 5]},
                    {"node": "b", "playout": [true]}]}]);
    let e: Vec<String> = errors(&v).iter().map(ToString::to_string).collect();
    assert_eq!(
        e,
        [
            format!("rtp_sessions[0].members[0].pacer: {table}"),
            format!("rtp_sessions[0].members[1].playout: {table}"),
        ]
    );
    // The same records as tables, and lists where lists belong (steps,
    // windows, members), are read as before.
    let mut v = base();
    v["measure"] = json!({"windows_s": [[1, 2]]});
    v["links"][0]["ab"] = json!({"rate_bps": [[0, 2e6], [1, 1e6]]});
    v["rtp_sessions"] = json!([{"name": "s", "transport": "unicast", "session_bw_bps": 1e6,
        "media_payload_bytes": 1000,
        "members": [{"node": "a", "media": true, "pacer": {"factor": 2.5, "burst_ms": 5},
                     "source": {"type": "synthetic", "fps": 30}},
                    {"node": "b", "playout": {"delay_ms": 60}}]}]);
    assert_eq!(errors(&v), Vec::<FieldError>::new());
}

/// A valid scenario reads the same through the wrap as through serde's
/// own reader: the wrap only refuses.
#[test]
fn the_wrap_reads_a_valid_scenario_as_serde_does() {
    let mut v = base();
    v["measure"] = json!({"windows_s": [[1, 2]], "series": true});
    v["links"][0]["ab"] = json!({"rate_bps": {"steps": [[0, 2e6], [1, 1e6]], "repeat_s": 2}});
    v["links"][0]["queue"] = json!({"type": "red", "min_th": 5, "max_th": 15, "limit_packets": 30});
    v["links"][0]["loss"] =
        json!({"type": "gilbert_elliott", "p_good_to_bad": 0.1, "p_bad_to_good": 0.5});
    v["rtp_sessions"] = json!([{"name": "s", "transport": "unicast", "session_bw_bps": 1e6,
        "media_payload_bytes": 1000,
        "members": [{"node": "a", "media": true, "source": {"type": "synthetic", "fps": 30},
                     "pacer": {"factor": 2.5, "burst_ms": 5},
                     "feedback": {"format": "twcc", "interval_ms": 50}},
                    {"node": "b", "playout": {"adaptive": true, "min_ms": 20, "max_ms": 400}}]}]);
    let text = v.to_string();
    let plain: super::Scenario = serde_json::from_str(&text).expect("serde reads it");
    let wrapped = super::parse_json(&text).expect("the wrap reads it");
    assert_eq!(format!("{wrapped:?}"), format!("{plain:?}"));
}

/// `base()` with each (pointer, value) set: every error, as said.
fn said_with(changes: &[(&str, Value)]) -> Vec<String> {
    let mut v = base();
    for (pointer, value) in changes {
        let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
        let parent = v.pointer_mut(parent).expect("the parent");
        match parent.as_array_mut() {
            Some(items) => items.push(value.clone()),
            None => parent[key] = value.clone(),
        }
    }
    errors(&v).iter().map(ToString::to_string).collect()
}

/// A model whose type is unknown, absent or not a string is set aside
/// whole: its own error is said, nothing below it, and the checks go on
/// to the rest of the document (a duration, a flow after it).
#[test]
fn a_model_whose_type_cannot_be_read_does_not_stop_the_checks() {
    let queues = "droptail, drophead, red, wred, drr, priority, codel, fq_codel, pie, dualpi2";
    // A problem of each kind after it: a value and an unknown field.
    let rest = [
        "duration_s: must be a positive number (got -5)".to_string(),
        "flows[1].interval_ms: must be a positive number (got 0)".into(),
        "flows[1].colour: unknown field (expected one of name, src, dst, group, start_s, \
         start_jitter_s, stop_s, src_port, dst_port, dscp, payload_bytes, rate_bps, interval_ms, \
         max_packets)"
            .into(),
    ];
    let second = json!({"name": "g", "type": "cbr", "src": "a", "dst": "b",
                        "payload_bytes": 100, "interval_ms": 0, "colour": 1});
    for (queue, own) in [
        (
            json!({"type": "droptale", "limit_packets": -1}),
            format!("must be one of {queues} (got droptale; did you mean droptail?)"),
        ),
        (
            json!({"limit_packets": -1}),
            format!("must be given (one of {queues})"),
        ),
        (
            json!({"type": 5, "limit_packets": -1}),
            "must be a string (got 5)".to_string(),
        ),
        (
            json!({"type": ["red"], "min_th": "x"}),
            "must be a string (got a list)".to_string(),
        ),
    ] {
        let got = said_with(&[
            ("/duration_s", json!(-5)),
            ("/links/0/queue", queue),
            ("/flows/1", second.clone()),
        ]);
        let mut want = vec![format!("links[0].queue.type: {own}")];
        want.extend(rest.iter().cloned());
        let (mut got_sorted, mut want_sorted) = (got.clone(), want.clone());
        got_sorted.sort();
        want_sorted.sort();
        assert_eq!(got_sorted, want_sorted, "{got:?}");
    }
    // A list item (a flow) stays in place, with its type set aside: its
    // own fields' problems are not said, the next flow's are.
    let got = said_with(&[
        ("/flows/0/type", json!("cbrr")),
        ("/flows/0/payload_bytes", json!(-1)),
        ("/flows/1", second.clone()),
    ]);
    let flows = "cbr, poisson, tcp, media_scaling, tfrc, svc, paced";
    assert_eq!(
        got,
        [
            format!("flows[0].type: must be one of {flows} (got cbrr; did you mean cbr?)"),
            rest[2].clone(),
            rest[1].clone(),
        ]
    );
    // Its fields fit no type: it still stays, and the checks go on.
    let got = said_with(&[
        ("/flows/0/type", json!("quic")),
        ("/flows/0/streams", json!(4)),
        ("/flows/1", second),
    ]);
    assert_eq!(
        got,
        [
            format!("flows[0].type: must be one of {flows} (got quic)"),
            rest[2].clone(),
            rest[1].clone(),
        ]
    );
}

/// A model inside another (a member's media source) is set aside alone:
/// its member's other problems are still said.
#[test]
fn a_model_inside_another_is_set_aside_alone() {
    let mut v = base();
    v["rtp_sessions"] = json!([{"name": "s", "transport": "unicast", "session_bw_bps": 1e6,
        "media_payload_bytes": 1000,
        "members": [{"node": "a", "media": true,
                     "source": {"type": "synthetik", "fps": -30},
                     "pacer": {"factor": 0, "burst_ms": 5}},
                    {"node": "b"}]}]);
    let got: Vec<String> = errors(&v).iter().map(ToString::to_string).collect();
    let at = "rtp_sessions[0].members[0]";
    // In the document's order (`json!` writes keys sorted).
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got[0].starts_with(&format!("{at}.pacer.factor: ")),
        "{got:?}"
    );
    assert!(
        got[1].starts_with(&format!("{at}.source.type: must be one of "))
            && got[1].ends_with("(got synthetik; did you mean synthetic?)"),
        "{got:?}"
    );
}

/// A model whose type is misspelt stands in as the type most like it, so
/// that a table of that type's fields, more than the recovery's tries,
/// is set aside alone (trying the types in their listed order, each
/// dropping the fields it does not take, would spend the tries before
/// SCReAM's and set the whole flow aside): the flow's own problems are
/// said.
#[test]
fn a_misspelt_type_stands_in_as_the_type_most_like_it() {
    let mut v = base();
    let mut cc = json!({"type": "screem"});
    let fields = crate::proto::cc::CcSpec::fields_by_tag();
    let scream = fields
        .iter()
        .find(|(tag, _)| *tag == "scream")
        .expect("SCReAM");
    let numbers = scream
        .1
        .iter()
        .filter(|f| !["competing_flows", "l4s", "version"].contains(f));
    for f in numbers {
        cc[*f] = json!(-1); // each out of range: not said, being the cc's
    }
    assert!(cc.as_object().expect("a table").len() > 33, "{cc}");
    v["flows"][0] = json!({"name": "f", "type": "paced", "src": "a", "dst": "b",
                           "packet_bytes": 0, "cc": cc});
    let got: Vec<String> = errors(&v).iter().map(ToString::to_string).collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got[0].starts_with("flows[0].cc.type: must be one of ")
            && got[0].ends_with("(got screem; did you mean scream?)"),
        "{got:?}"
    );
    assert!(got[1].starts_with("flows[0].packet_bytes: "), "{got:?}");
}

/// The recovery's work is bounded: a model whose type is unknown keeps
/// its place as the first type once the fields that type does not take
/// are dropped, one parse each, up to 31 of them (then the model around
/// it is set aside instead, and its own problems go unsaid).
#[test]
fn a_models_recovery_drops_at_most_31_fields() {
    let said = |junk: usize| {
        let mut cc = json!({"type": "xyz"});
        for i in 0..junk {
            cc[format!("junk{i:02}")] = json!(1);
        }
        let mut v = base();
        v["flows"][0] = json!({"name": "f", "type": "paced", "src": "a", "dst": "b",
                               "packet_bytes": 0, "cc": cc});
        let got: Vec<String> = errors(&v).into_iter().map(|e| e.path).collect();
        got
    };
    assert_eq!(said(31), ["flows[0].cc.type", "flows[0].packet_bytes"]);
    assert_eq!(said(32), ["flows[0].cc.type"]);
}

/// A flow's unknown field is named with every field a flow of its kind
/// takes, the common ones first, and the one likely meant among them all.
#[test]
fn a_flows_unknown_field_lists_the_common_fields_too() {
    let mut v = base();
    v["flows"][0]["dts"] = json!("b");
    v["flows"][0]
        .as_object_mut()
        .expect("a table")
        .remove("dst");
    let said: Vec<String> = errors(&v).iter().map(ToString::to_string).collect();
    assert_eq!(
        said[1],
        "flows[0].dts: unknown field; did you mean dst? (expected one of name, src, dst, group, \
         start_s, start_jitter_s, stop_s, src_port, dst_port, dscp, payload_bytes, rate_bps, \
         interval_ms, max_packets)"
    );
    let mut v = base();
    v["flows"][0] = json!({"name": "f", "type": "tcp", "src": "a", "dst": "b", "byts": 5});
    let said: Vec<String> = errors(&v).iter().map(ToString::to_string).collect();
    assert!(
        said[0].starts_with(
            "flows[0].byts: unknown field; did you mean bytes? (expected one of name, src,"
        ),
        "{said:?}"
    );
}
