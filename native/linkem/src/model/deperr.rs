//! Departure error: how far from its scheduled time a frame actually left.
//!
//! The schedule is the model's (a released frame's end of serialisation + the delay,
//! computed from the arrival stamps); the actual time is the kernel's transmit stamp on the
//! out-interface (taken by veth as the frame enters it), for sampled frames. Errors are
//! kept as a histogram of |error| in 1 µs bins ((k−1, k] µs) up to 10 ms (larger ones counted beyond,
//! the largest kept exactly) and the number sent early: bounded memory however long the
//! run, percentiles exact to the microsecond.

use serde::Serialize;

const BIN_NS: i64 = 1_000;
const BINS: usize = 10_001;

/// What the log and the stats say: the sample count and |error| percentiles, each the
/// upper edge of its 1 µs bin ("at most this many µs"), plus the signed extremes.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct DepartureSummary {
    pub samples: u64,
    /// Samples that left before their scheduled time.
    pub early: u64,
    pub abs_p50_us: u64,
    pub abs_p90_us: u64,
    pub abs_p99_us: u64,
    pub abs_p999_us: u64,
    pub abs_max_us: u64,
    /// Mean signed error (positive: late), ns.
    pub mean_ns: i64,
    /// Most early (negative) and most late (positive) errors seen, ns.
    pub min_ns: i64,
    pub max_ns: i64,
    /// Samples whose transmit stamp never came (the frame was refused).
    pub unstamped: u64,
}

#[derive(Debug, Clone)]
pub struct DepartureErrors {
    bins: Vec<u32>,
    beyond: u64,
    n: u64,
    early: u64,
    sum_ns: i128,
    min_ns: i64,
    max_ns: i64,
    pub unstamped: u64,
}

impl Default for DepartureErrors {
    fn default() -> Self {
        DepartureErrors {
            bins: vec![0; BINS],
            beyond: 0,
            n: 0,
            early: 0,
            sum_ns: 0,
            min_ns: i64::MAX,
            max_ns: i64::MIN,
            unstamped: 0,
        }
    }
}

impl DepartureErrors {
    /// One sample: the frame was due at `scheduled_ns` and left at `actual_ns`.
    pub fn record(&mut self, scheduled_ns: u64, actual_ns: u64) {
        let e = actual_ns as i64 - scheduled_ns as i64;
        let k = e.unsigned_abs().div_ceil(BIN_NS as u64) as usize;
        match self.bins.get_mut(k) {
            Some(b) => *b += 1,
            None => self.beyond += 1,
        }
        self.n += 1;
        self.early += (e < 0) as u64;
        self.sum_ns += e as i128;
        self.min_ns = self.min_ns.min(e);
        self.max_ns = self.max_ns.max(e);
    }

    /// Upper edge (µs) of the bin holding the q-quantile of |error|: the smallest x
    /// such that at least q of the samples are at most x µs off.
    fn abs_quantile_us(&self, q: f64) -> u64 {
        let need = (q * self.n as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (k, &c) in self.bins.iter().enumerate() {
            seen += c as u64;
            if seen >= need {
                return k as u64;
            }
        }
        self.abs_max_us()
    }

    fn abs_max_us(&self) -> u64 {
        self.min_ns.unsigned_abs().max(self.max_ns.unsigned_abs()).div_ceil(BIN_NS as u64)
    }

    pub fn summary(&self) -> DepartureSummary {
        if self.n == 0 {
            return DepartureSummary { unstamped: self.unstamped, ..Default::default() };
        }
        DepartureSummary {
            samples: self.n,
            early: self.early,
            abs_p50_us: self.abs_quantile_us(0.5),
            abs_p90_us: self.abs_quantile_us(0.9),
            abs_p99_us: self.abs_quantile_us(0.99),
            abs_p999_us: self.abs_quantile_us(0.999),
            abs_max_us: self.abs_max_us(),
            mean_ns: (self.sum_ns / self.n as i128) as i64,
            min_ns: self.min_ns,
            max_ns: self.max_ns,
            unstamped: self.unstamped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_the_upper_edges_of_one_microsecond_bins_of_the_absolute_error() {
        let mut d = DepartureErrors::default();
        // 100 samples: 98 between 0 and 999 ns late or early, one 20.5 us late, one 1.2 ms early.
        for i in 0..49 {
            d.record(1_000_000, 1_000_000 + i * 20); // 0 .. 960 ns late
            d.record(1_000_000, 1_000_000 - i * 20 - 1); // 1 .. 961 ns early
        }
        d.record(1_000_000, 1_020_500);
        d.record(2_000_000, 800_000);
        let s = d.summary();
        assert_eq!(s.samples, 100);
        assert_eq!(s.early, 50);
        assert_eq!(s.abs_p50_us, 1);
        assert_eq!(s.abs_p90_us, 1);
        // the 99th of 100 sorted |errors| is 20.5 us: bin (20, 21] us
        assert_eq!(s.abs_p99_us, 21);
        assert_eq!(s.abs_p999_us, 1_200);
        assert_eq!(s.abs_max_us, 1_200);
        assert_eq!((s.min_ns, s.max_ns), (-1_200_000, 20_500));
        // sum: 20 * (0+..+48) late, -(20 * (0+..+48) + 49) early, +20 500, -1 200 000
        assert_eq!(s.mean_ns, (20_500 - 1_200_000 - 49) / 100);
    }

    #[test]
    fn an_error_beyond_ten_milliseconds_is_counted_and_its_size_kept() {
        let mut d = DepartureErrors::default();
        d.record(0, 5_000);
        d.record(0, 25_000_000);
        let s = d.summary();
        assert_eq!((s.samples, s.abs_p50_us, s.abs_p99_us, s.abs_max_us), (2, 5, 25_000, 25_000));
    }

    #[test]
    fn no_sample_gives_zeros_not_a_made_up_figure() {
        let d = DepartureErrors { unstamped: 3, ..Default::default() };
        assert_eq!(d.summary(), DepartureSummary { unstamped: 3, ..Default::default() });
    }
}
