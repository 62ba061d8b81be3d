//! Worker leases: the highest second a node may issue, recorded in the worker table ahead of use
//! and extended in the background, so that a worker id can be recycled provably safely and a
//! restarted node can start above everything its previous run issued, even after SIGKILL.
//!
//! [`Lease`] is what an assigner hands out; [`Keeper`] is the generator's thread that keeps one
//! extended and releases it at shutdown.

use crate::{Clock, Error};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

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
    /// The lease was taken over by another node, or the database cannot be reached.
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
    /// The database cannot be reached (the lease then simply expires).
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
}

/// The default lease window: how far beyond the newest used second a lease reaches.
pub(crate) const DEFAULT_WINDOW_SECS: i64 = 300;

/// Asks the worker id source for a new worker id once the lease is lost for good, and hands what
/// it got to the generator (the closure does both); an error means the source did not answer,
/// and the keeper asks again.
pub(crate) type Renew = Box<dyn FnMut() -> Result<u64, Error> + Send>;

/// Shared between a generator and its lease keeper thread.
pub(crate) struct KeeperShared {
    /// The lease; `None` once it is lost for good (dropped, which lets go of what it held) until
    /// the generator installs the next one.
    lease: Mutex<Option<Box<dyn Lease>>>,
    clock: Arc<dyn Clock>,
    /// The last unix second the node may issue.
    horizon: AtomicI64,
    /// The newest unix second the generator has used (written or issued).
    used: AtomicI64,
    /// The last extension failed.
    lost: AtomicBool,
    /// The lease is lost for good: taken over by another node, or its row gone. No extension
    /// brings it back; only a new worker id does.
    gone: Mutex<Option<String>>,
    /// Asks the source for a new worker id when the lease is gone; `None`: the source has no
    /// other (a fixed id) or the generator does not heal.
    renewer: Mutex<Option<Renew>>,
    /// A new worker id was handed to the generator and waits to be installed.
    renewed: AtomicBool,
    /// The newest second actually issued, when the generator knows it at shutdown.
    final_second: AtomicI64,
    /// How many times the generator hit the horizon since the last extension: the window doubles.
    hits: AtomicU32,
    shutdown: AtomicBool,
    window: AtomicI64,
    /// The generator's lead cap, in seconds, if it has one.
    max_lead: Option<u64>,
    renew: Duration,
    thread: Mutex<Option<std::thread::Thread>>,
}

impl KeeperShared {
    /// The last unix second the node may issue.
    pub(crate) fn horizon(&self) -> i64 {
        self.horizon.load(Ordering::Acquire)
    }

    /// Records the newest second the generator has used.
    pub(crate) fn note_used(&self, second: i64) {
        self.used.fetch_max(second, Ordering::Relaxed);
    }

    /// Records, at shutdown, the newest second the generator actually handed out: the lease is
    /// released there rather than at the newest second it wrote.
    pub(crate) fn set_final_second(&self, second: i64) {
        self.final_second.store(second, Ordering::Relaxed);
    }

    /// Whether the last extension attempt failed.
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// The error for a generator that reached the horizon with the lease lost.
    pub(crate) fn expired(&self) -> Error {
        let reason = match lock(&self.gone).as_deref() {
            None => "the worker table could not be updated to extend the lease".into(),
            Some(why) if lock(&self.renewer).is_some() => {
                format!("{why}; taking a new worker id from the source as soon as it answers")
            }
            Some(why) => format!(
                "{why}; this worker id source has no other id to give: restart with another \
                 worker id"
            ),
        };
        Error::LeaseExpired {
            until: self.horizon(),
            reason,
        }
    }

    /// Whether the lease is lost for good (taken over, or its row gone).
    pub(crate) fn is_gone(&self) -> bool {
        lock(&self.gone).is_some()
    }

    /// Lets the keeper take a new worker id through `renew` once the lease is lost for good.
    pub(crate) fn set_renew(&self, renew: Renew) {
        *lock(&self.renewer) = Some(renew);
    }

    /// The generator switched to a new worker id: keep `lease` extended from `first_second` on.
    pub(crate) fn install(&self, lease: Box<dyn Lease>, first_second: i64) {
        self.window.store(lease.window().max(1), Ordering::Relaxed);
        self.horizon.store(lease.until(), Ordering::Release);
        self.used.store(first_second, Ordering::Relaxed);
        self.final_second.store(i64::MIN, Ordering::Relaxed);
        self.hits.store(0, Ordering::Relaxed);
        *lock(&self.lease) = Some(lease);
        *lock(&self.gone) = None;
        self.lost.store(false, Ordering::Release);
        self.renewed.store(false, Ordering::Release);
        self.wake();
    }

    /// The new worker id handed over could not be used: ask the source again.
    pub(crate) fn renew_again(&self) {
        self.renewed.store(false, Ordering::Release);
        self.wake();
    }

    fn wake(&self) {
        if let Some(t) = lock(&self.thread).as_ref() {
            t.unpark();
        }
    }

    /// The generator reached the horizon: extend now, and further.
    pub(crate) fn request_extension(&self) {
        self.hits.fetch_add(1, Ordering::Relaxed);
        self.wake();
    }

