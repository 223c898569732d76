//! TCP endpoints as applications: a source (sender plus a bulk or finite
//! data supply) and a sink (receiver). Both wrap the sans-IO state machines
//! of `proto::tcp` and turn their segments into packets.
//!
//! Timers are lazy: at most one engine timer is pending per endpoint for
//! its earliest deadline; when it fires, the state machine checks its own
//! deadline, and a later deadline is simply re-armed. Re-arming the RTO on
//! every ACK therefore costs no event.

pub mod spec;
pub mod transfers;

use super::{Action, App, AppStats, PacketTemplate};
use crate::net::packet::{ecn, IPV4_HEADER_BYTES};
use crate::net::{Packet, Transport};
use crate::proto::cc::WindowSpec;
use crate::proto::tcp::receiver::ReceiverStats;
use crate::proto::tcp::sender::{SenderState, SenderStats};
use crate::proto::tcp::{Segment, TcpConfig, TcpReceiver, TcpSender};
use crate::sim::{Series, SimTime};
use std::borrow::Cow;
use std::cell::RefCell;
use transfers::Transfers;

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
        // A flow of transfers (`transfers`): started, completed, and the
        // mean time from SYN to the FIN's ACK; segments of an earlier
        // connection reaching the sink after a later one began.
        Count("transfers"),
        Count("transfers_done"),
        Measure("transfer_time_mean_s"),
        Count("stale_segments"),
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
    /// The connection its segments belong to (a flow of transfers).
    conn: u32,
}

impl Endpoint {
    fn new(tpl: PacketTemplate) -> Self {
        Endpoint {
            tpl,
            timer_at: None,
            next_ord: 0,
            conn: 0,
        }
    }

    fn flush(&mut self, segs: &mut Vec<Segment>, deadline: Option<SimTime>, out: &mut Vec<Action>) {
        for mut s in segs.drain(..) {
            s.hdr.conn = self.conn;
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
    /// A flow of transfers: how the next connections are made, and the
    /// tally of those before the current one.
    more: Option<Box<More>>,
    /// The flow's `stop_s`, if before the run's end: from then on the
    /// source sends nothing (an abort; no RST is modelled).
    stop: Option<SimTime>,
    stopped: bool,
}

/// A flow of transfers beyond its current connection.
struct More {
    plan: Transfers,
    cfg: TcpConfig,
    /// Builds each connection's window controller.
    window: WindowSpec,
    /// Counts of the connections before the current one.
    before: SenderStats,
    acked_before: u64,
    /// Each completed transfer's duration, s, at its completion.
    times: Series,
}

/// The timer token that opens a flow's next transfer (0 is the RTO's).
const NEXT_TRANSFER: u64 = 1;
/// The timer token of the flow's `stop_s`.
const STOP: u64 = 2;

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
            more: None,
            stop: None,
            stopped: false,
        }
    }

    /// Sends nothing at or after `stop` (`None`: until the run ends).
    pub fn with_stop(mut self, stop: Option<SimTime>) -> Self {
        self.stop = stop;
        self
    }

    /// A source of successive transfers (`plan`), each a new connection.
    pub fn transfers(
        tpl: PacketTemplate,
        cfg: TcpConfig,
        window: WindowSpec,
        plan: Transfers,
    ) -> Self {
        // Idle until the first transfer opens its own connection.
        let snd = TcpSender::new(cfg.clone(), Some(0));
        let more = More {
            plan,
            cfg,
            window,
            before: SenderStats::default(),
            acked_before: 0,
            times: Series::default(),
        };
        TcpSource {
            ep: Endpoint::new(tpl),
            snd,
            bytes: None,
            more: Some(Box::new(more)),
            stop: None,
            stopped: false,
        }
    }

    /// Opens the next transfer's connection.
    fn open(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let m = self.more.as_mut().expect("a flow of transfers");
        m.plan.next_at = None;
        let size = m.plan.next_size();
        m.before.absorb(&self.snd.stats);
        m.acked_before += self.snd.bytes_acked();
        let mut snd =
            TcpSender::new(m.cfg.clone(), Some(size)).with_window(m.window.model().build());
        snd.adopt_series(&mut self.snd);
        self.snd = snd;
        // Connections are told apart by their number (serial arithmetic
        // at the sink, so wrapping is harmless).
        self.ep.conn = (m.plan.started - 1) as u32;
        with_segs(|segs| {
            self.snd.start(now, segs);
            self.ep.flush(segs, self.snd.deadline(), out);
        })
    }

    /// After the sender's input: a transfer that has just completed is
    /// counted, and the next one's start timed.
    fn after_input(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let Some(m) = &mut self.more else { return };
        if self.snd.state != SenderState::Done || m.plan.done >= m.plan.started {
            return;
        }
        let st = &self.snd.stats;
        let took = now - st.started_at.expect("a started connection");
        m.times.push(now, took.as_secs_f64());
        if let Some(at) = m.plan.completed(now, took) {
            out.push(Action::Timer {
                at,
                token: NEXT_TRANSFER,
            });
        }
    }

    /// The sender's counts over every connection, the bytes acknowledged,
    /// and when the flow finished.
    fn totals(&self) -> (Cow<'_, SenderStats>, u64, Option<SimTime>) {
        let acked = self.snd.bytes_acked();
        let Some(m) = &self.more else {
            return (
                Cow::Borrowed(&self.snd.stats),
                acked,
                self.snd.stats.done_at,
            );
        };
        let mut st = m.before.clone();
        st.absorb(&self.snd.stats);
        let done = if m.plan.finished() {
            self.snd.stats.done_at
        } else {
            None
        };
        (Cow::Owned(st), m.acked_before + acked, done)
    }
}

