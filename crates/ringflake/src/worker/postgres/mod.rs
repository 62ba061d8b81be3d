//! The worker table in PostgreSQL (crate `tokio-postgres`, TLS by rustls with the ring provider
//! through `tokio-postgres-rustls`, driven by a private single-threaded Tokio runtime so that every
//! call is bounded by [`DatabaseAssigner::timeout`]): UidGenerator's `WORKER_NODE` table, defined
//! by `schema/postgres.sql`.
//!
//! Only what is PostgreSQL's own: the URL, the runtime, the driver calls, the error codes and the
//! statements; connecting, reconnecting and messages are `server`'s. The calls block the calling
//! thread; called from inside a Tokio runtime (a generator built in `async fn main`), they run
//! on a short-lived helper thread instead of panicking. The `key=value` form of the URL is split
//! by `key_values`; the TLS verifiers are the workers' (`worker::tls`).

mod key_values;

use super::db_clock::DatabaseTime;
use super::node::NodeInfo;
use super::rows::{Commit, TableSetup, WorkerRow, WorkerTable};
use super::secrets::url_passwords;
use super::server::{
    Driver, Failure, Problem, Server, TableDef, Tls, TlsMode, incomplete_url, invalid_url,
    take_params, tls_problem,
};
use super::table::DatabaseAssigner;
use super::tls::client_config;
use crate::Error;
use key_values::{TLS_KEYS, take_key_values};
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

/// The table definition: applied when creating the table is requested, and the file to apply by
/// hand otherwise.
pub(crate) const SCHEMA: &str = include_str!("../../../schema/postgres.sql");

/// The advisory lock that serializes concurrent `CREATE TABLE IF NOT EXISTS` (which can
/// otherwise fail with a duplicate key in the catalog): "ringflak" in ASCII.
const CREATE_LOCK: i64 = 0x7269_6e67_666c_616b;

/// A failure inside one bounded call: the driver's error, or no answer in time.
pub(crate) enum CallError {
    Driver(tokio_postgres::Error),
    TimedOut,
    /// Called inside a Tokio runtime, and no helper thread could be started.
    NoThread(std::io::Error),
    /// The TLS configuration could not be built (a CA file without a usable certificate).
    TlsConfig(String),
}

impl From<tokio_postgres::Error> for CallError {
    fn from(e: tokio_postgres::Error) -> Self {
        CallError::Driver(e)
    }
}

/// The private runtime; shut down without blocking, so that dropping the last handle to the
/// table inside an async context does not panic.
struct Runtime(Option<tokio::runtime::Runtime>);

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// The PostgreSQL client: the configuration from the URL and the runtime that drives it.
pub(crate) struct Postgres {
    config: Config,
    runtime: Runtime,
    /// The last write of each thread: the client that made it and the WAL position after its
    /// commit (see [`WorkerTable::take_commit`]). Per thread, as generators sharing the table
    /// write from their own threads and each confirms its own write.
    commits: Mutex<HashMap<ThreadId, (Arc<Client>, String)>>,
}

/// The WAL position after this session's last commit: every record inserted so far (the
/// insert position, not the write position, which `synchronous_commit = off` may leave behind).
const COMMIT_LSN: &str = "SELECT pg_current_wal_insert_lsn()::text";

