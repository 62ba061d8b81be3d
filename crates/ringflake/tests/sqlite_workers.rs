//! Worker ids from a real SQLite file, with real processes: concurrent boots, Java-compatible rows,
//! ids beyond the max, recycling across 50 boots (some killed with SIGKILL), monotonic restarts.
//!
//! Child processes are this test binary run again with `RF_CHILD` set: see `child_process`.

use ringflake::{
    CachedUidGenerator, Clock, DatabaseAssigner, Error, Layout, LeadPolicy, ManualClock,
    SystemClock, WorkerIdAssigner,
};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn layout_from_env() -> Layout {
    match std::env::var("RF_LAYOUT").ok() {
        Some(s) => {
            let v: Vec<u32> = s.split(',').map(|x| x.parse().unwrap()).collect();
            Layout::new(v[0], v[1], v[2], ringflake::DEFAULT_EPOCH_SECONDS).unwrap()
        }
        None => Layout::default(),
    }
}

/// The child side: boot a generator from the SQLite file in RF_DB, take RF_TAKE IDs, write them
/// to RF_OUT, report on stdout, then exit cleanly or (RF_HANG) wait to be killed. RF_FROZEN_CLOCK
/// stops the generator's clock at the second it boots (its takes then borrow ahead however fast
/// they are); RF_MAX_LEAD sets a lead cap in seconds (policy `Fail`).
#[test]
fn child_process() {
    let Ok(db) = std::env::var("RF_CHILD") else {
        return; // not a child: nothing to do
    };
    let layout = layout_from_env();
    let recycle = std::env::var("RF_RECYCLE").is_ok();
    let window = std::env::var("RF_WINDOW").map_or(300, |w| w.parse().unwrap());
    let assigner = DatabaseAssigner::sqlite(&db)
        .unwrap()
        .recycle(recycle)
        .lease_window(Duration::from_secs(window))
        .retry_for(Duration::from_secs(60));
    let mut builder = CachedUidGenerator::builder(layout)
        .worker_id_from(&assigner)
        .boost_power(0);
    if std::env::var("RF_FROZEN_CLOCK").is_ok() {
        builder = builder.clock(ManualClock::from_seconds(SystemClock.now_seconds()));
    }
    if let Ok(lead) = std::env::var("RF_MAX_LEAD") {
        let lead = Duration::from_secs(lead.parse().unwrap());
        builder = builder.max_lead(lead, LeadPolicy::Fail);
    }
    let g = builder.build().unwrap();
    println!("RF worker {}", g.worker_id());
    let take: usize = std::env::var("RF_TAKE").map_or(0, |t| t.parse().unwrap());
    let mut ids = vec![0u64; take];
    for chunk in ids.chunks_mut(1000) {
        g.next_ids(chunk).unwrap();
    }
    if let Ok(out) = std::env::var("RF_OUT") {
        let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
        std::fs::write(out, bytes).unwrap();
    }
    println!("RF max {}", ids.iter().max().copied().unwrap_or(0));
    if std::env::var("RF_HANG").is_ok() {
        println!("RF ready");
        std::io::stdout().flush().unwrap();
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    println!("RF ready");
}

fn spawn_child(db: &Path, envs: &[(&str, String)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "child_process",
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("RF_CHILD", db)
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.spawn().expect("spawn child")
}

/// Reads the child's report lines until "RF ready"; returns (worker id, max id).
fn read_report(child: &mut Child) -> (u64, u64) {
    let out = child.stdout.take().unwrap();
    let mut lines = BufReader::new(out).lines();
    let (mut worker, mut max) = (None, 0);
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        // The harness may print "test child_process ... " before the first line.
        let field = |tag: &str| {
            line.find(tag)
                .map(|at| line[at + tag.len()..].trim().to_string())
        };
        if let Some(w) = field("RF worker ") {
            worker = Some(w.parse().unwrap());
        } else if let Some(m) = field("RF max ") {
            max = m.parse().unwrap();
        } else if line.contains("RF ready") {
            break;
        }
    }
    // Keep draining so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    let worker = worker.unwrap_or_else(|| panic!("child reported no worker id: {seen:#?}"));
    (worker, max)
}

#[test]
fn eight_processes_get_distinct_ids() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let mut children: Vec<Child> = (0..8).map(|_| spawn_child(&db, &[])).collect();
    let ids: Vec<u64> = children.iter_mut().map(|c| read_report(c).0).collect();
    for c in &mut children {
        assert!(c.wait().unwrap().success());
    }
    let distinct: HashSet<_> = ids.iter().collect();
    assert_eq!(distinct.len(), 8, "ids {ids:?}");
    let rows = DatabaseAssigner::sqlite(&db).unwrap().list().unwrap();
    assert_eq!(rows.len(), 8);
    let mut row_ids: Vec<u64> = rows.iter().map(|r| r.id).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    row_ids.sort();
    assert_eq!(row_ids, sorted);
}

