//! Delay stage: one FIFO per delay class, merged by earliest release time.
//!
//! Items of one class leave in FIFO order (like a wire: no reordering within
//! a flow); classes with different extra delays may overtake each other.

use std::collections::VecDeque;

#[derive(Debug)]
pub struct DelayLine<T> {
    classes: Vec<VecDeque<(u64, T)>>,
    len: usize,
}

impl<T> DelayLine<T> {
    pub fn new(nclasses: usize, cap: usize) -> Self {
        let classes = (0..nclasses.max(1)).map(|_| VecDeque::with_capacity(cap)).collect();
        DelayLine { classes, len: 0 }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn push(&mut self, class: usize, release: u64, item: T) {
        self.classes[class].push_back((release, item));
        self.len += 1;
    }

    /// (class, release time) of the item that leaves next.
    #[inline]
    pub fn peek(&self) -> Option<(usize, u64)> {
        if self.classes.len() == 1 {
            return self.classes[0].front().map(|&(r, _)| (0, r));
        }
        let mut best: Option<(usize, u64)> = None;
        for (i, q) in self.classes.iter().enumerate() {
            if let Some(&(r, _)) = q.front() {
                if best.is_none_or(|(_, b)| r < b) {
                    best = Some((i, r));
                }
            }
        }
        best
    }

    pub fn next_release(&self) -> Option<u64> {
        self.peek().map(|(_, r)| r)
    }

    /// Pop the next item if its release time is <= now.
    #[inline]
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, T)> {
        let (c, r) = self.peek()?;
        if r > now {
            return None;
        }
        self.len -= 1;
        self.classes[c].pop_front()
    }

    #[cfg(test)]
    pub fn pop_any(&mut self) -> Option<(u64, T)> {
        self.pop_due(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_by_release_time_and_keeps_fifo_per_class() {
        let mut d = DelayLine::new(3, 4);
        d.push(0, 100, "a0");
        d.push(1, 50, "b0");
        d.push(0, 120, "a1");
        d.push(2, 110, "c0");
        d.push(1, 60, "b1");
        // FIFO inside a class even if a later item has an earlier time
        d.push(2, 105, "c1");
        assert_eq!(d.len(), 6);
        assert_eq!(d.next_release(), Some(50));
        assert!(d.pop_due(49).is_none());
        let mut out = vec![];
        while let Some((r, x)) = d.pop_due(1000) {
            out.push((r, x));
        }
        assert_eq!(out, vec![(50, "b0"), (60, "b1"), (100, "a0"), (110, "c0"), (105, "c1"), (120, "a1")]);
        assert!(d.is_empty());
        assert_eq!(d.next_release(), None);
    }

    #[test]
    fn pop_due_respects_now() {
        let mut d = DelayLine::new(1, 0);
        d.push(0, 10, 1);
        d.push(0, 20, 2);
        assert_eq!(d.pop_due(15), Some((10, 1)));
        assert_eq!(d.pop_due(15), None);
        assert_eq!(d.pop_any(), Some((20, 2)));
    }
}
