//! One ZooKeeper session, kept alive by a private single-threaded Tokio runtime on a thread of
//! its own (the client pings the servers between calls, which a runtime driven only during calls,
//! as PostgreSQL's is, would not do), and every call bounded in time from the calling thread.
//!
//! The session's ephemeral znodes live as long as it does: closing it (dropping the last
//! [`Session`]) deletes them at once; a process killed keeps them until the servers expire the
//! session, one session timeout after they last heard from it.

use crate::Error;
use crate::worker::runtime::Driven;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use zookeeper_client as zk;

/// The process's origin for the monotonic instants kept in atomics.
fn base() -> Instant {
    static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

/// `at` as nanoseconds since [`base`].
fn nanos(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(base()).as_nanos()).unwrap_or(u64::MAX)
}

/// A ZooKeeper session and the runtime that drives it.
pub(crate) struct Session {
    /// `None` only while dropped.
    client: Option<zk::Client>,
    /// Its runtime (dropped last: the session ends with it).
    runtime: Driven,
    /// The ensemble, for messages.
    ensemble: String,
    /// When the newest call the servers answered was sent (nanoseconds since [`base`]); 0 never.
    answered_sent: AtomicU64,
    /// The session timeout the servers granted.
    timeout: Duration,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("ensemble", &self.ensemble)
            .field("session_id", &format_args!("{:#x}", self.id()))
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Whether a ZooKeeper error may pass by itself (a lost connection, a server not answering, a
/// throttled request), as opposed to an answer (no such znode, a version mismatch) or a session
/// that has ended for good.
pub(crate) fn transient(e: &zk::Error) -> bool {
    matches!(
        e,
        zk::Error::ConnectionLoss
            | zk::Error::Timeout
            | zk::Error::NoHosts
            | zk::Error::Throttled
            | zk::Error::SessionMoved
    )
}

/// Whether an error is the servers' answer about the data (so the session was heard), not a
/// failure to reach them or a session that has ended.
fn answered(e: &zk::Error) -> bool {
    matches!(
        e,
        zk::Error::NoNode
            | zk::Error::NodeExists
            | zk::Error::BadVersion
            | zk::Error::NotEmpty
            | zk::Error::NoAuth
            | zk::Error::NoChildrenForEphemerals
            | zk::Error::InvalidAcl
    )
}

impl Session {
    /// Connects to `ensemble` (`host:port,host:port`) with a session of `session_timeout`,
    /// within `within`.
    pub(crate) fn connect(
        ensemble: &str,
        session_timeout: Duration,
        within: Duration,
    ) -> Result<Session, Error> {
        let describe = format!("zookeeper {ensemble}");
        let runtime = Driven::start("ringflake-zookeeper", &describe, false)?;
        let cluster = ensemble.to_string();
        let started = Instant::now();
        let client = run(&runtime, &describe, "connecting", within, async move {
            zk::Client::connector()
                .with_session_timeout(session_timeout)
                .connect(&cluster)
                .await
        })?;
        let timeout = client.session_timeout();
        Ok(Session {
            client: Some(client),
            runtime,
            ensemble: ensemble.to_string(),
            answered_sent: AtomicU64::new(nanos(started)),
            timeout,
        })
    }

    /// The session timeout the servers granted.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The session's id.
    pub(crate) fn id(&self) -> i64 {
        self.client.as_ref().map_or(0, |c| c.session_id().0)
    }

    /// `zookeeper host:port,…`, for messages.
    pub(crate) fn describe(&self) -> String {
        format!("zookeeper {}", self.ensemble)
    }

    /// How long ago the newest call the servers answered was sent: the servers heard from this
    /// session at least that recently, so it cannot expire before `timeout` minus this.
    pub(crate) fn since_answered(&self) -> Duration {
        let sent = self.answered_sent.load(Ordering::Acquire);
        Duration::from_nanos(nanos(Instant::now()).saturating_sub(sent))
    }

    /// Runs `call` with this session's client, within `within`; an answer of the servers (even
    /// an error such as "no such znode") counts as heard from.
    pub(crate) fn call<T, F, Fut>(
        &self,
        what: &str,
        within: Duration,
        call: F,
    ) -> Result<Result<T, zk::Error>, Error>
    where
        T: Send + 'static,
        F: FnOnce(zk::Client) -> Fut,
        Fut: Future<Output = Result<T, zk::Error>> + Send + 'static,
    {
        let sent = Instant::now();
        let Some(client) = self.client.clone() else {
            return Ok(Err(zk::Error::ClientClosed));
        };
        let fut = call(client);
        let answer = self.runtime.run(&self.describe(), what, within, fut)?;
        match &answer {
            Ok(_) => self.heard(sent),
            Err(e) if answered(e) => self.heard(sent),
            Err(_) => {}
        }
        Ok(answer)
    }

    fn heard(&self, sent: Instant) {
        self.answered_sent.fetch_max(nanos(sent), Ordering::AcqRel);
    }

    /// Runs the multi-operation `ops` (all or nothing) within `within`: the results, or the
    /// index and error of the operation that failed.
    pub(crate) fn multi(
        &self,
        what: &str,
        within: Duration,
        ops: Vec<Op>,
    ) -> Result<Result<Vec<zk::MultiWriteResult>, (usize, zk::Error)>, Error> {
        let answer = self.call(what, within, move |c| async move {
            let mut w = c.new_multi_writer();
            let anyone = zk::Acls::anyone_all();
            for op in &ops {
                match op {
                    Op::Create(path, data, mode) => {
                        w.add_create(path, data, &mode.with_acls(anyone))?
                    }
                    Op::SetData(path, data, version) => w.add_set_data(path, data, *version)?,
                    Op::Delete(path, version) => w.add_delete(path, *version)?,
                }
            }
            // An operation refused is the servers' answer; a request that never got one is not.
            match w.commit().await {
                Ok(results) => Ok(Ok(results)),
                Err(zk::MultiWriteError::OperationFailed { index, source }) => {
                    Ok(Err((index, source)))
                }
                Err(zk::MultiWriteError::RequestFailed { source }) => Err(source),
            }
        })?;
        Ok(match answer {
            Err(e) => Err((usize::MAX, e)),
            Ok(result) => result,
        })
    }

    /// The data and version of each of `paths` (`None`: no such znode), read in batches of 500
    /// per request (one round trip each, a consistent view within a batch), each within `within`.
    pub(crate) fn read_many(
        &self,
        what: &str,
        within: Duration,
        paths: Vec<String>,
    ) -> Result<Vec<Option<Data>>, Error> {
        let mut out = Vec::with_capacity(paths.len());
        for batch in paths.chunks(500) {
            let batch = batch.to_vec();
            let results = self
                .call(what, within, move |c| async move {
                    let mut r = c.new_multi_reader();
                    for path in &batch {
                        r.add_get_data(path)?;
                    }
                    r.commit().await
                })?
                .map_err(|e| self.error(what, &e))?;
            for result in results {
                out.push(match result {
                    zk::MultiReadResult::Data { data, stat } => Some((data, stat.version)),
                    zk::MultiReadResult::Error {
                        err: zk::Error::NoNode,
                    } => None,
                    zk::MultiReadResult::Error { err } => return Err(self.error(what, &err)),
                    _ => None,
                });
            }
        }
        Ok(out)
    }

    /// The error of a call that failed with `e`, as ringflake says it.
    pub(crate) fn error(&self, what: &str, e: &zk::Error) -> Error {
        to_error(&self.describe(), what, e)
    }
}

/// A ZooKeeper error as a [`Error::Database`] naming the ensemble and the call.
pub(crate) fn to_error(describe: &str, what: &str, e: &zk::Error) -> Error {
    Error::Database {
        database: describe.to_string(),
        message: format!("{what}: {e}"),
        transient: transient(e),
        source: Some(crate::Cause::from_error(e)),
    }
}

/// [`Driven::run`] of a call whose own error is one too.
fn run<T: Send + 'static>(
    runtime: &Driven,
    describe: &str,
    what: &str,
    within: Duration,
    fut: impl Future<Output = Result<T, zk::Error>> + Send + 'static,
) -> Result<T, Error> {
    runtime
        .run(describe, what, within, fut)?
        .map_err(|e| to_error(describe, what, &e))
}

/// A znode's data and version.
pub(crate) type Data = (Vec<u8>, i32);

/// One operation of a [`Session::multi`].
#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// Creates a znode (path, data, mode).
    Create(String, Vec<u8>, zk::CreateMode),
    /// Sets a znode's data if its version is the one given.
    SetData(String, Vec<u8>, Option<i32>),
    /// Deletes a znode if its version is the one given.
    Delete(String, Option<i32>),
}

impl Drop for Session {
    fn drop(&mut self) {
        // Closed, not left to expire: its ephemeral znodes go at once. The client closes the
        // session when its last handle is dropped; its runtime must run until it has.
        let Some(client) = self.client.take() else {
            return;
        };
        let mut state = client.state_watcher();
        drop(client);
        let _ = self.runtime.run(
            &self.describe(),
            "closing the session",
            Duration::from_secs(1),
            async move {
                loop {
                    match state.changed().await {
                        zk::SessionState::Closed
                        | zk::SessionState::Expired
                        | zk::SessionState::AuthFailed => return,
                        _ => {}
                    }
                }
            },
        );
    }
}

/// A session shared by the assigner's claim and the lease it hands out.
pub(crate) type Shared = Arc<Session>;
