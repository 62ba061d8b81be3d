//! The idle timeout of an HTTP/2 connection: closed (gracefully: a `GOAWAY`, then the end) once
//! it has had no open stream for [`IDLE`](crate::model::limits::IDLE), as an HTTP/1.1
//! connection that sends no request's headers within the same time is. hyper's HTTP/2 server
//! has no such timeout (its keep-alive pings only find peers that stopped answering), so the
//! service counts a connection's streams itself: a stream opens when its request reaches the
//! service and closes when its answer's body is done or dropped ([`Counted`]).

use crate::handlers::fast::Short;
use bytes::{Buf, Bytes};
use hyper::body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// The open streams of one HTTP/2 connection.
pub struct Streams {
    open: AtomicUsize,
    /// When the connection started (Tokio's clock).
    start: Instant,
    /// Milliseconds from `start` to when the last open stream closed (0: none has opened).
    closed_at: AtomicU64,
    /// Woken when the last open stream closes.
    none_open: Notify,
}

impl Streams {
    /// The streams of a connection that starts now.
    pub fn new() -> Arc<Self> {
        Arc::new(Streams {
            open: AtomicUsize::new(0),
            start: Instant::now(),
            closed_at: AtomicU64::new(0),
            none_open: Notify::new(),
        })
    }

    /// Counts a stream open until the returned guard is dropped.
    pub fn open(self: &Arc<Self>) -> Open {
        self.open.fetch_add(1, Ordering::AcqRel);
        Open(Arc::clone(self))
    }

    /// Resolves once the connection has had no open stream for `idle`.
    pub async fn idle(&self, idle: Duration) {
        loop {
            loop {
                let none_open = self.none_open.notified();
                tokio::pin!(none_open);
                none_open.as_mut().enable();
                if self.open.load(Ordering::Acquire) == 0 {
                    break;
                }
                none_open.await;
            }
            let closed_at = self.closed_at.load(Ordering::Acquire);
            tokio::time::sleep_until(self.start + Duration::from_millis(closed_at) + idle).await;
            if self.open.load(Ordering::Acquire) == 0
                && self.closed_at.load(Ordering::Acquire) == closed_at
            {
                return;
            }
        }
    }
}

/// An open stream ([`Streams::open`]).
pub struct Open(Arc<Streams>);

impl Drop for Open {
    fn drop(&mut self) {
        let streams = &self.0;
        if streams.open.fetch_sub(1, Ordering::AcqRel) == 1 {
            // At least 1: a stream that closes at the start still moves the mark.
            let now = (streams.start.elapsed().as_millis() as u64).max(1);
            let previous = streams.closed_at.load(Ordering::Relaxed);
            streams
                .closed_at
                .store(now.max(previous + 1), Ordering::Release);
            streams.none_open.notify_waiters();
        }
    }
}

/// An answer's body holding its stream open until it is done or dropped (`None`: an HTTP/1.1
/// answer, whose connection counts no streams); its data a [`Chunk`].
pub struct Counted<B> {
    body: Inner<B>,
    _open: Option<Open>,
}

/// A [`Counted`]'s body: one of [`Bytes`] frames, or the fast path's [`Short`] one.
enum Inner<B> {
    Body(B),
    /// `None` once handed over.
    Short(Option<Short>),
}

impl<B> Counted<B> {
    /// `body`, its stream open.
    pub fn new(body: B, open: Option<Open>) -> Self {
        Counted {
            body: Inner::Body(body),
            _open: open,
        }
    }

    /// The short body `short`, its stream open.
    pub fn short(short: Short, open: Option<Open>) -> Self {
        Counted {
            body: Inner::Short(Some(short)),
            _open: open,
        }
    }
}

/// The data of an answer's body: [`Bytes`], or a [`Short`] body held inline.
pub enum Chunk {
    /// A frame of a body of [`Bytes`].
    Bytes(Bytes),
    /// The fast path's digits.
    Short(Short),
}

impl Buf for Chunk {
    fn remaining(&self) -> usize {
        match self {
            Chunk::Bytes(b) => b.remaining(),
            Chunk::Short(s) => s.remaining(),
        }
    }

    fn chunk(&self) -> &[u8] {
        match self {
            Chunk::Bytes(b) => b.chunk(),
            Chunk::Short(s) => s.chunk(),
        }
    }

    fn advance(&mut self, n: usize) {
        match self {
            Chunk::Bytes(b) => b.advance(n),
            Chunk::Short(s) => s.advance(n),
        }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Counted<B> {
    type Data = Chunk;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Chunk>, B::Error>>> {
        match &mut self.body {
            Inner::Body(body) => Pin::new(body)
                .poll_frame(cx)
                .map(|frame| frame.map(|frame| frame.map(|f| f.map_data(Chunk::Bytes)))),
            Inner::Short(short) => {
                Poll::Ready(short.take().map(|s| Ok(Frame::data(Chunk::Short(s)))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.body {
            Inner::Body(body) => body.is_end_stream(),
            Inner::Short(short) => short.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.body {
            Inner::Body(body) => body.size_hint(),
            Inner::Short(short) => SizeHint::with_exact(short.map_or(0, |s| s.remaining() as u64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On the real clock, in tenths of the 30 s (so that a slow machine's delays stay small
    /// beside them): 300 ms for 30 s.
    #[tokio::test]
    async fn idle_after_the_last_stream() {
        let ms = Duration::from_millis;
        let streams = Streams::new();
        let idle = ms(300);
        let a = streams.open();
        let watcher = {
            let streams = Arc::clone(&streams);
            tokio::spawn(async move { streams.idle(idle).await })
        };
        tokio::time::sleep(ms(500)).await;
        assert!(!watcher.is_finished(), "idle with a stream open");
        drop(a);
        let closed = Instant::now();
        // A stream that opens and closes within the wait restarts it: idle 300 ms after it.
        tokio::time::sleep(ms(200)).await;
        drop(streams.open());
        let last = Instant::now();
        tokio::time::sleep(ms(200)).await;
        assert!(!watcher.is_finished(), "idle 200 ms after a stream");
        watcher.await.unwrap();
        assert!(last.elapsed() >= idle && closed.elapsed() >= ms(500));
        // A connection that never opens a stream: idle 300 ms after it starts.
        let start = Instant::now();
        Streams::new().idle(idle).await;
        assert!(start.elapsed() >= idle);
    }
}
