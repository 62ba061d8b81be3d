//! Worker ids from real MariaDB/MySQL and PostgreSQL servers (features `mysql`, `postgres`):
//! concurrent boots, Java's own INSERT against the table from `schema/`, ids beyond the max,
//! recycling with leases, and the errors for an unreachable host, a wrong password and a missing
//! table.
//!
//! The servers come from `RINGFLAKE_MYSQL_URL` and `RINGFLAKE_POSTGRES_URL` (`.ci/run` starts
//! throw-away ones that accept TLS only, and sets both with the TLS mode and CA file in the URL:
//! `ssl-mode=VERIFY_IDENTITY&ssl-ca=…`, `sslmode=verify-full&sslrootcert=…`; the tests' own
//! clients read the same parameters). These tests DROP and recreate `WORKER_NODE` in those
//! databases: point them at a throw-away database only. The tests that need a server are
//! `#[ignore]`d, so that a plain `cargo test` reports them as ignored (with the variable they
//! need) rather than as passed; run them with `cargo test --all-features -- --include-ignored`.
//! Run so without their URL, they fail, naming it: a test never passes without checking.
//! (`unreachable_host_names_host_and_cause` needs no server and always runs.)
//!
//! Tests of one server share its table, so they run one at a time (a lock per server).

mod common;

use common::postgres_client;
use common::{server_url, split_params};

use ringflake::{
    CachedUidGenerator, Clock, DatabaseAssigner, Error, Layout, SystemClock, WorkerIdAssigner,
};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The layout with 3 worker bits (ids 1..=7) used for the max and recycling tests.
fn small_layout() -> Layout {
    Layout::new(40, 3, 20, ringflake::DEFAULT_EPOCH_SECONDS).unwrap()
}

/// The same URL with another password (URLs of the form `scheme://user:password@host...`).
fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("scheme://");
    let (userinfo, host) = rest.rsplit_once('@').expect("user:password@host");
    let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
    format!("{scheme}://{user}:{password}@{host}")
}

/// The password in a URL of the form `scheme://user:password@host...`.
fn password_of(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    let userinfo = rest.rsplit_once('@').unwrap().0;
    userinfo.split_once(':').unwrap().1.to_string()
}

fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// What the generic tests need from one kind of server.
trait Server {
    /// The environment variable with the URL.
    const VAR: &'static str;
    /// The schema file errors must name.
    const SCHEMA_FILE: &'static str;
    /// What the server says to a wrong password.
    const AUTH_FAILED: &'static str;
    /// UidGenerator's original table, without ringflake's column.
    const JAVA_DDL: &'static str;
    /// The table's columns, upper case, with their type and nullability, in order.
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)];

    fn lock() -> MutexGuard<'static, ()>;
    fn assigner(url: &str, create_table: bool) -> Result<DatabaseAssigner, Error>;
    /// Runs statements with the server's own client.
    fn exec(url: &str, sql: &str);
    /// HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED of row `id`, as text.
    fn java_columns(url: &str, id: u64) -> Vec<Option<String>>;
    /// (name, type, nullable) of each column of WORKER_NODE, in order.
    fn columns(url: &str) -> Vec<(String, String, String)>;
}

/// The tests' own MariaDB connection, with TLS verified against the URL's `ssl-ca` if it has one.
fn mysql_conn(url: &str) -> mysql::Conn {
    let (rest, tls) = split_params(url, &["ssl-mode", "ssl-ca"]);
    let mut opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&rest).unwrap());
    if let Some(ca) = tls.get("ssl-ca")
        && tls.get("ssl-mode").is_none_or(|m| m != "DISABLED")
    {
        opts = opts.ssl_opts(
            mysql::SslOpts::default().with_root_cert_path(Some(std::path::PathBuf::from(ca))),
        );
    }
    mysql::Conn::new(opts).unwrap()
}

static MYSQL_LOCK: Mutex<()> = Mutex::new(());
static POSTGRES_LOCK: Mutex<()> = Mutex::new(());

struct Mysql;

