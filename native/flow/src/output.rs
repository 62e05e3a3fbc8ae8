//! CSV logs and the summary JSON.

use crate::fail::Fail;
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub type Csv = BufWriter<File>;

pub const GOODPUT_HEADER: &str = "t_ns,bytes,streams_open\n";
pub const PINGPONG_HEADER: &str = "msg,t_send_ns,t_recv_ns\n";
pub const UDP_HEADER: &str = "t_ns,bytes,datagrams\n";

/// Create a CSV log and write its header. Done before any traffic, so a bad
/// path fails the command before it has touched the network.
pub fn create_csv(path: &Path, header: &str) -> Result<Csv, Fail> {
    let f = File::create(path).map_err(|e| Fail::other(format!("cannot create {}: {e}", path.display())))?;
    let mut w = BufWriter::with_capacity(1 << 16, f);
    w.write_all(header.as_bytes()).map_err(|e| Fail::other(format!("writing {}: {e}", path.display())))?;
    Ok(w)
}

pub fn finish_csv(mut w: Csv, path: &Path) -> Result<(), Fail> {
    w.flush().map_err(|e| Fail::other(format!("writing {}: {e}", path.display())))
}

/// The CPU time this process used (getrusage(RUSAGE_SELF): all its threads, user and
/// kernel time charged to it; softirq work the kernel does for its sockets on other
/// contexts is not included).
#[derive(Serialize, Debug, Clone, Copy, Default)]
pub struct CpuTime {
    pub user_s: f64,
    pub system_s: f64,
}

pub fn cpu_time() -> Option<CpuTime> {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(CpuTime { user_s: secs(ru.ru_utime), system_s: secs(ru.ru_stime) })
}

/// Tell the caller we are listening. A caller that does not read stdout
/// (closed or gone) is not an error.
pub fn ready() {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "ready").and_then(|_| out.flush());
}

/// Rows of the receivers' logs: three integers.
pub fn write_row3(w: &mut impl Write, a: u64, b: u64, c: u64) -> io::Result<()> {
    writeln!(w, "{a},{b},{c}")
}

/// The format of every summary (its fields by role: summary-format.json, which ITB's
/// reader holds to the same number).
pub const SUMMARY_FORMAT: u64 = 1;

/// The summary as written: its fields, and `format` first.
pub fn summary_value<T: Serialize>(v: &T) -> Result<serde_json::Value, Fail> {
    let fields = serde_json::to_value(v).map_err(|e| Fail::other(format!("summary: {e}")))?;
    let mut out = serde_json::Map::new();
    out.insert("format".into(), SUMMARY_FORMAT.into());
    if let serde_json::Value::Object(m) = fields {
        out.extend(m);
    }
    Ok(serde_json::Value::Object(out))
}

/// The fields of a role's summary in summary-format.json (tests).
#[cfg(test)]
pub fn summary_fields(role: &str) -> (u64, Vec<String>) {
    let spec: serde_json::Value = serde_json::from_str(include_str!("../summary-format.json")).unwrap();
    let fields = spec[role].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect();
    (spec["format"].as_u64().unwrap(), fields)
}

/// Holds a summary's fields (every optional one present) to summary-format.json (tests).
#[cfg(test)]
pub fn assert_summary_fields<T: Serialize>(role: &str, v: &T) {
    let (format, want) = summary_fields(role);
    assert_eq!(format, SUMMARY_FORMAT, "summary-format.json's format is not flow's");
    let got: Vec<String> = summary_value(v).unwrap().as_object().unwrap().keys().cloned().collect();
    let mut got_sorted = got.clone();
    got_sorted.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(got_sorted, want_sorted, "the {role} summary's fields differ from summary-format.json");
}

/// Write the summary to a temporary name in the same directory, then rename
/// it into place, so a reader never sees half a file.
pub fn write_summary<T: Serialize>(path: &Path, v: &T) -> Result<(), Fail> {
    let value = summary_value(v)?;
    let text = serde_json::to_string_pretty(&value).map_err(|e| Fail::other(format!("summary: {e}")))? + "\n";
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp.{}", std::process::id()));
    let tmp = Path::new(&tmp);
    let res = std::fs::write(tmp, text).and_then(|_| std::fs::rename(tmp, path));
    res.map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        Fail::other(format!("cannot write {}: {e}", path.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_atomic_summary() {
        let mut v = Vec::new();
        write_row3(&mut v, 1_000_000_123, 65536, 4).unwrap();
        assert_eq!(v, b"1000000123,65536,4\n");

        let dir = std::env::temp_dir().join(format!("flow-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("s.json");
        write_summary(&p, &serde_json::json!({"ok": true, "bytes": 5})).unwrap();
        let back: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(back["bytes"], 5);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "temporary file left behind");
        let c = dir.join("g.csv");
        let mut w = create_csv(&c, GOODPUT_HEADER).unwrap();
        write_row3(&mut w, 1, 2, 3).unwrap();
        finish_csv(w, &c).unwrap();
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "t_ns,bytes,streams_open\n1,2,3\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
