//! Per-interval accounting, written as CSV rows.
//!
//! Departures are attributed by their computed departure time, which may lie
//! in the future, so buckets are kept from the oldest open interval onwards;
//! an interval is final (and written) once `now` has passed its end.

use crate::serialiser::Serialiser;
use std::collections::VecDeque;
use std::io::{self, Write};

pub const CSV_HEADER: &str =
    "t_ns,bytes,packets,drops_queue,drops_loss,queue_bytes,queue_max_bytes,late_packets,max_lag_us\n";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    pub bytes: u64,
    pub packets: u64,
    pub drops_queue: u64,
    pub drops_loss: u64,
    pub queue_max: u64,
    pub late: u64,
    pub max_lag_ns: u64,
    /// The link's busy_until after the last arrival in this interval (0: none).
    pub busy: u64,
}

#[derive(Debug)]
pub struct Monitor {
    t0: u64,
    interval: u64,
    /// Index of the oldest open interval (= buckets[0]).
    base: u64,
    buckets: VecDeque<Bucket>,
    /// Backlog at the end of the last finalized interval.
    prev_backlog: u64,
    /// busy_until as of the end of the last finalized interval.
    busy: u64,
}

impl Monitor {
    pub fn new(t0: u64, interval_ns: u64) -> Self {
        Monitor {
            t0,
            interval: interval_ns.max(1),
            base: 0,
            buckets: VecDeque::with_capacity(4096),
            prev_backlog: 0,
            busy: 0,
        }
    }

    #[inline]
    fn bucket(&mut self, t: u64) -> &mut Bucket {
        let i = if t < self.t0 { 0 } else { (t - self.t0) / self.interval };
        let k = i.saturating_sub(self.base) as usize;
        if k >= self.buckets.len() {
            self.buckets.resize(k + 1, Bucket::default());
        }
        &mut self.buckets[k]
    }

    #[inline]
    pub fn depart(&mut self, t: u64, wire: u32) {
        let b = self.bucket(t);
        b.bytes += wire as u64;
        b.packets += 1;
    }

    #[inline]
    pub fn drop_queue(&mut self, t: u64, n: u64) {
        self.bucket(t).drops_queue += n;
    }

    #[inline]
    pub fn drop_loss(&mut self, t: u64, n: u64) {
        self.bucket(t).drops_loss += n;
    }

    /// After an arrival at t: backlog then, and the link's busy_until, so
    /// that the backlog at the interval's end can be computed later even if
    /// later arrivals were already processed.
    #[inline]
    pub fn arrived(&mut self, t: u64, backlog: u64, busy_until: u64) {
        let b = self.bucket(t);
        b.queue_max = b.queue_max.max(backlog);
        b.busy = b.busy.max(busy_until);
    }

    /// Start of the oldest open interval: arrivals must not be earlier.
    pub fn open_start(&self) -> u64 {
        self.t0 + self.base * self.interval
    }

    #[inline]
    pub fn late(&mut self, t: u64, n: u64, lag_ns: u64) {
        let b = self.bucket(t);
        b.late += n;
        b.max_lag_ns = b.max_lag_ns.max(lag_ns);
    }

    /// End time of the oldest open interval.
    pub fn next_end(&self) -> u64 {
        self.t0 + (self.base + 1) * self.interval
    }

    /// Write every interval that ended at or before `now`. Arrivals after
    /// that must not be stamped earlier than `open_start()`.
    pub fn finalize(&mut self, now: u64, link: &Serialiser, w: &mut impl Write) -> io::Result<usize> {
        let mut rows = 0;
        while self.next_end() <= now {
            let start = self.t0 + self.base * self.interval;
            let end = start + self.interval;
            let b = self.buckets.pop_front().unwrap_or_default();
            if b.busy != 0 {
                self.busy = b.busy;
            }
            let q_end = link.backlog_for(self.busy, end);
            let q_max = b.queue_max.max(self.prev_backlog).max(q_end);
            self.prev_backlog = q_end;
            writeln!(
                w,
                "{},{},{},{},{},{},{},{},{}",
                start,
                b.bytes,
                b.packets,
                b.drops_queue,
                b.drops_loss,
                q_end,
                q_max,
                b.late,
                b.max_lag_ns / 1000
            )?;
            self.base += 1;
            rows += 1;
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(out: &[u8]) -> Vec<Vec<u64>> {
        std::str::from_utf8(out).unwrap().lines().map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect()
    }

    #[test]
    fn buckets_by_time_and_idle_rows() {
        let t0 = 1_000_000;
        let mut m = Monitor::new(t0, 1000);
        let s = Serialiser::new(None);
        let mut out = Vec::new();
        m.depart(t0 + 10, 100);
        m.depart(t0 + 999, 100);
        m.depart(t0 + 1000, 50); // next interval
        m.depart(t0 + 5500, 7); // future
        m.drop_queue(t0 + 20, 2);
        m.drop_loss(t0 + 20, 1);
        m.late(t0 + 2100, 3, 250_000);
        assert_eq!(m.finalize(t0 + 999, &s, &mut out).unwrap(), 0);
        assert_eq!(m.finalize(t0 + 3000, &s, &mut out).unwrap(), 3);
        assert_eq!(m.finalize(t0 + 6000, &s, &mut out).unwrap(), 3);
        let r = rows(&out);
        assert_eq!(r.len(), 6);
        assert_eq!(r[0], vec![t0, 200, 2, 2, 1, 0, 0, 0, 0]);
        assert_eq!(r[1][..3], [t0 + 1000, 50, 1]);
        assert_eq!(r[2], vec![t0 + 2000, 0, 0, 0, 0, 0, 0, 3, 250]);
        assert_eq!(r[3][1], 0);
        assert_eq!(r[5][..3], [t0 + 5000, 7, 1]);
    }

    #[test]
    fn queue_columns() {
        // 1 Gbit/s: 12500 B take 100 us. Arrive at 10 us into interval 0.
        let mut s = Serialiser::new(Some(1_000_000_000));
        let mut m = Monitor::new(0, 50_000);
        let mut out = Vec::new();
        for _ in 0..10 {
            let d = s.serialise(10_000, 1250);
            m.depart(d, 1250);
        }
        m.arrived(10_000, s.backlog_bytes(10_000), s.busy_until());
        // later arrivals already on the link do not change past rows
        s.serialise(190_000, 1250);
        m.finalize(200_000, &s, &mut out).unwrap();
        let r = rows(&out);
        // interval 0 [0,50us): departures at 20, 30, 40 us; 7500 B left at 50 us
        assert_eq!(r[0][1], 3750);
        assert_eq!(r[0][5], 7500);
        assert_eq!(r[0][6], 12500);
        // interval 1: max is the backlog at its start
        assert_eq!(r[1][5], 1250);
        assert_eq!(r[1][6], 7500);
        assert_eq!(r[2][5], 0);
        assert_eq!(r[2][6], 1250);
        let total: u64 = r.iter().map(|x| x[1]).sum();
        assert_eq!(total, 12500);
        assert_eq!(r[3][5], 0);
    }
}
