//! The sync takes: [`SegmentTag`] (a tag's handle) and [`SegmentGenerator`]'s takes by name. A
//! take is one claim in the tag's window; a miss is resolved under the tag's lock
//! ([`TagCell::resolve`](super::tag::TagCell::resolve)), waiting at most the generator's
//! `max_wait` for the keeper or the claimer.

use super::error::SegmentError;
use super::generator::{SEGMENT_MAX_BATCH, SegmentGenerator, Shared};
use super::tag::{Step, TagCell};
use super::window::{MAX_CLAIM, Miss};
use crate::Error;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One business tag of a [`SegmentGenerator`], to take from without looking the tag up each
/// time. Cheap to clone; it stays valid while the generator runs (a tag removed from the table
/// then fails every take with [`SegmentError::Removed`]).
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use ringflake::{SegmentGenerator, SegmentTable};
///
/// let dir = tempfile::tempdir().unwrap();
/// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
/// table.add("orders", 100, 1000, "")?;
/// let g = SegmentGenerator::builder(table).build()?;
/// let orders = g.tag("orders")?;
/// assert_eq!(orders.name(), "orders");
/// assert_eq!(orders.next_id()?, 100);
/// assert_eq!(orders.next_id()?, 101);
/// # }
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Clone)]
pub struct SegmentTag {
    pub(crate) cell: Arc<TagCell>,
    pub(crate) shared: Arc<Shared>,
}

impl fmt::Debug for SegmentTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SegmentTag")
            .field("name", &self.cell.name)
            .finish_non_exhaustive()
    }
}

impl SegmentGenerator {
    /// The handle of `tag`.
    ///
    /// # Errors
    ///
    /// [`SegmentError::InvalidTag`] for a tag that cannot be served (over 128 bytes, a
    /// character outside `A-Z a-z 0-9 - . _ ~`); [`SegmentError::UnknownTag`] for a tag not in
    /// the table as last read (a reread is then asked for, at most one a second).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use ringflake::{Error, SegmentError};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let e = g.tag("nope").unwrap_err();
    /// assert!(matches!(e, Error::Segment(SegmentError::UnknownTag { tags: 0, .. })), "{e}");
    /// let e = g.tag(&"x".repeat(200)).unwrap_err();
    /// assert!(e.to_string().contains("200 bytes long: at most 128"), "{e}");
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn tag(&self, tag: &str) -> Result<SegmentTag, Error> {
        Ok(SegmentTag {
            cell: self.shared.cell(tag)?,
            shared: Arc::clone(&self.shared),
        })
    }

    /// The next number of `tag`: [`SegmentTag::next_id`] after a lookup of the tag.
    ///
    /// # Errors
    ///
    /// As [`tag`](Self::tag) and [`SegmentTag::next_id`].
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 2, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// // Ranges of 2: the next range is claimed as the numbers run out.
    /// let numbers: Vec<i64> = (0..5).map(|_| g.next_id("orders")).collect::<Result<_, _>>()?;
    /// assert_eq!(numbers, [1, 2, 3, 4, 5]);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn next_id(&self, tag: &str) -> Result<i64, Error> {
        let cell = self.shared.cell(tag)?;
        take_one(&self.shared, &cell)
    }

    /// Fills `out` with numbers of `tag`: [`SegmentTag::next_ids`] after a lookup of the tag.
    ///
    /// # Errors
    ///
    /// As [`tag`](Self::tag) and [`SegmentTag::next_ids`].
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 1000, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let mut out = [0i64; 3];
    /// g.next_ids("orders", &mut out)?;
    /// assert_eq!(out, [1, 2, 3]);
    /// assert!(g.next_ids("orders", &mut []).is_err()); // count 0
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn next_ids(&self, tag: &str, out: &mut [i64]) -> Result<(), Error> {
        check_count(out.len())?;
        let cell = self.shared.cell(tag)?;
        fill(&self.shared, &cell, out)
    }
}

