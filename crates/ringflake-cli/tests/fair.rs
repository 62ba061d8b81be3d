//! Under pressure (issue 20): first come, first served at the lead cap, for the library's waiting
//! takes (deterministic, with a manual clock and futures polled by hand) and for `serve`'s
//! `/id` and `/ids` (the real binary as a subprocess).
//!
//! Every test runs in its own temporary directory, talks to 127.0.0.1 only and bounds every
//! wait; children are killed when a test fails.
#![cfg(unix)]

mod common;

use common::{Client, Serve, get, json_ids, json_int, metric};
use ringflake::{CachedUidGenerator, Layout, LeadPolicy, ManualClock};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// 30/20/13: 8,192 IDs a second, so that a small lead cap binds at once.
fn small() -> Layout {
    Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).expect("layout")
}

/// A second well inside the small layout's lifetime.
const T0: i64 = 1_800_000_000;

/// Polls `f` once, with a waker that does nothing (the test polls again itself).
fn poll<T>(f: &mut Pin<Box<dyn Future<Output = T> + '_>>) -> Poll<T> {
    f.as_mut().poll(&mut Context::from_waker(Waker::noop()))
}

type Take<'g, T> = Pin<Box<dyn Future<Output = T> + 'g>>;

/// A generator on the manual clock with no background filler and no borrowing (`max_lead` 0,
/// waiting): every second beyond the clock's is the cap's, and the test decides every step.
fn at_the_cap(clock: &ManualClock) -> CachedUidGenerator {
    CachedUidGenerator::builder(small())
        .worker_id(1)
        .clock(clock.clone())
        .background_filler(false)
        .max_lead(Duration::from_secs(0), LeadPolicy::Wait)
        .build()
        .expect("generator")
}

