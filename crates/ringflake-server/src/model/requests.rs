//! What the service counts per request, for `/metrics`: HTTP requests by route, method and
//! status, gRPC calls by method and code, and a latency histogram of each.
//!
//! # Cost
//!
//! A request adds one to two counters and the elapsed nanoseconds to a sum, all relaxed atomic
//! adds on counters of the serving thread's own (each thread has a [`Shard`], registered once,
//! when the thread serves its first request, in the list `/metrics` sums): no lock, no
//! allocation, no label lookup, no cache line shared between threads; its bucket is found by
//! comparing whole nanoseconds. The histogram's buckets are fixed ([`BUCKETS`]), so memory does
//! not grow with the number of requests, whether or not anyone scrapes. The labels are a fixed
//! set (the route table, the methods the routes answer, the service's statuses, the gRPC methods
//! and codes), so a client cannot grow the series by asking for made-up paths or methods: an
//! unknown path counts as `route="none"`, an unknown method as `method="other"`.

use super::routes::{METHODS, ROUTES};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The histograms' upper bounds, seconds: from 100 µs (an ID from the ring, answered at once) to
/// 15 s (the default `--max-wait`, a take that waited in vain at the lead cap).
pub const BUCKETS: [f64; 16] = [
    0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 15.0,
];

/// [`BUCKETS`] in whole nanoseconds: what an observation is compared with.
const BUCKET_NANOS: [u64; 16] = [
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    15_000_000_000,
];

/// Slots per histogram: the buckets, one above the last (`+Inf`), and the sum in nanoseconds.
const SLOTS: usize = BUCKETS.len() + 2;

/// HTTP methods: the route table's ([`METHODS`]) and `other` (answered 405).
const HTTP_METHODS: usize = METHODS.len() + 1;

/// The HTTP statuses counted by their code; any other counts as `status="other"`.
const STATUSES: [u16; 8] = [200, 400, 401, 404, 405, 413, 500, 503];

/// HTTP routes: the route table's, and `none` (no route: a 404, or a method not allowed).
const HTTP_ROUTES: usize = ROUTES.len() + 1;

/// The gRPC methods counted by name, `(service, method)`; any other counts as `method="other"`
/// of `service="other"`.
pub const GRPC_METHODS: [(&str, &str); 7] = [
    ("ringflake.v1.IdService", "Next"),
    ("ringflake.v1.IdService", "Batch"),
    ("ringflake.v1.IdService", "Stream"),
    ("ringflake.v1.IdService", "Parse"),
    ("grpc.health.v1.Health", "Check"),
    ("grpc.health.v1.Health", "Watch"),
    (
        "grpc.reflection.v1.ServerReflection",
        "ServerReflectionInfo",
    ),
];

/// The gRPC status codes' names, by number (0 to 16).
const GRPC_CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// gRPC methods: [`GRPC_METHODS`] and `other`.
const GRPC_KEYS: usize = GRPC_METHODS.len() + 1;

/// HTTP series: one per route and method.
const HTTP_KEYS: usize = HTTP_ROUTES * HTTP_METHODS;

/// One serving thread's counters.
pub struct Shard {
    http_count: [AtomicU64; HTTP_KEYS * (STATUSES.len() + 1)],
    http_latency: [AtomicU64; HTTP_KEYS * SLOTS],
    grpc_count: [AtomicU64; GRPC_KEYS * GRPC_CODES.len()],
    grpc_latency: [AtomicU64; GRPC_KEYS * SLOTS],
}

/// Every shard, for `/metrics` to sum.
static SHARDS: Mutex<Vec<Arc<Shard>>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's shard, registered in [`SHARDS`] on first use.
    static SHARD: Arc<Shard> = {
        let shard = Arc::new(Shard::new());
        SHARDS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::clone(&shard));
        shard
    };
}

