//! A packet's application payload, opaque to the network: each protocol
//! defines its own type and implements [`AppPayload`] for it; `net` moves
//! it without knowing what it is, and the receiving application reads it
//! back with [`Payload::get`].
//!
//! The payload is shared (`Arc`): the copies a multicast tree makes of one
//! packet (one per member of a large session) share it, and a packet with
//! no payload (CBR, TCP segments) carries no allocation at all.

use super::packet::Packet;
use super::spare::Spares;
use crate::sim::SimTime;
use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

/// What a protocol puts in a packet's payload.
pub trait AppPayload: Any + Debug + Send + Sync {
    /// Writes this payload's header at the start of a UDP payload for pcap
    /// export, cut to `buf`'s length (the bytes past the header stay zero).
    /// `p` is the packet that carries it, `now` the capture time.
    fn emit(&self, _p: &Packet, _now: SimTime, _buf: &mut [u8]) {}

    /// Equality with another payload of any type (tests compare packets).
    fn same_as(&self, other: &dyn AppPayload) -> bool;

    /// The packet that carried this payload left the network. A type sent
    /// with nearly every packet of its protocol keeps the allocation for
    /// the next one ([`Payload::reuse`], [`keep`]); the default lets it go.
    fn recycle(self: Arc<Self>) {}
}

/// Allocations of one payload type kept for reuse (a `static` per type,
/// with a `thread_local!` [`crate::net::spare::Local`] beside it).
pub type Spare<T> = Spares<Arc<T>>;

/// Most allocations of one payload type a thread keeps: as many as the
/// packets of its type a run has in flight at once, up to this (a bound on
/// its memory).
pub const SPARE_MAX: usize = 1024;

/// Keeps `a` in `spare` for [`Payload::reuse`] if nothing else holds it
/// (a multicast copy's payload is let go only by its last copy).
#[inline]
pub fn keep<T: AppPayload>(spare: &'static Spare<T>, a: Arc<T>) {
    if Arc::strong_count(&a) == 1 && Arc::weak_count(&a) == 0 {
        spare.give(a);
    }
}

/// Implements [`AppPayload::same_as`] for a `PartialEq` type: use inside
/// the `impl AppPayload for T` block.
#[macro_export]
macro_rules! payload_eq {
    () => {
        fn same_as(&self, other: &dyn $crate::net::payload::AppPayload) -> bool {
            (other as &dyn std::any::Any)
                .downcast_ref::<Self>()
                .is_some_and(|o| o == self)
        }
    };
}

/// A packet's payload: nothing, or one protocol's value.
#[derive(Clone, Debug, Default)]
pub struct Payload(Option<Arc<dyn AppPayload>>);

impl Payload {
    pub const NONE: Payload = Payload(None);

    pub fn new<T: AppPayload>(value: T) -> Self {
        Payload(Some(Arc::new(value)))
    }

    /// `value` in an allocation kept from an earlier packet (see
    /// [`AppPayload::recycle`]), or a new one: no allocator call per
    /// packet for a protocol that sends a payload with each.
    #[inline]
    pub fn reuse<T: AppPayload>(spare: &'static Spare<T>, value: T) -> Self {
        match spare.take() {
            Some(mut a) => match Arc::get_mut(&mut a) {
                Some(slot) => {
                    *slot = value;
                    Payload(Some(a))
                }
                None => Payload::new(value),
            },
            None => Payload::new(value),
        }
    }

    /// A payload already shared (an RTCP compound sent to many members).
    pub fn shared<T: AppPayload>(value: Arc<T>) -> Self {
        Payload(Some(value))
    }

    /// The payload as a `T`, if it is one.
    #[inline]
    pub fn get<T: AppPayload>(&self) -> Option<&T> {
        let p: &dyn Any = self.0.as_deref()?;
        p.downcast_ref::<T>()
    }

    /// The payload as a `T` to change, if it is one and this packet holds
    /// the only reference (a packet not yet sent).
    pub fn get_mut<T: AppPayload>(&mut self) -> Option<&mut T> {
        let p: &mut dyn Any = Arc::get_mut(self.0.as_mut()?)?;
        p.downcast_mut::<T>()
    }

    pub fn is_none(&self) -> bool {
        self.0.is_none()
    }

    /// Lets go of the payload (the packet's life ended).
    #[inline]
    pub fn clear(&mut self) {
        if let Some(a) = self.0.take() {
            a.recycle();
        }
    }

