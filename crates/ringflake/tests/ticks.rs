//! Generating at millisecond and 10 ms ticks: the filler borrows whole ticks, the lead cap and
//! `max_lag` keep their meaning in time (10 s are 10,000 ms ticks), the state file keeps a
//! restart above every tick used, and Sonyflake's field order is made one ring slot per ID. Every
//! clock here is a manual one: nothing depends on today's date.

use ringflake::{
    CachedUidGenerator, DefaultUidGenerator, Error, FieldOrder, Layout, LeadPolicy, ManualClock,
    TWITTER_EPOCH_MILLIS, TimeUnit,
};
use std::time::Duration;

/// 2027-01-15T08:00:00.123Z: a millisecond that is not a whole second.
const T: i64 = 1_800_000_000_123;

/// Twitter's epoch and unit, with 5 sequence bits: 32 IDs a tick, so that borrowing ten
/// seconds of ticks takes 320,000 IDs.
fn small_ms() -> Layout {
    Layout::with_unit(
        41,
        17,
        5,
        TWITTER_EPOCH_MILLIS,
        TimeUnit::Millis,
        FieldOrder::default(),
    )
    .unwrap()
}

/// At light load an ID carries the clock's millisecond; a later round, the later millisecond,
/// in place of what was left of the earlier one.
#[test]
fn ids_carry_the_millisecond() {
    let layout = Layout::twitter();
    let clock = ManualClock::new(T);
    let g = CachedUidGenerator::builder(layout)
        .worker_id(5)
        .clock(clock.clone())
        .background_filler(false)
        .build()
        .unwrap();
    let first = layout.parse(g.next_id().unwrap()).unwrap();
    assert_eq!(
        (first.unix_millis, first.worker_id, first.sequence),
        (T, 5, 0)
    );
    assert_eq!(g.stats().lead_millis, 0, "nothing borrowed at light load");
    // One tick's IDs were written, not a second's: rule 3 at the tick.
    assert_eq!(g.stats().available, 4096 - 1);
    clock.set_millis(T + 7);
    g.pad();
    // A round at a later tick: the clock's tick replaces the rest of tick T (expired unused),
    // so the next ID is 0 ms old, not 7.
    let later = layout.parse(g.next_id().unwrap()).unwrap();
    assert_eq!(later.unix_millis, T + 7);
    assert_eq!(g.stats().expired, 4095);
}

/// The lead cap is 10 s of time: 10,000 ms ticks, not 10 ticks.
#[test]
fn lead_cap_is_ten_seconds_of_ticks() {
    let layout = small_ms();
    let clock = ManualClock::new(T);
    let g = CachedUidGenerator::builder(layout)
        .worker_id(1)
        .clock(clock)
        .max_lead(Duration::from_secs(10), LeadPolicy::Fail)
        .background_filler(false)
        .build()
        .unwrap();
    let mut batch = vec![0u64; 32 * 100];
    let mut newest = 0;
    let err = loop {
        g.pad();
        match g.next_ids(&mut batch) {
            Ok(()) => newest = batch[batch.len() - 1],
            Err(e) => break e,
        }
    };
    assert_eq!(err, Error::LeadLimitReached { max_lead: 10 });
    let now_tick = layout.tick_at(T);
    let newest_tick = newest >> layout.time_shift();
    let lead = newest_tick - now_tick;
    assert!(
        (9_900..=10_000).contains(&lead),
        "borrowed {lead} ticks ahead of the clock, cap 10,000"
    );
    let s = g.stats();
    assert!(s.lead_millis >= 9_900 && s.lead_millis <= 10_000, "{s:?}");
    assert_eq!(s.lead_seconds, s.lead_millis / 1000);
}

