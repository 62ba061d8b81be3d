//! `serve`'s flags as the service takes them: its [`Config`] ([`config`]) and its generators'
//! [`Plan`]s ([`plans`]), the default generator from the flags and the named ones from
//! `serve --config FILE`.
//!
//! `serve --config FILE`: named generators from a TOML file, one `[generators.NAME]` table each,
//! its keys spelled as `serve`'s generator flags (`time-bits = 30`, `worker-id = 3`,
//! `db = "ids.db"`, `max-lead = 30`).
//!
//! One code path checks both: a table becomes the flags it spells (`--time-bits=30`, ...) and is
//! parsed by [`GeneratorArgs::parse`], the generator flags of `serve` without their environment
//! variables, then resolved by the same `source`, `lead`, `path` and `zone_and_layout` as the
//! command line. A switch (`recycle`, `no-state-file`, `unbounded-lead`, ...) takes `true` or
//! `false`; `false` is as if the key were absent, except `recycle = false`, which is
//! `no-recycle` (as `RINGFLAKE_RECYCLE=false` is).
//!
//! The flags (and their environment variables) define the generator called `default`, as
//! without a config; a `[generators.default]` table defines it instead, and generator flags
//! given as well are then an error naming them. Every error names the file, the line, the table
//! and the key, and the reason.

use super::spaces::{Member, Spaces};
use super::{Source, builder};
use crate::args::{DEFAULT_MAX_WAIT, DEFAULT_STATE_FILE, GeneratorArgs, RingArgs, ServeArgs};
use clap::ArgMatches;
use ringflake::{DEFAULT_SQLITE_PATH, Layout, TimeZone};
use ringflake_server::Config;
use ringflake_server::model::plan::{Build, DEFAULT, Lead, Plan};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use toml::Spanned;

/// The longest generator name: it goes into routes, a metrics label and the worker table's
/// `HOST_NAME` (`NAME@host`, 64 characters at most).
pub const MAX_NAME: usize = 24;

/// The file: nothing but `[generators.NAME]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    generators: BTreeMap<Spanned<String>, Spanned<Keys>>,
}

/// A generator's table: its keys and values, with where each is in the file.
type Keys = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

/// One generator, checked and resolved, not yet booted: a [`Plan`] with what the checks
/// between generators need.
struct Resolved {
    /// Its name: `default`, or its table's.
    name: String,
    /// Where it was defined, for messages: `flags`, or `ringflake.toml [generators.orders]`.
    origin: String,
    /// The zone `/parse` renders timestamps in.
    tz: TimeZone,
    /// Its layout.
    layout: Layout,
    /// Its namespace, if it declares one.
    namespace: Option<String>,
    /// Its worker id source.
    source: Source,
    /// Its lead cap.
    lead: Lead,
    /// Its state file, if any.
    state: Option<PathBuf>,
    /// Its ring flags.
    ring: RingArgs,
}

/// The origin of the generator the flags define.
const FLAGS: &str = "flags";

/// Error `e` of the generator defined at `origin`: one from the file names its table; one from
/// the flags reads as without a config.
fn named(origin: &str, e: String) -> String {
    if origin == FLAGS {
        e
    } else {
        format!("{origin}: {e}")
    }
}

impl Resolved {
    /// How the ID check names it.
    fn member(&self) -> Member {
        Member {
            name: self.name.clone(),
            layout: self.layout,
            namespace: self.namespace.clone(),
            source: self.source.describe(),
        }
    }

    /// An error of this generator: one from the file names its table; one from the flags reads
    /// as without a config.
    fn error(&self, e: String) -> String {
        named(&self.origin, e)
    }

    /// The plain values the service boots. Booted, the generator's worker id is checked against
    /// those of the generators booted before it, and whenever it takes a new one after a heal
    /// ([`Spaces`], where it is generator `index`).
    fn into_plan(self, spaces: &Arc<Spaces>, index: usize) -> Plan {
        let spaces = Arc::clone(spaces);
        let described = self.source.describe();
        let (name, tz, layout, lead, state, namespace) = (
            self.name.clone(),
            self.tz.clone(),
            self.layout,
            self.lead,
            self.state.clone(),
            self.namespace.clone(),
        );
        Plan {
            name,
            tz,
            layout,
            source: described,
            lead,
            state,
            namespace,
            boot: Box::new(move || {
                let checked = builder(
                    self.layout,
                    &self.source,
                    Some((&self.ring, self.lead)),
                    self.state.as_deref(),
                    Some((&spaces, index)),
                )
                .map_err(|e| self.error(e))?;
                let (origin, spaces) = (self.origin.clone(), Arc::clone(&spaces));
                let build: Build = Box::new(move || {
                    let g = checked.build().map_err(|e| named(&origin, e.to_string()))?;
                    // Refused: the generator is dropped, which releases its lease.
                    spaces
                        .claim(index, g.worker_id())
                        .map_err(|e| named(&origin, e))?;
                    Ok(g)
                });
                Ok(build)
            }),
        }
    }
}

