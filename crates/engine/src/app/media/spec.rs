//! Frame-based media in scenarios: the source (one line per model), the
//! pacer, per-packet feedback and the playout buffer, with their checks
//! and construction. An RTP member names them beside `media = true`
//! (docs/models/media.md).

use super::nack::NackParams;
use super::pacer::Pacer;
use super::playout::{Decode, PlayoutDelay, PlayoutParams};
use super::FrameSource;
use crate::proto::feedback::Format;
use crate::scenario::check::Checker;
use crate::sim::{SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

/// What a source may use when it is built: the media's share of the
/// session on the wire and the session's packet plan (for `constant`).
pub struct SourceSite {
    /// The payload rate to start at (or follow without a controller).
    pub start_bps: f64,
    /// The session's media payload per packet and time between packets.
    pub plan: (u32, SimTime),
}

/// A frame source's scenario spec.
pub trait SourceModel {
    /// Reports every problem at its field below `path`.
    fn validate(&self, path: &str, c: &mut Checker);
    fn build(&self, site: &SourceSite) -> Box<dyn FrameSource>;
    /// The nominal time between frames (for the playout buffer).
    fn frame_interval(&self, site: &SourceSite) -> SimTime;
    /// Voice: (frame, look-ahead, Ie, Bpl) for the E-model.
    fn voice(&self) -> Option<super::audio::VoiceCodec> {
        None
    }
}

crate::model_family! {
    /// A frame source, chosen by "type".
    pub enum SourceSpec: dyn SourceModel {
        Synthetic(super::synthetic::SyntheticSpec) = "synthetic",
        Trace(super::trace::TraceSpec) = "trace",
        SvcTrace(super::svc_trace::SvcTraceSpec) = "svc_trace",
        Voice(super::audio::VoiceSpec) = "voice",
        Constant(ConstantSpec) = "constant",
    }
}

/// The session's own media as frames: one packet of
/// `media_payload_bytes` every interval the session bandwidth gives, one
/// frame each (today's RTP media, through the frame path).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConstantSpec {}

struct Constant {
    bytes: u32,
    interval: SimTime,
}

impl FrameSource for Constant {
    fn set_target(&mut self, _now: SimTime, _bps: f64) {}
    fn rate_bps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.interval.as_secs_f64()
    }
    fn next_frame(&mut self, _now: SimTime, _rng: &mut SimRng) -> (super::Frame, SimTime) {
        let f = super::Frame {
            bytes: self.bytes,
            key: false,
        };
        (f, self.interval)
    }
}

impl SourceModel for ConstantSpec {
    fn validate(&self, _path: &str, _c: &mut Checker) {}
    fn build(&self, site: &SourceSite) -> Box<dyn FrameSource> {
        Box::new(Constant {
            bytes: site.plan.0,
            interval: site.plan.1,
        })
    }
    fn frame_interval(&self, site: &SourceSite) -> SimTime {
        site.plan.1
    }
}

fn d_factor() -> f64 {
    2.5
}
fn d_burst_ms() -> f64 {
    5.0
}

/// The pacer: packets leave at `factor` times the target rate, running
/// ahead of it by at most `burst_ms`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacerSpec {
    /// Pacing rate over the target rate (libwebrtc: 2.5).
    #[serde(default = "d_factor")]
    pub factor: f64,
    /// How far ahead of the pacing rate a burst may run, ms.
    #[serde(default = "d_burst_ms")]
    pub burst_ms: f64,
}

