//! The TCP receiver: cumulative ACKs, out-of-order buffering, SACK blocks
//! (RFC 2018), delayed ACKs (RFC 5681 4.2 and 4.3) and the ECN echo (RFC
//! 3168 6.1.3: after a CE-marked packet, every ACK carries ECE until a
//! segment with CWR arrives).

use super::scoreboard::RangeSet;
use super::{Segment, TcpConfig};
use crate::net::header::MAX_SACK_BLOCKS;
use crate::net::tcp_flags::{ACK, CWR, ECE, FIN, SYN};
use crate::net::TcpHeader;
use crate::sim::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverState {
    Listen,
    SynReceived,
    Established,
}

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    pub segments: u64,
    pub out_of_order: u64,
    pub duplicates: u64,
    pub acks_sent: u64,
    pub delayed_acks: u64,
    /// Data packets that arrived marked CE.
    pub ce_received: u64,
    pub first_data_at: Option<SimTime>,
    /// When every byte up to the FIN had arrived in order.
    pub done_at: Option<SimTime>,
}

impl ReceiverStats {
    /// Adds a finished connection's counts (a flow of several).
    pub fn absorb(&mut self, o: &ReceiverStats) {
        self.segments += o.segments;
        self.out_of_order += o.out_of_order;
        self.duplicates += o.duplicates;
        self.acks_sent += o.acks_sent;
        self.delayed_acks += o.delayed_acks;
        self.ce_received += o.ce_received;
        self.first_data_at = self.first_data_at.or(o.first_data_at);
    }
}

pub struct TcpReceiver {
    cfg: TcpConfig,
    pub state: ReceiverState,
    rcv_nxt: u64,
    /// Out-of-order data above rcv_nxt.
    ooo: RangeSet,
    /// Starts of the most recently received out-of-order segments, newest
    /// first (for the order of SACK blocks).
    recent: Vec<u64>,
    unacked: u32,
    delack_at: Option<SimTime>,
    fin_end: Option<u64>,
    /// ECN was negotiated (the SYN asked for it and we allow it).
    ecn: bool,
    /// A CE mark not yet answered by the sender's CWR: ACKs carry ECE.
    ece: bool,
    /// The segment being delivered came in a CE-marked packet.
    ce_next: bool,
    pub stats: ReceiverStats,
}

impl TcpReceiver {
    pub fn new(cfg: TcpConfig) -> Self {
        TcpReceiver {
            // Without a handshake both ends are configured alike.
            ecn: cfg.ecn && !cfg.handshake,
            cfg,
            state: ReceiverState::Listen,
            rcv_nxt: 1,
            ooo: RangeSet::default(),
            recent: Vec::new(),
            unacked: 0,
            delack_at: None,
            fin_end: None,
            ece: false,
            ce_next: false,
            stats: ReceiverStats::default(),
        }
    }

    /// Data bytes received in order.
    pub fn bytes_in_order(&self) -> u64 {
        let fin = self.fin_end.is_some_and(|f| self.rcv_nxt >= f) as u64;
        self.rcv_nxt - 1 - fin
    }
    pub fn deadline(&self) -> Option<SimTime> {
        self.delack_at
    }

    /// The next segment arrived in a CE-marked packet (call before
    /// `on_segment`).
    pub fn note_ce(&mut self) {
        self.stats.ce_received += 1;
        self.ce_next = true;
    }

