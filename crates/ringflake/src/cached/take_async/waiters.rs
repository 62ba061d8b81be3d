//! The async takes parked on the filler: how many there are and how the filler wakes them. A
//! file of its own, below `take_async`, so that `Shared` can hold it while `take_async`, which
//! parks the tasks, imports `Shared` (no circle of files).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The async takes waiting for the filler, and how they are woken: what `Shared` keeps for
/// them (its `async_waiters`).
#[derive(Debug, Default)]
pub(crate) struct AsyncWaiters {
    /// Tasks parked in `take_async`'s `await_filler`.
    pub(crate) count: AtomicUsize,
    pub(crate) notify: tokio::sync::Notify,
}

impl AsyncWaiters {
    /// Wakes every parked task (after a filler round or a state change): they look at the ring
    /// again. Costs a fence and a load when none waits.
    pub(crate) fn wake_all(&self) {
        // Pairs with the waiter's SeqCst increment: either it sees what this round wrote, or
        // this load sees it waiting (a store-load order only SeqCst on both sides gives).
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.count.load(Ordering::SeqCst) > 0 {
            self.notify.notify_waiters();
        }
    }
}
