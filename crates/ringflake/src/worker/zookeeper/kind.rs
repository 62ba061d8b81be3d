//! ZooKeeper as the command line names it ([`ZOOKEEPER`]: `--zookeeper HOSTS` and its flags),
//! and what `ringflake workers --zookeeper` lists.

use super::ZooKeeperAssigner;
use crate::Error;
use crate::worker::source::{
    Cell, Listed, Listing, Placement, SharedFlag, Source, SourceKind, SourceOption, SourceSettings,
};

/// `--zookeeper HOSTS`: worker ids from a ZooKeeper ensemble in Meituan Leaf's znodes
/// ([`ZooKeeperAssigner`]), with `--zookeeper-name`, `--zookeeper-address` and
/// `--zookeeper-session-timeout`; `--lease-window` and `--db-retry` apply.
///
/// ```
/// use ringflake::{SourceSettings, ZOOKEEPER};
/// let mut s = SourceSettings::new("zk1:2181,zk2:2181");
/// s.options.push(("zookeeper-name", "orders".into()));
/// s.options.push(("zookeeper-address", "10.1.2.3".into()));
/// let e = ZOOKEEPER.open(&s).unwrap_err();
/// assert!(e.to_string().contains("expected IP:PORT"), "{e}");
/// ```
pub static ZOOKEEPER: SourceKind = SourceKind {
    flag: "zookeeper",
    value_name: "HOSTS",
    help: "Worker ids from this ZooKeeper ensemble, HOST:PORT[,HOST:PORT...], in Meituan Leaf's \
           znodes (/snowflake/NAME/forever/IP:PORT-SEQUENCE, shared with Leaf nodes); needs \
           --zookeeper-name",
    options: &[
        SourceOption {
            name: "zookeeper-name",
            value_name: "NAME",
            help: "With --zookeeper: Leaf's leaf.name, the path /snowflake/NAME under which the \
                   ids are",
        },
        SourceOption {
            name: "zookeeper-address",
            value_name: "IP:PORT",
            help: "With --zookeeper: this node's IP:PORT as Leaf names it (a restart on the same \
                   one keeps its worker id) [default: Leaf's ip (the first non-loopback IPv4 \
                   address) and, for serve, --listen's port]",
        },
        SourceOption {
            name: "zookeeper-session-timeout",
            value_name: "SECONDS",
            help: "With --zookeeper: the session timeout asked of the servers; a node that has \
                   not heard from them for a third of it stops serving until it does [default: \
                   10]",
        },
    ],
    shared: &[SharedFlag::LeaseWindow, SharedFlag::Retry],
    open,
};

/// The assigner the flags describe.
fn open(s: &SourceSettings) -> Result<Box<dyn Source>, Error> {
    let Some(name) = s.option("zookeeper-name") else {
        return Err(Error::WorkerAssignment(format!(
            "--zookeeper {} needs --zookeeper-name (RINGFLAKE_ZOOKEEPER_NAME): Leaf's \
             leaf.name, the path /snowflake/NAME under which the ids are",
            s.value
        )));
    };
    let mut z = ZooKeeperAssigner::new(&s.value, name)?;
    if let Some(address) = s.option("zookeeper-address") {
        let (ip, port) = address
            .rsplit_once(':')
            .and_then(|(ip, port)| Some((ip, port.parse::<u16>().ok()?)))
            .filter(|(ip, _)| !ip.is_empty())
            .ok_or_else(|| {
                Error::WorkerAssignment(format!(
                    "--zookeeper-address {address:?}: expected IP:PORT, e.g. 10.1.2.3:8080"
                ))
            })?;
        z = z.address(ip, port);
    }
    if let Some(t) = s.seconds("zookeeper-session-timeout", 2..=600)? {
        z = z.session_timeout(t);
    }
    if let Some(w) = s.lease_window {
        z = z.lease_window(w);
    }
    if let Some(r) = s.retry_for {
        z = z.retry_for(r);
    }
    Ok(Box::new(z))
}

impl Source for ZooKeeperAssigner {
    fn describe(&self) -> String {
        ZooKeeperAssigner::describe(self)
    }

    /// Leaf's forever znodes, with what ringflake keeps beside them.
    fn list(&self) -> Result<Listing, Error> {
        let ids = ZooKeeperAssigner::list(self)?;
        Ok(Listing {
            columns: vec!["ADDRESS", "MADE_BY", "LIVE", "LEAF_TIMESTAMP", "REACH"],
            ids: ids
                .into_iter()
                .map(|w| Listed {
                    worker_id: w.worker_id,
                    cells: vec![
                        Cell::Text(w.address),
                        Cell::Text(if w.ringflake { "ringflake" } else { "leaf" }.into()),
                        Cell::Text(if w.live { "yes" } else { "no" }.into()),
                        Cell::Second(w.leaf_timestamp_ms.map(|ms| ms.div_euclid(1000))),
                        Cell::Second(w.reach),
                    ],
                })
                .collect(),
            unit: ("id", "ids"),
        })
    }

    /// `--listen`'s port, unless `--zookeeper-address` named one.
    fn place(&mut self, place: &Placement) {
        if let (None, Some(port)) = (&self.port, place.port) {
            self.port = Some(port.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help states the library's default.
    #[test]
    fn help_states_the_default_session_timeout() {
        let o = ZOOKEEPER
            .options
            .iter()
            .find(|o| o.name == "zookeeper-session-timeout")
            .expect("the option");
        let default = ZooKeeperAssigner::DEFAULT_SESSION_TIMEOUT.as_secs();
        assert!(
            o.help.ends_with(&format!("[default: {default}]")),
            "{}",
            o.help
        );
    }
}
