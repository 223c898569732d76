//! The world: nodes, links, applications, and the loop that drives them.
//!
//! Packet path: an application's `Send` enters its node; the node delivers
//! it locally or forwards it (unicast next hop, or one copy per branch of the
//! multicast tree); a link direction enqueues it, serialises it at its rate
//! (exact integer nanoseconds) and, after the propagation delay, hands it to
//! the next node, unless its loss model discards it.

use crate::app::{Action, App};
use crate::measure::pcap::PcapWriter;
use crate::measure::recorder::trace_kind;
use crate::measure::{DropSite, Recorder};
use crate::net::mcast::Tree;
use crate::net::ports::PortTable;
use crate::net::routes::RouteTable;
use crate::net::routing::Graph;
use crate::net::{Dest, DropReason, LinkDirId, NodeId, Packet, PacketRef, Packets};

mod dynamic;
pub mod partition;
pub mod topology;
use crate::sim::time::tx_time;
use crate::sim::{EventQueue, SimTime};
pub use topology::{LinkDir, Node};

/// Events are small (16 bytes). Packets on a wire wait in their link-dir's
/// in-transit FIFO (arrivals on one direction are in time order), and only
/// the head of each FIFO has an event: the heap stays as small as the number
/// of busy links plus timers, and never moves packets around.
#[derive(Clone, Copy, Default)]
pub enum Ev {
    /// The transmitter of a link-dir is free again and a packet waits for it.
    TxDone(LinkDirId),
    /// The first packet in transit on link-dir `.0` reaches the far end
    /// (where it goes from there, its [`Hop`], is on the wire with it).
    Arrive(LinkDirId),
    AppStart(u32),
    AppTimer(u32, u64),
    /// A changing link direction's wake-up (`world::dynamic`).
    Link(LinkDirId),
    /// Periodic capacity sampling (`measure.capacity_interval_ms`).
    Capacity,
    /// Periodic queue-length sampling. (The default only fills the event
    /// queue's free slots.)
    #[default]
    Sample,
}

/// Where a packet arriving at the far end of a link goes next, found when
/// it goes on the wire (its slot just read, so in cache) and kept with it
/// there: a link-dir, [`HOP_APP`] plus the application it is for,
/// [`HOP_LOCAL`] or [`HOP_LOOKUP`]. With hundreds of flows the route
/// look-up, then the next link, were two cache misses in a row on every
/// hop (the node's port list, then the application, at the last); found
/// ahead, the look-up's miss overlaps other work and the next link or
/// application is known as soon as the event is. Routes and ports are
/// fixed for a run, so the answer is the one the arrival would get.
pub type Hop = u32;
/// The packet is for an application of the node it arrives at: `HOP_APP |
/// app`. Link-dirs and applications are far fewer than 2^31.
pub const HOP_APP: Hop = 1 << 31;
/// The packet is for the node it arrives at, where no application listens
/// on its port (dropped there).
pub const HOP_LOCAL: Hop = u32::MAX - 1;
/// Decided on arrival (multicast, or no route: dropped there).
pub const HOP_LOOKUP: Hop = u32::MAX;

/// Where `p`, arriving at `node`, goes next (see [`Hop`]); the same
/// decision as [`World::forward`]'s for a unicast packet.
#[inline(always)]
fn hop_of(
    routes: &mut crate::net::routes::RouteTable,
    ports: &PortTable,
    node: NodeId,
    p: &Packet,
) -> Hop {
    match p.dst {
        Dest::Node(d) if d == node => {
            listener(ports, node, p).map_or(HOP_LOCAL, |app| HOP_APP | app)
        }
        Dest::Node(d) => routes.next_hop(node, d).unwrap_or(HOP_LOOKUP),
        Dest::Group { .. } => HOP_LOOKUP,
    }
}

/// The application of `node` listening on `p`'s destination port.
#[inline(always)]
fn listener(ports: &PortTable, node: NodeId, p: &Packet) -> Option<u32> {
    ports.listener(node, p.dst_port)
}

pub struct AppSlot {
    pub node: NodeId,
    pub start: SimTime,
    pub app: Box<dyn App>,
}

/// What a world is built on: the nodes, the link directions (with their
/// names), the graph and the unicast routes.
pub struct Topology {
    pub nodes: Vec<Node>,
    pub links: Vec<LinkDir>,
    pub link_names: Vec<String>,
    pub graph: Graph,
    pub routes: RouteTable,
}

pub struct World {
    pub nodes: Vec<Node>,
    pub links: Vec<LinkDir>,
    /// Names of the full-duplex links (index = LinkDir::link).
    pub link_names: Vec<String>,
    /// Unicast next hops.
    pub routes: crate::net::routes::RouteTable,
    pub trees: Vec<Tree>,
    /// (sender node, group) -> tree index.
    pub tree_of: rustc_hash::FxHashMap<(NodeId, u32), u32>,
    pub apps: Vec<AppSlot>,
    /// Per node: (port, app index).
    pub ports: PortTable,
    pub rec: Recorder,
    /// Every packet in the network, from its sending to its delivery or
    /// drop; queues and wires hold references into it.
    pub packets: Packets,
    pub q: EventQueue<Ev>,
    pub horizon: SimTime,
    pub sample_every: Option<SimTime>,
    /// Per full-duplex link: its pcap writer, if capturing.
    pub pcap: Vec<Option<PcapWriter>>,
    /// Some link captures: without it, a transmission reads nothing of
    /// `pcap` (a cache miss per hop with hundreds of links).
    pub capturing: bool,
    pub group_addrs: Vec<[u8; 4]>,
    pub next_packet_id: u64,
    /// Between one packet id and the next: 1, or the number of partitions
    /// (each numbers its packets from its own index, so ids stay unique).
    pub id_step: u64,
    /// Events other partitions executed (merged into this world).
    pub events_elsewhere: u64,
    /// After a split run: its partitions and window (the lookahead).
    pub split: Option<(u32, SimTime)>,
    /// Extra copies made by multicast duplication.
    pub copies: u64,
    /// Packets originated by applications.
    pub originated: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub io_error: Option<String>,
    /// Set when simulated time stopped advancing: the time and what kept
    /// happening there.
    pub stalled: Option<(SimTime, String)>,
    /// Set when an invariant checked during the run broke (simulated time
    /// going backwards): the time and what.
    pub broken: Option<(SimTime, String)>,
    /// The run stops after this many events (`hit_max_events` then set).
    pub max_events: u64,
    pub hit_max_events: bool,
    /// pcap bytes still allowed (limits.max_pcap_bytes); capture stops,
    /// with `pcap_truncated` set, before a record would pass it.
    pub pcap_left: u64,
    pub pcap_truncated: bool,
    /// Capacity offered and bytes carried per interval, if sampled.
    pub capacity: Option<crate::measure::capacity::CapacityProbe>,
    actions: Vec<Action>,
    drops: Vec<(PacketRef, DropReason)>,
    /// Scratch list of a multicast copy's next link-dirs.
    fan_out: Vec<LinkDirId>,
    /// This world's share of a run split into partitions (`partition`);
    /// None for a run in one piece.
    pub part: Option<Box<partition::Part>>,
}

