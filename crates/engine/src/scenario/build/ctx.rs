//! What a model's construction may use and add to: the built topology, the
//! flow ids, multicast trees, applications, ports, flow metadata and the
//! errors only the built topology reveals.

use super::super::check::FieldError;
use crate::app::App;
use crate::measure::recorder::FlowMeta;
use crate::net::mcast::{forest_components, SharedTree, Tree};
use crate::net::ports::PortTable;
use crate::net::routes::RouteTable;
use crate::net::routing::{multicast_tree, Graph};
use crate::net::{LinkDirId, NodeId};
use crate::sim::{RngStreams, SimRng, SimTime};
use crate::world::topology::{LinkDir, Node};
use crate::world::{AppSlot, Topology};
use rustc_hash::FxHashMap as HashMap;

/// Who holds a port.
struct PortOwner {
    /// Name of the flow or session that claimed it (for messages).
    owner: String,
    /// UDP sinks of several flows may share one port (and one sink).
    shareable: bool,
}

/// The outcome of [`BuildCtx::claim_port`].
pub enum PortClaim {
    /// The port is now the caller's.
    Claimed,
    /// A shareable sink already listens there; use it.
    Shared,
    /// Someone else holds it: the name of the holder.
    Taken(String),
}

pub struct BuildCtx<'a> {
    pub rng: &'a RngStreams,
    pub horizon: SimTime,
    pub nodes: Vec<Node>,
    pub links: Vec<LinkDir>,
    pub link_names: Vec<String>,
    pub graph: Graph,
    /// Unicast next hops.
    pub routes: RouteTable,
    /// Members of each group (sorted), the scenario's groups first, then
    /// the ones sessions create.
    pub group_members: Vec<Vec<NodeId>>,
    pub trees: Vec<Tree>,
    pub tree_of: HashMap<(NodeId, u32), u32>,
    /// Each node's component, when the topology is a forest (no cycle):
    /// then a group within one component shares one tree.
    forest: Option<Vec<u32>>,
    /// Group -> its shared tree's index.
    shared_of: HashMap<u32, u32>,
    pub apps: Vec<AppSlot>,
    /// Per node: (port, app index).
    pub ports: PortTable,
    pub metas: Vec<FlowMeta>,
    pub errors: Vec<FieldError>,
    node_id: HashMap<String, NodeId>,
    group_id: HashMap<String, u32>,
    flow_id: HashMap<String, u32>,
    port_owner: HashMap<(NodeId, u16), PortOwner>,
}

impl<'a> BuildCtx<'a> {
    pub fn new(
        rng: &'a RngStreams,
        horizon: SimTime,
        topo: Topology,
        groups: Vec<(String, Vec<NodeId>)>,
        flow_id: HashMap<String, u32>,
    ) -> Self {
        let node_id = (topo.nodes.iter().enumerate())
            .map(|(i, n)| (n.name.clone(), i as NodeId))
            .collect();
        let group_id = (groups.iter().enumerate())
            .map(|(i, (g, _))| (g.clone(), i as u32))
            .collect();
        let n = topo.nodes.len();
        let forest = forest_components(&topo.graph);
        BuildCtx {
            rng,
            horizon,
            nodes: topo.nodes,
            links: topo.links,
            link_names: topo.link_names,
            graph: topo.graph,
            routes: topo.routes,
            group_members: groups.into_iter().map(|(_, m)| m).collect(),
            trees: Vec::new(),
            tree_of: HashMap::default(),
            forest,
            shared_of: HashMap::default(),
            apps: Vec::new(),
            ports: PortTable::new(n),
            metas: Vec::new(),
            errors: Vec::new(),
            node_id,
            group_id,
            flow_id,
            port_owner: HashMap::default(),
        }
    }

    pub fn err(&mut self, path: impl Into<String>, msg: impl Into<String>) {
        self.errors.push(FieldError::new(path, msg));
    }

