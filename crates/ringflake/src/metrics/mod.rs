//! Prometheus series for a [`CachedUidGenerator`](crate::CachedUidGenerator), sampled from [`CachedUidGenerator::stats`](crate::CachedUidGenerator::stats)
//! (feature `metrics`, on by default).
//!
//! Java UidGenerator only logs, and logs on every take below its threshold. Here nothing on the
//! per-ID path touches metrics: the generator keeps its counters anyway, and a [`MetricsReporter`]
//! reads them with [`stats`](crate::CachedUidGenerator::stats) from its own thread on an interval
//! ([`DEFAULT_SAMPLE_INTERVAL`], 1 s), or on demand with [`MetricsReporter::sample`], and sets
//! them through the [`metrics`](https://docs.rs/metrics) facade. Handles are registered once, when
//! the reporter starts ([`GeneratorMetrics::register`]); a sample is a dozen relaxed atomic
//! stores into the recorder, whatever the ID rate.
//!
//! The library never installs a recorder on its own. The application chooses one:
//!
//! - [`install_prometheus`] installs `metrics-exporter-prometheus` as the global recorder and
//!   serves `GET /metrics` on an address;
//! - [`install_prometheus_recorder`] installs it without a listener, for an application that has
//!   its own HTTP server: serve [`PrometheusHandle::render`] there;
//! - any other `metrics` recorder works too, global or local.
//!
//! Every series carries the label `generator="<name>"`, so one process can run several
//! generators (e.g. one per business tag). The series, their types and units are listed in the
//! README's Monitoring section and in each series' `# HELP` line.
//!
//! # Examples
//!
//! ```
//! use metrics_exporter_prometheus::PrometheusBuilder;
//! use ringflake::{CachedUidGenerator, Layout, MetricsReporter};
//! use std::sync::Arc;
//!
//! // A local recorder keeps this example from touching the process-wide one.
//! let recorder = PrometheusBuilder::new().build_recorder();
//! let generator = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(7).build()?);
//! let reporter = metrics::with_local_recorder(&recorder, || {
//!     MetricsReporter::builder("orders", &generator).start()
//! })?;
//!
//! for _ in 0..10 {
//!     generator.next_id()?;
//! }
//! reporter.sample(); // the reporter's thread also does this every second
//!
//! let text = recorder.handle().render();
//! assert!(text.contains(r#"ringflake_ids_issued_total{generator="orders"} 10"#));
//! assert!(text.contains(r#"ringflake_worker_id{generator="orders"} 7"#));
//! assert!(text.contains(r#"ringflake_filler_up{generator="orders"} 1"#));
//! // No lease (a fixed worker id): no failed extension, and no expiry series.
//! assert!(text.contains(r#"ringflake_lease_extension_failures_total{generator="orders"} 0"#));
//! assert!(!text.contains("ringflake_lease_expiry_timestamp_seconds{"));
//! # Ok::<(), ringflake::Error>(())
//! ```

//!
//! The module's rooms: the series and their names (`series`: [`GeneratorMetrics`], what a sample
//! sets), the reporter that samples a generator on an interval (`reporter`:
//! [`MetricsReporter`]), and the exporter a process installs once (`exporter`:
//! [`install_prometheus`], [`install_prometheus_recorder`]).

mod exporter;
mod reporter;
mod series;

pub use exporter::{PrometheusHandle, install_prometheus, install_prometheus_recorder};
pub use reporter::{DEFAULT_SAMPLE_INTERVAL, MetricsReporter, ReporterBuilder};
pub use series::GeneratorMetrics;
