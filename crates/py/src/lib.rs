//! Thin PyO3 bindings: scenario in (JSON text), results out (numpy columns
//! and a JSON metadata string). All logic lives in `mediasim-engine`; this
//! file only converts types and maps engine errors to Python exceptions.

use mediasim_engine::measure::Column;
use mediasim_engine::{EngineError, RunOptions};
use numpy::IntoPyArray;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::collections::HashMap;

/// A `mediasim.errors.EngineFailure`: message, the simulated time (s) and
/// the component involved (or None).
fn engine_failure(
    py: Python<'_>,
    msg: String,
    time_s: Option<f64>,
    component: Option<String>,
) -> PyErr {
    match py
        .import("mediasim.errors")
        .and_then(|m| m.getattr("EngineFailure"))
        .and_then(|cls| cls.call1((msg, time_s, component)))
    {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

/// Maps an engine error to the matching Python exception (in one place).
fn to_py_err(py: Python<'_>, e: EngineError) -> PyErr {
    match e {
        EngineError::Scenario(errs) => {
            let pairs: Vec<(String, String)> = errs
                .iter()
                .map(|e| (e.path.clone(), e.message.clone()))
                .collect();
            let msg = EngineError::Scenario(errs).to_string();
            match py
                .import("mediasim.errors")
                .and_then(|m| m.getattr("ScenarioError"))
                .and_then(|cls| cls.call1((msg, pairs)))
            {
                Ok(obj) => PyErr::from_value(obj),
                Err(err) => err,
            }
        }
        EngineError::Io(m) => PyOSError::new_err(m),
        EngineError::Invariant { at, what } => {
            engine_failure(py, what, at.map(|t| t.as_secs_f64()), None)
        }
        EngineError::Interrupted(t) => {
            let at_s = t.as_secs_f64();
            PyKeyboardInterrupt::new_err(format!("run interrupted at simulated time {at_s:.3} s"))
        }
        EngineError::Stalled(t, what) => {
            let msg = EngineError::Stalled(t, what.clone()).to_string();
            engine_failure(py, msg, Some(t.as_secs_f64()), Some(what))
        }
    }
}

/// The Python strings of the name lists a run's columns draw from, made
/// on first use and shared by every column and table of the run. Keyed
/// by the list's address; each list is held here, so that no other list
/// can take its address while the run's tables are converted.
type Made<'py> = Vec<Option<Bound<'py, PyString>>>;
#[derive(Default)]
struct PyNames<'py>(HashMap<usize, (std::sync::Arc<[String]>, Made<'py>)>);

impl<'py> PyNames<'py> {
    fn made(&mut self, names: &std::sync::Arc<[String]>) -> &mut Made<'py> {
        let key = std::sync::Arc::as_ptr(names) as *const String as usize;
        let entry = (self.0.entry(key))
            .or_insert_with(|| (std::sync::Arc::clone(names), vec![None; names.len()]));
        &mut entry.1
    }

    /// `names[codes[i]]` for every row, as a list of shared strings.
    fn list(
        &mut self,
        py: Python<'py>,
        codes: &[u32],
        names: &std::sync::Arc<[String]>,
    ) -> PyResult<Bound<'py, PyList>> {
        let made = self.made(names);
        let rows = codes.iter().map(|&c| {
            let c = c as usize;
            made[c]
                .get_or_insert_with(|| PyString::new(py, &names[c]))
                .clone()
        });
        PyList::new(py, rows.collect::<Vec<_>>())
    }

    /// The whole list of names, as shared strings.
    fn all(
        &mut self,
        py: Python<'py>,
        names: &std::sync::Arc<[String]>,
    ) -> PyResult<Bound<'py, PyList>> {
        let made = self.made(names);
        let all = (made.iter_mut().zip(names.iter()))
            .map(|(m, n)| m.get_or_insert_with(|| PyString::new(py, n)).clone());
        PyList::new(py, all.collect::<Vec<_>>())
    }
}

