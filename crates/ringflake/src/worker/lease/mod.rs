//! Worker leases: the highest second a node may issue, recorded in the worker table ahead of use
//! and extended in the background, so that a worker id can be recycled provably safely and a
//! restarted node can start above everything its previous run issued, even after SIGKILL.
//!
//! [`Lease`] is what an assigner hands out and [`extension_target`] the one rule of when it is
//! written (both in `contract`); [`Keeper`] is the generator's thread that keeps one extended,
//! says when extensions fail, when the lease runs out or is taken over, asks the source for a new
//! worker id once it is lost for good, and releases it at shutdown.

mod contract;
#[cfg(any(feature = "zookeeper", feature = "etcd", feature = "redis"))]
mod fence;

use crate::lock::lock;
use crate::{Clock, Error};
pub use contract::Lease;
use contract::REPEAT_WARNING_SECS;
pub(crate) use contract::{DEFAULT_WINDOW_SECS, LOST_WRITE, extension_target};
#[cfg(any(feature = "zookeeper", feature = "etcd", feature = "redis"))]
pub(crate) use fence::cut_off;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Asks the worker id source for a new worker id once the lease is lost for good, and hands what
/// it got to the generator (the closure does both): the new worker id, or the error of a source
/// that did not answer (the keeper asks again).
pub(crate) type Renew = Box<dyn FnMut() -> Result<u64, Error> + Send>;

/// Shared between a generator and its lease keeper thread.
pub(crate) struct KeeperShared {
    /// The lease; `None` once it is lost for good (dropped, which lets go of what it held) until
    /// the generator installs the next one.
    lease: Mutex<Option<Box<dyn Lease>>>,
    clock: Arc<dyn Clock>,
    /// The worker id the lease is for (log lines name it); a new one after a heal.
    worker_id: AtomicU64,
    /// The last unix second the node may issue.
    horizon: AtomicI64,
    /// The newest unix second the generator has used (written or issued).
    used: AtomicI64,
    /// The last extension failed.
    lost: AtomicBool,
    /// The last extension failed because another node holds the worker id now.
    taken_over: AtomicBool,
    /// The lease is lost for good (taken over, or its row gone): why. No extension brings it
    /// back; only a new worker id does.
    gone: Mutex<Option<String>>,
    /// Asks the source for a new worker id when the lease is gone; `None`: the source has no
    /// other (a fixed id) or the generator does not heal.
    renewer: Mutex<Option<Renew>>,
    /// A new worker id was handed to the generator and waits to be installed.
    renewed: AtomicBool,
    /// Why the source's last answer gave no new worker id, while it gives none.
    renew_refused: Mutex<Option<String>>,
    /// Extension attempts that failed since the keeper started.
    failures: AtomicU64,
    /// Times the worker table was found to have lost this node's write (see `lost_write`).
    lost_writes: AtomicU64,
    /// The unix second of the first failure of the current run of failures; `i64::MIN` while
    /// extensions succeed.
    failing_since: AtomicI64,
    /// The last extension's error, while extensions fail.
    last_error: Mutex<Option<Error>>,
    /// What the keeper thread has logged of the current run of failures.
    reported: Mutex<Reported>,
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
    /// The database's clock as this node judges it, once the generator asks for it
    /// ([`Keeper::watch_database_clock`]).
    db_clock: std::sync::OnceLock<super::db_clock::ClockWatch>,
    /// A read of the database failed: the next look writes the lease whatever the hysteresis.
    recheck: AtomicBool,
    /// The lease says nothing may be served now ([`Lease::at_risk`]); why, in `risk`.
    at_risk: AtomicBool,
    risk: Mutex<Option<String>>,
    /// The span current when the generator was built (the application's name for it, if it
    /// gave one): the keeper's log lines are emitted inside it.
    span: tracing::Span,
}

