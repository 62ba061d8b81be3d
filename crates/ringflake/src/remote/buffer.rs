//! The client's local buffer: the crate's [`Ring`] with one ID per slot (chunks of one, since
//! IDs fetched from a service are not runs of consecutive values), filled by the fetcher thread
//! alone and taken from by any number of threads without a lock.
//!
//! A take claims the head index with one compare-and-swap, and only if that index is below the
//! tail the fetcher published: an empty buffer claims nothing (nothing is lost to a take that
//! gives up), and a claimed index is always written. The ID's second is checked against the clock
//! second the fetcher last published (no clock read per ID): an ID whose second is `max_lag` or
//! more behind it is dropped and counted, never handed out (the rule of [`crate::stale`], the
//! in-process generator's).
//!
//! A block claimed at once ([`Buffer::take_block`]) is read as a range when it can be: the
//! fetcher publishes where the current stretch of strictly increasing IDs began, and in such a
//! stretch `n` IDs whose first and last differ by `n - 1` are the consecutive IDs between them.
//! A service hands out runs of consecutive IDs (one second's sequence numbers), so a thread
//! reads two slots per block instead of every ID's.

use crate::ring::Ring;
use crate::stale::StaleFrom;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// IDs a thread claims at once ([`take_block`](Buffer::take_block) for the thread-local blocks
/// of `super::held`).
pub(crate) const BLOCK: usize = 128;

/// What [`Buffer::take_block`] claimed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Block {
    /// Nothing: the buffer is empty.
    Empty,
    /// The consecutive IDs `first..first + len`.
    Range { first: u64, len: u64 },
    /// IDs that are not one range, copied into the caller's array: how many.
    Ids(usize),
}

/// The buffer, and how to read an ID's second.
pub(crate) struct Buffer {
    ring: Ring,
    /// `worker_bits + seq_bits`: an ID's delta second is `id >> shift`.
    shift: u32,
    /// IDs whose delta second is this many or more behind `seen` are stale.
    max_lag: u64,
    /// IDs dropped as stale (by takes and by the fetcher's sweep).
    dropped: CachePadded<AtomicU64>,
    /// The index where the current stretch of strictly increasing IDs began (written by the
    /// fetcher before it publishes the tail past it, so a take that saw the tail sees it too).
    rising_from: CachePadded<AtomicU64>,
    /// The last ID the fetcher wrote (the fetcher only).
    last_pushed: AtomicU64,
}

impl Buffer {
    /// A buffer of `capacity` IDs (a power of two, at least 4) for a layout whose delta second
    /// is `id >> shift`, handing out IDs at most `max_lag` seconds behind the clock.
    pub(crate) fn new(capacity: u64, shift: u32, max_lag: u64) -> Buffer {
        Buffer {
            ring: Ring::new(capacity, 0),
            shift,
            max_lag,
            dropped: CachePadded::new(AtomicU64::new(0)),
            rising_from: CachePadded::new(AtomicU64::new(0)),
            last_pushed: AtomicU64::new(0),
        }
    }

    /// The clock second (as published by the fetcher) from which `id` is stale: it may be
    /// handed out while [`seen`](Self::seen) is below this.
    #[inline]
    pub(crate) fn stale_from(&self, id: u64) -> StaleFrom {
        StaleFrom::of(id >> self.shift, self.max_lag)
    }

    /// The clock second the fetcher last published.
    #[inline]
    pub(crate) fn seen(&self) -> u64 {
        self.ring.seen()
    }

    /// Whether `id`'s second lies `max_lag` or more behind the clock second the fetcher last
    /// published.
    #[inline]
    fn stale(&self, id: u64) -> bool {
        self.stale_from(id).is_stale(self.ring.seen())
    }

    /// Whether `id` may be handed out: its second less than `max_lag` behind the clock second the
    /// fetcher last published.
    #[inline]
    pub(crate) fn fresh(&self, id: u64) -> bool {
        !self.stale(id)
    }

