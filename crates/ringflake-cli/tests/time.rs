//! After a wrong clock or a pause, time still tells the truth (issue 22).
//!
//! With the injected clock: the state file keeps a reach per worker id (a release's file of the
//! first format is honoured), a worker id reserved beyond the lead cap is given back at boot, and
//! a take after the clock jumped while the filler did not run drops what is stale. On the real
//! binary: a run under a clock a day ahead does not take the next run down (libfaketime, ignored
//! unless asked for: `.ci/run` runs them), and no stale ID after the process was frozen.
#![cfg(unix)]

mod common;

use ringflake::{
    CachedUidGenerator, DatabaseAssigner, Error, Layout, LeadPolicy, ManualClock, WorkerIdAssigner,
};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

const T: i64 = 1_800_000_000;

/// 13 sequence bits: a second is 8,192 IDs, eight chunks of 1,024.
fn layout() -> Layout {
    Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).expect("valid layout")
}

fn second_of(id: u64) -> i64 {
    layout().parse(id).expect("positive id").unix_seconds
}

fn real_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

/// A generator of `worker_id` on `clock` with the state file `state`, filled by its takes (no
/// filler thread), failing at the default lead cap instead of waiting for a clock that only the
/// test moves.
fn with_state(worker_id: u64, clock: &ManualClock, state: &Path) -> CachedUidGenerator {
    CachedUidGenerator::builder(layout())
        .worker_id(worker_id)
        .clock(clock.clone())
        .state_file(state)
        .max_lead(ringflake::DEFAULT_MAX_LEAD, LeadPolicy::Fail)
        .background_filler(false)
        .build()
        .expect("valid generator")
}

/// Two worker ids in one state file, one of them a day ahead (a run under a clock set a day
/// ahead): the other starts at the clock; the one ahead starts above its own reach, and not
/// before the clock is within the lead cap of it.
#[test]
fn each_worker_id_starts_above_its_own_reach() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("ringflake.state");
    let clock = ManualClock::from_seconds(T + 86_400);
    let ahead = with_state(1, &clock, &state);
    let last_ahead = ahead.next_id().unwrap();
    assert_eq!(second_of(last_ahead), T + 86_400);
    // Dropped or killed alike: a fixed worker id has no lease to release, and the state file
    // only grows. (Forgotten, it would still hold worker id 1 on the state file.)
    drop(ahead);

    clock.set_millis(T * 1000);
    let other = with_state(2, &clock, &state);
    let id = other
        .next_id()
        .expect("a worker id the file has not seen starts at the clock");
    assert_eq!(second_of(id), T);
    drop(other);

    let again = with_state(1, &clock, &state);
    assert_eq!(
        again.next_id(),
        Err(Error::LeadLimitReached { max_lead: 10 }),
        "worker id 1 may not start below a day ahead"
    );
    // Once the clock is within the cap of its reach, it serves, above the killed run's IDs.
    clock.set_millis((T + 86_400 - 9) * 1000);
    let id = again.next_id().unwrap();
    assert!(id > last_ahead);
    assert_eq!(second_of(id), T + 86_401);
    let text = std::fs::read_to_string(&state).unwrap();
    assert_eq!(
        text,
        format!("ringflake-reach 2\nworker 1 {}\nworker 2 {T}\n", T + 86_401)
    );
}

/// A state file that the released version 0.1.0 wrote (`gen --worker-id 7`, one second for
/// every worker id) is read and honoured: every worker id starts above its second until the
/// clock passes it, and the second stays in the file as every id's reach.
#[test]
fn a_release_state_file_is_read_and_honoured() {
    let sample = std::fs::read_to_string("tests/data/release-0.1.0.state").unwrap();
    let recorded: i64 = sample
        .strip_prefix("ringflake-reach 1\n")
        .and_then(|rest| rest.trim_end().parse().ok())
        .expect("the first format: a magic line and a second");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("ringflake.state");
    std::fs::write(&state, &sample).unwrap();
    let clock = ManualClock::from_seconds(recorded - 5);
    for worker_id in [7, 8] {
        let g = with_state(worker_id, &clock, &state);
        let id = g.next_id().unwrap();
        assert_eq!(second_of(id), recorded + 1, "worker id {worker_id}");
    }
    let text = std::fs::read_to_string(&state).unwrap();
    assert!(
        text.starts_with(&format!("ringflake-reach 2\nall {recorded}\n")),
        "{text}"
    );
    // Once the clock has passed it, a worker id starts at the clock.
    clock.set_millis((recorded + 100) * 1000);
    let g = with_state(9, &clock, &state);
    assert_eq!(second_of(g.next_id().unwrap()), recorded + 100);
}

