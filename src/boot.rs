//! A generator's start, shared by [`CachedUidGenerator`](crate::CachedUidGenerator) and
//! [`DefaultUidGenerator`](crate::DefaultUidGenerator): the worker id checked against the layout,
//! the layout alive at the clock's time, the first second this boot may use, and the lease keeper
//! running.

use crate::reach::{ReachFile, Reaches};
use crate::worker::assigner::check_fits;
use crate::worker::lease::Keeper;
use crate::{Assignment, Clock, Error, Layout, WorkerIdAssigner};
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
    /// The worker id given back because it was reserved beyond the lead cap, if one was.
    pub(crate) given_back: Option<GivenBack>,
}

/// A worker id a generator gave back at start, and took another in its place: the id's IDs were
/// reserved (by the state file, or the worker table) up to a second beyond `now + max_lead +
/// max_lag`, so starting with it would have served nothing until the clock came within the lead
/// cap of that second, longer than `max_lag`. See [`CachedUidGenerator::given_back`](crate::CachedUidGenerator::given_back).
///
/// ```
/// use ringflake::GivenBack;
/// let g = GivenBack { worker_id: 1, reserved_until: 1_800_086_400, now: 1_800_000_000 };
/// assert_eq!(g.ahead_seconds(), 86_400);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GivenBack {
    /// The worker id given back.
    pub worker_id: u64,
    /// The last unix second its IDs may already have used (the first it could use is the next).
    pub reserved_until: i64,
    /// The clock's unix second when it was given back.
    pub now: i64,
}

impl GivenBack {
    /// How far ahead of the clock the given-back id was reserved, in seconds.
    ///
    /// ```
    /// use ringflake::GivenBack;
    /// let g = GivenBack { worker_id: 1, reserved_until: 100, now: 160 };
    /// assert_eq!(g.ahead_seconds(), 0); // not ahead (never negative)
    /// ```
    pub fn ahead_seconds(&self) -> u64 {
        self.reserved_until.saturating_sub(self.now).max(0) as u64
    }
}

/// The time limits a generator starts under: its lead cap (`None`: unbounded) and how long the
/// cap may hold a boot's first second before the worker id is given back (its `max_lag`), in
/// seconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_lead: Option<u64>,
    pub(crate) patience: u64,
}

/// An assignment checked against the layout, and the first delta second it allows.
struct Checked {
    assignment: Assignment,
    worker_id: u64,
    floor: u64,
}

