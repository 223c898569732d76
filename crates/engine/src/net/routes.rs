//! Unicast next hops, computed per source node on first use.
//!
//! An all-pairs table is n^2 entries built by n Dijkstra runs: 3 GB and
//! minutes for 20,000 nodes, although a multicast session of that size
//! routes no unicast packet at all. Each source's row (its shortest-path
//! tree, as `routing::unicast_table` builds it) is computed the first time
//! a packet or a build-time check leaves that node, so the routes and
//! hence the results are the same as with the full table.
//!
//! On a forest (no cycles) no row is built at all: the path between two
//! nodes is unique, and the next hop follows from a depth-first numbering
//! of each tree (`ForestIndex`). Ten thousand receivers each sending to
//! their DR would otherwise need ten thousand rows of ten thousand
//! entries, and a chain of 20,000 nodes a row per hop.

use super::mcast::{forest_components, reverse};
use super::packet::{LinkDirId, NodeId};
use super::routing::{shortest_path_tree, Graph};
use std::collections::HashMap;

const NONE: u32 = u32::MAX;
/// Each node's place in a depth-first order of its tree: a node's subtree
/// is the range [tin, tout) of that order, so whether a destination lies
/// below a node is two comparisons, and which child leads there is a
/// binary search among the node's children. O(n) memory for any depth.
struct ForestIndex {
    /// Per node: where it sits (one record, so that a look-up reads one
    /// cache line per node instead of one per array: with hundreds of
    /// flows the hosts' entries are not in the nearest cache).
    place: Vec<Place>,
    /// Per node: its children's (tin, link-dir down to them), by tin.
    children: Vec<Vec<(u32, LinkDirId)>>,
    /// Per hub (a node with many children, such as a dumbbell's router):
    /// the link-dir down towards each node of its subtree, indexed by tin
    /// past the hub's own. One load instead of a binary search whose every
    /// step is a coin toss for the branch predictor.
    hub_rows: Vec<Option<Box<[LinkDirId]>>>,
}

/// A node's place in its tree.
#[derive(Clone, Copy, Default)]
struct Place {
    tin: u32,
    tout: u32,
    /// Its tree (connected component).
    comp: u32,
    /// Link-dir from the node to its parent (NONE at a root).
    up: LinkDirId,
}

/// Nodes with more children than this get a dense row: any branching node
/// (a binary search among even three children, a dumbbell router's with
/// one flow, costs more than the row's one load).
const HUB_CHILDREN: usize = 1;
/// Entries all hub rows together may hold (16 MiB): a pathological tree
/// (a long chain of hubs) keeps the binary search instead.
const HUB_ROW_BUDGET: usize = 4 << 20;

impl ForestIndex {
    /// The index of a forest with finite costs (None for other graphs).
    fn new(g: &Graph) -> Option<Self> {
        if g.adj.iter().flatten().any(|e| !e.2.is_finite()) {
            return None;
        }
        let comp = forest_components(g)?;
        let n = g.adj.len();
        let mut ix = ForestIndex {
            place: (comp.iter())
                .map(|&comp| Place {
                    comp,
                    up: NONE,
                    ..Place::default()
                })
                .collect(),
            children: vec![Vec::new(); n],
            hub_rows: vec![None; n],
        };
        let (mut clock, mut seen) = (0u32, vec![false; n]);
        for root in 0..n {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            // (node, next neighbour to look at)
            let mut stack = vec![(root as NodeId, 0usize)];
            ix.place[root].tin = clock;
            clock += 1;
            while let Some(&mut (v, ref mut k)) = stack.last_mut() {
                let Some(&(ld, w, _)) = g.adj[v as usize].get(*k) else {
                    ix.place[v as usize].tout = clock;
                    stack.pop();
                    continue;
                };
                *k += 1;
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    ix.place[w as usize].up = reverse(ld);
                    ix.place[w as usize].tin = clock;
                    clock += 1;
                    ix.children[v as usize].push((ix.place[w as usize].tin, ld));
                    stack.push((w, 0));
                }
            }
        }
        ix.build_hub_rows(HUB_ROW_BUDGET);
        Some(ix)
    }

    /// Dense rows for hubs, in node order, while `budget` entries last.
    fn build_hub_rows(&mut self, mut budget: usize) {
        self.hub_rows.iter_mut().for_each(|r| *r = None);
        for s in 0..self.place.len() {
            let (kids, at) = (&self.children[s], self.place[s]);
            let size = (at.tout - at.tin - 1) as usize;
            if kids.len() <= HUB_CHILDREN || size > budget {
                continue;
            }
            budget -= size;
            let mut row = Vec::with_capacity(size);
            for (i, &(t, ld)) in kids.iter().enumerate() {
                let end = kids.get(i + 1).map_or(at.tout, |k| k.0);
                row.extend(std::iter::repeat_n(ld, (end - t) as usize));
            }
            self.hub_rows[s] = Some(row.into_boxed_slice());
        }
    }

    /// The unique path's first link from `src` to `dst`: down the child
    /// whose subtree holds `dst`, or up. Inlined where packets are
    /// forwarded: a call's register saves and restores were a third of
    /// its cost.
    #[inline(always)]
    fn next_hop(&self, src: NodeId, dst: NodeId) -> Option<LinkDirId> {
        let (s, d) = (src as usize, dst as usize);
        let (at, to) = (self.place[s], self.place[d]);
        if src == dst || at.comp != to.comp {
            return None;
        }
        let t = to.tin;
        if at.tin < t && t < at.tout {
            if let Some(row) = &self.hub_rows[s] {
                return Some(row[(t - at.tin - 1) as usize]);
            }
            Some(self.child_towards(s, t))
        } else {
            (at.up != NONE).then_some(at.up)
        }
    }

    /// The link-dir down to `s`'s child whose subtree holds tin `t`.
    #[inline(never)]
    fn child_towards(&self, s: usize, t: u32) -> LinkDirId {
        let kids = &self.children[s];
        let i = kids.partition_point(|c| c.0 <= t) - 1;
        kids[i].1
    }
}