/// A worker table recreated after a run under a clock a day ahead hands out worker id 1 again,
/// which the state file says reaches a day ahead: the boot gives it back (its row's lease moves
/// to that second, so nobody recycles it before) and takes another, which serves at the clock.
#[test]
fn a_database_id_reserved_ahead_is_given_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ringflake.db");
    let state = dir.path().join("ringflake.state");
    let now = real_now();
    let first = CachedUidGenerator::builder(layout())
        .worker_id_from(&DatabaseAssigner::sqlite(&db).unwrap())
        .clock(ManualClock::from_seconds(now + 86_400))
        .state_file(&state)
        .build()
        .unwrap();
    assert_eq!(first.worker_id(), 1);
    first.next_id().unwrap();
    std::mem::forget(first);

    // The worker table recreated: a new, empty one (the killed run's connection to the old file
    // is still open in this process).
    let assigner = DatabaseAssigner::sqlite(dir.path().join("recreated.db")).unwrap();
    let g = CachedUidGenerator::builder(layout())
        .worker_id_from(&assigner)
        .state_file(&state)
        .build()
        .unwrap();
    let back = g.given_back().expect("worker id 1 given back");
    assert_eq!((back.worker_id, g.worker_id()), (1, 2));
    assert!(
        (now + 86_400..now + 86_400 + 5).contains(&back.reserved_until),
        "{back:?}"
    );
    assert!(back.ahead_seconds() >= 86_390, "{back:?}");
    // Serving at once, within the lead cap: above the host's earlier rows as far as the cap
    // allows (monotonic restarts), never a day ahead.
    let id = g.next_id().unwrap();
    let ahead = second_of(id) - real_now();
    assert!((-1..=10).contains(&ahead), "{ahead} s ahead");
    let rows = assigner.list().unwrap();
    assert_eq!(rows[0].id, 1);
    assert_eq!(
        rows[0].lease_until, back.reserved_until,
        "not recyclable before its reach"
    );
}

/// Given back once, not twice: when every worker id is reserved ahead (a state file of the first
/// format a day ahead), the second one is kept; the boot does not fail.
#[test]
fn the_second_id_is_kept_even_if_reserved_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("ringflake.state");
    let ahead = real_now() + 86_400;
    std::fs::write(&state, format!("ringflake-reach 1\n{ahead}\n")).unwrap();
    let assigner = DatabaseAssigner::sqlite(dir.path().join("ringflake.db")).unwrap();
    let g = CachedUidGenerator::builder(layout())
        .worker_id_from(&assigner)
        .state_file(&state)
        .max_lead(ringflake::DEFAULT_MAX_LEAD, LeadPolicy::Fail)
        .build()
        .unwrap();
    assert_eq!(g.given_back().map(|b| b.worker_id), Some(1));
    assert_eq!(g.worker_id(), 2);
    assert_eq!(assigner.list().unwrap().len(), 2, "one retake, no more");
    assert_eq!(g.next_id(), Err(Error::LeadLimitReached { max_lead: 10 }));
    // A fixed id has nothing to give back to.
    let fixed = CachedUidGenerator::builder(layout())
        .worker_id(5)
        .state_file(&state)
        .build()
        .unwrap();
    assert_eq!(fixed.given_back(), None);
    // Nor does an assigner without a retaker.
    assert!(ringflake::FixedWorkerId(5).retaker().is_none());
}

