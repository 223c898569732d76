//! Links whose rate, delay or state changes (schedules, Mahimahi traces,
//! outages, jitter), checked against answers worked out by hand.

mod common;
use common::{f64s, run, table, u64s};
use mediasim_engine::measure::Table;

/// Two nodes, link `link` (JSON fields) from a to b, a CBR flow of
/// `payload` bytes (28 bytes of headers on top) every `interval_ms`.
fn scenario(link: &str, payload: u32, interval_ms: f64, duration_s: f64) -> String {
    format!(
        r#"{{"duration_s": {duration_s}, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
        "links": [{{"a": "a", "b": "b", {link}}}],
        "flows": [{{"name": "f", "type": "cbr", "src": "a", "dst": "b",
                    "payload_bytes": {payload}, "interval_ms": {interval_ms}}}],
        "measure": {{"packets": true}}}}"#
    )
}

/// The books balance: every packet sent was received, dropped or is in
/// flight; returns (sent, received, dropped_link_down).
fn balanced(t: &[Table]) -> (u64, u64, u64) {
    let f = table(t, "flows");
    let (sent, got, lost, fly) = (
        u64s(f, "sent")[0],
        u64s(f, "received")[0],
        u64s(f, "lost")[0],
        u64s(f, "in_flight")[0],
    );
    assert_eq!(sent, got + lost + fly, "conservation");
    (sent, got, u64s(f, "dropped_link_down")[0])
}

#[test]
fn a_saturating_flow_follows_a_rate_schedule_step_by_step() {
    // 1000-byte packets every 1 ms (8 Mbit/s) into 2, 1, then 4 Mbit/s.
    let link = r#""rate_bps": [[0, 2e6], [2, 1e6], [4, 4e6]], "delay_ms": 10,
                  "queue": {"type": "droptail", "limit_packets": 20000}"#;
    // 6.1 s: packets leaving up to 6 s have arrived.
    let t = run(&scenario(link, 972, 1.0, 6.1), 1);
    balanced(&t);
    let p = table(&t, "packets");
    let recv = u64s(p, "recv_ns");
    let delay = 10_000_000u64;
    for (a, b, rate) in [(0u64, 2u64, 2e6), (2, 4, 1e6), (4, 6, 4e6)] {
        // Packets whose last bit left in [a, b) s.
        let left = recv
            .iter()
            .filter(|&&r| (a * 1_000_000_000..b * 1_000_000_000).contains(&(r - delay)))
            .count() as f64;
        let want = rate * (b - a) as f64 / 8000.0;
        assert!(
            (left - want).abs() <= 1.0,
            "[{a}, {b}) s: {left} packets, want {want}"
        );
    }
    // The capacity table: 100 ms rows, capacity as scheduled, all carried.
    let c = table(&t, "link_capacity");
    let (time, cap, carried) = (
        u64s(c, "time_ns"),
        f64s(c, "capacity_bps"),
        u64s(c, "carried_bytes"),
    );
    let dir0: Vec<usize> = (0..time.len())
        .filter(|&i| u64s(c, "link_dir")[i] == 0)
        .collect();
    assert_eq!(dir0.len(), 61);
    for &i in &dir0[..60] {
        let t_s = time[i] as f64 / 1e9;
        let want = if t_s <= 2.0 + 1e-9 {
            25_000.0
        } else if t_s <= 4.0 + 1e-9 {
            12_500.0
        } else {
            50_000.0
        };
        assert!(
            (cap[i] * 0.1 / 8.0 - want).abs() < 1e-6,
            "{t_s}: {}",
            cap[i]
        );
        assert!(
            (carried[i] as f64 - want).abs() <= 1000.0,
            "{t_s}: carried {}",
            carried[i]
        );
    }
}

#[test]
fn a_packet_being_sent_when_the_rate_changes_sends_the_rest_at_the_new_rate() {
    // 8000 bits at 1 Mbit/s from 0; 4000 sent by 4 ms; the other 4000 at
    // 2 Mbit/s take 2 ms: the last bit leaves at 6 ms, arrives at 16 ms.
    let link = r#""rate_bps": [[0, 1e6], [0.004, 2e6]], "delay_ms": 10"#;
    let t = run(&scenario(link, 972, 1000.0, 0.5), 1);
    let recv = u64s(table(&t, "packets"), "recv_ns");
    assert_eq!(recv, [16_000_000]);
    // The delay in force when the last bit leaves: a step to 30 ms at 5 ms.
    let link = r#""rate_bps": 1e6, "delay_ms": [[0, 10], [0.005, 30]]"#;
    let t = run(&scenario(link, 972, 1000.0, 0.5), 1);
    assert_eq!(
        u64s(table(&t, "packets"), "recv_ns"),
        [8_000_000 + 30_000_000]
    );
}

