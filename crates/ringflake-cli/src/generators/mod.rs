//! Turning flags into generators: the layout and time zone the layout flags describe, the worker
//! id source the worker flags choose ([`Source`], the host name's ordinal [`HostOrdinal`]), the
//! state file, the lead cap, and [`generator`], which builds a [`CachedUidGenerator`] from them;
//! [`serve`] does the same for `serve`'s generators, the `--config` file's among them, and
//! [`spaces`] keeps them from handing out the same IDs.
//!
//! The rooms of the binary, each importing only those to its left: the flags ([`crate::args`]),
//! this one, the service's model (`serve::model`, which gets plain values from here and never
//! sees a flag), its handlers, its server.

pub mod segments;
pub mod serve;
pub mod spaces;

use crate::args::{
    DEFAULT_STATE_FILE, DbArgs, LayoutArgs, RingArgs, StateArgs, WorkerArgs, given, pick, sub,
};
use crate::sources::{SourceArgs, or_list, takers};
use clap::ArgMatches;
use ringflake::{
    CachedBuilder, CachedUidGenerator, DEFAULT_EPOCH_SECONDS, DEFAULT_MAX_LEAD,
    DEFAULT_SQLITE_PATH, DatabaseAssigner, Layout, LeadPolicy, Placement, SharedFlag, SourceKind,
    TimeZone, WorkerIdAssigner, epoch_from_date,
};
use ringflake_server::model::plan::Lead;
use spaces::{Guarded, Spaces};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

impl LayoutArgs {
    /// The time zone: --tz, else the process's local zone (TZ, else /etc/localtime).
    pub fn zone(&self) -> Result<TimeZone, String> {
        match &self.tz {
            None => ringflake::system_time_zone().map_err(|e| e.to_string()),
            Some(name) => parse_zone(name),
        }
    }

    /// The preset `name` (`--layout`), which the widths and epoch flags may not amend.
    pub fn preset_layout(&self, name: &str) -> Result<Layout, String> {
        if self.has_widths() || self.epoch.is_some() || self.epoch_seconds.is_some() {
            return Err(format!(
                "--layout {name} sets the widths and the epoch: give --layout, or --time-bits, \
                 --worker-bits, --seq-bits and --epoch / --epoch-seconds, not both"
            ));
        }
        Layout::preset(name).map_err(|e| e.to_string())
    }

    /// Whether any width was given.
    pub fn has_widths(&self) -> bool {
        self.time_bits.is_some() || self.worker_bits.is_some() || self.seq_bits.is_some()
    }

    /// The epoch in unix seconds, if --epoch or --epoch-seconds was given.
    pub fn epoch(&self, tz: &TimeZone) -> Result<Option<i64>, String> {
        match (&self.epoch, self.epoch_seconds) {
            (Some(_), Some(_)) => {
                Err("give the epoch once: --epoch yyyy-MM-dd or --epoch-seconds N, not both".into())
            }
            (Some(date), None) => epoch_from_date(date, tz)
                .map(Some)
                .map_err(|e| e.to_string()),
            (None, seconds) => Ok(seconds),
        }
    }

    /// The widths: all three as given; two given, the third makes 63; else the defaults fill in.
    pub fn widths(&self) -> (u32, u32, u32) {
        let d = Layout::default();
        match (self.time_bits, self.worker_bits, self.seq_bits) {
            (Some(t), Some(w), None) if t + w < 63 => (t, w, 63 - t - w),
            (Some(t), None, Some(s)) if t + s < 63 => (t, 63 - t - s, s),
            (None, Some(w), Some(s)) if w + s < 63 => (63 - w - s, w, s),
            (t, w, s) => (
                t.unwrap_or(d.time_bits()),
                w.unwrap_or(d.worker_bits()),
                s.unwrap_or(d.seq_bits()),
            ),
        }
    }

    /// The time zone and the layout these flags describe.
    pub fn zone_and_layout(&self) -> Result<(TimeZone, Layout), String> {
        let tz = self.zone()?;
        if let Some(name) = &self.preset {
            return Ok((tz, self.preset_layout(name)?));
        }
        let (t, w, s) = self.widths();
        let epoch = self.epoch(&tz)?.unwrap_or(DEFAULT_EPOCH_SECONDS);
        let layout = Layout::new(t, w, s, epoch).map_err(|e| e.to_string())?;
        Ok((tz, layout))
    }
}

