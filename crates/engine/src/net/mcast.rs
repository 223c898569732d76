//! Multicast delivery state: one tree per (sender, group), or one tree
//! shared by every sender of a group where their trees coincide.
//!
//! On a forest (no cycles) the path between two nodes is unique, so the
//! shortest-path tree from any member to the others is the same set of
//! links: the smallest subtree spanning the group. A [`SharedTree`] holds
//! that subtree once; a packet is forwarded on every tree link of a node
//! except the one it came in on. A group of n members then needs O(n)
//! state instead of n trees of O(n) each, and forwarding visits the links
//! in the same order as the per-sender tree, so results are identical.

use super::packet::{LinkDirId, NodeId};
use super::routing::{Graph, McastTree};

/// The reverse direction of a link-dir: links are built as a pair, a->b
/// then b->a (scenario/build/topology.rs).
pub fn reverse(ld: LinkDirId) -> LinkDirId {
    ld ^ 1
}

/// Whether the graph has no cycle; if so, each node's component number.
pub fn forest_components(g: &Graph) -> Option<Vec<u32>> {
    let mut sets = super::disjoint::DisjointSets::new(g.adj.len());
    for (a, out) in g.adj.iter().enumerate() {
        for &(ld, b, _) in out {
            // Each link once, from its a->b direction.
            if ld % 2 == 1 {
                continue;
            }
            if !sets.join(a as u32, b) {
                return None;
            }
        }
    }
    Some((0..g.adj.len() as u32).map(|x| sets.find(x)).collect())
}

/// The subtree of a forest spanning a group, shared by all its senders.
#[derive(Clone, Debug)]
pub struct SharedTree {
    pub group: u32,
    /// Per node: the tree's link-dirs out of it, with their far end, sorted.
    out: Vec<Vec<(LinkDirId, NodeId)>>,
    /// Per node: a member of the group.
    member: Vec<bool>,
}

impl SharedTree {
    /// The subtree spanning `members` (all in one component of the forest
    /// `g`): prune every non-member leaf until none is left.
    pub fn new(g: &Graph, group: u32, members: &[NodeId]) -> Self {
        let n = g.adj.len();
        let mut member = vec![false; n];
        for &m in members {
            member[m as usize] = true;
        }
        // Keep a link iff members lie on both of its sides: walk from a
        // member root, counting members below each node.
        let root = members[0];
        let mut order = Vec::with_capacity(n);
        let mut up: Vec<Option<LinkDirId>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[root as usize] = true;
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            order.push(v);
            for &(ld, w, _) in &g.adj[v as usize] {
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    up[w as usize] = Some(ld);
                    stack.push(w);
                }
            }
        }
        let mut below = vec![0u32; n];
        let mut out: Vec<Vec<(LinkDirId, NodeId)>> = vec![Vec::new(); n];
        for &v in order.iter().rev() {
            below[v as usize] += member[v as usize] as u32;
            let Some(ld) = up[v as usize] else { continue };
            let parent = g.adj[v as usize]
                .iter()
                .find(|&&(l, _, _)| l == reverse(ld))
                .map(|&(_, p, _)| p)
                .expect("a link has both directions");
            below[parent as usize] += below[v as usize];
            if below[v as usize] > 0 {
                out[parent as usize].push((ld, v));
                out[v as usize].push((reverse(ld), parent));
            }
        }
        for o in &mut out {
            o.sort_unstable();
        }
        SharedTree { group, out, member }
    }

    /// Link-dirs a copy at `node` goes out on, having come in on `via`
    /// (None where it originates).
    pub fn targets(
        &self,
        node: NodeId,
        via: Option<LinkDirId>,
    ) -> impl Iterator<Item = LinkDirId> + '_ {
        let back = via.map(reverse);
        self.out[node as usize]
            .iter()
            .map(|&(ld, _)| ld)
            .filter(move |&ld| Some(ld) != back)
    }

    pub fn is_member(&self, node: NodeId) -> bool {
        self.member[node as usize]
    }

    /// Members a copy on link-dir `ld` (towards `to`) would reach.
    pub fn receivers_via(&self, ld: LinkDirId, to: NodeId) -> Vec<NodeId> {
        let mut got = Vec::new();
        let mut stack = vec![(to, ld)];
        while let Some((v, came)) = stack.pop() {
            if self.member[v as usize] {
                got.push(v);
            }
            for &(l, w) in &self.out[v as usize] {
                if l != reverse(came) {
                    stack.push((w, l));
                }
            }
        }
        got.sort_unstable();
        got
    }
}

/// A group's delivery state for one sender.
#[derive(Clone, Debug)]
pub enum Tree {
    /// The sender's own shortest-path tree.
    Source(McastTree),
    /// The group's shared tree (a forest topology).
    Shared(SharedTree),
}

impl Tree {
    /// Fills `buf` with the link-dirs a copy at `node` goes out on (a packet
    /// from `src` that came in on `via`) and says whether it is delivered
    /// at `node` too.
    pub fn targets_into(
        &self,
        node: NodeId,
        via: Option<LinkDirId>,
        src: NodeId,
        buf: &mut Vec<LinkDirId>,
    ) -> bool {
        buf.clear();
        match self {
            Tree::Source(t) => {
                buf.extend_from_slice(&t.out[node as usize]);
                t.local[node as usize]
            }
            Tree::Shared(t) => {
                buf.extend(t.targets(node, via));
                node != src && t.is_member(node)
            }
        }
    }

