//! A node never serves a worker id another live node holds, whatever files it was started with:
//! a copy of a live node's state directory (a cloned VM or volume, a backup restored beside the
//! original or over it) takes a worker id of its own from the shared table, while a restart in
//! place still takes its predecessor's id back at once. Every test runs the real binary, and
//! collects every ID both nodes hand out.
//!
//! A clone on another host is simulated on this one: the copy's owner file is given what a
//! clone's would hold, the inode of its own file (a disk image keeps inode numbers) and the boot
//! id of the host it came from (not this boot's: a clone boots anew). Nothing in the binary
//! knows it is tested: the owner file is a text file the test rewrites, as an operator's copy
//! would.

mod common;

use common::{Serve, get, ids_for, in_both, json_int};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long IDs are collected from the nodes at once.
const COLLECT: Duration = Duration::from_secs(3);

/// The worker id `serve` reports on `/healthz`.
fn worker_of(addr: SocketAddr) -> i64 {
    let health = get(addr, "/healthz");
    json_int(&health.body, "worker_id").unwrap_or_else(|| panic!("no worker id: {}", health.body))
}

/// Directories `a` and `b` beside the shared worker table `shared.db` (one absolute path for
/// every node, so that each names the same table).
fn nodes() -> (tempfile::TempDir, PathBuf, PathBuf, String) {
    let root = tempfile::tempdir().expect("temp dir");
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    std::fs::create_dir(&a).expect("a/");
    std::fs::create_dir(&b).expect("b/");
    let db = root.path().join("shared.db").display().to_string();
    (root, a, b, db)
}

/// Copies every `ringflake.state*` file of `from` (the state file, its owner file and the lock
/// file of its writes, and the segment mode's state directory with its files) into `to`, as a
/// copy of the directory would, while its node runs; the files copied.
fn copy_state(from: &Path, to: &Path) -> Vec<String> {
    let mut copied = Vec::new();
    for entry in std::fs::read_dir(from).expect("read dir") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .to_string();
        if !name.starts_with("ringflake.state") {
            continue;
        }
        let path = from.join(&name);
        if path.is_dir() {
            std::fs::create_dir_all(to.join(&name)).expect("mkdir");
            for inner in std::fs::read_dir(&path).expect("read dir") {
                let inner = inner.expect("entry").file_name();
                std::fs::copy(path.join(&inner), to.join(&name).join(&inner)).expect("copy");
            }
        } else {
            std::fs::copy(&path, to.join(&name)).expect("copy");
        }
        copied.push(name);
    }
    copied.sort();
    assert_eq!(
        copied,
        [
            "ringflake.state",
            "ringflake.state.lock",
            "ringflake.state.owner",
            "ringflake.state.segments"
        ],
        "the state directory"
    );
    copied
}

/// IDs from every node in `addrs` at once, for [`COLLECT`].
fn collect(addrs: &[SocketAddr]) -> Vec<Vec<u64>> {
    let threads: Vec<_> = addrs
        .iter()
        .map(|&addr| std::thread::spawn(move || ids_for(addr, "/ids?count=1000", COLLECT)))
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().expect("collector"))
        .collect()
}

/// No ID twice, within a node or between any two.
fn assert_unique(ids: &[Vec<u64>]) {
    for (i, a) in ids.iter().enumerate() {
        assert!(a.len() > 1000, "node {i} handed out {} IDs", a.len());
        let mut own = a.clone();
        own.sort_unstable();
        own.dedup();
        assert_eq!(own.len(), a.len(), "node {i} handed out an ID twice");
        for (j, b) in ids.iter().enumerate().skip(i + 1) {
            assert_eq!(in_both(a, b), 0, "IDs from both node {i} and node {j}");
        }
    }
}

