//! RTP sessions in whole runs, against figures from their RFCs and the
//! scenario: the media rate, RTCP's interval and share (RFC 3550 6.2,
//! 6.3 and A.7), loss reports under AVPF (RFC 4585), and the frames,
//! per-packet feedback and playout of a call.

mod common;
use common::{f64s, run, table};
use mediasim_engine::measure::Table;

/// The value of `col` in the row of flow `flow` of table `tbl`.
fn value(t: &[Table], tbl: &str, flow: &str, col: &str) -> f64 {
    let r = table(t, tbl);
    let flows = r.get("flow").expect("a flow column");
    let i = (0..flows.len())
        .find(|&i| flows.str_at(i) == Some(flow))
        .unwrap_or_else(|| panic!("no {tbl} row for {flow}"));
    f64s(r, col)[i]
}

/// s -> r over 10 Mbit/s, 10 ms each way, for `duration_s`; one session
/// of `session` fields with members `members`.
fn session(duration_s: f64, link: &str, session: &str, members: &str) -> String {
    format!(
        r#"{{"duration_s": {duration_s}, "nodes": [{{"name": "s"}}, {{"name": "r"}}],
        "links": [{{"a": "s", "b": "r", "rate_bps": 1e7, "delay_ms": 10{link}}}],
        "rtp_sessions": [{{"name": "m", "transport": "unicast", {session}, "members": {members}}}]}}"#
    )
}

const SESSION: &str = r#""session_bw_bps": 1e5, "media_payload_bytes": 960"#;

/// 960-byte payloads are 1000 bytes on the wire (RTP 12, UDP 8, IPv4
/// 20): 12.5 packets a second at 100 kbit/s.
const PACKETS_PER_S: f64 = 12.5;

/// AVP (RFC 3550): two members of a low-rate session send RTCP at the 5 s
/// minimum interval (6.2), randomised and reconsidered to about that on
/// average (6.3.1, A.7); the media runs at the session rate; the sender
/// measures the round trip from the receiver's reports (6.4.1).
#[test]
fn avp_members_report_every_five_seconds_and_the_sender_measures_the_round_trip() {
    let duration_s = 400.0;
    let members =
        r#"[{"node": "s", "media": true, "profile": "avp"}, {"node": "r", "profile": "avp"}]"#;
    let t = run(&session(duration_s, "", SESSION, members), 1);
    // A member's row is its RTCP flow's.
    let at = |node: &str, col: &str| value(&t, "rtp", &format!("m/{node}/rtcp"), col);
    assert_eq!(at("s", "media_packets_sent"), duration_s * PACKETS_PER_S);
    assert_eq!(
        (
            at("s", "avpf"),
            at("s", "media_sender"),
            at("r", "media_sender")
        ),
        (0.0, 1.0, 0.0)
    );
    for node in ["s", "r"] {
        let (packets, bytes) = (at(node, "rtcp_packets"), at(node, "rtcp_bytes"));
        let n = duration_s / 5.0;
        assert!(packets > 0.9 * n && packets < 1.1 * n, "{node}: {packets}");
        assert_eq!(at(node, "regular_packets"), packets);
        assert_eq!(at(node, "rtcp_bps"), bytes * 8.0 / duration_s);
        assert_eq!(
            at(node, "rtcp_share_pct"),
            bytes * 8.0 / duration_s / 1e5 * 100.0
        );
        assert_eq!(at(node, "members"), 2.0);
    }
    // 10 ms each way and a report's serialisation: a little over 20 ms.
    let rtt = at("s", "rtt_s");
    assert!((0.020..0.0205).contains(&rtt), "{rtt}");
    assert!(
        at("r", "rtt_s").is_nan(),
        "no sender report to measure from"
    );
}

/// AVPF (RFC 4585) with three media packets lost on the link: without
/// AVP's minimum RTCP takes its 5% of the session (3550 6.2), split
/// evenly between the two members (the sender is half of them, over a
/// quarter); each loss goes back at once in an early packet (a
/// point-to-point session waits no dither, 4585 3.4), to reach the
/// sender one packet interval (80 ms: the loss shows when the next
/// arrives) and two one-way delays after the lost packet left.
#[test]
fn avpf_takes_five_percent_and_reports_each_loss_early() {
    let duration_s = 60.0;
    let loss = r#", "loss": {"type": "explicit", "packets": [{"flow": "m/s/rtp", "seq": 100},
        {"flow": "m/s/rtp", "seq": 200}, {"flow": "m/s/rtp", "seq": 300}]}"#;
    let members = r#"[{"node": "s", "media": true}, {"node": "r"}]"#;
    let t = run(&session(duration_s, loss, SESSION, members), 1);
    // A member's row is its RTCP flow's.
    let at = |node: &str, col: &str| value(&t, "rtp", &format!("m/{node}/rtcp"), col);
    let share = [at("s", "rtcp_share_pct"), at("r", "rtcp_share_pct")];
    assert!(share.iter().all(|s| (2.25..2.75).contains(s)), "{share:?}");
    assert!((4.75..5.25).contains(&(share[0] + share[1])), "{share:?}");
    let r = |col| at("r", col);
    assert_eq!(
        [
            r("fb_wanted"),
            r("fb_sent"),
            r("fb_sent_early"),
            r("early_packets")
        ],
        [3.0; 4]
    );
    assert_eq!(
        [r("fb_suppressed"), r("fb_discarded"), r("mwt_s")],
        [0.0; 3]
    );
    assert_eq!(r("regular_packets") + r("early_packets"), r("rtcp_packets"));
    assert_eq!(
        (at("s", "loss_reports"), at("s", "loss_reports_unplaced")),
        (3.0, 0.0)
    );
    let delay = at("s", "loss_report_delay_mean_s");
    assert!((0.100..0.102).contains(&delay), "{delay}");
}

