//! `flow send`: open N connections with the chosen congestion control, write
//! the volume, wait until the receiver has read it all (its EOF), log
//! tcp_info per interval and write the summary.

use crate::cli::{interval_ns, SendArgs};
use crate::clock::{now_ns, run_sampler, Ticker};
use crate::fail::{self, Fail, FirstFail};
use crate::net;
use crate::output::{self, Csv, PINGPONG_HEADER};
use crate::profile::{self, AppCap, Profile};
use crate::signals;
use crate::tcpinfo::{self, TcpInfo};
use itb_rng::splitmix64;
use serde::Serialize;
use socket2::Socket;
use std::fs::File;
use std::io::{self, BufRead, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

#[derive(Serialize, Default)]
struct Summary {
    role: &'static str,
    streams: usize,
    cc: String,
    /// What the kernel reports in use on the first socket after connect (TCP_CONGESTION).
    cc_in_use: Option<String>,
    bytes: u64,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    connect_ns: Option<u64>,
    /// bytes·8 / (end_ns − start_ns).
    goodput_bps: Option<f64>,
    total_retrans: u64,
    /// What the sockets put on the wire, from each stream's tcp_info at the end (also
    /// after a failure); null if the kernel does not report it.
    sent: Option<tcpinfo::SentTotals>,
    /// --rate-bps (total over streams); null = unlimited.
    rate_bps: Option<u64>,
    rate_changes: Vec<[u64; 2]>,
    /// --profile as [µs after the start, bit/s] steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<Vec<[u64; 2]>>,
    /// How the rate or profile is kept: "pacing" or "application".
    #[serde(skip_serializing_if = "Option::is_none")]
    enforce: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtt_ns: Option<RttStats>,
    /// CPU time of the process (output::cpu_time), read last.
    cpu: Option<output::CpuTime>,
    ok: bool,
    error: Option<String>,
}

#[derive(Serialize, Debug, PartialEq)]
struct RttStats {
    min: u64,
    mean: f64,
    max: u64,
}

enum Mode {
    Bulk { shares: Vec<u64>, file: Option<File> },
    Pingpong { size: usize, reply: usize, count: u64 },
}

struct Opts {
    streams: usize,
    interval_ns: u64,
    write_size: usize,
    connect_timeout: Duration,
    idle: Duration,
    mode: Mode,
    /// A rate profile and whether the writes (true) or the pacing keep it.
    limit: Option<(Profile, bool)>,
    /// What the pacing follows when it keeps the profile: the profile, or the profile
    /// with --pace-headroom (the writes then keep the profile itself).
    pace: Option<Profile>,
}

/// V split over N streams: V/N each, the remainder one byte each to the first.
pub fn split_volume(v: u64, n: usize) -> Vec<u64> {
    let n64 = n as u64;
    (0..n64).map(|i| v / n64 + (i < v % n64) as u64).collect()
}

/// Per-socket SO_MAX_PACING_RATE for a total of `rate_bps` over n streams:
/// bytes/s, at least 1; 0 means unlimited (~0).
pub fn pacing_per_socket(rate_bps: u64, n: usize) -> u64 {
    if rate_bps == 0 {
        u64::MAX
    } else {
        (rate_bps / 8 / n as u64).max(1)
    }
}

/// Non-constant payload, so nothing on the path can compress or dedupe it.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&splitmix64(&mut x).to_le_bytes());
    }
    v.truncate(len);
    v
}

fn rtt_stats(times: &[(u64, u64)]) -> Option<RttStats> {
    let d = times.iter().map(|&(a, b)| b - a);
    Some(RttStats { min: d.clone().min()?, mean: d.clone().sum::<u64>() as f64 / times.len() as f64, max: d.max()? })
}

pub fn run(a: &SendArgs) -> Result<(), Fail> {
    let mut sum = Summary {
        role: "send",
        streams: a.streams,
        cc: a.cc.clone(),
        rate_bps: a.rate_bps.filter(|&r| r > 0),
        ..Default::default()
    };
    let changes = Arc::new(Mutex::new(Vec::new()));
    let res = run_inner(a, &mut sum, &changes);
    let res = if signals::interrupted() { Err(Fail::interrupted()) } else { res };
    sum.rate_changes = changes.lock().unwrap().clone();
    sum.ok = res.is_ok();
    sum.error = res.as_ref().err().map(|e| e.msg.clone());
    sum.cpu = output::cpu_time();
    let written = output::write_summary(&a.summary, &sum);
    res.and(written)
}

