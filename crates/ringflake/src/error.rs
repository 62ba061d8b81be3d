//! The one error type of the crate.

use std::fmt;
use std::io;

/// Everything that can go wrong in ringflake, each variant carrying the value that was refused and
/// the limit it broke, so that the message alone tells what to fix.
///
/// # Examples
///
/// ```
/// use ringflake::{Error, Layout};
///
/// let err = Layout::new(30, 20, 12, 0).unwrap_err();
/// assert!(matches!(err, Error::InvalidBitWidths { .. }));
/// assert_eq!(
///     err.to_string(),
///     "invalid bit widths: time 30 + worker 20 + sequence 12 = 62, expected 63"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The three widths do not add up to 63, or one of them is zero.
    InvalidBitWidths {
        /// Width of the time field.
        time_bits: u32,
        /// Width of the worker field.
        worker_bits: u32,
        /// Width of the sequence field.
        seq_bits: u32,
    },
    /// An epoch date that is not a real `yyyy-MM-dd` date, or a time zone that is unknown.
    InvalidEpoch {
        /// The text that was refused.
        input: String,
        /// Why it was refused.
        reason: String,
    },
    /// The epoch lies after the current time.
    EpochInFuture {
        /// The epoch, in unix seconds.
        epoch_seconds: i64,
        /// The current time, in unix seconds.
        now_seconds: i64,
    },
    /// A time delta that does not fit the time field.
    DeltaOutOfRange {
        /// The refused delta, in seconds since the epoch.
        delta: u64,
        /// The largest delta the layout can hold.
        max: u64,
    },
    /// A worker id that does not fit the worker field.
    WorkerIdOutOfRange {
        /// The refused worker id.
        worker_id: u64,
        /// The largest worker id the layout can hold.
        max: u64,
    },
    /// A sequence that does not fit the sequence field.
    SequenceOutOfRange {
        /// The refused sequence.
        sequence: u64,
        /// The largest sequence the layout can hold.
        max: u64,
    },
    /// An ID with the sign bit set: no valid UidGenerator ID is negative.
    NegativeId {
        /// The refused ID, as an unsigned number.
        id: u64,
    },
    /// A text that is not an ID in the form it was read in ([`IdFormat`](crate::IdFormat)).
    IdText(crate::IdTextError),
    /// An ID key ([`IdCipher`](crate::IdCipher), feature `id-key`) that could not be read or is
    /// not a key; the message never shows the file's content.
    IdKey {
        /// The key file, if the key came from one.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A timestamp that cannot be rendered as a calendar date.
    TimestampOutOfRange {
        /// The unix second that could not be rendered.
        seconds: i64,
    },
    /// The layout's time bits have run out: no ID can be made any more.
    TimeBitsExhausted {
        /// The second (since the epoch) that was needed.
        delta: u64,
        /// The largest second the layout can hold.
        max: u64,
        /// The last valid second, as an RFC 3339 date in UTC.
        last_valid: String,
    },
    /// The clock moved backwards further than the generator is allowed to wait.
    ClockMovedBackwards {
        /// How many seconds the clock went back.
        seconds: u64,
    },
    /// The filler may not borrow further ahead of the clock (`max_lead`, policy `Fail`).
    LeadLimitReached {
        /// The configured cap, in seconds.
        max_lead: u64,
    },
    /// A batch larger than the lead cap can ever hold: `count` IDs need more seconds than
    /// `max_lead` lets the generator borrow, so waiting would never complete it.
    BatchTooLarge {
        /// The IDs asked for.
        count: u64,
        /// The largest batch the cap allows: `(max_lead + 1) * 2^seq_bits`.
        max: u64,
    },
    /// The state file that records how far this host's generators may have gone could not be
    /// read or written: no ID past what it recorded can be issued.
    StateFile {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// A configuration value outside its allowed range.
    InvalidConfig {
        /// The name of the setting.
        name: &'static str,
        /// The refused value.
        value: u64,
        /// The allowed range, in words.
        allowed: &'static str,
    },
    /// The process's time zone (the `TZ` variable, else `/etc/localtime`) was refused or could
    /// not be read; see [`system_time_zone`](crate::system_time_zone).
    TimeZone {
        /// Where it came from: `TZ=<value>`, or `/etc/localtime` when `TZ` is unset.
        setting: String,
        /// Why it was refused, with the limit where one applies.
        reason: String,
    },
    /// The generator was shut down, or its filler thread stopped.
    Shutdown,
    /// The worker id could not be assigned.
    WorkerAssignment(String),
    /// The worker table's database failed. `database` names it without any password.
    ///
    /// The driver's own error, with its causes, is the [`source`](std::error::Error::source)
    /// where there is one:
    ///
    /// ```
    /// use ringflake::{DatabaseAssigner, Error, Layout, WorkerIdAssigner};
    /// use std::error::Error as _;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("not-a-database.db");
    /// std::fs::write(&path, "hello, this is not SQLite")?;
    /// let err = DatabaseAssigner::sqlite(&path)?.assign_worker_id(&Layout::default()).unwrap_err();
    /// assert!(matches!(err, Error::Database { transient: false, .. }), "{err:?}");
    /// // SQLite's own words, as the driver (rusqlite) said them.
    /// let driver = err.source().expect("the driver's error").to_string();
    /// assert!(driver.contains("file is not a database"), "{driver}");
    /// assert!(err.to_string().contains(&driver), "the message carries them too: {err}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    Database {
        /// The database, e.g. `sqlite file ringflake.db` or `mysql://user@host:3306/db`.
        database: String,
        /// What went wrong, and how to fix it where known.
        message: String,
        /// Whether retrying may help (unreachable, locked), as opposed to a wrong password or a
        /// missing table.
        transient: bool,
        /// The driver's error and its causes, without passwords, if a driver reported one.
        source: Option<Cause>,
    },
    /// The node's worker lease could not be extended and its horizon is reached: no ID can be
    /// issued until the database answers again.
    LeaseExpired {
        /// The last unix second the lease allowed.
        until: i64,
        /// Why the lease could not be extended.
        reason: String,
    },
    /// This node's clock disagrees with its worker table's database's clock by more than the
    /// bound (the lead cap, at least 10 s): nothing is served until the two agree again. The
    /// database's clock is read every few seconds; see `docs/workers.md`, "The database as a
    /// second clock".
    ///
    /// ```
    /// use ringflake::Error;
    ///
    /// let err = Error::ClockSkew { skew_millis: -60_250, max_millis: 10_000 };
    /// assert_eq!(
    ///     err.to_string(),
    ///     "clock skew: this node's clock is 60.250 s behind the database's, beyond the bound \
    ///      of 10 s: no ID is served until the two agree (fix the node's time synchronisation)"
    /// );
    /// ```
    ClockSkew {
        /// This node's clock minus the database's, in milliseconds (negative: behind).
        skew_millis: i64,
        /// The bound, in milliseconds.
        max_millis: u64,
    },
    /// The worker id's registry (a ZooKeeper ensemble) has not answered this node for a third of
    /// its session timeout: the session may expire and the id go to another node before this
    /// node could tell, so nothing is served until the registry answers again. The lease still
    /// holds: nothing is lost, and the same worker id serves on afterwards.
    ///
    /// ```
    /// use ringflake::Error;
    ///
    /// let err = Error::Fenced { worker_id: 7, reason: "no answer for 3.4 s".into() };
    /// assert_eq!(
    ///     err.to_string(),
    ///     "worker id 7 fenced: no answer for 3.4 s; no ID is served until the registry \
    ///      answers again"
    /// );
    /// ```
    Fenced {
        /// The worker id held.
        worker_id: u64,
        /// Which registry, and how long it has not answered.
        reason: String,
    },
    /// A thread ringflake needs could not be started: the operating system refused it (too many
    /// threads, no memory). Its error is the [`source`](std::error::Error::source).
    ///
    /// ```
    /// use ringflake::Error;
    /// use std::error::Error as _;
    /// use std::io;
    ///
    /// let refused = io::Error::new(io::ErrorKind::OutOfMemory, "no memory for a stack");
    /// let err = Error::ThreadSpawn { thread: "ringflake-lease".into(), source: refused.into() };
    /// assert_eq!(err.to_string(), "cannot start thread ringflake-lease: no memory for a stack");
    /// let source = err.source().and_then(|s| s.downcast_ref::<ringflake::IoError>()).unwrap();
    /// assert_eq!(source.kind(), io::ErrorKind::OutOfMemory);
    /// ```
    ThreadSpawn {
        /// The thread's name, e.g. `ringflake-lease`.
        thread: String,
        /// Why the operating system refused.
        source: IoError,
    },
    /// The Prometheus exporter could not be started (feature `metrics`).
    Exporter {
        /// Where it was to serve `/metrics`, e.g. `127.0.0.1:9464`; `recorder` when only the
        /// recorder was to be installed (`install_prometheus_recorder`).
        address: String,
        /// What went wrong, and how to fix it.
        message: String,
    },
    /// No epoch makes every ID of a layout sort above an existing ID: the ID is at or above the
    /// first ID of the layout's last second ([`plan::epoch_above`](crate::plan::epoch_above)).
    AboveUnreachable {
        /// The existing ID.
        id: u64,
        /// The lowest ID the layout cannot get above: `max_delta << (worker_bits + seq_bits)`.
        limit: u64,
        /// Width of the layout's time field (more time bits raise the limit).
        time_bits: u32,
    },
    /// A [`RemoteGenerator`](crate::RemoteGenerator) (feature `client`) has no ID to hand out:
    /// its buffer is empty and the service cannot be reached, or sent nothing in time. The
    /// client goes on trying in the background; a later take may succeed.
    ///
    /// ```
    /// let err = ringflake::Error::RemoteUnavailable {
    ///     endpoint: "http://ids:8080".into(),
    ///     reason: "connection refused".into(),
    /// };
    /// assert_eq!(
    ///     err.to_string(),
    ///     "no ID from http://ids:8080: the local buffer is empty and the service is unavailable \
    ///      (connection refused); retrying in the background"
    /// );
    /// ```
    RemoteUnavailable {
        /// The service's address, as given to the client.
        endpoint: String,
        /// Why, in the service's or the network's words.
        reason: String,
    },
    /// A remote ID service refused the client's settings: an unknown generator, a missing or
    /// wrong token, an invalid argument. Retrying with the same settings cannot help.
    ///
    /// ```
    /// let err = ringflake::Error::RemoteRefused {
    ///     endpoint: "http://ids:8080".into(),
    ///     code: "UNAUTHENTICATED".into(),
    ///     message: "missing bearer token".into(),
    /// };
    /// assert_eq!(err.to_string(), "http://ids:8080 refused: UNAUTHENTICATED: missing bearer token");
    /// ```
    RemoteRefused {
        /// The service's address, as given to the client.
        endpoint: String,
        /// The gRPC status code, e.g. `UNAUTHENTICATED`, `NOT_FOUND`.
        code: String,
        /// The service's message.
        message: String,
    },
    /// A generator's first ID would not sort above the ID it must stay above
    /// ([`CachedBuilder::above`](crate::CachedBuilder::above)).
    NotAbove {
        /// The ID every new ID must sort above.
        above: u64,
        /// The first ID the generator would issue.
        first_id: u64,
        /// How many seconds, at least, the epoch must move back for it to sort above.
        epoch_back_seconds: u64,
    },
    /// A time unit other than `1s`, `10ms` and `1ms`.
    UnknownTimeUnit {
        /// The text that was refused.
        input: String,
    },
    /// A layout name that is not one of the presets.
    UnknownLayout {
        /// The name that was refused.
        name: String,
        /// The presets' names, comma-separated.
        known: &'static str,
    },
    /// An epoch that does not start a tick of the layout's time unit.
    EpochNotOnTick {
        /// The refused epoch, in unix milliseconds.
        epoch_millis: i64,
        /// The unit's length in milliseconds.
        tick_millis: u64,
    },
    /// An ID with bits set above the layout's widths (a layout narrower than 63 bits).
    IdOutOfRange {
        /// The refused ID.
        id: u64,
        /// The largest ID of the layout.
        max: u64,
    },
    /// A layout this generator cannot make IDs with.
    UnsupportedLayout {
        /// Why, and what can.
        reason: &'static str,
    },
    /// A business tag of a [`SegmentGenerator`](crate::SegmentGenerator) (feature `segment`):
    /// unknown, removed, refused, or not ready within the wait bound.
    Segment(crate::SegmentError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidBitWidths {
                time_bits,
                worker_bits,
                seq_bits,
            } => {
                let sum = u64::from(*time_bits) + u64::from(*worker_bits) + u64::from(*seq_bits);
                if *time_bits == 0 || *worker_bits == 0 || *seq_bits == 0 {
                    write!(
                        f,
                        "invalid bit widths: time {time_bits}, worker {worker_bits}, sequence {seq_bits}: every field needs at least 1 bit"
                    )
                } else if sum > 64 {
                    write!(
                        f,
                        "invalid bit widths: time {time_bits} + worker {worker_bits} + sequence {seq_bits} = {sum}, expected 63 (at most 64 for Layout::with_unit)"
                    )
                } else {
                    write!(
                        f,
                        "invalid bit widths: time {time_bits} + worker {worker_bits} + sequence {seq_bits} = {sum}, expected 63"
                    )
                }
            }
            Error::InvalidEpoch { input, reason } => {
                write!(f, "invalid epoch {input:?}: {reason}")
            }
            Error::EpochInFuture {
                epoch_seconds,
                now_seconds,
            } => write!(
                f,
                "epoch {epoch_seconds} (unix seconds) is in the future: now is {now_seconds}"
            ),
            Error::DeltaOutOfRange { delta, max } => {
                write!(f, "time delta {delta} s out of range: max is {max}")
            }
            Error::WorkerIdOutOfRange { worker_id, max } => {
                write!(f, "worker id {worker_id} exceeds the max {max}")
            }
            Error::SequenceOutOfRange { sequence, max } => {
                write!(f, "sequence {sequence} exceeds the max {max}")
            }
            Error::NegativeId { id } => write!(
                f,
                "id {} has the sign bit set: expected at most {}",
                *id as i64,
                i64::MAX
            ),
            Error::UnknownTimeUnit { input } => {
                write!(f, "unknown time unit {input:?}: expected 1s, 10ms or 1ms")
            }
            Error::UnknownLayout { name, known } => {
                write!(f, "unknown layout {name:?}: expected one of {known}")
            }
            Error::EpochNotOnTick {
                epoch_millis,
                tick_millis,
            } => write!(
                f,
                "epoch {epoch_millis} (unix ms) does not start a tick: expected a multiple of {tick_millis} ms"
            ),
            Error::IdOutOfRange { id, max } => {
                write!(f, "id {id} does not fit the layout: expected at most {max}")
            }
            Error::UnsupportedLayout { reason } => write!(f, "unsupported layout: {reason}"),
            Error::IdText(e) => e.fmt(f),
            Error::Segment(e) => e.fmt(f),
            Error::IdKey { path, reason } => write!(f, "ID key {path}: {reason}"),
            Error::TimestampOutOfRange { seconds } => {
                write!(
                    f,
                    "timestamp {seconds} (unix seconds) cannot be rendered as a date"
                )
            }
            Error::TimeBitsExhausted {
                delta,
                max,
                last_valid,
            } => write!(
                f,
                "time bits exhausted: second {delta} since the epoch exceeds the max {max} (last valid second {last_valid}); configure a later epoch or more time bits"
            ),
            Error::ClockMovedBackwards { seconds } => {
                write!(f, "Clock moved backwards. Refusing for {seconds} seconds")
            }
            Error::LeadLimitReached { max_lead } => write!(
                f,
                "lead limit reached: the generator may borrow at most {max_lead} s ahead of the clock"
            ),
            Error::BatchTooLarge { count, max } => write!(
                f,
                "batch of {count} IDs refused: the lead cap allows at most {max} IDs at once                  ((max_lead + 1) x 2^seq_bits); ask for fewer, or raise max_lead"
            ),
            Error::StateFile { path, reason } => write!(f, "state file {path}: {reason}"),
            Error::InvalidConfig {
                name,
                value,
                allowed,
            } => write!(f, "invalid {name} {value}: allowed {allowed}"),
            Error::TimeZone { setting, reason } => write!(f, "time zone {setting}: {reason}"),
            Error::Shutdown => write!(f, "generator shut down: its filler thread is not running"),
            Error::WorkerAssignment(msg) => write!(f, "worker id assignment failed: {msg}"),
            Error::Database {
                database, message, ..
            } => write!(f, "database {database}: {message}"),
            Error::LeaseExpired { until, reason } => write!(
                f,
                "worker lease expired at {}: {reason}",
                crate::clock::rfc3339(*until)
            ),
            Error::Fenced { worker_id, reason } => write!(
                f,
                "worker id {worker_id} fenced: {reason}; no ID is served until the registry \
                 answers again"
            ),
            Error::ClockSkew {
                skew_millis,
                max_millis,
            } => write!(
                f,
                "clock skew: this node's clock is {}.{:03} s {} the database's, beyond the bound \
                 of {} s: no ID is served until the two agree (fix the node's time \
                 synchronisation)",
                skew_millis.unsigned_abs() / 1000,
                skew_millis.unsigned_abs() % 1000,
                if *skew_millis >= 0 {
                    "ahead of"
                } else {
                    "behind"
                },
                max_millis / 1000
            ),
            Error::AboveUnreachable {
                id,
                limit,
                time_bits,
            } => write!(
                f,
                "ID {id} is too high for a layout with {time_bits} time bits: no epoch makes its \
                 IDs sort above an ID at or above {limit}, the first ID of its last second; more \
                 time bits raise that limit"
            ),
            Error::RemoteUnavailable { endpoint, reason } => write!(
                f,
                "no ID from {endpoint}: the local buffer is empty and the service is unavailable \
                 ({reason}); retrying in the background"
            ),
            Error::RemoteRefused {
                endpoint,
                code,
                message,
            } => write!(f, "{endpoint} refused: {code}: {message}"),
            Error::NotAbove {
                above,
                first_id,
                epoch_back_seconds,
            } => write!(
                f,
                "the first ID this generator would issue, {first_id}, does not sort above the \
                 existing ID {above}: move the epoch back by at least {epoch_back_seconds} \
                 seconds (`ringflake layout --above {above}` proposes one)"
            ),
            Error::Exporter { address, message } => {
                write!(f, "metrics exporter on {address}: {message}")
            }
            Error::ThreadSpawn { thread, source } => {
                write!(f, "cannot start thread {thread}: {source}")
            }
        }
    }
}