    /// Claims up to [`BLOCK`] buffered IDs with one compare-and-swap on the head (again if
    /// another thread moved it first). When the claimed IDs are consecutive (they lie in one
    /// stretch of strictly increasing IDs, and the last is the first plus the count minus one)
    /// only those two slots are read and the block is a [`Block::Range`]; otherwise every ID is
    /// copied into `out`. IDs lost to a lap (this thread slept between its claim and its reads
    /// while the ring went round) are skipped and counted as dropped.
    pub(crate) fn take_block(&self, out: &mut [u64; BLOCK]) -> Block {
        loop {
            let at = self.ring.cursor();
            let tail = self.ring.tail();
            if at >= tail {
                return Block::Empty;
            }
            let n = (tail - at).min(BLOCK as u64);
            if !self.ring.claim_at(at, n) {
                continue;
            }
            // After the tail's acquire load: at least as new as the tail that covered the claim.
            if self.rising_from.load(Ordering::Relaxed) <= at
                && let (Ok((first, _)), Ok((last, _))) =
                    (self.ring.read(at), self.ring.read(at + n - 1))
                && last.wrapping_sub(first) == n - 1
            {
                return Block::Range { first, len: n };
            }
            let mut got = 0;
            for index in at..at + n {
                match self.ring.read(index) {
                    Ok((id, _)) => {
                        out[got] = id;
                        got += 1;
                    }
                    Err(_) => self.count_dropped(1),
                }
            }
            if got > 0 {
                return Block::Ids(got);
            }
        }
    }

