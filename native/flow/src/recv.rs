//! `flow recv`: accept the N streams of one transfer, read each to EOF, log
//! goodput per interval and write the summary.
//!
//! One reader thread per stream publishes its running byte count in an
//! atomic (single writer: a plain store, no locked add on the hot path); a
//! sampler thread turns the counts into per-interval rows.

use crate::cli::{interval_ns, RecvArgs};
use crate::clock::{now_ns, run_sampler, Ticker};
use crate::fail::{self, Fail, FirstFail};
use crate::net;
use crate::output::{self, Csv, GOODPUT_HEADER};
use crate::signals;
use serde::Serialize;
use socket2::Socket;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::time::Duration;

// Slot states; 0: not accepted yet.
const OPEN: u8 = 1;
const DONE: u8 = 2;

#[derive(Serialize, Default)]
struct Summary {
    role: &'static str,
    streams: usize,
    bytes: u64,
    per_stream_bytes: Vec<u64>,
    first_byte_ns: Option<u64>,
    last_byte_ns: Option<u64>,
    accept_ns: Option<u64>,
    expected_bytes: Option<u64>,
    /// bytes·8 / (last_byte_ns − first_byte_ns).
    goodput_bps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<u64>,
    /// CPU time of the process (output::cpu_time), read last.
    cpu: Option<output::CpuTime>,
    ok: bool,
    error: Option<String>,
}

/// What the sampler and the summary see of one stream.
#[derive(Default)]
struct Slot {
    bytes: AtomicU64,
    state: AtomicU8,
    /// EOF (or failure) time.
    end_ns: AtomicU64,
}

#[derive(Default, Clone, Copy)]
struct StreamEnd {
    bytes: u64,
    first_ns: Option<u64>,
    last_ns: Option<u64>,
}

struct Opts {
    streams: usize,
    interval_ns: u64,
    accept_timeout: Duration,
    idle_timeout: Duration,
    read_size: usize,
    pingpong: Option<(usize, usize, u64)>, // (message, reply, count)
}

pub fn run(a: &RecvArgs) -> Result<(), Fail> {
    let mut sum = Summary {
        role: "recv",
        streams: a.streams,
        per_stream_bytes: vec![0; a.streams],
        expected_bytes: a.bytes,
        messages: a.pingpong.then(|| a.count.unwrap_or(0)),
        ..Default::default()
    };
    let res = run_inner(a, &mut sum);
    let res = res.and_then(|_| match a.bytes {
        Some(v) if v != sum.bytes => Err(Fail::new(fail::SHORT, format!("received {} bytes, expected {v}", sum.bytes))),
        _ => Ok(()),
    });
    let res = if signals::interrupted() { Err(Fail::interrupted()) } else { res };
    sum.ok = res.is_ok();
    sum.error = res.as_ref().err().map(|e| e.msg.clone());
    sum.cpu = output::cpu_time();
    let written = output::write_summary(&a.summary, &sum);
    res.and(written)
}

fn validate(a: &RecvArgs) -> Result<Opts, Fail> {
    if a.streams == 0 {
        return Err(Fail::usage("--streams must be at least 1"));
    }
    if (a.file.is_some() || a.pingpong) && a.streams != 1 {
        return Err(Fail::usage("--file and --pingpong need --streams 1"));
    }
    if a.read_size == 0 || a.read_size > 1 << 30 {
        return Err(Fail::usage("--read-size must be between 1 and 1073741824"));
    }
    let pingpong = match (a.pingpong, a.msg_size, a.count) {
        (true, Some(s), Some(k)) if s > 0 => {
            let reply = a.reply_size.unwrap_or(s);
            if reply == 0 || reply > 1 << 30 {
                return Err(Fail::usage("--reply-size must be between 1 and 1073741824"));
            }
            Some((s, reply, k))
        }
        (true, _, _) => return Err(Fail::usage("--pingpong needs --msg-size > 0 and --count")),
        _ => None,
    };
    Ok(Opts {
        streams: a.streams,
        interval_ns: interval_ns(a.interval_us)?,
        accept_timeout: net::secs(a.accept_timeout_s, "--accept-timeout-s")?,
        idle_timeout: net::secs(a.idle_timeout_s, "--idle-timeout-s")?,
        read_size: a.read_size,
        pingpong,
    })
}

