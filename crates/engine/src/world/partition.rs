//! A run split into partitions that run side by side, one thread each
//! (`parallel.partitions`, docs/scenario.md "Parallel runs").
//!
//! The world is cut at links whose propagation delay is long: every node
//! belongs to one partition, and each partition is a whole [`World`] built
//! from the same scenario that runs only its own nodes' applications and
//! transmitters. A packet that goes on the wire of a cut link is handed
//! over to the partition at its far end. Since it arrives no sooner than
//! the link's delay after it left, the partitions can run a window of that
//! length (the lookahead, the shortest delay of a cut link) each on its
//! own and exchange what crossed at the window's end: the classic
//! conservative synchronisation of parallel discrete-event simulation
//! (Chandy and Misra; Fujimoto, "Parallel and Distributed Simulation
//! Systems", 2000, ch. 3).
//!
//! Every event runs with the same inputs as in one piece, so the results
//! are the same but for the order of events at one instant: a packet
//! handed over is scheduled at its partition when the window ends, not
//! when it left, and so runs after, not before, another event of that
//! partition at the same nanosecond that was scheduled in between.
//! Packet ids are numbered per partition (ids stay unique). The split is a
//! function of the scenario only, so a split run is as repeatable as any.

use super::{Ev, Hop, World};
use crate::net::disjoint::DisjointSets;
use crate::net::{LinkDirId, NodeId, Packet, PacketRef};
use crate::scenario::check::Checker;
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::Deserialize;

/// The shortest delay of a link the planner cuts: shorter windows would
/// make the exchange cost more than the work it splits.
pub const MIN_LOOKAHEAD: SimTime = SimTime(100_000);

/// Most partitions a run may ask for.
pub const MAX_PARTITIONS: u32 = 16;

/// `parallel`: how many partitions a run is split into, one thread each.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParallelSpec {
    /// Partitions (and threads). 1: the run in one piece. More split it
    /// at its longest fixed links (see [`plan`]); the split, and so the
    /// results, depend on this number, never on the machine.
    #[serde(default = "one")]
    pub partitions: u32,
}

fn one() -> u32 {
    1
}

impl Default for ParallelSpec {
    fn default() -> Self {
        ParallelSpec { partitions: 1 }
    }
}

/// What a split run cannot do yet, found in the document (what only the
/// built world shows, the split itself, is [`plan`]'s): `pcap`, the
/// scenario captures.
pub fn check(spec: &ParallelSpec, pcap: bool, c: &mut Checker) {
    let n = spec.partitions;
    let path = "parallel.partitions";
    if n == 0 || n > MAX_PARTITIONS {
        c.err(path, format!("{n}: must be from 1 to {MAX_PARTITIONS}"));
        return;
    }
    if n == 1 {
        return;
    }
    if pcap {
        c.err(
            path,
            "a split run does not write pcap files (measure.pcap): each link's capture would need one writer (use 1)",
        );
    }
}

/// How a run is split: each node's partition, and the window.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub part_of: Vec<u8>,
    pub parts: u8,
    /// The shortest delay of a link between two partitions.
    pub lookahead: SimTime,
}

/// A packet handed over on a cut link: the link-dir, its arrival time,
/// the packet and where it goes from the far end.
pub type Handover = (LinkDirId, SimTime, Packet, Hop);

/// One partition's share of the world (`World::part`).
pub struct Part {
    pub part_of: Vec<u8>,
    pub me: u8,
    /// Packets handed over since the last exchange, by the partition they
    /// go to.
    pub outbox: Vec<Vec<Handover>>,
    /// Packets handed over to this partition, by the partition they came
    /// from, taken in when its next window starts (`take_in`).
    pub inbox: Vec<Vec<Handover>>,
}

impl Part {
    #[inline]
    pub fn owns(&self, node: NodeId) -> bool {
        self.part_of[node as usize] == self.me
    }
}

