//! Large answers (more than [`LARGE_IDS`] IDs: `/ids`, gRPC `Batch` and `Stream`, the segment
//! mode's `?count=N` and `SegmentBatch`), as the
//! [limits](crate::model::limits) bound them: each holds a turn of
//! `--max-large-answers` while it is written, is written a piece at a time as its client reads
//! ([`IdsJson`] for `/ids`; tonic writes gRPC messages as they come), and is abandoned when it
//! makes no progress for [`STALL`] ([`Large`]).
//!
//! The IDs of a large `/ids` answer are taken before it starts, as for a small one: a take that
//! fails is still a 503, and the answer keeps its `content-length`. Only their text is written
//! as the client reads: 8 bytes an ID are held (800 KB for 100,000), not the 22 of their JSON.

use super::super::model::app::App;
use super::super::model::limits::{
    LARGE_IDS, Limits, PIECE_IDS, SEND_BUFFER, STALL, Throttle, Turn,
};
use crate::text::JsonIds;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use ringflake::IdFormat;
use std::cell::RefCell;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use tokio::time::Instant;

/// The errors a body hands hyper (which resets the stream, or closes an HTTP/1.1 connection).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What is said once in a while of abandoned answers: at most a line every 10 s.
static ABANDONED: Throttle = Throttle::new(10_000);

/// The JSON array of an `/ids` answer, written [`PIECE_IDS`] IDs at a time as hyper asks for
/// the next piece (which it does when the client has read enough of the one before).
pub struct IdsJson {
    ids: Vec<u64>,
    written: usize,
    writer: JsonIds,
    len: u64,
    done: bool,
}

impl IdsJson {
    /// The answer of `ids` in `format`.
    pub fn new(ids: Vec<u64>, format: IdFormat) -> IdsJson {
        IdsJson {
            len: JsonIds::len(&ids, format),
            ids,
            written: 0,
            writer: JsonIds::new(format),
            done: false,
        }
    }
}

impl Body for IdsJson {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let end = (self.written + PIECE_IDS).min(self.ids.len());
        let last = end == self.ids.len();
        let mut out = Vec::new();
        let this = &mut *self;
        this.writer
            .piece(&this.ids[this.written..end], last, &mut out);
        this.written = end;
        if last {
            this.done = true;
            // The IDs are not needed any more: given back before hyper has written the piece.
            this.ids = Vec::new();
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))))
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.len)
    }
}

/// Whether `count` IDs make a large answer.
fn is_large(count: u64) -> bool {
    count > LARGE_IDS as u64
}

/// The turn of an answer of `count` IDs (`/ids`, gRPC `Batch` and `Stream`): none for a small
/// one; for a large one, waited for at most `--max-wait` ([`App::max_wait`]). `Err`: none came,
/// and why, for the 503 (gRPC: `UNAVAILABLE`) that asks to retry in a second.
pub async fn turn(app: &App, count: u64) -> Result<Option<Turn>, String> {
    if !is_large(count) {
        return Ok(None);
    }
    match app.limits.large_turn(app.max_wait).await {
        Some(turn) => Ok(Some(turn)),
        None => Err(app.limits.no_turn(app.max_wait)),
    }
}

/// A large answer: its body `B` and its turn, abandoned (both dropped, the turn given back to
/// the next large answer, and the stream reset) once it has waited [`STALL`] for its client.
///
/// It waits for its client when hyper does not ask for its next frame after having taken one;
/// while the body itself has nothing ready (a gRPC `Stream` waiting for IDs at the lead cap,
/// bounded by `--max-wait`), hyper waits for it, not for the client, and that is no stall. The
/// serving thread's sweeper looks at it every second, from a weak reference ([`watch`]).
pub struct Large<B> {
    shared: Arc<Shared<B>>,
}

struct Shared<B> {
    /// The body, its turn, and what is left of its last frame; `None` once finished or
    /// abandoned.
    inner: Mutex<Option<Held<B>>>,
    /// When the answer started, for `handed_at`.
    start: Instant,
    /// Milliseconds from `start` to when hyper last took a frame.
    handed_at: AtomicU64,
    /// Whether the body's last answer to hyper was `Pending` (it, not the client, is awaited).
    pending: AtomicBool,
    finished: AtomicBool,
    limits: Arc<Limits>,
}

/// What a large answer holds while it is written.
struct Held<B> {
    body: B,
    _turn: Turn,
    /// The part of the body's last data frame not handed to hyper yet.
    rest: Bytes,
}

impl<B> Shared<B> {
    /// Milliseconds since the answer started (Tokio's clock).
    fn now(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }
}

