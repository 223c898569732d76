//! mediasim engine: a packet-level discrete-event network simulator.
//!
//! Layers, each using only those listed before it (docs/architecture.md
//! has the exact table; `tests/layers.rs` enforces it):
//! - [`sim`]: integer time, the event queue, per-component random streams.
//! - [`net`]: packets (with an opaque payload), drop reasons, addresses,
//!   routing (unicast and multicast trees).
//! - [`queue`]: queue disciplines behind one trait, with shared accounting.
//! - [`loss`]: loss models behind one trait.
//! - [`wire`]: real byte formats, for pcap only.
//! - [`measure`]: the recorder, flow summaries, result tables, pcap.
//! - [`proto`]: sans-IO protocol state machines.
//! - [`app`]: traffic sources and sinks as sans-IO state machines.
//! - [`world`]: nodes and link directions, and the event loop that moves
//!   packets between the above.
//! - [`scenario`]: the serde data model, validation, the world builder.
//!
//! The entry point is [`run_json`]: scenario in (JSON text), results out
//! (columnar tables plus run metadata).

pub mod app;
pub mod loss;
pub mod measure;
pub mod net;
pub mod output;
pub mod parallel;
pub mod proto;
pub mod queue;
pub mod scenario;
pub mod sim;
pub mod wire;
pub mod world;

use measure::Table;
use scenario::{FieldError, Scenario};
use sim::{RngStreams, SimTime};
use std::path::PathBuf;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// A hash of the engine's sources and locked dependencies (build.rs): two
/// engines with the same build give the same results for the same input.
pub const BUILD: &str = env!("MEDIASIM_ENGINE_BUILD");

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("invalid scenario:\n{}", .0.iter().map(|e| format!("  {e}")).collect::<Vec<_>>().join("\n"))]
    Scenario(Vec<FieldError>),
    #[error("{0}")]
    Io(String),
    /// A check of the engine's own bookkeeping failed (conservation, queue
    /// limits, the order of time): a bug, reported with where and when.
    #[error("{what}")]
    Invariant { at: Option<SimTime>, what: String },
    #[error("run interrupted at simulated time {0}")]
    Interrupted(SimTime),
    /// Simulated time stopped advancing (events at one instant without end).
    #[error("simulated time stopped advancing at {0}: more than 20,000,000 events at that instant, the last from {1} (an interval or rate that rounds to zero?)")]
    Stalled(SimTime, String),
}

/// Options of one run that are not part of the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub seed: u64,
    pub replication: u64,
    /// Where pcap files go; needed when pcap capture is on.
    pub pcap_dir: Option<PathBuf>,
    /// Capture pcap even if the scenario does not ask for it.
    pub pcap: bool,
    /// Record the per-hop trace even if the scenario does not ask for it.
    pub trace: bool,
    /// Ends the run early, cleanly, with what was measured so far.
    pub budget: Budget,
}

/// Limits on one run's work. When one is reached the run ends at that
/// point: its tables cover the simulated time up to there, and the run's
/// metadata says why (`stopped_early`). Wall time and memory are checked
/// every 2^20 events; the event count exactly.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    pub max_events: Option<u64>,
    pub max_wall_s: Option<f64>,
    /// Resident memory of the whole process, MiB.
    pub max_memory_mb: Option<f64>,
}

impl Budget {
    /// Why the run must stop now, if it must.
    fn exceeded(&self, started: std::time::Instant) -> Option<String> {
        let wall = started.elapsed().as_secs_f64();
        if self.max_wall_s.is_some_and(|m| wall >= m) {
            return Some(format!(
                "max_wall_s {} reached",
                self.max_wall_s.unwrap_or(0.0)
            ));
        }
        let rss = measure::memory::resident_mb()?;
        self.max_memory_mb
            .filter(|&m| rss >= m)
            .map(|m| format!("max_memory_mb {m} reached ({rss:.0} MiB resident)"))
    }
}

