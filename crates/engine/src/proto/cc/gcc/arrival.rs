//! Packet groups and the deltas between them (draft-ietf-rmcat-gcc-02
//! 5.2): packets sent within `group` of a group's first packet form one
//! group; a packet that arrives within `burst` of the group's last one and
//! earlier than its send spacing says (the network delivered a burst)
//! joins the group too, for at most `max_burst` of arrivals (libwebrtc's
//! 100 ms). When a packet opens a new group, the group before it is
//! complete: the delta between it and the one before is
//! (send delta, arrival delta, size delta), each between the groups' last
//! packets.

use crate::sim::SimTime;

/// Longest run of arrivals one burst may hold (libwebrtc's value; the
/// draft names no bound).
pub const MAX_BURST: SimTime = SimTime::from_millis(100);

#[derive(Clone, Copy, Debug)]
struct Group {
    first_sent: SimTime,
    last_sent: SimTime,
    first_arrival: SimTime,
    last_arrival: SimTime,
    bytes: u64,
}

impl Group {
    fn new(sent: SimTime, arrival: SimTime, bytes: u32) -> Self {
        Group {
            first_sent: sent,
            last_sent: sent,
            first_arrival: arrival,
            last_arrival: arrival,
            bytes: bytes as u64,
        }
    }
}

/// Between two complete groups.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Delta {
    pub send_ms: f64,
    pub arrival_ms: f64,
    pub size_bytes: f64,
    /// The arrival of the packet that completed the later group.
    pub at: SimTime,
}

impl Delta {
    /// The inter-group delay variation d(i) (5.2), ms.
    pub fn gradient_ms(&self) -> f64 {
        self.arrival_ms - self.send_ms
    }
}

pub struct InterArrival {
    group: SimTime,
    burst: SimTime,
    cur: Option<Group>,
    prev: Option<Group>,
}

fn ms(t: SimTime) -> f64 {
    t.as_secs_f64() * 1e3
}

impl InterArrival {
    pub fn new(group: SimTime, burst: SimTime) -> Self {
        InterArrival {
            group,
            burst,
            cur: None,
            prev: None,
        }
    }

    /// A packet sent at `sent`, `bytes` on the wire, arrived at `arrival`
    /// (packets in arrival order): the delta it completes, if any.
    pub fn on_packet(&mut self, sent: SimTime, arrival: SimTime, bytes: u32) -> Option<Delta> {
        let Some(cur) = self.cur else {
            self.cur = Some(Group::new(sent, arrival, bytes));
            return None;
        };
        if sent < cur.first_sent {
            return None; // sent before the current group: reordered, left out
        }
        if !self.in_burst(&cur, sent, arrival) && sent - cur.first_sent > self.group {
            let done = cur;
            let delta = self.prev.map(|prev| Delta {
                send_ms: ms(done.last_sent) - ms(prev.last_sent),
                arrival_ms: ms(done.last_arrival) - ms(prev.last_arrival),
                size_bytes: done.bytes as f64 - prev.bytes as f64,
                at: arrival,
            });
            self.prev = Some(done);
            self.cur = Some(Group::new(sent, arrival, bytes));
            return delta;
        }
        let cur = self.cur.as_mut().expect("a group");
        cur.last_sent = cur.last_sent.max(sent);
        cur.last_arrival = arrival;
        cur.bytes += bytes as u64;
        None
    }

    /// The packet joins the current group as part of a burst: sent at the
    /// same time as its last packet, or arriving within `burst` of it and
    /// sooner than its send spacing (5.2), within `MAX_BURST` of the
    /// group's first arrival.
    fn in_burst(&self, cur: &Group, sent: SimTime, arrival: SimTime) -> bool {
        if sent == cur.last_sent {
            return true;
        }
        let send_delta = ms(sent) - ms(cur.last_sent);
        let arrival_delta = ms(arrival) - ms(cur.last_arrival);
        arrival_delta - send_delta < 0.0
            && arrival_delta <= ms(self.burst)
            && arrival.saturating_sub(cur.first_arrival) < MAX_BURST
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: f64) -> SimTime {
        SimTime::from_millis_f64(ms)
    }

    /// Packets 10 ms apart, each its own group: the first delta comes
    /// with the third packet, between the first two groups; a path whose
    /// delay grows 2 ms a packet gives d = 2 ms.
    #[test]
    fn separate_groups_give_their_gradient() {
        let mut ia = InterArrival::new(at(5.0), at(5.0));
        let mut out = vec![];
        for i in 0..5 {
            let sent = 10.0 * i as f64;
            if let Some(d) = ia.on_packet(at(sent), at(sent + 50.0 + 2.0 * i as f64), 1000) {
                out.push(d);
            }
        }
        assert_eq!(out.len(), 3);
        for d in &out {
            assert!((d.send_ms - 10.0).abs() < 1e-9 && (d.arrival_ms - 12.0).abs() < 1e-9);
            assert!((d.gradient_ms() - 2.0).abs() < 1e-9 && d.size_bytes == 0.0);
        }
        assert_eq!(out[0].at, at(20.0 + 54.0));
    }

