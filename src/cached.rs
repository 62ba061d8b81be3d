//! `CachedUidGenerator`: a background filler borrows future seconds to pre-generate IDs into a
//! [ring](crate::ring), and any number of threads take them with one atomic read-modify-write each.
//!
//! Borrowing future seconds is Baidu UidGenerator's `BufferPaddingExecutor`, and what RFC 9562
//! §6.2 calls "increment the timestamp ahead of the actual time" to keep IDs unique and ordered
//! when more are wanted in one time unit than the layout holds. The filler follows five time rules
//! that fix the Java defects listed in the crate docs:
//!
//! 1. The next second it uses is `max(last + 1, now)`: no lag when load is low; borrowing only
//!    while demand exceeds `2^seq_bits` IDs a second.
//! 2. When the ring fills in the middle of a second, the rest of that second is kept for the next
//!    round (unless the clock has moved past it by then).
//! 3. IDs that have waited longer than `max_lag` are discarded by the filler's sweep.
//! 4. The lead over the clock can be capped (`max_lead`), waiting or failing at the cap.
//! 5. When the time bits run out, takes fail with [`Error::TimeBitsExhausted`].

use crate::ring::{Miss, Ring};
use crate::worker::lease::Keeper;
use crate::{Assignment, Clock, Error, Layout, SystemClock, WorkerIdAssigner};
use crossbeam_utils::{Backoff, CachePadded};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

/// What to do when the filler reaches the `max_lead` cap and the ring runs dry.
///
/// ```
/// use ringflake::LeadPolicy;
/// assert_ne!(LeadPolicy::Wait, LeadPolicy::Fail);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeadPolicy {
    /// Takes wait until the clock catches up: about a second at most, unless the clock was set
    /// back, in which case they wait until it is past the cap again.
    Wait,
    /// Takes fail with [`Error::LeadLimitReached`].
    Fail,
}

/// Introspection of a [`CachedUidGenerator`], read from counters it keeps anyway: no cost to takes.
///
/// ```
/// use ringflake::{CachedUidGenerator, Layout};
///
/// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
/// g.next_id()?;
/// let s = g.stats();
/// assert_eq!(s.capacity, 65_536);
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

/// Settings for a [`CachedUidGenerator`]; see [`CachedUidGenerator::builder`].
///
/// ```
/// use ringflake::{CachedUidGenerator, Layout};
///
/// // A ring of 2^13 << 2 slots, refilled when less than 30% of it is left.
/// let ids = CachedUidGenerator::builder(Layout::default())
///     .worker_id(7)
///     .boost_power(2)
///     .padding_factor(30)
///     .build()?;
/// assert_eq!(ids.worker_id(), 7);
/// assert_eq!(ids.stats().capacity, 8192 << 2);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct CachedBuilder {
    layout: Layout,
    assignment: Result<Assignment, Error>,
    clock: Arc<dyn Clock>,
    boost_power: u32,
    padding_factor: u32,
    schedule_interval: Duration,
    max_lag: Duration,
    max_lead: Option<(Duration, LeadPolicy)>,
    background: bool,
    #[cfg(feature = "metrics")]
    metrics: Option<crate::metrics::GeneratorMetrics>,
}

impl std::fmt::Debug for CachedBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedBuilder")
            .field("layout", &self.layout)
            .field("assignment", &self.assignment)
            .field("boost_power", &self.boost_power)
            .field("padding_factor", &self.padding_factor)
            .field("max_lag", &self.max_lag)
            .field("max_lead", &self.max_lead)
            .finish_non_exhaustive()
    }
}

/// The largest ring: 2^28 IDs.
const MAX_RING_BITS: u32 = 28;

/// The largest chunk: 2^10 consecutive IDs per ring slot.
const CHUNK_BITS: u32 = 10;

