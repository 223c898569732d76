//! PPACC, packet-pair based available-bandwidth congestion control, as the
//! SVC study describes it: the receiver's probe-gap estimator
//! (`estimator.rs`) and the sender's target-rate machine (`control.rs`).
//! Every constant the study leaves open is a field of [`PpaccConfig`],
//! with its default and the reason for it.

pub mod control;
pub mod endpoints;
pub mod estimator;

pub use control::{PpaccControl, State};
pub use estimator::PairEstimator;

use crate::sim::SimTime;

/// PPACC's parameters. Rates in bit/s.
#[derive(Clone, Debug)]
pub struct PpaccConfig {
    /// Smallest rate step per GOP (eps). Chosen: 5 kbit/s, 1% of the SVC
    /// study's 500 kbit/s per-flow share.
    pub eps_bps: f64,
    /// Largest rate step per GOP (kappa). Chosen: 30 kbit/s, 6% of the
    /// share: PPACC's point is to find the available bandwidth without
    /// probing into loss, and the available-bandwidth slope it follows is
    /// noisy (docs/models/ppacc.md).
    pub kappa_bps: f64,
    /// EWMA weight of each new available-bandwidth sample at the receiver.
    /// Chosen: 1/32: one pair sample swings between the whole link and
    /// nothing behind a class scheduler, and the sender steps on the
    /// estimate's slope.
    pub a_weight: f64,
    /// EWMA weight of each new bias sample (A - sending rate, at a loss
    /// notice). Chosen: 1/4.
    pub bias_weight: f64,
    /// No-loss short timer of the DECREASE state. Chosen: 2 s (7.5 GOPs of
    /// 8 frames at 30 frames/s), so that one congestion event holds the
    /// rate down for several RTTs and GOPs.
    pub short_timer: SimTime,
    /// FLAT holds for a random whole number of GOPs in 1..=this. Chosen:
    /// 16 (4.3 s at most), so that flows that left DECREASE together start
    /// probing again apart.
    pub long_timer_max_gops: u32,
    /// Loss notices within this time of the first one are one congestion
    /// event. Chosen: one RTT, given by the transport (this is the value
    /// before an RTT is known).
    pub event_window: SimTime,
    /// Lowest target rate. Chosen: 64 kbit/s (the base layer fits).
    pub min_rate_bps: f64,
    /// Pace packets at the target rate (a send buffer at the source);
    /// else packets leave as the media makes them, only the pairs spaced,
    /// and the target acts through the layer choice alone.
    pub shaping: bool,
    /// With shaping, pace at this times the target (at least 1). Chosen:
    /// 1, the target itself; above it a frame leaves sooner, in a burst at
    /// most this much faster than the target, as media pacers do.
    pub pacing_factor: f64,
    /// Without shaping: a packet (a lone one, or the first of a pair)
    /// leaves no sooner than s / Cb after the one before it, so no two
    /// packets leave closer than the bottleneck could carry them (the
    /// study: the first of a pair "must not leave too close to the
    /// previous packet"). False: back to back between pairs.
    pub capacity_spacing: bool,
}

impl Default for PpaccConfig {
    fn default() -> Self {
        PpaccConfig {
            eps_bps: 5e3,
            kappa_bps: 30e3,
            a_weight: 1.0 / 32.0,
            bias_weight: 0.25,
            short_timer: SimTime::from_millis(2000),
            long_timer_max_gops: 16,
            event_window: SimTime::from_millis(100),
            min_rate_bps: 64e3,
            shaping: true,
            pacing_factor: 1.0,
            capacity_spacing: false,
        }
    }
}

/// The probe-gap estimate of available bandwidth from one pair: input gap
/// s / Cb, output gap `d`: A = 2 Cb - d Cb^2 / s (bit/s; `s` in bits).
pub fn probe_gap_bps(cb_bps: f64, s_bits: f64, d_s: f64) -> f64 {
    2.0 * cb_bps - d_s * cb_bps * cb_bps / s_bits
}