impl Server for Mysql {
    const VAR: &'static str = "RINGFLAKE_MYSQL_URL";
    const SCHEMA_FILE: &'static str = "schema/mysql.sql";
    const AUTH_FAILED: &'static str = "Access denied";
    // UidGenerator's WORKER_NODE.sql, verbatim.
    const JAVA_DDL: &'static str = "CREATE TABLE WORKER_NODE
(
ID BIGINT NOT NULL AUTO_INCREMENT COMMENT 'auto increment id',
HOST_NAME VARCHAR(64) NOT NULL COMMENT 'host name',
PORT VARCHAR(64) NOT NULL COMMENT 'port',
TYPE INT NOT NULL COMMENT 'node type: ACTUAL or CONTAINER',
LAUNCH_DATE DATE NOT NULL COMMENT 'launch date',
MODIFIED TIMESTAMP NOT NULL COMMENT 'modified time',
CREATED TIMESTAMP NOT NULL COMMENT 'created time',
PRIMARY KEY(ID)
)
 COMMENT='DB WorkerID Assigner for UID Generator',ENGINE = INNODB";
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("ID", "bigint", "NO"),
        ("HOST_NAME", "varchar(64)", "NO"),
        ("PORT", "varchar(64)", "NO"),
        ("TYPE", "int", "NO"),
        ("LAUNCH_DATE", "date", "NO"),
        ("MODIFIED", "timestamp", "NO"),
        ("CREATED", "timestamp", "NO"),
        ("LEASE_UNTIL", "bigint", "NO"),
    ];

    fn lock() -> MutexGuard<'static, ()> {
        MYSQL_LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn assigner(url: &str, create_table: bool) -> Result<DatabaseAssigner, Error> {
        // Java's behaviour unless a test asks for recycling (the library's default).
        Ok(DatabaseAssigner::mysql(url)?
            .create_table(create_table)
            .recycle(false))
    }

    fn exec(url: &str, sql: &str) {
        use mysql::prelude::Queryable;
        let mut conn = mysql_conn(url);
        conn.query_drop(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    fn java_columns(url: &str, id: u64) -> Vec<Option<String>> {
        use mysql::prelude::Queryable;
        let mut conn = mysql_conn(url);
        let row: mysql::Row = conn
            .exec_first(
                "SELECT HOST_NAME, PORT, CAST(TYPE AS CHAR), CAST(LAUNCH_DATE AS CHAR), \
                 CAST(MODIFIED AS CHAR), CAST(CREATED AS CHAR) FROM WORKER_NODE WHERE ID = ?",
                (id,),
            )
            .unwrap()
            .expect("row");
        (0..6)
            .map(|i| row.get::<Option<String>, _>(i).unwrap())
            .collect()
    }

    fn columns(url: &str) -> Vec<(String, String, String)> {
        use mysql::prelude::Queryable;
        let mut conn = mysql_conn(url);
        conn.query_map(
            "SELECT COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, IS_NULLABLE \
             FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'WORKER_NODE' ORDER BY ORDINAL_POSITION",
            |(name, ty, len, nullable): (String, String, Option<u64>, String)| {
                let ty = match len {
                    Some(len) => format!("{ty}({len})"),
                    None => ty,
                };
                (name.to_uppercase(), ty.to_lowercase(), nullable)
            },
        )
        .unwrap()
    }
}

struct Postgres;

impl Server for Postgres {
    const VAR: &'static str = "RINGFLAKE_POSTGRES_URL";
    const SCHEMA_FILE: &'static str = "schema/postgres.sql";
    const AUTH_FAILED: &'static str = "password authentication failed";
    // UidGenerator's table as a PostgreSQL port of it has it (no LEASE_UNTIL).
    const JAVA_DDL: &'static str = "CREATE TABLE WORKER_NODE (
ID BIGSERIAL PRIMARY KEY,
HOST_NAME VARCHAR(64) NOT NULL,
PORT VARCHAR(64) NOT NULL,
TYPE INT NOT NULL,
LAUNCH_DATE DATE NOT NULL,
MODIFIED TIMESTAMP NOT NULL,
CREATED TIMESTAMP NOT NULL
)";
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("ID", "bigint", "NO"),
        ("HOST_NAME", "character varying(64)", "NO"),
        ("PORT", "character varying(64)", "NO"),
        ("TYPE", "integer", "NO"),
        ("LAUNCH_DATE", "date", "NO"),
        ("MODIFIED", "timestamp without time zone", "NO"),
        ("CREATED", "timestamp without time zone", "NO"),
        ("LEASE_UNTIL", "bigint", "NO"),
    ];

    fn lock() -> MutexGuard<'static, ()> {
        POSTGRES_LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn assigner(url: &str, create_table: bool) -> Result<DatabaseAssigner, Error> {
        // Java's behaviour unless a test asks for recycling (the library's default).
        Ok(DatabaseAssigner::postgres(url)?
            .create_table(create_table)
            .recycle(false))
    }

    fn exec(url: &str, sql: &str) {
        let mut client = postgres_client(url);
        client
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }

    fn java_columns(url: &str, id: u64) -> Vec<Option<String>> {
        let mut client = postgres_client(url);
        let row = client
            .query_one(
                "SELECT HOST_NAME, PORT, TYPE::text, LAUNCH_DATE::text, MODIFIED::text, \
                 CREATED::text FROM WORKER_NODE WHERE ID = $1",
                &[&(id as i64)],
            )
            .unwrap();
        (0..6).map(|i| row.get::<_, Option<String>>(i)).collect()
    }

    fn columns(url: &str) -> Vec<(String, String, String)> {
        let mut client = postgres_client(url);
        client
            .query(
                "SELECT column_name::text, data_type::text, character_maximum_length, is_nullable::text \
                 FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = 'worker_node' \
                 ORDER BY ordinal_position",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| {
                let ty: String = r.get(1);
                let ty = match r.get::<_, Option<i32>>(2) {
                    Some(len) => format!("{ty}({len})"),
                    None => ty,
                };
                (r.get::<_, String>(0).to_uppercase(), ty, r.get(3))
            })
            .collect()
    }
}

