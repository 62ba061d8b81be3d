//! `ringflake serve`: the HTTP ID service, a thin layer of hyper over a [`CachedUidGenerator`].
//!
//! | route | answer |
//! |---|---|
//! | `GET /id` | one ID, `text/plain`, decimal |
//! | `GET /ids?count=N` | a JSON array of N IDs as strings, `1 <= N <= MAX_COUNT` |
//! | `GET /parse/{id}` | UidGenerator's `parseUID` JSON |
//! | `GET /metrics` | the Prometheus series of the generator |
//! | `GET /healthz` | 200 `{"status":"ok",…}`, or 503 with the reason |
//!
//! Client mistakes get a 4xx with `{"error":"…"}` saying what was wrong; a generator that cannot
//! issue (time bits exhausted, lease expired, filler down) gets a 503 with the same shape.
//!
//! One single-threaded Tokio runtime per thread, each accepting on its own `SO_REUSEPORT` socket
//! of the same address: the kernel spreads connections over the threads, and a request never
//! crosses a thread (no work stealing, no shared wake-ups). The threads share only the
//! generator, whose take is one atomic add.

use crate::listen;
use crate::text::{json_error, json_ids, json_string, parse_id};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use ringflake::{CachedUidGenerator, Error, Layout, MetricsReporter, PrometheusHandle, TimeZone};
use std::convert::Infallible;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// The largest `count` `/ids` accepts: 100,000 IDs (about 2.2 MB of JSON).
pub const MAX_COUNT: usize = 100_000;

/// Above this many IDs a `/ids` request may wait for the filler (the ring holds 65,536 by
/// default), so it runs on the blocking pool instead of the thread serving connections.
const BLOCKING_COUNT: usize = 8_192;

/// What the handlers share. Cloned once per serving thread, so that the per-request reference
/// count of a thread's copy stays in that thread's cache.
#[derive(Clone)]
pub struct App {
    pub generator: Arc<CachedUidGenerator>,
    pub layout: Layout,
    pub tz: TimeZone,
    pub metrics: Option<Arc<(PrometheusHandle, MetricsReporter)>>,
}

type Reply = Response<Full<Bytes>>;

const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
const JSON: HeaderValue = HeaderValue::from_static("application/json");
const PROMETHEUS: HeaderValue =
    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");

fn respond(status: StatusCode, content_type: HeaderValue, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, content_type);
    r
}

fn error(status: StatusCode, message: &str) -> Reply {
    respond(status, JSON, json_error(message))
}

/// A generator error: the service cannot issue now (503), never the client's fault.
fn unavailable(e: &Error) -> Reply {
    error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string())
}

/// Answers one request.
pub async fn handle(app: &App, req: &Request<Incoming>) -> Reply {
    let path = req.uri().path();
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = error(
            StatusCode::METHOD_NOT_ALLOWED,
            &format!("method {} not allowed on {path}: use GET", req.method()),
        );
        r.headers_mut()
            .insert(hyper::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    match path {
        "/id" => id(app).await,
        "/ids" => ids(app, req.uri().query()).await,
        "/metrics" => metrics(app),
        "/healthz" => healthz(app),
        _ => match path.strip_prefix("/parse/") {
            Some("") => error(
                StatusCode::BAD_REQUEST,
                "missing ID: use /parse/{id} with a decimal ID",
            ),
            Some(text) => parse(app, text),
            _ => error(
                StatusCode::NOT_FOUND,
                &format!(
                    "no route {path}: try GET /id, /ids?count=N, /parse/{{id}}, /metrics or /healthz"
                ),
            ),
        },
    }
}

async fn id(app: &App) -> Reply {
    match app.generator.next_id_async().await {
        Ok(id) => {
            let mut s = String::with_capacity(20);
            let _ = write!(s, "{id}");
            respond(StatusCode::OK, TEXT, s)
        }
        Err(e) => unavailable(&e),
    }
}

/// The `count` parameter of `/ids`.
fn count(query: Option<&str>) -> Result<usize, String> {
    let usage = format!("use /ids?count=N with N in 1..={MAX_COUNT}");
    let value = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("count="))
        .ok_or_else(|| format!("missing query parameter count: {usage}"))?;
    match value.parse::<usize>() {
        Ok(n) if (1..=MAX_COUNT).contains(&n) => Ok(n),
        Ok(n) => Err(format!("count {n} out of range: {usage}")),
        Err(_) if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
            Err(format!("count {value} out of range: {usage}"))
        }
        Err(_) => Err(format!("count {value:?} is not a number: {usage}")),
    }
}

/// Takes `n` IDs and renders them as a JSON array of strings.
fn take_json(generator: &CachedUidGenerator, n: usize) -> Result<Vec<u8>, Error> {
    let mut ids = vec![0u64; n];
    generator.next_ids(&mut ids)?;
    let mut body = Vec::new();
    json_ids(&ids, &mut body);
    Ok(body)
}

