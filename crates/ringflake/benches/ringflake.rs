//! One criterion run: ringflake's takes (one and two threads, batches), its per-thread takers
//! (`local/*`), Leaf's segment mode (`segment/*`), its mutex generator, the floors the ring is
//! built on (a padded `fetch_add`, an `ArrayQueue` pop) and peer ID crates, each set up as its
//! users would to be fastest.
//!
//! `take/1-thread-twitter` and `local/2-threads-twitter` are `take/1-thread` and
//! `local/2-threads` with Twitter's layout (millisecond ticks): the ratio is from one run.
//!
//! Every bench reports elements (IDs) per second. Run with `cargo bench --bench ringflake` (about
//! three minutes); filter with e.g. `cargo bench --bench ringflake -- 'take|local|floor|peers'`.
//!
//! The `take` benches are sustained: each sample takes many times the ring's 65,536 slots, so the
//! background filler has to keep up; they are not a drain of the ring filled at build. After each
//! `take` bench the generator's [`Stats`](ringflake::Stats) are printed to stderr (how often a take
//! found the ring empty and waited, how far the filler borrowed ahead of the clock) with the
//! per-sample and total ID counts.

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use crossbeam_queue::ArrayQueue;
use crossbeam_utils::CachePadded;
use ringflake::{CachedUidGenerator, DEFAULT_EPOCH_SECONDS, DefaultUidGenerator, Layout};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Samples per `take` and `local` bench (criterion's minimum is 10).
const TAKE_SAMPLES: usize = 20;
/// Measurement time per `take` and `local` bench: with flat sampling each sample lasts
/// `TAKE_MEASURE / TAKE_SAMPLES` (0.25 s), i.e. millions of IDs even at 10 M IDs/s, and the
/// bench takes over 100 M IDs in all at any rate above 20 M IDs/s.
const TAKE_MEASURE: Duration = Duration::from_secs(5);
/// Warm-up per `take` and `local` bench.
const TAKE_WARM_UP: Duration = Duration::from_secs(1);

/// The `iters` criterion asked of one bench (warm-up calls first, then one call per sample).
#[derive(Default)]
struct Tally(Vec<u64>);

impl Tally {
    fn record(&mut self, iters: u64) -> u64 {
        self.0.push(iters);
        iters
    }

    /// Prints the per-sample and total ID counts of the measured samples (the last `samples`
    /// calls) and `extra` (the generator's stats).
    fn report(&self, name: &str, ids_per_iter: u64, samples: usize, extra: &str) {
        let measured = &self.0[self.0.len().saturating_sub(samples)..];
        let min = measured.iter().min().copied().unwrap_or(0) * ids_per_iter;
        let total: u64 = measured.iter().sum::<u64>() * ids_per_iter;
        let warm: u64 = self.0[..self.0.len() - measured.len()].iter().sum::<u64>() * ids_per_iter;
        eprintln!(
            "{name}: {} samples, smallest {min} IDs, {total} IDs measured (+{warm} warm-up); {extra}",
            measured.len()
        );
    }
}

/// The size of the `arrayqueue-pop` floor's queue: the old default ring (2^13 << 3 slots).
const RING_CAPACITY: usize = 65_536;

/// The `take` benches measure the take path, not the clock: they borrow without a cap (Java's
/// behaviour, `unbounded_lead`), since a flat-out consumer at the default 10 s cap would spend
/// the run waiting for the clock. The `bounded` group measures the default configuration.
fn cached() -> CachedUidGenerator {
    cached_with(Layout::default())
}

/// [`cached`] with another layout: the `*-twitter` benches take Twitter's (millisecond ticks,
/// 4,096 IDs a tick), to compare with the same bench at the default layout in one run
/// (target: at least 0.95 x).
fn cached_with(layout: Layout) -> CachedUidGenerator {
    CachedUidGenerator::builder(layout)
        .worker_id(1)
        .unbounded_lead()
        .build()
        .expect("build CachedUidGenerator")
}

fn stats_line(g: &CachedUidGenerator) -> String {
    let s = g.stats();
    format!(
        "take_waits {} (takes that found the ring empty), paddings {}, discarded {}, lead {} s, issued {}",
        s.take_waits, s.paddings, s.discarded, s.lead_seconds, s.issued
    )
}

/// The sustained one-consumer loop of `take/1-thread` and `take/1-thread-with-exporter`.
fn take_one_thread(b: &mut criterion::Bencher<'_>, g: &CachedUidGenerator, tally: &mut Tally) {
    one_thread(b, tally, || {
        black_box(g.next_id().expect("next_id"));
    })
}

/// One thread taking criterion's `iters` with `take`, timed (the generator's own threads keep up
/// or not).
fn one_thread(b: &mut criterion::Bencher<'_>, tally: &mut Tally, mut take: impl FnMut()) {
    b.iter_custom(|iters| {
        let n = tally.record(iters);
        let start = Instant::now();
        for _ in 0..n {
            take();
        }
        start.elapsed()
    })
}

/// Two threads with a taker each (made by `taker` at the start of each sample), taking half of
/// criterion's `iters` each with `take`, timed from when both are ready.
fn two_threads<T>(
    b: &mut criterion::Bencher<'_>,
    tally: &mut Tally,
    taker: impl Fn() -> T + Sync,
    take: impl Fn(&mut T) + Sync,
) {
    b.iter_custom(|iters| {
        let n = tally.record(iters);
        let halves = [n / 2, n - n / 2];
        let barrier = Barrier::new(3);
        std::thread::scope(|s| {
            for half in halves {
                let (taker, take, barrier) = (&taker, &take, &barrier);
                s.spawn(move || {
                    let mut t = taker();
                    barrier.wait();
                    for _ in 0..half {
                        take(&mut t);
                    }
                });
            }
            barrier.wait();
            Instant::now()
        })
        .elapsed()
    })
}

/// A group sampled as the `take` benches are (flat, [`TAKE_SAMPLES`] samples over
/// [`TAKE_MEASURE`]), counting IDs.
fn take_group<'c>(
    c: &'c mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(TAKE_SAMPLES)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(TAKE_WARM_UP)
        .measurement_time(TAKE_MEASURE)
        .throughput(Throughput::Elements(1));
    group
}

