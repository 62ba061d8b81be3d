//! The layout planner: which bit widths and epoch fit a demand, and what borrowing costs.
//!
//! Four numbers decide a layout: the sustained rate one worker must serve (IDs per second: the
//! busiest node's, or a fleet's rate spread over its nodes), how many nodes are live at once
//! (each holds a worker id), how many boots a day take a new worker id (as UidGenerator's
//! `DisposableWorkerIdAssigner` burns one per boot: without recycling), and how many years the
//! layout must last.
//!
//! - **Sequence bits** set the rate a worker serves from the current second: `2^seq_bits` IDs a
//!   second. Above it the cached generator *borrows* future seconds (RFC 9562 §6.2, "increment
//!   the timestamp ahead of the actual time"), so at rate `r` one worker uses `r / 2^seq_bits`
//!   seconds of its time field per wall-clock second, and the layout's lifetime shrinks by that
//!   factor. Borrowing never buys lifetime: a worker's ID space is `2^(time_bits + seq_bits)`
//!   either way; it only moves IDs from the future into the present.
//! - **Worker bits** must hold the live nodes, plus the ids of nodes restarted within one lease
//!   window (a crashed node's id stays leased that long): with [`DatabaseAssigner::recycle`], the
//!   default, that is all. Without recycling they must hold every id handed out while the layout
//!   lives, `restarts per day × 365.25 × years`, which the report tells apart.
//! - **Time bits** must cover the years from the epoch, so the epoch should be recent: every
//!   second between the epoch and the first boot is lost.
//!
//! [`propose`] finds the smallest width of each field for the demand and hands out the bits left
//! over in a few ways; [`Assessment::of`] tells how any layout fares under the demand.
//!
//! ```
//! use ringflake::plan::{Assessment, Demand, propose};
//! use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
//!
//! let now = 1_767_225_600; // 2026-01-01
//! let demand = Demand { ids_per_second: 100_000, nodes: 20, restarts_per_day: 2, years: 20 };
//! // ringflake's old 30/20/13 layout serves 8,192 IDs a second from the current second: at
//! // 100,000 a second it borrows about 12 seconds per second and lasts under 3 years, not 20.
//! let old = Layout::new(30, 20, 13, DEFAULT_EPOCH_SECONDS)?;
//! let default = Assessment::of(&old, &demand, now);
//! assert!(default.borrows() && !default.meets(&demand));
//! assert!(default.lifetime_years() < 3.0);
//! // The demand fits in 63 bits: every proposal meets it.
//! let proposals = propose(&demand, DEFAULT_EPOCH_SECONDS, now)?;
//! assert!(!proposals.is_empty());
//! assert!(proposals.iter().all(|p| p.assessment.meets(&demand)));
//! # Ok::<(), ringflake::Error>(())
//! ```
//!
//! [`DatabaseAssigner::recycle`]: crate::DatabaseAssigner::recycle

use crate::{Error, Layout};

/// Seconds in a year of 365.25 days.
///
/// ```
/// use ringflake::{Layout, plan::SECONDS_PER_YEAR};
/// // The default layout's 31 time bits last 68 years, as its documentation says.
/// assert_eq!(Layout::default().max_delta_seconds() / SECONDS_PER_YEAR, 68);
/// ```
pub const SECONDS_PER_YEAR: u64 = 31_557_600;

/// The largest rate the planner accepts: 2^40 (about 1.1 trillion) IDs per second.
const MAX_RATE: u64 = 1 << 40;

/// The longest lifetime the planner accepts, in years.
const MAX_YEARS: u32 = 10_000;

/// The most live nodes the planner accepts: 2^22 (4,194,304, the worker ids of Java's 22 bits).
const MAX_NODES: u64 = 1 << 22;

/// The most restarts a day the planner accepts: 2^40.
const MAX_RESTARTS: u64 = 1 << 40;

/// How long a crashed node's worker id stays leased after its last extension, in seconds (the
/// default lease window): the planner counts the ids of the restarts within one as live.
const LEASE_WINDOW: u64 = crate::worker::lease::DEFAULT_WINDOW_SECS as u64;

