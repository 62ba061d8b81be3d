//! A worker's lease kept in its row's `LEASE_UNTIL`: extended by compare-and-set, and recovered
//! when an extension committed but its reply was lost.

use super::lease::{LOST_WRITE, Lease};
use super::node::NodeInfo;
use super::owner::Owned;
use super::rows::{Commit, WorkerRow, WorkerTable};
use crate::{Clock, Error, SystemClock};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A lease held in a row's `LEASE_UNTIL`, moved by compare-and-set so a node that lost its row
/// to a recycler finds out instead of overwriting.
#[derive(Debug)]
pub(super) struct RowLease {
    table: Arc<dyn WorkerTable>,
    id: u64,
    /// The lease every standby holds: the one in force.
    until: AtomicI64,
    /// The lease last written to the row (the compare-and-set's expected value): ahead of
    /// `until` while the standbys do not hold it yet.
    written: AtomicI64,
    /// Whether a written lease is used only once every standby holds it.
    confirm_writes: bool,
    /// The last write not yet confirmed on every standby.
    pending: Mutex<Option<Commit>>,
    window: i64,
    /// This boot's `HOST_NAME` and `PORT` where they name this boot alone (TYPE 2 rows).
    boot: Option<(String, String)>,
    /// Leases a failed call may have written after all (the reply was lost, not the update),
    /// since the last confirmed one; at most [`MAX_UNCONFIRMED`], newest last.
    unconfirmed: Mutex<Vec<i64>>,
    /// The owner file's lock, held as long as the lease and never read: dropping it releases the
    /// lock (see [`DatabaseAssigner::keep_worker_id`](super::table::DatabaseAssigner::keep_worker_id)).
    _owned: Mutex<Option<Owned>>,
}

/// The longest one lease call may take with the default window (see `RowLease::check_within`).
pub(crate) const LEASE_CHECK: Duration = Duration::from_secs(3);

/// How many unconfirmed lease values a [`RowLease`] remembers (one attempt a second at most).
const MAX_UNCONFIRMED: usize = 1024;

impl RowLease {
    /// The lease of row `id`, written as `until` for `node`.
    pub(super) fn new(
        table: Arc<dyn WorkerTable>,
        id: u64,
        until: i64,
        window: i64,
        node: &NodeInfo,
        owned: Option<Owned>,
        confirm_writes: bool,
    ) -> RowLease {
        RowLease {
            table,
            id,
            until: AtomicI64::new(until),
            written: AtomicI64::new(until),
            confirm_writes,
            pending: Mutex::new(None),
            window,
            // TYPE 2 rows name the boot alone: PORT is `<millis>-<random>`. A container's
            // JPAAS host and port repeat across boots, so they prove nothing.
            boot: (node.node_type == 2).then(|| (node.host_name.clone(), node.port.clone())),
            unconfirmed: Mutex::new(Vec::new()),
            _owned: Mutex::new(owned),
        }
    }

    /// The row holds `until` now (the standbys may not yet).
    fn wrote(&self, until: i64) {
        self.written.store(until, Ordering::SeqCst);
        crate::lock::lock(&self.unconfirmed).clear();
    }

    fn remember(&self, until: i64) {
        let mut pending = crate::lock::lock(&self.unconfirmed);
        if pending.len() == MAX_UNCONFIRMED {
            pending.remove(0);
        }
        pending.push(until);
    }

    /// How long one lease call (the compare-and-set, connecting included, and the wait for the
    /// standbys) may take: [`LEASE_CHECK`], or a tenth of a shorter window (at least 1 s),
    /// whatever `--db-timeout` says. A single-row update by primary key answers in milliseconds;
    /// one that has not answered in 3 s is most likely on a connection to a host that vanished
    /// (a failover), and waiting for the table's timeout (30 s by default) would leave this
    /// node serving for that long without knowing whether its row is still its own. A timeout
    /// that was only a slow database costs one reconnection: the keeper tries again a second
    /// later, and the lease in force holds for most of the window meanwhile.
    fn check_within(&self) -> Duration {
        Duration::from_millis((self.window.max(1) as u64).saturating_mul(100))
            .clamp(Duration::from_secs(1), LEASE_CHECK)
    }

    /// Makes the written lease the one in force once every standby holds it.
    fn confirm_written(&self) -> Result<(), Error> {
        let written = self.written.load(Ordering::SeqCst);
        let fresh = self.table.take_commit();
        let mut pending = crate::lock::lock(&self.pending);
        if fresh.is_some() {
            // A newer commit on the same server covers an older one.
            *pending = fresh;
        }
        if self.confirm_writes
            && let Some(commit) = pending.as_ref()
        {
            let what = format!(
                "worker id {}'s lease extension to {}",
                self.id,
                crate::clock::rfc3339(written)
            );
            super::durable::confirm(
                &*self.table,
                commit,
                &what,
                Instant::now() + self.check_within(),
            )?;
        }
        *pending = None;
        self.until.store(written, Ordering::SeqCst);
        Ok(())
    }

