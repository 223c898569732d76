//! Loss recovery of the TCP sender: ACKs during recovery (Reno's exit,
//! NewReno's full and partial ACKs, SACK's exit), duplicate ACKs with fast
//! retransmit and limited transmit, and RFC 6675's pipe, NextSeg and
//! recovery sending.

use super::{Next, TcpSender, UNLIMITED};
use crate::proto::tcp::{Flavor, NewRenoRecovery, Segment};
use crate::sim::SimTime;

impl TcpSender {
    /// A new cumulative ACK during recovery; returns whether the
    /// retransmission timer restarts.
    pub(super) fn ack_in_recovery(
        &mut self,
        now: SimTime,
        ack: u64,
        acked: u64,
        out: &mut Vec<Segment>,
    ) -> bool {
        match self.cfg.flavor {
            Flavor::Reno => {
                // RFC 5681 3.2 step 6: deflate and leave recovery.
                self.in_recovery = false;
                self.cwnd = self.ssthresh;
                self.dupacks = 0;
                true
            }
            Flavor::NewReno if ack >= self.recover => {
                // RFC 6582 3.2 step 3 (full ACK), option 1.
                self.in_recovery = false;
                self.cwnd = match self.cfg.newreno_recovery {
                    NewRenoRecovery::Rfc6582 => {
                        self.ssthresh.min(self.flight().max(self.mss) + self.mss)
                    }
                    NewRenoRecovery::Ns2 => self.ssthresh,
                };
                self.dupacks = 0;
                true
            }
            Flavor::NewReno => self.newreno_partial_ack(now, acked, out),
            Flavor::Sack => {
                if ack >= self.recover {
                    self.in_recovery = false;
                    self.dupacks = 0;
                }
                true
            }
        }
    }

    /// RFC 6582 3.2 step 3 (partial ACK): retransmit the first unacked
    /// segment, deflate by the amount acked, add back one SMSS if at least
    /// one was acked; reset the timer on the first partial ACK only
    /// ("Impatient", RFC 6582 section 4) unless configured "Slow-but-Steady".
    fn newreno_partial_ack(&mut self, now: SimTime, acked: u64, out: &mut Vec<Segment>) -> bool {
        self.send_seg(now, self.snd_una, true, out);
        self.cwnd = match self.cfg.newreno_recovery {
            NewRenoRecovery::Rfc6582 => {
                let c =
                    self.cwnd.saturating_sub(acked) + if acked >= self.mss { self.mss } else { 0 };
                c.max(self.mss)
            }
            NewRenoRecovery::Ns2 => self.ssthresh,
        };
        let restart = self.first_partial || !self.cfg.newreno_impatient;
        self.first_partial = false;
        restart
    }

    pub(super) fn on_dupack(&mut self, now: SimTime, ack: u64, out: &mut Vec<Segment>) {
        self.dupacks += 1;
        if self.in_recovery {
            match self.cfg.flavor {
                Flavor::Reno | Flavor::NewReno => {
                    // RFC 5681 3.2 step 4: inflate by one SMSS per dupack.
                    self.cwnd += self.mss;
                    self.send_window(now, out);
                }
                Flavor::Sack => self.sack_recovery_send(now, out),
            }
            return;
        }
        let sack = self.cfg.flavor == Flavor::Sack;
        let lost = sack && self.sb.is_lost(self.snd_una, self.cfg.dupthresh, self.mss);
        if self.dupacks >= self.cfg.dupthresh || lost {
            // RFC 6582 3.2 step 2 (and RFC 6675's RecoveryPoint): no new
            // recovery for losses from before the last one or the last RTO.
            if self.cfg.flavor != Flavor::Reno && ack <= self.recover {
                return;
            }
            self.stats.fast_recoveries += 1;
            self.in_recovery = true;
            self.recover = self.snd_max;
            let basis = match (self.cfg.flavor, self.cfg.newreno_recovery) {
                (Flavor::NewReno, NewRenoRecovery::Ns2) => self.window(),
                _ => self.flight(),
            };
            self.ssthresh = self.cut(now, basis, false);
            if sack {
                // RFC 6675 section 5 step 4.
                self.cwnd = self.ssthresh;
                self.rescue_rxt = None;
                let end = self.send_seg(now, self.snd_una, true, out);
                self.high_rxt = end;
                self.sack_recovery_send(now, out);
            } else {
                // RFC 5681 3.2 steps 2-3.
                self.first_partial = true;
                self.send_seg(now, self.snd_una, true, out);
                self.cwnd = self.ssthresh + self.cfg.dupthresh as u64 * self.mss;
                self.send_window(now, out);
            }
        } else if self.cfg.limited_transmit {
            // RFC 3042: one new segment per each of the first two duplicate
            // ACKs, if the receiver's window allows and the outstanding data
            // stays within cwnd + 2 segments; cwnd is not changed.
            if self.snd_nxt < self.seq_end() && self.snd_nxt == self.snd_max {
                let len = self.seg_len(self.snd_nxt);
                let after = self.flight() + len;
                if after <= self.cwnd + 2 * self.mss && after <= self.rwnd {
                    let end = self.send_seg(now, self.snd_nxt, false, out);
                    self.snd_nxt = end;
                    self.snd_max = end;
                    self.stats.limited_transmits += 1;
                }
            }
        }
    }

