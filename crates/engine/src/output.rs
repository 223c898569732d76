//! End of run: close the books, check packet conservation, build tables.

use crate::measure::summary::flow_tables;
use crate::measure::{Column, DropSite, Table};
use crate::net::DropReason;
use crate::world::World;

/// Names behind the integer codes of the large per-packet tables.
pub struct Codes {
    pub flows: Vec<String>,
    pub nodes: Vec<String>,
    pub link_dirs: Vec<String>,
}

/// Packet-conservation figures of a run.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    pub originated: u64,
    pub copies: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

/// Counts packet copies still in queues or on the wire, charges them to
/// receivers, and checks conservation globally and per (flow, receiver).
pub fn close_books(w: &mut World) -> Result<(Ledger, Vec<u64>), String> {
    let end = w.now();
    let mut in_flight = vec![0u64; w.rec.num_fr()];
    let mut total = 0u64;
    let charge = |w: &World, p: &crate::net::Packet, at: u32, in_flight: &mut Vec<u64>| {
        for r in w.receivers_below(p, at) {
            if let Some(i) = w.rec.fr(p.flow, r) {
                in_flight[i] += 1;
            }
        }
    };
    for l in &mut w.links {
        l.queue.finish(end);
    }
    for l in &w.links {
        if !l.queue.balanced() {
            return Err(format!(
                "queue of {} does not balance: {:?}",
                l.name, l.queue.stats
            ));
        }
        for p in l.queue.held() {
            total += 1;
            charge(w, p, l.to, &mut in_flight);
        }
    }
    for l in &w.links {
        for (_, p) in &l.in_transit {
            total += 1;
            charge(w, p, l.to, &mut in_flight);
        }
    }
    let ledger = Ledger {
        originated: w.originated,
        copies: w.copies,
        delivered: w.delivered,
        dropped: w.dropped,
        in_flight: total,
    };
    if ledger.originated + ledger.copies != ledger.delivered + ledger.dropped + ledger.in_flight {
        return Err(format!(
            "packet conservation violated: originated {} + multicast copies {} != delivered {} + dropped {} + in flight {}",
            ledger.originated, ledger.copies, ledger.delivered, ledger.dropped, ledger.in_flight
        ));
    }
    for i in 0..w.rec.num_fr() {
        let f = w.rec.fr_flow[i] as usize;
        let (sent, got, lost) = (w.rec.sent[f], w.rec.received[i], w.rec.total_dropped(i));
        if sent != got + lost + in_flight[i] {
            return Err(format!(
                "packet conservation violated for flow \"{}\" at receiver \"{}\": sent {sent} != received {got} + lost {lost} + in flight {}",
                w.rec.flows[f].name, w.nodes[w.rec.fr_node[i] as usize].name, in_flight[i]
            ));
        }
    }
    Ok((ledger, in_flight))
}

fn u32s(v: &[u32]) -> Column {
    Column::U64(v.iter().map(|&x| x as u64).collect())
}

