//! How a generator's counters become a [`Stats`] snapshot, and the bookkeeping of discarded
//! indices that the snapshot must agree with (both under the one lock of [`Discards`]).
//!
//! [`Discards`]: super::discards::Discards

use super::shared::{CachedUidGenerator, Shared};
use super::stats::{Stats, StatsSource};
use crate::lock::lock;
use crate::ring::Held;
use crossbeam_utils::CachePadded;
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl CachedUidGenerator {
    /// A snapshot of the generator's state, read from counters it keeps anyway.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// let s = g.stats();
    /// assert!(s.filler_up);
    /// assert!(s.remaining_seconds > 0);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// Why the last attempt to extend the worker lease failed, while extensions fail: the
    /// database's error (its driver's own words are its [`source`](std::error::Error::source)),
    /// or [`Error::LeaseExpired`](crate::Error::LeaseExpired) when another node took the worker
    /// id over. `None` without a lease, and once an extension lands. IDs are still issued up to
    /// [`Stats::lease_until`] meanwhile.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, DatabaseAssigner, Layout};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("w.db"))?; // recycling: a lease
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id_from(&assigner).build()?;
    /// assert!(g.lease_error().is_none()); // extensions land
    /// let s = g.stats();
    /// assert!(s.lease_until.is_some() && !s.lease_lost && s.lease_failing_since.is_none());
    /// assert_eq!(s.lease_extension_failures, 0);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn lease_error(&self) -> Option<crate::Error> {
        self.shared.keeper.as_ref().and_then(|k| k.last_error())
    }
}

impl StatsSource for CachedUidGenerator {
    fn stats(&self) -> Stats {
        self.shared.stats()
    }
}

impl Shared {
    /// Records claimed indices `start..end` that their claimer will never read: lapped.
    pub(super) fn discard(&self, start: u64, end: u64) {
        lock(&self.counters.discards.0).add(start, end);
    }

    /// A failing take's last look at `index` (the first of its claim `index..end` it has not
    /// read): its ID if the filler wrote it after all, else the claim is recorded as discarded
    /// (and a per-thread taker's block, `held`, is given back with it). Both under the lock that
    /// [`stats`](Self::stats) reads under: a snapshot either sees the tail below `index` or the
    /// claim recorded.
    pub(super) fn abandon(&self, index: u64, end: u64, held: Option<&Held>) -> Option<u64> {
        let mut log = lock(&self.counters.discards.0);
        if let Ok((id, _)) = self.ring.read(index) {
            return Some(id);
        }
        log.add(index, end);
        if let Some(held) = held {
            held.clear();
        }
        None
    }

    /// Registers a new per-thread taker's held block (empty).
    pub(super) fn register_taker(&self) -> Arc<CachePadded<Held>> {
        let held = Arc::new(CachePadded::new(Held::default()));
        lock(&self.counters.discards.0)
            .takers
            .push(Arc::clone(&held));
        held
    }

    /// A per-thread taker moves on from its block: `ranges` (claimed indices it will never hand
    /// out) are recorded as discarded, and the block is no longer held, in one step under the
    /// lock. With `retire`, the taker is also unregistered (it is being dropped).
    pub(super) fn give_back(
        &self,
        held: &Arc<CachePadded<Held>>,
        ranges: &[(u64, u64)],
        retire: bool,
    ) {
        let mut log = lock(&self.counters.discards.0);
        for &(start, end) in ranges {
            log.add(start, end);
        }
        held.clear();
        if retire {
            log.takers.retain(|t| !Arc::ptr_eq(t, held));
        }
    }

    /// Claims `n` indices from `at` as discarded if the cursor still stands there, recording them
    /// with the claim; with `expired`, as expired too (a stale sweep: IDs no take claimed before
    /// their second passed), else not (a heal's switch drops the old worker id's IDs).
    pub(super) fn claim_discarded(&self, at: u64, n: u64, expired: bool) -> bool {
        let mut log = lock(&self.counters.discards.0);
        let claimed = self.ring.claim_at(at, n);
        if claimed {
            log.add(at, at + n);
            if expired {
                log.expired += n;
            }
        }
        claimed
    }

