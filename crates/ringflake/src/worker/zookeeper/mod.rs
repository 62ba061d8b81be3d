//! Worker ids from ZooKeeper, in Meituan Leaf's znodes ([`ZooKeeperAssigner`]): a Leaf node and
//! a ringflake node on the same ensemble and `leaf.name` never hold the same worker id, and a node
//! restarted on the same `ip:port` keeps its id, as Leaf's `SnowflakeZookeeperHolder` does.
//!
//! What Leaf lacks, kept beside its znodes where Leaf never looks (see `znodes`): a session per
//! held id, whose ephemeral znode says the id is served (a node whose session may have expired
//! stops serving at a third of the session timeout, before the id can go to another: `lease::cut_off`);
//! the reach of each id, a lease extended ahead of use as in the worker table, above which a
//! recycled id starts; and recycling of the ids ringflake made once their holder is gone, which
//! Leaf never does (its ids run out once its sequence passes 1,023).
//!
//! A boot's claim of an id is `claim` (this `ip:port`'s own id, a new one, or a recycled one),
//! over what `view` reads of the znodes at one moment; `lease` keeps the id held, on `session`.

mod claim;
pub(crate) mod kind;
mod lease;
mod session;
mod view;
mod znodes;

use super::assigner::{Assignment, WorkerIdAssigner};
use crate::{Error, Layout};
use claim::Claim;
use session::Session;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};
use view::View;
use znodes::Origin;

/// Worker ids from a ZooKeeper ensemble, sharing Meituan Leaf's snowflake znodes
/// (`/snowflake/{leaf.name}/forever/{ip}:{port}-{sequence}`, the sequence being the worker id)
/// with Leaf nodes.
///
/// # Java compatibility
///
/// A boot finds this node's `ip:port` under `forever` and keeps that id, as Leaf does (an id
/// made by a Leaf node is taken over in place once its znode has not been rewritten for 10 s,
/// timed on this node's own clock, and its timestamp is 10 s old: a Leaf node rewrites it every
/// 3 s while it runs, whatever its clock says; the IDs start above it). Otherwise it creates
/// `{ip}:{port}-` as a persistent sequential znode, as Leaf does, with Leaf's data
/// (`{"ip":"…","port":"…","timestamp":<ms>}`), which it rewrites with each lease extension,
/// about every 3 s. A Leaf node never takes an id another `ip:port` holds, and the sequence never
/// gives out a number twice, so the two never share an id. Worker ids must fit the layout (Leaf's
/// own layout has 10 bits); a mixed fleet must use Leaf's layout on every node, or the IDs of
/// distinct worker ids could still collide.
///
/// # Beyond Leaf
///
/// - **A session per held id**: the node holds `/snowflake/{name}/ringflake/live/{sequence}`, an
///   ephemeral znode, for as long as it serves the id; nobody else takes the id while it exists.
///   A node that has not heard from the ensemble for a third of the session timeout stops
///   serving (takes fail with [`Error::Fenced`](crate::Error::Fenced), the ring's ready IDs are
///   dropped) until it hears again, so that it has stopped
///   before its session can expire and the id go to another node; a session found expired (or
///   its live znode gone) makes the generator take another id, and serve again
///   ([`WorkerIdAssigner::retaker`]).
/// - **The reach of each id** (`/snowflake/{name}/ringflake/ids/{sequence}`): a lease, the last
///   unix second its holder may issue, written ahead of use (a window of 9 s by default, so
///   written about every 3 s, with Leaf's timestamp) and at a clean stop moved back to the last
///   second used. Whoever takes the id next starts above it.
/// - **Recycling**: an id whose `ids` znode says ringflake made it, without a live znode and
///   whose reach has passed, is given to a boot that has none of its own (its forever znode is
///   renamed to the new `ip:port`, in one transaction), once the sequence has passed what the
///   layout holds. Ids a Leaf node made are never recycled.
///
/// ```no_run
/// use ringflake::{CachedUidGenerator, Layout, ZooKeeperAssigner};
///
/// let zk = ZooKeeperAssigner::new("zk1:2181,zk2:2181,zk3:2181", "orders")?.address("10.1.2.3", 8080);
/// let ids = CachedUidGenerator::builder(Layout::default()).worker_id_from(&zk).build()?;
/// println!("worker id {}: {}", ids.worker_id(), ids.next_id()?);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct ZooKeeperAssigner {
    ensemble: String,
    name: String,
    ip: Option<String>,
    port: Option<String>,
    session_timeout: Duration,
    window: i64,
    retry_for: Duration,
}

