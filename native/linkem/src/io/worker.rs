//! One direction's I/O loop: AF_PACKET rx -> pipeline -> AF_PACKET tx.
//!
//! Single-threaded per direction; the only shared state is the control
//! hand-over (an atomic flag checked once per loop, a mutex taken only when
//! it is set) and the global stop flag.

use crate::config::{DirConfig, Update};
use crate::gso::{
    chunk_vnet, classify, forward_vnet, rewrite_headers, PktMeta, VnetHdr, GSO_NONE, MAX_HDR, VNET_HDR_LEN,
};
use crate::logsink::LogSink;
use crate::pipeline::{ChunkRef, DirStats, Pipeline};
use crate::pool::{MmapArray, Pool, BLOCK, BLOCKS_PER_MAX, MAX_FRAME};
use crate::queue::Queue;
use crate::sock::{cmsg_stamp, eventfd_clear, now_ns, real_ns, PacketSocket};
use crate::txstamp::TxStamps;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const RX_BATCH: usize = 8;
const TX_BATCH: usize = 16;
/// Receive batches per loop before transmitting again (bounds tx latency).
const RX_ROUNDS: usize = 2;
const FLUSH_NS: u64 = 100_000_000;
const RT_PRIO: i32 = 10;
/// Longest sleep: bounds the staleness of the CSV and of socket_drops.
const MAX_SLEEP_NS: u64 = 50_000_000;
/// Intervals are written this long after their end, so that frames still
/// in the socket queue (stamped by the kernel earlier) land in the right one.
const HOLD_NS: u64 = 100_000_000;
/// While releases are pending, frames may wait this long in the socket
/// before we read them (they keep their kernel stamps, so timing is exact)
/// instead of waking for each one; allowed when the delay is >= 2x this.
const RX_COALESCE_NS: u64 = 500_000;
/// Between receive batches, what is due is sent once reading has taken this long.
const RX_TX_CHECK_NS: u64 = 20_000;
/// Bound on the learned timer overshoot compensation.
const MAX_EARLY_NS: u64 = 300_000;
/// Bound on how early a chunk may be sent in non-spinning mode, however late the timers
/// run (the thread still wakes early by their learned overshoot): 100 us before the
/// departure error was measured, which let a segment leave up to 94 us early at 1 Gbit/s
/// (p99 of |error| 28-68 us over runs; 28-35 us with 40).
const MAX_TOL_NS: u64 = 40_000;
/// ... and how early it may always be sent: a floor on the wake-up period,
/// because under load each extra wake-up costs more than it buys. 30 us rather than 50:
/// the departure error's p99 at 1 Gbit/s fell from 47-74 us to 28-39 us for 15 % more
/// of a core (bench/emulator.py, docs/linkem.md).
const MIN_TOL_NS: u64 = 30_000;
/// Without spinning, after a round (a wake-up, what is due sent) that sent several
/// frames, the next is at least this much later: with dense frames the wake-ups, not the
/// frames, cost the CPU (15 µs each on this VM). 100 us, one `chunk_us`: the wake-up rate
/// of the 50-100 us tolerance before it was cut to 30-40 (which took the emulator from
/// 61-64 to 70-76 % of a core for MTU-size UDP at 1 Gbit/s, 10.5 to 15.5 thousand
/// wake-ups a second, and left the sender beside it short of CPU).
const DENSE_PERIOD_NS: u64 = 100_000;

/// Control hand-over from the stdin thread.
pub struct Ctl {
    pub flag: AtomicBool,
    pub pending: Mutex<Vec<Update>>,
    pub evfd: OwnedFd,
}

/// Per-packet state, indexed by the packet's first block.
#[derive(Clone, Copy)]
struct Slot {
    vnet: VnetHdr,
    meta: PktMeta,
    refs: u32,
    nblocks: u32,
}

fn iov0() -> libc::iovec {
    libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }
}

fn zeroed_mmsg() -> libc::mmsghdr {
    // SAFETY: mmsghdr is plain data; null pointers are valid placeholders.
    unsafe { std::mem::zeroed() }
}

struct RxBufs {
    msgs: [libc::mmsghdr; RX_BATCH],
    iovs: [[libc::iovec; BLOCKS_PER_MAX + 2]; RX_BATCH],
    vnets: [[u8; VNET_HDR_LEN]; RX_BATCH],
    blocks: [[u32; BLOCKS_PER_MAX]; RX_BATCH],
    nb: [usize; RX_BATCH],
    ctrl: [[u64; 8]; RX_BATCH],
    scratch: Vec<u8>,
}

