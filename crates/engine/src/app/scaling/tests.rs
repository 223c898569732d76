//! The media-scaling sender driven alone with a scripted controller:
//! MM_APP's intervals and their change at a new level, the level a rate
//! names, MPEG_APP's frames per scale with fragments and DSCP, the stop
//! rule, the controller's timer, and the time-weighted mean scale.

use super::apps::{Media, ScalingSource};
use super::policy::{place_in_gops, FrameType, SCALES};
use super::{MediaScalingSpec, ScalingApp};
use crate::app::testing::{drive, value, ScriptCc};
use crate::app::{App, PacketTemplate, StopRule};
use crate::net::{Dest, Packet, Payload};
use crate::sim::SimTime;

const RATES: [f64; SCALES] = [100e3, 200e3, 300e3, 400e3, 500e3];

fn ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}

fn tpl() -> PacketTemplate {
    PacketTemplate::session_udp(3, Dest::Node(1), 6000, 0)
}

fn mm(
    stop: StopRule,
    rate_bps: f64,
) -> (
    ScalingSource,
    std::sync::Arc<std::sync::Mutex<crate::app::testing::Script>>,
) {
    let (cc, script) = ScriptCc::boxed(rate_bps);
    let media = Media::Mm {
        rates_bps: RATES,
        packet_bytes: 1000,
    };
    (ScalingSource::new(tpl(), media, stop, cc, RATES), script)
}

fn until(ms_: u64) -> StopRule {
    StopRule {
        stop: ms(ms_),
        max_packets: None,
    }
}

fn times(sent: &[(SimTime, Packet)]) -> Vec<u64> {
    sent.iter().map(|(t, _)| t.as_nanos() / 1_000_000).collect()
}

/// A rate names the highest level whose rate is within it: 250 kbit/s
/// is level 1 (200), exactly 300 level 2, below 100 level 0, above 500
/// level 4. MM_APP sends 1000-byte packets at the level's interval (40 ms
/// at 200 kbit/s).
#[test]
fn a_rate_names_the_highest_level_within_it() {
    for (rate, level, gap) in [(250e3, 1, 40), (300e3, 2, 26), (50e3, 0, 80), (9e6, 4, 16)] {
        let (mut src, _) = mm(until(100), rate);
        let sent = drive(&mut src, ms(100), |_| {});
        let st = src.stats(ms(100)).unwrap();
        assert_eq!(value(&st, "final_scale"), level as f64, "{rate}");
        let t = times(&sent);
        assert_eq!(t[1] - t[0], gap, "{rate}: {t:?}");
        assert!(sent.iter().all(|(_, p)| p.size_bytes == 1000));
    }
}

/// A controller that names its level is followed (capped at the top
/// scale); a change reschedules the next frame one new interval after the
/// last one sent, and the old timer is ignored.
#[test]
fn mm_follows_a_named_level_from_the_last_packet() {
    let (mut src, script) = mm(until(1000), 0.0);
    script.lock().unwrap().level = Some(0);
    // Level 0: packets at 0, 80, 160 ms. Feedback at 170 ms names level
    // 3 (400 kbit/s, 20 ms): the next packet at max(160 + 20, 170) = 180,
    // then every 20 ms; the timer for 240 ms is stale.
    let mut out = Vec::new();
    let mut sent = Vec::new();
    src.on_start(ms(0), &mut out);
    let mut timers = Vec::new();
    let mut collect =
        |now: SimTime, out: &mut Vec<crate::app::Action>, timers: &mut Vec<(SimTime, u64)>| {
            for a in out.drain(..) {
                match a {
                    crate::app::Action::Send(p) => sent.push((now, p)),
                    crate::app::Action::Timer { at, token } => timers.push((at, token)),
                }
            }
        };
    collect(ms(0), &mut out, &mut timers);
    for t in [80, 160] {
        let (at, token) = timers.remove(0);
        assert_eq!(at, ms(t));
        src.on_timer(at, token, &mut out);
        collect(at, &mut out, &mut timers);
    }
    script.lock().unwrap().level = Some(3);
    src.on_packet(ms(170), &fb(), &mut out);
    collect(ms(170), &mut out, &mut timers);
    // The stale timer (240 ms, the old generation) sends nothing.
    let (stale, new): (Vec<_>, Vec<_>) = timers.drain(..).partition(|t| t.0 == ms(240));
    assert_eq!(stale.len(), 1);
    src.on_timer(ms(240), stale[0].1, &mut out);
    assert!(out.is_empty(), "a stale timer sends nothing");
    assert_eq!(new.len(), 1);
    assert_eq!(new[0].0, ms(180));
    src.on_timer(ms(180), new[0].1, &mut out);
    collect(ms(180), &mut out, &mut timers);
    assert_eq!(
        timers.iter().map(|t| t.0).collect::<Vec<_>>(),
        vec![ms(200)]
    );
    assert_eq!(times(&sent), vec![0, 80, 160, 180]);
    // Level 9 is capped at the top scale.
    script.lock().unwrap().level = Some(9);
    src.on_packet(ms(190), &fb(), &mut out);
    let st = src.stats(ms(190)).unwrap();
    assert_eq!(value(&st, "final_scale"), 4.0);
}

