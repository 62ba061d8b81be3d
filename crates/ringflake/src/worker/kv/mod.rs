//! Worker ids held by a key with a time to live in a key-value store (etcd, Redis): the claim
//! and the lease both sources share ([`claim`], [`KvLease`](lease::KvLease)); each store says
//! only how it reads, takes, keeps, moves and gives back its records ([`Registry`], [`Hold`]).
//!
//! Per worker id N, two records under the source's prefix (`records`):
//!
//! - **the holder**: who holds N, created only where none exists (a compare-and-create: etcd's
//!   transaction on `create_revision == 0`, Redis's `SET NX`) and kept alive with a time to
//!   live (an etcd lease, a Redis `PX`). While it exists, N is nobody else's; a holder that
//!   stops keeping it alive (killed, frozen, cut off) loses it once the TTL has run out.
//! - **the reach**: the last unix second N's holder may issue, written ahead of use (the lease
//!   of the worker table, by the same rule, `extension_target`) and only while the writer is
//!   N's holder; at a clean stop, moved back to the last second used. It never expires:
//!   whoever takes N next reads it in the same step as its take and starts above it.
//!
//! A node serves N only while its lease holds: the reach confirmed, and the holder's TTL kept
//! alive within a third of itself (the fence, `lease::cut_off`, as for ZooKeeper's sessions).

pub(crate) mod claim;
pub(crate) mod lease;
pub(crate) mod records;

use super::db_clock::DatabaseTime;
use super::source::{Cell, Listed, Listing};
use crate::Error;
use records::Holder;
use std::fmt;
use std::time::{Duration, Instant};

/// When the newest call a store answered (and confirmed) was sent, on this process's monotonic
/// clock: the store heard from this node at least that recently.
#[derive(Debug)]
pub(crate) struct Answered(std::sync::atomic::AtomicU64);

/// The process's origin for the instants kept in [`Answered`].
fn base() -> Instant {
    static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

/// `at` as nanoseconds since [`base`].
fn nanos(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(base()).as_nanos()).unwrap_or(u64::MAX)
}

impl Answered {
    /// The call sent at `sent` was answered.
    pub(crate) fn since(sent: Instant) -> Answered {
        Answered(std::sync::atomic::AtomicU64::new(nanos(sent)))
    }

    /// The call sent at `sent` was answered (an older one changes nothing).
    pub(crate) fn heard(&self, sent: Instant) {
        self.0
            .fetch_max(nanos(sent), std::sync::atomic::Ordering::AcqRel);
    }

    /// How long ago the newest answered call was sent.
    pub(crate) fn ago(&self) -> Duration {
        let sent = self.0.load(std::sync::atomic::Ordering::Acquire);
        Duration::from_nanos(nanos(Instant::now()).saturating_sub(sent))
    }
}

/// One id as [`EtcdAssigner::list`](crate::EtcdAssigner) and
/// [`RedisAssigner::list`](crate::RedisAssigner) read it.
///
/// ```
/// let w = ringflake::KvWorker { worker_id: 3, holder: None, since: None, reach: Some(1_700_000_000) };
/// assert_eq!(w.worker_id, 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvWorker {
    /// The worker id.
    pub worker_id: u64,
    /// Who holds it now (`host pid N`, `generator@host pid N`), if anyone.
    pub holder: Option<String>,
    /// Since when (unix second), if held.
    pub since: Option<i64>,
    /// Its reach (unix second), once held: the last second its holder may issue.
    pub reach: Option<i64>,
}

/// Every id `registry` has a record of, as the assigners' `list` gives them.
pub(crate) fn workers(registry: &dyn Registry) -> Result<Vec<KvWorker>, Error> {
    Ok(registry
        .read()?
        .into_iter()
        .map(|s| KvWorker {
            worker_id: s.worker_id,
            since: s.holder.as_ref().map(|h| h.since),
            holder: s.holder.map(|h| h.who()),
            reach: s.reach,
        })
        .collect())
}

/// `workers` as `ringflake workers` prints them.
pub(crate) fn listing(workers: Vec<KvWorker>) -> Listing {
    Listing {
        columns: vec!["HOLDER", "SINCE", "REACH"],
        ids: workers
            .into_iter()
            .map(|w| Listed {
                worker_id: w.worker_id,
                cells: vec![
                    Cell::Text(w.holder.unwrap_or_else(|| "-".into())),
                    Cell::Second(w.since),
                    Cell::Second(w.reach),
                ],
            })
            .collect(),
        unit: ("id", "ids"),
    }
}

/// What a store holds of one worker id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Slot {
    /// The worker id.
    pub(crate) worker_id: u64,
    /// Its holder, if one holds it now.
    pub(crate) holder: Option<Holder>,
    /// Its reach, if it was ever held.
    pub(crate) reach: Option<i64>,
}

/// A store's side of the ids: reading them, and taking one.
pub(crate) trait Registry: Send + Sync + fmt::Debug {
    /// Where the ids are, for messages, without any password.
    fn describe(&self) -> String;

    /// Every id the store has a record of, read at one moment where the store can (etcd: one
    /// linearizable range read). A record under the prefix that is not ringflake's is an error
    /// naming it, never overwritten.
    fn read(&self) -> Result<Vec<Slot>, Error>;

    /// Takes `worker_id` for `holder` if nobody holds it: its holder record created only where
    /// none exists, with the store's TTL, confirmed as the store confirms writes (Redis: on
    /// every replica, by `deadline`), and its reach read in the same step or once held (nobody
    /// else can move it then). `None`: another holder has it.
    fn take(
        &self,
        worker_id: u64,
        holder: &Holder,
        deadline: Instant,
    ) -> Result<Option<Taken>, Error>;
}

/// A take: what holds the id, and the reach its previous holder left (`None`: never held).
pub(crate) type Taken = (Box<dyn Hold>, Option<i64>);

/// One held worker id: what keeps it.
pub(crate) trait Hold: Send + Sync + fmt::Debug {
    /// Moves the reach to `reach` (and keeps the holder alive) while this holder holds the id,
    /// confirmed as the store confirms writes. [`Error::LeaseExpired`] when it holds it no more.
    fn write_reach(&self, reach: i64) -> Result<(), Error>;

    /// Keeps the holder record alive for another TTL. [`Error::LeaseExpired`] when it is gone
    /// or another's.
    fn keep_alive(&self) -> Result<(), Error>;

    /// Gives the id back: the reach moved to `last`, the holder record deleted (while ours).
    fn release(&self, last: i64) -> Result<(), Error>;

    /// How long ago the newest keep-alive (or write) the store answered and confirmed was sent.
    fn since_answered(&self) -> Duration;

    /// The TTL of the holder record.
    fn ttl(&self) -> Duration;

    /// The store's clock, where it has one.
    fn clock(&self) -> Result<Option<DatabaseTime>, Error> {
        Ok(None)
    }

    /// Where the id is held, for log lines.
    fn describe(&self) -> String;
}
