//! A receiving member's media packets held for processing in a batch.
//!
//! A media packet that arrives in order from the source the member last
//! heard, with nothing about it that acts at once (no loss before it, no
//! controller stamp, no repair, no feedback due with it, the feedback
//! timer already running), changes only state that nothing reads until
//! the member's next other event: the source's reception statistics, the
//! RTCP member table's last-heard time of a known sender, the playout
//! buffer and the arrival log of per-packet feedback. Such a packet is
//! appended here, in a few bytes beside the member's entry point, and
//! processed with the others at that next event, each at its own arrival
//! time and in arrival order: the same calls, with the same arguments, in
//! the same order as on arrival, so every result is the same. What it
//! saves is the member's scattered state (hash maps, the playout buffer,
//! the arrival log) loaded once per packet: with many calls, those were
//! cache misses on every packet.
//!
//! The feedback timer starts as it would have: the first packet after a
//! report starts it on arrival, held or not (its only action), for the
//! next instant of the feedback grid.
//!
//! RTCP's quiet slots (`RtcpScheduler::catch_up`) are not run for a held
//! packet: it changes neither the member count, the sender count nor any
//! feedback waiting, which is all those slots read.

use crate::app::media::playout::FrameTag;
use crate::app::Action;
use crate::sim::SimTime;

/// Most packets held: the batch is processed when it is full (bounded
/// memory, and a batch that stays in the first-level cache).
pub const HELD_MAX: usize = 64;

/// What processing a held media packet needs of it.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    pub now: SimTime,
    pub frame: Option<FrameTag>,
    pub timestamp: u32,
    pub seq: u16,
    pub transport_seq: Option<u16>,
    pub marker: bool,
    pub first: bool,
    pub ecn: u8,
}

/// Whether, and from whom, the next media packet may be held, and the
/// per-packet feedback timer (started by the first packet after each
/// report, held or not).
#[derive(Debug, Default)]
pub struct FastRx {
    /// The conditions hold: the source `ssrc` is known (reception
    /// statistics, a sender in RTCP's member table) and its next packet in
    /// order is `next_seq`. Cleared by anything that may undo them.
    pub ok: bool,
    /// A packet with the marker bit acts at once (per-frame feedback).
    pub marker_acts: bool,
    /// The feedback log counts only packets with a transport-wide number.
    pub fb_twcc: bool,
    /// The feedback timer runs.
    pub fb_armed: bool,
    pub next_seq: u16,
    pub ssrc: u32,
    /// The playout buffer may act on any packet (it asks for key frames):
    /// nothing is held.
    pub never: bool,
    /// The feedback interval, when the member returns per-packet feedback.
    pub fb_every: Option<SimTime>,
    /// The feedback grid's origin: the first packet the log counted.
    pub fb_origin: Option<SimTime>,
    pub held: Vec<Held>,
}

impl FastRx {
    /// Holds the packet if it may be held, starting the feedback timer
    /// (token `fb_token`) if it should start; returns whether it was held.
    #[inline(always)]
    pub fn hold(
        &mut self,
        h: Held,
        ssrc: u32,
        plain: bool,
        fb_token: u64,
        out: &mut Vec<Action>,
    ) -> bool {
        if !(self.ok && plain && ssrc == self.ssrc && h.seq == self.next_seq)
            || (h.marker && self.marker_acts)
            || self.held.len() >= HELD_MAX
        {
            return false;
        }
        if !self.fb_armed && self.fb_every.is_some() && self.fb_twcc && h.transport_seq.is_none() {
            return false; // not counted by the log: it must not start the timer
        }
        self.start_fb_timer(h.now, fb_token, out);
        self.next_seq = h.seq.wrapping_add(1);
        self.held.push(h);
        true
    }

    /// A packet the feedback log counted arrived at `now`: starts the
    /// feedback timer (token `token`) unless it runs.
    #[inline(always)]
    pub fn start_fb_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Action>) {
        if let Some(every) = self.fb_every.filter(|_| !self.fb_armed) {
            self.fb_armed = true;
            // Reports fall on a grid from the first packet counted, as a
            // periodic task's would (libwebrtc's transport feedback sender,
            // ns3-rmcat's receiver): the next instant of it after `now`.
            let origin = *self.fb_origin.get_or_insert(now);
            let every_ns = every.as_nanos();
            let ticks = (now.as_nanos() - origin.as_nanos()) / every_ns + 1;
            out.push(Action::Timer {
                at: SimTime::from_nanos(origin.as_nanos() + ticks * every_ns),
                token,
            });
        }
    }
}