/// Waiting takes are served in the order they arrived, whatever order they are polled in: a
/// batch, a single async take and a blocking batch (on its own thread) queue behind a head that
/// is still waiting for the clock; a newcomer's `try_next_id` gets nothing while they wait; a
/// waiter that leaves takes nothing and leaves its place to the next. The clock is a manual
/// one and there is no background filler, so every step is decided by the test.
#[test]
fn no_waiter_is_overtaken() {
    let clock = ManualClock::from_seconds(T0);
    let g = at_the_cap(&clock);
    // The only second the cap allows, all but 100 IDs of it.
    let mut first = vec![0u64; 8092];
    g.next_ids(&mut first).expect("first batch");
    let before = g.stats();
    // A arrives first and takes the 100 that are ready (held), then waits for the clock.
    let mut a_ids = vec![0u64; 3000];
    let mut b_ids = vec![0u64; 3000];
    let mut d_ids = vec![0u64; 2000];
    let mut a: Take<'_, _> = Box::pin(g.next_ids_async(&mut a_ids));
    let mut b: Take<'_, _> = Box::pin(g.next_ids_async(&mut b_ids));
    let mut c: Take<'_, _> = Box::pin(g.next_id_async());
    let mut d: Take<'_, _> = Box::pin(g.next_ids_async(&mut d_ids));
    assert!(poll(&mut a).is_pending());
    assert!(poll(&mut b).is_pending());
    assert!(poll(&mut c).is_pending());
    assert!(poll(&mut d).is_pending());
    let waiting = g.stats();
    assert_eq!(
        (waiting.waiting_takes, waiting.waiting_ids),
        (4, 2900 + 3000 + 1 + 2000),
        "A has 100 of its 3,000"
    );
    assert_eq!(
        waiting.issued, before.issued,
        "A's 100 are held, not issued"
    );
    // B's client goes away: B leaves, having taken nothing; nobody moves ahead of A.
    drop(b);
    assert_eq!(g.stats().waiting_takes, 3);
    let (c_id, e_ids) = std::thread::scope(|s| {
        // Owned by this closure, so that a failing check drops them and lets E finish (the
        // scope joins E before it reports the failure).
        let (mut a, mut c, mut d) = (a, c, d);
        // E, a blocking batch, arrives last and waits (parked) for its turn.
        let e = s.spawn(|| {
            let mut ids = vec![0u64; 1000];
            g.next_ids(&mut ids).map(|()| ids)
        });
        common::wait_until("E queued", Duration::from_secs(10), || {
            g.stats().waiting_takes == 4
        });
        // The clock moves: a new second's 8,192 IDs are written. A newcomer gets none of them.
        clock.advance_seconds(1);
        g.pad();
        assert_eq!(
            g.try_next_id(),
            None,
            "takes are waiting: the IDs are theirs"
        );
        // Polled last to first: only the head moves.
        assert!(poll(&mut d).is_pending(), "D is behind C");
        assert!(poll(&mut c).is_pending(), "C is behind A");
        let Poll::Ready(done) = poll(&mut a) else {
            panic!("A, the head, has its IDs: {:?}", g.stats())
        };
        done.expect("A");
        let Poll::Ready(c_id) = poll(&mut c) else {
            panic!("C is the head now")
        };
        let Poll::Ready(done) = poll(&mut d) else {
            panic!("D is the head now")
        };
        done.expect("D");
        drop((a, d));
        (c_id.expect("C"), e.join().expect("E's thread").expect("E"))
    });
    // In arrival order: A (the old second's last 100, then the new one's), C, D, E.
    let layout = small();
    let second = |id: u64| layout.parse(id).expect("parse").unix_seconds;
    assert_eq!(second(a_ids[99]), T0);
    assert_eq!(second(a_ids[100]), T0 + 1);
    let order = [
        *first.last().expect("first"),
        a_ids[0],
        a_ids[2999],
        c_id,
        d_ids[0],
        d_ids[1999],
        e_ids[0],
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    let mut all: Vec<u64> = [&first[..], &a_ids, &[c_id], &d_ids, &e_ids].concat();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID twice");
    let after = g.stats();
    assert_eq!(after.issued, before.issued + 3000 + 1 + 2000 + 1000);
    assert_eq!(after.discarded, before.discarded, "B claimed nothing");
    assert_eq!((after.waiting_takes, after.waiting_ids), (0, 0));
}

/// A batch given up at the head, after it had claimed part of its IDs, hands out nothing: what
/// it claimed is discarded, never issued, and `issued` never went up and down meanwhile.
#[test]
fn a_head_that_gives_up_takes_nothing() {
    let clock = ManualClock::from_seconds(T0);
    let g = at_the_cap(&clock);
    let mut first = vec![0u64; 8000];
    g.next_ids(&mut first).expect("first batch");
    let before = g.stats();
    let mut ids = vec![0u64; 1000];
    let mut head: Take<'_, _> = Box::pin(g.next_ids_async(&mut ids));
    assert!(poll(&mut head).is_pending());
    let waiting = g.stats();
    assert_eq!(waiting.issued, before.issued);
    assert_eq!(waiting.waiting_ids, 1000 - 192, "192 claimed, held");
    drop(head);
    let after = g.stats();
    assert_eq!(after.issued, before.issued, "nothing handed out");
    assert_eq!(after.discarded, before.discarded + 192);
    assert_eq!(after.waiting_takes, 0);
    // The next take starts after what was given up.
    clock.advance_seconds(1);
    let next = g.next_id().expect("next");
    assert!(next > first[7999] + 192);
}

// ---------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------

/// The flags of the 16-client scenario: 13 sequence bits, a lead cap of 10 s.
fn capped_flags() -> Vec<&'static str> {
    [&common::LAYOUT_30_20_13[..], &["--max-lead", "10"]].concat()
}

/// What one client of [`sixteen_clients_share_the_cap`] saw.
#[derive(Default)]
struct Seen {
    batches: usize,
    unavailable: usize,
    ids: Vec<u64>,
    problems: Vec<String>,
}

