//! An RTP session member: sends media (optionally), keeps reception
//! statistics per source, detects losses from sequence gaps, and sends
//! RTCP compound packets when its scheduler (AVP or AVPF) says so, with
//! report blocks, SDES CNAME and Generic NACK feedback. Measures its RTCP
//! traffic, its feedback (wanted, sent, suppressed, discarded, waiting
//! time) and, as a media sender, the delay until each loss is reported.

use super::compound::{compound_bytes, merge_nacks, rtp_ts};
use super::frames::{FrameSender, Queued};
use super::held::{FastRx, Held};
use super::payload::{Nack, Pli, RtcpCompound, RtcpReport, RtpData};
use super::sent::SentRecord;
use super::viewer::{FeedbackOut, Viewer};
use super::xr::XrEnd;
use crate::app::media::nack::Late;
use crate::app::paced::FeedbackEnd;
use crate::app::{Action, App, AppStats, PacketTemplate};
use crate::measure::RunningMean;
use crate::net::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::net::Payload;
use crate::net::{FlowId, Packet};
use crate::proto::cc::{Departure, ProbeSend, RateController};
use crate::proto::feedback::{extend16, FeedbackMessage};
use crate::proto::rtp::{RtcpScheduler, SourceStats, Transmit};
use crate::sim::{SimRng, SimTime};
use std::borrow::Cow;
// FxHash: keys are SSRCs and sequence numbers, hashed for every packet.
use rustc_hash::FxHashMap as HashMap;

/// RTP media clock (90 kHz, as for video).
pub const RTP_CLOCK_HZ: u64 = 90_000;
const TOKEN_MEDIA: u64 = 1;
const TOKEN_RTCP: u64 = 2;
const TOKEN_TIMEOUTS: u64 = 3;
/// The media controller's own timer (sender), and the feedback half's
/// (receiver).
const TOKEN_CC: u64 = 4;
pub const TOKEN_FB: u64 = 5;
/// Frame-based media: the next frame, and the pacer.
const TOKEN_FRAME: u64 = 6;
const TOKEN_PACE: u64 = 7;
/// The per-packet feedback a receiver returns.
pub const TOKEN_PPFB: u64 = 8;
/// The receiver's retransmission requests (`nack`).
const TOKEN_NACK: u64 = 9;
/// The receiver's wait for a decodable frame (`key_frame_wait_ms`).
const TOKEN_KEY_WAIT: u64 = 10;
/// Most sequence numbers one NACK message names (at most 250 entries:
/// the message stays within 1012 bytes).
const NACK_SEQS_MAX: usize = 250;

/// `x` per second of `active_s` (NaN when the member was never active).
fn per_s(x: f64, active_s: f64) -> f64 {
    if active_s > 0.0 {
        x / active_s
    } else {
        f64::NAN
    }
}

/// A stamped media packet for the receiver's half of the sender's
/// controller: out of line, to keep a member's per-packet code compact.
#[inline(never)]
fn stamped_data(
    fb: &mut FeedbackEnd,
    now: SimTime,
    stamp: &crate::proto::cc::Stamp,
    bytes: u32,
    out: &mut Vec<Action>,
) {
    fb.on_data(now, stamp, bytes, out);
}

/// A media sender's rate controller (`cc`): one media packet leaves
/// whenever the controller allows (the media follows its rate exactly).
pub struct PacedMedia {
    pub cc: Box<dyn RateController>,
    next: SimTime,
    media_timer: Option<SimTime>,
    cc_timer: Option<SimTime>,
}

impl PacedMedia {
    pub fn new(cc: Box<dyn RateController>) -> Self {
        PacedMedia {
            cc,
            next: SimTime::ZERO,
            media_timer: None,
            cc_timer: None,
        }
    }

    fn arm(&mut self, stop: SimTime, out: &mut Vec<Action>) {
        if self.next < stop {
            crate::app::arm_timer(&mut self.media_timer, self.next, TOKEN_MEDIA, out);
        }
        if let Some(at) = self.cc.deadline() {
            crate::app::arm_timer(&mut self.cc_timer, at, TOKEN_CC, out);
        }
    }
}

pub struct MediaConfig {
    pub template: PacketTemplate,
    /// The retransmission stream's (RFC 4588), when the receiver asks for
    /// lost packets again.
    pub rtx_template: Option<PacketTemplate>,
    /// Time between frames (one packet per frame unless NEWPRED).
    pub interval: SimTime,
}

/// NEWPRED: each frame is cut into `segments` RTP packets; the receiver
/// sends, per frame with lost segments, one application-layer feedback
/// message with a 4-byte NACK per lost segment; the sender answers each
/// with a repair (the segment coded from an acknowledged reference).
#[derive(Clone, Copy, Debug)]
pub struct NewpredConfig {
    pub segments: u16,
}

#[derive(Default)]
struct Source {
    stats: SourceStats,
    next_seq: Option<u16>,
    /// (sender's SR time, our arrival time) of its last SR.
    last_sr: Option<(SimTime, SimTime)>,
    sends_media: bool,
}

/// `repr(C)`: the fields in the order written, those a media packet
/// touches (sent or received) first, so that they share a few cache lines.
#[repr(C)]
pub struct RtpMember {
    /// Media packets held for processing in a batch (held.rs).
    fast: FastRx,
    ssrc: u32,
    seq: u16,
    packets_sent: u32,
    octets_sent: u32,
    /// A loss was seen since RTCP's timer was last armed.
    loss_seen: bool,
    stop: SimTime,
    pace_timer: Option<SimTime>,
    /// The media's rate controller (a sender with `cc`).
    paced: Option<PacedMedia>,
    media: Option<MediaConfig>,
    /// The recent packets' send times and loss reports (sent.rs).
    sent: SentRecord,
    /// Frame-based media (`source`), instead of one packet per interval.
    frames: Option<FrameSender>,
    /// The playout buffer of the stream this member receives (`playout`).
    viewer: Option<Viewer>,
    /// Per-packet feedback this member returns about the stream it receives.
    pp_feedback: Option<FeedbackOut>,
    sources: HashMap<u32, Source>,
    sched: RtcpScheduler,
    rng: SimRng,
    rtcp_timer_at: Option<SimTime>,
    /// The feedback half of the peer's controller (its receiver).
    feedback: Option<FeedbackEnd>,
    newpred: Option<NewpredConfig>,
    /// RFC 3611 RRTR/DLRR: the answers it owes, and its own RRTRs.
    xr: XrEnd,
    cname: String,
    sends_sr: bool,
    rtcp_tpl: PacketTemplate,
    session_bw_bps: f64,
    start: SimTime,
    rtt_s: Option<f64>,
    rtcp_bytes: u64,
    rtcp_packets: u64,
    data_flow: FlowId,
    /// When the member leaves the session with a BYE (`stop_s` before the
    /// end of the run), if it does.
    bye_at: Option<SimTime>,
    byes_sent: bool,
    /// Receiver: when each lost segment was detected.
    detected: HashMap<u16, SimTime>,
    recovery_times: RunningMean,
    waiting_times: RunningMean,
    repairs_sent: u64,
    series_rows: usize,
}