/// More events than this at one instant means time has stopped advancing.
const STALL_EVENTS: u64 = 20_000_000;

/// Called every so many events; return false to stop the run.
pub type Progress<'a> = &'a mut dyn FnMut(SimTime, u64) -> bool;

pub const PROGRESS_EVERY: u64 = 1 << 20;

impl World {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        topo: Topology,
        trees: Vec<Tree>,
        tree_of: rustc_hash::FxHashMap<(NodeId, u32), u32>,
        apps: Vec<AppSlot>,
        ports: PortTable,
        rec: Recorder,
        horizon: SimTime,
        sample_every: Option<SimTime>,
        group_addrs: Vec<[u8; 4]>,
    ) -> Self {
        let n_links = topo.link_names.len();
        World {
            nodes: topo.nodes,
            links: topo.links,
            link_names: topo.link_names,
            routes: topo.routes,
            trees,
            tree_of,
            apps,
            ports,
            rec,
            packets: Packets::new(),
            q: EventQueue::new(),
            horizon,
            sample_every,
            pcap: (0..n_links).map(|_| None).collect(),
            capturing: false,
            group_addrs,
            next_packet_id: 0,
            id_step: 1,
            events_elsewhere: 0,
            split: None,
            copies: 0,
            originated: 0,
            delivered: 0,
            dropped: 0,
            io_error: None,
            stalled: None,
            broken: None,
            max_events: u64::MAX,
            hit_max_events: false,
            pcap_left: u64::MAX,
            pcap_truncated: false,
            capacity: None,
            actions: Vec::with_capacity(16),
            drops: Vec::with_capacity(16),
            fan_out: Vec::new(),
            part: None,
        }
    }

    pub fn now(&self) -> SimTime {
        self.q.now()
    }

    /// Events executed, by every partition of a split run.
    pub fn events(&self) -> u64 {
        self.q.events_executed() + self.events_elsewhere
    }

    /// Runs until the horizon. Returns false if `progress` asked to stop.
    pub fn run(&mut self, progress: Progress<'_>) -> bool {
        self.schedule_starts();
        if !self.run_until(self.horizon, progress) {
            return false;
        }
        self.q.advance_to(self.horizon);
        true
    }

    /// Schedules what starts a run: the applications (those of this
    /// world's partition, when split), and the capacity and queue samples.
    pub fn schedule_starts(&mut self) {
        for i in 0..self.apps.len() {
            if !self.owns_node(self.apps[i].node) {
                continue;
            }
            let at = self.apps[i].start;
            self.q
                .schedule_timer(at, Ev::AppStart(i as u32))
                .expect("start times are validated");
        }
        if let Some(c) = &self.capacity {
            let at = c.every;
            self.q.schedule_timer(at, Ev::Capacity).expect("future");
        }
        if self.sample_every.is_some() {
            self.q
                .schedule_timer(SimTime::ZERO, Ev::Sample)
                .expect("time zero");
        }
    }

    /// Whether this world runs `node` (every node, unless split).
    #[inline]
    pub fn owns_node(&self, node: NodeId) -> bool {
        self.part.as_ref().is_none_or(|p| p.owns(node))
    }

    /// Whether this world transmits on link-dir `ld`.
    #[inline]
    pub fn owns_link(&self, ld: LinkDirId) -> bool {
        self.owns_node(self.links[ld as usize].from)
    }

    /// Runs the events up to and including `until`. Returns false if
    /// `progress` asked to stop, the budget's event count was reached
    /// (`hit_max_events`), time stopped advancing (`stalled`) or went
    /// back (`broken`).
    pub fn run_until(&mut self, until: SimTime, progress: Progress<'_>) -> bool {
        let mut next_report = (self.q.events_executed() / PROGRESS_EVERY + 1) * PROGRESS_EVERY;
        let (mut at, mut same) = (SimTime::MAX, 0u64);
        loop {
            if self.q.events_executed() >= self.max_events {
                // Checked before the pop, so that no event is lost.
                self.hit_max_events = self.q.peek_time().is_some_and(|t| t <= until);
                if self.hit_max_events {
                    return false;
                }
            }
            let before = self.q.now();
            let Some((now, ev)) = self.q.pop_until(until) else {
                break;
            };
            // Events that never let time advance (a timer of zero length)
            // would run until memory runs out: stop and say where.
            if now < before {
                let what = self.describe(&ev);
                let msg = format!("simulated time went back from {before} to {now} at {what}");
                self.broken = Some((now, msg));
                return false;
            }
            if now == at {
                same += 1;
                if same > STALL_EVENTS {
                    self.stalled = Some((now, self.describe(&ev)));
                    return false;
                }
            } else {
                (at, same) = (now, 0);
            }
            self.dispatch(now, ev);
            if self.q.events_executed() >= next_report {
                next_report += PROGRESS_EVERY;
                if !progress(now, self.q.events_executed()) {
                    return false;
                }
            }
        }
        true
    }

    /// What an event is about, for error messages.
    fn describe(&self, ev: &Ev) -> String {
        let app = |i: u32| {
            let node = self.apps[i as usize].node as usize;
            format!("an application on node \"{}\"", self.nodes[node].name)
        };
        match ev {
            Ev::TxDone(ld) | Ev::Arrive(ld) | Ev::Link(ld) => {
                let l = &self.links[*ld as usize];
                format!(
                    "link \"{}\"",
                    self.link_names.get(l.link as usize).map_or("?", |s| s)
                )
            }
            Ev::AppStart(i) | Ev::AppTimer(i, _) => app(*i),
            Ev::Sample => "queue sampling (measure.queue_sample_ms)".to_string(),
            Ev::Capacity => "capacity sampling (measure.capacity_interval_ms)".to_string(),
        }
    }

    fn dispatch(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::TxDone(ld) => self.tx_done(ld, now),
            Ev::Link(ld) => self.on_link_event(ld, now),
            Ev::Capacity => self.sample_capacity(now),
            Ev::Arrive(ld) => {
                let link = &mut self.links[ld as usize];
                // A changing link can leave an arrival event behind (its
                // wire lost at an outage, a jittered packet put ahead):
                // only the first packet due now arrives.
                let Some((at, p, hop)) = link.in_transit.pop_front() else {
                    return;
                };
                if at != now {
                    return link.in_transit.push_front(at, p, hop);
                }
                if let Some((next, _, _)) = link.in_transit.front() {
                    self.q
                        .schedule(next, Ev::Arrive(ld))
                        .expect("arrivals are in time order");
                }
                self.arrive(ld, p, hop, now)
            }
            Ev::AppStart(a) => {
                let mut acts = std::mem::take(&mut self.actions);
                self.apps[a as usize].app.on_start(now, &mut acts);
                self.run_actions(a, &mut acts, now);
                self.restore_actions(acts);
            }
            Ev::AppTimer(a, token) => {
                let mut acts = std::mem::take(&mut self.actions);
                self.apps[a as usize].app.on_timer(now, token, &mut acts);
                self.run_actions(a, &mut acts, now);
                self.restore_actions(acts);
            }
            Ev::Sample => {
                let mut room = true;
                for (i, l) in self.links.iter().enumerate() {
                    if self.part.as_ref().is_some_and(|p| !p.owns(l.from)) {
                        continue; // another partition's transmitter
                    }
                    let q = &l.queue;
                    let len = (q.len_packets() as u64, q.len_bytes());
                    room &= self
                        .rec
                        .sample_queue(now, i as LinkDirId, len, q.discipline_sample());
                }
                if !room {
                    return; // at limits.max_queue_sample_rows: no more samples
                }
                let every = self.sample_every.expect("sampling on");
                let at = now + every;
                self.q.schedule_timer(at, Ev::Sample).expect("future");
            }
        }
    }

    /// Puts the action buffer back. The one it replaces is usually the
    /// empty Vec `take` left (a nested delivery may have put back its own,
    /// which is dropped as usual): a Vec without capacity holds nothing,
    /// and forgetting it saves a call to the drop glue of `Action`
    /// (packets with payloads) per event.
    #[inline(always)]
    fn restore_actions(&mut self, acts: Vec<Action>) {
        let old = std::mem::replace(&mut self.actions, acts);
        if old.capacity() == 0 {
            std::mem::forget(old);
        }
    }

    fn run_actions(&mut self, app: u32, acts: &mut Vec<Action>, now: SimTime) {
        let node = self.apps[app as usize].node;
        for a in acts.drain(..) {
            match a {
                Action::Timer { at, token } => {
                    // An application asking for the past is a bug in that
                    // application; run it now rather than corrupt the clock.
                    let at = at.max(now);
                    self.q
                        .schedule_timer(at, Ev::AppTimer(app, token))
                        .expect("clamped to now");
                }
                Action::Send(mut p) => {
                    p.id = self.next_packet_id;
                    self.next_packet_id += self.id_step;
                    p.src = node;
                    // An application may date a packet earlier (a media
                    // frame that waited in a send buffer); the default
                    // (unset, SimTime::MAX) is now.
                    p.created_at = p.created_at.min(now);
                    if let Dest::Group { group, .. } = p.dst {
                        let tree = self
                            .tree_of
                            .get(&(node, group))
                            .copied()
                            .unwrap_or(u32::MAX);
                        p.dst = Dest::Group { group, tree };
                    }
                    self.originated += 1;
                    self.rec.on_send(&p);
                    let p = self.packets.insert(p);
                    self.forward(node, None, p, now);
                }
            }
        }
    }

    /// A packet at `node`, originated here (`via` None) or arrived on the
    /// link-dir `via`.
    fn forward(&mut self, node: NodeId, via: Option<LinkDirId>, p: PacketRef, now: SimTime) {
        // The unicast arms are `hop_of`'s decision taken at once. Going
        // through `hop_of` here too made runs 2-5% slower (more code in
        // the event loop's inlined paths), so the two stay side by side.
        let (dst, src) = (self.packets[p].dst, self.packets[p].src);
        match dst {
            Dest::Node(d) if d == node => self.deliver(node, p, now),
            Dest::Node(d) => match self.routes.next_hop(node, d) {
                Some(ld) => self.enqueue(ld, p, now),
                None => self.drop(p, DropReason::NO_ROUTE, DropSite::Node(node), now),
            },
            Dest::Group { tree, .. } => self.forward_group(node, via, tree, src, p, now),
        }
    }

    /// A multicast packet at `node`: copies down the tree's branches (and
    /// up to a local member). Out of line: the unicast path stays small.
    #[inline(never)]
    fn forward_group(
        &mut self,
        node: NodeId,
        via: Option<LinkDirId>,
        tree: u32,
        src: NodeId,
        p: PacketRef,
        now: SimTime,
    ) {
        let Some(t) = self.trees.get(tree as usize) else {
            return self.drop(p, DropReason::NO_ROUTE, DropSite::Node(node), now);
        };
        let mut out = std::mem::take(&mut self.fan_out);
        let local = t.targets_into(node, via, src, &mut out);
        let targets = out.len() + local as usize;
        if targets == 0 {
            self.fan_out = out;
            return self.drop(p, DropReason::NO_ROUTE, DropSite::Node(node), now);
        }
        self.copies += targets as u64 - 1;
        // Copies first, from the packet as it came; the packet
        // itself goes last (to the last branch, or up locally).
        let n_out = out.len();
        for (k, &ld) in out.iter().enumerate() {
            if k + 1 == n_out && !local {
                self.enqueue(ld, p, now);
            } else {
                let copy = self.packets.insert(self.packets[p].clone());
                self.enqueue(ld, copy, now);
            }
        }
        self.fan_out = out;
        if local {
            self.deliver(node, p, now);
        }
    }

    fn deliver(&mut self, node: NodeId, p: PacketRef, now: SimTime) {
        match listener(&self.ports, node, &self.packets[p]) {
            Some(app) => self.deliver_to(node, app, p, now),
            None => {
                let reason = if self.lost_on_receipt(node, p, now) {
                    DropReason::RECEIVER_LOSS
                } else {
                    DropReason::NO_LISTENER
                };
                self.drop(p, reason, DropSite::Node(node), now)
            }
        }
    }

    /// Whether the receiver-loss model of `node` (if any) loses `p`.
    #[inline(always)]
    fn lost_on_receipt(&mut self, node: NodeId, p: PacketRef, now: SimTime) -> bool {
        let loss = self.nodes[node as usize].receiver_loss.as_mut();
        loss.is_some_and(|l| l.is_lost(&self.packets[p], now))
    }

    /// Delivers `p` to application `app` of `node` (listening on its port).
    fn deliver_to(&mut self, node: NodeId, app: u32, r: PacketRef, now: SimTime) {
        if self.lost_on_receipt(node, r, now) {
            return self.drop(r, DropReason::RECEIVER_LOSS, DropSite::Node(node), now);
        }
        self.delivered += 1;
        let p = &self.packets[r];
        self.rec.on_deliver(p, node, now);
        let mut acts = std::mem::take(&mut self.actions);
        self.apps[app as usize].app.on_packet(now, p, &mut acts);
        self.packets.release(r);
        self.run_actions(app, &mut acts, now);
        self.restore_actions(acts);
    }

    #[inline(always)]
    fn enqueue(&mut self, ld: LinkDirId, p: PacketRef, now: SimTime) {
        if self.rec.trace_on {
            self.rec
                .trace(trace_kind::ENQUEUE, ld, &self.packets[p], now);
        }
        let link = &mut self.links[ld as usize];
        if link.dynamic {
            return self.enqueue_dynamic(ld, p, now);
        }
        let idle = now >= link.busy_until && !link.done_pending;
        if idle && link.queue.pass_through(&self.packets[p]) {
            return self.start_tx(ld, p, now);
        }
        let mut drops = std::mem::take(&mut self.drops);
        let idle_since = idle.then_some(link.busy_until);
        let packets = &mut self.packets;
        link.queue
            .enqueue_at(p, packets, now, idle_since, &mut drops);
        let next = if idle {
            link.queue.dequeue(packets, now, &mut drops)
        } else {
            None
        };
        if !idle && !link.done_pending && !link.queue.is_empty() {
            // Someone waits for the busy transmitter: wake it when it frees.
            link.done_pending = true;
            let at = link.busy_until;
            self.q
                .schedule(at, Ev::TxDone(ld))
                .expect("busy_until is not in the past");
        }
        for (d, r) in drops.drain(..) {
            self.drop(d, r, DropSite::Link(ld), now);
        }
        self.drops = drops;
        if let Some(p) = next {
            self.start_tx(ld, p, now);
        }
    }

    #[inline(always)]
    fn start_tx(&mut self, ld: LinkDirId, r: PacketRef, now: SimTime) {
        let link = &mut self.links[ld as usize];
        if now > link.busy_until {
            link.tx_carry = 0; // after an idle gap the next packet starts on a fresh clock edge
        }
        let size_bytes = self.packets[r].size_bytes;
        let bits = size_bytes as u64 * 8;
        let tx = if link.ns_per_bit > 0 {
            SimTime(bits * link.ns_per_bit) // exact: 1e9 is a multiple of the rate
        } else {
            let (tx, carry) = tx_time(bits, link.rate_bps, link.tx_carry);
            link.tx_carry = carry;
            tx
        };
        link.busy_until = now + tx;
        link.busy_ns += tx.as_nanos();
        let arrive_at = now + tx + link.delay;
        let lidx = link.link as usize;
        if !link.done_pending && !link.queue.is_empty() {
            link.done_pending = true;
            self.q.schedule_in(tx, Ev::TxDone(ld));
        }
        if self.capturing {
            self.capture(lidx, r, now);
        }
        if self.rec.trace_on {
            self.rec
                .trace(trace_kind::DEQUEUE, ld, &self.packets[r], now);
        }
        let link = &mut self.links[ld as usize];
        let hop = hop_of(&mut self.routes, &self.ports, link.to, &self.packets[r]);
        if link.cut {
            return self.hand_over(ld, arrive_at, r, hop);
        }
        if link.in_transit.is_empty() {
            self.q.schedule(arrive_at, Ev::Arrive(ld)).expect("future");
        }
        link.in_transit.push_back(arrive_at, r, hop);
    }

    /// Writes `p`, starting on full-duplex link `lidx`, to the link's pcap
    /// file (if it has one and the byte budget allows).
    #[cold]
    pub(super) fn capture(&mut self, lidx: usize, r: PacketRef, now: SimTime) {
        let p = &self.packets[r];
        if self.pcap[lidx].is_some() && !self.pcap_truncated {
            // A record: 16 bytes of header and the packet, counted whole
            // whatever the snap length (docs/scenario.md, limits).
            let bytes = 16 + p.size_bytes as u64;
            if bytes > self.pcap_left {
                self.pcap_truncated = true;
            } else {
                self.pcap_left -= bytes;
            }
        }
        if let Some(w) = self.pcap[lidx].as_mut().filter(|_| !self.pcap_truncated) {
            let src = self.nodes[p.src as usize].addr;
            let dst = match p.dst {
                Dest::Node(d) => self.nodes[d as usize].addr,
                Dest::Group { group, .. } => self.group_addrs[group as usize],
            };
            if let Err(e) = w.write(now, p, src, dst) {
                self.io_error
                    .get_or_insert_with(|| format!("pcap for link {}: {e}", self.link_names[lidx]));
                self.pcap[lidx] = None;
            }
        }
    }

    fn tx_done(&mut self, ld: LinkDirId, now: SimTime) {
        let mut drops = std::mem::take(&mut self.drops);
        let link = &mut self.links[ld as usize];
        link.done_pending = false;
        let next = link.queue.dequeue(&mut self.packets, now, &mut drops);
        for (d, r) in drops.drain(..) {
            self.drop(d, r, DropSite::Link(ld), now);
        }
        self.drops = drops;
        if let Some(p) = next {
            self.start_tx(ld, p, now);
        }
    }

    #[inline(always)]
    fn arrive(&mut self, ld: LinkDirId, p: PacketRef, hop: Hop, now: SimTime) {
        if self.rec.trace_on {
            self.rec
                .trace(trace_kind::RECEIVE, ld, &self.packets[p], now);
        }
        let link = &mut self.links[ld as usize];
        if let Some(loss) = link.loss.as_mut() {
            if loss.is_lost(&self.packets[p], now) {
                link.lost_packets += 1;
                return self.drop(p, DropReason::LINK_LOSS, DropSite::Link(ld), now);
            }
        }
        let to = link.to;
        match hop {
            HOP_LOOKUP => self.forward(to, Some(ld), p, now),
            HOP_LOCAL => self.deliver(to, p, now),
            app if app & HOP_APP != 0 => self.deliver_to(to, app & !HOP_APP, p, now),
            next => self.enqueue(next, p, now),
        }
    }

    /// Records a drop and charges it to the receivers it deprives.
    pub(super) fn drop(&mut self, r: PacketRef, reason: DropReason, site: DropSite, now: SimTime) {
        self.dropped += 1;
        let p = &self.packets[r];
        let local_delivery =
            reason == DropReason::RECEIVER_LOSS || reason == DropReason::NO_LISTENER;
        match (p.dst, site) {
            (Dest::Node(d), _) => self.rec.on_drop(p, reason, site, now, &[d]),
            (Dest::Group { .. }, DropSite::Node(n)) if local_delivery => {
                self.rec.on_drop(p, reason, site, now, &[n])
            }
            (Dest::Group { tree, .. }, _) => {
                let receivers = match (self.trees.get(tree as usize), site) {
                    (Some(t), DropSite::Link(ld)) => {
                        t.receivers_via(ld, self.links[ld as usize].to)
                    }
                    (Some(t), DropSite::Node(n)) => t.receivers_at(n),
                    (None, _) => Vec::new(),
                };
                self.rec.on_drop(p, reason, site, now, &receivers)
            }
        }
        self.packets.release(r);
    }

    /// Receivers a packet copy in flight on link-dir `ld` would reach.
    pub fn receivers_via(&self, p: &Packet, ld: LinkDirId) -> Vec<NodeId> {
        match p.dst {
            Dest::Node(d) => vec![d],
            Dest::Group { tree, .. } => self
                .trees
                .get(tree as usize)
                .map_or(vec![], |t| t.receivers_via(ld, self.links[ld as usize].to)),
        }
    }
}