#[test]
fn a_delay_step_down_never_lets_a_packet_overtake_one_ahead() {
    // Packets every 1 ms; the delay falls from 100 to 10 ms at 0.5 s.
    let link = r#""rate_bps": 10e6, "delay_ms": [[0, 100], [0.5, 10]]"#;
    let t = run(&scenario(link, 972, 1.0, 1.0), 1);
    let p = table(&t, "packets");
    let (seq, recv) = (u64s(p, "seq"), u64s(p, "recv_ns"));
    assert!(seq.windows(2).all(|w| w[0] < w[1]), "delivered in order");
    assert!(recv.windows(2).all(|w| w[0] <= w[1]));
    // The first packet after the step waits behind the last one before it.
    let i = (0..recv.len())
        .find(|&i| recv[i] - recv[0] > 500_000_000)
        .unwrap();
    assert!(recv[i] >= 599_000_000, "{}", recv[i]);
}

#[test]
fn a_trace_link_carries_exactly_its_opportunities_and_wraps_as_mahimahi() {
    // 1504-byte packets (1476 of payload): one per opportunity. The trace
    // 0, 4, 4, 10 (repeating) offers opportunities at 0, 4, 4, 10, then
    // (the next pass from 10 ms) 10, 14, 14, 20, 20, ...; a packet
    // arriving at time 0 finds the opportunity at 0 already gone.
    let trace = r#""trace": {"opportunities_ms": [0, 4, 4, 10]}, "delay_ms": 0,
                   "queue": {"type": "droptail", "limit_packets": 100000}"#;
    let t = run(&scenario(trace, 1476, 0.5, 0.1), 1);
    let recv: Vec<u64> = u64s(table(&t, "packets"), "recv_ns")
        .iter()
        .map(|r| r / 1_000_000)
        .collect();
    let mut want = vec![4, 4];
    for k in 1..10 {
        want.extend([10 * k, 10 * k, 10 * k + 4, 10 * k + 4]);
    }
    want.extend([100, 100]);
    assert_eq!(recv, want);
    // Small packets: one opportunity carries several; bytes exactly.
    // 100-byte packets (72 + 28) every 0.1 ms, 2 opportunities per 10 ms
    // for 1 s: 200 opportunities x 1504 bytes = 300,800 bytes; the bytes
    // whose packets completed are those, less at most one packet under way.
    let trace = r#""trace": {"opportunities_ms": [5, 10]}, "delay_ms": 1,
                   "queue": {"type": "droptail", "limit_packets": 100000}"#;
    let t = run(&scenario(trace, 72, 0.1, 1.0), 1);
    let (_, got, _) = balanced(&t);
    let offered = 200 * 1504;
    // The last opportunity's packets arrive 1 ms after 1 s: not counted.
    let within = offered - 1504;
    assert!(
        got * 100 <= within as u64 && within as u64 - got * 100 < 100,
        "{got}"
    );
    // Run once: nothing after the last opportunity (10 ms).
    let once = r#""trace": {"opportunities_ms": [5, 10], "repeat": false}, "delay_ms": 0"#;
    let t = run(&scenario(once, 1476, 1.0, 0.1), 1);
    let recv = u64s(table(&t, "packets"), "recv_ns");
    assert_eq!(recv, [5_000_000, 10_000_000]);
    let (sent, got, _) = balanced(&t);
    assert!(sent > 90 && got == 2);
}

#[test]
fn nothing_leaves_a_link_while_it_is_down_and_the_books_balance() {
    for (queued, wire) in [("keep", "deliver"), ("drop", "lose")] {
        let link = format!(
            r#""rate_bps": 1e6, "delay_ms": 20, "queue": {{"type": "droptail", "limit_packets": 1000}},
               "outages": {{"down_s": [[0.5, 1.0], [1.5, 1.6]], "queued": "{queued}", "wire": "{wire}"}}"#
        );
        let t = run(&scenario(&link, 972, 10.0, 2.0), 1);
        let (sent, got, down) = balanced(&t);
        let recv = u64s(table(&t, "packets"), "recv_ns");
        for &r in recv {
            // The last bit left at r - 20 ms: never inside a down window.
            let left = r - 20_000_000;
            assert!(
                !(500_000_000..1_000_000_000).contains(&left)
                    && !(1_500_000_000..1_600_000_000).contains(&left),
                "{queued}/{wire}: a packet left at {left} ns"
            );
        }
        if queued == "keep" {
            // Packets every 10 ms at 8 ms each: at 0.5 s the link is idle
            // (the packet of 0.49 s left at 0.498); at 1.5 s it is still
            // working off the 50 packets queued in the first outage, and
            // the one under way is cut. The queued ones wait.
            assert_eq!(down, 1, "{queued}");
            assert_eq!(
                u64s(table(&t, "flows"), "lost")[0],
                1,
                "{sent} sent, {got} received"
            );
        } else {
            // Sent while down: 50 + 10 packets (the one at 0.5 s after
            // the change, the one at 1.0 s after the link is up again);
            // on the wire at each down: the two sent 10 and 20 ms before
            // (20 ms of delay); none under way (8 of every 10 ms busy,
            // the link idle at 0.5 and 1.5 s). Everything else arrives.
            assert_eq!(down, 50 + 10 + 2 + 2);
            assert_eq!(sent - got - u64s(table(&t, "flows"), "in_flight")[0], down);
            assert!(u64s(table(&t, "flows"), "dropped_link_down")[0] == down);
        }
    }
}

