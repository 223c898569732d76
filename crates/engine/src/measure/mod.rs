//! Measurements: what happened to every packet, and the tables built from it.

pub mod capacity;
pub mod delay;
pub mod emodel;
pub mod loss_runs;
pub mod mean;
pub mod memory;
pub mod merge;
pub mod names;
pub mod pcap;
pub mod recorder;
pub mod summary;
pub mod table;

pub use mean::RunningMean;
pub use recorder::{DropSite, Recorder};
pub use table::{Column, Table};
