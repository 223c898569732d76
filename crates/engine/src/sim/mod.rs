//! Simulation kernel: integer time, the event queue, random streams.

pub mod events;
pub mod heap;
pub mod rng;
pub mod time;

pub use events::{EventKey, EventQueue, PastSchedule};
pub use rng::{uniform, RngStreams, SimRng};
pub use time::SimTime;