/// A generator at `T` on `clock`, filled by its takes, with the default lead cap (waiting).
fn paused(clock: &ManualClock) -> CachedUidGenerator {
    CachedUidGenerator::builder(layout())
        .worker_id(3)
        .clock(clock.clone())
        .background_filler(false)
        .build()
        .expect("valid generator")
}

/// The clock jumps 4 s while the filler does not run (the process was paused): the next claim
/// of every take path finds the ring's IDs stale, drops them (the claim counted as discarded,
/// the rest of the ring's stale IDs as expired) and hands out the current second's.
#[test]
fn a_take_after_a_clock_jump_drops_the_stale_ring() {
    let counts = |g: &CachedUidGenerator| {
        let s = g.stats();
        (s.discarded, s.expired)
    };
    type Take = fn(&CachedUidGenerator) -> Vec<u64>;
    let paths: [(&str, Take); 5] = [
        ("next_ids", |g| {
            let mut out = vec![0; 1000];
            g.next_ids(&mut out).unwrap();
            out
        }),
        ("try_next_id", |g| {
            // Empty after the sweep: the first call finds nothing, then the ring is refilled.
            let first = g.try_next_id();
            let id = first.unwrap_or_else(|| {
                g.pad();
                g.try_next_id().expect("refilled")
            });
            vec![id]
        }),
        ("next_id on another thread", |g| {
            vec![std::thread::scope(|s| {
                s.spawn(|| g.next_id().unwrap()).join().unwrap()
            })]
        }),
        ("a new LocalTaker", |g| {
            let mut taker = g.local();
            (0..1000).map(|_| taker.next_id().unwrap()).collect()
        }),
        ("next_ids_async", |g| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            let mut out = vec![0; 1000];
            rt.block_on(g.next_ids_async(&mut out)).unwrap();
            out
        }),
    ];
    for (name, take) in paths {
        let clock = ManualClock::from_seconds(T);
        let g = paused(&clock);
        let before = g.next_id().unwrap();
        assert_eq!(second_of(before), T);
        clock.advance_seconds(4); // the filler does not run
        let (discarded, expired) = counts(&g);
        let ids = take(&g);
        for &id in &ids {
            assert_eq!(second_of(id), T + 4, "{name}: ID {id} is stale");
        }
        let (d, e) = counts(&g);
        assert!(
            e > expired,
            "{name}: the stale ring expired: {expired} -> {e}"
        );
        assert!(d - discarded >= e - expired, "{name}");
    }
}

/// What a thread already holds of a chunk or block claimed before the jump may still be handed
/// out, at most the rest of that one chunk (1,024 IDs); every later claim is checked. Any take's
/// look at the clock tells per-thread takers too: their stale block goes at once.
#[test]
fn what_a_thread_holds_is_bounded_by_one_chunk() {
    let clock = ManualClock::from_seconds(T);
    let g = paused(&clock);
    let first: Vec<u64> = (0..10).map(|_| g.next_id().unwrap()).collect();
    clock.advance_seconds(4);
    let after: Vec<u64> = (0..3000).map(|_| g.next_id().unwrap()).collect();
    let stale = after.iter().take_while(|&&id| second_of(id) == T).count();
    assert!(stale <= 1024 - 10, "{stale} stale IDs after the jump");
    assert!(
        after[stale..].iter().all(|&id| second_of(id) == T + 4),
        "only the rest of the chunk held before the jump is stale"
    );
    assert!(after[0] > first[9]);

    let clock = ManualClock::from_seconds(T);
    let g = paused(&clock);
    let mut taker = g.local();
    for _ in 0..10 {
        taker.next_id().unwrap();
    }
    clock.advance_seconds(4);
    // Another take reads the clock: the taker's block is stale from its next ID on.
    let mut batch = [0u64; 10];
    g.next_ids(&mut batch).unwrap();
    assert_eq!(second_of(batch[0]), T + 4);
    assert_eq!(second_of(taker.next_id().unwrap()), T + 4);
}

