//! The take paths: `next_id` (one `fetch_add` and a compare with this thread's cached chunk),
//! `try_next_id`, `next_ids`, and their slow paths when the ring is empty. The async takes are in
//! `take_async` (feature `tokio`).

use super::shared::{CachedUidGenerator, Shared};
use crate::Error;
use crate::ring::Miss;
use crossbeam_utils::Backoff;
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// One claim of a batch: indices `index..end`, copied out a chunk at a time.
struct Claim {
    index: u64,
    end: u64,
}

impl Claim {
    fn new(first: u64, n: u64) -> Self {
        Claim {
            index: first,
            end: first + n,
        }
    }

    /// The next run: its first index and its length, to the end of its chunk or of the claim.
    fn next_run(&self, k: u64) -> Option<(u64, u64)> {
        (self.index < self.end)
            .then(|| (self.index, (k - self.index % k).min(self.end - self.index)))
    }

    /// Copies the run of IDs from `base` into `out` at `filled`. `base` is `None` when the run was
    /// lapped or found stale: the rest of the claim is skipped (counted as discarded, never handed out) and the
    /// caller claims again for what is missing; returns whether to go on.
    fn copy(
        &mut self,
        s: &Shared,
        base: Option<u64>,
        run: u64,
        out: &mut [u64],
        filled: &mut usize,
    ) -> bool {
        let Some(base) = base else {
            s.discard(self.index, self.end);
            return false;
        };
        for (slot, id) in out[*filled..*filled + run as usize].iter_mut().zip(base..) {
            *slot = id;
        }
        *filled += run as usize;
        self.index += run;
        true
    }
}

impl Shared {
    /// The ID at `index` if it is ready, waking the filler if its chunk asks to.
    pub(super) fn read_ready(&self, index: u64) -> Option<u64> {
        let (id, wake) = self.ring.read(index).ok()?;
        if wake {
            self.wake_filler();
        }
        Some(id)
    }

    /// Rule 6 at take time: whether `id` is `max_lag` or more behind the clock's delta second
    /// `now` ([`crate::stale`], the rule the filler's sweep applies too).
    #[inline]
    pub(super) fn is_stale(&self, id: u64, now: u64) -> bool {
        crate::stale::is_stale(id >> self.layout.time_shift(), self.max_lag_ticks, now)
    }

    /// The clock's delta second, read by a take once per chunk or batch it claims (never per
    /// ID), and published for per-thread takers: after a pause of the process, the first take
    /// to look tells them too, before the filler's next round.
    pub(super) fn take_clock(&self) -> u64 {
        let now = self.now_delta();
        self.ring.publish_seen(now);
        now
    }

    /// A take found its claim stale: the filler has not swept since the clock moved (the
    /// process was paused, or the filler not scheduled). Sweeps the stale prefix of the ring now
    /// and wakes the filler to write the current second.
    #[cold]
    pub(super) fn stale_found(&self, now: u64) {
        self.sweep_stale(self.ring.tail(), now);
        self.wake_filler();
    }

    /// The ID of a batch's run starting at `base`, unless it is stale at the clock (read at most
    /// once per claim, into `now`): then the ring's stale prefix is swept and `None` returned,
    /// and the caller discards the rest of its claim and claims again.
    pub(super) fn fresh(&self, base: Option<u64>, now: &mut Option<u64>) -> Option<u64> {
        let base = base?;
        let now = *now.get_or_insert_with(|| self.take_clock());
        if self.is_stale(base, now) {
            self.stale_found(now);
            return None;
        }
        Some(base)
    }

    /// The ID of claimed `index`, outside this thread's cached chunk: reads its chunk, checks it
    /// against the clock (rule 6 at take time, once per chunk a thread reads), caches it for this
    /// thread's next claims, and wakes the filler if the chunk asks to. `Ok(None)`: the chunk
    /// was stale; `index` is discarded and the ring's stale prefix swept: claim again.
    fn take_at(&self, index: u64) -> Result<Option<u64>, Miss> {
        let (chunk, offset) = self.ring.split(index);
        let (base, wake) = self.ring.read_chunk(chunk)?;
        let now = self.take_clock();
        if self.is_stale(base, now) {
            self.discard(index, index + 1);
            self.stale_found(now);
            return Ok(None);
        }
        let len = self.ring.chunk();
        let first = chunk * len;
        LAST_CHUNK.with(|c| c.set((self.id, first, len, base.wrapping_sub(first))));
        if wake && offset == 0 {
            self.wake_filler();
        }
        Ok(Some(base + offset))
    }

    /// Refuses a batch that the lead cap can never hold (it would wait forever).
    pub(super) fn check_batch(&self, count: usize) -> Result<(), Error> {
        match self.max_batch() {
            Some(max) if count as u64 > max => Err(Error::BatchTooLarge {
                count: count as u64,
                max,
            }),
            _ => Ok(()),
        }
    }

