//! The media-scaling sender (MM_APP or MPEG_APP) as an application: a
//! frame source clocked by its media (MM_APP one packet per interval,
//! MPEG_APP a frame slot every 1/frame_rate with the frame's packets
//! back to back) at the level its rate controller chooses. The study's
//! receiver-driven control is the `scale` controller (`proto::cc::scale`),
//! whose sender half names the level outright; any other controller names
//! a rate, and the source takes the highest level whose rate on the wire
//! is within it (level 0 if none is). The controller stamps each packet;
//! its own pacing is not applied: packets leave when the media has them.
//! The receiving end is the generic feedback sink (`app::paced`).

use super::policy::{fragments, keeps, mm_interval, Frame, SCALES};
use crate::app::{Action, App, AppStats, PacketTemplate, StopRule};
use crate::net::{Packet, Payload};
use crate::proto::cc::{Departure, RateController};
use crate::sim::{Series, SimTime};

/// What the sender sends at each scale.
#[derive(Clone, Debug)]
pub enum Media {
    /// MM_APP: one packet of `packet_bytes` on the wire every interval.
    Mm {
        rates_bps: [f64; SCALES],
        packet_bytes: u32,
    },
    /// MPEG_APP: a frame slot every `slot`; the trace read as a loop.
    Mpeg {
        frames: Vec<Frame>,
        slot: SimTime,
        max_packet_bytes: u32,
        /// DSCP per frame type (I, P, B): application-layer marking; None
        /// keeps the flow's.
        frame_dscp: [Option<u8>; 3],
    },
}

/// The controller's timer token (the media's are its generations).
const CC_TIMER: u64 = u64::MAX;

pub struct ScalingSource {
    tpl: PacketTemplate,
    media: Media,
    stop: StopRule,
    cc: Box<dyn RateController>,
    /// Each level's rate on the wire, bit/s.
    levels_bps: [f64; SCALES],
    scale: u8,
    next_seq: u64,
    /// Frames read (MPEG: slots; MM: frames sent).
    frame: u64,
    last_sent: SimTime,
    /// Timer generation: a timer whose token is not this is stale.
    generation: u64,
    /// The controller's pending timer.
    cc_timer: Option<SimTime>,
    series_rows: usize,
    frames_sent: u64,
    frames_skipped: u64,
    /// Time-weighted scale: (scale x ns) so far, and since when.
    scale_area: f64,
    scale_since: SimTime,
    start: SimTime,
    series: Series,
}

impl ScalingSource {
    pub fn new(
        tpl: PacketTemplate,
        media: Media,
        stop: StopRule,
        cc: Box<dyn RateController>,
        levels_bps: [f64; SCALES],
    ) -> Self {
        ScalingSource {
            tpl,
            media,
            stop,
            cc,
            levels_bps,
            scale: 0,
            next_seq: 0,
            frame: 0,
            last_sent: SimTime::ZERO,
            generation: 0,
            cc_timer: None,
            series_rows: usize::MAX,
            frames_sent: 0,
            frames_skipped: 0,
            scale_area: 0.0,
            scale_since: SimTime::ZERO,
            start: SimTime::ZERO,
            series: Series::default(),
        }
    }

    /// The level the controller chose.
    fn chosen_level(&self) -> u8 {
        match self.cc.level() {
            Some(l) => l.min(SCALES - 1) as u8,
            None => {
                let target = self.cc.target_bps();
                (self.levels_bps.iter().rposition(|&r| r <= target)).unwrap_or(0) as u8
            }
        }
    }

    /// A data packet of `payload` bytes, stamped by the controller;
    /// `next_same_size` if the packet behind it in the frame is as large.
    fn packet(&mut self, now: SimTime, payload: u32, next_same_size: bool) -> Packet {
        let bytes =
            payload + crate::net::packet::IPV4_HEADER_BYTES + self.tpl.transport.header_bytes();
        let d = Departure {
            bytes,
            due: now,
            next_same_size,
        };
        let (stamp, _paced_at) = self.cc.on_send(now, d);
        let mut p = self.tpl.make(stamp.seq);
        self.next_seq += 1;
        p.size_bytes = bytes;
        p.app = Payload::new(stamp);
        p
    }

