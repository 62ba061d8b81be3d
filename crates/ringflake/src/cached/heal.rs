//! Healing: a generator whose worker lease is lost for good (its row taken over by another node,
//! or gone) takes a new worker id from its source by itself, as soon as the source answers, and
//! serves again.
//!
//! The lease keeper finds the loss (an extension refused for good, not a database that does not
//! answer: a lease still its own is simply extended again once the database is back) and asks
//! the assigner's [`retaker`](crate::WorkerIdAssigner::retaker) for a new worker id; the
//! [`Renewal`](super::renewal::Renewal) carries the answer to the filler, which switches at the start of its next round,
//! under its lock: the ring's IDs of the old worker id are discarded (none is handed out from the
//! ring after the switch), the new worker id's first second is above everything its earlier
//! holders may have used (the assignment's floor) and everything the state file records, and
//! above every second this generator wrote before (IDs one thread takes keep increasing), and
//! the keeper keeps the new lease from there on. A generator without a retaker (a fixed worker
//! id) cannot heal and stays unavailable, saying so.

use super::shared::{FillerState, Shared};
use std::sync::atomic::Ordering;

impl Shared {
    /// At the start of a filler round: switches to a new worker id if the keeper took one.
    pub(super) fn heal_if_renewed(&self, st: &mut FillerState, now: u64) {
        let Some(keeper) = &self.keeper else {
            return;
        };
        if keeper.is_taken_over() {
            // Lost for good (another node may issue under the worker id now, when the database
            // lost this node's write): none of the ring's IDs is handed out any more.
            self.discard_ring(st.tail, false);
        }
        let Some(renewal) = &self.renewal else {
            return;
        };
        let Some(assignment) = renewal.take() else {
            return;
        };
        let old = self.worker_id.load(Ordering::Relaxed);
        let new = assignment.worker_id;
        let refuse = |why: String| {
            tracing::error!(worker_id = new, reason = %why, "new worker id not usable");
            keeper.renew_again();
        };
        if let Err(e) = crate::worker::assigner::check_fits(new, &self.layout) {
            return refuse(e.to_string());
        }
        let reaches = match &self.reach {
            Some(r) => match r.file.read() {
                Ok(reaches) => Some(reaches),
                Err(e) => return refuse(e.to_string()),
            },
            None => None,
        };
        let floor = crate::boot::first_delta(
            &assignment,
            reaches.as_ref(),
            &self.layout,
            self.layout.tick_second(now),
            self.max_lead.map(|(lead, _)| lead),
        );
        let Some(lease) = assignment.lease else {
            return refuse("the source gave a worker id without a lease".into());
        };
        // The ring's IDs of the old worker id: none is handed out from the ring from here on.
        self.discard_ring(st.tail, false);
        // Above every second written before (a second partly written counts as used).
        let written = st.next_delta + u64::from(st.next_seq > 0);
        st.next_delta = floor.max(written);
        st.next_seq = 0;
        if let Some(r) = &self.reach {
            // What the file records is per worker id: the new one's reach is raised before any
            // of its seconds is used, whatever the old one's was.
            r.reserved.store(i64::MIN, Ordering::Relaxed);
        }
        keeper.install(new, lease, self.layout.tick_second(st.next_delta));
        self.counters.heals.fetch_add(1, Ordering::Relaxed);
        self.counters.lease_capped.store(false, Ordering::Release);
        // Published last (Release): whoever sees the new worker id also sees its lease and the
        // heal counted (a snapshot taken between the two told the new id with no heal).
        self.worker_id.store(new, Ordering::Release);
        tracing::warn!(
            old_worker_id = old,
            worker_id = new,
            first_second = self.layout.tick_second(st.next_delta),
            "worker lease lost for good: serving again with a new worker id"
        );
    }
}
