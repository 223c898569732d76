//! The pacer between the encoder and the wire: a leaky bucket that lets
//! packets go at `factor` times the target rate and may run ahead of that
//! rate by at most `burst` of time (libwebrtc paces at 2.5 times the
//! target; both are parameters).
//!
//! State: `virtual_end`, when everything released so far would have left
//! at the pacing rate. A packet may leave once `virtual_end - burst <=
//! now`; leaving adds its serialisation time at the pacing rate.

use crate::sim::SimTime;
use std::collections::VecDeque;

pub struct Pacer<T> {
    factor: f64,
    burst: SimTime,
    virtual_end: SimTime,
    queue: VecDeque<(T, u32, SimTime)>,
    queued_bytes: u64,
}

impl<T> Pacer<T> {
    pub fn new(factor: f64, burst: SimTime) -> Self {
        Pacer {
            factor,
            burst,
            virtual_end: SimTime::ZERO,
            queue: VecDeque::new(),
            queued_bytes: 0,
        }
    }

    /// Queues a packet of `bytes` on the wire at `now`.
    pub fn push(&mut self, now: SimTime, item: T, bytes: u32) {
        self.queued_bytes += bytes as u64;
        self.queue.push_back((item, bytes, now));
    }

    /// When the head packet may leave (None: the queue is empty).
    /// Queues `item` ahead of everything queued (a retransmission:
    /// libwebrtc's pacer sends those first), counted as waiting from `now`.
    pub fn push_front(&mut self, now: SimTime, item: T, bytes: u32) {
        self.queued_bytes += bytes as u64;
        self.queue.push_front((item, bytes, now));
    }

    pub fn next_release(&self) -> Option<SimTime> {
        (!self.queue.is_empty()).then(|| self.virtual_end.saturating_sub(self.burst))
    }

    /// The head packet if it may leave at `now` at `target_bps`, with the
    /// time it waited.
    pub fn pop(&mut self, now: SimTime, target_bps: f64) -> Option<(T, SimTime)> {
        if self.next_release()? > now {
            return None;
        }
        self.pop_now(now, target_bps)
    }

    /// The head packet at `now` whatever the pace says, with the time it
    /// waited; leaving counts against the pace as in [`Self::pop`].
    pub fn pop_now(&mut self, now: SimTime, target_bps: f64) -> Option<(T, SimTime)> {
        let (item, bytes, queued_at) = self.queue.pop_front()?;
        self.queued_bytes -= bytes as u64;
        let rate = (target_bps * self.factor).max(1.0);
        self.virtual_end =
            self.virtual_end.max(now) + SimTime::from_secs_f64(bytes as f64 * 8.0 / rate);
        Some((item, now - queued_at))
    }

    /// How long the head packet has waited at `now`.
    pub fn head_wait(&self, now: SimTime) -> Option<SimTime> {
        self.queue.front().map(|q| now.saturating_sub(q.2))
    }

    /// Drops every queued packet; returns how many.
    pub fn clear(&mut self) -> u64 {
        let n = self.queue.len() as u64;
        self.queue.clear();
        self.queued_bytes = 0;
        n
    }

    /// The head packet's bytes on the wire.
    pub fn head_bytes(&self) -> Option<u32> {
        self.queue.front().map(|q| q.1)
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(p: &mut Pacer<u32>, rate: f64) -> Vec<(u32, SimTime)> {
        let mut out = Vec::new();
        let mut now = SimTime::ZERO;
        while let Some(at) = p.next_release() {
            now = now.max(at);
            let (x, _) = p.pop(now, rate).expect("due");
            out.push((x, now));
        }
        out
    }

    /// Ten 1000-byte packets at 2.5 x 400 kbit/s = 1 Mbit/s: 8 ms apart;
    /// with a 16 ms burst the first three go at once (the bucket may run
    /// 16 ms ahead), the rest 8 ms apart.
    #[test]
    fn packets_leave_at_factor_times_target_after_the_burst() {
        let ms = SimTime::from_millis;
        let mut p = Pacer::new(2.5, SimTime::ZERO);
        (0..10).for_each(|i| p.push(SimTime::ZERO, i, 1000));
        let times: Vec<SimTime> = drain(&mut p, 400e3).iter().map(|x| x.1).collect();
        assert_eq!(times, (0..10).map(|i| ms(8 * i)).collect::<Vec<_>>());
        let mut p = Pacer::new(2.5, ms(16));
        (0..10).for_each(|i| p.push(SimTime::ZERO, i, 1000));
        assert_eq!(p.queued_bytes(), 10_000);
        let times: Vec<SimTime> = drain(&mut p, 400e3).iter().map(|x| x.1).collect();
        assert_eq!(times[..4], [ms(0), ms(0), ms(0), ms(8)]);
        assert_eq!(times[9], ms(56));
        assert!(p.is_empty() && p.queued_bytes() == 0);
    }

    /// What the member reads of its queue: the head's bytes and wait,
    /// the count; clearing empties it.
    #[test]
    fn the_head_and_the_count() {
        let ms = SimTime::from_millis;
        let mut p = Pacer::new(1.0, SimTime::ZERO);
        assert_eq!(
            (p.head_wait(ms(5)), p.head_bytes(), p.len()),
            (None, None, 0)
        );
        p.push(ms(10), 'a', 1200);
        p.push(ms(12), 'b', 300);
        assert_eq!(
            (p.head_wait(ms(15)), p.head_bytes(), p.len()),
            (Some(ms(5)), Some(1200), 2)
        );
        assert_eq!((p.queued_bytes(), p.is_empty()), (1500, false));
        p.pop(ms(15), 1e6).expect("due");
        assert_eq!(
            (p.head_wait(ms(15)), p.head_bytes(), p.len()),
            (Some(ms(3)), Some(300), 1)
        );
        assert_eq!((p.queued_bytes(), p.is_empty()), (300, false));
        assert_eq!(p.clear(), 1);
        assert!(p.is_empty() && p.queued_bytes() == 0);
    }

    #[test]
    fn an_idle_pacer_does_not_save_up_more_than_the_burst() {
        let ms = SimTime::from_millis;
        let mut p = Pacer::new(1.0, ms(8));
        p.push(SimTime::ZERO, 0, 1000);
        assert!(p.pop(SimTime::ZERO, 1e6).is_some());
        // Idle for a second, then five packets: two go at once (8 ms of
        // burst is one packet ahead), then 8 ms apart.
        for i in 0..5 {
            p.push(SimTime::from_secs(1), i, 1000);
        }
        let mut now = SimTime::from_secs(1);
        let mut times = vec![];
        while let Some(at) = p.next_release() {
            now = now.max(at);
            let (_, waited) = p.pop(now, 1e6).unwrap();
            times.push(waited);
        }
        assert_eq!(times, [ms(0), ms(0), ms(8), ms(16), ms(24)]);
    }
}
