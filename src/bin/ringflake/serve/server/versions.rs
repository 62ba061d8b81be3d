//! Which HTTP version a connection speaks, HTTP/1.1 or HTTP/2, both on the one port: under TLS,
//! what ALPN negotiated (the service offers `h2` and `http/1.1`); in the clear, whether the
//! client opens with HTTP/2's connection preface (h2c with prior knowledge, as gRPC clients
//! do). HTTP/1.1 connections get hyper's HTTP/1 server exactly as before
//! ([`super::listen::http1`]: its header timeout and head limit, and [`super::bodies`]'s JSON
//! bodies); HTTP/2 ones get hyper's HTTP/2 server ([`http2`]), which carries the HTTP routes and
//! gRPC alike.
//!
//! Not hyper-util's `auto` builder: it does the same detection, but its HTTP/1 side cannot limit
//! a request head's size, which `serve` does (64 KiB, answered 431).

use super::listen::HEADER_TIMEOUT;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::time::Duration;

/// What an HTTP/2 client sends first (RFC 9113 §3.4).
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The ALPN protocols the TLS side offers, preferred first.
pub const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// At most this many streams at once on one HTTP/2 connection (each a request or a gRPC call).
const MAX_STREAMS: u32 = 256;

/// The HTTP version of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// HTTP/1.0 or 1.1.
    Http1,
    /// HTTP/2.
    Http2,
}

/// The version of a TLS session, from the protocol ALPN chose (none: HTTP/1.1).
pub fn negotiated(alpn: Option<&[u8]>) -> Version {
    if alpn == Some(ALPN[0]) {
        Version::Http2
    } else {
        Version::Http1
    }
}

/// The version a plain-text client speaks, from its first bytes, read without consuming them;
/// `None` if it closed or sent nothing within [`HEADER_TIMEOUT`]. A client that sends the preface
/// in pieces is waited for (1 ms between looks).
pub async fn sniff(stream: &tokio::net::TcpStream) -> Option<Version> {
    let look = async {
        let mut first = [0u8; PREFACE.len()];
        loop {
            let n = stream.peek(&mut first).await.ok()?;
            if n == 0 {
                return None;
            }
            if first[..n] != PREFACE[..n] {
                return Some(Version::Http1);
            }
            if n == PREFACE.len() {
                return Some(Version::Http2);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    };
    tokio::time::timeout(HEADER_TIMEOUT, look)
        .await
        .ok()
        .flatten()
}

/// hyper's HTTP/2 server: tasks on the serving thread's runtime, Tokio's timer, at most
/// [`MAX_STREAMS`] streams at once, and a ping every 30 s on an idle connection (closed if
/// unanswered for 20 s).
pub fn http2() -> hyper::server::conn::http2::Builder<TokioExecutor> {
    let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
    builder
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS)
        .keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(20));
    builder
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpn_chooses() {
        assert_eq!(negotiated(Some(b"h2")), Version::Http2);
        assert_eq!(negotiated(Some(b"http/1.1")), Version::Http1);
        assert_eq!(negotiated(None), Version::Http1);
    }
}