/// The standbys that lack the WAL up to `$1`: those the primary streams to (`pg_stat_replication`,
/// base backups and logical subscribers left out) whose flushed position is below it or unknown
/// (a user without `pg_monitor` sees NULLs), and the physical replication slots of standbys that
/// are not connected now, whose position (`restart_lsn`, the standby's last flush) is below it.
/// A flushed position is what a promoted standby keeps.
const STANDBYS_LACKING: &str = "\
    SELECT 'standby ' || coalesce(nullif(r.application_name, ''), 'pid ' || r.pid) \
           || CASE WHEN r.state IS NULL \
              THEN ' (its position is not visible to this user: GRANT pg_monitor to it; ' \
                   || 'needed: flushed to ' || $1::text || ')' \
              ELSE ' (' || coalesce(host(r.client_addr), 'local socket') || ', ' || r.state \
                   || ', ' || coalesce(r.sync_state, '?') || ', flushed ' \
                   || coalesce(r.flush_lsn::text, 'nothing yet') || ' of ' || $1::text || ')' \
              END \
      FROM pg_stat_replication r \
     WHERE r.state IS DISTINCT FROM 'backup' \
       AND NOT EXISTS (SELECT 1 FROM pg_replication_slots l \
                        WHERE l.active_pid = r.pid AND l.slot_type = 'logical') \
       AND (r.flush_lsn IS NULL OR r.flush_lsn < $1::text::pg_lsn) \
    UNION ALL \
    SELECT 'replication slot ' || s.slot_name || ' (no standby connected, flushed ' \
           || s.restart_lsn::text || ' of ' || $1::text || ')' \
      FROM pg_replication_slots s \
     WHERE s.slot_type = 'physical' AND NOT s.active \
       AND s.restart_lsn IS NOT NULL AND s.restart_lsn < $1::text::pg_lsn";

/// The worker table on a PostgreSQL server.
pub(crate) type PostgresTable = Server<Postgres>;

impl PostgresTable {
    pub(crate) fn from_url(url: &str) -> Result<PostgresTable, Error> {
        let mut secrets = url_passwords(url);
        // sslmode and sslrootcert are read here: tokio-postgres knows neither verify-ca nor
        // verify-full, nor a CA file.
        let (rest, tls) = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            take_params(url, TLS_KEYS)
        } else {
            take_key_values(url, TLS_KEYS)
        };
        let mut mode = None;
        let mut ca = None;
        for (key, value) in tls {
            if key.eq_ignore_ascii_case("sslmode") {
                mode = Some(TlsMode::parse::<Postgres>(&value, &secrets)?);
            } else {
                ca = Some(PathBuf::from(value));
            }
        }
        let mut config: Config = rest
            .parse()
            .map_err(|e: tokio_postgres::Error| invalid_url::<Postgres>(&chain(&e), &secrets))?;
        if let Some(pass) = config.get_password() {
            secrets.push(String::from_utf8_lossy(pass).into_owned());
        }
        if config.get_hosts().is_empty() {
            return Err(incomplete_url::<Postgres>(describe(&config), "host"));
        }
        if config.get_application_name().is_none() {
            config.application_name("ringflake");
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| Error::Database {
                database: describe(&config),
                message: format!("cannot start the PostgreSQL client's Tokio runtime: {e}"),
                transient: false,
                source: Some(crate::Cause::from_error(&e)),
            })?;
        let database = describe(&config);
        let url_connect_timeout = config.get_connect_timeout().copied();
        let driver = Postgres {
            config,
            runtime: Runtime(Some(runtime)),
            commits: Mutex::new(HashMap::new()),
        };
        Ok(Server::new(
            driver,
            database,
            secrets,
            url_connect_timeout,
            mode,
            ca,
        ))
    }

    /// Runs the call `f` makes on the connection (see [`Server::with_conn`]), bounded by the
    /// timeout.
    pub(crate) fn with_client<T: Send, Fut>(
        &self,
        what: &str,
        f: impl FnOnce(Arc<Client>) -> Fut,
    ) -> Result<T, Error>
    where
        Fut: Future<Output = Result<T, tokio_postgres::Error>> + Send,
    {
        self.with_client_within(what, self.timeout(), f)
    }

    /// [`with_client`](Self::with_client) within `timeout` instead of the table's.
    pub(crate) fn with_client_within<T: Send, Fut>(
        &self,
        what: &str,
        timeout: Duration,
        f: impl FnOnce(Arc<Client>) -> Fut,
    ) -> Result<T, Error>
    where
        Fut: Future<Output = Result<T, tokio_postgres::Error>> + Send,
    {
        self.with_conn_within(what, timeout, |client| {
            self.driver.block(timeout, f(Arc::clone(client)))
        })
    }
}

