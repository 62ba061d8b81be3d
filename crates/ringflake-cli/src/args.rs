//! Command-line flags (every one also read from a `RINGFLAKE_…` environment variable): what each
//! command accepts, its help text, and which of the flags that exclude each other was given
//! ([`pick`]). How the flags become a layout, a time zone, a worker id source and a generator is
//! [`crate::generators`]' business; nothing here builds one.

use clap::builder::TypedValueParser as _;
use clap::{ArgMatches, Args, Parser, Subcommand, ValueEnum, parser::ValueSource};
use ringflake::{
    DEFAULT_BOOST_POWER, DEFAULT_EPOCH_SECONDS, DEFAULT_MAX_LAG, DEFAULT_MAX_LEAD,
    DEFAULT_PADDING_FACTOR, DEFAULT_SQLITE_PATH, DatabaseAssigner, IdFormat, Layout, LeadPolicy,
    TimeZone, UID_GENERATOR_EPOCH_SECONDS,
};
use ringflake_server::model::limits;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Unique, time-ordered 64-bit IDs, bit-for-bit compatible with Baidu UidGenerator.
///
/// Every flag can also be set by an environment variable: the flag's name in capitals with a
/// RINGFLAKE_ prefix (--time-bits: RINGFLAKE_TIME_BITS). A flag on the command line wins over
/// the variable.
#[derive(Debug, Parser)]
#[command(name = "ringflake", version = version(), propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// What `--version` prints after the name: the version, the commit and the library's features
/// (`0.2.0 (commit 6dea384abcde, features: etcd, grpc, …)`).
fn version() -> String {
    use ringflake::build_info::{COMMIT, FEATURES, VERSION};
    format!(
        "{VERSION} (commit {COMMIT}, features: {})",
        FEATURES.join(", ")
    )
}

// Parsed once per run: the size of the largest variant (serve's flags) costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve IDs over HTTP and gRPC on one port (the help line lists the routes).
    #[command(about = format!(
        "Serve IDs over HTTP and gRPC (ringflake.v1.Ids, on the same port): {}",
        ringflake_server::model::routes::listing(", ")
    ))]
    Serve(ServeArgs),
    /// Print N new IDs, one per line.
    Gen(GenArgs),
    /// Print UidGenerator's parseUID JSON for each ID, one per line.
    Parse(ParseArgs),
    /// Plan a layout: propose bit widths and an epoch for a rate, live nodes, restarts and years.
    Layout(PlanArgs),
    /// List the worker table (WORKER_NODE).
    #[command(mut_arg("db", |a| a.help(format!(
        "SQLite file holding the WORKER_NODE table, opened read-only: never created \
         [default: {DEFAULT_SQLITE_PATH}]"
    ))))]
    Workers(WorkersArgs),
    /// List or add the business tags of Meituan Leaf's leaf_alloc table (segment mode)
    Segments {
        #[command(subcommand)]
        action: SegmentsAction,
    },
    /// Print a completion script for a shell: ringflake completions bash > /etc/bash_completion.d/ringflake
    Completions(crate::completions::CompletionsArgs),
    /// Print the man page (roff) of ringflake or of one of its commands: ringflake man serve | man -l -
    Man(crate::completions::ManArgs),
}

/// What `segments` does, on the worker database's `leaf_alloc`.
#[derive(Debug, Subcommand)]
pub enum SegmentsAction {
    /// List the biz_tags of leaf_alloc: max_id, step, whether ringflake serves it, description
    List {
        #[command(flatten)]
        db: DbArgs,
    },
    /// Add a biz_tag to leaf_alloc (creating the table if missing), as INSERT INTO leaf_alloc
    /// would; serve nodes pick it up at their next reread
    Add {
        #[command(flatten)]
        tag: crate::segment_args::NewTag,
        #[command(flatten)]
        db: DbArgs,
    },
}

