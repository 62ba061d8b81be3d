//! One business tag: its [window](super::window) (the lock-free take), and under a lock what
//! Leaf's `SegmentBuffer` holds: the current segment, the next one (claimed and durable, not yet
//! taken from), the step of the next claim, and what the keeper and the claimer are doing for
//! it. A take that misses in the window is resolved here ([`TagCell::resolve`]): served from the
//! segment it claimed in, told to wait for the keeper (a mark to move, the next segment to
//! arrive), or to claim again in the segment just installed.

use super::error::SegmentError;
use super::window::{FIRST_GENERATION, Miss, Window};
use crate::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Leaf's `MAX_STEP`: the dynamic step doubles up to it (a table's own step may be larger).
pub const MAX_DYNAMIC_STEP: i64 = 1_000_000;

/// Leaf's `SEGMENT_DURATION`: a range that lasted less doubles the next step; one that lasted
/// twice as long or more halves it.
pub const SEGMENT_DURATION: Duration = Duration::from_secs(15 * 60);

/// One range this node holds, as offsets from `start`: `mark` of them may have been handed out
/// (durably recorded; all of them without a state directory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seg {
    pub(crate) start: i64,
    pub(crate) len: u64,
    pub(crate) mark: u64,
}

impl Seg {
    /// The first number after the range.
    pub(crate) fn end(&self) -> i64 {
        self.start + self.len as i64
    }
}

/// What a take does after a miss.
#[derive(Debug, PartialEq)]
pub(crate) enum Step {
    /// `count` numbers from `first` are the take's (fewer than it claimed if its claim ran
    /// past the segment's end: it claims again for the rest).
    Got(i64, u64),
    /// The claim is lost (an older generation): claim again.
    Retry,
    /// Wait for the keeper or the claimer, then resolve the same claim again.
    Wait,
    /// Nothing will come of waiting.
    Fail(Error),
}

/// Leaf's dynamic step: what the claim after one made `since_last` ago asks for (the last step
/// `step`, the table's `min_step`): doubled if the last range lasted under 15 minutes (unless
/// that passes 1,000,000), halved if it lasted 30 minutes or more (unless that goes below the
/// table's step), else the same.
pub(crate) fn dynamic_step(step: i64, min_step: i64, since_last: Duration) -> i64 {
    if since_last < SEGMENT_DURATION {
        if step.saturating_mul(2) > MAX_DYNAMIC_STEP {
            step
        } else {
            step * 2
        }
    } else if since_last < SEGMENT_DURATION * 2 {
        step
    } else if step / 2 >= min_step {
        step / 2
    } else {
        step
    }
}

/// What the lock guards.
#[derive(Debug)]
pub(crate) struct TagState {
    /// The generation installed in the window (0: none yet).
    pub(crate) generation: u64,
    /// The segment installed as `generation`.
    pub(crate) cur: Option<Seg>,
    /// The generation before, its first number and how many of its numbers may be handed out:
    /// takes that claimed in it just before the switch are served from it.
    pub(crate) prev: Option<(u64, i64, u64)>,
    /// The next segment: claimed, recorded in the state file, not installed.
    pub(crate) next: Option<Seg>,
    /// Ranges claimed or resumed, not yet in the state file (the keeper writes them, then
    /// makes the first one `next`).
    pub(crate) pending: Vec<Seg>,
    /// A claim is wanted (the claimer's to do).
    pub(crate) wanted: bool,
    /// The claimer is claiming.
    pub(crate) claiming: bool,
    /// Ranges of the state file to take over before claiming anything.
    pub(crate) resume: Option<super::state::Held>,
    /// Leaf's `SegmentBuffer` fields: a first claim was made; when the last one was (unix
    /// millis, 0: not yet timed); its step; the table's step.
    pub(crate) init: bool,
    pub(crate) update_millis: i64,
    pub(crate) step: i64,
    pub(crate) min_step: i64,
    /// The end of the highest range this node held (claims below it are refused).
    pub(crate) held_end: Option<i64>,
    /// How far a mark moves at once; adapted to the demand by the keeper.
    pub(crate) chunk: u64,
    /// When the last mark was written.
    pub(crate) marked_at: Option<Instant>,
    /// The error that ends every take (the row deleted, the generator shut down).
    pub(crate) dead: Option<SegmentError>,
    /// The last claim's error, and whether it is the row's (waiting will not mend it).
    pub(crate) last_error: Option<(String, bool)>,
    /// When the claimer may try again after a failure.
    pub(crate) retry_at: Option<Instant>,
    /// Takes waiting now.
    pub(crate) waiters: u32,
    /// Numbers of the generations before `generation` that were claimed.
    pub(crate) retired: u64,
    /// Claims made, failed, and their total and last latency.
    pub(crate) claims: u64,
    pub(crate) claim_failures: u64,
    pub(crate) claim_nanos: u64,
    pub(crate) last_claim_nanos: u64,
    /// Numbers taken over from the state file at start.
    pub(crate) resumed: u64,
    /// What the state file says now.
    pub(crate) written: Option<super::state::Held>,
    /// Ends of ranges used up or given up, whose hold rows the claimer deletes.
    pub(crate) release: Vec<i64>,
}