    /// Claims every ready ID (from the cursor up to the filler's `tail`) as discarded, as
    /// [`claim_discarded`](Self::claim_discarded) records them: none of them is handed out.
    pub(super) fn discard_ring(&self, tail: u64, expired: bool) {
        loop {
            let c = self.ring.cursor();
            if c >= tail || self.claim_discarded(c, tail - c, expired) {
                break;
            }
        }
    }

    /// See [`CachedUidGenerator::stats`].
    pub(super) fn stats(&self) -> Stats {
        let s = self;
        let c = &s.counters;
        let (cursor, tail, passed, discarded, expired, held) = loop {
            let mut log = lock(&c.discards.0);
            // The cursor first (acquire), then the takers' blocks: a block claimed before the
            // cursor was read is seen held, or its taker is seen publishing it (look again).
            let cursor = s.ring.cursor_acquire();
            // Chunks written but not yet published count as written: takes may have read them.
            let tail = s.ring.written_tail(cursor);
            match log.held_below(cursor.min(tail)) {
                Some(held) => {
                    log.settle(tail);
                    break (cursor, tail, log.passed, log.total, log.expired, held);
                }
                None => {
                    drop(log);
                    std::thread::yield_now();
                }
            }
        };
        let waiting = s.queue.waiting();
        let clock_second = s.clock.now_seconds();
        let now = s.now_delta();
        let lead = s.max_lead.map(|(lead, _)| lead);
        let per_second = s.layout.unit().per_second();
        let last = c.last_delta.load(Ordering::Relaxed).checked_sub(1);
        let head = (cursor < tail)
            .then(|| s.ring.read(cursor).ok())
            .flatten()
            .map(|(id, _)| id >> s.layout.time_shift());
        let used = last.unwrap_or(0).max(now);
        Stats {
            capacity: s.ring.capacity(),
            available: tail.saturating_sub(cursor),
            issued: cursor.min(tail).saturating_sub(passed).saturating_sub(held),
            paddings: c.paddings.load(Ordering::Relaxed),
            discarded,
            expired,
            take_waits: c.take_waits.load(Ordering::Relaxed),
            waiting_takes: waiting.takes,
            waiting_ids: waiting.ids,
            lead_seconds: last.map_or(0, |l| l.saturating_sub(now)) / per_second,
            lag_seconds: head.map_or(0, |h| now.saturating_sub(h)) / per_second,
            lead_millis: (last.map_or(0, |l| l.saturating_sub(now)))
                .saturating_mul(s.layout.unit().millis()),
            lag_millis: (head.map_or(0, |h| now.saturating_sub(h)))
                .saturating_mul(s.layout.unit().millis()),
            remaining_seconds: s.layout.max_delta().saturating_sub(used) / per_second,
            worker_id: s.worker_id.load(Ordering::Acquire),
            heals: c.heals.load(Ordering::Relaxed),
            filler_up: !s.background || c.filler_up.load(Ordering::Relaxed),
            lease_until: s.keeper.as_ref().map(|k| k.horizon()),
            lease_lost: s.keeper.as_ref().is_some_and(|k| k.is_lost()),
            lease_taken_over: s.keeper.as_ref().is_some_and(|k| k.is_taken_over()),
            lease_failing_since: s.keeper.as_ref().and_then(|k| k.failing_since()),
            lease_extension_failures: s.keeper.as_ref().map_or(0, |k| k.failures()),
            lease_lost_writes: s.keeper.as_ref().map_or(0, |k| k.lost_writes()),
            clock_second,
            max_lag_seconds: s.max_lag_secs,
            max_lead_seconds: lead,
            held_until: c
                .held_next
                .load(Ordering::Relaxed)
                .checked_sub(1)
                .map(|next| {
                    s.layout
                        .tick_second(next.saturating_sub(s.max_lead_ticks().unwrap_or(0)))
                }),
            // A take since the filler's last round is demand the round has not seen yet.
            idle_seconds: if cursor == c.cursor_seen.load(Ordering::Relaxed) {
                clock_second
                    .saturating_sub(c.demand_second.load(Ordering::Relaxed))
                    .max(0) as u64
            } else {
                0
            },
            state_file_failing: c.state_capped.load(Ordering::Relaxed),
            clock_skew_millis: s.keeper.as_ref().and_then(|k| k.clock_skew_millis()),
            max_clock_skew_millis: s.keeper.as_ref().and_then(|k| k.max_clock_skew_millis()),
            clock_skewed: s
                .keeper
                .as_ref()
                .is_some_and(|k| k.clock_refusal().is_some()),
            lease_fenced: s.keeper.as_ref().is_some_and(|k| k.is_at_risk()),
        }
    }
}

