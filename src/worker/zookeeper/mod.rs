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

mod lease;
mod session;
mod znodes;

use super::assigner::{Assignment, WorkerIdAssigner};
use crate::{Clock, Error, Layout, SystemClock};
use lease::ZkLease;
use session::{Op, Session};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicI64};
use std::time::{Duration, Instant};
use znodes::{ForeverNode, IdData, Origin};
use zookeeper_client as zk;

/// Leaf rewrites its timestamp every 3 s (`ScheduledUploadData`).
const LEAF_UPLOAD_MS: i64 = 3_000;

/// A Leaf znode whose timestamp moved within this long may have a live Leaf node behind it: three
/// of its uploads and a second.
const LEAF_ALIVE_MS: i64 = 3 * LEAF_UPLOAD_MS + 1_000;

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
        let claim = Claim {
            assigner: self,
            session: &session,
            ip,
            port,
            address: format!("{ip}:{port}"),
            max: layout.max_worker_id(),
            deadline,
            said: std::cell::RefCell::new(None),
            leaf_seen: std::cell::RefCell::new(std::collections::HashMap::new()),
        };
        claim.run()
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

/// What the znodes say at one moment.
struct View {
    forever: Vec<ForeverNode>,
    /// The sequence the next sequential child of `forever` gets (its parent's cversion).
    next_seq: i64,
    ids: Vec<(u64, IdData)>,
    ids_versions: std::collections::HashMap<u64, i32>,
    live: Vec<u64>,
    timestamps: std::collections::HashMap<String, Option<i64>>,
    /// The version of each forever znode (by name): a Leaf node alive rewrites it every 3 s.
    forever_versions: std::collections::HashMap<String, i32>,
}

impl View {
    /// Reads the znodes under `name`; `create`: the paths are made first where missing (a
    /// boot), else a missing path reads as empty (a listing, which writes nothing).
    fn read(session: &Session, name: &str, within: Duration, create: bool) -> Result<View, Error> {
        let err = |what: &str, e: &zk::Error| session.error(what, e);
        let forever_path = znodes::forever(name);
        let ids_path = znodes::ids(name);
        let live_path = znodes::live(name);
        let missing = |e: &zk::Error| !create && *e == zk::Error::NoNode;
        for path in [&forever_path, &ids_path, &live_path]
            .into_iter()
            .filter(|_| create)
        {
            let p = path.clone();
            match session.call("creating the paths", within, move |c| async move {
                c.mkdir(
                    &p,
                    &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()),
                )
                .await
            })? {
                Ok(()) | Err(zk::Error::NodeExists) => {}
                Err(zk::Error::NoNode) => {
                    return Err(err(
                        "creating the paths (a chroot in the connect string must exist)",
                        &zk::Error::NoNode,
                    ));
                }
                Err(e) => return Err(err("creating the paths", &e)),
            }
        }
        let p = forever_path.clone();
        let (children, next_seq) =
            match session.call("listing forever", within, move |c| async move {
                c.get_children(&p).await
            })? {
                Ok((children, stat)) => (children, i64::from(stat.cversion)),
                Err(e) if missing(&e) => (Vec::new(), 0),
                Err(e) => return Err(err("listing forever", &e)),
            };
        let mut forever = Vec::new();
        for child in children {
            match ForeverNode::parse(&child) {
                Some(n) => forever.push(n),
                None => tracing::warn!(
                    child = %child,
                    path = %forever_path,
                    "a child of Leaf's forever path that Leaf cannot parse (Leaf nodes fail to \
                     start on it): left alone"
                ),
            }
        }
        forever.sort_by_key(|n| n.worker_id);
        let p = ids_path.clone();
        let id_names = match session.call("listing ids", within, move |c| async move {
            c.list_children(&p).await
        })? {
            Ok(names) => names,
            Err(e) if missing(&e) => Vec::new(),
            Err(e) => return Err(err("listing ids", &e)),
        };
        let mut ids = Vec::new();
        let mut ids_versions = std::collections::HashMap::new();
        let numbered: Vec<u64> = id_names.iter().filter_map(|c| c.parse().ok()).collect();
        let paths = numbered
            .iter()
            .map(|id| format!("{ids_path}/{}", znodes::seq(*id)))
            .collect();
        for (id, read) in
            numbered
                .iter()
                .zip(session.read_many("reading the ids", within, paths)?)
        {
            if let Some((data, version)) = read
                && let Some(d) = IdData::parse(&data)
            {
                ids.push((*id, d));
                ids_versions.insert(*id, version);
            }
        }
        let p = live_path.clone();
        let live = match session.call("listing live ids", within, move |c| async move {
            c.list_children(&p).await
        })? {
            Ok(names) => names.iter().filter_map(|c| c.parse().ok()).collect(),
            Err(e) if missing(&e) => Vec::new(),
            Err(e) => return Err(err("listing live ids", &e)),
        };
        let paths = forever
            .iter()
            .map(|n| format!("{forever_path}/{}", n.name))
            .collect();
        let mut timestamps = std::collections::HashMap::new();
        let mut forever_versions = std::collections::HashMap::new();
        for (n, read) in forever
            .iter()
            .zip(session.read_many("reading forever", within, paths)?)
        {
            if let Some((_, version)) = &read {
                forever_versions.insert(n.name.clone(), *version);
            }
            let ts = read.and_then(|(data, _)| znodes::leaf_timestamp(&data));
            timestamps.insert(n.name.clone(), ts);
        }
        Ok(View {
            forever,
            next_seq,
            ids,
            ids_versions,
            live,
            timestamps,
            forever_versions,
        })
    }
}