/// A time zone as Java names them: an IANA name, `UTC`/`GMT`, or a fixed offset (`GMT+8`,
/// `UTC+08:00`, `+0800`).
pub fn parse_zone(name: &str) -> Result<TimeZone, String> {
    if let Ok(tz) = TimeZone::get(name) {
        return Ok(tz);
    }
    let rest = name
        .strip_prefix("GMT")
        .or_else(|| name.strip_prefix("UTC"))
        .unwrap_or(name);
    let bad = || {
        format!(
            "unknown time zone {name:?}: expected an IANA name (Asia/Shanghai), UTC, or an offset (GMT+8, +08:00)"
        )
    };
    let (sign, digits) = match rest.as_bytes().first() {
        Some(b'+') => (1, &rest[1..]),
        Some(b'-') => (-1, &rest[1..]),
        _ => return Err(bad()),
    };
    let (h, m) = match digits.split_once(':') {
        Some((h, m)) => (h, m),
        None if digits.len() == 4 => digits.split_at(2),
        None => (digits, "0"),
    };
    let all_digits =
        |s: &str| !s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(h) || !all_digits(m) {
        return Err(bad());
    }
    let (h, m): (i32, i32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if h > 18 || m > 59 {
        return Err(bad());
    }
    let offset = jiff::tz::Offset::from_seconds(sign * (h * 3600 + m * 60)).map_err(|_| bad())?;
    Ok(TimeZone::fixed(offset))
}

/// Where the worker id comes from.
pub enum Source {
    Fixed(u64),
    /// `--worker-id-from-hostname`: the trailing `-N` of the host name.
    Hostname(HostOrdinal),
    Table(DatabaseAssigner),
    /// One of the other sources ([`crate::sources::SOURCES`]): `--zookeeper`, ...
    Other(Box<dyn ringflake::Source>),
}

impl Source {
    /// Describes the source for the start-up line.
    pub fn describe(&self) -> String {
        match self {
            Source::Fixed(id) => format!("fixed worker id {id}"),
            Source::Hostname(h) => format!(
                "StatefulSet ordinal of host name {}, from {}",
                h.host, h.from
            ),
            Source::Table(a) => a.describe(),
            Source::Other(s) => s.describe(),
        }
    }

    /// This node serves on `port` (serve's `--listen`): a source that names its nodes by
    /// address takes it (ZooKeeper without `--zookeeper-address`).
    pub fn listening_on(mut self, port: u16) -> Source {
        if let Source::Other(s) = &mut self {
            s.place(&Placement {
                port: Some(port),
                ..Placement::default()
            });
        }
        self
    }

    /// The source of the generator `name` of `serve --config`, one of several in the process:
    /// its table rows say whose they are (`NAME@host`), the other sources may note it.
    pub fn named(self, name: &str) -> Source {
        match self {
            Source::Table(t) => Source::Table(t.generator(name)),
            Source::Other(mut s) => {
                s.place(&Placement {
                    generator: Some(name.to_string()),
                    ..Placement::default()
                });
                Source::Other(s)
            }
            other => other,
        }
    }

    /// The source for a generator whose state file is `state`: a worker table then keeps the
    /// worker id across restarts in that state file's directory
    /// ([`DatabaseAssigner::keep_worker_id`]).
    pub fn keeping(self, state: Option<&Path>) -> Source {
        match (self, state) {
            (Source::Table(t), Some(state)) => Source::Table(t.keep_worker_id(state)),
            (other, _) => other,
        }
    }

    /// The worker id, when it is known before boot (not from a table).
    pub fn known_id(&self) -> Option<u64> {
        match self {
            Source::Fixed(id) => Some(*id),
            Source::Hostname(h) => Some(h.worker_id),
            Source::Table(_) | Source::Other(_) => None,
        }
    }
}

/// A worker id read from the host name's trailing `-N`, as a StatefulSet names its pods.
pub struct HostOrdinal {
    /// The worker id: the `N`.
    pub worker_id: u64,
    /// The host name it was read from.
    pub host: String,
    /// Where the host name came from: `HOSTNAME`, or `the system's host name`.
    pub from: &'static str,
}

impl HostOrdinal {
    /// Reads the host name (`HOSTNAME`, else the system's) and its trailing `-N`.
    fn read() -> Result<HostOrdinal, String> {
        let (host, from) = match std::env::var("HOSTNAME") {
            Ok(h) if !h.trim().is_empty() => (h.trim().to_string(), "HOSTNAME"),
            _ => (
                system_host_name().ok_or_else(|| {
                    "--worker-id-from-hostname: no host name: HOSTNAME is unset or empty and the \
                 system has none; set HOSTNAME, or choose another worker id source (--postgres, \
                 --mysql, --worker-id)"
                        .to_string()
                })?,
                "the system's host name",
            ),
        };
        let worker_id = ordinal(&host).map_err(|why| {
            format!(
                "--worker-id-from-hostname: host name {host:?} ({from}) {why}: a StatefulSet \
                 names its pods NAME-0, NAME-1, ...; run it in a StatefulSet, or choose another \
                 worker id source (--postgres, --mysql, --worker-id)"
            )
        })?;
        Ok(HostOrdinal {
            worker_id,
            host,
            from,
        })
    }
}

/// The system's host name (`gethostname`), if it has one.
fn system_host_name() -> Option<String> {
    #[cfg(unix)]
    {
        nix::unistd::gethostname()
            .ok()
            .and_then(|h| h.into_string().ok())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The `N` of a host name `NAME-N` (its first label: `ids-3.ids.default.svc` is `ids-3`).
fn ordinal(host: &str) -> Result<u64, String> {
    let label = host.split('.').next().unwrap_or(host);
    let digits = match label.rsplit_once('-') {
        Some((name, n)) if !name.is_empty() => n,
        _ => return Err("does not end in -N".into()),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("does not end in -N".into());
    }
    digits.parse::<u64>().map_err(|_| {
        format!(
            "ends in -{digits}, above the largest worker id {}",
            u64::MAX
        )
    })
}

/// What the worker id source flags choose, for their error.
const WORKER_SOURCE: &str = "worker id source";

/// The worker id source flags, which exclude each other: the tables', the other sources'
/// ([`crate::sources::SOURCES`]) and the fixed ids'.
fn worker_sources() -> Vec<&'static str> {
    let mut all = vec!["db", "mysql", "postgres"];
    all.extend(SourceArgs::flags());
    all.extend(["worker_id", "worker_id_from_hostname"]);
    all
}

impl DbArgs {
    const NAMES: &'static [&'static str] = &["db", "mysql", "postgres"];

    /// The table the flags name (SQLite `ringflake.db` when none is given).
    fn table(&self, chosen: Option<&str>) -> Result<DatabaseAssigner, String> {
        self.ca_needs_server(chosen)?;
        let mut table = self.open(chosen)?;
        if let Some(ca) = &self.db_ca_file {
            table = table.ca_file(ca);
        }
        table = table.accept_async_replication(self.accept_async_replication);
        if let Some(s) = self.db_timeout {
            table = table.timeout(Duration::from_secs(s));
        }
        if let Some(s) = self.db_retry {
            table = table.retry_for(Duration::from_secs(s));
        }
        Ok(table)
    }

    /// `--db-ca-file` is for a server: an error with a SQLite file rather than ignored.
    fn ca_needs_server(&self, chosen: Option<&str>) -> Result<(), String> {
        if let Some(ca) = &self.db_ca_file
            && !matches!(chosen, Some("mysql" | "postgres"))
        {
            return Err(format!(
                "--db-ca-file {} is for TLS to a server: it needs {}, not a SQLite file",
                ca.display(),
                or_list(&takers(SharedFlag::CaFile))
            ));
        }
        Ok(())
    }

    fn open(&self, chosen: Option<&str>) -> Result<DatabaseAssigner, String> {
        let err = |e: ringflake::Error| e.to_string();
        match chosen {
            Some("mysql") => DatabaseAssigner::mysql(self.mysql.as_deref().unwrap_or_default())
                .map(|t| t.create_table(self.create_table))
                .map_err(err),
            Some("postgres") => {
                DatabaseAssigner::postgres(self.postgres.as_deref().unwrap_or_default())
                    .map(|t| t.create_table(self.create_table))
                    .map_err(err)
            }
            _ => {
                let path = self
                    .db
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(DEFAULT_SQLITE_PATH));
                DatabaseAssigner::sqlite(path).map_err(err)
            }
        }
    }

    /// The worker table to list.
    /// The worker table for `workers`, which only reads: a SQLite file is opened read-only and
    /// never created (a typo in `--db` is an error, not a new empty database).
    pub fn assigner(&self, matches: &ArgMatches) -> Result<DatabaseAssigner, String> {
        let chosen = pick(sub(matches), Self::NAMES, WORKER_SOURCE)?;
        if matches!(chosen, None | Some("db")) {
            self.ca_needs_server(chosen)?;
            let path = self
                .db
                .clone()
                .unwrap_or_else(|| PathBuf::from(DEFAULT_SQLITE_PATH));
            let table = DatabaseAssigner::sqlite_read_only(path).map_err(|e| e.to_string())?;
            return Ok(match self.db_timeout {
                Some(s) => table.timeout(Duration::from_secs(s)),
                None => table,
            });
        }
        self.table(chosen)
    }
}

