//! The embedded default: the worker table in a SQLite file (rusqlite with bundled SQLite), created
//! on first use from `schema/sqlite.sql`.

use super::node::NodeInfo;
use super::rows::{TableSetup, WorkerRow, WorkerTable};
use super::table::DatabaseAssigner;
use crate::{Cause, Error};
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior, params};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The table definition, applied on first use.
pub(crate) const SCHEMA: &str = include_str!("../../schema/sqlite.sql");

/// The default file: `ringflake.db` in the working directory.
///
/// ```
/// use ringflake::{DEFAULT_SQLITE_PATH, DatabaseAssigner};
///
/// let dir = tempfile::tempdir().unwrap();
/// let assigner = DatabaseAssigner::sqlite(dir.path().join(DEFAULT_SQLITE_PATH))?;
/// assert!(assigner.describe().ends_with("ringflake.db"));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub const DEFAULT_SQLITE_PATH: &str = "ringflake.db";

struct SqliteTable {
    path: PathBuf,
    conn: Mutex<Conn>,
}

/// The connection and what has been done with it.
struct Conn {
    conn: Connection,
    /// How long a call waits for another connection's lock (SQLite's busy timeout).
    timeout: Duration,
    /// Whether the schema has been applied (always, for a read-only table: it is never applied).
    ready: bool,
    /// Opened for listing only: nothing is ever written.
    read_only: bool,
}

impl SqliteTable {
    /// Opens (creating) the file; the table is created by the first call, within its timeout
    /// and the boot's retries, not here: opening takes no lock, so it cannot wait on one.
    fn open(path: &Path) -> Result<SqliteTable, Error> {
        let conn = Connection::open(path).map_err(|e| to_error(path, e, None))?;
        Ok(SqliteTable::with(path, conn, false))
    }

    /// Opens an existing file read-only: no file, journal or table is ever created, nothing is
    /// written.
    fn open_read_only(path: &Path) -> Result<SqliteTable, Error> {
        let fail = |message: String| Error::Database {
            database: format!("sqlite file {}", path.display()),
            message,
            transient: false,
            source: None,
        };
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => {}
            Ok(_) => return Err(fail("not a regular file".into())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(fail(format!(
                    "no such file: {}; ringflake creates it on the first boot, not when listing",
                    path.display()
                )));
            }
            Err(e) => return Err(fail(format!("cannot read it: {e}"))),
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| to_error(path, e, None))?;
        Ok(SqliteTable::with(path, conn, true))
    }

    fn with(path: &Path, conn: Connection, read_only: bool) -> SqliteTable {
        SqliteTable {
            path: path.to_path_buf(),
            conn: Mutex::new(Conn {
                conn,
                timeout: Duration::ZERO,
                ready: read_only,
                read_only,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Conn> {
        crate::lock::lock(&self.conn)
    }

    /// Creates the table if this connection has not yet (never for a read-only table).
    fn prepare(&self, c: &mut Conn) -> Result<(), Error> {
        if !c.ready {
            c.conn
                .execute_batch(SCHEMA)
                .map_err(|e| to_error(&self.path, e, Some(c.timeout)))?;
            c.ready = true;
        }
        Ok(())
    }

    /// Runs `f` in an IMMEDIATE transaction: the write lock is taken up front, so concurrent
    /// boots are serialized by SQLite's busy timeout instead of failing on upgrade.
    fn write<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, Error> {
        let mut c = self.lock();
        if c.read_only {
            return Err(Error::Database {
                database: self.describe(),
                message: "opened read-only (DatabaseAssigner::sqlite_read_only, for listing): \
                          it cannot assign worker ids or keep leases"
                    .into(),
                transient: false,
                source: None,
            });
        }
        self.run(&mut c, TransactionBehavior::Immediate, f)
    }

    /// Runs `f` in a read transaction: no write lock is taken.
    fn read<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, Error> {
        let mut c = self.lock();
        self.run(&mut c, TransactionBehavior::Deferred, f)
    }

    fn run<T>(
        &self,
        c: &mut Conn,
        behavior: TransactionBehavior,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, Error> {
        self.prepare(c)?;
        let timeout = Some(c.timeout);
        let db = |e| to_error(&self.path, e, timeout);
        let tx = c.conn.transaction_with_behavior(behavior).map_err(db)?;
        let out = f(&tx).map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(out)
    }
}

pub(crate) fn to_error(path: &Path, e: rusqlite::Error, timeout: Option<Duration>) -> Error {
    let busy = matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    );
    let mut message = e.to_string();
    if busy && let Some(t) = timeout {
        message.push_str(&format!(
            " (another connection held its lock for longer than the timeout, {t:?})"
        ));
    }
    if message.contains("no such table: WORKER_NODE") {
        message.push_str(" (not a ringflake or UidGenerator worker database)");
    }
    Error::Database {
        database: format!("sqlite file {}", path.display()),
        message,
        transient: busy,
        source: Some(Cause::from_error(&e)),
    }
}

impl TableSetup for SqliteTable {
    fn describe(&self) -> String {
        format!("sqlite file {}", self.path.display())
    }

    fn set_timeout(&self, timeout: Duration) {
        let mut c = self.lock();
        c.timeout = timeout;
        // Cannot fail for a positive duration (it installs SQLite's default busy handler).
        let _ = c.conn.busy_timeout(timeout);
    }
}

impl WorkerTable for SqliteTable {
    fn insert(&self, node: &NodeInfo, lease_until: i64) -> Result<u64, Error> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED, LEASE_UNTIL) \
                 VALUES (?1, ?2, ?3, ?4, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, ?5)",
                params![node.host_name, node.port, node.node_type, node.launch_date, lease_until],
            )?;
            Ok(tx.last_insert_rowid() as u64)
        })
    }

    fn delete(&self, id: u64) -> Result<(), Error> {
        self.write(|tx| {
            tx.execute("DELETE FROM WORKER_NODE WHERE ID = ?1", params![id as i64])
                .map(|_| ())
        })
    }

    fn max_lease_for_host(&self, host: &str) -> Result<Option<i64>, Error> {
        self.write(|tx| {
            tx.query_row(
                "SELECT MAX(LEASE_UNTIL) FROM WORKER_NODE WHERE HOST_NAME = ?1 AND LEASE_UNTIL > 0",
                params![host],
                |r| r.get::<_, Option<i64>>(0),
            )
        })
    }

    fn recyclable(&self, max_id: u64, before: i64, limit: u32) -> Result<Vec<(u64, i64)>, Error> {
        self.write(|tx| {
            let mut st = tx.prepare(
                "SELECT ID, LEASE_UNTIL FROM WORKER_NODE \
                 WHERE ID <= ?1 AND LEASE_UNTIL > 0 AND LEASE_UNTIL < ?2 \
                 ORDER BY LEASE_UNTIL, ID LIMIT ?3",
            )?;
            st.query_map(params![max_id as i64, before, limit], |r| {
                Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)?))
            })?
            .collect()
        })
    }

    fn claim(
        &self,
        id: u64,
        expected: i64,
        node: &NodeInfo,
        lease_until: i64,
    ) -> Result<bool, Error> {
        self.write(|tx| {
            tx.execute(
                "UPDATE WORKER_NODE SET HOST_NAME = ?1, PORT = ?2, TYPE = ?3, LAUNCH_DATE = ?4, \
                 MODIFIED = CURRENT_TIMESTAMP, LEASE_UNTIL = ?5 WHERE ID = ?6 AND LEASE_UNTIL = ?7",
                params![
                    node.host_name,
                    node.port,
                    node.node_type,
                    node.launch_date,
                    lease_until,
                    id as i64,
                    expected
                ],
            )
            .map(|n| n == 1)
        })
    }

    fn set_lease(&self, id: u64, expected: i64, lease_until: i64) -> Result<bool, Error> {
        self.write(|tx| {
            tx.execute(
                "UPDATE WORKER_NODE SET LEASE_UNTIL = ?1, MODIFIED = CURRENT_TIMESTAMP \
                 WHERE ID = ?2 AND LEASE_UNTIL = ?3",
                params![lease_until, id as i64, expected],
            )
            .map(|n| n == 1)
        })
    }

    fn list(&self) -> Result<Vec<WorkerRow>, Error> {
        self.read(|tx| {
            let mut st = tx.prepare(
                "SELECT ID, HOST_NAME, PORT, TYPE, LAUNCH_DATE, LEASE_UNTIL FROM WORKER_NODE ORDER BY ID",
            )?;
            st.query_map([], |r| {
                Ok(WorkerRow {
                    id: r.get::<_, i64>(0)? as u64,
                    host_name: r.get(1)?,
                    port: r.get(2)?,
                    node_type: r.get(3)?,
                    launch_date: r.get(4)?,
                    lease_until: r.get(5)?,
                })
            })?
            .collect()
        })
    }
}

