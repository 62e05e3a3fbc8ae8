//! One direction's stages without any I/O: loss -> queue (a discipline and the link's
//! serialisation) -> chunking -> delay line, plus monitoring. Time is passed in by the
//! caller; the queue discipline is a type parameter (drop-tail unless told).

use crate::chunk::{max_segments, Chunk, Chunker};
use crate::config::DirConfig;
use crate::delay::DelayLine;
use crate::deperr::{DepartureErrors, DepartureSummary};
use crate::droptail::DropTail;
use crate::gso::PktMeta;
use crate::loss::Loss;
use crate::monitor::Monitor;
use crate::pairs::PairTable;
use crate::queue::Queue;
use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct DirStats {
    pub rx_frames: u64,
    pub rx_segments: u64,
    pub rx_bytes: u64,
    pub tx_frames: u64,
    pub tx_segments: u64,
    pub tx_bytes: u64,
    pub drops_queue: u64,
    pub drops_loss: u64,
    pub pool_drops: u64,
    pub socket_drops: u64,
    pub late_packets: u64,
    pub max_lag_us: u64,
    pub chunks_split: u64,
    /// Frames the kernel refused on transmit (not part of the model).
    pub tx_errors: u64,
    /// Frames larger than the receive reservation (cut by the kernel).
    pub rx_truncated: u64,
    /// Longest time a frame waited in the rx socket before we read it.
    pub max_rx_wait_us: u64,
    /// Frames whose kernel receive stamp was unusable (arrival = read time).
    pub rx_unstamped: u64,
    /// Sampled segments' departure error (kernel transmit stamp − schedule).
    pub departure_error: DepartureSummary,
}

/// A released unit: segments [first, first+nseg) of packet `pkt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkRef {
    pub pkt: u32,
    pub first: u32,
    pub nseg: u32,
}

pub struct Pipeline<Q: Queue = DropTail> {
    pub loss: Loss,
    pub queue: Q,
    pub delay: DelayLine<ChunkRef>,
    pub pairs: PairTable,
    pub mon: Monitor,
    pub stats: DirStats,
    pub deperr: DepartureErrors,
    delay_ns: u64,
    chunk_ns: u64,
    late_ns: u64,
    max_lag_ns: u64,
}

impl Pipeline<DropTail> {
    pub fn new(
        d: &DirConfig,
        pairs: PairTable,
        seed: u64,
        t0: u64,
        interval_ns: u64,
        chunk_ns: u64,
        late_ns: u64,
    ) -> Self {
        let ncl = pairs.nclasses();
        Pipeline {
            loss: Loss::new(d.loss.clone(), seed),
            queue: DropTail::new(d.rate_bps, d.queue_bytes, d.queue_packets),
            delay: DelayLine::new(ncl, 1 << 16),
            pairs,
            mon: Monitor::new(t0, interval_ns),
            stats: DirStats::default(),
            deperr: DepartureErrors::default(),
            delay_ns: d.delay_us * 1000,
            chunk_ns,
            late_ns,
            max_lag_ns: 0,
        }
    }
}

impl<Q: Queue> Pipeline<Q> {
    /// The same pipeline with another queue discipline (built for the same rate and
    /// limits): `Pipeline::new(…).with_queue(Red::new(…))`.
    pub fn with_queue<R: Queue>(self, queue: R) -> Pipeline<R> {
        Pipeline {
            loss: self.loss,
            queue,
            delay: self.delay,
            pairs: self.pairs,
            mon: self.mon,
            stats: self.stats,
            deperr: self.deperr,
            delay_ns: self.delay_ns,
            chunk_ns: self.chunk_ns,
            late_ns: self.late_ns,
            max_lag_ns: self.max_lag_ns,
        }
    }

    /// Smallest delay a frame arriving now can get (pair extras only add).
    pub fn min_delay_ns(&self) -> u64 {
        self.delay_ns
    }

