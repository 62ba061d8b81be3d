//! The settings of a [`CachedUidGenerator`] and its start: checks, the first fill, the filler
//! thread.

use super::filler::filler_thread;
use super::lead::{DEFAULT_MAX_LEAD, LeadPolicy};
use super::renewal::Renewal;
use super::shared::{CachedUidGenerator, Counters, FillerState, NEXT_GENERATOR_ID, Reach, Shared};
use super::stats::StatsSink;
use crate::boot::{Boot, Limits};
use crate::reach::ReachFile;
use crate::ring::Ring;
use crate::{Clock, Error, Layout, SystemClock};
use crossbeam_utils::CachePadded;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The default [`CachedBuilder::schedule_interval`] of a layout of seconds: the filler looks at
/// the ring every 250 ms when no take wakes it.
///
/// ```
/// assert_eq!(ringflake::DEFAULT_SCHEDULE_INTERVAL.as_millis(), 250);
/// ```
pub const DEFAULT_SCHEDULE_INTERVAL: Duration = Duration::from_millis(250);

/// The default [`CachedBuilder::schedule_interval`] of a layout of ticks shorter than a second
/// (milliseconds, 10 ms): every 10 ms, each round writing the clock's tick in place of the older
/// ticks' unused IDs, so that at light load an ID carries a time at most about 10 ms old (with
/// 250 ms rounds, and IDs kept up to `max_lag`, a Twitter ID at light load was 0.75 to 1 s old).
///
/// ```
/// use ringflake::{CachedUidGenerator, Layout, ManualClock};
/// let layout = Layout::twitter();
/// let clock = ManualClock::new(1_800_000_000_000);
/// let g = CachedUidGenerator::builder(layout)
///     .worker_id(1)
///     .clock(clock.clone())
///     .background_filler(false)
///     .build()?;
/// g.next_id()?; // tick T written, one taken
/// clock.set_millis(1_800_000_000_010);
/// g.pad(); // a round 10 ms later: tick T + 10 replaces the rest of tick T
/// assert_eq!(layout.parse(g.next_id()?)?.unix_millis, 1_800_000_000_010);
/// assert_eq!(ringflake::TICK_SCHEDULE_INTERVAL.as_millis(), 10);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub const TICK_SCHEDULE_INTERVAL: Duration = Duration::from_millis(10);

/// The default [`CachedBuilder::max_lag`]: IDs more than 1 s behind the clock are discarded,
/// never handed out, so that light load carries the current second.
///
/// ```
/// use ringflake::{CachedUidGenerator, DEFAULT_MAX_LAG, Layout};
/// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
/// assert_eq!(g.stats().max_lag_seconds, DEFAULT_MAX_LAG.as_secs());
/// # Ok::<(), ringflake::Error>(())
/// ```
pub const DEFAULT_MAX_LAG: Duration = Duration::from_secs(1);

/// The default [`CachedBuilder::boost_power`], UidGenerator's: the ring holds
/// `2^seq_bits << 3` IDs, eight seconds' worth.
///
/// ```
/// use ringflake::{CachedUidGenerator, DEFAULT_BOOST_POWER, Layout};
/// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
/// assert_eq!(g.stats().capacity, 1 << (Layout::default().seq_bits() + DEFAULT_BOOST_POWER));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub const DEFAULT_BOOST_POWER: u32 = 3;

/// The default [`CachedBuilder::padding_factor`], UidGenerator's: the filler is woken below half
/// full.
///
/// ```
/// use ringflake::{CachedUidGenerator, DEFAULT_PADDING_FACTOR, Layout};
/// let builder = format!("{:?}", CachedUidGenerator::builder(Layout::default()));
/// assert!(builder.contains(&format!("padding_factor: {DEFAULT_PADDING_FACTOR},")), "{builder}");
/// ```
pub const DEFAULT_PADDING_FACTOR: u32 = 50;