impl Shard {
    fn new() -> Shard {
        Shard {
            http_count: std::array::from_fn(|_| AtomicU64::new(0)),
            http_latency: std::array::from_fn(|_| AtomicU64::new(0)),
            grpc_count: std::array::from_fn(|_| AtomicU64::new(0)),
            grpc_latency: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// Adds one observation of `nanos` nanoseconds to the histogram starting at `slots[0]`.
#[inline]
fn observe(slots: &[AtomicU64], nanos: u64) {
    // An answer made at once, the common case, is in the first bucket: no search for it.
    let bucket = if nanos <= BUCKET_NANOS[0] {
        0
    } else {
        BUCKET_NANOS.partition_point(|&b| b < nanos)
    };
    slots[bucket].fetch_add(1, Ordering::Relaxed);
    slots[SLOTS - 1].fetch_add(nanos, Ordering::Relaxed);
}

/// The index of `method` in [`METHODS`]; `None`: another (answered 405).
pub fn method_index(method: &hyper::Method) -> Option<usize> {
    METHODS.iter().position(|m| m == method)
}

/// Where an HTTP series is in a shard: its counter's index in `http_count` and its histogram's
/// first slot in `http_latency`. `route` is an index in [`ROUTES`] and `method` in [`METHODS`];
/// `None` (or one past the end): the `none` route, the `other` method.
fn http_slots(route: Option<usize>, method: Option<usize>, status: u16) -> (usize, usize) {
    let r = route.unwrap_or(ROUTES.len()).min(ROUTES.len());
    let m = method.unwrap_or(METHODS.len()).min(METHODS.len());
    let key = r * HTTP_METHODS + m;
    let s = STATUSES
        .iter()
        .position(|&x| x == status)
        .unwrap_or(STATUSES.len());
    (key * (STATUSES.len() + 1) + s, key * SLOTS)
}

/// Counts an HTTP request: `route` its index in [`ROUTES`] (`None`: no route), `method` its
/// index in [`METHODS`] ([`method_index`]), `status` the answer's, `nanos` from its head read
/// to its answer made.
pub fn http(route: Option<usize>, method: Option<usize>, status: u16, nanos: u64) {
    let (count, latency) = http_slots(route, method, status);
    SHARD.with(|shard| {
        shard.http_count[count].fetch_add(1, Ordering::Relaxed);
        observe(&shard.http_latency[latency..latency + SLOTS], nanos);
    });
}

/// One HTTP series of this thread's counters (a route, a method and a status), registered once
/// (a connection's, for its ID routes' answers): counting a request is two relaxed adds and the
/// bucket's, with no index to work out and no thread-local to look up.
pub struct Series {
    shard: Arc<Shard>,
    /// The series' counter in `http_count`.
    count: usize,
    /// Its histogram's first slot in `http_latency`.
    latency: usize,
    /// The status it counts.
    status: u16,
}

impl Series {
    /// The series of `route` (its index in [`ROUTES`]), `method` (in [`METHODS`]) and `status`
    /// on this thread's counters.
    pub fn new(route: usize, method: usize, status: u16) -> Series {
        let (count, latency) = http_slots(Some(route), Some(method), status);
        Series {
            shard: SHARD.with(Arc::clone),
            count,
            latency,
            status,
        }
    }

    /// The status this series counts.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Counts a request of this series answered in `nanos` nanoseconds, as [`http`] does.
    pub fn count(&self, nanos: u64) {
        self.shard.http_count[self.count].fetch_add(1, Ordering::Relaxed);
        observe(
            &self.shard.http_latency[self.latency..self.latency + SLOTS],
            nanos,
        );
    }
}

/// The method label of method index `method` (`GET`, `HEAD`; `other`).
pub fn method_label(method: Option<usize>) -> &'static str {
    method
        .and_then(|m| METHODS.get(m))
        .map_or("other", hyper::Method::as_str)
}

/// The index in [`GRPC_METHODS`] of a gRPC request's path (`/ringflake.v1.IdService/Next`);
/// `None`: another.
pub fn grpc_method(path: &str) -> Option<usize> {
    let (service, method) = path.strip_prefix('/')?.split_once('/')?;
    GRPC_METHODS
        .iter()
        .position(|&(s, m)| s == service && m == method)
}

/// Counts a gRPC call: `method` from [`grpc_method`], `code` its status code (0: OK), `nanos`
/// to its response's headers.
pub fn grpc(method: Option<usize>, code: u16, nanos: u64) {
    let m = method.unwrap_or(GRPC_METHODS.len()).min(GRPC_METHODS.len());
    let c = usize::from(code).min(GRPC_CODES.len() - 1);
    SHARD.with(|shard| {
        shard.grpc_count[m * GRPC_CODES.len() + c].fetch_add(1, Ordering::Relaxed);
        observe(&shard.grpc_latency[m * SLOTS..(m + 1) * SLOTS], nanos);
    });
}

/// The name of gRPC code `code`.
pub fn grpc_code_name(code: u16) -> &'static str {
    GRPC_CODES
        .get(usize::from(code))
        .copied()
        .unwrap_or("UNKNOWN")
}

/// The route label of route index `route` (`/ids`, `/parse/{id}`; `none`).
pub fn route_label(route: Option<usize>) -> &'static str {
    match route.and_then(|r| ROUTES.get(r)) {
        Some(r) => r.usage.split_once('?').map_or(r.usage, |(path, _)| path),
        None => "none",
    }
}

