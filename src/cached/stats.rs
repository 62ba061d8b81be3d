//! What a generator can tell about itself: [`Stats`], read from counters it keeps anyway.

use super::Shared;
use std::sync::atomic::Ordering;
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
pub struct Stats {
    /// Slots in the ring.
    pub capacity: u64,
    /// IDs ready to take: the fill level.
    pub available: u64,
    /// IDs handed out so far.
    pub issued: u64,
    /// Filler rounds that wrote at least one ID.
    pub paddings: u64,
    /// IDs discarded unused: stale (older than `max_lag`) or abandoned by a failed take.
    pub discarded: u64,
    /// Takes that found the ring empty and had to wait.
    pub take_waits: u64,
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

impl Shared {
    /// See [`CachedUidGenerator::stats`].
    pub(super) fn stats(&self) -> Stats {
        let s = self;
        let c = &s.counters;
        let cursor = s.ring.cursor();
        let tail = s.ring.tail();
        let now = s.now_delta();
        let discarded = c.discarded.load(Ordering::Relaxed);
        let last = c.last_delta.load(Ordering::Relaxed).checked_sub(1);
        let head = (cursor < tail)
            .then(|| s.ring.read(cursor).ok())
            .flatten()
            .map(|(id, _)| id >> s.layout.time_shift());
        let used = last.unwrap_or(0).max(now);
        Stats {
            capacity: s.ring.capacity(),
            available: tail.saturating_sub(cursor),
            issued: cursor.min(tail).saturating_sub(discarded),
            paddings: c.paddings.load(Ordering::Relaxed),
            discarded,
            take_waits: c.take_waits.load(Ordering::Relaxed),
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
