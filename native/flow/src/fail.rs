//! Errors that end a command, each with the exit code the caller sees.
//! Codes are part of the interface (docs/flow.md): a harness decides from
//! them whether to retry (4), to blame the path (5) or the volume (3).

use std::io;
use std::sync::Mutex;

pub const OTHER: i32 = 1;
pub const USAGE: i32 = 2;
pub const SHORT: i32 = 3;
pub const TIMEOUT: i32 = 4;
pub const RESET: i32 = 5;
pub const INTERRUPTED: i32 = 130;

#[derive(Debug, Clone, PartialEq)]
pub struct Fail {
    pub code: i32,
    pub msg: String,
}

impl Fail {
    pub fn new(code: i32, msg: impl Into<String>) -> Fail {
        Fail { code, msg: msg.into() }
    }

    pub fn usage(msg: impl Into<String>) -> Fail {
        Fail::new(USAGE, msg)
    }

    pub fn other(msg: impl Into<String>) -> Fail {
        Fail::new(OTHER, msg)
    }

    pub fn interrupted() -> Fail {
        Fail::new(INTERRUPTED, "interrupted")
    }

    /// Classify a socket error. `what` names the operation (and stream);
    /// `idle_s` is quoted when a SO_RCVTIMEO/SO_SNDTIMEO expiry is the cause.
    pub fn net(what: &str, e: &io::Error, idle_s: f64) -> Fail {
        match e.raw_os_error().unwrap_or(0) {
            libc::EAGAIN => Fail::new(TIMEOUT, format!("{what}: no progress for {idle_s} s")),
            libc::ECONNREFUSED => Fail::new(TIMEOUT, format!("{what}: connection refused")),
            libc::ETIMEDOUT | libc::EHOSTUNREACH | libc::ENETUNREACH => Fail::new(TIMEOUT, format!("{what}: {e}")),
            libc::ECONNRESET | libc::EPIPE | libc::ECONNABORTED => {
                Fail::new(RESET, format!("{what}: connection reset by peer"))
            }
            _ => Fail::new(OTHER, format!("{what}: {e}")),
        }
    }
}

/// The first failure among the threads of one command wins; recording it wakes
/// every other stream (their blocking calls return) so that the command ends.
#[derive(Default)]
pub struct FirstFail(Mutex<Option<Fail>>);

impl FirstFail {
    pub fn record(&self, f: Fail) {
        let mut g = self.0.lock().unwrap();
        if g.is_none() {
            *g = Some(f);
        }
        drop(g);
        crate::signals::shutdown_all();
    }

    pub fn into_inner(self) -> Option<Fail> {
        self.0.into_inner().unwrap()
    }
}

impl From<String> for Fail {
    fn from(msg: String) -> Fail {
        Fail::other(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_classes() {
        let e = |n| io::Error::from_raw_os_error(n);
        assert_eq!(Fail::net("x", &e(libc::ECONNREFUSED), 1.0).code, TIMEOUT);
        assert_eq!(Fail::net("x", &e(libc::EAGAIN), 1.0).code, TIMEOUT);
        assert_eq!(Fail::net("x", &e(libc::ECONNRESET), 1.0).code, RESET);
        assert_eq!(Fail::net("x", &e(libc::EPIPE), 1.0).code, RESET);
        assert_eq!(Fail::net("x", &e(libc::EBADF), 1.0).code, OTHER);
        assert!(Fail::net("stream 2", &e(libc::EAGAIN), 7.5).msg.contains("7.5 s"));
    }
}
