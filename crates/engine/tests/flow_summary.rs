//! The flows, loss-runs and throughput tables against their definitions
//! (docs/results.md), on a path whose every figure can be worked out by
//! hand: one 1 Mbit/s link of 10 ms, 125-byte packets (1 ms on the wire,
//! so 11 ms each, never queued), and losses placed by the explicit model.

mod common;
use common::{f64s, run, table, u64s};
use mediasim_engine::measure::{Column, Table};

/// `f` sends every 10 ms from 0 (100 packets in 1 s; the last arrives at
/// 1.001 s, after the end); the link loses `f`'s packets 3, 4, 5 and 10.
/// `g` sends one packet at 0.505 s, between two of `f`'s; `h` one at
/// 0.995 s, still in flight at the end.
fn scenario(packet_log: bool, warmup_s: f64) -> String {
    format!(
        r#"{{
  "duration_s": 1,
  "nodes": [{{"name": "a"}}, {{"name": "b"}}],
  "links": [{{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 10,
    "loss": {{"type": "explicit", "packets": [
      {{"flow": "f", "seq": 3}}, {{"flow": "f", "seq": 4}}, {{"flow": "f", "seq": 5}}, {{"flow": "f", "seq": 10}}]}}}}],
  "flows": [
    {{"name": "f", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 97, "interval_ms": 10}},
    {{"name": "g", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 97, "interval_ms": 10,
      "start_s": 0.505, "stop_s": 0.51}},
    {{"name": "h", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 97, "interval_ms": 10,
      "start_s": 0.995}}
  ],
  "measure": {{"packets": {packet_log}, "warmup_s": {warmup_s}, "windows_s": [[0.2, 0.6], [0.0, 1.0]]}}
}}"#
    )
}

fn names(t: &Table, col: &str) -> Vec<String> {
    match t.get(col) {
        Some(Column::Names { codes, names }) => {
            codes.iter().map(|&c| names[c as usize].clone()).collect()
        }
        other => panic!("column {col}: {other:?}"),
    }
}

#[test]
fn flow_rows_are_their_definitions_with_and_without_the_packet_log() {
    for packet_log in [false, true] {
        let t = run(&scenario(packet_log, 0.0), 1);
        let f = table(&t, "flows");
        assert_eq!(names(f, "flow"), ["f", "g", "h"]);
        assert_eq!(u64s(f, "sent"), [100, 1, 1]);
        assert_eq!(u64s(f, "sent_bytes"), [12_500, 125, 125]);
        assert_eq!(u64s(f, "received"), [95, 1, 0]);
        assert_eq!(u64s(f, "received_bytes"), [95 * 125, 125, 0]);
        assert_eq!(u64s(f, "lost"), [4, 0, 0]);
        assert_eq!(u64s(f, "dropped_link_loss"), [4, 0, 0]);
        assert_eq!(u64s(f, "in_flight"), [1, 0, 1]);
        // lost / (received + lost); 0 when all that was sent is in flight.
        assert_eq!(f64s(f, "loss_rate"), [4.0 / 99.0, 0.0, 0.0]);
        // Received wire bits over [start, min(stop, end)).
        assert_eq!(
            f64s(f, "throughput_bps"),
            [95.0 * 1000.0 / 1.0, 1000.0 / 0.005, 0.0]
        );
        for stat in ["mean", "min", "p50", "p95", "p99", "max"] {
            let col = format!("delay_{stat}_ms");
            let d = f64s(f, &col);
            assert!(
                d[..2].iter().all(|d| (d - 11.0).abs() < 1e-9),
                "{col}: {d:?} (packet log {packet_log})"
            );
            assert!(d[2].is_nan(), "{col}: {d:?}");
        }
        // A constant transit time: no jitter; one packet or none: none to
        // speak of.
        let jitter = f64s(f, "jitter_ms");
        assert_eq!(jitter[0], 0.0);
        assert!(jitter[1].is_nan() && jitter[2].is_nan());
        // Runs of consecutive losses: 3-5 and 10.
        assert_eq!(u64s(f, "loss_runs"), [2, 0, 0]);
        assert_eq!(f64s(f, "loss_run_mean"), [2.0, 0.0, 0.0]);
        assert_eq!(u64s(f, "loss_run_max"), [3, 0, 0]);
        let r = table(&t, "loss_runs");
        assert_eq!(names(r, "flow"), ["f", "f"]);
        assert_eq!(u64s(r, "run_length"), [1, 3]);
        assert_eq!(u64s(r, "count"), [1, 1]);
    }
}

#[test]
fn throughput_windows_count_the_bytes_delivered_within_them() {
    let t = run(&scenario(false, 0.0), 1);
    let w = table(&t, "throughput");
    assert_eq!(names(w, "flow"), ["f", "f", "g", "g", "h", "h"]);
    let close = |col: &str, want: [f64; 6]| {
        let got = f64s(w, col);
        assert!(
            got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12),
            "{col}: {got:?}"
        );
    };
    close("window_start_s", [0.2, 0.0, 0.2, 0.0, 0.2, 0.0]);
    close("window_end_s", [0.6, 1.0, 0.6, 1.0, 0.6, 1.0]);
    // f's packets 19..=58 arrive in [0.2, 0.6) (at 10 k + 11 ms), none of
    // them lost; all 95 it delivers arrive by 1 s.
    assert_eq!(u64s(w, "bytes"), [40 * 125, 95 * 125, 125, 125, 0, 0]);
    let bps = f64s(w, "throughput_bps");
    let want = [
        40.0 * 1000.0 / 0.4,
        95.0 * 1000.0,
        1000.0 / 0.4,
        1000.0,
        0.0,
        0.0,
    ];
    for (got, want) in bps.iter().zip(want) {
        assert!((got - want).abs() <= 1e-6 * want, "{bps:?}");
    }
}

#[test]
fn a_warm_up_leaves_the_packets_sent_before_it_out_of_every_figure() {
    for packet_log in [false, true] {
        let t = run(&scenario(packet_log, 0.2), 1);
        let f = table(&t, "flows");
        // f from 0.2 s on: packets 20..=99, none of the lost ones.
        assert_eq!(u64s(f, "sent"), [80, 1, 1]);
        assert_eq!(u64s(f, "received"), [79, 1, 0]);
        assert_eq!(u64s(f, "lost"), [0, 0, 0]);
        assert_eq!(f64s(f, "loss_rate"), [0.0, 0.0, 0.0]);
        assert_eq!(
            f64s(f, "throughput_bps"),
            [79.0 * 1000.0 / 0.8, 1000.0 / 0.005, 0.0]
        );
        assert!((f64s(f, "delay_mean_ms")[0] - 11.0).abs() < 1e-9);
        assert_eq!(u64s(f, "loss_runs"), [0, 0, 0]);
    }
}
