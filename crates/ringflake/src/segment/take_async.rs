//! The async takes (feature `tokio`): a take that finds both segments used up awaits the keeper
//! or the claimer (parked, not blocking a runtime thread), at most the generator's `max_wait`.
//! Dropped while it waits, it takes nothing more.

use super::generator::{SegmentGenerator, Shared};
use super::tag::{Step, TagCell};
use super::take::{SegmentTag, check_count, claim_now};
use super::window::{MAX_CLAIM, Miss};
use crate::Error;
use std::time::Instant;

impl SegmentGenerator {
    /// The next number of `tag`, for async code: [`SegmentTag::next_id_async`] after a lookup.
    ///
    /// # Errors
    ///
    /// As [`tag`](Self::tag) and [`SegmentTag::next_id`].
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 10, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// assert_eq!(rt.block_on(g.next_id_async("orders"))?, 1);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub async fn next_id_async(&self, tag: &str) -> Result<i64, Error> {
        let cell = self.shared.cell(tag)?;
        take_one_async(&self.shared, &cell).await
    }

    /// Fills `out` with numbers of `tag`, for async code: [`SegmentTag::next_ids_async`] after a
    /// lookup.
    ///
    /// # Errors
    ///
    /// As [`tag`](Self::tag) and [`SegmentTag::next_ids`].
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 10, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let mut out = [0i64; 25]; // across three ranges of 10
    /// rt.block_on(g.next_ids_async("orders", &mut out))?;
    /// assert_eq!(out[24], 25);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub async fn next_ids_async(&self, tag: &str, out: &mut [i64]) -> Result<(), Error> {
        check_count(out.len())?;
        let cell = self.shared.cell(tag)?;
        fill_async(&self.shared, &cell, out).await
    }
}

impl SegmentTag {
    /// [`next_id`](Self::next_id) for async code: when both segments are used up, the task is
    /// parked until the next range is ready (at most the generator's `max_wait`).
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 7, 10, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let orders = g.tag("orders")?;
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// assert_eq!(rt.block_on(orders.next_id_async())?, 7);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub async fn next_id_async(&self) -> Result<i64, Error> {
        take_one_async(&self.shared, &self.cell).await
    }

    /// [`next_ids`](Self::next_ids) for async code.
    ///
    /// # Errors
    ///
    /// As [`next_ids`](Self::next_ids).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 1000, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let mut out = [0i64; 4];
    /// rt.block_on(g.tag("orders")?.next_ids_async(&mut out))?;
    /// assert_eq!(out, [1, 2, 3, 4]);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub async fn next_ids_async(&self, out: &mut [i64]) -> Result<(), Error> {
        check_count(out.len())?;
        fill_async(&self.shared, &self.cell, out).await
    }
}

impl super::take::PendingNumber {
    /// Waits for the number in async code (the task parked, not the thread), as
    /// [`SegmentTag::next_id_async`] does.
    ///
    /// # Errors
    ///
    /// As [`SegmentTag::next_id`].
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 7, 10, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let pending = g.tag("orders")?.try_next_id().unwrap_err();
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// assert_eq!(rt.block_on(pending.wait_async())?, 7);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub async fn wait_async(self) -> Result<i64, Error> {
        resolve_async(&self.shared, &self.cell, self.miss)
            .await
            .map(|(n, _)| n)
    }
}

async fn take_one_async(shared: &Shared, cell: &TagCell) -> Result<i64, Error> {
    claim_async(shared, cell, 1).await.map(|(n, _)| n)
}

async fn fill_async(shared: &Shared, cell: &TagCell, out: &mut [i64]) -> Result<(), Error> {
    let mut done = 0;
    while done < out.len() {
        let want = ((out.len() - done) as u64).min(MAX_CLAIM);
        let (first, n) = claim_async(shared, cell, want).await?;
        for (k, slot) in out[done..done + n as usize].iter_mut().enumerate() {
            *slot = first + k as i64;
        }
        done += n as usize;
    }
    Ok(())
}

async fn claim_async(shared: &Shared, cell: &TagCell, count: u64) -> Result<(i64, u64), Error> {
    match claim_now(shared, cell, count) {
        Ok(first) => Ok((first, count)),
        Err(miss) => resolve_async(shared, cell, miss).await,
    }
}

/// Counts a waiting take while it waits, whether it ends or is dropped.
struct Waiting<'c>(&'c TagCell);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.lock().waiters -= 1;
    }
}

/// [`resolve`](super::take::resolve), awaiting instead of blocking.
async fn resolve_async(shared: &Shared, cell: &TagCell, miss: Miss) -> Result<(i64, u64), Error> {
    let started = Instant::now();
    let deadline = started + shared.max_wait;
    let mut miss = miss;
    let mut waited = false;
    loop {
        // Registered before the state is looked at, so no change between the two is missed.
        let notified = cell.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let waiting = {
            let mut st = cell.lock();
            match cell.resolve(&mut st, miss) {
                Step::Got(first, n) => return Ok((first, n)),
                Step::Fail(e) => return Err(e),
                Step::Retry => None,
                Step::Wait => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(cell.not_ready(&st, now - started));
                    }
                    if !waited && st.wanted {
                        shared.wake_claimer();
                    }
                    st.waiters += 1;
                    Some(Waiting(cell))
                }
            }
        };
        match waiting {
            None => match claim_now(shared, cell, miss.count) {
                Ok(first) => return Ok((first, miss.count)),
                Err(m) => miss = m,
            },
            Some(waiting) => {
                if !waited {
                    waited = true;
                    cell.count_wait();
                    shared.wake_keeper();
                }
                // The keeper tells waiting takes at its timed looks (every 100 ms): the deadline
                // is checked at least that often.
                notified.await;
                drop(waiting);
            }
        }
    }
}