impl SegmentTag {
    /// The tag's name.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 10, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// assert_eq!(g.tag("orders")?.name(), "orders");
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.cell.name
    }

    /// The next number of this tag: numbers one thread takes are strictly increasing.
    ///
    /// Per number: one atomic add on the tag's counter and a seqlock read of its descriptor
    /// (four loads), no lock, no allocation, no syscall, no log line, no metrics call. Once a
    /// chunk (the taker whose number reaches the tag's wake offset): an unpark of the keeper.
    /// When the current range is used up and the next one is not ready, the take waits for it
    /// (the generator's `max_wait`).
    ///
    /// # Errors
    ///
    /// [`SegmentError::NotReady`] after waiting `max_wait` in vain (the database is down or
    /// slow, or the step too small for the demand; the cause is named), or at once when the
    /// row is at fault (a step of 0, `max_id` at its end); [`SegmentError::Removed`] once the
    /// row is deleted; [`SegmentError::Shutdown`] after the generator is dropped.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 1000, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let orders = g.tag("orders")?;
    /// let mut last = 0;
    /// for _ in 0..5_000 {
    ///     let n = orders.next_id()?;
    ///     assert!(n > last);
    ///     last = n;
    /// }
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[inline]
    pub fn next_id(&self) -> Result<i64, Error> {
        take_one(&self.shared, &self.cell)
    }

    /// The next number of this tag if one is ready now; else the take's claim, to wait for
    /// ([`PendingNumber`]). The common case costs what [`next_id`](Self::next_id) costs and
    /// clones nothing; only a take that has to wait owns a handle on the tag, so that it can wait
    /// where the caller chooses (an async task, another thread).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 1000, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let orders = g.tag("orders")?;
    /// // Nothing claimed yet: the first take waits for the first range.
    /// let first = match orders.try_next_id() {
    ///     Ok(n) => n,
    ///     Err(pending) => pending.wait()?,
    /// };
    /// assert_eq!(first, 1);
    /// assert_eq!(orders.try_next_id().ok(), Some(2));
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`PendingNumber`] when no number is ready now (its wait fails as
    /// [`next_id`](Self::next_id) does).
    #[inline]
    pub fn try_next_id(&self) -> Result<i64, PendingNumber> {
        claim_now(&self.shared, &self.cell, 1).map_err(|miss| PendingNumber {
            cell: Arc::clone(&self.cell),
            shared: Arc::clone(&self.shared),
            miss,
        })
    }

    /// Fills `out` with consecutive numbers of this tag where they come from one range (a batch
    /// that spans the end of a range continues in the next one): one atomic add per 65,536
    /// numbers.
    ///
    /// # Errors
    ///
    /// [`SegmentError::Count`] for an empty `out` or one longer than 100,000
    /// ([`SEGMENT_MAX_BATCH`]); otherwise as [`next_id`](Self::next_id) (numbers already taken
    /// for the batch are then lost, never handed out).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 300, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let mut out = vec![0i64; 1000];
    /// g.tag("orders")?.next_ids(&mut out)?;
    /// assert!(out.windows(2).all(|w| w[0] < w[1]));
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn next_ids(&self, out: &mut [i64]) -> Result<(), Error> {
        check_count(out.len())?;
        fill(&self.shared, &self.cell, out)
    }
}

/// A take of [`SegmentTag::try_next_id`] that found no number ready: the number it claimed,
/// handed out once the keeper or the claimer makes it valid ([`wait`](Self::wait), or
/// `wait_async` with the feature `tokio`), at most the generator's `max_wait` later. Dropped
/// without waiting, its number is skipped: a gap in the tag's numbers, never a repeat.
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// let dir = tempfile::tempdir().unwrap();
/// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
/// table.add("orders", 7, 10, "")?;
/// let g = ringflake::SegmentGenerator::builder(table).build()?;
/// let pending = g.tag("orders")?.try_next_id().unwrap_err(); // no range claimed yet
/// assert_eq!(pending.wait()?, 7);
/// # }
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct PendingNumber {
    pub(crate) cell: Arc<TagCell>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) miss: Miss,
}

impl fmt::Debug for PendingNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingNumber")
            .field("tag", &self.cell.name)
            .finish_non_exhaustive()
    }
}

