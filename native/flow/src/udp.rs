//! `flow udp-send` / `flow udp-recv`: background UDP traffic.
//!
//! The sender paces datagrams by absolute deadlines computed from the start
//! (constant rate: exact integer schedule, no drift; Poisson: seeded
//! exponential gaps). Where datagrams are due closer than BATCH_GAP_NS apart
//! it wakes at most every BATCH_GAP_NS and hands all due datagrams to one
//! sendmmsg. Each payload starts with a sequence number and the send time
//! (little-endian u64s, as far as the size allows) so the receiver can count
//! losses.

use crate::cli::{interval_ns, UdpRecvArgs, UdpSendArgs};
use crate::clock::{now_ns, run_sampler, sleep_until, Ticker};
use crate::fail::Fail;
use crate::net;
use crate::output::{self, UDP_HEADER};
use crate::signals;
use itb_rng::Rng;
use serde::Serialize;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Datagrams per sendmmsg/recvmmsg call.
const BATCH: usize = 64;
/// Below this mean gap, wake no more often than this and send in batches.
const BATCH_GAP_NS: u64 = 50_000;
/// Receive buffer per datagram; longer ones are counted at full length (MSG_TRUNC).
const RX_SLOT: usize = 2048;
const MAX_UDP_PAYLOAD: usize = 65_507;

/// Departure times in ns after the start.
pub enum Schedule {
    /// k-th datagram at k·B·8·10⁹/R, exact in integers.
    Constant { size_bits_ns: u128, rate_bps: u128, k: u64 },
    /// Exponential gaps with mean B·8·10⁹/R.
    Poisson { rng: Rng, mean_ns: f64, t: f64 },
}

impl Schedule {
    pub fn new(size: usize, rate_bps: u64, poisson: Option<u64>) -> Schedule {
        match poisson {
            None => Schedule::Constant { size_bits_ns: size as u128 * 8_000_000_000, rate_bps: rate_bps as u128, k: 0 },
            Some(seed) => Schedule::Poisson { rng: Rng::new(seed), mean_ns: mean_gap_ns(size, rate_bps), t: 0.0 },
        }
    }

    /// Due time of the next datagram (ns after start).
    pub fn due(&self) -> u64 {
        match self {
            Schedule::Constant { size_bits_ns, rate_bps, k } => (*k as u128 * size_bits_ns / rate_bps) as u64,
            Schedule::Poisson { t, .. } => *t as u64,
        }
    }

    pub fn advance(&mut self) {
        match self {
            Schedule::Constant { k, .. } => *k += 1,
            Schedule::Poisson { rng, mean_ns, t } => *t += rng.exp(*mean_ns),
        }
    }
}

pub fn mean_gap_ns(size: usize, rate_bps: u64) -> f64 {
    size as f64 * 8e9 / rate_bps as f64
}

#[derive(Serialize, Default)]
struct SendSummary {
    role: &'static str,
    rate_bps: u64,
    size: usize,
    poisson: bool,
    seed: Option<u64>,
    datagrams: u64,
    bytes: u64,
    /// Datagrams the kernel refused (ENOBUFS, EAGAIN, ICMP errors): not sent.
    send_errors: u64,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    ok: bool,
    error: Option<String>,
}

#[derive(Serialize, Default)]
struct RecvSummary {
    role: &'static str,
    bytes: u64,
    datagrams: u64,
    /// Sequence numbers missing between the lowest and highest seen.
    lost: u64,
    first_ns: Option<u64>,
    last_ns: Option<u64>,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    ok: bool,
    error: Option<String>,
}

fn finish<T: Serialize>(
    path: &std::path::Path,
    sum: &mut T,
    res: Result<(), Fail>,
    set: impl FnOnce(&mut T, bool, Option<String>),
) -> Result<(), Fail> {
    let res = if signals::interrupted() { Err(Fail::interrupted()) } else { res };
    set(sum, res.is_ok(), res.as_ref().err().map(|e| e.msg.clone()));
    let written = output::write_summary(path, sum);
    res.and(written)
}

