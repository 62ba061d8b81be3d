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

use super::super::model::limits::{MAX_STREAMS, SEND_BUFFER};
use super::listen::HEADER_TIMEOUT;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, ReadBuf};

/// What an HTTP/2 client sends first (RFC 9113 §3.4).
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The ALPN protocols the TLS side offers, preferred first.
pub const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

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

/// The version a plain-text client speaks, from its first bytes, and those bytes (read, to be
/// read again by hyper: [`Rewind`]); `None` if it closed, or had not told within
/// [`HEADER_TIMEOUT`]. The bytes are read as they come, at most the preface's 24: a client that
/// sends the preface in pieces is waited for without a look every so often, and its end of the
/// connection (EOF) ends the wait at once.
pub async fn sniff(stream: &mut tokio::net::TcpStream) -> Option<(Version, Vec<u8>)> {
    let look = async {
        let mut first = [0u8; PREFACE.len()];
        let mut n = 0;
        loop {
            let read = stream.read(&mut first[n..]).await.ok()?;
            if read == 0 {
                return None;
            }
            n += read;
            if first[..n] != PREFACE[..n] {
                return Some((Version::Http1, first[..n].to_vec()));
            }
            if n == PREFACE.len() {
                return Some((Version::Http2, first.to_vec()));
            }
        }
    };
    tokio::time::timeout(HEADER_TIMEOUT, look)
        .await
        .ok()
        .flatten()
}

/// A stream whose first bytes were read already ([`sniff`]): reads give them again first.
pub struct Rewind<I> {
    first: Vec<u8>,
    at: usize,
    io: I,
}

impl<I> Rewind<I> {
    /// `io`, `first` read from it.
    pub fn new(first: Vec<u8>, io: I) -> Self {
        Rewind { first, at: 0, io }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Rewind<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.at < self.first.len() {
            let n = (self.first.len() - self.at).min(buf.remaining());
            buf.put_slice(&self.first[self.at..self.at + n]);
            self.at += n;
            if self.at == self.first.len() {
                self.first = Vec::new();
                self.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Rewind<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// hyper's HTTP/2 server: tasks on the serving thread's runtime, Tokio's timer, at most
/// [`MAX_STREAMS`] streams at once, at most [`SEND_BUFFER`] of a stream's answer held unsent,
/// request headers of at most [`MAX_HEADER_LIST`], and a ping
/// every 30 s on a connection (closed if unanswered for 20 s: a peer that stopped reading its
/// socket). A connection with no open stream is closed by the service after
/// [`IDLE`](crate::model::limits::IDLE) ([`super::idle`]).
pub fn http2() -> hyper::server::conn::http2::Builder<TokioExecutor> {
    let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
    builder
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS)
        .max_header_list_size(MAX_HEADER_LIST)
        .max_send_buf_size(SEND_BUFFER)
        .keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(20));
    builder
}

/// The most a request's headers may take over HTTP/2 (HPACK's decoded size: names, values, 32
/// bytes an entry): 16 KiB, hyper's default, said here. A larger header block resets the stream.
const MAX_HEADER_LIST: u32 = 16 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn first_bytes_are_read_again() {
        use tokio::io::AsyncReadExt as _;
        let (a, mut b) = tokio::io::duplex(64);
        let mut io = Rewind::new(b"GET / HT".to_vec(), a);
        tokio::io::AsyncWriteExt::write_all(&mut b, b"TP/1.1\r\n")
            .await
            .unwrap();
        drop(b);
        let mut all = String::new();
        io.read_to_string(&mut all).await.unwrap();
        assert_eq!(all, "GET / HTTP/1.1\r\n");
    }

    #[test]
    fn alpn_chooses() {
        assert_eq!(negotiated(Some(b"h2")), Version::Http2);
        assert_eq!(negotiated(Some(b"http/1.1")), Version::Http1);
        assert_eq!(negotiated(None), Version::Http1);
    }
}