impl CachedBuilder {
    /// Uses worker id `id` (checked against the layout at [`build`](Self::build)).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(9).build()?;
    /// assert_eq!(g.worker_id(), 9);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn worker_id(mut self, id: u64) -> Self {
        self.assignment = Ok(Assignment::fixed(id));
        self
    }

    /// Asks `assigner` for the worker id now; its error, if any, is returned by `build`.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, FixedWorkerId, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id_from(&FixedWorkerId(3))
    ///     .build()?;
    /// assert_eq!(g.worker_id(), 3);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn worker_id_from(mut self, assigner: &dyn WorkerIdAssigner) -> Self {
        self.assignment = assigner.assign(&self.layout);
        self
    }

    /// Reads time from `clock` instead of the system clock.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, ManualClock};
    /// let clock = ManualClock::from_seconds(1_800_000_000);
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).clock(clock).build()?;
    /// let parsed = Layout::default().parse(g.next_id()?)?;
    /// assert_eq!(parsed.unix_seconds, 1_800_000_000);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The ring holds `2^seq_bits << boost_power` IDs (default 3: eight seconds' worth).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).boost_power(1).build()?;
    /// assert_eq!(g.stats().capacity, 16_384);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn boost_power(mut self, boost_power: u32) -> Self {
        self.boost_power = boost_power;
        self
    }

    /// The filler is woken when the fill level drops below this percentage (0 to 100, default 50).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let err = CachedUidGenerator::builder(Layout::default()).worker_id(1).padding_factor(101).build();
    /// assert!(err.unwrap_err().to_string().contains("padding_factor 101"));
    /// ```
    pub fn padding_factor(mut self, percent: u32) -> Self {
        self.padding_factor = percent;
        self
    }

    /// How often the filler wakes on its own to top up the ring and sweep stale IDs (default
    /// 250 ms; never longer than a quarter of `max_lag`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id(1)
    ///     .schedule_interval(Duration::from_millis(100))
    ///     .build()?;
    /// assert!(g.next_id()? > 0);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn schedule_interval(mut self, interval: Duration) -> Self {
        self.schedule_interval = interval;
        self
    }

    /// IDs that waited in the ring longer than this are discarded, never handed out (default
    /// 5 s, at least 1 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let err = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id(1)
    ///     .max_lag(Duration::from_millis(10))
    ///     .build();
    /// assert!(err.is_err());
    /// ```
    pub fn max_lag(mut self, max_lag: Duration) -> Self {
        self.max_lag = max_lag;
        self
    }

    /// Caps how far ahead of the clock the filler may borrow (default: no cap, like Java).
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringflake::{CachedUidGenerator, Layout, LeadPolicy};
    /// let g = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id(1)
    ///     .max_lead(Duration::from_secs(60), LeadPolicy::Wait)
    ///     .build()?;
    /// assert!(g.stats().lead_seconds <= 60);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn max_lead(mut self, max_lead: Duration, policy: LeadPolicy) -> Self {
        self.max_lead = Some((max_lead, policy));
        self
    }

    /// Has the filler thread record `series` itself: after each of its rounds (a refill woken by a
    /// take at the threshold, or its `schedule_interval` tick), at most once per
    /// [`FILLER_RECORD_INTERVAL`](crate::FILLER_RECORD_INTERVAL), and once more as its thread
    /// ends, with `ringflake_filler_up` 0, even when it ends by a panic. Scrapes then see the
    /// fill level as of the filler's last round, with no reporter thread; a
    /// [`MetricsReporter`](crate::MetricsReporter) is still the way to sample on a fixed interval
    /// and to report `ringflake_worker_ids_remaining`. Nothing is recorded by takes, and nothing
    /// without a background filler. Feature `metrics`.
    ///
    /// ```
    /// use metrics_exporter_prometheus::PrometheusBuilder;
    /// use ringflake::{CachedUidGenerator, GeneratorMetrics, Layout};
    ///
    /// let recorder = PrometheusBuilder::new().build_recorder();
    /// let series = metrics::with_local_recorder(&recorder, || GeneratorMetrics::register("orders"));
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(4).metrics(series).build()?;
    /// drop(g); // the filler records as it stops
    /// let text = recorder.handle().render();
    /// assert!(text.contains(r#"ringflake_worker_id{generator="orders"} 4"#));
    /// assert!(text.contains(r#"ringflake_filler_up{generator="orders"} 0"#));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[cfg(feature = "metrics")]
    pub fn metrics(mut self, series: crate::metrics::GeneratorMetrics) -> Self {
        self.metrics = Some(series);
        self
    }

    /// Whether a background thread fills the ring (default `true`). Without one, a take that
    /// finds the ring empty fills it itself: deterministic, for tests with a manual clock.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id(1)
    ///     .background_filler(false)
    ///     .build()?;
    /// let a = g.next_id()?;
    /// assert!(g.next_id()? > a);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn background_filler(mut self, background: bool) -> Self {
        self.background = background;
        self
    }

    /// Checks the settings, fills the ring once and starts the filler.
    ///
    /// # Errors
    ///
    /// [`Error::TimeBitsExhausted`] if the layout has no seconds left at the clock's time (e.g.
    /// [`Layout::uid_generator_defaults`] after 2024-11-20), [`Error::WorkerIdOutOfRange`], an
    /// assigner's error, or [`Error::InvalidConfig`] naming the setting and its range.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let err = CachedUidGenerator::builder(Layout::uid_generator_defaults())
    ///     .worker_id(1)
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("2024-11-20T13:24:15Z"));
    /// ```
    pub fn build(self) -> Result<CachedUidGenerator, Error> {
        let layout = self.layout;
        let assignment = self.assignment?;
        let worker_id = crate::worker::check_fits(assignment.worker_id, &layout)?;
        layout.check_alive_at(self.clock.now_seconds())?;
        // Seconds of this boot start after the assignment's floor (monotonic restarts).
        let floor = assignment.not_before.map_or(0, |s| {
            s.saturating_add(1)
                .saturating_sub(layout.epoch_seconds())
                .max(0) as u64
        });
        if layout.seq_bits() + self.boost_power > MAX_RING_BITS {
            return Err(Error::InvalidConfig {
                name: "boost_power",
                value: u64::from(self.boost_power),
                allowed: "such that seq_bits + boost_power <= 28",
            });
        }
        if self.padding_factor > 100 {
            return Err(Error::InvalidConfig {
                name: "padding_factor",
                value: u64::from(self.padding_factor),
                allowed: "0..=100 percent",
            });
        }
        if self.max_lag < Duration::from_secs(1) {
            return Err(Error::InvalidConfig {
                name: "max_lag (ms)",
                value: self.max_lag.as_millis() as u64,
                allowed: "at least 1000 ms",
            });
        }
        if self.schedule_interval.is_zero() {
            return Err(Error::InvalidConfig {
                name: "schedule_interval (ms)",
                value: 0,
                allowed: "at least 1 ms",
            });
        }
        let capacity = 1u64 << (layout.seq_bits() + self.boost_power);
        // Chunks of up to 1024 IDs, and at least two chunks in the ring.
        let chunk_bits = layout
            .seq_bits()
            .min(CHUNK_BITS)
            .min(layout.seq_bits() + self.boost_power - 1);
        let shared = Arc::new(Shared {
            id: NEXT_GENERATOR_ID.fetch_add(1, Ordering::Relaxed),
            ring: Ring::new(capacity, chunk_bits),
            layout,
            worker_id,
            clock: Arc::clone(&self.clock),
            threshold: capacity * u64::from(self.padding_factor) / 100,
            max_lag_secs: self.max_lag.as_secs(),
            max_lead: self.max_lead.map(|(d, p)| (d.as_secs(), p)),
            tick: self.schedule_interval.min(self.max_lag / 4),
            background: self.background,
            filler: Mutex::new(FillerState {
                next_delta: floor,
                next_seq: 0,
                tail: 0,
            }),
            #[cfg(feature = "tokio")]
            async_waiters: std::sync::atomic::AtomicUsize::new(0),
            #[cfg(feature = "tokio")]
            notify: tokio::sync::Notify::new(),
            keeper: match assignment.lease {
                Some(lease) => Some(Keeper::start(lease, Arc::clone(&self.clock))?),
                None => None,
            },
            counters: CachePadded::new(Counters::default()),
            filler_thread: OnceLock::new(),
            #[cfg(feature = "metrics")]
            metrics: self.metrics,
        });
        shared.pump();
        let handle = if self.background {
            let s = Arc::clone(&shared);
            shared.counters.filler_up.store(true, Ordering::SeqCst);
            let handle = std::thread::Builder::new()
                .name("ringflake-filler".into())
                .spawn(move || filler_loop(&s))
                .map_err(|e| {
                    shared.counters.filler_up.store(false, Ordering::SeqCst);
                    Error::WorkerAssignment(format!("cannot start the filler thread: {e}"))
                })?;
            let _ = shared.filler_thread.set(handle.thread().clone());
            Some(handle)
        } else {
            None
        };
        Ok(CachedUidGenerator { shared, handle })
    }
}

