//! The RMTP applications in small trees: what each role reports, the
//! packets it sends, and its timers.

use crate::app::testing::{names, numbers, run_text};

/// Sender s, DR d, receivers r1 and r2 (links of 10 Mbit/s and 5 ms),
/// `nodes` extra fields of nodes by name, `session` extra session fields.
fn tree(session: &str, nodes: &[(&str, &str)], duration_s: f64) -> crate::RunOutput {
    let node = |n: &str| {
        let extra = nodes.iter().find(|x| x.0 == n).map_or("", |x| x.1);
        format!(r#"{{"name": "{n}"{extra}}}"#)
    };
    let link =
        |a: &str, b: &str| format!(r#"{{"a": "{a}", "b": "{b}", "rate_bps": 1e7, "delay_ms": 5}}"#);
    run_text(&format!(
        r#"{{"duration_s": {duration_s},
        "nodes": [{}, {}, {}, {}],
        "links": [{}, {}, {}],
        "rmtp_sessions": [{{"name": "m", "sender": "s",
            "subgroups": [{{"dr": "d", "receivers": ["r1", "r2"]}}]{session}}}],
        "measure": {{"series": true}}}}"#,
        node("s"),
        node("d"),
        node("r1"),
        node("r2"),
        link("s", "d"),
        link("d", "r1"),
        link("d", "r2"),
    ))
}

/// The rmtp table's `column` in the row of `flow`.
fn at(out: &crate::RunOutput, flow: &str, column: &str) -> f64 {
    let flows = names(out, "rmtp", "flow");
    let i = flows.iter().position(|f| f == flow).expect(flow);
    numbers(out, "rmtp", column)[i]
}

/// The flows table's `column` for `flow`, summed over its rows (one per
/// receiver of a multicast flow).
fn flow_sum(out: &crate::RunOutput, flow: &str, column: &str) -> (f64, usize) {
    let flows = names(out, "flows", "flow");
    let v = numbers(out, "flows", column);
    let rows: Vec<f64> = (0..flows.len())
        .filter(|&i| flows[i] == flow)
        .map(|i| v[i])
        .collect();
    (rows.iter().sum(), rows.len())
}

const RECEIVERS: [&str; 3] = ["m/d/hack", "m/r1/hack", "m/r2/hack"];

