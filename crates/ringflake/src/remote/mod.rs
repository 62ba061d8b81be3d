//! [`RemoteGenerator`]: IDs from a `ringflake serve` over gRPC, prefetched into a local buffer
//! (feature `client`).
//!
//! For a service that cannot hold a worker id of its own (more replicas than the worker field has
//! ids, no access to the worker database) but must not pay a network round trip per ID: the
//! design of Meituan Leaf's segment mode and CosId's prefetching proxy, with the in-process ring
//! of [`CachedUidGenerator`](crate::CachedUidGenerator) on the client side. A background thread
//! streams IDs from the service into the buffer ahead of demand; a take is a few atomic
//! operations on that buffer.

mod buffer;
mod fetch;
mod held;
#[cfg(feature = "metrics")]
mod series;
mod shared;
mod stats;

pub use stats::RemoteStats;

use crate::Error;
use buffer::Buffer;
use shared::{Settings, Shared, describe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Settings for a [`RemoteGenerator`]; see [`RemoteGenerator::builder`].
///
/// ```
/// use std::time::Duration;
///
/// let builder = ringflake::RemoteGenerator::builder("https://ids.internal:8080")
///     .generator("orders")
///     .token("s3cr3t-token-of-the-service")
///     .ca_file("/etc/ssl/ids-ca.pem")
///     .capacity(1 << 16)
///     .max_lag(Duration::from_secs(5));
/// assert!(format!("{builder:?}").contains("orders"));
/// assert!(!format!("{builder:?}").contains("s3cr3t"));
/// ```
#[must_use = "a builder does nothing until `build` is called"]
pub struct RemoteBuilder {
    endpoint: String,
    generator: String,
    token: Option<String>,
    ca_file: Option<PathBuf>,
    capacity: u64,
    max_lag: Duration,
    timeout: Duration,
    wait: Duration,
    #[cfg(feature = "metrics")]
    metrics: Option<String>,
}

impl std::fmt::Debug for RemoteBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteBuilder")
            .field("endpoint", &self.endpoint)
            .field("generator", &self.generator)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("ca_file", &self.ca_file)
            .field("capacity", &self.capacity)
            .field("max_lag", &self.max_lag)
            .finish_non_exhaustive()
    }
}

/// The number of the next client built (0 names none).
static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);

/// The largest buffer: 2^24 IDs (256 MiB of slots).
const MAX_CAPACITY: u64 = 1 << 24;
/// The smallest buffer: 1,024 IDs.
const MIN_CAPACITY: u64 = 1 << 10;

impl RemoteBuilder {
    /// The generator of the service to take from (a name of its `--config`); by default its
    /// default generator.
    pub fn generator(mut self, name: impl Into<String>) -> Self {
        self.generator = name.into();
        self
    }