async fn ids(app: &App, query: Option<&str>) -> Reply {
    let n = match count(query) {
        Ok(n) => n,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let taken = if n > BLOCKING_COUNT {
        // May wait for the filler: not on the thread that serves connections.
        let generator = Arc::clone(&app.generator);
        match tokio::task::spawn_blocking(move || take_json(&generator, n)).await {
            Ok(taken) => taken,
            Err(e) => {
                return error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!("the batch could not be taken: {e}"),
                );
            }
        }
    } else {
        take_json(&app.generator, n)
    };
    match taken {
        Ok(body) => respond(StatusCode::OK, JSON, body),
        Err(e) => unavailable(&e),
    }
}

fn parse(app: &App, text: &str) -> Reply {
    let parsed = parse_id(text)
        .and_then(|id| app.layout.parse(id).map_err(|e| e.to_string()))
        .and_then(|p| p.to_java_string_in(&app.tz).map_err(|e| e.to_string()));
    match parsed {
        Ok(json) => respond(StatusCode::OK, JSON, json),
        Err(message) => error(StatusCode::BAD_REQUEST, &message),
    }
}

fn metrics(app: &App) -> Reply {
    match app.metrics.as_deref() {
        Some((handle, reporter)) => {
            reporter.sample();
            respond(StatusCode::OK, PROMETHEUS, handle.render())
        }
        None => error(
            StatusCode::NOT_FOUND,
            "metrics are not enabled in this build",
        ),
    }
}

/// Why the generator cannot serve, if it cannot.
pub fn unhealthy(stats: &ringflake::Stats, layout: &Layout) -> Option<String> {
    if !stats.filler_up {
        Some("filler down: the thread that fills the ring has stopped".into())
    } else if stats.remaining_seconds == 0 {
        Some(format!(
            "lifetime exhausted: the layout's time bits ran out (last valid second {})",
            layout.last_valid_date()
        ))
    } else if stats.lease_lost {
        Some(format!(
            "lease lost: the worker lease of worker id {} could not be extended{}",
            stats.worker_id,
            stats
                .lease_until
                .map(|u| format!("; IDs stop at unix second {u}"))
                .unwrap_or_default()
        ))
    } else {
        None
    }
}

fn healthz(app: &App) -> Reply {
    let s = app.generator.stats();
    let mut body = String::with_capacity(256);
    match unhealthy(&s, &app.layout) {
        Some(reason) => {
            body.push_str("{\"status\":\"unavailable\",\"reason\":");
            json_string(&mut body, &reason);
            let _ = write!(body, ",\"worker_id\":{}}}", s.worker_id);
            respond(StatusCode::SERVICE_UNAVAILABLE, JSON, body)
        }
        None => {
            let _ = write!(
                body,
                "{{\"status\":\"ok\",\"worker_id\":{},\"available\":{},\"capacity\":{},\"lead_seconds\":{},\"lag_seconds\":{},\"remaining_seconds\":{},\"issued\":{}}}",
                s.worker_id,
                s.available,
                s.capacity,
                s.lead_seconds,
                s.lag_seconds,
                s.remaining_seconds,
                s.issued
            );
            respond(StatusCode::OK, JSON, body)
        }
    }
}

/// The stop signal the serving threads watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stop {
    /// Serve.
    No,
    /// Stop accepting, let in-flight requests finish (up to the grace period).
    Graceful,
    /// Close every connection now.
    Now,
}

/// The serving threads.
pub struct Server {
    addr: SocketAddr,
    stop: Stopper,
    threads: Vec<std::thread::JoinHandle<()>>,
}

/// Tells the serving threads to stop.
#[derive(Clone)]
pub struct Stopper(Arc<watch::Sender<Stop>>);

impl Stopper {
    /// Tells the threads to stop (or to stop sooner, if they are stopping already).
    pub fn signal(&self, how: Stop) {
        self.0.send_if_modified(|s| {
            let changed = how > *s;
            *s = (*s).max(how);
            changed
        });
    }
}

impl Server {
    /// Binds `listen` on `threads` threads and starts serving; returns once every thread listens.
    pub fn start(
        app: &App,
        listen: SocketAddr,
        threads: usize,
        grace: Duration,
    ) -> Result<Server, String> {
        let (stop, _) = watch::channel(Stop::No);
        let mut server = Server {
            addr: listen,
            stop: Stopper(Arc::new(stop)),
            threads: Vec::new(),
        };
        for i in 0..threads.max(1) {
            let (ready_tx, ready_rx) = std::sync::mpsc::channel();
            let app = app.clone();
            let stop = server.stop.0.subscribe();
            let addr = server.addr;
            let thread = std::thread::Builder::new()
                .name(format!("ringflake-http-{i}"))
                .spawn(move || serve_thread(app, addr, stop, grace, ready_tx))
                .map_err(|e| format!("cannot start a serving thread: {e}"))?;
            server.threads.push(thread);
            match ready_rx.recv() {
                // The first thread resolves port 0; the others bind the same port.
                Ok(Ok(bound)) => server.addr = bound,
                Ok(Err(message)) => {
                    server.stop(Stop::Now);
                    return Err(message);
                }
                Err(_) => {
                    server.stop(Stop::Now);
                    return Err("a serving thread ended at start".into());
                }
            }
        }
        Ok(server)
    }

