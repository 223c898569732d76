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
