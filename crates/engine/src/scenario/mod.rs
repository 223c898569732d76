//! Scenarios: the document, its parsing and validation, and the world
//! builder. This layer only walks the document and dispatches: each model
//! family (queue disciplines, loss models, flow kinds, session protocols)
//! keeps its spec, checks and construction beside its code and registers
//! there in one line (see docs/architecture.md, "Adding a model").

pub mod build;
pub mod check;
pub mod document;
pub mod limits;
mod order;
pub mod parse;
pub mod plausible;
pub mod strict;
#[macro_use]
pub mod tagged;
pub mod units;
pub mod validate;

pub use check::FieldError;
pub use document::Scenario;
pub use parse::parse_json;
pub use validate::{check_all, parse_and_validate, validate};

/// The JSON Schema of a scenario, generated from the document.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}

#[cfg(test)]
mod tests;
