//! Transport-wide congestion control feedback
//! (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 3.1):
//! RTPFB FMT 15. A base transport-wide sequence number and a status count,
//! a 24-bit reference time in 64 ms units, a feedback packet count, packet
//! status chunks, then one receive delta per received packet (small: one
//! unsigned byte; large or negative: two signed bytes; both in 250 us),
//! zero-padded to 32 bits.
//!
//! Chunks (3.1.3, 3.1.4): a run-length chunk (bit 0 = 0) is a 2-bit symbol
//! and a 13-bit run length; a status vector chunk (bit 0 = 1) holds 14
//! one-bit symbols (bit 1 = 0: not received / small delta) or 7 two-bit
//! symbols (bit 1 = 1). Symbols: 0 not received, 1 small delta, 2 large or
//! negative delta, 3 reserved.

use super::WireError;

/// RTPFB FMT 15: transport-wide congestion control feedback.
pub const FMT_TWCC: u8 = 15;
/// One receive delta unit, in microseconds.
pub const DELTA_US: i64 = 250;
/// One reference time unit, in milliseconds.
pub const REFERENCE_MS: i64 = 64;

/// What the feedback says about one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    NotReceived,
    /// Received, this many 250 us after the previous received packet (the
    /// first: after the reference time). 0..=255 is a small delta, the
    /// rest (-32768..=32767) a large one.
    Received(i32),
}

impl Status {
    fn symbol(self) -> u8 {
        match self {
            Status::NotReceived => 0,
            Status::Received(d) if (0..=255).contains(&d) => 1,
            Status::Received(_) => 2,
        }
    }
}

/// A transport-wide feedback packet. Decoded, it is the list of statuses
/// from `base_seq` on; the chunk layout is the encoder's choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Twcc {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
    pub base_seq: u16,
    /// 24-bit signed, in 64 ms.
    pub reference_time: i32,
    pub fb_count: u8,
    /// Packets base_seq, base_seq + 1, ... (at most 65535). Received
    /// deltas must fit in 16 signed bits.
    pub statuses: Vec<Status>,
}

/// A vector chunk's word: `symbols` (at most 14 one-bit or 7 two-bit).
fn vector_word(two_bit: bool, symbols: &[u8]) -> u16 {
    let (bits, per) = if two_bit { (2, 7) } else { (1, 14) };
    let mut w = 0x8000 | u16::from(two_bit) << 14;
    for (i, s) in symbols.iter().enumerate().take(per) {
        w |= u16::from(*s) << (14 - bits * (i + 1));
    }
    w
}

/// Greedy chunking, each chunk's word handed to `word` in order: a
/// run-length chunk for a run of 7 or more of one symbol (and at the
/// end), else a one-bit vector when the next 14 are all 0/1, else a
/// two-bit vector of 7.
fn chunks(symbols: &[u8], mut word: impl FnMut(u16)) {
    let mut i = 0;
    while i < symbols.len() {
        let s = symbols[i];
        let run = symbols[i..]
            .iter()
            .take(8191)
            .take_while(|&&x| x == s)
            .count();
        if run >= 7 || i + run == symbols.len() {
            word(u16::from(s) << 13 | run as u16);
            i += run;
            continue;
        }
        let next14 = &symbols[i..(i + 14).min(symbols.len())];
        if next14.len() == 14 && next14.iter().all(|&x| x <= 1) {
            word(vector_word(false, next14));
            i += 14;
        } else {
            let n = 7.min(symbols.len() - i);
            word(vector_word(true, &symbols[i..i + n]));
            i += n;
        }
    }
}

impl Twcc {
    fn body(&self) -> Vec<u8> {
        let symbols: Vec<u8> = self.statuses.iter().map(|s| s.symbol()).collect();
        let mut b = Vec::with_capacity(16 + 3 * symbols.len());
        b.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        b.extend_from_slice(&self.media_ssrc.to_be_bytes());
        b.extend_from_slice(&self.base_seq.to_be_bytes());
        b.extend_from_slice(&(self.statuses.len() as u16).to_be_bytes());
        let rt = (self.reference_time as u32) & 0x00FF_FFFF;
        b.extend_from_slice(&(rt << 8 | u32::from(self.fb_count)).to_be_bytes());
        chunks(&symbols, |w| b.extend_from_slice(&w.to_be_bytes()));
        for s in &self.statuses {
            match *s {
                Status::Received(d) if (0..=255).contains(&d) => b.push(d as u8),
                Status::Received(d) => b.extend_from_slice(&(d as i16).to_be_bytes()),
                Status::NotReceived => {}
            }
        }
        b.resize(b.len().div_ceil(4) * 4, 0); // zero padding
        b
    }

