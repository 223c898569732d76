//! The per-link tables (`links`, `queues`, `drops`) against figures worked
//! out by hand: fixed, changing and always-down links, a queue that
//! overflows, and a drop at a node.

mod common;
use common::{f64s, run, run_with_meta, table, u64s};
use mediasim_engine::measure::{Column, Table};

/// 1000-byte packets (8 ms at 1 Mbit/s) for 1 s: `f` every 4 ms into a
/// 5-packet queue on a-b (twice the rate: drops), `g`'s first packet
/// lost at b's receiver, `h` every 16 ms on a-c, `k` every 16 ms on a-d,
/// whose rate steps from 1 to 2 Mbit/s at 0.5 s; c-d is down all run.
const SCENARIO: &str = r#"{"duration_s": 1,
  "nodes": [{"name": "a"},
            {"name": "b", "receiver_loss": {"type": "explicit", "packets": [{"flow": "g", "seq": 0}]}},
            {"name": "c"}, {"name": "d"}],
  "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 10, "queue": {"type": "droptail", "limit_packets": 5}},
            {"a": "a", "b": "c", "rate_bps": 1e6, "delay_ms": 2},
            {"a": "a", "b": "d", "rate_bps": [[0, 1e6], [0.5, 2e6]], "delay_ms": 2},
            {"a": "c", "b": "d", "rate_bps": [[0, 1e6]], "delay_ms": 2, "outages": {"down_s": [[0, 2]]}}],
  "flows": [{"name": "f", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 972, "interval_ms": 4, "start_s": 0.001},
            {"name": "g", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 972, "interval_ms": 400},
            {"name": "h", "type": "cbr", "src": "a", "dst": "c", "payload_bytes": 972, "interval_ms": 16},
            {"name": "k", "type": "cbr", "src": "a", "dst": "d", "payload_bytes": 972, "interval_ms": 16}],
  "measure": {"packets": true}}"#;

fn strings(t: &Table, col: &str) -> Vec<String> {
    let c = t.get(col).expect("column");
    (0..c.len())
        .map(|i| c.str_at(i).expect("a string").to_string())
        .collect()
}

fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "{got:?} against {want:?}");
    }
}

#[test]
fn the_links_table_gives_each_directions_rate_delay_and_utilisation() {
    let t = run(SCENARIO, 1);
    let l = table(&t, "links");
    assert_eq!(
        strings(l, "direction")[..3],
        ["a-b:a->b", "a-b:b->a", "a-c:a->c"]
    );
    // A changing link's rate is the mean it offered: 1 Mbit/s for 0.5 s,
    // then 2; none while down.
    close(
        f64s(l, "rate_bps"),
        &[1e6, 1e6, 1e6, 1e6, 1.5e6, 1.5e6, 0.0, 0.0],
    );
    close(
        f64s(l, "delay_ms"),
        &[10.0, 10.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
    );
    // a-c sends at 0, 16, ..., 992 ms: 63 packets of 8 ms. a-d carries
    // the same 63,000 bytes of the 187,500 it offered. a-b is busy past
    // the end (clipped at 1); a link that offered nothing is 0, not NaN.
    assert_eq!(u64s(l, "tx_packets")[2..5], [63, 0, 63]);
    close(
        f64s(l, "utilization"),
        &[1.0, 0.0, 0.504, 0.0, 0.336, 0.0, 0.0, 0.0],
    );
}

#[test]
fn the_queues_and_drops_tables_name_each_drop_and_its_place() {
    let t = run(SCENARIO, 1);
    let q = table(&t, "queues");
    let (arrivals, departures, overflow) = (
        u64s(q, "arrivals"),
        u64s(q, "departures"),
        u64s(q, "dropped_queue_overflow"),
    );
    let fin = u64s(q, "final_packets");
    assert!(overflow[0] > 100, "{overflow:?}");
    assert_eq!(arrivals[0], departures[0] + overflow[0] + fin[0]);
    // The overflow column is there even for queues without a drop; the
    // receiver's loss is no queue's.
    assert_eq!(overflow[1..], [0; 7]);
    let cols: Vec<&str> = q.columns.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        cols.iter().filter(|c| c.starts_with("dropped_")).count(),
        1,
        "{cols:?}"
    );
    // Full (5 packets) from the first few packets on, but for the moments
    // after each departure: on average a little less.
    let (mean_p, mean_b) = (f64s(q, "mean_packets")[0], f64s(q, "mean_bytes")[0]);
    assert!(mean_p > 4.5 && mean_p < 5.0, "{mean_p}");
    assert!((mean_b - 1000.0 * mean_p).abs() < 1e-6, "{mean_b}");

    let d = table(&t, "drops");
    let (reasons, sites) = (strings(d, "reason"), strings(d, "site"));
    let at_node: Vec<usize> = (0..sites.len()).filter(|&i| sites[i] == "node:b").collect();
    assert_eq!(at_node.len(), 1, "g's first packet, at b");
    assert_ne!(reasons[at_node[0]], "queue_overflow");
    let on_link = sites.iter().filter(|s| *s == "a-b:a->b").count() as u64;
    assert_eq!(on_link, overflow[0]);
    // The places a packet can be dropped: each direction, then each node
    // (not the pooled receiver "*").
    let Some(Column::Names { names, .. }) = d.get("site") else {
        panic!("a names column");
    };
    assert_eq!(names.len(), 8 + 4);
    assert_eq!(names[8..], ["node:a", "node:b", "node:c", "node:d"]);
}

