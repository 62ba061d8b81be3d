//! The life cycle of `ringflake serve`'s HTTP and gRPC side: the serving threads, their runtimes and
//! listeners, the connections, and how they stop.
//!
//! One listening socket, bound once (a port in use, by another `ringflake serve` or anything else,
//! fails the start instead of being shared), and one single-threaded Tokio runtime per thread,
//! each accepting on its own clone of that socket: a connection is served, start to end, by the
//! thread that accepted it, and a request never crosses a thread (no work stealing). The threads
//! share only the socket and the generator, whose take is one atomic add.

pub mod access;
pub mod bodies;
pub mod listen;
pub mod notify;
pub mod signals;
pub mod tls;
pub mod versions;

use super::handlers::{answer_now, grpc, handle};
use super::model::app::App;
use super::model::requests;
use bodies::JsonBodies;
use http_body_util::Either;
use hyper::body::Incoming;
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};
use tokio_rustls::TlsAcceptor;
use versions::Version;

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

/// A socket bound and listening on its address, not served yet: bound before the generators
/// boot, so that an address in use refuses the start before a worker id is claimed.
pub struct Bound {
    listener: std::net::TcpListener,
    addr: SocketAddr,
}

impl Bound {
    /// Binds `listen` ([`listen::bind`]).
    pub fn bind(listen: SocketAddr) -> Result<Bound, String> {
        let listener = listen::bind(listen).map_err(|e| cannot_listen(listen, &e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| cannot_listen(listen, &e))?;
        Ok(Bound { listener, addr })
    }

    /// The address bound (the port the system chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Server {
    /// Serves `bound` on `threads` threads, over TLS if `tls` is given; returns once every
    /// thread accepts.
    pub fn start(
        app: &App,
        bound: Bound,
        threads: usize,
        grace: Duration,
        tls: Option<TlsAcceptor>,
    ) -> Result<Server, String> {
        let Bound { listener, addr } = bound;
        let (stop, _) = watch::channel(Stop::No);
        let mut server = Server {
            addr,
            stop: Stopper(Arc::new(stop)),
            threads: Vec::new(),
        };
        for i in 0..threads.max(1) {
            if let Err(message) = server.spawn(i, app, &listener, grace, tls.clone()) {
                server.stop(Stop::Now);
                return Err(message);
            }
        }
        // `listener` closes here; the socket stays open until the last thread drops its clone.
        Ok(server)
    }

    /// Starts serving thread `i` on a clone of `listener`; returns once it accepts.
    fn spawn(
        &mut self,
        i: usize,
        app: &App,
        listener: &std::net::TcpListener,
        grace: Duration,
        tls: Option<TlsAcceptor>,
    ) -> Result<(), String> {
        let listener = listener
            .try_clone()
            .map_err(|e| format!("cannot share the socket of {}: {e}", self.addr))?;
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let app = app.clone();
        let stop = self.stop.0.subscribe();
        let addr = self.addr;
        let thread = std::thread::Builder::new()
            .name(format!("ringflake-http-{i}"))
            .spawn(move || serve_thread(app, listener, addr, stop, grace, tls, ready_tx))
            .map_err(|e| format!("cannot start a serving thread: {e}"))?;
        self.threads.push(thread);
        ready_rx
            .recv()
            .unwrap_or_else(|_| Err("a serving thread ended at start".into()))
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

/// Why `addr` cannot be listened on, for a person: an address in use is most likely another
/// `ringflake serve`, which must not share the port (two services on one port, one worker id,
/// would hand out the same IDs).
fn cannot_listen(addr: SocketAddr, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::AddrInUse {
        format!(
            "cannot listen on {addr}: address already in use (is another ringflake serve running?)"
        )
    } else {
        format!("cannot listen on {addr}: {e}")
    }
}

/// Failed accepts of every serving thread, logged at most once every [`AcceptErrors::EVERY_MS`]:
/// out of file descriptors (EMFILE), each thread fails an accept every 10 ms, which would be
/// hundreds of identical lines a second.
static ACCEPT_ERRORS: AcceptErrors = AcceptErrors {
    next_ms: AtomicU64::new(0),
    suppressed: AtomicU64::new(0),
};

/// A rate limit for one kind of log line, shared by the serving threads.
struct AcceptErrors {
    /// Milliseconds since [`started`] from which the next line may be logged.
    next_ms: AtomicU64,
    /// Failures not logged since the last line.
    suppressed: AtomicU64,
}

impl AcceptErrors {
    /// At most one line in this many milliseconds.
    const EVERY_MS: u64 = 10_000;

    /// Whether to log this failure now, and if so how many were not logged before it.
    fn allow(&self) -> Option<u64> {
        let now = started().elapsed().as_millis() as u64;
        let next = self.next_ms.load(Ordering::Relaxed);
        if now >= next
            && self
                .next_ms
                .compare_exchange(
                    next,
                    now + Self::EVERY_MS,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            return Some(self.suppressed.swap(0, Ordering::Relaxed));
        }
        self.suppressed.fetch_add(1, Ordering::Relaxed);
        None
    }
}

/// The process's monotonic start, for [`AcceptErrors`].
fn started() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

/// One serving thread: its runtime, its listener, its connections.
fn serve_thread(
    app: App,
    listener: std::net::TcpListener,
    addr: SocketAddr,
    mut stop: watch::Receiver<Stop>,
    grace: Duration,
    tls: Option<TlsAcceptor>,
    ready: std::sync::mpsc::Sender<Result<(), String>>,
) {
    let (runtime, listener) = match thread_runtime(listener, addr) {
        Ok(started) => {
            let _ = ready.send(Ok(()));
            started
        }
        Err(message) => {
            let _ = ready.send(Err(message));
            return;
        }
    };
    let app = Arc::new(app);
    runtime.block_on(async move {
        // Every connection holds a sender; `recv` returns `None` once all of them are gone.
        let (alive, mut all_closed) = mpsc::channel::<()>(1);
        let conn_stop = stop.clone();
        loop {
            tokio::select! {
                biased;
                _ = stop.wait_for(|s| *s != Stop::No) => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        let conn = serve_connection(
                            Arc::clone(&app),
                            stream,
                            peer,
                            tls.clone(),
                            conn_stop.clone(),
                            alive.clone(),
                        );
                        tokio::spawn(conn);
                    }
                    Err(e) => {
                        // Out of file descriptors and the like: wait a little rather than spin,
                        // and say so without a line per attempt (see `ACCEPT_ERRORS`).
                        if let Some(suppressed) = ACCEPT_ERRORS.allow() {
                            tracing::error!(
                                target: crate::log::TARGET,
                                address = %addr,
                                error = %e,
                                suppressed,
                                "accept on {addr} failed: {e}{}",
                                if suppressed > 0 {
                                    format!(
                                        " ({suppressed} more failed accepts not logged in the \
                                         last {} s)",
                                        AcceptErrors::EVERY_MS / 1000
                                    )
                                } else {
                                    String::new()
                                }
                            );
                        }
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
                tracing::warn!(
                    target: crate::log::TARGET,
                    grace_s = grace.as_secs(),
                    "requests still open after {} s: closing them",
                    grace.as_secs()
                );
            }
        }
    });
    // Dropping the runtime closes whatever connections are left.
}

/// A single-threaded Tokio runtime, timers and I/O enabled: one per serving thread, and the one
/// that waits for signals.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a Tokio runtime: {e}"))
}

/// A serving thread's runtime, and its listener on `listener`, a clone of the service's socket.
fn thread_runtime(
    listener: std::net::TcpListener,
    addr: SocketAddr,
) -> Result<(tokio::runtime::Runtime, tokio::net::TcpListener), String> {
    let runtime = runtime()?;
    let listener = {
        let _entered = runtime.enter();
        listen::accept_on(listener).map_err(|e| format!("cannot accept on {addr}: {e}"))?
    };
    Ok((runtime, listener))
}

/// Serves one connection until it closes, or until the stop signal, when hyper finishes the
/// request in flight and closes the connection instead of waiting for another. With `tls`, the
/// handshake comes first, in this task, bounded by [`tls::HANDSHAKE_TIMEOUT`] (and cut short by
/// the stop signal). HTTP/1.1 or HTTP/2, as [`versions`] tells.
async fn serve_connection(
    app: Arc<App>,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    tls: Option<TlsAcceptor>,
    mut stop: watch::Receiver<Stop>,
    _alive: mpsc::Sender<()>,
) {
    listen::prepare(&stream);
    let Some(acceptor) = tls else {
        let version = tokio::select! {
            version = versions::sniff(&stream) => version,
            _ = stop.wait_for(|s| *s != Stop::No) => return,
        };
        if let Some(version) = version {
            serve_http(app, stream, version, peer, stop).await;
        }
        return;
    };
    let session = tokio::select! {
        session = tls::accept(&acceptor, stream) => session,
        _ = stop.wait_for(|s| *s != Stop::No) => return,
    };
    if let Some(session) = session {
        let version = versions::negotiated(session.get_ref().1.alpn_protocol());
        serve_http(app, session, version, peer, stop).await;
    }
}

/// Serves HTTP/1 or HTTP/2 on `io` (a TCP stream or a TLS session on one): the HTTP routes, and
/// gRPC calls ([`grpc`]).
async fn serve_http<I>(
    app: Arc<App>,
    io: I,
    version: Version,
    peer: SocketAddr,
    stop: watch::Receiver<Stop>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let services = Arc::new(grpc::Services::new(&app));
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        // Counted and perhaps logged once answered (`access`): a clock read before, one after,
        // a few relaxed adds on this thread's own counters.
        let start = Instant::now();
        // A GET is never a gRPC call (those are POSTs): no header to look up for it.
        if (req.method() == Method::GET || !grpc::is_grpc(&req))
            && let Some((answer, route)) = answer_now(&app, &req)
        {
            access::http(&req, route, answer.status().as_u16(), Some(peer), start);
            return Answer::Now(std::future::ready(Ok(answer.map(Either::Left))));
        }
        let app = Arc::clone(&app);
        let services = Arc::clone(&services);
        Answer::Later(Box::pin(async move {
            let answer = if grpc::is_grpc(&req) {
                let method = requests::grpc_method(req.uri().path());
                let answer = services.call(req).await;
                let code = answer
                    .headers()
                    .get("grpc-status")
                    .and_then(|v| v.to_str().ok()?.parse().ok())
                    .unwrap_or(0);
                access::grpc(method, code, Some(peer), start);
                answer.map(Either::Right)
            } else {
                // The answer's body as it is, not boxed as gRPC's are: no allocation for it.
                let (answer, route) = handle(&app, &req).await;
                access::http(&req, route, answer.status().as_u16(), Some(peer), start);
                answer.map(Either::Left)
            };
            Ok::<_, Infallible>(answer)
        }))
    });
    match version {
        Version::Http1 => {
            let io = TokioIo::new(JsonBodies::new(io));
            let conn = listen::http1().serve_connection(io, service);
            until_stopped(conn, stop, |c| c.graceful_shutdown()).await;
        }
        Version::Http2 => {
            let conn = versions::http2().serve_connection(TokioIo::new(io), service);
            until_stopped(conn, stop, |c| c.graceful_shutdown()).await;
        }
    }
}