/// What has been logged of a run of failed extensions, so that it is told once, not every second.
#[derive(Default)]
struct Reported {
    /// When the last "extension failed" warning was logged, and the error it showed.
    warned: Option<(i64, String)>,
    /// Failures in the current run.
    streak: u64,
    /// The expiry of the lease during this run was logged.
    expired: bool,
}

impl KeeperShared {
    /// The worker id the lease is for.
    fn worker(&self) -> u64 {
        self.worker_id.load(Ordering::Relaxed)
    }

    /// Where the lease is kept, for log lines.
    fn describe(&self) -> String {
        lock(&self.lease)
            .as_ref()
            .map_or_else(|| "no lease".into(), |l| l.describe())
    }

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

    /// Whether the last extension attempt failed because another node took the worker id over.
    pub(crate) fn is_taken_over(&self) -> bool {
        self.taken_over.load(Ordering::Acquire)
    }

    /// Extension attempts that failed since the keeper started.
    pub(crate) fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    /// The unix second extensions began to fail, while they fail.
    pub(crate) fn failing_since(&self) -> Option<i64> {
        let since = self.failing_since.load(Ordering::Acquire);
        (since != i64::MIN).then_some(since)
    }

    /// The last extension's error, while extensions fail.
    pub(crate) fn last_error(&self) -> Option<Error> {
        crate::lock::lock(&self.last_error).clone()
    }

