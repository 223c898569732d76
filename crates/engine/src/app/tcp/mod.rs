//! TCP endpoints as applications: a source (sender plus a bulk or finite
//! data supply) and a sink (receiver). Both wrap the sans-IO state machines
//! of `proto::tcp` and turn their segments into packets.
//!
//! Timers are lazy: at most one engine timer is pending per endpoint for
//! its earliest deadline; when it fires, the state machine checks its own
//! deadline, and a later deadline is simply re-armed. Re-arming the RTO on
//! every ACK therefore costs no event.

pub mod spec;

use super::{Action, App, AppStats, PacketTemplate};
use crate::net::packet::{ecn, IPV4_HEADER_BYTES};
use crate::net::{Packet, Transport};
use crate::proto::tcp::{Segment, TcpConfig, TcpReceiver, TcpSender};
use crate::sim::SimTime;
use std::cell::RefCell;

use super::Col::{Count, Measure};

/// The `tcp` table (the sender's columns, then the sink's).
pub const TABLE: super::AppTable = super::AppTable {
    name: "tcp",
    // Count: an integer (nullable Int64 in Python); Measure: a float in its unit.
    columns: &[
        Count("bytes"),
        Measure("start_s"),
        Measure("established_s"),
        Measure("sender_done_s"),
        Count("bytes_acked"),
        Measure("goodput_bps"),
        Count("segments_sent"),
        Count("data_bytes_sent"),
        Count("retransmissions"),
        Count("timeouts"),
        Count("fast_recoveries"),
        Count("limited_transmits"),
        Count("ecn_reductions"),
        Count("rtt_samples"),
        Measure("srtt_ms"),
        Count("final_cwnd_bytes"),
        Measure("receiver_done_s"),
        Measure("completion_time_s"),
        Count("bytes_delivered"),
        Count("acks_sent"),
        Count("delayed_acks"),
        Count("out_of_order_segments"),
        Count("duplicate_segments"),
        Count("ce_received"),
    ],
    series: true,
};

fn secs(t: Option<SimTime>) -> f64 {
    t.map_or(f64::NAN, |t| t.as_secs_f64())
}

