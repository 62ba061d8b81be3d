//! A worker's lease kept in its row's `LEASE_UNTIL`: extended by compare-and-set, and recovered
//! when an extension committed but its reply was lost.

use super::lease::Lease;
use super::node::NodeInfo;
use super::owner::Owned;
use super::rows::WorkerTable;
use crate::Error;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

/// A lease held in a row's `LEASE_UNTIL`, moved by compare-and-set so a node that lost its row
/// to a recycler finds out instead of overwriting.
#[derive(Debug)]
pub(super) struct RowLease {
    table: Arc<dyn WorkerTable>,
    id: u64,
    until: AtomicI64,
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
    ) -> RowLease {
        RowLease {
            table,
            id,
            until: AtomicI64::new(until),
            window,
            // TYPE 2 rows name the boot alone: PORT is `<millis>-<random>`. A container's
            // JPAAS host and port repeat across boots, so they prove nothing.
            boot: (node.node_type == 2).then(|| (node.host_name.clone(), node.port.clone())),
            unconfirmed: Mutex::new(Vec::new()),
            _owned: Mutex::new(owned),
        }
    }

    fn confirm(&self, until: i64) {
        self.until.store(until, Ordering::SeqCst);
        self.unconfirmed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    fn remember(&self, until: i64) {
        let mut pending = self.unconfirmed.lock().unwrap_or_else(|e| e.into_inner());
        if pending.len() == MAX_UNCONFIRMED {
            pending.remove(0);
        }
        pending.push(until);
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
        let pending = self
            .unconfirmed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
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
        let expected = self.until();
        match self.table.set_lease(self.id, expected, until) {
            Ok(true) => {
                self.confirm(until);
                Ok(())
            }
            Ok(false) => match self.landed()? {
                // An earlier extension landed: continue from it (once: `landed` is now empty).
                Some(landed) => {
                    self.confirm(landed);
                    if landed >= until {
                        Ok(())
                    } else {
                        self.extend(until)
                    }
                }
                None => Err(self.taken_over(expected)),
            },
            Err(e) => {
                self.remember(until);
                Err(e)
            }
        }
    }

    fn window(&self) -> i64 {
        self.window
    }

    fn database_clock(&self) -> Result<Option<super::db_clock::DatabaseTime>, Error> {
        self.table.clock()
    }

    fn describe(&self) -> String {
        self.table.describe()
    }

    fn release(&self, last_second: i64) -> Result<(), Error> {
        let expected = self.until();
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
