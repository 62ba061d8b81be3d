//! The claimer thread: everything that talks to the database after start, one statement at a
//! time on the table's connection. It takes over the ranges of the state directory (a
//! compare-and-set on their hold rows), claims ranges with Leaf's transaction and Leaf's dynamic
//! step, waits until each claim is on every standby (the worker claims' check, see
//! `worker::durable`), reads the tags again every `refresh_interval`, and deletes the hold rows
//! of ranges used up. Tags with takes waiting go first.

use super::error::{SegmentError, check_tag, shown};
use super::generator::Shared;
use super::state::Held;
use super::table::Claim;
use super::tag::{Seg, TagCell, dynamic_step};
use crate::Error;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The first pause after a failed claim; doubled up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long a claim may wait for the standbys to confirm it.
const CONFIRM_WITHIN: Duration = Duration::from_secs(10);
/// The fewest seconds between two rereads asked for by unknown tags.
const ASKED_REFRESH: Duration = Duration::from_secs(1);

impl Shared {
    /// The claimer thread's loop.
    pub(crate) fn claim_loop(&self) {
        while !self.stop.load(Ordering::Relaxed) {
            let since = crate::lock::lock(&self.refreshed_at).elapsed();
            let asked = self.refresh_asked.load(Ordering::Relaxed) && since >= ASKED_REFRESH;
            if since >= self.refresh || asked {
                if let Err(e) = self.refresh() {
                    tracing::warn!(error = %e, "leaf_alloc not read again: the tags stay as they were");
                    *crate::lock::lock(&self.refreshed_at) = Instant::now();
                }
                self.refresh_asked.store(false, Ordering::Relaxed);
            }
            let mut cells = self.cells();
            // Tags with takes waiting first.
            cells.sort_by_key(|c| std::cmp::Reverse(c.lock().waiters));
            let mut busy = false;
            for cell in cells {
                if self.stop.load(Ordering::Relaxed) {
                    return;
                }
                busy |= self.serve_tag(&cell);
            }
            if !busy {
                std::thread::park_timeout(self.refresh.min(Duration::from_millis(100)));
            }
        }
    }

    /// Does what `cell` needs from the database: takes its state file's ranges over, or claims
    /// a range, and deletes the hold rows of ranges used up. Whether it did anything.
    fn serve_tag(&self, cell: &TagCell) -> bool {
        let mut st = cell.lock();
        if st.dead.is_some() {
            return false;
        }
        let release = std::mem::take(&mut st.release);
        let waiting = st.retry_at.is_some_and(|at| Instant::now() < at);
        let resume = st.resume.clone();
        let claim = st.wanted && !st.claiming && !waiting;
        drop(st);
        if !release.is_empty()
            && let Err(e) = self.table.release(&cell.name, &release, &self.holder)
        {
            tracing::debug!(biz_tag = %cell.name, error = %e, "hold rows of used-up ranges not deleted (harmless: they are never taken over)");
        }
        match resume {
            Some(held) if !waiting => {
                self.resume(cell, &held);
                true
            }
            Some(_) => false,
            None if claim => {
                self.claim(cell);
                true
            }
            None => !release.is_empty(),
        }
    }

    /// Takes the ranges of the state file over (a compare-and-set from the token that wrote
    /// it to this boot's), each from its mark on.
    fn resume(&self, cell: &TagCell, held: &Held) {
        let mut segs = Vec::new();
        let mut lost = Vec::new();
        let mut used_up = Vec::new();
        for r in &held.ranges {
            if r.mark >= r.end {
                used_up.push(r.end);
                continue;
            }
            let taken = self
                .table
                .resume(&cell.name, r.end, &held.holder, &self.holder)
                .and_then(|taken| {
                    if taken {
                        self.table.confirm(
                            &format!(
                                "biz_tag {}'s range [{}, {}), taken over",
                                cell.name, r.mark, r.end
                            ),
                            Instant::now() + CONFIRM_WITHIN,
                        )?;
                    }
                    Ok(taken)
                });
            match taken {
                Ok(true) => segs.push(Seg {
                    start: r.mark,
                    len: (r.end - r.mark) as u64,
                    mark: 0,
                }),
                Ok(false) => lost.push(*r),
                Err(e) => {
                    self.failed(cell, &e, false);
                    return;
                }
            }
        }
        if !used_up.is_empty() {
            let _ = self.table.release(&cell.name, &used_up, &held.holder);
        }
        for r in &lost {
            tracing::warn!(
                biz_tag = %cell.name,
                start = r.mark,
                end = r.end,
                holder = %held.holder,
                "range of the state file not taken over: its hold row is gone or names another \
                 node (a copy of this state directory resumed it, or it was released); dropped, \
                 never handed out here"
            );
        }
        let mut st = cell.lock();
        let numbers: u64 = segs.iter().map(|s| s.len).sum();
        if numbers > 0 {
            tracing::info!(
                biz_tag = %cell.name,
                numbers,
                ranges = segs.len(),
                "segment ranges taken over from the state file"
            );
        }
        st.resumed += numbers;
        st.held_end = held.ranges.iter().map(|r| r.end).max().max(st.held_end);
        st.pending.extend(segs);
        st.resume = None;
        st.retry_at = None;
        st.last_error = None;
        cell.tell();
        drop(st);
        self.wake_keeper();
    }

