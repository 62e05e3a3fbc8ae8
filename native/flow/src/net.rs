//! Socket set-up: listen/accept and connect with deadlines, congestion
//! control, pacing, and the small blocking I/O helpers the commands share.

use crate::clock::now_ns;
use crate::fail::{self, Fail};
use crate::signals;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io::{self, Read};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// Longest single poll: how soon a wait notices an interrupt.
const POLL_SLICE_MS: u64 = 100;

pub fn parse_addr(s: &str) -> Result<SocketAddr, Fail> {
    s.parse().map_err(|_| Fail::usage(format!("bad address {s:?}: want IPV4:PORT or [IPV6]:PORT")))
}

pub fn secs(s: f64, what: &str) -> Result<Duration, Fail> {
    if s.is_finite() && s > 0.0 && s < 1e9 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(Fail::usage(format!("{what} must be a positive number of seconds")))
    }
}

fn setopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: v points to a live T of the given size.
    let r = unsafe {
        libc::setsockopt(fd, level, name, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32)
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// TCP_CONGESTION must be set before connect so the handshake already uses it.
pub fn set_cc(fd: RawFd, cc: &str) -> Result<(), Fail> {
    // SAFETY: cc's bytes are readable for cc.len(); the kernel copies them.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr() as *const libc::c_void,
            cc.len() as u32,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EPERM) => Err(Fail::usage(format!("congestion control {cc} not available"))),
        _ => Err(Fail::usage(format!("congestion control {cc} not available: {e}"))),
    }
}

/// The congestion control the kernel reports for the socket: the confirmation that the
/// one asked for is the one in use.
pub fn get_cc(fd: RawFd) -> io::Result<String> {
    let mut buf = [0u8; 16]; // TCP_CA_NAME_MAX
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf is writable for len bytes; the kernel writes at most len and updates it.
    let r = unsafe {
        libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, buf.as_mut_ptr() as *mut libc::c_void, &mut len)
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    let name = &buf[..len as usize];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Ok(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// SO_MAX_PACING_RATE in bytes/s (u64 form; u64::MAX = unlimited). Setting a
/// finite value also turns on TCP's internal pacing (no fq qdisc needed).
pub fn set_pacing(fd: RawFd, bytes_per_s: u64) -> io::Result<()> {
    setopt(fd, libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE, &bytes_per_s)
}

/// The largest --socket-buffer: the kernel keeps twice the value in an int.
pub const MAX_SOCKET_BUFFER: usize = 1 << 30;
pub const MIN_SOCKET_BUFFER: usize = 4096;

/// --socket-buffer: a whole number of bytes, MIN_SOCKET_BUFFER to MAX_SOCKET_BUFFER.
pub fn check_socket_buffer(b: Option<usize>) -> Result<Option<usize>, Fail> {
    match b {
        Some(v) if !(MIN_SOCKET_BUFFER..=MAX_SOCKET_BUFFER).contains(&v) => Err(Fail::usage(format!(
            "--socket-buffer must be between {MIN_SOCKET_BUFFER} and {MAX_SOCKET_BUFFER} bytes"
        ))),
        _ => Ok(b),
    }
}

/// A fixed send (`send`) or receive buffer of `bytes`, as iperf's -w sets it: SO_SNDBUF /
/// SO_RCVBUF (the kernel doubles the value for its bookkeeping and stops autotuning that
/// buffer), forced past net.core.wmem_max / rmem_max with the *FORCE options where the
/// process may (CAP_NET_ADMIN), else capped there by the kernel.
pub fn set_buffer(s: &Socket, bytes: usize, send: bool) -> Result<(), Fail> {
    let (force, plain, what) = if send {
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF, "SO_SNDBUF")
    } else {
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF, "SO_RCVBUF")
    };
    let v = bytes as libc::c_int; // (at most MAX_SOCKET_BUFFER: fits)
    let fd = s.as_raw_fd();
    if setopt(fd, libc::SOL_SOCKET, force, &v).is_ok() {
        return Ok(());
    }
    setopt(fd, libc::SOL_SOCKET, plain, &v).map_err(|e| Fail::other(format!("{what}: {e}")))
}

pub fn set_nodelay(s: &Socket) -> Result<(), Fail> {
    s.set_tcp_nodelay(true).map_err(|e| Fail::other(format!("TCP_NODELAY: {e}")))
}

/// Blocking reads and writes give up after `idle` without progress (EAGAIN).
pub fn set_idle_timeout(s: &Socket, idle: Duration) -> Result<(), Fail> {
    s.set_read_timeout(Some(idle))
        .and_then(|_| s.set_write_timeout(Some(idle)))
        .map_err(|e| Fail::other(format!("socket timeouts: {e}")))
}

