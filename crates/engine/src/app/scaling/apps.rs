//! The media-scaling sender (MM_APP or MPEG_APP) and receiver as
//! applications: the sender sends at its current scale and switches as soon
//! as a request arrives; the receiver runs the [`ScaleControl`] and sends a
//! request whenever the scale changes.

use super::control::ScaleControl;
use super::policy::{fragments, keeps, mm_interval, Frame, SCALES};
use crate::app::{Action, App, AppStats, PacketTemplate, StopRule};
use crate::net::Packet;
use crate::net::{AppPayload, Payload};
use crate::sim::{Series, SimTime};

/// A media-scaling data packet: the sender's scale, the frame it belongs
/// to, and the echo of the receiver's last request (its send time, and how
/// long the sender held it before this packet).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaledMedia {
    pub scale: u8,
    pub frame: u32,
    pub echo: Option<(SimTime, SimTime)>,
}

/// A media-scaling receiver's request for a scale, stamped with its send
/// time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleRequest {
    pub scale: u8,
    pub sent_at: SimTime,
}

impl AppPayload for ScaledMedia {
    crate::payload_eq!();
}
impl AppPayload for ScaleRequest {
    crate::payload_eq!();
}

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

pub struct ScalingSource {
    tpl: PacketTemplate,
    media: Media,
    stop: StopRule,
    scale: u8,
    next_seq: u64,
    /// Frames read (MPEG: slots; MM: frames sent).
    frame: u64,
    last_sent: SimTime,
    /// Timer generation: a timer whose token is not this is stale.
    generation: u64,
    /// The last request: its send time and when it arrived.
    last_request: Option<(SimTime, SimTime)>,
    frames_sent: u64,
    frames_skipped: u64,
    /// Time-weighted scale: (scale x ns) so far, and since when.
    scale_area: f64,
    scale_since: SimTime,
    start: SimTime,
    series: Series,
}

impl ScalingSource {
    pub fn new(tpl: PacketTemplate, media: Media, stop: StopRule, initial_scale: u8) -> Self {
        ScalingSource {
            tpl,
            media,
            stop,
            scale: initial_scale,
            next_seq: 0,
            frame: 0,
            last_sent: SimTime::ZERO,
            generation: 0,
            last_request: None,
            frames_sent: 0,
            frames_skipped: 0,
            scale_area: 0.0,
            scale_since: SimTime::ZERO,
            start: SimTime::ZERO,
            series: Series::default(),
        }
    }

    fn packet(&mut self, now: SimTime, payload: u32) -> Packet {
        let mut p = self.tpl.make(self.next_seq);
        self.next_seq += 1;
        p.size_bytes = payload + crate::net::packet::IPV4_HEADER_BYTES + p.transport.header_bytes();
        p.app = Payload::new(ScaledMedia {
            scale: self.scale,
            frame: self.frame as u32,
            echo: self
                .last_request
                .map(|(ts, at)| (ts, now.saturating_sub(at))),
        });
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
                let p = self.packet(now, payload);
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
                    for payload in fragments(f.bytes, max) {
                        let mut p = self.packet(now, payload);
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
    }

    fn set_scale(&mut self, now: SimTime, scale: u8, out: &mut Vec<Action>) {
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
    }
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.start = now;
        self.scale_since = now;
        self.series.push(now, self.scale as f64);
        self.tick(now, out);
    }
    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        if token == self.generation {
            self.tick(now, out);
        }
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Some(&ScaleRequest { scale, sent_at }) = pkt.app.get() {
            self.last_request = Some((sent_at, now));
            self.set_scale(now, scale, out);
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

pub struct ScalingReceiver {
    /// Template of the requests (to the sender).
    tpl: PacketTemplate,
    /// The data flow's id (for the report).
    data_flow: u32,
    control: ScaleControl,
    next_seq: u64,
    /// A time-out check is pending at this time.
    timer_at: Option<SimTime>,
    series: Series,
}

impl ScalingReceiver {
    pub fn new(tpl: PacketTemplate, data_flow: u32, control: ScaleControl) -> Self {
        ScalingReceiver {
            tpl,
            data_flow,
            control,
            next_seq: 0,
            timer_at: None,
            series: Series::default(),
        }
    }

    fn request(&mut self, now: SimTime, scale: u8, out: &mut Vec<Action>) {
        let mut p = self.tpl.make(self.next_seq);
        self.next_seq += 1;
        p.app = Payload::new(ScaleRequest {
            scale,
            sent_at: now,
        });
        out.push(Action::Send(p));
        self.series.push(now, scale as f64);
    }

    /// One pending timer at most, at the control's deadline (lazily moved:
    /// a timer that fires early re-arms at the deadline).
    fn arm(&mut self, out: &mut Vec<Action>) {
        if let (None, Some(d)) = (self.timer_at, self.control.deadline()) {
            self.timer_at = Some(d);
            out.push(Action::Timer { at: d, token: 0 });
        }
    }
}

impl App for ScalingReceiver {
    fn set_series(&mut self, rows: usize) {
        self.series.set_rows(rows);
    }
    fn on_start(&mut self, now: SimTime, _out: &mut Vec<Action>) {
        self.control.start(now);
        self.series.push(now, self.control.scale() as f64);
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Some(ScaledMedia { echo: Some(e), .. }) = pkt.app.get() {
            let (sent_at, held) = *e;
            let rtt = now.saturating_sub(sent_at).saturating_sub(held);
            self.control.rtt_sample(rtt);
        }
        if let Some(s) = self.control.on_packet(now, pkt.seq) {
            self.request(now, s, out);
        }
        self.arm(out);
    }
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        self.timer_at = None;
        if let Some(s) = self.control.on_timer(now) {
            self.request(now, s, out);
        }
        self.arm(out);
    }
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        let c = &self.control.counts;
        let srtt = self
            .control
            .srtt()
            .map_or(f64::NAN, |t| t.as_secs_f64() * 1e3);
        Some(AppStats {
            table: "media_scaling",
            flow: self.data_flow,
            values: vec![
                ("missing_packets", c.missing_packets as f64),
                ("loss_indications", c.loss_indications as f64),
                ("timeouts", c.timeouts as f64),
                ("decreases", c.decreases as f64),
                ("increases", c.increases as f64),
                ("requests_sent", self.next_seq as f64),
                ("srtt_ms", srtt),
                (
                    "control_rtt_ms",
                    self.control.control_rtt().as_secs_f64() * 1e3,
                ),
            ],
            series: vec![("requested_scale", self.series.points().to_vec())],
        })
    }
}
