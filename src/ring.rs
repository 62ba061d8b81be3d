//! The ring buffer of pre-generated IDs.
//!
//! This is Baidu UidGenerator's `RingBuffer` (a slot array with `tail` and `cursor` counters and a
//! per-slot can-put/can-take flag) rebuilt on Dmitry Vyukov's bounded MPMC queue
//! (<https://www.1024cores.net/home/lock-free-algorithms/queues/bounded-mpmc-queue>), the algorithm
//! behind `crossbeam_queue::ArrayQueue`, specialised for one producer (the filler):
//!
//! - Each slot is 16 bytes: the ID and a *stamp* that names the lap the slot is in and its state.
//!   `free(i)` means the slot may receive the ID for index `i`; `filled(i)` means it holds the ID
//!   for index `i`. Java spends about 80 bytes a slot on a padded flag; the stamp needs no padding
//!   because consumers of neighbouring slots never write the same word.
//! - A consumer claims index `i` with one `fetch_add` on the padded `cursor` (Java's CAS loop is
//!   the source of its "Curosr not in can take status" race, issue #105), waits until slot
//!   `i % capacity` holds `filled(i)`, reads the ID and stores `free(i + capacity)`: one atomic
//!   read-modify-write, one load and one store per ID, no lock.
//! - The single filler writes index `j` only when the slot holds `free(j)`, so an ID is never
//!   overwritten before its taker has read it, and never read twice: its taker is the only one
//!   whose claim names index `i`.
//! - A `WAKE` bit in a stamp asks the taker of that slot to wake the filler: one wake-up per
//!   threshold crossing, decided by the filler when it writes the slot, at no cost to other takes.
//!
//! There is no `unsafe` code: slots are pairs of atomics.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

const FILLED: u64 = 1;
const WAKE: u64 = 2;

#[inline]
const fn free_stamp(index: u64) -> u64 {
    index << 2
}

#[inline]
const fn filled_stamp(index: u64) -> u64 {
    (index << 2) | FILLED
}

/// One slot: 16 bytes.
#[derive(Default)]
struct Slot {
    stamp: AtomicU64,
    id: AtomicU64,
}

/// A bounded single-producer, multi-consumer ring of IDs, indexed by ever-growing `u64` positions.
pub(crate) struct Ring {
    slots: Box<[Slot]>,
    mask: u64,
    capacity: u64,
    /// The next index a consumer will claim. Contended by all consumers: padded to 128 bytes.
    cursor: CachePadded<AtomicU64>,
    /// The next index the filler will write, published for introspection and the stale sweep.
    tail: CachePadded<AtomicU64>,
}

/// What a successful take returns.
pub(crate) struct Taken {
    pub(crate) id: u64,
    pub(crate) wake: bool,
}

impl Ring {
    /// A ring of `capacity` slots; `capacity` must be a power of two.
    pub(crate) fn new(capacity: u64) -> Ring {
        debug_assert!(capacity.is_power_of_two());
        let slots: Box<[Slot]> = (0..capacity)
            .map(|i| Slot {
                stamp: AtomicU64::new(free_stamp(i)),
                id: AtomicU64::new(0),
            })
            .collect();
        Ring {
            slots,
            mask: capacity - 1,
            capacity,
            cursor: CachePadded::new(AtomicU64::new(0)),
            tail: CachePadded::new(AtomicU64::new(0)),
        }
    }

