//! The I/O around the model: packet sockets, the frame pool, the worker thread of one
//! direction, and the events printed for the engine.

pub mod events;
pub mod pool;
pub mod sock;
pub mod txstamp;
pub mod worker;