    /// Apply a (validated) runtime configuration to future arrivals.
    pub fn apply(&mut self, old: &DirConfig, new: &DirConfig) {
        if old.rate_bps != new.rate_bps {
            self.queue.set_rate(new.rate_bps);
        }
        self.queue.set_limits(new.queue_bytes, new.queue_packets);
        self.delay_ns = new.delay_us * 1000;
        if old.loss != new.loss {
            self.loss.set_config(new.loss.clone());
        }
    }

    #[inline]
    fn push_chunk(&mut self, c: Chunk, m: &PktMeta, pkt: u32, class: usize) {
        let release = c.last_departure + self.delay_ns + self.pairs.extra_ns(class);
        if c.nseg != m.nseg {
            self.stats.chunks_split += 1;
        }
        self.delay.push(class, release, ChunkRef { pkt, first: c.first, nseg: c.nseg });
    }

    /// Process a frame arriving at t. Returns how many chunks of it were
    /// queued for release (0: the caller may free it now).
    pub fn arrive(&mut self, t: u64, m: &PktMeta, class: usize, pkt: u32) -> u32 {
        let st = &mut self.stats;
        st.rx_frames += 1;
        st.rx_segments += m.nseg as u64;
        st.rx_bytes += m.wire_total();
        if m.nseg > 1 && !m.splittable {
            return self.arrive_whole(t, m, class, pkt);
        }
        let max_seg = max_segments(self.chunk_ns, self.queue.link().rate_bps(), m.full_seg_wire());
        let mut ch = Chunker::new(max_seg);
        let lossy = !self.loss.is_none();
        let mut queued = 0;
        for i in 0..m.nseg {
            let wire = m.seg_wire(i);
            let dep = if lossy && self.loss.lose() {
                self.stats.drops_loss += 1;
                self.mon.drop_loss(t, 1);
                None
            } else if let Some(d) = self.queue.enqueue(t, wire) {
                self.mon.depart(d, wire);
                Some(d)
            } else {
                self.stats.drops_queue += 1;
                self.mon.drop_queue(t, 1);
                None
            };
            if let Some(c) = ch.feed(i, dep) {
                self.push_chunk(c, m, pkt, class);
                queued += 1;
            }
        }
        if let Some(c) = ch.finish() {
            self.push_chunk(c, m, pkt, class);
            queued += 1;
        }
        let b = self.queue.bytes(t);
        self.mon.arrived(t, b, self.queue.link().busy_until());
        queued
    }

    /// Indivisible GSO packet (e.g. UDP GSO): one loss draw and one
    /// drop-tail decision for the whole packet; segments still serialise
    /// one by one.
    fn arrive_whole(&mut self, t: u64, m: &PktMeta, class: usize, pkt: u32) -> u32 {
        let n = m.nseg as u64;
        if !self.loss.is_none() && self.loss.lose() {
            self.stats.drops_loss += n;
            self.mon.drop_loss(t, n);
            return 0;
        }
        if !self.queue.fits(t, m.wire_total(), n) {
            self.stats.drops_queue += n;
            self.mon.drop_queue(t, n);
            return 0;
        }
        let mut last = t;
        for i in 0..m.nseg {
            let wire = m.seg_wire(i);
            last = self.queue.admit(t, wire);
            self.mon.depart(last, wire);
        }
        self.push_chunk(Chunk { first: 0, nseg: m.nseg, last_departure: last }, m, pkt, class);
        let b = self.queue.bytes(t);
        self.mon.arrived(t, b, self.queue.link().busy_until());
        1
    }

    /// The statistics with the departure errors' summary.
    pub fn final_stats(&self) -> DirStats {
        DirStats { departure_error: self.deperr.summary(), ..self.stats }
    }

