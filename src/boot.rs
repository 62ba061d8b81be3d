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
        above: Option<u64>,
    ) -> Result<Boot, Error> {
        let assignment = assignment?;
        let worker_id = crate::worker::assigner::check_fits(assignment.worker_id, layout)?;
        let now = clock.now_seconds();
        layout.check_alive_at(now)?;
        let recorded = match state {
            Some(file) => file.read()?,
            None => None,
        };
        let floor = first_delta(&assignment, recorded, layout, now, max_lead);
        if let Some(above) = above {
            // The first second is the floor or the clock's, whichever is later; every later ID
            // of this worker is higher.
            let first = floor.max(now.saturating_sub(layout.epoch_seconds()).max(0) as u64);
            check_above(layout, first, worker_id, above)?;
        }
        let keeper = match assignment.lease {
            // The lease must cover the floor: extensions reach a window past it from the start.
            Some(lease) => Some(Keeper::start(
                lease,
                worker_id,
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

/// The first delta second `assignment` allows: above the assignment's floor and above `recorded`
/// (what an earlier run recorded in the state file), both exactly (uniqueness); above the host's
/// earlier rows within the lead cap (ordering: the first second is then at most
/// `now + max_lead`, no wait). At a boot, and when a generator heals with a new worker id.
pub(crate) fn first_delta(
    assignment: &Assignment,
    recorded: Option<i64>,
    layout: &Layout,
    now: i64,
    max_lead: Option<u64>,
) -> u64 {
    let order = match max_lead {
        Some(lead) => assignment
            .order_floor
            .map(|f| f.min(now.saturating_add(lead as i64) - 1)),
        None => assignment.order_floor,
    };
    assignment
        .not_before
        .max(recorded)
        .max(order)
        .map_or(0, |s| {
            s.saturating_add(1)
                .saturating_sub(layout.epoch_seconds())
                .max(0) as u64
        })
}

/// Checks that the first ID of second `first` for `worker_id` sorts above `above`.
fn check_above(layout: &Layout, first: u64, worker_id: u64, above: u64) -> Result<(), Error> {
    let first_id = layout.compose(first, worker_id, 0)?;
    if first_id > above {
        return Ok(());
    }
    Err(Error::NotAbove {
        above,
        first_id,
        epoch_back_seconds: (above >> layout.time_shift()) + 1 - first,
    })
}

/// The start settings both builders share (`layout`, `assignment` and `clock` fields), written
/// once: `worker_id`, `worker_id_from`, `clock` and `above`, each documented with an example on
/// `$gen`.
macro_rules! start_setters {
    ($gen:ident) => {
        #[doc = concat!("Uses worker id `id` (checked against the layout when built).\n\n```\nuse ringflake::{", stringify!($gen), ", Layout};\nlet g = ", stringify!($gen), "::builder(Layout::default()).worker_id(9).build()?;\nassert_eq!(g.worker_id(), 9);\n# Ok::<(), ringflake::Error>(())\n```")]
        pub fn worker_id(mut self, id: u64) -> Self {
            self.assignment = Ok($crate::Assignment::fixed(id));
            self.retake = None;
            self
        }

        #[doc = concat!("Asks `assigner` for the worker id now; its error, if any, is returned when built. A [`CachedUidGenerator`](crate::CachedUidGenerator) keeps the assigner's [`retaker`](crate::WorkerIdAssigner::retaker), if it has one, to take a new worker id by itself should its lease be lost for good.\n\n```\nuse ringflake::{", stringify!($gen), ", FixedWorkerId, Layout};\nlet g = ", stringify!($gen), "::builder(Layout::default())\n    .worker_id_from(&FixedWorkerId(3))\n    .build()?;\nassert_eq!(g.worker_id(), 3);\n# Ok::<(), ringflake::Error>(())\n```")]
        pub fn worker_id_from(mut self, assigner: &dyn $crate::WorkerIdAssigner) -> Self {
            self.assignment = assigner.assign(&self.layout);
            self.retake = assigner.retaker();
            self
        }

        #[doc = concat!("Reads time from `clock` instead of the system clock.\n\n```\nuse ringflake::{", stringify!($gen), ", Layout, ManualClock};\nlet clock = ManualClock::from_seconds(1_800_000_000);\nlet g = ", stringify!($gen), "::builder(Layout::default()).worker_id(1).clock(clock).build()?;\nlet parsed = Layout::default().parse(g.next_id()?)?;\nassert_eq!(parsed.unix_seconds, 1_800_000_000);\n# Ok::<(), ringflake::Error>(())\n```")]
        pub fn clock(mut self, clock: impl $crate::Clock) -> Self {
            self.clock = std::sync::Arc::new(clock);
            self
        }

        #[doc = concat!("Refuses to start unless every ID issued sorts above `id`, an ID of another generator (Leaf, Java UidGenerator, any 63-bit scheme) this one takes over from: when built, the first ID (the first second this boot may use, its worker id, sequence 0) must exceed `id`, else the build fails with [`Error::NotAbove`](crate::Error::NotAbove), naming both IDs and how far the epoch must move back. [`plan::epoch_above`](crate::plan::epoch_above) finds such an epoch.\n\n```\nuse ringflake::{", stringify!($gen), ", Error, Layout, ManualClock};\nlet layout = Layout::default();\nlet clock = ManualClock::from_seconds(1_800_000_000);\nlet now_id = layout.compose(1_800_000_000 - layout.epoch_seconds() as u64, 0, 0)?;\n// An ID from an hour ago is below: the generator starts.\nlet g = ", stringify!($gen), "::builder(layout).worker_id(1).clock(clock.clone()).above(now_id - (3600 << 32)).build()?;\nassert!(g.next_id()? > now_id);\ndrop(g);\n// An ID from an hour ahead is not.\nlet err = ", stringify!($gen), "::builder(layout).worker_id(1).clock(clock).above(now_id + (3600 << 32)).build().unwrap_err();\nassert!(matches!(err, Error::NotAbove { epoch_back_seconds: 3601, .. }), \"{err}\");\n# Ok::<(), ringflake::Error>(())\n```")]
        pub fn above(mut self, id: u64) -> Self {
            self.above = Some(id);
            self
        }
    };
}
pub(crate) use start_setters;