    /// After a compare-and-set that found the row not as this node last wrote it: a lost write
    /// if the row is gone, holds an older lease than this node wrote, or names another node
    /// while this node's lease has not expired with a lease no recycler that saw this node's
    /// would have written (a recycler writes at least `written + 1 + window` with this window:
    /// the row was claimed on a database that lacked this node's lease, e.g. a new row on a
    /// promoted standby); a takeover otherwise.
    fn lost_or_taken(&self, written: i64) -> Error {
        let row = match self.table.list() {
            Ok(rows) => rows.into_iter().find(|r| r.id == self.id),
            Err(e) => return e,
        };
        let until = self.until();
        let now = SystemClock.now_seconds();
        let ours = |r: &WorkerRow| {
            self.boot
                .as_ref()
                .is_some_and(|(h, p)| &r.host_name == h && &r.port == p)
        };
        let detail = match &row {
            None => "its row is gone".to_string(),
            Some(r) if r.lease_until < written => format!(
                "its row holds the lease {} ({}), older than the {} this node wrote",
                r.lease_until,
                crate::clock::rfc3339(r.lease_until),
                crate::clock::rfc3339(written)
            ),
            Some(r)
                if !ours(r)
                    && until > now
                    && r.lease_until < written.saturating_add(1).saturating_add(self.window) =>
            {
                format!(
                    "its row names another node ({} port {}) with a lease no node that saw \
                     this node's would write, although this node's lease runs until {}, {} s \
                     from now: the row was claimed where this node's lease was missing",
                    r.host_name,
                    r.port,
                    crate::clock::rfc3339(until),
                    until - now
                )
            }
            Some(_) => return self.taken_over(until),
        };
        Error::LeaseExpired {
            until,
            reason: format!(
                "{LOST_WRITE} worker id {} in {}: {detail}: the database lost a write it had \
                 acknowledged (a failover to a standby that lacked it?); this node stops using \
                 worker id {}",
                self.id,
                self.table.describe(),
                self.id
            ),
        }
    }

    /// The error for a row another node has taken over, while this node's lease was `until`.
    fn taken_over(&self, until: i64) -> Error {
        Error::LeaseExpired {
            until,
            reason: format!(
                "worker id {} in {} was taken over by another node",
                self.id,
                self.table.describe()
            ),
        }
    }

    /// After a failed compare-and-set: the row's lease, if it is one this boot tried to write
    /// in a call that failed, and the row still names this boot. Then the earlier update did
    /// land and only its reply was lost. A recycler always writes its own `HOST_NAME` and
    /// `PORT`, so a row taken over never matches.
    fn landed(&self) -> Result<Option<i64>, Error> {
        let Some((host, port)) = &self.boot else {
            return Ok(None);
        };
        let pending = crate::lock::lock(&self.unconfirmed).clone();
        if pending.is_empty() {
            return Ok(None);
        }
        let row = self.table.list()?.into_iter().find(|r| r.id == self.id);
        Ok(row
            .filter(|r| &r.host_name == host && &r.port == port && pending.contains(&r.lease_until))
            .map(|r| r.lease_until))
    }
}

impl Lease for RowLease {
    fn until(&self) -> i64 {
        self.until.load(Ordering::SeqCst)
    }

    fn extend(&self, until: i64) -> Result<(), Error> {
        let expected = self.written.load(Ordering::SeqCst);
        if until <= expected {
            // Written already (its standbys did not hold it yet).
            return self.confirm_written();
        }
        let within = self.check_within();
        let mut result = self
            .table
            .set_lease_within(self.id, expected, until, within);
        if let Err(Error::Database {
            transient: true, ..
        }) = &result
        {
            // A broken or silent connection, dropped: reconnect and check the row at once, not a
            // tick later (after a failover the new primary's row may say this node's write was
            // lost while another node serves under the worker id).
            self.remember(until);
            result = self
                .table
                .set_lease_within(self.id, expected, until, within);
        }
        match result {
            Ok(true) => {
                self.wrote(until);
                self.confirm_written()
            }
            Ok(false) => match self.landed()? {
                // An earlier extension landed: continue from it (once: `landed` is now empty),
                // rewritten so that a commit of this connection's server covers it.
                Some(landed) => {
                    self.wrote(landed);
                    self.extend(until.max(landed + 1))
                }
                None => Err(self.lost_or_taken(expected)),
            },
            Err(e) => {
                self.remember(until);
                Err(e)
            }
        }
    }

    /// The row again, when the connection broke: a compare-and-set of the lease onto itself,
    /// which finds a lost write or a takeover as an extension would.
    fn check(&self) -> Result<(), Error> {
        if !self.table.connection_broke() {
            return Ok(());
        }
        let written = self.written.load(Ordering::SeqCst);
        let within = self.check_within();
        match self
            .table
            .set_lease_within(self.id, written, written, within)?
        {
            true => {
                // Nothing to confirm: no lease this node serves under changed.
                let _ = self.table.take_commit();
                Ok(())
            }
            false => match self.landed()? {
                Some(landed) => {
                    self.wrote(landed);
                    Ok(())
                }
                None => Err(self.lost_or_taken(written)),
            },
        }
    }

    fn window(&self) -> i64 {
        self.window
    }

    fn database_clock(&self) -> Result<Option<super::db_clock::DatabaseTime>, Error> {
        // Bounded as a lease call is: a hung connection must not hold the keeper for the
        // table's whole timeout (the read that finds it is what makes the lease be tried).
        self.table.clock(self.check_within())
    }

    fn describe(&self) -> String {
        self.table.describe()
    }

    fn release(&self, last_second: i64) -> Result<(), Error> {
        let expected = self.written.load(Ordering::SeqCst);
        if self
            .table
            .set_lease(self.id, expected, last_second.max(1))?
        {
            return Ok(());
        }
        match self.landed()? {
            Some(landed) => {
                self.table.set_lease(self.id, landed, last_second.max(1))?;
                Ok(())
            }
            // Another node's row now: left as it is, and not reported as released.
            None => Err(self.taken_over(expected)),
        }
    }
}
