//! GCC as a whole, fed feedback by hand: a path whose delay holds lets
//! the target grow; one whose delay grows (a queue filling) makes it
//! fall to beta times the received rate; losses cap it.

use super::*;
use crate::proto::feedback::PacketResult;

fn spec(estimator: GccEstimator) -> GccSpec {
    let name = match estimator {
        GccEstimator::Trendline => "trendline",
        GccEstimator::Kalman => "kalman",
    };
    serde_json::from_value(serde_json::json!({ "estimator": name })).expect("defaults")
}

/// Sends `rate_bps` of 1000-byte packets for `secs`, with feedback
/// every 50 ms; each packet's one-way delay is `delay_ms(t)`. Returns the
/// controller.
fn run(
    estimator: GccEstimator,
    secs: f64,
    rate_bps: Option<f64>,
    delay_ms: impl Fn(f64) -> f64,
    loss_every: Option<u64>,
) -> Gcc {
    let mut g = Gcc::new(&spec(estimator));
    g.start(SimTime::ZERO, usize::MAX);
    let mut t = 0.0;
    let mut seq = 0u64;
    let mut pending: Vec<PacketResult> = Vec::new();
    let mut next_fb = 0.05;
    while t < secs {
        let rate = rate_bps.unwrap_or_else(|| g.target_bps());
        let sent_at = SimTime::from_secs_f64(t);
        let lost = loss_every.is_some_and(|k| seq % k == k - 1);
        let arrival = SimTime::from_secs_f64(t + delay_ms(t) / 1e3);
        pending.push(PacketResult {
            seq,
            sent_at,
            bytes: 1000,
            received: !lost,
            arrival: (!lost).then_some(arrival),
            ecn: 0,
        });
        seq += 1;
        t += 8000.0 / rate;
        if t >= next_fb {
            let now = SimTime::from_secs_f64(next_fb + 0.05);
            g.on_packet_feedback(now, &pending);
            pending.clear();
            next_fb += 0.05;
        }
    }
    g
}

#[test]
fn with_a_steady_delay_the_target_grows_to_its_ceiling() {
    for e in [GccEstimator::Trendline, GccEstimator::Kalman] {
        let g = run(e, 30.0, None, |_| 50.0, None);
        assert_eq!(g.detector.overuses, 0, "{e:?}");
        assert_eq!(
            g.target_bps(),
            1.5e6,
            "{e:?}: multiplicative increase to max_bps"
        );
    }
}

/// Sending 1 Mbit/s while the delay grows 20 ms a second (a queue
/// filling at 2% over capacity... and more): overuse, and a decrease to
/// 0.85 of the received rate (about 1 Mbit/s less the growth).
#[test]
fn a_growing_delay_is_overuse_and_the_target_falls() {
    for e in [GccEstimator::Trendline, GccEstimator::Kalman] {
        let g = run(
            e,
            6.0,
            Some(1e6),
            |t| 50.0 + if t > 3.0 { 100.0 * (t - 3.0) } else { 0.0 },
            None,
        );
        assert!(g.detector.overuses >= 1, "{e:?}");
        assert!(g.aimd.decreases >= 1, "{e:?}");
        let r = g.received_bps().expect("a window");
        // The received rate is the sending rate slowed by the growth (1/1.1).
        assert!((r - 1e6 / 1.1).abs() < 0.05e6, "{e:?} {r}");
        assert!(
            g.aimd.a_hat_bps <= 0.85 * 1e6 * 1.01,
            "{e:?} {}",
            g.aimd.a_hat_bps
        );
    }
}

#[test]
fn heavy_loss_cuts_the_loss_based_rate() {
    // Every 4th packet lost (25%): each second As *= 1 - 0.125.
    let g = run(GccEstimator::Trendline, 5.0, Some(1e6), |_| 50.0, Some(4));
    let as_bps = g.value("loss_based_bps").unwrap();
    assert!(as_bps < 300e3 * 0.875f64.powi(3), "{as_bps}");
    assert_eq!(g.target_bps(), 150e3, "clamped at min_bps");
}