    /// Receivers a copy deprived at `node` would have reached. For a
    /// shared tree only a copy at its origin can find no way on, and it
    /// reaches nobody; see [`Tree::receivers_via`] for copies on links.
    pub fn receivers_at(&self, node: NodeId) -> Vec<NodeId> {
        match self {
            Tree::Source(t) => t.below[node as usize].clone(),
            Tree::Shared(_) => Vec::new(),
        }
    }

    /// Receivers a copy on link-dir `ld` (towards `to`) would have reached.
    pub fn receivers_via(&self, ld: LinkDirId, to: NodeId) -> Vec<NodeId> {
        match self {
            Tree::Source(t) => t.below[to as usize].clone(),
            Tree::Shared(t) => t.receivers_via(ld, to),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::routing::multicast_tree;

    use crate::net::routing::unit_graph as graph;

    #[test]
    fn forests_are_recognised_and_cycles_are_not() {
        let (g, _) = graph(5, &[(0, 1), (1, 2), (3, 4)]);
        let c = forest_components(&g).expect("a forest");
        assert_eq!(c[0], c[2]);
        assert_eq!(c[3], c[4]);
        assert_ne!(c[0], c[3]);
        let (g, _) = graph(3, &[(0, 1), (1, 2), (2, 0)]);
        assert_eq!(forest_components(&g), None);
        // Two parallel links between the same nodes are a cycle too.
        let (g, _) = graph(2, &[(0, 1), (0, 1)]);
        assert_eq!(forest_components(&g), None);
    }

    /// Star 0 with children 1, 2, 3; 4 under 1; member set {2, 3, 4}:
    /// node 1 is on the tree (it leads to 4), nothing else is pruned.
    #[test]
    fn the_shared_tree_spans_the_members_and_forwards_away_from_the_arrival() {
        let (g, _) = graph(6, &[(0, 1), (0, 2), (0, 3), (1, 4), (3, 5)]);
        let t = SharedTree::new(&g, 0, &[2, 3, 4]);
        // Node 5 is a non-member leaf: link 3-5 (dirs 8, 9) is pruned.
        assert_eq!(t.targets(3, None).collect::<Vec<_>>(), vec![5]);
        assert_eq!(t.targets(0, Some(3)).collect::<Vec<_>>(), vec![0, 4]);
        assert_eq!(t.targets(0, None).collect::<Vec<_>>(), vec![0, 2, 4]);
        assert_eq!(t.targets(1, Some(0)).collect::<Vec<_>>(), vec![6]);
        assert_eq!(t.receivers_via(0, 1), vec![4]);
        assert_eq!(t.receivers_via(5, 0), vec![2, 4]);
        assert!(t.is_member(4) && !t.is_member(1) && !t.is_member(5));
    }

    /// On a forest every member's shortest-path tree is the shared tree:
    /// walking both from each member gives the same copies on the same
    /// link-dirs in the same order, and the same receivers below each link.
    #[test]
    fn shared_and_per_sender_trees_agree_on_a_forest() {
        // A two-level tree: 0 root, 1-3 routers, 4-12 leaves; members are
        // some leaves and one router.
        let mut edges = vec![(0, 1), (0, 2), (0, 3)];
        for leaf in 4..13 {
            edges.push(((leaf - 4) / 3 + 1, leaf));
        }
        let (g, from) = graph(13, &edges);
        let members = [2, 4, 5, 8, 11, 12];
        let shared = Tree::Shared(SharedTree::new(&g, 0, &members));
        for &root in &members {
            let (src_tree, unreachable) =
                multicast_tree(&g, root, 0, &members, |ld| from[ld as usize]);
            assert!(unreachable.is_empty());
            let per_sender = Tree::Source(src_tree);
            // Every other member, and only they, get a copy.
            let mut others: Vec<NodeId> = members.iter().copied().filter(|&m| m != root).collect();
            others.sort_unstable();
            let mut at_root = per_sender.receivers_at(root);
            at_root.sort_unstable();
            assert_eq!(
                at_root, others,
                "a copy lost at its origin reaches none of them"
            );
            assert!(shared.receivers_at(root).is_empty());
            let mut delivered = Vec::new();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let mut stack = vec![(root, None)];
            while let Some((node, via)) = stack.pop() {
                let la = per_sender.targets_into(node, via, root, &mut a);
                let lb = shared.targets_into(node, via, root, &mut b);
                assert_eq!((la, &a), (lb, &b), "root {root} node {node}");
                if la {
                    delivered.push(node);
                }
                for &ld in &a {
                    let to = g.adj[node as usize]
                        .iter()
                        .find(|e| e.0 == ld)
                        .expect("out")
                        .1;
                    let below = per_sender.receivers_via(ld, to);
                    assert_eq!(below, shared.receivers_via(ld, to));
                    // A tree link leads to members only, at least one.
                    assert!(!below.is_empty() && below.iter().all(|r| others.contains(r)));
                    stack.push((to, Some(ld)));
                }
            }
            delivered.sort_unstable();
            assert_eq!(delivered, others, "root {root}");
        }
    }
}