impl DatabaseAssigner {
    /// Worker ids from the SQLite file at `path` (created, with its table, on first use).
    /// Processes booting at once on one machine each get a distinct id.
    ///
    /// Opening takes no lock: the table is created by the first call, which waits at most
    /// [`timeout`](Self::timeout) for another process's lock, retried within
    /// [`retry_for`](Self::retry_for). To list an existing file without ever creating or writing
    /// it, use [`sqlite_read_only`](Self::sqlite_read_only).
    ///
    /// # Errors
    ///
    /// [`Error::Database`] naming the file if it cannot be opened; creating the table fails the
    /// first call instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("workers.db"))?;
    /// let a = assigner.assign_worker_id(&Layout::default())?;
    /// let b = assigner.assign_worker_id(&Layout::default())?;
    /// assert_eq!(b, a + 1); // a new row, a new id, on every boot
    /// assert_eq!(assigner.list()?.len(), 2);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn sqlite(path: impl AsRef<Path>) -> Result<DatabaseAssigner, Error> {
        Ok(DatabaseAssigner::with_table(Arc::new(SqliteTable::open(
            path.as_ref(),
        )?)))
    }

    /// The worker table in the existing SQLite file at `path`, opened read-only: for
    /// [`list`](Self::list) (`ringflake workers`). Unlike [`sqlite`](Self::sqlite) it never
    /// creates the file, a journal or the table, and never writes: listing leaves the file as it
    /// was, bytes and modification time. Assigning a worker id from it fails.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] naming the file if it does not exist ("no such file"), is not a
    /// regular file, or cannot be opened; [`list`](Self::list) then fails if the file has no
    /// `WORKER_NODE` table.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Error, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("workers.db");
    /// // A typo lists nothing and creates nothing.
    /// let err = DatabaseAssigner::sqlite_read_only(&path).unwrap_err();
    /// assert!(err.to_string().contains("no such file"));
    /// assert!(!path.exists());
    ///
    /// let id = DatabaseAssigner::sqlite(&path)?.assign_worker_id(&Layout::default())?;
    /// let listing = DatabaseAssigner::sqlite_read_only(&path)?;
    /// assert_eq!(listing.list()?[0].id, id);
    /// assert!(listing.assign_worker_id(&Layout::default()).is_err()); // read-only
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn sqlite_read_only(path: impl AsRef<Path>) -> Result<DatabaseAssigner, Error> {
        Ok(DatabaseAssigner::with_table(Arc::new(
            SqliteTable::open_read_only(path.as_ref())?,
        )))
    }
}
