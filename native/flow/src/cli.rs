//! Command line (clap derive). Validation that clap cannot express lives in
//! each command's module, next to the code that relies on it.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "flow", version, about = "ITB traffic endpoint: TCP transfers and UDP background traffic")]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Receive one TCP transfer (N streams) and log goodput.
    Recv(RecvArgs),
    /// Send one TCP transfer (N streams) and log tcp_info.
    Send(SendArgs),
    /// Send UDP datagrams at a constant or Poisson rate.
    UdpSend(UdpSendArgs),
    /// Receive UDP datagrams for a fixed time and log their rate.
    UdpRecv(UdpRecvArgs),
    /// Evaluate a rate profile (ITB's test that Python and the sender integrate it
    /// alike): prints {"when_allowed_ns": [...], "bytes_by": [...]} as JSON.
    #[command(hide = true)]
    ProfileEval(ProfileEvalArgs),
}

#[derive(Args, Debug, Clone)]
pub struct ProfileEvalArgs {
    /// The profile, as --profile of `flow send` (T_US:BPS,...).
    #[arg(long)]
    pub profile: String,
    /// Payload byte counts: when the profile allows each (ns after the start).
    #[arg(long, value_delimiter = ',', default_value = "")]
    pub bytes: Vec<String>,
    /// Dates (ns after the start): the payload bytes the profile allows by each.
    #[arg(long, value_delimiter = ',', default_value = "")]
    pub at_ns: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct RecvArgs {
    /// Address to listen on: IPV4:PORT or [IPV6]:PORT.
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: String,
    /// Connections to accept (the streams of one transfer).
    #[arg(long, value_name = "N")]
    pub streams: usize,
    /// Expected total payload bytes; a different total is an error (exit 3).
    #[arg(long, value_name = "V")]
    pub bytes: Option<u64>,
    /// Goodput log interval in microseconds (>= 1000).
    #[arg(long, value_name = "US", default_value_t = 100_000)]
    pub interval_us: u64,
    /// Goodput CSV log.
    #[arg(long, value_name = "FILE.csv")]
    pub log: PathBuf,
    /// Summary JSON, written at the end.
    #[arg(long, value_name = "FILE.json")]
    pub summary: PathBuf,
    /// Give up (exit 4) if a connection does not arrive within this time.
    #[arg(long, value_name = "S", default_value_t = 30.0)]
    pub accept_timeout_s: f64,
    /// Give up (exit 4) if a stream receives nothing for this long.
    #[arg(long, value_name = "S", default_value_t = 60.0)]
    pub idle_timeout_s: f64,
    /// Bytes per read(2) call (buffer per stream, allocated once).
    #[arg(long, value_name = "B", default_value_t = 131_072)]
    pub read_size: usize,
    /// Write the received bytes to this file (single stream only).
    #[arg(long, value_name = "PATH", conflicts_with = "pingpong")]
    pub file: Option<PathBuf>,
    /// Echo mode: K times read S bytes and write them back (single stream).
    #[arg(long, requires_all = ["msg_size", "count"])]
    pub pingpong: bool,
    /// Pingpong message size in bytes.
    #[arg(long, value_name = "S", requires = "pingpong")]
    pub msg_size: Option<usize>,
    /// Pingpong reply size in bytes: what the echo sends back for each message (RR-6244's
    /// PA: twice the message, a forward/reverse ratio of 0.5); default: the message size.
    #[arg(long, value_name = "R", requires = "pingpong")]
    pub reply_size: Option<usize>,
    /// Pingpong message count.
    #[arg(long, value_name = "K", requires = "pingpong")]
    pub count: Option<u64>,
    /// Congestion control of the accepted sockets (what the echo of a ping-pong sends
    /// with); default: the namespace's tcp_congestion_control.
    #[arg(long, value_name = "NAME")]
    pub cc: Option<String>,
    /// Pacing cap in bit/s per accepted socket (SO_MAX_PACING_RATE; the echo of a ping-pong).
    #[arg(long, value_name = "R")]
    pub rate_bps: Option<u64>,
    /// A fixed receive buffer of B bytes (SO_RCVBUF, as iperf's -w: the kernel keeps
    /// twice it and stops autotuning), set on the listening socket; default: autotuned.
    #[arg(long, value_name = "B")]
    pub socket_buffer: Option<usize>,
}

#[derive(Args, Debug, Clone)]
pub struct SendArgs {
    /// Receiver address: IPV4:PORT or [IPV6]:PORT.
    #[arg(long, value_name = "ADDR:PORT")]
    pub to: String,
    /// Total payload bytes over all streams (optional with --file; ignored with --pingpong).
    #[arg(long, value_name = "V")]
    pub bytes: Option<u64>,
    /// Number of parallel TCP connections.
    #[arg(long, value_name = "N")]
    pub streams: usize,
    /// Congestion control (TCP_CONGESTION), set on each socket before connect.
    #[arg(long, value_name = "NAME", default_value = "cubic")]
    pub cc: String,
    /// Total rate cap in bit/s over all streams (SO_MAX_PACING_RATE, split evenly).
    #[arg(long, value_name = "R")]
    pub rate_bps: Option<u64>,
    /// A fixed send buffer of B bytes per stream (SO_SNDBUF, as iperf's -w: the kernel
    /// keeps twice it and stops autotuning); default: autotuned.
    #[arg(long, value_name = "B")]
    pub socket_buffer: Option<usize>,
    /// tcp_info log interval in microseconds (>= 1000).
    #[arg(long, value_name = "US", default_value_t = 100_000)]
    pub interval_us: u64,
    /// tcp_info CSV log (pingpong: per-message times).
    #[arg(long, value_name = "FILE.csv")]
    pub log: PathBuf,
    /// Summary JSON, written at the end.
    #[arg(long, value_name = "FILE.json")]
    pub summary: PathBuf,
    /// Bytes per write(2) call.
    #[arg(long, value_name = "B", default_value_t = 262_144)]
    pub write_size: usize,
    /// Give up (exit 4) if the connections are not up within this time.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub connect_timeout_s: f64,
    /// Give up (exit 4) if a stream makes no progress for this long.
    #[arg(long, value_name = "S", default_value_t = 60.0)]
    pub idle_timeout_s: f64,
    /// Send this file's bytes (single stream).
    #[arg(long, value_name = "PATH", conflicts_with = "pingpong")]
    pub file: Option<PathBuf>,
    /// Request/response mode: K times write S bytes and read S bytes back.
    #[arg(long, requires_all = ["msg_size", "count"])]
    pub pingpong: bool,
    /// Pingpong message size in bytes.
    #[arg(long, value_name = "S", requires = "pingpong")]
    pub msg_size: Option<usize>,
    /// Pingpong reply size in bytes: what the echo sends back for each message (RR-6244's
    /// PA: twice the message, a forward/reverse ratio of 0.5); default: the message size.
    #[arg(long, value_name = "R", requires = "pingpong")]
    pub reply_size: Option<usize>,
    /// Pingpong message count.
    #[arg(long, value_name = "K", requires = "pingpong")]
    pub count: Option<u64>,
    /// Read rate changes as JSON lines on stdin: {"rate_bps": R} (0 or null: unlimited).
    #[arg(long)]
    pub control_stdin: bool,
    /// Rate profile T_US:BPS,...: payload bit/s from each date (µs after the transfer
    /// starts sending, the first 0) on, over all streams; kept by pacing, or with
    /// --app-cap by the writes.
    #[arg(long, value_name = "T_US:BPS,...", conflicts_with_all = ["rate_bps", "pingpong"])]
    pub profile: Option<String>,
    /// Keep --rate-bps or --profile by the application's writes (each stream writes no
    /// more than its share of what the rate has allowed so far) instead of pacing.
    #[arg(long, conflicts_with = "pingpong")]
    pub app_cap: bool,
    /// With --profile kept by pacing: pace F above the profile's rate (rate × (1 + F))
    /// and let the writes keep the profile, so that a stream behind it (its first RTT
    /// sends only the receiver's first window) catches up, never getting ahead. 0 to 0.5.
    #[arg(long, value_name = "F", default_value_t = 0.0, requires = "profile")]
    pub pace_headroom: f64,
}

#[derive(Args, Debug, Clone)]
pub struct UdpSendArgs {
    /// Receiver address: IPV4:PORT or [IPV6]:PORT.
    #[arg(long, value_name = "ADDR:PORT")]
    pub to: String,
    /// Payload bit rate (UDP payload only, no headers).
    #[arg(long, value_name = "R")]
    pub rate_bps: u64,
    /// Payload bytes per datagram (1..=65507).
    #[arg(long, value_name = "B")]
    pub size: usize,
    /// Sending time in seconds.
    #[arg(long, value_name = "D")]
    pub duration_s: f64,
    /// Exponential inter-departure times (mean B*8/R) instead of constant.
    #[arg(long)]
    pub poisson: bool,
    /// Seed of the Poisson generator.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "poisson")]
    pub seed: u64,
    /// Summary JSON, written at the end.
    #[arg(long, value_name = "FILE.json")]
    pub summary: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct UdpRecvArgs {
    /// Address to bind: IPV4:PORT or [IPV6]:PORT.
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: String,
    /// Receiving time in seconds, counted from `ready`.
    #[arg(long, value_name = "D")]
    pub duration_s: f64,
    /// Log interval in microseconds (>= 1000).
    #[arg(long, value_name = "US", default_value_t = 100_000)]
    pub interval_us: u64,
    /// Rate CSV log.
    #[arg(long, value_name = "FILE.csv")]
    pub log: PathBuf,
    /// Summary JSON, written at the end.
    #[arg(long, value_name = "FILE.json")]
    pub summary: PathBuf,
}

/// --interval-us as nanoseconds; 1 ms is the finest the samplers promise.
pub fn interval_ns(us: u64) -> Result<u64, crate::fail::Fail> {
    if (1000..=3_600_000_000).contains(&us) {
        Ok(us * 1000)
    } else {
        Err(crate::fail::Fail::usage("--interval-us must be between 1000 and 3600000000"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_spec_examples() {
        let c = Cli::try_parse_from([
            "flow",
            "send",
            "--to",
            "198.18.3.1:5001",
            "--bytes",
            "1000",
            "--streams",
            "4",
            "--log",
            "l.csv",
            "--summary",
            "s.json",
            "--rate-bps",
            "50000000",
            "--control-stdin",
        ])
        .unwrap();
        match c.cmd {
            Cmd::Send(a) => {
                assert_eq!((a.streams, a.cc.as_str(), a.write_size, a.interval_us), (4, "cubic", 262_144, 100_000));
                assert_eq!(a.rate_bps, Some(50_000_000));
            }
            _ => panic!(),
        }
        let c = Cli::try_parse_from([
            "flow",
            "recv",
            "--listen",
            "[2001:2::1]:5001",
            "--streams",
            "1",
            "--log",
            "l.csv",
            "--summary",
            "s.json",
            "--pingpong",
            "--msg-size",
            "100000",
            "--count",
            "20",
        ])
        .unwrap();
        assert!(matches!(c.cmd, Cmd::Recv(RecvArgs { pingpong: true, count: Some(20), .. })));
        assert!(Cli::try_parse_from([
            "flow",
            "udp-recv",
            "--listen",
            "x",
            "--duration-s",
            "1",
            "--log",
            "a",
            "--summary",
            "b"
        ])
        .is_ok());
        // --pingpong needs both --msg-size and --count.
        assert!(Cli::try_parse_from([
            "flow",
            "recv",
            "--listen",
            "a",
            "--streams",
            "1",
            "--log",
            "l",
            "--summary",
            "s",
            "--pingpong"
        ])
        .is_err());
        assert!(interval_ns(999).is_err());
        assert_eq!(interval_ns(1000).unwrap(), 1_000_000);
    }
}
