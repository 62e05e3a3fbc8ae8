//! Queue/serialisation stage: a virtual-time FIFO with drop-tail.
//!
//! No packets are stored here: the link is described by `busy_until` (when it
//! finishes serialising what it accepted so far). Backlog in bytes is derived
//! from it; for a packet-count limit a ring of start times of waiting
//! segments is kept (bounded by the limit).

use std::collections::VecDeque;

const NS_BITS: u128 = 8 * 1_000_000_000; // bits per byte * ns per s

#[derive(Debug, Clone)]
pub struct Shaper {
    rate_bps: Option<u64>,
    queue_bytes: Option<u64>,
    queue_packets: Option<u64>,
    busy_until: u64,
    /// Remainder of the last serialisation time, in units of 1/rate ns, so
    /// that back-to-back segments do not drift by rounding.
    rem: u64,
    /// Start times of accepted segments that may still be waiting.
    starts: VecDeque<u64>,
}

impl Shaper {
    pub fn new(rate_bps: Option<u64>, queue_bytes: Option<u64>, queue_packets: Option<u64>) -> Self {
        let cap = queue_packets.map(|q| q.min(1 << 20) as usize + 1).unwrap_or(0);
        Shaper {
            rate_bps,
            queue_bytes,
            queue_packets,
            busy_until: 0,
            rem: 0,
            starts: VecDeque::with_capacity(cap),
        }
    }

    pub fn rate_bps(&self) -> Option<u64> {
        self.rate_bps
    }

    pub fn set_rate(&mut self, r: Option<u64>) {
        self.rate_bps = r;
        self.rem = 0;
    }

    pub fn set_queue_bytes(&mut self, q: Option<u64>) {
        self.queue_bytes = q;
    }

    pub fn set_queue_packets(&mut self, q: Option<u64>) {
        self.queue_packets = q;
        if q.is_none() {
            self.starts.clear();
        }
    }

    pub fn busy_until(&self) -> u64 {
        self.busy_until
    }

    /// Bytes accepted but not yet serialised at time t.
    #[inline]
    pub fn backlog_bytes(&self, t: u64) -> u64 {
        self.backlog_for(self.busy_until, t)
    }

    /// Backlog at t of a link that is busy until `busy` (at the current rate).
    #[inline]
    pub fn backlog_for(&self, busy: u64, t: u64) -> u64 {
        match self.rate_bps {
            Some(r) if busy > t => ((busy - t) as u128 * r as u128).div_ceil(NS_BITS) as u64,
            _ => 0,
        }
    }

    /// Segments accepted at or before t that have not started serialisation.
    pub fn waiting_packets(&mut self, t: u64) -> u64 {
        while let Some(&s) = self.starts.front() {
            if s <= t {
                self.starts.pop_front();
            } else {
                break;
            }
        }
        self.starts.len() as u64
    }

    /// Would `nseg` segments totalling `bytes` be accepted at t?
    pub fn fits(&mut self, t: u64, bytes: u64, nseg: u64) -> bool {
        if self.rate_bps.is_none() {
            return true;
        }
        if let Some(limit) = self.queue_bytes {
            let b = self.backlog_bytes(t);
            // An idle link always takes one packet, else a limit below one
            // frame would black-hole the link.
            if b > 0 && b + bytes > limit {
                return false;
            }
        }
        if let Some(limit) = self.queue_packets {
            if self.busy_until > t && self.waiting_packets(t) + nseg > limit {
                return false;
            }
        }
        true
    }

    /// Offer one segment of `wire` bytes arriving at t. Returns its departure
    /// time (end of serialisation), or None if drop-tail rejects it.
    #[inline]
    pub fn offer(&mut self, t: u64, wire: u32) -> Option<u64> {
        if !self.fits(t, wire as u64, 1) {
            return None;
        }
        Some(self.admit(t, wire))
    }