/// a -> b at 1 Mbit/s and 1 ms, for `duration_s`: a CBR flow `f` of
/// 100-byte payloads every 10 ms from `start_s` (for tests that replace
/// its applications).
#[cfg(test)]
pub(crate) fn two_node_cbr(duration_s: f64, start_s: f64) -> World {
    let text = format!(
        r#"{{"duration_s": {duration_s}, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
        "links": [{{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 1}}],
        "flows": [{{"name": "f", "type": "cbr", "src": "a", "dst": "b",
                    "payload_bytes": 100, "interval_ms": 10, "start_s": {start_s}}}]}}"#
    );
    let s = crate::scenario::parse_and_validate(&text).expect("valid");
    crate::scenario::build::build(&s, &crate::sim::RngStreams::new(1, 0)).expect("builds")
}

#[cfg(test)]
pub(crate) mod stall_tests {
    use crate::app::{Action, App};
    use crate::sim::SimTime;

    /// Asks for its timer again at the same instant, for ever.
    pub(crate) struct Stuck;
    impl App for Stuck {
        fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
            out.push(Action::Timer { at: now, token: 0 });
        }
        fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
            out.push(Action::Timer { at: now, token: 0 });
        }
    }

    #[test]
    fn a_run_whose_time_stops_ends_with_where_and_what() {
        let mut w = super::two_node_cbr(1.0, 0.25);
        let cbr = (w.apps.iter()).position(|a| w.nodes[a.node as usize].name == "a");
        w.apps[cbr.expect("the cbr source")].app = Box::new(Stuck);
        let mut progress = |_, _| true;
        assert!(!w.run(&mut progress));
        let (at, what) = w.stalled.clone().expect("stalled");
        assert_eq!(at, SimTime::from_millis(250));
        assert!(what.contains("node \"a\""), "{what}");
    }
}