impl App for TcpSource {
    fn set_series(&mut self, rows: usize) {
        self.snd.set_series(rows);
        if let Some(m) = &mut self.more {
            m.times.set_rows(rows);
        }
    }
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if let Some(at) = self.stop {
            // A start jittered to the stop or past it sends nothing.
            if now >= at {
                self.stopped = true;
                return;
            }
            out.push(Action::Timer { at, token: STOP });
        }
        if let Some(m) = &mut self.more {
            if m.plan.start_on {
                return self.open(now, out);
            }
            let at = now + m.plan.off_time();
            m.plan.next_at = Some(at);
            return out.push(Action::Timer {
                at,
                token: NEXT_TRANSFER,
            });
        }
        with_segs(|segs| {
            self.snd.start(now, segs);
            self.ep.flush(segs, self.snd.deadline(), out);
        })
    }
    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        self.stopped |= token == STOP;
        if self.stopped {
            return;
        }
        if token == NEXT_TRANSFER {
            return self.open(now, out);
        }
        self.ep.timer_fired(now);
        with_segs(|segs| {
            self.snd.on_timer(now, segs);
            self.ep.flush(segs, self.snd.deadline(), out);
        });
        self.after_input(now, out);
    }
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Transport::Tcp(h) = &pkt.transport {
            // An ACK of an earlier connection of the flow, or the flow
            // has stopped.
            if h.conn != self.ep.conn || self.stopped {
                return;
            }
            with_segs(|segs| {
                self.snd.on_segment(now, h, segs);
                self.ep.flush(segs, self.snd.deadline(), out);
            });
            self.after_input(now, out);
        }
    }
    fn stats(&self, end: SimTime) -> Option<AppStats> {
        let (st, acked, done_at) = self.totals();
        let start = st.started_at.unwrap_or(end);
        let until = done_at.unwrap_or(end).min(self.stop.unwrap_or(end));
        let active = until.saturating_sub(start).as_secs_f64();
        let s = self.snd.series();
        let bytes = match &self.more {
            Some(m) => Some(m.plan.bytes),
            None => self.bytes,
        };
        let mut values = vec![
            ("bytes", bytes.map_or(f64::NAN, |b| b as f64)),
            ("start_s", secs(st.started_at)),
            ("established_s", secs(st.established_at)),
            ("sender_done_s", secs(done_at)),
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
        ];
        let mut series = vec![
            ("cwnd_bytes", s.cwnd.points().to_vec()),
            ("ssthresh_bytes", s.ssthresh.points().to_vec()),
            ("rtt_s", s.rtt.points().to_vec()),
            ("srtt_s", s.srtt.points().to_vec()),
            ("rto_s", s.rto.points().to_vec()),
            ("recovery", s.recovery.points().to_vec()),
        ];
        if let Some(m) = &self.more {
            let p = &m.plan;
            let mean = p.time_sum_s / p.done as f64;
            values.extend([
                ("transfers", p.started as f64),
                ("transfers_done", p.done as f64),
                (
                    "transfer_time_mean_s",
                    if p.done > 0 { mean } else { f64::NAN },
                ),
            ]);
            series.push(("transfer_s", m.times.points().to_vec()));
        }
        Some(AppStats {
            table: "tcp",
            flow: self.ep.tpl.flow,
            values,
            series,
        })
    }
}

