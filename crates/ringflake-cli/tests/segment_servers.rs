//! The segment generator on real MariaDB and PostgreSQL servers (features `segment`, `mysql`,
//! `postgres`): Leaf's transaction and ringflake's share one `leaf_alloc` table, bad rows and a
//! table that is not Leaf's are refused by name, and ringflake nodes (`ringflake serve`
//! processes) share the table with a client running exactly Leaf's allocation transaction while
//! the nodes are killed with SIGKILL and restarted: every number is collected, none twice.
//!
//! The servers come from `RINGFLAKE_MYSQL_URL` and `RINGFLAKE_POSTGRES_URL`, as for
//! tests/server_workers.rs (`.ci/run` starts throw-away ones). These tests DROP and recreate
//! `leaf_alloc`, `ringflake_segment_hold` and `WORKER_NODE` there: point them at a throw-away
//! database only. They are `#[ignore]`d (run with `-- --include-ignored`) and fail, naming the
//! variable, when it is unset.

mod common;

use common::{postgres_client, server_url, split_params};
use ringflake::{SegmentGenerator, SegmentTable};
use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard};

/// Leaf's allocation transaction for a tag: the range it claimed.
type LeafClaim = Box<dyn FnMut(&str) -> (i64, i64) + Send>;

/// One kind of server: its URL, its own client, Leaf's transaction in its SQL.
trait Db {
    const VAR: &'static str;
    fn lock() -> MutexGuard<'static, ()>;
    fn table(url: &str) -> SegmentTable;
    /// Runs statements with the server's own client.
    fn exec(url: &str, sql: &str);
    /// A client that runs Leaf's allocation transaction.
    fn leaf(url: &str) -> LeafClaim;
    /// Drops the tables and makes `leaf_alloc` with Leaf's DDL.
    fn reset(url: &str) {
        Self::exec(url, "DROP TABLE IF EXISTS leaf_alloc");
        Self::exec(url, "DROP TABLE IF EXISTS ringflake_segment_hold");
        Self::exec(url, "DROP TABLE IF EXISTS WORKER_NODE");
    }
}

static MYSQL_LOCK: Mutex<()> = Mutex::new(());
static POSTGRES_LOCK: Mutex<()> = Mutex::new(());

fn mysql_conn(url: &str) -> mysql::Conn {
    let (rest, tls) = split_params(url, &["ssl-mode", "ssl-ca"]);
    let mut opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&rest).unwrap());
    if let Some(ca) = tls.get("ssl-ca") {
        opts = opts.ssl_opts(
            mysql::SslOpts::default().with_root_cert_path(Some(std::path::PathBuf::from(ca))),
        );
    }
    mysql::Conn::new(opts).unwrap()
}

struct Maria;

impl Db for Maria {
    const VAR: &'static str = "RINGFLAKE_MYSQL_URL";

    fn lock() -> MutexGuard<'static, ()> {
        MYSQL_LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn table(url: &str) -> SegmentTable {
        SegmentTable::mysql(url).unwrap()
    }

