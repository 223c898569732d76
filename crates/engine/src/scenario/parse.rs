//! Scenario text to the typed document. Structural errors (wrong type,
//! unknown or missing field) name their path, inside model families too.

use super::check::FieldError;
use super::document::Scenario;
use super::strict::Strict;
use super::tagged::{join_path, PATH_MARK};
use serde::Deserialize;

/// Parses a scenario from JSON text. A valid document is parsed once,
/// without tracking paths (that tracking was a sixth of a large
/// scenario's set-up); a faulty one is parsed again with it, so that its
/// error names the field.
pub fn parse_json(text: &str) -> Result<Scenario, Vec<FieldError>> {
    let de = &mut serde_json::Deserializer::from_str(text);
    match Scenario::deserialize(Strict(&mut *de)).and_then(|s| de.end().map(|()| s)) {
        Ok(s) => Ok(s),
        Err(_) => parse_tracked(text),
    }
}

/// Parses one part of a scenario (a flow's own fields, say) from JSON
/// text; a structural error is named as in a whole scenario, under
/// `prefix`.
pub fn parse_part<T: serde::de::DeserializeOwned>(
    text: &str,
    prefix: &str,
) -> Result<T, FieldError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(Strict(de)).map_err(|e| {
        let FieldError { path, message } = worded(field_error(&e));
        let path = match path.as_str() {
            "(scenario)" => prefix.to_string(),
            _ => format!("{prefix}.{path}"),
        };
        FieldError { path, message }
    })
}

/// Each scale's (payload, wire) rate of a media-scaling flow's own fields
/// given as JSON (`app::scaling::checked_scale_rates`); a field of the
/// wrong type is named at `flow.<path>` as in a scenario.
pub fn scale_rates_json(text: &str) -> Result<Vec<(f64, f64)>, String> {
    let spec: crate::app::scaling::MediaScalingSpec =
        parse_part(text, "flow").map_err(|e| e.to_string())?;
    crate::app::scaling::checked_scale_rates(&spec)
}

fn parse_tracked(text: &str) -> Result<Scenario, Vec<FieldError>> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(Strict(de)).map_err(|e| vec![worded(field_error(&e))])
}

/// serde's error at its path, its message as serde words it (the
/// recovery in `parse_all` tells errors apart by that wording; `worded`
/// then says it in the scenario's).
fn field_error<E: std::fmt::Display>(e: &serde_path_to_error::Error<E>) -> FieldError {
    let path = e.path().to_string();
    let msg = e.inner().to_string();
    // Line/column refer to the JSON handed over, not the user's file.
    let msg = match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    // After `resolve`: a nested document's message starts with its path.
    let (path, message) = resolve(path, msg);
    let path = if path.is_empty() || path == "." {
        "(scenario)".to_string()
    } else {
        path
    };
    FieldError { path, message }
}

/// A structural error in the scenario's words, named at the field it is
/// about: a required field that is absent at its own path ("must be
/// given"), a field not known there with the fields that are (and the
/// one most likely meant), serde's other messages as `in_words` says them.
fn worded(e: FieldError) -> FieldError {
    if let Some(field) = missing_field(&e) {
        // A model's `type` lists the types allowed.
        let allowed = (e.message.split_once("`, expected ")).and_then(|(_, x)| names_listed(x));
        let message = match allowed.as_deref() {
            Some([one]) => format!("must be given ({one})"),
            Some(names) => format!("must be given (one of {})", names.join(", ")),
            None => "must be given (this field has no default)".to_string(),
        };
        return FieldError {
            path: field,
            message,
        };
    }
    if let Some((name, message)) = unknown_field(&e.message) {
        // The path may end at the unknown field or at its container.
        let path = match split_last(&e.path) {
            Some((_, key)) if key == name => e.path,
            _ => child(&e.path, &name),
        };
        return FieldError { path, message };
    }
    let message = in_words(&e.message).unwrap_or(e.message);
    FieldError { message, ..e }
}

