//! What RTP session members put in their packets: an RTP header's fields
//! (media and NEWPRED repairs) and RTCP compounds, with their pcap bytes.

use crate::net::payload::{Spare, SPARE_MAX};
use crate::net::spare::{Local, Spares};
use crate::net::{AppPayload, Packet, Payload};
use crate::sim::SimTime;
use crate::wire::rtp;
use std::sync::Arc;

/// An RTP packet's header fields. `repair`: a NEWPRED repair answering
/// feedback sent at that time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtpData {
    pub ssrc: u32,
    pub seq: u16,
    pub timestamp: u32,
    pub repair: Option<SimTime>,
    /// The rate controller's stamp, when the member's media has one (`cc`).
    pub stamp: Option<crate::proto::cc::Stamp>,
    /// Frame-based media: the frame this packet belongs to (the RTP
    /// timestamp and marker carry the same on the wire).
    pub frame: Option<crate::app::media::playout::FrameTag>,
    /// The last packet of its frame (RTP marker bit).
    pub marker: bool,
    /// The first packet of its frame (a payload format's start-of-frame
    /// bit, as VP8's S bit; not in the pcap's bytes).
    pub first: bool,
    /// The transport-wide sequence number (header extension), with
    /// transport-wide feedback.
    pub transport_seq: Option<u16>,
    /// A padding-only packet (a bandwidth probe's filler): no media.
    pub padding: bool,
    /// An RFC 4588 retransmission of the media packet with this sequence
    /// number (OSN), on the retransmission stream (`ssrc`, `seq`).
    pub rtx: Option<u16>,
}

/// The dynamic payload types mediasim's media and retransmission streams
/// take (a session negotiates them in SDP; RFC 4588 8.6's `apt` ties the
/// second to the first).
pub const MEDIA_PT: u8 = 96;
pub const RTX_PT: u8 = 97;

thread_local! {
    static LOCAL: Local<Arc<RtpData>> = const { std::cell::RefCell::new(Vec::new()) };
}
/// RTP packets' payload allocations, kept for the next packets.
static SPARE: Spare<RtpData> = Spares::new(&LOCAL, SPARE_MAX);

impl RtpData {
    /// This header as a packet's payload (in a kept allocation when there
    /// is one: a call sends one with every media packet).
    #[inline]
    pub fn payload(self) -> Payload {
        Payload::reuse(&SPARE, self)
    }
}

impl AppPayload for RtpData {
    fn recycle(self: Arc<Self>) {
        crate::net::payload::keep(&SPARE, self);
    }
    fn emit(&self, _p: &Packet, _now: SimTime, buf: &mut [u8]) {
        if buf.len() >= rtp::HEADER_LEN {
            let h = rtp::RtpHeader {
                marker: self.marker,
                payload_type: if self.rtx.is_some() { RTX_PT } else { MEDIA_PT },
                seq: self.seq,
                timestamp: self.timestamp,
                ssrc: self.ssrc,
                transport_seq: self.transport_seq,
                padding: self.padding,
            };
            if buf.len() >= h.wire_len() {
                h.emit(buf);
                if self.padding {
                    rtp::emit_padding_count(buf, h.wire_len());
                }
                // RFC 4588 4: the retransmission payload starts with the OSN.
                let at = h.wire_len();
                if let Some(osn) = self.rtx.filter(|_| buf.len() >= at + 2) {
                    buf[at..at + 2].copy_from_slice(&osn.to_be_bytes());
                }
            }
        }
    }
    crate::payload_eq!();
}

/// One report block, with LSR and DLSR as simulated times (exported as NTP
/// short format).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtcpReport {
    pub ssrc: u32,
    pub fraction_lost: u8,
    pub cumulative_lost: i32,
    pub ext_highest_seq: u32,
    pub jitter: u32,
    /// When the reported source's last SR was sent (its NTP timestamp).
    pub lsr: Option<SimTime>,
    /// Delay since that SR arrived.
    pub dlsr: SimTime,
}

/// A compound RTCP packet's contents. Sent shared: the copies a multicast
/// tree makes of one compound share it.
#[derive(Clone, Debug, PartialEq)]
pub struct RtcpCompound {
    pub ssrc: u32,
    /// Sender info (SR) when the member sent RTP recently or sends SRs.
    pub sender: Option<(u32, u32)>,
    pub reports: Vec<RtcpReport>,
    /// Generic NACK feedback: (media SSRC, lost sequence numbers).
    pub nacks: Vec<(u32, Vec<u16>)>,
    /// An RFC 3611 Receiver Reference Time block, stamped with the send
    /// time (`xr_rtt`, a member that sends no SRs).
    pub rrtr: bool,
    /// RFC 3611 DLRR sub-blocks answering the RRTRs heard.
    pub dlrr: Vec<super::xr::Dlrr>,
    /// Feedback sent as application-layer feedback (PSFB AFB) with one
    /// 4-byte NACK per lost segment (NEWPRED) instead of Generic NACK.
    pub app_layer_fb: bool,
    pub bye: bool,
    pub early: bool,
    pub cname: String,
}

