//! End of run: close the books, check packet conservation, build tables.

pub use crate::measure::names::{name_column, Codes, RunNames};
use crate::measure::summary::{flow_tables, FlowInputs};
use crate::measure::{Column, DropSite, Recorder, Table};
use crate::net::DropReason;
use crate::sim::SimTime;
use crate::world::topology::LinkDir;
use crate::world::World;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The run's names, moved out of `w` (the run is over: nothing else reads
/// them), which leaves them empty there.
fn take_names(w: &mut World) -> RunNames {
    use std::mem::take;
    let nodes = (w.nodes.iter_mut().map(|n| take(&mut n.name)))
        .chain(["*".to_string()])
        .collect();
    RunNames {
        nodes,
        links: take(&mut w.link_names).into(),
        link_dirs: w.links.iter_mut().map(|l| take(&mut l.name)).collect(),
        flows: w.rec.flows.iter_mut().map(|f| take(&mut f.name)).collect(),
    }
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
    let (total, in_flight) = census(w)?;
    check_books(w, total, in_flight)
}

/// Counts the packet copies still in `w`'s queues and wires, per
/// (flow, receiver) row and in all, after checking that every queue
/// balances and every stored packet is in one of them.
pub fn census(w: &mut World) -> Result<(u64, Vec<u64>), String> {
    let end = w.now();
    let mut in_flight = vec![0u64; w.rec.num_fr()];
    let mut total = 0u64;
    let charge = |w: &World, p: &crate::net::Packet, ld: u32, in_flight: &mut Vec<u64>| {
        if !w.rec.measured(p) {
            return; // a warm-up packet: outside the per-flow books
        }
        for r in w.receivers_via(p, ld) {
            if let Some(i) = w.rec.fr(p.flow, r) {
                in_flight[i] += 1;
            }
        }
    };
    for l in &mut w.links {
        l.queue.finish(end);
    }
    for (ld, l) in w.links.iter().enumerate() {
        if !l.queue.balanced() {
            return Err(format!(
                "queue of {} does not balance: {:?}",
                l.name, l.queue.stats
            ));
        }
        if !l.queue.within_limit() {
            return Err(format!(
                "queue of {} held {} packets, over its limit",
                l.name, l.queue.stats.max_packets
            ));
        }
        for p in l.queue.held() {
            total += 1;
            charge(w, &w.packets[p], ld as u32, &mut in_flight);
        }
    }
    for (ld, l) in w.links.iter().enumerate() {
        // A changing link's packet under way is on neither list.
        let sending = l.dynamics.as_ref().and_then(|d| d.current).map(|c| c.0);
        let on_wire = l.in_transit.iter().map(|(_, p)| p);
        for p in sending.into_iter().chain(on_wire) {
            total += 1;
            charge(w, &w.packets[p], ld as u32, &mut in_flight);
        }
    }
    // Every packet still stored is in some queue or on some wire: one
    // anywhere else was lost by the engine (neither delivered nor dropped).
    if w.packets.live() as u64 != total {
        return Err(format!(
            "{} packets stored but only {total} in queues or on wires",
            w.packets.live()
        ));
    }
    Ok((total, in_flight))
}

/// Checks conservation, globally and per (flow, receiver), with `total`
/// packet copies in flight, `in_flight` of them per row.
pub fn check_books(
    w: &World,
    total: u64,
    in_flight: Vec<u64>,
) -> Result<(Ledger, Vec<u64>), String> {
    let ledger = Ledger {
        originated: w.originated,
        copies: w.copies,
        delivered: w.delivered,
        dropped: w.dropped,
        in_flight: total,
    };
    for (i, &infl) in in_flight.iter().enumerate() {
        let f = w.rec.fr_flow[i] as usize;
        let (sent, got, lost) = (
            w.rec.sent_to(i),
            w.rec.got[i].received,
            w.rec.total_dropped(i),
        );
        if sent != got + lost + infl {
            // More accounted for than sent: a copy delivered (or dropped) twice.
            let twice = if sent < got + lost + infl {
                " (a packet counted twice)"
            } else {
                ""
            };
            return Err(format!(
                "packet conservation violated for flow \"{}\" at receiver \"{}\": sent {sent} != received {got} + lost {lost} + in flight {infl}{twice}",
                w.rec.flows[f].name,
                w.nodes.get(w.rec.fr_node[i] as usize).map_or("*", |n| n.name.as_str())
            ));
        }
    }
    if ledger.originated + ledger.copies != ledger.delivered + ledger.dropped + ledger.in_flight {
        return Err(format!(
            "packet conservation violated: originated {} + multicast copies {} != delivered {} + dropped {} + in flight {}",
            ledger.originated, ledger.copies, ledger.delivered, ledger.dropped, ledger.in_flight
        ));
    }
    Ok((ledger, in_flight))
}

