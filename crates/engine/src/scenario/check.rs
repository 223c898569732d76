//! Validation helpers every model's spec uses: errors that name the field
//! path (`links[2].queue.limit_packets`), the common checks, and the scope
//! of names a spec may refer to. Validation collects every problem rather
//! than stopping at the first.

use rustc_hash::FxHashSet as HashSet;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            path: path.into(),
            message: compact_numbers(&message.into()),
        }
    }
}

/// More digits than this in a number of a message (beyond any `u64`'s 20)
/// come from a float's plain decimal form.
const LONG_NUMBER_DIGITS: usize = 21;

/// The message with every number of more than [`LONG_NUMBER_DIGITS`]
/// digits in exponent form: a float's `Display` writes 1e300 with 301
/// digits and 1e-300 with 300 zeros, which bury the message. The exponent
/// form is Rust's shortest that reads back to the same float.
fn compact_numbers(msg: &str) -> String {
    let is_num = |c: char| c.is_ascii_digit() || c == '.';
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..start]);
        let len = rest[start..]
            .find(|c| !is_num(c))
            .unwrap_or(rest.len() - start);
        let token = rest[start..start + len].trim_end_matches('.');
        let digits = token.chars().filter(char::is_ascii_digit).count();
        match token.parse::<f64>() {
            Ok(x) if digits > LONG_NUMBER_DIGITS => out.push_str(&format!("{x:e}")),
            _ => out.push_str(token),
        }
        rest = &rest[start + token.len()..];
    }
    out.push_str(rest);
    out
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Longest run accepted: about 3 years of simulated time.
pub const MAX_DURATION_S: f64 = 1e8;
/// Longest propagation delay (or timer) accepted: about 11 days.
pub const MAX_DELAY_MS: f64 = 1e9;
/// Shortest period of anything that repeats (a packet interval, a timer):
/// 1 us. Shorter ones round towards zero and stop simulated time.
pub const MIN_INTERVAL_MS: f64 = 1e-3;
/// Most packets per second from one source (a 1 us mean gap).
pub const MAX_RATE_PPS: f64 = 1e6;

/// Collects field errors.
#[derive(Default)]
pub struct Checker {
    pub errs: Vec<FieldError>,
}

impl Checker {
    pub fn err(&mut self, path: impl Into<String>, msg: impl Into<String>) {
        self.errs.push(FieldError::new(path, msg));
    }
    pub fn positive(&mut self, path: impl fmt::Display, x: f64) {
        if !x.is_finite() || x <= 0.0 {
            self.err(
                path.to_string(),
                format!("must be a positive number (got {x})"),
            );
        }
    }
    pub fn non_negative(&mut self, path: impl fmt::Display, x: f64) {
        if !x.is_finite() || x < 0.0 {
            self.err(
                path.to_string(),
                format!("must be a non-negative number (got {x})"),
            );
        }
    }
    pub fn at_most(&mut self, path: impl fmt::Display, x: f64, max: f64) {
        if x.is_finite() && x > max {
            self.err(path.to_string(), format!("must be at most {max} (got {x})"));
        }
    }
    /// A period of something that repeats, in ms: positive, at least
    /// [`MIN_INTERVAL_MS`], at most [`MAX_DELAY_MS`].
    pub fn interval_ms(&mut self, path: impl fmt::Display, x: f64) {
        self.positive(&path, x);
        self.at_most(&path, x, MAX_DELAY_MS);
        if x.is_finite() && x > 0.0 && x < MIN_INTERVAL_MS {
            let msg = format!("must be at least {MIN_INTERVAL_MS} ms (1 us; got {x})");
            self.err(path.to_string(), msg);
        }
    }
    /// A packet rate of one source, packets/s: positive, at most
    /// [`MAX_RATE_PPS`] (`what` says how it was given).
    pub fn packet_rate(&mut self, path: impl fmt::Display, pps: f64, what: &str) {
        if pps.is_finite() && pps > MAX_RATE_PPS {
            let msg = format!("{what} is {pps:.3e} packets/s, more than {MAX_RATE_PPS:.0e} (packets under 1 us apart)");
            self.err(path.to_string(), msg);
        }
    }
    pub fn probability(&mut self, path: impl fmt::Display, x: f64) {
        if !x.is_finite() || !(0.0..=1.0).contains(&x) {
            self.err(
                path.to_string(),
                format!("must be a probability in [0, 1] (got {x})"),
            );
        }
    }
    /// A packet size on the wire: at least `min` (its headers and any
    /// payload it must carry), at most an IPv4 packet.
    pub fn wire_bytes(&mut self, path: impl fmt::Display, bytes: u32, min: u32) {
        if !(min..=65_535).contains(&bytes) {
            self.err(
                path.to_string(),
                format!("must be {min}..=65535 bytes on the wire (got {bytes})"),
            );
        }
    }
    /// `x`, if given, is at least 1.
    pub fn at_least_one(&mut self, path: impl fmt::Display, x: Option<u64>) {
        if x == Some(0) {
            self.err(path.to_string(), "must be at least 1");
        }
    }
    /// A time window `[start_s, end_s)` with 0 <= start < end.
    pub fn window(&mut self, path: impl fmt::Display, w: &[f64; 2]) {
        if !w[0].is_finite() || !w[1].is_finite() || w[0] < 0.0 || w[1] <= w[0] {
            self.err(
                path.to_string(),
                format!(
                    "must be [start, end] with 0 <= start < end (got [{}, {}])",
                    w[0], w[1]
                ),
            );
        }
    }
    /// Names are non-empty and distinct: `names` are those of the items of
    /// the list at `list` (a path is formatted only for a problem).
    pub fn unique<'a>(&mut self, what: &str, list: &str, names: impl Iterator<Item = &'a str>) {
        let mut seen = HashSet::default();
        for (i, n) in names.enumerate() {
            if n.is_empty() {
                self.err(
                    format!("{list}[{i}].name"),
                    format!("{what} name must not be empty"),
                );
            } else if !seen.insert(n) {
                self.err(
                    format!("{list}[{i}].name"),
                    format!("duplicate {what} name \"{n}\""),
                );
            }
        }
    }
}