/// Counters written off the per-ID path (by the filler, or by takes that had to wait).
#[derive(Default)]
struct Counters {
    paddings: AtomicU64,
    discarded: AtomicU64,
    take_waits: AtomicU64,
    /// The delta of the newest ID written, plus one (0: none yet).
    last_delta: AtomicU64,
    exhausted: AtomicBool,
    lead_capped: AtomicBool,
    lease_capped: AtomicBool,
    shutdown: AtomicBool,
    filler_up: AtomicBool,
}

/// The filler's position: the next (second, sequence) to write and the next ring index.
struct FillerState {
    next_delta: u64,
    next_seq: u64,
    tail: u64,
}

struct Shared {
    /// Unique in the process, for the per-thread chunk cache.
    id: u64,
    ring: Ring,
    layout: Layout,
    worker_id: u64,
    clock: Arc<dyn Clock>,
    threshold: u64,
    max_lag_secs: u64,
    max_lead: Option<(u64, LeadPolicy)>,
    tick: Duration,
    background: bool,
    filler: Mutex<FillerState>,
    counters: CachePadded<Counters>,
    filler_thread: OnceLock<Thread>,
    /// Keeps the worker lease extended, if the assignment has one; releases it when dropped.
    keeper: Option<Keeper>,
    /// Async takes waiting for the filler, and how they are woken.
    #[cfg(feature = "tokio")]
    async_waiters: std::sync::atomic::AtomicUsize,
    #[cfg(feature = "tokio")]
    notify: tokio::sync::Notify,
    /// Series the filler records after its rounds.
    #[cfg(feature = "metrics")]
    metrics: Option<crate::metrics::GeneratorMetrics>,
}