fn column_to_py<'py>(
    py: Python<'py>,
    c: Column,
    lists: bool,
    names: &mut PyNames<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        Column::Names { codes, names: list } if lists => names.list(py, &codes, &list)?.into_any(),
        // (codes, names): a string per row cost more than the run when a
        // table has millions of rows; Python makes its columns from codes.
        Column::Names { codes, names: list } => {
            let all = names.all(py, &list)?;
            PyTuple::new(py, [codes.into_pyarray(py).into_any(), all.into_any()])?.into_any()
        }
        Column::Str(v) => PyList::new(py, v)?.into_any(),
        // Plain lists: no numpy import (the command line's lean path).
        Column::U64(v) if lists => PyList::new(py, v)?.into_any(),
        Column::I64(v) if lists => PyList::new(py, v)?.into_any(),
        Column::F64(v) if lists => PyList::new(py, v)?.into_any(),
        Column::U64(v) => v.into_pyarray(py).into_any(),
        Column::I64(v) => v.into_pyarray(py).into_any(),
        Column::F64(v) => v.into_pyarray(py).into_any(),
    })
}

/// run(scenario_json, seed=0, replication=0, pcap_dir=None, pcap=False, trace=False,
///     max_events=None, max_wall_s=None, max_memory_mb=None, progress=None,
///     only=None, lists=False)
/// -> (tables: dict[str, dict[str, array]], meta_json: str)
///
/// Numbers come as numpy arrays; text as a list of str, or, where the
/// engine codes it (names of the run's members, reasons, kinds), as a
/// tuple (codes: numpy uint32 array, names: list of str), row i being
/// names[codes[i]]. `only`: the names of the tables to return (default:
/// all). `lists`: every column as a Python list (text as str).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=0, replication=0, pcap_dir=None, pcap=false, trace=false,
                    max_events=None, max_wall_s=None, max_memory_mb=None, progress=None,
                    only=None, lists=false))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: u64,
    replication: u64,
    pcap_dir: Option<String>,
    pcap: bool,
    trace: bool,
    max_events: Option<u64>,
    max_wall_s: Option<f64>,
    max_memory_mb: Option<f64>,
    progress: Option<Py<PyAny>>,
    only: Option<Vec<String>>,
    lists: bool,
) -> PyResult<(Bound<'py, PyDict>, String)> {
    let opts = RunOptions {
        seed,
        replication,
        pcap_dir: pcap_dir.map(Into::into),
        pcap,
        trace,
        budget: mediasim_engine::Budget {
            max_events,
            max_wall_s,
            max_memory_mb,
        },
    };
    let text = scenario_json.to_string();
    // Release the GIL for the run; every so many events re-attach briefly
    // to let Ctrl-C through.
    let result = py.detach(move || {
        // The simulated time last reported, for the message should the
        // engine panic (a bug: no input should get there).
        let mut last = mediasim_engine::sim::SimTime::ZERO;
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut progress = |now: mediasim_engine::sim::SimTime, events: u64| {
                last = now;
                Python::attach(|py| {
                    if let Some(cb) = &progress {
                        // A progress display; its own errors must not end
                        // the run. But a Ctrl-C that arrives before it is
                        // called is raised inside it (the interpreter runs
                        // signal handlers between bytecodes), and is then
                        // no longer pending for check_signals below.
                        if let Err(e) = cb.call1(py, (now.as_secs_f64(), events)) {
                            if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                                return false;
                            }
                        }
                    }
                    py.check_signals().is_ok()
                })
            };
            mediasim_engine::run_json(&text, &opts, &mut progress)
        }));
        run.map_err(|panic| {
            let what = (panic.downcast_ref::<String>().map(String::as_str))
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown");
            let msg = format!("internal engine error near simulated time {last}: {what} (a bug: please report it with the scenario and seed)");
            (msg, last.as_secs_f64())
        })
    });
    let result = result.map_err(|(msg, t)| engine_failure(py, msg, Some(t), None))?;
    let out = result.map_err(|e| to_py_err(py, e))?;
    let tables = PyDict::new(py);
    let mut names = PyNames::default();
    for t in out.tables {
        if only.as_ref().is_some_and(|o| !o.contains(&t.name)) {
            continue;
        }
        let cols = PyDict::new(py);
        for (name, c) in t.columns {
            cols.set_item(name, column_to_py(py, c, lists, &mut names)?)?;
        }
        tables.set_item(t.name, cols)?;
    }
    Ok((tables, out.meta_json))
}

