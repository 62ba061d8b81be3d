//! One tag's window: the range of dense numbers takes draw from, with one `fetch_add` a take.
//!
//! Leaf's `SegmentBuffer` keeps two segments and a take does `AtomicLong.getAndIncrement` on the
//! current one under a read lock (a write lock to switch). Here there is no lock on the take: the
//! window is a counter word and a descriptor, the pattern of the ring's chunk slots
//! (`src/ring.rs`):
//!
//! - `next` packs a *generation* (high 32 bits) and an *offset* into the generation's segment
//!   (low 32 bits). A take is `next.fetch_add(n)`: the offsets it gets are its own, whoever else
//!   takes at the same time.
//! - The descriptor holds the generation's `base` (the segment's first number), its `limit` (the
//!   offsets below it may be handed out: the durable mark, see `state`) and `wake` (the offset
//!   whose taker wakes the keeper), behind a `stamp` read as a seqlock (Boehm, "Can seqlocks get
//!   along with programming language memory models?", MSPC 2012), in atomics only. A take whose
//!   generation is the stamp's and whose offsets lie below the limit hands out `base + offset`.
//! - Anything else is a miss, resolved under the tag's lock (`tag`): offsets past the limit wait
//!   for the keeper to move the mark; past the segment's end, the next segment is installed as a
//!   new generation ([`Window::install`]), which resets the offset. A claim whose generation is
//!   no longer the descriptor's is checked against what the lock keeps of the previous one.
//!
//! Generations go up by 2 and start at 2: a counter that overflowed its 32 offset bits would
//! carry into an odd generation, which is never installed, so such a claim can never pass for a
//! live one. Offsets stay far below that: a segment is at most [`MAX_LEN`] numbers, one claim at
//! most [`MAX_CLAIM`], and a taker that missed past the end claims again only after a new
//! generation is installed.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering, fence};

/// Bits of the offset in the counter word.
const OFFSET_BITS: u32 = 32;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

/// The longest segment a window holds: 2^31 numbers (Leaf's `step` is an `INT`, at most
/// 2^31 - 1), leaving as many offsets again for claims that run past the end.
pub(crate) const MAX_LEN: u64 = 1 << 31;

/// The most numbers one claim takes at once (a batch takes more in several claims).
pub(crate) const MAX_CLAIM: u64 = 1 << 16;

/// The first generation installed.
pub(crate) const FIRST_GENERATION: u64 = 2;

/// A claim that could not be served from the descriptor: what `fetch_add` gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Miss {
    /// The generation the offsets belong to.
    pub(crate) generation: u64,
    /// The first offset claimed.
    pub(crate) offset: u64,
    /// How many offsets were claimed.
    pub(crate) count: u64,
}

/// The descriptor of the installed generation.
struct Desc {
    /// The generation (even), or the new one `| 1` while it is being written.
    stamp: AtomicU64,
    /// The segment's first number (an `i64`'s bits).
    base: AtomicU64,
    /// Offsets below it may be handed out.
    limit: AtomicU64,
    /// The taker of this offset wakes the keeper.
    wake: AtomicU64,
}

/// One tag's numbers, taken lock-free.
pub(crate) struct Window {
    /// `generation << 32 | offset`: the next offset to hand out. Contended by every taker.
    next: CachePadded<AtomicU64>,
    /// Read by every take, written once a segment (and the limit about once a mark).
    desc: CachePadded<Desc>,
}

impl Window {
    /// A window with nothing installed: every take misses.
    pub(crate) fn new() -> Window {
        Window {
            next: CachePadded::new(AtomicU64::new(0)),
            desc: CachePadded::new(Desc {
                stamp: AtomicU64::new(0),
                base: AtomicU64::new(0),
                limit: AtomicU64::new(0),
                wake: AtomicU64::new(u64::MAX),
            }),
        }
    }

