//! A flow object to its typed spec in one pass. The common fields are
//! read straight from the text; only the kind's own fields wait as JSON
//! values until "type" is known (an object's fields come in any order).
//! Building a JSON tree of every flow and reading the common fields back
//! out of it was most of a 256-flow scenario's parse.
//!
//! What a flow accepts and the errors it reports (path and message) are
//! those of `FlowCommon`'s derived reader and the kind's spec: the tests
//! below hold the two readers of the common fields to the same results.

use super::{FlowCommon, FlowKind, FlowSpec};
use serde::de::{Error, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

impl<'de> Deserialize<'de> for FlowSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(FlowVisitor)
    }
}

struct FlowVisitor;

impl<'de> Visitor<'de> for FlowVisitor {
    type Value = FlowSpec;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<FlowSpec, A::Error> {
        let mut c = Common::default();
        let mut rest = Map::new();
        // A field given twice keeps its last value, as a JSON object read
        // whole does.
        while let Some(Key(k)) = m.next_key()? {
            match &*k {
                "name" => c.name = Some(m.next_value()?),
                "src" => c.src = Some(m.next_value()?),
                "dst" => c.dst = m.next_value()?,
                "group" => c.group = m.next_value()?,
                "start_s" => c.start_s = Some(m.next_value()?),
                "start_jitter_s" => c.start_jitter_s = m.next_value()?,
                "stop_s" => c.stop_s = m.next_value()?,
                "src_port" => c.src_port = m.next_value()?,
                "dst_port" => c.dst_port = m.next_value()?,
                "dscp" => c.dscp = Some(m.next_value()?),
                _ => {
                    rest.insert(k.into_owned(), m.next_value::<Value>()?);
                }
            }
        }
        let common = c.finish()?;
        let misplaced = take_misplaced(&mut rest);
        refuse_unknown(&rest)?;
        let kind = FlowKind::from_object(rest)?;
        Ok(FlowSpec {
            common,
            kind,
            misplaced,
        })
    }
}

/// The common fields as read, before defaults (`FlowCommon`'s fields: a
/// test checks the two agree).
#[derive(Default)]
struct Common {
    name: Option<String>,
    src: Option<String>,
    dst: Option<String>,
    group: Option<String>,
    start_s: Option<f64>,
    start_jitter_s: Option<f64>,
    stop_s: Option<f64>,
    src_port: Option<u16>,
    dst_port: Option<u16>,
    dscp: Option<u8>,
}

impl Common {
    /// `FlowCommon` with its defaults (`FlowCommon` states them).
    fn finish<E: Error>(self) -> Result<FlowCommon, E> {
        Ok(FlowCommon {
            name: self.name.ok_or_else(|| E::missing_field("name"))?,
            src: self.src.ok_or_else(|| E::missing_field("src"))?,
            dst: self.dst,
            group: self.group,
            start_s: self.start_s.unwrap_or(0.0),
            start_jitter_s: self.start_jitter_s,
            stop_s: self.stop_s,
            src_port: self.src_port,
            dst_port: self.dst_port,
            dscp: self.dscp.unwrap_or(0),
        })
    }
}