struct TxBufs {
    msgs: [libc::mmsghdr; TX_BATCH],
    iovs: [[libc::iovec; BLOCKS_PER_MAX + 3]; TX_BATCH],
    vnets: [[u8; VNET_HDR_LEN]; TX_BATCH],
    hdrs: [[u8; MAX_HDR]; TX_BATCH],
    items: [(u64, ChunkRef); TX_BATCH],
}

pub struct Worker {
    pub name: &'static str,
    pub rx: PacketSocket,
    pub tx: PacketSocket,
    pub cfg: DirConfig,
    pub pipe: Pipeline,
    pub pool: Pool,
    pub ctl: Arc<Ctl>,
    pub stop: &'static AtomicBool,
    pub csv: LogSink,
    pub spin_ns: u64,
}

struct Loop {
    w: Worker,
    /// Latest arrival time given to the pipeline (arrivals are monotonic).
    last_arrival: u64,
    /// Learned mean overshoot of ppoll timeouts; we wake this much early.
    early_ns: u64,
    slots: MmapArray<Slot>,
    rxb: Box<RxBufs>,
    txb: Box<TxBufs>,
    stamps: TxStamps,
}

impl Worker {
    pub fn run(self) -> std::io::Result<DirStats> {
        // SAFETY: prctl/sched_setscheduler with plain arguments on this thread.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
            // The link must not wait behind the endpoints it serves: run
            // real-time if allowed (we never spin unboundedly; the kernel's
            // RT throttling is a further backstop). Best effort.
            let sp = libc::sched_param { sched_priority: RT_PRIO };
            if libc::sched_setscheduler(0, libc::SCHED_FIFO, &sp) != 0 {
                libc::setpriority(libc::PRIO_PROCESS, 0, -20);
            }
        }
        let slots = MmapArray::zeroed(self.pool.nblocks() as usize)?;
        let rxb = Box::new(RxBufs {
            msgs: [zeroed_mmsg(); RX_BATCH],
            iovs: [[iov0(); BLOCKS_PER_MAX + 2]; RX_BATCH],
            vnets: [[0; VNET_HDR_LEN]; RX_BATCH],
            blocks: [[0; BLOCKS_PER_MAX]; RX_BATCH],
            nb: [0; RX_BATCH],
            ctrl: [[0; 8]; RX_BATCH],
            scratch: vec![0u8; MAX_FRAME],
        });
        let txb = Box::new(TxBufs {
            msgs: [zeroed_mmsg(); TX_BATCH],
            iovs: [[iov0(); BLOCKS_PER_MAX + 3]; TX_BATCH],
            vnets: [[0; VNET_HDR_LEN]; TX_BATCH],
            hdrs: [[0; MAX_HDR]; TX_BATCH],
            items: [(0, ChunkRef { pkt: 0, first: 0, nseg: 0 }); TX_BATCH],
        });
        let stamps = TxStamps::new(self.tx.as_raw_fd())?;
        Loop { w: self, last_arrival: 0, early_ns: 50_000, slots, rxb, txb, stamps }.run()
    }
}

