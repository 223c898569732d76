//! RTCP packets (RFC 3550 section 6.4-6.6) and RTCP feedback (RFC 4585
//! section 6): SR, RR, SDES (CNAME), BYE, RTPFB Generic NACK, PSFB
//! Picture Loss Indication and application-layer feedback, plus compound
//! packets; congestion control
//! feedback in both per-packet formats (`ccfb`: RFC 8888; `twcc`:
//! transport-wide); extended reports with the RRTR and DLRR blocks (`xr`:
//! RFC 3611).

pub mod ccfb;
pub mod twcc;
pub mod xr;

pub use ccfb::{Ccfb, CcfbBlock, Metric};
pub use twcc::{Status, Twcc};
pub use xr::{DlrrItem, Xr};

use super::WireError;

pub const PT_SR: u8 = 200;
pub const PT_RR: u8 = 201;
pub const PT_SDES: u8 = 202;
pub const PT_BYE: u8 = 203;
pub const PT_RTPFB: u8 = 205;
pub const PT_PSFB: u8 = 206;
/// RTPFB FMT 1: Generic NACK (RFC 4585 6.2.1).
pub const FMT_NACK: u8 = 1;
/// PSFB FMT 1: Picture Loss Indication (RFC 4585 6.3.1).
pub const FMT_PLI: u8 = 1;
/// PSFB FMT 15: application layer feedback (RFC 4585 6.4).
pub const FMT_AFB: u8 = 15;
const SDES_CNAME: u8 = 1;

/// A reception report block (RFC 3550 6.4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReportBlock {
    pub ssrc: u32,
    pub fraction_lost: u8,
    /// 24-bit signed.
    pub cumulative_lost: i32,
    pub ext_highest_seq: u32,
    pub jitter: u32,
    pub lsr: u32,
    pub dlsr: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RtcpPacket {
    SenderReport {
        ssrc: u32,
        ntp: u64,
        rtp_ts: u32,
        packet_count: u32,
        octet_count: u32,
        reports: Vec<ReportBlock>,
    },
    ReceiverReport {
        ssrc: u32,
        reports: Vec<ReportBlock>,
    },
    /// One chunk with a CNAME item.
    Sdes {
        ssrc: u32,
        cname: String,
    },
    Bye {
        ssrcs: Vec<u32>,
    },
    /// Generic NACK: (PID, BLP) pairs.
    Nack {
        sender_ssrc: u32,
        media_ssrc: u32,
        entries: Vec<(u16, u16)>,
    },
    /// Picture Loss Indication: no FCI (RFC 4585 6.3.1).
    Pli {
        sender_ssrc: u32,
        media_ssrc: u32,
    },
    /// Application layer feedback: opaque FCI (a multiple of 4 bytes).
    AppFeedback {
        sender_ssrc: u32,
        media_ssrc: u32,
        data: Vec<u8>,
    },
    /// RFC 8888 congestion control feedback (RTPFB FMT 11).
    Ccfb(Ccfb),
    /// Transport-wide congestion control feedback (RTPFB FMT 15).
    Twcc(Twcc),
    /// Extended report (RFC 3611): RRTR and DLRR blocks.
    Xr(Xr),
}

fn header(buf: &mut Vec<u8>, count: u8, pt: u8, body_len: usize) {
    buf.push(0x80 | (count & 0x1f));
    buf.push(pt);
    buf.extend_from_slice(&((body_len / 4) as u16).to_be_bytes()); // words - 1 (header word excluded)
}

fn push_block(buf: &mut Vec<u8>, b: &ReportBlock) {
    buf.extend_from_slice(&b.ssrc.to_be_bytes());
    let cl = (b.cumulative_lost.clamp(-0x80_0000, 0x7f_ffff) as u32) & 0x00ff_ffff;
    buf.extend_from_slice(&((b.fraction_lost as u32) << 24 | cl).to_be_bytes());
    for v in [b.ext_highest_seq, b.jitter, b.lsr, b.dlsr] {
        buf.extend_from_slice(&v.to_be_bytes());
    }
}

/// The middle 32 bits of a 64-bit NTP timestamp for simulated time `t`
/// (seconds since the simulation start, 16.16): RFC 3550's LSR and RFC
/// 8888's report timestamp.
pub fn ntp_short(t: crate::sim::SimTime) -> u32 {
    let secs = t.as_nanos() / 1_000_000_000;
    let frac = ((t.as_nanos() % 1_000_000_000) << 16) / 1_000_000_000;
    ((secs as u32) << 16) | frac as u32
}

fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

fn read_block(b: &[u8]) -> ReportBlock {
    let word = read_u32(b, 4);
    let mut cl = (word & 0x00ff_ffff) as i32;
    if cl & 0x80_0000 != 0 {
        cl -= 0x100_0000; // sign-extend 24 bits
    }
    ReportBlock {
        ssrc: read_u32(b, 0),
        fraction_lost: (word >> 24) as u8,
        cumulative_lost: cl,
        ext_highest_seq: read_u32(b, 8),
        jitter: read_u32(b, 12),
        lsr: read_u32(b, 16),
        dlsr: read_u32(b, 20),
    }
}

impl RtcpPacket {
    /// Appends the packet's bytes to `buf`.
    pub fn emit(&self, buf: &mut Vec<u8>) {
        match self {
            RtcpPacket::SenderReport {
                ssrc,
                ntp,
                rtp_ts,
                packet_count,
                octet_count,
                reports,
            } => {
                header(buf, reports.len() as u8, PT_SR, 24 + 24 * reports.len());
                buf.extend_from_slice(&ssrc.to_be_bytes());
                buf.extend_from_slice(&ntp.to_be_bytes());
                for v in [*rtp_ts, *packet_count, *octet_count] {
                    buf.extend_from_slice(&v.to_be_bytes());
                }
                reports.iter().for_each(|b| push_block(buf, b));
            }
            RtcpPacket::ReceiverReport { ssrc, reports } => {
                header(buf, reports.len() as u8, PT_RR, 4 + 24 * reports.len());
                buf.extend_from_slice(&ssrc.to_be_bytes());
                reports.iter().for_each(|b| push_block(buf, b));
            }
            RtcpPacket::Sdes { ssrc, cname } => {
                let text = &cname.as_bytes()[..cname.len().min(255)];
                // chunk: SSRC, item (type, len, text), end item, pad to 4.
                let raw = 4 + 2 + text.len() + 1;
                let padded = raw.div_ceil(4) * 4;
                header(buf, 1, PT_SDES, padded);
                buf.extend_from_slice(&ssrc.to_be_bytes());
                buf.push(SDES_CNAME);
                buf.push(text.len() as u8);
                buf.extend_from_slice(text);
                buf.resize(buf.len() + (padded - raw) + 1, 0);
            }
            RtcpPacket::Bye { ssrcs } => {
                header(buf, ssrcs.len() as u8, PT_BYE, 4 * ssrcs.len());
                ssrcs
                    .iter()
                    .for_each(|s| buf.extend_from_slice(&s.to_be_bytes()));
            }
            RtcpPacket::Nack {
                sender_ssrc,
                media_ssrc,
                entries,
            } => {
                header(buf, FMT_NACK, PT_RTPFB, 8 + 4 * entries.len());
                buf.extend_from_slice(&sender_ssrc.to_be_bytes());
                buf.extend_from_slice(&media_ssrc.to_be_bytes());
                for (pid, blp) in entries {
                    buf.extend_from_slice(&pid.to_be_bytes());
                    buf.extend_from_slice(&blp.to_be_bytes());
                }
            }
            RtcpPacket::Pli {
                sender_ssrc,
                media_ssrc,
            } => {
                header(buf, FMT_PLI, PT_PSFB, 8);
                buf.extend_from_slice(&sender_ssrc.to_be_bytes());
                buf.extend_from_slice(&media_ssrc.to_be_bytes());
            }
            RtcpPacket::AppFeedback {
                sender_ssrc,
                media_ssrc,
                data,
            } => {
                let padded = data.len().div_ceil(4) * 4;
                header(buf, FMT_AFB, PT_PSFB, 8 + padded);
                buf.extend_from_slice(&sender_ssrc.to_be_bytes());
                buf.extend_from_slice(&media_ssrc.to_be_bytes());
                buf.extend_from_slice(data);
                buf.resize(buf.len() + padded - data.len(), 0);
            }
            RtcpPacket::Ccfb(c) => c.emit(buf),
            RtcpPacket::Twcc(t) => t.emit(buf),
            RtcpPacket::Xr(x) => x.emit(buf),
        }
    }