    /// The most IDs there can be at once under the lead cap: seconds `now..=now + max_lead`.
    fn max_batch(&self) -> Option<u64> {
        let lead = self.max_lead_ticks()?;
        Some(
            lead.saturating_add(1)
                .saturating_mul(self.layout.max_sequence() + 1),
        )
    }

    /// The slow path of a take: the ring had nothing at `index` yet. `Ok(None)`: the index was
    /// lapped (its caller was descheduled for a whole ring), claim another. On failure the rest
    /// of the claim, `index..end`, is discarded.
    #[cold]
    /// `held`: the block of the per-thread taker the claim belongs to, given back on failure.
    pub(super) fn take_slow(
        &self,
        index: u64,
        end: u64,
        held: Option<&crate::ring::Held>,
    ) -> Result<Option<u64>, Error> {
        self.counters.take_waits.fetch_add(1, Ordering::Relaxed);
        let backoff = Backoff::new();
        let mut rounds = 0u32;
        loop {
            match self.ring.read(index) {
                Ok((id, _)) => return Ok(Some(id)),
                Err(Miss::Lapped) => return Ok(None), // counted by the caller
                Err(Miss::NotReady) => {}
            }
            if !self.background {
                self.pump();
                if let Ok((id, _)) = self.ring.read(index) {
                    return Ok(Some(id));
                }
            } else if rounds.is_multiple_of(64) {
                self.wake_filler();
            }
            if let Some(err) = self.failure() {
                // The filler wrote everything it will before raising the flag: look once more.
                // Else the claim stays unread: it is skipped, never handed out.
                return match self.abandon(index, end, held) {
                    Some(id) => Ok(Some(id)),
                    None => Err(err),
                };
            }
            rounds = rounds.wrapping_add(1);
            if backoff.is_completed() {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                backoff.snooze();
            }
        }
    }

    /// Counts a take among those that had to wait, once per take.
    pub(super) fn count_wait(&self, counted: &mut bool) {
        if !*counted {
            self.counters.take_waits.fetch_add(1, Ordering::Relaxed);
            *counted = true;
        }
    }
}

thread_local! {
    /// The chunk this thread last read in `next_id`: (generator id, its first index, its number
    /// of indices, first ID minus first index), so a claim `i` in it is the ID `i + delta`
    /// (wrapping). A `const` initialiser of a `Copy` value: no lazy initialisation, no
    /// destructor, no allocation.
    static LAST_CHUNK: Cell<(u64, u64, u64, u64)> = const { Cell::new((0, 0, 0, 0)) };
}

impl CachedUidGenerator {
    /// Takes the next ID.
    ///
    /// The per-ID path is one `fetch_add` on the cursor and a compare with this thread's cached
    /// chunk; once per chunk (up to 1,024 IDs) it also reads the chunk's descriptor from the ring
    /// and the clock (a chunk `max_lag` behind it is dropped, never handed out: rule 6).
    /// No lock, no allocation, no syscall, no log line, no metrics call. When the ring is empty it
    /// waits for the filler (spinning, then yielding, then sleeping 50 µs at a time) rather than
    /// failing; IDs taken by one thread are strictly increasing.
    ///
    /// # Errors
    ///
    /// [`Error::TimeBitsExhausted`] once the time bits are used up, [`Error::LeadLimitReached`]
    /// with a `max_lead` cap and [`LeadPolicy::Fail`](crate::LeadPolicy::Fail), [`Error::Shutdown`] if the filler died.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// let ids: Vec<u64> = (0..100_000).map(|_| g.next_id()).collect::<Result<_, _>>()?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[inline]
    pub fn next_id(&self) -> Result<u64, Error> {
        let s = &*self.shared;
        // This thread's last chunk of this generator: a chunk's base never changes once written,
        // so a claim that lands in it needs no read of the ring at all. This part is small enough
        // to be inlined into the caller; everything else is in `next_id_new_chunk`.
        let (generator, start, len, delta) = LAST_CHUNK.with(Cell::get);
        // Everything but the claim itself is read before it: the claim is a locked instruction,
        // and a load issued after it waits for it.
        let mine = generator == s.id;
        let index = s.ring.claim(1);
        if mine && index.wrapping_sub(start) < len {
            return Ok(index.wrapping_add(delta));
        }
        self.next_id_new_chunk(index)
    }

    /// [`next_id`](Self::next_id) for a claim outside this thread's cached chunk (once per
    /// chunk, or after a claim by another generator on this thread): reads the ring, checks the
    /// chunk against the clock, caches it, wakes the filler at the threshold, waits on an empty
    /// ring.
    #[inline(never)]
    fn next_id_new_chunk(&self, mut index: u64) -> Result<u64, Error> {
        let s = &*self.shared;
        loop {
            match s.take_at(index) {
                Ok(Some(id)) => return Ok(id),
                // Stale: discarded and swept; claim another.
                Ok(None) => {}
                Err(Miss::NotReady) => match s.take_slow(index, index + 1, None)? {
                    // Written now: read it (and check it) again.
                    Some(_) => continue,
                    // Lapped: this index is skipped, never handed out; claim another.
                    None => s.discard(index, index + 1),
                },
                Err(Miss::Lapped) => s.discard(index, index + 1),
            }
            index = s.ring.claim(1);
        }
    }