/// What a layout must sustain.
///
/// # Examples
///
/// ```
/// use ringflake::plan::Demand;
///
/// let demand = Demand { ids_per_second: 100_000, nodes: 500, restarts_per_day: 24, years: 20 };
/// assert_eq!(demand.worker_ids_per_year(), 8_766);
/// assert_eq!(demand.live_worker_ids(), 501); // 500 nodes, 1 restarted within a lease window
/// assert_eq!(demand.fleet_ids_per_second(), 50_000_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Demand {
    /// The sustained rate of the busiest node, in IDs per second.
    pub ids_per_second: u64,
    /// Nodes live at once, each holding a worker id (at least 1).
    pub nodes: u64,
    /// Boots per day across every node sharing the worker table; without recycling each takes a
    /// new worker id, with it only a crashed one holds its id for a lease window.
    pub restarts_per_day: u64,
    /// How long the layout must last, in years of 365.25 days.
    pub years: u32,
}

impl Demand {
    /// Worker ids consumed per year without recycling: `restarts_per_day × 365.25`, rounded up.
    ///
    /// ```
    /// use ringflake::plan::Demand;
    /// let d = Demand { ids_per_second: 1, nodes: 1, restarts_per_day: 1, years: 1 };
    /// assert_eq!(d.worker_ids_per_year(), 366);
    /// ```
    pub fn worker_ids_per_year(&self) -> u64 {
        self.restarts_per_day.saturating_mul(1461).div_ceil(4)
    }

    /// Worker ids held at once with recycling (the default): the live nodes, and the nodes
    /// restarted within one lease window (300 s), whose ids a crash leaves leased until it
    /// ends: `nodes + restarts_per_day × 300 / 86,400`, rounded up.
    ///
    /// ```
    /// use ringflake::plan::Demand;
    /// let d = Demand { ids_per_second: 1, nodes: 500, restarts_per_day: 10_000, years: 1 };
    /// assert_eq!(d.live_worker_ids(), 535);
    /// ```
    pub fn live_worker_ids(&self) -> u64 {
        self.nodes.max(1).saturating_add(
            self.restarts_per_day
                .saturating_mul(LEASE_WINDOW)
                .div_ceil(86_400),
        )
    }

    /// The fleet's rate if every live node ran at the busiest node's: `ids_per_second × nodes`.
    ///
    /// ```
    /// use ringflake::plan::Demand;
    /// let d = Demand { ids_per_second: 2_000, nodes: 500, restarts_per_day: 0, years: 1 };
    /// assert_eq!(d.fleet_ids_per_second(), 1_000_000);
    /// ```
    pub fn fleet_ids_per_second(&self) -> u64 {
        self.ids_per_second.saturating_mul(self.nodes.max(1))
    }

    /// Checks the numbers are in the planner's range.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] naming the value and its range: the rate must be 1 to 2^40 IDs
    /// a second, the nodes 1 to 2^22, the restarts at most 2^40 a day, the years 1 to 10,000.
    ///
    /// ```
    /// use ringflake::plan::Demand;
    /// let bad = Demand { ids_per_second: 0, nodes: 1, restarts_per_day: 1, years: 10 };
    /// assert_eq!(
    ///     bad.check().unwrap_err().to_string(),
    ///     "invalid rate 0: allowed 1..=1099511627776 IDs per second"
    /// );
    /// ```
    pub fn check(&self) -> Result<(), Error> {
        if !(1..=MAX_RATE).contains(&self.ids_per_second) {
            return Err(Error::InvalidConfig {
                name: "rate",
                value: self.ids_per_second,
                allowed: "1..=1099511627776 IDs per second",
            });
        }
        if !(1..=MAX_NODES).contains(&self.nodes) {
            return Err(Error::InvalidConfig {
                name: "nodes",
                value: self.nodes,
                allowed: "1..=4194304 live nodes",
            });
        }
        if self.restarts_per_day > MAX_RESTARTS {
            return Err(Error::InvalidConfig {
                name: "restarts per day",
                value: self.restarts_per_day,
                allowed: "0..=1099511627776",
            });
        }
        if !(1..=MAX_YEARS).contains(&self.years) {
            return Err(Error::InvalidConfig {
                name: "years",
                value: u64::from(self.years),
                allowed: "1..=10000",
            });
        }
        Ok(())
    }
}

