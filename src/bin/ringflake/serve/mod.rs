//! `ringflake serve`: the HTTP ID service, a thin layer of hyper over a
//! [`ringflake::CachedUidGenerator`].
//!
//! - [`routes`]: what each request gets (request in, response out), from one route table;
//! - [`server`]: the serving threads, their runtimes and connections, and how they stop;
//! - [`listen`]: the socket and HTTP/1 set-up, shared with `examples/http_floor.rs`;
//! - [`signals`]: SIGTERM and Ctrl-C;
//! - this file: the command's life from flags to exit: boot the generator, serve until a signal,
//!   stop, release the worker lease.

mod listen;
pub mod routes;
mod server;
mod signals;

use crate::args::{self, ServeArgs};
use routes::App;
use server::{Server, Stop};
use signals::Signals;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// Boots the generator, serves HTTP until SIGTERM or Ctrl-C, then stops accepting, finishes
/// in-flight requests, and drops the generator (which stops the filler and releases the worker
/// lease).
pub fn run(a: &ServeArgs, matches: &clap::ArgMatches) -> Result<(), String> {
    let (tz, layout) = a.layout.zone_and_layout()?;
    let source = a.worker.source(matches)?;
    let generator = Arc::new(args::generator(layout, &source, Some(&a.ring))?);
    let handle = ringflake::install_prometheus_recorder().map_err(|e| e.to_string())?;
    let reporter = ringflake::MetricsReporter::builder(&a.name, &generator)
        .start()
        .map_err(|e| e.to_string())?;
    let app = App {
        generator: Arc::clone(&generator),
        layout,
        tz,
        metrics: Some(Arc::new((handle, reporter))),
    };
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
    let server = Server::start(&app, a.listen, threads, grace)?;
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
    stopper.signal(Stop::Graceful);
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
                stopper.signal(Stop::Now);
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