    /// Claims one range for `cell` with Leaf's transaction and dynamic step, and waits until
    /// the standbys hold it.
    fn claim(&self, cell: &TagCell) {
        let now = self.clock.now_millis();
        let mut st = cell.lock();
        let custom = (st.init && st.update_millis != 0).then(|| {
            let since = Duration::from_millis((now - st.update_millis).max(0) as u64);
            dynamic_step(st.step, st.min_step, since)
        });
        st.claiming = true;
        drop(st);
        let started = Instant::now();
        let result = self
            .table
            .claim(&cell.name, custom, &self.holder)
            .and_then(|claim| {
                if let Claim::Claimed { max_id, table_step } = claim {
                    let step = custom.unwrap_or(table_step);
                    self.table.confirm(
                        &format!(
                            "biz_tag {}'s range [{}, {max_id})",
                            cell.name,
                            max_id - step
                        ),
                        Instant::now() + CONFIRM_WITHIN,
                    )?;
                }
                Ok(claim)
            });
        let took = started.elapsed();
        let mut st = cell.lock();
        st.claiming = false;
        let tag = cell.name.clone();
        let refused = match result {
            Ok(Claim::Claimed { max_id, table_step }) => {
                let step = custom.unwrap_or(table_step);
                let start = max_id - step;
                if let Some(held) = st.held_end
                    && start < held
                {
                    SegmentError::WentBackwards { tag, start, held }
                } else {
                    // Leaf's SegmentBuffer: the first two claims take the table's step, the
                    // first one leaving the time untold; later ones the dynamic step.
                    if !st.init {
                        st.init = true;
                    } else {
                        st.update_millis = now;
                    }
                    st.step = step;
                    st.min_step = table_step;
                    st.held_end = Some(max_id);
                    st.pending.push(Seg {
                        start,
                        len: step as u64,
                        mark: 0,
                    });
                    st.wanted = false;
                    st.claims += 1;
                    st.claim_nanos += took.as_nanos() as u64;
                    st.last_claim_nanos = took.as_nanos() as u64;
                    st.last_error = None;
                    st.retry_at = None;
                    tracing::debug!(biz_tag = %cell.name, start, end = max_id, step, took_ms = took.as_millis() as u64, "segment range claimed");
                    cell.tell();
                    drop(st);
                    self.wake_keeper();
                    return;
                }
            }
            Ok(Claim::NoRow) => {
                st.dead = Some(SegmentError::Removed { tag });
                // Drop it from the tags soon.
                self.refresh_asked.store(true, Ordering::Relaxed);
                st.claim_failures += 1;
                tracing::warn!(biz_tag = %cell.name, "biz_tag deleted from leaf_alloc while served: nothing more is handed out for it");
                cell.tell();
                return;
            }
            Ok(Claim::BadStep(value)) => SegmentError::BadRow {
                tag,
                column: "step",
                value,
                allowed: "1 to 2147483647",
            },
            Ok(Claim::Overflow { max_id, step }) => SegmentError::Overflow { tag, max_id, step },
            Err(e) => {
                drop(st);
                self.failed(cell, &e, false);
                return;
            }
        };
        drop(st);
        self.failed(cell, &Error::Segment(refused), true);
    }

