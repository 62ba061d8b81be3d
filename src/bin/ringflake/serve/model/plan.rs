//! The generators the service is to run, as plain values ([`Plan`]): each one's name, layout,
//! zone, lead cap, state file, its worker id source described, and how to boot it. The binary's
//! `generators` module makes them from the flags and `--config`'s file; the service boots them,
//! in order, and never reads a flag.

use ringflake::{CachedUidGenerator, Layout, LeadPolicy, TimeZone};
use std::path::PathBuf;

/// The name of the generator the unnamed routes serve.
pub const DEFAULT: &str = "default";

/// How far ahead of the clock the generator may borrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lead {
    /// At most this many seconds; at the cap, takes wait or fail as the policy says.
    Capped(u64, LeadPolicy),
    /// As far as demand takes it (Java's behaviour).
    Unbounded,
}

/// How a [`Plan`] boots its generator: asks its worker id source for an id, builds the ring and
/// starts its filler. Its error reads as the service's error (it names the config file's table
/// for a generator from one).
pub type Boot = Box<dyn FnOnce() -> Result<CachedUidGenerator, String>>;

/// One generator, checked and resolved, not yet booted: nothing has asked its worker id source
/// for an id yet.
pub struct Plan {
    /// Its name: [`DEFAULT`], or its config table's.
    pub name: String,
    /// The zone `/parse` renders timestamps in.
    pub tz: TimeZone,
    /// Its layout.
    pub layout: Layout,
    /// Its worker id source, described (`sqlite file ringflake.db`).
    pub source: String,
    /// Its lead cap.
    pub lead: Lead,
    /// Its state file, if any.
    pub state: Option<PathBuf>,
    /// Boots it.
    pub boot: Boot,
}
