//! The time bounds with default settings, each produced by construction with an injected clock
//! and a filler driven by the test (`background_filler(false)` and `pad()`), never by the
//! machine's speed: a bounded lead at any load (rule 4), light load tells the time (rule 3),
//! restarts that never repeat an ID nor push time ahead (rule 5, the state file), batches at the
//! cap (refused when they can never fit, first come first served otherwise), stale IDs after a
//! forward clock step (rule 6), and a clock set back.

use ringflake::{
    CachedUidGenerator, Clock, DEFAULT_EPOCH_SECONDS, DEFAULT_MAX_LEAD, Error, Layout, LeadPolicy,
    ManualClock,
};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const T0: i64 = 1_800_000_000;

/// 13 sequence bits: a second is 8,192 IDs, small enough to go through many seconds quickly.
fn small() -> Layout {
    Layout::new(30, 20, 13, DEFAULT_EPOCH_SECONDS).unwrap()
}

/// A generator builder on `clock` whose filler the test drives (`pad()`, or a take on an empty
/// ring): every state a test checks is produced by construction.
fn driven(layout: Layout, worker_id: u64, clock: &ManualClock) -> ringflake::CachedBuilder {
    CachedUidGenerator::builder(layout)
        .worker_id(worker_id)
        .clock(clock.clone())
        .background_filler(false)
}

fn second_of(layout: &Layout, id: u64) -> i64 {
    layout.parse(id).unwrap().unix_seconds
}

/// Takes every ID the generator can make without the clock moving: drains the ring, runs a filler
/// round, and again, until a round adds nothing.
fn drain(g: &CachedUidGenerator) -> Vec<u64> {
    let mut ids = Vec::new();
    loop {
        let before = ids.len();
        while let Some(id) = g.try_next_id() {
            ids.push(id);
        }
        g.pad();
        while let Some(id) = g.try_next_id() {
            ids.push(id);
        }
        if ids.len() == before {
            return ids;
        }
    }
}

#[test]
fn the_default_lead_is_bounded_at_any_load() {
    let clock = ManualClock::from_seconds(T0);
    let layout = small();
    let g = driven(layout, 1, &clock).build().unwrap();
    assert_eq!(g.max_lead(), Some(DEFAULT_MAX_LEAD));
    // Demand far beyond 8,192 IDs a second: everything the cap allows, with the clock stopped.
    let ids = drain(&g);
    let lead = DEFAULT_MAX_LEAD.as_secs() as i64;
    assert_eq!(
        ids.len() as u64,
        (lead as u64 + 1) * 8192,
        "seconds T0..=T0+10"
    );
    let last = second_of(&layout, *ids.last().unwrap());
    assert_eq!(
        last,
        T0 + lead,
        "borrowed up to the cap and not one second further"
    );
    assert_eq!(g.stats().lead_seconds, lead as u64);
    // Each second on the clock lets exactly one more second in.
    for step in 1..=5 {
        clock.advance_seconds(1);
        let more = drain(&g);
        assert_eq!(more.len(), 8192, "step {step}");
        assert_eq!(second_of(&layout, *more.last().unwrap()), T0 + step + lead);
    }
}

#[test]
fn unbounded_borrowing_only_when_asked() {
    let clock = ManualClock::from_seconds(T0);
    let layout = small();
    let g = CachedUidGenerator::builder(layout)
        .worker_id(1)
        .clock(clock)
        .background_filler(false)
        .unbounded_lead()
        .build()
        .unwrap();
    let mut last = 0;
    for _ in 0..(30 * 8192) {
        last = g.next_id().unwrap();
    }
    assert!(
        second_of(&layout, last) >= T0 + 29,
        "Java's behaviour: borrows without bound"
    );
}

#[test]
fn light_load_tells_the_time_whatever_the_ring_size() {
    for boost_power in [0, 3, 6] {
        let clock = ManualClock::from_seconds(T0);
        let layout = small();
        let g = CachedUidGenerator::builder(layout)
            .worker_id(1)
            .clock(clock.clone())
            .boost_power(boost_power)
            .background_filler(false)
            .build()
            .unwrap();
        assert_eq!(
            g.stats().lead_seconds,
            0,
            "boost {boost_power}: nothing borrowed at boot"
        );
        // 90% of the sustained rate, in ten bursts a second, for 30 seconds.
        for s in 0..30 {
            for _ in 0..10 {
                for _ in 0..737 {
                    let id = g.next_id().unwrap();
                    let lead = second_of(&layout, id) - (T0 + s);
                    assert!(
                        lead <= 1,
                        "boost {boost_power}, second {s}: an ID {lead} s ahead"
                    );
                }
                g.pad();
                assert!(
                    g.stats().lead_seconds <= 1,
                    "boost {boost_power}: {:?}",
                    g.stats()
                );
            }
            clock.advance_seconds(1);
        }
    }
}

