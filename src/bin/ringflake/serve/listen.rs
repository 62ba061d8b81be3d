//! The socket and HTTP/1 set-up of `ringflake serve`, shared with `examples/http_floor.rs` (which
//! includes this file) so that the load test's floor is the service's own stack, not a copy.

use hyper_util::rt::TokioTimer;
use std::net::SocketAddr;
use std::time::Duration;

/// A client that has not sent a request's headers within this time is disconnected.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// Binds `addr` with `SO_REUSEPORT`, so that every serving thread has its own accept queue.
pub fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    #[cfg(all(unix, not(target_os = "solaris"), not(target_os = "illumos")))]
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// An accepted connection, ready for hyper: `TCP_NODELAY` on (an answer goes out at once).
pub fn prepare(stream: &tokio::net::TcpStream) {
    let _ = stream.set_nodelay(true);
}

/// hyper's HTTP/1 server with Tokio's timer and [`HEADER_TIMEOUT`].
pub fn http1() -> hyper::server::conn::http1::Builder {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    builder
}
