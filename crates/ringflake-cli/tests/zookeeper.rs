//! Worker ids from a real ZooKeeper ensemble (feature `zookeeper`), in Meituan Leaf's znodes.
//!
//! `#[ignore]`d: they need the three-node ensemble `.ci/run` starts (scripts/zk-ensemble.sh,
//! Debian's zookeeper 3.8): its connect string in `RINGFLAKE_ZK_ENSEMBLE`
//! (`127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183`) and its directory in `RINGFLAKE_ZK_DIR` (the
//! tests kill and restart its nodes), and a Python with kazoo in `RINGFLAKE_LEAF_PYTHON` (Leaf's
//! holder, `tests/python/leaf_holder.py`). Each test works under a `leaf.name` of its own; they
//! take turns (one lock), as some of them stop the ensemble's nodes.

mod common;

use ringflake::{CachedUidGenerator, Layout, WorkerIdAssigner, ZooKeeperAssigner};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One test at a time: some stop the ensemble's nodes.
static ENSEMBLE: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ENSEMBLE.lock().unwrap_or_else(|e| e.into_inner())
}

fn ensemble() -> String {
    std::env::var("RINGFLAKE_ZK_ENSEMBLE")
        .expect("RINGFLAKE_ZK_ENSEMBLE: the ensemble's connect string (.ci/run starts one)")
}

fn python() -> String {
    std::env::var("RINGFLAKE_LEAF_PYTHON")
        .expect("RINGFLAKE_LEAF_PYTHON: a Python with kazoo (.ci/run makes a venv)")
}

/// A Leaf node (`tests/python/leaf_holder.py hold`): killed when dropped.
struct LeafNode {
    child: Child,
    worker_id: u64,
    /// IDs it made with Leaf's generator (`LEAF_IDS`), if asked.
    ids: Vec<u64>,
}

impl LeafNode {
    fn start(name: &str, port: u16) -> LeafNode {
        LeafNode::with_clock(name, port, 0)
    }

    /// A Leaf node whose wall clock is `offset_ms` off.
    fn with_clock(name: &str, port: u16, offset_ms: i64) -> LeafNode {
        LeafNode::launch(name, port, offset_ms, 0)
    }

    /// A Leaf node that also makes `ids` IDs with Leaf's `SnowflakeIDGenImpl`.
    fn making_ids(name: &str, port: u16, ids: usize) -> LeafNode {
        LeafNode::launch(name, port, 0, ids)
    }