#[test]
fn a_lossless_tree_delivers_every_packet_once_under_either_dr_rule() {
    for rule in ["subgroup", "custody"] {
        let session = format!(r#", "stop_s": 20, "dr_acknowledges": "{rule}""#);
        let out = tree(&session, &[], 30.0);
        let v = |flow: &str, c: &str| at(&out, flow, c);
        assert_eq!(v("m/data", "role"), 0.0);
        assert_eq!(v("m/d/hack", "role"), 1.0);
        assert_eq!(v("m/r1/hack", "role"), 2.0);
        // One interval every 2 s up to the stop at 20 s: windows 1, 2, ...,
        // 10 (cwnd + 1 an interval from 1, at most Ws = 10).
        assert_eq!(v("m/data", "new_sent"), 55.0, "{rule}");
        assert_eq!(v("m/data", "cwnd_at_end"), 10.0);
        for c in [
            "retx_sent",
            "premature_retx",
            "final_buffer_at_end",
            "retx_queued_at_end",
        ] {
            assert_eq!(v("m/data", c), 0.0, "{rule} {c}");
        }
        // Every window is acknowledged before the next one leaves.
        assert_eq!(v("m/data", "final_buffer_peak"), 10.0);
        for r in RECEIVERS {
            for (c, want) in [
                ("delivered", 55.0),
                ("highest_received", 55.0),
                ("gaps_at_end", 0.0),
                ("waiting_at_end", 0.0),
                ("duplicates", 0.0),
                ("recovered", 0.0),
            ] {
                assert_eq!(v(r, c), want, "{rule} {r} {c}");
            }
            // Over the whole run from the session's start.
            assert!((v(r, "throughput_pps") - 55.0 / 30.0).abs() < 1e-12);
        }
        // The i-th packet of a window reaches the DR 5 ms and (i + 1)
        // transmissions of 500 bytes (0.4 ms each) after it left; a
        // receiver one more hop later (pipelined, no wait at the DR). The
        // mean i over windows of 1 to 10 is 3.
        assert!((v("m/d/hack", "delay_mean_s") - 0.0066).abs() < 1e-12);
        assert!((v("m/r1/hack", "delay_mean_s") - 0.012).abs() < 1e-12);
        // HACKs every 0.3 s (receivers) and 0.8 s (the DR) from a random
        // phase, none before the first packet.
        for (r, per_s) in [("m/r1/hack", 1.0 / 0.3), ("m/d/hack", 1.0 / 0.8)] {
            let want = per_s * 30.0;
            assert!((v(r, "hacks_sent") - want).abs() <= 1.0, "{r} {want}");
        }
        for c in ["local_retx", "dr_buffer_overflows", "dr_buffer_at_end"] {
            assert_eq!(v("m/d/hack", c), 0.0, "{c}");
        }
        assert_eq!(v("m/d/hack", "dr_buffer_peak"), 10.0);
        // On the wire: 500-byte data packets to each of the three; a HACK
        // with nothing missing is 44 bytes (IP, UDP, the RMTP header).
        assert_eq!(flow_sum(&out, "m/data", "sent"), (3.0 * 55.0, 3));
        assert_eq!(flow_sum(&out, "m/data", "sent_bytes").0, 3.0 * 55.0 * 500.0);
        assert_eq!(flow_sum(&out, "m/d/repair", "sent").0, 0.0);
        for r in ["m/r1/hack", "m/r2/hack"] {
            let (sent, _) = flow_sum(&out, r, "sent");
            assert_eq!(sent, v(r, "hacks_sent"));
            assert_eq!(flow_sum(&out, r, "sent_bytes").0, 44.0 * sent);
        }
        let (sent, _) = flow_sum(&out, "m/d/hack", "sent");
        assert_eq!(sent, v("m/d/hack", "hacks_sent"));
        assert!(flow_sum(&out, "m/d/hack", "sent_bytes").0 >= 44.0 * sent);
        // The window's series: one point an interval while it changes.
        let vars = names(&out, "rmtp_series", "var");
        let vals = numbers(&out, "rmtp_series", "value");
        let cwnd: Vec<f64> = (0..vars.len())
            .filter(|&i| vars[i] == "cwnd")
            .map(|i| vals[i])
            .collect();
        assert_eq!(
            cwnd[..10],
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
        );
    }
}

const LOSS_20: &str = r#", "receiver_loss": {"type": "packet", "rate": 0.2}"#;

/// The packets the sender sends: its windows' sum, new and retransmitted
/// alike (retransmissions take window slots).
fn sender_sent(out: &crate::RunOutput) -> f64 {
    at(out, "m/data", "new_sent") + at(out, "m/data", "retx_sent")
}

#[test]
fn the_window_opens_by_one_or_doubles_from_its_initial_size() {
    // Ten intervals from the start at 1 s to the stop at 20 s; a fifth of
    // r1's packets lost, too few to close the window (CongA = 20).
    for (extra, windows) in [
        ("", vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]),
        (
            r#", "window_growth": "doubling""#,
            vec![1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0],
        ),
        (
            r#", "initial_window": 3"#,
            vec![3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 10.0, 10.0],
        ),
        (
            r#", "ws": 4"#,
            vec![1.0, 2.0, 3.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0],
        ),
    ] {
        let session = format!(r#", "start_s": 1, "stop_s": 20{extra}"#);
        let out = tree(&session, &[("r1", LOSS_20)], 30.0);
        assert_eq!(sender_sent(&out), windows.iter().sum::<f64>(), "{extra}");
        // The series: an interval every 2 s from the start, to the end of
        // the run (repairs go on after the stop).
        let vals = numbers(&out, "rmtp_series", "value");
        let times = numbers(&out, "rmtp_series", "time_ns");
        assert_eq!(vals[..10], windows[..], "{extra}");
        let want: Vec<f64> = (0..15).map(|k| (1.0 + 2.0 * k as f64) * 1e9).collect();
        assert_eq!(times, want);
        // Everything sent reaches every member in the end, and the
        // throughput counts from the session's start.
        let new = at(&out, "m/data", "new_sent");
        for r in RECEIVERS {
            assert_eq!(at(&out, r, "delivered"), new, "{extra} {r}");
            let tp = at(&out, r, "throughput_pps");
            assert!((tp - new / 29.0).abs() < 1e-12, "{extra} {r}");
        }
    }
}

#[test]
fn a_receivers_losses_are_repaired_by_its_dr() {
    for rule in ["subgroup", "custody"] {
        let session = format!(r#", "stop_s": 20, "dr_acknowledges": "{rule}""#);
        let out = tree(&session, &[("r1", LOSS_20)], 30.0);
        let v = |flow: &str, c: &str| at(&out, flow, c);
        let local = v("m/d/hack", "local_retx");
        let retx = v("m/data", "retx_sent");
        assert!(local > 5.0, "{rule}: {local}");
        assert_eq!(flow_sum(&out, "m/d/repair", "sent"), (2.0 * local, 2));
        assert_eq!(flow_sum(&out, "m/retx", "sent"), (3.0 * retx, 3));
        // r1 gets its losses back; r2, which loses nothing, receives every
        // repair and retransmission as a duplicate, the DR every
        // retransmission.
        assert_eq!(v("m/r1/hack", "delivered"), v("m/data", "new_sent"));
        let recovered = v("m/r1/hack", "recovered");
        assert!(recovered > 0.0 && recovered <= local + retx, "{rule}");
        assert_eq!(v("m/r2/hack", "duplicates"), local + retx, "{rule}");
        assert_eq!(v("m/d/hack", "duplicates"), retx, "{rule}");
        // Repairs make r1 wait: its delay is above r2's.
        assert!(v("m/r1/hack", "delay_mean_s") > v("m/r2/hack", "delay_mean_s") + 0.05);
        // A HACK from r1 with a gap carries a bitmap past 44 bytes.
        let (sent, _) = flow_sum(&out, "m/r1/hack", "sent");
        assert!(flow_sum(&out, "m/r1/hack", "sent_bytes").0 > 44.0 * sent);
        // Under custody the DR answers for what it holds: the sender has
        // nothing to resend.
        if rule == "custody" {
            assert_eq!(retx, 0.0);
        }
    }
}

#[test]
fn what_a_full_dr_buffer_cannot_hold_the_sender_repairs() {
    let session = r#", "stop_s": 20, "dr_acknowledges": "custody", "dr_buffer_packets": 2"#;
    let out = tree(session, &[("r1", LOSS_20)], 30.0);
    let v = |flow: &str, c: &str| at(&out, flow, c);
    assert!(v("m/d/hack", "dr_buffer_overflows") > 0.0);
    assert_eq!(v("m/d/hack", "dr_buffer_peak"), 2.0);
    assert!(v("m/d/hack", "dr_buffer_at_end") <= 2.0);
    assert!(v("m/data", "retx_sent") > 0.0);
    assert_eq!(v("m/r1/hack", "delivered"), v("m/data", "new_sent"));
}

#[test]
fn a_drs_own_losses_are_repaired_by_the_sender() {
    let session = r#", "stop_s": 20, "dr_acknowledges": "custody""#;
    let out = tree(session, &[("d", LOSS_20)], 30.0);
    let v = |flow: &str, c: &str| at(&out, flow, c);
    let retx = v("m/data", "retx_sent");
    assert!(v("m/d/hack", "recovered") > 0.0);
    assert!(retx >= v("m/d/hack", "recovered"));
    for r in RECEIVERS {
        assert_eq!(v(r, "delivered"), v("m/data", "new_sent"), "{r}");
        assert_eq!(v(r, "gaps_at_end"), 0.0);
    }
    // The receivers had them all: the retransmissions are duplicates there.
    assert!(v("m/r1/hack", "duplicates") >= retx);
}

#[test]
fn data_and_hacks_have_their_wire_headers() {
    use super::apps::{RmtpData, RmtpHack};
    use crate::net::AppPayload;
    use crate::proto::rmtp::HackReport;
    use crate::wire::rmtp::{RmtpHeader, DATA, HACK, HEADER_LEN, REPAIR};
    let mut p = crate::app::testing::udp_template(100).make(42);
    p.created_at = crate::sim::SimTime::from_millis(1234);
    for (retx, kind) in [(false, DATA), (true, REPAIR)] {
        let mut buf = [0u8; HEADER_LEN];
        RmtpData { retx }.emit(&p, p.created_at, &mut buf);
        let h = RmtpHeader::parse(&buf).expect("a header");
        assert_eq!((h.kind, h.seq, h.word), (kind, 42, 1234));
    }
    // Has 10 and 12 of [10, 14): base 11, four bits wide.
    let report = HackReport::from_fn(10, 14, |s| s == 10 || s == 12);
    let hack = RmtpHack { child: 3, report };
    let mut buf = [0u8; HEADER_LEN + 1];
    hack.emit(&p, p.created_at, &mut buf);
    let h = RmtpHeader::parse(&buf).expect("a header");
    assert_eq!((h.kind, h.child, h.seq, h.word), (HACK, 3, 11, 3));
    // 11 missing, 12 held, 13 missing: bits 0, 1, 0, most significant first.
    assert_eq!(buf[HEADER_LEN], 0b0100_0000);
    // A buffer too short for the header is left alone.
    let mut short = [7u8; HEADER_LEN - 1];
    RmtpData { retx: false }.emit(&p, p.created_at, &mut short);
    hack.emit(&p, p.created_at, &mut short);
    assert_eq!(short, [7u8; HEADER_LEN - 1]);
}

/// The errors of the tree of `tree` with `session` replacing the session's
/// fields after its name and sender (and `links` its links), as
/// "path: message" lines; checked as `run` checks, construction included.
fn errors_of(session: &str, links: &str) -> Vec<String> {
    let text = format!(
        r#"{{"duration_s": 30,
        "nodes": [{{"name": "s"}}, {{"name": "d"}}, {{"name": "e"}}, {{"name": "r1"}}, {{"name": "r2"}}],
        "links": [{links}],
        "rmtp_sessions": [{{"name": "m", "sender": "s"{session}}}]}}"#
    );
    match crate::scenario::validate::check_all(&text) {
        Ok(_) => Vec::new(),
        Err(errs) => errs.iter().map(ToString::to_string).collect(),
    }
}

