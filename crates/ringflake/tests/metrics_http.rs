//! The Prometheus endpoint, end to end: the exporter installed on an ephemeral port, generators
//! driven through bursts, idle time and overload, and `/metrics` scraped over real HTTP.
//!
//! Only one global recorder can be installed per process, so everything that needs it is in one
//! test, [`exporter_tracks_generators_over_http`]; the others use local recorders.
#![cfg(feature = "metrics")]

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, Key, KeyName, Metadata, Recorder, SharedString,
    Unit,
};
use metrics_exporter_prometheus::PrometheusBuilder;
use ringflake::{
    CachedUidGenerator, GeneratorMetrics, Layout, LeadPolicy, ManualClock, MetricsReporter,
    install_prometheus,
};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Every series the reporter exports, with its Prometheus type.
/// The request series `ringflake serve` adds on its own `/metrics` (not the library's exporter's):
/// tests/request_metrics.rs reads them from a real `serve`.
const SERVE_SERIES: [&str; 11] = [
    "ringflake_http_requests_total",
    "ringflake_http_request_duration_seconds",
    "ringflake_http_request_duration_seconds_bucket",
    "ringflake_grpc_requests_total",
    "ringflake_grpc_request_duration_seconds",
    "ringflake_connections",
    "ringflake_connections_max",
    "ringflake_connections_refused_total",
    "ringflake_large_answers",
    "ringflake_large_answers_max",
    "ringflake_large_answers_stalled_total",
];

/// The segment mode's series (`SegmentMetrics`, one per business tag), as `/metrics` names them
/// (the claim time is a summary: `_sum` and `_count`).
const SEGMENT_SERIES: [&str; 11] = [
    "ringflake_segment_current_left",
    "ringflake_segment_next_left",
    "ringflake_segment_step",
    "ringflake_segment_at_risk",
    "ringflake_segment_issued_total",
    "ringflake_segment_claim_seconds",
    "ringflake_segment_claim_seconds_sum",
    "ringflake_segment_claim_seconds_count",
    "ringflake_segment_claim_failures_total",
    "ringflake_segment_waits_total",
    "ringflake_segment_not_ready_total",
];

const SERIES: [(&str, &str); 23] = [
    ("ringflake_ring_capacity", "gauge"),
    ("ringflake_ring_available", "gauge"),
    ("ringflake_ring_fill_ratio", "gauge"),
    ("ringflake_ids_issued_total", "counter"),
    ("ringflake_paddings_total", "counter"),
    ("ringflake_ids_discarded_total", "counter"),
    ("ringflake_ids_expired_total", "counter"),
    ("ringflake_take_waits_total", "counter"),
    ("ringflake_waiting_takes", "gauge"),
    ("ringflake_waiting_ids", "gauge"),
    ("ringflake_time_lead_seconds", "gauge"),
    ("ringflake_time_lag_seconds", "gauge"),
    ("ringflake_time_remaining_seconds", "gauge"),
    ("ringflake_worker_id", "gauge"),
    ("ringflake_worker_ids_remaining", "gauge"),
    ("ringflake_worker_heals_total", "counter"),
    ("ringflake_filler_up", "gauge"),
    ("ringflake_lease_extension_failures_total", "counter"),
    ("ringflake_lease_lost_writes_total", "counter"),
    ("ringflake_lease_expiry_timestamp_seconds", "gauge"),
    ("ringflake_lease_fenced", "gauge"),
    ("ringflake_clock_skew_seconds", "gauge"),
    ("ringflake_build_info", "gauge"),
];

/// The series only a generator with a lease in a server database has (none here: see
/// tests/server_workers.rs and tests/hostile.rs).
const CLOCK_SKEW: &str = "ringflake_clock_skew_seconds";

/// The series only a generator with a worker lease has.
const LEASE_EXPIRY: &str = "ringflake_lease_expiry_timestamp_seconds";

/// Also only with a worker lease: 1 while the lease says nothing may be served (ZooKeeper's
/// fence; tests/zookeeper.rs sees it at 1).
const LEASE_FENCED: &str = "ringflake_lease_fenced";