fn udp_socket(addr: std::net::SocketAddr) -> Result<Socket, Fail> {
    Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(|e| Fail::other(format!("socket: {e}")))
}

pub fn send(a: &UdpSendArgs) -> Result<(), Fail> {
    let mut sum = SendSummary {
        role: "udp-send",
        rate_bps: a.rate_bps,
        size: a.size,
        poisson: a.poisson,
        seed: a.poisson.then_some(a.seed),
        ..Default::default()
    };
    let res = send_inner(a, &mut sum);
    finish(&a.summary, &mut sum, res, |s, ok, e| {
        s.ok = ok;
        s.error = e;
    })
}

fn send_inner(a: &UdpSendArgs, sum: &mut SendSummary) -> Result<(), Fail> {
    if a.rate_bps == 0 {
        return Err(Fail::usage("--rate-bps must be positive"));
    }
    if a.size == 0 || a.size > MAX_UDP_PAYLOAD {
        return Err(Fail::usage(format!("--size must be between 1 and {MAX_UDP_PAYLOAD}")));
    }
    let dur = net::secs(a.duration_s, "--duration-s")?;
    let addr = net::parse_addr(&a.to)?;
    let s = udp_socket(addr)?;
    s.connect(&addr.into()).map_err(|e| Fail::other(format!("connect {addr}: {e}")))?;
    let fd = s.as_raw_fd();

    // Batch buffers, headers and iovecs: allocated once.
    let mut bufs = vec![0u8; BATCH * a.size];
    for (i, b) in bufs.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(31).wrapping_add(7);
    }
    let mut iov: Vec<libc::iovec> = (0..BATCH)
        .map(|i| libc::iovec { iov_base: bufs[i * a.size..].as_mut_ptr() as *mut libc::c_void, iov_len: a.size })
        .collect();
    // SAFETY: mmsghdr is plain data; zeroed means "no address, no control".
    let mut msgs: Vec<libc::mmsghdr> = (0..BATCH).map(|_| unsafe { std::mem::zeroed() }).collect();
    for (m, v) in msgs.iter_mut().zip(iov.iter_mut()) {
        m.msg_hdr.msg_iov = v;
        m.msg_hdr.msg_iovlen = 1;
    }
    let hdr = a.size.min(16);
    let mut sched = Schedule::new(a.size, a.rate_bps, a.poisson.then_some(a.seed));
    let batching = mean_gap_ns(a.size, a.rate_bps) < BATCH_GAP_NS as f64;
    let start = now_ns();
    let end = start + dur.as_nanos() as u64;
    sum.start_ns = Some(start);
    let mut seq = 0u64;
    let mut last_wake = start;
    loop {
        if signals::interrupted() {
            break;
        }
        let now = now_ns();
        let mut n = 0;
        while n < BATCH && start + sched.due() <= now && start + sched.due() < end {
            let mut h = [0u8; 16];
            h[..8].copy_from_slice(&seq.to_le_bytes());
            h[8..].copy_from_slice(&now.to_le_bytes());
            bufs[n * a.size..n * a.size + hdr].copy_from_slice(&h[..hdr]);
            seq += 1;
            n += 1;
            sched.advance();
        }
        if n > 0 {
            send_batch(fd, &mut msgs[..n], a.size, sum)?;
            continue;
        }
        let due = start + sched.due();
        if due >= end {
            break;
        }
        let wake = if batching { due.max(last_wake + BATCH_GAP_NS) } else { due };
        sleep_until(wake.min(end));
        last_wake = wake;
    }
    sum.end_ns = Some(now_ns());
    Ok(())
}

/// sendmmsg until every datagram of the batch is sent or refused.
fn send_batch(fd: i32, msgs: &mut [libc::mmsghdr], size: usize, sum: &mut SendSummary) -> Result<(), Fail> {
    let mut i = 0;
    while i < msgs.len() {
        let rest = &mut msgs[i..];
        // SAFETY: msgs point at live iovecs and buffers.
        let r = unsafe { libc::sendmmsg(fd, rest.as_mut_ptr(), rest.len() as u32, 0) };
        if r > 0 {
            sum.datagrams += r as u64;
            sum.bytes += r as u64 * size as u64;
            i += r as usize;
            continue;
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => {}
            Some(libc::ENOBUFS)
            | Some(libc::EAGAIN)
            | Some(libc::ECONNREFUSED)
            | Some(libc::EHOSTUNREACH)
            | Some(libc::ENETUNREACH) => {
                sum.send_errors += 1;
                i += 1;
            }
            _ => return Err(Fail::other(format!("sendmmsg: {e}"))),
        }
    }
    Ok(())
}