    /// The bearer token sent with every call (`authorization: Bearer <token>` metadata), for a
    /// service with `--auth-token-file`.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The CA certificate (PEM) that the service's TLS certificate must chain to, for an
    /// `https://` endpoint; without it, the system's roots are not used and TLS fails.
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca_file = Some(path.into());
        self
    }

    /// The most IDs the local buffer holds, rounded up to a power of two: 1,024 to 2^24; by
    /// default 2^18 (262,144 IDs, 4 MiB). The fetcher keeps it at most half full, with
    /// 250 ms of the measured demand.
    pub fn capacity(mut self, ids: u64) -> Self {
        self.capacity = ids;
        self
    }

    /// IDs more than this far behind the clock are never handed out: they are dropped, and
    /// counted in [`RemoteStats::dropped`]; by default 10 s. Whole seconds (an ID's time is a
    /// second); the clock is the one the fetcher reads every round (at most 20 ms old).
    pub fn max_lag(mut self, max_lag: Duration) -> Self {
        self.max_lag = max_lag;
        self
    }

    /// How long [`build`](Self::build) waits for the service (connection, first IDs), and how
    /// long a connection attempt may take; by default 5 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long a take waits on an empty buffer while the service is up (a burst above what was
    /// prefetched) before it fails with [`Error::RemoteUnavailable`]; by default 2 s. While the
    /// service is down, a take on an empty buffer fails at once.
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// Reports the client's counters as Prometheus series labelled `generator="<name>"`
    /// (feature `metrics`): `ringflake_remote_buffered`, `ringflake_remote_ids_fetched_total`,
    /// `ringflake_remote_ids_dropped_total`, `ringflake_remote_fetches_total`,
    /// `ringflake_remote_fetch_failures_total`, `ringflake_remote_up` and the histogram
    /// `ringflake_remote_fetch_seconds`. Registered with the recorder current at
    /// [`build`](Self::build); set by the fetcher thread, never by a take.
    #[cfg(feature = "metrics")]
    pub fn metrics(mut self, name: impl Into<String>) -> Self {
        self.metrics = Some(name.into());
        self
    }

    /// Connects, checks the generator and the token, learns the layout, fills the buffer once,
    /// and starts the fetcher thread.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for a capacity or `max_lag` out of range;
    /// [`Error::RemoteRefused`] if the service refuses the token or the generator name, or the
    /// endpoint or CA file cannot be used; [`Error::RemoteUnavailable`] if it cannot be reached
    /// within the timeout; [`Error::ThreadSpawn`] if the fetcher thread cannot start.
    pub fn build(self) -> Result<RemoteGenerator, Error> {
        if !(1..=MAX_CAPACITY).contains(&self.capacity) {
            return Err(Error::InvalidConfig {
                name: "capacity",
                value: self.capacity,
                allowed: "1 to 16777216 IDs (2^24), rounded up to a power of two",
            });
        }
        let capacity = self.capacity.max(MIN_CAPACITY).next_power_of_two();
        if self.max_lag < Duration::from_secs(1) || self.max_lag > Duration::from_secs(86_400) {
            return Err(Error::InvalidConfig {
                name: "max_lag (seconds)",
                value: self.max_lag.as_secs(),
                allowed: "1 to 86400 s (an ID's time is a whole second)",
            });
        }
        let refused = |message: String| Error::RemoteRefused {
            endpoint: self.endpoint.clone(),
            code: "client settings".into(),
            message,
        };
        let token = match &self.token {
            Some(t) => Some(
                format!("Bearer {t}")
                    .parse()
                    .map_err(|_| refused("the token is not printable ASCII".into()))?,
            ),
            None => None,
        };
        let mut endpoint = tonic::transport::Endpoint::from_shared(self.endpoint.clone())
            .map_err(|e| refused(format!("not a URL: {e}")))?
            .connect_timeout(self.timeout)
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(Duration::from_secs(5))
            .tcp_nodelay(true);
        if let Some(ca) = &self.ca_file {
            let pem = std::fs::read(ca)
                .map_err(|e| refused(format!("cannot read CA file {}: {e}", ca.display())))?;
            let tls = tonic::transport::ClientTlsConfig::new()
                .ca_certificate(tonic::transport::Certificate::from_pem(pem));
            endpoint = endpoint
                .tls_config(tls)
                .map_err(|e| refused(format!("TLS: {e}")))?;
        }
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let started = self.start(capacity, endpoint, token, ready_tx)?;
        let deadline = self.timeout + Duration::from_secs(1);
        match ready_rx.recv_timeout(deadline) {
            Ok(Ok(shared)) => Ok(RemoteGenerator {
                id: NEXT_CLIENT.fetch_add(1, Ordering::Relaxed),
                shared,
                thread: Some(started),
                wait: self.wait,
            }),
            Ok(Err(e)) => {
                let _ = started.join();
                Err(e)
            }
            Err(_) => Err(Error::RemoteUnavailable {
                endpoint: self.endpoint.clone(),
                reason: format!("no answer within {:?}", self.timeout),
            }),
        }
    }

    /// Starts the fetcher thread: it connects, learns the layout, fills the buffer once and
    /// sends the shared state on `ready` (or the error, and ends).
    fn start(
        &self,
        capacity: u64,
        endpoint: tonic::transport::Endpoint,
        token: Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>,
        ready: std::sync::mpsc::Sender<Result<Arc<Shared>, Error>>,
    ) -> Result<JoinHandle<()>, Error> {
        let name = self.endpoint.clone();
        let generator = self.generator.clone();
        let timeout = self.timeout;
        let max_lag = self.max_lag.as_secs();
        let min_fill = (capacity / 16).clamp(1, 8_192);
        #[cfg(feature = "metrics")]
        let series = self.metrics.as_deref().map(series::Series::register);
        let thread = move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    let _ = ready.send(Err(Error::RemoteUnavailable {
                        endpoint: name,
                        reason: format!("cannot start a Tokio runtime: {e}"),
                    }));
                    return;
                }
            };
            runtime.block_on(async move {
                let channel = endpoint.connect_lazy();
                let mut client = crate::grpc::id_service_client::IdServiceClient::with_interceptor(
                    channel,
                    fetch::Token(token),
                );
                let request = crate::grpc::ParseRequest {
                    generator: generator.clone(),
                    ..Default::default()
                };
                let layout = match tokio::time::timeout(timeout, client.parse(request)).await {
                    Ok(Ok(answer)) => answer.into_inner().layout,
                    Ok(Err(status)) => {
                        let _ = ready.send(Err(refusal(&name, &status)));
                        return;
                    }
                    Err(_) => {
                        let _ = ready.send(Err(Error::RemoteUnavailable {
                            endpoint: name,
                            reason: format!("no answer within {timeout:?}"),
                        }));
                        return;
                    }
                };
                let Some(layout) = layout else {
                    let _ = ready.send(Err(Error::RemoteRefused {
                        endpoint: name,
                        code: "UNIMPLEMENTED".into(),
                        message: "the service does not tell its layout (an older ringflake \
                                  serve?): a prefetching client needs it"
                            .into(),
                    }));
                    return;
                };
                // A service that predates ticks sends neither: seconds from epoch_seconds.
                let tick_millis = match layout.tick_millis {
                    0 => 1000,
                    ms => u64::from(ms),
                };
                let epoch_millis = match (layout.tick_millis, layout.epoch_millis) {
                    (0, _) | (_, 0) => layout.epoch_seconds.saturating_mul(1000),
                    (_, ms) => ms,
                };
                let shared = Arc::new(Shared {
                    // max_lag in the layout's ticks: 1 s is 1,000 millisecond ticks.
                    buffer: Buffer::new(
                        capacity,
                        layout.worker_bits + layout.seq_bits,
                        max_lag.saturating_mul(1000 / tick_millis.clamp(1, 1000)),
                    ),
                    settings: Settings {
                        endpoint: name,
                        generator,
                        epoch_millis,
                        tick_millis,
                        capacity,
                        min_fill,
                    },
                    stop: AtomicBool::new(false),
                    stopping: Notify::new(),
                    wake: Notify::new(),
                    arrived: Notify::new(),
                    down: AtomicBool::new(false),
                    reason: Mutex::new(String::new()),
                    fetched: AtomicU64::new(0),
                    fetches: AtomicU64::new(0),
                    failures: AtomicU64::new(0),
                    latency_us: AtomicU64::new(0),
                    #[cfg(feature = "metrics")]
                    series,
                });
                // The first IDs, so that the first takes are served from the buffer.
                if let Err(e) = fetch::first(&shared, &mut client).await {
                    let _ = ready.send(Err(e));
                    return;
                }
                let _ = ready.send(Ok(Arc::clone(&shared)));
                fetch::run(shared, client).await;
            });
        };
        std::thread::Builder::new()
            .name("ringflake-remote".into())
            .spawn(thread)
            .map_err(|e| Error::ThreadSpawn {
                thread: "ringflake-remote".into(),
                source: e.into(),
            })
    }
}