/// What the service needs besides its generators, from `serve`'s flags.
pub fn config(a: &ServeArgs) -> Config {
    Config {
        listen: a.listen,
        name: a.name.clone(),
        shutdown_timeout: a.shutdown_timeout,
        threads: a.threads,
        auth_token_file: a.auth_token_file.clone(),
        metrics_listen: a.metrics_listen,
        tls_cert: a.tls_cert.clone(),
        tls_key: a.tls_key.clone(),
        max_wait: a.max_wait.map_or(DEFAULT_MAX_WAIT, Duration::from_secs),
        id_key_file: a.id_key_file.clone(),
        max_connections: a.max_connections,
        max_large_answers: a.max_large_answers,
        json_log: a.log_format == crate::log::LogFormat::Json,
    }
}

/// Every generator `serve` runs: `default` first (from the flags, or the file's table), then the
/// file's others by name; refuses a named generator that would share the default one's metrics
/// label.
pub fn plans(a: &ServeArgs, matches: &ArgMatches) -> Result<Vec<Plan>, String> {
    let plans = resolve(a, matches)?;
    if let Some(clash) = plans.iter().find(|p| p.name != DEFAULT && p.name == a.name) {
        return Err(format!(
            "{}: generator {} has the name of the default generator's metrics label (--name {}): \
             the two would share their series on /metrics; rename one",
            clash.origin, clash.name, a.name
        ));
    }
    let spaces = Spaces::new(plans.iter().map(Resolved::member).collect());
    // Worker ids known before boot (fixed, or the host name's) are checked now, before anything
    // is opened; the others once their generator has booted.
    for (index, plan) in plans.iter().enumerate() {
        if let Some(id) = plan.source.known_id() {
            spaces.claim(index, id).map_err(|e| plan.error(e))?;
        }
    }
    Ok(plans
        .into_iter()
        .enumerate()
        .map(|(index, plan)| plan.into_plan(&spaces, index))
        .collect())
}

/// Every generator, resolved and checked against the others.
fn resolve(a: &ServeArgs, matches: &ArgMatches) -> Result<Vec<Resolved>, String> {
    let mut plans = Vec::new();
    let mut tables = match &a.config {
        Some(path) => read(path)?,
        None => Vec::new(),
    };
    match tables.iter().position(|t| t.name == DEFAULT) {
        Some(i) => {
            let flags = GeneratorArgs::given_to_serve(matches);
            if !flags.is_empty() {
                return Err(format!(
                    "{}: the generator flags {} conflict with its [generators.default] table: \
                     give the default generator in one place",
                    tables[i].origin,
                    flags.join(", ")
                ));
            }
            let table = tables.remove(i);
            plans.push(table.resolve(a.single_instance)?);
        }
        None => plans.push(from_flags(a, matches)?),
    }
    for table in tables {
        plans.push(table.resolve(a.single_instance)?);
    }
    Ok(plans)
}

/// The default generator from the flags, as without a config.
fn from_flags(a: &ServeArgs, matches: &ArgMatches) -> Result<Resolved, String> {
    let (tz, layout) = a.layout.zone_and_layout()?;
    let state = a.state.path(matches)?;
    pod_check(
        a.single_instance,
        a.worker.chosen(matches)?,
        a.worker.db.db.as_deref(),
    )?;
    Ok(Resolved {
        name: DEFAULT.into(),
        origin: FLAGS.into(),
        tz,
        layout,
        namespace: a.space.namespace.clone(),
        source: match a.listen.port() {
            0 => a.worker.source(matches)?,
            port => a.worker.source(matches)?.listening_on(port),
        }
        .keeping(state.as_deref()),
        lead: a.ring.lead(matches)?,
        state,
        ring: a.ring.clone(),
    })
}

/// A table of the file, as flags.
struct Table {
    name: String,
    /// `FILE:LINE [generators.NAME]`.
    origin: String,
    args: GeneratorArgs,
    matches: ArgMatches,
    /// Whether the table names a state file or none (else the name's default is used).
    states: bool,
}

