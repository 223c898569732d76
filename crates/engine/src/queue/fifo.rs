//! The first-in first-out store that FIFO disciplines share: packets in
//! arrival order, their byte count, and the packet and byte limits.

use crate::net::PacketRef;
use std::collections::VecDeque;

pub struct Fifo {
    /// Held packets with their sizes (bytes): taking one out needs no
    /// look at the packet.
    q: VecDeque<(PacketRef, u32)>,
    bytes: u64,
    limit_packets: Option<usize>,
    limit_bytes: Option<u64>,
}

impl Fifo {
    pub fn new(limit_packets: Option<usize>, limit_bytes: Option<u64>) -> Self {
        Fifo {
            q: VecDeque::new(),
            bytes: 0,
            limit_packets,
            limit_bytes,
        }
    }

    /// A packet of `size` bytes fits in with what is held.
    pub fn fits(&self, size: u64) -> bool {
        self.limit_packets.is_none_or(|l| self.q.len() < l)
            && self.limit_bytes.is_none_or(|l| self.bytes + size <= l)
    }
    /// A packet of `size` bytes could fit were the queue empty.
    pub fn could_ever_fit(&self, size: u64) -> bool {
        self.largest_fit().is_some_and(|max| size <= max)
    }
    /// The largest packet an empty queue takes (None: not even one).
    pub fn largest_fit(&self) -> Option<u64> {
        match self.limit_packets {
            Some(0) => None,
            _ => Some(self.limit_bytes.unwrap_or(u64::MAX)),
        }
    }
    /// Holds `p`, of `size` bytes.
    pub fn push_back(&mut self, p: PacketRef, size: u32) {
        self.bytes += size as u64;
        self.q.push_back((p, size));
    }
    pub fn pop_front(&mut self) -> Option<PacketRef> {
        let (p, size) = self.q.pop_front()?;
        self.bytes -= size as u64;
        Some(p)
    }
    pub fn len_packets(&self) -> usize {
        self.q.len()
    }
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }
    pub fn held(&self) -> Vec<PacketRef> {
        self.q.iter().map(|&(p, _)| p).collect()
    }
    pub fn limit_packets(&self) -> Option<usize> {
        self.limit_packets
    }
}

/// The `QueueDiscipline` methods of a discipline that keeps its packets in
/// a `fifo: Fifo` field and sends them in order: dequeue, lengths, held.
#[macro_export]
macro_rules! fifo_queue_methods {
    () => {
        fn dequeue(
            &mut self,
            _ctx: &mut $crate::queue::QueueCtx<'_>,
        ) -> Option<$crate::net::PacketRef> {
            self.fifo.pop_front()
        }
        fn len_packets(&self) -> usize {
            self.fifo.len_packets()
        }
        fn len_bytes(&self) -> u64 {
            self.fifo.len_bytes()
        }
        fn held(&self) -> Vec<$crate::net::PacketRef> {
            self.fifo.held()
        }
        fn limit_packets(&self) -> Option<usize> {
            self.fifo.limit_packets()
        }
    };
}