fn fb() -> Packet {
    let mut p = tpl().make(0);
    p.app = Payload::new(crate::proto::cc::scale::ScaleRequest {
        scale: 0,
        sent_at: SimTime::ZERO,
    });
    p
}

/// The mean scale weighs each scale by its time: scale 2 for 400 ms,
/// then 4 until 1 s: (2 x 0.4 + 4 x 0.6) / 1 = 3.2.
#[test]
fn the_mean_scale_is_weighted_by_time() {
    let (mut src, script) = mm(until(5000), 0.0);
    script.lock().unwrap().level = Some(2);
    let mut out = Vec::new();
    src.on_start(ms(0), &mut out);
    script.lock().unwrap().level = Some(4);
    src.on_packet(ms(400), &fb(), &mut out);
    let st = src.stats(ms(1000)).unwrap();
    assert!((value(&st, "mean_scale") - 3.2).abs() < 1e-9);
    assert_eq!(st.series[0].1, vec![(ms(0), 2.0), (ms(400), 4.0)]);
}

/// A spec's own five MM rates are used (four are refused by the checks
/// and never reach here); `checked_scale_rates` gives each scale's payload
/// and wire rate, or the first problem with the fields.
#[test]
fn the_specs_rates_and_their_checked_entry_point() {
    let spec: MediaScalingSpec = serde_json::from_str(
        r#"{"app": "mm", "rates_bps": [1e5, 2e5, 3e5, 4e5, 5e5], "packet_bytes": 1028}"#,
    )
    .unwrap();
    let (Media::Mm { rates_bps, .. }, longest) = spec.media() else {
        panic!("mm")
    };
    assert_eq!(rates_bps, RATES);
    assert_eq!(longest, SimTime::from_secs_f64(1028.0 * 8.0 / 1e5));
    assert_eq!(spec.feedback_bytes, 40);
    let rates = super::checked_scale_rates(&spec).unwrap();
    let want: Vec<(f64, f64)> = RATES.iter().map(|&r| (r * 1000.0 / 1028.0, r)).collect();
    assert_eq!(rates.len(), 5);
    for (g, w) in rates.iter().zip(&want) {
        assert!((g.0 - w.0).abs() < 1e-6 && g.1 == w.1, "{rates:?}");
    }
    let short: MediaScalingSpec =
        serde_json::from_str(r#"{"app": "mm", "rates_bps": [1e5]}"#).unwrap();
    let err = super::checked_scale_rates(&short).unwrap_err();
    assert!(
        err.contains("flow.rates_bps") && err.contains("one rate per scale"),
        "{err}"
    );
}

/// The stop rule: no packet at or after the stop time, and at most
/// `max_packets`.
#[test]
fn the_source_keeps_its_stop_rule() {
    let (mut src, _) = mm(until(200), 200e3);
    let sent = drive(&mut src, ms(1000), |_| {});
    assert_eq!(times(&sent), vec![0, 40, 80, 120, 160]);
    let (mut src, _) = mm(
        StopRule {
            stop: ms(1000),
            max_packets: Some(3),
        },
        200e3,
    );
    let sent = drive(&mut src, ms(1000), |_| {});
    assert_eq!(times(&sent), vec![0, 40, 80]);
    assert_eq!(value(&src.stats(ms(1000)).unwrap(), "packets_sent"), 3.0);
}

/// The controller's timer: asked for at its deadline, it reaches the
/// controller only once the deadline has come, and a level it names
/// then is taken up.
#[test]
fn the_controllers_timer_reaches_it_when_due() {
    let (mut src, script) = mm(until(10_000), 0.0);
    {
        let mut s = script.lock().unwrap();
        s.level = Some(0);
        s.deadline = Some(ms(50));
    }
    let mut out = Vec::new();
    src.on_start(ms(0), &mut out);
    let cc_timers: Vec<SimTime> = (out.iter())
        .filter_map(|a| match a {
            crate::app::Action::Timer { at, token } if *token == u64::MAX => Some(*at),
            _ => None,
        })
        .collect();
    assert_eq!(cc_timers, vec![ms(50)]);
    out.clear();
    // Early (the deadline moved to 60 ms): not passed on.
    script.lock().unwrap().deadline = Some(ms(60));
    src.on_timer(ms(50), u64::MAX, &mut out);
    assert!(script.lock().unwrap().timers.is_empty());
    script.lock().unwrap().level = Some(2);
    src.on_timer(ms(60), u64::MAX, &mut out);
    assert_eq!(script.lock().unwrap().timers, vec![ms(60)]);
    assert_eq!(value(&src.stats(ms(60)).unwrap(), "final_scale"), 2.0);
}

/// MPEG_APP at 10 frame slots a second over IBBP with I 3000, P 1400, B
/// 500 bytes and 1500-byte packets (1472 bytes of payload): scale 2 sends
/// I and P (I in 1472, 1472, 56; P in one packet), skips the Bs; frames
/// of a type carry its DSCP.
#[test]
fn mpeg_sends_the_scales_frames_in_fragments_with_their_dscp() {
    let trace = [
        (FrameType::I, 3000),
        (FrameType::B, 500),
        (FrameType::B, 500),
        (FrameType::P, 1400),
    ];
    let (cc, script) = ScriptCc::boxed(0.0);
    script.lock().unwrap().level = Some(2);
    let media = Media::Mpeg {
        frames: place_in_gops(&trace),
        slot: ms(100),
        max_packet_bytes: 1500,
        frame_dscp: [Some(10), None, Some(14)],
    };
    let mut src = ScalingSource::new(tpl(), media, until(800), cc, RATES);
    let sent = drive(&mut src, ms(1000), |_| {});
    let got: Vec<(u64, u32, u8)> = (sent.iter())
        .map(|(t, p)| (t.as_nanos() / 1_000_000, p.size_bytes - 28, p.dscp))
        .collect();
    let gop = |t0: u64| {
        vec![
            (t0, 1472, 10),
            (t0, 1472, 10),
            (t0, 56, 10),
            (t0 + 300, 1400, 0),
        ]
    };
    assert_eq!(got, [gop(0), gop(400)].concat());
    // Each packet is stamped by the controller in sending order.
    let seqs: Vec<u64> = sent.iter().map(|(_, p)| p.seq).collect();
    assert_eq!(seqs, (0..8).collect::<Vec<_>>());
    let st = src.stats(ms(800)).unwrap();
    assert_eq!(
        (value(&st, "frames_sent"), value(&st, "frames_skipped")),
        (4.0, 4.0)
    );
    assert_eq!(value(&st, "packets_sent"), 8.0);
}

/// The spec's media: MM's rates and packet size by default the study's;
/// MPEG's synthetic GOP with the study's sizes, its slot, and the longest
/// interval between frames at any scale (a GOP at scale 0: 9 slots).
#[test]
fn the_spec_builds_the_studys_media_by_default() {
    let spec = |app: &str| -> MediaScalingSpec {
        serde_json::from_str(&format!(r#"{{"app": "{app}"}}"#)).expect("valid")
    };
    let m = spec("mm");
    assert_eq!(m.app, ScalingApp::Mm);
    let (media, longest) = m.media();
    let Media::Mm {
        rates_bps,
        packet_bytes,
    } = media
    else {
        panic!("mm")
    };
    assert_eq!((rates_bps, packet_bytes), (super::MM_RATES_BPS, 1500));
    assert_eq!(longest, ms(40), "1500 bytes at 300 kbit/s");
    let r = m.scale_rates();
    assert!((r[0].0 - 300e3 * 1472.0 / 1500.0).abs() < 1e-6 && r[0].1 == 300e3);

    let p = spec("mpeg");
    let (media, longest) = p.media();
    let Media::Mpeg {
        frames,
        slot,
        max_packet_bytes,
        frame_dscp,
    } = media
    else {
        panic!("mpeg")
    };
    let kinds: String = (frames.iter())
        .map(|f| match f.kind {
            FrameType::I => 'I',
            FrameType::P => 'P',
            FrameType::B => 'B',
        })
        .collect();
    assert_eq!(kinds, "IBBPBBPBB");
    let sizes: Vec<u32> = frames.iter().map(|f| f.bytes).collect();
    assert_eq!(
        sizes,
        vec![11000, 2000, 2000, 8000, 2000, 2000, 8000, 2000, 2000]
    );
    assert_eq!((max_packet_bytes, frame_dscp), (1500, [None, None, None]));
    assert_eq!(slot, SimTime::from_secs_f64(1.0 / 30.0));
    assert_eq!(longest.as_nanos(), slot.as_nanos() * 9);
    assert!((p.scale_rates()[4].0 - 1_040_000.0).abs() < 1.0);
}

/// A run of the built flow over one 10 Mbit/s, 10 ms link: MM_APP's
/// 1500-byte packets, the study's control climbing from scale 0 to 4 in
/// four requests of 40 bytes (the default) in the flow "m/fb"; the RTT
/// 2 x 10 ms plus a data packet's 1.2 ms and a request's 0.032 ms on the
/// wire; the control RTT the longest interval (1500 bytes at 300 kbit/s).
#[test]
fn a_built_flow_climbs_through_its_feedback_flow() {
    use crate::measure::Column;
    let sc = serde_json::json!({"duration_s": 3, "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"a": "a", "b": "b", "rate_bps": 10e6, "delay_ms": 10}],
        "flows": [{"name": "m", "type": "media_scaling", "src": "a", "dst": "b", "app": "mm"}]});
    let out = crate::run_json(
        &sc.to_string(),
        &crate::RunOptions::default(),
        &mut |_, _| true,
    )
    .expect("a valid scenario");
    let table = |name: &str| out.tables.iter().find(|t| t.name == name).expect(name);
    let u64s = |t: &str, c: &str| match table(t).get(c) {
        Some(Column::U64(v)) => v.clone(),
        other => panic!("{c}: {other:?}"),
    };
    let f64s = |t: &str, c: &str| match table(t).get(c) {
        Some(Column::F64(v)) => v.clone(),
        other => panic!("{c}: {other:?}"),
    };
    let Some(Column::Names { names, .. }) = table("flows").get("flow") else {
        panic!("flow names")
    };
    assert_eq!(
        names.iter().map(String::as_str).collect::<Vec<_>>(),
        ["m", "m/fb"]
    );
    let (sent, bytes) = (u64s("flows", "sent"), u64s("flows", "sent_bytes"));
    assert_eq!((sent[1], bytes[1]), (4, 4 * 40));
    assert_eq!(bytes[0], 1500 * sent[0]);
    let v = |c: &str| f64s("media_scaling", c)[0];
    assert_eq!(
        (v("increases"), v("final_scale"), v("requests_sent")),
        (4.0, 4.0, 4.0)
    );
    assert_eq!(v("frames_sent"), v("packets_sent"));
    assert_eq!(v("packets_sent"), sent[0] as f64);
    assert!((v("srtt_ms") - 21.232).abs() < 1e-9);
    assert_eq!(v("control_rtt_ms"), 40.0);
}