    /// Claims `count` (1..=[`MAX_CLAIM`]) consecutive numbers: the first if all of them lie below
    /// the limit of the installed generation, else the miss to resolve. `woke` is set when the
    /// claim covers the wake offset.
    #[inline]
    pub(crate) fn claim(&self, count: u64, woke: &mut bool) -> Result<i64, Miss> {
        // Acquire: a claim in a newly installed generation sees its descriptor.
        let word = self.next.fetch_add(count, Ordering::Acquire);
        let generation = word >> OFFSET_BITS;
        let offset = word & OFFSET_MASK;
        let d = &*self.desc;
        let s1 = d.stamp.load(Ordering::Acquire);
        let base = d.base.load(Ordering::Relaxed);
        let limit = d.limit.load(Ordering::Relaxed);
        let wake = d.wake.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let s2 = d.stamp.load(Ordering::Relaxed);
        if s1 == generation && s2 == s1 && offset + count <= limit {
            *woke = wake.wrapping_sub(offset) < count;
            // Below the limit, so below the segment's end, which is at most i64::MAX.
            return Ok((base as i64).wrapping_add(offset as i64));
        }
        Err(Miss {
            generation,
            offset,
            count,
        })
    }

    /// Installs a segment as `generation` (even, above every earlier one): its first number,
    /// the offsets handed out from it (`limit`) and the keeper's wake offset. Takes in flight
    /// in the old generation miss from here on. The caller holds the tag's lock.
    pub(crate) fn install(&self, generation: u64, base: i64, limit: u64, wake: u64) {
        debug_assert!(generation.is_multiple_of(2) && generation < 1 << (64 - OFFSET_BITS));
        let d = &*self.desc;
        d.stamp.store(generation | 1, Ordering::Relaxed);
        // Seqlock write: the odd stamp is visible before the fields change.
        fence(Ordering::Release);
        d.base.store(base as u64, Ordering::Relaxed);
        d.limit.store(limit, Ordering::Relaxed);
        d.wake.store(wake, Ordering::Relaxed);
        d.stamp.store(generation, Ordering::Release);
        // Release: whoever claims in the new generation sees the descriptor.
        self.next
            .store(generation << OFFSET_BITS, Ordering::Release);
    }

    /// Closes `generation` by moving to `closed` (even, above it) with nothing to hand out, and
    /// returns the offset `generation` had reached: every number handed out from it was claimed
    /// below that offset, whoever was taking at the time. `None` if the counter was not in
    /// `generation`. The caller holds the tag's lock.
    pub(crate) fn close(&self, generation: u64, closed: u64) -> Option<u64> {
        let d = &*self.desc;
        d.stamp.store(closed | 1, Ordering::Relaxed);
        fence(Ordering::Release);
        d.limit.store(0, Ordering::Relaxed);
        d.wake.store(u64::MAX, Ordering::Relaxed);
        d.stamp.store(closed, Ordering::Release);
        let word = self.next.swap(closed << OFFSET_BITS, Ordering::AcqRel);
        (word >> OFFSET_BITS == generation).then_some(word & OFFSET_MASK)
    }

    /// Raises the installed generation's limit (the caller holds the tag's lock, and checked
    /// the generation).
    pub(crate) fn raise_limit(&self, limit: u64) {
        self.desc.limit.fetch_max(limit, Ordering::Release);
    }

    /// Moves the wake offset (the caller holds the tag's lock).
    pub(crate) fn set_wake(&self, wake: u64) {
        self.desc.wake.store(wake, Ordering::Relaxed);
    }

