//! Each thread's block of IDs taken from a client's buffer: `RemoteGenerator::next_id`
//! claims up to [`BLOCK`] IDs with one compare-and-swap and hands
//! them out from a thread-local record, so that per ID there is no write to shared memory (as the
//! in-process [`LocalTaker`](crate::LocalTaker) does). A block of consecutive IDs (the usual
//! case: a service hands out runs of one second's sequence numbers) is held as a range, and an
//! ID is one increment; any other block as a copied array.
//!
//! A block belongs to one client, named by a number no other client in the process has (not its
//! address, which a later client may reuse): a thread that takes from another client, or whose
//! block went stale, drops the rest of its block. IDs held by a thread that exits are lost,
//! never handed out twice. Every ID is checked against `max_lag` when handed out, not when
//! claimed, so a block that waits in a thread never yields a stale ID.

use super::buffer::{BLOCK, Block, Buffer};
use crate::stale::StaleFrom;
use std::cell::Cell;

/// One thread's block.
pub(crate) struct Held {
    /// The client the block came from (0: none).
    owner: Cell<u64>,
    /// A range block: IDs `next..end`, handed out until the buffer's clock second reaches
    /// `stale_from` (the first ID's: the others are newer).
    next: Cell<u64>,
    end: Cell<u64>,
    stale_from: Cell<StaleFrom>,
    /// An array block: `ids[at..len]`.
    at: Cell<usize>,
    len: Cell<usize>,
    ids: [Cell<u64>; BLOCK],
}

thread_local! {
    static HELD: Held = const {
        Held {
            owner: Cell::new(0),
            next: Cell::new(0),
            end: Cell::new(0),
            stale_from: Cell::new(StaleFrom::ALWAYS),
            at: Cell::new(0),
            len: Cell::new(0),
            ids: [const { Cell::new(0) }; BLOCK],
        }
    };
}

impl Held {
    /// The next ID of this thread's block of client `owner`, claiming a new block from `buffer`
    /// when it is used up; `None` if the buffer is empty. Stale IDs are dropped and counted.
    #[inline]
    fn take(&self, owner: u64, buffer: &Buffer) -> Option<u64> {
        if self.owner.get() == owner {
            if let Some(id) = self.take_range(buffer) {
                return Some(id);
            }
            if let Some(id) = self.take_array(buffer) {
                return Some(id);
            }
        }
        self.refill(owner, buffer)
    }

    /// The next ID of a range block, if any is left and the range is fresh; a stale range is
    /// dropped whole (its first ID is its oldest).
    #[inline]
    fn take_range(&self, buffer: &Buffer) -> Option<u64> {
        let (next, end) = (self.next.get(), self.end.get());
        if next >= end {
            return None;
        }
        if !self.stale_from.get().is_stale(buffer.seen()) {
            self.next.set(next + 1);
            return Some(next);
        }
        buffer.count_dropped(end - next);
        self.end.set(next);
        None
    }

    /// The next fresh ID of an array block, if any is left.
    #[inline]
    fn take_array(&self, buffer: &Buffer) -> Option<u64> {
        let (mut at, len) = (self.at.get(), self.len.get());
        while at < len {
            let id = self.ids[at].get();
            at += 1;
            if buffer.fresh(id) {
                self.at.set(at);
                return Some(id);
            }
            buffer.count_dropped(1);
        }
        self.at.set(at);
        None
    }

    #[cold]
    fn refill(&self, owner: u64, buffer: &Buffer) -> Option<u64> {
        // Whatever the thread held of another client is dropped (not counted: that client may
        // be gone); its IDs are never handed out.
        self.end.set(self.next.get());
        self.at.set(self.len.get());
        self.owner.set(owner);
        let mut block = [0u64; BLOCK];
        loop {
            match buffer.take_block(&mut block) {
                Block::Empty => return None,
                Block::Range { first, len } => {
                    self.stale_from.set(buffer.stale_from(first));
                    self.next.set(first);
                    self.end.set(first + len);
                }
                Block::Ids(n) => {
                    for (cell, &id) in self.ids.iter().zip(&block[..n]) {
                        cell.set(id);
                    }
                    self.at.set(0);
                    self.len.set(n);
                }
            }
            // The IDs were fresh when claimed; each is looked at again as it goes out.
            if let Some(id) = self.take_range(buffer) {
                return Some(id);
            }
            if let Some(id) = self.take_array(buffer) {
                return Some(id);
            }
        }
    }
}

