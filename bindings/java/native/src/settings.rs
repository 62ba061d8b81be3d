//! The Java builder's settings, as the JNI side receives them: a flat list of `key, value` strings
//! (so that the Java side stays a plain collector and every check lives once, here, next to the
//! crate's own), turned into a layout, a worker source and the generator's options.

use crate::failure::Failure;
use ringflake::{DEFAULT_EPOCH_SECONDS, Layout, LeadPolicy};
use std::path::PathBuf;
use std::time::Duration;

/// Where the worker id comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A fixed id (`workerId`).
    Fixed(u64),
    /// A SQLite file's WORKER_NODE table (`sqlite`).
    Sqlite(PathBuf),
    /// A MariaDB/MySQL WORKER_NODE table (`mysql`, the crate's `mysql://` URL form).
    Mysql(String),
    /// A PostgreSQL WORKER_NODE table (`postgres`, the crate's `postgres://` URL form).
    Postgres(String),
    /// Meituan Leaf's znodes on a ZooKeeper ensemble (`zookeeper`, `zookeeperName`).
    ZooKeeper {
        /// `host:port,host:port`.
        ensemble: String,
        /// Leaf's `leaf.name`.
        name: String,
        /// The port in the znode's name (`ip:port`), Leaf's server port.
        port: Option<u16>,
    },
}

/// Everything the Java builder said, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The ID layout.
    pub layout: Layout,
    /// The worker source.
    pub source: Source,
    /// `stateFile`.
    pub state_file: Option<PathBuf>,
    /// `maxLeadMillis` and `leadPolicy`; `None` inside: unbounded (`maxLeadMillis` = -1).
    pub max_lead: Option<Option<(Duration, LeadPolicy)>>,
    /// `above`.
    pub above: Option<u64>,
    /// `boostPower`.
    pub boost_power: Option<u32>,
    /// `paddingFactor`.
    pub padding_factor: Option<u32>,
    /// `createTable`.
    pub create_table: bool,
    /// `caFile`: the CA of a TLS database server.
    pub ca_file: Option<PathBuf>,
    /// `leaseWindowSeconds`: a database source's lease window (the crate's default unless set).
    pub lease_window: Option<Duration>,
}

/// The keys [`Settings::parse`] knows, for its error message.
const KNOWN: &str = "preset, bits, epochSeconds, workerId, sqlite, mysql, postgres, zookeeper, \
                     zookeeperName, zookeeperPort, stateFile, maxLeadMillis, leadPolicy, above, \
                     boostPower, paddingFactor, createTable, caFile, leaseWindowSeconds";

fn invalid(name: &'static str, value: &str, allowed: &str) -> Failure {
    Failure::config(format!(
        "invalid setting {name} = {value:?}: expected {allowed}"
    ))
}

fn number<T: std::str::FromStr>(
    name: &'static str,
    value: &str,
    allowed: &str,
) -> Result<T, Failure> {
    value.parse().map_err(|_| invalid(name, value, allowed))
}

