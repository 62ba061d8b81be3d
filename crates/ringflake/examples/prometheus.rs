//! Serves ringflake's Prometheus series on `http://127.0.0.1:9464/metrics` while two generators
//! run a varying load: `orders` alternates idle spells, steady traffic and bursts that drain its
//! ring (takes wait, the filler borrows seconds ahead); `users` runs a light, steady trickle.
//!
//! ```text
//! cargo run --release --example prometheus
//! RINGFLAKE_METRICS_ADDR=127.0.0.1:9000 RINGFLAKE_RUN_SECS=60 cargo run --release --example prometheus
//! ```
//!
//! Then point Prometheus at it with `examples/prometheus.yml`, which also loads the alert rules,
//! and import `examples/grafana-dashboard.json` into Grafana. It runs until killed, or for
//! `RINGFLAKE_RUN_SECS` seconds.

use ringflake::{CachedUidGenerator, Layout, MetricsReporter, install_prometheus};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Where `/metrics` is served; `examples/prometheus.yml` scrapes the default.
const ADDR_VAR: &str = "RINGFLAKE_METRICS_ADDR";
const DEFAULT_ADDR: &str = "127.0.0.1:9464";
/// Stop after this many seconds; unset: run until killed.
const RUN_SECS_VAR: &str = "RINGFLAKE_RUN_SECS";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("prometheus example: {e}");
            ExitCode::FAILURE
        }
    }
}

fn env_or<T: std::str::FromStr>(var: &str, default: Option<T>) -> Result<Option<T>, String>
where
    T::Err: std::fmt::Display,
{
    match std::env::var(var) {
        Err(_) => Ok(default),
        Ok(v) => v
            .parse()
            .map(Some)
            .map_err(|e| format!("{var}={v:?} is not valid: {e}")),
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr =
        env_or(ADDR_VAR, Some(DEFAULT_ADDR.parse()?))?.ok_or("no metrics address")?;
    let run_for = env_or::<u64>(RUN_SECS_VAR, None)?.map(Duration::from_secs);

    // The recorder first: reporters register their series with it when they start.
    let _handle = install_prometheus(addr)?;
    println!("serving http://{addr}/metrics");

    let layout = Layout::default();
    let orders = Arc::new(CachedUidGenerator::builder(layout).worker_id(1).build()?);
    let users = Arc::new(CachedUidGenerator::builder(layout).worker_id(2).build()?);
    // This demo's fleet uses worker ids 0 to 2; a real deployment with a worker table counts its
    // rows (DatabaseAssigner::list) now and then and reports what is left.
    let remaining = move || Some(layout.max_worker_id() - 2);
    let _orders_metrics = MetricsReporter::builder("orders", &orders)
        .worker_ids_remaining(remaining)
        .start()?;
    let _users_metrics = MetricsReporter::builder("users", &users)
        .worker_ids_remaining(remaining)
        .start()?;

    // Set when RINGFLAKE_RUN_SECS have passed; every loop below checks it.
    let stop = Arc::new(AtomicBool::new(false));
    if let Some(d) = run_for {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            std::thread::sleep(d);
            stop.store(true, Ordering::Relaxed);
        });
    }
    let trickle = {
        let (users, stop) = (Arc::clone(&users), Arc::clone(&stop));
        std::thread::spawn(move || paced(&users, 300, Duration::MAX, &stop))
    };

    let start = Instant::now();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64 | 1);
    let mut rng = XorShift(seed);
    let mut cycle = 0u64;
    let mut result = Ok(());
    while !stop.load(Ordering::Relaxed) && result.is_ok() {
        cycle += 1;
        result = phase(&orders, cycle, &mut rng, &stop);
    }
    stop.store(true, Ordering::Relaxed);
    let trickle = trickle.join().map_err(|_| "the users thread panicked")?;
    let s = orders.stats();
    println!(
        "done after {:.0?}: orders issued {}, take waits {}, lead {} s",
        start.elapsed(),
        s.issued,
        s.take_waits,
        s.lead_seconds
    );
    result?;
    trickle?;
    Ok(())
}

/// One cycle of the `orders` load: idle, steady, a few bursts, with varying sizes.
fn phase(
    g: &CachedUidGenerator,
    cycle: u64,
    rng: &mut XorShift,
    stop: &AtomicBool,
) -> Result<(), ringflake::Error> {
    let stopped = || stop.load(Ordering::Relaxed);
    let idle = Duration::from_millis(2_000 + rng.below(4_000));
    println!("cycle {cycle}: idle {idle:.1?} at 50 IDs/s");
    paced(g, 50, idle, stop)?;
    if stopped() {
        return Ok(());
    }

    let rate = 1_000 + rng.below(6_000);
    let steady = Duration::from_millis(3_000 + rng.below(3_000));
    println!("cycle {cycle}: steady {rate} IDs/s for {steady:.1?}");
    paced(g, rate, steady, stop)?;
    if stopped() {
        return Ok(());
    }

    // Bursts: one to three rings' worth as fast as possible. The ring drains, takes wait for
    // the filler, and the filler borrows seconds ahead of the clock (8,192 IDs per second).
    let bursts = 1 + rng.below(4);
    for b in 0..bursts {
        if stopped() {
            break;
        }
        let n = g.stats().capacity * (1 + rng.below(3));
        let t = Instant::now();
        for _ in 0..n {
            g.next_id()?;
        }
        let s = g.stats();
        println!(
            "cycle {cycle}: burst {}/{bursts}: {n} IDs in {:.1?}, lead {} s, waits {}",
            b + 1,
            t.elapsed(),
            s.lead_seconds,
            s.take_waits
        );
        std::thread::sleep(Duration::from_millis(200 + rng.below(800)));
    }
    Ok(())
}

/// Takes about `per_second` IDs a second for `how_long`, in 10 ms slices.
fn paced(
    g: &CachedUidGenerator,
    per_second: u64,
    how_long: Duration,
    stop: &AtomicBool,
) -> Result<(), ringflake::Error> {
    const SLICE: Duration = Duration::from_millis(10);
    let start = Instant::now();
    let mut taken = 0u64;
    while start.elapsed() < how_long && !stop.load(Ordering::Relaxed) {
        let due = (start.elapsed().as_secs_f64() * per_second as f64) as u64;
        while taken < due {
            g.next_id()?;
            taken += 1;
        }
        std::thread::sleep(SLICE);
    }
    Ok(())
}

/// A small deterministic generator of varying phase lengths (no dependency for a demo).
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}
