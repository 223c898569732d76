//! Flow summaries: delay statistics, loss runs, throughput windows.

use super::recorder::Recorder;
use super::table::{Column, Table};
use crate::sim::SimTime;

/// Percentile of sorted data by linear interpolation between closest ranks
/// (numpy's default "linear" method). NaN when empty.
pub fn percentile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] as f64 + (sorted[hi] as f64 - sorted[lo] as f64) * frac
}

/// Run length -> number of runs.
type RunHistogram = std::collections::BTreeMap<u64, u64>;

fn ms(ns: f64) -> f64 {
    ns * 1e-6
}

/// Names of the delay columns, in the order [`delay_stats`] returns them.
const DELAY_COLUMNS: [&str; 6] = [
    "delay_mean_ms",
    "delay_min_ms",
    "delay_p50_ms",
    "delay_p95_ms",
    "delay_p99_ms",
    "delay_max_ms",
];

/// Mean, min, median, 95th and 99th percentile and max of one-way delays
/// (ns in, ms out; NaN when there are none). Sorts `d`.
fn delay_stats(d: &mut [u64]) -> [f64; 6] {
    d.sort_unstable();
    let mean = if d.is_empty() {
        f64::NAN
    } else {
        d.iter().map(|&x| x as f64).sum::<f64>() / d.len() as f64
    };
    [
        mean,
        d.first().map_or(f64::NAN, |&x| x as f64),
        percentile(d, 0.50),
        percentile(d, 0.95),
        percentile(d, 0.99),
        d.last().map_or(f64::NAN, |&x| x as f64),
    ]
    .map(ms)
}

/// What the flow tables are built from.
pub struct FlowInputs<'a> {
    pub rec: &'a Recorder,
    pub names: &'a super::names::RunNames,
    /// Per (flow, receiver): copies still in flight at the end.
    pub in_flight: &'a [u64],
    pub end: SimTime,
    pub windows: &'a [(SimTime, SimTime)],
}

impl FlowInputs<'_> {
    /// The flow of row `i` (a code into the run's flow names).
    fn flow(&self, i: usize) -> u32 {
        self.rec.fr_flow[i]
    }
    /// The receiver of row `i` (a code into the run's node names, "*"
    /// for a pooled row: all receivers).
    fn receiver(&self, i: usize) -> u32 {
        match self.rec.fr_node[i] {
            super::recorder::POOLED => self.names.pooled(),
            n => n,
        }
    }
    fn flows(&self, codes: Vec<u32>) -> Column {
        super::names::name_column(&self.names.flows, codes)
    }
    fn nodes(&self, codes: Vec<u32>) -> Column {
        super::names::name_column(&self.names.nodes, codes)
    }
}

/// The per-(flow, receiver) summary table, the loss-run histogram and the
/// throughput-per-window table.
pub fn flow_tables(x: &FlowInputs<'_>) -> (Table, Table, Table) {
    let rec = x.rec;
    let n = rec.num_fr();
    let runs: Vec<RunHistogram> = rec.loss_runs.iter().map(|r| r.histogram()).collect();
    let mut cols = FlowColumns::default();
    if rec.packet_log {
        let mut delays: Vec<Vec<u64>> = vec![Vec::new(); n];
        for k in 0..rec.log_fr.len() {
            if rec.log_sent[k] >= rec.warmup_ns {
                delays[rec.log_fr[k] as usize].push(rec.log_recv[k] - rec.log_sent[k]);
            }
        }
        for (i, d) in delays.iter_mut().enumerate() {
            cols.push(x, i, delay_stats(d), &runs[i]);
        }
    } else {
        for (i, g) in rec.got.iter().enumerate() {
            cols.push(x, i, g.delay.summary_ns().map(ms), &runs[i]);
        }
    }
    (
        cols.into_table(x),
        loss_run_table(x, &runs),
        window_table(x),
    )
}

/// The flows table's columns, filled row by row.
#[derive(Default)]
struct FlowColumns {
    flow: Vec<u32>,
    kind: Vec<&'static str>,
    src: Vec<u32>,
    receiver: Vec<u32>,
    start_stop: [Vec<f64>; 2],
    counts: [Vec<u64>; 6],
    loss_rate: Vec<f64>,
    dropped: Vec<Vec<u64>>,
    throughput: Vec<f64>,
    delay: [Vec<f64>; 6],
    jitter: Vec<f64>,
    run_count: Vec<u64>,
    run_mean: Vec<f64>,
    run_max: Vec<u64>,
}

