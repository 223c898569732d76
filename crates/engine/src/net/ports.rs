//! Which application of a node listens on a port.
//!
//! Asked once per packet delivered (when the packet becomes the first on
//! its last wire). Most nodes have one listener, so each node's first
//! (port, application) pair is kept in one flat array, 8 bytes a node,
//! eight nodes to a cache line; only a node with several listeners goes on
//! to its own list. With a list per node (a vector header in one array, its
//! entries in an allocation of their own) a delivery at 256 flows would cost
//! two cache misses here.

use super::packet::NodeId;

/// No application: a node without listeners.
const NO_APP: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct First {
    port: u16,
    /// The node has listeners after this one (in `rest`).
    more: bool,
    app: u32,
}

const EMPTY: First = First {
    port: 0,
    more: false,
    app: NO_APP,
};

/// Per node: (port, application) pairs, in the order they were added.
pub struct PortTable {
    first: Vec<First>,
    /// Every node's pairs after its first (empty for most nodes).
    rest: Vec<Vec<(u16, u32)>>,
}

impl PortTable {
    /// A table over `nodes` nodes, none listening.
    pub fn new(nodes: usize) -> Self {
        PortTable {
            first: vec![EMPTY; nodes],
            rest: vec![Vec::new(); nodes],
        }
    }

    /// `app` listens on `port` of `node` (after those added before: the
    /// first one added for a port answers).
    pub fn add(&mut self, node: NodeId, port: u16, app: u32) {
        let f = &mut self.first[node as usize];
        if f.app == NO_APP {
            *f = First {
                port,
                more: false,
                app,
            };
        } else {
            f.more = true;
            self.rest[node as usize].push((port, app));
        }
    }

    /// The application of `node` listening on `port`.
    #[inline(always)]
    pub fn listener(&self, node: NodeId, port: u16) -> Option<u32> {
        let f = self.first[node as usize];
        if f.app != NO_APP && f.port == port {
            Some(f.app)
        } else if f.more {
            self.listener_after_first(node, port)
        } else {
            None
        }
    }

    #[inline(never)]
    fn listener_after_first(&self, node: NodeId, port: u16) -> Option<u32> {
        let rest = &self.rest[node as usize];
        rest.iter().find(|p| p.0 == port).map(|p| p.1)
    }

    /// `node`'s (port, application) pairs, in the order they were added.
    pub fn of(&self, node: NodeId) -> impl Iterator<Item = (u16, u32)> + '_ {
        let f = self.first[node as usize];
        let first = (f.app != NO_APP).then_some((f.port, f.app));
        first
            .into_iter()
            .chain(self.rest[node as usize].iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a plain list per node searched in order: the first pair
    /// added for a port answers, on nodes with none, one or many.
    #[test]
    fn answers_as_a_list_searched_in_order() {
        let pairs: [(NodeId, u16, u32); 7] = [
            (1, 80, 0),
            (2, 5004, 1),
            (2, 5005, 2),
            (2, 5004, 3),
            (2, 9, 4),
            (3, 0, 5),
            (3, 7, 6),
        ];
        let mut t = PortTable::new(5);
        let mut lists: Vec<Vec<(u16, u32)>> = vec![Vec::new(); 5];
        for (node, port, app) in pairs {
            t.add(node, port, app);
            lists[node as usize].push((port, app));
        }
        for node in 0..5u32 {
            for port in [0, 7, 9, 80, 5004, 5005, 6000] {
                let want = (lists[node as usize].iter())
                    .find(|p| p.0 == port)
                    .map(|p| p.1);
                assert_eq!(t.listener(node, port), want, "node {node} port {port}");
            }
            let all: Vec<_> = t.of(node).collect();
            assert_eq!(all, lists[node as usize]);
        }
        assert_eq!(t.listener(2, 5004), Some(1), "the first added answers");
        assert_eq!(t.listener(3, 0), Some(5), "port 0 is a port like another");
        assert_eq!(t.listener(0, 0), None, "no listener on node 0");
        // The layout the module is for: a node's first pair in the flat
        // array, only the pairs after it in the node's own list.
        let rest: Vec<usize> = t.rest.iter().map(Vec::len).collect();
        assert_eq!(rest, [0, 0, 3, 1, 0]);
        assert_eq!(
            (t.first[1].port, t.first[1].app, t.first[1].more),
            (80, 0, false)
        );
        assert!(t.first[2].more && !t.first[4].more);
    }
}