fn u32s(v: &[u32]) -> Column {
    Column::U64(v.iter().map(|&x| x as u64).collect())
}

/// A column with one value per link direction.
fn per_link<T>(w: &World, f: impl Fn(&LinkDir) -> T) -> Vec<T> {
    w.links.iter().map(f).collect()
}

/// Every link direction's index, in order.
fn each_link(w: &World) -> Vec<u32> {
    (0..w.links.len() as u32).collect()
}

/// Builds every result table, and returns them with the run's names.
/// Large columns and the names are moved out of the world (not copied),
/// so call this once, last.
pub fn tables(
    w: &mut World,
    in_flight: &[u64],
    windows: &[(SimTime, SimTime)],
) -> (Vec<Table>, RunNames) {
    let end = w.now();
    let names = take_names(w);
    let inputs = FlowInputs {
        rec: &w.rec,
        names: &names,
        in_flight,
        end,
        windows,
    };
    let (flows, runs, win) = flow_tables(&inputs);
    let (app, series_full) = app_tables(w, end, &names);
    w.rec.series_truncated = series_full;
    let links = links_table(w, &names);
    let queues = queues_table(w, &names);
    let packets = w.rec.packet_log.then(|| packets_table(&mut w.rec));
    let drops = w.rec.packet_log.then(|| drops_table(w, &names));
    let samples = samples_table(&mut w.rec);
    let capacity = capacity_table(w);
    let mut out = vec![flows, runs, win];
    out.extend(packets);
    out.extend(drops);
    out.extend([links, queues, samples, capacity]);
    out.push(classes_table(w, &names));
    out.extend(app);
    if w.rec.trace_on {
        out.push(trace_table(&mut w.rec));
    }
    (out, names)
}

/// One row per delivered packet copy.
fn packets_table(r: &mut Recorder) -> Table {
    let flow = r
        .log_fr
        .iter()
        .map(|&i| r.fr_flow[i as usize] as u64)
        .collect();
    let receiver = r.log_node.iter().map(|&n| n as u64).collect();
    Table::new("packets")
        .col("flow", Column::U64(flow))
        .col("receiver", Column::U64(receiver))
        .col("seq", Column::U64(take(&mut r.log_seq)))
        .col("size_bytes", u32s(&r.log_size))
        .col("sent_ns", Column::U64(take(&mut r.log_sent)))
        .col("recv_ns", Column::U64(take(&mut r.log_recv)))
}

/// One row per dropped packet copy, with its reason and site. Reason and
/// site are codes into lists made once per run: a run that drops millions
/// of packets (a multicast flood into slow links) copied a site's name per
/// row, and Python then turned each row's string back into a category.
fn drops_table(w: &mut World, n: &RunNames) -> Table {
    let r = &mut w.rec;
    let reason = Column::Names {
        codes: r.dl_reason.iter().map(|&x| x as u32).collect(),
        names: r.reasons.iter().map(|x| x.as_str().to_string()).collect(),
    };
    let links = n.link_dirs.len() as u32;
    let site_codes = (r.dl_site.iter())
        .map(|s| match s {
            DropSite::Link(l) => *l,
            DropSite::Node(i) => links + *i,
        })
        .collect();
    Table::new("drops")
        .col("time_ns", Column::U64(take(&mut r.dl_time)))
        .col("flow", u32s(&r.dl_flow))
        .col("seq", Column::U64(take(&mut r.dl_seq)))
        .col("packet_id", Column::U64(take(&mut r.dl_id)))
        .col("size_bytes", u32s(&r.dl_size))
        .col("reason", reason)
        .col(
            "site",
            name_column(&drop_sites(n, r.dl_site.is_empty()), site_codes),
        )
}