    fn launch(name: &str, port: u16, offset_ms: i64, ids: usize) -> LeafNode {
        let script = format!("{}/tests/python/leaf_holder.py", env!("CARGO_MANIFEST_DIR"));
        let mut child = Command::new(python())
            .env("LEAF_CLOCK_OFFSET_MS", offset_ms.to_string())
            .env(
                "LEAF_IDS",
                if ids > 0 {
                    ids.to_string()
                } else {
                    String::new()
                },
            )
            .args([
                &script,
                "hold",
                &ensemble(),
                name,
                "127.0.0.1",
                &port.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the Leaf holder");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let worker_id = line
            .trim()
            .strip_prefix("workerID=")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the Leaf holder said {line:?}"));
        let mut made = Vec::new();
        if ids > 0 {
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            made = line
                .trim()
                .strip_prefix("ids=")
                .unwrap_or_else(|| panic!("the Leaf holder said {line:?}"))
                .split(',')
                .map(|id| id.parse().expect("an ID"))
                .collect();
            assert_eq!(made.len(), ids);
        }
        LeafNode {
            child,
            worker_id,
            ids: made,
        }
    }
}

impl Drop for LeafNode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every child of forever read as Leaf reads it (`leaf_holder.py check`): `(id, ip:port)`.
fn leaf_reads(name: &str) -> Vec<(u64, String)> {
    let script = format!("{}/tests/python/leaf_holder.py", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python())
        .args([&script, "check", &ensemble(), name])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Leaf cannot read the znodes: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Vec<(u64, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (id, addr) = l.split_once(' ').unwrap();
            (id.parse().unwrap(), addr.to_string())
        })
        .collect();
    v.sort();
    v
}

/// A `leaf.name` no other test (or earlier run) used.
fn fresh_name(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    // No `-`: Leaf splits the whole path of a new znode on it (`newNode.split("-")`).
    format!("{what}_{}_{nanos}", std::process::id())
}

fn assigner(name: &str, port: u16) -> ZooKeeperAssigner {
    ZooKeeperAssigner::new(&ensemble(), name)
        .unwrap()
        .address("127.0.0.1", port)
        .session_timeout(Duration::from_secs(4))
}

/// The ZooKeeper flags refuse what cannot work, at once and without connecting.
#[test]
fn zookeeper_flags_refuse_what_cannot_work() {
    let dir = tempfile::tempdir().unwrap();
    let fails = |args: &[&str], says: &str| {
        let out = common::output_within(
            {
                let mut c = common::ringflake(dir.path());
                c.args(args);
                c
            },
            Duration::from_secs(20),
        );
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    let zk = ["--zookeeper", "127.0.0.1:1"];
    fails(&["gen", zk[0], zk[1]], "needs --zookeeper-name");
    fails(
        &["gen", "--zookeeper-name", "ids"],
        "--zookeeper-name needs --zookeeper",
    );
    fails(
        &[
            "gen",
            zk[0],
            zk[1],
            "--zookeeper-name",
            "ids",
            "--db",
            "w.db",
        ],
        "got --db and --zookeeper",
    );
    fails(
        &[
            "workers",
            zk[0],
            zk[1],
            "--zookeeper-name",
            "ids",
            "--mysql",
            "mysql://u@h/d",
        ],
        "--zookeeper and --mysql exclude each other",
    );
    fails(
        &[
            "gen",
            zk[0],
            zk[1],
            "--zookeeper-name",
            "ids",
            "--zookeeper-address",
            "10.1.2.3",
        ],
        "expected IP:PORT",
    );
    fails(
        &[
            "gen",
            zk[0],
            zk[1],
            "--zookeeper-name",
            "a/b",
            "--zookeeper-address",
            "10.1.2.3:80",
        ],
        "without /",
    );
    fails(
        &["gen", zk[0], zk[1], "--zookeeper-name", "ids"],
        "needs this node's port",
    );
    fails(
        &[
            "gen",
            zk[0],
            zk[1],
            "--zookeeper-name",
            "ids",
            "--no-recycle",
        ],
        "--no-recycle is for a worker table",
    );
}

/// Leaf's rules: a new ip:port gets the next sequence, a restart on the same ip:port keeps its
/// id (and starts above what it issued), and the znodes are Leaf's.
#[test]
#[ignore = "needs the ZooKeeper ensemble .ci/run starts (RINGFLAKE_ZK_ENSEMBLE)"]
fn restarts_keep_their_id_and_new_addresses_get_the_next_sequence() {
    let _turn = turn();
    let name = fresh_name("restart");
    let layout = Layout::default();
    let a = assigner(&name, 19020);
    let first = CachedUidGenerator::builder(layout)
        .worker_id_from(&a)
        .build()
        .unwrap();
    let id_a = first.worker_id();
    assert_eq!(
        id_a, 0,
        "the first child of a new forever path is sequence 0"
    );
    let last = first.next_id().unwrap();
    let b = assigner(&name, 19021);
    let other = CachedUidGenerator::builder(layout)
        .worker_id_from(&b)
        .build()
        .unwrap();
    assert_eq!(other.worker_id(), 1);
    drop(first);
    let again = CachedUidGenerator::builder(layout)
        .worker_id_from(&a)
        .build()
        .unwrap();
    assert_eq!(again.worker_id(), id_a, "the same ip:port keeps its id");
    assert!(again.next_id().unwrap() > last);
    let listed = a.list().unwrap();
    let names: Vec<(u64, &str, bool, bool)> = listed
        .iter()
        .map(|w| (w.worker_id, w.address.as_str(), w.ringflake, w.live))
        .collect();
    assert_eq!(
        names,
        [
            (0, "127.0.0.1:19020", true, true),
            (1, "127.0.0.1:19021", true, true)
        ]
    );
    assert!(listed.iter().all(|w| w.leaf_timestamp_ms.is_some()));
    drop(again);
    drop(other);
    let listed = a.list().unwrap();
    assert!(listed.iter().all(|w| !w.live), "{listed:?}");
    // `ringflake workers --zookeeper` lists them.
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = common::ringflake(dir.path());
    cmd.args([
        "workers",
        "--zookeeper",
        &ensemble(),
        "--zookeeper-name",
        &name,
    ]);
    let out = common::output_within(cmd, Duration::from_secs(30));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.starts_with("ID  ADDRESS"), "{text}");
    assert!(
        text.contains("0   127.0.0.1:19020  ringflake  no"),
        "{text}"
    );
    assert!(text.contains("2 ids in zookeeper "), "{text}");
}

/// A process following Leaf's holder step by step shares the path with ringflake nodes: they
/// never hold the same worker id; a Leaf restart keeps its id; a ringflake node on a live Leaf
/// node's ip:port does not take its id, and takes it over in place once the Leaf node is gone,
/// above its last timestamp; Leaf reads every znode ringflake wrote.
#[test]
#[ignore = "needs the ZooKeeper ensemble and kazoo .ci/run provides (RINGFLAKE_ZK_ENSEMBLE, RINGFLAKE_LEAF_PYTHON)"]
fn leaf_nodes_and_ringflake_nodes_never_share_a_worker_id() {
    let _turn = turn();
    let name = fresh_name("leaf");
    let layout = Layout::default();
    let leaf1 = LeafNode::start(&name, 18001);
    let r1 = CachedUidGenerator::builder(layout)
        .worker_id_from(&assigner(&name, 19030))
        .build()
        .unwrap();
    let leaf2 = LeafNode::start(&name, 18002);
    let r2 = CachedUidGenerator::builder(layout)
        .worker_id_from(&assigner(&name, 19031))
        .build()
        .unwrap();
    let mut held = vec![
        leaf1.worker_id,
        r1.worker_id(),
        leaf2.worker_id,
        r2.worker_id(),
    ];
    held.sort();
    held.dedup();
    assert_eq!(held.len(), 4, "a worker id held twice: {held:?}");
    assert_eq!(
        leaf_reads(&name),
        [
            (leaf1.worker_id, "127.0.0.1:18001".to_string()),
            (r1.worker_id(), "127.0.0.1:19030".to_string()),
            (leaf2.worker_id, "127.0.0.1:18002".to_string()),
            (r2.worker_id(), "127.0.0.1:19031".to_string()),
        ]
    );
    // Leaf's restart on the same ip:port keeps its id; ringflake's znodes do not trouble it.
    let id1 = leaf1.worker_id;
    drop(leaf1);
    let leaf1 = LeafNode::start(&name, 18001);
    assert_eq!(leaf1.worker_id, id1);
    // A ringflake node configured with a live Leaf node's ip:port does not take its id.
    let started = Instant::now();
    let e = assigner(&name, 18002)
        .retry_for(Duration::from_secs(3))
        .assign_worker_id(&layout)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("a Leaf node may still be serving it"),
        "{e}"
    );
    assert!(started.elapsed() >= Duration::from_secs(3));
    // Nor that of a live Leaf node whose clock is a minute behind (its timestamps look old):
    // the znode has not stood still.
    let slow = LeafNode::with_clock(&name, 18003, -60_000);
    let e = assigner(&name, 18003)
        .retry_for(Duration::from_secs(4))
        .assign_worker_id(&layout)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("a Leaf node may still be serving it"),
        "{e}"
    );
    drop(slow);
    // Once the Leaf node is gone (its timestamp stands still for 10 s), a ringflake node on its
    // ip:port takes its id over in place, as a Leaf restart would, above its last timestamp.
    let id2 = leaf2.worker_id;
    drop(leaf2);
    let gone = common::unix_now();
    let replaced = CachedUidGenerator::builder(layout)
        .worker_id_from(&assigner(&name, 18002).retry_for(Duration::from_secs(20)))
        .build()
        .unwrap();
    assert_eq!(replaced.worker_id(), id2);
    let first = replaced.next_id().unwrap();
    let second = layout.epoch_seconds() + layout.decompose(first).unwrap().delta_seconds as i64;
    assert!(second as f64 > gone, "{second} vs {gone}");
    assert_eq!(leaf_reads(&name).len(), 5);
    drop(leaf1);
}