/// `max_lag` is 1 s of time: an ID of tick `t` is handed out until the clock reaches `t` plus
/// 1,000 ms, never after. (Batches: each is checked against the clock, where `next_id` hands out
/// the rest of a chunk its thread already holds, the documented exception.)
#[test]
fn max_lag_is_a_second_of_ticks() {
    let layout = Layout::twitter();
    let clock = ManualClock::new(T);
    let g = CachedUidGenerator::builder(layout)
        .worker_id(1)
        .clock(clock.clone())
        .background_filler(false)
        .build()
        .unwrap();
    let mut one = [0u64];
    g.next_ids(&mut one).unwrap();
    clock.set_millis(T + 999);
    g.next_ids(&mut one).unwrap();
    assert_eq!(
        layout.parse(one[0]).unwrap().unix_millis,
        T,
        "999 ms behind: fresh"
    );
    clock.set_millis(T + 1_000);
    g.next_ids(&mut one).unwrap();
    let id = one[0];
    assert_eq!(
        layout.parse(id).unwrap().unix_millis,
        T + 1_000,
        "1,000 ms behind: stale, the clock's tick instead"
    );
    assert!(g.stats().expired > 0);
}

/// A restart on the same state file starts above every tick the first run used, with a lead
/// that borrowed seconds ahead.
#[test]
fn state_file_keeps_a_restart_above() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("ringflake.state");
    let layout = small_ms();
    let clock = ManualClock::new(T);
    let build = || {
        CachedUidGenerator::builder(layout)
            .worker_id(3)
            .clock(clock.clone())
            .state_file(&state)
            .background_filler(false)
            .build()
            .unwrap()
    };
    let g = build();
    let mut batch = vec![0u64; 32 * 100];
    for _ in 0..30 {
        g.pad();
        g.next_ids(&mut batch).unwrap();
    }
    let newest = batch[batch.len() - 1];
    assert!(
        (newest >> layout.time_shift()) - layout.tick_at(T) >= 2_000,
        "borrowed two seconds of ticks"
    );
    // Dropped or killed alike: a fixed worker id has no lease to release, and the state file
    // only grows. (Forgotten, it would still hold worker id 3 on the state file.)
    drop(g);
    let again = build();
    let first = again.next_id().unwrap();
    assert!(first > newest, "{first} after a restart, {newest} before");
    // The state file records whole seconds: the restart starts at the next second's first tick.
    let parsed = layout.parse(first).unwrap();
    assert_eq!(parsed.unix_millis.rem_euclid(1000), 0, "{parsed:?}");
}

/// DefaultUidGenerator makes every layout's IDs, Sonyflake's order included, each carrying the
/// clock's tick.
#[test]
fn sonyflake_one_at_a_time() {
    let layout = Layout::sonyflake();
    let clock = ManualClock::new(T);
    let g = DefaultUidGenerator::builder(layout)
        .worker_id(0xBEEF)
        .clock(clock.clone())
        .build()
        .unwrap();
    let a = g.next_id().unwrap();
    let b = g.next_id().unwrap();
    assert_eq!(
        b - a,
        1 << 16,
        "the sequence sits above the 16-bit machine id"
    );
    let p = layout.parse(b).unwrap();
    assert_eq!((p.unix_millis, p.worker_id, p.sequence), (T - 3, 0xBEEF, 1));
    // 256 IDs a tick: the 257th waits for the next tick.
    let mut last = b;
    for _ in 0..254 {
        last = g.next_id().unwrap();
    }
    clock.set_millis(T + 10);
    let next = g.next_id().unwrap();
    assert!(next > last);
    assert_eq!(layout.parse(next).unwrap().unix_millis, T + 7);
}

