//! The receiver's side: arrivals (extended sequence number, time, ECN) in,
//! feedback messages out. Each message reports every packet from the first
//! not yet reported to the highest received (at most 16384, RFC 8888
//! 3.1). Nothing is sent when nothing new arrived.
//!
//! A packet that arrives after a message reported it lost (a path that
//! reorders) is reported again, received: the next message starts at it
//! and reports every packet from there on once more, as libwebrtc's
//! transport feedback does (its RemoteEstimatorProxy moves the window
//! back to the late packet). For that the log keeps what a message
//! reported for `BACK` (500 ms, as long as libwebrtc keeps arrivals: its
//! kBackWindow); a packet arriving later than that after the message that
//! said it lost, or older than the first logged, is not reported. Only
//! packets from the lowest one reported lost on are kept (a late packet
//! is one of those), so on a path without loss or reordering the log
//! empties at every message, as it would without this rule.

use super::Format;
use crate::sim::SimTime;
use crate::wire::rtcp::ccfb::{ato_of, MAX_REPORTS};
use crate::wire::rtcp::twcc::{DELTA_US, REFERENCE_MS};
use crate::wire::rtcp::{Ccfb, CcfbBlock, Metric, RtcpPacket, Status, Twcc};
use std::collections::VecDeque;

/// How long a message's packets are kept for a late packet's report.
pub const BACK: SimTime = SimTime::from_millis(500);

/// An arrival as the log keeps it: its time in nanoseconds and its ECN
/// bits in one word (a third of an `Option<(SimTime, u8)>`: the log holds
/// half a second of packets), or `NOT_ARRIVED`.
type Packed = u64;
const NOT_ARRIVED: Packed = u64::MAX;

fn pack(at: SimTime, ecn: u8) -> Packed {
    debug_assert!(at.as_nanos() < 1 << 62, "146 years of simulated time");
    (at.as_nanos() << 2) | (ecn & 3) as u64
}

fn unpack(p: Packed) -> Option<(SimTime, u8)> {
    (p != NOT_ARRIVED).then(|| (SimTime::from_nanos(p >> 2), (p & 3) as u8))
}

pub struct ArrivalLog {
    format: Format,
    sender_ssrc: u32,
    media_ssrc: u32,
    /// The first packet the log holds (reported or not).
    base: Option<u64>,
    /// The first packet not yet reported.
    next: u64,
    highest: Option<u64>,
    /// The lowest packet that arrived after it was reported lost.
    late: Option<u64>,
    /// The lowest packet kept that was reported lost and has not come.
    gap: Option<u64>,
    /// Arrivals of packets `base`, `base + 1`, ...
    arrivals: VecDeque<Packed>,
    /// (when, the first packet after it) of each message sent in the
    /// last `BACK`: its packets go when it is that old.
    sent: VecDeque<(SimTime, u64)>,
    fb_count: u8,
    /// Packets reported again, received, after a message reported them
    /// lost.
    pub reported_late: u64,
}

impl ArrivalLog {
    pub fn new(format: Format, sender_ssrc: u32, media_ssrc: u32) -> Self {
        ArrivalLog {
            format,
            sender_ssrc,
            media_ssrc,
            base: None,
            next: 0,
            highest: None,
            late: None,
            gap: None,
            arrivals: VecDeque::new(),
            sent: VecDeque::new(),
            fb_count: 0,
            reported_late: 0,
        }
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// Arrivals held, reported or not (bounded by MAX_REPORTS).
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.arrivals.len()
    }

    /// The highest sequence number received, extended.
    pub fn highest(&self) -> Option<u64> {
        self.highest
    }

    /// Packet `seq` (extended) arrived at `now` with ECN bits `ecn`.
    #[inline]
    pub fn on_packet(&mut self, now: SimTime, seq: u64, ecn: u8) {
        // The usual case: the packet after the last one logged (the log
        // holds `base..=highest`), with room below MAX_REPORTS. What the
        // general path does then comes down to this append.
        if let Some(base) = self.base {
            let held = self.arrivals.len();
            if seq == base + held as u64 && held < MAX_REPORTS {
                self.arrivals.push_back(pack(now, ecn));
                self.highest = Some(seq);
                return;
            }
        }
        self.on_packet_general(now, seq, ecn);
    }