fn take(c: &mut Criterion) {
    let mut group = take_group(c, "take");
    {
        // In an Arc like `take/1-thread-with-exporter`'s (a reporter needs one), so the two
        // differ only by the exporter, the reporter and the scrapes.
        let g = std::sync::Arc::new(cached());
        let mut tally = Tally::default();
        group.bench_function("1-thread", |b| take_one_thread(b, &g, &mut tally));
        tally.report("take/1-thread", 1, TAKE_SAMPLES, &stats_line(&g));
    }
    {
        let g = std::sync::Arc::new(cached_with(Layout::twitter()));
        let mut tally = Tally::default();
        group.bench_function("1-thread-twitter", |b| take_one_thread(b, &g, &mut tally));
        tally.report("take/1-thread-twitter", 1, TAKE_SAMPLES, &stats_line(&g));
    }
    {
        let g = cached();
        let mut tally = Tally::default();
        group.bench_function("2-threads", |b| {
            two_threads(
                b,
                &mut tally,
                || (),
                |_| {
                    black_box(g.next_id().expect("next_id"));
                },
            )
        });
        tally.report("take/2-threads", 1, TAKE_SAMPLES, &stats_line(&g));
    }

    const BATCH: usize = 1000;
    group.throughput(Throughput::Elements(BATCH as u64));
    {
        let g = cached();
        let mut tally = Tally::default();
        let mut buf = [0u64; BATCH];
        group.bench_function("batch-1000", |b| {
            b.iter_custom(|iters| {
                let n = tally.record(iters);
                let start = Instant::now();
                for _ in 0..n {
                    g.next_ids(black_box(&mut buf)).expect("next_ids");
                    black_box(&buf);
                }
                start.elapsed()
            })
        });
        tally.report(
            "take/batch-1000",
            BATCH as u64,
            TAKE_SAMPLES,
            &stats_line(&g),
        );
    }
    group.finish();
}

/// The per-thread takers ([`LocalTaker`](ringflake::LocalTaker)): `local/1-thread` is one thread
/// with one taker (kept across samples, as a thread keeps its taker), `local/2-threads` two
/// threads with a taker each (made at the start of each sample; a sample is millions of IDs).
/// Same generator set-up and sampling as `take/*`: compare `local/2-threads` with
/// `take/1-thread` (target: at least 1.8 x).
fn local(c: &mut Criterion) {
    let mut group = take_group(c, "local");
    {
        let g = cached();
        let mut taker = g.local();
        let mut tally = Tally::default();
        group.bench_function("1-thread", |b| {
            one_thread(b, &mut tally, || {
                black_box(taker.next_id().expect("next_id"));
            })
        });
        drop(taker);
        tally.report("local/1-thread", 1, TAKE_SAMPLES, &stats_line(&g));
    }
    for (name, layout) in [
        ("2-threads", Layout::default()),
        ("2-threads-twitter", Layout::twitter()),
    ] {
        let g = cached_with(layout);
        let mut tally = Tally::default();
        group.bench_function(name, |b| local_two_threads(b, &g, &mut tally));
        tally.report(&format!("local/{name}"), 1, TAKE_SAMPLES, &stats_line(&g));
    }
    group.finish();
}

