//! A split run (`parallel.partitions` > 1): its partitions built, run
//! window by window on their own threads, and merged into one world's
//! results (`world::partition` has the method).

use crate::output::{self, Ledger};
use crate::scenario::{self, FieldError, Scenario};
use crate::sim::{RngStreams, SimTime};
use crate::world::partition::{self, Plan};
use crate::world::{Progress, World, PROGRESS_EVERY};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Why a split run failed (the entry point makes these its errors).
#[derive(Debug)]
pub enum Failure {
    /// The scenario cannot be built or split.
    Scenario(Vec<FieldError>),
    /// Simulated time stopped advancing in a partition.
    Stalled(SimTime, String),
    /// A check of the engine's own bookkeeping failed.
    Invariant(SimTime, String),
    /// `progress` asked to stop.
    Interrupted(SimTime),
}

/// A split run's partitions, ready to run.
pub struct Split {
    pub worlds: Vec<World>,
    pub plan: Plan,
    /// `progress` is called once this many more events have run
    /// ([`PROGRESS_EVERY`]).
    pub report_every: u64,
}

/// Builds one world per partition and splits them (`s` validated).
pub fn build(s: &Scenario, rng: &RngStreams) -> Result<Split, Failure> {
    let parts = s.parallel.partitions;
    let first = scenario::build::build(s, rng).map_err(Failure::Scenario)?;
    let plan = partition::plan(&first, parts)
        .map_err(|msg| Failure::Scenario(vec![FieldError::new("parallel.partitions", msg)]))?;
    let mut worlds = vec![first];
    for _ in 1..parts {
        worlds.push(scenario::build::build(s, rng).map_err(Failure::Scenario)?);
    }
    for (i, w) in worlds.iter_mut().enumerate() {
        w.become_partition(&plan, i as u8);
    }
    Ok(Split {
        worlds,
        plan,
        report_every: PROGRESS_EVERY,
    })
}

/// A split run's end: the merged world, its books, and whether it
/// stopped early (its event budget reached, or `progress` said stop).
pub struct Ended {
    pub world: World,
    pub ledger: Ledger,
    pub in_flight: Vec<u64>,
    pub hit_max_events: bool,
}

