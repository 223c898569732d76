//! The run's names (nodes, links, link directions, flows), moved out of
//! the world once at the end of a run for every table that names its
//! members (see [`Column::Names`]) and for the run's metadata.

use super::Column;
use std::sync::Arc;

/// The run's names.
pub struct RunNames {
    /// Node names, then "*": a pooled row's receiver (all receivers).
    pub nodes: Arc<[String]>,
    pub links: Arc<[String]>,
    pub link_dirs: Arc<[String]>,
    pub flows: Arc<[String]>,
}

impl RunNames {
    /// The names behind the integer codes of the per-packet tables.
    pub fn codes(&self) -> Codes<'_> {
        fn strs(v: &[String]) -> Vec<&str> {
            v.iter().map(String::as_str).collect()
        }
        Codes {
            flows: strs(&self.flows),
            link_dirs: strs(&self.link_dirs),
            nodes: strs(&self.nodes[..self.nodes.len() - 1]),
        }
    }

    /// The code of a pooled row's receiver, "*".
    pub fn pooled(&self) -> u32 {
        self.nodes.len() as u32 - 1
    }
}

/// A column of names from `list`, by their indices.
pub fn name_column(list: &Arc<[String]>, codes: Vec<u32>) -> Column {
    Column::Names {
        codes,
        names: Arc::clone(list),
    }
}

/// Names behind the integer codes of the large per-packet tables (as
/// the run's metadata gives them).
#[derive(serde::Serialize)]
pub struct Codes<'a> {
    #[serde(rename = "flow")]
    pub flows: Vec<&'a str>,
    #[serde(rename = "link_dir")]
    pub link_dirs: Vec<&'a str>,
    #[serde(rename = "node")]
    pub nodes: Vec<&'a str>,
}