/// How a layout fares under a [`Demand`], from a given moment.
///
/// # Examples
///
/// ```
/// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
/// use ringflake::plan::{Assessment, Demand};
///
/// let demand = Demand { ids_per_second: 81_920, nodes: 1, restarts_per_day: 0, years: 10 };
/// let layout = Layout::new(30, 20, 13, DEFAULT_EPOCH_SECONDS).unwrap(); // 8,192 IDs a second before borrowing
/// let a = Assessment::of(&layout, &demand, layout.epoch_seconds());
/// assert_eq!(a.time_per_second, 10.0); // ten seconds of the time field per second
/// assert!((a.lifetime_years() - 3.4).abs() < 0.01); // 34 years become 3.4
/// assert!(!a.meets(&demand));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assessment {
    /// The layout assessed.
    pub layout: Layout,
    /// The moment the assessment starts from, in unix seconds.
    pub now: i64,
    /// Seconds of the time field one worker uses per wall-clock second at the demanded rate:
    /// 1 without borrowing, `rate / 2^seq_bits` above it.
    pub time_per_second: f64,
    /// Seconds from `now` until the time field runs out at the demanded rate.
    pub lifetime_seconds: f64,
    /// Worker ids consumed per year without recycling.
    pub worker_ids_per_year: u64,
    /// Worker ids held at once with recycling ([`Demand::live_worker_ids`]).
    pub live_worker_ids: u64,
}

