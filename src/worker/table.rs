//! The worker table algorithm shared by every database: UidGenerator's "insert a row, use its
//! auto-increment id", plus leases, monotonic restarts and recycling.

use super::{Assignment, WorkerIdAssigner};
use crate::lease::{DEFAULT_WINDOW_SECS, Lease};
use crate::{Error, Layout};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a node describes itself in a row, as UidGenerator does.
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

/// One row of the worker table.
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
pub struct DatabaseAssigner {
    table: Arc<dyn WorkerTable>,
    recycle: bool,
    window: i64,
    retry_for: Duration,
}

impl fmt::Debug for DatabaseAssigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseAssigner")
            .field("table", &self.table.describe())
            .field("recycle", &self.recycle)
            .finish_non_exhaustive()
    }
}

impl DatabaseAssigner {
    #[cfg_attr(
        not(any(feature = "sqlite", feature = "mysql", feature = "postgres")),
        allow(dead_code)
    )]
    pub(crate) fn with_table(table: Arc<dyn WorkerTable>) -> Self {
        DatabaseAssigner {
            table,
            recycle: false,
            window: DEFAULT_WINDOW_SECS,
            retry_for: Duration::from_secs(30),
        }
    }

    /// Turns on leases, recycling of expired worker ids and monotonic restarts (default off).
    pub fn recycle(mut self, on: bool) -> Self {
        self.recycle = on;
        self
    }

    /// How far beyond the newest used second a lease reaches (default 300 s). Longer survives
    /// longer database outages; shorter lets a crashed node's id be recycled sooner.
    pub fn lease_window(mut self, window: Duration) -> Self {
        self.window = window.as_secs().max(1) as i64;
        self
    }

    /// How long to retry an unreachable database at boot before failing (default 30 s).
    pub fn retry_for(mut self, d: Duration) -> Self {
        self.retry_for = d;
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
            return Ok(self.leased(id, floor, start + self.window));
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
                    return Ok(self.leased(old, Some(not_before), until));
                }
            }
        }
        Err(Error::WorkerAssignment(format!(
            "worker id {id} exceeds the max {max} and no id up to {max} in {} has an expired lease to recycle",
            self.table.describe()
        )))
    }

    fn leased(&self, id: u64, not_before: Option<i64>, until: i64) -> Assignment {
        Assignment {
            worker_id: id,
            not_before,
            lease: Some(Box::new(RowLease {
                table: Arc::clone(&self.table),
                id,
                until: std::sync::atomic::AtomicI64::new(until),
                window: self.window,
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
        if self.table.set_lease(self.id, expected, until)? {
            self.until.store(until, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        } else {
            Err(Error::LeaseExpired {
                until: expected,
                reason: format!(
                    "worker id {} in {} was taken over by another node",
                    self.id,
                    self.table.describe()
                ),
            })
        }
    }

    fn window(&self) -> i64 {
        self.window
    }

    fn release(&self, last_second: i64) -> Result<(), Error> {
        let expected = self.until();
        self.table
            .set_lease(self.id, expected, last_second.max(1))
            .map(|_| ())
    }
}
