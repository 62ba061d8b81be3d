//! The async takes (feature `tokio`): `next_id_async` and `next_ids_async`, which await the
//! filler instead of spinning or blocking, and are served first come, first served through the
//! queue of [`super::queue`]. The sync takes they share their reads and checks with are in
//! [`super::take`].

pub(super) mod waiters;

use super::shared::{CachedUidGenerator, Shared};
use crate::Error;
use crate::ring::Miss;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The claims of a batch at the head of the queue, held (not counted as issued) while it runs:
/// issued together when it completes, discarded together when it is given up (dropped) or
/// fails, so that a take that gives up has taken nothing.
struct HeldBatch<'s> {
    shared: &'s Shared,
    ranges: Vec<(u64, u64)>,
    done: bool,
}

impl<'s> HeldBatch<'s> {
    fn new(shared: &'s Shared) -> Self {
        HeldBatch {
            shared,
            ranges: Vec::new(),
            done: false,
        }
    }

    /// Claims `n` indices, held.
    fn claim(&mut self, n: u64) -> u64 {
        let first = self.shared.claim_for_batch(n);
        self.ranges.push((first, first + n));
        first
    }

    /// The last claim was lapped from `at` on: that part is discarded, claim again for it.
    fn lapped(&mut self, at: u64) {
        if let Some(last) = self.ranges.last_mut() {
            self.shared.split_batch(*last, at);
            last.1 = at;
        }
    }

    /// The batch is handed out: its claims count as issued.
    fn finish(mut self) {
        self.shared.settle_batch(&self.ranges, false);
        self.done = true;
    }
}

impl Drop for HeldBatch<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.shared.settle_batch(&self.ranges, true);
        }
    }
}

impl Shared {
    /// Waits, at the head of the queue, for the ID at `index`, claimed by a batch: claimed when
    /// ready, it is not ready only when a take outside the queue (`next_id`, a `LocalTaker`)
    /// claimed the same IDs in between. `Ok(None)`: lapped.
    async fn await_index(&self, index: u64) -> Result<Option<u64>, Error> {
        self.await_filler(|s| {
            let look = |s: &Self| match s.ring.read(index) {
                Ok((id, _)) => Some(Some(id)),
                Err(Miss::Lapped) => Some(None),
                Err(Miss::NotReady) => None,
            };
            if let Some(found) = look(s) {
                return Some(Ok(found));
            }
            if !s.background {
                s.pump();
                if let Some(found) = look(s) {
                    return Some(Ok(found));
                }
            }
            // The filler wrote everything it will before raising the flag: look once more.
            s.failure().map(|err| look(s).ok_or(err))
        })
        .await
    }

    /// Waits, without claiming anything, until IDs are ready (or the ring will not be refilled),
    /// and says how many, up to `n`: a batch dropped while it waits has taken nothing. Counts
    /// the take as waiting once (`counted`).
    async fn await_ready(&self, n: u64, counted: &mut bool) -> Result<u64, Error> {
        // What is ready, up to `n`: a batch takes what there is rather than wait for a whole
        // chunk (with a threshold below a chunk, rule 3 would never make one ready).
        let ready = |s: &Self| s.ring.tail().saturating_sub(s.ring.cursor()).min(n);
        match ready(self) {
            0 => {}
            r => return Ok(r),
        }
        self.count_wait(counted);
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
    async fn await_filler<T>(&self, mut check: impl FnMut(&Self) -> Option<T>) -> T {
        /// Counts this task among the waiters while it exists.
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let mut woke = false;
        loop {
            let waiters = &self.async_waiters;
            let notified = waiters.notify.notified();
            tokio::pin!(notified);
            waiters.count.fetch_add(1, Ordering::SeqCst);
            let _waiting = Waiting(&waiters.count);
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

impl CachedUidGenerator {
    /// Takes the next ID, awaiting the filler when the ring is empty instead of spinning. An ID
    /// that is ready while no take waits is taken at once, as [`try_next_id`](Self::try_next_id)
    /// does; otherwise the take queues, first come, first served, behind the takes already
    /// waiting (see [`next_ids_async`](Self::next_ids_async)): parked, keeping no thread busy.
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id).
    ///
    /// # Cancellation
    ///
    /// Dropped while it waits, it takes nothing and leaves its place to the next take.
    ///
    /// ```
    /// use ringflake::{CachedUidGenerator, Layout};
    /// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let (a, b) = rt.block_on(async { (g.next_id_async().await, g.next_id_async().await) });
    /// assert!(b? > a?);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub async fn next_id_async(&self) -> Result<u64, Error> {
        if let Some(id) = self.try_next_id() {
            return Ok(id);
        }
        let mut one = [0u64];
        self.next_ids_async(&mut one).await?;
        Ok(one[0])
    }

    /// [`next_ids`](Self::next_ids) for async code: awaits the filler instead of blocking.
    ///
    /// # First come, first served
    ///
    /// Every batch, and every [`next_id_async`](Self::next_id_async) that cannot be served at
    /// once, takes a place in one queue and is served in the order it arrived: only the head of
    /// the queue takes IDs, as they become ready, and takes that arrive later (async or
    /// [`try_next_id`](Self::try_next_id), or a sync [`next_ids`](Self::next_ids)) queue behind
    /// it. Under the lead cap, where `2^seq_bits` IDs become ready per second, a batch therefore
    /// waits for the IDs queued ahead of it ([`Stats::waiting_ids`](crate::Stats::waiting_ids))
    /// and no longer, however many others arrive. `next_id` and [`LocalTaker`](crate::LocalTaker)
    /// do not queue (their per-ID path is one atomic add and reads nothing else shared): they
    /// claim their place in the ring's order as they arrive and wait for it there, so in a
    /// process that mixes them with waiting async takes, they can be served first.
    ///
    /// # Cancellation
    ///
    /// A batch dropped while it waits (a client that went away) takes nothing: it leaves its
    /// place in the queue, and IDs it had claimed at the head are counted as discarded, never
    /// handed out, not as issued.
    ///
    /// # Errors
    ///
    /// As [`next_ids`](Self::next_ids); on an error the batch hands out nothing (what it had
    /// claimed is counted as discarded).
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
    pub async fn next_ids_async(&self, out: &mut [u64]) -> Result<(), Error> {
        let s = &*self.shared;
        s.check_batch(out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        let mut waited = false;
        let place = s.queue.join(out.len() as u64);
        if !place.is_head() {
            s.count_wait(&mut waited);
            place.turn().await;
        }
        // The head: the only take of the queue that claims, and only IDs that are ready.
        let mut batch = HeldBatch::new(s);
        let k = s.ring.chunk();
        let mut filled = 0;
        while filled < out.len() {
            let n = ((out.len() - filled) as u64).min(k);
            let n = s.await_ready(n, &mut waited).await?;
            let mut index = batch.claim(n);
            let end = index + n;
            // The clock, read once for the claim when its first run is ready.
            let mut now = None;
            while index < end {
                let run = s.ring.run_len(index, end);
                let base = match s.read_ready(index) {
                    Some(id) => Some(id),
                    None => s.await_index(index).await?,
                };
                // Lapped, or stale (rule 6 at take time: the ring's stale IDs are swept): the rest
                // of this claim is discarded; claim again for it.
                let Some(base) = s.fresh(base, &mut now) else {
                    batch.lapped(index);
                    break;
                };
                for (slot, id) in out[filled..filled + run as usize].iter_mut().zip(base..) {
                    *slot = id;
                }
                filled += run as usize;
                index += run;
                place.served(run);
            }
        }
        batch.finish();
        Ok(())
    }
}