/// The names of the places a packet can be dropped: the link directions,
/// then "node:" and each node (none when nothing was dropped).
fn drop_sites(n: &RunNames, none: bool) -> Arc<[String]> {
    if none {
        return Arc::from([]);
    }
    let nodes = n.nodes[..n.nodes.len() - 1].iter(); // without the pooled "*"
    (n.link_dirs.iter().cloned())
        .chain(nodes.map(|x| ["node:", x].concat()))
        .collect()
}

/// One row per link direction: rate, delay, traffic, utilisation, losses.
fn links_table(w: &World, n: &RunNames) -> Table {
    let dur_ns = w.now().as_nanos().max(1) as f64;
    Table::new("links")
        .col("link", name_column(&n.links, per_link(w, |l| l.link)))
        .col("direction", name_column(&n.link_dirs, each_link(w)))
        .col("from", name_column(&n.nodes, per_link(w, |l| l.from)))
        .col("to", name_column(&n.nodes, per_link(w, |l| l.to)))
        // A changing link: the mean capacity it offered over the run, and
        // the share of it that it carried.
        .col(
            "rate_bps",
            Column::F64(per_link(w, |l| match &l.dynamics {
                Some(d) => d.offered_bytes(w.now()) * 8e9 / dur_ns,
                None => l.rate_bps as f64,
            })),
        )
        .col(
            "delay_ms",
            Column::F64(per_link(w, |l| l.delay.as_nanos() as f64 * 1e-6)),
        )
        // Every packet a link sends leaves its queue (or passes through
        // it): the queue's departures are the link's transmissions.
        .col(
            "tx_packets",
            Column::U64(per_link(w, |l| l.queue.stats.departures)),
        )
        .col(
            "tx_bytes",
            Column::U64(per_link(w, |l| l.queue.stats.departure_bytes)),
        )
        // Busy time is booked at transmission start; clip a transmission
        // that runs past the end of the run.
        .col(
            "utilization",
            Column::F64(per_link(w, |l| match &l.dynamics {
                Some(d) => {
                    let offered = d.offered_bytes(w.now());
                    if offered > 0.0 {
                        (d.carried_bytes as f64 / offered).min(1.0)
                    } else {
                        0.0
                    }
                }
                None => (l.busy_ns as f64 / dur_ns).min(1.0),
            })),
        )
        .col("lost_packets", Column::U64(per_link(w, |l| l.lost_packets)))
        .col(
            "queue_drops",
            Column::U64(per_link(w, |l| l.queue.stats.total_drops())),
        )
}

/// One row per link direction's queue: the shared accounting, then the
/// values its discipline reports (NaN where another discipline has none).
fn queues_table(w: &World, n: &RunNames) -> Table {
    let dur_ns = w.now().as_nanos().max(1) as f64;
    let mut t = Table::new("queues")
        .col("direction", name_column(&n.link_dirs, each_link(w)))
        .col(
            "kind",
            Column::coded(w.links.iter().map(|l| l.queue.kind())),
        )
        .col("arrivals", Column::U64(per_link(w, |l| st(l).arrivals)))
        .col("departures", Column::U64(per_link(w, |l| st(l).departures)));
    for reason in w.rec.reasons.iter() {
        let v = per_link(w, |l| l.queue.stats.drops_of(reason));
        if reason == DropReason::QUEUE_OVERFLOW || v.iter().any(|&x| x > 0) {
            t = t.col(&format!("dropped_{}", reason.as_str()), Column::U64(v));
        }
    }
    t = t
        .col(
            "mean_packets",
            Column::F64(per_link(w, |l| st(l).area_packets as f64 / dur_ns)),
        )
        .col(
            "mean_bytes",
            Column::F64(per_link(w, |l| st(l).area_bytes as f64 / dur_ns)),
        )
        .col(
            "max_packets",
            Column::U64(per_link(w, |l| st(l).max_packets as u64)),
        )
        .col("max_bytes", Column::U64(per_link(w, |l| st(l).max_bytes)))
        .col(
            "final_packets",
            Column::U64(per_link(w, |l| l.queue.len_packets() as u64)),
        )
        .col("ecn_marks", Column::U64(per_link(w, |l| st(l).ecn_marks)));
    discipline_columns(w, t)
}

