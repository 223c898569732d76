//! When a link direction is down: given windows, or a two-state on/off
//! process with exponentially distributed up and down times.

use crate::sim::{uniform, SimRng, SimTime};

#[derive(Debug)]
pub enum Outages {
    /// Down over each [start, end), sorted, not overlapping.
    Windows(Vec<(SimTime, SimTime)>),
    /// Up for Exp(mean_up), down for Exp(mean_down), alternately, from up
    /// at time zero.
    OnOff {
        mean_up: f64,
        mean_down: f64,
        rng: Box<SimRng>,
    },
}

/// The up/down state of a link direction and its next flip.
#[derive(Debug)]
pub struct UpDown {
    plan: Outages,
    up: bool,
    /// When the state next flips (MAX: never).
    next: SimTime,
    /// Windows: the next one to start.
    window: usize,
}

impl UpDown {
    pub fn new(plan: Outages) -> Self {
        let mut s = UpDown {
            plan,
            up: true,
            next: SimTime::MAX,
            window: 0,
        };
        s.next = s.draw_next(SimTime::ZERO);
        s
    }

    pub fn is_up(&self) -> bool {
        self.up
    }

    /// When the state next flips (MAX: never).
    pub fn next_flip(&self) -> SimTime {
        self.next
    }

    /// Flips the state (at `next_flip()`) and finds the next flip.
    pub fn flip(&mut self) {
        let at = self.next;
        self.up = !self.up;
        self.next = self.draw_next(at);
    }

    fn draw_next(&mut self, at: SimTime) -> SimTime {
        match &mut self.plan {
            Outages::Windows(w) => {
                if self.up {
                    let start = w.get(self.window).map_or(SimTime::MAX, |x| x.0);
                    start.max(at)
                } else {
                    let end = w[self.window].1;
                    self.window += 1;
                    end
                }
            }
            Outages::OnOff {
                mean_up,
                mean_down,
                rng,
            } => {
                let mean = if self.up { *mean_up } else { *mean_down };
                // At least 1 ns, so that time always advances.
                let s = -mean * (1.0 - uniform(rng)).ln();
                at + SimTime::from_secs_f64(s).max(SimTime(1))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RngStreams;

    #[test]
    fn windows_take_the_link_down_and_up_at_their_edges() {
        let s = SimTime::from_secs;
        let mut u = UpDown::new(Outages::Windows(vec![(s(2), s(3)), (s(5), s(9))]));
        let mut flips = vec![];
        while u.next_flip() < SimTime::MAX {
            let t = u.next_flip();
            u.flip();
            flips.push((t.0 / 1_000_000_000, u.is_up()));
        }
        assert_eq!(flips, [(2, false), (3, true), (5, false), (9, true)]);
    }

    #[test]
    fn the_on_off_process_has_the_configured_mean_times() {
        let rng = RngStreams::new(1, 0).stream("x");
        let mut u = UpDown::new(Outages::OnOff {
            mean_up: 2.0,
            mean_down: 0.5,
            rng: Box::new(rng),
        });
        let (mut up, mut down, mut last) = (0.0, 0.0, 0.0);
        for _ in 0..20_000 {
            let t = u.next_flip().as_secs_f64();
            if u.is_up() {
                up += t - last;
            } else {
                down += t - last;
            }
            last = t;
            u.flip();
        }
        // 10,000 draws each: the means within 3% (sd of a mean: 1%).
        assert!((up / 10_000.0 - 2.0).abs() < 0.06, "{}", up / 1e4);
        assert!((down / 10_000.0 - 0.5).abs() < 0.015, "{}", down / 1e4);
    }
}
