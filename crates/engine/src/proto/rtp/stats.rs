//! Per-source reception statistics (RFC 3550 appendix A.1, A.3, A.8):
//! extended highest sequence number with wrap and restart handling,
//! cumulative and fractional loss, and the interarrival jitter estimator.

const RTP_SEQ_MOD: u32 = 1 << 16;
/// A.1: a source is valid after this many packets in sequence.
const MIN_SEQUENTIAL: u32 = 2;
const MAX_DROPOUT: u16 = 3000;
const MAX_MISORDER: u16 = 100;

#[derive(Clone, Debug, Default)]
pub struct SourceStats {
    max_seq: u16,
    /// Shifted count of sequence number cycles.
    cycles: u32,
    base_seq: u32,
    bad_seq: u32,
    probation: u32,
    pub received: u32,
    expected_prior: u32,
    received_prior: u32,
    transit: Option<i64>,
    /// Interarrival jitter in timestamp units (A.8), kept as a float for
    /// the 1/16 gain.
    jitter: f64,
    started: bool,
}

impl SourceStats {
    /// A.1 init_seq.
    fn init_seq(&mut self, seq: u16) {
        self.base_seq = seq as u32;
        self.max_seq = seq;
        self.bad_seq = RTP_SEQ_MOD + 1; // so seq == bad_seq is false
        self.cycles = 0;
        self.received = 0;
        self.received_prior = 0;
        self.expected_prior = 0;
    }

    /// A.1 update_seq: true if the packet is valid (counted).
    pub fn update_seq(&mut self, seq: u16) -> bool {
        if !self.started {
            self.started = true;
            self.init_seq(seq);
            self.max_seq = seq.wrapping_sub(1);
            self.probation = MIN_SEQUENTIAL;
        }
        let udelta = seq.wrapping_sub(self.max_seq);
        if self.probation > 0 {
            // Source not yet valid: packets must arrive in sequence.
            if seq == self.max_seq.wrapping_add(1) {
                self.probation -= 1;
                self.max_seq = seq;
                if self.probation == 0 {
                    self.init_seq(seq);
                    self.received += 1;
                    return true;
                }
            } else {
                self.probation = MIN_SEQUENTIAL - 1;
                self.max_seq = seq;
            }
            return false;
        } else if udelta < MAX_DROPOUT {
            // In order, with a permissible gap.
            if seq < self.max_seq {
                self.cycles += RTP_SEQ_MOD; // wrapped
            }
            self.max_seq = seq;
        } else if udelta as u32 <= RTP_SEQ_MOD - MAX_MISORDER as u32 {
            // A very large jump.
            if seq as u32 == self.bad_seq {
                // Two sequential packets: assume the source restarted.
                self.init_seq(seq);
            } else {
                self.bad_seq = (seq as u32 + 1) & (RTP_SEQ_MOD - 1);
                return false;
            }
        } else {
            // Duplicate or reordered packet: counted, max unchanged.
        }
        self.received += 1;
        true
    }

    /// Extended highest sequence number received (A.3).
    pub fn extended_max(&self) -> u32 {
        self.cycles + self.max_seq as u32
    }

    pub fn expected(&self) -> u32 {
        self.extended_max()
            .wrapping_sub(self.base_seq)
            .wrapping_add(1)
    }

    /// Cumulative packets lost (A.3; may be negative with duplicates),
    /// clamped to the 24-bit signed field of a report block.
    pub fn cumulative_lost(&self) -> i32 {
        let lost = self.expected() as i64 - self.received as i64;
        lost.clamp(-0x80_0000, 0x7f_ffff) as i32
    }

    /// Fraction lost since the previous call, as the 8-bit fixed-point
    /// value of a report block (A.3); advances the interval.
    pub fn take_fraction_lost(&mut self) -> u8 {
        let expected = self.expected();
        let expected_interval = expected.wrapping_sub(self.expected_prior) as i64;
        self.expected_prior = expected;
        let received_interval = self.received.wrapping_sub(self.received_prior) as i64;
        self.received_prior = self.received;
        let lost_interval = expected_interval - received_interval;
        if expected_interval == 0 || lost_interval <= 0 {
            0
        } else {
            ((lost_interval << 8) / expected_interval) as u8
        }
    }

    /// A.8: transit = arrival (in timestamp units) - RTP timestamp;
    /// J += (|D| - J) / 16.
    pub fn update_jitter(&mut self, arrival_ts: i64, rtp_ts: u32) {
        let transit = arrival_ts - rtp_ts as i64;
        if let Some(prev) = self.transit {
            self.jitter = crate::sim::jitter::jitter_step(self.jitter, transit.abs_diff(prev));
        }
        self.transit = Some(transit);
    }

    /// Jitter in timestamp units, as carried in a report block.
    pub fn jitter(&self) -> u32 {
        self.jitter as u32
    }

