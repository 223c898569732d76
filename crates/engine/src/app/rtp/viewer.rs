//! The receiving member's side of frame-based media: the playout buffer
//! (`playout`) and the per-packet feedback it returns (`feedback` of the
//! sending member), in the flow "<session>/<receiver>/fb".

use super::held::Held;
use crate::app::media::audio::VoiceCodec;
use crate::app::media::nack::NackRequester;
use crate::app::media::playout::Playout;
use crate::app::{Action, AppStats, PacketTemplate};
use crate::measure::emodel::{burst_ratio, mos, EModel};
use crate::net::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::net::{FlowId, Payload};
use crate::proto::feedback::{extend16, ArrivalLog, FeedbackMessage, Format};
use crate::sim::SimTime;

/// The feedback a receiver returns.
pub struct FeedbackOut {
    pub log: ArrivalLog,
    pub interval: SimTime,
    pub per_frame: bool,
    pub tpl: PacketTemplate,
    pub sent: u64,
    pub bytes: u64,
    /// The reported stream's RTP flow (the table row).
    pub stream: FlowId,
}

impl FeedbackOut {
    pub fn new(
        log: ArrivalLog,
        (interval, per_frame): (SimTime, bool),
        tpl: PacketTemplate,
        stream: FlowId,
    ) -> Self {
        FeedbackOut {
            log,
            interval,
            per_frame,
            tpl,
            sent: 0,
            bytes: 0,
            stream,
        }
    }

    /// The receiver's feedback columns of the `media` table.
    pub fn stats(&self) -> AppStats {
        AppStats {
            table: "media",
            flow: self.stream,
            values: vec![
                ("feedback_sent", self.sent as f64),
                ("feedback_bytes_sent", self.bytes as f64),
                ("feedback_late_packets", self.log.reported_late as f64),
            ],
            series: vec![],
        }
    }

    fn send(&mut self, now: SimTime, out: &mut Vec<Action>) {
        for m in self.log.flush(now) {
            let mut p = self.tpl.make(self.sent);
            p.size_bytes = IPV4_HEADER_BYTES + UDP_HEADER_BYTES + m.wire_len() as u32;
            self.sent += 1;
            self.bytes += p.size_bytes as u64;
            p.app = Payload::new(FeedbackMessage(m));
            out.push(Action::Send(p));
        }
    }

    /// A media packet arrived: logged (a transport-wide log skips packets
    /// without a transport-wide number), and with per-frame feedback, the
    /// frame's last packet sends the log. Returns whether it was logged:
    /// the member then starts the feedback timer if it is not running.
    pub fn on_rtp(&mut self, now: SimTime, h: &Held, out: &mut Vec<Action>) -> bool {
        let near = self.log.highest().unwrap_or(0);
        let key = match (self.log.format(), h.transport_seq) {
            (Format::Twcc, Some(t)) => extend16(t, near),
            (Format::Twcc, None) => return false,
            (Format::Rfc8888, _) => extend16(h.seq, near),
        };
        self.log.on_packet(now, key, h.ecn);
        if self.per_frame && h.marker {
            self.send(now, out);
        }
        true
    }

    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.send(now, out);
    }
}

/// The playout buffer of the stream a receiver plays, and how it reports.
#[derive(Clone)]
pub struct Viewer {
    pub playout: Playout,
    pub voice: Option<VoiceCodec>,
    /// The played stream's sender (a PLI or a NACK names it).
    pub media_ssrc: u32,
    /// The played stream's RTP flow (the table row).
    pub stream: FlowId,
    /// Retransmission requests for the stream's lost packets (`nack`),
    /// and when their timer is set for.
    pub nack: Option<NackRequester>,
    pub nack_timer: Option<SimTime>,
    /// Generic NACK messages sent.
    pub nacks_sent: u64,
    /// When the key-frame wait's timer is set for (`key_frame_wait_ms`).
    pub key_wait_timer: Option<SimTime>,
}

impl Viewer {
    /// Whether a packet of `ssrc` arriving out of order matters: it is the
    /// played stream's, and a copy of a recovered packet must be told
    /// apart or a gap would be taken for a loss.
    pub fn watches_order(&self, ssrc: u32) -> bool {
        ssrc == self.media_ssrc && (self.nack.is_some() || self.playout.infers_loss_from_order())
    }

