//! What a database must do with `WORKER_NODE` rows: the statements ([`WorkerTable`]) and the
//! connection settings ([`TableSetup`]) each database implements, and a row as read
//! ([`WorkerRow`]). The algorithm over them is in `table`.

use super::node::NodeInfo;
use crate::Error;
use std::fmt;
use std::time::Duration;

/// One row of the worker table, as [`DatabaseAssigner::list`](crate::DatabaseAssigner::list) reads it.
///
/// ```
/// use ringflake::{DatabaseAssigner, Layout, NodeInfo, WorkerIdAssigner};
///
/// let dir = tempfile::tempdir().unwrap();
/// let assigner = DatabaseAssigner::sqlite(dir.path().join("workers.db"))?;
/// let id = assigner.assign_worker_id(&Layout::default())?;
/// let row = &assigner.list()?[0];
/// assert_eq!(row.id, id);
/// assert_eq!(row.host_name, NodeInfo::detect().host_name);
/// assert!(row.lease_until > 0); // the lease that recycling (the default) keeps
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerRow {
    /// `ID`: the worker id.
    pub id: u64,
    /// `HOST_NAME`.
    pub host_name: String,
    /// `PORT`.
    pub port: String,
    /// `TYPE`.
    pub node_type: i32,
    /// `LAUNCH_DATE`.
    pub launch_date: String,
    /// `LEASE_UNTIL`: the last unix second its holder may issue (0: no lease, e.g. a Java node).
    pub lease_until: i64,
}

/// A write made on one connection, as its database describes it (PostgreSQL: the client and the
/// WAL position after the commit): what [`WorkerTable::standbys_lacking`] checks.
/// (Read by the server databases only.)
#[cfg_attr(not(any(feature = "mysql", feature = "postgres")), allow(dead_code))]
pub(crate) struct Commit(pub(crate) Box<dyn std::any::Any + Send>);

impl fmt::Debug for Commit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Commit { .. }")
    }
}

/// Where a table is and how calls to it are bounded: the part of a [`WorkerTable`] that is not a
/// statement (the server clients share one implementation of it).
pub(crate) trait TableSetup {
    /// Where the table is, without secrets: "sqlite file x.db", "mysql://u@h:3306/db".
    fn describe(&self) -> String;
    /// Bounds every later call (connecting included) to about `timeout`: past it the call fails
    /// as a transient error and the connection is dropped.
    fn set_timeout(&self, timeout: Duration);
    /// Whether connecting creates the table when it is missing; `None` where that is not a
    /// choice (SQLite creates it on open).
    fn creates_table(&self) -> Option<bool> {
        None
    }
    /// Makes later connections create the table when it is missing, or not; ignored where that
    /// is not a choice.
    #[cfg(any(feature = "mysql", feature = "postgres"))]
    fn set_create_table(&self, _on: bool) {}
    /// Makes later connections trust the CA certificates in `path`; ignored where there is no
    /// TLS (SQLite).
    #[cfg(any(feature = "mysql", feature = "postgres"))]
    fn set_ca_file(&self, _path: &std::path::Path) {}
    /// The TLS mode and CA file in force, for `Debug`; `None` where there is no TLS.
    fn tls(&self) -> Option<String> {
        None
    }
}

/// The statements one database provides; the algorithm in `table` does the rest.
pub(crate) trait WorkerTable: TableSetup + Send + Sync + 'static {
    /// Inserts a row for `node` and returns its auto-increment id.
    fn insert(&self, node: &NodeInfo, lease_until: i64) -> Result<u64, Error>;
    /// Deletes a row.
    fn delete(&self, id: u64) -> Result<(), Error>;
    /// The highest lease among the rows of `host`.
    fn max_lease_for_host(&self, host: &str) -> Result<Option<i64>, Error>;
    /// Rows with `0 < LEASE_UNTIL < before` and `ID <= max_id`, oldest lease first.
    fn recyclable(&self, max_id: u64, before: i64, limit: u32) -> Result<Vec<(u64, i64)>, Error>;
    /// Takes over row `id` for `node` if its lease is still `expected`.
    fn claim(
        &self,
        id: u64,
        expected: i64,
        node: &NodeInfo,
        lease_until: i64,
    ) -> Result<bool, Error>;
    /// Moves row `id`'s lease from `expected` to `lease_until`; false if someone else moved it.
    fn set_lease(&self, id: u64, expected: i64, lease_until: i64) -> Result<bool, Error>;
    /// [`set_lease`](Self::set_lease), connecting included, within `within` where the database
    /// can bound one call apart from the others (PostgreSQL); else within the table's timeout.
    fn set_lease_within(
        &self,
        id: u64,
        expected: i64,
        lease_until: i64,
        _within: Duration,
    ) -> Result<bool, Error> {
        self.set_lease(id, expected, lease_until)
    }
    /// Every row, by id.
    fn list(&self) -> Result<Vec<WorkerRow>, Error>;
    /// The database's own clock, read in one round trip (a read, never a write); `None` for a
    /// database without a clock of its own (SQLite runs on this node's clock). One read takes at
    /// most `within` (where the driver can bound it).
    fn clock(&self, _within: Duration) -> Result<Option<super::db_clock::DatabaseTime>, Error> {
        Ok(None)
    }
    /// The last write this thread made (`insert`, `claim`, `set_lease`), taken, for
    /// [`standbys_lacking`](Self::standbys_lacking); `None` where a write cannot be lost in a
    /// failover (SQLite: no standby).
    fn take_commit(&self) -> Option<Commit> {
        None
    }
    /// The standbys that do not hold `commit` yet, described for a message (`standby s1
    /// (127.0.0.1, streaming, flushed 0/3000000 of 0/3000148)`); empty when every standby holds
    /// it. Checked on the connection that made the write: a connection lost since fails the
    /// check (a new one may lead to another server).
    /// One check takes at most `within` (and the table's timeout).
    fn standbys_lacking(&self, _commit: &Commit, _within: Duration) -> Result<Vec<String>, Error> {
        Ok(Vec::new())
    }
    /// Whether the connection to the database broke since the last call of this (a server that
    /// closed it, found without a query where the driver can): the next call reconnects, maybe
    /// to another server. `false` where there is no connection to lose (SQLite).
    fn connection_broke(&self) -> bool {
        false
    }
    /// The setting that makes standbys synchronous, for messages.
    fn synchronous_setting(&self) -> &'static str {
        "synchronous replication"
    }
}

impl fmt::Debug for dyn WorkerTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}