/// One row per class of every class-based queue (none without one).
fn classes_table(w: &World, n: &RunNames) -> Table {
    let (mut dir, mut name, mut arr, mut dep, mut bytes, mut drops) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut extra: Vec<NamedValues> = Vec::new();
    for (ld, l) in w.links.iter().enumerate() {
        for (n, s) in l.queue.classes() {
            dir.push(ld as u32);
            name.push(n);
            arr.push(s.arrivals);
            dep.push(s.departures);
            bytes.push(s.departure_bytes);
            drops.push(s.drops);
            extra.push(s.extra);
        }
    }
    {
        let t = Table::new("queue_classes")
            .col("direction", name_column(&n.link_dirs, dir))
            .col("class", Column::Str(name))
            .col("arrivals", Column::U64(arr))
            .col("departures", Column::U64(dep))
            .col("departure_bytes", Column::U64(bytes))
            .col("drops", Column::U64(drops));
        add_named_columns(t, &extra)
    }
}

fn st(l: &LinkDir) -> &crate::queue::QueueStats {
    &l.queue.stats
}

/// Columns of discipline-specific values (RED's average queue, say), in
/// the order they first appear.
fn discipline_columns(w: &World, t: Table) -> Table {
    let per: Vec<NamedValues> = per_link(w, |l| l.queue.discipline_stats());
    add_named_columns(t, &per)
}

/// One F64 column per name in `rows` (in the order names first appear),
/// NaN where a row lacks it.
fn add_named_columns<'a>(
    t: Table,
    rows: impl IntoIterator<Item = &'a NamedValues> + Clone,
) -> Table {
    named_columns(t, rows, &[])
}

/// One F64 column per name in `first`, then per other name in `rows` (in
/// the order they first appear), NaN where a row lacks it; a row that
/// gives a name twice counts its first value. One pass over the values
/// (hundreds of flows report a couple of dozen values each).
fn named_columns<'a>(
    mut t: Table,
    rows: impl IntoIterator<Item = &'a NamedValues> + Clone,
    first: &[&'static str],
) -> Table {
    let mut names: Vec<&'static str> = first.to_vec();
    let mut index: FxHashMap<&'static str, usize> = FxHashMap::default();
    for (i, &n) in first.iter().enumerate() {
        index.entry(n).or_insert(i);
    }
    // A row gives its names in the same order as the others (one model's
    // values): each is tried at its position in the row first, the map
    // only after.
    let at = |names: &[&str], j: usize, k: &str| names.get(j).is_some_and(|&n| n == k);
    for vals in rows.clone() {
        for (j, &(k, _)) in vals.iter().enumerate() {
            if !at(&names, j, k) {
                index.entry(k).or_insert_with(|| {
                    names.push(k);
                    names.len() - 1
                });
            }
        }
    }
    // A name's column is where it first appears among the names.
    let first: Vec<bool> = (names.iter().enumerate())
        .map(|(j, n)| index[n] == j)
        .collect();
    let n_rows = rows.clone().into_iter().count();
    let mut cols = vec![vec![f64::NAN; n_rows]; names.len()];
    for (r, vals) in rows.into_iter().enumerate() {
        // Backwards, so that a name's first value is written last.
        for (j, &(k, v)) in vals.iter().enumerate().rev() {
            let c = if at(&names, j, k) && first[j] {
                j
            } else {
                index[k]
            };
            cols[c][r] = v;
        }
    }
    let mut out: Vec<Vec<f64>> = Vec::with_capacity(names.len());
    for (j, name) in names.iter().enumerate() {
        let col = if first[j] {
            std::mem::take(&mut cols[j])
        } else {
            out[index[name]].clone()
        };
        out.push(col);
    }
    for (name, col) in names.iter().zip(out) {
        t = t.col(name, Column::F64(col));
    }
    t
}

