//! The `ringflake` command: an HTTP ID service (`serve`), `gen` and `parse` for scripts and Java
//! migrators, a layout planner (`layout`) and a look at the worker table (`workers`).
//!
//! A thin layer over the library: the generator, layouts, worker tables, metrics and the planner
//! all live in `ringflake`; this binary only reads flags, speaks HTTP and prints.
#![forbid(unsafe_code)]

#[path = "ringflake/args.rs"]
mod args;
#[path = "ringflake/listen.rs"]
mod listen;
#[path = "ringflake/planner.rs"]
mod planner;
#[path = "ringflake/serve.rs"]
mod serve;
#[path = "ringflake/text.rs"]
mod text;

use args::{Cli, Command, GenArgs, ParseArgs, ServeArgs, Source, WorkersArgs};
use clap::{CommandFactory, FromArgMatches};
use std::io::{BufWriter, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match &cli.command {
        Command::Serve(a) => serve_main(a, &matches),
        Command::Gen(a) => gen_main(a, &matches),
        Command::Parse(a) => parse_main(a),
        Command::Layout(a) => {
            planner::report(a, jiff::Timestamp::now().as_second()).map(|r| print!("{r}"))
        }
        Command::Workers(a) => workers_main(a, &matches),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ringflake: error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `ringflake gen -n N`: N IDs, one per line, taken in batches.
fn gen_main(a: &GenArgs, matches: &clap::ArgMatches) -> Result<(), String> {
    let tz = a.layout.zone()?;
    let layout = a.layout.layout(&tz)?;
    let source = a.worker.source(matches)?;
    let generator = args::generator(layout, &source, None)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut batch = vec![0u64; 4096];
    let mut left = a.count;
    while left > 0 {
        let n = left.min(batch.len() as u64) as usize;
        generator
            .next_ids(&mut batch[..n])
            .map_err(|e| e.to_string())?;
        for id in &batch[..n] {
            if let Err(e) = writeln!(out, "{id}") {
                return stdout_error(e);
            }
        }
        left -= n as u64;
    }
    out.flush().or_else(stdout_error)
}

/// A closed pipe (`ringflake gen -n 1000000 | head`) ends output quietly, as `seq` does.
fn stdout_error(e: std::io::Error) -> Result<(), String> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(format!("cannot write to standard output: {e}"))
    }
}

/// `ringflake parse ID…`: parseUID JSON per ID; bad IDs are reported and make the exit non-zero.
fn parse_main(a: &ParseArgs) -> Result<(), String> {
    let tz = a.layout.zone()?;
    let layout = a.layout.layout(&tz)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut bad = 0;
    for text in &a.ids {
        let line = text::parse_id(text)
            .and_then(|id| layout.parse(id).map_err(|e| e.to_string()))
            .and_then(|p| p.to_java_string_in(&tz).map_err(|e| e.to_string()));
        match line {
            Ok(json) => {
                if let Err(e) = writeln!(out, "{json}") {
                    return stdout_error(e);
                }
            }
            Err(message) => {
                let _ = out.flush();
                eprintln!("ringflake: error: {message}");
                bad += 1;
            }
        }
    }
    match bad {
        0 => Ok(()),
        1 => Err("1 ID could not be parsed".into()),
        n => Err(format!("{n} IDs could not be parsed")),
    }
}