/// Splits `w` into `parts` partitions. For each link delay, longest
/// first, the links at least that long (and fixed: a changing link's
/// delay and order can change) are the candidates for a cut; the nodes
/// the other links join stay together, and those groups go to the
/// partitions, largest first to the one with the least work so far, work
/// counted as applications (one per node at least). The longest delay
/// whose split is within 1.25 times an even share wins; failing that, the
/// most even split. Err says why no split exists.
pub fn plan(w: &World, parts: u32) -> Result<Plan, String> {
    let n = w.nodes.len();
    let mut weight = vec![1u64; n];
    for a in &w.apps {
        weight[a.node as usize] += 1;
    }
    let mut delays: Vec<SimTime> = (w.links.iter())
        .filter(|l| !l.dynamic && l.delay >= MIN_LOOKAHEAD)
        .map(|l| l.delay)
        .collect();
    delays.sort_unstable_by(|a, b| b.cmp(a));
    delays.dedup();
    let mut best: Option<(f64, Plan)> = None;
    for &d in &delays {
        let mut sets = DisjointSets::new(n);
        for l in &w.links {
            if l.dynamic || l.delay < d {
                sets.join(l.from, l.to);
            }
        }
        let mut group_weight = vec![0u64; n];
        for v in 0..n as u32 {
            group_weight[sets.find(v) as usize] += weight[v as usize];
        }
        let mut groups: Vec<(u64, u32)> = (0..n as u32)
            .filter(|&v| sets.find(v) == v)
            .map(|v| (group_weight[v as usize], v))
            .collect();
        if groups.len() < parts as usize {
            continue;
        }
        groups.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut load = vec![0u64; parts as usize];
        let mut part_of_group = vec![0u8; n];
        for &(wt, root) in &groups {
            let p = (0..parts as usize)
                .min_by_key(|&p| (load[p], p))
                .unwrap_or(0);
            load[p] += wt;
            part_of_group[root as usize] = p as u8;
        }
        let part_of: Vec<u8> = (0..n as u32)
            .map(|v| part_of_group[sets.find(v) as usize])
            .collect();
        let total: u64 = load.iter().sum();
        let worst = *load.iter().max().unwrap_or(&0) as f64;
        let spread = worst * parts as f64 / total.max(1) as f64;
        let lookahead = (w.links.iter())
            .filter(|l| part_of[l.from as usize] != part_of[l.to as usize])
            .map(|l| l.delay)
            .min()
            .unwrap_or(SimTime::MAX);
        let plan = Plan {
            part_of,
            parts: parts as u8,
            lookahead,
        };
        if spread <= 1.25 {
            return Ok(plan);
        }
        if best.as_ref().is_none_or(|b| spread < b.0) {
            best = Some((spread, plan));
        }
    }
    best.map(|b| b.1).ok_or_else(|| {
        format!(
            "no split into {parts} partitions: cutting every fixed link with a delay of at least {} ms leaves fewer than {parts} groups of nodes",
            MIN_LOOKAHEAD.as_secs_f64() * 1e3
        )
    })
}

impl World {
    /// Makes this world partition `me` of `plan`.
    pub fn become_partition(&mut self, plan: &Plan, me: u8) {
        let part = &plan.part_of;
        for l in &mut self.links {
            l.cut = part[l.from as usize] != part[l.to as usize];
        }
        self.rec.foreign_rows = (self.rec.fr_node.iter())
            .map(|&n| part.get(n as usize).is_some_and(|&p| p != me))
            .collect();
        self.next_packet_id = me as u64;
        self.id_step = plan.parts as u64;
        let boxes = || (0..plan.parts).map(|_| Vec::new()).collect();
        self.part = Some(Box::new(Part {
            part_of: part.clone(),
            me,
            outbox: boxes(),
            inbox: boxes(),
        }));
    }

