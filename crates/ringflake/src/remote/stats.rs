//! [`RemoteStats`]: a [`RemoteGenerator`](crate::RemoteGenerator)'s counters.

use std::time::Duration;

/// A snapshot of a [`RemoteGenerator`](crate::RemoteGenerator)'s counters
/// ([`RemoteGenerator::stats`](crate::RemoteGenerator::stats)).
///
/// ```no_run
/// # fn main() -> Result<(), ringflake::Error> {
/// let ids = ringflake::RemoteGenerator::builder("http://127.0.0.1:8080").build()?;
/// ids.next_id()?;
/// let s = ids.stats();
/// assert!(s.fetched >= 1 && s.up);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteStats {
    /// IDs in the local buffer now.
    pub buffered: u64,
    /// IDs received from the service since the start.
    pub fetched: u64,
    /// IDs dropped unused since the start: stale (more than `max_lag` behind the clock) or
    /// received when the buffer was full.
    pub dropped: u64,
    /// Fetches (one `Stream` call each) since the start, failed ones included.
    pub fetches: u64,
    /// Fetches that failed.
    pub failed_fetches: u64,
    /// How long the last fetch took, from the call to its last ID.
    pub last_fetch_latency: Duration,
    /// Whether the last fetch succeeded.
    pub up: bool,
}