/// What a spec may refer to by name, and run-wide facts it checks against.
pub struct Scope<'a> {
    pub nodes: HashSet<&'a str>,
    pub groups: HashSet<&'a str>,
    /// Every flow of the run, derived ones included ("<tcp flow>/ack",
    /// "<session>/<node>/rtcp"): named the first time a check asks (few
    /// models refer to flows, and naming hundreds cost more than checking).
    pub flows: Flows<'a>,
    /// The run's length; NaN when it is itself invalid (not a positive
    /// number), so that the checks against it stay silent: the length's
    /// own error is the one said (a start "not before the end of the run
    /// (duration_s = 0)" would only repeat it).
    pub duration_s: f64,
}

/// The run's flow names, made on first use from the scenario (none
/// without one).
#[derive(Default)]
pub struct Flows<'a> {
    scenario: Option<&'a crate::scenario::Scenario>,
    names: std::cell::OnceCell<HashSet<String>>,
}

impl<'a> Flows<'a> {
    pub fn of(scenario: &'a crate::scenario::Scenario) -> Self {
        Flows {
            scenario: Some(scenario),
            names: Default::default(),
        }
    }

    fn contains(&self, name: &str) -> bool {
        let names = self.names.get_or_init(|| {
            (self.scenario.iter())
                .flat_map(|s| s.flow_names())
                .collect()
        });
        names.contains(name)
    }
}