impl Settings {
    /// Reads `key, value` pairs.
    ///
    /// # Errors
    ///
    /// An unknown key, a value that does not parse, two worker sources or none, a layout the
    /// crate refuses ([`Layout::preset`], [`Layout::new`]).
    pub fn parse(pairs: &[(String, String)]) -> Result<Settings, Failure> {
        let mut preset = None;
        let mut bits = None;
        let mut epoch = None;
        let mut sources = Vec::new();
        let mut zk_name = None;
        let mut zk_port = None;
        let mut s = Settings {
            layout: Layout::default(),
            source: Source::Fixed(0),
            state_file: None,
            max_lead: None,
            above: None,
            boost_power: None,
            padding_factor: None,
            create_table: false,
            ca_file: None,
            lease_window: None,
        };
        let mut lead_millis: Option<i64> = None;
        let mut policy = LeadPolicy::Wait;
        for (key, value) in pairs {
            let v = value.as_str();
            match key.as_str() {
                "preset" => preset = Some(v.to_string()),
                "bits" => {
                    let parts: Vec<&str> = v.split(',').collect();
                    let [t, w, q] = parts[..] else {
                        return Err(invalid("bits", v, "timeBits,workerBits,seqBits"));
                    };
                    let allowed = "three widths adding up to 63";
                    bits = Some((
                        number("bits", t, allowed)?,
                        number("bits", w, allowed)?,
                        number("bits", q, allowed)?,
                    ));
                }
                "epochSeconds" => epoch = Some(number("epochSeconds", v, "unix seconds")?),
                "workerId" => sources.push(Source::Fixed(number("workerId", v, "0 or more")?)),
                "sqlite" => sources.push(Source::Sqlite(PathBuf::from(v))),
                "mysql" => sources.push(Source::Mysql(v.to_string())),
                "postgres" => sources.push(Source::Postgres(v.to_string())),
                "zookeeper" => sources.push(Source::ZooKeeper {
                    ensemble: v.to_string(),
                    name: String::new(),
                    port: None,
                }),
                "zookeeperName" => zk_name = Some(v.to_string()),
                "zookeeperPort" => {
                    zk_port = Some(number("zookeeperPort", v, "a port, 1 to 65535")?)
                }
                "stateFile" => s.state_file = Some(PathBuf::from(v)),
                "maxLeadMillis" => {
                    lead_millis = Some(number("maxLeadMillis", v, "milliseconds, or -1")?)
                }
                "leadPolicy" => {
                    policy = match v {
                        "WAIT" => LeadPolicy::Wait,
                        "FAIL" => LeadPolicy::Fail,
                        _ => return Err(invalid("leadPolicy", v, "WAIT or FAIL")),
                    }
                }
                "above" => s.above = Some(number("above", v, "an ID, 0 or more")?),
                "boostPower" => s.boost_power = Some(number("boostPower", v, "0 or more")?),
                "paddingFactor" => s.padding_factor = Some(number("paddingFactor", v, "0 to 100")?),
                "createTable" => s.create_table = number("createTable", v, "true or false")?,
                "caFile" => s.ca_file = Some(PathBuf::from(v)),
                "leaseWindowSeconds" => {
                    let secs: u64 = number("leaseWindowSeconds", v, "1 or more seconds")?;
                    if secs == 0 {
                        return Err(invalid("leaseWindowSeconds", v, "1 or more seconds"));
                    }
                    s.lease_window = Some(Duration::from_secs(secs));
                }
                other => {
                    return Err(Failure::config(format!(
                        "unknown setting {other:?}: expected one of {KNOWN}"
                    )));
                }
            }
        }
        s.layout = match (preset, bits) {
            (Some(_), Some(_)) => {
                return Err(Failure::config(
                    "both a preset and bit widths: give one layout",
                ));
            }
            (Some(name), None) => {
                if epoch.is_some() {
                    return Err(Failure::config(format!(
                        "a preset ({name}) brings its own epoch: give bit widths to set one"
                    )));
                }
                Layout::preset(&name).map_err(Failure::from)?
            }
            (None, Some((t, w, q))) => Layout::new(t, w, q, epoch.unwrap_or(DEFAULT_EPOCH_SECONDS))
                .map_err(Failure::from)?,
            (None, None) => match epoch {
                Some(e) => Layout::new(31, 10, 22, e).map_err(Failure::from)?,
                None => Layout::default(),
            },
        };
        if sources.len() != 1 {
            return Err(Failure::config(format!(
                "{} worker sources: give exactly one (workerId, sqlite, jdbcUrl or zookeeper)",
                sources.len()
            )));
        }
        s.source = sources.remove(0);
        if let Source::ZooKeeper { name, port, .. } = &mut s.source {
            *name = zk_name.ok_or_else(|| {
                Failure::config("zookeeper needs zookeeperName (Leaf's leaf.name)")
            })?;
            *port = zk_port;
        }
        s.max_lead = match lead_millis {
            None if policy == LeadPolicy::Wait => None,
            None => Some(Some((ringflake::DEFAULT_MAX_LEAD, policy))),
            Some(-1) => Some(None),
            Some(ms) if ms >= 0 => Some(Some((Duration::from_millis(ms as u64), policy))),
            Some(ms) => {
                return Err(invalid(
                    "maxLeadMillis",
                    &ms.to_string(),
                    "0 or more, or -1",
                ));
            }
        };
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(kv: &[(&str, &str)]) -> Vec<(String, String)> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_fixed_id_and_bits() {
        let s = Settings::parse(&pairs(&[
            ("bits", "31,23,9"),
            ("epochSeconds", "1463673600"),
            ("workerId", "7"),
        ]))
        .unwrap();
        assert_eq!(s.layout, Layout::new(31, 23, 9, 1_463_673_600).unwrap());
        assert_eq!(s.source, Source::Fixed(7));
    }

    #[test]
    fn bad_input_names_the_value() {
        let err = Settings::parse(&pairs(&[("workerId", "x")])).unwrap_err();
        assert!(err.to_string().contains(r#"workerId = "x""#), "{err}");
        let err = Settings::parse(&pairs(&[("colour", "red")])).unwrap_err();
        assert!(
            err.to_string().contains("unknown setting \"colour\""),
            "{err}"
        );
        let err = Settings::parse(&pairs(&[("workerId", "1"), ("sqlite", "a.db")])).unwrap_err();
        assert!(err.to_string().contains("2 worker sources"), "{err}");
        let err =
            Settings::parse(&pairs(&[("preset", "snowflake"), ("workerId", "1")])).unwrap_err();
        assert!(err.to_string().contains("unknown layout"), "{err}");
        let err = Settings::parse(&pairs(&[("zookeeper", "h:1")])).unwrap_err();
        assert!(err.to_string().contains("zookeeperName"), "{err}");
    }

    #[test]
    fn lead() {
        let s = Settings::parse(&pairs(&[("workerId", "1"), ("maxLeadMillis", "-1")])).unwrap();
        assert_eq!(s.max_lead, Some(None));
        let s = Settings::parse(&pairs(&[
            ("workerId", "1"),
            ("maxLeadMillis", "2000"),
            ("leadPolicy", "FAIL"),
        ]))
        .unwrap();
        assert_eq!(
            s.max_lead,
            Some(Some((Duration::from_secs(2), LeadPolicy::Fail)))
        );
    }
}