    /// SetPipe (RFC 6675 section 4): bytes believed in the network. Every
    /// segment of the window that is not SACKed counts once if it is not
    /// lost and once more if it was retransmitted (below HighRxt).
    ///
    /// Computed over the scoreboard's holes, not segment by segment: a
    /// segment's state depends only on where its first byte lies (in a
    /// SACKed range or a hole; below or above the point `lost_below`
    /// under which everything unSACKed is lost; below or above HighRxt),
    /// and the segments whose first bytes lie in an interval cover, end to
    /// end, the bytes between the first segment start in it and the first
    /// after it. Walking the window cost a pass over every segment per
    /// call, and recovery calls this once per segment it sends.
    pub(crate) fn pipe(&self) -> u64 {
        let (una, max) = (self.snd_una, self.snd_max);
        let lost_below = self.sb.lost_below(self.cfg.dupthresh, self.mss);
        self.unsacked_span(lost_below.max(una), max)
            + self.unsacked_span(una, self.high_rxt.min(max))
    }

    /// Bytes of the window's segments that start in [from, to) outside
    /// every SACKed range (from >= snd_una, to <= snd_max).
    fn unsacked_span(&self, from: u64, to: u64) -> u64 {
        self.holes(from, to)
            .map(|(x, y)| self.first_start_from(y) - self.first_start_from(x))
            .sum()
    }

    /// The first window segment that starts in [from, to) outside every
    /// SACKed range.
    fn first_unsacked(&self, from: u64, to: u64) -> Option<u64> {
        self.holes(from, to)
            .map(|(x, y)| (self.first_start_from(x), y))
            .find(|&(s, y)| s < y)
            .map(|(s, _)| s)
    }

    /// The parts of [from, to) outside the SACKed ranges, in order.
    fn holes(&self, from: u64, to: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let ranges = self.sb.ranges();
        let starts = std::iter::once(0).chain(ranges.iter().map(|r| r.1));
        let ends = ranges.iter().map(|r| r.0).chain(std::iter::once(u64::MAX));
        starts
            .zip(ends)
            .map(move |(x, y)| (x.max(from), y.min(to)))
            .filter(|&(x, y)| x < y)
    }

    /// The first start of a window segment (as `segments(snd_una, ..)`
    /// walks them) at or after `z`, or where the segments end if none
    /// starts there: snd_una, then the MSS boundaries below the data's
    /// end, then the end of the data (and FIN).
    fn first_start_from(&self, z: u64) -> u64 {
        let una = self.snd_una;
        if z <= una {
            return una;
        }
        let boundary = 1 + (z - 1).div_ceil(self.mss) * self.mss;
        if boundary < self.data_end {
            boundary
        } else {
            self.data_end.max(una) + (self.finite && una <= self.data_end) as u64
        }
    }

    /// NextSeg (RFC 6675 section 4), rules 1-4.
    fn next_seg(&self) -> Option<Next> {
        let top = self.sb.highest_sacked().min(self.snd_max);
        let from = self.high_rxt.max(self.snd_una);
        // Rule 1: the first hole segment above HighRxt that is lost.
        let lost_below = self.sb.lost_below(self.cfg.dupthresh, self.mss);
        if let Some(s) = self.first_unsacked(from, top.min(lost_below)) {
            return Some(Next::Retx(s));
        }
        if self.snd_max < self.seq_end() {
            let len = self.seg_len(self.snd_max);
            let cap = self
                .cfg
                .max_window_packets
                .map_or(UNLIMITED, |p| p as u64 * self.mss);
            if self.snd_max + len - self.snd_una <= self.rwnd.min(cap) {
                return Some(Next::New);
            }
        }
        // Rule 3: the first hole segment above HighRxt.
        if let Some(s) = self.first_unsacked(from, top) {
            return Some(Next::Retx(s));
        }
        if self.rescue_rxt.is_none_or(|r| self.snd_una > r) {
            let mut last = None;
            let mut walk = self.sb.walk();
            for (s, _) in self.segments(self.snd_una, self.snd_max) {
                if !walk.is_sacked(s) {
                    last = Some(s);
                }
            }
            return last.map(Next::Rescue);
        }
        None
    }

