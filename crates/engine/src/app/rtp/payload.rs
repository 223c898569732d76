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
    /// The transport-wide sequence number (header extension), with
    /// transport-wide feedback.
    pub transport_seq: Option<u16>,
    /// A padding-only packet (a bandwidth probe's filler): no media.
    pub padding: bool,
}

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
                payload_type: 96,
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
    /// Feedback sent as application-layer feedback (PSFB AFB) with one
    /// 4-byte NACK per lost segment (NEWPRED) instead of Generic NACK.
    pub app_layer_fb: bool,
    pub bye: bool,
    pub early: bool,
    pub cname: String,
}

impl AppPayload for RtcpCompound {
    fn emit(&self, _p: &Packet, now: SimTime, buf: &mut [u8]) {
        let mut bytes = Vec::with_capacity(buf.len());
        for pk in super::compound::compound_packets(self, now) {
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
