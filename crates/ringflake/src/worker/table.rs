//! The worker table algorithm shared by every database: UidGenerator's "insert a row, use its
//! auto-increment id", plus leases, monotonic restarts and recycling.

use super::assigner::{Assignment, WorkerIdAssigner};
use super::lease::DEFAULT_WINDOW_SECS;
use super::node::{NodeInfo, random_below};
use super::owner::{Holder, Owned, OwnerFile};
use super::row_lease::RowLease;
use super::rows::{WorkerRow, WorkerTable};
use crate::{Clock, Error, Layout, SystemClock};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod take_back;

/// The width of the `HOST_NAME` column (`VARCHAR(64)`, as in Java's schema).
const HOST_NAME_CHARS: usize = 64;

/// The least time a claim waits for its standbys, whatever the boot's deadline.
const MIN_CONFIRM: Duration = Duration::from_secs(5);

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
///   killed with SIGKILL at full lead; with a [state file](crate::CachedBuilder::state_file), no
///   further than the highest second it records (a lease runs a window ahead of what its holder
///   used; the state file says exactly), so that a boot beside a live one starts at the clock.
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
    /// The state file whose owner file lets a restart take its predecessor's row back.
    keep: Option<PathBuf>,
    /// Serve claims and leases without waiting for the standbys to hold them.
    accept_async: bool,
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
            .field("keep_worker_id", &self.keep)
            .field("accept_async_replication", &self.accept_async)
            .finish_non_exhaustive()
    }
}

impl DatabaseAssigner {
    /// The default [`timeout`](Self::timeout) of one database call, connecting included: 30 s.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = format!("{:?}", DatabaseAssigner::sqlite(dir.path().join("ids.db"))?);
    /// assert!(table.contains(&format!("timeout: {:?}", DatabaseAssigner::DEFAULT_TIMEOUT)), "{table}");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const DEFAULT_TIMEOUT: Duration = DEFAULT_TIMEOUT;

    /// How long a boot retries an unreachable database by default ([`retry_for`](Self::retry_for)):
    /// 30 s.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = format!("{:?}", DatabaseAssigner::sqlite(dir.path().join("ids.db"))?);
    /// assert!(table.contains(&format!("retry_for: {:?}", DatabaseAssigner::DEFAULT_RETRY_FOR)), "{table}");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const DEFAULT_RETRY_FOR: Duration = Duration::from_secs(30);

