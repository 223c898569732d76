//! The receiver's playout (jitter) buffer and what the viewer sees.
//!
//! Each frame gets a playout time when its first packet arrives: its
//! capture time plus the playout delay then in force, never earlier than
//! the frame before it. The delay is fixed, or adaptive: the `quantile`
//! (0.95) of the capture-to-completion delays of the frames completed in
//! the last `window` (2 s), within [min, max] (the target NetEQ and
//! WebRTC's video jitter buffer aim at is of this kind: a high percentile
//! of recent delays). Video adopts a new delay at every frame, voice only
//! at the start of a talkspurt. Or, for video, libwebrtc's timing
//! (`render_timing.rs`): the frame's expected completion plus a current
//! delay that follows its jitter estimate; a frame must then be complete
//! its decode and render time before its playout time. A frame is
//! - played if its last packet arrived by its playout time,
//! - late if it completed after it,
//! - lost if it never completed (a packet lost), or was still incomplete
//!   `hold` after its playout time.
//!
//! Decoding (`decode`):
//! - independent: every frame decodes alone; a lost frame does not spoil
//!   the frames after it;
//! - reference: each frame but a key frame refers to the frame before it
//!   (one reference, as a real-time encoder's P-frames do), so a frame is
//!   shown only when the chain back to a key frame is whole. A lost frame
//!   breaks the chain; the frames after it are undecodable until a key
//!   frame completes. A late frame is decoded, not shown: it keeps the
//!   chain. The receiver then asks for a key frame (RFC 4585 6.3.1's PLI):
//!   at once when it sees the loss (a frame's first packet arrives while
//!   the frame before it is incomplete: the missing ones are taken for
//!   lost until the path has reordered a packet, which withdraws them,
//!   and from then on only a frame declared lost asks) or when it
//!   declares a frame lost, and again every `key_retry` while no key
//!   frame at or after the frame taken for lost has completed
//!   (libwebrtc: 200 ms). With retransmission (`nack`), a
//!   missing packet may still come: the receiver asks for a key frame
//!   only when it declares a frame lost. With `key_wait`, it asks as
//!   libwebrtc's receive stream does, by a timer and never at a loss.
//!   Until a frame has been decoded (a key frame is required) the timer
//!   runs out every `key_retry` (max_wait_for_keyframe, 200 ms) from the
//!   stream's start, and the first frame to complete asks at once if it
//!   is not a key frame. Once one has been decoded, it runs out when no
//!   frame has been decoded for `key_wait` (max_wait_for_frame, 3 s).
//!   Each time it runs out the wait starts again, and a request goes out
//!   unless the stream sent nothing in the last 5 s or a key frame is
//!   coming (`on_key_wait`). A frame counts as decoded when it is shown,
//!   or, late, when it completes; a complete key frame does even while an
//!   older frame is incomplete (libwebrtc drops those).
//!
//! Freezes (video) follow the WebRTC statistics' rule: a gap between two
//! played frames longer than max(3 x, x + 150 ms), x the mean of the last
//! 30 gaps, is a freeze, and the whole gap is its duration. A gap over
//! `pause` (5 s, the WebRTC statistics' pauseCount) is a pause instead:
//! neither a freeze nor a gap in the mean (the sender stopped, or nothing
//! came through for that long).

use super::render_timing::RenderTiming;
use crate::measure::delay::DelayStats;
use crate::sim::SimTime;
use std::collections::VecDeque;

/// Most recent frame delays the adaptive estimate keeps.
const MAX_RECENT: usize = 4096;
/// Gaps averaged for the freeze rule (WebRTC).
const FREEZE_WINDOW: usize = 30;
/// With `key_wait`: a wait that runs out asks for a key frame only if a
/// packet of the stream came within this long (libwebrtc's receive
/// stream: no requests for a stream not active in the last 5 s).
const KEY_WAIT_ACTIVE: SimTime = SimTime::from_secs(5);

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlayoutDelay {
    Fixed(SimTime),
    Adaptive {
        min: SimTime,
        max: SimTime,
        quantile: f64,
        window: SimTime,
    },
    /// libwebrtc's video timing (`render_timing.rs`): the current delay,
    /// within [min, max], after the expected completion; a frame must be
    /// complete `decode + render` before its render time.
    Webrtc {
        min: SimTime,
        max: SimTime,
        decode: SimTime,
        render: SimTime,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayoutParams {
    pub delay: PlayoutDelay,
    /// Video: adopt a new adaptive delay at every frame, and count
    /// freezes. Voice: adopt it only when a frame's capture follows the
    /// previous one by more than 1.5 `frame_interval` (the start of a
    /// talkspurt); its silences are not freezes.
    pub video: bool,
    pub frame_interval: SimTime,
    /// An incomplete frame is lost this long after its playout time.
    pub hold: SimTime,
    pub freeze_factor: f64,
    pub freeze_extra: SimTime,
    /// A gap between played frames over this is a pause, not a freeze.
    pub pause: SimTime,
    pub decode: Decode,
    /// With reference decoding, ask for a key frame when one is needed,
    /// again after this long while none has come; `None`: never ask.
    pub key_retry: Option<SimTime>,
    /// With `key_retry`, once a frame has been decoded: ask only when
    /// none has been decoded for this long, by a timer that runs again
    /// after each wait (libwebrtc's max_wait_for_frame); `None`: ask at
    /// once.
    pub key_wait: Option<SimTime>,
    /// Lost packets are asked for again (`nack`): a frame's missing
    /// packets may still come, so a loss counts only when its frame is
    /// declared lost.
    pub retransmission: bool,
    /// Frames a retransmission completed stay out of the adaptive
    /// estimate (`skip_recovered`).
    pub skip_recovered: bool,
}

/// How frames depend on each other (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decode {
    Independent,
    Reference,
}

/// What the receiver knows of a frame from its packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameTag {
    /// Frames of the stream in capture order: 0, 1, ...
    pub index: u32,
    pub packets: u32,
    pub capture: SimTime,
    pub key: bool,
    /// The frame's payload bytes (libwebrtc's frame size).
    pub bytes: u32,
}