/// `field` below `path` ("(scenario)" for the top level).
fn child(path: &str, field: &str) -> String {
    if path == "(scenario)" {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

/// serde's message for a field not known where it is ("unknown field
/// `rate`, expected one of `a`, `rate_bps`") as the field's name and the
/// message in words: "unknown field; did you mean rate_bps? (expected
/// one of a, rate_bps)". None for any other message.
fn unknown_field(msg: &str) -> Option<(String, String)> {
    let rest = msg.strip_prefix("unknown field `")?;
    if let Some(name) = rest.strip_suffix("`, there are no fields") {
        return Some((
            name.into(),
            "unknown field (this table takes no fields)".into(),
        ));
    }
    // The name is the user's and may hold anything; the fields never hold "`, expected ".
    let (name, expected) = rest.rsplit_once("`, expected ")?;
    let fields = names_listed(expected)?;
    let allowed = match fields.as_slice() {
        [one] => format!("expected {one}"),
        _ => format!("expected one of {}", fields.join(", ")),
    };
    let message = match closest(name, &fields) {
        Some(meant) => format!("unknown field; did you mean {meant}? ({allowed})"),
        None => format!("unknown field ({allowed})"),
    };
    Some((name.into(), message))
}

/// The field a misspelt `name` most likely meant: one that is `name` with
/// a unit added (`delay` for `delay_ms`), else the most alike of those at
/// most 40% of their length in edits away (a letter swapped counts once).
fn closest<'a>(name: &str, fields: &[&'a str]) -> Option<&'a str> {
    let unit_added = |f: &&&str| f.strip_prefix(name).is_some_and(|r| r.starts_with('_'));
    if let Some(f) = fields.iter().find(unit_added) {
        return Some(f);
    }
    let len = |s: &str| s.chars().count();
    // A name over 5/3 of a field's length is more than 40% of its own
    // length in edits from it: not compared (the comparison's table is
    // sized by the name, which is the user's).
    let near = |f: &&&str| 3 * len(name) <= 5 * len(f);
    let alike = |f: &&str| strsim::normalized_damerau_levenshtein(name, f);
    // The first listed of the most alike (`max_by` keeps the last of equals).
    (fields.iter().rev())
        .filter(near)
        .map(|f| (alike(f), *f))
        .filter(|(a, _)| *a >= 0.6)
        .max_by(|x, y| x.0.total_cmp(&y.0))
        .map(|(_, f)| f)
}

/// The names serde lists after "expected": one as `a`, two as `a` or
/// `b`, more as one of `a`, `b`, `c`.
fn names_listed(expected: &str) -> Option<Vec<&str>> {
    let names: Vec<&str> = match expected.strip_prefix("one of ") {
        Some(list) => list.split(", ").collect(),
        None => expected.split(" or ").collect(),
    };
    names
        .iter()
        .map(|n| n.strip_prefix('`').and_then(|n| n.strip_suffix('`')))
        .collect()
}

/// serde's message in the scenario's words; None for a message that
/// needs none (the scenario's own checks) or that `worded` says itself.
fn in_words(msg: &str) -> Option<String> {
    non_finite(msg)
        .or_else(|| unknown_value(msg))
        .or_else(|| plain_words(msg))
}

/// JSON has no infinity or NaN, so the binding sends them as the text
/// Python writes ("inf", "-inf", "nan"), which fails as a string where a
/// number was expected: said as what the value is.
fn non_finite(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("invalid type: string \"")?;
    let (word, _expected) = rest.split_once("\", expected ")?;
    matches!(word, "inf" | "-inf" | "nan").then(|| format!("must be a finite number (got {word})"))
}

/// serde's wrong-type and wrong-value messages ("invalid type: sequence,
/// expected u32") in the scenario's own words: what the field must be and
/// what it got ("must be a whole number from 0 to 4294967295 (got a
/// list)"). None for any other message.
fn plain_words(msg: &str) -> Option<String> {
    if let Some(rest) = msg.strip_prefix("invalid length ") {
        let (got, expected) = rest.split_once(", expected ")?;
        let want = match expected.strip_prefix("an array of length ") {
            Some(n) => format!("a list of {n} values"),
            // serde_json's word for a fixed-length list given more.
            None if expected == "fewer elements in array" => "a list of fewer values".into(),
            None => return None,
        };
        return Some(format!("must be {want} (got {got})"));
    }
    let rest =
        (msg.strip_prefix("invalid type: ")).or_else(|| msg.strip_prefix("invalid value: "))?;
    // A text value may hold ", expected "; the expected kinds never do.
    let (got, expected) = rest.rsplit_once(", expected ")?;
    Some(format!(
        "must be {} (got {})",
        expected_in_words(expected),
        got_in_words(got)
    ))
}

