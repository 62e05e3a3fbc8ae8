//! The seam between the link and its queue discipline.
//!
//! A discipline decides which frames enter the link's queue and keeps what it needs to
//! decide (limits, counts, an average); the `Serialiser` it owns computes when each
//! accepted frame leaves. Because a FIFO's departure order is its arrival order, a
//! frame's dequeue is known when it is enqueued: `enqueue` returns the dequeue time (the
//! end of its serialisation). A discipline that drops at dequeue (CoDel) decides then,
//! with the sojourn time the frame will have had, and does not serialise what it drops.
//! A new discipline is one file implementing this trait; `DropTail` is the reference.

use crate::serialiser::Serialiser;

pub trait Queue {
    /// Would `nseg` frames totalling `bytes`, arriving at t, all be accepted?
    fn fits(&mut self, t: u64, bytes: u64, nseg: u64) -> bool;

    /// Accept one frame of `wire` bytes at t without asking (`fits` said yes for the
    /// unit it belongs to): its dequeue time.
    fn admit(&mut self, t: u64, wire: u32) -> u64;

    /// Offer one frame of `wire` bytes arriving at t: its dequeue time (when it has left
    /// the link), or None if the discipline drops it.
    #[inline]
    fn enqueue(&mut self, t: u64, wire: u32) -> Option<u64> {
        if self.fits(t, wire as u64, 1) {
            Some(self.admit(t, wire))
        } else {
            None
        }
    }

    /// Bytes accepted and not yet serialised at t.
    fn bytes(&self, t: u64) -> u64 {
        self.link().backlog_bytes(t)
    }

    /// Frames accepted at or before t that have not started to serialise.
    fn packets(&mut self, t: u64) -> u64;

    /// The link that serialises what the queue accepts.
    fn link(&self) -> &Serialiser;

    /// New limits for frames arriving from now on (null: no limit of that kind).
    fn set_limits(&mut self, queue_bytes: Option<u64>, queue_packets: Option<u64>);

    /// New rate for frames arriving from now on.
    fn set_rate(&mut self, rate_bps: Option<u64>);
}