fn validate(a: &SendArgs, sum: &mut Summary) -> Result<Opts, Fail> {
    if a.streams == 0 {
        return Err(Fail::usage("--streams must be at least 1"));
    }
    if (a.file.is_some() || a.pingpong) && a.streams != 1 {
        return Err(Fail::usage("--file and --pingpong need --streams 1"));
    }
    if a.write_size == 0 || a.write_size > 1 << 30 {
        return Err(Fail::usage("--write-size must be between 1 and 1073741824"));
    }
    let limit = match (&a.profile, a.rate_bps.filter(|&r| r > 0), a.app_cap) {
        (Some(spec), _, app) => Some((Profile::parse(spec).map_err(Fail::usage)?, app)),
        (None, Some(r), true) => Some((Profile::constant(r), true)),
        (None, None, true) => return Err(Fail::usage("--app-cap needs --rate-bps or --profile")),
        (None, _, false) => None,
    };
    if let Some((p, app)) = &limit {
        sum.profile = a.profile.as_ref().map(|_| p.as_us());
        sum.enforce = Some(if *app { "application" } else { "pacing" });
    } else if sum.rate_bps.is_some() {
        sum.enforce = Some("pacing");
    }
    let mode = if a.pingpong {
        match (a.msg_size, a.count) {
            (Some(s), Some(k)) if s > 0 => {
                let reply = a.reply_size.unwrap_or(s);
                if reply == 0 || reply > 1 << 30 {
                    return Err(Fail::usage("--reply-size must be between 1 and 1073741824"));
                }
                sum.bytes = s as u64 * k;
                sum.messages = Some(k);
                Mode::Pingpong { size: s, reply, count: k }
            }
            _ => return Err(Fail::usage("--pingpong needs --msg-size > 0 and --count")),
        }
    } else if let Some(p) = &a.file {
        let f = File::open(p).map_err(|e| Fail::other(format!("cannot open {}: {e}", p.display())))?;
        let size = f.metadata().map_err(|e| Fail::other(format!("{}: {e}", p.display())))?.len();
        let v = a.bytes.unwrap_or(size);
        if v > size {
            return Err(Fail::usage(format!("--bytes {v} exceeds the size of {} ({size})", p.display())));
        }
        sum.bytes = v;
        Mode::Bulk { shares: vec![v], file: Some(f) }
    } else {
        let v = a.bytes.ok_or_else(|| Fail::usage("--bytes is required (unless --file or --pingpong)"))?;
        sum.bytes = v;
        Mode::Bulk { shares: split_volume(v, a.streams), file: None }
    };
    if !(0.0..=0.5).contains(&a.pace_headroom) {
        return Err(Fail::usage("--pace-headroom must be between 0 and 0.5"));
    }
    let pace = match &limit {
        Some((p, false)) => Some(p.scaled(a.pace_headroom)),
        _ => None,
    };
    if a.pace_headroom > 0.0 && pace.is_none() {
        return Err(Fail::usage("--pace-headroom is for a profile kept by pacing (not --app-cap)"));
    }
    Ok(Opts {
        streams: a.streams,
        interval_ns: interval_ns(a.interval_us)?,
        write_size: a.write_size,
        connect_timeout: net::secs(a.connect_timeout_s, "--connect-timeout-s")?,
        idle: net::secs(a.idle_timeout_s, "--idle-timeout-s")?,
        mode,
        limit,
        pace,
    })
}

