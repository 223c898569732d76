//! Voice: one frame every `frame_ms` (20 ms) of `rate_bps * frame / 8`
//! bytes, from a codec that does not follow a target. With voice activity
//! detection the talker alternates talkspurts and silences of exponential
//! lengths (ITU-T P.59's conversational speech: 1.004 s talking, 1.587 s
//! silent, on average); nothing is sent in a silence (no comfort-noise
//! frames).

use super::spec::{SourceModel, SourceSite};
use super::{Frame, FrameSource};
use crate::scenario::check::Checker;
use crate::sim::{uniform, SimRng, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

/// Voice codecs with their E-model values (ITU-T G.113 Appendix I, Tables
/// I.1 and I.3: Ie, and Bpl for random loss with packet loss concealment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CodecName {
    /// G.711 with PLC: 64 kbit/s, 20 ms frames, Ie 0, Bpl 25.1.
    #[default]
    G711,
    /// G.729A with VAD: 8 kbit/s, 20 ms (two 10 ms frames), 5 ms
    /// look-ahead, Ie 11, Bpl 19.0.
    G729a,
    /// G.723.1 at 6.3 kbit/s: 30 ms frames, 7.5 ms look-ahead, Ie 15,
    /// Bpl 16.1.
    G7231,
}

impl CodecName {
    pub fn codec(self) -> VoiceCodec {
        let ms = SimTime::from_millis_f64;
        let (rate_bps, frame, lookahead, ie, bpl) = match self {
            CodecName::G711 => (64_000.0, 20.0, 0.0, 0.0, 25.1),
            CodecName::G729a => (8_000.0, 20.0, 5.0, 11.0, 19.0),
            CodecName::G7231 => (6_300.0, 30.0, 7.5, 15.0, 16.1),
        };
        VoiceCodec {
            rate_bps,
            frame: ms(frame),
            lookahead: ms(lookahead),
            ie,
            bpl,
        }
    }
}

/// A talker.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VoiceSpec {
    #[serde(default)]
    pub codec: CodecName,
    /// Voice activity detection: talkspurts and silences (ITU-T P.59
    /// means: 1.004 s and 1.587 s); without it, a frame every frame time.
    #[serde(default)]
    pub vad: bool,
}

impl SourceModel for VoiceSpec {
    fn validate(&self, _p: &str, _c: &mut Checker) {}
    fn build(&self, _site: &SourceSite) -> Box<dyn FrameSource> {
        let vad = self.vad.then(|| Activity {
            talk: SimTime::from_millis(1004),
            silence: SimTime::from_millis(1587),
        });
        Box::new(Audio::new(self.codec.codec(), vad))
    }
    fn frame_interval(&self, _site: &SourceSite) -> SimTime {
        self.codec.codec().frame
    }
    fn voice(&self) -> Option<VoiceCodec> {
        Some(self.codec.codec())
    }
}

/// A voice codec's frame and its E-model values (ITU-T G.113 Appendix I).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VoiceCodec {
    pub rate_bps: f64,
    pub frame: SimTime,
    /// Look-ahead the encoder adds to the mouth-to-ear delay.
    pub lookahead: SimTime,
    /// Equipment impairment factor Ie.
    pub ie: f64,
    /// Packet-loss robustness factor Bpl.
    pub bpl: f64,
}

/// Talkspurt and silence means (ITU-T P.59).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Activity {
    pub talk: SimTime,
    pub silence: SimTime,
}

pub struct Audio {
    codec: VoiceCodec,
    vad: Option<Activity>,
    /// End of the current talkspurt (with VAD).
    talk_until: SimTime,
    started: bool,
}

impl Audio {
    pub fn new(codec: VoiceCodec, vad: Option<Activity>) -> Self {
        Audio {
            codec,
            vad,
            talk_until: SimTime::ZERO,
            started: false,
        }
    }

    fn exp(rng: &mut SimRng, mean: SimTime) -> SimTime {
        SimTime::from_secs_f64(-mean.as_secs_f64() * (1.0 - uniform(rng)).ln())
    }

    /// Frame bytes (at least 1).
    pub fn frame_bytes(&self) -> u32 {
        (self.codec.rate_bps * self.codec.frame.as_secs_f64() / 8.0)
            .round()
            .max(1.0) as u32
    }
}

