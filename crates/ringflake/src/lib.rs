//! # ringflake
//!
//! Unique, time-ordered 64-bit IDs at very high rates: the design of Baidu UidGenerator's
//! `CachedUidGenerator`, done right.
//!
//! An ID is `[sign 1][delta seconds][worker id][sequence]` ([`Layout`]), bit-exact with
//! UidGenerator for the same widths and epoch, and parsed into UidGenerator's `parseUID` string.
//! The rest of the snowflake family (Twitter, Leaf, Discord, Instagram, Sonyflake: millisecond
//! and 10 ms ticks) is [`Layout::preset`] away, bit for bit.
//! This page is a guide to the library; each type's page has the details: [`Layout`] (the
//! layouts, their lifetimes and Java compatibility), [`CachedUidGenerator`] ([how it treats
//! time](CachedUidGenerator#clock-behaviour) and [restarts](CachedUidGenerator#restarts)),
//! [`DatabaseAssigner`] (worker ids from SQLite, MariaDB/MySQL or PostgreSQL), [`MetricsReporter`]
//! (the Prometheus series) and [`plan`] (choosing a layout). The `ringflake` binary, its HTTP
//! service and running it in production are documented in the repository's [`docs/`] folder.
//!
//! [`docs/`]: https://github.com/ringflake/ringflake/tree/main/docs
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
//! Both make the same IDs for the same [`Layout`] and worker id; they differ in how.
//!
//! - [`CachedUidGenerator`]: pick this one unless you have a reason not to. A background filler
//!   thread pre-generates IDs into a ring by borrowing future seconds; a take costs one atomic
//!   read-modify-write, hundreds of millions of IDs a second, from any number of threads. Under
//!   sustained demand above `2^seq_bits` IDs a second its IDs run ahead of the clock, by at most
//!   [`DEFAULT_MAX_LEAD`] (10 s; [`CachedBuilder::max_lead`] changes the cap); it never lags more
//!   than `max_lag` behind it. Its rules are in [how it treats
//!   time](CachedUidGenerator#clock-behaviour).
//! - [`DefaultUidGenerator`]: UidGenerator's `DefaultUidGenerator`: no thread and no ring, one ID
//!   at a time under a mutex, each carrying the second it was made in, at most `2^seq_bits` a
//!   second (then it waits for the next second). A clock that goes backwards is refused with Java's
//!   message or waited out ([`ClockBackwards`]). For low rates, or where IDs must never be ahead of
//!   the clock.
//!
//! ```
//! use ringflake::{CachedUidGenerator, DefaultUidGenerator, Layout};
//!
//! let layout = Layout::default();
//! let cached = CachedUidGenerator::builder(layout).worker_id(1).build()?;
//! let plain = DefaultUidGenerator::builder(layout).worker_id(2).build()?;
//! assert_eq!(layout.parse(cached.next_id()?)?.worker_id, 1);
//! assert_eq!(layout.parse(plain.next_id()?)?.worker_id, 2);
//! # Ok::<(), ringflake::Error>(())
//! ```
//!
//! ## Taking IDs
//!
//! [`CachedUidGenerator`] has four ways to take; IDs one thread takes are strictly increasing,
//! whichever it uses (and a fifth, per-thread, [below](#per-thread-takers-takes-that-scale-with-threads)).
//!
//! - [`next_id`](CachedUidGenerator::next_id): one ID; on an empty ring it waits for the filler
//!   (spinning, then yielding, then sleeping).
//! - [`next_ids`](CachedUidGenerator::next_ids): fills a slice with consecutive IDs, one atomic
//!   claim per chunk of up to 1,024 of them: the way to take many at once.
//! - [`next_id_async`](CachedUidGenerator::next_id_async) and
//!   [`next_ids_async`](CachedUidGenerator::next_ids_async) (feature `tokio`): for async code.
//!   A take that has to wait queues, first come, first served, and its task is parked, so many
//!   can wait without keeping a runtime thread busy, and under the lead cap each waits for the
//!   IDs queued ahead of it and no longer; dropped while it waits, it takes nothing.
//! - [`try_next_id`](CachedUidGenerator::try_next_id): an ID only if one is ready now and no
//!   take is waiting; never waits.
//!
//! ```
//! use ringflake::{CachedUidGenerator, Layout};
//!
//! let generator = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
//! let mut batch = [0u64; 500];
//! generator.next_ids(&mut batch)?;
//! assert!(batch.windows(2).all(|w| w[0] < w[1]));
//!
//! # #[cfg(feature = "tokio")] {
//! // In async code (here on a runtime of our own; in a handler, just `.await` it).
//! let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let id = runtime.block_on(generator.next_id_async())?;
//! assert!(id > batch[499]);
//! # }
//! # Ok::<(), ringflake::Error>(())
//! ```
//!
//! ### Per-thread takers: takes that scale with threads
//!
//! Each of those four writes the ring's shared cursor once per take (`next_ids` once per chunk),
//! so threads taking one ID at a time contend for one cache line: two threads take less than one
//! does. A [`LocalTaker`] ([`CachedUidGenerator::local`]) claims a block of up to 1,024 IDs with
//! one atomic add and hands them out from its own fields: per ID, no write to shared memory, no
//! lock, no allocation, no syscall, so N threads with a taker each take about N times what one
//! does. It keeps the generator's promises: unique IDs, strictly increasing *within the taker*,
//! the lead bound, and `max_lag` (a block whose second falls `max_lag` behind the clock is given
//! back, never handed out: checked against the clock once per block, and per ID against the
//! second the filler or any take last read; no clock read per ID). Across threads, takers order
//! nothing beyond uniqueness: a block is handed out after IDs that other threads took later.
//! [`Stats::issued`] counts a taker's IDs a block at a time and is exact once the takers are
//! dropped; what they give back unused counts as [`Stats::discarded`].
//!
//! ```
//! use ringflake::{CachedUidGenerator, Layout};
//!
//! let generator = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
//! std::thread::scope(|s| {
//!     for _ in 0..2 {
//!         s.spawn(|| {
//!             let mut taker = generator.local(); // once per thread
//!             let mut last = 0;
//!             for _ in 0..100_000 {
//!                 let id = taker.next_id().unwrap();
//!                 assert!(id > last);
//!                 last = id;
//!             }
//!         });
//!     }
//! });
//! assert_eq!(generator.stats().issued, 200_000);
//! # Ok::<(), ringflake::Error>(())
//! ```
//!
//! ## Worker ids
//!
//! Every running generator needs a worker id that no other live node holds. A
//! [`WorkerIdAssigner`] gives each boot one, through [`CachedBuilder::worker_id_from`] (or
//! [`DefaultBuilder::worker_id_from`]).
//!
//! The default source, the one the `ringflake` command uses, is [`DatabaseAssigner`] on a SQLite
//! file ([`DatabaseAssigner::sqlite`], by default [`DEFAULT_SQLITE_PATH`], `ringflake.db`; feature
//! `sqlite`): like UidGenerator's `DisposableWorkerIdAssigner`, each boot inserts a row into the
//! `WORKER_NODE` table and uses its auto-increment id, so processes booting at once on one machine
//! each get their own. With [`recycle(true)`](DatabaseAssigner::recycle) the row also holds a
//! lease: expired ids are reused, and restarts are monotonic even after SIGKILL
//! ([`DatabaseAssigner`]).
//!
//! ```
//! # #[cfg(feature = "sqlite")] {
//! use ringflake::{CachedUidGenerator, DatabaseAssigner, Layout};
//!
//! let dir = tempfile::tempdir().unwrap();
//! // A service would use DatabaseAssigner::sqlite(ringflake::DEFAULT_SQLITE_PATH).
//! let assigner = DatabaseAssigner::sqlite(dir.path().join("ringflake.db"))?;
//! let first = CachedUidGenerator::builder(Layout::default()).worker_id_from(&assigner).build()?;
//! let second = CachedUidGenerator::builder(Layout::default()).worker_id_from(&assigner).build()?;
//! assert_eq!((first.worker_id(), second.worker_id()), (1, 2)); // a new row per boot
//! # }
//! # Ok::<(), ringflake::Error>(())
//! ```
//!
//! The same table can live in MariaDB/MySQL (`DatabaseAssigner::mysql`, feature `mysql`) or
//! PostgreSQL (`DatabaseAssigner::postgres`, feature `postgres`), shared with Java nodes
//! ([`DatabaseAssigner`]). From ZooKeeper, in Meituan Leaf's znodes and beside Leaf nodes:
//! `ZooKeeperAssigner` (feature `zookeeper`). From etcd or Redis, each id a key with a time to live:
//! `EtcdAssigner` (feature `etcd`), `RedisAssigner` (feature `redis`). A source describes its flags
//! for the binary as a [`SourceKind`]. Without a database: [`FixedWorkerId`] from configuration, or
//! [`StatefulSetOrdinal`] from a Kubernetes pod name.
//!
//! ## Cargo features
//!
//! | feature | default | what it brings |
//! |---|---|---|
//! | `sqlite` | yes | [`DatabaseAssigner::sqlite`] and [`DEFAULT_SQLITE_PATH`]: worker ids from a SQLite file (`rusqlite` with SQLite bundled, compiled from C) |
//! | `mysql` | no | `DatabaseAssigner::mysql`: worker ids from a MariaDB/MySQL table (the `mysql` crate, blocking, TLS by rustls) |
//! | `postgres` | no | `DatabaseAssigner::postgres`: worker ids from a PostgreSQL table (`tokio-postgres` on a private runtime, TLS by rustls) |
//! | `zookeeper` | no | `ZooKeeperAssigner`: worker ids from a ZooKeeper ensemble in Meituan Leaf's znodes, shared with Leaf nodes (kezhuw's `zookeeper-client` on a private runtime) |
//! | `etcd` | no | `EtcdAssigner`: worker ids from an etcd cluster, each a key on an etcd lease (etcd's v3 API through tonic's client, stubs committed, on a private runtime, TLS by rustls) |
//! | `redis` | no | `RedisAssigner`: worker ids from Redis or Sentinel, every claim confirmed on the replicas with `WAIT` (the `redis` crate, blocking, TLS by rustls) |
//! | `all-sources` | no | every worker id source above |
//! | `metrics` | no | [`MetricsReporter`], [`GeneratorMetrics`] (also a sink for [`CachedBuilder::record_stats`]), [`install_prometheus`] and [`install_prometheus_recorder`]: Prometheus series |
//! | `tokio` | no | [`CachedUidGenerator::next_id_async`] and `next_ids_async`: await the filler instead of spinning |
//! | `grpc` | no | `ringflake::grpc`: the messages and stubs of the service's `ringflake.v1` gRPC API (prost, tonic's codec; generated code committed, no `protoc` needed) |
//! | `client` | no | `RemoteGenerator`: IDs from a `ringflake serve` over gRPC, prefetched into a local lock-free buffer (tonic's client, rustls with ring for TLS) |
//! | `id-key` | no | [`IdCipher`]: public IDs through a keyed permutation (FF1 over AES-256, the `fpe` and `aes` crates), hiding order, volume, worker and time |
//! | `segment` | no | `SegmentGenerator`: Meituan Leaf's segment mode, dense numbers per business tag from `leaf_alloc` (`SegmentTable::sqlite`, `mysql`, `postgres` with those features) |
//!
//! The default is what a program embedding the ring needs: the generators, the layouts and worker
//! ids from a SQLite file, about 25 crates in all. Add what you use:
//! `cargo add ringflake --features tokio,metrics`, or
//! `ringflake = { version = "0.2", features = ["postgres", "tokio"] }`. With no feature at all
//! (`default-features = false`) the crate still has both generators, [`Layout`], [`plan`] and the
//! assigners that need no database ([`FixedWorkerId`], [`StatefulSetOrdinal`]).
//!
//! The service and the command line are crates of their own, so that none of this crate's users
//! builds them: [`ringflake-server`] (the HTTP and gRPC service as a library, started in-process
//! from a builder) and [`ringflake-cli`] (`cargo install ringflake-cli`: the `ringflake` binary,
//! with every worker source).
//!
//! [`ringflake-server`]: https://docs.rs/ringflake-server
//! [`ringflake-cli`]: https://crates.io/crates/ringflake-cli
//!
//! ## What ringflake fixes in UidGenerator
//!
//! No negative IDs when the time bits run out; IDs that tell the time (no unbounded lag, bounded
//! lead); no dropped half-seconds when the ring is full; no exception when the ring is empty; no
//! take race; the filler thread never keeps the process alive. Details in [how the cached
//! generator treats time](CachedUidGenerator#clock-behaviour) and [Java
//! compatibility](Layout#java-compatibility).
//!
//! ## Monitoring (feature `metrics`)
//!
//! A [`MetricsReporter`] samples a generator's [`Stats`] every second from its own thread and
//! sets Prometheus series (`ringflake_ring_available`, `ringflake_time_lead_seconds`, ...) through
//! the `metrics` facade; nothing on the per-ID path calls metrics. The application installs the
//! recorder: [`install_prometheus`] serves `/metrics` on an address, or
//! [`install_prometheus_recorder`] leaves serving [`PrometheusHandle::render`] to its own HTTP
//! server. [`MetricsReporter`] lists the series; the repository's [`docs/monitoring.md`] adds a
//! Grafana dashboard and alert rules.
//!
//! ## Dense numbers per business tag: Leaf's segment mode (feature `segment`)
//!
//! Some keys must be dense, not time-ordered: order or invoice numbers. `SegmentGenerator` is
//! Meituan Leaf's segment mode: ranges of numbers per business tag are claimed from Leaf's own
//! `leaf_alloc` table (`SegmentTable`, in SQLite, MariaDB/MySQL or PostgreSQL, shared with Leaf
//! nodes) with Leaf's transaction and dynamic step, the next range in the background, and a take
//! from a tag (`SegmentTag::next_id`) costs one atomic add. Beyond Leaf, a claim is used only once
//! every standby holds it, and a restart resumes the ranges held (a state directory records how
//! far each was handed out). The repository's [`docs/segments.md`] has the table's rules.
//!
//! ## IDs in URLs
//!
//! [`IdFormat`] writes an ID as decimal, Crockford base32 (13 characters, TSID's form) or base62
//! (11 characters) and reads it back; the fixed-width forms sort as the IDs do. [`IdCipher`]
//! (feature `id-key`) turns IDs into public IDs that tell neither order, volume, worker nor time.
//! The repository's [`docs/ids-in-urls.md`] says what each hides and costs.
//!
//! ## Planning a layout
//!
//! [`plan::propose`] turns a demand (IDs per second, restarts per day, years) into bit widths and
//! tells, for any layout, how long it lasts at that rate and how fast borrowing eats its time
//! bits ([`plan::Assessment`]); the `ringflake layout` command prints the same. [`Layout`]
//! compares the well-known layouts.
//!
//! ## The `ringflake` command (crate `ringflake-cli`)
//!
//! A thin binary over this library and `ringflake-server`: `ringflake serve` is an HTTP and gRPC ID service (`/id`,
//! `/ids?count=N`, `/parse/{id}`, `/metrics`, `/healthz`; `ringflake.v1.IdService` with health
//! and reflection on the same port), `gen` and `parse` print IDs and
//! `parseUID` JSON for scripts and Java migrators, `layout` plans a layout, `workers` lists the
//! worker table. The repository's [`docs/service.md`] documents it, and [`docs/production.md`]
//! how to run it in production.
//!
//! ## IDs from the service, prefetched (feature `client`)
//!
//! A process that cannot hold a worker id of its own takes IDs from a `ringflake serve` with
//! `RemoteGenerator`: a background thread streams them over gRPC into a local buffer ahead of
//! demand, and a take costs a few nanoseconds. [`docs/grpc.md`] says when to
//! embed the generator, when to call the service, and when to use the prefetching client.
//!
//! [`docs/grpc.md`]: https://github.com/ringflake/ringflake/blob/main/docs/grpc.md
//! [`docs/ids-in-urls.md`]: https://github.com/ringflake/ringflake/blob/main/docs/ids-in-urls.md
//! [`docs/service.md`]: https://github.com/ringflake/ringflake/blob/main/docs/service.md
//! [`docs/production.md`]: https://github.com/ringflake/ringflake/blob/main/docs/production.md
//! [`docs/segments.md`]: https://github.com/ringflake/ringflake/blob/main/docs/segments.md
//! [`docs/monitoring.md`]: https://github.com/ringflake/ringflake/blob/main/docs/monitoring.md
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod boot;
pub mod build_info;
mod cached;
mod clock;
mod default;
mod error;
#[cfg(feature = "grpc")]
pub mod grpc;
#[cfg(feature = "id-key")]
mod id_key;
mod layout;
mod lock;
#[cfg(feature = "metrics")]
mod metrics;
mod overlap;
pub mod plan;
mod preset;
mod reach;
#[cfg(feature = "client")]
mod remote;
mod ring;
mod segment;
mod stale;
mod text;
mod worker;
mod zone;