/// The ID layout, the same flags everywhere. Defaults: [`Layout::default`], 31/10/22 bits from
/// 2025-01-01T00:00:00Z (the help text's defaults are checked against it by a test). Given two
/// widths, the third is 63 minus their sum.
#[derive(Debug, Clone, Args)]
pub struct LayoutArgs {
    #[arg(long = "layout", id = "layout", env = "RINGFLAKE_LAYOUT", value_name = "NAME",
          value_parser = clap::builder::PossibleValuesParser::new(ringflake::PRESET_NAMES),
          help = "A preset layout, bit-exact with the original (epoch, widths, time unit, field \
                  order), instead of the widths and epoch: twitter and leaf (41/10/12 bits of \
                  milliseconds), discord, instagram, sonyflake, uidgenerator (UidGenerator's \
                  expired defaults), js53 (IDs below 2^53, safe in JavaScript), default")]
    pub preset: Option<String>,
    #[arg(long, env = "RINGFLAKE_TIME_BITS", value_name = "BITS", value_parser = clap::value_parser!(u32).range(1..=61),
          help = format!("Width of the time field (seconds since the epoch) [default: {}]", Layout::default().time_bits()))]
    pub time_bits: Option<u32>,
    #[arg(long, env = "RINGFLAKE_WORKER_BITS", value_name = "BITS", value_parser = clap::value_parser!(u32).range(1..=61),
          help = format!("Width of the worker id field [default: {}]", Layout::default().worker_bits()))]
    pub worker_bits: Option<u32>,
    #[arg(long, env = "RINGFLAKE_SEQ_BITS", value_name = "BITS", value_parser = clap::value_parser!(u32).range(1..=61),
          help = format!("Width of the sequence field [default: {}]", Layout::default().seq_bits()))]
    pub seq_bits: Option<u32>,
    #[arg(long, env = "RINGFLAKE_EPOCH", value_name = "yyyy-MM-dd",
          help = format!("Epoch date, midnight in --tz, as UidGenerator's epochStr [default: {} UTC]",
                         utc_date(DEFAULT_EPOCH_SECONDS)))]
    pub epoch: Option<String>,
    #[arg(
        long,
        env = "RINGFLAKE_EPOCH_SECONDS",
        value_name = "N",
        allow_negative_numbers = true,
        help = format!("Epoch as unix seconds, instead of --epoch (UidGenerator's default is {UID_GENERATOR_EPOCH_SECONDS})")
    )]
    pub epoch_seconds: Option<i64>,
    /// Time zone for the --epoch date and for parseUID timestamps, as the JVM's default zone:
    /// an IANA name (Asia/Shanghai), UTC, or an offset (GMT+8, +08:00) [default: the TZ variable,
    /// else the system's zone]
    #[arg(long, env = "RINGFLAKE_TZ", value_name = "ZONE")]
    pub tz: Option<String>,
}

/// Where worker ids come from: one of the worker tables, and the flags other sources share.
#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    #[arg(long, env = "RINGFLAKE_DB", value_name = "PATH",
          help = format!("SQLite file holding the WORKER_NODE table, created if missing [default: {DEFAULT_SQLITE_PATH}]"))]
    pub db: Option<PathBuf>,
    /// MariaDB/MySQL WORKER_NODE table, mysql://user:password@host:3306/database
    #[arg(long, env = "RINGFLAKE_MYSQL", value_name = "URL")]
    pub mysql: Option<String>,
    /// PostgreSQL WORKER_NODE table, postgres://user:password@host:5432/database
    #[arg(long, env = "RINGFLAKE_POSTGRES", value_name = "URL")]
    pub postgres: Option<String>,
    /// With --mysql or --postgres: create WORKER_NODE from schema/ if it is missing (needs the
    /// CREATE privilege); without it a missing table is an error
    #[arg(long, env = "RINGFLAKE_CREATE_TABLE", value_parser = boolish())]
    pub create_table: bool,
    /// With --mysql or --postgres: trust the CA certificates in this PEM file for TLS to the
    /// server; unless the URL sets sslmode / ssl-mode, TLS with the certificate and host name
    /// verified (verify-full / VERIFY_IDENTITY)
    #[arg(long, env = "RINGFLAKE_DB_CA_FILE", value_name = "PATH")]
    pub db_ca_file: Option<PathBuf>,
    /// With --mysql or --postgres: use a worker id claim or lease extension as soon as the
    /// primary commits it, without waiting until every standby holds it. The risk: a failover to
    /// a standby that lacked it gives the same worker id to another node (duplicate IDs)
    #[arg(long, env = "RINGFLAKE_ACCEPT_ASYNC_REPLICATION", value_parser = boolish())]
    pub accept_async_replication: bool,
    #[arg(long, env = "RINGFLAKE_DB_TIMEOUT", value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=3600),
          help = format!("Fail a database call (connecting, or one statement) that gets no answer \
                          within this many seconds, and reconnect on the next one; for SQLite, how \
                          long to wait for another process's write lock [default: {}]",
                         DatabaseAssigner::DEFAULT_TIMEOUT.as_secs()))]
    pub db_timeout: Option<u64>,
    #[arg(long, env = "RINGFLAKE_DB_RETRY", value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=86400),
          help = format!("How long to keep retrying an unreachable database at start-up before \
                          giving up [default: {}]", DatabaseAssigner::DEFAULT_RETRY_FOR.as_secs()))]
    pub db_retry: Option<u64>,
}

