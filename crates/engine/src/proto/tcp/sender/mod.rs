//! The TCP sender: congestion control (RFC 5681), loss recovery in three
//! flavours (Reno RFC 5681, NewReno RFC 6582, SACK RFC 6675), limited
//! transmit (RFC 3042), RTO (RFC 6298), optional handshake and FIN.

mod recovery;

use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::{Flavor, Segment, TcpConfig};
use crate::net::tcp_flags::{ACK, CWR, ECE, FIN, SYN};
use crate::net::TcpHeader;
use crate::proto::cc::window::{Ack, Congestion, Reno, WindowController};
use crate::sim::Series;
use crate::sim::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    Idle,
    SynSent,
    Established,
    /// Every byte (and the FIN) acknowledged.
    Done,
}

#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub data_bytes_sent: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub limited_transmits: u64,
    /// Window reductions for ECN-Echo (RFC 3168 6.1.2).
    pub ecn_reductions: u64,
    pub rtt_samples: u64,
    pub started_at: Option<SimTime>,
    pub established_at: Option<SimTime>,
    pub done_at: Option<SimTime>,
}

impl SenderStats {
    /// Adds a finished connection's counts (a flow of several); the times
    /// are the first connection's.
    pub fn absorb(&mut self, o: &SenderStats) {
        self.segments_sent += o.segments_sent;
        self.data_bytes_sent += o.data_bytes_sent;
        self.retransmissions += o.retransmissions;
        self.timeouts += o.timeouts;
        self.fast_recoveries += o.fast_recoveries;
        self.limited_transmits += o.limited_transmits;
        self.ecn_reductions += o.ecn_reductions;
        self.rtt_samples += o.rtt_samples;
        self.started_at = self.started_at.or(o.started_at);
        self.established_at = self.established_at.or(o.established_at);
    }
}

/// Time series, recorded when the value changes.
#[derive(Clone, Debug, Default)]
pub struct SenderSeries {
    pub cwnd: Series,
    pub ssthresh: Series,
    pub rtt: Series,
    pub srtt: Series,
    pub rto: Series,
    /// 1 while in fast recovery / loss recovery, 0 otherwise.
    pub recovery: Series,
}

impl SenderSeries {
    pub fn set_rows(&mut self, rows: usize) {
        for s in [
            &mut self.cwnd,
            &mut self.ssthresh,
            &mut self.rtt,
            &mut self.srtt,
            &mut self.rto,
            &mut self.recovery,
        ] {
            s.set_rows(rows);
        }
    }
}

enum Next {
    Retx(u64),
    New,
    Rescue(u64),
}

pub struct TcpSender {
    cfg: TcpConfig,
    mss: u64,
    pub state: SenderState,
    /// One past the last data byte.
    data_end: u64,
    /// A finite transfer ends with a FIN (on the last data segment).
    finite: bool,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    cwnd: u64,
    ssthresh: u64,
    rwnd: u64,
    dupacks: u32,
    in_recovery: bool,
    recover: u64,
    first_partial: bool,
    sb: Scoreboard,
    high_rxt: u64,
    rescue_rxt: Option<u64>,
    rtt: RttEstimator,
    /// The segment being timed: (sequence end, send time). One at a time.
    timing: Option<(u64, SimTime)>,
    syn_retransmitted: bool,
    /// The RTO fired and no new data has been acknowledged since.
    backed_off: bool,
    rto_at: Option<SimTime>,
    /// ECN negotiated for this connection.
    ecn: bool,
    /// The next new data segment carries CWR.
    cwr_pending: bool,
    /// ECN-Echo is not acted on again until an ACK passes this (one
    /// reduction per window of data, RFC 3168 6.1.2).
    ecn_recover: u64,
    pub stats: SenderStats,
    /// Whether `series` records: asked here, beside the hot fields, so
    /// that a run without series does not touch the six series' lines on
    /// every ACK (with hundreds of flows those were L1 misses).
    series_on: bool,
    series: SenderSeries,
    /// The window's growth and its cut on congestion: another controller
    /// than Reno, which runs inline (no call through a vtable on every
    /// ACK of the default). Last: the fields above are laid out for the
    /// ACK path.
    window_cc: Option<Box<dyn WindowController>>,
}

const UNLIMITED: u64 = u64::MAX / 4;

