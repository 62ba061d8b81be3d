//! Stress: many consumer threads, real clock, background filler. Every ID unique, every thread's
//! IDs strictly increasing.

use ringflake::{CachedUidGenerator, DefaultUidGenerator, Layout, LeadPolicy, ManualClock};
use std::time::Duration;

const TOTAL: usize = if cfg!(debug_assertions) {
    10_000_000
} else {
    20_000_000
};

/// Runs `take` on `threads` threads (it gets the thread's number) and returns every ID they took,
/// sorted, after checking that each thread's IDs strictly increase and that no ID was taken twice.
fn on_threads(threads: usize, take: impl Fn(usize) -> Vec<u64> + Sync) -> Vec<u64> {
    let mut all: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let take = &take;
                s.spawn(move || {
                    let ids = take(t);
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
    all.sort_unstable();
    all.dedup();
    assert_eq!(
        all.len(),
        n,
        "{} duplicates with {threads} threads",
        n - all.len()
    );
    all
}

fn run(threads: usize, mode: usize) {
    let g = CachedUidGenerator::builder(Layout::default())
        .worker_id(11)
        .build()
        .unwrap();
    let per = TOTAL / threads;
    let all = on_threads(threads, |t| {
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
        ids
    });
    let n = all.len();
    assert_eq!(n, per * threads);
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
    let all = on_threads(4, |_| (0..200_000).map(|_| g.next_id().unwrap()).collect());
    assert_eq!(all.len(), 4 * 200_000);
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

/// The per-thread path: `threads` threads with a `LocalTaker` each, real clock, background
/// filler. Every ID unique, each thread's strictly increasing, and once the takers are dropped
/// `issued` is exactly the number of IDs taken.
fn run_local(threads: usize) {
    let g = CachedUidGenerator::builder(Layout::default())
        .worker_id(12)
        .build()
        .unwrap();
    let per = TOTAL / threads;
    let all = on_threads(threads, |_| {
        let mut taker = g.local();
        (0..per).map(|_| taker.next_id().unwrap()).collect()
    });
    let n = all.len();
    assert_eq!(n, per * threads);
    let s = g.stats();
    assert_eq!(s.issued, n as u64, "{threads} threads: {s:?}");
}

#[test]
fn local_1_thread() {
    run_local(1);
}

#[test]
fn local_2_threads() {
    run_local(2);
}

#[test]
fn local_4_threads() {
    run_local(4);
}

#[test]
fn local_8_threads() {
    run_local(8);
}

/// Counters are exact with takers: at a frozen clock (nothing goes stale), takers take counts
/// that are not multiples of their block, one thread also takes with `next_id` (so blocks
/// straddle chunks), and after the takers are dropped `issued` is the IDs taken and `issued +
/// discarded` is every ring position claimed: the leftovers of the blocks are discarded, none
/// lost and none counted twice.
#[test]
fn local_counters_exact_after_drop() {
    let layout = Layout::default();
    let clock = ManualClock::from_seconds(ringflake::DEFAULT_EPOCH_SECONDS + 100_000_000);
    let g = CachedUidGenerator::builder(layout)
        .worker_id(5)
        .clock(clock)
        .unbounded_lead()
        .build()
        .unwrap();
    let first = layout.decompose(g.next_id().unwrap()).unwrap();
    assert_eq!(first.sequence, 0);
    // The ring position of an ID: seconds since the first, times IDs a second, plus sequence.
    let position = |id: u64| {
        let p = layout.decompose(id).unwrap();
        ((p.delta_seconds - first.delta_seconds) << layout.seq_bits()) + p.sequence
    };
    let mut issued = 1;
    for threads in [1, 2, 4, 8] {
        let taken: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let g = &g;
                    s.spawn(move || {
                        let mut taker = g.local();
                        let n = 300_000 + 4_099 * t;
                        let mut last = 0;
                        let mut taken = 0;
                        for i in 0..n {
                            let id = taker.next_id().unwrap();
                            assert!(id > last, "thread {t}: not strictly increasing");
                            last = id;
                            taken += 1;
                            if t == 0 && i % 1_000 == 0 {
                                g.next_id().unwrap();
                                taken += 1;
                            }
                        }
                        taken
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        issued += taken;
        let s = g.stats();
        assert_eq!(s.issued, issued, "{threads} threads: {s:?}");
        let claimed = position(g.next_id().unwrap());
        issued += 1;
        assert_eq!(s.issued + s.discarded, claimed, "{threads} threads: {s:?}");
        assert!(
            s.discarded > 0,
            "{threads} threads: the blocks' leftovers: {s:?}"
        );
    }
}

/// `max_lag` with a taker: a block whose second falls `max_lag` behind the filler's clock is
/// given back (counted as discarded), never handed out; the taker's next ID is of the current
/// second.
#[test]
fn local_block_gone_stale_is_not_handed_out() {
    let layout = Layout::default();
    let clock = ManualClock::from_seconds(ringflake::DEFAULT_EPOCH_SECONDS + 100_000_000);
    let g = CachedUidGenerator::builder(layout)
        .worker_id(6)
        .clock(clock.clone())
        .background_filler(false)
        .build()
        .unwrap();
    let mut taker = g.local();
    let a = layout.decompose(taker.next_id().unwrap()).unwrap();
    assert_eq!(taker.ready(), 1023);
    clock.advance_seconds(2);
    g.pad(); // a filler round: it reads the clock and sweeps the ring
    let b = layout.decompose(taker.next_id().unwrap()).unwrap();
    assert_eq!(
        b.delta_seconds,
        a.delta_seconds + 2,
        "the taker handed out an ID {} s behind the clock (max_lag 1 s)",
        a.delta_seconds + 2 - b.delta_seconds
    );
    drop(taker);
    let s = g.stats();
    assert_eq!(s.issued, 2, "{s:?}");
    // The stale block's 1,023, the new block's 1,023, and the ring's own stale IDs swept.
    assert!(s.discarded >= 2 * 1023, "{s:?}");
}

/// While takers run, every stats snapshot counts as issued at most what they handed out so far
/// (a held block is not counted before its taker moves on), and `issued` never decreases, even
/// as blocks are given back stale (real clock, `max_lag` 1 s) or on drop.
#[test]
fn local_issued_never_ahead_and_never_decreasing() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let g = CachedUidGenerator::builder(Layout::default())
        .worker_id(13)
        .build()
        .unwrap();
    let handed = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let failure = std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                // Takers come and go: each gives back the rest of its block when dropped.
                while !stop.load(Ordering::Relaxed) {
                    let mut taker = g.local();
                    for _ in 0..50_000 {
                        taker.next_id().unwrap();
                        handed.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
        let mut last = 0;
        let start = std::time::Instant::now();
        // A failure stops the takers before it is reported (else the scope would wait forever).
        let mut failure = None;
        while failure.is_none() && start.elapsed() < Duration::from_secs(3) {
            let issued = g.stats().issued;
            let handed = handed.load(Ordering::SeqCst);
            if issued > handed {
                failure = Some(format!("issued {issued} > handed out {handed}"));
            } else if issued < last {
                failure = Some(format!("issued went down: {last} -> {issued}"));
            }
            last = issued;
        }
        stop.store(true, Ordering::Relaxed);
        failure
    });
    if let Some(failure) = failure {
        panic!("{failure}");
    }
    assert_eq!(g.stats().issued, handed.load(Ordering::SeqCst));
}
