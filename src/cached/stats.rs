//! What a generator can tell about itself: [`Stats`], read from counters it keeps anyway.

use super::{Shared, lock};
use crate::ring::Held;
use crossbeam_utils::CachePadded;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The shortest time between two records by a filler thread given a sink with
/// [`CachedBuilder::record_stats`](crate::CachedBuilder::record_stats): under load it refills
/// thousands of times a second, and records after at most ten of them.
///
/// ```
/// assert_eq!(ringflake::FILLER_RECORD_INTERVAL, std::time::Duration::from_millis(100));
/// ```
pub const FILLER_RECORD_INTERVAL: Duration = Duration::from_millis(100);

/// Receives a generator's [`Stats`] from its filler thread; see
/// [`CachedBuilder::record_stats`](crate::CachedBuilder::record_stats). Implemented by
/// [`GeneratorMetrics`](crate::GeneratorMetrics) (feature `metrics`).
///
/// ```
/// use ringflake::{CachedUidGenerator, Layout, Stats, StatsSink};
/// use std::sync::{Arc, Mutex};
///
/// #[derive(Clone, Default)]
/// struct Last(Arc<Mutex<Option<Stats>>>);
/// impl StatsSink for Last {
///     fn record(&self, stats: &Stats) {
///         *self.0.lock().unwrap() = Some(*stats);
///     }
/// }
/// let last = Last::default();
/// let g = CachedUidGenerator::builder(Layout::default()).worker_id(2).record_stats(last.clone()).build()?;
/// drop(g); // the filler records once more as it ends
/// let seen = last.0.lock().unwrap().expect("recorded");
/// assert_eq!(seen.worker_id, 2);
/// assert!(!seen.filler_up);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub trait StatsSink: Send + Sync + 'static {
    /// Takes one snapshot; called from the filler thread, never from a take.
    fn record(&self, stats: &Stats);
}

/// Anything that can tell its [`Stats`]: what a [`MetricsReporter`](crate::MetricsReporter)
/// samples. Implemented by [`CachedUidGenerator`](crate::CachedUidGenerator).
///
/// ```
/// use ringflake::{CachedUidGenerator, Layout, StatsSource};
///
/// fn fill_level(source: &dyn StatsSource) -> u64 {
///     source.stats().available
/// }
/// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
/// assert!(fill_level(&g) > 0);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub trait StatsSource: Send + Sync + 'static {
    /// A snapshot of the generator's state.
    fn stats(&self) -> Stats;
}

impl StatsSource for crate::CachedUidGenerator {
    fn stats(&self) -> Stats {
        self.shared.stats()
    }
}

/// Introspection of a [`CachedUidGenerator`](crate::CachedUidGenerator), read from counters it keeps anyway: no cost to takes.
///
/// ```
/// use ringflake::{CachedUidGenerator, Layout};
///
/// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
/// g.next_id()?;
/// let s = g.stats();
/// assert_eq!(s.capacity, 1 << 25); // 2^22 IDs a second << boost power 3
/// assert_eq!(s.issued, 1);
/// assert!(s.available <= s.capacity);
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Slots in the ring.
    pub capacity: u64,
    /// IDs ready to take: the fill level.
    pub available: u64,
    /// IDs handed out so far: exactly what takes returned (a batch that fails counts the IDs it
    /// wrote to its buffer). Never decreases, also while takes fail (a failed take's claim counts
    /// as discarded, not issued), with one exception: a take whose thread was descheduled while
    /// the whole ring was taken (lapped) lowers it by one, once.
    ///
    /// A [`LocalTaker`](crate::LocalTaker)'s IDs are counted a block at a time, when it moves on
    /// from its block (claims the next one, gives it back stale, or is dropped): while takers
    /// are live it may lag behind what they handed out by up to one block each, and it is exact
    /// once every taker is dropped.
    pub issued: u64,
    /// Filler rounds that wrote at least one ID.
    pub paddings: u64,
    /// IDs discarded unused: stale (older than `max_lag`), or claimed by a take that failed or
    /// was lapped and never handed out (counted when the take gives up, even before the filler
    /// has written the IDs it claimed), or left in a [`LocalTaker`](crate::LocalTaker)'s block
    /// when it went stale or the taker was dropped.
    pub discarded: u64,
    /// Takes that found the ring empty and had to wait.
    pub take_waits: u64,
    /// Takes waiting in the queue right now (batches, async takes, and takes that arrived
    /// while others waited), served first come, first served.
    pub waiting_takes: u64,
    /// IDs those takes still wait for: the queue ahead of a take that arrives now. At the lead
    /// cap, `2^seq_bits` of them become ready per second.
    pub waiting_ids: u64,
    /// How many seconds the newest ID in the ring is ahead of the clock (0 if not ahead).
    pub lead_seconds: u64,
    /// How many seconds the oldest ready ID is behind the clock (0 if none is behind).
    pub lag_seconds: u64,
    /// Seconds until the time bits run out, counting borrowed seconds as used.
    pub remaining_seconds: u64,
    /// This generator's worker id.
    pub worker_id: u64,
    /// Whether the filler thread is running (always `true` without a background filler).
    pub filler_up: bool,
    /// The worker lease's horizon (last unix second it allows), if the worker id is leased.
    pub lease_until: Option<i64>,
    /// Whether the last attempt to extend the lease failed.
    pub lease_lost: bool,
}

