//! `Generator(...)`'s keywords, checked, and the generator they describe: the same choices the
//! `ringflake serve` command makes from its flags (src/bin/ringflake/generators), so that
//! `Generator()` with no argument is `ringflake serve`'s default: worker ids from the SQLite file
//! `ringflake.db` in the working directory, recycled, kept across restarts by the state file
//! `ringflake.state` beside it.

use crate::errors::{from_lib, invalid};
use pyo3::PyResult;
use ringflake::{
    CachedUidGenerator, DEFAULT_EPOCH_SECONDS, DEFAULT_MAX_LEAD, DEFAULT_SQLITE_PATH,
    DatabaseAssigner, FieldOrder, Layout, LeadPolicy, TimeUnit, TimeZone,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The state file's name when none is given (the binary's `--state-file` default).
pub const DEFAULT_STATE_FILE: &str = "ringflake.state";

/// Where the worker id comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `worker_id=N`.
    Fixed(u64),
    /// `database="path"` or `"sqlite:path"`: a SQLite file's WORKER_NODE table.
    Sqlite(PathBuf),
    /// `database="mysql://…"`.
    Mysql(String),
    /// `database="postgres://…"` (or `postgresql://`).
    Postgres(String),
}

impl Source {
    /// Reads `database=`: a `mysql://` or `postgres://` URL as the binary's `--mysql` and
    /// `--postgres` take them, `sqlite:PATH`, or a plain path to a SQLite file (`--db`).
    pub fn database(text: &str) -> PyResult<Source> {
        if text.starts_with("mysql://") {
            return Ok(Source::Mysql(text.to_string()));
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(Source::Postgres(text.to_string()));
        }
        let path = text
            .strip_prefix("sqlite://")
            .or_else(|| text.strip_prefix("sqlite:"))
            .unwrap_or(text);
        if path.is_empty() || path.contains("://") {
            return Err(invalid(
                "database",
                format!("{text:?}"),
                "a SQLite file's path (or sqlite:PATH), a mysql:// URL or a postgres:// URL",
            ));
        }
        Ok(Source::Sqlite(PathBuf::from(path)))
    }

    /// Whether a forked child can take a worker id of its own from this source (a table).
    pub fn from_table(&self) -> bool {
        !matches!(self, Source::Fixed(_))
    }
}

/// `epoch=`: unix seconds or a `yyyy-MM-dd` date (midnight UTC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Epoch {
    /// Unix seconds.
    Seconds(i64),
    /// A `yyyy-MM-dd` date.
    Date(String),
}

/// The layout keywords as given.
#[derive(Debug, Default)]
pub struct LayoutArgs {
    /// `preset=`.
    pub preset: Option<String>,
    /// `bits=(time, worker, sequence)`.
    pub bits: Option<(u32, u32, u32)>,
    /// `epoch=`.
    pub epoch: Option<Epoch>,
    /// `tick=`: `"s"`, `"10ms"` or `"ms"`.
    pub tick: Option<String>,
}

impl LayoutArgs {
    /// The layout: a preset, or widths (default 31/10/22), an epoch (default 2025-01-01) and a
    /// tick (default seconds).
    pub fn layout(&self) -> PyResult<Layout> {
        let amended = self.bits.is_some() || self.epoch.is_some() || self.tick.is_some();
        if let Some(name) = &self.preset {
            if amended {
                return Err(invalid(
                    "preset",
                    format!("{name:?}"),
                    "a preset alone: it sets the widths, the epoch and the tick (give bits, \
                     epoch and tick instead to set them)",
                ));
            }
            return Layout::preset(name).map_err(from_lib);
        }
        let d = Layout::default();
        let (t, w, s) = self
            .bits
            .unwrap_or((d.time_bits(), d.worker_bits(), d.seq_bits()));
        let epoch = match &self.epoch {
            Some(Epoch::Date(date)) => {
                ringflake::epoch_from_date(date, &TimeZone::UTC).map_err(from_lib)?
            }
            Some(Epoch::Seconds(seconds)) => *seconds,
            None => DEFAULT_EPOCH_SECONDS,
        };
        let unit: TimeUnit = match &self.tick {
            Some(t) => t.parse().map_err(from_lib)?,
            None => TimeUnit::Seconds,
        };
        if unit == TimeUnit::Seconds {
            return Layout::new(t, w, s, epoch).map_err(from_lib);
        }
        let millis = epoch.checked_mul(1000).ok_or_else(|| {
            invalid(
                "epoch",
                epoch,
                "unix seconds within the range of milliseconds",
            )
        })?;
        Layout::with_unit(t, w, s, millis, unit, FieldOrder::default()).map_err(from_lib)
    }
}

