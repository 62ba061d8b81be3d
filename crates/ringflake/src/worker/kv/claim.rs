//! A boot's claim of a worker id from a key-value store ([`Claim`]): the best free id, taken
//! with the reach its last holder left, and its own reach written before it is used.

use super::lease::KvLease;
use super::records::Holder;
use super::{Registry, Slot};
use crate::worker::assigner::Assignment;
use crate::{Clock, Error, Layout, SystemClock};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// How a claim goes: the lease window, how long to keep trying, and this boot's name for itself.
pub(crate) struct Claim<'a> {
    pub(crate) registry: &'a dyn Registry,
    pub(crate) window: i64,
    pub(crate) retry_for: Duration,
    pub(crate) generator: Option<String>,
}

impl Claim<'_> {
    /// A worker id up to the layout's largest, its reach confirmed: the ids nobody holds, those
    /// whose reach has passed first (lowest first), then the others by their reach. Retries an
    /// unanswering store, and waits for an id while every one is held, until `retry_for` has
    /// passed.
    pub(crate) fn run(&self, layout: &Layout) -> Result<Assignment, Error> {
        let deadline = Instant::now() + self.retry_for;
        let max = layout.max_worker_id();
        let mut pause = Duration::from_millis(100);
        let mut said: Option<String> = None;
        loop {
            match self.attempt(max, deadline) {
                Ok(Some(a)) => return Ok(a),
                Ok(None) => {}
                Err(
                    e @ Error::Database {
                        transient: true, ..
                    },
                ) if Instant::now() < deadline => {
                    self.say(&mut said, &e.to_string());
                }
                Err(e) => return Err(e),
            }
            if Instant::now() >= deadline {
                return Err(Error::WorkerAssignment(format!(
                    "no worker id up to {max} free in {} within {} s: every one is held by a \
                     live node (give the layout more worker bits, or wait for the holders of \
                     stopped nodes to expire)",
                    self.registry.describe(),
                    self.retry_for.as_secs()
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }

    /// Says why the boot waits, once per reason.
    fn say(&self, said: &mut Option<String>, why: &str) {
        if said.as_deref() != Some(why) {
            tracing::warn!(
                database = %self.registry.describe(),
                reason = %why,
                "waiting for a worker id: {why}; retrying for up to {} s",
                self.retry_for.as_secs()
            );
            *said = Some(why.to_string());
        }
    }

    /// One look at the ids and a take of the best ones; `None`: none could be taken now.
    fn attempt(&self, max: u64, deadline: Instant) -> Result<Option<Assignment>, Error> {
        let slots = self.registry.read()?;
        let now = SystemClock.now_seconds();
        for (worker_id, reach) in candidates(&slots, max, now) {
            let holder = Holder::new(now, self.generator.clone());
            let Some((hold, floor)) = self.registry.take(worker_id, &holder, deadline)? else {
                continue;
            };
            // The reach read with the take is the one that counts: it can have moved since
            // the look (a holder that released its id since).
            let floor = floor.or(reach);
            let until = now
                .max(floor.map_or(i64::MIN, |f| f.saturating_add(1)))
                .saturating_add(self.window);
            if let Err(e) = hold.write_reach(until) {
                // Not served under: given back (best effort) with the reach it had.
                let _ = hold.release(floor.unwrap_or(now.saturating_sub(1)));
                return Err(e);
            }
            tracing::info!(
                worker_id,
                database = %hold.describe(),
                after_second = floor,
                "worker id {worker_id} acquired{}",
                match floor {
                    Some(f) => format!(
                        ": its reach was {}, this node starts above it",
                        crate::clock::rfc3339(f)
                    ),
                    None => ": never held before".into(),
                }
            );
            return Ok(Some(Assignment {
                worker_id,
                not_before: floor,
                order_floor: None,
                lease: Some(Box::new(KvLease::new(hold, worker_id, until, self.window))),
            }));
        }
        Ok(None)
    }
}

/// The ids worth a take, best first, with the reach each had: ids nobody holds whose reach has
/// passed (or that were never held), lowest first, then those whose reach is ahead, soonest
/// first. At most a few never-held ids are offered (an id being taken has a holder and no reach
/// yet).
fn candidates(slots: &[Slot], max: u64, now: i64) -> Vec<(u64, Option<i64>)> {
    let known: BTreeSet<u64> = slots.iter().map(|s| s.worker_id).collect();
    let mut out: Vec<(u64, Option<i64>)> = slots
        .iter()
        .filter(|s| s.holder.is_none() && s.worker_id <= max)
        .map(|s| (s.worker_id, s.reach))
        .collect();
    let mut fresh = 0u64;
    let mut found = 0;
    while found < 4 && fresh <= max {
        if !known.contains(&fresh) {
            out.push((fresh, None));
            found += 1;
        }
        fresh += 1;
    }
    let waits = |reach: Option<i64>| reach.is_some_and(|r| r >= now);
    out.sort_by_key(|(id, reach)| {
        let w = waits(*reach);
        (w, if w { reach.unwrap_or(0) } else { 0 }, *id)
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(worker_id: u64, held: bool, reach: Option<i64>) -> Slot {
        Slot {
            worker_id,
            holder: held.then(|| Holder::new(1, None)),
            reach,
        }
    }

    /// Free ids whose reach passed come first, lowest first; then never-held ids; ids whose
    /// reach is ahead last, soonest first; held ids and ids past the layout never.
    #[test]
    fn candidates_prefer_ids_that_need_no_wait() {
        let now = 1_800_000_000;
        let slots = [
            slot(0, true, Some(now + 5)),
            slot(1, false, Some(now + 20)),
            slot(2, false, Some(now - 3)),
            slot(3, false, Some(now + 10)),
            slot(9, false, Some(now - 100)),
        ];
        let ids: Vec<u64> = candidates(&slots, 15, now)
            .into_iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(ids, vec![2, 4, 5, 6, 7, 9, 3, 1]);
        let ids: Vec<u64> = candidates(&slots, 3, now)
            .into_iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(ids, vec![2, 3, 1]);
        assert!(candidates(&[slot(0, true, None), slot(1, true, None)], 1, now).is_empty());
    }
}