/// A worker id source for a generator: the database flags, or --worker-id.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// The other sources' flags (`--zookeeper`, ...: [`crate::sources::SOURCES`]).
    #[command(flatten)]
    pub sources: crate::sources::SourceArgs,
    /// Use this worker id, no database: no other process may use it at the same time
    #[arg(long, env = "RINGFLAKE_WORKER_ID", value_name = "N")]
    pub worker_id: Option<u64>,
    /// Use the trailing -N of the host name as the worker id, no database: a Kubernetes
    /// StatefulSet pod's ordinal (ringflake-3: worker id 3), read from HOSTNAME, else the system's
    /// host name. Keep the state file on the pod's volume claim
    #[arg(long, env = "RINGFLAKE_WORKER_ID_FROM_HOSTNAME", value_parser = boolish())]
    pub worker_id_from_hostname: bool,
    /// Keep a lease in the worker row: reuse expired ids, monotonic restarts (databases only).
    /// The default; accepted so that scripts written when it was not keep working
    #[arg(long, env = "RINGFLAKE_RECYCLE", value_parser = boolish())]
    pub recycle: bool,
    /// Java's never-reuse: a new worker row at every boot, no lease (the worker ids run out after
    /// 2^worker_bits boots)
    #[arg(long, env = "RINGFLAKE_NO_RECYCLE", value_parser = boolish())]
    pub no_recycle: bool,
    #[arg(long, env = "RINGFLAKE_LEASE_WINDOW", value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=604800),
          help = format!("How far beyond the newest second used the worker lease reaches (written \
                          to the table once per third of it); longer rides out longer database \
                          outages and writes less often, shorter lets a crashed node's id be \
                          reused sooner [default: {}]", DatabaseAssigner::DEFAULT_LEASE_WINDOW.as_secs()))]
    pub lease_window: Option<u64>,
}

/// The file that records the highest second a generator may have used, so that a restart starts
/// above it.
#[derive(Debug, Clone, Args)]
pub struct StateArgs {
    #[arg(long, env = "RINGFLAKE_STATE_FILE", value_name = "PATH",
          help = format!("Record here, durably and before use, the highest second this generator \
                          may use, and start above what it records: a restart of the same worker \
                          id never repeats an ID, even after kill -9. Shared by every generator \
                          started in the same directory; a new worker id starts after the highest \
                          second it records for any (at most max-lead ahead), so that restarts in \
                          one directory stay in order and a run beside a live one starts at the \
                          clock [default: {DEFAULT_STATE_FILE}]"))]
    pub state_file: Option<PathBuf>,
    /// Run without a state file: a restart of the same worker id within max-lead seconds of its
    /// last run's end can repeat that run's IDs (nothing records how far ahead it went), and a
    /// new worker id from a table starts up to max-lead seconds ahead of the clock, above the
    /// leases of the host's earlier rows, so that restarts stay in order
    #[arg(long, env = "RINGFLAKE_NO_STATE_FILE", value_parser = boolish())]
    pub no_state_file: bool,
}

