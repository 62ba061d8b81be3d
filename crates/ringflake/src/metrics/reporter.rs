//! [`MetricsReporter`]: a thread that samples a generator's [`Stats`] on an interval and sets
//! its [`GeneratorMetrics`].

use super::series::GeneratorMetrics;
use crate::{Error, Stats, StatsSource};
use std::fmt;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a [`MetricsReporter`] samples its generator unless told otherwise: 1 s.
///
/// ```
/// use ringflake::{CachedUidGenerator, DEFAULT_SAMPLE_INTERVAL, Layout, MetricsReporter};
/// use std::sync::Arc;
///
/// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
/// let reporter = MetricsReporter::builder("orders", &g).start()?;
/// assert_eq!(reporter.interval(), DEFAULT_SAMPLE_INTERVAL);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub const DEFAULT_SAMPLE_INTERVAL: Duration = Duration::from_secs(1);

/// Where a reporter learns how many worker ids are left.
type RemainingSource = Box<dyn Fn() -> Option<u64> + Send + Sync>;

struct Inner {
    series: GeneratorMetrics,
    generator: Weak<dyn StatsSource>,
    worker_ids_remaining: Option<RemainingSource>,
}

impl Inner {
    fn sample(&self) -> Option<Stats> {
        let generator = self.generator.upgrade()?;
        let stats = generator.stats();
        self.series.record(&stats);
        if let Some(n) = self.worker_ids_remaining.as_ref().and_then(|f| f()) {
            self.series.record_worker_ids_remaining(n);
        }
        Some(stats)
    }
}

/// Settings for a [`MetricsReporter`]; see [`MetricsReporter::builder`].
///
/// ```
/// use ringflake::{CachedUidGenerator, Layout, MetricsReporter};
/// use std::{sync::Arc, time::Duration};
///
/// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
/// let reporter = MetricsReporter::builder("orders", &g)
///     .interval(Duration::from_millis(250))
///     .start()?;
/// assert_eq!(reporter.interval(), Duration::from_millis(250));
/// # Ok::<(), ringflake::Error>(())
/// ```
#[must_use = "a reporter builder does nothing until `start` is called"]
pub struct ReporterBuilder {
    name: String,
    generator: Weak<dyn StatsSource>,
    interval: Duration,
    worker_ids_remaining: Option<RemainingSource>,
}

