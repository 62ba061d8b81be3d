//! What a lease is: the trait a worker id source's lease implements ([`Lease`]), and the one rule
//! of when the keeper writes it ([`extension_target`]).

use crate::Error;
use std::fmt;

/// A worker id's lease in its table: the node may issue IDs whose second is at most the lease.
///
/// Implemented by the database assigners; a generator given an [`Assignment`](crate::Assignment)
/// with a lease keeps it extended from a background thread and never issues past it.
///
/// ```
/// use ringflake::{Error, Lease};
/// use std::sync::atomic::{AtomicI64, Ordering};
///
/// #[derive(Debug)]
/// struct InMemory(AtomicI64);
/// impl Lease for InMemory {
///     fn until(&self) -> i64 { self.0.load(Ordering::SeqCst) }
///     fn extend(&self, until: i64) -> Result<(), Error> { self.0.store(until, Ordering::SeqCst); Ok(()) }
///     fn release(&self, last_second: i64) -> Result<(), Error> { self.0.store(last_second, Ordering::SeqCst); Ok(()) }
/// }
/// let lease = InMemory(AtomicI64::new(100));
/// lease.extend(200)?;
/// assert_eq!(lease.until(), 200);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub trait Lease: Send + Sync + fmt::Debug + 'static {
    /// The lease in force: the last unix second this node may issue.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("w.db"))?.recycle(true);
    /// let a = assigner.assign(&Layout::default())?;
    /// let lease = a.lease.as_ref().expect("recycling keeps a lease");
    /// assert_eq!(assigner.list()?[0].lease_until, lease.until()); // the row holds it
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn until(&self) -> i64;
    /// Moves the lease to `until`.
    ///
    /// # Errors
    ///
    /// [`Error::LeaseExpired`] when the lease was taken over by another node (it cannot come
    /// back: the keeper logs it once, as an error); any other error when the database cannot be
    /// reached or refuses (the keeper logs a warning and tries again about every second).
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("w.db"))?.recycle(true);
    /// let a = assigner.assign(&Layout::default())?;
    /// let lease = a.lease.as_ref().expect("recycling keeps a lease");
    /// lease.extend(lease.until() + 60)?;
    /// assert_eq!(assigner.list()?[0].lease_until, lease.until());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn extend(&self, until: i64) -> Result<(), Error>;
    /// Gives the lease back at shutdown, recording `last_second`, the newest second this node
    /// may have issued: the id becomes recyclable once the clock passes it.
    ///
    /// # Errors
    ///
    /// The database cannot be reached (the lease then simply expires), or
    /// [`Error::LeaseExpired`] when another node has taken the worker id over (its row is left
    /// alone).
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("w.db"))?.recycle(true);
    /// let a = assigner.assign(&Layout::default())?;
    /// let lease = a.lease.as_ref().expect("recycling keeps a lease");
    /// let last_used = lease.until() - 250;
    /// lease.release(last_used)?;
    /// assert_eq!(assigner.list()?[0].lease_until, last_used);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn release(&self, last_second: i64) -> Result<(), Error>;

    /// Checks, without extending it, that the lease is still this node's, when something says it
    /// may not be: the keeper calls it about every second while no extension is due. A lease in
    /// a database row checks its row when the connection to the database broke since the last
    /// call (after a failover, the new primary may lack the row or this node's lease): at once,
    /// not at the next extension. The default checks nothing.
    ///
    /// # Errors
    ///
    /// As [`extend`](Self::extend): [`Error::LeaseExpired`] when the lease is lost for good.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("w.db"))?.recycle(true);
    /// let a = assigner.assign(&Layout::default())?;
    /// let lease = a.lease.as_ref().expect("recycling keeps a lease");
    /// lease.check()?; // a SQLite file has no connection to lose
    /// assert_eq!(assigner.list()?[0].lease_until, lease.until());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn check(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Why no ID may be served now although the lease holds, if none may: the keeper asks
    /// after every extension or check (about once a second), and while it answers `Some` the
    /// generator serves nothing and drops the IDs ready in its ring (as when the clock is
    /// skewed); it serves again once the answer is `None`. A lease kept by a ZooKeeper session
    /// answers `Some` once the servers have not answered for a third of the session timeout:
    /// the session may then expire, and the id go to another node, before this node can learn
    /// it; takes then fail with [`Error::Fenced`]. The default never refuses.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let a = DatabaseAssigner::sqlite(dir.path().join("w.db"))?.assign(&Layout::default())?;
    /// let lease = a.lease.as_ref().expect("recycling keeps a lease");
    /// assert_eq!(lease.at_risk(), None); // a row has no session to lose
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn at_risk(&self) -> Option<String> {
        None
    }

    /// How often the keeper should look at the lease (extend it when due, else
    /// [`check`](Self::check) it and ask [`at_risk`](Self::at_risk)), if more often than its
    /// default (three times a window, at least once a second): a lease whose risk comes from a
    /// session timeout of a few seconds asks for a tenth of it. `None` (the default) keeps the
    /// default.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let a = DatabaseAssigner::sqlite(dir.path().join("w.db"))?.assign(&Layout::default())?;
    /// assert_eq!(a.lease.as_ref().expect("a lease").look_every(), None);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn look_every(&self) -> Option<std::time::Duration> {
        None
    }

    /// How far beyond the newest used second an extension reaches, in seconds (default 300).
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    /// use std::time::Duration;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let assigner = DatabaseAssigner::sqlite(dir.path().join("w.db"))?
    ///     .recycle(true)
    ///     .lease_window(Duration::from_secs(90));
    /// let a = assigner.assign(&Layout::default())?;
    /// assert_eq!(a.lease.as_ref().expect("a lease").window(), 90);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn window(&self) -> i64 {
        DEFAULT_WINDOW_SECS
    }

    /// The clock of the database that keeps the lease, read in one round trip (a read, never
    /// a write), by which the keeper judges this node's clock every few seconds; `None` (the
    /// default) where there is no clock apart from this node's (SQLite, a lease in memory).
    ///
    /// # Errors
    ///
    /// The database cannot be reached: the keeper keeps its last reading.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let a = DatabaseAssigner::sqlite(dir.path().join("w.db"))?.assign(&Layout::default())?;
    /// let lease = a.lease.as_ref().expect("recycling keeps a lease");
    /// assert_eq!(lease.database_clock()?, None); // SQLite runs on this node's clock
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn database_clock(&self) -> Result<Option<crate::DatabaseTime>, Error> {
        Ok(None)
    }

    /// Where the lease is kept, without any password, for log lines: `sqlite file
    /// ringflake.db`, `postgres://user@host:5432/ids`. The default says only `lease`.
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("w.db");
    /// let a = DatabaseAssigner::sqlite(&path)?.recycle(true).assign(&Layout::default())?;
    /// let lease = a.lease.as_ref().expect("recycling keeps a lease");
    /// assert_eq!(lease.describe(), format!("sqlite file {}", path.display()));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn describe(&self) -> String {
        "lease".into()
    }
}

