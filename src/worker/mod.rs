//! Where a generator's worker id comes from.
//!
//! UidGenerator takes a new worker id from its `WORKER_NODE` table on every boot; ringflake does
//! the same behind [`WorkerIdAssigner`], with database assigners in their own modules and two
//! static sources here: a fixed id (configuration) and a Kubernetes StatefulSet ordinal.

use crate::{Error, Layout};

#[cfg(feature = "mysql")]
pub(crate) mod mysql;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite;
pub(crate) mod table;

pub(crate) mod lease;

pub use lease::Lease;

/// A source of worker ids, asked once per generator boot.
///
/// # Examples
///
/// ```
/// use ringflake::{FixedWorkerId, Layout, WorkerIdAssigner};
///
/// let id = FixedWorkerId(7).assign_worker_id(&Layout::default())?;
/// assert_eq!(id, 7);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub trait WorkerIdAssigner {
    /// Returns the worker id for this boot, which must fit `layout`'s worker field.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerIdOutOfRange`] when the id does not fit, or an assigner-specific error.
    ///
    /// ```
    /// use ringflake::{Error, FixedWorkerId, Layout, WorkerIdAssigner};
    ///
    /// let three_bits = Layout::new(40, 3, 20, ringflake::DEFAULT_EPOCH_SECONDS)?;
    /// assert_eq!(FixedWorkerId(7).assign_worker_id(&three_bits)?, 7);
    /// let err = FixedWorkerId(8).assign_worker_id(&three_bits).unwrap_err();
    /// assert!(matches!(err, Error::WorkerIdOutOfRange { worker_id: 8, max: 7 }), "{err}");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error>;

    /// Returns the worker id with what the generator must respect for it: a floor for its
    /// seconds and a lease to keep extended. The default has neither.
    ///
    /// # Errors
    ///
    /// As [`assign_worker_id`](Self::assign_worker_id).
    ///
    /// ```
    /// use ringflake::{FixedWorkerId, Layout, WorkerIdAssigner};
    /// let a = FixedWorkerId(2).assign(&Layout::default())?;
    /// assert_eq!(a.worker_id, 2);
    /// assert!(a.lease.is_none());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    fn assign(&self, layout: &Layout) -> Result<Assignment, Error> {
        self.assign_worker_id(layout).map(Assignment::fixed)
    }
}

/// A worker id fixed by configuration.
///
/// ```
/// use ringflake::{FixedWorkerId, Layout, WorkerIdAssigner};
///
/// let layout = Layout::new(31, 3, 29, 0)?;
/// assert!(FixedWorkerId(8).assign_worker_id(&layout).is_err());
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedWorkerId(pub u64);

impl FixedWorkerId {
    /// Reads the worker id from the environment variable `var`.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerAssignment`] naming the variable if it is unset or not a number.
    ///
    /// ```
    /// use ringflake::FixedWorkerId;
    ///
    /// assert!(FixedWorkerId::from_env("RINGFLAKE_SURELY_UNSET_VARIABLE").is_err());
    /// ```
    pub fn from_env(var: &str) -> Result<Self, Error> {
        let value = std::env::var(var).map_err(|_| {
            Error::WorkerAssignment(format!("environment variable {var} is not set"))
        })?;
        value.trim().parse::<u64>().map(FixedWorkerId).map_err(|_| {
            Error::WorkerAssignment(format!(
                "environment variable {var}={value:?} is not a non-negative integer"
            ))
        })
    }
}

impl WorkerIdAssigner for FixedWorkerId {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error> {
        check_fits(self.0, layout)
    }
}

/// The ordinal of a Kubernetes StatefulSet pod, read from its hostname (`web-3` → 3), plus an
/// offset so several StatefulSets can share one worker-id space.
///
/// ```
/// use ringflake::{Layout, StatefulSetOrdinal, WorkerIdAssigner};
///
/// let a = StatefulSetOrdinal { hostname: "ids-12".into(), offset: 100 };
/// assert_eq!(a.assign_worker_id(&Layout::default())?, 112);
/// let bad = StatefulSetOrdinal { hostname: "ids".into(), offset: 0 };
/// assert!(bad.assign_worker_id(&Layout::default()).is_err());
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatefulSetOrdinal {
    /// The pod's hostname, `<statefulset>-<ordinal>`.
    pub hostname: String,
    /// Added to the ordinal.
    pub offset: u64,
}

impl StatefulSetOrdinal {
    /// Reads the hostname from the `HOSTNAME` variable, else `/etc/hostname`.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerAssignment`] if neither gives a hostname.
    ///
    /// ```
    /// // On any machine this either finds a hostname or explains why not.
    /// match ringflake::StatefulSetOrdinal::from_hostname(0) {
    ///     Ok(a) => assert!(!a.hostname.is_empty()),
    ///     Err(e) => assert!(e.to_string().contains("hostname")),
    /// }
    /// ```
    pub fn from_hostname(offset: u64) -> Result<Self, Error> {
        let hostname = std::env::var("HOSTNAME")
            .ok()
            .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .ok_or_else(|| {
                Error::WorkerAssignment(
                    "no hostname: HOSTNAME unset and /etc/hostname empty".into(),
                )
            })?;
        Ok(StatefulSetOrdinal { hostname, offset })
    }
}