/// How the ring is filled.
#[derive(Debug, Clone, Args)]
pub struct RingArgs {
    #[arg(long, env = "RINGFLAKE_BOOST_POWER", value_name = "N",
          help = format!("The ring holds 2^seq_bits << BOOST_POWER IDs [default: {DEFAULT_BOOST_POWER}]"))]
    pub boost_power: Option<u32>,
    #[arg(long, env = "RINGFLAKE_PADDING_FACTOR", value_name = "PERCENT",
          help = format!("Wake the filler below this fill level, percent [default: {DEFAULT_PADDING_FACTOR}]"))]
    pub padding_factor: Option<u32>,
    #[arg(long, env = "RINGFLAKE_MAX_LAG", value_name = "SECONDS",
          help = format!("Discard IDs older than this many seconds instead of handing them out \
                          [default: {}]", DEFAULT_MAX_LAG.as_secs()))]
    pub max_lag: Option<u64>,
    #[arg(long, env = "RINGFLAKE_MAX_LEAD", value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=MAX_LEAD_FLAG),
          help = format!("Borrow at most this many seconds ahead of the clock (0: never ahead; the \
                          largest /ids batch is (SECONDS + 1) x 2^seq_bits) [default: {}]",
                         DEFAULT_MAX_LEAD.as_secs()))]
    pub max_lead: Option<u64>,
    /// Borrow as far ahead of the clock as demand takes it, as Java's CachedUidGenerator does:
    /// flat out, the layout's lifetime is used up that much faster (instead of --max-lead)
    #[arg(long, env = "RINGFLAKE_UNBOUNDED_LEAD", value_parser = boolish())]
    pub unbounded_lead: bool,
    /// At the --max-lead cap: wait for the clock, or fail the request
    #[arg(long, env = "RINGFLAKE_LEAD_POLICY", value_name = "POLICY", value_enum, default_value_t = LeadPolicyArg::Wait)]
    pub lead_policy: LeadPolicyArg,
    /// Refuse to start unless the first ID sorts above this ID of the generator being replaced
    /// (Leaf, Java): `ringflake layout --above ID` proposes an epoch that does it
    #[arg(long, env = "RINGFLAKE_ABOVE", value_name = "ID",
          value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    pub above: Option<u64>,
}

/// `--listen`'s and `--metrics-listen`'s parser: an IP address and a port. A host name is
/// refused, with the form expected: the service binds one address, and a name can resolve to
/// several, or to another one tomorrow.
pub(crate) fn socket_addr(value: &str) -> Result<SocketAddr, String> {
    value.trim().parse().map_err(|_| {
        let host = value.rsplit_once(':').map_or(value, |(h, _)| h);
        let hint = match host {
            "localhost" => " (localhost: 127.0.0.1, or [::1])",
            "" | "*" => " (every interface: 0.0.0.0, or [::])",
            _ => "",
        };
        format!(
            "{value:?} is not an IP address and port: expected IP:PORT like 127.0.0.1:8080, \
             0.0.0.0:8080 or [::1]:8080{hint}; host names are not resolved"
        )
    })
}

/// A whole number for `--rate`, `--fleet-rate`, `--nodes` and `--restarts-per-day`: digits, with `_` or `,` between
/// thousands allowed (`1_000_000`); `1e6` and `2.5` are refused with the form expected.
pub(crate) fn whole_number(value: &str) -> Result<u64, String> {
    let digits: String = value
        .trim()
        .chars()
        .filter(|c| !matches!(c, '_' | ','))
        .collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{value:?} is not a whole number: expected digits, like 1000000 or 1_000_000 (no \
             exponent, no fraction)"
        ));
    }
    digits
        .parse()
        .map_err(|_| format!("{value:?} is too large: at most {}", u64::MAX))
}

/// `gen -n`: at least 1.
pub(crate) fn count(value: &str) -> Result<u64, String> {
    match whole_number(value)? {
        0 => Err("0 IDs: give at least 1".into()),
        n => Ok(n),
    }
}

/// How the switches read a value from their environment variable: `true`, `1`, `yes`, `on` (and
/// their opposites), not only `true` and `false`.
fn boolish() -> clap::builder::BoolishValueParser {
    clap::builder::BoolishValueParser::new()
}

/// The largest `--max-wait`: an hour.
const MAX_WAIT_FLAG: u64 = 3600;

/// How long a request for IDs waits unless `--max-wait` says otherwise: the service's default.
pub use ringflake_server::DEFAULT_MAX_WAIT;

/// The UTC date of a unix second, for the help text (`2025-01-01`).
fn utc_date(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds).map_or_else(
        |_| seconds.to_string(),
        |t| t.to_zoned(TimeZone::UTC).date().to_string(),
    )
}

/// The largest `--max-lead`: a year (more is no cap worth the name; `--unbounded-lead` is that).
const MAX_LEAD_FLAG: u64 = 366 * 86_400;

