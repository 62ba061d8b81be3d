//! `ringflake serve`: the HTTP ID service, a thin layer of hyper over a
//! [`ringflake::CachedUidGenerator`].
//!
//! - [`routes`]: what each request gets (request in, response out), from one route table;
//! - [`server`]: the serving threads, their runtimes and connections, and how they stop;
//! - [`listen`]: the socket and HTTP/1 set-up, shared with `examples/http_floor.rs`;
//! - [`bodies`]: the JSON body of the answers hyper writes itself (400, 414, 431);
//! - [`auth`]: the bearer tokens of `--auth-token-file`;
//! - [`tls`]: HTTPS (`--tls-cert`, `--tls-key`);
//! - [`signals`]: SIGTERM and Ctrl-C stop, SIGHUP reloads the tokens;
//! - [`config`]: the generators, from the flags and `--config`'s file; [`named`]: them by name;
//! - [`status`]: the status page and `/status`; [`leaf`]: Meituan Leaf's routes;
//! - this file: the command's life from flags to exit: boot the generators, serve until a
//!   signal, stop, release the worker leases.

mod auth;
mod bodies;
mod config;
mod grpc;
mod leaf;
mod listen;
mod named;
pub mod routes;
mod server;
mod signals;
mod status;
mod tls;
mod versions;

