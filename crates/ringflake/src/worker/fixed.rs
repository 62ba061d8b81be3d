//! Worker ids that need no database: one fixed by configuration, and a Kubernetes StatefulSet
//! pod's ordinal.

use super::assigner::{WorkerIdAssigner, check_fits};
use super::node::host_name;
use crate::{Error, Layout};

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
        let hostname = host_name().ok_or_else(|| {
            Error::WorkerAssignment("no hostname: HOSTNAME unset and /etc/hostname empty".into())
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