impl Table {
    fn resolve(self, single_instance: bool) -> Result<Resolved, String> {
        let at = |e: String| format!("{}: {e}", self.origin);
        let (tz, layout) = self.args.layout.zone_and_layout().map_err(at)?;
        let chosen = self.args.worker.chosen(&self.matches).map_err(at)?;
        pod_check(single_instance, chosen, self.args.worker.db.db.as_deref()).map_err(at)?;
        let source = match self.args.worker.source(&self.matches).map_err(at)? {
            // Rows of the other generators say whose they are (`NAME@host`); the default's stay
            // as without a config, so that its restarts follow its earlier rows.
            source if self.name != DEFAULT => source.named(&self.name),
            source => source,
        };
        let lead = self.args.ring.lead(&self.matches).map_err(at)?;
        let mut state = self.args.state.path(&self.matches).map_err(at)?;
        if !self.states && self.name != DEFAULT {
            state = Some(PathBuf::from(state_file_of(&self.name)));
        }
        Ok(Resolved {
            name: self.name,
            origin: self.origin,
            tz,
            layout,
            namespace: self.args.space.namespace,
            source: source.keeping(state.as_deref()),
            lead,
            state,
            ring: self.args.ring,
        })
    }
}

/// The variable Kubernetes sets in every container of a pod: `serve` is in a pod when it is set.
pub const IN_POD: &str = "KUBERNETES_SERVICE_HOST";

/// In a Kubernetes pod, refuses worker ids from a SQLite file (the default `ringflake.db`, or
/// `--db PATH`) unless `--single-instance` says this pod is the only one: each replica would take
/// worker id 1 from a file of its own and hand out the same IDs. A shared table, the host name's
/// ordinal and a fixed `--worker-id` (the operator's own promise) pass; outside a pod, all pass.
/// Checked before anything is opened, so the refusal is immediate and leaves no file behind.
fn pod_check(single_instance: bool, chosen: Option<&str>, db: Option<&Path>) -> Result<(), String> {
    let in_pod = std::env::var_os(IN_POD).is_some_and(|v| !v.is_empty());
    if !in_pod || single_instance {
        return Ok(());
    }
    let file = match (chosen, db) {
        (None, _) => format!(
            "the pod's own SQLite file {DEFAULT_SQLITE_PATH} (no worker id source was given)"
        ),
        (Some("db"), Some(path)) => format!("the SQLite file {} (--db)", path.display()),
        _ => return Ok(()),
    };
    Err(format!(
        "running in a Kubernetes pod ({IN_POD} is set) with worker ids from {file}: a SQLite file \
         is not shared between pods, so every replica would take worker id 1 from its own and \
         hand out the same IDs. Choose a source that is safe with replicas: a shared table \
         (--postgres URL or --mysql URL), --worker-id-from-hostname in a StatefulSet (the pod's \
         ordinal as its worker id, with the state file on its volume claim), or \
         --single-instance if this pod is the only one"
    ))
}

/// The state file of generator `name` when its table names none: `ringflake-NAME.state` beside
/// the default's `ringflake.state`.
pub fn state_file_of(name: &str) -> String {
    if name == DEFAULT {
        DEFAULT_STATE_FILE.into()
    } else {
        format!("ringflake-{name}.state")
    }
}

/// The line (from 1) of byte `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A TOML value for a message: its type, and the value if it is short.
fn shown_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("string {s:?}"),
        toml::Value::Integer(n) => format!("integer {n}"),
        toml::Value::Float(f) => format!("float {f}"),
        toml::Value::Boolean(b) => format!("boolean {b}"),
        toml::Value::Datetime(d) => format!("datetime {d}"),
        other => format!("{} ", other.type_str()).trim_end().to_string(),
    }
}