/// Takes the server's lock and drops its table.
fn fresh<S: Server>() -> (MutexGuard<'static, ()>, String) {
    let url = server_url(S::VAR, "WORKER_NODE");
    let guard = S::lock();
    S::exec(&url, "DROP TABLE IF EXISTS WORKER_NODE");
    (guard, url)
}

/// Eight threads, each with its own assigner and connection, boot at once on a missing table
/// (each creating it if needed): eight distinct ids, eight rows.
fn eight_concurrent_boots<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let barrier = Barrier::new(8);
    let ids: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (url, barrier) = (&url, &barrier);
                s.spawn(move || {
                    let assigner = S::assigner(url, true).unwrap().recycle(i % 2 == 1);
                    barrier.wait();
                    let a = assigner.assign(&Layout::default()).unwrap();
                    a.worker_id
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let distinct: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), 8, "ids {ids:?}");
    let rows = S::assigner(&url, false).unwrap().list().unwrap();
    let row_ids: HashSet<u64> = rows.iter().map(|r| r.id).collect();
    assert_eq!(row_ids, distinct, "one row per boot, with the boot's id");
    let leased = rows.iter().filter(|r| r.lease_until > 0).count();
    assert_eq!(leased, 4, "the four recycling boots hold leases: {rows:?}");
}

/// The table from schema/ is Java's plus LEASE_UNTIL; Java's own INSERT works on it; a row
/// ringflake wrote has every column Java reads.
fn java_compatible_rows<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let assigner = S::assigner(&url, true).unwrap();
    let id = assigner.assign_worker_id(&Layout::default()).unwrap();
    let columns = S::columns(&url);
    let expected: Vec<(String, String, String)> = S::COLUMNS
        .iter()
        .map(|&(n, t, z)| (n.into(), t.into(), z.into()))
        .collect();
    assert_eq!(columns, expected);

    S::exec(
        &url,
        "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) \
         VALUES ('h', '1-2', 2, '2026-11-23', NOW(), NOW())",
    );
    let rows = assigner.list().unwrap();
    assert_eq!(rows.len(), 2);
    let java = &rows[1];
    assert_eq!(
        java.id,
        id + 1,
        "Java's row takes the next auto-increment id"
    );
    assert_eq!(
        (
            java.host_name.as_str(),
            java.port.as_str(),
            java.node_type,
            java.launch_date.as_str(),
            java.lease_until
        ),
        ("h", "1-2", 2, "2026-11-23", 0),
        "Java's row gets the default lease"
    );

    let ours = S::java_columns(&url, id);
    assert!(ours.iter().all(Option::is_some), "null column: {ours:?}");
    let ours: Vec<String> = ours.into_iter().map(Option::unwrap).collect();
    let (host, port, ty, launch, modified, created) =
        (&ours[0], &ours[1], &ours[2], &ours[3], &ours[4], &ours[5]);
    assert!(!host.is_empty() && host.len() <= 64, "HOST_NAME {host:?}");
    assert!(ty == "1" || ty == "2", "TYPE {ty}");
    if ty == "2" {
        let (millis, random) = port.split_once('-').expect("PORT <millis>-<random>");
        assert!(
            millis.parse::<i64>().unwrap() > 1_700_000_000_000,
            "PORT {port}"
        );
        assert!(random.parse::<u32>().unwrap() < 100_000, "PORT {port}");
    }
    assert_eq!(launch.len(), 10, "LAUNCH_DATE {launch}");
    assert!(
        modified.len() >= 19 && created.len() >= 19,
        "{modified} {created}"
    );
}

/// With 3 worker bits the eighth boot's id 8 is refused, as Java does, and its row removed.
fn id_beyond_the_max<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let layout = small_layout();
    let assigner = S::assigner(&url, true).unwrap();
    for expected in 1..=7 {
        assert_eq!(assigner.assign_worker_id(&layout).unwrap(), expected);
    }
    let err = assigner.assign_worker_id(&layout).unwrap_err();
    assert_eq!(
        err,
        Error::WorkerIdOutOfRange {
            worker_id: 8,
            max: 7
        }
    );
    assert_eq!(err.to_string(), "worker id 8 exceeds the max 7");
    let rows = assigner.list().unwrap();
    assert_eq!(rows.len(), 7, "the refused boot left no row: {rows:?}");
    assert!(rows.iter().all(|r| r.id <= 7));
}

/// One boot's use of a worker id: the seconds it may have issued, `lo..=hi`.
#[derive(Debug)]
struct Run {
    boot: usize,
    lo: i64,
    hi: i64,
}