#[test]
fn an_on_off_link_is_down_for_its_share_of_the_time() {
    // Up 0.9 s, down 0.1 s on average: about 10% of the capacity is gone.
    let link = r#""rate_bps": 1e6, "delay_ms": 5,
                  "outages": {"mean_up_s": 0.9, "mean_down_s": 0.1}"#;
    let t = run(&scenario(link, 972, 1.0, 200.0), 4);
    balanced(&t);
    let c = table(&t, "link_capacity");
    // Both directions' rows, 100 ms each.
    let cap: f64 = f64s(c, "capacity_bps")
        .iter()
        .map(|r| r * 0.1 / 8.0)
        .sum::<f64>()
        / 2.0;
    let full = 1e6 * 200.0 / 8.0;
    let share = cap / full;
    // 200 cycles of 1 s: the down share's sd is about 1.4 points.
    assert!((share - 0.9).abs() < 0.05, "{share}");
}

#[test]
fn jitter_has_the_configured_spread_and_does_not_reorder() {
    // RFC 8867's example: sigma 15 ms, truncated at 30 ms; packets 100 ms
    // apart never meet, so the draws are seen as they are.
    let link = r#""rate_bps": 10e6, "delay_ms": 50, "jitter": {"std_ms": 15, "max_ms": 30}"#;
    let t = run(&scenario(link, 972, 100.0, 400.0), 2);
    let p = table(&t, "packets");
    let (sent, recv) = (u64s(p, "sent_ns"), u64s(p, "recv_ns"));
    let d: Vec<f64> = sent
        .iter()
        .zip(recv)
        .map(|(s, r)| (r - s) as f64 / 1e6 - 50.8)
        .collect();
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    assert!(n > 3900.0);
    assert!(d.iter().all(|x| x.abs() <= 30.0 + 1e-6));
    // The truncated Gaussian's sd: 15 sqrt(1 - 2 2 phi(2) / (2 Phi(2) - 1)) = 13.2 ms.
    assert!(mean.abs() < 0.7, "mean {mean}");
    assert!((sd - 13.2).abs() < 0.5, "sd {sd}");
    // Packets 1 ms apart: without reorder, in order; with it, some overtake.
    for (reorder, want_in_order) in [(false, true), (true, false)] {
        let link = format!(
            r#""rate_bps": 10e6, "delay_ms": 50, "jitter": {{"std_ms": 15, "reorder": {reorder}}}"#
        );
        let t = run(&scenario(&link, 972, 1.0, 5.0), 3);
        balanced(&t);
        let seq = u64s(table(&t, "packets"), "seq");
        let in_order = seq.windows(2).all(|w| w[0] < w[1]);
        assert_eq!(in_order, want_in_order, "reorder {reorder}");
    }
}

#[test]
fn a_changing_run_is_repeatable() {
    let link = r#""rate_bps": [[0, 2e6], [1, 1e6]], "delay_ms": 20,
                  "jitter": {"std_ms": 5}, "outages": {"mean_up_s": 0.5, "mean_down_s": 0.05}"#;
    let s = scenario(link, 972, 2.0, 3.0);
    assert_eq!(run(&s, 5), run(&s, 5));
    assert_ne!(table(&run(&s, 5), "packets"), table(&run(&s, 6), "packets"));
}