/// Why a filler round stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    /// The ring is full.
    Full,
    /// The lead cap is reached: wait for the next second.
    LeadCapped,
    /// The time bits are used up.
    Exhausted,
    /// The worker lease's horizon is reached: wait for its extension.
    LeaseCapped,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding these locks leaves consistent data (plain counters), so poisoning is
    // not a reason to stop issuing IDs.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// The clock as seconds since the epoch (0 before the epoch).
    fn now_delta(&self) -> u64 {
        let now = self.clock.now_seconds();
        now.saturating_sub(self.layout.epoch_seconds()).max(0) as u64
    }

    fn wake_filler(&self) {
        if let Some(t) = self.filler_thread.get() {
            t.unpark();
        }
    }

    /// One filler round: sweep stale IDs, then fill the ring up to full, the lead cap, or the end
    /// of the time bits.
    fn pump(&self) -> Round {
        let mut st = lock(&self.filler);
        let now = self.now_delta();
        self.sweep_stale(&st, now);
        // Rule 1 (and the tail of rule 2): never start below the clock.
        if st.next_delta < now {
            st.next_delta = now;
            st.next_seq = 0;
        }
        let cap = self.ring.capacity();
        let k = self.ring.chunk();
        let max_delta = self.layout.max_delta_seconds();
        let max_seq = self.layout.max_sequence();
        // Rule 6: the one chunk whose first taker wakes us, where the fill level crosses the
        // threshold.
        let wake_at = (self.ring.cursor() + cap - self.threshold).max(st.tail) / k;
        let mut wrote = false;
        let outcome = 'round: loop {
            if st.next_delta > max_delta {
                // Rule 5: no ID beyond the time bits, ever.
                self.counters.exhausted.store(true, Ordering::Release);
                break Round::Exhausted;
            }
            if let Some((lead, _)) = self.max_lead
                && st.next_delta > now.saturating_add(lead)
            {
                self.counters.lead_capped.store(true, Ordering::Release);
                break Round::LeadCapped;
            }
            self.counters.lead_capped.store(false, Ordering::Relaxed);
            if let Some(keeper) = &self.keeper {
                let horizon = keeper.horizon().saturating_sub(self.layout.epoch_seconds());
                if st.next_delta as i64 > horizon {
                    self.counters.lease_capped.store(true, Ordering::Release);
                    keeper.request_extension();
                    break Round::LeaseCapped;
                }
                keeper.note_used(self.layout.epoch_seconds() + st.next_delta as i64);
            }
            self.counters.lease_capped.store(false, Ordering::Relaxed);
            while st.next_seq <= max_seq {
                let chunk = st.tail / k;
                let base =
                    self.layout
                        .compose_unchecked(st.next_delta, self.worker_id, st.next_seq);
                if !self.ring.put(chunk, base, chunk == wake_at) {
                    // Rule 2: keep the rest of this second for the next round.
                    break 'round Round::Full;
                }
                wrote = true;
                st.tail += k;
                st.next_seq += k;
                self.counters
                    .last_delta
                    .store(st.next_delta + 1, Ordering::Relaxed);
            }
            self.ring.publish_tail(st.tail);
            st.next_delta += 1;
            st.next_seq = 0;
        };
        self.ring.publish_tail(st.tail);
        if wrote {
            self.counters.paddings.fetch_add(1, Ordering::Relaxed);
        }
        drop(st);
        // Async takes look again only when there is something new: IDs, or a final answer.
        if wrote || self.failure().is_some() {
            self.notify_async_waiters();
        }
        outcome
    }

    /// Rule 3: claims and drops ready IDs older than `max_lag`. Runs at least every `tick`, which
    /// is at most a quarter of `max_lag`, so an ID is never taken more than `max_lag` seconds
    /// after its own second.
    fn sweep_stale(&self, st: &FillerState, now: u64) {
        // Keep IDs of second >= now + 1 - max_lag: until the next sweep (< 1 s away) the clock
        // stays below now + 1, so their lag stays <= max_lag.
        let Some(min_ok) = (now + 1).checked_sub(self.max_lag_secs) else {
            return;
        };
        let shift = self.layout.time_shift();
        let k = self.ring.chunk();
        loop {
            let c = self.ring.cursor();
            // Stale IDs form a prefix: find where it ends, a chunk at a time.
            let mut end = c;
            while end < st.tail {
                match self.ring.read(end) {
                    Ok((id, _)) if id >> shift < min_ok => end = (end / k + 1) * k,
                    _ => break,
                }
            }
            let end = end.min(st.tail);
            if end <= c {
                return;
            }
            if self.ring.claim_at(c, end - c) {
                self.counters
                    .discarded
                    .fetch_add(end - c, Ordering::Relaxed);
            }
        }
    }

    /// The slow path of a take: the ring had nothing at `index` yet. `Ok(None)`: the index was
    /// lapped (its caller was descheduled for a whole ring), claim another.
    #[cold]
    fn take_slow(&self, index: u64) -> Result<Option<u64>, Error> {
        self.counters.take_waits.fetch_add(1, Ordering::Relaxed);
        let backoff = Backoff::new();
        let mut rounds = 0u32;
        loop {
            match self.ring.read(index) {
                Ok((id, _)) => return Ok(Some(id)),
                Err(Miss::Lapped) => return Ok(None), // counted by the caller
                Err(Miss::NotReady) => {}
            }
            if !self.background {
                self.pump();
                if let Ok((id, _)) = self.ring.read(index) {
                    return Ok(Some(id));
                }
            } else if rounds.is_multiple_of(64) {
                self.wake_filler();
            }
            if let Some(err) = self.failure() {
                // The filler wrote everything it will before raising the flag: look once more.
                if let Ok((id, _)) = self.ring.read(index) {
                    return Ok(Some(id));
                }
                // The index stays claimed and unread: it is skipped, never handed out.
                self.counters.discarded.fetch_add(1, Ordering::Relaxed);
                return Err(err);
            }
            rounds = rounds.wrapping_add(1);
            if backoff.is_completed() {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                backoff.snooze();
            }
        }
    }

    /// Wakes async takes after a filler round (or a state change): they look at the ring again.
    fn notify_async_waiters(&self) {
        #[cfg(feature = "tokio")]
        {
            // Pairs with the waiter's SeqCst increment: either it sees what this round wrote, or
            // this load sees it waiting (a store-load order only SeqCst on both sides gives).
            std::sync::atomic::fence(Ordering::SeqCst);
            if self.async_waiters.load(Ordering::SeqCst) > 0 {
                self.notify.notify_waiters();
            }
        }
    }

    /// The async slow path: like `take_slow`, but parks the task on the filler's notification.
    #[cfg(feature = "tokio")]
    async fn take_slow_async(&self, index: u64) -> Result<Option<u64>, Error> {
        self.counters.take_waits.fetch_add(1, Ordering::Relaxed);
        let mut woke = false;
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            self.async_waiters.fetch_add(1, Ordering::SeqCst);
            notified.as_mut().enable();
            let outcome = match self.ring.read(index) {
                Ok((id, _)) => Some(Ok(Some(id))),
                Err(Miss::Lapped) => Some(Ok(None)),
                Err(Miss::NotReady) => {
                    if !self.background {
                        self.pump();
                        self.ring.read(index).ok().map(|(id, _)| Ok(Some(id)))
                    } else {
                        None
                    }
                }
            };
            let outcome = outcome.or_else(|| {
                self.failure().map(|err| match self.ring.read(index) {
                    Ok((id, _)) => Ok(Some(id)),
                    Err(_) => {
                        self.counters.discarded.fetch_add(1, Ordering::Relaxed);
                        Err(err)
                    }
                })
            });
            if let Some(outcome) = outcome {
                self.async_waiters.fetch_sub(1, Ordering::SeqCst);
                return outcome;
            }
            if !woke {
                // Once: a filler that finds nothing to do must not be woken again and again.
                self.wake_filler();
                woke = true;
            }
            notified.await;
            self.async_waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Why the ring will not be refilled now, if it will not.
    fn failure(&self) -> Option<Error> {
        let c = &self.counters;
        if c.exhausted.load(Ordering::Acquire) {
            return Some(self.layout.exhausted(self.layout.max_delta_seconds() + 1));
        }
        if self.background && !c.filler_up.load(Ordering::Acquire)
            || c.shutdown.load(Ordering::Acquire)
        {
            return Some(Error::Shutdown);
        }
        if let Some(k) = &self.keeper
            && c.lease_capped.load(Ordering::Acquire)
            && k.is_lost()
        {
            return Some(k.expired());
        }
        match self.max_lead {
            Some((lead, LeadPolicy::Fail)) if c.lead_capped.load(Ordering::Acquire) => {
                Some(Error::LeadLimitReached { max_lead: lead })
            }
            _ => None,
        }
    }
}