    /// Length on the wire in bytes.
    /// Counted without writing (a compound's size is asked for at each
    /// report): the header word and the body `emit` writes.
    pub fn wire_len(&self) -> usize {
        let body = match self {
            RtcpPacket::SenderReport { reports, .. } => 24 + 24 * reports.len(),
            RtcpPacket::ReceiverReport { reports, .. } => 4 + 24 * reports.len(),
            RtcpPacket::Sdes { cname, .. } => (4 + 2 + cname.len().min(255) + 1).div_ceil(4) * 4,
            RtcpPacket::Bye { ssrcs } => 4 * ssrcs.len(),
            RtcpPacket::Nack { entries, .. } => 8 + 4 * entries.len(),
            RtcpPacket::Pli { .. } => 8,
            RtcpPacket::AppFeedback { data, .. } => 8 + data.len().div_ceil(4) * 4,
            RtcpPacket::Ccfb(c) => return c.wire_len(),
            RtcpPacket::Twcc(t) => return t.wire_len(),
            RtcpPacket::Xr(x) => return x.wire_len(),
        };
        4 + body
    }

    /// Parses one packet; returns it and the bytes it used.
    pub fn parse(buf: &[u8]) -> Result<(RtcpPacket, usize), WireError> {
        let (count, pt, len) = parse_header(buf)?;
        let b = Body {
            b: &buf[4..len],
            len,
        };
        let p = match pt {
            PT_SR => b.sender_report(count)?,
            PT_RR => b.receiver_report(count)?,
            PT_SDES => b.sdes()?,
            PT_BYE => b.bye(count)?,
            PT_RTPFB if count as u8 == FMT_NACK => b.nack()?,
            PT_PSFB if count as u8 == FMT_PLI => b.pli()?,
            PT_PSFB if count as u8 == FMT_AFB => b.app_feedback()?,
            PT_RTPFB if count as u8 == ccfb::FMT_CCFB => RtcpPacket::Ccfb(Ccfb::parse_body(b.b)?),
            PT_RTPFB if count as u8 == twcc::FMT_TWCC => RtcpPacket::Twcc(Twcc::parse_body(b.b)?),
            xr::PT_XR => RtcpPacket::Xr(Xr::parse_body(b.b)?),
            other => {
                return Err(WireError::BadField {
                    field: "rtcp packet type",
                    value: other as u64,
                })
            }
        };
        Ok((p, len))
    }

    /// Parses a compound packet.
    pub fn parse_compound(mut buf: &[u8]) -> Result<Vec<RtcpPacket>, WireError> {
        let mut out = Vec::new();
        while !buf.is_empty() {
            let (p, used) = RtcpPacket::parse(buf)?;
            out.push(p);
            buf = &buf[used..];
        }
        Ok(out)
    }
}

/// Generic NACK entries for a set of lost sequence numbers (RFC 4585
/// 6.2.1): each entry names a packet (PID) and, in its bitmask (BLP), which
/// of the 16 following are lost too.
pub fn nack_entries(lost: &[u16]) -> Vec<(u16, u16)> {
    let mut seqs: Vec<u16> = lost.to_vec();
    seqs.sort_unstable();
    seqs.dedup();
    let mut out: Vec<(u16, u16)> = Vec::new();
    for s in seqs {
        if let Some(last) = out.last_mut() {
            let d = s.wrapping_sub(last.0);
            if (1..=16).contains(&d) {
                last.1 |= 1 << (d - 1);
                continue;
            }
        }
        out.push((s, 0));
    }
    out
}

/// The sequence numbers a Generic NACK reports.
pub fn nack_seqs(entries: &[(u16, u16)]) -> Vec<u16> {
    let mut out = Vec::new();
    for &(pid, blp) in entries {
        out.push(pid);
        for i in 0..16 {
            if blp & (1 << i) != 0 {
                out.push(pid.wrapping_add(i + 1));
            }
        }
    }
    out
}

