//! Session protocols in scenarios (RTP today): a session is a set of
//! members that exchange media and control among themselves. Each protocol
//! keeps its spec, checks and construction in its own folder
//! (`app/rtp/spec.rs`) and lists its sessions in the scenario document.

use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};

pub trait SessionModel {
    /// Unique among all sessions; no '/'.
    fn name(&self) -> &str;
    /// The flows the session creates, in recorder-id order.
    fn flow_names(&self) -> Vec<String>;
    /// Reports every problem, each at its field below `path`.
    fn validate(&self, path: &str, scope: &Scope<'_>, c: &mut Checker);
    /// Adds the session's applications and flows; `index` is its position
    /// among its protocol's sessions.
    fn build(&self, index: usize, path: &str, ctx: &mut BuildCtx<'_>);
}
