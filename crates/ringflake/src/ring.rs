//! The ring buffer of pre-generated IDs.
//!
//! This is Baidu UidGenerator's `RingBuffer` (a slot array with `tail` and `cursor` counters and
//! can-put/can-take state per slot), rebuilt so that taking an ID costs what a shared counter
//! costs: one `fetch_add`.
//!
//! - The ring holds `capacity` IDs as `capacity / K` *chunks*: a chunk is `K` consecutive IDs
//!   (consecutive sequence numbers of one second), described by one 16-byte slot: the chunk's
//!   first ID and a stamp naming the chunk and its state. `K = 2^min(seq_bits, 10)`. Java keeps
//!   one `long` plus one 64-byte padded flag per ID; we keep 16 bytes per `K` IDs, and a consumer
//!   reads one slot per `K` IDs, so IDs do not travel between cores one cache line at a time.
//! - Consumers claim ID index `i` with one `fetch_add` on the padded `cursor` (Java's CAS loop is
//!   the source of its "Curosr not in can take status" race, issue #105) and read
//!   `base + i % K` from chunk `i / K`, validated as a seqlock (stamp, base, fence, stamp again):
//!   no lock, no write to shared memory besides the cursor.
//! - The single filler (UidGenerator's `BufferPaddingExecutor`) writes chunk `c` into slot
//!   `c % slots` only once every index of the chunk that used the slot before has been claimed.
//!   A consumer descheduled for a whole lap of the ring between its claim and its read finds the
//!   stamp changed and claims again: its index is skipped, never read twice.
//! - A `WAKE` bit in a stamp asks the taker of the chunk's first index to wake the filler: one
//!   wake-up per threshold crossing, decided by the filler when it writes the chunk.
//! - Per-thread takers ([`LocalTaker`](crate::LocalTaker)) claim a block of indices at a time
//!   ([`Ring::claim_held`]) and publish the block in their own [`Held`] record first, so that a
//!   stats snapshot never counts an index a taker still holds as issued; the filler publishes
//!   the clock second it last read ([`Ring::seen`]) so that they can tell a stale block without
//!   reading the clock.
//!
//! The seqlock follows the C++11 pattern of Boehm, "Can seqlocks get along with programming
//! language memory models?" (MSPC 2012), in atomics only: there is no `unsafe` code.

use crossbeam_utils::CachePadded;
#[cfg(ringflake_loom)]
use loom::sync::atomic::{AtomicU64, Ordering, fence};
#[cfg(not(ringflake_loom))]
use std::sync::atomic::{AtomicU64, Ordering, fence};

const FILLED: u64 = 1;
const WAKE: u64 = 2;

/// The stamp of chunk `c` (tags start at 1 so that a fresh slot, stamp 0, matches no chunk).
#[inline]
const fn tag(chunk: u64) -> u64 {
    (chunk + 1) << 2
}

/// One chunk descriptor: 16 bytes for `K` IDs.
struct Slot {
    stamp: AtomicU64,
    base: AtomicU64,
}

/// A bounded single-producer, multi-consumer ring of IDs, indexed by ever-growing `u64` positions.
pub(crate) struct Ring {
    slots: Box<[Slot]>,
    slot_mask: u64,
    chunk_bits: u32,
    capacity: u64,
    /// The next index a consumer will claim. Contended by all consumers: padded to 128 bytes.
    cursor: CachePadded<AtomicU64>,
    /// The next index the filler will write (a multiple of K), published for introspection.
    tail: CachePadded<AtomicU64>,
    /// The clock second (since the epoch) the filler read at its last round: what per-thread
    /// takers judge staleness by. Written only when it changes (about once a second), so the
    /// line stays in every reader's cache.
    seen: CachePadded<AtomicU64>,
}

/// The block of indices a per-thread taker holds (claimed, not yet settled), as a seqlock: the
/// sequence is odd while the taker claims or gives back. Written only by its taker, read by
/// stats snapshots: one record per taker, on its own cache line.
#[derive(Debug)]
pub(crate) struct Held {
    seq: AtomicU64,
    start: AtomicU64,
    end: AtomicU64,
}

