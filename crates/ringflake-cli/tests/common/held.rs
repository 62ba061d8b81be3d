//! Scenarios shared by the sources whose worker ids are held by a key with a TTL (etcd in
//! tests/etcd.rs, Redis in tests/redis.rs): each file says how to start a node and how to hurt
//! its store, these say what happens to the IDs.

use super::{Client, Serve, json_ids};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// IDs from `/ids?count=N`, nothing if it does not answer 200.
pub fn take(client: &mut Client, n: usize) -> Vec<u64> {
    match client.get(&format!("/ids?count={n}")) {
        Ok(r) if r.status == 200 => json_ids(&r.body),
        Ok(_) => Vec::new(),
        Err(_) => {
            client.reset();
            Vec::new()
        }
    }
}

/// The number of IDs seen twice in `ids`.
pub fn duplicates(ids: &[Vec<u64>]) -> usize {
    let mut all: Vec<u64> = ids.iter().flatten().copied().collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    n - all.len()
}

/// The layout of the fleets: 4 worker bits (ids 0 to 15).
pub const FLEET_LAYOUT: [&str; 6] = [
    "--time-bits",
    "34",
    "--worker-bits",
    "4",
    "--seq-bits",
    "25",
];

/// The fewest restarts a fleet makes: its churn goes on past its time until it has made them.
pub const MIN_RESTARTS: usize = 8;

/// What a fleet did.
pub struct Fleet<R> {
    /// The IDs each slot's nodes handed out.
    pub ids: Vec<Vec<u64>>,
    /// Restarts after SIGKILL.
    pub boots: usize,
    /// The slowest of them, until it listened.
    pub slowest: Duration,
    /// What `disturb` returned.
    pub disturbed: R,
}

