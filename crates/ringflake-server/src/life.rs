//! The service's life, from its [`Config`] to exit, one step per function: check the start
//! files, bind the addresses, plan, check and boot the generators, serve until a signal, stop,
//! release the worker leases. The binary calls [`run`] with the plans its flags make; a
//! [`Service`](crate::Service) calls it with plans made in code.

use crate::log;
use crate::model;
use crate::server;
use crate::startup;
use model::app::App;
use model::app::{Generators, Named, Service as Identity};
use model::auth::Auth;
use model::history::History;
use model::limits::Limits;
use model::plan::{DEFAULT, Plan};
use model::routes::Exposure;
use model::sampler::Sampler;
use model::segments::Segments;
use ringflake::{MetricsReporter, PrometheusHandle};
use server::signals::Signals;
use server::{Bound, Server, Stop};
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::TlsAcceptor;

/// What the service needs besides its generators: where it listens, for whom, and how it stops.
pub struct Config {
    /// The address to listen on (`--listen`).
    pub listen: SocketAddr,
    /// The default generator's `generator` label on `/metrics` (`--name`).
    pub name: String,
    /// How long in-flight requests may take after a stop signal, in seconds.
    pub shutdown_timeout: u64,
    /// Serving threads; `None`: one per core.
    pub threads: Option<u16>,
    /// The bearer token file, if any.
    pub auth_token_file: Option<PathBuf>,
    /// The internal address for the metrics and the status page, if any.
    pub metrics_listen: Option<SocketAddr>,
    /// The certificate chain for HTTPS (given with `tls_key`).
    pub tls_cert: Option<PathBuf>,
    /// The private key of `tls_cert`.
    pub tls_key: Option<PathBuf>,
    /// The longest a request for IDs waits for them.
    pub max_wait: Duration,
    /// The key file of the public IDs (`--id-key-file`), if any.
    pub id_key_file: Option<PathBuf>,
    /// Connections open at once per listener (`--max-connections`).
    pub max_connections: usize,
    /// Large answers written at once (`--max-large-answers`).
    pub max_large_answers: usize,
    /// Whether the log is JSON (`--log-format json`): the start-up lines are then events, and
    /// nothing goes to standard output.
    pub json_log: bool,
}

/// Boots the generators `plans` gives (asked once the start files are read: planning may open a
/// worker table), serves HTTP until SIGTERM or Ctrl-C, then stops accepting, finishes in-flight
/// requests, and drops the generators (which stops their fillers and releases their worker
/// leases).
pub fn run(
    a: &Config,
    plans: impl FnOnce() -> Result<(Vec<Plan>, Option<model::segments::Plan>), String>,
) -> Result<(), String> {
    let started = model::sampler::unix_ms() / 1000;
    let (auth, tls) = read_start_files(a)?;
    // Bound before any worker id is claimed: an address in use refuses the start first.
    let bound = bind_listeners(a)?;
    let service = Identity {
        version: ringflake::build_info::VERSION,
        commit: ringflake::build_info::COMMIT,
        started,
        listen: bound.urls(tls.is_some()),
    };
    let id_key = crate::text::id_key(a.id_key_file.as_deref())?.map(Arc::new);
    let (plans, segment_plan) = plans()?;
    let handle = ringflake::install_prometheus_recorder().map_err(|e| e.to_string())?;
    let limits = Arc::new(Limits::new(a.max_connections, a.max_large_answers));
    let mut booted = boot_generators(a, plans, id_key.as_ref(), &limits)?;
    let mut start = std::mem::take(&mut booted.start);
    let segments = segment_plan.map(|plan| {
        let segments = Segments::boot(&plan, id_key.clone());
        let lines = startup::segment_lines(&plan, &segments);
        if a.json_log {
            // As the generators' lines: events, and nothing on standard output.
            log_access_lines(&lines);
        } else {
            start.push_str(&lines);
        }
        Arc::new(segments)
    });
    let (mut app, source) = default_app(a, booted, handle, auth.clone(), service);
    app.segments = segments.clone();
    let mut sampler = Sampler::start(Arc::clone(&app.generators), Arc::clone(&app.limits))?;
    // Signals are caught from before the address is printed: a SIGTERM sent as soon as the
    // service is announced must stop it cleanly, not kill it.
    let control = server::runtime()?;
    let mut signals = {
        let _entered = control.enter();
        Signals::new()?
    };
    let listeners = start_listeners(a, &app, tls, bound)?;
    let worker_id = app.generator.worker_id();
    let generators = Arc::clone(&app.generators);
    drop(app);
    let mut access = startup::access_lines(
        auth.as_ref(),
        listeners.internal.as_ref().map(Server::addr),
        listeners.server.addr(),
        a.tls_key.as_deref(),
    );
    if let Some(key_file) = &a.id_key_file {
        access.push_str(&startup::public_id_lines(key_file));
    }
    let json = a.json_log;
    if json {
        log_access_lines(&access);
    }
    start.push_str(&access);
    announce(start, &listeners, worker_id, &source, json);
    server::notify::ready();
    let mut reload = || reload_tokens(auth.as_ref());
    let signal = control.block_on(signals.stop(&mut reload));
    server::notify::stopping();
    let joiner = stop_listeners(a, &control, &mut signals, &mut reload, signal, listeners);
    drop(control);
    let _ = joiner.join();
    sampler.stop();
    // The last handle: its state files record exactly how far each range was handed out.
    drop(segments);
    release_generators(generators, &a.name)
}

