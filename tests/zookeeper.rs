//! Worker ids from a real ZooKeeper ensemble (feature `zookeeper`), in Meituan Leaf's znodes.
//!
//! `#[ignore]`d: they need the three-node ensemble `.ci/run` starts (scripts/zk-ensemble.sh,
//! Debian's zookeeper 3.8): its connect string in `RINGFLAKE_ZK_ENSEMBLE`
//! (`127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183`) and its directory in `RINGFLAKE_ZK_DIR` (the
//! tests kill and restart its nodes), and a Python with kazoo in `RINGFLAKE_LEAF_PYTHON` (Leaf's
//! holder, `tests/python/leaf_holder.py`). Each test works under a `leaf.name` of its own; they
//! take turns (one lock), as some of them stop the ensemble's nodes.
#![cfg(feature = "zookeeper")]

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
}

impl LeafNode {
    fn start(name: &str, port: u16) -> LeafNode {
        let script = format!("{}/tests/python/leaf_holder.py", env!("CARGO_MANIFEST_DIR"));
        let mut child = Command::new(python())
            .args([&script, "hold", &ensemble(), name, "127.0.0.1", &port.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the Leaf holder");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let worker_id = line
            .trim()
            .strip_prefix("workerID=")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the Leaf holder said {line:?}"));
        LeafNode { child, worker_id }
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

/// Leaf's rules: a new ip:port gets the next sequence, a restart on the same ip:port keeps its
/// id (and starts above what it issued), and the znodes are Leaf's.
#[test]
#[ignore = "needs the ZooKeeper ensemble .ci/run starts (RINGFLAKE_ZOOKEEPER)"]
fn restarts_keep_their_id_and_new_addresses_get_the_next_sequence() {
    let _turn = turn();
    let name = fresh_name("restart");
    let layout = Layout::default();
    let a = assigner(&name, 19020);
    let first = CachedUidGenerator::builder(layout).worker_id_from(&a).build().unwrap();
    let id_a = first.worker_id();
    assert_eq!(id_a, 0, "the first child of a new forever path is sequence 0");
    let last = first.next_id().unwrap();
    let b = assigner(&name, 19021);
    let other = CachedUidGenerator::builder(layout).worker_id_from(&b).build().unwrap();
    assert_eq!(other.worker_id(), 1);
    drop(first);
    let again = CachedUidGenerator::builder(layout).worker_id_from(&a).build().unwrap();
    assert_eq!(again.worker_id(), id_a, "the same ip:port keeps its id");
    assert!(again.next_id().unwrap() > last);
    let listed = a.list().unwrap();
    let names: Vec<(u64, &str, bool, bool)> = listed
        .iter()
        .map(|w| (w.worker_id, w.address.as_str(), w.ringflake, w.live))
        .collect();
    assert_eq!(
        names,
        [(0, "127.0.0.1:19020", true, true), (1, "127.0.0.1:19021", true, true)]
    );
    assert!(listed.iter().all(|w| w.leaf_timestamp_ms.is_some()));
    drop(again);
    drop(other);
    let listed = a.list().unwrap();
    assert!(listed.iter().all(|w| !w.live), "{listed:?}");
    let _ = a.assign_worker_id(&layout);
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
    let mut held = vec![leaf1.worker_id, r1.worker_id(), leaf2.worker_id, r2.worker_id()];
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
    assert!(e.to_string().contains("a Leaf node may still be serving it"), "{e}");
    assert!(started.elapsed() >= Duration::from_secs(3));
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
    assert_eq!(leaf_reads(&name).len(), 4);
    drop(leaf1);
}
