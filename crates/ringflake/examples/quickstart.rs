//! Boots a `CachedUidGenerator` with the default layout and a worker id taken from the embedded
//! default worker table (the SQLite file `ringflake.db` in the working directory, one new row per
//! boot, with leases so restarts are monotonic and ids are recycled), takes a few IDs, shows each
//! as UidGenerator's `parseUID` would, and prints the ring's state.
//!
//! ```text
//! cargo run --release --example quickstart
//! RINGFLAKE_DB=/var/lib/ids/workers.db cargo run --release --example quickstart
//! RINGFLAKE_WORKER_ID=42 cargo run --release --example quickstart   # no database
//! ```

use ringflake::{CachedUidGenerator, DatabaseAssigner, FixedWorkerId, Layout, WorkerIdAssigner};

/// The environment variable holding a fixed worker id (no database then).
const WORKER_ID_VAR: &str = "RINGFLAKE_WORKER_ID";

/// The environment variable naming the SQLite file; `ringflake.db` when unset.
const DB_VAR: &str = "RINGFLAKE_DB";

const SECONDS_PER_YEAR: f64 = 365.2425 * 86_400.0;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quickstart: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), ringflake::Error> {
    // A fixed id if asked for (not a number: an error naming the variable, not a fallback);
    // otherwise a new row in the SQLite worker table.
    let db = std::env::var(DB_VAR).unwrap_or_else(|_| ringflake::DEFAULT_SQLITE_PATH.to_string());
    let worker: Box<dyn WorkerIdAssigner> = match std::env::var_os(WORKER_ID_VAR) {
        Some(_) => Box::new(FixedWorkerId::from_env(WORKER_ID_VAR)?),
        None => {
            println!("worker table: sqlite file {db}");
            Box::new(DatabaseAssigner::sqlite(&db)?.recycle(true))
        }
    };
    let layout = Layout::default();
    let generator = CachedUidGenerator::builder(layout)
        .worker_id_from(worker.as_ref())
        .build()?;

    println!(
        "layout {}/{}/{} bits (time/worker/sequence), epoch {}, worker id {}",
        layout.time_bits(),
        layout.worker_bits(),
        layout.seq_bits(),
        layout.epoch_seconds(),
        generator.worker_id()
    );
    println!();
    for _ in 0..5 {
        let id = generator.next_id()?;
        println!("{id:>20}  {}", layout.parse(id)?.to_java_string()?);
    }

    let s = generator.stats();
    println!();
    println!("ring");
    println!("  capacity            {:>12} IDs", s.capacity);
    println!("  available           {:>12} IDs", s.available);
    println!("  issued              {:>12} IDs", s.issued);
    println!("  paddings            {:>12} filler rounds", s.paddings);
    println!(
        "  lead                {:>12} s ahead of the clock",
        s.lead_seconds
    );
    println!(
        "  lag                 {:>12} s behind the clock",
        s.lag_seconds
    );
    println!(
        "  remaining lifetime  {:>12.1} years (time bits last until {})",
        s.remaining_seconds as f64 / SECONDS_PER_YEAR,
        layout.last_valid_date()
    );
    Ok(())
}