/// The state file of a command that makes IDs when none is named: in the working directory,
/// beside the default worker table `ringflake.db`.
pub const DEFAULT_STATE_FILE: &str = "ringflake.state";

/// `--lead-policy`: the command line's names for [`LeadPolicy`], each value the variant of the
/// same name (`wait`: takes wait for the clock; `fail`: they fail). The variants carry no doc
/// comments on purpose: clap would print them, and turn `--help` into its long form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LeadPolicyArg {
    Wait,
    Fail,
}

/// `gen --format`: the command line's names for [`IdFormat`] (no doc comments on the variants,
/// as for [`LeadPolicyArg`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Decimal,
    Base32,
    Base62,
}

impl From<FormatArg> for IdFormat {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Decimal => IdFormat::Decimal,
            FormatArg::Base32 => IdFormat::Base32,
            FormatArg::Base62 => IdFormat::Base62,
        }
    }
}

/// `parse --format`: a form, or `auto` (told by each ID's text, [`IdFormat::detect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ParseFormatArg {
    Auto,
    Decimal,
    Base32,
    Base62,
}

impl ParseFormatArg {
    /// The form to read IDs in; `None`: each ID's own.
    pub fn format(self) -> Option<IdFormat> {
        match self {
            ParseFormatArg::Auto => None,
            ParseFormatArg::Decimal => Some(IdFormat::Decimal),
            ParseFormatArg::Base32 => Some(IdFormat::Base32),
            ParseFormatArg::Base62 => Some(IdFormat::Base62),
        }
    }
}

