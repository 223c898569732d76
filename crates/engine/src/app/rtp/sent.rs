//! A media sender's record of its recent packets, for what loss reports
//! (Generic NACKs, RFC 4585 6.2.1) say of them: when each was sent, and
//! which members reported it lost.
//!
//! A NACK names 16-bit sequence numbers; the record extends each to the
//! latest packet sent with those low bits, so a loss after the sequence
//! wrapped is a new loss, not the earlier packet of that number. It keeps
//! the packets of the last [`HORIZON`] and at most [`MAX_PACKETS`] (half
//! the sequence space: a report further back cannot name its packet
//! unambiguously). A report of an older packet is not counted: with
//! reports within seconds, as RTCP's intervals give, none is that old.

use crate::measure::RunningMean;
use crate::sim::SimTime;
use std::collections::{BTreeMap, VecDeque};

/// How long a sent packet stays in the record (libwebrtc keeps its
/// send-side history as long).
pub const HORIZON: SimTime = SimTime::from_secs(60);
/// At most this many packets are kept.
pub const MAX_PACKETS: usize = 1 << 15;
/// The record is trimmed once it holds this much more than it needs, in
/// one go: a test that fails on all but one packet in thousands costs no
/// mispredicted branch per packet. Reports are placed by the bounds
/// themselves, so the trimming does not show in any count.
const TRIM_AFTER: SimTime = SimTime::from_secs(1);
const TRIM_PACKETS: usize = 1 << 10;

/// Who reported a packet lost.
#[derive(Clone, Copy, Debug)]
struct Reported {
    first: u32,
    more: bool,
}

#[derive(Default)]
pub struct SentRecord {
    /// Extended sequence number of `times[0]`.
    first: u64,
    times: VecDeque<SimTime>,
    /// Reported packets still in the record, by extended sequence number.
    reported: BTreeMap<u64, Reported>,
    /// From send to the first report, per packet reported.
    delays: RunningMean,
    /// Packets reported by more than one member.
    multiply: u64,
    /// Reports of packets no longer (or never) in the record.
    unplaced: u64,
}

impl SentRecord {
    /// The next packet (sequence numbers are consecutive) left at `now`.
    #[inline]
    pub fn on_sent(&mut self, now: SimTime) {
        self.times.push_back(now);
        let old = |t: &SimTime| *t + HORIZON + TRIM_AFTER < now;
        if self.times.len() > MAX_PACKETS + TRIM_PACKETS || self.times.front().is_some_and(old) {
            self.forget(now);
        }
    }

    #[inline(never)]
    fn forget(&mut self, now: SimTime) {
        while self.times.len() > MAX_PACKETS
            || self.times.front().is_some_and(|t| *t + HORIZON < now)
        {
            self.times.pop_front();
            self.first += 1;
        }
        while self
            .reported
            .first_key_value()
            .is_some_and(|(&s, _)| s < self.first)
        {
            self.reported.pop_first();
        }
    }

    /// The extended number of the latest packet sent with the low 16 bits
    /// `seq`, if it is within the bounds at `now`.
    fn place(&self, now: SimTime, seq: u16) -> Option<u64> {
        let newest = self.first + (self.times.len() as u64).checked_sub(1)?;
        let back = (newest as u16).wrapping_sub(seq) as usize;
        let i = (self.times.len() - 1).checked_sub(back)?;
        (back < MAX_PACKETS && self.times[i] + HORIZON >= now).then_some(self.first + i as u64)
    }

    /// Member `reporter` reported packet `seq` lost at `now`.
    pub fn on_report(&mut self, now: SimTime, seq: u16, reporter: u32) {
        let Some(ext) = self.place(now, seq) else {
            self.unplaced += 1;
            return;
        };
        match self.reported.get_mut(&ext) {
            None => {
                self.reported.insert(
                    ext,
                    Reported {
                        first: reporter,
                        more: false,
                    },
                );
                let sent = self.times[(ext - self.first) as usize];
                self.delays.add((now - sent).as_secs_f64());
            }
            Some(r) if !r.more && r.first != reporter => {
                r.more = true;
                self.multiply += 1;
            }
            Some(_) => {}
        }
    }

    /// Packets reported lost (each once).
    pub fn reports(&self) -> u64 {
        self.delays.count()
    }

    /// Mean delay from send to first report, in seconds (NaN: none).
    pub fn delay_mean_s(&self) -> f64 {
        self.delays.mean()
    }

    pub fn multiply_reported(&self) -> u64 {
        self.multiply
    }

    /// Reports that named no packet in the record.
    pub fn unplaced(&self) -> u64 {
        self.unplaced
    }

