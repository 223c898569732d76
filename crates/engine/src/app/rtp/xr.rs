//! RFC 3611's round trip for members that send no media: such a member
//! (`xr_rtt`) puts a Receiver Reference Time block in its regular reports;
//! whoever hears one answers in its next regular report with a DLRR
//! sub-block (the RRTR's timestamp and the time held), and the member
//! takes RTT = A - LRR - DLRR (RFC 3611 4.5), as RFC 3550 6.4.1 does with
//! SRs. The answers follow libwebrtc's RTCP receiver: at most 300 RRTRs
//! waiting (kMaxNumberOfStoredRrtrs; a newer one from the same member
//! replaces its older one in place, a new member past the limit is not
//! kept), at most 50 answered per report (kMaxNumberOfDlrrItems), oldest
//! first, each answered once.

use crate::sim::SimTime;
use std::collections::VecDeque;

/// RRTRs kept waiting for an answer.
pub const MAX_WAITING: usize = 300;
/// DLRR sub-blocks in one report.
pub const MAX_PER_REPORT: usize = 50;

/// One DLRR sub-block as simulated times (exported as NTP short format).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dlrr {
    pub ssrc: u32,
    /// When the member's RRTR was sent (its NTP timestamp).
    pub lrr: SimTime,
    /// Delay from its arrival to this report.
    pub delay: SimTime,
}

/// The RRTRs heard and not yet answered: (member, sent, arrived).
#[derive(Clone, Debug, Default)]
pub struct RrtrLog {
    waiting: VecDeque<(u32, SimTime, SimTime)>,
}

impl RrtrLog {
    /// An RRTR from `ssrc`, stamped `sent_at`, arrived `now`.
    pub fn on_rrtr(&mut self, ssrc: u32, sent_at: SimTime, now: SimTime) {
        if let Some(e) = self.waiting.iter_mut().find(|e| e.0 == ssrc) {
            *e = (ssrc, sent_at, now);
        } else if self.waiting.len() < MAX_WAITING {
            self.waiting.push_back((ssrc, sent_at, now));
        }
    }

    /// The answers for a report sent `now`: the oldest waiting RRTRs.
    pub fn take(&mut self, now: SimTime) -> Vec<Dlrr> {
        let n = self.waiting.len().min(MAX_PER_REPORT);
        self.waiting
            .drain(..n)
            .map(|(ssrc, lrr, arrived)| Dlrr {
                ssrc,
                lrr,
                delay: now - arrived,
            })
            .collect()
    }

    /// A member left (BYE): its RRTR is not answered.
    pub fn forget(&mut self, ssrc: u32) {
        self.waiting.retain(|e| e.0 != ssrc);
    }
}

/// A member's side: the RRTRs it answers, and whether it asks itself.
#[derive(Clone, Debug, Default)]
pub struct XrEnd {
    /// Sends RRTRs in reports without sender info, and takes its RTT from
    /// the answers (`xr_rtt`; RFC 3611 5.1's rcvr-rtt).
    pub asks: bool,
    pub heard: RrtrLog,
    pub rrtr_sent: u64,
    pub dlrr_sent: u64,
}

impl XrEnd {
    /// A regular report sent `now`: whether it carries an RRTR (an RR
    /// from a member that asks: with an SR it gets its RTT from the report
    /// blocks), and its DLRR sub-blocks.
    pub fn for_report(&mut self, now: SimTime, is_sr: bool) -> (bool, Vec<Dlrr>) {
        let rrtr = self.asks && !is_sr;
        let dlrr = self.heard.take(now);
        self.rrtr_sent += rrtr as u64;
        self.dlrr_sent += dlrr.len() as u64;
        (rrtr, dlrr)
    }
}

/// RFC 3611 4.5: the round trip from a DLRR sub-block that arrived `now`.
pub fn rtt(now: SimTime, d: &Dlrr) -> SimTime {
    now.saturating_sub(d.lrr).saturating_sub(d.delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn answers_carry_the_rrtr_time_and_the_time_held_and_go_once() {
        let mut log = RrtrLog::default();
        log.on_rrtr(7, ms(100), ms(130));
        let d = log.take(ms(400));
        assert_eq!(
            d,
            vec![Dlrr {
                ssrc: 7,
                lrr: ms(100),
                delay: ms(270)
            }]
        );
        // Back 25 ms later: 30 ms out + 25 ms back.
        assert_eq!(rtt(ms(425), &d[0]), ms(55));
        assert!(log.take(ms(500)).is_empty());
    }

    #[test]
    fn a_newer_rrtr_replaces_the_older_in_its_place() {
        let mut log = RrtrLog::default();
        log.on_rrtr(1, ms(0), ms(10));
        log.on_rrtr(2, ms(5), ms(15));
        log.on_rrtr(1, ms(20), ms(30));
        let d = log.take(ms(40));
        assert_eq!(
            d.iter()
                .map(|x| (x.ssrc, x.lrr, x.delay))
                .collect::<Vec<_>>(),
            vec![(1, ms(20), ms(10)), (2, ms(5), ms(25))]
        );
    }

    #[test]
    fn at_most_300_wait_and_50_go_per_report_oldest_first() {
        let mut log = RrtrLog::default();
        for i in 0..301 {
            log.on_rrtr(i, ms(i as u64), ms(i as u64));
        }
        // The 301st member was not kept, but a kept one is still updated.
        log.on_rrtr(0, ms(1000), ms(1000));
        let mut seen = Vec::new();
        for _ in 0..6 {
            let d = log.take(ms(2000));
            assert_eq!(d.len(), 50);
            seen.extend(d.iter().map(|x| x.ssrc));
        }
        assert_eq!(seen, (0..300).collect::<Vec<u32>>());
        assert!(log.take(ms(2000)).is_empty());
    }

    #[test]
    fn a_member_that_left_is_not_answered() {
        let mut log = RrtrLog::default();
        log.on_rrtr(1, ms(0), ms(1));
        log.on_rrtr(2, ms(0), ms(1));
        log.forget(1);
        assert_eq!(
            log.take(ms(2)).iter().map(|x| x.ssrc).collect::<Vec<_>>(),
            vec![2]
        );
    }

    #[test]
    fn only_a_member_that_asks_and_sends_no_sr_sends_an_rrtr() {
        let mut end = XrEnd::default();
        end.heard.on_rrtr(3, ms(0), ms(5));
        assert!(!end.for_report(ms(9), false).0);
        end.asks = true;
        assert!(!end.for_report(ms(10), true).0);
        assert!(end.for_report(ms(11), false).0);
        assert_eq!((end.rrtr_sent, end.dlrr_sent), (1, 1));
    }

    #[test]
    fn an_answer_held_longer_than_the_clock_gives_no_negative_rtt() {
        let d = Dlrr {
            ssrc: 1,
            lrr: ms(10),
            delay: ms(50),
        };
        assert_eq!(rtt(ms(40), &d), SimTime::ZERO);
    }
}
