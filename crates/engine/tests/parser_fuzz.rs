//! Property-based fuzzing of the engine's scenario parser, validator and
//! builder on their own (the Python fuzzer, mediasim.validation.fuzz, goes
//! through the loader and the binding): mutated seed scenarios
//! (tests/seeds, the examples and one with every model) and raw bytes.
//!
//! Properties: nothing panics; every input ends in Ok or field errors, each
//! naming a field; an input that validation accepts also builds; and a
//! scenario that builds runs (under an event budget) without tripping an
//! engine invariant or stalling.
//!
//! In CI a short run (`PROPTEST_CASES`, default 64 per property). The
//! documented long run (docs/validation/fuzzing.md):
//! `PROPTEST_CASES=100000 cargo test --release -p mediasim-engine --test parser_fuzz`

use mediasim_engine::scenario::{check_all, parse_and_validate};
use mediasim_engine::{run, Budget, EngineError, RunOptions};
use proptest::prelude::*;
use serde_json::{Map, Number, Value};
use std::sync::OnceLock;

fn seeds() -> &'static Vec<Value> {
    static SEEDS: OnceLock<Vec<Value>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seeds");
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .expect("tests/seeds")
            .map(|e| e.expect("entry").path())
            .collect();
        paths.sort();
        let seeds: Vec<Value> = (paths.iter())
            .map(|p| {
                serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json")
            })
            .collect();
        assert!(seeds.len() >= 5);
        seeds
    })
}

/// Numbers where rules change: zero, signs, rounding to 0 ns or 0 bit/s,
/// 16- and 32-bit edges, the largest integers, overflow to infinity.
const EDGES: &[f64] = &[
    0.0,
    -0.0,
    -1.0,
    1e-300,
    1e-12,
    4e-7,
    0.4,
    0.5,
    1.0,
    2.0,
    65535.0,
    65536.0,
    4294967296.0,
    9007199254740993.0,
    1.8446744073709552e19,
    1e300,
    1.7976931348623157e308,
];

const WORDS: &[&str] = &[
    "", "a", "b", "n0", "r", "s", "hub", "cbr", "tcp", "red", "drr", "wred", "af11", "mm", "mpeg",
    "explicit", "packet", "rfc", "é", "\u{0}", "x/fb",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| Value::Number(i.into())),
        any::<u64>().prop_map(|u| Value::Number(u.into())),
        prop::sample::select(EDGES)
            .prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        (-1e7f64..1e7).prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(WORDS).prop_map(|s| Value::String(s.to_string())),
        "[a-z_]{0,12}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

#[derive(Clone, Debug)]
enum Mutation {
    Set(usize, Value),
    Delete(usize),
    Duplicate(usize),
    Add(usize, String, Value),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), value()).prop_map(|(at, v)| Mutation::Set(at, v)),
        1 => any::<usize>().prop_map(Mutation::Delete),
        1 => any::<usize>().prop_map(Mutation::Duplicate),
        1 => (any::<usize>(), key(), value()).prop_map(|(at, k, v)| Mutation::Add(at, k, v)),
    ]
}

/// Keys the parser's own messages could be confused by: the mark of a
/// path inside a model's fields (U+0001, with a length between two), and
/// serde's quoting and separators.
const ODD_KEYS: &[&str] = &[
    "\u{1}",
    "a\u{1}b",
    "\u{1}5\u{1}",
    "\u{1}4\u{1}type",
    "`",
    "x`, expected `y",
    "missing field `a`",
];

/// A key added to a table: mostly plain, sometimes one of `ODD_KEYS`.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_]{1,16}",
        1 => prop::sample::select(ODD_KEYS).prop_map(String::from),
    ]
}

/// Every place in `v` (as a path of keys and indices), depth first.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn places(v: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(Step::Key(k.clone()));
                out.push(path.clone());
                places(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(Step::Index(i));
                out.push(path.clone());
                places(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn parent<'a>(root: &'a mut Value, path: &[Step]) -> &'a mut Value {
    let mut cur = root;
    for s in path {
        cur = match s {
            Step::Key(k) => &mut cur[k.as_str()],
            Step::Index(i) => &mut cur[*i],
        };
    }
    cur
}

fn apply(doc: &mut Value, m: &Mutation) {
    let mut all = Vec::new();
    places(doc, &mut Vec::new(), &mut all);
    let at = match m {
        Mutation::Set(a, _)
        | Mutation::Delete(a)
        | Mutation::Duplicate(a)
        | Mutation::Add(a, ..) => *a,
    };
    if all.is_empty() {
        return;
    }
    let path = &all[at % all.len()];
    let (last, up) = path.split_last().expect("non-empty");
    let holder = parent(doc, up);
    match (m, last, holder) {
        (Mutation::Set(_, v), Step::Key(k), Value::Object(o)) => {
            o.insert(k.clone(), v.clone());
        }
        (Mutation::Set(_, v), Step::Index(i), Value::Array(a)) => a[*i] = v.clone(),
        (Mutation::Delete(_), Step::Key(k), Value::Object(o)) => {
            o.remove(k);
        }
        (Mutation::Delete(_), Step::Index(i), Value::Array(a)) => {
            a.remove(*i);
        }
        (Mutation::Duplicate(_), Step::Index(i), Value::Array(a)) => {
            let x = a[*i].clone();
            a.insert(*i, x);
        }
        (Mutation::Add(_, k, v), Step::Key(key), Value::Object(o)) => {
            if let Some(Value::Object(inner)) = o.get_mut(key) {
                inner.insert(k.clone(), v.clone());
            }
        }
        _ => {}
    }
}