    /// The first packet of a key frame came as the newest packet of the
    /// played stream, `ext` its sequence number (extended): the
    /// retransmission requests note it (nack.rs), before any gap it ends.
    #[cold]
    pub fn key_frame_start(&mut self, ext: u64) {
        if let Some(r) = &mut self.nack {
            r.on_key_frame_start(ext);
        }
    }

    /// A packet of key frame `index`, `ext` its sequence number (extended;
    /// a retransmission's original), reached the playout buffer: if it
    /// completed the frame and the frame is the newest key frame complete
    /// (reference decoding), the requests before it end (nack.rs's
    /// `clear_up_to`), after those for any gap it ended went out.
    #[cold]
    pub fn key_frame_packet(&mut self, index: u32, ext: u64) {
        if let Some(r) = &mut self.nack {
            if self.playout.newest_key_done(index) {
                r.clear_up_to(ext);
            }
        }
    }

    /// The held packets (held.rs: in order from `ssrc`, no gap), the
    /// extended sequence numbers near `near`, taken in by the playout
    /// buffer and, for a key frame's packets, the retransmission requests.
    pub fn take_held(&mut self, held: &[Held], ssrc: u32, near: u64) {
        let nack = self.nack.is_some() && ssrc == self.media_ssrc;
        for h in held {
            if let Some(tag) = &h.frame {
                self.playout.on_packet(h.now, tag);
                if tag.key && nack {
                    let ext = extend16(h.seq, near);
                    if h.first {
                        self.key_frame_start(ext);
                    }
                    self.key_frame_packet(tag.index, ext);
                }
            }
        }
    }