impl Boot {
    /// Checks `assignment` against `layout` at the clock's time and starts its lease keeper.
    /// With a lead cap, an assignment whose floor lies so far beyond `now + max_lead` that the
    /// cap would hold it for longer than `limits.patience` seconds (the generator's `max_lag`: a wait
    /// that will not pass soon) is given back (its lease released at the reserved second, so the
    /// id is not recycled before it) and `retake` asked for another, once; the second is kept
    /// whatever its floor.
    pub(crate) fn start(
        assignment: Result<Assignment, Error>,
        retake: Option<&dyn WorkerIdAssigner>,
        layout: &Layout,
        clock: &Arc<dyn Clock>,
        state: Option<&ReachFile>,
        limits: Limits,
        above: Option<u64>,
    ) -> Result<Boot, Error> {
        let Limits { max_lead, patience } = limits;
        let assignment = assignment?;
        // The worker id first: a worker id the layout cannot hold is the error to report,
        // whatever the clock and the state file say.
        let worker_id = check_fits(assignment.worker_id, layout)?;
        let now = clock.now_seconds();
        layout.check_alive_at(now)?;
        let reaches = match state {
            Some(file) => file.read()?,
            None => Reaches::default(),
        };
        let mut chosen = checked(assignment, worker_id, layout, now, &reaches, max_lead);
        let now_delta = layout.tick_at(now.saturating_mul(1000));
        let mut given_back = None;
        // The first delta second beyond which the cap would hold the filler longer than patience.
        let too_far = max_lead.map(|lead| {
            now_delta
                .saturating_add(layout.seconds_as_ticks(lead))
                .saturating_add(layout.seconds_as_ticks(patience))
        });
        if let (Some(too_far), Some(retake)) = (too_far, retake)
            && chosen.floor > too_far
        {
            let reserved_until = layout.tick_second(chosen.floor - 1);
            let back = GivenBack {
                worker_id: chosen.worker_id,
                reserved_until,
                now,
            };
            tracing::warn!(
                worker_id = back.worker_id,
                reserved_until = %crate::clock::rfc3339(reserved_until),
                ahead_seconds = back.ahead_seconds(),
                max_lead = max_lead.unwrap_or(0),
                "worker id {} given back: its IDs may already reach {} (unix second \
                 {reserved_until}), {} s ahead of the clock, beyond the lead cap; taking another",
                back.worker_id,
                crate::clock::rfc3339(reserved_until),
                back.ahead_seconds()
            );
            if let Some(lease) = &chosen.assignment.lease
                && let Err(e) = lease.release(reserved_until)
            {
                // Not recyclable before the second its IDs may reach; if the table cannot be
                // told, the lease it holds now still keeps the id from others until it expires.
                tracing::warn!(
                    worker_id = back.worker_id,
                    error = %e,
                    "worker id {} given back, but its lease could not be moved to unix second \
                     {reserved_until}: it expires as it is",
                    back.worker_id
                );
            }
            given_back = Some(back);
            let again = retake.assign(layout)?;
            let worker_id = check_fits(again.worker_id, layout)?;
            chosen = checked(again, worker_id, layout, now, &reaches, max_lead);
        }
        let Checked {
            assignment,
            worker_id,
            floor,
        } = chosen;
        if let (Some(lead), Some(too_far)) = (max_lead, too_far)
            && floor > too_far
        {
            let reserved_until = layout.tick_second(floor - 1);
            let serves_at = reserved_until.saturating_add(1 - lead as i64);
            tracing::warn!(
                worker_id,
                reserved_until = %crate::clock::rfc3339(reserved_until),
                ahead_seconds = reserved_until.saturating_sub(now).max(0),
                serves_at = %crate::clock::rfc3339(serves_at),
                "worker id {worker_id} reserved ahead of the clock: its IDs may already reach {} \
                 (unix second {reserved_until}), {} s ahead, beyond the lead cap; it serves from {} \
                 (unix second {serves_at}), in {} s",
                crate::clock::rfc3339(reserved_until),
                reserved_until.saturating_sub(now).max(0),
                crate::clock::rfc3339(serves_at),
                serves_at.saturating_sub(now).max(0)
            );
        }
        if let Some(above) = above {
            // The first second is the floor or the clock's, whichever is later; every later ID
            // of this worker is higher.
            let first = floor.max(now_delta);
            check_above(layout, first, worker_id, above)?;
        }
        let keeper = match assignment.lease {
            // The lease must cover the floor: extensions reach a window past it from the start.
            Some(lease) => Some(Keeper::start(
                lease,
                worker_id,
                Arc::clone(clock),
                max_lead,
                layout.tick_second(floor),
            )?),
            None => None,
        };
        Ok(Boot {
            worker_id,
            floor,
            keeper,
            given_back,
        })
    }
}

/// `assignment`, whose `worker_id` the layout holds ([`check_fits`]), with its first delta
/// second ([`first_delta`], with what the state file records for this worker id).
fn checked(
    assignment: Assignment,
    worker_id: u64,
    layout: &Layout,
    now: i64,
    reaches: &Reaches,
    max_lead: Option<u64>,
) -> Checked {
    let floor = first_delta(&assignment, reaches.of(worker_id), layout, now, max_lead);
    Checked {
        assignment,
        worker_id,
        floor,
    }
}

/// The first delta second `assignment` allows: above the assignment's floor and above `recorded`
/// (what an earlier run recorded in the state file for its worker id), both exactly
/// (uniqueness); above the host's earlier rows within the lead cap (ordering: the first second
/// is then at most `now + max_lead`, no wait). At a boot, and when a generator heals with a new
/// worker id.
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
        .map_or(0, |s| layout.first_tick_after_second(s))
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
        epoch_back_seconds: ((above >> layout.time_shift()) + 1 - first)
            .div_ceil(layout.unit().per_second()),
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

        #[doc = concat!("Asks `assigner` for the worker id now; its error, if any, is returned when built. If the id's IDs turn out to be reserved beyond the lead cap (its floor, from the state file or the worker table, lies past `now + max_lead + max_lag`: the cap would hold it longer than `max_lag`), the build gives it back and takes another from the assigner's [`retaker`](crate::WorkerIdAssigner::retaker), once (a [`DatabaseAssigner`](crate::DatabaseAssigner) has one): a boot never waits for the clock by choice (the id given back is told by `given_back()` on the generator). A [`CachedUidGenerator`](crate::CachedUidGenerator) keeps the retaker, if there is one, to take a new worker id by itself should its lease be lost for good.\n\n```\nuse ringflake::{", stringify!($gen), ", FixedWorkerId, Layout};\nlet g = ", stringify!($gen), "::builder(Layout::default())\n    .worker_id_from(&FixedWorkerId(3))\n    .build()?;\nassert_eq!(g.worker_id(), 3);\n# Ok::<(), ringflake::Error>(())\n```")]
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