/// The overuse detector against aiortc's (a port of libwebrtc's), on the
/// stored sequence `python -m mediasim.validation.gcc_crosscheck` made:
/// the same usage after every group and the same adaptive threshold.
#[test]
fn the_detector_agrees_with_aiortc() {
    use super::detector::{Detector, Usage};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/gcc_references.json"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("stored figures"))
            .expect("json");
    let inputs = doc["inputs"].as_array().expect("inputs");
    let outputs = doc["outputs"].as_array().expect("outputs");
    assert_eq!(inputs.len(), outputs.len());
    // libwebrtc's gains, as aiortc has them.
    let mut d = Detector::new(12.5, 0.0087, 0.039, 10.0);
    let mut seen = [0u32; 3];
    for (i, (x, want)) in inputs.iter().zip(outputs).enumerate() {
        let offset = x["offset"].as_f64().unwrap();
        let deltas = x["deltas"].as_u64().unwrap() as u32;
        let m = offset * f64::from(deltas.min(60));
        let now = SimTime::from_millis(x["now_ms"].as_u64().unwrap());
        let got = d.detect(m, offset, x["send_ms"].as_f64().unwrap(), deltas, now);
        let want_usage = match want["usage"].as_str().unwrap() {
            "normal" => Usage::Normal,
            "underuse" => Usage::Underuse,
            _ => Usage::Overuse,
        };
        assert_eq!(got, want_usage, "group {i}");
        let t = want["threshold_ms"].as_f64().unwrap();
        assert!(
            (d.threshold_ms - t).abs() < 1e-9,
            "group {i}: {} against {t}",
            d.threshold_ms
        );
        seen[got as usize] += 1;
    }
    // The sequence exercises every state.
    assert!(seen.iter().all(|&n| n > 10), "{seen:?}");
}

/// The threshold's gains follow the estimator (libwebrtc's with the
/// trendline, the draft's with the Kalman filter) unless given.
#[test]
fn the_threshold_gains_follow_the_estimator() {
    let t = spec(GccEstimator::Trendline);
    assert_eq!((t.k_up(), t.k_down()), (0.0087, 0.039));
    let k = spec(GccEstimator::Kalman);
    assert_eq!((k.k_up(), k.k_down()), (0.01, 0.00018));
    let given: GccSpec =
        serde_json::from_value(serde_json::json!({"k_up": 0.02, "k_down": 0.001})).expect("spec");
    assert_eq!((given.k_up(), given.k_down()), (0.02, 0.001));
    // GCC reads the per-packet feedback; it has none of its own.
    assert!(!t.own_feedback());
}

fn errors(fields: serde_json::Value) -> String {
    errors_with(fields, true)
}

fn errors_with(fields: serde_json::Value, pacer: bool) -> String {
    let s: GccSpec = serde_json::from_value(fields).expect("spec");
    let media = CcMedia {
        packet_feedback: true,
        pacer,
        ..CcMedia::default()
    };
    let mut c = crate::scenario::check::Checker::default();
    s.validate("cc", media, &mut c);
    c.errs.iter().map(|e| format!("{e}\n")).collect()
}

/// `field` = `bad` is named; `field` = `good` passes.
fn named(field: &str, bad: serde_json::Value, good: serde_json::Value) {
    let text = errors(serde_json::json!({ field: bad }));
    assert!(
        text.contains(&format!("cc.{field}")),
        "{field} = {bad}: {text}"
    );
    assert_eq!(
        errors(serde_json::json!({ field: good })),
        "",
        "{field} = {good}"
    );
}

/// beta, the smoothing and chi are in (0, 1), open at both ends; eta and
/// the loss increase at least 1; loss_low at most loss_high.
#[test]
fn bad_fields_are_named() {
    assert_eq!(errors(serde_json::json!({})), "");
    for (field, bad, good) in [
        ("beta", 1.0, 0.999),
        ("beta", 0.0, 0.001),
        ("kalman_chi", 1.0, 0.5),
        ("eta", 0.999, 1.0),
        ("loss_increase", 0.9, 1.0),
    ] {
        named(field, bad.into(), good.into());
    }
    let text = errors(serde_json::json!({"loss_low": 0.2, "loss_high": 0.1}));
    assert!(text.contains("cc.loss_low"), "{text}");
    assert_eq!(
        errors(serde_json::json!({"loss_low": 0.1, "loss_high": 0.1})),
        ""
    );
    assert!(errors(serde_json::json!({"k_up": -0.1})).contains("cc.k_up"));
    // The wait between loss-based cuts and the window of its rises: 0
    // (none) up to the engine's bound on delays.
    for field in ["loss_decrease_interval_ms", "loss_increase_window_ms"] {
        for (x, ok) in [(0.0, true), (-1.0, false), (1e9, true), (1.1e9, false)] {
            let text = errors(serde_json::json!({ field: x }));
            assert_eq!(text.is_empty(), ok, "{field} {x}: {text}");
            assert!(ok || text.contains(&format!("cc.{field}")), "{text}");
        }
    }
}

