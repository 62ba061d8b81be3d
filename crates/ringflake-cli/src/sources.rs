//! The worker id sources offered beside the worker tables ([`SOURCES`], one line each), and
//! their flags: each [`SourceKind`]'s plain description made into clap arguments
//! ([`SourceArgs`]), with a `RINGFLAKE_…` variable each and a key in `serve --config`'s tables,
//! and their values handed back to the library as [`SourceSettings`].
//!
//! Nothing here knows a source by name: a new one is a module of the library and a line in
//! [`SOURCES`].

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use ringflake::{SharedFlag, SourceKind, SourceSettings};

/// The sources beside the worker tables, in the order of `--help`.
// One line per source: rustfmt would join them.
#[rustfmt::skip]
pub const SOURCES: &[&SourceKind] = &[
    &ringflake::ZOOKEEPER,
    &ringflake::ETCD,
    &ringflake::REDIS,
];

/// The worker tables' flags that sources may share, by their clap id, with what they are for
/// among the tables (the help names the sources that take them as well).
const SHARED_HELP: &[(&str, SharedFlag, &str)] = &[
    (
        "db_ca_file",
        SharedFlag::CaFile,
        "trust the CA certificates in this PEM file for TLS to the server; for a table, unless \
         the URL sets sslmode / ssl-mode, TLS with the certificate and host name verified \
         (verify-full / VERIFY_IDENTITY)",
    ),
    (
        "accept_async_replication",
        SharedFlag::AcceptAsyncReplication,
        "use a worker id claim or lease extension as soon as the primary has it, without waiting \
         until every standby or replica holds it. The risk: a failover to one that lacked it \
         gives the same worker id to another node (duplicate IDs)",
    ),
];

/// The table flags that take each shared flag.
fn table_flags(flag: SharedFlag) -> &'static [&'static str] {
    match flag {
        SharedFlag::CaFile | SharedFlag::AcceptAsyncReplication => &["--mysql", "--postgres"],
        SharedFlag::LeaseWindow | SharedFlag::Retry | SharedFlag::Timeout => {
            &["--db", "--mysql", "--postgres"]
        }
    }
}

/// Every flag that takes `flag`: the tables' and the sources'.
pub fn takers(flag: SharedFlag) -> Vec<String> {
    let mut all: Vec<String> = table_flags(flag).iter().map(|f| f.to_string()).collect();
    all.extend(
        SOURCES
            .iter()
            .filter(|k| k.shared.contains(&flag))
            .map(|k| format!("--{}", k.flag)),
    );
    all
}

/// `a, b or c`.
pub fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The clap id of a flag: its name with `_` for `-`.
fn id(name: &str) -> String {
    name.replace('-', "_")
}

/// The values given to the sources' flags.
#[derive(Debug, Clone, Default)]
pub struct SourceArgs {
    /// The flag (without dashes) and its value, for every source flag given.
    given: Vec<(&'static str, String)>,
}

impl SourceArgs {
    /// The source whose choosing flag is `flag` (`zookeeper`), if it is one.
    pub fn kind(flag: &str) -> Option<&'static SourceKind> {
        SOURCES.iter().copied().find(|k| k.flag == flag)
    }

    /// The choosing flags' ids, for [`crate::args::pick`].
    pub fn flags() -> impl Iterator<Item = &'static str> {
        SOURCES.iter().map(|k| k.flag)
    }

    /// The settings of `kind`, with its flag's value and its own flags given (the shared ones
    /// are the caller's to fill in).
    pub fn settings(&self, kind: &SourceKind) -> SourceSettings {
        let mut s = SourceSettings::default();
        for (name, value) in &self.given {
            if *name == kind.flag {
                s.value = value.clone();
            } else if kind.options.iter().any(|o| o.name == *name) {
                s.options.push((name, value.clone()));
            }
        }
        s
    }

    /// A source's own flag given without its source: the error naming both.
    pub fn only_with_their_source(&self, chosen: Option<&str>) -> Result<(), String> {
        for kind in SOURCES {
            if chosen == Some(kind.flag) {
                continue;
            }
            if let Some(o) = kind
                .options
                .iter()
                .find(|o| self.given.iter().any(|(n, _)| *n == o.name))
            {
                return Err(format!("--{} needs --{}", o.name, kind.flag));
            }
        }
        Ok(())
    }
}

impl FromArgMatches for SourceArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut a = SourceArgs::default();
        a.update_from_arg_matches(m)?;
        Ok(a)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        for kind in SOURCES {
            let names = std::iter::once(kind.flag).chain(kind.options.iter().map(|o| o.name));
            for name in names {
                if let Ok(Some(v)) = m.try_get_one::<String>(&id(name)) {
                    self.given.retain(|(n, _)| *n != name);
                    self.given.push((name, v.clone()));
                }
            }
        }
        Ok(())
    }
}

impl Args for SourceArgs {
    fn augment_args(mut cmd: Command) -> Command {
        let arg = |name: &'static str, value_name: &'static str, help: &'static str| {
            Arg::new(id(name))
                .long(name)
                .env(format!("RINGFLAKE_{}", id(name).to_uppercase()))
                .value_name(value_name)
                .help(help)
                .action(ArgAction::Set)
        };
        for kind in SOURCES {
            cmd = cmd.arg(arg(kind.flag, kind.value_name, kind.help));
            for o in kind.options {
                cmd = cmd.arg(arg(o.name, o.value_name, o.help));
            }
        }
        // The tables' flags that sources take too say which.
        for (clap_id, flag, what) in SHARED_HELP {
            if cmd.get_arguments().any(|a| a.get_id() == *clap_id) {
                let help = format!("With {}: {what}", or_list(&takers(*flag)));
                cmd = cmd.mut_arg(*clap_id, |a| a.help(help));
            }
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each source's flags are named after it, and its choosing flag is one word (it is also a
    /// clap id and a `pick` name).
    #[test]
    fn flags_are_named_after_their_source() {
        for kind in SOURCES {
            assert!(
                kind.flag.bytes().all(|b| b.is_ascii_lowercase()),
                "{}",
                kind.flag
            );
            for o in kind.options {
                assert!(o.name.starts_with(&format!("{}-", kind.flag)), "{}", o.name);
            }
        }
        assert_eq!(
            or_list(&["--a".into(), "--b".into(), "--c".into()]),
            "--a, --b or --c"
        );
    }
}
