//! Redis as the command line names it ([`REDIS`]: `--redis URL` and its flags), and what
//! `ringflake workers --redis` lists.

use super::RedisAssigner;
use crate::Error;
use crate::worker::source::{
    Listing, Placement, SharedFlag, Source, SourceKind, SourceOption, SourceSettings,
};

/// `--redis URL`: worker ids from Redis ([`RedisAssigner`]), with `--redis-prefix` and
/// `--redis-ttl`; `--lease-window`, `--db-retry`, `--db-timeout`, `--db-ca-file` and
/// `--accept-async-replication` apply.
///
/// ```
/// use ringflake::{REDIS, SourceSettings};
/// let mut s = SourceSettings::new("redis://127.0.0.1:6379/0");
/// s.options.push(("redis-ttl", "1".into()));
/// let e = REDIS.open(&s).unwrap_err();
/// assert!(e.to_string().contains("--redis-ttl 1: expected 2 to 3600 seconds"), "{e}");
/// s.options[0].1 = "30".into();
/// assert!(format!("{:?}", REDIS.open(&s)?).contains("ttl: 30s"));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub static REDIS: SourceKind = SourceKind {
    flag: "redis",
    value_name: "URL",
    help: "Worker ids from Redis: redis://[USER:PASSWORD@]HOST:PORT[/DB], rediss://... for TLS, \
           or redis+sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]/MASTER[/DB] for the \
           primary Sentinel names; each id a key claimed with SET NX PX, every claim confirmed \
           on the replicas with WAIT",
    options: &[
        SourceOption {
            name: "redis-prefix",
            value_name: "PREFIX",
            help: "With --redis: the prefix of ringflake's keys (PREFIXheld:ID and the hash \
                   PREFIXreach), which no other program may write under [default: ringflake:]",
        },
        SourceOption {
            name: "redis-ttl",
            value_name: "SECONDS",
            help: "With --redis: the TTL of a holder's key; a node whose keep-alives have not \
                   been confirmed for a third of it stops serving until they are, and a killed \
                   node's id is free after it [default: 10]",
        },
    ],
    shared: &[
        SharedFlag::LeaseWindow,
        SharedFlag::Retry,
        SharedFlag::Timeout,
        SharedFlag::CaFile,
        SharedFlag::AcceptAsyncReplication,
    ],
    open,
};

/// The assigner the flags describe.
fn open(s: &SourceSettings) -> Result<Box<dyn Source>, Error> {
    let mut r = RedisAssigner::new(&s.value)?;
    if let Some(prefix) = s.option("redis-prefix") {
        if prefix.is_empty() {
            return Err(Error::WorkerAssignment(
                "--redis-prefix is empty: give ringflake a prefix of its own, e.g. ringflake:"
                    .into(),
            ));
        }
        r = r.prefix(prefix);
    }
    if let Some(ttl) = s.seconds("redis-ttl", 2..=3600)? {
        r = r.ttl(ttl);
    }
    if let Some(ca) = &s.ca_file {
        r = r.ca_file(ca);
    }
    if let Some(w) = s.lease_window {
        r = r.lease_window(w);
    }
    if let Some(d) = s.retry_for {
        r = r.retry_for(d);
    }
    if let Some(t) = s.timeout {
        r = r.timeout(t);
    }
    Ok(Box::new(
        r.accept_async_replication(s.accept_async_replication),
    ))
}

impl Source for RedisAssigner {
    fn describe(&self) -> String {
        RedisAssigner::describe(self)
    }

    fn list(&self) -> Result<Listing, Error> {
        RedisAssigner::list(self).map(crate::worker::kv::listing)
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
        let help = |name: &str| {
            REDIS
                .options
                .iter()
                .find(|o| o.name == name)
                .map(|o| o.help)
        };
        assert!(help("redis-ttl").is_some_and(|h| h.ends_with(&format!(
            "[default: {}]",
            RedisAssigner::DEFAULT_TTL.as_secs()
        ))));
        assert!(help("redis-prefix").is_some_and(|h| {
            h.ends_with(&format!("[default: {}]", RedisAssigner::DEFAULT_PREFIX))
        }));
    }
}