/// One boot's claim of a worker id, on its session.
struct Claim<'a> {
    assigner: &'a ZooKeeperAssigner,
    session: &'a Arc<Session>,
    ip: &'a str,
    port: &'a str,
    address: String,
    max: u64,
    deadline: Instant,
    /// The last reason to wait that was logged.
    said: std::cell::RefCell<Option<String>>,
    /// Leaf znodes of this ip:port seen: their version and since when it has not changed (on
    /// this node's monotonic clock, whatever the Leaf node's wall clock says).
    leaf_seen: std::cell::RefCell<std::collections::HashMap<String, (i32, Instant)>>,
}

/// What a claim tells of an id it could not take now.
enum Busy {
    /// Held by a live session, or a Leaf node that may be alive: wait and look again.
    Wait(String),
}

impl Claim<'_> {
    fn name(&self) -> &str {
        &self.assigner.name
    }

    fn within(&self) -> Duration {
        Duration::from_secs(10)
    }

    fn describe(&self) -> String {
        self.assigner.describe()
    }

    fn run(&self) -> Result<Assignment, Error> {
        loop {
            let view = View::read(self.session, self.name(), self.within(), true)?;
            let now = SystemClock.now_seconds();
            // 1. This ip:port's own id, as Leaf's restart finds it.
            let mut waiting = None;
            for own in view.forever.iter().filter(|n| n.address == self.address) {
                if own.worker_id > self.max {
                    continue;
                }
                match self.take_own(&view, own, now)? {
                    Ok(a) => return Ok(a),
                    Err(Busy::Wait(why)) => waiting = Some(why),
                }
            }
            if let Some(why) = waiting {
                self.pause(&why)?;
                continue;
            }
            // 2. A new id from Leaf's sequence, while it fits the layout.
            if u64::try_from(view.next_seq).is_ok_and(|s| s <= self.max) {
                if let Some(a) = self.create_new(now)? {
                    return Ok(a);
                }
                continue;
            }
            // 3. A ringflake id whose holder is gone and whose reach has passed.
            let mut candidates: Vec<&(u64, IdData)> = view
                .ids
                .iter()
                .filter(|(id, d)| {
                    *id <= self.max && d.origin == Origin::Ringflake && !view.live.contains(id)
                })
                .collect();
            candidates.sort_by_key(|(_, d)| d.reach);
            let mut soonest = None;
            for (id, data) in candidates {
                if data.reach >= now {
                    soonest = Some(soonest.map_or(data.reach, |s: i64| s.min(data.reach)));
                    continue;
                }
                let Some(node) = view.forever.iter().find(|n| n.worker_id == *id) else {
                    continue;
                };
                let version = view.ids_versions.get(id).copied().unwrap_or(-1);
                if let Some(a) = self.recycle(node, data, version, now)? {
                    return Ok(a);
                }
            }
            let held = view
                .ids
                .iter()
                .any(|(id, d)| *id <= self.max && d.origin == Origin::Ringflake);
            match soonest {
                Some(reach) => {
                    self.pause(&format!(
                        "every free ringflake id is reserved until its reach, the soonest until \
                         {}",
                        crate::clock::rfc3339(reach)
                    ))?;
                }
                // Their holders may go (a session expires, a node stops).
                None if held => self.pause(&format!(
                    "every id up to {} is held by a live session or a Leaf node",
                    self.max
                ))?,
                None => {
                    return Err(Error::WorkerAssignment(format!(
                        "no worker id up to {} free in {}: Leaf's sequence is at {} and no id \
                         ringflake made has a holder that is gone",
                        self.max,
                        self.describe(),
                        view.next_seq
                    )));
                }
            }
        }
    }

    /// Waits a little before looking again, within the boot's deadline.
    fn pause(&self, why: &str) -> Result<(), Error> {
        if Instant::now() >= self.deadline {
            return Err(Error::WorkerAssignment(format!(
                "no worker id from {} within the boot's deadline: {why}",
                self.describe()
            )));
        }
        // Said once per reason, not every look.
        let mut said = self.said.borrow_mut();
        if said.as_deref() != Some(why) {
            tracing::info!(address = %self.address, reason = %why, "waiting for a worker id");
            *said = Some(why.to_string());
        }
        std::thread::sleep(Duration::from_millis(250));
        Ok(())
    }

    fn paths(&self, worker_id: u64) -> (String, String) {
        let seq = znodes::seq(worker_id);
        (
            format!("{}/{seq}", znodes::ids(self.name())),
            format!("{}/{seq}", znodes::live(self.name())),
        )
    }

    fn leaf_data(&self) -> Vec<u8> {
        znodes::leaf_data(self.ip, self.port, SystemClock.now_millis())
    }

    /// This ip:port's own forever znode, taken (or why not now).
    fn take_own(
        &self,
        view: &View,
        own: &ForeverNode,
        now: i64,
    ) -> Result<Result<Assignment, Busy>, Error> {
        let id = own.worker_id;
        let (ids_path, live_path) = self.paths(id);
        if view.live.contains(&id) {
            return Ok(Err(Busy::Wait(format!(
                "worker id {id} of {} is served by a live session (this node's predecessor, \
                 until the servers expire its session?)",
                self.address
            ))));
        }
        let forever_path = format!("{}/{}", znodes::forever(self.name()), own.name);
        let ts = view.timestamps.get(&own.name).copied().flatten();
        let window = self.assigner.window;
        let managed = view.ids.iter().find(|(i, _)| *i == id).map(|(_, d)| d);
        let (origin, not_before, ops) = match managed {
            Some(data) => {
                let version = view.ids_versions.get(&id).copied().unwrap_or(-1);
                let floor = data.reach.max(ts.map_or(i64::MIN, |t| t.div_euclid(1000)));
                let reach = now.max(floor.saturating_add(1)).saturating_add(window);
                let d = IdData {
                    origin: data.origin,
                    holder: self.address.clone(),
                    reach,
                };
                (
                    data.origin,
                    floor,
                    vec![
                        Op::Create(live_path, Vec::new(), zk::CreateMode::Ephemeral),
                        Op::SetData(ids_path, d.to_json(), Some(version)),
                        Op::SetData(forever_path, self.leaf_data(), None),
                    ],
                )
            }
            None => {
                // A Leaf node's (or a ringflake boot's that stopped before marking it): taken
                // over once the znode has stood still long enough that no Leaf node rewrites it:
                // its version unchanged for 10 s of this node's monotonic clock (a Leaf node
                // whose wall clock is behind would look gone by its timestamp alone), and its
                // timestamp 10 s old.
                let Some(ts) = ts else {
                    return Err(Error::WorkerAssignment(format!(
                        "worker id {id} of {} in {}: its data has no timestamp Leaf could read",
                        self.address,
                        self.describe()
                    )));
                };
                let now_ms = SystemClock.now_millis();
                let version = view.forever_versions.get(&own.name).copied().unwrap_or(-1);
                let still = {
                    let mut seen = self.leaf_seen.borrow_mut();
                    match seen.get(&own.name) {
                        Some(&(v, since)) if v == version => since.elapsed(),
                        _ => {
                            seen.insert(own.name.clone(), (version, Instant::now()));
                            Duration::ZERO
                        }
                    }
                };
                let alive = Duration::from_millis(LEAF_ALIVE_MS as u64);
                if now_ms.saturating_sub(ts) < LEAF_ALIVE_MS || still < alive {
                    return Ok(Err(Busy::Wait(format!(
                        "worker id {id} of {}: its Leaf znode has not stood still for {} s, a \
                         Leaf node may still be serving it",
                        self.address,
                        LEAF_ALIVE_MS / 1000
                    ))));
                }
                // Leaf issues until its next upload, 3 s later at most.
                let floor = (ts + LEAF_UPLOAD_MS + 999).div_euclid(1000);
                let reach = now.max(floor.saturating_add(1)).saturating_add(window);
                let d = IdData {
                    origin: Origin::Leaf,
                    holder: self.address.clone(),
                    reach,
                };
                (
                    Origin::Leaf,
                    floor,
                    vec![
                        Op::Create(live_path, Vec::new(), zk::CreateMode::Ephemeral),
                        Op::Create(ids_path, d.to_json(), zk::CreateMode::Persistent),
                        // Unless a Leaf node wrote it meanwhile.
                        Op::SetData(forever_path, self.leaf_data(), Some(version)),
                    ],
                )
            }
        };
        let reach = now.max(not_before.saturating_add(1)).saturating_add(window);
        match self
            .session
            .multi("taking this node's id", self.within(), ops)?
        {
            Ok(results) => {
                let version = version_of(&results, 1);
                tracing::info!(
                    worker_id = id,
                    database = %self.describe(),
                    address = %self.address,
                    after_second = not_before,
                    "worker id {id} acquired: this ip:port's own, as Leaf finds it"
                );
                Ok(Ok(self.assignment(
                    id,
                    own.name.clone(),
                    origin,
                    version,
                    reach,
                    not_before,
                )))
            }
            Err((_, zk::Error::NodeExists | zk::Error::BadVersion | zk::Error::NoNode)) => {
                Ok(Err(Busy::Wait(format!(
                    "worker id {id} of {} changed while it was taken",
                    self.address
                ))))
            }
            Err((_, e)) => Err(self.session.error("taking this node's id", &e)),
        }
    }

    /// A new id: a persistent sequential znode under `forever`, as Leaf makes one; `None` if
    /// the sequence gave one that does not fit (deleted again) or it could not be marked.
    fn create_new(&self, now: i64) -> Result<Option<Assignment>, Error> {
        let prefix = format!("{}/{}-", znodes::forever(self.name()), self.address);
        let data = self.leaf_data();
        let (_, sequence) = self
            .session
            .call(
                "creating a forever znode",
                self.within(),
                move |c| async move {
                    c.create(
                        &prefix,
                        &data,
                        &zk::CreateMode::PersistentSequential.with_acls(zk::Acls::anyone_all()),
                    )
                    .await
                },
            )?
            .map_err(|e| self.session.error("creating a forever znode", &e))?;
        let Ok(id) = u64::try_from(sequence.into_i64()) else {
            return Ok(None);
        };
        let name = ForeverNode::name_of(&self.address, id);
        if id > self.max {
            let path = format!("{}/{name}", znodes::forever(self.name()));
            let _ = self.session.call(
                "deleting a forever znode",
                self.within(),
                move |c| async move { c.delete(&path, None).await },
            );
            return Ok(None);
        }
        let (ids_path, live_path) = self.paths(id);
        let reach = now.saturating_add(self.assigner.window);
        let d = IdData {
            origin: Origin::Ringflake,
            holder: self.address.clone(),
            reach,
        };
        let ops = vec![
            Op::Create(live_path, Vec::new(), zk::CreateMode::Ephemeral),
            Op::Create(ids_path, d.to_json(), zk::CreateMode::Persistent),
        ];
        match self.session.multi("marking a new id", self.within(), ops)? {
            Ok(_) => {
                tracing::info!(
                    worker_id = id,
                    database = %self.describe(),
                    address = %self.address,
                    "worker id {id} acquired: a new forever znode {name}"
                );
                Ok(Some(self.assignment(
                    id,
                    name,
                    Origin::Ringflake,
                    0,
                    reach,
                    now,
                )))
            }
            Err((_, e)) => Err(self.session.error("marking a new id", &e)),
        }
    }

    /// A gone holder's id, renamed to this ip:port in one transaction.
    fn recycle(
        &self,
        node: &ForeverNode,
        data: &IdData,
        version: i32,
        now: i64,
    ) -> Result<Option<Assignment>, Error> {
        let id = node.worker_id;
        let (ids_path, live_path) = self.paths(id);
        let forever = znodes::forever(self.name());
        let new_name = ForeverNode::name_of(&self.address, id);
        let reach = now.max(data.reach.saturating_add(1)) + self.assigner.window;
        let d = IdData {
            origin: Origin::Ringflake,
            holder: self.address.clone(),
            reach,
        };
        let mut ops = vec![
            Op::Create(live_path, Vec::new(), zk::CreateMode::Ephemeral),
            Op::SetData(ids_path, d.to_json(), Some(version)),
        ];
        if node.name != new_name {
            ops.push(Op::Delete(format!("{forever}/{}", node.name), None));
            ops.push(Op::Create(
                format!("{forever}/{new_name}"),
                self.leaf_data(),
                zk::CreateMode::Persistent,
            ));
        }
        match self.session.multi("recycling an id", self.within(), ops)? {
            Ok(results) => {
                tracing::info!(
                    worker_id = id,
                    database = %self.describe(),
                    address = %self.address,
                    previous = %node.address,
                    previous_reach = %crate::clock::rfc3339(data.reach),
                    "worker id {id} acquired: recycled from {}, whose reach passed at {}",
                    node.address,
                    crate::clock::rfc3339(data.reach)
                );
                Ok(Some(self.assignment(
                    id,
                    new_name,
                    Origin::Ringflake,
                    version_of(&results, 1),
                    reach,
                    data.reach,
                )))
            }
            Err((_, zk::Error::NodeExists | zk::Error::BadVersion | zk::Error::NoNode)) => Ok(None),
            Err((_, e)) => Err(self.session.error("recycling an id", &e)),
        }
    }

    fn assignment(
        &self,
        worker_id: u64,
        forever_name: String,
        origin: Origin,
        version: i32,
        reach: i64,
        not_before: i64,
    ) -> Assignment {
        Assignment {
            worker_id,
            not_before: Some(not_before),
            order_floor: None,
            lease: Some(Box::new(ZkLease {
                session: Arc::clone(self.session),
                name: self.name().to_string(),
                worker_id,
                forever_name,
                ip: self.ip.to_string(),
                port: self.port.to_string(),
                origin,
                version: AtomicI32::new(version),
                until: AtomicI64::new(reach),
                window: self.assigner.window,
            })),
        }
    }
}

/// The version a multi's `index`-th operation (a create or a data write) left.
fn version_of(results: &[zk::MultiWriteResult], index: usize) -> i32 {
    match results.get(index) {
        Some(zk::MultiWriteResult::SetData { stat }) => stat.version,
        _ => 0,
    }
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