/// Each ID as Leaf's `decodeSnowflakeId` reads it (`leaf_holder.py decode`): `(unix ms, worker
/// id, sequence)`.
fn leaf_decodes(ids: &[u64]) -> Vec<(i64, u64, u64)> {
    let script = format!("{}/tests/python/leaf_holder.py", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python())
        .arg(&script)
        .arg("decode")
        .args(ids.iter().map(u64::to_string))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Leaf cannot decode: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

/// A mixed fleet on one path, both sides on Leaf's layout (`Layout::leaf()`, `--layout leaf`):
/// a Leaf node's IDs (made by Leaf's own generator with the worker id ZooKeeper gave it) decode
/// with ringflake's preset to that worker id and their millisecond, and a ringflake node's IDs
/// (worker id from the same path) decode with Leaf's `decodeSnowflakeId` to its worker id and
/// millisecond; no ID is made by both.
#[test]
#[ignore = "needs the ZooKeeper ensemble and kazoo .ci/run provides (RINGFLAKE_ZK_ENSEMBLE, RINGFLAKE_LEAF_PYTHON)"]
fn leaf_ids_and_ringflake_ids_decode_on_the_other_side() {
    let _turn = turn();
    let name = fresh_name("decode");
    let layout = Layout::leaf();
    let before = (common::unix_now() * 1000.0) as i64;
    let leaf = LeafNode::making_ids(&name, 18011, 2000);
    let r = CachedUidGenerator::builder(layout)
        .worker_id_from(&assigner(&name, 19032))
        .build()
        .unwrap();
    assert_ne!(r.worker_id(), leaf.worker_id);
    let mut ours = vec![0u64; 2000];
    r.next_ids(&mut ours).unwrap();
    let after = (common::unix_now() * 1000.0) as i64 + 1;

    // Leaf's IDs, read by ringflake's preset.
    for &id in &leaf.ids {
        let p = layout.parse(id).unwrap();
        assert_eq!(p.worker_id, leaf.worker_id, "{id}");
        assert!((before..=after).contains(&p.unix_millis), "{id}: {p:?}");
    }
    // ringflake's IDs, read by Leaf's decodeSnowflakeId.
    for ((millis, worker, seq), &id) in leaf_decodes(&ours).into_iter().zip(&ours) {
        let p = layout.parse(id).unwrap();
        assert_eq!(worker, r.worker_id(), "{id}");
        assert_eq!((millis, seq), (p.unix_millis, p.sequence), "{id}");
        assert!(
            (before..=after + LEAD_MS).contains(&millis),
            "{id}: {millis}"
        );
    }
    let mut all: Vec<u64> = leaf.ids.iter().chain(&ours).copied().collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 4000, "an ID made by both");
}