fn run_inner(a: &SendArgs, sum: &mut Summary, changes: &Arc<Mutex<Vec<[u64; 2]>>>) -> Result<(), Fail> {
    let o = validate(a, sum)?;
    let addr = net::parse_addr(&a.to)?;
    let header = match o.mode {
        Mode::Pingpong { .. } => PINGPONG_HEADER,
        Mode::Bulk { .. } => tcpinfo::CSV_HEADER,
    };
    let csv = output::create_csv(&a.log, header)?;
    let pacing = match &o.limit {
        Some((_, true)) => None,
        Some((_, false)) => o.pace.as_ref().map(|p| pacing_per_socket(p.first_rate(), o.streams)),
        None => a.rate_bps.map(|r| pacing_per_socket(r, o.streams)),
    };
    let mut socks = Vec::with_capacity(o.streams);
    for _ in 0..o.streams {
        let s = net::tcp_socket(addr, &a.cc, pacing, net::check_socket_buffer(a.socket_buffer)?)?;
        net::set_idle_timeout(&s, o.idle)?;
        socks.push(s);
    }
    for s in &socks {
        signals::register(s.as_raw_fd());
    }
    let res = transfer(a, &o, &socks, csv, sum, changes);
    // Nothing may touch these descriptors once they are closed.
    signals::unregister_all();
    drop(socks);
    res
}

fn transfer(
    a: &SendArgs,
    o: &Opts,
    socks: &[Socket],
    csv: Csv,
    sum: &mut Summary,
    changes: &Arc<Mutex<Vec<[u64; 2]>>>,
) -> Result<(), Fail> {
    let addr = net::parse_addr(&a.to)?;
    let connect_ns = net::connect_all(socks, addr, o.connect_timeout)?;
    sum.connect_ns = Some(connect_ns);
    sum.cc_in_use = net::get_cc(socks[0].as_raw_fd()).ok();
    if a.control_stdin {
        spawn_control(o.streams, changes.clone())?;
    }
    let res = match &o.mode {
        Mode::Pingpong { size, reply, count } => pingpong(&socks[0], (*size, *reply), *count, o.idle, csv, &a.log, sum),
        Mode::Bulk { shares, file } => bulk(o, socks, shares, file.as_ref(), connect_ns, csv, &a.log, sum, changes),
    };
    sum.sent = sent_on_wire(socks, addr.is_ipv6());
    res
}

/// Every stream's final counters, after a failure too (what was sent was on the wire);
/// None when one stream's tcp_info cannot be read or lacks them.
fn sent_on_wire(socks: &[Socket], ipv6: bool) -> Option<tcpinfo::SentTotals> {
    let infos: Vec<TcpInfo> = socks.iter().filter_map(|s| TcpInfo::read(s.as_raw_fd()).ok()).collect();
    if infos.len() != socks.len() {
        return None;
    }
    tcpinfo::sent_totals(&infos, ipv6)
}

/// Start line for the stream threads.
#[derive(Default)]
struct Gate {
    go: Mutex<Option<bool>>,
    cv: Condvar,
}

impl Gate {
    fn wait(&self) -> bool {
        let mut g = self.go.lock().unwrap();
        loop {
            match *g {
                Some(go) => return go,
                None => g = self.cv.wait(g).unwrap(),
            }
        }
    }

    fn open(&self, go: bool) {
        *self.go.lock().unwrap() = Some(go);
        self.cv.notify_all();
    }
}

/// Per-stream outcome of a bulk transfer.
struct StreamEnd {
    eof_ns: u64,
    total_retrans: u32,
}

