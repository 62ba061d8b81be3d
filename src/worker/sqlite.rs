//! The embedded default: the worker table in a SQLite file (rusqlite with bundled SQLite), created
//! on first use from `schema/sqlite.sql`.

use super::node::NodeInfo;
use super::table::{DatabaseAssigner, TableSetup, WorkerRow, WorkerTable};
use crate::Error;
use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};
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
    conn: Mutex<Connection>,
}

impl SqliteTable {
    fn open(path: &Path) -> Result<SqliteTable, Error> {
        let db = |e: rusqlite::Error| to_error(path, e);
        let conn = Connection::open(path).map_err(db)?;
        // Many processes booting at once queue on the write lock instead of failing.
        conn.busy_timeout(Duration::from_secs(30)).map_err(db)?;
        conn.execute_batch(SCHEMA).map_err(db)?;
        Ok(SqliteTable {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    /// Runs `f` in an IMMEDIATE transaction: the write lock is taken up front, so concurrent
    /// boots are serialized by SQLite's busy timeout instead of failing on upgrade.
    fn write<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, Error> {
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| to_error(&self.path, e))?;
        let out = f(&tx).map_err(|e| to_error(&self.path, e))?;
        tx.commit().map_err(|e| to_error(&self.path, e))?;
        Ok(out)
    }
}

fn to_error(path: &Path, e: rusqlite::Error) -> Error {
    let transient = matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    );
    Error::Database {
        database: format!("sqlite file {}", path.display()),
        message: e.to_string(),
        transient,
    }
}

impl TableSetup for SqliteTable {
    fn describe(&self) -> String {
        format!("sqlite file {}", self.path.display())
    }

    fn set_timeout(&self, timeout: Duration) {
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        // Cannot fail for a positive duration (it installs SQLite's default busy handler).
        let _ = conn.busy_timeout(timeout);
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
        self.write(|tx| {
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
    /// # Errors
    ///
    /// [`Error::Database`] naming the file if it cannot be opened or the table created.
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

    /// Reads a row directly; for tests and the `workers` listing.
    #[doc(hidden)]
    pub fn sqlite_lease_of(path: impl AsRef<Path>, id: u64) -> Result<Option<i64>, Error> {
        let t = SqliteTable::open(path.as_ref())?;
        t.write(|tx| {
            tx.query_row(
                "SELECT LEASE_UNTIL FROM WORKER_NODE WHERE ID = ?1",
                params![id as i64],
                |r| r.get(0),
            )
            .optional()
        })
    }
}
