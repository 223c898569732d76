//! The SVC sender over TFRC or PPACC: at each GOP start it picks the
//! layers that fit the transport's rate (less what still waits in the send
//! buffer), packetises each frame's NAL units at the frame's time into the
//! send buffer (RTP-sized packets, base layer AF11, enhancement AF12), and
//! the transport paces the buffer out (PPACC in packet pairs). Packets are dated by their frame's time, so the
//! wait in the send buffer counts in their one-way delay.

use super::trace::{select, Nal, NalFeed, Selection, GOP};
use crate::app::{Action, App, AppStats, PacketTemplate};
use crate::net::Packet;
use crate::net::{AppPayload, Payload};
use crate::proto::cc::{Departure, RateController, Stamp};
use crate::sim::{Series, SimTime};
use std::collections::VecDeque;

/// What an SVC data packet carries besides its controller's stamp.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SvcInfo {
    /// Set when the packet leaves the send buffer.
    pub stamp: Stamp,
    pub frame: u32,
    pub s: u8,
    pub q: u8,
    /// Fragment index, fragments of the NAL unit, and the NAL unit's
    /// (possibly cut) bytes.
    pub frag: u16,
    pub frags: u16,
    pub nal_bytes: u32,
    /// The frame's presentation time (for the playout deadline).
    pub frame_time: SimTime,
    /// The FEC block and the packet's place in it, if FEC is on.
    pub fec: Option<(u32, u16)>,
}

/// A repair packet: its transport header, its block, its place in the
/// block (k and up), and the block's media packets (simulation
/// bookkeeping: what the decoder would rebuild from the repair bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct RepairInfo {
    pub stamp: Stamp,
    pub block: u32,
    pub index: u16,
    pub media: std::sync::Arc<Vec<(SvcInfo, u32)>>,
}

impl AppPayload for SvcInfo {
    crate::payload_eq!();
}
impl AppPayload for RepairInfo {
    crate::payload_eq!();
}

/// FEC settings of a source.
#[derive(Clone, Copy, Debug)]
pub struct FecSetup {
    pub code: super::fec::FecCode,
    pub dscp: u8,
}

/// Packetisation settings.
#[derive(Clone, Debug)]
pub struct Packetiser {
    /// Payload bytes per packet (the packet size less IP, UDP and RTP).
    pub payload: u32,
    /// IP + UDP + RTP header bytes.
    pub headers: u32,
    pub base_dscp: u8,
    pub enhancement_dscp: u8,
}

/// Timer tokens.
const SEND: u64 = 0;
/// The controller's own timer (TFRC's no-feedback timer).
const CC_TIMER: u64 = 1;
const RELEASE: u64 = 2;

pub struct SvcSource {
    tpl: PacketTemplate,
    /// The rate controller pacing the send buffer.
    cc: Box<dyn RateController>,
    pk: Packetiser,
    /// The NAL units at hand (the trace, or the current GOP), and where
    /// more come from.
    nals: Vec<Nal>,
    feed: NalFeed,
    gop_len: SimTime,
    idr_gops: u32,
    stop: SimTime,
    start: SimTime,
    started: bool,
    /// NAL units not yet released, by frame; index of the next one.
    next_nal: usize,
    /// The selection of the current GOP and its number.
    gop: Option<(u32, Selection)>,
    /// Packets waiting to be sent (the send buffer).
    buffer: VecDeque<Packet>,
    buffer_bytes: u64,
    next_send: SimTime,
    pending: [Option<SimTime>; 3],
    /// Bytes handed to the buffer per (spatial, quality) layer.
    pub offered: [[u64; 2]; 2],
    /// Bytes of NAL units left out because the buffer was full, and its size.
    skipped_bytes: u64,
    buffer_limit: u64,
    fec: Option<FecSetup>,
    /// The media packets of the FEC block being filled, and its number.
    block: Vec<(SvcInfo, u32)>,
    block_id: u32,
    /// Media packets sent, and repair packets made.
    media_packets: u64,
    repair_packets: u64,
    selections: Series,
    series_rows: usize,
}