/// The sums of every shard's counters.
struct Totals {
    http_count: Vec<u64>,
    http_latency: Vec<u64>,
    grpc_count: Vec<u64>,
    grpc_latency: Vec<u64>,
}

fn totals() -> Totals {
    let shards = SHARDS.lock().unwrap_or_else(|e| e.into_inner());
    let sum = |len: usize, pick: &dyn Fn(&Shard) -> &[AtomicU64]| {
        let mut out = vec![0u64; len];
        for shard in shards.iter() {
            for (o, c) in out.iter_mut().zip(pick(shard)) {
                *o = o.wrapping_add(c.load(Ordering::Relaxed));
            }
        }
        out
    };
    Totals {
        http_count: sum(HTTP_KEYS * (STATUSES.len() + 1), &|s| &s.http_count),
        http_latency: sum(HTTP_KEYS * SLOTS, &|s| &s.http_latency),
        grpc_count: sum(GRPC_KEYS * GRPC_CODES.len(), &|s| &s.grpc_count),
        grpc_latency: sum(GRPC_KEYS * SLOTS, &|s| &s.grpc_latency),
    }
}

/// Appends one histogram's series (`name_bucket`, `name_sum`, `name_count`) with `labels`.
fn histogram(out: &mut String, name: &str, labels: &str, slots: &[u64]) {
    let mut cumulative = 0u64;
    for (i, bound) in BUCKETS.iter().enumerate() {
        cumulative += slots[i];
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {cumulative}");
    }
    cumulative += slots[BUCKETS.len()];
    let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {cumulative}");
    let sum = slots[SLOTS - 1] as f64 / 1e9;
    let _ = writeln!(out, "{name}_sum{{{labels}}} {sum}");
    let _ = writeln!(out, "{name}_count{{{labels}}} {cumulative}");
}

