//! The receiver's playout (jitter) buffer and what the viewer sees.
//!
//! Each frame gets a playout time when its first packet arrives: its
//! capture time plus the playout delay then in force, never earlier than
//! the frame before it. The delay is fixed, or adaptive: the `quantile`
//! (0.95) of the capture-to-completion delays of the frames completed in
//! the last `window` (2 s), within [min, max] (the target NetEQ and
//! WebRTC's video jitter buffer aim at is of this kind: a high percentile
//! of recent delays). Video adopts a new delay at every frame, voice only
//! at the start of a talkspurt. A frame is
//! - played if its last packet arrived by its playout time,
//! - late if it completed after it,
//! - lost if it never completed (a packet lost), or was still incomplete
//!   `hold` after its playout time.
//!
//! Frames are independently decodable here: a lost frame does not spoil
//! the frames after it (no reference-picture model, no retransmission).
//! Freezes (video) follow the WebRTC statistics' rule: a gap between two
//! played frames longer than max(3 x, x + 150 ms), x the mean of the last
//! 30 gaps, is a freeze, and the whole gap is its duration.

use crate::measure::delay::DelayStats;
use crate::sim::SimTime;
use std::collections::{BTreeMap, VecDeque};

/// Most recent frame delays the adaptive estimate keeps.
const MAX_RECENT: usize = 4096;
/// Gaps averaged for the freeze rule (WebRTC).
const FREEZE_WINDOW: usize = 30;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlayoutDelay {
    Fixed(SimTime),
    Adaptive {
        min: SimTime,
        max: SimTime,
        quantile: f64,
        window: SimTime,
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
}

/// What the receiver knows of a frame from its packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameTag {
    /// Frames of the stream in capture order: 0, 1, ...
    pub index: u32,
    pub packets: u16,
    pub capture: SimTime,
    pub key: bool,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    capture: SimTime,
    playout: SimTime,
    need: u16,
    got: u16,
    complete_at: Option<SimTime>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Played,
    Late,
    Lost,
}

/// Counts the playout buffer keeps.
#[derive(Clone, Debug, Default)]
pub struct PlayoutStats {
    pub played: u64,
    pub late: u64,
    pub lost: u64,
    pub freezes: u64,
    pub freeze_total: SimTime,
    /// Capture to completion of every completed frame (played or late).
    pub frame_delay: DelayStats,
    /// Capture to playout of played frames, summed (for the mean).
    pub playout_delay_sum: SimTime,
    /// Runs of consecutive frames not played (late or lost), and the
    /// frames in them (for the E-model's burst ratio).
    pub bad_runs: u64,
    pub bad_frames: u64,
}

#[derive(Clone)]
pub struct Playout {
    p: PlayoutParams,
    pending: BTreeMap<u32, Pending>,
    /// Outcomes not yet rendered, by index (in order once `next` reaches them).
    done: BTreeMap<u32, (Outcome, SimTime)>,
    /// The lowest index not yet rendered.
    next: u32,
    highest: Option<u32>,
    /// (completion time, capture-to-completion delay) of recent frames.
    recent: VecDeque<(SimTime, SimTime)>,
    delay: SimTime,
    last_capture: Option<SimTime>,
    last_assigned: SimTime,
    last_played: Option<SimTime>,
    gaps: VecDeque<f64>,
    in_bad_run: bool,
    pub stats: PlayoutStats,
}

impl Playout {
    pub fn new(p: PlayoutParams) -> Self {
        let delay = match p.delay {
            PlayoutDelay::Fixed(d) => d,
            PlayoutDelay::Adaptive { min, .. } => min,
        };
        Playout {
            p,
            pending: BTreeMap::new(),
            done: BTreeMap::new(),
            next: 0,
            highest: None,
            recent: VecDeque::new(),
            delay,
            last_capture: None,
            last_assigned: SimTime::ZERO,
            last_played: None,
            gaps: VecDeque::new(),
            in_bad_run: false,
            stats: PlayoutStats::default(),
        }
    }

    /// The playout delay now in force.
    pub fn delay(&self) -> SimTime {
        self.delay
    }

    fn estimate(&mut self, now: SimTime, delay: SimTime) {
        if self.recent.len() == MAX_RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back((now, delay));
    }

    /// The quantile of the delays of frames completed within `window`
    /// before `now` (nearest rank), if any.
    fn quantile(&mut self, now: SimTime, q: f64, window: SimTime) -> Option<SimTime> {
        while self.recent.front().is_some_and(|f| f.0 + window < now) {
            self.recent.pop_front();
        }
        let mut d: Vec<SimTime> = self.recent.iter().map(|f| f.1).collect();
        if d.is_empty() {
            return None;
        }
        d.sort_unstable();
        let rank = ((q * d.len() as f64).ceil() as usize).clamp(1, d.len());
        Some(d[rank - 1])
    }

