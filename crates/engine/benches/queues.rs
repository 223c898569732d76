//! Queue disciplines on their own: a link direction kept busy, each step
//! one packet arriving and one leaving (the steady state of a congested
//! bottleneck), with enough arrivals in bursts that drop decisions run.
//! An element is one transmission time: 1.5 arrivals on average (each
//! through the discipline's drop test) and one departure.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mediasim_engine::net::packet::ecn;
use mediasim_engine::net::{Dest, Packet, Packets, Transport};
use mediasim_engine::queue::spec::{build_queue, QueueSite, QueueSpec};
use mediasim_engine::queue::Queue;
use mediasim_engine::sim::{RngStreams, SimTime};

const PACKETS: u64 = 10_000;
/// 1000-byte packets at 10 Mb/s: 800 us each.
const TX_NS: u64 = 800_000;

fn queue(spec: &str) -> Queue {
    let spec: QueueSpec = serde_json::from_str(spec).expect("a valid queue spec");
    let rng = RngStreams::new(1, 0);
    let site = QueueSite {
        rng: &rng,
        name: "bench:a->b",
        rate_bps: 10_000_000,
    };
    build_queue(Some(&spec), &site)
}

/// A 1000-byte UDP packet of flow `seq % 16`, a quarter of them EF.
fn packet(seq: u64) -> Packet {
    Packet {
        id: seq,
        flow: (seq % 16) as u32,
        seq,
        size_bytes: 1000,
        src: 0,
        dst: Dest::Node(1),
        src_port: 1,
        dst_port: 2,
        dscp: if seq % 4 == 0 { 46 } else { 0 },
        ecn: ecn::NOT_ECT,
        created_at: SimTime::ZERO,
        transport: Transport::Udp,
        app: Default::default(),
    }
}

/// Arrivals in bursts of 3 every 2 transmission times (1.5x the link's
/// rate) on 16 flows; one departure per transmission time. Packets live in
/// a store, as in a run: stored on arrival, released when sent or dropped.
fn drive((q, packets): &mut (Queue, Packets)) -> usize {
    let mut drops = Vec::new();
    let (mut seq, mut dropped) = (0u64, 0usize);
    for step in 0..PACKETS {
        let now = SimTime(step * TX_NS);
        if step % 2 == 0 {
            for _ in 0..3 {
                let p = packets.insert(packet(seq));
                q.enqueue(p, packets, now, &mut drops);
                seq += 1;
            }
        }
        if let Some(p) = std::hint::black_box(q.dequeue(packets, now, &mut drops)) {
            packets.release(p);
        }
        dropped += drops.len();
        for (p, _) in drops.drain(..) {
            packets.release(p);
        }
    }
    dropped
}

fn disciplines(c: &mut Criterion) {
    let specs = [
        ("droptail", r#"{"type": "droptail", "limit_packets": 50}"#),
        (
            "red",
            r#"{"type": "red", "min_th": 5, "max_th": 15, "limit_packets": 50}"#,
        ),
        (
            "red_gentle_bytes",
            r#"{"type": "red", "min_th": 5, "max_th": 15, "limit_packets": 50, "gentle": true, "byte_mode": true, "queue_in_bytes": true}"#,
        ),
        (
            "wred",
            r#"{"type": "wred", "profiles": [{"dscp": [46], "min_th": 10, "max_th": 30, "max_p": 0.02}, {"dscp": [0], "min_th": 5, "max_th": 15, "max_p": 0.1}], "limit_packets": 50}"#,
        ),
        (
            "drr",
            r#"{"type": "drr", "classes": [{"name": "ef", "dscp": [46], "weight": 1, "queue": {"type": "droptail", "limit_packets": 25}}, {"name": "be", "weight": 3, "queue": {"type": "droptail", "limit_packets": 25}}]}"#,
        ),
        ("codel", r#"{"type": "codel", "limit_packets": 50}"#),
        ("fq_codel", r#"{"type": "fq_codel", "limit_packets": 50}"#),
        ("pie", r#"{"type": "pie", "limit_packets": 50}"#),
    ];
    let mut g = c.benchmark_group("queue_enqueue_dequeue");
    g.throughput(Throughput::Elements(PACKETS));
    for (name, spec) in specs {
        g.bench_function(name, |b| {
            b.iter_batched_ref(
                || (queue(spec), Packets::new()),
                drive,
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, disciplines);
criterion_main!(benches);
