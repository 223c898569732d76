//! The RMTP sender: always backlogged; a final buffer of what some DR has
//! not acknowledged; a transmission queue with retransmissions at its
//! head; the study's window rule once per send interval.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use super::seqset::HackReport;
use super::RmtpConfig;
use crate::sim::{Series, SimTime};

/// One packet to multicast on the data channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmission {
    pub seq: u64,
    pub first_sent: SimTime,
    pub retx: bool,
}

#[derive(Clone, Debug)]
pub struct RmtpSender {
    cfg: RmtpConfig,
    pub cwnd: u32,
    next_seq: u64,
    /// Sequence number -> first transmission time, until every DR has it.
    final_buffer: BTreeMap<u64, SimTime>,
    /// Each DR's latest HACK.
    drs: Vec<HackReport>,
    /// Retransmissions waiting (the head of the transmission queue).
    retx_queue: VecDeque<u64>,
    /// Each queued retransmission: true while it is queued only for not
    /// being covered by a HACK (never reported missing).
    queued: HashMap<u64, bool>,
    /// Distinct packets reported missing since the last send interval.
    lost_since: BTreeSet<u64>,
    intervals: u64,
    /// New data may still be sent (false after the session's stop time).
    pub backlogged: bool,
    pub new_sent: u64,
    pub retx_sent: u64,
    /// Retransmissions of packets not yet covered by a HACK when one came.
    pub premature_retx: u64,
    pub peak_final_buffer: usize,
    /// The window after each interval's rule.
    pub window_series: Series,
}

impl RmtpSender {
    pub fn new(cfg: RmtpConfig, drs: usize) -> Self {
        RmtpSender {
            cwnd: cfg.initial_window,
            cfg,
            next_seq: 0,
            final_buffer: BTreeMap::new(),
            drs: vec![HackReport::default(); drs],
            retx_queue: VecDeque::new(),
            queued: HashMap::new(),
            lost_since: BTreeSet::new(),
            intervals: 0,
            backlogged: true,
            new_sent: 0,
            retx_sent: 0,
            premature_retx: 0,
            peak_final_buffer: 0,
            window_series: Series::default(),
        }
    }

    fn queue(&mut self, seq: u64, premature: bool) {
        if !self.final_buffer.contains_key(&seq) {
            return;
        }
        match self.queued.get_mut(&seq) {
            // Reported missing after all: a needed retransmission.
            Some(p) => *p &= premature,
            None => {
                self.queued.insert(seq, premature);
                self.retx_queue.push_back(seq);
            }
        }
    }

    /// DR `dr`'s aggregated HACK: what it misses is queued for
    /// retransmission, and so is what was sent but is not covered yet (the
    /// study keeps this known source of needless retransmissions); what
    /// every DR has leaves the final buffer.
    pub fn on_hack(&mut self, dr: usize, report: HackReport) {
        let missing: Vec<u64> = report.missing().collect();
        for &s in &missing {
            self.lost_since.insert(s);
            self.queue(s, false);
        }
        for s in report.end..self.next_seq {
            self.queue(s, true);
        }
        self.drs[dr] = report;
        let drs = &self.drs;
        self.final_buffer
            .retain(|&s, _| !drs.iter().all(|d| d.has(s)));
    }

    /// The window rule (the study): more than CongC packets lost in the
    /// last interval closes the window to 1, more than CongA sets it to
    /// Ws / 2, else it opens by one packet (or doubles), up to Ws.
    fn update_window(&mut self) {
        let lost = self.lost_since.len() as u32;
        self.lost_since.clear();
        let c = &self.cfg;
        self.cwnd = if lost > c.cong_c {
            1
        } else if lost > c.cong_a {
            (c.ws / 2).max(1)
        } else if c.doubling {
            (self.cwnd * 2).min(c.ws)
        } else {
            (self.cwnd + 1).min(c.ws)
        };
    }

    /// One send interval: the window rule (from the second interval on),
    /// then up to cwnd packets, retransmissions first.
    pub fn on_interval(&mut self, now: SimTime) -> Vec<Transmission> {
        if self.intervals > 0 {
            self.update_window();
        }
        self.intervals += 1;
        self.window_series.push(now, self.cwnd as f64);
        let mut out = Vec::with_capacity(self.cwnd as usize);
        while out.len() < self.cwnd as usize {
            let Some(seq) = self.retx_queue.pop_front() else {
                break;
            };
            let premature = self.queued.remove(&seq).unwrap_or(false);
            // Freed since it was queued: every DR has it now.
            let Some(&first_sent) = self.final_buffer.get(&seq) else {
                continue;
            };
            self.retx_sent += 1;
            self.premature_retx += premature as u64;
            out.push(Transmission {
                seq,
                first_sent,
                retx: true,
            });
        }
        while self.backlogged && out.len() < self.cwnd as usize {
            let seq = self.next_seq;
            self.next_seq += 1;
            self.new_sent += 1;
            self.final_buffer.insert(seq, now);
            out.push(Transmission {
                seq,
                first_sent: now,
                retx: false,
            });
        }
        self.peak_final_buffer = self.peak_final_buffer.max(self.final_buffer.len());
        out
    }

    /// Packets sent so far (new ones).
    pub fn sent(&self) -> u64 {
        self.next_seq
    }

    pub fn final_buffer_len(&self) -> usize {
        self.final_buffer.len()
    }

    pub fn retx_queued(&self) -> usize {
        self.retx_queue.len()
    }
}