impl fmt::Debug for ZooKeeperAssigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZooKeeperAssigner")
            .field("ensemble", &self.ensemble)
            .field("name", &self.name)
            .field("ip", &self.ip)
            .field("port", &self.port)
            .field("session_timeout", &self.session_timeout)
            .field("lease_window", &Duration::from_secs(self.window as u64))
            .field("retry_for", &self.retry_for)
            .finish()
    }
}

impl ZooKeeperAssigner {
    /// The default session timeout asked of the servers: 10 s (they grant it within their
    /// `minSessionTimeout` and `maxSessionTimeout`, by default 4 s to 40 s).
    ///
    /// ```
    /// use ringflake::ZooKeeperAssigner;
    /// let zk = ZooKeeperAssigner::new("127.0.0.1:2181", "ids")?;
    /// assert!(format!("{zk:?}").contains("session_timeout: 10s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(10);

    /// The default lease window: 9 s, so that the reach is written about every 3 s, as Leaf
    /// writes its timestamp.
    ///
    /// ```
    /// use ringflake::ZooKeeperAssigner;
    /// let zk = ZooKeeperAssigner::new("127.0.0.1:2181", "ids")?;
    /// assert!(format!("{zk:?}").contains("lease_window: 9s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const DEFAULT_LEASE_WINDOW: Duration = Duration::from_secs(9);

    /// Worker ids from the ensemble `ensemble` (`host:port,host:port,…`, as ZooKeeper's own
    /// clients take it) under Leaf's `leaf.name` `name` (`/snowflake/{name}`). Nothing is
    /// connected until a boot asks for a worker id.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerAssignment`] for an empty ensemble, or a name that is empty or holds `/`.
    ///
    /// ```
    /// use ringflake::ZooKeeperAssigner;
    /// assert!(ZooKeeperAssigner::new("127.0.0.1:2181", "orders").is_ok());
    /// let e = ZooKeeperAssigner::new("127.0.0.1:2181", "a/b").unwrap_err();
    /// assert!(e.to_string().contains("\"a/b\""), "{e}");
    /// ```
    pub fn new(ensemble: &str, name: &str) -> Result<ZooKeeperAssigner, Error> {
        if ensemble.trim().is_empty() {
            return Err(Error::WorkerAssignment(
                "the ZooKeeper ensemble is empty: expected host:port[,host:port…]".into(),
            ));
        }
        if name.is_empty() || name.contains('/') {
            return Err(Error::WorkerAssignment(format!(
                "ZooKeeper name {name:?} (Leaf's leaf.name) must be one non-empty path segment, \
                 without /"
            )));
        }
        Ok(ZooKeeperAssigner {
            ensemble: ensemble.trim().to_string(),
            name: name.to_string(),
            ip: None,
            port: None,
            session_timeout: Self::DEFAULT_SESSION_TIMEOUT,
            window: Self::DEFAULT_LEASE_WINDOW.as_secs() as i64,
            retry_for: Duration::from_secs(30),
        })
    }