impl PacerSpec {
    pub fn validate(&self, p: &str, c: &mut Checker) {
        c.positive(format_args!("{p}.factor"), self.factor);
        c.at_most(format_args!("{p}.factor"), self.factor, 100.0);
        c.non_negative(format_args!("{p}.burst_ms"), self.burst_ms);
        c.at_most(format_args!("{p}.burst_ms"), self.burst_ms, 10_000.0);
    }
    pub fn build<T>(&self) -> Pacer<T> {
        Pacer::new(self.factor, SimTime::from_millis_f64(self.burst_ms))
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FormatSpec {
    /// RFC 8888 congestion control feedback (RTPFB FMT 11).
    #[default]
    Rfc8888,
    /// Transport-wide congestion control feedback (RTPFB FMT 15) with the
    /// transport-wide sequence number header extension.
    Twcc,
}

fn d_interval_ms() -> f64 {
    50.0
}

/// Per-packet feedback the receiving member returns about this member's
/// media, in the flow "<session>/<receiver>/fb".
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackSpec {
    #[serde(default)]
    pub format: FormatSpec,
    /// A report every `interval_ms` while packets arrive.
    #[serde(default = "d_interval_ms")]
    pub interval_ms: f64,
    /// Also a report on each frame's last packet (the RTP marker).
    #[serde(default)]
    pub per_frame: bool,
}

impl FeedbackSpec {
    pub fn validate(&self, p: &str, c: &mut Checker) {
        c.interval_ms(format_args!("{p}.interval_ms"), self.interval_ms);
    }
    pub fn format(&self) -> Format {
        match self.format {
            FormatSpec::Rfc8888 => Format::Rfc8888,
            FormatSpec::Twcc => Format::Twcc,
        }
    }
}

fn d_delay_ms() -> f64 {
    100.0
}
fn d_quantile() -> f64 {
    0.95
}
fn d_window_ms() -> f64 {
    2000.0
}
fn d_max_ms() -> f64 {
    1000.0
}
fn d_render_delay_ms() -> f64 {
    10.0
}
fn d_hold_ms() -> f64 {
    1000.0
}
fn d_freeze_factor() -> f64 {
    3.0
}
fn d_freeze_extra_ms() -> f64 {
    150.0
}
fn d_pause_ms() -> f64 {
    5000.0
}
fn d_true() -> bool {
    true
}
fn d_key_frame_retry_ms() -> f64 {
    200.0
}

/// How a video stream's frames depend on each other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecodeSpec {
    /// Every frame decodes alone.
    #[default]
    Independent,
    /// Each frame but a key frame needs the frame before it decoded; the
    /// receiver asks for key frames (PLI).
    Reference,
}

/// How the adaptive playout delay is estimated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EstimatorSpec {
    /// The `quantile` of the recent capture-to-completion delays.
    #[default]
    Quantile,
    /// libwebrtc's video jitter estimate and render timing.
    Webrtc,
}

