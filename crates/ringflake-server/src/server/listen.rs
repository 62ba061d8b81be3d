//! The socket and HTTP/1 set-up of `ringflake serve`, shared with `examples/http_floor.rs` (which
//! includes this file) so that the load test's floor is the service's own stack, not a copy.

use hyper_util::rt::TokioTimer;
use std::net::SocketAddr;
use std::time::Duration;

/// A client that has not sent a request's headers within this time is disconnected.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// The most a request's head (request line and headers) may take: 64 KiB, where hyper's default
/// lets about 400 KiB through (its read buffer's limit). A longer head is answered 431 by hyper
/// and the connection closed (`ringflake serve` adds the JSON body to that answer). An ID service's requests are a few hundred bytes;
/// this leaves room for long tokens and proxies' headers.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Connections the kernel queues, accepted by no thread yet.
const BACKLOG: u32 = 1024;

/// Binds `addr` once for every serving thread, each of which accepts on a clone
/// ([`std::net::TcpListener::try_clone`], then [`accept_on`]).
///
/// `SO_REUSEADDR`, so that a restart is not refused while the last run's connections linger in
/// `TIME_WAIT`; never `SO_REUSEPORT`, so that an address another process listens on, another
/// `ringflake serve` included, is refused ("address already in use") instead of shared.
pub fn bind(addr: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    // Tokio's `listen` registers the socket with a runtime; `into_std` takes it back out, for the
    // serving threads' runtimes to share.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    let _entered = runtime.enter();
    socket.listen(BACKLOG)?.into_std()
}

/// A serving thread's listener, on the socket [`bind`] made (or a clone of it); called inside
/// the thread's runtime.
pub fn accept_on(listener: std::net::TcpListener) -> std::io::Result<tokio::net::TcpListener> {
    listener.set_nonblocking(true)?;
    tokio::net::TcpListener::from_std(listener)
}

/// An accepted connection, ready for hyper: `TCP_NODELAY` on (an answer goes out at once).
pub fn prepare(stream: &tokio::net::TcpStream) {
    let _ = stream.set_nodelay(true);
}

/// hyper's HTTP/1 server with Tokio's timer, [`HEADER_TIMEOUT`] and [`MAX_HEAD_BYTES`]
/// (`max_header_size`, which counts the whole head, request line included).
pub fn http1() -> hyper::server::conn::http1::Builder {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_header_size(MAX_HEAD_BYTES);
    builder
}