    /// Takes an ID only if one is ready now and no take is waiting for IDs (the ready ones are
    /// theirs, in turn); `None` otherwise (on an empty ring the filler has been woken). Never
    /// blocks.
    ///
    /// Meant for one ID at a time from a handler (a request, a message): it reads the clock once
    /// per call (no syscall where the system has a vDSO clock, as Linux does) and never hands
    /// out an ID `max_lag` behind it, also right after the process was paused. For many IDs on
    /// one thread, [`next_id`](Self::next_id) and [`LocalTaker`](crate::LocalTaker) read it once
    /// per chunk.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// assert!(g.try_next_id().is_some()); // the ring is filled at build
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn try_next_id(&self) -> Option<u64> {
        let s = &*self.shared;
        if !s.queue.is_empty() {
            // Takes are waiting: the ready IDs are theirs, in turn.
            return None;
        }
        loop {
            let c = s.ring.cursor();
            if s.ring.read(c).is_err() {
                s.wake_filler();
                return None;
            }
            if !s.ring.claim_at(c, 1) {
                continue;
            }
            match s.ring.read(c) {
                Ok((id, wake)) => {
                    // Rule 6 at take time, for the one ID this take claims.
                    let now = s.take_clock();
                    if s.is_stale(id, now) {
                        s.discard(c, c + 1);
                        s.stale_found(now);
                        continue;
                    }
                    if wake {
                        s.wake_filler();
                    }
                    return Some(id);
                }
                Err(_) => s.discard(c, c + 1), // lapped in between: claim another
            }
        }
    }

    /// Fills `out` with consecutive IDs of this generator, one atomic claim per chunk of up to
    /// 1,024 IDs. The IDs are strictly increasing. When takes are waiting in the queue of
    /// [`next_ids_async`](Self::next_ids_async), the batch waits (blocking) for its turn behind
    /// them; otherwise its claims take their place in the ring's order at once.
    ///
    /// # Errors
    ///
    /// [`Error::BatchTooLarge`] at once if `out` is longer than the lead cap can ever hold
    /// ([`max_batch`](Self::max_batch)); otherwise as [`next_id`](Self::next_id), and the IDs not
    /// yet written to `out` are discarded, never handed out later.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// let mut ids = [0u64; 1000];
    /// g.next_ids(&mut ids)?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn next_ids(&self, out: &mut [u64]) -> Result<(), Error> {
        let s = &*self.shared;
        s.check_batch(out.len())?;
        // Behind the takes already waiting, if any (otherwise its claims take their place in
        // the ring's order at once, and takes that come later wait behind them there).
        let place = (!s.queue.is_empty()).then(|| s.queue.join(out.len() as u64));
        if let Some(place) = &place
            && !place.is_head()
        {
            s.count_wait(&mut false);
            place.wait_turn();
        }
        let k = s.ring.chunk();
        let mut filled = 0;
        while filled < out.len() {
            // At most one chunk per claim: the filler may reuse a slot once its chunk is claimed,
            // so a larger claim would be lapped while it is still being copied out.
            let n = ((out.len() - filled) as u64).min(k);
            let mut claim = Claim::new(s.ring.claim(n), n);
            // The clock, read once for the claim when its first run is ready.
            let mut now = None;
            // A chunk at a time: one validated read of its base, then a plain loop.
            while let Some((index, run)) = claim.next_run(k) {
                let base = match s.read_ready(index) {
                    Some(id) => Some(id),
                    None => s.take_slow(index, claim.end, None)?,
                };
                let base = s.fresh(base, &mut now);
                if !claim.copy(s, base, run, out, &mut filled) {
                    break;
                }
            }
        }
        Ok(())
    }

    /// The largest batch [`next_ids`](Self::next_ids) accepts: what the lead cap can hold at
    /// once, `(max_lead + 1) x 2^seq_bits` IDs; `None` without a cap.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringflake::{CachedUidGenerator, Error, Layout, LeadPolicy};
    /// let layout = Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS)?;
    /// let g = CachedUidGenerator::builder(layout)
    ///     .worker_id(1)
    ///     .max_lead(Duration::from_secs(10), LeadPolicy::Wait)
    ///     .build()?;
    /// assert_eq!(g.max_batch(), Some(11 * 8192));
    /// let mut too_many = vec![0u64; 100_000];
    /// let err = g.next_ids(&mut too_many).unwrap_err();
    /// assert_eq!(err, Error::BatchTooLarge { count: 100_000, max: 90_112 });
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn max_batch(&self) -> Option<u64> {
        self.shared.max_batch()
    }

    /// The lead cap: how far ahead of the clock the filler may borrow (`None`: unbounded).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, DEFAULT_MAX_LEAD, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// assert_eq!(g.max_lead(), Some(DEFAULT_MAX_LEAD));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn max_lead(&self) -> Option<Duration> {
        self.shared.max_lead.map(|(s, _)| Duration::from_secs(s))
    }
}