/// Runs the partitions to the horizon, one thread each, in windows of the
/// lookahead. Between windows the events so far are checked against
/// `max_events`, and `progress` is called every `report_every` or so
/// (false: stop there, cleanly: `Interrupted` unless `stop_is_clean`
/// says the caller's budget asked for it). A run stops at a window's end,
/// its event budget passed by at most one window's events.
pub fn run(
    split: Split,
    max_events: u64,
    progress: Progress<'_>,
    stop_is_clean: &dyn Fn() -> bool,
) -> Result<Ended, Failure> {
    let Split {
        worlds,
        plan,
        report_every,
    } = split;
    let k = worlds.len();
    let horizon = worlds[0].horizon;
    let cells: Vec<Mutex<World>> = worlds.into_iter().map(Mutex::new).collect();
    let lock =
        |i: usize| -> MutexGuard<'_, World> { cells[i].lock().unwrap_or_else(|e| e.into_inner()) };
    for i in 0..k {
        lock(i).schedule_starts();
    }
    // Spinning only pays while every partition has a core of its own.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let barrier = SpinBarrier::new(k, if k <= cores { SPINS } else { 0 });
    let until_ns = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let mut hit_max_events = false;
    let mut stopped = false;
    let mut failed: Option<Failure> = None;
    let mut reached = SimTime::ZERO;
    let panicked: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|sc| {
        for i in 1..k {
            let (cells, barrier, until_ns, done) = (&cells, &barrier, &until_ns, &done);
            let panicked = &panicked;
            sc.spawn(move || loop {
                barrier.wait();
                if done.load(Ordering::Acquire) {
                    break;
                }
                let until = SimTime(until_ns.load(Ordering::Acquire));
                window(&cells[i], until, i, panicked);
                barrier.wait();
            });
        }
        let mut start = SimTime::ZERO;
        let mut next_report = report_every;
        loop {
            let last = horizon.0.saturating_sub(start.0) < plan.lookahead.0;
            let until = if last {
                horizon
            } else {
                SimTime(start.0 + plan.lookahead.0 - 1)
            };
            until_ns.store(until.0, Ordering::Release);
            barrier.wait();
            window(&cells[0], until, 0, &panicked);
            barrier.wait();
            reached = until;
            let mut ws: Vec<MutexGuard<'_, World>> = (0..k).map(lock).collect();
            failed = window_failure(&mut ws);
            if let Some(what) = panicked.lock().unwrap_or_else(|e| e.into_inner()).take() {
                failed = Some(Failure::Invariant(until, what));
            }
            partition::exchange(&mut ws);
            let events: u64 = ws.iter().map(|w| w.q.events_executed()).sum();
            drop(ws);
            if failed.is_none() && events >= max_events {
                (hit_max_events, stopped) = (true, true);
            }
            if failed.is_none() && !stopped && events >= next_report {
                next_report = (events / report_every + 1) * report_every;
                if !progress(until, events) {
                    stopped = true;
                    if !stop_is_clean() {
                        failed = Some(Failure::Interrupted(until));
                    }
                }
            }
            if last || failed.is_some() || stopped {
                done.store(true, Ordering::Release);
                barrier.wait();
                break;
            }
            start = SimTime(until.0 + 1);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let worlds: Vec<World> = (cells.into_iter())
        .map(|c| c.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    close(worlds, reached, hit_max_events)
}

/// The partitions' end at `reached`: each takes in what crossed in the
/// last window and closes its own books; then the merged world's books
/// are checked.
fn close(mut worlds: Vec<World>, reached: SimTime, hit_max_events: bool) -> Result<Ended, Failure> {
    let (mut total, mut in_flight) = (0u64, Vec::new());
    for w in &mut worlds {
        // What crossed in the last window is on the far ends' wires.
        if !w.take_in() {
            let (t, what) = w.broken.take().unwrap_or_default();
            return Err(Failure::Invariant(t, what));
        }
        w.q.advance_to(reached);
        let (t, f) = output::census(w).map_err(|what| Failure::Invariant(reached, what))?;
        total += t;
        if in_flight.is_empty() {
            in_flight = f;
        } else {
            (in_flight.iter_mut().zip(f)).for_each(|(a, b)| *a += b);
        }
    }
    let world = partition::merge(worlds);
    let (ledger, in_flight) = output::check_books(&world, total, in_flight)
        .map_err(|what| Failure::Invariant(reached, what))?;
    Ok(Ended {
        world,
        ledger,
        in_flight,
        hit_max_events,
    })
}

/// Runs partition `i`'s window up to `until`. A panic (a bug: no input
/// should get there) is caught and kept in `panicked`, so that every
/// thread still meets the others at the barriers and the run ends with
/// an error instead of waiting for ever.
fn window(cell: &Mutex<World>, until: SimTime, i: usize, panicked: &Mutex<Option<String>>) {
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut w = cell.lock().unwrap_or_else(|e| e.into_inner());
        if w.take_in() {
            w.run_until(until, &mut |_, _| true);
        }
    }));
    if let Err(panic) = run {
        let what = (panic.downcast_ref::<String>().cloned())
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        let mut slot = panicked.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(format!("partition {i} failed: {what}"));
    }
}

