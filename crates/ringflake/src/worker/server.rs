//! What the two server clients (MariaDB/MySQL and PostgreSQL) share: one connection opened on
//! first use and reopened after a transient failure, every call bounded by the timeout, the table
//! probed (or created) on connect, the TLS mode and CA file, and failures turned into
//! [`Error::Database`] with a hint for the known problems and no password. Each database supplies
//! a [`Driver`]; its statements stay in its own module.

use super::rows::TableSetup;
use super::secrets::{percent_decode, redact};
use super::table::DatabaseAssigner;
pub(crate) use super::table_def::TableDef;
use crate::{Cause, Error};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long a call may take until [`DatabaseAssigner::timeout`] says otherwise (the assigner sets
/// its own default at once).
const INITIAL_TIMEOUT: Duration = Duration::from_secs(30);

/// What one server database's client does differently; [`Server`] does the rest.
pub(crate) trait Driver: Send + Sync + 'static {
    /// An open connection.
    type Conn: Send;
    /// The failure of one call.
    type Error;

    /// The URL scheme and the [`DatabaseAssigner`] constructor: `mysql`, `postgres`.
    const NAME: &'static str;
    /// The worker table, in this database's words.
    const WORKER_TABLE: TableDef;
    /// How the server refuses wrong credentials, for the hint: `access denied`.
    const CREDENTIALS_REFUSED: &'static str;
    /// Whether a new timeout applies only to connections opened after it: the kept connection
    /// is then dropped when the timeout changes.
    const TIMEOUT_SET_AT_CONNECT: bool;
    /// The URL parameter that sets the TLS mode: `sslmode`, `ssl-mode`.
    const TLS_PARAM: &'static str;
    /// The URL parameter that names a CA file: `sslrootcert`, `ssl-ca`.
    const CA_PARAM: &'static str;
    /// The names of the modes in the URL, in [`TlsMode`]'s order.
    const TLS_MODES: [&'static str; 5];

    /// Opens a connection: the TCP connection within `connect_timeout`, every step within
    /// `timeout`, TLS as `tls` says.
    fn open(
        &self,
        connect_timeout: Duration,
        timeout: Duration,
        tls: &Tls,
    ) -> Result<Self::Conn, Self::Error>;
    /// Creates the table from its schema (`;`-separated statements) if it is missing.
    fn create_table(
        &self,
        conn: &mut Self::Conn,
        schema: &str,
        timeout: Duration,
    ) -> Result<(), Self::Error>;
    /// Whether the server can lose an acknowledged write in a failover, as its settings say:
    /// for the log line of the first connection. `None` if it cannot tell.
    fn replication(&self, _conn: &mut Self::Conn, _timeout: Duration) -> Option<String> {
        None
    }
    /// Runs `sql`, which returns no rows, within `timeout`.
    fn execute(
        &self,
        conn: &mut Self::Conn,
        sql: &str,
        timeout: Duration,
    ) -> Result<(), Self::Error>;
    /// Whether a kept connection is known to be closed, so that it is reopened before use.
    fn is_closed(_conn: &Self::Conn) -> bool {
        false
    }
    /// Whether a kept connection is closed, finding out without a query where the driver can
    /// (within `timeout`); by default what [`is_closed`](Self::is_closed) knows.
    fn found_closed(&self, conn: &Self::Conn, _timeout: Duration) -> bool {
        Self::is_closed(conn)
    }
    /// What a failure means.
    fn classify(&self, e: &Self::Error) -> Failure;
    /// The driver's own error inside a failure, if it has one: kept as the
    /// [`Error::Database`]'s source.
    fn cause<'e>(&self, e: &'e Self::Error) -> Option<&'e (dyn std::error::Error + 'static)>;
}

/// What a failed call means, as the driver tells it.
pub(crate) enum Failure {
    /// The server did not answer within the timeout; the driver's own words, if any.
    NoAnswer(Option<String>),
    /// Anything else.
    Failed {
        /// The driver's message, without the operation (the server adds it).
        message: String,
        /// Whether retrying may help.
        transient: bool,
        /// The known problem behind it, for a hint.
        problem: Option<Problem>,
    },
}

