//! SCReAM's list of transmitted packets (RFC 8298 4.1.2.1): bytes in
//! flight from the newest packet down to, not including, the highest
//! acknowledged one; bytes newly acknowledged (lost packets included);
//! lost packets; and the queuing delay against the base one-way delay.

use crate::proto::feedback::PacketResult;
use crate::sim::SimTime;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
struct Sent {
    seq: u64,
    bytes: u32,
}

/// What one feedback message says, in SCReAM's terms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Acked {
    /// Bytes of the packets the highest acknowledged sequence number moved
    /// past (lost ones included, RFC 8298 4.1.2.1).
    pub bytes_newly_acked: u64,
    /// Of those, bytes reported CE-marked.
    pub bytes_newly_acked_ce: u64,
    /// Packets reported received, and of them CE-marked.
    pub packets_acked: u64,
    pub packets_ce: u64,
    /// Bytes reported received (the acknowledged rate).
    pub bytes_received: u64,
    /// Packets reported lost below the highest received one.
    pub lost: u64,
    /// One-way delay of the highest received packet.
    pub owd: Option<SimTime>,
}

/// The packets sent and not yet passed by an acknowledgement.
#[derive(Default)]
pub struct Flight {
    list: VecDeque<Sent>,
    bytes_in_flight: u64,
    highest_acked: Option<u64>,
}

impl Flight {
    pub fn on_send(&mut self, seq: u64, bytes: u32) {
        self.list.push_back(Sent { seq, bytes });
        self.bytes_in_flight += bytes as u64;
    }

    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }

    /// Forgets every packet in flight (no feedback for too long: RFC 8298
    /// leaves this open; the reference code clears its list after 0.5 s
    /// without a transmission, so that the window cannot stay shut).
    pub fn clear(&mut self) {
        self.list.clear();
        self.bytes_in_flight = 0;
    }

    /// Reads one feedback message (results in sequence order).
    pub fn on_feedback(&mut self, results: &[PacketResult]) -> Acked {
        let mut a = Acked::default();
        let Some(top) = results.iter().filter(|r| r.received).max_by_key(|r| r.seq) else {
            return a;
        };
        for r in results {
            if r.received {
                a.packets_acked += 1;
                a.bytes_received += r.bytes as u64;
                if r.ecn == crate::net::packet::ecn::CE {
                    a.packets_ce += 1;
                    if self.highest_acked.is_none_or(|h| r.seq > h) {
                        a.bytes_newly_acked_ce += r.bytes as u64;
                    }
                }
            } else if r.seq < top.seq && self.highest_acked.is_none_or(|h| r.seq > h) {
                a.lost += 1;
            }
        }
        a.owd = top.arrival.map(|at| at.saturating_sub(top.sent_at));
        if self.highest_acked.is_none_or(|h| top.seq > h) {
            self.highest_acked = Some(top.seq);
            while let Some(s) = self.list.front().filter(|s| s.seq <= top.seq) {
                a.bytes_newly_acked += s.bytes as u64;
                self.bytes_in_flight -= s.bytes as u64;
                self.list.pop_front();
            }
        }
        a
    }
}

/// The base one-way delay as LEDBAT keeps it (RFC 6817 2.4.2, which RFC
/// 8298 4.1.2.1 follows): the minimum of each of the last `bins` minutes,
/// and the queuing delay as a sample minus their minimum.
pub struct BaseDelay {
    minutes: VecDeque<SimTime>,
    bins: usize,
    bin_start: SimTime,
}

const MINUTE: SimTime = SimTime::from_secs(60);

impl BaseDelay {
    pub fn new(bins: usize) -> Self {
        BaseDelay {
            minutes: VecDeque::new(),
            bins: bins.max(1),
            bin_start: SimTime::ZERO,
        }
    }

    /// A one-way delay sample at `now`; the queuing delay it shows.
    pub fn qdelay(&mut self, now: SimTime, owd: SimTime) -> SimTime {
        match self.minutes.back_mut() {
            Some(m) if now < self.bin_start + MINUTE => *m = (*m).min(owd),
            _ => {
                self.bin_start = now;
                self.minutes.push_back(owd);
                if self.minutes.len() > self.bins {
                    self.minutes.pop_front();
                }
            }
        }
        let base = self.minutes.iter().copied().min().unwrap_or(owd);
        owd.saturating_sub(base)
    }
}

/// A maximum over the last `span`, kept in `slots` bins.
pub struct WindowMax {
    bins: VecDeque<(SimTime, u64)>,
    span: SimTime,
    slot: SimTime,
}

impl WindowMax {
    pub fn new(span: SimTime, slots: usize) -> Self {
        WindowMax {
            bins: VecDeque::new(),
            span,
            slot: SimTime::from_nanos((span.as_nanos() / slots.max(1) as u64).max(1)),
        }
    }

    pub fn add(&mut self, now: SimTime, x: u64) {
        match self.bins.back_mut() {
            Some((start, m)) if now < *start + self.slot => *m = (*m).max(x),
            _ => self.bins.push_back((now, x)),
        }
        while self.bins.front().is_some_and(|b| b.0 + self.span <= now) {
            self.bins.pop_front();
        }
    }

    pub fn max(&self) -> u64 {
        self.bins.iter().map(|b| b.1).max().unwrap_or(0)
    }
}