/// The cached generator makes Sonyflake's IDs too, one ring slot per ID: one worker's IDs of a
/// tick are 2^16 apart (the sequence sits above the machine id), every ID increasing, every one
/// parsing to the worker and a tick the clock had reached or the filler borrowed; a taker's IDs
/// (per-thread, batch and single) never meet.
#[test]
fn sonyflake_from_the_ring() {
    let layout = Layout::sonyflake();
    let clock = ManualClock::new(T);
    let g = CachedUidGenerator::builder(layout)
        .worker_id(0xBEEF)
        .clock(clock.clone())
        .background_filler(false)
        .build()
        .unwrap();
    let a = g.next_id().unwrap();
    let b = g.next_id().unwrap();
    assert_eq!(
        b - a,
        1 << 16,
        "consecutive IDs of a tick: the next sequence"
    );
    let p = layout.parse(a).unwrap();
    assert_eq!((p.unix_millis, p.worker_id, p.sequence), (T - 3, 0xBEEF, 0));
    let mut ids = vec![a, b];
    let mut batch = vec![0; 700];
    g.next_ids(&mut batch).unwrap();
    ids.extend_from_slice(&batch);
    let mut local = g.local();
    for _ in 0..700 {
        ids.push(local.next_id().unwrap());
    }
    drop(local);
    clock.set_millis(T + 50);
    for _ in 0..300 {
        ids.push(g.next_id().unwrap());
    }
    let mut ticks = std::collections::BTreeSet::new();
    for w in ids.windows(2) {
        assert!(w[0] < w[1], "{} then {}", w[0], w[1]);
    }
    for &id in &ids {
        let p = layout.parse(id).unwrap();
        assert_eq!(p.worker_id, 0xBEEF, "{id}");
        assert!(p.sequence < 256, "{id}");
        ticks.insert(p.unix_millis);
    }
    // 1,702 IDs at 256 a tick: at least 7 ticks, borrowed past the clock's T - 3.
    assert!(ticks.len() >= 7, "{ticks:?}");
}

/// DefaultUidGenerator at Twitter's millisecond: IDs increase and carry the clock's millisecond.
#[test]
fn default_generator_at_the_millisecond() {
    let layout = Layout::twitter();
    let clock = ManualClock::new(T);
    let g = DefaultUidGenerator::builder(layout)
        .worker_id(9)
        .clock(clock.clone())
        .build()
        .unwrap();
    let a = layout.parse(g.next_id().unwrap()).unwrap();
    clock.set_millis(T + 1);
    let b = layout.parse(g.next_id().unwrap()).unwrap();
    assert_eq!((a.unix_millis, b.unix_millis), (T, T + 1));
    assert_eq!((a.sequence, b.sequence), (0, 0));
    // Back 5 ms: refused, naming whole seconds (rounded up).
    clock.set_millis(T - 4);
    let err = g.next_id().unwrap_err();
    assert_eq!(err, Error::ClockMovedBackwards { seconds: 1 });
}

/// Threads taking Twitter's IDs on the real clock, with the background filler, through every
/// kind of take: all unique, each thread's strictly increasing, none more than the lead cap
/// ahead of the clock.
#[test]
fn threads_at_the_millisecond() {
    threads(Layout::twitter(), if cfg!(miri) { 1_000 } else { 300_000 });
}

/// The same with Sonyflake's order and 10 ms ticks (one ID per ring slot; 25,600 IDs a second,
/// so 60,000 in all are borrowed ticks, within the lead cap).
#[test]
fn threads_at_sonyflake_ticks() {
    threads(Layout::sonyflake(), if cfg!(miri) { 1_000 } else { 20_000 });
}

fn threads(layout: Layout, per_thread: usize) {
    let g = CachedUidGenerator::builder(layout)
        .worker_id(1)
        .build()
        .unwrap();
    let all: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|kind| {
                let g = &g;
                s.spawn(move || {
                    let mut ids = Vec::with_capacity(per_thread);
                    match kind {
                        0 => {
                            for _ in 0..per_thread {
                                ids.push(g.next_id().unwrap());
                            }
                        }
                        1 => {
                            let mut batch = vec![0u64; 1000];
                            while ids.len() < per_thread {
                                g.next_ids(&mut batch).unwrap();
                                ids.extend_from_slice(&batch);
                            }
                        }
                        _ => {
                            let mut taker = g.local();
                            for _ in 0..per_thread {
                                ids.push(taker.next_id().unwrap());
                            }
                        }
                    }
                    ids
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let now = layout.tick_at(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64,
    );
    let mut seen = std::collections::HashSet::new();
    for ids in &all {
        for w in ids.windows(2) {
            assert!(w[0] < w[1], "{} then {}", w[0], w[1]);
        }
        for &id in ids {
            assert!(seen.insert(id), "{id} twice");
            assert!(
                (id >> layout.time_shift()) <= now + 10 * layout.unit().per_second(),
                "beyond the lead cap"
            );
            assert_eq!(layout.parse(id).unwrap().worker_id, 1, "{id}");
        }
    }
}
