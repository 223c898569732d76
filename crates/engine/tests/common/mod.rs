//! What the whole-engine tests share: a run through the public entry
//! point and typed access to its tables.
#![allow(dead_code)] // each test file uses its own part

use mediasim_engine::measure::{Column, Table};
use mediasim_engine::{run_json, RunOptions};

pub fn run(json: &str, seed: u64) -> Vec<Table> {
    let mut progress = |_, _| true;
    run_json(
        json,
        &RunOptions {
            seed,
            ..Default::default()
        },
        &mut progress,
    )
    .expect("run")
    .tables
}

/// Runs `json` and returns its tables and its metadata.
pub fn run_with_meta(json: &str) -> (Vec<Table>, serde_json::Value) {
    let out = run_json(
        json,
        &RunOptions {
            seed: 1,
            ..Default::default()
        },
        &mut |_, _| true,
    )
    .expect("run");
    let meta = serde_json::from_str(&out.meta_json).expect("JSON");
    (out.tables, meta)
}

pub fn table<'a>(t: &'a [Table], name: &str) -> &'a Table {
    t.iter().find(|t| t.name == name).expect("table")
}

pub fn u64s<'a>(t: &'a Table, col: &str) -> &'a [u64] {
    match t.get(col) {
        Some(Column::U64(v)) => v,
        other => panic!("column {col}: {other:?}"),
    }
}

pub fn f64s<'a>(t: &'a Table, col: &str) -> &'a [f64] {
    match t.get(col) {
        Some(Column::F64(v)) => v,
        other => panic!("column {col}: {other:?}"),
    }
}
