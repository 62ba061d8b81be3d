//! Boots waiting on a full worker table (every id leased) through [`DatabaseAssigner`] on a real
//! SQLite table: they back off instead of all waking when a lease runs out and racing for the
//! one row, and still take every row that runs out.

use super::node::NodeInfo;
use super::table::DatabaseAssigner;
use super::test_table::TestTable;
use crate::Layout;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn node(i: usize) -> NodeInfo {
    NodeInfo {
        host_name: format!("10.1.0.{i}"),
        port: format!("1763900000000-{i}"),
        node_type: 2,
        launch_date: "2026-11-25".into(),
    }
}

/// Seven worker ids (3 worker bits), held by leases nobody extends, running out over four
/// seconds; 24 boots wait for them for 8 s, each winner's 2 s lease running out in turn. Each
/// row is taken again after its lease, never while it runs, and the waiting boots run well under
/// one statement a second each (0.66-0.72 here; 1.63-1.66 before the back-off, when each woke
/// whenever a lease ran out and raced for it, looking with two statements).
const WAITERS: usize = 24;

#[test]
fn boots_waiting_on_a_full_table_back_off() {
    let dir = tempfile::tempdir().unwrap();
    let real = DatabaseAssigner::sqlite(dir.path().join("w.db")).unwrap();
    let table = Arc::new(TestTable::over(&real));
    let layout = Layout::new(40, 3, 20, 1_700_000_000).unwrap();
    assert_eq!(layout.max_worker_id(), 7);
    for i in 0..7 {
        // Leases running out over four seconds, as in a fleet whose nodes came and went.
        let holder = DatabaseAssigner::with_table(table.clone())
            .recycle(true)
            .lease_window(Duration::from_secs(1 + i as u64 % 4));
        let a = holder.assign_with(&layout, &node(100 + i)).unwrap();
        assert_eq!(a.worker_id, i as u64 + 1);
    }
    table.calls.store(0, Ordering::Relaxed);
    let started = Instant::now();
    let wins: Vec<(u64, i64, i64)> = std::thread::scope(|s| {
        let waiters: Vec<_> = (0..WAITERS)
            .map(|i| {
                let table = table.clone();
                let layout = &layout;
                s.spawn(move || {
                    let assigner = DatabaseAssigner::with_table(table)
                        .recycle(true)
                        .lease_window(Duration::from_secs(2))
                        .retry_for(Duration::from_secs(8));
                    match assigner.assign_with(layout, &node(i)) {
                        Ok(a) => {
                            let lease = a.lease.expect("a lease");
                            let from = a.not_before.expect("a recycled row");
                            Some((a.worker_id, from, lease.until()))
                        }
                        Err(e) => {
                            assert!(e.to_string().contains("expired lease"), "{e}");
                            None
                        }
                    }
                })
            })
            .collect();
        waiters
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect()
    });
    let waited = started.elapsed().as_secs_f64();
    let calls = table.calls.load(Ordering::Relaxed);
    // Rows run out at about 2 s, 5 s and 8 s: at least the first two rounds are taken.
    assert!(
        wins.len() >= 5,
        "{} wins in {waited:.1} s: {wins:?}",
        wins.len()
    );
    for id in 1..=7 {
        let mut leases: Vec<_> = wins.iter().filter(|w| w.0 == id).collect();
        leases.sort_by_key(|w| w.2);
        for pair in leases.windows(2) {
            assert!(
                pair[1].1 >= pair[0].2,
                "worker id {id} taken while leased: {pair:?}"
            );
        }
    }
    let per_boot_second = calls as f64 / (WAITERS as f64 * waited);
    eprintln!(
        "{} wins, {calls} statements in {waited:.1} s: {per_boot_second:.2} a second per boot",
        wins.len()
    );
    assert!(
        per_boot_second < 1.0,
        "{calls} statements from 16 waiting boots in {waited:.1} s: {per_boot_second:.2} a second each"
    );
}
