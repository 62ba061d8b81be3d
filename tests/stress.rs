//! Stress: many consumer threads, real clock, background filler. Every ID unique, every thread's
//! IDs strictly increasing.

use ringflake::{CachedUidGenerator, DefaultUidGenerator, Layout};

/// 13 sequence bits (8,192 IDs a second): the pre-2026 default, small enough to go through many
/// seconds quickly. Tests that depend on the sequence width say so with this layout.
fn layout13() -> Layout {
    Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap()
}

const TOTAL: usize = if cfg!(debug_assertions) {
    10_000_000
} else {
    20_000_000
};

fn run(threads: usize, mode: usize) {
    let g = CachedUidGenerator::builder(layout13())
        .unbounded_lead()
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
    let layout = layout13();
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
/// `issued` counts exactly the IDs taken and the lead stays what the demand requires.
#[test]
fn large_batches_waste_nothing() {
    let g = CachedUidGenerator::builder(layout13())
        .unbounded_lead()
        .worker_id(4)
        .build()
        .unwrap();
    let cap = g.stats().capacity as usize;
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
    // 5 rings of 8 s each were needed; the ring's own span adds at most 8 more.
    assert!(s.lead_seconds <= 5 * 8 + 8, "{s:?}");
}
