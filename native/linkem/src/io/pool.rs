//! Packet memory: fixed-size blocks in one lazily-backed mmap region.
//!
//! Blocks are handed out by a bump pointer first and then from a LIFO free
//! stack, so the set of pages ever touched (the resident set) is the peak
//! number of blocks held at once, not the size of the region. Frames span
//! several blocks chained through `next`; per-packet metadata lives in a
//! parallel lazily-backed array indexed by the packet's first block.

use std::marker::PhantomData;
use std::ptr::NonNull;

/// 1536 B: a 1514 B frame fits one block, a 64 KB GSO packet takes 43.
pub const BLOCK: usize = 1536;
/// Largest frame accepted from the kernel (veth gso_max_size 64 KiB + L2).
pub const MAX_FRAME: usize = 65536 + 256;
pub const BLOCKS_PER_MAX: usize = MAX_FRAME.div_ceil(BLOCK);

/// Zero-initialised, MAP_NORESERVE array of plain-old-data values.
pub struct MmapArray<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
    _p: PhantomData<T>,
}

unsafe impl<T: Copy + Send> Send for MmapArray<T> {}

impl<T: Copy> MmapArray<T> {
    /// # Safety-relevant contract
    /// T must be valid when all-zero (integers, bools, arrays of them).
    pub fn zeroed(len: usize) -> std::io::Result<Self> {
        let bytes = (len.max(1) * std::mem::size_of::<T>()).max(1);
        // SAFETY: anonymous private mapping, checked for failure.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(MmapArray { ptr: NonNull::new(p as *mut T).unwrap(), len, _p: PhantomData })
    }

    #[inline]
    pub fn get(&self, i: usize) -> &T {
        assert!(i < self.len);
        // SAFETY: bounds checked; zeroed memory is a valid T by contract.
        unsafe { &*self.ptr.as_ptr().add(i) }
    }

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        assert!(i < self.len);
        // SAFETY: as above, and &mut self gives exclusivity.
        unsafe { &mut *self.ptr.as_ptr().add(i) }
    }

    pub fn as_ptr(&self) -> *mut T {
        self.ptr.as_ptr()
    }

    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
}

impl<T: Copy> Drop for MmapArray<T> {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what zeroed() mapped.
        unsafe {
            libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, (self.len.max(1) * std::mem::size_of::<T>()).max(1));
        }
    }
}

pub struct Pool {
    data: MmapArray<[u8; BLOCK]>,
    next: MmapArray<u32>,
    free: Vec<u32>,
    bump: u32,
    nblocks: u32,
}

impl Pool {
    pub fn new(bytes: usize) -> std::io::Result<Pool> {
        let nblocks = (bytes / BLOCK).clamp(64 * BLOCKS_PER_MAX, u32::MAX as usize - 1);
        let data: MmapArray<[u8; BLOCK]> = MmapArray::zeroed(nblocks)?;
        // No MADV_HUGEPAGE: with defrag=madvise a fault may compact memory
        // synchronously (ms stalls), and it brought no measurable gain.
        Ok(Pool {
            data,
            next: MmapArray::zeroed(nblocks)?,
            // capacity reserved up front (virtual until used): no regrowth
            free: Vec::with_capacity(nblocks),
            bump: 0,
            nblocks: nblocks as u32,
        })
    }

    pub fn nblocks(&self) -> u32 {
        self.nblocks
    }

    pub fn bytes(&self) -> usize {
        self.data.bytes()
    }

    #[inline]
    pub fn available(&self) -> usize {
        self.free.len() + (self.nblocks - self.bump) as usize
    }

    #[inline]
    pub fn alloc(&mut self) -> Option<u32> {
        if let Some(b) = self.free.pop() {
            return Some(b);
        }
        if self.bump < self.nblocks {
            self.bump += 1;
            return Some(self.bump - 1);
        }
        None
    }

    #[inline]
    pub fn free(&mut self, b: u32) {
        debug_assert!(b < self.bump);
        self.free.push(b);
    }

    /// Free `n` blocks chained from `first`.
    pub fn free_chain(&mut self, first: u32, n: u32) {
        let mut b = first;
        for i in 0..n {
            let nx = *self.next.get(b as usize);
            self.free(b);
            if i + 1 < n {
                b = nx;
            }
        }
    }

    #[inline]
    pub fn ptr(&self, b: u32) -> *mut u8 {
        assert!(b < self.nblocks);
        // SAFETY: in bounds of the mapping.
        unsafe { self.data.as_ptr().add(b as usize) as *mut u8 }
    }

    #[inline]
    pub fn block(&self, b: u32) -> &[u8; BLOCK] {
        self.data.get(b as usize)
    }

    #[inline]
    pub fn next(&self, b: u32) -> u32 {
        *self.next.get(b as usize)
    }

    #[inline]
    pub fn set_next(&mut self, b: u32, n: u32) {
        *self.next.get_mut(b as usize) = n;
    }

    /// Fill `out` with iovecs covering bytes [start, end) of the chain from
    /// `first`. Returns the number of iovecs used.
    pub fn chain_iov(&self, first: u32, start: usize, end: usize, out: &mut [libc::iovec]) -> usize {
        let mut b = first;
        let mut pos = 0usize; // byte offset of block b
        while pos + BLOCK <= start {
            b = self.next(b);
            pos += BLOCK;
        }
        let mut n = 0;
        let mut cur = start;
        while cur < end {
            let off = cur - pos;
            let take = (BLOCK - off).min(end - cur);
            // SAFETY: off < BLOCK, within block b.
            out[n] = libc::iovec { iov_base: unsafe { self.ptr(b).add(off) } as *mut libc::c_void, iov_len: take };
            n += 1;
            cur += take;
            if cur < end {
                b = self.next(b);
                pos += BLOCK;
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifo_reuse_and_exhaustion() {
        let mut p = Pool::new(0).unwrap();
        let n = p.nblocks();
        let a = p.alloc().unwrap();
        let b = p.alloc().unwrap();
        assert_eq!((a, b), (0, 1));
        p.free(b);
        assert_eq!(p.alloc(), Some(b));
        let mut got = 2;
        while p.alloc().is_some() {
            got += 1;
        }
        assert_eq!(got, n);
        assert_eq!(p.available(), 0);
        p.free(a);
        assert_eq!(p.available(), 1);
    }

    #[test]
    fn chain_and_iov() {
        let mut p = Pool::new(0).unwrap();
        let bl: Vec<u32> = (0..3).map(|_| p.alloc().unwrap()).collect();
        p.set_next(bl[0], bl[2]);
        p.set_next(bl[2], bl[1]);
        for (k, &b) in [bl[0], bl[2], bl[1]].iter().enumerate() {
            // SAFETY: test writes inside one block.
            unsafe { std::ptr::write_bytes(p.ptr(b), k as u8 + 1, BLOCK) };
        }
        let mut iov = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; 4];
        let n = p.chain_iov(bl[0], 1000, 2 * BLOCK + 10, &mut iov);
        assert_eq!(n, 3);
        assert_eq!(iov[0].iov_len, BLOCK - 1000);
        assert_eq!(iov[1].iov_len, BLOCK);
        assert_eq!(iov[2].iov_len, 10);
        // SAFETY: reading back what we wrote.
        unsafe {
            assert_eq!(*(iov[1].iov_base as *const u8), 2);
            assert_eq!(*(iov[2].iov_base as *const u8), 3);
        }
        let before = p.available();
        p.free_chain(bl[0], 3);
        assert_eq!(p.available(), before + 3);
    }
}
