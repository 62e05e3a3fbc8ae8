//! CSV output off the hot path: the worker formats rows into a memory
//! buffer and ships full buffers to a writer thread (double buffering, no
//! allocation in steady state), so file-system stalls never delay packets.

use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

const BUF: usize = 1 << 16;

pub struct LogSink {
    buf: Vec<u8>,
    to_writer: Option<SyncSender<Vec<u8>>>,
    spares: Receiver<Vec<u8>>,
}

impl LogSink {
    pub fn spawn(mut file: File, name: String) -> io::Result<(LogSink, JoinHandle<io::Result<()>>)> {
        let (tx, rx) = sync_channel::<Vec<u8>>(8);
        let (back_tx, back_rx): (Sender<Vec<u8>>, Receiver<Vec<u8>>) = channel();
        let h = std::thread::Builder::new().name(name).spawn(move || {
            for mut v in rx {
                file.write_all(&v)?;
                file.flush()?;
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

    #[test]
    fn rows_reach_the_file() {
        let path = std::env::temp_dir().join(format!("linkem-logfile-{}.csv", std::process::id()));
        let f = File::create(&path).unwrap();
        let (mut s, h) = LogSink::spawn(f, "t".into()).unwrap();
        for i in 0..10_000 {
            writeln!(s, "{i},x").unwrap();
            if i % 1000 == 0 {
                s.flush().unwrap();
            }
        }
        s.close();
        h.join().unwrap().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 10_000);
        assert_eq!(text.lines().last(), Some("9999,x"));
        std::fs::remove_file(&path).unwrap();
    }
}