/// The error for a call the service answered with `status` at start: a refusal of the client's
/// settings, or the service being unavailable.
fn refusal(endpoint: &str, status: &tonic::Status) -> Error {
    use tonic::Code;
    match status.code() {
        Code::Unauthenticated
        | Code::PermissionDenied
        | Code::NotFound
        | Code::InvalidArgument
        | Code::Unimplemented => Error::RemoteRefused {
            endpoint: endpoint.to_owned(),
            code: format!("{:?}", status.code()),
            message: status.message().to_owned(),
        },
        _ => Error::RemoteUnavailable {
            endpoint: endpoint.to_owned(),
            reason: describe(status),
        },
    }
}

/// IDs from a `ringflake serve` over gRPC, prefetched into a local lock-free buffer by a
/// background thread (feature `client`).
///
/// The fetcher streams IDs (`IdService.Stream`) ahead of demand: when fewer than half of 250 ms
/// of the measured demand are buffered, it asks for the difference, so the batch size follows
/// the consumption rate. [`next_id`](Self::next_id) takes from the buffer: per ID, no lock, no
/// allocation, no syscall, no write to shared memory (each thread claims up to 128 IDs at a time
/// with one compare-and-swap, usually a range of consecutive IDs). IDs more than `max_lag` behind
/// the clock are dropped, never handed out.
///
/// # When the service is unreachable
///
/// Takes go on being served from the buffer; once it is empty they fail at once with
/// [`Error::RemoteUnavailable`] (the reason inside), and the fetcher retries in the background
/// (50 ms, doubling to 1 s). When the service is back, takes succeed again: nothing to do.
/// Every ID handed out came from the service once, so IDs stay unique across clients and
/// restarts as the service's are.
///
/// # Examples
///
/// ```no_run
/// use ringflake::RemoteGenerator;
///
/// let ids = RemoteGenerator::builder("https://ids.internal:8080")
///     .ca_file("/etc/ssl/ids-ca.pem")
///     .token(std::env::var("IDS_TOKEN").unwrap())
///     .generator("orders")
///     .build()?;
/// let a = ids.next_id()?;
/// let b = ids.next_id()?;
/// assert!(b > a);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct RemoteGenerator {
    /// A number no other client of this process has: whose blocks a thread holds.
    id: u64,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    wait: Duration,
}