/// serde's message for a value outside a list of names (a model's `type`,
/// a mode: "unknown variant `blue`, expected one of `red`, `pie`") in the
/// scenario's words: "must be one of red, pie (got blue)", with the name
/// most likely meant ("(got rde; did you mean red?)"). None for any other
/// message.
fn unknown_value(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("unknown variant `")?;
    // The value is the user's and may hold anything; the names never hold "`, expected ".
    let (got, expected) = rest.rsplit_once("`, expected ")?;
    let names = names_listed(expected)?;
    let got = match closest(got, &names) {
        Some(meant) => format!("{got}; did you mean {meant}?"),
        None => got.to_string(),
    };
    Some(match names.as_slice() {
        [one] => format!("must be {one} (got {got})"),
        _ => format!("must be one of {} (got {got})", names.join(", ")),
    })
}

/// What serde says a field expects, in words.
fn expected_in_words(expected: &str) -> String {
    let whole = |max: u64| format!("a whole number from 0 to {max}");
    match expected {
        "f64" | "f32" => "a number".into(),
        "u8" => whole(u8::MAX.into()),
        "u16" => whole(u16::MAX.into()),
        "u32" => whole(u32::MAX.into()),
        "u64" | "usize" => "a whole number, 0 or more".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        "a boolean" => "true or false".into(),
        "a sequence" => "a list".into(),
        "a map" | "map" => "a table of fields".into(),
        "string or map" => "a string or a table of fields".into(),
        e if e.starts_with("struct ") => "a table of fields".into(),
        e => match e.strip_prefix("an array of length ") {
            Some(n) => format!("a list of {n} values"),
            None => e.into(),
        },
    }
}

/// The value serde says it got ("integer `5`", "sequence"), in words.
fn got_in_words(got: &str) -> String {
    let quoted = |prefix: &str| {
        (got.strip_prefix(prefix))
            .and_then(|r| r.strip_prefix('`'))
            .and_then(|r| r.strip_suffix('`'))
            .map(str::to_string)
    };
    match got {
        "sequence" => "a list".into(),
        "map" => "a table".into(),
        g => (g.strip_prefix("string ").map(str::to_string))
            .or_else(|| quoted("integer "))
            .or_else(|| quoted("floating point "))
            .or_else(|| quoted("boolean "))
            .unwrap_or_else(|| g.into()),
    }
}

/// Said of the error the checks stopped at, the last one reported.
pub(super) const STOP: &str = " (the checks stop here: fix this first to see what else is wrong)";

/// Most structural errors one document reports before giving up.
const MAX_STRUCTURAL: usize = 50;

/// A document with structural errors: every one of them, found by
/// parsing again with each faulty field set aside (removed; a required one
/// then gets a scalar stand-in of the first kind that parses, as does a
/// required field that was absent), and the document as parsed with those
/// fields set aside (None if that is not possible), with the paths set
/// aside, so that the semantic checks can run on the rest without
/// reporting the stand-ins.
pub fn parse_all(text: &str) -> (Option<Scenario>, Vec<FieldError>, Vec<String>) {
    let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return (
            None,
            parse_tracked(text).err().unwrap_or_default(),
            Vec::new(),
        );
    };
    let (mut errs, mut aside) = (Vec::new(), Vec::new());
    for _ in 0..4 * MAX_STRUCTURAL {
        let e = match serde_path_to_error::deserialize::<_, Scenario>(Strict(&doc)) {
            Ok(s) => return (Some(s), errs, aside),
            Err(e) => field_error(&e),
        };
        let field = missing_field(&e);
        // A field set aside has its own error already.
        let set = field.as_ref().is_some_and(|f| aside.contains(f));
        if set || errs.len() < MAX_STRUCTURAL {
            if let Some(path) = recover(&mut doc, &e, field.as_deref()) {
                if !set {
                    errs.push(worded(e));
                }
                if !aside.contains(&path) {
                    aside.push(path);
                }
                continue;
            }
        }
        // Nothing gets past it: the checks stop at the field's own error
        // (a model set aside whole has its error at its `type`).
        if let Some(field) = field.filter(|_| set) {
            let own = |x: &FieldError| x.path == field || under(&x.path, &field);
            if let Some(i) = errs.iter().position(own) {
                // Last, as the error where the checks stopped.
                let mut own = errs.remove(i);
                own.message += STOP;
                errs.push(own);
                return (None, errs, aside);
            }
        }
        let e = worded(e);
        errs.push(FieldError {
            message: e.message + STOP,
            ..e
        });
        return (None, errs, aside);
    }
    (None, errs, aside)
}

