//! The engine's side of RMTP: one application per role wrapping the
//! protocol's state machine (proto/rmtp), its timers and packets.

use crate::app::{Action, App, AppStats, PacketTemplate};
use crate::net::{AppPayload, Packet, Payload};
use crate::proto::rmtp::seqset::hack_payload_bytes;
use crate::proto::rmtp::{HackReport, RmtpDr, RmtpReceiver, RmtpSender};
use crate::sim::SimTime;
use crate::wire::rmtp;

/// IPv4 and UDP headers under every RMTP packet.
const UDP_IP_BYTES: u32 = 28;

/// `role` column of the rmtp table.
const SENDER: f64 = 0.0;
const DR: f64 = 1.0;
const RECEIVER: f64 = 2.0;

const HACK_TIMER: u64 = 0;
const REPAIR_TIMER: u64 = 1;

/// Timers of one periodic duty: its period and the first firing's offset
/// (random, so that members do not all report at once).
#[derive(Clone, Copy, Debug)]
pub struct Period {
    pub every: SimTime,
    pub offset: SimTime,
}

/// RMTP data (the packet's `seq`; `created_at` is its first transmission):
/// `retx` for a sender's retransmission or a DR's local repair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RmtpData {
    pub retx: bool,
}

/// An RMTP HACK from child `child` of the DR or sender it goes to.
#[derive(Clone, Debug, PartialEq)]
pub struct RmtpHack {
    pub child: u32,
    pub report: HackReport,
}

impl AppPayload for RmtpData {
    fn emit(&self, p: &Packet, _now: SimTime, buf: &mut [u8]) {
        if buf.len() >= rmtp::HEADER_LEN {
            rmtp::RmtpHeader {
                kind: if self.retx { rmtp::REPAIR } else { rmtp::DATA },
                child: 0,
                seq: p.seq,
                word: (p.created_at.as_nanos() / 1_000_000) as u32,
            }
            .emit(buf);
        }
    }
    crate::payload_eq!();
}

impl AppPayload for RmtpHack {
    fn emit(&self, _p: &Packet, _now: SimTime, buf: &mut [u8]) {
        if buf.len() >= rmtp::HEADER_LEN {
            let r = &self.report;
            rmtp::RmtpHeader {
                kind: rmtp::HACK,
                child: self.child as u16,
                seq: r.base,
                word: (r.end - r.base) as u32,
            }
            .emit(buf);
            rmtp::emit_bitmap(r.base, r.end, |s| r.has(s), &mut buf[rmtp::HEADER_LEN..]);
        }
    }
    crate::payload_eq!();
}

/// A HACK from child `child` with `report`, sized on the wire.
fn hack_packet(tpl: &PacketTemplate, seq: u64, child: u32, report: HackReport) -> Packet {
    let mut p = tpl.make(seq);
    p.size_bytes = UDP_IP_BYTES + hack_payload_bytes(&report);
    p.app = Payload::new(RmtpHack { child, report });
    p
}

/// A data packet (or a repair) of `seq`, first sent at `first_sent`.
fn data_packet(tpl: &PacketTemplate, seq: u64, first_sent: SimTime, retx: bool) -> Packet {
    let mut p = tpl.make(seq);
    p.created_at = first_sent;
    p.app = Payload::new(RmtpData { retx });
    p
}

/// What a receiver (or a DR as a receiver) reports.
fn receiver_values(rx: &RmtpReceiver, since: SimTime, end: SimTime) -> Vec<(&'static str, f64)> {
    let span = end.saturating_sub(since).as_secs_f64();
    let gaps = rx.end() - rx.delivered - rx.waiting();
    vec![
        ("delivered", rx.delivered as f64),
        (
            "throughput_pps",
            if span > 0.0 {
                rx.delivered as f64 / span
            } else {
                f64::NAN
            },
        ),
        (
            "delay_mean_s",
            if rx.delivered > 0 {
                rx.delay_sum_s / rx.delivered as f64
            } else {
                f64::NAN
            },
        ),
        ("waiting_at_end", rx.waiting() as f64),
        ("gaps_at_end", gaps as f64),
        ("highest_received", rx.end() as f64),
        ("duplicates", rx.duplicates as f64),
        ("recovered", rx.recovered as f64),
    ]
}

pub struct RmtpReceiverApp {
    pub rx: RmtpReceiver,
    pub hack: PacketTemplate,
    /// Its index among its DR's children.
    pub child: u32,
    pub period: Period,
    pub start: SimTime,
    pub hacks_sent: u64,
}

