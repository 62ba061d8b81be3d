//! The `leaf_alloc` table, Meituan Leaf's (shared with Leaf nodes during a migration), and the
//! statements each database provides for it ([`AllocTable`]): one module per database says
//! only what differs.
//!
//! A claim is Leaf's transaction (`IDAllocMapper`): `UPDATE leaf_alloc SET max_id = max_id +
//! step WHERE biz_tag = ?` (or `+ ?` with a step of the node's own, Leaf's dynamic step), then
//! `SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?`, and the node owns
//! `[max_id - step, max_id)`. The `UPDATE` also requires a positive step that keeps `max_id`
//! within 2^63 - 1 (a row that breaks this updates nothing, and the `SELECT` tells why), and
//! the transaction records the range in `ringflake_segment_hold` under this boot's token (see
//! `state`). Leaf nodes ignore that table; both kinds of node move `max_id` the same way, so
//! their ranges never overlap.

use super::error::SegmentError;
use crate::Error;
use std::fmt;
use std::time::{Duration, Instant};

/// One row of `leaf_alloc`.
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use ringflake::SegmentTable;
///
/// let dir = tempfile::tempdir().unwrap();
/// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
/// table.add("orders", 1, 1000, "order numbers")?;
/// let row = &table.rows()?[0];
/// assert_eq!((row.biz_tag.as_str(), row.max_id, row.step), ("orders", 1, 1000));
/// assert_eq!(row.description.as_deref(), Some("order numbers"));
/// # }
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeafRow {
    /// `biz_tag`: the business tag.
    pub biz_tag: String,
    /// `max_id`: the first number no node has claimed yet.
    pub max_id: i64,
    /// `step`: how many numbers a claim takes (Leaf's dynamic step grows from it).
    pub step: i64,
    /// `description`.
    pub description: Option<String>,
    /// `update_time`, as the database writes it.
    pub update_time: String,
}

/// What a claim's `UPDATE` and `SELECT` found. (Made by the databases' modules: none without a
/// database feature.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    not(any(feature = "sqlite", feature = "mysql", feature = "postgres")),
    allow(dead_code)
)]
pub(crate) enum Claim {
    /// The range `[max_id - step, max_id)` is this node's (`step` is the one asked for, else the
    /// row's).
    Claimed {
        /// The row's `max_id` after the update.
        max_id: i64,
        /// The row's own `step`, read back.
        table_step: i64,
    },
    /// There is no such row.
    NoRow,
    /// The row's step is not in `1..=2^31 - 1`.
    BadStep(i64),
    /// `max_id + step` would pass 2^63 - 1.
    Overflow {
        /// The row's `max_id`.
        max_id: i64,
        /// The step asked for.
        step: i64,
    },
}

/// Leaf's columns, read on every new connection: a table without one of them is refused,
/// naming it.
#[cfg_attr(
    not(any(feature = "sqlite", feature = "mysql", feature = "postgres")),
    allow(dead_code)
)]
pub(crate) const PROBE: &str =
    "SELECT biz_tag, max_id, step, description, update_time FROM leaf_alloc LIMIT 0";

/// The largest `step`: Leaf's column is an `INT`.
pub(crate) const MAX_STEP: i64 = i32::MAX as i64;

// A range of the largest step fits a window.
const _: () = assert!(MAX_STEP as u64 <= super::window::MAX_LEN);

/// Classifies a row that the claim's guarded `UPDATE` did not change: `(max_id, step)` as read,
/// `asked` the custom step if any.
#[cfg_attr(
    not(any(feature = "sqlite", feature = "mysql", feature = "postgres")),
    allow(dead_code)
)]
pub(crate) fn why_not_claimed(row: Option<(i64, i64)>, asked: Option<i64>) -> Claim {
    match row {
        None => Claim::NoRow,
        Some((_, step)) if !(1..=MAX_STEP).contains(&step) => Claim::BadStep(step),
        Some((max_id, step)) => Claim::Overflow {
            max_id,
            step: asked.unwrap_or(step),
        },
    }
}

/// Where a table is and how calls to it are bounded: the part of an [`AllocTable`] that is not
/// a statement (the server databases share one implementation of it, `OnServer`), as
/// `worker::rows::TableSetup` is for the worker tables.
pub(crate) trait AllocSetup {
    /// Where the table is, without secrets: `sqlite file ids.db`, `mysql://u@h:3306/db`.
    fn describe(&self) -> String;
    /// Bounds every later call to about `timeout`.
    fn set_timeout(&self, timeout: Duration);
    /// Waits until the last write this thread made (a claim or a resume) is on every standby,
    /// until `deadline` (see `worker::durable`); at once where there is no standby to lose it
    /// (SQLite) or the risk is accepted.
    fn confirm(&self, _what: &str, _deadline: Instant) -> Result<(), Error> {
        Ok(())
    }
    /// Uses writes as soon as the primary commits them (the risk accepted).
    fn accept_async_replication(&self, _on: bool) {}
    /// Trusts the CA certificates in `path` for TLS (server databases only).
    fn set_ca_file(&self, _path: &std::path::Path) {}
}