impl<B> Large<B>
where
    B: Body<Data = Bytes> + Unpin + Send + 'static,
{
    /// `body`, written on `turn`, watched for stalls; called on a serving thread's runtime.
    pub fn new(body: B, turn: Turn, limits: &Arc<Limits>) -> Large<B> {
        let shared = Arc::new(Shared {
            inner: Mutex::new(Some(Held {
                body,
                _turn: turn,
                rest: Bytes::new(),
            })),
            start: Instant::now(),
            handed_at: AtomicU64::new(0),
            pending: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            limits: Arc::clone(limits),
        });
        let watched: Arc<dyn Watched> = shared.clone();
        watch(Arc::downgrade(&watched));
        Large { shared }
    }
}

/// How often a serving thread looks at its large answers for stalls.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// A large answer, as the serving thread's sweeper sees it.
trait Watched {
    /// Abandons the answer if it has waited [`STALL`] for its client; whether it is still being
    /// written (`false`: the sweeper forgets it).
    fn sweep(&self) -> bool;
}

thread_local! {
    /// The large answers of this serving thread, looked at every [`SWEEP_EVERY`] by its sweeper
    /// task (`None` until the thread's first large answer starts it): no task or timer per
    /// answer.
    static WATCHED: RefCell<Option<Vec<Weak<dyn Watched>>>> = const { RefCell::new(None) };
}

/// Has this thread's sweeper look at `answer` (started with the thread's first large answer).
fn watch(answer: Weak<dyn Watched>) {
    WATCHED.with(|watched| {
        watched
            .borrow_mut()
            .get_or_insert_with(|| {
                tokio::spawn(sweeper());
                Vec::new()
            })
            .push(answer);
    });
}

/// The serving thread's sweeper: every [`SWEEP_EVERY`], forgets the answers that ended and
/// abandons those that stalled. It ends with the thread's runtime, and the next runtime on the
/// thread (a test's) starts its own.
async fn sweeper() {
    /// Forgets the list when the sweeper is dropped with its runtime.
    struct Ended;
    impl Drop for Ended {
        fn drop(&mut self) {
            let _ = WATCHED.try_with(|watched| watched.borrow_mut().take());
        }
    }
    let _ended = Ended;
    loop {
        tokio::time::sleep(SWEEP_EVERY).await;
        // Out of the cell while they are looked at: abandoning one drops what it held.
        let answers = WATCHED.with(|watched| {
            watched
                .borrow_mut()
                .as_mut()
                .map(std::mem::take)
                .unwrap_or_default()
        });
        let going: Vec<_> = answers
            .into_iter()
            .filter(|answer| answer.upgrade().is_some_and(|a| a.sweep()))
            .collect();
        WATCHED.with(|watched| {
            if let Some(list) = watched.borrow_mut().as_mut() {
                list.extend(going);
            }
        });
    }
}

impl<B> Watched for Shared<B> {
    fn sweep(&self) -> bool {
        if self.finished.load(Ordering::Acquire) {
            return false;
        }
        let waited = self
            .now()
            .saturating_sub(self.handed_at.load(Ordering::Acquire));
        if self.pending.load(Ordering::Acquire) || waited < STALL.as_millis() as u64 {
            return true;
        }
        let abandoned = self.inner.lock().unwrap_or_else(|e| e.into_inner()).take();
        if abandoned.is_some() {
            drop(abandoned);
            self.limits.count_stalled();
            if let Some(suppressed) = ABANDONED.allow() {
                tracing::warn!(
                    target: crate::log::TARGET,
                    stall_s = STALL.as_secs(),
                    suppressed,
                    "a large answer made no progress for {} s (its client stopped reading): \
                     abandoned, its IDs and its turn given back{}",
                    STALL.as_secs(),
                    if suppressed > 0 {
                        format!(" ({suppressed} more in the last 10 s)")
                    } else {
                        String::new()
                    }
                );
            }
        }
        false
    }
}

