//! The IPv4 addresses of nodes and multicast groups (pcap export).

/// IPv4 address of node `i`: 10.0.0.1 + i.
pub fn node_addr(i: u32) -> [u8; 4] {
    let v = 0x0A00_0001u32 + i;
    v.to_be_bytes()
}

/// Multicast address of group `g`: 239.1.0.1 + g.
pub fn group_addr(g: u32) -> [u8; 4] {
    let v = 0xEF01_0001u32 + g;
    v.to_be_bytes()
}
