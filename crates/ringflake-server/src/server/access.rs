//! Each request, once answered: counted for `/metrics` ([`requests`]) and, if the filter names
//! [`ACCESS_TARGET`] (`--log info,ringflake::access=info`), a line in the access log with the
//! method, path, route, status, duration, HTTP version and peer. The line costs nothing when the
//! access log is off: `tracing` caches that the target is disabled, and its fields are not
//! evaluated.

use crate::log::ACCESS_TARGET;
use crate::model::requests;
use std::net::SocketAddr;

/// When a request's head was read, on the monotonic clock: taken before it is answered, read
/// again once it is ([`Started::elapsed_nanos`]). Every request pays the two reads, so they are one
/// `clock_gettime` each, the nanoseconds kept as a number: `Instant::elapsed`'s checked
/// subtraction of two `timespec`s cost a request about 50 instructions more (callgrind).
#[derive(Debug, Clone, Copy)]
pub struct Started(u64);

impl Started {
    /// Now.
    #[inline]
    pub fn now() -> Started {
        Started(monotonic_nanos())
    }

    /// The nanoseconds since `self` (zero if the clock reads earlier, which a monotonic one
    /// does not).
    #[inline]
    pub fn elapsed_nanos(self) -> u64 {
        monotonic_nanos().saturating_sub(self.0)
    }
}

/// The monotonic clock in nanoseconds since some start (the boot, on Linux).
#[cfg(unix)]
#[inline]
fn monotonic_nanos() -> u64 {
    use nix::time::{ClockId, clock_gettime};
    // CLOCK_MONOTONIC cannot fail with a valid id; 0 would only make one duration long.
    clock_gettime(ClockId::CLOCK_MONOTONIC).map_or(0, |t| {
        (t.tv_sec() as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(t.tv_nsec() as u64)
    })
}

/// The monotonic clock in nanoseconds since the first reading.
#[cfg(not(unix))]
fn monotonic_nanos() -> u64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let origin = *ORIGIN.get_or_init(std::time::Instant::now);
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// HTTP request `req` answered with `status`, `route` its index in the route table (`None`:
/// none), started at `start`.
pub fn http<B>(
    req: &hyper::Request<B>,
    route: Option<usize>,
    status: u16,
    peer: Option<SocketAddr>,
    start: Started,
) {
    let nanos = start.elapsed_nanos();
    requests::http(route, requests::method_index(req.method()), status, nanos);
    log(req, route, status, peer, nanos);
}

/// [`http`] for a request of `series` (its route, method and status, registered once): the same
/// count and line, without working out the series.
pub fn http_series<B>(
    req: &hyper::Request<B>,
    series: &requests::Series,
    route: usize,
    peer: Option<SocketAddr>,
    start: Started,
) {
    let nanos = start.elapsed_nanos();
    series.count(nanos);
    log(req, Some(route), series.status(), peer, nanos);
}

/// The access log's line of an HTTP request, if the filter names [`ACCESS_TARGET`].
#[inline(always)]
fn log<B>(
    req: &hyper::Request<B>,
    route: Option<usize>,
    status: u16,
    peer: Option<SocketAddr>,
    nanos: u64,
) {
    // Nothing is read from the request unless the line is written.
    tracing::info!(
        target: ACCESS_TARGET,
        method = %req.method(),
        path = req.uri().path(),
        route = requests::route_label(route),
        status,
        duration_us = nanos / 1000,
        version = ?req.version(),
        peer = %Peer(peer),
        "{} {} {status} {} µs",
        req.method(),
        req.uri().path(),
        nanos / 1000
    );
}

/// A gRPC call whose response headers carry `code` (0: OK, or not yet known: a call's code
/// normally comes in the trailers, after its messages), `method` its index in
/// [`requests::GRPC_METHODS`] (`None`: another).
pub fn grpc(method: Option<usize>, code: u16, peer: Option<SocketAddr>, start: Started) {
    let nanos = start.elapsed_nanos();
    requests::grpc(method, code, nanos);
    tracing::info!(
        target: ACCESS_TARGET,
        method = "POST",
        path = %GrpcPath(method),
        grpc_code = requests::grpc_code_name(code),
        duration_us = nanos / 1000,
        version = "HTTP/2.0",
        peer = %Peer(peer),
        "gRPC {} {} {} µs",
        GrpcPath(method),
        requests::grpc_code_name(code),
        nanos / 1000
    );
}

/// A gRPC method's path for the log (`/ringflake.v1.IdService/Next`), `other` if not one of
/// [`requests::GRPC_METHODS`].
struct GrpcPath(Option<usize>);

impl std::fmt::Display for GrpcPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.and_then(|m| requests::GRPC_METHODS.get(m)) {
            Some((service, method)) => write!(f, "/{service}/{method}"),
            None => f.write_str("other"),
        }
    }
}

/// A peer address for the log, `-` if unknown.
struct Peer(Option<SocketAddr>);

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(addr) => write!(f, "{addr}"),
            None => f.write_str("-"),
        }
    }
}