/// Two threads with a taker each, made at the start of each sample.
fn local_two_threads(b: &mut criterion::Bencher<'_>, g: &CachedUidGenerator, tally: &mut Tally) {
    two_threads(
        b,
        tally,
        || g.local(),
        |t| {
            black_box(t.next_id().expect("next_id"));
        },
    )
}

/// `take/1-thread` again with monitoring on: the Prometheus exporter installed as the global
/// recorder, a `MetricsReporter` sampling the generator every second (the default), and a thread
/// that scrapes `/metrics` over HTTP every 100 ms. Compare with `take/1-thread` (target: within
/// 5%); the scrape count is printed with the generator's stats.
#[cfg(feature = "metrics")]
fn take_with_exporter(c: &mut Criterion) {
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    ringflake::install_prometheus(addr).expect("install the Prometheus exporter");
    let g = Arc::new(cached());
    let _reporter = ringflake::MetricsReporter::builder("bench", &g)
        .start()
        .expect("start the reporter");
    let stop = Arc::new(AtomicBool::new(false));
    let scraper = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut scrapes = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut body = Vec::new();
                let mut http = std::net::TcpStream::connect(addr).expect("connect to /metrics");
                http.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                    .expect("send the scrape");
                http.read_to_end(&mut body).expect("read the scrape");
                assert!(body.starts_with(b"HTTP/1.0 200") || body.starts_with(b"HTTP/1.1 200"));
                scrapes += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            scrapes
        })
    };

    let mut group = take_group(c, "take");
    let mut tally = Tally::default();
    group.bench_function("1-thread-with-exporter", |b| {
        take_one_thread(b, &g, &mut tally)
    });
    group.finish();
    stop.store(true, Ordering::Relaxed);
    let scrapes = scraper.join().expect("scraper thread");
    tally.report(
        "take/1-thread-with-exporter",
        1,
        TAKE_SAMPLES,
        &format!("{scrapes} scrapes of /metrics; {}", stats_line(&g)),
    );
}

#[cfg(not(feature = "metrics"))]
fn take_with_exporter(_: &mut Criterion) {}

fn default(c: &mut Criterion) {
    let mut group = c.benchmark_group("default");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));
    // With `Layout::default()` (13 sequence bits) `DefaultUidGenerator` makes at most 8,192 IDs a
    // second on the real clock and then sleeps until the next second: the bench would measure the
    // cap, not the generator. A layout with few worker bits and many sequence bits (31 time bits,
    // 2 worker bits, 30 sequence bits: 2^30 IDs a second, 68 years) lifts the cap far above the
    // rate of a mutex plus a clock read per ID, so this measures the per-ID cost.
    let layout = Layout::new(31, 2, 30, DEFAULT_EPOCH_SECONDS).expect("layout");
    let g = DefaultUidGenerator::builder(layout)
        .worker_id(1)
        .build()
        .expect("build DefaultUidGenerator");
    group.bench_function("1-thread", |b| {
        b.iter(|| black_box(g.next_id().expect("next_id")))
    });
    group.finish();
}