impl WorkerArgs {
    /// The worker id source the flags choose: a fixed id, or a worker table that recycles its ids
    /// (the default) or, with `--no-recycle`, takes a new row at every boot.
    pub fn source(&self, matches: &ArgMatches) -> Result<Source, String> {
        let m = sub(matches);
        let chosen = self.chosen(matches)?;
        let recycling = pick(m, &["recycle", "no_recycle"], "recycling setting")?;
        if let Some(flag @ ("worker_id" | "worker_id_from_hostname")) = chosen {
            let table_only = [
                ("--recycle", self.recycle),
                ("--no-recycle", self.no_recycle),
                ("--lease-window", self.lease_window.is_some()),
            ];
            if let Some((table_flag, _)) = table_only.iter().find(|(_, given)| *given) {
                return Err(format!(
                    "{table_flag} needs a worker table (--db, --mysql or --postgres), not --{}",
                    flag.replace('_', "-")
                ));
            }
            if flag == "worker_id_from_hostname" {
                return HostOrdinal::read().map(Source::Hostname);
            }
            return Ok(Source::Fixed(self.worker_id.unwrap_or_default()));
        }
        if let Some(kind) = chosen.and_then(SourceArgs::kind) {
            if self.no_recycle {
                return Err(format!(
                    "--no-recycle is for a worker table: ids from --{} always hold a lease \
                     (their reach)",
                    kind.flag
                ));
            }
            return self.other(kind).map(Source::Other);
        }
        self.sources.only_with_their_source(chosen)?;
        // Said explicitly either way, so that the command does not depend on the library's
        // default. A flag from the environment set to false says the opposite.
        let recycle = match recycling {
            Some("recycle") => self.recycle,
            Some("no_recycle") => !self.no_recycle,
            _ => true,
        };
        let mut table = self.db.table(chosen)?.recycle(recycle);
        match self.lease_window {
            Some(_) if !recycle => {
                return Err(
                    "--lease-window needs recycling: with --no-recycle there is no lease".into(),
                );
            }
            Some(s) => table = table.lease_window(Duration::from_secs(s)),
            None => {}
        }
        Ok(Source::Table(table))
    }
}

