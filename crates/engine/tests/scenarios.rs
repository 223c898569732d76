//! Whole-engine scenarios run through the public entry point.

mod common;
use common::{run, table, u64s};
use mediasim_engine::measure::{Column, Table};
use mediasim_engine::{run_json, EngineError, RunOptions};

const TWO_HOPS: &str = r#"{
  "duration_s": 2,
  "nodes": [{"name": "a"}, {"name": "r"}, {"name": "b"}],
  "links": [
    {"a": "a", "b": "r", "rate_bps": 8e6, "delay_ms": 3},
    {"a": "r", "b": "b", "rate_bps": 1e6, "delay_ms": 10,
     "queue": {"type": "droptail", "limit_packets": 5},
     "loss": {"type": "packet", "rate": 0.1}}
  ],
  "flows": [{"name": "f", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 972, "interval_ms": 4}],
  "measure": {"packets": true}
}"#;

#[test]
fn delays_are_store_and_forward_sums() {
    let t = run(TWO_HOPS, 1);
    let p = table(&t, "packets");
    let (sent, recv) = (u64s(p, "sent_ns"), u64s(p, "recv_ns"));
    // 1000 B: 1 ms on the 8 Mbit/s hop, 8 ms on the 1 Mbit/s hop, plus 13 ms,
    // plus waiting in the slow hop's queue (packets come every 4 ms, leave every 8).
    let min = sent.iter().zip(recv).map(|(s, r)| r - s).min().unwrap();
    assert_eq!(min, 1_000_000 + 8_000_000 + 13_000_000);
}

#[test]
fn conservation_and_reasons() {
    let t = run(TWO_HOPS, 2);
    let f = table(&t, "flows");
    let (sent, got, lost, fly) = (
        u64s(f, "sent")[0],
        u64s(f, "received")[0],
        u64s(f, "lost")[0],
        u64s(f, "in_flight")[0],
    );
    assert_eq!(sent, got + lost + fly);
    let (q, l) = (
        u64s(f, "dropped_queue_overflow")[0],
        u64s(f, "dropped_link_loss")[0],
    );
    assert!(q > 0 && l > 0);
    assert_eq!(q + l, lost);
}

#[test]
fn same_seed_same_tables() {
    assert_eq!(run(TWO_HOPS, 9), run(TWO_HOPS, 9));
    assert_ne!(
        table(&run(TWO_HOPS, 9), "drops"),
        table(&run(TWO_HOPS, 10), "drops")
    );
}

#[test]
fn invalid_scenarios_are_errors_not_panics() {
    let mut progress = |_, _| true;
    let bad = TWO_HOPS.replace("\"rate_bps\": 1e6", "\"rate_bps\": -1");
    match run_json(&bad, &RunOptions::default(), &mut progress) {
        Err(EngineError::Scenario(e)) => assert_eq!(e[0].path, "links[1].rate_bps"),
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("accepted a negative rate"),
    }
    for junk in ["", "[]", "{", "{\"duration_s\": 1}", "null"] {
        assert!(matches!(
            run_json(junk, &RunOptions::default(), &mut progress),
            Err(EngineError::Scenario(_))
        ));
    }
}

#[test]
fn progress_callback_can_interrupt() {
    let long = TWO_HOPS.replace("\"duration_s\": 2", "\"duration_s\": 100000");
    let mut progress = |_, _| false;
    assert!(matches!(
        run_json(&long, &RunOptions::default(), &mut progress),
        Err(EngineError::Interrupted(_))
    ));
}

