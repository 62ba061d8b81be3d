//! A generator's start, shared by [`CachedUidGenerator`](crate::CachedUidGenerator) and
//! [`DefaultUidGenerator`](crate::DefaultUidGenerator): everything knowable without a worker id
//! checked first (the layout alive at the clock's time, the state file, `above`), then the worker
//! id claimed and checked against the layout, the first second this boot may use, and the lease
//! keeper running. A start refused before the claim claims nothing; one refused after it gives
//! the claim back ([`give_back`]).

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

/// Where a builder's worker id comes from.
#[derive(Debug)]
pub(crate) enum Claim {
    /// Made when the builder was told: a fixed id ([`worker_id`](crate::CachedBuilder::worker_id)),
    /// an assigner's answer when it has no owned copy to ask later, or the error it gave.
    Made(Result<Assignment, Error>),
    /// Asked of the builder's retaker (the assigner's owned copy) at build, once everything
    /// knowable without a worker id has been checked: a build refused for its settings, its
    /// layout or its state file claims nothing.
    AtBuild,
}

impl Claim {
    /// A builder told no worker id yet.
    pub(crate) fn none() -> Claim {
        Claim::Made(Err(no_worker_id()))
    }
}

/// The error of a build told no worker id.
fn no_worker_id() -> Error {
    Error::WorkerAssignment("no worker id: call worker_id or worker_id_from on the builder".into())
}

/// An assignment checked against the layout, and the first delta second it allows.
struct Checked {
    assignment: Assignment,
    worker_id: u64,
    floor: u64,
}

impl Boot {
    /// Checks everything knowable without a worker id (the layout alive at the clock's time, the
    /// state file, `above` for the most favourable worker id), then claims one (`claim`, else
    /// from `retake`), checks it against `layout` and starts its lease keeper. With a lead cap,
    /// an assignment whose floor lies so far beyond `now + max_lead` that the cap would hold it
    /// for longer than `limits.patience` seconds (the generator's `max_lag`: a wait that will not
    /// pass soon) is given back (its lease released at the reserved second, so the id is not
    /// recycled before it) and `retake` asked for another, once; the second is kept whatever its
    /// floor. A claim the start then refuses is given back ([`give_back`]).
    pub(crate) fn start(
        claim: Claim,
        retake: Option<&dyn WorkerIdAssigner>,
        layout: &Layout,
        clock: &Arc<dyn Clock>,
        state: Option<&ReachFile>,
        limits: Limits,
        above: Option<u64>,
    ) -> Result<Boot, Error> {
        let now = clock.now_seconds();
        let made = match claim {
            Claim::Made(made) => Some(made?),
            Claim::AtBuild => None,
        };
        // A worker id made before the build that the layout cannot hold is the error to report,
        // whatever the clock and the state file say.
        let made = match made {
            Some(a) => match check_fits(a.worker_id, layout) {
                Ok(_) => Some(a),
                Err(e) => return Err(give_back(a, retake, now, e)),
            },
            None => None,
        };
        // `above` is checked before the claim only when the worker id is still unknown: a known
        // one is checked exactly below, with its first second.
        let unknown = made.is_none();
        let reaches = match unclaimed_checks(
            layout,
            now,
            state,
            limits.max_lead,
            above.filter(|_| unknown),
        ) {
            Ok(reaches) => reaches,
            Err(e) => {
                return Err(match made {
                    Some(a) => give_back(a, retake, now, e),
                    None => e,
                });
            }
        };
        let assignment = match (made, retake) {
            (Some(a), _) => a,
            (None, Some(retake)) => retake.assign(layout)?,
            (None, None) => return Err(no_worker_id()),
        };
        let worker_id = match check_fits(assignment.worker_id, layout) {
            Ok(id) => id,
            Err(e) => return Err(give_back(assignment, retake, now, e)),
        };
        let chosen = checked(
            assignment,
            worker_id,
            layout,
            now,
            reaches.as_ref(),
            limits.max_lead,
        );
        Self::claimed(
            chosen,
            retake,
            layout,
            clock,
            now,
            reaches.as_ref(),
            limits,
            above,
        )
    }

