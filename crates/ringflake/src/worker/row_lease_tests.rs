//! Tests of [`RowLease`](super::row_lease::RowLease) on a real SQLite table through
//! [`DatabaseAssigner`](super::table::DatabaseAssigner) (kept apart from `row_lease`, which `table` uses: a test module there
//! that used `table` back would make the two files import each other).

use super::lease::Lease;
use super::node::NodeInfo;
use super::rows::WorkerTable;
use super::table::DatabaseAssigner;
use super::test_table::TestTable;
use crate::Error;
use crate::Layout;
use std::sync::Arc;
use std::sync::atomic::Ordering;

fn node(node_type: i32, port: &str) -> NodeInfo {
    NodeInfo {
        host_name: "10.1.2.3".into(),
        port: port.into(),
        node_type,
        launch_date: "2026-11-23".into(),
    }
}

/// A leased row on a real SQLite file behind [`TestTable`]: (file, table, lease).
fn leased(node: &NodeInfo) -> (tempfile::TempDir, Arc<TestTable>, Box<dyn Lease>) {
    let dir = tempfile::tempdir().unwrap();
    let real = DatabaseAssigner::sqlite(dir.path().join("w.db")).unwrap();
    let table = Arc::new(TestTable::over(&real));
    let assigner = DatabaseAssigner::with_table(table.clone()).recycle(true);
    let lease = assigner
        .assign_with(&Layout::default(), node)
        .unwrap()
        .lease
        .expect("a lease with recycling on");
    (dir, table, lease)
}

fn row_lease(table: &TestTable) -> (i64, String) {
    let rows = table.list().unwrap();
    assert_eq!(rows.len(), 1);
    (rows[0].lease_until, rows[0].port.clone())
}

#[test]
fn an_extension_whose_reply_was_lost_is_recovered() {
    let (_dir, table, lease) = leased(&node(2, "1763900000000-4711"));
    let u0 = lease.until();
    table.lose.store(true, Ordering::SeqCst);
    assert!(matches!(
        lease.extend(u0 + 100),
        Err(Error::Database {
            transient: true,
            ..
        })
    ));
    table.lose.store(false, Ordering::SeqCst);
    // The update landed; the node does not know it yet.
    assert_eq!(row_lease(&table).0, u0 + 100);
    assert_eq!(lease.until(), u0);
    // The next extension finds its own earlier write and continues from it.
    lease.extend(u0 + 200).unwrap();
    assert_eq!(lease.until(), u0 + 200);
    assert_eq!(row_lease(&table).0, u0 + 200);
    // The same after a lost reply, then a release.
    table.lose.store(true, Ordering::SeqCst);
    assert!(lease.extend(u0 + 300).is_err());
    table.lose.store(false, Ordering::SeqCst);
    lease.release(u0 + 7).unwrap();
    assert_eq!(row_lease(&table).0, u0 + 7);
}

#[test]
fn a_row_taken_over_is_never_adopted() {
    let ours = node(2, "1763900000000-4711");
    let (_dir, table, lease) = leased(&ours);
    let u0 = lease.until();
    table.lose.store(true, Ordering::SeqCst);
    assert!(lease.extend(u0 + 100).is_err());
    table.lose.store(false, Ordering::SeqCst);
    // A recycler takes the row over and, as bad luck has it, writes the very lease value
    // this node's lost update wrote.
    let id = table.list().unwrap()[0].id;
    let theirs = node(2, "1763900099999-1");
    assert!(table.claim(id, u0 + 100, &theirs, u0 + 100).unwrap());
    let err = lease.extend(u0 + 200).unwrap_err();
    assert!(matches!(err, Error::LeaseExpired { .. }), "{err}");
    // No recycler that saw this node's lease writes that value: named a lost write.
    assert!(err.to_string().contains("lost write"), "{err}");
    assert_eq!(row_lease(&table), (u0 + 100, theirs.port.clone()));
    assert_eq!(lease.until(), u0);
    // Nor released: the row is theirs, and the release says so instead of succeeding.
    let err = lease.release(u0 - 5).unwrap_err();
    assert!(err.to_string().contains("taken over"), "{err}");
    assert_eq!(row_lease(&table), (u0 + 100, theirs.port));
}