/// Builds every result table.
/// Builds every result table. Large columns are moved out of the recorder
/// (not copied), so call this once, last.
pub fn tables(
    w: &mut World,
    in_flight: &[u64],
    windows: &[(crate::sim::SimTime, crate::sim::SimTime)],
) -> Vec<Table> {
    let end = w.now();
    let dur_ns = end.as_nanos().max(1) as f64;
    let node_names: Vec<String> = w.nodes.iter().map(|n| n.name.clone()).collect();
    let (flows, runs, win) = flow_tables(&w.rec, &node_names, in_flight, end, windows);
    let app = app_tables(w, end);
    let codes_flow = w.rec.fr_flow.clone();
    let codes_node = w.rec.fr_node.clone();
    let r = &mut w.rec;
    let take = std::mem::take::<Vec<u64>>;

    let packets = Table::new("packets")
        .col(
            "flow",
            Column::U64(
                r.log_fr
                    .iter()
                    .map(|&i| codes_flow[i as usize] as u64)
                    .collect(),
            ),
        )
        .col(
            "receiver",
            Column::U64(
                r.log_fr
                    .iter()
                    .map(|&i| codes_node[i as usize] as u64)
                    .collect(),
            ),
        )
        .col("seq", Column::U64(take(&mut r.log_seq)))
        .col("size_bytes", u32s(&r.log_size))
        .col("sent_ns", Column::U64(take(&mut r.log_sent)))
        .col("recv_ns", Column::U64(take(&mut r.log_recv)));

    let drops = Table::new("drops")
        .col("time_ns", Column::U64(take(&mut r.dl_time)))
        .col("flow", u32s(&r.dl_flow))
        .col("seq", Column::U64(take(&mut r.dl_seq)))
        .col("packet_id", Column::U64(take(&mut r.dl_id)))
        .col("size_bytes", u32s(&r.dl_size))
        .col(
            "reason",
            Column::Str(r.dl_reason.iter().map(|x| x.as_str().to_string()).collect()),
        )
        .col(
            "site",
            Column::Str(
                r.dl_site
                    .iter()
                    .map(|s| match s {
                        DropSite::Link(l) => w.links[*l as usize].name.clone(),
                        DropSite::Node(n) => format!("node:{}", w.nodes[*n as usize].name),
                    })
                    .collect(),
            ),
        );

    let n = w.links.len();
    let mut lt = Table::new("links")
        .col(
            "link",
            Column::Str(
                w.links
                    .iter()
                    .map(|l| w.link_names[l.link as usize].clone())
                    .collect(),
            ),
        )
        .col(
            "direction",
            Column::Str(w.links.iter().map(|l| l.name.clone()).collect()),
        )
        .col(
            "from",
            Column::Str(
                w.links
                    .iter()
                    .map(|l| node_names[l.from as usize].clone())
                    .collect(),
            ),
        )
        .col(
            "to",
            Column::Str(
                w.links
                    .iter()
                    .map(|l| node_names[l.to as usize].clone())
                    .collect(),
            ),
        )
        .col(
            "rate_bps",
            Column::U64(w.links.iter().map(|l| l.rate_bps).collect()),
        )
        .col(
            "delay_ms",
            Column::F64(
                w.links
                    .iter()
                    .map(|l| l.delay.as_nanos() as f64 * 1e-6)
                    .collect(),
            ),
        )
        .col(
            "tx_packets",
            Column::U64(w.links.iter().map(|l| l.tx_packets).collect()),
        )
        .col(
            "tx_bytes",
            Column::U64(w.links.iter().map(|l| l.tx_bytes).collect()),
        );
    // Busy time is booked at transmission start; clip a transmission that
    // runs past the end of the run.
    lt = lt
        .col(
            "utilization",
            Column::F64(
                w.links
                    .iter()
                    .map(|l| (l.busy_ns as f64 / dur_ns).min(1.0))
                    .collect(),
            ),
        )
        .col(
            "lost_packets",
            Column::U64(w.links.iter().map(|l| l.lost_packets).collect()),
        )
        .col(
            "queue_drops",
            Column::U64(
                w.links
                    .iter()
                    .map(|l| l.queue.stats.total_drops())
                    .collect(),
            ),
        );

    let mut qt = Table::new("queues")
        .col(
            "direction",
            Column::Str(w.links.iter().map(|l| l.name.clone()).collect()),
        )
        .col(
            "kind",
            Column::Str(w.links.iter().map(|l| l.queue.kind().to_string()).collect()),
        )
        .col(
            "arrivals",
            Column::U64(w.links.iter().map(|l| l.queue.stats.arrivals).collect()),
        )
        .col(
            "departures",
            Column::U64(w.links.iter().map(|l| l.queue.stats.departures).collect()),
        );
    for reason in DropReason::ALL {
        let v: Vec<u64> = w
            .links
            .iter()
            .map(|l| l.queue.stats.drops[reason.index()])
            .collect();
        if reason == DropReason::QueueOverflow || v.iter().any(|&x| x > 0) {
            qt = qt.col(&format!("dropped_{}", reason.as_str()), Column::U64(v));
        }
    }
    qt = qt
        .col(
            "mean_packets",
            Column::F64(
                w.links
                    .iter()
                    .map(|l| l.queue.stats.area_packets as f64 / dur_ns)
                    .collect(),
            ),
        )
        .col(
            "mean_bytes",
            Column::F64(
                w.links
                    .iter()
                    .map(|l| l.queue.stats.area_bytes as f64 / dur_ns)
                    .collect(),
            ),
        )
        .col(
            "max_packets",
            Column::U64(
                w.links
                    .iter()
                    .map(|l| l.queue.stats.max_packets as u64)
                    .collect(),
            ),
        )
        .col(
            "max_bytes",
            Column::U64(w.links.iter().map(|l| l.queue.stats.max_bytes).collect()),
        )
        .col(
            "final_packets",
            Column::U64(
                w.links
                    .iter()
                    .map(|l| l.queue.len_packets() as u64)
                    .collect(),
            ),
        );
    debug_assert_eq!(qt.rows(), n);

    let samples = Table::new("queue_samples")
        .col("time_ns", Column::U64(take(&mut r.qs_time)))
        .col("link_dir", u32s(&r.qs_ld))
        .col("packets", Column::U64(take(&mut r.qs_packets)))
        .col("bytes", Column::U64(take(&mut r.qs_bytes)));

    let mut out = vec![flows, runs, win, packets, drops, lt, qt, samples];
    out.extend(app);
    if r.trace_on {
        out.push(
            Table::new("trace")
                .col("time_ns", Column::U64(take(&mut r.tr_time)))
                .col(
                    "event",
                    Column::Str(r.tr_kind.iter().map(|&k| (k as char).to_string()).collect()),
                )
                .col("at", u32s(&r.tr_at))
                .col("packet_id", Column::U64(take(&mut r.tr_id)))
                .col("flow", u32s(&r.tr_flow))
                .col("seq", Column::U64(take(&mut r.tr_seq)))
                .col("size_bytes", u32s(&r.tr_size)),
        );
    }
    out
}

