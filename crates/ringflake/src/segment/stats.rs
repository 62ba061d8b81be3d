//! [`SegmentStats`]: what one tag's segments hold and what its claims and takes did, read under
//! the tag's lock (never on the per-number path): for `/status`, the Prometheus series and the
//! status page.

use super::generator::SegmentGenerator;
use super::tag::TagCell;
use super::take::SegmentTag;
use std::sync::atomic::Ordering;

/// One tag's figures, from [`SegmentGenerator::stats`] or [`SegmentTag::stats`].
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use ringflake::{SegmentGenerator, SegmentTable};
///
/// let dir = tempfile::tempdir().unwrap();
/// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
/// table.add("orders", 1, 1000, "")?;
/// let g = SegmentGenerator::builder(table).build()?;
/// for _ in 0..10 {
///     g.next_id("orders")?;
/// }
/// let s = g.tag("orders")?.stats();
/// assert_eq!(s.tag, "orders");
/// assert_eq!(s.current, Some((1, 1001)));
/// assert_eq!(s.current_left, 990);
/// assert_eq!(s.issued, 10);
/// assert_eq!((s.step, s.table_step, s.claims), (1000, 1000, 1));
/// # }
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SegmentStats {
    /// The business tag.
    pub tag: String,
    /// The range takes draw from now, `[start, end)`.
    pub current: Option<(i64, i64)>,
    /// Numbers of the current range not taken yet.
    pub current_left: u64,
    /// The next range (claimed and held, not taken from yet), `[start, end)`.
    pub next: Option<(i64, i64)>,
    /// Numbers held beyond the current range: the next range, and any claimed after it.
    pub next_left: u64,
    /// The step of the last claim (Leaf's dynamic step).
    pub step: i64,
    /// The row's own step, as the last claim read it.
    pub table_step: i64,
    /// Numbers taken since start (claimed by takes: a per-thread taker's block counts whole).
    pub issued: u64,
    /// Numbers recorded in the state file as perhaps handed out but not taken yet (in the
    /// current range and the first numbers of the next): what a `kill -9` now would lose, at
    /// most a [`chunk`](Self::chunk) (0 without a state directory, where a restart loses both
    /// segments).
    pub at_risk: u64,
    /// How far a mark moves at once now.
    pub chunk: u64,
    /// Ranges claimed since start.
    pub claims: u64,
    /// Claims (and take-overs) that failed.
    pub claim_failures: u64,
    /// Time spent in claims, in seconds (the transaction and the standbys' confirmation).
    pub claim_seconds: f64,
    /// The last claim's time, in seconds.
    pub last_claim_seconds: f64,
    /// Takes that found both segments used up and waited.
    pub waits: u64,
    /// Takes that gave up after the wait bound, or failed at once for the row's fault.
    pub not_ready: u64,
    /// Numbers taken over from the state file at start.
    pub resumed: u64,
    /// Why the last claim failed, if it did and none succeeded since.
    pub last_error: Option<String>,
    /// Whether the tag can hand numbers out: false once its row is deleted or the generator
    /// shut down.
    pub live: bool,
}

impl TagCell {
    pub(crate) fn stats(&self, durable: bool) -> SegmentStats {
        let st = self.lock();
        let claimed = self.claimed(&st);
        let range = |s: &super::tag::Seg| (s.start, s.end());
        let later = st.next.iter().chain(st.pending.iter());
        SegmentStats {
            tag: self.name.clone(),
            current: st.cur.as_ref().map(range),
            current_left: st.cur.map_or(0, |c| c.len - claimed),
            next: st.next.as_ref().or(st.pending.first()).map(range),
            next_left: later.map(|s| s.len).sum(),
            step: st.step,
            table_step: st.min_step,
            issued: st.retired + claimed,
            at_risk: if durable {
                st.cur.map_or(0, |c| c.mark.saturating_sub(claimed)) + st.next.map_or(0, |n| n.mark)
            } else {
                0
            },
            chunk: st.chunk,
            claims: st.claims,
            claim_failures: st.claim_failures,
            claim_seconds: st.claim_nanos as f64 / 1e9,
            last_claim_seconds: st.last_claim_nanos as f64 / 1e9,
            waits: self.waits.load(Ordering::Relaxed),
            not_ready: self.not_ready.load(Ordering::Relaxed),
            resumed: st.resumed,
            last_error: st.last_error.as_ref().map(|(m, _)| m.clone()),
            live: st.dead.is_none(),
        }
    }
}

impl SegmentGenerator {
    /// Every tag's figures, by tag.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("a", 1, 10, "")?;
    /// table.add("b", 1, 10, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// g.next_id("b")?;
    /// let stats = g.stats();
    /// assert_eq!((stats[0].issued, stats[1].issued), (0, 1));
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn stats(&self) -> Vec<SegmentStats> {
        let durable = self.shared.state.is_some();
        self.shared
            .cells()
            .iter()
            .map(|c| c.stats(durable))
            .collect()
    }
}

impl SegmentTag {
    /// This tag's figures.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// table.add("orders", 1, 10, "")?;
    /// let g = ringflake::SegmentGenerator::builder(table).build()?;
    /// let orders = g.tag("orders")?;
    /// assert_eq!(orders.stats().claims, 0); // nothing claimed before the first take
    /// orders.next_id()?;
    /// assert_eq!(orders.stats().claims, 1);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn stats(&self) -> SegmentStats {
        self.cell.stats(self.shared.state.is_some())
    }
}