impl FlowColumns {
    fn push(&mut self, x: &FlowInputs<'_>, i: usize, delay: [f64; 6], runs: &RunHistogram) {
        let rec = x.rec;
        let f = rec.fr_flow[i] as usize;
        let meta = &rec.flows[f];
        let stop = meta.stop.min(x.end);
        self.flow.push(x.flow(i));
        self.kind.push(meta.kind);
        self.src.push(meta.src);
        self.receiver.push(x.receiver(i));
        self.start_stop[0].push(meta.start.as_secs_f64());
        self.start_stop[1].push(stop.as_secs_f64());
        let lost = rec.total_dropped(i);
        let counts = [
            rec.sent_to(i),
            rec.sent_bytes_to(i),
            rec.got[i].received,
            rec.got[i].received_bytes,
            lost,
            x.in_flight[i],
        ];
        for (col, v) in self.counts.iter_mut().zip(counts) {
            col.push(v);
        }
        // NaN only where nothing was sent: packets sent and all still in
        // flight (a link too slow to deliver one) were not lost.
        let settled = rec.got[i].received + lost;
        let loss_rate = match (settled, rec.sent_to(i)) {
            (0, sent) if sent > 0 => 0.0,
            _ => ratio(lost as f64, settled as f64),
        };
        self.loss_rate.push(loss_rate);
        let by_reason = rec.dropped_by_reason(i);
        self.dropped.resize(by_reason.len(), Vec::new());
        for (col, &n) in self.dropped.iter_mut().zip(by_reason) {
            col.push(n);
        }
        // Throughput over the measured part of the flow's active interval.
        let from = meta.start.max(SimTime(rec.warmup_ns));
        let active = stop.saturating_sub(from).as_secs_f64();
        self.throughput
            .push(ratio(rec.got[i].received_bytes as f64 * 8.0, active));
        for (col, v) in self.delay.iter_mut().zip(delay) {
            col.push(v);
        }
        let jitter = if rec.got[i].received < 2 || rec.is_pooled(i) {
            f64::NAN
        } else {
            ms(rec.got[i].jitter_ns)
        };
        self.jitter.push(jitter);
        let count: u64 = runs.values().sum();
        let lost: u64 = runs.iter().map(|(l, c)| l * c).sum();
        self.run_count.push(count);
        let mean = if rec.is_pooled(i) {
            f64::NAN // loss runs are per receiver: not kept for pooled rows
        } else if count == 0 {
            0.0
        } else {
            lost as f64 / count as f64
        };
        self.run_mean.push(mean);
        self.run_max
            .push(runs.keys().next_back().copied().unwrap_or(0));
    }

    fn into_table(self, x: &FlowInputs<'_>) -> Table {
        let mut t = Table::new("flows")
            .col("flow", x.flows(self.flow))
            .col("kind", Column::coded(self.kind))
            .col("src", x.nodes(self.src))
            .col("receiver", x.nodes(self.receiver));
        for (name, col) in ["start_s", "stop_s"].into_iter().zip(self.start_stop) {
            t = t.col(name, Column::F64(col));
        }
        let count_names = [
            "sent",
            "sent_bytes",
            "received",
            "received_bytes",
            "lost",
            "in_flight",
        ];
        for (name, col) in count_names.into_iter().zip(self.counts) {
            t = t.col(name, Column::U64(col));
        }
        t = t.col("loss_rate", Column::F64(self.loss_rate));
        let reasons = &x.rec.reasons;
        let mut dropped = self.dropped;
        dropped.resize(reasons.len(), Vec::new());
        for (r, col) in reasons.iter().zip(dropped) {
            t = t.col(&format!("dropped_{}", r.as_str()), Column::U64(col));
        }
        t = t.col("throughput_bps", Column::F64(self.throughput));
        for (name, col) in DELAY_COLUMNS.into_iter().zip(self.delay) {
            t = t.col(name, Column::F64(col));
        }
        t.col("jitter_ms", Column::F64(self.jitter))
            .col("loss_runs", Column::U64(self.run_count))
            .col("loss_run_mean", Column::F64(self.run_mean))
            .col("loss_run_max", Column::U64(self.run_max))
    }
}

/// a / b, NaN when b is 0 (or not positive).
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

/// Histogram of loss-run lengths per (flow, receiver).
fn loss_run_table(x: &FlowInputs<'_>, runs: &[RunHistogram]) -> Table {
    let (mut flow, mut rcv, mut len, mut count) = (vec![], vec![], vec![], vec![]);
    for (i, hist) in runs.iter().enumerate() {
        for (&l, &c) in hist {
            flow.push(x.flow(i));
            rcv.push(x.receiver(i));
            len.push(l);
            count.push(c);
        }
    }
    Table::new("loss_runs")
        .col("flow", x.flows(flow))
        .col("receiver", x.nodes(rcv))
        .col("run_length", Column::U64(len))
        .col("count", Column::U64(count))
}

/// Bytes and throughput per (flow, receiver) and measurement window.
fn window_table(x: &FlowInputs<'_>) -> Table {
    let rec = x.rec;
    let nw = rec.windows.len();
    let bytes: Vec<&[u64]> = (0..rec.num_fr())
        .map(|i| &rec.window_bytes[i * nw..(i + 1) * nw])
        .collect();
    let (mut flow, mut rcv, mut wa, mut wb, mut wbytes, mut thr) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for (i, per_window) in bytes.iter().enumerate() {
        for (&(a, b), &by) in x.windows.iter().zip(per_window.iter()) {
            flow.push(x.flow(i));
            rcv.push(x.receiver(i));
            wa.push(a.as_secs_f64());
            wb.push(b.as_secs_f64());
            wbytes.push(by);
            thr.push(by as f64 * 8.0 / (b - a).as_secs_f64());
        }
    }
    Table::new("throughput")
        .col("flow", x.flows(flow))
        .col("receiver", x.nodes(rcv))
        .col("window_start_s", Column::F64(wa))
        .col("window_end_s", Column::F64(wb))
        .col("bytes", Column::U64(wbytes))
        .col("throughput_bps", Column::F64(thr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_interpolates_like_numpy() {
        let d = [10, 20, 30, 40];
        assert_eq!(percentile(&d, 0.0), 10.0);
        assert_eq!(percentile(&d, 0.5), 25.0);
        assert!((percentile(&d, 0.95) - 38.5).abs() < 1e-9);
        assert!(percentile(&[], 0.5).is_nan());
    }
}