impl Assessment {
    /// Assesses `layout` under `demand` from unix second `now`.
    ///
    /// ```
    /// use ringflake::Layout;
    /// use ringflake::plan::{Assessment, Demand};
    ///
    /// let layout = Layout::new(31, 23, 9, 1_735_689_600)?;
    /// let demand = Demand { ids_per_second: 512, nodes: 100, restarts_per_day: 10, years: 50 };
    /// let a = Assessment::of(&layout, &demand, layout.epoch_seconds());
    /// assert!(!a.borrows());
    /// assert!(a.lifetime_years() > 68.0);
    /// assert!(a.meets(&demand));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn of(layout: &Layout, demand: &Demand, now: i64) -> Assessment {
        // A tick's IDs, every tick of the second: 4,096 x 1,000 for Twitter's layout.
        let per_worker = ((1u64 << layout.seq_bits()) * layout.unit().per_second()) as f64;
        let time_per_second = (demand.ids_per_second as f64 / per_worker).max(1.0);
        let used = now.saturating_sub(layout.epoch_seconds()).max(0) as u64;
        let left = layout.max_delta_seconds().saturating_sub(used);
        Assessment {
            layout: *layout,
            now,
            time_per_second,
            lifetime_seconds: left as f64 / time_per_second,
            worker_ids_per_year: demand.worker_ids_per_year(),
            live_worker_ids: demand.live_worker_ids(),
        }
    }

    /// The lifetime in years of 365.25 days.
    ///
    /// ```
    /// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
    /// use ringflake::plan::{Assessment, Demand};
    /// let d = Demand { ids_per_second: 1, nodes: 1, restarts_per_day: 0, years: 1 };
    /// let layout = Layout::new(30, 20, 13, DEFAULT_EPOCH_SECONDS).unwrap();
    /// let years = Assessment::of(&layout, &d, layout.epoch_seconds()).lifetime_years();
    /// assert!((years - 34.02).abs() < 0.01);
    /// ```
    pub fn lifetime_years(&self) -> f64 {
        self.lifetime_seconds / SECONDS_PER_YEAR as f64
    }

    /// The unix second the time field runs out at the demanded rate (saturating).
    ///
    /// ```
    /// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
    /// use ringflake::plan::{Assessment, Demand};
    /// let d = Demand { ids_per_second: 8_192, nodes: 1, restarts_per_day: 0, years: 1 };
    /// let layout = Layout::new(30, 20, 13, DEFAULT_EPOCH_SECONDS).unwrap();
    /// let a = Assessment::of(&layout, &d, layout.epoch_seconds());
    /// assert_eq!(a.exhausted_at(), layout.last_valid_second());
    /// ```
    pub fn exhausted_at(&self) -> i64 {
        self.now.saturating_add(self.lifetime_seconds as i64)
    }

    /// Whether one worker at the demanded rate borrows future seconds.
    ///
    /// ```
    /// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
    /// use ringflake::plan::{Assessment, Demand};
    /// let d = Demand { ids_per_second: 8_193, nodes: 1, restarts_per_day: 0, years: 1 };
    /// assert!(Assessment::of(&Layout::new(30, 20, 13, DEFAULT_EPOCH_SECONDS).unwrap(), &d, 1_800_000_000).borrows());
    /// ```
    pub fn borrows(&self) -> bool {
        self.time_per_second > 1.0
    }

    /// The rate one worker serves without borrowing: `2^seq_bits` IDs a tick, every tick of a
    /// second (`2^seq_bits` IDs a second for a seconds layout).
    ///
    /// ```
    /// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
    /// use ringflake::plan::{Assessment, Demand};
    /// let d = Demand { ids_per_second: 1, nodes: 1, restarts_per_day: 0, years: 1 };
    /// assert_eq!(Assessment::of(&Layout::new(30, 20, 13, DEFAULT_EPOCH_SECONDS).unwrap(), &d, 1_800_000_000).rate_without_borrowing(), 8_192);
    /// assert_eq!(Assessment::of(&Layout::twitter(), &d, 1_800_000_000).rate_without_borrowing(), 4_096_000);
    /// ```
    pub fn rate_without_borrowing(&self) -> u64 {
        (1u64 << self.layout.seq_bits()).saturating_mul(self.layout.unit().per_second())
    }

    /// Years until the worker ids run out without recycling; `None` without restarts.
    ///
    /// ```
    /// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
    /// use ringflake::plan::{Assessment, Demand};
    /// let d = Demand { ids_per_second: 1, nodes: 1, restarts_per_day: 100, years: 1 };
    /// let years = Assessment::of(&Layout::new(30, 20, 13, DEFAULT_EPOCH_SECONDS).unwrap(), &d, 1_800_000_000).worker_id_years();
    /// assert!((years.unwrap() - 28.7).abs() < 0.1); // 1,048,575 ids at 36,525 a year
    /// ```
    pub fn worker_id_years(&self) -> Option<f64> {
        (self.worker_ids_per_year > 0)
            .then(|| self.layout.max_worker_id() as f64 / self.worker_ids_per_year as f64)
    }

    /// Whether the layout lasts the demanded years at the demanded rate, and its worker ids hold
    /// the live nodes with recycling (the default; [`worker_ids_last`](Self::worker_ids_last)
    /// tells whether they would last without it).
    ///
    /// ```
    /// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
    /// use ringflake::plan::{Assessment, Demand};
    /// // 500 live nodes, 20 restarts a day each: the default layout holds them (1,023 ids),
    /// // though without recycling its ids would be gone within weeks.
    /// let d = Demand { ids_per_second: 2_000, nodes: 500, restarts_per_day: 10_000, years: 30 };
    /// let a = Assessment::of(&Layout::default(), &d, DEFAULT_EPOCH_SECONDS);
    /// assert!(a.meets(&d) && a.holds_live_nodes() && !a.worker_ids_last(&d));
    /// let d = Demand { nodes: 1_100, ..d };
    /// assert!(!Assessment::of(&Layout::default(), &d, DEFAULT_EPOCH_SECONDS).meets(&d));
    /// ```
    pub fn meets(&self, demand: &Demand) -> bool {
        self.lifetime_years() >= f64::from(demand.years) && self.holds_live_nodes()
    }

    /// Whether the worker field holds the live worker ids ([`Demand::live_worker_ids`]): a worker
    /// table hands out ids 1 to `2^worker_bits - 1`.
    ///
    /// ```
    /// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
    /// use ringflake::plan::{Assessment, Demand};
    /// let d = Demand { ids_per_second: 1, nodes: 1_023, restarts_per_day: 0, years: 1 };
    /// assert!(Assessment::of(&Layout::default(), &d, DEFAULT_EPOCH_SECONDS).holds_live_nodes());
    /// let d = Demand { nodes: 1_024, ..d };
    /// assert!(!Assessment::of(&Layout::default(), &d, DEFAULT_EPOCH_SECONDS).holds_live_nodes());
    /// ```
    pub fn holds_live_nodes(&self) -> bool {
        self.layout.max_worker_id() >= self.live_worker_ids
    }

    /// The fleet's rate without borrowing: every live node at [`rate_without_borrowing`](Self::rate_without_borrowing).
    ///
    /// ```
    /// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
    /// use ringflake::plan::{Assessment, Demand};
    /// let d = Demand { ids_per_second: 1, nodes: 500, restarts_per_day: 0, years: 1 };
    /// let a = Assessment::of(&Layout::default(), &d, DEFAULT_EPOCH_SECONDS);
    /// assert_eq!(a.fleet_rate_without_borrowing(500), 500 * 4_194_304);
    /// ```
    pub fn fleet_rate_without_borrowing(&self, nodes: u64) -> u64 {
        self.rate_without_borrowing().saturating_mul(nodes)
    }

    /// Whether the worker ids last the demanded years without recycling.
    ///
    /// ```
    /// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout};
    /// use ringflake::plan::{Assessment, Demand};
    /// let d = Demand { ids_per_second: 1, nodes: 1, restarts_per_day: 1_000, years: 10 };
    /// assert!(!Assessment::of(&Layout::new(30, 20, 13, DEFAULT_EPOCH_SECONDS).unwrap(), &d, 1_800_000_000).worker_ids_last(&d));
    /// ```
    pub fn worker_ids_last(&self, demand: &Demand) -> bool {
        self.worker_id_years()
            .is_none_or(|years| years >= f64::from(demand.years))
    }
}