impl WorkerArgs {
    /// The source `kind` opened with its flags and the table flags it shares; a table flag it
    /// does not take is an error naming the flags that do.
    fn other(&self, kind: &SourceKind) -> Result<Box<dyn ringflake::Source>, String> {
        let db = &self.db;
        let accept_async = db.accept_async_replication;
        let shared = [
            (SharedFlag::LeaseWindow, self.lease_window.is_some()),
            (SharedFlag::Retry, db.db_retry.is_some()),
            (SharedFlag::Timeout, db.db_timeout.is_some()),
            (SharedFlag::CaFile, db.db_ca_file.is_some()),
            (SharedFlag::AcceptAsyncReplication, accept_async),
        ];
        if let Some((flag, _)) = shared
            .iter()
            .find(|(flag, given)| *given && !kind.shared.contains(flag))
        {
            return Err(format!(
                "{} is for {}, not --{}",
                flag.flag(),
                or_list(&takers(*flag)),
                kind.flag
            ));
        }
        if db.create_table {
            return Err(format!(
                "--create-table is for --mysql or --postgres, not --{}",
                kind.flag
            ));
        }
        let mut s = self.sources.settings(kind);
        s.lease_window = self.lease_window.map(Duration::from_secs);
        s.retry_for = db.db_retry.map(Duration::from_secs);
        s.timeout = db.db_timeout.map(Duration::from_secs);
        s.ca_file = db.db_ca_file.clone();
        s.accept_async_replication = accept_async;
        kind.open(&s).map_err(|e| e.to_string())
    }
}

