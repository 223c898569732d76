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
use crate::proto::ppacc::endpoints::{PpaccSender, Report};
use crate::proto::tfrc::{DataHeader, Feedback, TfrcConfig, TfrcSender};
use crate::sim::{Series, SimTime};
use std::collections::VecDeque;

/// What an SVC data packet carries besides TFRC's header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SvcInfo {
    pub tfrc: DataHeader,
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
    /// PPACC's pair tag: 0 alone, 1 first of a pair, 2 second.
    pub pair: u8,
    /// The FEC block and the packet's place in it, if FEC is on.
    pub fec: Option<(u32, u16)>,
}

/// A repair packet: its transport header, its block, its place in the
/// block (k and up), and the block's media packets (simulation
/// bookkeeping: what the decoder would rebuild from the repair bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct RepairInfo {
    pub tfrc: DataHeader,
    pub pair: u8,
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

/// The rate control pacing the send buffer.
pub enum Transport {
    Tfrc(TfrcSender),
    Ppacc(PpaccSender),
}

/// How the source starts its transport (at the flow's start).
#[derive(Clone, Debug)]
pub enum TransportSetup {
    Tfrc(TfrcConfig),
    Ppacc {
        cfg: crate::proto::ppacc::PpaccConfig,
        capacity_bps: f64,
        initial_bps: f64,
        rng: crate::sim::SimRng,
    },
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
const NOFEEDBACK: u64 = 1;
const RELEASE: u64 = 2;

pub struct SvcSource {
    tpl: PacketTemplate,
    setup: Option<TransportSetup>,
    pk: Packetiser,
    /// The NAL units at hand (the trace, or the current GOP), and where
    /// more come from.
    nals: Vec<Nal>,
    feed: NalFeed,
    gop_len: SimTime,
    idr_gops: u32,
    stop: SimTime,
    start: SimTime,
    tp: Option<Transport>,
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
        setup: TransportSetup,
        pk: Packetiser,
        mut feed: NalFeed,
        fps: f64,
        idr_gops: u32,
        stop: SimTime,
    ) -> Self {
        SvcSource {
            idr_gops,
            tpl,
            setup: Some(setup),
            pk,
            nals: feed.initial(),
            feed,
            gop_len: SimTime::from_secs_f64(GOP as f64 / fps),
            stop,
            start: SimTime::ZERO,
            tp: None,
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

    fn tp(&mut self) -> &mut Transport {
        self.tp.as_mut().expect("started")
    }

    /// The transport's rate, bytes/s.
    fn rate_bytes(&mut self) -> f64 {
        match self.tp() {
            Transport::Tfrc(t) => t.rate(),
            Transport::Ppacc(p) => p.target_bps() / 8.0,
        }
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
                let gop_len = self.gop_len;
                if let Transport::Ppacc(p) = self.tp() {
                    p.control.on_gop(now, gop_len);
                }
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
                tfrc: DataHeader {
                    seq: 0,
                    sent_at: SimTime::ZERO,
                    rtt: SimTime::ZERO,
                },
                frame: n.frame,
                s: n.s,
                q: n.q,
                frag: i as u16,
                frags: frags as u16,
                nal_bytes: bytes,
                frame_time: at,
                pair: 0,
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
                tfrc: DataHeader {
                    seq: 0,
                    sent_at: SimTime::ZERO,
                    rtt: SimTime::ZERO,
                },
                pair: 0,
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
            let last = self.next_send;
            let (h, pair, next) = match self.tp() {
                Transport::Tfrc(t) => {
                    let h = t.on_send(now);
                    (h, 0, now.max(last) + t.interval())
                }
                Transport::Ppacc(pp) => {
                    let (tag, next) = pp.on_send(now, size, next_equal);
                    let h = DataHeader {
                        seq: tag.seq,
                        sent_at: now,
                        rtt: SimTime::ZERO,
                    };
                    (h, tag.pair, next)
                }
            };
            p.seq = h.seq;
            if let Some(info) = p.app.get_mut::<SvcInfo>() {
                (info.tfrc, info.pair) = (h, pair);
                self.media_packets += 1;
            } else if let Some(r) = p.app.get_mut::<RepairInfo>() {
                (r.tfrc, r.pair) = (h, pair);
                self.repair_packets += 1;
            }
            out.push(Action::Send(p));
            self.next_send = next;
        }
        if !self.buffer.is_empty() {
            self.arm(SEND, self.next_send.max(now), out);
        }
        if let Transport::Tfrc(t) = self.tp() {
            let nf = t.nofeedback_deadline();
            self.arm(NOFEEDBACK, nf, out);
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
        let rows = self.series_rows;
        self.tp = Some(match self.setup.take().expect("started once") {
            TransportSetup::Tfrc(cfg) => {
                let mut t = TfrcSender::new(cfg, now);
                t.rate_series.set_rows(rows);
                Transport::Tfrc(t)
            }
            TransportSetup::Ppacc {
                cfg,
                capacity_bps,
                initial_bps,
                rng,
            } => {
                let mut p = PpaccSender::new(cfg, capacity_bps, initial_bps, rng);
                p.control.target_series.set_rows(rows);
                Transport::Ppacc(p)
            }
        });
        self.next_send = now;
        self.release(now, out);
        self.send_due(now, out);
    }
    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        crate::app::timer_fired(&mut self.pending[token as usize % 3], now);
        match (token, self.tp()) {
            (NOFEEDBACK, Transport::Tfrc(t)) => t.on_nofeedback(now),
            (RELEASE, _) => self.release(now, out),
            _ => {}
        }
        self.send_due(now, out);
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        let next = self.next_send;
        match self.tp() {
            Transport::Tfrc(t) => {
                let Some(fb) = pkt.app.get::<Feedback>() else {
                    return;
                };
                self.next_send = t.on_feedback_paced(now, fb, next);
            }
            Transport::Ppacc(p) => {
                let Some(r) = pkt.app.get::<Report>() else {
                    return;
                };
                p.on_report(now, r);
            }
        }
        self.send_due(now, out);
    }
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        let o = self.offered;
        let (packets, rate, series) = match self.tp.as_ref()? {
            Transport::Tfrc(t) => (t.stats.packets, t.rate() * 8.0, t.rate_series.scaled(8.0)),
            Transport::Ppacc(p) => (
                p.control.packets,
                p.target_bps(),
                p.control.target_series.points().to_vec(),
            ),
        };
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