/// The receiving member's playout buffer for the media it receives.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlayoutSpec {
    /// Fixed playout delay after capture, ms (unused with `adaptive`).
    #[serde(default = "d_delay_ms")]
    pub delay_ms: f64,
    /// Adapt the delay to the `quantile` of the capture-to-completion
    /// delays of the frames of the last `window_ms`, within [min_ms, max_ms].
    #[serde(default)]
    pub adaptive: bool,
    /// With `adaptive`: `quantile` (the above), or `webrtc` (libwebrtc's
    /// video jitter estimate and render timing; video only).
    #[serde(default)]
    pub estimator: EstimatorSpec,
    /// With `webrtc`: the decoder's time, ms (libwebrtc measures its 95th
    /// percentile; mediasim decodes at once, so 0 unless set).
    #[serde(default)]
    pub decode_ms: f64,
    /// With `webrtc`: the renderer's delay, ms (libwebrtc's 10).
    #[serde(default = "d_render_delay_ms")]
    pub render_delay_ms: f64,
    #[serde(default = "d_quantile")]
    pub quantile: f64,
    #[serde(default = "d_window_ms")]
    pub window_ms: f64,
    /// The lowest playout delay, ms: 10 for `quantile`; for `webrtc` the
    /// lowest current delay, 0 (libwebrtc's minimum playout delay).
    #[serde(default)]
    pub min_ms: Option<f64>,
    #[serde(default = "d_max_ms")]
    pub max_ms: f64,
    /// An incomplete frame counts as lost this long after its playout time.
    #[serde(default = "d_hold_ms")]
    pub hold_ms: f64,
    /// A gap between played frames over max(factor x, x + extra) is a
    /// freeze, x the mean of the last 30 gaps (WebRTC statistics).
    #[serde(default = "d_freeze_factor")]
    pub freeze_factor: f64,
    #[serde(default = "d_freeze_extra_ms")]
    pub freeze_extra_ms: f64,
    /// A gap between played frames over this is a pause (the sender
    /// stopped, or nothing came through), counted apart from freezes
    /// (WebRTC statistics' pauseCount: 5 s).
    #[serde(default = "d_pause_ms")]
    pub pause_ms: f64,
    /// Video: frames decode alone (`independent`), or each needs the one
    /// before it back to a key frame (`reference`).
    #[serde(default)]
    pub decode: DecodeSpec,
    /// With `reference`: ask the sender for a key frame (RTCP PLI) when a
    /// loss breaks the chain.
    #[serde(default = "d_true")]
    pub key_frame_requests: bool,
    /// With `reference`: ask again after this long while no key frame has
    /// come, ms (libwebrtc's 200).
    #[serde(default = "d_key_frame_retry_ms")]
    pub key_frame_retry_ms: f64,
    /// With `reference` and `key_frame_requests`: once a frame has been
    /// decoded, ask for a key frame only when none has been decoded for
    /// this long, by a timer that starts again each time it runs out, ms
    /// (libwebrtc's max_wait_for_frame: 3000); unset: ask when a loss
    /// breaks the chain.
    #[serde(default)]
    pub key_frame_wait_ms: Option<f64>,
    /// Ask for lost packets again (RTCP Generic NACK); the sender then
    /// keeps what it sent and retransmits it (RFC 4588).
    #[serde(default)]
    pub nack: bool,
    /// Requests per lost packet before it is given up (libwebrtc's 10).
    #[serde(default = "d_nack_retries")]
    pub nack_retries: u32,
    /// The round trip a request is repeated after while the member has
    /// no RFC 3550 estimate of its own, ms (libwebrtc's 100).
    #[serde(default = "d_nack_rtt_ms")]
    pub nack_rtt_ms: f64,
    /// With `adaptive` and `nack`: frames that a retransmission completed
    /// are left out of the adaptive delay's recent delays (as libwebrtc's
    /// jitter estimate leaves out frames delayed by retransmission).
    #[serde(default)]
    pub skip_recovered: bool,
}

fn d_nack_retries() -> u32 {
    10
}

fn d_nack_rtt_ms() -> f64 {
    100.0
}

