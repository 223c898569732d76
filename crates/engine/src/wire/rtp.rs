//! RTP fixed header (RFC 3550 section 5.1), without CSRCs, and at most
//! one header extension: the transport-wide sequence number
//! (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 2) in an
//! RFC 8285 one-byte-header extension.

use super::WireError;

pub const HEADER_LEN: usize = 12;
/// Bytes the transport-wide sequence number adds: the RFC 8285 header
/// (0xBEDE, length 1 word) and one word holding the element (ID and
/// length, two bytes of sequence number, one byte of padding).
pub const TRANSPORT_SEQ_LEN: usize = 8;
/// The extension ID mediasim gives the transport-wide sequence number (a
/// session negotiates it in SDP, RFC 8285 5; 1..=14 are valid).
pub const TRANSPORT_SEQ_ID: u8 = 5;
const ONE_BYTE_PROFILE: u16 = 0xBEDE;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtpHeader {
    pub marker: bool,
    pub payload_type: u8,
    pub seq: u16,
    pub timestamp: u32,
    pub ssrc: u32,
    /// The transport-wide sequence number, when the stream carries it.
    pub transport_seq: Option<u16>,
    /// P: the packet ends in padding whose last octet counts it (RFC 3550
    /// 5.1; the payload writes it, [`emit_padding_count`]).
    pub padding: bool,
}

impl RtpHeader {
    /// Header bytes, extension included.
    pub fn wire_len(&self) -> usize {
        HEADER_LEN + self.transport_seq.map_or(0, |_| TRANSPORT_SEQ_LEN)
    }

    /// Writes the header into `buf` (at least [`Self::wire_len`] bytes).
    pub fn emit(&self, buf: &mut [u8]) {
        // V=2, P, X (extension present), CC=0
        buf[0] = 0x80 | (self.padding as u8) << 5 | (self.transport_seq.is_some() as u8) << 4;
        buf[1] = (self.marker as u8) << 7 | (self.payload_type & 0x7f);
        buf[2..4].copy_from_slice(&self.seq.to_be_bytes());
        buf[4..8].copy_from_slice(&self.timestamp.to_be_bytes());
        buf[8..12].copy_from_slice(&self.ssrc.to_be_bytes());
        if let Some(t) = self.transport_seq {
            buf[12..14].copy_from_slice(&ONE_BYTE_PROFILE.to_be_bytes());
            buf[14..16].copy_from_slice(&1u16.to_be_bytes());
            // RFC 8285 4.2: ID in the high nibble, length - 1 in the low.
            buf[16] = TRANSPORT_SEQ_ID << 4 | 1;
            buf[17..19].copy_from_slice(&t.to_be_bytes());
            buf[19] = 0;
        }
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
        let transport_seq = if buf[0] & 0x10 != 0 {
            Some(transport_seq(&buf[HEADER_LEN..])?)
        } else {
            None
        };
        Ok(RtpHeader {
            marker: buf[1] & 0x80 != 0,
            payload_type: buf[1] & 0x7f,
            seq: u16::from_be_bytes([buf[2], buf[3]]),
            timestamp: u32::from_be_bytes(buf[4..8].try_into().unwrap()),
            ssrc: u32::from_be_bytes(buf[8..12].try_into().unwrap()),
            transport_seq,
            padding: buf[0] & 0x20 != 0,
        })
    }
}

/// Writes a padded packet's last octet: the count of padding octets after
/// a header of `header_len` bytes, the whole rest of `packet` (a
/// padding-only packet; RFC 3550 5.1 allows at most 255).
pub fn emit_padding_count(packet: &mut [u8], header_len: usize) {
    let count = packet.len().saturating_sub(header_len).min(255) as u8;
    if let Some(last) = packet.last_mut() {
        *last = count;
    }
}

/// The transport-wide sequence number in a one-byte-header extension
/// block (RFC 8285 4.2), which must hold it.
fn transport_seq(b: &[u8]) -> Result<u16, WireError> {
    if b.len() < 4 {
        return Err(WireError::Truncated {
            need: HEADER_LEN + 4,
            have: HEADER_LEN + b.len(),
        });
    }
    let profile = u16::from_be_bytes([b[0], b[1]]);
    if profile != ONE_BYTE_PROFILE {
        return Err(WireError::BadField {
            field: "rtp extension profile",
            value: profile as u64,
        });
    }
    let words = u16::from_be_bytes([b[2], b[3]]) as usize;
    let ext = &b[4..];
    if ext.len() < 4 * words {
        return Err(WireError::Truncated {
            need: HEADER_LEN + 4 + 4 * words,
            have: HEADER_LEN + b.len(),
        });
    }
    let ext = &ext[..4 * words];
    let mut at = 0;
    while at < ext.len() {
        let (id, len) = (ext[at] >> 4, (ext[at] & 0xf) as usize + 1);
        if id == 0 {
            at += 1; // padding byte (RFC 8285 4.2)
            continue;
        }
        if id == 15 || at + 1 + len > ext.len() {
            break;
        }
        if id == TRANSPORT_SEQ_ID && len == 2 {
            return Ok(u16::from_be_bytes([ext[at + 1], ext[at + 2]]));
        }
        at += 1 + len;
    }
    Err(WireError::BadField {
        field: "rtp transport-wide sequence extension",
        value: words as u64,
    })
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
            transport_seq: None,
            padding: false,
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

    /// RFC 8285 4.2's one-byte form, written out by hand: X set, 0xBEDE,
    /// one word, ID 5 with L = 1, the sequence number, one padding byte.
    #[test]
    fn transport_wide_sequence_extension_bytes() {
        let h = RtpHeader {
            marker: false,
            payload_type: 96,
            seq: 1,
            timestamp: 2,
            ssrc: 3,
            transport_seq: Some(0xABCD),
            padding: false,
        };
        assert_eq!(h.wire_len(), 20);
        let mut b = [0u8; 20];
        h.emit(&mut b);
        assert_eq!(
            b,
            [0x90, 96, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0xBE, 0xDE, 0, 1, 0x51, 0xAB, 0xCD, 0]
        );
        assert_eq!(RtpHeader::parse(&b), Ok(h));
        assert!(RtpHeader::parse(&b[..18]).is_err());
        // Another element first, then ours: found past it.
        let other = [
            0x90, 96, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0xBE, 0xDE, 0, 2, 0x20, 9, 0x51, 0x12, 0x34, 0,
            0, 0,
        ];
        assert_eq!(
            RtpHeader::parse(&other).unwrap().transport_seq,
            Some(0x1234)
        );
        let mut wrong = b;
        wrong[12] = 0x10; // a two-byte-header profile: not ours
        assert!(RtpHeader::parse(&wrong).is_err());
    }

    /// A padding-only packet (RFC 3550 5.1): P set, and the last of the
    /// octets after the header counts them all.
    #[test]
    fn a_padding_only_packet() {
        let h = RtpHeader {
            marker: false,
            payload_type: 96,
            seq: 9,
            timestamp: 10,
            ssrc: 11,
            transport_seq: Some(5),
            padding: true,
        };
        let mut b = vec![0u8; 20 + 224];
        h.emit(&mut b);
        emit_padding_count(&mut b, h.wire_len());
        assert_eq!(b[0], 0xB0, "V=2, P, X");
        assert_eq!(b[243], 224);
        assert!(b[20..243].iter().all(|&x| x == 0));
        assert_eq!(RtpHeader::parse(&b), Ok(h));
    }
}
