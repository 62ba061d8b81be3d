//! A generator's start, shared by [`CachedUidGenerator`](crate::CachedUidGenerator) and
//! [`DefaultUidGenerator`](crate::DefaultUidGenerator): the worker id checked against the layout,
//! the layout alive at the clock's time, the first second this boot may use, and the lease keeper
//! running.

use crate::reach::ReachFile;
use crate::worker::lease::Keeper;
use crate::{Assignment, Clock, Error, Layout};
use std::sync::Arc;

/// What a generator holds from its start.
pub(crate) struct Boot {
    /// The worker id, checked against the layout.
    pub(crate) worker_id: u64,
    /// The first delta second this boot may use: above everything the assignment says an earlier
    /// holder of the id (or an earlier run on this host) may have used.
    pub(crate) floor: u64,
    /// Keeps the worker lease extended, if the assignment has one; releases it when dropped.
    pub(crate) keeper: Option<Keeper>,
}

impl Boot {
    /// Checks `assignment` against `layout` at the clock's time and starts its lease keeper.
    pub(crate) fn start(
        assignment: Result<Assignment, Error>,
        layout: &Layout,
        clock: &Arc<dyn Clock>,
        state: Option<&ReachFile>,
        max_lead: Option<u64>,
    ) -> Result<Boot, Error> {
        let assignment = assignment?;
        let worker_id = crate::worker::check_fits(assignment.worker_id, layout)?;
        let now = clock.now_seconds();
        layout.check_alive_at(now)?;
        // Above the assignment's floor and above whatever an earlier run recorded locally, both
        // exactly (uniqueness); above the host's earlier rows within the lead cap (ordering).
        let recorded = match state {
            Some(file) => file.read()?,
            None => None,
        };
        let order = match max_lead {
            Some(lead) => assignment
                .order_floor
                .map(|f| f.min(now.saturating_add(lead as i64))),
            None => assignment.order_floor,
        };
        let floor = assignment
            .not_before
            .max(recorded)
            .max(order)
            .map_or(0, |s| {
                s.saturating_add(1)
                    .saturating_sub(layout.epoch_seconds())
                    .max(0) as u64
            });
        let keeper = match assignment.lease {
            Some(lease) => Some(Keeper::start(lease, Arc::clone(clock), max_lead)?),
            None => None,
        };
        Ok(Boot {
            worker_id,
            floor,
            keeper,
        })
    }
}