impl Default for Held {
    fn default() -> Self {
        Held {
            seq: AtomicU64::new(0),
            start: AtomicU64::new(0),
            end: AtomicU64::new(0),
        }
    }
}

impl Held {
    /// The held indices `start..end` (empty: `start == end`), or `None` while the taker is
    /// between its claim and its publication of the block (look again).
    pub(crate) fn read(&self) -> Option<(u64, u64)> {
        let s1 = self.seq.load(Ordering::Acquire);
        if s1 & 1 == 1 {
            return None;
        }
        let start = self.start.load(Ordering::Relaxed);
        let end = self.end.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        (self.seq.load(Ordering::Relaxed) == s1).then_some((start, end))
    }

    /// Publishes the block `block` makes as held (the owner only).
    #[inline]
    fn publish(&self, block: impl FnOnce() -> (u64, u64)) {
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + 1, Ordering::Relaxed);
        // Seqlock write: the odd sequence is visible before anything stored after this fence,
        // including the cursor's claim in `claim_held`.
        fence(Ordering::Release);
        let (start, end) = block();
        self.start.store(start, Ordering::Relaxed);
        self.end.store(end, Ordering::Relaxed);
        self.seq.store(s + 2, Ordering::Release);
    }

    /// Holds nothing any more (the owner only, after recording what it gives back).
    pub(crate) fn clear(&self) {
        self.publish(|| (0, 0));
    }
}

/// Why a take found no ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Miss {
    /// The filler has not written the chunk yet: wait for it.
    NotReady,
    /// The slot already holds a later chunk: the index is lost, claim another.
    Lapped,
}

impl Ring {
    /// A ring of `capacity` IDs in chunks of `2^chunk_bits`; both powers of two, capacity larger.
    pub(crate) fn new(capacity: u64, chunk_bits: u32) -> Ring {
        debug_assert!(capacity.is_power_of_two() && capacity > 1 << chunk_bits);
        let n = capacity >> chunk_bits;
        let slots: Box<[Slot]> = (0..n)
            .map(|_| Slot {
                stamp: AtomicU64::new(0),
                base: AtomicU64::new(0),
            })
            .collect();
        Ring {
            slots,
            slot_mask: n - 1,
            chunk_bits,
            capacity,
            cursor: CachePadded::new(AtomicU64::new(0)),
            tail: CachePadded::new(AtomicU64::new(0)),
            seen: CachePadded::new(AtomicU64::new(0)),
        }
    }

    #[inline]
    fn slot(&self, chunk: u64) -> &Slot {
        &self.slots[(chunk & self.slot_mask) as usize]
    }

    /// IDs the ring holds when full.
    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// IDs per chunk.
    pub(crate) fn chunk(&self) -> u64 {
        1 << self.chunk_bits
    }

    /// Claims `n` consecutive indices for the caller.
    #[inline]
    pub(crate) fn claim(&self, n: u64) -> u64 {
        self.cursor.fetch_add(n, Ordering::Relaxed)
    }

