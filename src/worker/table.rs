//! The worker table algorithm shared by every database: UidGenerator's "insert a row, use its
//! auto-increment id", plus leases, monotonic restarts and recycling.

use super::lease::{DEFAULT_WINDOW_SECS, Lease};
use super::{Assignment, WorkerIdAssigner};
use crate::{Error, Layout};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a node describes itself in a row, as UidGenerator does.
///
/// ```
/// use ringflake::NodeInfo;
///
/// let node = NodeInfo::detect();
/// if node.node_type == 2 {
///     // ACTUAL: PORT is `<epoch millis>-<random>`, different at every boot.
///     let (millis, random) = node.port.split_once('-').unwrap();
///     assert!(millis.parse::<i64>().unwrap() > 1_700_000_000_000);
///     assert!(random.parse::<u32>().unwrap() < 100_000);
/// }
/// assert_eq!(node.launch_date.len(), "yyyy-MM-dd".len());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// `HOST_NAME`: `JPAAS_HOST` in a container, else the host's address.
    pub host_name: String,
    /// `PORT`: `JPAAS_HTTP_PORT` (or `JPAAS_HOST_PORT_8080`) in a container, else
    /// `<epoch millis>-<random 0..99999>`.
    pub port: String,
    /// `TYPE`: 1 = CONTAINER, 2 = ACTUAL.
    pub node_type: i32,
    /// `LAUNCH_DATE`, `yyyy-MM-dd` in the local time zone.
    pub launch_date: String,
}

impl NodeInfo {
    /// Describes this process as UidGenerator's `DisposableWorkerIdAssigner` does.
    ///
    /// ```
    /// let node = ringflake::NodeInfo::detect();
    /// assert!(node.node_type == 1 || node.node_type == 2);
    /// assert_eq!(node.launch_date.len(), 10);
    /// ```
    pub fn detect() -> NodeInfo {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let launch_date = jiff::Zoned::now().date().to_string();
        if let Some(host) = env("JPAAS_HOST") {
            let port = env("JPAAS_HTTP_PORT")
                .or_else(|| env("JPAAS_HOST_PORT_8080"))
                .unwrap_or_default();
            return NodeInfo {
                host_name: host,
                port,
                node_type: 1,
                launch_date,
            };
        }
        let millis = crate::SystemClock.now_millis_for_port();
        NodeInfo {
            host_name: local_address(),
            port: format!("{millis}-{}", random_below(100_000)),
            node_type: 2,
            launch_date,
        }
    }
}

impl crate::SystemClock {
    fn now_millis_for_port(&self) -> i64 {
        use crate::Clock;
        self.now_millis()
    }
}

/// The first non-loopback address of this host's name, else the name itself.
fn local_address() -> String {
    use std::net::ToSocketAddrs;
    let name = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    (name.as_str(), 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.find(|a| !a.ip().is_loopback() && a.is_ipv4()))
        .map(|a| a.ip().to_string())
        .unwrap_or(name)
}

/// A random number below `n`, from the standard library's randomly seeded hasher.
fn random_below(n: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() % n
}

/// One row of the worker table, as [`DatabaseAssigner::list`] reads it.
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
/// assert_eq!(row.lease_until, 0); // no lease without recycling
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// How long one database call may take unless [`DatabaseAssigner::timeout`] says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The operations one database provides; the algorithm in this module does the rest.
pub(crate) trait WorkerTable: Send + Sync + 'static {
    /// Where the table is, without secrets: "sqlite file x.db", "mysql://u@h:3306/db".
    fn describe(&self) -> String;
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
    /// Every row, by id.
    fn list(&self) -> Result<Vec<WorkerRow>, Error>;
    /// Bounds every later call (connecting included) to about `timeout`: past it the call fails
    /// as a transient error and the connection is dropped.
    fn set_timeout(&self, timeout: Duration);
}

/// Worker ids from a database table, one new row per boot, as UidGenerator's
/// `DisposableWorkerIdAssigner`, sharing its `WORKER_NODE` table with Java nodes.
///
/// With [`recycle`](Self::recycle) on, the node also keeps a lease in its row (the last second it
/// may issue), which makes two things possible that Java cannot do:
///
/// - **worker ids never run out**: a boot whose new id would not fit the layout reuses the id of
///   a row whose lease has expired: its holder is gone (or has stopped issuing) and every second
///   it could have issued is in the past;
/// - **monotonic restarts**: a new boot on the same host starts its seconds after the highest
///   lease of that host's earlier rows, so its IDs exceed everything an earlier run issued, even
///   one killed with SIGKILL after borrowing hours ahead.
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
/// let assigner = DatabaseAssigner::sqlite(dir.path().join("ringflake.db"))?.recycle(true);
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
pub struct DatabaseAssigner {
    table: Arc<dyn WorkerTable>,
    recycle: bool,
    window: i64,
    retry_for: Duration,
    timeout: Duration,
}