/// Meituan Leaf's segment mode ([`SegmentGenerator`](ringflake::SegmentGenerator)): dense numbers
/// of one business tag from a `leaf_alloc` table in a SQLite file, with a state directory (marks
/// written ahead of the takes, as a service runs it). `segment/1-thread` is a tag handle's
/// `next_id` on one thread: compare with `floor/fetch_add-1-thread` (target: at least 0.9 x;
/// CosId's `SegmentChainId` makes 0.91 x `AtomicLong` in its own JMH, Leaf's segment mode about
/// 0.17 x). `segment/local-*` are per-thread takers (target: 2 threads at least 1.8 x one). The
/// tag's step is Leaf's largest (`INT`, 2^31 - 1), so that a range lasts seconds at these rates
/// and the database is not what is measured; claims happen in the background, as in a service.
#[cfg(all(feature = "segment", feature = "sqlite"))]
fn segment(c: &mut Criterion) {
    use ringflake::{SegmentGenerator, SegmentTable};
    let dir = tempfile::tempdir().expect("a temporary directory");
    let table = SegmentTable::sqlite(dir.path().join("ids.db")).expect("leaf_alloc in SQLite");
    table
        .add("bench", 1, i32::MAX as i64, "benches/ringflake.rs")
        .expect("add the tag");
    let g = SegmentGenerator::builder(table)
        .state_dir(dir.path().join("segments"))
        .build()
        .expect("build SegmentGenerator");
    let tag = g.tag("bench").expect("the tag");
    let stats = |tag: &ringflake::SegmentTag| {
        let s = tag.stats();
        format!(
            "claims {}, waits {}, chunk {}, issued {}",
            s.claims, s.waits, s.chunk, s.issued
        )
    };
    let mut group = take_group(c, "segment");
    {
        let mut tally = Tally::default();
        group.bench_function("1-thread", |b| {
            one_thread(b, &mut tally, || {
                black_box(tag.next_id().expect("next_id"));
            })
        });
        tally.report("segment/1-thread", 1, TAKE_SAMPLES, &stats(&tag));
    }
    {
        let mut taker = tag.local();
        let mut tally = Tally::default();
        group.bench_function("local-1-thread", |b| {
            one_thread(b, &mut tally, || {
                black_box(taker.next_id().expect("next_id"));
            })
        });
        tally.report("segment/local-1-thread", 1, TAKE_SAMPLES, &stats(&tag));
    }
    {
        let mut tally = Tally::default();
        group.bench_function("local-2-threads", |b| {
            two_threads(
                b,
                &mut tally,
                || tag.local(),
                |t| {
                    black_box(t.next_id().expect("next_id"));
                },
            )
        });
        tally.report("segment/local-2-threads", 1, TAKE_SAMPLES, &stats(&tag));
    }
    group.finish();
}

#[cfg(not(all(feature = "segment", feature = "sqlite")))]
fn segment(_: &mut Criterion) {}

fn floor(c: &mut Criterion) {
    let mut group = c.benchmark_group("floor");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));

    // The ring's per-take claim, alone: one fetch_add on a padded counter.
    let counter = CachePadded::new(AtomicU64::new(0));
    group.bench_function("fetch_add-1-thread", |b| {
        b.iter(|| black_box(counter.fetch_add(1, Ordering::Relaxed)))
    });
    group.bench_function("fetch_add-2-threads", |b| {
        b.iter_custom(|iters| {
            let halves = [iters / 2, iters - iters / 2];
            let barrier = Barrier::new(3);
            std::thread::scope(|s| {
                for half in halves {
                    let (counter, barrier) = (&counter, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        for _ in 0..half {
                            black_box(counter.fetch_add(1, Ordering::Relaxed));
                        }
                    });
                }
                barrier.wait();
                Instant::now()
            })
            .elapsed()
        })
    });

    // Vyukov's bounded queue, which the ring specialises: pops from a full queue the size of the
    // ring, refilled outside the timed part.
    let queue = ArrayQueue::<u64>::new(RING_CAPACITY);
    group.bench_function("arrayqueue-pop", |b| {
        b.iter_custom(|iters| {
            let mut left = iters;
            let mut timed = Duration::ZERO;
            while left > 0 {
                let n = left.min(RING_CAPACITY as u64);
                for i in 0..n {
                    queue.push(i).expect("queue has room");
                }
                let start = Instant::now();
                for _ in 0..n {
                    black_box(queue.pop());
                }
                timed += start.elapsed();
                left -= n;
            }
            timed
        })
    });
    group.finish();
}

/// A classic Twitter snowflake behind a mutex: 41 bits of milliseconds since the Twitter epoch,
/// 10 worker bits, 12 sequence bits. At most 4,096 IDs a millisecond (4.096 M/s): past that it
/// spins until the next millisecond, which is part of what this bench measures.
struct MutexSnowflake {
    worker: u64,
    /// (last millisecond used, sequence within it)
    state: Mutex<(u64, u64)>,
}

impl MutexSnowflake {
    const EPOCH_MS: u64 = 1_288_834_974_657;
    const SEQ_MASK: u64 = (1 << 12) - 1;

    fn new(worker: u64) -> Self {
        assert!(worker < 1 << 10);
        MutexSnowflake {
            worker,
            state: Mutex::new((0, 0)),
        }
    }

    fn now_ms() -> u64 {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock");
        since.as_millis() as u64 - Self::EPOCH_MS
    }

    fn next_id(&self) -> u64 {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        // A clock that went back keeps using the last millisecond.
        let mut now = Self::now_ms().max(st.0);
        if now == st.0 {
            st.1 = (st.1 + 1) & Self::SEQ_MASK;
            if st.1 == 0 {
                while now <= st.0 {
                    now = Self::now_ms();
                }
            }
        } else {
            st.1 = 0;
        }
        st.0 = now;
        (now << 22) | (self.worker << 12) | st.1
    }
}