    /// Any packet: a gap, a late one, one already reported, the bound.
    #[inline(never)]
    pub(super) fn on_packet_general(&mut self, now: SimTime, seq: u64, ecn: u8) {
        if seq < self.next {
            self.forget(now); // a late packet: is its message still kept?
        }
        let mut base = match self.base {
            Some(b) if seq < b => return, // older than the log
            Some(b) => b,
            None => {
                self.base = Some(seq);
                self.next = seq;
                seq
            }
        };
        // Bound: a message reports at most MAX_REPORTS packets, so older
        // ones need not wait.
        let floor = seq.saturating_sub(MAX_REPORTS as u64 - 1);
        if base < floor {
            let skip = (floor - base).min(self.arrivals.len() as u64) as usize;
            self.arrivals.drain(..skip);
            base = floor;
            self.base = Some(floor);
            self.next = self.next.max(floor);
            self.late = self.late.filter(|&l| l >= floor);
            if self.gap.is_some_and(|g| g < floor) {
                self.gap = self.first_missing(floor);
            }
        }
        let k = (seq - base) as usize;
        if k >= self.arrivals.len() {
            self.arrivals.resize(k + 1, NOT_ARRIVED);
        }
        if self.arrivals[k] != NOT_ARRIVED {
            return; // a duplicate: the first copy counts (RFC 8888 3.1)
        }
        self.arrivals[k] = pack(now, ecn);
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        if seq < self.next {
            // Reported lost already: report it again.
            self.late = Some(self.late.map_or(seq, |l| l.min(seq)));
            self.reported_late += 1;
            if self.gap == Some(seq) {
                self.gap = self.first_missing(seq + 1);
            }
        }
    }

    /// The messages reporting everything new, made at `now`: from the
    /// first packet not yet reported, or the lowest late one, to the
    /// highest received.
    pub fn flush(&mut self, now: SimTime) -> Vec<RtcpPacket> {
        let (Some(base), Some(high)) = (self.base, self.highest) else {
            return Vec::new();
        };
        let from = self.late.take().map_or(self.next, |l| l.min(self.next));
        if high < from {
            return Vec::new();
        }
        let first = from.max(high.saturating_sub(MAX_REPORTS as u64 - 1));
        self.next = high + 1;
        let arrivals = std::mem::take(&mut self.arrivals);
        let range = first..=high;
        let arrived = |s: u64| unpack(arrivals[(s - base) as usize]);
        let out = match self.format {
            Format::Rfc8888 => vec![self.ccfb(now, range, &arrived)],
            Format::Twcc => self.twcc(range, &arrived),
        };
        self.arrivals = arrivals;
        if self.gap.is_none() {
            self.gap = self.first_missing(first);
        }
        match self.gap {
            // Nothing reported lost is kept, so nothing can come late:
            // emptied, its memory kept for the next packets.
            None => {
                self.arrivals.clear();
                self.sent.clear();
                self.base = Some(self.next);
            }
            Some(gap) => {
                self.sent.push_back((now, self.next));
                self.drop_below(gap);
                self.forget(now);
            }
        }
        out
    }

    /// The lowest packet from `from` on that was reported and has not come.
    fn first_missing(&self, from: u64) -> Option<u64> {
        let base = self.base?;
        let start = from.max(base) - base;
        let end = self
            .next
            .saturating_sub(base)
            .min(self.arrivals.len() as u64);
        let range = start.min(end) as usize..end as usize;
        let at = self.arrivals.range(range).position(|&a| a == NOT_ARRIVED)?;
        Some(from.max(base) + at as u64)
    }

    /// Lets go of the packets below `seq` (without reading them: a drain
    /// of plain words).
    fn drop_below(&mut self, seq: u64) {
        let Some(base) = self.base.filter(|&b| b < seq) else {
            return;
        };
        let k = ((seq - base) as usize).min(self.arrivals.len());
        self.arrivals.drain(..k);
        self.base = Some(base + k as u64);
    }