/// The request series in Prometheus's text format, for `/metrics`: each route and method once it
/// has been asked for.
pub fn render(out: &mut String) {
    let t = totals();
    let per_key = STATUSES.len() + 1;
    // The labels of HTTP series `key` (route and method).
    let http_labels = |key: usize| {
        let (r, m) = (key / HTTP_METHODS, key % HTTP_METHODS);
        format!(
            "route=\"{}\",method=\"{}\"",
            route_label((r < ROUTES.len()).then_some(r)),
            method_label((m < METHODS.len()).then_some(m))
        )
    };
    out.push_str(
        "# HELP ringflake_http_requests_total HTTP requests answered, by route, method and \
         status\n\
         # TYPE ringflake_http_requests_total counter\n",
    );
    for key in 0..HTTP_KEYS {
        for s in 0..per_key {
            let n = t.http_count[key * per_key + s];
            if n > 0 {
                let status = STATUSES.get(s).map_or("other".to_string(), u16::to_string);
                let _ = writeln!(
                    out,
                    "ringflake_http_requests_total{{{},status=\"{status}\"}} {n}",
                    http_labels(key)
                );
            }
        }
    }
    out.push_str(
        "# HELP ringflake_http_request_duration_seconds HTTP requests' time from the request \
         read to the answer made, by route and method\n\
         # TYPE ringflake_http_request_duration_seconds histogram\n",
    );
    for key in 0..HTTP_KEYS {
        let slots = &t.http_latency[key * SLOTS..(key + 1) * SLOTS];
        if slots[..SLOTS - 1].iter().any(|&n| n > 0) {
            histogram(
                out,
                "ringflake_http_request_duration_seconds",
                &http_labels(key),
                slots,
            );
        }
    }
    let grpc_labels = |m: usize| match GRPC_METHODS.get(m) {
        Some((service, method)) => format!("service=\"{service}\",method=\"{method}\""),
        None => "service=\"other\",method=\"other\"".to_string(),
    };
    out.push_str(
        "# HELP ringflake_grpc_requests_total gRPC calls answered, by service, method and code \
         (the code of the response's headers: a stream that fails after its first message \
         counts as OK)\n\
         # TYPE ringflake_grpc_requests_total counter\n",
    );
    for m in 0..GRPC_KEYS {
        for (c, code) in GRPC_CODES.iter().enumerate() {
            let n = t.grpc_count[m * GRPC_CODES.len() + c];
            if n > 0 {
                let _ = writeln!(
                    out,
                    "ringflake_grpc_requests_total{{{},code=\"{code}\"}} {n}",
                    grpc_labels(m)
                );
            }
        }
    }
    out.push_str(
        "# HELP ringflake_grpc_request_duration_seconds gRPC calls' time from the request read \
         to the response's headers, by service and method\n\
         # TYPE ringflake_grpc_request_duration_seconds histogram\n",
    );
    for m in 0..GRPC_KEYS {
        let slots = &t.grpc_latency[m * SLOTS..(m + 1) * SLOTS];
        if slots[..SLOTS - 1].iter().any(|&n| n > 0) {
            histogram(
                out,
                "ringflake_grpc_request_duration_seconds",
                &grpc_labels(m),
                slots,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn nanos(d: Duration) -> u64 {
        u64::try_from(d.as_nanos()).expect("a test's duration")
    }

    /// Observations land in the first bucket at or above them; the histogram is cumulative, its
    /// count the sum of its buckets, its sum in seconds.
    #[test]
    fn buckets_counts_and_labels() {
        let id = ROUTES.iter().position(|r| r.usage == "/id");
        let get = method_index(&hyper::Method::GET);
        let head = method_index(&hyper::Method::HEAD);
        let post = method_index(&hyper::Method::POST);
        assert_eq!((get, head, post), (Some(0), Some(1), None));
        // Counted from another thread, so that this test's counts are a shard of their own
        // beside whatever other tests count.
        std::thread::spawn(move || {
            http(id, get, 200, nanos(Duration::from_micros(50)));
            http(id, get, 200, nanos(Duration::from_micros(100))); // on the bound: in its bucket
            http(id, get, 503, nanos(Duration::from_secs(20)));
            http(None, get, 404, nanos(Duration::from_micros(10)));
            http(id, get, 418, nanos(Duration::from_micros(10)));
            http(id, head, 200, nanos(Duration::from_millis(2)));
            http(None, post, 405, nanos(Duration::from_micros(10)));
            grpc(
                grpc_method("/ringflake.v1.IdService/Next"),
                0,
                nanos(Duration::from_micros(300)),
            );
            grpc(grpc_method("/x.Y/Z"), 14, nanos(Duration::from_micros(300)));
        })
        .join()
        .unwrap();
        let mut out = String::new();
        render(&mut out);
        for line in [
            "ringflake_http_requests_total{route=\"/id\",method=\"GET\",status=\"200\"} 2",
            "ringflake_http_requests_total{route=\"/id\",method=\"GET\",status=\"503\"} 1",
            "ringflake_http_requests_total{route=\"/id\",method=\"GET\",status=\"other\"} 1",
            "ringflake_http_requests_total{route=\"/id\",method=\"HEAD\",status=\"200\"} 1",
            "ringflake_http_requests_total{route=\"none\",method=\"GET\",status=\"404\"} 1",
            "ringflake_http_requests_total{route=\"none\",method=\"other\",status=\"405\"} 1",
            "ringflake_http_request_duration_seconds_bucket{route=\"/id\",method=\"GET\",le=\"0.0001\"} 3",
            "ringflake_http_request_duration_seconds_bucket{route=\"/id\",method=\"GET\",le=\"15\"} 3",
            "ringflake_http_request_duration_seconds_bucket{route=\"/id\",method=\"GET\",le=\"+Inf\"} 4",
            "ringflake_http_request_duration_seconds_count{route=\"/id\",method=\"GET\"} 4",
            "ringflake_http_request_duration_seconds_bucket{route=\"/id\",method=\"HEAD\",le=\"0.001\"} 0",
            "ringflake_http_request_duration_seconds_bucket{route=\"/id\",method=\"HEAD\",le=\"0.0025\"} 1",
            "ringflake_grpc_requests_total{service=\"ringflake.v1.IdService\",method=\"Next\",code=\"OK\"} 1",
            "ringflake_grpc_requests_total{service=\"other\",method=\"other\",code=\"UNAVAILABLE\"} 1",
            "ringflake_grpc_request_duration_seconds_bucket{service=\"ringflake.v1.IdService\",method=\"Next\",le=\"0.0005\"} 1",
        ] {
            assert!(out.lines().any(|l| l == line), "{line} not in\n{out}");
        }
        let sum: f64 = out
            .lines()
            .find_map(|l| {
                l.strip_prefix(
                    "ringflake_http_request_duration_seconds_sum{route=\"/id\",method=\"GET\"} ",
                )
            })
            .unwrap()
            .parse()
            .unwrap();
        assert!((sum - 20.00016).abs() < 1e-6, "{sum}");
        // The integer bounds are the labelled ones.
        for (nanos, seconds) in BUCKET_NANOS.iter().zip(BUCKETS) {
            assert_eq!(*nanos as f64 / 1e9, seconds);
        }
        assert_eq!(route_label(None), "none");
        assert_eq!(grpc_code_name(16), "UNAUTHENTICATED");
    }
}