impl SvcSource {
    pub fn new(
        tpl: PacketTemplate,
        cc: Box<dyn RateController>,
        pk: Packetiser,
        mut feed: NalFeed,
        fps: f64,
        idr_gops: u32,
        stop: SimTime,
    ) -> Self {
        SvcSource {
            idr_gops,
            tpl,
            cc,
            pk,
            nals: feed.initial(),
            feed,
            gop_len: SimTime::from_secs_f64(GOP as f64 / fps),
            stop,
            start: SimTime::ZERO,
            started: false,
            next_nal: 0,
            gop: None,
            buffer: VecDeque::new(),
            buffer_bytes: 0,
            next_send: SimTime::ZERO,
            pending: [None; 3],
            offered: [[0; 2]; 2],
            skipped_bytes: 0,
            buffer_limit: u64::MAX,
            fec: None,
            block: Vec::new(),
            block_id: 0,
            media_packets: 0,
            repair_packets: 0,
            selections: Series::default(),
            series_rows: usize::MAX,
        }
    }

    /// Bounds the send buffer (`send_buffer_bytes`).
    pub fn with_buffer_limit(mut self, bytes: u64) -> Self {
        self.buffer_limit = bytes;
        self
    }

    /// Adds FEC over the media packets.
    pub fn with_fec(mut self, fec: Option<FecSetup>) -> Self {
        self.fec = fec;
        self
    }

    /// The controller's target rate, bytes/s.
    fn rate_bytes(&mut self) -> f64 {
        self.cc.target_bps() / 8.0
    }

    fn arm(&mut self, token: u64, at: SimTime, out: &mut Vec<Action>) {
        crate::app::arm_timer(&mut self.pending[token as usize], at, token, out);
    }

    /// Moves the frames due by `now` into the send buffer, choosing the
    /// layers at each GOP start.
    /// The next NAL unit not released yet (the next GOP's first, once the
    /// current one is done).
    fn peek(&mut self) -> Option<Nal> {
        if self.next_nal == self.nals.len() && self.feed.next_gop(&mut self.nals) {
            self.next_nal = 0;
        }
        self.nals.get(self.next_nal).copied()
    }

    fn release(&mut self, now: SimTime, out: &mut Vec<Action>) {
        while let Some(n) = self.peek() {
            let at = self.start + n.time;
            if at > now || at >= self.stop {
                break;
            }
            let g = n.frame / GOP;
            if self.gop.is_none_or(|(cur, _)| cur != g) {
                self.cc.on_frame_group(now, self.gop_len);
                let sel = self.choose(g);
                self.gop = Some((g, sel));
                let point = (sel.s_max * 4 + sel.t_max) as f64 + sel.fgs;
                self.selections.push(now, point);
            }
            let sel = self.gop.expect("set").1;
            self.packetise(&n, sel.bytes_of(&n), at);
            self.next_nal += 1;
        }
        if let Some(n) = self.peek() {
            let at = self.start + n.time;
            if at < self.stop {
                self.arm(RELEASE, at, out);
            }
        }
    }

    /// The GOP's layers within the rate over a GOP, less the backlog. A
    /// higher spatial layer is taken up only at an IDR GOP (before it, its
    /// data could not be decoded).
    fn choose(&mut self, g: u32) -> Selection {
        let rate_bytes = self.rate_bytes();
        let budget = rate_bytes * self.gop_len.as_secs_f64() - self.buffer_bytes as f64;
        let units: Vec<Nal> = (self.nals.iter())
            .filter(|n| n.frame / GOP == g)
            .copied()
            .collect();
        let idr = g % self.idr_gops.max(1) == 0;
        let cap = match self.gop {
            Some((_, prev)) if !idr => prev.s_max,
            _ => u8::MAX,
        };
        select(&units, budget.max(0.0), cap)
    }

    fn packetise(&mut self, n: &Nal, bytes: u32, at: SimTime) {
        if bytes == 0 {
            return;
        }
        if self.buffer_bytes + bytes as u64 > self.buffer_limit {
            self.skipped_bytes += bytes as u64;
            return;
        }
        self.offered[n.s as usize][n.q as usize] += bytes as u64;
        let frags = bytes.div_ceil(self.pk.payload);
        let dscp = if n.s == 0 && n.q == 0 {
            self.pk.base_dscp
        } else {
            self.pk.enhancement_dscp
        };
        for i in 0..frags {
            let payload = (bytes - i * self.pk.payload).min(self.pk.payload);
            let mut p = self.tpl.make(0);
            p.size_bytes = payload + self.pk.headers;
            p.dscp = dscp;
            p.created_at = at;
            let info = SvcInfo {
                stamp: Stamp::default(),
                frame: n.frame,
                s: n.s,
                q: n.q,
                frag: i as u16,
                frags: frags as u16,
                nal_bytes: bytes,
                frame_time: at,
                fec: self.fec.map(|_| (self.block_id, self.block.len() as u16)),
            };
            p.app = Payload::new(info);
            self.push(p);
            if self.fec.is_some() {
                self.block.push((info, payload));
                self.close_block(at);
            }
        }
    }