thread_local! {
    /// The chunk this thread last read in `next_id`: (generator id, its first index, its number
    /// of indices, first ID minus first index), so a claim `i` in it is the ID `i + delta`
    /// (wrapping). A `const` initialiser of a `Copy` value: no lazy initialisation, no
    /// destructor, no allocation.
    static LAST_CHUNK: Cell<(u64, u64, u64, u64)> = const { Cell::new((0, 0, 0, 0)) };
}

/// Gives each generator an id for [`LAST_CHUNK`], never reused within a process.
static NEXT_GENERATOR_ID: AtomicU64 = AtomicU64::new(1);

/// Marks the filler down when its thread ends, even by a panic.
struct FillerUp<'a>(&'a Shared);

impl Drop for FillerUp<'_> {
    fn drop(&mut self) {
        self.0.counters.filler_up.store(false, Ordering::SeqCst);
        self.0.notify_async_waiters();
        #[cfg(feature = "metrics")]
        if let Some(series) = &self.0.metrics {
            series.record(&self.0.stats());
        }
    }
}

fn filler_loop(shared: &Shared) {
    let _up = FillerUp(shared);
    #[cfg(feature = "metrics")]
    let mut recorded: Option<std::time::Instant> = None;
    while !shared.counters.shutdown.load(Ordering::Acquire) {
        let round = shared.pump();
        #[cfg(feature = "metrics")]
        if let Some(series) = &shared.metrics
            && recorded.is_none_or(|t| t.elapsed() >= crate::metrics::FILLER_RECORD_INTERVAL)
        {
            series.record(&shared.stats());
            recorded = Some(std::time::Instant::now());
        }
        let timeout = match round {
            Round::LeadCapped => {
                // Wake when the next second starts, when the cap moves.
                let ms = 1000 - shared.clock.now_millis().rem_euclid(1000);
                Duration::from_millis(ms as u64).min(shared.tick)
            }
            Round::LeaseCapped => Duration::from_millis(10),
            Round::Full | Round::Exhausted => shared.tick,
        };
        std::thread::park_timeout(timeout);
    }
}

