//! Allocations per request of `/id` and `/api/segment/get/{tag}`, counted by a global allocator
//! that counts each thread's allocations, against the HTTP floor's handler
//! (`examples/http_floor`: a counter's digits as the body, one header).
//!
//! What is counted is what the server calls for a request once hyper has parsed it:
//! [`answer_now`], the route table, the checks and the handler, up to the response it hands
//! back to hyper (hyper's own buffers are the floor's too). The service is not started: a
//! request is built as hyper hands it over, and answered on this thread.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Request, Response, StatusCode};
use ringflake::{CachedUidGenerator, Layout, SegmentTable, TimeZone};
use ringflake_server::model::app::App;
use ringflake_server::model::limits::Limits;
use ringflake_server::model::routes::{Endpoint, ROUTES, Route};
use ringflake_server::model::segments::{Hidden, Plan, Segments};
use ringflake_server::probe::{self, answer_now};
use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The system allocator, counting the allocations (and reallocations) of each thread.
struct Counting;

thread_local! {
    /// This thread's allocations so far.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn counted() {
    // `try_with`: a thread being torn down allocates after its locals are gone.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds `GlobalAlloc`'s contract;
// the count is a thread-local `Cell` with a const initialiser, which itself never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        counted();
        // SAFETY: the caller's `layout` is passed on as `GlobalAlloc::alloc` requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: AllocLayout) -> *mut u8 {
        counted();
        // SAFETY: as `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, new_size: usize) -> *mut u8 {
        counted();
        // SAFETY: `ptr` was allocated by `System` (every allocation goes through it) with
        // `layout`, as the caller guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        // SAFETY: as `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The allocations `f` makes on this thread, and what it returns.
fn allocations<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (ALLOCATIONS.with(Cell::get) - before, out)
}

/// What `examples/http_floor` answers a request with.
fn floor(counter: &AtomicU64) -> Response<Full<Bytes>> {
    let n = counter.fetch_add(1, Ordering::Relaxed);
    let mut res = Response::new(Full::new(Bytes::from(n.to_string())));
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    res
}

/// A service's view with a generator and the segment mode over `leaf_alloc` in `dir`, with
/// business tag `tag`.
fn app(dir: &std::path::Path, tag: &str) -> App {
    let db = dir.join("ids.db");
    let table = ringflake::SegmentTable::sqlite(&db).expect("leaf_alloc");
    table.add(tag, 1, 1_000_000, "").expect("a tag");
    let plan = Plan {
        table: SegmentTable::sqlite(db).map_err(|e| e.to_string()),
        state_dir: None,
        max_wait: Duration::from_secs(5),
        refresh: Duration::from_secs(60),
        hidden: Hidden::None,
    };
    let generator = CachedUidGenerator::builder(Layout::default())
        .worker_id(1)
        .build()
        .expect("a generator");
    App {
        generator: Arc::new(generator),
        layout: Layout::default(),
        tz: TimeZone::UTC,
        metrics: None,
        generators: Arc::default(),
        exposure: ringflake_server::model::routes::Exposure::All,
        auth: None,
        max_wait: Duration::from_secs(5),
        id_key: None,
        segments: Some(Arc::new(Segments::boot(&plan, None))),
        limits: Arc::new(Limits::new(64, 4)),
    }
}

fn get(path: &str) -> Request<()> {
    Request::get(path).body(()).expect("a request")
}

/// The 200's body of `answer_now`'s answer to `req`, which must answer at once.
fn answered(app: &App, req: &Request<()>) -> Response<probe::Answer> {
    let (reply, _route) = answer_now(app, req).expect("answered at once");
    assert_eq!(reply.status(), StatusCode::OK, "{}", req.uri());
    reply
}

/// Allocations per request over `n` requests of `answer`, each answer dropped as hyper drops it.
fn per_request<T>(n: u64, mut answer: impl FnMut() -> T) -> u64 {
    let (count, ()) = allocations(|| {
        for _ in 0..n {
            drop(answer());
        }
    });
    count.div_ceil(n)
}

/// One connection's requests as hyper hands them over: the header map of each request is the
/// one hyper took from the previous answer, emptied (hyper writes the answer's headers out of it,
/// then parses the next request's into it).
#[derive(Default)]
struct Connection {
    headers: hyper::HeaderMap,
}

