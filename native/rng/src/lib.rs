//! xoshiro256++ seeded via splitmix64 (public-domain algorithms by Blackman and
//! Vigna). Small, fast and deterministic: linkem's loss draws and flow's
//! Poisson traffic must be reproducible run to run.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

pub fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        Rng { s: [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)] }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability p (p >= 1 is always true, p <= 0 never).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }

    /// Exponentially distributed with the given mean (inverse CDF; 1 - u is
    /// in (0, 1], so ln never sees 0).
    #[inline]
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.next_f64()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_uniformish() {
        let mut a = Rng::new(1);
        let mut b = Rng::new(1);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut c = Rng::new(2);
        assert_ne!(a.next_u64(), c.next_u64());
        let n = 1_000_000;
        let mean: f64 = (0..n).map(|_| a.next_f64()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.002, "mean {mean}");
        assert!(a.chance(1.0));
        assert!(!a.chance(0.0));
    }

    #[test]
    fn exponential_mean_and_spread() {
        let mut r = Rng::new(1);
        let n = 100_000;
        let mean = 12_000.0; // ns: 1500 B at 1 Gbit/s
        let draws: Vec<f64> = (0..n).map(|_| r.exp(mean)).collect();
        let m = draws.iter().sum::<f64>() / n as f64;
        assert!((m / mean - 1.0).abs() < 0.02, "mean {m}");
        // Exponential: P(X > mean) = 1/e.
        let above = draws.iter().filter(|&&d| d > mean).count() as f64 / n as f64;
        assert!((above - (-1f64).exp()).abs() < 0.01, "tail {above}");
        assert!(draws.iter().all(|&d| d >= 0.0 && d.is_finite()));
    }
}