/// 3 worker bits, 14 boots with recycling and a 1 s lease window: even boots run a generator and
/// drop it cleanly (the lease is released at the last second used), odd boots only take the
/// assignment and drop its lease without releasing it (as a killed node leaves it). Every boot
/// gets an id, ids are reused, and one id's holders never overlap in seconds.
fn recycling_with_leases<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let layout = small_layout();
    let assigner = S::assigner(&url, true)
        .unwrap()
        .recycle(true)
        .lease_window(Duration::from_secs(1))
        .retry_for(Duration::from_secs(60));
    let lease_of = |worker: u64| {
        assigner
            .list()
            .unwrap()
            .into_iter()
            .find(|r| r.id == worker)
            .map(|r| r.lease_until)
            .expect("the worker's row")
    };
    let mut runs: HashMap<u64, Vec<Run>> = HashMap::new();
    let mut all_ids = Vec::new();
    let started = Instant::now();
    for boot in 0..14 {
        if boot % 2 == 0 {
            let generator = CachedUidGenerator::builder(layout)
                .worker_id_from(&assigner)
                .boost_power(0)
                .build()
                .unwrap_or_else(|e| panic!("boot {boot}: {e}"));
            let worker = generator.worker_id();
            let ids: Vec<u64> = (0..1000).map(|_| generator.next_id().unwrap()).collect();
            drop(generator);
            let seconds: Vec<i64> = ids
                .iter()
                .map(|&id| layout.parse(id).unwrap().unix_seconds)
                .collect();
            let (lo, max) = (
                *seconds.iter().min().unwrap(),
                *seconds.iter().max().unwrap(),
            );
            let hi = lease_of(worker);
            assert!(
                max <= hi,
                "boot {boot}: issued second {max} above its lease {hi}"
            );
            all_ids.extend(ids);
            runs.entry(worker).or_default().push(Run { boot, lo, hi });
        } else {
            let a = assigner
                .assign(&layout)
                .unwrap_or_else(|e| panic!("boot {boot}: {e}"));
            let worker = a.worker_id;
            let lease = a.lease.as_ref().expect("a lease with recycling on");
            let hi = lease.until();
            assert_eq!(lease_of(worker), hi, "the row holds the lease");
            let lo = a.not_before.map_or(i64::MIN, |n| n + 1);
            drop(a); // no release: the lease stays until it runs out
            runs.entry(worker).or_default().push(Run { boot, lo, hi });
        }
    }
    eprintln!(
        "{}: 14 boots with recycling in {:?}",
        S::VAR,
        started.elapsed()
    );
    assert!(runs.keys().all(|w| (1..=7).contains(w)), "{runs:?}");
    assert!(
        runs.values().any(|r| r.len() > 1),
        "no worker id was recycled"
    );
    for (worker, runs) in &runs {
        for pair in runs.windows(2) {
            assert!(
                pair[0].hi < pair[1].lo,
                "worker {worker}: boot {} may issue up to second {}, boot {} from second {}",
                pair[0].boot,
                pair[0].hi,
                pair[1].boot,
                pair[1].lo
            );
        }
    }
    let n = all_ids.len();
    all_ids.sort_unstable();
    all_ids.dedup();
    assert_eq!(all_ids.len(), n, "an ID repeated across boots");
    let rows = assigner.list().unwrap();
    assert_eq!(
        rows.len(),
        7,
        "recycled rows are reused, not added: {rows:?}"
    );
    assert!(
        rows.iter()
            .all(|r| r.lease_until > 0 && r.lease_until < now_seconds() + 120)
    );
}

/// Nothing listens on port 1: the boot retries for retry_for, then names the host and cause.
fn unreachable_host<S: Server>(url: &str) {
    let assigner = S::assigner(url, false)
        .unwrap()
        .retry_for(Duration::from_secs(1));
    let started = Instant::now();
    let err = assigner.assign_worker_id(&Layout::default()).unwrap_err();
    let elapsed = started.elapsed();
    let text = err.to_string();
    eprintln!("unreachable after {elapsed:?}: {text}");
    assert!(is_transient(&err), "{err:?}");
    assert!(text.contains("127.0.0.1:1"), "{text}");
    assert!(text.contains("refused"), "{text}");
    assert!(!text.contains("unreachable-pw-41"), "{text}");
    assert!(!format!("{err:?}").contains("unreachable-pw-41"));
    // The driver's error is the source, its own causes under it, down to the operating system's
    // words.
    let mut chain = Vec::new();
    let mut next = std::error::Error::source(&err);
    while let Some(e) = next {
        chain.push(e.to_string());
        next = e.source();
    }
    assert!(
        chain.last().is_some_and(|os| os.contains("refused")),
        "{chain:?}"
    );
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(15),
        "retried for about 1 s, took {elapsed:?}"
    );
}