pub struct RouteTable {
    graph: Graph,
    /// The node each link-dir leaves.
    from: Vec<NodeId>,
    /// Per source node: its row, next hop per destination (NONE: none).
    rows: Vec<Option<Box<[u32]>>>,
    /// Explicit routes (scenario `routing.routes`), in order, per source:
    /// (destination, next hop).
    explicit: HashMap<NodeId, Vec<(NodeId, Option<LinkDirId>)>>,
    forest: Option<ForestIndex>,
}

impl RouteTable {
    pub fn new(graph: Graph, from: Vec<NodeId>) -> Self {
        let n = graph.adj.len();
        let forest = ForestIndex::new(&graph);
        RouteTable {
            graph,
            from,
            rows: vec![None; n],
            explicit: HashMap::new(),
            forest,
        }
    }

    /// Routes `src`'s packets for `dst` over `next` (None: no route),
    /// overriding the shortest path; a later call for the same pair wins.
    pub fn set(&mut self, src: NodeId, dst: NodeId, next: Option<LinkDirId>) {
        self.explicit.entry(src).or_default().push((dst, next));
        self.rows[src as usize] = None;
    }

    /// The first link-dir from `src` towards `dst` (None if unreachable or
    /// `src == dst`).
    #[inline(always)]
    pub fn next_hop(&mut self, src: NodeId, dst: NodeId) -> Option<LinkDirId> {
        match &self.forest {
            Some(f) if self.explicit.is_empty() => f.next_hop(src, dst),
            _ => self.next_hop_general(src, dst),
        }
    }

    /// `next_hop` with explicit routes or on a graph with cycles (a forest
    /// without them needs no hash look-up per hop).
    #[inline(never)]
    fn next_hop_general(&mut self, src: NodeId, dst: NodeId) -> Option<LinkDirId> {
        if let Some(f) = &self.forest {
            // The last explicit route for the pair wins, as in a row.
            let explicit =
                (self.explicit.get(&src)).and_then(|v| v.iter().rev().find(|e| e.0 == dst));
            return match explicit {
                Some(&(_, next)) => next,
                None => f.next_hop(src, dst),
            };
        }
        if self.rows[src as usize].is_none() {
            self.rows[src as usize] = Some(self.row(src));
        }
        let hop = self.rows[src as usize].as_ref().expect("just built")[dst as usize];
        (hop != NONE).then_some(hop)
    }