impl PostgresTable {
    /// Runs the write `f` makes (see [`with_client`](Self::with_client)), then reads the WAL
    /// position after its commit on the same client, and keeps both as this thread's last
    /// commit.
    pub(crate) fn write<T: Send, Fut>(
        &self,
        what: &str,
        f: impl FnOnce(Arc<Client>) -> Fut,
    ) -> Result<T, Error>
    where
        Fut: Future<Output = Result<T, tokio_postgres::Error>> + Send,
    {
        self.write_within(what, self.timeout(), f)
    }

    /// [`write`](Self::write) within `timeout` instead of the table's.
    fn write_within<T: Send, Fut>(
        &self,
        what: &str,
        timeout: Duration,
        f: impl FnOnce(Arc<Client>) -> Fut,
    ) -> Result<T, Error>
    where
        Fut: Future<Output = Result<T, tokio_postgres::Error>> + Send,
    {
        let (out, client, lsn) = self.with_client_within(what, timeout, |c| {
            let write = f(Arc::clone(&c));
            async move {
                let out = write.await?;
                let lsn: String = c.query_one(COMMIT_LSN, &[]).await?.get(0);
                Ok((out, c, lsn))
            }
        })?;
        crate::lock::lock(&self.driver.commits).insert(std::thread::current().id(), (client, lsn));
        Ok(out)
    }
}

impl Postgres {
    fn runtime(&self) -> &tokio::runtime::Runtime {
        match self.runtime.0.as_ref() {
            Some(rt) => rt,
            None => unreachable!("the runtime is only taken when the table is dropped"),
        }
    }

    /// Runs `call` on the private runtime, bounded by `timeout`; on a helper thread when the
    /// calling thread is itself inside a Tokio runtime (where blocking on another one panics).
    fn block<T: Send>(
        &self,
        timeout: Duration,
        call: impl Future<Output = Result<T, tokio_postgres::Error>> + Send,
    ) -> Result<T, CallError> {
        let rt = self.runtime();
        let bounded = async move {
            match tokio::time::timeout(timeout, call).await {
                Ok(r) => r.map_err(CallError::Driver),
                Err(_) => Err(CallError::TimedOut),
            }
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return rt.block_on(bounded);
        }
        std::thread::scope(|s| {
            match std::thread::Builder::new()
                .name("ringflake-postgres".into())
                .spawn_scoped(s, || rt.block_on(bounded))
            {
                Ok(helper) => helper
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
                Err(e) => Err(CallError::NoThread(e)),
            }
        })
    }
}

impl Driver for Postgres {
    type Conn = Arc<Client>;
    type Error = CallError;

