//! How a node describes itself in its worker-table row (`HOST_NAME`, `PORT`, `TYPE`,
//! `LAUNCH_DATE`), as UidGenerator's `DisposableWorkerIdAssigner` does, and the one lookup of this
//! host's name.

use crate::{Clock, SystemClock};

/// How a node describes itself in a row, as UidGenerator does.
///
/// ```
/// use ringflake::NodeInfo;
///
/// let node = NodeInfo::detect();
/// if node.node_type == 2 {
///     // ACTUAL: PORT is `<epoch millis>-<random>`, different at every boot.
///     let (millis, random) = node.port.split_once('-').unwrap();
///     assert!(millis.parse::<i64>().unwrap() > 1_700_000_000_000);
///     assert!(random.parse::<u32>().unwrap() < 100_000);
/// }
/// assert_eq!(node.launch_date.len(), "yyyy-MM-dd".len());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// `HOST_NAME`: `JPAAS_HOST` in a container, else the host's address.
    pub host_name: String,
    /// `PORT`: `JPAAS_HTTP_PORT` (or `JPAAS_HOST_PORT_8080`) in a container, else
    /// `<epoch millis>-<random 0..99999>`.
    pub port: String,
    /// `TYPE`: 1 = CONTAINER, 2 = ACTUAL.
    pub node_type: i32,
    /// `LAUNCH_DATE`, `yyyy-MM-dd` in the local time zone.
    pub launch_date: String,
}

impl NodeInfo {
    /// Describes this process as UidGenerator's `DisposableWorkerIdAssigner` does.
    ///
    /// ```
    /// let node = ringflake::NodeInfo::detect();
    /// assert!(node.node_type == 1 || node.node_type == 2);
    /// assert_eq!(node.launch_date.len(), 10);
    /// ```
    pub fn detect() -> NodeInfo {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        // The local date, with the zone read within bounds (`TZ=/dev/zero` must not hang a boot):
        // a zone that cannot be read dates the row in UTC, as jiff's `Zoned::now` would.
        let zone = crate::system_time_zone().unwrap_or(jiff::tz::TimeZone::UTC);
        let launch_date = jiff::Timestamp::now().to_zoned(zone).date().to_string();
        if let Some(host) = env("JPAAS_HOST") {
            let port = env("JPAAS_HTTP_PORT")
                .or_else(|| env("JPAAS_HOST_PORT_8080"))
                .unwrap_or_default();
            return NodeInfo {
                host_name: host,
                port,
                node_type: 1,
                launch_date,
            };
        }
        let millis = SystemClock.now_millis();
        NodeInfo {
            host_name: local_address(),
            port: format!("{millis}-{}", random_below(100_000)),
            node_type: 2,
            launch_date,
        }
    }
}

/// This host's name: the `HOSTNAME` variable, else `/etc/hostname`, trimmed; `None` if neither
/// gives one.
pub(crate) fn host_name() -> Option<String> {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

/// The first non-loopback address of this host's name, else the name itself.
fn local_address() -> String {
    use std::net::ToSocketAddrs;
    let name = host_name().unwrap_or_else(|| "localhost".to_string());
    (name.as_str(), 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.find(|a| !a.ip().is_loopback() && a.is_ipv4()))
        .map(|a| a.ip().to_string())
        .unwrap_or(name)
}

/// A random number below `n`, from the standard library's randomly seeded hasher.
fn random_below(n: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() % n
}
