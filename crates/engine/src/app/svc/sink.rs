//! The SVC receiver: the transport's feedback (TFRC's, or PPACC's
//! estimates and loss notices), reassembly of NAL units, a playout buffer
//! that discards packets arriving after their frame's deadline (frame time
//! plus `playout_delay`), and at the end of the run the decodable bytes per
//! layer (`decode.rs`).

use super::decode::{decodable, NalId, Received};
use super::source::SvcInfo;
use crate::app::{Action, App, AppStats, PacketTemplate};
use crate::net::packet::AppData;
use crate::net::Packet;
use crate::proto::ppacc::endpoints::{PairTag, PpaccReceiver};
use crate::proto::tfrc::{TfrcConfig, TfrcReceiver};

/// The transport's receiving end.
pub enum Rx {
    Tfrc(TfrcReceiver),
    Ppacc(PpaccReceiver),
}

impl Rx {
    pub fn tfrc(cfg: TfrcConfig) -> Self {
        Rx::Tfrc(TfrcReceiver::new(cfg))
    }
}
use crate::sim::SimTime;
use std::collections::HashMap;

#[derive(Clone, Debug, Default)]
struct Assembly {
    /// Fragments received in time, by index.
    got: Vec<bool>,
    /// Payload bytes per fragment (the last may be short).
    frag_bytes: u32,
    nal_bytes: u32,
}

pub struct SvcSink {
    tpl: PacketTemplate,
    rcv: Rx,
    data_flow: u32,
    playout_delay: SimTime,
    headers: u32,
    idr_gops: u32,
    units: HashMap<NalId, Assembly>,
    last_frame: u32,
    bytes_in_time: u64,
    bytes_late: u64,
    next_seq: u64,
    timer_at: Option<SimTime>,
    /// PPACC's reported estimates over time.
    a_series: Vec<(SimTime, f64)>,
}

impl SvcSink {
    pub fn new(
        tpl: PacketTemplate,
        rcv: Rx,
        data_flow: u32,
        playout_delay: SimTime,
        headers: u32,
        idr_gops: u32,
    ) -> Self {
        SvcSink {
            idr_gops,
            tpl,
            rcv,
            data_flow,
            playout_delay,
            headers,
            units: HashMap::new(),
            last_frame: 0,
            bytes_in_time: 0,
            bytes_late: 0,
            next_seq: 0,
            timer_at: None,
            a_series: Vec::new(),
        }
    }

    fn feedback(&mut self, app: AppData, out: &mut Vec<Action>) {
        let mut p = self.tpl.make(self.next_seq);
        self.next_seq += 1;
        p.app = app;
        out.push(Action::Send(p));
    }

    fn deadline(&self) -> Option<SimTime> {
        match &self.rcv {
            Rx::Tfrc(r) => r.deadline(),
            Rx::Ppacc(r) => r.deadline(),
        }
    }

    fn arm(&mut self, out: &mut Vec<Action>) {
        if let (None, Some(d)) = (self.timer_at, self.deadline()) {
            self.timer_at = Some(d);
            out.push(Action::Timer { at: d, token: 0 });
        }
    }

    fn reassemble(&mut self, now: SimTime, info: &SvcInfo, size: u32) {
        let payload = size - self.headers;
        if now > info.frame_time + self.playout_delay {
            self.bytes_late += payload as u64;
            return;
        }
        self.bytes_in_time += payload as u64;
        self.last_frame = self.last_frame.max(info.frame);
        let a = self.units.entry((info.frame, info.s, info.q)).or_default();
        if a.got.is_empty() {
            a.got = vec![false; info.frags as usize];
            a.nal_bytes = info.nal_bytes;
        }
        if info.frag == 0 || info.frag + 1 < info.frags {
            a.frag_bytes = a.frag_bytes.max(payload);
        }
        if let Some(g) = a.got.get_mut(info.frag as usize) {
            *g = true;
        }
    }

    /// What arrived of each NAL unit: complete q = 0 units, and for FGS
    /// units the bytes of the fragments before the first missing one.
    fn received(&self) -> HashMap<NalId, Received> {
        (self.units.iter())
            .map(|(&id, a)| {
                let complete = a.got.iter().all(|&g| g);
                let prefix = a.got.iter().take_while(|&&g| g).count() as u32;
                let bytes = if complete {
                    a.nal_bytes
                } else if id.2 == 1 {
                    (prefix * a.frag_bytes).min(a.nal_bytes)
                } else {
                    0
                };
                (id, Received { bytes, complete })
            })
            .collect()
    }
}

impl App for SvcSink {
    fn on_start(&mut self, _now: SimTime, _out: &mut Vec<Action>) {}
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let AppData::SvcData(info) = &pkt.app {
            let info = **info;
            match &mut self.rcv {
                Rx::Tfrc(r) => {
                    if let Some(fb) = r.on_data(now, info.tfrc, pkt.size_bytes) {
                        self.feedback(AppData::TfrcFeedback(fb), out);
                    }
                }
                Rx::Ppacc(r) => {
                    let tag = PairTag {
                        seq: info.tfrc.seq,
                        pair: info.pair,
                    };
                    let bits = pkt.size_bytes as f64 * 8.0;
                    for rep in r.on_data(now, tag, info.tfrc.sent_at, bits) {
                        self.feedback(AppData::PpaccReport(rep), out);
                    }
                }
            }
            self.reassemble(now, &info, pkt.size_bytes);
            self.arm(out);
        }
    }
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        self.timer_at = None;
        let app = match &mut self.rcv {
            Rx::Tfrc(r) => r.on_timer(now).map(AppData::TfrcFeedback),
            Rx::Ppacc(r) => r.on_timer(now).map(AppData::PpaccReport),
        };
        if let Some(app) = app {
            if let AppData::PpaccReport(crate::proto::ppacc::endpoints::Report::Estimate {
                a_bps,
                ..
            }) = app
            {
                self.a_series.push((now, a_bps));
            }
            self.feedback(app, out);
        }
        self.arm(out);
    }
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        let got = self.received();
        let dec = decodable(&got, self.last_frame, self.idr_gops);
        let mut layer = [[0u64; 2]; 2];
        for (&(_, s, q), &b) in &dec {
            layer[s as usize][q as usize] += b as u64;
        }
        let base_frames = (dec.iter())
            .filter(|(&(_, s, q), &b)| s == 0 && q == 0 && b > 0)
            .count();
        Some(AppStats {
            table: "svc",
            flow: self.data_flow,
            values: vec![
                ("bytes_in_time", self.bytes_in_time as f64),
                ("bytes_late", self.bytes_late as f64),
                ("decodable_bytes_base", layer[0][0] as f64),
                ("decodable_bytes_s0_fgs", layer[0][1] as f64),
                ("decodable_bytes_s1", layer[1][0] as f64),
                ("decodable_bytes_s1_fgs", layer[1][1] as f64),
                ("decodable_base_frames", base_frames as f64),
                (
                    "p",
                    match &self.rcv {
                        Rx::Tfrc(r) => r.loss_event_rate(),
                        Rx::Ppacc(_) => f64::NAN,
                    },
                ),
                (
                    "available_bps",
                    match &self.rcv {
                        Rx::Ppacc(r) => r.estimator.available_bps().unwrap_or(f64::NAN),
                        Rx::Tfrc(_) => f64::NAN,
                    },
                ),
            ],
            series: vec![("available_bps", self.a_series.clone())],
        })
    }
}