    /// Accept unconditionally (caller checked `fits`).
    #[inline]
    pub fn admit(&mut self, t: u64, wire: u32) -> u64 {
        let r = match self.rate_bps {
            None => return t,
            Some(r) => r,
        };
        let start = if self.busy_until > t {
            self.busy_until
        } else {
            self.rem = 0;
            t
        };
        if self.queue_packets.is_some() && start > t {
            self.starts.push_back(start);
        }
        let num = wire as u128 * NS_BITS + self.rem as u128;
        let dt = (num / r as u128) as u64;
        self.rem = (num % r as u128) as u64;
        self.busy_until = start + dt;
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlimited_rate_departs_at_arrival() {
        let mut s = Shaper::new(None, Some(10), Some(1));
        for t in [5, 5, 5, 100] {
            assert_eq!(s.offer(t, 1500), Some(t));
        }
        assert_eq!(s.backlog_bytes(5), 0);
    }

    #[test]
    fn departure_times_back_to_back_no_drift() {
        // 1500 B at 1 Gbit/s = 12 us; 3 Gbit/s gives 4000 ns exactly per 1500 B,
        // 7 Gbit/s gives 1714.28 ns: check the remainder carries.
        let mut s = Shaper::new(Some(1_000_000_000), None, None);
        assert_eq!(s.offer(1000, 1500), Some(13_000));
        assert_eq!(s.offer(1000, 1500), Some(25_000));
        assert_eq!(s.offer(30_000, 1500), Some(42_000)); // idle gap: starts at arrival
        let mut s = Shaper::new(Some(7_000_000_000), None, None);
        let mut last = 0;
        for _ in 0..7000 {
            last = s.offer(0, 1500).unwrap();
        }
        // 7000 * 1500 * 8 bits / 7e9 = 12 ms exactly.
        assert_eq!(last, 12_000_000);
    }

    #[test]
    fn drop_tail_bytes() {
        let mut s = Shaper::new(Some(1_000_000_000), Some(4500), None);
        // first one goes into service, backlog 1500 after it
        assert!(s.offer(0, 1500).is_some());
        assert_eq!(s.backlog_bytes(0), 1500);
        assert!(s.offer(0, 1500).is_some());
        assert!(s.offer(0, 1500).is_some());
        assert_eq!(s.backlog_bytes(0), 4500);
        assert!(s.offer(0, 1500).is_none());
        assert!(s.offer(0, 1).is_none());
        // after 6 us half a packet has left: 750 B room
        assert_eq!(s.backlog_bytes(6000), 3750);
        assert!(s.offer(6000, 1000).is_none());
        assert!(s.offer(6000, 700).is_some());
        assert_eq!(s.backlog_bytes(6000), 4450);
        // after everything drained the backlog is zero
        assert_eq!(s.backlog_bytes(1_000_000), 0);
    }

    #[test]
    fn drop_tail_packets() {
        let mut s = Shaper::new(Some(1_000_000_000), None, Some(2));
        assert!(s.offer(0, 1500).is_some()); // in service
        assert!(s.offer(0, 1500).is_some()); // waiting 1
        assert!(s.offer(0, 1500).is_some()); // waiting 2
        assert!(s.offer(0, 1500).is_none());
        assert_eq!(s.waiting_packets(0), 2);
        // at 12 us the second starts: one waiting
        assert_eq!(s.waiting_packets(12_000), 1);
        assert!(s.offer(12_000, 1500).is_some());
        assert!(s.offer(12_000, 1500).is_none());
        assert!(s.fits(100_000, 1500, 1));
    }

    #[test]
    fn oversize_on_idle_link_is_accepted() {
        let mut s = Shaper::new(Some(1_000_000_000), Some(1000), None);
        assert!(s.offer(0, 1500).is_some());
        assert!(s.offer(0, 10).is_none());
    }

    #[test]
    fn rate_change_applies_to_new_arrivals() {
        let mut s = Shaper::new(Some(1_000_000_000), None, None);
        assert_eq!(s.offer(0, 1500), Some(12_000));
        s.set_rate(Some(500_000_000));
        assert_eq!(s.offer(0, 1500), Some(36_000));
    }
}
