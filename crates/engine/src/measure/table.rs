//! Columnar results: named tables of typed columns, handed to Python as
//! numpy arrays without per-row conversion.

use rustc_hash::FxHashMap;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Str(Vec<String>),
    /// Strings from a shared list: row `i` is `names[codes[i]]`. The names
    /// many rows and tables repeat (nodes, link directions, flows) are then
    /// copied once per run, not once per row: with hundreds of flows those
    /// copies were a tenth of the run's set-up and output. Python receives
    /// the same list of strings as from `Str`.
    Names {
        codes: Vec<u32>,
        names: Arc<[String]>,
    },
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Names { codes, .. } => codes.len(),
        }
    }
    /// Row `i` of a string column.
    pub fn str_at(&self, i: usize) -> Option<&str> {
        match self {
            Column::Str(v) => v.get(i).map(String::as_str),
            Column::Names { codes, names } => codes.get(i).map(|&c| names[c as usize].as_str()),
            _ => None,
        }
    }
    /// A column of the distinct values of `values` (a few kinds or
    /// reasons repeated over many rows), each copied once.
    pub fn coded<'a>(values: impl IntoIterator<Item = &'a str>) -> Column {
        let mut index: FxHashMap<&str, u32> = FxHashMap::default();
        let mut names = Vec::new();
        let codes = (values.into_iter())
            .map(|v| {
                *index.entry(v).or_insert_with(|| {
                    names.push(v.to_string());
                    names.len() as u32 - 1
                })
            })
            .collect();
        Column::Names {
            codes,
            names: names.into(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn new(name: &str) -> Self {
        Table {
            name: name.to_string(),
            columns: Vec::new(),
        }
    }
    pub fn col(mut self, name: &str, c: Column) -> Self {
        self.columns.push((name.to_string(), c));
        self
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.1.len())
    }
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.0 == name).map(|c| &c.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coded_column_reads_back_its_values_in_order() {
        let c = Column::coded(["red", "blue", "red", "red", "green"]);
        let got: Vec<&str> = (0..c.len()).filter_map(|i| c.str_at(i)).collect();
        assert_eq!(got, ["red", "blue", "red", "red", "green"]);
        let Column::Names { names, codes } = &c else {
            panic!("coded");
        };
        assert_eq!(names.len(), 3, "each distinct value once");
        assert_eq!(codes, &[0, 1, 0, 0, 2]);
        assert_eq!(c.str_at(5), None);
    }

    #[test]
    fn string_columns_read_by_row_and_others_do_not() {
        let c = Column::Str(vec!["x".into(), "y".into()]);
        assert_eq!((c.str_at(1), c.str_at(2)), (Some("y"), None));
        assert_eq!(Column::U64(vec![1]).str_at(0), None);
        assert!(!c.is_empty() && Column::F64(vec![]).is_empty());
        let t = Table::new("t")
            .col("a", c)
            .col("b", Column::I64(vec![-1, 2]));
        assert_eq!(t.rows(), 2);
        assert_eq!(t.get("b"), Some(&Column::I64(vec![-1, 2])));
        assert_eq!((t.get("c"), Table::new("e").rows()), (None, 0));
    }
}