impl PlayoutSpec {
    pub fn validate(&self, p: &str, c: &mut Checker) {
        for (name, x) in [
            ("delay_ms", self.delay_ms),
            ("decode_ms", self.decode_ms),
            ("render_delay_ms", self.render_delay_ms),
            ("min_ms", self.min_ms()),
            ("hold_ms", self.hold_ms),
            ("freeze_extra_ms", self.freeze_extra_ms),
        ] {
            c.non_negative(format_args!("{p}.{name}"), x);
            c.at_most(format_args!("{p}.{name}"), x, 60_000.0);
        }
        c.positive(format_args!("{p}.max_ms"), self.max_ms);
        c.probability(format_args!("{p}.quantile"), self.quantile);
        c.interval_ms(format_args!("{p}.window_ms"), self.window_ms);
        c.at_most(format_args!("{p}.max_ms"), self.max_ms, 60_000.0);
        if self.adaptive && self.min_ms() > self.max_ms {
            let msg = format!(
                "must be at most max_ms = {} (got {})",
                self.max_ms,
                self.min_ms()
            );
            c.err(format!("{p}.min_ms"), msg);
        }
        c.positive(format_args!("{p}.freeze_factor"), self.freeze_factor);
        c.positive(format_args!("{p}.pause_ms"), self.pause_ms);
        // With `key_frame_wait_ms` a timer runs again each retry: at least
        // 1 us, as any period.
        c.interval_ms(
            format_args!("{p}.key_frame_retry_ms"),
            self.key_frame_retry_ms,
        );
        c.at_most(
            format_args!("{p}.key_frame_retry_ms"),
            self.key_frame_retry_ms,
            60_000.0,
        );
        c.at_most(format_args!("{p}.pause_ms"), self.pause_ms, 86_400_000.0);
        if let Some(wait) = self.key_frame_wait_ms {
            let field = format!("{p}.key_frame_wait_ms");
            // A timer runs again each `wait`: at least 1 us, as any period.
            c.interval_ms(format_args!("{field}"), wait);
            c.at_most(format_args!("{field}"), wait, 60_000.0);
            if self.decode != DecodeSpec::Reference || !self.key_frame_requests {
                let msg = "acts only with decode = \"reference\" and key_frame_requests = true";
                c.err(field, msg.to_string());
            }
        }
        if !(1..=100).contains(&self.nack_retries) {
            let msg = format!("must be 1 to 100 (got {})", self.nack_retries);
            c.err(format!("{p}.nack_retries"), msg);
        }
        let webrtc = self.estimator == EstimatorSpec::Webrtc;
        if self.skip_recovered && !(self.adaptive && self.nack) {
            let msg = "acts only with adaptive = true and nack = true";
            c.err(format!("{p}.skip_recovered"), msg.to_string());
        } else if self.skip_recovered && webrtc {
            let msg = "is for the quantile estimator: webrtc always leaves recovered frames out";
            c.err(format!("{p}.skip_recovered"), msg.to_string());
        }
        if webrtc && !self.adaptive {
            let msg = "`webrtc` acts only with adaptive = true";
            c.err(format!("{p}.estimator"), msg.to_string());
        }
        c.positive(format_args!("{p}.nack_rtt_ms"), self.nack_rtt_ms);
        c.at_most(format_args!("{p}.nack_rtt_ms"), self.nack_rtt_ms, 60_000.0);
        c.at_most(
            format_args!("{p}.freeze_factor"),
            self.freeze_factor,
            1000.0,
        );
    }

    fn min_ms(&self) -> f64 {
        let webrtc = self.estimator == EstimatorSpec::Webrtc;
        self.min_ms.unwrap_or(if webrtc { 0.0 } else { 10.0 })
    }

    pub fn params(&self, frame_interval: SimTime, voice: bool) -> PlayoutParams {
        let ms = SimTime::from_millis_f64;
        PlayoutParams {
            delay: if self.adaptive && self.estimator == EstimatorSpec::Webrtc {
                PlayoutDelay::Webrtc {
                    min: ms(self.min_ms()),
                    max: ms(self.max_ms),
                    decode: ms(self.decode_ms),
                    render: ms(self.render_delay_ms),
                }
            } else if self.adaptive {
                PlayoutDelay::Adaptive {
                    min: ms(self.min_ms()),
                    max: ms(self.max_ms),
                    quantile: self.quantile,
                    window: ms(self.window_ms),
                }
            } else {
                PlayoutDelay::Fixed(ms(self.delay_ms))
            },
            video: !voice,
            frame_interval,
            hold: ms(self.hold_ms),
            freeze_factor: self.freeze_factor,
            freeze_extra: ms(self.freeze_extra_ms),
            pause: ms(self.pause_ms),
            decode: match self.decode {
                DecodeSpec::Independent => Decode::Independent,
                DecodeSpec::Reference => Decode::Reference,
            },
            key_retry: self.key_frame_requests.then(|| ms(self.key_frame_retry_ms)),
            key_wait: self.key_frame_wait_ms.map(ms),
            retransmission: self.nack,
            skip_recovered: self.skip_recovered,
        }
    }

