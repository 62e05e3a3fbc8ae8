//! CSV output off the hot path: the worker formats rows into a memory buffer and
//! ships full buffers to a writer thread (double buffering, no allocation in steady
//! state). Shipping never waits: while the writer is behind (a stalled disk) the rows
//! stay in the worker's buffer, up to `max_backlog` bytes, and beyond that they are
//! dropped and counted. Rows the writer cannot write (a full disk, an I/O error) are
//! counted too; either way the loss is reported (`logloss`) and the emulator goes on.

use crate::logfile::{row_span, Fs, LogFiles, Writer};
use crate::logloss::{Account, Events, LogReport, Span};
use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender, TrySendError};
use std::thread::JoinHandle;

const BUF: usize = 1 << 16;
/// Rows the worker holds while the writer is behind: ~2 min of 1 ms rows.
pub const MAX_BACKLOG: usize = 8 << 20;
/// Why rows dropped by the worker were lost.
pub const BEHIND: &str = "the log writer fell behind (a stalled disk)";

/// Rows for the writer, after `dropped`: the rows the worker had to drop before them.
struct Shipment {
    rows: Vec<u8>,
    dropped: Option<Span>,
}

pub struct LogSink {
    buf: Vec<u8>,
    to_writer: Option<SyncSender<Shipment>>,
    spares: Receiver<Vec<u8>>,
    dropped: Option<Span>,
    pub max_backlog: usize,
}

impl LogSink {
    /// The direction's writer thread, `dir` naming it in events (see `logloss`).
    pub fn spawn(files: LogFiles, dir: &str, events: Events) -> io::Result<(LogSink, JoinHandle<LogReport>)> {
        let w = Writer::open(files)?;
        LogSink::spawn_writer(w, dir, events)
    }

    pub fn spawn_writer<F: Fs>(
        mut w: Writer<F>,
        dir: &str,
        events: Events,
    ) -> io::Result<(LogSink, JoinHandle<LogReport>)> {
        let mut acct = Account::new(dir.to_string(), w.files().interval_ns, events);
        let (tx, rx) = sync_channel::<Shipment>(8);
        let (back_tx, back_rx): (Sender<Vec<u8>>, Receiver<Vec<u8>>) = channel();
        let h = std::thread::Builder::new().name(format!("linkem-log-{dir}")).spawn(move || {
            for mut s in rx {
                if let Some(d) = s.dropped {
                    acct.lost(d, BEHIND);
                }
                match w.write(&s.rows) {
                    Ok(()) => acct.written(row_span(&s.rows).0),
                    Err(cut) => {
                        acct.written(row_span(&s.rows[..cut.kept]).0);
                        if let Some(lost) = Span::of(row_span(&s.rows[cut.kept..])) {
                            acct.lost(lost, &cut.error.to_string());
                        }
                    }
                }
                s.rows.clear();
                let _ = back_tx.send(s.rows);
            }
            acct.finish()
        })?;
        let sink = LogSink {
            buf: Vec::with_capacity(BUF),
            to_writer: Some(tx),
            spares: back_rx,
            dropped: None,
            max_backlog: MAX_BACKLOG,
        };
        Ok((sink, h))
    }

    /// Hand the buffered rows to the writer thread, without waiting.
    pub fn ship(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let Some(tx) = &self.to_writer else { return };
        let spare = self.spares.try_recv().unwrap_or_else(|_| Vec::with_capacity(BUF));
        let rows = std::mem::replace(&mut self.buf, spare);
        match tx.try_send(Shipment { rows, dropped: self.dropped.take() }) {
            Ok(()) => {}
            Err(TrySendError::Full(s)) | Err(TrySendError::Disconnected(s)) => {
                // The writer is behind: keep the rows, in order, for the next try.
                self.dropped = s.dropped;
                let mut rows = s.rows;
                rows.extend_from_slice(&self.buf);
                self.buf = rows;
                if self.buf.len() >= self.max_backlog {
                    if let Some(lost) = Span::of(row_span(&self.buf)) {
                        self.dropped = Some(Span::merge(self.dropped, lost));
                    }
                    self.buf.clear();
                }
            }
        }
    }

