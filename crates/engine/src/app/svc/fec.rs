//! Forward error correction over blocks of media packets: a systematic
//! (n, k) block code, k media packets followed by n - k repair packets
//! (sent at a lower drop precedence in the SVC study's second part).
//!
//! - `Rs`: a Reed-Solomon (maximum distance separable) code: the block's
//!   k media packets are all recovered as soon as any k of its n packets
//!   arrive. The simulator does not compute parity bytes; it applies this
//!   rule, which the tests check against the `reed-solomon-erasure`
//!   crate's real encoder and decoder.
//! - `Xor`: one parity packet over the block (n = k + 1): one lost media
//!   packet is recovered when the parity packet arrives.
//!
//! The analytic model (`residual_loss`): with media packets lost
//! independently with probability p_m and repair packets with p_r (they
//! sit at another drop precedence), the media loss left after decoding is
//! the expected number of unrecovered media packets over k.

/// The code of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FecCode {
    Rs { k: u32, n: u32 },
    Xor { k: u32 },
}

impl FecCode {
    pub fn k(&self) -> u32 {
        match *self {
            FecCode::Rs { k, .. } | FecCode::Xor { k } => k,
        }
    }
    pub fn n(&self) -> u32 {
        match *self {
            FecCode::Rs { n, .. } => n,
            FecCode::Xor { k } => k + 1,
        }
    }

    /// Media packets the receiver ends up with, given how many media and
    /// repair packets of the block arrived.
    pub fn media_after_decoding(&self, media: u32, repair: u32) -> u32 {
        let k = self.k();
        match *self {
            FecCode::Rs { .. } if media + repair >= k => k,
            FecCode::Xor { .. } if media + 1 == k && repair >= 1 => k,
            _ => media,
        }
    }

    /// Expected fraction of media packets still missing after decoding,
    /// media lost with probability `p_m` and repair with `p_r`,
    /// independently.
    pub fn residual_loss(&self, p_m: f64, p_r: f64) -> f64 {
        let (k, r) = (self.k(), self.n() - self.k());
        let mut missing = 0.0;
        for m in 0..=k {
            let pm = binomial(k, m, 1.0 - p_m);
            for x in 0..=r {
                let pr = binomial(r, x, 1.0 - p_r);
                missing += pm * pr * (k - self.media_after_decoding(m, x)) as f64;
            }
        }
        missing / k as f64
    }
}

/// P(X = j) for X ~ Binomial(n, q).
fn binomial(n: u32, j: u32, q: f64) -> f64 {
    let mut c = 1.0;
    for i in 0..j {
        c = c * (n - i) as f64 / (i + 1) as f64;
    }
    c * q.powi(j as i32) * (1.0 - q).powi((n - j) as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{uniform, RngStreams};
    use reed_solomon_erasure::galois_8::ReedSolomon;

    /// The recovery rule against a real Reed-Solomon codec: encode random
    /// data, erase shards at random, and reconstruct exactly when the rule
    /// says so.
    #[test]
    fn the_rs_rule_is_what_a_real_codec_does() {
        let (k, n) = (6u32, 9u32);
        let code = FecCode::Rs { k, n };
        let rs = ReedSolomon::new(k as usize, (n - k) as usize).expect("valid code");
        let mut rng = RngStreams::new(5, 0).stream("fec");
        for trial in 0..300 {
            let mut shards: Vec<Vec<u8>> = (0..n)
                .map(|i| {
                    (0..32)
                        .map(|b| ((i * 31 + b + trial) % 251) as u8)
                        .collect()
                })
                .collect();
            for s in shards.iter_mut().skip(k as usize) {
                s.iter_mut().for_each(|b| *b = 0);
            }
            rs.encode(&mut shards).expect("encode");
            let original = shards.clone();
            let mut erased: Vec<Option<Vec<u8>>> = shards.into_iter().map(Some).collect();
            for s in erased.iter_mut() {
                if uniform(&mut rng) < 0.35 {
                    *s = None;
                }
            }
            let media = erased[..k as usize].iter().filter(|s| s.is_some()).count() as u32;
            let repair = erased[k as usize..].iter().filter(|s| s.is_some()).count() as u32;
            let ok = rs.reconstruct_data(&mut erased).is_ok();
            let rule = code.media_after_decoding(media, repair) == k;
            assert_eq!(ok, rule, "trial {trial}: {media} media, {repair} repair");
            if ok {
                for i in 0..k as usize {
                    assert_eq!(erased[i].as_ref(), Some(&original[i]));
                }
            }
        }
    }

    #[test]
    fn xor_parity_recovers_one_loss() {
        let x = FecCode::Xor { k: 4 };
        assert_eq!(x.n(), 5);
        assert_eq!(x.media_after_decoding(3, 1), 4);
        assert_eq!(x.media_after_decoding(3, 0), 3);
        assert_eq!(
            x.media_after_decoding(2, 1),
            2,
            "two losses: the parity is no help"
        );
    }

    /// The analytic residual loss against a Monte Carlo of the same model,
    /// and two values by hand.
    #[test]
    fn residual_loss_matches_a_monte_carlo_and_hand_values() {
        // XOR, k = 2, p_m = p_r = 0.5: missing media is 0 unless both media
        // lost (1/4: 2 missing) or one media and the parity lost (2 x 1/8:
        // 1 missing): (2/4 + 2/8) / 2 = 0.375.
        assert!((FecCode::Xor { k: 2 }.residual_loss(0.5, 0.5) - 0.375).abs() < 1e-12);
        // Without repair packets getting through, the media loss stays.
        let rs = FecCode::Rs { k: 8, n: 10 };
        assert!((rs.residual_loss(0.1, 1.0) - 0.1).abs() < 1e-12);
        let mut rng = RngStreams::new(9, 0).stream("mc");
        let (p_m, p_r) = (0.05, 0.2);
        let blocks = 200_000;
        let mut missing = 0u64;
        for _ in 0..blocks {
            let media = (0..8).filter(|_| uniform(&mut rng) >= p_m).count() as u32;
            let repair = (0..2).filter(|_| uniform(&mut rng) >= p_r).count() as u32;
            missing += (8 - rs.media_after_decoding(media, repair)) as u64;
        }
        let mc = missing as f64 / (8 * blocks) as f64;
        let model = rs.residual_loss(p_m, p_r);
        assert!((mc - model).abs() < 0.05 * model, "{mc} vs {model}");
        assert!(model < p_m / 3.0, "two repair packets cut the loss a lot");
    }
}
