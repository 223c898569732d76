//! How a scenario gives a link direction's changing properties: rate and
//! delay schedules, a delivery-opportunity trace, outages and jitter;
//! their checks (each error names its field) and their construction.

use super::jitter::Jitter;
use super::opportunities::Opportunities;
use super::outage::{Outages, UpDown};
use super::steps::Steps;
use super::{Capacity, DownPolicy, LinkDynamics};
use crate::scenario::check::{Checker, MAX_DELAY_MS, MAX_DURATION_S};
use crate::sim::{RngStreams, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

/// A rate or a delay: a constant, steps `[[t_s, value], ...]` (piecewise
/// constant from the first step, which starts at 0 s), or
/// `{steps = [...], repeat_s = P}`, which starts again every P seconds.
#[derive(Clone, Debug, JsonSchema)]
#[serde(untagged)]
pub enum Schedule {
    Constant(f64),
    Steps(Vec<[f64; 2]>),
    Repeating(RepeatingSteps),
}

const SCHEDULE_EXPECTED: &str =
    "a number, a list of [time_s, value] steps, or a table {steps = [[time_s, value], ...], repeat_s = period}";

// By the value's type (a number, a list, a table), so that anything else
// is named as serde names a wrong type ("invalid type: string \"fast\",
// expected a number, ...").
impl<'de> Deserialize<'de> for Schedule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Schedule;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(SCHEDULE_EXPECTED)
            }
            fn visit_f64<E>(self, x: f64) -> Result<Schedule, E> {
                Ok(Schedule::Constant(x))
            }
            fn visit_i64<E>(self, x: i64) -> Result<Schedule, E> {
                Ok(Schedule::Constant(x as f64))
            }
            fn visit_u64<E>(self, x: u64) -> Result<Schedule, E> {
                Ok(Schedule::Constant(x as f64))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Schedule, A::Error> {
                let mut steps = Vec::new();
                while let Some(s) = a.next_element::<[f64; 2]>()? {
                    steps.push(s);
                }
                Ok(Schedule::Steps(steps))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, a: A) -> Result<Schedule, A::Error> {
                let r =
                    RepeatingSteps::deserialize(serde::de::value::MapAccessDeserializer::new(a))?;
                Ok(Schedule::Repeating(r))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepeatingSteps {
    /// `[time_s, value]` pairs, times increasing from 0.
    pub steps: Vec<[f64; 2]>,
    /// The schedule starts again every `repeat_s` seconds (longer than the
    /// last step's start).
    pub repeat_s: f64,
}

impl From<f64> for Schedule {
    fn from(x: f64) -> Self {
        Schedule::Constant(x)
    }
}

impl Schedule {
    fn parts(&self) -> (&[[f64; 2]], Option<f64>) {
        match self {
            Schedule::Constant(_) => (&[], None),
            Schedule::Steps(s) => (s, None),
            Schedule::Repeating(r) => (&r.steps, Some(r.repeat_s)),
        }
    }

    pub fn is_constant(&self) -> bool {
        matches!(self, Schedule::Constant(_))
    }

    /// The value at time zero.
    pub fn initial(&self) -> f64 {
        match self {
            Schedule::Constant(x) => *x,
            _ => self.parts().0.first().map_or(f64::NAN, |s| s[1]),
        }
    }

    /// Every value the schedule takes.
    pub fn values(&self) -> Vec<f64> {
        match self {
            Schedule::Constant(x) => vec![*x],
            _ => self.parts().0.iter().map(|s| s[1]).collect(),
        }
    }

    /// Checks the steps' times and each value (`value(path, v, c)`).
    pub fn validate(&self, path: &str, c: &mut Checker, value: &dyn Fn(&str, f64, &mut Checker)) {
        if let Schedule::Constant(x) = self {
            return value(path, *x, c);
        }
        let (steps, repeat) = self.parts();
        let sp = match self {
            Schedule::Repeating(_) => format!("{path}.steps"),
            _ => path.to_string(),
        };
        if steps.is_empty() {
            return c.err(sp, "needs at least one [time_s, value] step");
        }
        let mut last_ns: Option<u64> = None;
        for (k, &[t, v]) in steps.iter().enumerate() {
            let tp = format!("{sp}[{k}][0]");
            if !t.is_finite() || !(0.0..=MAX_DURATION_S).contains(&t) {
                c.err(&tp, format!("a step's start must be a time in seconds from 0 to {MAX_DURATION_S} (got {t})"));
            } else {
                let ns = SimTime::from_secs_f64(t).0;
                if k == 0 && ns != 0 {
                    c.err(&tp, format!("the first step starts at 0 s (got {t}): the value before it would be undefined"));
                }
                if last_ns.is_some_and(|l| ns <= l) {
                    c.err(&tp, format!("steps must start in increasing order (got {t} s after an earlier or equal start)"));
                }
                last_ns = Some(ns);
            }
            value(&format!("{sp}[{k}][1]"), v, c);
        }
        if let Some(p) = repeat {
            let pp = format!("{path}.repeat_s");
            let last = steps.last().map_or(0.0, |s| s[0]);
            if !p.is_finite() || p <= last || p > MAX_DURATION_S {
                c.err(pp, format!("the period must be longer than the last step's start ({last} s) and at most {MAX_DURATION_S} s (got {p})"));
            }
        }
    }

    /// The validated schedule with each value converted.
    pub fn build<T: Copy>(&self, conv: impl Fn(f64) -> T) -> Steps<T> {
        match self {
            Schedule::Constant(x) => Steps::constant(conv(*x)),
            _ => {
                let (steps, repeat) = self.parts();
                let points = steps
                    .iter()
                    .map(|&[t, v]| (SimTime::from_secs_f64(t), conv(v)))
                    .collect();
                Steps::new(points, repeat.map(SimTime::from_secs_f64))
            }
        }
    }
}

/// Mahimahi's bytes per delivery opportunity (its MTU-sized `PACKET_SIZE`).
pub const MAHIMAHI_BYTES: u32 = 1504;

fn d_true() -> bool {
    true
}
fn d_bytes() -> u32 {
    MAHIMAHI_BYTES
}

/// A trace-driven link direction (Mahimahi's `mm-link` format): one
/// delivery opportunity per entry, in whole milliseconds from the start.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Opportunity times in ms, non-decreasing, the last one positive (one
    /// pass's length). The mediasim package fills this from `file` or
    /// `builtin`.
    #[serde(default)]
    pub opportunities_ms: Vec<u64>,
    /// A Mahimahi trace file (read by the mediasim package before the run).
    #[serde(default)]
    pub file: Option<String>,
    /// One of the package's generated traces (see `mediasim trace list`).
    #[serde(default)]
    pub builtin: Option<String>,
    /// Start again from the beginning at the end (as Mahimahi does by
    /// default); false: no capacity after the last opportunity.
    #[serde(default = "d_true")]
    pub repeat: bool,
    /// Bytes one opportunity carries (Mahimahi: 1504).
    #[serde(default = "d_bytes")]
    pub bytes_per_opportunity: u32,
}

impl TraceSpec {
    pub fn validate(&self, path: &str, c: &mut Checker) {
        let ops = &self.opportunities_ms;
        if ops.is_empty() {
            let msg = if self.file.is_some() || self.builtin.is_some() {
                "the engine needs the opportunities themselves: `file` and `builtin` are read by the mediasim package (mediasim.run) before the run"
            } else {
                "an empty trace: give opportunities_ms (or file / builtin through the mediasim package)"
            };
            return c.err(format!("{path}.opportunities_ms"), msg);
        }
        if let Some(k) = ops.windows(2).position(|w| w[1] < w[0]) {
            c.err(
                format!("{path}.opportunities_ms[{}]", k + 1),
                format!(
                    "the trace's times go back ({} ms after {} ms): they must not decrease",
                    ops[k + 1],
                    ops[k]
                ),
            );
        }
        let last = *ops.last().expect("not empty");
        if last == 0 {
            c.err(
                format!("{path}.opportunities_ms"),
                "the trace must last a positive time (its last entry is 0 ms)",
            );
        }
        if last as f64 > MAX_DURATION_S * 1e3 {
            c.err(
                format!("{path}.opportunities_ms"),
                format!("the trace lasts {last} ms, beyond the longest run"),
            );
        }
        if self.bytes_per_opportunity == 0 {
            c.err(
                format!("{path}.bytes_per_opportunity"),
                "must be at least 1 byte",
            );
        }
    }

    /// Whether the trace passes `validate` (a model can be built from it).
    pub fn validated(&self) -> bool {
        let ops = &self.opportunities_ms;
        ops.last().is_some_and(|&l| l > 0)
            && ops.windows(2).all(|w| w[0] <= w[1])
            && self.bytes_per_opportunity > 0
    }

    pub fn build(&self) -> Opportunities {
        Opportunities::new(
            &self.opportunities_ms,
            self.repeat,
            self.bytes_per_opportunity,
        )
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueuedOnDown {
    /// Queued packets wait for the link to come up (arrivals queue as usual).
    #[default]
    Keep,
    /// Queued packets, and those arriving while down, are dropped (`link_down`).
    Drop,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WireOnDown {
    /// Packets already propagating arrive.
    #[default]
    Deliver,
    /// Packets propagating are lost (`link_down`).
    Lose,
}

/// When a link direction is down: `down_s` windows, or an on/off process
/// (`mean_up_s`, `mean_down_s`: exponential times, up at time zero).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutageSpec {
    /// `[start_s, end_s]` windows, sorted, not overlapping.
    #[serde(default)]
    pub down_s: Vec<[f64; 2]>,
    #[serde(default)]
    pub mean_up_s: Option<f64>,
    #[serde(default)]
    pub mean_down_s: Option<f64>,
    /// What becomes of queued packets (default keep).
    #[serde(default)]
    pub queued: QueuedOnDown,
    /// What becomes of packets on the wire (default deliver). The packet
    /// being sent when the link goes down is always lost.
    #[serde(default)]
    pub wire: WireOnDown,
}

impl OutageSpec {
    pub fn validate(&self, path: &str, c: &mut Checker) {
        let process = self.mean_up_s.is_some() || self.mean_down_s.is_some();
        if process != self.down_s.is_empty() {
            return c.err(
                path,
                "give either down_s windows or an on/off process (mean_up_s and mean_down_s)",
            );
        }
        if process {
            for (f, x) in [
                ("mean_up_s", self.mean_up_s),
                ("mean_down_s", self.mean_down_s),
            ] {
                match x {
                    None => c.err(
                        format!("{path}.{f}"),
                        "the on/off process needs both mean_up_s and mean_down_s",
                    ),
                    Some(x) => {
                        c.positive(format_args!("{path}.{f}"), x);
                        c.at_most(format_args!("{path}.{f}"), x, MAX_DURATION_S);
                        if x.is_finite() && x > 0.0 && x < 1e-6 {
                            c.err(
                                format!("{path}.{f}"),
                                format!("must be at least 1 us (got {x} s)"),
                            );
                        }
                    }
                }
            }
        }
        let mut last_end = None;
        for (k, w) in self.down_s.iter().enumerate() {
            let wp = format!("{path}.down_s[{k}]");
            c.window(&wp, w);
            if last_end.is_some_and(|e| w[0] < e) {
                c.err(&wp, "windows must be sorted and must not overlap");
            }
            last_end = Some(w[1]);
        }
    }

    fn plan(&self, rng: &RngStreams, stream: &str) -> Outages {
        match (self.mean_up_s, self.mean_down_s) {
            (Some(up), Some(down)) => Outages::OnOff {
                mean_up: up,
                mean_down: down,
                rng: Box::new(rng.stream(stream)),
            },
            _ => Outages::Windows(
                self.down_s
                    .iter()
                    .map(|w| (SimTime::from_secs_f64(w[0]), SimTime::from_secs_f64(w[1])))
                    .collect(),
            ),
        }
    }
}

fn d_zero() -> f64 {
    0.0
}

/// Delay jitter (RFC 8867's random bounded PDV): each packet's delay is
/// the link's plus a Gaussian draw of `std_ms`, drawn again beyond
/// `mean_ms +- max_ms` (default 2 `std_ms`); with `reorder` false (the
/// default) a packet never arrives before one sent ahead of it.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JitterSpec {
    pub std_ms: f64,
    #[serde(default)]
    pub max_ms: Option<f64>,
    #[serde(default = "d_zero")]
    pub mean_ms: f64,
    #[serde(default)]
    pub reorder: bool,
}

impl JitterSpec {
    pub fn max(&self) -> f64 {
        self.max_ms.unwrap_or(2.0 * self.std_ms)
    }

    pub fn validate(&self, path: &str, c: &mut Checker) {
        c.non_negative(format_args!("{path}.std_ms"), self.std_ms);
        c.at_most(format_args!("{path}.std_ms"), self.std_ms, MAX_DELAY_MS);
        if let Some(m) = self.max_ms {
            c.non_negative(format_args!("{path}.max_ms"), m);
            c.at_most(format_args!("{path}.max_ms"), m, MAX_DELAY_MS);
            if m.is_finite() && self.std_ms.is_finite() && m < 0.1 * self.std_ms {
                c.err(
                    format!("{path}.max_ms"),
                    format!(
                        "must be at least a tenth of std_ms (got {m} ms for std_ms {})",
                        self.std_ms
                    ),
                );
            }
        }
        if !self.mean_ms.is_finite() || self.mean_ms.abs() > MAX_DELAY_MS {
            c.err(
                format!("{path}.mean_ms"),
                format!("must be a finite number of ms (got {})", self.mean_ms),
            );
        }
    }
}

/// A link direction's changing properties as the scenario gives them
/// (the direction's own fields over the link's).
pub struct DirDynamics<'a> {
    pub rate_bps: Option<&'a Schedule>,
    pub trace: Option<&'a TraceSpec>,
    pub delay_ms: &'a Schedule,
    pub outages: Option<&'a OutageSpec>,
    pub jitter: Option<&'a JitterSpec>,
}

impl DirDynamics<'_> {
    /// Whether the direction needs the changing-link path.
    pub fn changes(&self) -> bool {
        self.trace.is_some()
            || self.rate_bps.is_some_and(|r| !r.is_constant())
            || !self.delay_ms.is_constant()
            || self.outages.is_some()
            || self.jitter.is_some()
    }

    /// The direction's state (validated spec); `name` names its random
    /// streams.
    pub fn build(&self, rng: &RngStreams, name: &str) -> LinkDynamics {
        let capacity = match (self.trace, self.rate_bps) {
            (Some(t), _) => Capacity::Trace(t.build()),
            (None, Some(r)) => Capacity::Rate(r.build(|x| x.round() as u64)),
            (None, None) => unreachable!("validated: a rate or a trace"),
        };
        let delay = self.delay_ms.build(SimTime::from_millis_f64);
        let outages = self
            .outages
            .map(|o| UpDown::new(o.plan(rng, &format!("link:{name}:outage"))));
        let on_down = self.outages.map_or(
            DownPolicy {
                drop_queued: false,
                lose_wire: false,
            },
            |o| DownPolicy {
                drop_queued: o.queued == QueuedOnDown::Drop,
                lose_wire: o.wire == WireOnDown::Lose,
            },
        );
        let jitter = self.jitter.map(|j| {
            let stream = rng.stream(&format!("link:{name}:jitter"));
            Jitter::new(j.mean_ms, j.std_ms, j.max(), stream)
        });
        let reorder = self.jitter.is_some_and(|j| j.reorder);
        LinkDynamics::new(capacity, delay, outages, on_down, jitter, reorder)
    }
}