fn poll_one(fd: RawFd, events: i16, ms: u64) -> io::Result<bool> {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    // SAFETY: one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, ms as libc::c_int) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::EINTR) { Ok(false) } else { Err(e) };
    }
    Ok(r > 0)
}

/// A listening socket; with `rcvbuf`, a fixed receive buffer set before listen(2), so that
/// the window scale the SYN-ACK offers fits it and accepted sockets inherit it.
pub fn listen(addr: SocketAddr, rcvbuf: Option<usize>) -> Result<Socket, Fail> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .map_err(|e| Fail::other(format!("socket: {e}")))?;
    s.set_reuse_address(true).map_err(|e| Fail::other(format!("SO_REUSEADDR: {e}")))?;
    if let Some(b) = rcvbuf {
        set_buffer(&s, b, false)?;
    }
    s.bind(&addr.into()).map_err(|e| Fail::other(format!("bind {addr}: {e}")))?;
    s.listen(128).map_err(|e| Fail::other(format!("listen {addr}: {e}")))?;
    Ok(s)
}

/// Accept one connection within `timeout` (exit code 4 otherwise).
pub fn accept_within(l: &Socket, timeout: Duration, what: &str) -> Result<Socket, Fail> {
    let deadline = now_ns() + timeout.as_nanos() as u64;
    loop {
        if signals::interrupted() {
            return Err(Fail::interrupted());
        }
        let now = now_ns();
        if now >= deadline {
            return Err(Fail::new(fail::TIMEOUT, format!("{what}: no connection within {} s", timeout.as_secs_f64())));
        }
        let ms = ((deadline - now) / 1_000_000 + 1).min(POLL_SLICE_MS);
        match poll_one(l.as_raw_fd(), libc::POLLIN, ms) {
            Ok(false) => continue,
            Ok(true) => {}
            Err(e) => return Err(Fail::other(format!("poll: {e}"))),
        }
        match l.accept() {
            Ok((s, _)) => return Ok(s),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::ECONNABORTED)) => continue,
            Err(e) => return Err(Fail::other(format!("accept: {e}"))),
        }
    }
}

/// A TCP socket for `addr` with congestion control `cc` and, if given, a
/// pacing cap, ready to connect.
pub fn tcp_socket(addr: SocketAddr, cc: &str, pacing: Option<u64>, sndbuf: Option<usize>) -> Result<Socket, Fail> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .map_err(|e| Fail::other(format!("socket: {e}")))?;
    set_cc(s.as_raw_fd(), cc)?;
    if let Some(b) = sndbuf {
        set_buffer(&s, b, true)?;
    }
    if let Some(p) = pacing {
        set_pacing(s.as_raw_fd(), p).map_err(|e| Fail::other(format!("SO_MAX_PACING_RATE: {e}")))?;
    }
    Ok(s)
}

/// Connect all sockets at once (non-blocking connects, one deadline), so N
/// streams cost one round trip, not N. Returns when the last is connected.
pub fn connect_all(socks: &[Socket], addr: SocketAddr, timeout: Duration) -> Result<u64, Fail> {
    let sa: SockAddr = addr.into();
    let mut pending = Vec::with_capacity(socks.len());
    for (i, s) in socks.iter().enumerate() {
        s.set_nonblocking(true).map_err(|e| Fail::other(format!("O_NONBLOCK: {e}")))?;
        match s.connect(&sa) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => pending.push(i),
            Err(e) => return Err(Fail::net(&format!("connect {addr}"), &e, timeout.as_secs_f64())),
        }
    }
    let deadline = now_ns() + timeout.as_nanos() as u64;
    while !pending.is_empty() {
        if signals::interrupted() {
            return Err(Fail::interrupted());
        }
        let now = now_ns();
        if now >= deadline {
            return Err(Fail::new(
                fail::TIMEOUT,
                format!("connect {addr}: timed out after {} s", timeout.as_secs_f64()),
            ));
        }
        let ms = ((deadline - now) / 1_000_000 + 1).min(POLL_SLICE_MS);
        let mut fds: Vec<libc::pollfd> = pending
            .iter()
            .map(|&i| libc::pollfd { fd: socks[i].as_raw_fd(), events: libc::POLLOUT, revents: 0 })
            .collect();
        // SAFETY: fds is a valid array of pollfd.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms as libc::c_int) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(Fail::other(format!("poll: {e}")));
        }
        let mut still = Vec::with_capacity(pending.len());
        for (k, &i) in pending.iter().enumerate() {
            if fds[k].revents == 0 {
                still.push(i);
                continue;
            }
            match socks[i].take_error() {
                Ok(None) => {}
                Ok(Some(e)) | Err(e) => return Err(Fail::net(&format!("connect {addr}"), &e, timeout.as_secs_f64())),
            }
        }
        pending = still;
    }
    let t = now_ns();
    for s in socks {
        s.set_nonblocking(false).map_err(|e| Fail::other(format!("O_NONBLOCK: {e}")))?;
    }
    Ok(t)
}

