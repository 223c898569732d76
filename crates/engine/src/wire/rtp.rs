//! RTP fixed header (RFC 3550 section 5.1), without CSRCs or extensions.

use super::WireError;

pub const HEADER_LEN: usize = 12;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtpHeader {
    pub marker: bool,
    pub payload_type: u8,
    pub seq: u16,
    pub timestamp: u32,
    pub ssrc: u32,
}

impl RtpHeader {
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = 0x80; // V=2, P=0, X=0, CC=0
        buf[1] = (self.marker as u8) << 7 | (self.payload_type & 0x7f);
        buf[2..4].copy_from_slice(&self.seq.to_be_bytes());
        buf[4..8].copy_from_slice(&self.timestamp.to_be_bytes());
        buf[8..12].copy_from_slice(&self.ssrc.to_be_bytes());
    }

    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have: buf.len(),
            });
        }
        if buf[0] >> 6 != 2 {
            return Err(WireError::BadField {
                field: "rtp version",
                value: (buf[0] >> 6) as u64,
            });
        }
        Ok(RtpHeader {
            marker: buf[1] & 0x80 != 0,
            payload_type: buf[1] & 0x7f,
            seq: u16::from_be_bytes([buf[2], buf[3]]),
            timestamp: u32::from_be_bytes(buf[4..8].try_into().unwrap()),
            ssrc: u32::from_be_bytes(buf[8..12].try_into().unwrap()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bytes() {
        let h = RtpHeader {
            marker: true,
            payload_type: 96,
            seq: 0x1234,
            timestamp: 0xdeadbeef,
            ssrc: 7,
        };
        let mut b = [0u8; 12];
        h.emit(&mut b);
        assert_eq!(
            b,
            [0x80, 0xe0, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 7]
        );
        assert_eq!(RtpHeader::parse(&b), Ok(h));
        b[0] = 0x40;
        assert!(RtpHeader::parse(&b).is_err());
    }
}