/// A layout the planner proposes, with why and how it fares.
///
/// # Examples
///
/// ```
/// use ringflake::plan::{Demand, propose};
///
/// let demand = Demand { ids_per_second: 50_000, nodes: 10, restarts_per_day: 2, years: 30 };
/// let proposals = propose(&demand, 1_780_000_000, 1_780_000_000)?;
/// let first = &proposals[0];
/// assert_eq!(first.name, "longest life");
/// assert!(first.assessment.meets(&demand));
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// A short name: "longest life", "most worker ids", "burst headroom", "balanced", ...
    pub name: &'static str,
    /// What the proposal favours, in a sentence.
    pub why: &'static str,
    /// How it fares under the demand.
    pub assessment: Assessment,
}

/// The smallest width of each field for a demand: `(time, worker, sequence)`.
///
/// The sequence field holds the rate without borrowing, the worker field the live worker ids
/// with recycling ([`Demand::live_worker_ids`]; a worker table's ids start at 1), the time field
/// the years from `epoch_seconds` when counted from `now`.
///
/// # Errors
///
/// As [`Demand::check`].
///
/// ```
/// use ringflake::plan::{Demand, minimum_widths};
/// let d = Demand { ids_per_second: 100_000, nodes: 500, restarts_per_day: 24, years: 20 };
/// // 2^17 = 131,072 IDs a second; 501 live ids need 9 bits; 20 years need 30 time bits.
/// assert_eq!(minimum_widths(&d, 1_800_000_000, 1_800_000_000)?, (30, 9, 17));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub fn minimum_widths(
    demand: &Demand,
    epoch_seconds: i64,
    now: i64,
) -> Result<(u32, u32, u32), Error> {
    demand.check()?;
    let seq = bits_for(demand.ids_per_second - 1).max(1);
    let worker = bits_for(demand.live_worker_ids()).max(1);
    let elapsed = now.saturating_sub(epoch_seconds).max(0) as u64;
    let span = elapsed.saturating_add(u64::from(demand.years) * SECONDS_PER_YEAR);
    let time = bits_for(span).max(1);
    Ok((time, worker, seq))
}

/// The bits needed to hold `n`: 0 for 0, else `floor(log2(n)) + 1`.
fn bits_for(n: u64) -> u32 {
    64 - n.leading_zeros()
}

