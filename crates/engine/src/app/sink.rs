//! A sink: accepts packets for its port. Per-packet records (send time,
//! receive time, size, sequence) are kept by the engine's measurement layer
//! for every delivery, so the sink itself holds no state.

use super::{Action, App};
use crate::sim::SimTime;

#[derive(Default)]
pub struct Sink;

impl App for Sink {
    fn on_start(&mut self, _now: SimTime, _out: &mut Vec<Action>) {}
}