impl Loop {
    fn run(mut self) -> std::io::Result<DirStats> {
        let mut next_flush = now_ns() + FLUSH_NS;
        let rxfd = self.w.rx.as_raw_fd();
        let evfd = self.w.ctl.evfd.as_raw_fd();
        loop {
            if self.w.stop.load(Ordering::Relaxed) {
                break;
            }
            if self.w.ctl.flag.load(Ordering::Acquire) {
                self.apply_updates();
            }
            // Without spinning, chunks due within the expected timer
            // overshoot go now: release jitter is then centred on zero
            // instead of always late.
            let tol = if self.w.spin_ns == 0 { self.early_ns.clamp(MIN_TOL_NS, MAX_TOL_NS) } else { 0 };
            // What is due goes before what is waiting to be read: frames read later keep
            // their kernel stamps, frames sent later are late (up to three batches of
            // 64 KB frames, 500 us of them when reads are coalesced, are copied in here).
            // Between batches too, once reading has taken RX_TX_CHECK_NS: a batch of
            // 64 KB frames takes tens of us to copy, one of MTU frames a few, and a
            // sendmmsg for every one or two frames would cost more than it saves. What
            // became due while reading goes at the top of the next round.
            let round = now_ns();
            let (frames, segments) = self.tx_due(round, tol);
            // several frames, each a single segment (MTU-size frames, ACKs; not chunks of
            // GSO frames): closer together than the tolerance (the wake-up floor below)
            let dense = frames > 1 && segments == frames as u64;
            let mut checked = round;
            let mut rounds = 0;
            while self.rx_batch()? == RX_BATCH && rounds < RX_ROUNDS {
                rounds += 1;
                let t = now_ns();
                if t - checked >= RX_TX_CHECK_NS {
                    let _ = self.tx_due(t, tol);
                    checked = t;
                }
            }
            let now = now_ns();
            if now >= next_flush {
                self.w.csv.flush()?;
                self.w.pipe.stats.socket_drops += self.w.rx.take_drops();
                next_flush = now + FLUSH_NS;
            }
            let deadline = self.w.pipe.delay.next_release().unwrap_or(u64::MAX).min(next_flush);
            let t = now_ns();
            // Single-segment frames closer together than the tolerance (MTU frames at
            // 1 Gbit/s are 12 us apart; the last round sent several): a round at most every
            // DENSE_PERIOD_NS, so a frame due just after a round waits for the next (up to
            // DENSE_PERIOD_NS - tol late) instead of a wake-up of its own. Chunks of GSO
            // frames are untouched (a wake-up is small beside their copies; at 10 Gbit/s
            // the floor doubled their p99 error), and so are links of less than 1 ms
            // (where reads are not coalesced either: 100 us is a share of their delay)
            // and spinning mode.
            let long_link = self.w.pipe.min_delay_ns() >= 2 * RX_COALESCE_NS;
            let floor = if dense && long_link && self.w.spin_ns == 0 { round + DENSE_PERIOD_NS } else { 0 };
            if deadline <= t + tol && t >= floor {
                continue;
            }
            let mut wait = (deadline.max(floor) - t).min(MAX_SLEEP_NS);
            let coalesce = !self.w.pipe.delay.is_empty() && long_link;
            if coalesce {
                wait = wait.min(RX_COALESCE_NS);
            }
            if self.w.spin_ns > 0 && wait <= self.w.spin_ns.max(self.early_ns + 2_000) {
                // precise mode: spin on the (vDSO) clock, no syscalls; frames
                // arriving meanwhile keep their kernel stamps
                while now_ns() < deadline {
                    std::hint::spin_loop();
                }
                continue;
            }
            // Timers overshoot by tens of us on VMs: ask to wake early by the
            // learned mean overshoot.
            let wait = wait.saturating_sub(self.early_ns).max(1_000);
            let mut fds = [
                libc::pollfd { fd: rxfd, events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: evfd, events: libc::POLLIN, revents: 0 },
            ];
            let ts = libc::timespec { tv_sec: (wait / 1_000_000_000) as i64, tv_nsec: (wait % 1_000_000_000) as i64 };
            // While coalescing, only the eventfd (control/stop) may wake us.
            let (fp, nfds) = if coalesce { (fds[1..].as_mut_ptr(), 1) } else { (fds.as_mut_ptr(), 2) };
            // SAFETY: fp/nfds describe live pollfds; ts is a valid timespec.
            let r = unsafe { libc::ppoll(fp, nfds, &ts, std::ptr::null()) };
            if r > 0 && fds[1].revents != 0 {
                eventfd_clear(evfd);
            }
            if r == 0 {
                let over = now_ns().saturating_sub(t + wait).min(MAX_EARLY_NS) as i64;
                let e = self.early_ns as i64;
                self.early_ns = (e + (over - e) / 8) as u64;
            }
        }
        let now = now_ns();
        let w = &mut self.w;
        w.pipe.mon.finalize(now, w.pipe.queue.link(), &mut w.csv)?;
        // the interval holding the stop time, partially observed
        let end = w.pipe.mon.next_end();
        w.pipe.mon.finalize(end, w.pipe.queue.link(), &mut w.csv)?;
        w.csv.close();
        w.pipe.stats.socket_drops += w.rx.take_drops();
        Ok(w.pipe.final_stats())
    }

