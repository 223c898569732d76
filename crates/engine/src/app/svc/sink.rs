//! The SVC receiver: its rate controller's feedback (through the
//! controller's receiving half), reassembly of NAL units, a playout buffer
//! that discards packets arriving after their frame's deadline (frame time
//! plus `playout_delay`), and at the end of the run the decodable bytes per
//! layer (`decode.rs`).

use super::decode::{decodable, NalId, Received};
use super::fec::FecCode;
use super::source::RepairInfo;
use super::source::SvcInfo;
use crate::app::{Action, App, AppStats, PacketTemplate};
use crate::net::Packet;
use crate::net::Payload;
use crate::proto::cc::{FeedbackReceiver, Stamp};
use crate::sim::SimTime;
use std::collections::HashMap;
use std::sync::Arc;

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
    rcv: Box<dyn FeedbackReceiver>,
    /// Feedback to send, made by `rcv`.
    fb_out: Vec<Payload>,
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
    fec: Option<FecCode>,
    blocks: HashMap<u32, FecBlock>,
    media_received: u64,
    fec_recovered: u64,
    /// Repair packets that arrived.
    repair_received: u64,
    /// Originals that arrived after the block had rebuilt them.
    rebuilt_then_arrived: u64,
}

/// What arrived of one FEC block.
#[derive(Clone, Debug, Default)]
struct FecBlock {
    got: Vec<bool>,
    repair: u32,
    media: Option<Arc<Vec<(SvcInfo, u32)>>>,
    done: bool,
    /// Media packets rebuilt (a late original is then a duplicate).
    recovered: Vec<u16>,
}

impl SvcSink {
    pub fn new(
        tpl: PacketTemplate,
        rcv: Box<dyn FeedbackReceiver>,
        data_flow: u32,
        playout_delay: SimTime,
        headers: u32,
        idr_gops: u32,
    ) -> Self {
        SvcSink {
            idr_gops,
            tpl,
            rcv,
            fb_out: Vec::new(),
            data_flow,
            playout_delay,
            headers,
            units: HashMap::new(),
            last_frame: 0,
            bytes_in_time: 0,
            bytes_late: 0,
            next_seq: 0,
            timer_at: None,
            fec: None,
            blocks: HashMap::new(),
            media_received: 0,
            fec_recovered: 0,
            repair_received: 0,
            rebuilt_then_arrived: 0,
        }
    }

    /// Decodes FEC blocks with `code`.
    pub fn with_fec(mut self, code: Option<FecCode>) -> Self {
        self.fec = code;
        self
    }

    fn feedback(&mut self, app: Payload, out: &mut Vec<Action>) {
        let mut p = self.tpl.make(self.next_seq);
        self.next_seq += 1;
        p.app = app;
        out.push(Action::Send(p));
    }

    fn arm(&mut self, out: &mut Vec<Action>) {
        if let (None, Some(d)) = (self.timer_at, self.rcv.deadline()) {
            self.timer_at = Some(d);
            out.push(Action::Timer { at: d, token: 0 });
        }
    }

    /// Sends the feedback the controller's receiving half made.
    fn send_feedback(&mut self, out: &mut Vec<Action>) {
        for app in std::mem::take(&mut self.fb_out) {
            self.feedback(app, out);
        }
    }

    /// A packet of FEC block `block` arrived (media `index`, or a repair
    /// packet with the block's media list); once the code can decode, the
    /// missing media packets are rebuilt now.
    fn fec_got(
        &mut self,
        now: SimTime,
        block: u32,
        index: Option<u16>,
        media: Option<Arc<Vec<(SvcInfo, u32)>>>,
    ) {
        let Some(code) = self.fec else { return };
        let b = self.blocks.entry(block).or_insert_with(|| FecBlock {
            got: vec![false; code.k() as usize],
            ..Default::default()
        });
        if b.done {
            return;
        }
        if let Some(i) = index {
            if let Some(g) = b.got.get_mut(i as usize) {
                *g = true;
            }
        }
        if media.is_some() {
            b.repair += 1;
            b.media = media;
        }
        let have = b.got.iter().filter(|&&g| g).count() as u32;
        let Some(list) = b.media.clone() else { return };
        if code.media_after_decoding(have, b.repair) < code.k() {
            return;
        }
        b.done = true;
        let missing: Vec<usize> = (0..b.got.len()).filter(|&i| !b.got[i]).collect();
        b.recovered = missing.iter().map(|&i| i as u16).collect();
        for i in missing {
            let (info, payload) = list[i];
            self.fec_recovered += 1;
            self.reassemble(now, &info, payload + self.headers);
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
    fn set_series(&mut self, rows: usize) {
        self.rcv.set_series_rows(rows);
    }
    fn on_start(&mut self, _now: SimTime, _out: &mut Vec<Action>) {}
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        let info = pkt.app.get::<SvcInfo>();
        let repair = pkt.app.get::<RepairInfo>();
        let stamp: Stamp = match (info, repair) {
            (Some(i), _) => i.stamp,
            (_, Some(r)) => r.stamp,
            _ => return,
        };
        self.rcv
            .on_data(now, &stamp, pkt.size_bytes, &mut self.fb_out);
        self.send_feedback(out);
        match (info, repair) {
            (Some(&info), _) => {
                self.media_received += 1;
                let rebuilt = info.fec.is_some_and(|(b, i)| {
                    self.blocks
                        .get(&b)
                        .is_some_and(|x| x.recovered.contains(&i))
                });
                if rebuilt {
                    self.rebuilt_then_arrived += 1;
                } else {
                    self.reassemble(now, &info, pkt.size_bytes);
                }
                if let Some((block, index)) = info.fec {
                    self.fec_got(now, block, Some(index), None);
                }
            }
            (_, Some(r)) => {
                self.repair_received += 1;
                let media = r.media.clone();
                self.fec_got(now, r.block, None, Some(media));
            }
            _ => {}
        }
        self.arm(out);
    }
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        self.timer_at = None;
        self.rcv.on_timer(now, &mut self.fb_out);
        self.send_feedback(out);
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
                ("media_packets_received", self.media_received as f64),
                ("fec_recovered_packets", self.fec_recovered as f64),
                ("fec_repair_received", self.repair_received as f64),
                // Media packets the receiver holds, each once: arrived or
                // rebuilt (an original arriving after its rebuild counts once).
                (
                    "media_packets_kept",
                    (self.media_received + self.fec_recovered - self.rebuilt_then_arrived) as f64,
                ),
                ("bytes_in_time", self.bytes_in_time as f64),
                ("bytes_late", self.bytes_late as f64),
                ("decodable_bytes_base", layer[0][0] as f64),
                ("decodable_bytes_s0_fgs", layer[0][1] as f64),
                ("decodable_bytes_s1", layer[1][0] as f64),
                ("decodable_bytes_s1_fgs", layer[1][1] as f64),
                ("decodable_base_frames", base_frames as f64),
                ("p", self.rcv.value("p").unwrap_or(f64::NAN)),
                (
                    "available_bps",
                    self.rcv.value("available_bps").unwrap_or(f64::NAN),
                ),
            ],
            series: vec![(
                "available_bps",
                self.rcv.series("available_bps").unwrap_or_default(),
            )],
        })
    }
}