impl WorkerArgs {
    /// The worker id source flag given (`db`, `mysql`, `postgres`, `worker_id`,
    /// `worker_id_from_hostname`); `None`: none, the default SQLite file. A switch set to false
    /// from its environment variable chooses nothing.
    pub fn chosen(&self, matches: &ArgMatches) -> Result<Option<&'static str>, String> {
        let chosen = pick(sub(matches), &worker_sources(), WORKER_SOURCE)?;
        Ok(match chosen {
            Some("worker_id_from_hostname") if !self.worker_id_from_hostname => None,
            other => other,
        })
    }
}

impl StateArgs {
    /// The state file the flags choose: `--state-file`, none with `--no-state-file`, else
    /// [`DEFAULT_STATE_FILE`].
    pub fn path(&self, matches: &ArgMatches) -> Result<Option<PathBuf>, String> {
        let chosen = pick(
            sub(matches),
            &["state_file", "no_state_file"],
            "state file setting",
        )?;
        Ok(match chosen {
            Some("no_state_file") if self.no_state_file => None,
            Some("state_file") => self.state_file.clone(),
            _ => Some(PathBuf::from(DEFAULT_STATE_FILE)),
        })
    }
}

impl RingArgs {
    /// The lead cap the flags choose: `--max-lead` (default [`DEFAULT_MAX_LEAD`]) with
    /// `--lead-policy`, or `--unbounded-lead`, which has no policy to give.
    pub fn lead(&self, matches: &ArgMatches) -> Result<Lead, String> {
        let m = sub(matches);
        let chosen = pick(m, &["max_lead", "unbounded_lead"], "lead cap")?;
        let policy = LeadPolicy::from(self.lead_policy);
        if chosen == Some("unbounded_lead") && self.unbounded_lead {
            if given(m, &["lead_policy"]).is_empty() {
                return Ok(Lead::Unbounded);
            }
            return Err(
                "--lead-policy needs a lead cap: with --unbounded-lead the generator never waits \
                 for the clock nor fails at a cap"
                    .into(),
            );
        }
        Ok(Lead::Capped(
            self.max_lead.unwrap_or(DEFAULT_MAX_LEAD.as_secs()),
            policy,
        ))
    }

    /// Applies the ring flags, `lead` among them, to a builder.
    fn apply(&self, mut b: ringflake::CachedBuilder, lead: Lead) -> ringflake::CachedBuilder {
        if let Some(p) = self.boost_power {
            b = b.boost_power(p);
        }
        if let Some(p) = self.padding_factor {
            b = b.padding_factor(p);
        }
        if let Some(s) = self.max_lag {
            b = b.max_lag(Duration::from_secs(s));
        }
        if let Some(id) = self.above {
            b = b.above(id);
        }
        match lead {
            Lead::Capped(s, policy) => b.max_lead(Duration::from_secs(s), policy),
            Lead::Unbounded => b.unbounded_lead(),
        }
    }
}

/// Builds a cached generator for `layout` with the worker id from `source`, the ring flags and
/// the lead cap if given (else the library's defaults: `gen` has no ring flags), and the state
/// file `state` if any. With `spaces` (serve's generators, and this one's place among them), a
/// new worker id taken after a heal is checked against the other generators' first
/// ([`Guarded`]).
pub fn generator(
    layout: Layout,
    source: &Source,
    ring: Option<(&RingArgs, Lead)>,
    state: Option<&Path>,
    spaces: Option<(&Arc<Spaces>, usize)>,
) -> Result<CachedUidGenerator, String> {
    builder(layout, source, ring, state, spaces)?
        .build()
        .map_err(|e| e.to_string())
}