    /// Claims `n` indices from `at` only if the cursor still stands there; used by non-blocking
    /// takes and the stale sweep, which must not claim what they will not take.
    #[inline]
    pub(crate) fn claim_at(&self, at: u64, n: u64) -> bool {
        self.cursor
            .compare_exchange_weak(at, at + n, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// Claims `n` consecutive indices for a per-thread taker and records them in its `held`
    /// record. A snapshot that reads the cursor with [`cursor_acquire`](Self::cursor_acquire)
    /// and then `held` either finds this claim in `held` or finds `held` busy: it never sees
    /// the claim in the cursor without knowing it is held.
    #[inline]
    pub(crate) fn claim_held(&self, held: &Held, n: u64) -> u64 {
        let mut first = 0;
        // The claim is made after the odd sequence and its release fence: an acquire load of
        // the cursor that sees it also sees the sequence odd (or the block published).
        held.publish(|| {
            first = self.cursor.fetch_add(n, Ordering::Relaxed);
            (first, first + n)
        });
        first
    }

    /// The next index to be claimed.
    #[inline]
    pub(crate) fn cursor(&self) -> u64 {
        self.cursor.load(Ordering::Relaxed)
    }

    /// The cursor, ordered before what a snapshot reads next (see [`claim_held`](Self::claim_held)).
    pub(crate) fn cursor_acquire(&self) -> u64 {
        self.cursor.load(Ordering::Acquire)
    }

    /// The clock second the filler read at its last round (0 before the first).
    #[inline]
    pub(crate) fn seen(&self) -> u64 {
        self.seen.load(Ordering::Relaxed)
    }

    /// Publishes the clock second of a filler round; a store only when it changed.
    pub(crate) fn publish_seen(&self, now: u64) {
        if self.seen.load(Ordering::Relaxed) != now {
            self.seen.store(now, Ordering::Relaxed);
        }
    }

    /// The next index the filler will write (as last published).
    pub(crate) fn tail(&self) -> u64 {
        self.tail.load(Ordering::Acquire)
    }

    /// The published tail, extended over the chunks after it that are written already, up to
    /// `limit`: the filler publishes the tail once per second's worth of chunks, and takes read
    /// a chunk as soon as it is written, so a snapshot that must not miss IDs already handed out
    /// looks past the published tail. At most `(limit - tail) / K` slot reads; off the take path.
    pub(crate) fn written_tail(&self, limit: u64) -> u64 {
        let mut tail = self.tail();
        while tail < limit && self.read_chunk(tail >> self.chunk_bits).is_ok() {
            tail += self.chunk();
        }
        tail
    }

    pub(crate) fn publish_tail(&self, tail: u64) {
        self.tail.store(tail, Ordering::Release);
    }

    /// Splits an index into its chunk and its offset in the chunk.
    #[inline]
    pub(crate) fn split(&self, index: u64) -> (u64, u64) {
        (
            index >> self.chunk_bits,
            index & ((1 << self.chunk_bits) - 1),
        )
    }

    /// Reads the ID at `index`, plus whether its reader must wake the filler. Anyone may read;
    /// only the claimer of `index` may hand the ID out.
    #[inline]
    pub(crate) fn read(&self, index: u64) -> Result<(u64, bool), Miss> {
        let (chunk, offset) = self.split(index);
        let (base, wake) = self.read_chunk(chunk)?;
        Ok((base + offset, offset == 0 && wake))
    }

    /// Reads the run of a claim that starts at `index`: the IDs of indices `index..` up to the
    /// end of the claim (`end`) or of the chunk, as (first ID, length, whether to wake the
    /// filler). The IDs of a run are consecutive.
    #[inline]
    pub(crate) fn read_run(&self, index: u64, end: u64) -> Result<(u64, u64, bool), Miss> {
        let (first, wake) = self.read(index)?;
        Ok((first, self.run_len(index, end), wake))
    }

    /// The length of the run of claim `index..end` that starts at `index`.
    #[inline]
    pub(crate) fn run_len(&self, index: u64, end: u64) -> u64 {
        let chunk_end = (index | (self.chunk() - 1)) + 1;
        chunk_end.min(end) - index
    }

    /// Reads chunk `chunk`'s first ID and its WAKE bit. A chunk index is written at most once, so
    /// a base read here stays the base of that chunk for good: readers may keep it.
    #[inline]
    pub(crate) fn read_chunk(&self, chunk: u64) -> Result<(u64, bool), Miss> {
        let slot = self.slot(chunk);
        // Acquire pairs with the filler's Release store of the stamp: the base is visible.
        let s1 = slot.stamp.load(Ordering::Acquire);
        if s1 & !WAKE != tag(chunk) | FILLED {
            return Err(if s1 >> 2 > tag(chunk) >> 2 {
                Miss::Lapped
            } else {
                Miss::NotReady
            });
        }
        let base = slot.base.load(Ordering::Relaxed);
        // Seqlock validation: if the base we read was written for a later chunk, the filler's
        // stamp store that precedes it is visible after this fence, and s2 differs.
        fence(Ordering::Acquire);
        if slot.stamp.load(Ordering::Relaxed) != s1 {
            return Err(Miss::Lapped);
        }
        Ok((base, s1 & WAKE != 0))
    }

    /// Writes chunk `chunk` (first ID `base`) if its slot may be reused: every index of the chunk
    /// it held before, and of the chunk after that, has been claimed. The one-chunk margin keeps a
    /// taker whose own claim completed a chunk from being lapped before it reads the slot; only
    /// a taker descheduled while others claim a whole chunk can be. `false` means the ring is
    /// full. Only the filler calls this.
    #[inline]
    pub(crate) fn put(&self, chunk: u64, base: u64, wake: bool) -> bool {
        let n = self.slot_mask + 1;
        if chunk >= n && self.cursor() < (chunk - n + 2) << self.chunk_bits {
            return false;
        }
        let slot = self.slot(chunk);
        // Seqlock write: mark the slot as being written, then the base, then the new stamp.
        slot.stamp.store(tag(chunk), Ordering::Relaxed);
        fence(Ordering::Release);
        slot.base.store(base, Ordering::Relaxed);
        let stamp = tag(chunk) | FILLED | if wake { WAKE } else { 0 };
        slot.stamp.store(stamp, Ordering::Release);
        true
    }
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad("Ring { .. }")
    }
}

/// Model checks of the ring under loom: every interleaving of one filler and two consumers.
/// Run with `RUSTFLAGS="--cfg ringflake_loom" cargo test --release --lib ring::loom`.
#[cfg(all(test, ringflake_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    /// Takes one ID for one claim, claiming again after a lap as `next_id` does; gives up after a
    /// few looks at a chunk that is not written yet (the model's filler may stop early).
    fn take(ring: &Ring) -> Option<(u64, u64)> {
        for _ in 0..3 {
            let i = ring.claim(1);
            let mut looks = 0;
            loop {
                match ring.read(i) {
                    Ok((id, _)) => return Some((i, id)),
                    Err(Miss::Lapped) => break,
                    Err(Miss::NotReady) if looks < 2 => {
                        looks += 1;
                        thread::yield_now();
                    }
                    Err(Miss::NotReady) => return None,
                }
            }
        }
        None
    }