impl<B> Body for Large<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let shared = &self.shared;
        let mut inner = shared.inner.lock().unwrap_or_else(|e| e.into_inner());
        let Some(held) = inner.as_mut() else {
            if shared.finished.load(Ordering::Acquire) {
                return Poll::Ready(None);
            }
            return Poll::Ready(Some(Err(format!(
                "answer abandoned: its client read nothing of it for {} s",
                STALL.as_secs()
            )
            .into())));
        };
        shared.handed_at.store(shared.now(), Ordering::Release);
        if !held.rest.is_empty() {
            shared.pending.store(false, Ordering::Release);
            let piece = piece_of(&mut held.rest);
            return Poll::Ready(Some(Ok(Frame::data(piece))));
        }
        let polled = Pin::new(&mut held.body).poll_frame(cx);
        shared.pending.store(polled.is_pending(), Ordering::Release);
        match polled {
            Poll::Ready(None) => {
                shared.finished.store(true, Ordering::Release);
                // The turn goes to the next large answer as soon as this one is handed over.
                *inner = None;
                Poll::Ready(None)
            }
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => {
                    held.rest = data;
                    Poll::Ready(Some(Ok(Frame::data(piece_of(&mut held.rest)))))
                }
                Err(trailers) => Poll::Ready(Some(Ok(trailers))),
            },
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.shared.finished.load(Ordering::Acquire)
            || self
                .shared
                .inner
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .is_some_and(|held| held.rest.is_empty() && held.body.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.shared.inner.lock().unwrap_or_else(|e| e.into_inner());
        let Some(held) = inner.as_ref() else {
            return SizeHint::with_exact(0);
        };
        let hint = held.body.size_hint();
        let rest = held.rest.len() as u64;
        match hint.exact() {
            Some(exact) => SizeHint::with_exact(exact + rest),
            None => {
                let mut more = SizeHint::new();
                more.set_lower(hint.lower() + rest);
                if let Some(upper) = hint.upper() {
                    more.set_upper(upper + rest);
                }
                more
            }
        }
    }
}

/// The next piece of `rest` for hyper: at most [`SEND_BUFFER`] bytes. hyper asks for a frame
/// as soon as it has handed the last one to HTTP/2, and waits for the client only before handing
/// it over: a frame larger than HTTP/2's send buffer (a gRPC `Batch` of 100,000 IDs is one
/// 800 KB message) would sit whole in that buffer, the answer finished and its turn given back
/// while the client reads none of it.
fn piece_of(rest: &mut Bytes) -> Bytes {
    rest.split_to(rest.len().min(SEND_BUFFER))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;

    #[tokio::test]
    async fn ids_are_written_in_pieces() {
        let ids: Vec<u64> = (1u64 << 40..(1u64 << 40) + 5_000).collect();
        let mut body = IdsJson::new(ids.clone(), IdFormat::Decimal);
        let len = body.size_hint().exact().unwrap();
        let mut pieces = Vec::new();
        while let Some(frame) = body.frame().await {
            pieces.push(frame.unwrap().into_data().unwrap());
        }
        assert_eq!(pieces.len(), 3, "pieces of {PIECE_IDS} IDs");
        let all: Vec<u8> = pieces.concat();
        assert_eq!(all.len() as u64, len);
        let mut whole = Vec::new();
        crate::text::json_ids(&ids, &mut whole);
        assert_eq!(all, whole);
        assert!(body.is_end_stream());
    }

    /// A frame larger than HTTP/2's send buffer is handed to hyper in pieces, the turn held
    /// until the last.
    #[tokio::test]
    async fn large_frames_are_handed_over_in_pieces() {
        let limits = Arc::new(Limits::new(1, 1));
        let turn = limits.large_turn(std::time::Duration::ZERO).await.unwrap();
        let message = Bytes::from(vec![7u8; 2 * SEND_BUFFER + 5]);
        let body = http_body_util::Full::new(message.clone());
        let mut large = Large::new(body, turn, &limits);
        assert_eq!(large.size_hint().exact(), Some(message.len() as u64));
        let mut sizes = Vec::new();
        let mut all = Vec::new();
        while let Some(frame) = large.frame().await {
            assert_eq!(limits.large_answers(), 1);
            let data = frame.unwrap().into_data().unwrap();
            sizes.push(data.len());
            all.extend_from_slice(&data);
        }
        assert_eq!(sizes, [SEND_BUFFER, SEND_BUFFER, 5]);
        assert_eq!(all, message);
        assert_eq!(limits.large_answers(), 0);
    }

    #[tokio::test]
    async fn a_finished_answer_gives_its_turn_back() {
        let limits = Arc::new(Limits::new(1, 1));
        let turn = limits.large_turn(std::time::Duration::ZERO).await.unwrap();
        let body = IdsJson::new(vec![1, 2, 3], IdFormat::Decimal);
        let large = Large::new(body, turn, &limits);
        assert_eq!(limits.large_answers(), 1);
        let bytes = large.collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], br#"["1","2","3"]"#);
        assert_eq!(limits.large_answers(), 0);
        assert!(is_large(LARGE_IDS as u64 + 1) && !is_large(LARGE_IDS as u64));
    }
}
