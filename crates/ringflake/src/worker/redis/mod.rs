//! Worker ids from Redis ([`RedisAssigner`]): each id a key claimed with `SET NX PX` and kept
//! alive by a script that checks the holder, its reach recorded beside it (the `kv` module's
//! algorithm, over `store`), every claim and write confirmed with `WAIT` on the replicas the
//! primary reports (`conn`), a plain primary or the one Sentinel names.

mod conn;
pub(crate) mod kind;
mod store;

use super::assigner::{Assignment, WorkerIdAssigner};
use super::kv::KvWorker;
use super::kv::claim::Claim;
use crate::{Error, Layout};
use conn::Conn;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use store::Store;

/// Worker ids from Redis: under a prefix (`ringflake:` by default), the key `held:{id}` says who
/// holds the id, with a TTL the holder keeps alive (10 s by default), and the hash `reach` holds
/// the last second each id's holder may issue.
///
/// - **A claim** is `SET {prefix}held:{id} … NX PX {ttl}`, then the reach read once held: the
///   new holder starts above it. Extensions, keep-alives and releases are Lua scripts that first
///   check that the key still holds this boot's value, so an id is never renewed nor released by
///   a node that lost it (the failures of the Redis id distributors in the field).
/// - **Replication**: Redis acknowledges a write before its replicas have it, and a failover to a
///   replica that lacked a claim would give the id to a second node. So after every claim and
///   every write ringflake asks the primary how many replicas it has (`INFO replication`) and
///   `WAIT`s for all of them; a write they do not all confirm is not used (a claim is refused
///   once `retry_for` has passed). [`accept_async_replication`](Self::accept_async_replication)
///   uses writes at once instead. A node whose claim a failover lost finds its key gone at its
///   next keep-alive, says so (`lost write: …`) and takes another id.
/// - **The fence**: a node whose keep-alives have not been confirmed for a third of the TTL stops
///   serving until they are, so that it has stopped before its key can expire.
/// - **The clock**: `TIME`, the primary's clock, read every few seconds (the database as a second
///   clock).
///
/// ```no_run
/// use ringflake::{CachedUidGenerator, Layout, RedisAssigner};
///
/// let redis = RedisAssigner::new("redis+sentinel://s1:26379,s2:26379,s3:26379/ids")?;
/// let ids = CachedUidGenerator::builder(Layout::default()).worker_id_from(&redis).build()?;
/// println!("worker id {}: {}", ids.worker_id(), ids.next_id()?);
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Clone)]
pub struct RedisAssigner {
    url: String,
    ca_file: Option<PathBuf>,
    prefix: String,
    ttl: Duration,
    window: i64,
    retry_for: Duration,
    timeout: Duration,
    accept_async: bool,
    generator: Option<String>,
    describe: String,
}

impl fmt::Debug for RedisAssigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisAssigner")
            .field("redis", &self.describe)
            .field("prefix", &self.prefix)
            .field("ttl", &self.ttl)
            .field("lease_window", &Duration::from_secs(self.window as u64))
            .field("retry_for", &self.retry_for)
            .field("ca_file", &self.ca_file)
            .field("accept_async_replication", &self.accept_async)
            .finish()
    }
}

impl RedisAssigner {
    /// The default TTL of a holder's key: 10 s.
    ///
    /// ```
    /// let r = ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?;
    /// assert!(format!("{r:?}").contains("ttl: 10s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const DEFAULT_TTL: Duration = Duration::from_secs(10);

    /// The default lease window: the reach is written 30 s ahead of use, about every 10 s.
    ///
    /// ```
    /// let r = ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?;
    /// assert!(format!("{r:?}").contains("lease_window: 30s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const DEFAULT_LEASE_WINDOW: Duration = Duration::from_secs(30);

    /// The default prefix of the keys: `ringflake:`.
    ///
    /// ```
    /// let r = ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?;
    /// assert!(r.describe().ends_with(ringflake::RedisAssigner::DEFAULT_PREFIX));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const DEFAULT_PREFIX: &str = "ringflake:";

