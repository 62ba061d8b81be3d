//! The worker table algorithm shared by every database: UidGenerator's "insert a row, use its
//! auto-increment id", plus leases, monotonic restarts and recycling.

use super::assigner::{Assignment, WorkerIdAssigner};
use super::lease::DEFAULT_WINDOW_SECS;
use super::node::NodeInfo;
use super::row_lease::RowLease;
use super::rows::{WorkerRow, WorkerTable};
use crate::{Clock, Error, Layout, SystemClock};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The width of the `HOST_NAME` column (`VARCHAR(64)`, as in Java's schema).
const HOST_NAME_CHARS: usize = 64;

/// How long one database call may take unless [`DatabaseAssigner::timeout`] says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Worker ids from a database table, one new row per boot, as UidGenerator's
/// `DisposableWorkerIdAssigner`, sharing its `WORKER_NODE` table with Java nodes.
///
/// With [`recycle`](Self::recycle) on (the default), the node also keeps a lease in its row (the
/// last second it may issue), which makes two things possible that Java cannot do:
///
/// - **worker ids never run out**: a boot whose new id would not fit the layout reuses the id of
///   a row whose lease has expired: its holder is gone (or has stopped issuing) and every second
///   it could have issued is in the past, so the new holder starts at the clock, above all of it;
/// - **monotonic restarts**: a new boot on the same host starts its seconds after the leases of
///   that host's earlier rows as far as its lead cap allows (never more than `max_lead` ahead of
///   the clock), which is above everything an earlier run with the same cap issued, even one
///   killed with SIGKILL at full lead.
///
/// A lease reaches `lease_window` past the newest second used, and with a lead cap never more
/// than `lease_window + max_lead` past the clock, whatever the load. `recycle(false)` is Java's
/// behaviour: a new row per boot, never reused, no lease.
///
/// Without recycling, nothing touches the database after boot (as in Java). With it, a database
/// outage while running does not stop ID issue until the lease horizon (by default 5 minutes
/// beyond the newest second used) is reached; from then on takes fail with
/// [`Error::LeaseExpired`] until the database answers again.
///
/// ```
/// use ringflake::{CachedUidGenerator, DatabaseAssigner, Layout};
///
/// let dir = tempfile::tempdir().unwrap();
/// let assigner = DatabaseAssigner::sqlite(dir.path().join("ringflake.db"))?; // recycling
///
/// let first = CachedUidGenerator::builder(Layout::default()).worker_id_from(&assigner).build()?;
/// let last_of_first_run = first.next_id()?;
/// drop(first); // releases the lease at the last second handed out
///
/// let second = CachedUidGenerator::builder(Layout::default()).worker_id_from(&assigner).build()?;
/// assert_eq!(second.worker_id(), 2); // a new row per boot
/// assert!(second.next_id()? > last_of_first_run); // restarts are monotonic
/// # Ok::<(), ringflake::Error>(())
/// ```
///
/// # Databases
///
/// | database | feature | constructor | table |
/// |---|---|---|---|
/// | SQLite (embedded, the default) | `sqlite` (default) | `DatabaseAssigner::sqlite(path)` | created on first use from `schema/sqlite.sql` |
/// | MariaDB / MySQL | `mysql` | `DatabaseAssigner::mysql("mysql://user:password@host:3306/database")` | `schema/mysql.sql`, applied by you or by [`create_table(true)`](Self::create_table) |
/// | PostgreSQL | `postgres` | `DatabaseAssigner::postgres("postgres://user:password@host:5432/database")` | `schema/postgres.sql`, applied by you or by `create_table(true)` |
///
/// Nothing is connected until the first boot asks for a worker id. An unreachable server is
/// retried with backoff for [`retry_for`](Self::retry_for) ([`DEFAULT_RETRY_FOR`](Self::DEFAULT_RETRY_FOR));
/// a wrong password, an unknown database or a missing table fail at once. Every call,
/// connecting included, is bounded by [`timeout`](Self::timeout)
/// ([`DEFAULT_TIMEOUT`](Self::DEFAULT_TIMEOUT)). Errors and `Debug` output never contain the
/// password. The MySQL schema is UidGenerator's `WORKER_NODE` plus one column, `LEASE_UNTIL`, so
/// Java nodes can share the table (a Java row has lease 0 and is never recycled).
///
/// # TLS
///
/// The URL says how, with the parameters each database's own client uses (PostgreSQL
/// `sslmode=`/`sslrootcert=`, MariaDB/MySQL `ssl-mode=`/`ssl-ca=`); [`ca_file`](Self::ca_file)
/// gives a CA file apart from it. Without a mode, `verify-full` / `VERIFY_IDENTITY` when a CA file
/// is given, else `prefer` / `PREFERRED` (TLS when the server offers it, unverified: it stops
/// eavesdroppers, not an impostor), as libpq and the MySQL client do.
///
/// | PostgreSQL `sslmode=` | MariaDB/MySQL `ssl-mode=` | TLS | certificate checked against | host name checked |
/// |---|---|---|---|---|
/// | `disable` | `DISABLED` | never | - | - |
/// | `prefer` | `PREFERRED` | when the server offers it | the CA file if one is given, else nothing | no |
/// | `require` | `REQUIRED` | always | the CA file if one is given, else nothing | no |
/// | `verify-ca` | `VERIFY_CA` | always | the CA file, else the public web roots | no |
/// | `verify-full` | `VERIFY_IDENTITY` | always | the CA file, else the public web roots | yes |
pub struct DatabaseAssigner {
    pub(super) table: Arc<dyn WorkerTable>,
    recycle: bool,
    /// The generator name written before the host in `HOST_NAME` (`orders@10.1.2.3`), if any.
    generator: Option<String>,
    window: i64,
    retry_for: Duration,
    timeout: Duration,
}

impl fmt::Debug for DatabaseAssigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("DatabaseAssigner");
        d.field("table", &self.table.describe());
        if let Some(create_table) = self.table.creates_table() {
            d.field("create_table", &create_table);
        }
        if let Some(tls) = self.table.tls() {
            d.field("tls", &tls);
        }
        if let Some(name) = &self.generator {
            d.field("generator", name);
        }
        d.field("recycle", &self.recycle)
            .field("lease_window", &Duration::from_secs(self.window as u64))
            .field("retry_for", &self.retry_for)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl DatabaseAssigner {
    /// The default [`timeout`](Self::timeout) of one database call, connecting included: 30 s.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    /// assert_eq!(DatabaseAssigner::DEFAULT_TIMEOUT.as_secs(), 30);
    /// ```
    pub const DEFAULT_TIMEOUT: Duration = DEFAULT_TIMEOUT;

    /// How long a boot retries an unreachable database by default ([`retry_for`](Self::retry_for)):
    /// 30 s.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    /// assert_eq!(DatabaseAssigner::DEFAULT_RETRY_FOR.as_secs(), 30);
    /// ```
    pub const DEFAULT_RETRY_FOR: Duration = Duration::from_secs(30);

    /// How far a lease reaches beyond the newest second used by default
    /// ([`lease_window`](Self::lease_window)): 300 s.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    /// assert_eq!(DatabaseAssigner::DEFAULT_LEASE_WINDOW.as_secs(), 300);
    /// ```
    pub const DEFAULT_LEASE_WINDOW: Duration = Duration::from_secs(DEFAULT_WINDOW_SECS as u64);

    #[cfg_attr(
        not(any(feature = "sqlite", feature = "mysql", feature = "postgres")),
        allow(dead_code)
    )]
    pub(crate) fn with_table(table: Arc<dyn WorkerTable>) -> Self {
        table.set_timeout(DEFAULT_TIMEOUT);
        DatabaseAssigner {
            table,
            recycle: true,
            generator: None,
            window: DEFAULT_WINDOW_SECS,
            retry_for: Self::DEFAULT_RETRY_FOR,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Leases, recycling of expired worker ids and monotonic restarts (default on: the default
    /// layout has 1,024 worker ids). `recycle(false)` is Java's never-reuse behaviour: one new
    /// row per boot, no lease, nothing written after boot.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("workers.db");
    /// // Without recycling the row holds no lease (0), as a Java node's row.
    /// let plain = DatabaseAssigner::sqlite(&path)?.recycle(false).assign(&Layout::default())?;
    /// assert!(plain.lease.is_none());
    /// let leased = DatabaseAssigner::sqlite(&path)?.assign(&Layout::default())?;
    /// let until = leased.lease.as_ref().expect("a lease").until();
    /// let rows = DatabaseAssigner::sqlite(&path)?.list()?;
    /// assert_eq!(rows[0].lease_until, 0);
    /// assert_eq!(rows[1].lease_until, until);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn recycle(mut self, on: bool) -> Self {
        self.recycle = on;
        self
    }

    /// Names the generator this assigner boots, for a process that runs several generators on
    /// one worker table: its rows' `HOST_NAME` is then `NAME@host` (`orders@10.1.2.3`) instead of
    /// the host alone, so that the table shows which generator holds which row, and monotonic
    /// restarts follow each generator's own earlier rows (the newest lease of the rows with the
    /// same `HOST_NAME`), not its neighbours'. Java never reads `HOST_NAME`; the column stays
    /// within its 64 characters (a longer one fails the boot with
    /// [`Error::WorkerAssignment`]).
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, NodeInfo, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("workers.db");
    /// let orders = DatabaseAssigner::sqlite(&path)?.generator("orders");
    /// let id = orders.assign_worker_id(&Layout::default())?;
    /// let row = &orders.list()?[0];
    /// assert_eq!(row.id, id);
    /// assert_eq!(row.host_name, format!("orders@{}", NodeInfo::detect().host_name));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn generator(mut self, name: &str) -> Self {
        self.generator = Some(name.to_string());
        self
    }

    /// How far beyond the newest used second a lease reaches (default 300 s). Longer survives
    /// longer database outages; shorter lets a crashed node's id be recycled sooner.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    /// use std::time::{Duration, SystemTime, UNIX_EPOCH};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("workers.db"))?
    ///     .recycle(true)
    ///     .lease_window(Duration::from_secs(60));
    /// let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    /// let a = assigner.assign(&Layout::default())?;
    /// let until = a.lease.as_ref().expect("a lease").until();
    /// assert!((before + 60..=before + 62).contains(&until), "{until} vs {before}");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn lease_window(mut self, window: Duration) -> Self {
        self.window = window.as_secs().max(1) as i64;
        self
    }

    /// How long to retry an unreachable or locked database at boot before failing (default 30 s):
    /// one deadline for the whole boot, whatever number of calls it makes. A call started before
    /// it may still take up to one [`timeout`](Self::timeout), so a boot against a database that
    /// never answers fails after about `retry_for + timeout`; with `retry_for` zero, after one
    /// timeout.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    /// use std::time::Duration;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("workers.db"))?
    ///     .retry_for(Duration::from_secs(120));
    /// assert!(format!("{assigner:?}").contains("retry_for: 120s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn retry_for(mut self, d: Duration) -> Self {
        self.retry_for = d;
        self
    }

    /// The longest any one database call may take (default 30 s, at least 1 ms): connecting, or
    /// one statement and its answer. A call still unanswered by then fails as a transient
    /// [`Error::Database`] ("no answer within …") and its connection is dropped, so the next call
    /// opens a fresh one: a server that hangs, or a connection that went dead without a reset
    /// (a failover, a dropped route), costs one timeout instead of blocking for the operating
    /// system's TCP retransmission limit (about 15 minutes on Linux).
    ///
    /// For MariaDB/MySQL it is the socket read and write timeout (and the connect timeout, at
    /// most 10 s, unless the URL sets `tcp_connect_timeout_ms`); for PostgreSQL the whole call
    /// (the connect timeout at most 10 s unless the URL sets `connect_timeout`); for SQLite how
    /// long a call waits for another process's write lock. With [`recycle`](Self::recycle) on,
    /// keep it well under the [`lease_window`](Self::lease_window): the lease is extended by these
    /// calls.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    /// use std::time::Duration;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner =
    ///     DatabaseAssigner::sqlite(dir.path().join("workers.db"))?.timeout(Duration::from_secs(5));
    /// assert!(format!("{assigner:?}").contains("timeout: 5s"));
    /// // Zero would fail every call: the least is 1 ms.
    /// let assigner = assigner.timeout(Duration::ZERO);
    /// assert!(format!("{assigner:?}").contains("timeout: 1ms"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self.table.set_timeout(self.timeout);
        self
    }

    /// Where the table is, without any password: `sqlite file ringflake.db`,
    /// `mysql://user@host:3306/database`, `postgres://user@host:5432/database`.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("workers.db");
    /// let assigner = DatabaseAssigner::sqlite(&path)?;
    /// assert_eq!(assigner.describe(), format!("sqlite file {}", path.display()));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn describe(&self) -> String {
        self.table.describe()
    }

    /// Every row of the worker table.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("workers.db"))?;
    /// let a = assigner.assign_worker_id(&Layout::default())?;
    /// let b = assigner.assign_worker_id(&Layout::default())?;
    /// let ids: Vec<u64> = assigner.list()?.iter().map(|r| r.id).collect();
    /// assert_eq!(ids, [a, b]);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Database`] naming the database and the cause.
    pub fn list(&self) -> Result<Vec<WorkerRow>, Error> {
        self.table.list()
    }

    /// Runs `op`, retrying transient failures with backoff until `deadline` (`None`: for ever).
    /// A call started before the deadline may end up to one [`timeout`](Self::timeout) after it.
    fn retrying<T>(
        &self,
        deadline: Option<Instant>,
        mut op: impl FnMut() -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut pause = Duration::from_millis(50);
        loop {
            match op() {
                Err(Error::Database {
                    transient: true, ..
                }) if deadline.is_none_or(|d| Instant::now() < d) => {
                    let left =
                        deadline.map_or(pause, |d| d.saturating_duration_since(Instant::now()));
                    std::thread::sleep(pause.min(left));
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
                other => return other,
            }
        }
    }

    pub(super) fn assign_with(
        &self,
        layout: &Layout,
        node: &NodeInfo,
    ) -> Result<Assignment, Error> {
        // One deadline for the whole boot, whatever number of calls it makes: retry_for, plus at
        // most one call's timeout.
        let deadline = Instant::now().checked_add(self.retry_for);
        let max = layout.max_worker_id();
        if !self.recycle {
            let id = self.retrying(deadline, || self.table.insert(node, 0))?;
            if id > max {
                self.retrying(deadline, || self.table.delete(id))?;
                return Err(Error::WorkerIdOutOfRange { worker_id: id, max });
            }
            return Ok(Assignment::fixed(id));
        }
        let now = SystemClock.now_seconds();
        // Ordering only: a new id has no earlier holder, and its lease starts at the clock, so
        // crash loops cannot push leases ahead.
        let floor = self.retrying(deadline, || self.table.max_lease_for_host(&node.host_name))?;
        let id = self.retrying(deadline, || self.table.insert(node, now + self.window))?;
        if id <= max {
            return Ok(self.leased(id, node, None, floor, now + self.window));
        }
        self.retrying(deadline, || self.table.delete(id))?;
        loop {
            let now = SystemClock.now_seconds();
            let candidates = self.retrying(deadline, || self.table.recyclable(max, now, 16))?;
            if candidates.is_empty() {
                // Every id is leased: wait for the earliest lease to run out, within retry_for.
                let earliest =
                    self.retrying(deadline, || self.table.recyclable(max, i64::MAX, 1))?;
                let wait = earliest
                    .first()
                    .map(|&(_, lease)| Duration::from_secs((lease + 1 - now).max(0) as u64));
                match wait {
                    Some(w) if deadline.is_none_or(|d| Instant::now() + w <= d) => {
                        std::thread::sleep(w.max(Duration::from_millis(100)));
                        continue;
                    }
                    _ => break,
                }
            }
            for (old, old_lease) in candidates {
                // Above everything the previous holder may have used (its lease has run out, so
                // that is in the past: no lead).
                let until = old_lease.saturating_add(1).max(now) + self.window;
                if self.retrying(deadline, || self.table.claim(old, old_lease, node, until))? {
                    return Ok(self.leased(old, node, Some(old_lease), floor, until));
                }
            }
        }
        Err(Error::WorkerAssignment(format!(
            "worker id {id} exceeds the max {max} and no id up to {max} in {} has an expired lease to recycle",
            self.table.describe()
        )))
    }

    fn leased(
        &self,
        id: u64,
        node: &NodeInfo,
        not_before: Option<i64>,
        order_floor: Option<i64>,
        until: i64,
    ) -> Assignment {
        Assignment {
            worker_id: id,
            not_before,
            order_floor,
            lease: Some(Box::new(RowLease::new(
                Arc::clone(&self.table),
                id,
                until,
                self.window,
                node,
            ))),
        }
    }
}

impl WorkerIdAssigner for DatabaseAssigner {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error> {
        self.assign(layout).map(|a| a.worker_id)
    }

    fn assign(&self, layout: &Layout) -> Result<Assignment, Error> {
        let mut node = NodeInfo::detect();
        if let Some(name) = &self.generator {
            node.host_name = format!("{name}@{}", node.host_name);
            let chars = node.host_name.chars().count();
            if chars > HOST_NAME_CHARS {
                return Err(Error::WorkerAssignment(format!(
                    "HOST_NAME {:?} of generator {name} is {chars} characters, more than the \
                     {HOST_NAME_CHARS} the column holds: use a shorter generator name",
                    node.host_name
                )));
            }
        }
        self.assign_with(layout, &node)
    }
}