/// One frame from the lowest not yet rendered on.
#[cfg(test)]
impl FrameTag {
    /// Frame `index` of a stream captured every 40 ms, in `packets`
    /// packets (tests).
    pub(crate) fn test_frame(index: u32, packets: u32) -> FrameTag {
        FrameTag {
            index,
            packets,
            capture: SimTime::from_millis(40 * index as u64),
            key: false,
            bytes: 1000,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Slot {
    /// No packet seen and no later frame either.
    Unseen,
    /// Waiting for packets (`need` = u32::MAX: no packet of it seen yet,
    /// a later frame was).
    Pending {
        capture: SimTime,
        playout: SimTime,
        need: u32,
        got: u32,
        key: bool,
        /// One of its packets came by retransmission.
        recovered: bool,
    },
    Done(Decided),
}

impl Slot {
    /// Frame `tag`, to be played at `playout`, waiting for its packets.
    fn awaiting(tag: &FrameTag, playout: SimTime) -> Slot {
        Slot::Pending {
            capture: tag.capture,
            playout,
            need: tag.packets,
            got: 0,
            key: tag.key,
            recovered: false,
        }
    }
}

/// A frame's fate once known, kept until its turn to render.
#[derive(Clone, Copy, Debug)]
struct Decided {
    outcome: Outcome,
    playout: SimTime,
    capture: SimTime,
    key: bool,
    /// When its fate became known (for a complete frame, its last packet).
    done: SimTime,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Played,
    Late,
    Lost,
    /// Complete, but its reference chain is broken (reference decoding).
    Undecodable,
}

/// Counts the playout buffer keeps.
#[derive(Clone, Debug, Default)]
pub struct PlayoutStats {
    pub played: u64,
    pub late: u64,
    pub lost: u64,
    /// Complete frames not shown for a broken reference chain.
    pub undecodable: u64,
    /// Key frames asked for (PLIs to send).
    pub key_requests: u64,
    pub freezes: u64,
    pub freeze_total: SimTime,
    /// Gaps over `pause` between played frames, and their sum.
    pub pauses: u64,
    pub pause_total: SimTime,
    /// Capture to completion of every completed frame (played or late).
    pub frame_delay: DelayStats,
    /// Capture to playout of played frames, summed (for the mean).
    pub playout_delay_sum: SimTime,
    /// Runs of consecutive frames not played (late, lost or undecodable),
    /// and the frames in them (for the E-model's burst ratio).
    pub bad_runs: u64,
    pub bad_frames: u64,
    /// Frames at each level of the IW10 study's loss-period scale: 0
    /// played; 1 a single frame not played; 2 in a run of 2-3; 3 of 4-5;
    /// 4 of 6-9; 5 of 10 or more.
    pub levels: [u64; 6],
    /// The run of frames not played so far.
    run: u64,
}

impl PlayoutStats {
    /// Ends the current run of frames not played, counting it at its level.
    fn close_run(&mut self) {
        let level = match self.run {
            0 => return,
            1 => 1,
            2..=3 => 2,
            4..=5 => 3,
            6..=9 => 4,
            _ => 5,
        };
        self.levels[level] += self.run;
        self.run = 0;
    }
}

#[derive(Clone)]
pub struct Playout {
    p: PlayoutParams,
    /// Frames `next`, `next + 1`, ...: not yet rendered.
    slots: VecDeque<Slot>,
    /// The lowest index not yet rendered.
    next: u32,
    /// (completion time, capture-to-completion delay) of recent frames.
    recent: VecDeque<(SimTime, SimTime)>,
    /// The same delays in ascending order: a quantile is one lookup (a
    /// frame's insertion moves the few later ones).
    sorted: Vec<SimTime>,
    delay: SimTime,
    last_capture: Option<SimTime>,
    last_assigned: SimTime,
    last_played: Option<SimTime>,
    gaps: VecDeque<f64>,
    in_bad_run: bool,
    pub stats: PlayoutStats,
    /// Reference decoding: the last frame rendered was decoded (a delta
    /// frame after it decodes).
    chain: bool,
    /// Reference decoding: a frame at or before this index was lost, and
    /// no key frame after it has completed.
    key_needed_after: Option<u32>,
    /// The highest index of a key frame that completed.
    last_key_done: Option<u32>,
    last_key_request: Option<SimTime>,
    /// Reference decoding: when the last frame decoded was shown (its
    /// playout time) or, late, decoded (when it completed).
    last_decoded: Option<SimTime>,
    /// With `key_wait`: when its wait last ran out (from the stream's
    /// first packet on: `first_packet`).
    wait_from: Option<SimTime>,
    /// With `key_wait`: when the receive stream started, the phase of the
    /// timer before the first decoded frame.
    origin: SimTime,
    /// A frame of the stream has completed (libwebrtc's has_received_frame).
    assembled: bool,
    /// When the last packet of the stream came, and of a key frame.
    last_packet: Option<SimTime>,
    last_key_packet: Option<SimTime>,
    /// Reference decoding: the highest index of a frame declared lost.
    declared_loss: Option<u32>,
    /// A key-frame request is due: the member sends it and clears this.
    pub key_request: bool,
    /// With the `Webrtc` delay: its timing.
    timing: Option<Box<RenderTiming>>,
    /// How long before its playout time a frame must be complete.
    slack: SimTime,
    /// No packet of the stream has come out of order yet.
    in_order: bool,
}

impl Playout {
    pub fn new(p: PlayoutParams) -> Self {
        let (delay, timing) = match p.delay {
            PlayoutDelay::Fixed(d) => (d, None),
            PlayoutDelay::Adaptive { min, .. } => (min, None),
            PlayoutDelay::Webrtc {
                min,
                max,
                decode,
                render,
            } => (
                min,
                Some(Box::new(RenderTiming::new(min, max, decode, render))),
            ),
        };
        let slack = timing.as_ref().map_or(SimTime::ZERO, |t| t.slack());
        Playout {
            p,
            slots: VecDeque::new(),
            next: 0,
            recent: VecDeque::new(),
            sorted: Vec::new(),
            delay,
            last_capture: None,
            last_assigned: SimTime::ZERO,
            last_played: None,
            gaps: VecDeque::new(),
            in_bad_run: false,
            stats: PlayoutStats::default(),
            chain: false,
            key_needed_after: None,
            last_key_done: None,
            last_key_request: None,
            last_decoded: None,
            wait_from: None,
            origin: SimTime::ZERO,
            assembled: false,
            last_packet: None,
            last_key_packet: None,
            declared_loss: None,
            key_request: false,
            timing,
            slack,
            in_order: true,
        }
    }

    /// The receive stream starts at `start` (the session's start): with
    /// `key_wait`, the timer that runs before the first decoded frame
    /// runs out `key_retry` after it, and every `key_retry` on.
    pub fn starting_at(mut self, start: SimTime) -> Self {
        self.origin = start;
        self
    }

    /// Reference decoding that asks for key frames by libwebrtc's timer
    /// (`key_wait`), not at a loss.
    fn waits(&self) -> bool {
        self.p.key_wait.is_some() && self.asks_for_key_frames()
    }

    /// Whether the buffer takes a frame's missing packets for lost when
    /// the next frame begins (reference decoding without retransmission,
    /// the path in order so far).
    pub fn infers_loss_from_order(&self) -> bool {
        self.in_order && self.p.decode == Decode::Reference && !self.p.retransmission
    }

    /// A packet of the stream came out of order: a gap no longer means a
    /// loss. The first time, the losses inferred from gaps so far are
    /// withdrawn (the packet may be one of them); a frame really lost asks
    /// for a key frame when it is declared lost.
    pub fn on_reordered(&mut self) {
        if std::mem::replace(&mut self.in_order, false) {
            let done = self.last_key_done;
            self.key_needed_after = self.declared_loss.filter(|&i| done.is_none_or(|k| k < i));
        }
    }

    /// With reference decoding: key frame `index` has completed, and no
    /// later one has (the frames before it are no longer needed).
    pub fn newest_key_done(&self, index: u32) -> bool {
        self.p.decode == Decode::Reference && self.last_key_done == Some(index)
    }

    /// Whether a packet may make the buffer ask for a key frame.
    pub fn asks_for_key_frames(&self) -> bool {
        self.p.decode == Decode::Reference && self.p.key_retry.is_some()
    }

    /// The playout delay now in force.
    pub fn delay(&self) -> SimTime {
        self.delay
    }

    fn estimate(&mut self, now: SimTime, delay: SimTime) {
        if self.recent.len() == MAX_RECENT {
            self.forget_oldest();
        }
        self.recent.push_back((now, delay));
        let at = self.sorted.partition_point(|&d| d < delay);
        self.sorted.insert(at, delay);
    }

    fn forget_oldest(&mut self) {
        if let Some((_, d)) = self.recent.pop_front() {
            let at = self.sorted.partition_point(|&x| x < d);
            self.sorted.remove(at);
        }
    }

    /// The quantile of the delays of frames completed within `window`
    /// before `now` (nearest rank), if any.
    fn quantile(&mut self, now: SimTime, q: f64, window: SimTime) -> Option<SimTime> {
        while self.recent.front().is_some_and(|f| f.0 + window < now) {
            self.forget_oldest();
        }
        let n = self.sorted.len();
        if n == 0 {
            return None;
        }
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
        Some(self.sorted[rank - 1])
    }

    /// A packet of frame `tag` arrived at `now`.
    pub fn on_packet(&mut self, now: SimTime, tag: &FrameTag) {
        self.take(now, tag, false);
    }

    /// A retransmitted packet of frame `tag` arrived at `now`, its
    /// original still missing.
    pub fn on_recovered(&mut self, now: SimTime, tag: &FrameTag) {
        self.take(now, tag, true);
    }

    fn take(&mut self, now: SimTime, tag: &FrameTag, by_rtx: bool) {
        self.finalise(now);
        if self.last_packet.is_none() && self.waits() {
            self.first_packet(now);
        }
        self.last_packet = Some(now);
        if tag.key {
            self.last_key_packet = Some(now);
        }
        let Some(k) = tag.index.checked_sub(self.next) else {
            return; // its frame was already rendered
        };
        let k = k as usize;
        if k >= self.slots.len() {
            self.slots.resize(k + 1, Slot::Unseen);
        }
        match self.slots[k] {
            Slot::Done(..) => return, // already decided
            Slot::Unseen => self.first_seen(now, k, tag),
            Slot::Pending {
                need: u32::MAX,
                playout,
                ..
            } => {
                // A placeholder whose packets came after all.
                self.slots[k] = Slot::awaiting(tag, playout);
            }
            Slot::Pending { .. } => {}
        }
        let Slot::Pending {
            capture,
            playout,
            need,
            got,
            key,
            recovered,
        } = &mut self.slots[k]
        else {
            unreachable!("pending above")
        };
        *got += 1;
        *recovered |= by_rtx;
        if *got >= *need {
            let (capture, playout, key, recovered) = (*capture, *playout, *key, *recovered);
            match (&mut self.timing, self.p.delay) {
                // libwebrtc: a frame delayed by retransmission feeds neither.
                (Some(t), _) if !recovered => t.on_complete(now, capture, tag.bytes, playout),
                (None, PlayoutDelay::Adaptive { .. }) if !(recovered && self.p.skip_recovered) => {
                    self.estimate(now, now - capture)
                }
                _ => {}
            }
            self.stats.frame_delay.add((now - capture).as_nanos());
            let outcome = if now + self.slack <= playout {
                Outcome::Played
            } else {
                Outcome::Late
            };
            self.slots[k] = Slot::Done(Decided {
                outcome,
                playout,
                capture,
                key,
                done: now,
            });
            if key {
                self.key_done(tag.index);
            }
            if !std::mem::replace(&mut self.assembled, true) && !key && self.waits() {
                // libwebrtc's RtpVideoStreamReceiver2::OnAssembledFrame: a
                // first frame that is not a key frame cannot be decoded;
                // ask at once.
                self.request_key(now);
            }
        }
        self.render();
        if self.key_needed_after.is_some() {
            self.ask_key(now);
        }
    }

    /// The first packet of frame `tag` (slot `k`): its playout time, and
    /// the frames skipped over before it.
    fn first_seen(&mut self, now: SimTime, k: usize, tag: &FrameTag) {
        self.adopt(now, tag.capture);
        let playout = match &self.timing {
            Some(t) => t.render_time(now, tag.capture),
            None => tag.capture + self.delay,
        };
        let playout = playout.max(self.last_assigned);
        self.last_assigned = playout;
        self.last_capture = Some(tag.capture);
        // Frames skipped over before this one: lost unless their
        // packets still come (due with this frame).
        for s in self.slots.range_mut(..k).rev() {
            if !matches!(s, Slot::Unseen) {
                break;
            }
            *s = Slot::Pending {
                capture: tag.capture,
                playout,
                need: u32::MAX,
                got: 0,
                key: false,
                recovered: false,
            };
        }
        // Packets in order: the frame before this one is incomplete for
        // good (a placeholder included).
        if self.infers_loss_from_order()
            && k > 0
            && matches!(self.slots[k - 1], Slot::Pending { need, got, .. } if got < need)
        {
            self.note_loss(tag.index - 1);
        }
        self.slots[k] = Slot::awaiting(tag, playout);
    }

    /// Reference decoding: frame `index` is lost; a key frame after it is
    /// needed unless one has completed already.
    #[cold]
    fn note_loss(&mut self, index: u32) {
        if self.p.decode != Decode::Reference || self.last_key_done.is_some_and(|k| k > index) {
            return;
        }
        self.key_needed_after = Some(self.key_needed_after.map_or(index, |i| i.max(index)));
    }

    /// Key frame `index` completed: a need noted at or before it ends (at
    /// it: a frame taken for lost from a gap came after all).
    fn key_done(&mut self, index: u32) {
        self.last_key_done = Some(self.last_key_done.map_or(index, |k| k.max(index)));
        if self.key_needed_after.is_some_and(|i| index >= i) {
            self.key_needed_after = None;
        }
    }

    /// A key frame is needed: ask now unless asked within `key_retry`.
    /// With `key_wait` the wait's timer asks instead (`on_key_wait`), not
    /// a loss.
    #[cold]
    fn ask_key(&mut self, now: SimTime) {
        let Some(retry) = self.p.key_retry else {
            return;
        };
        if self.p.key_wait.is_some() {
            return;
        }
        if self.last_key_request.is_none_or(|t| now >= t + retry) {
            self.request_key(now);
        }
    }

    /// The retransmission requests' list overflowed (nack.rs), when the
    /// buffer asks for key frames at all: with the wait, libwebrtc's
    /// receiver asks for one at once; without, a key frame is needed, asked
    /// for unless it was within `key_retry` (`ask_key`: a loss declared at
    /// the same packet may have asked already).
    #[cold]
    pub fn on_nack_list_full(&mut self, now: SimTime) {
        if self.waits() {
            self.request_key(now);
        } else if self.asks_for_key_frames() {
            self.ask_key(now);
        }
    }

    fn request_key(&mut self, now: SimTime) {
        self.last_key_request = Some(now);
        self.key_request = true;
        self.stats.key_requests += 1;
    }

    /// With `key_wait` and reference decoding, from the stream's first
    /// packet on: when the wait runs out. Before a frame has been decoded,
    /// `key_retry` after the last time it ran out (libwebrtc's timer while
    /// a key frame is required); after, `key_wait` after the later of the
    /// last decoded frame (`last_decoded`) and the last time it ran out.
    /// Only moves later, so a timer set for it earlier fires early at worst
    /// (`on_key_wait` then does nothing).
    pub fn key_wait_due(&self) -> Option<SimTime> {
        let (wait, retry) = (self.p.key_wait?, self.p.key_retry?);
        let from = self.wait_from?;
        Some(match self.last_decoded {
            Some(decoded) => decoded.max(from) + wait,
            None => from + retry,
        })
    }

    /// The stream's first packet, at `now`: libwebrtc's timer has run out
    /// every `key_retry` since the stream started (`origin`), finding it
    /// inactive; it last ran out at the latest such time not after `now`
    /// (or started at `origin`).
    #[cold]
    fn first_packet(&mut self, now: SimTime) {
        let Some(retry) = self.p.key_retry else {
            return;
        };
        let period = retry.as_nanos().max(1);
        let runs = now.saturating_sub(self.origin).as_nanos() / period;
        self.wait_from = Some(self.origin + SimTime::from_nanos(runs * period));
    }

    /// The wait's timer at `now`. libwebrtc's receive stream: when its
    /// frame buffer has had no decodable frame for max_wait_for_frame
    /// (`key_wait`, 3 s; before the first decoded frame, while a key frame
    /// is required, max_wait_for_keyframe: `key_retry`), whether a loss is
    /// known or not, it asks for a key frame, unless no packet of the
    /// stream came in the last 5 s (the stream is not active) or a key
    /// frame's packet came within max_wait_for_keyframe (`key_retry`:
    /// IsReceivingKeyFrame, one is on its way); the wait starts again
    /// either way.
    pub fn on_key_wait(&mut self, now: SimTime) {
        // Frames a loss declared now lets through are decoded first.
        self.finalise(now);
        // A complete key frame still behind an incomplete frame: libwebrtc's
        // frame buffer decodes it, dropping the older frames, so it counts
        // as decoded (when it is shown, or completed if late).
        let waiting_key = self.slots.iter().filter_map(|s| match s {
            Slot::Done(d) if d.key => Some(d.playout.max(d.done)),
            _ => None,
        });
        if let Some(t) = waiting_key.max() {
            self.last_decoded = self.last_decoded.max(Some(t));
        }
        let (Some(due), Some(retry)) = (self.key_wait_due(), self.p.key_retry) else {
            return;
        };
        if now < due {
            return;
        }
        self.wait_from = Some(now);
        let active = self.last_packet.is_some_and(|t| now < t + KEY_WAIT_ACTIVE);
        let coming = self.last_key_packet.is_some_and(|t| now < t + retry);
        if active && !coming {
            self.request_key(now);
        }
    }

    /// Adopts the adaptive estimate for a frame captured at `capture`.
    fn adopt(&mut self, now: SimTime, capture: SimTime) {
        let PlayoutDelay::Adaptive {
            min,
            max,
            quantile,
            window,
        } = self.p.delay
        else {
            return;
        };
        // More than 1.5 frame intervals since the last capture, in whole
        // nanoseconds (2 gap > 3 interval) so that the boundary is exact.
        let starts_spurt = self.last_capture.is_none_or(|c| {
            2 * capture.saturating_sub(c).as_nanos() > 3 * self.p.frame_interval.as_nanos()
        });
        if self.p.video || starts_spurt {
            if let Some(d) = self.quantile(now, quantile, window) {
                self.delay = d.clamp(min, max);
            }
        }
    }

    /// Declares lost every incomplete frame `hold` past its playout time.
    /// Playout times never decrease with the index, so those are the first
    /// pending ones.
    fn finalise(&mut self, now: SimTime) {
        let hold = self.p.hold;
        for s in self.slots.iter_mut() {
            match *s {
                Slot::Done(..) => continue,
                Slot::Pending {
                    playout, capture, ..
                } if playout + hold <= now => {
                    *s = Slot::Done(Decided {
                        outcome: Outcome::Lost,
                        playout,
                        capture,
                        key: false,
                        done: now,
                    });
                }
                _ => break,
            }
        }
        self.render();
    }

    /// Renders decided frames in index order.
    fn render(&mut self) {
        while let Some(&Slot::Done(d)) = self.slots.front() {
            self.slots.pop_front();
            self.decode(d, Some(self.next));
            self.next += 1;
        }
    }

    /// Frame `index` (`None` at the end of the run, when no request can
    /// go out), decided, at its turn: reference decoding shows a complete
    /// delta frame only after a decoded one.
    fn decode(&mut self, d: Decided, index: Option<u32>) {
        let mut outcome = d.outcome;
        if self.p.decode == Decode::Reference {
            match outcome {
                Outcome::Lost => {
                    self.chain = false;
                    if let Some(i) = index {
                        self.declared_loss = Some(self.declared_loss.map_or(i, |d| d.max(i)));
                        self.note_loss(i);
                    }
                }
                _ if d.key || self.chain => {
                    self.chain = true;
                    // Shown at its playout time, or decoded late when it
                    // completed (libwebrtc releases a frame to its
                    // decoder then); not before the frame it refers to,
                    // nor a key frame the wait counted (`on_key_wait`).
                    let at = Some(d.playout.max(d.done));
                    self.last_decoded = self.last_decoded.max(at);
                }
                _ => outcome = Outcome::Undecodable,
            }
        }
        self.count(outcome, d.playout, d.capture);
    }

    fn count(&mut self, outcome: Outcome, at: SimTime, capture: SimTime) {
        match outcome {
            Outcome::Played => {
                self.stats.played += 1;
                self.stats.playout_delay_sum += at - capture;
                self.stats.close_run();
                self.stats.levels[0] += 1;
                self.in_bad_run = false;
                if let Some(prev) = self.last_played.filter(|_| self.p.video) {
                    let gap = (at - prev).as_secs_f64();
                    if at - prev > self.p.pause {
                        // W3C webrtc-stats: a pause, counted apart from
                        // freezes and left out of their mean.
                        self.stats.pauses += 1;
                        self.stats.pause_total += at - prev;
                    } else {
                        if self.gaps.len() == FREEZE_WINDOW {
                            let mean = self.gaps.iter().sum::<f64>() / self.gaps.len() as f64;
                            let limit = (self.p.freeze_factor * mean)
                                .max(mean + self.p.freeze_extra.as_secs_f64());
                            if gap > limit {
                                self.stats.freezes += 1;
                                self.stats.freeze_total += at - prev;
                            }
                            self.gaps.pop_front();
                        }
                        self.gaps.push_back(gap);
                    }
                }
                self.last_played = Some(at);
            }
            Outcome::Late | Outcome::Lost | Outcome::Undecodable => {
                match outcome {
                    Outcome::Late => self.stats.late += 1,
                    Outcome::Lost => self.stats.lost += 1,
                    _ => self.stats.undecodable += 1,
                }
                self.stats.bad_frames += 1;
                self.stats.run += 1;
                if !self.in_bad_run {
                    self.stats.bad_runs += 1;
                    self.in_bad_run = true;
                }
            }
        }
    }

    /// The run ends at `end`: frames complete by then are decided; an
    /// incomplete frame whose playout time has passed is lost; the rest
    /// are still in flight and not counted.
    pub fn finish(&mut self, end: SimTime) {
        self.finalise(end);
        let slots = std::mem::take(&mut self.slots);
        for s in slots {
            match s {
                Slot::Done(d) => self.decode(d, None),
                Slot::Pending {
                    playout, capture, ..
                } if playout <= end => {
                    let lost = Decided {
                        outcome: Outcome::Lost,
                        playout,
                        capture,
                        key: false,
                        done: end,
                    };
                    self.decode(lost, None);
                }
                // Still in flight: not counted (the frames after it are).
                _ => {}
            }
        }
        self.stats.close_run();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn fixed(d: u64) -> Playout {
        Playout::new(PlayoutParams {
            delay: PlayoutDelay::Fixed(ms(d)),
            video: true,
            frame_interval: ms(40),
            hold: ms(1000),
            freeze_factor: 3.0,
            freeze_extra: ms(150),
            pause: ms(5000),
            decode: Decode::Independent,
            key_retry: None,
            key_wait: None,
            retransmission: false,
            skip_recovered: false,
        })
    }

    fn tag(index: u32, packets: u32) -> FrameTag {
        FrameTag::test_frame(index, packets)
    }

    /// Frame 0 complete in time, frame 1 complete 10 ms after its playout
    /// time, frame 2 missing a packet, frame 3 never seen, frame 4 played.
    #[test]
    fn played_late_and_lost_frames_with_a_fixed_delay() {
        let mut p = fixed(100);
        p.on_packet(ms(50), &tag(0, 2));
        p.on_packet(ms(90), &tag(0, 2)); // complete at 90 <= 100
        p.on_packet(ms(120), &tag(1, 2));
        p.on_packet(ms(150), &tag(1, 2)); // complete at 150 > 140
        p.on_packet(ms(170), &tag(2, 2)); // one of two
        p.on_packet(ms(200), &tag(4, 1)); // 3 skipped; 4 due at 260
        p.finish(ms(5000));
        let s = &p.stats;
        assert_eq!((s.played, s.late, s.lost), (2, 1, 2));
        assert_eq!((s.bad_runs, s.bad_frames), (1, 3));
        // One run of 3 (frames 1-3): level 2; frames 0 and 4 at level 0.
        assert_eq!(s.levels, [2, 0, 3, 0, 0, 0]);
        // Completed: frame 0 in 90 ms, frame 1 in 110, frame 4 in 40.
        assert_eq!(s.frame_delay.summary_ns()[0], ms(80).as_nanos() as f64);
        assert_eq!(s.playout_delay_sum, ms(200));
    }

    /// A fixed 100 ms buffer decoding by reference, asking again for a
    /// key frame after 200 ms.
    fn by_reference() -> Playout {
        Playout::new(PlayoutParams {
            decode: Decode::Reference,
            key_retry: Some(ms(200)),
            retransmission: false,
            skip_recovered: false,
            ..fixed(100).p
        })
    }

    /// Frame `i` of a stream captured every 40 ms: `key` or not, in
    /// `packets` packets.
    fn frame(i: u32, packets: u32, key: bool) -> FrameTag {
        FrameTag {
            key,
            ..tag(i, packets)
        }
    }

    /// Frames 0-40, one packet each 10 ms after capture but frame 3 (two
    /// packets, the second lost); key frames 0 and 6. By reference, frame
    /// 3 is lost and 4 and 5 cannot be decoded; the key frame request goes
    /// out when frame 4's packet shows frame 3 incomplete (at 170 ms), and
    /// not again: key frame 6 completed before the next try was due, and
    /// before frame 3 was declared lost (at 1220 ms).
    #[test]
    fn by_reference_a_loss_spoils_the_frames_up_to_the_next_key_frame() {
        let feed = |p: &mut Playout| {
            let mut asked = vec![];
            for i in 0..=40u32 {
                let packets = if i == 3 { 2 } else { 1 };
                p.on_packet(
                    ms(40 * i as u64 + 10),
                    &frame(i, packets, i % 6 == 0 && i < 7),
                );
                if std::mem::take(&mut p.key_request) {
                    asked.push(40 * i + 10);
                }
            }
            p.finish(ms(10_000));
            asked
        };
        let mut p = by_reference();
        assert_eq!(feed(&mut p), [170]);
        let s = &p.stats;
        assert_eq!(
            (s.played, s.lost, s.undecodable, s.key_requests),
            (38, 1, 2, 1)
        );
        assert_eq!((s.bad_runs, s.bad_frames, s.levels[2]), (1, 3, 3));
        // Only shown frames count in the playout delay.
        assert_eq!(s.playout_delay_sum, ms(100 * 38));
        let mut p = fixed(100);
        assert!(feed(&mut p).is_empty());
        assert_eq!(
            (p.stats.played, p.stats.lost, p.stats.undecodable),
            (40, 1, 0)
        );
    }

    /// With retransmission, a frame's missing packet may still come: no
    /// request when the next frame shows it incomplete. Frame 3's second
    /// packet comes again at 250 ms, past its 220 ms playout time: frame 3
    /// is late, decoded, and the chain holds (no undecodable frame). Never coming, frame 3 is lost
    /// at its hold (1000 ms after its 220 ms playout time): the request
    /// goes out then, at the first packet after it, and again 200 ms on.
    #[test]
    fn with_retransmission_a_loss_asks_for_a_key_frame_only_at_the_hold() {
        let feed = |p: &mut Playout, repaired: bool| {
            let mut asked = vec![];
            for i in 0..=40u32 {
                let at = 40 * i as u64 + 10;
                let packets = if i == 3 { 2 } else { 1 };
                p.on_packet(ms(at), &frame(i, packets, i == 0));
                if repaired && i == 6 {
                    p.on_packet(ms(at), &frame(3, 2, false));
                }
                if std::mem::take(&mut p.key_request) {
                    asked.push(at);
                }
            }
            p.finish(ms(10_000));
            asked
        };
        let rtx = || {
            Playout::new(PlayoutParams {
                retransmission: true,
                skip_recovered: false,
                ..by_reference().p
            })
        };
        let mut p = rtx();
        assert!(feed(&mut p, true).is_empty());
        let s = &p.stats;
        assert_eq!((s.played, s.late, s.lost, s.undecodable), (40, 1, 0, 0));
        let mut p = rtx();
        assert_eq!(feed(&mut p, false), [1250, 1450]);
        let s = &p.stats;
        assert_eq!(
            (s.played, s.lost, s.undecodable, s.key_requests),
            (3, 1, 37, 2)
        );
        // Without retransmission the same loss asks at once (frame 4, 170 ms).
        let mut p = by_reference();
        assert_eq!(feed(&mut p, false)[0], 170);
    }

    /// No key frame after the loss: the request goes out when the loss is
    /// seen (frame 1 skipped, at frame 2's arrival, 90 ms) and again at
    /// the first packet 200 ms or more after the last request; none
    /// without `key_retry`. Every frame after the loss is undecodable.
    #[test]
    fn by_reference_the_key_frame_request_repeats_until_one_comes() {
        let feed = |p: &mut Playout| {
            let mut asked = vec![];
            for i in (0..=30u32).filter(|&i| i != 1) {
                p.on_packet(ms(40 * i as u64 + 10), &frame(i, 1, i == 0));
                if std::mem::take(&mut p.key_request) {
                    asked.push(40 * i + 10);
                }
            }
            p.finish(ms(10_000));
            asked
        };
        let mut p = by_reference();
        assert_eq!(feed(&mut p), [90, 290, 490, 690, 890, 1090]);
        let s = &p.stats;
        assert_eq!(
            (s.played, s.lost, s.undecodable, s.key_requests),
            (1, 1, 29, 6)
        );
        let mut p = Playout::new(PlayoutParams {
            key_retry: None,
            retransmission: false,
            skip_recovered: false,
            ..by_reference().p
        });
        assert!(feed(&mut p).is_empty());
        assert_eq!((p.stats.undecodable, p.stats.key_requests), (29, 0));
    }

    /// A buffer decoding by reference that waits 3 s (libwebrtc's
    /// max_wait_for_frame) before it asks for a key frame.
    fn waiting() -> Playout {
        Playout::new(PlayoutParams {
            key_wait: Some(ms(3000)),
            ..by_reference().p
        })
    }

    /// Packet `tag` at `at` ms, after the wait's timer has fired at each
    /// time it was due before then (as the member's timer does); the
    /// times of the requests are added to `asked`.
    fn wait_then_take(p: &mut Playout, at: u64, tag: &FrameTag, asked: &mut Vec<u64>) {
        wait_until(p, at, asked);
        p.on_packet(ms(at), tag);
        if std::mem::take(&mut p.key_request) {
            asked.push(at);
        }
    }

    /// Frames 0 (a key frame) to `last`, each in one packet 10 ms after
    /// its capture, through `wait_then_take`.
    fn on_time(p: &mut Playout, last: u32, asked: &mut Vec<u64>) {
        for i in 0..=last {
            wait_then_take(p, 40 * i as u64 + 10, &frame(i, 1, i == 0), asked);
        }
    }

    fn wait_until(p: &mut Playout, at: u64, asked: &mut Vec<u64>) {
        while let Some(due) = p.key_wait_due().filter(|&d| d <= ms(at)) {
            p.on_key_wait(due);
            if std::mem::take(&mut p.key_request) {
                asked.push(due.as_nanos() / 1_000_000);
            }
        }
    }

    /// With `key_wait` (3 s): frame 10 is missing, frame 9 (shown at
    /// 460 ms) is the last decoded, so the wait runs out at 3460 ms and
    /// again 3 s later (6460 ms), a request each time; a key frame (100)
    /// ends the requests after the first. A key frame's packet within
    /// 200 ms when the wait runs out holds the request back, and the wait
    /// starts again.
    #[test]
    fn with_a_wait_the_key_frame_request_waits_for_no_decodable_frame() {
        let feed = |p: &mut Playout, missing: u32, keys: &[u32], last: u32| {
            let mut asked = vec![];
            for i in (0..=last).filter(|&i| i != missing) {
                let key = keys.contains(&i);
                wait_then_take(p, 40 * i as u64 + 10, &frame(i, 1, key), &mut asked);
            }
            p.finish(ms(10_000));
            asked
        };
        let mut p = waiting();
        assert_eq!(feed(&mut p, 10, &[0], 170), [3460, 6460]);
        let s = &p.stats;
        assert_eq!(
            (s.played, s.lost, s.undecodable, s.key_requests),
            (10, 1, 160, 2)
        );
        let mut p = waiting();
        assert_eq!(feed(&mut p, 10, &[0, 100], 170), [3460]);
        assert_eq!((p.stats.played, p.stats.undecodable), (81, 89));
        // Key frame 86's first packet (3450 ms) came within 200 ms when
        // the wait runs out (3460 ms; its second packet never comes): the
        // request is held back and the wait starts again, so the request
        // goes 3 s later (6460 ms). At 3650 ms it would not be held back.
        for (key_at, asked_at) in [(86, 6460), (81, 3460)] {
            let mut p = waiting();
            let mut asked = vec![];
            for i in (0..=170u32).filter(|&i| i != 10) {
                let (packets, key) = (if i == key_at { 2 } else { 1 }, i == 0 || i == key_at);
                wait_then_take(
                    &mut p,
                    40 * i as u64 + 10,
                    &frame(i, packets, key),
                    &mut asked,
                );
            }
            assert_eq!(
                asked,
                [asked_at, asked_at + 3000][..1 + (key_at == 81) as usize]
            );
        }
    }

    /// Before the first decoded frame (key frame 0 lost) the wait runs out
    /// every `key_retry` (200 ms) from the stream's start, as libwebrtc's
    /// does while a key frame is required, and not at the loss: frame 1,
    /// the first to complete (50 ms), is not a key frame and asks at once;
    /// then 200 and 400 ms. Key frame 13 (530 ms) is decoded, and the
    /// frames after it to the last (shown at 4100 ms): the 3 s wait does
    /// not run out before 7000 ms. With no key frame the
    /// requests go on until the stream has sent nothing for 5 s (the last
    /// packet at 490 ms: 5400 ms asks, 5600 does not). From a start at
    /// 30 ms the timer runs out at 230, 430, 630 ms... A key frame's packet
    /// 70 ms before the wait runs out holds the request back.
    #[test]
    fn before_the_first_decoded_frame_the_wait_runs_every_key_retry() {
        // Frames 1 to `last`, one packet each 10 ms after capture (`key`:
        // key frame 13, in `key_packets` packets, the first alone coming),
        // then the timer until `end` ms.
        let feed = |start: u64, last: u32, key_packets: u32, end: u64| {
            let (mut p, mut asked) = (waiting().starting_at(ms(start)), vec![]);
            for i in 1..=last {
                let tag = match i {
                    13 => frame(i, key_packets, true),
                    _ => frame(i, 1, false),
                };
                wait_then_take(&mut p, 40 * i as u64 + 10, &tag, &mut asked);
            }
            wait_until(&mut p, end, &mut asked);
            (asked, p)
        };
        let (asked, p) = feed(0, 100, 1, 7_000);
        assert_eq!(asked, [50, 200, 400]);
        assert_eq!((p.stats.key_requests, p.stats.undecodable), (3, 12));
        let (asked, _) = feed(0, 12, 1, 5_600);
        let every: Vec<u64> = (1..=27).map(|k| 200 * k).collect();
        assert_eq!(asked, [&[50][..], &every].concat());
        assert_eq!(feed(30, 12, 1, 500).0, [50, 230, 430]);
        // The first packet 410 ms in (frames 0-9 never come): the timer,
        // running since 30 ms, last ran out at 230 ms; next at 430 ms.
        let (mut p, mut asked) = (waiting().starting_at(ms(30)), vec![]);
        for i in 10..=12u32 {
            wait_then_take(&mut p, 40 * i as u64 + 10, &frame(i, 1, false), &mut asked);
        }
        wait_until(&mut p, 700, &mut asked);
        assert_eq!(asked, [410, 430, 630]);
        // Frame 13's first packet at 530 ms holds back the request at
        // 600 ms, not the one at 800 ms (the frame never completes).
        let (asked, _) = feed(0, 13, 2, 900);
        assert_eq!(asked, [50, 200, 400, 800]);
    }

    /// Frames 0 and 1 never come. When the first frame to complete (2, at
    /// 90 ms) is a key frame, nothing is asked for; when it is not (key
    /// frame 3 follows), it asks at once, and not again once frame 3 is
    /// decoded. A stream that starts with a delta frame (0, then key
    /// frame 1) asks at once too; without `key_wait` it asks for nothing,
    /// as no frame was lost.
    #[test]
    fn only_a_first_frame_that_is_not_a_key_frame_asks_at_once() {
        let feed = |mut p: Playout, first: u32, key: u32| {
            let mut asked = vec![];
            for i in first..=60u32 {
                let tag = frame(i, 1, i == key);
                wait_then_take(&mut p, 40 * i as u64 + 10, &tag, &mut asked);
            }
            wait_until(&mut p, 5000, &mut asked);
            (asked, p.stats.played, p.stats.key_requests)
        };
        assert_eq!(feed(waiting(), 2, 2), (vec![], 59, 0));
        assert_eq!(feed(waiting(), 2, 3), (vec![90], 58, 1));
        assert_eq!(feed(waiting(), 0, 1), (vec![10], 60, 1));
        assert_eq!(feed(by_reference(), 0, 1), (vec![], 60, 0));
    }

    /// The wait runs on a timer, not at packets: frames 21-200 never come
    /// (an outage from 850 to 8050 ms). The wait runs out at 3900 ms
    /// (frame 20 shown at 900 ms) with no packet since 810 ms: a request
    /// all the same, the stream active (a packet within 5 s). At 6900 ms
    /// it has been inactive for over 5 s: no request. At 9900 ms packets
    /// came again (from 8050 ms): a request, not at their return.
    #[test]
    fn the_wait_runs_out_in_an_outage_while_the_stream_is_active() {
        let mut p = waiting();
        let mut asked = vec![];
        on_time(&mut p, 20, &mut asked);
        // A timer set for an earlier time fires before the wait runs out:
        // nothing happens.
        p.on_key_wait(ms(3899));
        assert!(!p.key_request);
        assert_eq!(p.key_wait_due(), Some(ms(3900)));
        for i in 201..=300u32 {
            wait_then_take(&mut p, 40 * i as u64 + 10, &frame(i, 1, false), &mut asked);
        }
        assert_eq!(asked, [3900, 9900]);
    }

    /// The bounds are libwebrtc's (`now - last < 5 s`, `now - last key
    /// packet < 200 ms`): the wait running out 5 s after the last packet
    /// finds the stream inactive, and 200 ms after a key frame's packet
    /// finds no key frame coming. Frame 20, shown at 900 ms, is the last
    /// decoded; the wait runs out at 3900 and 6900 ms.
    #[test]
    fn the_wait_s_bounds_are_libwebrtc_s() {
        // Frames 0-20, then one packet of `tag` at `at` ms; the requests
        // until `end` ms.
        let asked = |at: u64, tag: FrameTag, end: u64| {
            let (mut p, mut asked) = (waiting(), vec![]);
            on_time(&mut p, 20, &mut asked);
            wait_then_take(&mut p, at, &tag, &mut asked);
            wait_until(&mut p, end, &mut asked);
            asked
        };
        // The last packet (frame 22's, undecodable) at 1900 ms: active at
        // 3900 ms, not at 6900 ms, exactly 5 s later.
        assert_eq!(asked(1900, frame(22, 1, false), 7000), [3900]);
        // Key frame 90's first packet (of two) at 3700 ms: exactly 200 ms
        // before the wait runs out, so none is taken to be coming.
        assert_eq!(asked(3700, frame(90, 2, true), 4000), [3900]);
    }

    /// A complete key frame counts as decoded when its turn comes even if
    /// an older frame is still incomplete (libwebrtc's frame buffer drops
    /// the older ones): frames 10-69 never come, frame 70 lacks a packet
    /// (lost only at 3900 ms, its playout time plus the hold), key frame
    /// 71 is complete at 2850 ms (shown at 2940 ms). The wait, from frame
    /// 9's 460 ms, would run out at 3460 ms; frame 71 moves it to 5940 ms,
    /// and the frames after it keep it moving: no request.
    #[test]
    fn a_complete_key_frame_behind_an_incomplete_one_counts_as_decoded() {
        let mut p = waiting();
        let mut asked = vec![];
        for i in (0..=150u32).filter(|&i| !(10..70).contains(&i)) {
            let tag = frame(i, if i == 70 { 2 } else { 1 }, i == 0 || i == 71);
            wait_then_take(&mut p, 40 * i as u64 + 10, &tag, &mut asked);
        }
        assert!(asked.is_empty(), "{asked:?}");
        assert_eq!((p.stats.lost, p.stats.undecodable), (61, 0));
    }

    /// A frame is decoded no earlier than the frame it refers to: frame
    /// 6's second packet comes at 1300 ms (late, playout 340 ms); frame 7
    /// completed at 290 ms for its 380 ms playout, but is decoded after
    /// frame 6, at 1300 ms. Nothing comes after: the wait runs out at
    /// 4300 ms, not 3380.
    #[test]
    fn a_frame_is_decoded_no_earlier_than_the_one_it_refers_to() {
        let mut p = waiting();
        let mut asked = vec![];
        on_time(&mut p, 5, &mut asked);
        for (at, tag) in [
            (250, frame(6, 2, false)),
            (290, frame(7, 1, false)),
            (1300, frame(6, 2, false)),
        ] {
            wait_then_take(&mut p, at, &tag, &mut asked);
        }
        wait_until(&mut p, 5000, &mut asked);
        assert_eq!(asked, [4300]);
        assert_eq!((p.stats.played, p.stats.late), (7, 1));
    }

    /// A late frame counts as decoded when it completes, as libwebrtc
    /// releases it to its decoder then: frames 6 on come 4 s after their
    /// capture, all late (the buffer's delay is 100 ms) but decodable.
    /// Nothing is decoded from frame 5 (shown at 300 ms) until frame 6
    /// completes (at 4240 ms): one request, at 3300 ms, and none while the
    /// late frames come. Counted from their playout times instead, the
    /// wait would run out every 3 s.
    #[test]
    fn a_late_frame_decoded_restarts_the_wait_when_it_completes() {
        let mut p = waiting();
        let mut asked = vec![];
        for i in 0..=300u32 {
            let at = 40 * i as u64 + if i < 6 { 10 } else { 4000 };
            wait_then_take(&mut p, at, &frame(i, 1, i == 0), &mut asked);
        }
        assert_eq!(asked, [3300]);
        assert_eq!(
            (p.stats.played, p.stats.late, p.stats.undecodable),
            (6, 295, 0)
        );
    }

    /// A key frame right after the lost frame ends the need: one request,
    /// made when the key frame's first packet shows the loss, and none
    /// after it completes (nor when frame 3 is declared lost, at 1220 ms).
    #[test]
    fn by_reference_a_key_frame_right_after_the_loss_ends_the_requests() {
        let mut p = by_reference();
        let mut asked = vec![];
        for i in 0..=40u32 {
            // Frame 3 loses its second packet; key frame 4 has two.
            let packets = if i == 3 || i == 4 { 2 } else { 1 };
            for _ in 0..packets - (i == 3) as u32 {
                p.on_packet(ms(40 * i as u64 + 10), &frame(i, packets, i == 0 || i == 4));
                if std::mem::take(&mut p.key_request) {
                    asked.push(40 * i + 10);
                }
            }
        }
        p.finish(ms(10_000));
        assert_eq!(asked, [170]);
        let s = &p.stats;
        assert_eq!(
            (s.played, s.lost, s.undecodable, s.key_requests),
            (40, 1, 0, 1)
        );
    }

    /// Once the path has reordered a packet, a gap is no loss: frame 3's
    /// second packet comes after frame 4's, no key frame is asked for and
    /// the chain holds. Before the reordering is known the same gap asks,
    /// at frame 4's packet, and again until a key frame comes.
    #[test]
    fn by_reference_a_path_that_reorders_asks_only_for_frames_declared_lost() {
        let feed = |p: &mut Playout| {
            let mut asked = vec![];
            for i in 0..=10u32 {
                let packets = if i == 3 { 2 } else { 1 };
                p.on_packet(ms(40 * i as u64 + 10), &frame(i, packets, i == 0));
                if i == 4 {
                    p.on_packet(ms(175), &frame(3, 2, false));
                }
                if std::mem::take(&mut p.key_request) {
                    asked.push(40 * i + 10);
                }
            }
            p.finish(ms(10_000));
            asked
        };
        let mut p = by_reference();
        assert!(p.infers_loss_from_order());
        assert_eq!(feed(&mut p)[0], 170);
        let mut p = by_reference();
        p.on_reordered();
        assert!(!p.infers_loss_from_order());
        assert!(feed(&mut p).is_empty());
        let s = &p.stats;
        assert_eq!(
            (s.played, s.lost, s.undecodable, s.key_requests),
            (11, 0, 0, 0)
        );
        assert!(!fixed(100).infers_loss_from_order(), "independent decoding");
    }

    /// The first packet out of order withdraws the losses inferred from
    /// gaps before it: frame 3's second packet comes after frame 4's
    /// first, which asked for a key frame (170 ms); told of the reordering
    /// before taking that packet, the buffer asks no more, and the chain
    /// holds. A key frame (3) that completes after a gap took it for lost
    /// ends the need by itself. A frame declared lost before the
    /// reordering still needs its key frame (frame 1, at its hold).
    #[test]
    fn the_first_packet_out_of_order_withdraws_the_losses_inferred_before() {
        let feed = |p: &mut Playout, key3: bool, tell: bool| {
            let mut asked = vec![];
            for i in 0..=20u32 {
                let packets = if i == 3 { 2 } else { 1 };
                p.on_packet(
                    ms(40 * i as u64 + 10),
                    &frame(i, packets, i == 0 || (key3 && i == 3)),
                );
                if i == 4 {
                    if tell {
                        p.on_reordered();
                    }
                    p.on_packet(ms(175), &frame(3, 2, key3));
                }
                if std::mem::take(&mut p.key_request) {
                    asked.push(40 * i + 10);
                }
            }
            p.finish(ms(10_000));
            asked
        };
        for key3 in [false, true] {
            let mut p = by_reference();
            assert_eq!(feed(&mut p, key3, true), [170], "key frame 3: {key3}");
            let s = &p.stats;
            assert_eq!((s.played, s.undecodable, s.key_requests), (21, 0, 1));
        }
        // Not told, a key frame completing at the inferred index ends the
        // need as well; a delta frame does not (the requests go on).
        let mut p = by_reference();
        assert_eq!(feed(&mut p, true, false), [170]);
        let mut p = by_reference();
        assert_eq!(feed(&mut p, false, false), [170, 370, 570, 770]);
        // Frame 1 declared lost (its packet never came; hold 100 ms), then
        // the reordering: the need for a key frame after 1 stands.
        let mut p = Playout::new(PlayoutParams {
            hold: ms(100),
            ..by_reference().p
        });
        p.on_packet(ms(10), &frame(0, 1, true));
        p.on_packet(ms(50), &frame(1, 2, false));
        p.on_packet(ms(300), &frame(2, 1, false));
        assert_eq!(p.stats.lost, 1);
        p.key_request = false;
        p.on_reordered();
        p.on_packet(ms(500), &frame(3, 1, false));
        assert!(p.key_request, "frame 1's need stands");
    }

    /// A loss seen only when its frame is declared lost: frame 3 is
    /// incomplete and the source then pauses for 1.5 s, so frame 4's
    /// first packet finds frame 3 past its hold (1000 ms after its playout
    /// time) before it shows the gap. Key frame 4 then ends the need: one
    /// request.
    #[test]
    fn by_reference_a_loss_declared_at_the_hold_asks_once() {
        let mut p = by_reference();
        let mut asked = vec![];
        let early = (0..=3u32).map(|i| (i, 40 * i as u64 + 10));
        let late = (4..=20u32).map(|i| (i, 40 * i as u64 + 1500));
        for (i, at) in early.chain(late) {
            let packets = if i == 3 || i == 4 { 2 } else { 1 };
            let tag = FrameTag {
                capture: ms(at - 10),
                ..frame(i, packets, i == 0 || i == 4)
            };
            for _ in 0..packets - (i == 3) as u32 {
                p.on_packet(ms(at), &tag);
                if std::mem::take(&mut p.key_request) {
                    asked.push(at);
                }
            }
        }
        p.finish(ms(10_000));
        assert_eq!(asked, [40 * 4 + 1500]);
        assert_eq!(
            (p.stats.lost, p.stats.undecodable, p.stats.key_requests),
            (1, 0, 1)
        );
    }

    /// Only reference decoding with requests may act on a packet (the
    /// member holds packets for a batch otherwise).
    #[test]
    fn only_reference_decoding_with_requests_asks_for_key_frames() {
        assert!(by_reference().asks_for_key_frames());
        let quiet = |decode, key_retry| {
            Playout::new(PlayoutParams {
                decode,
                key_retry,
                ..fixed(100).p
            })
            .asks_for_key_frames()
        };
        assert!(!quiet(Decode::Reference, None));
        assert!(!quiet(Decode::Independent, Some(ms(200))));
    }

    /// A retransmission list that overflows asks for a key frame: with the
    /// wait at once, however recently one was asked for (libwebrtc);
    /// without, unless one was within `key_retry` (200 ms). Not when the
    /// buffer asks for none.
    #[test]
    fn a_full_retransmission_list_asks_for_a_key_frame() {
        for (mut p, asked) in [(by_reference(), 2), (waiting(), 3)] {
            for at in [100, 150, 300] {
                p.on_nack_list_full(ms(at));
            }
            assert!(p.key_request);
            assert_eq!(p.stats.key_requests, asked);
        }
        let mut p = fixed(100);
        p.on_nack_list_full(ms(100));
        assert!(!p.key_request);
        assert_eq!(p.stats.key_requests, 0);
    }

    /// A late frame is decoded, not shown: the frame after it decodes. A
    /// delta frame first in the stream has no reference.
    #[test]
    fn by_reference_a_late_frame_keeps_the_chain() {
        let mut p = by_reference();
        p.on_packet(ms(10), &frame(0, 1, true));
        p.on_packet(ms(150), &frame(1, 1, false)); // due at 140
        p.on_packet(ms(160), &frame(2, 1, false));
        p.finish(ms(1000));
        let s = &p.stats;
        assert_eq!(
            (s.played, s.late, s.undecodable, s.key_requests),
            (2, 1, 0, 0)
        );
        let mut p = by_reference();
        p.on_packet(ms(10), &frame(0, 1, false));
        p.on_packet(ms(50), &frame(1, 1, true));
        p.finish(ms(1000));
        assert_eq!((p.stats.played, p.stats.undecodable), (1, 1));
    }

    /// 40 frames 40 ms apart, then a 600 ms gap: one freeze of 600 ms.
    #[test]
    fn a_long_gap_between_played_frames_is_a_freeze() {
        let mut p = fixed(50);
        for i in 0..40 {
            p.on_packet(ms(40 * i + 10), &tag(i as u32, 1));
        }
        for i in 40..55 {
            p.on_packet(ms(40 * i + 610), &tag(i as u32, 1)); // all late
        }
        let t = FrameTag {
            index: 55,
            packets: 1,
            capture: ms(40 * 55 + 600),
            key: false,
            bytes: 1000,
        };
        p.on_packet(ms(40 * 55 + 610), &t);
        p.finish(ms(10_000));
        assert_eq!((p.stats.late, p.stats.freezes), (15, 1));
        assert_eq!(p.stats.freeze_total, ms(40 * 55 + 650 - (40 * 39 + 50)));
    }

    /// The freeze rule's mean is of the last 30 gaps: after 29 gaps of 40
    /// ms and one of 100 (mean 42 ms, limit max(126, 192) ms) a gap of 250
    /// ms is a freeze; it would not be against the last gap alone (limit
    /// 300 ms).
    #[test]
    fn the_freeze_rule_averages_thirty_gaps() {
        let p = played_with_gaps(std::iter::repeat_n(40, 30).chain([100, 250]));
        assert_eq!((p.stats.played, p.stats.freezes), (33, 1));
        assert_eq!(p.stats.freeze_total, ms(250));
    }

    /// Frames captured the given gaps (ms) apart, each complete 10 ms
    /// after its capture and played (a fixed delay of 50 ms).
    fn played_with_gaps(gaps: impl Iterator<Item = u64>) -> Playout {
        let mut p = fixed(50);
        let mut t = 0;
        let mut played_at = vec![t];
        for g in gaps {
            t += g;
            played_at.push(t);
        }
        for (i, &c) in played_at.iter().enumerate() {
            let tag = FrameTag {
                index: i as u32,
                packets: 1,
                capture: ms(c),
                key: false,
                bytes: 1000,
            };
            p.on_packet(ms(c + 10), &tag);
        }
        p.finish(ms(100_000));
        p
    }

    /// The limit is max(3 mean, mean + 150 ms), over: at a mean of 40 ms
    /// a gap of 150 ms is over 3 means but under the mean + 150 ms (no
    /// freeze); at a mean of 125 ms a gap of exactly 3 means (375 ms, all
    /// exact in binary) is not over it.
    #[test]
    fn a_freeze_is_a_gap_over_the_larger_limit() {
        for (gap, mean) in [(150, 40), (375, 125)] {
            let p = played_with_gaps(std::iter::repeat_n(mean, 30).chain([gap]));
            assert_eq!((p.stats.played, p.stats.freezes), (32, 0), "{gap} ms");
        }
        let p = played_with_gaps(std::iter::repeat_n(125, 30).chain([376]));
        assert_eq!(p.stats.freezes, 1);
    }

    /// Frames 40 ms apart with the sender pausing twice: a gap of 6 s
    /// between played frames is a pause, not a freeze, and stays out of
    /// the freeze rule's mean (with it the mean of the last 30 gaps would
    /// be 240 ms and the 600 ms gap after it no freeze); a gap of exactly
    /// 5 s is not over the pause threshold, so it is a freeze.
    #[test]
    fn a_gap_over_five_seconds_is_a_pause_not_a_freeze() {
        let mut p = fixed(50);
        let mut capture = ms(0);
        let mut index = 0;
        let mut frames = |p: &mut Playout, n: usize, first_gap: SimTime| {
            for k in 0..n {
                capture += if index == 0 {
                    ms(0)
                } else if k == 0 {
                    first_gap
                } else {
                    ms(40)
                };
                let t = FrameTag {
                    index,
                    packets: 1,
                    capture,
                    key: false,
                    bytes: 1000,
                };
                p.on_packet(capture + ms(10), &t);
                index += 1;
            }
        };
        frames(&mut p, 40, ms(40));
        frames(&mut p, 29, ms(6000)); // a pause; then 29 gaps of 40 ms
        frames(&mut p, 40, ms(600)); // a freeze against a 40 ms mean
        frames(&mut p, 1, ms(5000)); // exactly 5 s: a freeze
        p.finish(ms(60_000));
        let s = &p.stats;
        assert_eq!((s.played, s.late, s.lost), (110, 0, 0));
        assert_eq!((s.pauses, s.pause_total), (1, ms(6000)));
        assert_eq!((s.freezes, s.freeze_total), (2, ms(5600)));
    }

    fn webrtc(decode: u64) -> Playout {
        Playout::new(PlayoutParams {
            delay: PlayoutDelay::Webrtc {
                min: ms(0),
                max: ms(10_000),
                decode: ms(decode),
                render: ms(10),
            },
            ..fixed(100).p
        })
    }

    /// libwebrtc's timing on a steady path (frames 40 ms apart, each 50 ms
    /// on its way, all the same size): a frame plays at its expected
    /// completion plus the target, 1 ms of noise floor, 10 of OS jitter,
    /// the decode time and 10 of render delay. The first frame, with no
    /// fit yet, is due on arrival and late. A frame 15 ms slower is late:
    /// it must be complete decode + render before its playout time.
    #[test]
    fn webrtc_timing_plays_at_the_path_delay_plus_its_target() {
        for decode in [0u64, 5] {
            let mut p = webrtc(decode);
            for i in 0..200 {
                let t = tag(i, 1);
                let slow = if i == 150 { ms(15) } else { SimTime::ZERO };
                p.on_packet(t.capture + ms(50) + slow, &t);
            }
            p.finish(ms(40 * 200 + 1000));
            assert_eq!((p.stats.played, p.stats.late), (198, 2), "decode {decode}");
            let mean = p.stats.playout_delay_sum.as_secs_f64() * 1e3 / 198.0;
            let expected = (50 + 21 + decode) as f64;
            assert!((mean - expected).abs() < 0.05, "decode {decode}: {mean}");
        }
    }

    /// A frame that a retransmission completed feeds neither the fit nor
    /// the jitter estimate (libwebrtc's delayed_by_retransmission).
    #[test]
    fn webrtc_timing_leaves_out_recovered_frames() {
        let mut p = webrtc(0);
        for i in 0..50 {
            let t = tag(i, 1);
            p.on_packet(t.capture + ms(50 + (i as u64 % 3) * 7), &t);
        }
        let before = format!("{:?}", p.timing);
        let t = tag(50, 1);
        p.on_recovered(t.capture + ms(150), &t);
        assert_eq!(format!("{:?}", p.timing), before);
        let t = tag(51, 1);
        p.on_packet(t.capture + ms(150), &t);
        assert_ne!(format!("{:?}", p.timing), before);
    }

    /// Adaptive: with a constant 60 ms transit the delay is 60 ms, and
    /// every frame plays but the first, which came before any estimate (it
    /// gets the minimum, 20 ms). Then the transit alternates 50 and 150 ms
    /// in blocks of 10 frames: the 95th percentile of the last 2 s is
    /// 150 ms once a 150 ms frame completed; with the median (0.5) the
    /// 150 ms frames of a block are late while the window holds more 50 ms
    /// ones.
    #[test]
    fn adaptive_delay_follows_the_transit_within_bounds() {
        let mut p = Playout::new(PlayoutParams {
            delay: PlayoutDelay::Adaptive {
                min: ms(20),
                max: ms(500),
                quantile: 0.95,
                window: ms(2000),
            },
            ..fixed(0).p
        });
        for i in 0..100u64 {
            p.on_packet(ms(40 * i + 60), &tag(i as u32, 1));
        }
        assert_eq!(p.delay(), ms(60));
        p.finish(ms(10_000));
        assert_eq!((p.stats.played, p.stats.late), (99, 1));
        let run = |q: f64| {
            let mut p = Playout::new(PlayoutParams {
                delay: PlayoutDelay::Adaptive {
                    min: ms(20),
                    max: ms(500),
                    quantile: q,
                    window: ms(2000),
                },
                ..fixed(0).p
            });
            for i in 0..200u64 {
                let transit = if (i / 10) % 2 == 0 { 50 } else { 150 };
                p.on_packet(ms(40 * i + transit), &tag(i as u32, 1));
            }
            p.finish(ms(20_000));
            (p.stats.played, p.stats.late)
        };
        // Late: the first frame, and the first frame of the first 150 ms
        // block (no 150 ms frame had completed); from its second frame on,
        // one 150 ms delay in the window is above the 95th percentile rank.
        assert_eq!(run(0.95), (198, 2));
        let (played, late) = run(0.5);
        assert!(late > 50 && played + late == 200, "{played} {late}");
    }

    /// The IW10 study's scale: runs of 1, 2-3, 4-5, 6-9 and 10 or more
    /// frames not played are levels 1 to 5 (each frame of a run counted
    /// at its run's level).
    #[test]
    fn runs_of_frames_not_played_by_level() {
        for (run, level) in [(1, 1), (3, 2), (4, 3), (5, 3), (6, 4), (9, 4), (10, 5)] {
            let mut p = fixed(100);
            // Frame 0 played, frames 1..=run lost (never seen), then one
            // played.
            p.on_packet(ms(50), &tag(0, 1));
            p.on_packet(ms(40 * (run + 1) + 50), &tag(run as u32 + 1, 1));
            p.finish(ms(10_000));
            let mut want = [0; 6];
            want[0] = 2;
            want[level] = run;
            assert_eq!(p.stats.levels, want, "a run of {run}");
        }
    }

    /// An incomplete frame is declared lost `hold` after its playout
    /// time, at the next packet (not only at the end); at the end, one
    /// whose playout time is still ahead is in flight, not lost.
    #[test]
    fn incomplete_frames_are_lost_after_the_hold_and_not_before_their_time() {
        let mut p = fixed(100);
        p.on_packet(ms(50), &tag(0, 2)); // one of two; playout at 100
        p.on_packet(ms(1099), &tag(1, 1));
        assert_eq!(p.stats.lost, 0, "1 ms before the hold ends");
        p.on_packet(ms(1100), &tag(2, 1));
        assert_eq!(p.stats.lost, 1);
        let mut p = fixed(100);
        p.on_packet(ms(50), &tag(0, 2)); // playout at 100
        p.finish(ms(99));
        assert_eq!((p.stats.lost, p.stats.played), (0, 0));
        // A complete frame behind an incomplete one is counted at the end.
        let mut p = fixed(100);
        p.on_packet(ms(50), &tag(0, 2));
        p.on_packet(ms(60), &tag(1, 1));
        p.finish(ms(500));
        assert_eq!((p.stats.lost, p.stats.played), (1, 1));
        // Past its playout time but within the hold, at the end: lost
        // (it can no longer be played), also exactly at its playout time.
        for end in [100, 500] {
            let mut p = fixed(100);
            p.on_packet(ms(50), &tag(0, 2));
            p.finish(ms(end));
            assert_eq!((p.stats.lost, p.stats.played), (1, 0), "end {end} ms");
            assert_eq!(p.stats.levels, [0, 1, 0, 0, 0, 0]);
        }
    }

    /// Past the hold, every incomplete frame is declared lost at once,
    /// also those behind a decided one: a packet completing one of them
    /// afterwards does not make it late.
    #[test]
    fn frames_behind_a_decided_one_are_lost_with_it() {
        let mut p = fixed(100);
        p.on_packet(ms(50), &tag(0, 2)); // playout 100
        p.on_packet(ms(60), &tag(1, 1)); // played at 140
        p.on_packet(ms(90), &tag(2, 2)); // playout 180
        p.on_packet(ms(1180), &tag(2, 2)); // its hold ends now
        p.finish(ms(5000));
        let s = &p.stats;
        assert_eq!((s.played, s.late, s.lost), (1, 0, 2));
    }

    /// Adaptive: the highest delay (quantile 1) of the last second, within
    /// [10, 500] ms.
    fn highest_over_a_second() -> PlayoutParams {
        PlayoutParams {
            delay: PlayoutDelay::Adaptive {
                min: ms(10),
                max: ms(500),
                quantile: 1.0,
                window: ms(1000),
            },
            ..fixed(0).p
        }
    }

    /// The adaptive delay's window: a frame's delay counts until `window`
    /// after it completed, then no longer.
    #[test]
    fn old_delays_leave_the_window() {
        let mut p = Playout::new(highest_over_a_second());
        // Frame 0 takes 300 ms (completes at 300); then 50 ms each.
        p.on_packet(ms(300), &tag(0, 1));
        for i in 1..40u64 {
            p.on_packet(ms(40 * i + 50), &tag(i as u32, 1));
        }
        // Frame 24 (captured at 960 ms) still sees the 300 ms delay; from
        // frame 26 on (its packet at 1090 ms) the window ends after it.
        assert_eq!(p.delay(), ms(50));
        let mut q = Playout::new(p.p);
        q.on_packet(ms(300), &tag(0, 1));
        for i in 1..=24u64 {
            q.on_packet(ms(40 * i + 50), &tag(i as u32, 1));
        }
        assert_eq!(q.delay(), ms(300));
    }

    /// A frame a retransmission completed: its 300 ms count in the
    /// adaptive delay, unless `skip_recovered` leaves it out; either way
    /// it is late on its own delay (as is frame 0, played at the 10 ms
    /// minimum before any estimate). Frames every 40 ms take 50 ms, but
    /// frame 1's second packet, a retransmission, comes at 340 ms.
    #[test]
    fn a_recovered_frame_can_be_left_out_of_the_adaptive_delay() {
        for skip in [false, true] {
            let mut p = Playout::new(PlayoutParams {
                retransmission: true,
                skip_recovered: skip,
                ..highest_over_a_second()
            });
            p.on_packet(ms(50), &tag(0, 1));
            p.on_packet(ms(90), &tag(1, 2));
            for i in 2..8u64 {
                p.on_packet(ms(40 * i + 50), &tag(i as u32, 1));
            }
            p.on_recovered(ms(340), &tag(1, 2));
            for i in 8..12u64 {
                p.on_packet(ms(40 * i + 50), &tag(i as u32, 1));
            }
            let want = if skip { ms(50) } else { ms(300) };
            assert_eq!(p.delay(), want, "skip {skip}");
            p.finish(ms(5000));
            let s = &p.stats;
            assert_eq!((s.played, s.late), (10, 2), "skip {skip}");
        }
        // A frame whose packets all came first-hand counts with it on.
        let mut p = Playout::new(PlayoutParams {
            retransmission: true,
            skip_recovered: true,
            ..highest_over_a_second()
        });
        p.on_packet(ms(300), &tag(0, 1));
        p.on_packet(ms(330), &tag(1, 1));
        assert_eq!(p.delay(), ms(300));
    }

    /// A frame completed exactly `window` before the next estimate still
    /// counts; a nanosecond later it has left.
    #[test]
    fn the_window_includes_its_edge() {
        for (late_ns, want) in [(0, ms(300)), (1, ms(10))] {
            let mut p = Playout::new(highest_over_a_second());
            p.on_packet(ms(300), &tag(0, 1)); // completes in 300 ms
            let at = ms(1300) + SimTime::from_nanos(late_ns);
            p.on_packet(at, &tag(1, 1));
            assert_eq!(p.delay(), want, "{late_ns} ns past the edge");
        }
    }

    /// Voice: the delay is re-estimated only at the start of a talkspurt,
    /// a frame captured more than 1.5 frame intervals after the last.
    #[test]
    fn voice_adopts_a_new_delay_at_a_talkspurt() {
        let voice = |gap_ms: u64| {
            let mut p = Playout::new(PlayoutParams {
                delay: PlayoutDelay::Adaptive {
                    min: ms(10),
                    max: ms(500),
                    quantile: 1.0,
                    window: ms(10_000),
                },
                video: false,
                frame_interval: ms(20),
                ..fixed(0).p
            });
            let frame = |index: u32, capture: u64| FrameTag {
                index,
                packets: 1,
                capture: ms(capture),
                key: false,
                bytes: 1000,
            };
            // 30 ms of transit for frame 0 (it starts at the minimum, no
            // delay known yet); frame 1 captured `gap_ms` later.
            p.on_packet(ms(30), &frame(0, 0));
            p.on_packet(ms(gap_ms + 80), &frame(1, gap_ms));
            p.delay()
        };
        // 30 ms apart (1.5 intervals): the same spurt, the minimum stays.
        assert_eq!(voice(30), ms(10));
        // 31 ms apart: frame 1 starts a spurt and adopts frame 0's 30 ms.
        assert_eq!(voice(31), ms(30));
    }
}