impl RtpMember {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ssrc: u32,
        cname: String,
        media: Option<MediaConfig>,
        sends_sr: bool,
        rtcp_tpl: PacketTemplate,
        sched: RtcpScheduler,
        rng: SimRng,
        start: SimTime,
        stop: SimTime,
        session_bw_bps: f64,
    ) -> Self {
        let data_flow = rtcp_tpl.flow;
        RtpMember {
            fast: FastRx::default(),
            ssrc,
            cname,
            media,
            sends_sr,
            rtcp_tpl,
            sched,
            rng,
            stop,
            session_bw_bps,
            start,
            seq: 0,
            packets_sent: 0,
            octets_sent: 0,
            sources: HashMap::default(),
            sent: SentRecord::default(),
            rtt_s: None,
            rtcp_bytes: 0,
            rtcp_packets: 0,
            rtcp_timer_at: None,
            data_flow,
            bye_at: None,
            byes_sent: false,
            newpred: None,
            xr: XrEnd::default(),
            detected: HashMap::default(),
            recovery_times: RunningMean::default(),
            waiting_times: RunningMean::default(),
            repairs_sent: 0,
            paced: None,
            feedback: None,
            series_rows: usize::MAX,
            frames: None,
            pace_timer: None,
            loss_seen: false,
            viewer: None,
            pp_feedback: None,
        }
    }

    /// Frame-based media, a playout buffer, per-packet feedback to return.
    pub fn with_frames(
        mut self,
        frames: Option<FrameSender>,
        viewer: Option<Viewer>,
        pp_feedback: Option<FeedbackOut>,
    ) -> Self {
        self.frames = frames;
        self.fast.never = viewer
            .as_ref()
            .is_some_and(|v| v.playout.asks_for_key_frames());
        self.viewer = viewer;
        if let Some(fb) = &pp_feedback {
            self.fast.fb_every = Some(fb.interval);
            self.fast.marker_acts = fb.per_frame;
            self.fast.fb_twcc = fb.log.format() == crate::proto::feedback::Format::Twcc;
        }
        self.pp_feedback = pp_feedback;
        self
    }

    /// The wire rate frames aim at: the controller's target, or the
    /// media's fixed share of the session.
    fn frame_target(&self) -> f64 {
        match (&self.paced, &self.frames) {
            (Some(pm), _) => pm.cc.target_bps(),
            (None, Some(f)) => f.fixed_bps,
            (None, None) => 0.0,
        }
    }

    /// A frame is due: capture it, send or queue its packets, and ask for
    /// the next.
    fn frame_due(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if now >= self.stop {
            return;
        }
        let target = self.frame_target();
        let Some(fs) = self.frames.as_mut() else {
            return;
        };
        if let Some(until) = fs.paused_until(now) {
            // Paused: no frame until the pause ends (the pacer's own timer
            // sends what it still holds).
            if until < self.stop {
                out.push(Action::Timer {
                    at: until,
                    token: TOKEN_FRAME,
                });
            }
            return;
        }
        if let (Some(wait), Some(pm)) = (fs.pacer_head_wait(now), self.paced.as_mut()) {
            if pm.cc.discard_send_queue(now, wait) {
                fs.discard_pacer();
            }
        }
        let mut now_packets = std::mem::take(&mut fs.released);
        let gap = fs.capture(now, target, &mut now_packets);
        for q in &now_packets {
            self.emit_frame_packet(now, q, out);
        }
        now_packets.clear();
        if let Some(fs) = self.frames.as_mut() {
            fs.released = now_packets;
        }
        if now + gap < self.stop {
            out.push(Action::Timer {
                at: now + gap,
                token: TOKEN_FRAME,
            });
        }
        self.pace(now, out);
    }

    /// The rate the pacer's factor multiplies: the controller's pacing
    /// rate (its target unless it says otherwise), else the fixed rate.
    fn frame_pacing(&self) -> f64 {
        match &self.paced {
            Some(pm) => pm.cc.pacing_bps(),
            None => self.frame_target(),
        }
    }

    /// Sends what the pacer (and a window-based controller's window) lets
    /// go now, and wakes up for the rest: at the pacer's next time, or,
    /// when the window holds the head packet back, at the feedback or the
    /// controller's timer that opens it.
    fn pace(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.probe_step(now, out) {
            return;
        }
        let target = self.frame_pacing();
        let window = self.paced.as_ref().and_then(|pm| pm.cc.send_window());
        let Some(fs) = self.frames.as_mut() else {
            return;
        };
        let mut go = std::mem::take(&mut fs.released);
        let held = fs.release(now, target, window, &mut go);
        let next = if held { None } else { fs.next_release() };
        for q in &go {
            self.emit_frame_packet(now, q, out);
        }
        go.clear();
        if let Some(fs) = self.frames.as_mut() {
            fs.released = go;
        }
        if let Some(at) = next {
            crate::app::arm_timer(&mut self.pace_timer, at, TOKEN_PACE, out);
        }
        if window.is_some() {
            self.arm_cc_timer(out);
        }
    }

    /// Sends what a bandwidth probe the controller has under way (GCC's
    /// start-up probes) lets go now, at the probe's rate: the pacer's head
    /// packets, padding when it holds none. Returns whether the probe
    /// holds the pacer (its own pace resumes once the probe is sent); a
    /// probe starts only once media is queued, as libwebrtc's prober waits.
    #[inline]
    fn probe_step(&mut self, now: SimTime, out: &mut Vec<Action>) -> bool {
        if self.paced.as_ref().and_then(|pm| pm.cc.probe()).is_none() {
            return false;
        }
        self.probe_send(now, out)
    }

    #[cold]
    #[inline(never)]
    fn probe_send(&mut self, now: SimTime, out: &mut Vec<Action>) -> bool {
        let target = self.frame_pacing();
        loop {
            let Some(next) = self.paced.as_ref().and_then(|pm| pm.cc.probe()) else {
                return false;
            };
            let holds = self.frames.as_ref().is_some_and(|fs| fs.pacer_holds());
            match next {
                ProbeSend::WithMedia if !holds => return false,
                ProbeSend::At(at) if at > now => {
                    if at < self.stop {
                        crate::app::arm_timer(&mut self.pace_timer, at, TOKEN_PACE, out);
                    }
                    return true;
                }
                _ if now >= self.stop => return true,
                _ => {}
            }
            let head = match self.frames.as_mut() {
                Some(fs) if holds => fs.release_head(now, target),
                _ => None,
            };
            match head {
                Some(q) => self.emit_frame_packet(now, &q, out),
                None => self.emit_padding(now, out),
            }
        }
    }

    /// Arms the frame media controller's own timer, if it wants one.
    fn arm_cc_timer(&mut self, out: &mut Vec<Action>) {
        if let Some(pm) = self.paced.as_mut() {
            if let Some(at) = pm.cc.deadline().filter(|&at| at < self.stop) {
                crate::app::arm_timer(&mut pm.cc_timer, at, TOKEN_CC, out);
            }
        }
    }

    fn emit_frame_packet(&mut self, now: SimTime, q: &Queued, out: &mut Vec<Action>) {
        if let Some(osn) = q.rtx {
            self.emit_rtx(now, q, osn, out);
            return;
        }
        let (Some(fs), Some(m)) = (self.frames.as_mut(), &self.media) else {
            return;
        };
        let p = fs.packet(now, &m.template, q, self.ssrc, self.seq);
        self.send_frame_media(now, p, q.payload, out);
    }

    /// A retransmission (RFC 4588) of media packet `osn`: on its own
    /// stream, so neither the media's sequence numbers nor its RTCP
    /// counts move; the controller counts it as any packet it sends.
    #[cold]
    #[inline(never)]
    fn emit_rtx(&mut self, now: SimTime, q: &Queued, osn: u16, out: &mut Vec<Action>) {
        let tpl = self.media.as_ref().and_then(|m| m.rtx_template.as_ref());
        let (Some(fs), Some(tpl)) = (self.frames.as_mut(), tpl) else {
            return;
        };
        let Some(mut p) = fs.rtx_packet(now, tpl, q, osn) else {
            return;
        };
        self.stamp(now, &mut p);
        out.push(Action::Send(p));
    }

    /// The controller's stamp on a packet leaving now.
    #[inline]
    fn stamp(&mut self, now: SimTime, p: &mut Packet) {
        if let Some(pm) = self.paced.as_mut() {
            let d = Departure {
                bytes: p.size_bytes,
                due: now,
                next_same_size: false,
            };
            let (stamp, next) = pm.cc.on_send(now, d);
            pm.next = next;
            if let Some(data) = p.app.get_mut::<RtpData>() {
                data.stamp = Some(stamp);
            }
        }
    }

    /// A padding-only packet for a bandwidth probe.
    #[cold]
    fn emit_padding(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let (Some(fs), Some(m)) = (self.frames.as_mut(), &self.media) else {
            return;
        };
        let p = fs.padding(now, &m.template, self.ssrc, self.seq);
        // RFC 3550 6.4.1: the sender's octet count leaves padding out.
        self.send_frame_media(now, p, 0, out);
    }

    /// Stamps a frame media packet (or padding) of `payload` octets and
    /// sends it.
    #[inline]
    fn send_frame_media(
        &mut self,
        now: SimTime,
        mut p: Packet,
        payload: u32,
        out: &mut Vec<Action>,
    ) {
        self.stamp(now, &mut p);
        self.sent.on_sent(now);
        self.octets_sent = self.octets_sent.wrapping_add(payload);
        self.packets_sent = self.packets_sent.wrapping_add(1);
        self.seq = self.seq.wrapping_add(1);
        self.sched.timing.on_own_rtp(now);
        out.push(Action::Send(p));
    }

    /// The `media` table's sender columns.
    fn sender_media_stats(&self, fs: &FrameSender, end: SimTime) -> AppStats {
        let st = &fs.stats;
        let until = end.min(self.stop);
        let paused = fs.paused_within(self.start, until);
        let active = until
            .saturating_sub(self.start)
            .saturating_sub(paused)
            .as_secs_f64();
        let pacer_mean_ms = if st.pacer_waits > 0 {
            st.pacer_wait_sum.as_secs_f64() * 1e3 / st.pacer_waits as f64
        } else {
            f64::NAN
        };
        let frames = st.frames.max(1) as f64;
        let rtx = fs.rtx.as_ref().map(|r| r.stats).unwrap_or_default();
        AppStats {
            table: "media",
            flow: self
                .media
                .as_ref()
                .map_or(self.data_flow, |m| m.template.flow),
            values: vec![
                ("frames_sent", st.frames as f64),
                ("key_frames", st.key_frames as f64),
                ("pli_received", st.pli_received as f64),
                ("key_frames_on_request", st.key_frames_on_request as f64),
                ("nack_received", rtx.nacks as f64),
                ("rtx_packets", rtx.packets as f64),
                ("rtx_bytes", rtx.bytes as f64),
                (
                    "rtx_refused",
                    (rtx.not_kept + rtx.too_soon + rtx.rate_limited) as f64,
                ),
                ("rtx_rate_limited", rtx.rate_limited as f64),
                ("media_payload_bytes", st.payload_bytes as f64),
                (
                    "media_rate_bps",
                    per_s(st.payload_bytes as f64 * 8.0, active),
                ),
                ("target_gap_mean_bps", st.gap_sum_bps / frames),
                ("paused_s", paused.as_secs_f64()),
                ("pacer_delay_mean_ms", pacer_mean_ms),
                ("pacer_delay_max_ms", st.pacer_wait_max.as_secs_f64() * 1e3),
                ("pacer_queue_max_bytes", st.pacer_max_bytes as f64),
                ("pacer_discarded_packets", st.pacer_discarded as f64),
                ("padding_packets", st.padding_packets as f64),
                ("padding_bytes", st.padding_bytes as f64),
                ("feedback_received", st.fb_received as f64),
                ("feedback_bytes_received", st.fb_bytes as f64),
                ("packets_reported_received", st.reported_received as f64),
                ("packets_reported_lost", st.reported_lost as f64),
                ("packets_reported_recovered", fs.history.recovered as f64),
            ],
            series: vec![
                ("target_bps", fs.target_series.points().to_vec()),
                ("send_bps", fs.send_series.points().to_vec()),
                ("codec_bps", fs.codec_series.points().to_vec()),
                ("frame_bytes", fs.frame_series.points().to_vec()),
                ("pacer_queue_bytes", fs.pacer_series.points().to_vec()),
            ],
        }
    }

    /// Paces the media by a rate controller, and returns the feedback its
    /// receiving half makes at the peer.
    pub fn with_cc(mut self, paced: Option<PacedMedia>, feedback: Option<FeedbackEnd>) -> Self {
        self.paced = paced;
        self.feedback = feedback;
        self
    }

    /// The member leaves at its stop with a BYE (RFC 3550 6.3.7), sent at
    /// once: the BYE reconsideration a member of a session of 50 or more
    /// applies first is left out.
    pub fn with_bye(mut self) -> Self {
        self.bye_at = Some(self.stop);
        self
    }

    /// Sends RFC 3611 RRTR blocks in its receiver reports and takes its
    /// RTT from the DLRR answers (`xr_rtt`).
    pub fn with_xr_rtt(mut self) -> Self {
        self.xr.asks = true;
        self
    }

    pub fn with_newpred(mut self, cfg: NewpredConfig) -> Self {
        self.newpred = Some(cfg);
        self
    }

    fn arm_rtcp(&mut self, out: &mut Vec<Action>) {
        let d = self.sched.wake_at(self.stop, &self.rng);
        if d < self.stop && self.rtcp_timer_at.is_none_or(|t| d < t) {
            self.rtcp_timer_at = Some(d);
            out.push(Action::Timer {
                at: d,
                token: TOKEN_RTCP,
            });
        }
    }

    /// Report blocks about every valid RTP source and every member that
    /// sends SRs without media (the study's "RTP senders that send no
    /// media"): a zero block still carries LSR/DLSR, so they learn an RTT.
    fn report_blocks(&mut self, now: SimTime) -> Vec<RtcpReport> {
        let mut ssrcs: Vec<u32> = self
            .sources
            .iter()
            .filter(|(_, s)| s.stats.is_valid() || s.last_sr.is_some())
            .map(|(k, _)| *k)
            .collect();
        ssrcs.sort_unstable();
        ssrcs
            .into_iter()
            .take(31)
            .map(|ssrc| {
                let s = self.sources.get_mut(&ssrc).expect("listed");
                let (fraction_lost, cumulative_lost, ext_highest_seq, jitter) =
                    if s.stats.is_valid() {
                        (
                            s.stats.take_fraction_lost(),
                            s.stats.cumulative_lost(),
                            s.stats.extended_max(),
                            s.stats.jitter(),
                        )
                    } else {
                        (0, 0, 0, 0)
                    };
                RtcpReport {
                    ssrc,
                    fraction_lost,
                    cumulative_lost,
                    ext_highest_seq,
                    jitter,
                    lsr: s.last_sr.map(|x| x.0),
                    dlsr: s.last_sr.map_or(SimTime::ZERO, |x| now - x.1),
                }
            })
            .collect()
    }

    /// Sends the compound the scheduler asked for.
    fn send_rtcp(&mut self, now: SimTime, tx: Transmit, bye: bool, out: &mut Vec<Action>) {
        let (fb, early) = match &tx {
            Transmit::Early(fb) => (fb.clone(), true),
            Transmit::Regular(fb) => (fb.clone(), false),
        };
        let sender = (self.sched.timing.we_sent() || self.sends_sr)
            .then_some((self.packets_sent, self.octets_sent));
        // RFC 4585 3.1: an Early packet is a minimal compound (no report
        // blocks needed); a Regular one carries every report block.
        let (reports, (rrtr, dlrr)) = if early {
            (Vec::new(), (false, Vec::new()))
        } else {
            (
                self.report_blocks(now),
                self.xr.for_report(now, sender.is_some()),
            )
        };
        let nacks = merge_nacks(&fb);
        let c = RtcpCompound {
            ssrc: self.ssrc,
            sender,
            reports,
            nacks,
            rrtr,
            dlrr,
            app_layer_fb: self.newpred.is_some(),
            bye,
            early,
            cname: self.cname.clone(),
        };
        let payload = compound_bytes(&c) as u32;
        let size = self.send_rtcp_packet(Payload::new(c), payload, out);
        self.sched.on_sent(now, &tx, size as f64, &mut self.rng);
    }

    /// Sends an RTCP packet of `rtcp_bytes` (a compound, or a PLI or NACK
    /// alone) on the member's RTCP flow, counted with its RTCP; returns
    /// its size on the wire.
    fn send_rtcp_packet(&mut self, app: Payload, rtcp_bytes: u32, out: &mut Vec<Action>) -> u32 {
        let size = IPV4_HEADER_BYTES + UDP_HEADER_BYTES + rtcp_bytes;
        let mut p = self.rtcp_tpl.make(self.rtcp_packets);
        p.size_bytes = size;
        p.app = app;
        out.push(Action::Send(p));
        self.rtcp_packets += 1;
        self.rtcp_bytes += size as u64;
        size
    }

    fn send_media(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let Some(m) = &self.media else { return };
        if now >= self.stop {
            return;
        }
        if let Some(pm) = self.paced.as_mut().filter(|pm| now < pm.next) {
            // Woken early (the controller moved the next packet later).
            pm.arm(self.stop, out);
            return;
        }
        let segments = self.newpred.map_or(1, |n| n.segments);
        let ts = rtp_ts(now);
        let (tpl, interval) = (m.template.clone(), m.interval);
        for _ in 0..segments {
            let mut p = tpl.make(self.seq as u64);
            let stamp = self.paced.as_mut().map(|pm| {
                let d = Departure {
                    bytes: p.size_bytes,
                    due: pm.next,
                    next_same_size: true,
                };
                let (stamp, next) = pm.cc.on_send(now, d);
                pm.next = next;
                stamp
            });
            p.app = RtpData::payload(RtpData {
                ssrc: self.ssrc,
                seq: self.seq,
                timestamp: ts,
                repair: None,
                stamp,
                frame: None,
                marker: false,
                first: false,
                transport_seq: None,
                padding: false,
                rtx: None,
            });
            self.sent.on_sent(now);
            self.octets_sent = self.octets_sent.wrapping_add(p.payload_bytes() - 12);
            self.packets_sent = self.packets_sent.wrapping_add(1);
            self.seq = self.seq.wrapping_add(1);
            out.push(Action::Send(p));
        }
        self.sched.timing.on_own_rtp(now);
        match &mut self.paced {
            Some(pm) => pm.arm(self.stop, out),
            None => out.push(Action::Timer {
                at: now + interval,
                token: TOKEN_MEDIA,
            }),
        }
    }

    /// NEWPRED sender: answer each reported segment with a repair.
    fn send_repairs(&mut self, seqs: &[u16], fb_sent_at: SimTime, out: &mut Vec<Action>) {
        let Some(m) = &self.media else { return };
        let tpl = m.template.clone();
        for &s in seqs {
            let mut p = tpl.make(s as u64);
            p.app = RtpData::payload(RtpData {
                ssrc: self.ssrc,
                seq: s,
                timestamp: 0,
                repair: Some(fb_sent_at),
                stamp: None,
                frame: None,
                marker: false,
                first: false,
                transport_seq: None,
                padding: false,
                rtx: None,
            });
            self.repairs_sent += 1;
            out.push(Action::Send(p));
        }
    }

    fn on_rtp(
        &mut self,
        now: SimTime,
        (ssrc, seq, ts): (u32, u16, u32),
        repair: Option<SimTime>,
        out: &mut Vec<Action>,
    ) {
        if let Some(fb_sent) = repair {
            // A NEWPRED repair: recovery time from detection; waiting time is
            // that minus the round trip (feedback transit + repair transit).
            if let Some(t_det) = self.detected.remove(&seq) {
                let recovery = (now - t_det).as_secs_f64();
                self.recovery_times.add(recovery);
                self.waiting_times
                    .add(recovery - (now - fb_sent).as_secs_f64());
            }
            return;
        }
        self.sched.timing.on_rtp(ssrc, now);
        let src = self.sources.entry(ssrc).or_default();
        src.sends_media = true;
        src.stats.update_seq(seq);
        src.stats
            .update_jitter(super::compound::rtp_clock(now) as i64, ts);
        // A gap in sequence numbers is one loss event (one Generic NACK).
        let mut lost = None;
        if let Some(next) = src.next_seq {
            let gap = seq.wrapping_sub(next);
            if gap > 0 && gap < 3000 {
                // The first lost packet's number, extended past wraps.
                let ext = extend16(seq, src.stats.extended_max() as u64);
                lost = Some((next, gap, ext.saturating_sub(gap as u64)));
            }
            if gap < 3000 {
                src.next_seq = Some(seq.wrapping_add(1));
            }
        } else {
            src.next_seq = Some(seq.wrapping_add(1));
        }
        if let Some((first, n, ext_first)) = lost {
            self.on_gap(now, ssrc, (first, n, ext_first), out);
        }
    }

    /// `n` packets from `first` (extended: `ext_first`) on were lost:
    /// feedback about them (rare beside packets in order, so out of line).
    #[cold]
    #[inline(never)]
    fn on_gap(
        &mut self,
        now: SimTime,
        ssrc: u32,
        (first, n, ext_first): (u16, u16, u64),
        out: &mut Vec<Action>,
    ) {
        let played = self.viewer.as_mut().filter(|v| v.media_ssrc == ssrc);
        if let Some(r) = played.and_then(|v| v.nack.as_mut()) {
            // The played stream's losses are asked for again at once, in
            // a NACK of their own (nack.rs), not through RTCP's schedule;
            // a gap that overflows the list asks for a key frame instead.
            let mut ask = Vec::new();
            let full = r.on_gap(now, ext_first, n as u64, &mut ask);
            self.send_nack(&ask, out);
            if let (true, Some(v)) = (full, &mut self.viewer) {
                v.playout.on_nack_list_full(now);
                self.after_playout(out);
            }
            return;
        }
        self.loss_seen = true;
        let lost: Vec<u16> = (0..n).map(|i| first.wrapping_add(i)).collect();
        match self.newpred {
            None => self.sched.on_loss(now, ssrc, lost, &mut self.rng),
            Some(np) => {
                // One feedback message per frame with lost segments. The
                // sender numbers a frame's segments consecutively from 0,
                // so a frame is the extended number over `segments` (the
                // 16-bit one would shift the frames' bounds at each wrap).
                for &s in &lost {
                    self.detected.insert(s, now);
                }
                let frame_of = |i: usize| (ext_first + i as u64) / np.segments as u64;
                let mut i = 0;
                while i < lost.len() {
                    let frame = frame_of(i);
                    let mut j = i;
                    while j < lost.len() && frame_of(j) == frame {
                        j += 1;
                    }
                    self.sched
                        .on_loss(now, ssrc, lost[i..j].to_vec(), &mut self.rng);
                    i = j;
                }
            }
        }
    }

    /// An RTP packet arrived (not held): the hot path of a receiving
    /// member, kept apart from the control packets' code so that it stays
    /// compact in the instruction cache.
    #[inline]
    fn on_data(
        &mut self,
        now: SimTime,
        d: &RtpData,
        h: &Held,
        pkt: &Packet,
        out: &mut Vec<Action>,
    ) {
        if let (Some(s), Some(fb)) = (&d.stamp, &mut self.feedback) {
            stamped_data(fb, now, s, pkt.size_bytes, out);
        }
        self.take_in(h, d.ssrc, d.repair, out);
        // Whether the next packet from this source may be held (held.rs).
        let src = self.sources.get(&d.ssrc).and_then(|s| s.next_seq);
        self.fast.ok = src.is_some() && d.ssrc != self.ssrc && !self.fast.never;
        self.fast.ssrc = d.ssrc;
        self.fast.next_seq = src.unwrap_or(0);
    }

    /// A media packet's effect on the playout buffer, the feedback log and
    /// the reception statistics, on arrival (held ones: `release_held_now`).
    #[inline(always)]
    fn take_in(&mut self, h: &Held, ssrc: u32, repair: Option<SimTime>, out: &mut Vec<Action>) {
        let watched =
            repair.is_none() && self.viewer.as_ref().is_some_and(|v| v.watches_order(ssrc));
        let copy = watched && self.out_of_order(ssrc, h.seq);
        let mut key = None;
        if let (Some(tag), Some(v), false) = (&h.frame, &mut self.viewer, copy) {
            v.playout.on_packet(h.now, tag);
            let wait = v.key_wait_timer.is_none() && v.playout.key_wait_due().is_some();
            if tag.key && v.nack.is_some() && ssrc == v.media_ssrc {
                key = Some((tag.index, self.key_frame_start(ssrc, h)));
            }
            if self.viewer.as_ref().is_some_and(|v| v.playout.key_request) || wait {
                self.after_playout(out);
            }
        }
        if let Some(fb) = &mut self.pp_feedback {
            if fb.on_rtp(h.now, h, out) {
                self.fast.start_fb_timer(h.now, TOKEN_PPFB, out);
            }
        }
        self.on_rtp(h.now, (ssrc, h.seq, h.timestamp), repair, out);
        if let (Some((index, ext)), Some(v)) = (key, &mut self.viewer) {
            v.key_frame_packet(index, ext);
        }
    }

    /// The highest sequence number (extended) received from `ssrc` so far.
    fn extended_max(&self, ssrc: u32) -> u64 {
        self.sources
            .get(&ssrc)
            .map_or(0, |s| s.stats.extended_max() as u64)
    }

    /// A packet of a key frame of the played stream, `h`, reached the
    /// playout buffer: its sequence number, extended; if it is the frame's
    /// first packet and came as the newest one (not out of order), the
    /// retransmission requests note the key frame (before the gap it may
    /// end: libwebrtc's NackRequester::OnReceivedPacket).
    #[cold]
    #[inline(never)]
    fn key_frame_start(&mut self, ssrc: u32, h: &Held) -> u64 {
        let ext = extend16(h.seq, self.extended_max(ssrc));
        // Newest as on_rtp reckons it: within 3000 ahead of the next.
        let newest = (self.sources.get(&ssrc))
            .and_then(|s| s.next_seq)
            .is_none_or(|next| h.seq.wrapping_sub(next) < 3000);
        if let (true, Some(v)) = (h.first && newest, &mut self.viewer) {
            v.key_frame_start(ext);
        }
        ext
    }

    /// Whether packet `seq` of the played stream `ssrc` came behind the
    /// newest one (the path reorders) as a copy of one its retransmission
    /// brought already; a packet behind tells the playout buffer so, and
    /// ends its retransmission requests (nack.rs).
    #[cold]
    #[inline(never)]
    fn out_of_order(&mut self, ssrc: u32, seq: u16) -> bool {
        let Some(src) = self.sources.get(&ssrc) else {
            return false;
        };
        // Behind as on_rtp reckons it: not within 3000 ahead of the next.
        if src
            .next_seq
            .is_none_or(|next| seq.wrapping_sub(next) < 3000)
        {
            return false;
        }
        let ext = extend16(seq, src.stats.extended_max() as u64);
        let Some(v) = &mut self.viewer else {
            return false;
        };
        v.playout.on_reordered();
        v.nack
            .as_mut()
            .is_some_and(|r| r.on_late(ext) == Late::Recovered)
    }

    /// After the playout buffer took a packet: the PLI it asks for, and
    /// the key-frame wait's timer from the stream's first packet on.
    #[cold]
    #[inline(never)]
    fn after_playout(&mut self, out: &mut Vec<Action>) {
        let stop = self.stop;
        let Some(v) = &mut self.viewer else {
            return;
        };
        if let Some(at) = v.playout.key_wait_due().filter(|&at| at < stop) {
            crate::app::arm_timer(&mut v.key_wait_timer, at, TOKEN_KEY_WAIT, out);
        }
        if v.playout.key_request {
            self.send_pli(out);
        }
    }

    /// The key-frame wait's timer (playout.rs's `on_key_wait`): a PLI if
    /// the wait ran out, and the timer set again for the next one.
    #[cold]
    fn key_wait_fired(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if let Some(v) = &mut self.viewer {
            crate::app::timer_fired(&mut v.key_wait_timer, now);
            v.playout.on_key_wait(now);
        }
        self.after_playout(out);
    }

    /// The playout buffer wants a key frame: a PLI to the stream's sender
    /// (RFC 4585 6.3.1) at once, alone as a reduced-size RTCP packet (RFC
    /// 5506), as libwebrtc sends it: outside RFC 3550's report schedule,
    /// its bytes counted with the member's RTCP.
    #[cold]
    #[inline(never)]
    fn send_pli(&mut self, out: &mut Vec<Action>) {
        let Some(v) = &mut self.viewer else {
            return;
        };
        v.playout.key_request = false;
        let pli = Pli {
            sender_ssrc: self.ssrc,
            media_ssrc: v.media_ssrc,
        };
        self.send_rtcp_packet(Payload::new(pli), Pli::WIRE_BYTES, out);
    }

    /// Generic NACKs (RFC 4585 6.2.1) for the played stream's packets
    /// `seqs` (extended), each alone as a reduced-size RTCP packet (RFC
    /// 5506) at once, as libwebrtc sends them: outside RFC 3550's report
    /// schedule, their bytes counted with the member's RTCP. Then the
    /// timer for the next requests.
    #[cold]
    #[inline(never)]
    fn send_nack(&mut self, seqs: &[u64], out: &mut Vec<Action>) {
        let Some(media_ssrc) = self.viewer.as_ref().map(|v| v.media_ssrc) else {
            return;
        };
        for chunk in seqs.chunks(NACK_SEQS_MAX) {
            let nack = Nack {
                sender_ssrc: self.ssrc,
                media_ssrc,
                seqs: chunk.iter().map(|&s| s as u16).collect(),
            };
            let bytes = nack.wire_bytes();
            self.send_rtcp_packet(Payload::new(nack), bytes, out);
        }
        let rtt = self.rtt_s.map(SimTime::from_secs_f64);
        let stop = self.stop;
        let Some(v) = &mut self.viewer else {
            return;
        };
        v.nacks_sent += seqs.chunks(NACK_SEQS_MAX).len() as u64;
        let next = v.nack.as_ref().and_then(|r| r.next_due(rtt));
        if let Some(at) = next.filter(|&at| at < stop) {
            crate::app::arm_timer(&mut v.nack_timer, at, TOKEN_NACK, out);
        }
    }

    /// The retransmission requests' timer: the packets due are asked for
    /// again (or given up).
    #[cold]
    fn nack_due(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let rtt = self.rtt_s.map(SimTime::from_secs_f64);
        let mut ask = Vec::new();
        if let Some(v) = &mut self.viewer {
            crate::app::timer_fired(&mut v.nack_timer, now);
            if let Some(r) = &mut v.nack {
                r.due(now, rtt, &mut ask);
            }
        }
        self.send_nack(&ask, out);
    }

    /// A retransmission (RFC 4588) arrived (`h`: as its original packet
    /// would have). The controller's receiving half and transport-wide
    /// feedback count it as any packet; the playout buffer takes it in if
    /// its original is still asked for (else it is a duplicate). Its
    /// stream gets no reception statistics or report block.
    #[cold]
    #[inline(never)]
    fn on_rtx(&mut self, d: &RtpData, h: &Held, pkt: &Packet, out: &mut Vec<Action>) {
        let now = h.now;
        if let (Some(s), Some(fb)) = (&d.stamp, &mut self.feedback) {
            stamped_data(fb, now, s, pkt.size_bytes, out);
        }
        if let Some(fb) = &mut self.pp_feedback {
            let twcc = fb.log.format() == crate::proto::feedback::Format::Twcc;
            if twcc && fb.on_rtp(now, h, out) {
                self.fast.start_fb_timer(now, TOKEN_PPFB, out);
            }
        }
        let (Some(osn), Some(v)) = (d.rtx, &mut self.viewer) else {
            return;
        };
        let near = (self.sources.get(&v.media_ssrc)).map_or(0, |s| s.stats.extended_max() as u64);
        let wanted = v
            .nack
            .as_mut()
            .is_some_and(|r| r.on_retransmission(extend16(osn, near)));
        if let (true, Some(tag)) = (wanted, &h.frame) {
            v.playout.on_recovered(now, tag);
            if tag.key {
                v.key_frame_packet(tag.index, extend16(osn, near));
            }
            self.after_playout(out);
        }
    }

    /// A Generic NACK naming this member's media (`nack` at its
    /// receiver): the packets still kept are retransmitted, ahead of the
    /// media in the pacer (frames.rs, rtx.rs), after the member's stop
    /// too, as its pacer still sends what it holds then. Its packets count
    /// as loss reports (the `rtp` table's).
    #[cold]
    #[inline(never)]
    fn on_nack(&mut self, now: SimTime, nack: &Nack, out: &mut Vec<Action>) {
        for &s in &nack.seqs {
            self.sent.on_report(now, s, nack.sender_ssrc);
        }
        let rtt = self.rtt_s.map(SimTime::from_secs_f64);
        let target = self.frame_target();
        let Some(fs) = self.frames.as_mut() else {
            return;
        };
        let mut now_packets = std::mem::take(&mut fs.released);
        fs.on_nack(now, &nack.seqs, (rtt, target), &mut now_packets);
        for q in &now_packets {
            self.emit_frame_packet(now, q, out);
        }
        now_packets.clear();
        if let Some(fs) = self.frames.as_mut() {
            fs.released = now_packets;
        }
        self.pace(now, out);
    }

    /// Processes the held packets (before anything else the member does).
    fn release_held(&mut self) {
        if self.fast.held.is_empty() {
            return;
        }
        self.release_held_now();
    }

    /// The held packets are in order from one known source (held.rs): the
    /// playout buffer, the feedback log and the reception statistics each
    /// take the whole batch in turn, which leaves them as packet by packet
    /// would, since none of them reads another.
    #[inline(never)]
    fn release_held_now(&mut self) {
        let held = std::mem::take(&mut self.fast.held);
        let ssrc = self.fast.ssrc;
        // Extended numbers only for the retransmission requests.
        let near = match &self.viewer {
            Some(v) if v.nack.is_some() => self.extended_max(ssrc),
            _ => 0,
        };
        if let Some(v) = &mut self.viewer {
            v.take_held(&held, ssrc, near);
            // A buffer that may ask for key frames is never held for.
            debug_assert!(!v.playout.key_request);
        }
        if let Some(fb) = &mut self.pp_feedback {
            // A held packet makes no action: the feedback timer runs, and
            // none of them ends a frame with per-frame feedback.
            let mut none = Vec::new();
            for h in &held {
                fb.on_rtp(h.now, h, &mut none);
            }
            debug_assert!(none.is_empty());
        }
        self.on_rtp_in_order(&held);
        self.fast.held = held;
        self.fast.held.clear();
    }

    /// [`Self::on_rtp`] for packets in order from the known source
    /// `fast.ssrc`, none a repair: no gap, so no loss to report; RTCP's
    /// member table keeps only the last packet's time.
    fn on_rtp_in_order(&mut self, held: &[Held]) {
        let (Some(first), Some(last)) = (held.first(), held.last()) else {
            return;
        };
        let ssrc = self.fast.ssrc;
        self.sched.timing.on_rtp(ssrc, last.now);
        let src = self.sources.entry(ssrc).or_default();
        src.sends_media = true;
        debug_assert_eq!(src.next_seq, Some(first.seq));
        for h in held {
            src.stats.update_seq(h.seq);
            src.stats
                .update_jitter(super::compound::rtp_clock(h.now) as i64, h.timestamp);
        }
        src.next_seq = Some(last.seq.wrapping_add(1));
    }

    /// A control packet arrived: per-packet feedback, an RTCP compound, or
    /// feedback for the media's controller (only the compound concerns
    /// RTCP's schedule). Rare beside media packets, so out of line.
    #[inline(never)]
    fn on_control(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Some(FeedbackMessage(msg)) = pkt.app.get::<FeedbackMessage>() {
            if let Some(fs) = &mut self.frames {
                let queued = fs.pacer.as_ref().map_or(0, |p| p.queued_bytes());
                let results = fs.on_feedback(now, msg, pkt.size_bytes);
                if let Some(pm) = &mut self.paced {
                    pm.cc.on_send_queue(queued);
                    pm.cc.on_packet_feedback(now, results);
                    // A window the feedback opened lets the pacer go on.
                    if pm.cc.send_window().is_some() {
                        self.pace(now, out);
                    }
                }
            }
        } else if let Some(nack) = pkt.app.get::<Nack>() {
            if nack.media_ssrc == self.ssrc {
                self.on_nack(now, nack, out);
            }
        } else if let Some(pli) = pkt.app.get::<Pli>() {
            if let Some(fs) = self.frames.as_mut().filter(|_| pli.media_ssrc == self.ssrc) {
                fs.on_key_frame_request(now);
            }
        } else if let Some(c) = pkt.app.get::<RtcpCompound>() {
            // RTCP's schedule may move, and its sender may leave (a BYE).
            self.fast.ok = false;
            self.sched.catch_up(now, self.stop, &mut self.rng);
            self.on_rtcp(now, c, pkt.size_bytes, pkt.created_at, out);
            self.arm_rtcp(out);
        } else if let Some(pm) = &mut self.paced {
            // Feedback for the media's controller.
            if let Some(next) = pm.cc.on_feedback(now, &pkt.app, pm.next) {
                pm.next = next;
                pm.arm(self.stop, out);
            }
        }
    }

    /// A round-trip sample from a report about this member: the media
    /// source's take the place of any other's.
    fn take_rtt(&mut self, rtt: SimTime, from_media_source: bool) {
        if from_media_source || self.rtt_s.is_none() {
            let rtt = rtt.as_secs_f64();
            self.rtt_s = Some(rtt);
            self.sched.set_rtt(rtt);
        }
    }

    /// An RTCP compound that was sent at `sent_at` (its SR timestamp).
    /// Out of line: about one a second, beside per-packet feedback every
    /// few tens of milliseconds that shares `on_control`.
    #[inline(never)]
    fn on_rtcp(
        &mut self,
        now: SimTime,
        c: &RtcpCompound,
        bytes: u32,
        sent_at: SimTime,
        out: &mut Vec<Action>,
    ) {
        self.sched.timing.on_rtcp(c.ssrc, bytes as f64, now);
        if c.bye {
            self.sched.timing.on_bye(c.ssrc, now);
            self.sources.remove(&c.ssrc);
            self.xr.heard.forget(c.ssrc);
            return;
        }
        if c.rrtr {
            // RFC 3611 4.4: the RRTR's timestamp is its sending time.
            self.xr.heard.on_rrtr(c.ssrc, sent_at, now);
        }
        // Only SR senders and media sources need an entry: in a large
        // session most members are neither, and an entry per member per
        // member would grow with the square of the members.
        if c.sender.is_some() {
            // LSR: the SR's own timestamp, i.e. when it was sent.
            let src = self.sources.entry(c.ssrc).or_default();
            src.last_sr = Some((sent_at, now));
        }
        let from_media_source = self.sources.get(&c.ssrc).is_some_and(|s| s.sends_media);
        for rb in &c.reports {
            if rb.ssrc == self.ssrc {
                if let Some(lsr) = rb.lsr {
                    // RFC 3550 6.4.1: RTT = A - LSR - DLSR.
                    let rtt = now.saturating_sub(lsr).saturating_sub(rb.dlsr);
                    self.take_rtt(rtt, from_media_source);
                }
            }
        }
        if self.xr.asks {
            let me = self.ssrc;
            for d in c.dlrr.iter().filter(|d| d.ssrc == me) {
                self.take_rtt(super::xr::rtt(now, d), from_media_source);
            }
        }
        for (media, seqs) in &c.nacks {
            self.sched.on_feedback_heard(now, *media, seqs);
            if *media == self.ssrc && self.newpred.is_some() {
                self.send_repairs(seqs, sent_at, out);
            }
            if *media == self.ssrc {
                for &s in seqs {
                    self.sent.on_report(now, s, c.ssrc);
                }
            }
        }
    }
}

