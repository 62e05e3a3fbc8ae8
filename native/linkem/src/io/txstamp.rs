//! Sampled transmit stamps: the kernel's time of a frame entering the out-interface.
//!
//! One frame at a time, at most one per `SAMPLE_NS` of the schedule, asks for a software transmit stamp
//! (`SO_TIMESTAMPING` control message on that `sendmsg` only; veth takes it in its
//! transmit function, as the frame leaves linkem). The stamp is read back from the
//! socket's error queue after the batch (veth's transmit is synchronous, so it is
//! there at once); a frame the kernel refused never gets one and is counted after
//! `GIVE_UP_NS`. Cost: one `recvmsg` per sample.

use std::os::fd::RawFd;

/// At most one sample per this long: 2000 a second per direction.
pub const SAMPLE_NS: u64 = 500_000;
const GIVE_UP_NS: u64 = 10_000_000;
const CTL_LEN: usize = 64;

pub struct TxStamps {
    fd: RawFd,
    next_ns: u64,
    /// (due, asked at) of the frame waiting for its stamp.
    pending: Option<(u64, u64)>,
    /// The control message put on a sampled frame (8-byte aligned).
    ask: [u64; 4],
    rbuf: [u64; CTL_LEN / 8],
}

impl TxStamps {
    /// Reports software stamps on `fd` (only for frames that ask), stamps only.
    pub fn new(fd: RawFd) -> std::io::Result<TxStamps> {
        let flags: libc::c_uint = libc::SOF_TIMESTAMPING_SOFTWARE | libc::SOF_TIMESTAMPING_OPT_TSONLY;
        // SAFETY: setsockopt with a plain integer option.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_TIMESTAMPING,
                &flags as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::c_uint>() as u32,
            )
        };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut ask = [0u64; 4];
        // SAFETY: ask is 32 bytes, 8-aligned: room for one cmsghdr (16 B) and a u32.
        unsafe {
            let c = ask.as_mut_ptr() as *mut libc::cmsghdr;
            (*c).cmsg_len = libc::CMSG_LEN(4) as usize;
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SO_TIMESTAMPING;
            *(libc::CMSG_DATA(c) as *mut u32) = libc::SOF_TIMESTAMPING_TX_SOFTWARE;
        }
        Ok(TxStamps { fd, next_ns: 0, pending: None, ask, rbuf: [0; CTL_LEN / 8] })
    }

    /// Should the frame due at `due` be sampled? Samples are picked by the schedule (the
    /// first frame due at least `SAMPLE_NS` after the last sampled one), not by when the
    /// worker hands frames over, so a frame anywhere in a batch may be picked: one sent
    /// after others in the same `sendmmsg` waits for their copies, and that counts.
    #[inline]
    pub fn want(&self, due: u64) -> bool {
        self.pending.is_none() && due >= self.next_ns
    }

    /// Put the stamp request on `hdr`, the frame due at `due`.
    pub fn attach(&mut self, hdr: &mut libc::msghdr, due: u64, now: u64) {
        hdr.msg_control = self.ask.as_mut_ptr() as *mut libc::c_void;
        // SAFETY: CMSG_SPACE is a pure computation.
        hdr.msg_controllen = unsafe { libc::CMSG_SPACE(4) } as usize;
        self.pending = Some((due, now));
        self.next_ns = due + SAMPLE_NS;
    }

    pub fn pending(&self) -> bool {
        self.pending.is_some()
    }

    pub fn detach(hdr: &mut libc::msghdr) {
        hdr.msg_control = std::ptr::null_mut();
        hdr.msg_controllen = 0;
    }

    /// The pending sample's (due, actual) once its stamp is read, `real_off` being
    /// CLOCK_REALTIME − CLOCK_MONOTONIC; `Err(())` when it is given up.
    pub fn collect(&mut self, now: u64, real_off: u64) -> Option<Result<(u64, u64), ()>> {
        let (due, asked) = self.pending?;
        while let Some(real) = self.read_one() {
            if real != 0 {
                self.pending = None;
                return Some(Ok((due, real.wrapping_sub(real_off))));
            }
        }
        if now.saturating_sub(asked) > GIVE_UP_NS {
            self.pending = None;
            return Some(Err(()));
        }
        None
    }

    /// One message of the error queue: its software stamp (CLOCK_REALTIME ns; 0 if it
    /// has none), or None when the queue is empty.
    fn read_one(&mut self) -> Option<u64> {
        // SAFETY: msghdr is plain data; the control buffer is ours and sized.
        let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
        m.msg_control = self.rbuf.as_mut_ptr() as *mut libc::c_void;
        m.msg_controllen = CTL_LEN;
        // SAFETY: valid msghdr without data buffers.
        let r = unsafe { libc::recvmsg(self.fd, &mut m, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if r < 0 {
            return None;
        }
        Some(crate::sock::cmsg_stamp(&m, libc::SCM_TIMESTAMPING).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    /// Sends one datagram to the socket itself, asking for a stamp when `ask`.
    fn send(st: &mut TxStamps, sock: &UdpSocket, due: u64) -> bool {
        let mut byte = [7u8];
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr() as *mut libc::c_void, iov_len: 1 };
        // SAFETY: plain data.
        let mut h: libc::msghdr = unsafe { std::mem::zeroed() };
        h.msg_iov = &mut iov;
        h.msg_iovlen = 1;
        let asked = st.want(due);
        if asked {
            st.attach(&mut h, due, crate::io::sock::now_ns());
        }
        // SAFETY: h describes live buffers; the socket is connected to itself.
        assert_eq!(unsafe { libc::sendmsg(sock.as_raw_fd(), &h, 0) }, 1);
        TxStamps::detach(&mut h);
        asked
    }

    #[test]
    fn frames_are_sampled_by_their_due_times_one_per_half_millisecond_and_stamped_by_the_kernel() {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(sock.local_addr().unwrap()).unwrap();
        let mut st = TxStamps::new(sock.as_raw_fd()).unwrap();
        // Due times in one batch: the first is sampled; while its stamp is pending none is.
        let t0 = crate::io::sock::now_ns();
        assert!(send(&mut st, &sock, t0));
        assert!(!send(&mut st, &sock, t0 + 600_000), "a second sample while one is pending");
        let off = crate::io::sock::real_ns().wrapping_sub(crate::io::sock::now_ns());
        let Some(Ok((due, actual))) = st.collect(crate::io::sock::now_ns(), off) else {
            panic!("loopback gives a software transmit stamp at once");
        };
        assert_eq!(due, t0);
        // The stamp is the kernel's, a few microseconds after t0 (allow 50 ms on a busy host).
        assert!(actual > t0 - 1_000_000 && actual < t0 + 50_000_000, "{actual} vs {t0}");
        // The next sample is the first frame due 500 us or more after t0, wherever it
        // sits in a batch: 499.999 us no, 500 us yes.
        assert!(!send(&mut st, &sock, t0 + 499_999));
        assert!(send(&mut st, &sock, t0 + 500_000));
        assert!(matches!(st.collect(crate::io::sock::now_ns(), off), Some(Ok((d, _))) if d == t0 + 500_000));
    }
}
