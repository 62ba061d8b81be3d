//! Starting the service from a Rust program, without the command line: a [`Service`] built from
//! a listening address and the generators' [`CachedBuilder`]s, run on the calling thread until
//! SIGTERM or Ctrl-C. The `ringflake` binary starts the same service from its flags (through
//! [`run`](crate::run) and the plans its flags make); this is the path for a program that
//! configures it in code.

use crate::life::{Config, run};
use crate::model::limits::{DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_LARGE_ANSWERS};
use crate::model::plan::{DEFAULT, Lead, Plan};
use ringflake::{CachedBuilder, TimeZone};
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How long a request for IDs waits for them by default (at the lead cap, or for the filler):
/// long enough for a queue of `max_wait x 2^seq_bits` IDs at the lead cap (16 clients asking for
/// 5,000 IDs each of a 13-bit sequence, 8,192 a second, queue for 10 s), shorter than the 30 s
/// or 60 s after which common HTTP clients and proxies give up.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(15);

/// How long in-flight requests may take after a stop signal by default.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// The ID service, configured in code: `GET /id`, `/ids?count=N`, `/parse/ID`, `/healthz`,
/// `/metrics`, the status page and gRPC on one address, for one generator or several.
///
/// # Examples
///
/// ```no_run
/// use ringflake::{CachedUidGenerator, Layout};
/// use ringflake_server::Service;
///
/// // Worker id 7, as a program that knows its own would; a worker table works the same way
/// // (`.worker_id_from(&DatabaseAssigner::sqlite("ids.db")?)`).
/// let ids = CachedUidGenerator::builder(Layout::default()).worker_id(7);
/// Service::new("127.0.0.1:8080".parse()?)
///     .generator(ids)
///     .run()?; // serves until SIGTERM or Ctrl-C, then releases the worker id
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Service {
    config: Config,
    zone: Option<TimeZone>,
    generators: Vec<(String, CachedBuilder)>,
}

impl fmt::Debug for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Service")
            .field("listen", &self.config.listen)
            .field("generators", &self.generators.len())
            .finish_non_exhaustive()
    }
}

/// Why the service did not start, or stopped with an error: the message names the setting and
/// what to do, as the binary prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError(String);

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServiceError {}

impl Service {
    /// A service listening on `listen`, with no generator yet and the binary's defaults for
    /// everything else (no tokens, no TLS, metrics on the same address).
    ///
    /// ```
    /// let service = ringflake_server::Service::new("127.0.0.1:0".parse().unwrap());
    /// assert!(format!("{service:?}").contains("127.0.0.1:0"));
    /// ```
    pub fn new(listen: SocketAddr) -> Service {
        Service {
            config: Config {
                listen,
                name: "ringflake".to_string(),
                shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT.as_secs(),
                threads: None,
                auth_token_file: None,
                metrics_listen: None,
                tls_cert: None,
                tls_key: None,
                max_wait: DEFAULT_MAX_WAIT,
                id_key_file: None,
                max_connections: DEFAULT_MAX_CONNECTIONS,
                max_large_answers: DEFAULT_MAX_LARGE_ANSWERS,
                json_log: false,
            },
            zone: None,
            generators: Vec::new(),
        }
    }

    /// The generator the unnamed routes serve (`/id`, `/ids`, gRPC without a name). Built when
    /// the service starts, after its address is bound: its worker id is claimed then, and
    /// released when the service stops. A second call replaces the first.
    pub fn generator(mut self, builder: CachedBuilder) -> Service {
        self.generators.retain(|(name, _)| name != DEFAULT);
        self.generators.insert(0, (DEFAULT.to_string(), builder));
        self
    }

    /// Another generator, served at `/id/{name}`, `/ids/{name}` and `/parse/{name}/ID`, with
    /// its own layout and worker id.
    pub fn named(mut self, name: impl Into<String>, builder: CachedBuilder) -> Service {
        self.generators.push((name.into(), builder));
        self
    }