/// The checks of the engine's own bookkeeping catch what they are there
/// for: time that goes back, a packet delivered twice.
#[cfg(test)]
mod invariant_tests {
    use super::{Ev, World};
    use crate::app::{Action, App};
    use crate::net::Packet;
    use crate::sim::SimTime;
    use std::sync::{Arc, Mutex};

    fn world() -> World {
        super::two_node_cbr(1.0, 0.5)
    }

    fn app_at(w: &World, node: &str) -> usize {
        (w.apps.iter())
            .position(|a| w.nodes[a.node as usize].name == node)
            .expect("an application there")
    }

    #[test]
    fn time_going_back_stops_the_run_with_when_and_where() {
        let mut w = world();
        let sink = app_at(&w, "b") as u32;
        w.q.schedule_unchecked(SimTime::from_millis(100), Ev::AppTimer(sink, 0));
        w.q.advance_to(SimTime::from_millis(200));
        let mut progress = |_, _| true;
        assert!(!w.run(&mut progress));
        let (at, what) = w.broken.clone().expect("caught");
        assert_eq!(at, SimTime::from_millis(100));
        assert!(
            what.contains("went back") && what.contains("node \"b\""),
            "{what}"
        );
    }

    /// Keeps the packets it receives.
    struct Keep(Arc<Mutex<Vec<Packet>>>);
    impl App for Keep {
        fn on_start(&mut self, _now: SimTime, _out: &mut Vec<Action>) {}
        fn on_packet(&mut self, _now: SimTime, p: &Packet, _out: &mut Vec<Action>) {
            self.0.lock().expect("one thread").push(p.clone());
        }
    }

