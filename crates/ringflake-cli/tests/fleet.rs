//! A fleet on one PostgreSQL table: hundreds of generators (threads of this process, each with its
//! own node name and connection, as separate hosts would have) booting, serving, stopping cleanly
//! and being killed at random for minutes, with short leases so that worker ids are recycled all
//! the time. Every ID handed out is kept: none may repeat. It measures what an operator sizes a
//! worker table by: boot latency, the database's writes a second, the rows in the table.
//!
//! A kill is simulated as the database sees one: from the moment a node is "killed" its lease
//! reaches the database no more (no extension, no release: the row keeps its lease until it
//! expires), and its generator is dropped.
//!
//! Sized for CI by default (300 generators for 75 s); `scripts/fleet.sh` runs the 5-minute run
//! of `docs/workers.md` ("A fleet on one table"). Settings, from the environment:
//! `RF_FLEET_NODES` (300), `RF_FLEET_SECS` (75), `RF_FLEET_WINDOW` (lease window, s: 30),
//! `RF_FLEET_RATE` (IDs a second per generator: 500), `RF_FLEET_LIFE` (longest run of one boot,
//! s: 20; at least `RF_FLEET_SECS`: no churn, every generator up for the whole run),
//! `RF_FLEET_SEED`.

mod common;

use ringflake::{
    Assignment, CachedUidGenerator, DatabaseAssigner, DatabaseTime, Error, Layout, Lease,
    WorkerIdAssigner,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// A seeded xorshift64*: a failing run can be repeated with its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What every lease of the fleet counts.
#[derive(Default)]
struct Counts {
    extensions: AtomicU64,
}

/// A node's lease that a "kill" cuts off from the database: extensions and the release fail.
#[derive(Debug)]
struct Killable {
    inner: Box<dyn Lease>,
    killed: Arc<AtomicBool>,
    counts: Arc<CountsRef>,
}

/// `Counts` behind a type that is `Debug`.
struct CountsRef(Arc<Counts>);

impl std::fmt::Debug for CountsRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad("Counts")
    }
}

impl Lease for Killable {
    fn until(&self) -> i64 {
        self.inner.until()
    }
    fn extend(&self, until: i64) -> Result<(), Error> {
        if self.killed.load(Ordering::Acquire) {
            return Err(Error::Shutdown);
        }
        self.inner.extend(until)?;
        self.counts.0.extensions.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
    fn release(&self, last_second: i64) -> Result<(), Error> {
        if self.killed.load(Ordering::Acquire) {
            return Err(Error::Shutdown);
        }
        self.inner.release(last_second)
    }
    fn window(&self) -> i64 {
        self.inner.window()
    }
    fn database_clock(&self) -> Result<Option<DatabaseTime>, Error> {
        if self.killed.load(Ordering::Acquire) {
            return Err(Error::Shutdown);
        }
        self.inner.database_clock()
    }
}

/// One node's worker id source: its assigner, whose leases a kill can cut off.
struct Node<'a> {
    assigner: &'a DatabaseAssigner,
    killed: Arc<AtomicBool>,
    counts: Arc<CountsRef>,
}

impl WorkerIdAssigner for Node<'_> {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error> {
        self.assign(layout).map(|a| a.worker_id)
    }
    fn assign(&self, layout: &Layout) -> Result<Assignment, Error> {
        let mut a = self.assigner.assign(layout)?;
        a.lease = a.lease.map(|inner| {
            Box::new(Killable {
                inner,
                killed: Arc::clone(&self.killed),
                counts: Arc::clone(&self.counts),
            }) as Box<dyn Lease>
        });
        Ok(a)
    }
}

/// What one node thread saw over the run.
#[derive(Default)]
struct Seen {
    ids: Vec<u64>,
    boots: Vec<Duration>,
    boot_errors: Vec<String>,
    take_errors: u64,
    kills: u64,
    stops: u64,
    /// Seconds a generator of this node was up, summed.
    up_secs: f64,
}