/// How the reason of a lease lost to a lost write begins (the lease's `extend` says it; see
/// `RowLease`): the keeper tells a lost write from a takeover by it.
pub(crate) const LOST_WRITE: &str = "lost write:";

/// The default lease window: how far beyond the newest used second a lease reaches.
pub(crate) const DEFAULT_WINDOW_SECS: i64 = 300;

/// While extensions keep failing with the same error, it is logged again at most this often (the
/// keeper tries about once a second).
pub(super) const REPEAT_WARNING_SECS: i64 = 30;

/// Whether the lease must be written now, and to which second: the one rule of when a node
/// writes its lease.
///
/// `now` is the clock, `used` the newest second the generator has used (it may be ahead of the
/// clock: borrowed seconds), `horizon` the lease last written (and confirmed) to the table,
/// `window` the lease window and `hits` how many times the generator reached the horizon since
/// the last extension (each doubles the reach, up to 12); `force` asks for a write now whatever
/// the hysteresis (the last write failed, or the database did not answer the keeper's read of
/// its clock: whether the lease can still be written is found out at once, and said).
///
/// # Hysteresis
///
/// The lease is written only when what it still covers beyond `max(now, used)` has fallen below
/// two thirds of the window, or when the generator has reached it (`hits > 0`), or when forced;
/// it is then moved
/// a full window (times `2^hits`) past `max(now, used)`. In steady state that is one write per
/// third of a window (a little more: the remaining lease must fall *below* two thirds), i.e.
/// every 101 s with the default 300 s window, not one per check. Uniqueness never depends on
/// this rule: the generator never issues past the horizon, and the horizon moves only once the
/// write has landed; the rule only decides how much margin is left when the write is due.
///
/// With a lead cap (`max_lead` seconds), a write never reaches further than `now + max_lead +
/// window`. `None`: nothing to write (the target would not move the horizon).
pub(crate) fn extension_target(
    now: i64,
    used: i64,
    horizon: i64,
    window: i64,
    hits: u32,
    max_lead: Option<u64>,
    force: bool,
) -> Option<i64> {
    let window = window.max(1);
    let base = now.max(used);
    let remaining = horizon.saturating_sub(base);
    // Below two thirds of the window, in integers: remaining < 2 * window / 3.
    let due = force || hits > 0 || remaining.saturating_mul(3) < window.saturating_mul(2);
    if !due {
        return None;
    }
    let mut target = base.saturating_add(window.saturating_mul(1 << hits.min(12)));
    if let Some(lead) = max_lead {
        target = target.min(
            now.saturating_add(i64::try_from(lead).unwrap_or(i64::MAX))
                .saturating_add(window),
        );
    }
    (target > horizon).then_some(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hysteresis boundary: with a 300 s window the lease is written once what it covers
    /// beyond `max(now, used)` falls below 200 s, not before; a hit writes at once.
    #[test]
    fn extension_is_due_below_two_thirds_of_the_window() {
        let now = 1_800_000_000;
        // 200 s left: not due; 199 s left: due, to a full window past the clock.
        assert_eq!(
            extension_target(now, now, now + 200, 300, 0, None, false),
            None
        );
        assert_eq!(
            extension_target(now, now, now + 199, 300, 0, None, false),
            Some(now + 300)
        );
        // Borrowed seconds count: what the lease covers is measured from the newest used.
        assert_eq!(
            extension_target(now, now + 150, now + 300, 300, 0, None, false),
            Some(now + 450)
        );
        // The generator reached the horizon: written at once, twice as far.
        assert_eq!(
            extension_target(now, now + 300, now + 300, 300, 1, None, false),
            Some(now + 900)
        );
        // Forced (a failed write, a database that did not answer a read): at once.
        assert_eq!(
            extension_target(now, now, now + 250, 300, 0, None, true),
            Some(now + 300)
        );
        // A lead cap bounds the reach; nothing to write when it would not move the horizon.
        assert_eq!(
            extension_target(now, now + 10, now + 12, 2, 5, Some(10), false),
            None
        );
        assert_eq!(
            extension_target(now, now + 10, now + 11, 2, 5, Some(10), false),
            Some(now + 12)
        );
    }
}
