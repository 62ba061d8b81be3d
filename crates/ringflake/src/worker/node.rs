//! How a node describes itself in its worker-table row (`HOST_NAME`, `PORT`, `TYPE`,
//! `LAUNCH_DATE`), as UidGenerator's `DisposableWorkerIdAssigner` does, and the one lookup of this
//! host's name.

use crate::{Clock, SystemClock};
use std::net::IpAddr;

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
    /// `HOST_NAME`: `JPAAS_HOST` in a container, else this host's address as UidGenerator's
    /// `NetUtils` writes it: the first address of the first non-loopback network interface, in
    /// the order Java lists them, that is neither loopback, link-local nor the wildcard
    /// (`192.0.2.2`, or an IPv6 address in Java's form, `fd00:0:0:0:0:0:0:2%eth0`). Where Java
    /// would find none and fail to start, the first non-loopback IPv4 address the host name
    /// resolves to, else the host name.
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

/// This host's `HOST_NAME`: Java's rule over this host's interfaces, else its name's address.
fn local_address() -> String {
    use std::net::ToSocketAddrs;
    let name = host_name().unwrap_or_else(|| "localhost".to_string());
    let found = interfaces();
    row_host_name(&found, &name, || {
        (name.as_str(), 0)
            .to_socket_addrs()
            .map(|addrs| addrs.map(|a| a.ip()).collect())
            .unwrap_or_default()
    })
}

/// One address of one network interface, as Java's `NetworkInterface` enumeration discovers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Discovered {
    /// The interface's name as the kernel reports it with the address; an IPv4 alias's label
    /// (`eth0:1`) belongs to its interface (`eth0`), as in Java.
    pub name: String,
    /// Whether the interface has the `IFF_LOOPBACK` flag (Java's `isLoopback`).
    pub loopback: bool,
    /// The address.
    pub addr: IpAddr,
    /// An IPv6 address's scope id as Java receives it (on Linux the interface index from
    /// `/proc/net/if_inet6`, never 0); Java appends `%<interface>` to an address with one.
    pub scope_id: u32,
}

/// `HOST_NAME` from this host's interfaces, as UidGenerator's `NetUtils.getLocalAddress`, else
/// (where Java finds no address and fails to start) the first non-loopback IPv4 address of the
/// host name (`resolve`, called only then), else the name itself.
///
/// `found` lists addresses in the order Java's native enumeration discovers them: the IPv4
/// addresses (`SIOCGIFCONF`'s order, which is `getifaddrs`'s), then the IPv6 ones (on Linux in
/// `/proc/net/if_inet6`'s order). Java puts each new interface, and each new address of an
/// interface, at the front of its list, so it walks both in reverse: the interface discovered
/// last first, and within it the address discovered last first.
pub(crate) fn row_host_name(
    found: &[Discovered],
    name: &str,
    resolve: impl FnOnce() -> Vec<IpAddr>,
) -> String {
    java_local_address(found)
        .or_else(|| {
            resolve()
                .into_iter()
                .find(|ip| ip.is_ipv4() && !ip.is_loopback())
                .map(|ip| ip.to_string())
        })
        .unwrap_or_else(|| name.to_string())
}

/// Java's `NetUtils.getLocalInetAddress().getHostAddress()` over `found` (see [`row_host_name`]);
/// `None` where Java throws "No validated local address!".
pub(crate) fn java_local_address(found: &[Discovered]) -> Option<String> {
    java_interfaces(found).into_iter().find_map(|(name, own)| {
        // `isLoopback` is the interface's flag, the same on every address of it.
        if own.iter().any(|d| d.loopback) {
            return None;
        }
        own.iter()
            .find(|d| java_valid(d.addr))
            .map(|d| java_host_address(d.addr, d.scope_id, &name))
    })
}

/// `found` grouped by interface (an alias `eth0:1` is `eth0`), in the order Java lists them:
/// interfaces by their first discovery, latest first, and each one's addresses latest first.
fn java_interfaces(found: &[Discovered]) -> Vec<(String, Vec<&Discovered>)> {
    let parent = |d: &Discovered| d.name.split(':').next().unwrap_or("").to_string();
    let mut names: Vec<String> = Vec::new();
    for d in found {
        let p = parent(d);
        if !names.contains(&p) {
            names.push(p);
        }
    }
    names
        .into_iter()
        .rev()
        .map(|name| {
            let own = found.iter().filter(|d| parent(d) == name).rev().collect();
            (name, own)
        })
        .collect()
}