    fn row(&self, src: NodeId) -> Box<[u32]> {
        let via = shortest_path_tree(&self.graph, src);
        let mut row = vec![NONE; via.len()];
        for (dst, v) in via.iter().enumerate() {
            let Some(mut ld) = *v else { continue };
            if dst as NodeId == src {
                continue;
            }
            // Walk back up the tree to the link leaving src.
            while self.from[ld as usize] != src {
                ld = via[self.from[ld as usize] as usize].expect("tree path");
            }
            row[dst] = ld;
        }
        for &(dst, next) in self.explicit.get(&src).into_iter().flatten() {
            row[dst as usize] = next.unwrap_or(NONE);
        }
        row.into_boxed_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::routing::unicast_table;

    /// A ring of 6 with a chord and uneven costs: every entry matches the
    /// all-pairs table; explicit routes override one entry.
    #[test]
    fn rows_on_demand_match_the_all_pairs_table() {
        let edges = [
            (0, 1, 1.0),
            (1, 2, 2.0),
            (2, 3, 1.0),
            (3, 4, 1.0),
            (4, 5, 3.0),
            (5, 0, 1.0),
            (1, 4, 1.5),
        ];
        let mut adj = vec![Vec::new(); 6];
        let mut from = Vec::new();
        for (i, &(a, b, c)) in edges.iter().enumerate() {
            adj[a as usize].push((2 * i as u32, b, c));
            adj[b as usize].push((2 * i as u32 + 1, a, c));
            from.extend([a, b]);
        }
        let g = Graph { adj: adj.clone() };
        let full = unicast_table(&g, |ld| from[ld as usize]);
        let mut lazy = RouteTable::new(Graph { adj }, from.clone());
        for src in 0..6 {
            for dst in 0..6 {
                assert_eq!(lazy.next_hop(src, dst), full[src as usize][dst as usize]);
            }
        }
        lazy.set(0, 3, Some(0));
        lazy.set(0, 2, None);
        assert_eq!(lazy.next_hop(0, 3), Some(0));
        assert_eq!(lazy.next_hop(0, 2), None);
        assert_eq!(lazy.next_hop(0, 4), full[0][4]);
    }

    fn table_of(edges: &[(u32, u32)], n: usize) -> (Graph, Vec<NodeId>) {
        crate::net::routing::unit_graph(n, edges)
    }

    /// A random forest of two trees: walking up gives the all-pairs
    /// table's next hops, and explicit routes still win.
    #[test]
    fn forest_routes_match_the_all_pairs_table() {
        let mut rng = crate::sim::RngStreams::new(3, 0).stream("forest");
        let n = 60;
        // Node i > 0 hangs under a random earlier node, except node 30,
        // which starts a second tree.
        let edges: Vec<(u32, u32)> = (1..n as u32)
            .filter(|&i| i != 30)
            .map(|i| {
                let lo = if i > 30 { 30 } else { 0 };
                let p = lo + (crate::sim::uniform(&mut rng) * (i - lo) as f64) as u32;
                (p, i)
            })
            .collect();
        let (g, from) = table_of(&edges, n);
        let full = unicast_table(&g, |ld| from[ld as usize]);
        let mut t = RouteTable::new(g, from.clone());
        assert!(t.forest.is_some());
        for src in 0..n as u32 {
            for dst in 0..n as u32 {
                assert_eq!(
                    t.next_hop(src, dst),
                    full[src as usize][dst as usize],
                    "{src}->{dst}"
                );
            }
        }
        assert!(t.rows.iter().all(|r| r.is_none()), "no row was built");
        t.set(5, 40, Some(0));
        t.set(5, 40, None);
        assert_eq!(t.next_hop(5, 40), None);
        t.set(7, 3, Some(4));
        assert_eq!(t.next_hop(7, 3), Some(4));
        assert_eq!(t.next_hop(7, 2), full[7][2]);
    }

    /// A star of stars (a root with 10 hubs of 6 leaves each, and a chain
    /// below one leaf): next hops match the all-pairs table with the hubs'
    /// dense rows, with only some of them (a budget), and with none.
    #[test]
    fn hub_rows_give_the_binary_searchs_next_hops() {
        let mut edges: Vec<(u32, u32)> = Vec::new();
        for h in 1..=10u32 {
            edges.push((0, h));
            for k in 0..6 {
                edges.push((h, 11 + (h - 1) * 6 + k));
            }
        }
        edges.extend([(11, 71), (71, 72)]);
        let n = 73;
        let (g, from) = table_of(&edges, n);
        let full = unicast_table(&g, |ld| from[ld as usize]);
        let mut t = RouteTable::new(g, from);
        for budget in [HUB_ROW_BUDGET, 40, 0] {
            let f = t.forest.as_mut().expect("a forest");
            f.build_hub_rows(budget);
            let rows = f.hub_rows.iter().filter(|r| r.is_some()).count();
            let want = match budget {
                0 => 0,
                40 => 6, // not the root's 72 entries; hub 1's 8, then five of 6
                _ => 11,
            };
            assert_eq!(rows, want, "budget {budget}");
            for src in 0..n as u32 {
                for dst in 0..n as u32 {
                    let want = full[src as usize][dst as usize];
                    assert_eq!(t.next_hop(src, dst), want, "{src}->{dst}, budget {budget}");
                }
            }
        }
    }

    /// A chain of 5,000 nodes: forest routes at any depth, both ways, and
    /// no row built.
    #[test]
    fn a_deep_chain_needs_no_rows() {
        let n = 5000usize;
        let edges: Vec<(u32, u32)> = (1..n as u32).map(|i| (i - 1, i)).collect();
        let (g, from) = table_of(&edges, n);
        let mut t = RouteTable::new(g, from);
        assert!(t.forest.is_some());
        // Link i joins i and i + 1: 2i goes up the chain, 2i + 1 down.
        assert_eq!(t.next_hop(0, n as u32 - 1), Some(0));
        assert_eq!(t.next_hop(n as u32 - 1, 0), Some(2 * (n as u32 - 2) + 1));
        assert_eq!(t.next_hop(2500, 2501), Some(5000));
        assert_eq!(t.next_hop(2500, 10), Some(2 * 2499 + 1));
        assert!(t.rows.iter().all(|r| r.is_none()));
    }
}
