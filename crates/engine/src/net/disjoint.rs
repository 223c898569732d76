//! Disjoint sets of nodes (union-find with path halving): which nodes a
//! set of links joins. For multicast forests (`mcast`) and for splitting
//! a run into partitions (`world::partition`).

pub struct DisjointSets(Vec<u32>);

impl DisjointSets {
    /// `n` nodes, each in a set of its own.
    pub fn new(n: usize) -> Self {
        DisjointSets((0..n as u32).collect())
    }

    /// The representative of `x`'s set.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.0[x as usize] != x {
            let up = self.0[self.0[x as usize] as usize];
            self.0[x as usize] = up;
            x = up;
        }
        x
    }

    /// Joins the sets of `a` and `b` (`b`'s representative stands for
    /// both); false if they were one set already.
    pub fn join(&mut self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        self.0[ra as usize] = rb;
        ra != rb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_are_transitive_and_a_second_join_reports_it() {
        let mut s = DisjointSets::new(5);
        assert!(s.join(0, 1) && s.join(3, 4) && s.join(1, 4));
        assert!(!s.join(0, 3));
        assert_eq!(s.find(0), s.find(3));
        assert_ne!(s.find(2), s.find(0));
    }
}