/// A frozen clock for every generator here (2027-01-15).
const T: i64 = 1_800_000_000;

/// 13 sequence bits and the default boost power: rings of 65,536 IDs, 8 seconds' worth, whatever
/// `Layout::default()` becomes (the counts below depend on it).
fn layout() -> Layout {
    Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).expect("valid layout")
}

/// A lead cap no test here reaches (a century), set explicitly: they borrow up to ~170 seconds
/// at a frozen clock. At `Fail`, so that reaching it would fail instead of waiting forever.
const NO_LEAD_CAP: Duration = Duration::from_secs(100 * 365 * 86_400);

/// How long to wait for the background filler or the reporter's thread before failing.
const PATIENCE: Duration = Duration::from_secs(10);

/// `GET /metrics` over a fresh connection; the body of a 200 response.
fn scrape(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("read timeout");
    // HTTP/1.0: the body is sent as is (no chunked encoding) and the server closes afterwards.
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .expect("send request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read response");
    let (head, body) = response
        .split_once("\r\n\r\n")
        .expect("a response with headers");
    assert!(
        head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
        "{head}"
    );
    body.to_owned()
}

/// The value of `name{generator="<generator>"}` in a scrape, if the series is there.
fn value(text: &str, name: &str, generator: &str) -> Option<f64> {
    let prefix = format!("{name}{{generator=\"{generator}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map(|v| v.parse().expect("a number"))
}

/// As [`value`], for a series that must be there.
fn get(text: &str, name: &str, generator: &str) -> f64 {
    value(text, name, generator)
        .unwrap_or_else(|| panic!("no {name}{{generator=\"{generator}\"}} in:\n{text}"))
}

/// Scrapes until `done` holds for the scraped value, or fails after [`PATIENCE`].
fn scrape_until(
    addr: SocketAddr,
    name: &str,
    generator: &str,
    what: &str,
    done: impl Fn(f64) -> bool,
) -> String {
    let start = Instant::now();
    loop {
        let text = scrape(addr);
        if value(&text, name, generator).is_some_and(&done) {
            return text;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "{name}{{generator=\"{generator}\"}}: {what} not seen within {PATIENCE:?}; last scrape:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Installs the exporter on a free port: bind port 0 to learn one, release it, install there
/// (retried, as another process may take the port in between).
fn install_on_free_port() -> SocketAddr {
    let mut last = None;
    for _ in 0..5 {
        let addr = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port");
        match install_prometheus(addr) {
            Ok(_) => return addr,
            Err(e) => last = Some(e),
        }
    }
    panic!("cannot install the exporter: {last:?}");
}

/// The deterministic generator: frozen manual clock, filled only by `pad()` and by takes that
/// find the ring empty.
fn manual() -> CachedUidGenerator {
    CachedUidGenerator::builder(layout())
        .worker_id(7)
        .clock(ManualClock::from_seconds(T))
        .background_filler(false)
        .max_lead(NO_LEAD_CAP, LeadPolicy::Fail)
        .boost_power(0)
        .build()
        .expect("manual generator")
}

fn take(g: &CachedUidGenerator, n: u64) {
    for _ in 0..n {
        g.next_id().expect("next_id");
    }
}

/// Two rings' worth as fast as possible drain the ring: issued follows exactly (from `before`),
/// and the ring is seen refilled. Then overload without a lead cap: 20 rings (20 seconds of IDs;
/// the rings here hold one second) at a frozen clock push the lead past 16 s however long the
/// machine takes for them.
/// Each seen through scrapes alone.
fn burst_then_overload(addr: SocketAddr, g: &CachedUidGenerator, generator: &str, before: u64) {
    take(g, 2 * 8_192);
    let expected = (before + 2 * 8_192) as f64;
    scrape_until(
        addr,
        "ringflake_ids_issued_total",
        generator,
        "2 rings issued",
        |v| v == expected,
    );
    scrape_until(
        addr,
        "ringflake_ring_available",
        generator,
        "the ring refilled",
        |v| v >= 0.7 * 8_192.0,
    );
    take(g, 20 * 8_192);
    scrape_until(
        addr,
        "ringflake_time_lead_seconds",
        generator,
        "a lead above 16 s",
        |v| v > 16.0,
    );
}

#[test]
fn exporter_tracks_generators_over_http() {
    let addr = install_on_free_port();

    // --- A deterministic generator, sampled on demand only (the interval is an hour). ---
    let g = Arc::new(manual());
    let reporter = MetricsReporter::builder("manual", &g)
        .interval(Duration::from_secs(3600))
        .start()
        .expect("reporter");
    let text = scrape(addr);
    let cap = get(&text, "ringflake_ring_capacity", "manual");
    assert_eq!(cap, 8_192.0);
    assert_eq!(get(&text, "ringflake_ring_available", "manual"), cap);
    assert_eq!(get(&text, "ringflake_ring_fill_ratio", "manual"), 1.0);
    assert_eq!(get(&text, "ringflake_ids_issued_total", "manual"), 0.0);
    assert_eq!(get(&text, "ringflake_take_waits_total", "manual"), 0.0);
    assert_eq!(get(&text, "ringflake_worker_id", "manual"), 7.0);
    assert_eq!(get(&text, "ringflake_filler_up", "manual"), 1.0);
    assert_eq!(get(&text, "ringflake_time_lag_seconds", "manual"), 0.0);
    let remaining = get(&text, "ringflake_time_remaining_seconds", "manual");
    let max_delta = layout().max_delta_seconds() as f64;
    let now_delta = (T - layout().epoch_seconds()) as f64;
    assert!(
        remaining <= max_delta - now_delta && remaining > max_delta - now_delta - 60.0,
        "remaining {remaining}"
    );
    // No assigner source: the series is omitted, not 0.
    assert_eq!(
        value(&text, "ringflake_worker_ids_remaining", "manual"),
        None
    );
    // A burst drains the ring: available falls...
    take(&g, 8_192 - 100);
    reporter.sample();
    let text = scrape(addr);
    assert_eq!(get(&text, "ringflake_ring_available", "manual"), 100.0);
    assert_eq!(
        get(&text, "ringflake_ring_fill_ratio", "manual"),
        100.0 / 8_192.0
    );
    assert_eq!(
        get(&text, "ringflake_ids_issued_total", "manual"),
        cap - 100.0
    );
    // ... and recovers once the filler has run: every chunk but the two last taken from (the one
    // still in use and the margin behind it) is written again, 6 of the 8 chunks of 1,024.
    g.pad();
    reporter.sample();
    let text = scrape(addr);
    let refilled = get(&text, "ringflake_ring_available", "manual");
    assert_eq!(refilled, 100.0 + 6.0 * 1024.0, "available after pad");
    assert!(get(&text, "ringflake_ring_fill_ratio", "manual") >= 0.75);
    let paddings = get(&text, "ringflake_paddings_total", "manual");
    assert!(paddings >= 2.0, "paddings {paddings}"); // the build's round and this one

    // Issued grows by exactly the IDs taken.
    let before = get(&text, "ringflake_ids_issued_total", "manual");
    take(&g, 5_000);
    reporter.sample();
    let text = scrape(addr);
    assert_eq!(
        get(&text, "ringflake_ids_issued_total", "manual"),
        before + 5_000.0
    );

    // Waits count a take that found the ring empty.
    while g.try_next_id().is_some() {}
    reporter.sample();
    let text = scrape(addr);
    assert_eq!(get(&text, "ringflake_ring_available", "manual"), 0.0);
    assert_eq!(get(&text, "ringflake_ring_fill_ratio", "manual"), 0.0);
    let waits = get(&text, "ringflake_take_waits_total", "manual");
    assert_eq!(waits, 0.0);
    g.next_id()
        .expect("a take on an empty ring waits, then succeeds");
    reporter.sample();
    let text = scrape(addr);
    assert_eq!(get(&text, "ringflake_take_waits_total", "manual"), 1.0);

    // Lead rises under overload (no cap): 100 one-second rings at a frozen clock borrow ~100 s.
    let lead_before = get(&text, "ringflake_time_lead_seconds", "manual");
    let remaining_before = get(&text, "ringflake_time_remaining_seconds", "manual");
    take(&g, 100 * 8_192);
    reporter.sample();
    let text = scrape(addr);
    let lead = get(&text, "ringflake_time_lead_seconds", "manual");
    assert!(
        lead >= lead_before + 70.0,
        "lead {lead_before} -> {lead} s after 100 rings at a frozen clock"
    );
    // Borrowed seconds count as used.
    assert!(get(&text, "ringflake_time_remaining_seconds", "manual") <= remaining_before - 70.0);

    // --- A live generator: background filler, sampled by the reporter's thread. Its clock is
    // frozen too: the overload below must borrow ahead however slowly this machine takes IDs. ---
    let layout = layout();
    let live = Arc::new(
        CachedUidGenerator::builder(layout)
            .worker_id(8)
            .clock(ManualClock::from_seconds(T))
            .max_lead(NO_LEAD_CAP, LeadPolicy::Fail)
            .boost_power(0)
            .build()
            .expect("live generator"),
    );
    let live_reporter = MetricsReporter::builder("live", &live)
        .interval(Duration::from_millis(20))
        .worker_ids_remaining(move || Some(layout.max_worker_id() - 8))
        .start()
        .expect("live reporter");
    let text = scrape(addr);
    assert_eq!(get(&text, "ringflake_filler_up", "live"), 1.0);
    assert_eq!(get(&text, "ringflake_worker_id", "live"), 8.0);
    assert_eq!(
        get(&text, "ringflake_worker_ids_remaining", "live"),
        (layout.max_worker_id() - 8) as f64
    );
    // A generator with a worker lease (a SQLite table, recycling): its expiry, and no failed
    // extension; one without (`live`, a fixed worker id) has no expiry series.
    #[cfg(feature = "sqlite")]
    let (_table_dir, _leased, _leased_reporter) = {
        let dir = tempfile::tempdir().expect("temp dir");
        let assigner = ringflake::DatabaseAssigner::sqlite(dir.path().join("w.db"))
            .expect("a SQLite worker table")
            .timeout(Duration::from_millis(200))
            // Written once per third of the window: a short one, so that extensions are due
            // (and fail, below) within seconds.
            .lease_window(Duration::from_secs(3));
        let leased = Arc::new(
            CachedUidGenerator::builder(layout)
                .worker_id_from(&assigner)
                .build()
                .expect("leased generator"),
        );
        // Sampled only when asked to: each scrape below shows the sample before it.
        let reporter = MetricsReporter::builder("leased", &leased)
            .interval(Duration::from_secs(3600))
            .start()
            .expect("leased reporter");
        let first = reporter.sample().expect("the generator is alive");
        let until = first.lease_until.expect("a lease");
        let text = scrape(addr);
        assert_eq!(get(&text, LEASE_EXPIRY, "leased"), until as f64);
        assert_eq!(get(&text, LEASE_FENCED, "leased"), 0.0);
        assert_eq!(
            get(&text, "ringflake_lease_extension_failures_total", "leased"),
            0.0
        );
        assert!(!text.contains(&format!("{LEASE_EXPIRY}{{generator=\"live\"}}")));
        // Another connection holds the table's write lock: extensions fail (once due, about one
        // a second),
        // are counted, and the error is SQLite's.
        let holder = rusqlite::Connection::open(dir.path().join("w.db")).expect("open");
        holder
            .execute_batch("BEGIN EXCLUSIVE")
            .expect("the write lock");
        let start = Instant::now();
        while leased.stats().lease_extension_failures < 2 {
            assert!(start.elapsed() < PATIENCE * 3, "no failed extension");
            std::thread::sleep(Duration::from_millis(50));
        }
        let stats = reporter.sample().expect("the generator is alive");
        assert!(
            stats.lease_lost && stats.lease_failing_since.is_some(),
            "{stats:?}"
        );
        let error = leased.lease_error().expect("the last extension's error");
        assert!(error.to_string().contains("database is locked"), "{error}");
        assert!(std::error::Error::source(&error).is_some(), "{error:?}");
        let text = scrape(addr);
        assert_eq!(
            get(&text, "ringflake_lease_extension_failures_total", "leased"),
            stats.lease_extension_failures as f64
        );
        let held = stats.lease_until.expect("a lease");
        assert_eq!(get(&text, LEASE_EXPIRY, "leased"), held as f64);
        // Failing extensions do not fence a worker table's lease: it serves on until it ends.
        assert_eq!(get(&text, LEASE_FENCED, "leased"), 0.0);
        holder.execute_batch("COMMIT").expect("release the lock");
        (dir, leased, reporter)
    };
    let text = scrape(addr);
    assert_eq!(
        get(&text, "ringflake_lease_extension_failures_total", "live"),
        0.0
    );
    // Which build runs: the crate's version and the commit, on a series of its own.
    let build = format!(
        "ringflake_build_info{{version=\"{}\",commit=\"",
        env!("CARGO_PKG_VERSION")
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with(&build) && l.ends_with("\"} 1")),
        "no {build}…}} 1 in:\n{text}"
    );
    // Every series (ringflake_worker_ids_remaining now too) is described with its type and a HELP text that names a unit.
    for (name, kind) in SERIES {
        if (name == LEASE_EXPIRY || name == LEASE_FENCED) && cfg!(not(feature = "sqlite"))
            || name == CLOCK_SKEW
        {
            continue;
        }
        assert!(text.contains(&format!("# TYPE {name} {kind}\n")), "{name}");
        let help = text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("# HELP {name} ")))
            .unwrap_or_else(|| panic!("no HELP for {name}"));
        assert!(
            [
                "in IDs",
                "in seconds",
                "in rounds",
                "in takes",
                "in worker ids",
                "in attempts",
                "in heals",
                "in lost writes",
                "unit"
            ]
            .iter()
            .any(|u| help.contains(u)),
            "HELP of {name} names no unit: {help}"
        );
    }

    // Two generators, two label values, the same series names.
    assert_eq!(get(&text, "ringflake_worker_id", "manual"), 7.0);

    // Issued, seen through the interval alone (no on-demand sample).
    take(&live, 1_000);
    scrape_until(
        addr,
        "ringflake_ids_issued_total",
        "live",
        "1000 issued",
        |v| v == 1_000.0,
    );
    burst_then_overload(addr, &live, "live", 1_000);

    // The reporter does not keep its generator alive, and stops with it.
    drop(live);
    assert!(live_reporter.sample().is_none());
    drop(live_reporter);

    // --- A generator whose filler records its own series: no reporter thread at all. ---
    let filled = CachedUidGenerator::builder(layout)
        .worker_id(9)
        .clock(ManualClock::from_seconds(T))
        .max_lead(NO_LEAD_CAP, LeadPolicy::Fail)
        .boost_power(0)
        .schedule_interval(Duration::from_millis(20))
        .record_stats(GeneratorMetrics::register("filler"))
        .build()
        .expect("filler-recorded generator");
    let text = scrape_until(addr, "ringflake_worker_id", "filler", "worker id 9", |v| {
        v == 9.0
    });
    assert_eq!(get(&text, "ringflake_filler_up", "filler"), 1.0);
    assert_eq!(get(&text, "ringflake_ring_capacity", "filler"), 8_192.0);
    // With no reporter, the filler's own rounds record all of it.
    burst_then_overload(addr, &filled, "filler", 0);
    // The filler's last record, as its thread ends: filler_up 0 and the final count.
    let issued = filled.stats().issued;
    drop(filled);
    let text = scrape(addr);
    assert_eq!(get(&text, "ringflake_filler_up", "filler"), 0.0);
    assert_eq!(
        get(&text, "ringflake_ids_issued_total", "filler"),
        issued as f64
    );

    // Only one global recorder per process, and the error says what to do.
    let again = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let err = install_prometheus(again).unwrap_err().to_string();
    assert!(err.contains("already installed"), "{err}");
    assert!(err.contains(&again.to_string()), "{err}");

    // The series tables of docs/monitoring.md and of MetricsReporter's documentation list every
    // series; they, the README, the dashboard and the alert rules name only real ones.
    let monitoring = include_str!("../../../docs/monitoring.md");
    let reporter = include_str!("../src/metrics/reporter.rs");
    for (name, _) in SERIES {
        for (file, text) in [
            ("docs/monitoring.md", monitoring),
            ("src/metrics/reporter.rs", reporter),
        ] {
            assert!(
                text.contains(&format!("| `{name}` |")),
                "{file}'s series table lacks {name}"
            );
        }
    }
    for name in SEGMENT_SERIES
        .iter()
        .filter(|n| !n.ends_with("_sum") && !n.ends_with("_count"))
    {
        assert!(
            monitoring.contains(&format!("| `{name}` |")),
            "docs/monitoring.md's segment series table lacks {name}"
        );
    }
    for (file, text) in [
        ("README.md", include_str!("../../../README.md")),
        ("docs/monitoring.md", monitoring),
        (
            "examples/grafana-dashboard.json",
            include_str!("../../../examples/grafana-dashboard.json"),
        ),
        (
            "examples/prometheus-alerts.yml",
            include_str!("../../../examples/prometheus-alerts.yml"),
        ),
    ] {
        for token in text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            // `ringflake_*` names them all: only whole names are checked.
            .filter(|t| t.starts_with("ringflake_") && *t != "ringflake_")
        {
            assert!(
                SERIES.iter().any(|(name, _)| *name == token)
                    || SERVE_SERIES.contains(&token)
                    || SEGMENT_SERIES.contains(&token),
                "{file} names {token}, which is not exported"
            );
        }
    }
}

#[test]
fn address_in_use_is_a_clear_error() {
    // Nothing is installed when the bind fails, so this does not disturb the global recorder of
    // the other test.
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr");
    let err = install_prometheus(addr).unwrap_err().to_string();
    assert!(err.contains(&addr.to_string()), "{err}");
    assert!(err.contains("choose a free address"), "{err}");
}

/// A recorder that counts registrations and keeps nothing: shows that sampling re-uses the
/// handles registered at start.
#[derive(Default)]
struct CountingRecorder {
    registrations: AtomicU64,
}

struct Nop;
impl CounterFn for Nop {
    fn increment(&self, _: u64) {}
    fn absolute(&self, _: u64) {}
}
impl GaugeFn for Nop {
    fn increment(&self, _: f64) {}
    fn decrement(&self, _: f64) {}
    fn set(&self, _: f64) {}
}

impl Recorder for CountingRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
        self.registrations.fetch_add(1, Ordering::Relaxed);
        Counter::from_arc(Arc::new(Nop))
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        self.registrations.fetch_add(1, Ordering::Relaxed);
        Gauge::from_arc(Arc::new(Nop))
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        self.registrations.fetch_add(1, Ordering::Relaxed);
        Histogram::noop()
    }
}

