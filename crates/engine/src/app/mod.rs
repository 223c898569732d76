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
    /// Keep (or not) the time series this application records for its
    /// `<table>_series` table (`measure.series`).
    /// Keep time series of at most `rows` rows each (0: none).
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