    /// A reader never returns the ID of another index and never the same ID twice, while the
    /// filler reuses the slots under it (a ring of two one-ID chunks).
    #[test]
    fn seqlock_never_hands_out_a_wrong_or_repeated_id() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let ring = Arc::new(Ring::new(2, 0));
            assert!(ring.put(0, 100, false));
            assert!(ring.put(1, 101, false));
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    let ring = Arc::clone(&ring);
                    thread::spawn(move || take(&ring))
                })
                .collect();
            // One attempt per further chunk: each reuses a slot a reader may be reading.
            for chunk in 2..4 {
                if !ring.put(chunk, 100 + chunk, false) {
                    thread::yield_now();
                    let _ = ring.put(chunk, 100 + chunk, false);
                }
            }
            let got: Vec<(u64, u64)> = readers
                .into_iter()
                .filter_map(|r| r.join().unwrap())
                .collect();
            for &(i, id) in &got {
                assert_eq!(id, 100 + i, "index {i} read the ID of another index");
            }
            if let [a, b] = got[..] {
                assert_ne!(a.1, b.1, "an ID handed out twice");
            }
        });
    }
}

/// Model checks of the per-thread takers' claims under loom.
/// Run with `RUSTFLAGS="--cfg ringflake_loom" cargo test --release --lib ring::loom`.
#[cfg(all(test, ringflake_loom))]
mod loom_local {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    /// A taker's block claim: the runs it reads (index, first ID, length), and how many of its
    /// indices it gave back (lapped, or not written in time).
    fn take_block(ring: &Ring, held: &Held, n: u64) -> (Vec<(u64, u64, u64)>, u64) {
        let mut index = ring.claim_held(held, n);
        let end = index + n;
        let mut runs = Vec::new();
        while index < end {
            let mut looks = 0;
            let run = loop {
                match ring.read_run(index, end) {
                    Ok((first, len, _)) => break Some((first, len)),
                    Err(Miss::NotReady) if looks < 1 => {
                        looks += 1;
                        thread::yield_now();
                    }
                    Err(_) => break None,
                }
            };
            let Some((first, len)) = run else {
                return (runs, end - index);
            };
            runs.push((index, first, len));
            index += len;
            thread::yield_now(); // hands out the run, then reads the next one
        }
        (runs, 0)
    }