#[test]
fn handles_are_registered_once() {
    let recorder = CountingRecorder::default();
    let g = Arc::new(manual());
    let reporter = metrics::with_local_recorder(&recorder, || {
        let reporter = MetricsReporter::builder("once", &g)
            .interval(Duration::from_secs(3600))
            .worker_ids_remaining(|| Some(5))
            .start()
            .expect("reporter");
        for _ in 0..1_000 {
            g.next_id().expect("next_id");
            reporter.sample();
        }
        reporter
    });
    // 18 series at start (no lease here: no expiry series) and the build's, then
    // ringflake_worker_ids_remaining at its first value; none per sample.
    assert_eq!(recorder.registrations.load(Ordering::Relaxed), 20);
    drop(reporter);
}

/// A generator with a lease: its expiry series is registered with the first sample, once.
#[cfg(feature = "sqlite")]
#[test]
fn the_lease_expiry_is_registered_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let assigner =
        ringflake::DatabaseAssigner::sqlite(dir.path().join("w.db")).expect("a worker table");
    let g = Arc::new(
        CachedUidGenerator::builder(layout())
            .worker_id_from(&assigner)
            .build()
            .expect("leased generator"),
    );
    let recorder = CountingRecorder::default();
    let reporter = metrics::with_local_recorder(&recorder, || {
        let reporter = MetricsReporter::builder("leased", &g)
            .interval(Duration::from_secs(3600))
            .start()
            .expect("reporter");
        for _ in 0..100 {
            reporter.sample();
        }
        reporter
    });
    // 18 at start and the build's, the lease's expiry and fence with the first sample.
    assert_eq!(recorder.registrations.load(Ordering::Relaxed), 21);
    drop(reporter);
}

