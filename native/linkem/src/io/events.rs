//! linkem's events: JSON lines on stdout, read by the engine (docs/linkem.md).

use std::sync::Mutex;

/// Print one JSON event line on stdout, unbuffered (ignored if stdout is gone or its
/// disk is full). A line cut by a failed write is ended before the next event, so the
/// next one still starts a line of its own.
pub fn emit(line: &str) {
    static CUT: Mutex<bool> = Mutex::new(false);
    let mut cut = CUT.lock().unwrap_or_else(|e| e.into_inner());
    let mut buf = Vec::with_capacity(line.len() + 2);
    if *cut {
        buf.push(b'\n');
    }
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    let mut n = 0;
    while n < buf.len() {
        // SAFETY: writing initialised bytes of a live buffer to fd 1.
        let r = unsafe { libc::write(1, buf[n..].as_ptr() as *const libc::c_void, buf.len() - n) };
        if r > 0 {
            n += r as usize;
        } else if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        } else {
            break;
        }
    }
    if n > 0 {
        *cut = n < buf.len();
    }
}