    /// Ship what is left (waiting, this once) and let the writer thread finish.
    pub fn close(&mut self) {
        if let Some(tx) = self.to_writer.take() {
            let rows = std::mem::take(&mut self.buf);
            if !rows.is_empty() || self.dropped.is_some() {
                let _ = tx.send(Shipment { rows, dropped: self.dropped.take() });
            }
        }
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
    use crate::testfs::FaultFs;
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("linkem-logsink-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn files(dir: &Path, segment_bytes: u64, keep_bytes: u64) -> LogFiles {
        LogFiles {
            dir: dir.into(),
            stem: "linkem-ab".into(),
            header: "t,x\n",
            segment_bytes,
            keep_bytes,
            interval_ns: 1,
        }
    }

    type Seen = Arc<Mutex<Vec<serde_json::Value>>>;

    fn recorder() -> (Events, Seen) {
        let seen: Seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        (Box::new(move |l: &str| s.lock().unwrap().push(serde_json::from_str(l).unwrap())), seen)
    }

    fn write_rows(f: LogFiles, n: usize) -> LogReport {
        let (mut s, h) = LogSink::spawn(f, "ab", Box::new(|_| {})).unwrap();
        for i in 0..n {
            writeln!(s, "{i},x").unwrap();
            if i % 1000 == 999 {
                s.flush().unwrap();
            }
        }
        s.close();
        h.join().unwrap()
    }

    /// The rows of the live file (and segments before it), as t values; every line whole.
    fn series(d: &Path) -> Vec<u64> {
        let mut names: Vec<String> =
            fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        names.retain(|n| n.starts_with("linkem-ab.") && n != "linkem-ab.csv");
        names.sort();
        names.push("linkem-ab.csv".into());
        let mut out = Vec::new();
        for n in names {
            let text = fs::read_to_string(d.join(&n)).unwrap();
            assert!(text.starts_with("t,x\n") && text.ends_with('\n'), "{n}");
            for l in text.lines().skip(1) {
                let (t, rest) = l.split_once(',').unwrap();
                assert_eq!(rest, "x", "{n}: a cut row: {l}");
                out.push(t.parse().unwrap());
            }
        }
        out
    }

    #[test]
    fn rows_reach_the_file() {
        let d = scratch("one");
        let r = write_rows(files(&d, 0, 0), 10_000);
        assert_eq!(series(&d), (0..10_000).collect::<Vec<_>>());
        assert_eq!((r.log_rows, r.log_rows_lost, r.log_gaps_total), (10_000, 0, 0));
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
        fs::remove_file(d.join("linkem-ab.notes.csv")).unwrap();
        let segs = fs::read_dir(&d).unwrap().count() - 1;
        assert!(segs >= 4);
        for e in fs::read_dir(&d).unwrap() {
            assert!(e.unwrap().metadata().unwrap().len() <= 20_000);
        }
        assert_eq!(series(&d), (0..10_000).collect::<Vec<_>>());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn closed_segments_are_capped() {
        let d = scratch("cap");
        // One shipment of 1000 rows (<= 7 000 bytes) at a time, each written before the
        // next: segments stay within 20 000 bytes, so two or more fit in 40 000.
        let (mut s, h) = LogSink::spawn(files(&d, 20_000, 40_000), "ab", Box::new(|_| {})).unwrap();
        for k in 0..20 {
            for i in k * 1000..(k + 1) * 1000 {
                writeln!(s, "{i},x").unwrap();
            }
            s.flush().unwrap();
            settle(&mut s);
        }
        s.close();
        h.join().unwrap();
        let closed: Vec<u64> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name() != "linkem-ab.csv")
            .map(|e| e.metadata().unwrap().len())
            .collect();
        assert!(
            closed.len() >= 2 && closed.iter().all(|&b| b <= 20_000) && closed.iter().sum::<u64>() <= 40_000,
            "{closed:?}"
        );
        let kept = series(&d);
        assert!(kept[0] > 0 && kept.last() == Some(&19_999));
        assert_eq!(kept, (kept[0]..20_000).collect::<Vec<_>>(), "the newest rows, none missing");
        fs::remove_dir_all(&d).unwrap();
    }

    /// A sink whose writer works on a file system the test can fill or stall, in a fresh
    /// scratch directory: (directory, file system, sink, writer thread, events seen).
    fn on_fault_fs(tag: &str, dir: &str) -> (PathBuf, FaultFs, LogSink, JoinHandle<LogReport>, Seen) {
        let d = scratch(tag);
        let fs = FaultFs::default();
        let w = Writer::open_on(files(&d, 0, 0), fs.clone()).unwrap();
        let (events, seen) = recorder();
        let (s, h) = LogSink::spawn_writer(w, dir, events).unwrap();
        (d, fs, s, h, seen)
    }

    /// Waits until the writer has handled the one shipment sent since the last call
    /// (it hands its buffer back after writing it and reporting what it lost).
    fn settle(s: &mut LogSink) {
        s.spares.recv_timeout(Duration::from_secs(5)).expect("the writer took the rows");
    }

    #[test]
    fn a_full_disk_loses_rows_reports_the_gap_and_the_log_resumes() {
        let (d, fs, mut s, h, seen) = on_fault_fs("full", "ab");
        let ship = |s: &mut LogSink, r: std::ops::Range<u64>| {
            for i in r {
                writeln!(s, "{i},x").unwrap();
            }
            s.flush().unwrap();
            settle(s);
        };
        ship(&mut s, 0..100);
        fs.set(|f| f.room = Some(1000)); // 166 rows of 6 B (100..=265), and 4 B of the next
        ship(&mut s, 100..300);
        assert_eq!(seen.lock().unwrap().len(), 1, "reported while the disk is still full");
        ship(&mut s, 300..400);
        fs.set(|f| f.room = None);
        ship(&mut s, 400..500);
        assert_eq!(seen.lock().unwrap().len(), 2, "the end of the gap reported once rows resume");
        s.close();
        let r = h.join().unwrap();
        let got = series(&d);
        let kept_to = 265;
        let want: Vec<u64> = (0..=kept_to).chain(400..500).collect();
        assert_eq!(got, want, "whole rows, one hole");
        assert!(fs.get(|f| f.refused) > 0);
        assert_eq!(r.log_rows, got.len() as u64);
        assert_eq!(r.log_rows + r.log_rows_lost, 500);
        assert_eq!(r.log_gaps_total, 1);
        let g = &r.log_gaps[0];
        assert_eq!((g.from_ns, g.to_ns, g.rows), (kept_to + 1, 400, 399 - kept_to));
        assert!(g.error.contains("No space left"), "{}", g.error);
        let ev = seen.lock().unwrap();
        assert_eq!(ev[0]["event"], "log_error");
        assert_eq!(ev[0]["from_ns"], kept_to + 1);
        assert_eq!((ev[1]["event"].as_str(), ev[1]["to_ns"].as_u64()), (Some("log_gap"), Some(400)));
        assert_eq!(ev[1]["resumed"], true);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_stalled_writer_never_holds_the_worker_and_what_it_drops_is_counted() {
        let (d, fs, mut s, h, seen) = on_fault_fs("stall", "ab");
        s.max_backlog = 4_000;
        fs.set(|f| f.hold = true);
        let t = Instant::now();
        let mut slowest = Duration::ZERO;
        for k in 0..100u64 {
            for i in k * 100..(k + 1) * 100 {
                writeln!(s, "{i},x").unwrap();
            }
            let t0 = Instant::now();
            s.flush().unwrap();
            slowest = slowest.max(t0.elapsed());
        }
        assert!(slowest < Duration::from_millis(50), "a shipment waited {slowest:?}");
        assert!(t.elapsed() < Duration::from_secs(2));
        fs.set(|f| f.hold = false);
        for i in 10_000..10_100u64 {
            writeln!(s, "{i},x").unwrap();
        }
        s.close();
        let r = h.join().unwrap();
        let got = series(&d);
        assert_eq!(r.log_rows, got.len() as u64);
        assert_eq!(r.log_rows + r.log_rows_lost, 10_100);
        assert!(r.log_rows_lost > 5_000, "{r:?}");
        assert!(got.windows(2).all(|p| p[0] < p[1]) && got.last() == Some(&10_099));
        // every missing row lies in a reported gap
        let missing: Vec<u64> = (0..10_100).filter(|t| got.binary_search(t).is_err()).collect();
        assert!(missing.iter().all(|t| r.log_gaps.iter().any(|g| g.from_ns <= *t && *t < g.to_ns)));
        assert_eq!(r.log_gaps.iter().map(|g| g.rows).sum::<u64>(), r.log_rows_lost);
        assert!(r.log_gaps.iter().all(|g| g.error == BEHIND));
        assert!(seen.lock().unwrap().iter().any(|e| e["event"] == "log_gap"));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_gap_open_at_exit_is_reported_as_not_resumed() {
        let (d, fs, mut s, h, seen) = on_fault_fs("open", "ba");
        writeln!(s, "1,x").unwrap();
        s.flush().unwrap();
        settle(&mut s);
        fs.set(|f| f.room = Some(0));
        writeln!(s, "2,x\n3,x").unwrap();
        s.close();
        let r = h.join().unwrap();
        assert_eq!((r.log_rows, r.log_rows_lost), (1, 2));
        assert_eq!((r.log_gaps[0].from_ns, r.log_gaps[0].to_ns), (2, 4));
        let ev = seen.lock().unwrap();
        assert_eq!(ev.len(), 2);
        assert_eq!((ev[1]["dir"].as_str(), ev[1]["resumed"].as_bool()), (Some("ba"), Some(false)));
        assert_eq!(series(&d), vec![1]);
        fs::remove_dir_all(&d).unwrap();
    }
}
