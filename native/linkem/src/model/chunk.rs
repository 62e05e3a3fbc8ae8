//! Chunking: group the surviving segments of one super-packet into
//! contiguous runs, each at most `max_seg` segments long.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub first: u32,
    pub nseg: u32,
    /// Departure (end of serialisation) of the chunk's last segment.
    pub last_departure: u64,
}

/// A chunk lasts at most this long per Gbit/s of the rate (and at least this long): one
/// 1514 B segment at 1 Gbit/s and below, 6 at 2.5, 25 at 5, a whole 64 KB packet from
/// about 8 Gbit/s. As each chunk costs linkem a frame handed over, this keeps to about
/// 83 000 chunks a second at any rate, while a segment's departure is delayed by the
/// rest of its chunk for at most 12 µs at 1 Gbit/s.
pub const CHUNK_NS_PER_GBPS: u64 = 12_000;

/// Largest chunk whose serialisation at `rate_bps` takes at most `chunk_ns` and at most
/// `CHUNK_NS_PER_GBPS` per Gbit/s (never less than one segment).
pub fn max_segments(chunk_ns: u64, rate_bps: Option<u64>, seg_wire: u32) -> u32 {
    match rate_bps {
        None => u32::MAX,
        Some(r) => {
            let scaled = (CHUNK_NS_PER_GBPS as u128 * r as u128 / 1_000_000_000).max(CHUNK_NS_PER_GBPS as u128);
            let t = (chunk_ns as u128).min(scaled);
            let bytes = t * r as u128 / 8_000_000_000;
            (bytes / seg_wire.max(1) as u128).clamp(1, u32::MAX as u128) as u32
        }
    }
}

#[derive(Debug)]
pub struct Chunker {
    max_seg: u32,
    cur: Option<Chunk>,
}

impl Chunker {
    pub fn new(max_seg: u32) -> Self {
        Chunker { max_seg: max_seg.max(1), cur: None }
    }

    /// Feed segment `i` (in order): Some(departure) if it survived, None if
    /// lost or dropped. Returns a chunk when one is complete.
    #[inline]
    pub fn feed(&mut self, i: u32, dep: Option<u64>) -> Option<Chunk> {
        match dep {
            None => self.cur.take(),
            Some(d) => match &mut self.cur {
                Some(c) if c.nseg < self.max_seg && c.first + c.nseg == i => {
                    c.nseg += 1;
                    c.last_departure = d;
                    None
                }
                _ => self.cur.replace(Chunk { first: i, nseg: 1, last_departure: d }),
            },
        }
    }

    pub fn finish(&mut self) -> Option<Chunk> {
        self.cur.take()
    }
}

/// Convenience for tests: chunk a whole vector of per-segment outcomes.
#[cfg(test)]
pub fn chunk_all(deps: &[Option<u64>], max_seg: u32) -> Vec<Chunk> {
    let mut c = Chunker::new(max_seg);
    let mut out: Vec<Chunk> = deps.iter().enumerate().filter_map(|(i, d)| c.feed(i as u32, *d)).collect();
    out.extend(c.finish());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(first: u32, nseg: u32, d: u64) -> Chunk {
        Chunk { first, nseg, last_departure: d }
    }

    #[test]
    fn whole_packet_one_chunk() {
        let deps: Vec<_> = (0..5).map(|i| Some(10 + i)).collect();
        assert_eq!(chunk_all(&deps, 100), vec![ch(0, 5, 14)]);
    }

    #[test]
    fn drops_split_runs() {
        let deps = [Some(1), Some(2), None, Some(4), None, None, Some(7)];
        assert_eq!(chunk_all(&deps, 100), vec![ch(0, 2, 2), ch(3, 1, 4), ch(6, 1, 7)]);
        assert_eq!(chunk_all(&[None, None], 3), vec![]);
    }

    #[test]
    fn size_limit() {
        let deps: Vec<_> = (0..7).map(Some).collect();
        assert_eq!(chunk_all(&deps, 3), vec![ch(0, 3, 2), ch(3, 3, 5), ch(6, 1, 6)]);
        assert_eq!(chunk_all(&deps, 1).len(), 7);
    }

    #[test]
    fn a_chunk_lasts_twelve_microseconds_per_gigabit_and_at_most_chunk_us() {
        // 100 Mbit/s: 12 us hold 150 B: one 1514 B segment (never less).
        assert_eq!(max_segments(100_000, Some(100_000_000), 1514), 1);
        // 1 Gbit/s: 12 us hold 1500 B: still one segment (12.1 us each).
        assert_eq!(max_segments(100_000, Some(1_000_000_000), 1514), 1);
        // 2.5 Gbit/s: 30 us hold 9375 B: 6 segments.
        assert_eq!(max_segments(100_000, Some(2_500_000_000), 1514), 6);
        // 5 Gbit/s: 60 us hold 37 500 B: 24 segments (24 x 1514 = 36 336).
        assert_eq!(max_segments(100_000, Some(5_000_000_000), 1514), 24);
        // 10 Gbit/s: 120 us, capped at chunk_us (100 us): 125 kB, a whole 64 KB packet.
        assert_eq!(max_segments(100_000, Some(10_000_000_000), 1514), 82);
        // a smaller chunk_us wins at any rate: 20 us at 10 Gbit/s hold 25 kB: 16 segments.
        assert_eq!(max_segments(20_000, Some(10_000_000_000), 1514), 16);
        assert_eq!(max_segments(100_000, None, 1514), u32::MAX);
    }
}
