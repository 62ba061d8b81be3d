//! `next_id_async`: many tasks on a multi-thread runtime take IDs through empty-ring moments.
#![cfg(feature = "tokio")]

use ringflake::{CachedUidGenerator, Clock, Layout, LeadPolicy, ManualClock};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const TASKS: u64 = 64;
const PER_TASK: u64 = 20_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_tasks_through_empty_rings() {
    // 13 sequence bits and a ring of exactly one second (8,192 IDs, boost power 0). The clock is
    // frozen and the filler may not borrow a single second ahead of it: until the clock moves,
    // the ring holds one second's IDs and no more, however fast the filler is. The 1,280,000 IDs
    // the tasks want are 157 seconds' worth, so they must drain the ring and wait on it again and
    // again: the empty ring is made by construction, not left to the machine's speed.
    let layout = Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
    let start = ringflake::DEFAULT_EPOCH_SECONDS + 100_000_000;
    let clock = ManualClock::from_seconds(start);
    let g = Arc::new(
        CachedUidGenerator::builder(layout)
            .worker_id(3)
            .boost_power(0)
            .clock(clock.clone())
            .max_lead(Duration::ZERO, LeadPolicy::Wait)
            .build()
            .unwrap(),
    );
    assert_eq!(g.stats().capacity, 8_192);

    // The driver moves the clock one second on only after a take has found the ring empty
    // (take_waits went up), then runs a filler round itself (the background filler would come
    // on its own tick, up to 250 ms later). So every second the tasks get was preceded by a wait.
    let done = Arc::new(AtomicBool::new(false));
    let driver = {
        let (g, clock, done) = (Arc::clone(&g), clock.clone(), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut seen = 0;
            let mut advances = 0u64;
            while !done.load(Ordering::SeqCst) {
                let waits = g.stats().take_waits;
                if waits > seen {
                    seen = waits;
                    clock.advance_seconds(1);
                    advances += 1;
                    g.pad();
                } else {
                    std::thread::sleep(Duration::from_micros(100));
                }
            }
            advances
        })
    };

    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let g = Arc::clone(&g);
            tokio::spawn(async move {
                let mut ids = Vec::with_capacity(PER_TASK as usize);
                for _ in 0..PER_TASK {
                    ids.push(g.next_id_async().await.unwrap());
                }
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "per-task order");
                ids
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    done.store(true, Ordering::SeqCst);
    let advances = driver.join().unwrap();

    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "duplicates");
    assert_eq!(n as u64, TASKS * PER_TASK);
    // At most 8,192 IDs per clock second: the clock had to move at least 156 times, each time
    // after a take had waited on an empty ring.
    let min_advances = (TASKS * PER_TASK).div_ceil(8_192) - 1;
    assert!(
        advances >= min_advances,
        "{advances} clock moves for {n} IDs"
    );
    let s = g.stats();
    assert!(
        s.take_waits >= min_advances,
        "{} waits on an empty ring: {s:?}",
        s.take_waits
    );
    // And no ID was taken from a second the clock had not reached (the lead cap of 0 held).
    let newest = layout.parse(*all.last().unwrap()).unwrap().unix_seconds;
    assert!(
        newest <= clock.now_seconds(),
        "ID of second {newest}, clock at {}",
        clock.now_seconds()
    );
}
