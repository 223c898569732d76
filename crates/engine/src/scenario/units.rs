//! One bound per unit, over every field of every model: a field's unit is
//! in its name (`rate_bps`, `layer_bps`, `rate_pps`, `fps`), so a rate no
//! run could carry is refused wherever it is given, before any model sizes
//! work or memory by it. Each model still checks its own fields' meaning
//! (positive, ordered); this walk only caps magnitudes.

use super::check::{Checker, MAX_RATE_PPS};
use serde_json::Value;

/// Largest rate in bit/s any field may hold: 1 Tbit/s.
pub const MAX_RATE_BPS: f64 = 1e12;

/// The bound of a field by its name's unit, and how to say it.
fn bound(key: &str) -> Option<(f64, &'static str)> {
    if key.ends_with("_bps") {
        Some((MAX_RATE_BPS, "bit/s"))
    } else if key.ends_with("_pps") || matches!(key, "fps" | "frame_rate" | "frames_per_s") {
        Some((MAX_RATE_PPS, "per second"))
    } else {
        None
    }
}

/// Checks every rate-named field of the scenario `text` (already parsed
/// once into the typed document, so well-formed).
pub fn check(text: &str, c: &mut Checker) {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        walk(&v, "", c);
    }
}

fn walk(v: &Value, path: &str, c: &mut Checker) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match bound(k) {
                    Some((max, unit)) => capped(x, &p, max, unit, c),
                    None => walk(x, &p, c),
                }
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                walk(x, &format!("{path}[{i}]"), c);
            }
        }
        _ => {}
    }
}

/// Every number in `v` (a value, or lists of them) at most `max`.
fn capped(v: &Value, path: &str, max: f64, unit: &str, c: &mut Checker) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64().filter(|x| *x > max) {
                let msg = format!(
                    "must be at most {max:e} {unit}, the bound on every such rate (got {x:e})"
                );
                c.err(path, msg);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                capped(x, &format!("{path}[{i}]"), max, unit, c);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        let mut c = Checker::default();
        check(text, &mut c);
        c.errs.into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn every_rate_named_field_is_capped_nested_and_in_lists() {
        let t = r#"{"links": [{"rate_bps": 2e12}], "flows": [{"svc": 1, "layer_bps": [[1e6, 1e100]],
                   "frame_rate": 4294967296, "rate_pps": 1e6, "fps": 30, "size_bytes": 1e15}]}"#;
        assert_eq!(
            errors(t),
            vec![
                "flows[0].frame_rate",
                "flows[0].layer_bps[0][1]",
                "links[0].rate_bps"
            ]
        );
        assert!(errors(r#"{"links": [{"rate_bps": 1e12}]}"#).is_empty());
    }
}