impl App for RmtpReceiverApp {
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        out.push(Action::Timer {
            at: now + self.period.offset,
            token: HACK_TIMER,
        });
    }
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        // Nothing to acknowledge before the first packet.
        if self.rx.end() > 0 {
            let p = hack_packet(&self.hack, self.hacks_sent, self.child, self.rx.report());
            self.hacks_sent += 1;
            out.push(Action::Send(p));
        }
        out.push(Action::Timer {
            at: now + self.period.every,
            token: HACK_TIMER,
        });
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, _out: &mut Vec<Action>) {
        if let Some(&RmtpData { retx }) = pkt.app.get() {
            self.rx.on_data(now, pkt.seq, pkt.created_at, retx);
        }
    }
    fn stats(&self, end: SimTime) -> Option<AppStats> {
        let mut values = vec![("role", RECEIVER)];
        values.extend(receiver_values(&self.rx, self.start, end));
        values.push(("hacks_sent", self.hacks_sent as f64));
        Some(AppStats {
            table: "rmtp",
            flow: self.hack.flow,
            values,
            series: vec![],
        })
    }
}

pub struct RmtpDrApp {
    pub dr: RmtpDr,
    /// Local repairs to the DR's children (their group).
    pub repair: PacketTemplate,
    /// HACKs to the parent (the sender or a DR).
    pub hack: PacketTemplate,
    pub child: u32,
    pub hack_period: Period,
    pub repair_period: Period,
    pub start: SimTime,
    pub hacks_sent: u64,
}

impl App for RmtpDrApp {
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        out.push(Action::Timer {
            at: now + self.hack_period.offset,
            token: HACK_TIMER,
        });
        out.push(Action::Timer {
            at: now + self.repair_period.offset,
            token: REPAIR_TIMER,
        });
    }
    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        if token == HACK_TIMER {
            if self.dr.rx.end() > 0 {
                let p = hack_packet(&self.hack, self.hacks_sent, self.child, self.dr.report());
                self.hacks_sent += 1;
                out.push(Action::Send(p));
            }
            out.push(Action::Timer {
                at: now + self.hack_period.every,
                token,
            });
        } else {
            for (seq, first_sent) in self.dr.repair_round(now) {
                out.push(Action::Send(data_packet(
                    &self.repair,
                    seq,
                    first_sent,
                    true,
                )));
            }
            out.push(Action::Timer {
                at: now + self.repair_period.every,
                token,
            });
        }
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, _out: &mut Vec<Action>) {
        if let Some(&RmtpData { retx }) = pkt.app.get() {
            self.dr.on_data(now, pkt.seq, pkt.created_at, retx);
        } else if let Some(h) = pkt.app.get::<RmtpHack>() {
            self.dr
                .on_child_hack(now, h.child as usize, h.report.clone());
        }
    }
    fn stats(&self, end: SimTime) -> Option<AppStats> {
        let mut values = vec![("role", DR)];
        values.extend(receiver_values(&self.dr.rx, self.start, end));
        values.extend([
            ("hacks_sent", self.hacks_sent as f64),
            ("local_retx", self.dr.local_retx as f64),
            ("dr_buffer_overflows", self.dr.overflows as f64),
            ("dr_buffer_peak", self.dr.peak_buffer as f64),
            ("dr_buffer_at_end", self.dr.buffered() as f64),
        ]);
        Some(AppStats {
            table: "rmtp",
            flow: self.hack.flow,
            values,
            series: vec![],
        })
    }
}

pub struct RmtpSenderApp {
    pub sender: RmtpSender,
    pub data: PacketTemplate,
    pub retx: PacketTemplate,
    pub interval: SimTime,
    pub stop: SimTime,
}

impl App for RmtpSenderApp {
    fn set_series(&mut self, rows: usize) {
        self.sender.window_series.set_rows(rows);
    }
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        out.push(Action::Timer { at: now, token: 0 });
    }
    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        self.sender.backlogged = now < self.stop;
        for t in self.sender.on_interval(now) {
            let tpl = if t.retx { &self.retx } else { &self.data };
            out.push(Action::Send(data_packet(tpl, t.seq, t.first_sent, t.retx)));
        }
        out.push(Action::Timer {
            at: now + self.interval,
            token,
        });
    }
    fn on_packet(&mut self, _now: SimTime, pkt: &Packet, _out: &mut Vec<Action>) {
        if let Some(h) = pkt.app.get::<RmtpHack>() {
            self.sender.on_hack(h.child as usize, h.report.clone());
        }
    }
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        let s = &self.sender;
        let values = vec![
            ("role", SENDER),
            ("new_sent", s.new_sent as f64),
            ("retx_sent", s.retx_sent as f64),
            ("premature_retx", s.premature_retx as f64),
            ("final_buffer_at_end", s.final_buffer_len() as f64),
            ("final_buffer_peak", s.peak_final_buffer as f64),
            ("retx_queued_at_end", s.retx_queued() as f64),
            ("cwnd_at_end", s.cwnd as f64),
        ];
        let series = vec![("cwnd", s.window_series.points().to_vec())];
        Some(AppStats {
            table: "rmtp",
            flow: self.data.flow,
            values,
            series,
        })
    }
}
