//! N takes on one take path, for counting instructions per ID with callgrind
//! (`scripts/callgrind.sh` runs it at two N and divides the difference).
//!
//! ```sh
//! cargo run --release --example callgrind -- local 1000000
//! ```
//!
//! Paths: `local` (a `LocalTaker`, the per-thread path), `take` (`next_id`, one `fetch_add` per
//! ID) and `fetch_add` (the floor: a padded `AtomicU64` alone). The generator is built as the
//! benches build it (unbounded borrowing) but without a background filler: the taking thread
//! fills the ring when it runs dry, so the count includes making the IDs and does not depend on
//! how threads are scheduled.

use crossbeam_utils::CachePadded;
use ringflake::{CachedUidGenerator, Layout};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

fn generator() -> CachedUidGenerator {
    CachedUidGenerator::builder(Layout::default())
        .worker_id(1)
        .unbounded_lead()
        .background_filler(false)
        .build()
        .expect("build CachedUidGenerator")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_default();
    let n: u64 = match args.next().map(|n| n.parse()) {
        Some(Ok(n)) => n,
        _ => {
            eprintln!("usage: callgrind <local|take|fetch_add> <N>");
            std::process::exit(2);
        }
    };
    let last = match path.as_str() {
        "local" => {
            let g = generator();
            let mut taker = g.local();
            let mut last = 0;
            for _ in 0..n {
                last = black_box(taker.next_id().expect("next_id"));
            }
            last
        }
        "take" => {
            let g = generator();
            let mut last = 0;
            for _ in 0..n {
                last = black_box(g.next_id().expect("next_id"));
            }
            last
        }
        "fetch_add" => {
            let counter = CachePadded::new(AtomicU64::new(0));
            let mut last = 0;
            for _ in 0..n {
                last = black_box(counter.fetch_add(1, Ordering::Relaxed));
            }
            last
        }
        other => {
            eprintln!("unknown path {other:?}: local, take or fetch_add");
            std::process::exit(2);
        }
    };
    println!("{path}: {n} takes, last {last}");
}
