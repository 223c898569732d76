//! An RMTP receiver: the received bitmap, in-order delivery with the delay
//! of each packet (first transmission to delivery), and its HACK.

use std::collections::BTreeMap;

use super::seqset::{HackReport, SeqSet};
use crate::sim::SimTime;

#[derive(Clone, Debug, Default)]
pub struct RmtpReceiver {
    got: SeqSet,
    /// First-transmission times of packets held for in-order delivery.
    waiting: BTreeMap<u64, SimTime>,
    pub delivered: u64,
    /// Sum of the delivered packets' delays, seconds.
    pub delay_sum_s: f64,
    /// Copies that arrived again (already received).
    pub duplicates: u64,
    /// Packets whose first copy to arrive was a retransmission or repair.
    pub recovered: u64,
}

impl RmtpReceiver {
    /// A copy of `seq` (first sent at `first_sent`; `retx` if this copy is
    /// a retransmission or a repair) arrived; returns how many packets it
    /// delivered in order.
    pub fn on_data(&mut self, now: SimTime, seq: u64, first_sent: SimTime, retx: bool) -> u64 {
        if !self.got.insert(seq) {
            self.duplicates += 1;
            return 0;
        }
        self.recovered += retx as u64;
        self.waiting.insert(seq, first_sent);
        let before = self.delivered;
        while let Some(entry) = self.waiting.first_entry() {
            if *entry.key() != self.delivered {
                break;
            }
            let sent = entry.remove();
            self.delay_sum_s += now.saturating_sub(sent).as_secs_f64();
            self.delivered += 1;
        }
        self.delivered - before
    }

    pub fn has(&self, seq: u64) -> bool {
        self.got.contains(seq)
    }

    /// Received but waiting for an earlier packet.
    pub fn waiting(&self) -> u64 {
        self.waiting.len() as u64
    }

    /// One past the highest number received.
    pub fn end(&self) -> u64 {
        self.got.end()
    }

    pub fn report(&self) -> HackReport {
        self.got.report()
    }

    pub fn received(&self) -> &SeqSet {
        &self.got
    }
}
