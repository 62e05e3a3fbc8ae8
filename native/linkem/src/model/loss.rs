//! Loss stage: decides per wire segment, at arrival, whether it is lost.

use crate::config::{LossConfig, LossModel};
use itb_rng::Rng;

#[derive(Clone, Debug)]
pub struct Loss {
    cfg: LossConfig,
    bad: bool,
    rng: Rng,
}

impl Loss {
    pub fn new(cfg: LossConfig, seed: u64) -> Self {
        Loss { cfg, bad: false, rng: Rng::new(seed) }
    }

    /// Replace the model (runtime change); the PRNG stream continues.
    pub fn set_config(&mut self, cfg: LossConfig) {
        self.cfg = cfg;
        self.bad = false;
    }

    pub fn is_none(&self) -> bool {
        self.cfg.model == LossModel::None
    }

    /// One draw: true = this segment is lost.
    #[inline]
    pub fn lose(&mut self) -> bool {
        match self.cfg.model {
            LossModel::None => false,
            LossModel::Bernoulli => self.rng.chance(self.cfg.p),
            LossModel::GilbertElliott => {
                // Transition first, then lose according to the new state (as netem).
                if self.bad {
                    if self.rng.chance(self.cfg.r) {
                        self.bad = false;
                    }
                } else if self.rng.chance(self.cfg.p) {
                    self.bad = true;
                }
                let pl = if self.bad { self.cfg.loss_bad } else { self.cfg.loss_good };
                self.rng.chance(pl)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(model: LossModel, p: f64, r: f64, lg: f64, lb: f64) -> LossConfig {
        LossConfig { model, p, r, loss_good: lg, loss_bad: lb }
    }

    fn rate(l: &mut Loss, n: usize) -> f64 {
        (0..n).filter(|_| l.lose()).count() as f64 / n as f64
    }

    #[test]
    fn none_never_loses() {
        let mut l = Loss::new(cfg(LossModel::None, 0.5, 1.0, 0.0, 1.0), 1);
        assert_eq!(rate(&mut l, 10_000), 0.0);
    }

    #[test]
    fn bernoulli_one_percent() {
        for seed in 1..4 {
            let mut l = Loss::new(cfg(LossModel::Bernoulli, 0.01, 1.0, 0.0, 1.0), seed);
            let r = rate(&mut l, 1_000_000);
            assert!((r - 0.01).abs() < 0.0005, "seed {seed}: {r}");
        }
    }

    #[test]
    fn gilbert_elliott_stationary() {
        // pi_bad = p / (p + r); loss = pi_g * lg + pi_b * lb
        let (p, r, lg, lb) = (0.01, 0.3, 0.001, 0.5);
        let mut l = Loss::new(cfg(LossModel::GilbertElliott, p, r, lg, lb), 7);
        let pib = p / (p + r);
        let expect = (1.0 - pib) * lg + pib * lb;
        let got = rate(&mut l, 1_000_000);
        assert!((got - expect).abs() < 0.1 * expect, "got {got} expect {expect}");
    }

    #[test]
    fn gilbert_elliott_is_bursty() {
        // Simple Gilbert (lg=0, lb=1): mean burst length = 1/r.
        let mut l = Loss::new(cfg(LossModel::GilbertElliott, 0.01, 0.25, 0.0, 1.0), 3);
        let (mut bursts, mut lost, mut prev) = (0u64, 0u64, false);
        for _ in 0..1_000_000 {
            let x = l.lose();
            if x {
                lost += 1;
                if !prev {
                    bursts += 1;
                }
            }
            prev = x;
        }
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst - 4.0).abs() < 0.3, "mean burst {mean_burst}");
    }
}
