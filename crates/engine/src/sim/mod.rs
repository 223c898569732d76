//! Simulation kernel: integer time, the event queue, random streams.

pub mod events;
pub mod heap;
pub mod jitter;
pub mod rng;
pub mod series;
pub mod time;

pub use events::{EventKey, EventQueue, PastSchedule};
pub use rng::{uniform, RngStreams, SimRng};
pub use series::Series;
pub use time::SimTime;