    #[inline]
    fn slot(&self, index: u64) -> &Slot {
        &self.slots[(index & self.mask) as usize]
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Claims `n` consecutive indices for the caller; the caller must then take each of them (or
    /// hand it to the filler as an orphan).
    #[inline]
    pub(crate) fn claim(&self, n: u64) -> u64 {
        self.cursor.fetch_add(n, Ordering::Relaxed)
    }

    /// Claims index `at` only if the cursor still stands there; used by non-blocking takes and the
    /// stale sweep, which must not claim what they will not take.
    #[inline]
    pub(crate) fn claim_at(&self, at: u64, n: u64) -> bool {
        self.cursor
            .compare_exchange_weak(at, at + n, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// The next index to be claimed.
    #[inline]
    pub(crate) fn cursor(&self) -> u64 {
        self.cursor.load(Ordering::Relaxed)
    }

    /// The next index the filler will write (as last published).
    pub(crate) fn tail(&self) -> u64 {
        self.tail.load(Ordering::Acquire)
    }

    pub(crate) fn publish_tail(&self, tail: u64) {
        self.tail.store(tail, Ordering::Release);
    }

    /// Whether slot `index` holds the ID for `index` (not yet taken).
    #[inline]
    pub(crate) fn is_filled(&self, index: u64) -> bool {
        self.slot(index).stamp.load(Ordering::Acquire) & !WAKE == filled_stamp(index)
    }

    /// Takes the ID for claimed index `index` if the filler has written it. Only the claimer of
    /// `index` may call this.
    #[inline]
    pub(crate) fn take(&self, index: u64) -> Option<Taken> {
        let slot = self.slot(index);
        let stamp = slot.stamp.load(Ordering::Acquire);
        if stamp & !WAKE != filled_stamp(index) {
            return None;
        }
        // Acquire above pairs with the filler's Release store of the stamp: the ID is visible.
        let id = slot.id.load(Ordering::Relaxed);
        // Release: our read of the ID happens before the filler's next write to this slot.
        slot.stamp
            .store(free_stamp(index + self.capacity), Ordering::Release);
        Some(Taken {
            id,
            wake: stamp & WAKE != 0,
        })
    }

    /// Reads (without taking) the ID at `index`; meaningful only for indices the filler wrote and
    /// no one has taken, e.g. the filler peeking at the head for the stale sweep.
    pub(crate) fn peek(&self, index: u64) -> Option<u64> {
        let slot = self.slot(index);
        let stamp = slot.stamp.load(Ordering::Acquire);
        let id = slot.id.load(Ordering::Relaxed);
        (stamp & !WAKE == filled_stamp(index)
            && slot.stamp.load(Ordering::Acquire) & !WAKE == filled_stamp(index))
        .then_some(id)
    }

    /// Writes `id` as index `index` if the slot is free for it; `false` means the ring is full
    /// there (its previous lap has not been taken yet). Only the filler calls this.
    #[inline]
    pub(crate) fn put(&self, index: u64, id: u64, wake: bool) -> bool {
        let slot = self.slot(index);
        if slot.stamp.load(Ordering::Acquire) != free_stamp(index) {
            return false;
        }
        slot.id.store(id, Ordering::Relaxed);
        let stamp = filled_stamp(index) | if wake { WAKE } else { 0 };
        slot.stamp.store(stamp, Ordering::Release);
        true
    }
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad("Ring { .. }")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Arc;

    #[test]
    fn smoke() {
        let ring = Ring::new(4);
        assert!(ring.put(0, 10, false));
        assert!(ring.put(1, 11, true));
        let i = ring.claim(1);
        assert_eq!(i, 0);
        let t = ring.take(i).expect("filled");
        assert_eq!((t.id, t.wake), (10, false));
        let t = ring.take(ring.claim(1)).expect("filled");
        assert_eq!((t.id, t.wake), (11, true));
        assert!(
            ring.take(ring.claim(1)).is_none(),
            "index 2 was never written"
        );
    }

    #[test]
    fn capacity() {
        let ring = Ring::new(2);
        assert!(ring.put(0, 1, false));
        assert!(ring.put(1, 2, false));
        assert!(!ring.put(2, 3, false), "slot 0 still holds index 0");
        assert_eq!(ring.take(ring.claim(1)).map(|t| t.id), Some(1));
        assert!(ring.put(2, 3, false), "slot 0 was taken");
        assert!(!ring.put(3, 4, false));
    }

    #[test]
    fn spmc() {
        const N: u64 = if cfg!(miri) { 200 } else { 200_000 };
        let ring = Arc::new(Ring::new(64));
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let ring = Arc::clone(&ring);
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        let i = ring.claim(1);
                        if i >= N {
                            return got;
                        }
                        loop {
                            if let Some(t) = ring.take(i) {
                                got.push(t.id);
                                break;
                            }
                            std::hint::spin_loop();
                        }
                    }
                })
            })
            .collect();
        let mut j = 0;
        while j < N {
            if ring.put(j, j * 7, false) {
                j += 1;
            } else {
                std::thread::yield_now();
            }
        }
        let mut all = HashSet::new();
        for c in consumers {
            let got = c.join().unwrap();
            assert!(got.windows(2).all(|w| w[0] < w[1]), "per-thread order");
            for id in got {
                assert!(all.insert(id), "duplicate {id}");
            }
        }
        assert_eq!(all.len() as u64, N);
    }
}
