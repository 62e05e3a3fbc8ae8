//! Rate profiles of a bulk sender: steps of (date after the transfer's start, payload
//! bit/s), kept either by the kernel's pacing (SO_MAX_PACING_RATE changed at each
//! date by a timer thread) or by the application (each stream writes no more than the
//! profile has allowed so far). See docs/flow.md.

use crate::clock::now_ns;
use crate::net;
use crate::send::pacing_per_socket;
use crate::signals;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const MAX_STEPS: usize = 10_000;

#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// (ns after the start, payload bit/s), the first at 0, dates increasing.
    steps: Vec<(u64, u64)>,
}

impl Profile {
    /// `T_US:BPS,T_US:BPS,...` (µs after the start, payload bit/s).
    pub fn parse(spec: &str) -> Result<Profile, String> {
        let mut steps = Vec::new();
        for (k, part) in spec.split(',').enumerate() {
            let (t, r) =
                part.split_once(':').ok_or_else(|| format!("--profile step {k}: expected T_US:BPS, got {part:?}"))?;
            let t: u64 = t.trim().parse().map_err(|_| format!("--profile step {k}: bad date {t:?}"))?;
            let r: u64 = r.trim().parse().map_err(|_| format!("--profile step {k}: bad rate {r:?}"))?;
            let t_ns = t.checked_mul(1000).ok_or_else(|| format!("--profile step {k}: date too large"))?;
            if let Some(&(prev, _)) = steps.last() {
                if t_ns <= prev {
                    return Err(format!("--profile step {k}: dates must increase"));
                }
            } else if t_ns != 0 {
                return Err("--profile: the first step is at date 0".into());
            }
            steps.push((t_ns, r));
        }
        if steps.len() > MAX_STEPS {
            return Err(format!("--profile: at most {MAX_STEPS} steps"));
        }
        // A rate of 0 is a pause: never the first step (the pacing set before connect
        // would be none) nor the last (the transfer could not end)
        if steps.first().is_some_and(|s| s.1 == 0) || steps.last().is_some_and(|s| s.1 == 0) {
            return Err("--profile: the first and the last step's rates must be above 0 (0 is a pause)".into());
        }
        Ok(Profile { steps })
    }

    pub fn constant(rate_bps: u64) -> Profile {
        Profile { steps: vec![(0, rate_bps)] }
    }

    /// Whether a step pauses (rate 0): the writes, not only the pacing, must then keep
    /// the profile, since the kernel cannot pace at 0.
    pub fn has_pause(&self) -> bool {
        self.steps.iter().any(|&(_, r)| r == 0)
    }

    /// The same dates at rates × (1 + f), rounded up (a pause stays one).
    pub fn scaled(&self, f: f64) -> Profile {
        let steps = self.steps.iter().map(|&(t, r)| (t, (r as f64 * (1.0 + f)).ceil() as u64)).collect();
        Profile { steps }
    }

    pub fn first_rate(&self) -> u64 {
        self.steps[0].1
    }

    /// The steps as [µs, bit/s] (for the summary).
    pub fn as_us(&self) -> Vec<[u64; 2]> {
        self.steps.iter().map(|&(t, r)| [t / 1000, r]).collect()
    }

    /// The rate in force `elapsed` ns after the start.
    pub fn rate_at(&self, elapsed: u64) -> u64 {
        let k = self.steps.partition_point(|&(t, _)| t <= elapsed);
        self.steps[k.max(1) - 1].1
    }

    /// Payload bytes the profile allows in the first `elapsed` ns (the inverse of
    /// `when_allowed`, which the tests check it against).
    pub fn bytes_by(&self, elapsed: u64) -> u64 {
        let mut bits: u128 = 0;
        for (k, &(t, r)) in self.steps.iter().enumerate() {
            if elapsed <= t {
                break;
            }
            let end = self.steps.get(k + 1).map_or(elapsed, |s| s.0.min(elapsed));
            bits += r as u128 * (end - t) as u128;
        }
        (bits / 8_000_000_000) as u64
    }

    /// The first date (ns after the start) at which `bytes` are allowed.
    pub fn when_allowed(&self, bytes: u64) -> u64 {
        let mut need = bytes as u128 * 8_000_000_000; // bit·ns
        for (k, &(t, r)) in self.steps.iter().enumerate() {
            let room = self.steps.get(k + 1).map(|s| r as u128 * (s.0 - t) as u128);
            match room {
                Some(room) if need > room => need -= room,
                _ => return t + need.div_ceil(r as u128).min(u64::MAX as u128) as u64,
            }
        }
        unreachable!("the last step lasts forever")
    }