    /// This node's `ip:port` as Leaf names it (its `forever` znode, by which a restart finds its
    /// id): `port` is Leaf's `leaf.snowflake.port`, the service's port. Without it the ip is
    /// the one Leaf's `Utils.getIp()` takes (the first non-loopback IPv4 address of this host's
    /// interfaces, in Java's order) and the port must be given by [`port`](Self::port).
    ///
    /// ```
    /// use ringflake::ZooKeeperAssigner;
    /// let zk = ZooKeeperAssigner::new("127.0.0.1:2181", "ids")?.address("10.1.2.3", 8080);
    /// assert!(format!("{zk:?}").contains("ip: Some(\"10.1.2.3\"), port: Some(\"8080\")"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn address(mut self, ip: &str, port: u16) -> Self {
        self.ip = Some(ip.to_string());
        self.port = Some(port.to_string());
        self
    }

    /// This node's port, with the ip Leaf would find (see [`address`](Self::address)).
    ///
    /// ```
    /// use ringflake::ZooKeeperAssigner;
    /// let zk = ZooKeeperAssigner::new("127.0.0.1:2181", "ids")?.port(8080);
    /// assert!(format!("{zk:?}").contains("port: Some(\"8080\")"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port.to_string());
        self
    }

    /// The session timeout asked of the servers (default 10 s). A node stops serving once the
    /// servers have not answered for half of it.
    ///
    /// ```
    /// use ringflake::ZooKeeperAssigner;
    /// use std::time::Duration;
    /// let zk = ZooKeeperAssigner::new("127.0.0.1:2181", "ids")?.session_timeout(Duration::from_secs(6));
    /// assert!(format!("{zk:?}").contains("session_timeout: 6s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn session_timeout(mut self, timeout: Duration) -> Self {
        self.session_timeout = timeout;
        self
    }

    /// How far beyond the newest used second the reach is written (default 9 s; written once
    /// a third of it is used).
    ///
    /// ```
    /// use ringflake::ZooKeeperAssigner;
    /// use std::time::Duration;
    /// let zk = ZooKeeperAssigner::new("127.0.0.1:2181", "ids")?.lease_window(Duration::from_secs(30));
    /// assert!(format!("{zk:?}").contains("lease_window: 30s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn lease_window(mut self, window: Duration) -> Self {
        self.window = window.as_secs().max(1) as i64;
        self
    }

    /// How long a boot retries an ensemble that does not answer, and waits for a predecessor's
    /// session to end (default 30 s).
    ///
    /// ```
    /// use ringflake::ZooKeeperAssigner;
    /// use std::time::Duration;
    /// let zk = ZooKeeperAssigner::new("127.0.0.1:2181", "ids")?.retry_for(Duration::from_secs(5));
    /// assert!(format!("{zk:?}").contains("retry_for: 5s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn retry_for(mut self, d: Duration) -> Self {
        self.retry_for = d;
        self
    }

    /// Where the ids are: `zookeeper host:port,… /snowflake/{name}`.
    ///
    /// ```
    /// use ringflake::ZooKeeperAssigner;
    /// let zk = ZooKeeperAssigner::new("127.0.0.1:2181", "orders")?;
    /// assert_eq!(zk.describe(), "zookeeper 127.0.0.1:2181 /snowflake/orders");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn describe(&self) -> String {
        format!("zookeeper {} /snowflake/{}", self.ensemble, self.name)
    }

    fn clone_settings(&self) -> ZooKeeperAssigner {
        ZooKeeperAssigner {
            ensemble: self.ensemble.clone(),
            name: self.name.clone(),
            ip: self.ip.clone(),
            port: self.port.clone(),
            ..*self
        }
    }

    /// This node's ip and port.
    fn identity(&self) -> Result<(String, String), Error> {
        let Some(port) = self.port.clone() else {
            return Err(Error::WorkerAssignment(
                "a ZooKeeper worker id needs this node's port (Leaf's leaf.snowflake.port): \
                 give it (--zookeeper-address IP:PORT, ZooKeeperAssigner::port or ::address)"
                    .into(),
            ));
        };
        let ip = match &self.ip {
            Some(ip) => ip.clone(),
            None => super::node::leaf_ip().ok_or_else(|| {
                Error::WorkerAssignment(
                    "no non-loopback IPv4 address on this host for Leaf's ip:port: give one \
                     with ZooKeeperAssigner::address"
                        .into(),
                )
            })?,
        };
        if ip.contains('-') || port.contains('-') {
            return Err(Error::WorkerAssignment(format!(
                "ip:port {ip}:{port} holds '-', which Leaf's names split on"
            )));
        }
        Ok((ip, port))
    }

    /// Every id under the name, as the `ringflake workers` listing shows them.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] when the ensemble does not answer.
    ///
    /// ```no_run
    /// use ringflake::ZooKeeperAssigner;
    /// for w in ZooKeeperAssigner::new("127.0.0.1:2181", "orders")?.list()? {
    ///     println!("{} {} {:?}", w.worker_id, w.address, w.reach);
    /// }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn list(&self) -> Result<Vec<ZooKeeperWorker>, Error> {
        let session =
            Session::connect(&self.ensemble, self.session_timeout, self.connect_within())?;
        let view = View::read(&session, &self.name, Duration::from_secs(10), false)?;
        Ok(view
            .forever
            .iter()
            .map(|n| {
                let ids = view.ids.iter().find(|(id, _)| *id == n.worker_id);
                ZooKeeperWorker {
                    worker_id: n.worker_id,
                    address: n.address.clone(),
                    leaf_timestamp_ms: view.timestamps.get(&n.name).copied().flatten(),
                    ringflake: ids.is_some_and(|(_, d)| d.origin == Origin::Ringflake),
                    reach: ids.map(|(_, d)| d.reach),
                    live: view.live.contains(&n.worker_id),
                }
            })
            .collect())
    }

    fn connect_within(&self) -> Duration {
        (self.session_timeout + Duration::from_secs(2)).min(Duration::from_secs(30))
    }

    /// One attempt at a worker id, on a new session.
    fn attempt(
        &self,
        layout: &Layout,
        ip: &str,
        port: &str,
        deadline: Instant,
    ) -> Result<Assignment, Error> {
        let session = Arc::new(Session::connect(
            &self.ensemble,
            self.session_timeout,
            self.connect_within(),
        )?);
        Claim::new(
            &session,
            (&self.name, self.window, self.describe()),
            (ip, port),
            layout.max_worker_id(),
            deadline,
        )
        .run()
    }
}

