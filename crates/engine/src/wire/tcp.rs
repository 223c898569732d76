//! TCP header (RFC 9293) with options: MSS, window scale (RFC 7323) and
//! SACK-permitted on SYN segments; SACK blocks (RFC 2018) otherwise.

use super::{checksum, WireError};
use crate::net::header::{tcp_flags, TcpHeader, MAX_SACK_BLOCKS};

pub const PROTO_TCP: u8 = 6;
/// Window scale shift announced on SYN segments.
pub const WINDOW_SHIFT: u8 = 7;

/// The initial sequence number on the wire of a flow's connection `conn`
/// (both ends alike): 0 for the first, so a flow of one connection keeps
/// its relative numbers; later ones spread over the 32-bit space (a
/// golden-ratio step), so a dissector sees each new SYN on the reused
/// ports as a new connection (RFC 9293 3.4.1: a new incarnation gets a new
/// ISN).
pub fn wire_isn(conn: u32) -> u32 {
    conn.wrapping_mul(0x9E37_79B9)
}

/// Writes the TCP header of `h` (length `h.header_bytes()`) plus checksum
/// into `seg`, which holds the whole segment (header and payload).
/// Sequence, acknowledgement (when ACK is set) and SACK numbers are offset
/// by the connection's [`wire_isn`].
pub fn emit(
    h: &TcpHeader,
    src_port: u16,
    dst_port: u16,
    seg: &mut [u8],
    src: [u8; 4],
    dst: [u8; 4],
) {
    let hl = h.header_bytes() as usize;
    let syn = h.has(tcp_flags::SYN);
    seg[0..2].copy_from_slice(&src_port.to_be_bytes());
    seg[2..4].copy_from_slice(&dst_port.to_be_bytes());
    let isn = wire_isn(h.conn);
    let on_wire = |x: u64| (x as u32).wrapping_add(isn);
    seg[4..8].copy_from_slice(&on_wire(h.seq).to_be_bytes());
    let ack = if h.has(tcp_flags::ACK) {
        on_wire(h.ack)
    } else {
        h.ack as u32
    };
    seg[8..12].copy_from_slice(&ack.to_be_bytes());
    seg[12] = ((hl / 4) as u8) << 4;
    seg[13] = h.flags;
    // RFC 7323 2.2: the window in a SYN is never scaled.
    let wnd = if syn { h.wnd } else { h.wnd >> WINDOW_SHIFT };
    seg[14..16].copy_from_slice(&(wnd.min(65535) as u16).to_be_bytes());
    seg[16..20].copy_from_slice(&[0, 0, 0, 0]);
    let o = &mut seg[20..hl];
    if syn {
        let mss = h.mss.to_be_bytes();
        o.copy_from_slice(&[2, 4, mss[0], mss[1], 1, 3, 3, WINDOW_SHIFT, 1, 1, 4, 2]);
    } else if h.n_sack > 0 {
        o[0] = 1;
        o[1] = 1;
        o[2] = 5;
        o[3] = 2 + 8 * h.n_sack;
        for (i, &(l, r)) in h.sack_blocks().iter().enumerate() {
            o[4 + 8 * i..8 + 8 * i].copy_from_slice(&on_wire(l).to_be_bytes());
            o[8 + 8 * i..12 + 8 * i].copy_from_slice(&on_wire(r).to_be_bytes());
        }
    }
    let len = seg.len() as u32;
    let mut acc = checksum::sum(0, &src);
    acc = checksum::sum(acc, &dst);
    acc += PROTO_TCP as u32 + len;
    let c = checksum::finish(checksum::sum(acc, seg));
    seg[16..18].copy_from_slice(&c.to_be_bytes());
}

