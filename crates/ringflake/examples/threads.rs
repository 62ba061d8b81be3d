//! The generator in a plain threaded program: one `CachedUidGenerator` behind an `Arc`, any
//! number of threads taking IDs with `next_id` (one atomic add each), no async runtime.
//!
//! ```sh
//! cargo run --release --example threads
//! ```
//!
//! Four threads take 250,000 IDs each; the program checks that each thread's IDs strictly
//! increase and that all one million are unique, then prints the rate and the ring's state.

use ringflake::{CachedUidGenerator, Layout};
use std::collections::HashSet;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

const THREADS: usize = 4;
const PER_THREAD: usize = 250_000;

fn main() -> Result<(), ringflake::Error> {
    let layout = Layout::default();
    // A fixed worker id keeps the example free of a database; DatabaseAssigner::sqlite(...) gives
    // each boot its own.
    let generator = Arc::new(CachedUidGenerator::builder(layout).worker_id(3).build()?);

    let start = Instant::now();
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let generator = Arc::clone(&generator);
            thread::spawn(move || -> Result<Vec<u64>, ringflake::Error> {
                let mut ids = Vec::with_capacity(PER_THREAD);
                for _ in 0..PER_THREAD {
                    ids.push(generator.next_id()?);
                }
                Ok(ids)
            })
        })
        .collect();
    let mut all = HashSet::with_capacity(THREADS * PER_THREAD);
    for worker in workers {
        let ids = worker.join().expect("a taking thread panicked")?;
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "each thread's IDs increase"
        );
        all.extend(ids);
    }
    let elapsed = start.elapsed();
    assert_eq!(all.len(), THREADS * PER_THREAD, "all IDs are unique");

    let first = *all.iter().min().unwrap_or(&0);
    println!(
        "{THREADS} threads took {} unique IDs in {elapsed:.2?} ({:.1} M IDs/s)",
        all.len(),
        all.len() as f64 / elapsed.as_secs_f64() / 1e6
    );
    println!("first: {}", layout.parse(first)?.to_java_string()?);
    let stats = generator.stats();
    println!(
        "ring: {} of {} IDs ready, {} s borrowed ahead of the clock, {} takes waited",
        stats.available, stats.capacity, stats.lead_seconds, stats.take_waits
    );
    Ok(())
}