#[cfg(feature = "metrics")]
pub use self::metrics::{
    DEFAULT_SAMPLE_INTERVAL, GeneratorMetrics, MetricsReporter, PrometheusHandle, ReporterBuilder,
    install_prometheus, install_prometheus_recorder,
};
pub use boot::GivenBack;
pub use cached::{
    CachedBuilder, CachedUidGenerator, DEFAULT_BOOST_POWER, DEFAULT_MAX_LAG, DEFAULT_MAX_LEAD,
    DEFAULT_PADDING_FACTOR, DEFAULT_SCHEDULE_INTERVAL, FILLER_RECORD_INTERVAL, Health, IDLE_AFTER,
    LeadPolicy, LocalTaker, Stats, StatsSink, StatsSource, TICK_SCHEDULE_INTERVAL,
};
pub use clock::{Clock, ManualClock, SystemClock};
pub use default::{ClockBackwards, DefaultBuilder, DefaultUidGenerator};
pub use error::{Cause, Error, IoError};
#[cfg(feature = "id-key")]
pub use id_key::IdCipher;
pub use jiff::tz::TimeZone;
pub use layout::{
    DEFAULT_EPOCH_SECONDS, FieldOrder, Layout, ParsedId, Parts, TimeUnit,
    UID_GENERATOR_EPOCH_SECONDS, epoch_from_date,
};
pub use preset::{PRESET_NAMES, TWITTER_EPOCH_MILLIS};
#[cfg(feature = "client")]
pub use remote::{RemoteBuilder, RemoteGenerator, RemoteStats};
#[cfg(all(feature = "segment", feature = "metrics"))]
pub use segment::SegmentMetrics;
#[cfg(feature = "segment")]
pub use segment::{
    DEFAULT_MIN_CHUNK, DEFAULT_SEGMENT_MAX_WAIT, DEFAULT_SEGMENT_REFRESH, LeafRow,
    MAX_DYNAMIC_STEP, PendingNumber, SEGMENT_DURATION, SEGMENT_MAX_BATCH, SEGMENT_TAKER_BLOCK,
    SegmentBuilder, SegmentGenerator, SegmentStats, SegmentTable, SegmentTag, SegmentTaker,
};
pub use segment::{MAX_TAG_LEN, SegmentError};
pub use text::{IdFormat, IdText, IdTextError};
pub use worker::node::NodeInfo;
pub use worker::rows::WorkerRow;
// Empty without a source's feature.
#[allow(unused_imports)]
pub use worker::sources::*;
#[cfg(feature = "sqlite")]
pub use worker::sqlite::DEFAULT_SQLITE_PATH;
pub use worker::table::DatabaseAssigner;
pub use worker::{
    Assignment, Cell, DatabaseTime, FixedWorkerId, Lease, Listed, Listing, Placement, SharedFlag,
    Source, SourceKind, SourceOption, SourceSettings, StatefulSetOrdinal, WorkerIdAssigner,
};
pub use zone::{MAX_TIME_ZONE_FILE_BYTES, system_time_zone, time_zone_from_tz};