/// Capacity offered and bytes carried per link direction and interval
/// (`measure.capacity_interval_ms`); empty when not sampled. Rates are the
/// interval's means.
fn capacity_table(w: &mut World) -> Table {
    let mut p = w.capacity.take();
    let (mut time, mut ld, mut cap, mut carried, mut every_s) =
        (vec![], vec![], vec![], vec![], 1.0);
    if let Some(p) = p.as_mut() {
        time = take(&mut p.time_ns);
        ld = std::mem::take(&mut p.link_dir);
        cap = std::mem::take(&mut p.capacity_bytes);
        carried = take(&mut p.carried_bytes);
        every_s = p.every.as_secs_f64();
    }
    w.capacity = p;
    let bps = |bytes: f64| bytes * 8.0 / every_s;
    Table::new("link_capacity")
        .col("time_ns", Column::U64(time))
        .col("link_dir", u32s(&ld))
        .col(
            "capacity_bps",
            Column::F64(cap.iter().map(|&b| bps(b)).collect()),
        )
        .col(
            "carried_bps",
            Column::F64(carried.iter().map(|&b| bps(b as f64)).collect()),
        )
        .col("carried_bytes", Column::U64(carried))
}

/// Queue lengths over time, then the values the disciplines sample (NaN
/// where a queue's discipline has none).
fn samples_table(r: &mut Recorder) -> Table {
    let t = Table::new("queue_samples")
        .col("time_ns", Column::U64(take(&mut r.qs_time)))
        .col("link_dir", u32s(&r.qs_ld))
        .col("packets", Column::U64(take(&mut r.qs_packets)))
        .col("bytes", Column::U64(take(&mut r.qs_bytes)));
    add_named_columns(t, &std::mem::take(&mut r.qs_values))
}

fn trace_table(r: &mut Recorder) -> Table {
    use crate::measure::recorder::trace_kind::{DELIVER, DROP, NODE_DROP};
    let at_node = |k: u8| k == DELIVER || k == NODE_DROP;
    // An event's kind is its letter: coded by the letter's byte (a trace
    // runs to millions of rows).
    let event = Column::Names {
        codes: (r.tr_kind.iter())
            .map(|&k| if k == NODE_DROP { DROP } else { k } as u32)
            .collect(),
        names: (0..=u8::MAX).map(|k| (k as char).to_string()).collect(),
    };
    // Where: a link direction or a node (coded; -1 where the other applies).
    let (mut link_dir, mut node) = (Vec::new(), Vec::new());
    for (&k, &at) in r.tr_kind.iter().zip(&r.tr_at) {
        let (l, n) = if at_node(k) {
            (-1, at as i64)
        } else {
            (at as i64, -1)
        };
        link_dir.push(l);
        node.push(n);
    }
    Table::new("trace")
        .col("time_ns", Column::U64(take(&mut r.tr_time)))
        .col("event", event)
        .col("link_dir", Column::I64(link_dir))
        .col("node", Column::I64(node))
        .col("packet_id", Column::U64(take(&mut r.tr_id)))
        .col("flow", u32s(&r.tr_flow))
        .col("seq", Column::U64(take(&mut r.tr_seq)))
        .col("size_bytes", u32s(&r.tr_size))
}

fn take(v: &mut Vec<u64>) -> Vec<u64> {
    std::mem::take(v)
}

