//! A member's frame-based media (`source`): frames from the source, cut
//! into RTP packets, through the pacer (if any) to the wire; the
//! transport-wide sequence number when feedback is transport-wide; the
//! send history that per-packet feedback is matched against; the source's
//! pauses. The member drives it with its two timers (next frame, pacer)
//! and hands it the per-packet feedback that returns.

use super::payload::RtpData;
use super::rtx::{Answer, RtxSender};
use crate::app::media::pacer::Pacer;
use crate::app::media::packetiser;
use crate::app::media::playout::FrameTag;
use crate::app::media::FrameSource;
use crate::app::PacketTemplate;
use crate::net::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::net::Packet;
use crate::proto::feedback::{Format, PacketResult, SendHistory};
use crate::sim::{Series, SimRng, SimTime};

/// Packets the send history keeps (about 25 s at 1000 packets/s).
const HISTORY: usize = 1 << 15;
/// The sending rate series' interval.
const SEND_WINDOW: SimTime = SimTime::from_millis(100);

/// A packet waiting in the pacer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Queued {
    pub payload: u32,
    pub tag: FrameTag,
    pub marker: bool,
    /// The first packet of its frame.
    pub first: bool,
    /// A retransmission (RFC 4588) of the packet with this sequence number.
    pub rtx: Option<u16>,
}

/// What the sender counts (the `media` table's sender columns).
#[derive(Default)]
pub struct SenderStats {
    pub frames: u64,
    pub key_frames: u64,
    pub payload_bytes: u64,
    /// RTP packets sent, padding included.
    pub packets: u64,
    /// Padding-only packets a controller's bandwidth probes needed, and
    /// their bytes on the wire.
    pub padding_packets: u64,
    pub padding_bytes: u64,
    /// Time packets waited in the pacer: sum, count, maximum.
    pub pacer_wait_sum: SimTime,
    pub pacer_waits: u64,
    pub pacer_wait_max: SimTime,
    pub pacer_max_bytes: u64,
    /// Packets discarded from the pacer at the controller's request.
    pub pacer_discarded: u64,
    /// Sum over frames of |controller target - source rate| (bit/s).
    pub gap_sum_bps: f64,
    pub fb_received: u64,
    pub fb_bytes: u64,
    /// Key-frame requests (PLI) received, and those the source answered
    /// with a key frame.
    pub pli_received: u64,
    pub key_frames_on_request: u64,
    pub reported_received: u64,
    pub reported_lost: u64,
}

/// `repr(C)`: the fields in the order written, those a packet leaving
/// touches first, so that they share a few cache lines.
#[repr(C)]
pub struct FrameSender {
    pub pacer: Option<Pacer<Queued>>,
    pub format: Option<Format>,
    /// Bytes each packet adds on the wire (IP, UDP, RTP and extension).
    pub overhead: u32,
    /// Payload bytes a packet may carry.
    pub max_payload: u32,
    transport_seq: u64,
    pub history: SendHistory,
    pub stats: SenderStats,
    /// Wire bytes sent since `window_start` (for the sending-rate series).
    window_bytes: u64,
    window_start: SimTime,
    /// The wire rate to aim at without a controller, bit/s.
    pub fixed_bps: f64,
    /// Packets to send now (released by the pacer, or captured without
    /// one), handed to the member; kept to reuse its memory.
    pub released: Vec<Queued>,
    pub source: Box<dyn FrameSource>,
    pub rng: SimRng,
    frame_index: u32,
    /// Header overhead of the last frame over its payload (syncodecs'
    /// shaped packetiser: the source aims at target / (1 + this)).
    overhead_share: f64,
    pub send_series: Series,
    pub target_series: Series,
    pub codec_series: Series,
    pub frame_series: Series,
    pub pacer_series: Series,
    /// The last feedback message's results (kept to reuse its memory).
    results: Vec<PacketResult>,
    /// When the source stops and resumes ([from, to), in order), and the
    /// first that has not ended by the last frame.
    pauses: Vec<(SimTime, SimTime)>,
    next_pause: usize,
    /// The last frame's capture time (padding carries its RTP timestamp).
    last_capture: SimTime,
    /// When the source last made a key frame on request.
    last_key_on_request: Option<SimTime>,
    /// The packets kept to answer retransmission requests (the receiver
    /// asks for them: its `playout.nack`).
    pub rtx: Option<RtxSender>,
}

/// Key frames made on request at most this often (libwebrtc's
/// kMinKeyframeSendIntervalMs).
pub const KEY_FRAME_MIN_INTERVAL: SimTime = SimTime::from_millis(300);

/// The original sequence number an RFC 4588 retransmission's payload
/// starts with.
pub const RTX_OSN_BYTES: u32 = 2;

/// Padding octets in a padding-only packet: libwebrtc's most
/// (kMaxPaddingLength), under RFC 3550's 255.
pub const PADDING_BYTES: u32 = 224;

