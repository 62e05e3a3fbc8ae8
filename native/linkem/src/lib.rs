//! linkem as a library: the link model (`model`, I/O-free, under an injected clock), the
//! I/O around it (`io`), its logs (`log`) and its configuration; `main.rs` is the
//! program (docs/linkem.md). The modules are also re-exported flat (`linkem::droptail`),
//! the paths the model's stages use among themselves.

pub mod config;
pub mod io;
pub mod log;
pub mod model;

pub use io::events::emit;
pub use io::{pool, sock, txstamp, worker};
#[cfg(test)]
pub use log::testfs;
pub use log::{logfile, logloss, logsink};
pub use model::{chunk, delay, deperr, droptail, gso, loss, monitor, pairs, pipeline, queue, serialiser};