/// send(2) without SIGPIPE; retries EINTR.
#[inline]
pub fn send(fd: RawFd, b: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: b is valid for b.len() bytes.
        let r = unsafe { libc::send(fd, b.as_ptr() as *const libc::c_void, b.len(), libc::MSG_NOSIGNAL) };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

pub fn send_all(fd: RawFd, mut b: &[u8]) -> io::Result<()> {
    while !b.is_empty() {
        let n = send(fd, b)?;
        b = &b[n..];
    }
    Ok(())
}

/// read(2) that retries EINTR.
#[inline]
pub fn recv(s: &Socket, b: &mut [u8]) -> io::Result<usize> {
    loop {
        match (&*s).read(b) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// Fill b completely; Ok(false) if EOF came first (nothing or part read).
pub fn recv_exact(s: &Socket, b: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < b.len() {
        let n = recv(s, &mut b[got..])?;
        if n == 0 {
            return Ok(false);
        }
        got += n;
    }
    Ok(true)
}

pub fn shutdown_write(s: &Socket) -> io::Result<()> {
    s.shutdown(std::net::Shutdown::Write)
}

/// Read until EOF, discarding data; returns the bytes discarded.
pub fn drain_to_eof(s: &Socket, scratch: &mut [u8]) -> io::Result<u64> {
    let mut n = 0u64;
    loop {
        match recv(s, scratch)? {
            0 => return Ok(n),
            k => n += k as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert!(parse_addr("198.18.3.1:5001").unwrap().is_ipv4());
        assert!(parse_addr("[2001:2::1]:5001").unwrap().is_ipv6());
        assert_eq!(parse_addr("2001:2::1:5001").unwrap_err().code, fail::USAGE);
        assert!(parse_addr("host:1").is_err());
        assert!(secs(0.0, "x").is_err());
        assert_eq!(secs(1.5, "x").unwrap(), Duration::from_millis(1500));
    }

    #[test]
    fn the_kernel_reports_the_cc_in_use() {
        let s = tcp_socket("127.0.0.1:9".parse().unwrap(), "reno", None, None).unwrap();
        assert_eq!(get_cc(s.as_raw_fd()).unwrap(), "reno");
    }

    #[test]
    fn a_fixed_buffer_is_what_the_kernel_keeps_twice() {
        // 4 MB asked: SO_SNDBUF / SO_RCVBUF read back 8 MB (the kernel doubles it), past
        // net.core.*mem_max when forced as root, as iperf's -w does
        let s = tcp_socket("127.0.0.1:9".parse().unwrap(), "reno", None, Some(4_000_000)).unwrap();
        assert_eq!(s.send_buffer_size().unwrap(), 8_000_000);
        let l = listen("127.0.0.1:0".parse().unwrap(), Some(4_000_000)).unwrap();
        assert_eq!(l.recv_buffer_size().unwrap(), 8_000_000);
        assert!(check_socket_buffer(Some(100)).is_err());
        assert!(check_socket_buffer(Some(MAX_SOCKET_BUFFER + 1)).is_err());
        assert_eq!(check_socket_buffer(Some(16_000_000)).unwrap(), Some(16_000_000));
    }

    #[test]
    fn unknown_cc_is_named() {
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        let e = set_cc(s.as_raw_fd(), "doesnotexist").unwrap_err();
        assert_eq!(e.code, fail::USAGE);
        assert!(e.msg.contains("congestion control doesnotexist not available"), "{}", e.msg);
        set_cc(s.as_raw_fd(), "cubic").unwrap();
    }

    #[test]
    fn refused_and_accept_timeout() {
        let l = listen("127.0.0.1:0".parse().unwrap(), None).unwrap();
        let addr = l.local_addr().unwrap().as_socket().unwrap();
        let e = accept_within(&l, Duration::from_millis(50), "x").unwrap_err();
        assert_eq!(e.code, fail::TIMEOUT);
        drop(l);
        let s = tcp_socket(addr, "cubic", None, None).unwrap();
        let e = connect_all(&[s], addr, Duration::from_secs(2)).unwrap_err();
        assert_eq!(e.code, fail::TIMEOUT);
        assert!(e.msg.contains("refused"), "{}", e.msg);
    }
}
