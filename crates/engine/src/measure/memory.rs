//! The process's resident memory, for run budgets (`Budget::max_memory_mb`).

/// Resident set size in MiB (Linux: /proc/self/statm); None elsewhere.
pub fn resident_mb() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: f64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096.0 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    #[test]
    fn resident_memory_is_read_on_linux() {
        let mb = super::resident_mb().expect("Linux /proc");
        // A test process holds at least a MiB and far less than a TiB.
        assert!(mb > 1.0 && mb < 1e6, "{mb}");
    }
}
