//! TCP_INFO as the kernel lays it out (include/uapi/linux/tcp.h).
//!
//! libc::tcp_info stops at tcpi_total_retrans (glibc's copy), so the fields
//! we need are read at their uapi offsets from the bytes getsockopt returns.
//! Older kernels return fewer bytes: a field past the end reads as None.

use serde::Serialize;
use std::io::{self, Write};
use std::os::fd::RawFd;

/// The uapi struct is 248 bytes on 6.x; ask for more so growth is harmless.
const BUF: usize = 320;

// Byte offsets in struct tcp_info.
const STATE: usize = 0;
const CA_STATE: usize = 1;
const OPTIONS: usize = 5;
const SND_MSS: usize = 16;
const UNACKED: usize = 24;
const RTT: usize = 68;
const RTTVAR: usize = 72;
const SND_SSTHRESH: usize = 76;
const SND_CWND: usize = 80;
const TOTAL_RETRANS: usize = 100;
const PACING_RATE: usize = 104;
const BYTES_ACKED: usize = 120;
const SEGS_OUT: usize = 136;
const NOTSENT_BYTES: usize = 144;
const DATA_SEGS_OUT: usize = 156;
const DELIVERY_RATE: usize = 160;
const BYTES_SENT: usize = 200;
const BYTES_RETRANS: usize = 208;

/// tcpi_options bit: the connection uses TCP timestamps.
pub const TCPI_OPT_TIMESTAMPS: u8 = 1;

/// snd_ssthresh before the first loss (TCP_INFINITE_SSTHRESH).
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TcpInfo {
    pub state: u8,
    /// Congestion-avoidance state (Open, Disorder, CWR, Recovery, Loss): where a
    /// congestion event begins and ends.
    pub ca_state: u8,
    pub snd_mss: u32,
    pub unacked: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub total_retrans: u32,
    /// bytes/s, as the kernel keeps them.
    pub pacing_rate: Option<u64>,
    pub bytes_acked: Option<u64>,
    /// bytes/s.
    pub delivery_rate: Option<u64>,
    /// Payload bytes sent, retransmissions included (tcpi_bytes_sent, Linux ≥ 4.19).
    pub bytes_sent: Option<u64>,
    /// Payload bytes retransmitted (tcpi_bytes_retrans, Linux ≥ 4.19).
    pub bytes_retrans: Option<u64>,
    /// Negotiated options (tcpi_options): TCPI_OPT_TIMESTAMPS = 1, SACK = 2, …
    pub options: u8,
    /// Segments sent, SYN, pure ACKs, FIN and retransmissions included, counted as
    /// they leave on the wire (after segmentation offload) (tcpi_segs_out).
    pub segs_out: u32,
    /// Of those, segments carrying data (tcpi_data_segs_out).
    pub data_segs_out: u32,
    /// Bytes written and not yet sent (tcpi_notsent_bytes, Linux ≥ 4.6).
    pub notsent_bytes: Option<u32>,
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    b.get(off..off + 4).map_or(0, |s| u32::from_ne_bytes(s.try_into().unwrap()))
}

fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    b.get(off..off + 8).map(|s| u64::from_ne_bytes(s.try_into().unwrap()))
}

impl TcpInfo {
    /// Parse the first `b.len()` bytes the kernel returned.
    pub fn parse(b: &[u8]) -> TcpInfo {
        TcpInfo {
            state: b.get(STATE).copied().unwrap_or(0),
            ca_state: b.get(CA_STATE).copied().unwrap_or(0),
            snd_mss: u32_at(b, SND_MSS),
            unacked: u32_at(b, UNACKED),
            rtt_us: u32_at(b, RTT),
            rttvar_us: u32_at(b, RTTVAR),
            snd_ssthresh: u32_at(b, SND_SSTHRESH),
            snd_cwnd: u32_at(b, SND_CWND),
            total_retrans: u32_at(b, TOTAL_RETRANS),
            pacing_rate: u64_at(b, PACING_RATE),
            bytes_acked: u64_at(b, BYTES_ACKED),
            delivery_rate: u64_at(b, DELIVERY_RATE),
            bytes_sent: u64_at(b, BYTES_SENT),
            bytes_retrans: u64_at(b, BYTES_RETRANS),
            options: b.get(OPTIONS).copied().unwrap_or(0),
            segs_out: u32_at(b, SEGS_OUT),
            data_segs_out: u32_at(b, DATA_SEGS_OUT),
            notsent_bytes: b.get(NOTSENT_BYTES..NOTSENT_BYTES + 4).map(|_| u32_at(b, NOTSENT_BYTES)),
        }
    }