fn run_inner(a: &RecvArgs, sum: &mut Summary) -> Result<(), Fail> {
    let o = validate(a)?;
    let addr = net::parse_addr(&a.listen)?;
    let mut file = match &a.file {
        Some(p) => Some(File::create(p).map_err(|e| Fail::other(format!("cannot create {}: {e}", p.display())))?),
        None => None,
    };
    let csv = output::create_csv(&a.log, GOODPUT_HEADER)?;
    let listener = net::listen(addr, net::check_socket_buffer(a.socket_buffer)?)?;
    if let Some(cc) = &a.cc {
        net::set_cc(listener.as_raw_fd(), cc)?; // accepted sockets inherit it
    }
    let pacing = a.rate_bps.filter(|&r| r > 0).map(|r| (r / 8).max(1));
    signals::register(listener.as_raw_fd());
    output::ready();

    let slots: Vec<Slot> = (0..o.streams).map(|_| Slot::default()).collect();
    let first_err = FirstFail::default();
    let abort = |f: Fail| first_err.record(f);
    let stop = AtomicBool::new(false);
    let mut ends = vec![StreamEnd::default(); o.streams];

    let first = match net::accept_within(&listener, o.accept_timeout, "stream 0") {
        Ok(s) => s,
        Err(e) => {
            signals::unregister(listener.as_raw_fd());
            return Err(e);
        }
    };
    let accept_ns = now_ns();
    sum.accept_ns = Some(accept_ns);

    let csv_res = std::thread::scope(|sc| {
        let sampler = std::thread::Builder::new()
            .name("flow-sampler".into())
            .spawn_scoped(sc, || sample(csv, &slots, accept_ns, o.interval_ns, &stop))
            .map_err(|e| Fail::other(format!("spawn: {e}")))?;
        let mut readers = Vec::with_capacity(o.streams);
        let mut next = Some(first);
        for (i, slot) in slots.iter().enumerate() {
            let sock = match next.take() {
                Some(s) => s,
                None => match net::accept_within(&listener, o.accept_timeout, &format!("stream {i}")) {
                    Ok(s) => s,
                    Err(e) => {
                        abort(e);
                        break;
                    }
                },
            };
            if let Some(p) = pacing {
                if let Err(e) = net::set_pacing(sock.as_raw_fd(), p) {
                    abort(Fail::other(format!("SO_MAX_PACING_RATE: {e}")));
                    break;
                }
            }
            signals::register(sock.as_raw_fd());
            slot.state.store(OPEN, Ordering::Release);
            let (f, abort, o) = (file.take(), &abort, &o);
            let h = std::thread::Builder::new().name(format!("flow-rx{i}")).spawn_scoped(sc, move || {
                let mut end = StreamEnd::default();
                let res = match o.pingpong {
                    Some((s, r, k)) => echo(i, &sock, slot, (s, r), k, o.idle_timeout, &mut end),
                    None => read_stream(i, &sock, slot, f, o.read_size, o.idle_timeout, &mut end),
                };
                slot.end_ns.store(now_ns(), Ordering::Release);
                slot.state.store(DONE, Ordering::Release);
                signals::unregister(sock.as_raw_fd());
                drop(sock); // close now: the sender waits for this EOF
                if let Err(e) = res {
                    abort(e);
                }
                end
            });
            match h {
                Ok(h) => readers.push((i, h)),
                Err(e) => {
                    abort(Fail::other(format!("spawn: {e}")));
                    break;
                }
            }
        }
        // Exactly N connections: refuse any further ones.
        signals::unregister(listener.as_raw_fd());
        drop(listener);
        for (i, h) in readers {
            match h.join() {
                Ok(end) => ends[i] = end,
                Err(_) => abort(Fail::other(format!("stream {i}: reader panicked"))),
            }
        }
        stop.store(true, Ordering::Release);
        sampler.join().map_err(|_| Fail::other("sampler panicked"))
    })?;

    for (i, s) in slots.iter().enumerate() {
        sum.per_stream_bytes[i] = s.bytes.load(Ordering::Acquire);
    }
    sum.bytes = sum.per_stream_bytes.iter().sum();
    sum.first_byte_ns = ends.iter().filter_map(|e| e.first_ns).min();
    sum.last_byte_ns = ends.iter().filter_map(|e| e.last_ns).max();
    if let (Some(f), Some(l)) = (sum.first_byte_ns, sum.last_byte_ns) {
        if l > f {
            sum.goodput_bps = Some(sum.bytes as f64 * 8e9 / (l - f) as f64);
        }
    }
    if let Some(e) = first_err.into_inner() {
        return Err(e);
    }
    let csv = csv_res.map_err(|e| Fail::other(format!("writing {}: {e}", a.log.display())))?;
    output::finish_csv(csv, &a.log)
}

