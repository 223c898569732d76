//! UDP header (RFC 768) with the IPv4 pseudo-header checksum.

use super::{checksum, ipv4::PROTO_UDP, WireError};

pub const HEADER_LEN: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    /// UDP length: header + payload.
    pub len: u16,
}

fn pseudo_sum(src: [u8; 4], dst: [u8; 4], len: u16) -> u32 {
    let mut acc = checksum::sum(0, &src);
    acc = checksum::sum(acc, &dst);
    acc + PROTO_UDP as u32 + len as u32
}

impl UdpRepr {
    /// Writes header + checksum into `seg[..8]`; `seg` is the whole UDP
    /// segment (header and payload, `len` bytes).
    pub fn emit(&self, seg: &mut [u8], src: [u8; 4], dst: [u8; 4]) {
        seg[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        seg[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        seg[4..6].copy_from_slice(&self.len.to_be_bytes());
        seg[6..8].copy_from_slice(&[0, 0]);
        let acc = checksum::sum(pseudo_sum(src, dst, self.len), &seg[..self.len as usize]);
        let mut c = checksum::finish(acc);
        if c == 0 {
            c = 0xffff; // RFC 768: a computed zero is sent as all ones
        }
        seg[6..8].copy_from_slice(&c.to_be_bytes());
    }

    pub fn parse(seg: &[u8], src: [u8; 4], dst: [u8; 4]) -> Result<Self, WireError> {
        if seg.len() < HEADER_LEN {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have: seg.len(),
            });
        }
        let len = u16::from_be_bytes([seg[4], seg[5]]);
        if (len as usize) < HEADER_LEN || len as usize > seg.len() {
            return Err(WireError::BadField {
                field: "udp length",
                value: len as u64,
            });
        }
        if checksum::finish(checksum::sum(
            pseudo_sum(src, dst, len),
            &seg[..len as usize],
        )) != 0
        {
            return Err(WireError::Checksum);
        }
        Ok(UdpRepr {
            src_port: u16::from_be_bytes([seg[0], seg[1]]),
            dst_port: u16::from_be_bytes([seg[2], seg[3]]),
            len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_checksum() {
        let (s, d) = ([10, 0, 0, 1], [239, 1, 0, 1]);
        let r = UdpRepr {
            src_port: 10000,
            dst_port: 20000,
            len: 13,
        };
        let mut seg = vec![0u8; 13];
        seg[8..].copy_from_slice(b"hello");
        r.emit(&mut seg, s, d);
        assert_eq!(&seg[..6], &[0x27, 0x10, 0x4e, 0x20, 0x00, 0x0d]);
        assert_eq!(UdpRepr::parse(&seg, s, d), Ok(r));
        seg[9] ^= 0x40;
        assert_eq!(UdpRepr::parse(&seg, s, d), Err(WireError::Checksum));
    }
}