pub struct RunOutput {
    pub tables: Vec<Table>,
    /// Run metadata as JSON: counts, timing, and the names behind the
    /// integer codes of the per-packet tables.
    pub meta_json: String,
}

/// Runs a scenario given as JSON text.
pub fn run_json(
    text: &str,
    opts: &RunOptions,
    progress: world::Progress<'_>,
) -> Result<RunOutput, EngineError> {
    let s = scenario::parse_and_validate(text).map_err(EngineError::Scenario)?;
    run_valid(s, opts, progress)
}

/// Runs a scenario, validating it first.
pub fn run(
    s: &Scenario,
    opts: &RunOptions,
    progress: world::Progress<'_>,
) -> Result<RunOutput, EngineError> {
    let errs = scenario::validate(s);
    if !errs.is_empty() {
        return Err(EngineError::Scenario(errs));
    }
    run_valid(s.clone(), opts, progress)
}

/// Runs a scenario that passed `scenario::validate` (once: with hundreds
/// of flows, validation and a copy of the document were an eighth of a
/// short run).
fn run_valid(
    mut s: Scenario,
    opts: &RunOptions,
    progress: world::Progress<'_>,
) -> Result<RunOutput, EngineError> {
    let t0 = std::time::Instant::now();
    s.measure.trace |= opts.trace;
    let rng = RngStreams::new(opts.seed, opts.replication);
    if s.parallel.partitions > 1 {
        return run_split(s, opts, &rng, t0, progress);
    }
    let mut w = scenario::build::build(&s, &rng).map_err(EngineError::Scenario)?;
    // Probable unit slips, reported with the run (Python warns of each).
    let implausible = scenario::plausible::check(&s);
    s.keep_only_run_settings();
    w.pcap_left = s.limits.max_pcap_bytes;
    if s.measure.pcap || opts.pcap {
        open_pcap(&mut w, opts, s.measure.pcap_snaplen)?;
    }
    let stopped = drive(&mut w, opts, t0, progress)?;
    for p in w.pcap.iter_mut().flatten() {
        if let Err(e) = p.flush() {
            w.io_error.get_or_insert(format!("pcap flush: {e}"));
        }
    }
    if let Some(e) = w.io_error.take() {
        return Err(EngineError::Io(e));
    }
    let (ledger, in_flight) =
        output::close_books(&mut w).map_err(|what| EngineError::Invariant {
            at: Some(w.now()),
            what,
        })?;
    finish(&s, opts, w, (ledger, in_flight, &implausible), stopped, t0)
}

/// A run split into `parallel.partitions` (the `parallel` module).
fn run_split(
    mut s: Scenario,
    opts: &RunOptions,
    rng: &RngStreams,
    t0: std::time::Instant,
    progress: world::Progress<'_>,
) -> Result<RunOutput, EngineError> {
    if opts.pcap {
        let msg =
            "a split run does not write pcap files (--pcap): run it with parallel.partitions = 1";
        return Err(EngineError::Scenario(vec![FieldError::new(
            "parallel.partitions",
            msg,
        )]));
    }
    let split = parallel::build(&s, rng).map_err(failure)?;
    let implausible = scenario::plausible::check(&s);
    s.keep_only_run_settings();
    let lookahead = split.plan.lookahead;
    let max_events = opts.budget.max_events.unwrap_or(u64::MAX);
    let stopped: std::cell::RefCell<Option<String>> = Default::default();
    let mut guarded = |now: SimTime, events: u64| match opts.budget.exceeded(t0) {
        Some(why) => {
            *stopped.borrow_mut() = Some(why);
            false
        }
        None => progress(now, events),
    };
    let by_budget = || stopped.borrow().is_some();
    let end = parallel::run(split, max_events, &mut guarded, &by_budget).map_err(failure)?;
    let mut stopped = stopped.into_inner();
    if end.hit_max_events {
        stopped = Some(format!("max_events {max_events} reached"));
    }
    let mut w = end.world;
    w.split = Some((s.parallel.partitions, lookahead));
    let books = (end.ledger, end.in_flight, &implausible[..]);
    finish(&s, opts, w, books, stopped, t0)
}

