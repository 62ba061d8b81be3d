//! The per-thread take path: a [`LocalTaker`] claims a block of IDs from the ring with one atomic
//! add and hands them out from its own fields, so that threads taking IDs share no written cache
//! line per ID.
//!
//! Per ID, a taker reads its own next ID and the end of its run, and one shared cell that the
//! filler writes about once a second (the clock second it last read, [`Ring::seen`]); it writes
//! only its own next ID. Once per block (one chunk, up to 1,024 IDs) it claims from the ring's
//! cursor and reads the chunk descriptors it landed in, as `next_id` does once per chunk.
//!
//! [`Ring::seen`]: crate::ring::Ring::seen

use super::shared::{CachedUidGenerator, Shared};
use crate::Error;
use crate::ring::Held;
use crate::stale::StaleFrom;
use crossbeam_utils::CachePadded;
use std::sync::Arc;

/// A per-thread handle on a [`CachedUidGenerator`] whose takes scale with threads: it claims a
/// block of consecutive ring positions (one chunk, up to 1,024 IDs) with one atomic add and then
/// hands them out with no write to shared memory, so N threads with a taker each take close to N
/// times what one does. Made by [`CachedUidGenerator::local`]; one per thread (it is `Send`, so
/// it may move, but [`next_id`](Self::next_id) takes `&mut self`).
///
/// # What it keeps
///
/// - **Unique**: every ID comes from the ring, claimed by this taker alone.
/// - **Order within a taker**: its IDs are strictly increasing (a later block is a later claim of
///   the ring, whose IDs increase with the position).
/// - **Order across takers and threads**: none beyond uniqueness. A taker hands out its block
///   after IDs other threads took later, so an ID taken later on another thread can be smaller,
///   but both carry seconds within the generator's bounds (at most `max_lag` behind the clock, at
///   most `max_lead` ahead). IDs of `next_id` and of a taker on the same thread are each
///   increasing, but not interleaved: `next_id` claims after the taker's block.
/// - **`max_lag`**: a block is stale once the clock reaches its second plus `max_lag`, the rule
///   the filler's sweep applies to the ring (rule 6 in
///   [`CachedUidGenerator`](crate::CachedUidGenerator)'s `# Clock behaviour`). A taker reads the
///   clock once per block it claims (never handing out a block that is stale then), and before
///   each ID compares with the second the filler publishes each round and every take publishes
///   when it reads the clock (no clock read per ID); it gives back what is left of a stale block
///   and claims a fresh one. An idle thread's block is therefore never handed out past `max_lag`;
///   after the process was paused, the rest of a block claimed before the pause can be, until
///   the filler or any take has read the clock (at most one block).
/// - **Lead and the other time rules**: the blocks are the ring's IDs, written by the filler
///   under its rules; at the lead cap a taker waits or fails as `next_id` does.
/// - **Counters**: IDs given back (stale, lapped, failed take, or left when the taker is dropped)
///   are counted in [`Stats::discarded`](crate::Stats::discarded). A block's IDs are counted in
///   [`Stats::issued`](crate::Stats::issued) when the taker moves on from it, so `issued` is
///   exact once every taker is dropped, and never decreases.
/// - **Cost**: per ID, no lock, no allocation, no syscall, no log line, no write to shared
///   memory. Making a taker takes a lock and allocates once: make one per thread, not per ID.
///
/// # Examples
///
/// ```
/// use ringflake::{CachedUidGenerator, Layout};
///
/// let generator = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
/// let ids: Vec<Vec<u64>> = std::thread::scope(|s| {
///     let workers: Vec<_> = (0..4)
///         .map(|_| {
///             s.spawn(|| {
///                 let mut taker = generator.local();
///                 (0..10_000).map(|_| taker.next_id()).collect::<Result<Vec<u64>, _>>()
///             })
///         })
///         .collect();
///     workers.into_iter().map(|w| w.join().unwrap()).collect::<Result<_, _>>()
/// })?;
/// for thread in &ids {
///     assert!(thread.windows(2).all(|w| w[0] < w[1]));
/// }
/// let mut all: Vec<u64> = ids.concat();
/// all.sort_unstable();
/// all.dedup();
/// assert_eq!(all.len(), 40_000);
/// // Every taker is dropped: the counters are exact.
/// let stats = generator.stats();
/// assert_eq!(stats.issued, 40_000);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct LocalTaker<'g> {
    shared: &'g Shared,
    /// The next ID of the current run, and the end of the run (IDs; consecutive).
    next: u64,
    end: u64,
    /// The run is fresh while the filler's clock second is below this.
    deadline: StaleFrom,
    /// ID minus ring index in the current run (wrapping).
    gap: u64,
    /// The indices of the claim not yet read into a run: `rest..claim_end`.
    rest: u64,
    claim_end: u64,
    /// This taker's block as stats snapshots see it.
    held: Arc<CachePadded<Held>>,
}

impl std::fmt::Debug for LocalTaker<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalTaker")
            .field("ready", &self.ready())
            .finish_non_exhaustive()
    }
}

