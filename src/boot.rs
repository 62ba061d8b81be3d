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
        // The first second is then at most `now + max_lead`: within the cap, no wait.
        let order = match max_lead {
            Some(lead) => assignment
                .order_floor
                .map(|f| f.min(now.saturating_add(lead as i64) - 1)),
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
            // The lease must cover the floor: extensions reach a window past it from the start.
            Some(lease) => Some(Keeper::start(
                lease,
                Arc::clone(clock),
                max_lead,
                layout.epoch_seconds().saturating_add(floor as i64),
            )?),
            None => None,
        };
        Ok(Boot {
            worker_id,
            floor,
            keeper,
        })
    }
}

/// The start settings both builders share (`layout`, `assignment` and `clock` fields), written
/// once: `worker_id`, `worker_id_from` and `clock`, each documented with an example on `$gen`.
macro_rules! start_setters {
    ($gen:ident) => {
        #[doc = concat!("Uses worker id `id` (checked against the layout when built).\n\n```\nuse ringflake::{", stringify!($gen), ", Layout};\nlet g = ", stringify!($gen), "::builder(Layout::default()).worker_id(9).build()?;\nassert_eq!(g.worker_id(), 9);\n# Ok::<(), ringflake::Error>(())\n```")]
        pub fn worker_id(mut self, id: u64) -> Self {
            self.assignment = Ok($crate::Assignment::fixed(id));
            self
        }

        #[doc = concat!("Asks `assigner` for the worker id now; its error, if any, is returned when built.\n\n```\nuse ringflake::{", stringify!($gen), ", FixedWorkerId, Layout};\nlet g = ", stringify!($gen), "::builder(Layout::default())\n    .worker_id_from(&FixedWorkerId(3))\n    .build()?;\nassert_eq!(g.worker_id(), 3);\n# Ok::<(), ringflake::Error>(())\n```")]
        pub fn worker_id_from(mut self, assigner: &dyn $crate::WorkerIdAssigner) -> Self {
            self.assignment = assigner.assign(&self.layout);
            self
        }

        #[doc = concat!("Reads time from `clock` instead of the system clock.\n\n```\nuse ringflake::{", stringify!($gen), ", Layout, ManualClock};\nlet clock = ManualClock::from_seconds(1_800_000_000);\nlet g = ", stringify!($gen), "::builder(Layout::default()).worker_id(1).clock(clock).build()?;\nlet parsed = Layout::default().parse(g.next_id()?)?;\nassert_eq!(parsed.unix_seconds, 1_800_000_000);\n# Ok::<(), ringflake::Error>(())\n```")]
        pub fn clock(mut self, clock: impl $crate::Clock) -> Self {
            self.clock = std::sync::Arc::new(clock);
            self
        }
    };
}
pub(crate) use start_setters;
