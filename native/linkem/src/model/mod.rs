//! The link model: I/O-free stages under an injected clock (rate, delay, loss, the
//! segmentation of GSO super-frames, the pipeline that joins them, the monitor of its
//! queue), tested with simulated time.

pub mod chunk;
pub mod delay;
pub mod deperr;
pub mod droptail;
pub mod gso;
pub mod loss;
pub mod monitor;
pub mod pairs;
pub mod pipeline;
pub mod queue;
pub mod serialiser;
