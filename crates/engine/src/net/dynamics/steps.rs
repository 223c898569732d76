//! A value that changes in steps over time: piecewise constant from time
//! zero, optionally repeating with a period.

use crate::sim::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct Steps<T: Copy> {
    /// (start, value), starts strictly increasing, the first at zero.
    points: Vec<(SimTime, T)>,
    /// The schedule starts again every `period` (longer than the last
    /// start); None: the last value holds for ever.
    period: Option<SimTime>,
}

impl<T: Copy> Steps<T> {
    pub fn constant(v: T) -> Self {
        Steps {
            points: vec![(SimTime::ZERO, v)],
            period: None,
        }
    }

    /// Steps from validated points (the first at zero, starts increasing)
    /// and an optional period (longer than the last start).
    pub fn new(points: Vec<(SimTime, T)>, period: Option<SimTime>) -> Self {
        debug_assert!(points.first().is_some_and(|p| p.0 == SimTime::ZERO));
        debug_assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
        debug_assert!(period.is_none_or(|p| p > points.last().unwrap().0));
        Steps { points, period }
    }

    pub fn is_constant(&self) -> bool {
        self.points.len() == 1
    }

    /// `t` within the current period, and the period's start.
    fn fold(&self, t: SimTime) -> (SimTime, SimTime) {
        match self.period {
            Some(p) => {
                let base = t.0 / p.0 * p.0;
                (SimTime(t.0 - base), SimTime(base))
            }
            None => (t, SimTime::ZERO),
        }
    }

    /// The value in force at `t` (a step starting at `t` included).
    pub fn value_at(&self, t: SimTime) -> T {
        let (r, _) = self.fold(t);
        let i = self.points.partition_point(|p| p.0 <= r);
        self.points[i - 1].1
    }

    /// The first step starting strictly after `t`, with its value.
    pub fn next_change(&self, t: SimTime) -> Option<(SimTime, T)> {
        if self.is_constant() {
            return None;
        }
        let (r, base) = self.fold(t);
        let i = self.points.partition_point(|p| p.0 <= r);
        match (self.points.get(i), self.period) {
            (Some(&(at, v)), _) => Some((base + at, v)),
            (None, Some(p)) => Some((base + p, self.points[0].1)),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> SimTime {
        SimTime::from_secs(x)
    }

    #[test]
    fn a_schedule_holds_each_value_from_its_start_to_the_next() {
        let st = Steps::new(vec![(s(0), 4), (s(25), 2), (s(50), 3)], None);
        assert_eq!(st.value_at(s(0)), 4);
        assert_eq!(st.value_at(SimTime(s(25).0 - 1)), 4);
        assert_eq!(st.value_at(s(25)), 2, "a step's start belongs to it");
        assert_eq!(st.value_at(s(1000)), 3, "the last value holds");
        assert_eq!(st.next_change(s(0)), Some((s(25), 2)));
        assert_eq!(st.next_change(s(25)), Some((s(50), 3)));
        assert_eq!(st.next_change(s(50)), None);
        assert_eq!(Steps::constant(7).next_change(s(0)), None);
    }

    #[test]
    fn a_repeating_schedule_starts_again_each_period() {
        let st = Steps::new(vec![(s(0), 1), (s(2), 5)], Some(s(3)));
        let at: Vec<u32> = (0..7).map(|k| st.value_at(s(k))).collect();
        assert_eq!(at, [1, 1, 5, 1, 1, 5, 1]);
        assert_eq!(st.next_change(s(2)), Some((s(3), 1)));
        assert_eq!(st.next_change(s(3)), Some((s(5), 5)));
        assert_eq!(st.next_change(SimTime(s(6).0 - 1)), Some((s(6), 1)));
    }

    /// One step that repeats is a constant: no change to wake for, ever.
    #[test]
    fn one_repeating_step_never_changes() {
        let st = Steps::new(vec![(s(0), 9)], Some(s(3)));
        assert!(st.is_constant());
        assert_eq!(st.next_change(s(0)), None);
        assert_eq!(st.next_change(s(7)), None);
        assert_eq!(st.value_at(s(7)), 9);
    }
}