impl FrameSender {
    pub fn new(
        source: Box<dyn FrameSource>,
        rng: SimRng,
        pacer: Option<Pacer<Queued>>,
        max_packet_bytes: u32,
        fixed_bps: f64,
        format: Option<Format>,
    ) -> Self {
        let ext = if format == Some(Format::Twcc) {
            crate::wire::rtp::TRANSPORT_SEQ_LEN as u32
        } else {
            0
        };
        let overhead = IPV4_HEADER_BYTES + UDP_HEADER_BYTES + 12 + ext;
        FrameSender {
            source,
            rng,
            pacer,
            max_payload: max_packet_bytes.saturating_sub(overhead).max(1),
            overhead,
            fixed_bps,
            format,
            history: SendHistory::new(HISTORY),
            frame_index: 0,
            transport_seq: 0,
            overhead_share: 0.0,
            stats: SenderStats::default(),
            window_bytes: 0,
            window_start: SimTime::ZERO,
            send_series: Series::default(),
            target_series: Series::default(),
            codec_series: Series::default(),
            frame_series: Series::default(),
            pacer_series: Series::default(),
            released: Vec::new(),
            results: Vec::new(),
            pauses: Vec::new(),
            next_pause: 0,
            last_capture: SimTime::ZERO,
            last_key_on_request: None,
            rtx: None,
        }
    }

    /// Keeps the packets sent to answer retransmission requests, sending
    /// the retransmissions as stream `rtx_ssrc`.
    pub fn with_retransmission(mut self, rtx_ssrc: u32) -> Self {
        self.rtx = Some(RtxSender::new(rtx_ssrc));
        self
    }

    /// The receiver asked for a key frame at `now` (a PLI): the source
    /// makes its next frame one, at most once per `KEY_FRAME_MIN_INTERVAL`
    /// (a request within it is counted and dropped, as libwebrtc's encoder
    /// feedback does).
    pub fn on_key_frame_request(&mut self, now: SimTime) {
        self.stats.pli_received += 1;
        if self
            .last_key_on_request
            .is_some_and(|t| now < t + KEY_FRAME_MIN_INTERVAL)
        {
            return;
        }
        if self.source.request_key_frame() {
            self.last_key_on_request = Some(now);
            self.stats.key_frames_on_request += 1;
        }
    }

    /// A Generic NACK named `seqs` at `now` (`rtt`: the member's round
    /// trip estimate; `target_bps`: the wire target, which retransmissions
    /// may use at most): the retransmissions to make go ahead of the media
    /// in the pacer, or into `send_now` without one.
    #[cold]
    pub fn on_nack(
        &mut self,
        now: SimTime,
        seqs: &[u16],
        (rtt, target_bps): (Option<SimTime>, f64),
        send_now: &mut Vec<Queued>,
    ) {
        let Some(r) = &mut self.rtx else {
            return;
        };
        let mut again = Vec::new();
        let answer = Answer {
            rtt,
            max_bps: target_bps,
            extra_bytes: RTX_OSN_BYTES + self.overhead,
        };
        r.on_nack(now, seqs, answer, &mut again);
        match &mut self.pacer {
            None => send_now.extend(again),
            Some(p) => {
                // In reverse, so that they leave in the order named.
                for q in again.into_iter().rev() {
                    let bytes = q.payload + RTX_OSN_BYTES + self.overhead;
                    p.push_front(now, q, bytes);
                }
                self.stats.pacer_max_bytes = self.stats.pacer_max_bytes.max(p.queued_bytes());
            }
        }
    }

    /// The source stops within each [from, to) of `pauses` (in order,
    /// apart).
    pub fn with_pauses(mut self, pauses: Vec<(SimTime, SimTime)>) -> Self {
        self.pauses = pauses;
        self
    }

    /// When the pause that `now` falls in ends, if it falls in one. Times
    /// only move forward, so pauses ended by `now` are passed for good.
    pub fn paused_until(&mut self, now: SimTime) -> Option<SimTime> {
        while self.pauses.get(self.next_pause).is_some_and(|p| p.1 <= now) {
            self.next_pause += 1;
        }
        let &(from, to) = self.pauses.get(self.next_pause)?;
        (from <= now).then_some(to)
    }

    /// Time within [start, end) the source was paused.
    pub fn paused_within(&self, start: SimTime, end: SimTime) -> SimTime {
        self.pauses
            .iter()
            .map(|&(from, to)| to.min(end).saturating_sub(from.max(start)))
            .fold(SimTime::ZERO, |a, b| a + b)
    }

    pub fn set_series(&mut self, rows: usize) {
        for s in [
            &mut self.target_series,
            &mut self.send_series,
            &mut self.codec_series,
            &mut self.frame_series,
            &mut self.pacer_series,
        ] {
            s.set_rows(rows);
        }
    }

