//! The segment generator (Leaf's segment mode) on SQLite: takes, ranges and prefetch, threads,
//! restarts that resume what was held, tags added and removed, bad rows, and Leaf nodes sharing
//! the table. The MariaDB and PostgreSQL runs are in tests/segment_servers.rs.

use ringflake::{Error, ManualClock, SegmentError, SegmentGenerator, SegmentTable};
use rusqlite::Connection;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

fn table(dir: &Path) -> SegmentTable {
    SegmentTable::sqlite(dir.join("ids.db")).unwrap()
}

/// Leaf's own claim, statement for statement (`IDAllocMapper.updateMaxId` then
/// `getLeafAlloc`, in one transaction): the range `[max_id - step, max_id)`.
fn leaf_claim(conn: &mut Connection, tag: &str) -> (i64, i64) {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    tx.execute(
        "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?1",
        [tag],
    )
    .unwrap();
    let (max_id, step): (i64, i64) = tx
        .query_row(
            "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?1",
            [tag],
            |r| Ok((r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    tx.commit().unwrap();
    (max_id - step, max_id)
}

#[test]
fn numbers_are_leafs_ranges_in_order_with_the_dynamic_step() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    t.add("orders", 1, 100, "").unwrap();
    let g = SegmentGenerator::builder(t.clone())
        .state_dir(dir.path().join("seg"))
        .build()
        .unwrap();
    let orders = g.tag("orders").unwrap();
    let numbers: Vec<i64> = (0..1500).map(|_| orders.next_id().unwrap()).collect();
    assert_eq!(numbers, (1..=1500).collect::<Vec<_>>());
    let s = orders.stats();
    // Leaf: the first two claims take the table's step, then each range that lasted under 15
    // minutes doubles it: 100, 100, 200, 400, 800.
    assert_eq!(s.table_step, 100);
    assert!(s.step >= 800 && s.claims >= 5, "{s:?}");
    let max_id = t.rows().unwrap()[0].max_id;
    assert!(max_id > 1500, "{max_id}");
}

#[test]
fn the_dynamic_step_halves_after_slow_ranges_never_below_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    t.add("slow", 1, 10, "").unwrap();
    let clock = ManualClock::new(1_800_000_000_000);
    let g = SegmentGenerator::builder(t.clone())
        .clock(clock.clone())
        .build()
        .unwrap();
    let slow = g.tag("slow").unwrap();
    let mut steps = Vec::new();
    let mut last_claims = 0;
    for _ in 0..400 {
        slow.next_id().unwrap();
        let s = slow.stats();
        if s.claims != last_claims {
            last_claims = s.claims;
            steps.push(s.step);
            // Every range lasts an hour from here on.
            if s.claims >= 4 {
                clock.advance_seconds(3600);
            }
        }
    }
    // 10, 10, then under 15 minutes twice (20, 40), then an hour each: 20, 10, 10...
    assert_eq!(&steps[..7], &[10, 10, 20, 40, 20, 10, 10], "{steps:?}");
}

#[test]
fn threads_takers_batches_and_async_never_share_a_number() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    // A small step: many switches under the threads.
    t.add("orders", 1, 50, "").unwrap();
    let g = SegmentGenerator::builder(t)
        .state_dir(dir.path().join("seg"))
        .build()
        .unwrap();
    let orders = g.tag("orders").unwrap();
    let n = if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    let all: Vec<Vec<i64>> = std::thread::scope(|s| {
        let one = s.spawn(|| {
            (0..n)
                .map(|_| orders.next_id().unwrap())
                .collect::<Vec<_>>()
        });
        let local = s.spawn(|| {
            let mut taker = orders.local();
            (0..n).map(|_| taker.next_id().unwrap()).collect::<Vec<_>>()
        });
        let batches = s.spawn(|| {
            let mut out = Vec::new();
            let mut batch = vec![0i64; 333];
            while out.len() < n {
                orders.next_ids(&mut batch).unwrap();
                assert!(batch.windows(2).all(|w| w[0] < w[1]));
                out.extend_from_slice(&batch);
            }
            out
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let asynchronous = rt.block_on(async {
            let mut out = Vec::new();
            for _ in 0..n / 10 {
                out.push(orders.next_id_async().await.unwrap());
            }
            out
        });
        vec![
            one.join().unwrap(),
            local.join().unwrap(),
            batches.join().unwrap(),
            asynchronous,
        ]
    });
    let mut seen = HashSet::new();
    for (who, numbers) in all.iter().enumerate() {
        assert!(
            numbers.windows(2).all(|w| w[0] < w[1]),
            "taker {who}: not increasing"
        );
        for &x in numbers {
            assert!(seen.insert(x), "{x} handed out twice");
        }
    }
}

/// A crash is the state directory as it was at the last take: a snapshot of it, taken with
/// nothing taking, put back after the generator is gone.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("tag-"))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

#[test]
fn restarts_resume_the_ranges_held_and_crashes_lose_at_most_a_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    t.add("orders", 1, 10_000, "").unwrap();
    let state = dir.path().join("seg");
    let mut seen = HashSet::new();
    let mut taken = 0i64;
    let mut lost_per_crash = Vec::new();
    let mut risked = 0;
    for round in 0..6 {
        let g = SegmentGenerator::builder(t.clone())
            .state_dir(&state)
            .build()
            .unwrap();
        let orders = g.tag("orders").unwrap();
        let first = orders.next_id().unwrap();
        if round > 0 {
            lost_per_crash.push((first - taken - 1, risked));
        }
        assert!(seen.insert(first));
        for _ in 0..(3_000 + round * 500) {
            let x = orders.next_id().unwrap();
            assert!(seen.insert(x), "{x} handed out twice (round {round})");
            taken = x;
        }
        // Let the keeper catch up (marks and the prefetch), as a running service would.
        std::thread::sleep(Duration::from_millis(300));
        let crash = round % 2 == 1;
        let at_risk = orders.stats().at_risk;
        let files = snapshot(&state);
        drop(g);
        risked = 0;
        if crash {
            risked = at_risk;
            for (path, bytes) in files {
                std::fs::write(path, bytes).unwrap();
            }
        }
    }
    // A clean stop records the exact point (rounds 1, 3, 5 start after one: nothing lost); a
    // crash (rounds 2, 4) loses what lay between the last take and the mark, at most a chunk.
    for &(lost, at_risk) in &lost_per_crash {
        assert_eq!(lost as u64, at_risk, "{lost_per_crash:?}");
    }
    assert_eq!(lost_per_crash[0], (0, 0));
    assert!(lost_per_crash[1].0 > 0, "{lost_per_crash:?}");
    // No range was thrown away: the numbers are dense but for what the crashes lost.
    let lost: i64 = lost_per_crash.iter().map(|&(lost, _)| lost).sum();
    assert_eq!(taken, seen.len() as i64 + lost, "{lost_per_crash:?}");
}

#[test]
fn a_copied_state_directory_resumes_on_one_node_only() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    t.add("orders", 1, 10_000, "").unwrap();
    let a = dir.path().join("a");
    let g = SegmentGenerator::builder(t.clone())
        .state_dir(&a)
        .build()
        .unwrap();
    let before: Vec<i64> = (0..100).map(|_| g.next_id("orders").unwrap()).collect();
    drop(g);
    // A cloned VM: the same files in another directory, on another node.
    let b = dir.path().join("b");
    std::fs::create_dir(&b).unwrap();
    for (path, bytes) in snapshot(&a) {
        std::fs::write(b.join(path.file_name().unwrap()), bytes).unwrap();
    }
    let ga = SegmentGenerator::builder(t.clone())
        .state_dir(&a)
        .build()
        .unwrap();
    let from_a: Vec<i64> = (0..100).map(|_| ga.next_id("orders").unwrap()).collect();
    let gb = SegmentGenerator::builder(t.clone())
        .state_dir(&b)
        .build()
        .unwrap();
    let from_b: Vec<i64> = (0..100).map(|_| gb.next_id("orders").unwrap()).collect();
    assert_eq!(from_a[0], 101, "the first resumes");
    assert!(
        from_b[0] > 10_000,
        "the copy claims a new range: {}",
        from_b[0]
    );
    let all: HashSet<i64> = before
        .iter()
        .chain(&from_a)
        .chain(&from_b)
        .copied()
        .collect();
    assert_eq!(all.len(), 300);
}