/// 16 clients each asking `/ids?count=5000` in a loop for 15 s from a `serve` whose lead cap
/// binds (8,192 IDs a second, `--max-lead 10`: about 212,000 IDs in those 15 s, some 42
/// batches): first come, first served, every client completes at least one batch and none more
/// than three times the least; every ID is distinct. Meanwhile a batch the cap can never hold is
/// refused with a 400 at once, not queued.
#[test]
fn sixteen_clients_share_the_cap() {
    let dir = tempfile::tempdir().expect("temp dir");
    let serve = Serve::start(dir.path(), &capped_flags());
    let addr = serve.addr();
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let (seen, refused) = std::thread::scope(|s| {
        // Stops the clients however this closure ends: a failed wait below panics, and the scope
        // would otherwise wait for clients that never stop.
        let _stop_clients = StopOnDrop(&stop);
        let clients: Vec<_> = (0..16)
            .map(|_| {
                s.spawn(|| {
                    let mut seen = Seen::default();
                    // Longer than --max-wait's default: the service answers first.
                    let mut c = Client::new(addr, Duration::from_secs(40));
                    while !stop.load(Ordering::SeqCst) {
                        match c.get("/ids?count=5000") {
                            Ok(r) if r.status == 200 => {
                                seen.batches += 1;
                                seen.ids.extend(json_ids(&r.body));
                            }
                            Ok(r) if r.status == 503 && r.header("retry-after").is_some() => {
                                seen.unavailable += 1;
                            }
                            Ok(r) => seen.problems.push(format!("{} {}", r.status, r.body)),
                            Err(e) => seen.problems.push(e.to_string()),
                        }
                    }
                    seen
                })
            })
            .collect();
        // Once the queue is long, a batch larger than the cap holds is refused at once.
        common::wait_until("a queue", Duration::from_secs(20), || {
            json_int(&get(addr, "/status").body, "waiting_takes").unwrap_or(0) >= 8
        });
        // The queue is in /metrics too (sampled every second), with the IDs it waits for.
        common::wait_until("the queue in /metrics", Duration::from_secs(10), || {
            let scrape = get(addr, "/metrics").body;
            metric(&scrape, "ringflake_waiting_takes").unwrap_or(0.0) >= 2.0
                && metric(&scrape, "ringflake_waiting_ids").unwrap_or(0.0) >= 5_000.0
        });
        let asked = Instant::now();
        let refused = get(addr, "/ids?count=90113");
        let refused = (refused.status, refused.body, asked.elapsed());
        std::thread::sleep(Duration::from_secs(15).saturating_sub(started.elapsed()));
        stop.store(true, Ordering::SeqCst);
        let seen: Vec<Seen> = clients
            .into_iter()
            .map(|c| c.join().expect("client"))
            .collect();
        (seen, refused)
    });
    let counts: Vec<usize> = seen.iter().map(|s| s.batches).collect();
    let summary = format!(
        "batches per client {counts:?}, 503s {:?}, in {:.1?}; output:\n{}",
        seen.iter().map(|s| s.unavailable).collect::<Vec<_>>(),
        started.elapsed(),
        serve.output()
    );
    for s in &seen {
        assert!(s.problems.is_empty(), "{:?}\n{summary}", s.problems);
    }
    let least = *counts.iter().min().expect("16 clients");
    let most = *counts.iter().max().expect("16 clients");
    assert!(least >= 1, "a client completed no batch: {summary}");
    assert!(most <= 3 * least, "unfair: {summary}");
    let mut all: Vec<u64> = seen.into_iter().flat_map(|s| s.ids).collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID twice: {summary}");
    let (status, body, took) = refused;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("count 90113 is more than"), "{body}");
    assert!(took < Duration::from_secs(2), "refused after {took:?}");
    eprintln!("{summary}");
}

