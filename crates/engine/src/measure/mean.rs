//! A mean kept as a count and a running sum, so that a model reporting a
//! mean over a run does not keep every sample (memory flat in simulated
//! time). Samples are summed in arrival order, as a sum over the list
//! would be: the result is the same to the bit.

#[derive(Clone, Copy, Debug, Default)]
pub struct RunningMean {
    count: u64,
    sum: f64,
}

impl RunningMean {
    pub fn add(&mut self, x: f64) {
        self.count += 1;
        self.sum += x;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// NaN without samples.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum / self.count as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RunningMean;

    #[test]
    fn equals_the_sum_over_the_list_divided_by_its_length() {
        let xs = [0.1, 0.7, 1e-9, 3.3, 0.2];
        let mut m = RunningMean::default();
        assert!(m.mean().is_nan());
        for x in xs {
            m.add(x);
        }
        assert_eq!(m.count(), 5);
        assert_eq!(m.mean(), xs.iter().sum::<f64>() / 5.0);
    }
}