/// The statements one database provides.
pub(crate) trait AllocTable: AllocSetup + Send + Sync + 'static {
    /// Creates `leaf_alloc` (Leaf's schema) and `ringflake_segment_hold` if missing (where
    /// allowed), and checks that `leaf_alloc` has Leaf's columns.
    fn prepare(&self) -> Result<(), Error>;
    /// Every row, by tag.
    fn rows(&self) -> Result<Vec<LeafRow>, Error>;
    /// Leaf's claim of one range for `tag` (with `step`, else the row's), recorded as held by
    /// `holder`, in one transaction.
    fn claim(&self, tag: &str, step: Option<i64>, holder: &str) -> Result<Claim, Error>;
    /// Takes the held range of `tag` ending at `end` over from `from` to `to`; false if it is
    /// not held by `from` (another node took it, or it was released).
    fn resume(&self, tag: &str, end: i64, from: &str, to: &str) -> Result<bool, Error>;
    /// Forgets the held ranges of `tag` ending at `ends`, held by `holder` (used up or given
    /// up).
    fn release(&self, tag: &str, ends: &[i64], holder: &str) -> Result<(), Error>;
    /// Inserts a row; false if the tag exists.
    fn insert(&self, tag: &str, max_id: i64, step: i64, description: &str) -> Result<bool, Error>;
}

/// The `leaf_alloc` table of a database: where a [`SegmentGenerator`](crate::SegmentGenerator)
/// claims its ranges, and what `ringflake segments` lists and adds to (feature `segment`).
///
/// `SegmentTable::sqlite(path)` (feature `sqlite`), `SegmentTable::mysql(url)` (feature
/// `mysql`) and `SegmentTable::postgres(url)` (feature `postgres`), with the URLs, TLS modes and
/// CA files of [`DatabaseAssigner`](crate::DatabaseAssigner). The table is Meituan Leaf's, so
/// that Leaf nodes and ringflake nodes can share it during a migration; ringflake adds a table
/// of its own, `ringflake_segment_hold` (the ranges each node holds), which Leaf ignores.
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use ringflake::SegmentTable;
///
/// let dir = tempfile::tempdir().unwrap();
/// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
/// assert!(table.add("orders", 1, 2000, "")?);
/// assert!(!table.add("orders", 1, 2000, "")?, "already there");
/// assert!(table.describe().starts_with("sqlite file"));
/// # }
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Clone)]
pub struct SegmentTable {
    pub(crate) table: std::sync::Arc<dyn AllocTable>,
}

impl fmt::Debug for SegmentTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SegmentTable")
            .field("table", &self.table.describe())
            .finish()
    }
}

