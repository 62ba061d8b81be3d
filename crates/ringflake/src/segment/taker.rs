//! [`SegmentTaker`]: a tag's per-thread taker, the segment generator's counterpart of
//! [`LocalTaker`](crate::LocalTaker).

use super::generator::Shared;
use super::tag::TagCell;
use super::take::{SegmentTag, claim};
use crate::Error;
use std::fmt;
use std::sync::Arc;

/// Numbers a taker claims at once.
pub const SEGMENT_TAKER_BLOCK: u64 = 1024;

/// A per-thread taker of one tag: claims a block of up to [`SEGMENT_TAKER_BLOCK`] numbers with
/// one atomic add and hands them out from its own fields, so that N threads with a taker each
/// take about N times what one does (a [`SegmentTag`]'s takes all write one shared counter).
///
/// Numbers one taker hands out are strictly increasing; across takers, only unique. What a
/// taker still holds when it is dropped is lost (never handed out): a gap in the tag's numbers,
/// as Leaf leaves at every restart.
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use ringflake::{SegmentGenerator, SegmentTable};
/// use std::collections::HashSet;
///
/// let dir = tempfile::tempdir().unwrap();
/// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
/// table.add("orders", 1, 100_000, "")?;
/// let g = SegmentGenerator::builder(table).build()?;
/// let orders = g.tag("orders")?;
/// let all: Vec<i64> = std::thread::scope(|s| {
///     let handles: Vec<_> = (0..2)
///         .map(|_| {
///             let mut taker = orders.local();
///             s.spawn(move || (0..10_000).map(|_| taker.next_id().unwrap()).collect::<Vec<_>>())
///         })
///         .collect();
///     handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
/// });
/// assert_eq!(all.iter().collect::<HashSet<_>>().len(), 20_000);
/// # }
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct SegmentTaker {
    cell: Arc<TagCell>,
    shared: Arc<Shared>,
    next: i64,
    end: i64,
}

impl fmt::Debug for SegmentTaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SegmentTaker")
            .field("tag", &self.cell.name)
            .field("ready", &self.ready())
            .finish()
    }
}

impl SegmentTag {
    /// A per-thread taker of this tag (see [`SegmentTaker`]). Make one per thread and keep it.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 5000, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let mut taker = g.tag("orders")?.local();
    /// assert_eq!(taker.next_id()?, 1);
    /// assert_eq!(taker.ready(), 1023); // the rest of its block
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn local(&self) -> SegmentTaker {
        SegmentTaker {
            cell: Arc::clone(&self.cell),
            shared: Arc::clone(&self.shared),
            next: 0,
            end: 0,
        }
    }
}

impl SegmentTaker {
    /// The next number: from this taker's block, else from a new block.
    ///
    /// Per number: a compare and an add on this taker's own fields. Once a block: one atomic
    /// add on the tag's counter, as [`SegmentTag::next_id`] makes per number.
    ///
    /// # Errors
    ///
    /// As [`SegmentTag::next_id`].
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 700, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let mut taker = g.tag("orders")?.local();
    /// let numbers: Vec<i64> = (0..3000).map(|_| taker.next_id()).collect::<Result<_, _>>()?;
    /// assert!(numbers.windows(2).all(|w| w[0] < w[1]));
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    #[inline]
    pub fn next_id(&mut self) -> Result<i64, Error> {
        let n = self.next;
        if n < self.end {
            self.next = n + 1;
            return Ok(n);
        }
        self.refill()
    }

    /// Numbers this taker holds ready.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 5000, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// assert_eq!(g.tag("orders")?.local().ready(), 0);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn ready(&self) -> u64 {
        (self.end - self.next) as u64
    }

    #[cold]
    #[inline(never)]
    fn refill(&mut self) -> Result<i64, Error> {
        let (first, n) = claim(&self.shared, &self.cell, SEGMENT_TAKER_BLOCK)?;
        self.next = first + 1;
        self.end = first + n as i64;
        Ok(first)
    }
}
