//! The log files of one direction, as the writer thread keeps them: the live file,
//! closed segments, and what to do when the file system refuses a write.
//!
//! A write error (ENOSPC, EIO, ...) is never fatal. The rows of a shipment that reached
//! the file whole stay; a partial last line is cut off again (`set_len`), so every file
//! holds whole rows only; the rows that did not fit are reported lost to the caller,
//! and the next shipment tries again. Nothing here blocks anything but the writer.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Where one direction's log goes: the live file `<stem>.csv` and, once it holds
/// `segment_bytes`, closed segments `<stem>.<seq>.csv` (seq from 1, six digits), the
/// oldest deleted while the closed ones hold more than `keep_bytes`. Every file
/// starts with `header`; the worker ships whole rows, so no row spans two files.
pub struct LogFiles {
    pub dir: PathBuf,
    pub stem: String,
    pub header: &'static str,
    pub segment_bytes: u64,
    pub keep_bytes: u64,
    /// Length of a row's interval: a lost row `t` covers [t, t + interval_ns).
    pub interval_ns: u64,
}

impl LogFiles {
    pub fn live(&self) -> PathBuf {
        self.dir.join(format!("{}.csv", self.stem))
    }

    fn segment(&self, seq: u64) -> PathBuf {
        self.dir.join(format!("{}.{seq:06}.csv", self.stem))
    }

    /// Closed segments left by an earlier emulator in this directory: its live file
    /// is truncated when this one starts, so its segments go too.
    fn remove_stale(&self) -> io::Result<()> {
        let prefix = format!("{}.", self.stem);
        for entry in fs::read_dir(&self.dir)? {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            if let Some(mid) = name.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".csv")) {
                if !mid.is_empty() && mid.bytes().all(|b| b.is_ascii_digit()) {
                    remove_if_present(&self.dir.join(name.as_ref()))?;
                }
            }
        }
        Ok(())
    }
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// What the writer needs from a file system: `Disk` is the real one; the tests use one
/// that fails on demand.
pub trait Fs: Send + 'static {
    type File: Write + Send;
    /// Create (or truncate) a file for writing.
    fn create(&mut self, path: &Path) -> io::Result<Self::File>;
    /// Cut the file to `len` bytes; the next write goes there.
    fn truncate(&mut self, f: &mut Self::File, len: u64) -> io::Result<()>;
    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()>;
    /// Remove a file; one already gone is no error.
    fn remove(&mut self, path: &Path) -> io::Result<()>;
}

pub struct Disk;

impl Fs for Disk {
    type File = File;
    fn create(&mut self, path: &Path) -> io::Result<File> {
        File::create(path)
    }
    fn truncate(&mut self, f: &mut File, len: u64) -> io::Result<()> {
        f.set_len(len)?;
        f.seek(SeekFrom::Start(len)).map(|_| ())
    }
    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }
    fn remove(&mut self, path: &Path) -> io::Result<()> {
        remove_if_present(path)
    }
}