const LINKS: &str = r#"{"a": "s", "b": "d", "rate_bps": 1e6, "delay_ms": 5},
    {"a": "s", "b": "e", "rate_bps": 1e6, "delay_ms": 5},
    {"a": "d", "b": "r1", "rate_bps": 1e6, "delay_ms": 5},
    {"a": "e", "b": "r2", "rate_bps": 1e6, "delay_ms": 5}"#;
const GROUPS: &str =
    r#", "subgroups": [{"dr": "d", "receivers": ["r1"]}, {"dr": "e", "receivers": ["r2"]}]"#;

#[test]
fn a_sessions_values_are_checked_at_their_bounds() {
    let check = |fields: &str| errors_of(&format!("{GROUPS}{fields}"), LINKS);
    // The bounds themselves are allowed.
    for ok in [
        "",
        r#", "data_packet_bytes": 44"#,
        r#", "data_packet_bytes": 65535"#,
        r#", "send_interval_ms": 0.001, "rcv_hack_interval_ms": 1e-3"#,
        r#", "dr_hack_interval_ms": 0.001, "repair_interval_ms": 0.001"#,
        r#", "ws": 1, "initial_window": 1, "cong_a": 30"#,
        r#", "ws": 5, "initial_window": 5, "cong_a": 0, "cong_c": 0"#,
        r#", "dr_repair_holdoff_ms": 0, "start_s": 0, "stop_s": 1e-9"#,
        r#", "start_s": 29.9, "stop_s": 40"#,
    ] {
        assert_eq!(check(ok), Vec::<String>::new(), "{ok}");
    }
    let p = "rmtp_sessions[0]";
    // Zero is not positive, and that is all that is said of it.
    assert_eq!(
        check(r#", "send_interval_ms": 0"#),
        [format!(
            "{p}.send_interval_ms: must be a positive number (got 0)"
        )]
    );
    for (fields, path, says) in [
        (
            r#", "data_packet_bytes": 43"#,
            "data_packet_bytes",
            "44..=65535",
        ),
        (
            r#", "data_packet_bytes": 65536"#,
            "data_packet_bytes",
            "44..=65535",
        ),
        (r#", "send_interval_ms": 0"#, "send_interval_ms", "positive"),
        (
            r#", "rcv_hack_interval_ms": 0.0009"#,
            "rcv_hack_interval_ms",
            "at least 1 us",
        ),
        (
            r#", "dr_hack_interval_ms": 1e12"#,
            "dr_hack_interval_ms",
            "at most",
        ),
        (
            r#", "repair_interval_ms": -1"#,
            "repair_interval_ms",
            "positive",
        ),
        // The repair round defaults to the receivers' HACK period.
        (
            r#", "rcv_hack_interval_ms": -1"#,
            "repair_interval_ms",
            "positive",
        ),
        (
            r#", "dr_repair_holdoff_ms": -1"#,
            "dr_repair_holdoff_ms",
            "non-negative",
        ),
        (
            r#", "dr_repair_holdoff_ms": 1e12"#,
            "dr_repair_holdoff_ms",
            "at most",
        ),
        (r#", "ws": 0, "initial_window": 0"#, "ws", "at least 1"),
        (r#", "initial_window": 0"#, "initial_window", "at least 1"),
        (
            r#", "ws": 4, "initial_window": 5"#,
            "initial_window",
            "at most ws = 4 (got 5)",
        ),
        (
            r#", "cong_a": 31"#,
            "cong_a",
            "at most cong_c = 30 (got 31)",
        ),
        (r#", "start_s": -1"#, "start_s", "non-negative"),
        (r#", "start_s": 30"#, "start_s", "before the end of the run"),
        (
            r#", "start_s": 2, "stop_s": 2"#,
            "stop_s",
            "after start_s = 2",
        ),
    ] {
        let e = check(fields);
        let want = format!("{p}.{path}: ");
        assert!(
            e.iter().any(|e| e.starts_with(&want) && e.contains(says)),
            "{fields}: {e:?}"
        );
    }
}

#[test]
fn members_roles_and_the_dr_tree_are_checked() {
    let p = "rmtp_sessions[0]";
    for (session, want) in [
        (
            r#", "subgroups": []"#.to_string(),
            format!("{p}.subgroups: a session needs at least one DR"),
        ),
        (
            r#", "subgroups": [{"dr": "d", "receivers": ["r1", "d"]}]"#.into(),
            format!("{p}.subgroups[0].receivers[1]: \"d\" already has a role in this session"),
        ),
        (
            r#", "subgroups": [{"dr": "s"}]"#.into(),
            format!("{p}.subgroups[0].dr: \"s\" already has a role in this session"),
        ),
        (
            r#", "subgroups": [{"dr": "d", "parent": "r1"}]"#.into(),
            format!("{p}.subgroups[0].parent: \"r1\" is not a DR of this session"),
        ),
        (
            r#", "subgroups": [{"dr": "d", "parent": "e"}, {"dr": "e", "parent": "d"}]"#.into(),
            format!("{p}.subgroups[0].parent: DR parents form a cycle"),
        ),
        (
            r#", "subgroups": [{"dr": "d", "parent": "d"}]"#.into(),
            format!("{p}.subgroups[0].parent: DR parents form a cycle"),
        ),
    ] {
        let e = errors_of(&session, LINKS);
        assert!(e.contains(&want), "{session}: {e:?}");
    }
    // A chain of DRs is a tree: allowed.
    let chain = r#", "subgroups": [{"dr": "d"}, {"dr": "e", "parent": "d", "receivers": ["r2"]}]"#;
    assert_eq!(errors_of(chain, LINKS), Vec::<String>::new());
    let e = errors_of(r#", "subgroups": [{"dr": "x"}]"#, LINKS);
    assert!(
        e.iter()
            .any(|e| e.starts_with(&format!("{p}.subgroups[0].dr: ")) && e.contains("\"x\"")),
        "{e:?}"
    );
}

#[test]
fn members_the_channels_cannot_reach_are_named() {
    // Without the link from e to r2, r2 is reached neither by the data
    // nor by its DR's repairs, and cannot send its HACKs to e.
    let links = r#"{"a": "s", "b": "d", "rate_bps": 1e6, "delay_ms": 5},
        {"a": "s", "b": "e", "rate_bps": 1e6, "delay_ms": 5},
        {"a": "d", "b": "r1", "rate_bps": 1e6, "delay_ms": 5}"#;
    let e = errors_of(GROUPS, links);
    let p = "rmtp_sessions[0]";
    for want in [
        format!("{p}.subgroups: \"r2\" is unreachable from \"s\""),
        format!("{p}.subgroups[1]: \"r2\" is unreachable from \"e\""),
    ] {
        assert!(e.contains(&want), "{want}: {e:?}");
    }
    assert!(
        e.iter().any(
            |e| e.starts_with(&format!("{p}.subgroups[1].receivers[0]: "))
                && e.contains("from \"r2\" to \"e\"")
        ),
        "{e:?}"
    );
}

#[test]
fn a_member_that_has_received_nothing_sends_no_hack() {
    // r2 and then the DR lose every packet: nothing to acknowledge, so no
    // HACK, while the others report every period.
    let all = r#", "receiver_loss": {"type": "packet", "rate": 1.0}"#;
    let out = tree(r#", "stop_s": 10"#, &[("r2", all)], 20.0);
    assert_eq!(at(&out, "m/r2/hack", "hacks_sent"), 0.0);
    assert_eq!(at(&out, "m/r2/hack", "highest_received"), 0.0);
    assert!(at(&out, "m/r1/hack", "hacks_sent") >= 20.0 / 0.3 - 1.0);
    let out = tree(r#", "stop_s": 10"#, &[("d", all)], 20.0);
    assert_eq!(at(&out, "m/d/hack", "hacks_sent"), 0.0);
    assert_eq!(flow_sum(&out, "m/d/hack", "sent").0, 0.0);
    assert!(at(&out, "m/r1/hack", "hacks_sent") >= 20.0 / 0.3 - 1.0);
}

#[test]
fn a_drs_hacks_and_repairs_keep_their_own_periods() {
    // HACKs every 100 ms from within the first 100 ms; repair rounds
    // every 10 s.
    let session = r#", "stop_s": 20, "dr_hack_interval_ms": 100, "repair_interval_ms": 10000"#;
    let out = tree(session, &[("r1", LOSS_20)], 30.0);
    let hacks = at(&out, "m/d/hack", "hacks_sent");
    assert!((hacks - 300.0).abs() <= 1.0, "{hacks}");
    // At most three rounds in 30 s, each repairing at most what r1 has
    // lost since the last (a fifth of 55 packets, and the sender's
    // retransmissions as well): r1 gets them back all the same.
    let local = at(&out, "m/d/hack", "local_retx");
    assert!(local > 0.0 && local <= 30.0, "{local}");
}

#[test]
fn at_the_end_a_receiver_holds_what_it_got_past_its_gaps() {
    // The run ends 50 ms after the last window (20 s), before the repair
    // of r1's latest losses: r1 has gaps, and packets past them waiting.
    let out = tree("", &[("r1", LOSS_20)], 20.05);
    let v = |c: &str| at(&out, "m/r1/hack", c);
    let (delivered, waiting, gaps) = (v("delivered"), v("waiting_at_end"), v("gaps_at_end"));
    assert!(waiting > 0.0 && gaps > 0.0, "{waiting} {gaps}");
    assert_eq!(delivered + waiting + gaps, v("highest_received"));
    assert_eq!(v("highest_received"), at(&out, "m/data", "new_sent"));
    // r2 lost nothing: everything it got is delivered.
    assert_eq!(
        at(&out, "m/r2/hack", "delivered"),
        at(&out, "m/data", "new_sent")
    );
}

#[test]
fn the_window_series_is_bounded_by_the_runs_limit() {
    let text = r#"{"duration_s": 30, "nodes": [{"name": "s"}, {"name": "d"}],
        "links": [{"a": "s", "b": "d", "rate_bps": 1e7, "delay_ms": 5}],
        "rmtp_sessions": [{"name": "m", "sender": "s", "subgroups": [{"dr": "d"}]}],
        "measure": {"series": true}, "limits": {"max_series_rows": 4}}"#;
    let out = run_text(text);
    assert_eq!(numbers(&out, "rmtp_series", "value"), [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn a_lost_tail_is_repaired_once_the_stream_has_been_quiet_two_intervals_and_the_holdoff() {
    // r1 loses the last packet (54, sent at 18 s): nothing after it shows
    // the gap, so the DR, which holds it (custody: the sender does not
    // resend it), repairs it once no new data has come for 2 x 2 s + 1 s,
    // at r1's first HACK after about 23 s.
    let lose =
        r#", "receiver_loss": {"type": "explicit", "packets": [{"flow": "m/data", "seq": 54}]}"#;
    let session = r#", "stop_s": 20, "dr_acknowledges": "custody", "dr_repair_holdoff_ms": 1000"#;
    for (end_s, delivered) in [(22.9, 54.0), (24.0, 55.0)] {
        let out = tree(session, &[("r1", lose)], end_s);
        assert_eq!(at(&out, "m/data", "new_sent"), 55.0);
        assert_eq!(at(&out, "m/data", "retx_sent"), 0.0);
        assert_eq!(at(&out, "m/r1/hack", "delivered"), delivered, "{end_s}");
        assert_eq!(at(&out, "m/r2/hack", "delivered"), 55.0);
    }
}

/// A sender with DRs d and e and receivers r1 (d's) and r2 (e's) as in
/// `LINKS`, and `subgroups`; `nodes` extra node fields by name.
fn two_groups(subgroups: &str, nodes: &[(&str, &str)]) -> crate::RunOutput {
    let node = |n: &str| {
        let extra = nodes.iter().find(|x| x.0 == n).map_or("", |x| x.1);
        format!(r#"{{"name": "{n}"{extra}}}"#)
    };
    let links = LINKS.replace("1e6", "1e7");
    run_text(&format!(
        r#"{{"duration_s": 30,
        "nodes": [{}, {}, {}, {}, {}],
        "links": [{links}],
        "rmtp_sessions": [{{"name": "m", "sender": "s", "stop_s": 20,
            "dr_acknowledges": "custody", "subgroups": {subgroups}}}]}}"#,
        node("s"),
        node("d"),
        node("e"),
        node("r1"),
        node("r2"),
    ))
}

#[test]
fn each_child_of_the_sender_or_of_a_dr_reports_in_its_own_place() {
    // A fifth of e's packets lost: the sender keeps e's report apart from
    // d's (d has everything) and resends what e lacks, until e's subgroup
    // has it all. Two children reporting in one place would leave the
    // other place empty: nothing acknowledged by all, buffers never
    // emptied.
    let loss = [("e", LOSS_20)];
    let side_by_side = r#"[{"dr": "d", "receivers": ["r1"]}, {"dr": "e", "receivers": ["r2"]}]"#;
    // e under d: d's children are r1 (0) and e (1).
    let nested =
        r#"[{"dr": "d", "receivers": ["r1"]}, {"dr": "e", "receivers": ["r2"], "parent": "d"}]"#;
    for groups in [side_by_side, nested] {
        let out = two_groups(groups, &loss);
        let new = at(&out, "m/data", "new_sent");
        assert!(at(&out, "m/e/hack", "recovered") > 0.0, "{groups}");
        for r in ["m/d/hack", "m/e/hack", "m/r1/hack", "m/r2/hack"] {
            assert_eq!(at(&out, r, "delivered"), new, "{groups} {r}");
        }
        // Every child's reports reached their own place: in the end the
        // sender and the DRs hold nothing, as every child has everything.
        for c in ["final_buffer_at_end", "retx_queued_at_end"] {
            assert_eq!(at(&out, "m/data", c), 0.0, "{groups} {c}");
        }
        for dr in ["m/d/hack", "m/e/hack"] {
            assert_eq!(at(&out, dr, "dr_buffer_at_end"), 0.0, "{groups} {dr}");
        }
    }
    // Nested, e's repairs come from d's buffer, not from the sender.
    let out = two_groups(nested, &loss);
    assert_eq!(at(&out, "m/data", "retx_sent"), 0.0);
    assert!(at(&out, "m/d/hack", "local_retx") > 0.0);
}

#[test]
fn sessions_on_the_same_nodes_use_their_own_ports() {
    let session = |name: &str| {
        format!(
            r#"{{"name": "{name}", "sender": "s", "stop_s": 5, "subgroups": [{{"dr": "d", "receivers": ["r1"]}}]}}"#
        )
    };
    let text = format!(
        r#"{{"duration_s": 10, "nodes": [{{"name": "s"}}, {{"name": "d"}}, {{"name": "r1"}}],
        "links": [{{"a": "s", "b": "d", "rate_bps": 1e7, "delay_ms": 5}},
                  {{"a": "d", "b": "r1", "rate_bps": 1e7, "delay_ms": 5}}],
        "rmtp_sessions": [{}, {}, {}]}}"#,
        session("a"),
        session("b"),
        session("c")
    );
    let out = run_text(&text);
    // Three windows each (1 + 2 + 3), every one delivered to its own
    // session's members only.
    for s in ["a", "b", "c"] {
        assert_eq!(at(&out, &format!("{s}/data"), "new_sent"), 6.0);
        for m in ["d", "r1"] {
            let flow = format!("{s}/{m}/hack");
            assert_eq!(at(&out, &flow, "delivered"), 6.0, "{flow}");
            assert_eq!(at(&out, &flow, "duplicates"), 0.0, "{flow}");
        }
    }
}
