//! What the fetcher and the takes share: the buffer, the settings fixed at build, the counters,
//! and the notifications between them.

use super::buffer::Buffer;
#[cfg(feature = "metrics")]
use super::series;
use super::stats::RemoteStats;
use crate::Error;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// What the fetcher and the takes share.
pub(crate) struct Shared {
    pub(crate) buffer: Buffer,
    pub(crate) settings: Settings,
    /// Set when the generator is dropped, and the fetcher told.
    pub(crate) stop: AtomicBool,
    pub(crate) stopping: Notify,
    /// Takes that find the buffer empty wake the fetcher.
    pub(crate) wake: Notify,
    /// The fetcher wakes async takes waiting for IDs (and tells them when the service fails).
    pub(crate) arrived: Notify,
    /// Whether the last fetch failed.
    pub(crate) down: AtomicBool,
    /// Why it failed (read and written off the hot path only).
    pub(crate) reason: Mutex<String>,
    pub(crate) fetched: AtomicU64,
    pub(crate) fetches: AtomicU64,
    pub(crate) failures: AtomicU64,
    pub(crate) latency_us: AtomicU64,
    #[cfg(feature = "metrics")]
    pub(crate) series: Option<series::Series>,
}

/// The settings the fetcher needs, fixed at build.
pub(crate) struct Settings {
    pub(crate) endpoint: String,
    pub(crate) generator: String,
    /// The layout's epoch in unix milliseconds.
    pub(crate) epoch_millis: i64,
    /// The layout's tick in milliseconds.
    pub(crate) tick_millis: u64,
    pub(crate) capacity: u64,
    pub(crate) min_fill: u64,
}

impl Shared {
    pub(crate) fn set_reason(&self, reason: String) {
        *crate::lock::lock(&self.reason) = reason;
    }

    pub(crate) fn unavailable(&self, reason: Option<String>) -> Error {
        let reason = reason.unwrap_or_else(|| crate::lock::lock(&self.reason).clone());
        Error::RemoteUnavailable {
            endpoint: self.settings.endpoint.clone(),
            reason,
        }
    }

    pub(crate) fn stats(&self) -> RemoteStats {
        RemoteStats {
            buffered: self.buffer.len(),
            fetched: self.fetched.load(Ordering::Relaxed),
            dropped: self.buffer.dropped(),
            fetches: self.fetches.load(Ordering::Relaxed),
            failed_fetches: self.failures.load(Ordering::Relaxed),
            last_fetch_latency: Duration::from_micros(self.latency_us.load(Ordering::Relaxed)),
            up: !self.down.load(Ordering::Acquire),
        }
    }

    /// Sets the metrics series, if any (the fetcher, every round).
    pub(crate) fn record(&self) {
        #[cfg(feature = "metrics")]
        if let Some(series) = &self.series {
            series.record(&self.stats());
        }
    }
}

/// A status from the service for a person: its code and message.
pub(crate) fn describe(status: &tonic::Status) -> String {
    let message = status.message();
    let mut text = if message.is_empty() {
        format!("{:?}", status.code())
    } else {
        format!("{:?}: {message}", status.code())
    };
    // The transport's own words (connection refused, certificate unknown, ...).
    let mut source = std::error::Error::source(status);
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}