#[allow(clippy::too_many_arguments)]
fn bulk(
    o: &Opts,
    socks: &[Socket],
    shares: &[u64],
    file: Option<&File>,
    connect_ns: u64,
    csv: Csv,
    log: &std::path::Path,
    sum: &mut Summary,
    changes: &Arc<Mutex<Vec<[u64; 2]>>>,
) -> Result<(), Fail> {
    let n = socks.len();
    let start = AtomicU64::new(u64::MAX);
    // The profile's date 0: when the streams are let go.
    let t0 = AtomicU64::new(0);
    let gate = Gate::default();
    let done: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    let stop = AtomicBool::new(false);
    let first_err = FirstFail::default();
    let abort = |f: Fail| first_err.record(f);
    let fds: Vec<RawFd> = socks.iter().map(|s| s.as_raw_fd()).collect();

    let (ends, csv_res) = std::thread::scope(|sc| {
        let sampler = std::thread::Builder::new()
            .name("flow-sampler".into())
            .spawn_scoped(sc, || sample(csv, &fds, &done, connect_ns, o.interval_ns, &stop))
            .map_err(|e| Fail::other(format!("spawn: {e}")))?;
        let mut hs = Vec::with_capacity(n);
        let t0 = &t0;
        for i in 0..n {
            let (s, share, start, gate, done, abort) = (&socks[i], shares[i], &start, &gate, &done[i], &abort);
            let h = std::thread::Builder::new().name(format!("flow-tx{i}")).spawn_scoped(sc, move || {
                let buf = pattern(o.write_size, i as u64 + 1);
                if !gate.wait() {
                    return None;
                }
                start.fetch_min(now_ns(), Ordering::AcqRel);
                // the writes keep the profile under an application cap, and under pacing
                // when it pauses (the kernel cannot pace at 0) or paces with headroom
                let cap = match &o.limit {
                    Some((p, app)) if *app || p.has_pause() || o.pace.as_ref() != Some(p) => {
                        Some(AppCap { profile: p, start_ns: t0.load(Ordering::Acquire), streams: n })
                    }
                    _ => None,
                };
                let r = stream(i, s, share, buf, file, o.idle, cap);
                done.store(true, Ordering::Release);
                r.map_err(abort).ok()
            });
            match h {
                Ok(h) => hs.push(h),
                Err(e) => {
                    abort(Fail::other(format!("spawn: {e}")));
                    break;
                }
            }
        }
        // All streams start together, or none does.
        t0.store(now_ns(), Ordering::Release);
        let mut go = hs.len() == n;
        if let (Some(p), true) = (&o.pace, go) {
            let (stop, t) = (&stop, t0.load(Ordering::Acquire));
            let catch_up = o.limit.as_ref().is_some_and(|(l, _)| l != p); // headroom
            let pacer = std::thread::Builder::new()
                .name("flow-profile".into())
                .spawn_scoped(sc, move || profile::pace(p, t, n, catch_up, stop, changes));
            if let Err(e) = pacer {
                abort(Fail::other(format!("spawn: {e}")));
                go = false;
            }
        }
        gate.open(go);
        let ends: Vec<Option<StreamEnd>> = hs
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    abort(Fail::other("stream thread panicked"));
                    None
                })
            })
            .collect();
        stop.store(true, Ordering::Release);
        let csv_res = sampler.join().map_err(|_| Fail::other("sampler panicked"))?;
        Ok::<_, Fail>((ends, csv_res))
    })?;

    let s = start.load(Ordering::Acquire);
    sum.start_ns = (s != u64::MAX).then_some(s);
    sum.end_ns = ends.iter().flatten().map(|e| e.eof_ns).max();
    sum.total_retrans = ends.iter().flatten().map(|e| e.total_retrans as u64).sum();
    if let (Some(a), Some(b)) = (sum.start_ns, sum.end_ns) {
        if b > a {
            sum.goodput_bps = Some(sum.bytes as f64 * 8e9 / (b - a) as f64);
        }
    }
    if let Some(e) = first_err.into_inner() {
        return Err(e);
    }
    let csv = csv_res.map_err(|e| Fail::other(format!("writing {}: {e}", log.display())))?;
    output::finish_csv(csv, log)
}