    /// The retransmission requests' parameters, with `nack`.
    pub fn nack_params(&self) -> Option<NackParams> {
        self.nack.then(|| NackParams {
            retries: self.nack_retries,
            default_rtt: SimTime::from_millis_f64(self.nack_rtt_ms),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(check: impl FnOnce(&mut Checker)) -> String {
        let mut c = Checker::default();
        check(&mut c);
        c.errs.iter().map(|e| format!("{e}\n")).collect()
    }

    /// The documented defaults (docs/models/media.md): pacing at 2.5 x
    /// with 5 ms of burst, feedback every 50 ms, a playout delay of 100 ms
    /// or the 95th percentile of 2 s within [10, 1000] ms, a second's
    /// hold, freezes over max(3 x, x + 150 ms).
    #[test]
    fn the_defaults() {
        let p: PacerSpec = serde_json::from_str("{}").unwrap();
        assert_eq!((p.factor, p.burst_ms), (2.5, 5.0));
        let f: FeedbackSpec = serde_json::from_str("{}").unwrap();
        assert_eq!(
            (f.interval_ms, f.per_frame, f.format()),
            (50.0, false, Format::Rfc8888)
        );
        let s: PlayoutSpec = serde_json::from_str("{}").unwrap();
        assert_eq!(
            [
                s.delay_ms,
                s.quantile,
                s.window_ms,
                s.min_ms(),
                s.max_ms,
                s.hold_ms
            ],
            [100.0, 0.95, 2000.0, 10.0, 1000.0, 1000.0]
        );
        assert_eq!(
            (s.freeze_factor, s.freeze_extra_ms, s.pause_ms, s.adaptive),
            (3.0, 150.0, 5000.0, false)
        );
        assert_eq!(errors(|c| p.validate("m.pacer", c)), "");
        assert_eq!(errors(|c| f.validate("m.feedback", c)), "");
        assert_eq!(errors(|c| s.validate("m.playout", c)), "");
    }

    #[test]
    fn bad_fields_are_named() {
        let p: PacerSpec = serde_json::from_str(r#"{"factor": 0, "burst_ms": -1}"#).unwrap();
        let text = errors(|c| p.validate("m.pacer", c));
        assert!(
            text.contains("m.pacer.factor") && text.contains("m.pacer.burst_ms"),
            "{text}"
        );
        let f: FeedbackSpec = serde_json::from_str(r#"{"interval_ms": 0}"#).unwrap();
        assert!(errors(|c| f.validate("m.feedback", c)).contains("m.feedback.interval_ms"));
        // min above max matters only when adaptive; equal is fine.
        let bad: PlayoutSpec =
            serde_json::from_str(r#"{"adaptive": true, "min_ms": 300, "max_ms": 200}"#).unwrap();
        assert!(errors(|c| bad.validate("m.playout", c)).contains("m.playout.min_ms"));
        let fixed: PlayoutSpec = serde_json::from_str(r#"{"min_ms": 300, "max_ms": 200}"#).unwrap();
        assert_eq!(errors(|c| fixed.validate("m.playout", c)), "");
        let equal: PlayoutSpec =
            serde_json::from_str(r#"{"adaptive": true, "min_ms": 200, "max_ms": 200}"#).unwrap();
        assert_eq!(errors(|c| equal.validate("m.playout", c)), "");
    }

    /// `webrtc` needs `adaptive`, always leaves recovered frames out (so
    /// `skip_recovered` is refused with it), and maps to libwebrtc's
    /// timing with its bounds, decode time and render delay (10 ms).
    #[test]
    fn the_webrtc_estimator() {
        let alone: PlayoutSpec = serde_json::from_str(r#"{"estimator": "webrtc"}"#).unwrap();
        assert!(errors(|c| alone.validate("m.playout", c)).contains("m.playout.estimator"));
        let skip: PlayoutSpec = serde_json::from_str(
            r#"{"estimator": "webrtc", "adaptive": true, "nack": true, "skip_recovered": true}"#,
        )
        .unwrap();
        assert!(errors(|c| skip.validate("m.playout", c)).contains("webrtc always leaves"));
        let bad: PlayoutSpec =
            serde_json::from_str(r#"{"adaptive": true, "estimator": "webrtc", "decode_ms": -1}"#)
                .unwrap();
        assert!(errors(|c| bad.validate("m.playout", c)).contains("m.playout.decode_ms"));
        let s: PlayoutSpec =
            serde_json::from_str(r#"{"adaptive": true, "estimator": "webrtc", "decode_ms": 4}"#)
                .unwrap();
        assert_eq!(errors(|c| s.validate("m.playout", c)), "");
        let want = PlayoutDelay::Webrtc {
            min: SimTime::ZERO,
            max: SimTime::from_millis(1000),
            decode: SimTime::from_millis(4),
            render: SimTime::from_millis(10),
        };
        assert_eq!(s.params(SimTime::from_millis(33), false).delay, want);
    }

    /// `key_frame_wait_ms` acts with reference decoding and key-frame
    /// requests only, from 1 us to 60 s (a timer runs again each wait);
    /// unset by default (ask at once).
    #[test]
    fn the_key_frame_wait() {
        let parse = |j: &str| -> PlayoutSpec { serde_json::from_str(j).unwrap() };
        let none = parse("{}");
        let ms = SimTime::from_millis;
        assert_eq!(none.params(ms(33), false).key_wait, None);
        let ok = parse(r#"{"decode": "reference", "key_frame_wait_ms": 3000}"#);
        assert_eq!(errors(|c| ok.validate("m.playout", c)), "");
        let p = ok.params(ms(33), false);
        assert_eq!((p.key_wait, p.key_retry), (Some(ms(3000)), Some(ms(200))));
        for bad in [
            r#"{"key_frame_wait_ms": 3000}"#,
            r#"{"decode": "reference", "key_frame_requests": false, "key_frame_wait_ms": 3000}"#,
            r#"{"decode": "reference", "key_frame_wait_ms": 0}"#,
            r#"{"decode": "reference", "key_frame_wait_ms": 1e-7}"#,
            r#"{"decode": "reference", "key_frame_wait_ms": 60001}"#,
        ] {
            let text = errors(|c| parse(bad).validate("m.playout", c));
            assert!(
                text.contains("m.playout.key_frame_wait_ms"),
                "{bad}: {text}"
            );
        }
        let tiny_retry =
            r#"{"decode": "reference", "key_frame_wait_ms": 3000, "key_frame_retry_ms": 1e-7}"#;
        let text = errors(|c| parse(tiny_retry).validate("m.playout", c));
        assert!(
            text.contains("m.playout.key_frame_retry_ms: must be at least"),
            "{text}"
        );
        let at_edge = parse(r#"{"decode": "reference", "key_frame_wait_ms": 60000}"#);
        assert_eq!(errors(|c| at_edge.validate("m.playout", c)), "");
    }

    /// A voice stream's playout is not video's (talkspurts, no freezes).
    #[test]
    fn playout_params_follow_the_media() {
        let s: PlayoutSpec = serde_json::from_str(r#"{"delay_ms": 80}"#).unwrap();
        let v = s.params(SimTime::from_millis(20), true);
        assert!(!v.video);
        assert!(matches!(v.delay, PlayoutDelay::Fixed(d) if d == SimTime::from_millis(80)));
        assert!(s.params(SimTime::from_millis(33), false).video);
    }

    /// Constant media: one packet of the session's payload every
    /// interval, its rate that payload over the interval.
    #[test]
    fn constant_media_rate() {
        let site = SourceSite {
            start_bps: 0.0,
            plan: (1000, SimTime::from_millis(10)),
        };
        let c = ConstantSpec {};
        assert_eq!(c.frame_interval(&site), SimTime::from_millis(10));
        assert_eq!(c.build(&site).rate_bps(), 800e3);
    }
}