/// An idle generator: what nobody takes expires, counted apart from what takes discard.
#[test]
fn unused_seconds_expire_apart_from_discards() {
    let clock = ManualClock::from_seconds(T);
    let g = paused(&clock);
    g.pad();
    let s = g.stats();
    assert_eq!((s.available, s.discarded, s.expired), (8192, 0, 0));
    for k in 1..=3 {
        clock.advance_seconds(2);
        g.pad();
        let s = g.stats();
        assert_eq!((s.discarded, s.expired), (8192 * k, 8192 * k), "second {k}");
    }
    // A dropped per-thread taker's block is discarded, not expired.
    let mut taker = g.local();
    taker.next_id().unwrap();
    drop(taker);
    let s = g.stats();
    assert_eq!(s.discarded - s.expired, 1023);
}

// ---------------------------------------------------------------------------------------------
// The real binary
// ---------------------------------------------------------------------------------------------

use common::{
    Serve, events, get, json_ids, json_int, json_str, libfaketime, serve_faked, set_offset, signal,
    text, unix_now,
};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The default layout's second of `id` (serve's layout).
fn serve_second(id: u64) -> i64 {
    Layout::default()
        .parse(id)
        .expect("positive id")
        .unix_seconds
}

/// `serve` with its defaults under light load, frozen 4 s (SIGSTOP, as a VM suspend or a swap
/// storm would) fifteen times: the first batch after each thaw holds no ID more than `max_lag`
/// (1 s) + 0.2 s older than the clock when it arrives.
#[test]
fn no_stale_id_after_the_process_was_frozen() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &[]);
    let addr = serve.addr();
    let mut ages = Vec::new();
    let mut all = HashSet::new();
    for _ in 0..15 {
        for _ in 0..3 {
            let r = get(addr, "/ids?count=1000");
            assert_eq!(r.status, 200, "{}", r.body);
            all.extend(json_ids(&r.body));
        }
        signal(serve.pid, "STOP");
        std::thread::sleep(Duration::from_secs(4));
        signal(serve.pid, "CONT");
        let r = get(addr, "/ids?count=1000");
        let at = unix_now();
        assert_eq!(r.status, 200, "{}", r.body);
        let ids = json_ids(&r.body);
        let oldest = ids.iter().map(|&id| serve_second(id)).min().expect("IDs");
        ages.push(at - oldest as f64);
        all.extend(ids);
    }
    assert_eq!(all.len(), 15 * 4 * 1000, "IDs repeated");
    let shown: Vec<String> = ages.iter().map(|a| format!("{a:.2}")).collect();
    assert!(
        ages.iter().all(|&age| age <= 1.2),
        "the first batch after a thaw held IDs this many seconds old: {}",
        shown.join(", ")
    );
    eprintln!(
        "oldest ID of each first batch after a thaw, seconds: {}",
        shown.join(", ")
    );
}

/// libfaketime, or a failure saying how to install it.
fn faketime() -> std::path::PathBuf {
    libfaketime().unwrap_or_else(|| {
        panic!(
            "no libfaketime.so.1 under /usr/lib/*/faketime/: install Debian's faketime package \
             (bash .ci/run installs it)"
        )
    })
}

/// The IDs of a `/ids` answer that must be 200.
fn ids_of(r: &common::Reply) -> Vec<u64> {
    assert_eq!(r.status, 200, "{}", r.body);
    json_ids(&r.body)
}

