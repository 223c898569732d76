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
            self.ssthresh = (basis / 2).max(2 * self.mss);
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

    /// SetPipe (RFC 6675 section 4): bytes believed in the network.
    pub(crate) fn pipe(&self) -> u64 {
        let (dt, smss) = (self.cfg.dupthresh, self.mss);
        let mut pipe = 0;
        let mut walk = self.sb.walk();
        for (s, e) in self.segments(self.snd_una, self.snd_max) {
            if !walk.is_sacked(s) {
                if !walk.is_lost(s, dt, smss) {
                    pipe += e - s;
                }
                if s < self.high_rxt {
                    pipe += e - s;
                }
            }
        }
        pipe
    }

    /// NextSeg (RFC 6675 section 4), rules 1-4.
    fn next_seg(&self) -> Option<Next> {
        let (dt, smss) = (self.cfg.dupthresh, self.mss);
        let top = self.sb.highest_sacked().min(self.snd_max);
        let mut walk = self.sb.walk();
        for (s, _) in self.segments(self.snd_una, top) {
            if s >= self.high_rxt && !walk.is_sacked(s) && walk.is_lost(s, dt, smss) {
                return Some(Next::Retx(s));
            }
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
        let mut walk = self.sb.walk();
        for (s, _) in self.segments(self.snd_una, top) {
            if s >= self.high_rxt && !walk.is_sacked(s) {
                return Some(Next::Retx(s));
            }
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