impl From<crate::IdTextError> for Error {
    fn from(e: crate::IdTextError) -> Self {
        Error::IdText(e)
    }
}

impl From<crate::SegmentError> for Error {
    fn from(e: crate::SegmentError) -> Self {
        Error::Segment(e)
    }
}

impl Error {
    /// The error for the thread named `thread` that could not be started.
    pub(crate) fn thread_spawn(thread: &str, source: io::Error) -> Error {
        Error::ThreadSpawn {
            thread: thread.to_string(),
            source: source.into(),
        }
    }
}

impl std::error::Error for Error {
    /// The underlying error where there is one: what the operating system said for
    /// [`Error::ThreadSpawn`], what the database driver said for [`Error::Database`]. The other
    /// variants carry their cause in their message.
    ///
    /// ```
    /// use ringflake::{Error, Layout};
    /// use std::error::Error as _;
    ///
    /// let err = Layout::new(30, 20, 12, 0).unwrap_err();
    /// assert!(err.source().is_none());
    /// ```
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::ThreadSpawn { source, .. } => Some(source),
            Error::IdText(e) => Some(e),
            Error::Segment(e) => Some(e),
            Error::Database {
                source: Some(source),
                ..
            } => Some(source),
            _ => None,
        }
    }
}

/// An underlying error kept inside an [`Error`] as text: what a database driver said, and what
/// caused that in turn, each level its own [`source`](std::error::Error::source), so that a log
/// line can show the driver's own words while `Error` stays `Clone` and `PartialEq` (a driver's
/// error is neither). Passwords are removed from the text when ringflake captures it.
///
/// ```
/// use ringflake::Cause;
/// use std::error::Error as _;
/// use std::io;
///
/// let refused = io::Error::new(io::ErrorKind::ConnectionRefused, "connection refused");
/// let cause = Cause::from_error(&Wrapped(refused));
/// assert_eq!(cause.to_string(), "cannot connect");
/// assert_eq!(cause.source().unwrap().to_string(), "connection refused");
///
/// #[derive(Debug)]
/// struct Wrapped(io::Error);
/// impl std::fmt::Display for Wrapped {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("cannot connect")
///     }
/// }
/// impl std::error::Error for Wrapped {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    message: String,
    source: Option<Box<Cause>>,
}