/// A request's answer for hyper: made at once (an ID ready in the ring, every route that takes
/// none), or by a future that may wait (a take at the lead cap, a batch, a gRPC call), boxed
/// only then. The common answer keeps no future between polls: nothing to move, nothing to
/// allocate.
enum Answer<F: Future> {
    Now(std::future::Ready<F::Output>),
    Later(std::pin::Pin<Box<F>>),
}

impl<F: Future> Future for Answer<F>
where
    F::Output: Unpin,
{
    type Output = F::Output;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        match self.get_mut() {
            Answer::Now(ready) => std::pin::Pin::new(ready).poll(cx),
            Answer::Later(later) => later.as_mut().poll(cx),
        }
    }
}

/// Drives `conn` until it ends, or until the stop signal, then shuts it down gracefully (the
/// requests in flight finish, no new one starts) and drives it to its end.
///
/// The signal costs a poll one atomic load (the watch's version): the watch's future is polled
/// once, which registers this task to be woken when the signal comes, and again only once it
/// has come. (Polling it at every poll of the connection, as a `select!` does, cost a request
/// about 250 instructions.)
async fn until_stopped<C, O>(
    conn: C,
    stop: watch::Receiver<Stop>,
    graceful: impl FnOnce(std::pin::Pin<&mut C>),
) where
    C: Future<Output = O>,
{
    tokio::pin!(conn);
    let mut watching = stop.clone();
    let signalled = watching.changed();
    tokio::pin!(signalled);
    let mut registered = false;
    let stopping = std::future::poll_fn(|cx| {
        if conn.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(false);
        }
        if registered && !stop.has_changed().unwrap_or(true) {
            return std::task::Poll::Pending;
        }
        registered = true;
        // Every value sent after `No` stops (`Graceful`, `Now`); a sender gone stops too.
        signalled.as_mut().poll(cx).map(|_| true)
    })
    .await;
    if stopping {
        graceful(conn.as_mut());
        let _ = conn.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_only_escalates() {
        assert!(Stop::No < Stop::Graceful && Stop::Graceful < Stop::Now);
    }
}