/// Sets its flag when dropped (also when the thread unwinds from a failed assertion).
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A waiter whose client disconnects takes nothing: the service cannot make an ID for half a
/// minute (its state file records a second 40 s ahead, as after the clock was set back, and
/// `--max-lag 60` makes that a wait at the lead cap, not a generator that cannot serve, which
/// would be answered at once), so requests queue; one client hangs up while queued, the others
/// are answered 503 after `--max-wait` with a `Retry-After` counted from the queue they leave
/// behind (the first leaves 20,000 IDs at 8,192 a second: 3 s; the last nothing: 1 s). `issued`
/// never moves and the queue empties. The last waiter arrives at least 2 s after the first, so
/// the first's answer is made while the last still waits, however slow the machine.
#[test]
fn a_waiter_that_disconnects_takes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ahead = common::unix_now() as i64 + 40;
    std::fs::write(
        dir.path().join("ahead.state"),
        format!("ringflake-reach 1\n{ahead}\n"),
    )
    .expect("state file");
    let mut flags = capped_flags();
    flags.extend([
        "--state-file",
        "ahead.state",
        "--max-wait",
        "6",
        "--max-lag",
        "60",
    ]);
    let serve = Serve::start(dir.path(), &flags);
    let addr = serve.addr();
    let status = || get(addr, "/status").body;
    let issued = json_int(&status(), "issued");
    assert_eq!(issued, Some(0), "{}", status());
    let waits = |path: &'static str| {
        move || {
            let started = Instant::now();
            let r = Client::new(addr, Duration::from_secs(20))
                .get(path)
                .expect("answer");
            (r, started.elapsed())
        }
    };
    let queued = |ids| {
        common::wait_until(
            &format!("{ids} IDs queued"),
            Duration::from_secs(10),
            || json_int(&status(), "waiting_ids") == Some(ids),
        )
    };
    std::thread::scope(|s| {
        let first_at = Instant::now();
        let first = s.spawn(waits("/ids?count=3000"));
        queued(3000);
        // The second asks for 5,000 and hangs up while it waits.
        let mut leaves = std::net::TcpStream::connect(addr).expect("connect");
        std::io::Write::write_all(
            &mut leaves,
            format!("GET /ids?count=5000 HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes(),
        )
        .expect("request");
        queued(8000);
        std::thread::sleep(Duration::from_secs(2).saturating_sub(first_at.elapsed()));
        let third = s.spawn(waits("/ids?count=20000"));
        queued(28000);
        drop(leaves);
        queued(23000);
        assert_eq!(json_int(&status(), "issued"), Some(0));
        for (waiter, retry) in [(first, "3"), (third, "1")] {
            let (r, took) = waiter.join().expect("waiter");
            assert_eq!(r.status, 503, "{}", r.body);
            assert!(
                took >= Duration::from_millis(5900),
                "answered after {took:?}"
            );
            assert!(r.body.contains("no IDs within 6 s"), "{}", r.body);
            assert_eq!(r.header("retry-after"), Some(retry), "{}", r.body);
        }
    });
    let body = status();
    assert_eq!(json_int(&body, "issued"), Some(0), "{body}");
    assert_eq!(json_int(&body, "discarded"), Some(0), "{body}");
    assert_eq!(json_int(&body, "waiting_takes"), Some(0), "{body}");
}

// ---------------------------------------------------------------------------------------------
// A restart keeps its worker id
// ---------------------------------------------------------------------------------------------

/// The worker id `serve` reports on `/healthz`.
fn worker_of(addr: std::net::SocketAddr) -> i64 {
    let health = get(addr, "/healthz");
    json_int(&health.body, "worker_id").unwrap_or_else(|| panic!("no worker id: {}", health.body))
}

/// 20 `kill -9` restarts of `serve` in one directory with default flags (the default SQLite
/// worker table and state file): each restart proves its predecessor gone (the owner file's lock
/// is free) and takes its row back, so one worker id serves them all (at most 2 allowed), each
/// run starts above everything the one before handed out, and no ID repeats.
#[test]
fn kill_9_restarts_keep_their_worker_id() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut workers = Vec::new();
    let mut all = Vec::new();
    let mut last: Option<u64> = None;
    for run in 0..20 {
        let mut serve = Serve::start(dir.path(), &[]);
        let addr = serve.addr();
        workers.push(worker_of(addr));
        let mut c = Client::new(addr, Duration::from_secs(10));
        for _ in 0..3 {
            let r = c.get("/ids?count=1000").expect("/ids");
            assert_eq!(r.status, 200, "run {run}: {}", r.body);
            let ids = json_ids(&r.body);
            if let Some(before) = last {
                assert!(
                    ids[0] > before,
                    "run {run} starts at {} <= {before}",
                    ids[0]
                );
            }
            last = ids.last().copied();
            all.extend(ids);
        }
        serve.kill();
    }
    let distinct: HashSet<i64> = workers.iter().copied().collect();
    assert!(distinct.len() <= 2, "worker ids {workers:?}");
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID twice");
    eprintln!("worker ids of the 20 runs: {workers:?}");
}