/// A wrong password fails at once (no retries) with the server's reason, never the password.
fn wrong_password<S: Server>() {
    let url = server_url(S::VAR, "WORKER_NODE");
    let _guard = S::lock();
    let bad = with_password(&url, "wrong-pw-5f3a");
    let shown = common::fails_at_once(
        S::assigner(&bad, true).unwrap(),
        &["wrong-pw-5f3a", &password_of(&url)],
    );
    assert!(shown.contains(S::AUTH_FAILED), "{shown}");
    assert!(shown.contains("check the user and password"), "{shown}");
    assert!(shown.contains("127.0.0.1"), "{shown}");
}

/// A missing table without create_table names the schema file; Java's table without
/// ringflake's column gets the ALTER to apply; after it, boots work.
fn missing_table<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let assigner = S::assigner(&url, false)
        .unwrap()
        .retry_for(Duration::from_secs(20));
    let started = Instant::now();
    let err = assigner.assign_worker_id(&Layout::default()).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "not retried");
    let text = err.to_string();
    assert!(
        matches!(
            err,
            Error::Database {
                transient: false,
                ..
            }
        ),
        "{err:?}"
    );
    eprintln!("missing table: {text}");
    assert!(text.contains("WORKER_NODE not found"), "{text}");
    assert!(text.contains(S::SCHEMA_FILE), "{text}");
    assert!(!text.contains(&password_of(&url)), "{text}");

    S::exec(&url, S::JAVA_DDL);
    let err = S::assigner(&url, false)
        .unwrap()
        .assign_worker_id(&Layout::default())
        .unwrap_err();
    eprintln!("Java's table: {err}");
    assert!(
        err.to_string()
            .contains("ADD COLUMN LEASE_UNTIL BIGINT NOT NULL DEFAULT 0"),
        "{err}"
    );
    S::exec(
        &url,
        "ALTER TABLE WORKER_NODE ADD COLUMN LEASE_UNTIL BIGINT NOT NULL DEFAULT 0",
    );
    let id = S::assigner(&url, false)
        .unwrap()
        .assign_worker_id(&Layout::default())
        .unwrap();
    assert_eq!(id, 1);
}

/// `ringflake workers` reads only: on a database without the table it fails naming the schema
/// file and leaves the table missing; only the explicit `--create-table` creates it.
fn workers_command_reads_only<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let flag = if S::VAR.contains("MYSQL") {
        "--mysql"
    } else {
        "--postgres"
    };
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let out = common::ringflake(dir.path())
            .args(["workers", flag, &url, "--db-retry", "0"])
            .args(extra)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!text.contains(&password_of(&url)), "{text}");
        (out.status.success(), text)
    };
    let (ok, text) = run(&[]);
    assert!(!ok, "{text}");
    assert!(text.contains("WORKER_NODE not found"), "{text}");
    assert!(text.contains(S::SCHEMA_FILE), "{text}");
    let err = S::assigner(&url, false).unwrap().list().unwrap_err();
    assert!(
        err.to_string().contains("WORKER_NODE not found"),
        "workers created the table: {err}"
    );
    let (ok, text) = run(&["--create-table"]);
    assert!(ok, "{text}");
    assert!(text.contains("0 rows in"), "{text}");
    assert!(S::assigner(&url, false).unwrap().list().unwrap().is_empty());
}

/// A TCP proxy in front of a real server that can stop answering without closing anything, as a
/// server that hangs or a route that goes dead without a reset: while frozen, connections stay
/// open and nothing is forwarded either way (new ones are accepted and held). `lose_reply_to`
/// lets the request carrying a given value reach the server (which commits it) and holds every
/// answer from then on: a lost reply. `thaw` closes every connection that was open, discarding
/// what it held, and lets new ones through again.
struct Freezer {
    addr: std::net::SocketAddr,
    switches: Arc<Switches>,
}

/// Index into [`Switches::hold`].
const REQUESTS: usize = 0;
const REPLIES: usize = 1;

#[derive(Default)]
struct Switches {
    /// [client to server, server to client]: hold what arrives instead of forwarding it.
    hold: [AtomicBool; 2],
    /// Armed: the next request goes through, and the replies are held from then on.
    trigger: AtomicBool,
    /// Bumped by `thaw`: connections of an older generation are closed.
    generation: AtomicU64,
}