/// The ip Leaf's `Utils.getIp()` takes: the first IPv4 address that is not loopback (127/8), in
/// the order Java lists this host's interfaces and their addresses (see [`row_host_name`]);
/// `None` where there is none (Leaf then uses "").
#[cfg_attr(not(feature = "zookeeper"), allow(dead_code))]
pub(crate) fn leaf_ip() -> Option<String> {
    leaf_ip_of(&interfaces())
}

/// [`leaf_ip`] over `found`.
fn leaf_ip_of(found: &[Discovered]) -> Option<String> {
    java_interfaces(found).into_iter().find_map(|(_, own)| {
        own.iter().find_map(|d| match d.addr {
            IpAddr::V4(a) if a.octets()[0] != 127 => Some(a.to_string()),
            _ => None,
        })
    })
}

/// Not link-local, loopback or the wildcard: Java's `isLinkLocalAddress`, `isLoopbackAddress`,
/// `isAnyLocalAddress` (IPv4 169.254/16, 127/8, 0.0.0.0; IPv6 fe80::/10, ::1, ::).
fn java_valid(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => !(a.is_link_local() || a.octets()[0] == 127 || a.is_unspecified()),
        IpAddr::V6(a) => {
            !((a.segments()[0] & 0xffc0) == 0xfe80 || a.is_loopback() || a.is_unspecified())
        }
    }
}

/// Java's `InetAddress.getHostAddress`: IPv4 dotted; IPv6 as eight groups of lower-case hex
/// without leading zeros and without `::` compression, with `%<interface>` when it has a scope
/// id.
fn java_host_address(addr: IpAddr, scope_id: u32, interface: &str) -> String {
    match addr {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => {
            let groups: Vec<String> = a.segments().iter().map(|g| format!("{g:x}")).collect();
            let mut text = groups.join(":");
            if scope_id != 0 {
                text.push('%');
                text.push_str(interface);
            }
            text
        }
    }
}

/// This host's interface addresses in Java's discovery order (see [`row_host_name`]): IPv4 from
/// `getifaddrs`, IPv6 from `/proc/net/if_inet6` where there is one (Linux, as Java reads them),
/// else from `getifaddrs`. Empty where the system gives none.
#[cfg(unix)]
fn interfaces() -> Vec<Discovered> {
    use nix::net::if_::InterfaceFlags;
    let Ok(addrs) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    let mut v4 = Vec::new();
    let mut v6 = Vec::new();
    let mut loopback = std::collections::HashSet::new();
    for a in addrs {
        let is_loopback = a.flags.contains(InterfaceFlags::IFF_LOOPBACK);
        if is_loopback {
            loopback.insert(a.interface_name.clone());
        }
        let Some(address) = a.address else { continue };
        if let Some(sin) = address.as_sockaddr_in() {
            v4.push(Discovered {
                name: a.interface_name,
                loopback: is_loopback,
                addr: IpAddr::V4(sin.ip()),
                scope_id: 0,
            });
        } else if let Some(sin6) = address.as_sockaddr_in6() {
            v6.push(Discovered {
                name: a.interface_name,
                loopback: is_loopback,
                addr: IpAddr::V6(sin6.ip()),
                scope_id: sin6.scope_id(),
            });
        }
    }
    if let Ok(text) = std::fs::read_to_string("/proc/net/if_inet6") {
        v6 = proc_if_inet6(&text, |name| loopback.contains(name));
    }
    v4.extend(v6);
    v4
}

/// No `getifaddrs`: the host name's address decides.
#[cfg(not(unix))]
fn interfaces() -> Vec<Discovered> {
    Vec::new()
}

