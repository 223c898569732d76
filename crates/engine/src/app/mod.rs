//! Traffic sources and sinks as plain state machines.
//!
//! An application never touches the event queue: the engine calls it with
//! the current time and an input (start, a timer it asked for, a packet for
//! it) and it answers with [`Action`]s. That keeps every application
//! testable alone (see the tests in each file).

pub mod cbr;
pub mod flow;
pub mod media;
pub mod paced;
pub mod poisson;
pub mod rmtp;
pub mod rtp;
pub mod scaling;
pub mod session;
pub mod sink;
pub mod svc;
pub mod tcp;
#[cfg(test)]
pub mod testing;
pub mod tfrc;

use crate::net::Packet;
use crate::sim::SimTime;

pub use cbr::CbrSource;
pub use poisson::PoissonSource;
pub use sink::Sink;
pub use tcp::{TcpSink, TcpSource};

/// What an application asks the engine to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Send a packet. The engine stamps `id`, `src`, `created_at` and, for
    /// multicast, the distribution tree.
    Send(Packet),
    /// Call `on_timer(token)` at `at`.
    Timer { at: SimTime, token: u64 },
}

pub trait App: Send {
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>);
    fn on_timer(&mut self, _now: SimTime, _token: u64, _out: &mut Vec<Action>) {}
    fn on_packet(&mut self, _now: SimTime, _pkt: &Packet, _out: &mut Vec<Action>) {}
    /// Keep the time series this application records for its
    /// `<table>_series` table (`measure.series`): at most `rows` rows
    /// each (0: none).
    fn set_series(&mut self, _rows: usize) {}
    /// Measurements to report at the end of a run (`end`), if any.
    fn stats(&self, _end: SimTime) -> Option<AppStats> {
        None
    }
    /// Rows for further tables (an application that reports into more
    /// than one).
    fn more_stats(&self, _end: SimTime) -> Vec<AppStats> {
        Vec::new()
    }
}

/// What an application reports at the end of a run: one row of named
/// values in table `table` (rows of the same flow are merged), and time
/// series recorded on change.
#[derive(Clone, Debug, Default)]
pub struct AppStats {
    pub table: &'static str,
    pub flow: crate::net::FlowId,
    pub values: Vec<(&'static str, f64)>,
    pub series: Vec<(&'static str, Vec<(SimTime, f64)>)>,
}

/// A table applications report into: its name, its columns after
/// "flow" in order, and whether it has a `<name>_series` table. Declared
/// beside the model that fills it; a run emits every declared table (empty
/// when no application reports into it), so a table has the same columns
/// whether or not the scenario has such flows. The values travel as f64;
/// a column declared a count reaches Python as a (nullable) integer.
#[derive(Debug)]
pub struct AppTable {
    pub name: &'static str,
    pub columns: &'static [Col],
    pub series: bool,
}

/// A declared column of an application table.
#[derive(Clone, Copy, Debug)]
pub enum Col {
    /// An integer count (packets, bytes, events).
    Count(&'static str),
    /// A measure in the unit its name gives (`_s`, `_bps`, ...).
    Measure(&'static str),
}

impl Col {
    pub fn name(self) -> &'static str {
        match self {
            Col::Count(n) | Col::Measure(n) => n,
        }
    }
}

impl AppTable {
    /// The columns' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.name()).collect()
    }

    /// The names of the columns that are counts.
    pub fn counts(&self) -> Vec<&'static str> {
        (self.columns.iter())
            .filter_map(|c| match c {
                Col::Count(n) => Some(*n),
                Col::Measure(_) => None,
            })
            .collect()
    }
}

/// Every application table, one line per model.
pub const APP_TABLES: &[&AppTable] = &[
    &tcp::TABLE,
    &rtp::TABLE,
    &rtp::MEDIA_TABLE,
    &tfrc::TABLE,
    &paced::TABLE,
    &svc::TABLE,
    &scaling::TABLE,
    &rmtp::TABLE,
];

/// The fixed part of every packet a source sends.
#[derive(Clone, Debug)]
pub struct PacketTemplate {
    pub flow: crate::net::FlowId,
    pub dst: crate::net::Dest,
    pub src_port: u16,
    pub dst_port: u16,
    pub dscp: u8,
    /// ECN field the source sets (ECT(0) for an ECN-capable transport).
    pub ecn: u8,
    pub payload_bytes: u32,
    pub transport: crate::net::Transport,
}

impl PacketTemplate {
    /// A session's UDP packets to `dst` on `port` at both ends (best
    /// effort, not ECN-capable): RTP, RTCP and RMTP.
    pub fn session_udp(
        flow: crate::net::FlowId,
        dst: crate::net::Dest,
        port: u16,
        payload_bytes: u32,
    ) -> Self {
        PacketTemplate {
            flow,
            dst,
            src_port: port,
            dst_port: port,
            dscp: 0,
            ecn: crate::net::packet::ecn::NOT_ECT,
            payload_bytes,
            transport: crate::net::Transport::Udp,
        }
    }