/// Sets aside what `e` is about so that parsing can go past it: a model
/// whose type cannot be read, whole; an absent field (`field`), with a
/// stand-in; any other field, removed; failing those, the innermost model
/// holding it, whole. The path set aside, or None if nothing gets past.
fn recover(doc: &mut serde_json::Value, e: &FieldError, field: Option<&str>) -> Option<String> {
    if let Some(model) = bad_model_type(e).filter(|m| set_model_aside(doc, m)) {
        return Some(model);
    }
    let own = match field {
        Some(f) => stand_in(doc, e, f).then(|| f.to_string()),
        None => set_aside(doc, e),
    };
    own.or_else(|| {
        let at = field.unwrap_or(&e.path);
        (models_around(doc, at).into_iter()).find(|m| set_model_aside(doc, m))
    })
}

/// The models (tables with a `type`) that hold `path`, innermost first,
/// `path` itself included.
fn models_around(doc: &mut serde_json::Value, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut p = path.to_string();
    loop {
        let table = pointer(doc, &p).and_then(|v| v.as_object());
        if table.is_some_and(|t| t.contains_key("type")) {
            out.push(p.clone());
        }
        match p.rfind(['.', '[']) {
            Some(i) => p.truncate(i),
            None => return out,
        }
    }
}

/// The model (a table chosen by its `type`) whose `type` is missing,
/// unknown or not a string (the errors a `type` can have): its path
/// (`links[0].queue`, `flows[2]`).
fn bad_model_type(e: &FieldError) -> Option<String> {
    let type_path = missing_field(e).unwrap_or_else(|| e.path.clone());
    type_path.strip_suffix(".type").map(str::to_string)
}

/// Whether `path` lies below `model`.
fn under(path: &str, model: &str) -> bool {
    (path.strip_prefix(model)).is_some_and(|r| r.starts_with('.') || r.starts_with('['))
}

/// Most parses one model's recovery may take (a document's parse costs
/// up to milliseconds): enough to drop 31 fields a stand-in type does not
/// take.
const MAX_MODEL_TRIES: usize = 32;

/// A model whose type cannot be read is set aside whole, so that the
/// checks go on past it: its table stays in place with a type that
/// parses (the one most like the type given first; fields that type does
/// not take, or that it rejects, dropped one at a time), or, if none does,
/// is removed (its default then takes its place). Nothing below it is
/// reported (`validate::parse_and_validate`). False, the document as it
/// was, if neither gets past it.
fn set_model_aside(doc: &mut serde_json::Value, model: &str) -> bool {
    use serde_json::Value;
    let Some(given) = pointer(doc, model).and_then(|v| v.as_object().cloned()) else {
        return false;
    };
    let tags = types_allowed(doc, model, &given);
    let past = |doc: &Value| match serde_path_to_error::deserialize::<_, Scenario>(Strict(doc)) {
        Ok(_) => None,
        Err(n) => {
            // At the field itself, absent or unknown.
            let p = worded(field_error(&n)).path;
            (p == model || under(&p, model)).then_some(p)
        }
    };
    let mut tries = 0;
    for tag in &tags {
        let mut table = given.clone();
        table.insert("type".into(), Value::from(tag.as_str()));
        while tries < MAX_MODEL_TRIES {
            tries += 1;
            *pointer(doc, model).expect("the model is in place") = Value::Object(table.clone());
            let Some(at) = past(doc) else {
                return true;
            };
            // The field of the model the error is in, if it can go.
            let rest = at.strip_prefix(model).unwrap_or("");
            let rest = rest.strip_prefix('.').unwrap_or(rest);
            let key = rest.split(['.', '[']).next().unwrap_or("");
            if key == "type" || table.remove(key).is_none() {
                break;
            }
        }
    }
    *pointer(doc, model).expect("the model is in place") = Value::Object(given.clone());
    if let Some((parent, key)) = split_last(model) {
        if remove(doc, &parent, &key) && past(doc).is_none() {
            return true;
        }
        if let Some(o) = pointer(doc, &parent).and_then(Value::as_object_mut) {
            o.insert(key, Value::Object(given));
        }
    }
    false
}