/// A copy of a live node's state directory on the same host, and a backup of it restored over
/// the original's owner file while the original runs: each starts with a worker id of its own
/// (its owner file is not the one the holder locked), none of their IDs is the original's; and
/// once the original is killed, its restart in place takes its id back at once.
#[test]
fn a_copied_state_directory_takes_a_worker_id_of_its_own() {
    let (root, a, b, db) = nodes();
    let mut first = Serve::start(&a, &["--db", &db]);
    let original = worker_of(first.addr());
    copy_state(&a, &b);
    // A backup of a/, restored over a/ later by replacing the files (a new inode at the path).
    let backup = root.path().join("backup");
    std::fs::create_dir(&backup).expect("backup/");
    copy_state(&a, &backup);
    let copy = Serve::start(&b, &["--db", &db]);
    assert_ne!(worker_of(copy.addr()), original, "{}", copy.output());
    assert!(
        copy.output()
            .contains("not taken back: the owner file is a copy"),
        "{}",
        copy.output()
    );
    for name in ["ringflake.state", "ringflake.state.owner"] {
        let staged = a.join(format!("{name}.restoring"));
        std::fs::copy(backup.join(name), &staged).expect("stage");
        std::fs::rename(&staged, a.join(name)).expect("restore");
    }
    let restored = Serve::start(&a, &["--db", &db]);
    let workers = [original, worker_of(copy.addr()), worker_of(restored.addr())];
    assert!(
        workers[2] != workers[0] && workers[2] != workers[1],
        "worker ids {workers:?}: {}",
        restored.output()
    );
    assert_unique(&collect(&[first.addr(), copy.addr(), restored.addr()]));
    // Both killed, a restart in a/ takes back the row of the file's last holder, the restored
    // node, at once: the same file, on the same boot.
    first.kill();
    drop(restored);
    let again = Serve::start(&a, &["--db", &db]);
    assert_eq!(
        worker_of(again.addr()),
        workers[2],
        "a restart in place keeps its id: {}",
        again.output()
    );
    assert!(
        again
            .output()
            .contains("worker id taken back from the gone predecessor"),
        "{}",
        again.output()
    );
    assert_unique(&collect(&[again.addr(), copy.addr()]));
}

/// A clone on another host (simulated: the copy's owner file names its own inode, as a disk
/// image keeps inode numbers, and another boot id, as the host it came from had): it starts
/// with another worker id than the live original, and no ID comes from both.
#[cfg(target_os = "linux")]
#[test]
fn a_clone_with_another_boot_id_takes_a_worker_id_of_its_own() {
    use std::os::unix::fs::MetadataExt as _;
    let (_root, a, b, db) = nodes();
    let first = Serve::start(&a, &["--db", &db]);
    let original = worker_of(first.addr());
    copy_state(&a, &b);
    let owner = b.join("ringflake.state.owner");
    let text = std::fs::read_to_string(&owner).expect("owner file");
    let boot = text
        .lines()
        .find_map(|l| l.strip_prefix("boot_id="))
        .unwrap_or_else(|| panic!("no boot id recorded: {text}"));
    let file = text
        .lines()
        .find_map(|l| l.strip_prefix("file="))
        .unwrap_or_else(|| panic!("no file recorded: {text}"));
    let meta = std::fs::metadata(&owner).expect("metadata");
    let cloned = text
        .replace(boot, "3f0c1b2a-9d8e-4f70-a6b5-c4d3e2f10a99")
        .replace(file, &format!("{}:{}", meta.dev(), meta.ino()));
    // Rewritten in place: the copy keeps its inode, which its record now names.
    std::fs::write(&owner, &cloned).expect("rewrite");
    assert_eq!(
        std::fs::metadata(&owner).expect("metadata").ino(),
        meta.ino()
    );
    let clone = Serve::start(&b, &["--db", &db]);
    assert_ne!(worker_of(clone.addr()), original, "{}", clone.output());
    assert!(
        clone
            .output()
            .contains("not taken back: the owner file was written under another boot id"),
        "{}",
        clone.output()
    );
    assert_unique(&collect(&[first.addr(), clone.addr()]));
}

/// A fixed worker id is held on its state file for the generator's life: beside a running
/// `serve --worker-id 5`, a `gen --worker-id 5` or a second `serve --worker-id 5` in the same
/// directory (the same state file) is refused, naming the worker id and the lock; another
/// worker id is not. (A copy of the directory elsewhere has a state file of its own, and no
/// check can tell it from a node of its own: a fixed id is the operator's promise.)
#[test]
fn a_fixed_worker_id_in_use_on_its_state_file_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = Serve::start(dir.path(), &["--worker-id", "5"]);
    let out = common::ringflake(dir.path())
        .args(["gen", "--worker-id", "5", "-n", "3"])
        .output()
        .expect("gen");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(out.stdout.is_empty(), "gen printed IDs");
    assert!(
        err.contains(
            "worker id 5 is in use: another live generator on this host (in this process or \
             another) runs it with the state file ringflake.state (it holds \
             ringflake.state.worker-5.lock)"
        ),
        "{err}"
    );
    let mut second = common::ringflake(dir.path());
    second.args(["serve", "--listen", "127.0.0.1:0", "--worker-id", "5"]);
    assert!(
        common::refused(second).contains("worker id 5 is in use"),
        "the second serve"
    );
    assert_eq!(
        common::gen_ids(dir.path(), &["gen", "--worker-id", "6", "-n", "2"]).len(),
        2
    );
    assert_eq!(get(first.addr(), "/healthz").status, 200);
    drop(first);
    assert_eq!(
        common::gen_ids(dir.path(), &["gen", "--worker-id", "5", "-n", "2"]).len(),
        2,
        "free again once the holder is gone"
    );
}