/// A field name, borrowed from the text when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: Error>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Each kind's own field names, by "type".
fn kind_fields() -> &'static [(&'static str, &'static [&'static str])] {
    static F: OnceLock<Vec<(&'static str, &'static [&'static str])>> = OnceLock::new();
    F.get_or_init(FlowKind::fields_by_tag)
}

/// Each kind's fields with the common ones first, by "type": all that a
/// flow of that kind takes.
fn flow_fields() -> &'static [(&'static str, Vec<&'static str>)] {
    static F: OnceLock<Vec<(&'static str, Vec<&'static str>)>> = OnceLock::new();
    F.get_or_init(|| {
        let common = crate::scenario::tagged::serde_fields::<FlowCommon>();
        (kind_fields().iter())
            .map(|(tag, own)| (*tag, common.iter().chain(own.iter()).copied().collect()))
            .collect()
    })
}

/// A field that no kind takes is refused with every field a flow of its
/// kind takes, the common ones included (the kind's reader would list its
/// own only, and the one likely meant among them).
fn refuse_unknown<E: Error>(map: &Map<String, Value>) -> Result<(), E> {
    let Some(tag) = map.get("type").and_then(Value::as_str) else {
        return Ok(()); // the kind's reader says what is wrong with the type
    };
    let Some((_, all)) = flow_fields().iter().find(|(t, _)| *t == tag) else {
        return Ok(());
    };
    match map
        .keys()
        .find(|k| *k != "type" && !all.contains(&k.as_str()))
    {
        Some(key) => Err(E::unknown_field(key, all)),
        None => Ok(()),
    }
}

/// Takes out of `map` the fields its kind does not take but another kind
/// does; returns them with the message validation reports for each (all at
/// once, with the other problems, rather than "unknown field").
fn take_misplaced(map: &mut Map<String, Value>) -> Vec<(String, String)> {
    let Some(tag) = map.get("type").and_then(Value::as_str).map(str::to_string) else {
        return Vec::new();
    };
    let fields = kind_fields();
    let Some((_, own)) = fields.iter().find(|(t, _)| *t == tag) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let keys: Vec<String> = map
        .keys()
        .filter(|k| *k != "type" && !own.contains(&k.as_str()))
        .cloned()
        .collect();
    for key in keys {
        let users: Vec<&str> = (fields.iter())
            .filter(|(_, f)| f.contains(&key.as_str()))
            .map(|(t, _)| *t)
            .collect();
        if !users.is_empty() {
            map.remove(&key);
            let msg = format!(
                "not used by {tag} flows (a field of {} flows)",
                users.join(", ")
            );
            out.push((key, msg));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::tagged;

    /// `Common`'s fields.
    const FIELDS: &[&str] = &[
        "name",
        "src",
        "dst",
        "group",
        "start_s",
        "start_jitter_s",
        "stop_s",
        "src_port",
        "dst_port",
        "dscp",
    ];

    /// The common fields read here and by `FlowCommon`'s derived reader,
    /// and the error of the first, for an object of common fields only.
    fn both(v: Value) -> (Result<String, String>, Result<String, String>) {
        let mut with_kind = v.clone();
        if let Some(o) = with_kind.as_object_mut() {
            o.insert("type".into(), "cbr".into());
            o.insert("payload_bytes".into(), 100.into());
            o.insert("rate_bps".into(), 1e4.into());
        }
        let text = with_kind.to_string();
        let fast = serde_json::from_str::<FlowSpec>(&text)
            .map(|f| format!("{:?}", f.common))
            .map_err(|e| e.to_string());
        let derived = serde_json::from_value::<FlowCommon>(v)
            .map(|c| format!("{c:?}"))
            .map_err(|e| e.to_string());
        (fast, derived)
    }

    fn strip_position(e: String) -> String {
        e.rfind(" at line ")
            .map_or(e.clone(), |i| e[..i].to_string())
    }

    #[test]
    fn the_common_fields_read_as_the_derived_reader_reads_them() {
        use serde_json::json;
        let full = json!({"name": "f", "src": "a", "dst": "b", "group": null,
            "start_s": 1.5, "start_jitter_s": 0.25, "stop_s": 9, "src_port": 5004,
            "dst_port": 5006, "dscp": 46});
        let cases = [
            full.clone(),
            json!({"name": "f", "src": "a"}),
            json!({"src": "a", "name": "f", "group": "g"}),
            json!({"name": "f"}),
            json!({"src": "a"}),
            json!({"name": 5, "src": "a"}),
            json!({"name": "f", "src": "a", "dscp": 300}),
            json!({"name": "f", "src": "a", "dscp": -1}),
            json!({"name": "f", "src": "a", "start_s": null}),
            json!({"name": "f", "src": "a", "start_s": "x"}),
            json!({"name": "f", "src": "a", "stop_s": null}),
            json!({"name": "f", "src": "a", "src_port": 70000}),
            json!({"name": "f", "src": ["a"]}),
        ];
        for v in cases {
            let (fast, derived) = both(v.clone());
            let fast = fast.map_err(strip_position);
            assert_eq!(fast, derived, "{v}");
        }
    }

    #[test]
    fn a_field_given_twice_keeps_its_last_value() {
        let text = r#"{"name": "f", "src": "a", "name": "g", "dst": "b", "dst": null,
            "type": "cbr", "payload_bytes": 100, "rate_bps": 1e4}"#;
        let f: FlowSpec = serde_json::from_str(text).expect("valid");
        assert_eq!(f.common.name, "g");
        assert_eq!(f.common.dst, None);
    }

    #[test]
    fn the_common_fields_are_flow_commons() {
        let mut declared = tagged::field_names::<FlowCommon>();
        declared.sort();
        let mut here: Vec<String> = FIELDS.iter().map(|s| s.to_string()).collect();
        here.sort();
        assert_eq!(here, declared);
        assert_eq!(tagged::serde_fields::<FlowCommon>(), FIELDS);
    }

    /// The fields serde reads (used for the misplaced-field hints) are
    /// those the schema documents, for every kind.
    #[test]
    fn each_kinds_fields_are_its_schemas() {
        let schema = FlowKind::schema_fields_by_tag();
        for ((tag, fields), (stag, sfields)) in kind_fields().iter().zip(schema) {
            assert_eq!(*tag, stag);
            let mut a: Vec<String> = fields.iter().map(|s| s.to_string()).collect();
            let mut b = sfields;
            a.sort();
            b.sort();
            assert_eq!(a, b, "{tag}");
        }
    }
}