pub fn recv(a: &UdpRecvArgs) -> Result<(), Fail> {
    let mut sum = RecvSummary { role: "udp-recv", ..Default::default() };
    let res = recv_inner(a, &mut sum);
    finish(&a.summary, &mut sum, res, |s, ok, e| {
        s.ok = ok;
        s.error = e;
    })
}

/// Lowest and highest sequence number seen, for the loss count.
#[derive(Default)]
pub struct SeqRange {
    lo: u64,
    hi: u64,
    seen: bool,
}

impl SeqRange {
    pub fn add(&mut self, seq: u64) {
        if !self.seen {
            (self.lo, self.hi, self.seen) = (seq, seq, true);
        } else {
            self.lo = self.lo.min(seq);
            self.hi = self.hi.max(seq);
        }
    }

    pub fn lost(&self, received: u64) -> u64 {
        if self.seen {
            (self.hi - self.lo + 1).saturating_sub(received)
        } else {
            0
        }
    }
}

fn recv_inner(a: &UdpRecvArgs, sum: &mut RecvSummary) -> Result<(), Fail> {
    let interval = interval_ns(a.interval_us)?;
    let dur = net::secs(a.duration_s, "--duration-s")?;
    let addr = net::parse_addr(&a.listen)?;
    let mut csv = output::create_csv(&a.log, UDP_HEADER)?;
    let s = udp_socket(addr)?;
    s.set_reuse_address(true).map_err(|e| Fail::other(format!("SO_REUSEADDR: {e}")))?;
    // Room for bursts; as root, past rmem_max.
    let rcvbuf: libc::c_int = 8 << 20;
    // SAFETY: setsockopt with an int.
    if unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            &rcvbuf as *const _ as *const libc::c_void,
            4,
        )
    } < 0
    {
        let _ = s.set_recv_buffer_size(rcvbuf as usize);
    }
    s.bind(&addr.into()).map_err(|e| Fail::other(format!("bind {addr}: {e}")))?;
    // Short timeout: the loop checks the end time and interrupts.
    s.set_read_timeout(Some(Duration::from_millis(50))).map_err(|e| Fail::other(format!("SO_RCVTIMEO: {e}")))?;
    output::ready();
    let start = now_ns();
    let end = start + dur.as_nanos() as u64;
    sum.start_ns = Some(start);

    let mut bufs = vec![0u8; BATCH * RX_SLOT];
    let mut iov: Vec<libc::iovec> = (0..BATCH)
        .map(|i| libc::iovec { iov_base: bufs[i * RX_SLOT..].as_mut_ptr() as *mut libc::c_void, iov_len: RX_SLOT })
        .collect();
    // SAFETY: plain data, zeroed.
    let mut msgs: Vec<libc::mmsghdr> = (0..BATCH).map(|_| unsafe { std::mem::zeroed() }).collect();
    let bytes = AtomicU64::new(0);
    let dgrams = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let mut seqs = SeqRange::default();

    let res = std::thread::scope(|sc| {
        let sampler = std::thread::Builder::new()
            .name("flow-sampler".into())
            .spawn_scoped(sc, || {
                let (mut pb, mut pd, mut res) = (0u64, 0u64, Ok(()));
                run_sampler(Ticker::new(start, interval), &stop, |now, last| {
                    let (b, d) = (bytes.load(Ordering::Acquire), dgrams.load(Ordering::Acquire));
                    if (!last || b > pb) && res.is_ok() {
                        res = output::write_row3(&mut csv, now.min(end), b - pb, d - pd);
                    }
                    (pb, pd) = (b, d);
                });
                res.map(|_| csv)
            })
            .map_err(|e| Fail::other(format!("spawn: {e}")))?;
        let mut err = None;
        let (mut b, mut d) = (0u64, 0u64);
        while now_ns() < end && !signals::interrupted() {
            for (m, v) in msgs.iter_mut().zip(iov.iter_mut()) {
                m.msg_hdr.msg_iov = v;
                m.msg_hdr.msg_iovlen = 1;
                m.msg_len = 0;
            }
            // SAFETY: msgs point at live iovecs into bufs; null timeout.
            let r = unsafe {
                libc::recvmmsg(
                    s.as_raw_fd(),
                    msgs.as_mut_ptr(),
                    BATCH as u32,
                    libc::MSG_WAITFORONE | libc::MSG_TRUNC,
                    std::ptr::null_mut(),
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => continue,
                    _ => {
                        err = Some(Fail::other(format!("recvmmsg: {e}")));
                        break;
                    }
                }
            }
            let t = now_ns();
            for (k, m) in msgs[..r as usize].iter().enumerate() {
                let len = m.msg_len as usize;
                b += len as u64;
                if len >= 8 {
                    let p = &bufs[k * RX_SLOT..k * RX_SLOT + 8];
                    seqs.add(u64::from_le_bytes(p.try_into().unwrap()));
                }
            }
            d += r as u64;
            bytes.store(b, Ordering::Release);
            dgrams.store(d, Ordering::Release);
            sum.first_ns.get_or_insert(t);
            sum.last_ns = Some(t);
        }
        stop.store(true, Ordering::Release);
        let csv = sampler.join().map_err(|_| Fail::other("sampler panicked"))?;
        match err {
            Some(e) => Err(e),
            None => Ok(csv),
        }
    });
    sum.end_ns = Some(now_ns());
    sum.bytes = bytes.load(Ordering::Acquire);
    sum.datagrams = dgrams.load(Ordering::Acquire);
    sum.lost = seqs.lost(sum.datagrams);
    let csv = res?.map_err(|e| Fail::other(format!("writing {}: {e}", a.log.display())))?;
    output::finish_csv(csv, &a.log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_have_the_shared_fields() {
        output::assert_summary_fields("udp-send", &SendSummary { role: "udp-send", ..Default::default() });
        output::assert_summary_fields("udp-recv", &RecvSummary { role: "udp-recv", ..Default::default() });
    }

    #[test]
    fn constant_schedule_is_exact() {
        // 1250 B at 10 Mbit/s: one datagram per ms, no drift after 10^6.
        let mut s = Schedule::new(1250, 10_000_000, None);
        assert_eq!(s.due(), 0);
        s.advance();
        assert_eq!(s.due(), 1_000_000);
        for _ in 1..1_000_000 {
            s.advance();
        }
        assert_eq!(s.due(), 1_000_000 * 1_000_000);
        // Non-integer gaps do not accumulate rounding error.
        let mut s = Schedule::new(1, 3, None);
        for _ in 0..3 {
            s.advance();
        }
        assert_eq!(s.due(), 8_000_000_000);
    }

    #[test]
    fn poisson_schedule_mean_rate() {
        let (size, rate) = (1200usize, 100_000_000u64);
        let mut s = Schedule::new(size, rate, Some(42));
        let n = 100_000u64;
        for _ in 0..n {
            s.advance();
        }
        let mean = s.due() as f64 / n as f64;
        let want = mean_gap_ns(size, rate);
        assert!((mean / want - 1.0).abs() < 0.02, "mean gap {mean} want {want}");
        // Same seed, same departures.
        let (mut a, mut b) = (Schedule::new(size, rate, Some(9)), Schedule::new(size, rate, Some(9)));
        for _ in 0..100 {
            a.advance();
            b.advance();
            assert_eq!(a.due(), b.due());
        }
    }

    #[test]
    fn loss_count() {
        let mut r = SeqRange::default();
        assert_eq!(r.lost(0), 0);
        for s in [5, 6, 8, 9, 7, 12] {
            r.add(s);
        }
        assert_eq!(r.lost(6), 2); // 10 and 11
    }
}
