//! A worker's lease kept in its row's `LEASE_UNTIL`: extended by compare-and-set, and recovered
//! when an extension committed but its reply was lost.

use super::lease::Lease;
use super::node::NodeInfo;
use super::table::WorkerTable;
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

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;
    use crate::Layout;
    use crate::worker::table::{DatabaseAssigner, TableSetup, WorkerRow};
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    /// A real SQLite worker table whose next `set_lease` commits, then fails as if the reply had
    /// been lost on the way back.
    struct LostReply {
        inner: Arc<dyn WorkerTable>,
        lose: AtomicBool,
    }

    impl TableSetup for LostReply {
        fn describe(&self) -> String {
            self.inner.describe()
        }
        fn set_timeout(&self, timeout: Duration) {
            self.inner.set_timeout(timeout);
        }
    }

    impl WorkerTable for LostReply {
        fn insert(&self, node: &NodeInfo, lease_until: i64) -> Result<u64, Error> {
            self.inner.insert(node, lease_until)
        }
        fn delete(&self, id: u64) -> Result<(), Error> {
            self.inner.delete(id)
        }
        fn max_lease_for_host(&self, host: &str) -> Result<Option<i64>, Error> {
            self.inner.max_lease_for_host(host)
        }
        fn recyclable(&self, max: u64, before: i64, limit: u32) -> Result<Vec<(u64, i64)>, Error> {
            self.inner.recyclable(max, before, limit)
        }
        fn claim(
            &self,
            id: u64,
            expected: i64,
            node: &NodeInfo,
            until: i64,
        ) -> Result<bool, Error> {
            self.inner.claim(id, expected, node, until)
        }
        fn set_lease(&self, id: u64, expected: i64, until: i64) -> Result<bool, Error> {
            let done = self.inner.set_lease(id, expected, until)?;
            if self.lose.swap(false, Ordering::SeqCst) {
                return Err(Error::Database {
                    database: self.describe(),
                    message: "connection reset after the commit (injected)".into(),
                    transient: true,
                    source: None,
                });
            }
            Ok(done)
        }
        fn list(&self) -> Result<Vec<WorkerRow>, Error> {
            self.inner.list()
        }
    }

    fn node(node_type: i32, port: &str) -> NodeInfo {
        NodeInfo {
            host_name: "10.1.2.3".into(),
            port: port.into(),
            node_type,
            launch_date: "2026-11-23".into(),
        }
    }

    /// A leased row on a real SQLite file behind [`LostReply`]: (file, table, lease).
    fn leased(node: &NodeInfo) -> (tempfile::TempDir, Arc<LostReply>, Box<dyn Lease>) {
        let dir = tempfile::tempdir().unwrap();
        let real = DatabaseAssigner::sqlite(dir.path().join("w.db")).unwrap();
        let table = Arc::new(LostReply {
            inner: Arc::clone(&real.table),
            lose: AtomicBool::new(false),
        });
        let assigner = DatabaseAssigner::with_table(table.clone()).recycle(true);
        let lease = assigner
            .assign_with(&Layout::default(), node)
            .unwrap()
            .lease
            .expect("a lease with recycling on");
        (dir, table, lease)
    }

    fn row_lease(table: &LostReply) -> (i64, String) {
        let rows = table.list().unwrap();
        assert_eq!(rows.len(), 1);
        (rows[0].lease_until, rows[0].port.clone())
    }

    #[test]
    fn an_extension_whose_reply_was_lost_is_recovered() {
        let (_dir, table, lease) = leased(&node(2, "1763900000000-4711"));
        let u0 = lease.until();
        table.lose.store(true, Ordering::SeqCst);
        assert!(matches!(
            lease.extend(u0 + 100),
            Err(Error::Database {
                transient: true,
                ..
            })
        ));
        // The update landed; the node does not know it yet.
        assert_eq!(row_lease(&table).0, u0 + 100);
        assert_eq!(lease.until(), u0);
        // The next extension finds its own earlier write and continues from it.
        lease.extend(u0 + 200).unwrap();
        assert_eq!(lease.until(), u0 + 200);
        assert_eq!(row_lease(&table).0, u0 + 200);
        // The same after a lost reply, then a release.
        table.lose.store(true, Ordering::SeqCst);
        assert!(lease.extend(u0 + 300).is_err());
        lease.release(u0 + 7).unwrap();
        assert_eq!(row_lease(&table).0, u0 + 7);
    }

    #[test]
    fn a_row_taken_over_is_never_adopted() {
        let ours = node(2, "1763900000000-4711");
        let (_dir, table, lease) = leased(&ours);
        let u0 = lease.until();
        table.lose.store(true, Ordering::SeqCst);
        assert!(lease.extend(u0 + 100).is_err());
        // A recycler takes the row over and, as bad luck has it, writes the very lease value
        // this node's lost update wrote.
        let id = table.list().unwrap()[0].id;
        let theirs = node(2, "1763900099999-1");
        assert!(table.claim(id, u0 + 100, &theirs, u0 + 100).unwrap());
        let err = lease.extend(u0 + 200).unwrap_err();
        assert!(matches!(err, Error::LeaseExpired { .. }), "{err}");
        assert!(err.to_string().contains("taken over"), "{err}");
        assert_eq!(row_lease(&table), (u0 + 100, theirs.port.clone()));
        assert_eq!(lease.until(), u0);
        // Nor released: the row is theirs, and the release says so instead of succeeding.
        let err = lease.release(u0 - 5).unwrap_err();
        assert!(err.to_string().contains("taken over"), "{err}");
        assert_eq!(row_lease(&table), (u0 + 100, theirs.port));
    }

    #[test]
    fn a_container_row_names_no_boot_and_is_not_adopted() {
        // JPAAS host and port repeat across boots of a container: a lost reply there still
        // ends in a lost lease (the generator stops at its horizon), never in an adoption.
        let (_dir, table, lease) = leased(&node(1, "8080"));
        let u0 = lease.until();
        table.lose.store(true, Ordering::SeqCst);
        assert!(lease.extend(u0 + 100).is_err());
        assert!(matches!(
            lease.extend(u0 + 200),
            Err(Error::LeaseExpired { .. })
        ));
        assert_eq!(row_lease(&table).0, u0 + 100);
    }
}
