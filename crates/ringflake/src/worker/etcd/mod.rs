//! Worker ids from etcd ([`EtcdAssigner`]): each id a key held by an etcd lease with a TTL,
//! claimed in a transaction, its reach recorded beside it (the `kv` module's algorithm, over
//! `store`), etcd's v3 API spoken through tonic (`client`, the stubs of `rpc`).
//!
//! etcd keeps no time: revisions count writes, and a lease's TTL counts down on the leader's
//! monotonic clock. So there is no database clock to judge this node's by (as for SQLite): the
//! TTL and the reach are measured on each node's own clocks, and a node's clock is watched by its
//! NTP and the generator's own rules (a step back never repeats an ID).

mod client;
pub(crate) mod kind;
// Generated (codegen_tests.rs): rustfmt leaves it as tonic-prost-build wrote it.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
#[rustfmt::skip]
mod rpc;
mod store;

#[cfg(test)]
mod codegen_tests;

use super::assigner::{Assignment, WorkerIdAssigner};
use super::kv::KvWorker;
use super::kv::claim::Claim;
use crate::{Error, Layout};
use client::{Client, Settings};
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use store::Store;

/// Worker ids from an etcd cluster: under a prefix (`/ringflake/` by default), the key
/// `held/{id}` says who holds the id, attached to an etcd lease that the holder keeps alive
/// (a TTL of 10 s by default), and `reach/{id}` records the last second its holder may issue.
///
/// - **A claim** is one transaction: create `held/{id}` only where it does not exist
///   (`create_revision == 0`) and read `reach/{id}` in the same revision; the new holder starts
///   above that reach. Reads are linearizable, and etcd answers a write once a majority of the
///   cluster has it: a new leader has every claim that was answered.
/// - **The lease** (the reach) is moved ahead of use by a transaction that compares
///   `held/{id}` with this boot's value: a node whose key is gone or another's finds out there
///   and takes a new worker id. The etcd lease is kept alive every tenth of the TTL; a node
///   whose keep-alives have not been answered for a third of the TTL stops serving (fenced) until
///   they are, so that it has stopped before its key can expire and the id go to another node.
/// - **A clean stop** moves the reach back to the last second used, deletes the key and revokes
///   the etcd lease: the id is free at once.
/// - **A key under the prefix that ringflake did not write** is an error naming it, never
///   overwritten.
///
/// ```no_run
/// use ringflake::{CachedUidGenerator, EtcdAssigner, Layout};
///
/// let etcd = EtcdAssigner::new("http://etcd1:2379,http://etcd2:2379,http://etcd3:2379")?
///     .prefix("/ringflake/orders/");
/// let ids = CachedUidGenerator::builder(Layout::default()).worker_id_from(&etcd).build()?;
/// println!("worker id {}: {}", ids.worker_id(), ids.next_id()?);
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Clone)]
pub struct EtcdAssigner {
    settings: Settings,
    prefix: String,
    ttl: Duration,
    window: i64,
    retry_for: Duration,
    timeout: Duration,
    generator: Option<String>,
}

impl fmt::Debug for EtcdAssigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdAssigner")
            .field("cluster", &self.settings.describe())
            .field("prefix", &self.prefix)
            .field("ttl", &self.ttl)
            .field("lease_window", &Duration::from_secs(self.window as u64))
            .field("retry_for", &self.retry_for)
            .field("tls", &self.tls())
            .finish()
    }
}

impl EtcdAssigner {
    /// The default TTL of a holder's etcd lease: 10 s. A node stops serving once etcd has not
    /// answered its keep-alives for a third of it.
    ///
    /// ```
    /// let e = ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?;
    /// assert!(format!("{e:?}").contains("ttl: 10s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const DEFAULT_TTL: Duration = Duration::from_secs(10);

    /// The default lease window: the reach is written 30 s ahead of use, about every 10 s.
    ///
    /// ```
    /// let e = ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?;
    /// assert!(format!("{e:?}").contains("lease_window: 30s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const DEFAULT_LEASE_WINDOW: Duration = Duration::from_secs(30);

    /// The default prefix of the keys: `/ringflake/`.
    ///
    /// ```
    /// let e = ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?;
    /// assert!(e.describe().ends_with(ringflake::EtcdAssigner::DEFAULT_PREFIX));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const DEFAULT_PREFIX: &str = "/ringflake/";

