//! The engine's layers use only what docs/architecture.md allows: this test
//! reads the "Layers and what each may use" table there, reads every
//! `crate::` path in the engine's sources (test code left out: tests may
//! build a whole scenario), and fails on an edge the table does not allow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules every layer may use: the helpers each model's spec and
/// construction use (field-path checks, the build context, the tagged
/// family macro).
const HELPERS: &[&str] = &["scenario::check", "scenario::build", "scenario::tagged"];

/// Macros exported at the crate root, by the layer that defines them.
const MACROS: &[(&str, &str)] = &[
    ("model_family", "scenario::tagged"),
    ("payload_eq", "net"),
    ("fifo_queue_methods", "queue"),
    ("timed_queue_methods", "queue"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The table's rows: layer -> the layers it may use ("all": every layer).
fn matrix(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    let start = doc
        .find("## Layers and what each may use")
        .expect("docs/architecture.md has the layer table");
    let mut m = BTreeMap::new();
    for line in doc[start..].lines().skip(1) {
        if m.is_empty() && !line.starts_with('|') {
            continue;
        }
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 3 || !cells[0].starts_with('`') {
            continue;
        }
        let uses: BTreeSet<String> = if cells[2] == "all" {
            ["*".to_string()].into()
        } else {
            ticked(cells[2])
        };
        for layer in ticked(cells[0]) {
            m.insert(layer, uses.clone());
        }
    }
    m
}

/// The backticked names in a cell, without a trailing `/` or `.rs`.
fn ticked(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.trim_end_matches('/').trim_end_matches(".rs").to_string())
        .collect()
}

/// The source with comments and `#[cfg(test)]` items removed, and the
/// names of modules declared test-only (`#[cfg(test)] mod x;`).
fn production_code(src: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut test_mods = Vec::new();
    let lines: Vec<&str> = src.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].split("//").next().unwrap_or("");
        if line.trim() == "#[cfg(test)]" {
            // Skip the item that follows: one line ending in `;`, or a
            // braced block.
            i += 1;
            while i < lines.len() && lines[i].trim_start().starts_with("#[") {
                i += 1;
            }
            let Some(first) = lines.get(i) else { break };
            let first = first.split("//").next().unwrap_or("");
            if first.trim_end().ends_with(';') {
                let decl = first.trim();
                let decl = ["pub ", "pub(crate) "]
                    .iter()
                    .find_map(|v| decl.strip_prefix(v))
                    .unwrap_or(decl);
                if let Some(name) = decl.strip_prefix("mod ") {
                    test_mods.push(name.trim_end_matches(';').trim().to_string());
                }
                i += 1;
                continue;
            }
            let mut depth = 0i64;
            let mut opened = false;
            while i < lines.len() {
                let l = lines[i].split("//").next().unwrap_or("");
                depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
                opened |= l.contains('{');
                i += 1;
                if opened && depth <= 0 {
                    break;
                }
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
        i += 1;
    }
    (out, test_mods)
}

/// What `crate::a::b` names: the layer (with the helper module for
/// `scenario`), or a macro's home.
fn target(a: &str, b: &str) -> String {
    if let Some((_, home)) = MACROS.iter().find(|(m, _)| *m == a) {
        return home.to_string();
    }
    if a == "scenario" && HELPERS.contains(&format!("scenario::{b}").as_str()) {
        return format!("scenario::{b}");
    }
    a.to_string()
}

/// Every `crate::` path in `code`: (line, target).
fn uses(code: &str) -> Vec<(usize, String)> {
    let mut v = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(k) = rest.find("crate::") {
            let before = rest[..k].chars().last();
            let after = &rest[k + 7..];
            rest = after;
            if before.is_some_and(|c| c == '$' || c.is_alphanumeric() || c == '_') {
                continue;
            }
            let ident = |s: &str| -> String {
                s.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            };
            let a = ident(after);
            let b = after[a.len()..]
                .strip_prefix("::")
                .map(ident)
                .unwrap_or_default();
            v.push((n + 1, target(&a, &b)));
        }
    }
    v
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The layer of a source file (its folder or file below src/).
fn layer_of(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The edges the table does not allow: "file:line: a -> b".
fn violations(m: &BTreeMap<String, BTreeSet<String>>, files: &[(PathBuf, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, code) in files {
        let layer = layer_of(rel);
        let allowed = m
            .get(&layer)
            .unwrap_or_else(|| panic!("layer {layer} is not in the table"));
        for (line, t) in uses(code) {
            let base = t.split("::").next().unwrap().to_string();
            let ok = base == layer
                || allowed.contains("*")
                || allowed.contains(&base)
                || HELPERS.contains(&t.as_str());
            if !ok {
                bad.push(format!("{}:{line}: {layer} -> {t}", rel.display()));
            }
        }
    }
    bad
}

fn sources() -> Vec<(PathBuf, String)> {
    let src = root().join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let mut test_only: BTreeSet<PathBuf> = BTreeSet::new();
    let mut files = Vec::new();
    for p in &paths {
        let (code, test_mods) = production_code(&std::fs::read_to_string(p).unwrap());
        // `mod x;` in a/b.rs or a/b/mod.rs lives in a/b/x.rs or a/b/x/.
        let dir = if p
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs")
        {
            p.parent().unwrap().to_path_buf()
        } else {
            p.with_extension("")
        };
        for m in test_mods {
            test_only.insert(dir.join(format!("{m}.rs")));
            test_only.insert(dir.join(&m));
        }
        files.push((p.clone(), code));
    }
    files
        .into_iter()
        .filter(|(p, _)| !test_only.iter().any(|t| p.starts_with(t)))
        .map(|(p, c)| (p.strip_prefix(&src).unwrap().to_path_buf(), c))
        .collect()
}

fn doc_matrix() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(root().join("../../docs/architecture.md"))
        .expect("docs/architecture.md beside the crates");
    matrix(&doc)
}

#[test]
fn the_engine_uses_only_the_edges_the_layer_table_allows() {
    let m = doc_matrix();
    let files = sources();
    let layers: BTreeSet<String> = files.iter().map(|(p, _)| layer_of(p)).collect();
    let missing: Vec<_> = layers.iter().filter(|l| !m.contains_key(*l)).collect();
    assert!(
        missing.is_empty(),
        "layers not in docs/architecture.md's table: {missing:?}"
    );
    let bad = violations(&m, &files);
    assert!(
        bad.is_empty(),
        "edges the layer table does not allow:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_table_orders_the_layers_with_nothing_pointing_up() {
    let m = doc_matrix();
    let may = |a: &str, b: &str| m[a].contains(b) || m[a].contains("*");
    assert!(m["sim"].is_empty() || m["sim"].iter().all(|x| x == "nothing"));
    assert_eq!(m["net"], ["sim".to_string()].into());
    for low in ["sim", "net", "queue", "loss", "wire", "measure", "proto"] {
        assert!(
            !may(low, "app") && !may(low, "world") && !may(low, "scenario"),
            "{low}"
        );
    }
    assert!(!may("proto", "queue") && !may("measure", "app") && !may("app", "world"));
}

#[test]
fn an_edge_up_the_layers_is_found() {
    let m = doc_matrix();
    let code = "use crate::sim::SimTime;\nuse crate::app::Action;\n\
                #[cfg(test)]\nmod tests {\n    use crate::world::World;\n}\n";
    let (prod, _) = production_code(code);
    let bad = violations(&m, &[(PathBuf::from("net/x.rs"), prod)]);
    // A test-only module declared public is a test-only module too.
    let decls = "#[cfg(test)]\npub mod testing;\n#[cfg(test)]\nmod tests;\npub mod spec;\n";
    assert_eq!(production_code(decls).1, ["testing", "tests"]);
    assert_eq!(bad, vec!["net/x.rs:2: net -> app".to_string()]);
    // Helpers and a layer's own modules are allowed; `$crate` is a macro's.
    let ok =
        "use crate::scenario::check::Checker;\nuse crate::queue::fifo::Fifo;\n$crate::app::x();\n";
    assert!(violations(&m, &[(PathBuf::from("queue/y.rs"), ok.to_string())]).is_empty());
    let up = "let w = crate::scenario::parse_and_validate(t);\n";
    assert_eq!(
        violations(&m, &[(PathBuf::from("app/z.rs"), up.to_string())]).len(),
        1
    );
}