    /// Bytes on the wire (header included).
    pub fn wire_len(&self) -> usize {
        // As `body` lays it out, without writing it: the feedback sender
        // counts every message's bytes.
        // The symbols on the stack when they fit (a message covers at most
        // a few hundred packets in practice): no allocation per message.
        let mut stack = [0u8; 512];
        let heap: Vec<u8>;
        let symbols: &[u8] = if self.statuses.len() <= stack.len() {
            for (d, s) in stack.iter_mut().zip(&self.statuses) {
                *d = s.symbol();
            }
            &stack[..self.statuses.len()]
        } else {
            heap = self.statuses.iter().map(|s| s.symbol()).collect();
            &heap
        };
        let mut words = 0;
        chunks(symbols, |_| words += 1);
        let deltas: usize = (symbols.iter()).map(|&s| s as usize).sum();
        4 + (16 + 2 * words + deltas).div_ceil(4) * 4
    }

    /// Appends the packet's bytes to `buf`.
    pub fn emit(&self, buf: &mut Vec<u8>) {
        let body = self.body();
        super::header(buf, FMT_TWCC, super::PT_RTPFB, body.len());
        buf.extend_from_slice(&body);
    }

    /// Parses the body after the common header (`b`: SSRCs onwards).
    pub(super) fn parse_body(b: &[u8]) -> Result<Twcc, WireError> {
        let short = |need: usize| WireError::Truncated {
            need: need + 4,
            have: b.len() + 4,
        };
        if b.len() < 16 {
            return Err(short(16));
        }
        let count = u16::from_be_bytes([b[10], b[11]]) as usize;
        let word = super::read_u32(b, 12);
        let mut rt = (word >> 8) as i32;
        if rt & 0x80_0000 != 0 {
            rt -= 0x100_0000; // sign-extend 24 bits
        }
        let mut symbols = Vec::with_capacity(count);
        let mut at = 16;
        while symbols.len() < count {
            if b.len() < at + 2 {
                return Err(short(at + 2));
            }
            let w = u16::from_be_bytes([b[at], b[at + 1]]);
            at += 2;
            let left = count - symbols.len();
            if w & 0x8000 == 0 {
                let len = (w & 0x1FFF) as usize;
                if len == 0 || len > left {
                    return Err(WireError::BadField {
                        field: "twcc run length",
                        value: len as u64,
                    });
                }
                symbols.extend(std::iter::repeat_n((w >> 13 & 3) as u8, len));
            } else if w & 0x4000 == 0 {
                symbols.extend((0..14.min(left)).map(|i| (w >> (13 - i) & 1) as u8));
            } else {
                symbols.extend((0..7.min(left)).map(|i| (w >> (12 - 2 * i) & 3) as u8));
            }
        }
        let mut statuses = Vec::with_capacity(count);
        for s in symbols {
            statuses.push(match s {
                0 => Status::NotReceived,
                1 => {
                    if b.len() < at + 1 {
                        return Err(short(at + 1));
                    }
                    at += 1;
                    Status::Received(i32::from(b[at - 1]))
                }
                2 => {
                    if b.len() < at + 2 {
                        return Err(short(at + 2));
                    }
                    at += 2;
                    Status::Received(i32::from(i16::from_be_bytes([b[at - 2], b[at - 1]])))
                }
                _ => {
                    return Err(WireError::BadField {
                        field: "twcc status symbol",
                        value: 3,
                    })
                }
            });
        }
        Ok(Twcc {
            sender_ssrc: super::read_u32(b, 0),
            media_ssrc: super::read_u32(b, 4),
            base_seq: u16::from_be_bytes([b[8], b[9]]),
            reference_time: rt,
            fb_count: word as u8,
            statuses,
        })
    }
}
