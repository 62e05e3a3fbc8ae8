//! `itb-incgroup CGROUP PROGRAM [ARG...]`: moves itself into the cgroup v2 directory
//! CGROUP, then replaces itself with PROGRAM (looked up in PATH), so the program and
//! every socket it opens belong to the cgroup from its first instruction. ITB's worker
//! starts a `[[command]]` held to a rate profile through it: the cgroup's sock_ops
//! program paces the command's TCP sockets, and a socket is attributed to the cgroup
//! of the process that creates it, so moving the process after it started would race
//! with its first connections.
//!
//! Exit codes (as a shell's): 125 bad arguments, 126 the cgroup could not be entered,
//! 127 the program could not be executed.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{exit, Command};

fn main() {
    let mut args = std::env::args_os().skip(1);
    let (cgroup, program): (OsString, OsString) = match (args.next(), args.next()) {
        (Some(c), Some(p)) => (c, p),
        _ => {
            eprintln!("usage: itb-incgroup CGROUP PROGRAM [ARG...]");
            exit(125);
        }
    };
    let procs = Path::new(&cgroup).join("cgroup.procs");
    // "0" is the writing process itself.
    if let Err(e) = std::fs::write(&procs, b"0\n") {
        eprintln!("itb-incgroup: cannot enter {}: {e}", procs.display());
        exit(126);
    }
    let err = Command::new(&program).args(args).exec();
    eprintln!("itb-incgroup: cannot execute {}: {err}", Path::new(&program).display());
    exit(127);
}