    /// The receiver's playout columns of the `media` table, with the
    /// packets still `held` (held.rs: in order from `ssrc`, near `near`)
    /// taken in.
    pub fn stats(&self, end: SimTime, (held, ssrc, near): (&[Held], u32, u64)) -> AppStats {
        let mut v = self.clone();
        v.take_held(held, ssrc, near);
        let p = &mut v.playout;
        p.finish(end);
        let s = &p.stats;
        let d = s.frame_delay.summary_ns();
        let ms = |ns: f64| ns / 1e6;
        let mut values = vec![
            ("frames_played", s.played as f64),
            ("frames_late", s.late as f64),
            ("frames_lost", s.lost as f64),
            ("frames_undecodable", s.undecodable as f64),
            ("key_frame_requests", s.key_requests as f64),
            ("frame_delay_mean_ms", ms(d[0])),
            ("frame_delay_p95_ms", ms(d[3])),
            ("frame_delay_max_ms", ms(d[5])),
            (
                "playout_delay_mean_ms",
                if s.played > 0 {
                    s.playout_delay_sum.as_secs_f64() * 1e3 / s.played as f64
                } else {
                    f64::NAN
                },
            ),
            ("freezes", s.freezes as f64),
            ("freeze_total_s", s.freeze_total.as_secs_f64()),
            ("pauses", s.pauses as f64),
            ("pause_total_s", s.pause_total.as_secs_f64()),
        ];
        const LEVELS: [&str; 6] = [
            "frames_level_0",
            "frames_level_1",
            "frames_level_2",
            "frames_level_3",
            "frames_level_4",
            "frames_level_5",
        ];
        values.extend(LEVELS.iter().zip(s.levels).map(|(n, c)| (*n, c as f64)));
        let n = v.nack.as_ref().map(|r| r.stats).unwrap_or_default();
        values.extend([
            ("nack_sent", self.nacks_sent as f64),
            ("nack_requests", n.requested as f64),
            ("packets_recovered", n.recovered as f64),
            ("packets_given_up", n.given_up as f64),
            ("rtx_duplicates", n.duplicates as f64),
            ("nack_spurious", n.spurious as f64),
        ]);
        let total: u64 = s.levels.iter().sum();
        values.push((
            "good_quality_pct",
            if total > 0 {
                100.0 * (s.levels[0] + s.levels[1]) as f64 / total as f64
            } else {
                f64::NAN
            },
        ));
        if let Some(v) = self.voice {
            let total = s.played + s.late + s.lost;
            let ppl = if total > 0 {
                100.0 * s.bad_frames as f64 / total as f64
            } else {
                f64::NAN
            };
            let burst = burst_ratio(s.bad_frames, s.bad_runs, total);
            // Mouth to ear: capture to playout, plus the frame and the
            // encoder's look-ahead before capture. With no frame played
            // there is no playout delay to report; R then counts the loss
            // and the codec's own delay only.
            let playout_ms =
                (s.played > 0).then(|| s.playout_delay_sum.as_secs_f64() * 1e3 / s.played as f64);
            let delay_ms = playout_ms.unwrap_or(0.0) + (v.frame + v.lookahead).as_secs_f64() * 1e3;
            let r = EModel::call(delay_ms, ppl, burst, v.ie, v.bpl).r();
            values.extend([
                ("voice_loss_pct", ppl),
                ("voice_burst_ratio", burst),
                ("mouth_to_ear_ms", playout_ms.map_or(f64::NAN, |_| delay_ms)),
                ("r_factor", r),
                ("mos", mos(r)),
            ]);
        }
        AppStats {
            table: "media",
            flow: self.stream,
            values,
            series: vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{FeedbackOut, Held, Viewer};
    use crate::app::media::audio::CodecName;
    use crate::app::media::playout::{Decode, FrameTag, Playout, PlayoutDelay, PlayoutParams};
    use crate::app::{Action, PacketTemplate};
    use crate::measure::emodel::{burst_ratio, mos, EModel};
    use crate::net::Dest;
    use crate::proto::feedback::{ArrivalLog, FeedbackMessage, Format};
    use crate::sim::SimTime;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn held(at_ms: u64, seq: u16, transport_seq: Option<u16>, marker: bool) -> Held {
        Held::test_packet(at_ms, seq, marker, transport_seq)
    }

    fn feedback(format: Format, per_frame: bool) -> FeedbackOut {
        let tpl = PacketTemplate::session_udp(5, Dest::Node(0), 7001, 0);
        FeedbackOut::new(ArrivalLog::new(format, 1, 2), (ms(50), per_frame), tpl, 9)
    }

    fn sent(out: &[Action]) -> Vec<(u32, usize)> {
        out.iter()
            .map(|a| match a {
                Action::Send(p) => {
                    let m = p.app.get::<FeedbackMessage>().expect("a feedback message");
                    (p.size_bytes, m.0.wire_len())
                }
                other => panic!("a send: {other:?}"),
            })
            .collect()
    }

    /// A transport-wide log takes only packets with a transport-wide
    /// number; RFC 8888's takes every packet by its RTP sequence number.
    /// Per-frame feedback sends the log on a frame's last packet; the
    /// timer sends it otherwise. Each message is one packet of its wire
    /// length and 28 bytes of UDP and IPv4, counted in the table.
    #[test]
    fn feedback_logs_what_its_format_counts_and_sends_it_as_packets() {
        let mut out = Vec::new();
        let mut f = feedback(Format::Twcc, true);
        assert!(
            !f.on_rtp(ms(1), &held(1, 10, None, false), &mut out),
            "no transport-wide number"
        );
        assert!(f.on_rtp(ms(2), &held(2, 11, Some(100), false), &mut out));
        assert!(out.is_empty(), "not a frame's last packet");
        assert!(f.on_rtp(ms(3), &held(3, 12, Some(101), true), &mut out));
        let msgs = sent(&out);
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0].0 as usize, 28 + msgs[0].1);
        assert_eq!(f.log.highest(), Some(101));
        let mut timed = Vec::new();
        let mut g = feedback(Format::Rfc8888, false);
        assert!(g.on_rtp(ms(1), &held(1, 40, None, true), &mut timed));
        assert_eq!(
            g.log.highest(),
            Some(40),
            "RFC 8888 counts by RTP sequence number"
        );
        assert!(timed.is_empty(), "no per-frame feedback");
        g.on_timer(ms(50), &mut timed);
        let msgs = [msgs, sent(&timed)].concat();
        let stats = |f: &FeedbackOut| f.stats().values;
        assert_eq!(
            stats(&f),
            vec![
                ("feedback_sent", 1.0),
                ("feedback_bytes_sent", msgs[0].0 as f64),
                ("feedback_late_packets", 0.0)
            ]
        );
        assert_eq!(
            stats(&g),
            vec![
                ("feedback_sent", 1.0),
                ("feedback_bytes_sent", msgs[1].0 as f64),
                ("feedback_late_packets", 0.0)
            ]
        );
        assert_eq!(f.stats().flow, 9);
    }

