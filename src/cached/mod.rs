//! `CachedUidGenerator`: a background filler borrows future seconds to pre-generate IDs into a
//! [ring](crate::ring), and any number of threads take them with one atomic read-modify-write each.
//!
//! Borrowing future seconds is Baidu UidGenerator's `BufferPaddingExecutor`, and what RFC 9562
//! §6.2 calls "increment the timestamp ahead of the actual time" to keep IDs unique and ordered
//! when more are wanted in one time unit than the layout holds. The filler ([`filler`]) is the
//! only writer of the ring and the only place time is decided. Its rules, numbered here once and
//! cited by number in the code:
//!
//! 1. **Never behind the clock**: the next second it writes is `max(last + 1, now)`, and never a
//!    second below the boot's floor (everything an earlier holder of the worker id, or an earlier
//!    run recorded in the state file, may have used).
//! 2. **A full ring keeps the rest of its second**: when the ring fills in the middle of a
//!    second, the rest of that second is written next round (unless the clock has passed it).
//! 3. **Borrow only under demand**: a second ahead of the clock is written only while fewer than
//!    the threshold (`padding_factor` percent of one second's IDs, or of the ring if smaller) are
//!    ready. Below `2^seq_bits` IDs a second, IDs carry the current second: the lead stays at
//!    most 1 s, whatever the ring's size.
//! 4. **Bounded lead**: never a second beyond `now + max_lead` (default
//!    [`DEFAULT_MAX_LEAD`](crate::DEFAULT_MAX_LEAD)); at the cap, takes wait for the clock or
//!    fail, as the [`LeadPolicy`] says. Unbounded only when asked for
//!    ([`CachedBuilder::unbounded_lead`], Java's behaviour).
//! 5. **Reserved before use**: never a second beyond the worker lease's horizon, nor beyond what
//!    the state file records; the filler raises the state file (durably) before it writes a
//!    second past it.
//! 6. **No stale IDs**: every round first discards ready IDs more than `max_lag` behind the clock.
//!    Rounds run at least every `schedule_interval` (at most `max_lag / 4`), so after a forward
//!    clock step, older IDs can be handed out for at most one such interval.
//! 7. **An end, not a wrap**: when the time bits run out, takes fail with
//!    [`Error::TimeBitsExhausted`](crate::Error::TimeBitsExhausted).

mod builder;
mod discards;
mod filler;
mod lead;
mod local;
mod shared;
mod snapshot;
mod stats;
mod take;

pub use builder::CachedBuilder;
pub use lead::{DEFAULT_MAX_LEAD, LeadPolicy};
pub use local::LocalTaker;
pub use shared::CachedUidGenerator;
pub use stats::{FILLER_RECORD_INTERVAL, Health, IDLE_AFTER, Stats, StatsSink, StatsSource};