    /// IP and TCP header bytes of a data segment: 20 (IPv4) or 40 (IPv6), 20 of TCP and
    /// 12 more with the timestamp option (NOP, NOP, 10-byte option), which every
    /// segment then carries.
    pub fn header_len(&self, ipv6: bool) -> u64 {
        (if ipv6 { 40 } else { 20 }) + 20 + if self.options & TCPI_OPT_TIMESTAMPS != 0 { 12 } else { 0 }
    }

    pub fn read(fd: RawFd) -> io::Result<TcpInfo> {
        // u64 array: 8-byte alignment for the kernel's copy.
        let mut buf = [0u64; BUF / 8];
        let mut len = BUF as libc::socklen_t;
        // SAFETY: buf is BUF writable bytes; len tells the kernel so.
        let r = unsafe {
            libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, buf.as_mut_ptr() as *mut libc::c_void, &mut len)
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel wrote len <= BUF bytes at the start of buf.
        let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, (len as usize).min(BUF)) };
        Ok(TcpInfo::parse(bytes))
    }
}

/// What a transfer's sockets put on the wire, summed over its streams from each one's
/// last tcp_info: the send summary's `sent` block.
#[derive(Serialize, Debug, Default, Clone, Copy, PartialEq)]
pub struct SentTotals {
    /// Payload bytes, retransmissions included (Σ tcpi_bytes_sent).
    pub bytes: u64,
    /// Payload bytes retransmitted (Σ tcpi_bytes_retrans).
    pub retrans_bytes: u64,
    /// Segments, SYN, pure ACKs, FIN and retransmissions included (Σ tcpi_segs_out).
    pub segments: u64,
    /// Segments carrying data (Σ tcpi_data_segs_out).
    pub data_segments: u64,
    /// IP and TCP headers of those segments: Σ tcpi_segs_out × header_len (IP, TCP and
    /// timestamp option; a SYN's longer options and SACK blocks are not counted).
    /// Link-layer framing is not included.
    pub header_bytes: u64,
}

/// Totals over the streams' tcp_info; None without streams or when a stream's kernel
/// does not report tcpi_bytes_sent / tcpi_bytes_retrans (before Linux 4.19).
pub fn sent_totals(infos: &[TcpInfo], ipv6: bool) -> Option<SentTotals> {
    if infos.is_empty() {
        return None;
    }
    let mut t = SentTotals::default();
    for i in infos {
        t.bytes += i.bytes_sent?;
        t.retrans_bytes += i.bytes_retrans?;
        t.segments += i.segs_out as u64;
        t.data_segments += i.data_segs_out as u64;
        t.header_bytes += i.segs_out as u64 * i.header_len(ipv6);
    }
    Some(t)
}

/// Congestion-avoidance state names (enum tcp_ca_state, include/uapi/linux/tcp.h).
pub fn ca_state_name(s: u8) -> &'static str {
    match s {
        0 => "Open",
        1 => "Disorder",
        2 => "CWR",
        3 => "Recovery",
        4 => "Loss",
        _ => "?",
    }
}