    /// The address the service listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A handle that tells the threads to stop.
    pub fn stopper(&self) -> Stopper {
        self.stop.clone()
    }

    /// Tells the threads to stop and waits for them.
    fn stop(self, how: Stop) {
        self.stop.signal(how);
        self.join();
    }

    /// Waits for the threads, after [`Stopper::signal`].
    pub fn join(mut self) {
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// One serving thread: its runtime, its listener, its connections.
fn serve_thread(
    app: App,
    addr: SocketAddr,
    mut stop: watch::Receiver<Stop>,
    grace: Duration,
    ready: std::sync::mpsc::Sender<Result<SocketAddr, String>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(format!("cannot start a Tokio runtime: {e}")));
            return;
        }
    };
    let app = Arc::new(app);
    runtime.block_on(async move {
        let listener = match listen::bind(addr) {
            Ok(l) => l,
            Err(e) => {
                let _ = ready.send(Err(format!("cannot listen on {addr}: {e}")));
                return;
            }
        };
        let bound = listener.local_addr().unwrap_or(addr);
        let _ = ready.send(Ok(bound));
        // Every connection holds a sender; `recv` returns `None` once all of them are gone.
        let (alive, mut all_closed) = mpsc::channel::<()>(1);
        let conn_stop = stop.clone();
        loop {
            tokio::select! {
                biased;
                _ = stop.wait_for(|s| *s != Stop::No) => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let conn = serve_connection(Arc::clone(&app), stream, conn_stop.clone(), alive.clone());
                        tokio::spawn(conn);
                    }
                    Err(e) => {
                        // Out of file descriptors and the like: wait a little rather than spin.
                        eprintln!("ringflake: accept on {bound} failed: {e}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                },
            }
        }
        drop(listener);
        drop(alive);
        tokio::select! {
            _ = all_closed.recv() => {}
            _ = stop.wait_for(|s| *s == Stop::Now) => {}
            _ = tokio::time::sleep(grace) => {
                eprintln!(
                    "ringflake: requests still open after {} s: closing them",
                    grace.as_secs()
                );
            }
        }
    });
    // Dropping the runtime closes whatever connections are left.
}

/// Serves one connection until it closes, or until the stop signal, when hyper finishes the
/// request in flight and closes the connection instead of waiting for another.
async fn serve_connection(
    app: Arc<App>,
    stream: tokio::net::TcpStream,
    mut stop: watch::Receiver<Stop>,
    _alive: mpsc::Sender<()>,
) {
    listen::prepare(&stream);
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let app = Arc::clone(&app);
        async move { Ok::<_, Infallible>(handle(&app, &req).await) }
    });
    let conn = listen::http1().serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|s| *s != Stop::No) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(count(Some("count=5")), Ok(5));
        assert_eq!(count(Some("x=1&count=100000")), Ok(100_000));
        assert!(count(None).unwrap_err().contains("missing"));
        assert!(count(Some("count=0")).unwrap_err().contains("out of range"));
        assert!(
            count(Some("count=100001"))
                .unwrap_err()
                .contains("out of range")
        );
        assert!(
            count(Some("count=99999999999999999999999"))
                .unwrap_err()
                .contains("out of range")
        );
        assert!(
            count(Some("count=ten"))
                .unwrap_err()
                .contains("not a number")
        );
        assert!(count(Some("count=")).unwrap_err().contains("not a number"));
    }

    #[test]
    fn health_reasons() {
        let layout = Layout::default();
        let healthy = ringflake::Stats {
            capacity: 65_536,
            available: 65_536,
            issued: 0,
            paddings: 1,
            discarded: 0,
            take_waits: 0,
            lead_seconds: 0,
            lag_seconds: 0,
            remaining_seconds: 1_000,
            worker_id: 4,
            filler_up: true,
            lease_until: Some(1_800_000_300),
            lease_lost: false,
        };
        assert_eq!(unhealthy(&healthy, &layout), None);
        let down = ringflake::Stats {
            filler_up: false,
            ..healthy
        };
        assert!(
            unhealthy(&down, &layout)
                .unwrap()
                .starts_with("filler down")
        );
        let exhausted = ringflake::Stats {
            remaining_seconds: 0,
            ..healthy
        };
        let reason = unhealthy(&exhausted, &layout).unwrap();
        assert!(reason.starts_with("lifetime exhausted"), "{reason}");
        assert!(reason.contains("2059-01-10T13:37:03Z"), "{reason}");
        let lost = ringflake::Stats {
            lease_lost: true,
            ..healthy
        };
        let reason = unhealthy(&lost, &layout).unwrap();
        assert!(reason.starts_with("lease lost"), "{reason}");
        assert!(
            reason.contains("worker id 4") && reason.contains("1800000300"),
            "{reason}"
        );
    }

    #[test]
    fn stop_only_escalates() {
        assert!(Stop::No < Stop::Graceful && Stop::Graceful < Stop::Now);
    }
}