    #[test]
    fn a_packet_delivered_twice_fails_conservation_naming_the_flow() {
        let mut w = world();
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = app_at(&w, "b");
        w.apps[sink].app = Box::new(Keep(got.clone()));
        let mut progress = |_, _| true;
        assert!(w.run(&mut progress));
        let b = w.apps[sink].node;
        let first = got.lock().expect("one thread")[0].clone();
        assert!(crate::output::close_books(&mut w).is_ok());
        let now = w.now();
        let first = w.packets.insert(first);
        w.deliver(b, first, now);
        let err = crate::output::close_books(&mut w).expect_err("caught");
        assert!(
            err.contains("flow \"f\"") && err.contains("counted twice"),
            "{err}"
        );
    }
}

/// The end-of-run books say which way a row is off: more accounted for
/// than sent (a copy counted twice) or fewer; and the run-wide ledger is
/// checked on its own.
#[cfg(test)]
mod books_tests {
    use crate::output::check_books;
    use crate::sim::RngStreams;

    /// CBR every 10 ms from 0.5 s for 1 s (50 packets), the one with
    /// sequence 3 lost on the link: the run ends with none in flight.
    fn ran() -> super::World {
        let text = r#"{"duration_s": 1, "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 1,
                       "loss": {"type": "explicit", "packets": [{"flow": "f", "seq": 3}]}}],
            "flows": [{"name": "f", "type": "cbr", "src": "a", "dst": "b",
                       "payload_bytes": 100, "interval_ms": 10, "start_s": 0.5}]}"#;
        let s = crate::scenario::parse_and_validate(text).expect("valid");
        let mut w = crate::scenario::build::build(&s, &RngStreams::new(1, 0)).expect("builds");
        assert!(w.run(&mut |_, _| true));
        w
    }

    #[test]
    fn a_row_off_by_one_says_which_way() {
        let mut w = ran();
        let (ledger, rows) = check_books(&w, 0, vec![0]).expect("balanced");
        assert_eq!((ledger.originated, ledger.dropped, rows), (50, 1, vec![0]));
        // One more in flight than there is: counted twice.
        let err = check_books(&w, 0, vec![1]).expect_err("caught");
        let want = "packet conservation violated for flow \"f\" at receiver \"b\": \
                    sent 50 != received 49 + lost 1 + in flight 1 (a packet counted twice)";
        assert_eq!(err, want);
        // One fewer received: lost track of.
        w.rec.got[0].received -= 1;
        let err = check_books(&w, 0, vec![0]).expect_err("caught");
        assert!(
            err.ends_with("sent 50 != received 48 + lost 1 + in flight 0"),
            "{err}"
        );
    }

    #[test]
    fn the_run_wide_ledger_is_checked_beside_the_rows() {
        let w = ran();
        let err = check_books(&w, 1, vec![0]).expect_err("caught");
        assert_eq!(
            err,
            "packet conservation violated: originated 50 + multicast copies 0 != \
             delivered 49 + dropped 1 + in flight 1"
        );
    }
}