/// The deepest chain of causes kept: a driver's error is a few levels deep.
const MAX_CAUSES: usize = 16;

impl Cause {
    /// A cause with this message and none behind it.
    ///
    /// ```
    /// use std::error::Error as _;
    ///
    /// let cause = ringflake::Cause::new("connection reset by peer");
    /// assert_eq!(cause.to_string(), "connection reset by peer");
    /// assert!(cause.source().is_none());
    /// ```
    pub fn new(message: impl Into<String>) -> Cause {
        Cause {
            message: message.into(),
            source: None,
        }
    }

    /// The text of `error` and of each of its sources, in order (at most 16 levels).
    ///
    /// ```
    /// use std::error::Error as _;
    ///
    /// let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
    /// let cause = ringflake::Cause::from_error(&io);
    /// assert_eq!(cause.to_string(), io.to_string());
    /// assert!(cause.source().is_none());
    /// ```
    pub fn from_error(error: &(dyn std::error::Error + 'static)) -> Cause {
        Cause::capture(error, &|text: &str| text.to_string())
    }

    /// As [`from_error`](Self::from_error), each level's text passed through `clean` (which
    /// removes passwords).
    pub(crate) fn capture(
        error: &(dyn std::error::Error + 'static),
        clean: &dyn Fn(&str) -> String,
    ) -> Cause {
        let mut levels = Vec::new();
        let mut next = Some(error);
        while let Some(e) = next
            && levels.len() < MAX_CAUSES
        {
            levels.push(clean(&e.to_string()));
            next = e.source();
        }
        let mut cause: Option<Box<Cause>> = None;
        for message in levels.into_iter().rev() {
            cause = Some(Box::new(Cause {
                message,
                source: cause,
            }));
        }
        cause.map_or_else(|| Cause::new(""), |c| *c)
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// What a [`std::io::Error`] said, kept inside an [`Error`]: its kind and its message, so that
/// `Error` stays `Clone`, `PartialEq` and unwind-safe (an `io::Error` is none of these).
///
/// ```
/// use ringflake::IoError;
/// use std::io;
///
/// let e = IoError::from(io::Error::new(io::ErrorKind::OutOfMemory, "no memory"));
/// assert_eq!(e.kind(), io::ErrorKind::OutOfMemory);
/// assert_eq!(e.to_string(), "no memory");
/// assert_ne!(e, IoError::from(io::Error::other("no memory")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoError {
    kind: io::ErrorKind,
    message: String,
}

impl IoError {
    /// The error's kind.
    ///
    /// ```
    /// use std::io;
    ///
    /// let e = ringflake::IoError::from(io::Error::from(io::ErrorKind::WouldBlock));
    /// assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    /// ```
    pub fn kind(&self) -> io::ErrorKind {
        self.kind
    }
}

impl From<io::Error> for IoError {
    fn from(e: io::Error) -> Self {
        IoError {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for IoError {}