/// Everything `Generator(...)` was given, checked: enough to build the generator again (in a
/// forked child).
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The ID layout.
    pub layout: Layout,
    /// The worker id source.
    pub source: Source,
    /// The state file, if any.
    pub state_file: Option<PathBuf>,
    /// The lead cap and what a take does at it.
    pub max_lead: (Duration, LeadPolicy),
    /// `create_table=`: create WORKER_NODE on a MariaDB/MySQL or PostgreSQL server.
    pub create_table: bool,
    /// `recycle=`: reuse the worker ids of stopped processes (leases), the binary's default.
    pub recycle: bool,
}

/// The default state file for `source`: beside a SQLite file, else in the working directory.
pub fn default_state_file(source: &Source) -> PathBuf {
    match source {
        Source::Sqlite(db) => db
            .parent()
            .unwrap_or(Path::new(""))
            .join(DEFAULT_STATE_FILE),
        _ => PathBuf::from(DEFAULT_STATE_FILE),
    }
}

/// The default worker id source: the binary's SQLite file in the working directory.
pub fn default_source() -> Source {
    Source::Sqlite(PathBuf::from(DEFAULT_SQLITE_PATH))
}

/// `max_lead=` and `lead_policy=`.
pub fn lead(seconds: Option<u64>, policy: &str) -> PyResult<(Duration, LeadPolicy)> {
    let policy = match policy {
        "wait" => LeadPolicy::Wait,
        "fail" => LeadPolicy::Fail,
        other => {
            return Err(invalid(
                "lead_policy",
                format!("{other:?}"),
                "\"wait\" or \"fail\"",
            ));
        }
    };
    Ok((
        seconds.map_or(DEFAULT_MAX_LEAD, Duration::from_secs),
        policy,
    ))
}

impl Spec {
    /// Builds the generator: checks the layout against the clock before any worker id is
    /// claimed, then claims one from the source and fills the ring.
    ///
    /// # Errors
    ///
    /// The library's: an expired layout, a worker id out of range, a database that refuses.
    pub fn build(&self) -> Result<CachedUidGenerator, ringflake::Error> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        self.layout.check_alive_at(now)?;
        let mut b =
            CachedUidGenerator::builder(self.layout).max_lead(self.max_lead.0, self.max_lead.1);
        if let Some(state) = &self.state_file {
            b = b.state_file(state);
        }
        let table = |t: DatabaseAssigner| {
            let t = t.recycle(self.recycle);
            match (&self.state_file, self.recycle) {
                (Some(state), true) => t.keep_worker_id(state),
                _ => t,
            }
        };
        let b = match &self.source {
            Source::Fixed(id) => {
                if *id > self.layout.max_worker_id() {
                    return Err(ringflake::Error::WorkerIdOutOfRange {
                        worker_id: *id,
                        max: self.layout.max_worker_id(),
                    });
                }
                b.worker_id(*id)
            }
            Source::Sqlite(path) => b.worker_id_from(&table(DatabaseAssigner::sqlite(path)?)),
            Source::Mysql(url) => b.worker_id_from(&table(
                DatabaseAssigner::mysql(url)?.create_table(self.create_table),
            )),
            Source::Postgres(url) => b.worker_id_from(&table(
                DatabaseAssigner::postgres(url)?.create_table(self.create_table),
            )),
        };
        b.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn databases_as_the_binary_takes_them() {
        assert_eq!(
            Source::database("ringflake.db").unwrap(),
            Source::Sqlite("ringflake.db".into())
        );
        assert_eq!(
            Source::database("sqlite:/tmp/a.db").unwrap(),
            Source::Sqlite("/tmp/a.db".into())
        );
        assert_eq!(
            Source::database("mysql://u:p@h/db").unwrap(),
            Source::Mysql("mysql://u:p@h/db".into())
        );
        assert_eq!(
            Source::database("postgresql://u@h/db").unwrap(),
            Source::Postgres("postgresql://u@h/db".into())
        );
        assert_eq!(
            default_state_file(&Source::Sqlite("/srv/ids/w.db".into())),
            PathBuf::from("/srv/ids/ringflake.state")
        );
        assert_eq!(
            default_state_file(&default_source()),
            PathBuf::from("ringflake.state")
        );
    }
}