/// One application's named values.
type NamedValues = Vec<(&'static str, f64)>;
/// Long-format series columns: flow, variable, time, value.
type SeriesColumns = (Vec<u32>, Vec<&'static str>, Vec<u64>, Vec<f64>);

/// Tables reported by applications (e.g. "tcp" and "tcp_series"): one row
/// per flow, the values of all its applications side by side. Every
/// declared table is emitted, with its declared columns, even when no
/// application reports into it.
fn app_tables(w: &World, end: crate::sim::SimTime, n: &RunNames) -> (Vec<Table>, bool) {
    let mut full = false;
    let mut rows: BTreeMap<&'static str, BTreeMap<u32, NamedValues>> = BTreeMap::new();
    let mut series: BTreeMap<&'static str, SeriesColumns> = BTreeMap::new();
    let all = (w.apps.iter()).flat_map(|slot| {
        slot.app
            .stats(end)
            .into_iter()
            .chain(slot.app.more_stats(end))
    });
    for st in all {
        rows.entry(st.table)
            .or_default()
            .entry(st.flow)
            .or_default()
            .extend(st.values);
        if w.rec.series_log {
            let s = series.entry(st.table).or_default();
            for (var, pts) in st.series {
                full |= w.rec.series_rows > 0 && pts.len() as u64 >= w.rec.series_rows;
                for (t, v) in pts {
                    s.0.push(st.flow);
                    s.1.push(var);
                    s.2.push(t.as_nanos());
                    s.3.push(v);
                }
            }
        }
    }
    let mut out = Vec::new();
    for decl in crate::app::APP_TABLES {
        let by_flow = rows.remove(decl.name).unwrap_or_default();
        out.push(app_table(n, decl, &by_flow));
        if decl.series && w.rec.series_log {
            let (f, var, time, val) = series.remove(decl.name).unwrap_or_default();
            out.push(
                Table::new(&format!("{}_series", decl.name))
                    .col("flow", name_column(&n.flows, f))
                    .col("var", Column::coded(var))
                    .col("time_ns", Column::U64(time))
                    .col("value", Column::F64(val)),
            );
        }
    }
    // A table no model declares is still reported (a test requires none).
    for (name, by_flow) in rows {
        let decl = crate::app::AppTable {
            name,
            columns: &[],
            series: false,
        };
        out.push(app_table(n, &decl, &by_flow));
    }
    (out, full)
}

/// One application table: "flow", the declared columns in order (NaN where
/// a flow's applications report none), then any value a model reports but
/// does not declare (kept, not lost; a test requires there be none).
fn app_table(
    n: &RunNames,
    decl: &crate::app::AppTable,
    by_flow: &BTreeMap<u32, NamedValues>,
) -> Table {
    let flows = by_flow.keys().copied().collect();
    let t = Table::new(decl.name).col("flow", name_column(&n.flows, flows));
    named_columns(t, by_flow.values(), &decl.names())
}

#[cfg(test)]
mod named_column_tests {
    use super::*;

    fn f64s(t: &Table, name: &str) -> Vec<f64> {
        match t.get(name) {
            Some(Column::F64(v)) => v.clone(),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn declared_names_first_then_others_as_they_appear_nan_where_missing() {
        let rows: Vec<NamedValues> = vec![
            vec![("b", 1.0), ("x", 2.0)],
            vec![("y", 3.0), ("a", 4.0), ("b", 5.0)],
            vec![],
        ];
        let t = named_columns(Table::new("t"), &rows, &["a", "b"]);
        let names: Vec<&str> = t.columns.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["a", "b", "x", "y"]);
        let a = f64s(&t, "a");
        assert!(a[0].is_nan() && a[1] == 4.0 && a[2].is_nan());
        assert_eq!(f64s(&t, "b")[..2], [1.0, 5.0]);
        assert_eq!(f64s(&t, "x")[0], 2.0);
        assert!(f64s(&t, "x")[1].is_nan());
        assert_eq!(t.rows(), 3);
    }

    #[test]
    fn a_name_given_twice_counts_its_first_value() {
        let rows: Vec<NamedValues> = vec![vec![("a", 1.0), ("a", 9.0)]];
        let t = named_columns(Table::new("t"), &rows, &["a", "a"]);
        assert_eq!(t.columns.len(), 2, "a declared name is a column each time");
        assert_eq!(f64s(&t, "a"), [1.0]);
        assert_eq!(t.columns[1].1, Column::F64(vec![1.0]));
    }
}
