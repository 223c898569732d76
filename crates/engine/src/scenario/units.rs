//! One bound per unit, over every field of every model: a field's unit is
//! in its name (`rate_bps`, `layer_bps`, `rate_pps`, `fps`), so a rate no
//! run could carry is refused wherever it is given, before any model sizes
//! work or memory by it. Each model still checks its own fields' meaning
//! (positive, ordered); this walk only caps magnitudes.

use super::check::{Checker, MAX_RATE_PPS};

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
/// once into the typed document, so well-formed). The text is walked as
/// it is read, without building a tree of it (a tree of a scenario with
/// hundreds of flows doubled the time validation takes).
pub fn check(text: &str, c: &mut Checker) {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut walk = Walk {
        path: Vec::new(),
        cap: None,
        c,
    };
    let _ = serde::de::DeserializeSeed::deserialize(&mut walk, &mut de);
}

/// A step of a field's path: a key or a list index.
enum Step<'de> {
    Key(std::borrow::Cow<'de, str>),
    Item(usize),
}

struct Walk<'c, 'de> {
    path: Vec<Step<'de>>,
    /// Inside a rate-named field: its bound and unit.
    cap: Option<(f64, &'static str)>,
    c: &'c mut Checker,
}

impl Walk<'_, '_> {
    fn path(&self) -> String {
        let mut out = String::new();
        for s in &self.path {
            match s {
                Step::Key(k) if out.is_empty() => out.push_str(k),
                Step::Key(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                Step::Item(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn number(&mut self, x: f64) {
        if let Some((max, unit)) = self.cap.filter(|(max, _)| x > *max) {
            let msg =
                format!("must be at most {max:e} {unit}, the bound on every such rate (got {x:e})");
            let p = self.path();
            self.c.err(p, msg);
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut Walk<'_, 'de> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut Walk<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, x: u64) -> Result<(), E> {
        self.number(x as f64);
        Ok(())
    }
    fn visit_i64<E>(self, x: i64) -> Result<(), E> {
        self.number(x as f64);
        Ok(())
    }
    fn visit_f64<E>(self, x: f64) -> Result<(), E> {
        self.number(x);
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            self.path.push(Step::Item(i));
            let more = seq.next_element_seed(&mut *self)?;
            self.path.pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let outer = self.cap;
            if outer.is_none() {
                self.cap = bound(&key);
            }
            self.path.push(Step::Key(key));
            map.next_value_seed(&mut *self)?;
            self.path.pop();
            self.cap = outer;
        }
        Ok(())
    }
}

/// A key, borrowed from the text when it has no escapes.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V)
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
                "links[0].rate_bps",
                "flows[0].layer_bps[0][1]",
                "flows[0].frame_rate"
            ]
        );
        assert!(errors(r#"{"links": [{"rate_bps": 1e12}]}"#).is_empty());
    }
}
