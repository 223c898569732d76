//! Static routing: shortest-path unicast next hops and multicast
//! shortest-path trees rooted at each sender.
//!
//! Ties are broken deterministically (lowest accumulated cost, then fewest
//! hops, then lowest link-dir index), so routes never depend on hash order.

use super::packet::{LinkDirId, NodeId};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The routing view of a topology: for each node, its outgoing link-dirs as
/// (link-dir id, neighbour, cost).
#[derive(Clone)]
pub struct Graph {
    pub adj: Vec<Vec<(LinkDirId, NodeId, f64)>>,
}

/// For tests: a graph of unit-cost undirected edges, link i being
/// link-dirs 2i (a->b) and 2i+1 (b->a) as the topology builder numbers
/// them, and each link-dir's origin node.
#[cfg(test)]
pub fn unit_graph(n: usize, edges: &[(u32, u32)]) -> (Graph, Vec<NodeId>) {
    let mut adj = vec![Vec::new(); n];
    let mut from = Vec::new();
    for (i, &(a, b)) in edges.iter().enumerate() {
        adj[a as usize].push((2 * i as u32, b, 1.0));
        adj[b as usize].push((2 * i as u32 + 1, a, 1.0));
        from.extend([a, b]);
    }
    (Graph { adj }, from)
}

#[derive(PartialEq)]
struct Item {
    cost: f64,
    hops: u32,
    node: NodeId,
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        o.cost
            .total_cmp(&self.cost)
            .then_with(|| o.hops.cmp(&self.hops))
            .then_with(|| o.node.cmp(&self.node))
    }
}

/// Shortest-path tree from `root`: for each node, the link-dir used to reach
/// it from its parent (None for the root and for unreachable nodes).
pub fn shortest_path_tree(g: &Graph, root: NodeId) -> Vec<Option<LinkDirId>> {
    let n = g.adj.len();
    let mut dist = vec![(f64::INFINITY, u32::MAX); n];
    let mut via: Vec<Option<LinkDirId>> = vec![None; n];
    let mut done = vec![false; n];
    dist[root as usize] = (0.0, 0);
    let mut heap = BinaryHeap::new();
    heap.push(Item {
        cost: 0.0,
        hops: 0,
        node: root,
    });
    while let Some(Item { cost, hops, node }) = heap.pop() {
        if done[node as usize] {
            continue;
        }
        done[node as usize] = true;
        for &(ld, nb, c) in &g.adj[node as usize] {
            let cand = (cost + c, hops + 1);
            let cur = dist[nb as usize];
            let better = match cand.0.total_cmp(&cur.0) {
                Ordering::Less => true,
                Ordering::Equal => {
                    cand.1 < cur.1 || (cand.1 == cur.1 && via[nb as usize].is_some_and(|v| ld < v))
                }
                Ordering::Greater => false,
            };
            if better && !done[nb as usize] {
                dist[nb as usize] = cand;
                via[nb as usize] = Some(ld);
                heap.push(Item {
                    cost: cand.0,
                    hops: cand.1,
                    node: nb,
                });
            }
        }
    }
    via
}

/// Unicast next hops: `table[src][dst]` is the first link-dir on the
/// shortest path from src to dst (None if unreachable or src == dst). The
/// engine computes rows on demand (net/routes.rs); this all-pairs form is
/// the reference its tests compare with.
#[cfg(test)]
pub fn unicast_table(
    g: &Graph,
    from_of: impl Fn(LinkDirId) -> NodeId,
) -> Vec<Vec<Option<LinkDirId>>> {
    let n = g.adj.len();
    let mut table = vec![vec![None; n]; n];
    for src in 0..n as NodeId {
        let via = shortest_path_tree(g, src);
        for dst in 0..n as NodeId {
            if dst == src || via[dst as usize].is_none() {
                continue;
            }
            // Walk back up the tree to the link leaving src.
            let mut ld = via[dst as usize].expect("reachable");
            while from_of(ld) != src {
                ld = via[from_of(ld) as usize].expect("tree path");
            }
            table[src as usize][dst as usize] = Some(ld);
        }
    }
    table
}

/// A multicast distribution tree for one (sender, group).
#[derive(Clone, Debug)]
pub struct McastTree {
    pub root: NodeId,
    pub group: u32,
    /// Per node: the link-dirs on which this node forwards a copy.
    pub out: Vec<Vec<LinkDirId>>,
    /// Per node: deliver locally (the node is a member and not the root).
    pub local: Vec<bool>,
    /// Per node: members at or below this node (receivers a drop here hurts).
    pub below: Vec<Vec<NodeId>>,
}