/// The common header (RFC 3550 6.4.1): (count or FMT, packet type, length
/// of the whole packet in bytes), checked against the buffer.
fn parse_header(buf: &[u8]) -> Result<(usize, u8, usize), WireError> {
    if buf.len() < 4 {
        return Err(WireError::Truncated {
            need: 4,
            have: buf.len(),
        });
    }
    if buf[0] >> 6 != 2 {
        return Err(WireError::BadField {
            field: "rtcp version",
            value: (buf[0] >> 6) as u64,
        });
    }
    let len = (u16::from_be_bytes([buf[2], buf[3]]) as usize + 1) * 4;
    if buf.len() < len {
        return Err(WireError::Truncated {
            need: len,
            have: buf.len(),
        });
    }
    Ok(((buf[0] & 0x1f) as usize, buf[1], len))
}

/// The body of one RTCP packet (after its 4-byte header).
struct Body<'a> {
    b: &'a [u8],
    /// The packet's length from its header, for messages.
    len: usize,
}

impl Body<'_> {
    /// The body holds at least `n` bytes, as its header's count requires.
    fn need(&self, n: usize) -> Result<(), WireError> {
        if self.b.len() < n {
            Err(WireError::BadField {
                field: "rtcp length",
                value: self.len as u64,
            })
        } else {
            Ok(())
        }
    }

    fn sender_report(&self, count: usize) -> Result<RtcpPacket, WireError> {
        self.need(24 + 24 * count)?;
        let body = self.b;
        Ok(RtcpPacket::SenderReport {
            ssrc: read_u32(body, 0),
            ntp: u64::from_be_bytes(body[4..12].try_into().expect("8 bytes")),
            rtp_ts: read_u32(body, 12),
            packet_count: read_u32(body, 16),
            octet_count: read_u32(body, 20),
            reports: (0..count)
                .map(|i| read_block(&body[24 + 24 * i..]))
                .collect(),
        })
    }

    fn receiver_report(&self, count: usize) -> Result<RtcpPacket, WireError> {
        self.need(4 + 24 * count)?;
        Ok(RtcpPacket::ReceiverReport {
            ssrc: read_u32(self.b, 0),
            reports: (0..count)
                .map(|i| read_block(&self.b[4 + 24 * i..]))
                .collect(),
        })
    }

    fn sdes(&self) -> Result<RtcpPacket, WireError> {
        self.need(6)?;
        let n = self.b[5] as usize;
        self.need(6 + n)?;
        if self.b[4] != SDES_CNAME {
            return Err(WireError::BadField {
                field: "sdes item",
                value: self.b[4] as u64,
            });
        }
        Ok(RtcpPacket::Sdes {
            ssrc: read_u32(self.b, 0),
            cname: String::from_utf8_lossy(&self.b[6..6 + n]).into_owned(),
        })
    }

    fn bye(&self, count: usize) -> Result<RtcpPacket, WireError> {
        self.need(4 * count)?;
        Ok(RtcpPacket::Bye {
            ssrcs: (0..count).map(|i| read_u32(self.b, 4 * i)).collect(),
        })
    }

    /// RTPFB Generic NACK (RFC 4585 6.2.1): PID/BLP pairs after the SSRCs.
    fn nack(&self) -> Result<RtcpPacket, WireError> {
        self.need(8)?;
        let entries = (self.b[8..].chunks_exact(4))
            .map(|c| {
                (
                    u16::from_be_bytes([c[0], c[1]]),
                    u16::from_be_bytes([c[2], c[3]]),
                )
            })
            .collect();
        Ok(RtcpPacket::Nack {
            sender_ssrc: read_u32(self.b, 0),
            media_ssrc: read_u32(self.b, 4),
            entries,
        })
    }

    /// PSFB Picture Loss Indication (RFC 4585 6.3.1): the two SSRCs and
    /// no FCI; a body of any other length is malformed.
    fn pli(&self) -> Result<RtcpPacket, WireError> {
        self.need(8)?;
        if self.b.len() != 8 {
            return Err(WireError::BadField {
                field: "pli length",
                value: self.len as u64,
            });
        }
        Ok(RtcpPacket::Pli {
            sender_ssrc: read_u32(self.b, 0),
            media_ssrc: read_u32(self.b, 4),
        })
    }

    /// PSFB application-layer feedback (RFC 4585 6.4): opaque data.
    fn app_feedback(&self) -> Result<RtcpPacket, WireError> {
        self.need(8)?;
        Ok(RtcpPacket::AppFeedback {
            sender_ssrc: read_u32(self.b, 0),
            media_ssrc: read_u32(self.b, 4),
            data: self.b[8..].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests;
