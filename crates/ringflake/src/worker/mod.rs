//! Where a generator's worker id comes from: the vocabulary ([`WorkerIdAssigner`],
//! [`Assignment`] in `assigner`, [`Lease`]), each source in its own module.
//!
//! UidGenerator takes a new worker id from its `WORKER_NODE` table on every boot; ringflake does
//! the same behind [`WorkerIdAssigner`]:
//!
//! - `fixed`: ids that need no database (configuration, a StatefulSet ordinal);
//! - `table`: the worker-table algorithm every database shares ([`DatabaseAssigner`]), over
//!   `rows` (the statements each database provides), with `row_lease` (the lease in a row) and
//!   `node` (what a row says about its node);
//! - `sqlite`, `mysql`, `postgres`: one database each; the two server clients share `server`
//!   (connecting, reconnecting, probing the table, timeouts, error hints) and `secrets`
//!   (passwords kept out of messages);
//! - `durable`: claims the database cannot forget (every standby holds a write before an ID is
//!   served under it);
//! - `lease`: the [`Lease`] trait and the generator's thread that keeps one extended;
//! - `db_clock`: the database as a second clock (the skew between this node's clock and the
//!   database's, read every few seconds, and what it means);
//! - `zookeeper`: ids from a ZooKeeper ensemble in Meituan Leaf's znodes
//!   ([`ZooKeeperAssigner`](zookeeper::ZooKeeperAssigner)), with a session per held id, the
//!   lease machinery of `lease` for the reach of each id, and the generator's healing;
//! - `source`: a source as the command line names it ([`SourceKind`]: its flags, plain data
//!   the binary turns into flags of its own) and what an opened one does beside assigning
//!   ([`Source`]: describe itself, list its ids): what lets a new source live in its own module
//!   with one line of set-up in the binary;
//! - `owner`: the owner file of a state directory (an OS lock held for the run, the row its
//!   holder holds and who holds it: the boot id and the file's inode), by which a restart on the
//!   same host proves its predecessor gone and takes its row back (`table::take_back`), and a
//!   copy of the directory proves nothing.
//!
//! [`DatabaseAssigner`]: table::DatabaseAssigner

pub(crate) mod assigner;
pub(crate) mod db_clock;
pub(crate) mod durable;
#[cfg(feature = "etcd")]
pub(crate) mod etcd;
pub(crate) mod fixed;
#[cfg(all(test, feature = "sqlite"))]
mod full_table_tests;
#[cfg(any(feature = "etcd", feature = "redis"))]
pub(crate) mod kv;
pub(crate) mod lease;
#[cfg(feature = "mysql")]
pub(crate) mod mysql;
pub(crate) mod node;
pub(crate) mod owner;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "redis")]
pub(crate) mod redis;
pub(crate) mod row_lease;
#[cfg(all(test, feature = "sqlite"))]
mod row_lease_tests;
pub(crate) mod rows;
#[cfg(any(feature = "zookeeper", feature = "etcd"))]
pub(crate) mod runtime;
#[cfg(any(feature = "mysql", feature = "postgres"))]
pub(crate) mod secrets;
#[cfg(any(feature = "mysql", feature = "postgres"))]
pub(crate) mod server;
#[cfg(all(test, any(feature = "mysql", feature = "postgres")))]
mod server_tests;
pub(crate) mod source;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite;
pub(crate) mod table;
#[cfg(any(feature = "mysql", feature = "postgres"))]
pub(crate) mod table_def;
#[cfg(all(test, feature = "sqlite"))]
mod test_table;
#[cfg(feature = "postgres")]
pub(crate) mod tls;
#[cfg(feature = "zookeeper")]
pub(crate) mod zookeeper;

pub use assigner::{Assignment, WorkerIdAssigner};
pub use db_clock::DatabaseTime;
pub use fixed::{FixedWorkerId, StatefulSetOrdinal};
pub use lease::Lease;
pub use source::{
    Cell, Listed, Listing, Placement, SharedFlag, Source, SourceKind, SourceOption, SourceSettings,
};

/// Each source's public items (its assigner, what it lists, its [`SourceKind`]), re-exported at
/// the crate root: a new source adds its line here, and nothing outside `worker/`.
pub mod sources {
    #[cfg(feature = "etcd")]
    pub use super::etcd::EtcdAssigner;
    #[cfg(feature = "etcd")]
    pub use super::etcd::kind::ETCD;
    #[cfg(any(feature = "etcd", feature = "redis"))]
    pub use super::kv::KvWorker;
    #[cfg(feature = "redis")]
    pub use super::redis::RedisAssigner;
    #[cfg(feature = "redis")]
    pub use super::redis::kind::REDIS;
    #[cfg(feature = "zookeeper")]
    pub use super::zookeeper::kind::ZOOKEEPER;
    #[cfg(feature = "zookeeper")]
    pub use super::zookeeper::{ZooKeeperAssigner, ZooKeeperWorker};
}
