//! [`SegmentGenerator`]: every tag of a `leaf_alloc` table, its builder, and what its takes and
//! its two threads share ([`Shared`]).

use super::error::{SegmentError, check_tag, shown};
use super::state::StateDir;
use super::table::{AllocTable, SegmentTable};
use super::tag::TagCell;
use crate::{Clock, Error, SystemClock};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

/// How long a take waits for a number when both segments are used up, unless
/// [`SegmentBuilder::max_wait`] says otherwise: 5 s. Leaf waits about 10 ms, then fails with
/// "both two segments are not ready".
pub const DEFAULT_SEGMENT_MAX_WAIT: Duration = Duration::from_secs(5);

/// How often the tags are read again from `leaf_alloc` (added ones served, removed ones
/// dropped), unless [`SegmentBuilder::refresh_interval`] says otherwise: 60 s, as Leaf.
pub const DEFAULT_SEGMENT_REFRESH: Duration = Duration::from_secs(60);

/// The fewest numbers a mark moves at once, unless [`SegmentBuilder::min_chunk`] says otherwise:
/// at most this many (or a tenth of a second of demand, if more) are lost when the process is
/// killed.
pub const DEFAULT_MIN_CHUNK: u64 = 16;

/// The largest batch one call takes: 100,000 numbers.
pub const SEGMENT_MAX_BATCH: usize = 100_000;

/// How often the keeper looks at every tag when nothing wakes it.
pub(crate) const TICK: Duration = Duration::from_millis(100);

/// What the takes, the handles and the two threads share.
pub(crate) struct Shared {
    pub(crate) table: Arc<dyn AllocTable>,
    /// Every tag served, by name.
    pub(crate) tags: RwLock<BTreeMap<String, Arc<TagCell>>>,
    /// Rows not served, and why (a tag a URL cannot carry).
    pub(crate) skipped: Mutex<Vec<(String, String)>>,
    pub(crate) state: Option<StateDir>,
    /// This boot's token in `ringflake_segment_hold`.
    pub(crate) holder: String,
    pub(crate) max_wait: Duration,
    pub(crate) refresh: Duration,
    pub(crate) min_chunk: u64,
    pub(crate) clock: Arc<dyn Clock>,
    /// The last reread of the tags, and a reread asked for (an unknown tag was asked for).
    pub(crate) refreshed_at: Mutex<Instant>,
    pub(crate) refresh_asked: AtomicBool,
    pub(crate) keeper: OnceLock<Thread>,
    pub(crate) claimer: OnceLock<Thread>,
    pub(crate) stop: AtomicBool,
}

impl Shared {
    /// Wakes the keeper (a take reached a wake offset, or waits).
    #[inline]
    pub(crate) fn wake_keeper(&self) {
        if let Some(t) = self.keeper.get() {
            t.unpark();
        }
    }

    /// Wakes the claimer (a claim is wanted).
    pub(crate) fn wake_claimer(&self) {
        if let Some(t) = self.claimer.get() {
            t.unpark();
        }
    }

    /// The cell of `tag`.
    ///
    /// # Errors
    ///
    /// [`SegmentError::InvalidTag`] for a tag that cannot be served, [`SegmentError::UnknownTag`]
    /// for one that is not in the table as last read (and a reread is asked for, at most one a
    /// second, so that a tag just added is found soon).
    pub(crate) fn cell(&self, tag: &str) -> Result<Arc<TagCell>, Error> {
        let tags = self.tags.read().unwrap_or_else(|e| e.into_inner());
        if let Some(cell) = tags.get(tag) {
            return Ok(Arc::clone(cell));
        }
        let served = tags.len();
        drop(tags);
        check_tag(tag)?;
        if !self.refresh_asked.swap(true, Ordering::Relaxed) {
            self.wake_claimer();
        }
        Err(Error::Segment(SegmentError::UnknownTag {
            tag: shown(tag),
            tags: served,
        }))
    }

    /// Every cell, by name.
    pub(crate) fn cells(&self) -> Vec<Arc<TagCell>> {
        let tags = self.tags.read().unwrap_or_else(|e| e.into_inner());
        tags.values().cloned().collect()
    }
}