    /// Account a chunk handed to the kernel at `now`.
    #[inline]
    pub fn sent(&mut self, now: u64, release: u64, m: &PktMeta, c: &ChunkRef) {
        let st = &mut self.stats;
        st.tx_frames += 1;
        st.tx_segments += c.nseg as u64;
        let (ps, pe) = if m.nseg > 1 { m.payload_range(c.first, c.nseg) } else { (0, m.frame_len - m.hdr_len) };
        st.tx_bytes += (pe - ps) as u64 + c.nseg as u64 * m.hdr_len as u64;
        let lag = now.saturating_sub(release);
        if lag > self.max_lag_ns {
            self.max_lag_ns = lag;
            st.max_lag_us = lag / 1000;
        }
        if lag > self.late_ns {
            st.late_packets += c.nseg as u64;
            self.mon.late(now, c.nseg as u64, lag);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LossConfig, LossModel};
    use crate::gso::{classify, testpkt::build};

    fn dir(rate: Option<u64>, delay_us: u64, qb: Option<u64>, p: f64) -> DirConfig {
        DirConfig {
            rate_bps: rate,
            delay_us,
            queue_bytes: qb,
            queue_packets: None,
            loss: LossConfig {
                model: if p > 0.0 { LossModel::Bernoulli } else { LossModel::None },
                p,
                ..Default::default()
            },
        }
    }

    /// Drive a packet train through the pipeline with a fake clock.
    /// Returns (release, meta, chunk) of every released chunk plus the CSV.
    fn simulate(
        d: &DirConfig,
        metas: &[PktMeta],
        send_rate_bps: u64,
        dur_ns: u64,
    ) -> (Pipeline, Vec<(u64, u64, ChunkRef)>, String) {
        let t0 = 1_000_000_000;
        let mut p = Pipeline::new(d, PairTable::default(), 1, t0, 1_000_000, 100_000, 200_000);
        let mut out = Vec::new();
        let mut csv = Vec::new();
        let mut next_arrival = t0;
        let mut k = 0usize;
        let step = 5_000; // fake loop period: 5 us
        let mut now = t0;
        let mut arrivals = vec![];
        while now < t0 + dur_ns + 1_000_000_000 {
            p.mon.finalize(now, p.queue.link(), &mut csv).unwrap();
            while next_arrival <= now && next_arrival < t0 + dur_ns {
                let m = metas[k % metas.len()];
                p.arrive(now, &m, 0, k as u32);
                arrivals.push(m);
                next_arrival += m.wire_total() * 8 * 1_000_000_000 / send_rate_bps;
                k += 1;
            }
            while let Some((rel, c)) = p.delay.pop_due(now) {
                let m = arrivals[c.pkt as usize];
                p.sent(now, rel, &m, &c);
                out.push((rel, now, c));
            }
            now += step;
        }
        (p, out, String::from_utf8(csv).unwrap())
    }

    fn col(csv: &str, i: usize) -> Vec<u64> {
        csv.lines().map(|l| l.split(',').nth(i).unwrap().parse().unwrap()).collect()
    }

    #[test]
    fn simulation_gso_train_through_bottleneck() {
        // 64 KB TCP GSO packets offered at 2 Gbit/s to a 1 Gbit/s link with
        // a 1 MB queue and 10 ms delay, for 200 ms.
        let (v, f) = build(false, 65000, 1448, 0x18);
        let m = classify(&v, &f, f.len() as u32);
        let d = dir(Some(1_000_000_000), 10_000, Some(1_000_000), 0.0);
        let (p, out, csv) = simulate(&d, &[m], 2_000_000_000, 200_000_000);
        let st = p.stats;
        // conservation
        assert_eq!(st.rx_segments, st.tx_segments + st.drops_queue);
        assert!(st.drops_queue > 0);
        assert_eq!(st.drops_loss, 0);
        // chunks: 8 segments max at 1 Gbit/s (100 us), and splits happened
        assert!(out.iter().all(|(_, _, c)| c.nseg <= 8));
        assert!(st.chunks_split > 0);
        // first chunk: 8 segments serialised (8 * 1514 B = 96.9 us) + 10 ms
        let first = out[0].0 - 1_000_000_000;
        assert_eq!(first, 8 * 1514 * 8 + 10_000_000);
        // nothing released late by more than one fake-loop step
        assert!(out.iter().all(|(r, now, _)| now - r < 5_000));
        // departures per 1 ms interval never exceed the rate (+1 segment)
        let bytes = col(&csv, 1);
        assert!(bytes.iter().all(|&b| b <= 125_000 + 1514), "{:?}", bytes.iter().max());
        // steady state (20..180 ms) is at the rate within 1.3 %
        let mid: u64 = bytes[20..180].iter().sum();
        let rate = mid as f64 * 8.0 / 0.160;
        assert!((rate / 1e9 - 1.0).abs() < 0.013, "rate {rate}");
        // queue never above its limit
        assert!(col(&csv, 6).iter().all(|&q| q <= 1_000_000));
        assert!(col(&csv, 6).iter().max().unwrap() > &900_000);
        // total departed bytes in CSV == bytes sent
        assert_eq!(bytes.iter().sum::<u64>(), st.tx_bytes);
        assert_eq!(col(&csv, 3).iter().sum::<u64>(), st.drops_queue);
    }

    /// A discipline of its own, as an AQM would be: refuses every frame while two wait.
    struct TwoAtMost(crate::droptail::DropTail);

    impl Queue for TwoAtMost {
        fn fits(&mut self, t: u64, _bytes: u64, nseg: u64) -> bool {
            self.0.packets(t) + nseg <= 2
        }
        fn admit(&mut self, t: u64, wire: u32) -> u64 {
            self.0.admit(t, wire)
        }
        fn packets(&mut self, t: u64) -> u64 {
            self.0.packets(t)
        }
        fn link(&self) -> &crate::serialiser::Serialiser {
            self.0.link()
        }
        fn set_limits(&mut self, _b: Option<u64>, _p: Option<u64>) {}
        fn set_rate(&mut self, r: Option<u64>) {
            self.0.set_rate(r)
        }
    }

    #[test]
    fn another_queue_discipline_plugs_into_the_pipeline() {
        // 1 Gbit/s, one 10-segment arrival of 1514 B frames: the first starts at once,
        // two wait, the other seven are refused by the discipline (not by drop-tail,
        // which has no limit here)
        let d = dir(Some(1_000_000_000), 0, None, 0.0);
        let q = TwoAtMost(crate::droptail::DropTail::new(Some(1_000_000_000), None, None));
        let mut p = Pipeline::new(&d, PairTable::default(), 1, 0, 1_000_000, 100_000, 200_000).with_queue(q);
        let plain = PktMeta { frame_len: 1514, nseg: 1, hdr_len: 1514, ..Default::default() };
        for k in 0..10 {
            p.arrive(1_000, &plain, 0, k);
        }
        assert_eq!((p.stats.rx_segments, p.stats.drops_queue), (10, 7));
        let due: Vec<u64> = std::iter::from_fn(|| p.delay.pop_due(u64::MAX).map(|(r, _)| r)).collect();
        assert_eq!(due, vec![1_000 + 12_112, 1_000 + 2 * 12_112, 1_000 + 3 * 12_112]);
    }

    #[test]
    fn simulation_unlimited_rate_with_loss() {
        let (v, f) = build(true, 14480, 1448, 0x18);
        let m = classify(&v, &f, f.len() as u32);
        let plain = PktMeta { frame_len: 1514, nseg: 1, hdr_len: 1514, ..Default::default() };
        let d = dir(None, 20_000, None, 0.01);
        let (p, out, csv) = simulate(&d, &[m, plain], 5_000_000_000, 100_000_000);
        let st = p.stats;
        assert_eq!(st.rx_segments, st.tx_segments + st.drops_loss);
        let loss = st.drops_loss as f64 / st.rx_segments as f64;
        assert!((loss - 0.01).abs() < 0.003, "loss {loss}");
        // unlimited: release = arrival + delay exactly, on 5 us fake ticks
        assert!(out.iter().all(|(r, _, _)| (r - 1_000_000_000) % 5_000 == 0));
        assert!(out.iter().all(|(r, _, _)| *r >= 1_020_000_000));
        assert_eq!(col(&csv, 4).iter().sum::<u64>(), st.drops_loss);
        // unlimited rate: whole packets unless loss cut them
        assert!(out.iter().any(|(_, _, c)| c.nseg == 10));
    }

    #[test]
    fn mtu_udp_schedule_does_not_follow_a_late_loop() {
        // UDT's traffic: one 1514 B frame per datagram (no GSO), offered at 1.2 Gbit/s
        // into 1 Gbit/s with a 2.5 MB queue and 10 ms delay for 500 ms. The I/O loop runs
        // every 5 us but loses the CPU for 3 ms every 40 ms; frames keep their kernel
        // stamps, so the late loop must shift when chunks are handed over, never when
        // the link is computed to serialise them.
        let plain = PktMeta { frame_len: 1514, nseg: 1, hdr_len: 1514, ..Default::default() };
        let d = dir(Some(1_000_000_000), 10_000, Some(2_500_000), 0.0);
        let t0: u64 = 1_000_000_000;
        let dur: u64 = 500_000_000;
        let stamp = |k: u64| t0 + k * 60_560 / 6; // 1514 B at 1.2 Gbit/s: 10 093.3 ns apart
        let mut p = Pipeline::new(&d, PairTable::default(), 1, t0, 1_000_000, 100_000, 200_000);
        let (mut now, mut k) = (t0, 0u64);
        let mut out: Vec<(u64, u64)> = Vec::new(); // (release, handed over)
        while now < t0 + dur + 100_000_000 {
            if now > t0 && (now - t0) % 40_000_000 < 5_000 {
                now += 3_000_000; // the loop does not run: nothing read, nothing sent
            }
            while stamp(k) <= now && stamp(k) < t0 + dur {
                p.arrive(stamp(k), &plain, 0, k as u32);
                k += 1;
            }
            while let Some((rel, c)) = p.delay.pop_due(now) {
                p.sent(now, rel, &plain, &c);
                out.push((rel, now));
            }
            now += 5_000;
        }
        let st = p.stats;
        assert!(st.drops_queue > 0, "1.2 x the rate must overflow the queue");
        assert_eq!(st.rx_segments, st.tx_segments + st.drops_queue);
        // The link never idles: departures are back to back, 1514 * 8 bits at 1 bit/ns.
        assert_eq!(out[0].0, t0 + 12_112 + 10_000_000);
        assert!(out.windows(2).all(|w| w[1].0 - w[0].0 == 12_112), "a departure followed the loop");
        // 400 ms of releases hold exactly 400 ms of the rate.
        let n = out.iter().filter(|(r, _)| *r > t0 + 10_000_000 && *r <= t0 + 410_000_000).count();
        assert_eq!(n, 400_000_000 / 12_112);
        // The stalls were felt (late hand-overs) but bounded by the stall.
        assert!(st.late_packets > 0 && st.max_lag_us >= 2_900, "{} {}", st.late_packets, st.max_lag_us);
        assert!(out.iter().all(|(r, s)| s - r <= 3_005_000));
    }

    #[test]
    fn simulation_packet_queue_limit_and_whole_packets() {
        // 100 Mbit/s, queue of 10 packets, plain 1514 B frames at 200 Mbit/s
        let plain = PktMeta { frame_len: 1514, nseg: 1, hdr_len: 1514, ..Default::default() };
        let mut d = dir(Some(100_000_000), 1000, None, 0.0);
        d.queue_packets = Some(10);
        let (p, out, _csv) = simulate(&d, &[plain], 200_000_000, 100_000_000);
        let st = p.stats;
        let sent = out.len() as f64;
        // ~half dropped
        assert!((st.drops_queue as f64 / st.rx_segments as f64 - 0.5).abs() < 0.02);
        // spacing of releases in steady state = 121.12 us
        let span = (out[out.len() - 1].0 - out[20].0) as f64 / (sent - 21.0);
        assert!((span - 121_120.0).abs() < 1.0, "{span}");
    }
}