/// Builds the shortest-path tree from `root` pruned to `members`.
/// Returns the tree and the members that cannot be reached.
pub fn multicast_tree(
    g: &Graph,
    root: NodeId,
    group: u32,
    members: &[NodeId],
    from_of: impl Fn(LinkDirId) -> NodeId,
) -> (McastTree, Vec<NodeId>) {
    let n = g.adj.len();
    let via = shortest_path_tree(g, root);
    let mut out: Vec<Vec<LinkDirId>> = vec![Vec::new(); n];
    let mut local = vec![false; n];
    let mut below: Vec<Vec<NodeId>> = vec![Vec::new(); n];
    let mut unreachable = Vec::new();
    let mut sorted: Vec<NodeId> = members.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for &m in &sorted {
        if m == root {
            continue;
        }
        if via[m as usize].is_none() {
            unreachable.push(m);
            continue;
        }
        local[m as usize] = true;
        below[m as usize].push(m);
        let mut cur = m;
        while let Some(ld) = via[cur as usize] {
            let parent = from_of(ld);
            if !out[parent as usize].contains(&ld) {
                out[parent as usize].push(ld);
            }
            below[parent as usize].push(m);
            cur = parent;
        }
    }
    for o in &mut out {
        o.sort_unstable();
    }
    (
        McastTree {
            root,
            group,
            out,
            local,
            below,
        },
        unreachable,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Line a - b - c plus a long shortcut a - c of cost 5.
    fn graph() -> (Graph, Vec<NodeId>) {
        // link-dirs: 0 a->b, 1 b->a, 2 b->c, 3 c->b, 4 a->c, 5 c->a
        let from = vec![0, 1, 1, 2, 0, 2];
        let g = Graph {
            adj: vec![
                vec![(0, 1, 1.0), (4, 2, 5.0)],
                vec![(1, 0, 1.0), (2, 2, 1.0)],
                vec![(3, 1, 1.0), (5, 0, 5.0)],
            ],
        };
        (g, from)
    }

    #[test]
    fn unicast_follows_least_cost() {
        let (g, from) = graph();
        let t = unicast_table(&g, |ld| from[ld as usize]);
        assert_eq!(t[0][2], Some(0)); // a->b->c beats a->c
        assert_eq!(t[2][0], Some(3));
        assert_eq!(t[1][1], None);
    }

    /// A graph of the given undirected edges (a, b, cost), link i being
    /// link-dirs 2i (a->b) and 2i+1 (b->a).
    fn weighted(n: usize, edges: &[(u32, u32, f64)]) -> Graph {
        let mut adj = vec![Vec::new(); n];
        for (i, &(a, b, c)) in edges.iter().enumerate() {
            adj[a as usize].push((2 * i as u32, b, c));
            adj[b as usize].push((2 * i as u32 + 1, a, c));
        }
        Graph { adj }
    }

    /// Of two paths of equal cost, the one of fewer hops, even when the
    /// longer was found first and enters by a lower link-dir.
    #[test]
    fn equal_costs_go_by_fewer_hops_first() {
        // a=0 c=1 d=2 b=3 e=4: a-c-d-b costs 1 + 0.5 + 2.5 = 4 in three
        // hops and is found first (d at 1.5 before e at 2); a-e-b costs
        // 2 + 2 = 4 in two.
        let g = weighted(
            5,
            &[
                (0, 1, 1.0),
                (1, 2, 0.5),
                (2, 3, 2.5),
                (0, 4, 2.0),
                (4, 3, 2.0),
            ],
        );
        assert_eq!(shortest_path_tree(&g, 0)[3], Some(8)); // e->b
                                                           // a-e-b found first (d at 2.5 after e at 2); a-c-d-b, three hops,
                                                           // enters by the lower link-dir 4 and still loses.
        let g = weighted(
            5,
            &[
                (0, 1, 1.0),
                (1, 2, 1.5),
                (2, 3, 1.5),
                (0, 4, 2.0),
                (4, 3, 2.0),
            ],
        );
        assert_eq!(shortest_path_tree(&g, 0)[3], Some(8));
    }

    /// Of two paths of equal cost and hops, the one entering by the lower
    /// link-dir, whichever was found first.
    #[test]
    fn equal_costs_and_hops_go_by_the_lower_link_dir() {
        // a=0 c=1 d=2 b=3: c is reached before d (the lower node first),
        // but d-b is link 2 (link-dir 4 into b) and c-b link 3 (6).
        let g = weighted(4, &[(0, 1, 1.0), (0, 2, 1.0), (2, 3, 1.0), (1, 3, 1.0)]);
        assert_eq!(shortest_path_tree(&g, 0)[3], Some(4));
        // The other way round: c-b is link 2 (4), d-b link 3 (6).
        let g = weighted(4, &[(0, 1, 1.0), (0, 2, 1.0), (1, 3, 1.0), (2, 3, 1.0)]);
        assert_eq!(shortest_path_tree(&g, 0)[3], Some(4));
    }

    #[test]
    fn multicast_tree_duplicates_per_branch() {
        let (g, from) = graph();
        let (tree, unreachable) = multicast_tree(&g, 1, 0, &[0, 2], |ld| from[ld as usize]);
        assert!(unreachable.is_empty());
        assert_eq!(tree.out[1], vec![1, 2]);
        assert!(tree.local[0] && tree.local[2] && !tree.local[1]);
        assert_eq!(tree.below[1], vec![0, 2]);
    }
}