    /// Writes the payload's header for pcap (nothing for no payload).
    pub fn emit(&self, p: &Packet, now: SimTime, buf: &mut [u8]) {
        if let Some(v) = &self.0 {
            v.emit(p, now, buf);
        }
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a.same_as(&**b),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct A(u32);
    impl AppPayload for A {
        crate::payload_eq!();
    }
    #[derive(Debug, PartialEq)]
    struct B(u32);
    impl AppPayload for B {
        crate::payload_eq!();
    }

    #[test]
    fn a_payload_is_read_back_as_its_own_type_only() {
        let p = Payload::new(A(7));
        assert_eq!(p.get::<A>(), Some(&A(7)));
        assert_eq!(p.get::<B>(), None);
        assert!(Payload::NONE.get::<A>().is_none());
        assert_eq!(p, Payload::new(A(7)));
        assert_ne!(p, Payload::new(A(8)));
        assert_ne!(p, Payload::new(B(7)));
        assert_ne!(p, Payload::NONE);
        assert_eq!(Payload::NONE, Payload::default());
    }

    thread_local! {
        static LOCAL_A: crate::net::spare::Local<Arc<Kept>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    static SPARE_A: Spare<Kept> = Spares::new(&LOCAL_A, SPARE_MAX);
    #[derive(Debug, PartialEq)]
    struct Kept(u32);
    impl AppPayload for Kept {
        crate::payload_eq!();
        fn recycle(self: Arc<Self>) {
            keep(&SPARE_A, self);
        }
    }

    #[test]
    fn a_cleared_payload_is_kept_and_carries_the_next_value() {
        let mut p = Payload::reuse(&SPARE_A, Kept(1));
        let addr = p.get::<Kept>().unwrap() as *const Kept;
        p.clear();
        assert!(p.is_none());
        assert_eq!(SPARE_A.counts(), (1, 0));
        let q = Payload::reuse(&SPARE_A, Kept(2));
        assert_eq!(q.get::<Kept>(), Some(&Kept(2)));
        assert_eq!(
            q.get::<Kept>().unwrap() as *const Kept,
            addr,
            "the same allocation"
        );
        assert_eq!(SPARE_A.counts(), (0, 0));
        // A copy still held (a multicast packet's other copies): not kept.
        let mut a = q.clone();
        a.clear();
        assert_eq!(SPARE_A.counts(), (0, 0));
        assert_eq!(q.get::<Kept>(), Some(&Kept(2)));
        // Kept up to SPARE_MAX by the thread, half of them moved to the
        // shared pool when more come.
        let mut many: Vec<Payload> = (0..SPARE_MAX + 5)
            .map(|i| Payload::reuse(&SPARE_A, Kept(i as u32)))
            .collect();
        many.iter_mut().for_each(Payload::clear);
        assert_eq!(SPARE_A.counts(), (SPARE_MAX / 2 + 5, SPARE_MAX / 2));
    }

    /// Changed in place only while this packet is its sole holder, and
    /// only as its own type.
    #[test]
    fn a_payload_changes_in_place_only_unshared() {
        let mut p = Payload::new(A(1));
        assert!(!p.is_none() && Payload::NONE.is_none());
        p.get_mut::<A>().expect("sole holder").0 = 5;
        assert_eq!(p.get::<A>(), Some(&A(5)));
        assert!(p.get_mut::<B>().is_none(), "not a B");
        let copy = p.clone();
        assert!(p.get_mut::<A>().is_none(), "a copy shares it");
        drop(copy);
        assert!(p.get_mut::<A>().is_some());
        assert!(Payload::NONE.clone().get_mut::<A>().is_none());
    }

    #[derive(Debug, PartialEq)]
    struct Tagged(u8);
    impl AppPayload for Tagged {
        crate::payload_eq!();
        fn emit(&self, p: &Packet, now: SimTime, buf: &mut [u8]) {
            buf[..3].copy_from_slice(&[self.0, p.seq as u8, now.0 as u8]);
        }
    }

    /// pcap's bytes come from the payload's own `emit`; no payload writes
    /// none.
    #[test]
    fn emit_writes_the_payloads_header() {
        let pkt = crate::net::packet::test_packet(0, 9, 100);
        let mut buf = [0u8; 4];
        Payload::new(Tagged(0xab)).emit(&pkt, SimTime(3), &mut buf);
        assert_eq!(buf, [0xab, 9, 3, 0]);
        let mut buf = [0u8; 4];
        Payload::NONE.emit(&pkt, SimTime(3), &mut buf);
        Payload::new(A(1)).emit(&pkt, SimTime(3), &mut buf);
        assert_eq!(
            buf, [0; 4],
            "nothing, and the trait's default writes nothing"
        );
    }

    #[test]
    fn a_payload_is_one_pointer_pair() {
        assert_eq!(std::mem::size_of::<Payload>(), 16);
    }
}
