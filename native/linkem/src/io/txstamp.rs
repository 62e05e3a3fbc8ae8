//! Sampled transmit stamps: the kernel's time of a frame entering the out-interface.
//!
//! One frame at a time, at most one per `SAMPLE_NS`, asks for a software transmit stamp
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
        Ok(TxStamps {
            fd,
            next_ns: 0,
            pending: None,
            ask,
            rbuf: [0; CTL_LEN / 8],
        })
    }

    /// Should a frame handed over at `now` be sampled?
    #[inline]
    pub fn want(&self, now: u64) -> bool {
        self.pending.is_none() && now >= self.next_ns
    }

    /// Put the stamp request on `hdr`, the frame due at `due`.
    pub fn attach(&mut self, hdr: &mut libc::msghdr, due: u64, now: u64) {
        hdr.msg_control = self.ask.as_mut_ptr() as *mut libc::c_void;
        // SAFETY: CMSG_SPACE is a pure computation.
        hdr.msg_controllen = unsafe { libc::CMSG_SPACE(4) } as usize;
        self.pending = Some((due, now));
        self.next_ns = now + SAMPLE_NS;
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