/// Proposes layouts for `demand` with epoch `epoch_seconds` (unix seconds, not after `now`),
/// best first, each with its [`Assessment`] from `now`.
///
/// When the minimum widths ([`minimum_widths`]) fit in 63 bits, the spare bits go to the time
/// field ("longest life"), the worker field ("most worker ids": more nodes, or room to run
/// without recycling), the sequence field ("burst headroom") or a third to each ("balanced");
/// proposals that come out the same are listed once. When they do not fit, the years are what
/// gives: "shorter life" keeps the rate and the live nodes and is the longest life they allow.
/// Borrowing is no way out: it moves IDs from the future, it does not add any.
///
/// # Errors
///
/// As [`Demand::check`] and [`Layout::new`] (an epoch after the current time);
/// [`Error::InvalidConfig`] when the rate and the live nodes alone take 63 bits.
///
/// # Examples
///
/// ```
/// use ringflake::plan::{Demand, propose};
///
/// // Minimum widths: 14 sequence bits (16,384 IDs a second), 17 worker bits (100,000 live
/// // nodes and 1 restarting), 29 time bits (10 years): 60 bits, 3 to spare.
/// let demand = Demand { ids_per_second: 10_000, nodes: 100_000, restarts_per_day: 24, years: 10 };
/// let now = 1_780_000_000; // 2026-05-28: a layout's epoch may not lie in the future
/// let proposals = propose(&demand, now, now)?;
/// let widths: Vec<_> = proposals
///     .iter()
///     .map(|p| {
///         let l = p.assessment.layout;
///         (p.name, l.time_bits(), l.worker_bits(), l.seq_bits())
///     })
///     .collect();
/// assert_eq!(widths, [
///     ("longest life", 32, 17, 14),
///     ("most worker ids", 29, 20, 14),
///     ("burst headroom", 29, 17, 17),
///     ("balanced", 30, 18, 15),
/// ]);
/// assert!(proposals.iter().all(|p| p.assessment.meets(&demand)));
///
/// // A million IDs a second on each of 4 million nodes for 2,000 years do not fit: the years give.
/// let demand = Demand { ids_per_second: 1_000_000, nodes: 4_000_000, restarts_per_day: 0, years: 2_000 };
/// let proposals = propose(&demand, now, now)?;
/// assert_eq!(proposals[0].name, "shorter life");
/// assert!(proposals[0].assessment.holds_live_nodes());
/// assert!(proposals[0].assessment.lifetime_years() < 2_000.0);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub fn propose(demand: &Demand, epoch_seconds: i64, now: i64) -> Result<Vec<Proposal>, Error> {
    let widths = minimum_widths(demand, epoch_seconds, now)?;
    candidates(demand, widths, epoch_seconds, now)
}

/// The layouts for minimum widths `(t, w, s)`, best first (see [`propose`]).
fn candidates(
    demand: &Demand,
    (t, w, s): (u32, u32, u32),
    epoch_seconds: i64,
    now: i64,
) -> Result<Vec<Proposal>, Error> {
    let mut candidates: Vec<(&'static str, &'static str, u32, u32, u32)> = Vec::new();
    if t + w + s <= 63 {
        let spare = 63 - (t + w + s);
        candidates.push((
            "longest life",
            "the spare bits go to the time field: the layout outlives the demanded years",
            t + spare,
            w,
            s,
        ));
        candidates.push((
            "most worker ids",
            "the spare bits go to the worker field: more nodes, or room to run without recycling",
            t,
            w + spare,
            s,
        ));
        candidates.push((
            "burst headroom",
            "the spare bits go to the sequence field: bursts far above the rate without borrowing",
            t,
            w,
            s + spare,
        ));
        let third = spare / 3;
        candidates.push((
            "balanced",
            "a third of the spare bits to each field, the rest to time",
            t + spare - 2 * third,
            w + third,
            s + third,
        ));
    } else if s + w < 63 {
        candidates.push((
            "shorter life",
            "the rate, the live nodes and the years do not fit 63 bits together: the longest life \
             the rate and the nodes allow",
            63 - s - w,
            w,
            s,
        ));
    } else {
        return Err(Error::InvalidConfig {
            name: "sequence + worker bits",
            value: u64::from(s + w),
            allowed: "at most 62, leaving a time bit: fewer IDs a second or fewer live nodes",
        });
    }
    let mut out: Vec<Proposal> = Vec::new();
    for (name, why, time, worker, seq) in candidates {
        let layout = Layout::new(time, worker, seq, epoch_seconds)?;
        if out.iter().any(|p| p.assessment.layout == layout) {
            continue;
        }
        out.push(Proposal {
            name,
            why,
            assessment: Assessment::of(&layout, demand, now),
        });
    }
    Ok(out)
}