/// A paced video call (RFC 8593's codec, 30 fps) with transport-wide
/// feedback every 50 ms and a fixed 100 ms playout delay, on a path it
/// does not fill: a report on every tick of a 50 ms grid from the first
/// packet (docs/models/media.md), each received; every frame played on
/// time but the last few, still in the buffer at the end.
#[test]
fn a_call_reports_every_interval_and_plays_every_frame_on_time() {
    let duration_s = 20.0;
    let members = r#"[{"node": "s", "media": true, "source": {"type": "synthetic", "fps": 30},
        "pacer": {}, "feedback": {"format": "twcc", "interval_ms": 50}},
        {"node": "r", "playout": {"delay_ms": 100}}]"#;
    let call = r#""session_bw_bps": 1e6, "media_payload_bytes": 1000"#;
    let t = run(&session(duration_s, "", call, members), 1);
    let media = |col| value(&t, "media", "m/s/rtp", col);
    let reports = media("feedback_sent");
    // Packets arrive between every two ticks (33 ms apart at most), so
    // every tick but those before the first packet and at the stop reports.
    assert!(
        reports <= duration_s / 0.050 && reports >= duration_s / 0.050 - 2.0,
        "{reports}"
    );
    // This run's count, which docs/models/media.md quotes.
    assert_eq!(reports, 398.0);
    assert_eq!(media("feedback_received"), reports);
    assert_eq!(
        media("feedback_bytes_received"),
        media("feedback_bytes_sent")
    );
    // Every packet reported received, but those after the last report.
    let sent = value(&t, "rtp", "m/s/rtcp", "media_packets_sent");
    let reported = media("packets_reported_received");
    assert!(
        reported <= sent && reported >= sent - 12.0,
        "{reported} of {sent}"
    );
    assert_eq!(media("packets_reported_lost"), 0.0);
    // 30 frames a second (with the codec's interval noise).
    let frames = media("frames_sent");
    assert!((590.0..=610.0).contains(&frames), "{frames}");
    let played = media("frames_played");
    assert!(
        played <= frames && played >= frames - 4.0,
        "{played} of {frames}"
    );
    assert_eq!(
        [media("frames_late"), media("frames_lost"), media("freezes")],
        [0.0; 3]
    );
    assert_eq!(media("playout_delay_mean_ms"), 100.0);
    assert_eq!(media("good_quality_pct"), 100.0);
    // The pacer holds a frame's packets a little (2.5 times the rate,
    // 5 ms ahead of it): a mean wait above 0 and under the longest.
    let (wait, longest) = (media("pacer_delay_mean_ms"), media("pacer_delay_max_ms"));
    assert!(
        wait > 0.0 && wait < longest && longest < 50.0,
        "{wait} {longest}"
    );
    // A frame's last packet is a one-way delay (10 ms) and its pacing after capture.
    let delay = media("frame_delay_mean_ms");
    assert!((10.0..30.0).contains(&delay), "{delay}");
}

/// A media sender under a rate controller: `fixed` at 100 kbit/s sends a
/// 1000-byte packet every 80 ms from 0, none at or after the session's
/// stop (30 s: 375 packets); TFRC, fed by the receiver's feedback (about
/// once a round trip) on a path without loss, climbs far past the
/// session's rate (RFC 5348 4.3: doubling per round trip, bounded by
/// twice what the receiver gets).
#[test]
fn a_controlled_sender_sends_at_its_controllers_rate() {
    let run_with = |cc: &str| {
        let members = format!(r#"[{{"node": "s", "media": true, "cc": {cc}}}, {{"node": "r"}}]"#);
        let stop = r#""session_bw_bps": 1e5, "media_payload_bytes": 960, "stop_s": 30"#;
        run(&session(40.0, "", stop, &members), 1)
    };
    let fixed = run_with(r#"{"type": "fixed", "rate_bps": 1e5}"#);
    assert_eq!(
        value(&fixed, "rtp", "m/s/rtcp", "media_packets_sent"),
        375.0
    );
    let tfrc = run_with(r#"{"type": "tfrc"}"#);
    let sent = value(&tfrc, "rtp", "m/s/rtcp", "media_packets_sent");
    let mean_bps = sent * 8000.0 / 30.0;
    assert!(mean_bps > 1e6 && mean_bps <= 1e7, "{mean_bps}");
    let fb = table(&tfrc, "flows");
    let flows = fb.get("flow").expect("flows");
    let row = (0..flows.len())
        .find(|&i| flows.str_at(i) == Some("m/r/fb"))
        .expect("the feedback flow");
    assert!(common::u64s(fb, "received")[row] > 100);
}
