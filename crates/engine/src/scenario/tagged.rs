//! Model families chosen by a `"type"` field: queue disciplines, loss
//! models, flow kinds. Each model's spec type lives beside its code; the
//! scenario document holds one enum per family, declared with
//! [`model_family!`] (one line per model). This module is the serde and
//! JSON Schema glue: it parses the chosen model's fields with their own
//! paths, so an error inside a model still names its field
//! (`links[0].queue.limit_packets`, not just `links[0].queue`).

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Error};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::strict::Strict;

/// Marks a path inside a tagged value at the start of an error message;
/// [`super::parse::parse_json`] joins it to the outer path.
pub const PATH_MARK: char = '\u{1}';

/// An error at `path` below the value being parsed: the mark, the path's
/// length in bytes, the mark, the path, the message. The length ends the
/// path, not a mark: the path holds the user's keys, which may hold one.
pub fn nested<E: Error>(path: &str, msg: &str) -> E {
    E::custom(format!("{PATH_MARK}{}{PATH_MARK}{path}{msg}", path.len()))
}

/// Joins `inner` (a path below `outer`) to `outer`.
pub fn join_path(outer: &str, inner: &str) -> String {
    if outer.is_empty() || outer == "." {
        inner.to_string()
    } else if inner.starts_with('[') {
        format!("{outer}{inner}")
    } else {
        format!("{outer}.{inner}")
    }
}

/// Reads an object.
pub fn object<'de, D: Deserializer<'de>>(d: D) -> Result<Map<String, Value>, D::Error> {
    Map::<String, Value>::deserialize(d)
}

/// Takes the `"type"` field out of `map` and checks it names one of `tags`.
pub fn take_tag<E: Error>(
    map: &mut Map<String, Value>,
    tags: &'static [&'static str],
) -> Result<String, E> {
    let tag = match map.remove("type") {
        // serde's words, which the parser's recovery looks for, with the
        // types allowed, which it says in the scenario's words.
        None => {
            let msg = serde_json::Error::unknown_variant("", tags).to_string();
            let allowed = msg.split_once(", expected ").map_or("", |(_, a)| a);
            return Err(E::custom(format!(
                "missing field `type`, expected {allowed}"
            )));
        }
        Some(Value::String(s)) => s,
        Some(other) => {
            let got = match other {
                Value::Array(_) => "a list".to_string(),
                Value::Object(_) => "a table".to_string(),
                v => v.to_string(), // null, true, 5: as written
            };
            return Err(nested("type", &format!("must be a string (got {got})")));
        }
    };
    if !tags.contains(&tag.as_str()) {
        let msg = serde_json::Error::unknown_variant(&tag, tags).to_string();
        return Err(nested("type", &msg));
    }
    Ok(tag)
}

/// Parses `map` as a `T`, keeping the path of any error inside it.
pub fn parse<T: DeserializeOwned, E: Error>(map: Map<String, Value>) -> Result<T, E> {
    let v = Value::Object(map);
    // A valid object is read without tracking paths (a sixth of the
    // parse); a faulty one again with it, for its error's path.
    if let Ok(t) = T::deserialize(Strict(&v)) {
        return Ok(t);
    }
    serde_path_to_error::deserialize(Strict(&v)).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.inner().to_string();
        if path == "." {
            E::custom(msg)
        } else {
            nested(&path, &msg)
        }
    })
}

/// The object schema of `T` with a `"type": tag` property added.
pub fn variant_schema<T: JsonSchema>(g: &mut SchemaGenerator, tag: &str) -> Value {
    let mut s = T::json_schema(g).to_value();
    if let Some(obj) = s.as_object_mut() {
        let props = obj
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(p) = props.as_object_mut() {
            p.insert(
                "type".into(),
                serde_json::json!({"type": "string", "const": tag}),
            );
        }
        let req = obj
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(r) = req.as_array_mut() {
            r.insert(0, Value::String("type".into()));
        }
    }
    s
}

/// `{"oneOf": variants}` with a description.
pub fn one_of(description: &str, variants: Vec<Value>) -> Schema {
    Schema::try_from(serde_json::json!({"description": description, "oneOf": variants}))
        .expect("an object is a schema")
}

/// The field names `T`'s schema declares: the oracle the tests hold
/// serde's own lists ([`serde_fields`]) to.
#[cfg(test)]
pub fn field_names<T: JsonSchema>() -> Vec<String> {
    let s = SchemaGenerator::default().into_root_schema_for::<T>();
    s.get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The field names `T`'s `Deserialize` reads: serde hands them to
/// `deserialize_struct`, where this deserializer records them and stops.
/// (Asking the schema cost a tenth of a millisecond, in every run.) Empty
/// for a type that is not a plain struct.
pub fn serde_fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields = None;
    let _ = T::deserialize(FieldGrab(&mut fields));
    fields.unwrap_or(&[])
}