    /// RFC 6675 section 5 step (C): send while cwnd - pipe >= 1 SMSS.
    pub(super) fn sack_recovery_send(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        while self.pipe() + self.mss <= self.cwnd {
            match self.next_seg() {
                None => break,
                Some(Next::Retx(s)) => {
                    let end = self.send_seg(now, s, true, out);
                    self.high_rxt = self.high_rxt.max(end);
                }
                Some(Next::New) => {
                    let end = self.send_seg(now, self.snd_max, false, out);
                    self.snd_max = end;
                    self.snd_nxt = end;
                }
                Some(Next::Rescue(s)) => {
                    self.send_seg(now, s, true, out);
                    self.rescue_rxt = Some(self.recover);
                    // HighRxt is not updated for a rescue retransmission.
                }
            }
        }
    }
}

/// SetPipe and NextSeg over the scoreboard's holes give what walking the
/// window segment by segment (RFC 6675's definitions, read literally)
/// gives, on random windows, scoreboards and HighRxt.
#[cfg(test)]
mod hole_tests {
    use super::{Next, TcpSender};
    use crate::proto::tcp::scoreboard::tests::xorshift;
    use crate::proto::tcp::TcpConfig;

    impl TcpSender {
        /// SetPipe, segment by segment.
        fn pipe_by_walk(&self) -> u64 {
            let (dt, smss) = (self.cfg.dupthresh, self.mss);
            let mut pipe = 0;
            for (s, e) in self.segments(self.snd_una, self.snd_max) {
                if !self.sb.is_sacked(s) {
                    if !self.sb.is_lost(s, dt, smss) {
                        pipe += e - s;
                    }
                    if s < self.high_rxt {
                        pipe += e - s;
                    }
                }
            }
            pipe
        }

        /// NextSeg's rules 1 and 3, segment by segment.
        fn retx_by_walk(&self) -> (Option<u64>, Option<u64>) {
            let (dt, smss) = (self.cfg.dupthresh, self.mss);
            let top = self.sb.highest_sacked().min(self.snd_max);
            let hole = |s: u64| s >= self.high_rxt && !self.sb.is_sacked(s);
            let mut segs = self.segments(self.snd_una, top);
            let rule1 = segs
                .clone()
                .map(|x| x.0)
                .find(|&s| hole(s) && self.sb.is_lost(s, dt, smss));
            let rule3 = segs.by_ref().map(|x| x.0).find(|&s| hole(s));
            (rule1, rule3)
        }
    }

    #[test]
    fn pipe_and_next_seg_over_holes_match_the_segment_walk() {
        let mut next = xorshift(0x2f4a_91c3_77d0_15e9);
        for case in 0..3_000 {
            let mss = [1, 7, 100, 960][next(4) as usize];
            let finite = next(2) == 0;
            let bytes = finite.then(|| 1 + next(40 * mss));
            let cfg = TcpConfig {
                mss: mss as u32,
                handshake: finite,
                dupthresh: 1 + next(4) as u32,
                ..Default::default()
            };
            let mut s = TcpSender::new(cfg, bytes);
            let end = s.seq_end().min(1 + 40 * mss);
            // una anywhere (a partial ACK may leave it inside a segment).
            s.snd_una = 1 + next(end);
            s.snd_max = (s.snd_una + next(30 * mss + 2)).min(end).max(s.snd_una);
            s.high_rxt = s.snd_una + next(s.snd_max - s.snd_una + 2);
            for _ in 0..next(6) {
                let a = s.snd_una + next(s.snd_max - s.snd_una + 1);
                let b = (a + 1 + next(6 * mss)).min(s.snd_max.max(a + 1));
                s.sb.update(&[(a, b)], s.snd_una);
            }
            assert_eq!(s.pipe(), s.pipe_by_walk(), "case {case}: pipe");
            let (rule1, rule3) = s.retx_by_walk();
            let top = s.sb.highest_sacked().min(s.snd_max);
            let from = s.high_rxt.max(s.snd_una);
            let lost = s.sb.lost_below(s.cfg.dupthresh, s.mss);
            assert_eq!(
                s.first_unsacked(from, top.min(lost)),
                rule1,
                "case {case}: rule 1"
            );
            assert_eq!(s.first_unsacked(from, top), rule3, "case {case}: rule 3");
            if let Some(Next::Retx(x)) = s.next_seg() {
                assert!(Some(x) == rule1 || Some(x) == rule3, "case {case}");
            }
        }
    }
}