/// Whether `name` may name a generator: 1 to [`MAX_NAME`] of `A-Z a-z 0-9 _ -`.
fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Reads and parses the file into its tables, each as the flags it spells.
fn read(path: &Path) -> Result<Vec<Table>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the config file {shown}: {e}"))?;
    let file: File = toml::from_str(&text).map_err(|e| {
        let line = e.span().map(|s| format!(":{}", line_of(&text, s.start)));
        format!(
            "{shown}{}: {}",
            line.unwrap_or_default(),
            e.message().trim_end()
        )
    })?;
    let flags = GeneratorArgs::command();
    let mut tables = Vec::new();
    for (name, table) in file.generators {
        let origin = format!(
            "{shown}:{} [generators.{}]",
            line_of(&text, name.span().start),
            name.as_ref()
        );
        if !valid_name(name.as_ref()) {
            return Err(format!(
                "{origin}: generator name {:?} is not 1 to {MAX_NAME} letters, digits, '_' or '-'",
                name.as_ref()
            ));
        }
        let mut tokens = Vec::new();
        for (key, value) in table.as_ref() {
            let at = format!(
                "{shown}:{} [generators.{}] {}",
                line_of(&text, key.span().start),
                name.as_ref(),
                key.as_ref()
            );
            let Some(arg) = flags
                .get_arguments()
                .find(|a| a.get_long() == Some(key.as_ref().as_str()))
            else {
                let known: Vec<&str> = flags.get_arguments().filter_map(|a| a.get_long()).collect();
                return Err(format!(
                    "{at}: unknown key: a generator's keys are serve's generator flags: {}",
                    known.join(", ")
                ));
            };
            let flag = format!("--{}", key.as_ref());
            let switch = !arg.get_action().takes_values();
            match (switch, value.as_ref()) {
                (true, toml::Value::Boolean(true)) => tokens.push(flag),
                (true, toml::Value::Boolean(false)) if key.as_ref() == "recycle" => {
                    tokens.push("--no-recycle".into())
                }
                (true, toml::Value::Boolean(false)) => {}
                (true, other) => {
                    return Err(format!(
                        "{at}: expected true or false, found {}",
                        shown_value(other)
                    ));
                }
                (false, toml::Value::Integer(n)) => tokens.push(format!("{flag}={n}")),
                (false, toml::Value::String(s)) => tokens.push(format!("{flag}={s}")),
                // `epoch = 2020-01-01`, a TOML date, is the date.
                (false, toml::Value::Datetime(d)) if d.time.is_none() && d.offset.is_none() => {
                    tokens.push(format!("{flag}={d}"))
                }
                (false, other) => {
                    return Err(format!(
                        "{at}: expected a number or a string, found {}",
                        shown_value(other)
                    ));
                }
            }
        }
        let (args, matches) = GeneratorArgs::parse(&tokens).map_err(|e| {
            // The key clap refused, and why: "99 is not in 1..=61".
            let key = match e.get(clap::error::ContextKind::InvalidArg) {
                Some(clap::error::ContextValue::String(arg)) => arg
                    .trim_start_matches('-')
                    .split([' ', '='])
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                _ => String::new(),
            };
            let line = table
                .as_ref()
                .keys()
                .find(|k| k.as_ref() == &key)
                .map_or(line_of(&text, table.span().start), |k| {
                    line_of(&text, k.span().start)
                });
            let reason = e
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_string();
            format!(
                "{shown}:{line} [generators.{}] {key}: {reason}",
                name.as_ref()
            )
        })?;
        let states = table
            .as_ref()
            .keys()
            .any(|k| k.as_ref() == "state-file" || k.as_ref() == "no-state-file");
        tables.push(Table {
            name: name.into_inner(),
            origin,
            args,
            matches,
            states,
        });
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["orders", "a", "user_ids", "pay-2", &"x".repeat(MAX_NAME)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "a b", "a/b", "é", "a@b", &"x".repeat(MAX_NAME + 1)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn lines() {
        let text = "a\nbb\n\nc";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 2), 2);
        assert_eq!(line_of(text, 6), 4);
        assert_eq!(line_of(text, 99), 4);
    }

    #[test]
    fn state_files() {
        assert_eq!(state_file_of(DEFAULT), "ringflake.state");
        assert_eq!(state_file_of("orders"), "ringflake-orders.state");
    }

    /// Every generator flag of `serve` is a key, and only those: the table's keys are looked up
    /// in the same command `serve` flattens.
    #[test]
    fn the_keys_are_serves_generator_flags() {
        use clap::CommandFactory;
        let serve = crate::args::Cli::command();
        let serve = serve.find_subcommand("serve").unwrap();
        let keys: Vec<String> = GeneratorArgs::command()
            .get_arguments()
            .filter_map(|a| a.get_long().map(String::from))
            .collect();
        for k in [
            "time-bits",
            "worker-id",
            "db",
            "max-lead",
            "state-file",
            "lead-policy",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k} in {keys:?}");
        }
        for k in &keys {
            let flag = serve.get_arguments().find(|a| a.get_long() == Some(k));
            assert!(flag.is_some(), "{k} is not a serve flag");
        }
        for listener in ["listen", "threads", "name", "config", "shutdown-timeout"] {
            assert!(!keys.iter().any(|x| x == listener), "{listener}");
        }
    }
}
