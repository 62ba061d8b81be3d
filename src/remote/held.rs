//! Each thread's block of IDs taken from a client's buffer: `RemoteGenerator::next_id`
//! claims [`BLOCK`] IDs with one compare-and-swap and hands
//! them out from a thread-local array, so that per ID there is no write to shared memory (as the
//! in-process [`LocalTaker`](crate::LocalTaker) does).
//!
//! A block belongs to one client, named by a number no other client in the process has (not its
//! address, which a later client may reuse): a thread that takes from another client, or whose
//! block went stale, drops the rest of its block. IDs held by a thread that exits are lost,
//! never handed out twice. Every ID is checked against `max_lag` when handed out, not when
//! claimed, so a block that waits in a thread never yields a stale ID.

use super::buffer::{BLOCK, Buffer};
use std::cell::Cell;

/// One thread's block.
pub(crate) struct Held {
    /// The client the block came from (0: none).
    owner: Cell<u64>,
    next: Cell<usize>,
    len: Cell<usize>,
    ids: [Cell<u64>; BLOCK],
}

thread_local! {
    static HELD: Held = const {
        Held {
            owner: Cell::new(0),
            next: Cell::new(0),
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
            let (mut next, len) = (self.next.get(), self.len.get());
            while next < len {
                let id = self.ids[next].get();
                next += 1;
                if buffer.fresh(id) {
                    self.next.set(next);
                    return Some(id);
                }
                buffer.count_dropped(1);
            }
        }
        self.refill(owner, buffer)
    }

    #[cold]
    fn refill(&self, owner: u64, buffer: &Buffer) -> Option<u64> {
        let mut block = [0u64; BLOCK];
        loop {
            let n = buffer.take_block(&mut block);
            if n == 0 {
                self.len.set(0);
                self.next.set(0);
                return None;
            }
            for (cell, &id) in self.ids.iter().zip(&block[..n]) {
                cell.set(id);
            }
            self.owner.set(owner);
            self.len.set(n);
            self.next.set(0);
            // The IDs were fresh when claimed; one more look for the first.
            let first = block[0];
            if buffer.fresh(first) {
                self.next.set(1);
                return Some(first);
            }
            buffer.count_dropped(n as u64);
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
}