#[test]
fn light_load_tells_the_time_with_the_default_layout() {
    let clock = ManualClock::from_seconds(T0);
    let g = CachedUidGenerator::builder(Layout::default())
        .worker_id(1)
        .clock(clock.clone())
        .background_filler(false)
        .build()
        .unwrap();
    // 1,000 IDs a second: each carries the current second (the filler's round after the clock
    // moves drops the previous second's rest: max_lag 1 s by default).
    for s in 0..5 {
        for _ in 0..1000 {
            let id = g.next_id().unwrap();
            assert_eq!(second_of(&Layout::default(), id), T0 + s);
        }
        assert_eq!(g.stats().lead_seconds, 0);
        clock.advance_seconds(1);
        g.pad();
    }
}

/// One run of a generator with worker id 7 and a state file, ended as a kill ends it: with a
/// fixed worker id its Drop only stops the filler (no lease to release, and the state file only
/// grows). (Forgotten instead, it would still hold worker id 7 on the state file, and the next
/// run would be refused as a second live generator.)
fn run_and_kill(state: &Path, clock: &ManualClock, heavy: bool) -> Vec<u64> {
    let g = driven(small(), 7, clock)
        .state_file(state)
        .max_lead(DEFAULT_MAX_LEAD, LeadPolicy::Fail)
        .build()
        .unwrap();
    let ids = if heavy {
        drain(&g)
    } else {
        // A restart right after a run at full lead starts above it, beyond the cap: it fails
        // (policy Fail) until the clock moves, rather than borrow further.
        let mut ids = Vec::new();
        for _ in 0..100 {
            match g.next_id() {
                Ok(id) => ids.push(id),
                Err(Error::LeadLimitReached { .. }) => break,
                Err(e) => panic!("{e}"),
            }
        }
        ids
    };
    drop(g);
    ids
}

#[test]
fn restarts_with_a_fixed_id_never_repeat_and_never_push_time_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("ringflake.state");
    let clock = ManualClock::from_seconds(T0);
    let layout = small();
    let lead = DEFAULT_MAX_LEAD.as_secs() as i64;
    let mut seen = HashSet::new();
    let mut last_of_previous = 0;
    for run in 0..20 {
        // Every other run at full load; the clock moves 0 or 1 s between runs.
        let ids = run_and_kill(&state, &clock, run % 2 == 0);
        for &id in &ids {
            assert!(seen.insert(id), "run {run} repeated {id}");
        }
        if let Some(&first) = ids.first() {
            assert!(
                first > last_of_previous,
                "run {run} started below the previous run"
            );
        }
        if let Some(&last) = ids.last() {
            let ahead = second_of(&layout, last) - clock.now_seconds();
            assert!(
                ahead <= lead,
                "run {run}: last ID {ahead} s ahead of the clock"
            );
            last_of_previous = last;
        }
        if run % 3 != 0 {
            clock.advance_seconds(1);
        }
    }
    assert!(seen.len() > 100_000, "load made {} IDs", seen.len());
}

#[test]
fn a_light_restart_starts_at_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("ringflake.state");
    let clock = ManualClock::from_seconds(T0);
    let first = run_and_kill(&state, &clock, false);
    clock.advance_seconds(1);
    let second = run_and_kill(&state, &clock, false);
    assert!(second[0] > *first.last().unwrap());
    assert_eq!(
        second_of(&small(), second[0]),
        T0 + 1,
        "no lead from a restart at light load"
    );
}

#[test]
fn a_damaged_state_file_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("ringflake.state");
    std::fs::write(&state, "garbage").unwrap();
    let err = CachedUidGenerator::builder(small())
        .worker_id(7)
        .state_file(&state)
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::StateFile { .. }), "{err}");
    assert!(err.to_string().contains("ringflake.state"), "{err}");
}