    fn apply_updates(&mut self) {
        self.w.ctl.flag.store(false, Ordering::Release);
        let ups = std::mem::take(&mut *self.w.ctl.pending.lock().unwrap());
        for u in ups {
            let mut new = self.w.cfg.clone();
            u.apply_to(&mut new);
            self.w.pipe.apply(&self.w.cfg, &new);
            self.w.cfg = new;
            let ev = serde_json::json!({
                "event": "applied", "dir": self.w.name, "t_ns": now_ns(),
                "rate_bps": self.w.cfg.rate_bps, "delay_us": self.w.cfg.delay_us,
                "queue_bytes": self.w.cfg.queue_bytes, "queue_packets": self.w.cfg.queue_packets,
                "loss": self.w.cfg.loss,
            });
            crate::emit(&ev.to_string());
        }
    }

    /// One recvmmsg batch. Returns the number of frames received.
    fn rx_batch(&mut self) -> std::io::Result<usize> {
        let pool = &mut self.w.pool;
        let b = &mut *self.rxb;
        for k in 0..RX_BATCH {
            let nb = BLOCKS_PER_MAX.min(pool.available());
            b.iovs[k][0] =
                libc::iovec { iov_base: b.vnets[k].as_mut_ptr() as *mut libc::c_void, iov_len: VNET_HDR_LEN };
            for j in 0..nb {
                let blk = pool.alloc().unwrap();
                b.blocks[k][j] = blk;
                b.iovs[k][1 + j] = libc::iovec { iov_base: pool.ptr(blk) as *mut libc::c_void, iov_len: BLOCK };
            }
            let mut niov = 1 + nb;
            if nb < BLOCKS_PER_MAX {
                // pool (nearly) exhausted: overflow lands in scratch and is dropped
                b.iovs[k][niov] =
                    libc::iovec { iov_base: b.scratch.as_mut_ptr() as *mut libc::c_void, iov_len: MAX_FRAME };
                niov += 1;
            }
            b.nb[k] = nb;
            let h = &mut b.msgs[k].msg_hdr;
            h.msg_iov = b.iovs[k].as_mut_ptr();
            h.msg_iovlen = niov;
            h.msg_control = b.ctrl[k].as_mut_ptr() as *mut libc::c_void;
            h.msg_controllen = std::mem::size_of_val(&b.ctrl[k]);
            h.msg_flags = 0;
            b.msgs[k].msg_len = 0;
        }
        // SAFETY: msgs point to iovecs over live buffers owned by self.
        let r = unsafe {
            libc::recvmmsg(
                self.w.rx.as_raw_fd(),
                b.msgs.as_mut_ptr(),
                RX_BATCH as u32,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        let got = if r < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) => 0,
                Some(libc::ENETDOWN) => 0,
                _ => return Err(e),
            }
        } else {
            r as usize
        };
        let now = now_ns();
        let real_off = real_ns().wrapping_sub(now);
        let p = &mut self.w.pipe;
        p.mon.finalize(now.saturating_sub(HOLD_NS), p.queue.link(), &mut self.w.csv)?;
        let floor = p.mon.open_start();
        for k in 0..RX_BATCH {
            let nb = b.nb[k];
            let mut used = 0;
            if k < got {
                let len = b.msgs[k].msg_len as usize;
                let trunc = b.msgs[k].msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
                let frame_len = len.saturating_sub(VNET_HDR_LEN);
                if trunc {
                    p.stats.rx_truncated += 1;
                } else if frame_len > nb * BLOCK {
                    p.stats.pool_drops += 1;
                } else if frame_len >= 14 {
                    used = frame_len.div_ceil(BLOCK);
                    for j in 0..used - 1 {
                        pool.set_next(b.blocks[k][j], b.blocks[k][j + 1]);
                    }
                    // Arrival = kernel receive stamp: our own wake-up latency
                    // must not add to the emulated delay.
                    let t = match cmsg_stamp(&b.msgs[k].msg_hdr, libc::SO_TIMESTAMPNS) {
                        Some(ts) if ts.wrapping_sub(real_off) <= now => ts.wrapping_sub(real_off),
                        _ => {
                            p.stats.rx_unstamped += 1;
                            now
                        }
                    };
                    p.stats.max_rx_wait_us = p.stats.max_rx_wait_us.max((now - t) / 1000);
                    let t = t.max(self.last_arrival).max(floor);
                    self.last_arrival = t;
                    let pkt = b.blocks[k][0];
                    let vnet = VnetHdr::from_bytes(&b.vnets[k]);
                    let head = &pool.block(pkt)[..frame_len.min(BLOCK)];
                    let meta = classify(&vnet, head, frame_len as u32);
                    let class = p.pairs.class_of(head);
                    let queued = p.arrive(t, &meta, class, pkt);
                    if queued == 0 {
                        pool.free_chain(pkt, used as u32);
                    } else {
                        *self.slots.get_mut(pkt as usize) = Slot { vnet, meta, refs: queued, nblocks: used as u32 };
                    }
                }
            }
            // unused reservation goes back in reverse so the stack order is kept
            for j in (used..nb).rev() {
                pool.free(b.blocks[k][j]);
            }
        }
        Ok(got)
    }

    /// Record the sampled frame's departure error once its stamp is in.
    fn collect_stamp(&mut self, now: u64) {
        if !self.stamps.pending() {
            return;
        }
        match self.stamps.collect(now, real_ns().wrapping_sub(now_ns())) {
            Some(Ok((due, actual))) => self.w.pipe.deperr.record(due, actual),
            Some(Err(())) => self.w.pipe.deperr.unstamped += 1,
            None => {}
        }
    }

    /// Transmit every chunk due at `now`; returns how many were handed over and how
    /// many segments they held.
    fn tx_due(&mut self, now: u64, tol: u64) -> (usize, u64) {
        let fd = self.w.tx.as_raw_fd();
        let mut sent = (0, 0);
        loop {
            let b = &mut *self.txb;
            let mut n = 0;
            let mut sampled = None;
            while n < TX_BATCH {
                let Some((rel, c)) = self.w.pipe.delay.pop_due(now + tol) else {
                    break;
                };
                let s = self.slots.get(c.pkt as usize);
                let m = &s.meta;
                let iov = &mut b.iovs[n];
                let niov;
                if c.nseg == m.nseg {
                    let mut v = forward_vnet(&s.vnet);
                    if m.nseg <= 1 {
                        v.gso_type = GSO_NONE;
                        v.gso_size = 0;
                    }
                    b.vnets[n] = v.to_bytes();
                    niov = 1 + self.w.pool.chain_iov(c.pkt, 0, m.frame_len as usize, &mut iov[1..]);
                } else {
                    b.vnets[n] = chunk_vnet(&s.vnet, m, c.nseg).to_bytes();
                    let orig = self.w.pool.block(c.pkt);
                    rewrite_headers(orig, m, c.first, c.nseg, &mut b.hdrs[n]);
                    let h = m.hdr_len as usize;
                    iov[1] = libc::iovec { iov_base: b.hdrs[n].as_mut_ptr() as *mut libc::c_void, iov_len: h };
                    let (ps, pe) = m.payload_range(c.first, c.nseg);
                    niov = 2 + self.w.pool.chain_iov(c.pkt, h + ps as usize, h + pe as usize, &mut iov[2..]);
                }
                iov[0] = libc::iovec { iov_base: b.vnets[n].as_mut_ptr() as *mut libc::c_void, iov_len: VNET_HDR_LEN };
                let hdr = &mut b.msgs[n].msg_hdr;
                hdr.msg_iov = iov.as_mut_ptr();
                hdr.msg_iovlen = niov;
                if sampled.is_none() && self.stamps.want(rel) {
                    self.stamps.attach(hdr, rel, now); // the frame's due time: its release
                    sampled = Some(n);
                }
                b.items[n] = (rel, c);
                n += 1;
            }
            if n == 0 {
                return sent;
            }
            sent.0 += n;
            sent.1 += b.items[..n].iter().map(|(_, c)| c.nseg as u64).sum::<u64>();
            let mut off = 0;
            while off < n {
                // SAFETY: msgs[off..n] are fully built above.
                let r =
                    unsafe { libc::sendmmsg(fd, b.msgs.as_mut_ptr().add(off), (n - off) as u32, libc::MSG_DONTWAIT) };
                if r <= 0 {
                    // The kernel refused this frame (e.g. peer backlog full):
                    // count it and move on; the wire lost it.
                    self.w.pipe.stats.tx_errors += 1;
                    off += 1;
                } else {
                    off += r as usize;
                }
            }
            if let Some(k) = sampled {
                TxStamps::detach(&mut b.msgs[k].msg_hdr);
            }
            for k in 0..n {
                let (rel, c) = b.items[k];
                let s = self.slots.get_mut(c.pkt as usize);
                self.w.pipe.sent(now, rel, &s.meta, &c);
                s.refs -= 1;
                if s.refs == 0 {
                    let nbk = s.nblocks;
                    self.w.pool.free_chain(c.pkt, nbk);
                }
            }
            self.collect_stamp(now);
            if n < TX_BATCH {
                return sent;
            }
        }
    }
}