/// Checks the files the service reads at start before the generators boot (and perhaps take
/// worker table rows): the internal listener's address, the token file, the TLS certificate and
/// key.
fn read_start_files(a: &Config) -> Result<(Option<Auth>, Option<TlsAcceptor>), String> {
    if let Some(internal) = a.metrics_listen
        && internal == a.listen
        && internal.port() != 0
    {
        return Err(format!(
            "--metrics-listen {internal} is --listen's address: give the metrics an address of \
             their own (another port, or an internal interface)"
        ));
    }
    let auth = a.auth_token_file.as_deref().map(Auth::load).transpose()?;
    let tls = match (&a.tls_cert, &a.tls_key) {
        (Some(cert), Some(key)) => Some(server::tls::acceptor(cert, key)?),
        _ => None,
    };
    Ok((auth, tls))
}

/// The generators booted, their metrics samplers, and their start-up lines.
struct Booted {
    named: Vec<Named>,
    reporters: Vec<MetricsReporter>,
    start: String,
}

/// Checks every generator (claiming nothing), then boots them one after the other; an error drops
/// those booted so far, releasing their leases.
fn boot_generators(
    a: &Config,
    plans: Vec<Plan>,
    id_key: Option<&Arc<ringflake::IdCipher>>,
    limits: &Arc<Limits>,
) -> Result<Booted, String> {
    let mut named = Vec::new();
    let mut reporters = Vec::new();
    let mut start = String::new();
    // Every generator checked before any claims a worker id.
    let mut checked = Vec::with_capacity(plans.len());
    for mut plan in plans {
        checked.push(((plan.boot)()?, plan));
    }
    for (build, plan) in checked {
        let label = if plan.name == DEFAULT {
            a.name.as_str()
        } else {
            plan.name.as_str()
        };
        // The generator's threads (filler, lease keeper) log in this span: their lines name it.
        let span = tracing::info_span!(target: log::TARGET, "generator", generator = %label);
        let generator = Arc::new(span.in_scope(build)?);
        reporters.push(
            MetricsReporter::builder(label, &generator)
                .start()
                .map_err(|e| e.to_string())?,
        );
        let mut lines = startup::trade_off(&plan.layout, plan.lead);
        lines.push_str(&startup::state_line(
            plan.state.as_deref(),
            generator.worker_id(),
            plan.lead,
        ));
        lines.push_str(&startup::reserve_lines(&generator));
        let first = start.len();
        if plan.name == DEFAULT {
            start.push_str(&lines);
        } else {
            // The other generators' lines say whose they are, and their worker id.
            let prefix = format!("ringflake: generator {}: ", plan.name);
            for line in lines.lines() {
                let line = line.strip_prefix("ringflake: ").unwrap_or(line);
                let _ = writeln!(start, "{prefix}{line}");
            }
            let _ = writeln!(
                start,
                "{prefix}worker id {} ({}); /id/{}, /ids/{}?count=N, /parse/{}/ID",
                generator.worker_id(),
                plan.source,
                plan.name,
                plan.name,
                plan.name
            );
        }
        // With --log-format json, the lines are events with the generator's fields (and
        // nothing goes to standard output); in text, they are printed once, on standard output.
        let events = if a.json_log { &start[first..] } else { "" };
        for line in events.lines() {
            tracing::info!(
                target: log::TARGET,
                generator = %label,
                worker_id = generator.worker_id(),
                source = %plan.source,
                "{}",
                line.strip_prefix("ringflake: ").unwrap_or(line)
            );
        }
        named.push(Named {
            app: App {
                generator,
                layout: plan.layout,
                tz: plan.tz,
                metrics: None,
                generators: Arc::default(),
                exposure: Exposure::All,
                auth: None,
                max_wait: a.max_wait,
                id_key: id_key.cloned(),
                segments: None,
                limits: Arc::clone(limits),
            },
            name: plan.name,
            source: plan.source,
            lead: plan.lead,
            state: plan.state,
            namespace: plan.namespace,
            history: History::default(),
        });
    }
    Ok(Booted {
        named,
        reporters,
        start,
    })
}

