//! The idle timeout of an HTTP/2 connection: closed (gracefully: a `GOAWAY`, then the end) once
//! it has had no open stream for [`IDLE`](crate::model::limits::IDLE), as an HTTP/1.1
//! connection that sends no request's headers within the same time is. hyper's HTTP/2 server
//! has no such timeout (its keep-alive pings only find peers that stopped answering), so the
//! service counts a connection's streams itself: a stream opens when its request reaches the
//! service and closes when its answer's body is done or dropped ([`Counted`]).

use bytes::Bytes;
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
/// answer, whose connection counts no streams).
pub struct Counted<B> {
    body: B,
    _open: Option<Open>,
}

impl<B> Counted<B> {
    /// `body`, its stream open.
    pub fn new(body: B, open: Option<Open>) -> Self {
        Counted { body, _open: open }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Counted<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
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
