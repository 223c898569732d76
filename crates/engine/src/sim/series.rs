//! Time series that state machines record for the results (a window, a
//! rate, a scale), kept only when the scenario asks for them
//! (`measure.series`): recorded on change they grow with simulated time
//! (TCP's window changes on nearly every ACK), so by default a run's
//! memory must not depend on them, and when asked for each stops at a row
//! limit (`limits.max_series_rows`). Nothing in a model reads its series.

use super::SimTime;

/// Samples of one variable, in time order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    points: Vec<(SimTime, f64)>,
    /// Rows kept at most (0: off).
    rows: usize,
}

impl Default for Series {
    /// Recording: a state machine alone (in its unit tests) keeps its
    /// series; the engine turns them off when the scenario does not ask.
    fn default() -> Self {
        Series {
            points: Vec::new(),
            rows: usize::MAX,
        }
    }
}

impl Series {
    /// Records `value` at `now`.
    pub fn push(&mut self, now: SimTime, value: f64) {
        if self.points.len() < self.rows {
            self.points.push((now, value));
        }
    }

    /// Records `value` at `now` if it differs from the last value recorded.
    pub fn push_change(&mut self, now: SimTime, value: f64) {
        if self.points.len() < self.rows && self.points.last().is_none_or(|x| x.1 != value) {
            self.points.push((now, value));
        }
    }

    /// Turns recording on or off (off also frees what was recorded).
    pub fn set_on(&mut self, on: bool) {
        self.set_rows(if on { usize::MAX } else { 0 });
    }

    /// Keeps at most `rows` rows (0: off, which also frees what was
    /// recorded); once full, later values are left out.
    pub fn set_rows(&mut self, rows: usize) {
        self.rows = rows;
        if rows == 0 {
            self.points = Vec::new();
        }
    }

    pub fn points(&self) -> &[(SimTime, f64)] {
        &self.points
    }

    /// The samples with every value multiplied by `k` (unit changes).
    pub fn scaled(&self, k: f64) -> Vec<(SimTime, f64)> {
        self.points.iter().map(|&(t, v)| (t, v * k)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_changes_only_and_nothing_when_off() {
        let t = SimTime::from_millis;
        let mut s = Series::default();
        s.push_change(t(0), 1.0);
        s.push_change(t(1), 1.0);
        s.push_change(t(2), 2.0);
        s.push(t(3), 2.0);
        assert_eq!(s.points(), &[(t(0), 1.0), (t(2), 2.0), (t(3), 2.0)]);
        assert_eq!(s.scaled(8.0)[1], (t(2), 16.0));
        let mut capped = Series::default();
        capped.set_rows(2);
        for k in 0..5 {
            capped.push(t(k), k as f64);
        }
        assert_eq!(capped.points(), &[(t(0), 0.0), (t(1), 1.0)]);
        // The cap holds for changes too.
        capped.push_change(t(6), 9.0);
        assert_eq!(capped.points().len(), 2);
        s.set_on(false);
        s.push(t(4), 5.0);
        s.push_change(t(5), 6.0);
        assert!(s.points().is_empty());
        // On again, without a cap.
        s.set_on(true);
        for k in 0..3 {
            s.push_change(t(10 + k), k as f64);
        }
        assert_eq!(s.points().len(), 3);
    }
}
