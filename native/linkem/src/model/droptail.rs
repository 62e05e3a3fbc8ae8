//! Drop-tail: the FIFO every link of ITB has (the kernel's pfifo/bfifo, a router's
//! tail drop). A frame is refused when the bytes waiting plus its own exceed
//! `queue_bytes`, or when `queue_packets` frames already wait; an idle link always takes
//! one frame, else a limit below one frame would black-hole the link.

use crate::queue::Queue;
use crate::serialiser::Serialiser;
use std::collections::VecDeque;

#[derive(Debug, Clone)]
pub struct DropTail {
    link: Serialiser,
    queue_bytes: Option<u64>,
    queue_packets: Option<u64>,
    /// Start times of accepted frames that may still be waiting (popped as time passes).
    starts: VecDeque<u64>,
}

impl DropTail {
    pub fn new(rate_bps: Option<u64>, queue_bytes: Option<u64>, queue_packets: Option<u64>) -> Self {
        let cap = queue_packets.map(|q| q.min(1 << 20) as usize + 1).unwrap_or(1024);
        DropTail { link: Serialiser::new(rate_bps), queue_bytes, queue_packets, starts: VecDeque::with_capacity(cap) }
    }

    #[inline]
    fn forget_started(&mut self, t: u64) {
        while self.starts.front().is_some_and(|&s| s <= t) {
            self.starts.pop_front();
        }
    }
}

impl Queue for DropTail {
    fn fits(&mut self, t: u64, bytes: u64, nseg: u64) -> bool {
        if self.link.rate_bps().is_none() {
            return true;
        }
        if let Some(limit) = self.queue_bytes {
            let b = self.link.backlog_bytes(t);
            if b > 0 && b + bytes > limit {
                return false;
            }
        }
        if let Some(limit) = self.queue_packets {
            if self.link.busy_until() > t && self.packets(t) + nseg > limit {
                return false;
            }
        }
        true
    }

    #[inline]
    fn admit(&mut self, t: u64, wire: u32) -> u64 {
        let start = self.link.start_for(t);
        if self.link.rate_bps().is_some() && start > t {
            self.forget_started(t);
            self.starts.push_back(start);
        }
        self.link.serialise(t, wire)
    }

    fn packets(&mut self, t: u64) -> u64 {
        self.forget_started(t);
        self.starts.len() as u64
    }

    fn link(&self) -> &Serialiser {
        &self.link
    }

    fn set_limits(&mut self, queue_bytes: Option<u64>, queue_packets: Option<u64>) {
        self.queue_bytes = queue_bytes;
        self.queue_packets = queue_packets;
    }

    fn set_rate(&mut self, rate_bps: Option<u64>) {
        self.link.set_rate(rate_bps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlimited_rate_departs_at_arrival() {
        let mut s = DropTail::new(None, Some(10), Some(1));
        for t in [5, 5, 5, 100] {
            assert_eq!(s.enqueue(t, 1500), Some(t));
        }
        assert_eq!(s.bytes(5), 0);
    }

    #[test]
    fn drop_tail_bytes() {
        let mut s = DropTail::new(Some(1_000_000_000), Some(4500), None);
        // first one goes into service, backlog 1500 after it
        assert!(s.enqueue(0, 1500).is_some());
        assert_eq!(s.bytes(0), 1500);
        assert!(s.enqueue(0, 1500).is_some());
        assert!(s.enqueue(0, 1500).is_some());
        assert_eq!(s.bytes(0), 4500);
        assert!(s.enqueue(0, 1500).is_none());
        assert!(s.enqueue(0, 1).is_none());
        // after 6 us half a packet has left: 750 B room
        assert_eq!(s.bytes(6000), 3750);
        assert!(s.enqueue(6000, 1000).is_none());
        assert!(s.enqueue(6000, 700).is_some());
        assert_eq!(s.bytes(6000), 4450);
        // after everything drained the backlog is zero
        assert_eq!(s.bytes(1_000_000), 0);
    }

    #[test]
    fn drop_tail_packets() {
        let mut s = DropTail::new(Some(1_000_000_000), None, Some(2));
        assert!(s.enqueue(0, 1500).is_some()); // in service
        assert!(s.enqueue(0, 1500).is_some()); // waiting 1
        assert!(s.enqueue(0, 1500).is_some()); // waiting 2
        assert!(s.enqueue(0, 1500).is_none());
        assert_eq!(s.packets(0), 2);
        // at 12 us the second starts: one waiting
        assert_eq!(s.packets(12_000), 1);
        assert!(s.enqueue(12_000, 1500).is_some());
        assert!(s.enqueue(12_000, 1500).is_none());
        assert!(s.fits(100_000, 1500, 1));
    }

    #[test]
    fn oversize_on_idle_link_is_accepted() {
        let mut s = DropTail::new(Some(1_000_000_000), Some(1000), None);
        assert!(s.enqueue(0, 1500).is_some());
        assert!(s.enqueue(0, 10).is_none());
    }

    #[test]
    fn rate_change_applies_to_new_arrivals() {
        let mut s = DropTail::new(Some(1_000_000_000), None, None);
        assert_eq!(s.enqueue(0, 1500), Some(12_000));
        s.set_rate(Some(500_000_000));
        assert_eq!(s.enqueue(0, 1500), Some(36_000));
    }
}