    /// The next offset of `generation` to be claimed: `None` if the counter is in another
    /// generation.
    pub(crate) fn next_offset(&self, generation: u64) -> Option<u64> {
        let word = self.next.load(Ordering::Acquire);
        (word >> OFFSET_BITS == generation).then_some(word & OFFSET_MASK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Mutex;

    #[test]
    fn smoke() {
        let w = Window::new();
        let mut woke = false;
        assert!(w.claim(1, &mut woke).is_err(), "nothing installed");
        w.install(FIRST_GENERATION, 1_000, 3, 1);
        assert_eq!(w.claim(1, &mut woke), Ok(1_000));
        assert!(!woke);
        assert_eq!(w.claim(1, &mut woke), Ok(1_001));
        assert!(woke, "offset 1 is the wake offset");
        assert_eq!(w.claim(1, &mut woke), Ok(1_002));
        let miss = w.claim(1, &mut woke).unwrap_err();
        assert_eq!(
            miss,
            Miss {
                generation: FIRST_GENERATION,
                offset: 3,
                count: 1
            }
        );
        w.raise_limit(10);
        assert_eq!(w.claim(2, &mut woke), Ok(1_004));
        assert_eq!(w.next_offset(FIRST_GENERATION), Some(6));
        w.install(FIRST_GENERATION + 2, -50, 5, u64::MAX);
        assert_eq!(w.next_offset(FIRST_GENERATION), None);
        assert_eq!(w.claim(5, &mut woke), Ok(-50));
        assert!(w.claim(1, &mut woke).is_err());
    }

    #[test]
    fn a_claim_straddling_the_limit_misses_whole() {
        let w = Window::new();
        w.install(FIRST_GENERATION, 0, 10, u64::MAX);
        let mut woke = false;
        assert_eq!(w.claim(8, &mut woke), Ok(0));
        let miss = w.claim(8, &mut woke).unwrap_err();
        assert_eq!((miss.offset, miss.count), (8, 8));
    }

    #[test]
    fn an_offset_carry_never_passes_for_a_generation() {
        // A counter pushed past its 32 offset bits carries into the odd generation above.
        let w = Window::new();
        w.install(FIRST_GENERATION, 0, 1 << 20, u64::MAX);
        w.next.store(
            (FIRST_GENERATION << OFFSET_BITS) | OFFSET_MASK,
            Ordering::Relaxed,
        );
        let mut woke = false;
        assert!(w.claim(1, &mut woke).is_err());
        let miss = w.claim(1, &mut woke).unwrap_err();
        assert_eq!(miss.generation, FIRST_GENERATION + 1);
        assert_eq!(miss.offset, 0);
    }

    /// Threads taking while segments are installed under them: every number handed out is
    /// unique and comes from an installed segment.
    #[test]
    fn mpmc_with_installs() {
        let per_segment: u64 = if cfg!(miri) { 50 } else { 5_000 };
        let segments: u64 = if cfg!(miri) { 4 } else { 200 };
        let w = Window::new();
        let lock = Mutex::new((FIRST_GENERATION, 0u64)); // (generation, segment index)
        w.install(FIRST_GENERATION, 0, per_segment, u64::MAX);
        let taken: Vec<Vec<i64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..3)
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        let mut woke = false;
                        loop {
                            match w.claim(1 + (mine.len() as u64 % 3), &mut woke) {
                                Ok(first) => {
                                    let n = 1 + (mine.len() as u64 % 3);
                                    mine.extend((0..n as i64).map(|i| first + i));
                                }
                                Err(miss) => {
                                    let mut g = lock.lock().unwrap();
                                    if g.1 + 1 >= segments {
                                        return mine;
                                    }
                                    if miss.generation == g.0
                                        && miss.offset + miss.count > per_segment
                                    {
                                        // Segments 10 * per_segment apart, as another node's
                                        // ranges would leave gaps.
                                        g.0 += 2;
                                        g.1 += 1;
                                        w.install(
                                            g.0,
                                            (g.1 * 10 * per_segment) as i64,
                                            per_segment,
                                            u64::MAX,
                                        );
                                    }
                                }
                            }
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut seen = HashSet::new();
        for n in taken.iter().flatten() {
            assert!(seen.insert(*n), "{n} handed out twice");
            let (segment, offset) = (
                (*n as u64) / (10 * per_segment),
                (*n as u64) % (10 * per_segment),
            );
            assert!(
                segment < segments && offset < per_segment,
                "{n} outside every segment"
            );
        }
        assert!(
            seen.len() as u64 > per_segment * (segments - 1) * 9 / 10,
            "{}",
            seen.len()
        );
    }
}