/// Goodput rows from the first accept until every stream has ended; a last,
/// partial interval ends at the last EOF so the rows sum to the total.
fn sample(mut csv: Csv, slots: &[Slot], origin: u64, interval: u64, stop: &AtomicBool) -> io::Result<Csv> {
    let mut prev = vec![0u64; slots.len()];
    let mut prev_t = origin;
    let mut res = Ok(());
    run_sampler(Ticker::new(origin, interval), stop, |now, last| {
        let mut delta = 0;
        let mut open = 0;
        for (p, s) in prev.iter_mut().zip(slots) {
            let b = s.bytes.load(Ordering::Acquire);
            delta += b - *p;
            *p = b;
            open += (s.state.load(Ordering::Acquire) == OPEN) as u64;
        }
        let t = if last {
            if delta == 0 {
                return;
            }
            let end = slots.iter().map(|s| s.end_ns.load(Ordering::Acquire)).max().unwrap_or(0);
            if end > 0 { end } else { now }.max(prev_t)
        } else {
            now
        };
        prev_t = t;
        if res.is_ok() {
            res = output::write_row3(&mut csv, t, delta, open);
        }
    });
    res.map(|_| csv)
}

fn read_stream(
    i: usize,
    s: &Socket,
    slot: &Slot,
    mut file: Option<File>,
    read_size: usize,
    idle: Duration,
    end: &mut StreamEnd,
) -> Result<(), Fail> {
    net::set_idle_timeout(s, idle)?;
    let mut buf = vec![0u8; read_size];
    loop {
        let n = net::recv(s, &mut buf).map_err(|e| Fail::net(&format!("stream {i}"), &e, idle.as_secs_f64()))?;
        if n == 0 {
            return Ok(());
        }
        let t = now_ns();
        end.first_ns.get_or_insert(t);
        end.last_ns = Some(t);
        end.bytes += n as u64;
        slot.bytes.store(end.bytes, Ordering::Release);
        if let Some(f) = file.as_mut() {
            f.write_all(&buf[..n]).map_err(|e| Fail::other(format!("writing --file: {e}")))?;
        }
    }
}

/// Pingpong: K times read exactly S bytes and answer with R bytes (the message itself
/// when R = S; else its first R bytes, repeated as needed), then wait for the sender's EOF.
fn echo(
    i: usize,
    s: &Socket,
    slot: &Slot,
    (size, reply): (usize, usize),
    count: u64,
    idle: Duration,
    end: &mut StreamEnd,
) -> Result<(), Fail> {
    net::set_idle_timeout(s, idle)?;
    net::set_nodelay(s)?;
    let err = |e: io::Error| Fail::net(&format!("stream {i}"), &e, idle.as_secs_f64());
    let mut buf = vec![0u8; size];
    let mut answer = vec![0u8; if reply == size { 0 } else { reply }];
    for k in 0..count {
        if !net::recv_exact(s, &mut buf).map_err(err)? {
            return Err(Fail::new(fail::SHORT, format!("peer closed after {k} of {count} messages")));
        }
        let t = now_ns();
        end.first_ns.get_or_insert(t);
        end.last_ns = Some(t);
        end.bytes += size as u64;
        slot.bytes.store(end.bytes, Ordering::Release);
        if reply == size {
            net::send_all(s.as_raw_fd(), &buf).map_err(err)?;
        } else {
            for (j, b) in answer.iter_mut().enumerate() {
                *b = buf[j % size];
            }
            net::send_all(s.as_raw_fd(), &answer).map_err(err)?;
        }
    }
    let extra = net::drain_to_eof(s, &mut buf).map_err(err)?;
    if extra > 0 {
        end.bytes += extra;
        slot.bytes.store(end.bytes, Ordering::Release);
        end.last_ns = Some(now_ns());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_has_the_shared_fields() {
        output::assert_summary_fields("recv", &Summary { role: "recv", messages: Some(1), ..Default::default() });
    }
}