/// A second process in the same directory while the first runs (a `gen` beside a `serve`, or a
/// second `serve`) cannot take the owner file's lock: it gets a worker id of its own and never
/// touches the first's row. Once the first is killed, the next restart takes the first's row back,
/// not the second's, which goes on serving under its own id.
#[test]
fn a_second_process_beside_a_running_one_gets_its_own_worker_id() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut first = Serve::start(dir.path(), &[]);
    let first_worker = worker_of(first.addr());
    let before = get(first.addr(), "/id").body;
    // `gen` beside it: a worker id of its own.
    let out = common::ringflake(dir.path())
        .args(["gen", "-n", "3"])
        .output()
        .expect("gen");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let layout = Layout::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let id: u64 = line.parse().expect("an ID");
        let w = layout.parse(id).expect("parse").worker_id as i64;
        assert_ne!(w, first_worker, "gen took the running serve's worker id");
    }
    let second = Serve::start(dir.path(), &[]);
    let second_worker = worker_of(second.addr());
    assert_ne!(second_worker, first_worker);
    first.kill();
    let third = Serve::start(dir.path(), &[]);
    assert_eq!(
        worker_of(third.addr()),
        first_worker,
        "the killed one's row"
    );
    assert!(
        get(third.addr(), "/id")
            .body
            .trim_end()
            .parse::<u64>()
            .expect("an ID")
            > before.trim_end().parse().expect("an ID")
    );
    // The second still holds its own row and serves.
    let health = get(second.addr(), "/healthz");
    assert_eq!(health.status, 200, "{}", health.body);
    assert_eq!(json_int(&health.body, "worker_id"), Some(second_worker));
}

/// A row the owner file names is taken back only while it still names the boot that held it:
/// one recycled by another node (another `PORT`) or replaced by a Java node's (no lease) is
/// left alone, and the boot takes a worker id of its own. Without the state file, nothing says
/// where the predecessor's IDs ended: nothing is taken back either.
#[test]
fn only_the_predecessors_own_row_is_taken_back() {
    use ringflake::DatabaseAssigner;
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ringflake.db");
    let state = dir.path().join("ringflake.state");
    let assigner = DatabaseAssigner::sqlite(&db)
        .expect("sqlite")
        .keep_worker_id(&state);
    let boot = || {
        CachedUidGenerator::builder(Layout::default())
            .worker_id_from(&assigner)
            .state_file(&state)
            .build()
            .expect("boot")
    };
    let sql = |statement: &str| {
        rusqlite::Connection::open(&db)
            .expect("open")
            .execute(statement, [])
            .expect(statement)
    };
    let g = boot();
    g.next_id().expect("an ID");
    assert_eq!(g.worker_id(), 1);
    drop(g);
    // Another node recycled row 1 (its own PORT): not ours to take back.
    sql("UPDATE WORKER_NODE SET PORT = '1700000000000-1' WHERE ID = 1");
    let g = boot();
    assert_eq!(g.worker_id(), 2, "row 1 names another boot now");
    drop(g);
    // Row 2 deleted and its ID taken by a Java node (no lease), even with the same host and
    // port: not ours either.
    sql("UPDATE WORKER_NODE SET LEASE_UNTIL = 0, LAUNCH_DATE = '2016-05-20' WHERE ID = 2");
    let g = boot();
    assert_eq!(g.worker_id(), 3, "row 2 is a Java node's now");
    drop(g);
    // The state file gone: nothing says where row 3's IDs ended.
    std::fs::remove_file(&state).expect("state file");
    let g = boot();
    assert_eq!(g.worker_id(), 4, "no state file, no taking back");
    let last = g.next_id().expect("an ID");
    drop(g);
    // And with everything in place, the row comes back.
    let g = boot();
    assert_eq!(g.worker_id(), 4);
    assert!(g.next_id().expect("an ID") > last);
}

// ---------------------------------------------------------------------------------------------
// A node that heals itself after losing its lease
// ---------------------------------------------------------------------------------------------

/// Moves row `id`'s lease under its holder's feet, as a recycler on another node would when it
/// takes the row over: another `PORT`, a lease of its own.
fn take_over(db: &std::path::Path, id: u64) {
    let moved = rusqlite::Connection::open(db)
        .expect("open")
        .execute(
            "UPDATE WORKER_NODE SET PORT = '1700000000000-99999', LEASE_UNTIL = LEASE_UNTIL + 1000 \
             WHERE ID = ?1",
            [id as i64],
        )
        .expect("take over");
    assert_eq!(moved, 1);
}

