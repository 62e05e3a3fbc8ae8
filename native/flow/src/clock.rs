//! CLOCK_MONOTONIC time in nanoseconds, absolute sleeps and the interval
//! schedule shared by all samplers. All network namespaces share this clock,
//! so timestamps of a sender and a receiver on one host compare directly.

use std::sync::atomic::{AtomicBool, Ordering};

/// Longest single sleep of a sampler: how soon it notices a stop request.
const SLICE_NS: u64 = 20_000_000;

#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid timespec pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until the absolute CLOCK_MONOTONIC time `t_ns` (returns at once if past).
pub fn sleep_until(t_ns: u64) {
    let ts = libc::timespec { tv_sec: (t_ns / 1_000_000_000) as _, tv_nsec: (t_ns % 1_000_000_000) as _ };
    loop {
        // SAFETY: valid timespec; remain may be null with TIMER_ABSTIME.
        let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        if r != libc::EINTR {
            return;
        }
    }
}

/// Sleep until `t_ns` in slices, checking `stop`. True if the deadline was
/// reached, false if `stop` was seen first.
pub fn wait_until(t_ns: u64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Acquire) {
            return false;
        }
        let now = now_ns();
        if now >= t_ns {
            return true;
        }
        sleep_until(t_ns.min(now + SLICE_NS));
    }
}

/// Default timer slack (50 µs) would blur 1 ms intervals and UDP pacing.
/// Per thread; threads spawned later inherit it.
pub fn tight_timer_slack() {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Deadlines origin + k·interval, k = 1, 2, ...: computed from the origin,
/// never by adding to the previous wake-up, so late wake-ups do not drift.
#[derive(Debug, Clone)]
pub struct Ticker {
    origin: u64,
    interval: u64,
    k: u64,
}

impl Ticker {
    pub fn new(origin: u64, interval: u64) -> Ticker {
        Ticker { origin, interval: interval.max(1), k: 1 }
    }

    pub fn deadline(&self) -> u64 {
        self.origin + self.k * self.interval
    }

    /// Move to the first deadline after `now`; a sampler that overslept
    /// several intervals writes one longer row rather than a burst.
    pub fn advance(&mut self, now: u64) {
        let next = now.saturating_sub(self.origin) / self.interval + 1;
        self.k = (self.k + 1).max(next);
    }
}

/// Run `tick(now, last)` at every deadline of `ticker` until `stop`; then once
/// more with last = true.
pub fn run_sampler(mut ticker: Ticker, stop: &AtomicBool, mut tick: impl FnMut(u64, bool)) {
    while wait_until(ticker.deadline(), stop) {
        let now = now_ns();
        tick(now, false);
        ticker.advance(now);
    }
    tick(now_ns(), true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticker_does_not_drift() {
        let mut t = Ticker::new(1000, 100);
        assert_eq!(t.deadline(), 1100);
        t.advance(1103); // woke 3 ns late
        assert_eq!(t.deadline(), 1200);
        t.advance(1200);
        assert_eq!(t.deadline(), 1300);
    }

    #[test]
    fn ticker_skips_missed_deadlines() {
        let mut t = Ticker::new(0, 100);
        t.advance(450); // overslept 3.5 intervals
        assert_eq!(t.deadline(), 500);
        t.advance(50); // a clock before the deadline still moves on by one
        assert_eq!(t.deadline(), 600);
    }

    #[test]
    fn absolute_sleep_reaches_deadline() {
        let t0 = now_ns();
        sleep_until(t0 + 2_000_000);
        assert!(now_ns() >= t0 + 2_000_000);
        let stop = AtomicBool::new(true);
        assert!(!wait_until(now_ns() + 10_000_000_000, &stop));
    }

    #[test]
    fn sampler_ticks_then_last() {
        let stop = AtomicBool::new(false);
        let mut ticks = Vec::new();
        std::thread::scope(|s| {
            s.spawn(|| {
                sleep_until(now_ns() + 35_000_000);
                stop.store(true, Ordering::Release);
            });
            run_sampler(Ticker::new(now_ns(), 10_000_000), &stop, |t, last| ticks.push((t, last)));
        });
        assert!(ticks.len() >= 3, "{ticks:?}");
        assert!(ticks.last().unwrap().1);
        assert!(ticks[..ticks.len() - 1].iter().all(|t| !t.1));
        assert!(ticks.windows(2).all(|w| w[0].0 <= w[1].0));
    }
}