/// Parses a TCP header back (32-bit sequence numbers as read), checking the
/// checksum. Returns the header, ports and header length.
pub fn parse(
    seg: &[u8],
    src: [u8; 4],
    dst: [u8; 4],
) -> Result<(TcpHeader, u16, u16, usize), WireError> {
    if seg.len() < 20 {
        return Err(WireError::Truncated {
            need: 20,
            have: seg.len(),
        });
    }
    let hl = (seg[12] >> 4) as usize * 4;
    if hl < 20 || hl > seg.len() {
        return Err(WireError::BadField {
            field: "data offset",
            value: hl as u64,
        });
    }
    let mut acc = checksum::sum(0, &src);
    acc = checksum::sum(acc, &dst);
    acc += PROTO_TCP as u32 + seg.len() as u32;
    if checksum::finish(checksum::sum(acc, seg)) != 0 {
        return Err(WireError::Checksum);
    }
    let mut h = TcpHeader {
        seq: u32::from_be_bytes(seg[4..8].try_into().unwrap()) as u64,
        ack: u32::from_be_bytes(seg[8..12].try_into().unwrap()) as u64,
        flags: seg[13],
        wnd: u16::from_be_bytes([seg[14], seg[15]]) as u64,
        ..Default::default()
    };
    let mut i = 20;
    while i < hl {
        match seg[i] {
            0 => break,
            1 => i += 1,
            kind => {
                let len = *seg.get(i + 1).ok_or(WireError::Truncated {
                    need: i + 2,
                    have: hl,
                })? as usize;
                if len < 2 || i + len > hl {
                    return Err(WireError::BadField {
                        field: "option length",
                        value: len as u64,
                    });
                }
                let body = &seg[i + 2..i + len];
                match kind {
                    2 if len == 4 => h.mss = u16::from_be_bytes([body[0], body[1]]),
                    5 => {
                        // Several SACK options may come in one segment; keep
                        // the first blocks, as many as the header holds
                        // (RFC 2018 4: the first block is the most recent).
                        let room = MAX_SACK_BLOCKS - h.n_sack as usize;
                        for b in body.chunks_exact(8).take(room) {
                            let l = u32::from_be_bytes(b[0..4].try_into().unwrap()) as u64;
                            let r = u32::from_be_bytes(b[4..8].try_into().unwrap()) as u64;
                            h.sack[h.n_sack as usize] = (l, r);
                            h.n_sack += 1;
                        }
                    }
                    _ => {}
                }
                i += len;
            }
        }
    }
    if !h.has(tcp_flags::SYN) {
        h.wnd <<= WINDOW_SHIFT;
    }
    let ports = (
        u16::from_be_bytes([seg[0], seg[1]]),
        u16::from_be_bytes([seg[2], seg[3]]),
    );
    Ok((h, ports.0, ports.1, hl))
}

