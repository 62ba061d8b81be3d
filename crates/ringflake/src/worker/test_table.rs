//! A worker table for tests: a real SQLite table behind [`TestTable`], which injects lost
//! replies and counts statements (`row_lease_tests`, `full_table_tests`).

use super::node::NodeInfo;
use super::rows::{TableSetup, WorkerRow, WorkerTable};
use super::table::DatabaseAssigner;
use crate::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// A real worker table with faults and a count: its `set_lease` commits, then fails as if the
/// reply had been lost on the way back, while `lose` is set (a lease retries a failed call at
/// once: both replies are lost); `calls` counts the statements waiting boots run (looks for an
/// expired row, and claims of one).
pub(super) struct TestTable {
    inner: Arc<dyn WorkerTable>,
    pub(super) lose: AtomicBool,
    /// What `connection_broke` answers next (then false).
    pub(super) broke: AtomicBool,
    pub(super) calls: AtomicU64,
}

impl TestTable {
    /// `assigner`'s table, with no fault and a count of 0.
    pub(super) fn over(assigner: &DatabaseAssigner) -> TestTable {
        TestTable {
            inner: Arc::clone(&assigner.table),
            lose: AtomicBool::new(false),
            broke: AtomicBool::new(false),
            calls: AtomicU64::new(0),
        }
    }
}

impl TableSetup for TestTable {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn set_timeout(&self, timeout: Duration) {
        self.inner.set_timeout(timeout);
    }
}

impl WorkerTable for TestTable {
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
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.recyclable(max, before, limit)
    }
    fn claim(&self, id: u64, expected: i64, node: &NodeInfo, until: i64) -> Result<bool, Error> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.claim(id, expected, node, until)
    }
    fn set_lease(&self, id: u64, expected: i64, until: i64) -> Result<bool, Error> {
        let done = self.inner.set_lease(id, expected, until)?;
        if self.lose.load(Ordering::SeqCst) {
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
    fn connection_broke(&self) -> bool {
        self.broke.swap(false, Ordering::SeqCst)
    }
}