impl fmt::Debug for ReporterBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReporterBuilder")
            .field("name", &self.name)
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl ReporterBuilder {
    /// How often the reporter's thread samples the generator (default
    /// [`DEFAULT_SAMPLE_INTERVAL`], 1 s; at least 1 ms). Prometheus sees at most one value per
    /// scrape, so sampling much faster than the scrape interval only costs a little CPU.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, MetricsReporter};
    /// use std::{sync::Arc, time::Duration};
    ///
    /// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
    /// let err = MetricsReporter::builder("g", &g).interval(Duration::ZERO).start().unwrap_err();
    /// assert!(err.to_string().contains("sample interval"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// Reports `ringflake_worker_ids_remaining` from `source`, asked on every sample; `None`
    /// means "not known now" and leaves the series as it was (absent until a first value).
    /// Without a source the series is omitted.
    ///
    /// `source` runs on the reporter's thread once per interval: keep it cheap (e.g. read a
    /// number the application refreshes when it lists its worker table), not a query per call.
    ///
    /// ```
    /// use metrics_exporter_prometheus::PrometheusBuilder;
    /// use ringflake::{CachedUidGenerator, Layout, MetricsReporter};
    /// use std::sync::Arc;
    ///
    /// let layout = Layout::default();
    /// let g = Arc::new(CachedUidGenerator::builder(layout).worker_id(41).build()?);
    /// let recorder = PrometheusBuilder::new().build_recorder();
    /// let _reporter = metrics::with_local_recorder(&recorder, || {
    ///     MetricsReporter::builder("g", &g)
    ///         // worker ids 0..=41 are taken in the worker table
    ///         .worker_ids_remaining(move || Some(layout.max_worker_id() - 41))
    ///         .start()
    /// })?;
    /// let text = recorder.handle().render();
    /// assert!(text.contains(r#"ringflake_worker_ids_remaining{generator="g"} 982"#));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn worker_ids_remaining(
        mut self,
        source: impl Fn() -> Option<u64> + Send + Sync + 'static,
    ) -> Self {
        self.worker_ids_remaining = Some(Box::new(source));
        self
    }

    /// Registers the series with the current recorder, records a first sample on the calling
    /// thread, and starts the sampling thread.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for a zero interval; [`Error::ThreadSpawn`] if the thread cannot
    /// be spawned.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, MetricsReporter};
    /// use std::sync::Arc;
    ///
    /// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
    /// let reporter = MetricsReporter::builder("g", &g).start()?;
    /// assert_eq!(reporter.name(), "g");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn start(self) -> Result<MetricsReporter, Error> {
        if self.interval.is_zero() {
            return Err(Error::InvalidConfig {
                name: "sample interval (ms)",
                value: 0,
                allowed: "at least 1 ms",
            });
        }
        let inner = Arc::new(Inner {
            series: GeneratorMetrics::register(&self.name),
            generator: self.generator,
            worker_ids_remaining: self.worker_ids_remaining,
        });
        inner.sample();
        let (stop, stopped) = mpsc::channel::<()>();
        let interval = self.interval;
        let sampler = Arc::clone(&inner);
        let thread = std::thread::Builder::new()
            .name(format!("ringflake-metrics-{}", self.name))
            .spawn(move || {
                // Ends when the reporter is dropped (the sender goes away) or the generator is.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                    if sampler.sample().is_none() {
                        break;
                    }
                }
            })
            .map_err(|e| Error::thread_spawn(&format!("ringflake-metrics-{}", self.name), e))?;
        Ok(MetricsReporter {
            inner,
            interval,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

/// Samples a [`CachedUidGenerator`](crate::CachedUidGenerator)'s [`stats`](crate::CachedUidGenerator::stats) from its own thread on
/// an interval and sets the `ringflake_*` series through the `metrics` facade, labelled
/// `generator="<name>"`.
///
/// The handles are registered once, at [`start`](ReporterBuilder::start), with the recorder
/// current then: install the recorder (e.g. [`install_prometheus`](crate::install_prometheus)) before starting reporters.
/// The reporter holds the generator weakly: it does not keep it alive, and its thread ends when
/// the generator is dropped (the series keep their last values). Dropping the reporter stops
/// and joins its thread at once.
///
/// # Series
///
/// Every series has the label `generator` (one process can run several generators) and a
/// `# HELP` line saying what it means and its unit. The counters are the generator's own totals
/// (set with `absolute`, never incremented), so `rate()` and `increase()` work as usual.
///
/// | series | type | unit | meaning |
/// |---|---|---|---|
/// | `ringflake_ring_capacity` | gauge | IDs | slots in the ring |
/// | `ringflake_ring_available` | gauge | IDs | IDs ready to take: the fill level; at 0 takes wait for the filler |
/// | `ringflake_ring_fill_ratio` | gauge | 0–1 | fill level as a fraction of capacity |
/// | `ringflake_ids_issued_total` | counter | IDs | IDs handed out |
/// | `ringflake_paddings_total` | counter | rounds | filler rounds that wrote at least one ID |
/// | `ringflake_ids_discarded_total` | counter | IDs | IDs dropped unused: stale (older than `max_lag`) or abandoned by a failed take; includes the expired ones |
/// | `ringflake_ids_expired_total` | counter | IDs | of those, the IDs that expired in the ring unclaimed (each second's unused IDs at light load): idle capacity, not a fault |
/// | `ringflake_take_waits_total` | counter | takes | takes that found the ring empty and waited |
/// | `ringflake_waiting_takes` | gauge | takes | takes waiting in the first-come, first-served queue now; above 0 for long: held at the lead cap |
/// | `ringflake_waiting_ids` | gauge | IDs | IDs those takes still wait for: the queue ahead of a take that arrives now |
/// | `ringflake_time_lead_seconds` | gauge | seconds | how far the newest ID is ahead of the clock (borrowed seconds) |
/// | `ringflake_time_lag_seconds` | gauge | seconds | how far the oldest ready ID is behind the clock |
/// | `ringflake_time_remaining_seconds` | gauge | seconds | until the layout's time bits run out, borrowed seconds counted as used |
/// | `ringflake_worker_id` | gauge | none (an id) | the generator's worker id |
/// | `ringflake_worker_ids_remaining` | gauge | worker ids | worker ids still free; only if the application reports it ([`worker_ids_remaining`](ReporterBuilder::worker_ids_remaining)) |
/// | `ringflake_worker_heals_total` | counter | heals | times the generator took a new worker id by itself after losing its lease for good |
/// | `ringflake_filler_up` | gauge | 0 or 1 | 1 while the filler thread runs, 0 if it stopped |
/// | `ringflake_lease_extension_failures_total` | counter | attempts | attempts to extend the worker lease that failed; always 0 without a lease |
/// | `ringflake_lease_lost_writes_total` | counter | lost writes | times the worker table was found to have lost this node's write (a failover to a standby that lacked it); always 0 without a lease |
/// | `ringflake_lease_expiry_timestamp_seconds` | gauge | seconds (unix time) | when the worker lease runs out unless extended; only for generators with a lease |
/// | `ringflake_lease_fenced` | gauge | 0 or 1 | 1 while the lease holds but says nothing may be served: worker ids from ZooKeeper, the ensemble silent for a third of the session timeout (the node is fenced); only for generators with a lease |
/// | `ringflake_clock_skew_seconds` | gauge | seconds | this node's clock minus the worker table's database's, round-trip corrected (positive: ahead); beyond the lead cap (at least 10 s) nothing is served; only with a lease in PostgreSQL or MariaDB/MySQL |
/// | `ringflake_build_info` | gauge | always 1 | labelled `version` and `commit` (no `generator` label): which build the process runs |
///
/// A sample (one `stats()` and nineteen handle updates, twenty-one with a lease, twenty-two with
/// a lease in a server database) takes about 0.2 µs; nothing on the take
/// path calls metrics. The filler can set the same series itself after its rounds
/// ([`CachedBuilder::record_stats`](crate::CachedBuilder::record_stats) with a
/// [`GeneratorMetrics`]), so that `ringflake_filler_up` drops to 0 the moment it stops.
///
/// # Examples
///
/// ```
/// use metrics_exporter_prometheus::PrometheusBuilder;
/// use ringflake::{CachedUidGenerator, Layout, MetricsReporter};
/// use std::{sync::Arc, time::Duration};
///
/// let recorder = PrometheusBuilder::new().build_recorder();
/// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
/// let _reporter = metrics::with_local_recorder(&recorder, || {
///     MetricsReporter::builder("g", &g).interval(Duration::from_millis(10)).start()
/// })?;
/// for _ in 0..5 {
///     g.next_id()?;
/// }
/// std::thread::sleep(Duration::from_millis(200)); // the reporter's thread samples meanwhile
/// let text = recorder.handle().render();
/// assert!(text.contains(r#"ringflake_ids_issued_total{generator="g"} 5"#));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct MetricsReporter {
    inner: Arc<Inner>,
    interval: Duration,
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for MetricsReporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsReporter")
            .field("name", &self.inner.series.name())
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl MetricsReporter {
    /// Starts configuring a reporter for `generator`, whose series carry `generator="<name>"`.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, MetricsReporter, DEFAULT_SAMPLE_INTERVAL};
    /// use std::sync::Arc;
    ///
    /// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
    /// let reporter = MetricsReporter::builder("orders", &g).start()?;
    /// assert_eq!(reporter.interval(), DEFAULT_SAMPLE_INTERVAL);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn builder<G: StatsSource>(name: &str, generator: &Arc<G>) -> ReporterBuilder {
        let generator: Arc<dyn StatsSource> = Arc::clone(generator) as Arc<dyn StatsSource>;
        ReporterBuilder {
            name: name.to_owned(),
            generator: Arc::downgrade(&generator),
            interval: DEFAULT_SAMPLE_INTERVAL,
            worker_ids_remaining: None,
        }
    }

    /// Samples the generator now, on the calling thread, sets the series and returns the
    /// snapshot; `None` if the generator has been dropped.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, MetricsReporter};
    /// use std::sync::Arc;
    ///
    /// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
    /// let reporter = MetricsReporter::builder("g", &g).start()?;
    /// g.next_id()?;
    /// assert_eq!(reporter.sample().map(|s| s.issued), Some(1));
    /// drop(g);
    /// assert!(reporter.sample().is_none());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn sample(&self) -> Option<Stats> {
        self.inner.sample()
    }

    /// The value of the `generator` label.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, MetricsReporter};
    /// use std::sync::Arc;
    /// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
    /// assert_eq!(MetricsReporter::builder("tags", &g).start()?.name(), "tags");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        self.inner.series.name()
    }

    /// How often the reporter's thread samples.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, MetricsReporter};
    /// use std::{sync::Arc, time::Duration};
    /// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
    /// let r = MetricsReporter::builder("g", &g).interval(Duration::from_secs(5)).start()?;
    /// assert_eq!(r.interval(), Duration::from_secs(5));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// The registered series, e.g. to set `ringflake_worker_ids_remaining` from the
    /// application when it learns the number.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, MetricsReporter};
    /// use std::sync::Arc;
    /// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
    /// let reporter = MetricsReporter::builder("g", &g).start()?;
    /// reporter.metrics().record_worker_ids_remaining(12);
    /// assert_eq!(reporter.metrics().name(), "g");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn metrics(&self) -> &GeneratorMetrics {
        &self.inner.series
    }
}

impl Drop for MetricsReporter {
    /// Stops and joins the sampling thread.
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
