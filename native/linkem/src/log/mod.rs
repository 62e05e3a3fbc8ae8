//! The 1 ms log: its files (bounded, checked), the losses recorded with it, and the
//! sink that writes both.

pub mod logfile;
pub mod logloss;
pub mod logsink;
#[cfg(test)]
pub mod testfs;