#[test]
fn worker_ids_remaining_appears_only_when_known() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let known = Arc::new(AtomicU64::new(u64::MAX));
    let g = Arc::new(manual());
    let source = Arc::clone(&known);
    metrics::with_local_recorder(&recorder, || {
        let reporter = MetricsReporter::builder("assigner", &g)
            .interval(Duration::from_secs(3600))
            .worker_ids_remaining(move || {
                Some(source.load(Ordering::Relaxed)).filter(|&n| n != u64::MAX)
            })
            .start()
            .expect("reporter");
        let text = recorder.handle().render();
        assert_eq!(
            value(&text, "ringflake_worker_ids_remaining", "assigner"),
            None
        );
        known.store(17, Ordering::Relaxed);
        reporter.sample();
        let text = recorder.handle().render();
        assert_eq!(
            value(&text, "ringflake_worker_ids_remaining", "assigner"),
            Some(17.0)
        );
        // Unknown again: the last known value stays.
        known.store(u64::MAX, Ordering::Relaxed);
        reporter.sample();
        let text = recorder.handle().render();
        assert_eq!(
            value(&text, "ringflake_worker_ids_remaining", "assigner"),
            Some(17.0)
        );
    });
}

#[test]
fn generator_metrics_records_a_snapshot() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let series = metrics::with_local_recorder(&recorder, || GeneratorMetrics::register("snap"));
    let g = manual();
    take(&g, 5);
    let mut stats = g.stats();
    series.record(&stats);
    let text = recorder.handle().render();
    assert_eq!(get(&text, "ringflake_ids_issued_total", "snap"), 5.0);
    // Counters are the generator's totals, set with `absolute`: a stale, smaller snapshot (e.g.
    // from another thread) never moves them back.
    stats.issued = 3;
    series.record(&stats);
    let text = recorder.handle().render();
    assert_eq!(get(&text, "ringflake_ids_issued_total", "snap"), 5.0);
    // A filler that died shows as 0.
    stats.filler_up = false;
    series.record(&stats);
    let text = recorder.handle().render();
    assert_eq!(get(&text, "ringflake_filler_up", "snap"), 0.0);
}