/// (inserted, updated, deleted) tuples of WORKER_NODE and committed transactions of the database.
fn db_counters(client: &mut postgres::Client) -> (i64, i64, i64, i64) {
    let t = client
        .query_one(
            "SELECT n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables \
             WHERE relname = 'worker_node'",
            &[],
        )
        .expect("pg_stat_user_tables");
    let x = client
        .query_one(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .expect("pg_stat_database");
    (t.get(0), t.get(1), t.get(2), x.get(0))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Hundreds of generators on one table under churn (random lifetimes, a third of the stops
/// kills): no ID twice, every boot succeeds, and leases are written once per third of their
/// window (where once a second per node would be `live nodes` writes a second).
#[test]
#[ignore = "needs RINGFLAKE_POSTGRES_URL (a throw-away PostgreSQL with max_connections above \
            RF_FLEET_NODES + 20: bash .ci/run starts one); minutes long"]
fn a_fleet_under_churn_never_repeats_an_id() {
    let url = match std::env::var("RINGFLAKE_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => url,
        _ => panic!(
            "RINGFLAKE_POSTGRES_URL is not set: this test needs a throw-away PostgreSQL (it drops \
             WORKER_NODE); bash .ci/run starts one and sets it"
        ),
    };
    let nodes = setting("RF_FLEET_NODES", 300) as usize;
    let secs = setting("RF_FLEET_SECS", 75);
    let window = setting("RF_FLEET_WINDOW", 30);
    let rate = setting("RF_FLEET_RATE", 500).max(1);
    let life = setting("RF_FLEET_LIFE", 20).max(2);
    let seed = setting("RF_FLEET_SEED", 0x5eed_f1ee7);
    // 10 worker bits (1,023 ids: the fleet outgrows them and recycles), 13 sequence bits (rings
    // of 16,384 IDs, 128 KiB: hundreds fit in memory).
    let layout = Layout::new(40, 10, 13, ringflake::DEFAULT_EPOCH_SECONDS).expect("layout");

    let mut client = common::postgres_client(&url);
    client
        .batch_execute("DROP TABLE IF EXISTS WORKER_NODE")
        .expect("drop the table");
    DatabaseAssigner::postgres(&url)
        .expect("url")
        .create_table(true)
        .list()
        .expect("create the table");
    let before = db_counters(&mut client);
    let counts = Arc::new(Counts::default());
    let started = Instant::now();
    let deadline = started + Duration::from_secs(secs);
    eprintln!(
        "fleet: {nodes} generators for {secs} s, lease window {window} s, {rate} IDs/s each, \
         boots living up to {life} s, seed {seed:#x}"
    );
    let seen: Vec<Seen> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..nodes)
            .map(|slot| {
                let (url, counts) = (&url, &counts);
                std::thread::Builder::new()
                    .spawn_scoped(s, move || {
                        let mut rng =
                            Rng(seed ^ (slot as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                        let assigner = DatabaseAssigner::postgres(url)
                            .expect("url")
                            .generator(&format!("node-{slot}"))
                            .lease_window(Duration::from_secs(window))
                            .retry_for(Duration::from_secs(60));
                        let mut seen = Seen::default();
                        let batch = (rate / 10).max(1) as usize;
                        let mut buf = vec![0u64; batch];
                        // Boots spread over the first second.
                        std::thread::sleep(Duration::from_millis(rng.below(1000)));
                        while Instant::now() < deadline {
                            let killed = Arc::new(AtomicBool::new(false));
                            let node = Node {
                                assigner: &assigner,
                                killed: Arc::clone(&killed),
                                counts: Arc::new(CountsRef(Arc::clone(counts))),
                            };
                            let t0 = Instant::now();
                            let g = CachedUidGenerator::builder(layout)
                                .worker_id_from(&node)
                                .background_filler(false)
                                .boost_power(1)
                                .build();
                            let g = match g {
                                Ok(g) => g,
                                Err(e) => {
                                    seen.boot_errors.push(e.to_string());
                                    std::thread::sleep(Duration::from_millis(500));
                                    continue;
                                }
                            };
                            seen.boots.push(t0.elapsed());
                            let up = Instant::now();
                            let end = (up
                                + Duration::from_millis(1000 + rng.below(life * 1000 - 1000)))
                            .min(deadline);
                            while Instant::now() < end {
                                match g.next_ids(&mut buf) {
                                    Ok(()) => seen.ids.extend_from_slice(&buf),
                                    Err(_) => seen.take_errors += 1,
                                }
                                std::thread::sleep(Duration::from_millis(100));
                            }
                            seen.up_secs += up.elapsed().as_secs_f64();
                            if rng.below(3) == 0 {
                                // kill -9: nothing more reaches the database.
                                killed.store(true, Ordering::Release);
                                seen.kills += 1;
                            } else {
                                seen.stops += 1;
                            }
                            drop(g);
                            // Down for up to 2 s before the next boot.
                            std::thread::sleep(Duration::from_millis(rng.below(2000)));
                        }
                        seen
                    })
                    .expect("spawn a node")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a node panicked"))
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let rows: i64 = client
        .query_one("SELECT count(*) FROM WORKER_NODE", &[])
        .expect("count")
        .get(0);
    // Every node's connection is closed now (its assigner dropped): its statistics are flushed.
    std::thread::sleep(Duration::from_millis(1500));
    let after = db_counters(&mut client);

    let mut boots: Vec<Duration> = seen.iter().flat_map(|s| s.boots.iter().copied()).collect();
    boots.sort();
    let boot_errors: Vec<String> = seen
        .iter()
        .flat_map(|s| s.boot_errors.iter().cloned())
        .collect();
    let take_errors: u64 = seen.iter().map(|s| s.take_errors).sum();
    let kills: u64 = seen.iter().map(|s| s.kills).sum();
    let stops: u64 = seen.iter().map(|s| s.stops).sum();
    let up_secs: f64 = seen.iter().map(|s| s.up_secs).sum();
    let mut ids: Vec<u64> = Vec::with_capacity(seen.iter().map(|s| s.ids.len()).sum());
    for s in seen {
        ids.extend(s.ids);
    }
    let issued = ids.len();
    ids.sort_unstable();
    let repeated = ids.windows(2).filter(|w| w[0] == w[1]).count();
    let duplicates: Vec<u64> = ids
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .take(10)
        .collect();
    let workers: std::collections::HashSet<u64> = ids
        .iter()
        .map(|&id| layout.parse(id).map_or(0, |p| p.worker_id))
        .collect();
    let (ins, upd, del, xact) = (
        after.0 - before.0,
        after.1 - before.1,
        after.2 - before.2,
        after.3 - before.3,
    );
    let extensions = counts.extensions.load(Ordering::Relaxed);
    let live = up_secs / elapsed;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    eprintln!(
        "fleet: {elapsed:.0} s, {} boots ({kills} killed, {stops} stopped cleanly, {} boot errors), \
         {:.0} generators live on average, {} worker ids used\n\
         boot latency: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms\n\
         IDs: {issued} handed out, {} duplicates, {take_errors} failed takes\n\
         database: {:.1} row writes/s ({ins} inserts, {upd} updates, {del} deletes), {:.1} \
         transactions/s; {rows} rows in WORKER_NODE at the end\n\
         lease extensions: {extensions}, {:.2}/s ({:.4} per live generator a second; one a \
         second each would be {:.0}/s)",
        boots.len(),
        boot_errors.len(),
        live,
        workers.len(),
        ms(percentile(&boots, 0.5)),
        ms(percentile(&boots, 0.99)),
        ms(boots.last().copied().unwrap_or_default()),
        repeated,
        (ins + upd + del) as f64 / elapsed,
        xact as f64 / elapsed,
        extensions as f64 / elapsed,
        extensions as f64 / up_secs.max(1.0),
        live,
    );
    assert!(
        duplicates.is_empty(),
        "IDs handed out twice: {duplicates:?}"
    );
    assert!(
        boot_errors.is_empty(),
        "boots failed: {:?}",
        &boot_errors[..boot_errors.len().min(5)]
    );
    assert_eq!(take_errors, 0, "takes failed");
    if life < secs {
        assert!(kills > 0 && stops > 0 && workers.len() > nodes, "no churn");
    }
    // Once per third of the window, per live generator (a boot's own lease counts as written at
    // boot): well below a write a second each.
    assert!(
        (extensions as f64) < up_secs / (window as f64 / 3.0) * 1.5 + 1.0,
        "{extensions} extensions in {up_secs:.0} generator-seconds with a {window} s window"
    );
}
