//! CSV output off the hot path: the worker formats rows into a memory
//! buffer and ships full buffers to a writer thread (double buffering, no
//! allocation in steady state), so file-system stalls never delay packets.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

const BUF: usize = 1 << 16;

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

/// The writer thread's side: the live file and the closed segments still on disk.
struct Writer {
    files: LogFiles,
    file: File,
    written: u64,
    seq: u64,
    closed: VecDeque<(PathBuf, u64)>,
}

impl Writer {
    fn open(files: LogFiles) -> io::Result<Writer> {
        files.remove_stale()?;
        let mut file = File::create(files.live())?;
        file.write_all(files.header.as_bytes())?;
        Ok(Writer { written: files.header.len() as u64, files, file, seq: 0, closed: VecDeque::new() })
    }

    fn write(&mut self, rows: &[u8]) -> io::Result<()> {
        let seg = self.files.segment_bytes;
        if seg != 0 && self.written > self.files.header.len() as u64 && self.written + rows.len() as u64 > seg {
            self.rotate()?;
        }
        self.file.write_all(rows)?;
        self.file.flush()?;
        self.written += rows.len() as u64;
        Ok(())
    }

    /// The live file becomes the next closed segment (a rename: readers holding it
    /// open keep reading it whole) and a new live file starts.
    fn rotate(&mut self) -> io::Result<()> {
        self.seq += 1;
        let closed = self.files.segment(self.seq);
        fs::rename(self.files.live(), &closed)?;
        self.closed.push_back((closed, self.written));
        self.file = File::create(self.files.live())?;
        self.file.write_all(self.files.header.as_bytes())?;
        self.written = self.files.header.len() as u64;
        let keep = self.files.keep_bytes;
        while keep != 0 && self.closed.iter().map(|c| c.1).sum::<u64>() > keep {
            let (old, _) = self.closed.pop_front().unwrap();
            remove_if_present(&old)?; // a reader may have taken it already
        }
        Ok(())
    }
}

pub struct LogSink {
    buf: Vec<u8>,
    to_writer: Option<SyncSender<Vec<u8>>>,
    spares: Receiver<Vec<u8>>,
}

impl LogSink {
    pub fn spawn(files: LogFiles, name: String) -> io::Result<(LogSink, JoinHandle<io::Result<()>>)> {
        let mut w = Writer::open(files)?;
        let (tx, rx) = sync_channel::<Vec<u8>>(8);
        let (back_tx, back_rx): (Sender<Vec<u8>>, Receiver<Vec<u8>>) = channel();
        let h = std::thread::Builder::new().name(name).spawn(move || {
            for mut v in rx {
                w.write(&v)?;
                v.clear();
                let _ = back_tx.send(v);
            }
            Ok(())
        })?;
        Ok((LogSink { buf: Vec::with_capacity(BUF), to_writer: Some(tx), spares: back_rx }, h))
    }

    /// Hand the buffered rows to the writer thread.
    pub fn ship(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let spare = self.spares.try_recv().unwrap_or_else(|_| Vec::with_capacity(BUF));
        let full = std::mem::replace(&mut self.buf, spare);
        if let Some(tx) = &self.to_writer {
            // Blocks only if the writer is 8 buffers behind.
            let _ = tx.send(full);
        }
    }

    /// Ship what is left and let the writer thread finish.
    pub fn close(&mut self) {
        self.ship();
        self.to_writer = None;
    }
}

impl Write for LogSink {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.ship();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("linkem-logfile-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn files(dir: &Path, segment_bytes: u64, keep_bytes: u64) -> LogFiles {
        LogFiles { dir: dir.to_path_buf(), stem: "linkem-ab".into(), header: "t,x\n", segment_bytes, keep_bytes }
    }

    fn write_rows(f: LogFiles, n: usize) {
        let (mut s, h) = LogSink::spawn(f, "t".into()).unwrap();
        for i in 0..n {
            writeln!(s, "{i},x").unwrap();
            if i % 1000 == 999 {
                s.flush().unwrap();
            }
        }
        s.close();
        h.join().unwrap().unwrap();
    }

    #[test]
    fn rows_reach_the_file() {
        let d = scratch("one");
        write_rows(files(&d, 0, 0), 10_000);
        let text = fs::read_to_string(d.join("linkem-ab.csv")).unwrap();
        assert_eq!(text.lines().count(), 10_001);
        assert_eq!(text.lines().next(), Some("t,x"));
        assert_eq!(text.lines().last(), Some("9999,x"));
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn segments_hold_whole_rows_in_order_and_the_oldest_go() {
        let d = scratch("seg");
        // Up to 7 000 bytes per 1000-row shipment: segments of 20 000 bytes hold two or
        // three. A stale segment would fail the header check below.
        fs::write(d.join("linkem-ab.000002.csv"), "stale").unwrap();
        fs::write(d.join("linkem-ab.notes.csv"), "not ours").unwrap();
        write_rows(files(&d, 20_000, 0), 10_000);
        let mut names: Vec<String> =
            fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        names.sort();
        assert!(names.contains(&"linkem-ab.notes.csv".to_string()));
        let mut segs: Vec<&String> = names.iter().filter(|n| n.len() == "linkem-ab.000001.csv".len()).collect();
        segs.sort();
        segs.push(&names[names.iter().position(|n| n == "linkem-ab.csv").unwrap()]);
        let mut all = Vec::new();
        for n in &segs {
            let text = fs::read_to_string(d.join(n)).unwrap();
            assert_eq!(text.lines().next(), Some("t,x"), "{n}");
            assert!(text.len() as u64 <= 20_000, "{n}");
            all.extend(text.lines().skip(1).map(|l| l.to_string()));
        }
        assert!(segs.len() >= 4);
        assert_eq!(all, (0..10_000).map(|i| format!("{i},x")).collect::<Vec<_>>());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn closed_segments_are_capped() {
        let d = scratch("cap");
        write_rows(files(&d, 20_000, 40_000), 20_000);
        let closed: Vec<u64> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name() != "linkem-ab.csv")
            .map(|e| e.metadata().unwrap().len())
            .collect();
        assert!(closed.len() == 2 && closed.iter().sum::<u64>() <= 40_000, "{closed:?}");
        let live = fs::read_to_string(d.join("linkem-ab.csv")).unwrap();
        assert_eq!(live.lines().last(), Some("19999,x"));
        fs::remove_dir_all(&d).unwrap();
    }
}