    /// Dates (ns after the start) and rates of the steps after the first.
    fn changes(&self) -> &[(u64, u64)] {
        &self.steps[1..]
    }
}

/// `flow profile-eval`: the profile's integral both ways, for ITB's test against its
/// Python twin (itb.scenario.experiment.profile.Profile).
pub fn eval(a: &crate::cli::ProfileEvalArgs) -> Result<(), crate::fail::Fail> {
    let p = Profile::parse(&a.profile).map_err(crate::fail::Fail::usage)?;
    let nums = |v: &[String], what: &str| -> Result<Vec<u64>, crate::fail::Fail> {
        v.iter()
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.trim().parse::<u64>().map_err(|_| crate::fail::Fail::usage(format!("--{what}: bad number {s:?}")))
            })
            .collect()
    };
    let when: Vec<u64> = nums(&a.bytes, "bytes")?.into_iter().map(|b| p.when_allowed(b)).collect();
    let by: Vec<u64> = nums(&a.at_ns, "at-ns")?.into_iter().map(|t| p.bytes_by(t)).collect();
    println!("{}", serde_json::json!({"when_allowed_ns": when, "bytes_by": by}));
    Ok(())
}

/// Sleep until CLOCK_MONOTONIC reaches `t_ns`, waking every 100 ms to check
/// `stopped`; false if stopped first.
pub fn sleep_until(t_ns: u64, stopped: impl Fn() -> bool) -> bool {
    loop {
        if stopped() {
            return false;
        }
        let now = now_ns();
        if now >= t_ns {
            return true;
        }
        std::thread::sleep(Duration::from_nanos((t_ns - now).min(100_000_000)));
    }
}

/// Apply the profile's later steps to every live socket at their dates (the first is
/// set before connect), recording each as [t_ns, bit/s] in `changes`. A pause (rate 0)
/// leaves the pacing as it was: the writes hold the stream (`AppCap`), and the kernel,
/// which cannot pace at 0, is not given a rate whose first packet would wait for ages.
/// With `catch_up` (the writes keep the profile, the pacing has headroom), a step down
/// waits until what was written before its date has left at the rate in force, at most
/// until the next step: a stream behind its profile would otherwise send that backlog
/// at the headroom of the lower rate only (`backlog_sent`).
pub fn pace(
    profile: &Profile,
    start_ns: u64,
    streams: usize,
    catch_up: bool,
    stop: &AtomicBool,
    changes: &Arc<Mutex<Vec<[u64; 2]>>>,
) {
    let stopped = || stop.load(Ordering::Acquire) || signals::interrupted();
    let mut in_force = profile.first_rate();
    for (k, &(at, rate)) in profile.changes().iter().enumerate() {
        if !sleep_until(start_ns + at, stopped) {
            return;
        }
        if rate == 0 {
            changes.lock().unwrap().push([now_ns(), 0]);
            continue;
        }
        let per = pacing_per_socket(rate, streams);
        if catch_up && rate < in_force {
            let next = profile.changes().get(k + 1).map_or(u64::MAX, |s| start_ns + s.0);
            if !backlog_sent(pacing_per_socket(in_force, streams), per, next, &stopped) {
                return;
            }
        }
        signals::for_each(|fd| {
            let _ = net::set_pacing(fd, per);
        });
        changes.lock().unwrap().push([now_ns(), rate]);
        in_force = rate;
    }
}

/// Wait, at the pacing in force (`old` bytes/s per socket), until no live socket holds
/// more unsent bytes (tcpi_notsent_bytes) than 2 ms of the next rate (`new`, what its
/// writes add meanwhile) and two segments, or until `next` (ns): re-read after the time
/// the most unsent bytes take at `old` (at least 1 ms; the writes refill the socket while
/// the application is still behind). False if stopped.
fn backlog_sent(old: u64, new: u64, next: u64, stopped: &impl Fn() -> bool) -> bool {
    let enough = new / 500 + 2 * 1448;
    loop {
        let mut most = 0u64;
        signals::for_each(|fd| {
            if let Ok(i) = crate::tcpinfo::TcpInfo::read(fd) {
                most = most.max(i.notsent_bytes.unwrap_or(0) as u64);
            }
        });
        let now = now_ns();
        if most <= enough || now >= next {
            return true;
        }
        if !sleep_until(now.saturating_add(drain_ns(most, old).max(1_000_000)).min(next), stopped) {
            return false;
        }
    }
}

/// The time `bytes` take at `bytes_per_s` (ns, rounded up).
pub fn drain_ns(bytes: u64, bytes_per_s: u64) -> u64 {
    (bytes as u128 * 1_000_000_000).div_ceil(bytes_per_s.max(1) as u128).min(u64::MAX as u128) as u64
}

