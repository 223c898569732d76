//! The process's resident memory, for run budgets (`Budget::max_memory_mb`).

/// Resident set size in MiB (Linux: /proc/self/statm); None elsewhere.
pub fn resident_mb() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: f64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096.0 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    /// VmRSS of /proc/self/status, in MiB: the kernel's own figure in
    /// kB, read another way.
    fn vm_rss_mb() -> f64 {
        let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
        let line = (status.lines().find(|l| l.starts_with("VmRSS:"))).expect("VmRSS");
        let kb: f64 = line
            .split_whitespace()
            .nth(1)
            .expect("a number")
            .parse()
            .expect("kB");
        kb / 1024.0
    }

    #[test]
    fn resident_memory_is_read_on_linux() {
        let mb = super::resident_mb().expect("Linux /proc");
        let rss = vm_rss_mb();
        // The two reads a moment apart (other tests run in this process
        // and may allocate between them).
        assert!((mb - rss).abs() < 0.1 * rss + 8.0, "{mb} against {rss}");
    }
}