#[test]
fn leaf_nodes_and_ringflake_nodes_share_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    t.add("orders", 1, 37, "").unwrap();
    let g = SegmentGenerator::builder(t.clone())
        .state_dir(dir.path().join("seg"))
        .build()
        .unwrap();
    let path = dir.path().join("ids.db");
    let mut seen = HashSet::new();
    std::thread::scope(|s| {
        let leaf = s.spawn(|| {
            let mut conn = Connection::open(&path).unwrap();
            conn.busy_timeout(Duration::from_secs(10)).unwrap();
            let mut numbers = Vec::new();
            for _ in 0..200 {
                let (start, end) = leaf_claim(&mut conn, "orders");
                numbers.extend(start..end);
            }
            numbers
        });
        let ours: Vec<i64> = (0..20_000)
            .map(|_| g.next_id("orders").unwrap_or_else(|e| panic!("{e}")))
            .collect();
        for x in ours.into_iter().chain(leaf.join().unwrap()) {
            assert!(seen.insert(x), "{x} handed out twice");
        }
    });
}

#[test]
fn tags_come_and_go_while_serving() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    t.add("a", 1, 10, "").unwrap();
    let g = SegmentGenerator::builder(t.clone())
        .state_dir(dir.path().join("seg"))
        .refresh_interval(Duration::from_millis(100))
        .build()
        .unwrap();
    assert_eq!(g.next_id("a").unwrap(), 1);
    let e = g.next_id("b").unwrap_err();
    assert!(
        matches!(e, Error::Segment(SegmentError::UnknownTag { .. })),
        "{e}"
    );
    t.add("b", 500, 10, "").unwrap();
    let waited = std::time::Instant::now();
    let b = loop {
        match g.next_id("b") {
            Ok(b) => break b,
            Err(_) if waited.elapsed() < Duration::from_secs(5) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => panic!("b not served after 5 s: {e}"),
        }
    };
    assert_eq!(b, 500);
    let a = g.tag("a").unwrap();
    Connection::open(dir.path().join("ids.db"))
        .unwrap()
        .execute("DELETE FROM leaf_alloc WHERE biz_tag = 'a'", [])
        .unwrap();
    let waited = std::time::Instant::now();
    loop {
        match a.next_id() {
            Err(Error::Segment(SegmentError::Removed { tag })) => {
                assert_eq!(tag, "a");
                break;
            }
            Ok(_) if waited.elapsed() < Duration::from_secs(5) => {
                std::thread::sleep(Duration::from_millis(5))
            }
            other => panic!("a still served after 5 s: {other:?}"),
        }
    }
    let waited = std::time::Instant::now();
    while g.tags() != ["b"] {
        assert!(waited.elapsed() < Duration::from_secs(5), "{:?}", g.tags());
        std::thread::sleep(Duration::from_millis(20));
    }
    // The removed tag's state file goes with its last handle, which the keeper drops after it
    // stops serving the tag: bounded wait, as for the tags.
    let waited = std::time::Instant::now();
    while dir.path().join("seg/tag-a").exists() {
        assert!(
            waited.elapsed() < Duration::from_secs(5),
            "seg/tag-a still there"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn bad_rows_fail_at_once_naming_the_value_and_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    t.rows().unwrap();
    Connection::open(dir.path().join("ids.db"))
        .unwrap()
        .execute_batch(
            "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('zero', 1, 0), \
             ('top', 9223372036854775000, 1000)",
        )
        .unwrap();
    let g = SegmentGenerator::builder(t)
        .max_wait(Duration::from_secs(30))
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let e = g.next_id("zero").unwrap_err().to_string();
    assert!(e.contains("step 0 refused: allowed 1 to 2147483647"), "{e}");
    let e = g.next_id("top").unwrap_err().to_string();
    assert!(
        e.contains(
            "max_id 9223372036854775000 + step 1000 passes the largest number, 9223372036854775807"
        ),
        "{e}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "no wait for a row at fault"
    );
    let e = g
        .next_ids("zero", &mut vec![0; 100_001])
        .unwrap_err()
        .to_string();
    assert_eq!(e, "count 100001 out of range: expected 1 to 100000");
}

#[test]
fn a_database_that_fails_makes_takes_wait_then_fail_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path()).timeout(Duration::from_millis(100));
    t.add("orders", 1, 5, "").unwrap();
    let g = SegmentGenerator::builder(t)
        .max_wait(Duration::from_millis(500))
        .build()
        .unwrap();
    let orders = g.tag("orders").unwrap();
    assert_eq!(orders.next_id().unwrap(), 1);
    // Another connection holds the write lock: claims time out.
    let mut blocker = Connection::open(dir.path().join("ids.db")).unwrap();
    let tx = blocker
        .transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)
        .unwrap();
    let mut got = Vec::new();
    let e = loop {
        match orders.next_id() {
            Ok(x) => got.push(x),
            Err(e) => break e,
        }
    };
    assert!(got.len() <= 10, "{got:?}");
    let text = e.to_string();
    assert!(text.contains("no number within 0.5 s"), "{text}");
    assert!(text.contains("database is locked"), "{text}");
    assert_eq!(orders.stats().not_ready, 1);
    drop(tx);
    let later = orders.next_id().unwrap();
    assert!(later > *got.last().unwrap_or(&1));
}