/// The IPv6 addresses of Linux's `/proc/net/if_inet6` (`<32 hex digits> <index> <prefix> <scope>
/// <flags> <name>` a line), in its order, each with its interface index as scope id as Java
/// takes it; lines that do not parse are skipped.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn proc_if_inet6(text: &str, loopback: impl Fn(&str) -> bool) -> Vec<Discovered> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 6 || f[0].len() != 32 {
                return None;
            }
            let bits = u128::from_str_radix(f[0], 16).ok()?;
            let index = u32::from_str_radix(f[1], 16).ok()?;
            Some(Discovered {
                name: f[5].to_string(),
                loopback: loopback(f[5]),
                addr: IpAddr::V6(bits.into()),
                scope_id: index,
            })
        })
        .collect()
}

/// A random number below `n` (`n` above 0), from the standard library's randomly seeded hasher:
/// enough for a boot's `PORT` suffix and a waiting boot's jitter.
pub(crate) fn random_below(n: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() % n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(name: &str, loopback: bool, addr: &str) -> Discovered {
        Discovered {
            name: name.into(),
            loopback,
            addr: addr.parse().unwrap(),
            scope_id: 0,
        }
    }

    fn v6(name: &str, loopback: bool, addr: &str, scope_id: u32) -> Discovered {
        Discovered {
            name: name.into(),
            loopback,
            addr: addr.parse().unwrap(),
            scope_id,
        }
    }

    /// `/proc/net/if_inet6` of the build machine, where `java` (OpenJDK 17.0.15) listed
    /// `eth0: fe80:0:0:0:fc:ff:fe00:1%eth0, fd00:0:0:0:0:0:0:2%eth0, 192.0.2.2`, then
    /// `lo: 0:0:0:0:0:0:0:1%lo, 127.0.0.1`, and UidGenerator's rule gave
    /// `fd00:0:0:0:0:0:0:2%eth0`, while the host name `vm` resolves only to 127.0.0.1.
    const BUILD_MACHINE_IF_INET6: &str = "\
fd000000000000000000000000000002 04 40 00 82     eth0
00000000000000000000000000000001 01 80 10 80       lo
fe8000000000000000fc00fffe000001 04 40 20 80     eth0
";

    fn build_machine() -> Vec<Discovered> {
        let mut found = vec![v4("lo", true, "127.0.0.1"), v4("eth0", false, "192.0.2.2")];
        found.extend(proc_if_inet6(BUILD_MACHINE_IF_INET6, |n| n == "lo"));
        found
    }

    #[test]
    fn java_on_the_build_machine() {
        let found = build_machine();
        assert_eq!(
            found[2..],
            [
                v6("eth0", false, "fd00::2", 4),
                v6("lo", true, "::1", 1),
                v6("eth0", false, "fe80::fc:ff:fe00:1", 4),
            ]
        );
        let resolved = || vec!["127.0.0.1".parse().unwrap()];
        assert_eq!(
            row_host_name(&found, "vm", resolved),
            "fd00:0:0:0:0:0:0:2%eth0"
        );
    }

    /// Leaf's `Utils.getIp()`: IPv4 only, loopback addresses skipped (not the interface), in
    /// Java's order.
    #[test]
    fn leaf_ip_is_the_first_non_loopback_ipv4_in_java_order() {
        let found = build_machine();
        assert_eq!(leaf_ip_of(&found).as_deref(), Some("192.0.2.2"));
        let found = [
            v4("lo", true, "127.0.0.1"),
            v4("eth0", false, "192.168.1.5"),
            v4("docker0", false, "172.17.0.1"),
        ];
        assert_eq!(leaf_ip_of(&found).as_deref(), Some("172.17.0.1"));
        assert_eq!(leaf_ip_of(&[v4("lo", true, "127.0.0.1")]), None);
    }

    /// A container with IPv4 and only a link-local IPv6 address: the IPv4 address.
    #[test]
    fn link_local_ipv6_is_skipped() {
        let found = [
            v4("lo", true, "127.0.0.1"),
            v4("eth0", false, "10.1.2.3"),
            v6("eth0", false, "fe80::42:acff:fe11:2", 2),
            v6("lo", true, "::1", 1),
        ];
        assert_eq!(java_local_address(&found).as_deref(), Some("10.1.2.3"));
    }

    /// Java walks interfaces from the last discovered: a Docker bridge created after eth0 wins,
    /// as it does for UidGenerator nodes on Docker hosts; an interface with only link-local,
    /// loopback or wildcard addresses is passed over.
    #[test]
    fn the_last_interface_discovered_comes_first() {
        let found = [
            v4("lo", true, "127.0.0.1"),
            v4("eth0", false, "192.168.1.5"),
            v4("docker0", false, "172.17.0.1"),
        ];
        assert_eq!(java_local_address(&found).as_deref(), Some("172.17.0.1"));
        let found = [
            v4("lo", true, "127.0.0.1"),
            v4("eth0", false, "192.168.1.5"),
            v4("eth1", false, "169.254.3.4"),
            v4("tun0", false, "0.0.0.0"),
            v4("dummy0", false, "127.0.0.2"),
        ];
        assert_eq!(java_local_address(&found).as_deref(), Some("192.168.1.5"));
    }

    /// An alias's label (`eth0:1`) is its interface's address; the address discovered last comes
    /// first, an IPv6 one (discovered after every IPv4 one) before the IPv4 ones.
    #[test]
    fn addresses_in_reverse_discovery_order() {
        let found = [
            v4("eth0", false, "10.0.0.1"),
            v4("eth0:1", false, "10.0.0.2"),
            v4("lo", true, "127.0.0.1"),
        ];
        assert_eq!(java_local_address(&found).as_deref(), Some("10.0.0.2"));
        let found = [
            v4("eth0", false, "10.0.0.1"),
            v6("eth0", false, "2001:db8::1", 2),
            v6("eth0", false, "2001:db8:0:1:0:0:0:ab", 2),
        ];
        assert_eq!(
            java_local_address(&found).as_deref(),
            Some("2001:db8:0:1:0:0:0:ab%eth0")
        );
    }

    /// `getHostAddress` of an IPv6 address: no `::`, no leading zeros, lower case; the interface
    /// only with a scope id (BSD's `getifaddrs` gives none to a global address).
    #[test]
    fn java_ipv6_text() {
        let a = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(
            java_host_address(a("FD00::0002"), 4, "eth0"),
            "fd00:0:0:0:0:0:0:2%eth0"
        );
        assert_eq!(
            java_host_address(a("2001:DB8:85A3::8A2E:370:7334"), 0, "en0"),
            "2001:db8:85a3:0:0:8a2e:370:7334"
        );
        assert_eq!(java_host_address(a("192.0.2.2"), 0, "eth0"), "192.0.2.2");
    }

    /// Where Java finds nothing (and throws "No validated local address!"), the host name's
    /// first non-loopback IPv4 address, else the name; resolution is only tried then.
    #[test]
    fn fallbacks_when_no_interface_qualifies() {
        let only_lo = [v4("lo", true, "127.0.0.1"), v6("lo", true, "::1", 1)];
        assert_eq!(java_local_address(&only_lo), None);
        let resolved = || vec!["127.0.1.1".parse().unwrap(), "10.9.8.7".parse().unwrap()];
        assert_eq!(row_host_name(&only_lo, "box", resolved), "10.9.8.7");
        assert_eq!(
            row_host_name(&only_lo, "box", || vec!["127.0.1.1".parse().unwrap()]),
            "box"
        );
        assert_eq!(row_host_name(&[], "box", Vec::new), "box");
        let found = [v4("eth0", false, "10.0.0.1")];
        assert_eq!(
            row_host_name(&found, "box", || panic!("resolved although eth0 qualifies")),
            "10.0.0.1"
        );
    }

    /// On this machine: HOST_NAME is an address of one of its non-loopback interfaces, in Java's
    /// form, whenever it has one that Java would take.
    #[test]
    fn this_machine() {
        let found = interfaces();
        let host = local_address();
        assert!(host.len() <= 64, "{host}");
        if found.iter().any(|d| !d.loopback && java_valid(d.addr)) {
            let (addr, scope) = host.split_once('%').unwrap_or((&host, ""));
            let addr: IpAddr = addr.parse().unwrap_or_else(|_| panic!("{host}"));
            let d = found
                .iter()
                .find(|d| d.addr == addr)
                .unwrap_or_else(|| panic!("{host} is none of {found:?}"));
            assert!(!d.loopback && java_valid(d.addr), "{d:?}");
            assert_eq!(addr.is_ipv6() && d.scope_id != 0, !scope.is_empty());
        }
    }
}
