//! The link's serialisation in virtual time: when a frame accepted at t has left.
//!
//! No frame is stored: the link is described by `busy_until` (when it finishes
//! serialising what it accepted so far). A queue discipline (`queue.rs`) decides what is
//! accepted; this computes when it leaves, and the backlog any past state implies.

pub(crate) const NS_BITS: u128 = 8 * 1_000_000_000; // bits per byte * ns per s

#[derive(Debug, Clone, Default)]
pub struct Serialiser {
    rate_bps: Option<u64>,
    busy_until: u64,
    /// Remainder of the last serialisation time, in units of 1/rate ns, so that
    /// back-to-back frames do not drift by rounding.
    rem: u64,
}

impl Serialiser {
    pub fn new(rate_bps: Option<u64>) -> Self {
        Serialiser { rate_bps, busy_until: 0, rem: 0 }
    }

    pub fn rate_bps(&self) -> Option<u64> {
        self.rate_bps
    }

    /// Applies to frames accepted from now on; those accepted keep their departures.
    pub fn set_rate(&mut self, r: Option<u64>) {
        self.rate_bps = r;
        self.rem = 0;
    }

    /// When the last accepted frame has left (0 before any; t itself at no rate limit).
    pub fn busy_until(&self) -> u64 {
        self.busy_until
    }

    /// When a frame arriving at t starts to serialise (at once on an idle link).
    #[inline]
    pub fn start_for(&self, t: u64) -> u64 {
        self.busy_until.max(t)
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

    /// Serialise `wire` bytes arriving at t after everything accepted before: the
    /// departure time (end of serialisation); t itself when the rate is unlimited.
    #[inline]
    pub fn serialise(&mut self, t: u64, wire: u32) -> u64 {
        let Some(r) = self.rate_bps else { return t };
        let start = if self.busy_until > t {
            self.busy_until
        } else {
            self.rem = 0;
            t
        };
        let num = wire as u128 * NS_BITS + self.rem as u128;
        self.rem = (num % r as u128) as u64;
        self.busy_until = start + (num / r as u128) as u64;
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlimited_rate_departs_at_arrival_and_holds_no_backlog() {
        let mut s = Serialiser::new(None);
        assert_eq!(s.serialise(5, 1500), 5);
        assert_eq!(s.serialise(5, 1500), 5);
        assert_eq!(s.backlog_bytes(5), 0);
    }

    #[test]
    fn back_to_back_departures_carry_the_rounding_remainder() {
        // 1500 B at 1 Gbit/s = 12 us; at 7 Gbit/s 1714.28 ns: 7000 of them = 12 ms exactly.
        let mut s = Serialiser::new(Some(1_000_000_000));
        assert_eq!(s.serialise(1000, 1500), 13_000);
        assert_eq!(s.serialise(1000, 1500), 25_000);
        assert_eq!(s.backlog_bytes(13_000), 1500);
        assert_eq!(s.serialise(30_000, 1500), 42_000); // idle gap: starts at arrival
        let mut s = Serialiser::new(Some(7_000_000_000));
        let last = (0..7000).map(|_| s.serialise(0, 1500)).last().unwrap();
        assert_eq!(last, 12_000_000);
    }
}
