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

#[cfg(test)]
mod tests {
    use super::*;

    fn arc(v: &[&str]) -> Arc<[String]> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_codes_name_every_member_and_the_pooled_receiver_is_last() {
        let names = RunNames {
            nodes: arc(&["a", "b", "*"]),
            links: arc(&["a-b"]),
            link_dirs: arc(&["a-b:a->b", "a-b:b->a"]),
            flows: arc(&["f", "f/ack"]),
        };
        let json = serde_json::to_string(&names.codes()).expect("json");
        assert_eq!(
            json,
            r#"{"flow":["f","f/ack"],"link_dir":["a-b:a->b","a-b:b->a"],"node":["a","b"]}"#
        );
        assert_eq!(names.pooled(), 2);
        let col = name_column(&names.flows, vec![1, 0]);
        assert_eq!((col.str_at(0), col.str_at(1)), (Some("f/ack"), Some("f")));
    }
}