    /// Lets go of the packets of messages sent `BACK` or more before `now`.
    fn forget(&mut self, now: SimTime) {
        while let Some(&(_, upto)) = self.sent.front().filter(|m| m.0 + BACK <= now) {
            self.sent.pop_front();
            self.drop_below(upto);
        }
        if let (Some(gap), Some(base)) = (self.gap, self.base) {
            if gap < base {
                self.gap = self.first_missing(base);
            }
        }
    }

    fn ccfb(
        &self,
        now: SimTime,
        range: std::ops::RangeInclusive<u64>,
        arrived: &dyn Fn(u64) -> Option<(SimTime, u8)>,
    ) -> RtcpPacket {
        let ts = crate::wire::rtcp::ntp_short(now);
        // The report time as the receiver wrote it (1/65536 s).
        let report_s = (now.as_nanos() / 1_000_000_000) as f64 + (ts & 0xFFFF) as f64 / 65536.0;
        let begin = *range.start();
        let metrics = range
            .map(|s| match arrived(s) {
                None => Metric::Lost,
                Some((at, ecn)) => Metric::Received {
                    ecn,
                    ato: ato_of(report_s - at.as_secs_f64()),
                },
            })
            .collect();
        RtcpPacket::Ccfb(Ccfb {
            sender_ssrc: self.sender_ssrc,
            blocks: vec![CcfbBlock {
                media_ssrc: self.media_ssrc,
                begin_seq: begin as u16,
                metrics,
            }],
            report_timestamp: ts,
        })
    }

    /// One or more messages: the first starts at the range's first packet,
    /// received or not (the base sequence number may be a lost packet's, as
    /// in libwebrtc; the first receive delta counts from the reference
    /// time); a new one starts where a receive delta would not fit 16
    /// signed bits of 250 us (libwebrtc does the same).
    fn twcc(
        &mut self,
        range: std::ops::RangeInclusive<u64>,
        arrived: &dyn Fn(u64) -> Option<(SimTime, u8)>,
    ) -> Vec<RtcpPacket> {
        let units = |t: SimTime| (t.as_nanos() / (DELTA_US as u64 * 1000)) as i64;
        let per_ref = REFERENCE_MS * 1000 / DELTA_US; // 256 units per 64 ms
        let mut out = Vec::with_capacity(1);
        let mut cur: Option<(Twcc, i64)> = None;
        let last_seq = *range.end();
        // Lost packets at the range's start, before the first message's
        // first received one: reported at the head of that message.
        let mut leading = 0u64;
        for s in range {
            let Some((at, _)) = arrived(s) else {
                match cur.as_mut() {
                    Some((t, _)) => t.statuses.push(Status::NotReceived),
                    None => leading += 1,
                }
                continue;
            };
            let u = units(at);
            if let Some((t, last)) = cur.as_mut() {
                if (u - *last).abs() <= i16::MAX as i64 {
                    t.statuses.push(Status::Received((u - *last) as i32));
                    *last = u;
                    continue;
                }
                out.push(RtcpPacket::Twcc(cur.take().expect("started").0));
            }
            // A new message at this packet (after the leading lost ones, in
            // the first): its first delta counts from the reference time
            // (0..=255 units of 250 us).
            let reference = u / per_ref;
            let base = s - std::mem::take(&mut leading);
            let t = Twcc {
                sender_ssrc: self.sender_ssrc,
                media_ssrc: self.media_ssrc,
                base_seq: base as u16,
                // 23 bits: mediasim's references stay positive (they wrap
                // after 149 hours of simulated time).
                reference_time: (reference & 0x7F_FFFF) as i32,
                fb_count: self.fb_count,
                // Room for every packet to the end of the range: one
                // allocation per message.
                statuses: {
                    let mut v = Vec::with_capacity((last_seq - base + 1) as usize);
                    v.resize((s - base) as usize, Status::NotReceived);
                    v.push(Status::Received((u - reference * per_ref) as i32));
                    v
                },
            };
            self.fb_count = self.fb_count.wrapping_add(1);
            cur = Some((t, u));
        }
        out.extend(cur.map(|c| RtcpPacket::Twcc(c.0)));
        out
    }
}