    /// How far a lease reaches beyond the newest second used by default
    /// ([`lease_window`](Self::lease_window)): 300 s.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    /// use std::time::{SystemTime, UNIX_EPOCH};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = DatabaseAssigner::sqlite(dir.path().join("ids.db"))?;
    /// let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    /// let lease = table.assign(&Layout::default())?.lease.expect("a recycling table leases");
    /// let window = DatabaseAssigner::DEFAULT_LEASE_WINDOW.as_secs() as i64;
    /// assert!((now + window..=now + window + 5).contains(&lease.until()), "{}", lease.until());
    /// # Ok::<(), ringflake::Error>(())
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
            keep: None,
            accept_async: false,
        }
    }

    /// Serve a worker id, and IDs under a lease extension, as soon as the primary has committed
    /// it, without waiting for its standbys to hold it (default off). Off, every write that
    /// gives this node a worker id (a new row, a recycled row, a row taken back) or moves its
    /// lease waits until every standby the primary reports holds it (its flushed position is
    /// past the commit); a claim no check confirms by the boot's deadline
    /// ([`retry_for`](Self::retry_for), at least 5 s) is refused with an error naming the
    /// standbys that lack it, and a lease extension not confirmed is not used (the lease in
    /// force stays the last confirmed one, and IDs stop at it).
    ///
    /// The risk accepted by turning it on: with an asynchronous standby that has not received
    /// the write (stalled, lagging), a failover to it forgets the claim, and another node is
    /// given the same worker id: duplicate IDs until this node notices (see `docs/workers.md`).
    /// With synchronous standbys (PostgreSQL `synchronous_standby_names` and
    /// `synchronous_commit = on`) the wait costs nothing. SQLite has no standby.
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("workers.db"))?;
    /// assert!(format!("{assigner:?}").contains("accept_async_replication: false"));
    /// let assigner = assigner.accept_async_replication(true);
    /// assert!(format!("{assigner:?}").contains("accept_async_replication: true"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn accept_async_replication(mut self, on: bool) -> Self {
        self.accept_async = on;
        self
    }

    /// Waits until every standby holds the write that just gave this node worker id `id`
    /// (`what`: "a new row"; its lease `until`, 0 without one), unless the risk is accepted; at
    /// least [`MIN_CONFIRM`], else until the boot's deadline. A write not confirmed is undone as
    /// far as possible and refused, with an ERROR event: a row without a lease deleted, else its
    /// lease moved back to `previous` (the lease before the claim, which covers whatever its
    /// earlier holder issued) or the clock, whichever is later: nothing was served under it.
    fn durable(
        &self,
        id: u64,
        (until, previous): (i64, i64),
        what: &str,
        deadline: Option<Instant>,
    ) -> Result<(), Error> {
        // Taken even when the risk is accepted, so that no stale write is confirmed later.
        let commit = self.table.take_commit();
        let Some(commit) = commit.filter(|_| !self.accept_async) else {
            return Ok(());
        };
        let now = Instant::now();
        let deadline = deadline
            .unwrap_or(now + Self::DEFAULT_RETRY_FOR)
            .max(now + MIN_CONFIRM);
        let what = format!("worker id {id} ({what})");
        let Err(e) = super::durable::confirm(&*self.table, &commit, &what, deadline) else {
            return Ok(());
        };
        tracing::error!(
            worker_id = id,
            database = %self.table.describe(),
            error = %e,
            "worker id {id} not served: the standbys do not hold its claim, and a failover \
             could give it to another node; set --accept-async-replication to accept that risk",
        );
        let undone = if until == 0 {
            self.table.delete(id)
        } else {
            self.table
                .set_lease(id, until, SystemClock.now_seconds().max(previous))
                .map(|_| ())
        };
        if let Err(undo) = undone {
            tracing::warn!(
                worker_id = id,
                error = %undo,
                "the refused claim of worker id {id} could not be undone: the id stays reserved \
                 until its lease expires"
            );
        }
        Err(e)
    }

    /// Restarts keep their worker id: a boot that proves its predecessor in the same state
    /// directory gone takes that predecessor's row back, lease and all, instead of a new worker
    /// id, and starts above what `state_file` records. Give it the state file the generators
    /// use ([`CachedBuilder::state_file`](crate::CachedBuilder::state_file)); the `ringflake`
    /// command does. Needs [`recycle`](Self::recycle) (the default): without a lease nothing is
    /// taken back.
    ///
    /// # How a boot proves its predecessor gone
    ///
    /// The process holding a row keeps an exclusive OS lock (`flock`) on `<state_file>.owner`
    /// for its whole run, and records in that file which row it holds (its `ID`, and the
    /// `HOST_NAME` and `PORT` that name its boot) and who it is: the kernel's boot id
    /// (`/proc/sys/kernel/random/boot_id`) and the owner file's device and inode. The kernel
    /// releases the lock when the process ends, however it ends (`kill -9` included), or when
    /// its generator is dropped. A boot that gets the lock knows the recorded holder gone only
    /// if the record names this boot id and the very file it locked: a copy of the directory
    /// (another inode, whose lock is free while the original's holder runs on), a clone on
    /// another host or a restored backup (another boot id), a reboot (another boot id too: it
    /// cannot be told from a clone), a file written by an older version and a system without
    /// a boot id prove nothing, and the boot takes a worker id as a fresh boot does. Proven
    /// gone, the row is taken back if it still names that boot (nobody recycled it since), by
    /// compare-and-set on its lease, and only if
    /// `state_file` exists (it holds everything the predecessor used: every second is recorded
    /// there before an ID of it exists). Otherwise, and for every boot that cannot get the lock
    /// (a live process holds it: a `gen` beside a running `serve`), the worker id is taken as
    /// without this setting, and the holder's row is never touched. Rows written by Java nodes,
    /// by other directories, and container rows (TYPE 1, whose JPAAS host and port name no
    /// boot) are never taken back this way.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, DatabaseAssigner, Layout};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let state = dir.path().join("ringflake.state");
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("ringflake.db"))?.keep_worker_id(&state);
    /// let boot = || {
    ///     CachedUidGenerator::builder(Layout::default())
    ///         .worker_id_from(&assigner)
    ///         .state_file(&state)
    ///         .build()
    /// };
    /// let first = boot()?;
    /// let last_of_first = first.next_id()?;
    /// // While the first runs, a second generator in the directory gets an id of its own.
    /// let beside = boot()?;
    /// assert_ne!(beside.worker_id(), first.worker_id());
    /// let worker_id = first.worker_id();
    /// drop(first); // or kill -9: the kernel releases the lock either way
    /// let restarted = boot()?;
    /// assert_eq!(restarted.worker_id(), worker_id);
    /// assert!(restarted.next_id()? > last_of_first);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn keep_worker_id(mut self, state_file: impl Into<PathBuf>) -> Self {
        self.keep = Some(state_file.into());
        self
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

    /// How far beyond the newest used second a lease reaches (default 300 s). The lease is
    /// written once per third of it (when what it still covers falls below two thirds). Longer
    /// survives longer database outages and writes less often; shorter lets a crashed node's id
    /// be recycled sooner.
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
    /// timeout. A boot that finds every worker id leased waits within the same deadline for a
    /// lease to run out, backing off between looks (see `docs/workers.md`), then fails naming
    /// the largest id and the table.
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
        let mut warned = false;
        loop {
            match op() {
                Err(
                    e @ Error::Database {
                        transient: true, ..
                    },
                ) if deadline.is_none_or(|d| Instant::now() < d) => {
                    if !warned {
                        warned = true;
                        tracing::warn!(
                            database = %self.table.describe(),
                            retry_for_s = self.retry_for.as_secs(),
                            error = %e,
                            "worker table not answering; retrying for up to {:?}",
                            self.retry_for,
                        );
                    }
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
            if id <= max {
                self.durable(id, (0, 0), "a new row", deadline)?;
            }
            if id > max {
                self.retrying(deadline, || self.table.delete(id))?;
                return Err(Error::WorkerIdOutOfRange { worker_id: id, max });
            }
            tracing::info!(
                worker_id = id,
                database = %self.table.describe(),
                host_name = %node.host_name,
                "worker id {id} acquired: a new row, no lease (recycling off)"
            );
            return Ok(Assignment::fixed(id));
        }
        // The owner file's lock, if this boot can take it: held by the lease for the whole run.
        let mut owned = self
            .keep
            .as_deref()
            .and_then(|state| OwnerFile::of_state(state).try_own());
        if let (Some(o), Some(state)) = (&owned, self.keep.as_deref())
            && let Some((id, reach, until)) = self.take_back(o, state, max, node, deadline)?
        {
            return Ok(self.leased(id, node, Some(reach), None, until, owned));
        }
        let now = SystemClock.now_seconds();
        // Ordering only: a new id has no earlier holder, and its lease starts at the clock, so
        // crash loops cannot push leases ahead.
        let floor = self.retrying(deadline, || self.table.max_lease_for_host(&node.host_name))?;
        let id = self.retrying(deadline, || self.table.insert(node, now + self.window))?;
        if id <= max {
            self.durable(id, (now + self.window, 0), "a new row", deadline)?;
            tracing::info!(
                worker_id = id,
                database = %self.table.describe(),
                host_name = %node.host_name,
                until = %crate::clock::rfc3339(now + self.window),
                "worker id {id} acquired: a new row, leased"
            );
            return Ok(self.leased(id, node, None, floor, now + self.window, owned));
        }
        self.retrying(deadline, || self.table.delete(id))?;
        // Looks at the table that found nothing to claim: each waits longer (`full_table_pause`).
        let mut misses = 0u32;
        let waiting_since = Instant::now();
        loop {
            let now = SystemClock.now_seconds();
            // One statement a look: the rows whose leases run out first, expired or not.
            let mut candidates =
                self.retrying(deadline, || self.table.recyclable(max, i64::MAX, 16))?;
            let Some(&(first_id, first_lease)) = candidates.first() else {
                break;
            };
            candidates.retain(|&(_, lease)| lease < now);
            let needed = if candidates.is_empty() {
                // Every id is leased: wait for the earliest lease to run out, within retry_for.
                if misses == 0 {
                    tracing::warn!(
                        database = %self.table.describe(),
                        host_name = %node.host_name,
                        max_worker_id = max,
                        earliest_worker_id = first_id,
                        earliest_until = %crate::clock::rfc3339(first_lease),
                        retry_for_s = self.retry_for.as_secs(),
                        "every worker id up to {max} is leased: waiting for one to run out \
                         (the earliest, worker id {first_id}, at {}), for up to {:?}; more \
                         worker bits or a shorter lease window make room",
                        crate::clock::rfc3339(first_lease),
                        self.retry_for,
                    );
                }
                Duration::from_secs((first_lease + 1 - now).max(0) as u64)
            } else {
                // The row expired longest ago first; but boots that already lost a race (they
                // wait together) try the expired rows in different orders.
                if misses > 0 {
                    // Not empty here.
                    let turn = random_below(candidates.len() as u64) as usize;
                    candidates.rotate_left(turn);
                }
                for (old, old_lease) in candidates {
                    // Above everything the previous holder may have used (its lease has run
                    // out, so that is in the past: no lead).
                    let until = old_lease.saturating_add(1).max(now) + self.window;
                    if self.retrying(deadline, || self.table.claim(old, old_lease, node, until))? {
                        self.durable(old, (until, old_lease), "a recycled row", deadline)?;
                        tracing::info!(
                            worker_id = old,
                            database = %self.table.describe(),
                            host_name = %node.host_name,
                            previous_until = %crate::clock::rfc3339(old_lease),
                            until = %crate::clock::rfc3339(until),
                            waited_ms = waiting_since.elapsed().as_millis() as u64,
                            "worker id {old} acquired: recycled, its previous lease expired at {}",
                            crate::clock::rfc3339(old_lease),
                        );
                        return Ok(self.leased(
                            old,
                            node,
                            Some(old_lease),
                            floor,
                            until,
                            owned.take(),
                        ));
                    }
                }
                // Every row found was claimed by another boot first.
                Duration::ZERO
            };
            if deadline.is_some_and(|d| Instant::now() + needed > d) {
                break;
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            misses = misses.saturating_add(1);
            std::thread::sleep(full_table_pause(needed, misses - 1, left));
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
        owned: Option<Owned>,
    ) -> Assignment {
        let owned = owned.map(|mut o| {
            o.record(Holder::of(id, node, self.table.describe()).as_ref());
            o
        });
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
                owned,
                !self.accept_async,
            ))),
        }
    }
}