impl SegmentTable {
    /// How long one call to the database may take unless [`timeout`](Self::timeout) says
    /// otherwise: 10 s.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    #[cfg_attr(
        not(any(feature = "sqlite", feature = "mysql", feature = "postgres")),
        allow(dead_code)
    )]
    pub(crate) fn with(table: impl AllocTable) -> SegmentTable {
        table.set_timeout(Self::DEFAULT_TIMEOUT);
        SegmentTable {
            table: std::sync::Arc::new(table),
        }
    }

    /// Where the table is, without secrets.
    ///
    /// ```
    /// # #[cfg(feature = "postgres")] {
    /// let t = ringflake::SegmentTable::postgres("postgres://app:pw@db:5432/ids")?;
    /// assert_eq!(t.describe(), "postgres://app@db:5432/ids");
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn describe(&self) -> String {
        self.table.describe()
    }

    /// Bounds every call to the database (connecting, one statement) to `timeout`: past it the
    /// call fails, and the next one reconnects. For SQLite, how long to wait for another
    /// process's lock.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let t = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?
    ///     .timeout(std::time::Duration::from_secs(2));
    /// assert!(t.rows()?.is_empty());
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn timeout(self, timeout: Duration) -> Self {
        self.table.set_timeout(timeout);
        self
    }

    /// With MariaDB/MySQL or PostgreSQL: use a claimed range as soon as the primary commits the
    /// claim, without waiting until every standby holds it (see
    /// [`DatabaseAssigner::accept_async_replication`](crate::DatabaseAssigner::accept_async_replication)).
    /// The risk: a failover to a standby that lacked the claim gives the same range to another
    /// node. Off by default; SQLite ignores it.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let t = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?
    ///     .accept_async_replication(true);
    /// assert!(t.rows()?.is_empty());
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn accept_async_replication(self, on: bool) -> Self {
        self.table.accept_async_replication(on);
        self
    }

    /// Trust the CA certificates in this PEM file for TLS to a MariaDB/MySQL or PostgreSQL
    /// server, as [`DatabaseAssigner::ca_file`](crate::DatabaseAssigner::ca_file) does (and
    /// `verify-full` / `VERIFY_IDENTITY` unless the URL names a mode). SQLite ignores it.
    ///
    /// ```
    /// # #[cfg(feature = "postgres")] {
    /// let t = ringflake::SegmentTable::postgres("postgres://app:pw@db:5432/ids")?
    ///     .ca_file("/etc/ssl/db-ca.pem");
    /// assert_eq!(t.describe(), "postgres://app@db:5432/ids");
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn ca_file(self, path: impl AsRef<std::path::Path>) -> Self {
        self.table.set_ca_file(path.as_ref());
        self
    }

    /// Every row of `leaf_alloc`, by tag (creating the table, where allowed, if it is missing).
    ///
    /// # Errors
    ///
    /// [`Error::Database`] if the database fails, the table is missing (and cannot be created),
    /// or it lacks one of Leaf's columns.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let t = ringflake::SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// t.add("b", 1, 10, "")?;
    /// t.add("a", 100, 10, "")?;
    /// let tags: Vec<String> = t.rows()?.into_iter().map(|r| r.biz_tag).collect();
    /// assert_eq!(tags, ["a", "b"]);
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn rows(&self) -> Result<Vec<LeafRow>, Error> {
        self.table.prepare()?;
        self.table.rows()
    }

    /// Whether ringflake can serve `tag`: 1 to 128 bytes of `A-Z a-z 0-9 - . _ ~` (what a URL
    /// path carries as it is). A row of `leaf_alloc` with another tag is listed but not served.
    ///
    /// # Errors
    ///
    /// [`SegmentError::InvalidTag`] naming what is wrong (the length and the limit, or the first
    /// character refused and where).
    ///
    /// ```
    /// use ringflake::SegmentTable;
    ///
    /// assert!(SegmentTable::servable("leaf-segment-test").is_ok());
    /// let e = SegmentTable::servable("订单").unwrap_err().to_string();
    /// assert!(e.contains("character '订' at byte 0"), "{e}");
    /// ```
    pub fn servable(tag: &str) -> Result<(), Error> {
        super::error::check_tag(tag).map_err(Error::Segment)
    }

    /// Adds a tag, as an operator's `INSERT INTO leaf_alloc(biz_tag, max_id, step, description)`
    /// would: its numbers start at `start` (Leaf's `max_id`), claimed `step` at a time. Returns
    /// false, changing nothing, if the tag exists.
    ///
    /// # Errors
    ///
    /// [`Error::Segment`] for a tag that cannot be served ([`SegmentError::InvalidTag`]: empty,
    /// over 128 bytes, a character outside `A-Z a-z 0-9 - . _ ~`), a step outside `1..=2^31 - 1`
    /// or a start below 0 or at 2^63 - 1 ([`SegmentError::BadRow`]); a description over 256
    /// characters is [`Error::InvalidConfig`]; [`Error::Database`] if the database fails.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use ringflake::{Error, SegmentError, SegmentTable};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let t = SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// let e = t.add("orders", 1, 0, "").unwrap_err();
    /// assert!(matches!(e, Error::Segment(SegmentError::BadRow { column: "step", value: 0, .. })));
    /// assert_eq!(e.to_string(), "biz_tag \"orders\": step 0 refused: allowed 1 to 2147483647");
    /// assert!(t.add("order id", 1, 10, "").is_err());
    /// # }
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn add(&self, tag: &str, start: i64, step: i64, description: &str) -> Result<bool, Error> {
        super::error::check_tag(tag)?;
        let bad = |column, value, allowed| {
            Error::Segment(SegmentError::BadRow {
                tag: tag.to_string(),
                column,
                value,
                allowed,
            })
        };
        if !(1..=MAX_STEP).contains(&step) {
            return Err(bad("step", step, "1 to 2147483647"));
        }
        if !(0..i64::MAX).contains(&start) {
            return Err(bad("max_id", start, "0 to 9223372036854775806"));
        }
        let chars = description.chars().count();
        if chars > 256 {
            return Err(Error::InvalidConfig {
                name: "description length",
                value: chars as u64,
                allowed: "at most 256 characters (leaf_alloc's description VARCHAR(256))",
            });
        }
        self.table.prepare()?;
        self.table.insert(tag, start, step, description)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_the_update_skipped_says_why() {
        assert_eq!(why_not_claimed(None, None), Claim::NoRow);
        assert_eq!(why_not_claimed(Some((5, 0)), None), Claim::BadStep(0));
        assert_eq!(why_not_claimed(Some((5, -3)), Some(10)), Claim::BadStep(-3));
        assert_eq!(
            why_not_claimed(Some((5, MAX_STEP + 1)), None),
            Claim::BadStep(MAX_STEP + 1)
        );
        assert_eq!(
            why_not_claimed(Some((i64::MAX - 5, 10)), None),
            Claim::Overflow {
                max_id: i64::MAX - 5,
                step: 10
            }
        );
        assert_eq!(
            why_not_claimed(Some((i64::MAX - 5, 3)), Some(20)),
            Claim::Overflow {
                max_id: i64::MAX - 5,
                step: 20
            }
        );
    }
}