/// The `dropped_<reason>` columns of the queues table: queue overflow
/// always (zeros in a run without drops), another reason only where a
/// queue dropped for it (RED's early drops).
#[test]
fn the_queues_table_has_a_column_per_reason_a_queue_dropped_for() {
    let dropped = |queue: &str| -> Vec<(String, u64)> {
        let s = SCENARIO.replacen(r#"{"type": "droptail", "limit_packets": 5}"#, queue, 1);
        let t = run(&s, 1);
        let q = table(&t, "queues");
        (q.columns.iter())
            .filter(|c| c.0.starts_with("dropped_"))
            .map(|c| (c.0.clone(), u64s(q, &c.0).iter().sum()))
            .collect()
    };
    let none = dropped(r#"{"type": "droptail", "limit_packets": 1000}"#);
    assert_eq!(none, [("dropped_queue_overflow".to_string(), 0)]);
    let red = dropped(r#"{"type": "red", "limit_packets": 30, "min_th": 2, "max_th": 6}"#);
    assert!(red.len() >= 2, "{red:?}");
    assert_eq!(red[0].0, "dropped_queue_overflow");
    assert!(red[1..].iter().all(|(_, n)| *n > 0), "{red:?}");
}

/// The scenario with `field` added to its `measure` table.
fn measuring(field: &str) -> String {
    let m = r#""measure": {"packets": true"#;
    SCENARIO.replacen(m, &format!("{m}, {field}"), 1)
}

/// A strict-priority queue on a-b: `ef` (DSCP 46, a packet every 16 ms,
/// half the link) above `be` (every 4 ms, twice the link): every `ef`
/// packet goes through, `be` gets what is left and overflows its five
/// places. One row per class, in the order of the classes.
#[test]
fn the_classes_table_counts_each_class_of_a_class_based_queue() {
    let queue = r#"{"type": "priority", "classes": [
        {"name": "ef", "dscp": [46], "queue": {"type": "droptail", "limit_packets": 5}},
        {"name": "be", "queue": {"type": "droptail", "limit_packets": 5}}]}"#;
    let s = SCENARIO
        .replacen(r#"{"type": "droptail", "limit_packets": 5}"#, queue, 1)
        .replacen(
            r#""payload_bytes": 972, "interval_ms": 400}"#,
            r#""payload_bytes": 972, "interval_ms": 16, "dscp": 46}"#,
            1,
        );
    let t = run(&s, 1);
    let c = table(&t, "queue_classes");
    // The link's queue is each direction's; only a->b carries packets.
    let dirs = ["a-b:a->b", "a-b:a->b", "a-b:b->a", "a-b:b->a"];
    assert_eq!(strings(c, "direction"), dirs);
    assert_eq!(strings(c, "class"), ["ef", "be", "ef", "be"]);
    let (arr, dep, bytes, drops) = (
        u64s(c, "arrivals"),
        u64s(c, "departures"),
        u64s(c, "departure_bytes"),
        u64s(c, "drops"),
    );
    // g every 16 ms from 0 (63 packets, one lost at b: not the queue's);
    // f every 4 ms from 1 ms (250).
    assert_eq!(arr, [63, 250, 0, 0]);
    assert_eq!(u64s(c, "departures")[2..], [0, 0]);
    // ef: none dropped; its last packet (992 ms) may still wait or be on
    // the wire at the end, none more.
    assert_eq!(drops[0], 0);
    assert!(dep[0] >= 62 && dep[0] <= 63, "{dep:?}");
    // The link sends 125 packets a second (8 ms each), and one more
    // may start before the end; ef takes 62-63 of them.
    assert!(dep[0] + dep[1] <= 126 && dep[0] + dep[1] >= 124, "{dep:?}");
    assert!(arr[1] >= dep[1] + drops[1] && arr[1] <= dep[1] + drops[1] + 5);
    assert_eq!(bytes[..2], [dep[0] * 1000, dep[1] * 1000]);
    // The classes' drops are the queue's.
    let q = table(&t, "queues");
    assert_eq!(u64s(q, "dropped_queue_overflow")[0], drops[1]);
}

/// Queue samples every 100 ms: one row per direction at 0, 100, ...,
/// 1000 ms, in direction order; a-b's queue full (5 packets of 1000
/// bytes) once f has filled it.
#[test]
fn the_queue_samples_table_has_a_row_per_direction_and_instant() {
    let (t, meta) = run_with_meta(&measuring(r#""queue_sample_ms": 100"#));
    let q = table(&t, "queue_samples");
    let time = u64s(q, "time_ns");
    assert_eq!(time.len(), 11 * 8);
    for (i, &at) in time.iter().enumerate() {
        assert_eq!(at, (i / 8) as u64 * 100_000_000, "row {i}");
    }
    let dirs = decoded(q, "link_dir", &meta);
    assert_eq!(dirs[..3], ["a-b:a->b", "a-b:b->a", "a-c:a->c"]);
    assert_eq!(dirs[8..11], dirs[..3]);
    let (packets, bytes) = (u64s(q, "packets"), u64s(q, "bytes"));
    for (i, (&p, &b)) in packets.iter().zip(bytes).enumerate() {
        assert_eq!(b, 1000 * p, "row {i}");
    }
    // a-b: empty at 0, then f's queue at 4 or 5 packets (f sends every
    // 4 ms, the link takes 8: one departure in two arrivals).
    assert_eq!(packets[0], 0);
    for k in 1..11 {
        assert!(packets[8 * k] >= 4 && packets[8 * k] <= 5, "{packets:?}");
    }
    // Nothing waits on the reverse directions.
    assert!((0..88).filter(|i| i % 2 == 1).all(|i| packets[i] == 0));
    assert_eq!(meta["queue_samples_truncated"], false);
}

/// The per-hop trace: `+ - r` on a link (no node), `D` and a receiver's
/// drop at a node (no link; the drop's letter `d`, as at a link).
#[test]
fn the_trace_names_each_event_and_where_it_happened() {
    let (t, meta) = run_with_meta(&measuring(r#""trace": true"#));
    let tr = table(&t, "trace");
    let (event, flow) = (strings(tr, "event"), decoded(tr, "flow", &meta));
    let (Some(Column::I64(link)), Some(Column::I64(node))) = (tr.get("link_dir"), tr.get("node"))
    else {
        panic!("integer columns");
    };
    let node_names = meta["codes"]["node"].as_array().expect("node names");
    let name_of = |n: i64| node_names[n as usize].as_str().expect("a name");
    let mut count = std::collections::BTreeMap::<(&str, &str), u64>::new();
    for i in 0..event.len() {
        *count
            .entry((flow[i].as_str(), event[i].as_str()))
            .or_default() += 1;
        match event[i].as_str() {
            "+" | "-" | "r" => assert!(link[i] >= 0 && node[i] == -1, "row {i}"),
            "D" => assert!(link[i] == -1 && name_of(node[i]) == flow_dst(&flow[i])),
            "d" if node[i] >= 0 => {
                // g's first packet, lost at b's receiver.
                assert_eq!(
                    (link[i], name_of(node[i]), flow[i].as_str()),
                    (-1, "b", "g")
                );
            }
            "d" => assert!(link[i] == 0 && node[i] == -1, "overflow on a-b: row {i}"),
            other => panic!("event {other:?} in row {i}"),
        }
    }
    // h (a-c, half the link): each of its 63 packets enqueued and sent;
    // the last (992 ms) reaches c after the end.
    let n = |f, e| count.get(&(f, e)).copied().unwrap_or(0);
    assert_eq!(
        [n("h", "+"), n("h", "-"), n("h", "r"), n("h", "D")],
        [63, 63, 62, 62]
    );
    // g: 3 packets, the first (before f starts) lost at b's receiver,
    // the others into a-b's queue that f keeps full.
    assert_eq!([n("g", "+"), n("g", "d"), n("g", "D")], [3, 3, 0]);
    let at_node = (0..event.len()).filter(|&i| event[i] == "d" && node[i] >= 0);
    assert_eq!(at_node.count(), 1);
    let q = table(&t, "queues");
    assert_eq!(n("f", "d") + 2, u64s(q, "dropped_queue_overflow")[0]);
    assert_eq!(
        n("f", "+"),
        n("f", "-") + n("f", "d") + u64s(q, "final_packets")[0]
    );
    assert_eq!(meta["trace_truncated"], false);
}

/// A coded column's values by their names in the metadata's `codes`.
fn decoded(t: &Table, col: &str, meta: &serde_json::Value) -> Vec<String> {
    let names = meta["codes"][col].as_array().expect("codes");
    (u64s(t, col).iter())
        .map(|&c| names[c as usize].as_str().expect("a name").to_string())
        .collect()
}

fn flow_dst(flow: &str) -> &'static str {
    match flow {
        "f" | "g" => "b",
        "h" => "c",
        _ => "d",
    }
}

/// Applications' series: kept only with `measure.series` (no `*_series`
/// table without it); a series that reaches `limits.max_series_rows`
/// sets `series_truncated`, one that stays under it does not.
#[test]
fn series_tables_come_with_measure_series_and_say_when_they_filled() {
    let tcp = |measure: &str, limits: &str| {
        format!(
            r#"{{"duration_s": 2, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
              "links": [{{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 10}}],
              "flows": [{{"name": "t", "type": "tcp", "src": "a", "dst": "b"}}],
              "measure": {measure}, "limits": {limits}}}"#
        )
    };
    let series = |t: &[Table]| -> Vec<String> {
        (t.iter())
            .filter(|t| t.name.ends_with("_series"))
            .map(|t| t.name.clone())
            .collect()
    };
    let (off, meta) = run_with_meta(&tcp("{}", "{}"));
    assert_eq!(series(&off), Vec::<String>::new());
    assert_eq!(meta["series_truncated"], false);

    let (on, meta) = run_with_meta(&tcp(r#"{"series": true}"#, "{}"));
    assert!(
        series(&on).contains(&"tcp_series".to_string()),
        "{:?}",
        series(&on)
    );
    assert_eq!(meta["series_truncated"], false);
    let rows = table(&on, "tcp_series").get("time_ns").expect("time").len();
    assert!(rows > 30, "{rows}");

    let (cut, meta) = run_with_meta(&tcp(r#"{"series": true}"#, r#"{"max_series_rows": 10}"#));
    assert_eq!(meta["series_truncated"], true);
    let rows = table(&cut, "tcp_series")
        .get("time_ns")
        .expect("time")
        .len();
    assert!(rows < 10 * 5, "each variable at most 10 rows: {rows}");
}