    fn extend_once(&self) {
        if self.is_gone() {
            self.try_renew();
            return;
        }
        let hits = self.hits.swap(0, Ordering::Relaxed).min(12);
        let now = self.clock.now_seconds();
        let base = now.max(self.used.load(Ordering::Relaxed));
        let window = self.window.load(Ordering::Relaxed);
        let mut target = base.saturating_add(window << hits);
        if let Some(lead) = self.max_lead {
            target = target.min(now.saturating_add(lead as i64).saturating_add(window));
        }
        if target <= self.horizon() {
            return;
        }
        let extended = match lock(&self.lease).as_ref() {
            Some(lease) => lease.extend(target),
            None => return,
        };
        match extended {
            Ok(()) => {
                self.horizon.store(target, Ordering::Release);
                self.lost.store(false, Ordering::Release);
            }
            // Taken over, or the row is gone: no extension can bring it back. The lease is let
            // go of (with whatever it held, such as the owner file's lock) and a new worker id
            // asked for.
            Err(Error::LeaseExpired { reason, .. }) => {
                self.lost.store(true, Ordering::Release);
                tracing::error!(until = self.horizon(), %reason, "worker lease lost for good");
                *lock(&self.gone) = Some(reason);
                drop(lock(&self.lease).take());
                self.try_renew();
            }
            Err(_) => self.lost.store(true, Ordering::Release),
        }
    }

    /// Asks the source for a new worker id, unless one waits to be installed already.
    fn try_renew(&self) {
        if self.renewed.load(Ordering::Acquire) || self.shutdown.load(Ordering::Acquire) {
            return;
        }
        let mut renew = lock(&self.renewer);
        let Some(renew) = renew.as_mut() else {
            return;
        };
        match renew() {
            Ok(worker_id) => {
                tracing::info!(worker_id, "new worker id taken from the source");
                self.renewed.store(true, Ordering::Release);
            }
            Err(error) => {
                tracing::warn!(%error, "no new worker id yet: the source will be asked again");
            }
        }
    }
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Plain data, consistent between statements: poisoning is no reason to stop.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running lease keeper: extends the lease every `renew` (and on demand), releases it on drop.
pub(crate) struct Keeper {
    pub(crate) shared: Arc<KeeperShared>,
    handle: Option<JoinHandle<()>>,
}

impl fmt::Debug for Keeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Keeper { .. }")
    }
}

impl Keeper {
    /// Starts keeping `lease` extended, from `first_second`, the first second the generator
    /// may use (its floor), on. With a lead cap (`max_lead` seconds), extensions never reach
    /// further than `max_lead + window` past the clock, whatever the load.
    pub(crate) fn start(
        lease: Box<dyn Lease>,
        clock: Arc<dyn Clock>,
        max_lead: Option<u64>,
        first_second: i64,
    ) -> Result<Keeper, Error> {
        let horizon = lease.until();
        let window = lease.window();
        // Renew three times per window (at most every second), so one lost update is harmless.
        let renew = Duration::from_millis((window.max(1) as u64 * 1000 / 3).clamp(100, 1000));
        let shared = Arc::new(KeeperShared {
            lease: Mutex::new(Some(lease)),
            clock,
            horizon: AtomicI64::new(horizon),
            used: AtomicI64::new(first_second),
            final_second: AtomicI64::new(i64::MIN),
            lost: AtomicBool::new(false),
            gone: Mutex::new(None),
            renewer: Mutex::new(None),
            renewed: AtomicBool::new(false),
            hits: AtomicU32::new(0),
            shutdown: AtomicBool::new(false),
            window: AtomicI64::new(window.max(1)),
            max_lead,
            renew,
            thread: Mutex::new(None),
        });
        let s = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("ringflake-lease".into())
            .spawn(move || {
                while !s.shutdown.load(Ordering::Acquire) {
                    s.extend_once();
                    std::thread::park_timeout(s.renew);
                }
            })
            .map_err(|e| Error::thread_spawn("ringflake-lease", e))?;
        *shared.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle.thread().clone());
        Ok(Keeper {
            shared,
            handle: Some(handle),
        })
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
        let fin = self.shared.final_second.load(Ordering::Relaxed);
        let used = if fin == i64::MIN {
            self.shared.used.load(Ordering::Relaxed)
        } else {
            fin
        };
        let last = if used == i64::MIN {
            self.shared.clock.now_seconds()
        } else {
            used
        };
        // Never below what may have been issued; never above the horizon already recorded. A
        // lease lost for good is not ours to release.
        if let Some(lease) = lock(&self.shared.lease).take() {
            let _ = lease.release(last.min(self.shared.horizon()));
        }
    }
}

impl std::ops::Deref for Keeper {
    type Target = KeeperShared;

    fn deref(&self) -> &KeeperShared {
        &self.shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;

    /// A lease in memory that remembers every extension asked of it.
    #[derive(Debug, Default)]
    struct Recorded(Mutex<Vec<i64>>);

    impl Lease for Arc<Recorded> {
        fn until(&self) -> i64 {
            1_800_000_000 + 2
        }
        fn extend(&self, until: i64) -> Result<(), Error> {
            self.0.lock().unwrap().push(until);
            Ok(())
        }
        fn release(&self, _last_second: i64) -> Result<(), Error> {
            Ok(())
        }
        fn window(&self) -> i64 {
            2
        }
    }

    /// However often the generator hits the horizon (each hit used to double the reach), an
    /// extension never reaches past `now + max_lead + window`.
    #[test]
    fn extensions_stop_at_the_lead_cap_plus_the_window() {
        let now = 1_800_000_000;
        let clock = ManualClock::from_seconds(now);
        let lease = Arc::new(Recorded::default());
        let keeper = Keeper::start(
            Box::new(Arc::clone(&lease)),
            Arc::new(clock),
            Some(10),
            now + 10,
        )
        .unwrap();
        for _ in 0..50 {
            keeper.request_extension();
        }
        keeper.shared.extend_once();
        let asked = lease.0.lock().unwrap().clone();
        assert!(!asked.is_empty());
        assert!(asked.iter().all(|&u| u <= now + 10 + 2), "{asked:?}");
        assert!(keeper.horizon() >= now + 10, "covers what was used");
    }
}