/// How far ahead of the clock a ringflake generator may borrow (its default lead cap, 10 s).
const LEAD_MS: i64 = 10_000;

/// `scripts/zk-ensemble.sh CMD DIR [N]` on the test ensemble.
fn ensemble_ctl(args: &[&str]) -> String {
    let dir = std::env::var("RINGFLAKE_ZK_DIR")
        .expect("RINGFLAKE_ZK_DIR: the ensemble's directory (.ci/run starts one)");
    let script = format!(
        "{}/../../scripts/zk-ensemble.sh",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut cmd = Command::new("bash");
    cmd.arg(script).arg(args[0]).arg(dir).args(&args[1..]);
    let out = common::output_within(cmd, Duration::from_secs(90));
    assert!(
        out.status.success(),
        "zk-ensemble.sh {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Starts ensemble node N again when dropped, and waits until the ensemble serves.
struct Restart(String);

impl Drop for Restart {
    fn drop(&mut self) {
        ensemble_ctl(&["start-node", &self.0]);
        ensemble_ctl(&["wait"]);
    }
}

/// A `ringflake serve` on `port` with worker ids from the ensemble (its address `127.0.0.1:port`,
/// named by `--zookeeper-address`), in `dir` (its state file there).
fn serve_node(dir: &std::path::Path, name: &str, port: u16, extra: &[&str]) -> common::Serve {
    let address = format!("127.0.0.1:{port}");
    let mut s = common::Serve::launch_command(zk_serve(dir, name, &address, &address, extra));
    s.ready(Duration::from_secs(60));
    s
}

/// `ringflake serve --listen LISTEN` in `dir` with worker ids from the ensemble under `name`, as
/// the node `address` (`--zookeeper-address`), plus `extra`.
fn zk_serve(
    dir: &std::path::Path,
    name: &str,
    listen: &str,
    address: &str,
    extra: &[&str],
) -> Command {
    let mut cmd = common::ringflake(dir);
    cmd.args([
        "serve",
        "--listen",
        listen,
        "--zookeeper",
        &ensemble(),
        "--zookeeper-name",
        name,
        "--zookeeper-session-timeout",
        "4",
        // Named, not found: Leaf's rule takes the host's first non-loopback IPv4 address, which
        // a CI machine may not have.
        "--zookeeper-address",
        address,
    ])
    .args(extra);
    cmd
}

/// IDs from `/ids?count=N` of `port`, nothing if it does not answer 200.
fn take(client: &mut common::Client, n: usize) -> Vec<u64> {
    match client.get(&format!("/ids?count={n}")) {
        Ok(r) if r.status == 200 => common::json_ids(&r.body),
        Ok(_) => Vec::new(),
        Err(_) => {
            client.reset();
            Vec::new()
        }
    }
}

/// The layout of the fleet test: 4 worker bits (ids 0 to 15), fewer than the addresses the fleet
/// boots on, so that ids are recycled.
const FLEET_LAYOUT: [&str; 6] = [
    "--time-bits",
    "34",
    "--worker-bits",
    "4",
    "--seq-bits",
    "25",
];

/// Six `serve` nodes under load, one of them killed with SIGKILL every 1.5 s and started again on
/// another of its three ports (a restart on an ip:port seen before takes its id back; a new one
/// takes a new id, and once Leaf's sequence has passed the layout's 15, a gone holder's id),
/// while the ensemble's leader is killed and started again twice: every ID is distinct.
#[test]
#[ignore = "needs the ZooKeeper ensemble .ci/run starts (RINGFLAKE_ZK_ENSEMBLE, RINGFLAKE_ZK_DIR)"]
fn a_fleet_under_kill_9_churn_and_leader_failover_hands_out_no_id_twice() {
    use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
    let _turn = turn();
    let name = fresh_name("fleet");
    const NODES: usize = 6;
    const SECS: u64 = 30;
    let port_of = |slot: usize, round: usize| 19020 + (slot + NODES * (round % 3)) as u16;
    let dirs: Vec<tempfile::TempDir> = (0..NODES).map(|_| tempfile::tempdir().unwrap()).collect();
    let current: Vec<AtomicU16> = (0..NODES).map(|i| AtomicU16::new(port_of(i, 0))).collect();
    let nodes: Vec<Mutex<Option<common::Serve>>> = (0..NODES)
        .map(|i| {
            Mutex::new(Some(serve_node(
                dirs[i].path(),
                &name,
                port_of(i, 0),
                &FLEET_LAYOUT,
            )))
        })
        .collect();
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let (ids, boots, slowest, leader_kills) = std::thread::scope(|s| {
        let takers: Vec<_> = current
            .iter()
            .map(|port| {
                let stop = &stop;
                s.spawn(move || {
                    let mut got = Vec::new();
                    let mut at = 0;
                    let mut client = None;
                    while !stop.load(Ordering::Relaxed) {
                        let now = port.load(Ordering::Relaxed);
                        if now != at {
                            at = now;
                            let addr = format!("127.0.0.1:{at}").parse().unwrap();
                            client = Some(common::Client::new(addr, Duration::from_secs(2)));
                        }
                        if let Some(c) = client.as_mut() {
                            got.extend(take(c, 100));
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    got
                })
            })
            .collect();
        let churn = s.spawn(|| {
            let (mut boots, mut slowest) = (0, Duration::ZERO);
            let mut n = 0usize;
            // Until the time is up and more addresses booted than the layout has ids (the
            // recycling this test is for), however slow the boots during a leader kill.
            while start.elapsed() < Duration::from_secs(SECS - 5) || boots + NODES <= 16 {
                std::thread::sleep(Duration::from_millis(1500));
                let (slot, round) = (n % NODES, n / NODES + 1);
                n += 1;
                let mut held = nodes[slot].lock().unwrap();
                if let Some(mut old) = held.take() {
                    old.kill();
                }
                let port = port_of(slot, round);
                let booted = Instant::now();
                *held = Some(serve_node(dirs[slot].path(), &name, port, &FLEET_LAYOUT));
                slowest = slowest.max(booted.elapsed());
                current[slot].store(port, Ordering::Relaxed);
                boots += 1;
            }
            (boots, slowest)
        });
        let leaders = s.spawn(|| {
            let mut kills = 0;
            for _ in 0..2 {
                std::thread::sleep(Duration::from_secs(5));
                ensemble_ctl(&["wait"]);
                let leader = ensemble_ctl(&["leader"]);
                // Started again even if this test fails meanwhile: the next tests need it.
                let _restart = Restart(leader.clone());
                ensemble_ctl(&["kill-node", &leader]);
                kills += 1;
                std::thread::sleep(Duration::from_secs(4));
            }
            kills
        });
        let (boots, slowest) = churn.join().unwrap();
        let leader_kills = leaders.join().unwrap();
        while start.elapsed() < Duration::from_secs(SECS) {
            std::thread::sleep(Duration::from_millis(100));
        }
        stop.store(true, Ordering::Relaxed);
        let ids: Vec<Vec<u64>> = takers.into_iter().map(|t| t.join().unwrap()).collect();
        (ids, boots, slowest, leader_kills)
    });
    drop(nodes);
    let per_node: Vec<usize> = ids.iter().map(Vec::len).collect();
    let mut all: Vec<u64> = ids.into_iter().flatten().collect();
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    eprintln!(
        "fleet: {boots} restarts after SIGKILL (slowest boot {slowest:?}), {leader_kills} leaders \
         killed, {total} IDs {per_node:?}, {} duplicates, {:?} in all",
        total - all.len(),
        start.elapsed()
    );
    assert_eq!(all.len(), total, "duplicate IDs");
    assert!(
        per_node.iter().all(|&n| n > 0),
        "a node served nothing: {per_node:?}"
    );
    assert!(boots >= 8, "{boots} restarts");
    assert_eq!(leader_kills, 2);
    // More addresses booted than the layout has ids: the ids of gone holders were recycled (the
    // forever znodes renamed), and no two znodes name the same id.
    let listed = ZooKeeperAssigner::new(&ensemble(), &name)
        .unwrap()
        .list()
        .unwrap();
    assert!(boots + NODES > 16, "{boots} restarts recycle nothing");
    assert!(listed.len() <= 16, "{listed:?}");
    let mut ids: Vec<u64> = listed.iter().map(|w| w.worker_id).collect();
    ids.dedup();
    assert_eq!(ids.len(), listed.len(), "{listed:?}");
}

/// The pids of the ensemble's nodes.
fn ensemble_pids() -> Vec<u32> {
    let dir = std::env::var("RINGFLAKE_ZK_DIR").expect("RINGFLAKE_ZK_DIR");
    (1..=3)
        .filter_map(|n| std::fs::read_to_string(format!("{dir}/zk{n}/pid")).ok())
        .filter_map(|p| p.trim().parse().ok())
        .collect()
}

/// A node frozen (SIGSTOP) past its session timeout loses its id to another node, which starts
/// above the frozen node's reach; thawed, it serves none of its ring's IDs once the keeper has
/// looked (about a second), none of its IDs equals the other's, and it heals: once the other
/// stops, it takes the id again and serves above the other's IDs.
#[test]
#[ignore = "needs the ZooKeeper ensemble .ci/run starts (RINGFLAKE_ZK_ENSEMBLE)"]
fn a_node_frozen_past_its_session_timeout_is_fenced_and_heals() {
    let _turn = turn();
    let name = fresh_name("frozen");
    // A, C and B, in the order `held::frozen` starts them, each on a port (and address) of its
    // own.
    let next = std::sync::atomic::AtomicU16::new(19033);
    let start = |dir: &std::path::Path| {
        let port = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        serve_node(dir, &name, port, &common::held::FROZEN_LAYOUT)
    };
    common::held::frozen(&start, Duration::from_secs(4));
}

/// A node cut off from the ensemble (every server frozen) stops serving a third of its session
/// timeout after its newest answered call (1.33 s of 4 s, plus up to the keeper's look), before
/// the session can expire, says so (`/healthz`, `/status`, `ringflake_lease_fenced`), and
/// serves again once the ensemble is back.
#[test]
#[ignore = "needs the ZooKeeper ensemble .ci/run starts (RINGFLAKE_ZK_ENSEMBLE, RINGFLAKE_ZK_DIR)"]
fn a_node_cut_off_from_the_ensemble_stops_before_its_session_can_expire() {
    let _turn = turn();
    let name = fresh_name("cutoff");
    let dir = tempfile::tempdir().unwrap();
    let _a = serve_node(dir.path(), &name, 19036, &[]);
    let mut client =
        common::Client::new("127.0.0.1:19036".parse().unwrap(), Duration::from_secs(1));
    assert!(!take(&mut client, 10).is_empty());
    let pids = ensemble_pids();
    assert_eq!(pids.len(), 3);
    struct Thaw(Vec<u32>);
    impl Drop for Thaw {
        fn drop(&mut self) {
            for &p in &self.0 {
                common::signal(p, "CONT");
            }
        }
    }
    for &p in &pids {
        common::signal(p, "STOP");
    }
    let thaw = Thaw(pids);
    let cut = Instant::now();
    let mut stopped = None;
    while cut.elapsed() < Duration::from_secs(6) {
        if take(&mut client, 10).is_empty() {
            stopped = Some(cut.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Said: /healthz answers 503 naming the fence, /status shows it.
    let addr = "127.0.0.1:19036".parse().unwrap();
    let health = common::Client::new(addr, Duration::from_secs(2)).get("/healthz");
    let status = common::Client::new(addr, Duration::from_secs(2)).get("/status");
    // And the series (sampled once a second) for an alert.
    let fenced_series = r#"ringflake_lease_fenced{generator="ringflake"} 1"#;
    let mut metrics = String::new();
    let look = Instant::now();
    while !metrics.contains(fenced_series) && look.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(100));
        if let Ok(reply) = common::Client::new(addr, Duration::from_secs(2)).get("/metrics") {
            metrics = reply.body;
        }
    }
    drop(thaw);
    let stopped = stopped.expect("the node served on for 6 s cut off from the ensemble");
    let health = health.unwrap();
    assert_eq!(health.status, 503, "{}", health.body);
    assert!(health.body.contains("fenced"), "{}", health.body);
    assert!(status.unwrap().body.contains("\"lease_fenced\":true"));
    assert!(metrics.contains(fenced_series), "{metrics}");
    eprintln!("cut off: stopped serving {stopped:?} after the ensemble froze");
    assert!(
        stopped >= Duration::from_millis(900),
        "stopped after {stopped:?}: too early"
    );
    assert!(
        stopped < Duration::from_secs(4),
        "stopped after {stopped:?}: its session may have expired"
    );
    ensemble_ctl(&["wait"]);
    common::wait_until("serving again", Duration::from_secs(30), || {
        !take(&mut client, 10).is_empty()
    });
    common::wait_until("the series back at 0", Duration::from_secs(5), || {
        common::Client::new(addr, Duration::from_secs(2))
            .get("/metrics")
            .is_ok_and(|r| {
                r.body
                    .contains(r#"ringflake_lease_fenced{generator="ringflake"} 0"#)
            })
    });
}

/// A copy of a live node's state directory never serves the live node's worker id: the id is
/// held by the live node's session, which no file carries. Started on another port (a copy on
/// the same host), the copy takes a new id; given the live node's `ip:port` (a clone, which keeps
/// the original's address), it waits, says another live node with this address serves the id
/// (its reach moves), and refuses to start once `--db-retry` has passed. No ID comes from two
/// nodes.
#[test]
#[ignore = "needs the ZooKeeper ensemble .ci/run starts (RINGFLAKE_ZK_ENSEMBLE)"]
fn a_copied_state_directory_never_serves_the_live_nodes_id() {
    let _turn = turn();
    let name = fresh_name("copied");
    let (da, db, dc) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let worker = |addr: std::net::SocketAddr| {
        let health = common::get(addr, "/healthz");
        common::json_int(&health.body, "worker_id").expect("a worker id")
    };
    // Nodes named 127.0.0.1:18120 and :18121 (names only: they listen on ports of their own).
    let node = |dir: &std::path::Path, address: &str| {
        let mut s =
            common::Serve::launch_command(zk_serve(dir, &name, "127.0.0.1:0", address, &[]));
        s.ready(Duration::from_secs(60));
        s
    };
    let a = node(da.path(), "127.0.0.1:18120");
    for to in [db.path(), dc.path()] {
        for entry in std::fs::read_dir(da.path()).unwrap() {
            let from = entry.unwrap().path();
            std::fs::copy(&from, to.join(from.file_name().unwrap())).unwrap();
        }
    }
    let b = node(db.path(), "127.0.0.1:18121");
    let (a_addr, b_addr) = (a.addr(), b.addr());
    assert_ne!(worker(a_addr), worker(b_addr), "{}", b.output());
    // The clone: the live node's address, another listener.
    let cmd = zk_serve(
        dc.path(),
        &name,
        "127.0.0.1:0",
        "127.0.0.1:18120",
        &["--db-retry", "8"],
    );
    let collectors: Vec<_> = [a_addr, b_addr]
        .into_iter()
        .map(|addr| {
            std::thread::spawn(move || {
                common::ids_for(addr, "/ids?count=1000", Duration::from_secs(3))
            })
        })
        .collect();
    let out = common::refused(cmd);
    let ids: Vec<Vec<u64>> = collectors.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(
        out.contains(
            "worker id 0 of 127.0.0.1:18120 is served by another live node with this address"
        ),
        "{out}"
    );
    assert!(
        ids.iter().all(|i| i.len() > 1000),
        "IDs: {:?}",
        ids.iter().map(Vec::len)
    );
    assert_eq!(common::in_both(&ids[0], &ids[1]), 0, "IDs from both");
    assert_eq!(worker(a_addr), 0, "the live node keeps its id");
}