struct FieldGrab<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for FieldGrab<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(Self::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(Self::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// Declares a model family: an enum with one variant per model, chosen by
/// the `"type"` field, and dispatch to the family's trait.
///
/// ```text
/// model_family! {
///     /// A queue discipline.
///     pub enum QueueSpec: dyn QueueModel {
///         Droptail(DropTailSpec) = "droptail",
///     }
/// }
/// ```
#[macro_export]
macro_rules! model_family {
    // A family whose models each declare a list of values (their
    // `$items` through trait `$tr2`, e.g. the drop reasons of queue
    // disciplines): `$name::$all()` gives them in registration order.
    (
        $(#[doc = $doc:literal])*
        pub enum $name:ident : dyn $tr:path {
            $( $variant:ident($spec:ty) = $tag:literal ),+ $(,)?
        }
        each declares $tr2:ident::$items:ident: [$item:ty] => $all:ident;
    ) => {
        $crate::model_family! {
            $(#[doc = $doc])*
            pub enum $name: dyn $tr {
                $( $variant($spec) = $tag ),+
            }
        }
        impl $name {
            /// What each registered model declares, in registration order.
            pub fn $all() -> Vec<$item> {
                let mut v = Vec::new();
                $( v.extend_from_slice(<$spec as $tr2>::$items); )+
                v
            }
        }
    };
    (
        $(#[doc = $doc:literal])*
        pub enum $name:ident : dyn $tr:path {
            $( $variant:ident($spec:ty) = $tag:literal ),+ $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        ///
        /// Each model's spec is boxed: the enum is then two words whatever
        /// its largest model, and a document of hundreds of links or flows
        /// holds no room for the largest spec in each.
        #[derive(Clone, Debug)]
        pub enum $name {
            $( $variant(Box<$spec>) ),+
        }

        impl $name {
            /// The `"type"` names of the registered models.
            pub const TAGS: &'static [&'static str] = &[$($tag),+];

            /// The `"type"` of this model.
            pub fn tag(&self) -> &'static str {
                match self { $( Self::$variant(_) => $tag ),+ }
            }

            /// The model, through its family's trait.
            pub fn model(&self) -> &dyn $tr {
                match self { $( Self::$variant(s) => &**s ),+ }
            }

            /// Parses an object whose `"type"` names the model.
            pub fn from_object<E: serde::de::Error>(
                mut map: serde_json::Map<String, serde_json::Value>,
            ) -> Result<Self, E> {
                let tag = $crate::scenario::tagged::take_tag::<E>(&mut map, Self::TAGS)?;
                match tag.as_str() {
                    $( $tag => $crate::scenario::tagged::parse::<$spec, E>(map).map(|s| Self::$variant(Box::new(s))), )+
                    _ => unreachable!("take_tag checks the tag"),
                }
            }

            /// The field names each model reads, by `"type"`.
            pub fn fields_by_tag() -> Vec<(&'static str, &'static [&'static str])> {
                vec![$( ($tag, $crate::scenario::tagged::serde_fields::<$spec>()) ),+]
            }

            /// The field names each model's schema documents, by `"type"`.
            #[cfg(test)]
            pub fn schema_fields_by_tag() -> Vec<(&'static str, Vec<String>)> {
                vec![$( ($tag, $crate::scenario::tagged::field_names::<$spec>()) ),+]
            }

            /// One object schema per model, each with its `"type"`.
            pub fn variant_schemas(g: &mut schemars::SchemaGenerator) -> Vec<serde_json::Value> {
                vec![$( $crate::scenario::tagged::variant_schema::<$spec>(g, $tag) ),+]
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                Self::from_object($crate::scenario::tagged::object(d)?)
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let doc: &[&str] = &[$($doc),*];
                let doc = doc.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
                $crate::scenario::tagged::one_of(&doc, Self::variant_schemas(g))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::flow::{FlowCommon, FlowKind};
    use crate::queue::QueueSpec;

    fn parse_queue(v: serde_json::Value) -> Result<QueueSpec, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn the_type_picks_the_model_and_errors_carry_the_inner_path() {
        let q = parse_queue(serde_json::json!({"type": "drophead", "limit_packets": 5}));
        assert_eq!(q.expect("valid").tag(), "drophead");
        let e = parse_queue(serde_json::json!({"type": "blue"})).unwrap_err();
        let tags = QueueSpec::TAGS
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>();
        assert_eq!(
            e,
            format!(
                "{PATH_MARK}4{PATH_MARK}typeunknown variant `blue`, expected one of {}",
                tags.join(", ")
            )
        );
        let e =
            parse_queue(serde_json::json!({"type": "droptail", "limit_bytes": -1})).unwrap_err();
        assert!(
            e.starts_with(&format!("{PATH_MARK}11{PATH_MARK}limit_bytesinvalid value")),
            "{e}"
        );
        let e = parse_queue(serde_json::json!({"limit_bytes": 1})).unwrap_err();
        let listed = format!("expected one of {}", tags.join(", "));
        assert_eq!(e, format!("missing field `type`, {listed}"));
    }

    #[test]
    fn paths_join_below_fields_and_list_items() {
        assert_eq!(
            join_path("links[0].queue", "limit_packets"),
            "links[0].queue.limit_packets"
        );
        assert_eq!(join_path("flows", "[2].name"), "flows[2].name");
        assert_eq!(join_path(".", "a"), "a");
    }

    #[test]
    fn no_flow_kind_claims_a_common_field() {
        let common = field_names::<FlowCommon>();
        assert!(common.contains(&"name".to_string()) && common.contains(&"dscp".to_string()));
        for (tag, fields) in FlowKind::fields_by_tag() {
            assert!(!fields.is_empty(), "{tag} declares no fields");
            for &f in fields {
                assert!(
                    !common.contains(&f.to_string()),
                    "{tag} redeclares the common field {f}"
                );
                assert_ne!(f, "type", "{tag} declares \"type\"");
            }
        }
    }
}