/// A changing link whose schedule holds one rate is the fixed link by
/// another path: the same packets at the same times, the same drops and
/// the same RED average. RED ages its average over the transmitter's idle
/// periods, so this also checks that a changing link's idle period runs
/// from its last packet's last bit, not from the latest arrival or
/// capacity sample. Poisson arrivals, so that no arrival falls at the
/// instant a transmission ends (the two paths order that tie differently:
/// docs/models/links.md).
#[test]
fn a_one_step_schedule_runs_as_the_fixed_link() {
    let flows = r#"{"name": "f", "type": "poisson", "src": "a", "dst": "b", "payload_bytes": 472, "rate_bps": 7e5},
                   {"name": "g", "type": "poisson", "src": "a", "dst": "b", "payload_bytes": 972, "rate_bps": 5e5}"#;
    for queue in [
        r#"{"type": "red", "limit_packets": 40, "min_th": 3, "max_th": 12}"#,
        r#"{"type": "droptail", "limit_packets": 40}"#,
    ] {
        let runs: Vec<Vec<Table>> = [r#""rate_bps": 1e6"#, r#""rate_bps": [[0, 1e6]]"#]
            .iter()
            .map(|rate| {
                let s = format!(
                    r#"{{"duration_s": 20, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
                    "links": [{{"a": "a", "b": "b", {rate}, "delay_ms": 10, "queue": {queue}}}],
                    "flows": [{flows}], "measure": {{"packets": true}}}}"#
                );
                run(&s, 3)
            })
            .collect();
        for name in ["packets", "drops", "flows", "queues"] {
            let same = table(&runs[0], name) == table(&runs[1], name);
            assert!(same, "{queue}: the {name} tables differ");
        }
        let lost = u64s(table(&runs[0], "flows"), "lost");
        assert!(
            lost.iter().sum::<u64>() > 100,
            "the queue at work: {lost:?}"
        );
    }
}

/// Changes at one instant apply before a transmission at it: a packet
/// whose last bit would leave at 8 ms is lost when the link goes down at
/// 8 ms, and takes the delay that starts at 8 ms.
#[test]
fn a_change_at_a_packets_last_bit_applies_first() {
    // 1000 bytes at 1 Mbit/s from 0: the last bit at 8 ms.
    let link = r#""rate_bps": 1e6, "delay_ms": [[0, 10], [0.008, 30]]"#;
    let t = run(&scenario(link, 972, 1000.0, 0.5), 1);
    assert_eq!(u64s(table(&t, "packets"), "recv_ns"), [38_000_000]);
    let link = r#""rate_bps": 1e6, "delay_ms": 10, "outages": {"down_s": [[0.008, 0.1]]}"#;
    let t = run(&scenario(link, 972, 1000.0, 0.5), 1);
    let (sent, got, down) = balanced(&t);
    assert_eq!((sent, got, down), (1, 0, 1));
}

/// A trace link with nothing to carry does not wake at its
/// opportunities: a packet a second over 1 ms opportunities for 10 s
/// costs a few events per packet (and the capacity samples), not 10,000.
#[test]
fn an_idle_trace_link_sleeps_through_its_opportunities() {
    let trace = r#""trace": {"opportunities_ms": [1]}, "delay_ms": 5"#;
    let out = mediasim_engine::run_json(
        &scenario(trace, 972, 1000.0, 10.0),
        &Default::default(),
        &mut |_, _| true,
    )
    .expect("run");
    let (_, got, _) = balanced(&out.tables);
    assert_eq!(got, 10);
    let meta: serde_json::Value = serde_json::from_str(&out.meta_json).expect("json");
    let events = meta["events"].as_u64().expect("events");
    // 10 packets, 100 capacity samples of 100 ms.
    assert!(events < 300, "{events} events");
}

/// Capacity sampling stops at its row limit (limits.max_queue_sample_rows):
/// no rows past it, the flag set, and no further sampling events (a full
/// table does not keep the run waking every interval).
#[test]
fn capacity_sampling_stops_at_its_row_limit() {
    let link = r#""rate_bps": [[0, 1e6], [5, 2e6]], "delay_ms": 5"#;
    let s = scenario(link, 972, 1000.0, 10.0).replacen(
        r#""measure": {"packets": true}"#,
        r#""measure": {"packets": true, "capacity_interval_ms": 1},
           "limits": {"max_queue_sample_rows": 20}"#,
        1,
    );
    let out = mediasim_engine::run_json(&s, &Default::default(), &mut |_, _| true).expect("run");
    let (_, got, _) = balanced(&out.tables);
    assert_eq!(got, 10);
    assert_eq!(table(&out.tables, "link_capacity").rows(), 20);
    let meta: serde_json::Value = serde_json::from_str(&out.meta_json).expect("json");
    assert_eq!(meta["capacity_truncated"], true);
    // 10 packets and 20 samples of 1 ms (10,000 with sampling left on).
    let events = meta["events"].as_u64().expect("events");
    assert!(events < 200, "{events} events");
}
