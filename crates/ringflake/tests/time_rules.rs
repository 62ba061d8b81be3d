//! Deterministic tests of the CachedUidGenerator time rules, driven by a ManualClock with the
//! filler run on the test's own thread (`background_filler(false)` + `pad()` as the filler's tick).

use ringflake::{CachedUidGenerator, Error, Layout, LeadPolicy, ManualClock};
use std::collections::HashSet;
use std::time::Duration;

const T: i64 = 1_800_000_000;

/// 13 sequence bits (8,192 IDs a second; a ring of 65,536 by default), whatever
/// `Layout::default()` becomes: the counts below depend on it.
fn layout() -> Layout {
    Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).expect("valid layout")
}

/// A lead cap no test here reaches (a century), set explicitly: these tests borrow tens of
/// seconds at a frozen clock and must not depend on the default cap. At `Fail`, so that a test
/// that did reach it would fail rather than wait forever for a clock that never moves.
const NO_LEAD_CAP: Duration = Duration::from_secs(100 * 365 * 86_400);

fn manual(clock: &ManualClock) -> CachedUidGenerator {
    CachedUidGenerator::builder(layout())
        .worker_id(7)
        .clock(clock.clone())
        .background_filler(false)
        .max_lead(NO_LEAD_CAP, LeadPolicy::Fail)
        .build()
        .expect("valid generator")
}

fn second_of(id: u64) -> i64 {
    layout().parse(id).expect("positive id").unix_seconds
}

/// Rule 1: under low load the IDs carry the current second, however long the pause.
#[test]
fn idle_ids_do_not_lag() {
    let clock = ManualClock::from_seconds(T);
    let g = manual(&clock);
    assert_eq!(second_of(g.next_id().unwrap()), T);
    for step in 1..=20 {
        clock.advance_seconds(37);
        g.pad(); // the filler's periodic tick
        let id = g.next_id().unwrap();
        assert_eq!(second_of(id), T + 37 * step, "step {step}");
        assert_eq!(g.stats().lag_seconds, 0);
    }
}

/// Rules 1 and 3 under sustained overload: the lead grows while demand exceeds 2^seq_bits per
/// second, then returns to at most the ring's span once the load drops.
#[test]
fn overload_lead_grows_then_returns() {
    let clock = ManualClock::from_seconds(T);
    let g = manual(&clock);
    let cap = g.stats().capacity;
    let span = cap / (layout().max_sequence() + 1);
    let mut last = 0;
    for _ in 0..10 * cap {
        let id = g.next_id().unwrap();
        assert!(id > last);
        last = id;
    }
    let lead = g.stats().lead_seconds;
    // 10 rings' worth taken: seconds T..T+79 issued, the newest written second is T+79.
    assert!(
        lead >= 10 * span - 1,
        "lead {lead} after 10 rings at a frozen clock"
    );
    assert!(second_of(last) >= T + 10 * span as i64 - 1);

    // The load drops: time passes, the filler ticks.
    clock.advance_seconds(200);
    g.pad();
    let s = g.stats();
    assert!(
        s.lead_seconds <= span,
        "lead {} > span {span}",
        s.lead_seconds
    );
    let id = g.next_id().unwrap();
    assert!(id > last, "never below an ID already issued");
    assert_eq!(second_of(id), T + 200);
}

/// Rule 2: a ring that fills in the middle of a second keeps the rest of that second, so at a
/// frozen clock every sequence of every second is used (Java used 8-31%).
#[test]
fn full_ring_keeps_the_rest_of_the_second() {
    let clock = ManualClock::from_seconds(T);
    let g = manual(&clock);
    let layout = layout();
    let mut ids = Vec::new();
    for round in 0..300 {
        for _ in 0..(97 + round % 13) {
            ids.push(g.next_id().unwrap());
        }
        g.pad(); // refills the few taken slots: mid-second each time
    }
    for w in ids.windows(2) {
        let (a, b) = (
            layout.decompose(w[0]).unwrap(),
            layout.decompose(w[1]).unwrap(),
        );
        let contiguous = (b.delta_seconds == a.delta_seconds && b.sequence == a.sequence + 1)
            || (b.delta_seconds == a.delta_seconds + 1
                && b.sequence == 0
                && a.sequence == layout.max_sequence());
        assert!(contiguous, "gap between {a:?} and {b:?}");
    }
    assert_eq!(g.stats().discarded, 0);
}