    /// `r` goes on the wire of cut link `ld`: out of this partition.
    #[cold]
    #[inline(never)]
    pub(super) fn hand_over(&mut self, ld: LinkDirId, at: SimTime, r: PacketRef, hop: Hop) {
        let p = self.packets.take(r);
        let part = self.part.as_mut().expect("a cut link is in a split run");
        let to = part.part_of[self.links[ld as usize].to as usize];
        part.outbox[to as usize].push((ld, at, p, hop));
    }

    /// Takes in the packets other partitions handed over in the last
    /// window, in the order of the partitions they came from and of their
    /// leaving. False (with `broken` set) if one would arrive before now:
    /// a window longer than the lookahead, a bug.
    pub fn take_in(&mut self) -> bool {
        let Some(part) = self.part.as_mut() else {
            return true;
        };
        let mut inbox = std::mem::take(&mut part.inbox);
        for (ld, at, p, hop) in inbox.iter_mut().flat_map(|v| v.drain(..)) {
            let r = self.packets.insert(p);
            let link = &mut self.links[ld as usize];
            if link.in_transit.is_empty() {
                if let Err(e) = self.q.schedule(at, Ev::Arrive(ld)) {
                    let msg = format!("a packet handed over on link \"{}\": {e}", link.name);
                    self.broken = Some((self.q.now(), msg));
                    return false;
                }
            }
            link.in_transit.push_back(at, r, hop);
        }
        if let Some(part) = self.part.as_mut() {
            part.inbox = inbox;
        }
        true
    }

    /// Takes in another partition's results after the run: its nodes'
    /// applications and link directions, its counts and samples. Both
    /// worlds' books must be closed (`output::census`): the link
    /// directions taken over still name packets of `o`'s store.
    fn absorb(&mut self, mut o: World) {
        let Some(part) = o.part.take() else { return };
        let (part_of, me) = (&part.part_of, part.me);
        for (a, b) in self.apps.iter_mut().zip(o.apps.iter_mut()) {
            if part_of[b.node as usize] == me {
                std::mem::swap(a, b);
            }
        }
        for (a, b) in self.links.iter_mut().zip(o.links.iter_mut()) {
            if part_of[b.from as usize] == me {
                std::mem::swap(a, b);
            }
        }
        let theirs: Vec<bool> = (o.rec.fr_node.iter())
            .map(|&n| part_of.get(n as usize) == Some(&me))
            .collect();
        self.rec.absorb(std::mem::take(&mut o.rec), &theirs);
        if let (Some(c), Some(oc)) = (self.capacity.as_mut(), o.capacity.take()) {
            c.absorb(oc);
        }
        self.copies += o.copies;
        self.originated += o.originated;
        self.delivered += o.delivered;
        self.dropped += o.dropped;
        self.events_elsewhere += o.q.events_executed() + o.events_elsewhere;
        self.pcap_truncated |= o.pcap_truncated;
    }
}

/// The partitions' results as one world's, partition 0's world taking in
/// the others'. Each world's books must be closed (`output::census`).
pub fn merge(worlds: Vec<World>) -> World {
    let mut it = worlds.into_iter();
    let mut first = it.next().expect("at least one partition");
    let rest: Vec<World> = it.collect();
    // A cut link's losses are drawn where it arrives; its transmitter's
    // copy, which the merged world keeps, counted none.
    let mut lost = vec![0u64; first.links.len()];
    for w in std::iter::once(&first).chain(&rest) {
        for (ld, l) in w.links.iter().enumerate() {
            if l.cut && w.owns_node(l.to) {
                lost[ld] += l.lost_packets;
            }
        }
    }
    for w in rest {
        first.absorb(w);
    }
    for (l, n) in first.links.iter_mut().zip(lost) {
        l.lost_packets += n;
    }
    first.part = None;
    first
}

