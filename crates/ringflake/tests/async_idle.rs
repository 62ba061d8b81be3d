//! `next_id_async`: tasks waiting on an empty ring keep no thread busy. Alone in its test binary,
//! because it measures the CPU time of the whole process.
#![cfg(feature = "tokio")]

use ringflake::{CachedUidGenerator, Layout, LeadPolicy, ManualClock};
use std::sync::Arc;
use std::time::Duration;

/// CPU time this process has used (user + system), from /proc/self/stat, in clock ticks.
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of the file (utime, stime) are 11 and 12 after the state field.
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_tasks_do_not_spin() {
    // 13 sequence bits: 8,192 IDs a second, all of them in the ring under a lead cap of 0.
    let layout = Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
    let clock = ManualClock::from_seconds(1_800_000_000);
    let g = Arc::new(
        CachedUidGenerator::builder(layout)
            .worker_id(3)
            .clock(clock.clone())
            .max_lead(Duration::from_secs(0), LeadPolicy::Wait)
            .build()
            .unwrap(),
    );
    // Use up the only second the cap allows.
    for _ in 0..8192 {
        g.next_id_async().await.unwrap();
    }
    let waiting: Vec<_> = (0..16)
        .map(|_| {
            let g = Arc::clone(&g);
            tokio::spawn(async move { g.next_id_async().await })
        })
        .collect();
    // Measure only once every task is waiting: each counts one wait as it finds the ring empty
    // (the runtime's threads may be slow to start them on a busy machine).
    let started = std::time::Instant::now();
    while g.stats().take_waits < 16 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the 16 tasks never reached the empty ring: {:?}",
            g.stats()
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(g.stats().take_waits, 16, "one wait per task");
    let before = cpu_ticks();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let used = cpu_ticks() - before;
    // 16 spinning tasks on 2 threads would burn ~200 ticks (2 s of CPU) in that second.
    assert!(used < 40, "waiting tasks used {used} ticks of CPU in 1 s");
    assert!(
        waiting.iter().all(|t| !t.is_finished()),
        "no ID may exist past the cap"
    );
    clock.advance_seconds(1);
    for t in waiting {
        let id = tokio::time::timeout(Duration::from_secs(5), t)
            .await
            .expect("woken once the clock moved")
            .unwrap()
            .unwrap();
        assert_eq!(layout.parse(id).unwrap().unix_seconds, 1_800_000_001);
    }
}