impl TcpSender {
    /// `bytes`: the transfer size, or None for an unlimited (bulk) source.
    pub fn new(cfg: TcpConfig, bytes: Option<u64>) -> Self {
        let mss = cfg.mss as u64;
        let rtt = RttEstimator::new(
            cfg.initial_rto,
            cfg.min_rto,
            cfg.max_rto,
            cfg.clock_granularity,
        );
        TcpSender {
            mss,
            state: SenderState::Idle,
            data_end: bytes.map_or(UNLIMITED, |b| 1 + b),
            finite: bytes.is_some() && cfg.handshake,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: cfg.initial_window_bytes(),
            ssthresh: UNLIMITED,
            rwnd: cfg.rwnd_bytes,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            first_partial: false,
            sb: Scoreboard::default(),
            high_rxt: 0,
            rescue_rxt: None,
            rtt,
            timing: None,
            syn_retransmitted: false,
            backed_off: false,
            rto_at: None,
            ecn: false,
            cwr_pending: false,
            ecn_recover: 0,
            stats: SenderStats::default(),
            series_on: true,
            series: SenderSeries::default(),
            window_cc: None,
            cfg,
        }
    }

    /// Grows and cuts the window by `cc` (`None`: Reno's rules).
    pub fn with_window(mut self, cc: Option<Box<dyn WindowController>>) -> Self {
        self.window_cc = cc;
        self
    }

    /// The slow-start threshold after a congestion event with `flight`
    /// bytes as its basis.
    pub(super) fn cut(&mut self, now: SimTime, flight: u64, timeout: bool) -> u64 {
        let c = Congestion {
            now,
            cwnd: self.cwnd,
            flight,
            mss: self.mss,
            timeout,
        };
        match &mut self.window_cc {
            None => Reno.ssthresh(&c),
            Some(w) => w.ssthresh(&c),
        }
    }

    /// Turns the time series on or off (off frees what was recorded).
    pub fn set_series(&mut self, rows: usize) {
        self.series_on = rows > 0;
        self.series.set_rows(rows);
    }

    pub fn series(&self) -> &SenderSeries {
        &self.series
    }