impl From<LeadPolicyArg> for LeadPolicy {
    fn from(policy: LeadPolicyArg) -> Self {
        match policy {
            LeadPolicyArg::Wait => LeadPolicy::Wait,
            LeadPolicyArg::Fail => LeadPolicy::Fail,
        }
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on, IP:PORT (port 0: any free port, printed at start)
    #[arg(
        long,
        env = "RINGFLAKE_LISTEN",
        value_name = "ADDR",
        default_value = "127.0.0.1:8080",
        value_parser = socket_addr
    )]
    pub listen: SocketAddr,
    /// The `generator` label of the Prometheus series on /metrics
    #[arg(
        long,
        env = "RINGFLAKE_NAME",
        value_name = "NAME",
        default_value = "ringflake"
    )]
    pub name: String,
    /// After SIGTERM/Ctrl-C, wait this long for in-flight requests before closing them
    #[arg(
        long,
        env = "RINGFLAKE_SHUTDOWN_TIMEOUT",
        value_name = "SECONDS",
        default_value_t = 10
    )]
    pub shutdown_timeout: u64,
    /// Serving threads, each with its own runtime, all accepting on one socket [default: one per
    /// core]
    #[arg(long, env = "RINGFLAKE_THREADS", value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Bearer tokens, one a line (blank lines and # comments ignored): the ID, parse and Leaf
    /// routes then answer 401 without `Authorization: Bearer TOKEN`; read again on SIGHUP
    #[arg(long, env = "RINGFLAKE_AUTH_TOKEN_FILE", value_name = "PATH")]
    pub auth_token_file: Option<PathBuf>,
    /// Serve /metrics, the status page (/ and /status) and /healthz on this address, an
    /// internal one, and not on --listen
    #[arg(long, env = "RINGFLAKE_METRICS_LISTEN", value_name = "ADDR", value_parser = socket_addr)]
    pub metrics_listen: Option<SocketAddr>,
    /// Certificate chain (PEM, the server's certificate first): --listen speaks HTTPS only
    #[arg(
        long,
        env = "RINGFLAKE_TLS_CERT",
        value_name = "PEM",
        requires = "tls_key"
    )]
    pub tls_cert: Option<PathBuf>,
    /// Private key of --tls-cert (PEM: PKCS#8, RSA or EC)
    #[arg(
        long,
        env = "RINGFLAKE_TLS_KEY",
        value_name = "PEM",
        requires = "tls_cert"
    )]
    pub tls_key: Option<PathBuf>,
    #[arg(long, env = "RINGFLAKE_MAX_WAIT", value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=MAX_WAIT_FLAG),
          help = format!("The longest a request for IDs waits for them (at the lead cap, waiting \
                          requests are served first come, first served); then it is answered 503 \
                          with Retry-After, having taken nothing [default: {}]",
                         DEFAULT_MAX_WAIT.as_secs()))]
    pub max_wait: Option<u64>,
    #[arg(long, env = "RINGFLAKE_MAX_CONNECTIONS", value_name = "N",
          default_value_t = limits::DEFAULT_MAX_CONNECTIONS,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000).map(|n| n as usize),
          help = format!("The most connections open at once on each listener (--listen, \
                          --metrics-listen): more are closed as soon as they are accepted. With \
                          at most {} HTTP/2 streams a connection (an HTTP/2 connection with no \
                          open stream is closed after {} s), this bounds what clients can make \
                          the service hold", limits::MAX_STREAMS, limits::IDLE.as_secs()))]
    pub max_connections: usize,
    #[arg(long, env = "RINGFLAKE_MAX_LARGE_ANSWERS", value_name = "N",
          default_value_t = limits::DEFAULT_MAX_LARGE_ANSWERS,
          value_parser = clap::value_parser!(u32).range(1..=100_000).map(|n| n as usize),
          help = format!("The most large answers (more than {} IDs: /ids, gRPC Batch and Stream) \
                          written at once, across every connection; more wait their turn, up to \
                          --max-wait, then get a 503. Each is written as its client reads, \
                          holding 8 bytes an ID; one whose client reads nothing of it for {} s \
                          is abandoned", limits::LARGE_IDS, limits::STALL.as_secs()))]
    pub max_large_answers: usize,
    /// This is the only instance using its worker id source: lets serve run in a Kubernetes pod
    /// with worker ids from a SQLite file of its own (refused there otherwise, as replicas would
    /// each take worker id 1 from their own file and hand out the same IDs)
    #[arg(long, env = "RINGFLAKE_SINGLE_INSTANCE", value_parser = boolish())]
    pub single_instance: bool,
    /// Named generators from a TOML file: one [generators.NAME] table each, its keys spelled as
    /// the generator flags below (time-bits = 31, worker-id = 3, db = "ids.db", max-lead = 30);
    /// served at /id/NAME, /ids/NAME?count=N and /parse/NAME/ID. The flags still define the
    /// generator called default unless the file has a [generators.default] table
    #[arg(long, env = "RINGFLAKE_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// What to log on standard error: RUST_LOG-style directives, a level (error, warn, info,
    /// debug, trace) and per-target levels (warn,ringflake::worker=debug)
    #[arg(
        long,
        env = "RINGFLAKE_LOG",
        value_name = "FILTER",
        default_value = "info",
        value_parser = crate::log::parse_filter
    )]
    pub log: String,
    /// How log lines look: text for people, json for log collectors (one object a line with
    /// timestamp, level, target, message and the event's fields)
    #[arg(long, env = "RINGFLAKE_LOG_FORMAT", value_name = "FORMAT", value_enum, default_value_t = crate::log::LogFormat::Text)]
    pub log_format: crate::log::LogFormat,
    /// Hand out public IDs only: /id and /ids pass each ID through the keyed permutation of the
    /// key in this file (64 hex digits: openssl rand -hex 32), and /parse reads them back; the
    /// routes that hand out plain IDs (gRPC's Next, Batch and Stream, which RemoteGenerator
    /// uses, and Leaf's /api/snowflake/get/{key}) are refused, as a plain ID could equal a
    /// public one
    #[arg(long, env = "RINGFLAKE_ID_KEY_FILE", value_name = "PATH")]
    pub id_key_file: Option<PathBuf>,
    #[command(flatten)]
    pub space: SpaceArgs,
    #[command(flatten)]
    pub worker: WorkerArgs,
    #[command(flatten)]
    pub state: StateArgs,
    #[command(flatten)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    pub ring: RingArgs,
    #[command(flatten)]
    pub segments: crate::segment_args::SegmentArgs,
}

/// Which ID space a generator's IDs belong to.
#[derive(Debug, Clone, Args)]
pub struct SpaceArgs {
    /// Declare this generator's IDs a space of their own (serve --config): serve refuses two
    /// generators that could hand out the same ID unless their namespaces differ. Give one
    /// only to generators whose IDs never meet: never stored in one column, compared, sorted
    /// together or sent down one stream (orders and billing in databases of their own). 1 to
    /// 24 letters, digits, '_' or '-'; default: one space for every generator
    #[arg(long, env = "RINGFLAKE_NAMESPACE", value_name = "NAME", value_parser = namespace)]
    pub namespace: Option<String>,
}