/// What a stream needs to keep an application cap: the profile, its start, and how
/// many streams share it (each takes an equal part).
#[derive(Clone, Copy)]
pub struct AppCap<'a> {
    pub profile: &'a Profile,
    pub start_ns: u64,
    pub streams: usize,
}

impl AppCap<'_> {
    /// Wait until this stream, having written `sent` bytes, may write its next chunk,
    /// and return the chunk's size (at most `want`); None when interrupted.
    pub fn next_chunk(&self, sent: u64, want: usize) -> Option<usize> {
        let rate = self.profile.rate_at(now_ns().saturating_sub(self.start_ns));
        let n = want.min(app_chunk(rate, self.streams, want.max(1)));
        let total = (sent + n as u64).saturating_mul(self.streams as u64);
        let at = self.start_ns + self.profile.when_allowed(total);
        sleep_until(at, signals::interrupted).then_some(n)
    }
}

/// Bytes per write under an application cap: about 1 ms at the current rate of one
/// stream, at least one segment, at most `write_size`.
pub fn app_chunk(rate_bps: u64, streams: usize, write_size: usize) -> usize {
    let per_ms = rate_bps / 8 / 1000 / streams as u64;
    (per_ms as usize).clamp(1448.min(write_size), write_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draining_takes_the_bytes_over_the_rate_rounded_up() {
        // 582 000 bytes at 466 Mbit/s (58 250 000 bytes/s): 9 991 416.3 ns, rounded up
        assert_eq!(drain_ns(582_000, 58_250_000), 9_991_417);
        assert_eq!(drain_ns(1, 3), 333_333_334);
        assert_eq!(drain_ns(0, 58_250_000), 0);
        assert_eq!(drain_ns(10, 0), 10_000_000_000); // (a rate of 0 counts as 1 byte/s)
    }

    #[test]
    fn parse_and_refuse() {
        let p = Profile::parse("0:100000000,10000000:600000000").unwrap();
        assert_eq!(p.as_us(), vec![[0, 100_000_000], [10_000_000, 600_000_000]]);
        assert!(Profile::parse("5:1").unwrap_err().contains("date 0"));
        assert!(Profile::parse("0:1,0:2").unwrap_err().contains("increase"));
        assert!(Profile::parse("0:0").unwrap_err().contains("above 0"));
        assert!(Profile::parse("0-1").unwrap_err().contains("T_US:BPS"));
    }

    #[test]
    fn rate_and_allowance_by_hand() {
        // 80 Mbit/s for 1 s (10 MB), then 8 Mbit/s (1 MB/s).
        let p = Profile::parse("0:80000000,1000000:8000000").unwrap();
        assert_eq!(p.rate_at(0), 80_000_000);
        assert_eq!(p.rate_at(999_999_999), 80_000_000);
        assert_eq!(p.rate_at(1_000_000_000), 8_000_000);
        assert_eq!(p.bytes_by(500_000_000), 5_000_000);
        assert_eq!(p.bytes_by(3_000_000_000), 12_000_000);
        assert_eq!(p.when_allowed(5_000_000), 500_000_000);
        assert_eq!(p.when_allowed(12_000_000), 3_000_000_000);
        for b in [1u64, 9_999_999, 10_000_001, 11_500_000] {
            let t = p.when_allowed(b);
            assert!(p.bytes_by(t) >= b && p.bytes_by(t - 1) < b, "{b}");
        }
    }

    #[test]
    fn a_pause_allows_nothing_and_is_neither_first_nor_last() {
        // 8 Mbit/s for 1 s (1 MB), a 2 s pause, then 8 Mbit/s again
        let p = Profile::parse("0:8000000,1000000:0,3000000:8000000").unwrap();
        assert!(p.has_pause());
        assert_eq!(p.bytes_by(2_000_000_000), 1_000_000);
        assert_eq!(p.when_allowed(1_000_001), 3_000_000_000 + 1000);
        assert!(Profile::parse("0:0,1000:8000000").is_err());
        assert!(Profile::parse("0:8000000,1000:0").is_err());
    }

    #[test]
    fn a_scaled_profile_keeps_its_dates_and_pauses() {
        let p = Profile::parse("0:8000000,1000000:0,3000000:1000").unwrap().scaled(0.025);
        assert_eq!(p.as_us(), vec![[0, 8_200_000], [1_000_000, 0], [3_000_000, 1025]]);
    }

    #[test]
    fn chunks() {
        assert_eq!(app_chunk(600_000_000, 1, 262_144), 75_000);
        assert_eq!(app_chunk(1_000_000, 1, 262_144), 1448);
        assert_eq!(app_chunk(10_000_000_000, 1, 262_144), 262_144);
    }
}
