//! Scenarios: the data model, its validation, and the world builder.

pub mod build;
pub mod model;
pub mod validate;

pub use model::Scenario;
pub use validate::{parse_and_validate, parse_json, validate, FieldError};

/// The JSON Schema of a scenario, generated from the data model.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}
