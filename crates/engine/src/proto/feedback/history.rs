//! The sender's side: what it sent (extended sequence number, time, bytes)
//! and, for each feedback message, the per-packet results it reports.
//! Arrival times are rebuilt from the message's own clock fields,
//! unwrapped to the values nearest the time the message arrived.
//!
//! A packet is reported once to the controller, and once more if a later
//! message reports received a packet an earlier one reported lost (the
//! receiver reports a late packet again, `log.rs`): the controller then
//! sees it received, and the earlier loss stands, as in libwebrtc's
//! transport feedback adapter. Other repeats (a packet reported received
//! again, or lost again) are left out; libwebrtc passes a repeated loss
//! on again.
//!
//! Bounded: the history keeps the last `capacity` packets, and none sent
//! more than `WINDOW` before the newest (libwebrtc's send-time history
//! window, 60 s); feedback about older ones is not matched (counted in
//! `unmatched`). At a call's hundred packets a second the window, not the
//! capacity, bounds it: 6,000 entries rather than the capacity's 32,768.

use super::{extend16, PacketResult};
use crate::sim::SimTime;
use crate::wire::rtcp::twcc::{DELTA_US, REFERENCE_MS};
use crate::wire::rtcp::{Metric, RtcpPacket, Status};
use std::collections::VecDeque;

/// How long a packet stays in the history (libwebrtc's
/// kSendTimeHistoryWindow): feedback comes within a round trip or two.
pub const WINDOW: SimTime = SimTime::from_secs(60);

/// What feedback has said of a packet so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Told {
    Nothing,
    Lost,
    Received,
}

pub struct SendHistory {
    /// (sent_at, bytes, what feedback said) of packets first_seq,
    /// first_seq + 1, ...
    sent: VecDeque<(SimTime, u32, Told)>,
    first_seq: u64,
    capacity: usize,
    /// Reports about packets no longer (or never) in the history.
    pub unmatched: u64,
    /// Packets reported received after a message reported them lost.
    pub recovered: u64,
}

impl SendHistory {
    pub fn new(capacity: usize) -> Self {
        SendHistory {
            sent: VecDeque::new(),
            first_seq: 0,
            capacity: capacity.max(1),
            unmatched: 0,
            recovered: 0,
        }
    }

    /// Packet `seq` (the next extended number: 0, 1, ...) left at `now`.
    pub fn on_sent(&mut self, seq: u64, now: SimTime, bytes: u32) {
        if self.sent.is_empty() {
            self.first_seq = seq;
        }
        debug_assert_eq!(seq, self.first_seq + self.sent.len() as u64);
        self.sent.push_back((now, bytes, Told::Nothing));
        if self.sent.len() > self.capacity {
            self.sent.pop_front();
            self.first_seq += 1;
        }
        while self.sent.front().is_some_and(|f| f.0 + WINDOW < now) {
            self.sent.pop_front();
            self.first_seq += 1;
        }
    }

    /// When packet `seq` left, if the history still holds it.
    #[cfg(test)]
    pub(crate) fn sent_at(&self, seq: u64) -> Option<SimTime> {
        let i = seq.checked_sub(self.first_seq)?;
        self.sent.get(i as usize).map(|s| s.0)
    }

    fn highest(&self) -> u64 {
        (self.first_seq + self.sent.len() as u64).saturating_sub(1)
    }

    fn result(
        &mut self,
        seq: u64,
        (received, arrival): (bool, Option<SimTime>),
        ecn: u8,
    ) -> Option<PacketResult> {
        let i = seq.checked_sub(self.first_seq)? as usize;
        let Some((sent_at, bytes, told)) = self.sent.get_mut(i) else {
            self.unmatched += 1;
            return None;
        };
        match (*told, received) {
            (Told::Received, _) | (Told::Lost, false) => return None, // said already
            (Told::Lost, true) => self.recovered += 1,
            (Told::Nothing, _) => {}
        }
        *told = if received { Told::Received } else { Told::Lost };
        Some(PacketResult {
            seq,
            sent_at: *sent_at,
            bytes: *bytes,
            received,
            arrival,
            ecn,
        })
    }