    /// Continues `prev`'s series (a flow's next connection records on
    /// where its last left off, within the same row limit).
    pub fn adopt_series(&mut self, prev: &mut TcpSender) {
        self.series_on = prev.series_on;
        self.series = std::mem::take(&mut prev.series);
    }

    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    pub fn rto(&self) -> SimTime {
        self.rtt.rto()
    }
    pub fn srtt(&self) -> Option<SimTime> {
        self.rtt.srtt()
    }
    /// Data bytes acknowledged so far.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una.saturating_sub(1).min(self.data_end - 1)
    }
    /// When the sender next needs `on_timer`.
    pub fn deadline(&self) -> Option<SimTime> {
        self.rto_at
    }

    fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// End of the sequence space: past the FIN for a finite transfer.
    fn seq_end(&self) -> u64 {
        self.data_end + self.finite as u64
    }

    /// Payload of the segment starting at `seq` (segments are cut at fixed
    /// MSS boundaries from sequence number 1).
    fn seg_len(&self, seq: u64) -> u64 {
        if seq >= self.data_end {
            return 0;
        }
        let boundary = 1 + ((seq - 1) / self.mss + 1) * self.mss;
        boundary.min(self.data_end) - seq
    }

    /// Sequence number after the segment starting at `seq`: the rule
    /// that `segments` walks, kept as its tests' oracle.
    #[cfg(test)]
    fn seg_end(&self, seq: u64) -> u64 {
        let len = self.seg_len(seq);
        seq + len + (self.finite && seq + len == self.data_end) as u64
    }

    /// The segments from `from` (a segment's start) up to `to`, as
    /// (start, end) pairs, each end as `seg_end` gives it. NextSeg's
    /// rescue rule walks the whole window (and the tests' SetPipe and
    /// NextSeg oracles): this takes one division for the walk instead of
    /// one per segment.
    fn segments(&self, from: u64, to: u64) -> Segments {
        Segments {
            s: from,
            to,
            boundary: 0,
            mss: self.mss,
            data_end: self.data_end,
            finite: self.finite,
        }
    }

    fn window(&self) -> u64 {
        let cap = self
            .cfg
            .max_window_packets
            .map_or(UNLIMITED, |p| p as u64 * self.mss);
        self.cwnd.min(self.rwnd).min(cap)
    }

    fn send_seg(&mut self, now: SimTime, seq: u64, retx: bool, out: &mut Vec<Segment>) -> u64 {
        let len = self.seg_len(seq);
        let fin = self.finite && seq + len == self.data_end;
        // RFC 3168 6.1.2 and 6.1.5: CWR on the next new data segment after
        // a reduction; retransmissions are never ECN-capable.
        let cwr = self.cwr_pending && !retx;
        self.cwr_pending &= !cwr;
        let hdr = TcpHeader {
            seq,
            ack: self.cfg.handshake as u64,
            flags: ACK | if fin { FIN } else { 0 } | if cwr { CWR } else { 0 },
            wnd: self.cfg.rwnd_bytes,
            ..Default::default()
        };
        out.push(Segment {
            hdr: crate::net::header::boxed(hdr),
            payload: len as u32,
            ect: self.ecn && !retx && len > 0,
        });
        self.stats.segments_sent += 1;
        self.stats.data_bytes_sent += len;
        let end = seq + len + fin as u64;
        if retx {
            self.stats.retransmissions += 1;
            // Karn: never time a segment that has been retransmitted.
            if self.timing.is_some_and(|(tend, _)| tend > seq) {
                self.timing = None;
            }
        } else if self.timing.is_none() {
            self.timing = Some((end, now));
        }
        // RFC 6298 5.1: start the timer if it is not running.
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
        end
    }

    /// Sends new (or, after an RTO, go-back-N) data as the window allows.
    fn send_window(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        while self.snd_nxt < self.seq_end() {
            let len = self.seg_len(self.snd_nxt);
            if self.snd_nxt + len - self.snd_una > self.window() && self.snd_nxt > self.snd_una {
                break;
            }
            let retx = self.snd_nxt < self.snd_max;
            let end = self.send_seg(now, self.snd_nxt, retx, out);
            self.snd_nxt = end;
            self.snd_max = self.snd_max.max(end);
        }
    }

    fn record(&mut self, now: SimTime) {
        if !self.series_on {
            return;
        }
        let cw = self.cwnd as f64;
        self.series.cwnd.push_change(now, cw);
        let ss = if self.ssthresh >= UNLIMITED {
            f64::INFINITY
        } else {
            self.ssthresh as f64
        };
        self.series.ssthresh.push_change(now, ss);
        let rto = self.rtt.rto().as_secs_f64();
        self.series.rto.push_change(now, rto);
        let rec = self.in_recovery as u8 as f64;
        self.series.recovery.push_change(now, rec);
    }

    /// Opens the connection (SYN) or, without handshake, starts sending.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.stats.started_at = Some(now);
        if self.cfg.handshake {
            self.state = SenderState::SynSent;
            self.send_syn(now, out);
        } else {
            self.establish(now);
            self.send_window(now, out);
        }
        self.record(now);
    }

    fn send_syn(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        // RFC 3168 6.1.1: an ECN-setup SYN carries ECE and CWR.
        let setup = if self.cfg.ecn { ECE | CWR } else { 0 };
        let hdr = TcpHeader {
            seq: 0,
            ack: 0,
            flags: SYN | setup,
            wnd: self.cfg.rwnd_bytes,
            mss: self.cfg.mss as u16,
            ..Default::default()
        };
        out.push(Segment {
            hdr: crate::net::header::boxed(hdr),
            payload: 0,
            ect: false,
        });
        self.stats.segments_sent += 1;
        if !self.syn_retransmitted {
            self.timing = Some((1, now));
        }
        self.rto_at = Some(now + self.rtt.rto());
    }

    fn establish(&mut self, now: SimTime) {
        self.state = SenderState::Established;
        self.stats.established_at = Some(now);
        self.snd_una = 1;
        self.snd_nxt = 1;
        self.snd_max = 1;
        self.recover = 0;
        self.rto_at = None;
        // Without a handshake both ends are configured alike.
        self.ecn = self.cfg.ecn && !self.cfg.handshake;
    }

    /// A segment from the receiver.
    pub fn on_segment(&mut self, now: SimTime, h: &TcpHeader, out: &mut Vec<Segment>) {
        match self.state {
            SenderState::SynSent => {
                if h.has(SYN) && h.has(ACK) && h.ack == 1 {
                    if let Some((_, t)) = self.timing.take() {
                        self.rtt.sample(now - t);
                        self.stats.rtt_samples += 1;
                        if self.series_on {
                            self.series.rtt.push(now, (now - t).as_secs_f64());
                        }
                    }
                    if self.syn_retransmitted {
                        // RFC 6298 5.7: after a lost SYN, RTO is 3 s when data starts.
                        self.rtt.reset_rto(SimTime::from_secs(3));
                    }
                    self.rwnd = h.wnd;
                    self.establish(now);
                    // An ECN-setup SYN-ACK has ECE without CWR.
                    self.ecn = self.cfg.ecn && h.has(ECE) && !h.has(CWR);
                    self.send_window(now, out);
                }
            }
            SenderState::Established => self.on_ack(now, h, out),
            SenderState::Idle | SenderState::Done => {}
        }
        self.record(now);
    }

    fn on_ack(&mut self, now: SimTime, h: &TcpHeader, out: &mut Vec<Segment>) {
        let ack = h.ack;
        if ack > self.snd_max || h.has(SYN) {
            return;
        }
        self.rwnd = h.wnd;
        let ece_cut = self.ecn && h.has(ECE) && self.on_ece(now, ack);
        let sack = self.cfg.flavor == Flavor::Sack;
        let new_sacked = if sack {
            self.sb.update(h.sack_blocks(), ack.max(self.snd_una))
        } else {
            0
        };
        if ack > self.snd_una {
            self.on_new_ack(now, ack, !ece_cut, out);
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            // RFC 6675 section 2: with SACK, a duplicate ACK must bring new
            // SACK information to count.
            if sack && new_sacked == 0 {
                if self.in_recovery {
                    self.sack_recovery_send(now, out);
                }
                return;
            }
            self.on_dupack(now, ack, out);
        }
    }

    /// An RTT sample if `ack` covers the timed segment (Karn: only
    /// segments never retransmitted are timed).
    fn take_rtt_sample(&mut self, now: SimTime, ack: u64) {
        let Some((end, t)) = self.timing else { return };
        if ack < end {
            return;
        }
        self.rtt.sample(now - t);
        self.stats.rtt_samples += 1;
        if self.series_on {
            self.series.rtt.push(now, (now - t).as_secs_f64());
            if let Some(s) = self.rtt.srtt() {
                self.series.srtt.push(now, s.as_secs_f64());
            }
        }
        self.timing = None;
    }

    /// RFC 3168 6.1.2: an ECN-Echo halves the window as a loss would, at
    /// most once per window of data and not during loss recovery (whose
    /// own halving stands); either way the next new segment carries CWR.
    /// Whether the window was cut. An echo whose ACK does not pass the
    /// data sent before the last cut belongs to that cut's window.
    fn on_ece(&mut self, now: SimTime, ack: u64) -> bool {
        self.cwr_pending = true;
        if self.in_recovery || ack <= self.ecn_recover {
            return false;
        }
        self.ssthresh = self.cut(now, self.flight(), false);
        self.cwnd = self.ssthresh;
        self.ecn_recover = self.snd_max;
        self.stats.ecn_reductions += 1;
        true
    }

    /// Window growth outside recovery (the window controller's rule).
    fn grow_window(&mut self, now: SimTime, acked: u64) {
        let a = Ack {
            now,
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            acked,
            mss: self.mss,
            srtt: self.rtt.srtt(),
        };
        self.cwnd = match &mut self.window_cc {
            None => Reno.on_ack(&a),
            Some(w) => w.on_ack(&a),
        };
    }

    fn on_new_ack(&mut self, now: SimTime, ack: u64, grow: bool, out: &mut Vec<Segment>) {
        let acked = ack - self.snd_una;
        self.take_rtt_sample(now, ack);
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.sb.advance(ack);
        self.backed_off = false;
        let restart_timer = if self.in_recovery {
            self.ack_in_recovery(now, ack, acked, out)
        } else {
            self.dupacks = 0;
            if grow {
                self.grow_window(now, acked);
            }
            true
        };
        if self.data_end != UNLIMITED && ack >= self.seq_end() {
            self.state = SenderState::Done;
            self.stats.done_at = Some(now);
            self.rto_at = None;
            return;
        }
        if restart_timer {
            // RFC 6298 5.2 / 5.3.
            self.rto_at = (self.snd_una < self.snd_max).then(|| now + self.rtt.rto());
        }
        if self.in_recovery && self.cfg.flavor == Flavor::Sack {
            self.sack_recovery_send(now, out);
        } else {
            self.send_window(now, out);
        }
    }

    /// The retransmission timer (call at or after `deadline()`).
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        match self.rto_at {
            Some(at) if now >= at => {}
            _ => return,
        }
        self.rto_at = None;
        self.stats.timeouts += 1;
        match self.state {
            SenderState::SynSent => {
                self.syn_retransmitted = true;
                self.timing = None;
                self.rtt.backoff();
                self.send_syn(now, out);
            }
            SenderState::Established => {
                // RFC 5681 eq. 4; ssthresh is held when the same data times
                // out again. RFC 6298 5.4-5.6: retransmit, back off.
                if !self.backed_off {
                    self.ssthresh = self.cut(now, self.flight(), true);
                }
                self.backed_off = true;
                self.cwnd = self.mss;
                self.rtt.backoff();
                self.in_recovery = false;
                self.dupacks = 0;
                self.recover = self.snd_max;
                // The scoreboard is cleared (RFC 6675 5.1 lets the sender
                // discard SACK information after an RTO); go-back-N follows.
                self.sb.clear();
                self.high_rxt = self.snd_una;
                self.rescue_rxt = None;
                self.timing = None;
                self.snd_nxt = self.snd_una;
                self.send_window(now, out);
            }
            SenderState::Idle | SenderState::Done => {}
        }
        self.record(now);
    }
}