/// The Rust blocks of the READMEs (the repository's and this crate's) and of `docs/*.md` are
/// compiled and run as doc tests: each page is
/// the documentation of a hidden item, compiled only by `cargo test` (rustdoc's `doctest` cfg)
/// with the features its blocks need. `tests/docs_drift.rs` checks that every page under `docs/` is
/// listed here.
#[cfg(doctest)]
mod doc_pages {
    #[cfg(feature = "sqlite")]
    #[doc = include_str!("../../../README.md")]
    pub struct Readme;
    #[cfg(feature = "sqlite")]
    #[doc = include_str!("../README.md")]
    pub struct CrateReadme;
    #[doc = include_str!("../../../docs/benchmarks.md")]
    pub struct Benchmarks;
    #[cfg(feature = "client")]
    #[doc = include_str!("../../../docs/grpc.md")]
    pub struct Grpc;
    #[doc = include_str!("../../../docs/health.md")]
    pub struct Health;
    #[doc = include_str!("../../../docs/ids-in-urls.md")]
    pub struct IdsInUrls;
    #[doc = include_str!("../../../docs/migrating.md")]
    pub struct Migrating;
    #[cfg(feature = "metrics")]
    #[doc = include_str!("../../../docs/monitoring.md")]
    pub struct Monitoring;
    #[doc = include_str!("../../../docs/production.md")]
    pub struct Production;
    #[doc = include_str!("../../../docs/python.md")]
    pub struct Python;
    #[cfg(all(feature = "segment", feature = "sqlite"))]
    #[doc = include_str!("../../../docs/segments.md")]
    pub struct Segments;
    #[doc = include_str!("../../../docs/service.md")]
    pub struct Service;
    #[doc = include_str!("../../../docs/time.md")]
    pub struct Time;
    #[cfg(feature = "sqlite")]
    #[doc = include_str!("../../../docs/workers.md")]
    pub struct Workers;
}
