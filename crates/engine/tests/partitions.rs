//! A run split into partitions (`parallel.partitions`) gives the tables
//! of the run in one piece, to the bit: the partitions' applications,
//! link directions, recorder rows and counts merged into one world, what
//! was on a cut link's wire at the end taken in, and losses drawn on the
//! cut counted once. The oracle is the same scenario in one piece.

use mediasim_engine::measure::Table;
use mediasim_engine::{run_json, RunOptions};

/// A dumbbell cut at its 20 ms bottleneck, lossy (Gilbert-Elliott) and
/// overloaded (three CBR senders at 1 Mbit/s into 2 Mbit/s, a 30-packet
/// queue), with a CUBIC flow and a GCC call whose feedback crosses back;
/// every summary measured, ending mid-window with packets on the wire.
fn dumbbell(partitions: u32) -> String {
    let mut nodes = vec![
        r#"{"name": "r1"}"#.to_string(),
        r#"{"name": "r2"}"#.to_string(),
    ];
    let mut links = Vec::new();
    for i in 0..5 {
        nodes.push(format!(r#"{{"name": "s{i}"}}, {{"name": "d{i}"}}"#));
        links.push(format!(
            r#"{{"a": "s{i}", "b": "r1", "rate_bps": 1e8, "delay_ms": 2}}"#
        ));
        links.push(format!(
            r#"{{"a": "r2", "b": "d{i}", "rate_bps": 1e8, "delay_ms": 3}}"#
        ));
    }
    links.push(
        r#"{"name": "bottleneck", "a": "r1", "b": "r2", "rate_bps": 2e6, "delay_ms": 20,
            "queue": {"type": "droptail", "limit_packets": 30},
            "loss": {"type": "gilbert_elliott", "p_good_to_bad": 0.01, "p_bad_to_good": 0.3}}"#
            .to_string(),
    );
    let mut flows: Vec<String> = (0..3)
        .map(|i| {
            format!(
                r#"{{"name": "cbr{i}", "type": "cbr", "src": "s{i}", "dst": "d{i}", "rate_bps": 1e6, "payload_bytes": 972}}"#
            )
        })
        .collect();
    flows.push(
        r#"{"name": "tcp", "type": "tcp", "src": "s3", "dst": "d3", "cc": {"type": "cubic"}, "start_s": 0.5}"#
            .to_string(),
    );
    format!(
        r#"{{"duration_s": 6.013, "nodes": [{}], "links": [{}], "flows": [{}],
          "rtp_sessions": [{{"name": "call", "transport": "unicast", "session_bw_bps": 1.5e6,
            "media_payload_bytes": 1160, "avpf": {{"trr_interval_ms": 1000}},
            "members": [{{"node": "s4", "media": true, "source": {{"type": "synthetic"}},
                          "pacer": {{}}, "feedback": {{"format": "twcc"}}, "cc": {{"type": "gcc"}},
                          "pauses": [[2.5, 3.5]]}},
                        {{"node": "d4", "playout": {{"adaptive": true}}}}]}}],
          "measure": {{"series": true, "queue_sample_ms": 10, "capacity_interval_ms": 100,
                       "warmup_s": 1, "windows_s": [[1, 3], [3, 6]]}},
          "parallel": {{"partitions": {partitions}}}}}"#,
        nodes.join(","),
        links.join(","),
        flows.join(",")
    )
}

fn run(text: &str) -> (Vec<Table>, serde_json::Value) {
    let mut progress = |_, _| true;
    let opts = RunOptions {
        seed: 3,
        ..Default::default()
    };
    let out = run_json(text, &opts, &mut progress).expect("run");
    (
        out.tables,
        serde_json::from_str(&out.meta_json).expect("meta"),
    )
}

#[test]
fn a_split_run_has_every_table_of_the_run_in_one_piece() {
    let (one, meta1) = run(&dumbbell(1));
    let (two, meta2) = run(&dumbbell(2));
    assert_eq!(meta2["window_ns"], 20_000_000);
    let names = |t: &[Table]| t.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&one), names(&two));
    for (a, b) in one.iter().zip(&two) {
        // Debug prints each float's shortest exact form (NaN included).
        assert_eq!(
            format!("{:?}", a.columns),
            format!("{:?}", b.columns),
            "{}",
            a.name
        );
    }
    for key in [
        "delivered",
        "dropped",
        "in_flight",
        "originated",
        "loss_runs_late",
    ] {
        assert_eq!(meta1[key], meta2[key], "{key}");
    }
    // Losses were drawn on the cut, queue drops made on its near side,
    // and packets were still on its wire at the end.
    let links = one.iter().find(|t| t.name == "links").expect("links");
    assert!(format!("{links:?}").contains("bottleneck"));
    assert!(meta1["dropped"].as_u64().unwrap() > 100, "{meta1}");
    assert!(meta1["in_flight"].as_u64().unwrap() > 0, "{meta1}");
}