    const NAME: &'static str = "postgres";
    const WORKER_TABLE: TableDef = TableDef::worker(
        "schema/postgres.sql",
        SCHEMA,
        "enable create_table (DatabaseAssigner::postgres(url)?.create_table(true))",
    );
    const CREDENTIALS_REFUSED: &'static str = "authentication failed";
    // Every call is bounded by the timeout in force when it starts.
    const TIMEOUT_SET_AT_CONNECT: bool = false;
    const TLS_PARAM: &'static str = "sslmode";
    const CA_PARAM: &'static str = "sslrootcert";
    const TLS_MODES: [&'static str; 5] =
        ["disable", "prefer", "require", "verify-ca", "verify-full"];

    fn open(
        &self,
        connect_timeout: Duration,
        timeout: Duration,
        tls: &Tls,
    ) -> Result<Arc<Client>, CallError> {
        let mut config = self.config.clone();
        config.connect_timeout(connect_timeout);
        config.ssl_mode(match tls.mode {
            TlsMode::Disable => SslMode::Disable,
            TlsMode::Prefer => SslMode::Prefer,
            TlsMode::Require | TlsMode::VerifyCa | TlsMode::VerifyFull => SslMode::Require,
        });
        let connector = MakeRustlsConnect::new(client_config(tls).map_err(CallError::TlsConfig)?);
        let (client, connection) =
            self.block(timeout, async move { config.connect(connector).await })?;
        // Runs while the runtime runs (during calls); ends when the client is dropped.
        self.runtime().spawn(connection);
        Ok(Arc::new(client))
    }

    fn create_table(
        &self,
        client: &mut Arc<Client>,
        schema: &str,
        timeout: Duration,
    ) -> Result<(), CallError> {
        // The statements `Client::transaction` sends, on the shared client: a failure leaves the
        // transaction open, and the connection is then dropped (which ends it) with the error.
        self.block(timeout, async {
            client.batch_execute("BEGIN").await?;
            client
                .execute("SELECT pg_advisory_xact_lock($1)", &[&CREATE_LOCK])
                .await?;
            client.batch_execute(schema).await?;
            client.batch_execute("COMMIT").await
        })
    }

    fn replication(&self, client: &mut Arc<Client>, timeout: Duration) -> Option<String> {
        let row = self
            .block(timeout, async {
                client
                    .query_one(
                        "SELECT pg_is_in_recovery(), \
                                current_setting('synchronous_standby_names'), \
                                current_setting('synchronous_commit'), \
                                (SELECT count(*) FROM pg_stat_replication \
                                  WHERE state IS DISTINCT FROM 'backup'), \
                                (SELECT count(*) FROM pg_stat_replication \
                                  WHERE sync_state IN ('sync', 'quorum')), \
                                (SELECT count(*) FROM pg_replication_slots \
                                  WHERE slot_type = 'physical' AND NOT active)",
                        &[],
                    )
                    .await
            })
            .ok()?;
        let (standby, names, commit): (bool, String, String) = (row.get(0), row.get(1), row.get(2));
        let (streaming, sync, idle_slots): (i64, i64, i64) = (row.get(3), row.get(4), row.get(5));
        if standby {
            return Some(
                "connected to a standby (pg_is_in_recovery): writes fail until it is promoted"
                    .into(),
            );
        }
        let settings =
            format!("synchronous_standby_names = '{names}', synchronous_commit = {commit}");
        Some(match (streaming, idle_slots) {
            (0, 0) => format!(
                "a primary with no standby streaming and no inactive replication slot ({settings}): \
                 nothing can lose a commit in a failover, unless a standby it does not report \
                 exists (see docs/workers.md)"
            ),
            _ => format!(
                "a primary with {streaming} standby(s) streaming, {sync} of them synchronous, and \
                 {idle_slots} inactive physical slot(s) ({settings}): each claim and lease \
                 extension is used only once every standby holds it, unless \
                 --accept-async-replication"
            ),
        })
    }

    fn execute(
        &self,
        client: &mut Arc<Client>,
        sql: &str,
        timeout: Duration,
    ) -> Result<(), CallError> {
        self.block(timeout, client.batch_execute(sql))
    }

    fn is_closed(client: &Arc<Client>) -> bool {
        client.is_closed()
    }

    fn found_closed(&self, client: &Arc<Client>, timeout: Duration) -> bool {
        if !client.is_closed() {
            // The connection's task runs only while the runtime runs: a moment of it reads what
            // arrived meanwhile (the end of a stream the server closed), without a query.
            let _ = self.block(Duration::from_millis(5).min(timeout), async {
                tokio::time::sleep(Duration::from_millis(1)).await;
                Ok::<(), tokio_postgres::Error>(())
            });
        }
        client.is_closed()
    }

    fn cause<'e>(&self, e: &'e CallError) -> Option<&'e (dyn std::error::Error + 'static)> {
        match e {
            CallError::Driver(e) => Some(e),
            CallError::NoThread(e) => Some(e),
            CallError::TimedOut | CallError::TlsConfig(_) => None,
        }
    }

    fn classify(&self, e: &CallError) -> Failure {
        let e = match e {
            CallError::Driver(e) => e,
            CallError::TimedOut => return Failure::NoAnswer(None),
            CallError::NoThread(e) => {
                return Failure::Failed {
                    message: format!(
                        "called inside a Tokio runtime, and cannot start a thread to block on: {e}"
                    ),
                    transient: true,
                    problem: None,
                };
            }
            CallError::TlsConfig(message) => {
                return Failure::Failed {
                    message: message.clone(),
                    transient: false,
                    problem: None,
                };
            }
        };
        if let Some(problem) = tls_problem(e) {
            return Failure::Failed {
                message: chain(e),
                transient: false,
                problem: Some(problem),
            };
        }
        match e.as_db_error() {
            Some(db) => {
                let code = db.code().code();
                let transient = code.starts_with("08")
                    || code.starts_with("53")
                    || matches!(
                        code,
                        "57P01" | "57P02" | "57P03" | "57014" | "40001" | "40P01"
                            // A standby (read-only): a failover in progress, the promotion may
                            // come.
                            | "25006"
                    );
                Failure::Failed {
                    message: format!("{} {code}: {}", db.severity(), db.message()),
                    transient,
                    problem: match code {
                        "42P01" => Some(Problem::MissingTable),
                        "42703" => Some(Problem::MissingColumn),
                        // pg_hba.conf has hostssl lines only: "... no encryption".
                        "28000" if db.message().contains("no encryption") => {
                            Some(Problem::ServerRequiresTls)
                        }
                        "28P01" | "28000" => Some(Problem::Credentials),
                        "3D000" => Some(Problem::UnknownDatabase),
                        _ => None,
                    },
                }
            }
            None if chain(e).contains("server does not support TLS") => Failure::Failed {
                message: chain(e),
                transient: false,
                problem: Some(Problem::ServerWithoutTls),
            },
            None => {
                let io = std::error::Error::source(e)
                    .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some());
                Failure::Failed {
                    message: chain(e),
                    transient: io || e.is_closed() || e.to_string().starts_with("timeout"),
                    problem: None,
                }
            }
        }
    }
}