    /// A frame is captured at `now` for a wire target of `target_bps`:
    /// its packets, each (payload, tag, marker), are queued in the pacer,
    /// or appended to `send_now` without one; returns the time to the next
    /// frame.
    pub fn capture(
        &mut self,
        now: SimTime,
        target_bps: f64,
        send_now: &mut Vec<Queued>,
    ) -> SimTime {
        self.source
            .set_target(now, target_bps / (1.0 + self.overhead_share));
        let codec = self.source.rate_bps();
        self.stats.gap_sum_bps += (target_bps / (1.0 + self.overhead_share) - codec).abs();
        let (frame, gap) = self.source.next_frame(now, &mut self.rng);
        let sizes = packetiser::split(frame.bytes, self.max_payload);
        let n = sizes.len();
        self.overhead_share = (self.overhead as f64 * n as f64) / frame.bytes.max(1) as f64;
        let tag = FrameTag {
            index: self.frame_index,
            packets: n.min(u32::MAX as usize) as u32,
            capture: now,
            key: frame.key,
            bytes: frame.bytes,
        };
        self.frame_index = self.frame_index.wrapping_add(1);
        self.last_capture = now;
        self.stats.frames += 1;
        self.stats.key_frames += frame.key as u64;
        self.stats.payload_bytes += frame.bytes as u64;
        self.target_series.push_change(now, target_bps);
        self.codec_series.push_change(now, codec);
        self.frame_series.push(now, frame.bytes as f64);
        let packets = sizes.enumerate().map(|(i, payload)| Queued {
            payload,
            tag,
            marker: i + 1 == n,
            first: i == 0,
            rtx: None,
        });
        match &mut self.pacer {
            None => send_now.extend(packets),
            Some(p) => {
                for q in packets {
                    let bytes = q.payload + self.overhead;
                    p.push(now, q, bytes);
                }
                self.stats.pacer_max_bytes = self.stats.pacer_max_bytes.max(p.queued_bytes());
                self.pacer_series.push(now, p.queued_bytes() as f64);
            }
        }
        gap
    }

    /// Appends to `out` the packets the pacer lets go at `now` for a wire
    /// target of `target_bps`, within `window` bytes if a controller's
    /// window limits them; true if the window holds the next one back.
    pub fn release(
        &mut self,
        now: SimTime,
        target_bps: f64,
        mut window: Option<u64>,
        out: &mut Vec<Queued>,
    ) -> bool {
        if let Some(p) = &mut self.pacer {
            loop {
                if let (Some(w), Some(b)) = (window, p.head_bytes()) {
                    if (b as u64) > w {
                        return true;
                    }
                    window = Some(w - b as u64);
                }
                let Some((q, waited)) = p.pop(now, target_bps) else {
                    break;
                };
                let st = &mut self.stats;
                st.pacer_wait_sum += waited;
                st.pacer_waits += 1;
                st.pacer_wait_max = st.pacer_wait_max.max(waited);
                out.push(q);
            }
        }
        false
    }

    /// The pacer's head packet, whatever its pace says (a bandwidth probe
    /// sends it): leaving counts against the pace as any packet does.
    pub fn release_head(&mut self, now: SimTime, target_bps: f64) -> Option<Queued> {
        let (q, waited) = self.pacer.as_mut()?.pop_now(now, target_bps)?;
        let st = &mut self.stats;
        st.pacer_wait_sum += waited;
        st.pacer_waits += 1;
        st.pacer_wait_max = st.pacer_wait_max.max(waited);
        Some(q)
    }

    /// Whether the pacer holds a packet.
    pub fn pacer_holds(&self) -> bool {
        self.pacer.as_ref().is_some_and(|p| !p.is_empty())
    }

    /// How long the pacer's head packet has waited.
    pub fn pacer_head_wait(&self, now: SimTime) -> Option<SimTime> {
        self.pacer.as_ref().and_then(|p| p.head_wait(now))
    }

    /// Discards every packet in the pacer.
    pub fn discard_pacer(&mut self) {
        if let Some(p) = &mut self.pacer {
            self.stats.pacer_discarded += p.clear();
        }
    }

    /// When the pacer's head packet may leave.
    pub fn next_release(&self) -> Option<SimTime> {
        self.pacer.as_ref().and_then(|p| p.next_release())
    }

    /// Builds the packet for `q` (RTP sequence number `seq`), recording
    /// it in the send history (and the retransmission history).
    pub fn packet(
        &mut self,
        now: SimTime,
        tpl: &PacketTemplate,
        q: &Queued,
        ssrc: u32,
        seq: u16,
    ) -> Packet {
        let mut p = self.wire_packet(now, tpl, q.payload, seq, false);
        p.app = RtpData::payload(self.header(q, (ssrc, seq), None));
        if let Some(r) = &mut self.rtx {
            r.on_sent(now, seq, q);
        }
        p
    }

    /// The RFC 4588 retransmission of packet `osn` (`q`), on template
    /// `rtx_tpl`: the retransmission stream's SSRC and next sequence
    /// number, the original payload after the 2-byte OSN. It takes a
    /// transport-wide number (transport-wide feedback reports it, and the
    /// controller counts it); RFC 8888 feedback, which here reports the
    /// media stream alone, does not.
    #[cold]
    #[inline(never)]
    pub fn rtx_packet(
        &mut self,
        now: SimTime,
        rtx_tpl: &PacketTemplate,
        q: &Queued,
        osn: u16,
    ) -> Option<Packet> {
        let r = self.rtx.as_mut()?;
        let (ssrc, seq) = (r.ssrc, r.seq);
        r.seq = r.seq.wrapping_add(1);
        let mut p = self.wire_packet(now, rtx_tpl, q.payload + RTX_OSN_BYTES, seq, true);
        if let Some(r) = &mut self.rtx {
            r.stats.bytes += p.size_bytes as u64;
        }
        p.app = RtpData::payload(self.header(q, (ssrc, seq), Some(osn)));
        Some(p)
    }