/// The ring indices claimed that will never be handed out: swept stale, lapped, or abandoned by
/// a failed take. Written only off the per-ID path (by the filler's sweep, and by takes that
/// give up), so a lock costs takes nothing.
///
/// [`Stats::issued`] is the claimed indices below the tail minus the discarded ones among them.
/// A failed take leaves its claim beyond the tail, where it is not counted as issued yet: it is
/// kept apart (`pending`) until the tail passes it, and only then subtracted. Every discard is
/// recorded under the lock together with the decision that makes it (the claim of a sweep, the
/// last look of a failing take), and [`Shared::stats`] reads the cursor and the tail under the
/// same lock: no snapshot can count an index as issued that is later recorded as discarded (but
/// for a lapped take, which finds its index long below the tail).
#[derive(Debug, Default)]
pub(super) struct Discards(Mutex<DiscardLog>);

#[derive(Debug, Default)]
struct DiscardLog {
    /// The held blocks of the live per-thread takers: claimed indices not counted as issued
    /// until their taker moves on. Registered and removed under this lock, with the discards of
    /// what the taker gives back.
    takers: Vec<Arc<CachePadded<Held>>>,
    /// The claims of the batches taking their turn at the head of the queue (async batches):
    /// claimed indices not counted as issued until the batch completes (then they are) or is
    /// given up (then they are discarded). Claimed and recorded under this lock.
    batches: Vec<(u64, u64)>,
    /// Discarded ranges `start..end` not yet known to be below the tail, by start.
    pending: BTreeMap<u64, u64>,
    /// Discarded indices below the tail (as of the last settle).
    passed: u64,
    /// Every discarded index: `passed` plus the pending ones.
    total: u64,
}

impl DiscardLog {
    /// Records indices `start..end`, merging with a range that ends where it starts.
    fn add(&mut self, start: u64, end: u64) {
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
    fn held_below(&self, limit: u64) -> Option<u64> {
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
    fn settle(&mut self, tail: u64) {
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

    /// Claims `n` indices for a batch at the head of the queue, held (not counted as issued)
    /// until [`settle_batch`](Self::settle_batch): the claim and its record in one step under
    /// the lock that [`stats`](Self::stats) reads under.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(super) fn claim_for_batch(&self, n: u64) -> u64 {
        let mut log = lock(&self.counters.discards.0);
        let first = self.ring.claim(n);
        log.batches.push((first, first + n));
        first
    }

    /// A batch is done with `ranges` of its claims: they are issued (handed out), or with
    /// `discard` recorded as discarded (the batch was given up, failed or lapped), in one step.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
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
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(super) fn split_batch(&self, range: (u64, u64), at: u64) {
        let mut log = lock(&self.counters.discards.0);
        if let Some(r) = log.batches.iter_mut().find(|r| **r == range) {
            r.1 = at;
        }
        log.add(at, range.1);
    }

    /// Claims `n` indices from `at` as discarded (the filler's stale sweep) if the cursor still
    /// stands there, recording them with the claim.
    pub(super) fn claim_discarded(&self, at: u64, n: u64) -> bool {
        let mut log = lock(&self.counters.discards.0);
        let claimed = self.ring.claim_at(at, n);
        if claimed {
            log.add(at, at + n);
        }
        claimed
    }

    /// See [`CachedUidGenerator::stats`].
    pub(super) fn stats(&self) -> Stats {
        let s = self;
        let c = &s.counters;
        let (cursor, tail, passed, discarded, held) = loop {
            let mut log = lock(&c.discards.0);
            // The cursor first (acquire), then the takers' blocks: a block claimed before the
            // cursor was read is seen held, or its taker is seen publishing it (look again).
            let cursor = s.ring.cursor_acquire();
            let tail = s.ring.tail();
            match log.held_below(cursor.min(tail)) {
                Some(held) => {
                    log.settle(tail);
                    break (cursor, tail, log.passed, log.total, held);
                }
                None => {
                    drop(log);
                    std::thread::yield_now();
                }
            }
        };
        let waiting = s.queue.waiting();
        let now = s.now_delta();
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
            take_waits: c.take_waits.load(Ordering::Relaxed),
            waiting_takes: waiting.takes,
            waiting_ids: waiting.ids,
            lead_seconds: last.map_or(0, |l| l.saturating_sub(now)),
            lag_seconds: head.map_or(0, |h| now.saturating_sub(h)),
            remaining_seconds: s.layout.max_delta_seconds().saturating_sub(used),
            worker_id: s.worker_id,
            filler_up: !s.background || c.filler_up.load(Ordering::Relaxed),
            lease_until: s.keeper.as_ref().map(|k| k.horizon()),
            lease_lost: s.keeper.as_ref().is_some_and(|k| k.is_lost()),
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
