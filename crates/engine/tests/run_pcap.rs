//! Capture in a whole run: one file per link with a record per packet put
//! on its wire, and the byte budget (`limits.max_pcap_bytes`) that stops
//! capture before a record would pass it, leaving the files valid.

use mediasim_engine::{run_json, RunOptions};

/// 10 CBR packets of 128 bytes a -> b, 10 ms apart, with `limits`.
fn capture(limits: &str, tag: &str) -> (Vec<u8>, serde_json::Value) {
    let text = format!(
        r#"{{"duration_s": 1, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
        "links": [{{"name": "ab", "a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 1}}],
        "flows": [{{"name": "f", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 100,
                    "interval_ms": 10, "max_packets": 10}}],
        "measure": {{"pcap": true}}, "limits": {limits}}}"#
    );
    let dir = std::env::temp_dir().join(format!("mediasim-run-pcap-{}-{tag}", std::process::id()));
    let opts = RunOptions {
        seed: 1,
        pcap_dir: Some(dir.clone()),
        ..Default::default()
    };
    let out = run_json(&text, &opts, &mut |_, _| true).expect("run");
    let bytes = std::fs::read(dir.join("ab.pcap")).expect("the link's file");
    std::fs::remove_dir_all(&dir).expect("clean up");
    (bytes, serde_json::from_str(&out.meta_json).expect("JSON"))
}

/// The records' captured lengths, walking the file from its 24-byte
/// header (little-endian, as the writer writes it).
fn records(file: &[u8]) -> Vec<u32> {
    let u32_at = |i: usize| u32::from_le_bytes(file[i..i + 4].try_into().expect("4 bytes"));
    let (mut at, mut lens) = (24, Vec::new());
    while at < file.len() {
        let len = u32_at(at + 8);
        lens.push(len);
        at += 16 + len as usize;
    }
    assert_eq!(at, file.len(), "whole records");
    lens
}

#[test]
fn every_packet_on_the_wire_is_captured_whole() {
    let (file, meta) = capture("{}", "all");
    assert_eq!(records(&file), [128; 10]);
    assert_eq!(meta["pcap_truncated"], false);
}

#[test]
fn capture_stops_before_a_record_would_pass_the_budget() {
    // Room for three records of 144 bytes (16 of header, 128 of packet)
    // and a little: the fourth would pass it.
    let (file, meta) = capture(r#"{"max_pcap_bytes": 440}"#, "cut");
    assert_eq!(records(&file), [128; 3]);
    assert_eq!(meta["pcap_truncated"], true);
    // Exactly four records' room: four, and the fifth stops capture.
    let (file, meta) = capture(r#"{"max_pcap_bytes": 576}"#, "exact");
    assert_eq!(records(&file), [128; 4]);
    assert_eq!(meta["pcap_truncated"], true);
}