impl std::fmt::Debug for RemoteGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteGenerator")
            .field("endpoint", &self.shared.settings.endpoint)
            .field("generator", &self.shared.settings.generator)
            .finish_non_exhaustive()
    }
}

impl RemoteGenerator {
    /// Settings for a client of the service at `endpoint`: `http://host:port` (h2c) or
    /// `https://host:port` (TLS, with [`RemoteBuilder::ca_file`]).
    ///
    /// ```
    /// let b = ringflake::RemoteGenerator::builder("http://127.0.0.1:8080");
    /// assert!(format!("{b:?}").contains("127.0.0.1:8080"));
    /// ```
    pub fn builder(endpoint: impl Into<String>) -> RemoteBuilder {
        RemoteBuilder {
            endpoint: endpoint.into(),
            generator: String::new(),
            token: None,
            ca_file: None,
            capacity: 1 << 18,
            max_lag: Duration::from_secs(10),
            timeout: Duration::from_secs(5),
            wait: Duration::from_secs(2),
            #[cfg(feature = "metrics")]
            metrics: None,
        }
    }

    /// One ID from the buffer; on an empty buffer, waits for the fetcher (at most
    /// [`RemoteBuilder::wait`]) while the service is up, or fails at once while it is down.
    ///
    /// The hot path has no lock, no allocation, no syscall, no log line and no metrics call, and
    /// no write to shared memory: each thread claims up to 128 IDs at a time from the buffer with
    /// one compare-and-swap and hands them out from a thread-local block (a range when they are
    /// consecutive, as a service's runs are), each checked against `max_lag` as it goes out. IDs one thread takes with `next_id` and `try_next_id` are
    /// strictly increasing while they come from one run of the service; the rest of a block is
    /// dropped when the thread takes from another `RemoteGenerator`, and lost when the thread
    /// exits (never handed out twice).
    ///
    /// # Errors
    ///
    /// [`Error::RemoteUnavailable`]: the buffer is empty and the service is unreachable (or
    /// sent nothing within the wait).
    ///
    /// ```no_run
    /// let ids = ringflake::RemoteGenerator::builder("http://127.0.0.1:8080").build()?;
    /// let id = ids.next_id()?;
    /// assert!(id > 0);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[inline]
    pub fn next_id(&self) -> Result<u64, Error> {
        match held::take(self.id, &self.shared.buffer) {
            Some(id) => Ok(id),
            None => self.next_id_waiting(),
        }
    }