impl Connection {
    /// The fast way's answer to `GET path`, which must answer 200 at once. The path is shared,
    /// as hyper's are (a view of its read buffer): cloning it allocates nothing.
    fn answer(&mut self, app: &App, path: &hyper::Uri) -> Response<probe::Fast> {
        let mut req = Request::new(());
        *req.uri_mut() = path.clone();
        let mut headers = std::mem::take(&mut self.headers);
        headers.insert(hyper::header::HOST, HeaderValue::from_static("127.0.0.1"));
        *req.headers_mut() = headers;
        let (mut reply, _route) =
            probe::fast_answer(app, &mut req, |body| body).expect("answered at once");
        assert_eq!(reply.status(), StatusCode::OK, "{path}");
        let mut headers = std::mem::take(reply.headers_mut());
        headers.clear();
        self.headers = headers;
        reply
    }
}

#[test]
fn id_routes_allocate_no_more_than_the_floor() {
    let dir = tempfile::tempdir().expect("a directory");
    let tag = "alloc-orders";
    let app = app(dir.path(), tag);
    let route: &Route = ROUTES
        .iter()
        .find(|r| r.endpoint == Endpoint::SegmentGet)
        .expect("the segment route");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    // The first request of a tag on a thread goes the slow way, which caches its handle.
    let first = runtime.block_on(probe::segment_get(&app, route, tag, None, true));
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(first.body, "1");
    let id = get("/id");
    let number = get(&format!("/api/segment/get/{tag}"));
    // Warm: lazily made state (the route table's patterns, the ring's first fill) is made once.
    for _ in 0..100 {
        drop(answered(&app, &id));
        drop(answered(&app, &number));
    }
    let counter = AtomicU64::new(0);
    let n = 1000;
    let floor = per_request(n, || floor(&counter));
    let id_allocations = per_request(n, || answered(&app, &id));
    let segment_allocations = per_request(n, || answered(&app, &number));
    // The server's own way for these requests (`fast`), on a connection as hyper serves it: each
    // request's header map is the previous answer's, handed back by hyper once written.
    let mut connection = Connection::default();
    let id_path = hyper::Uri::from_static("/id");
    let segment_path =
        hyper::Uri::from_maybe_shared(format!("/api/segment/get/{tag}")).expect("a path");
    for _ in 0..100 {
        drop(connection.answer(&app, &id_path));
        drop(connection.answer(&app, &segment_path));
    }
    let (id_fast, ()) = allocations(|| {
        for _ in 0..n {
            drop(connection.answer(&app, &id_path));
        }
    });
    let (segment_fast, ()) = allocations(|| {
        for _ in 0..n {
            drop(connection.answer(&app, &segment_path));
        }
    });
    eprintln!(
        "allocations a request: floor {floor}, /id {id_allocations}, \
         /api/segment/get {segment_allocations}; the fast way, in {n} requests: /id {id_fast}, \
         /api/segment/get {segment_fast}"
    );
    // The fast way allocates nothing at all: its header map is the request's, its digits are
    // held in the answer itself (`Short`).
    assert_eq!(
        id_fast, 0,
        "/id's fast way allocated {id_fast} times in {n} requests"
    );
    assert_eq!(
        segment_fast, 0,
        "/api/segment/get's fast way allocated {segment_fast} times in {n} requests"
    );
    assert!(
        floor >= 1,
        "the floor allocates its digits and its header map"
    );
    assert!(
        id_allocations <= floor,
        "/id allocates {id_allocations} times a request, the floor {floor}"
    );
    assert!(
        segment_allocations <= floor,
        "/api/segment/get allocates {segment_allocations} times a request, the floor {floor}"
    );
}

#[test]
fn a_business_tag_is_matched_without_a_string() {
    let dir = tempfile::tempdir().expect("a directory");
    let tag = "alloc-users";
    let app = app(dir.path(), tag);
    let route = ROUTES
        .iter()
        .find(|r| r.endpoint == Endpoint::SegmentGet)
        .expect("the segment route");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let first = runtime.block_on(probe::segment_get(&app, route, tag, None, true));
    assert_eq!(first.body, "1");
    // The tag as a request's path holds it: a `&str`, looked up in this thread's handles.
    let path = format!("/api/segment/get/{tag}");
    let asked = &path["/api/segment/get/".len()..];
    let (count, found) = allocations(|| probe::now(&app, asked));
    match found {
        Some(probe::Now::Number(n)) => assert_eq!(n, 2),
        _ => panic!("the cached tag answers its next number"),
    }
    assert_eq!(count, 0, "looking the tag up allocated");
    // A tag this thread has not served is not found there (the slow way answers it).
    let (count, found) = allocations(|| probe::now(&app, "alloc-nobody"));
    assert!(found.is_none());
    assert_eq!(count, 0);
}