/// A business tag being served.
pub(crate) struct TagCell {
    pub(crate) name: String,
    pub(crate) window: Window,
    pub(crate) state: Mutex<TagState>,
    /// Told whenever the state moves (a mark, a segment, an error): waiting takes look again.
    pub(crate) changed: Condvar,
    /// The same, for async takes.
    #[cfg(feature = "tokio")]
    pub(crate) notify: tokio::sync::Notify,
    /// Takes that had to wait, and those that gave up after the wait bound.
    pub(crate) waits: AtomicU64,
    pub(crate) not_ready: AtomicU64,
}

impl TagCell {
    pub(crate) fn new(name: &str, min_chunk: u64) -> TagCell {
        TagCell {
            name: name.to_string(),
            window: Window::new(),
            state: Mutex::new(TagState {
                generation: 0,
                cur: None,
                prev: None,
                next: None,
                pending: Vec::new(),
                wanted: false,
                claiming: false,
                resume: None,
                init: false,
                update_millis: 0,
                step: 0,
                min_step: 0,
                held_end: None,
                chunk: min_chunk,
                marked_at: None,
                dead: None,
                last_error: None,
                retry_at: None,
                waiters: 0,
                retired: 0,
                claims: 0,
                claim_failures: 0,
                claim_nanos: 0,
                last_claim_nanos: 0,
                resumed: 0,
                written: None,
                release: Vec::new(),
            }),
            changed: Condvar::new(),
            #[cfg(feature = "tokio")]
            notify: tokio::sync::Notify::new(),
            waits: AtomicU64::new(0),
            not_ready: AtomicU64::new(0),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, TagState> {
        crate::lock::lock(&self.state)
    }

    /// Wakes every waiting take (sync and async).
    pub(crate) fn tell(&self) {
        self.changed.notify_all();
        #[cfg(feature = "tokio")]
        self.notify.notify_waiters();
    }

    /// What to do with `miss`, under the lock. Asks for a claim (`st.wanted`) when there is
    /// nothing to switch to; the caller wakes the claimer and the keeper when told to wait.
    pub(crate) fn resolve(&self, st: &mut TagState, miss: Miss) -> Step {
        if let Some(e) = &st.dead {
            return Step::Fail(Error::Segment(e.clone()));
        }
        if miss.generation == st.generation
            && let Some(cur) = st.cur
            && miss.offset < cur.len
        {
            let end = (miss.offset + miss.count).min(cur.len);
            if end <= cur.mark {
                return Step::Got(cur.start + miss.offset as i64, end - miss.offset);
            }
            // The keeper moves the mark (the take's wake offset, or the one before, told it).
            return Step::Wait;
        }
        if let Some((generation, base, valid)) = st.prev
            && generation == miss.generation
        {
            if miss.offset < valid {
                let end = (miss.offset + miss.count).min(valid);
                return Step::Got(base + miss.offset as i64, end - miss.offset);
            }
            // Claimed in the old generation past its end: claim in the new one.
            return Step::Retry;
        }
        if miss.generation != st.generation {
            // An older generation (or an odd one, an offset carried over): lost.
            return Step::Retry;
        }
        // The current segment is used up, or none is installed yet.
        if self.switch(st) {
            return Step::Retry;
        }
        if st.next.is_none() && st.pending.is_empty() && !st.claiming {
            st.wanted = true;
        }
        match &st.last_error {
            // The row's own fault, and nothing left to switch to: waiting cannot help.
            Some((message, true)) if st.next.is_none() && st.pending.is_empty() => {
                Step::Fail(Error::Segment(SegmentError::NotReady {
                    tag: self.name.clone(),
                    waited: Duration::ZERO,
                    cause: Some(message.clone()),
                }))
            }
            _ => Step::Wait,
        }
    }

    /// Installs the next segment as a new generation if it is ready (recorded, and a first
    /// chunk of it marked). The segment it replaces keeps serving the takes that claimed in it,
    /// up to its mark.
    pub(crate) fn switch(&self, st: &mut TagState) -> bool {
        let Some(next) = st.next else {
            return false;
        };
        if next.mark == 0 {
            return false;
        }
        let generation = if st.generation == 0 {
            FIRST_GENERATION
        } else {
            st.generation + 2
        };
        if let Some(cur) = st.cur {
            st.prev = Some((st.generation, cur.start, cur.mark));
            st.retired += cur.len;
            st.release.push(cur.end());
        }
        // The first take of the new segment wakes the keeper: the state file drops the old
        // segment, and a claim for the one after may be due.
        self.window.install(generation, next.start, next.mark, 0);
        st.generation = generation;
        st.cur = Some(next);
        st.next = None;
        true
    }

    /// Closes the window: takes miss from here on. Returns how many numbers of the current
    /// segment were claimed, exactly (no take can claim more of it afterwards).
    pub(crate) fn close(&self, st: &mut TagState) -> Option<u64> {
        let cur = st.cur?;
        let generation = st.generation + 2;
        let claimed = self
            .window
            .close(st.generation, generation)
            .map_or(cur.len, |offset| offset.min(cur.len));
        st.prev = Some((st.generation, cur.start, claimed.min(cur.mark)));
        st.generation = generation;
        st.retired += claimed;
        st.cur = None;
        Some(claimed)
    }

    /// Numbers claimed from the current segment so far (takes in flight included).
    pub(crate) fn claimed(&self, st: &TagState) -> u64 {
        match st.cur {
            Some(cur) => self
                .window
                .next_offset(st.generation)
                .map_or(cur.len, |o| o.min(cur.len)),
            None => 0,
        }
    }

    /// Counts a take that waited, once.
    pub(crate) fn count_wait(&self) {
        self.waits.fetch_add(1, Ordering::Relaxed);
    }

    /// The error of a take that waited `waited` in vain.
    pub(crate) fn not_ready(&self, st: &TagState, waited: Duration) -> Error {
        self.not_ready.fetch_add(1, Ordering::Relaxed);
        let cause = match &st.last_error {
            Some((m, _)) => Some(m.clone()),
            None if st.claiming => Some(
                "the claim of the next range has not finished: the database, or a standby \
                 confirming the claim, is slow"
                    .into(),
            ),
            None => None,
        };
        Error::Segment(SegmentError::NotReady {
            tag: self.name.clone(),
            waited,
            cause,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_secs(60);

    #[test]
    fn leafs_dynamic_step() {
        // Under 15 minutes: doubled, unless that passes 1,000,000.
        assert_eq!(dynamic_step(1000, 1000, 14 * MIN), 2000);
        assert_eq!(dynamic_step(500_000, 1000, Duration::ZERO), 1_000_000);
        assert_eq!(dynamic_step(600_000, 1000, Duration::ZERO), 600_000);
        // 15 to 30 minutes: kept.
        assert_eq!(dynamic_step(4000, 1000, 15 * MIN), 4000);
        assert_eq!(dynamic_step(4000, 1000, 29 * MIN), 4000);
        // 30 minutes or more: halved, never below the table's step.
        assert_eq!(dynamic_step(4000, 1000, 30 * MIN), 2000);
        assert_eq!(dynamic_step(1500, 1000, 60 * MIN), 1500);
        assert_eq!(dynamic_step(2000, 1000, 60 * MIN), 1000);
        // A table step above Leaf's cap stays as it is.
        assert_eq!(
            dynamic_step(5_000_000, 5_000_000, Duration::ZERO),
            5_000_000
        );
    }

    fn cell_with(cur: Seg, next: Option<Seg>) -> (TagCell, u64) {
        let cell = TagCell::new("t", 16);
        let mut st = cell.lock();
        st.next = Some(cur);
        assert!(cell.switch(&mut st));
        st.next = next;
        let g = st.generation;
        drop(st);
        (cell, g)
    }

    #[test]
    fn misses_are_served_below_the_mark_and_wait_above_it() {
        let seg = Seg {
            start: 100,
            len: 10,
            mark: 4,
        };
        let (cell, g) = cell_with(seg, None);
        let mut st = cell.lock();
        let miss = |offset, count| Miss {
            generation: g,
            offset,
            count,
        };
        assert_eq!(cell.resolve(&mut st, miss(2, 2)), Step::Got(102, 2));
        assert_eq!(cell.resolve(&mut st, miss(3, 2)), Step::Wait);
        st.cur.as_mut().unwrap().mark = 10;
        assert_eq!(cell.resolve(&mut st, miss(8, 5)), Step::Got(108, 2));
        // Past the end with nothing to switch to: a claim is asked for.
        assert!(!st.wanted);
        assert_eq!(cell.resolve(&mut st, miss(10, 1)), Step::Wait);
        assert!(st.wanted);
        // The next segment arrives, not marked yet: still waiting.
        st.next = Some(Seg {
            start: 500,
            len: 10,
            mark: 0,
        });
        assert_eq!(cell.resolve(&mut st, miss(11, 1)), Step::Wait);
        st.next.as_mut().unwrap().mark = 3;
        assert_eq!(cell.resolve(&mut st, miss(12, 1)), Step::Retry);
        assert_eq!(st.cur.unwrap().start, 500);
        // Claims of the old generation: served below its mark, else claim again.
        assert_eq!(cell.resolve(&mut st, miss(9, 1)), Step::Got(109, 1));
        assert_eq!(cell.resolve(&mut st, miss(10, 1)), Step::Retry);
        // An older one, or a carried-over one: lost.
        let old = Miss {
            generation: g - 2,
            offset: 0,
            count: 1,
        };
        assert_eq!(cell.resolve(&mut st, old), Step::Retry);
        let mut woke = false;
        drop(st);
        assert_eq!(cell.window.claim(3, &mut woke), Ok(500));
        assert!(woke, "the first take of a new segment wakes the keeper");
    }

    #[test]
    fn a_rows_error_fails_at_once_and_a_dead_tag_always() {
        let (cell, g) = cell_with(
            Seg {
                start: 0,
                len: 1,
                mark: 1,
            },
            None,
        );
        let mut st = cell.lock();
        let miss = Miss {
            generation: g,
            offset: 1,
            count: 1,
        };
        st.last_error = Some(("database down".into(), false));
        assert_eq!(cell.resolve(&mut st, miss), Step::Wait);
        st.last_error = Some(("step 0 refused".into(), true));
        match cell.resolve(&mut st, miss) {
            Step::Fail(e) => assert!(e.to_string().contains("step 0 refused"), "{e}"),
            other => panic!("{other:?}"),
        }
        st.dead = Some(SegmentError::Removed { tag: "t".into() });
        match cell.resolve(&mut st, miss) {
            Step::Fail(e) => assert!(e.to_string().contains("deleted from leaf_alloc"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn closing_counts_exactly_what_was_claimed() {
        let (cell, _) = cell_with(
            Seg {
                start: 0,
                len: 100,
                mark: 50,
            },
            None,
        );
        let mut woke = false;
        for _ in 0..7 {
            cell.window.claim(1, &mut woke).unwrap();
        }
        let mut st = cell.lock();
        assert_eq!(cell.claimed(&st), 7);
        assert_eq!(cell.close(&mut st), Some(7));
        drop(st);
        assert!(cell.window.claim(1, &mut woke).is_err());
    }
}
