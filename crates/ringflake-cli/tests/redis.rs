//! Worker ids from Redis on real servers (`scripts/redis-sentinel.sh`, started by `.ci/run`: a
//! primary with a replica and three Sentinels, and a standalone server;
//! `RINGFLAKE_REDIS_DIR`, `RINGFLAKE_REDIS_BASE_PORT`): a fleet under `kill -9` churn, the
//! primary killed while the replica's link is stalled and the replica promoted, a node frozen
//! past its TTL, a server silent for 40 s, and what the hostile cases say. Each test has a
//! prefix of its own; they take turns.

mod common;

use common::held::{self, FLEET_LAYOUT, FROZEN_LAYOUT};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERVERS: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    SERVERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// `scripts/redis-sentinel.sh CMD DIR [ARGS]` on the test servers.
fn servers(args: &[&str]) -> String {
    let dir = std::env::var("RINGFLAKE_REDIS_DIR")
        .expect("RINGFLAKE_REDIS_DIR: the servers' directory (.ci/run starts them)");
    let script = format!(
        "{}/../../scripts/redis-sentinel.sh",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut cmd = Command::new("bash");
    cmd.arg(script).arg(args[0]).arg(dir).args(&args[1..]);
    let out = common::output_within(cmd, Duration::from_secs(90));
    assert!(
        out.status.success(),
        "redis-sentinel.sh {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `redis-cli -p PORT ARGS`: its output.
fn cli(port: &str, args: &[&str]) -> String {
    let mut cmd = Command::new("redis-cli");
    cmd.args(["-h", "127.0.0.1", "-p", port]).args(args);
    let out = common::output_within(cmd, Duration::from_secs(30));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The Sentinels' URL: the primary they name now.
fn sentinel_url() -> String {
    format!("redis+sentinel://{}/ringflake", servers(&["sentinels"]))
}

/// The standalone server's URL.
fn standalone_url() -> String {
    format!("redis://127.0.0.1:{}", servers(&["port", "standalone"]))
}

/// A prefix no other test or run uses.
fn fresh_prefix(what: &str) -> String {
    format!(
        "ringflake-test:{what}-{}:",
        common::unix_now() as u64 * 1000 + u64::from(std::process::id() % 1000)
    )
}

/// `ringflake serve` on an ephemeral port in `dir`, worker ids from `url` under `prefix` with a
/// TTL of `ttl` seconds, plus `extra`, launched.
fn launch(dir: &Path, url: &str, prefix: &str, ttl: &str, extra: &[&str]) -> common::Serve {
    let mut cmd = common::ringflake(dir);
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--redis",
        url,
        "--redis-prefix",
        prefix,
        "--redis-ttl",
        ttl,
    ])
    .args(extra);
    common::Serve::launch_command(cmd)
}

/// [`launch`], waited for until it listens.
fn node(dir: &Path, url: &str, prefix: &str, ttl: &str, extra: &[&str]) -> common::Serve {
    let mut s = launch(dir, url, prefix, ttl, extra);
    s.ready(Duration::from_secs(60));
    s
}

/// Six nodes through the Sentinels under load, one killed with SIGKILL every 1.5 s and started
/// again (its key stays until its TTL runs out: the restart takes another id): every ID is
/// distinct.
#[test]
#[ignore = "needs the Redis servers .ci/run starts (RINGFLAKE_REDIS_DIR)"]
fn a_fleet_under_kill_9_churn_hands_out_no_id_twice() {
    let _turn = turn();
    let prefix = fresh_prefix("fleet");
    let url = sentinel_url();
    let start = |dir: &Path| node(dir, &url, &prefix, "4", &FLEET_LAYOUT);
    let began = Instant::now();
    let fleet = held::fleet(6, 25, &start, || ());
    let per_node: Vec<usize> = fleet.ids.iter().map(Vec::len).collect();
    let dups = held::duplicates(&fleet.ids);
    eprintln!(
        "redis fleet: {} restarts after SIGKILL (slowest boot {:?}), {} IDs {per_node:?}, {dups} \
         duplicates, {:?} in all",
        fleet.boots,
        fleet.slowest,
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
}

/// The replica's link stalled (`CLIENT PAUSE WRITE` on it: it applies nothing of the stream),
/// the primary killed, the replica promoted by the Sentinels, with default flags: a node that
/// booted during the stall is refused its claim (the replica lacks it) and says so, then takes
/// an id on the promoted replica; the node that served before finds its key as the promoted
/// replica has it, or gone, and heals; no ID is handed out twice.
#[test]
#[ignore = "needs the Redis servers .ci/run starts (RINGFLAKE_REDIS_DIR)"]
fn a_failover_with_a_stalled_replica_hands_out_no_id_twice() {
    let _turn = turn();
    let prefix = fresh_prefix("failover");
    let url = sentinel_url();
    let primary = servers(&["primary"]);
    let replica = if primary == servers(&["port", "primary"]) {
        servers(&["port", "replica"])
    } else {
        servers(&["port", "primary"])
    };
    let (d0, da, db) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let mut a0 = node(d0.path(), &url, &prefix, "4", &FLEET_LAYOUT);
    let mut c0 = common::Client::new(a0.addr(), Duration::from_secs(1));
    let mut from_a0 = held::take(&mut c0, 100);
    assert!(!from_a0.is_empty(), "{}", a0.output());
    // Stall the replica: it takes the stream in but applies none of it.
    assert_eq!(cli(&replica, &["CLIENT", "PAUSE", "30000", "WRITE"]), "OK");
    struct Unpause(String);
    impl Drop for Unpause {
        fn drop(&mut self) {
            cli(&self.0, &["CLIENT", "UNPAUSE"]);
        }
    }
    let _unpause = Unpause(replica.clone());
    let mut a = launch(
        da.path(),
        &url,
        &prefix,
        "4",
        &[&FLEET_LAYOUT[..], &["--db-retry", "60"]].concat(),
    );
    // Its claim refused (or, if the claims were used unconfirmed, served: the duplicates below
    // then show why they may not be).
    common::wait_until(
        "A's claim refused, or A serving",
        Duration::from_secs(20),
        || {
            from_a0.extend(held::take(&mut c0, 100));
            let out = a.output();
            out.contains("the replicas do not hold its claim") || out.contains("listening on")
        },
    );
    // The primary dies; the Sentinels promote the stalled replica.
    let killed = if primary == servers(&["port", "primary"]) {
        "primary"
    } else {
        "replica"
    };
    servers(&["kill", killed]);
    struct Again(&'static str);
    impl Drop for Again {
        fn drop(&mut self) {
            // Back as a replica of the new primary (the Sentinels reconfigure it).
            servers(&["start-one", self.0]);
        }
    }
    let _again = Again(killed);
    servers(&["wait-primary", &replica]);
    cli(&replica, &["CLIENT", "UNPAUSE"]);
    let a_addr = a.ready(Duration::from_secs(60));
    let mut ca = common::Client::new(a_addr, Duration::from_secs(1));
    let mut from_a = Vec::new();
    let mut b = node(db.path(), &url, &prefix, "4", &FLEET_LAYOUT);
    let mut cb = common::Client::new(b.addr(), Duration::from_secs(1));
    let mut from_b = Vec::new();
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(8) {
        from_a0.extend(held::take(&mut c0, 100));
        from_a.extend(held::take(&mut ca, 100));
        from_b.extend(held::take(&mut cb, 100));
    }
    assert!(
        !from_a.is_empty() && !from_b.is_empty(),
        "A {}, B {}",
        from_a.len(),
        from_b.len()
    );
    let out_a0 = a0.output();
    eprintln!(
        "redis failover: A0 {} IDs, A {} IDs, B {} IDs; A0 said: {}",
        from_a0.len(),
        from_a.len(),
        from_b.len(),
        out_a0
            .lines()
            .filter(|l| l.contains("WARN") || l.contains("ERROR") || l.contains("new worker id"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    assert_eq!(
        held::duplicates(&[from_a0, from_a, from_b]),
        0,
        "duplicate IDs"
    );
    let out_a = a.output();
    assert!(
        out_a.contains("the replicas do not hold its claim")
            && out_a.contains("--accept-async-replication uses it at once"),
        "A's refusal names the replicas and the flag: {out_a}"
    );
    b.kill();
    a.kill();
    a0.kill();
}

/// A node frozen past its TTL is fenced before another node can take its id (see
/// `held::frozen`).
#[test]
#[ignore = "needs the Redis servers .ci/run starts (RINGFLAKE_REDIS_DIR)"]
fn a_node_frozen_past_its_ttl_is_fenced_before_its_id_is_taken_and_heals() {
    let _turn = turn();
    let prefix = fresh_prefix("frozen");
    let url = sentinel_url();
    let start = |dir: &Path| node(dir, &url, &prefix, "4", &FROZEN_LAYOUT);
    held::frozen(&start, Duration::from_secs(4));
}

/// The standalone server frozen (SIGSTOP) for 40 s under load: a node whose TTL (150 s) and
/// lease window (120 s) outlast the outage answers every request.
#[test]
#[ignore = "needs the Redis servers .ci/run starts (RINGFLAKE_REDIS_DIR)"]
fn a_40_s_outage_fails_no_request_while_the_lease_holds() {
    let _turn = turn();
    let prefix = fresh_prefix("outage");
    let dir = tempfile::tempdir().unwrap();
    let n = node(
        dir.path(),
        &standalone_url(),
        &prefix,
        "150",
        &["--lease-window", "120"],
    );
    struct Thaw;
    impl Drop for Thaw {
        fn drop(&mut self) {
            servers(&["signal", "standalone", "CONT"]);
        }
    }
    let _thaw = Thaw;
    let served = held::outage(
        &n,
        40,
        || {
            servers(&["signal", "standalone", "STOP"]);
        },
        || {
            servers(&["signal", "standalone", "CONT"]);
        },
    );
    eprintln!("redis outage: {served} requests answered, none failed");
}

/// What the hostile cases say: nobody listening, TLS to a server without it, a wrong password,
/// a user that may not run WAIT (as on a managed service), a key another program wrote under
/// the prefix (left as it was).
#[test]
#[ignore = "needs the Redis servers .ci/run starts (RINGFLAKE_REDIS_DIR)"]
fn hostile_stores_get_clear_errors_and_no_id() {
    let _turn = turn();
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| held::gen_in(dir.path(), args);
    let refused = |args: &[&str]| held::gen_refused(dir.path(), args);
    let e = refused(&["--redis", "redis://127.0.0.1:1"]);
    assert!(e.contains("redis://127.0.0.1:1/"), "{e}");
    let port = servers(&["port", "standalone"]);
    let e = refused(&["--redis", &format!("rediss://127.0.0.1:{port}")]);
    assert!(e.contains(&format!("rediss://127.0.0.1:{port}")), "{e}");
    // ACL users on the primary the Sentinels name: one with a password, one without WAIT.
    let primary = servers(&["primary"]);
    assert_eq!(
        cli(
            &primary,
            &["ACL", "SETUSER", "ids", "on", ">ids-pw", "~*", "+@all"]
        ),
        "OK"
    );
    assert_eq!(
        cli(
            &primary,
            &[
                "ACL",
                "SETUSER",
                "nowait",
                "on",
                ">nowait-pw",
                "~*",
                "+@all",
                "-wait"
            ]
        ),
        "OK"
    );
    let at = |user: &str| format!("redis://{user}@127.0.0.1:{primary}/0");
    let e = refused(&["--redis", &at("ids:wrong-pw")]);
    assert!(e.contains("wrong user or password"), "{e}");
    assert!(!e.contains("wrong-pw"), "{e}");
    let prefix = fresh_prefix("nowait");
    let e = refused(&[
        "--redis",
        &at("nowait:nowait-pw"),
        "--redis-prefix",
        &prefix,
    ]);
    assert!(
        e.contains("WAIT") && e.contains("--accept-async-replication"),
        "{e}"
    );
    let out = run(&[
        "--redis",
        &at("nowait:nowait-pw"),
        "--redis-prefix",
        &prefix,
        "--accept-async-replication",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A field of the reach hash another program wrote: refused, and left as it was.
    let prefix = fresh_prefix("foreign");
    let hash = format!("{prefix}reach");
    cli(&primary, &["HSET", &hash, "3", "owner=billing"]);
    let e = refused(&["--redis", &sentinel_url(), "--redis-prefix", &prefix]);
    assert!(
        e.contains("was not written by ringflake") && e.contains(&hash),
        "{e}"
    );
    assert_eq!(cli(&primary, &["HGET", &hash, "3"]), "owner=billing");
}

/// A start refused after its claim releases the Redis key at once: nobody holds the id, which
/// is free again without waiting out the TTL (see `held::a_refused_claim_is_given_back`).
#[test]
#[ignore = "needs the servers .ci/run starts (RINGFLAKE_REDIS_DIR)"]
fn a_start_refused_after_its_claim_gives_the_id_back_at_once() {
    let _turn = turn();
    let assigner = ringflake::RedisAssigner::new(&standalone_url())
        .unwrap()
        .prefix(&fresh_prefix("refused"))
        .ttl(Duration::from_secs(60));
    held::a_refused_claim_is_given_back(&assigner, &|| assigner.list().unwrap());
}