    fn tag(index: u32, packets: u32) -> FrameTag {
        FrameTag::test_frame(index, packets)
    }

    impl Viewer {
        /// The fixed 100 ms buffer's parameters (`viewer`).
        fn playout_params(&self) -> PlayoutParams {
            params(self.voice.is_none())
        }
    }

    fn params(video: bool) -> PlayoutParams {
        PlayoutParams {
            delay: PlayoutDelay::Fixed(ms(100)),
            video,
            frame_interval: ms(40),
            hold: ms(1000),
            freeze_factor: 3.0,
            freeze_extra: ms(150),
            pause: ms(5000),
            decode: Decode::Independent,
            key_retry: None,
            key_wait: None,
            retransmission: false,
            skip_recovered: false,
        }
    }

    /// A fixed 100 ms playout buffer fed `arrivals` (ms, frame, packets).
    fn viewer(voice: Option<CodecName>, arrivals: &[(u64, u32, u32)]) -> Viewer {
        let mut playout = Playout::new(params(voice.is_none()));
        for &(at, frame, packets) in arrivals {
            playout.on_packet(ms(at), &tag(frame, packets));
        }
        Viewer {
            playout,
            voice: voice.map(CodecName::codec),
            media_ssrc: 7,
            stream: 3,
            nack: None,
            nack_timer: None,
            nacks_sent: 0,
            key_wait_timer: None,
        }
    }

    /// Held packets of a key frame reach the retransmission requests
    /// (reference decoding): its first packet is noted as a key frame, and
    /// its last, completing it, gives up what is asked for before it; a
    /// key frame's packets of another stream, or a delta frame's, do
    /// neither.
    #[test]
    fn held_key_frame_packets_reach_the_retransmission_requests() {
        use crate::app::media::nack::{NackParams, NackRequester};
        let mut v = viewer(None, &[]);
        v.playout = Playout::new(PlayoutParams {
            decode: Decode::Reference,
            ..v.playout_params()
        });
        let mut r = NackRequester::new(NackParams {
            retries: 10,
            default_rtt: ms(100),
        });
        let mut ask = Vec::new();
        assert!(!r.on_gap(ms(0), 3, 2, &mut ask));
        v.nack = Some(r);
        let key = |index, at, seq, first, marker| Held {
            first,
            frame: Some(FrameTag {
                key: true,
                ..tag(index, 2)
            }),
            ..held(at, seq, None, marker)
        };
        let waiting = |v: &Viewer| v.nack.as_ref().map(|r| (r.waiting(), r.stats.given_up));
        // Another stream's key frame, and a delta frame: nothing.
        v.take_held(
            &[key(0, 10, 5, true, false), key(0, 11, 6, false, true)],
            8,
            0,
        );
        v.take_held(
            &[Held {
                frame: Some(tag(1, 1)),
                ..held(50, 5, None, true)
            }],
            7,
            0,
        );
        assert_eq!(waiting(&v), Some((2, 0)));
        // The key frame's first packet: not complete yet, nothing given up.
        v.take_held(&[key(2, 90, 7, true, false)], 7, 6);
        assert_eq!(waiting(&v), Some((2, 0)));
        v.take_held(&[key(2, 91, 8, false, true)], 7, 7);
        assert_eq!(waiting(&v), Some((0, 2)));
        // A first packet is noted whatever the decoding: a gap that would
        // overflow the list gives up the packets before it instead.
        let mut v = viewer(None, &[]);
        let mut r = NackRequester::new(NackParams {
            retries: 10,
            default_rtt: ms(100),
        });
        assert!(!r.on_gap(ms(0), 50, 10, &mut ask));
        v.nack = Some(r);
        v.take_held(&[key(0, 30, 100, true, false)], 7, 99);
        let r = v.nack.as_mut().expect("set");
        let n = crate::app::media::nack::MAX_LIST as u64 - 5;
        assert!(!r.on_gap(ms(40), 101, n, &mut ask));
        assert_eq!((r.waiting() as u64, r.stats.given_up), (n, 10));
    }

