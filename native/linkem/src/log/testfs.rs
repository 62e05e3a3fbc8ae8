//! For the log's tests: a file system over a real directory whose space, truncation,
//! creation and renames fail on demand, and whose writes can be held (a stalled disk).

use crate::logfile::{Disk, Fs};
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

#[derive(Default)]
pub struct Faults {
    /// Bytes that may still be written (None: no limit); freed by truncation.
    pub room: Option<u64>,
    pub fail_truncate: bool,
    pub fail_create: bool,
    pub fail_rename: bool,
    /// Writes wait while this is set.
    pub hold: bool,
    /// Writes that found the disk full.
    pub refused: u64,
}

#[derive(Clone, Default)]
pub struct FaultFs(pub Arc<(Mutex<Faults>, Condvar)>);

impl FaultFs {
    pub fn set(&self, f: impl FnOnce(&mut Faults)) {
        f(&mut self.0 .0.lock().unwrap());
        self.0 .1.notify_all();
    }
    pub fn get<T>(&self, f: impl FnOnce(&Faults) -> T) -> T {
        f(&self.0 .0.lock().unwrap())
    }
}

fn err(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

pub struct FaultFile {
    file: File,
    len: u64,
    faults: FaultFs,
}

impl Write for FaultFile {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let (lock, cv) = &*self.faults.0;
        let mut g = cv.wait_while(lock.lock().unwrap(), |f| f.hold).unwrap();
        let n = match g.room {
            Some(0) => {
                g.refused += 1;
                return Err(err(libc::ENOSPC));
            }
            Some(r) => (r as usize).min(b.len()),
            None => b.len(),
        };
        let n = self.file.write(&b[..n])?;
        if let Some(r) = g.room.as_mut() {
            *r -= n as u64;
        }
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Fs for FaultFs {
    type File = FaultFile;
    fn create(&mut self, path: &Path) -> io::Result<FaultFile> {
        if self.get(|f| f.fail_create) {
            return Err(err(libc::ENOSPC));
        }
        Ok(FaultFile { file: File::create(path)?, len: 0, faults: self.clone() })
    }
    fn truncate(&mut self, f: &mut FaultFile, len: u64) -> io::Result<()> {
        if self.get(|f| f.fail_truncate) {
            return Err(err(libc::EIO));
        }
        Disk.truncate(&mut f.file, len)?;
        let freed = f.len.saturating_sub(len);
        f.len = len;
        self.set(|s| s.room = s.room.map(|r| r + freed));
        Ok(())
    }
    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        if self.get(|f| f.fail_rename) {
            return Err(err(libc::EIO));
        }
        fs::rename(from, to)
    }
    fn remove(&mut self, path: &Path) -> io::Result<()> {
        Disk.remove(path)
    }
}