    /// An ID if one is buffered: no lock, no allocation, no syscall; one compare-and-swap on the
    /// head (again if another thread took it first) and the slot's seqlock read. Stale IDs met
    /// on the way are dropped.
    #[inline]
    pub(crate) fn take(&self) -> Option<u64> {
        loop {
            let at = self.ring.cursor();
            if at >= self.ring.tail() {
                return None;
            }
            if !self.ring.claim_at(at, 1) {
                continue;
            }
            // A miss is a lap: this thread slept between its claim and its read while the others
            // drained the ring and the fetcher refilled it all; the index is skipped (its ID is
            // lost, never handed out twice) and counted as dropped.
            let Ok((id, _)) = self.ring.read(at) else {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            if self.stale(id) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            return Some(id);
        }
    }

    /// IDs buffered now (taken ones excluded).
    pub(crate) fn len(&self) -> u64 {
        self.ring.tail().saturating_sub(self.ring.cursor())
    }

    /// The head index: how many IDs were taken or dropped so far.
    pub(crate) fn head(&self) -> u64 {
        self.ring.cursor()
    }

    /// IDs dropped as stale so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Counts `n` IDs dropped by the fetcher (the rest of a fetch that did not fit).
    pub(crate) fn count_dropped(&self, n: u64) {
        self.dropped.fetch_add(n, Ordering::Relaxed);
    }

    /// How far behind the head the fetcher stays: a block a thread claims at once ([`BLOCK`])
    /// plus the ring's own margin (see [`Ring::put`]), so that a claimed
    /// block is not overwritten before its taker reads it, unless the taker sleeps while others
    /// claim past it (then its IDs are skipped and counted, never handed out twice).
    fn margin(&self) -> u64 {
        BLOCK as u64 + 2
    }

    /// IDs the fetcher may still write.
    pub(crate) fn room(&self) -> u64 {
        self.ring
            .capacity()
            .saturating_sub(self.margin())
            .saturating_sub(self.len())
    }

    /// Publishes the clock's delta second (the fetcher only, on every round).
    pub(crate) fn publish_seen(&self, delta: u64) {
        self.ring.publish_seen(delta);
    }

    /// Drops the stale IDs at the head (the fetcher only): claims them one by one, as a take
    /// would, so that no take can hand one out.
    pub(crate) fn sweep(&self) {
        loop {
            let at = self.ring.cursor();
            if at >= self.ring.tail() {
                return;
            }
            let Ok((id, _)) = self.ring.read(at) else {
                return;
            };
            if !self.stale(id) {
                return;
            }
            if self.ring.claim_at(at, 1) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Writes `ids` after the tail and publishes them (the fetcher only); the IDs that did not
    /// fit are dropped and counted. Returns how many were written.
    pub(crate) fn push(&self, ids: &[u64]) -> u64 {
        let mut tail = self.ring.tail();
        let mut written = 0;
        // The head only grows: a limit from an older read is the stricter.
        let limit = self.ring.cursor() + self.ring.capacity().saturating_sub(self.margin());
        let mut last = self.last_pushed.load(Ordering::Relaxed);
        for &id in ids {
            if tail >= limit || !self.ring.put(tail, id, false) {
                break;
            }
            if id <= last {
                // A new stretch of increasing IDs (the service restarted, say): published with
                // the tail below, before any take can claim this index.
                self.rising_from.store(tail, Ordering::Relaxed);
            }
            last = id;
            tail += 1;
            written += 1;
        }
        self.last_pushed.store(last, Ordering::Relaxed);
        self.ring.publish_tail(tail);
        self.count_dropped(ids.len() as u64 - written);
        written
    }
}

/// Three threads call `take` while `fill` pushes (on the calling thread), until the buffer is
/// empty after `fill` returned: each thread's IDs in the order it took them.
#[cfg(test)]
pub(crate) fn take_in_three_threads(
    take: impl Fn() -> Option<u64> + Sync,
    fill: impl FnOnce(),
) -> Vec<Vec<u64>> {
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let takers: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    let mut got = Vec::new();
                    loop {
                        // Read `done` first: after it, an empty buffer stays empty.
                        let finished = done.load(Ordering::Acquire);
                        match take() {
                            Some(id) => got.push(id),
                            None if finished => return got,
                            None => std::hint::spin_loop(),
                        }
                    }
                })
            })
            .collect();
        fill();
        done.store(true, Ordering::Release);
        takers.into_iter().map(|t| t.join().unwrap()).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IDs of delta second `delta` (shift 10).
    fn at(delta: u64, n: u64) -> Vec<u64> {
        (0..n).map(|i| delta << 10 | i).collect()
    }

    #[test]
    fn smoke() {
        let b = Buffer::new(1 << 10, 10, 5);
        assert_eq!(b.take(), None);
        assert_eq!(b.push(&at(100, 3)), 3);
        assert_eq!(b.len(), 3);
        assert_eq!(b.take(), Some(100 << 10));
        assert_eq!(b.take(), Some(100 << 10 | 1));
        assert_eq!(b.take(), Some(100 << 10 | 2));
        assert_eq!(b.take(), None);
        assert_eq!(b.head(), 3);
    }

    #[test]
    fn capacity() {
        let b = Buffer::new(256, 10, 5);
        let margin = BLOCK as u64 + 2;
        assert_eq!(b.room(), 256 - margin);
        // The fetcher stays a block and two slots behind the head.
        let ids: Vec<u64> = (1u64 << 10..(1 << 10) + 300).collect();
        assert_eq!(b.push(&ids), 256 - margin);
        assert_eq!(b.dropped(), 300 - (256 - margin));
        assert_eq!(b.room(), 0);
        assert_eq!(b.take(), Some(1 << 10));
        assert_eq!(b.push(&[2 << 10]), 1);
        let mut rest = Vec::new();
        while let Some(id) = b.take() {
            rest.push(id);
        }
        assert_eq!(rest.len() as u64, 256 - margin);
        assert!(rest.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn stale_ids_are_dropped_never_handed_out() {
        let b = Buffer::new(1 << 10, 10, 5);
        b.push(&at(100, 2));
        b.push(&at(104, 2));
        b.publish_seen(106); // 100 is 6 s behind: stale; 104 is 2 s behind
        assert_eq!(b.take(), Some(104 << 10));
        assert_eq!(b.dropped(), 2);
        b.push(&at(104, 2));
        b.publish_seen(110);
        b.sweep();
        assert_eq!(b.len(), 0);
        assert_eq!(b.dropped(), 5);
        assert_eq!(b.take(), None);
    }

    /// The boundary of `crate::stale`, as the buffer applies it: with `max_lag` 5, IDs of second
    /// 100 go out while the fetcher's clock second is 104, and are dropped at 105.
    #[test]
    fn stale_from_max_lag_behind() {
        let b = Buffer::new(1 << 10, 10, 5);
        b.push(&at(100, 2));
        b.publish_seen(104);
        assert_eq!(b.take(), Some(100 << 10));
        b.publish_seen(105);
        assert_eq!(b.take(), None);
        assert_eq!(b.dropped(), 1);
    }

    #[test]
    fn mpmc() {
        let b = Buffer::new(1 << 12, 10, 1_000);
        let total = if cfg!(miri) { 300 } else { 150_000 };
        let taken = take_in_three_threads(
            || b.take(),
            || {
                let mut next = 1u64 << 10;
                let mut left = total;
                while left > 0 {
                    let n = left.min(b.room()).min(100);
                    let ids: Vec<u64> = (next..next + n).collect();
                    assert_eq!(b.push(&ids), n);
                    next += n;
                    left -= n;
                }
            },
        );
        for ids in &taken {
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "per-thread order");
        }
        let mut all: Vec<u64> = taken.iter().flatten().copied().collect();
        let handed = all.len() as u64;
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len() as u64, handed, "an ID was handed out twice");
        // Every ID was handed out once, or lost to a lap and counted.
        assert_eq!(handed + b.dropped(), total);
    }
}
