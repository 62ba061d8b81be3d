//! The keeper thread: keeps every tag's marks ahead of its takes, the state file ahead of its
//! marks, and asks the claimer for the next range in time (Leaf's rule: once a tenth of the
//! current one is used).
//!
//! A mark moves a *chunk* at a time: the state file records it (durably) before the window's
//! limit is raised to it, so a `kill -9` loses at most the numbers between the last take and
//! the mark. The chunk adapts to the demand: it doubles while a chunk lasts under 100 ms (a
//! file write a tenth of a second at most) and halves back while one lasts over a second. The
//! first chunk of the next range is marked before the current one runs out, so that switching
//! ranges needs no write. A take wakes the keeper when it reaches the wake offset (the point
//! where the next write or claim is due); otherwise the keeper looks every 100 ms.

use super::generator::{Shared, TICK};
use super::state::{Held, HeldRange};
use super::tag::{Seg, TagCell, TagState};
use crate::Error;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A chunk that lasted less than this doubles the next one.
const FAST_CHUNK: Duration = Duration::from_millis(100);
/// A chunk that lasted more than this halves the next one.
const SLOW_CHUNK: Duration = Duration::from_secs(1);
/// The largest chunk.
const MAX_CHUNK: u64 = 1 << 30;

impl Shared {
    /// The keeper thread's loop.
    pub(crate) fn keep(&self) {
        let mut told = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            // Waiting takes are told at the timed looks only, so that they look at their
            // deadlines: telling them at every wake-up would have them and the keeper wake each
            // other in a loop.
            let tell_waiters = told.elapsed() >= TICK;
            if tell_waiters {
                told = Instant::now();
            }
            for cell in self.cells() {
                self.mark(&cell, tell_waiters);
            }
            std::thread::park_timeout(TICK);
        }
    }

    /// Moves `cell`'s marks, records them, asks for a claim and sets the wake offset.
    fn mark(&self, cell: &TagCell, tell_waiters: bool) {
        let mut st = cell.lock();
        if st.dead.is_some() {
            return;
        }
        let claimed = cell.claimed(&st);
        let chunk = st.chunk;
        let durable = self.state.is_some();
        let mut cur = st.cur;
        let mut extended = false;
        if let Some(c) = &mut cur {
            if !durable {
                c.mark = c.len;
            } else if c.mark < c.len && (st.waiters > 0 || claimed + chunk / 2 >= c.mark) {
                c.mark = (claimed.max(c.mark) + chunk).min(c.len);
                extended = true;
            }
        }
        // The next range, or the first claimed one, which becomes the next once recorded. Once
        // the current range is marked to its end, the next one's first numbers are marked, so
        // that switching needs no write; all the marks together stay within a chunk of the
        // takes: a crash loses at most a chunk.
        let from_pending = st.next.is_none() && !st.pending.is_empty();
        let mut next = st.next.or_else(|| st.pending.first().copied());
        let outstanding = cur.map_or(0, |c| c.mark.saturating_sub(claimed));
        let cur_marked = cur.is_none_or(|c| c.mark >= c.len);
        if let Some(n) = &mut next {
            if !durable {
                n.mark = n.len;
            } else if cur_marked && (n.mark == 0 || n.mark + outstanding < chunk / 2) {
                n.mark = n
                    .mark
                    .max(chunk.saturating_sub(outstanding).max(1))
                    .min(n.len);
            }
        }
        let later: Vec<Seg> = st
            .pending
            .iter()
            .skip(usize::from(from_pending))
            .copied()
            .collect();
        let wanted = Held {
            holder: self.holder.clone(),
            ranges: cur
                .filter(|c| c.mark < c.len)
                .into_iter()
                .chain(next)
                .chain(later)
                .map(|s| HeldRange {
                    start: s.start,
                    end: s.end(),
                    mark: s.start + s.mark as i64,
                })
                .collect(),
        };
        let changed = cur != st.cur || next != st.next || from_pending;
        if durable && st.written.as_ref() != Some(&wanted) {
            drop(st);
            let written = match &self.state {
                Some(dir) => dir.write(&cell.name, &wanted),
                None => Ok(()),
            };
            st = cell.lock();
            if let Err(e) = written {
                self.state_file_failed(cell, &mut st, &e);
                return;
            }
            st.written = Some(wanted);
        }
        if changed {
            for seg in cur.into_iter().chain(next) {
                apply(cell, &mut st, seg);
            }
            if from_pending
                && st.next.is_none()
                && let Some(n) = next
                && st.pending.first().is_some_and(|p| p.start == n.start)
            {
                st.pending.remove(0);
                st.next = Some(n);
            }
            if extended {
                adapt(&mut st, self.min_chunk);
            }
            if matches!(&st.last_error, Some((m, false)) if m.starts_with("state file")) {
                st.last_error = None;
            }
            cell.tell();
        }
        self.schedule(cell, &mut st);
        if tell_waiters && st.waiters > 0 {
            cell.tell();
        }
    }

    /// Asks for a claim once a tenth of the current range is used (Leaf's rule), and sets the
    /// wake offset at the next point where the keeper has work.
    fn schedule(&self, cell: &TagCell, st: &mut TagState) {
        let Some(cur) = st.cur else {
            return;
        };
        let claimed = cell.claimed(st);
        let idle = st.next.is_none() && st.pending.is_empty() && !st.claiming;
        if idle && !st.wanted && st.resume.is_none() && claimed >= cur.len / 10 {
            st.wanted = true;
            self.wake_claimer();
        }
        let mut wake = u64::MAX;
        if cur.mark < cur.len {
            wake = wake.min(cur.mark.saturating_sub(st.chunk / 2));
        }
        if idle && !st.wanted {
            wake = wake.min(cur.len / 10);
        }
        if let Some(n) = st.next.or_else(|| st.pending.first().copied()) {
            // Where the next range's marks are topped up (see `mark`).
            wake = wake.min((cur.len + n.mark).saturating_sub(st.chunk / 2));
        }
        // A point already passed: the next take wakes the keeper.
        cell.window.set_wake(wake.max(claimed));
    }

    /// The state file could not be written: nothing above the old marks is handed out (takes
    /// wait, then fail naming the file); the keeper tries again at its next look.
    fn state_file_failed(&self, cell: &TagCell, st: &mut TagState, e: &Error) {
        let message = e.to_string();
        if st.last_error.as_ref().map(|(m, _)| m) != Some(&message) {
            tracing::error!(
                biz_tag = %cell.name,
                error = %e,
                "segment state file not written: numbers above its last mark wait until it can be"
            );
        }
        st.last_error = Some((message, false));
        cell.tell();
    }

    /// At the generator's end: closes every tag's window and records exactly how far each
    /// current range was handed out, so that a clean stop loses no number.
    pub(crate) fn shut_down(&self) {
        for cell in self.cells() {
            let mut st = cell.lock();
            let cur = st.cur;
            let claimed = cell.close(&mut st);
            st.dead = Some(super::error::SegmentError::Shutdown);
            cell.tell();
            let (Some(dir), Some(written)) = (&self.state, &st.written) else {
                continue;
            };
            let mut held = written.clone();
            // Nothing of the ranges after the current one was handed out (never installed).
            for r in &mut held.ranges {
                if st
                    .next
                    .iter()
                    .chain(&st.pending)
                    .any(|s| s.start == r.start)
                {
                    r.mark = r.start;
                }
            }
            // The current range: numbers at or above `claimed` were never handed out, so its
            // mark comes back to that exact point (listed again if the file left it out, marked
            // to its end).
            if let (Some(cur), Some(claimed)) = (cur, claimed) {
                let mark = cur.start + claimed as i64;
                match held.ranges.iter_mut().find(|r| r.start == cur.start) {
                    Some(r) => r.mark = r.mark.min(mark),
                    None => held.ranges.insert(
                        0,
                        HeldRange {
                            start: cur.start,
                            end: cur.end(),
                            mark,
                        },
                    ),
                }
            }
            held.ranges.retain(|r| r.mark < r.end);
            if let Err(e) = dir.write(&cell.name, &held) {
                tracing::warn!(biz_tag = %cell.name, error = %e, "segment state file not written at stop: the numbers up to its last mark are lost");
            }
        }
    }
}