/// One stream: write `share` bytes, half-close, then wait for the
/// receiver's EOF, which it sends only after reading everything.
fn stream(
    i: usize,
    s: &Socket,
    share: u64,
    mut buf: Vec<u8>,
    file: Option<&File>,
    idle: Duration,
    cap: Option<AppCap>,
) -> Result<StreamEnd, Fail> {
    let what = format!("stream {i}");
    let err = |e: io::Error| Fail::net(&what, &e, idle.as_secs_f64());
    let fd = s.as_raw_fd();
    let mut left = share;
    // The next write's size: a buffer's worth, or under an application cap what the
    // profile allows once this stream's turn has come.
    let next = |left: u64| -> Result<usize, Fail> {
        let n = left.min(buf.len() as u64) as usize;
        match cap {
            None => Ok(n),
            Some(c) => c.next_chunk(share - left, n).ok_or_else(Fail::interrupted),
        }
    };
    match file {
        None => {
            while left > 0 {
                let n = next(left)?;
                left -= net::send(fd, &buf[..n]).map_err(err)? as u64;
            }
        }
        Some(f) => {
            let mut off: libc::off_t = 0;
            while left > 0 {
                let n = next(left)?;
                // SAFETY: both descriptors are open; off is a valid offset pointer.
                let r = unsafe { libc::sendfile(fd, f.as_raw_fd(), &mut off, n) };
                match r {
                    0 => return Err(Fail::other(format!("{what}: file shrank while sending"))),
                    r if r > 0 => left -= r as u64,
                    _ => {
                        let e = io::Error::last_os_error();
                        if e.raw_os_error() != Some(libc::EINTR) {
                            return Err(err(e));
                        }
                    }
                }
            }
        }
    }
    net::shutdown_write(s).map_err(err)?;
    // Reuse the payload buffer to drain: the receiver sends nothing.
    net::drain_to_eof(s, &mut buf).map_err(err)?;
    let eof_ns = now_ns();
    let info = TcpInfo::read(fd).map_err(|e| Fail::other(format!("{what}: TCP_INFO: {e}")))?;
    if let Some(acked) = info.bytes_acked {
        if acked < share {
            return Err(Fail::new(fail::RESET, format!("{what}: only {acked} of {share} bytes acknowledged")));
        }
    }
    Ok(StreamEnd { eof_ns, total_retrans: info.total_retrans })
}

/// tcp_info rows for every stream per interval; a stream's last row is taken
/// once it is done (or at the end), before its socket is closed.
fn sample(
    mut csv: Csv,
    fds: &[RawFd],
    done: &[AtomicBool],
    origin: u64,
    interval: u64,
    stop: &AtomicBool,
) -> io::Result<Csv> {
    let mut finished = vec![false; fds.len()];
    let mut res = Ok(());
    run_sampler(Ticker::new(origin, interval), stop, |_, last| {
        for (i, &fd) in fds.iter().enumerate() {
            if finished[i] {
                continue;
            }
            finished[i] = last || done[i].load(Ordering::Acquire);
            let t = now_ns();
            if let (Ok(info), true) = (TcpInfo::read(fd), res.is_ok()) {
                res = tcpinfo::write_row(&mut csv, t, i, &info);
            }
        }
    });
    res.map(|_| csv)
}

fn pingpong(
    s: &Socket,
    (size, reply): (usize, usize),
    count: u64,
    idle: Duration,
    mut csv: Csv,
    log: &std::path::Path,
    sum: &mut Summary,
) -> Result<(), Fail> {
    net::set_nodelay(s)?;
    let err = |e: io::Error| Fail::net("stream 0", &e, idle.as_secs_f64());
    let msg = pattern(size, 1);
    let mut back = vec![0u8; reply];
    let mut times: Vec<(u64, u64)> = Vec::with_capacity(count as usize);
    let fd = s.as_raw_fd();
    let write_err = |e: io::Error| Fail::other(format!("writing {}: {e}", log.display()));
    sum.start_ns = Some(now_ns());
    // Each round trip is logged as it completes, so an interrupted run keeps
    // the messages it finished.
    let exchanged = (|| {
        for k in 0..count {
            let t0 = now_ns();
            net::send_all(fd, &msg).map_err(err)?;
            if !net::recv_exact(s, &mut back).map_err(err)? {
                return Err(Fail::new(fail::RESET, format!("peer closed after {k} of {count} messages")));
            }
            let t1 = now_ns();
            times.push((t0, t1));
            output::write_row3(&mut csv, k, t0, t1).map_err(write_err)?;
        }
        net::shutdown_write(s).map_err(err)?;
        net::drain_to_eof(s, &mut back).map_err(err)
    })();
    let flushed = output::finish_csv(csv, log);
    exchanged?;
    let end = now_ns();
    sum.end_ns = Some(end);
    if let Ok(info) = TcpInfo::read(fd) {
        sum.total_retrans = info.total_retrans as u64;
    }
    sum.rtt_ns = rtt_stats(&times);
    let st = sum.start_ns.unwrap();
    if end > st {
        sum.goodput_bps = Some(sum.bytes as f64 * 8e9 / (end - st) as f64);
    }
    flushed
}