/// A generator of UidGenerator-compatible IDs taken from a ring that a background thread keeps
/// filled by borrowing future seconds.
///
/// # Clock behaviour
///
/// The wall clock is read only by the filler, once per round. IDs never go backwards, even when
/// the clock does (the filler continues from `max(last + 1, now)`); an ID is at most `max_lag`
/// seconds older than the clock when taken; it is ahead of the clock only while demand exceeds
/// `2^seq_bits` IDs a second (or by at most the ring's span of `capacity / 2^seq_bits` seconds).
///
/// # Examples
///
/// ```
/// use ringflake::{CachedUidGenerator, Layout};
///
/// let generator = CachedUidGenerator::builder(Layout::default()).worker_id(42).build()?;
/// let a = generator.next_id()?;
/// let b = generator.next_id()?;
/// assert!(b > a);
/// assert_eq!(Layout::default().parse(a)?.worker_id, 42);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct CachedUidGenerator {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for CachedUidGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad("CachedUidGenerator { .. }")
    }
}

impl CachedUidGenerator {
    /// Starts configuring a generator for `layout`. Defaults: system clock, boost power 3,
    /// padding factor 50, `max_lag` 5 s, no lead cap, a background filler. A worker id is
    /// required.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// assert!(CachedUidGenerator::builder(Layout::default()).build().is_err()); // no worker id
    /// ```
    pub fn builder(layout: Layout) -> CachedBuilder {
        CachedBuilder {
            layout,
            assignment: Err(Error::WorkerAssignment(
                "no worker id: call worker_id or worker_id_from on the builder".into(),
            )),
            clock: Arc::new(SystemClock),
            boost_power: 3,
            padding_factor: 50,
            schedule_interval: Duration::from_millis(250),
            max_lag: Duration::from_secs(5),
            max_lead: None,
            background: true,
            #[cfg(feature = "metrics")]
            metrics: None,
        }
    }

