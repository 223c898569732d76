//! Transport headers carried by packets (plain values; byte formats are in
//! `wire/`).

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