#[cfg(test)]
impl Held {
    /// A plain media packet arriving at `ms` (tests).
    pub(crate) fn test_packet(ms: u64, seq: u16, marker: bool, transport_seq: Option<u16>) -> Held {
        Held {
            now: SimTime::from_millis(ms),
            frame: None,
            timestamp: 0,
            seq,
            transport_seq,
            marker,
            first: false,
            ecn: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(ms: u64, seq: u16, marker: bool, transport_seq: Option<u16>) -> Held {
        Held::test_packet(ms, seq, marker, transport_seq)
    }

    fn fast(fb_every: Option<SimTime>) -> FastRx {
        FastRx {
            ok: true,
            next_seq: 10,
            ssrc: 7,
            fb_every,
            ..FastRx::default()
        }
    }

    #[test]
    fn only_the_next_plain_packet_of_the_known_source_is_held() {
        let mut out = Vec::new();
        let mut f = fast(None);
        assert!(
            !f.hold(packet(1, 11, false, None), 7, true, 8, &mut out),
            "a gap"
        );
        assert!(
            !f.hold(packet(1, 10, false, None), 8, true, 8, &mut out),
            "another source"
        );
        assert!(
            !f.hold(packet(1, 10, false, None), 7, false, 8, &mut out),
            "stamped"
        );
        assert!(f.hold(packet(1, 10, false, None), 7, true, 8, &mut out));
        assert!(f.hold(packet(2, 11, true, None), 7, true, 8, &mut out));
        assert_eq!((f.held.len(), f.next_seq), (2, 12));
        f.marker_acts = true;
        assert!(
            !f.hold(packet(3, 12, true, None), 7, true, 8, &mut out),
            "per-frame feedback"
        );
        f.ok = false;
        assert!(!f.hold(packet(3, 12, false, None), 7, true, 8, &mut out));
        assert!(out.is_empty());
    }

    #[test]
    fn the_batch_is_bounded() {
        let mut out = Vec::new();
        let mut f = fast(None);
        for i in 0..HELD_MAX as u16 {
            assert!(f.hold(packet(1, 10 + i, false, None), 7, true, 8, &mut out));
        }
        let next = 10 + HELD_MAX as u16;
        assert!(!f.hold(packet(2, next, false, None), 7, true, 8, &mut out));
        assert_eq!(f.next_seq, next, "the packet not held is still the next");
    }

    #[test]
    fn the_first_packet_after_a_report_starts_the_feedback_timer_once() {
        let mut out = Vec::new();
        let mut f = fast(Some(SimTime::from_millis(50)));
        f.fb_twcc = true;
        assert!(
            !f.hold(packet(1, 10, false, None), 7, true, 8, &mut out),
            "not counted"
        );
        assert!(f.hold(packet(3, 10, false, Some(0)), 7, true, 8, &mut out));
        assert!(f.hold(packet(4, 11, false, Some(1)), 7, true, 8, &mut out));
        assert!(f.fb_armed);
        assert!(matches!(
            out[..],
            [Action::Timer { at, token: 8 }] if at == SimTime::from_millis(53)
        ));
    }

    #[test]
    fn the_feedback_timer_keeps_to_the_grid_of_the_first_packet() {
        let mut out = Vec::new();
        let mut f = fast(Some(SimTime::from_millis(50)));
        let mut start = |f: &mut FastRx, us: u64| {
            f.fb_armed = false; // the report went
            out.clear();
            f.start_fb_timer(SimTime::from_micros(us), 8, &mut out);
            match out[..] {
                [Action::Timer { at, token: 8 }] => at.as_nanos() / 1000,
                _ => panic!("{out:?}"),
            }
        };
        assert_eq!(start(&mut f, 3_000), 53_000);
        // The next packet after the report at 53 ms, and ones long after.
        assert_eq!(start(&mut f, 60_000), 103_000);
        assert_eq!(start(&mut f, 102_999), 103_000);
        assert_eq!(
            start(&mut f, 103_000),
            153_000,
            "a packet on a tick waits for the next"
        );
        assert_eq!(start(&mut f, 1_000_001), 1_003_000);
    }
}