    /// A packet of frame `tag` arrived at `now`.
    pub fn on_packet(&mut self, now: SimTime, tag: &FrameTag) {
        self.finalise(now);
        if tag.index < self.next || self.done.contains_key(&tag.index) {
            return; // its frame was already decided
        }
        if !self.pending.contains_key(&tag.index) {
            self.adopt(now, tag.capture);
            let playout = (tag.capture + self.delay).max(self.last_assigned);
            self.last_assigned = playout;
            self.last_capture = Some(tag.capture);
            // Frames skipped over before this one: lost unless their
            // packets still come (placeholders due with this frame).
            let from = self.highest.map_or(self.next, |h| h.saturating_add(1));
            for i in from..tag.index {
                self.pending.entry(i).or_insert(Pending {
                    capture: tag.capture,
                    playout,
                    need: u16::MAX,
                    got: 0,
                    complete_at: None,
                });
            }
            self.pending.insert(
                tag.index,
                Pending {
                    capture: tag.capture,
                    playout,
                    need: tag.packets,
                    got: 0,
                    complete_at: None,
                },
            );
        }
        let f = self.pending.get_mut(&tag.index).expect("inserted");
        if f.need == u16::MAX {
            // A placeholder whose packets came after all.
            f.need = tag.packets;
            f.capture = tag.capture;
        }
        f.got += 1;
        if f.got >= f.need {
            f.complete_at = Some(now);
            let f = self.pending.remove(&tag.index).expect("present");
            self.estimate(now, now - f.capture);
            let (c, p) = (now, f.playout);
            self.stats.frame_delay.add((c - f.capture).as_nanos());
            let outcome = if c <= p {
                Outcome::Played
            } else {
                Outcome::Late
            };
            self.done.insert(tag.index, (outcome, p));
            if outcome == Outcome::Played {
                self.stats.playout_delay_sum += p - f.capture;
            }
        }
        self.highest = Some(self.highest.map_or(tag.index, |h| h.max(tag.index)));
        self.render();
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
        let starts_spurt = self.last_capture.is_none_or(|c| {
            capture.saturating_sub(c).as_secs_f64() > 1.5 * self.p.frame_interval.as_secs_f64()
        });
        if self.p.video || starts_spurt {
            if let Some(d) = self.quantile(now, quantile, window) {
                self.delay = d.clamp(min, max);
            }
        }
    }

    /// Declares lost every incomplete frame `hold` past its playout time.
    fn finalise(&mut self, now: SimTime) {
        let hold = self.p.hold;
        let expired: Vec<(u32, SimTime)> = (self.pending.iter())
            .filter(|(_, f)| f.playout + hold <= now)
            .map(|(i, f)| (*i, f.playout))
            .collect();
        for (i, p) in expired {
            self.pending.remove(&i);
            self.done.insert(i, (Outcome::Lost, p));
        }
        self.render();
    }

    /// Renders decided frames in index order.
    fn render(&mut self) {
        while let Some((outcome, at)) = self.done.remove(&self.next) {
            self.next += 1;
            self.count(outcome, at);
        }
    }

    fn count(&mut self, outcome: Outcome, at: SimTime) {
        match outcome {
            Outcome::Played => {
                self.stats.played += 1;
                self.in_bad_run = false;
                if let Some(prev) = self.last_played.filter(|_| self.p.video) {
                    let gap = (at - prev).as_secs_f64();
                    if self.gaps.len() == FREEZE_WINDOW {
                        let mean = self.gaps.iter().sum::<f64>() / self.gaps.len() as f64;
                        let limit = (self.p.freeze_factor * mean)
                            .max(mean + self.p.freeze_extra.as_secs_f64());
                        if gap > limit {
                            self.stats.freezes += 1;
                            self.stats.freeze_total += at - prev;
                        }
                    }
                    if self.gaps.len() == FREEZE_WINDOW {
                        self.gaps.pop_front();
                    }
                    self.gaps.push_back(gap);
                }
                self.last_played = Some(at);
            }
            Outcome::Late | Outcome::Lost => {
                if outcome == Outcome::Late {
                    self.stats.late += 1;
                } else {
                    self.stats.lost += 1;
                }
                self.stats.bad_frames += 1;
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
        let due: Vec<(u32, SimTime)> = (self.pending.iter())
            .filter(|(_, f)| f.playout <= end)
            .map(|(i, f)| (*i, f.playout))
            .collect();
        for (i, p) in due {
            self.pending.remove(&i);
            self.done.insert(i, (Outcome::Lost, p));
        }
        // Render what is decided, skipping over frames still in flight.
        while let Some((&i, _)) = self.done.iter().next() {
            let (o, at) = self.done.remove(&i).expect("present");
            self.next = i + 1;
            self.count(o, at);
        }
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
        })
    }

    fn tag(index: u32, packets: u16) -> FrameTag {
        FrameTag {
            index,
            packets,
            capture: ms(40 * index as u64),
            key: false,
        }
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
        // Completed: frame 0 in 90 ms, frame 1 in 110, frame 4 in 40.
        assert_eq!(s.frame_delay.summary_ns()[0], ms(80).as_nanos() as f64);
        assert_eq!(s.playout_delay_sum, ms(200));
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
        };
        p.on_packet(ms(40 * 55 + 610), &t);
        p.finish(ms(10_000));
        assert_eq!((p.stats.late, p.stats.freezes), (15, 1));
        assert_eq!(p.stats.freeze_total, ms(40 * 55 + 650 - (40 * 39 + 50)));
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
}
