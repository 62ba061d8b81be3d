//! A private single-threaded Tokio runtime on a thread of its own, for the clients that need
//! one running between calls (ZooKeeper's pings, etcd's connections), and a call on it bounded
//! in time from the calling thread ([`Driven::run`]).

use crate::Error;
use std::future::Future;
use std::time::Duration;

/// The runtime, driven by its thread until this is dropped.
pub(crate) struct Driven {
    handle: tokio::runtime::Handle,
    /// Ends the runtime's thread when dropped.
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Driven {
    /// Starts the runtime on a thread named `thread`; with `io`, its I/O and time drivers on
    /// (a client that opens sockets through Tokio). `describe` names the store in errors.
    pub(crate) fn start(thread: &str, describe: &str, io: bool) -> Result<Driven, Error> {
        let mut builder = tokio::runtime::Builder::new_current_thread();
        if io {
            builder.enable_all();
        }
        let runtime = builder.build().map_err(|e| Error::Database {
            database: describe.to_string(),
            message: format!("cannot start the client's Tokio runtime: {e}"),
            transient: false,
            source: None,
        })?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(thread.into())
            .spawn(move || {
                // Runs the client's tasks until this is dropped.
                let _ = runtime.block_on(stopped);
                runtime.shutdown_background();
            })
            .map_err(|e| Error::thread_spawn(thread, e))?;
        Ok(Driven {
            handle,
            _stop: stop,
        })
    }

    /// The runtime's handle (etcd's client is built inside it).
    #[cfg(feature = "etcd")]
    pub(crate) fn handle(&self) -> &tokio::runtime::Handle {
        &self.handle
    }

    /// Runs `fut` on the runtime and waits for it from this thread, within `within`: a
    /// transient [`Error::Database`] naming `describe` and `what` when no answer comes.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        describe: &str,
        what: &str,
        within: Duration,
        fut: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, Error> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv_timeout(within).map_err(|_| Error::Database {
            database: describe.to_string(),
            message: format!("{what}: no answer within {:.1} s", within.as_secs_f64()),
            transient: true,
            source: None,
        })
    }
}