impl Freezer {
    fn start(upstream: std::net::SocketAddr) -> Freezer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let switches = Arc::new(Switches::default());
        let sw = Arc::clone(&switches);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let sw = Arc::clone(&sw);
                std::thread::spawn(move || Freezer::proxy(client, upstream, &sw));
            }
        });
        Freezer { addr, switches }
    }

    fn proxy(client: TcpStream, upstream: std::net::SocketAddr, sw: &Switches) {
        let born = sw.generation.load(Ordering::SeqCst);
        let current = || sw.generation.load(Ordering::SeqCst) == born;
        // Accepted while requests are held: held open, never answered, closed at the thaw.
        while sw.hold[REQUESTS].load(Ordering::SeqCst) && current() {
            std::thread::sleep(Duration::from_millis(10));
        }
        if !current() {
            return;
        }
        let Ok(server) = TcpStream::connect(upstream) else {
            return;
        };
        let pump = |from: TcpStream, to: TcpStream, direction: usize| {
            let held = &sw.hold[direction];
            move || {
                let mut from = from;
                let mut to = to;
                let close = |from: &TcpStream, to: &TcpStream| {
                    let _ = from.shutdown(std::net::Shutdown::Both);
                    let _ = to.shutdown(std::net::Shutdown::Both);
                };
                from.set_read_timeout(Some(Duration::from_millis(20)))
                    .unwrap();
                let mut buf = [0u8; 16 * 1024];
                loop {
                    if !current() {
                        return close(&from, &to);
                    }
                    if held.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                    match from.read(&mut buf) {
                        Ok(0) => {
                            let _ = to.shutdown(std::net::Shutdown::Write);
                            return;
                        }
                        Ok(n) => {
                            if direction == REQUESTS && sw.trigger.swap(false, Ordering::SeqCst) {
                                sw.hold[REPLIES].store(true, Ordering::SeqCst);
                            }
                            // Read as the hold began: held, and dropped at the thaw.
                            while held.load(Ordering::SeqCst) && current() {
                                std::thread::sleep(Duration::from_millis(10));
                            }
                            if !current() || to.write_all(&buf[..n]).is_err() {
                                return close(&from, &to);
                            }
                        }
                        Err(e)
                            if matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) => {}
                        Err(_) => return close(&from, &to),
                    }
                }
            }
        };
        std::thread::scope(|s| {
            s.spawn(pump(
                client.try_clone().unwrap(),
                server.try_clone().unwrap(),
                REQUESTS,
            ));
            s.spawn(pump(server, client, REPLIES));
        });
    }

    /// Nothing goes through either way.
    fn freeze(&self) {
        self.switches.hold[REQUESTS].store(true, Ordering::SeqCst);
        self.switches.hold[REPLIES].store(true, Ordering::SeqCst);
    }

    /// The next request goes through; its answer and every later one are held. (The traffic is
    /// TLS, so the proxy cannot look for a value in it: the caller makes sure that the next
    /// request is the one statement it means, in one round trip.)
    fn lose_next_reply(&self) {
        self.switches.trigger.store(true, Ordering::SeqCst);
    }

    fn thaw(&self) {
        self.switches.generation.fetch_add(1, Ordering::SeqCst);
        self.switches.trigger.store(false, Ordering::SeqCst);
        self.switches.hold[REQUESTS].store(false, Ordering::SeqCst);
        self.switches.hold[REPLIES].store(false, Ordering::SeqCst);
    }
}

/// Creates the table at `url`, then starts a [`Freezer`] in front of its server; returns the
/// proxy and the URL that goes through it (over TCP: the mysql crate would otherwise switch to the
/// server's Unix socket, around the proxy).
fn behind_proxy<S: Server>(url: &str) -> (Freezer, String) {
    S::assigner(url, true).unwrap().list().unwrap();
    let (head, rest) = url.rsplit_once('@').expect("user:password@host");
    let (hostport, tail) = rest.split_once('/').expect("host:port/database");
    let upstream = std::net::ToSocketAddrs::to_socket_addrs(hostport)
        .unwrap()
        .next()
        .unwrap();
    let proxy = Freezer::start(upstream);
    let mut proxied = format!("{head}@{}/{tail}", proxy.addr);
    if url.starts_with("mysql:") {
        proxied.push(if tail.contains('?') { '&' } else { '?' });
        proxied.push_str("prefer_socket=false");
    }
    (proxy, proxied)
}

/// `LEASE_UNTIL` of row `id`, read directly (not through the proxy).
fn row_lease<S: Server>(url: &str, id: u64) -> Option<i64> {
    S::assigner(url, false)
        .unwrap()
        .list()
        .unwrap()
        .into_iter()
        .find(|r| r.id == id)
        .map(|r| r.lease_until)
}

fn is_transient(err: &Error) -> bool {
    matches!(
        err,
        Error::Database {
            transient: true,
            ..
        }
    )
}