/// The unnamed routes' `App`: generator `default` (the first), every generator by name, the
/// metrics, the tokens; and the description of `default`'s worker id source.
fn default_app(
    a: &Config,
    booted: Booted,
    handle: PrometheusHandle,
    auth: Option<Auth>,
    service: Identity,
) -> (App, String) {
    let Booted {
        named, reporters, ..
    } = booted;
    let default = &named[0];
    let source = default.source.clone();
    let id_key = default.app.id_key.clone();
    let limits = Arc::clone(&default.app.limits);
    let app = App {
        generator: Arc::clone(&default.app.generator),
        layout: default.app.layout,
        tz: default.app.tz.clone(),
        metrics: Some(Arc::new((handle, reporters))),
        generators: Arc::new(Generators::new(named, service)),
        exposure: if a.metrics_listen.is_some() {
            Exposure::Ids
        } else {
            Exposure::All
        },
        auth,
        max_wait: a.max_wait,
        id_key,
        segments: None,
        limits,
    };
    (app, source)
}

/// The listeners serving: the main one and the `--metrics-listen` one, if any.
struct Listeners {
    server: Server,
    internal: Option<Server>,
    threads: usize,
    secure: bool,
}

/// The sockets of `--listen` and `--metrics-listen`, bound, not served yet.
struct Sockets {
    main: Bound,
    internal: Option<Bound>,
}

/// Binds `--metrics-listen` (if given) and `--listen`.
fn bind_listeners(a: &Config) -> Result<Sockets, String> {
    let internal = a.metrics_listen.map(Bound::bind).transpose()?;
    Ok(Sockets {
        main: Bound::bind(a.listen)?,
        internal,
    })
}

impl Sockets {
    /// The addresses as URLs, with what each serves, for the status page.
    fn urls(&self, secure: bool) -> Vec<(String, &'static str)> {
        let scheme = if secure { "https" } else { "http" };
        match &self.internal {
            None => vec![(format!("{scheme}://{}", self.main.addr()), "every route")],
            Some(internal) => vec![
                (format!("{scheme}://{}", self.main.addr()), "IDs"),
                (
                    format!("http://{}", internal.addr()),
                    "metrics and the status page",
                ),
            ],
        }
    }
}

/// Starts the serving threads on `sockets`: the internal listener first (its address is printed
/// before the main one's, which is last), then the main one.
fn start_listeners(
    a: &Config,
    app: &App,
    tls: Option<TlsAcceptor>,
    sockets: Sockets,
) -> Result<Listeners, String> {
    let threads = a.threads.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let grace = Duration::from_secs(a.shutdown_timeout);
    let internal = match sockets.internal {
        Some(bound) => {
            let internal = App {
                exposure: Exposure::Internal,
                auth: None,
                ..app.clone()
            };
            Some(Server::start(&internal, bound, 1, grace, None)?)
        }
        None => None,
    };
    let secure = tls.is_some();
    let server = Server::start(app, sockets.main, threads, grace, tls)?;
    Ok(Listeners {
        server,
        internal,
        threads,
        secure,
    })
}

/// The start-up lines on access (tokens, metrics, what runs in the clear) as events: the
/// warnings among them as warnings.
fn log_access_lines(access: &str) {
    for line in access.lines() {
        let line = line.strip_prefix("ringflake: ").unwrap_or(line);
        match line.strip_prefix("warning: ") {
            Some(warning) => tracing::warn!(target: log::TARGET, "{warning}"),
            None if line.starts_with("no --auth-token-file") => {
                tracing::warn!(target: log::TARGET, "{line}")
            }
            None => tracing::info!(target: log::TARGET, "{line}"),
        }
    }
}

/// Prints the start-up lines in one write, the address last: whoever waits for the address has
/// the rest already. Not `print!`, which panics if standard output was closed. With `json`
/// (`--log-format json`), nothing is printed: the address line is an event, with its fields, as
/// the other start-up lines were, so that every line the process writes is JSON.
fn announce(mut start: String, listeners: &Listeners, worker_id: u64, source: &str, json: bool) {
    let scheme = if listeners.secure { "https" } else { "http" };
    let listening = format!(
        "listening on {scheme}://{} with worker id {worker_id} ({source}); {} serving threads",
        listeners.server.addr(),
        listeners.threads,
    );
    if json {
        tracing::info!(
            target: log::TARGET,
            address = %listeners.server.addr(),
            scheme,
            worker_id,
            source = %source,
            threads = listeners.threads,
            "{listening}"
        );
        return;
    }
    let _ = writeln!(start, "ringflake: {listening}");
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(start.as_bytes());
    let _ = stdout.flush();
}

