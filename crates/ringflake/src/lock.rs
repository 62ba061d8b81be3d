//! How the crate takes its locks: ignoring poisoning. Every mutex here guards plain data that is
//! consistent between statements (counters, an assignment, a connection, a waiter list), so a
//! thread that panicked while holding one left nothing half-written, and a poisoned lock is no
//! reason to stop issuing IDs or keeping a lease.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, poisoned or not.
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
