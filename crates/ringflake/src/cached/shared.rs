//! What a generator's parts share: the ring, the counters, the filler's position, and the
//! [`CachedUidGenerator`] handle on them. The filler, the takes and the snapshots are written in
//! their own modules, as `impl` blocks on these types.

use super::discards::Discards;
use super::lead::LeadPolicy;
use super::stats::StatsSink;
use crate::lock::lock;
use crate::reach::ReachFile;
use crate::ring::Ring;
use crate::worker::lease::Keeper;
use crate::{Clock, Error, Layout};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

/// Counters written off the per-ID path (by the filler, or by takes that had to wait).
#[derive(Default)]
pub(super) struct Counters {
    pub(super) paddings: AtomicU64,
    /// Claimed indices never handed out; see [`Discards`].
    pub(super) discards: Discards,
    pub(super) take_waits: AtomicU64,
    /// Times the generator took a new worker id after losing its lease for good.
    pub(super) heals: AtomicU64,
    /// The delta of the newest ID written, plus one (0: none yet).
    pub(super) last_delta: AtomicU64,
    pub(super) exhausted: AtomicBool,
    pub(super) lead_capped: AtomicBool,
    /// While the filler is held at the lead cap: the delta second it would write next, plus one
    /// (0: not held).
    pub(super) held_next: AtomicU64,
    /// The unix second of the filler round that last saw a take's claim (the cursor moved).
    pub(super) demand_second: AtomicI64,
    /// The cursor after the filler's last sweep (written by the filler under its lock): a round
    /// that finds the cursor moved saw demand, and so does a snapshot taken before that round
    /// (a take right before `/healthz` is not "no take for 13 s").
    pub(super) cursor_seen: AtomicU64,
    pub(super) lease_capped: AtomicBool,
    pub(super) state_capped: AtomicBool,
    pub(super) shutdown: AtomicBool,
    pub(super) filler_up: AtomicBool,
}

/// A state file and how far it is known to reach.
pub(super) struct Reach {
    pub(super) file: ReachFile,
    /// The unix second the file records (what the filler may use without writing it again).
    pub(super) reserved: std::sync::atomic::AtomicI64,
    /// Why the last reservation failed, while it fails.
    pub(super) error: Mutex<Option<Error>>,
    /// For a worker id no source leases (a fixed one), the lock that keeps a second live
    /// generator with the same worker id off this state file ([`ReachFile::hold`]); held, never
    /// read.
    pub(super) _held: Option<std::fs::File>,
}

/// The filler's position: the next (second, sequence) to write and the next ring index.
pub(super) struct FillerState {
    pub(super) next_delta: u64,
    pub(super) next_seq: u64,
    pub(super) tail: u64,
}

pub(super) struct Shared {
    /// Unique in the process, for the per-thread chunk cache.
    pub(super) id: u64,
    pub(super) ring: Ring,
    pub(super) layout: Layout,
    /// The worker id: changed only by the filler, when the generator heals (see [`super::heal`]).
    pub(super) worker_id: AtomicU64,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) threshold: u64,
    /// `max_lag` in whole seconds, as reported.
    pub(super) max_lag_secs: u64,
    /// `max_lag` in the layout's ticks: what the stale rule compares IDs' ticks with.
    pub(super) max_lag_ticks: u64,
    /// Rule 3's threshold for the first tick ahead of the clock: of one tick's IDs, or of the
    /// ring if it holds less (the same as `threshold` for a seconds layout).
    pub(super) tick_threshold: u64,
    pub(super) max_lead: Option<(u64, LeadPolicy)>,
    pub(super) tick: Duration,
    pub(super) background: bool,
    pub(super) filler: Mutex<FillerState>,
    pub(super) counters: CachePadded<Counters>,
    pub(super) filler_thread: OnceLock<Thread>,
    /// Keeps the worker lease extended, if the assignment has one; releases it when dropped.
    pub(super) keeper: Option<Keeper>,
    /// The state file the filler reserves seconds in before using them, if any.
    pub(super) reach: Option<Reach>,
    /// How a new worker id reaches the filler after the lease is lost for good, if the worker id
    /// source can give one.
    pub(super) renewal: Option<Arc<super::renewal::Renewal>>,
    /// The takes that wait, first come, first served (see [`super::queue`]).
    pub(super) queue: super::queue::Queue,
    /// Async takes waiting for the filler, and how they are woken.
    #[cfg(feature = "tokio")]
    pub(super) async_waiters: super::take_async::waiters::AsyncWaiters,
    /// Where the filler records its stats after its rounds.
    pub(super) sink: Option<Box<dyn StatsSink>>,
    /// The worker id given back at start, if one was.
    pub(super) given_back: Option<crate::GivenBack>,
}

