//! Each Python thread takes from its own [`LocalTaker`]: a block of up to 1,024 IDs claimed from
//! the ring with one atomic add, then handed out from the taker's own fields. Per ID: a
//! thread-local lookup, two compares and the taker's own few reads, no write to shared memory,
//! no lock, no allocation, no system call; the library checks every ID against `max_lag` (its
//! time stays within a second of the clock). IDs one thread takes are strictly increasing;
//! across threads, nothing beyond uniqueness is ordered (the library's `LocalTaker` contract).
//!
//! A thread keeps its takers in a thread-local list, one per generator it took from, each holding
//! the generator it borrows from (an `Arc`), so that neither can outlive the other. An entry made
//! before a `fork()` is never used nor dropped in the child ([`Entry`]'s `Drop`): its block and
//! its generator are the parent's.

use crate::Live;
use crate::fork;
use ringflake::LocalTaker;
use std::cell::RefCell;
use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// One thread's taker of one generator.
struct Entry {
    /// The Python `Generator` it serves (its unique number).
    owner: u64,
    /// The fork generation it was made in.
    generation: u64,
    /// Borrows `live`'s generator: dropped before it (in [`Drop`]), and `live` is an `Arc`, so
    /// the generator does not move while the taker exists.
    taker: ManuallyDrop<LocalTaker<'static>>,
    live: ManuallyDrop<Arc<Live>>,
}

impl Entry {
    fn new(owner: u64, live: &Arc<Live>) -> Entry {
        let live = Arc::clone(live);
        let taker = live.generator.local();
        // SAFETY: the taker borrows the generator inside `live`'s allocation, which this entry
        // keeps alive (it holds a strong count) and which never moves; `Drop` drops the taker
        // before the `Arc`, so the borrow never outlives the generator. The entry never hands
        // the taker out with the longer lifetime (only `&mut` for the length of a call).
        let taker: LocalTaker<'static> = unsafe { std::mem::transmute(taker) };
        Entry {
            owner,
            generation: live.generation,
            taker: ManuallyDrop::new(taker),
            live: ManuallyDrop::new(live),
        }
    }

    /// Whether this entry may take for `owner` in this process.
    #[inline]
    fn serves(&self, owner: u64, generation: u64) -> bool {
        self.owner == owner && self.generation == generation
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if self.generation != fork::generation() {
            // Inherited through fork(): the block and the generator are the parent's; giving
            // the block back or dropping the generator would touch the parent's state (its
            // locks may be held by threads that do not exist here). Leaked.
            return;
        }
        // SAFETY: each field is dropped once, here, the taker first (it borrows from `live`).
        unsafe {
            ManuallyDrop::drop(&mut self.taker);
            ManuallyDrop::drop(&mut self.live);
        }
    }
}

thread_local! {
    /// This thread's takers, the most recently used first.
    static TAKERS: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// The fast path: an ID from this thread's taker for `owner`, if it has one ready now. `None`:
/// take the slow path. A ready block that has gone stale (light load: the clock moved more than
/// `max_lag` past it) is replaced by the taker on the spot, a claim from a ring the filler keeps
/// filled at light load.
#[inline]
pub fn ready(owner: u64) -> Option<u64> {
    let generation = fork::generation();
    TAKERS
        .try_with(|t| {
            let mut t = t.try_borrow_mut().ok()?;
            let e = t.first_mut()?;
            if e.serves(owner, generation) && e.taker.ready() > 0 {
                e.taker.next_id().ok()
            } else {
                None
            }
        })
        .ok()
        .flatten()
}

/// Runs `f` with this thread's taker of `live` for `owner` (made if it has none), after
/// dropping this thread's entries that are stale: of `owner` but another generator (built again
/// after fork), of a generator closed or dropped, or inherited through `fork()`.
pub fn with<T>(owner: u64, live: &Arc<Live>, f: impl FnOnce(&mut LocalTaker<'static>) -> T) -> T {
    TAKERS.with(|t| {
        let mut t = t.borrow_mut();
        let generation = fork::generation();
        t.retain(|e| {
            e.generation == generation
                && !e.live.retired.load(Ordering::Acquire)
                && (e.owner != owner || Arc::ptr_eq(&e.live, live))
        });
        let i = match t.iter().position(|e| e.owner == owner) {
            Some(i) => i,
            None => {
                t.push(Entry::new(owner, live));
                t.len() - 1
            }
        };
        t.swap(0, i);
        f(&mut t[0].taker)
    })
}

/// Drops this thread's taker for `owner` (the rest of its block is counted as discarded).
pub fn forget(owner: u64) {
    let _ = TAKERS.try_with(|t| {
        if let Ok(mut t) = t.try_borrow_mut() {
            t.retain(|e| e.owner != owner);
        }
    });
}
