//! Stress: many consumer threads, real clock, background filler. Every ID unique, every thread's
//! IDs strictly increasing.

use ringflake::{CachedUidGenerator, DefaultUidGenerator, Layout, LeadPolicy, ManualClock};
use std::time::Duration;

const TOTAL: usize = if cfg!(debug_assertions) {
    10_000_000
} else {
    20_000_000
};

fn run(threads: usize, mode: usize) {
    let g = CachedUidGenerator::builder(Layout::default())
        .worker_id(11)
        .build()
        .unwrap();
    let per = TOTAL / threads;
    let mut all: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let g = &g;
                s.spawn(move || {
                    let mut ids = Vec::with_capacity(per);
                    let mut buf = [0u64; 64];
                    while ids.len() < per {
                        match (mode + t) % 3 {
                            0 => ids.push(g.next_id().unwrap()),
                            1 => {
                                let n = buf.len().min(per - ids.len());
                                g.next_ids(&mut buf[..n]).unwrap();
                                ids.extend_from_slice(&buf[..n]);
                            }
                            _ => {
                                if let Some(id) = g.try_next_id() {
                                    ids.push(id);
                                }
                            }
                        }
                    }
                    assert!(
                        ids.windows(2).all(|w| w[0] < w[1]),
                        "thread {t}: not strictly increasing"
                    );
                    ids
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let n = all.len();
    assert_eq!(n, per * threads);
    all.sort_unstable();
    all.dedup();
    assert_eq!(
        all.len(),
        n,
        "{} duplicates with {threads} threads",
        n - all.len()
    );
    let s = g.stats();
    assert!(s.issued >= n as u64, "issued {} < taken {n}", s.issued);
    assert!(all.iter().all(|&id| id <= i64::MAX as u64));
}

#[test]
fn spmc_next_id_1_thread() {
    run(1, 0);
}

#[test]
fn mpmc_next_id_2_threads() {
    run(2, 0);
}

#[test]
fn mpmc_mixed_4_threads() {
    run(4, 1);
}

#[test]
fn mpmc_mixed_8_threads() {
    run(8, 2);
}

#[test]
fn default_generator_threads_unique() {
    // 24 sequence bits: plenty of IDs per second for a stress run at the real clock.
    let layout = Layout::new(31, 8, 24, ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
    let g = DefaultUidGenerator::builder(layout)
        .worker_id(3)
        .build()
        .unwrap();
    let mut all: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let ids: Vec<u64> = (0..200_000).map(|_| g.next_id().unwrap()).collect();
                    assert!(ids.windows(2).all(|w| w[0] < w[1]));
                    ids
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n);
}

/// The per-thread chunk cache of `next_id` is per generator: interleaving two generators (and a
/// third that replaces a dropped one) on one thread never hands out another generator's IDs.
#[test]
fn interleaved_generators_on_one_thread() {
    let layout = Layout::default();
    let build = |w| {
        CachedUidGenerator::builder(layout)
            .worker_id(w)
            .build()
            .unwrap()
    };
    let a = build(1);
    let mut b = build(2);
    let mut seen = std::collections::HashSet::new();
    for round in 0..200_000u64 {
        if round == 100_000 {
            b = build(3); // same thread, a new generator in the dropped one's place
        }
        let id_a = a.next_id().unwrap();
        let id_b = b.next_id().unwrap();
        assert_eq!(layout.parse(id_a).unwrap().worker_id, 1);
        assert_eq!(
            layout.parse(id_b).unwrap().worker_id,
            if round < 100_000 { 2 } else { 3 }
        );
        assert!(
            seen.insert(id_a) && seen.insert(id_b),
            "duplicate in round {round}"
        );
    }
}

/// Batch takes larger than the ring, with the filler running: nothing is lapped or wasted, so
/// `issued` counts exactly the IDs taken and the lead stays what the demand requires. The clock
/// is frozen, so neither depends on how fast the machine takes them: no ID goes stale (nothing is
/// discarded for age), and the lead is the demand's alone.
#[test]
fn large_batches_waste_nothing() {
    let clock = ManualClock::from_seconds(ringflake::DEFAULT_EPOCH_SECONDS + 100_000_000);
    let g = CachedUidGenerator::builder(
        // 13 sequence bits and boost power 3: a ring of 65,536 IDs, 8 seconds' worth.
        Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap(),
    )
    .worker_id(4)
    .clock(clock)
    .boost_power(3)
    // No cap this test could reach (at Fail, so that reaching it fails instead of waiting for a
    // clock that never moves).
    .max_lead(Duration::from_secs(100 * 365 * 86_400), LeadPolicy::Fail)
    .build()
    .unwrap();
    let cap = g.stats().capacity as usize;
    assert_eq!(cap, 65_536);
    let mut buf = vec![0u64; cap];
    let mut last = 0;
    for _ in 0..5 {
        g.next_ids(&mut buf).unwrap();
        assert!(buf[0] > last && buf.windows(2).all(|w| w[0] < w[1]));
        last = buf[cap - 1];
    }
    let s = g.stats();
    assert_eq!(s.issued, 5 * cap as u64, "{s:?}");
    assert_eq!(s.discarded, 0, "{s:?}");
    // 5 rings of 8 s each were taken at a frozen clock (seconds 0..=39 ahead of it); the ring's
    // own span adds at most 8 more.
    assert!((5 * 8 - 1..=5 * 8 + 8).contains(&s.lead_seconds), "{s:?}");
}