    pub fn make(&self, seq: u64) -> Packet {
        Packet {
            id: 0,
            flow: self.flow,
            seq,
            size_bytes: self.payload_bytes
                + crate::net::packet::IPV4_HEADER_BYTES
                + self.transport.header_bytes(),
            src: 0,
            dst: self.dst,
            src_port: self.src_port,
            dst_port: self.dst_port,
            dscp: self.dscp,
            ecn: self.ecn,
            // Unset: the engine stamps the send time.
            created_at: SimTime::MAX,
            transport: self.transport.clone(),
            app: crate::net::Payload::NONE,
        }
    }
}

/// A lazy timer: asks for `token` at `at` unless an earlier one is pending
/// in `slot` (a later pending one simply fires early and is re-armed).
pub fn arm_timer(slot: &mut Option<SimTime>, at: SimTime, token: u64, out: &mut Vec<Action>) {
    if slot.is_none_or(|t| at < t) {
        *slot = Some(at);
        out.push(Action::Timer { at, token });
    }
}

/// The timer of `slot` fired at `now`: it is no longer pending.
pub fn timer_fired(slot: &mut Option<SimTime>, now: SimTime) {
    if slot.is_some_and(|t| t <= now) {
        *slot = None;
    }
}

/// When a source stops: at a time, after a number of packets, or both.
#[derive(Clone, Copy, Debug)]
pub struct StopRule {
    /// No packet at or after this time.
    pub stop: SimTime,
    pub max_packets: Option<u64>,
}

impl StopRule {
    pub fn allows(&self, now: SimTime, sent: u64) -> bool {
        now < self.stop && self.max_packets.is_none_or(|m| sent < m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Dest, Transport};

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// A lazy timer is asked for only when nothing earlier is pending: a
    /// later time waits for the pending one (which fires early and is
    /// re-armed); an earlier one is asked for. A pending timer is done
    /// when its time has come, not before.
    #[test]
    fn a_lazy_timer_is_asked_for_only_when_nothing_earlier_is_pending() {
        let mut slot = None;
        let mut out = Vec::new();
        arm_timer(&mut slot, ms(10), 7, &mut out);
        arm_timer(&mut slot, ms(10), 7, &mut out);
        arm_timer(&mut slot, ms(20), 7, &mut out);
        arm_timer(&mut slot, ms(5), 7, &mut out);
        let asked: Vec<Action> = [10, 5]
            .map(|t| Action::Timer {
                at: ms(t),
                token: 7,
            })
            .to_vec();
        assert_eq!(out, asked);
        assert_eq!(slot, Some(ms(5)));
        timer_fired(&mut slot, ms(4));
        assert_eq!(slot, Some(ms(5)), "not yet due");
        timer_fired(&mut slot, ms(5));
        assert_eq!(slot, None);
        out.clear();
        arm_timer(&mut slot, ms(10), 7, &mut out);
        assert_eq!(out.len(), 1, "asked again once the last one fired");
    }

    /// An application that reports nothing (a UDP sink) adds no row to
    /// any table and records no series.
    #[test]
    fn an_application_that_reports_nothing_adds_no_row() {
        let mut sink = Sink;
        sink.set_series(10);
        let mut out = Vec::new();
        sink.on_start(SimTime::ZERO, &mut out);
        sink.on_timer(ms(1), 0, &mut out);
        assert!(out.is_empty());
        assert!(sink.stats(ms(5)).is_none());
        assert!(sink.more_stats(ms(5)).is_empty());
    }

    /// A source sends before its stop time and below its packet limit.
    #[test]
    fn a_stop_rule_allows_before_the_stop_and_below_the_limit() {
        let rule = |max_packets| StopRule {
            stop: ms(100),
            max_packets,
        };
        assert!(rule(None).allows(ms(99), u64::MAX));
        assert!(!rule(None).allows(ms(100), 0));
        assert!(rule(Some(3)).allows(ms(0), 2));
        assert!(!rule(Some(3)).allows(ms(0), 3));
        assert!(!rule(Some(3)).allows(ms(100), 0));
    }

    /// A template's packet: the fixed fields as given, the size of its
    /// payload and headers, the send time left for the engine to stamp.
    #[test]
    fn a_templates_packet_carries_its_fields_and_headers() {
        let tpl = PacketTemplate::session_udp(4, Dest::Node(9), 5004, 172);
        let p = tpl.make(11);
        assert_eq!(
            (p.flow, p.seq, p.dst, p.src_port, p.dst_port),
            (4, 11, Dest::Node(9), 5004, 5004)
        );
        assert_eq!(
            (p.dscp, p.ecn, p.transport.clone()),
            (0, crate::net::packet::ecn::NOT_ECT, Transport::Udp)
        );
        assert_eq!((p.size_bytes, p.payload_bytes()), (200, 172));
        assert_eq!(p.created_at, SimTime::MAX);
    }

    /// Every application table is declared once, with its counts among
    /// its columns and no column named twice.
    #[test]
    fn application_tables_declare_distinct_columns() {
        let mut names: Vec<&str> = APP_TABLES.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), APP_TABLES.len());
        for t in APP_TABLES {
            let cols = t.names();
            assert_eq!(cols.len(), t.columns.len(), "{}", t.name);
            let mut unique = cols.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), cols.len(), "{}", t.name);
            assert!(t.counts().iter().all(|c| cols.contains(c)), "{}", t.name);
        }
        let t = AppTable {
            name: "t",
            columns: &[Col::Count("a"), Col::Measure("b_s"), Col::Count("c")],
            series: false,
        };
        assert_eq!(
            (t.names(), t.counts()),
            (vec!["a", "b_s", "c"], vec!["a", "c"])
        );
    }
}