/// `serve` with its defaults (a SQLite worker table and a state file in its directory) under a
/// clock a day ahead, killed; then, the clock corrected, started again in the same directory:
/// it takes worker id 2 (id 1's lease reaches a day ahead, rightly) and serves within 5 s of its
/// start, the IDs of both runs all distinct. Before the state file kept a reach per worker id,
/// the restart served nothing for a day.
#[test]
#[ignore = "needs libfaketime (Debian package faketime; .ci/run installs it)"]
fn a_day_ahead_run_does_not_take_the_restart_down() {
    let lib = faketime();
    let dir = tempfile::tempdir().unwrap();
    let offset = dir.path().join("faketime.offset");
    set_offset(&offset, "+86400s");
    let mut first = serve_faked(dir.path(), &lib, &offset, &[]);
    let ahead = ids_of(&get(first.addr(), "/ids?count=5"));
    let second_ahead = serve_second(ahead[0]);
    assert!(
        second_ahead > unix_now() as i64 + 86_000,
        "the clock was not faked: second {second_ahead}; {}",
        first.output()
    );
    first.kill();

    set_offset(&offset, "+0s");
    let started = Instant::now();
    let second = serve_faked(dir.path(), &lib, &offset, &[]);
    let addr = second.addr();
    let ids = loop {
        let r = get(addr, "/ids?count=5");
        if r.status == 200 {
            break json_ids(&r.body);
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the restart serves nothing 5 s after its start: {} {}; /healthz {}; output: {}",
            r.status,
            r.body,
            get(addr, "/healthz").body,
            second.output()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let took = started.elapsed();
    let health = get(addr, "/healthz");
    assert_eq!(health.status, 200, "{}", health.body);
    assert_eq!(
        json_int(&health.body, "worker_id"),
        Some(2),
        "{}",
        health.body
    );
    let now = unix_now() as i64;
    for &id in &ids {
        let second = serve_second(id);
        assert!(
            (now - 1..=now + 10).contains(&second),
            "{id}: second {second}"
        );
    }
    let all: HashSet<u64> = ahead.iter().chain(&ids).copied().collect();
    assert_eq!(all.len(), 10, "IDs repeated: {ahead:?} {ids:?}");
    eprintln!("the restart served {took:?} after its start");
}

/// `serve --worker-id 7` under a clock a day ahead, killed; then, the clock corrected, started
/// again: worker id 7's IDs reach a day ahead, so it cannot serve (a fixed id has no other to
/// take), and says so: the start-up lines, `/healthz` (503), `/status`, the page and the `/id`
/// and `/ids` errors name the reserved second and when it serves again. Once the faked clock
/// passes it, the same process serves again, above the first run's IDs.
#[test]
#[ignore = "needs libfaketime (Debian package faketime; .ci/run installs it)"]
fn a_fixed_worker_id_reserved_a_day_ahead_says_so_until_it_serves() {
    let lib = faketime();
    let dir = tempfile::tempdir().unwrap();
    let offset = dir.path().join("faketime.offset");
    let seven = ["--worker-id", "7"];
    set_offset(&offset, "+86400s");
    let mut first = serve_faked(dir.path(), &lib, &offset, &seven);
    let ahead = ids_of(&get(first.addr(), "/ids?count=5"));
    first.kill();
    let state = std::fs::read_to_string(dir.path().join("ringflake.state")).unwrap();
    let reach: i64 = state
        .lines()
        .find_map(|l| l.strip_prefix("worker 7 "))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no reach of worker id 7 in {state:?}"));
    assert!(reach > unix_now() as i64 + 86_000, "{state}");

    set_offset(&offset, "+0s");
    let json = ["--worker-id", "7", "--log-format", "json"];
    let second = serve_faked(dir.path(), &lib, &offset, &json);
    let addr = second.addr();
    let reached = format!("(unix second {reach})");
    let startup = second.output();
    // With --log-format json the start-up line is an event (nothing on standard output).
    assert!(
        events(&startup).iter().any(|e| {
            let m = text(e, "message");
            m.starts_with("cannot serve: worker id 7 reserved ahead of the clock")
                && m.contains(&reached)
        }),
        "{startup}"
    );
    // A log event names the id, the reserved second and how far ahead it is.
    let warned = events(&startup)
        .into_iter()
        .find(|e| {
            text(e, "level") == "WARN"
                && text(e, "message").starts_with("worker id 7 reserved ahead of the clock")
        })
        .unwrap_or_else(|| panic!("no WARN event naming worker id 7: {startup}"));
    assert!(text(&warned, "message").contains(&reached), "{warned}");
    let ahead_seconds = warned.get("ahead_seconds").and_then(|v| v.as_i64());
    assert!(ahead_seconds.is_some_and(|a| a > 86_000), "{warned}");
    assert_eq!(
        warned.get("worker_id").and_then(|v| v.as_u64()),
        Some(7),
        "{warned}"
    );
    let health = get(addr, "/healthz");
    assert_eq!(health.status, 503, "{}", health.body);
    assert!(
        health.body.contains("\"state\":\"unavailable\"")
            && health
                .body
                .contains("worker id 7 reserved ahead of the clock")
            && health.body.contains(&reached),
        "{}",
        health.body
    );
    let serves_at = json_int(&health.body, "until").expect("until");
    assert!((reach - 11..=reach).contains(&serves_at), "{}", health.body);
    for path in ["/id", "/ids?count=5"] {
        let r = get(addr, path);
        assert_eq!(r.status, 503, "{path}: {}", r.body);
        assert!(r.body.contains(&reached), "{path}: {}", r.body);
        let retry: i64 = r
            .header("retry-after")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        assert!(retry > 86_000, "{path}: Retry-After {retry}");
    }
    let status = get(addr, "/status").body;
    assert_eq!(json_str(&status, "state"), Some("unavailable"), "{status}");
    assert!(status.contains(&reached), "{status}");
    let page = get(addr, "/").body;
    assert!(
        page.contains(">unavailable<") && page.contains(&reached),
        "{page}"
    );

    // The clock passes the reserved second: the same process serves again.
    set_offset(&offset, "+86400s");
    let start = Instant::now();
    let ids = loop {
        let r = get(addr, "/ids?count=5");
        if r.status == 200 {
            break json_ids(&r.body);
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "still {} {} 10 s after the clock passed the reserved second",
            r.status,
            r.body
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        ids[0] > *ahead.last().unwrap(),
        "{ids:?} not above {ahead:?}"
    );
    let health = get(addr, "/healthz");
    assert_eq!(health.status, 200, "{}", health.body);
}

/// A worker table recreated after a run under a clock a day ahead (its file deleted): worker id 1
/// is handed out again, but the state file says its IDs reach a day ahead: `serve` gives it back
/// and takes worker id 2, says so at start, and serves at once.
#[test]
#[ignore = "needs libfaketime (Debian package faketime; .ci/run installs it)"]
fn a_recreated_table_gives_back_the_id_reserved_ahead() {
    let lib = faketime();
    let dir = tempfile::tempdir().unwrap();
    let offset = dir.path().join("faketime.offset");
    set_offset(&offset, "+86400s");
    let mut first = serve_faked(dir.path(), &lib, &offset, &[]);
    let ahead = ids_of(&get(first.addr(), "/ids?count=5"));
    first.kill();
    std::fs::remove_file(dir.path().join("ringflake.db")).unwrap();

    set_offset(&offset, "+0s");
    let second = serve_faked(dir.path(), &lib, &offset, &["--log-format", "json"]);
    let startup = second.output();
    let given = events(&startup)
        .into_iter()
        .find(|e| {
            text(e, "level") == "WARN" && text(e, "message").starts_with("worker id 1 given back")
        })
        .unwrap_or_else(|| panic!("no WARN event naming worker id 1: {startup}"));
    assert!(
        given
            .get("ahead_seconds")
            .and_then(|v| v.as_i64())
            .is_some_and(|a| a > 86_000)
            && !text(&given, "reserved_until").is_empty(),
        "{given}"
    );
    assert!(
        events(&startup).iter().any(|e| {
            let m = text(e, "message");
            m.starts_with("worker id 1 given back: its IDs may already reach ")
                && m.contains("s ahead of the clock, beyond the lead cap; took worker id 2 instead")
        }),
        "{startup}"
    );
    let ids = ids_of(&get(second.addr(), "/ids?count=5"));
    let health = get(second.addr(), "/healthz");
    assert_eq!(health.status, 200, "{}", health.body);
    assert_eq!(
        json_int(&health.body, "worker_id"),
        Some(2),
        "{}",
        health.body
    );
    let all: HashSet<u64> = ahead.iter().chain(&ids).copied().collect();
    assert_eq!(all.len(), 10, "IDs repeated");
}