/// `--namespace`'s value parser: 1 to 24 letters, digits, `_` or `-`.
fn namespace(value: &str) -> Result<String, String> {
    let valid = (1..=24).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        Ok(value.to_string())
    } else {
        Err(format!(
            "{value:?} is not 1 to 24 letters, digits, '_' or '-'"
        ))
    }
}

/// The flags of one generator, as `serve` takes them: what a `[generators.NAME]` table of
/// `serve --config` holds, parsed by the same code (see [`GeneratorArgs::parse`]).
#[derive(Debug, Args)]
pub struct GeneratorArgs {
    #[command(flatten)]
    pub space: SpaceArgs,
    #[command(flatten)]
    pub worker: WorkerArgs,
    #[command(flatten)]
    pub state: StateArgs,
    #[command(flatten)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    pub ring: RingArgs,
}

impl GeneratorArgs {
    /// The generator flags alone, read from nowhere but `tokens` (no environment variable).
    pub fn command() -> clap::Command {
        use clap::Args as _;
        GeneratorArgs::augment_args(clap::Command::new("generator"))
            .no_binary_name(true)
            .disable_help_flag(true)
            .mut_args(|a| a.env(None))
    }

    /// Parses `tokens` (`--time-bits=30`, `--recycle`, ...) as `serve` parses its generator
    /// flags, with their matches for [`WorkerArgs::source`] and the like.
    pub fn parse(tokens: &[String]) -> Result<(GeneratorArgs, ArgMatches), clap::Error> {
        use clap::FromArgMatches as _;
        let m = Self::command().try_get_matches_from(tokens)?;
        Ok((GeneratorArgs::from_arg_matches(&m)?, m))
    }

    /// The generator flags given to `serve` (on the command line or from the environment), as
    /// a person reads them: `--time-bits`, `--db (from RINGFLAKE_DB)`.
    pub fn given_to_serve(matches: &ArgMatches) -> Vec<String> {
        let command = Self::command();
        let ids: Vec<&str> = command
            .get_arguments()
            .map(|a| a.get_id().as_str())
            .collect();
        given(sub(matches), &ids)
            .into_iter()
            .map(|(n, s)| {
                let flag = format!("--{}", n.replace('_', "-"));
                if s == ValueSource::EnvVariable {
                    format!("{flag} (from RINGFLAKE_{})", n.to_uppercase())
                } else {
                    flag
                }
            })
            .collect()
    }
}

#[derive(Debug, Args)]
pub struct GenArgs {
    /// How many IDs to print
    #[arg(
        short = 'n',
        long = "count",
        env = "RINGFLAKE_COUNT",
        value_name = "N",
        default_value_t = 1,
        value_parser = count
    )]
    pub count: u64,
    /// How to write the IDs: decimal; base32 (13 characters, Crockford's alphabet, TSID's form);
    /// base62 (11 characters, 0-9A-Za-z). Base32 and base62 sort as the IDs do, byte by byte
    #[arg(long, env = "RINGFLAKE_FORMAT", value_name = "FORMAT", value_enum, default_value_t = FormatArg::Decimal)]
    pub format: FormatArg,
    /// Print public IDs: each ID through the keyed permutation of the key in this file (64 hex
    /// digits: openssl rand -hex 32), hiding order, volume, worker and time; ringflake parse
    /// --id-key-file reads them back
    #[arg(long, env = "RINGFLAKE_ID_KEY_FILE", value_name = "PATH")]
    pub id_key_file: Option<PathBuf>,
    #[command(flatten)]
    pub worker: WorkerArgs,
    #[command(flatten)]
    pub state: StateArgs,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The IDs, as decimal numbers or in the text forms of gen --format; none or `-`: read them
    /// from standard input, one a line (ringflake gen -n 5 | ringflake parse)
    #[arg(value_name = "ID", allow_negative_numbers = true)]
    pub ids: Vec<String>,
    /// The form the IDs are written in; auto: each ID's own, by its text (13 characters: base32,
    /// 11: base62, unless only digits without a leading zero: decimal), so a base32 or base62
    /// ID made only of digits from 1-9 needs its form named
    #[arg(long, env = "RINGFLAKE_FORMAT", value_name = "FORMAT", value_enum, default_value_t = ParseFormatArg::Auto)]
    pub format: ParseFormatArg,
    /// The IDs are public IDs made with the key in this file (gen --id-key-file, serve
    /// --id-key-file): each is read back through it first
    #[arg(long, env = "RINGFLAKE_ID_KEY_FILE", value_name = "PATH")]
    pub id_key_file: Option<PathBuf>,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("demand_rate").required(true).multiple(true).args(["rate", "fleet_rate"])))]