/// `nodes` nodes, each started by `start` in a directory of its own, under load from one client
/// each; one of them killed with SIGKILL every 1.5 s and started again in its directory, for
/// `secs` seconds (and until [`MIN_RESTARTS`] restarts, however slow the boots), while
/// `disturb` runs beside them (a leader killed, ...).
pub fn fleet<R: Send>(
    nodes: usize,
    secs: u64,
    start: &(dyn Fn(&Path) -> Serve + Sync),
    disturb: impl FnOnce() -> R + Send,
) -> Fleet<R> {
    let dirs: Vec<tempfile::TempDir> = (0..nodes).map(|_| tempfile::tempdir().unwrap()).collect();
    let running: Vec<Mutex<Serve>> = dirs.iter().map(|d| Mutex::new(start(d.path()))).collect();
    let addrs: Vec<Mutex<SocketAddr>> = running
        .iter()
        .map(|s| Mutex::new(s.lock().unwrap().addr()))
        .collect();
    let stop = AtomicBool::new(false);
    let began = Instant::now();
    std::thread::scope(|s| {
        let takers: Vec<_> = addrs
            .iter()
            .map(|addr| {
                let stop = &stop;
                s.spawn(move || {
                    let mut got = Vec::new();
                    let mut at = None;
                    let mut client = None;
                    while !stop.load(Ordering::Relaxed) {
                        let now = *addr.lock().unwrap();
                        if at != Some(now) {
                            at = Some(now);
                            client = Some(Client::new(now, Duration::from_secs(2)));
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
            let (mut boots, mut slowest, mut n) = (0, Duration::ZERO, 0usize);
            while began.elapsed() < Duration::from_secs(secs.saturating_sub(5)) || n < MIN_RESTARTS
            {
                std::thread::sleep(Duration::from_millis(1500));
                let slot = n % nodes;
                n += 1;
                let mut node = running[slot].lock().unwrap();
                node.kill();
                let booted = Instant::now();
                *node = start(dirs[slot].path());
                slowest = slowest.max(booted.elapsed());
                *addrs[slot].lock().unwrap() = node.addr();
                boots += 1;
            }
            (boots, slowest)
        });
        let disturbed = s.spawn(disturb);
        let (boots, slowest) = churn.join().unwrap();
        let disturbed = disturbed.join().unwrap();
        while began.elapsed() < Duration::from_secs(secs) {
            std::thread::sleep(Duration::from_millis(100));
        }
        stop.store(true, Ordering::Relaxed);
        let ids = takers.into_iter().map(|t| t.join().unwrap()).collect();
        Fleet {
            ids,
            boots,
            slowest,
            disturbed,
        }
    })
}

/// The worker id of an ID of the 37/1/25 layout of [`frozen`].
pub fn worker_of(id: u64) -> u64 {
    (id >> 25) & 1
}

/// The layout and lease of [`frozen`]: one worker bit (ids 0 and 1), a 2 s lease window.
pub const FROZEN_LAYOUT: [&str; 8] = [
    "--time-bits",
    "37",
    "--worker-bits",
    "1",
    "--seq-bits",
    "25",
    "--lease-window",
    "2",
];

/// A node A frozen with SIGSTOP past the TTL (`ttl`) of its key (a ZooKeeper session's timeout): with both ids held (A has 0,
/// C has 1), a node B booting meanwhile gets A's id only once A's key has expired, that is
/// after A has stopped serving (its fence: a third of the TTL); thawed, A serves none of its
/// old id's IDs above B's first one, finds its key gone, and once B stops takes the id again
/// and serves above B's IDs. `start(dir)` starts a node with [`FROZEN_LAYOUT`] in `dir`.
pub fn frozen(start: &dyn Fn(&Path) -> Serve, ttl: Duration) {
    let (da, db, dc) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let mut a = start(da.path());
    let mut ca = Client::new(a.addr(), Duration::from_secs(1));
    let before = take(&mut ca, 100);
    assert_eq!(worker_of(before[0]), 0, "{}", a.output());
    let _c = start(dc.path());
    super::signal(a.pid, "STOP");
    let frozen = Instant::now();
    let mut b = start(db.path());
    let b_boot = frozen.elapsed();
    let mut cb = Client::new(b.addr(), Duration::from_secs(1));
    let mut from_b = take(&mut cb, 1000);
    assert_eq!(worker_of(from_b[0]), 0, "B took the frozen node's id");
    // A's key expires one TTL after its last keep-alive, which came at most a tick (a tenth of
    // the TTL) before the freeze; A stopped serving a third of the TTL after it.
    assert!(
        b_boot + ttl / 10 >= ttl,
        "B took the id {b_boot:?} after the freeze, before A's key could expire ({ttl:?})"
    );
    super::signal(a.pid, "CONT");
    let thawed = Instant::now();
    let mut from_a = Vec::new();
    let mut refused_at = None;
    while thawed.elapsed() < Duration::from_secs(3) {
        let got = take(&mut ca, 100);
        if got.is_empty() && refused_at.is_none() {
            refused_at = Some(thawed.elapsed());
        }
        from_a.extend(got);
        from_b.extend(take(&mut cb, 100));
    }
    let refused_at = refused_at.expect("the thawed node kept serving");
    assert!(
        refused_at <= Duration::from_millis(2500),
        "fenced {refused_at:?} after the thaw"
    );
    eprintln!(
        "frozen: B took A's id {b_boot:?} after the freeze (TTL {ttl:?}, A's fence at a third of \
         it); thawed, A stopped serving {refused_at:?} later, having served {} IDs meanwhile",
        from_a.len()
    );
    let first_b = *from_b.iter().min().unwrap();
    assert!(
        from_a.iter().all(|&id| worker_of(id) != 0 || id < first_b),
        "the thawed node served its old id above the new holder's first ID"
    );
    super::signal(b.pid, "TERM");
    super::wait_until("B's exit", Duration::from_secs(20), || !b.running());
    let last_b = *from_b.iter().max().unwrap();
    let mut healed = Vec::new();
    super::wait_until("A serving again", Duration::from_secs(40), || {
        healed = take(&mut ca, 10);
        !healed.is_empty()
    });
    assert_eq!(worker_of(healed[0]), 0);
    assert!(healed[0] > last_b, "A healed below B's IDs");
    // Thawed, it says it stopped: fenced (no keep-alive answered for a third of the TTL), or
    // its key found gone at the first keep-alive.
    let output = a.output();
    assert!(
        output.contains("worker id 0 not served: ")
            || output.contains("worker id 0 is not this node's any more"),
        "A said nothing of its fence: {output}"
    );
    assert_eq!(
        duplicates(&[before, from_a, from_b, healed]),
        0,
        "duplicate IDs"
    );
    assert!(a.running());
    a.kill();
}

/// A store silent for `secs` seconds (`freeze`, then `thaw`) under load on `node`, whose lease
/// (TTL and window) outlasts it: every request is answered with IDs, during the outage and
/// after, and the node says the outage began and ended.
pub fn outage(node: &Serve, secs: u64, freeze: impl FnOnce(), thaw: impl FnOnce()) -> usize {
    let mut client = Client::new(node.addr(), Duration::from_secs(2));
    let (mut served, mut failed) = (0usize, 0usize);
    let mut ids = Vec::new();
    let mut round = |client: &mut Client, ids: &mut Vec<u64>| {
        let got = take(client, 50);
        if got.is_empty() {
            failed += 1;
        } else {
            served += 1;
            ids.extend(got);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_secs(2) {
        round(&mut client, &mut ids);
    }
    freeze();
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(secs) {
        round(&mut client, &mut ids);
    }
    thaw();
    let after = Instant::now();
    while after.elapsed() < Duration::from_secs(5) {
        round(&mut client, &mut ids);
    }
    assert_eq!(duplicates(&[ids]), 0, "duplicate IDs");
    assert_eq!(
        failed,
        0,
        "{failed} of {} requests failed while the lease held; output: {}",
        served + failed,
        node.output()
    );
    super::wait_until(
        "the node's word that the lease holds again",
        Duration::from_secs(20),
        || node.output().contains("lease regained"),
    );
    served
}

/// `ringflake gen --no-state-file --db-retry 2 ARGS` in `dir`, bounded to a minute.
pub fn gen_in(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = super::ringflake(dir);
    cmd.args(["gen", "--no-state-file", "--db-retry", "2"])
        .args(args);
    super::output_within(cmd, Duration::from_secs(60))
}

/// [`gen_in`], which must fail without printing an ID: its standard error.
pub fn gen_refused(dir: &Path, args: &[&str]) -> String {
    let out = gen_in(dir, args);
    assert!(!out.status.success(), "{args:?} served");
    assert!(out.stdout.is_empty(), "{args:?} printed IDs");
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// A start refused after its claim gives the claim back at once (`assigner` the source, `list`
/// its ids): `above` sorts above the first ID of any id at the clock, though not above the
/// furthest an id may reach within the lead cap, so the build claims an id and then refuses it.
/// Afterwards nobody holds the id (free at once, not a TTL later), its reach says it was
/// released at the clock (a recycled id starts above it), and the next build starts.
pub fn a_refused_claim_is_given_back(
    assigner: &dyn ringflake::WorkerIdAssigner,
    list: &dyn Fn() -> Vec<ringflake::KvWorker>,
) {
    use ringflake::{CachedUidGenerator, Clock, Error, Layout, ManualClock, SystemClock};
    let layout = Layout::default();
    let now = SystemClock.now_seconds();
    let now_delta = (now - layout.epoch_seconds()) as u64;
    let above = layout.compose(now_delta + 5, 0, 0).unwrap();
    let err = CachedUidGenerator::builder(layout)
        .worker_id_from(assigner)
        .clock(ManualClock::from_seconds(now))
        .above(above)
        .build()
        .map(|g| g.worker_id())
        .unwrap_err();
    assert!(matches!(err, Error::NotAbove { .. }), "{err}");
    let listed = list();
    assert_eq!(listed.len(), 1, "one id claimed: {listed:?}");
    assert_eq!(
        listed[0].holder, None,
        "the refused claim is held: {listed:?}"
    );
    let reach = listed[0].reach.expect("the reach of the id given back");
    assert!(
        (now..=SystemClock.now_seconds()).contains(&reach),
        "released at {reach}, not at the clock ({now}): {listed:?}"
    );
    let again = CachedUidGenerator::builder(layout)
        .worker_id_from(assigner)
        .build()
        .unwrap();
    again.next_id().unwrap();
    assert_eq!(list().iter().filter(|w| w.holder.is_some()).count(), 1);
}