#[test]
fn a_container_row_names_no_boot_and_is_not_adopted() {
    // JPAAS host and port repeat across boots of a container: a lost reply there still
    // ends in a lost lease (the generator stops at its horizon), never in an adoption.
    let (_dir, table, lease) = leased(&node(1, "8080"));
    let u0 = lease.until();
    table.lose.store(true, Ordering::SeqCst);
    assert!(lease.extend(u0 + 100).is_err());
    table.lose.store(false, Ordering::SeqCst);
    assert!(matches!(
        lease.extend(u0 + 200),
        Err(Error::LeaseExpired { .. })
    ));
    assert_eq!(row_lease(&table).0, u0 + 100);
}

/// What a failover to a standby that lacked this node's writes leaves, each a lost write (not a
/// takeover): the row gone; the row holding an older lease than this node wrote; the row claimed
/// by another node with a lease no recycler that saw this node's would write (a new row on the
/// promoted standby). A recycler that saw this node's lease writes past it by a window: a
/// takeover.
#[test]
fn a_row_the_database_forgot_is_a_lost_write_not_a_takeover() {
    let ours = node(2, "1763900000000-4711");
    let lost = |err: Error| {
        let text = err.to_string();
        assert!(matches!(err, Error::LeaseExpired { .. }), "{text}");
        assert!(text.contains("lost write:"), "{text}");
        text
    };
    // Gone.
    let (_dir, table, lease) = leased(&ours);
    let u0 = lease.until();
    let id = table.list().unwrap()[0].id;
    table.delete(id).unwrap();
    let text = lost(lease.extend(u0 + 10).unwrap_err());
    assert!(text.contains("its row is gone"), "{text}");
    // Older than written: the extension to u0 + 10 landed, the database went back to u0.
    let (_dir, table, lease) = leased(&ours);
    let u0 = lease.until();
    lease.extend(u0 + 10).unwrap();
    let id = table.list().unwrap()[0].id;
    assert!(table.set_lease(id, u0 + 10, u0).unwrap());
    let text = lost(lease.extend(u0 + 20).unwrap_err());
    assert!(text.contains("older than"), "{text}");
    // Another node's, with the lease of a new row (the clock plus its window).
    let (_dir, table, lease) = leased(&ours);
    let u0 = lease.until();
    let id = table.list().unwrap()[0].id;
    let theirs = node(2, "1763900099999-1");
    assert!(table.claim(id, u0, &theirs, u0 + 1).unwrap());
    let text = lost(lease.extend(u0 + 10).unwrap_err());
    assert!(text.contains("names another node"), "{text}");
    // A recycler that saw this node's lease (u0) writes at least u0 + 1 + window: a takeover.
    let (_dir, table, lease) = leased(&ours);
    let u0 = lease.until();
    let id = table.list().unwrap()[0].id;
    assert!(
        table
            .claim(id, u0, &theirs, u0 + 1 + lease.window())
            .unwrap()
    );
    let err = lease.extend(u0 + 10).unwrap_err();
    assert!(err.to_string().contains("taken over"), "{err}");
    assert!(!err.to_string().contains("lost write"), "{err}");
}

/// With no extension due, a check looks at the row only after the connection broke (a
/// failover may have led to a server that lacks it), and finds a lost write there at once.
#[test]
fn a_check_after_a_broken_connection_finds_a_lost_write() {
    let (_dir, table, lease) = leased(&node(2, "1763900000000-4711"));
    let id = table.list().unwrap()[0].id;
    lease.check().unwrap();
    table.delete(id).unwrap();
    // The connection did not break: nothing is read, nothing found.
    lease.check().unwrap();
    table.broke.store(true, Ordering::SeqCst);
    let err = lease.check().unwrap_err();
    assert!(err.to_string().contains("lost write:"), "{err}");
    assert!(err.to_string().contains("its row is gone"), "{err}");
    // A row still this node's is left as it is.
    let (_dir, table, lease) = leased(&node(2, "1763900000000-4711"));
    let before = row_lease(&table);
    table.broke.store(true, Ordering::SeqCst);
    lease.check().unwrap();
    assert_eq!(row_lease(&table), before);
    assert_eq!(lease.until(), before.0);
}