#[test]
fn id_beyond_the_max_leaves_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let layout = Layout::new(40, 3, 20, ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
    // Java's behaviour: never reuse an id.
    let a = DatabaseAssigner::sqlite(&db).unwrap().recycle(false);
    for expected in 1..=7 {
        assert_eq!(a.assign_worker_id(&layout).unwrap(), expected);
    }
    let err = a.assign_worker_id(&layout).unwrap_err();
    assert_eq!(
        err,
        Error::WorkerIdOutOfRange {
            worker_id: 8,
            max: 7
        }
    );
    assert_eq!(err.to_string(), "worker id 8 exceeds the max 7");
    assert_eq!(a.list().unwrap().len(), 7, "the refused boot left no row");
}

#[test]
fn rows_are_java_compatible() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let a = DatabaseAssigner::sqlite(&db).unwrap();
    let id = a.assign_worker_id(&Layout::default()).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    // Java's INSERT (with SQLite's CURRENT_TIMESTAMP for MySQL's NOW()) works unchanged.
    conn.execute(
        "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) \
         VALUES ('10.0.0.9', '1700000000000-4242', 2, '2026-11-23', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)",
        [],
    )
    .unwrap();
    let java_id = conn.last_insert_rowid() as u64;
    assert_eq!(java_id, id + 1);
    // A ringflake row has every column Java reads, all non-null and well-formed.
    let (host, port, ty, launch, modified, created): (String, String, i32, String, String, String) = conn
        .query_row(
            "SELECT HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED FROM WORKER_NODE WHERE ID = ?1",
            [id as i64],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )
        .unwrap();
    assert!(!host.is_empty() && host.len() <= 64);
    assert!(ty == 1 || ty == 2);
    if ty == 2 {
        let (millis, rand) = port.split_once('-').expect("<millis>-<random>");
        assert!(millis.parse::<i64>().unwrap() > 1_700_000_000_000);
        assert!(rand.parse::<u32>().unwrap() < 100_000);
    }
    assert_eq!(launch.len(), 10);
    assert!(modified.len() >= 19 && created.len() >= 19);
    let rows = a.list().unwrap();
    assert_eq!(
        rows.last().unwrap().lease_until,
        0,
        "Java's row gets the default lease"
    );
}

#[test]
fn container_rows_use_jpaas_variables() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let mut child = spawn_child(
        &db,
        &[
            ("JPAAS_HOST", "pod-7.svc".into()),
            ("JPAAS_HOST_PORT_8080", "31080".into()),
        ],
    );
    let (worker, _) = read_report(&mut child);
    assert!(child.wait().unwrap().success());
    let row = DatabaseAssigner::sqlite(&db)
        .unwrap()
        .list()
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(row.id, worker);
    assert_eq!(
        (row.host_name.as_str(), row.port.as_str(), row.node_type),
        ("pod-7.svc", "31080", 1)
    );
}

