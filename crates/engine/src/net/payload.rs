//! A packet's application payload, opaque to the network: each protocol
//! defines its own type and implements [`AppPayload`] for it; `net` moves
//! it without knowing what it is, and the receiving application reads it
//! back with [`Payload::get`].
//!
//! The payload is shared (`Arc`): the copies a multicast tree makes of one
//! packet (one per member of a large session) share it, and a packet with
//! no payload (CBR, TCP segments) carries no allocation at all.

use super::packet::Packet;
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
        if self.0.is_some() {
            self.0 = None;
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

    #[test]
    fn a_payload_is_one_pointer_pair() {
        assert_eq!(std::mem::size_of::<Payload>(), 16);
    }
}