/// How long a boot that found every worker id leased sleeps before it looks again: until the
/// earliest lease runs out (`needed`, at least 100 ms), and after each look that found nothing
/// to claim (another boot claimed it first) at least 1 s, 2 s, 4 s, then 8 s; plus a random part
/// of up to half that. Without it every waiting boot wakes when a lease runs out (leases end
/// on whole seconds) and they all race for the one row: a thousand generators on 1,023 ids made
/// 8,499 transactions a second that way (`docs/workers.md`). But never more than a third of
/// the time `left` before the boot gives up (nor less than `needed`): a boot that has waited
/// long looks more often as its end nears, so that new boots, which look soon, do not take
/// every row from it.
fn full_table_pause(needed: Duration, misses: u32, left: Option<Duration>) -> Duration {
    let floor = match misses {
        0 => Duration::from_millis(100),
        n => Duration::from_secs(1 << (n - 1).min(3)),
    };
    let base = needed.max(floor);
    let pause = base + Duration::from_nanos(random_below(base.as_nanos() as u64 / 2 + 1));
    // `needed` is within `left` (the caller gave up otherwise).
    left.map_or(pause, |left| pause.min(left / 3).max(needed))
}

impl WorkerIdAssigner for DatabaseAssigner {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error> {
        self.assign(layout).map(|a| a.worker_id)
    }

    fn retaker(&self) -> Option<Box<dyn WorkerIdAssigner + Send + Sync>> {
        // The same table (its connection, timeout and TLS) and the same settings. Not a public
        // `Clone`: a clone's `timeout` or `ca_file` would change the shared table under the
        // original.
        Some(Box::new(DatabaseAssigner {
            table: Arc::clone(&self.table),
            generator: self.generator.clone(),
            keep: self.keep.clone(),
            ..*self
        }))
    }

    fn give_back(&self, worker_id: u64) -> Result<(), Error> {
        // Only a row of its own without a lease: a leased row is given back by its lease.
        if self.recycle {
            return Ok(());
        }
        self.table.delete(worker_id)?;
        tracing::info!(
            worker_id,
            database = %self.table.describe(),
            "worker id {worker_id} given back: its row deleted (recycling off)"
        );
        Ok(())
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