pub struct PlanArgs {
    /// Sustained IDs per second of the busiest node (give it, --fleet-rate, or both)
    #[arg(long, env = "RINGFLAKE_RATE", value_name = "IDS_PER_SEC", value_parser = whole_number)]
    pub rate: Option<u64>,
    /// Sustained IDs per second across the fleet, spread over --nodes (the busiest node then
    /// takes the larger of --rate and its share)
    #[arg(long, env = "RINGFLAKE_FLEET_RATE", value_name = "IDS_PER_SEC", value_parser = whole_number)]
    pub fleet_rate: Option<u64>,
    /// Nodes live at once, each holding a worker id: with recycling (the default) the worker
    /// field must hold them, and the ids of nodes restarted within a lease window
    #[arg(long, env = "RINGFLAKE_NODES", value_name = "N", default_value_t = 1, value_parser = whole_number)]
    pub nodes: u64,
    /// Boots per day across all nodes sharing the worker table: with --no-recycle each takes a
    /// new worker id; with recycling a crashed one holds its id for a lease window
    #[arg(long, env = "RINGFLAKE_RESTARTS_PER_DAY", value_name = "N", default_value_t = 0, value_parser = whole_number)]
    pub restarts_per_day: u64,
    /// How many years the layout must last
    #[arg(long, env = "RINGFLAKE_YEARS", value_name = "Y")]
    pub years: u32,
    /// An existing ID (from Leaf, Java or any 63-bit generator) every new ID must sort above:
    /// each proposal gets the epoch that does it, and what that costs in lifetime
    #[arg(long, env = "RINGFLAKE_ABOVE", value_name = "ID",
          value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    pub above: Option<u64>,
    /// The day to plan from, midnight in --tz: lifetimes, run-out dates and the default epoch
    /// count from it (to plan ahead, or to get the same report on any day) [default: today]
    #[arg(long, env = "RINGFLAKE_TODAY", value_name = "yyyy-MM-dd")]
    pub today: Option<String>,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

#[derive(Debug, Args)]
pub struct WorkersArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub sources: crate::sources::SourceArgs,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

/// The names of the worker source flags as given, with where each came from.
pub fn given<'n>(m: &ArgMatches, names: &[&'n str]) -> Vec<(&'n str, ValueSource)> {
    names
        .iter()
        .filter_map(|n| {
            m.try_get_raw(n)
                .ok()
                .flatten()
                .and_then(|_| m.value_source(n))
                .filter(|s| *s != ValueSource::DefaultValue)
                .map(|s| (*n, s))
        })
        .collect()
}

/// Picks one of the flags `names` that exclude each other (the worker id sources, a state file or
/// none, ...), `what` they choose: a flag on the command line wins over environment variables;
/// two on the same level are an error.
pub fn pick(
    m: &ArgMatches,
    names: &[&'static str],
    what: &str,
) -> Result<Option<&'static str>, String> {
    let all = given(m, names);
    let cli: Vec<_> = all
        .iter()
        .filter(|(_, s)| *s == ValueSource::CommandLine)
        .collect();
    let level: Vec<&(&str, ValueSource)> = if cli.is_empty() {
        all.iter().collect()
    } else {
        cli
    };
    match level.as_slice() {
        [] => Ok(None),
        [(one, _)] => Ok(Some(one)),
        many => {
            let list: Vec<String> = many
                .iter()
                .map(|(n, s)| {
                    let flag = format!("--{}", n.replace('_', "-"));
                    if *s == ValueSource::EnvVariable {
                        format!("{flag} (from RINGFLAKE_{})", n.to_uppercase())
                    } else {
                        flag
                    }
                })
                .collect();
            Err(format!("choose one {what}, got {}", list.join(" and ")))
        }
    }
}

/// The matches of the subcommand in use.
pub fn sub(m: &ArgMatches) -> &ArgMatches {
    m.subcommand().map_or(m, |(_, s)| s)
}