    /// A claim or a take-over failed: takes wait (or, for the row's own fault, fail at once)
    /// naming it, and the claimer tries again after a pause that doubles.
    fn failed(&self, cell: &TagCell, e: &Error, rows_fault: bool) {
        let mut st = cell.lock();
        st.claim_failures += 1;
        let message = e.to_string();
        if st.last_error.as_ref().map(|(m, _)| m) != Some(&message) {
            tracing::warn!(biz_tag = %cell.name, error = %e, "segment range not claimed: {message}");
        }
        let backoff = if rows_fault {
            MAX_BACKOFF
        } else {
            let doublings = st.claim_failures.min(6) as u32;
            (FIRST_BACKOFF * 2u32.pow(doublings.saturating_sub(1))).min(MAX_BACKOFF)
        };
        st.retry_at = Some(Instant::now() + backoff);
        st.last_error = Some((message, rows_fault));
        cell.tell();
    }

    /// Reads the tags again: new rows are served (taking their state files' ranges over), rows
    /// gone are dropped (their takes fail, their hold rows are deleted, their state files
    /// removed).
    pub(crate) fn refresh(&self) -> Result<(), Error> {
        let rows = self.table.rows()?;
        *crate::lock::lock(&self.refreshed_at) = Instant::now();
        let mut skipped = Vec::new();
        let mut names = BTreeSet::new();
        let mut steps = Vec::new();
        for row in rows {
            match check_tag(&row.biz_tag) {
                Ok(()) => {
                    steps.push((row.biz_tag.clone(), row.step));
                    names.insert(row.biz_tag);
                }
                Err(SegmentError::InvalidTag { reason, .. }) => {
                    skipped.push((shown(&row.biz_tag), reason));
                }
                Err(_) => {}
            }
        }
        let mut gone = Vec::new();
        {
            let mut tags = self.tags.write().unwrap_or_else(|e| e.into_inner());
            for name in &names {
                if !tags.contains_key(name) {
                    let cell = Arc::new(TagCell::new(name, self.min_chunk));
                    self.load_state(&cell);
                    tags.insert(name.clone(), cell);
                }
            }
            // The table's step, shown until the first claim reads it.
            for (name, step) in &steps {
                if let Some(cell) = tags.get(name) {
                    let mut st = cell.lock();
                    if !st.init {
                        st.min_step = *step;
                        st.step = *step;
                    }
                }
            }
            tags.retain(|name, cell| {
                let keep = names.contains(name);
                if !keep {
                    gone.push(Arc::clone(cell));
                }
                keep
            });
        }
        for cell in gone {
            self.drop_tag(&cell);
        }
        let mut kept = crate::lock::lock(&self.skipped);
        for (tag, reason) in &skipped {
            if !kept.iter().any(|(t, _)| t == tag) {
                tracing::warn!(biz_tag = %tag, "leaf_alloc row not served: {reason}");
            }
        }
        *kept = skipped;
        Ok(())
    }

    /// Reads a new tag's state file: its ranges are to be taken over before anything is claimed.
    fn load_state(&self, cell: &TagCell) {
        let Some(dir) = &self.state else {
            return;
        };
        match dir.read(&cell.name) {
            Ok(Some(held)) if !held.ranges.is_empty() => {
                let mut st = cell.lock();
                st.held_end = held.ranges.iter().map(|r| r.end).max();
                st.resume = Some(held);
            }
            Ok(_) => {}
            // Its ranges are not taken over, so never handed out again: they are lost, nothing
            // is repeated. The file is replaced at the first mark.
            Err(e) => {
                tracing::error!(biz_tag = %cell.name, error = %e, "segment state file unreadable: its ranges are lost")
            }
        }
    }

    /// A tag no longer in the table: its takes fail, its ranges are given up.
    fn drop_tag(&self, cell: &TagCell) {
        let mut st = cell.lock();
        let mut ends: Vec<i64> = std::mem::take(&mut st.release);
        ends.extend(
            st.cur
                .iter()
                .chain(st.next.iter())
                .chain(st.pending.iter())
                .map(Seg::end),
        );
        cell.close(&mut st);
        st.dead = Some(SegmentError::Removed {
            tag: cell.name.clone(),
        });
        cell.tell();
        drop(st);
        tracing::info!(biz_tag = %cell.name, "biz_tag removed from leaf_alloc: no longer served");
        if let Some(dir) = &self.state {
            dir.remove(&cell.name);
        }
        if !ends.is_empty() {
            let _ = self.table.release(&cell.name, &ends, &self.holder);
        }
    }
}
