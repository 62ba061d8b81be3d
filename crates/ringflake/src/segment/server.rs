//! `leaf_alloc` on a server database (MariaDB/MySQL, PostgreSQL): the worker tables' client
//! (`worker::server`: the URL, TLS, one kept connection, timeouts, messages without passwords)
//! keeping Leaf's table instead of `WORKER_NODE`, and the worker claims' replication check
//! (`worker::durable`). What the two databases share; their statements are in `mysql` and
//! `postgres`.

use super::table::{AllocSetup, PROBE};
use crate::Error;
use crate::worker::rows::{TableSetup, WorkerTable};
use crate::worker::server::{Driver, Server, TableDef};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a failover that forgot a claim would do, for the replication check's refusal.
const RISK: &str = "hand the same range to another node";

/// `leaf_alloc` for the server client of database `D`, whose schema file is `schema_file`
/// (`schema`, its text): probed for Leaf's columns on every connection, created when missing.
pub(crate) const fn leaf_alloc(schema_file: &'static str, schema: &'static str) -> TableDef {
    TableDef {
        name: "leaf_alloc",
        probe: PROBE,
        schema_file,
        schema,
        missing_column: "table leaf_alloc is not Leaf's: expected the columns biz_tag, max_id, \
                         step, description and update_time",
        create_hint: "let ringflake create it (SegmentTable creates it when missing, with the \
                      CREATE privilege)",
    }
}

/// A server database's `leaf_alloc`: its client, and whether the risk of asynchronous
/// replication is accepted.
pub(crate) struct OnServer<D: Driver> {
    pub(crate) server: Server<D>,
    accept_async: AtomicBool,
}

impl<D: Driver> OnServer<D> {
    /// `server`, keeping `table` and creating it when missing.
    pub(crate) fn new(server: Server<D>, table: TableDef) -> OnServer<D> {
        let server = server.for_table(table);
        TableSetup::set_create_table(&server, true);
        OnServer {
            server,
            accept_async: AtomicBool::new(false),
        }
    }
}

impl<D: Driver> AllocSetup for OnServer<D>
where
    Server<D>: WorkerTable,
{
    fn describe(&self) -> String {
        TableSetup::describe(&self.server)
    }

    fn set_timeout(&self, timeout: Duration) {
        TableSetup::set_timeout(&self.server, timeout);
    }

    /// The last write this thread made on the server, on every standby, unless the risk is
    /// accepted.
    fn confirm(&self, what: &str, deadline: Instant) -> Result<(), Error> {
        match self.server.take_commit() {
            Some(commit) if !self.accept_async.load(Ordering::Relaxed) => {
                crate::worker::durable::confirm_that(&self.server, &commit, what, RISK, deadline)
            }
            _ => Ok(()),
        }
    }

    fn accept_async_replication(&self, on: bool) {
        self.accept_async.store(on, Ordering::Relaxed);
    }

    fn set_ca_file(&self, path: &std::path::Path) {
        TableSetup::set_ca_file(&self.server, path);
    }
}