use crate::args::{self, Lead, ServeArgs};
use crate::layout::thousands;
use auth::Auth;
use named::{Generators, Named};
use ringflake::{Layout, LeadPolicy};
use routes::{App, Exposure};
use server::{Server, Stop};
use signals::Signals;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Boots the generators, serves HTTP until SIGTERM or Ctrl-C, then stops accepting, finishes
/// in-flight requests, and drops the generators (which stops their fillers and releases their
/// worker leases).
pub fn run(a: &ServeArgs, matches: &clap::ArgMatches) -> Result<(), String> {
    // The files the service reads at start are checked before the generators boot (and perhaps
    // take worker table rows).
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
        (Some(cert), Some(key)) => Some(tls::acceptor(cert, key)?),
        _ => None,
    };
    let plans = config::plans(a, matches)?;
    if let Some(clash) = plans
        .iter()
        .find(|p| p.name != config::DEFAULT && p.name == a.name)
    {
        return Err(format!(
            "{}: generator {} has the name of the default generator's metrics label (--name {}): \
             the two would share their series on /metrics; rename one",
            clash.origin, clash.name, a.name
        ));
    }
    let handle = ringflake::install_prometheus_recorder().map_err(|e| e.to_string())?;
    // Booted one after the other; an error drops those booted so far, releasing their leases.
    let mut named = Vec::new();
    let mut reporters = Vec::new();
    let mut start = String::new();
    for plan in plans {
        let boot = args::generator(
            plan.layout,
            &plan.source,
            Some((&plan.ring, plan.lead)),
            plan.state.as_deref(),
        );
        let generator = Arc::new(match boot {
            Ok(g) => g,
            Err(e) if plan.by_flags() => return Err(e),
            Err(e) => return Err(format!("{}: {e}", plan.origin)),
        });
        let label = if plan.name == config::DEFAULT {
            a.name.as_str()
        } else {
            plan.name.as_str()
        };
        reporters.push(
            ringflake::MetricsReporter::builder(label, &generator)
                .start()
                .map_err(|e| e.to_string())?,
        );
        let mut lines = trade_off(&plan.layout, plan.lead);
        lines.push_str(&state_line(
            plan.state.as_deref(),
            generator.worker_id(),
            plan.lead,
        ));
        if plan.name == config::DEFAULT {
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
                plan.source.describe(),
                plan.name,
                plan.name,
                plan.name
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
            },
            name: plan.name,
            source: plan.source.describe(),
            lead: plan.lead,
            state: plan.state,
            history: status::History::default(),
        });
    }
    // The unnamed routes' generator: `default`, first.
    let default = &named[0];
    let (worker_id, source) = (default.app.generator.worker_id(), default.source.clone());
    let app = App {
        generator: Arc::clone(&default.app.generator),
        layout: default.app.layout,
        tz: default.app.tz.clone(),
        metrics: Some(Arc::new((handle, reporters))),
        generators: Arc::new(Generators::new(named)),
        exposure: if a.metrics_listen.is_some() {
            Exposure::Ids
        } else {
            Exposure::All
        },
        auth: auth.clone(),
    };
    let mut sampler = status::Sampler::start(Arc::clone(&app.generators))?;
    // Signals are caught from before the address is printed: a SIGTERM sent as soon as the
    // service is announced must stop it cleanly, not kill it.
    let control = server::runtime()?;
    let mut signals = {
        let _entered = control.enter();
        Signals::new()?
    };
    let threads = a.threads.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let grace = Duration::from_secs(a.shutdown_timeout);
    // The internal listener first: its address is printed before the main one's, which is last.
    let internal = match a.metrics_listen {
        Some(addr) => {
            let internal = App {
                exposure: Exposure::Internal,
                auth: None,
                ..app.clone()
            };
            Some(Server::start(&internal, addr, 1, grace, None)?)
        }
        None => None,
    };
    let secure = tls.is_some();
    let server = Server::start(&app, a.listen, threads, grace, tls)?;
    let generators = Arc::clone(&app.generators);
    drop(app);
    start.push_str(&access_lines(
        auth.as_ref(),
        internal.as_ref().map(Server::addr),
        server.addr(),
        secure,
    ));
    let _ = writeln!(
        start,
        "ringflake: listening on {}://{} with worker id {worker_id} ({source}); {threads} \
         serving threads",
        if secure { "https" } else { "http" },
        server.addr(),
    );
    // One write, the address last: whoever waits for the address has the rest already. Not
    // `print!`, which panics if standard output was closed.
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(start.as_bytes());
    let _ = stdout.flush();
    drop(stdout);
    let mut reload = || reload_tokens(auth.as_ref());
    let signal = control.block_on(signals.stop(&mut reload));
    eprintln!(
        "ringflake: {signal}: stopping; no new connections, finishing in-flight requests \
         (at most {} s)",
        a.shutdown_timeout
    );
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
            second = signals.stop(&mut reload) => {
                eprintln!("ringflake: second {second}: closing open requests now");
                for s in &stoppers {
                    s.signal(Stop::Now);
                }
            }
        }
    });
    drop(control);
    let _ = joiner.join();
    sampler.stop();
    // The serving threads and the sampler are gone, and with them every other handle on the
    // generators: dropping each stops its filler and releases its lease.
    let Ok(generators) = Arc::try_unwrap(generators) else {
        return Err("the generators are still in use after shutdown".into());
    };
    for g in generators.into_list() {
        let worker_id = g.app.generator.worker_id();
        let leased = g.app.generator.stats().lease_until.is_some();
        let whose = if g.name == config::DEFAULT {
            String::new()
        } else {
            format!("generator {}: ", g.name)
        };
        match Arc::try_unwrap(g.app.generator) {
            Ok(generator) => drop(generator),
            Err(_) => {
                return Err(format!(
                    "{whose}the generator is still in use after shutdown"
                ));
            }
        }
        if leased {
            eprintln!(
                "ringflake: {whose}stopped; the filler is stopped and the lease of worker id \
                 {worker_id} released"
            );
        } else {
            eprintln!("ringflake: {whose}stopped; the filler is stopped (worker id {worker_id})");
        }
    }
    Ok(())
}

/// SIGHUP: reads the token file again, and says in one line on standard error what came of it.
fn reload_tokens(auth: Option<&Auth>) {
    match auth {
        None => eprintln!("ringflake: SIGHUP: no --auth-token-file, nothing to reload"),
        Some(auth) => match auth.reload() {
            Ok(n) => eprintln!(
                "ringflake: SIGHUP: {n} bearer token{} from {}",
                if n == 1 { "" } else { "s" },
                auth.path().display()
            ),
            Err(e) => eprintln!(
                "ringflake: SIGHUP: kept the {} token{} in use: {e}",
                auth.count(),
                if auth.count() == 1 { "" } else { "s" },
            ),
        },
    }
}