/// A generator whose row is taken over takes a new worker id from its source by itself and
/// serves again: its IDs before and after are distinct and increasing, the ring's IDs of the old
/// worker id are not handed out after the switch, and `Stats` tells the new id and one heal.
#[test]
fn a_generator_whose_row_is_taken_over_heals() {
    use ringflake::DatabaseAssigner;
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ringflake.db");
    let assigner = DatabaseAssigner::sqlite(&db)
        .expect("sqlite")
        .lease_window(Duration::from_secs(1));
    let g = CachedUidGenerator::builder(Layout::default())
        .worker_id_from(&assigner)
        .state_file(dir.path().join("ringflake.state"))
        .build()
        .expect("boot");
    assert_eq!(g.worker_id(), 1);
    let mut ids = vec![g.next_id().expect("an ID")];
    take_over(&db, 1);
    let started = Instant::now();
    while g.worker_id() == 1 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "not healed: {:?}",
            g.stats()
        );
        if let Ok(id) = g.next_id() {
            ids.push(id);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(g.worker_id(), 2, "a new row");
    let stats = g.stats();
    assert_eq!(
        (stats.worker_id, stats.heals, stats.lease_lost),
        (2, 1, false)
    );
    let after: Vec<u64> = (0..10_000).map(|_| g.next_id().expect("an ID")).collect();
    let layout = Layout::default();
    assert!(
        after
            .iter()
            .all(|&id| layout.parse(id).expect("parse").worker_id == 2),
        "an ID of the old worker id after the switch"
    );
    ids.extend(after);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "IDs went down");
    // The row it left is the other node's; the new one is held.
    let rows = assigner.list().expect("rows");
    assert_eq!(rows[0].port, "1700000000000-99999");
    assert!(rows[1].lease_until > 0);
}

/// The worker table's ids at boot; after a heal none: without a retaker (`refusal` `None`, as a
/// fixed id has), or an error (`refusal`, as `serve` refuses a new id that meets another
/// generator's IDs).
struct NoHeal {
    table: ringflake::DatabaseAssigner,
    refusal: Option<&'static str>,
}

/// A source whose first answer is the table's (the boot's worker id: the builder asks the
/// retaker for it once its checks have passed) and every later one (a heal's) an error.
struct Refuse {
    boot: Box<dyn ringflake::WorkerIdAssigner + Send + Sync>,
    asked: std::sync::atomic::AtomicBool,
    why: &'static str,
}

impl ringflake::WorkerIdAssigner for Refuse {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, ringflake::Error> {
        self.assign(layout).map(|a| a.worker_id)
    }
    fn assign(&self, layout: &Layout) -> Result<ringflake::Assignment, ringflake::Error> {
        if !self.asked.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return self.boot.assign(layout);
        }
        Err(ringflake::Error::WorkerAssignment(self.why.into()))
    }
}

impl ringflake::WorkerIdAssigner for NoHeal {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, ringflake::Error> {
        self.table.assign_worker_id(layout)
    }
    fn assign(&self, layout: &Layout) -> Result<ringflake::Assignment, ringflake::Error> {
        self.table.assign(layout)
    }
    fn retaker(&self) -> Option<Box<dyn ringflake::WorkerIdAssigner + Send + Sync>> {
        let why = self.refusal?;
        Some(Box::new(Refuse {
            boot: self.table.retaker()?,
            asked: std::sync::atomic::AtomicBool::new(false),
            why,
        }))
    }
}

