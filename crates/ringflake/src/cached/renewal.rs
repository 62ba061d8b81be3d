//! A new worker id on its way from the lease keeper, which takes it when the lease is lost for
//! good, to the filler, which switches to it ([`super::heal`]).

use crate::Assignment;
use crate::lock::lock;
use crate::worker::lease::Renew;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;

/// A new worker id taken by the lease keeper, on its way to the filler.
#[derive(Default)]
pub(super) struct Renewal {
    /// An assignment waits in `assignment` (read by the filler each round without the lock).
    ready: AtomicBool,
    assignment: Mutex<Option<Assignment>>,
    /// The filler thread, woken when an assignment arrives.
    pub(super) filler: OnceLock<Thread>,
}

impl Renewal {
    /// The keeper's way to a new worker id: asks `retaker` and hands the answer over.
    pub(super) fn renew_with(
        self: &Arc<Self>,
        retaker: Box<dyn crate::WorkerIdAssigner + Send + Sync>,
        layout: crate::Layout,
    ) -> Renew {
        let renewal = Arc::clone(self);
        Box::new(move || {
            let assignment = retaker.assign(&layout)?;
            let worker_id = assignment.worker_id;
            *lock(&renewal.assignment) = Some(assignment);
            renewal.ready.store(true, Ordering::Release);
            if let Some(t) = renewal.filler.get() {
                t.unpark();
            }
            Ok(worker_id)
        })
    }

    pub(super) fn take(&self) -> Option<Assignment> {
        if !self.ready.load(Ordering::Acquire) {
            return None;
        }
        self.ready.store(false, Ordering::Relaxed);
        lock(&self.assignment).take()
    }
}
