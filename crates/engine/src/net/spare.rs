//! Allocations kept for reuse: a packet's header box or payload, taken
//! back when the packet leaves the network and handed to the next one, so
//! that a protocol that sends one with nearly every packet makes no
//! allocator call per packet.
//!
//! Each thread keeps its own, up to `max`. In a split run a packet is
//! often made in one partition's thread and leaves the network in
//! another's: the receiving thread's spares fill while the sending
//! thread's run dry. Without a way back, every such allocation would come
//! from the sender's heap and go back to it from the other thread, and
//! the two threads' allocator calls would wait on that heap's lock
//! (glibc's arena lock: measured at a third of the receiving partition's
//! time in a split run of calls, docs/benchmarks.md). So a
//! thread whose spares are full moves half of them to a pool shared by the
//! threads, and a thread whose spares are empty takes a batch from there:
//! one lock per `max / 2` packets. In a run in one piece the shared pool
//! only holds what one thread has in flight past `max`.
//!
//! Which allocation a packet gets never changes a result.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread::LocalKey;

/// One thread's kept allocations of one kind.
pub type Local<A> = RefCell<Vec<A>>;

/// How many times a thread's bound the shared pool holds at most.
const SHARED_TIMES: usize = 8;

/// Kept allocations of one kind (a `static` per kind, beside the kind's
/// `thread_local!` [`Local`]).
pub struct Spares<A: 'static> {
    local: &'static LocalKey<Local<A>>,
    /// Most a thread keeps; the shared pool keeps `SHARED_TIMES` as many.
    max: usize,
    shared: Mutex<Vec<A>>,
    /// The shared pool's length, read without its lock: a thread that
    /// finds both its own and the shared spares empty (a sender in a
    /// split run, before any come back) takes no lock per packet.
    shared_len: AtomicUsize,
}

impl<A: Send> Spares<A> {
    pub const fn new(local: &'static LocalKey<Local<A>>, max: usize) -> Self {
        Spares {
            local,
            max,
            shared: Mutex::new(Vec::new()),
            shared_len: AtomicUsize::new(0),
        }
    }

    /// A kept allocation, if there is one: this thread's, else a batch
    /// from the shared pool.
    #[inline]
    pub fn take(&self) -> Option<A> {
        self.local.with_borrow_mut(|l| match l.pop() {
            Some(a) => Some(a),
            None if self.shared_len.load(Ordering::Relaxed) > 0 => self.refill(l),
            None => None,
        })
    }

    /// Keeps `a` for [`Self::take`]; past both bounds it is let go.
    #[inline]
    pub fn give(&self, a: A) {
        self.local.with_borrow_mut(|l| {
            // The shared pool's length, read without the lock: once it is
            // full, what comes past this thread's bound is let go without
            // taking the lock.
            if l.len() >= self.max
                && self.shared_len.load(Ordering::Relaxed) < SHARED_TIMES * self.max
            {
                self.spill(l);
            }
            if l.len() < self.max {
                l.push(a);
            }
        });
    }

    #[cold]
    #[inline(never)]
    fn refill(&self, l: &mut Vec<A>) -> Option<A> {
        let mut s = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        let from = s.len() - s.len().min(self.max / 2);
        l.extend(s.drain(from..));
        self.shared_len.store(s.len(), Ordering::Relaxed);
        drop(s);
        l.pop()
    }

    #[cold]
    #[inline(never)]
    fn spill(&self, l: &mut Vec<A>) {
        let mut s = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        let room = (SHARED_TIMES * self.max).saturating_sub(s.len());
        let from = l.len() - room.min(self.max / 2).min(l.len());
        s.extend(l.drain(from..));
        self.shared_len.store(s.len(), Ordering::Relaxed);
    }

    /// What this thread keeps, and the shared pool (tests).
    #[cfg(test)]
    pub fn counts(&self) -> (usize, usize) {
        let shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        (self.local.with_borrow(Vec::len), shared.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static LOCAL: Local<Box<u32>> = const { RefCell::new(Vec::new()) };
    }
    static SPARES: Spares<Box<u32>> = Spares::new(&LOCAL, 4);

    /// A thread keeps up to `max`; past it, half goes to the shared pool
    /// (up to 8 times `max`, then what is given is let go); another thread
    /// with none of its own takes them back from there, half `max` at a
    /// time, the same allocations.
    #[test]
    fn spares_pass_between_threads_through_the_shared_pool() {
        let boxes: Vec<Box<u32>> = (0..40).map(Box::new).collect();
        let addrs: std::collections::HashSet<usize> =
            boxes.iter().map(|b| &**b as *const u32 as usize).collect();
        std::thread::spawn(move || {
            for (i, b) in boxes.into_iter().enumerate() {
                SPARES.give(b);
                if i == 3 {
                    assert_eq!(SPARES.counts(), (4, 0));
                }
                if i == 4 {
                    assert_eq!(SPARES.counts(), (3, 2));
                }
            }
            // 4 here, 32 shared, 4 let go.
            assert_eq!(SPARES.counts(), (4, 32));
        })
        .join()
        .expect("the giving thread");
        std::thread::spawn(move || {
            assert_eq!(SPARES.counts(), (0, 32));
            let first = SPARES.take().expect("from the shared pool");
            assert_eq!(SPARES.counts(), (1, 30));
            let mut got = vec![first];
            got.extend(std::iter::from_fn(|| SPARES.take()));
            assert_eq!(got.len(), 32);
            assert_eq!(SPARES.counts(), (0, 0));
            assert!((got.iter()).all(|b| addrs.contains(&(&**b as *const u32 as usize))));
            assert!(SPARES.take().is_none());
        })
        .join()
        .expect("the taking thread");
    }
}