/// See [`TcpSender::segments`].
#[derive(Clone)]
struct Segments {
    s: u64,
    to: u64,
    /// The next MSS boundary above `s` (1 + k * mss), 0 until computed.
    boundary: u64,
    mss: u64,
    data_end: u64,
    finite: bool,
}

impl Iterator for Segments {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        let s = self.s;
        if s >= self.to {
            return None;
        }
        let end = if s >= self.data_end {
            s
        } else {
            if self.boundary <= s {
                // Contiguous segments meet at a boundary: the next one is
                // an MSS further; anywhere else, divide.
                self.boundary = if self.boundary == s && s > 0 {
                    s + self.mss
                } else {
                    1 + ((s - 1) / self.mss + 1) * self.mss
                };
            }
            self.boundary.min(self.data_end)
        };
        let e = end + (self.finite && end == self.data_end) as u64;
        if e == s {
            return None; // nothing more to walk (past the data, no FIN)
        }
        self.s = e;
        Some((s, e))
    }
}

#[cfg(test)]
mod segment_tests {
    use super::*;

    /// Segments run between MSS boundaries counted from sequence 1 (the
    /// data's first byte); one starting inside a segment (a retransmission
    /// after a partial ACK) ends at the next boundary, the last one at the
    /// data's end, and that one's end counts the FIN.
    #[test]
    fn segment_lengths_by_hand() {
        // With the handshake, a finite transfer ends with a FIN.
        let cfg = TcpConfig {
            mss: 1000,
            handshake: true,
            ..Default::default()
        };
        let s = TcpSender::new(cfg, Some(2500));
        let lens: Vec<u64> = [1, 1000, 1500, 2001, 2200, 2501]
            .iter()
            .map(|&q| s.seg_len(q))
            .collect();
        assert_eq!(lens, [1000, 1, 501, 500, 301, 0]);
        assert_eq!(s.seg_end(1500), 2001);
        assert_eq!(s.seg_end(2200), 2502, "the FIN after the last byte");
    }

    #[test]
    fn segments_end_where_seg_end_says() {
        for (mss, bytes, handshake) in [
            (1000, None, false),
            (1000, Some(10_500), true),
            (1000, Some(10_500), false),
            (536, Some(5_360), true),
            (7, Some(100), true),
        ] {
            let cfg = TcpConfig {
                mss,
                handshake,
                ..Default::default()
            };
            let s = TcpSender::new(cfg, bytes);
            let top = s.seq_end().min(60_000);
            // From a boundary and from inside a segment (a partial ACK).
            for from in [1, 2, 1 + mss as u64, 1 + mss as u64 / 2] {
                let mut chain = Vec::new();
                let mut x = from;
                while x < top {
                    let e = s.seg_end(x);
                    if e == x {
                        break;
                    }
                    chain.push((x, e));
                    x = e;
                }
                let walked: Vec<_> = s.segments(from, top).collect();
                assert_eq!(walked, chain, "mss {mss}, {bytes:?}, from {from}");
                assert!(!walked.is_empty());
            }
        }
    }
}