/// The target's series starts at the start rate; each packet sent is
/// stamped with its number from 0 and counted; the named values read
/// the parts they name.
#[test]
fn sends_series_and_values() {
    let mut g = Gcc::new(&spec(GccEstimator::Trendline));
    let t0 = SimTime::from_millis(7);
    g.start(t0, usize::MAX);
    assert_eq!(g.rate_series(), vec![(t0, 300e3)]);
    let d = Departure {
        bytes: 1000,
        due: SimTime::ZERO,
        next_same_size: false,
    };
    let (s0, next) = g.on_send(t0, d);
    let (s1, _) = g.on_send(t0, d);
    assert_eq!((s0.seq, s1.seq, s0.sent_at), (0, 1, t0));
    // 8000 bits at 300 kbit/s.
    assert_eq!(next, t0 + SimTime::from_secs_f64(8000.0 / 300e3));
    assert_eq!(g.packets(), 2);
    assert_eq!(g.value("estimate_bps"), Some(300e3));
    assert_eq!(g.value("loss_based_bps"), Some(300e3));
    assert_eq!(g.value("threshold_ms"), Some(12.5));
    assert_eq!(g.value("decreases"), Some(0.0));
    assert_eq!(g.value("overuse_signals"), Some(0.0));
    assert_eq!(g.value("rtt_ms"), None, "no feedback yet");
    assert_eq!(g.value("nonsense"), None);
    // One feedback message with a 40 ms round trip.
    let r = PacketResult {
        seq: 0,
        sent_at: t0,
        bytes: 1000,
        received: true,
        arrival: Some(t0 + SimTime::from_millis(20)),
        ecn: 0,
    };
    g.on_packet_feedback(t0 + SimTime::from_millis(40), &[r]);
    let rtt = g.value("rtt_ms").expect("an RTT");
    assert!((rtt - 40.0).abs() < 1e-9, "{rtt}");
}

/// A message's losses count against the packets it reports (4 of 20:
/// p = 0.2); an RTCP feedback payload asks for no timer (GCC reads
/// per-packet feedback only).
#[test]
fn the_loss_fraction_is_of_the_packets_reported() {
    let mut g = Gcc::new(&spec(GccEstimator::Trendline));
    g.start(SimTime::ZERO, usize::MAX);
    let ms = SimTime::from_millis;
    let results: Vec<PacketResult> = (0..20)
        .map(|seq| {
            let lost = seq % 5 == 4;
            PacketResult {
                seq,
                sent_at: ms(seq),
                bytes: 1000,
                received: !lost,
                arrival: (!lost).then_some(ms(seq + 50)),
                ecn: 0,
            }
        })
        .collect();
    g.on_packet_feedback(ms(100), &results);
    assert!((g.loss.last_p - 0.2).abs() < 1e-12, "{}", g.loss.last_p);
    assert_eq!(g.on_feedback(ms(150), &Payload::NONE, ms(200)), None);
}

fn spec_with(fields: serde_json::Value) -> GccSpec {
    serde_json::from_value(fields).expect("spec")
}

fn result(seq: u64, sent_at: SimTime, bytes: u32, delay: SimTime) -> PacketResult {
    PacketResult {
        seq,
        sent_at,
        bytes,
        received: true,
        arrival: Some(sent_at + delay),
        ecn: 0,
    }
}

/// Probing (libwebrtc's start): the first cluster leaves at 3 x the start
/// rate once media is there, its five packets 8.89 ms apart (1000 bytes at
/// 900 kbit/s); through a path that carries it, its feedback sets the
/// delay-based estimate and the loss-based rate, so the target, to the
/// probe's rate. The second cluster (6 x) waits for the next media.
#[test]
fn a_probe_sets_the_target_to_what_the_path_carried() {
    let ms = SimTime::from_millis;
    let mut g = Gcc::new(&spec(GccEstimator::Trendline));
    g.start(SimTime::ZERO, usize::MAX);
    assert_eq!(g.probe(), Some(super::super::ProbeSend::WithMedia));
    let mut results = Vec::new();
    let mut t = ms(3);
    for seq in 0..5 {
        if let Some(super::super::ProbeSend::At(at)) = g.probe() {
            assert!(at >= t);
            t = at;
        }
        let d = Departure {
            bytes: 1000,
            due: t,
            next_same_size: false,
        };
        g.on_send(t, d);
        results.push(result(seq, t, 1000, ms(50)));
    }
    let gap = (results[1].sent_at - results[0].sent_at).as_secs_f64();
    assert!((gap - 8000.0 / 900e3).abs() < 1e-9, "{gap}");
    assert_eq!(g.probe(), Some(super::super::ProbeSend::WithMedia));
    g.on_packet_feedback(t + ms(60), &results);
    assert!((g.target_bps() - 900e3).abs() < 1.0, "{}", g.target_bps());
    assert!((g.value("estimate_bps").unwrap() - 900e3).abs() < 1.0);
    assert!((g.value("loss_based_bps").unwrap() - 900e3).abs() < 1.0);
    assert_eq!(g.value("probe_results"), Some(1.0));
    assert_eq!(g.value("probe_clusters"), Some(2.0));
}