/// Builds a [`SegmentGenerator`] on a [`SegmentTable`].
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use ringflake::{SegmentGenerator, SegmentTable};
/// use std::time::Duration;
///
/// let dir = tempfile::tempdir().unwrap();
/// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
/// table.add("orders", 1, 1000, "")?;
/// let g = SegmentGenerator::builder(table)
///     .state_dir(dir.path().join("segments"))
///     .max_wait(Duration::from_secs(2))
///     .build()?;
/// assert_eq!(g.next_id("orders")?, 1);
/// # }
/// # Ok::<(), ringflake::Error>(())
/// ```
#[must_use = "a builder does nothing until build() is called"]
pub struct SegmentBuilder {
    table: SegmentTable,
    state_dir: Option<PathBuf>,
    max_wait: Duration,
    refresh: Duration,
    min_chunk: u64,
    clock: Arc<dyn Clock>,
}

impl fmt::Debug for SegmentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SegmentBuilder")
            .field("table", &self.table)
            .field("state_dir", &self.state_dir)
            .field("max_wait", &self.max_wait)
            .field("refresh", &self.refresh)
            .field("min_chunk", &self.min_chunk)
            .finish_non_exhaustive()
    }
}

impl SegmentBuilder {
    /// Keeps the ranges held in this directory (one file per tag, created if missing, locked
    /// for the run), so that a restart resumes them instead of throwing them away: without one,
    /// as in Leaf, a restart loses what is left of both segments. Give every process its own.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use ringflake::{SegmentGenerator, SegmentTable};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 1000, "")?;
    /// let state = dir.path().join("segments");
    /// let g = SegmentGenerator::builder(table.clone()).state_dir(&state).build()?;
    /// assert_eq!(g.next_id("orders")?, 1);
    /// drop(g); // or kill -9: at most a chunk of numbers is lost then
    /// let g = SegmentGenerator::builder(table).state_dir(&state).build()?;
    /// assert_eq!(g.next_id("orders")?, 2); // the rest of the range, resumed
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn state_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.state_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// How long a take waits for a number when both segments are used up (the next range is
    /// late: the database is slow or down, or the step is small for a burst), before it fails
    /// with [`SegmentError::NotReady`] ([`DEFAULT_SEGMENT_MAX_WAIT`]). A tag whose row is at
    /// fault (a step of 0, `max_id` at its end) fails at once.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use ringflake::{SegmentGenerator, SegmentTable};
    /// use std::time::Duration;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let g = SegmentGenerator::builder(table).max_wait(Duration::from_millis(50)).build()?;
    /// assert_eq!(g.max_wait(), Duration::from_millis(50));
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.max_wait = wait;
        self
    }

    /// How often the tags are read again from the table ([`DEFAULT_SEGMENT_REFRESH`], Leaf's
    /// 60 s). A tag asked for and not known triggers a reread too, at most one a second.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use ringflake::{SegmentGenerator, SegmentTable};
    /// use std::time::Duration;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let g = SegmentGenerator::builder(table.clone())
    ///     .refresh_interval(Duration::from_secs(5))
    ///     .build()?;
    /// table.add("new", 1, 10, "")?;
    /// g.refresh()?; // or wait up to 5 s
    /// assert_eq!(g.next_id("new")?, 1);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn refresh_interval(mut self, every: Duration) -> Self {
        self.refresh = every.max(Duration::from_millis(10));
        self
    }

    /// The fewest numbers a tag's mark moves at once (1 to 2^20, [`DEFAULT_MIN_CHUNK`]): a
    /// mark is written to the state file before the numbers below it are handed out, so a
    /// smaller chunk writes more often and loses fewer numbers when the process is killed. The
    /// chunk grows under demand (doubling while a chunk lasts under 100 ms) and shrinks back.
    ///
    /// # Panics
    ///
    /// Never: a value outside the range is clamped into it.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use ringflake::{SegmentGenerator, SegmentTable};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let g = SegmentGenerator::builder(table).min_chunk(0).build()?;
    /// assert_eq!(g.min_chunk(), 1);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn min_chunk(mut self, numbers: u64) -> Self {
        self.min_chunk = numbers.clamp(1, 1 << 20);
        self
    }

    /// The clock Leaf's dynamic step reads (how long a range lasted); [`SystemClock`] by
    /// default. Tests move a [`ManualClock`](crate::ManualClock) instead of sleeping 15 minutes.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use ringflake::{ManualClock, SegmentGenerator, SegmentTable};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let clock = ManualClock::new(1_800_000_000_000);
    /// let g = SegmentGenerator::builder(table).clock(clock).build()?;
    /// assert!(g.tags().is_empty());
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Reads the tags, takes the state directory's ranges over (in the background) and starts
    /// the generator's two threads. Nothing is claimed until a tag is asked for.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] if the table cannot be read (or created), or lacks Leaf's columns;
    /// [`Error::StateFile`] if the state directory cannot be created or another process holds
    /// it; [`Error::ThreadSpawn`] if a thread cannot be started.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use ringflake::{SegmentGenerator, SegmentTable};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let state = dir.path().join("segments");
    /// let first = SegmentGenerator::builder(table.clone()).state_dir(&state).build()?;
    /// let e = SegmentGenerator::builder(table).state_dir(&state).build().unwrap_err();
    /// assert!(e.to_string().contains("another live process"), "{e}");
    /// # drop(first);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn build(self) -> Result<SegmentGenerator, Error> {
        let table = self.table.table;
        table.prepare()?;
        let state = self.state_dir.as_deref().map(StateDir::open).transpose()?;
        let shared = Arc::new(Shared {
            table,
            tags: RwLock::new(BTreeMap::new()),
            skipped: Mutex::new(Vec::new()),
            state,
            holder: holder_token(),
            max_wait: self.max_wait,
            refresh: self.refresh,
            min_chunk: self.min_chunk,
            clock: self.clock,
            refreshed_at: Mutex::new(Instant::now()),
            refresh_asked: AtomicBool::new(false),
            keeper: OnceLock::new(),
            claimer: OnceLock::new(),
            stop: AtomicBool::new(false),
        });
        shared.refresh()?;
        let spawn = |name: &str, run: fn(&Shared)| {
            let s = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || run(&s))
                .map_err(|e| Error::thread_spawn(name, e))
        };
        let keeper = spawn("ringflake-segment-keeper", Shared::keep)?;
        let _ = shared.keeper.set(keeper.thread().clone());
        let claimer = match spawn("ringflake-segment-claimer", Shared::claim_loop) {
            Ok(c) => c,
            Err(e) => {
                shared.stop.store(true, Ordering::Relaxed);
                shared.wake_keeper();
                let _ = keeper.join();
                return Err(e);
            }
        };
        let _ = shared.claimer.set(claimer.thread().clone());
        shared.wake_claimer();
        Ok(SegmentGenerator {
            shared,
            threads: Some((keeper, claimer)),
        })
    }
}