/// The problems a failure message gives a hint for.
#[derive(Clone, Copy)]
pub(crate) enum Problem {
    /// There is no `WORKER_NODE` table.
    MissingTable,
    /// The table lacks a column ringflake needs (Java's table: no `LEASE_UNTIL`).
    MissingColumn,
    /// The user or password was refused.
    Credentials,
    /// The database in the URL does not exist.
    UnknownDatabase,
    /// TLS: the server's certificate chain does not lead to a trusted CA.
    UnknownCa,
    /// TLS: the server's certificate does not name the host connected to.
    NameMismatch,
    /// TLS: the server's certificate is refused for another reason (expired, bad signature...).
    BadCertificate,
    /// TLS was required and the server does not offer it.
    ServerWithoutTls,
    /// The server refuses connections without TLS, and the mode turned TLS off.
    ServerRequiresTls,
}

impl Problem {
    /// What to do about it, ending in `; ` (the driver's message follows). `ca` is the CA file
    /// in force, if any.
    fn hint<D: Driver>(self, tls: &Tls, table: &TableDef) -> String {
        let (schema, create) = (table.schema_file, table.create_hint);
        let mode = |m: TlsMode| format!("{}={}", D::TLS_PARAM, D::TLS_MODES[m as usize]);
        let trusted = match &tls.ca {
            Some(ca) => format!("the CA file {}", ca.path.display()),
            None => "the public web roots (no CA file given)".to_string(),
        };
        match self {
            Problem::MissingTable => format!(
                "table {} not found: apply {schema} to the database or {create}; ",
                table.name
            ),
            Problem::MissingColumn => format!("{} (see {schema}); ", table.missing_column),
            Problem::Credentials => format!(
                "{}: check the user and password in the URL; ",
                D::CREDENTIALS_REFUSED
            ),
            Problem::UnknownDatabase => "unknown database: create it or fix the URL; ".to_string(),
            Problem::UnknownCa => format!(
                "TLS certificate verification failed: the server's certificate is not signed by a CA in {trusted}: give the CA that signed it with --db-ca-file (DatabaseAssigner::ca_file) or {}=PATH in the URL; ",
                D::CA_PARAM
            ),
            Problem::NameMismatch => format!(
                "TLS host name verification failed ({}): the server's certificate does not name the host in the URL: connect by a name or address the certificate lists, or check the CA only with {}; ",
                mode(TlsMode::VerifyFull),
                mode(TlsMode::VerifyCa)
            ),
            Problem::BadCertificate => {
                format!("TLS certificate verification failed (checked against {trusted}); ")
            }
            Problem::ServerWithoutTls => format!(
                "the server does not offer TLS, which {} requires: enable TLS on the server, or use {} for a server on a trusted network; ",
                mode(tls.mode),
                mode(TlsMode::Disable)
            ),
            Problem::ServerRequiresTls => format!(
                "the server may accept only TLS connections and {} turns TLS off: use {} with the CA file (--db-ca-file), or leave {} out; ",
                mode(tls.mode),
                mode(TlsMode::VerifyFull),
                D::TLS_PARAM
            ),
        }
    }
}

/// How a connection uses TLS: libpq's `sslmode` values, which MariaDB/MySQL's `ssl-mode` values
/// map onto one to one (`DISABLED`, `PREFERRED`, `REQUIRED`, `VERIFY_CA`, `VERIFY_IDENTITY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TlsMode {
    /// Plain TCP.
    Disable = 0,
    /// TLS if the server offers it, plain TCP otherwise.
    Prefer = 1,
    /// TLS or no connection.
    Require = 2,
    /// TLS with the certificate chain checked against the CA.
    VerifyCa = 3,
    /// TLS with the chain checked and the host name (or address) in the certificate.
    VerifyFull = 4,
}

