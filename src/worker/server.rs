//! What the two server clients (MariaDB/MySQL and PostgreSQL) share: one connection opened on
//! first use and reopened after a transient failure, every call bounded by the timeout, the table
//! probed (or created) on connect, and failures turned into [`Error::Database`] with a hint for
//! the known problems and no password. Each database supplies a [`Driver`]; its statements stay
//! in its own module.

use super::secrets::redact;
use super::table::{DatabaseAssigner, TableSetup};
use crate::Error;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Every column ringflake reads or writes: the probe that tells a missing table or column.
const PROBE: &str = "SELECT ID, HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED, \
                                LEASE_UNTIL FROM WORKER_NODE LIMIT 0";

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
    /// The schema file in ringflake's sources, for messages: `schema/mysql.sql`.
    const SCHEMA_FILE: &'static str;
    /// How the server refuses wrong credentials, for the hint: `access denied`.
    const CREDENTIALS_REFUSED: &'static str;
    /// Whether a new timeout applies only to connections opened after it: the kept connection
    /// is then dropped when the timeout changes.
    const TIMEOUT_SET_AT_CONNECT: bool;

    /// Opens a connection: the TCP connection within `connect_timeout`, every step within
    /// `timeout`.
    fn open(&self, connect_timeout: Duration, timeout: Duration)
    -> Result<Self::Conn, Self::Error>;
    /// Creates the table from the schema file if it is missing.
    fn create_table(&self, conn: &mut Self::Conn, timeout: Duration) -> Result<(), Self::Error>;
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
    /// What a failure means.
    fn classify(&self, e: &Self::Error) -> Failure;
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
}

impl Problem {
    /// What to do about it, ending in `; ` (the driver's message follows).
    fn hint<D: Driver>(self) -> String {
        let (name, schema) = (D::NAME, D::SCHEMA_FILE);
        match self {
            Problem::MissingTable => format!(
                "table WORKER_NODE not found: apply {schema} to the database or enable create_table (DatabaseAssigner::{name}(url)?.create_table(true)); "
            ),
            Problem::MissingColumn => format!(
                "table WORKER_NODE lacks ringflake's column: ALTER TABLE WORKER_NODE ADD COLUMN LEASE_UNTIL BIGINT NOT NULL DEFAULT 0 (see {schema}); "
            ),
            Problem::Credentials => format!(
                "{}: check the user and password in the URL; ",
                D::CREDENTIALS_REFUSED
            ),
            Problem::UnknownDatabase => "unknown database: create it or fix the URL; ".to_string(),
        }
    }
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
    }
}

/// How long a server client waits for a TCP connection: the URL's own setting if it has one, else
/// the call timeout but at most 10 s.
fn connect_timeout(from_url: Option<Duration>, timeout: Duration) -> Duration {
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
    timeout: Mutex<Duration>,
    conn: Mutex<Option<D::Conn>>,
}

impl<D: Driver> Server<D> {
    pub(crate) fn new(
        driver: D,
        database: String,
        secrets: Vec<String>,
        url_connect_timeout: Option<Duration>,
    ) -> Self {
        Server {
            driver,
            database,
            secrets,
            url_connect_timeout,
            create_table: AtomicBool::new(false),
            timeout: Mutex::new(INITIAL_TIMEOUT),
            conn: Mutex::new(None),
        }
    }

    /// The longest one call may take.
    pub(crate) fn timeout(&self) -> Duration {
        *self.timeout.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens a connection and checks (or creates) the table.
    fn connect(&self) -> Result<D::Conn, Error> {
        let timeout = self.timeout();
        let mut conn = self
            .driver
            .open(connect_timeout(self.url_connect_timeout, timeout), timeout)
            .map_err(|e| self.error(&e, "cannot connect"))?;
        if self.create_table.load(Ordering::Relaxed) {
            self.driver.create_table(&mut conn, timeout).map_err(|e| {
                self.error(
                    &e,
                    &format!("cannot create table WORKER_NODE from {}", D::SCHEMA_FILE),
                )
            })?;
        }
        self.driver
            .execute(&mut conn, PROBE, timeout)
            .map_err(|e| self.error(&e, "cannot read table WORKER_NODE"))?;
        Ok(conn)
    }

    /// Runs `f` on the connection, opening it first if needed; drops the connection after a
    /// transient failure (a timeout included) so that the next attempt reconnects. `what` names
    /// the operation in the error.
    pub(crate) fn with_conn<T>(
        &self,
        what: &str,
        f: impl FnOnce(&mut D::Conn) -> Result<T, D::Error>,
    ) -> Result<T, Error> {
        let mut guard = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let conn = match guard.take() {
            Some(conn) if !D::is_closed(&conn) => guard.insert(conn),
            _ => guard.insert(self.connect()?),
        };
        f(conn).map_err(|e| {
            let err = self.error(&e, what);
            if matches!(
                err,
                Error::Database {
                    transient: true,
                    ..
                }
            ) {
                *guard = None;
            }
            err
        })
    }

    /// The error for a failed call: `what` failed, why, a hint where the cause is known, never
    /// a password.
    fn error(&self, e: &D::Error, what: &str) -> Error {
        let (message, transient) = match self.driver.classify(e) {
            Failure::NoAnswer(detail) => {
                let message = no_answer(what, self.timeout());
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
                let hint = problem.map(Problem::hint::<D>).unwrap_or_default();
                (format!("{what}: {hint}{message}"), transient)
            }
        };
        Error::Database {
            database: self.database.clone(),
            message: redact(&message, &self.secrets),
            transient,
        }
    }
}

impl<D: Driver> TableSetup for Server<D> {
    fn describe(&self) -> String {
        self.database.clone()
    }

    fn set_timeout(&self, timeout: Duration) {
        *self.timeout.lock().unwrap_or_else(|e| e.into_inner()) = timeout;
        if D::TIMEOUT_SET_AT_CONNECT {
            // The next call opens a connection with the new timeout.
            *self.conn.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    fn creates_table(&self) -> Option<bool> {
        Some(self.create_table.load(Ordering::Relaxed))
    }

    fn set_create_table(&self, on: bool) {
        self.create_table.store(on, Ordering::Relaxed);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_connect_timeout_wins_else_the_call_timeout_up_to_10_s() {
        let s = Duration::from_secs;
        assert_eq!(connect_timeout(Some(s(60)), s(5)), s(60));
        assert_eq!(connect_timeout(None, s(5)), s(5));
        assert_eq!(connect_timeout(None, s(30)), s(10));
    }
}
