//! RTCP extended reports (RFC 3611, PT 207) with the two blocks that give
//! a member that sends no media a round-trip time: the Receiver Reference
//! Time block (4.4, BT 4: an NTP timestamp) and the DLRR block (4.5, BT 5:
//! per member heard, its last RRTR's middle 32 NTP bits and the delay
//! since, in 1/65536 s). Blocks of other types are skipped by their length
//! (RFC 3611 3).

use super::WireError;

/// RTCP packet type of an extended report (RFC 3611 2).
pub const PT_XR: u8 = 207;
/// Block type of a Receiver Reference Time block (RFC 3611 4.4).
pub const BT_RRTR: u8 = 4;
/// Block type of a DLRR block (RFC 3611 4.5).
pub const BT_DLRR: u8 = 5;

/// One DLRR sub-block: the member `ssrc` sent an RRTR with these middle 32
/// NTP bits (`lrr`), `dlrr` (1/65536 s) before this report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlrrItem {
    pub ssrc: u32,
    pub lrr: u32,
    pub dlrr: u32,
}

/// An extended report: at most one RRTR block, then a DLRR block when
/// there are sub-blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xr {
    pub ssrc: u32,
    /// The RRTR block's 64-bit NTP timestamp.
    pub rrtr: Option<u64>,
    pub dlrr: Vec<DlrrItem>,
}

impl Xr {
    /// Bytes on the wire (header included).
    pub fn wire_len(&self) -> usize {
        let rrtr = if self.rrtr.is_some() { 12 } else { 0 };
        let dlrr = if self.dlrr.is_empty() {
            0
        } else {
            4 + 12 * self.dlrr.len()
        };
        8 + rrtr + dlrr
    }

    /// Appends the packet's bytes to `buf`.
    pub fn emit(&self, buf: &mut Vec<u8>) {
        super::header(buf, 0, PT_XR, self.wire_len() - 4);
        buf.extend_from_slice(&self.ssrc.to_be_bytes());
        if let Some(ntp) = self.rrtr {
            // Block length: the block's 32-bit words minus one (RFC 3611 3).
            block_header(buf, BT_RRTR, 2);
            buf.extend_from_slice(&ntp.to_be_bytes());
        }
        if !self.dlrr.is_empty() {
            block_header(buf, BT_DLRR, 3 * self.dlrr.len());
            for d in &self.dlrr {
                for v in [d.ssrc, d.lrr, d.dlrr] {
                    buf.extend_from_slice(&v.to_be_bytes());
                }
            }
        }
    }

    /// Parses the body after the common header (`b`: SSRC onwards).
    pub(super) fn parse_body(b: &[u8]) -> Result<Xr, WireError> {
        if b.len() < 4 {
            return Err(WireError::BadField {
                field: "xr length",
                value: (b.len() + 4) as u64,
            });
        }
        let mut xr = Xr {
            ssrc: super::read_u32(b, 0),
            rrtr: None,
            dlrr: Vec::new(),
        };
        let mut at = 4;
        // The body is whole words (the common header counts words), so a
        // block header is never cut short; a block's length may run past.
        while at < b.len() {
            let words = u16::from_be_bytes([b[at + 2], b[at + 3]]) as usize;
            let end = at + 4 + 4 * words;
            if end > b.len() {
                // In bytes of the packet, its header included.
                return Err(WireError::Truncated {
                    need: 4 + end,
                    have: 4 + b.len(),
                });
            }
            let body = &b[at + 4..end];
            match b[at] {
                BT_RRTR => xr.rrtr_block(body, words)?,
                BT_DLRR => xr.dlrr_block(body, words)?,
                _ => {} // RFC 3611 3: an unknown block is skipped.
            }
            at = end;
        }
        Ok(xr)
    }

    fn rrtr_block(&mut self, body: &[u8], words: usize) -> Result<(), WireError> {
        if words != 2 {
            return Err(WireError::BadField {
                field: "xr rrtr block length",
                value: words as u64,
            });
        }
        if self.rrtr.is_some() {
            return Err(WireError::BadField {
                field: "xr rrtr blocks",
                value: 2,
            });
        }
        self.rrtr = Some(u64::from_be_bytes(body.try_into().expect("8 bytes")));
        Ok(())
    }

    fn dlrr_block(&mut self, body: &[u8], words: usize) -> Result<(), WireError> {
        if words % 3 != 0 {
            return Err(WireError::BadField {
                field: "xr dlrr block length",
                value: words as u64,
            });
        }
        self.dlrr.extend(body.chunks_exact(12).map(|c| DlrrItem {
            ssrc: super::read_u32(c, 0),
            lrr: super::read_u32(c, 4),
            dlrr: super::read_u32(c, 8),
        }));
        Ok(())
    }
}

fn block_header(buf: &mut Vec<u8>, bt: u8, words: usize) {
    buf.push(bt);
    buf.push(0); // reserved (type-specific)
    buf.extend_from_slice(&(words as u16).to_be_bytes());
}