    /// Sends what the current slot holds and asks for the next slot.
    fn tick(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if !self.stop.allows(now, self.next_seq) {
            return;
        }
        let next = match &self.media {
            Media::Mm {
                rates_bps,
                packet_bytes,
            } => {
                let (rate, size) = (rates_bps[self.scale as usize], *packet_bytes);
                let payload = size
                    - crate::net::packet::IPV4_HEADER_BYTES
                    - self.tpl.transport.header_bytes();
                let p = self.packet(now, payload, true);
                out.push(Action::Send(p));
                self.frames_sent += 1;
                now + mm_interval(rate, size)
            }
            Media::Mpeg {
                frames,
                slot,
                max_packet_bytes,
                frame_dscp,
            } => {
                let f = frames[(self.frame % frames.len() as u64) as usize];
                let (slot, max) = (*slot, *max_packet_bytes);
                let dscp = frame_dscp[f.kind as usize];
                if keeps(self.scale, &f) {
                    let frags = fragments(f.bytes, max);
                    for (i, &payload) in frags.iter().enumerate() {
                        let same = frags.get(i + 1) == Some(&payload);
                        let mut p = self.packet(now, payload, same);
                        p.dscp = dscp.unwrap_or(p.dscp);
                        out.push(Action::Send(p));
                    }
                    self.frames_sent += 1;
                } else {
                    self.frames_skipped += 1;
                }
                now + slot
            }
        };
        self.frame += 1;
        self.last_sent = now;
        out.push(Action::Timer {
            at: next,
            token: self.generation,
        });
        // Sending may move the controller's timer (TFRC's no-feedback
        // timer starts with the first packet).
        self.arm_cc(out);
    }

    /// Arms the controller's timer if it has one due.
    fn arm_cc(&mut self, out: &mut Vec<Action>) {
        if let Some(at) = self.cc.deadline() {
            crate::app::arm_timer(&mut self.cc_timer, at, CC_TIMER, out);
        }
    }

    fn set_scale(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let scale = self.chosen_level();
        if scale == self.scale {
            return;
        }
        self.scale_area += self.scale as f64 * now.saturating_sub(self.scale_since).as_secs_f64();
        self.scale_since = now;
        self.scale = scale;
        self.series.push(now, scale as f64);
        if let Media::Mm {
            rates_bps,
            packet_bytes,
        } = &self.media
        {
            // The next frame at the new interval after the last one.
            let at =
                (self.last_sent + mm_interval(rates_bps[scale as usize], *packet_bytes)).max(now);
            self.generation += 1;
            out.push(Action::Timer {
                at,
                token: self.generation,
            });
        }
    }
}

impl App for ScalingSource {
    fn set_series(&mut self, rows: usize) {
        self.series.set_rows(rows);
        self.series_rows = rows;
    }
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.cc.start(now, self.series_rows);
        self.scale = self.chosen_level();
        self.start = now;
        self.scale_since = now;
        self.series.push(now, self.scale as f64);
        self.tick(now, out);
    }
    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        if token == CC_TIMER {
            crate::app::timer_fired(&mut self.cc_timer, now);
            if self.cc.deadline().is_some_and(|d| d <= now) {
                self.cc.on_timer(now);
            }
            self.set_scale(now, out);
            self.arm_cc(out);
        } else if token == self.generation {
            self.tick(now, out);
        }
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        // The media's clock, not the controller's pacing, sends: the
        // controller's next-send time is not used.
        if self.cc.on_feedback(now, &pkt.app, now).is_some() {
            self.set_scale(now, out);
            self.arm_cc(out);
        }
    }
    fn stats(&self, end: SimTime) -> Option<AppStats> {
        let area = self.scale_area
            + self.scale as f64 * end.saturating_sub(self.scale_since).as_secs_f64();
        let span = end.saturating_sub(self.start).as_secs_f64();
        Some(AppStats {
            table: "media_scaling",
            flow: self.tpl.flow,
            values: vec![
                ("frames_sent", self.frames_sent as f64),
                ("frames_skipped", self.frames_skipped as f64),
                ("packets_sent", self.next_seq as f64),
                (
                    "mean_scale",
                    if span > 0.0 { area / span } else { f64::NAN },
                ),
                ("final_scale", self.scale as f64),
            ],
            series: vec![("scale", self.series.points().to_vec())],
        })
    }
}