    pub fn is_valid(&self) -> bool {
        self.started && self.probation == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(s: &mut SourceStats, seqs: impl IntoIterator<Item = u16>) {
        for q in seqs {
            s.update_seq(q);
        }
    }

    #[test]
    fn probation_then_counting() {
        let mut s = SourceStats::default();
        assert!(
            !s.update_seq(100),
            "first packet: on probation (MIN_SEQUENTIAL = 2)"
        );
        assert!(s.update_seq(101), "second in sequence: source valid");
        assert!(s.is_valid());
        feed(&mut s, 102..=110);
        assert_eq!(s.expected(), 10);
        assert_eq!(s.received, 10);
        assert_eq!(s.cumulative_lost(), 0);
    }

    #[test]
    fn loss_counts_and_fraction_lost_per_interval() {
        let mut s = SourceStats::default();
        feed(&mut s, [0, 1, 2, 3, 5, 6, 9, 10]); // 4, 7, 8 lost
        assert_eq!(s.expected(), 10, "base is 1 after probation: 1..=10");
        assert_eq!(s.cumulative_lost(), 3);
        assert_eq!(s.take_fraction_lost(), (3 * 256 / 10) as u8);
        feed(&mut s, 11..=20);
        assert_eq!(
            s.take_fraction_lost(),
            0,
            "nothing lost in the second interval"
        );
    }

    #[test]
    fn sequence_wrap_extends_the_highest_number() {
        let mut s = SourceStats::default();
        feed(&mut s, [65533, 65534, 65535, 0, 1, 2]);
        assert_eq!(s.extended_max(), 65536 + 2);
        assert_eq!(s.expected(), 5, "65534..=65535 and 0..=2");
        assert_eq!(s.cumulative_lost(), 0);
    }

    #[test]
    fn large_jump_needs_two_packets_to_restart() {
        let mut s = SourceStats::default();
        feed(&mut s, [10, 11, 12]);
        assert!(!s.update_seq(40000), "a single big jump is discarded");
        assert!(
            s.update_seq(40001),
            "a second one in sequence restarts the source"
        );
        assert_eq!(s.expected(), 1);
        assert_eq!(s.extended_max(), 40001);
    }

    #[test]
    fn jitter_converges_to_mean_absolute_transit_difference() {
        let mut s = SourceStats::default();
        // transit alternates 0 and 160 units: |D| = 160 always, J -> 160.
        for k in 0..400i64 {
            let ts = (k * 160) as u32;
            let arrival = k * 160 + if k % 2 == 0 { 0 } else { 160 };
            s.update_jitter(arrival, ts);
        }
        assert!((s.jitter as i64 - 160).abs() <= 1);
        let mut c = SourceStats::default();
        for k in 0..100i64 {
            c.update_jitter(k * 160 + 5, (k * 160) as u32);
        }
        assert_eq!(c.jitter(), 0, "constant transit: no jitter");
    }

    /// A.3 with reordering and duplicates: a late packet within
    /// MAX_MISORDER counts without moving the highest number; a duplicate
    /// counts too, so cumulative loss can go negative.
    #[test]
    fn reordering_and_duplicates_count_as_a3_says() {
        let mut s = SourceStats::default();
        feed(&mut s, [10, 11]); // probation: valid from 11 (base 11)
        feed(&mut s, [12, 14, 13, 13, 15]);
        assert_eq!(s.extended_max(), 15);
        assert_eq!(s.expected(), 5, "11..=15");
        assert_eq!(s.received, 6, "11, 12, 14, 13, 13 (duplicate), 15");
        assert_eq!(s.cumulative_lost(), -1);
        assert_eq!(s.take_fraction_lost(), 0, "negative loss reports 0");
        // Lose 16 and 17 of the next 8 expected (16..=23): 2/8 = 64/256.
        feed(&mut s, [18, 19, 20, 21, 22, 23]);
        assert_eq!(s.expected(), 13);
        assert_eq!(s.cumulative_lost(), 13 - 12);
        assert_eq!(s.take_fraction_lost(), 64);
        // Late packets: 99 behind the highest (within MAX_MISORDER = 100)
        // count; 100 behind is treated as a jump and does not.
        feed(&mut s, 24..=300);
        let received = s.received;
        assert!(!s.update_seq(300 - 100));
        assert_eq!(s.received, received);
        assert!(s.update_seq(300 - 99));
        assert_eq!(s.received, received + 1);
        assert_eq!(s.extended_max(), 300);
    }

    /// A.1 boundaries: a gap of exactly MAX_DROPOUT is a jump, not an
    /// in-order packet; a duplicate of the highest number does not count
    /// as a wrap; one out-of-sequence packet during probation resets it
    /// to MIN_SEQUENTIAL - 1; the first large jump to 65535 is not taken
    /// for the second of two sequential packets.
    #[test]
    fn update_seq_boundaries() {
        let mut s = SourceStats::default();
        feed(&mut s, [8, 9, 10]);
        assert!(!s.update_seq(10 + MAX_DROPOUT), "a gap of exactly 3000");
        assert!(s.update_seq(10), "duplicate of the highest: counted");
        assert_eq!(s.extended_max(), 10, "no wrap");
        let mut p = SourceStats::default();
        assert!(!p.update_seq(100));
        assert!(!p.update_seq(105), "out of sequence: probation again");
        assert!(p.update_seq(106), "MIN_SEQUENTIAL - 1 = 1 more in sequence");
        let mut j = SourceStats::default();
        feed(&mut j, [998, 999, 1000]);
        assert!(!j.update_seq(65535), "a single jump, even to 65535");
    }

    #[test]
    fn validity_needs_a_start_and_the_end_of_probation() {
        let mut s = SourceStats::default();
        assert!(!s.is_valid());
        s.update_seq(7);
        assert!(!s.is_valid(), "one packet: still on probation");
        s.update_seq(8);
        assert!(s.is_valid());
    }

    #[test]
    fn the_report_block_jitter_is_the_estimate_truncated() {
        let mut s = SourceStats::default();
        for k in 0..400i64 {
            let arrival = k * 160 + if k % 2 == 0 { 0 } else { 160 };
            s.update_jitter(arrival, (k * 160) as u32);
        }
        assert_eq!(s.jitter(), s.jitter as u32);
        assert!((159..=160).contains(&s.jitter()));
    }
}