/// A split run's failure as the engine's error.
fn failure(f: parallel::Failure) -> EngineError {
    match f {
        parallel::Failure::Scenario(errs) => EngineError::Scenario(errs),
        parallel::Failure::Stalled(t, what) => EngineError::Stalled(t, what),
        parallel::Failure::Invariant(t, what) => EngineError::Invariant { at: Some(t), what },
        parallel::Failure::Interrupted(t) => EngineError::Interrupted(t),
    }
}

/// The run's tables and metadata from its world with closed books.
fn finish(
    s: &Scenario,
    opts: &RunOptions,
    mut w: world::World,
    (ledger, in_flight, implausible): (output::Ledger, Vec<u64>, &[FieldError]),
    stopped: Option<String>,
    t0: std::time::Instant,
) -> Result<RunOutput, EngineError> {
    let (tables, names) = output::tables(&mut w, &in_flight, &s.measure.windows());
    let meta_json = run_meta(
        s,
        opts,
        &w,
        (&names, &ledger, implausible),
        stopped,
        t0.elapsed().as_secs_f64(),
    );
    Ok(RunOutput { tables, meta_json })
}

/// Opens one pcap file per link in the run's pcap folder.
fn open_pcap(w: &mut world::World, opts: &RunOptions, snaplen: u32) -> Result<(), EngineError> {
    let dir = opts.pcap_dir.clone().ok_or_else(|| {
        let msg = "pcap files need an output folder (run(..., out=FOLDER) or --out)";
        EngineError::Scenario(vec![FieldError::new("measure.pcap", msg)])
    })?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| EngineError::Io(format!("cannot create {}: {e}", dir.display())))?;
    for (i, name) in w.link_names.iter().enumerate() {
        let path = dir.join(format!("{}.pcap", sanitize(name)));
        let wr = measure::pcap::PcapWriter::create(&path, snaplen)
            .map_err(|e| EngineError::Io(format!("cannot create {}: {e}", path.display())))?;
        w.pcap[i] = Some(wr);
        w.capturing = true;
    }
    Ok(())
}

/// Runs the events under the budget. Ok(why) when a budget ended the run
/// early (None when it reached its horizon); a stall, a broken invariant
/// or an interruption is an error.
fn drive(
    w: &mut world::World,
    opts: &RunOptions,
    t0: std::time::Instant,
    progress: world::Progress<'_>,
) -> Result<Option<String>, EngineError> {
    w.max_events = opts.budget.max_events.unwrap_or(u64::MAX);
    let mut stopped: Option<String> = None;
    let mut guarded = |now: SimTime, events: u64| match opts.budget.exceeded(t0) {
        Some(why) => {
            stopped = Some(why);
            false
        }
        None => progress(now, events),
    };
    if !w.run(&mut guarded) {
        if let Some((t, what)) = w.stalled.take() {
            return Err(EngineError::Stalled(t, what));
        }
        if let Some((t, what)) = w.broken.take() {
            return Err(EngineError::Invariant { at: Some(t), what });
        }
        if stopped.is_none() && !w.hit_max_events {
            return Err(EngineError::Interrupted(w.now()));
        }
    }
    if w.hit_max_events {
        stopped = Some(format!("max_events {} reached", w.max_events));
    }
    Ok(stopped)
}