impl App for RtpMember {
    fn set_series(&mut self, rows: usize) {
        self.series_rows = rows;
        if let Some(fb) = &mut self.feedback {
            fb.rx.set_series_rows(rows);
        }
        if let Some(fs) = &mut self.frames {
            fs.set_series(rows);
        }
    }
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if let Some(pm) = &mut self.paced {
            pm.cc.start(now, self.series_rows);
            pm.next = now;
        }
        if let Some(fb) = &mut self.feedback {
            fb.rx.start(now);
        }
        if self.frames.is_some() {
            self.frame_due(now, out);
        } else if self.media.is_some() {
            self.send_media(now, out);
        }
        self.arm_rtcp(out);
        if let Some(at) = self.bye_at.filter(|&at| at > now) {
            // RTCP's own timer never runs to the stop (`arm_rtcp`): this one
            // does, for the BYE.
            out.push(Action::Timer {
                at,
                token: TOKEN_RTCP,
            });
        }
        out.push(Action::Timer {
            at: now + SimTime::from_secs(1),
            token: TOKEN_TIMEOUTS,
        });
    }

    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        // Whether RTCP's schedule may have changed (else its timer stands).
        // Only RTCP's own timer and the time-out check read or move it;
        // sending media moves it only until we count as a sender, and the
        // controller's and the per-packet feedback's timers never do: their
        // events leave RTCP's quiet slots for the next event that does.
        let touches_rtcp = match token {
            TOKEN_MEDIA | TOKEN_FRAME | TOKEN_PACE => !self.sched.timing.we_sent(),
            TOKEN_CC | TOKEN_FB | TOKEN_PPFB | TOKEN_NACK | TOKEN_KEY_WAIT => false,
            _ => true,
        };
        let mut rtcp_moved = touches_rtcp && self.sched.catch_up(now, self.stop, &mut self.rng);
        // What RTCP's timer was set from; a change (our first media
        // packet, a sender timing out) may bring its next wake forward.
        let generation = touches_rtcp.then(|| self.sched.timing.generation());
        self.release_held();
        match token {
            TOKEN_MEDIA => {
                if let Some(pm) = &mut self.paced {
                    crate::app::timer_fired(&mut pm.media_timer, now);
                }
                self.send_media(now, out)
            }
            TOKEN_CC => {
                if let Some(pm) = &mut self.paced {
                    crate::app::timer_fired(&mut pm.cc_timer, now);
                    pm.cc.on_timer(now);
                    if self.frames.is_some() {
                        // Frame media leaves through the pacer, not by
                        // the media timer.
                        self.pace(now, out);
                        self.arm_cc_timer(out);
                    } else {
                        pm.arm(self.stop, out);
                    }
                }
            }
            TOKEN_FB => {
                if let Some(fb) = &mut self.feedback {
                    fb.on_timer(now, out);
                }
            }
            TOKEN_FRAME => self.frame_due(now, out),
            TOKEN_PACE => {
                crate::app::timer_fired(&mut self.pace_timer, now);
                self.pace(now, out);
            }
            TOKEN_NACK => self.nack_due(now, out),
            TOKEN_KEY_WAIT => self.key_wait_fired(now, out),
            TOKEN_PPFB => {
                // The feedback timer stops: the next packet starts it again.
                self.fast.fb_armed = false;
                if let Some(fb) = &mut self.pp_feedback {
                    fb.on_timer(now, out);
                }
            }
            TOKEN_TIMEOUTS => {
                // The source may stop counting as a sender.
                self.fast.ok = false;
                rtcp_moved = true;
                self.sched.timing.check_timeouts(now);
                if now < self.stop {
                    out.push(Action::Timer {
                        at: now + SimTime::from_secs(1),
                        token: TOKEN_TIMEOUTS,
                    });
                }
            }
            _ => {
                rtcp_moved = true;
                if self.rtcp_timer_at.is_some_and(|t| t <= now) {
                    self.rtcp_timer_at = None;
                }
                if now >= self.stop {
                    // Only the BYE timer runs to the stop (`on_start`).
                    if !self.byes_sent {
                        self.byes_sent = true;
                        self.send_rtcp(now, Transmit::Regular(vec![]), true, out);
                    }
                    return;
                }
                if now >= self.sched.deadline() {
                    if let Some(tx) = self.sched.on_timer(now, &mut self.rng) {
                        self.send_rtcp(now, tx, false, out);
                    }
                }
            }
        }
        if rtcp_moved || generation.is_some_and(|g| g != self.sched.timing.generation()) {
            self.arm_rtcp(out);
        }
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Action>) {
        if let Some(d) = pkt.app.get::<RtpData>() {
            let h = Held {
                now,
                frame: d.frame,
                timestamp: d.timestamp,
                seq: d.seq,
                transport_seq: d.transport_seq,
                marker: d.marker,
                first: d.first,
                ecn: pkt.ecn,
            };
            let plain = d.stamp.is_none() && d.repair.is_none() && d.rtx.is_none();
            if self.fast.hold(h, d.ssrc, plain, TOKEN_PPFB, out) {
                return;
            }
            self.release_held();
            if d.rtx.is_some() {
                self.on_rtx(d, &h, pkt, out);
                return;
            }
            let mut rtcp_moved = self.sched.catch_up(now, self.stop, &mut self.rng);
            let generation = self.sched.timing.generation();
            // A media packet moves RTCP's schedule by a loss, or by a new
            // member or sender (the timing's generation).
            self.on_data(now, d, &h, pkt, out);
            rtcp_moved |= std::mem::take(&mut self.loss_seen);
            rtcp_moved |= generation != self.sched.timing.generation();
            if rtcp_moved {
                self.arm_rtcp(out);
            }
        } else {
            // Anything else is not for a session member.
            self.release_held();
            self.on_control(now, pkt, out);
        }
    }

    fn more_stats(&self, end: SimTime) -> Vec<AppStats> {
        let mut v = Vec::new();
        if let Some(fs) = &self.frames {
            v.push(self.sender_media_stats(fs, end));
        }
        if let Some(view) = &self.viewer {
            let ssrc = self.fast.ssrc;
            v.push(view.stats(end, (&self.fast.held, ssrc, self.extended_max(ssrc))));
        }
        if let Some(fb) = &self.pp_feedback {
            v.push(fb.stats());
        }
        v
    }

    fn stats(&self, end: SimTime) -> Option<AppStats> {
        let active = end.min(self.stop).saturating_sub(self.start).as_secs_f64();
        // The quiet RTCP slots up to the end that no later event ran.
        let sched = if self.sched.quiet_until().is_some() {
            let mut s = self.sched.clone();
            s.catch_up(end, self.stop, &mut self.rng.clone());
            Cow::Owned(s)
        } else {
            Cow::Borrowed(&self.sched)
        };
        let st = &sched.stats;
        Some(AppStats {
            table: "rtp",
            flow: self.data_flow,
            values: vec![
                ("ssrc", self.ssrc as f64),
                ("avpf", sched.is_avpf() as u8 as f64),
                ("media_sender", self.media.is_some() as u8 as f64),
                ("rtcp_packets", self.rtcp_packets as f64),
                ("rtcp_bytes", self.rtcp_bytes as f64),
                ("rtcp_bps", per_s(self.rtcp_bytes as f64 * 8.0, active)),
                (
                    "rtcp_share_pct",
                    if active > 0.0 {
                        self.rtcp_bytes as f64 * 8.0 / active / self.session_bw_bps * 100.0
                    } else {
                        f64::NAN
                    },
                ),
                ("early_packets", st.early_packets as f64),
                ("regular_packets", st.regular_packets as f64),
                ("regular_suppressed", st.regular_suppressed as f64),
                ("fb_wanted", st.wanted as f64),
                ("fb_sent", st.sent as f64),
                ("fb_sent_early", st.sent_early as f64),
                ("fb_suppressed", st.suppressed as f64),
                ("fb_discarded", st.discarded as f64),
                ("mwt_s", st.mean_wait_s()),
                ("members", sched.timing.members() as f64),
                ("rtt_s", self.rtt_s.unwrap_or(f64::NAN)),
                ("rrtr_sent", self.xr.rrtr_sent as f64),
                ("dlrr_sent", self.xr.dlrr_sent as f64),
                ("loss_reports", self.sent.reports() as f64),
                // Lost packets reported by more than one member (a
                // suppression failure when the loss was shared).
                (
                    "losses_multiply_reported",
                    self.sent.multiply_reported() as f64,
                ),
                // Reports naming no packet still in the record (sent.rs).
                ("loss_reports_unplaced", self.sent.unplaced() as f64),
                ("loss_report_delay_mean_s", self.sent.delay_mean_s()),
                ("media_packets_sent", self.packets_sent as f64),
                ("repairs_sent", self.repairs_sent as f64),
                ("recoveries", self.recovery_times.count() as f64),
                ("recovery_time_mean_s", self.recovery_times.mean()),
                ("waiting_time_mean_s", self.waiting_times.mean()),
            ],
            series: match &self.paced {
                Some(pm) => vec![("target_bps", pm.cc.rate_series())],
                None => vec![],
            },
        })
    }
}

#[cfg(test)]
mod tests;