    /// The RTP header of `q` sent as (`ssrc`, `seq`), just numbered.
    #[inline]
    fn header(&self, q: &Queued, (ssrc, seq): (u32, u16), rtx: Option<u16>) -> RtpData {
        RtpData {
            ssrc,
            seq,
            timestamp: super::compound::rtp_ts(q.tag.capture),
            repair: None,
            stamp: None,
            frame: Some(q.tag),
            marker: q.marker,
            first: q.first,
            transport_seq: self.last_transport_seq(),
            padding: false,
            rtx,
        }
    }

    /// A padding-only packet (RTP sequence number `seq`) for a bandwidth
    /// probe, with the last frame's timestamp, recorded in the send
    /// history as media is.
    pub fn padding(&mut self, now: SimTime, tpl: &PacketTemplate, ssrc: u32, seq: u16) -> Packet {
        let mut p = self.wire_packet(now, tpl, PADDING_BYTES, seq, false);
        self.stats.padding_packets += 1;
        self.stats.padding_bytes += p.size_bytes as u64;
        p.app = RtpData::payload(RtpData {
            ssrc,
            seq,
            timestamp: super::compound::rtp_ts(self.last_capture),
            repair: None,
            stamp: None,
            frame: None,
            marker: false,
            first: false,
            transport_seq: self.last_transport_seq(),
            padding: true,
            rtx: None,
        });
        p
    }

    /// The transport-wide number the last packet took, with that format.
    #[inline]
    fn last_transport_seq(&self) -> Option<u16> {
        (self.format == Some(Format::Twcc)).then(|| (self.transport_seq - 1) as u16)
    }

    /// A packet of `payload` bytes after the headers: its transport-wide
    /// number taken, recorded in the send history and the sending rate.
    /// `rtx`: a retransmission, on a stream of its own (no media RTP
    /// number, so RFC 8888's history does not take it).
    #[inline]
    fn wire_packet(
        &mut self,
        now: SimTime,
        tpl: &PacketTemplate,
        payload: u32,
        seq: u16,
        rtx: bool,
    ) -> Packet {
        let mut p = tpl.make(seq as u64);
        p.size_bytes = payload + self.overhead;
        // Feedback is keyed by the transport-wide number or the RTP one
        // (the count of packets sent: padding takes RTP numbers too).
        let key = if self.format == Some(Format::Twcc) {
            self.transport_seq += 1;
            Some(self.transport_seq - 1)
        } else {
            (!rtx).then_some(self.stats.packets)
        };
        if let (Some(_), Some(key)) = (self.format, key) {
            self.history.on_sent(key, now, p.size_bytes);
        }
        self.stats.packets += !rtx as u64;
        // The sending rate over each 100 ms, recorded when the first packet
        // after it leaves (at the window's end; idle windows are skipped).
        if now >= self.window_start + SEND_WINDOW {
            if self.window_bytes > 0 {
                let end = self.window_start + SEND_WINDOW;
                let bps = self.window_bytes as f64 * 8.0 / SEND_WINDOW.as_secs_f64();
                self.send_series.push(end, bps);
            }
            let windows = (now - self.window_start).as_nanos() / SEND_WINDOW.as_nanos();
            self.window_start += SimTime::from_nanos(windows * SEND_WINDOW.as_nanos());
            self.window_bytes = 0;
        }
        self.window_bytes += p.size_bytes as u64;
        p
    }

