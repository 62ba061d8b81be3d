//! The `ringflake_*` series of a generator: their names, types and `# HELP` texts, and
//! [`GeneratorMetrics`], the handles a sample sets.

use crate::{Stats, StatsSink};
use ::metrics::{Counter, Gauge, Unit, counter, describe_counter, describe_gauge, gauge};
use std::fmt;
use std::sync::OnceLock;

/// The label naming the generator on every series.
const LABEL: &str = "generator";

const RING_CAPACITY: &str = "ringflake_ring_capacity";
const RING_AVAILABLE: &str = "ringflake_ring_available";
const RING_FILL_RATIO: &str = "ringflake_ring_fill_ratio";
const IDS_ISSUED: &str = "ringflake_ids_issued_total";
const PADDINGS: &str = "ringflake_paddings_total";
const IDS_DISCARDED: &str = "ringflake_ids_discarded_total";
const IDS_EXPIRED: &str = "ringflake_ids_expired_total";
const TAKE_WAITS: &str = "ringflake_take_waits_total";
const WAITING_TAKES: &str = "ringflake_waiting_takes";
const WAITING_IDS: &str = "ringflake_waiting_ids";
const TIME_LEAD: &str = "ringflake_time_lead_seconds";
const TIME_LAG: &str = "ringflake_time_lag_seconds";
const TIME_REMAINING: &str = "ringflake_time_remaining_seconds";
const WORKER_ID: &str = "ringflake_worker_id";
const WORKER_IDS_REMAINING: &str = "ringflake_worker_ids_remaining";
const WORKER_HEALS: &str = "ringflake_worker_heals_total";
const FILLER_UP: &str = "ringflake_filler_up";
const LEASE_FAILURES: &str = "ringflake_lease_extension_failures_total";
const LEASE_LOST_WRITES: &str = "ringflake_lease_lost_writes_total";
const LEASE_EXPIRY: &str = "ringflake_lease_expiry_timestamp_seconds";
const LEASE_FENCED: &str = "ringflake_lease_fenced";
const CLOCK_SKEW: &str = "ringflake_clock_skew_seconds";
const BUILD_INFO: &str = "ringflake_build_info";

use crate::build_info::{COMMIT, VERSION};

