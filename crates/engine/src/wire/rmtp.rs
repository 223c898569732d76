//! RMTP header as mediasim writes it in pcap (docs/models/rmtp.md). The
//! study gives no wire format; this one carries what the model uses.
//!
//! ```text
//!  0: version (4 bits) = 1 | type (4 bits): 1 data, 2 retransmission or
//!     local repair, 3 HACK
//!  1: flags (0)
//!  2: child index (HACK), else 0 (16 bits)
//!  4: sequence number (data) or HACK base: all below received (64 bits)
//! 12: first transmission time in ms, wrapping (data), or the HACK bitmap
//!     length in bits (32 bits)
//! 16: HACK bitmap: bit i (most significant first) set when base + i was
//!     received
//! ```

use super::WireError;

pub const HEADER_LEN: usize = 16;
pub const DATA: u8 = 1;
pub const REPAIR: u8 = 2;
pub const HACK: u8 = 3;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RmtpHeader {
    pub kind: u8,
    pub child: u16,
    /// Sequence number (data) or HACK base.
    pub seq: u64,
    /// First transmission in ms (data) or bitmap length in bits (HACK).
    pub word: u32,
}

impl RmtpHeader {
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = 0x10 | (self.kind & 0x0f);
        buf[1] = 0;
        buf[2..4].copy_from_slice(&self.child.to_be_bytes());
        buf[4..12].copy_from_slice(&self.seq.to_be_bytes());
        buf[12..16].copy_from_slice(&self.word.to_be_bytes());
    }

    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have: buf.len(),
            });
        }
        if buf[0] >> 4 != 1 || !(DATA..=HACK).contains(&(buf[0] & 0x0f)) {
            return Err(WireError::BadField {
                field: "rmtp version/type",
                value: buf[0] as u64,
            });
        }
        Ok(RmtpHeader {
            kind: buf[0] & 0x0f,
            child: u16::from_be_bytes([buf[2], buf[3]]),
            seq: u64::from_be_bytes(buf[4..12].try_into().unwrap()),
            word: u32::from_be_bytes(buf[12..16].try_into().unwrap()),
        })
    }
}

/// Writes a HACK's bitmap after its header (as far as `buf` reaches):
/// one bit per sequence number in `[base, end)`, set where `has` says the
/// receiver has it, most significant bit first.
pub fn emit_bitmap(base: u64, end: u64, has: impl Fn(u64) -> bool, buf: &mut [u8]) {
    for (i, s) in (base..end).enumerate() {
        if i / 8 >= buf.len() {
            break;
        }
        if has(s) {
            buf[i / 8] |= 0x80 >> (i % 8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bytes() {
        let h = RmtpHeader {
            kind: HACK,
            child: 3,
            seq: 0x0102,
            word: 9,
        };
        let mut b = [0u8; 16];
        h.emit(&mut b);
        assert_eq!(b, [0x13, 0, 0, 3, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 9]);
        assert_eq!(RmtpHeader::parse(&b), Ok(h));
        b[0] = 0x14;
        assert!(RmtpHeader::parse(&b).is_err());
        assert!(RmtpHeader::parse(&b[..15]).is_err());
    }

    #[test]
    fn bitmap_most_significant_bit_first() {
        // base 1, end 11: 1 missing, 2 3 in, 4..10 missing, 10 in
        let mut b = [0u8; 2];
        emit_bitmap(1, 11, |s| [0, 2, 3, 10].contains(&s), &mut b);
        assert_eq!(b, [0b0110_0000, 0b0100_0000]);
    }
}