/// An error and its causes, `a: b: c` (the driver's own message omits the cause).
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// `postgres://user@host:port/database`, never the password.
fn describe(config: &Config) -> String {
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match h {
                Host::Tcp(name) => format!("{name}:{port}"),
                Host::Unix(path) => format!("{}:{port}", path.display()),
            }
        })
        .collect();
    let db = config.get_dbname().or(config.get_user()).unwrap_or("");
    format!("postgres://{user}{}/{db}", hosts.join(","))
}

impl WorkerTable for PostgresTable {
    fn insert(&self, node: &NodeInfo, lease_until: i64) -> Result<u64, Error> {
        self.write("cannot insert into WORKER_NODE", |c| async move {
            // RETURNING gives this statement's own row: concurrent boots each get their id.
            let row = c.query_one(
                "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED, LEASE_UNTIL) \
                 VALUES ($1, $2, $3, $4::text::date, NOW(), NOW(), $5) RETURNING ID",
                &[&node.host_name, &node.port, &node.node_type, &node.launch_date, &lease_until],
            )
            .await?;
            Ok(row.get::<_, i64>(0) as u64)
        })
    }

    fn delete(&self, id: u64) -> Result<(), Error> {
        self.with_client("cannot delete from WORKER_NODE", |c| async move {
            c.execute("DELETE FROM WORKER_NODE WHERE ID = $1", &[&(id as i64)])
                .await
                .map(|_| ())
        })
    }

    fn max_lease_for_host(&self, host: &str) -> Result<Option<i64>, Error> {
        self.with_client("cannot read WORKER_NODE", |c| async move {
            c.query_one(
                "SELECT MAX(LEASE_UNTIL) FROM WORKER_NODE WHERE HOST_NAME = $1 AND LEASE_UNTIL > 0",
                &[&host],
            )
            .await
            .map(|r| r.get::<_, Option<i64>>(0))
        })
    }