/// Sends every series' type, unit and `# HELP` text to the current recorder. Idempotent.
///
/// The Prometheus text format has no unit line (and the exporter appends no unit suffix by
/// default), so each HELP text states its unit in words as well.
fn describe() {
    describe_gauge!(
        BUILD_INFO,
        "Always 1, unitless, labelled with the ringflake version and the commit it was built from \
         (commit \"unknown\" without git history): join on it to see which build each process \
         runs."
    );
    describe_gauge!(
        RING_CAPACITY,
        Unit::Count,
        "Slots in the generator's ring, in IDs: the most IDs it can hold ready to take."
    );
    describe_gauge!(
        RING_AVAILABLE,
        Unit::Count,
        "IDs in the ring ready to take (the fill level), in IDs. At 0 takes wait for the filler."
    );
    // A fraction has no `metrics::Unit` (`Unit::Percent` would claim 0 to 100).
    describe_gauge!(
        RING_FILL_RATIO,
        "Fill level as a fraction of the ring's capacity, unitless: 0 is empty, 1 is full."
    );
    describe_counter!(
        IDS_ISSUED,
        Unit::Count,
        "IDs handed out by the generator since it started, in IDs."
    );
    describe_counter!(
        PADDINGS,
        Unit::Count,
        "Filler rounds that wrote at least one ID into the ring since the generator started, in rounds."
    );
    describe_counter!(
        IDS_DISCARDED,
        Unit::Count,
        "IDs dropped unused since the generator started, in IDs: stale (waited longer than max_lag) or abandoned by a failed take. Includes ringflake_ids_expired_total."
    );
    describe_counter!(
        IDS_EXPIRED,
        Unit::Count,
        "Of the IDs dropped unused, those that expired in the ring since the generator started, in IDs: written for a second that passed before any take claimed them. Idle capacity, not a fault."
    );
    describe_counter!(
        TAKE_WAITS,
        Unit::Count,
        "Takes that found the ring empty and had to wait for the filler, in takes."
    );
    describe_gauge!(
        WAITING_TAKES,
        Unit::Count,
        "Takes waiting in the queue now (batches, async takes, and takes that arrived while others waited), served first come, first served, in takes. Above 0 for long: held at the lead cap."
    );
    describe_gauge!(
        WAITING_IDS,
        Unit::Count,
        "IDs the waiting takes still wait for (the queue ahead of a take that arrives now), in IDs. At the lead cap 2^seq_bits of them become ready per second."
    );
    describe_gauge!(
        TIME_LEAD,
        Unit::Seconds,
        "How far the newest ID in the ring is ahead of the clock (borrowed future seconds), in seconds; 0 if not ahead."
    );
    describe_gauge!(
        TIME_LAG,
        Unit::Seconds,
        "How far the oldest ID ready to take is behind the clock, in seconds; 0 if none is behind."
    );
    describe_gauge!(
        TIME_REMAINING,
        Unit::Seconds,
        "Time until the layout's time bits run out, borrowed seconds counted as used, in seconds."
    );
    // An identifier: no unit.
    describe_gauge!(
        WORKER_ID,
        "The generator's worker id, an identifier with no unit."
    );
    describe_gauge!(
        WORKER_IDS_REMAINING,
        Unit::Count,
        "Worker ids still free for new nodes, as the worker id assigner reports, in worker ids."
    );
    describe_counter!(
        WORKER_HEALS,
        Unit::Count,
        "Times the generator took a new worker id by itself after losing its lease for good (its row taken over by another node, or gone), in heals. The generator serves on under the new id."
    );
    describe_gauge!(
        FILLER_UP,
        "1 while the generator's background filler thread runs, 0 if it stopped (takes then fail); unitless."
    );
    describe_counter!(
        LEASE_LOST_WRITES,
        Unit::Count,
        "Times the worker table was found to have lost this node's write (its row gone, an older lease than written, or another node's before this node's lease expired): a failover to a standby that lacked it. The generator stops the worker id at once and takes another; in lost writes."
    );
    describe_counter!(
        LEASE_FAILURES,
        Unit::Count,
        "Attempts to extend the worker lease that failed since the generator started, in attempts (about one a second while the worker table cannot be updated; always 0 without a lease)."
    );
    describe_gauge!(
        LEASE_EXPIRY,
        Unit::Seconds,
        "When the worker lease runs out unless extended, as a unix time in seconds: no ID past it is issued. Only for generators with a lease."
    );
    describe_gauge!(
        LEASE_FENCED,
        "1 while the worker lease holds but says nothing may be served (a ZooKeeper ensemble that has not answered for a third of the session timeout: the node is fenced), else 0; unitless. Only for generators with a lease."
    );
    describe_gauge!(
        CLOCK_SKEW,
        Unit::Seconds,
        "This node's clock minus its worker table's database's clock, in seconds, round-trip corrected (positive: ahead), read every 5 s. Beyond the lead cap (at least 10 s) nothing is served. Only for generators with a lease in PostgreSQL or MariaDB/MySQL."
    );
}