    /// Takes the next ID.
    ///
    /// The per-ID path is one `fetch_add` on the cursor and a compare with this thread's cached
    /// chunk; once per chunk (up to 1,024 IDs) it also reads the chunk's descriptor from the ring.
    /// No lock, no allocation, no syscall, no log line, no metrics call. When the ring is empty it
    /// waits for the filler (spinning, then yielding, then sleeping 50 µs at a time) rather than
    /// failing; IDs taken by one thread are strictly increasing.
    ///
    /// # Errors
    ///
    /// [`Error::TimeBitsExhausted`] once the time bits are used up, [`Error::LeadLimitReached`]
    /// with a `max_lead` cap and [`LeadPolicy::Fail`], [`Error::Shutdown`] if the filler died.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// let ids: Vec<u64> = (0..100_000).map(|_| g.next_id()).collect::<Result<_, _>>()?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[inline]
    pub fn next_id(&self) -> Result<u64, Error> {
        let s = &*self.shared;
        // This thread's last chunk of this generator: a chunk's base never changes once written,
        // so a claim that lands in it needs no read of the ring at all. This part is small enough
        // to be inlined into the caller; everything else is in `next_id_new_chunk`.
        let (generator, start, len, delta) = LAST_CHUNK.with(Cell::get);
        // Everything but the claim itself is read before it: the claim is a locked instruction,
        // and a load issued after it waits for it.
        let mine = generator == s.id;
        let index = s.ring.claim(1);
        if mine && index.wrapping_sub(start) < len {
            return Ok(index.wrapping_add(delta));
        }
        self.next_id_new_chunk(index)
    }

    /// [`next_id`](Self::next_id) for a claim outside this thread's cached chunk (once per
    /// chunk, or after a claim by another generator on this thread): reads the ring, caches the
    /// chunk, wakes the filler at the threshold, waits on an empty ring.
    #[inline(never)]
    fn next_id_new_chunk(&self, mut index: u64) -> Result<u64, Error> {
        let s = &*self.shared;
        loop {
            let (chunk, offset) = s.ring.split(index);
            match s.ring.read_chunk(chunk) {
                Ok((base, wake)) => {
                    let chunk_len = s.ring.chunk();
                    let first = chunk * chunk_len;
                    LAST_CHUNK.with(|c| c.set((s.id, first, chunk_len, base.wrapping_sub(first))));
                    if wake && offset == 0 {
                        s.wake_filler();
                    }
                    return Ok(base + offset);
                }
                Err(_) => match s.take_slow(index)? {
                    Some(id) => return Ok(id),
                    // Lapped: this index is skipped, never handed out; claim another.
                    None => {
                        s.counters.discarded.fetch_add(1, Ordering::Relaxed);
                    }
                },
            }
            index = s.ring.claim(1);
        }
    }

