//! The `{"error":…}` body for the answers hyper writes itself.
//!
//! When a request cannot be parsed (a malformed request line or header: 400; a URI above 65,534
//! bytes: 414; a head above [`super::listen::MAX_HEAD_BYTES`]: 431), hyper 1 answers it before any
//! route runs, with a status line, `connection: close`, `content-length: 0` and a date, and closes
//! the connection; its `http1::Builder` has no hook for a body. [`JsonBodies`] sits between hyper
//! and the connection and recognises that answer as it is written: a `4xx` head with
//! `content-length: 0` and no `content-type`, which no route of the service ever writes (every
//! answer of the service has a content type). It writes instead the same head with
//! `content-type: application/json`, the length, and the JSON error saying what was wrong. Every
//! other write goes through untouched: the cost per answer is one comparison of its first bytes.

use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// An I/O stream whose bodiless 4xx answers from hyper get a JSON body.
pub struct JsonBodies<I> {
    io: I,
    /// The rewritten answer, and how much of it is written.
    pending: Vec<u8>,
    written: usize,
}

impl<I> JsonBodies<I> {
    /// Wraps `io`.
    pub fn new(io: I) -> Self {
        JsonBodies {
            io,
            pending: Vec::new(),
            written: 0,
        }
    }
}

/// The message for hyper's own answer with `status`.
fn message(status: &[u8]) -> Option<&'static str> {
    Some(match status {
        b"400" => {
            "malformed request: the request line or a header does not follow HTTP/1.1's grammar \
             (request target: ASCII, no spaces or control bytes)"
        }
        b"414" => "URI too long: at most 65534 bytes",
        b"431" => {
            "request head too large: the request line and headers may take at most 65536 bytes"
        }
        _ => return None,
    })
}

/// hyper's own answer, rewritten with a JSON body; `None` if `head` is anything else.
fn rewrite(head: &[u8]) -> Option<Vec<u8>> {
    const EMPTY: &[u8] = b"\r\ncontent-length: 0\r\n";
    let status = head.strip_prefix(b"HTTP/1.1 4")?;
    if !head.ends_with(b"\r\n\r\n") {
        return None;
    }
    let at = head.windows(EMPTY.len()).position(|w| w == EMPTY)?;
    if head
        .windows(14)
        .any(|w| w.eq_ignore_ascii_case(b"\r\ncontent-type"))
    {
        return None;
    }
    let code = [b'4', *status.first()?, *status.get(1)?];
    let body = crate::text::json_error(message(&code)?);
    let mut out = Vec::with_capacity(head.len() + body.len() + 48);
    out.extend_from_slice(&head[..at]);
    out.extend_from_slice(b"\r\ncontent-type: application/json");
    out.extend_from_slice(format!("\r\ncontent-length: {}\r\n", body.len()).as_bytes());
    out.extend_from_slice(&head[at + EMPTY.len()..]);
    out.extend_from_slice(body.as_bytes());
    Some(out)
}

impl<I: AsyncWrite + Unpin> JsonBodies<I> {
    /// Writes what is left of a rewritten answer.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while self.written < self.pending.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.pending[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }

    /// Takes `buf` if it is hyper's own answer: its rewrite is written instead (now, or by the
    /// next write, flush or shutdown). `None`: `buf` is to be written as it is.
    fn take(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Option<Poll<std::io::Result<usize>>> {
        // The status's first digit first: for any answer but a 4xx, one byte compared.
        if buf.get(9) != Some(&b'4') || !buf.starts_with(b"HTTP/1.1 4") {
            return None;
        }
        self.pending = rewrite(buf)?;
        self.written = 0;
        // Written bytes or not, `buf` is taken; what is left goes out with the flush that follows.
        if let Poll::Ready(Err(e)) = self.drain(cx) {
            return Some(Poll::Ready(Err(e)));
        }
        Some(Poll::Ready(Ok(buf.len())))
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for JsonBodies<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for JsonBodies<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        ready!(self.drain(cx))?;
        if let Some(taken) = self.take(cx, buf) {
            return taken;
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        ready!(self.drain(cx))?;
        if let Some(first) = bufs.iter().find(|b| !b.is_empty())
            && let Some(taken) = self.take(cx, first)
        {
            return taken;
        }
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_own_answers_get_a_body() {
        let head = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\n\
                     content-length: 0\r\ndate: Mon, 23 Nov 2026 21:00:00 GMT\r\n\r\n";
        let out = String::from_utf8(rewrite(head).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
        assert!(
            head.contains("\r\ncontent-type: application/json\r\n"),
            "{head}"
        );
        assert!(
            head.contains(&format!("\r\ncontent-length: {}\r\n", body.len())),
            "{head}"
        );
        assert!(head.contains("\r\nconnection: close") && head.contains("\r\ndate: "));
        assert_eq!(
            body,
            r#"{"error":"request head too large: the request line and headers may take at most 65536 bytes"}"#
        );
        let bad = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        assert!(
            String::from_utf8(rewrite(bad).unwrap())
                .unwrap()
                .contains("malformed request")
        );
    }

    #[test]
    fn the_services_own_answers_pass() {
        for head in [
            &b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n"[..],
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 12\r\n\r\n",
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n",
        ] {
            assert_eq!(rewrite(head), None, "{}", String::from_utf8_lossy(head));
        }
    }

    #[tokio::test]
    async fn written_through_the_stream() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        // A pipe of 16 bytes: the rewritten answer goes out in pieces, across writes and flushes.
        let (a, mut b) = tokio::io::duplex(16);
        let writer = async move {
            let mut w = JsonBodies::new(a);
            w.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                .await
                .unwrap();
            w.write_all(
                b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
            )
            .await
            .unwrap();
            w.shutdown().await.unwrap();
        };
        let mut all = String::new();
        let reader = b.read_to_string(&mut all);
        let ((), read) = tokio::join!(writer, reader);
        read.unwrap();
        assert!(all.starts_with("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 414"));
        assert!(
            all.ends_with(r#"{"error":"URI too long: at most 65534 bytes"}"#),
            "{all}"
        );
    }
}
