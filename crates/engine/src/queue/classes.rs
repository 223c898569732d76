//! Class-based queues for DiffServ cores: packets are classified by DSCP
//! into classes, each with its own queue discipline (any, including RED,
//! WRED or another scheduler), and a scheduler picks the class that sends
//! next:
//!
//! - `drr`: deficit round robin with byte deficits (Shreedhar and
//!   Varghese, SIGCOMM 1995). Each class's quantum is proportional to its
//!   `weight` (or its reserved `rate_bps`), the smallest being
//!   `quantum_bytes`; a class sends while its deficit covers its head
//!   packet, and an emptied class loses its deficit. Under saturation each
//!   class gets its weight's share of the bytes.
//! - `priority`: strict priority in list order (the first class first); a
//!   lower class sends only when every class above is empty.
//!
//! A packet whose DSCP no class lists goes to the class without a `dscp`
//! list (the default), or else to the last class. The scheduler holds each
//! class's head packet once it has asked for it (so that a discipline that
//! drops at dequeue, such as CoDel, decides when the packet reaches the
//! head). Per-class figures go to the `queue_classes` table.

use super::spec::{QueueModel, QueueSite, QueueSpec};
use super::{ClassStats, QueueCtx, QueueDiscipline};
use crate::net::PacketRef;
use crate::scenario::check::Checker;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::VecDeque;

/// One class: the DSCPs it takes, its share, and its queue.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    pub name: String,
    /// DSCPs of the class (none: the default class).
    #[serde(default)]
    #[schemars(inner(range(max = 63)))]
    pub dscp: Vec<u8>,
    /// drr: relative share (give weights or rate_bps for every class, or
    /// neither for equal shares).
    #[serde(default)]
    pub weight: Option<f64>,
    /// drr: reserved rate; the reservations may not exceed the link rate.
    #[serde(default)]
    pub rate_bps: Option<f64>,
    /// The class's own queue discipline.
    pub queue: Box<QueueSpec>,
}

fn default_quantum() -> u32 {
    1500
}

/// Deficit round robin between classes.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrrSpec {
    pub classes: Vec<ClassSpec>,
    /// Quantum of the class with the smallest share, in bytes (at least
    /// the largest packet keeps DRR O(1); default 1500).
    #[serde(default = "default_quantum")]
    pub quantum_bytes: u32,
}

/// Strict priority between classes, the first listed first.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrioritySpec {
    pub classes: Vec<ClassSpec>,
}

/// Checks every scheduler shares: names, DSCPs, the default, each class's
/// queue.
fn check_classes(path: &str, classes: &[ClassSpec], rate_bps: f64, c: &mut Checker) {
    if classes.is_empty() {
        c.err(format!("{path}.classes"), "give at least one class");
    }
    let (mut names, mut dscps) = (
        std::collections::HashSet::new(),
        std::collections::HashSet::new(),
    );
    for (i, cl) in classes.iter().enumerate() {
        let p = format!("{path}.classes[{i}]");
        if cl.name.is_empty() || !names.insert(cl.name.as_str()) {
            c.err(
                format!("{p}.name"),
                format!(
                    "class names must be unique and non-empty (got \"{}\")",
                    cl.name
                ),
            );
        }
        for &d in &cl.dscp {
            if d > 63 {
                c.err(format!("{p}.dscp"), format!("must be 0..=63 (got {d})"));
            } else if !dscps.insert(d) {
                c.err(format!("{p}.dscp"), format!("DSCP {d} is in two classes"));
            }
        }
        cl.queue
            .model()
            .validate(&format!("{p}.queue"), rate_bps, c);
    }
    if classes.iter().filter(|cl| cl.dscp.is_empty()).count() > 1 {
        c.err(
            format!("{path}.classes"),
            "at most one class without dscp (the default)",
        );
    }
}

impl super::spec::Drops for DrrSpec {}