/// TCP state names (include/net/tcp_states.h).
pub fn state_name(s: u8) -> &'static str {
    match s {
        1 => "ESTABLISHED",
        2 => "SYN_SENT",
        3 => "SYN_RECV",
        4 => "FIN_WAIT1",
        5 => "FIN_WAIT2",
        6 => "TIME_WAIT",
        7 => "CLOSE",
        8 => "CLOSE_WAIT",
        9 => "LAST_ACK",
        10 => "LISTEN",
        11 => "CLOSING",
        12 => "NEW_SYN_RECV",
        _ => "UNKNOWN",
    }
}

pub const CSV_HEADER: &str = "t_ns,stream,bytes_acked,bytes_sent,cwnd,ssthresh,rtt_us,rttvar_us,\
total_retrans,pacing_rate_bps,delivery_rate_bps,snd_mss,unacked,state,ca_state\n";

/// A rate in bytes/s as bit/s; empty when absent or "unlimited" (~0).
fn rate_bps(v: Option<u64>) -> Option<u64> {
    v.filter(|&r| r != u64::MAX).map(|r| r.saturating_mul(8))
}

struct Opt(Option<u64>);

impl std::fmt::Display for Opt {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self.0 {
            Some(v) => write!(f, "{v}"),
            None => Ok(()),
        }
    }
}