    /// A block that straddles two chunks, its second run read late, while single claims take
    /// the rest and the filler reuses a slot: every run holds the IDs of its own indices, no ID
    /// is handed out twice, and every index of the block is handed out or given back.
    #[test]
    fn block_runs_are_right_and_accounted() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            // Two slots of two IDs; chunk c holds 100 + 10c and the next, so a run that ran past
            // its chunk would hand out IDs of no index.
            let expected = |i: u64| 100 + 10 * (i / 2) + i % 2;
            let ring = Arc::new(Ring::new(4, 1));
            assert!(ring.put(0, 100, false));
            assert!(ring.put(1, 110, false));
            let single = {
                let ring = Arc::clone(&ring);
                thread::spawn(move || {
                    let mut got = Vec::new();
                    for _ in 0..2 {
                        let i = ring.claim(1);
                        if let Ok((id, _)) = ring.read(i) {
                            got.push((i, id));
                        }
                    }
                    got
                })
            };
            let taker = {
                let ring = Arc::clone(&ring);
                thread::spawn(move || take_block(&ring, &Held::default(), 2))
            };
            if !ring.put(2, 120, false) {
                thread::yield_now();
                let _ = ring.put(2, 120, false);
            }
            let mut ids: Vec<u64> = Vec::new();
            for (i, id) in single.join().unwrap() {
                assert_eq!(id, expected(i), "index {i} read the ID of another index");
                ids.push(id);
            }
            let (runs, given_back) = taker.join().unwrap();
            let mut handed = 0;
            for (index, first, len) in runs {
                for (i, id) in (index..index + len).zip(first..) {
                    assert_eq!(id, expected(i), "run at {index} read another index's IDs");
                    ids.push(id);
                }
                handed += len;
            }
            assert_eq!(
                handed + given_back,
                2,
                "an index of the block neither handed out nor given back"
            );
            let n = ids.len();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), n, "an ID handed out twice");
        });
    }

    /// The snapshot of `Shared::stats` (the cursor with acquire, then the taker's held block)
    /// never counts as issued an index the taker still holds: what it counts is at most what the
    /// taker finished with.
    #[test]
    fn a_snapshot_never_counts_a_held_block_as_issued() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let ring = Arc::new(Ring::new(8, 1));
            let held = Arc::new(Held::default());
            let done = Arc::new(AtomicU64::new(0));
            let taker = {
                let (ring, held, done) = (Arc::clone(&ring), Arc::clone(&held), Arc::clone(&done));
                thread::spawn(move || {
                    ring.claim_held(&held, 2);
                    // Hands out both IDs of its block, then moves on to the next block.
                    done.store(2, Ordering::Relaxed);
                    ring.claim_held(&held, 2);
                })
            };
            let cursor = ring.cursor_acquire();
            if let Some((start, end)) = held.read() {
                let issued = cursor - end.min(cursor).saturating_sub(start);
                let done = done.load(Ordering::Relaxed);
                assert!(
                    issued <= done,
                    "counted {issued} as issued, the taker finished {done}"
                );
            }
            taker.join().unwrap();
        });
    }
}