impl TlsMode {
    const ALL: [TlsMode; 5] = [
        TlsMode::Disable,
        TlsMode::Prefer,
        TlsMode::Require,
        TlsMode::VerifyCa,
        TlsMode::VerifyFull,
    ];

    /// The mode a URL value names (case-insensitive, `-` and `_` alike), in driver `D`'s names.
    pub(crate) fn parse<D: Driver>(value: &str, secrets: &[String]) -> Result<TlsMode, Error> {
        let norm = |s: &str| s.to_ascii_lowercase().replace('_', "-");
        TlsMode::ALL
            .into_iter()
            .find(|&m| norm(D::TLS_MODES[m as usize]) == norm(value))
            .ok_or_else(|| {
                invalid_url::<D>(
                    &format!(
                        "{}={value} is not a TLS mode: expected one of {}",
                        D::TLS_PARAM,
                        D::TLS_MODES.join(", ")
                    ),
                    secrets,
                )
            })
    }
}

/// A CA file, read: its path and its certificates.
pub(crate) struct CaFile {
    pub(crate) path: PathBuf,
    /// PostgreSQL's rustls configuration takes them; the mysql crate reads the file itself (the
    /// read here checks it first, for a clear error).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) certs: Vec<CertificateDer<'static>>,
}

/// The TLS a connection uses: the mode in force and the CA file, read.
pub(crate) struct Tls {
    pub(crate) mode: TlsMode,
    pub(crate) ca: Option<CaFile>,
}

impl Tls {
    /// The mode in force: the URL's; without one, `verify-full` when a CA file is given (it asks
    /// for verification), else `prefer` (libpq's and MySQL's default: TLS when the server offers
    /// it, plain TCP for a local server without it).
    pub(crate) fn mode(url_mode: Option<TlsMode>, has_ca: bool) -> TlsMode {
        match url_mode {
            Some(m) => m,
            None if has_ca => TlsMode::VerifyFull,
            None => TlsMode::Prefer,
        }
    }

    /// Whether the certificate chain is checked: in the verify modes, and in `prefer` and
    /// `require` when a CA file is given (libpq's rule for `require` with a root certificate).
    pub(crate) fn verify_chain(&self) -> bool {
        match self.mode {
            TlsMode::Disable => false,
            TlsMode::Prefer | TlsMode::Require => self.ca.is_some(),
            TlsMode::VerifyCa | TlsMode::VerifyFull => true,
        }
    }

    /// Whether the certificate must name the host connected to.
    pub(crate) fn verify_name(&self) -> bool {
        self.mode == TlsMode::VerifyFull
    }
}

/// Reads the certificates of a PEM (or single DER) CA file.
pub(crate) fn read_ca(path: &Path) -> Result<CaFile, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("cannot read the CA file {}: {e}", path.display()))?;
    let mut certs = Vec::new();
    for cert in CertificateDer::pem_slice_iter(&bytes) {
        certs.push(cert.map_err(|e| {
            format!(
                "the CA file {} is not a PEM certificate file: {e}",
                path.display()
            )
        })?);
    }
    if certs.is_empty() {
        if bytes.first() == Some(&0x30) {
            // DER: one certificate.
            certs.push(CertificateDer::from(bytes));
        } else {
            return Err(format!(
                "the CA file {} holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)",
                path.display()
            ));
        }
    }
    Ok(CaFile {
        path: path.to_path_buf(),
        certs,
    })
}

/// The query parameters of `url` (`scheme://...?a=1&b=2`) whose key, lower-cased with `_` as `-`,
/// is among `keys`: taken out, as (key as given, percent-decoded value), with the URL left
/// without them.
pub(crate) fn take_params(url: &str, keys: &[&str]) -> (String, Vec<(String, String)>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), Vec::new());
    };
    let (query, fragment) = match query.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query, None),
    };
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let norm = percent_decode(k).to_ascii_lowercase().replace('_', "-");
        if keys.contains(&norm.as_str()) {
            taken.push((percent_decode(k), percent_decode(v)));
        } else {
            kept.push(pair);
        }
    }
    let mut out = base.to_string();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    (out, taken)
}