impl QueueModel for DrrSpec {
    fn validate(&self, path: &str, rate_bps: f64, c: &mut Checker) {
        check_classes(path, &self.classes, rate_bps, c);
        if self.quantum_bytes == 0 {
            c.err(format!("{path}.quantum_bytes"), "must be at least 1");
        }
        let (w, r) = (
            self.classes.iter().filter(|cl| cl.weight.is_some()).count(),
            self.classes
                .iter()
                .filter(|cl| cl.rate_bps.is_some())
                .count(),
        );
        let n = self.classes.len();
        if !(w == 0 || w == n) || !(r == 0 || r == n) || (w > 0 && r > 0) {
            c.err(
                format!("{path}.classes"),
                "give every class a weight, or every class a rate_bps, or none (equal shares)",
            );
        }
        for (i, cl) in self.classes.iter().enumerate() {
            if let Some(x) = cl.weight {
                c.positive(format_args!("{path}.classes[{i}].weight"), x);
            }
            if let Some(x) = cl.rate_bps {
                c.positive(format_args!("{path}.classes[{i}].rate_bps"), x);
            }
        }
        let reserved: f64 = self.classes.iter().filter_map(|cl| cl.rate_bps).sum();
        if reserved > rate_bps {
            let msg =
                format!("the classes reserve {reserved} bit/s, more than the link's {rate_bps}");
            c.err(format!("{path}.classes"), msg);
        }
    }
    fn build(&self, site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        Box::new(Classes::new(
            &self.classes,
            site,
            Scheduler::drr(self.quanta()),
        ))
    }
}

impl DrrSpec {
    /// Each class's quantum in bytes: `quantum_bytes` for the smallest
    /// share, the others in proportion to their weight or rate.
    fn quanta(&self) -> Vec<u64> {
        let shares: Vec<f64> = (self.classes.iter())
            .map(|cl| cl.weight.or(cl.rate_bps).unwrap_or(1.0))
            .collect();
        let least = shares.iter().copied().fold(f64::INFINITY, f64::min);
        (shares.iter())
            .map(|s| (s / least * self.quantum_bytes as f64).round() as u64)
            .collect()
    }
}

impl super::spec::Drops for PrioritySpec {}

impl QueueModel for PrioritySpec {
    fn validate(&self, path: &str, rate_bps: f64, c: &mut Checker) {
        check_classes(path, &self.classes, rate_bps, c);
        for (i, cl) in self.classes.iter().enumerate() {
            for (field, given) in [
                ("weight", cl.weight.is_some()),
                ("rate_bps", cl.rate_bps.is_some()),
            ] {
                if given {
                    let msg = "not used by priority (the list order is the priority)";
                    c.err(format!("{path}.classes[{i}].{field}"), msg);
                }
            }
        }
    }
    fn build(&self, site: &QueueSite<'_>) -> Box<dyn QueueDiscipline> {
        Box::new(Classes::new(&self.classes, site, Scheduler::Priority))
    }
}

/// Which class sends next.
enum Scheduler {
    Drr {
        quanta: Vec<u64>,
        deficits: Vec<u64>,
        /// Classes with packets, in round-robin order.
        active: VecDeque<usize>,
        /// The front class has had this round's quantum.
        credited: bool,
    },
    Priority,
}

impl Scheduler {
    fn drr(quanta: Vec<u64>) -> Self {
        Scheduler::Drr {
            deficits: vec![0; quanta.len()],
            quanta,
            active: VecDeque::new(),
            credited: false,
        }
    }
}

struct Class {
    name: String,
    disc: Box<dyn QueueDiscipline>,
    /// The packet its discipline gave up next, with its size (bytes).
    head: Option<(PacketRef, u32)>,
    stats: ClassStats,
}

impl Class {
    fn is_empty(&self) -> bool {
        self.head.is_none() && self.disc.len_packets() == 0
    }
    /// Fills the head slot from the class's queue; whether it holds one.
    fn fill_head(&mut self, ctx: &mut QueueCtx<'_>) -> bool {
        if self.head.is_none() {
            let before = ctx.dropped.len();
            self.head = (self.disc.dequeue(ctx)).map(|p| (p, ctx.packets[p].size_bytes));
            self.stats.drops += (ctx.dropped.len() - before) as u64;
        }
        self.head.is_some()
    }
    fn take_head(&mut self) -> PacketRef {
        let (p, size) = self.head.take().expect("filled");
        self.stats.departures += 1;
        self.stats.departure_bytes += size as u64;
        p
    }
}

