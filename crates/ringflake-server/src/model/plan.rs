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

/// How a [`Plan`] boots its generator, in two steps: the first checks everything knowable
/// without a worker id (its settings, its layout alive at the clock's time, its state file) and
/// claims nothing; the second, the [`Build`] it returns, asks its worker id source for an id,
/// builds the ring and starts its filler. The service takes the first step for every generator
/// before the second for any, so that a generator refused at start takes no worker id, nor makes
/// another take one. Their errors read as the service's error (they name the config file's table
/// for a generator from one).
pub type Boot = Box<dyn FnMut() -> Result<Build, String>>;

/// The second step of a [`Boot`]: claims a worker id and starts the generator.
pub type Build = Box<dyn FnOnce() -> Result<CachedUidGenerator, String>>;

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
    /// Its namespace (`--namespace`, the `namespace` key): an ID space of its own, if declared.
    pub namespace: Option<String>,
    /// Boots it.
    pub boot: Boot,
}