/// The types a model at `model` may take (as its missing `type` lists
/// them), the one most like the type `given` has first.
fn types_allowed(
    doc: &mut serde_json::Value,
    model: &str,
    given: &serde_json::Map<String, serde_json::Value>,
) -> Vec<String> {
    let mut untyped = given.clone();
    untyped.remove("type");
    *pointer(doc, model).expect("the model is in place") = serde_json::Value::Object(untyped);
    let e = serde_path_to_error::deserialize::<_, Scenario>(Strict(&*doc)).err();
    *pointer(doc, model).expect("the model is in place") = serde_json::Value::Object(given.clone());
    let Some(e) = e.map(|e| field_error(&e)) else {
        return Vec::new();
    };
    if missing_field(&e).as_deref() != Some(&format!("{model}.type")) {
        return Vec::new();
    }
    let listed = (e.message.split_once("`, expected ")).and_then(|(_, x)| names_listed(x));
    let mut tags: Vec<String> = listed
        .unwrap_or_default()
        .into_iter()
        .map(String::from)
        .collect();
    let typed = given.get("type").and_then(serde_json::Value::as_str);
    let names: Vec<&str> = tags.iter().map(String::as_str).collect();
    if let Some(i) = typed
        .and_then(|t| closest(t, &names))
        .and_then(|m| names.iter().position(|n| *n == m))
    {
        let meant = tags.remove(i);
        tags.insert(0, meant);
    }
    tags
}

/// For serde's "missing field `k`" at `P` (a model's `type` adds the
/// types allowed), the path of the field, `P.k`.
fn missing_field(e: &FieldError) -> Option<String> {
    let rest = e.message.strip_prefix("missing field `")?;
    let (name, _) = rest.split_once('`')?;
    Some(child(&e.path, name))
}

/// Removes the field of `e` from `doc`; its path, or None if it cannot be.
fn set_aside(doc: &mut serde_json::Value, e: &FieldError) -> Option<String> {
    if e.message.starts_with("missing field") {
        return None; // a required field absent: nothing to set aside
    }
    // An unknown field's path may end at its container or at itself.
    let unknown = (e.message.strip_prefix("unknown field `"))
        .and_then(|r| r.split_once('`'))
        .map(|(name, _)| name);
    let (parent, key) = match (unknown, split_last(&e.path)) {
        (Some(name), Some((parent, key))) if key == name => (parent, key),
        (Some(name), _) => (e.path.clone(), name.to_string()),
        (None, Some(pk)) => pk,
        (None, None) => return None,
    };
    if !remove(doc, &parent, &key) {
        return None;
    }
    Some(if parent.is_empty() || parent == "(scenario)" {
        key
    } else {
        format!("{parent}.{key}")
    })
}

/// A required field that was set aside gets the first stand-in that lets
/// parsing go past it; false if none does.
fn stand_in(doc: &mut serde_json::Value, e: &FieldError, field: &str) -> bool {
    use serde_json::Value;
    let (parent, key) = split_last(field).unwrap_or_else(|| (String::new(), field.to_string()));
    // Scalars only: an empty list or table in place of a required one
    // (the nodes, a session's members) would make the checks of the rest
    // report its absence everywhere.
    let stand_ins = [
        Value::from(1),
        Value::from(1.5),
        Value::from("x"),
        Value::Bool(false),
    ];
    for v in stand_ins {
        match pointer(doc, &parent).and_then(Value::as_object_mut) {
            Some(obj) => obj.insert(key.clone(), v),
            None => return false,
        };
        let next = serde_path_to_error::deserialize::<_, Scenario>(Strict(&*doc)).err();
        let same = next.is_some_and(|n| {
            let n = field_error(&n);
            n == *e || n.path == field || n.path.starts_with(&format!("{field}."))
        });
        if !same {
            return true;
        }
    }
    remove(doc, &parent, &key);
    false
}

/// `a.b[2].c` as (`a.b[2]`, `c`).
fn split_last(path: &str) -> Option<(String, String)> {
    if path == "(scenario)" {
        return None;
    }
    let Some(i) = path.rfind(['.', '[']) else {
        return Some((String::new(), path.to_string())); // a top-level field
    };
    let (head, tail) = path.split_at(i);
    if tail.starts_with('[') {
        return None; // a list item: not set aside (indices must stay)
    }
    Some((head.to_string(), tail[1..].to_string()))
}

fn remove(doc: &mut serde_json::Value, parent: &str, key: &str) -> bool {
    (pointer(doc, parent).and_then(serde_json::Value::as_object_mut))
        .is_some_and(|o| o.remove(key).is_some())
}