/// A server that stops answering (the proxy in front of it freezes) costs one timeout per call,
/// not a thread blocked for the kernel's TCP retransmission limit: a lease extension fails as a
/// transient error within the assigner's timeout, a boot within its retry time, and once the
/// server answers again the next extension reconnects and lands.
fn hung_server<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let (proxy, proxied) = behind_proxy::<S>(&url);
    let timeout = Duration::from_millis(1500);
    let assigner = S::assigner(&proxied, false)
        .unwrap()
        .recycle(true)
        .timeout(timeout)
        .retry_for(Duration::from_secs(2));
    let a = assigner.assign(&small_layout()).unwrap();
    let lease = a.lease.as_ref().expect("a lease with recycling on");
    let row_lease = || row_lease::<S>(&url, a.worker_id);
    let first = lease.until();
    lease.extend(first + 1).unwrap();
    assert_eq!(row_lease(), Some(first + 1));

    proxy.freeze();
    let started = Instant::now();
    let err = lease.extend(first + 2).unwrap_err();
    let elapsed = started.elapsed();
    eprintln!("extension with the server frozen, after {elapsed:?}: {err}");
    assert!(is_transient(&err), "{err:?}");
    assert!(err.to_string().contains("no answer within 1.5s"), "{err}");
    assert!(
        elapsed >= timeout && elapsed < timeout * 3,
        "failed after {elapsed:?}, with a timeout of {timeout:?}"
    );
    assert_eq!(
        lease.until(),
        first + 1,
        "a failed extension does not count"
    );
    assert_eq!(row_lease(), Some(first + 1), "nothing reached the server");

    // A boot against the frozen server: bounded by its retry time, each attempt by the timeout.
    let booting = S::assigner(&proxied, false)
        .unwrap()
        .timeout(timeout)
        .retry_for(Duration::from_secs(2));
    let started = Instant::now();
    let err = booting.assign_worker_id(&small_layout()).unwrap_err();
    let elapsed = started.elapsed();
    eprintln!("boot with the server frozen, after {elapsed:?}: {err}");
    assert!(is_transient(&err), "{err:?}");
    assert!(
        elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(2) + timeout * 3,
        "gave up after {elapsed:?}: retry for 2 s, each attempt at most {timeout:?}"
    );

    proxy.thaw();
    let started = Instant::now();
    lease.extend(first + 2).unwrap();
    eprintln!("extension after the thaw: {:?}", started.elapsed());
    assert!(
        started.elapsed() < timeout,
        "a fresh connection answers at once"
    );
    assert_eq!(lease.until(), first + 2);
    assert_eq!(row_lease(), Some(first + 2));
}

/// A lease extension whose UPDATE commits but whose answer never comes back (the proxy holds the
/// replies from the request carrying it on) fails after the timeout; the next one, on a fresh
/// connection, misses its compare-and-set, finds the row holding the value it tried under this
/// boot's HOST_NAME and PORT, and continues from it instead of giving the lease up. One extension
/// first: the UPDATE is then one request (MariaDB: the statement is prepared and cached;
/// PostgreSQL: typed parameters, no prepare round trip).
fn lost_reply<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let (proxy, proxied) = behind_proxy::<S>(&url);
    let timeout = Duration::from_millis(1500);
    let assigner = S::assigner(&proxied, false)
        .unwrap()
        .recycle(true)
        .timeout(timeout);
    let a = assigner.assign(&small_layout()).unwrap();
    let lease = a.lease.as_ref().expect("a lease with recycling on");
    let row_lease = || row_lease::<S>(&url, a.worker_id);
    let first = lease.until();
    lease.extend(first + 1).unwrap();
    assert_eq!(row_lease(), Some(first + 1));

    proxy.lose_next_reply();
    let err = lease.extend(first + 5).unwrap_err();
    eprintln!("extension with its reply lost: {err}");
    assert!(is_transient(&err), "{err:?}");
    assert!(err.to_string().contains("no answer within"), "{err}");
    assert_eq!(row_lease(), Some(first + 5), "the update itself committed");
    assert_eq!(lease.until(), first + 1, "not confirmed");

    proxy.thaw();
    lease.extend(first + 7).unwrap();
    assert_eq!(lease.until(), first + 7);
    assert_eq!(row_lease(), Some(first + 7));
}

/// A generator built inside `async fn main` (or any task) boots its worker id from inside a
/// Tokio runtime, and may drop its assigner there: neither panics, whatever the driver uses
/// underneath.
fn inside_a_tokio_runtime<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (id, rows) = runtime.block_on(async {
        let assigner = S::assigner(&url, true).unwrap().recycle(true);
        let generator = CachedUidGenerator::builder(small_layout())
            .worker_id_from(&assigner)
            .build()
            .unwrap();
        let id = generator.next_id().unwrap();
        let rows = assigner.list().unwrap();
        drop(generator); // releases the lease: a database call, still inside the runtime
        drop(assigner);
        (id, rows)
    });
    assert_eq!(rows.len(), 1, "{rows:?}");
    let parsed = small_layout().parse(id).unwrap();
    assert_eq!(parsed.worker_id, rows[0].id, "{parsed:?}");
}