thread_local! {
    /// The segments a state machine emits in one call, until they become
    /// packets: one buffer for every endpoint of the thread. A buffer per
    /// endpoint took 704 bytes each and, with hundreds of flows, a cache
    /// miss or two per packet sent.
    static SEGS: RefCell<Vec<Segment>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with the (empty) segment buffer.
fn with_segs<R>(f: impl FnOnce(&mut Vec<Segment>) -> R) -> R {
    SEGS.with_borrow_mut(|segs| {
        debug_assert!(segs.is_empty(), "every call flushes what it emitted");
        f(segs)
    })
}

/// Turns segments into packets and keeps one timer armed for `deadline`.
struct Endpoint {
    tpl: PacketTemplate,
    timer_at: Option<SimTime>,
    next_ord: u64,
}

impl Endpoint {
    fn new(tpl: PacketTemplate) -> Self {
        Endpoint {
            tpl,
            timer_at: None,
            next_ord: 0,
        }
    }

    fn flush(&mut self, segs: &mut Vec<Segment>, deadline: Option<SimTime>, out: &mut Vec<Action>) {
        for s in segs.drain(..) {
            let mut p = self.tpl.make(self.next_ord);
            self.next_ord += 1;
            p.size_bytes = IPV4_HEADER_BYTES + s.hdr.header_bytes() + s.payload;
            p.transport = Transport::Tcp(s.hdr);
            if s.ect {
                p.ecn = ecn::ECT0;
            }
            out.push(Action::Send(p));
        }
        if let Some(d) = deadline {
            if self.timer_at.is_none_or(|t| d < t) {
                out.push(Action::Timer { at: d, token: 0 });
                self.timer_at = Some(d);
            }
        }
    }

    fn timer_fired(&mut self, now: SimTime) {
        if self.timer_at.is_some_and(|t| t <= now) {
            self.timer_at = None;
        }
    }
}

pub struct TcpSource {
    ep: Endpoint,
    snd: TcpSender,
    bytes: Option<u64>,
}

impl TcpSource {
    pub fn new(
        tpl: PacketTemplate,
        cfg: TcpConfig,
        bytes: Option<u64>,
        window: Option<Box<dyn crate::proto::cc::WindowController>>,
    ) -> Self {
        TcpSource {
            ep: Endpoint::new(tpl),
            snd: TcpSender::new(cfg, bytes).with_window(window),
            bytes,
        }
    }
}

impl App for TcpSource {
    fn set_series(&mut self, rows: usize) {
        self.snd.set_series(rows);
    }
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        with_segs(|segs| {
            self.snd.start(now, segs);
            self.ep.flush(segs, self.snd.deadline(), out);
        })
    }
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        self.ep.timer_fired(now);
        with_segs(|segs| {
            self.snd.on_timer(now, segs);
            self.ep.flush(segs, self.snd.deadline(), out);
        })
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Transport::Tcp(h) = &pkt.transport {
            with_segs(|segs| {
                self.snd.on_segment(now, h, segs);
                self.ep.flush(segs, self.snd.deadline(), out);
            })
        }
    }
    fn stats(&self, end: SimTime) -> Option<AppStats> {
        let st = &self.snd.stats;
        let start = st.started_at.unwrap_or(end);
        let until = st.done_at.unwrap_or(end);
        let active = until.saturating_sub(start).as_secs_f64();
        let acked = self.snd.bytes_acked();
        let s = self.snd.series();
        Some(AppStats {
            table: "tcp",
            flow: self.ep.tpl.flow,
            values: vec![
                ("bytes", self.bytes.map_or(f64::NAN, |b| b as f64)),
                ("start_s", secs(st.started_at)),
                ("established_s", secs(st.established_at)),
                ("sender_done_s", secs(st.done_at)),
                ("bytes_acked", acked as f64),
                (
                    "goodput_bps",
                    if active > 0.0 {
                        acked as f64 * 8.0 / active
                    } else {
                        f64::NAN
                    },
                ),
                ("segments_sent", st.segments_sent as f64),
                ("data_bytes_sent", st.data_bytes_sent as f64),
                ("retransmissions", st.retransmissions as f64),
                ("timeouts", st.timeouts as f64),
                ("fast_recoveries", st.fast_recoveries as f64),
                ("limited_transmits", st.limited_transmits as f64),
                ("ecn_reductions", st.ecn_reductions as f64),
                ("rtt_samples", st.rtt_samples as f64),
                (
                    "srtt_ms",
                    self.snd.srtt().map_or(f64::NAN, |t| t.as_secs_f64() * 1e3),
                ),
                ("final_cwnd_bytes", self.snd.cwnd() as f64),
            ],
            series: vec![
                ("cwnd_bytes", s.cwnd.points().to_vec()),
                ("ssthresh_bytes", s.ssthresh.points().to_vec()),
                ("rtt_s", s.rtt.points().to_vec()),
                ("srtt_s", s.srtt.points().to_vec()),
                ("rto_s", s.rto.points().to_vec()),
                ("recovery", s.recovery.points().to_vec()),
            ],
        })
    }
}

pub struct TcpSink {
    ep: Endpoint,
    rcv: TcpReceiver,
    /// The data flow this sink receives (its packets carry the ACK flow id).
    data_flow: crate::net::FlowId,
    start: SimTime,
}

impl TcpSink {
    pub fn new(
        tpl: PacketTemplate,
        cfg: TcpConfig,
        data_flow: crate::net::FlowId,
        start: SimTime,
    ) -> Self {
        TcpSink {
            ep: Endpoint::new(tpl),
            rcv: TcpReceiver::new(cfg),
            data_flow,
            start,
        }
    }
}

impl App for TcpSink {
    fn on_start(&mut self, _now: SimTime, _out: &mut Vec<Action>) {}
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        self.ep.timer_fired(now);
        with_segs(|segs| {
            self.rcv.on_timer(now, segs);
            self.ep.flush(segs, self.rcv.deadline(), out);
        })
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Transport::Tcp(h) = &pkt.transport {
            if pkt.ecn == ecn::CE {
                self.rcv.note_ce();
            }
            with_segs(|segs| {
                self.rcv.on_segment(now, h, pkt.payload_bytes(), segs);
                self.ep.flush(segs, self.rcv.deadline(), out);
            })
        }
    }
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        let st = &self.rcv.stats;
        Some(AppStats {
            table: "tcp",
            flow: self.data_flow,
            values: vec![
                ("receiver_done_s", secs(st.done_at)),
                (
                    "completion_time_s",
                    st.done_at
                        .map_or(f64::NAN, |d| (d - self.start).as_secs_f64()),
                ),
                ("bytes_delivered", self.rcv.bytes_in_order() as f64),
                ("acks_sent", st.acks_sent as f64),
                ("delayed_acks", st.delayed_acks as f64),
                ("out_of_order_segments", st.out_of_order as f64),
                ("duplicate_segments", st.duplicates as f64),
                ("ce_received", st.ce_received as f64),
            ],
            series: vec![],
        })
    }
}