impl AppPayload for RtcpCompound {
    fn emit(&self, p: &Packet, _now: SimTime, buf: &mut [u8]) {
        let mut bytes = Vec::with_capacity(buf.len());
        // The SR's and RRTR's timestamps say when the compound was sent,
        // wherever it is captured (RFC 3550 6.4.1, RFC 3611 4.4).
        for pk in super::compound::compound_packets(self, p.created_at) {
            pk.emit(&mut bytes);
        }
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
    }
    crate::payload_eq!();
}

/// A Picture Loss Indication (RFC 4585 6.3.1): the receiver of
/// `media_ssrc`'s video asks it for a key frame. Sent alone, as a
/// reduced-size RTCP packet (RFC 5506).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pli {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
}

impl Pli {
    /// Its RTCP bytes: the header word and the two SSRCs.
    pub const WIRE_BYTES: u32 = 12;
}

impl AppPayload for Pli {
    fn emit(&self, _p: &Packet, _now: SimTime, buf: &mut [u8]) {
        let mut bytes = Vec::with_capacity(Self::WIRE_BYTES as usize);
        crate::wire::rtcp::RtcpPacket::Pli {
            sender_ssrc: self.sender_ssrc,
            media_ssrc: self.media_ssrc,
        }
        .emit(&mut bytes);
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
    }
    crate::payload_eq!();
}

/// A Generic NACK (RFC 4585 6.2.1) sent alone, as a reduced-size RTCP
/// packet (RFC 5506): the receiver of `media_ssrc`'s stream asks for the
/// packets `seqs` again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nack {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
    pub seqs: Vec<u16>,
}

impl Nack {
    /// Its (PID, BLP) entries.
    pub fn entries(&self) -> Vec<(u16, u16)> {
        crate::wire::rtcp::nack_entries(&self.seqs)
    }

    /// Its RTCP bytes: the header word, the two SSRCs and 4 bytes per
    /// entry.
    pub fn wire_bytes(&self) -> u32 {
        12 + 4 * self.entries().len() as u32
    }
}

impl AppPayload for Nack {
    fn emit(&self, _p: &Packet, _now: SimTime, buf: &mut [u8]) {
        let mut bytes = Vec::with_capacity(self.wire_bytes() as usize);
        crate::wire::rtcp::RtcpPacket::Nack {
            sender_ssrc: self.sender_ssrc,
            media_ssrc: self.media_ssrc,
            entries: self.entries(),
        }
        .emit(&mut bytes);
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
    }
    crate::payload_eq!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::PacketTemplate;
    use crate::net::Dest;
    use crate::wire::rtcp::{nack_seqs, RtcpPacket};

    /// A NACK alone: the header word, two SSRCs and a 4-byte entry per
    /// packet ID with the 16 after it in its bitmask (RFC 4585 6.2.1); its
    /// bytes parse back to the packets it names.
    #[test]
    fn a_nack_alone_is_its_entries_on_the_wire() {
        let n = Nack {
            sender_ssrc: 2,
            media_ssrc: 1,
            seqs: vec![10, 11, 26, 27, 40],
        };
        // 11 and 26 are 1 and 16 after 10; 27 starts an entry, 40 is 13
        // after it.
        assert_eq!(n.entries(), [(10, 0x8001), (27, 0x1000)]);
        assert_eq!(n.wire_bytes(), 20);
        let p = PacketTemplate::session_udp(1, Dest::Node(1), 5005, 0).make(0);
        let mut buf = vec![0u8; n.wire_bytes() as usize];
        n.emit(&p, SimTime::ZERO, &mut buf);
        let (parsed, len) = RtcpPacket::parse(&buf).expect("parses");
        assert_eq!(len, buf.len());
        let RtcpPacket::Nack {
            sender_ssrc,
            media_ssrc,
            entries,
        } = parsed
        else {
            panic!("a NACK: {parsed:?}");
        };
        assert_eq!((sender_ssrc, media_ssrc), (2, 1));
        assert_eq!(nack_seqs(&entries), [10, 11, 26, 27, 40]);
    }

    /// A retransmission's RTP header carries payload type 97 and its own
    /// SSRC and number; its payload starts with the OSN (RFC 4588 4).
    #[test]
    fn a_retransmission_carries_its_original_number() {
        let d = RtpData {
            ssrc: 501,
            seq: 3,
            timestamp: 9,
            repair: None,
            stamp: None,
            frame: None,
            marker: true,
            first: false,
            transport_seq: Some(77),
            padding: false,
            rtx: Some(0xBEEF),
        };
        let p = PacketTemplate::session_udp(1, Dest::Node(1), 5004, 0).make(0);
        let mut buf = vec![0u8; 40];
        d.emit(&p, SimTime::ZERO, &mut buf);
        let h = rtp::RtpHeader::parse(&buf).expect("parses");
        assert_eq!(
            (h.payload_type, h.ssrc, h.seq, h.marker),
            (RTX_PT, 501, 3, true)
        );
        assert_eq!(h.transport_seq, Some(77));
        assert_eq!(buf[h.wire_len()..h.wire_len() + 2], [0xBE, 0xEF]);
        let media = RtpData { rtx: None, ..d };
        media.emit(&p, SimTime::ZERO, &mut buf);
        assert_eq!(
            rtp::RtpHeader::parse(&buf).expect("parses").payload_type,
            MEDIA_PT
        );
    }
}
