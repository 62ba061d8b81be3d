//! Worker ids from etcd on a real three-member cluster (`scripts/etcd-cluster.sh`, started by
//! `.ci/run`: `RINGFLAKE_ETCD_ENDPOINTS`, `RINGFLAKE_ETCD_DIR`, `RINGFLAKE_ETCD_BASE_PORT`):
//! a fleet under `kill -9` churn while the leader is killed, a node frozen past its TTL, the
//! whole cluster silent for 40 s, and what the hostile cases say. Each test has a prefix of its
//! own; they take turns on the cluster.

mod common;

use common::held::{self, FLEET_LAYOUT, FROZEN_LAYOUT};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

static CLUSTER: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    CLUSTER.lock().unwrap_or_else(|e| e.into_inner())
}

fn endpoints() -> String {
    std::env::var("RINGFLAKE_ETCD_ENDPOINTS")
        .expect("RINGFLAKE_ETCD_ENDPOINTS: the cluster's client URLs (.ci/run starts one)")
}

/// `scripts/etcd-cluster.sh CMD DIR [N]` on the test cluster.
fn cluster(args: &[&str]) -> String {
    let dir = std::env::var("RINGFLAKE_ETCD_DIR")
        .expect("RINGFLAKE_ETCD_DIR: the cluster's directory (.ci/run starts one)");
    let script = format!(
        "{}/../../scripts/etcd-cluster.sh",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut cmd = Command::new("bash");
    cmd.arg(script).arg(args[0]).arg(dir).args(&args[1..]);
    let out = common::output_within(cmd, Duration::from_secs(90));
    assert!(
        out.status.success(),
        "etcd-cluster.sh {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `etcdctl ARGS` against the cluster.
fn etcdctl(args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new("etcdctl");
    cmd.env("ETCDCTL_API", "3")
        .args(["--endpoints", &endpoints(), "--command-timeout", "5s"])
        .args(args);
    common::output_within(cmd, Duration::from_secs(30))
}

/// Starts member N again when dropped, and waits until the cluster is healthy.
struct Restart(String);

impl Drop for Restart {
    fn drop(&mut self) {
        cluster(&["start-node", &self.0]);
        cluster(&["wait"]);
    }
}

/// A prefix no other test or run uses.
fn fresh_prefix(what: &str) -> String {
    format!(
        "/ringflake-test/{what}-{}/",
        common::unix_now() as u64 * 1000 + u64::from(std::process::id() % 1000)
    )
}

/// `ringflake serve` on an ephemeral port in `dir`, worker ids from the cluster under
/// `prefix` with a TTL of `ttl` seconds, plus `extra`; waited for until it listens.
fn node(dir: &Path, prefix: &str, ttl: &str, extra: &[&str]) -> common::Serve {
    let mut cmd = common::ringflake(dir);
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--etcd",
        &endpoints(),
        "--etcd-prefix",
        prefix,
        "--etcd-ttl",
        ttl,
    ])
    .args(extra);
    let mut s = common::Serve::launch_command(cmd);
    s.ready(Duration::from_secs(60));
    s
}

/// The flags of the etcd and Redis sources, refused where they cannot work, without a server:
/// each error names the flag and what it needs (the same code serves `serve --config`'s keys).
#[test]
fn etcd_and_redis_flags_refuse_what_cannot_work() {
    let dir = tempfile::tempdir().unwrap();
    let fails = |args: &[&str], says: &str| {
        let mut c = common::ringflake(dir.path());
        c.args(args);
        let out = common::output_within(c, Duration::from_secs(20));
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    let etcd = ["--etcd", "http://127.0.0.1:1"];
    let redis = ["--redis", "redis://127.0.0.1:1"];
    fails(
        &["gen", "--etcd-prefix", "/x/"],
        "--etcd-prefix needs --etcd",
    );
    fails(&["gen", "--redis-ttl", "30"], "--redis-ttl needs --redis");
    fails(
        &["gen", etcd[0], etcd[1], redis[0], redis[1]],
        "got --etcd and --redis",
    );
    fails(
        &["gen", etcd[0], etcd[1], "--no-recycle"],
        "--no-recycle is for a worker table",
    );
    fails(
        &["gen", etcd[0], etcd[1], "--accept-async-replication"],
        "--accept-async-replication is for --mysql, --postgres or --redis, not --etcd",
    );
    fails(
        &[
            "gen",
            "--zookeeper",
            "127.0.0.1:1",
            "--zookeeper-name",
            "x",
            "--db-ca-file",
            "ca.pem",
        ],
        "--db-ca-file is for --mysql, --postgres, --etcd or --redis, not --zookeeper",
    );
    fails(
        &["gen", etcd[0], etcd[1], "--etcd-ttl", "1"],
        "--etcd-ttl 1: expected 2 to 3600 seconds",
    );
    fails(
        &["gen", etcd[0], etcd[1], "--etcd-user", "root"],
        "expected USER:PASSWORD",
    );
    fails(
        &["gen", etcd[0], etcd[1], "--etcd-cert", "c.pem"],
        "--etcd-cert needs --etcd-key",
    );
    fails(
        &["gen", "--etcd", "ftp://h:1"],
        "expected http://HOST:PORT or https://HOST:PORT",
    );
    fails(
        &["gen", redis[0], redis[1], "--db-ca-file", "ca.pem"],
        "give a rediss:// URL",
    );
    fails(
        &["gen", "--redis", "redis+sentinel://h:26379"],
        "no master name",
    );
    fails(
        &["gen", redis[0], redis[1], "--create-table"],
        "--create-table is for --mysql or --postgres, not --redis",
    );
    fails(
        &[
            "workers",
            etcd[0],
            etcd[1],
            "--postgres",
            "postgres://u@h/d",
        ],
        "--etcd and --postgres exclude each other",
    );
    // The flags' help names the sources that take the shared ones.
    let mut c = common::ringflake(dir.path());
    c.args(["serve", "--help"]);
    let help = String::from_utf8_lossy(&common::output_within(c, Duration::from_secs(20)).stdout)
        .to_string();
    assert!(
        help.contains("With --mysql, --postgres, --etcd or --redis: trust the CA"),
        "{help}"
    );
    assert!(
        help.contains("With --mysql, --postgres or --redis: use a worker id claim"),
        "{help}"
    );
}

/// Six nodes under load, one killed with SIGKILL every 1.5 s and started again (its key stays
/// until its TTL runs out: the restart takes another id, and the layout's 16 ids are recycled),
/// while the cluster's leader is killed and started again twice: every ID is distinct.
#[test]
#[ignore = "needs the etcd cluster .ci/run starts (RINGFLAKE_ETCD_ENDPOINTS, RINGFLAKE_ETCD_DIR)"]
fn a_fleet_under_kill_9_churn_and_leader_kills_hands_out_no_id_twice() {
    let _turn = turn();
    let prefix = fresh_prefix("fleet");
    let start = |dir: &Path| node(dir, &prefix, "4", &FLEET_LAYOUT);
    let began = Instant::now();
    let fleet = held::fleet(6, 30, &start, || {
        let mut kills = 0;
        for _ in 0..2 {
            std::thread::sleep(Duration::from_secs(5));
            cluster(&["wait"]);
            let leader = cluster(&["leader"]);
            // Started again even if this test fails meanwhile: the next tests need it.
            let _restart = Restart(leader.clone());
            cluster(&["kill-node", &leader]);
            kills += 1;
            std::thread::sleep(Duration::from_secs(4));
        }
        kills
    });
    let per_node: Vec<usize> = fleet.ids.iter().map(Vec::len).collect();
    let dups = held::duplicates(&fleet.ids);
    eprintln!(
        "etcd fleet: {} restarts after SIGKILL (slowest boot {:?}), {} leaders killed, {} IDs \
         {per_node:?}, {dups} duplicates, {:?} in all",
        fleet.boots,
        fleet.slowest,
        fleet.disturbed,
        per_node.iter().sum::<usize>(),
        began.elapsed()
    );
    assert_eq!(dups, 0, "duplicate IDs");
    assert!(
        per_node.iter().all(|&n| n > 0),
        "a node served nothing: {per_node:?}"
    );
    assert!(
        fleet.boots >= held::MIN_RESTARTS,
        "{} restarts",
        fleet.boots
    );
    assert_eq!(fleet.disturbed, 2);
    // Every id listed once, within the layout.
    let listed = ringflake::EtcdAssigner::new(&endpoints())
        .unwrap()
        .prefix(&prefix)
        .list()
        .unwrap();
    // Each start took one id at most, and recycled ids are listed once: no more ids than
    // starts (6 plus the restarts), and never more than the layout's 16.
    let starts = fleet.boots + 6;
    assert!(
        listed.len() <= starts.min(16),
        "{} ids listed after {starts} starts: {listed:?}",
        listed.len()
    );
}

/// A node frozen past its TTL is fenced before another node can take its id (see
/// `held::frozen`).
#[test]
#[ignore = "needs the etcd cluster .ci/run starts (RINGFLAKE_ETCD_ENDPOINTS)"]
fn a_node_frozen_past_its_ttl_is_fenced_before_its_id_is_taken_and_heals() {
    let _turn = turn();
    let prefix = fresh_prefix("frozen");
    let start = |dir: &Path| node(dir, &prefix, "4", &FROZEN_LAYOUT);
    held::frozen(&start, Duration::from_secs(4));
}

/// The whole cluster frozen (SIGSTOP) for 40 s under load: a node whose TTL (150 s) and lease
/// window (120 s) outlast the outage answers every request, and says when the lease holds
/// again.
#[test]
#[ignore = "needs the etcd cluster .ci/run starts (RINGFLAKE_ETCD_ENDPOINTS, RINGFLAKE_ETCD_DIR)"]
fn a_40_s_outage_fails_no_request_while_the_lease_holds() {
    let _turn = turn();
    let prefix = fresh_prefix("outage");
    let dir = tempfile::tempdir().unwrap();
    let n = node(dir.path(), &prefix, "150", &["--lease-window", "120"]);
    let served = held::outage(
        &n,
        40,
        || {
            cluster(&["freeze"]);
        },
        || {
            cluster(&["thaw"]);
            cluster(&["wait"]);
        },
    );
    eprintln!("etcd outage: {served} requests answered, none failed");
}

/// What the hostile cases say: an endpoint nobody listens on, TLS to a server without it, a key
/// another program wrote under the prefix (left as it was), and a cluster with authentication
/// on (no user, a wrong password, the right one).
#[test]
#[ignore = "needs the etcd cluster .ci/run starts (RINGFLAKE_ETCD_ENDPOINTS)"]
fn hostile_stores_get_clear_errors_and_no_id() {
    let _turn = turn();
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| held::gen_in(dir.path(), args);
    let refused = |args: &[&str]| held::gen_refused(dir.path(), args);
    // Unreachable.
    let e = refused(&["--etcd", "http://127.0.0.1:1"]);
    assert!(e.contains("etcd http://127.0.0.1:1"), "{e}");
    // TLS to a plain server.
    let plain = endpoints();
    let first = plain
        .split(',')
        .next()
        .unwrap()
        .replace("http://", "https://");
    let e = refused(&["--etcd", &first]);
    assert!(e.contains("etcd https://127.0.0.1"), "{e}");
    // A key another program wrote under the prefix: refused, and left as it was.
    let prefix = fresh_prefix("foreign");
    let key = format!("{prefix}held/3");
    assert!(
        etcdctl(&["put", &key, "{\"owner\":\"billing\"}"])
            .status
            .success()
    );
    let e = refused(&["--etcd", &plain, "--etcd-prefix", &prefix]);
    assert!(
        e.contains("was not written by ringflake") && e.contains(&key),
        "{e}"
    );
    let got = etcdctl(&["get", &key, "--print-value-only"]);
    assert_eq!(
        String::from_utf8_lossy(&got.stdout).trim(),
        "{\"owner\":\"billing\"}"
    );
    // Authentication on: no user, a wrong password, then the right one.
    struct AuthOff;
    impl Drop for AuthOff {
        fn drop(&mut self) {
            let _ = etcdctl(&["--user", "root:root-pw", "auth", "disable"]);
            let _ = etcdctl(&["user", "delete", "root"]);
            let _ = etcdctl(&["role", "delete", "root"]);
        }
    }
    let _off = AuthOff;
    // The root role may be there already (etcd keeps it once made).
    let _ = etcdctl(&["role", "add", "root"]);
    for step in [
        &["user", "add", "root:root-pw"][..],
        &["user", "grant-role", "root", "root"],
        &["auth", "enable"],
    ] {
        let out = etcdctl(step);
        assert!(
            out.status.success(),
            "etcdctl {step:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let prefix = fresh_prefix("auth");
    let e = refused(&["--etcd", &plain, "--etcd-prefix", &prefix]);
    assert!(e.contains("authentication on: give --etcd-user"), "{e}");
    let e = refused(&[
        "--etcd",
        &plain,
        "--etcd-prefix",
        &prefix,
        "--etcd-user",
        "root:wrong-pw",
    ]);
    assert!(e.contains("wrong user or password"), "{e}");
    assert!(!e.contains("wrong-pw"), "{e}");
    let out = run(&[
        "--etcd",
        &plain,
        "--etcd-prefix",
        &prefix,
        "--etcd-user",
        "root:root-pw",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

/// A start refused after its claim releases the etcd key at once: nobody holds the id, which
/// is free again without waiting out the TTL (see `held::a_refused_claim_is_given_back`).
#[test]
#[ignore = "needs the servers .ci/run starts (RINGFLAKE_ETCD_ENDPOINTS)"]
fn a_start_refused_after_its_claim_gives_the_id_back_at_once() {
    let _turn = turn();
    let assigner = ringflake::EtcdAssigner::new(&endpoints())
        .unwrap()
        .prefix(&fresh_prefix("refused"))
        .ttl(Duration::from_secs(60));
    held::a_refused_claim_is_given_back(&assigner, &|| assigner.list().unwrap());
}
