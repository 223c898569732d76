//! Transport headers carried by packets (plain values; byte formats are in
//! `wire/`).

use super::spare::{Local, Spares};

/// TCP flags (RFC 9293 section 3.1).
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const ACK: u8 = 0x10;
    /// ECN-Echo (RFC 3168 6.1).
    pub const ECE: u8 = 0x40;
    /// Congestion Window Reduced (RFC 3168 6.1).
    pub const CWR: u8 = 0x80;
}

/// At most this many SACK blocks per segment. Without timestamps RFC 2018
/// allows four; we carry three, as stacks that also send timestamps do.
pub const MAX_SACK_BLOCKS: usize = 3;

/// A TCP header. Sequence numbers are 64-bit and relative to the
/// connection's initial sequence number 0 (so they never wrap inside the
/// simulator); pcap export writes them modulo 2^32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    pub seq: u64,
    pub ack: u64,
    pub flags: u8,
    /// Advertised receive window in bytes.
    pub wnd: u64,
    /// SACK blocks [left, right), first `n_sack` valid.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub n_sack: u8,
    /// MSS option value (sent on SYN segments only).
    pub mss: u16,
    /// Which of a flow's successive connections the segment belongs to
    /// (a `tcp` flow with `transfers` opens one per transfer on the same
    /// ports). On the wire it is the connection's initial sequence number
    /// (`wire::tcp::wire_isn`).
    pub conn: u32,
}

impl TcpHeader {
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.n_sack as usize]
    }

    /// Header length on the wire. A SYN carries MSS (4), SACK-permitted (2),
    /// window scale (3) and three NOPs: 12 option bytes. A segment with n SACK
    /// blocks carries two NOPs plus 2 + 8n bytes.
    pub fn header_bytes(&self) -> u32 {
        let opts = if self.has(tcp_flags::SYN) {
            12
        } else if self.n_sack > 0 {
            4 + 8 * self.n_sack as u32
        } else {
            0
        };
        20 + opts
    }

    /// Sequence space the segment occupies: payload plus one for SYN and FIN.
    pub fn seq_len(&self, payload: u32) -> u64 {
        payload as u64 + self.has(tcp_flags::SYN) as u64 + self.has(tcp_flags::FIN) as u64
    }
}

// Spare header boxes. A TCP segment's header travels boxed, and with many
// flows more headers are in flight than the allocator keeps at hand per
// size (glibc's thread cache holds 7): every box then came from, and went
// back to, its slower paths (a tenth of a 256-flow run's instructions).
// Boxes of headers that left the network wait here for the next segment
// (`net::spare`: up to SPARE_MAX per thread, and a pool the threads of a
// split run share).
thread_local! {
    // Boxes, not headers: the point is to keep the allocations.
    #[allow(clippy::vec_box)]
    static LOCAL: Local<Box<TcpHeader>> = const { std::cell::RefCell::new(Vec::new()) };
}
const SPARE_MAX: usize = 4096;
static SPARE: Spares<Box<TcpHeader>> = Spares::new(&LOCAL, SPARE_MAX);

/// `h` in a box, a spare one if there is one.
#[inline]
pub fn boxed(h: TcpHeader) -> Box<TcpHeader> {
    match SPARE.take() {
        Some(mut b) => {
            *b = h;
            b
        }
        None => Box::new(h),
    }
}

/// Keeps the box of a header that left the network for [`boxed`].
#[inline]
pub fn recycle(b: Box<TcpHeader>) {
    SPARE.give(b);
}

#[cfg(test)]
mod spare_tests {
    use super::*;

    #[test]
    fn a_recycled_box_carries_the_next_header() {
        let first = boxed(TcpHeader {
            seq: 1,
            ..Default::default()
        });
        let addr: *const TcpHeader = &*first;
        let kept = SPARE.counts().0;
        recycle(first);
        assert_eq!(SPARE.counts().0, kept + 1, "kept, not freed");
        let h = TcpHeader {
            seq: 7,
            ack: 3,
            n_sack: 1,
            ..Default::default()
        };
        let second = boxed(h);
        assert!(std::ptr::eq(addr, &*second), "the spare box is reused");
        assert_eq!(*second, h);
        // Fresh boxes once the spares run out.
        let third = boxed(h);
        assert!(!std::ptr::eq(&*second, &*third));
    }

    /// RFC 9293 3.4: SYN and FIN each take one sequence number; options:
    /// a SYN's 12 bytes (MSS, SACK-permitted, window scale, NOPs), a
    /// segment with n SACK blocks 4 + 8n (RFC 2018 3).
    #[test]
    fn sequence_space_and_header_length_follow_the_flags() {
        use tcp_flags::*;
        let h = |flags, n_sack| TcpHeader {
            flags,
            n_sack,
            ..Default::default()
        };
        assert_eq!(h(SYN, 0).seq_len(0), 1);
        assert_eq!(h(SYN | ACK, 0).seq_len(0), 1);
        assert_eq!(h(FIN | ACK, 0).seq_len(500), 501);
        assert_eq!(h(ACK, 0).seq_len(1460), 1460);
        assert_eq!(h(SYN | FIN, 0).seq_len(10), 12);
        assert_eq!(h(SYN, 2).header_bytes(), 32, "a SYN carries no SACK blocks");
        assert_eq!(h(ACK, 0).header_bytes(), 20);
        assert_eq!(h(ACK, 1).header_bytes(), 32);
        assert_eq!(h(ACK, 3).header_bytes(), 48);
        let mut with = h(ACK | ECE, 2);
        with.sack[..2].copy_from_slice(&[(1, 2), (5, 9)]);
        assert_eq!(with.sack_blocks(), [(1, 2), (5, 9)]);
        assert!(with.has(ECE) && with.has(ACK) && !with.has(CWR));
    }

    #[test]
    fn the_spares_are_bounded() {
        let many: Vec<_> = (0..SPARE_MAX * 10).map(|_| Box::default()).collect();
        many.into_iter().for_each(recycle);
        let (mine, shared) = SPARE.counts();
        assert!(
            mine <= SPARE_MAX && shared <= 8 * SPARE_MAX,
            "{mine} {shared}"
        );
    }
}
