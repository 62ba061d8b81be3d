//! A worker id source as a command line names it: [`SourceKind`], plain data that says which
//! flags choose and configure the source and how their values open it, and [`Source`], what the
//! opened source does beside handing out worker ids (describe itself, list its ids, learn where
//! its node serves).
//!
//! This is what makes a source one room: the `ringflake` binary knows no source by name beyond
//! the worker tables; it turns each [`SourceKind`] it is given (one line of its set-up per
//! source) into flags of its own (`--etcd`, `--etcd-prefix`, each with its `RINGFLAKE_…`
//! variable and its `serve --config` key), and hands their values back as [`SourceSettings`].

use super::assigner::WorkerIdAssigner;
use crate::Error;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// A worker id source as the command line names it: the flag that chooses it, its own flags,
/// the flags it shares with the worker tables, and how their values open it.
///
/// ```
/// # #[cfg(feature = "zookeeper")] {
/// use ringflake::{SharedFlag, ZOOKEEPER};
///
/// assert_eq!(ZOOKEEPER.flag, "zookeeper"); // --zookeeper HOSTS, RINGFLAKE_ZOOKEEPER
/// assert!(ZOOKEEPER.options.iter().any(|o| o.name == "zookeeper-name"));
/// assert!(ZOOKEEPER.shared.contains(&SharedFlag::LeaseWindow));
/// # }
/// ```
pub struct SourceKind {
    /// The flag that chooses the source, one word without dashes: `etcd` is `--etcd VALUE`
    /// and `RINGFLAKE_ETCD`.
    pub flag: &'static str,
    /// What its value is, for the help: `ENDPOINTS`.
    pub value_name: &'static str,
    /// Its help line.
    pub help: &'static str,
    /// Its own flags, each named after it (`etcd-prefix`): they need it.
    pub options: &'static [SourceOption],
    /// The flags of the worker tables it takes as well.
    pub shared: &'static [SharedFlag],
    /// Opens the source from the flags' values.
    pub open: fn(&SourceSettings) -> Result<Box<dyn Source>, Error>,
}

impl fmt::Debug for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceKind")
            .field("flag", &self.flag)
            .finish_non_exhaustive()
    }
}

impl SourceKind {
    /// Opens the source from `settings`, having checked that every option given is one of its
    /// own (a misspelt option is an error, not a default).
    ///
    /// # Errors
    ///
    /// [`Error::WorkerAssignment`] naming the flag whose value is refused, and why.
    ///
    /// ```
    /// # #[cfg(feature = "zookeeper")] {
    /// use ringflake::{SourceSettings, ZOOKEEPER};
    ///
    /// let mut s = SourceSettings::new("127.0.0.1:2181");
    /// let e = ZOOKEEPER.open(&s).unwrap_err(); // Leaf's name is needed
    /// assert!(e.to_string().contains("--zookeeper-name"), "{e}");
    /// s.options.push(("zookeeper-name", "orders".into()));
    /// assert_eq!(ZOOKEEPER.open(&s)?.describe(), "zookeeper 127.0.0.1:2181 /snowflake/orders");
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn open(&self, settings: &SourceSettings) -> Result<Box<dyn Source>, Error> {
        if let Some((name, _)) = settings
            .options
            .iter()
            .find(|(name, _)| !self.options.iter().any(|o| o.name == *name))
        {
            return Err(Error::WorkerAssignment(format!(
                "--{name} is not a flag of --{}",
                self.flag
            )));
        }
        (self.open)(settings)
    }
}

/// One of a source's own flags: `--{name} {value_name}`, with its `RINGFLAKE_…` variable.
///
/// ```
/// let o = ringflake::SourceOption { name: "etcd-prefix", value_name: "PREFIX", help: "…" };
/// assert_eq!(o.name, "etcd-prefix");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SourceOption {
    /// The flag without its dashes, beginning with the source's flag: `etcd-prefix`.
    pub name: &'static str,
    /// What its value is, for the help: `PREFIX`.
    pub value_name: &'static str,
    /// Its help line.
    pub help: &'static str,
}

/// A flag of the worker tables that other sources take too.
///
/// ```
/// assert_eq!(ringflake::SharedFlag::Retry.flag(), "--db-retry");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedFlag {
    /// `--lease-window SECONDS`: how far ahead of use the lease (the reach) is written.
    LeaseWindow,
    /// `--db-retry SECONDS`: how long a boot retries a store that does not answer.
    Retry,
    /// `--db-timeout SECONDS`: the longest one call to the store may take.
    Timeout,
    /// `--db-ca-file PATH`: the CA certificates trusted for TLS to the store.
    CaFile,
    /// `--accept-async-replication`: use a claim or extension before every replica holds it.
    AcceptAsyncReplication,
}

impl SharedFlag {
    /// The flag as typed: `--db-ca-file`.
    ///
    /// ```
    /// assert_eq!(ringflake::SharedFlag::CaFile.flag(), "--db-ca-file");
    /// ```
    pub fn flag(self) -> &'static str {
        match self {
            SharedFlag::LeaseWindow => "--lease-window",
            SharedFlag::Retry => "--db-retry",
            SharedFlag::Timeout => "--db-timeout",
            SharedFlag::CaFile => "--db-ca-file",
            SharedFlag::AcceptAsyncReplication => "--accept-async-replication",
        }
    }
}

