//! Where packets live while they are in the network: one slot each, from
//! the moment an application sends one until it is delivered or dropped.
//! Queues, wires and the engine's paths pass 4-byte [`PacketRef`]s instead
//! of the packet itself.
//!
//! Why: a packet is 80 bytes. Moved by value several times per hop (wire,
//! stack, queue, stack, wire), its copies, in 16-byte pieces at offsets
//! that do not match the stores before them, stall the event loop on
//! store forwarding (about a third of its time with one flow). In a slot
//! the packet is written once and read where it lies.

use super::packet::{Packet, Transport};

/// A packet in the store. Valid from [`Packets::insert`] until
/// [`Packets::release`]; the slot is then reused by a later packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketRef(u32);

impl PacketRef {
    /// No packet: a placeholder never handed out by [`Packets::insert`].
    pub const NONE: PacketRef = PacketRef(u32::MAX);

    /// The slot's index (stable while the packet lives).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The packets in the network.
#[derive(Default)]
pub struct Packets {
    slots: Vec<Packet>,
    /// Free slots, the last freed first: the next packet reuses a slot
    /// (and its cache lines) that was in use a moment ago.
    free: Vec<u32>,
}

impl Packets {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `p` and returns its reference.
    #[inline(always)]
    pub fn insert(&mut self, p: Packet) -> PacketRef {
        match self.free.pop() {
            Some(i) => {
                // `release` left the slot with nothing to drop (no header
                // box, no payload): forgetting it saves the drop glue's
                // call on every packet sent.
                let old = std::mem::replace(&mut self.slots[i as usize], p);
                debug_assert!(matches!(old.transport, Transport::Udp) && old.app.is_none());
                std::mem::forget(old);
                PacketRef(i)
            }
            None => {
                let i = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|&i| i != PacketRef::NONE.0)
                    .expect("fewer than 2^32 - 1 packets in flight");
                self.slots.push(p);
                PacketRef(i)
            }
        }
    }

    /// Ends the life of `r`'s packet (delivered or dropped): its slot is
    /// free, and its TCP header's box is kept for another segment
    /// ([`super::header::boxed`]).
    #[inline]
    pub fn release(&mut self, r: PacketRef) {
        let slot = &mut self.slots[r.index()];
        if let Transport::Tcp(h) = std::mem::replace(&mut slot.transport, Transport::Udp) {
            super::header::recycle(h);
        }
        // Shared payloads (RTCP compounds) are let go now, not when the
        // slot is next used.
        slot.app.clear();
        self.free.push(r.0);
    }

    /// Takes `r`'s packet out of the store (the slot is freed): for a
    /// packet leaving for another partition of a split run, and for tests
    /// that hand packets to queues and want them back. Its header box and
    /// payload move with it (no copy, no allocation); the slot is left
    /// with nothing to drop, as [`Self::release`] leaves it.
    pub fn take(&mut self, r: PacketRef) -> Packet {
        let slot = &mut self.slots[r.index()];
        let p = Packet {
            transport: std::mem::replace(&mut slot.transport, Transport::Udp),
            app: std::mem::take(&mut slot.app),
            ..*slot
        };
        self.free.push(r.0);
        p
    }

    /// Packets stored and not yet released.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Slots allocated (the most packets ever in flight at once).
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

impl std::ops::Index<PacketRef> for Packets {
    type Output = Packet;
    #[inline(always)]
    fn index(&self, r: PacketRef) -> &Packet {
        &self.slots[r.index()]
    }
}

impl std::ops::IndexMut<PacketRef> for Packets {
    #[inline(always)]
    fn index_mut(&mut self, r: PacketRef) -> &mut Packet {
        &mut self.slots[r.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::test_packet;

    #[test]
    fn a_freed_slot_is_the_next_one_used() {
        let mut s = Packets::new();
        let a = s.insert(test_packet(0, 1, 100));
        let b = s.insert(test_packet(0, 2, 200));
        assert_eq!((s[a].seq, s[b].seq, s.live()), (1, 2, 2));
        s.release(a);
        assert_eq!(s.live(), 1);
        let c = s.insert(test_packet(0, 3, 300));
        assert_eq!(c, a, "the slot just freed");
        assert_eq!((s[c].seq, s[c].size_bytes), (3, 300));
        assert_eq!((s.live(), s.capacity()), (2, 2));
        s[b].ecn = crate::net::packet::ecn::CE;
        let taken = s.take(b);
        assert_eq!(
            (taken.seq, taken.ecn, s.live()),
            (2, crate::net::packet::ecn::CE, 1)
        );
    }

    #[test]
    fn a_released_packet_lets_go_of_its_payload() {
        let mut s = Packets::new();
        #[derive(Debug, PartialEq)]
        struct Report(u32);
        impl crate::net::AppPayload for Report {
            crate::payload_eq!();
        }
        let compound = std::sync::Arc::new(Report(1));
        let mut p = test_packet(0, 0, 100);
        p.app = crate::net::Payload::shared(compound.clone());
        let r = s.insert(p);
        assert_eq!(std::sync::Arc::strong_count(&compound), 2);
        s.release(r);
        assert_eq!(std::sync::Arc::strong_count(&compound), 1);
    }
}
