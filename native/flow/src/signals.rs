//! SIGINT/SIGTERM and the registry of live sockets.
//!
//! The signals are blocked in every thread and taken by one waiter thread,
//! which sets INTERRUPTED and shuts down every registered socket: blocked
//! reads and writes then return at once and the command's own error path
//! writes the summary ("interrupted", exit 130). The same registry lets the
//! rate-control thread reach every stream, and lets a failing command wake
//! its other threads. A socket is unregistered before it is closed, so a
//! recycled descriptor number is never touched.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static LIVE: Mutex<Vec<RawFd>> = Mutex::new(Vec::new());

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Acquire)
}

/// Block SIGINT/SIGTERM (inherited by threads spawned later) and start the
/// waiter thread. Call first thing in main.
pub fn install() {
    // SAFETY: sigset manipulation on a local set.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    let _ = std::thread::Builder::new().name("flow-signals".into()).spawn(move || {
        let mut sig = 0;
        // SAFETY: set is a valid sigset; sig receives the number.
        while unsafe { libc::sigwait(&set, &mut sig) } != 0 {}
        INTERRUPTED.store(true, Ordering::Release);
        shutdown_all();
    });
}

pub fn register(fd: RawFd) {
    LIVE.lock().unwrap().push(fd);
}

pub fn unregister(fd: RawFd) {
    LIVE.lock().unwrap().retain(|&f| f != fd);
}

pub fn unregister_all() {
    LIVE.lock().unwrap().clear();
}

/// Apply f to every live socket, holding the lock so none is closed meanwhile.
pub fn for_each(mut f: impl FnMut(RawFd)) {
    for &fd in LIVE.lock().unwrap().iter() {
        f(fd);
    }
}

/// Wake every thread blocked on a live socket.
pub fn shutdown_all() {
    // SAFETY: registered descriptors are open (unregistered before close).
    for_each(|fd| unsafe {
        libc::shutdown(fd, libc::SHUT_RDWR);
    });
}