/// What the flags say of a source: the chosen flag's value, its own flags given, and the shared
/// flags it takes.
///
/// ```
/// let mut s = ringflake::SourceSettings::new("http://127.0.0.1:2379");
/// s.options.push(("etcd-prefix", "/ids/".into()));
/// assert_eq!(s.option("etcd-prefix"), Some("/ids/"));
/// assert_eq!(s.option("etcd-ttl"), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct SourceSettings {
    /// The value of the flag that chose the source (`--etcd ENDPOINTS`: the endpoints).
    pub value: String,
    /// Its own flags given, by name without dashes, with their values.
    pub options: Vec<(&'static str, String)>,
    /// `--lease-window`.
    pub lease_window: Option<Duration>,
    /// `--db-retry`.
    pub retry_for: Option<Duration>,
    /// `--db-timeout`.
    pub timeout: Option<Duration>,
    /// `--db-ca-file`.
    pub ca_file: Option<PathBuf>,
    /// `--accept-async-replication`.
    pub accept_async_replication: bool,
}

impl SourceSettings {
    /// Settings with the chosen flag's `value` and nothing else.
    ///
    /// ```
    /// assert_eq!(ringflake::SourceSettings::new("x").value, "x");
    /// ```
    pub fn new(value: &str) -> SourceSettings {
        SourceSettings {
            value: value.to_string(),
            ..SourceSettings::default()
        }
    }

    /// The value of the option `name` (without dashes), if given.
    ///
    /// ```
    /// let mut s = ringflake::SourceSettings::new("x");
    /// s.options.push(("redis-ttl", "30".into()));
    /// assert_eq!(s.option("redis-ttl"), Some("30"));
    /// ```
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The option `name` as whole seconds within `range`, if given.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerAssignment`] naming the flag, the value and the range.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut s = ringflake::SourceSettings::new("x");
    /// s.options.push(("redis-ttl", "30".into()));
    /// assert_eq!(s.seconds("redis-ttl", 2..=600)?, Some(Duration::from_secs(30)));
    /// s.options[0].1 = "1".into();
    /// let e = s.seconds("redis-ttl", 2..=600).unwrap_err();
    /// assert!(e.to_string().contains("--redis-ttl 1: expected 2 to 600 seconds"), "{e}");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn seconds(
        &self,
        name: &str,
        range: std::ops::RangeInclusive<u64>,
    ) -> Result<Option<Duration>, Error> {
        let Some(value) = self.option(name) else {
            return Ok(None);
        };
        match value.trim().parse::<u64>() {
            Ok(s) if range.contains(&s) => Ok(Some(Duration::from_secs(s))),
            _ => Err(Error::WorkerAssignment(format!(
                "--{name} {value}: expected {} to {} seconds",
                range.start(),
                range.end()
            ))),
        }
    }
}

/// An opened worker id source: a [`WorkerIdAssigner`] that describes itself, lists its ids for
/// `ringflake workers`, and learns where its node serves.
///
/// ```
/// # #[cfg(feature = "zookeeper")] {
/// use ringflake::{Placement, Source, SourceSettings, ZOOKEEPER};
///
/// let mut s = SourceSettings::new("127.0.0.1:2181");
/// s.options.push(("zookeeper-name", "orders".into()));
/// let mut zk = ZOOKEEPER.open(&s)?;
/// zk.place(&Placement { port: Some(8080), ..Placement::default() }); // Leaf's ip:port
/// assert!(format!("{zk:?}").contains("port: Some(\"8080\")"));
/// # }
/// # Ok::<(), ringflake::Error>(())
/// ```
pub trait Source: WorkerIdAssigner + Send + Sync + fmt::Debug {
    /// Where the ids are, without any password, for the start-up line and `/status`:
    /// `etcd http://10.0.0.1:2379 /ringflake/`.
    fn describe(&self) -> String;

    /// Every id the source holds a record of, for `ringflake workers` (which only reads).
    ///
    /// # Errors
    ///
    /// The source cannot be reached or read.
    fn list(&self) -> Result<Listing, Error>;

    /// Where this source's node serves: a source that names its nodes by address (ZooKeeper,
    /// as Leaf does) takes the port; the others may ignore it. The default ignores it.
    fn place(&mut self, place: &Placement) {
        let _ = place;
    }
}

/// Where a source's node serves, as the binary knows it.
///
/// ```
/// let p = ringflake::Placement { port: Some(8080), ..Default::default() };
/// assert_eq!((p.port, p.generator), (Some(8080), None));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// The port the service listens on, when it is the node's own (the default generator's).
    pub port: Option<u16>,
    /// The generator's name, for one of several in a process (`serve --config`).
    pub generator: Option<String>,
}

/// What `ringflake workers` prints of a source: one line per id.
///
/// ```
/// use ringflake::{Cell, Listed, Listing};
/// let l = Listing {
///     columns: vec!["HOLDER", "REACH"],
///     ids: vec![Listed { worker_id: 3, cells: vec![Cell::Text("host-a".into()), Cell::Second(None)] }],
///     unit: ("id", "ids"),
/// };
/// assert_eq!(l.ids[0].cells.len(), l.columns.len());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The columns after the worker id's.
    pub columns: Vec<&'static str>,
    /// The ids, in the order to print.
    pub ids: Vec<Listed>,
    /// What one line is, in the singular and the plural (`id`, `ids`).
    pub unit: (&'static str, &'static str),
}

/// One line of a [`Listing`].
///
/// ```
/// let l = ringflake::Listed { worker_id: 1, cells: vec![] };
/// assert_eq!(l.worker_id, 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The worker id.
    pub worker_id: u64,
    /// One cell per column.
    pub cells: Vec<Cell>,
}

/// A cell of a [`Listing`]: text, or a unix second the binary prints in its time zone.
///
/// ```
/// assert_ne!(ringflake::Cell::Second(Some(1)), ringflake::Cell::Second(None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// Printed as it is.
    Text(String),
    /// A unix second (`-` for none).
    Second(Option<i64>),
}
