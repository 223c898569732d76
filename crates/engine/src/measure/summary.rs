//! Flow summaries: delay statistics, loss runs, throughput windows.

use super::recorder::Recorder;
use super::table::{Column, Table};
use crate::net::DropReason;
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

/// Lengths of runs of consecutive sequence numbers in `lost` (any order,
/// duplicates ignored).
pub fn loss_runs(lost: &[u64]) -> Vec<u64> {
    let mut s = lost.to_vec();
    s.sort_unstable();
    s.dedup();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let mut j = i;
        while j + 1 < s.len() && s[j + 1] == s[j] + 1 {
            j += 1;
        }
        runs.push((j - i + 1) as u64);
        i = j + 1;
    }
    runs
}

fn ms(ns: f64) -> f64 {
    ns * 1e-6
}

/// The per-(flow, receiver) summary table, the loss-run histogram and the
/// throughput-per-window table.
pub fn flow_tables(
    rec: &Recorder,
    node_names: &[String],
    in_flight: &[u64],
    end: SimTime,
    windows: &[(SimTime, SimTime)],
) -> (Table, Table, Table) {
    let n = rec.num_fr();
    let mut delays: Vec<Vec<u64>> = vec![Vec::new(); n];
    for k in 0..rec.log_fr.len() {
        delays[rec.log_fr[k] as usize].push(rec.log_recv[k] - rec.log_sent[k]);
    }
    let mut win_bytes = vec![vec![0u64; windows.len()]; n];
    if !windows.is_empty() {
        for k in 0..rec.log_fr.len() {
            let t = rec.log_recv[k];
            for (w, &(a, b)) in windows.iter().enumerate() {
                if t >= a.as_nanos() && t < b.as_nanos() {
                    win_bytes[rec.log_fr[k] as usize][w] += rec.log_size[k] as u64;
                }
            }
        }
    }

    let mut c_flow = Vec::with_capacity(n);
    let mut c_kind = Vec::with_capacity(n);
    let mut c_src = Vec::with_capacity(n);
    let mut c_rcv = Vec::with_capacity(n);
    let (mut c_start, mut c_stop) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut c_sent, mut c_sent_b, mut c_recv, mut c_recv_b) = (vec![], vec![], vec![], vec![]);
    let (mut c_lost, mut c_infl, mut c_lrate) = (vec![], vec![], vec![]);
    let mut c_drop: Vec<Vec<u64>> = vec![Vec::new(); DropReason::COUNT];
    let (
        mut c_thr,
        mut c_dmean,
        mut c_dmin,
        mut c_d50,
        mut c_d95,
        mut c_d99,
        mut c_dmax,
        mut c_jit,
    ) = (
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
    );
    let (mut c_runs, mut c_run_mean, mut c_run_max) = (vec![], vec![], vec![]);
    let (mut lr_flow, mut lr_rcv, mut lr_len, mut lr_count) = (vec![], vec![], vec![], vec![]);
    let (mut w_flow, mut w_rcv, mut w_a, mut w_b, mut w_bytes, mut w_thr) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);

    for i in 0..n {
        let f = rec.fr_flow[i] as usize;
        let meta = &rec.flows[f];
        let rcv = &node_names[rec.fr_node[i] as usize];
        c_flow.push(meta.name.clone());
        c_kind.push(meta.kind.to_string());
        c_src.push(node_names[meta.src as usize].clone());
        c_rcv.push(rcv.clone());
        c_start.push(meta.start.as_secs_f64());
        c_stop.push(meta.stop.min(end).as_secs_f64());
        c_sent.push(rec.sent[f]);
        c_sent_b.push(rec.sent_bytes[f]);
        c_recv.push(rec.received[i]);
        c_recv_b.push(rec.received_bytes[i]);
        let lost = rec.total_dropped(i);
        c_lost.push(lost);
        c_infl.push(in_flight[i]);
        let settled = rec.received[i] + lost;
        c_lrate.push(if settled == 0 {
            f64::NAN
        } else {
            lost as f64 / settled as f64
        });
        for (r, col) in c_drop.iter_mut().enumerate() {
            col.push(rec.dropped[i][r]);
        }
        let active = meta.stop.min(end).saturating_sub(meta.start).as_secs_f64();
        c_thr.push(if active > 0.0 {
            rec.received_bytes[i] as f64 * 8.0 / active
        } else {
            f64::NAN
        });
        let d = &mut delays[i];
        d.sort_unstable();
        let mean = if d.is_empty() {
            f64::NAN
        } else {
            d.iter().map(|&x| x as f64).sum::<f64>() / d.len() as f64
        };
        c_dmean.push(ms(mean));
        c_dmin.push(ms(d.first().map_or(f64::NAN, |&x| x as f64)));
        c_d50.push(ms(percentile(d, 0.50)));
        c_d95.push(ms(percentile(d, 0.95)));
        c_d99.push(ms(percentile(d, 0.99)));
        c_dmax.push(ms(d.last().map_or(f64::NAN, |&x| x as f64)));
        c_jit.push(if rec.received[i] < 2 {
            f64::NAN
        } else {
            ms(rec.jitter_ns[i])
        });
        let runs = loss_runs(&rec.lost_seqs[i]);
        c_runs.push(runs.len() as u64);
        c_run_mean.push(if runs.is_empty() {
            0.0
        } else {
            runs.iter().sum::<u64>() as f64 / runs.len() as f64
        });
        c_run_max.push(runs.iter().copied().max().unwrap_or(0));
        let mut hist: std::collections::BTreeMap<u64, u64> = Default::default();
        for r in runs {
            *hist.entry(r).or_default() += 1;
        }
        for (len, count) in hist {
            lr_flow.push(meta.name.clone());
            lr_rcv.push(rcv.clone());
            lr_len.push(len);
            lr_count.push(count);
        }
        for (w, &(a, b)) in windows.iter().enumerate() {
            w_flow.push(meta.name.clone());
            w_rcv.push(rcv.clone());
            w_a.push(a.as_secs_f64());
            w_b.push(b.as_secs_f64());
            w_bytes.push(win_bytes[i][w]);
            w_thr.push(win_bytes[i][w] as f64 * 8.0 / (b - a).as_secs_f64());
        }
    }

    let mut flows = Table::new("flows")
        .col("flow", Column::Str(c_flow))
        .col("kind", Column::Str(c_kind))
        .col("src", Column::Str(c_src))
        .col("receiver", Column::Str(c_rcv))
        .col("start_s", Column::F64(c_start))
        .col("stop_s", Column::F64(c_stop))
        .col("sent", Column::U64(c_sent))
        .col("sent_bytes", Column::U64(c_sent_b))
        .col("received", Column::U64(c_recv))
        .col("received_bytes", Column::U64(c_recv_b))
        .col("lost", Column::U64(c_lost))
        .col("in_flight", Column::U64(c_infl))
        .col("loss_rate", Column::F64(c_lrate));
    for (r, col) in DropReason::ALL.iter().zip(c_drop) {
        flows = flows.col(&format!("dropped_{}", r.as_str()), Column::U64(col));
    }
    let flows = flows
        .col("throughput_bps", Column::F64(c_thr))
        .col("delay_mean_ms", Column::F64(c_dmean))
        .col("delay_min_ms", Column::F64(c_dmin))
        .col("delay_p50_ms", Column::F64(c_d50))
        .col("delay_p95_ms", Column::F64(c_d95))
        .col("delay_p99_ms", Column::F64(c_d99))
        .col("delay_max_ms", Column::F64(c_dmax))
        .col("jitter_ms", Column::F64(c_jit))
        .col("loss_runs", Column::U64(c_runs))
        .col("loss_run_mean", Column::F64(c_run_mean))
        .col("loss_run_max", Column::U64(c_run_max));
    let runs = Table::new("loss_runs")
        .col("flow", Column::Str(lr_flow))
        .col("receiver", Column::Str(lr_rcv))
        .col("run_length", Column::U64(lr_len))
        .col("count", Column::U64(lr_count));
    let win = Table::new("throughput")
        .col("flow", Column::Str(w_flow))
        .col("receiver", Column::Str(w_rcv))
        .col("window_start_s", Column::F64(w_a))
        .col("window_end_s", Column::F64(w_b))
        .col("bytes", Column::U64(w_bytes))
        .col("throughput_bps", Column::F64(w_thr));
    (flows, runs, win)
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

    #[test]
    fn loss_runs_group_consecutive_sequence_numbers() {
        assert_eq!(loss_runs(&[7, 3, 4, 5, 9, 10, 20]), vec![3, 1, 2, 1]);
        assert!(loss_runs(&[]).is_empty());
    }
}