    /// Per-packet feedback `msg` of `bytes` arrived at `now`: what it says
    /// of each packet it covers (valid until the next message).
    pub fn on_feedback(
        &mut self,
        now: SimTime,
        msg: &crate::wire::rtcp::RtcpPacket,
        bytes: u32,
    ) -> &[PacketResult] {
        self.stats.fb_received += 1;
        self.stats.fb_bytes += bytes as u64;
        self.results.clear();
        self.history.on_feedback_into(now, msg, &mut self.results);
        for r in &self.results {
            if r.received {
                self.stats.reported_received += 1;
            } else {
                self.stats.reported_lost += 1;
            }
        }
        &self.results
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::media::pacer::Pacer;
    use crate::app::media::spec::{ConstantSpec, SourceModel, SourceSite};
    use crate::sim::RngStreams;

    fn s(x: u64) -> SimTime {
        SimTime::from_secs(x)
    }

    fn sender(pauses: Vec<(SimTime, SimTime)>) -> FrameSender {
        let site = SourceSite {
            start_bps: 0.0,
            plan: (1000, SimTime::from_millis(10)),
        };
        let rng = RngStreams::new(1, 0).stream("t");
        FrameSender::new(ConstantSpec {}.build(&site), rng, None, 1200, 1e6, None)
            .with_pauses(pauses)
    }

    /// Pauses are [from, to): paused at `from`, not at `to`; between and
    /// after them, not paused; a pause passed stays passed.
    #[test]
    fn a_frame_time_is_paused_within_from_to() {
        let mut f = sender(vec![(s(2), s(4)), (s(6), s(7))]);
        let at = |f: &mut FrameSender, t: SimTime| f.paused_until(t);
        assert_eq!(at(&mut f, s(1)), None);
        assert_eq!(at(&mut f, s(2)), Some(s(4)));
        assert_eq!(at(&mut f, s(4) - SimTime::from_nanos(1)), Some(s(4)));
        assert_eq!(at(&mut f, s(4)), None);
        assert_eq!(at(&mut f, s(5)), None);
        assert_eq!(at(&mut f, s(6)), Some(s(7)));
        assert_eq!(at(&mut f, s(7)), None);
        assert_eq!(at(&mut f, s(100)), None);
        assert_eq!(f.next_pause, 2);
    }

    /// The time paused within [start, end): pauses clipped at both ends.
    #[test]
    fn paused_time_is_clipped_to_the_active_time() {
        let f = sender(vec![(s(2), s(4)), (s(6), s(9))]);
        assert_eq!(f.paused_within(s(0), s(10)), s(5));
        assert_eq!(f.paused_within(s(3), s(7)), s(2));
        assert_eq!(f.paused_within(s(4), s(6)), SimTime::ZERO);
        assert_eq!(sender(vec![]).paused_within(s(0), s(10)), SimTime::ZERO);
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// Constant frames of `bytes` every 10 ms, 1200-byte packets on the
    /// wire (1160 of payload after 40 of IP, UDP and RTP).
    fn frames_of(bytes: u32, pacer: Option<Pacer<Queued>>, format: Option<Format>) -> FrameSender {
        let site = SourceSite {
            start_bps: 0.0,
            plan: (bytes, ms(10)),
        };
        let rng = RngStreams::new(1, 0).stream("t");
        FrameSender::new(ConstantSpec {}.build(&site), rng, pacer, 1200, 1e6, format)
    }

    /// A 2500-byte frame is cut into 1160, 1160 and 180 bytes, the last
    /// marked, all tagged with the frame; frames are numbered; without a
    /// pacer they leave at once. The source is asked for the target less
    /// the last frame's header share (syncodecs' shaped packetiser), and
    /// the gap to its rate is summed.
    #[test]
    fn a_frame_is_cut_into_full_packets_and_one_with_the_rest() {
        let mut f = frames_of(2500, None, None);
        f.set_series(usize::MAX);
        let mut out = Vec::new();
        assert_eq!(f.capture(ms(0), 1e6, &mut out), ms(10));
        let sizes: Vec<(u32, bool, u32, u32)> = (out.iter())
            .map(|q| (q.payload, q.marker, q.tag.index, q.tag.packets))
            .collect();
        assert_eq!(
            sizes,
            [(1160, false, 0, 3), (1160, false, 0, 3), (180, true, 0, 3)]
        );
        assert!(out.iter().all(|q| q.tag.capture == ms(0) && !q.tag.key));
        out.clear();
        f.capture(ms(10), 1e6, &mut out);
        assert_eq!(out[0].tag.index, 1);
        let st = &f.stats;
        assert_eq!((st.frames, st.key_frames, st.payload_bytes), (2, 0, 5000));
        // The source's rate is 2 Mbit/s; asked for 1 Mbit/s, then for
        // 1 Mbit/s over 1 + 120 / 2500.
        let want = 1e6 + (2e6 - 1e6 / (1.0 + 120.0 / 2500.0));
        assert!((st.gap_sum_bps - want).abs() < 1e-6, "{}", st.gap_sum_bps);
        assert_eq!(f.frame_series.points(), [(ms(0), 2500.0), (ms(10), 2500.0)]);
        assert_eq!(f.target_series.points(), [(ms(0), 1e6)]);
        assert_eq!(f.codec_series.points(), [(ms(0), 2e6)]);
    }

    /// Through the pacer (2.5 x 1 Mbit/s, no burst): a frame's packets
    /// queue (their wire bytes counted), leave one per serialisation time
    /// at the pacing rate with their waits, and a send window holds the
    /// head packet back when it does not fit.
    #[test]
    fn paced_packets_leave_at_the_pacing_rate_within_the_window() {
        let mut f = frames_of(2500, Some(Pacer::new(2.5, SimTime::ZERO)), None);
        f.set_series(usize::MAX);
        let mut out = Vec::new();
        f.capture(ms(0), 1e6, &mut out);
        assert!(out.is_empty());
        assert_eq!(f.stats.pacer_max_bytes, 2620);
        assert_eq!(f.pacer_series.points(), [(ms(0), 2620.0)]);
        assert_eq!(f.pacer_head_wait(ms(2)), Some(ms(2)));
        // A window of 1199 bytes holds the 1200-byte head packet.
        assert!(f.release(ms(0), 1e6, Some(1199), &mut out));
        assert!(out.is_empty());
        // 1200 bytes at 2.5 Mbit/s: 3.84 ms each.
        assert!(!f.release(ms(0), 1e6, None, &mut out));
        assert_eq!(out.len(), 1);
        assert_eq!(f.next_release(), Some(SimTime::from_micros(3840)));
        // A window of 1200 bytes lets the second go and holds the third.
        assert!(f.release(SimTime::from_micros(3840), 1e6, Some(1200), &mut out));
        assert_eq!(out.len(), 2);
        assert!(!f.release(SimTime::from_micros(7680), 1e6, None, &mut out));
        assert_eq!(out.len(), 3);
        assert_eq!(f.next_release(), None);
        let st = &f.stats;
        assert_eq!(st.pacer_waits, 3);
        assert_eq!(st.pacer_wait_max, SimTime::from_micros(7680));
        assert_eq!(st.pacer_wait_sum, SimTime::from_micros(3840 + 7680));
        // Packets left behind are discarded and counted.
        f.capture(ms(10), 1e6, &mut out);
        f.discard_pacer();
        assert_eq!((f.stats.pacer_discarded, f.next_release()), (3, None));
    }

    /// A packet carries its payload and the 40 bytes (plus the 8-byte
    /// transport-wide extension with TWCC feedback), the frame tag and
    /// marker, the transport-wide number counting from 0; it goes into
    /// the send history under that number (RFC 8888: the packet count);
    /// the sending rate is recorded per 100 ms at the first packet after
    /// each window.
    #[test]
    fn a_packet_carries_its_numbers_and_is_remembered_for_feedback() {
        use crate::net::Dest;
        let tpl = PacketTemplate::session_udp(7, Dest::Node(1), 5004, 0);
        for (format, overhead) in [
            (Some(Format::Twcc), 48),
            (Some(Format::Rfc8888), 40),
            (None, 40),
        ] {
            let mut f = frames_of(1000, None, format);
            f.set_series(usize::MAX);
            let mut out = Vec::new();
            f.capture(ms(0), 1e6, &mut out);
            let q = &out[0];
            let p0 = f.packet(ms(0), &tpl, q, 0xabc, 65535);
            let p1 = f.packet(ms(50), &tpl, q, 0xabc, 0);
            let p2 = f.packet(ms(120), &tpl, q, 0xabc, 1);
            assert_eq!(p0.size_bytes, 1000 + overhead);
            let d = p2.app.get::<RtpData>().expect("RTP");
            assert_eq!(
                (d.ssrc, d.seq, d.marker, d.frame),
                (0xabc, 1, true, Some(q.tag))
            );
            let tseq = |p: &Packet| p.app.get::<RtpData>().and_then(|d| d.transport_seq);
            if format == Some(Format::Twcc) {
                assert_eq!(
                    [tseq(&p0), tseq(&p1), tseq(&p2)],
                    [Some(0), Some(1), Some(2)]
                );
            } else {
                assert_eq!(tseq(&p2), None);
            }
            assert_eq!(f.stats.packets, 3);
            let kept = [f.history.sent_at(0), f.history.sent_at(2)];
            assert_eq!(
                kept,
                [format.map(|_| ms(0)), format.map(|_| ms(120))],
                "{format:?}"
            );
            // Two packets in the first 100 ms, recorded at its end; one in
            // the next; none from 200 to 400 ms (skipped); one in the
            // window from 400 ms, recorded at 500 ms.
            f.packet(ms(450), &tpl, q, 0xabc, 2);
            f.packet(ms(510), &tpl, q, 0xabc, 3);
            let bps = |n: f64| n * (1000 + overhead) as f64 * 8.0 / 0.1;
            let want = [
                (ms(100), bps(2.0)),
                (ms(200), bps(1.0)),
                (ms(500), bps(1.0)),
            ];
            assert_eq!(f.send_series.points(), want);
        }
    }

    /// A transport-wide feedback message reports on packets in the send
    /// history: each result carries the packet's send time and bytes, its
    /// arrival rebuilt from the reference time and 250 us deltas; the
    /// counts add up over messages (received, lost, messages and bytes).
    #[test]
    fn feedback_is_matched_against_the_history_and_counted() {
        use crate::net::Dest;
        use crate::wire::rtcp::twcc::Twcc;
        use crate::wire::rtcp::{RtcpPacket, Status};
        let tpl = PacketTemplate::session_udp(7, Dest::Node(1), 5004, 0);
        let mut f = frames_of(1000, None, Some(Format::Twcc));
        let mut out = Vec::new();
        f.capture(ms(0), 1e6, &mut out);
        for (i, t) in [0, 5, 10, 15].into_iter().enumerate() {
            f.packet(ms(t), &tpl, &out[0], 0xabc, i as u16);
        }
        // Reference time 64 ms (one unit); deltas of 250 us units.
        let msg = |base_seq, statuses| {
            RtcpPacket::Twcc(Twcc {
                sender_ssrc: 1,
                media_ssrc: 0xabc,
                base_seq,
                reference_time: 1,
                fb_count: 0,
                statuses,
            })
        };
        let m1 = msg(
            0,
            vec![
                Status::Received(4),
                Status::NotReceived,
                Status::Received(40),
            ],
        );
        let got: Vec<(u64, SimTime, u32, bool, Option<SimTime>)> =
            (f.on_feedback(ms(100), &m1, 28).iter())
                .map(|r| (r.seq, r.sent_at, r.bytes, r.received, r.arrival))
                .collect();
        let us = SimTime::from_micros;
        assert_eq!(
            got,
            [
                (0, ms(0), 1048, true, Some(us(65_000))),
                (1, ms(5), 1048, false, None),
                (2, ms(10), 1048, true, Some(us(75_000))),
            ]
        );
        let m2 = msg(3, vec![Status::NotReceived]);
        assert_eq!(f.on_feedback(ms(120), &m2, 20).len(), 1);
        let st = &f.stats;
        assert_eq!(
            (
                st.fb_received,
                st.fb_bytes,
                st.reported_received,
                st.reported_lost
            ),
            (2, 48, 2, 2)
        );
        // A report of a packet never sent matches nothing and is not counted.
        let m3 = msg(9, vec![Status::Received(0)]);
        assert!(f.on_feedback(ms(130), &m3, 20).is_empty());
        assert_eq!((f.stats.reported_received, f.stats.fb_received), (2, 3));
    }

    /// A source that follows its target exactly and records what it was
    /// asked for; every other frame (the first included) is a key frame.
    struct Follows {
        asked: std::sync::Arc<std::sync::Mutex<Vec<f64>>>,
        bps: f64,
        frames: u32,
    }
    impl FrameSource for Follows {
        fn set_target(&mut self, _now: SimTime, bps: f64) {
            self.asked.lock().unwrap().push(bps);
            self.bps = bps;
        }
        fn rate_bps(&self) -> f64 {
            self.bps
        }
        fn next_frame(
            &mut self,
            _now: SimTime,
            _rng: &mut SimRng,
        ) -> (crate::app::media::Frame, SimTime) {
            self.frames += 1;
            let key = self.frames % 2 == 1;
            (crate::app::media::Frame { bytes: 2500, key }, ms(10))
        }
    }

    /// The source is asked for the target less the headers' share of the
    /// last frame (3 packets of 40 header bytes for 2500 payload bytes),
    /// and follows it: no gap. Key frames are counted.
    #[test]
    fn the_source_is_asked_for_the_target_less_the_headers_share() {
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let source = Follows {
            asked: asked.clone(),
            bps: 0.0,
            frames: 0,
        };
        let rng = RngStreams::new(1, 0).stream("t");
        let mut f = FrameSender::new(Box::new(source), rng, None, 1200, 1e6, None);
        let mut out = Vec::new();
        for t in [0, 10, 20] {
            f.capture(ms(t), 1e6, &mut out);
        }
        let share = 1.0 + 120.0 / 2500.0;
        assert_eq!(*asked.lock().unwrap(), [1e6, 1e6 / share, 1e6 / share]);
        assert_eq!(f.stats.gap_sum_bps, 0.0);
        assert_eq!((f.stats.frames, f.stats.key_frames), (3, 2));
        assert!(out
            .iter()
            .map(|q| q.tag.key)
            .eq([true, true, true, false, false, false, true, true, true]));
    }

    /// A send window lets through as many due packets as fit in it: 2400
    /// bytes, two of 1200, and holds the next.
    #[test]
    fn a_send_window_passes_the_packets_that_fit() {
        // A 20 ms burst: the four packets of a frame are all due at once.
        let mut f = frames_of(3500, Some(Pacer::new(2.5, ms(20))), None);
        let mut out = Vec::new();
        f.capture(ms(0), 1e6, &mut out);
        assert!(f.release(ms(0), 1e6, Some(2400), &mut out));
        assert_eq!(out.len(), 2);
        assert!(!f.release(ms(0), 1e6, None, &mut out));
        assert_eq!(out.len(), 4);
    }

    /// No sending rate is recorded for a window in which nothing was sent:
    /// the first packet at 250 ms starts counting, and its window's rate
    /// is recorded at 300 ms.
    #[test]
    fn no_rate_is_recorded_before_the_first_packet() {
        use crate::net::Dest;
        let tpl = PacketTemplate::session_udp(7, Dest::Node(1), 5004, 0);
        let mut f = frames_of(1000, None, None);
        f.set_series(usize::MAX);
        let mut out = Vec::new();
        f.capture(ms(0), 1e6, &mut out);
        f.packet(ms(250), &tpl, &out[0], 1, 0);
        f.packet(ms(320), &tpl, &out[0], 1, 1);
        assert_eq!(f.send_series.points(), [(ms(300), 1040.0 * 8.0 / 0.1)]);
    }

    /// Series keep at most the rows they are given.
    #[test]
    fn series_are_bounded_by_their_rows() {
        let mut f = frames_of(1000, None, None);
        f.set_series(1);
        let mut out = Vec::new();
        for t in [0, 10, 20] {
            f.capture(ms(t), 1e6 + t as f64, &mut out);
        }
        assert_eq!(f.frame_series.points(), [(ms(0), 1000.0)]);
        assert_eq!(f.target_series.points(), [(ms(0), 1e6)]);
    }

    /// Retransmissions are held to the wire target, each counted at its
    /// wire bytes (payload, OSN and headers): two at once, then a third
    /// 250 ms later goes when the two over 250 ms plus its own over
    /// 500 ms (80 bit/s per byte) are within the target, and not when the
    /// target is 1 bit/s less.
    #[test]
    fn retransmissions_are_held_to_the_target_in_wire_bytes() {
        use crate::net::Dest;
        let tpl = PacketTemplate::session_udp(7, Dest::Node(1), 5004, 0);
        for (slack, sent) in [(0.0, 3), (-1.0, 2)] {
            let mut f = frames_of(5000, None, None).with_retransmission(77);
            let mut out = Vec::new();
            f.capture(ms(0), 1e6, &mut out);
            assert!(out[0].payload == out[2].payload && out[1].payload == out[2].payload);
            for (i, q) in out.iter().enumerate() {
                f.packet(ms(0), &tpl, q, 5, i as u16);
            }
            let wire = (out[0].payload + RTX_OSN_BYTES + f.overhead) as f64;
            let target = 80.0 * wire + slack;
            let mut now_q = Vec::new();
            f.on_nack(ms(0), &[0, 1], (None, target), &mut now_q);
            f.on_nack(ms(250), &[2], (None, target), &mut now_q);
            assert_eq!(now_q.len(), sent);
            let st = f.rtx.as_ref().expect("on").stats;
            assert_eq!(st.rate_limited, 3 - sent as u64);
        }
    }

    /// With retransmission: the packets sent are kept; a NACK queues their
    /// retransmissions ahead of the media in the pacer, in the order named.
    /// Each goes on the retransmission stream (its own SSRC and numbers,
    /// the OSN in the payload: 2 bytes more on the wire) with a
    /// transport-wide number, and is not counted among the media's RTP
    /// packets. Without a pacer they go at once.
    #[test]
    fn a_nack_queues_retransmissions_ahead_of_the_media() {
        use crate::net::Dest;
        let tpl = PacketTemplate::session_udp(7, Dest::Node(1), 5004, 0);
        let pacer = Pacer::new(2.5, SimTime::ZERO);
        let mut f = frames_of(2500, Some(pacer), Some(Format::Twcc)).with_retransmission(77);
        let mut out = Vec::new();
        f.capture(ms(0), 1e6, &mut out);
        for t in [0, 4, 8] {
            f.release(ms(t), 1e6, None, &mut out);
        }
        assert_eq!(out.len(), 3);
        for (i, q) in out.iter().enumerate() {
            f.packet(ms(100), &tpl, q, 5, i as u16);
        }
        f.capture(ms(110), 1e6, &mut Vec::new());
        let mut now_q = Vec::new();
        f.on_nack(ms(120), &[2, 0, 9], (None, 1e6), &mut now_q);
        assert!(now_q.is_empty(), "through the pacer");
        let mut go = Vec::new();
        for t in 0..5 {
            f.release(ms(200 + 5 * t), 1e6, None, &mut go);
        }
        let rtx: Vec<Option<u16>> = go.iter().map(|q| q.rtx).collect();
        assert_eq!(rtx, [Some(2), Some(0), None, None, None]);
        // 2500 bytes in 1152, 1152 and 196 (the extension takes 8 bytes).
        assert_eq!((go[0].payload, go[1].payload), (196, 1152));
        let p = f.rtx_packet(ms(200), &tpl, &go[0], 2).expect("kept");
        assert_eq!(p.size_bytes, 196 + RTX_OSN_BYTES + f.overhead);
        let d = p.app.get::<RtpData>().expect("RTP");
        assert_eq!(
            (d.ssrc, d.seq, d.rtx, d.transport_seq),
            (77, 0, Some(2), Some(3))
        );
        assert_eq!(f.stats.packets, 3);
        let st = f.rtx.as_ref().expect("on").stats;
        assert_eq!(
            (st.packets, st.not_kept, st.bytes),
            (2, 1, p.size_bytes as u64)
        );
        // Without a pacer, the retransmission goes at once.
        let mut f = frames_of(2500, None, None).with_retransmission(77);
        let mut out = Vec::new();
        f.capture(ms(0), 1e6, &mut out);
        f.packet(ms(0), &tpl, &out[0], 5, 0);
        let mut now_q = Vec::new();
        f.on_nack(ms(50), &[0], (None, 1e6), &mut now_q);
        assert_eq!(now_q.len(), 1);
        assert_eq!(now_q[0].rtx, Some(0));
        // Without retransmission, a NACK does nothing.
        let mut f = frames_of(2500, None, None);
        f.capture(ms(0), 1e6, &mut out);
        f.on_nack(ms(50), &[0], (None, 1e6), &mut now_q);
        assert_eq!(now_q.len(), 1);
    }
}