/// A packet stored but in no queue and on no wire (neither delivered nor
/// dropped) fails the end-of-run books.
#[cfg(test)]
mod store_tests {
    use crate::net::packet::test_packet;
    use crate::sim::RngStreams;

    #[test]
    fn a_packet_lost_by_the_engine_fails_the_books() {
        let text = r#"{"duration_s": 1, "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 1}],
            "flows": [{"name": "f", "type": "cbr", "src": "a", "dst": "b",
                       "payload_bytes": 100, "interval_ms": 10}]}"#;
        let s = crate::scenario::parse_and_validate(text).expect("valid");
        let mut w = crate::scenario::build::build(&s, &RngStreams::new(1, 0)).expect("builds");
        assert!(w.run(&mut |_, _| true));
        assert!(crate::output::close_books(&mut w).is_ok());
        w.packets.insert(test_packet(0, 0, 100));
        let err = crate::output::close_books(&mut w).expect_err("caught");
        assert!(err.contains("stored"), "{err}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asks for a timer at the current instant on every timer, so that
    /// simulated time never advances past `stuck_at`.
    struct Stuck {
        stuck_at: SimTime,
    }

    impl App for Stuck {
        fn on_start(&mut self, _now: SimTime, out: &mut Vec<Action>) {
            out.push(Action::Timer {
                at: self.stuck_at,
                token: 0,
            });
        }
        fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
            out.push(Action::Timer { at: now, token: 0 });
        }
    }

    fn world_with_stuck_app(stuck_at: SimTime) -> World {
        let mut w = two_node_cbr(10.0, 0.0);
        w.apps[0].app = Box::new(Stuck { stuck_at });
        w
    }

    /// Events at one instant without end stop the run there, after
    /// exactly STALL_EVENTS + 1 of them, and say where.
    #[test]
    fn a_run_stuck_at_one_instant_stops_and_says_where() {
        let at = SimTime::from_millis_f64(1.5);
        let mut w = world_with_stuck_app(at);
        assert!(!w.run(&mut |_, _| true));
        let (t, what) = w.stalled.take().expect("stalled");
        assert_eq!(t, at);
        assert!(what.contains("application"), "{what}");
        // Two starts at 0 (the flow's source, replaced, and its sink), the
        // first timer at `at` (the count starts there), then
        // STALL_EVENTS + 1 more at that instant.
        assert_eq!(w.apps.len(), 2);
        assert_eq!(w.now(), at);
        assert_eq!(w.q.events_executed(), STALL_EVENTS + 4);
    }
}

/// The hop found when a packet becomes the first on a wire is the one
/// `forward` would choose when it arrives.
#[cfg(test)]
mod hop_tests {
    use super::{hop_of, HOP_APP, HOP_LOCAL, HOP_LOOKUP};
    use crate::net::packet::test_packet;
    use crate::net::Dest;
    use crate::sim::RngStreams;

    #[test]
    fn a_hop_is_the_next_link_the_listening_app_or_left_to_the_arrival() {
        // a - b - c, and d on its own; a CBR flow's sink listens on c.
        let text = r#"{"duration_s": 1,
            "nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}],
            "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 1},
                      {"a": "b", "b": "c", "rate_bps": 1e6, "delay_ms": 1}],
            "flows": [{"name": "f", "type": "cbr", "src": "a", "dst": "c",
                       "payload_bytes": 100, "interval_ms": 10}]}"#;
        let s = crate::scenario::parse_and_validate(text).expect("valid");
        let mut w = crate::scenario::build::build(&s, &RngStreams::new(1, 0)).expect("builds");
        let id = |w: &super::World, name: &str| {
            w.nodes.iter().position(|n| n.name == name).expect("a node") as u32
        };
        let (a, b, c, d) = (id(&w, "a"), id(&w, "b"), id(&w, "c"), id(&w, "d"));
        let to = |dst| {
            let mut p = test_packet(0, 0, 100);
            p.dst = Dest::Node(dst);
            p
        };
        let b_to_c = w.routes.next_hop(b, c).expect("a route");
        assert_eq!(w.links[b_to_c as usize].to, c);
        assert_eq!(hop_of(&mut w.routes, &w.ports, b, &to(c)), b_to_c);
        let (port, sink) = w.ports.of(c).next().expect("a listener on c");
        assert_eq!(w.nodes[w.apps[sink as usize].node as usize].name, "c");
        let mut for_sink = to(c);
        for_sink.dst_port = port;
        assert_eq!(
            hop_of(&mut w.routes, &w.ports, c, &for_sink),
            HOP_APP | sink
        );
        // For c, but on a port nobody listens on: dropped on arrival.
        let mut unheard = to(c);
        unheard.dst_port = port.wrapping_add(1);
        assert_eq!(hop_of(&mut w.routes, &w.ports, c, &unheard), HOP_LOCAL);
        // No route: decided (and dropped) on arrival, as before.
        assert_eq!(hop_of(&mut w.routes, &w.ports, a, &to(d)), HOP_LOOKUP);
        let mut group = to(c);
        group.dst = Dest::Group { group: 0, tree: 0 };
        assert_eq!(hop_of(&mut w.routes, &w.ports, a, &group), HOP_LOOKUP);
    }
}