    /// The default generator's `generator` label on `/metrics` (`ringflake` unless set).
    pub fn name(mut self, name: impl Into<String>) -> Service {
        self.config.name = name.into();
        self
    }

    /// The zone `/parse` renders timestamps in (the system's unless set).
    pub fn time_zone(mut self, zone: TimeZone) -> Service {
        self.zone = Some(zone);
        self
    }

    /// Serving threads (one per core unless set).
    pub fn threads(mut self, threads: u16) -> Service {
        self.config.threads = Some(threads);
        self
    }

    /// A file of bearer tokens, one a line: requests without one are refused with 401.
    pub fn auth_token_file(mut self, path: impl Into<PathBuf>) -> Service {
        self.config.auth_token_file = Some(path.into());
        self
    }

    /// Serves HTTPS with this certificate chain and private key (PEM files).
    pub fn tls(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Service {
        self.config.tls_cert = Some(cert.into());
        self.config.tls_key = Some(key.into());
        self
    }

    /// Moves `/metrics`, the status page and `/status` to an address of their own.
    pub fn metrics_listen(mut self, addr: SocketAddr) -> Service {
        self.config.metrics_listen = Some(addr);
        self
    }

    /// The longest a request for IDs waits for them ([`DEFAULT_MAX_WAIT`] unless set).
    pub fn max_wait(mut self, max_wait: Duration) -> Service {
        self.config.max_wait = max_wait;
        self
    }

    /// How long in-flight requests may take after a stop signal ([`DEFAULT_SHUTDOWN_TIMEOUT`]
    /// unless set; whole seconds).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Service {
        self.config.shutdown_timeout = timeout.as_secs();
        self
    }

    /// Boots the generators, serves until SIGTERM or Ctrl-C, then finishes in-flight requests,
    /// stops the generators and releases their worker ids. Prints the start-up lines (layout,
    /// state file, address) on standard output, as `ringflake serve` does; logs go through
    /// `tracing` to whatever subscriber the program installed.
    ///
    /// # Errors
    ///
    /// No generator; the address in use; a token, certificate or key file that cannot be read;
    /// a generator that cannot start (its layout, its worker id source, its state file): the
    /// error says which.
    pub fn run(self) -> Result<(), ServiceError> {
        if self.generators.is_empty() {
            return Err(ServiceError(
                "no generator: give the service one with Service::generator".to_string(),
            ));
        }
        if !self.generators.iter().any(|(name, _)| name == DEFAULT) {
            return Err(ServiceError(
                "no default generator: the unnamed routes need one (Service::generator)"
                    .to_string(),
            ));
        }
        let zone = match self.zone {
            Some(zone) => zone,
            None => ringflake::system_time_zone().unwrap_or(TimeZone::UTC),
        };
        let plans = move || {
            Ok((
                self.generators
                    .into_iter()
                    .map(|(name, b)| plan(name, b, &zone))
                    .collect(),
                None,
            ))
        };
        run(&self.config, plans).map_err(ServiceError)
    }
}

/// The plan of one generator configured in code: its settings read off its builder, built when
/// the service boots it.
fn plan(name: String, builder: CachedBuilder, zone: &TimeZone) -> Plan {
    let layout = *builder.layout();
    let lead = match builder.lead() {
        Some((cap, policy)) => Lead::Capped(cap.as_secs(), policy),
        None => Lead::Unbounded,
    };
    let state = builder.state_path().map(PathBuf::from);
    let mut builder = Some(builder);
    Plan {
        name,
        tz: zone.clone(),
        layout,
        source: "configured in code".to_string(),
        lead,
        state,
        namespace: None,
        boot: Box::new(move || {
            let builder = builder
                .take()
                .ok_or_else(|| "the generator was booted twice".to_string())?;
            builder.check().map_err(|e| e.to_string())?;
            Ok(Box::new(move || builder.build().map_err(|e| e.to_string())))
        }),
    }
}