/// Settings for a [`CachedUidGenerator`]; see [`CachedUidGenerator::builder`].
///
/// ```
/// use ringflake::{CachedUidGenerator, Layout};
///
/// // A ring of 2^22 << 2 IDs; a second ahead is borrowed when fewer than 30% of a second's IDs
/// // are ready.
/// let ids = CachedUidGenerator::builder(Layout::default())
///     .worker_id(7)
///     .boost_power(2)
///     .padding_factor(30)
///     .build()?;
/// assert_eq!(ids.worker_id(), 7);
/// assert_eq!(ids.stats().capacity, (1 << 22) << 2);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct CachedBuilder {
    layout: Layout,
    assignment: crate::boot::Claim,
    /// Where to take another worker id (see [`WorkerIdAssigner::retaker`]).
    ///
    /// [`WorkerIdAssigner::retaker`]: crate::WorkerIdAssigner::retaker
    retake: Option<Box<dyn crate::WorkerIdAssigner + Send + Sync>>,
    clock: Arc<dyn Clock>,
    boost_power: u32,
    padding_factor: u32,
    /// `None`: [`DEFAULT_SCHEDULE_INTERVAL`], or [`TICK_SCHEDULE_INTERVAL`] for ticks shorter
    /// than a second.
    schedule_interval: Option<Duration>,
    max_lag: Duration,
    max_lead: Option<(Duration, LeadPolicy)>,
    state_file: Option<PathBuf>,
    background: bool,
    sink: Option<Box<dyn StatsSink>>,
    above: Option<u64>,
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
            .field("state_file", &self.state_file)
            .field("above", &self.above)
            .finish_non_exhaustive()
    }
}

/// The largest ring: 2^28 IDs.
const MAX_RING_BITS: u32 = 28;

/// The bits the ring grows by for ticks shorter than a second, so that it holds a second of
/// IDs as for a seconds layout: 10 for milliseconds (1,024 >= 1,000 ticks), 7 for 10 ms (128 >=
/// 100), 0 for seconds.
fn tick_bits(layout: &Layout) -> u32 {
    layout
        .unit()
        .per_second()
        .next_power_of_two()
        .trailing_zeros()
}

/// The largest chunk: 2^10 consecutive IDs per ring slot.
const CHUNK_BITS: u32 = 10;

impl CachedBuilder {
    crate::boot::start_setters!(CachedUidGenerator);

