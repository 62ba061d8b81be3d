//! # ringflake
//!
//! Unique, time-ordered 64-bit IDs at very high rates: the design of Baidu UidGenerator's
//! `CachedUidGenerator`, done right.
//!
//! An ID is `[sign 1][delta seconds][worker id][sequence]` ([`Layout`]), bit-exact with
//! UidGenerator for the same widths and epoch, and parsed into UidGenerator's `parseUID` string.
//!
//! ## Getting started
//!
//! ```
//! use ringflake::{CachedUidGenerator, Layout};
//!
//! let generator = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
//! let id = generator.next_id()?;
//! let parsed = Layout::default().parse(id)?;
//! assert_eq!(parsed.worker_id, 1);
//! # Ok::<(), ringflake::Error>(())
//! ```
//!
//! ## Which generator
//!
//! - [`CachedUidGenerator`]: a background filler pre-generates IDs into a ring by borrowing
//!   future seconds; takes cost one atomic read-modify-write. Hundreds of millions of IDs a second.
//! - [`DefaultUidGenerator`]: one ID at a time under a mutex, at most `2^seq_bits` a second.
//!
//! ## What ringflake fixes in UidGenerator
//!
//! No negative IDs when the time bits run out; IDs that tell the time (no unbounded lag, bounded
//! lead); no dropped half-seconds when the ring is full; no exception when the ring is empty; no
//! take race; the filler thread never keeps the process alive.
//!
//! ## Worker ids
//!
//! A [`WorkerIdAssigner`] gives each boot its worker id: [`FixedWorkerId`] from configuration,
//! [`StatefulSetOrdinal`] from a Kubernetes pod name.
//!
//! ## Monitoring (feature `metrics`, on by default)
//!
//! A [`MetricsReporter`] samples a generator's [`Stats`] every second from its own thread and
//! sets Prometheus series (`ringflake_ring_available`, `ringflake_time_lead_seconds`, ...) through
//! the `metrics` facade; nothing on the per-ID path calls metrics. The application installs the
//! recorder: [`install_prometheus`] serves `/metrics` on an address, or
//! [`install_prometheus_recorder`] leaves serving [`PrometheusHandle::render`] to its own HTTP
//! server. The README's Monitoring section lists the series, a Grafana dashboard and alert rules.
//!
//! ## Planning a layout
//!
//! [`plan::propose`] turns a demand (IDs per second, restarts per day, years) into bit widths and
//! tells, for any layout, how long it lasts at that rate and how fast borrowing eats its time
//! bits ([`plan::Assessment`]); the `ringflake layout` command prints the same.
//!
//! ## The `ringflake` command (feature `cli`, on by default)
//!
//! A thin binary over this library: `ringflake serve` is an HTTP ID service (`/id`,
//! `/ids?count=N`, `/parse/{id}`, `/metrics`, `/healthz`), `gen` and `parse` print IDs and
//! `parseUID` JSON for scripts and Java migrators, `layout` plans a layout, `workers` lists the
//! worker table. The README's "The `ringflake` command" section documents it.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod boot;
mod cached;
mod clock;
mod default;
mod error;
mod layout;
#[cfg(feature = "metrics")]
mod metrics;
pub mod plan;
mod reach;
mod ring;
mod worker;

#[cfg(feature = "metrics")]
pub use self::metrics::{
    DEFAULT_SAMPLE_INTERVAL, GeneratorMetrics, MetricsReporter, PrometheusHandle, ReporterBuilder,
    install_prometheus, install_prometheus_recorder,
};
pub use cached::{
    CachedBuilder, CachedUidGenerator, DEFAULT_MAX_LEAD, FILLER_RECORD_INTERVAL, LeadPolicy, Stats,
    StatsSink, StatsSource,
};
pub use clock::{Clock, ManualClock, SystemClock};
pub use default::{ClockBackwards, DefaultBuilder, DefaultUidGenerator};
pub use error::{Error, IoError};
pub use jiff::tz::TimeZone;
pub use layout::{
    DEFAULT_EPOCH_SECONDS, Layout, ParsedId, Parts, UID_GENERATOR_EPOCH_SECONDS, epoch_from_date,
};
pub use worker::node::NodeInfo;
#[cfg(feature = "sqlite")]
pub use worker::sqlite::DEFAULT_SQLITE_PATH;
pub use worker::table::{DatabaseAssigner, WorkerRow};
pub use worker::{Assignment, FixedWorkerId, Lease, StatefulSetOrdinal, WorkerIdAssigner};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