impl Scope<'_> {
    fn known(c: &mut Checker, path: impl fmt::Display, name: &str, ok: bool, what: &str) -> bool {
        if !ok {
            c.err(path.to_string(), format!("unknown {what} \"{name}\""));
        }
        ok
    }
    /// True if `name` is a node; otherwise reports it at `path`.
    pub fn node(&self, c: &mut Checker, path: impl fmt::Display, name: &str) -> bool {
        Self::known(c, path, name, self.nodes.contains(name), "node")
    }
    pub fn group(&self, c: &mut Checker, path: impl fmt::Display, name: &str) -> bool {
        Self::known(c, path, name, self.groups.contains(name), "group")
    }
    pub fn flow(&self, c: &mut Checker, path: impl fmt::Display, name: &str) -> bool {
        Self::known(c, path, name, self.flows.contains(name), "flow")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_float_too_long_to_read_is_written_with_its_exponent() {
        let huge = format!("must be at most {MAX_DURATION_S} s (got {})", 1e300);
        assert_eq!(
            FieldError::new("duration_s", huge).message,
            "must be at most 100000000 s (got 1e300)"
        );
        let tiny = format!("must be at least 0.001 ms (got {})", 1.5e-300);
        assert_eq!(
            FieldError::new("x", tiny).message,
            "must be at least 0.001 ms (got 1.5e-300)"
        );
        // The exponent form reads back to the same float.
        let odd = 1.234_567_890_123_456_7e-7;
        let m = FieldError::new("x", format!("got {odd}")).message;
        assert_eq!(m[4..].parse::<f64>().unwrap(), odd);
        assert!(m.len() < format!("got {odd}").len());
    }

    #[test]
    fn a_number_of_exactly_the_longest_length_stays_as_written() {
        let edge = format!("got {}", "1".repeat(LONG_NUMBER_DIGITS));
        assert_eq!(FieldError::new("x", edge.clone()).message, edge);
        let past = format!("got {}", "1".repeat(LONG_NUMBER_DIGITS + 1));
        assert_eq!(
            FieldError::new("x", past).message,
            "got 1.1111111111111111e21"
        );
    }

    /// The paths that a checker reported, in order.
    fn paths(c: &Checker) -> Vec<&str> {
        c.errs.iter().map(|e| e.path.as_str()).collect()
    }

    #[test]
    fn each_check_accepts_its_bounds_and_refuses_what_is_past_them() {
        let mut c = Checker::default();
        c.at_most("max", 5.0, 5.0);
        c.interval_ms("min", MIN_INTERVAL_MS);
        c.interval_ms("top", MAX_DELAY_MS);
        c.packet_rate("rate", MAX_RATE_PPS, "1 packet/us");
        c.window("w", &[0.0, 1e-9]);
        c.probability("p0", 0.0);
        c.probability("p1", 1.0);
        c.wire_bytes("b", 65_535, 28);
        c.wire_bytes("h", 28, 28);
        c.at_least_one("one", Some(1));
        c.at_least_one("none", None);
        assert_eq!(paths(&c), Vec::<&str>::new());

        let mut c = Checker::default();
        c.at_most("max", 5.000001, 5.0);
        c.interval_ms("short", MIN_INTERVAL_MS / 2.0);
        c.interval_ms("long", MAX_DELAY_MS * 2.0);
        c.packet_rate("rate", MAX_RATE_PPS * 1.001, "interval_ms");
        c.probability("p", 1.0000001);
        c.wire_bytes("b", 65_536, 28);
        c.wire_bytes("h", 27, 28);
        c.at_least_one("one", Some(0));
        assert_eq!(
            paths(&c),
            ["max", "short", "long", "rate", "p", "b", "h", "one"]
        );
        assert_eq!(
            c.errs[1].message,
            "must be at least 0.001 ms (1 us; got 0.0005)"
        );
        assert!(c.errs[3]
            .message
            .starts_with("interval_ms is 1.001e6 packets/s"));
    }

    #[test]
    fn a_non_positive_interval_is_reported_once() {
        // Zero and negative periods fail "positive", not also the minimum.
        let mut c = Checker::default();
        c.interval_ms("zero", 0.0);
        c.interval_ms("neg", -1.0);
        c.interval_ms("nan", f64::NAN);
        assert_eq!(paths(&c), ["zero", "neg", "nan"]);
        assert!(c
            .errs
            .iter()
            .all(|e| e.message.starts_with("must be a positive number")));
    }

    #[test]
    fn a_window_needs_two_finite_ordered_ends_from_zero() {
        let mut c = Checker::default();
        for w in [
            [f64::NAN, 5.0],
            [0.0, f64::INFINITY],
            [f64::NEG_INFINITY, 5.0],
            [-1.0, 5.0],
            [2.0, 2.0],
            [3.0, 2.0],
        ] {
            c.window(format!("{w:?}"), &w);
        }
        c.window("ok", &[2.0, 3.0]);
        assert_eq!(c.errs.len(), 6, "{:?}", paths(&c));
        assert_eq!(
            c.errs[4].message,
            "must be [start, end] with 0 <= start < end (got [2, 2])"
        );
    }

    #[test]
    fn names_are_non_empty_and_distinct() {
        let mut c = Checker::default();
        c.unique("node", "nodes", ["a", "", "b", "a", "a"].into_iter());
        assert_eq!(
            paths(&c),
            ["nodes[1].name", "nodes[3].name", "nodes[4].name"]
        );
        assert_eq!(c.errs[0].message, "node name must not be empty");
        assert_eq!(c.errs[1].message, "duplicate node name \"a\"");
    }

    #[test]
    fn a_scope_knows_its_nodes_groups_and_flows() {
        let s: crate::scenario::Scenario = serde_json::from_str(
            r#"{"duration_s": 1, "nodes": [{"name": "a"}, {"name": "b"}],
                "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 1}],
                "flows": [{"name": "f", "type": "cbr", "src": "a", "dst": "b",
                           "payload_bytes": 100, "interval_ms": 10}]}"#,
        )
        .expect("a scenario");
        let scope = Scope {
            nodes: ["a", "b"].into_iter().collect(),
            groups: ["g"].into_iter().collect(),
            flows: Flows::of(&s),
            duration_s: 1.0,
        };
        let mut c = Checker::default();
        assert!(scope.node(&mut c, "n", "a"));
        assert!(scope.group(&mut c, "g", "g"));
        assert!(scope.flow(&mut c, "f", "f"));
        assert!(c.errs.is_empty());
        assert!(!scope.node(&mut c, "n", "g"));
        assert!(!scope.group(&mut c, "g", "a"));
        assert!(!scope.flow(&mut c, "f", "a"));
        let msgs: Vec<String> = c.errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            msgs,
            [
                "n: unknown node \"g\"",
                "g: unknown group \"a\"",
                "f: unknown flow \"a\""
            ]
        );
        // Without a scenario there are no flows.
        let none = Scope {
            flows: Flows::default(),
            ..scope
        };
        assert!(!none.flow(&mut c, "f", "f"));
    }

    #[test]
    fn numbers_a_reader_can_read_stay_as_written() {
        for m in [
            "must be 0..=63 (got 64)",
            "seed 18446744073709551615 is the largest",
            "links[2].rate_bps: 0.30000000000000004 of 1.5.",
            "steps[10] starts at 2.5 s",
        ] {
            assert_eq!(FieldError::new("p", m).message, m);
        }
    }
}
