//! An RMTP designated receiver (DR): a receiver that also keeps copies in
//! a bounded final buffer, takes its children's HACKs (receivers, or DRs
//! below it), re-multicasts what they miss and it holds, and reports to
//! its parent (the sender, or a DR above it).

use std::collections::BTreeMap;

use super::receiver::RmtpReceiver;
use super::seqbits::SeqBits;
use super::seqset::HackReport;
use crate::sim::SimTime;

#[derive(Clone, Debug)]
pub struct RmtpDr {
    pub rx: RmtpReceiver,
    /// The final buffer: sequence number -> the copy held.
    buffer: BTreeMap<u64, Held>,
    capacity: usize,
    /// A packet is not repaired again within this time of its last repair
    /// (a HACK sent before the repair arrived would ask again).
    holdoff: SimTime,
    /// Each child's latest HACK (none yet: it has nothing).
    children: Vec<HackReport>,
    /// Reported missing by a child since the last repair round.
    requested: SeqBits,
    /// Packets re-multicast on the local channel.
    pub local_retx: u64,
    /// Packets that did not fit in the final buffer.
    pub overflows: u64,
    pub peak_buffer: usize,
    /// When a packet new to the DR last arrived.
    last_new_at: SimTime,
    /// After this long without a new packet the stream counts as stopped.
    tail_after: SimTime,
    /// The HACK to the parent acknowledges only what every child has too
    /// (else: what the DR can answer for, see `report`).
    pub ack_subgroup: bool,
}

/// A packet in a DR's final buffer.
#[derive(Clone, Copy, Debug)]
struct Held {
    first_sent: SimTime,
    last_repair: Option<SimTime>,
}

impl RmtpDr {
    /// A DR of `children`, a final buffer of `capacity`, the repair
    /// `holdoff`, and `tail_after` without new data before the stream
    /// counts as stopped.
    pub fn new(children: usize, capacity: usize, holdoff: SimTime, tail_after: SimTime) -> Self {
        RmtpDr {
            rx: RmtpReceiver::default(),
            buffer: BTreeMap::new(),
            capacity,
            holdoff,
            children: vec![HackReport::default(); children],
            requested: SeqBits::default(),
            local_retx: 0,
            overflows: 0,
            peak_buffer: 0,
            last_new_at: SimTime::ZERO,
            tail_after,
            ack_subgroup: false,
        }
    }

    fn all_children_have(&self, seq: u64) -> bool {
        self.children.iter().all(|c| c.has(seq))
    }

    /// A copy of `seq` arrived (from the data channel or the parent's
    /// local channel): received, and kept while a child may need it.
    pub fn on_data(&mut self, now: SimTime, seq: u64, first_sent: SimTime, retx: bool) -> u64 {
        if !self.rx.has(seq) {
            self.last_new_at = now;
        }
        let delivered = self.rx.on_data(now, seq, first_sent, retx);
        if !self.buffer.contains_key(&seq) && !self.all_children_have(seq) {
            if self.buffer.len() < self.capacity {
                let held = Held {
                    first_sent,
                    last_repair: None,
                };
                self.buffer.insert(seq, held);
                self.peak_buffer = self.peak_buffer.max(self.buffer.len());
            } else {
                // The study: what does not fit cannot be repaired locally.
                self.overflows += 1;
            }
        }
        delivered
    }

    /// Child `child`'s HACK arrived at `now`: what it reports missing is
    /// asked for. Once nothing new has reached the DR for `tail_after` (the
    /// stream has stopped), a held packet that the HACK does not cover yet
    /// counts as missing too: at the tail of a stream nothing arrives after
    /// a lost packet to reveal the gap (chosen; the study's sender never
    /// stops).
    pub fn on_child_hack(&mut self, now: SimTime, child: usize, report: HackReport) {
        self.requested.insert_missing(&report);
        if now >= self.last_new_at + self.tail_after {
            for (&s, _) in self.buffer.range(report.end..) {
                self.requested.insert(s);
            }
        }
        self.children[child] = report;
    }

    /// One repair round at `now`: what to re-multicast on the local
    /// channel (each packet a child asked for since the last round and the
    /// DR holds, once, unless repaired within the hold-off), then the
    /// packets every child has leave the buffer.
    pub fn repair_round(&mut self, now: SimTime) -> Vec<(u64, SimTime)> {
        let requested = std::mem::take(&mut self.requested);
        let mut out = Vec::new();
        let mut repair = |s: u64, h: &mut Held| {
            if h.last_repair.is_some_and(|t| now < t + self.holdoff) {
                return;
            }
            h.last_repair = Some(now);
            out.push((s, h.first_sent));
        };
        // Only what the buffer holds can be repaired: walk whichever of
        // the two is smaller, both in increasing order.
        if requested.len() < self.buffer.len() {
            for s in requested.iter() {
                if let Some(h) = self.buffer.get_mut(&s) {
                    repair(s, h);
                }
            }
        } else {
            for (&s, h) in self.buffer.range_mut(requested.span()) {
                if requested.contains(s) {
                    repair(s, h);
                }
            }
        }
        self.local_retx += out.len() as u64;
        let children = &self.children;
        self.buffer
            .retain(|&s, _| !children.iter().all(|c| c.has(s)));
        out
    }

    /// The HACK to the parent.
    /// - `ack_subgroup` (the study's agents): a packet is acknowledged once
    ///   the DR and every child have it; until then the parent counts it
    ///   as lost, and retransmits it too, however fast the DR repairs.
    /// - Otherwise the DR acknowledges what it can answer for: a packet it
    ///   has and either holds in its final buffer or knows every child
    ///   has. A packet that did not fit and that some child may still miss
    ///   stays unacknowledged, so that the parent keeps it and repairs it
    ///   when asked.
    pub fn report(&self) -> HackReport {
        let own = self.rx.received();
        let children_base = self
            .children
            .iter()
            .map(|c| c.base)
            .min()
            .unwrap_or(u64::MAX);
        let lo = own.prefix().min(children_base);
        if self.ack_subgroup {
            // A word at a time: what the DR and every child have.
            let own = own.report();
            return HackReport::from_words(lo, own.end, |p| {
                (self.children.iter()).fold(own.bits_from(p), |w, c| w & c.bits_from(p))
            });
        }
        HackReport::from_fn(lo, own.end(), |s| {
            own.contains(s) && (self.buffer.contains_key(&s) || self.all_children_have(s))
        })
    }

    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }
}