    /// Worker ids from the Redis `url` names: `redis://[USER:PASSWORD@]HOST:PORT[/DB]`,
    /// `rediss://…` for TLS, or `redis+sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]/MASTER[/DB]`
    /// (`rediss+sentinel://` for TLS; the user and password are the primary's, the Sentinels'
    /// go in `?sentinel_user=…&sentinel_password=…`). Nothing is connected until a boot asks for
    /// a worker id.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerAssignment`] for a URL that does not parse (the message never shows the
    /// password).
    ///
    /// ```
    /// use ringflake::RedisAssigner;
    /// let r = RedisAssigner::new("redis://ids:s3cret@10.0.0.5:6379/0")?;
    /// assert_eq!(r.describe(), "redis://ids@10.0.0.5:6379/0 ringflake:");
    /// assert!(!format!("{r:?}").contains("s3cret"));
    /// let e = RedisAssigner::new("redis+sentinel://s1:26379").unwrap_err();
    /// assert!(e.to_string().contains("no master name"), "{e}");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn new(url: &str) -> Result<RedisAssigner, Error> {
        let describe = Conn::new(url, None)?.describe().to_string();
        Ok(RedisAssigner {
            url: url.to_string(),
            ca_file: None,
            prefix: Self::DEFAULT_PREFIX.into(),
            ttl: Self::DEFAULT_TTL,
            window: Self::DEFAULT_LEASE_WINDOW.as_secs() as i64,
            retry_for: Duration::from_secs(30),
            timeout: Duration::from_secs(5),
            accept_async: false,
            generator: None,
            describe,
        })
    }

    /// The prefix of the keys: give each ID space its own, and ringflake a prefix no other
    /// program writes under.
    ///
    /// ```
    /// let r = ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?.prefix("ids:orders:");
    /// assert!(r.describe().ends_with(" ids:orders:"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.prefix = prefix.to_string();
        self
    }

    /// The TTL of a holder's key (default 10 s; at least 2 s): a node stops serving after a
    /// third of it without a confirmed keep-alive, and a killed node's id is free after it.
    ///
    /// ```
    /// use std::time::Duration;
    /// let r = ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?.ttl(Duration::from_secs(60));
    /// assert!(format!("{r:?}").contains("ttl: 60s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_secs(2));
        self
    }

    /// How far ahead of use the reach is written (default 30 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// let r = ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?.lease_window(Duration::from_secs(90));
    /// assert!(format!("{r:?}").contains("lease_window: 90s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn lease_window(mut self, window: Duration) -> Self {
        self.window = window.as_secs().max(1) as i64;
        self
    }

    /// How long a boot retries a Redis that does not answer, waits for its claim to reach every
    /// replica, and waits for a free id (default 30 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// let r = ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?.retry_for(Duration::from_secs(5));
    /// assert!(format!("{r:?}").contains("retry_for: 5s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn retry_for(mut self, d: Duration) -> Self {
        self.retry_for = d;
        self
    }

    /// The longest one call at boot may take (default 5 s); a lease's calls take at most a
    /// tenth of the TTL.
    ///
    /// ```
    /// use std::time::Duration;
    /// let r = ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?.timeout(Duration::from_secs(2));
    /// assert!(format!("{r:?}").starts_with("RedisAssigner"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d.max(Duration::from_millis(100));
        self
    }

    /// Trust the CA certificates in this PEM file for `rediss://` (else the public web roots).
    ///
    /// ```
    /// let r = ringflake::RedisAssigner::new("rediss://127.0.0.1:6380")?.ca_file("/etc/redis/ca.pem");
    /// assert!(format!("{r:?}").contains("/etc/redis/ca.pem"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn ca_file(mut self, path: impl AsRef<Path>) -> Self {
        self.ca_file = Some(path.as_ref().to_path_buf());
        self
    }

    /// Use a claim or write as soon as the primary has it, without `WAIT`ing for the replicas
    /// (and on a Redis that refuses `WAIT` or `INFO`). The risk: a failover to a replica that
    /// lacked a claim gives the same worker id to another node, and both hand out the same IDs.
    ///
    /// ```
    /// let r = ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?.accept_async_replication(true);
    /// assert!(format!("{r:?}").contains("accept_async_replication: true"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn accept_async_replication(mut self, accept: bool) -> Self {
        self.accept_async = accept;
        self
    }

    /// Where the ids are: `redis://user@host:6379/0 ringflake:`.
    ///
    /// ```
    /// let r = ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?;
    /// assert_eq!(r.describe(), "redis://127.0.0.1:6379/ ringflake:");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn describe(&self) -> String {
        format!("{} {}", self.describe, self.prefix)
    }

    /// The store, on a new connection.
    fn store(&self) -> Result<Store, Error> {
        let mut conn = Conn::new(&self.url, self.ca_file.as_ref())?;
        conn.accept_async = self.accept_async;
        Ok(Store {
            conn: Arc::new(conn),
            prefix: self.prefix.clone(),
            ttl: self.ttl,
            timeout: self.timeout,
            refused: Default::default(),
        })
    }

    /// Every id under the prefix: its holder (if one holds it) and its reach, as `ringflake
    /// workers --redis` lists them.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] when Redis does not answer; [`Error::WorkerAssignment`] for a key
    /// under the prefix that ringflake did not write.
    ///
    /// ```no_run
    /// for w in ringflake::RedisAssigner::new("redis://127.0.0.1:6379")?.list()? {
    ///     println!("{} {:?} {:?}", w.worker_id, w.holder, w.reach);
    /// }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn list(&self) -> Result<Vec<KvWorker>, Error> {
        super::kv::workers(&self.store()?)
    }
}

impl WorkerIdAssigner for RedisAssigner {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error> {
        self.assign(layout).map(|a| a.worker_id)
    }

    fn assign(&self, layout: &Layout) -> Result<Assignment, Error> {
        let store = self.store()?;
        Claim {
            registry: &store,
            window: self.window,
            retry_for: self.retry_for,
            generator: self.generator.clone(),
        }
        .run(layout)
    }

    fn retaker(&self) -> Option<Box<dyn WorkerIdAssigner + Send + Sync>> {
        Some(Box::new(self.clone()))
    }
}