pub struct Classes {
    classes: Vec<Class>,
    by_dscp: [usize; 64],
    sched: Scheduler,
}

impl Classes {
    fn new(specs: &[ClassSpec], site: &QueueSite<'_>, sched: Scheduler) -> Self {
        let default = (specs.iter())
            .position(|cl| cl.dscp.is_empty())
            .unwrap_or(specs.len().saturating_sub(1));
        let mut by_dscp = [default; 64];
        for (i, cl) in specs.iter().enumerate() {
            for &d in &cl.dscp {
                by_dscp[(d & 63) as usize] = i;
            }
        }
        let classes = (specs.iter())
            .map(|cl| {
                let name = format!("{}/{}", site.name, cl.name);
                let sub = QueueSite {
                    rng: site.rng,
                    name: &name,
                    rate_bps: site.rate_bps,
                };
                Class {
                    name: cl.name.clone(),
                    disc: cl.queue.model().build(&sub),
                    head: None,
                    stats: ClassStats::default(),
                }
            })
            .collect();
        Classes {
            classes,
            by_dscp,
            sched,
        }
    }

    fn dequeue_priority(&mut self, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
        let c = (self.classes.iter_mut()).find_map(|c| c.fill_head(ctx).then_some(c))?;
        Some(c.take_head())
    }

    fn dequeue_drr(&mut self, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
        let Scheduler::Drr {
            quanta,
            deficits,
            active,
            credited,
        } = &mut self.sched
        else {
            unreachable!("drr")
        };
        while let Some(&i) = active.front() {
            let class = &mut self.classes[i];
            if !class.fill_head(ctx) {
                // Emptied by its own discipline's drops.
                (deficits[i], *credited) = (0, false);
                active.pop_front();
                continue;
            }
            if !*credited {
                deficits[i] += quanta[i];
                *credited = true;
            }
            let size = class.head.map_or(0, |(_, size)| size as u64);
            if size <= deficits[i] {
                deficits[i] -= size;
                let p = class.take_head();
                if class.is_empty() {
                    (deficits[i], *credited) = (0, false);
                    active.pop_front();
                }
                return Some(p);
            }
            // Not enough deficit: the class waits for its next round.
            active.rotate_left(1);
            *credited = false;
        }
        None
    }
}