    /// Worker ids from the cluster `endpoints`: `http://host:2379` or `https://host:2379`,
    /// separated by commas (a bare `host:port` is `http://`). Nothing is connected until a boot
    /// asks for a worker id.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerAssignment`] for no endpoint, or one that is not `http://` or `https://`.
    ///
    /// ```
    /// use ringflake::EtcdAssigner;
    /// let e = EtcdAssigner::new("10.0.0.1:2379, https://10.0.0.2:2379")?;
    /// assert_eq!(e.describe(), "etcd http://10.0.0.1:2379,https://10.0.0.2:2379 /ringflake/");
    /// let err = EtcdAssigner::new("ftp://x").unwrap_err();
    /// assert!(err.to_string().contains("\"ftp://x\""), "{err}");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn new(endpoints: &str) -> Result<EtcdAssigner, Error> {
        let mut list = Vec::new();
        for e in endpoints
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
        {
            let url = if e.contains("://") {
                e.to_string()
            } else {
                format!("http://{e}")
            };
            if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains('@') {
                return Err(Error::WorkerAssignment(format!(
                    "etcd endpoint {e:?}: expected http://HOST:PORT or https://HOST:PORT (the \
                     user goes in --etcd-user / EtcdAssigner::user)"
                )));
            }
            list.push(url.trim_end_matches('/').to_string());
        }
        if list.is_empty() {
            return Err(Error::WorkerAssignment(
                "no etcd endpoint: expected http://HOST:PORT[,http://HOST:PORT…]".into(),
            ));
        }
        Ok(EtcdAssigner {
            settings: Settings {
                endpoints: list,
                ca_file: None,
                identity: None,
                user: None,
                connect_timeout: Duration::from_secs(3),
            },
            prefix: Self::DEFAULT_PREFIX.into(),
            ttl: Self::DEFAULT_TTL,
            window: Self::DEFAULT_LEASE_WINDOW.as_secs() as i64,
            retry_for: Duration::from_secs(30),
            timeout: Duration::from_secs(5),
            generator: None,
        })
    }

    /// The prefix of the keys (a `/` is added if it has none at the end): give each ID space
    /// its own, and ringflake a prefix no other program writes under.
    ///
    /// ```
    /// let e = ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?.prefix("/ids/orders");
    /// assert!(e.describe().ends_with(" /ids/orders/"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.prefix = if prefix.ends_with('/') {
            prefix.to_string()
        } else {
            format!("{prefix}/")
        };
        self
    }

    /// The TTL of a holder's etcd lease (default 10 s; at least 2 s): a node stops serving
    /// after a third of it without an answer, and a killed node's id is free after it.
    ///
    /// ```
    /// use std::time::Duration;
    /// let e = ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?.ttl(Duration::from_secs(30));
    /// assert!(format!("{e:?}").contains("ttl: 30s"));
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
    /// let e = ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?.lease_window(Duration::from_secs(60));
    /// assert!(format!("{e:?}").contains("lease_window: 60s"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn lease_window(mut self, window: Duration) -> Self {
        self.window = window.as_secs().max(1) as i64;
        self
    }

    /// How long a boot retries a cluster that does not answer, and waits for a free id (default
    /// 30 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// let e = ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?.retry_for(Duration::from_secs(5));
    /// assert!(format!("{e:?}").contains("retry_for: 5s"));
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
    /// let e = ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?.timeout(Duration::from_secs(2));
    /// assert!(format!("{e:?}").starts_with("EtcdAssigner"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d.max(Duration::from_millis(100));
        self.settings.connect_timeout = self.timeout;
        self
    }

    /// Trust the CA certificates in this PEM file for `https://` endpoints (else the public web
    /// roots); the host name is always checked.
    ///
    /// ```
    /// let e = ringflake::EtcdAssigner::new("https://127.0.0.1:2379")?.ca_file("/etc/etcd/ca.pem");
    /// assert!(format!("{e:?}").contains("CA file /etc/etcd/ca.pem"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn ca_file(mut self, path: impl AsRef<Path>) -> Self {
        self.settings.ca_file = Some(path.as_ref().to_path_buf());
        self
    }

    /// A client certificate and its private key (PEM), for a cluster that asks for one
    /// (`--client-cert-auth`).
    ///
    /// ```
    /// let e = ringflake::EtcdAssigner::new("https://127.0.0.1:2379")?
    ///     .client_identity("/etc/etcd/client.pem", "/etc/etcd/client-key.pem");
    /// assert!(format!("{e:?}").contains("client certificate /etc/etcd/client.pem"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn client_identity(mut self, cert: impl AsRef<Path>, key: impl AsRef<Path>) -> Self {
        self.settings.identity = Some((cert.as_ref().to_path_buf(), key.as_ref().to_path_buf()));
        self
    }

    /// The user and password, for a cluster with authentication on: every call carries the
    /// user's token (taken again when it expires). The password is never shown.
    ///
    /// ```
    /// let e = ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?.user("ids", "s3cret");
    /// assert_eq!(e.describe(), "etcd ids@http://127.0.0.1:2379 /ringflake/");
    /// assert!(!format!("{e:?}").contains("s3cret"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn user(mut self, name: &str, password: &str) -> Self {
        self.settings.user = Some((name.to_string(), password.to_string()));
        self
    }

    /// Where the ids are: `etcd http://host:2379,… /ringflake/`.
    ///
    /// ```
    /// let e = ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?;
    /// assert_eq!(e.describe(), "etcd http://127.0.0.1:2379 /ringflake/");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn describe(&self) -> String {
        format!("{} {}", self.settings.describe(), self.prefix)
    }

    /// TLS as set, for `Debug`.
    fn tls(&self) -> String {
        let mut parts = Vec::new();
        if let Some(ca) = &self.settings.ca_file {
            parts.push(format!("CA file {}", ca.display()));
        }
        if let Some((cert, _)) = &self.settings.identity {
            parts.push(format!("client certificate {}", cert.display()));
        }
        if parts.is_empty() {
            "the public web roots for https://".into()
        } else {
            parts.join(", ")
        }
    }

    /// The store, on a new client.
    fn store(&self) -> Result<Store, Error> {
        Ok(Store {
            client: Arc::new(Client::new(self.settings.clone())?),
            prefix: self.prefix.clone(),
            ttl: self.ttl,
            timeout: self.timeout,
        })
    }

    /// Every id under the prefix: its holder (if one holds it) and its reach, as `ringflake
    /// workers --etcd` lists them.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] when the cluster does not answer; [`Error::WorkerAssignment`] for a
    /// key under the prefix that ringflake did not write.
    ///
    /// ```no_run
    /// for w in ringflake::EtcdAssigner::new("http://127.0.0.1:2379")?.list()? {
    ///     println!("{} {:?} {:?}", w.worker_id, w.holder, w.reach);
    /// }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn list(&self) -> Result<Vec<KvWorker>, Error> {
        super::kv::workers(&self.store()?)
    }
}

impl WorkerIdAssigner for EtcdAssigner {
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