/// A generator on a 1 s lease whose source is a [`NoHeal`] with `refusal`, one ID taken, its row
/// then taken over: the first take error whose text has `wanted` (within 20 s), and the
/// generator's worker id and heals then.
fn after_a_takeover(refusal: Option<&'static str>, wanted: &str) -> (String, u64, u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ringflake.db");
    let source = NoHeal {
        table: ringflake::DatabaseAssigner::sqlite(&db)
            .expect("sqlite")
            .lease_window(Duration::from_secs(1)),
        refusal,
    };
    let g = CachedUidGenerator::builder(Layout::default())
        .worker_id_from(&source)
        .max_lead(Duration::from_secs(0), LeadPolicy::Wait)
        .build()
        .expect("boot");
    g.next_id().expect("an ID");
    take_over(&db, 1);
    let started = Instant::now();
    let mut last = None;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no take failed naming {wanted:?}; the last: {last:?}"
        );
        match g.next_id() {
            Err(e) if e.to_string().contains(wanted) => {
                assert!(matches!(e, ringflake::Error::LeaseExpired { .. }), "{e}");
                return (e.to_string(), g.worker_id(), g.stats().heals);
            }
            other => last = Some(other),
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A generator whose source has no other worker id to give (here an assigner without a
/// retaker) cannot heal: once the lease it held runs out, takes fail saying so.
#[test]
fn a_generator_whose_source_has_no_other_id_says_so() {
    let (text, worker_id, heals) = after_a_takeover(None, "no other id to give");
    assert!(text.contains("taken over"), "{text}");
    assert_eq!((worker_id, heals), (1, 0));
}

/// A generator whose source answers a heal with an error (here every new worker id refused, as
/// `serve` refuses one that meets another generator's IDs) serves nothing, and its takes say
/// why: the takeover, and the source's last answer.
#[test]
fn a_generator_whose_new_ids_are_refused_says_why() {
    let (text, worker_id, heals) = after_a_takeover(
        Some("new worker id 2 refused: it meets generator orders's"),
        "has given none yet",
    );
    assert!(text.contains("taken over"), "{text}");
    assert!(
        text.contains(
            "which has given none yet: worker id assignment failed: new worker id 2 refused: it \
             meets generator orders's"
        ),
        "{text}"
    );
    assert_eq!((worker_id, heals), (1, 0));
}

/// Sends signal `name` (`STOP`, `CONT`) to `pid` with kill(1).
fn signal(pid: u32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill -{name} {pid}");
}

/// A layout with three worker ids (2 worker bits), so that a node that boots while the others
/// hold ids 2 and 3 recycles an expired row, and a 21-bit sequence (a small ring).
const THREE_WORKERS: [&str; 6] = [
    "--time-bits",
    "40",
    "--worker-bits",
    "2",
    "--seq-bits",
    "21",
];

/// `serve` in its own directory under `root` (its own state file) on the worker table `db`,
/// with a lease window of 2 s, `extra` added.
fn node(root: &std::path::Path, name: &str, db: &std::path::Path, extra: &[&str]) -> Serve {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("node dir");
    let db = db.display().to_string();
    let mut flags: Vec<&str> = THREE_WORKERS.to_vec();
    flags.extend(["--db", &db, "--lease-window", "2"]);
    flags.extend(extra);
    Serve::start(&dir, &flags)
}

/// The IDs of `count` from `/ids`, checked to be a 200.
fn take(addr: std::net::SocketAddr, count: u32) -> Vec<u64> {
    let r = get(addr, &format!("/ids?count={count}"));
    assert_eq!(r.status, 200, "{}", r.body);
    json_ids(&r.body)
}

/// Polls `/id` until it answers with an ID of a worker id other than `old`, at most `limit`;
/// that ID.
fn serves_again(serve: &Serve, layout: &Layout, old: u64, limit: Duration) -> u64 {
    let started = Instant::now();
    loop {
        let r = get(serve.addr(), "/id");
        if r.status == 200 {
            let id: u64 = r.body.trim_end().parse().expect("an ID");
            if layout.parse(id).expect("parse").worker_id != old {
                return id;
            }
        }
        assert!(
            started.elapsed() < limit,
            "not serving with a new worker id within {limit:?}: last {} {}; /status {}; output:\n{}",
            r.status,
            r.body,
            get(serve.addr(), "/status").body,
            serve.output()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A node frozen (SIGSTOP) past its lease while another node recycles its worker id: once
/// thawed it finds the row taken, takes a new worker id by itself and serves again within 30 s,
/// `/status` showing the new id and the heal; every ID of both nodes is distinct.
#[test]
fn a_frozen_node_whose_id_was_taken_serves_again_under_a_new_one() {
    let root = tempfile::tempdir().expect("temp dir");
    let db = root.path().join("workers.db");
    let layout = Layout::new(40, 2, 21, ringflake::DEFAULT_EPOCH_SECONDS).expect("layout");
    let a = node(root.path(), "a", &db, &[]);
    let x = node(root.path(), "x", &db, &[]);
    let y = node(root.path(), "y", &db, &[]);
    let ids_of = |s: &Serve| worker_of(s.addr());
    assert_eq!((ids_of(&a), ids_of(&x), ids_of(&y)), (1, 2, 3));
    let mut all = take(a.addr(), 1000);
    signal(a.pid, "STOP");
    let _thaw = ThawOnDrop(a.pid);
    // Its lease runs out while it is frozen; then B, booting with no id free, recycles it.
    let table = ringflake::DatabaseAssigner::sqlite_read_only(&db).expect("table");
    common::wait_until("a's lease expired", Duration::from_secs(30), || {
        let rows = table.list().expect("rows");
        rows[0].lease_until < common::unix_now() as i64
    });
    let b = node(root.path(), "b", &db, &[]);
    assert_eq!(ids_of(&b), 1, "b recycles a's worker id");
    all.extend(take(b.addr(), 1000));
    // x goes away: its id is the one a can take once its lease runs out.
    drop(x);
    signal(a.pid, "CONT");
    let thawed = Instant::now();
    let first = serves_again(&a, &layout, 1, Duration::from_secs(30));
    eprintln!("a serves again {:?} after SIGCONT", thawed.elapsed());
    all.push(first);
    all.extend(take(a.addr(), 1000));
    all.extend(take(b.addr(), 1000));
    assert_eq!(layout.parse(first).expect("parse").worker_id, 2);
    let status = get(a.addr(), "/status").body;
    assert_eq!(json_int(&status, "worker_id"), Some(2), "{status}");
    assert_eq!(json_int(&status, "heals"), Some(1), "{status}");
    // The heal in /metrics (sampled every second), for RingflakeWorkerHealed.
    common::wait_until("the heal in /metrics", Duration::from_secs(10), || {
        let scrape = get(a.addr(), "/metrics").body;
        metric(&scrape, "ringflake_worker_heals_total") == Some(1.0)
            && metric(&scrape, "ringflake_worker_id") == Some(2.0)
    });
    let b_scrape = get(b.addr(), "/metrics").body;
    assert_eq!(
        metric(&b_scrape, "ringflake_worker_heals_total"),
        Some(0.0),
        "{b_scrape}"
    );
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID twice");
    drop(y);
}

/// Sends SIGCONT when dropped, so that a failing test does not leave a stopped process that
/// the `Serve` guard's SIGKILL would still end, but only after its children are reaped.
struct ThawOnDrop(u32);

impl Drop for ThawOnDrop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-CONT", &self.0.to_string()])
            .status();
    }
}

/// A partition, simulated by locking the SQLite worker table (an exclusive transaction) past the
/// lease window: while the row is still the node's, it serves again once the table answers,
/// with the same worker id; when another node takes the row meanwhile (the transaction takes it
/// over, as a recycler would), the node serves again under a new worker id within 30 s.
#[test]
fn a_partitioned_node_keeps_its_row_or_heals() {
    let root = tempfile::tempdir().expect("temp dir");
    let db = root.path().join("workers.db");
    let layout = Layout::new(40, 2, 21, ringflake::DEFAULT_EPOCH_SECONDS).expect("layout");
    let a = node(
        root.path(),
        "a",
        &db,
        &["--db-timeout", "1", "--max-lead", "0", "--max-wait", "1"],
    );
    assert_eq!(worker_of(a.addr()), 1);
    let mut all = take(a.addr(), 1000);
    let lost = |a: &Serve| {
        common::wait_until("a lost its lease", Duration::from_secs(30), || {
            get(a.addr(), "/healthz").status == 503
        })
    };
    // The table unreachable for longer than the lease window, the row untouched.
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute_batch("BEGIN EXCLUSIVE").expect("lock");
    lost(&a);
    conn.execute_batch("COMMIT").expect("unlock");
    common::wait_until("a serves again", Duration::from_secs(30), || {
        get(a.addr(), "/healthz").status == 200
    });
    assert_eq!(worker_of(a.addr()), 1, "its own row: the same worker id");
    all.extend(take(a.addr(), 1000));
    // Again, and this time another node takes the row while the table is out of a's reach.
    conn.execute_batch("BEGIN EXCLUSIVE").expect("lock");
    lost(&a);
    conn.execute(
        "UPDATE WORKER_NODE SET PORT = '1700000000000-99999', LEASE_UNTIL = ?1 WHERE ID = 1",
        [common::unix_now() as i64 + 600],
    )
    .expect("take over");
    conn.execute_batch("COMMIT").expect("unlock");
    let back = Instant::now();
    let first = serves_again(&a, &layout, 1, Duration::from_secs(30));
    eprintln!(
        "a serves again {:?} after the table is back",
        back.elapsed()
    );
    all.push(first);
    all.extend(take(a.addr(), 1000));
    assert_eq!(worker_of(a.addr()), 2);
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID twice");
}
