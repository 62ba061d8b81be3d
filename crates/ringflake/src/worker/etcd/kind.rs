//! etcd as the command line names it ([`ETCD`]: `--etcd ENDPOINTS` and its flags), and what
//! `ringflake workers --etcd` lists.

use super::EtcdAssigner;
use crate::Error;
use crate::worker::source::{
    Listing, Placement, SharedFlag, Source, SourceKind, SourceOption, SourceSettings,
};

/// `--etcd ENDPOINTS`: worker ids from an etcd cluster ([`EtcdAssigner`]), with `--etcd-prefix`,
/// `--etcd-ttl`, `--etcd-user` and `--etcd-cert`/`--etcd-key`; `--lease-window`, `--db-retry`,
/// `--db-timeout` and `--db-ca-file` apply.
///
/// ```
/// use ringflake::{ETCD, SourceSettings};
/// let mut s = SourceSettings::new("http://127.0.0.1:2379");
/// s.options.push(("etcd-user", "ids".into()));
/// let e = ETCD.open(&s).unwrap_err();
/// assert!(e.to_string().contains("USER:PASSWORD"), "{e}");
/// s.options[0].1 = "ids:s3cret".into();
/// assert_eq!(ETCD.open(&s)?.describe(), "etcd ids@http://127.0.0.1:2379 /ringflake/");
/// # Ok::<(), ringflake::Error>(())
/// ```
pub static ETCD: SourceKind = SourceKind {
    flag: "etcd",
    value_name: "ENDPOINTS",
    help: "Worker ids from this etcd cluster, http(s)://HOST:PORT[,http(s)://HOST:PORT...]: each \
           id a key under --etcd-prefix held by an etcd lease, claimed in a transaction",
    options: &[
        SourceOption {
            name: "etcd-prefix",
            value_name: "PREFIX",
            help: "With --etcd: the prefix of ringflake's keys (held/ID and reach/ID), which no \
                   other program may write under [default: /ringflake/]",
        },
        SourceOption {
            name: "etcd-ttl",
            value_name: "SECONDS",
            help: "With --etcd: the TTL of a holder's etcd lease; a node whose keep-alives etcd \
                   has not answered for a third of it stops serving until it does, and a killed \
                   node's id is free after it [default: 10]",
        },
        SourceOption {
            name: "etcd-user",
            value_name: "USER:PASSWORD",
            help: "With --etcd: the user and password, for a cluster with authentication on \
                   (keep it in RINGFLAKE_ETCD_USER rather than on the command line)",
        },
        SourceOption {
            name: "etcd-cert",
            value_name: "PEM",
            help: "With --etcd: the client certificate (PEM), for a cluster that asks for one; \
                   needs --etcd-key",
        },
        SourceOption {
            name: "etcd-key",
            value_name: "PEM",
            help: "With --etcd: the private key of --etcd-cert (PEM)",
        },
    ],
    shared: &[
        SharedFlag::LeaseWindow,
        SharedFlag::Retry,
        SharedFlag::Timeout,
        SharedFlag::CaFile,
    ],
    open,
};

/// The assigner the flags describe.
fn open(s: &SourceSettings) -> Result<Box<dyn Source>, Error> {
    let mut e = EtcdAssigner::new(&s.value)?;
    if let Some(prefix) = s.option("etcd-prefix") {
        if prefix.is_empty() {
            return Err(Error::WorkerAssignment(
                "--etcd-prefix is empty: give ringflake a prefix of its own, e.g. /ringflake/"
                    .into(),
            ));
        }
        e = e.prefix(prefix);
    }
    if let Some(ttl) = s.seconds("etcd-ttl", 2..=3600)? {
        e = e.ttl(ttl);
    }
    if let Some(user) = s.option("etcd-user") {
        let Some((name, password)) = user.split_once(':').filter(|(n, _)| !n.is_empty()) else {
            return Err(Error::WorkerAssignment(
                "--etcd-user: expected USER:PASSWORD (etcdctl's --user form)".into(),
            ));
        };
        e = e.user(name, password);
    }
    match (s.option("etcd-cert"), s.option("etcd-key")) {
        (Some(cert), Some(key)) => e = e.client_identity(cert, key),
        (None, None) => {}
        (Some(_), None) => {
            return Err(Error::WorkerAssignment(
                "--etcd-cert needs --etcd-key".into(),
            ));
        }
        (None, Some(_)) => {
            return Err(Error::WorkerAssignment(
                "--etcd-key needs --etcd-cert".into(),
            ));
        }
    }
    if let Some(ca) = &s.ca_file {
        e = e.ca_file(ca);
    }
    if let Some(w) = s.lease_window {
        e = e.lease_window(w);
    }
    if let Some(r) = s.retry_for {
        e = e.retry_for(r);
    }
    if let Some(t) = s.timeout {
        e = e.timeout(t);
    }
    Ok(Box::new(e))
}

impl Source for EtcdAssigner {
    fn describe(&self) -> String {
        EtcdAssigner::describe(self)
    }

    fn list(&self) -> Result<Listing, Error> {
        EtcdAssigner::list(self).map(crate::worker::kv::listing)
    }

    /// A named generator's holder says its name.
    fn place(&mut self, place: &Placement) {
        if let Some(g) = &place.generator {
            self.generator = Some(g.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help states the library's defaults.
    #[test]
    fn help_states_the_defaults() {
        let help = |name: &str| ETCD.options.iter().find(|o| o.name == name).map(|o| o.help);
        assert!(help("etcd-ttl").is_some_and(|h| h.ends_with(&format!(
            "[default: {}]",
            EtcdAssigner::DEFAULT_TTL.as_secs()
        ))));
        assert!(
            help("etcd-prefix").is_some_and(
                |h| h.ends_with(&format!("[default: {}]", EtcdAssigner::DEFAULT_PREFIX))
            )
        );
    }
}
