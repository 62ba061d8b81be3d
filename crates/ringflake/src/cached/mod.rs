//! `CachedUidGenerator`: a background filler borrows future seconds to pre-generate IDs into a
//! [ring](crate::ring), and any number of threads take them with one atomic read-modify-write each.
//!
//! Borrowing future seconds is Baidu UidGenerator's `BufferPaddingExecutor`, and what RFC 9562
//! §6.2 calls "increment the timestamp ahead of the actual time" to keep IDs unique and ordered
//! when more are wanted in one time unit than the layout holds. The filler ([`filler`]) is the
//! only writer of the ring and the only place time is decided. It follows seven rules, numbered
//! once in [`CachedUidGenerator`]'s `# Clock behaviour` (so that docs.rs shows them) and cited by
//! number in the code.

mod builder;
mod discards;
mod filler;
mod heal;
mod lead;
mod local;
mod queue;
mod renewal;
mod shared;
mod snapshot;
mod stats;
mod take;
#[cfg(feature = "tokio")]
mod take_async;
mod watch;

pub use builder::{
    CachedBuilder, DEFAULT_BOOST_POWER, DEFAULT_MAX_LAG, DEFAULT_PADDING_FACTOR,
    DEFAULT_SCHEDULE_INTERVAL, TICK_SCHEDULE_INTERVAL,
};
pub use lead::{DEFAULT_MAX_LEAD, LeadPolicy};
pub use local::LocalTaker;
pub use shared::CachedUidGenerator;
pub use stats::{FILLER_RECORD_INTERVAL, Health, IDLE_AFTER, Stats, StatsSink, StatsSource};