/// Every alert of examples/prometheus-alerts.yml is in docs/monitoring.md's table and has a
/// unit test in examples/prometheus-alerts.test.yml, and the table lists no alert the file
/// lacks (`.ci/run` loads the rules in Prometheus and runs the unit tests with `promtool`).
#[test]
fn the_alerts_table_and_the_unit_tests_name_every_rule() {
    let rules = include_str!("../../../examples/prometheus-alerts.yml");
    let tests = include_str!("../../../examples/prometheus-alerts.test.yml");
    let monitoring = include_str!("../../../docs/monitoring.md");
    let alerts: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
        .collect();
    assert!(alerts.len() >= 14, "{alerts:?}");
    for alert in &alerts {
        assert!(
            monitoring.contains(&format!("| `{alert}` |")),
            "docs/monitoring.md's alerts table lacks {alert}"
        );
        assert!(
            tests.contains(&format!("alertname: {alert}\n")),
            "examples/prometheus-alerts.test.yml does not test {alert}"
        );
    }
    let listed: Vec<&str> = monitoring
        .lines()
        .filter_map(|l| l.strip_prefix("| `Ringflake"))
        .filter_map(|l| l.split('`').next())
        .collect();
    assert_eq!(
        listed.len(),
        alerts.len(),
        "docs/monitoring.md lists {listed:?}"
    );
}