/// The series of one generator, registered once with the recorder that is current when
/// [`register`](Self::register) runs, and set from a [`Stats`] snapshot by
/// [`record`](Self::record).
///
/// A [`MetricsReporter`](crate::MetricsReporter) owns one and records on an interval; use this type directly to record
/// from a loop of your own.
///
/// # Examples
///
/// ```
/// use metrics_exporter_prometheus::PrometheusBuilder;
/// use ringflake::{CachedUidGenerator, GeneratorMetrics, Layout};
///
/// let recorder = PrometheusBuilder::new().build_recorder();
/// let series = metrics::with_local_recorder(&recorder, || GeneratorMetrics::register("users"));
/// let g = CachedUidGenerator::builder(Layout::default()).worker_id(3).build()?;
/// g.next_id()?;
/// series.record(&g.stats());
///
/// let text = recorder.handle().render();
/// assert!(text.contains(r#"ringflake_ring_capacity{generator="users"} 33554432"#));
/// assert!(text.contains(r#"ringflake_ids_issued_total{generator="users"} 1"#));
/// assert!(text.contains("# HELP ringflake_time_lead_seconds"));
/// // Which build runs: the version and the commit, on a series of its own.
/// let build = format!(r#"ringflake_build_info{{version="{}",commit=""#, env!("CARGO_PKG_VERSION"));
/// assert!(text.lines().any(|l| l.starts_with(&build) && l.ends_with("} 1")), "{text}");
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct GeneratorMetrics {
    name: String,
    capacity: Gauge,
    available: Gauge,
    fill_ratio: Gauge,
    issued: Counter,
    paddings: Counter,
    discarded: Counter,
    expired: Counter,
    take_waits: Counter,
    waiting_takes: Gauge,
    waiting_ids: Gauge,
    lead: Gauge,
    lag: Gauge,
    remaining: Gauge,
    worker_id: Gauge,
    heals: Counter,
    filler_up: Gauge,
    lease_failures: Counter,
    lease_lost_writes: Counter,
    /// Registered on the first known value only: a series that is not known is omitted, not 0.
    worker_ids_remaining: OnceLock<Gauge>,
    /// Registered by the first snapshot with a lease (a reporter's first sample, on the thread
    /// that starts it): a generator without one has no series.
    lease_expiry: OnceLock<Gauge>,
    /// Registered with `lease_expiry`.
    lease_fenced: OnceLock<Gauge>,
    /// Registered by the first snapshot with a reading of the database's clock.
    clock_skew: OnceLock<Gauge>,
}

