//! RTP Control Protocol feedback for congestion control (RFC 8888 3.1):
//! RTPFB FMT 11. Per media SSRC a block with its first sequence number,
//! the number of packets it reports, and one 16-bit metric word per
//! packet (R: received; ECN: the two ECN bits as received; ATO: arrival
//! time offset before the report timestamp in 1/1024 s); then one 32-bit
//! report timestamp (the middle 32 bits of an NTP timestamp).

use super::WireError;

/// RTPFB FMT 11: congestion control feedback (RFC 8888 3.1).
pub const FMT_CCFB: u8 = 11;
/// ATO value for a packet that arrived 8189/1024 s or more before the
/// report timestamp (RFC 8888 3.1: "over-range").
pub const ATO_OVER_RANGE: u16 = 0x1FFE;
/// ATO value when the arrival time is unavailable (RFC 8888 3.1).
pub const ATO_UNAVAILABLE: u16 = 0x1FFF;
/// Most packets one block may report (RFC 8888 3.1: a block covers at
/// most 16384 packets).
pub const MAX_REPORTS: usize = 16_384;

/// What one metric word says about one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Not received (the word is zero on the wire).
    Lost,
    /// Received with these ECN bits and arrival time offset (13 bits).
    Received { ecn: u8, ato: u16 },
}

impl Metric {
    fn word(self) -> u16 {
        match self {
            Metric::Lost => 0,
            Metric::Received { ecn, ato } => 0x8000 | u16::from(ecn & 3) << 13 | (ato & 0x1FFF),
        }
    }
    fn from_word(w: u16) -> Self {
        if w & 0x8000 == 0 {
            // RFC 8888 3.1: with R = 0 the other bits are ignored.
            Metric::Lost
        } else {
            Metric::Received {
                ecn: (w >> 13 & 3) as u8,
                ato: w & 0x1FFF,
            }
        }
    }
}

/// One media SSRC's block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcfbBlock {
    pub media_ssrc: u32,
    pub begin_seq: u16,
    /// Packets begin_seq, begin_seq + 1, ... (at most [`MAX_REPORTS`]).
    pub metrics: Vec<Metric>,
}

/// An RFC 8888 feedback packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ccfb {
    pub sender_ssrc: u32,
    pub blocks: Vec<CcfbBlock>,
    /// Middle 32 bits of the NTP time the report was made (1/65536 s).
    pub report_timestamp: u32,
}

impl Ccfb {
    /// Bytes on the wire (header included).
    pub fn wire_len(&self) -> usize {
        8 + self
            .blocks
            .iter()
            .map(|b| 8 + b.metrics.len().div_ceil(2) * 4)
            .sum::<usize>()
            + 4
    }

    /// Appends the packet's bytes to `buf`.
    pub fn emit(&self, buf: &mut Vec<u8>) {
        let len = self.wire_len();
        super::header(buf, FMT_CCFB, super::PT_RTPFB, len - 4);
        buf.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        for b in &self.blocks {
            buf.extend_from_slice(&b.media_ssrc.to_be_bytes());
            buf.extend_from_slice(&b.begin_seq.to_be_bytes());
            // num_reports: the number of metric words that follow.
            buf.extend_from_slice(&(b.metrics.len() as u16).to_be_bytes());
            for m in &b.metrics {
                buf.extend_from_slice(&m.word().to_be_bytes());
            }
            if b.metrics.len() % 2 == 1 {
                buf.extend_from_slice(&[0, 0]); // pad to 32 bits
            }
        }
        buf.extend_from_slice(&self.report_timestamp.to_be_bytes());
    }

    /// Parses the body after the common header (`b`: SSRC onwards).
    pub(super) fn parse_body(b: &[u8]) -> Result<Ccfb, WireError> {
        let bad = |value: usize| WireError::BadField {
            field: "ccfb length",
            value: value as u64,
        };
        if b.len() < 8 {
            return Err(bad(b.len() + 4));
        }
        let sender_ssrc = super::read_u32(b, 0);
        let end = b.len() - 4;
        let mut at = 4;
        let mut blocks = Vec::new();
        while at < end {
            if end - at < 8 {
                return Err(bad(b.len() + 4));
            }
            let n = u16::from_be_bytes([b[at + 6], b[at + 7]]) as usize;
            if n > MAX_REPORTS {
                return Err(WireError::BadField {
                    field: "ccfb num_reports",
                    value: n as u64,
                });
            }
            let words = n.div_ceil(2) * 4;
            if end - at - 8 < words {
                return Err(bad(b.len() + 4));
            }
            let m = &b[at + 8..at + 8 + 2 * n];
            blocks.push(CcfbBlock {
                media_ssrc: super::read_u32(b, at),
                begin_seq: u16::from_be_bytes([b[at + 4], b[at + 5]]),
                metrics: m
                    .chunks_exact(2)
                    .map(|w| Metric::from_word(u16::from_be_bytes([w[0], w[1]])))
                    .collect(),
            });
            at += 8 + words;
        }
        Ok(Ccfb {
            sender_ssrc,
            blocks,
            report_timestamp: super::read_u32(b, end),
        })
    }
}

/// The ATO of a packet that arrived `before_s` seconds before the report
/// timestamp, rounded to 1/1024 s (RFC 8888 3.1), over-range from
/// 8189/1024 s.
pub fn ato_of(before_s: f64) -> u16 {
    let units = (before_s * 1024.0).round();
    if units < 0.0 {
        ATO_UNAVAILABLE
    } else if units >= f64::from(ATO_OVER_RANGE) {
        ATO_OVER_RANGE
    } else {
        units as u16
    }
}
