//! Each request, once answered: counted for `/metrics` ([`requests`]) and, if the filter names
//! [`ACCESS_TARGET`] (`--log info,ringflake::access=info`), a line in the access log with the
//! method, path, route, status, duration, HTTP version and peer. The line costs nothing when the
//! access log is off: `tracing` caches that the target is disabled, and its fields are not
//! evaluated.

use crate::log::ACCESS_TARGET;
use crate::model::requests;
use std::net::SocketAddr;
use std::time::Instant;

/// HTTP request `req` answered with `status`, `route` its index in the route table (`None`:
/// none), started at `start`.
pub fn http<B>(
    req: &hyper::Request<B>,
    route: Option<usize>,
    status: u16,
    peer: Option<SocketAddr>,
    start: Instant,
) {
    let elapsed = start.elapsed();
    requests::http(route, requests::method_index(req.method()), status, elapsed);
    log(req, route, status, peer, elapsed);
}

/// [`http`] for a request of `series` (its route, method and status, registered once): the same
/// count and line, without working out the series.
pub fn http_series<B>(
    req: &hyper::Request<B>,
    series: &requests::Series,
    route: usize,
    peer: Option<SocketAddr>,
    start: Instant,
) {
    let elapsed = start.elapsed();
    series.count(elapsed);
    log(req, Some(route), series.status(), peer, elapsed);
}

/// The access log's line of an HTTP request, if the filter names [`ACCESS_TARGET`].
#[inline(always)]
fn log<B>(
    req: &hyper::Request<B>,
    route: Option<usize>,
    status: u16,
    peer: Option<SocketAddr>,
    elapsed: std::time::Duration,
) {
    let (method, path, version) = (req.method(), req.uri().path(), req.version());
    tracing::info!(
        target: ACCESS_TARGET,
        method = %method,
        path,
        route = requests::route_label(route),
        status,
        duration_us = elapsed.as_micros() as u64,
        version = ?version,
        peer = %Peer(peer),
        "{method} {path} {status} {} µs",
        elapsed.as_micros()
    );
}

/// A gRPC call whose response headers carry `code` (0: OK, or not yet known: a call's code
/// normally comes in the trailers, after its messages), `method` its index in
/// [`requests::GRPC_METHODS`] (`None`: another).
pub fn grpc(method: Option<usize>, code: u16, peer: Option<SocketAddr>, start: Instant) {
    let elapsed = start.elapsed();
    requests::grpc(method, code, elapsed);
    tracing::info!(
        target: ACCESS_TARGET,
        method = "POST",
        path = %GrpcPath(method),
        grpc_code = requests::grpc_code_name(code),
        duration_us = elapsed.as_micros() as u64,
        version = "HTTP/2.0",
        peer = %Peer(peer),
        "gRPC {} {} {} µs",
        GrpcPath(method),
        requests::grpc_code_name(code),
        elapsed.as_micros()
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