/// A token for this boot in `ringflake_segment_hold.holder` (at most 64 characters): the host
/// and 64 random bits.
fn holder_token() -> String {
    let host: String = crate::NodeInfo::detect()
        .host_name
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(40)
        .collect();
    let random = (crate::worker::node::random_below(u64::MAX) << 1)
        ^ u64::from(std::process::id())
        ^ crate::worker::node::random_below(u64::MAX).rotate_left(17);
    format!("{host}/{random:016x}")
}

/// Dense numbers per business tag from Meituan Leaf's `leaf_alloc` table: Leaf's segment mode
/// (`SegmentIDGenImpl`), sharing the table with Leaf nodes, with takes at the cost of one atomic
/// add (feature `segment`).
///
/// For every tag (a row of `leaf_alloc`), ranges of numbers are claimed with Leaf's own
/// transaction; a take hands out the next number of the current range from memory; the next
/// range is claimed in the background once a tenth of the current one is used; the step
/// follows Leaf's dynamic rule. The repository's [`docs/segments.md`] says how it works, what it
/// adds to Leaf (durable claims, restarts that lose no range) and the table's rules.
///
/// [`docs/segments.md`]: https://github.com/ringflake/ringflake/blob/main/docs/segments.md
///
/// # Taking numbers
///
/// [`next_id`](Self::next_id) and [`next_ids`](Self::next_ids) by tag name (a map lookup per
/// call); a [`SegmentTag`](crate::SegmentTag) handle ([`tag`](Self::tag)) takes without the
/// lookup, one atomic add a number, and has per-thread takers
/// ([`SegmentTag::local`](crate::SegmentTag::local)) and async takes.
///
/// # Examples
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use ringflake::{SegmentGenerator, SegmentTable};
///
/// let dir = tempfile::tempdir().unwrap();
/// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
/// table.add("orders", 1, 1000, "order numbers")?;
/// let g = SegmentGenerator::builder(table).build()?;
/// let a = g.next_id("orders")?;
/// let mut batch = [0i64; 100];
/// g.next_ids("orders", &mut batch)?;
/// assert_eq!(a, 1);
/// assert_eq!(batch[0], 2);
/// assert_eq!(batch[99], 101);
/// # }
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct SegmentGenerator {
    pub(crate) shared: Arc<Shared>,
    threads: Option<(JoinHandle<()>, JoinHandle<()>)>,
}