fn read_ids(path: &Path) -> Vec<u64> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// 3 worker bits (ids 1..=7), 50 boots, up to 3 alive at once, every third killed with SIGKILL:
/// every boot succeeds, no ID repeats, and one worker id's runs never overlap in seconds.
#[test]
fn recycling_fifty_boots_with_kills() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let envs = |i: usize| {
        vec![
            ("RF_LAYOUT", "40,3,20".to_string()),
            ("RF_RECYCLE", "1".to_string()),
            ("RF_WINDOW", "2".to_string()),
            ("RF_TAKE", "20000".to_string()),
            (
                "RF_OUT",
                dir.path().join(format!("ids-{i}")).display().to_string(),
            ),
            ("RF_HANG", "1".to_string()),
        ]
    };
    let layout = Layout::new(40, 3, 20, ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
    let mut alive: Vec<(usize, Child, u64)> = Vec::new();
    let mut per_worker: HashMap<u64, Vec<usize>> = HashMap::new();
    for i in 0..50 {
        if alive.len() == 3 {
            let (j, mut c, _) = alive.remove(0);
            if j % 3 == 0 {
                c.kill().unwrap(); // SIGKILL: no release, the lease must run out
            } else {
                // A clean stop: SIGTERM is not handled by the child, so emulate it by closing.
                c.kill().unwrap();
            }
            c.wait().unwrap();
        }
        let mut c = spawn_child(&db, &envs(i));
        let (worker, _) = read_report(&mut c);
        assert!((1..=7).contains(&worker), "boot {i} got worker {worker}");
        per_worker.entry(worker).or_default().push(i);
        alive.push((i, c, worker));
    }
    for (_, mut c, _) in alive {
        c.kill().unwrap();
        c.wait().unwrap();
    }
    let mut all = Vec::new();
    let mut spans: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
    for i in 0..50 {
        let ids = read_ids(&dir.path().join(format!("ids-{i}")));
        assert_eq!(ids.len(), 20000, "boot {i} took all its IDs");
        let parts: Vec<_> = ids
            .iter()
            .map(|&id| layout.decompose(id).unwrap())
            .collect();
        let w = parts[0].worker_id;
        let lo = parts.iter().map(|p| p.delta_seconds).min().unwrap();
        let hi = parts.iter().map(|p| p.delta_seconds).max().unwrap();
        spans.entry(w).or_default().push((lo, hi));
        all.extend(ids);
    }
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID repeated across boots");
    assert!(
        per_worker.values().any(|b| b.len() > 1),
        "no id was recycled"
    );
    for (w, mut s) in spans {
        s.sort();
        for pair in s.windows(2) {
            assert!(
                pair[0].1 < pair[1].0,
                "worker {w}: runs overlap in seconds {pair:?}"
            );
        }
    }
}

/// A run that borrowed far ahead is killed; the next run on the host starts above all its IDs.
#[test]
fn monotonic_restart_after_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    // 13 sequence bits and a frozen clock: the 3,000,000 IDs are 367 seconds' worth, so the
    // first run ends 366 s ahead of its clock by construction, not because this machine took
    // them faster than 8,192 a second. No lead cap it could reach.
    let layout = Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
    fn envs<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, String)> {
        [
            ("RF_LAYOUT", "30,20,13"),
            ("RF_MAX_LEAD", "3600"),
            ("RF_RECYCLE", "1"),
        ]
        .iter()
        .chain(extra)
        .map(|&(k, v)| (k, v.to_string()))
        .collect()
    }
    let mut first = spawn_child(
        &db,
        &envs(&[
            ("RF_FROZEN_CLOCK", "1"),
            ("RF_TAKE", "3000000"),
            ("RF_HANG", "1"),
        ]),
    );
    let (w1, max1) = read_report(&mut first);
    let parsed = layout.parse(max1).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(
        parsed.unix_seconds > now + 100,
        "the first run borrowed ahead"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    let out = dir.path().join("second").display().to_string();
    let mut second = spawn_child(&db, &envs(&[("RF_TAKE", "10"), ("RF_OUT", &out)]));
    let (w2, _) = read_report(&mut second);
    assert!(second.wait().unwrap().success());
    assert_ne!(w1, w2);
    let ids = read_ids(&dir.path().join("second"));
    assert!(
        ids[0] > max1,
        "restart went below the killed run: {} <= {max1}",
        ids[0]
    );
}

