//! Round-trip time estimation and the retransmission timeout (RFC 6298).

use crate::sim::SimTime;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<u64>,
    rttvar: u64,
    rto: u64,
    min_rto: u64,
    max_rto: u64,
    /// Clock granularity G (RFC 6298 section 2).
    granularity: u64,
}

impl RttEstimator {
    /// `initial` is the RTO before any sample (RFC 6298 2.1: 1 s).
    pub fn new(initial: SimTime, min_rto: SimTime, max_rto: SimTime, granularity: SimTime) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: 0,
            rto: initial
                .as_nanos()
                .clamp(min_rto.as_nanos(), max_rto.as_nanos()),
            min_rto: min_rto.as_nanos(),
            max_rto: max_rto.as_nanos(),
            granularity: granularity.as_nanos(),
        }
    }

    /// Takes a measurement R (RFC 6298 2.2 and 2.3) and recomputes RTO,
    /// which also clears any backoff (5.7).
    pub fn sample(&mut self, r: SimTime) {
        let r = r.as_nanos();
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|, then SRTT <- 7/8 SRTT + 1/8 R'
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(r)) / 4;
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        let rto = self.srtt.unwrap() + self.granularity.max(4 * self.rttvar);
        self.rto = rto.clamp(self.min_rto, self.max_rto);
    }

    /// Doubles RTO after a timeout (5.5), up to the maximum.
    pub fn backoff(&mut self) {
        self.rto = (self.rto * 2).min(self.max_rto);
    }

    /// Sets RTO directly (RFC 6298 5.7: 3 s after a lost SYN).
    pub fn reset_rto(&mut self, rto: SimTime) {
        if self.srtt.is_none() {
            self.rto = rto.as_nanos().clamp(self.min_rto, self.max_rto);
        }
    }

    pub fn rto(&self) -> SimTime {
        SimTime(self.rto)
    }
    pub fn srtt(&self) -> Option<SimTime> {
        self.srtt.map(SimTime)
    }
    pub fn rttvar(&self) -> SimTime {
        SimTime(self.rttvar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            SimTime::from_secs(1),
            SimTime::from_millis(200),
            SimTime::from_secs(60),
            SimTime::from_millis(1),
        )
    }

    #[test]
    fn first_sample_sets_srtt_r_and_rttvar_half_r() {
        let mut e = est();
        assert_eq!(
            e.rto(),
            SimTime::from_secs(1),
            "RFC 6298 2.1: initial RTO 1 s"
        );
        e.sample(SimTime::from_millis(100));
        assert_eq!(e.srtt(), Some(SimTime::from_millis(100)));
        assert_eq!(e.rttvar(), SimTime::from_millis(50));
        // RTO = SRTT + max(G, 4 RTTVAR) = 100 + 200 ms
        assert_eq!(e.rto(), SimTime::from_millis(300));
    }

    #[test]
    fn later_samples_use_the_ewma_with_alpha_one_eighth_beta_one_quarter() {
        let mut e = est();
        e.sample(SimTime::from_millis(100));
        e.sample(SimTime::from_millis(200));
        // RTTVAR = 3/4*50 + 1/4*|100-200| = 62.5 ms; SRTT = 7/8*100 + 1/8*200 = 112.5 ms
        assert_eq!(e.rttvar(), SimTime::from_micros(62_500));
        assert_eq!(e.srtt(), Some(SimTime::from_micros(112_500)));
        assert_eq!(e.rto(), SimTime::from_micros(112_500 + 250_000));
    }

    #[test]
    fn rto_has_a_floor_and_backoff_doubles_to_a_ceiling() {
        let mut e = est();
        e.sample(SimTime::from_millis(10));
        assert_eq!(e.rto(), SimTime::from_millis(200), "minimum RTO applies");
        for _ in 0..20 {
            e.backoff();
        }
        assert_eq!(e.rto(), SimTime::from_secs(60));
        e.sample(SimTime::from_millis(10));
        assert_eq!(
            e.rto(),
            SimTime::from_millis(200),
            "a new sample clears the backoff"
        );
    }
}