/// The claims of an async batch at the head of the queue (`take_async`), held while it runs:
/// recorded under the same lock as the discards, so that a snapshot counts them neither as
/// issued nor as ready.
#[cfg(feature = "tokio")]
impl Shared {
    /// Claims `n` indices for a batch at the head of the queue, held (not counted as issued)
    /// until [`settle_batch`](Self::settle_batch): the claim and its record in one step under
    /// the lock that [`stats`](Self::stats) reads under.
    pub(super) fn claim_for_batch(&self, n: u64) -> u64 {
        let mut log = lock(&self.counters.discards.0);
        let first = self.ring.claim(n);
        log.batches.push((first, first + n));
        first
    }

    /// A batch is done with `ranges` of its claims: they are issued (handed out), or with
    /// `discard` recorded as discarded (the batch was given up or failed), in one step.
    pub(super) fn settle_batch(&self, ranges: &[(u64, u64)], discard: bool) {
        let mut log = lock(&self.counters.discards.0);
        for &range in ranges {
            if let Some(at) = log.batches.iter().position(|&r| r == range) {
                log.batches.swap_remove(at);
            }
            if discard {
                log.add(range.0, range.1);
            }
        }
    }

    /// A batch's claim `range` was lapped from `at` on: `at..` is discarded, the rest stays held.
    pub(super) fn split_batch(&self, range: (u64, u64), at: u64) {
        let mut log = lock(&self.counters.discards.0);
        if let Some(r) = log.batches.iter_mut().find(|r| **r == range) {
            r.1 = at;
        }
        log.add(at, range.1);
    }
}

#[cfg(test)]
mod tests {
    use crate::{CachedUidGenerator, Health, Layout, ManualClock};

    /// A take ends idleness at once, not at the filler's next round: `/healthz` right after a
    /// `/id` said "no take for 13 s" when only the round noted takes.
    #[test]
    fn a_take_is_seen_before_the_next_round() {
        let clock = ManualClock::from_seconds(1_800_000_000);
        let g = CachedUidGenerator::builder(Layout::default())
            .worker_id(1)
            .clock(clock.clone())
            .background_filler(false)
            .build()
            .unwrap();
        clock.advance_seconds(13);
        g.pad();
        assert_eq!(
            g.stats().health(g.layout()),
            Health::Idle { idle_seconds: 13 }
        );
        g.next_id().unwrap();
        assert_eq!(g.stats().idle_seconds, 0);
        assert_eq!(g.stats().health(g.layout()), Health::Serving);
        g.pad(); // the round sees the take too
        clock.advance_seconds(4);
        assert_eq!(g.stats().idle_seconds, 4);
    }

    /// An idle generator nobody asks for statistics: each second's unused IDs expire and are
    /// recorded as discarded, a range apart from the last (a take between them), and the
    /// filler folds what lies below the ring's tail into one count as it goes, so the record
    /// stays small however long the process runs (it held one range per second before).
    #[test]
    fn the_discard_record_stays_small_without_stats() {
        let clock = ManualClock::from_seconds(1_800_000_000);
        let g = CachedUidGenerator::builder(Layout::default())
            .worker_id(1)
            .clock(clock.clone())
            .boost_power(0)
            .background_filler(false)
            .build()
            .unwrap();
        for _ in 0..2_000 {
            g.next_id().unwrap();
            clock.advance_seconds(1);
            g.pad();
        }
        let pending = crate::lock::lock(&g.shared.counters.discards.0)
            .pending
            .len();
        assert!(pending <= 2, "{pending} discarded ranges kept");
        let stats = g.stats();
        assert_eq!(stats.issued, 2_000);
        assert!(stats.expired > 1_999 * 1_000, "{stats:?}");
    }
}
