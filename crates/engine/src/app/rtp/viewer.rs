//! The receiving member's side of frame-based media: the playout buffer
//! (`playout`) and the per-packet feedback it returns (`feedback` of the
//! sending member), in the flow "<session>/<receiver>/fb".

use super::held::Held;
use crate::app::media::audio::VoiceCodec;
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
pub struct Viewer {
    pub playout: Playout,
    pub voice: Option<VoiceCodec>,
    /// The played stream's RTP flow (the table row).
    pub stream: FlowId,
}

impl Viewer {
    /// The receiver's playout columns of the `media` table, with the
    /// packets still `held` (held.rs) taken in.
    pub fn stats(&self, end: SimTime, held: &[Held]) -> AppStats {
        let mut p = self.playout.clone();
        for (h, tag) in held.iter().filter_map(|h| Some((h, h.frame.as_ref()?))) {
            p.on_packet(h.now, tag);
        }
        p.finish(end);
        let s = &p.stats;
        let d = s.frame_delay.summary_ns();
        let ms = |ns: f64| ns / 1e6;
        let mut values = vec![
            ("frames_played", s.played as f64),
            ("frames_late", s.late as f64),
            ("frames_lost", s.lost as f64),
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