/// Without probing nothing is probed, and the loss-based rate keeps its
/// own pace from the start.
#[test]
fn without_probing_there_is_no_probe_and_no_start_phase() {
    let ms = SimTime::from_millis;
    let mut g = Gcc::new(&spec_with(serde_json::json!({"probing": false})));
    g.start(SimTime::ZERO, usize::MAX);
    assert_eq!(g.probe(), None);
    g.aimd.set_estimate(ms(50), 1.2e6);
    g.on_packet_feedback(ms(100), &[result(0, ms(10), 1000, ms(50))]);
    assert!(g.target_bps() < 400e3, "{}", g.target_bps());
    assert_eq!(g.value("probe_clusters"), Some(0.0));
}

/// libwebrtc's start phase: for `start_phase_ms` after the first feedback,
/// while none reports a loss, the loss-based rate follows the delay-based
/// estimate up; after it, or once a loss is reported, it rises at its own
/// pace (1.08 times its least of the last second, plus 1 kbit/s).
#[test]
fn the_start_phase_lets_the_loss_based_rate_follow_the_estimate() {
    let ms = SimTime::from_millis;
    let fresh = || {
        let mut g = Gcc::new(&spec(GccEstimator::Trendline));
        g.start(SimTime::ZERO, usize::MAX);
        g.on_packet_feedback(ms(100), &[result(0, ms(10), 1000, ms(50))]);
        g
    };
    // Within the phase: followed.
    let mut g = fresh();
    g.aimd.set_estimate(ms(1000), 1.2e6);
    g.on_packet_feedback(ms(2099), &[result(1, ms(2000), 1000, ms(50))]);
    assert!(
        (g.target_bps() - 1.2e6).abs() < 0.01e6,
        "{}",
        g.target_bps()
    );
    // 2 s after the first feedback: the loss-based rate's own pace.
    let mut g = fresh();
    g.aimd.set_estimate(ms(1000), 1.2e6);
    g.on_packet_feedback(ms(2100), &[result(1, ms(2000), 1000, ms(50))]);
    assert!(g.target_bps() < 400e3, "{}", g.target_bps());
    // A loss reported: not followed, even within the phase.
    let mut g = fresh();
    g.aimd.set_estimate(ms(1000), 1.2e6);
    let lost: Vec<PacketResult> = (1..=20)
        .map(|s| PacketResult {
            received: s != 5,
            arrival: (s != 5).then_some(ms(1000 + s)),
            ..result(s, ms(990 + s), 1000, ms(10))
        })
        .collect();
    g.on_packet_feedback(ms(1100), &lost);
    assert!(g.loss.last_p > 0.0);
    assert!(g.target_bps() < 400e3, "{}", g.target_bps());
    // Its length is a parameter: 0 turns it off.
    let mut g = Gcc::new(&spec_with(serde_json::json!({"start_phase_ms": 0})));
    g.start(SimTime::ZERO, usize::MAX);
    g.aimd.set_estimate(ms(50), 1.2e6);
    g.on_packet_feedback(ms(100), &[result(0, ms(10), 1000, ms(50))]);
    assert!(g.target_bps() < 400e3, "{}", g.target_bps());
}

/// Probing's fields: the scales above 1 (the second may be 0: none), the
/// packets 1..=100, the duration and start phase in range; probing needs
/// the member's pacer.
#[test]
fn probing_fields_are_checked() {
    use serde_json::json;
    for (field, bad, good) in [
        ("probe_first_scale", json!(1.0), json!(2.0)),
        ("probe_second_scale", json!(0.5), json!(0.0)),
        ("probe_min_packets", json!(0), json!(1)),
        ("probe_min_packets", json!(101), json!(100)),
        ("probe_min_ms", json!(0.0), json!(1.0)),
        ("start_phase_ms", json!(-1.0), json!(0.0)),
    ] {
        named(field, bad, good);
    }
    let text = errors_with(json!({}), false);
    assert!(
        text.contains("cc.probing") && text.contains("pacer"),
        "{text}"
    );
    assert_eq!(errors_with(json!({"probing": false}), false), "");
}
