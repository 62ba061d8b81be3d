//! One generator per worker id per process, also across copies of this library.
//!
//! The JVM refuses to load one library file into two class loaders, so the jar extracts it to a
//! new temporary file for each loader that asks; two copies of the library then run in one process,
//! each with its own statics. A guard kept in a static would see only its own copy's generators.
//! The guard is therefore something the kernel keeps for the whole process: on Linux, a Unix socket
//! bound to an abstract name (no file, gone with the socket or the process, never stale) made of the
//! process id and the worker id; elsewhere, an exclusive lock (`flock`, which conflicts between
//! two opens of one file in one process) on a file named the same way in the temporary directory.
//! A second generator of the same worker id in the process, from either copy, fails to bind (or to
//! lock) and is refused.

use crate::failure::Failure;

/// Held while a generator of `worker_id` lives in this process; dropped, it frees the id.
#[derive(Debug)]
pub struct WorkerGuard {
    #[cfg(target_os = "linux")]
    _socket: std::os::unix::net::UnixListener,
    #[cfg(not(target_os = "linux"))]
    _file: std::fs::File,
}

/// The name both mechanisms use.
fn name(worker_id: u64) -> String {
    format!("ringflake-jni.{}.worker-{worker_id}", std::process::id())
}

fn in_use(worker_id: u64) -> Failure {
    Failure {
        kind: "WorkerAssignment".into(),
        message: format!(
            "worker id {worker_id} is in use by another generator in this process (perhaps \
             loaded by another class loader): two generators with one worker id would hand out \
             the same IDs; share one generator, or give each its own worker id"
        ),
    }
}

impl WorkerGuard {
    /// Takes `worker_id` for this process.
    ///
    /// # Errors
    ///
    /// A `WorkerAssignment` failure if a live generator of this process (from any copy of the
    /// library) holds it; an `Io` failure if the guard cannot be made at all.
    #[cfg(target_os = "linux")]
    pub fn take(worker_id: u64) -> Result<WorkerGuard, Failure> {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixListener};
        let addr = SocketAddr::from_abstract_name(name(worker_id).as_bytes()).map_err(io)?;
        match UnixListener::bind_addr(&addr) {
            Ok(socket) => Ok(WorkerGuard { _socket: socket }),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(in_use(worker_id)),
            Err(e) => Err(io(e)),
        }
    }

    /// Takes `worker_id` for this process.
    ///
    /// # Errors
    ///
    /// As on Linux.
    #[cfg(not(target_os = "linux"))]
    pub fn take(worker_id: u64) -> Result<WorkerGuard, Failure> {
        let path = std::env::temp_dir().join(format!("{}.lock", name(worker_id)));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(WorkerGuard { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(in_use(worker_id)),
            Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
        }
    }
}

fn io(e: std::io::Error) -> Failure {
    Failure {
        kind: "Io".into(),
        message: format!("cannot make the process-wide worker id guard: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_per_worker_id() {
        let a = WorkerGuard::take(900_001).unwrap();
        let err = WorkerGuard::take(900_001).unwrap_err();
        assert_eq!(err.kind, "WorkerAssignment");
        assert!(
            err.message.contains("worker id 900001 is in use"),
            "{}",
            err.message
        );
        let _other = WorkerGuard::take(900_002).unwrap();
        drop(a);
        WorkerGuard::take(900_001).unwrap();
    }
}