/// Parses and validates a scenario; raises ScenarioError listing every problem.
#[pyfunction]
fn validate(py: Python<'_>, scenario_json: &str) -> PyResult<()> {
    mediasim_engine::scenario::check_all(scenario_json)
        .map(|_| ())
        .map_err(|errs| to_py_err(py, EngineError::Scenario(errs)))
}

/// A valid scenario's implausible values (probable unit slips) as
/// (path, message) pairs; raises ScenarioError if it is invalid.
#[pyfunction]
fn implausible(py: Python<'_>, scenario_json: &str) -> PyResult<Vec<(String, String)>> {
    let s = mediasim_engine::scenario::parse_and_validate(scenario_json)
        .map_err(|errs| to_py_err(py, EngineError::Scenario(errs)))?;
    Ok(
        (mediasim_engine::scenario::plausible::check(&s).into_iter())
            .map(|e| (e.path, e.message))
            .collect(),
    )
}

/// The JSON Schema of a scenario.
#[pyfunction]
fn schema() -> String {
    mediasim_engine::scenario::json_schema()
}

/// Each scale's average (payload, wire) rate in bit/s of a media-scaling
/// flow's fields given as JSON.
#[pyfunction]
fn media_scaling_rates(flow_json: &str) -> PyResult<Vec<(f64, f64)>> {
    mediasim_engine::scenario::parse::scale_rates_json(flow_json)
        .map_err(pyo3::exceptions::PyValueError::new_err)
}

/// The TFRC throughput equation (RFC 5348 3.1), bytes/s.
#[pyfunction]
fn tfrc_throughput(s: f64, r: f64, p: f64, b: f64, t_rto: f64) -> f64 {
    mediasim_engine::proto::tfrc::throughput_bps(s, r, p, b, t_rto)
}

/// The media loss an (n, k) FEC code leaves after decoding, media lost
/// independently with `p_media` and repair with `p_repair`.
#[pyfunction]
fn fec_residual_loss(code: &str, k: u32, n: u32, p_media: f64, p_repair: f64) -> PyResult<f64> {
    use mediasim_engine::app::svc::fec::FecCode;
    let err = |m: String| Err(pyo3::exceptions::PyValueError::new_err(m));
    let c = match code {
        "rs" if k >= 1 && k < n && n <= 255 => FecCode::Rs { k, n },
        "xor" if k >= 1 && n == k + 1 => FecCode::Xor { k },
        "rs" => {
            return err(format!(
                "k, n: ({k}, {n}) is not an rs block (1 <= k < n <= 255)"
            ))
        }
        "xor" => {
            return err(format!(
                "k, n: ({k}, {n}) is not an xor block (k >= 1, n = k + 1)"
            ))
        }
        _ => return err(format!("code: unknown {code:?} (rs or xor)")),
    };
    for (name, p) in [("p_media", p_media), ("p_repair", p_repair)] {
        if !(0.0..=1.0).contains(&p) {
            return err(format!("{name}: {p} is not a probability"));
        }
    }
    Ok(c.residual_loss(p_media, p_repair))
}

#[pyfunction]
fn version() -> &'static str {
    mediasim_engine::VERSION
}

/// build_id() -> str: a hash of the engine's sources and locked
/// dependencies; campaigns key their runs with it.
#[pyfunction]
fn build_id() -> &'static str {
    mediasim_engine::BUILD
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(implausible, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build_id, m)?)?;
    m.add_function(wrap_pyfunction!(media_scaling_rates, m)?)?;
    m.add_function(wrap_pyfunction!(tfrc_throughput, m)?)?;
    m.add_function(wrap_pyfunction!(fec_residual_loss, m)?)?;
    Ok(())
}