/// `ringflake workers`: the worker table, one row per line.
fn workers_main(a: &WorkersArgs, matches: &clap::ArgMatches) -> Result<(), String> {
    let tz = a.layout.zone()?;
    let layout = a.layout.layout(&tz)?;
    let assigner = a.db.assigner(matches)?;
    let rows = assigner.list().map_err(|e| e.to_string())?;
    let table = Source::Table(assigner).describe();
    let mut lines = vec![[
        "ID".to_string(),
        "HOST_NAME".into(),
        "PORT".into(),
        "TYPE".into(),
        "LAUNCH_DATE".into(),
        "LEASE_UNTIL".into(),
    ]];
    for r in &rows {
        let kind = match r.node_type {
            1 => "CONTAINER".to_string(),
            2 => "ACTUAL".to_string(),
            n => n.to_string(),
        };
        let lease = if r.lease_until <= 0 {
            "-".to_string()
        } else {
            jiff::Timestamp::from_second(r.lease_until)
                .map(|t| {
                    t.to_zoned(tz.clone())
                        .strftime("%Y-%m-%d %H:%M:%S")
                        .to_string()
                })
                .unwrap_or_else(|_| r.lease_until.to_string())
        };
        lines.push([
            r.id.to_string(),
            r.host_name.clone(),
            r.port.clone(),
            kind,
            r.launch_date.clone(),
            lease,
        ]);
    }
    let mut widths = [0usize; 6];
    for line in &lines {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in &lines {
        let mut s = String::new();
        for (i, (cell, w)) in line.iter().zip(widths).enumerate() {
            if i + 1 == line.len() {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{cell:<w$}  "));
            }
        }
        if let Err(e) = writeln!(out, "{s}") {
            return stdout_error(e);
        }
    }
    let highest = rows.iter().map(|r| r.id).max().unwrap_or(0);
    let summary = format!(
        "{} {} in {table}; highest worker id {highest} of the layout's {} (worker bits {})",
        rows.len(),
        if rows.len() == 1 { "row" } else { "rows" },
        layout.max_worker_id(),
        layout.worker_bits()
    );
    writeln!(out, "{summary}").or_else(stdout_error)
}

/// `ringflake serve`: boots the generator, serves HTTP until SIGTERM or Ctrl-C, then stops
/// accepting, finishes in-flight requests, and drops the generator (which stops the filler and
/// releases the worker lease).
fn serve_main(a: &ServeArgs, matches: &clap::ArgMatches) -> Result<(), String> {
    let tz = a.layout.zone()?;
    let layout = a.layout.layout(&tz)?;
    let source = a.worker.source(matches)?;
    let generator = Arc::new(args::generator(layout, &source, Some(&a.ring))?);
    let handle = ringflake::install_prometheus_recorder().map_err(|e| e.to_string())?;
    let reporter = ringflake::MetricsReporter::builder(&a.name, &generator)
        .start()
        .map_err(|e| e.to_string())?;
    let app = serve::App {
        generator: Arc::clone(&generator),
        layout,
        tz,
        metrics: Some(Arc::new((handle, reporter))),
    };
    // Signals are caught from before the address is printed: a SIGTERM sent as soon as the
    // service is announced must stop it cleanly, not kill it.
    let control = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the Tokio runtime: {e}"))?;
    let mut signals = {
        let _entered = control.enter();
        Signals::new()?
    };
    let threads = a.threads.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let grace = Duration::from_secs(a.shutdown_timeout);
    let server = serve::Server::start(&app, a.listen, threads, grace)?;
    drop(app);
    println!(
        "ringflake: listening on http://{} with worker id {} ({}), layout {}/{}/{} from epoch \
         second {}, IDs until {}; {threads} serving threads",
        server.addr(),
        generator.worker_id(),
        source.describe(),
        layout.time_bits(),
        layout.worker_bits(),
        layout.seq_bits(),
        layout.epoch_seconds(),
        layout.last_valid_date()
    );
    let _ = std::io::stdout().flush();
    let signal = control.block_on(signals.recv());
    eprintln!(
        "ringflake: {signal}: stopping; no new connections, finishing in-flight requests \
         (at most {} s)",
        a.shutdown_timeout
    );
    let stopper = server.stopper();
    stopper.signal(serve::Stop::Graceful);
    let (joined_tx, joined_rx) = tokio::sync::oneshot::channel();
    let joiner = std::thread::spawn(move || {
        server.join();
        let _ = joined_tx.send(());
    });
    control.block_on(async {
        tokio::select! {
            _ = joined_rx => {}
            second = signals.recv() => {
                eprintln!("ringflake: second {second}: closing open requests now");
                stopper.signal(serve::Stop::Now);
            }
        }
    });
    drop(control);
    let _ = joiner.join();
    let worker_id = generator.worker_id();
    let leased = generator.stats().lease_until.is_some();
    // The serving threads are gone, and with them every other handle on the generator: dropping
    // it stops the filler and releases the lease.
    match Arc::try_unwrap(generator) {
        Ok(g) => drop(g),
        Err(_) => return Err("the generator is still in use after shutdown".into()),
    }
    if leased {
        eprintln!(
            "ringflake: stopped; the filler is stopped and the lease of worker id {worker_id} released"
        );
    } else {
        eprintln!("ringflake: stopped; the filler is stopped (worker id {worker_id})");
    }
    Ok(())
}

/// SIGTERM and SIGINT (Ctrl-C), listened for from before the address is printed, so a signal
/// sent as soon as the service is announced is never the default "terminate at once".
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Self, String> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Signals {
                term: signal(SignalKind::terminate())
                    .map_err(|e| format!("cannot listen for SIGTERM: {e}"))?,
                int: signal(SignalKind::interrupt())
                    .map_err(|e| format!("cannot listen for SIGINT: {e}"))?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// Waits for the next signal and names it.
    async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}