/// Leases are written once per third of their window, not once a second: a 6 s window over 9.5 s
/// of a running generator is extended 3 times (when what it covers falls below 4 s), where the
/// keeper used to write it every second (9 times). Every `UPDATE` of the lease is counted by a
/// trigger in the SQLite file.
#[test]
fn lease_is_written_once_per_third_of_its_window() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(include_str!("../schema/sqlite.sql"))
        .unwrap();
    conn.execute_batch(
        "CREATE TABLE LEASE_WRITES (N INTEGER NOT NULL);
         INSERT INTO LEASE_WRITES VALUES (0);
         CREATE TRIGGER COUNT_LEASE_WRITES AFTER UPDATE OF LEASE_UNTIL ON WORKER_NODE
         BEGIN UPDATE LEASE_WRITES SET N = N + 1; END;",
    )
    .unwrap();
    let writes = || -> i64 {
        conn.query_row("SELECT N FROM LEASE_WRITES", [], |r| r.get(0))
            .unwrap()
    };
    let assigner = DatabaseAssigner::sqlite(&db)
        .unwrap()
        .lease_window(Duration::from_secs(6));
    let g = CachedUidGenerator::builder(Layout::default())
        .worker_id_from(&assigner)
        .build()
        .unwrap();
    let before = writes();
    let start = std::time::Instant::now();
    let mut last = g.next_id().unwrap();
    while start.elapsed() < Duration::from_millis(9_500) {
        let id = g.next_id().unwrap();
        assert!(id > last);
        last = id;
        std::thread::sleep(Duration::from_millis(50));
    }
    let n = writes() - before;
    // SQLite has no clock apart from this node's: nothing read, no bound.
    let stats = g.stats();
    assert_eq!(
        (stats.clock_skew_millis, stats.max_clock_skew_millis),
        (None, None)
    );
    let lease = assigner.list().unwrap()[0].lease_until;
    let now = SystemClock.now_seconds();
    drop(g);
    assert!(
        (2..=4).contains(&n),
        "{n} lease writes in 9.5 s with a 6 s window: expected 3 (one a second would be 9)"
    );
    assert!(
        lease - now >= 2,
        "the lease still covers {} s: at least 2/3 of the window less the keeper's second",
        lease - now
    );
}

/// The unix second of now.
fn unix_now() -> i64 {
    SystemClock.now_seconds()
}

/// A start refused for what needs no worker id takes no row and no lease, with recycling or
/// without: a layout whose time bits ran out (Java's defaults, since 2024-11-20), a state file
/// that is not one, an `above` that no worker id's first ID exceeds within the lead cap. Under
/// `Restart=on-failure` such a start used to take a row every few seconds until the table was
/// full.
#[test]
fn a_start_refused_before_its_claim_takes_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("damaged.state");
    std::fs::write(&damaged, "not a state file\n").unwrap();
    let layout = Layout::default();
    let far_above = layout
        .compose(layout.max_delta() - 1, layout.max_worker_id(), 0)
        .unwrap();
    for recycle in [true, false] {
        let db = dir.path().join(format!("recycle-{recycle}.db"));
        let table = DatabaseAssigner::sqlite(&db).unwrap().recycle(recycle);
        let refusals = [
            CachedUidGenerator::builder(Layout::uid_generator_defaults())
                .worker_id_from(&table)
                .build()
                .map(|_| ()),
            CachedUidGenerator::builder(layout)
                .worker_id_from(&table)
                .state_file(&damaged)
                .build()
                .map(|_| ()),
            CachedUidGenerator::builder(layout)
                .worker_id_from(&table)
                .above(far_above)
                .build()
                .map(|_| ()),
            ringflake::DefaultUidGenerator::builder(Layout::uid_generator_defaults())
                .worker_id_from(&table)
                .build()
                .map(|_| ()),
        ];
        for (i, refused) in refusals.into_iter().enumerate() {
            let err = refused.expect_err("refused");
            assert!(
                table.list().unwrap().is_empty(),
                "recycle {recycle}, refusal {i} ({err}) took a row"
            );
        }
        // The table still hands out its first id.
        let g = CachedUidGenerator::builder(layout)
            .worker_id_from(&table)
            .build()
            .unwrap();
        assert_eq!(g.worker_id(), 1, "recycle {recycle}");
    }
}

