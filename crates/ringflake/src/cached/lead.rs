//! How far a generator may borrow ahead of the clock by default, and what takes do at the cap
//! (rule 4 of the [time rules](super)).

use std::time::Duration;

/// How far ahead of the clock a [`CachedUidGenerator`](crate::CachedUidGenerator) may borrow unless told otherwise: 10 s.
///
/// IDs then never carry a second more than 10 s ahead of the clock, a restart never starts more
/// than 10 s ahead, and a burst of up to `10 x 2^seq_bits` IDs above the sustained rate (42
/// million with the default layout) is absorbed without waiting.
///
/// ```
/// use ringflake::{CachedUidGenerator, DEFAULT_MAX_LEAD, Layout};
/// let g = CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?;
/// assert_eq!(g.max_lead(), Some(DEFAULT_MAX_LEAD));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub const DEFAULT_MAX_LEAD: Duration = Duration::from_secs(10);

/// What to do when the filler reaches the `max_lead` cap and the ring runs dry.
///
/// ```
/// use ringflake::{CachedUidGenerator, Error, Layout, LeadPolicy, ManualClock};
/// use std::time::Duration;
///
/// // 8,192 IDs a second, no borrowing, and a clock that stands still.
/// let layout = Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS)?;
/// let g = CachedUidGenerator::builder(layout)
///     .worker_id(1)
///     .clock(ManualClock::from_seconds(1_800_000_000))
///     .max_lead(Duration::ZERO, LeadPolicy::Fail)
///     .build()?;
/// let mut second = vec![0u64; 8192];
/// g.next_ids(&mut second)?;
/// // The second is used up and the clock does not move: Fail fails at once (Wait would wait).
/// assert!(matches!(g.next_id(), Err(Error::LeadLimitReached { .. })));
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeadPolicy {
    /// Takes wait until the clock catches up: about a second at most, unless the clock was set
    /// back, in which case they wait until it is past the cap again.
    Wait,
    /// Takes fail with [`Error::LeadLimitReached`](crate::Error::LeadLimitReached).
    Fail,
}