    /// The id of a node the scenario names (validated).
    pub fn node(&self, name: &str) -> NodeId {
        self.node_id[name]
    }
    pub fn node_name(&self, id: NodeId) -> &str {
        &self.nodes[id as usize].name
    }
    /// The id of a scenario group (validated).
    pub fn group(&self, name: &str) -> u32 {
        self.group_id[name]
    }
    /// A new multicast group (for a session); returns its id.
    pub fn new_group(&mut self, members: &[NodeId]) -> u32 {
        self.group_members.push(members.to_vec());
        (self.group_members.len() - 1) as u32
    }
    /// The recorder id of a flow (every flow is named before construction).
    pub fn flow_id(&self, name: &str) -> u32 {
        self.flow_id[name]
    }
    pub fn stream(&self, name: &str) -> SimRng {
        self.rng.stream(name)
    }

    /// The multicast tree of (`root`, group `gid`), built on first use.
    /// Returns its index, and (when just built) the members it cannot reach.
    /// On a forest, a group within one component gets one tree that all its
    /// senders share (net/mcast.rs): the same links, in the same order.
    pub fn tree(&mut self, root: NodeId, gid: u32, members: &[NodeId]) -> (u32, Vec<NodeId>) {
        if let Some(&i) = self.tree_of.get(&(root, gid)) {
            return (i, Vec::new());
        }
        if let Some(i) = self.shared_tree(root, gid, members) {
            self.tree_of.insert((root, gid), i);
            return (i, Vec::new());
        }
        let links = &self.links;
        let from_of = |ld: LinkDirId| links[ld as usize].from;
        let (tree, unreachable) = multicast_tree(&self.graph, root, gid, members, from_of);
        let i = self.trees.len() as u32;
        self.tree_of.insert((root, gid), i);
        self.trees.push(Tree::Source(tree));
        (i, unreachable)
    }

    /// The group's shared tree, if the topology is a forest, `root` is a
    /// member (a sender outside the group needs its own branch) and every
    /// member is in one component.
    fn shared_tree(&mut self, root: NodeId, gid: u32, members: &[NodeId]) -> Option<u32> {
        if let Some(&i) = self.shared_of.get(&gid) {
            let Tree::Shared(t) = &self.trees[i as usize] else {
                unreachable!("shared_of holds shared trees")
            };
            return t.is_member(root).then_some(i);
        }
        let comp = self.forest.as_ref()?;
        let c = comp[root as usize];
        if !members.contains(&root) || !members.iter().all(|&m| comp[m as usize] == c) {
            return None;
        }
        let i = self.trees.len() as u32;
        let tree = SharedTree::new(&self.graph, gid, members);
        self.trees.push(Tree::Shared(tree));
        self.shared_of.insert(gid, i);
        Some(i)
    }

    /// Walks the unicast route from `a` to `b`: a dead end or a loop
    /// (possible with explicit routes) is reported.
    pub fn route_problem(&mut self, a: NodeId, b: NodeId) -> Option<&'static str> {
        let mut at = a;
        let mut hops = 0;
        while at != b {
            if hops > self.nodes.len() {
                return Some("routes loop");
            }
            match self.routes.next_hop(at, b) {
                Some(ld) => at = self.links[ld as usize].to,
                None => return Some("no route"),
            }
            hops += 1;
        }
        None
    }

    /// Index the next application added will get.
    pub fn next_app(&self) -> u32 {
        self.apps.len() as u32
    }
    /// Adds an application on `node`, started at `start` (its index is
    /// the `next_app` before).
    pub fn add_app(&mut self, node: NodeId, start: SimTime, app: Box<dyn App>) {
        self.apps.push(AppSlot { node, start, app });
    }

    /// Claims `port` on `node` for application `app`, on behalf of `owner`.
    pub fn claim_port(
        &mut self,
        node: NodeId,
        port: u16,
        app: u32,
        owner: &str,
        shareable: bool,
    ) -> PortClaim {
        match self.port_owner.get(&(node, port)) {
            Some(o) if o.shareable && shareable => PortClaim::Shared,
            Some(o) => PortClaim::Taken(o.owner.clone()),
            None => {
                let owner = owner.to_string();
                self.port_owner
                    .insert((node, port), PortOwner { owner, shareable });
                self.ports.add(node, port, app);
                PortClaim::Claimed
            }
        }
    }

    /// Adds the metadata of flow `id`; flows are added in id order.
    pub fn add_flow_meta(&mut self, id: u32, meta: FlowMeta) {
        assert_eq!(id as usize, self.metas.len(), "flow metadata out of order");
        self.metas.push(meta);
    }
}