/// ferroid's layout for `peers/ferroid-atomic`: Twitter's 41 bits of milliseconds, with 2
/// machine bits and 20 sequence bits (a million IDs a millisecond) instead of 10 and 12, so that
/// the bench measures its generator, not the 4,096-a-millisecond cap (as `default/1-thread` does
/// for ringflake's; ferroid's own bench uses a layout of sequence bits only).
mod ferroid_layout {
    ferroid::define_snowflake_id!(
        /// 1 reserved bit, 41 bits of milliseconds, 2 machine bits, 20 sequence bits.
        PeerSnowflake, u64,
        reserved: 1,
        timestamp: 41,
        machine_id: 2,
        sequence: 20
    );
}

fn peers(c: &mut Criterion) {
    let mut group = c.benchmark_group("peers");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));
    // With `fast-rng`: the random bits from a thread-local ChaCha, not the OS, per call.
    group.bench_function("uuid-v7", |b| b.iter(|| black_box(uuid::Uuid::now_v7())));
    // ulid's monotonic generator: increments the random part within a millisecond.
    let mut ulids = ulid::Generator::new();
    group.bench_function("ulid-monotonic", |b| {
        b.iter(|| black_box(ulids.generate().expect("ulid within its millisecond")))
    });
    // ferroid's lock-free generator (one CAS per ID) on its shared ticker clock (a background
    // thread updates the millisecond: no clock read per ID).
    {
        use ferroid::generator::AtomicSnowflakeGenerator;
        use ferroid::time::{MonotonicClock, TWITTER_EPOCH};
        let ferroid: AtomicSnowflakeGenerator<ferroid_layout::PeerSnowflake, _> =
            AtomicSnowflakeGenerator::new(1, MonotonicClock::<1>::with_epoch(TWITTER_EPOCH));
        group.bench_function("ferroid-atomic", |b| {
            b.iter(|| black_box(ferroid.next_id(|_| std::hint::spin_loop())))
        });
    }
    // snowflaked's single-owner generator (`&mut`, no atomics): its fastest; 12 sequence bits.
    let mut snowflaked = snowflaked::Generator::new(1);
    group.bench_function("snowflaked", |b| {
        b.iter(|| black_box(snowflaked.generate::<u64>()))
    });
    let mut rs = snowflake::SnowflakeIdGenerator::new(1, 1);
    group.bench_function("rs-snowflake", |b| {
        b.iter(|| black_box(rs.real_time_generate()))
    });
    let ms = MutexSnowflake::new(1);
    group.bench_function("mutex-snowflake", |b| b.iter(|| black_box(ms.next_id())));
    group.finish();
}

/// The default configuration (bounded lead, 10 s) under a flat-out consumer: first the burst it
/// absorbs by borrowing (measured: IDs taken, and how fast, until the lead reaches the cap), then
/// the sustained rate once the lead sits at the cap, which is `2^seq_bits` IDs a second.
fn bounded(c: &mut Criterion) {
    {
        let g = CachedUidGenerator::builder(Layout::default())
            .worker_id(1)
            .build()
            .expect("build CachedUidGenerator");
        let cap = g.max_lead().expect("a lead cap by default").as_secs();
        let start = Instant::now();
        let mut burst = 0u64;
        while g.stats().lead_seconds < cap && start.elapsed() < Duration::from_secs(30) {
            for _ in 0..(1 << 20) {
                black_box(g.next_id().expect("next_id"));
            }
            burst += 1 << 20;
        }
        let t = start.elapsed();
        eprintln!(
            "bounded/burst: {burst} IDs until the lead reached its {cap} s cap, in {t:?} ({:.0} M IDs/s; max_batch {:?}); {}",
            burst as f64 / t.as_secs_f64() / 1e6,
            g.max_batch(),
            stats_line(&g)
        );
    }
    let mut group = c.benchmark_group("bounded");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        // Past the burst (10 s of borrowing at most) before measuring.
        .warm_up_time(Duration::from_secs(15))
        .measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(1));
    let g = CachedUidGenerator::builder(Layout::default())
        .worker_id(1)
        .build()
        .expect("build CachedUidGenerator");
    let mut tally = Tally::default();
    group.bench_function("sustained-1-thread", |b| take_one_thread(b, &g, &mut tally));
    tally.report("bounded/sustained-1-thread", 1, 10, &stats_line(&g));
    group.finish();
}

criterion_group!(
    benches,
    take,
    local,
    take_with_exporter,
    segment,
    bounded,
    default,
    floor,
    peers
);
criterion_main!(benches);
