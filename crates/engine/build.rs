//! Gives the engine a build identity: a hash of its own sources and of the
//! locked dependency versions. Run keys of campaigns include it, so that a
//! changed engine never reuses a stored result (the package version alone
//! does not change with every edit).

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut paths = Vec::new();
    files(&root.join("src"), &mut paths);
    paths.push(root.join("Cargo.toml"));
    paths.push(root.join("../../Cargo.lock"));
    paths.sort();
    let mut h = Sha256::new();
    for p in &paths {
        let rel = p.strip_prefix(&root).unwrap_or(p);
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(p).unwrap_or_default());
        h.update([0]);
    }
    let digest = h.finalize();
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=MEDIASIM_ENGINE_BUILD={hex}");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=../../Cargo.lock");
}
