//! A [`RemoteGenerator`](super::RemoteGenerator)'s Prometheus series (feature `metrics`), in the
//! style of the generator's ([`GeneratorMetrics`](crate::GeneratorMetrics)): handles registered
//! once, labelled `generator="<name>"`, the `_total` counters set from the client's own
//! monotonic totals. Set by the fetcher thread every round, never by a take.

use super::stats::RemoteStats;
use metrics::{Counter, Gauge, Histogram, Unit};

const BUFFERED: &str = "ringflake_remote_buffered";
const FETCHED: &str = "ringflake_remote_ids_fetched_total";
const DROPPED: &str = "ringflake_remote_ids_dropped_total";
const FETCHES: &str = "ringflake_remote_fetches_total";
const FAILURES: &str = "ringflake_remote_fetch_failures_total";
const UP: &str = "ringflake_remote_up";
const LATENCY: &str = "ringflake_remote_fetch_seconds";

/// The handles of one client.
pub(crate) struct Series {
    buffered: Gauge,
    fetched: Counter,
    dropped: Counter,
    fetches: Counter,
    failures: Counter,
    up: Gauge,
    pub(crate) latency: Histogram,
}

impl Series {
    /// Describes the series and registers the handles with the current recorder.
    pub(crate) fn register(name: &str) -> Series {
        metrics::describe_gauge!(
            BUFFERED,
            Unit::Count,
            "IDs in the remote client's local buffer, ready to take, in IDs."
        );
        metrics::describe_counter!(
            FETCHED,
            Unit::Count,
            "IDs the remote client received from the service since it started, in IDs."
        );
        metrics::describe_counter!(
            DROPPED,
            Unit::Count,
            "IDs the remote client dropped unused since it started, in IDs: more than max_lag behind the clock, or received with the buffer full."
        );
        metrics::describe_counter!(
            FETCHES,
            Unit::Count,
            "Fetches (Stream calls) the remote client made since it started, failed ones included, in calls."
        );
        metrics::describe_counter!(
            FAILURES,
            Unit::Count,
            "Fetches of the remote client that failed since it started, in calls."
        );
        metrics::describe_gauge!(
            UP,
            "1 while the remote client's last fetch succeeded, 0 after a failed one; unitless."
        );
        metrics::describe_histogram!(
            LATENCY,
            Unit::Seconds,
            "How long the remote client's fetches took, from the call to the last ID, in seconds."
        );
        let label = || [("generator", name.to_owned())];
        Series {
            buffered: metrics::gauge!(BUFFERED, &label()),
            fetched: metrics::counter!(FETCHED, &label()),
            dropped: metrics::counter!(DROPPED, &label()),
            fetches: metrics::counter!(FETCHES, &label()),
            failures: metrics::counter!(FAILURES, &label()),
            up: metrics::gauge!(UP, &label()),
            latency: metrics::histogram!(LATENCY, &label()),
        }
    }

    /// Sets every series but the latency (recorded per fetch) from `stats`.
    pub(crate) fn record(&self, stats: &RemoteStats) {
        self.buffered.set(stats.buffered as f64);
        self.fetched.absolute(stats.fetched);
        self.dropped.absolute(stats.dropped);
        self.fetches.absolute(stats.fetches);
        self.failures.absolute(stats.failed_fetches);
        self.up.set(if stats.up { 1.0 } else { 0.0 });
    }
}