impl WorkerIdAssigner for StatefulSetOrdinal {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error> {
        let ordinal = self
            .hostname
            .rsplit_once('-')
            .and_then(|(_, n)| n.parse::<u64>().ok())
            .ok_or_else(|| {
                Error::WorkerAssignment(format!(
                    "hostname {:?} does not end in -<ordinal> as a StatefulSet pod's does",
                    self.hostname
                ))
            })?;
        let id = ordinal
            .checked_add(self.offset)
            .ok_or(Error::WorkerIdOutOfRange {
                worker_id: u64::MAX,
                max: layout.max_worker_id(),
            })?;
        check_fits(id, layout)
    }
}

/// What a boot gets from a [`WorkerIdAssigner`].
///
/// ```
/// use ringflake::Assignment;
/// let a = Assignment::fixed(4);
/// assert_eq!((a.worker_id, a.not_before, a.lease.is_none()), (4, None, true));
/// ```
#[derive(Debug)]
pub struct Assignment {
    /// The worker id.
    pub worker_id: u64,
    /// IDs of this boot must carry seconds strictly after this unix second: the lease of this
    /// host's previous run (monotonic restarts) or of the recycled id's previous holder.
    pub not_before: Option<i64>,
    /// The lease to keep extended while running, if the assigner uses leases.
    pub lease: Option<Box<dyn Lease>>,
}

impl Assignment {
    /// A bare worker id: no floor, no lease.
    ///
    /// ```
    /// assert_eq!(ringflake::Assignment::fixed(1).worker_id, 1);
    /// ```
    pub fn fixed(worker_id: u64) -> Self {
        Assignment {
            worker_id,
            not_before: None,
            lease: None,
        }
    }
}

/// Checks that `worker_id` fits the layout.
pub(crate) fn check_fits(worker_id: u64, layout: &Layout) -> Result<u64, Error> {
    if worker_id > layout.max_worker_id() {
        return Err(Error::WorkerIdOutOfRange {
            worker_id,
            max: layout.max_worker_id(),
        });
    }
    Ok(worker_id)
}

/// How long a server client waits for a TCP connection: the URL's own setting if it has one, else
/// the call timeout but at most 10 s.
#[cfg(any(feature = "mysql", feature = "postgres"))]
pub(crate) fn connect_timeout(
    from_url: Option<std::time::Duration>,
    timeout: std::time::Duration,
) -> std::time::Duration {
    from_url.unwrap_or(timeout.min(std::time::Duration::from_secs(10)))
}

/// The message of a call that timed out: `what` failed, after `timeout`, the connection dropped.
#[cfg(any(feature = "mysql", feature = "postgres"))]
pub(crate) fn no_answer(what: &str, timeout: std::time::Duration) -> String {
    format!("{what}: no answer within {timeout:?}, connection dropped")
}

/// The passwords a database URL may carry, raw and percent-decoded: `user:secret@` in the
/// authority and `password=secret` as a parameter (URL query or PostgreSQL key=value form).
#[cfg(any(feature = "mysql", feature = "postgres"))]
pub(crate) fn url_passwords(url: &str) -> Vec<String> {
    let mut found = Vec::new();
    if let Some((_, rest)) = url.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if let Some((userinfo, _)) = authority.rsplit_once('@')
            && let Some((_, pass)) = userinfo.split_once(':')
        {
            found.push(pass.to_string());
        }
    }
    let mut rest = url;
    while let Some(at) = rest.find("password=") {
        rest = &rest[at + "password=".len()..];
        let value = rest
            .split(|c: char| c == '&' || c.is_whitespace())
            .next()
            .unwrap_or("");
        found.push(value.trim_matches('\'').to_string());
    }
    let decoded: Vec<String> = found.iter().map(|p| percent_decode(p)).collect();
    found.extend(decoded);
    found.retain(|p| !p.is_empty());
    found.sort();
    found.dedup();
    found
}

/// `text` with every occurrence of each secret replaced by `***`.
#[cfg(any(feature = "mysql", feature = "postgres"))]
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    // Longest first, so a secret that contains another is removed whole.
    let mut secrets: Vec<&String> = secrets.iter().filter(|s| !s.is_empty()).collect();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for secret in secrets {
        out = out.replace(secret.as_str(), "***");
    }
    out
}

#[cfg(any(feature = "mysql", feature = "postgres"))]
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(all(test, any(feature = "mysql", feature = "postgres")))]
mod tests {
    use super::{redact, url_passwords};

    #[test]
    fn passwords_are_found_and_redacted() {
        let url = "mysql://app:s%40cret@db:3306/ids";
        let secrets = url_passwords(url);
        assert_eq!(secrets, vec!["s%40cret".to_string(), "s@cret".to_string()]);
        assert_eq!(
            redact("bad s@cret and s%40cret", &secrets),
            "bad *** and ***"
        );
        let kv = "host=db user=app password='pw1' dbname=ids";
        assert_eq!(url_passwords(kv), vec!["pw1".to_string()]);
        let query = "postgres://db/ids?user=app&password=pw2";
        assert_eq!(url_passwords(query), vec!["pw2".to_string()]);
        assert!(url_passwords("postgres://app@db/ids").is_empty());
    }
}