impl PendingNumber {
    /// Waits for the number (blocking the thread), as [`SegmentTag::next_id`] does.
    ///
    /// # Errors
    ///
    /// As [`SegmentTag::next_id`].
    pub fn wait(self) -> Result<i64, Error> {
        resolve(&self.shared, &self.cell, self.miss).map(|(n, _)| n)
    }
}

/// Refuses a batch of `n` outside `1..=SEGMENT_MAX_BATCH`.
pub(crate) fn check_count(n: usize) -> Result<(), Error> {
    if n == 0 || n > SEGMENT_MAX_BATCH {
        return Err(Error::Segment(SegmentError::Count {
            count: n as u64,
            max: SEGMENT_MAX_BATCH as u64,
        }));
    }
    Ok(())
}

/// Claims `count` (1..=[`MAX_CLAIM`]) numbers in `cell`'s window, waking the keeper when the
/// claim covers the wake offset: the first, or the miss to resolve.
#[inline]
pub(crate) fn claim_now(shared: &Shared, cell: &TagCell, count: u64) -> Result<i64, Miss> {
    let mut woke = false;
    let claimed = cell.window.claim(count, &mut woke);
    if woke {
        shared.wake_keeper();
    }
    claimed
}

/// One number of `cell`.
#[inline]
pub(crate) fn take_one(shared: &Shared, cell: &TagCell) -> Result<i64, Error> {
    match claim_now(shared, cell, 1) {
        Ok(n) => Ok(n),
        Err(miss) => resolve(shared, cell, miss).map(|(n, _)| n),
    }
}

/// Claims up to `count` (1..=[`MAX_CLAIM`]) consecutive numbers: the first and how many.
pub(crate) fn claim(shared: &Shared, cell: &TagCell, count: u64) -> Result<(i64, u64), Error> {
    match claim_now(shared, cell, count) {
        Ok(first) => Ok((first, count)),
        Err(miss) => resolve(shared, cell, miss),
    }
}

/// Fills `out`, claim by claim.
pub(crate) fn fill(shared: &Shared, cell: &TagCell, out: &mut [i64]) -> Result<(), Error> {
    let mut done = 0;
    while done < out.len() {
        let want = ((out.len() - done) as u64).min(MAX_CLAIM);
        let (first, n) = claim(shared, cell, want)?;
        for (k, slot) in out[done..done + n as usize].iter_mut().enumerate() {
            *slot = first + k as i64;
        }
        done += n as usize;
    }
    Ok(())
}

/// Resolves a miss: numbers from the segment it claimed in, or a new claim, waiting (bounded by
/// `max_wait`) for the keeper or the claimer in between.
#[cold]
pub(crate) fn resolve(shared: &Shared, cell: &TagCell, miss: Miss) -> Result<(i64, u64), Error> {
    let started = Instant::now();
    let deadline = started + shared.max_wait;
    let mut miss = miss;
    let mut waited = false;
    let mut st = cell.lock();
    loop {
        match cell.resolve(&mut st, miss) {
            Step::Got(first, n) => return Ok((first, n)),
            Step::Fail(e) => return Err(e),
            Step::Retry => {
                drop(st);
                match claim_now(shared, cell, miss.count) {
                    Ok(first) => return Ok((first, miss.count)),
                    Err(m) => miss = m,
                }
                st = cell.lock();
            }
            Step::Wait => {
                // Told once: the keeper and the claimer then tell the waiters when something
                // moves (waking them at every look would keep them and the waiters spinning).
                if !waited {
                    waited = true;
                    cell.count_wait();
                    shared.wake_keeper();
                    if st.wanted {
                        shared.wake_claimer();
                    }
                }
                let now = Instant::now();
                if now >= deadline {
                    return Err(cell.not_ready(&st, now - started));
                }
                st.waiters += 1;
                let pause = (deadline - now).min(Duration::from_millis(50));
                st = cell
                    .changed
                    .wait_timeout(st, pause)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                st.waiters -= 1;
            }
        }
    }
}