    fn push(&mut self, p: Packet) {
        self.buffer_bytes += p.size_bytes as u64;
        self.buffer.push_back(p);
    }

    /// Once the block holds k media packets, its n - k repair packets (as
    /// large as its largest packet) follow them into the buffer.
    fn close_block(&mut self, at: SimTime) {
        let Some(fec) = self.fec else { return };
        let (k, n) = (fec.code.k(), fec.code.n());
        if (self.block.len() as u32) < k {
            return;
        }
        let media = std::sync::Arc::new(std::mem::take(&mut self.block));
        let size = media.iter().map(|m| m.1).max().unwrap_or(0) + self.pk.headers;
        for index in k..n {
            let mut p = self.tpl.make(0);
            p.size_bytes = size;
            p.dscp = fec.dscp;
            p.created_at = at;
            p.app = Payload::new(RepairInfo {
                stamp: Stamp::default(),
                block: self.block_id,
                index: index as u16,
                media: media.clone(),
            });
            self.push(p);
        }
        self.block_id += 1;
    }

    /// Sends what the rate allows from the buffer.
    fn send_due(&mut self, now: SimTime, out: &mut Vec<Action>) {
        while self.next_send <= now && !self.buffer.is_empty() {
            let mut p = self.buffer.pop_front().expect("not empty");
            self.buffer_bytes -= p.size_bytes as u64;
            let size = p.size_bytes;
            let next_equal = self.buffer.front().is_some_and(|n| n.size_bytes == size);
            let d = Departure {
                bytes: size,
                due: self.next_send,
                next_same_size: next_equal,
            };
            let (stamp, next) = self.cc.on_send(now, d);
            p.seq = stamp.seq;
            if let Some(info) = p.app.get_mut::<SvcInfo>() {
                info.stamp = stamp;
                self.media_packets += 1;
            } else if let Some(r) = p.app.get_mut::<RepairInfo>() {
                r.stamp = stamp;
                self.repair_packets += 1;
            }
            out.push(Action::Send(p));
            self.next_send = next;
        }
        if !self.buffer.is_empty() {
            self.arm(SEND, self.next_send.max(now), out);
        }
        if let Some(at) = self.cc.deadline() {
            self.arm(CC_TIMER, at, out);
        }
    }
}

impl App for SvcSource {
    fn set_series(&mut self, rows: usize) {
        self.series_rows = rows;
        self.selections.set_rows(rows);
    }
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.start = now;
        self.started = true;
        self.cc.start(now, self.series_rows);
        self.next_send = now;
        self.release(now, out);
        self.send_due(now, out);
    }
    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        crate::app::timer_fired(&mut self.pending[token as usize % 3], now);
        match token {
            CC_TIMER => self.cc.on_timer(now),
            RELEASE => self.release(now, out),
            _ => {}
        }
        self.send_due(now, out);
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        let Some(next) = self.cc.on_feedback(now, &pkt.app, self.next_send) else {
            return;
        };
        self.next_send = next;
        self.send_due(now, out);
    }
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        let o = self.offered;
        if !self.started {
            return None;
        }
        let (packets, rate, series) = (
            self.cc.packets(),
            self.cc.target_bps(),
            self.cc.rate_series(),
        );
        Some(AppStats {
            table: "svc",
            flow: self.tpl.flow,
            values: vec![
                ("packets_sent", packets as f64),
                ("media_packets", self.media_packets as f64),
                ("fec_repair_packets", self.repair_packets as f64),
                ("offered_bytes_base", o[0][0] as f64),
                ("offered_bytes_s0_fgs", o[0][1] as f64),
                ("offered_bytes_s1", o[1][0] as f64),
                ("offered_bytes_s1_fgs", o[1][1] as f64),
                ("final_rate_bps", rate),
                ("buffer_bytes_at_end", self.buffer_bytes as f64),
                ("skipped_bytes", self.skipped_bytes as f64),
            ],
            series: vec![
                ("rate_bps", series),
                ("operating_point", self.selections.points().to_vec()),
            ],
        })
    }
}
