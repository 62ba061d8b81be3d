//! Meituan Leaf's segment mode: dense numbers per business tag from Leaf's `leaf_alloc` table
//! (`SegmentIDGenImpl`), with takes at the cost of one atomic add, claims the database cannot
//! forget, and restarts that lose no range.
//!
//! The vocabulary is in `error` ([`SegmentError`]) and `table` ([`SegmentTable`], the
//! statements each database provides); each database says only what differs (`sqlite`,
//! `mysql`, `postgres`). The algorithm:
//!
//! - `window`: a tag's lock-free take (a generation-tagged counter and a descriptor read as a
//!   seqlock, the pattern of the ring's chunk slots);
//! - `tag`: a tag's segments under a lock, Leaf's `SegmentBuffer`: what a take that missed
//!   does, switching to the next segment, Leaf's dynamic step;
//! - `state`: the state directory, one file per tag recording the ranges held and their marks;
//! - `keeper`: the thread that moves marks ahead of the takes (state file first) and asks for
//!   the next range when a tenth of the current one is used;
//! - `claimer`: the thread that talks to the database: claims (Leaf's transaction, confirmed on
//!   every standby), take-overs at start, rereads of the tags;
//! - `generator` ([`SegmentGenerator`], its builder), `take` ([`SegmentTag`], the sync takes),
//!   `take_async`, `taker` ([`SegmentTaker`], per-thread), `stats` ([`SegmentStats`]) and
//!   `metrics` ([`SegmentMetrics`], the Prometheus series).

pub(crate) mod error;

#[cfg(feature = "segment")]
mod claimer;
#[cfg(feature = "segment")]
mod generator;
#[cfg(feature = "segment")]
mod keeper;
#[cfg(all(feature = "segment", feature = "metrics"))]
mod metrics;
#[cfg(all(feature = "segment", feature = "mysql"))]
mod mysql;
#[cfg(all(feature = "segment", feature = "postgres"))]
mod postgres;
#[cfg(all(feature = "segment", any(feature = "mysql", feature = "postgres")))]
mod server;
#[cfg(all(feature = "segment", feature = "sqlite"))]
mod sqlite;
#[cfg(feature = "segment")]
mod state;
#[cfg(feature = "segment")]
mod stats;
#[cfg(feature = "segment")]
mod table;
#[cfg(feature = "segment")]
mod tag;
#[cfg(feature = "segment")]
mod take;
#[cfg(all(feature = "segment", feature = "tokio"))]
mod take_async;
#[cfg(feature = "segment")]
mod taker;
#[cfg(feature = "segment")]
mod window;

pub use error::{MAX_TAG_LEN, SegmentError};
#[cfg(feature = "segment")]
pub use generator::{
    DEFAULT_MIN_CHUNK, DEFAULT_SEGMENT_MAX_WAIT, DEFAULT_SEGMENT_REFRESH, SEGMENT_MAX_BATCH,
    SegmentBuilder, SegmentGenerator,
};
#[cfg(all(feature = "segment", feature = "metrics"))]
pub use metrics::SegmentMetrics;
#[cfg(feature = "segment")]
pub use stats::SegmentStats;
#[cfg(feature = "segment")]
pub use table::{LeafRow, SegmentTable};
#[cfg(feature = "segment")]
pub use tag::{MAX_DYNAMIC_STEP, SEGMENT_DURATION};
#[cfg(feature = "segment")]
pub use take::{PendingNumber, SegmentTag};
#[cfg(feature = "segment")]
pub use taker::{SEGMENT_TAKER_BLOCK, SegmentTaker};
