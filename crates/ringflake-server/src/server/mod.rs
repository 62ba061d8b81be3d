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
pub mod idle;
pub mod listen;
pub mod notify;
pub mod signals;
pub mod tls;
pub mod versions;

use super::handlers::{answer_now, fast, grpc, handle};
use super::model::app::App;
use super::model::limits::{Connections, IDLE, Slot, Throttle};
use super::model::requests;
use super::model::routes::Exposure;
use bodies::JsonBodies;
use http_body_util::Either;
use hyper::body::Incoming;
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use idle::{Counted, Streams};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};
use tokio_rustls::TlsAcceptor;
use versions::{Rewind, Version};

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

/// Failed accepts of every serving thread, logged at most once every 10 s: out of file
/// descriptors (EMFILE), each thread fails an accept every 10 ms, which would be hundreds of
/// identical lines a second.
static ACCEPT_ERRORS: Throttle = Throttle::new(10_000);

/// Connections refused for a full listener, logged likewise.
static REFUSED: Throttle = Throttle::new(10_000);

/// " (N more … not logged in the last 10 s)", or nothing.
fn more(suppressed: u64, what: &str, throttle: &Throttle) -> String {
    if suppressed > 0 {
        format!(
            " ({suppressed} more {what} not logged in the last {} s)",
            throttle.every_s()
        )
    } else {
        String::new()
    }
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
    let connections = Arc::clone(app.limits.connections(app.exposure == Exposure::Internal));
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
                        let Some(slot) = admit(&app, &connections, addr, peer) else {
                            // Closed at once: the client sees its connection end, not a hang.
                            drop(stream);
                            continue;
                        };
                        let conn = serve_connection(
                            Arc::clone(&app),
                            stream,
                            peer,
                            tls.clone(),
                            conn_stop.clone(),
                            (alive.clone(), slot),
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
                                more(suppressed, "failed accepts", &ACCEPT_ERRORS)
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

/// A place among the listener's connections for one from `peer`, if fewer than
/// `--max-connections` are open; else the refusal is counted, and said (at most a line every
/// 10 s).
fn admit(
    app: &App,
    connections: &Arc<Connections>,
    addr: SocketAddr,
    peer: SocketAddr,
) -> Option<Slot> {
    let max = app.limits.max_connections;
    let slot = connections.admit(max);
    if slot.is_none()
        && let Some(suppressed) = REFUSED.allow()
    {
        tracing::warn!(
            target: crate::log::TARGET,
            address = %addr,
            peer = %peer,
            max_connections = max,
            suppressed,
            "connection from {peer} to {addr} refused: {max} connections are open \
             (--max-connections), new ones are closed until some end{}",
            more(suppressed, "refusals", &REFUSED)
        );
    }
    slot
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
/// the stop signal). HTTP/1.1 or HTTP/2, as [`versions`] tells. `held` (the serving thread's
/// count of its connections, and this one's place among the listener's) goes with it.
async fn serve_connection(
    app: Arc<App>,
    mut stream: tokio::net::TcpStream,
    peer: SocketAddr,
    tls: Option<TlsAcceptor>,
    mut stop: watch::Receiver<Stop>,
    held: (mpsc::Sender<()>, Slot),
) {
    let _held = held;
    listen::prepare(&stream);
    let Some(acceptor) = tls else {
        let sniffed = tokio::select! {
            sniffed = versions::sniff(&mut stream) => sniffed,
            _ = stop.wait_for(|s| *s != Stop::No) => return,
        };
        if let Some((version, first)) = sniffed {
            serve_http(app, Rewind::new(first, stream), version, peer, stop).await;
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
/// gRPC calls ([`grpc`]). An HTTP/2 connection counts its open streams, and is closed once it
/// has had none for [`IDLE`] ([`idle`]).
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
    let streams = (version == Version::Http2).then(Streams::new);
    let counted = streams.clone();
    // The ID routes' 200s, counted on series registered once per connection (on this thread's
    // counters: a connection is served by the thread that accepted it).
    let get = requests::method_index(&Method::GET).unwrap_or_default();
    let id_ok = requests::Series::new(fast::ID_ROUTE, get, 200);
    let segment_ok = requests::Series::new(fast::SEGMENT_ROUTE, get, 200);
    let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
        // Counted and perhaps logged once answered (`access`): a clock read before, one after,
        // a few relaxed adds on this thread's own counters.
        let start = access::Started::now();
        // `GET /id` and `GET /api/segment/get/{tag}`, told by their path alone (`fast`).
        let wrap = |body| {
            let open = counted.as_ref().map(Streams::open);
            match body {
                fast::Fast::Short(short) => Counted::short(short, open),
                fast::Fast::Reply(body) => Counted::new(Either::Left(body), open),
            }
        };
        if let Some((answer, route)) = fast::answer(&app, &mut req, wrap) {
            let series = if route == fast::ID_ROUTE {
                &id_ok
            } else {
                &segment_ok
            };
            let status = answer.status().as_u16();
            if status == series.status() {
                access::http_series(&req, series, route, Some(peer), start);
            } else {
                access::http(&req, Some(route), status, Some(peer), start);
            }
            return Answer::Now(std::future::ready(Ok(answer)));
        }
        // A GET is never a gRPC call (those are POSTs): no header to look up for it.
        if (req.method() == Method::GET || !grpc::is_grpc(&req))
            && let Some((answer, route)) = answer_now(&app, &req)
        {
            access::http(&req, route, answer.status().as_u16(), Some(peer), start);
            let open = counted.as_ref().map(Streams::open);
            let answer = answer.map(|body| Counted::new(Either::Left(body), open));
            return Answer::Now(std::future::ready(Ok(answer)));
        }
        let app = Arc::clone(&app);
        let services = Arc::clone(&services);
        let open = counted.as_ref().map(Streams::open);
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
                answer.map(|body| Counted::new(Either::Right(body), open))
            } else {
                // The answer's body as it is, not boxed as gRPC's are: no allocation for it.
                let (answer, route) = handle(&app, &req).await;
                access::http(&req, route, answer.status().as_u16(), Some(peer), start);
                answer.map(|body| Counted::new(Either::Left(body), open))
            };
            Ok::<_, Infallible>(answer)
        }))
    });
    match (version, streams) {
        (Version::Http2, Some(streams)) => {
            let conn = versions::http2().serve_connection(TokioIo::new(io), service);
            until_stopped(conn, stop, streams.idle(IDLE), |c| c.graceful_shutdown()).await;
        }
        _ => {
            let io = TokioIo::new(JsonBodies::new(io));
            let conn = listen::http1().serve_connection(io, service);
            let idle = std::future::pending::<()>();
            until_stopped(conn, stop, idle, |c| c.graceful_shutdown()).await;
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

/// Drives `conn` until it ends, or until the stop signal or `idle`, then shuts it down
/// gracefully (the requests in flight finish, no new one starts; HTTP/2 says `GOAWAY`) and
/// drives it to its end.
///
/// The signal costs a poll one atomic load (the watch's version): the watch's future is polled
/// once, which registers this task to be woken when the signal comes, and again only once it
/// has come. (Polling it at every poll of the connection, as a `select!` does, cost a request
/// about 250 instructions.)
async fn until_stopped<C, O>(
    conn: C,
    stop: watch::Receiver<Stop>,
    idle: impl Future<Output = ()>,
    graceful: impl FnOnce(std::pin::Pin<&mut C>),
) where
    C: Future<Output = O>,
{
    tokio::pin!(conn);
    tokio::pin!(idle);
    let mut watching = stop.clone();
    let signalled = watching.changed();
    tokio::pin!(signalled);
    let mut registered = false;
    let stopping = std::future::poll_fn(|cx| {
        // Matched, not `is_ready()`: a pending poll leaves nothing to drop (the result's drop
        // glue was a call a request, 17 instructions).
        #[allow(clippy::redundant_pattern_matching)]
        if let std::task::Poll::Ready(_) = conn.as_mut().poll(cx) {
            return std::task::Poll::Ready(false);
        }
        // An HTTP/2 connection without a stream for `IDLE` (HTTP/1.1's `idle` never ends:
        // hyper's header timeout bounds an idle HTTP/1.1 connection).
        if idle.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(true);
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