    /// A frame's packets sent within 5 ms form one group whose last
    /// packet's times count; its size is the sum.
    #[test]
    fn packets_sent_within_the_group_time_form_one_group() {
        let mut ia = InterArrival::new(at(5.0), at(5.0));
        // Group A: 0, 2, 4 ms; group B: 33, 35; group C opens at 66.
        let sends = [0.0, 2.0, 4.0, 33.0, 35.0, 66.0];
        let mut got = None;
        for &s in &sends {
            // Arrivals keep the send spacing: no burst.
            if let Some(d) = ia.on_packet(at(s), at(s + 40.0), 500) {
                got = Some(d);
            }
        }
        let d = got.expect("B completed by C's first packet");
        assert!((d.send_ms - 31.0).abs() < 1e-9, "{d:?}"); // 35 - 4
        assert!((d.arrival_ms - 31.0).abs() < 1e-9);
        assert_eq!(d.size_bytes, 1000.0 - 1500.0);
    }

    /// Packets sent 10 ms apart that arrive 1 ms apart (released together
    /// by the network) join one group as a burst.
    #[test]
    fn a_burst_joins_the_group() {
        let mut ia = InterArrival::new(at(5.0), at(5.0));
        assert!(ia.on_packet(at(0.0), at(100.0), 100).is_none());
        assert!(ia.on_packet(at(10.0), at(101.0), 100).is_none());
        assert!(ia.on_packet(at(20.0), at(102.0), 100).is_none());
        let g = ia.cur.expect("one group");
        assert_eq!((g.bytes, g.last_sent), (300, at(20.0)));
        // A packet that keeps its spacing opens the next group.
        ia.on_packet(at(30.0), at(112.0), 100);
        assert_eq!(ia.prev.expect("done").bytes, 300);
    }

    /// A packet arriving at its send spacing is no burst: sent 1/256 s
    /// apart and arriving so (times exact in binary, so that the spacings
    /// are equal to the bit), the third (7.8 ms past the group's first
    /// send) opens a new group.
    #[test]
    fn arriving_at_the_send_spacing_is_no_burst() {
        let mut ia = InterArrival::new(at(5.0), at(5.0));
        for s in [0.0, 3.90625, 7.8125] {
            ia.on_packet(at(s), at(s + 62.5), 100);
        }
        assert_eq!(ia.prev.expect("done").bytes, 200);
        assert_eq!(ia.cur.expect("a group").bytes, 100);
    }

    /// The group time is inclusive (libwebrtc: a new group when the send
    /// time is more than 5 ms past the first's): a packet sent exactly 5
    /// ms after the group's first joins it; 5 ms and a nanosecond opens
    /// the next.
    #[test]
    fn the_group_time_is_inclusive() {
        let mut ia = InterArrival::new(at(5.0), at(0.0));
        ia.on_packet(at(0.0), at(50.0), 100);
        ia.on_packet(at(5.0), at(55.0), 100);
        assert_eq!(ia.cur.expect("one group").bytes, 200);
        ia.on_packet(SimTime::from_nanos(10_000_001), at(60.0), 100);
        assert_eq!(ia.prev.expect("done").bytes, 200);
    }

    /// A burst holds arrivals for less than 100 ms after the group's first
    /// (libwebrtc's strict bound): a packet 100 ms after it opens a new
    /// group even though it came in a burst.
    #[test]
    fn a_burst_ends_at_its_longest() {
        let burst = |last_ms: f64| {
            let mut ia = InterArrival::new(at(5.0), at(5.0));
            // Sent 10 ms apart, arriving 4 ms apart (a burst), the last
            // of them 96 ms after the first.
            for i in 0..25 {
                ia.on_packet(at(10.0 * i as f64), at(100.0 + 4.0 * i as f64), 100);
            }
            ia.on_packet(at(250.0), at(100.0 + last_ms), 100);
            ia.cur.expect("a group").bytes
        };
        // A packet arriving 99.9 ms after the first joins the burst.
        assert_eq!(burst(99.9), 2600);
        // Exactly 100 ms after: a new group of its own.
        assert_eq!(burst(100.0), 100);
    }

    /// A packet sent at the same time as the group's first joins it.
    #[test]
    fn a_packet_sent_with_the_groups_first_joins_it() {
        let mut ia = InterArrival::new(at(5.0), at(5.0));
        ia.on_packet(at(10.0), at(50.0), 100);
        ia.on_packet(at(10.0), at(51.0), 100);
        assert_eq!(ia.cur.expect("group").bytes, 200);
    }

    #[test]
    fn a_packet_sent_before_the_current_group_is_left_out() {
        let mut ia = InterArrival::new(at(5.0), at(5.0));
        ia.on_packet(at(10.0), at(50.0), 100);
        ia.on_packet(at(20.0), at(60.0), 100);
        assert!(ia.on_packet(at(15.0), at(61.0), 100).is_none());
        assert_eq!(ia.cur.expect("group").bytes, 100);
    }
}