/// A partition whose window ended in a stall or a broken invariant.
fn window_failure(ws: &mut [MutexGuard<'_, World>]) -> Option<Failure> {
    for w in ws.iter_mut() {
        if let Some((t, what)) = w.stalled.take() {
            return Some(Failure::Stalled(t, what));
        }
        if let Some((t, what)) = w.broken.take() {
            return Some(Failure::Invariant(t, what));
        }
    }
    None
}

/// A barrier whose waiters spin a little before yielding: a window of a
/// split run is short (milliseconds of work), and waking a thread parked
/// on a futex took tens of microseconds per window on a virtual host.
struct SpinBarrier {
    n: usize,
    spins: u32,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

/// Spins before a waiter yields its core (about 10-50 us).
const SPINS: u32 = 1 << 14;

impl SpinBarrier {
    fn new(n: usize, spins: u32) -> Self {
        SpinBarrier {
            n,
            spins,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    /// Returns once all `n` threads have called it.
    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < self.spins {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{Action, App};
    use crate::world::stall_tests::Stuck;

    /// Panics at its first timer: a bug in some model.
    struct Faulty;
    impl App for Faulty {
        fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
            out.push(Action::Timer {
                at: now + SimTime::from_millis(30),
                token: 0,
            });
        }
        fn on_timer(&mut self, _now: SimTime, _token: u64, _out: &mut Vec<Action>) {
            panic!("a model's bug");
        }
    }

    /// Two hosts across a 20 ms link, a CBR flow from a to b, split in
    /// two; the receiving partition's application replaced by `app`.
    fn split_with(app: fn() -> Box<dyn App>) -> Split {
        let text = r#"{"duration_s": 1, "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 20}],
            "flows": [{"name": "f", "type": "cbr", "src": "a", "dst": "b",
                       "payload_bytes": 100, "interval_ms": 10}],
            "parallel": {"partitions": 2}}"#;
        let s = scenario::parse_and_validate(text).expect("valid");
        let mut split = build(&s, &RngStreams::new(1, 0)).expect("splits");
        assert_eq!(split.plan.lookahead, SimTime::from_millis(20));
        let b = split.plan.part_of[1] as usize;
        let w = &mut split.worlds[b];
        let sink = (w.apps.iter()).position(|a| a.node == 1);
        w.apps[sink.expect("the sink on b")].app = app();
        split
    }

    /// Two hosts across a 20 ms link of `rate_bps`, CBR packets of
    /// `payload` bytes every millisecond for `duration_s`, in `partitions`.
    fn two_hosts(partitions: u32, rate_bps: f64, payload: u32, duration_s: f64) -> String {
        format!(
            r#"{{"duration_s": {duration_s}, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
            "links": [{{"a": "a", "b": "b", "rate_bps": {rate_bps}, "delay_ms": 20}}],
            "flows": [{{"name": "f", "type": "cbr", "src": "a", "dst": "b",
                       "payload_bytes": {payload}, "interval_ms": 1}}],
            "parallel": {{"partitions": {partitions}}}}}"#
        )
    }

    /// `progress` is called at the end of the window in which another
    /// `report_every` events have run, with the events so far; false stops
    /// the run there, an error unless the caller's budget asked for it.
    #[test]
    fn progress_is_reported_every_so_many_events_and_can_stop_the_run() {
        let s = scenario::parse_and_validate(&two_hosts(2, 1e6, 97, 1.0)).expect("valid");
        let split = |every| {
            let mut sp = build(&s, &RngStreams::new(1, 0)).expect("splits");
            sp.report_every = every;
            sp
        };
        let mut calls: Vec<u64> = Vec::new();
        let mut progress = |_, events| {
            calls.push(events);
            true
        };
        let ended = run(split(500), u64::MAX, &mut progress, &|| false).expect("runs");
        let total = ended.world.events();
        assert!(total > 1500, "{total}");
        assert_eq!(calls.len() as u64, total / 500, "{calls:?}");
        for (k, &e) in calls.iter().enumerate() {
            assert!(
                e >= 500 * (k as u64 + 1) && e < 500 * (k as u64 + 2),
                "{calls:?}"
            );
        }
        let mut stop = |_, _| false;
        match run(split(500), u64::MAX, &mut stop, &|| false) {
            Err(Failure::Interrupted(at)) => assert!(at < SimTime::from_millis(500), "{at}"),
            other => panic!("{:?}", other.err()),
        }
        let ended = run(split(500), u64::MAX, &mut stop, &|| true).expect("a clean stop");
        assert!(ended.world.events() < total / 2);
    }

    /// A run of a whole number of windows (60 ms, three of 20) on a link
    /// so fast that a 29-byte packet takes no whole nanosecond: the packet
    /// sent at 40 ms, handed over at the start of the last whole window,
    /// reaches b exactly at the end, and is delivered in the split run as
    /// in one piece (taken in for the last instant, not left on the wire).
    #[test]
    fn a_packet_arriving_at_the_last_instant_is_delivered() {
        let meta = |partitions| {
            let mut progress = |_, _| true;
            let out = crate::run_json(
                &two_hosts(partitions, 1e12, 1, 0.06),
                &crate::RunOptions::default(),
                &mut progress,
            )
            .expect("runs");
            let m: serde_json::Value = serde_json::from_str(&out.meta_json).expect("meta");
            (m["delivered"].clone(), m["in_flight"].clone())
        };
        // Sent at 0, 1, ..., 59 ms, each 20 ms later at b: 0 to 40 by 60 ms.
        assert_eq!(meta(1), (41.into(), 19.into()));
        assert_eq!(meta(2), meta(1));
    }

    /// A partition that panics ends the run with an error naming it (the
    /// other threads are not left waiting at a barrier).
    #[test]
    fn a_partition_that_panics_ends_the_run_with_an_error() {
        let split = split_with(|| Box::new(Faulty));
        let b = split.plan.part_of[1];
        let mut progress = |_, _| true;
        match run(split, u64::MAX, &mut progress, &|| false) {
            Err(Failure::Invariant(at, what)) => {
                assert_eq!(at, SimTime::from_millis(40) - SimTime(1), "{what}");
                assert!(
                    what.contains(&format!("partition {b} failed: a model's bug")),
                    "{what}"
                );
            }
            other => panic!("{:?}", other.err()),
        }
    }

    /// A partition whose time stops ends the run as one in one piece does.
    #[test]
    fn a_partition_whose_time_stops_is_a_stall() {
        let split = split_with(|| Box::new(Stuck));
        let mut progress = |_, _| true;
        match run(split, u64::MAX, &mut progress, &|| false) {
            Err(Failure::Stalled(at, what)) => {
                assert_eq!(at, SimTime::ZERO);
                assert!(what.contains("node \"b\""), "{what}");
            }
            other => panic!("{:?}", other.err()),
        }
    }

    /// The barrier lets no thread through before all have come, round
    /// after round.
    #[test]
    fn the_barrier_holds_every_round() {
        for spins in [0, SPINS] {
            let b = SpinBarrier::new(3, spins);
            let count = AtomicUsize::new(0);
            std::thread::scope(|sc| {
                for _ in 0..3 {
                    sc.spawn(|| {
                        for round in 0..200 {
                            count.fetch_add(1, Ordering::AcqRel);
                            b.wait();
                            assert!(count.load(Ordering::Acquire) >= 3 * (round + 1));
                            b.wait();
                        }
                    });
                }
            });
            assert_eq!(count.load(Ordering::Acquire), 600);
        }
    }

    /// A dumbbell cut at its 20 ms bottleneck, lossy on the cut
    /// (Gilbert-Elliott) and on one access link (1%), overloaded (three CBR
    /// senders at 1 Mbit/s into 2 Mbit/s, a 30-packet queue), with a CUBIC
    /// flow, a GCC call whose feedback crosses back, and an RTP group of
    /// one sender and three receivers, one on its side (multicast copies
    /// at r1 and r2, in both partitions); ending mid-window with packets
    /// on the wire. `sampled`: queue
    /// and capacity samples and every summary measured too.
    fn dumbbell(partitions: u32, sampled: bool) -> String {
        let mut nodes = vec![
            r#"{"name": "r1"}"#.to_string(),
            r#"{"name": "r2"}"#.to_string(),
        ];
        let mut links = Vec::new();
        for i in 0..5 {
            nodes.push(format!(r#"{{"name": "s{i}"}}, {{"name": "d{i}"}}"#));
            let loss = if i == 0 {
                r#", "loss": {"type": "packet", "rate": 0.01}"#
            } else {
                ""
            };
            links.push(format!(
                r#"{{"a": "s{i}", "b": "r1", "rate_bps": 1e8, "delay_ms": 2{loss}}}"#
            ));
            links.push(format!(
                r#"{{"a": "r2", "b": "d{i}", "rate_bps": 1e8, "delay_ms": 3}}"#
            ));
        }
        links.push(
            r#"{"name": "bottleneck", "a": "r1", "b": "r2", "rate_bps": 2e6, "delay_ms": 20,
                "queue": {"type": "droptail", "limit_packets": 30},
                "loss": {"type": "gilbert_elliott", "p_good_to_bad": 0.01, "p_bad_to_good": 0.3}}"#
                .to_string(),
        );
        let mut flows: Vec<String> = (0..3)
            .map(|i| {
                format!(
                    r#"{{"name": "cbr{i}", "type": "cbr", "src": "s{i}", "dst": "d{i}", "rate_bps": 1e6, "payload_bytes": 972}}"#
                )
            })
            .collect();
        flows.push(
            r#"{"name": "tcp", "type": "tcp", "src": "s3", "dst": "d3", "cc": {"type": "cubic"}, "start_s": 0.5}"#
                .to_string(),
        );
        let measure = if sampled {
            r#"{"series": true, "queue_sample_ms": 10, "capacity_interval_ms": 100,
                "warmup_s": 1, "windows_s": [[1, 3], [3, 6]]}"#
        } else {
            r#"{"series": true}"#
        };
        format!(
            r#"{{"duration_s": 6.013, "nodes": [{}], "links": [{}], "flows": [{}],
              "rtp_sessions": [{{"name": "call", "transport": "unicast", "session_bw_bps": 1.5e6,
                "media_payload_bytes": 1160, "avpf": {{"trr_interval_ms": 1000}},
                "members": [{{"node": "s4", "media": true, "source": {{"type": "synthetic"}},
                              "pacer": {{}}, "feedback": {{"format": "twcc"}}, "cc": {{"type": "gcc"}},
                              "pauses": [[2.5, 3.5]]}},
                            {{"node": "d4", "playout": {{"adaptive": true}}}}]}},
                {{"name": "group", "session_bw_bps": 1e5, "media_payload_bytes": 200,
                  "members": [{{"node": "s0", "media": true}}, {{"node": "s1"}}, {{"node": "d0"}}, {{"node": "d1"}}]}}],
              "measure": {measure},
              "parallel": {{"partitions": {partitions}}}}}"#,
            nodes.join(","),
            links.join(","),
            flows.join(",")
        )
    }

    fn run_text(text: &str) -> (Vec<crate::measure::Table>, serde_json::Value) {
        let mut progress = |_, _| true;
        let opts = crate::RunOptions {
            seed: 3,
            ..Default::default()
        };
        let out = crate::run_json(text, &opts, &mut progress).expect("run");
        (
            out.tables,
            serde_json::from_str(&out.meta_json).expect("meta"),
        )
    }

    /// A split run gives the tables of the run in one piece, to the bit:
    /// the partitions' applications, link directions, recorder rows and
    /// counts merged into one world, what was on a cut link's wire at the
    /// end taken in, losses counted once whether drawn on the cut or off
    /// it. Without samples (each partition takes its own) it executes the
    /// same events too.
    #[test]
    fn a_split_run_has_every_table_of_the_run_in_one_piece() {
        for sampled in [true, false] {
            let (one, meta1) = run_text(&dumbbell(1, sampled));
            let (two, meta2) = run_text(&dumbbell(2, sampled));
            assert_eq!(meta2["window_ns"], 20_000_000);
            let names =
                |t: &[crate::measure::Table]| t.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
            assert_eq!(names(&one), names(&two));
            for (a, b) in one.iter().zip(&two) {
                // Debug prints each float's shortest exact form (NaN included).
                assert_eq!(
                    format!("{:?}", a.columns),
                    format!("{:?}", b.columns),
                    "{}",
                    a.name
                );
            }
            let mut keys = vec![
                "delivered",
                "dropped",
                "in_flight",
                "originated",
                "loss_runs_late",
                "multicast_copies",
                "pcap_truncated",
            ];
            if !sampled {
                keys.push("events");
            }
            for key in keys {
                assert_eq!(meta1[key], meta2[key], "{key} (sampled: {sampled})");
            }
            // Queue drops on the cut's near side, losses on both sides of
            // it, multicast copies, and packets on the wire at the end.
            assert!(meta1["dropped"].as_u64().unwrap() > 100, "{meta1}");
            assert!(meta1["in_flight"].as_u64().unwrap() > 0, "{meta1}");
            assert!(meta1["multicast_copies"].as_u64().unwrap() > 0, "{meta1}");
            let links = one.iter().find(|t| t.name == "links").expect("links");
            let lost = match links.get("lost_packets") {
                Some(crate::measure::Column::U64(v)) => v,
                other => panic!("lost_packets: {other:?}"),
            };
            let names = links.get("link").expect("link");
            let lost_on = |name: &str| -> u64 {
                (0..lost.len())
                    .filter(|&i| names.str_at(i) == Some(name))
                    .map(|i| lost[i])
                    .sum()
            };
            assert!(lost_on("bottleneck") > 0 && lost_on("s0-r1") > 0);
        }
    }
}