/// One tcp_info CSV row (formatting into the writer; no allocation).
pub fn write_row(w: &mut impl Write, t_ns: u64, stream: usize, i: &TcpInfo) -> io::Result<()> {
    let ssthresh = Opt(Some(i.snd_ssthresh as u64).filter(|&s| s < INFINITE_SSTHRESH as u64));
    writeln!(
        w,
        "{t_ns},{stream},{},{},{},{ssthresh},{},{},{},{},{},{},{},{},{}",
        Opt(i.bytes_acked),
        Opt(i.bytes_sent),
        i.snd_cwnd,
        i.rtt_us,
        i.rttvar_us,
        i.total_retrans,
        Opt(rate_bps(i.pacing_rate)),
        Opt(rate_bps(i.delivery_rate)),
        i.snd_mss,
        i.unacked,
        state_name(i.state),
        ca_state_name(i.ca_state)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put32(b: &mut [u8], off: usize, v: u32) {
        b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
    }
    fn put64(b: &mut [u8], off: usize, v: u64) {
        b[off..off + 8].copy_from_slice(&v.to_ne_bytes());
    }

    fn sample() -> Vec<u8> {
        let mut b = vec![0u8; 248];
        b[STATE] = 1;
        b[CA_STATE] = 3;
        put32(&mut b, SND_MSS, 1448);
        put32(&mut b, UNACKED, 10);
        put32(&mut b, RTT, 20_100);
        put32(&mut b, RTTVAR, 300);
        put32(&mut b, SND_SSTHRESH, INFINITE_SSTHRESH);
        put32(&mut b, SND_CWND, 42);
        put32(&mut b, TOTAL_RETRANS, 3);
        put64(&mut b, PACING_RATE, 125_000_000);
        put64(&mut b, BYTES_ACKED, 1_000_001);
        put64(&mut b, DELIVERY_RATE, 12_500_000);
        put64(&mut b, BYTES_SENT, 1_002_897);
        put64(&mut b, BYTES_RETRANS, 2_896);
        b[OPTIONS] = TCPI_OPT_TIMESTAMPS | 2;
        put32(&mut b, SEGS_OUT, 700);
        put32(&mut b, DATA_SEGS_OUT, 693);
        put32(&mut b, NOTSENT_BYTES, 65_160);
        b
    }

    #[test]
    fn parse_full_struct() {
        let i = TcpInfo::parse(&sample());
        assert_eq!((i.state, i.ca_state), (1, 3));
        assert_eq!(i.snd_mss, 1448);
        assert_eq!(i.unacked, 10);
        assert_eq!((i.rtt_us, i.rttvar_us), (20_100, 300));
        assert_eq!((i.snd_cwnd, i.snd_ssthresh, i.total_retrans), (42, INFINITE_SSTHRESH, 3));
        assert_eq!(i.pacing_rate, Some(125_000_000));
        assert_eq!(i.bytes_acked, Some(1_000_001));
        assert_eq!(i.delivery_rate, Some(12_500_000));
        assert_eq!(i.bytes_sent, Some(1_002_897));
        assert_eq!(i.bytes_retrans, Some(2_896));
        assert_eq!((i.options, i.segs_out, i.data_segs_out), (3, 700, 693));
        assert_eq!(i.notsent_bytes, Some(65_160));
        assert_eq!((i.header_len(false), i.header_len(true)), (52, 72));
    }

    #[test]
    fn parse_short_struct_from_old_kernel() {
        // 4.9-era length: up to tcpi_min_rtt.
        let b = sample();
        let i = TcpInfo::parse(&b[..152]);
        assert_eq!(i.bytes_acked, Some(1_000_001));
        assert_eq!(i.delivery_rate, None);
        assert_eq!((i.bytes_sent, i.bytes_retrans), (None, None));
        assert_eq!(i.segs_out, 700);
        assert_eq!(i.notsent_bytes, Some(65_160)); // at 144, within
        assert_eq!(i.data_segs_out, 0); // at 156, past the 152 bytes returned
        assert_eq!(sent_totals(&[i], false), None);
        assert_eq!(TcpInfo::parse(&b[..144]).notsent_bytes, None);
        let i = TcpInfo::parse(&b[..50]);
        assert_eq!(i.snd_cwnd, 0);
        assert_eq!(i.pacing_rate, None);
    }

    #[test]
    fn csv_row_units_and_blanks() {
        let mut out = Vec::new();
        write_row(&mut out, 123, 2, &TcpInfo::parse(&sample())).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "123,2,1000001,1002897,42,,20100,300,3,1000000000,100000000,1448,10,ESTABLISHED,Recovery\n"
        );
        let mut i = TcpInfo::parse(&sample()[..152]);
        i.snd_ssthresh = 17;
        i.pacing_rate = Some(u64::MAX);
        let mut out = Vec::new();
        write_row(&mut out, 9, 0, &i).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "9,0,1000001,,42,17,20100,300,3,,,1448,10,ESTABLISHED,Recovery\n");
        assert_eq!(CSV_HEADER.trim_end().split(',').count(), 15);
    }

    #[test]
    fn sent_totals_sum_streams() {
        let a = TcpInfo::parse(&sample());
        // a second stream without timestamps: 1000 segments of which 990 with data
        let mut b = a;
        (b.bytes_sent, b.bytes_retrans, b.options) = (Some(1_413_720), Some(0), 0);
        (b.segs_out, b.data_segs_out) = (1000, 990);
        let t = sent_totals(&[a, b], false).unwrap();
        assert_eq!(t.bytes, 1_002_897 + 1_413_720);
        assert_eq!(t.retrans_bytes, 2_896);
        assert_eq!((t.segments, t.data_segments), (1700, 1683));
        // 700 × (20 + 20 + 12) + 1000 × (20 + 20) = 36 400 + 40 000
        assert_eq!(t.header_bytes, 76_400);
        // over IPv6: 700 × 72 + 1000 × 60
        assert_eq!(sent_totals(&[a, b], true).unwrap().header_bytes, 110_400);
        assert_eq!(sent_totals(&[], false), None);
        let json = serde_json::to_value(t).unwrap();
        assert_eq!(json["header_bytes"], 76_400);
        assert_eq!(json["retrans_bytes"], 2_896);
    }

    #[test]
    fn live_socket_info() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let i = TcpInfo::read(std::os::fd::AsRawFd::as_raw_fd(&c)).unwrap();
        assert_eq!(state_name(i.state), "ESTABLISHED");
        assert!(i.snd_mss > 0 && i.snd_cwnd > 0);
        assert!(i.bytes_sent.is_some() && i.bytes_retrans.is_some());
        assert!(i.segs_out >= 1); // at least the SYN
    }
}