/// The next ID for this thread from client `owner`'s `buffer`.
#[inline]
pub(crate) fn take(owner: u64, buffer: &Buffer) -> Option<u64> {
    HELD.with(|held| held.take(owner, buffer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_per_client() {
        let a = Buffer::new(1 << 10, 10, 5);
        let b = Buffer::new(1 << 10, 10, 5);
        a.push(&(1u64 << 10..(1 << 10) + 300).collect::<Vec<_>>());
        b.push(&(2u64 << 10..(2 << 10) + 300).collect::<Vec<_>>());
        assert_eq!(take(101, &a), Some(1 << 10));
        assert_eq!(take(101, &a), Some(1 << 10 | 1));
        // The thread holds the rest of a block of a's; b's IDs come from b.
        assert_eq!(take(102, &b), Some(2 << 10));
        // Back to a: its block was dropped, the next comes after it.
        assert_eq!(take(101, &a), Some(1 << 10 | BLOCK as u64));
        let mut last = 1 << 10 | BLOCK as u64;
        while let Some(id) = take(101, &a) {
            assert!(id > last);
            last = id;
        }
        assert_eq!(last, (1 << 10) + 299);
    }

    #[test]
    fn stale_held_ids_are_dropped() {
        let a = Buffer::new(1 << 10, 10, 5);
        a.push(&(100u64 << 10..(100 << 10) + 10).collect::<Vec<_>>());
        a.push(&(104u64 << 10..(104 << 10) + 10).collect::<Vec<_>>());
        assert_eq!(take(201, &a), Some(100 << 10));
        a.publish_seen(106); // the rest of the block (second 100) is stale now
        assert_eq!(take(201, &a), Some(104 << 10));
        assert_eq!(a.dropped(), 9);
    }

    #[test]
    fn a_range_block_goes_stale_as_a_whole() {
        let a = Buffer::new(1 << 10, 10, 5);
        a.push(&(100u64 << 10..(100 << 10) + 200).collect::<Vec<_>>());
        assert_eq!(take(301, &a), Some(100 << 10));
        assert_eq!(take(301, &a), Some(100 << 10 | 1));
        a.publish_seen(104); // 4 s behind: still handed out
        assert_eq!(take(301, &a), Some(100 << 10 | 2));
        a.publish_seen(105); // max_lag behind: the rest of the range, and of the buffer, is stale
        assert_eq!(take(301, &a), None);
        assert_eq!(a.dropped(), 197);
    }

    #[test]
    fn ids_that_are_not_a_range_are_handed_out_one_by_one() {
        let a = Buffer::new(1 << 10, 10, 5);
        // Increasing but with gaps, then a new stretch (the service restarted) below the last.
        let mut ids: Vec<u64> = (0..50).map(|i| 100 << 10 | (2 * i)).collect();
        ids.extend((0..100).map(|i| 100 << 10 | i));
        a.push(&ids);
        let mut got = Vec::new();
        while let Some(id) = take(401, &a) {
            got.push(id);
        }
        assert_eq!(got, ids);
        assert_eq!(a.dropped(), 0);
    }

    #[test]
    fn a_block_whose_ends_look_like_a_range_is_not_taken_for_one() {
        // First and last differ by the count minus one, but X + 1 never came from the service
        // (another client may hold it): only a stretch of increasing IDs may be read as a range.
        let a = Buffer::new(1 << 10, 10, 5);
        let x = 100u64 << 10;
        a.push(&[x, x + 100, x + 2]);
        let got: Vec<u64> = std::iter::from_fn(|| take(501, &a)).collect();
        assert_eq!(got, [x, x + 100, x + 2]);
    }

    #[test]
    fn threads_hand_out_each_pushed_id_once() {
        // Runs of consecutive IDs of varied lengths, a gap now and then, and a new stretch
        // below the last ID (a restarted service) every so often; three threads take.
        let b = Buffer::new(1 << 12, 10, 1 << 40);
        let total: u64 = if cfg!(miri) { 500 } else { 200_000 };
        let mut pushed = Vec::with_capacity(total as usize);
        // Two regions of IDs (two runs of a service, say): switching from the high one to the
        // low one starts a new stretch below the last ID pushed.
        let mut next = [1u64 << 20, 1u64 << 40];
        let mut region = 0;
        let mut i = 0u64;
        while (pushed.len() as u64) < total {
            i += 1;
            let run = 1 + (i * 7919) % 300;
            if i.is_multiple_of(17) {
                region = 1 - region;
            }
            let at = next[region];
            pushed.extend(at..at + run);
            next[region] += run + (i % 3);
        }
        pushed.truncate(total as usize);
        let taken = super::super::buffer::take_in_three_threads(
            || take(601, &b),
            || {
                let mut rest = &pushed[..];
                while !rest.is_empty() {
                    let n = (rest.len() as u64).min(b.room()).min(250) as usize;
                    assert_eq!(b.push(&rest[..n]), n as u64);
                    rest = &rest[n..];
                }
            },
        );
        let mut all: Vec<u64> = taken.into_iter().flatten().collect();
        let handed = all.len() as u64;
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len() as u64, handed, "an ID was handed out twice");
        let mut expected = pushed.clone();
        expected.sort_unstable();
        // Every ID handed out was pushed; the rest were lost to laps and counted.
        let mut it = expected.iter();
        assert!(
            all.iter().all(|id| it.any(|e| e == id)),
            "an ID never pushed"
        );
        assert_eq!(handed + b.dropped(), total);
    }
}