/// Writes the checksum of `seg` (a TCP segment whose checksum field may
/// hold anything) from `src` to `dst`.
pub fn fill_checksum(seg: &mut [u8], src: [u8; 4], dst: [u8; 4]) {
    seg[16..18].copy_from_slice(&[0, 0]);
    let mut acc = checksum::sum(0, &src);
    acc = checksum::sum(acc, &dst);
    acc += PROTO_TCP as u32 + seg.len() as u32;
    let c = checksum::finish(checksum::sum(acc, seg));
    seg[16..18].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::tcp_flags::{ACK, SYN};

    #[test]
    fn two_sack_options_keep_the_first_three_blocks() {
        // Regression: a valid segment with two SACK options of two blocks
        // each overflowed the three-block header (index out of bounds).
        let a = [10, 0, 0, 1];
        let mut seg = vec![0u8; 20];
        seg[12] = 15 << 4; // 60 bytes: 20 + two 18-byte options + 4 padding
        seg[13] = ACK;
        for opt in 0..2u32 {
            seg.extend_from_slice(&[5, 18]);
            for b in 0..2u32 {
                let l = 1000 * (1 + 2 * opt + b);
                seg.extend_from_slice(&l.to_be_bytes());
                seg.extend_from_slice(&(l + 500).to_be_bytes());
            }
        }
        seg.extend_from_slice(&[1, 1, 1, 0]);
        assert_eq!(seg.len(), 60);
        fill_checksum(&mut seg, a, a);
        let (h, ..) = parse(&seg, a, a).expect("a valid segment parses");
        assert_eq!(h.sack_blocks(), &[(1000, 1500), (2000, 2500), (3000, 3500)]);
    }

    #[test]
    fn syn_round_trip_with_options() {
        let h = TcpHeader {
            seq: 0,
            ack: 0,
            flags: SYN,
            wnd: 60000,
            mss: 1460,
            ..Default::default()
        };
        let mut seg = vec![0u8; h.header_bytes() as usize];
        emit(&h, 1000, 80, &mut seg, [10, 0, 0, 1], [10, 0, 0, 2]);
        assert_eq!(seg.len(), 32);
        assert_eq!(seg[12], 8 << 4);
        assert_eq!(&seg[20..24], &[2, 4, 0x05, 0xb4], "MSS 1460");
        let (back, sp, dp, hl) = parse(&seg, [10, 0, 0, 1], [10, 0, 0, 2]).unwrap();
        assert_eq!((back, sp, dp, hl), (h, 1000, 80, 32));
    }

    #[test]
    fn a_later_connection_is_offset_by_its_own_initial_sequence_number() {
        assert_eq!(wire_isn(0), 0);
        assert_eq!(wire_isn(1), 0x9E37_79B9);
        assert_eq!(wire_isn(2), 0x3C6E_F372); // 2 x 0x9E3779B9 mod 2^32
        let h = TcpHeader {
            seq: 1,
            ack: 2921,
            flags: ACK,
            wnd: 1 << 20,
            sack: [(4381, 5841), (0, 0), (0, 0)],
            n_sack: 1,
            conn: 1,
            ..Default::default()
        };
        let mut seg = vec![0u8; h.header_bytes() as usize];
        emit(&h, 80, 1000, &mut seg, [10, 0, 0, 2], [10, 0, 0, 1]);
        let (back, ..) = parse(&seg, [10, 0, 0, 2], [10, 0, 0, 1]).unwrap();
        let isn = 0x9E37_79B9u64;
        assert_eq!((back.seq, back.ack), (1 + isn, 2921 + isn));
        assert_eq!(back.sack_blocks(), [(4381 + isn, 5841 + isn)]);
        // Without ACK the acknowledgement field stays as it was (zero).
        let syn = TcpHeader {
            flags: SYN,
            conn: 1,
            ..Default::default()
        };
        let mut seg = vec![0u8; syn.header_bytes() as usize];
        emit(&syn, 80, 1000, &mut seg, [10, 0, 0, 2], [10, 0, 0, 1]);
        let (back, ..) = parse(&seg, [10, 0, 0, 2], [10, 0, 0, 1]).unwrap();
        assert_eq!((back.seq, back.ack), (isn, 0));
    }

    #[test]
    fn sack_blocks_round_trip() {
        let h = TcpHeader {
            seq: 1,
            ack: 2921,
            flags: ACK,
            wnd: 1 << 20,
            sack: [(4381, 5841), (7301, 8761), (0, 0)],
            n_sack: 2,
            mss: 0,
            conn: 0,
        };
        let mut seg = vec![0u8; h.header_bytes() as usize + 10];
        emit(&h, 80, 1000, &mut seg, [10, 0, 0, 2], [10, 0, 0, 1]);
        assert_eq!(h.header_bytes(), 40);
        let (back, ..) = parse(&seg, [10, 0, 0, 2], [10, 0, 0, 1]).unwrap();
        assert_eq!(back, h);
        seg[30] ^= 0xff;
        assert_eq!(
            parse(&seg, [10, 0, 0, 2], [10, 0, 0, 1]).unwrap_err(),
            WireError::Checksum
        );
    }
}