pub struct TcpSink {
    ep: Endpoint,
    rcv: TcpReceiver,
    /// The data flow this sink receives (its packets carry the ACK flow id).
    data_flow: crate::net::FlowId,
    start: SimTime,
    /// A flow of transfers: the connections before the current one.
    before: Option<Box<SinkBefore>>,
}

/// What a sink of successive connections keeps of the earlier ones.
struct SinkBefore {
    cfg: TcpConfig,
    stats: ReceiverStats,
    bytes: u64,
    /// Segments of an earlier connection arriving after a later one began.
    stale: u64,
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
            before: None,
        }
    }

    /// The sink of a flow of transfers: a new connection replaces the
    /// current one.
    pub fn of_transfers(mut self, cfg: TcpConfig) -> Self {
        self.before = Some(Box::new(SinkBefore {
            cfg,
            stats: ReceiverStats::default(),
            bytes: 0,
            stale: 0,
        }));
        self
    }

    /// Whether a segment of connection `conn` is for the current
    /// connection, after opening a new one for a later number.
    fn take_conn(&mut self, conn: u32) -> bool {
        let Some(b) = &mut self.before else {
            return true;
        };
        if conn == self.ep.conn {
            return true;
        }
        // Serial number arithmetic (RFC 1982): an earlier connection's.
        if (conn.wrapping_sub(self.ep.conn) as i32) < 0 {
            b.stale += 1;
            return false;
        }
        b.stats.absorb(&self.rcv.stats);
        b.bytes += self.rcv.bytes_in_order();
        self.rcv = TcpReceiver::new(b.cfg.clone());
        self.ep.conn = conn;
        true
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
            if !self.take_conn(h.conn) {
                return;
            }
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
        let (st, bytes, done_at) = match &self.before {
            None => (
                Cow::Borrowed(&self.rcv.stats),
                self.rcv.bytes_in_order(),
                self.rcv.stats.done_at,
            ),
            Some(b) => {
                let mut st = b.stats.clone();
                st.absorb(&self.rcv.stats);
                // A flow of transfers has no one end (the source's row
                // gives each transfer's time).
                (Cow::Owned(st), b.bytes + self.rcv.bytes_in_order(), None)
            }
        };
        let mut values = vec![
            ("receiver_done_s", secs(done_at)),
            (
                "completion_time_s",
                done_at.map_or(f64::NAN, |d| (d - self.start).as_secs_f64()),
            ),
            ("bytes_delivered", bytes as f64),
            ("acks_sent", st.acks_sent as f64),
            ("delayed_acks", st.delayed_acks as f64),
            ("out_of_order_segments", st.out_of_order as f64),
            ("duplicate_segments", st.duplicates as f64),
            ("ce_received", st.ce_received as f64),
        ];
        if let Some(b) = &self.before {
            values.push(("stale_segments", b.stale as f64));
        }
        Some(AppStats {
            table: "tcp",
            flow: self.data_flow,
            values,
            series: vec![],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::{names, numbers, run_text, udp_template};
    use crate::net::TcpHeader;

    /// A 10 Mbit/s, 1 ms link from a to b with the `queue` given, one TCP
    /// flow "t" from a to b with `fields`, for `duration_s`.
    fn tcp_run(fields: &str, queue: &str, series: bool, duration_s: f64) -> crate::RunOutput {
        run_text(&format!(
            r#"{{"duration_s": {duration_s}, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
            "links": [{{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 1, "queue": {queue}}}],
            "flows": [{{"name": "t", "type": "tcp", "src": "a", "dst": "b"{fields}}}],
            "measure": {{"series": {series}}}}}"#
        ))
    }

    fn one(out: &crate::RunOutput, column: &str) -> f64 {
        let v = numbers(out, "tcp", column);
        assert_eq!(v.len(), 1, "{column}: one row per TCP flow");
        v[0]
    }

    const DROPTAIL_100: &str = r#"{"type": "droptail", "limit_packets": 100}"#;

    #[test]
    fn a_finite_transfer_reports_its_times_and_bytes() {
        let out = tcp_run(
            r#", "start_s": 0.5, "bytes": 200000"#,
            DROPTAIL_100,
            false,
            3.0,
        );
        assert_eq!(one(&out, "bytes"), 200_000.0);
        assert_eq!(one(&out, "start_s"), 0.5);
        // The handshake takes one round trip: 2 ms of propagation and the
        // SYN and SYN-ACK's serialisation (tens of microseconds each).
        let est = one(&out, "established_s") - 0.5;
        assert!((0.002..0.0022).contains(&est), "{est}");
        let done = one(&out, "sender_done_s");
        assert!(done > 0.5 + est && done < 1.0, "{done}");
        assert_eq!(one(&out, "bytes_acked"), 200_000.0);
        let goodput = 200_000.0 * 8.0 / (done - 0.5);
        assert!((one(&out, "goodput_bps") - goodput).abs() < 1e-6 * goodput);
        // 137 full or partial segments of data, with nothing lost.
        assert_eq!(one(&out, "data_bytes_sent"), 200_000.0);
        assert!(one(&out, "segments_sent") >= 137.0);
        for c in [
            "retransmissions",
            "timeouts",
            "fast_recoveries",
            "ecn_reductions",
        ] {
            assert_eq!(one(&out, c), 0.0, "{c}");
        }
        // One timed segment a round trip (RFC 6298 3, no timestamps): a
        // round trip each of slow start's windows.
        assert!(one(&out, "rtt_samples") >= 5.0);
        let srtt = one(&out, "srtt_ms");
        assert!(srtt > 2.0 && srtt < 2.0 + 100.0 * 1.2, "{srtt}");
        assert!(one(&out, "final_cwnd_bytes") > 4380.0);
        // The sink's columns of the same row.
        assert_eq!(one(&out, "bytes_delivered"), 200_000.0);
        let rdone = one(&out, "receiver_done_s");
        assert!(rdone > 0.5 && rdone <= done, "{rdone} {done}");
        assert!((one(&out, "completion_time_s") - (rdone - 0.5)).abs() < 1e-12);
        let acks = one(&out, "acks_sent");
        let delayed = one(&out, "delayed_acks");
        // Every second segment is acknowledged at once (RFC 5681 4.2).
        assert!((137.0 / 2.0..137.0).contains(&acks), "{acks}");
        // Segments come in bursts a round trip apart, so the timer never
        // runs out: every ACK goes with a second segment or with the FIN.
        assert_eq!(delayed, 0.0);
        for c in ["out_of_order_segments", "duplicate_segments", "ce_received"] {
            assert_eq!(one(&out, c), 0.0, "{c}");
        }
        // The data packets on the wire: IPv4 and TCP headers on the
        // payload; the last one holds what is left of 200,000 bytes.
        let sent_bytes = numbers(&out, "flows", "sent_bytes")[0];
        let sent = numbers(&out, "flows", "sent")[0];
        assert_eq!(sent, one(&out, "segments_sent"));
        let headers = sent_bytes - 200_000.0;
        assert!(
            headers >= 40.0 * sent && headers <= 80.0 * sent,
            "{headers}"
        );
    }

    #[test]
    fn a_lone_segment_is_acknowledged_when_the_delayed_ack_timer_runs_out() {
        // Without the handshake nothing comes after the one segment: its
        // ACK waits for the timer (200 ms by default), then takes the
        // 1 ms path back; the data took 1 ms and at least 1,040 bytes'
        // serialisation.
        let rtt_s = 0.002 + 1040.0 * 8.0 / 1e7;
        for (timeout_ms, extra) in [(200.0, ""), (50.0, r#", "delack_timeout_ms": 50"#)] {
            let f = format!(r#", "bytes": 1000, "tcp": {{"handshake": false{extra}}}"#);
            let out = tcp_run(&f, DROPTAIL_100, false, 1.0);
            assert_eq!(one(&out, "acks_sent"), 1.0);
            assert_eq!(one(&out, "delayed_acks"), 1.0);
            let done = one(&out, "sender_done_s");
            // What is left: the ACK's own serialisation, and the data's
            // options if any (tens of microseconds).
            let ack_s = done - timeout_ms / 1e3 - rtt_s;
            assert!((0.0..0.0001).contains(&ack_s), "{timeout_ms}: {done}");
            // No FIN: the sink never sees the end.
            assert!(one(&out, "receiver_done_s").is_nan());
        }
    }

    #[test]
    fn a_bulk_source_has_no_end_and_recovers_its_losses() {
        let queue = r#"{"type": "droptail", "limit_packets": 8}"#;
        let out = tcp_run("", queue, true, 4.0);
        for c in [
            "bytes",
            "sender_done_s",
            "receiver_done_s",
            "completion_time_s",
        ] {
            assert!(one(&out, c).is_nan(), "{c}");
        }
        assert_eq!(one(&out, "start_s"), 0.0);
        assert!(one(&out, "retransmissions") > 0.0);
        assert!(one(&out, "fast_recoveries") > 0.0);
        assert!(one(&out, "out_of_order_segments") > 0.0);
        // Goodput over the whole run, start to end: near the link's rate
        // less the headers (1460 of 1500 bytes; 1448 with timestamps).
        let goodput = one(&out, "goodput_bps");
        let acked = one(&out, "bytes_acked");
        assert!((goodput - acked * 8.0 / 4.0).abs() < 1e-6 * goodput);
        assert!(
            goodput > 0.85 * 1e7 * 1448.0 / 1500.0 && goodput < 1e7,
            "{goodput}"
        );
        let delivered = one(&out, "bytes_delivered");
        assert!(delivered >= acked && delivered < acked + 200_000.0);
        // The window's series: cwnd and ssthresh change, RTT samples
        // come in.
        let vars = names(&out, "tcp_series", "var");
        for v in [
            "cwnd_bytes",
            "ssthresh_bytes",
            "rtt_s",
            "srtt_s",
            "rto_s",
            "recovery",
        ] {
            let n = vars.iter().filter(|x| *x == v).count();
            assert!(n > 0, "{v}");
        }
        let rtts = vars.iter().filter(|x| *x == "rtt_s").count();
        assert_eq!(rtts as f64, one(&out, "rtt_samples"));
    }

    #[test]
    fn a_flow_sends_nothing_at_or_after_its_stop() {
        // A bulk source stopped at 1 s of a 3 s run, and a transfer whose
        // stop comes before its end: neither sends a packet from then on.
        for (fields, flow) in [
            (r#""stop_s": 1"#, 0),
            (r#""bytes": 5000000, "stop_s": 1"#, 0),
        ] {
            let text = format!(
                r#"{{"duration_s": 3, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
                "links": [{{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 1}}],
                "flows": [{{"name": "t", "type": "tcp", "src": "a", "dst": "b", {fields}}}],
                "measure": {{"packets": true}}}}"#
            );
            let out = run_text(&text);
            let flows = numbers(&out, "packets", "flow");
            let sent = numbers(&out, "packets", "sent_ns");
            let last = (0..flows.len())
                .filter(|&i| flows[i] == flow as f64)
                .map(|i| sent[i])
                .fold(0.0, f64::max);
            assert!(last > 0.9e9 && last < 1e9, "{fields}: {last}");
            // Goodput over the time it ran; no end.
            let acked = one(&out, "bytes_acked");
            assert!((one(&out, "goodput_bps") - acked * 8.0).abs() < 1e-6 * acked * 8.0);
            assert!(one(&out, "sender_done_s").is_nan());
            assert!(acked > 0.8e6 && acked < 1.25e6, "{acked}");
        }
    }

    #[test]
    fn a_transfer_through_heavy_loss_completes_by_its_retransmission_timer() {
        // A third of the data arriving at b lost (the ACKs arrive at a,
        // which loses nothing): tails of windows go missing, and only the
        // RTO brings them back.
        let text = r#"{"duration_s": 60, "nodes": [{"name": "a"},
            {"name": "b", "receiver_loss": {"type": "packet", "rate": 0.33}}],
            "links": [{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 1}],
            "flows": [{"name": "t", "type": "tcp", "src": "a", "dst": "b", "bytes": 100000,
                "tcp": {"min_rto_ms": 200}}]}"#;
        let out = run_text(text);
        assert!(one(&out, "timeouts") > 0.0);
        assert_eq!(one(&out, "bytes_acked"), 100_000.0);
        assert_eq!(one(&out, "bytes_delivered"), 100_000.0);
        assert!(one(&out, "retransmissions") >= one(&out, "timeouts"));
    }

    #[test]
    fn series_are_bounded_by_the_runs_limit() {
        let text = r#"{"duration_s": 2, "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 1,
                "queue": {"type": "droptail", "limit_packets": 8}}],
            "flows": [{"name": "t", "type": "tcp", "src": "a", "dst": "b"}],
            "measure": {"series": true}, "limits": {"max_series_rows": 5}}"#;
        let out = run_text(text);
        let vars = names(&out, "tcp_series", "var");
        for v in ["cwnd_bytes", "rtt_s"] {
            assert_eq!(vars.iter().filter(|x| *x == v).count(), 5, "{v}");
        }
        assert!(one(&out, "rtt_samples") > 5.0);
    }

    #[test]
    fn series_are_kept_only_when_asked() {
        let out = tcp_run("", DROPTAIL_100, false, 0.5);
        assert!(out.tables.iter().all(|t| t.name != "tcp_series"));
        assert!(one(&out, "rtt_samples") > 0.0);
    }

    #[test]
    fn ecn_marks_reach_the_sink_and_reduce_the_window() {
        let red = r#"{"type": "red", "min_th": 2, "max_th": 6, "max_p": 0.5, "w_q": 0.2,
            "limit_packets": 50, "ecn": true}"#;
        let with = tcp_run(r#", "tcp": {"ecn": true}"#, red, false, 2.0);
        let ce = one(&with, "ce_received");
        assert!(ce > 0.0);
        let reductions = one(&with, "ecn_reductions");
        // At most one reduction per window of data (RFC 3168 6.1.2).
        assert!(reductions > 0.0 && reductions <= ce, "{reductions} {ce}");
        // Without ECN the same queue drops instead: nothing is marked.
        let without = tcp_run("", red, false, 2.0);
        assert_eq!(one(&without, "ce_received"), 0.0);
        assert_eq!(one(&without, "ecn_reductions"), 0.0);
        // Marks replace most early drops (above max_th RED still drops).
        let retx = |o: &crate::RunOutput| one(o, "retransmissions");
        assert!(
            retx(&without) > 5.0 * retx(&with),
            "{} {}",
            retx(&without),
            retx(&with)
        );
    }

    #[test]
    fn an_endpoint_sizes_its_packets_and_keeps_one_timer_for_the_earliest_deadline() {
        let mut ep = Endpoint::new(udp_template(0));
        let t = SimTime::from_millis;
        let seg = |payload, ect| Segment {
            hdr: Box::new(TcpHeader::default()),
            payload,
            ect,
        };
        let mut out = Vec::new();
        let mut segs = vec![seg(1000, false), seg(0, true)];
        ep.flush(&mut segs, Some(t(5)), &mut out);
        assert!(segs.is_empty());
        let hdr = TcpHeader::default().header_bytes();
        let sent: Vec<(u64, u32, u8)> = out
            .iter()
            .filter_map(|a| match a {
                Action::Send(p) => Some((p.seq, p.size_bytes, p.ecn)),
                _ => None,
            })
            .collect();
        assert_eq!(
            sent,
            vec![
                (0, IPV4_HEADER_BYTES + hdr + 1000, ecn::NOT_ECT),
                (1, IPV4_HEADER_BYTES + hdr, ecn::ECT0)
            ]
        );
        let timers = |out: &mut Vec<Action>| -> Vec<SimTime> {
            out.drain(..)
                .filter_map(|a| match a {
                    Action::Timer { at, .. } => Some(at),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(timers(&mut out), vec![t(5)]);
        // A later or equal deadline waits for the pending timer; an earlier
        // one asks for its own.
        for (d, want) in [(7, vec![]), (5, vec![]), (3, vec![t(3)]), (3, vec![])] {
            ep.flush(&mut Vec::new(), Some(t(d)), &mut out);
            assert_eq!(timers(&mut out), want, "deadline {d} ms");
        }
        ep.flush(&mut Vec::new(), None, &mut out);
        assert!(out.is_empty());
        // A timer firing before the pending one's time leaves it pending.
        ep.timer_fired(t(2));
        ep.flush(&mut Vec::new(), Some(t(4)), &mut out);
        assert!(timers(&mut out).is_empty());
        // Once it has fired, the next deadline arms a new one.
        ep.timer_fired(t(3));
        ep.flush(&mut Vec::new(), Some(t(9)), &mut out);
        assert_eq!(timers(&mut out), vec![t(9)]);
        let mut segs = vec![seg(10, false)];
        ep.flush(&mut segs, None, &mut out);
        assert!(matches!(&out[0], Action::Send(p) if p.seq == 2));
    }
}
