//! `CachedUidGenerator`: a background filler borrows future seconds to pre-generate IDs into a
//! [ring](crate::ring), and any number of threads take them with one atomic read-modify-write each.
//!
//! Borrowing future seconds is Baidu UidGenerator's `BufferPaddingExecutor`, and what RFC 9562
//! §6.2 calls "increment the timestamp ahead of the actual time" to keep IDs unique and ordered
//! when more are wanted in one time unit than the layout holds. The filler ([`filler`]) is the
//! only writer of the ring and the only place time is decided. Its rules, numbered here once and
//! cited by number in the code:
//!
//! 1. **Never behind the clock**: the next second it writes is `max(last + 1, now)`, and never a
//!    second below the boot's floor (everything an earlier holder of the worker id, or an earlier
//!    run recorded in the state file, may have used).
//! 2. **A full ring keeps the rest of its second**: when the ring fills in the middle of a
//!    second, the rest of that second is written next round (unless the clock has passed it).
//! 3. **Borrow only under demand**: a second ahead of the clock is written only while fewer than
//!    the threshold (`padding_factor` percent of one second's IDs, or of the ring if smaller) are
//!    ready. Below `2^seq_bits` IDs a second, IDs carry the current second: the lead stays at
//!    most 1 s, whatever the ring's size.
//! 4. **Bounded lead**: never a second beyond `now + max_lead` (default
//!    [`DEFAULT_MAX_LEAD`](crate::DEFAULT_MAX_LEAD)); at the cap, takes wait for the clock or
//!    fail, as the [`LeadPolicy`] says. Unbounded only when asked for
//!    ([`CachedBuilder::unbounded_lead`], Java's behaviour).
//! 5. **Reserved before use**: never a second beyond the worker lease's horizon, nor beyond what
//!    the state file records; the filler raises the state file (durably) before it writes a
//!    second past it.
//! 6. **No stale IDs**: every round first discards ready IDs more than `max_lag` behind the clock.
//!    Rounds run at least every `schedule_interval` (at most `max_lag / 4`), so after a forward
//!    clock step, older IDs can be handed out for at most one such interval.
//! 7. **An end, not a wrap**: when the time bits run out, takes fail with
//!    [`Error::TimeBitsExhausted`].

mod builder;
mod filler;
mod local;
mod queue;
mod stats;
mod take;

pub use builder::{CachedBuilder, DEFAULT_MAX_LEAD, LeadPolicy};
pub use local::LocalTaker;
pub use stats::{FILLER_RECORD_INTERVAL, Stats, StatsSink, StatsSource};

use crate::reach::ReachFile;
use crate::ring::Ring;
use crate::worker::lease::Keeper;
use crate::{Clock, Error, Layout};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

/// Counters written off the per-ID path (by the filler, or by takes that had to wait).
#[derive(Default)]
struct Counters {
    paddings: AtomicU64,
    /// Claimed indices never handed out; see [`stats::Discards`].
    discards: stats::Discards,
    take_waits: AtomicU64,
    /// The delta of the newest ID written, plus one (0: none yet).
    last_delta: AtomicU64,
    exhausted: AtomicBool,
    lead_capped: AtomicBool,
    lease_capped: AtomicBool,
    state_capped: AtomicBool,
    shutdown: AtomicBool,
    filler_up: AtomicBool,
}

/// A state file and how far it is known to reach.
struct Reach {
    file: ReachFile,
    /// The unix second the file records (what the filler may use without writing it again).
    reserved: std::sync::atomic::AtomicI64,
    /// Why the last reservation failed, while it fails.
    error: Mutex<Option<Error>>,
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
    /// The state file the filler reserves seconds in before using them, if any.
    reach: Option<Reach>,
    /// The takes that wait, first come, first served (see [`queue`]).
    queue: queue::Queue,
    /// Async takes waiting for the filler, and how they are woken.
    #[cfg(feature = "tokio")]
    async_waiters: std::sync::atomic::AtomicUsize,
    #[cfg(feature = "tokio")]
    notify: tokio::sync::Notify,
    /// Where the filler records its stats after its rounds.
    sink: Option<Box<dyn StatsSink>>,
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
        if let Some(r) = &self.reach
            && c.state_capped.load(Ordering::Acquire)
            && let Some(e) = lock(&r.error).clone()
        {
            return Some(e);
        }
        match self.max_lead {
            Some((lead, LeadPolicy::Fail)) if c.lead_capped.load(Ordering::Acquire) => {
                Some(Error::LeadLimitReached { max_lead: lead })
            }
            _ => None,
        }
    }
}

/// Gives each generator an id for [`LAST_CHUNK`], never reused within a process.
static NEXT_GENERATOR_ID: AtomicU64 = AtomicU64::new(1);

/// A generator of UidGenerator-compatible IDs taken from a ring that a background thread keeps
/// filled by borrowing future seconds.
///
/// # Clock behaviour
///
/// The wall clock is read only by the filler, once per round. IDs never go backwards, even when
/// the clock does (the filler continues from `max(last + 1, now)`); an ID is at most `max_lag`
/// seconds older than the clock when taken (after a forward clock step: from the filler's next
/// round on, at most `schedule_interval` later); it is ahead of the clock only while demand
/// exceeds `2^seq_bits` IDs a second, and then by at most `max_lead` (default 10 s). Below that
/// rate the lead is at most 1 s. The crate's README lists the time rules.
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
    /// // The current second's IDs: nothing is borrowed at light load.
    /// assert_eq!(g.stats().available, 1 << 22);
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