impl CachedUidGenerator {
    /// A per-thread taker: takes that scale with threads (see [`LocalTaker`] for what it keeps
    /// and the ordering it gives). Takes a lock and allocates once; make one per thread and keep
    /// it.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout, ManualClock};
    /// // A clock that stands still: nothing goes stale, so the counts below are exact.
    /// let clock = ManualClock::from_seconds(ringflake::DEFAULT_EPOCH_SECONDS + 1_000_000);
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).clock(clock).build()?;
    /// let mut taker = g.local();
    /// let a = taker.next_id()?;
    /// let b = taker.next_id()?;
    /// assert!(b > a);
    /// assert_eq!(g.stats().issued, 0); // counted when the taker moves on from its block
    /// drop(taker); // the rest of its block is counted as discarded
    /// let stats = g.stats();
    /// assert_eq!(stats.issued, 2);
    /// assert_eq!(stats.discarded, 1022); // a block of 1,024
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn local(&self) -> LocalTaker<'_> {
        let s = &*self.shared;
        LocalTaker {
            shared: s,
            next: 0,
            end: 0,
            deadline: StaleFrom::ALWAYS,
            gap: 0,
            rest: 0,
            claim_end: 0,
            held: s.register_taker(),
        }
    }
}

impl LocalTaker<'_> {
    /// Takes the next ID: from this taker's block if it has one left that is not stale, else
    /// from a new block claimed from the ring.
    ///
    /// Per ID: two reads and a write of this taker's own fields, one read of a shared cell
    /// written about once a second (the clock's second, as the filler or a take last read it),
    /// two compares. Once per block: one atomic add on the ring's cursor, a read of the chunk
    /// descriptors and one of the clock. When the ring is empty it waits for the
    /// filler as [`CachedUidGenerator::next_id`] does.
    ///
    /// # Errors
    ///
    /// As [`CachedUidGenerator::next_id`]; the rest of the block is then discarded.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(7).build()?;
    /// let mut taker = g.local();
    /// let ids: Vec<u64> = (0..5_000).map(|_| taker.next_id()).collect::<Result<_, _>>()?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// assert_eq!(Layout::default().parse(ids[0])?.worker_id, 7);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[inline]
    pub fn next_id(&mut self) -> Result<u64, Error> {
        let id = self.next;
        if id < self.end && !self.deadline.is_stale(self.shared.ring.seen()) {
            self.next = id + 1;
            return Ok(id);
        }
        self.next_run()
    }

    /// IDs this taker holds ready to hand out (claimed and read, in its current run).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// let mut taker = g.local();
    /// assert_eq!(taker.ready(), 0); // nothing claimed yet
    /// taker.next_id()?;
    /// assert_eq!(taker.ready(), 1023);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn ready(&self) -> u64 {
        self.end - self.next
    }

    /// The slow path: the run is used up or stale. Gives back a stale run with the rest of its
    /// claim, reads the claim's next run, or claims a new block; waits on an empty ring.
    #[cold]
    #[inline(never)]
    fn next_run(&mut self) -> Result<u64, Error> {
        let s = self.shared;
        if self.next < self.end {
            // Stale: nothing of this claim is handed out any more.
            let ranges = [
                (
                    self.next.wrapping_sub(self.gap),
                    self.end.wrapping_sub(self.gap),
                ),
                (self.rest, self.claim_end),
            ];
            self.end = self.next;
            self.rest = self.claim_end;
            self.give_back(&ranges, false);
        }
        let block = s.ring.chunk();
        let shift = s.layout.time_shift();
        loop {
            if self.rest == self.claim_end {
                let first = s.ring.claim_held(&self.held, block);
                self.rest = first;
                self.claim_end = first + block;
            }
            let (index, end) = (self.rest, self.claim_end);
            // Taken out of `self` while it is read: a failure below has recorded it already.
            self.rest = end;
            let (first, len) = match s.ring.read_run(index, end) {
                Ok((first, len, wake)) => {
                    if wake {
                        s.wake_filler();
                    }
                    (first, len)
                }
                Err(_) => match s.take_slow(index, end, Some(&self.held))? {
                    Some(first) => (first, s.ring.run_len(index, end)),
                    None => {
                        // Lapped: the rest of the claim is skipped, never handed out.
                        self.give_back(&[(index, end)], false);
                        continue;
                    }
                },
            };
            // Rule 6 at take time, once per block: the clock, not the second the filler last
            // published, which is as old as the filler's last round (after a pause of the
            // process, older than max_lag).
            let deadline = StaleFrom::of(first >> shift, s.max_lag_ticks);
            let now = s.take_clock();
            if deadline.is_stale(now) {
                // Written before the filler's last sweep, or before a pause: not handed out.
                self.give_back(&[(index, end)], false);
                s.stale_found(now);
                continue;
            }
            self.rest = index + len;
            self.gap = first.wrapping_sub(index);
            self.next = first + 1;
            self.end = first + len;
            self.deadline = deadline;
            return Ok(first);
        }
    }
}

impl LocalTaker<'_> {
    /// Gives back `ranges` of this taker's claim (see [`Shared::give_back`]). A chunk's first
    /// index may carry the filler's wake-up (rule 3): if one is given back unread, the filler is
    /// woken here instead.
    #[cold]
    fn give_back(&self, ranges: &[(u64, u64)], retire: bool) {
        let s = self.shared;
        s.give_back(&self.held, ranges, retire);
        let k = s.ring.chunk();
        if ranges
            .iter()
            .any(|&(start, end)| start.next_multiple_of(k) < end)
        {
            s.wake_filler();
        }
    }
}

impl Drop for LocalTaker<'_> {
    /// Gives back what is left of the block (counted as discarded) and unregisters the taker:
    /// from here on the generator's counters include everything it handed out.
    fn drop(&mut self) {
        let ranges = [
            (
                self.next.wrapping_sub(self.gap),
                self.end.wrapping_sub(self.gap),
            ),
            (self.rest, self.claim_end),
        ];
        self.give_back(&ranges, true);
    }
}