/// Every application table has exactly its declared columns, in order,
/// whether or not the run has such flows; every declared column is filled
/// by some model (checked over the seed scenarios, which together have
/// every application and every RMTP role).
#[test]
fn app_tables_have_their_declared_columns() {
    use mediasim_engine::app::APP_TABLES;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seeds");
    let mut filled: std::collections::BTreeSet<(String, String)> = Default::default();
    // (seed file, variant): variants reach the columns only some set-ups fill.
    let runs = [
        ("models.json", ""),
        ("models.json", "svc over tfrc"),
        ("rtp_avpf_multicast.json", ""),
        ("rtp_avpf_multicast.json", "newpred"),
        ("rmtp_tree.json", ""),
        ("tcp_web_and_voice.json", ""),
        ("tcp_web_and_voice.json", "web transfers"),
        ("calls.json", ""),
    ];
    for (file, variant) in runs {
        let seed = format!("{file} {variant}");
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
        match variant {
            "newpred" => {
                v["rtp_sessions"][0]["newpred"] =
                    serde_json::json!({"frames_per_s": 10, "segments_per_frame": 4})
            }
            "web transfers" => {
                let f = &mut v["flows"][1];
                f.as_object_mut().unwrap().remove("bytes");
                f["transfers"] = serde_json::json!({"size_bytes": [20000, 60000], "off_mean_s": 1});
            }
            "svc over tfrc" => {
                let f = (v["flows"].as_array_mut().unwrap().iter_mut())
                    .find(|f| f["type"] == "svc")
                    .unwrap();
                f["cc"] = serde_json::json!({"type": "tfrc"});
            }
            _ => {}
        }
        v["measure"]["series"] = serde_json::json!(true);
        v["duration_s"] = serde_json::json!(v["duration_s"].as_f64().unwrap().min(20.0));
        let tables = run(&v.to_string(), 1);
        for decl in APP_TABLES {
            let t = table(&tables, decl.name);
            let names: Vec<&str> = t.columns.iter().map(|c| c.0.as_str()).collect();
            let mut want = vec!["flow"];
            want.extend(decl.names());
            assert_eq!(names, want, "{seed}: table {}", decl.name);
            assert_eq!(
                tables
                    .iter()
                    .any(|t| t.name == format!("{}_series", decl.name)),
                decl.series,
                "{seed}: {}_series",
                decl.name
            );
            for (name, col) in &t.columns[1..] {
                if let Column::F64(x) = col {
                    if x.iter().any(|v| !v.is_nan()) {
                        filled.insert((decl.name.to_string(), name.clone()));
                    }
                }
            }
        }
    }
    for decl in APP_TABLES {
        for c in decl.names() {
            assert!(
                filled.contains(&(decl.name.to_string(), c.to_string())),
                "{}.{c}: declared but never reported",
                decl.name
            );
        }
    }
}

fn strs(t: &Table, col: &str) -> Vec<String> {
    let c = t.get(col).unwrap_or_else(|| panic!("column {col}"));
    (0..c.len())
        .map(|i| c.str_at(i).expect("a string column").to_string())
        .collect()
}

/// The name columns (codes into the run's name lists) read back as the
/// names the scenario gave, in every table that repeats them.
#[test]
fn name_columns_read_back_as_the_scenarios_names() {
    let t = run(TWO_HOPS, 3);
    let links = table(&t, "links");
    assert_eq!(strs(links, "link"), ["a-r", "a-r", "r-b", "r-b"]);
    assert_eq!(
        strs(links, "direction"),
        ["a-r:a->r", "a-r:r->a", "r-b:r->b", "r-b:b->r"]
    );
    assert_eq!(strs(links, "from"), ["a", "r", "r", "b"]);
    assert_eq!(strs(links, "to"), ["r", "a", "b", "r"]);
    let queues = table(&t, "queues");
    assert_eq!(strs(queues, "direction"), strs(links, "direction"));
    assert_eq!(strs(queues, "kind"), ["droptail"; 4]);
    let flows = table(&t, "flows");
    assert_eq!(strs(flows, "flow"), ["f"]);
    assert_eq!(strs(flows, "kind"), ["cbr"]);
    assert_eq!(
        (strs(flows, "src"), strs(flows, "receiver")),
        (vec!["a".to_string()], vec!["b".to_string()])
    );
    let drops = table(&t, "drops");
    let reasons = strs(drops, "reason");
    assert!(
        reasons.iter().any(|r| r == "queue_overflow") && reasons.iter().any(|r| r == "link_loss")
    );
}