    /// Takes the next ID, awaiting the filler when the ring is empty instead of spinning: the
    /// task is parked on a notification the filler sends after each round, so many tasks can wait
    /// through an empty ring without keeping a thread busy. The fast path is
    /// [`next_id`](Self::next_id)'s.
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let (a, b) = rt.block_on(async { (g.next_id_async().await, g.next_id_async().await) });
    /// assert!(b? > a?);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn next_id_async(&self) -> Result<u64, Error> {
        let s = &*self.shared;
        loop {
            let index = s.ring.claim(1);
            match s.ring.read(index) {
                Ok((id, wake)) => {
                    if wake {
                        s.wake_filler();
                    }
                    return Ok(id);
                }
                Err(_) => match s.take_slow_async(index).await? {
                    Some(id) => return Ok(id),
                    None => {
                        s.counters.discarded.fetch_add(1, Ordering::Relaxed);
                    }
                },
            }
        }
    }

    /// Takes an ID only if one is ready now; `None` means the ring is empty at this instant (the
    /// filler has been woken). Never blocks.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// assert!(g.try_next_id().is_some()); // the ring is filled at build
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn try_next_id(&self) -> Option<u64> {
        let s = &*self.shared;
        loop {
            let c = s.ring.cursor();
            if s.ring.read(c).is_err() {
                s.wake_filler();
                return None;
            }
            if s.ring.claim_at(c, 1) {
                match s.ring.read(c) {
                    Ok((id, wake)) => {
                        if wake {
                            s.wake_filler();
                        }
                        return Some(id);
                    }
                    Err(_) => continue, // lapped in between: claim another
                }
            }
        }
    }

    /// Fills `out` with consecutive IDs of this generator, claiming them all with one atomic
    /// operation. The IDs are strictly increasing.
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id); the IDs not yet written to `out` are discarded, never
    /// handed out later.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// let mut ids = [0u64; 1000];
    /// g.next_ids(&mut ids)?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn next_ids(&self, out: &mut [u64]) -> Result<(), Error> {
        let s = &*self.shared;
        let k = s.ring.chunk();
        let mut filled = 0;
        while filled < out.len() {
            // At most one chunk per claim: the filler may reuse a slot once its chunk is claimed,
            // so a larger claim would be lapped while it is still being copied out.
            let n = ((out.len() - filled) as u64).min(k);
            let first = s.ring.claim(n);
            let mut index = first;
            // A chunk at a time: one validated read of its base, then a plain loop.
            while index < first + n {
                let run = (k - index % k).min(first + n - index);
                let base = match s.ring.read(index) {
                    Ok((id, wake)) => {
                        if wake {
                            s.wake_filler();
                        }
                        Some(id)
                    }
                    Err(_) => s.take_slow(index)?,
                };
                let Some(base) = base else {
                    // Lapped: the rest of this claim is skipped; claim again for what is missing.
                    s.counters
                        .discarded
                        .fetch_add(first + n - index, Ordering::Relaxed);
                    break;
                };
                for (slot, id) in out[filled..filled + run as usize].iter_mut().zip(base..) {
                    *slot = id;
                }
                filled += run as usize;
                index += run;
            }
        }
        Ok(())
    }

    /// This generator's worker id.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(5).build()?;
    /// assert_eq!(g.worker_id(), 5);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn worker_id(&self) -> u64 {
        self.shared.worker_id
    }

    /// The layout IDs are made with.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(5).build()?;
    /// assert_eq!(g.layout(), &Layout::default());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.shared.layout
    }

    /// Fills the ring now, on the calling thread, as the filler would; for tests with a manual
    /// clock and no background filler.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).background_filler(false).build()?;
    /// g.pad();
    /// assert_eq!(g.stats().available, g.stats().capacity);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn pad(&self) {
        self.shared.pump();
    }

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
}

impl Shared {
    /// See [`CachedUidGenerator::stats`].
    fn stats(&self) -> Stats {
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

impl Drop for CachedUidGenerator {
    /// Stops and joins the filler thread.
    fn drop(&mut self) {
        self.shared.counters.shutdown.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
        // Release the lease at the newest second handed out, not the newest written: the highest
        // index that was both claimed and written.
        let s = &*self.shared;
        if let Some(keeper) = &s.keeper {
            let last = s.ring.cursor().min(s.ring.tail());
            let second = match last.checked_sub(1).map(|i| s.ring.read(i)) {
                Some(Ok((id, _))) => {
                    s.layout.epoch_seconds() + (id >> s.layout.time_shift()) as i64
                }
                _ => s.clock.now_seconds(),
            };
            keeper.set_final_second(second);
        }
    }
}