#[test]
fn an_unwritable_state_file_stops_issue_with_a_clear_error() {
    // At start: a place where no file can be.
    let err = CachedUidGenerator::builder(small())
        .worker_id(7)
        .state_file("/proc/ringflake-no-such-dir/state")
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::StateFile { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("/proc/ringflake-no-such-dir/state"),
        "{err}"
    );
    // While running: the file becomes unreadable (a directory stands in its place, as root can
    // write anywhere). IDs already reserved are handed out; then takes fail, naming the file.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("ringflake.state");
    let clock = ManualClock::from_seconds(T0);
    let g = CachedUidGenerator::builder(small())
        .worker_id(7)
        .clock(clock.clone())
        .state_file(&state)
        .background_filler(false)
        .build()
        .unwrap();
    g.next_id().unwrap();
    std::fs::remove_file(&state).unwrap();
    std::fs::create_dir(&state).unwrap();
    clock.advance_seconds(1);
    let err = loop {
        match g.next_id() {
            Ok(id) => assert_eq!(second_of(&small(), id), T0, "only the reserved second"),
            Err(e) => break e,
        }
    };
    assert!(matches!(err, Error::StateFile { .. }), "{err}");
    assert!(err.to_string().contains("ringflake.state"), "{err}");
    // Mended: issue resumes.
    std::fs::remove_dir(&state).unwrap();
    g.pad();
    assert_eq!(second_of(&small(), g.next_id().unwrap()), T0 + 1);
}

