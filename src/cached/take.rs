//! The take paths: `next_id` (one `fetch_add` and a compare with this thread's cached chunk),
//! `next_id_async`, `try_next_id`, `next_ids`, and their slow paths when the ring is empty.

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
    /// lapped: the rest of the claim is skipped (counted as discarded, never handed out) and the
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
    fn read_ready(&self, index: u64) -> Option<u64> {
        let (id, wake) = self.ring.read(index).ok()?;
        if wake {
            self.wake_filler();
        }
        Some(id)
    }

    /// Refuses a batch that the lead cap can never hold (it would wait forever).
    fn check_batch(&self, count: usize) -> Result<(), Error> {
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
        let (lead, _) = self.max_lead?;
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

    /// The async slow path: like `take_slow`, but parks the task on the filler's notification.
    #[cfg(feature = "tokio")]
    pub(super) async fn take_slow_async(&self, index: u64, end: u64) -> Result<Option<u64>, Error> {
        self.counters.take_waits.fetch_add(1, Ordering::Relaxed);
        self.await_filler(|s| {
            let outcome = match s.ring.read(index) {
                Ok((id, _)) => Some(Ok(Some(id))),
                Err(Miss::Lapped) => Some(Ok(None)),
                Err(Miss::NotReady) => {
                    if !s.background {
                        s.pump();
                        s.ring.read(index).ok().map(|(id, _)| Ok(Some(id)))
                    } else {
                        None
                    }
                }
            };
            outcome.or_else(|| {
                s.failure().map(|err| match s.abandon(index, end, None) {
                    Some(id) => Ok(Some(id)),
                    None => Err(err),
                })
            })
        })
        .await
    }

    /// Waits, without claiming anything, until IDs are ready (or the ring will not be refilled),
    /// and says how many, up to `n`: a batch dropped while it waits has taken nothing.
    #[cfg(feature = "tokio")]
    async fn await_ready(&self, n: u64) -> Result<u64, Error> {
        // What is ready, up to `n`: a batch takes what there is rather than wait for a whole
        // chunk (with a threshold below a chunk, rule 3 would never make one ready).
        let ready = |s: &Self| s.ring.tail().saturating_sub(s.ring.cursor()).min(n);
        match ready(self) {
            0 => {}
            r => return Ok(r),
        }
        self.counters.take_waits.fetch_add(1, Ordering::Relaxed);
        self.await_filler(|s| {
            if ready(s) == 0 && !s.background {
                s.pump();
            }
            match ready(s) {
                0 => s.failure().map(Err),
                r => Some(Ok(r)),
            }
        })
        .await
    }

    /// Parks the task on the filler's notification until `check` has an answer; wakes the
    /// filler once. Cancel-safe: a dropped wait leaves no waiter counted.
    #[cfg(feature = "tokio")]
    async fn await_filler<T>(&self, mut check: impl FnMut(&Self) -> Option<T>) -> T {
        /// Counts this task among the waiters while it exists.
        struct Waiting<'a>(&'a std::sync::atomic::AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let mut woke = false;
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            self.async_waiters.fetch_add(1, Ordering::SeqCst);
            let _waiting = Waiting(&self.async_waiters);
            notified.as_mut().enable();
            if let Some(answer) = check(self) {
                return answer;
            }
            if !woke {
                // Once: a filler that finds nothing to do must not be woken again and again.
                self.wake_filler();
                woke = true;
            }
            notified.await;
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
    /// chunk; once per chunk (up to 1,024 IDs) it also reads the chunk's descriptor from the ring.
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
    /// chunk, or after a claim by another generator on this thread): reads the ring, caches the
    /// chunk, wakes the filler at the threshold, waits on an empty ring.
    #[inline(never)]
    fn next_id_new_chunk(&self, mut index: u64) -> Result<u64, Error> {
        let s = &*self.shared;
        loop {
            let (chunk, offset) = s.ring.split(index);
            match s.ring.read_chunk(chunk) {
                Ok((base, wake)) => {
                    let chunk_len = s.ring.chunk();
                    let first = chunk * chunk_len;
                    LAST_CHUNK.with(|c| c.set((s.id, first, chunk_len, base.wrapping_sub(first))));
                    if wake && offset == 0 {
                        s.wake_filler();
                    }
                    return Ok(base + offset);
                }
                Err(_) => match s.take_slow(index, index + 1, None)? {
                    Some(id) => return Ok(id),
                    // Lapped: this index is skipped, never handed out; claim another.
                    None => s.discard(index, index + 1),
                },
            }
            index = s.ring.claim(1);
        }
    }

    /// Takes the next ID, awaiting the filler when the ring is empty instead of spinning: the
    /// task is parked on a notification the filler sends after each round, so many tasks can wait
    /// through an empty ring without keeping a thread busy. The fast path is
    /// [`next_id`](Self::next_id)'s.
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let (a, b) = rt.block_on(async { (g.next_id_async().await, g.next_id_async().await) });
    /// assert!(b? > a?);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn next_id_async(&self) -> Result<u64, Error> {
        let s = &*self.shared;
        loop {
            let index = s.ring.claim(1);
            match s.ring.read(index) {
                Ok((id, wake)) => {
                    if wake {
                        s.wake_filler();
                    }
                    return Ok(id);
                }
                Err(_) => match s.take_slow_async(index, index + 1).await? {
                    Some(id) => return Ok(id),
                    None => s.discard(index, index + 1),
                },
            }
        }
    }

    /// Takes an ID only if one is ready now; `None` means the ring is empty at this instant (the
    /// filler has been woken). Never blocks.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// assert!(g.try_next_id().is_some()); // the ring is filled at build
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn try_next_id(&self) -> Option<u64> {
        let s = &*self.shared;
        loop {
            let c = s.ring.cursor();
            if s.ring.read(c).is_err() {
                s.wake_filler();
                return None;
            }
            if s.ring.claim_at(c, 1) {
                match s.ring.read(c) {
                    Ok((id, wake)) => {
                        if wake {
                            s.wake_filler();
                        }
                        return Some(id);
                    }
                    Err(_) => s.discard(c, c + 1), // lapped in between: claim another
                }
            }
        }
    }

    /// Fills `out` with consecutive IDs of this generator, claiming them all with one atomic
    /// operation. The IDs are strictly increasing.
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
        let k = s.ring.chunk();
        let mut filled = 0;
        while filled < out.len() {
            // At most one chunk per claim: the filler may reuse a slot once its chunk is claimed,
            // so a larger claim would be lapped while it is still being copied out.
            let n = ((out.len() - filled) as u64).min(k);
            let mut claim = Claim::new(s.ring.claim(n), n);
            // A chunk at a time: one validated read of its base, then a plain loop.
            while let Some((index, run)) = claim.next_run(k) {
                let base = match s.read_ready(index) {
                    Some(id) => Some(id),
                    None => s.take_slow(index, claim.end, None)?,
                };
                if !claim.copy(s, base, run, out, &mut filled) {
                    break;
                }
            }
        }
        Ok(())
    }

    /// [`next_ids`](Self::next_ids) for async code: awaits the filler instead of blocking, and
    /// batches take their turn first come, first served, so that under the lead cap every batch
    /// completes in bounded time however many wait (no batch is starved by others taking a chunk
    /// each in turn). It claims a chunk only once the chunk is ready: a batch dropped while it
    /// waits (a client that went away) has taken nothing.
    ///
    /// # Errors
    ///
    /// As [`next_ids`](Self::next_ids).
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let mut ids = vec![0u64; 10_000];
    /// rt.block_on(g.next_ids_async(&mut ids))?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn next_ids_async(&self, out: &mut [u64]) -> Result<(), Error> {
        let s = &*self.shared;
        s.check_batch(out.len())?;
        let _turn = s.batch_turn.lock().await;
        let k = s.ring.chunk();
        let mut filled = 0;
        while filled < out.len() {
            let n = ((out.len() - filled) as u64).min(k);
            let n = s.await_ready(n).await?;
            let mut claim = Claim::new(s.ring.claim(n), n);
            while let Some((index, run)) = claim.next_run(k) {
                let base = match s.read_ready(index) {
                    Some(id) => Some(id),
                    None => s.take_slow_async(index, claim.end).await?,
                };
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