    fn recyclable(&self, max_id: u64, before: i64, limit: u32) -> Result<Vec<(u64, i64)>, Error> {
        let max_id = i64::try_from(max_id).unwrap_or(i64::MAX);
        self.with_client("cannot read WORKER_NODE", |c| async move {
            c.query(
                "SELECT ID, LEASE_UNTIL FROM WORKER_NODE \
                 WHERE ID <= $1 AND LEASE_UNTIL > 0 AND LEASE_UNTIL < $2 \
                 ORDER BY LEASE_UNTIL, ID LIMIT $3",
                &[&max_id, &before, &i64::from(limit)],
            )
            .await
            .map(|rows| {
                rows.iter()
                    .map(|r| (r.get::<_, i64>(0) as u64, r.get::<_, i64>(1)))
                    .collect()
            })
        })
    }

    fn claim(
        &self,
        id: u64,
        expected: i64,
        node: &NodeInfo,
        lease_until: i64,
    ) -> Result<bool, Error> {
        self.write("cannot update WORKER_NODE", |c| async move {
            c.execute(
                "UPDATE WORKER_NODE SET HOST_NAME = $1, PORT = $2, TYPE = $3, LAUNCH_DATE = $4::text::date, \
                 MODIFIED = NOW(), LEASE_UNTIL = $5 WHERE ID = $6 AND LEASE_UNTIL = $7",
                &[
                    &node.host_name,
                    &node.port,
                    &node.node_type,
                    &node.launch_date,
                    &lease_until,
                    &(id as i64),
                    &expected,
                ],
            )
            .await
            .map(|n| n == 1)
        })
    }

    fn set_lease(&self, id: u64, expected: i64, lease_until: i64) -> Result<bool, Error> {
        self.set_lease_within(id, expected, lease_until, self.timeout())
    }

    fn set_lease_within(
        &self,
        id: u64,
        expected: i64,
        lease_until: i64,
        within: Duration,
    ) -> Result<bool, Error> {
        // Typed parameters: one round trip (no separate prepare), as the lease keeper runs it
        // every few seconds.
        use tokio_postgres::types::Type;
        let within = within.min(self.timeout());
        self.write_within("cannot update WORKER_NODE", within, |c| async move {
            c.execute_typed(
                "UPDATE WORKER_NODE SET LEASE_UNTIL = $1, MODIFIED = NOW() \
                 WHERE ID = $2 AND LEASE_UNTIL = $3",
                &[
                    (&lease_until, Type::INT8),
                    (&(id as i64), Type::INT8),
                    (&expected, Type::INT8),
                ],
            )
            .await
            .map(|n| n == 1)
        })
    }

    fn clock(&self, within: Duration) -> Result<Option<DatabaseTime>, Error> {
        // clock_timestamp(): the time when read (now() is the transaction's start). Typed, no
        // parameters: one round trip, measured around it.
        self.with_client_within("cannot read the database's clock", within, |c| async move {
            let sent = std::time::Instant::now();
            let rows = c
                .query_typed(
                    "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::int8",
                    &[],
                )
                .await?;
            let round_trip = sent.elapsed();
            Ok(rows.first().map(|r| DatabaseTime {
                unix_micros: r.get(0),
                round_trip,
            }))
        })
    }

    fn list(&self) -> Result<Vec<WorkerRow>, Error> {
        self.with_client("cannot read WORKER_NODE", |c| async move {
            c.query(
                "SELECT ID, HOST_NAME, PORT, TYPE, to_char(LAUNCH_DATE, 'YYYY-MM-DD'), LEASE_UNTIL \
                 FROM WORKER_NODE ORDER BY ID",
                &[],
            )
            .await
            .map(|rows| {
                rows.iter()
                    .map(|r| WorkerRow {
                        id: r.get::<_, i64>(0) as u64,
                        host_name: r.get(1),
                        port: r.get(2),
                        node_type: r.get(3),
                        launch_date: r.get(4),
                        lease_until: r.get(5),
                    })
                    .collect()
            })
        })
    }

