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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::said;

    fn parse<T: serde::de::DeserializeOwned>(json: &str) -> T {
        serde_json::from_str(json).expect("valid JSON for the spec")
    }

    fn schedule(s: &Schedule) -> Vec<String> {
        said(|c| s.validate("x", c, &|_, _, _| {}))
    }

    #[test]
    fn a_schedules_steps_and_period_are_checked_at_their_bounds() {
        for ok in [
            "3",
            "[[0, 1], [1, 2]]",
            r#"{"steps": [[0, 1], [1, 2]], "repeat_s": 1.000001}"#,
            r#"{"steps": [[0, 1]], "repeat_s": 1e8}"#,
        ] {
            assert_eq!(schedule(&parse(ok)), Vec::<String>::new(), "{ok}");
        }
        let starts = "a step's start must be a time in seconds from 0 to 100000000";
        for (bad, path, says) in [
            ("[]", "x", "needs at least one [time_s, value] step"),
            (
                r#"{"steps": [], "repeat_s": 1}"#,
                "x.steps",
                "needs at least one",
            ),
            (
                "[[1, 5]]",
                "x[0][0]",
                "the first step starts at 0 s (got 1)",
            ),
            (
                "[[0, 1], [2, 2], [2, 3]]",
                "x[2][0]",
                "increasing order (got 2 s",
            ),
            ("[[0, 1], [-1, 2]]", "x[1][0]", starts),
            ("[[0, 1], [1e9, 2]]", "x[1][0]", starts),
            (
                r#"{"steps": [[0, 1], [1, 2]], "repeat_s": 1}"#,
                "x.repeat_s",
                "longer than the last step's start (1 s)",
            ),
            (
                r#"{"steps": [[0, 1]], "repeat_s": 1.00001e8}"#,
                "x.repeat_s",
                "at most 100000000 s",
            ),
            (
                r#"{"steps": [[0, 1], [1, 2]], "repeat_s": 0.5}"#,
                "x.repeat_s",
                "longer than",
            ),
        ] {
            let e = schedule(&parse(bad));
            assert_eq!(e.len(), 1, "{bad}: {e:?}");
            assert!(
                e[0].starts_with(&format!("{path}: ")) && e[0].contains(says),
                "{bad}: {e:?}"
            );
        }
        let endless = Schedule::Repeating(RepeatingSteps {
            steps: vec![[0.0, 1.0]],
            repeat_s: f64::INFINITY,
        });
        assert_eq!(schedule(&endless).len(), 1);
        // Each value goes to the value check, at its own path.
        let s: Schedule = parse("[[0, 1], [1, 2]]");
        let seen = said(|c| s.validate("x", c, &|p, v, c| c.err(p, format!("{v}"))));
        assert_eq!(seen, ["x[0][1]: 1", "x[1][1]: 2"]);
    }

    #[test]
    fn a_trace_is_checked_as_it_is_built() {
        let trace = |json: &str| -> TraceSpec { parse(json) };
        let t = trace(r#"{"opportunities_ms": [10]}"#);
        // Mahimahi's defaults: the trace repeats, 1504 bytes an opportunity.
        assert!(t.repeat);
        assert_eq!(t.bytes_per_opportunity, 1504);
        for (json, errors) in [
            (r#"{"opportunities_ms": [10, 10, 20]}"#, vec![]),
            (r#"{"opportunities_ms": [100000000000]}"#, vec![]),
            (
                r#"{"opportunities_ms": [10, 5]}"#,
                vec!["t.opportunities_ms[1]: the trace's times go back (5 ms after 10 ms): they must not decrease"],
            ),
            (
                r#"{"opportunities_ms": [0]}"#,
                vec!["t.opportunities_ms: the trace must last a positive time (its last entry is 0 ms)"],
            ),
            (
                r#"{"opportunities_ms": [100000000001]}"#,
                vec!["t.opportunities_ms: the trace lasts 100000000001 ms, beyond the longest run"],
            ),
            (
                r#"{"opportunities_ms": [10], "bytes_per_opportunity": 0}"#,
                vec!["t.bytes_per_opportunity: must be at least 1 byte"],
            ),
            (r#"{"opportunities_ms": []}"#, vec!["t.opportunities_ms: an empty trace: give opportunities_ms (or file / builtin through the mediasim package)"]),
        ] {
            let t = trace(json);
            let e = said(|c| t.validate("t", c));
            assert_eq!(e, errors, "{json}");
            // `validated` agrees, but for the length, which only the
            // whole run's limit bounds.
            let too_long = json.contains("100000000001");
            assert_eq!(t.validated(), errors.is_empty() || too_long, "{json}");
        }
        let named = trace(r#"{"file": "x.trace"}"#);
        let e = said(|c| named.validate("t", c));
        assert!(
            e.len() == 1 && e[0].contains("read by the mediasim package"),
            "{e:?}"
        );
    }

    #[test]
    fn outages_are_windows_or_an_on_off_process_checked_at_their_bounds() {
        let outage = |json: &str| -> Vec<String> {
            let o: OutageSpec = parse(json);
            said(|c| o.validate("o", c))
        };
        for ok in [
            r#"{"down_s": [[1, 2], [2, 3]]}"#,
            r#"{"mean_up_s": 1e-6, "mean_down_s": 1e8}"#,
        ] {
            assert_eq!(outage(ok), Vec::<String>::new(), "{ok}");
        }
        for (json, errors) in [
            (
                r#"{"down_s": [[1, 2.5], [2, 3]]}"#,
                vec!["o.down_s[1]: windows must be sorted and must not overlap"],
            ),
            (
                r#"{"mean_up_s": 5e-7, "mean_down_s": 1}"#,
                vec!["o.mean_up_s: must be at least 1 us (got 0.0000005 s)"],
            ),
            (
                r#"{"mean_up_s": 0, "mean_down_s": 1}"#,
                vec!["o.mean_up_s: must be a positive number (got 0)"],
            ),
            (
                r#"{"mean_up_s": 1}"#,
                vec!["o.mean_down_s: the on/off process needs both mean_up_s and mean_down_s"],
            ),
            (
                r#"{}"#,
                vec!["o: give either down_s windows or an on/off process (mean_up_s and mean_down_s)"],
            ),
            (
                r#"{"down_s": [[1, 2]], "mean_up_s": 1, "mean_down_s": 1}"#,
                vec!["o: give either down_s windows or an on/off process (mean_up_s and mean_down_s)"],
            ),
        ] {
            assert_eq!(outage(json), errors, "{json}");
        }
        let e = outage(r#"{"mean_up_s": 1, "mean_down_s": 2e8}"#);
        assert!(
            e.len() == 1 && e[0].starts_with("o.mean_down_s: must be at most"),
            "{e:?}"
        );
        // The plan follows the spec: a process, or the windows.
        let rng = RngStreams::new(1, 0);
        let o: OutageSpec = parse(r#"{"mean_up_s": 1, "mean_down_s": 2}"#);
        let Outages::OnOff {
            mean_up, mean_down, ..
        } = o.plan(&rng, "s")
        else {
            panic!("an on/off process")
        };
        assert_eq!((mean_up, mean_down), (1.0, 2.0));
        let o: OutageSpec = parse(r#"{"down_s": [[1, 2]]}"#);
        let Outages::Windows(w) = o.plan(&rng, "s") else {
            panic!("windows")
        };
        assert_eq!(w, [(SimTime::from_secs(1), SimTime::from_secs(2))]);
    }

    #[test]
    fn jitter_bounds_and_defaults() {
        let j: JitterSpec = parse(r#"{"std_ms": 10}"#);
        // RFC 8867's bounded PDV: two standard deviations by default,
        // around a mean of zero, in order.
        assert_eq!((j.max(), j.mean_ms, j.reorder), (20.0, 0.0, false));
        let j: JitterSpec = parse(r#"{"std_ms": 10, "max_ms": 3}"#);
        assert_eq!(j.max(), 3.0);
        let jitter = |std_ms: f64, max_ms: Option<f64>, mean_ms: f64| -> Vec<String> {
            let j = JitterSpec {
                std_ms,
                max_ms,
                mean_ms,
                reorder: false,
            };
            said(|c| j.validate("j", c))
        };
        for (std, max, mean) in [
            (10.0, Some(1.0), 0.0),
            (0.0, Some(0.0), 0.0),
            (10.0, None, -1e9),
            (10.0, None, 1e9),
        ] {
            assert_eq!(
                jitter(std, max, mean),
                Vec::<String>::new(),
                "{std} {max:?} {mean}"
            );
        }
        assert_eq!(
            jitter(10.0, Some(0.99), 0.0),
            ["j.max_ms: must be at least a tenth of std_ms (got 0.99 ms for std_ms 10)"]
        );
        // A bad std_ms or max_ms is said once, for itself.
        let e = jitter(f64::INFINITY, Some(5.0), 0.0);
        assert!(e.len() == 1 && e[0].starts_with("j.std_ms: "), "{e:?}");
        let e = jitter(10.0, Some(f64::INFINITY), 0.0);
        assert!(e.len() == 1 && e[0].starts_with("j.max_ms: "), "{e:?}");
        for mean in [1.1e9, -1.1e9, f64::NAN] {
            let e = jitter(10.0, None, mean);
            assert_eq!(e.len(), 1, "{mean}: {e:?}");
            assert!(
                e[0].starts_with("j.mean_ms: must be a finite number of ms"),
                "{e:?}"
            );
        }
    }

    #[test]
    fn a_direction_changes_when_any_of_its_properties_does() {
        let fixed: Schedule = parse("10");
        let steps: Schedule = parse("[[0, 10], [1, 20]]");
        let trace: TraceSpec = parse(r#"{"opportunities_ms": [10]}"#);
        let outage: OutageSpec = parse(r#"{"down_s": [[1, 2]]}"#);
        let jitter: JitterSpec = parse(r#"{"std_ms": 1}"#);
        let dir = |rate, trace, delay, outages, jitter| DirDynamics {
            rate_bps: rate,
            trace,
            delay_ms: delay,
            outages,
            jitter,
        };
        assert!(!dir(Some(&fixed), None, &fixed, None, None).changes());
        for (k, d) in [
            dir(Some(&steps), None, &fixed, None, None),
            dir(None, Some(&trace), &fixed, None, None),
            dir(Some(&fixed), None, &steps, None, None),
            dir(Some(&fixed), None, &fixed, Some(&outage), None),
            dir(Some(&fixed), None, &fixed, None, Some(&jitter)),
        ]
        .iter()
        .enumerate()
        {
            assert!(d.changes(), "case {k}");
        }
    }

    #[test]
    fn an_outages_policy_reaches_the_direction() {
        let rate: Schedule = parse("1e6");
        let rng = RngStreams::new(1, 0);
        for (json, drop_queued, lose_wire) in [
            (r#"{"down_s": [[1, 2]]}"#, false, false),
            (r#"{"down_s": [[1, 2]], "queued": "drop"}"#, true, false),
            (r#"{"down_s": [[1, 2]], "wire": "lose"}"#, false, true),
            (
                r#"{"down_s": [[1, 2]], "queued": "keep", "wire": "deliver"}"#,
                false,
                false,
            ),
        ] {
            let o: OutageSpec = parse(json);
            let d = DirDynamics {
                rate_bps: Some(&rate),
                trace: None,
                delay_ms: &rate,
                outages: Some(&o),
                jitter: None,
            };
            let l = d.build(&rng, "l");
            assert_eq!(
                l.on_down,
                DownPolicy {
                    drop_queued,
                    lose_wire
                },
                "{json}"
            );
            assert_eq!(
                l.next_change().map(|c| c.1),
                Some(super::super::Change::Down)
            );
        }
    }
}