impl Shared {
    /// The clock as ticks since the epoch (seconds for a seconds layout; 0 before the epoch).
    pub(super) fn now_delta(&self) -> u64 {
        self.layout.tick_at(self.clock.now_millis())
    }

    /// The lead cap in ticks, if there is one.
    pub(super) fn max_lead_ticks(&self) -> Option<u64> {
        self.max_lead
            .map(|(lead, _)| self.layout.seconds_as_ticks(lead))
    }

    pub(super) fn wake_filler(&self) {
        if let Some(t) = self.filler_thread.get() {
            t.unpark();
        }
    }

    /// Wakes async takes after a filler round (or a state change): they look at the ring again
    /// (`take_async`; nothing to wake without the feature `tokio`).
    pub(super) fn notify_async_waiters(&self) {
        #[cfg(feature = "tokio")]
        self.async_waiters.wake_all();
    }

    /// Why the ring will not be refilled now, if it will not.
    pub(super) fn failure(&self) -> Option<Error> {
        let c = &self.counters;
        if c.exhausted.load(Ordering::Acquire) {
            return Some(self.layout.exhausted(self.layout.max_delta() + 1));
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
        if let Some(e) = self.keeper.as_ref().and_then(|k| k.refusal()) {
            return Some(e);
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
pub(super) static NEXT_GENERATOR_ID: AtomicU64 = AtomicU64::new(1);

/// A generator of UidGenerator-compatible IDs taken from a ring that a background thread keeps
/// filled by borrowing future seconds.
///
/// # Clock behaviour
///
/// Like UidGenerator, the filler fills the ring ahead of demand, and when the IDs of the current
/// second are used up it takes the next second: it *borrows* a future second (RFC 9562 §6.2
/// calls this "increment the timestamp ahead of the actual time"). Unlike UidGenerator it keeps
/// reading the clock (once per round, and takes once per claimed chunk, batch or block; the
/// per-ID path reads none), and by default it cannot run away from it. Its rules, cited by number in the code:
///
/// 1. **Never behind the clock.** The next second is the later of "one after the last second
///    used" and "now", and never below the boot's floor: everything an earlier holder of the
///    worker id, or an earlier run recorded in the state file, may have used (rule 5,
///    [Restarts](#restarts)). Java seeded its counter once at boot and never looked again.
/// 2. **A full ring keeps the rest of its second.** When the ring fills in the middle of a
///    second, the unused sequences of that second are written in the next round, unless the
///    clock has moved past it. Java dropped them.
/// 3. **Borrow only under demand: light load tells the time.** A second ahead of the clock is
///    written only while fewer than the threshold are ready ([`padding_factor`], 50 %, of one
///    second's IDs, or of the ring if it holds less). Below `2^seq_bits` IDs a second IDs carry
///    the current second and the lead is at most 1 s, *whatever the ring's size*.
/// 4. **A bounded lead** ([`max_lead`], default [`DEFAULT_MAX_LEAD`](crate::DEFAULT_MAX_LEAD), 10 s). Never a second
///    beyond `now + max_lead`, at any load, right after boot, after any number of crashes and
///    after the clock is set back. At the cap, takes wait for the clock ([`LeadPolicy::Wait`],
///    the default) or fail with [`Error::LeadLimitReached`] ([`LeadPolicy::Fail`]). A batch
///    larger than the cap can ever hold ([`max_batch`](Self::max_batch),
///    `(max_lead + 1) x 2^seq_bits` IDs) is refused at once with [`Error::BatchTooLarge`].
///    Unbounded borrowing, Java's behaviour, only when asked:
///    [`unbounded_lead`](crate::CachedBuilder::unbounded_lead).
/// 5. **Reserved before use.** Never a second beyond the worker lease's horizon, nor beyond what
///    the state file records; the filler raises the state file (written, synced, renamed) before
///    it uses a second past it: about once a second under load.
/// 6. **No stale IDs** ([`max_lag`], default 1 s). Every round first drops ready IDs more than
///    `max_lag` behind the clock (they expire: [`Stats::expired`](crate::Stats::expired)), and
///    rounds run at least every `schedule_interval` (250 ms, never more than `max_lag / 4`).
///    Takes check too, once per claim: a chunk a thread reads for [`next_id`](Self::next_id)
///    (up to 1,024 IDs), a batch, a [`LocalTaker`](crate::LocalTaker)'s block, a
///    [`try_next_id`](Self::try_next_id) call; a stale claim is dropped (counted as discarded)
///    and the ring's stale IDs swept at once. So an ID is at most `max_lag` older than the clock
///    when handed out, also right after the process was paused (the takes may run before the
///    filler's round), with one bound exception: what a thread holds of a chunk or block claimed
///    before a pause or a forward clock step (at most the rest of that one chunk) is still handed
///    out.
/// 7. **No IDs past the time bits.** When the layout's last second is used, takes fail with
///    [`Error::TimeBitsExhausted`], which names the last valid second. Java handed out negative
///    IDs instead.
///
/// **Why `max_lead` is 10 s.** The lead is the error in every ID's embedded time, so it bounds
/// how far sorting, debugging and retention by ID can be off. 10 s absorbs a burst of
/// `10 x 2^seq_bits` IDs above the sustained rate (41,943,040 with the default layout) without
/// waiting; a restart never starts more than 10 s ahead; and a database lease never reaches more
/// than `lease_window + 10 s` past the clock. Flat out without a cap, one consumer thread borrows
/// thousands of seconds per second: a layout's 68 years would be gone in days.
///
/// An empty ring is not an error: a take waits for the filler (spinning, then yielding, then
/// sleeping 50 µs at a time) instead of throwing as Java did. When the clock jumps back, no
/// second is reused: IDs keep increasing from the last second used and, that being more than
/// `max_lead` ahead of the clock now, takes wait (or fail) until the clock is back within the
/// cap.
///
/// ```
/// use ringflake::{CachedUidGenerator, Error, Layout, LeadPolicy, ManualClock, DEFAULT_MAX_LEAD};
///
/// let layout = Layout::default();
/// let t = 1_800_000_000;
/// let clock = ManualClock::from_seconds(t);
/// let generator = CachedUidGenerator::builder(layout)
///     .worker_id(7)
///     .clock(clock.clone())
///     .max_lead(DEFAULT_MAX_LEAD, LeadPolicy::Fail)
///     .background_filler(false) // the test drives the filler with pad()
///     .build()?;
/// let second = |id: u64| layout.parse(id).map(|p| p.unix_seconds);
///
/// let first = generator.next_id()?;
/// assert_eq!(second(first)?, t);
/// assert_eq!(generator.stats().lead_seconds, 0); // nothing borrowed at boot (rule 3)
///
/// // Light load, long pause: the next ID carries the current second (rules 1 and 6).
/// clock.advance_seconds(100);
/// generator.pad();
/// let later = generator.next_id()?;
/// assert_eq!(second(later)?, t + 100);
///
/// // The clock jumps back an hour: what was written is handed out, still increasing; then
/// // nothing past the cap (rule 4), until the clock is back.
/// clock.advance_seconds(-3600);
/// let mut previous = later;
/// let err = loop {
///     match generator.next_id() {
///         Ok(id) => {
///             assert!(id > previous && second(id)? == t + 100);
///             previous = id;
///         }
///         Err(e) => break e,
///     }
/// };
/// assert_eq!(err, Error::LeadLimitReached { max_lead: 10 });
/// clock.advance_seconds(3600);
/// assert!(generator.next_id()? > previous);
/// # Ok::<(), ringflake::Error>(())
/// ```
///
/// # Restarts
///
/// A restart that may reuse a worker id starts above every second the id's previous holder
/// could have used, and no further:
///
/// | worker id from | what records the previous holder's reach | where a restart starts |
/// |---|---|---|
/// | database, recycled row | the row's lease (`LEASE_UNTIL`), expired before reuse | at the clock: the lease is in the past |
/// | database, new row | nothing needed (a new id); the state file (every id's reach), or without one the host's earlier leases, order it | right after the highest second the state file records for any id, else above the host's earlier rows; at most `max_lead` ahead |
/// | database, the predecessor's row taken back ([`keep_worker_id`](crate::DatabaseAssigner::keep_worker_id)) | the state file: this id's reach | right after the last second recorded for it |
/// | database, a new id after the lease was lost for good (healing, below) | the new row's lease, or nothing; the state file: this id's reach | above both, and above every second this generator wrote |
/// | fixed id, StatefulSet ordinal | the [state file](crate::CachedBuilder::state_file): this id's reach | right after the last second recorded for it |
/// | a recreated worker table | the state file: each id's reach | right after the last second recorded for that id |
///
/// The state file records, before any ID of a second exists, the highest second each worker id
/// may use, so a restart after `kill -9` starts right after the last second its worker id used,
/// never more than `max_lead` ahead; a worker id it does not name starts at the clock. Without
/// one, a fixed id restarted within `max_lead` of its previous run can repeat IDs. A worker id
/// from a database whose floor lies beyond `now + max_lead + max_lag` (a run under a clock set ahead) is
/// given back at start and another taken ([`given_back`](Self::given_back)); one that cannot be
/// (a fixed id) starts [unavailable](crate::Health::ReservedAhead) until the clock catches up.
///
/// # Healing
///
/// A generator whose worker lease is lost for good (its row taken over by another node after
/// the lease ran out, or the row gone) takes a new worker id from its source by itself, as soon
/// as the source answers, and serves again: the worker id source's
/// [`retaker`](crate::WorkerIdAssigner::retaker), which a [`DatabaseAssigner`](crate::DatabaseAssigner)
/// has. The IDs of the old worker id still in the ring are discarded, never handed out after the
/// switch; [`worker_id`](Self::worker_id) and [`Stats::worker_id`](crate::Stats::worker_id) tell
/// the new one, [`Stats::heals`](crate::Stats::heals) how often it happened. A lease lost because
/// the database does not answer is not lost for good: the generator serves up to the lease's
/// horizon, then waits, and goes on with the same worker id once the database answers. A source
/// without a retaker (a fixed id) cannot heal: takes fail with [`Error::LeaseExpired`](crate::Error::LeaseExpired)
/// saying so. [`DefaultUidGenerator`](crate::DefaultUidGenerator) does not heal.
///
/// [`padding_factor`]: crate::CachedBuilder::padding_factor
/// [`max_lead`]: crate::CachedBuilder::max_lead
/// [`max_lag`]: crate::CachedBuilder::max_lag
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
    pub(super) shared: Arc<Shared>,
    pub(super) handle: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for CachedUidGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad("CachedUidGenerator { .. }")
    }
}

impl CachedUidGenerator {
    /// This generator's worker id: the one it serves with now (a new one after it healed, see
    /// [Healing](Self#healing)).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(5).build()?;
    /// assert_eq!(g.worker_id(), 5);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn worker_id(&self) -> u64 {
        self.shared.worker_id.load(Ordering::Acquire)
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

    /// The worker id this generator gave back at start, if it did: the one first assigned was
    /// reserved beyond the lead cap (its IDs may reach a second past `now + max_lead + max_lag`, recorded
    /// by the state file or the worker table), and the assigner gave another
    /// ([`CachedBuilder::worker_id_from`](crate::CachedBuilder::worker_id_from)).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, DatabaseAssigner, Layout, ManualClock};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let state = dir.path().join("ringflake.state");
    /// let db = dir.path().join("ringflake.db");
    /// let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    /// // A run of worker id 1 under a clock a day ahead reserved its IDs until then.
    /// let ahead = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id_from(&DatabaseAssigner::sqlite(&db)?)
    ///     .clock(ManualClock::from_seconds(now + 86_400))
    ///     .state_file(&state)
    ///     .build()?;
    /// ahead.next_id()?;
    /// std::mem::forget(ahead); // killed
    /// // The worker table is recreated (a new, empty one): id 1 is handed out again, and given
    /// // back.
    /// let recreated = dir.path().join("recreated.db");
    /// let g = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id_from(&DatabaseAssigner::sqlite(&recreated)?)
    ///     .state_file(&state)
    ///     .build()?;
    /// let back = g.given_back().expect("worker id 1 was given back");
    /// assert_eq!((back.worker_id, g.worker_id()), (1, 2));
    /// assert!(back.ahead_seconds() > 86_000);
    /// assert!(g.next_id().is_ok()); // serving now
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn given_back(&self) -> Option<crate::GivenBack> {
        self.shared.given_back
    }

    /// Fills the ring now, on the calling thread, as the filler would; for tests with a manual
    /// clock and no background filler.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, ManualClock};
    /// let clock = ManualClock::from_seconds(1_800_000_000);
    /// let g = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id(1)
    ///     .clock(clock.clone())
    ///     .background_filler(false)
    ///     .build()?;
    /// g.pad();
    /// // The current second's IDs: nothing is borrowed at light load.
    /// assert_eq!(g.stats().available, 1 << 22);
    /// // Within a round of the next second, that second is written too, behind this one's, so
    /// // that the takes at the boundary find it ready.
    /// clock.set_millis(1_800_000_000_900);
    /// g.pad();
    /// assert_eq!(g.stats().available, 2 << 22);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn pad(&self) {
        self.shared.pump();
    }
}

impl CachedUidGenerator {
    /// Stops the filler and gives the worker lease back now, saying whether the release reached
    /// the worker table. Dropping the generator does the same, but can only log a failed
    /// release; a service that reports its shutdown calls this instead. Without a lease there
    /// is nothing to release: `Ok(())`.
    ///
    /// # Errors
    ///
    /// The table's error when the release did not reach it: the worker id then stays reserved
    /// until its lease expires ([`Stats::lease_until`](crate::Stats::lease_until)), which is
    /// safe, only slower to recycle.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, DatabaseAssigner, Layout};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("w.db"))?;
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id_from(&assigner).build()?;
    /// let last = Layout::default().parse(g.next_id()?)?.unix_seconds;
    /// g.close()?;
    /// assert_eq!(assigner.list()?[0].lease_until, last); // released at the last second issued
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn close(mut self) -> Result<(), Error> {
        self.stop();
        match &self.shared.keeper {
            Some(keeper) => keeper.release(),
            None => Ok(()),
        }
    }

    /// Stops and joins the filler thread, and tells the lease keeper the newest second handed
    /// out. Idempotent.
    fn stop(&mut self) {
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
                Some(Ok((id, _))) => s.layout.tick_second(id >> s.layout.time_shift()),
                _ => s.clock.now_seconds(),
            };
            keeper.set_final_second(second);
        }
    }
}

impl Drop for CachedUidGenerator {
    /// Stops and joins the filler thread; the lease is released when the last handle on the
    /// shared state (this one, or the filler's) goes.
    fn drop(&mut self) {
        self.stop();
    }
}
