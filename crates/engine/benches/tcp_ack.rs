//! TCP ACK processing: a sender and a receiver joined by a loopback with
//! a fixed one-way delay, every segment and ACK delivered in order. Per
//! element: one ACK through `TcpSender::on_segment` (and the data it
//! releases through the receiver). Without loss (window growth), and with
//! every 40th new data segment dropped (SACK or NewReno recovery).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mediasim_engine::proto::tcp::{Flavor, Segment, TcpConfig, TcpReceiver, TcpSender};
use mediasim_engine::sim::SimTime;
use std::collections::VecDeque;

const ACKS: u64 = 5_000;
const ONE_WAY_NS: u64 = 10_000_000;

struct Loop {
    snd: TcpSender,
    rcv: TcpReceiver,
    /// (arrival time, segment) towards the receiver and back.
    fwd: VecDeque<(u64, Segment)>,
    back: VecDeque<(u64, Segment)>,
    sent: u64,
    drop_every: u64,
}

impl Loop {
    fn new(flavor: Flavor, drop_every: u64) -> Self {
        let cfg = TcpConfig {
            flavor,
            max_window_packets: Some(64),
            ..TcpConfig::default()
        };
        let mut l = Loop {
            snd: TcpSender::new(cfg.clone(), None),
            rcv: TcpReceiver::new(cfg),
            fwd: VecDeque::new(),
            back: VecDeque::new(),
            sent: 0,
            drop_every,
        };
        let mut out = Vec::new();
        l.snd.start(SimTime::ZERO, &mut out);
        l.send(0, out);
        l
    }

    /// Puts the sender's segments on the wire, dropping every n-th new one.
    fn send(&mut self, now: u64, segs: Vec<Segment>) {
        for s in segs {
            self.sent += 1;
            if self.drop_every > 0 && self.sent % self.drop_every == 0 {
                continue;
            }
            self.fwd.push_back((now + ONE_WAY_NS, s));
        }
    }

    /// Runs until the sender has processed `acks` ACKs.
    fn run(&mut self, acks: u64) {
        let (mut done, mut out) = (0, Vec::new());
        while done < acks {
            let next_fwd = self.fwd.front().map(|e| e.0);
            let next_back = self.back.front().map(|e| e.0);
            let deadline = self.snd.deadline().map(|t| t.as_nanos());
            let now = [next_fwd, next_back, deadline]
                .into_iter()
                .flatten()
                .min()
                .expect("work");
            if next_fwd == Some(now) {
                let (_, s) = self.fwd.pop_front().expect("peeked");
                self.rcv
                    .on_segment(SimTime(now), &s.hdr, s.payload, &mut out);
                self.back
                    .extend(out.drain(..).map(|a| (now + ONE_WAY_NS, a)));
            } else if next_back == Some(now) {
                let (_, a) = self.back.pop_front().expect("peeked");
                self.snd.on_segment(SimTime(now), &a.hdr, &mut out);
                done += 1;
                let segs = std::mem::take(&mut out);
                self.send(now, segs);
            } else {
                self.snd.on_timer(SimTime(now), &mut out);
                let segs = std::mem::take(&mut out);
                self.send(now, segs);
            }
        }
    }
}

fn acks(c: &mut Criterion) {
    let mut g = c.benchmark_group("tcp_ack");
    g.throughput(Throughput::Elements(ACKS));
    for (name, flavor, drop_every) in [
        ("sack_no_loss", Flavor::Sack, 0),
        ("sack_loss_1_in_40", Flavor::Sack, 40),
        ("newreno_loss_1_in_40", Flavor::NewReno, 40),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched_ref(
                || Loop::new(flavor, drop_every),
                |l| l.run(ACKS),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, acks);
criterion_main!(benches);