/// Records the new mark of `seg` wherever it is now (it may have been installed, or retired,
/// while the state file was written): in the window if it is the current range.
fn apply(cell: &TagCell, st: &mut TagState, seg: Seg) {
    if let Some(c) = &mut st.cur
        && c.start == seg.start
        && seg.mark > c.mark
    {
        c.mark = seg.mark;
        cell.window.raise_limit(seg.mark);
    } else if let Some(n) = &mut st.next
        && n.start == seg.start
    {
        n.mark = n.mark.max(seg.mark);
    } else if let Some((_, base, valid)) = &mut st.prev
        && *base == seg.start
    {
        *valid = (*valid).max(seg.mark);
    } else if let Some(p) = st.pending.iter_mut().find(|p| p.start == seg.start) {
        p.mark = p.mark.max(seg.mark);
    }
}

/// Doubles the chunk when the last one went fast, halves it when it went slowly.
fn adapt(st: &mut TagState, min_chunk: u64) {
    let now = Instant::now();
    if let Some(at) = st.marked_at {
        let lasted = now - at;
        if lasted < FAST_CHUNK {
            st.chunk = (st.chunk * 2).min(MAX_CHUNK);
        } else if lasted > SLOW_CHUNK {
            st.chunk = (st.chunk / 2).max(min_chunk);
        }
    }
    st.marked_at = Some(now);
}