    /// The rest of [`start`](Self::start), with a worker id claimed (`chosen`): what it refuses,
    /// it gives back.
    #[allow(clippy::too_many_arguments)]
    fn claimed(
        mut chosen: Checked,
        retake: Option<&dyn WorkerIdAssigner>,
        layout: &Layout,
        clock: &Arc<dyn Clock>,
        now: i64,
        reaches: Option<&Reaches>,
        limits: Limits,
        above: Option<u64>,
    ) -> Result<Boot, Error> {
        let Limits { max_lead, patience } = limits;
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
            release(&chosen.assignment, reserved_until);
            given_back = Some(back);
            // Held (its lease, its state directory's owner file) until another is claimed: the
            // retake must not take the same id back.
            let again = retake.assign(layout)?;
            let worker_id = match check_fits(again.worker_id, layout) {
                Ok(id) => id,
                Err(e) => return Err(give_back(again, Some(retake), now, e)),
            };
            chosen = checked(again, worker_id, layout, now, reaches, max_lead);
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
            if let Err(e) = check_above(layout, first, worker_id, above) {
                return Err(give_back(assignment, retake, now, e));
            }
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

/// What a start can refuse before it claims a worker id: a layout whose time bits have run out at
/// the clock's time, a state file that cannot be read, and an `above` that no worker id's first
/// ID exceeds even at the furthest second a boot starts at without waiting (`now + max_lead`):
/// the error then names the first ID of the largest worker id at the clock's second, and how far
/// the epoch must move back for it. The state file's reaches, if there is one.
pub(crate) fn unclaimed_checks(
    layout: &Layout,
    now: i64,
    state: Option<&ReachFile>,
    max_lead: Option<u64>,
    above: Option<u64>,
) -> Result<Option<Reaches>, Error> {
    layout.check_alive_at(now)?;
    let reaches = state.map(ReachFile::read).transpose()?;
    if let (Some(above), Some(lead)) = (above, max_lead) {
        let now_delta = layout.tick_at(now.saturating_mul(1000));
        let furthest = now_delta
            .saturating_add(layout.seconds_as_ticks(lead))
            .min(layout.max_delta());
        if check_above(layout, furthest, layout.max_worker_id(), above).is_err() {
            check_above(layout, now_delta, layout.max_worker_id(), above)?;
        }
    }
    Ok(reaches)
}

/// Gives back `assignment`, claimed by a start refused for `why` before it made an ID, and
/// returns `why`: its lease released at the last second an earlier holder may have used (or the
/// clock's), so that the id is free again at once (not in `lease_window`), and a worker id with
/// no lease (a table without recycling: a row of its own) handed back to `assigner`
/// ([`WorkerIdAssigner::give_back`]), which deletes its row.
fn give_back(
    assignment: Assignment,
    assigner: Option<&dyn WorkerIdAssigner>,
    now: i64,
    why: Error,
) -> Error {
    let worker_id = assignment.worker_id;
    let last = assignment.not_before.map_or(now, |s| s.max(now));
    tracing::info!(
        worker_id,
        reason = %why,
        "worker id {worker_id} given back: the start is refused ({why})"
    );
    if assignment.lease.is_some() {
        release(&assignment, last);
    } else if let Some(assigner) = assigner
        && let Err(e) = assigner.give_back(worker_id)
    {
        tracing::warn!(
            worker_id,
            error = %e,
            "worker id {worker_id} could not be given back: its row stays ({e})"
        );
    }
    why
}

/// Releases `assignment`'s lease, if it has one, at unix second `last`.
fn release(assignment: &Assignment, last: i64) {
    if let Some(lease) = &assignment.lease
        && let Err(e) = lease.release(last)
    {
        // Not recyclable before `last`; if the table cannot be told, the lease it holds now
        // still keeps the id from others until it expires.
        tracing::warn!(
            worker_id = assignment.worker_id,
            error = %e,
            "worker id {} given back, but its lease could not be moved to unix second {last}: \
             it expires as it is",
            assignment.worker_id
        );
    }
}

/// `assignment`, whose `worker_id` the layout holds ([`check_fits`]), with its first delta
/// second ([`first_delta`], with what the state file records).
fn checked(
    assignment: Assignment,
    worker_id: u64,
    layout: &Layout,
    now: i64,
    reaches: Option<&Reaches>,
    max_lead: Option<u64>,
) -> Checked {
    let floor = first_delta(&assignment, reaches, layout, now, max_lead);
    Checked {
        assignment,
        worker_id,
        floor,
    }
}

/// The first delta second `assignment` allows, with `reaches` what the state file records (`None`:
/// no state file):
///
/// - above the assignment's floor and above what the state file records for its worker id, both
///   exactly (uniqueness);
/// - above the host's earlier rows' leases (`order_floor`: ordering only, a new worker id), but
///   no further than their holders may have gone: no more than `max_lead` ahead of the clock, and
///   with a state file no further than the highest second it records for any worker id. A lease
///   runs a window (minutes) ahead of the seconds its holder used; the state file records each
///   second before an ID of it exists, so a restart in its directory starts right after the last
///   second the run before it used, and a run beside a live one (`gen` beside `serve`) at the
///   clock, not `max_lead` ahead.
///
/// At a boot, and when a generator heals with a new worker id.
pub(crate) fn first_delta(
    assignment: &Assignment,
    reaches: Option<&Reaches>,
    layout: &Layout,
    now: i64,
    max_lead: Option<u64>,
) -> u64 {
    let recorded = reaches.and_then(|r| r.of(assignment.worker_id));
    let mut order = assignment.order_floor;
    if let Some(lead) = max_lead {
        order = order.map(|f| f.min(now.saturating_add(lead as i64) - 1));
    }
    if let Some(reaches) = reaches {
        // `None` (nothing recorded: no earlier run in this directory) is below any second.
        order = order.min(reaches.highest());
    }
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
            self.assignment = $crate::boot::Claim::Made(Ok($crate::Assignment::fixed(id)));
            self.retake = None;
            self
        }

        #[doc = concat!("Takes the worker id from `assigner` when built, once every check that needs none has passed (the settings, the layout alive at the clock's time, the state file, [`above`](Self::above)): from the assigner's [`retaker`](crate::WorkerIdAssigner::retaker), its owned copy (a [`DatabaseAssigner`](crate::DatabaseAssigner) and a `ZooKeeperAssigner` have one), so that a build refused for those claims no row and no lease. A claim the build refuses after all is given back: its lease released at once, the row of a table without recycling deleted ([`WorkerIdAssigner::give_back`](crate::WorkerIdAssigner::give_back)). An assigner without a retaker is asked now; its error, if any, is returned when built. If the id's IDs turn out to be reserved beyond the lead cap (its floor, from the state file or the worker table, lies past `now + max_lead + max_lag`: the cap would hold it longer than `max_lag`), the build gives it back and takes another from the retaker, once: a boot never waits for the clock by choice (the id given back is told by `given_back()` on the generator). A [`CachedUidGenerator`](crate::CachedUidGenerator) keeps the retaker, if there is one, to take a new worker id by itself should its lease be lost for good.\n\n```\nuse ringflake::{", stringify!($gen), ", DatabaseAssigner, FixedWorkerId, Layout};\nlet g = ", stringify!($gen), "::builder(Layout::default())\n    .worker_id_from(&FixedWorkerId(3))\n    .build()?;\nassert_eq!(g.worker_id(), 3);\n\n// A layout whose time bits have run out is refused before the table is asked: no row.\nlet dir = tempfile::tempdir().unwrap();\nlet table = DatabaseAssigner::sqlite(dir.path().join(\"workers.db\"))?;\nlet refused = ", stringify!($gen), "::builder(Layout::uid_generator_defaults()).worker_id_from(&table).build();\nassert!(refused.is_err());\nassert!(table.list()?.is_empty());\n# Ok::<(), ringflake::Error>(())\n```")]
        pub fn worker_id_from(mut self, assigner: &dyn $crate::WorkerIdAssigner) -> Self {
            self.retake = assigner.retaker();
            self.assignment = match self.retake {
                Some(_) => $crate::boot::Claim::AtBuild,
                None => $crate::boot::Claim::Made(assigner.assign(&self.layout)),
            };
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