    /// The ring holds `2^seq_bits << boost_power` IDs (default 3: eight seconds' worth, used only
    /// while borrowing: at light load it holds the current second, rule 3).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).boost_power(1).build()?;
    /// assert_eq!(g.stats().capacity, 1 << 23);
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
    /// 250 ms, [`DEFAULT_SCHEDULE_INTERVAL`]; 10 ms for ticks shorter than a second,
    /// [`TICK_SCHEDULE_INTERVAL`], where each round's current tick replaces the older ticks'
    /// unused IDs, so that at light load an ID is at most this old; never longer than a quarter
    /// of `max_lag`).
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
        self.schedule_interval = Some(interval);
        self
    }

    /// IDs more than this behind the clock are discarded, never handed out (default 1 s, at
    /// least 1 s): at light load the ring holds one second's IDs, and those left when the clock
    /// moves on are dropped within `schedule_interval`, so IDs tell the time within a second.
    /// With ticks shorter than a second each round's tick replaces the older ticks' unused IDs,
    /// so that at light load they tell it within a round ([`TICK_SCHEDULE_INTERVAL`]).
    /// A longer `max_lag` keeps them longer (fewer discarded, older seconds in IDs).
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

    /// Caps how far ahead of the clock the filler may borrow (whole seconds; default
    /// [`DEFAULT_MAX_LEAD`], 10 s, with [`LeadPolicy::Wait`]). At the cap, takes wait for the clock
    /// or fail, as `policy` says; batches that the cap can never hold are refused at once
    /// ([`Error::BatchTooLarge`]). The cap holds at any load, right after boot and after the
    /// clock is set back (the generator then waits or fails until the clock is within `max_lead`
    /// of the last second it used).
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringflake::{CachedUidGenerator, Layout, LeadPolicy};
    /// let g = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id(1)
    ///     .max_lead(Duration::from_secs(60), LeadPolicy::Fail)
    ///     .build()?;
    /// assert_eq!(g.max_lead(), Some(Duration::from_secs(60)));
    /// assert!(g.stats().lead_seconds <= 60);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn max_lead(mut self, max_lead: Duration, policy: LeadPolicy) -> Self {
        self.max_lead = Some((max_lead, policy));
        self
    }

    /// The layout this builder makes IDs in (as given to [`CachedUidGenerator::builder`]).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let b = CachedUidGenerator::builder(Layout::default()).worker_id(1);
    /// assert_eq!(b.layout(), &Layout::default());
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The lead cap the generator will have and its policy at the cap (`None`: unbounded), as
    /// [`max_lead`](Self::max_lead) or [`unbounded_lead`](Self::unbounded_lead) set it.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, DEFAULT_MAX_LEAD, Layout, LeadPolicy};
    /// let b = CachedUidGenerator::builder(Layout::default());
    /// assert_eq!(b.lead(), Some((DEFAULT_MAX_LEAD, LeadPolicy::Wait)));
    /// assert_eq!(b.unbounded_lead().lead(), None);
    /// ```
    pub fn lead(&self) -> Option<(Duration, LeadPolicy)> {
        self.max_lead
    }

    /// The state file the generator will record its reach in, if any
    /// ([`state_file`](Self::state_file)).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let b = CachedUidGenerator::builder(Layout::default()).state_file("ids.state");
    /// assert_eq!(b.state_path(), Some(std::path::Path::new("ids.state")));
    /// ```
    pub fn state_path(&self) -> Option<&std::path::Path> {
        self.state_file.as_deref()
    }

    /// Lets the filler borrow as far ahead of the clock as demand takes it, as Java's
    /// `CachedUidGenerator` does: only for parity with Java. Flat out, a generator then borrows
    /// thousands of seconds per second and uses up the layout's lifetime that fast; restarts
    /// start above everything borrowed.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).unbounded_lead().build()?;
    /// assert_eq!(g.max_lead(), None);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn unbounded_lead(mut self) -> Self {
        self.max_lead = None;
        self
    }

    /// Records in `path`, durably and before use, the highest second this generator may use, and
    /// starts above what the file already records: a restart of the same worker id on this host
    /// (a fixed id, a StatefulSet ordinal, a recycled row, a recreated worker table) never repeats
    /// an ID of an earlier run, even one killed with SIGKILL. The file only grows and may be
    /// shared by every generator of a host (they then start above each other's reach). The filler
    /// writes it about once a second under load (write, sync, rename); if it cannot, no ID past
    /// what it records is made and takes fail with [`Error::StateFile`] once the ring is empty.
    /// A file that exists but holds no state is an error at build, never ignored. A worker id
    /// no source leases (a fixed one) is held on the file for the generator's life: a second
    /// live generator of this host with the same worker id and the same state file fails to
    /// build ([`Error::WorkerAssignment`]).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, ManualClock};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let state = dir.path().join("ringflake.state");
    /// let clock = ManualClock::from_seconds(1_800_000_000);
    /// let build = || {
    ///     CachedUidGenerator::builder(Layout::default())
    ///         .worker_id(7)
    ///         .clock(clock.clone())
    ///         .state_file(&state)
    ///         .build()
    /// };
    /// let first = build()?;
    /// let last_of_first = first.next_id()?;
    /// assert!(build().is_err()); // worker id 7 is the first's while it lives
    /// drop(first); // or killed: a fixed worker id has no lease, the file keeps what it recorded
    /// let second = build()?; // same worker id, same second on the clock
    /// assert!(second.next_id()? > last_of_first);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn state_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.state_file = Some(path.into());
        self
    }

    /// Has the filler thread hand its [`Stats`](crate::Stats) to `sink` itself: after each of its
    /// rounds (a refill woken by a take at the threshold, or its `schedule_interval` tick), at most
    /// once per [`FILLER_RECORD_INTERVAL`](crate::FILLER_RECORD_INTERVAL), and once more as its
    /// thread ends, with `filler_up` false, even when it ends by a panic. With a
    /// [`GeneratorMetrics`](crate::GeneratorMetrics) as the sink (feature `metrics`), scrapes see
    /// the fill level as of the filler's last round with no reporter thread, and
    /// `ringflake_filler_up` drops to 0 when the filler ends; a
    /// [`MetricsReporter`](crate::MetricsReporter) is still the way to sample on a fixed interval
    /// and to report `ringflake_worker_ids_remaining`. Nothing is recorded by takes, and nothing
    /// without a background filler.
    ///
    /// ```
    /// use metrics_exporter_prometheus::PrometheusBuilder;
    /// use ringflake::{CachedUidGenerator, GeneratorMetrics, Layout};
    ///
    /// let recorder = PrometheusBuilder::new().build_recorder();
    /// let series = metrics::with_local_recorder(&recorder, || GeneratorMetrics::register("orders"));
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(4).record_stats(series).build()?;
    /// drop(g); // the filler records as it stops
    /// let text = recorder.handle().render();
    /// assert!(text.contains(r#"ringflake_worker_id{generator="orders"} 4"#));
    /// assert!(text.contains(r#"ringflake_filler_up{generator="orders"} 0"#));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn record_stats(mut self, sink: impl StatsSink) -> Self {
        self.sink = Some(Box::new(sink));
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

    /// Checks everything [`build`](Self::build) checks before it claims a worker id, and claims
    /// nothing: the settings, the worker id if it is already known (or the assigner's error), the
    /// layout alive at the clock's time, the state file, and, while the worker id is unknown, an
    /// [`above`](Self::above) that no worker id's first ID exceeds within the lead cap. A service that starts several generators
    /// checks them all before it builds any, so that one refused takes no worker id for the
    /// others.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build)'s, for those checks.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, DatabaseAssigner, Layout};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = DatabaseAssigner::sqlite(dir.path().join("workers.db"))?;
    /// let ok = CachedUidGenerator::builder(Layout::default()).worker_id_from(&table);
    /// let expired = CachedUidGenerator::builder(Layout::uid_generator_defaults()).worker_id_from(&table);
    /// assert!(ok.check().is_ok());
    /// assert!(expired.check().unwrap_err().to_string().contains("2024-11-20T13:24:15Z"));
    /// assert!(table.list()?.is_empty()); // nothing claimed
    /// assert_eq!(ok.build()?.worker_id(), 1);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn check(&self) -> Result<(), Error> {
        self.settings()?;
        match &self.assignment {
            crate::boot::Claim::Made(Err(e)) => return Err(e.clone()),
            crate::boot::Claim::Made(Ok(a)) => {
                crate::worker::assigner::check_fits(a.worker_id, &self.layout)?;
            }
            crate::boot::Claim::AtBuild => {}
        }
        let state = self.state_file.as_ref().map(ReachFile::new);
        let unknown = matches!(self.assignment, crate::boot::Claim::AtBuild);
        crate::boot::unclaimed_checks(
            &self.layout,
            self.clock.now_seconds(),
            state.as_ref(),
            self.max_lead.map(|(lead, _)| lead.as_secs()),
            self.above.filter(|_| unknown),
        )
        .map(|_| ())
    }

    /// Checks the ring's settings; returns the schedule interval.
    fn settings(&self) -> Result<Duration, Error> {
        let layout = self.layout;
        if self
            .boost_power
            .checked_add(layout.seq_bits() + tick_bits(&layout))
            .is_none_or(|bits| bits > MAX_RING_BITS)
        {
            return Err(Error::InvalidConfig {
                name: "boost_power",
                value: u64::from(self.boost_power),
                allowed: "such that seq_bits + boost_power <= 28 (plus 10 for millisecond \
                          ticks, 7 for 10 ms ticks)",
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
        let schedule_interval = self.schedule_interval.unwrap_or(match layout.unit() {
            crate::TimeUnit::Seconds => DEFAULT_SCHEDULE_INTERVAL,
            _ => TICK_SCHEDULE_INTERVAL,
        });
        if schedule_interval.is_zero() {
            return Err(Error::InvalidConfig {
                name: "schedule_interval (ms)",
                value: 0,
                allowed: "at least 1 ms",
            });
        }
        Ok(schedule_interval)
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
        let schedule_interval = self.settings()?;
        let layout = self.layout;
        let max_lead = self.max_lead.map(|(d, p)| (d.as_secs(), p));
        let mut reach = self.state_file.map(|path| Reach {
            file: ReachFile::new(path),
            reserved: AtomicI64::new(i64::MIN),
            error: Mutex::new(None),
            _held: None,
        });
        let Boot {
            worker_id,
            floor,
            keeper,
            given_back,
        } = Boot::start(
            self.assignment,
            self.retake
                .as_deref()
                .map(|r| r as &dyn crate::WorkerIdAssigner),
            &layout,
            &self.clock,
            reach.as_ref().map(|r| &r.file),
            Limits {
                max_lead: max_lead.map(|(lead, _)| lead),
                patience: self.max_lag.as_secs(),
            },
            self.above,
        )?;
        // A worker id without a lease (a fixed one) is held on the state file: a second live
        // generator of this host with the same one and the same file is refused.
        if let (None, Some(r)) = (&keeper, &mut reach) {
            r._held = Some(r.file.hold(worker_id)?);
        }
        if let Some(k) = &keeper {
            // The database as a second clock: read before the first ID is made.
            k.watch_database_clock(self.max_lag, max_lead.map(|(lead, _)| lead));
        }
        // One tick's IDs (one second's for a seconds layout; for shorter ticks, rounded up to
        // a power of two: the ring holds as much time as a seconds layout's) << boost_power.
        let capacity = 1u64 << (layout.seq_bits() + tick_bits(&layout) + self.boost_power);
        // Chunks of up to 1024 IDs, and at least two chunks in the ring. A chunk is a run of
        // consecutive integers; with the sequence above the worker id (Sonyflake's order) one
        // worker's consecutive IDs are 2^worker_bits apart, so each chunk holds one ID (as the
        // remote client's buffer does): a slot read per ID (Sonyflake makes 25,600 a second).
        let chunk_bits = match layout.order() {
            crate::FieldOrder::WorkerAboveSequence => layout
                .seq_bits()
                .min(CHUNK_BITS)
                .min(layout.seq_bits() + tick_bits(&layout) + self.boost_power - 1),
            crate::FieldOrder::SequenceAboveWorker => 0,
        };
        let shared = Arc::new(Shared {
            id: NEXT_GENERATOR_ID.fetch_add(1, Ordering::Relaxed),
            ring: Ring::new(capacity, chunk_bits),
            layout,
            worker_id: AtomicU64::new(worker_id),
            clock: Arc::clone(&self.clock),
            // Rule 3: of one second's IDs, or of the ring if it holds less; the first tick
            // ahead, of one tick's.
            threshold: capacity
                .min((layout.max_sequence() + 1).saturating_mul(layout.unit().per_second()))
                * u64::from(self.padding_factor)
                / 100,
            tick_threshold: capacity.min(layout.max_sequence() + 1)
                * u64::from(self.padding_factor)
                / 100,
            max_lag_secs: self.max_lag.as_secs(),
            max_lag_ticks: (self.max_lag.as_millis() / u128::from(layout.unit().millis())) as u64,
            max_lead,
            tick: schedule_interval.min(self.max_lag / 4),
            background: self.background,
            filler: Mutex::new(FillerState {
                next_delta: floor,
                next_seq: 0,
                tail: 0,
            }),
            #[cfg(feature = "tokio")]
            async_waiters: Default::default(),
            renewal: match (&keeper, self.retake) {
                (Some(keeper), Some(retaker)) => {
                    let renewal = Arc::new(Renewal::default());
                    keeper.set_renew(renewal.renew_with(retaker, layout));
                    Some(renewal)
                }
                _ => None,
            },
            keeper,
            reach,
            queue: Default::default(),
            counters: CachePadded::new(Counters::default()),
            filler_thread: OnceLock::new(),
            sink: self.sink,
            given_back,
        });
        shared
            .counters
            .demand_second
            .store(shared.clock.now_seconds(), Ordering::Relaxed);
        shared.pump();
        let handle = if self.background {
            let s = Arc::clone(&shared);
            // The filler logs in the span the generator is built in (the application's name for
            // it, if it gave one).
            let span = tracing::Span::current();
            shared.counters.filler_up.store(true, Ordering::SeqCst);
            let handle = std::thread::Builder::new()
                .name("ringflake-filler".into())
                .spawn(move || filler_thread(&s, &span))
                .map_err(|e| {
                    shared.counters.filler_up.store(false, Ordering::SeqCst);
                    Error::thread_spawn("ringflake-filler", e)
                })?;
            let _ = shared.filler_thread.set(handle.thread().clone());
            if let Some(renewal) = &shared.renewal {
                let _ = renewal.filler.set(handle.thread().clone());
            }
            Some(handle)
        } else {
            None
        };
        Ok(CachedUidGenerator { shared, handle })
    }
}

impl CachedUidGenerator {
    /// Starts configuring a generator for `layout`. Defaults: system clock, boost power 3,
    /// padding factor 50, `max_lag` 1 s, `max_lead` 10 s with [`LeadPolicy::Wait`], no state
    /// file, a background filler. A worker id is required.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// assert!(CachedUidGenerator::builder(Layout::default()).build().is_err()); // no worker id
    /// ```
    pub fn builder(layout: Layout) -> CachedBuilder {
        CachedBuilder {
            layout,
            retake: None,
            assignment: crate::boot::Claim::none(),
            clock: Arc::new(SystemClock),
            boost_power: DEFAULT_BOOST_POWER,
            padding_factor: DEFAULT_PADDING_FACTOR,
            schedule_interval: None,
            max_lag: DEFAULT_MAX_LAG,
            max_lead: Some((DEFAULT_MAX_LEAD, LeadPolicy::Wait)),
            state_file: None,
            background: true,
            sink: None,
            above: None,
        }
    }
}
