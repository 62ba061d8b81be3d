//! What a generator can tell about itself: [`Stats`], read from counters it keeps anyway, and the
//! [`Health`] they show. (How the counters become a snapshot is in `snapshot`.)

use crate::Layout;
use std::fmt;
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
    /// This generator's worker id: the one it serves with now (a generator that healed after
    /// losing its lease for good has a new one).
    pub worker_id: u64,
    /// Times this generator took a new worker id by itself after losing its lease for good
    /// (its row taken over by another node, or gone); see
    /// [`WorkerIdAssigner::retaker`](crate::WorkerIdAssigner::retaker).
    pub heals: u64,
    /// Whether the filler thread is running (always `true` without a background filler).
    pub filler_up: bool,
    /// The worker lease's horizon (last unix second it allows), if the worker id is leased.
    /// While extensions fail, IDs are still issued up to it: the lease is at risk, not lost,
    /// until the clock passes it.
    pub lease_until: Option<i64>,
    /// Whether the last attempt to extend the lease failed (the error is
    /// [`CachedUidGenerator::lease_error`](crate::CachedUidGenerator::lease_error)).
    pub lease_lost: bool,
    /// Whether the last attempt failed because another node took the worker id over: the lease
    /// cannot come back, the generator stops at `lease_until` for good.
    pub lease_taken_over: bool,
    /// The unix second extensions began to fail, while they fail (`None` once one lands).
    pub lease_failing_since: Option<i64>,
    /// Attempts to extend the lease that failed since the generator started (0 without a lease).
    pub lease_extension_failures: u64,
}

/// Whether a generator can hand out IDs, judged from its [`Stats`] by [`Stats::health`]: what
/// `ringflake serve`'s `/healthz`, `/status` and status page show.
///
/// More states may be told apart in later versions (`#[non_exhaustive]`): match with a `_` arm,
/// or ask [`is_available`](Self::is_available). [`Display`](fmt::Display) writes the state for a
/// person: `serving`, or why the generator cannot serve.
///
/// ```
/// use ringflake::{CachedUidGenerator, Health, Layout};
///
/// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
/// let health = g.stats().health(g.layout());
/// assert_eq!(health, Health::Serving);
/// assert!(health.is_available());
/// assert_eq!(health.to_string(), "serving");
///
/// let lost = Health::LeaseLost { worker_id: 7, until: Some(1_800_000_000) };
/// assert!(!lost.is_available());
/// assert_eq!(
///     lost.to_string(),
///     "lease lost: the worker lease of worker id 7 could not be extended; IDs stop at unix second 1800000000"
/// );
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Health {
    /// It can hand out IDs.
    Serving,
    /// The filler thread has stopped: the ring is not refilled ([`Stats::filler_up`] is false).
    FillerDown,
    /// The layout's time bits ran out ([`Stats::remaining_seconds`] is 0).
    LifetimeExhausted {
        /// The last unix second the layout can encode.
        last_valid_second: i64,
    },
    /// The last attempt to extend the worker lease failed ([`Stats::lease_lost`]).
    LeaseLost {
        /// The leased worker id.
        worker_id: u64,
        /// The lease's horizon, the last unix second IDs may carry, if known.
        until: Option<i64>,
    },
}

impl Health {
    /// Whether the generator can hand out IDs in this state.
    ///
    /// ```
    /// use ringflake::Health;
    /// assert!(Health::Serving.is_available());
    /// assert!(!Health::FillerDown.is_available());
    /// ```
    pub fn is_available(&self) -> bool {
        matches!(self, Health::Serving)
    }
}

impl fmt::Display for Health {
    /// `serving`, or the reason the generator cannot serve.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Health::Serving => f.write_str("serving"),
            Health::FillerDown => {
                f.write_str("filler down: the thread that fills the ring has stopped")
            }
            Health::LifetimeExhausted { last_valid_second } => write!(
                f,
                "lifetime exhausted: the layout's time bits ran out (last valid second {})",
                crate::clock::rfc3339(last_valid_second)
            ),
            Health::LeaseLost { worker_id, until } => {
                write!(
                    f,
                    "lease lost: the worker lease of worker id {worker_id} could not be extended"
                )?;
                match until {
                    Some(u) => write!(f, "; IDs stop at unix second {u}"),
                    None => Ok(()),
                }
            }
        }
    }
}

impl Stats {
    /// What these stats say about whether the generator can serve, for a generator of `layout`
    /// (which dates the end of its time bits). The first of these that applies: the filler is
    /// down, the time bits ran out, the lease was lost; else [`Health::Serving`].
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Health, Layout};
    ///
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(3).build()?;
    /// assert_eq!(g.stats().health(g.layout()), Health::Serving);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn health(&self, layout: &Layout) -> Health {
        if !self.filler_up {
            Health::FillerDown
        } else if self.remaining_seconds == 0 {
            Health::LifetimeExhausted {
                last_valid_second: layout.last_valid_second(),
            }
        } else if self.lease_lost {
            Health::LeaseLost {
                worker_id: self.worker_id,
                until: self.lease_until,
            }
        } else {
            Health::Serving
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasons `ringflake serve` gave before the judgement moved here, word for word.
    #[test]
    fn health_reasons() {
        let layout = Layout::default();
        let healthy = Stats {
            capacity: 1 << 24,
            available: 1 << 22,
            issued: 0,
            paddings: 1,
            discarded: 0,
            take_waits: 0,
            waiting_takes: 0,
            waiting_ids: 0,
            lead_seconds: 0,
            lag_seconds: 0,
            remaining_seconds: 1_000,
            worker_id: 4,
            heals: 0,
            filler_up: true,
            lease_until: Some(1_800_000_300),
            lease_lost: false,
            lease_taken_over: false,
            lease_failing_since: None,
            lease_extension_failures: 0,
        };
        assert_eq!(healthy.health(&layout), Health::Serving);
        let mut down = healthy;
        down.filler_up = false;
        assert_eq!(down.health(&layout), Health::FillerDown);
        assert_eq!(
            down.health(&layout).to_string(),
            "filler down: the thread that fills the ring has stopped"
        );
        let mut exhausted = healthy;
        exhausted.remaining_seconds = 0;
        let reason = exhausted.health(&layout).to_string();
        assert_eq!(
            reason,
            format!(
                "lifetime exhausted: the layout's time bits ran out (last valid second {})",
                layout.last_valid_date()
            )
        );
        let mut lost = healthy;
        lost.lease_lost = true;
        let reason = lost.health(&layout).to_string();
        assert!(reason.starts_with("lease lost"), "{reason}");
        assert!(
            reason.contains("worker id 4") && reason.contains("1800000300"),
            "{reason}"
        );
        lost.lease_until = None;
        assert_eq!(
            lost.health(&layout).to_string(),
            "lease lost: the worker lease of worker id 4 could not be extended"
        );
        // The first that applies wins.
        down.remaining_seconds = 0;
        down.lease_lost = true;
        assert_eq!(down.health(&layout), Health::FillerDown);
    }
}
