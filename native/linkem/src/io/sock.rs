//! AF_PACKET sockets with virtio_net_hdr (PACKET_VNET_HDR).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const ETH_P_ALL: u16 = 0x0003;

fn cvt(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

fn setopt<T>(fd: libc::c_int, level: libc::c_int, name: libc::c_int, v: &T, what: &str) -> io::Result<()> {
    // SAFETY: v points to a live T of the given size.
    let r = unsafe {
        libc::setsockopt(fd, level, name, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32)
    };
    cvt(r, what).map(|_| ())
}

pub fn ifindex(name: &str) -> io::Result<i32> {
    let c = CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad name"))?;
    // SAFETY: valid NUL-terminated string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(io::Error::new(io::ErrorKind::NotFound, format!("interface {name} not found")));
    }
    Ok(i as i32)
}

pub struct PacketSocket {
    fd: OwnedFd,
}

impl AsRawFd for PacketSocket {
    fn as_raw_fd(&self) -> libc::c_int {
        self.fd.as_raw_fd()
    }
}

impl PacketSocket {
    /// rx = true: receive socket (promiscuous, ignore outgoing, big buffer).
    /// rx = false: transmit socket (qdisc bypass).
    pub fn open(ifname: &str, rx: bool, buf_bytes: i32) -> io::Result<PacketSocket> {
        let idx = ifindex(ifname)?;
        // Protocol 0: receive nothing until bound to the interface.
        // SAFETY: plain socket(2).
        let fd =
            cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) }, "socket(AF_PACKET)")?;
        // SAFETY: fd is a fresh descriptor we own.
        let s = PacketSocket { fd: unsafe { OwnedFd::from_raw_fd(fd) } };
        let one: libc::c_int = 1;
        setopt(fd, libc::SOL_PACKET, libc::PACKET_VNET_HDR, &one, "PACKET_VNET_HDR")?;
        if rx {
            setopt(fd, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &one, "PACKET_IGNORE_OUTGOING")?;
            setopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &buf_bytes, "SO_RCVBUFFORCE")?;
            setopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &one, "SO_TIMESTAMPNS")?;
        } else {
            setopt(fd, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &one, "PACKET_QDISC_BYPASS")?;
            setopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &buf_bytes, "SO_SNDBUFFORCE")?;
        }
        // SAFETY: zeroed sockaddr_ll is valid; fields set below.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = if rx { ETH_P_ALL.to_be() } else { 0 };
        sll.sll_ifindex = idx;
        // SAFETY: sll is a valid sockaddr_ll.
        cvt(
            unsafe {
                libc::bind(
                    fd,
                    &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                    std::mem::size_of::<libc::sockaddr_ll>() as u32,
                )
            },
            &format!("bind to {ifname}"),
        )?;
        if rx {
            // veth does no MAC filtering, but a real NIC would: be explicit.
            // SAFETY: zeroed packet_mreq is valid.
            let mut mr: libc::packet_mreq = unsafe { std::mem::zeroed() };
            mr.mr_ifindex = idx;
            mr.mr_type = libc::PACKET_MR_PROMISC as u16;
            setopt(fd, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mr, "PACKET_ADD_MEMBERSHIP")?;
        }
        Ok(s)
    }

    /// Frames the kernel dropped on this socket since the last call.
    pub fn take_drops(&self) -> u64 {
        // SAFETY: tpacket_stats is plain data; getsockopt fills it.
        let mut st: libc::tpacket_stats = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                &mut st as *mut _ as *mut libc::c_void,
                &mut len,
            )
        };
        if r < 0 {
            0
        } else {
            st.tp_drops as u64
        }
    }
}

pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain eventfd(2).
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) }, "eventfd")?;
    // SAFETY: fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn eventfd_signal(fd: libc::c_int) {
    let v: u64 = 1;
    // SAFETY: writing 8 bytes to an eventfd.
    unsafe { libc::write(fd, &v as *const u64 as *const libc::c_void, 8) };
}

pub fn eventfd_clear(fd: libc::c_int) {
    let mut v: u64 = 0;
    // SAFETY: reading 8 bytes from a non-blocking eventfd.
    unsafe { libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
}

#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid timespec pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_REALTIME in ns: the clock of the kernel's packet stamps.
pub fn real_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid timespec pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The first timestamp (CLOCK_REALTIME ns) of a control message of type `ty` at level
/// SOL_SOCKET in a received message: SO_TIMESTAMPNS on receive, SCM_TIMESTAMPING (its
/// software stamp, the first of three) on the error queue.
pub fn cmsg_stamp(h: &libc::msghdr, ty: libc::c_int) -> Option<u64> {
    // SAFETY: walking the control buffer the kernel filled, with the libc CMSG helpers
    // that bound-check against msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == ty {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    None
}