    /// Frames 40 ms apart, played 100 ms after capture: 0 in 30 ms
    /// (played), 1 in 110 ms (late), 2 in 80 ms and 4 in 40 ms (played), 3
    /// one of its two packets (lost).
    const FIVE: [(u64, u32, u32); 5] = [
        (30, 0, 1),
        (150, 1, 1),
        (160, 2, 1),
        (170, 3, 2),
        (200, 4, 1),
    ];

    fn value(v: &[(&'static str, f64)], name: &str) -> f64 {
        v.iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name}"))
            .1
    }

    /// The frames' outcomes and delays, the loss-period levels (two single
    /// bad frames: level 1) and the good quality share, and for voice the
    /// E-model's inputs: the share of frames not played, their burst
    /// ratio, and mouth to ear as the playout delay plus G.729a's 20 ms
    /// frame and 5 ms look-ahead.
    #[test]
    fn the_table_counts_frames_and_scores_voice_from_them() {
        let end = ms(2_000);
        let v = viewer(None, &FIVE).stats(end, (&[], 0, 0)).values;
        let count = |n| value(&v, n);
        assert_eq!(
            [
                count("frames_played"),
                count("frames_late"),
                count("frames_lost")
            ],
            [3.0, 1.0, 1.0]
        );
        // Completed frames: 30, 110, 80 and 40 ms from capture.
        assert!((count("frame_delay_mean_ms") - 65.0).abs() < 0.1);
        assert!((count("frame_delay_max_ms") - 110.0).abs() < 0.2);
        assert!((count("playout_delay_mean_ms") - 100.0).abs() < 1e-9);
        assert_eq!(
            [
                count("frames_level_0"),
                count("frames_level_1"),
                count("frames_level_2")
            ],
            [3.0, 2.0, 0.0]
        );
        assert_eq!(count("good_quality_pct"), 100.0);
        assert!(
            v.iter().all(|(n, _)| *n != "mos"),
            "video has no E-model score"
        );

        let v = viewer(Some(CodecName::G729a), &FIVE)
            .stats(end, (&[], 0, 0))
            .values;
        let burst = burst_ratio(2, 2, 5);
        let r = EModel::call(125.0, 40.0, burst, 11.0, 19.0).r();
        assert_eq!(value(&v, "voice_loss_pct"), 40.0);
        assert_eq!(value(&v, "voice_burst_ratio"), burst);
        assert!((value(&v, "mouth_to_ear_ms") - 125.0).abs() < 1e-9);
        assert!((value(&v, "r_factor") - r).abs() < 1e-9);
        assert!((value(&v, "mos") - mos(r)).abs() < 1e-9);
    }

    /// No frame played: no playout delay to report, and R counts the loss
    /// and the codec's own 25 ms.
    #[test]
    fn with_no_frame_played_voice_scores_the_codec_delay_alone() {
        let v = viewer(Some(CodecName::G729a), &[(150, 0, 1)])
            .stats(ms(2_000), (&[], 0, 0))
            .values;
        assert_eq!(
            (value(&v, "frames_played"), value(&v, "frames_late")),
            (0.0, 1.0)
        );
        assert!(
            value(&v, "mouth_to_ear_ms").is_nan() && value(&v, "playout_delay_mean_ms").is_nan()
        );
        let r = EModel::call(25.0, 100.0, burst_ratio(1, 1, 1), 11.0, 19.0).r();
        assert!((value(&v, "r_factor") - r).abs() < 1e-9);
    }

    /// Packets still held (held.rs) are taken in before the counts: with
    /// frame 0 played and frame 1 late, frame 2's second packet, held at
    /// 196 ms (past its 180 ms playout time), completes it late instead of
    /// lost.
    #[test]
    fn held_packets_count_as_arrived() {
        let mut second = held(196, 3, None, true);
        second.frame = Some(tag(2, 2));
        let v = viewer(None, &[(30, 0, 1), (190, 1, 1), (195, 2, 2)])
            .stats(ms(2_000), (&[second], 0, 0))
            .values;
        assert_eq!(
            [
                value(&v, "frames_played"),
                value(&v, "frames_late"),
                value(&v, "frames_lost")
            ],
            [1.0, 2.0, 0.0]
        );
    }
}