impl FrameSource for Audio {
    fn set_target(&mut self, _now: SimTime, _bps: f64) {}
    fn rate_bps(&self) -> f64 {
        self.codec.rate_bps
    }
    fn next_frame(&mut self, now: SimTime, rng: &mut SimRng) -> (Frame, SimTime) {
        let frame = Frame {
            bytes: self.frame_bytes(),
            key: false,
        };
        let Some(a) = self.vad else {
            return (frame, self.codec.frame);
        };
        if !self.started {
            self.started = true;
            self.talk_until = now + Self::exp(rng, a.talk);
        }
        let next = now + self.codec.frame;
        if next < self.talk_until {
            return (frame, self.codec.frame);
        }
        // The talkspurt ends: the next frame starts the next one, after a
        // silence (frame-aligned, as a codec's clock is).
        let f = self.codec.frame.as_nanos().max(1);
        let silence = Self::exp(rng, a.silence).as_nanos().div_ceil(f) * f;
        let start = next + SimTime::from_nanos(silence);
        self.talk_until = start + Self::exp(rng, a.talk);
        (frame, start - now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    fn g711() -> VoiceCodec {
        VoiceCodec {
            rate_bps: 64_000.0,
            frame: SimTime::from_millis(20),
            lookahead: SimTime::ZERO,
            ie: 0.0,
            bpl: 25.1,
        }
    }

    #[test]
    fn constant_voice_is_160_bytes_every_20_ms() {
        let mut rng = RngStreams::new(1, 0).stream("a");
        let mut a = Audio::new(g711(), None);
        let (f, gap) = a.next_frame(SimTime::ZERO, &mut rng);
        assert_eq!((f.bytes, gap), (160, SimTime::from_millis(20)));
        assert_eq!(a.rate_bps(), 64_000.0);
    }

    /// A voice spec's nominal frame interval is its codec's: 30 ms for
    /// G.723.1.
    #[test]
    fn the_voice_specs_frame_interval_is_its_codecs() {
        let s: VoiceSpec =
            serde_json::from_value(serde_json::json!({"codec": "g7231"})).expect("spec");
        let site = SourceSite {
            start_bps: 0.0,
            plan: (0, SimTime::ZERO),
        };
        assert_eq!(s.frame_interval(&site), SimTime::from_millis(30));
        // Its E-model values are the codec's (G.113 Appendix I: Ie 15,
        // Bpl 16.1, 7.5 ms of look-ahead).
        let v = s.voice().expect("a voice spec names its codec");
        assert_eq!((v.ie, v.bpl), (15.0, 16.1));
        assert_eq!(v.lookahead, SimTime::from_millis_f64(7.5));
    }

    /// With VAD the source starts talking: the first talkspurt begins at
    /// the first frame (a talkspurt of mean 10 s outlasts the first
    /// frames with this seed), not with a silence.
    #[test]
    fn with_vad_the_first_frame_starts_a_talkspurt() {
        let mut rng = RngStreams::new(1, 0).stream("a");
        let act = Activity {
            talk: SimTime::from_secs(10),
            silence: SimTime::from_secs(10),
        };
        let mut a = Audio::new(g711(), Some(act));
        let mut t = SimTime::from_secs(3);
        for _ in 0..3 {
            let gap = a.next_frame(t, &mut rng).1;
            assert_eq!(gap, SimTime::from_millis(20));
            t += gap;
        }
    }

    /// With VAD the share of time talking is talk / (talk + silence)
    /// (0.387 for P.59's means; 0.5 for equal means), within 0.02 over
    /// ~2 hours of speech.
    #[test]
    fn activity_share_follows_the_means() {
        for (talk, silence) in [(1.004, 1.587), (1.0, 1.0)] {
            let mut rng = RngStreams::new(2, 0).stream("a");
            let act = Activity {
                talk: SimTime::from_secs_f64(talk),
                silence: SimTime::from_secs_f64(silence),
            };
            let mut a = Audio::new(g711(), Some(act));
            let (mut t, mut frames) = (SimTime::ZERO, 0u64);
            while t < SimTime::from_secs(7200) {
                t += a.next_frame(t, &mut rng).1;
                frames += 1;
            }
            let share = frames as f64 * 0.02 / t.as_secs_f64();
            let want = talk / (talk + silence);
            assert!((share - want).abs() < 0.02, "{share} vs {want}");
        }
    }
}
