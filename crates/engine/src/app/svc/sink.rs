//! The SVC receiver: TFRC feedback, reassembly of NAL units, a playout
//! buffer that discards packets arriving after their frame's deadline
//! (frame time plus `playout_delay`), and at the end of the run the
//! decodable bytes per layer (`decode.rs`).

use super::decode::{decodable, NalId, Received};
use super::source::SvcInfo;
use crate::app::{Action, App, AppStats, PacketTemplate};
use crate::net::packet::AppData;
use crate::net::Packet;
use crate::proto::tfrc::{Feedback, TfrcConfig, TfrcReceiver};
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
    rcv: TfrcReceiver,
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
}

impl SvcSink {
    pub fn new(
        tpl: PacketTemplate,
        cfg: TfrcConfig,
        data_flow: u32,
        playout_delay: SimTime,
        headers: u32,
        idr_gops: u32,
    ) -> Self {
        SvcSink {
            idr_gops,
            tpl,
            rcv: TfrcReceiver::new(cfg),
            data_flow,
            playout_delay,
            headers,
            units: HashMap::new(),
            last_frame: 0,
            bytes_in_time: 0,
            bytes_late: 0,
            next_seq: 0,
            timer_at: None,
        }
    }

    fn feedback(&mut self, fb: Feedback, out: &mut Vec<Action>) {
        let mut p = self.tpl.make(self.next_seq);
        self.next_seq += 1;
        p.app = AppData::TfrcFeedback(fb);
        out.push(Action::Send(p));
    }

    fn arm(&mut self, out: &mut Vec<Action>) {
        if let (None, Some(d)) = (self.timer_at, self.rcv.deadline()) {
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
            if let Some(fb) = self.rcv.on_data(now, info.tfrc, pkt.size_bytes) {
                self.feedback(fb, out);
            }
            let info = **info;
            self.reassemble(now, &info, pkt.size_bytes);
            self.arm(out);
        }
    }
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        self.timer_at = None;
        if let Some(fb) = self.rcv.on_timer(now) {
            self.feedback(fb, out);
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
                ("p", self.rcv.loss_event_rate()),
            ],
            series: vec![],
        })
    }
}