/// The start-up lines on who may take IDs, where metrics are, and what runs in the clear.
fn access_lines(
    auth: Option<&Auth>,
    internal: Option<std::net::SocketAddr>,
    main: std::net::SocketAddr,
    secure: bool,
) -> String {
    let mut lines = String::new();
    match auth {
        Some(auth) => {
            if let Some(warning) = auth::exposure_warning(auth.path()) {
                lines.push_str(&warning);
            }
            let n = auth.count();
            let _ = writeln!(
                lines,
                "ringflake: {n} bearer token{} from {} (read again on SIGHUP): /id, /ids and \
                 /parse answer 401 without one{}",
                if n == 1 { "" } else { "s" },
                auth.path().display(),
                if secure {
                    ""
                } else {
                    "; without --tls-cert the tokens cross the network in the clear"
                }
            );
        }
        None if !main.ip().is_loopback() => {
            let _ = writeln!(
                lines,
                "ringflake: no --auth-token-file: anyone who reaches {main} can take IDs"
            );
        }
        None => {}
    }
    if let Some(addr) = internal {
        let _ = writeln!(
            lines,
            "ringflake: metrics on http://{addr}/metrics (and /healthz), not on {main}"
        );
    }
    lines
}

/// The layout's epoch for reading: the date if it is midnight UTC, else the second in RFC 3339.
fn epoch_text(layout: &Layout) -> String {
    let epoch = layout.epoch_seconds();
    match jiff::Timestamp::from_second(epoch) {
        Ok(t) if epoch.rem_euclid(86_400) == 0 => {
            t.to_zoned(jiff::tz::TimeZone::UTC).date().to_string()
        }
        Ok(t) => t.to_string(),
        Err(_) => format!("unix second {epoch}"),
    }
}

/// The start-up line on time: what the layout sustains, what borrowing under `lead` absorbs, and
/// what happens at the cap, in numbers.
fn trade_off(layout: &Layout, lead: Lead) -> String {
    let per_second = layout.max_sequence() + 1;
    let rate = thousands(per_second);
    // The last day of a layout that lasts years; the second of one that lasts less.
    let last = layout.last_valid_date();
    let until = match last.split_once('T') {
        Some((date, _)) if layout.max_delta_seconds() >= 366 * 86_400 => date,
        _ => last.as_str(),
    };
    let mut line = format!(
        "ringflake: layout {}/{}/{} from {} (until {until}): sustains {rate} IDs/s per worker \
         without borrowing; ",
        layout.time_bits(),
        layout.worker_bits(),
        layout.seq_bits(),
        epoch_text(layout),
    );
    match lead {
        Lead::Capped(seconds, policy) => {
            let at_cap = match policy {
                LeadPolicy::Wait => "takes wait for the clock (lead-policy wait)",
                LeadPolicy::Fail => "takes fail with 503 (lead-policy fail)",
            };
            if seconds == 0 {
                let _ = write!(
                    line,
                    "no borrowing (max-lead 0 s): IDs never run ahead of the clock; above that \
                     rate, {at_cap}"
                );
            } else {
                let _ = write!(
                    line,
                    "borrowing absorbs a burst of {} IDs (max-lead {seconds} s); at the cap, {at_cap}",
                    thousands(seconds.saturating_mul(per_second))
                );
            }
            let batch = seconds.saturating_add(1).saturating_mul(per_second);
            let _ = writeln!(
                line,
                "; /ids?count=N up to {}",
                thousands(batch.min(routes::MAX_COUNT as u64))
            );
        }
        Lead::Unbounded => {
            let _ = writeln!(
                line,
                "borrowing is unbounded (--unbounded-lead, Java's behaviour): every {rate} IDs \
                 beyond that rate use up one more second of the layout's lifetime ahead of the \
                 clock, and how fast that ends it at full speed is your risk"
            );
        }
    }
    line
}