    /// An ID if one is buffered now; never waits.
    ///
    /// ```no_run
    /// let ids = ringflake::RemoteGenerator::builder("http://127.0.0.1:8080").build()?;
    /// assert!(ids.try_next_id().is_some()); // build() filled the buffer once
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[inline]
    pub fn try_next_id(&self) -> Option<u64> {
        held::take(self.id, &self.shared.buffer)
    }

    #[cold]
    fn next_id_waiting(&self) -> Result<u64, Error> {
        let deadline = Instant::now() + self.wait;
        let mut round = 0u32;
        loop {
            self.shared.wake.notify_one();
            if let Some(id) = held::take(self.id, &self.shared.buffer) {
                return Ok(id);
            }
            if self.shared.down.load(Ordering::Acquire) {
                return Err(self.shared.unavailable(None));
            }
            if Instant::now() >= deadline {
                return Err(self.waited_in_vain());
            }
            round += 1;
            if round < 64 {
                std::hint::spin_loop();
            } else if round < 128 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    fn waited_in_vain(&self) -> Error {
        self.shared.unavailable(Some(format!(
            "no ID arrived within {:?} (demand above what the service streams?)",
            self.wait
        )))
    }

    /// [`next_id`](Self::next_id) for async code: on an empty buffer the task awaits the
    /// fetcher instead of spinning. Any Tokio runtime with its timer enabled (the fetcher runs on
    /// its own thread).
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), ringflake::Error> {
    /// let ids = ringflake::RemoteGenerator::builder("http://127.0.0.1:8080").build()?;
    /// let id = ids.next_id_async().await?;
    /// assert!(id > 0);
    /// # Ok(()) }
    /// ```
    pub async fn next_id_async(&self) -> Result<u64, Error> {
        if let Some(id) = self.shared.buffer.take() {
            return Ok(id);
        }
        let deadline = tokio::time::Instant::now() + self.wait;
        loop {
            let arrived = self.shared.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            self.shared.wake.notify_one();
            if let Some(id) = self.shared.buffer.take() {
                return Ok(id);
            }
            if self.shared.down.load(Ordering::Acquire) {
                return Err(self.shared.unavailable(None));
            }
            // Bounded without a runtime timer: the fetcher notifies on every chunk and failure;
            // a short sleep covers a notification missed between the checks above.
            let now = Instant::now();
            let left = deadline.into_std().saturating_duration_since(now);
            if left.is_zero() {
                return Err(self.waited_in_vain());
            }
            let nap = left.min(Duration::from_millis(5));
            let _ = tokio::time::timeout(nap, arrived).await;
        }
    }

    /// The client's counters now.
    ///
    /// ```no_run
    /// let ids = ringflake::RemoteGenerator::builder("http://127.0.0.1:8080").build()?;
    /// assert!(ids.stats().buffered > 0);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn stats(&self) -> RemoteStats {
        self.shared.stats()
    }
}

impl Drop for RemoteGenerator {
    /// Stops the fetcher thread and waits for it (a fetch in flight is abandoned).
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.stopping.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