impl fmt::Debug for SegmentGenerator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SegmentGenerator")
            .field("table", &self.shared.table.describe())
            .field("tags", &self.tags().len())
            .finish_non_exhaustive()
    }
}

impl SegmentGenerator {
    /// A builder on `table`.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// assert!(g.tags().is_empty());
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn builder(table: SegmentTable) -> SegmentBuilder {
        SegmentBuilder {
            table,
            state_dir: None,
            max_wait: DEFAULT_SEGMENT_MAX_WAIT,
            refresh: DEFAULT_SEGMENT_REFRESH,
            min_chunk: DEFAULT_MIN_CHUNK,
            clock: Arc::new(SystemClock),
        }
    }

    /// The tags served, by name (as last read from the table).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("users", 1, 10, "")?;
    /// table.add("orders", 1, 10, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// assert_eq!(g.tags(), ["orders", "users"]);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn tags(&self) -> Vec<String> {
        let tags = self.shared.tags.read().unwrap_or_else(|e| e.into_inner());
        tags.keys().cloned().collect()
    }

    /// The rows of the table that are not served, each with the reason (a `biz_tag` a URL
    /// cannot carry as it is, see [`SegmentError::InvalidTag`]).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("ids.db");
    /// let table = ringflake::SegmentTable::sqlite(&path)?;
    /// table.rows()?; // creates the table
    /// rusqlite::Connection::open(&path).unwrap()
    ///     .execute("INSERT INTO leaf_alloc (biz_tag, step) VALUES ('order id', 10)", []).unwrap();
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let skipped = g.skipped();
    /// assert_eq!(skipped[0].0, "order id");
    /// assert!(skipped[0].1.contains("character ' ' at byte 5"), "{}", skipped[0].1);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn skipped(&self) -> Vec<(String, String)> {
        crate::lock::lock(&self.shared.skipped).clone()
    }

    /// Reads the tags again now (as the generator does every
    /// [`refresh_interval`](SegmentBuilder::refresh_interval)): tags added to the table are
    /// served, removed ones are dropped (their takes fail with [`SegmentError::Removed`]).
    ///
    /// # Errors
    ///
    /// [`Error::Database`] if the table cannot be read.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let g = ringflake::SegmentGenerator::builder(table.clone()).build()?;
    /// table.add("late", 1, 10, "")?;
    /// assert!(g.next_id("late").is_err()); // not read yet
    /// g.refresh()?;
    /// assert_eq!(g.next_id("late")?, 1);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn refresh(&self) -> Result<(), Error> {
        self.shared.refresh()
    }

    /// The table, described without secrets.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// assert!(g.describe().ends_with("ids.db"));
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn describe(&self) -> String {
        self.shared.table.describe()
    }

    /// The state directory, if there is one.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// assert_eq!(g.state_dir(), None);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn state_dir(&self) -> Option<&Path> {
        self.shared.state.as_ref().map(StateDir::path)
    }

    /// How long a take waits when both segments are used up.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// assert_eq!(g.max_wait(), ringflake::DEFAULT_SEGMENT_MAX_WAIT);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn max_wait(&self) -> Duration {
        self.shared.max_wait
    }

    /// The fewest numbers a mark moves at once.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// assert_eq!(g.min_chunk(), ringflake::DEFAULT_MIN_CHUNK);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn min_chunk(&self) -> u64 {
        self.shared.min_chunk
    }
}

impl Drop for SegmentGenerator {
    /// Stops the two threads, then records in each tag's state file exactly how far its current
    /// segment was handed out: a clean stop loses no number.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.wake_keeper();
        self.shared.wake_claimer();
        if let Some((keeper, claimer)) = self.threads.take() {
            let _ = keeper.join();
            let _ = claimer.join();
        }
        self.shared.shut_down();
    }
}