/// The database's clock is read in one round trip and agrees with this machine's (the server runs
/// here, on the same clock): the skew is the round trip's uncertainty, not more; a generator on
/// it shows the skew in its stats, and serves.
fn database_clock_agrees<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let assigner = S::assigner(&url, true).unwrap().recycle(true);
    let a = assigner.assign(&Layout::default()).unwrap();
    let lease = a.lease.as_ref().expect("a lease");
    let t = lease
        .database_clock()
        .unwrap()
        .expect("a server database has a clock");
    let now_ms = SystemClock.now_millis();
    let skew = t.skew_micros(now_ms);
    assert!(t.round_trip < Duration::from_secs(2), "{t:?}");
    let bound = t.round_trip.as_micros() as i64 / 2 + 20_000;
    assert!(skew.abs() <= bound, "skew {skew} µs, {t:?}");
    drop(a);
    let generator = CachedUidGenerator::builder(small_layout())
        .worker_id_from(&assigner)
        .build()
        .unwrap();
    generator.next_id().unwrap();
    let stats = generator.stats();
    let skew = stats.clock_skew_millis.expect("read at boot");
    assert!(skew.abs() < 1_000, "{stats:?}");
    assert_eq!(stats.max_clock_skew_millis, Some(10_000), "{stats:?}");
    assert!(!stats.clock_skewed, "{stats:?}");
}

/// With the default 300 s window the lease is written every 101 s, yet a database that stops
/// answering is found within seconds: the clock read every 5 s fails, and the lease is tried at
/// once (a failed extension, counted, the lease at risk); once it answers again the lease is
/// written and holds again.
fn outage_found_by_the_clock_read<S: Server>() {
    let (_guard, url) = fresh::<S>();
    let (proxy, proxied) = behind_proxy::<S>(&url);
    let assigner = S::assigner(&proxied, false)
        .unwrap()
        .recycle(true)
        .timeout(Duration::from_secs(1));
    let generator = CachedUidGenerator::builder(small_layout())
        .worker_id_from(&assigner)
        .build()
        .unwrap();
    generator.next_id().unwrap();
    let written = row_lease::<S>(&url, generator.worker_id()).expect("the row");
    let wait = |what: &str, done: &dyn Fn(&ringflake::Stats) -> bool| {
        let started = Instant::now();
        loop {
            let stats = generator.stats();
            if done(&stats) {
                return started.elapsed();
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{what}: not within 20 s: {stats:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    proxy.freeze();
    let found = wait("a failed extension", &|s| {
        s.lease_extension_failures > 0 && s.lease_lost
    });
    eprintln!("outage found after {found:?}");
    proxy.thaw();
    wait("the lease written again", &|s| !s.lease_lost);
    assert!(
        row_lease::<S>(&url, generator.worker_id()).is_some_and(|l| l > written),
        "the lease was written again"
    );
}

macro_rules! server_tests {
    ($feature:literal, $module:ident, $server:ty, $needs:literal, $unreachable:literal) => {
        mod $module {
            use super::*;

            // Against the real server: ignored unless asked for, failing without its URL.
            server_tests!(@each $server; #[ignore = $needs];
                eight_concurrent_boots_get_distinct_ids => eight_concurrent_boots(),
                java_insert_and_rows_are_compatible => java_compatible_rows(),
                id_beyond_the_max_leaves_no_row => id_beyond_the_max(),
                recycling_with_leases_never_overlaps => recycling_with_leases(),
                wrong_password_is_clear_and_secret => wrong_password(),
                missing_table_names_the_schema_file => missing_table(),
                hung_server_costs_one_timeout => hung_server(),
                lost_reply_to_an_extension_is_recovered => lost_reply(),
                works_inside_a_tokio_runtime => inside_a_tokio_runtime(),
                database_clock_agrees_with_this_machine => database_clock_agrees(),
                an_outage_is_found_by_the_clock_read => outage_found_by_the_clock_read(),
                workers_command_never_creates_the_table => workers_command_reads_only(),
            );
            // No server needed (a closed port on this machine): always run.
            server_tests!(@each $server;
                unreachable_host_names_host_and_cause => unreachable_host($unreachable),
            );
        }
    };
    // One #[test] per generic test function, for one server, each with the attribute given.
    (@each $server:ty; #[$attr:meta]; $($name:ident => $test:ident($($arg:expr)?)),* $(,)?) => {
        $(
            #[test]
            #[$attr]
            fn $name() {
                $test::<$server>($($arg)?);
            }
        )*
    };
    (@each $server:ty; $($name:ident => $test:ident($($arg:expr)?)),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $test::<$server>($($arg)?);
            }
        )*
    };
}

server_tests!(
    "mysql",
    mysql_server,
    Mysql,
    "needs RINGFLAKE_MYSQL_URL (a MariaDB/MySQL server; .ci/run starts one)",
    "mysql://ringflake:unreachable-pw-41@127.0.0.1:1/ringflake"
);
server_tests!(
    "postgres",
    postgres_server,
    Postgres,
    "needs RINGFLAKE_POSTGRES_URL (a PostgreSQL server; .ci/run starts one)",
    "postgres://ringflake:unreachable-pw-41@127.0.0.1:1/ringflake"
);