/// After the first stop signal: stops accepting, lets in-flight requests finish within the
/// grace period, and closes them at once on a second signal. Returns the thread that joins the
/// serving threads.
fn stop_listeners(
    a: &Config,
    control: &tokio::runtime::Runtime,
    signals: &mut Signals,
    reload: &mut impl FnMut(),
    signal: &str,
    listeners: Listeners,
) -> std::thread::JoinHandle<()> {
    tracing::info!(
        target: log::TARGET,
        signal,
        grace_s = a.shutdown_timeout,
        "{signal}: stopping; no new connections, finishing in-flight requests (at most {} s)",
        a.shutdown_timeout
    );
    let Listeners {
        server, internal, ..
    } = listeners;
    let stoppers: Vec<_> = std::iter::once(&server)
        .chain(&internal)
        .map(Server::stopper)
        .collect();
    for s in &stoppers {
        s.signal(Stop::Graceful);
    }
    let (joined_tx, joined_rx) = tokio::sync::oneshot::channel();
    let joiner = std::thread::spawn(move || {
        server.join();
        if let Some(internal) = internal {
            internal.join();
        }
        let _ = joined_tx.send(());
    });
    control.block_on(async {
        tokio::select! {
            _ = joined_rx => {}
            second = signals.stop(reload) => {
                tracing::info!(
                    target: log::TARGET,
                    signal = second,
                    "second {second}: closing open requests now"
                );
                for s in &stoppers {
                    s.signal(Stop::Now);
                }
            }
        }
    });
    joiner
}

/// Closes each generator, which stops its filler and releases its lease, once the serving
/// threads and the sampler (every other handle on them) are gone; says per generator whether its
/// lease was released. `default_label` is the default generator's `--name`.
fn release_generators(generators: Arc<Generators>, default_label: &str) -> Result<(), String> {
    let Ok(generators) = Arc::try_unwrap(generators) else {
        return Err("the generators are still in use after shutdown".into());
    };
    for g in generators.into_list() {
        let label = if g.name == DEFAULT {
            default_label
        } else {
            g.name.as_str()
        };
        let worker_id = g.app.generator.worker_id();
        let lease_until = g.app.generator.stats().lease_until;
        let whose = if g.name == DEFAULT {
            String::new()
        } else {
            format!("generator {}: ", g.name)
        };
        let closed = match Arc::try_unwrap(g.app.generator) {
            Ok(generator) => generator.close(),
            Err(_) => {
                return Err(format!(
                    "{whose}the generator is still in use after shutdown"
                ));
            }
        };
        match (lease_until, closed) {
            (Some(_), Ok(())) => tracing::info!(
                target: log::TARGET,
                generator = %label,
                worker_id,
                "{whose}stopped; the filler is stopped and the lease of worker id {worker_id} \
                 released"
            ),
            (Some(until), Err(e)) => tracing::warn!(
                target: log::TARGET,
                generator = %label,
                worker_id,
                error = %e,
                "{whose}stopped; the filler is stopped, but the lease of worker id {worker_id} \
                 could not be released ({e}): the id stays reserved until the lease expires at \
                 unix second {until}"
            ),
            (None, _) => tracing::info!(
                target: log::TARGET,
                generator = %label,
                worker_id,
                "{whose}stopped; the filler is stopped (worker id {worker_id})"
            ),
        }
    }
    Ok(())
}

/// SIGHUP: reads the token file again, and logs what came of it.
fn reload_tokens(auth: Option<&Auth>) {
    match auth {
        None => tracing::info!(
            target: log::TARGET,
            "SIGHUP: no --auth-token-file, nothing to reload"
        ),
        Some(auth) => match auth.reload() {
            Ok(n) => tracing::info!(
                target: log::TARGET,
                tokens = n,
                file = %auth.path().display(),
                "SIGHUP: {n} bearer token{} from {}",
                if n == 1 { "" } else { "s" },
                auth.path().display()
            ),
            Err(e) => tracing::warn!(
                target: log::TARGET,
                tokens = auth.count(),
                file = %auth.path().display(),
                error = %e,
                "SIGHUP: kept the {} token{} in use: {e}",
                auth.count(),
                if auth.count() == 1 { "" } else { "s" },
            ),
        },
    }
}
