//! The ring indices claimed but never handed out, kept apart from those issued.

use crate::ring::Held;
use crossbeam_utils::CachePadded;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The ring indices claimed that will never be handed out: swept stale, lapped, or abandoned by
/// a failed take. Written only off the per-ID path (by the filler's sweep, and by takes that
/// give up), so a lock costs takes nothing.
///
/// [`Stats::issued`](crate::Stats::issued) is the claimed indices below the tail minus the discarded ones among them.
/// A failed take leaves its claim beyond the tail, where it is not counted as issued yet: it is
/// kept apart (`pending`) until the tail passes it, and only then subtracted. Every discard is
/// recorded under the lock together with the decision that makes it (the claim of a sweep, the
/// last look of a failing take), and [`Shared::stats`](super::shared::Shared::stats) reads the cursor and the tail under the
/// same lock: no snapshot can count an index as issued that is later recorded as discarded (but
/// for a lapped take, which finds its index long below the tail).
#[derive(Debug, Default)]
pub(super) struct Discards(pub(super) Mutex<DiscardLog>);

#[derive(Debug, Default)]
pub(super) struct DiscardLog {
    /// The held blocks of the live per-thread takers: claimed indices not counted as issued
    /// until their taker moves on. Registered and removed under this lock, with the discards of
    /// what the taker gives back.
    pub(super) takers: Vec<Arc<CachePadded<Held>>>,
    /// The claims of the batches taking their turn at the head of the queue (async batches):
    /// claimed indices not counted as issued until the batch completes (then they are) or is
    /// given up (then they are discarded). Claimed and recorded under this lock.
    pub(super) batches: Vec<(u64, u64)>,
    /// Discarded ranges `start..end` not yet known to be below the tail, by start.
    pub(super) pending: BTreeMap<u64, u64>,
    /// Discarded indices below the tail (as of the last settle).
    pub(super) passed: u64,
    /// Every discarded index: `passed` plus the pending ones.
    pub(super) total: u64,
    /// Of `total`, the indices the stale sweeps claimed (expired unused).
    pub(super) expired: u64,
}

impl DiscardLog {
    /// Records indices `start..end`, merging with a range that ends where it starts.
    pub(super) fn add(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        self.total += end - start;
        let mut start = start;
        if let Some((&s, &e)) = self.pending.range(..start).next_back()
            && e == start
        {
            self.pending.remove(&s);
            start = s;
        }
        let end = match self.pending.remove(&end) {
            Some(e) => e,
            None => end,
        };
        self.pending.insert(start, end);
    }

    /// How many indices below `limit` the live takers hold, or `None` if a taker is publishing
    /// a new block right now (look again).
    pub(super) fn held_below(&self, limit: u64) -> Option<u64> {
        let mut held = 0;
        for taker in &self.takers {
            let (start, end) = taker.read()?;
            held += end.min(limit).saturating_sub(start);
        }
        for &(start, end) in &self.batches {
            held += end.min(limit).saturating_sub(start);
        }
        Some(held)
    }

    /// Moves what is below `tail` from `pending` to `passed`.
    pub(super) fn settle(&mut self, tail: u64) {
        while let Some((&start, &end)) = self.pending.first_key_value() {
            if start >= tail {
                break;
            }
            self.pending.remove(&start);
            self.passed += end.min(tail) - start;
            if end > tail {
                self.pending.insert(tail, end);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::DiscardLog;

    #[test]
    fn ranges_merge_and_settle_at_the_tail() {
        let mut log = DiscardLog::default();
        for i in 100..110 {
            log.add(i, i + 1);
        }
        log.add(120, 130);
        log.add(110, 120); // joins both neighbours
        assert_eq!(log.pending.len(), 1);
        assert_eq!(log.total, 30);
        log.settle(100);
        assert_eq!(log.passed, 0);
        log.settle(115);
        assert_eq!((log.passed, log.pending.len()), (15, 1));
        log.add(50, 60); // below the tail: passed at the next settle
        log.settle(115);
        assert_eq!(log.passed, 25);
        log.settle(1_000);
        assert_eq!((log.passed, log.total), (40, 40));
        assert!(log.pending.is_empty());
        log.add(5, 5); // empty: nothing
        assert_eq!(log.total, 40);
    }
}