impl QueueDiscipline for Classes {
    fn enqueue(&mut self, pkt: PacketRef, ctx: &mut QueueCtx<'_>) {
        let i = self.by_dscp[(ctx.packets[pkt].dscp & 63) as usize];
        let class = &mut self.classes[i];
        let was_empty = class.is_empty();
        class.stats.arrivals += 1;
        let before = ctx.dropped.len();
        class.disc.enqueue(pkt, ctx);
        class.stats.drops += (ctx.dropped.len() - before) as u64;
        if let Scheduler::Drr { active, .. } = &mut self.sched {
            if was_empty && !class.is_empty() {
                active.push_back(i);
            }
        }
    }
    fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<PacketRef> {
        match self.sched {
            Scheduler::Priority => self.dequeue_priority(ctx),
            Scheduler::Drr { .. } => self.dequeue_drr(ctx),
        }
    }
    fn len_packets(&self) -> usize {
        (self.classes.iter())
            .map(|c| c.disc.len_packets() + c.head.is_some() as usize)
            .sum()
    }
    fn len_bytes(&self) -> u64 {
        (self.classes.iter())
            .map(|c| c.disc.len_bytes() + c.head.map_or(0, |(_, size)| size as u64))
            .sum()
    }
    fn held(&self) -> Vec<PacketRef> {
        (self.classes.iter())
            .flat_map(|c| c.head.map(|(p, _)| p).into_iter().chain(c.disc.held()))
            .collect()
    }
    fn kind(&self) -> &'static str {
        match self.sched {
            Scheduler::Priority => "priority",
            Scheduler::Drr { .. } => "drr",
        }
    }
    fn classes(&self) -> Vec<(String, ClassStats)> {
        (self.classes.iter())
            .map(|c| {
                let mut st = c.stats.clone();
                st.extra = c.disc.stats();
                (c.name.clone(), st)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::pkt;
    use crate::queue::tests::{discipline, TestQueue};
    use crate::sim::{uniform, RngStreams, SimTime};

    fn class(name: &str, dscp: &[u8], weight: Option<f64>, limit: u64) -> ClassSpec {
        let queue = serde_json::json!({"type": "droptail", "limit_packets": limit});
        ClassSpec {
            name: name.into(),
            dscp: dscp.to_vec(),
            weight,
            rate_bps: None,
            queue: Box::new(serde_json::from_value(queue).expect("valid queue")),
        }
    }

    fn build(m: &dyn QueueModel) -> TestQueue {
        TestQueue::new(discipline(m, "l:a->b", 10_000_000))
    }

    /// Three always-backlogged classes with weights 1, 2, 3 and different
    /// packet sizes (1500 B; 500 B; random 40-1500 B): each gets its
    /// weight's share of the bytes sent, within 2%.
    #[test]
    fn drr_gives_each_saturated_class_its_weights_share_of_bytes() {
        let spec = DrrSpec {
            classes: vec![
                class("a", &[0], Some(1.0), 1_000_000),
                class("b", &[10], Some(2.0), 1_000_000),
                class("c", &[18], Some(3.0), 1_000_000),
            ],
            quantum_bytes: 1500,
        };
        let mut q = build(&spec);
        let mut rng = RngStreams::new(3, 0).stream("sizes");
        let mut d = Vec::new();
        let mut seq = 0;
        let mut bytes = [0u64; 3];
        for _ in 0..100_000 {
            // Keep every class backlogged.
            let backlog: Vec<u64> = (q.classes().iter())
                .map(|(_, c)| c.arrivals - c.departures - c.drops)
                .collect();
            for (i, (dscp, size)) in [(0u8, 1500), (10, 500), (18, 0)].into_iter().enumerate() {
                for _ in 0..if backlog[i] < 50 { 100 } else { 0 } {
                    let s = if size == 0 {
                        40 + (uniform(&mut rng) * 1460.0) as u32
                    } else {
                        size
                    };
                    let mut p = pkt(seq, s);
                    p.dscp = dscp;
                    seq += 1;
                    q.enqueue(p, SimTime(0), &mut d);
                }
            }
            let p = q.dequeue(SimTime(0), &mut d).expect("backlogged");
            bytes[[0u8, 10, 18].iter().position(|&x| x == p.dscp).unwrap()] += p.size_bytes as u64;
        }
        let total: u64 = bytes.iter().sum();
        for (i, w) in [1.0, 2.0, 3.0].iter().enumerate() {
            let share = bytes[i] as f64 / total as f64;
            assert!(
                (share - w / 6.0).abs() < 0.02 * w / 6.0,
                "class {i}: {share}"
            );
        }
        let cls = q.classes();
        assert_eq!(
            cls.iter().map(|c| c.1.departure_bytes).collect::<Vec<_>>(),
            bytes.to_vec()
        );
        assert!(d.is_empty() && q.balanced());
    }

    #[test]
    fn priority_serves_a_lower_class_only_when_the_higher_are_empty() {
        let spec = PrioritySpec {
            classes: vec![class("ef", &[46], None, 100), class("be", &[], None, 100)],
        };
        let mut q = build(&spec);
        let mut d = Vec::new();
        for s in 0..10 {
            let mut p = pkt(s, 100);
            p.dscp = if s % 2 == 0 { 46 } else { 0 };
            q.enqueue(p, SimTime(0), &mut d);
        }
        let order: Vec<u64> =
            std::iter::from_fn(|| q.dequeue(SimTime(0), &mut d).map(|p| p.seq)).collect();
        assert_eq!(order, vec![0, 2, 4, 6, 8, 1, 3, 5, 7, 9]);
        assert_eq!(q.kind(), "priority");
        // Unlisted DSCPs go to the default class (be).
        let mut p = pkt(20, 100);
        p.dscp = 12;
        q.enqueue(p, SimTime(0), &mut d);
        assert_eq!(q.classes()[1].1.arrivals, 6);
    }

    #[test]
    fn class_drops_and_held_packets_are_counted() {
        let spec = DrrSpec {
            classes: vec![class("a", &[0], None, 2), class("b", &[10], None, 2)],
            quantum_bytes: 1500,
        };
        let mut q = build(&spec);
        let mut d = Vec::new();
        for s in 0..5 {
            q.enqueue(pkt(s, 100), SimTime(0), &mut d);
        }
        assert_eq!(d.len(), 3, "class a holds 2");
        assert_eq!(q.classes()[0].1.drops, 3);
        assert!(q.dequeue(SimTime(0), &mut d).is_some());
        assert_eq!(q.held().len(), 1);
        assert_eq!((q.len_packets(), q.len_bytes()), (1, 100));
        assert!(q.balanced());
    }

    #[test]
    fn impossible_class_set_ups_are_named() {
        let mut drr = DrrSpec {
            classes: vec![
                class("a", &[0, 10], Some(1.0), 5),
                class("a", &[10], None, 5),
            ],
            quantum_bytes: 0,
        };
        drr.classes[1].rate_bps = Some(2e6);
        let mut c = Checker::default();
        drr.validate("q", 1e6, &mut c);
        let msgs: Vec<String> = c.errs.iter().map(|e| e.to_string()).collect();
        for want in [
            "q.classes[1].name: class names must be unique",
            "q.classes[1].dscp: DSCP 10 is in two classes",
            "q.quantum_bytes: must be at least 1",
            "q.classes: give every class a weight",
            "q.classes: the classes reserve 2000000 bit/s, more than the link's 1000000",
        ] {
            assert!(
                msgs.iter().any(|m| m.starts_with(want)),
                "{want} not in {msgs:?}"
            );
        }
        let prio = PrioritySpec {
            classes: vec![class("x", &[], Some(2.0), 5), class("y", &[], None, 5)],
        };
        let mut c = Checker::default();
        prio.validate("q", 1e6, &mut c);
        let msgs: Vec<String> = c.errs.iter().map(|e| e.to_string()).collect();
        assert!(msgs
            .iter()
            .any(|m| m.starts_with("q.classes[0].weight: not used by priority")));
        assert!(msgs
            .iter()
            .any(|m| m.starts_with("q.classes: at most one class without dscp")));
        let mut c = Checker::default();
        PrioritySpec { classes: vec![] }.validate("q", 1e6, &mut c);
        assert!(c.errs.iter().any(|e| e.path == "q.classes"));
    }

    /// DRR's shares: no class with a weight or a rate (equal shares), every
    /// class a weight, or every class a rate; any mix is refused. At the
    /// bounds, DSCP 63, one default class and reservations of the whole
    /// link are valid; the quantum is 1500 bytes unless given.
    #[test]
    fn drr_takes_weights_or_rates_for_every_class_or_none() {
        let errors = |shares: &[(Option<f64>, Option<f64>)]| -> Vec<String> {
            let classes = (shares.iter().enumerate())
                .map(|(i, &(weight, rate_bps))| {
                    // The first class the default, the second DSCP 63.
                    let dscp: &[u8] = if i == 0 { &[] } else { &[63] };
                    ClassSpec {
                        rate_bps,
                        ..class(&format!("c{i}"), dscp, weight, 5)
                    }
                })
                .collect();
            let mut c = Checker::default();
            DrrSpec {
                classes,
                quantum_bytes: 1500,
            }
            .validate("q", 1e7, &mut c);
            c.errs.iter().map(|e| e.to_string()).collect()
        };
        // Two classes of 5 Mbit/s reserve the whole 10 Mbit/s link: valid.
        let (w, r) = (Some(1.0), Some(5e6));
        let mixed = ["q.classes: give every class a weight, or every class a rate_bps, or none (equal shares)"];
        for ok in [[(None, None); 2], [(w, None); 2], [(None, r); 2]] {
            assert_eq!(errors(&ok), Vec::<String>::new(), "{ok:?}");
        }
        for bad in [
            [(w, None), (None, None)],
            [(None, None), (w, None)],
            [(None, r), (None, None)],
            [(None, None), (None, r)],
            [(w, None), (None, r)],
            [(w, r), (w, r)],
        ] {
            assert_eq!(errors(&bad), mixed, "{bad:?}");
        }
        let spec: DrrSpec = serde_json::from_value(serde_json::json!({"classes": []})).unwrap();
        assert_eq!(spec.quantum_bytes, 1500);
    }

    /// The smallest share gets the quantum, the others theirs in
    /// proportion (rounded to whole bytes); no share given, all equal.
    #[test]
    fn drr_quanta_scale_with_the_shares() {
        let drr = |shares: &[(Option<f64>, Option<f64>)], quantum_bytes: u32| DrrSpec {
            classes: (shares.iter())
                .map(|&(weight, rate_bps)| ClassSpec {
                    rate_bps,
                    ..class("c", &[], weight, 5)
                })
                .collect(),
            quantum_bytes,
        };
        let w = |x: f64| (Some(x), None);
        let r = |x: f64| (None, Some(x));
        assert_eq!(
            drr(&[w(4.0), w(2.0), w(6.0)], 1500).quanta(),
            [3000, 1500, 4500]
        );
        assert_eq!(drr(&[r(2e6), r(5e6)], 1000).quanta(), [1000, 2500]);
        assert_eq!(drr(&[w(3.0), w(1.0)], 1001).quanta(), [3003, 1001]);
        assert_eq!(
            drr(&[w(1.5), w(1.0)], 999).quanta(),
            [1499, 999],
            "1498.5 rounds up"
        );
        assert_eq!(drr(&[(None, None); 3], 700).quanta(), [700; 3]);
    }

    /// A class's own discipline may drop when asked for a packet (CoDel
    /// here): those drops are the class's too, as are its overflows.
    #[test]
    fn drops_at_a_class_dequeue_are_the_classes() {
        let codel = serde_json::json!({"type": "codel", "target_ms": 5, "interval_ms": 100});
        let spec = PrioritySpec {
            classes: vec![
                ClassSpec {
                    queue: Box::new(serde_json::from_value(codel).expect("valid queue")),
                    ..class("a", &[], None, 5)
                },
                class("b", &[10], None, 5),
            ],
        };
        let mut q = discipline(&spec, "l:a->b", 10_000_000);
        // The drops stay in the context's list from call to call, as
        // earlier drops of the same event do in the engine.
        let mut tc = crate::queue::tests::TestCtx::default();
        for s in 0..1000 {
            let p = tc.packets.insert(pkt(s, 100));
            q.enqueue(p, &mut tc.at(SimTime(0)));
        }
        // Served one a millisecond from 1 s on: every sojourn is over the
        // target, and CoDel drops at its dequeues from the interval on.
        let mut sent = 0;
        for k in 0..1000 {
            sent += q
                .dequeue(&mut tc.at(SimTime::from_millis(1000 + k)))
                .is_some() as u64;
        }
        let (dropped, stats) = (tc.dropped.len() as u64, q.classes()[0].1.clone());
        assert!(dropped > 1 && dropped + sent == 1000, "{dropped} dropped");
        assert_eq!((stats.drops, stats.departures), (dropped, sent));
        // Overflows at enqueue, with those drops still in the list: class
        // b holds 5 of 8.
        for s in 0..8 {
            let mut p = pkt(2000 + s, 100);
            p.dscp = 10;
            let p = tc.packets.insert(p);
            q.enqueue(p, &mut tc.at(SimTime::from_secs(3)));
        }
        assert_eq!(q.classes()[1].1.drops, 3);
        assert_eq!(tc.dropped.len() as u64, dropped + 3);
    }
}