#[cfg(all(test, not(ringflake_loom)))]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Arc;

    #[test]
    fn smoke() {
        let ring = Ring::new(8, 1); // 4 chunks of 2
        assert!(ring.put(0, 100, false));
        assert!(ring.put(1, 200, true));
        assert_eq!(ring.read(ring.claim(1)), Ok((100, false)));
        assert_eq!(ring.read(ring.claim(1)), Ok((101, false)));
        assert_eq!(
            ring.read(ring.claim(1)),
            Ok((200, true)),
            "first of a WAKE chunk"
        );
        assert_eq!(
            ring.read(ring.claim(1)),
            Ok((201, false)),
            "wake once per chunk"
        );
        assert_eq!(ring.read(ring.claim(1)), Err(Miss::NotReady));
    }

    #[test]
    fn capacity() {
        let ring = Ring::new(4, 1); // 2 chunks of 2
        assert!(ring.put(0, 10, false));
        assert!(ring.put(1, 20, false));
        assert!(!ring.put(2, 30, false), "chunk 0 not claimed yet");
        ring.claim(2);
        assert!(
            !ring.put(2, 30, false),
            "chunk 0 claimed, but not the margin chunk after it"
        );
        ring.claim(1);
        assert!(!ring.put(2, 30, false), "chunk 1 only half claimed");
        ring.claim(1);
        assert!(ring.put(2, 30, false), "chunks 0 and 1 fully claimed");
        assert!(!ring.put(3, 40, false));
    }

    #[test]
    fn written_tail_looks_past_the_published_tail() {
        let ring = Ring::new(16, 1); // 8 chunks of 2
        assert!(ring.put(0, 10, false));
        ring.publish_tail(2);
        assert!(ring.put(1, 20, false));
        assert!(ring.put(2, 30, false)); // written, not published: takes may read them
        assert_eq!(ring.tail(), 2);
        assert_eq!(ring.written_tail(16), 6);
        assert_eq!(ring.written_tail(4), 4, "not past the limit");
        assert_eq!(ring.written_tail(1), 2, "never below the published tail");
        // A slot of an earlier lap is not this chunk's: not written.
        let lapped = Ring::new(4, 1); // 2 chunks of 2
        assert!(lapped.put(0, 10, false));
        assert!(lapped.put(1, 20, false));
        lapped.publish_tail(4);
        lapped.claim(4);
        assert_eq!(
            lapped.written_tail(8),
            4,
            "chunk 2's slot still holds chunk 0"
        );
    }

    #[test]
    fn lapped_reader_is_told() {
        let ring = Ring::new(4, 1);
        assert!(ring.put(0, 10, false));
        assert!(ring.put(1, 20, false));
        let slow = ring.claim(1); // claimed, not read yet
        ring.claim(3); // others claim past the margin chunk
        assert!(ring.put(2, 30, false)); // reuses the slow reader's slot
        assert_eq!(ring.read(slow), Err(Miss::Lapped));
        assert_eq!(ring.read(4), Ok((30, false)));
    }

    #[test]
    fn spmc() {
        const N: u64 = if cfg!(miri) { 256 } else { 1 << 18 };
        let ring = Arc::new(Ring::new(4096, 2));
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
                            match ring.read(i) {
                                Ok((id, _)) => {
                                    got.push(id);
                                    break;
                                }
                                Err(Miss::Lapped) => break,
                                Err(Miss::NotReady) => std::hint::spin_loop(),
                            }
                        }
                    }
                })
            })
            .collect();
        let mut c = 0;
        while c < N / 4 {
            if ring.put(c, c * 4 + 1_000, false) {
                c += 1;
            } else {
                std::thread::yield_now();
            }
        }
        let mut all = HashSet::new();
        for h in consumers {
            let got = h.join().unwrap();
            assert!(got.windows(2).all(|w| w[0] < w[1]), "per-thread order");
            for id in got {
                assert!((1_000..1_000 + N).contains(&id));
                assert!(all.insert(id), "duplicate {id}");
            }
        }
        // Indices are skipped only by readers descheduled for a whole lap of the ring.
        assert!(
            all.len() as u64 > N - N / 10,
            "too many skipped: got {}",
            all.len()
        );
    }
}