/// Parse one control line: {"rate_bps": R}; 0 or null mean unlimited.
pub fn parse_control(line: &str) -> Result<u64, String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("bad control line: {e}"))?;
    match v.get("rate_bps") {
        Some(serde_json::Value::Null) => Ok(0),
        Some(r) => r.as_u64().ok_or_else(|| "rate_bps must be a non-negative integer or null".to_string()),
        None => Err("control line lacks rate_bps".into()),
    }
}

/// Read rate changes from stdin and apply each to every stream at once. Not
/// joined: it may sit in read(2) on stdin until the process exits.
fn spawn_control(n: usize, changes: Arc<Mutex<Vec<[u64; 2]>>>) -> Result<(), Fail> {
    std::thread::Builder::new()
        .name("flow-control".into())
        .spawn(move || {
            for line in io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                match parse_control(&line) {
                    Ok(r) => {
                        let t = now_ns();
                        let p = pacing_per_socket(r, n);
                        signals::for_each(|fd| {
                            let _ = net::set_pacing(fd, p);
                        });
                        changes.lock().unwrap().push([t, r]);
                    }
                    Err(e) => {
                        let _ = writeln!(io::stderr(), "flow: ignored control line: {e}");
                    }
                }
            }
        })
        .map(|_| ())
        .map_err(|e| Fail::other(format!("spawn: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_has_the_shared_fields() {
        let sum = Summary {
            role: "send",
            profile: Some(vec![[0, 1]]),
            enforce: Some("pacing"),
            messages: Some(1),
            rtt_ns: Some(RttStats { min: 1, mean: 1.0, max: 1 }),
            ..Default::default()
        };
        output::assert_summary_fields("send", &sum);
    }

    #[test]
    fn volume_split() {
        assert_eq!(split_volume(10, 4), vec![3, 3, 2, 2]);
        assert_eq!(split_volume(50_000_000, 4), vec![12_500_000; 4]);
        assert_eq!(split_volume(2, 4), vec![1, 1, 0, 0]);
        assert_eq!(split_volume(7, 1), vec![7]);
        for (v, n) in [(0u64, 3usize), (1_000_003, 7), (u64::MAX, 5)] {
            let s = split_volume(v, n);
            assert_eq!(s.len(), n);
            assert_eq!(s.iter().map(|&x| x as u128).sum::<u128>(), v as u128);
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn pacing_split() {
        assert_eq!(pacing_per_socket(80_000_000, 1), 10_000_000);
        assert_eq!(pacing_per_socket(80_000_000, 4), 2_500_000);
        assert_eq!(pacing_per_socket(0, 4), u64::MAX);
        assert_eq!(pacing_per_socket(1, 4), 1);
    }

    #[test]
    fn control_lines() {
        assert_eq!(parse_control(r#"{"rate_bps": 50000000}"#), Ok(50_000_000));
        assert_eq!(parse_control(r#"{"rate_bps": null}"#), Ok(0));
        assert_eq!(parse_control(r#"{"rate_bps": 0}"#), Ok(0));
        assert!(parse_control(r#"{"rate": 1}"#).is_err());
        assert!(parse_control(r#"{"rate_bps": -1}"#).is_err());
        assert!(parse_control("nope").is_err());
    }

    #[test]
    fn payload_is_not_constant() {
        let p = pattern(1000, 1);
        assert_eq!(p.len(), 1000);
        assert!(p.windows(2).filter(|w| w[0] != w[1]).count() > 900);
        assert_ne!(pattern(64, 1), pattern(64, 2));
    }

    #[test]
    fn rtt_summary() {
        assert_eq!(rtt_stats(&[]), None);
        let r = rtt_stats(&[(0, 10), (100, 130), (200, 220)]).unwrap();
        assert_eq!(r, RttStats { min: 10, mean: 20.0, max: 30 });
    }
}
