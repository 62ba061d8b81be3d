//! Claims the database cannot forget: after a write that gives this node a worker id (a new row,
//! a recycled row, a row taken back) or moves its lease, and before any ID is served under it,
//! every standby the primary reports must hold the write.
//!
//! An asynchronous standby acknowledges nothing: a primary that fails over to one that had not
//! received a write forgets it, and another node is then given the same worker id (issue 27: a
//! stalled standby, a failover, 1.39 million duplicate IDs). A synchronous standby holds every
//! acknowledged commit, so waiting for it costs nothing; an asynchronous one that keeps up costs
//! the replication delay (milliseconds); one that is stalled or far behind makes the wait fail,
//! and the claim is refused rather than served. The check is by position, not by
//! configuration: it holds whatever `synchronous_standby_names` says, and it sees a standby
//! that is listed but behind (see each database's `standbys_lacking`).
//!
//! [`DatabaseAssigner::accept_async_replication`](super::table::DatabaseAssigner::accept_async_replication)
//! turns the wait off (the risk accepted).

use super::rows::{Commit, WorkerTable};
use crate::Error;
use std::time::{Duration, Instant};

/// The flag that accepts the risk, named in every refusal.
pub(crate) const ACCEPT_FLAG: &str = "--accept-async-replication (RINGFLAKE_ACCEPT_ASYNC_REPLICATION=true, DatabaseAssigner::accept_async_replication)";

/// The first pause between two checks; doubled up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(5);
const MAX_PAUSE: Duration = Duration::from_millis(200);
/// The least time one check is given, however close the deadline.
const MIN_CHECK: Duration = Duration::from_millis(500);

/// Waits until every standby holds `commit` (`what` names the write: `worker id 3's new row`),
/// checking until `deadline`.
///
/// # Errors
///
/// A non-transient [`Error::Database`] naming the standbys still lacking the write at the
/// deadline (or the error that kept the check from answering), the setting that makes them
/// hold it and the flag that accepts the risk.
pub(crate) fn confirm(
    table: &dyn WorkerTable,
    commit: &Commit,
    what: &str,
    deadline: Instant,
) -> Result<(), Error> {
    confirm_that(
        table,
        commit,
        what,
        "give the same worker id to another node",
        deadline,
    )
}

/// [`confirm`], naming what a failover that forgot the write would do (`risk`: `hand the same
/// range to another node`, for a segment claim).
///
/// # Errors
///
/// As [`confirm`].
pub(crate) fn confirm_that(
    table: &dyn WorkerTable,
    commit: &Commit,
    what: &str,
    risk: &str,
    deadline: Instant,
) -> Result<(), Error> {
    let started = Instant::now();
    let mut pause = FIRST_PAUSE;
    loop {
        let within = deadline
            .saturating_duration_since(Instant::now())
            .max(MIN_CHECK);
        let why = match table.standbys_lacking(commit, within) {
            Ok(lacking) if lacking.is_empty() => return Ok(()),
            Ok(lacking) => lacking.join("; "),
            // The check can never answer (the write's connection is closed).
            Err(
                e @ Error::Database {
                    transient: false, ..
                },
            ) => {
                let why = format!("the standbys could not be checked: {e}");
                return Err(refusal(table, what, risk, &why, started.elapsed()));
            }
            Err(e) => format!("the standbys could not be checked: {e}"),
        };
        let now = Instant::now();
        if now >= deadline {
            return Err(refusal(table, what, risk, &why, now - started));
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// The error for a write no check confirmed on every standby within `waited`.
fn refusal(table: &dyn WorkerTable, what: &str, risk: &str, why: &str, waited: Duration) -> Error {
    Error::Database {
        database: table.describe(),
        message: format!(
            "{what} is not on every standby after {:.1} s, so a failover could forget it and \
             {risk}: refused. Lacking it: {why}. Make the standbys synchronous ({}), fix the \
             replication, or accept the risk with {ACCEPT_FLAG}",
            waited.as_secs_f64(),
            table.synchronous_setting(),
        ),
        transient: false,
        source: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::node::NodeInfo;
    use crate::worker::rows::{TableSetup, WorkerRow};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A table whose one standby catches up after `lag` checks (never, with `u32::MAX`).
    struct Lagging {
        lag: u32,
        checks: AtomicU32,
    }

    impl TableSetup for Lagging {
        fn describe(&self) -> String {
            "lagging".into()
        }
        fn set_timeout(&self, _: Duration) {}
    }

    impl WorkerTable for Lagging {
        fn insert(&self, _: &NodeInfo, _: i64) -> Result<u64, Error> {
            unreachable!()
        }
        fn delete(&self, _: u64) -> Result<(), Error> {
            unreachable!()
        }
        fn max_lease_for_host(&self, _: &str) -> Result<Option<i64>, Error> {
            unreachable!()
        }
        fn recyclable(&self, _: u64, _: i64, _: u32) -> Result<Vec<(u64, i64)>, Error> {
            unreachable!()
        }
        fn claim(&self, _: u64, _: i64, _: &NodeInfo, _: i64) -> Result<bool, Error> {
            unreachable!()
        }
        fn set_lease(&self, _: u64, _: i64, _: i64) -> Result<bool, Error> {
            unreachable!()
        }
        fn list(&self) -> Result<Vec<WorkerRow>, Error> {
            unreachable!()
        }
        fn standbys_lacking(&self, _: &Commit, _: Duration) -> Result<Vec<String>, Error> {
            let n = self.checks.fetch_add(1, Ordering::SeqCst);
            Ok(if n < self.lag {
                vec!["standby s1 (flushed 0/3000000)".into()]
            } else {
                Vec::new()
            })
        }
    }

    #[test]
    fn a_standby_that_catches_up_confirms_one_that_does_not_refuses() {
        let commit = Commit(Box::new(()));
        let soon = Instant::now() + Duration::from_secs(5);
        let t = Lagging {
            lag: 3,
            checks: AtomicU32::new(0),
        };
        confirm(&t, &commit, "worker id 1's new row", soon).unwrap();
        assert_eq!(t.checks.load(Ordering::SeqCst), 4);
        let t = Lagging {
            lag: u32::MAX,
            checks: AtomicU32::new(0),
        };
        let start = Instant::now();
        let e = confirm(
            &t,
            &commit,
            "worker id 1's new row",
            start + Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(start.elapsed() >= Duration::from_millis(300));
        let text = e.to_string();
        assert!(
            matches!(
                e,
                Error::Database {
                    transient: false,
                    ..
                }
            ),
            "{e:?}"
        );
        for part in [
            "worker id 1's new row is not on every standby",
            "standby s1 (flushed 0/3000000)",
            "--accept-async-replication",
            "RINGFLAKE_ACCEPT_ASYNC_REPLICATION",
        ] {
            assert!(text.contains(part), "{part:?} not in {text}");
        }
    }
}