/// [`minimum_widths`] when every new ID must also sort above the existing ID `above` (see
/// [`epoch_above`]): the time field must then hold, besides the demanded years, the seconds
/// between the epoch moved back and `now`. Those seconds depend only on the time bits (a layout
/// with `t` time bits shifts its time field by `63 - t`), so the smallest `t` that holds both is
/// taken; the worker and sequence widths are unchanged.
///
/// # Errors
///
/// As [`minimum_widths`]; [`Error::NegativeId`] if `above` has the sign bit set;
/// [`Error::AboveUnreachable`] if not even 61 time bits can sort above it.
///
/// ```
/// use ringflake::plan::{Demand, minimum_widths, minimum_widths_above};
/// let d = Demand { ids_per_second: 100_000, nodes: 20_000, restarts_per_day: 2, years: 30 };
/// let now = 1_767_225_600; // 2026-01-01
/// assert_eq!(minimum_widths(&d, now, now)?, (30, 15, 17));
/// // An ID of Leaf's 41-bit millisecond clock from 2026, read as seconds shifted by 33 bits, is
/// // 7.4 years: 30 time bits (34 years) cannot also hold 30 more; 31 bits, shifting by 32,
/// // lose 14.8 of their 68 years and can.
/// let leaf = ((now as u64) * 1000 - 1_288_834_974_657) << 22;
/// assert_eq!(minimum_widths_above(&d, leaf, now, now)?, (31, 15, 17));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub fn minimum_widths_above(
    demand: &Demand,
    above: u64,
    epoch_seconds: i64,
    now: i64,
) -> Result<(u32, u32, u32), Error> {
    let (t0, w, s) = minimum_widths(demand, epoch_seconds, now)?;
    if above > i64::MAX as u64 {
        return Err(Error::NegativeId { id: above });
    }
    let elapsed = now.saturating_sub(epoch_seconds).max(0) as u64;
    let years = u64::from(demand.years) * SECONDS_PER_YEAR;
    let needed = |t: u32| (above >> (63 - t)) + 1;
    let max = |t: u32| (1u64 << t) - 1;
    let fits = |t: u32| needed(t) <= max(t);
    let t = (t0..=61)
        .find(|&t| fits(t) && max(t) - needed(t).max(elapsed) >= years)
        .or_else(|| (t0..=61).find(|&t| fits(t)))
        .ok_or(Error::AboveUnreachable {
            id: above,
            limit: max(61) << 2,
            time_bits: 61,
        })?;
    Ok((t, w, s))
}