/// One id as [`ZooKeeperAssigner::list`] reads it.
///
/// ```
/// let w = ringflake::ZooKeeperWorker {
///     worker_id: 3, address: "10.1.2.3:8080".into(), leaf_timestamp_ms: Some(1_700_000_000_000),
///     ringflake: true, reach: Some(1_700_000_009), live: true,
/// };
/// assert_eq!(w.worker_id, 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZooKeeperWorker {
    /// The worker id (Leaf's sequence).
    pub worker_id: u64,
    /// The `ip:port` its forever znode names.
    pub address: String,
    /// Leaf's timestamp in its data (milliseconds), if it parses.
    pub leaf_timestamp_ms: Option<i64>,
    /// Made by ringflake (recyclable), not by a Leaf node.
    pub ringflake: bool,
    /// The reach ringflake keeps for it (unix second), if ringflake manages it.
    pub reach: Option<i64>,
    /// A session serves it now (its live znode exists).
    pub live: bool,
}

impl WorkerIdAssigner for ZooKeeperAssigner {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error> {
        self.assign(layout).map(|a| a.worker_id)
    }

    fn assign(&self, layout: &Layout) -> Result<Assignment, Error> {
        let (ip, port) = self.identity()?;
        let deadline = Instant::now() + self.retry_for;
        let mut pause = Duration::from_millis(100);
        let mut warned = false;
        loop {
            match self.attempt(layout, &ip, &port, deadline) {
                Err(
                    e @ Error::Database {
                        transient: true, ..
                    },
                ) if Instant::now() < deadline => {
                    if !warned {
                        warned = true;
                        tracing::warn!(
                            database = %self.describe(),
                            error = %e,
                            "ZooKeeper not answering; retrying for up to {:?}",
                            self.retry_for
                        );
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
                other => return other,
            }
        }
    }

    fn retaker(&self) -> Option<Box<dyn WorkerIdAssigner + Send + Sync>> {
        Some(Box::new(self.clone_settings()))
    }
}