impl fmt::Debug for DatabaseAssigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseAssigner")
            .field("table", &self.table.describe())
            .field("recycle", &self.recycle)
            .field("lease_window", &Duration::from_secs(self.window as u64))
            .field("retry_for", &self.retry_for)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl DatabaseAssigner {
    #[cfg_attr(
        not(any(feature = "sqlite", feature = "mysql", feature = "postgres")),
        allow(dead_code)
    )]
    pub(crate) fn with_table(table: Arc<dyn WorkerTable>) -> Self {
        table.set_timeout(DEFAULT_TIMEOUT);
        DatabaseAssigner {
            table,
            recycle: false,
            window: DEFAULT_WINDOW_SECS,
            retry_for: Duration::from_secs(30),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Turns on leases, recycling of expired worker ids and monotonic restarts (default off).
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("workers.db");
    /// // Without recycling the row holds no lease (0), as a Java node's row.
    /// let plain = DatabaseAssigner::sqlite(&path)?.assign(&Layout::default())?;
    /// assert!(plain.lease.is_none());
    /// let leased = DatabaseAssigner::sqlite(&path)?.recycle(true).assign(&Layout::default())?;
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

    /// How long to retry an unreachable database at boot before failing (default 30 s).
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

    /// Runs `op`, retrying transient failures with backoff for `retry_for`.
    fn retrying<T>(&self, mut op: impl FnMut() -> Result<T, Error>) -> Result<T, Error> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(50);
        loop {
            match op() {
                Err(Error::Database {
                    transient: true, ..
                }) if start.elapsed() < self.retry_for => {
                    std::thread::sleep(pause.min(self.retry_for.saturating_sub(start.elapsed())));
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
                other => return other,
            }
        }
    }

    fn assign_with(&self, layout: &Layout, node: &NodeInfo) -> Result<Assignment, Error> {
        let max = layout.max_worker_id();
        if !self.recycle {
            let id = self.retrying(|| self.table.insert(node, 0))?;
            if id > max {
                self.retrying(|| self.table.delete(id))?;
                return Err(Error::WorkerIdOutOfRange { worker_id: id, max });
            }
            return Ok(Assignment::fixed(id));
        }
        let now = crate::SystemClock.now_millis_for_port().div_euclid(1000);
        let floor = self.retrying(|| self.table.max_lease_for_host(&node.host_name))?;
        let start = floor.map_or(now, |f| f.saturating_add(1).max(now));
        let id = self.retrying(|| self.table.insert(node, start + self.window))?;
        if id <= max {
            return Ok(self.leased(id, node, floor, start + self.window));
        }
        self.retrying(|| self.table.delete(id))?;
        let started = Instant::now();
        loop {
            let now = crate::SystemClock.now_millis_for_port().div_euclid(1000);
            let candidates = self.retrying(|| self.table.recyclable(max, now, 16))?;
            if candidates.is_empty() {
                // Every id is leased: wait for the earliest lease to run out, within retry_for.
                let earliest = self.retrying(|| self.table.recyclable(max, i64::MAX, 1))?;
                let wait = earliest
                    .first()
                    .map(|&(_, lease)| Duration::from_secs((lease + 1 - now).max(0) as u64));
                match wait {
                    Some(w) if started.elapsed() + w <= self.retry_for => {
                        std::thread::sleep(w.max(Duration::from_millis(100)));
                        continue;
                    }
                    _ => break,
                }
            }
            for (old, old_lease) in candidates {
                let not_before = floor.map_or(old_lease, |f| f.max(old_lease));
                let until = not_before.saturating_add(1).max(now) + self.window;
                if self.retrying(|| self.table.claim(old, old_lease, node, until))? {
                    return Ok(self.leased(old, node, Some(not_before), until));
                }
            }
        }
        Err(Error::WorkerAssignment(format!(
            "worker id {id} exceeds the max {max} and no id up to {max} in {} has an expired lease to recycle",
            self.table.describe()
        )))
    }

    fn leased(&self, id: u64, node: &NodeInfo, not_before: Option<i64>, until: i64) -> Assignment {
        Assignment {
            worker_id: id,
            not_before,
            lease: Some(Box::new(RowLease {
                table: Arc::clone(&self.table),
                id,
                until: std::sync::atomic::AtomicI64::new(until),
                window: self.window,
                // TYPE 2 rows name the boot alone: PORT is `<millis>-<random>`. A container's
                // JPAAS host and port repeat across boots, so they prove nothing.
                boot: (node.node_type == 2).then(|| (node.host_name.clone(), node.port.clone())),
                unconfirmed: Mutex::new(Vec::new()),
            })),
        }
    }
}

impl WorkerIdAssigner for DatabaseAssigner {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error> {
        self.assign(layout).map(|a| a.worker_id)
    }

    fn assign(&self, layout: &Layout) -> Result<Assignment, Error> {
        self.assign_with(layout, &NodeInfo::detect())
    }
}

/// A lease held in a row's `LEASE_UNTIL`, moved by compare-and-set so a node that lost its row
/// to a recycler finds out instead of overwriting.
#[derive(Debug)]
struct RowLease {
    table: Arc<dyn WorkerTable>,
    id: u64,
    until: std::sync::atomic::AtomicI64,
    window: i64,
    /// This boot's `HOST_NAME` and `PORT` where they name this boot alone (TYPE 2 rows).
    boot: Option<(String, String)>,
    /// Leases a failed call may have written after all (the reply was lost, not the update),
    /// since the last confirmed one; at most [`MAX_UNCONFIRMED`], newest last.
    unconfirmed: Mutex<Vec<i64>>,
}

/// How many unconfirmed lease values a [`RowLease`] remembers (one attempt a second at most).
const MAX_UNCONFIRMED: usize = 1024;

impl RowLease {
    fn confirm(&self, until: i64) {
        self.until.store(until, std::sync::atomic::Ordering::SeqCst);
        self.unconfirmed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    fn remember(&self, until: i64) {
        let mut pending = self.unconfirmed.lock().unwrap_or_else(|e| e.into_inner());
        if pending.len() == MAX_UNCONFIRMED {
            pending.remove(0);
        }
        pending.push(until);
    }

    /// After a failed compare-and-set: the row's lease, if it is one this boot tried to write
    /// in a call that failed, and the row still names this boot. Then the earlier update did
    /// land and only its reply was lost. A recycler always writes its own `HOST_NAME` and
    /// `PORT`, so a row taken over never matches.
    fn landed(&self) -> Result<Option<i64>, Error> {
        let Some((host, port)) = &self.boot else {
            return Ok(None);
        };
        let pending = self
            .unconfirmed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if pending.is_empty() {
            return Ok(None);
        }
        let row = self.table.list()?.into_iter().find(|r| r.id == self.id);
        Ok(row
            .filter(|r| &r.host_name == host && &r.port == port && pending.contains(&r.lease_until))
            .map(|r| r.lease_until))
    }
}

impl fmt::Debug for dyn WorkerTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Lease for RowLease {
    fn until(&self) -> i64 {
        self.until.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn extend(&self, until: i64) -> Result<(), Error> {
        let expected = self.until();
        match self.table.set_lease(self.id, expected, until) {
            Ok(true) => {
                self.confirm(until);
                Ok(())
            }
            Ok(false) => match self.landed()? {
                // An earlier extension landed: continue from it (once: `landed` is now empty).
                Some(landed) => {
                    self.confirm(landed);
                    if landed >= until {
                        Ok(())
                    } else {
                        self.extend(until)
                    }
                }
                None => Err(Error::LeaseExpired {
                    until: expected,
                    reason: format!(
                        "worker id {} in {} was taken over by another node",
                        self.id,
                        self.table.describe()
                    ),
                }),
            },
            Err(e) => {
                self.remember(until);
                Err(e)
            }
        }
    }

    fn window(&self) -> i64 {
        self.window
    }

    fn release(&self, last_second: i64) -> Result<(), Error> {
        let expected = self.until();
        if !self
            .table
            .set_lease(self.id, expected, last_second.max(1))?
            && let Some(landed) = self.landed()?
        {
            self.table.set_lease(self.id, landed, last_second.max(1))?;
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A real SQLite worker table whose next `set_lease` commits, then fails as if the reply had
    /// been lost on the way back.
    struct LostReply {
        inner: Arc<dyn WorkerTable>,
        lose: AtomicBool,
    }

    impl WorkerTable for LostReply {
        fn describe(&self) -> String {
            self.inner.describe()
        }
        fn insert(&self, node: &NodeInfo, lease_until: i64) -> Result<u64, Error> {
            self.inner.insert(node, lease_until)
        }
        fn delete(&self, id: u64) -> Result<(), Error> {
            self.inner.delete(id)
        }
        fn max_lease_for_host(&self, host: &str) -> Result<Option<i64>, Error> {
            self.inner.max_lease_for_host(host)
        }
        fn recyclable(&self, max: u64, before: i64, limit: u32) -> Result<Vec<(u64, i64)>, Error> {
            self.inner.recyclable(max, before, limit)
        }
        fn claim(
            &self,
            id: u64,
            expected: i64,
            node: &NodeInfo,
            until: i64,
        ) -> Result<bool, Error> {
            self.inner.claim(id, expected, node, until)
        }
        fn set_lease(&self, id: u64, expected: i64, until: i64) -> Result<bool, Error> {
            let done = self.inner.set_lease(id, expected, until)?;
            if self.lose.swap(false, Ordering::SeqCst) {
                return Err(Error::Database {
                    database: self.describe(),
                    message: "connection reset after the commit (injected)".into(),
                    transient: true,
                });
            }
            Ok(done)
        }
        fn list(&self) -> Result<Vec<WorkerRow>, Error> {
            self.inner.list()
        }
        fn set_timeout(&self, timeout: Duration) {
            self.inner.set_timeout(timeout);
        }
    }

    fn node(node_type: i32, port: &str) -> NodeInfo {
        NodeInfo {
            host_name: "10.1.2.3".into(),
            port: port.into(),
            node_type,
            launch_date: "2026-11-23".into(),
        }
    }

    /// A leased row on a real SQLite file behind [`LostReply`]: (file, table, lease).
    fn leased(node: &NodeInfo) -> (tempfile::TempDir, Arc<LostReply>, Box<dyn Lease>) {
        let dir = tempfile::tempdir().unwrap();
        let real = DatabaseAssigner::sqlite(dir.path().join("w.db")).unwrap();
        let table = Arc::new(LostReply {
            inner: Arc::clone(&real.table),
            lose: AtomicBool::new(false),
        });
        let assigner = DatabaseAssigner::with_table(table.clone()).recycle(true);
        let lease = assigner
            .assign_with(&Layout::default(), node)
            .unwrap()
            .lease
            .expect("a lease with recycling on");
        (dir, table, lease)
    }

    fn row_lease(table: &LostReply) -> (i64, String) {
        let rows = table.list().unwrap();
        assert_eq!(rows.len(), 1);
        (rows[0].lease_until, rows[0].port.clone())
    }

    #[test]
    fn an_extension_whose_reply_was_lost_is_recovered() {
        let (_dir, table, lease) = leased(&node(2, "1763900000000-4711"));
        let u0 = lease.until();
        table.lose.store(true, Ordering::SeqCst);
        assert!(matches!(
            lease.extend(u0 + 100),
            Err(Error::Database {
                transient: true,
                ..
            })
        ));
        // The update landed; the node does not know it yet.
        assert_eq!(row_lease(&table).0, u0 + 100);
        assert_eq!(lease.until(), u0);
        // The next extension finds its own earlier write and continues from it.
        lease.extend(u0 + 200).unwrap();
        assert_eq!(lease.until(), u0 + 200);
        assert_eq!(row_lease(&table).0, u0 + 200);
        // The same after a lost reply, then a release.
        table.lose.store(true, Ordering::SeqCst);
        assert!(lease.extend(u0 + 300).is_err());
        lease.release(u0 + 7).unwrap();
        assert_eq!(row_lease(&table).0, u0 + 7);
    }

    #[test]
    fn a_row_taken_over_is_never_adopted() {
        let ours = node(2, "1763900000000-4711");
        let (_dir, table, lease) = leased(&ours);
        let u0 = lease.until();
        table.lose.store(true, Ordering::SeqCst);
        assert!(lease.extend(u0 + 100).is_err());
        // A recycler takes the row over and, as bad luck has it, writes the very lease value
        // this node's lost update wrote.
        let id = table.list().unwrap()[0].id;
        let theirs = node(2, "1763900099999-1");
        assert!(table.claim(id, u0 + 100, &theirs, u0 + 100).unwrap());
        let err = lease.extend(u0 + 200).unwrap_err();
        assert!(matches!(err, Error::LeaseExpired { .. }), "{err}");
        assert!(err.to_string().contains("taken over"), "{err}");
        assert_eq!(row_lease(&table), (u0 + 100, theirs.port));
        assert_eq!(lease.until(), u0);
    }

    #[test]
    fn a_container_row_names_no_boot_and_is_not_adopted() {
        // JPAAS host and port repeat across boots of a container: a lost reply there still
        // ends in a lost lease (the generator stops at its horizon), never in an adoption.
        let (_dir, table, lease) = leased(&node(1, "8080"));
        let u0 = lease.until();
        table.lose.store(true, Ordering::SeqCst);
        assert!(lease.extend(u0 + 100).is_err());
        assert!(matches!(
            lease.extend(u0 + 200),
            Err(Error::LeaseExpired { .. })
        ));
        assert_eq!(row_lease(&table).0, u0 + 100);
    }
}