#[test]
fn a_batch_the_cap_can_never_hold_is_refused_at_once() {
    let g = CachedUidGenerator::builder(small())
        .worker_id(1)
        .max_lead(Duration::from_secs(2), LeadPolicy::Wait)
        .build()
        .unwrap();
    assert_eq!(g.max_batch(), Some(3 * 8192));
    let mut ids = vec![0; 3 * 8192 + 1];
    let before = g.stats();
    assert_eq!(
        g.next_ids(&mut ids),
        Err(Error::BatchTooLarge {
            count: 3 * 8192 + 1,
            max: 3 * 8192
        })
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let err = rt.block_on(g.next_ids_async(&mut ids)).unwrap_err();
    assert!(
        err.to_string().contains("24577") && err.to_string().contains("24576"),
        "{err}"
    );
    let after = g.stats();
    assert_eq!(
        (after.issued, after.discarded),
        (before.issued, before.discarded)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_batches_at_the_cap_each_complete_in_turn() {
    let clock = ManualClock::from_seconds(T0);
    let layout = small();
    let g = Arc::new(
        CachedUidGenerator::builder(layout)
            .worker_id(1)
            .clock(clock.clone())
            .max_lead(Duration::from_secs(1), LeadPolicy::Wait)
            .build()
            .unwrap(),
    );
    // 16 batches of 6,000: together 12 seconds' worth, while the cap lets 2 seconds in at once
    // and one more per clock second. First come, first served: they complete in order.
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let g = Arc::clone(&g);
        let done = done_tx.clone();
        tasks.push(tokio::spawn(async move {
            let mut ids = vec![0u64; 6000];
            g.next_ids_async(&mut ids).await.unwrap();
            done.send(i).unwrap();
            ids
        }));
        // Queue them in a known order.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(done_tx);
    let mut order = Vec::new();
    while order.len() < 16 {
        match tokio::time::timeout(Duration::from_millis(100), done_rx.recv()).await {
            Ok(Some(i)) => order.push(i),
            Ok(None) => break,
            // Nothing completed: the batches wait for the clock, so move it.
            Err(_) => clock.advance_seconds(1),
        }
        assert!(clock.now_seconds() < T0 + 60, "batches stalled: {order:?}");
    }
    assert_eq!(
        order,
        (0..16).collect::<Vec<_>>(),
        "first come, first served"
    );
    let mut all = HashSet::new();
    for t in tasks {
        for id in t.await.unwrap() {
            assert!(all.insert(id));
            assert!(
                second_of(&layout, id) <= clock.now_seconds() + 1,
                "beyond the cap"
            );
        }
    }
    assert_eq!(all.len(), 16 * 6000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_whose_client_went_away_takes_nothing() {
    let clock = ManualClock::from_seconds(T0);
    let g = Arc::new(
        CachedUidGenerator::builder(small())
            .worker_id(1)
            .clock(clock.clone())
            .max_lead(Duration::from_secs(0), LeadPolicy::Wait)
            .build()
            .unwrap(),
    );
    // Use up the only second the cap allows.
    let mut first = vec![0u64; 8192];
    g.next_ids_async(&mut first).await.unwrap();
    let before = g.stats();
    // A batch that must wait for the clock; its client goes away after 200 ms.
    let mut ids = vec![0u64; 5000];
    let waited = tokio::time::timeout(Duration::from_millis(200), g.next_ids_async(&mut ids)).await;
    assert!(waited.is_err(), "no ID may exist past the cap");
    let after = g.stats();
    assert_eq!(
        after.issued, before.issued,
        "nothing taken for a client that has gone"
    );
    assert_eq!(after.discarded, before.discarded);
    clock.advance_seconds(1);
    let mut next = vec![0u64; 5000];
    tokio::time::timeout(Duration::from_secs(5), g.next_ids_async(&mut next))
        .await
        .expect("the next batch is served once the clock moved")
        .unwrap();
    assert_eq!(second_of(&small(), next[0]), T0 + 1);
    assert!(next[0] > first[8191]);
}

#[test]
fn after_a_forward_clock_step_stale_ids_last_one_round_at_most() {
    let clock = ManualClock::from_seconds(T0);
    let layout = small();
    let g = driven(layout, 1, &clock).build().unwrap();
    g.next_id().unwrap();
    clock.advance_seconds(3600);
    // The filler's next round (at most schedule_interval after the step) discards them all.
    g.pad();
    for _ in 0..20_000 {
        let id = g.next_id().unwrap();
        let lag = clock.now_seconds() - second_of(&layout, id);
        assert!(lag <= 5, "an ID {lag} s old after the filler's round");
    }
    assert!(g.stats().discarded >= 8191, "{:?}", g.stats());
}

#[test]
fn a_clock_set_back_waits_or_fails_instead_of_borrowing_past_the_cap() {
    let clock = ManualClock::from_seconds(T0);
    let layout = small();
    let g = driven(layout, 1, &clock)
        .max_lead(DEFAULT_MAX_LEAD, LeadPolicy::Fail)
        .build()
        .unwrap();
    let before = g.next_id().unwrap();
    clock.advance_seconds(-3600);
    let after = drain(&g);
    // What was already written is handed out (it is unique and above `before`); nothing new.
    assert!(after.iter().all(|&id| id > before));
    assert!(after.len() < 8192, "no second beyond the cap was added");
    assert_eq!(
        g.next_id(),
        Err(Error::LeadLimitReached {
            max_lead: DEFAULT_MAX_LEAD.as_secs()
        })
    );
    clock.advance_seconds(3600);
    let resumed = g.next_id().unwrap();
    assert!(resumed > *after.last().unwrap_or(&before));
}

/// A ring whose threshold is below a chunk (10 sequence bits: chunks of 1,024, threshold 512):
/// an async batch takes what is ready instead of waiting for a whole chunk that rule 3 would
/// never make ready (it stalled with 1,023 IDs ready).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_batch_never_waits_for_more_than_the_filler_will_write() {
    let layout = Layout::new(30, 23, 10, DEFAULT_EPOCH_SECONDS).unwrap();
    let g = CachedUidGenerator::builder(layout)
        .worker_id(1)
        .unbounded_lead()
        .build()
        .unwrap();
    let first = g.next_id_async().await.unwrap();
    let mut ids = vec![0u64; 100_000];
    tokio::time::timeout(Duration::from_secs(30), g.next_ids_async(&mut ids))
        .await
        .expect("the batch stalled")
        .unwrap();
    assert!(ids[0] > first);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

/// Rule 4 and the lease: under load at the cap, with a lease window shorter than the cap (so the
/// keeper is asked again and again, and used to double its reach each time), the lease reaches
/// at most `lease_window + max_lead` past the clock, in the keeper and in the row.
#[test]
fn leases_never_reach_past_the_window_plus_the_cap() {
    use ringflake::DatabaseAssigner;
    let dir = tempfile::tempdir().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let clock = ManualClock::from_seconds(now);
    let assigner = DatabaseAssigner::sqlite(dir.path().join("w.db"))
        .unwrap()
        .lease_window(Duration::from_secs(2));
    let layout = small();
    let g = CachedUidGenerator::builder(layout)
        .worker_id_from(&assigner)
        .clock(clock.clone())
        .background_filler(false)
        .max_lead(DEFAULT_MAX_LEAD, LeadPolicy::Fail)
        .build()
        .unwrap();
    let lead = DEFAULT_MAX_LEAD.as_secs() as i64;
    // Take until the lead reaches the cap: the keeper extends the lease on the filler's request.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut last = 0;
    while second_of(&layout, last) < now + lead {
        assert!(std::time::Instant::now() < deadline, "{:?}", g.stats());
        if let Some(id) = drain(&g).last() {
            last = *id;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let reach = g.stats().lease_until.expect("a leased worker id");
    assert!(
        reach >= now + lead,
        "the lease covers what was used: {reach}"
    );
    assert!(
        reach <= now + lead + 2,
        "lease {} s past the clock",
        reach - now
    );
    let row = assigner.list().unwrap()[0].lease_until;
    assert!(
        row <= now + lead + 2,
        "row lease {} s past the clock",
        row - now
    );
}