    fn take_commit(&self) -> Option<Commit> {
        let taken = crate::lock::lock(&self.driver.commits).remove(&std::thread::current().id());
        taken.map(|c| Commit(Box::new(c)))
    }

    fn standbys_lacking(&self, commit: &Commit, within: Duration) -> Result<Vec<String>, Error> {
        let Some((client, lsn)) = commit.0.downcast_ref::<(Arc<Client>, String)>() else {
            return Ok(Vec::new());
        };
        if client.is_closed() {
            // Another connection may lead to another server (the relay switched to a promoted
            // standby): its standbys say nothing about this write.
            return Err(Error::Database {
                database: TableSetup::describe(self),
                message: "the connection that made the write is closed: whether the write \
                          reached the standbys cannot be known"
                    .into(),
                // Asking again cannot tell either.
                transient: false,
                source: None,
            });
        }
        let lsn = lsn.clone();
        let c = Arc::clone(client);
        let within = within.min(self.timeout());
        self.driver
            .block(within, async move {
                c.query(STANDBYS_LACKING, &[&lsn])
                    .await
                    .map(|rows| rows.iter().map(|r| r.get::<_, String>(0)).collect())
            })
            .map_err(|e| {
                if matches!(e, CallError::TimedOut) {
                    // A connection gone silent (a host that vanished): the next write reconnects
                    // rather than waiting on it again.
                    self.drop_conn_if(|kept| Arc::ptr_eq(kept, client));
                }
                self.error_within(&e, "cannot read pg_stat_replication", within)
            })
    }

    fn synchronous_setting(&self) -> &'static str {
        "synchronous_standby_names naming them, with synchronous_commit on"
    }

    fn connection_broke(&self) -> bool {
        self.broke_since_asked()
    }
}

impl DatabaseAssigner {
    /// Worker ids from the `WORKER_NODE` table of a PostgreSQL database:
    /// `postgres://user:password@host:5432/database` (or the `host=… user=…` key-value form).
    /// TLS as libpq's `sslmode` says (`disable`, `prefer` (the default), `require`, `verify-ca`,
    /// `verify-full`), with the CA file of `sslrootcert=PATH` or [`ca_file`](Self::ca_file)
    /// (which makes `verify-full` the default); see the README's "Databases" section.
    /// The table must exist (apply `schema/postgres.sql`), unless
    /// [`create_table`](Self::create_table) is on.
    ///
    /// Nothing is connected until the first assignment, which retries an unreachable server
    /// for [`retry_for`](Self::retry_for). A wrong password or a missing table fails at once.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] if the URL cannot be parsed or names no host.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    ///
    /// let assigner = DatabaseAssigner::postgres("postgres://app:s3cret@db.internal:5432/ids")?;
    /// // Descriptions and errors name the server and user, never the password.
    /// let shown = format!("{assigner:?}");
    /// assert!(shown.contains("postgres://app@db.internal:5432/ids"));
    /// assert!(!shown.contains("s3cret"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn postgres(url: &str) -> Result<DatabaseAssigner, Error> {
        Ok(DatabaseAssigner::with_table(Arc::new(
            PostgresTable::from_url(url)?,
        )))
    }

    /// `postgres(url)?.create_table(create_table)`: the same assigner, built in one call; prefer
    /// [`postgres`](Self::postgres) and [`create_table`](Self::create_table).
    ///
    /// # Errors
    ///
    /// As [`postgres`](Self::postgres).
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    ///
    /// let assigner =
    ///     DatabaseAssigner::postgres_with("postgres://app:pw@127.0.0.1:5432/ids", true)?;
    /// assert!(format!("{assigner:?}").contains("create_table: true"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn postgres_with(url: &str, create_table: bool) -> Result<DatabaseAssigner, Error> {
        Ok(DatabaseAssigner::postgres(url)?.create_table(create_table))
    }
}

#[cfg(test)]
mod tests;