    #[cfg(test)]
    fn kept(&self) -> usize {
        self.times.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// `n` packets, one a millisecond from time 0.
    fn sent(n: u64) -> SentRecord {
        let mut r = SentRecord::default();
        for i in 0..n {
            r.on_sent(ms(i));
        }
        r
    }

    #[test]
    fn a_report_measures_from_the_latest_send_of_its_number() {
        let mut r = sent(70_000);
        // 70,000 packets: number 100 was last sent as packet 65,636.
        r.on_report(ms(70_000), 100, 7);
        assert_eq!(r.reports(), 1);
        assert!((r.delay_mean_s() - (70_000.0 - 65_636.0) / 1000.0).abs() < 1e-9);
    }

    #[test]
    fn a_loss_after_the_sequence_wrapped_is_a_new_loss() {
        let mut r = SentRecord::default();
        for i in 0..200_000u64 {
            r.on_sent(ms(i / 10)); // 10 a millisecond: the time bound stays out
            if i % 65_536 == 500 && i > 500 {
                r.on_report(ms(i / 10), 500, 1);
            }
        }
        // Packets 66,036, 131,572 and 197,108, each reported as it left.
        assert_eq!((r.reports(), r.unplaced()), (3, 0));
        assert!(r.delay_mean_s().abs() < 1e-9);
    }

    #[test]
    fn a_second_member_makes_a_multiple_report_once_and_a_repeat_does_not() {
        let mut r = sent(10);
        r.on_report(ms(20), 3, 1);
        r.on_report(ms(21), 3, 1);
        assert_eq!((r.reports(), r.multiply_reported()), (1, 0));
        r.on_report(ms(22), 3, 2);
        r.on_report(ms(23), 3, 4);
        assert_eq!((r.reports(), r.multiply_reported()), (1, 1));
        // Only the first report's delay counts: 20 - 3 ms.
        assert!((r.delay_mean_s() - 0.017).abs() < 1e-12);
    }

    #[test]
    fn the_record_is_bounded_by_time_and_by_count_and_older_reports_are_unplaced() {
        // One each 10 ms for 100 s: the last 60 s count (sent at 39.99 s
        // and later, packets 3,999 to 9,999), at most a second more is kept.
        let mut slow = SentRecord::default();
        for i in 0..10_000u64 {
            slow.on_sent(ms(i * 10));
        }
        assert!((6_001..=6_101).contains(&slow.kept()), "{}", slow.kept());
        slow.on_report(ms(99_990), 3_999, 1);
        slow.on_report(ms(99_990), 3_998, 1);
        assert_eq!((slow.reports(), slow.unplaced()), (1, 1));
        // 100 a millisecond: the count bound.
        let mut fast = SentRecord::default();
        for i in 0..100_000u64 {
            fast.on_sent(SimTime::from_micros(i * 10));
        }
        let kept = fast.kept();
        assert!(
            (MAX_PACKETS..=MAX_PACKETS + TRIM_PACKETS).contains(&kept),
            "{kept}"
        );
        // The newest packet is 99,999: the one MAX_PACKETS - 1 back counts,
        // the one MAX_PACKETS back and one 40,000 back do not.
        let back = |n: u64| (99_999 - n) as u16;
        fast.on_report(SimTime::from_secs(1), back(MAX_PACKETS as u64 - 1), 1);
        fast.on_report(SimTime::from_secs(1), back(MAX_PACKETS as u64), 1);
        fast.on_report(SimTime::from_secs(1), back(40_000), 1);
        assert_eq!((fast.reports(), fast.unplaced()), (1, 2));
        // Reported entries leave with their packets.
        let mut s = sent(10);
        s.on_report(ms(10), 2, 1);
        assert_eq!(s.reported.len(), 1);
        for i in 10..70_010 {
            s.on_sent(ms(i));
        }
        assert!(s.reported.is_empty());
    }

    /// Sends 10.003 ms apart for 100 s, so that no packet is ever exactly
    /// 61 s older than the newest: the record still keeps about the last
    /// 60 s (6,000 packets), trimmed once its oldest is past 61 s.
    #[test]
    fn the_record_is_trimmed_by_age_at_any_spacing() {
        let mut r = SentRecord::default();
        for i in 0..10_000u64 {
            r.on_sent(SimTime::from_micros(i * 10_003));
        }
        assert!((5_990..=6_100).contains(&r.kept()), "{}", r.kept());
    }

    /// The first packet kept after a trim keeps its report: another
    /// member's report of it is a multiple report, not a new one.
    #[test]
    fn the_first_packet_kept_keeps_its_report() {
        // One packet each 10 ms: packet k leaves at 10 k ms.
        let mut r = SentRecord::default();
        for k in 0..=101u64 {
            r.on_sent(ms(10 * k));
        }
        r.on_report(ms(1_010), 101, 1);
        for k in 102..=6_101u64 {
            r.on_sent(ms(10 * k));
        }
        // At 61,010 ms packet 0 is over 61 s old: the trim keeps the
        // packets of the last 60 s, 101 on.
        assert_eq!(r.first, 101);
        r.on_report(ms(61_010), 101, 2);
        assert_eq!((r.reports(), r.multiply_reported()), (1, 1));
    }

    /// Right after a trim by count the record holds MAX_PACKETS packets,
    /// so the oldest of them, MAX_PACKETS - 1 back, is still placed.
    #[test]
    fn a_trim_by_count_keeps_every_packet_a_report_can_name() {
        let mut r = SentRecord::default();
        let n = (MAX_PACKETS + TRIM_PACKETS + 1) as u64;
        for i in 0..n {
            r.on_sent(SimTime::from_micros(10 * i));
        }
        assert_eq!(r.kept(), MAX_PACKETS);
        let oldest = n - MAX_PACKETS as u64;
        r.on_report(SimTime::from_secs(1), oldest as u16, 1);
        assert_eq!((r.reports(), r.unplaced()), (1, 0));
    }

    #[test]
    fn a_report_before_anything_was_sent_is_unplaced() {
        let mut r = SentRecord::default();
        r.on_report(ms(1), 0, 1);
        assert_eq!((r.reports(), r.unplaced()), (0, 1));
    }
}