/// One application's named values.
type NamedValues = Vec<(&'static str, f64)>;
/// Long-format series columns: flow, variable, time, value.
type SeriesColumns = (Vec<String>, Vec<String>, Vec<u64>, Vec<f64>);

/// Tables reported by applications (e.g. "tcp" and "tcp_series"): one row
/// per flow, the values of all its applications side by side.
fn app_tables(w: &World, end: crate::sim::SimTime) -> Vec<Table> {
    use std::collections::BTreeMap;
    let mut rows: BTreeMap<&'static str, BTreeMap<u32, NamedValues>> = BTreeMap::new();
    let mut series: BTreeMap<&'static str, SeriesColumns> = BTreeMap::new();
    for slot in &w.apps {
        let Some(st) = slot.app.stats(end) else {
            continue;
        };
        rows.entry(st.table)
            .or_default()
            .entry(st.flow)
            .or_default()
            .extend(st.values);
        let s = series.entry(st.table).or_default();
        for (var, pts) in st.series {
            for (t, v) in pts {
                s.0.push(w.rec.flows[st.flow as usize].name.clone());
                s.1.push(var.to_string());
                s.2.push(t.as_nanos());
                s.3.push(v);
            }
        }
    }
    let mut out = Vec::new();
    for (table, by_flow) in rows {
        let mut names: Vec<&'static str> = Vec::new();
        for vals in by_flow.values() {
            for (k, _) in vals {
                if !names.contains(k) {
                    names.push(k);
                }
            }
        }
        let mut t = Table::new(table).col(
            "flow",
            Column::Str(
                by_flow
                    .keys()
                    .map(|&f| w.rec.flows[f as usize].name.clone())
                    .collect(),
            ),
        );
        for name in names {
            let col = by_flow
                .values()
                .map(|vals| {
                    vals.iter()
                        .find(|(k, _)| *k == name)
                        .map_or(f64::NAN, |x| x.1)
                })
                .collect();
            t = t.col(name, Column::F64(col));
        }
        out.push(t);
        if let Some((f, var, time, val)) = series.remove(table) {
            out.push(
                Table::new(&format!("{table}_series"))
                    .col("flow", Column::Str(f))
                    .col("var", Column::Str(var))
                    .col("time_ns", Column::U64(time))
                    .col("value", Column::F64(val)),
            );
        }
    }
    out
}

pub fn codes(w: &World) -> Codes {
    Codes {
        flows: w.rec.flows.iter().map(|f| f.name.clone()).collect(),
        nodes: w.nodes.iter().map(|n| n.name.clone()).collect(),
        link_dirs: w.links.iter().map(|l| l.name.clone()).collect(),
    }
}
