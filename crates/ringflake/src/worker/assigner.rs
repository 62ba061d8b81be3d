//! The vocabulary every worker id source speaks: [`WorkerIdAssigner`] (asked once per boot) and
//! the [`Assignment`] it answers with.

use super::lease::Lease;
use crate::{Error, Layout};

/// A source of worker ids, asked once per generator boot.
///
/// # Examples
///
/// ```
/// use ringflake::{FixedWorkerId, Layout, WorkerIdAssigner};
///
/// let id = FixedWorkerId(7).assign_worker_id(&Layout::default())?;
/// assert_eq!(id, 7);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub trait WorkerIdAssigner {
    /// Returns the worker id for this boot, which must fit `layout`'s worker field.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerIdOutOfRange`] when the id does not fit, or an assigner-specific error.
    ///
    /// ```
    /// use ringflake::{Error, FixedWorkerId, Layout, WorkerIdAssigner};
    ///
    /// let three_bits = Layout::new(40, 3, 20, ringflake::DEFAULT_EPOCH_SECONDS)?;
    /// assert_eq!(FixedWorkerId(7).assign_worker_id(&three_bits)?, 7);
    /// let err = FixedWorkerId(8).assign_worker_id(&three_bits).unwrap_err();
    /// assert!(matches!(err, Error::WorkerIdOutOfRange { worker_id: 8, max: 7 }), "{err}");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error>;

    /// Returns the worker id with what the generator must respect for it: a floor for its
    /// seconds and a lease to keep extended. The default has neither.
    ///
    /// # Errors
    ///
    /// As [`assign_worker_id`](Self::assign_worker_id).
    ///
    /// ```
    /// use ringflake::{FixedWorkerId, Layout, WorkerIdAssigner};
    /// let a = FixedWorkerId(2).assign(&Layout::default())?;
    /// assert_eq!(a.worker_id, 2);
    /// assert!(a.lease.is_none());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn assign(&self, layout: &Layout) -> Result<Assignment, Error> {
        self.assign_worker_id(layout).map(Assignment::fixed)
    }

    /// An owned copy of this assigner that a generator keeps, to take a worker id without the
    /// application: the boot's own, when the builder is built
    /// ([`CachedBuilder::worker_id_from`](crate::CachedBuilder::worker_id_from) asks it once
    /// the build's checks have passed, so that a refused build claims nothing: its first answer
    /// must be what this assigner's would be); another at build, once, if the id assigned is
    /// reserved beyond the lead cap (its
    /// floor, the state file's reach for it or the table's, lies past `now + max_lead + max_lag`, so it
    /// could serve nothing until the clock gets there); and later, when a
    /// [`CachedUidGenerator`](crate::CachedUidGenerator)'s lease is lost for good (its row taken
    /// over by another node, or gone), it takes a new worker id from it by itself and serves
    /// again. The default has none: a fixed id has no other; the generator then starts with the
    /// id it was given (and waits for the clock), and stays unavailable once its lease is lost
    /// for good, saying so. [`DatabaseAssigner`](crate::DatabaseAssigner) has one (a new row is
    /// another id).
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, FixedWorkerId, Layout, WorkerIdAssigner};
    ///
    /// assert!(FixedWorkerId(7).retaker().is_none());
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = DatabaseAssigner::sqlite(dir.path().join("w.db"))?;
    /// let again = table.retaker().expect("a database has other ids");
    /// let first = table.assign_worker_id(&Layout::default())?;
    /// assert_ne!(again.assign_worker_id(&Layout::default())?, first);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn retaker(&self) -> Option<Box<dyn WorkerIdAssigner + Send + Sync>> {
        None
    }

    /// Takes back `worker_id`, which this assigner just assigned without a lease to a boot that
    /// was then refused before it made an ID (an [`above`](crate::CachedBuilder::above) it does
    /// not sort above, a worker id the layout cannot hold), so that a refused start leaves
    /// nothing behind. A worker table without recycling deletes the row it inserted for it (its
    /// auto-increment id is not handed out again). An assignment with a lease is given back by
    /// releasing the lease instead, never through this. The default does nothing: a fixed id
    /// holds nothing.
    ///
    /// # Errors
    ///
    /// The table cannot be reached: the row stays, as a failed Java boot's does.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let java = DatabaseAssigner::sqlite(dir.path().join("w.db"))?.recycle(false);
    /// let id = java.assign_worker_id(&Layout::default())?;
    /// assert_eq!(java.list()?.len(), 1);
    /// java.give_back(id)?;
    /// assert!(java.list()?.is_empty());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn give_back(&self, worker_id: u64) -> Result<(), Error> {
        let _ = worker_id;
        Ok(())
    }
}

/// What a boot gets from a [`WorkerIdAssigner`].
///
/// ```
/// use ringflake::Assignment;
/// let a = Assignment::fixed(4);
/// assert_eq!((a.worker_id, a.not_before, a.order_floor, a.lease.is_none()), (4, None, None, true));
/// ```
#[derive(Debug)]
pub struct Assignment {
    /// The worker id.
    pub worker_id: u64,
    /// IDs of this boot must carry seconds strictly after this unix second: everything the
    /// recycled id's previous holder may have used (its lease). Uniqueness depends on it.
    pub not_before: Option<i64>,
    /// IDs of this boot should carry seconds after this unix second, so that restarts on a host
    /// are monotonic: the newest lease of this host's earlier rows. Ordering only (the worker id
    /// is a new one): a generator honours it within its lead cap and never starts further than
    /// `max_lead` ahead of the clock for it, nor, with a state file, further than the highest
    /// second that file records (a live holder's lease runs a window ahead of what it used).
    pub order_floor: Option<i64>,
    /// The lease to keep extended while running, if the assigner uses leases.
    pub lease: Option<Box<dyn Lease>>,
}

impl Assignment {
    /// A bare worker id: no floor, no lease.
    ///
    /// ```
    /// assert_eq!(ringflake::Assignment::fixed(1).worker_id, 1);
    /// ```
    pub fn fixed(worker_id: u64) -> Self {
        Assignment {
            worker_id,
            not_before: None,
            order_floor: None,
            lease: None,
        }
    }
}

/// Checks that `worker_id` fits the layout.
pub(crate) fn check_fits(worker_id: u64, layout: &Layout) -> Result<u64, Error> {
    if worker_id > layout.max_worker_id() {
        return Err(Error::WorkerIdOutOfRange {
            worker_id,
            max: layout.max_worker_id(),
        });
    }
    Ok(worker_id)
}