/// The event loop's reports and limits: progress at every
/// [`PROGRESS_EVERY`] events, counted across calls; a run cut at its
/// event budget only while events remain; queue sampling that stops
/// with its table full.
#[cfg(test)]
mod loop_tests {
    use super::*;
    use crate::sim::RngStreams;

    /// One timer every microsecond, for ever.
    struct Ticker;
    impl App for Ticker {
        fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
            out.push(Action::Timer { at: now, token: 0 });
        }
        fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
            let at = now + SimTime::from_nanos(1_000);
            out.push(Action::Timer { at, token: 0 });
        }
    }

    /// a -> b, the source replaced by a ticker (one event a microsecond)
    /// and the sink idle: events up to `until` are the two starts and
    /// one timer per microsecond from 0.
    fn ticking() -> World {
        let mut w = super::two_node_cbr(10.0, 0.0);
        let src = (w.apps.iter()).position(|a| w.nodes[a.node as usize].name == "a");
        w.apps[src.expect("the source")].app = Box::new(Ticker);
        w.schedule_starts();
        w
    }

    fn events_by(us: u64) -> u64 {
        2 + us + 1
    }

    #[test]
    fn progress_comes_at_every_multiple_of_the_report_interval_across_calls() {
        let mut w = ticking();
        let mut seen = Vec::new();
        // 1.5 reports' worth, then on to 3.2.
        let first = (PROGRESS_EVERY * 3 / 2) - 3;
        assert!(
            w.run_until(SimTime::from_nanos(first * 1_000), &mut |_, e| {
                seen.push(e);
                true
            })
        );
        assert_eq!(w.q.events_executed(), events_by(first));
        assert_eq!(seen, [PROGRESS_EVERY]);
        let second = (PROGRESS_EVERY * 16 / 5) - 3;
        assert!(
            w.run_until(SimTime::from_nanos(second * 1_000), &mut |t, e| {
                assert_eq!(
                    t,
                    SimTime::from_nanos((e - 3) * 1_000),
                    "reported at its event's time"
                );
                seen.push(e);
                true
            })
        );
        assert_eq!(seen, [1, 2, 3].map(|k| k * PROGRESS_EVERY));
        // Asked to stop, the run stops there.
        let mut calls = 0;
        let end = SimTime::from_nanos(PROGRESS_EVERY * 5 * 1_000);
        assert!(!w.run_until(end, &mut |_, _| {
            calls += 1;
            false
        }));
        assert_eq!((calls, w.q.events_executed()), (1, 4 * PROGRESS_EVERY));
    }

    #[test]
    fn the_event_budget_stops_a_run_only_with_events_left() {
        let until = SimTime::from_nanos(999 * 1_000);
        let mut w = ticking();
        w.max_events = 100;
        assert!(!w.run_until(until, &mut |_, _| true));
        assert!(w.hit_max_events);
        assert_eq!(w.q.events_executed(), 100);
        // A budget of exactly the events up to `until` is no cut.
        let mut w = ticking();
        w.max_events = events_by(999);
        assert!(w.run_until(until, &mut |_, _| true));
        assert!(!w.hit_max_events);
        assert_eq!(w.q.events_executed(), events_by(999));
    }

    /// A row per link direction and sample (here 2, a-b both ways): with
    /// room for 5 rows, the samples at 0 and 100 ms fill 4, the one at
    /// 200 ms adds one and finds the table full: no sample after it.
    #[test]
    fn queue_sampling_stops_once_its_table_is_full() {
        let events = |measure: &str| {
            let text = format!(
                r#"{{"duration_s": 1, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
                "links": [{{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 1}}],
                "flows": [{{"name": "f", "type": "cbr", "src": "a", "dst": "b",
                            "payload_bytes": 100, "interval_ms": 10}}],
                "measure": {measure}, "limits": {{"max_queue_sample_rows": 5}}}}"#
            );
            let s = crate::scenario::parse_and_validate(&text).expect("valid");
            let mut w = crate::scenario::build::build(&s, &RngStreams::new(1, 0)).expect("builds");
            assert!(w.run(&mut |_, _| true));
            (w.q.events_executed(), w.rec.queue_samples_truncated)
        };
        let (without, _) = events(r#"{}"#);
        let (with, truncated) = events(r#"{"queue_sample_ms": 100}"#);
        assert_eq!(with - without, 3);
        assert!(truncated);
        // Every 250 ms: the third sample (500 ms) fills the table too.
        let (sparser, truncated) = events(r#"{"queue_sample_ms": 250}"#);
        assert_eq!(sparser - without, 3);
        assert!(truncated);
    }
}

/// A link's serialisation in whole nanoseconds: the remainder carried
/// across back-to-back packets and dropped after an idle gap, the exact
/// path for rates that divide a second's nanoseconds, no transmitter
/// wake-up without a packet waiting; and a packet for its own node.
#[cfg(test)]
mod link_tests {
    use super::*;
    use crate::sim::RngStreams;
    use std::sync::{Arc, Mutex};

    /// Records when each packet arrives.
    struct Times(Arc<Mutex<Vec<SimTime>>>);
    impl App for Times {
        fn on_start(&mut self, _now: SimTime, _out: &mut Vec<Action>) {}
        fn on_packet(&mut self, now: SimTime, _p: &Packet, _out: &mut Vec<Action>) {
            self.0.lock().expect("one thread").push(now);
        }
    }

    /// Two bursts of two 1000-byte packets on a-b (1 ms), 1 ms apart
    /// (each 8000 bits takes longer than that at `rate_bps`), from 0 and
    /// from 100 ms. Returns the arrivals at b, the events run and the
    /// packets a->b sent.
    fn bursts(rate_bps: f64) -> (Vec<u64>, u64, u64) {
        let text = format!(
            r#"{{"duration_s": 1, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
            "links": [{{"a": "a", "b": "b", "rate_bps": {rate_bps}, "delay_ms": 1}}],
            "flows": [{{"name": "f", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 972,
                        "interval_ms": 1, "max_packets": 2}},
                      {{"name": "g", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 972,
                        "interval_ms": 1, "max_packets": 2, "start_s": 0.1}}]}}"#
        );
        let s = crate::scenario::parse_and_validate(&text).expect("valid");
        let mut w = crate::scenario::build::build(&s, &RngStreams::new(1, 0)).expect("builds");
        let got = Arc::new(Mutex::new(Vec::new()));
        for slot in w
            .apps
            .iter_mut()
            .filter(|a| w.nodes[a.node as usize].name == "b")
        {
            slot.app = Box::new(Times(got.clone()));
        }
        assert!(w.run(&mut |_, _| true));
        let times = got
            .lock()
            .expect("one thread")
            .iter()
            .map(|t| t.as_nanos())
            .collect();
        let sent = w
            .links
            .iter()
            .map(|l| l.queue.stats.departures)
            .sum::<u64>();
        (times, w.q.events_executed(), sent)
    }

    #[test]
    fn a_busy_link_carries_the_sub_nanosecond_remainder_and_an_idle_one_drops_it() {
        // 8000 bits at 3 Mbit/s: 2,666,666.67 ns. Back to back, the second
        // packet ends at 5,333,333 (not 2 x 2,666,666); after the idle gap
        // the burst at 100 ms starts afresh: 2,666,666 again (with the
        // first burst's remainder carried, 2,666,667).
        let (times, _, _) = bursts(3e6);
        let ms = 1_000_000;
        assert_eq!(
            times,
            [
                ms + 2_666_666,
                ms + 5_333_333,
                101 * ms + 2_666_666,
                101 * ms + 5_333_333
            ]
        );
    }

    #[test]
    fn a_rate_dividing_a_second_serialises_exactly_and_wakes_only_for_a_packet() {
        // 4 Mbit/s: 250 ns a bit, 2 ms a packet.
        let (times, events, sent) = bursts(4e6);
        let ms = 1_000_000;
        assert_eq!(times, [3 * ms, 5 * ms, 103 * ms, 105 * ms]);
        assert_eq!(sent, 4);
        // Each packet: its sending (a start or a timer), its arrival; the
        // second of a burst waits, and the transmitter wakes once for it.
        // The four applications start; a source with its last packet
        // sent sets no timer.
        assert_eq!(events, 4 + 4 + 4 + 2);
    }

    /// Sends one packet to its own node's port `port` at its start.
    struct ToSelf(NodeId, u16);
    impl App for ToSelf {
        fn on_start(&mut self, _now: SimTime, out: &mut Vec<Action>) {
            let mut p = crate::net::packet::test_packet(0, 0, 100);
            (p.dst, p.dst_port) = (Dest::Node(self.0), self.1);
            out.push(Action::Send(p));
        }
    }

    #[test]
    fn a_packet_for_its_own_node_is_delivered_there_without_a_link() {
        let mut w = super::two_node_cbr(1.0, 0.5);
        let b = w.nodes.iter().position(|n| n.name == "b").expect("b") as NodeId;
        let (port, sink) = w.ports.of(b).next().expect("b's sink");
        let got = Arc::new(Mutex::new(Vec::new()));
        w.apps[sink as usize].app = Box::new(Times(got.clone()));
        let src = (w.apps.iter())
            .position(|a| a.node != b)
            .expect("the source");
        // A second application on b sends to the sink beside it.
        w.apps[src] = AppSlot {
            node: b,
            start: SimTime::from_millis(5),
            app: Box::new(ToSelf(b, port)),
        };
        assert!(w.run(&mut |_, _| true));
        assert_eq!(*got.lock().expect("one thread"), [SimTime::from_millis(5)]);
        assert_eq!((w.originated, w.delivered, w.dropped), (1, 1, 0));
        assert!(w.links.iter().all(|l| l.queue.stats.arrivals == 0));
    }
}