    pub fn on_segment(
        &mut self,
        now: SimTime,
        h: &TcpHeader,
        payload: u32,
        out: &mut Vec<Segment>,
    ) {
        if h.has(SYN) {
            // (Re)answer every SYN; the sender's SYN retransmission covers a
            // lost SYN-ACK, so the receiver keeps no timer of its own.
            if self.state != ReceiverState::Established {
                self.state = ReceiverState::SynReceived;
            }
            self.ce_next = false;
            // RFC 3168 6.1.1: an ECN-setup SYN has ECE and CWR; the
            // ECN-setup SYN-ACK answers with ECE alone.
            self.ecn = self.cfg.ecn && h.has(ECE) && h.has(CWR);
            let hdr = TcpHeader {
                seq: 0,
                ack: 1,
                flags: SYN | ACK | if self.ecn { ECE } else { 0 },
                wnd: self.cfg.rwnd_bytes,
                mss: self.cfg.mss as u16,
                ..Default::default()
            };
            out.push(Segment {
                hdr: crate::net::header::boxed(hdr),
                payload: 0,
                ect: false,
            });
            self.stats.acks_sent += 1;
            return;
        }
        self.state = ReceiverState::Established;
        // CWR ends the echo; a CE on the same packet starts a new one.
        if h.has(CWR) {
            self.ece = false;
        }
        if std::mem::take(&mut self.ce_next) && self.ecn {
            self.ece = true;
        }
        let len = h.seq_len(payload);
        if len == 0 {
            return;
        }
        self.stats.segments += 1;
        self.stats.first_data_at.get_or_insert(now);
        let (s, e) = (h.seq, h.seq + len);
        if h.has(FIN) {
            self.fin_end = Some(e);
        }
        if e <= self.rcv_nxt {
            // Old data: ACK at once (RFC 5681 4.2), so the sender sees a dupack.
            self.stats.duplicates += 1;
            return self.send_ack(out);
        }
        if s <= self.rcv_nxt {
            let had_hole = !self.ooo.is_empty();
            self.rcv_nxt = e;
            while let Some((a, b)) = self.ooo.first() {
                if a > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b);
                self.ooo.pop_first();
            }
            let nxt = self.rcv_nxt;
            self.recent.retain(|&r| r >= nxt);
            let fin_done = self.fin_end.is_some_and(|f| self.rcv_nxt >= f);
            if fin_done && self.stats.done_at.is_none() {
                self.stats.done_at = Some(now);
            }
            // RFC 5681 4.2: ACK at once when filling a gap; a FIN is ACKed at
            // once; otherwise at least every second segment, within the timeout.
            if had_hole || fin_done || !self.cfg.delayed_ack {
                return self.send_ack(out);
            }
            self.unacked += 1;
            if self.unacked >= 2 {
                self.send_ack(out);
            } else if self.delack_at.is_none() {
                self.delack_at = Some(now + self.cfg.delack_timeout);
            }
        } else {
            // Out of order: buffer, and send an immediate duplicate ACK
            // with SACK blocks (RFC 5681 4.2, RFC 2018).
            self.stats.out_of_order += 1;
            self.ooo.insert(s, e);
            self.recent.retain(|&r| r != s);
            self.recent.insert(0, s);
            self.recent.truncate(16);
            self.send_ack(out);
        }
    }

    /// SACK blocks: the first holds the most recently received segment,
    /// then other recently reported ones (RFC 2018 section 4).
    fn sack_blocks(&self) -> ([(u64, u64); MAX_SACK_BLOCKS], u8) {
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        let mut n = 0;
        let mut push = |b: (u64, u64), blocks: &mut [(u64, u64); MAX_SACK_BLOCKS]| {
            if n < MAX_SACK_BLOCKS && !blocks[..n].contains(&b) {
                blocks[n] = b;
                n += 1;
            }
        };
        for &r in &self.recent {
            if let Some(&b) = self.ooo.as_slice().iter().find(|b| b.0 <= r && r < b.1) {
                push(b, &mut blocks);
            }
        }
        for &b in self.ooo.as_slice().iter().rev() {
            push(b, &mut blocks);
        }
        (blocks, n as u8)
    }

    fn send_ack(&mut self, out: &mut Vec<Segment>) {
        let (sack, n_sack) = if self.cfg.flavor == super::Flavor::Sack {
            self.sack_blocks()
        } else {
            ([(0, 0); 3], 0)
        };
        let hdr = TcpHeader {
            seq: 1,
            ack: self.rcv_nxt,
            flags: ACK | if self.ece { ECE } else { 0 },
            wnd: self.cfg.rwnd_bytes,
            sack,
            n_sack,
            mss: 0,
            conn: 0,
        };
        out.push(Segment {
            hdr: crate::net::header::boxed(hdr),
            payload: 0,
            ect: false,
        });
        self.stats.acks_sent += 1;
        self.unacked = 0;
        self.delack_at = None;
    }

    /// The delayed-ACK timer (call at or after `deadline()`).
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.delack_at.is_some_and(|t| now >= t) {
            self.stats.delayed_acks += 1;
            self.send_ack(out);
        }
    }
}