/// The builder of [`generator`], checked ([`ringflake::CachedBuilder::check`]): nothing has
/// claimed a worker id yet (a worker table or ZooKeeper is asked when it is built).
pub fn builder(
    layout: Layout,
    source: &Source,
    ring: Option<(&RingArgs, Lead)>,
    state: Option<&Path>,
    spaces: Option<(&Arc<Spaces>, usize)>,
) -> Result<CachedBuilder, String> {
    let from = |b: CachedBuilder, inner: &dyn WorkerIdAssigner| match spaces {
        Some((spaces, index)) => b.worker_id_from(&Guarded {
            inner,
            spaces: Arc::clone(spaces),
            index,
        }),
        None => b.worker_id_from(inner),
    };
    let mut b = CachedUidGenerator::builder(layout);
    b = match source {
        Source::Fixed(id) => b.worker_id(*id),
        Source::Hostname(h) if h.worker_id > layout.max_worker_id() => {
            return Err(format!(
                "--worker-id-from-hostname: host name {} ({}) gives worker id {}, above the \
                 layout's largest worker id {} ({} worker bits): give the layout more worker \
                 bits, or run fewer pods",
                h.host,
                h.from,
                h.worker_id,
                layout.max_worker_id(),
                layout.worker_bits()
            ));
        }
        Source::Hostname(h) => b.worker_id(h.worker_id),
        Source::Table(assigner) => from(b, assigner),
        Source::Other(source) => from(b, source.as_ref()),
    };
    if let Some((ring, lead)) = ring {
        b = ring.apply(b, lead);
    }
    if let Some(path) = state {
        b = b.state_file(path);
    }
    b.check().map_err(|e| e.to_string())?;
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command, ServeArgs};
    use clap::{CommandFactory, FromArgMatches};

    /// `ringflake serve ARGS`, parsed, with its matches.
    fn serve(args: &[&str]) -> (ServeArgs, ArgMatches) {
        let m = Cli::command()
            .try_get_matches_from([&["ringflake", "serve"], args].concat())
            .unwrap();
        match Cli::from_arg_matches(&m).unwrap().command {
            Command::Serve(a) => (a, m),
            _ => unreachable!(),
        }
    }

    #[test]
    fn lead_caps() {
        let lead = |args: &[&str]| {
            let (a, m) = serve(args);
            a.ring.lead(&m)
        };
        let ten = DEFAULT_MAX_LEAD.as_secs();
        assert_eq!(lead(&[]), Ok(Lead::Capped(ten, LeadPolicy::Wait)));
        assert_eq!(
            lead(&["--max-lead", "0"]),
            Ok(Lead::Capped(0, LeadPolicy::Wait))
        );
        assert_eq!(
            lead(&["--lead-policy", "fail"]),
            Ok(Lead::Capped(ten, LeadPolicy::Fail))
        );
        assert_eq!(lead(&["--unbounded-lead"]), Ok(Lead::Unbounded));
        assert_eq!(
            lead(&["--unbounded-lead", "--max-lead", "5"]),
            Err("choose one lead cap, got --max-lead and --unbounded-lead".into())
        );
        let err = lead(&["--unbounded-lead", "--lead-policy", "wait"]).unwrap_err();
        assert!(err.starts_with("--lead-policy needs a lead cap"), "{err}");
    }

    #[test]
    fn state_files() {
        let path = |args: &[&str]| {
            let (a, m) = serve(args);
            a.state.path(&m)
        };
        assert_eq!(path(&[]), Ok(Some(PathBuf::from("ringflake.state"))));
        assert_eq!(
            path(&["--state-file", "/var/lib/ids/state"]),
            Ok(Some(PathBuf::from("/var/lib/ids/state")))
        );
        assert_eq!(path(&["--no-state-file"]), Ok(None));
        assert_eq!(
            path(&["--no-state-file", "--state-file", "x"]),
            Err("choose one state file setting, got --state-file and --no-state-file".into())
        );
    }
}
