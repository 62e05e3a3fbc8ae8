//! Chunking: group the surviving segments of one super-packet into
//! contiguous runs, each at most `max_seg` segments long.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub first: u32,
    pub nseg: u32,
    /// Departure (end of serialisation) of the chunk's last segment.
    pub last_departure: u64,
}

/// Largest chunk whose serialisation at `rate_bps` takes at most `chunk_ns`.
pub fn max_segments(chunk_ns: u64, rate_bps: Option<u64>, seg_wire: u32) -> u32 {
    match rate_bps {
        None => u32::MAX,
        Some(r) => {
            let bytes = chunk_ns as u128 * r as u128 / 8_000_000_000;
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
    fn max_segments_from_rate() {
        // 100 us at 100 Mbit/s = 1250 B: one 1514 B segment per chunk.
        assert_eq!(max_segments(100_000, Some(100_000_000), 1514), 1);
        // at 1 Gbit/s 12500 B: 8 segments
        assert_eq!(max_segments(100_000, Some(1_000_000_000), 1514), 8);
        // at 10 Gbit/s 125 kB: a whole 64 KB packet (45 segments)
        assert!(max_segments(100_000, Some(10_000_000_000), 1514) >= 45);
        assert_eq!(max_segments(100_000, None, 1514), u32::MAX);
    }
}
