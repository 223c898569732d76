//! The per-link tables (`links`, `queues`, `drops`) against figures worked
//! out by hand: fixed, changing and always-down links, a queue that
//! overflows, and a drop at a node.

mod common;
use common::{f64s, run, table, u64s};
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