    fn exec(url: &str, sql: &str) {
        use mysql::prelude::Queryable;
        mysql_conn(url)
            .query_drop(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Leaf's `IDAllocMapper`: `updateMaxId` then `getLeafAlloc`, in one transaction (Leaf's
    /// `SqlSession` with autocommit off), on the MySQL table Leaf's README creates.
    fn leaf(url: &str) -> LeafClaim {
        use mysql::prelude::Queryable;
        let mut conn = mysql_conn(url);
        Box::new(move |tag| {
            let mut tx = conn.start_transaction(mysql::TxOpts::default()).unwrap();
            tx.exec_drop(
                "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?",
                (tag,),
            )
            .unwrap();
            let (max_id, step): (i64, i64) = tx
                .exec_first(
                    "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?",
                    (tag,),
                )
                .unwrap()
                .map(|(_, m, s): (String, i64, i64)| (m, s))
                .unwrap();
            tx.commit().unwrap();
            (max_id - step, max_id)
        })
    }

    fn reset(url: &str) {
        Self::exec(url, "DROP TABLE IF EXISTS leaf_alloc");
        Self::exec(url, "DROP TABLE IF EXISTS ringflake_segment_hold");
        Self::exec(url, "DROP TABLE IF EXISTS WORKER_NODE");
        // Leaf's README, verbatim.
        Self::exec(
            url,
            "CREATE TABLE `leaf_alloc` (
  `biz_tag` varchar(128)  NOT NULL DEFAULT '',
  `max_id` bigint(20) NOT NULL DEFAULT '1',
  `step` int(11) NOT NULL,
  `description` varchar(256)  DEFAULT NULL,
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB",
        );
    }
}

struct Postgres;

impl Db for Postgres {
    const VAR: &'static str = "RINGFLAKE_POSTGRES_URL";

    fn lock() -> MutexGuard<'static, ()> {
        POSTGRES_LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn table(url: &str) -> SegmentTable {
        SegmentTable::postgres(url).unwrap()
    }

    fn exec(url: &str, sql: &str) {
        postgres_client(url)
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }

    /// Leaf's transaction in PostgreSQL.
    fn leaf(url: &str) -> LeafClaim {
        let mut client = postgres_client(url);
        Box::new(move |tag| {
            let mut tx = client.transaction().unwrap();
            tx.execute(
                "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = $1",
                &[&tag],
            )
            .unwrap();
            let row = tx
                .query_one(
                    "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = $1",
                    &[&tag],
                )
                .unwrap();
            let (max_id, step): (i64, i32) = (row.get(1), row.get(2));
            tx.commit().unwrap();
            (max_id - i64::from(step), max_id)
        })
    }
}

/// Leaf's transaction and ringflake's generators on one table, several generators at once:
/// disjoint numbers; then a row with a step of 0, one at the end of BIGINT, and a table whose
/// columns are not Leaf's, each refused by name.
fn shared_table<D: Db>() {
    let url = server_url(D::VAR, "leaf_alloc");
    let _lock = D::lock();
    D::reset(&url);
    let table = D::table(&url);
    assert!(table.add("orders", 1, 50, "shared with Leaf").unwrap());
    let dir = tempfile::tempdir().unwrap();
    let mut seen = HashSet::new();
    std::thread::scope(|s| {
        let leaf = s.spawn(|| {
            let mut claim = D::leaf(&url);
            (0..100)
                .flat_map(|_| {
                    let (a, b) = claim("orders");
                    a..b
                })
                .collect::<Vec<_>>()
        });
        let nodes: Vec<_> = (0..2)
            .map(|i| {
                let table = table.clone();
                let state = dir.path().join(format!("n{i}"));
                s.spawn(move || {
                    let g = SegmentGenerator::builder(table)
                        .state_dir(state)
                        .build()
                        .unwrap();
                    let orders = g.tag("orders").unwrap();
                    (0..5_000)
                        .map(|_| orders.next_id().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for x in nodes
            .into_iter()
            .flat_map(|n| n.join().unwrap())
            .chain(leaf.join().unwrap())
        {
            assert!(seen.insert(x), "{x} handed out twice");
        }
    });
    assert_eq!(seen.len(), 2 * 5_000 + 100 * 50);
    // Tags added and deleted while a generator serves.
    let g = SegmentGenerator::builder(table.clone())
        .refresh_interval(std::time::Duration::from_millis(200))
        .build()
        .unwrap();
    assert!(table.add("added", 500, 10, "").unwrap());
    let waited = std::time::Instant::now();
    while g.next_id("added").is_err() {
        assert!(waited.elapsed().as_secs() < 10, "added not served");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let added = g.tag("added").unwrap();
    D::exec(&url, "DELETE FROM leaf_alloc WHERE biz_tag = 'added'");
    let waited = std::time::Instant::now();
    loop {
        match added.next_id() {
            Err(ringflake::Error::Segment(ringflake::SegmentError::Removed { .. })) => break,
            _ => {
                assert!(waited.elapsed().as_secs() < 10, "added still served");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
    drop(g);
    // Bad rows.
    D::exec(
        &url,
        "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('zero', 1, 0), \
         ('top', 9223372036854775000, 1000)",
    );
    let g = SegmentGenerator::builder(table.clone()).build().unwrap();
    let e = g.next_id("zero").unwrap_err().to_string();
    assert!(e.contains("step 0 refused: allowed 1 to 2147483647"), "{e}");
    let e = g.next_id("top").unwrap_err().to_string();
    assert!(e.contains("passes the largest number"), "{e}");
    drop(g);
    // A table that is not Leaf's.
    D::exec(&url, "DROP TABLE leaf_alloc");
    D::exec(
        &url,
        "CREATE TABLE leaf_alloc (biz_tag VARCHAR(128) PRIMARY KEY, max_id BIGINT)",
    );
    let e = D::table(&url).rows().unwrap_err().to_string();
    assert!(e.contains("leaf_alloc is not Leaf's"), "{e}");
    assert!(e.contains("step"), "{e}");
}

#[test]
#[ignore = "needs RINGFLAKE_MYSQL_URL (a MariaDB/MySQL server; .ci/run starts one)"]
fn mariadb_shares_leaf_alloc_with_leaf() {
    shared_table::<Maria>();
}

#[test]
#[ignore = "needs RINGFLAKE_POSTGRES_URL (a PostgreSQL server; .ci/run starts one)"]
fn postgres_shares_leaf_alloc_with_leaf() {
    shared_table::<Postgres>();
}

/// One `ringflake serve` node of the churn, restarted in its own directory (state file and
/// segment state directory), and the numbers its clients collected.
struct Node {
    dir: tempfile::TempDir,
    serve: Option<common::Serve>,
    addr: std::sync::Arc<Mutex<Option<std::net::SocketAddr>>>,
}

impl Node {
    fn start(&mut self, flag: &str, url: &str) {
        let serve = common::Serve::start(
            self.dir.path(),
            &[flag, url, "--create-table", "--db-retry", "30"],
        );
        *self.addr.lock().unwrap() = Some(serve.addr());
        self.serve = Some(serve);
    }
}

/// ringflake nodes and Leaf's transaction on one table, the nodes killed (SIGKILL) and
/// stopped (SIGTERM) at random moments and restarted: every number collected, none twice.
fn churn<D: Db>(flag: &str) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    let url = server_url(D::VAR, "leaf_alloc");
    let _lock = D::lock();
    D::reset(&url);
    let table = D::table(&url);
    assert!(table.add("churn", 1, 100, "").unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let mut nodes: Vec<Node> = (0..2)
        .map(|_| Node {
            dir: tempfile::tempdir().unwrap(),
            serve: None,
            addr: Arc::default(),
        })
        .collect();
    for node in &mut nodes {
        node.start(flag, &url);
    }
    let clients: Vec<_> = nodes
        .iter()
        .map(|node| {
            let (addr, stop) = (Arc::clone(&node.addr), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut got: Vec<i64> = Vec::new();
                let mut client: Option<(std::net::SocketAddr, common::Client)> = None;
                while !stop.load(Ordering::SeqCst) {
                    let Some(now) = *addr.lock().unwrap() else {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    };
                    if client.as_ref().is_none_or(|(a, _)| *a != now) {
                        client = Some((now, common::Client::new(now, Duration::from_secs(5))));
                    }
                    let c = &mut client.as_mut().unwrap().1;
                    match c.get("/api/segment/get/churn?count=20") {
                        Ok(r) if r.status == 200 => {
                            got.extend(common::json_ids(&r.body).into_iter().map(|x| x as i64))
                        }
                        _ => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
                got
            })
        })
        .collect();
    let leaf = {
        let (url, stop) = (url.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut claim = D::leaf(&url);
            let mut got = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                let (a, b) = claim("churn");
                got.extend(a..b);
                std::thread::sleep(Duration::from_millis(50));
            }
            got
        })
    };
    let started = Instant::now();
    let mut restarts = 0;
    while started.elapsed() < Duration::from_secs(12) {
        std::thread::sleep(Duration::from_millis(700 + 97 * restarts % 500));
        let node = &mut nodes[restarts as usize % 2];
        *node.addr.lock().unwrap() = None;
        if let Some(mut serve) = node.serve.take() {
            if restarts % 3 == 2 {
                common::signal(serve.pid, "TERM");
                common::wait_until("serve to stop", Duration::from_secs(20), || {
                    !serve.running()
                });
            } else {
                serve.kill();
            }
        }
        node.start(flag, &url);
        restarts += 1;
    }
    stop.store(true, Ordering::SeqCst);
    let mut seen = HashSet::new();
    let mut total = 0;
    for (i, c) in clients.into_iter().enumerate() {
        let got = c.join().unwrap();
        assert!(got.len() > 1000, "node {i} served {} numbers", got.len());
        total += got.len();
        for x in got {
            assert!(seen.insert(x), "{x} handed out twice");
        }
    }
    let from_leaf = leaf.join().unwrap();
    assert!(!from_leaf.is_empty());
    for x in &from_leaf {
        assert!(
            seen.insert(*x),
            "{x} handed out by Leaf's transaction and a node"
        );
    }
    eprintln!(
        "{}: {restarts} restarts, {total} numbers from the nodes, {} from Leaf's transaction, \
         none twice",
        D::VAR,
        from_leaf.len()
    );
}

#[test]
#[ignore = "needs RINGFLAKE_MYSQL_URL (a MariaDB/MySQL server; .ci/run starts one)"]
fn mariadb_nodes_killed_and_restarted_beside_leaf_never_repeat_a_number() {
    churn::<Maria>("--mysql");
}

#[test]
#[ignore = "needs RINGFLAKE_POSTGRES_URL (a PostgreSQL server; .ci/run starts one)"]
fn postgres_nodes_killed_and_restarted_beside_leaf_never_repeat_a_number() {
    churn::<Postgres>("--postgres");
}