/// The start-up line on the state file: where it is, or what running without one risks.
fn state_line(state: Option<&Path>, worker_id: u64, lead: Lead) -> String {
    match state {
        Some(path) => {
            let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            format!(
                "ringflake: state file {}: a restart of worker id {worker_id} starts above the \
                 last second it records\n",
                shown.display()
            )
        }
        None => {
            let when = match lead {
                Lead::Capped(0, _) => "in the second this run ends".into(),
                Lead::Capped(seconds, _) => {
                    format!("within {seconds} s (max-lead) of this run's end")
                }
                Lead::Unbounded => {
                    "before the clock passes the last second this run borrowed".into()
                }
            };
            format!(
                "ringflake: no state file (--no-state-file): a restart of worker id {worker_id} \
                 {when} can repeat its IDs\n"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_trade_off_in_numbers() {
        let line = trade_off(
            &Layout::default(),
            Lead::Capped(ringflake::DEFAULT_MAX_LEAD.as_secs(), LeadPolicy::Wait),
        );
        assert_eq!(
            line,
            "ringflake: layout 31/10/22 from 2025-01-01 (until 2093-01-19): sustains 4,194,304 \
             IDs/s per worker without borrowing; borrowing absorbs a burst of 41,943,040 IDs \
             (max-lead 10 s); at the cap, takes wait for the clock (lead-policy wait); \
             /ids?count=N up to 100,000\n"
        );
    }

    #[test]
    fn other_caps_and_epochs() {
        // UidGenerator's default epoch, midnight in Beijing: not a UTC date.
        let small = Layout::new(30, 23, 10, 1_463_673_600).unwrap();
        let line = trade_off(&small, Lead::Capped(1, LeadPolicy::Fail));
        assert!(
            line.starts_with(
                "ringflake: layout 30/23/10 from 2016-05-19T16:00:00Z (until 2050-05-29): "
            ),
            "{line}"
        );
        assert!(
            line.contains(
                "sustains 1,024 IDs/s per worker without borrowing; borrowing absorbs a burst of \
                 1,024 IDs (max-lead 1 s); at the cap, takes fail with 503 (lead-policy fail); \
                 /ids?count=N up to 2,048\n"
            ),
            "{line}"
        );
        let line = trade_off(&small, Lead::Capped(0, LeadPolicy::Wait));
        assert!(
            line.contains("no borrowing (max-lead 0 s): IDs never run ahead of the clock; above that rate, takes wait for the clock (lead-policy wait); /ids?count=N up to 1,024"),
            "{line}"
        );
        let line = trade_off(&Layout::default(), Lead::Unbounded);
        assert!(
            line.contains(
                "borrowing is unbounded (--unbounded-lead, Java's behaviour): every 4,194,304 IDs"
            ),
            "{line}"
        );
        assert!(line.contains("is your risk\n"), "{line}");
    }

    #[test]
    fn the_state_file_or_the_risk() {
        let line = state_line(
            Some(Path::new("/var/lib/ids/ringflake.state")),
            5,
            Lead::Unbounded,
        );
        assert_eq!(
            line,
            "ringflake: state file /var/lib/ids/ringflake.state: a restart of worker id 5 starts \
             above the last second it records\n"
        );
        let line = state_line(None, 5, Lead::Capped(10, LeadPolicy::Wait));
        assert_eq!(
            line,
            "ringflake: no state file (--no-state-file): a restart of worker id 5 within 10 s \
             (max-lead) of this run's end can repeat its IDs\n"
        );
        let line = state_line(None, 5, Lead::Capped(0, LeadPolicy::Wait));
        assert!(
            line.contains("a restart of worker id 5 in the second this run ends can repeat"),
            "{line}"
        );
        let line = state_line(None, 5, Lead::Unbounded);
        assert!(
            line.contains(
                "a restart of worker id 5 before the clock passes the last second this run \
                 borrowed can repeat its IDs"
            ),
            "{line}"
        );
    }
}
