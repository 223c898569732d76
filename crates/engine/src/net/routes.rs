//! Unicast next hops, computed per source node on first use.
//!
//! An all-pairs table is n^2 entries built by n Dijkstra runs: 3 GB and
//! minutes for 20,000 nodes, although a multicast session of that size
//! routes no unicast packet at all. Each source's row (its shortest-path
//! tree, as `routing::unicast_table` builds it) is computed the first time
//! a packet or a build-time check leaves that node, so the routes and
//! hence the results are the same as with the full table.

use super::packet::{LinkDirId, NodeId};
use super::routing::{shortest_path_tree, Graph};
use std::collections::HashMap;

const NONE: u32 = u32::MAX;

pub struct RouteTable {
    graph: Graph,
    /// The node each link-dir leaves.
    from: Vec<NodeId>,
    /// Per source node: its row, next hop per destination (NONE: none).
    rows: Vec<Option<Box<[u32]>>>,
    /// Explicit routes (scenario `routing.routes`), in order, per source:
    /// (destination, next hop).
    explicit: HashMap<NodeId, Vec<(NodeId, Option<LinkDirId>)>>,
}

impl RouteTable {
    pub fn new(graph: Graph, from: Vec<NodeId>) -> Self {
        let n = graph.adj.len();
        RouteTable {
            graph,
            from,
            rows: vec![None; n],
            explicit: HashMap::new(),
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
    pub fn next_hop(&mut self, src: NodeId, dst: NodeId) -> Option<LinkDirId> {
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
}