/// Rule 3: an ID that waited longer than max_lag is discarded, never handed out.
#[test]
fn stale_ids_are_discarded() {
    let clock = ManualClock::from_seconds(T);
    let g = CachedUidGenerator::builder(layout())
        .worker_id(7)
        .clock(clock.clone())
        .background_filler(false)
        .max_lag(Duration::from_secs(5))
        .build()
        .unwrap();
    let first = g.next_id().unwrap();
    assert_eq!(second_of(first), T);
    clock.advance_seconds(6);
    g.pad();
    // Second T (the only one written at light load, rule 3) is older than 5 s at the next
    // tick's clock: all of it is gone.
    assert_eq!(g.stats().discarded, 8192 - 1);
    let id = g.next_id().unwrap();
    let lag = T + 6 - second_of(id);
    assert!((0..=5).contains(&lag), "lag {lag}");
    assert!(id > first);
    // Long idle: the whole ring is stale, the next ID is fresh.
    clock.advance_seconds(1000);
    g.pad();
    assert_eq!(second_of(g.next_id().unwrap()), T + 1006);
    assert_eq!(g.stats().lag_seconds, 0);
}

/// Rule 6's boundary (`max_lag` 5 s): IDs of second T go out while the clock is at T + 4, and
/// from T + 5 on never: the filler's sweep drops them, and so does a take that finds them in its
/// claim before the sweep has run.
#[test]
fn stale_from_max_lag_behind() {
    let clock = ManualClock::from_seconds(T);
    let g = CachedUidGenerator::builder(layout())
        .worker_id(7)
        .clock(clock.clone())
        .background_filler(false)
        .max_lag(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut ids = [0u64; 10];
    g.next_ids(&mut ids).unwrap();
    assert_eq!(second_of(ids[0]), T);
    clock.advance_seconds(4);
    g.pad();
    g.next_ids(&mut ids).unwrap();
    assert_eq!(second_of(ids[0]), T, "4 s behind, max_lag 5 s: fresh");
    assert_eq!(g.stats().discarded, 0);
    // At T + 5 the take's own clock read finds the rest of second T stale: dropped.
    clock.advance_seconds(1);
    let mut one = [0u64; 1];
    g.next_ids(&mut one).unwrap();
    let id = one[0];
    // The ID handed out is of a later second (the pad at T + 4 wrote second T + 4 behind T's).
    assert!(second_of(id) > T, "5 s behind, max_lag 5 s: stale");
    assert!(id > ids[9]);
    assert_eq!(g.stats().discarded, 8192 - 20, "the rest of second T");
}

/// A clock jumping back by an hour: no duplicate, no decrease.
#[test]
fn clock_backwards_an_hour() {
    let clock = ManualClock::from_seconds(T);
    let g = manual(&clock);
    let mut seen = HashSet::new();
    let mut last = 0;
    for i in 0..300_000u64 {
        if i == 100_000 {
            clock.advance_seconds(-3600);
            g.pad();
        }
        if i == 200_000 {
            clock.advance_seconds(3600 + 30);
            g.pad();
        }
        let id = g.next_id().unwrap();
        assert!(id > last, "decrease at {i}");
        assert!(seen.insert(id));
        last = id;
    }
    assert!(second_of(last) >= T + 30);
}

/// Rule 4 with LeadPolicy::Fail: the cap holds, takes fail at it, and the ring recovers without
/// ever repeating an ID once the clock moves on (abandoned claims are discarded, not stuck).
#[test]
fn lead_cap_fail_then_recover() {
    let clock = ManualClock::from_seconds(T);
    let g = CachedUidGenerator::builder(layout())
        .worker_id(7)
        .clock(clock.clone())
        .background_filler(false)
        .max_lead(Duration::from_secs(3), LeadPolicy::Fail)
        .build()
        .unwrap();
    let mut seen = HashSet::new();
    let mut taken = 0u64;
    let err = loop {
        match g.next_id() {
            Ok(id) => {
                assert!(second_of(id) <= T + 3, "beyond the lead cap");
                assert!(seen.insert(id));
                taken += 1;
            }
            Err(e) => break e,
        }
    };
    assert_eq!(taken, 4 * 8192, "seconds T..=T+3, every sequence");
    assert_eq!(err, Error::LeadLimitReached { max_lead: 3 });
    assert!(err.to_string().contains("at most 3 s"));
    let mut batch = [0u64; 10];
    assert!(g.next_ids(&mut batch).is_err());
    // Each clock second opens one more second (8,192 IDs) under the cap; the 11 claims abandoned
    // above are discarded by the filler, so take a little less than a second's worth per step.
    for _ in 0..50 {
        clock.advance_seconds(1);
        for _ in 0..8000 {
            let id = g.next_id().unwrap();
            assert!(second_of(id) <= clock_seconds(&clock) + 3);
            assert!(seen.insert(id), "duplicate after recovery");
        }
    }
}

fn clock_seconds(c: &ManualClock) -> i64 {
    use ringflake::Clock;
    c.now_seconds()
}

/// Rule 4 with LeadPolicy::Wait: a take at the cap waits for the clock, then succeeds.
#[test]
fn lead_cap_wait_blocks_until_the_clock_moves() {
    let clock = ManualClock::from_seconds(T);
    let g = CachedUidGenerator::builder(layout())
        .worker_id(7)
        .clock(clock.clone())
        .max_lead(Duration::from_secs(1), LeadPolicy::Wait)
        .build()
        .unwrap();
    // Rule 3: second T+1 is borrowed once fewer than half a second's IDs are ready; a round
    // driven here (the background filler may be slower than this loop) makes that certain.
    for _ in 0..5000 {
        g.next_id().unwrap();
    }
    g.pad();
    for _ in 5000..2 * 8192 {
        g.next_id().unwrap();
    }
    assert_eq!(
        g.stats().take_waits,
        0,
        "seconds T and T+1 were in the ring"
    );
    // The clock moves only once the take is seen waiting at the cap (not after a guessed delay,
    // which a slow take could miss, finding the ring refilled and never waiting).
    let id = std::thread::scope(|s| {
        s.spawn(|| {
            let started = std::time::Instant::now();
            while g.stats().take_waits == 0 {
                assert!(
                    started.elapsed() < Duration::from_secs(30),
                    "the take never waited"
                );
                std::thread::yield_now();
            }
            assert!(g.try_next_id().is_none(), "nothing past the cap");
            clock.advance_seconds(1);
        });
        g.next_id().expect("waits, then succeeds")
    });
    assert_eq!(second_of(id), T + 2);
    assert_eq!(g.stats().take_waits, 1);
}

/// Rule 5: when the time bits run out, takes fail; no negative or wrapped ID is ever returned.
#[test]
fn exhaustion_is_an_error_not_a_negative_id() {
    let epoch = 1_600_000_000;
    let layout = Layout::new(10, 40, 13, epoch).unwrap(); // 1024 seconds of life
    let clock = ManualClock::from_seconds(epoch + 1000);
    let g = CachedUidGenerator::builder(layout)
        .worker_id(5)
        .clock(clock.clone())
        .background_filler(false)
        .max_lead(NO_LEAD_CAP, LeadPolicy::Fail)
        .build()
        .unwrap();
    let mut n = 0u64;
    let mut last = 0;
    let err = loop {
        match g.next_id() {
            Ok(id) => {
                assert!(id <= i64::MAX as u64);
                assert!(id > last);
                assert!(layout.decompose(id).unwrap().delta_seconds <= layout.max_delta_seconds());
                last = id;
                n += 1;
            }
            Err(e) => break e,
        }
    };
    assert_eq!(n, 24 * 8192, "seconds 1000..=1023, every sequence");
    assert!(matches!(err, Error::TimeBitsExhausted { .. }), "{err:?}");
    assert!(err.to_string().contains(&layout.last_valid_date()));
    assert!(g.next_id().is_err());
    assert!(g.try_next_id().is_none());
    assert_eq!(g.stats().remaining_seconds, 0);
    // Building at a clock past the end fails at construction, naming the date.
    clock.advance_seconds(100);
    let built = CachedUidGenerator::builder(layout)
        .worker_id(5)
        .clock(clock)
        .build();
    assert!(
        built
            .unwrap_err()
            .to_string()
            .contains(&layout.last_valid_date())
    );
}

/// Bad settings are typed errors naming the value and the limit.
#[test]
fn bad_config_is_refused() {
    let b = || CachedUidGenerator::builder(layout()).worker_id(1);
    let msg = |r: Result<CachedUidGenerator, Error>| r.unwrap_err().to_string();
    assert!(msg(b().boost_power(16).build()).contains("boost_power 16"));
    assert!(msg(b().padding_factor(101).build()).contains("0..=100"));
    assert!(msg(b().max_lag(Duration::from_millis(999)).build()).contains("999"));
    assert!(msg(b().schedule_interval(Duration::ZERO).build()).contains("schedule_interval"));
    assert_eq!(
        msg(b().worker_id(1 << 20).build()),
        "worker id 1048576 exceeds the max 1048575"
    );
}

/// Introspection: issued counts exactly the IDs taken; available falls and recovers.
#[test]
fn stats_follow_takes() {
    let clock = ManualClock::from_seconds(T);
    // A ring of one second, refilled whenever it is not full (padding 100 %): rule 3 lets the
    // filler borrow the next second as soon as a slot is free.
    let g = CachedUidGenerator::builder(layout())
        .worker_id(7)
        .clock(clock.clone())
        .background_filler(false)
        .boost_power(0)
        .padding_factor(100)
        .build()
        .unwrap();
    let cap = g.stats().capacity;
    assert_eq!(g.stats().available, cap);
    let mut buf = vec![0u64; 1000];
    g.next_ids(&mut buf).unwrap();
    for _ in 0..234 {
        g.next_id().unwrap();
    }
    let _ = g.try_next_id().unwrap();
    let s = g.stats();
    assert_eq!(s.issued, 1235);
    assert_eq!(s.available, cap - 1235);
    g.pad();
    // The ring refills in whole chunks (1024 IDs with 13 sequence bits), and a slot is reused
    // only once the chunk after it is fully claimed too: of the 1,235 IDs taken (one chunk and a
    // part), none can be refilled yet.
    assert_eq!(g.stats().available, cap - 1235);
    for _ in 0..2048 - 1235 {
        g.next_id().unwrap();
    }
    g.pad();
    assert_eq!(
        g.stats().available,
        cap - 1024,
        "chunk 0 is back, chunk 1 is the margin"
    );
    assert_eq!(g.stats().paddings, 2);
    assert_eq!(s.worker_id, 7);
}

/// Rule 3's exception: within a round of the next second, the filler writes that second behind
/// the current one's IDs, so that a take at the boundary finds an ID ready (of the new second:
/// the old one's went stale at the boundary) instead of an empty ring and a wait for the filler.
/// Not under a lead cap below 2 s, which the second written ahead would reach.
#[test]
fn the_next_second_is_ready_at_its_start() {
    for (cap, ready) in [
        (Duration::from_secs(10), true),
        (Duration::from_secs(1), false),
    ] {
        let clock = ManualClock::from_seconds(T);
        let g = CachedUidGenerator::builder(layout())
            .worker_id(7)
            .clock(clock.clone())
            .background_filler(false)
            .max_lead(cap, LeadPolicy::Wait)
            .build()
            .unwrap();
        assert_eq!(second_of(g.try_next_id().unwrap()), T);
        // Half a second before the boundary: nothing ahead yet.
        clock.set_millis(T * 1000 + 500);
        g.pad();
        assert_eq!(g.stats().lead_seconds, 0);
        // The filler's round in the last quarter second writes the next one.
        clock.set_millis(T * 1000 + 900);
        g.pad();
        assert_eq!(g.stats().lead_seconds, u64::from(ready), "cap {cap:?}");
        assert_eq!(
            second_of(g.try_next_id().unwrap()),
            T,
            "this second's first"
        );
        clock.set_millis((T + 1) * 1000);
        match g.try_next_id() {
            Some(id) => assert!(ready && second_of(id) == T + 1, "cap {cap:?}: {id}"),
            None => assert!(!ready, "cap {cap:?}: the ring was empty at the boundary"),
        }
    }
}