/// The TLS problem behind an error, if it is one: a rustls error anywhere in its chain (an
/// `io::Error` may carry it).
pub(crate) fn tls_problem(e: &(dyn std::error::Error + 'static)) -> Option<Problem> {
    use rustls::CertificateError as C;
    let mut next = Some(e);
    while let Some(e) = next {
        let rustls = e.downcast_ref::<rustls::Error>().or_else(|| {
            e.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(r) = rustls {
            return Some(match r {
                rustls::Error::InvalidCertificate(C::UnknownIssuer) => Problem::UnknownCa,
                rustls::Error::InvalidCertificate(
                    C::NotValidForName | C::NotValidForNameContext { .. },
                ) => Problem::NameMismatch,
                _ => Problem::BadCertificate,
            });
        }
        next = e.source();
    }
    None
}

/// The URL a driver expects, for messages: `mysql://user:password@host:port/database`.
fn expected_url<D: Driver>() -> String {
    format!("{}://user:password@host:port/database", D::NAME)
}

/// The error for a URL the driver cannot parse; `detail` is the driver's reason, redacted.
pub(crate) fn invalid_url<D: Driver>(detail: &str, secrets: &[String]) -> Error {
    Error::Database {
        database: format!("{} (URL not understood)", D::NAME),
        message: redact(
            &format!("invalid URL, expected {}: {detail}", expected_url::<D>()),
            secrets,
        ),
        transient: false,
        source: None,
    }
}

/// The error for a URL that lacks a part (`database`, `host`).
pub(crate) fn incomplete_url<D: Driver>(database: String, missing: &str) -> Error {
    Error::Database {
        database,
        message: format!(
            "the URL names no {missing}: expected {}",
            expected_url::<D>()
        ),
        transient: false,
        source: None,
    }
}

/// How long a server client waits for a TCP connection: the URL's own setting if it has one, else
/// the call timeout but at most 10 s.
pub(crate) fn connect_timeout(from_url: Option<Duration>, timeout: Duration) -> Duration {
    from_url.unwrap_or(timeout.min(Duration::from_secs(10)))
}

/// The message of a call that timed out: `what` failed, after `timeout`, the connection dropped.
fn no_answer(what: &str, timeout: Duration) -> String {
    format!("{what}: no answer within {timeout:?}, connection dropped")
}

/// A worker table on a database server: the driver, and the one connection it keeps.
///
/// The connection is opened on first use, not by the constructor, so that a database that is
/// still starting is retried for [`DatabaseAssigner::retry_for`] like any other transient
/// failure; a connection that breaks or does not answer in time is dropped and reopened on the
/// next operation.
pub(crate) struct Server<D: Driver> {
    /// First, so that it is dropped before the connection (PostgreSQL: the runtime).
    pub(crate) driver: D,
    /// The database without its password: `mysql://user@host:3306/db`.
    database: String,
    /// The passwords the URL carries, kept out of every message.
    secrets: Vec<String>,
    /// The URL's own connect timeout (see [`connect_timeout`]).
    url_connect_timeout: Option<Duration>,
    /// Whether connecting creates the table when it is missing.
    create_table: AtomicBool,
    /// The replication of the server was logged (on the first connection).
    replication_told: AtomicBool,
    /// The kept connection was dropped after a failure (see [`Server::broke_since_asked`]).
    dropped: AtomicBool,
    /// The table it keeps.
    table: TableDef,
    /// The URL's TLS mode, if it names one.
    url_tls_mode: Option<TlsMode>,
    /// The CA file: [`DatabaseAssigner::ca_file`]'s, else the URL's.
    ca_file: Mutex<Option<PathBuf>>,
    timeout: Mutex<Duration>,
    conn: Mutex<Option<D::Conn>>,
}

impl<D: Driver> Server<D> {
    pub(crate) fn new(
        driver: D,
        database: String,
        secrets: Vec<String>,
        url_connect_timeout: Option<Duration>,
        url_tls_mode: Option<TlsMode>,
        url_ca_file: Option<PathBuf>,
    ) -> Self {
        Server {
            driver,
            database,
            secrets,
            url_connect_timeout,
            create_table: AtomicBool::new(false),
            replication_told: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            table: D::WORKER_TABLE,
            url_tls_mode,
            ca_file: Mutex::new(url_ca_file),
            timeout: Mutex::new(INITIAL_TIMEOUT),
            conn: Mutex::new(None),
        }
    }

    /// The same server and connection settings, keeping `table` instead of the worker table.
    #[cfg(feature = "segment")]
    pub(crate) fn for_table(mut self, table: TableDef) -> Self {
        self.table = table;
        self
    }

    fn ca_path(&self) -> Option<PathBuf> {
        crate::lock::lock(&self.ca_file).clone()
    }

    /// The TLS in force, without reading the CA file (for messages).
    fn tls_unread(&self) -> Tls {
        let path = self.ca_path();
        Tls {
            mode: Tls::mode(self.url_tls_mode, path.is_some()),
            ca: path.map(|path| CaFile {
                path,
                certs: Vec::new(),
            }),
        }
    }

    /// The TLS in force, its CA file read (a file that cannot be read is an error that retrying
    /// does not mend).
    fn tls(&self) -> Result<Tls, Error> {
        let mut tls = self.tls_unread();
        if let Some(ca) = &tls.ca {
            let read = read_ca(&ca.path).map_err(|message| Error::Database {
                database: self.database.clone(),
                message: format!("cannot connect: {message}"),
                transient: false,
                source: None,
            })?;
            tls.ca = Some(read);
        }
        Ok(tls)
    }

    /// The longest one call may take.
    pub(crate) fn timeout(&self) -> Duration {
        *crate::lock::lock(&self.timeout)
    }

    /// Opens a connection and checks (or creates) the table, each step within `timeout`.
    fn connect(&self, timeout: Duration) -> Result<D::Conn, Error> {
        let tls = self.tls()?;
        let mut conn = self
            .driver
            .open(
                connect_timeout(self.url_connect_timeout, timeout),
                timeout,
                &tls,
            )
            .map_err(|e| self.error_within(&e, "cannot connect", timeout))?;
        let table = &self.table;
        if self.create_table.load(Ordering::Relaxed) {
            self.driver
                .create_table(&mut conn, table.schema, timeout)
                .map_err(|e| {
                    self.error_within(
                        &e,
                        &format!(
                            "cannot create table {} from {}",
                            table.name, table.schema_file
                        ),
                        timeout,
                    )
                })?;
        }
        self.driver
            .execute(&mut conn, table.probe, timeout)
            .map_err(|e| {
                self.error_within(&e, &format!("cannot read table {}", table.name), timeout)
            })?;
        if !self.replication_told.swap(true, Ordering::Relaxed)
            && let Some(replication) = self.driver.replication(&mut conn, timeout)
        {
            tracing::info!(
                database = %self.database,
                replication = %replication,
                "worker table replication: {replication}"
            );
        }
        Ok(conn)
    }

    /// Runs `f` on the connection, opening it first if needed; drops the connection after a
    /// transient failure (a timeout included) so that the next attempt reconnects. `what` names
    /// the operation in the error.
    #[cfg(feature = "mysql")] // PostgreSQL's calls all name their timeout (with_conn_within)
    pub(crate) fn with_conn<T>(
        &self,
        what: &str,
        f: impl FnOnce(&mut D::Conn) -> Result<T, D::Error>,
    ) -> Result<T, Error> {
        self.with_conn_within(what, self.timeout(), f)
    }

    /// [`with_conn`](Self::with_conn), connecting within `timeout` (which `f` is to keep to as
    /// well) instead of the table's timeout.
    pub(crate) fn with_conn_within<T>(
        &self,
        what: &str,
        timeout: Duration,
        f: impl FnOnce(&mut D::Conn) -> Result<T, D::Error>,
    ) -> Result<T, Error> {
        let mut guard = crate::lock::lock(&self.conn);
        let conn = match guard.take() {
            Some(conn) if !D::is_closed(&conn) => guard.insert(conn),
            kept => {
                if kept.is_some() {
                    self.dropped.store(true, Ordering::Relaxed);
                }
                guard.insert(self.connect(timeout)?)
            }
        };
        f(conn).map_err(|e| {
            let err = self.error_within(&e, what, timeout);
            if matches!(
                err,
                Error::Database {
                    transient: true,
                    ..
                }
            ) {
                *guard = None;
                self.dropped.store(true, Ordering::Relaxed);
            }
            err
        })
    }

    /// Whether the kept connection is found closed (the driver looks without a query where it
    /// can), or was dropped after a failure, since the last call of this: the connection is then
    /// dropped, and the next call reconnects.
    pub(crate) fn broke_since_asked(&self) -> bool {
        let mut guard = crate::lock::lock(&self.conn);
        let closed = guard
            .as_ref()
            .is_some_and(|conn| self.driver.found_closed(conn, self.timeout()));
        if closed {
            *guard = None;
        }
        self.dropped.swap(false, Ordering::Relaxed) | closed
    }

    /// Drops the kept connection if `is_it` says it is the one a call made apart from
    /// [`with_conn`](Self::with_conn) found silent: the next call reconnects instead of waiting
    /// on it again.
    #[cfg(feature = "postgres")] // only PostgreSQL's standby check makes calls apart from with_conn
    pub(crate) fn drop_conn_if(&self, is_it: impl FnOnce(&D::Conn) -> bool) {
        let mut guard = crate::lock::lock(&self.conn);
        if guard.as_ref().is_some_and(is_it) {
            *guard = None;
        }
    }

    /// The error for a failed call bounded by `timeout`: `what` failed, why, a hint where the
    /// cause is known, never a password.
    pub(crate) fn error_within(&self, e: &D::Error, what: &str, timeout: Duration) -> Error {
        let (message, transient) = match self.driver.classify(e) {
            Failure::NoAnswer(detail) => {
                let message = no_answer(what, timeout);
                match detail {
                    Some(detail) => (format!("{message} ({detail})"), true),
                    None => (message, true),
                }
            }
            Failure::Failed {
                message,
                transient,
                problem,
            } => {
                let tls = self.tls_unread();
                let mut hint = problem
                    .map(|p| p.hint::<D>(&tls, &self.table))
                    .unwrap_or_default();
                if matches!(problem, Some(Problem::Credentials)) && tls.mode == TlsMode::Disable {
                    // MariaDB's require_secure_transport refuses a plain connection as a wrong
                    // password.
                    hint.push_str(&format!(
                        "or, as the connection was without TLS, {}",
                        Problem::ServerRequiresTls.hint::<D>(&tls, &self.table)
                    ));
                }
                (format!("{what}: {hint}{message}"), transient)
            }
        };
        let clean = |text: &str| redact(text, &self.secrets);
        Error::Database {
            database: self.database.clone(),
            message: clean(&message),
            transient,
            source: self.driver.cause(e).map(|c| Cause::capture(c, &clean)),
        }
    }
}

impl<D: Driver> TableSetup for Server<D> {
    fn describe(&self) -> String {
        self.database.clone()
    }

    fn set_timeout(&self, timeout: Duration) {
        *crate::lock::lock(&self.timeout) = timeout;
        if D::TIMEOUT_SET_AT_CONNECT {
            // The next call opens a connection with the new timeout.
            *crate::lock::lock(&self.conn) = None;
        }
    }

    fn creates_table(&self) -> Option<bool> {
        Some(self.create_table.load(Ordering::Relaxed))
    }

    fn set_create_table(&self, on: bool) {
        self.create_table.store(on, Ordering::Relaxed);
    }

    fn set_ca_file(&self, path: &Path) {
        *crate::lock::lock(&self.ca_file) = Some(path.to_path_buf());
        // The next call connects with it.
        *crate::lock::lock(&self.conn) = None;
    }

    fn tls(&self) -> Option<String> {
        let tls = self.tls_unread();
        let mode = format!("{}={}", D::TLS_PARAM, D::TLS_MODES[tls.mode as usize]);
        Some(match tls.ca {
            Some(ca) => format!("{mode} with CA file {}", ca.path.display()),
            None => mode,
        })
    }
}

impl DatabaseAssigner {
    /// Whether connecting to a MariaDB/MySQL or PostgreSQL server creates the `WORKER_NODE`
    /// table when it is missing (default off: the table must exist). On, it is created from
    /// `schema/mysql.sql` or `schema/postgres.sql` with `CREATE TABLE IF NOT EXISTS`, which needs
    /// the CREATE privilege (PostgreSQL: serialized between nodes booting at once by an advisory
    /// lock). A SQLite file always gets its table on first use, whatever this says.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    ///
    /// # #[cfg(feature = "mysql")]
    /// let assigner = DatabaseAssigner::mysql("mysql://app:pw@127.0.0.1:3306/ids")?;
    /// # #[cfg(not(feature = "mysql"))]
    /// # let assigner = DatabaseAssigner::postgres("postgres://app:pw@127.0.0.1:5432/ids")?;
    /// assert!(format!("{assigner:?}").contains("create_table: false"));
    /// let assigner = assigner.create_table(true);
    /// assert!(format!("{assigner:?}").contains("create_table: true"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn create_table(self, on: bool) -> Self {
        self.table.set_create_table(on);
        self
    }

    /// Trust the CA certificates in this PEM file (one or more `-----BEGIN CERTIFICATE-----`
    /// blocks) for TLS to a MariaDB/MySQL or PostgreSQL server, instead of the URL's
    /// `ssl-ca`/`sslrootcert`. The file is read at each connection; one that cannot be read
    /// fails the connection at once (no retrying), naming it.
    ///
    /// Unless the URL names a mode (`sslmode=…` / `ssl-mode=…`), a CA file means `verify-full`
    /// (`VERIFY_IDENTITY`): TLS, the server's certificate signed by this CA and naming the host
    /// of the URL. In `prefer` and `require` it makes the chain checked too; `disable` ignores
    /// it. A SQLite assigner ignores it.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    ///
    /// # #[cfg(feature = "postgres")]
    /// let assigner = DatabaseAssigner::postgres("postgres://app:pw@db.internal:5432/ids")?;
    /// # #[cfg(not(feature = "postgres"))]
    /// # let assigner = DatabaseAssigner::mysql("mysql://app:pw@db.internal:3306/ids")?;
    /// // Without a CA file nor a mode: TLS when the server offers it (sslmode=prefer, libpq's
    /// // default; ssl-mode=PREFERRED for MariaDB/MySQL).
    /// assert!(format!("{assigner:?}").to_lowercase().contains("mode=prefer"));
    /// let assigner = assigner.ca_file("/etc/ssl/db-ca.pem");
    /// // With one: verify-full (VERIFY_IDENTITY), against it.
    /// let shown = format!("{assigner:?}");
    /// # #[cfg(feature = "postgres")]
    /// assert!(shown.contains("sslmode=verify-full with CA file /etc/ssl/db-ca.pem"));
    /// # #[cfg(not(feature = "postgres"))]
    /// # assert!(shown.contains("ssl-mode=VERIFY_IDENTITY with CA file /etc/ssl/db-ca.pem"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn ca_file(self, path: impl AsRef<Path>) -> Self {
        self.table.set_ca_file(path.as_ref());
        self
    }
}