/// [`propose`] for a migration: every layout proposed makes IDs that sort above the existing ID
/// `above` from `now` on, its epoch moved back by [`epoch_above`], and its widths start from
/// [`minimum_widths_above`], so that the lifetime lost to the move is counted in. A proposal
/// that no epoch can put above `above` is left out.
///
/// # Errors
///
/// As [`minimum_widths_above`] and [`propose`]; [`Error::AboveUnreachable`] if no proposal can
/// be put above `above`.
///
/// ```
/// use ringflake::plan::{Demand, propose_above};
/// let d = Demand { ids_per_second: 10_000, nodes: 20, restarts_per_day: 2, years: 30 };
/// let now = 1_767_225_600; // 2026-01-01
/// let leaf = ((now as u64) * 1000 - 1_288_834_974_657) << 22;
/// let proposals = propose_above(&d, leaf, now, now)?;
/// assert!(!proposals.is_empty());
/// for p in &proposals {
///     let l = p.assessment.layout;
///     assert!(l.epoch_seconds() < now);
///     assert!(l.compose((now - l.epoch_seconds()) as u64, 0, 0)? > leaf);
/// }
/// assert!(proposals[0].assessment.meets(&d));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub fn propose_above(
    demand: &Demand,
    above: u64,
    epoch_seconds: i64,
    now: i64,
) -> Result<Vec<Proposal>, Error> {
    let widths = minimum_widths_above(demand, above, epoch_seconds, now)?;
    let mut first_error = None;
    let mut out = Vec::new();
    for p in candidates(demand, widths, epoch_seconds, now)? {
        match epoch_above(&p.assessment.layout, above, now) {
            Ok(layout) => out.push(Proposal {
                assessment: Assessment::of(&layout, demand, now),
                ..p
            }),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match (out.is_empty(), first_error) {
        (true, Some(e)) => Err(e),
        _ => Ok(out),
    }
}

/// `layout` with its epoch moved back, if it must be, so that every ID it makes from unix second
/// `now` on, whatever the worker id, sorts above `id`: an ID of the generator being replaced
/// (Meituan Leaf, Java UidGenerator with another layout, any 63-bit scheme), so that new IDs keep
/// sorting after old ones and never meet them.
///
/// At second `now` the smallest new ID is `delta << (worker_bits + seq_bits)` with `delta = now -
/// epoch`: it is above `id` once `delta > id >> (worker_bits + seq_bits)`. The epoch returned is
/// the latest that does this (`now - (id >> shift) - 1`), or `layout`'s own if that is earlier
/// already. Every second the epoch moves back is a second of the time field used up before the
/// first boot: compare [`Assessment::of`] both layouts for what that costs in lifetime.
///
/// # Errors
///
/// [`Error::UnsupportedLayout`] for a layout of ticks shorter than a second or narrower than 63
/// bits; [`Error::NegativeId`] if `id` has the sign bit set; [`Error::AboveUnreachable`] naming `id`
/// and the limit when no epoch can do it (`id` is at or above the first ID of the layout's last
/// second, `max_delta << shift`); [`Error::TimeBitsExhausted`] if `layout` with its own, earlier
/// epoch has already run out at `now`.
///
/// # Examples
///
/// ```
/// use ringflake::plan::{Assessment, Demand, epoch_above};
/// use ringflake::{Error, Layout};
///
/// let now = 1_767_225_600; // 2026-01-01
/// // A Meituan Leaf ID of that day: milliseconds since 2010-11-04T01:42:54.657Z, shifted by 22.
/// let leaf = ((now as u64) * 1000 - 1_288_834_974_657) << 22;
/// let plain = Layout::new(31, 10, 22, now)?; // the planner's epoch: today
/// let moved = epoch_above(&plain, leaf, now)?;
/// // The first ID at `now`, worker 0, sequence 0, sorts above the Leaf ID; a second earlier
/// // epoch would have been enough, one second later not.
/// let first = moved.compose((now - moved.epoch_seconds()) as u64, 0, 0)?;
/// assert!(first > leaf);
/// assert!(((now - moved.epoch_seconds() - 1) as u64) << 32 <= leaf);
/// // What it costs: of the 68 years of 31 time bits, 14.8 go before the first boot (15.2
/// // years of Leaf milliseconds, shifted by 22, read as seconds shifted by 32: / 1.024).
/// let demand = Demand { ids_per_second: 1_000, nodes: 1, restarts_per_day: 1, years: 30 };
/// let lost = Assessment::of(&plain, &demand, now).lifetime_years()
///     - Assessment::of(&moved, &demand, now).lifetime_years();
/// assert!((lost - 14.8).abs() < 0.05, "{lost}");
///
/// // Above the first ID of the last second, no epoch helps.
/// let err = epoch_above(&plain, i64::MAX as u64, now).unwrap_err();
/// assert!(matches!(err, Error::AboveUnreachable { id, limit, .. }
///     if id == i64::MAX as u64 && limit == ((1u64 << 31) - 1) << 32));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub fn epoch_above(layout: &Layout, id: u64, now: i64) -> Result<Layout, Error> {
    if id > i64::MAX as u64 {
        return Err(Error::NegativeId { id });
    }
    if layout.unit() != crate::TimeUnit::Seconds
        || layout.time_bits() + layout.worker_bits() + layout.seq_bits() != 63
    {
        return Err(Error::UnsupportedLayout {
            reason: "epoch_above moves the epoch of a layout of seconds in 63 bits; a preset of \
                     milliseconds keeps its epoch (its IDs are above older ones of the same \
                     layout already)",
        });
    }
    let shift = layout.time_shift();
    let needed = (id >> shift) + 1;
    if needed > layout.max_delta_seconds() {
        return Err(Error::AboveUnreachable {
            id,
            limit: layout.max_delta_seconds() << shift,
            time_bits: layout.time_bits(),
        });
    }
    let epoch = layout
        .epoch_seconds()
        .min(now.saturating_sub(needed as i64));
    let moved = Layout::new(
        layout.time_bits(),
        layout.worker_bits(),
        layout.seq_bits(),
        epoch,
    )?;
    moved.check_alive_at(now)?;
    Ok(moved)
}