/// Writes as much of `b` as the file takes: the bytes written and the error that
/// stopped it, if any.
fn write_some(f: &mut impl Write, b: &[u8]) -> (usize, Option<io::Error>) {
    let mut n = 0;
    while n < b.len() {
        match f.write(&b[n..]) {
            Ok(0) => return (n, Some(io::Error::new(io::ErrorKind::WriteZero, "wrote nothing"))),
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// A shipment only partly written: `kept` bytes of it (whole rows) are in the file, the
/// rest is lost because of `error`.
#[derive(Debug)]
pub struct Cut {
    pub kept: usize,
    pub error: io::Error,
}

/// The writer thread's side: the live file and the closed segments still on disk.
pub struct Writer<F: Fs> {
    files: LogFiles,
    fs: F,
    /// None: the live file must be (re)created before the next row.
    file: Option<F::File>,
    /// Bytes of the live file known good (whole rows after a whole header; 0: no header yet).
    written: u64,
    /// The live file may hold bytes past `written` (a cut row): cut them before writing.
    dirty: bool,
    seq: u64,
    closed: VecDeque<(PathBuf, u64)>,
}

impl Writer<Disk> {
    pub fn open(files: LogFiles) -> io::Result<Writer<Disk>> {
        Writer::open_on(files, Disk)
    }
}

impl<F: Fs> Writer<F> {
    /// Starting is the one time an error is fatal: a log that cannot even be created
    /// is a configuration error (exit 2), not a passing fault.
    pub fn open_on(files: LogFiles, fs: F) -> io::Result<Writer<F>> {
        files.remove_stale()?;
        let mut w = Writer { files, fs, file: None, written: 0, dirty: false, seq: 0, closed: VecDeque::new() };
        w.ready()?;
        Ok(w)
    }

    pub fn files(&self) -> &LogFiles {
        &self.files
    }

    /// Appends whole rows. On an error the rows that reached the file whole are kept,
    /// a partial last one is cut off (now or before the next write) and the rest is
    /// lost: `Err(Cut)` says how much was kept.
    pub fn write(&mut self, rows: &[u8]) -> Result<(), Cut> {
        self.ready().map_err(|error| Cut { kept: 0, error })?;
        if self.rotation_due(rows.len()) && self.rotate().is_ok() {
            // (a failed rename changes nothing: the rows go on into the live file and
            // the rotation is tried again with the next shipment)
            self.ready().map_err(|error| Cut { kept: 0, error })?;
        }
        let f = self.file.as_mut().expect("ready() opened it");
        let (n, err) = write_some(f, rows);
        let Some(error) = err else {
            self.written += n as u64;
            return Ok(());
        };
        let kept = rows[..n].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.written += kept as u64;
        if kept < n {
            self.dirty = true;
            let _ = self.clean(); // else before the next write
        }
        Err(Cut { kept, error })
    }

    fn rotation_due(&self, more: usize) -> bool {
        let seg = self.files.segment_bytes;
        seg != 0 && self.written > self.files.header.len() as u64 && self.written + more as u64 > seg
    }

    /// A live file that exists, holds no cut row, and starts with the header.
    fn ready(&mut self) -> io::Result<()> {
        if self.file.is_none() {
            self.file = Some(self.fs.create(&self.files.live())?);
            self.written = 0;
            self.dirty = false;
        }
        self.clean()?;
        if self.written == 0 {
            let f = self.file.as_mut().unwrap();
            let (n, err) = write_some(f, self.files.header.as_bytes());
            if let Some(e) = err {
                self.dirty = n > 0;
                return Err(e);
            }
            self.written = n as u64;
        }
        Ok(())
    }

    fn clean(&mut self) -> io::Result<()> {
        if self.dirty {
            self.fs.truncate(self.file.as_mut().unwrap(), self.written)?;
            self.dirty = false;
        }
        Ok(())
    }

    /// The live file becomes the next closed segment (a rename: readers holding it
    /// open keep reading it whole); the next write starts a new live file.
    fn rotate(&mut self) -> io::Result<()> {
        let closed = self.files.segment(self.seq + 1);
        self.fs.rename(&self.files.live(), &closed)?;
        self.seq += 1;
        self.closed.push_back((closed, self.written));
        self.file = None;
        self.written = 0;
        let keep = self.files.keep_bytes;
        while keep != 0 && self.closed.iter().map(|c| c.1).sum::<u64>() > keep {
            let (old, _) = self.closed.front().unwrap();
            if self.fs.remove(old).is_err() {
                break; // tried again at the next rotation
            }
            self.closed.pop_front();
        }
        Ok(())
    }
}

/// Rows of a buffer of whole CSV rows: how many, and the first field (t_ns) of the
/// first and of the last one (None if it does not parse).
pub fn row_span(rows: &[u8]) -> (u64, Option<u64>, Option<u64>) {
    let n = rows.iter().filter(|&&b| b == b'\n').count() as u64;
    if n == 0 {
        return (0, None, None);
    }
    let body = &rows[..rows.iter().rposition(|&b| b == b'\n').unwrap()];
    let last = body.iter().rposition(|&b| b == b'\n').map_or(body, |i| &body[i + 1..]);
    let t = |line: &[u8]| {
        let end = line.iter().position(|&b| b == b',').unwrap_or(line.len());
        std::str::from_utf8(&line[..end]).ok()?.trim().parse::<u64>().ok()
    };
    (n, t(rows), t(last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testfs::FaultFs;

    pub fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("linkem-logfile-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn files(dir: &Path, segment_bytes: u64) -> LogFiles {
        LogFiles {
            dir: dir.into(),
            stem: "linkem-ab".into(),
            header: "t,x\n",
            segment_bytes,
            keep_bytes: 0,
            interval_ns: 1,
        }
    }

    fn rows(r: std::ops::Range<u64>) -> Vec<u8> {
        r.map(|i| format!("{i},xxxxxxxx\n")).collect::<String>().into_bytes()
    }

    #[test]
    fn a_full_disk_keeps_whole_rows_cuts_the_partial_one_and_resumes() {
        let d = scratch("full");
        let fs = FaultFs::default();
        let mut w = Writer::open_on(files(&d, 0), fs.clone()).unwrap();
        w.write(&rows(0..10)).unwrap();
        // room for 2 rows and a half (rows "1x,xxxxxxxx\n" are 12 bytes)
        fs.set(|f| f.room = Some(30));
        let cut = w.write(&rows(10..20)).unwrap_err();
        assert_eq!(cut.kept, 24);
        assert_eq!(cut.error.raw_os_error(), Some(libc::ENOSPC));
        let text = fs::read_to_string(d.join("linkem-ab.csv")).unwrap();
        assert!(text.ends_with("11,xxxxxxxx\n"), "{text}");
        assert!(w.write(&rows(20..30)).is_err()); // still full: nothing kept
        fs.set(|f| f.room = None);
        w.write(&rows(30..40)).unwrap();
        let text = fs::read_to_string(d.join("linkem-ab.csv")).unwrap();
        let got: Vec<u64> = text.lines().skip(1).map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
        assert_eq!(got, (0..12).chain(30..40).collect::<Vec<_>>());
        assert!(text.lines().skip(1).all(|l| l.ends_with(",xxxxxxxx")));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_cut_that_cannot_be_truncated_at_once_is_truncated_before_the_next_rows() {
        let d = scratch("trunc");
        let fs = FaultFs::default();
        let mut w = Writer::open_on(files(&d, 0), fs.clone()).unwrap();
        fs.set(|f| {
            f.room = Some(18);
            f.fail_truncate = true;
        });
        assert_eq!(w.write(&rows(0..5)).unwrap_err().kept, 11);
        fs.set(|f| f.room = None);
        assert_eq!(w.write(&rows(5..6)).unwrap_err().error.raw_os_error(), Some(libc::EIO));
        fs.set(|f| f.fail_truncate = false);
        w.write(&rows(6..8)).unwrap();
        let text = fs::read_to_string(d.join("linkem-ab.csv")).unwrap();
        assert_eq!(text, "t,x\n0,xxxxxxxx\n6,xxxxxxxx\n7,xxxxxxxx\n");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_rotation_is_retried_and_segments_stay_whole() {
        let d = scratch("rot");
        let fs = FaultFs::default();
        let mut w = Writer::open_on(files(&d, 100), fs.clone()).unwrap();
        w.write(&rows(0..6)).unwrap(); // 4 + 66 bytes
        fs.set(|f| f.fail_rename = true);
        w.write(&rows(6..9)).unwrap(); // rotation refused: the rows go to the live file
        fs.set(|f| {
            f.fail_rename = false;
            f.fail_create = true;
        });
        // renamed, but no new live file: these rows are lost
        assert_eq!(w.write(&rows(9..12)).unwrap_err().kept, 0);
        fs.set(|f| f.fail_create = false);
        w.write(&rows(12..14)).unwrap();
        let seg = fs::read_to_string(d.join("linkem-ab.000001.csv")).unwrap();
        let live = fs::read_to_string(d.join("linkem-ab.csv")).unwrap();
        assert_eq!(seg.lines().count(), 10);
        assert_eq!(live, "t,x\n12,xxxxxxxx\n13,xxxxxxxx\n");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn row_span_reads_the_first_and_last_times() {
        assert_eq!(row_span(b"5,a\n6,b\n9,c\n"), (3, Some(5), Some(9)));
        assert_eq!(row_span(b"7,a\n"), (1, Some(7), Some(7)));
        assert_eq!(row_span(b""), (0, None, None));
        assert_eq!(row_span(b"x,a\n"), (1, None, None));
    }
}