/// Whom a multicast drop deprives: a drop on delivery at a member (its
/// receiver's loss, no listener) that member alone; any other drop at a
/// node or on a link every receiver below it.
#[cfg(test)]
mod drop_tests {
    use super::*;
    use crate::sim::RngStreams;

    #[test]
    fn a_multicast_drop_is_charged_to_the_receivers_it_deprives() {
        // s - r1 - r2, both members: r2's copies pass through r1.
        let text = r#"{"duration_s": 1, "nodes": [{"name": "s"}, {"name": "r1"}, {"name": "r2"}],
            "links": [{"a": "s", "b": "r1", "rate_bps": 1e6, "delay_ms": 1},
                      {"a": "r1", "b": "r2", "rate_bps": 1e6, "delay_ms": 1}],
            "groups": [{"name": "g", "members": ["r1", "r2"]}],
            "flows": [{"name": "m", "type": "cbr", "src": "s", "group": "g",
                       "payload_bytes": 100, "interval_ms": 10, "start_s": 0.5}]}"#;
        let s = crate::scenario::parse_and_validate(text).expect("valid");
        let mut w = crate::scenario::build::build(&s, &RngStreams::new(1, 0)).expect("builds");
        let id = |w: &World, name: &str| {
            w.nodes.iter().position(|n| n.name == name).expect("a node") as NodeId
        };
        let (src, r1, r2) = (id(&w, "s"), id(&w, "r1"), id(&w, "r2"));
        let tree = w.tree_of[&(src, 0)];
        let s_to_r1 = w.routes.next_hop(src, r1).expect("a link");
        let dropped = |w: &World| {
            [r1, r2].map(|n| {
                let row = w.rec.fr(0, n).expect("a row per member");
                w.rec.dropped_by_reason(row).iter().sum::<u64>()
            })
        };
        let cases = [
            (DropReason::RECEIVER_LOSS, DropSite::Node(r1), [1, 0]),
            (DropReason::NO_LISTENER, DropSite::Node(r1), [1, 0]),
            (DropReason::NO_ROUTE, DropSite::Node(r1), [1, 1]),
            (DropReason::QUEUE_OVERFLOW, DropSite::Link(s_to_r1), [1, 1]),
        ];
        for (reason, site, want) in cases {
            let before = dropped(&w);
            let mut p = crate::net::packet::test_packet(0, 0, 128);
            (p.src, p.dst) = (src, Dest::Group { group: 0, tree });
            let r = w.packets.insert(p);
            w.drop(r, reason, site, SimTime::ZERO);
            let after = dropped(&w);
            assert_eq!(
                [after[0] - before[0], after[1] - before[1]],
                want,
                "{reason:?} at {site:?}"
            );
        }
        assert_eq!(w.dropped, 4);
    }
}
