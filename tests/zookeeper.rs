//! Worker ids from a real ZooKeeper ensemble (feature `zookeeper`), in Meituan Leaf's znodes.
//!
//! `#[ignore]`d: they need the three-node ensemble `.ci/run` starts (scripts/zk-ensemble.sh,
//! Debian's zookeeper 3.8) and its connect string in `RINGFLAKE_ZOOKEEPER`
//! (`127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183`); each test works under a `leaf.name` of its
//! own.
#![cfg(feature = "zookeeper")]

use ringflake::{CachedUidGenerator, Layout, WorkerIdAssigner, ZooKeeperAssigner};
use std::time::Duration;

fn ensemble() -> String {
    std::env::var("RINGFLAKE_ZOOKEEPER")
        .expect("RINGFLAKE_ZOOKEEPER: the ensemble's connect string (.ci/run starts one)")
}

/// A `leaf.name` no other test (or earlier run) used.
fn fresh_name(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{what}-{}-{nanos}", std::process::id())
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