/// The value at a path such as `links[0].queue`, if there is one.
fn pointer<'a>(doc: &'a mut serde_json::Value, path: &str) -> Option<&'a mut serde_json::Value> {
    let mut cur = doc;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, rest) = part.split_once('[').unwrap_or((part, ""));
        if !name.is_empty() {
            cur = cur.get_mut(name)?;
        }
        for idx in rest.split('[').filter(|x| !x.is_empty()) {
            cur = cur.get_mut(idx.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(cur)
}

/// Moves the paths that model families put at the start of a message
/// (see [`super::tagged::nested`]) onto the path.
fn resolve(mut path: String, mut msg: String) -> (String, String) {
    while let Some(rest) = msg.strip_prefix(PATH_MARK) {
        let Some((len, rest)) = rest.split_once(PATH_MARK) else {
            break;
        };
        let split = |n: usize| Some((rest.get(..n)?, rest.get(n..)?));
        let Some((inner, m)) = len.parse().ok().and_then(split) else {
            break;
        };
        path = join_path(&path, inner);
        msg = m.to_string();
    }
    (path, msg)
}

#[cfg(test)]
mod tests {
    /// The media-scaling rates' JSON entry point: the flow's checks, and
    /// a value of the wrong type named at its field in the scenario's
    /// words, as in a whole scenario.
    #[test]
    fn scale_rates_json_names_each_field_as_a_scenario_does() {
        let rates = super::scale_rates_json(r#"{"app": "mm"}"#).unwrap();
        assert_eq!(rates.len(), 5);
        for (json, said) in [
            (
                r#"{"app": "mm", "rates_bps": [1e5, "x"]}"#,
                r#"flow.rates_bps[1]: must be a number (got "x")"#,
            ),
            (
                r#"{"app": "mpeg", "gop": 5}"#,
                "flow.gop: must be a string (got 5)",
            ),
            (r#"[1]"#, "flow: must be a table of fields (got a list)"),
            (
                r#"{"app": "mm", "rates_bps": [1e5]}"#,
                "flow.rates_bps: give one rate per scale 0-4 (got 1)",
            ),
        ] {
            assert_eq!(super::scale_rates_json(json).unwrap_err(), said);
        }
        assert!(super::scale_rates_json(r#"{"app": "vp9"}"#).is_err());
    }

    use super::*;

    #[test]
    fn nested_paths_are_joined_in_order() {
        let marked = |path: &str, msg: &str| {
            super::super::tagged::nested::<serde_json::Error>(path, msg).to_string()
        };
        let m = marked("queue", &marked("[2].x", "bad"));
        assert_eq!(
            resolve("links[0]".into(), m),
            ("links[0].queue[2].x".to_string(), "bad".to_string())
        );
        assert_eq!(
            resolve(".".into(), marked("a", "m")),
            ("a".to_string(), "m".to_string())
        );
        // A key holding the mark (the user's) stays whole.
        let key = format!("a{PATH_MARK}b{PATH_MARK}");
        assert_eq!(
            resolve("f".into(), marked(&key, &format!("{PATH_MARK}m"))),
            (format!("f.{key}"), format!("{PATH_MARK}m"))
        );
        // A mark without a length, or a length past the end, is left as it is.
        for m in [
            format!("{PATH_MARK}x{PATH_MARK}ab"),
            format!("{PATH_MARK}9{PATH_MARK}ab"),
        ] {
            assert_eq!(resolve("f".into(), m.clone()), ("f".to_string(), m));
        }
    }

    /// Each of serde's `messages` in words as given; each of `others` left
    /// as it is.
    fn said_in_words(messages: &[(&str, &str)], others: &[&str]) {
        for (serde, words) in messages {
            assert_eq!(in_words(serde).as_deref(), Some(*words), "{serde}");
        }
        for other in others {
            assert_eq!(in_words(other), None, "{other}");
        }
    }

    /// serde's messages of a wrong type, value or length, in words; the
    /// scenario's own and serde's field messages are left as they are.
    #[test]
    fn serde_type_messages_are_said_in_words() {
        let messages = [
            (
                "invalid type: sequence, expected u32",
                "must be a whole number from 0 to 4294967295 (got a list)",
            ),
            (
                "invalid value: integer `-1`, expected u8",
                "must be a whole number from 0 to 255 (got -1)",
            ),
            (
                "invalid value: integer `-1`, expected u16",
                "must be a whole number from 0 to 65535 (got -1)",
            ),
            (
                "invalid type: floating point `1.5`, expected u64",
                "must be a whole number, 0 or more (got 1.5)",
            ),
            (
                "invalid type: floating point `1.5`, expected usize",
                "must be a whole number, 0 or more (got 1.5)",
            ),
            (
                "invalid type: boolean `true`, expected i64",
                "must be a whole number (got true)",
            ),
            (
                "invalid type: map, expected f64",
                "must be a number (got a table)",
            ),
            (
                "invalid type: null, expected f32",
                "must be a number (got null)",
            ),
            (
                "invalid type: integer `5`, expected a boolean",
                "must be true or false (got 5)",
            ),
            (
                "invalid type: string \"x\", expected a sequence",
                "must be a list (got \"x\")",
            ),
            (
                "invalid type: integer `5`, expected a map",
                "must be a table of fields (got 5)",
            ),
            (
                "invalid type: integer `5`, expected map",
                "must be a table of fields (got 5)",
            ),
            (
                "invalid type: sequence, expected struct NodeSpec",
                "must be a table of fields (got a list)",
            ),
            (
                "invalid type: sequence, expected string or map",
                "must be a string or a table of fields (got a list)",
            ),
            (
                "invalid type: integer `5`, expected an array of length 2",
                "must be a list of 2 values (got 5)",
            ),
            (
                "invalid length 1, expected an array of length 2",
                "must be a list of 2 values (got 1)",
            ),
            (
                "invalid length 3, expected fewer elements in array",
                "must be a list of fewer values (got 3)",
            ),
            (
                "invalid type: integer `5`, expected a string",
                "must be a string (got 5)",
            ),
            // A text value holding the separator: the expected kind is after the last.
            (
                "invalid type: string \"a, expected b\", expected f64",
                "must be a number (got \"a, expected b\")",
            ),
            (
                "invalid type: unit value, expected a number, a list of steps",
                "must be a number, a list of steps (got unit value)",
            ),
        ];
        let others = [
            "missing field `name`",
            "unknown field `x`, expected `a` or `b`",
            "invalid length 3, expected struct X with 2 elements",
            "invalid type: no separator",
            "must be positive (got -1)",
        ];
        said_in_words(&messages, &others);
    }

    /// serde's message for a value outside a list of names (one, two or
    /// more names), in words.
    #[test]
    fn unknown_values_name_the_values_allowed() {
        let messages = [
            (
                "unknown variant `blue`, expected one of `red`, `pie`, `codel`",
                "must be one of red, pie, codel (got blue)",
            ),
            (
                "unknown variant `cubic`, expected `aimd` or `reno`",
                "must be one of aimd, reno (got cubic)",
            ),
            (
                "unknown variant `x`, expected `lose`",
                "must be lose (got x)",
            ),
            // The name most likely meant, as for a field.
            (
                "unknown variant `droptale`, expected one of `droptail`, `drophead`",
                "must be one of droptail, drophead (got droptale; did you mean droptail?)",
            ),
            (
                "unknown variant `twc`, expected `rfc8888` or `twcc`",
                "must be one of rfc8888, twcc (got twc; did you mean twcc?)",
            ),
            // The user's value may hold the separator: the names are after the last.
            (
                "unknown variant `a`, expected b`, expected one of `c`, `d`",
                "must be one of c, d (got a`, expected b)",
            ),
        ];
        said_in_words(&messages, &["unknown variant `x`, there are no variants"]);
    }

    fn error(path: &str, message: &str) -> FieldError {
        FieldError {
            path: path.into(),
            message: message.into(),
        }
    }

    /// A required field that is absent is named at its own path; an
    /// unknown one lists the fields there, with the one likely meant.
    #[test]
    fn field_messages_name_the_field_and_what_is_allowed() {
        let given = "must be given (this field has no default)";
        for (path, serde, want_path, want) in [
            ("links[0]", "missing field `a`", "links[0].a", given),
            (
                "(scenario)",
                "missing field `duration_s`",
                "duration_s",
                given,
            ),
            (
                "q",
                "missing field `type`, expected one of `red`, `pie`",
                "q.type",
                "must be given (one of red, pie)",
            ),
            (
                "q",
                "missing field `type`, expected `red`",
                "q.type",
                "must be given (red)",
            ),
            (
                "links[0].rate_mbps",
                "unknown field `rate_mbps`, expected one of `a`, `rate_bps`, `delay_ms`",
                "links[0].rate_mbps",
                "unknown field; did you mean rate_bps? (expected one of a, rate_bps, delay_ms)",
            ),
            // The path at the container: the field is named on it.
            (
                "links[0]",
                "unknown field `colour`, expected `a` or `b`",
                "links[0].colour",
                "unknown field (expected one of a, b)",
            ),
            (
                "(scenario)",
                "unknown field `x`, expected `seed`",
                "x",
                "unknown field (expected seed)",
            ),
            (
                "q.x",
                "unknown field `x`, there are no fields",
                "q.x",
                "unknown field (this table takes no fields)",
            ),
            // A name holding serde's separator: the fields are after the last.
            (
                "q",
                "unknown field `a`, expected b`, expected `c` or `d`",
                "q.a`, expected b",
                "unknown field (expected one of c, d)",
            ),
        ] {
            let e = worded(error(path, serde));
            assert_eq!(
                (e.path.as_str(), e.message.as_str()),
                (want_path, want),
                "{serde}"
            );
        }
        let e = worded(error("x", "invalid type: map, expected f64"));
        assert_eq!(e, error("x", "must be a number (got a table)"));
    }

    /// The field likely meant: a unit added, else the most alike within
    /// 40% of its length in edits (a swap is one), the first of equals.
    #[test]
    fn the_field_meant_is_the_closest_within_a_few_edits() {
        let fields = [
            "delay_ms",
            "rate_bps",
            "limit_packets",
            "abc",
            "abd",
            "name",
        ];
        for (name, meant) in [
            ("delay", Some("delay_ms")),
            ("rate", Some("rate_bps")),
            ("rate_mbps", Some("rate_bps")),
            ("limit_packetz", Some("limit_packets")),
            ("limit_pakcets", Some("limit_packets")),
            ("Name", Some("name")),
            ("nmae", Some("name")),
            ("abx", Some("abc")),
            ("abdd", Some("abd")),
            // 5/3 of its length: two edits in five, still compared.
            ("abcab", Some("abc")),
            ("colour", None),
            ("from", None),
            ("nam", Some("name")),
            ("na", None),
        ] {
            assert_eq!(closest(name, &fields), meant, "{name}");
        }
    }

    /// A scenario of `n` CBR flows, `bad` written into each.
    fn flows(n: usize, bad: &str) -> String {
        let f: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"name": "f{i}", "type": "cbr", "src": "a", "dst": "b",
                        "payload_bytes": 100, "interval_ms": 20, {bad}}}"#
                )
            })
            .collect();
        format!(
            r#"{{"duration_s": 5, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
            "links": [{{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 10}}],
            "flows": [{}]}}"#,
            f.join(",")
        )
    }

    #[test]
    fn every_required_field_set_aside_gets_its_stand_in() {
        // Each bad source is set aside, then stood in for ("x" is the
        // first that parses): two passes a flow, 80 in all.
        let (rest, errs, aside) =
            parse_all(&flows(40, r#""src": 5"#).replace(r#""src": "a", "#, ""));
        assert!(rest.is_some(), "the rest parsed");
        assert_eq!(errs.len(), 40);
        assert_eq!(aside.len(), 40);
        for (i, e) in errs.iter().enumerate() {
            assert_eq!(e.path, format!("flows[{i}].src"));
            assert!(!e.message.contains(STOP), "{e}");
        }
    }

    #[test]
    fn structural_errors_stop_after_the_most_a_document_reports() {
        // Unknown fields, set aside; required fields left out, stood in for.
        let speling = flows(MAX_STRUCTURAL + 10, r#""speling": 1"#);
        let no_src = flows(MAX_STRUCTURAL + 10, r#""x": 1"#)
            .replace(r#""src": "a", "#, "")
            .replace(r#", "x": 1"#, "");
        for (doc, field) in [(speling, "speling"), (no_src, "src")] {
            let (rest, errs, _) = parse_all(&doc);
            assert!(rest.is_none());
            assert_eq!(errs.len(), MAX_STRUCTURAL + 1);
            let (last, first) = errs.split_last().expect("errors");
            assert_eq!(last.path, format!("flows[{MAX_STRUCTURAL}].{field}"));
            assert!(last.message.ends_with(STOP), "{last}");
            assert!(first.iter().all(|e| !e.message.contains(STOP)));
        }
    }
}
