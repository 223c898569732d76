//! The event queue under the classic "hold" model: a queue kept at `n`
//! pending events, each step popping the earliest and scheduling one a
//! random time later, as a link or a timer does. Sizes span a dumbbell's
//! few dozen pending events to a large multicast session's ten thousand
//! receiver timers. Also: packet events among dormant timers (the two
//! lanes), and the cancellable path (a timer re-armed per ACK).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mediasim_engine::sim::{uniform, EventQueue, RngStreams, SimTime};
use std::hint::black_box;

const STEPS: u64 = 10_000;

/// A queue holding `n` events spread over 10 ms, and its random stream.
fn filled(n: usize) -> (EventQueue<u32>, mediasim_engine::sim::SimRng) {
    let mut rng = RngStreams::new(1, 0).stream("bench");
    let mut q = EventQueue::new();
    for i in 0..n {
        let at = SimTime((uniform(&mut rng) * 1e7) as u64);
        q.schedule(at, i as u32).expect("future");
    }
    (q, rng)
}

fn hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    g.throughput(Throughput::Elements(STEPS));
    for n in [16usize, 64, 1024, 16_384] {
        g.bench_function(format!("pending_{n}"), |b| {
            b.iter_batched_ref(
                || filled(n),
                |(q, rng)| {
                    for _ in 0..STEPS {
                        let (_, ev) = q.pop().expect("never empty");
                        let gap = SimTime((uniform(rng) * 1e7) as u64);
                        q.schedule_in(gap, black_box(ev));
                    }
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

/// A dumbbell's shape: 8 busy links' packet events turning over fast,
/// and 256 endpoints' retransmission timers seconds ahead, in their lane.
fn packets_among_dormant_timers(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_lanes");
    g.throughput(Throughput::Elements(STEPS));
    g.bench_function("8_packet_events_256_timers", |b| {
        b.iter_batched_ref(
            || {
                let (mut q, rng) = filled(8);
                for i in 0..256 {
                    let at = SimTime(1_000_000_000_000 + i);
                    q.schedule_timer(at, i as u32).expect("future");
                }
                (q, rng)
            },
            |(q, rng)| {
                for _ in 0..STEPS {
                    let (_, ev) = q.pop().expect("never empty");
                    q.schedule_in(SimTime((uniform(rng) * 1e7) as u64), black_box(ev));
                }
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn cancel_and_rearm(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_cancel");
    g.throughput(Throughput::Elements(STEPS));
    g.bench_function("rearm_64_timers", |b| {
        b.iter_batched_ref(
            || {
                let (mut q, rng) = filled(64);
                let keys: Vec<_> = (0..64)
                    .map(|i| {
                        q.schedule_cancellable(SimTime(2e7 as u64), i)
                            .expect("future")
                    })
                    .collect();
                (q, rng, keys)
            },
            |(q, rng, keys)| {
                for i in 0..STEPS as usize {
                    let (_, ev) = q.pop().expect("never empty");
                    q.schedule_in(SimTime((uniform(rng) * 1e7) as u64), ev);
                    let k = i % keys.len();
                    q.cancel(keys[k]);
                    let at = q.now() + SimTime(2e7 as u64);
                    keys[k] = q.schedule_cancellable(at, k as u32).expect("future");
                }
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(
    benches,
    hold,
    packets_among_dormant_timers,
    cancel_and_rearm
);
criterion_main!(benches);