/// A start refused after its claim (`above` sorts above the first ID of the worker id it got,
/// though not above every worker id's) gives the claim back: a table without recycling deletes
/// the row, a recycling one releases the lease at the clock, so the id is free at once rather
/// than in 5 minutes.
#[test]
fn a_start_refused_after_its_claim_gives_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::default();
    let now = unix_now();
    let clock = ManualClock::from_seconds(now);
    let now_delta = (now - layout.epoch_seconds()) as u64;
    // Worker id 1's first ID at the clock is below; worker 1,023's 5 s ahead is above.
    let above = layout.compose(now_delta + 5, 0, 0).unwrap();
    for recycle in [false, true] {
        let table = DatabaseAssigner::sqlite(dir.path().join(format!("r{recycle}.db")))
            .unwrap()
            .recycle(recycle);
        let err = CachedUidGenerator::builder(layout)
            .worker_id_from(&table)
            .clock(clock.clone())
            .above(above)
            .build()
            .unwrap_err();
        assert!(matches!(err, Error::NotAbove { .. }), "{err}");
        let rows = table.list().unwrap();
        if recycle {
            assert_eq!(rows.len(), 1, "{rows:?}");
            assert!(
                rows[0].lease_until <= unix_now(),
                "the lease is not released: {rows:?}"
            );
        } else {
            assert!(rows.is_empty(), "the row stays: {rows:?}");
        }
    }
}

/// A generator started beside a live one on the same host and state directory (`gen` while
/// `serve` runs) gets its own row and starts at the clock, not `max_lead` ahead of it: the live
/// one's lease runs minutes ahead of the seconds it uses, and only the state file says how far
/// those go.
#[test]
fn a_boot_beside_a_live_one_starts_at_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let table = DatabaseAssigner::sqlite(dir.path().join("ringflake.db")).unwrap();
    let state = dir.path().join("ringflake.state");
    let build = || {
        CachedUidGenerator::builder(Layout::default())
            .worker_id_from(&table)
            .state_file(&state)
            .build()
            .unwrap()
    };
    let live = build();
    live.next_id().unwrap();
    let beside = build();
    assert_eq!((live.worker_id(), beside.worker_id()), (1, 2));
    let id = beside.next_id().unwrap();
    let ahead = Layout::default().parse(id).unwrap().unix_seconds - unix_now();
    // The live one writes the next second within a round of its start, and the state file
    // records how far that went: at most a second ahead, plus one if a second turned between
    // the live one's write and this read of the clock (seen under load). Without the rule: 10.
    assert!(ahead <= 2, "the ID is {ahead} s ahead of the clock");
}

/// A run killed at full lead (its IDs 10 s ahead of the clock), restarted in the same state
/// directory with a new row: the restart starts above every ID of the killed run.
#[test]
fn a_restart_after_a_kill_at_full_lead_starts_above_it() {
    let dir = tempfile::tempdir().unwrap();
    let table = DatabaseAssigner::sqlite(dir.path().join("ringflake.db")).unwrap();
    let state = dir.path().join("ringflake.state");
    // 13 sequence bits and a clock that stands still: 11 seconds' IDs reach the cap.
    let layout = Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
    let clock = ManualClock::from_seconds(unix_now());
    let build = || {
        CachedUidGenerator::builder(layout)
            .worker_id_from(&table)
            .clock(clock.clone())
            .state_file(&state)
            .max_lead(Duration::from_secs(10), LeadPolicy::Fail)
            .background_filler(false)
            .build()
            .unwrap()
    };
    let killed = build();
    let mut last = 0;
    loop {
        match killed.next_id() {
            Ok(id) => last = id,
            Err(Error::LeadLimitReached { .. }) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(layout.parse(last).unwrap().unix_seconds >= clock.now_seconds() + 10);
    std::mem::forget(killed); // as if killed: its lease and its state directory's lock stay
    let restart = build();
    assert_eq!(restart.worker_id(), 2);
    let first = restart.next_id().unwrap();
    assert!(first > last, "{first} <= {last}");
}