/// Moves what crossed between partitions during a window to where it
/// goes: packets handed over on cut links to the inboxes of the
/// partitions they go to (each takes them in itself, `World::take_in`),
/// and losses of rows received elsewhere into those rows' loss runs
/// (which do not depend on the order of losses: `measure::loss_runs`).
pub fn exchange<W: std::ops::DerefMut<Target = World>>(worlds: &mut [W]) {
    let k = worlds.len();
    for src in 0..k {
        for dst in (0..k).filter(|&d| d != src) {
            let Some(mut moved) = worlds[src]
                .part
                .as_mut()
                .map(|p| std::mem::take(&mut p.outbox[dst]))
            else {
                continue;
            };
            if let Some(p) = worlds[dst].part.as_mut() {
                // The inbox, emptied by its last take_in, goes back as the
                // outbox with its allocation.
                std::mem::swap(&mut p.inbox[src], &mut moved);
            }
            if let Some(p) = worlds[src].part.as_mut() {
                p.outbox[dst] = moved;
            }
        }
    }
    let mut losses: Vec<(u32, u64)> = Vec::new();
    for w in worlds.iter_mut() {
        losses.append(&mut w.rec.foreign_losses);
    }
    for (row, seq) in losses {
        let node = worlds[0].rec.fr_node[row as usize];
        let dst = worlds[0]
            .part
            .as_ref()
            .map_or(0, |p| p.part_of[node as usize]);
        worlds[dst as usize].rec.loss_runs[row as usize].add(seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{build::build, parse_and_validate};
    use crate::sim::RngStreams;

    /// A dumbbell: `n` senders on 1 ms links to r1, the bottleneck r1-r2
    /// (20 ms, or changing when `changing`), `n` receivers on 1 ms links.
    fn dumbbell(n: usize, changing: bool) -> World {
        let mut nodes = vec![
            r#"{"name": "r1"}"#.to_string(),
            r#"{"name": "r2"}"#.to_string(),
        ];
        let mut links = Vec::new();
        let mut flows = Vec::new();
        for i in 0..n {
            nodes.push(format!(r#"{{"name": "s{i}"}}"#));
            nodes.push(format!(r#"{{"name": "d{i}"}}"#));
            links.push(format!(
                r#"{{"a": "s{i}", "b": "r1", "rate_bps": 1e8, "delay_ms": 1}}"#
            ));
            links.push(format!(
                r#"{{"a": "r2", "b": "d{i}", "rate_bps": 1e8, "delay_ms": 1}}"#
            ));
            flows.push(format!(
                r#"{{"name": "f{i}", "type": "cbr", "src": "s{i}", "dst": "d{i}", "rate_bps": 1e5, "payload_bytes": 500}}"#
            ));
        }
        let rate = if changing {
            r#""rate_bps": [[0, 1e7], [1, 5e6]]"#
        } else {
            r#""rate_bps": 1e7"#
        };
        links.push(format!(
            r#"{{"name": "bottleneck", "a": "r1", "b": "r2", {rate}, "delay_ms": 20}}"#
        ));
        let text = format!(
            r#"{{"duration_s": 2, "nodes": [{}], "links": [{}], "flows": [{}]}}"#,
            nodes.join(","),
            links.join(","),
            flows.join(",")
        );
        let s = parse_and_validate(&text).expect("a valid dumbbell");
        build(&s, &RngStreams::new(1, 0)).expect("it builds")
    }

    fn names_in(w: &World, plan: &Plan, part: u8) -> Vec<String> {
        (w.nodes.iter().enumerate())
            .filter(|(i, _)| plan.part_of[*i] == part)
            .map(|(_, n)| n.name.clone())
            .collect()
    }

    /// Two partitions of a dumbbell: the senders with r1 and the receivers
    /// with r2, cut at the 20 ms bottleneck, the window its delay.
    #[test]
    fn a_dumbbell_splits_at_its_bottleneck() {
        let w = dumbbell(3, false);
        let plan = plan(&w, 2).expect("a split");
        assert_eq!(plan.lookahead, SimTime::from_millis_f64(20.0));
        let mut a = names_in(&w, &plan, plan.part_of[0]);
        a.sort();
        assert_eq!(a, ["r1", "s0", "s1", "s2"]);
        assert_eq!(
            plan.part_of
                .iter()
                .filter(|&&p| p != plan.part_of[0])
                .count(),
            4
        );
    }

    /// Four partitions need more than the two groups the bottleneck
    /// leaves: the 1 ms access links are cut too, and each partition gets
    /// a share within 1.25 times an even one.
    #[test]
    fn more_partitions_cut_shorter_links() {
        let w = dumbbell(6, false);
        let plan = plan(&w, 4).expect("a split");
        assert_eq!(plan.lookahead, SimTime::from_millis_f64(1.0));
        let mut load = [0u64; 4];
        for (i, &p) in plan.part_of.iter().enumerate() {
            load[p as usize] += 1 + w.apps.iter().filter(|a| a.node as usize == i).count() as u64;
        }
        let total: u64 = load.iter().sum();
        assert!(
            load.iter().all(|&l| l as f64 <= 1.25 * total as f64 / 4.0),
            "{load:?}"
        );
    }

    /// A changing bottleneck is never cut (its delay and order can
    /// change): two partitions then cut the access links.
    #[test]
    fn a_changing_link_is_not_cut() {
        let w = dumbbell(4, true);
        let plan = plan(&w, 2).expect("a split");
        let (r1, r2) = (plan.part_of[0], plan.part_of[1]);
        assert_eq!(r1, r2, "r1 and r2 stay together");
        assert_eq!(plan.lookahead, SimTime::from_millis_f64(1.0));
    }

    /// No fixed link of at least 0.1 ms: no split, and the error says so.
    #[test]
    fn no_long_link_no_split() {
        let mut w = dumbbell(2, false);
        for l in &mut w.links {
            l.delay = SimTime(50_000);
        }
        let e = plan(&w, 2).expect_err("nothing to cut");
        assert!(e.contains("no split into 2 partitions"), "{e}");
    }

    /// Partitions number their packets from their own index, so ids stay
    /// unique; links to another partition are cut, on both sides.
    #[test]
    fn a_partition_knows_its_cut_and_numbers_its_packets() {
        let mut w = dumbbell(2, false);
        let plan = plan(&w, 2).expect("a split");
        w.become_partition(&plan, 1);
        assert_eq!((w.next_packet_id, w.id_step), (1, 2));
        let cut: Vec<&str> = (w.links.iter())
            .filter(|l| l.cut)
            .map(|l| l.name.as_str())
            .collect();
        assert_eq!(cut, ["bottleneck:r1->r2", "bottleneck:r2->r1"]);
        let foreign = w.rec.foreign_rows.iter().filter(|&&f| f).count();
        let owned_receivers = (w.rec.fr_node.iter())
            .filter(|&&n| plan.part_of[n as usize] == 1)
            .count();
        assert_eq!(foreign + owned_receivers, w.rec.num_fr());
    }

    fn errors(partitions: u32, pcap: bool) -> Vec<String> {
        let mut c = Checker::default();
        check(&ParallelSpec { partitions }, pcap, &mut c);
        c.errs.iter().map(|e| e.to_string()).collect()
    }

    /// One to sixteen partitions, one by default; a split run writes no
    /// pcap files, a run in one piece may.
    #[test]
    fn the_partition_count_is_checked() {
        for n in [0, 17] {
            let e = errors(n, false);
            assert!(
                e.len() == 1 && e[0].contains(&format!("{n}: must be from 1 to 16")),
                "{e:?}"
            );
        }
        for n in [1, 2, 16] {
            assert_eq!(errors(n, false), Vec::<String>::new(), "{n}");
        }
        assert_eq!(errors(1, true), Vec::<String>::new());
        let e = errors(2, true);
        assert!(e.len() == 1 && e[0].contains("pcap"), "{e:?}");
        let spec: ParallelSpec = serde_json::from_str("{}").expect("empty is fine");
        assert_eq!(
            (spec.partitions, ParallelSpec::default().partitions),
            (1, 1)
        );
    }

    /// A chain of the nodes `nodes`, the link between the i-th and the
    /// next `delays_ms[i]` long, no applications: every node weighs one.
    fn chain(nodes: &[&str], delays_ms: &[f64]) -> World {
        let names: Vec<String> = (nodes.iter())
            .map(|n| format!(r#"{{"name": "{n}"}}"#))
            .collect();
        let links: Vec<String> = (nodes.windows(2).zip(delays_ms))
            .map(|(ab, d)| {
                let (a, b) = (ab[0], ab[1]);
                format!(r#"{{"a": "{a}", "b": "{b}", "rate_bps": 1e7, "delay_ms": {d}}}"#)
            })
            .collect();
        let text = format!(
            r#"{{"duration_s": 1, "nodes": [{}], "links": [{}]}}"#,
            names.join(","),
            links.join(",")
        );
        let s = parse_and_validate(&text).expect("a valid chain");
        build(&s, &RngStreams::new(1, 0)).expect("it builds")
    }

    /// x0 -50ms- x1 - x2 -10ms- x3 - x4 - x5 (the rest 0.05 ms, never
    /// cut): cut at 50 ms alone, five nodes against one (5 x 2 / 6, over
    /// 1.25 times an even share); cut at 10 ms too, {x0, x1, x2} against
    /// {x3, x4, x5}, even, so that split wins, its window 10 ms (x0-x1 is
    /// no longer between partitions).
    #[test]
    fn the_longest_delay_with_an_even_split_wins() {
        let nodes = ["x0", "x1", "x2", "x3", "x4", "x5"];
        let w = chain(&nodes, &[50.0, 0.05, 10.0, 0.05, 0.05]);
        let plan = plan(&w, 2).expect("a split");
        assert_eq!(plan.part_of, [1, 1, 1, 0, 0, 0]);
        assert_eq!(plan.lookahead, SimTime::from_millis(10));
    }

    /// a -50ms- b..g (six) -20ms- h - i: no split is within 1.25 times an
    /// even share (8 against 1 at 50 ms: 1.78; 6 against 3 at 20 ms: 1.33),
    /// so the most even wins, cut at 20 ms with a on h's side.
    #[test]
    fn failing_an_even_split_the_most_even_wins() {
        let nodes = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        let w = chain(&nodes, &[50.0, 0.05, 0.05, 0.05, 0.05, 0.05, 20.0, 0.05]);
        let plan = plan(&w, 2).expect("a split");
        assert_eq!(plan.part_of, [1, 0, 0, 0, 0, 0, 0, 1, 1]);
        assert_eq!(plan.lookahead, SimTime::from_millis(20));
    }

    /// n0 - n1 - n2 -20ms- n3 -10ms- n4 - n5 - n6 - n7: at 20 ms, five
    /// nodes against three, 5 x 2 / 8 = 1.25 times an even share, just
    /// within the bound, so the longer cut is taken though 10 ms would give
    /// four and four.
    #[test]
    fn a_split_at_exactly_the_bound_is_taken() {
        let nodes = ["n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"];
        let w = chain(&nodes, &[0.05, 0.05, 20.0, 10.0, 0.05, 0.05, 0.05]);
        let plan = plan(&w, 2).expect("a split");
        assert_eq!(plan.part_of, [1, 1, 1, 0, 0, 0, 0, 0]);
        assert_eq!(plan.lookahead, SimTime::from_millis(20));
    }

    /// a -50ms- b -20ms- c: both cuts give two nodes against one (1.33
    /// times an even share); of equally even splits the longer delay's
    /// wins, its window 50 ms.
    #[test]
    fn of_equally_even_splits_the_longer_window_wins() {
        let w = chain(&["a", "b", "c"], &[50.0, 20.0]);
        let plan = plan(&w, 2).expect("a split");
        assert_eq!(plan.part_of, [1, 0, 0]);
        assert_eq!(plan.lookahead, SimTime::from_millis(50));
    }

    /// Applications weigh: a -20ms- b - c -10ms- d with two CBR flows from
    /// a to d. Node by node, 20 ms gives a against three (1.5 times even)
    /// and 10 ms two and two; with a's two sources and d's two sinks the
    /// 20 ms cut is 3 against 5 (1.25), taken.
    #[test]
    fn applications_weigh_in_the_split() {
        let w = chain(&["a", "b", "c", "d"], &[20.0, 0.05, 10.0]);
        assert_eq!(
            plan(&w, 2).expect("a split").lookahead,
            SimTime::from_millis(10)
        );
        let flows = r#"{"name": "fX", "type": "cbr", "src": "a", "dst": "d", "rate_bps": 1e5, "payload_bytes": 500}"#;
        let text = format!(
            r#"{{"duration_s": 1, "nodes": [{{"name": "a"}}, {{"name": "b"}}, {{"name": "c"}}, {{"name": "d"}}],
                "links": [{{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 20}},
                          {{"a": "b", "b": "c", "rate_bps": 1e7, "delay_ms": 0.05}},
                          {{"a": "c", "b": "d", "rate_bps": 1e7, "delay_ms": 10}}],
                "flows": [{}, {}]}}"#,
            flows.replace("fX", "f1"),
            flows.replace("fX", "f2")
        );
        let s = parse_and_validate(&text).expect("valid");
        let w = build(&s, &RngStreams::new(1, 0)).expect("it builds");
        let plan = plan(&w, 2).expect("a split");
        assert_eq!(plan.part_of, [1, 0, 0, 0]);
        assert_eq!(plan.lookahead, SimTime::from_millis(20));
    }

    /// A partition owns exactly the nodes the plan gives it.
    #[test]
    fn a_partition_owns_its_nodes_only() {
        let mut w = dumbbell(2, false);
        let plan = plan(&w, 2).expect("a split");
        w.become_partition(&plan, 0);
        for (v, &p) in plan.part_of.iter().enumerate() {
            assert_eq!(w.owns_node(v as NodeId), p == 0, "node {v}");
        }
    }

    /// A packet handed over on the cut goes on the far end's wire at its
    /// arrival time, with an event then; one that would arrive before the
    /// partition's now (a window longer than the lookahead, a bug) breaks
    /// the run, naming the link.
    #[test]
    fn a_handed_over_packet_arrives_at_its_time_and_never_in_the_past() {
        use crate::app::PacketTemplate;
        use crate::net::Dest;
        let handed = |now_ms: u64| {
            let mut w = dumbbell(1, false);
            let plan = plan(&w, 2).expect("a split");
            let r2 = (w.nodes.iter()).position(|n| n.name == "r2").unwrap();
            let me = plan.part_of[r2];
            w.become_partition(&plan, me);
            let ld = (w.links.iter()).position(|l| l.name == "bottleneck:r1->r2");
            let ld = ld.expect("the bottleneck") as LinkDirId;
            let p = PacketTemplate::session_udp(0, Dest::Node(r2 as NodeId), 5004, 100).make(0);
            let from = 1 - me as usize;
            let part = w.part.as_mut().unwrap();
            part.inbox[from].push((ld, SimTime::from_millis(25), p, super::super::HOP_LOOKUP));
            w.q.advance_to(SimTime::from_millis(now_ms));
            let ok = w.take_in();
            (w, ld, ok)
        };
        let (mut w, ld, ok) = handed(20);
        assert!(ok);
        let link = &w.links[ld as usize];
        assert_eq!(
            link.in_transit.front().map(|f| f.0),
            Some(SimTime::from_millis(25))
        );
        assert_eq!(w.q.peek_time(), Some(SimTime::from_millis(25)));
        assert!(w.part.as_ref().unwrap().inbox.iter().all(|v| v.is_empty()));
        let (w, _, ok) = handed(30);
        assert!(!ok);
        let (at, what) = w.broken.clone().expect("broken");
        assert_eq!(at, SimTime::from_millis(30));
        assert!(what.contains("bottleneck"), "{what}");
    }
}
