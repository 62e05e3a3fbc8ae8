//! framegen: pre-built MTU-size frames through a packet socket, as fast as it can or at a
//! given rate, for the frame-rate benchmark (bench/frames.py).
//!
//! One IPv4/UDP frame of `--size` bytes (from the Ethernet header on, checksums filled)
//! is built once and handed to the kernel in `sendmmsg` batches on an AF_PACKET socket
//! bound to `--ifname` (qdisc bypassed: the frames go straight to the interface). With
//! `--rate-bps` the batches keep to the rate (the count sent never ahead of it); without
//! it the generator sends back to back. At the end one JSON line on stdout:
//! `{"frames":…, "bytes":…, "refused":…, "seconds":…}`.

use clap::Parser;
use linkem::gso::VNET_HDR_LEN;
use linkem::sock::{now_ns, PacketSocket};
use std::os::fd::AsRawFd;

const BATCH: usize = 32;

#[derive(Parser)]
#[command(about = "Send pre-built MTU-size UDP frames on an interface (linkem's frame benchmark)")]
struct Args {
    /// Interface to send on (in the current network namespace).
    #[arg(long)]
    ifname: String,
    /// Destination MAC, aa:bb:cc:dd:ee:ff.
    #[arg(long)]
    dst_mac: String,
    /// Source MAC.
    #[arg(long)]
    src_mac: String,
    #[arg(long)]
    src_ip: std::net::Ipv4Addr,
    #[arg(long)]
    dst_ip: std::net::Ipv4Addr,
    /// Frame size from the Ethernet header on (60 to 1514).
    #[arg(long, default_value_t = 1514)]
    size: usize,
    /// Offered rate in bit/s of frames (Ethernet header on); none: back to back.
    #[arg(long)]
    rate_bps: Option<u64>,
    /// How long to send.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
}

fn mac(s: &str) -> Result<[u8; 6], String> {
    let v: Vec<u8> =
        s.split(':').map(|x| u8::from_str_radix(x, 16)).collect::<Result<_, _>>().map_err(|e| format!("{s}: {e}"))?;
    v.try_into().map_err(|_| format!("{s}: a MAC has six bytes"))
}

fn checksum(words: &[u8]) -> u16 {
    let mut sum: u32 = words.chunks(2).map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The frame: Ethernet, IPv4 (no options, DF), UDP (checksum 0: none, allowed on IPv4).
fn frame(a: &Args) -> Result<Vec<u8>, String> {
    if !(60..=1514).contains(&a.size) {
        return Err(format!("--size {}: must be 60 to 1514", a.size));
    }
    let mut f = vec![0u8; a.size];
    f[0..6].copy_from_slice(&mac(&a.dst_mac)?);
    f[6..12].copy_from_slice(&mac(&a.src_mac)?);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip_len = (a.size - 14) as u16;
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[6] = 0x40; // DF
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&a.src_ip.octets());
    ip[16..20].copy_from_slice(&a.dst_ip.octets());
    let c = checksum(ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let udp = &mut f[34..42];
    udp[0..2].copy_from_slice(&9u16.to_be_bytes()); // discard
    udp[2..4].copy_from_slice(&9u16.to_be_bytes());
    udp[4..6].copy_from_slice(&(ip_len - 20).to_be_bytes());
    Ok(f)
}

fn run(a: Args) -> Result<(), String> {
    let mut f = frame(&a)?;
    let sock = PacketSocket::open(&a.ifname, false, 4 << 20).map_err(|e| format!("{}: {e}", a.ifname))?;
    let mut vnet = [0u8; VNET_HDR_LEN]; // no GSO, no checksum offload
    let mut iovs = [[libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; 2]; BATCH];
    // SAFETY: mmsghdr is plain data; the pointers set below outlive every sendmmsg.
    let mut msgs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
    for (m, iov) in msgs.iter_mut().zip(iovs.iter_mut()) {
        iov[0] = libc::iovec { iov_base: vnet.as_mut_ptr() as *mut libc::c_void, iov_len: VNET_HDR_LEN };
        iov[1] = libc::iovec { iov_base: f.as_mut_ptr() as *mut libc::c_void, iov_len: f.len() };
        m.msg_hdr.msg_iov = iov.as_mut_ptr();
        m.msg_hdr.msg_iovlen = 2;
    }
    let ns_per_frame = a.rate_bps.map(|r| (f.len() as f64 * 8e9 / r as f64).max(1.0));
    let t0 = now_ns();
    let end = t0 + (a.seconds * 1e9) as u64;
    let (mut sent, mut refused) = (0u64, 0u64);
    loop {
        let now = now_ns();
        if now >= end {
            break;
        }
        let n = match ns_per_frame {
            None => BATCH,
            Some(p) => ((((now - t0) as f64 / p) as u64).saturating_sub(sent + refused) as usize).min(BATCH),
        };
        if n == 0 {
            std::hint::spin_loop();
            continue;
        }
        // SAFETY: msgs[..n] are fully built above.
        let r = unsafe { libc::sendmmsg(sock.as_raw_fd(), msgs.as_mut_ptr(), n as u32, 0) };
        if r < 0 {
            refused += 1; // the interface refused the batch's first frame
        } else {
            sent += r as u64;
            refused += (n - r as usize) as u64;
        }
    }
    let secs = (now_ns() - t0) as f64 / 1e9;
    println!("{{\"frames\":{sent},\"bytes\":{},\"refused\":{refused},\"seconds\":{secs:.6}}}", sent * f.len() as u64);
    Ok(())
}

fn main() {
    if let Err(e) = run(Args::parse()) {
        eprintln!("framegen: {e}");
        std::process::exit(2);
    }
}
