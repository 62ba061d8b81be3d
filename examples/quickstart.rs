//! Boots a `CachedUidGenerator` with the default layout, takes a few IDs, shows each as
//! UidGenerator's `parseUID` would, and prints the ring's state.
//!
//! ```text
//! cargo run --release --example quickstart
//! RINGFLAKE_WORKER_ID=42 cargo run --release --example quickstart
//! ```

use ringflake::{CachedUidGenerator, FixedWorkerId, Layout};

/// The environment variable holding this node's worker id; 1 when unset.
const WORKER_ID_VAR: &str = "RINGFLAKE_WORKER_ID";

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
    // Unset: worker 1. Set but not a number: an error naming the variable, not a silent fallback.
    let worker = match std::env::var_os(WORKER_ID_VAR) {
        None => FixedWorkerId(1),
        Some(_) => FixedWorkerId::from_env(WORKER_ID_VAR)?,
    };
    let layout = Layout::default();
    let generator = CachedUidGenerator::builder(layout)
        .worker_id_from(&worker)
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