    /// The error for a generator that reached the horizon with the lease lost: why the last
    /// extension failed.
    pub(crate) fn expired(&self) -> Error {
        let reason = match self.last_error() {
            Some(Error::LeaseExpired { reason, .. }) => reason,
            Some(e) => format!("the worker table could not be updated to extend the lease: {e}"),
            None => "the worker table could not be updated to extend the lease".into(),
        };
        let reason = match (self.is_gone(), lock(&self.renewer).is_some()) {
            (false, _) => reason,
            (true, true) => match lock(&self.renew_refused).as_ref() {
                Some(why) => format!(
                    "{reason}; taking a new worker id from the source, which has given none \
                     yet: {why}"
                ),
                None => format!(
                    "{reason}; taking a new worker id from the source as soon as it answers"
                ),
            },
            (true, false) => format!(
                "{reason}; this worker id source has no other id to give: restart with another \
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

    /// The generator switched to worker id `worker_id`: keep `lease` extended from
    /// `first_second` on.
    pub(crate) fn install(&self, worker_id: u64, lease: Box<dyn Lease>, first_second: i64) {
        self.window.store(lease.window().max(1), Ordering::Relaxed);
        self.horizon.store(lease.until(), Ordering::Release);
        self.used.store(first_second, Ordering::Relaxed);
        self.final_second.store(i64::MIN, Ordering::Relaxed);
        self.hits.store(0, Ordering::Relaxed);
        self.worker_id.store(worker_id, Ordering::Relaxed);
        *lock(&self.lease) = Some(lease);
        *lock(&self.gone) = None;
        *lock(&self.last_error) = None;
        *lock(&self.reported) = Reported::default();
        self.failing_since.store(i64::MIN, Ordering::Release);
        self.taken_over.store(false, Ordering::Release);
        self.lost.store(false, Ordering::Release);
        self.renewed.store(false, Ordering::Release);
        self.at_risk.store(false, Ordering::Release);
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

    /// Asks the source for a new worker id, unless one waits to be installed already.
    fn try_renew(&self) {
        if self.renewed.load(Ordering::Acquire) || self.shutdown.load(Ordering::Acquire) {
            return;
        }
        let mut renew = lock(&self.renewer);
        let Some(renew) = renew.as_mut() else {
            return;
        };
        // Read before asking: the source may hand the new lease over (and its id) as it answers.
        let old_worker_id = self.worker();
        match renew() {
            Ok(worker_id) => {
                *lock(&self.renew_refused) = None;
                tracing::info!(
                    old_worker_id,
                    worker_id,
                    "new worker id {worker_id} taken from the source after the lease of worker \
                     id {old_worker_id} was lost for good",
                );
                self.renewed.store(true, Ordering::Release);
            }
            Err(error) => {
                // Said when the answer changes, not at every look.
                let text = error.to_string();
                let mut refused = lock(&self.renew_refused);
                if refused.as_deref() != Some(text.as_str()) {
                    tracing::warn!(
                        old_worker_id,
                        %error,
                        "no new worker id yet: the source will be asked again"
                    );
                    *refused = Some(text);
                }
            }
        }
    }

    /// Reads the database's clock when a reading is due (every few seconds), if the generator
    /// watches it.
    fn probe_clock(&self) {
        let Some(watch) = self.db_clock.get() else {
            return;
        };
        if !watch.due() {
            return;
        }
        let read = lock(&self.lease).as_ref().map(|l| l.database_clock());
        if let Some(read) = read {
            if read.is_err() {
                // The database did not answer: try the lease now rather than when it is due, so
                // that an outage is said (and counted) within seconds, not a third of a window.
                self.recheck.store(true, Ordering::Release);
            }
            watch.record(read, &*self.clock, self.worker(), &self.describe());
        }
    }

    /// This node's clock minus the database's at the last reading, in milliseconds.
    pub(crate) fn clock_skew_millis(&self) -> Option<i64> {
        self.db_clock.get().and_then(|w| w.skew_millis())
    }

    /// The skew beyond which nothing is served, in milliseconds, where the database's clock has
    /// been read (not for a database without a clock of its own).
    pub(crate) fn max_clock_skew_millis(&self) -> Option<u64> {
        self.db_clock
            .get()
            .filter(|w| w.skew_millis().is_some())
            .map(|w| u64::try_from(w.max_skew().as_millis()).unwrap_or(u64::MAX))
    }

    /// Why nothing may be served, while this node's clock disagrees with the database's.
    pub(crate) fn clock_refusal(&self) -> Option<Error> {
        self.db_clock.get().and_then(|w| w.refusal())
    }

    /// Why nothing may be served now: the lease at risk ([`Lease::at_risk`]), or this node's
    /// clock disagreeing with the database's. An atomic load while neither holds.
    pub(crate) fn refusal(&self) -> Option<Error> {
        if self.at_risk.load(Ordering::Acquire)
            && let Some(reason) = lock(&self.risk).clone()
        {
            return Some(Error::Fenced {
                worker_id: self.worker(),
                reason,
            });
        }
        self.clock_refusal()
    }

    /// Whether the lease says nothing may be served now ([`Lease::at_risk`]).
    pub(crate) fn is_at_risk(&self) -> bool {
        self.at_risk.load(Ordering::Acquire)
    }

    /// Asks the lease whether it is at risk, and says when that changes.
    fn judge_risk(&self) {
        let risk = lock(&self.lease).as_ref().and_then(|l| l.at_risk());
        match risk {
            Some(reason) => {
                *lock(&self.risk) = Some(reason.clone());
                if !self.at_risk.swap(true, Ordering::AcqRel) {
                    tracing::error!(
                        worker_id = self.worker(),
                        database = %self.describe(),
                        reason = %reason,
                        "worker id {} not served: {reason}",
                        self.worker(),
                    );
                }
            }
            None => {
                if self.at_risk.swap(false, Ordering::AcqRel) {
                    tracing::info!(
                        worker_id = self.worker(),
                        database = %self.describe(),
                        "worker id {} served again: its lease is no longer at risk",
                        self.worker(),
                    );
                }
            }
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
        let target = extension_target(
            now,
            self.used.load(Ordering::Relaxed),
            self.horizon(),
            self.window.load(Ordering::Relaxed),
            hits,
            self.max_lead,
            self.recheck.swap(false, Ordering::AcqRel) || self.is_lost(),
        );
        if let Some(target) = target {
            let extended = lock(&self.lease).as_ref().map(|l| l.extend(target));
            match extended {
                Some(Ok(())) => self.extended(target, now),
                Some(Err(e)) => self.failed(e, now),
                None => {}
            }
        } else {
            // Bound first: the guard must be gone before `failed` (which locks the lease again
            // to describe it); held through an `if let`'s body, it deadlocked the keeper.
            let checked = lock(&self.lease).as_ref().map(|l| l.check());
            if let Some(Err(e)) = checked {
                // No extension due, but the row is not as this node left it (see `Lease::check`).
                self.failed(e, now);
            }
        }
        self.check_expiry(now);
    }

    /// An extension to `until` landed: the lease holds again, said once after failures.
    fn extended(&self, until: i64, now: i64) {
        self.horizon.store(until, Ordering::Release);
        let was_lost = self.lost.swap(false, Ordering::AcqRel);
        self.taken_over.store(false, Ordering::Release);
        let since = self.failing_since.swap(i64::MIN, Ordering::AcqRel);
        *lock(&self.last_error) = None;
        let reported = std::mem::take(&mut *crate::lock::lock(&self.reported));
        if was_lost {
            tracing::info!(
                worker_id = self.worker(),
                database = %self.describe(),
                until = %crate::clock::rfc3339(until),
                failures = reported.streak,
                failed_for_s = now.saturating_sub(since).max(0),
                had_expired = reported.expired,
                "lease regained: extended again after {} failed attempt{}",
                reported.streak,
                if reported.streak == 1 { "" } else { "s" },
            );
        }
    }

    /// An extension failed with `e`: counted, kept for [`last_error`](Self::last_error), and
    /// logged when the run of failures begins, when the error changes, or every
    /// [`REPEAT_WARNING_SECS`]; a lease taken over by another node once, as an error.
    fn failed(&self, e: Error, now: i64) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        let _ =
            self.failing_since
                .compare_exchange(i64::MIN, now, Ordering::AcqRel, Ordering::Acquire);
        // A lease answers LeaseExpired when another node holds the worker id now (see
        // `Lease::extend`); anything else is the database not answering or refusing.
        let taken_over = matches!(e, Error::LeaseExpired { .. });
        let text = e.to_string();
        *crate::lock::lock(&self.last_error) = Some(e);
        self.lost.store(true, Ordering::Release);
        let was_taken_over = self.taken_over.swap(taken_over, Ordering::AcqRel);
        let mut reported = crate::lock::lock(&self.reported);
        reported.streak += 1;
        let until = self.horizon();
        if taken_over {
            if !was_taken_over && self.lost_write(&text, until) {
                // Said by `lost_write`.
            } else if !was_taken_over {
                tracing::error!(
                    worker_id = self.worker(),
                    database = %self.describe(),
                    until = %crate::clock::rfc3339(until),
                    error = %text,
                    "lease taken over by another node: worker id {} is not this node's any more; \
                     no further ID of it is issued (its lease ran until {})",
                    self.worker(),
                    crate::clock::rfc3339(until),
                );
            }
            // Lost for good: no extension can bring it back. The lease is let go of (with what
            // it held, such as the owner file's lock) and a new worker id asked for.
            let reason = match self.last_error() {
                Some(Error::LeaseExpired { reason, .. }) => reason,
                _ => text,
            };
            *lock(&self.gone) = Some(reason);
            drop(lock(&self.lease).take());
            drop(reported);
            self.try_renew();
            return;
        }
        let repeat = match &reported.warned {
            None => true,
            Some((at, shown)) => *shown != text || now.saturating_sub(*at) >= REPEAT_WARNING_SECS,
        };
        if repeat && now <= until {
            tracing::warn!(
                worker_id = self.worker(),
                database = %self.describe(),
                until = %crate::clock::rfc3339(until),
                holds_for_s = until.saturating_sub(now),
                failures = reported.streak,
                error = %text,
                "lease extension failed; the lease still holds for {} s",
                until.saturating_sub(now),
            );
            reported.warned = Some((now, text));
        }
    }

    /// Whether `error` (a lease lost for good) says the worker table lost this node's write
    /// (see `RowLease`): then counted and said, as an ERROR, for
    /// what it is: not a takeover, a database that forgot an acknowledged write.
    fn lost_write(&self, error: &str, until: i64) -> bool {
        if !error.contains(LOST_WRITE) {
            return false;
        }
        self.lost_writes.fetch_add(1, Ordering::Relaxed);
        tracing::error!(
            worker_id = self.worker(),
            database = %self.describe(),
            until = %crate::clock::rfc3339(until),
            error = %error,
            "lost write: the worker table forgot what this node wrote to worker id {}'s row (a \
             failover to a standby that lacked it?); another node may hold worker id {} now: \
             this node stops issuing under it at once and takes a new worker id",
            self.worker(),
            self.worker(),
        );
        true
    }

    /// Times the worker table was found to have lost this node's write.
    pub(crate) fn lost_writes(&self) -> u64 {
        self.lost_writes.load(Ordering::Relaxed)
    }

    /// Says once per run of failures when the lease has run out: from then on, no ID.
    fn check_expiry(&self, now: i64) {
        let until = self.horizon();
        if !self.is_lost() || self.is_taken_over() || now <= until {
            return;
        }
        let mut reported = crate::lock::lock(&self.reported);
        if reported.expired {
            return;
        }
        reported.expired = true;
        tracing::error!(
            worker_id = self.worker(),
            database = %self.describe(),
            expired_at = %crate::clock::rfc3339(until),
            failures = reported.streak,
            error = %self.last_error().map(|e| e.to_string()).unwrap_or_default(),
            "lease lost: it expired while the worker table could not be updated; takes fail \
             until an extension lands",
        );
    }
}

/// A running lease keeper: looks every `renew` whether the lease is due ([`extension_target`]),
/// extends it then (and on demand), releases it at
/// [`release`](Keeper::release) or on drop.
pub(crate) struct Keeper {
    pub(crate) shared: Arc<KeeperShared>,
    handle: Mutex<Option<JoinHandle<()>>>,
    /// The lease was given back (or its release tried): never twice.
    released: AtomicBool,
}

impl fmt::Debug for Keeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Keeper { .. }")
    }
}

impl Keeper {
    /// Starts keeping `lease` of `worker_id` extended, from `first_second`, the first second the
    /// generator may use (its floor), on. With a lead cap (`max_lead` seconds), extensions never
    /// reach further than `max_lead + window` past the clock, whatever the load. Its log lines
    /// are emitted in the span current now.
    pub(crate) fn start(
        lease: Box<dyn Lease>,
        worker_id: u64,
        clock: Arc<dyn Clock>,
        max_lead: Option<u64>,
        first_second: i64,
    ) -> Result<Keeper, Error> {
        let horizon = lease.until();
        let window = lease.window();
        // Look three times per window (at least every second) whether the lease is due
        // (`extension_target`): a look costs nothing, a write happens once per third of the
        // window, so one lost update is harmless.
        let renew = Duration::from_millis((window.max(1) as u64 * 1000 / 3).clamp(100, 1000))
            .min(lease.look_every().unwrap_or(Duration::MAX))
            .max(Duration::from_millis(50));
        let shared = Arc::new(KeeperShared {
            lease: Mutex::new(Some(lease)),
            clock,
            worker_id: AtomicU64::new(worker_id),
            horizon: AtomicI64::new(horizon),
            used: AtomicI64::new(first_second),
            final_second: AtomicI64::new(i64::MIN),
            lost: AtomicBool::new(false),
            taken_over: AtomicBool::new(false),
            gone: Mutex::new(None),
            renewer: Mutex::new(None),
            renewed: AtomicBool::new(false),
            renew_refused: Mutex::new(None),
            failures: AtomicU64::new(0),
            lost_writes: AtomicU64::new(0),
            failing_since: AtomicI64::new(i64::MIN),
            last_error: Mutex::new(None),
            reported: Mutex::new(Reported::default()),
            hits: AtomicU32::new(0),
            shutdown: AtomicBool::new(false),
            window: AtomicI64::new(window.max(1)),
            max_lead,
            renew,
            thread: Mutex::new(None),
            db_clock: std::sync::OnceLock::new(),
            recheck: AtomicBool::new(false),
            at_risk: AtomicBool::new(false),
            risk: Mutex::new(None),
            span: tracing::Span::current(),
        });
        let s = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("ringflake-lease".into())
            .spawn(move || {
                let _span = s.span.clone().entered();
                while !s.shutdown.load(Ordering::Acquire) {
                    s.extend_once();
                    s.judge_risk();
                    s.probe_clock();
                    std::thread::park_timeout(s.renew);
                }
            })
            .map_err(|e| Error::thread_spawn("ringflake-lease", e))?;
        *crate::lock::lock(&shared.thread) = Some(handle.thread().clone());
        Ok(Keeper {
            shared,
            handle: Mutex::new(Some(handle)),
            released: AtomicBool::new(false),
        })
    }

    /// Judges this node's clock by the lease's database's from now on
    /// ([`Lease::database_clock`], every few seconds): a warning beyond `max_lag`, nothing served
    /// beyond the bound ([`db_clock::stop_above`](super::db_clock::stop_above) of `max_lead`).
    /// The first reading is taken at once, before the generator serves.
    pub(crate) fn watch_database_clock(&self, max_lag: Duration, max_lead: Option<u64>) {
        let _ = self
            .shared
            .db_clock
            .set(super::db_clock::ClockWatch::new(max_lag, max_lead));
        let _span = self.shared.span.enter();
        self.shared.probe_clock();
    }

    /// Stops the keeper thread and gives the lease back, recording the newest second the
    /// generator handed out ([`set_final_second`](KeeperShared::set_final_second), else the
    /// newest it used): the worker id becomes recyclable once the clock passes it. Logged either
    /// way; only the first call does anything.
    ///
    /// # Errors
    ///
    /// The lease's own error when the release did not reach its table: the lease then simply
    /// expires at its horizon.
    pub(crate) fn release(&self) -> Result<(), Error> {
        if self.released.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let s = &self.shared;
        s.shutdown.store(true, Ordering::SeqCst);
        let handle = crate::lock::lock(&self.handle).take();
        if let Some(h) = handle {
            h.thread().unpark();
            let _ = h.join();
        }
        let fin = s.final_second.load(Ordering::Relaxed);
        let used = if fin == i64::MIN {
            s.used.load(Ordering::Relaxed)
        } else {
            fin
        };
        let last = if used == i64::MIN {
            s.clock.now_seconds()
        } else {
            used
        };
        // Never below what may have been issued; never above the horizon already recorded.
        let last = last.min(s.horizon());
        let _span = s.span.enter();
        let worker_id = s.worker();
        let Some(lease) = lock(&s.lease).take() else {
            // Lost for good and not replaced: the row is another node's, not ours to release.
            let error = s.expired();
            tracing::warn!(
                worker_id,
                error = %error,
                "lease not released: worker id {worker_id} is another node's now",
            );
            return Err(error);
        };
        let result = lease.release(last);
        match &result {
            Ok(()) => tracing::info!(
                worker_id,
                database = %lease.describe(),
                last_second = %crate::clock::rfc3339(last),
                "lease released: worker id {} may be recycled once the clock passes {}",
                worker_id,
                crate::clock::rfc3339(last),
            ),
            Err(e) => tracing::warn!(
                worker_id,
                database = %lease.describe(),
                until = %crate::clock::rfc3339(s.horizon()),
                error = %e,
                "lease release failed: worker id {} stays reserved until its lease expires at {}",
                worker_id,
                crate::clock::rfc3339(s.horizon()),
            ),
        }
        result
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        // Logged by `release`; nobody is left to tell.
        let _ = self.release();
    }
}

impl std::ops::Deref for Keeper {
    type Target = KeeperShared;

    fn deref(&self) -> &KeeperShared {
        &self.shared
    }
}

#[cfg(test)]
mod tests;