/// The run's metadata (docs/results.md, "meta"), serialised straight from
/// the world's names (a JSON tree of copies took a tenth of a 256-flow
/// run's set-up and output). Fields in alphabetical order: the order the
/// text has always had.
#[derive(serde::Serialize)]
struct Meta<'a> {
    addresses: serde_json::Value,
    capacity_truncated: bool,
    coded_columns: serde_json::Value,
    codes: output::Codes<'a>,
    delivered: u64,
    dropped: u64,
    duration_s: f64,
    end_ns: u64,
    engine_build: &'static str,
    engine_version: &'static str,
    events: u64,
    implausible: Vec<(&'a str, &'a str)>,
    in_flight: u64,
    integer_columns: std::collections::BTreeMap<&'static str, Vec<&'static str>>,
    loss_runs_late: u64,
    multicast_copies: u64,
    originated: u64,
    packet_log: bool,
    /// A split run's partitions and window (absent for a run in one piece).
    #[serde(skip_serializing_if = "Option::is_none")]
    partitions: Option<u32>,
    pcap_truncated: bool,
    queue_samples_truncated: bool,
    replication: u64,
    scenario: &'a str,
    seed: u64,
    series_log: bool,
    series_truncated: bool,
    stopped_early: Option<String>,
    trace_truncated: bool,
    wall_s: f64,
    /// A split run's window, the shortest delay of a cut link.
    #[serde(skip_serializing_if = "Option::is_none")]
    window_ns: Option<u64>,
}

/// The run's metadata as JSON text.
fn run_meta(
    s: &Scenario,
    opts: &RunOptions,
    w: &world::World,
    (names, ledger, implausible): (&output::RunNames, &output::Ledger, &[scenario::FieldError]),
    stopped: Option<String>,
    wall_s: f64,
) -> String {
    let dotted = |a: [u8; 4]| format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
    // Where each node and scenario group is in the pcap files' IPv4 headers.
    let addresses = serde_json::json!({
        "nodes": (names.codes().nodes.iter().zip(&w.nodes))
            .map(|(name, n)| (name.to_string(), serde_json::Value::from(dotted(n.addr))))
            .collect::<serde_json::Map<_, _>>(),
        "groups": (s.groups.iter().zip(&w.group_addrs))
            .map(|(g, &a)| (g.name.clone(), serde_json::Value::from(dotted(a))))
            .collect::<serde_json::Map<_, _>>(),
    });
    let meta = Meta {
        addresses,
        capacity_truncated: w.capacity.as_ref().is_some_and(|c| c.truncated),
        coded_columns: serde_json::json!({
            "packets": {"flow": "flow", "receiver": "node"},
            "drops": {"flow": "flow"},
            "queue_samples": {"link_dir": "link_dir"},
            "link_capacity": {"link_dir": "link_dir"},
            "trace": {"flow": "flow", "link_dir": "link_dir", "node": "node"},
        }),
        codes: names.codes(),
        delivered: ledger.delivered,
        dropped: ledger.dropped,
        duration_s: s.duration_s,
        end_ns: w.now().as_nanos(),
        engine_build: BUILD,
        engine_version: VERSION,
        events: w.events(),
        implausible: (implausible.iter())
            .map(|e| (e.path.as_str(), e.message.as_str()))
            .collect(),
        in_flight: ledger.in_flight,
        integer_columns: (app::APP_TABLES.iter())
            .map(|t| (t.name, t.counts()))
            .collect(),
        loss_runs_late: w.rec.loss_runs.iter().map(|r| r.late()).sum::<u64>(),
        multicast_copies: ledger.copies,
        originated: ledger.originated,
        packet_log: s.measure.packets,
        partitions: w.split.map(|x| x.0),
        pcap_truncated: w.pcap_truncated,
        queue_samples_truncated: w.rec.queue_samples_truncated,
        replication: opts.replication,
        scenario: &s.name,
        seed: opts.seed,
        series_log: s.measure.series,
        series_truncated: w.rec.series_truncated,
        stopped_early: stopped.map(|why| format!("{why} at simulated {} s", w.now().as_secs_f64())),
        trace_truncated: w.rec.trace_truncated,
        wall_s,
        window_ns: w.split.map(|x| x.1.as_nanos()),
    };
    serde_json::to_string(&meta).expect("the metadata is plain JSON")
}

/// A file-name-safe version of a link name.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}