impl fmt::Debug for GeneratorMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GeneratorMetrics")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl GeneratorMetrics {
    /// Describes the series and registers this generator's handles, labelled
    /// `generator="<name>"`, with the current recorder: install the recorder first (with no
    /// recorder the handles do nothing, at the cost of an atomic load each).
    ///
    /// ```
    /// use ringflake::GeneratorMetrics;
    /// let series = GeneratorMetrics::register("orders"); // no recorder here: no-op handles
    /// assert_eq!(series.name(), "orders");
    /// ```
    pub fn register(name: &str) -> Self {
        describe();
        gauge!(BUILD_INFO, "version" => VERSION, "commit" => COMMIT).set(1.0);
        let label = || [(LABEL, name.to_owned())];
        GeneratorMetrics {
            name: name.to_owned(),
            capacity: gauge!(RING_CAPACITY, &label()),
            available: gauge!(RING_AVAILABLE, &label()),
            fill_ratio: gauge!(RING_FILL_RATIO, &label()),
            issued: counter!(IDS_ISSUED, &label()),
            paddings: counter!(PADDINGS, &label()),
            discarded: counter!(IDS_DISCARDED, &label()),
            expired: counter!(IDS_EXPIRED, &label()),
            take_waits: counter!(TAKE_WAITS, &label()),
            waiting_takes: gauge!(WAITING_TAKES, &label()),
            waiting_ids: gauge!(WAITING_IDS, &label()),
            lead: gauge!(TIME_LEAD, &label()),
            lag: gauge!(TIME_LAG, &label()),
            remaining: gauge!(TIME_REMAINING, &label()),
            worker_id: gauge!(WORKER_ID, &label()),
            heals: counter!(WORKER_HEALS, &label()),
            filler_up: gauge!(FILLER_UP, &label()),
            lease_failures: counter!(LEASE_FAILURES, &label()),
            lease_lost_writes: counter!(LEASE_LOST_WRITES, &label()),
            worker_ids_remaining: OnceLock::new(),
            lease_expiry: OnceLock::new(),
            lease_fenced: OnceLock::new(),
            clock_skew: OnceLock::new(),
        }
    }

    /// The value of the `generator` label.
    ///
    /// ```
    /// assert_eq!(ringflake::GeneratorMetrics::register("a").name(), "a");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets every series from `stats`. The `_total` counters are the generator's own monotonic
    /// totals, so they are set with `absolute`, never incremented.
    ///
    /// ```
    /// use metrics_exporter_prometheus::PrometheusBuilder;
    /// use ringflake::{CachedUidGenerator, GeneratorMetrics, Layout};
    ///
    /// let recorder = PrometheusBuilder::new().build_recorder();
    /// let series = metrics::with_local_recorder(&recorder, || GeneratorMetrics::register("g"));
    /// // A ring of one second (boost power 0), full at start; a max_lag of an hour keeps a slow
    /// // machine's takes from discarding that second's IDs as stale while they run.
    /// let g = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id(1)
    ///     .boost_power(0)
    ///     .background_filler(false)
    ///     .max_lag(std::time::Duration::from_secs(3600))
    ///     .build()?;
    /// let mut ids = vec![0; 3 << 20];
    /// g.next_ids(&mut ids)?; // three quarters of the ring
    /// series.record(&g.stats());
    ///
    /// let text = recorder.handle().render();
    /// assert!(text.contains(r#"ringflake_ring_available{generator="g"} 1048576"#));
    /// assert!(text.contains(r#"ringflake_ring_fill_ratio{generator="g"} 0.25"#));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn record(&self, stats: &Stats) {
        self.capacity.set(stats.capacity as f64);
        self.available.set(stats.available as f64);
        let ratio = if stats.capacity == 0 {
            0.0
        } else {
            (stats.available as f64 / stats.capacity as f64).min(1.0)
        };
        self.fill_ratio.set(ratio);
        self.issued.absolute(stats.issued);
        self.paddings.absolute(stats.paddings);
        self.discarded.absolute(stats.discarded);
        self.expired.absolute(stats.expired);
        self.take_waits.absolute(stats.take_waits);
        self.waiting_takes.set(stats.waiting_takes as f64);
        self.waiting_ids.set(stats.waiting_ids as f64);
        // To the layout's tick: a millisecond layout's lead in milliseconds.
        self.lead.set(stats.lead_millis as f64 / 1000.0);
        self.lag.set(stats.lag_millis as f64 / 1000.0);
        self.remaining.set(stats.remaining_seconds as f64);
        self.worker_id.set(stats.worker_id as f64);
        self.heals.absolute(stats.heals);
        self.filler_up.set(if stats.filler_up { 1.0 } else { 0.0 });
        self.lease_failures.absolute(stats.lease_extension_failures);
        self.lease_lost_writes.absolute(stats.lease_lost_writes);
        if let Some(until) = stats.lease_until {
            self.lease_expiry
                .get_or_init(|| gauge!(LEASE_EXPIRY, LABEL => self.name.clone()))
                .set(until as f64);
            self.lease_fenced
                .get_or_init(|| gauge!(LEASE_FENCED, LABEL => self.name.clone()))
                .set(if stats.lease_fenced { 1.0 } else { 0.0 });
        }
        if let Some(skew) = stats.clock_skew_millis {
            self.clock_skew
                .get_or_init(|| gauge!(CLOCK_SKEW, LABEL => self.name.clone()))
                .set(skew as f64 / 1000.0);
        }
    }

    /// Sets `ringflake_worker_ids_remaining`. The series is registered on the first call, with the
    /// recorder current at that call, and is absent until then: an application whose worker id
    /// assigner cannot tell how many ids are left never calls this.
    ///
    /// ```
    /// use metrics_exporter_prometheus::PrometheusBuilder;
    /// use ringflake::GeneratorMetrics;
    ///
    /// let recorder = PrometheusBuilder::new().build_recorder();
    /// metrics::with_local_recorder(&recorder, || {
    ///     let series = GeneratorMetrics::register("g");
    ///     assert!(!recorder.handle().render().contains("ringflake_worker_ids_remaining{"));
    ///     series.record_worker_ids_remaining(1_000);
    /// });
    /// let text = recorder.handle().render();
    /// assert!(text.contains(r#"ringflake_worker_ids_remaining{generator="g"} 1000"#));
    /// ```
    pub fn record_worker_ids_remaining(&self, remaining: u64) {
        self.worker_ids_remaining
            .get_or_init(|| gauge!(WORKER_IDS_REMAINING, LABEL => self.name.clone()))
            .set(remaining as f64);
    }
}

/// A filler given these series with
/// [`CachedBuilder::record_stats`](crate::CachedBuilder::record_stats) records them itself.
impl StatsSink for GeneratorMetrics {
    fn record(&self, stats: &Stats) {
        GeneratorMetrics::record(self, stats);
    }
}