/// The properties every input must have.
fn check(text: &str) -> Result<(), TestCaseError> {
    match check_all(text) {
        Err(errs) => {
            prop_assert!(!errs.is_empty());
            for e in &errs {
                prop_assert!(!e.message.is_empty(), "an error without a message: {e:?}");
                prop_assert!(!jargon(&e.message), "the reader's words: {e:?}");
            }
            // Validation alone may accept what building refuses only if
            // the refusal is itself a field error (never a panic).
            Ok(())
        }
        Ok(s) => {
            let opts = RunOptions {
                seed: 1,
                budget: Budget {
                    max_events: Some(20_000),
                    max_wall_s: Some(5.0),
                    max_memory_mb: None,
                },
                ..Default::default()
            };
            let mut progress = |_, _| true;
            match run(&s, &opts, &mut progress) {
                Ok(_) => Ok(()),
                Err(EngineError::Scenario(errs)) => {
                    // Only the pcap folder is checked at run time.
                    prop_assert!(errs.iter().all(|e| e.path == "measure.pcap"), "{errs:?}");
                    Ok(())
                }
                Err(e @ (EngineError::Invariant { .. } | EngineError::Stalled(..))) => {
                    Err(TestCaseError::fail(format!("{e}\n{text}")))
                }
                Err(e) => Err(TestCaseError::fail(format!("unexpected: {e}\n{text}"))),
            }
        }
    }
}

/// Whether `msg` says a wrong type in the reader's words ("invalid
/// type: sequence, expected u32") rather than the scenario's ("must be a
/// whole number ... (got a list)"), or a value outside a list of names,
/// an unknown field or an absent one as serde does ("unknown variant
/// `x`", "unknown field `x`", "missing field `x`").
fn jargon(msg: &str) -> bool {
    let rust = |rest: &str| {
        let word = rest.split([' ', ',', ')']).next().unwrap_or("");
        matches!(
            word,
            "f32"
                | "f64"
                | "u8"
                | "u16"
                | "u32"
                | "u64"
                | "usize"
                | "i8"
                | "i16"
                | "i32"
                | "i64"
                | "struct"
        ) || rest.starts_with("a sequence")
            || rest.starts_with("a map")
    };
    [
        "invalid type",
        "invalid value",
        "invalid length",
        "unknown variant",
        "unknown field `",
        "there are no fields",
        "missing field",
    ]
    .iter()
    .any(|w| msg.contains(w))
        || msg
            .match_indices("expected ")
            .any(|(i, _)| rust(&msg[i + 9..]))
}

#[test]
fn the_readers_words_are_told_apart_from_the_scenarios() {
    for said in [
        "invalid type: sequence, expected u32",
        "expected struct NodeSpec",
        "expected f64",
        "expected a sequence",
        "invalid length 3, expected fewer elements in array",
        "unknown variant `x`, expected `rfc8888` or `twcc`",
        "unknown field `x`, expected one of `a`, `b`",
        "unknown field `x`, there are no fields",
        "missing field `name`",
    ] {
        assert!(jargon(said), "{said}");
    }
    for plain in [
        "must be a whole number from 0 to 4294967295 (got a list)",
        "must be one of rfc8888, twcc (got x)",
        "unknown field; did you mean a? (expected one of a, b)",
        "must be given (this field has no default)",
        "expected `,` or `}`",
    ] {
        assert!(!jargon(plain), "{plain}");
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_scenarios_end_in_ok_or_field_errors(
        seed in any::<usize>(),
        muts in prop::collection::vec(mutation(), 1..5),
    ) {
        let mut doc = seeds()[seed % seeds().len()].clone();
        for m in &muts {
            apply(&mut doc, m);
        }
        check(&doc.to_string())?;
    }

    #[test]
    fn raw_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        prop_assert!(parse_and_validate(&text).is_err() || check(&text).is_ok());
    }

    #[test]
    fn mangled_seed_text_never_panics(seed in any::<usize>(), cut in any::<usize>(), junk in "[\\[\\]{}:,\"0-9e.-]{0,8}") {
        let text = seeds()[seed % seeds().len()].to_string();
        let at = cut % text.len();
        let at = (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let mangled = format!("{}{}{}", &text[..at], junk, &text[at..]);
        check(&mangled)?;
    }
}

#[test]
fn every_seed_builds_and_runs() {
    for s in seeds() {
        if let Err(e) = check_all(&s.to_string()) {
            panic!("a seed is a valid scenario: {e:?}");
        }
        check(&s.to_string()).expect("and runs");
    }
}