    /// The results a feedback message `msg`, arriving at `now`, reports.
    pub fn on_feedback(&mut self, now: SimTime, msg: &RtcpPacket) -> Vec<PacketResult> {
        let mut out = Vec::new();
        self.on_feedback_into(now, msg, &mut out);
        out
    }

    /// [`Self::on_feedback`], appending to `out` (a sender's buffer, kept
    /// from one message to the next).
    pub fn on_feedback_into(
        &mut self,
        now: SimTime,
        msg: &RtcpPacket,
        out: &mut Vec<PacketResult>,
    ) {
        match msg {
            RtcpPacket::Ccfb(c) => {
                // Report time: the 1/65536 s value nearest before `now`.
                let now_u = (now.as_nanos() as u128 * 65536 / 1_000_000_000) as u64;
                let ts = extend32(c.report_timestamp, now_u);
                let report_ns = (ts as u128 * 1_000_000_000 / 65536) as u64;
                for b in &c.blocks {
                    let first = extend16(b.begin_seq, self.highest());
                    for (seq, m) in (first..).zip(&b.metrics) {
                        let (arrival, ecn) = match *m {
                            Metric::Lost => ((false, None), 0),
                            Metric::Received { ecn, ato } if ato < 0x1FFE => {
                                let back = ato as u64 * 1_000_000_000 / 1024;
                                let at = SimTime::from_nanos(report_ns.saturating_sub(back));
                                ((true, Some(at)), ecn)
                            }
                            // Over-range or unavailable: received, time unknown.
                            Metric::Received { ecn, .. } => ((true, None), ecn),
                        };
                        if seq < self.first_seq {
                            self.unmatched += 1;
                        } else {
                            out.extend(self.result(seq, arrival, ecn));
                        }
                    }
                }
            }
            RtcpPacket::Twcc(t) => {
                let unit = DELTA_US as u64 * 1000;
                let per_ref = (REFERENCE_MS * 1_000_000) as u64;
                let now_ref = now.as_nanos() / per_ref;
                let r = extend_bits(t.reference_time as u64 & 0x7F_FFFF, now_ref, 23);
                let mut at = (r * per_ref) as i128;
                let first = extend16(t.base_seq, self.highest());
                for (seq, s) in (first..).zip(&t.statuses) {
                    let arrival = match *s {
                        Status::NotReceived => (false, None),
                        Status::Received(d) => {
                            at += d as i128 * unit as i128;
                            (true, Some(SimTime::from_nanos(at.max(0) as u64)))
                        }
                    };
                    if seq < self.first_seq {
                        self.unmatched += 1;
                    } else {
                        out.extend(self.result(seq, arrival, 0));
                    }
                }
            }
            _ => {}
        }
    }
}

/// The value congruent to `v` modulo 2^32 nearest at or before `near`.
fn extend32(v: u32, near: u64) -> u64 {
    extend_bits(v as u64, near, 32)
}

/// The value congruent to `v` modulo 2^bits at or before `near`, nearest
/// it (feedback describes the past).
fn extend_bits(v: u64, near: u64, bits: u32) -> u64 {
    let m = 1u64 << bits;
    let c = (near & !(m - 1)) | v;
    if c > near && c >= m {
        c - m
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At or before `near`, nearest it: a value equal to `near` is `near`
    /// itself, one above it is from the previous wrap.
    #[test]
    fn extending_to_the_nearest_at_or_before() {
        let wrap = 1u64 << 32;
        assert_eq!(extend32(5, wrap + 5), wrap + 5);
        assert_eq!(extend32(6, wrap + 5), 6);
        assert_eq!(extend32(4, wrap + 5), wrap + 4);
        assert_eq!(extend32(6, 5), 6, "never below zero");
        assert_eq!(extend_bits(3, (1 << 23) + 3, 23), (1 << 23) + 3);
    }
}
