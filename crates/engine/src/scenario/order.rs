//! Where each reported field stands in the document as written, so that
//! a scenario's errors are listed in the order a reader meets their
//! fields. (The parser reads tables with their keys sorted, and the checks
//! walk the document in their own order.)

use super::check::FieldError;
use super::parse::STOP;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// The document's shape: each table's keys in the order written.
enum Shape {
    Value,
    List(Vec<Shape>),
    Table(Vec<(String, Shape)>),
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Value)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Value)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Value)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Value)
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Value)
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Shape::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut fields = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Shape>()? {
            fields.push((key, value));
        }
        Ok(Shape::Table(fields))
    }
}

/// One step of a path: a table's key, or a list's item (None if the
/// index is no number).
enum Step<'a> {
    Key(&'a str),
    Item(Option<usize>),
}

/// `a.b[2][0].c` as the steps a, b, [2], [0], c.
fn steps(path: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let mut pieces = part.split('[');
        let name = pieces.next().unwrap_or("");
        if !name.is_empty() {
            out.push(Step::Key(name));
        }
        for item in pieces.map(|i| i.trim_end_matches(']')) {
            out.push(Step::Item(item.parse().ok()));
        }
    }
    out
}

/// Where `path` (`links[1].queue.limit_packets`) stands: each step's
/// place among its table's keys or its list's items. A field that is not
/// written (a required one left out) stands after its table's written
/// fields.
fn place(shape: &Shape, path: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = shape;
    for step in steps(path) {
        let next = match (at, step) {
            (Shape::List(items), Step::Item(Some(i))) => items.get(i).map(|item| (i, item)),
            (Shape::Table(fields), Step::Key(key)) => (fields.iter().enumerate())
                .find(|(_, (k, _))| k == key)
                .map(|(i, (_, v))| (i, v)),
            _ => None,
        };
        let Some((i, inner)) = next else {
            out.push(usize::MAX);
            return out;
        };
        out.push(i);
        at = inner;
    }
    out
}

/// `errs` in the order their fields stand in the document `text` (the
/// order found among errors at the same place). The error the checks
/// stopped at stays last. `text` that is no JSON leaves them as they are.
pub fn in_document_order(text: &str, errs: &mut [FieldError]) {
    let Ok(shape) = serde_json::from_str::<Shape>(text) else {
        return;
    };
    let sorted = match errs.split_last_mut() {
        Some((last, before)) if last.message.ends_with(STOP) => before,
        _ => errs,
    };
    let root = |p: &str| p == "(scenario)";
    sorted.sort_by_cached_key(|e| {
        if root(&e.path) {
            Vec::new()
        } else {
            place(&shape, &e.path)
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(text: &str, paths: &[&str]) -> Vec<Vec<usize>> {
        let shape: Shape = serde_json::from_str(text).expect("JSON");
        paths.iter().map(|p| place(&shape, p)).collect()
    }

    #[test]
    fn a_field_stands_where_it_is_written() {
        let text = r#"{"nodes": [1, 2], "links": [{"b": 1, "a": 2, "q": {"z": 1, "y": [[0], [1, {"k": 1}]]}}],
                       "duration_s": 5}"#;
        assert_eq!(
            places(
                text,
                &[
                    "nodes",
                    "nodes[1]",
                    "links[0].a",
                    "links[0].q.y[1][1].k",
                    "duration_s"
                ]
            ),
            [
                vec![0],
                vec![0, 1],
                vec![1, 0, 1],
                vec![1, 0, 2, 1, 1, 1, 0],
                vec![2]
            ]
        );
        // Not written: after what its table holds; a list item past the
        // end alike.
        assert_eq!(
            places(
                text,
                &["links[0].rate_bps", "links[3].a", "flows", "links[0].b.c"]
            ),
            [
                vec![1, 0, usize::MAX],
                vec![1, usize::MAX],
                vec![usize::MAX],
                vec![1, 0, 0, usize::MAX]
            ]
        );
    }

    fn error(path: &str) -> FieldError {
        FieldError::new(path, "m")
    }

    #[test]
    fn errors_are_listed_as_their_fields_are_written() {
        let text = r#"{"name": "x", "links": [{"b": 1, "a": 2}, {"a": 1}], "duration_s": -1}"#;
        let mut errs: Vec<FieldError> = [
            "duration_s",
            "links[1].b",
            "links[0].a",
            "(scenario)",
            "links[0]",
            "links[0].b",
            "name",
        ]
        .into_iter()
        .map(error)
        .collect();
        in_document_order(text, &mut errs);
        let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "(scenario)",
                "name",
                "links[0]",
                "links[0].b",
                "links[0].a",
                "links[1].b",
                "duration_s"
            ]
        );
        // The error that stopped the checks stays last; those found at the
        // same place keep their order.
        let mut errs = vec![
            error("duration_s"),
            error("name"),
            error("name"),
            error("links"),
        ];
        errs[1].message = "first".into();
        errs[3].message = format!("m{STOP}");
        in_document_order(text, &mut errs);
        let said: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "name: first",
                "name: m",
                "duration_s: m",
                &format!("links: m{STOP}")
            ]
        );
        // Any other last error takes its place.
        errs[3].message = "m".into();
        in_document_order(text, &mut errs);
        assert_eq!(errs[2].path, "links");
    }
}
