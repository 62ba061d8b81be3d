//! What one client may hold of the service, and how much of it is held now: the limits that
//! bound the service's memory whatever its clients send or fail to read, and their counters for
//! `/status` and `/metrics`.
//!
//! # The memory bound
//!
//! What a connection holds is bounded by its streams: an HTTP/1.1 connection has one request at
//! a time, an HTTP/2 one at most [`MAX_STREAMS`]. A small answer (at most [`LARGE_IDS`] IDs, a
//! health check, an error, the status page, a scrape) is written whole, a few KiB; so a
//! connection whose client reads nothing holds at most `MAX_STREAMS` of them (measured, release
//! build: about 1 MiB for 256 unread `/id` answers, 2.5 MiB for `/ids?count=256`, 4.5 MiB for
//! `/metrics`, beside what the kernel's socket buffers take). A *large* answer (`/ids`, gRPC
//! `Batch`, the segment mode's `?count=N` and `SegmentBatch` of more than [`LARGE_IDS`] IDs,
//! gRPC `Stream` of more) holds its IDs, 8 bytes each
//! (800 KB for 100,000), and writes them in pieces of [`PIECE_IDS`] as the client reads, HTTP/2
//! buffering at most 64 KiB a stream: about 1 MiB each. At most [`Limits::max_large_answers`] of
//! them are written at once, across every connection; more wait their turn, first come, first
//! served, for at most `--max-wait`, then get a 503 (gRPC: `UNAVAILABLE`) with a retry delay. A
//! large answer that makes no progress for [`STALL`] (a client that stopped reading, at the TCP
//! level or by keeping HTTP/2's flow-control window shut) is abandoned: its IDs and its turn are
//! given back, and its stream is reset. And at most [`Limits::max_connections`] connections are
//! open at once per listener; more are closed as soon as they are accepted.
//!
//! So the service holds at most about `max_connections` times a connection's small answers, plus
//! `max_large_answers` large ones, whatever its clients do: with the defaults, 4 connections
//! that ask for every stream's worth of `/ids?count=100000` (or gRPC `Batch`) and never read
//! take it to about 70 MiB, from 1.6 GiB before (`tests/hostile_clients.rs`); once they have
//! left, what their answers took is given back to the system ([`super::memory`]). None of this
//! is on the per-ID path: a large answer's turn is taken once per answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Streams at once on one HTTP/2 connection (each a request or a gRPC call).
pub const MAX_STREAMS: u32 = 256;

/// An answer of more than this many IDs is a large one ([`Limits::max_large_answers`]): 256 IDs
/// are about 5.6 KB of JSON.
pub const LARGE_IDS: usize = 256;

/// A large `/ids` answer is written this many IDs at a time (about 45 KB of decimal JSON), each
/// piece when the client has read enough of the one before it.
pub const PIECE_IDS: usize = 2_048;

/// What HTTP/2 may hold of one stream's answer, unsent (hyper's `max_send_buf_size`: its own
/// default is 400 KiB); a large answer is handed to it in pieces of at most this much.
pub const SEND_BUFFER: usize = 64 * 1024;

/// A large answer that makes no progress for this long is abandoned (see the module's doc).
pub const STALL: Duration = Duration::from_secs(30);

/// An HTTP/2 connection with no open stream for this long is closed (as an HTTP/1.1 connection
/// that sends no request's headers within the same 30 s).
pub const IDLE: Duration = Duration::from_secs(30);

/// The largest gRPC request message the service decodes, for every service (`IdService`,
/// `Health`, reflection): their requests are a name, a count, an ID or a symbol, a few hundred
/// bytes at most. A larger one is refused (`OUT_OF_RANGE`) from its length prefix, before it
/// is read.
pub const GRPC_MAX_REQUEST_BYTES: usize = 4 * 1024;

/// The default of `--max-connections`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// The default of `--max-large-answers`.
pub const DEFAULT_MAX_LARGE_ANSWERS: usize = 64;

/// The limits and what is held of them, shared by every listener and serving thread.
pub struct Limits {
    /// Connections open at once on one listener (`--max-connections`).
    pub max_connections: usize,
    /// Large answers written at once, across every connection (`--max-large-answers`).
    pub max_large_answers: usize,
    /// The main listener's connections.
    pub main: Arc<Connections>,
    /// The `--metrics-listen` listener's: a cap of its own, so that clients of the main one
    /// cannot keep the operators out.
    pub internal: Arc<Connections>,
    large: Arc<Semaphore>,
    /// Large answers abandoned for making no progress for [`STALL`].
    stalled: AtomicU64,
    /// Large answers' turns taken so far, and as many when memory was last given back.
    turns_taken: AtomicU64,
    turns_at_give_back: AtomicU64,
}

impl Limits {
    /// The limits `max_connections` and `max_large_answers` (each at least 1).
    pub fn new(max_connections: usize, max_large_answers: usize) -> Limits {
        let max_large_answers = max_large_answers.clamp(1, Semaphore::MAX_PERMITS);
        Limits {
            max_connections: max_connections.max(1),
            max_large_answers,
            main: Arc::default(),
            internal: Arc::default(),
            large: Arc::new(Semaphore::new(max_large_answers)),
            stalled: AtomicU64::new(0),
            turns_taken: AtomicU64::new(0),
            turns_at_give_back: AtomicU64::new(0),
        }
    }

    /// Waits for a large answer's turn, at most `wait`; `None` if none came (the caller answers
    /// 503). The turn is given back when the returned [`Turn`] is dropped.
    pub async fn large_turn(&self, wait: Duration) -> Option<Turn> {
        let large = Arc::clone(&self.large);
        let turn = match large.try_acquire_owned() {
            Ok(permit) => Turn(permit),
            Err(_) => tokio::time::timeout(wait, Arc::clone(&self.large).acquire_owned())
                .await
                .ok()?
                .ok()
                .map(Turn)?,
        };
        self.turns_taken.fetch_add(1, Ordering::Relaxed);
        Some(turn)
    }

    /// Whether large answers were written since the last time this said so, none being written
    /// now: the time to give their memory back ([`super::memory`]).
    pub fn large_answers_over(&self) -> bool {
        let taken = self.turns_taken.load(Ordering::Relaxed);
        self.large_answers() == 0 && self.turns_at_give_back.swap(taken, Ordering::Relaxed) != taken
    }

    /// Why a large answer got no turn within `wait`, for its 503 (or `UNAVAILABLE`).
    pub fn no_turn(&self, wait: Duration) -> String {
        format!(
            "no turn for a large answer within {} s: {} answers of more than {LARGE_IDS} IDs are \
             being written at once (--max-large-answers {}); retry in 1 s, or ask for at most \
             {LARGE_IDS} IDs",
            wait.as_secs(),
            self.large_answers(),
            self.max_large_answers
        )
    }

    /// The connections of a listener: the `--metrics-listen` one's if `internal`, else the main
    /// one's.
    pub fn connections(&self, internal: bool) -> &Arc<Connections> {
        if internal { &self.internal } else { &self.main }
    }

    /// Large answers being written now.
    pub fn large_answers(&self) -> usize {
        self.max_large_answers
            .saturating_sub(self.large.available_permits())
    }

    /// Counts a large answer abandoned for making no progress.
    pub fn count_stalled(&self) {
        self.stalled.fetch_add(1, Ordering::Relaxed);
    }

    /// Large answers abandoned so far.
    pub fn stalled(&self) -> u64 {
        self.stalled.load(Ordering::Relaxed)
    }

    /// The series of the limits in Prometheus's text format, for `/metrics`.
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = write!(
            out,
            "# HELP ringflake_connections Connections open, by listener (main: --listen; \
             internal: --metrics-listen)\n\
             # TYPE ringflake_connections gauge\n\
             ringflake_connections{{listener=\"main\"}} {}\n\
             ringflake_connections{{listener=\"internal\"}} {}\n\
             # HELP ringflake_connections_max The most connections open at once per listener \
             (--max-connections)\n\
             # TYPE ringflake_connections_max gauge\n\
             ringflake_connections_max {}\n\
             # HELP ringflake_connections_refused_total Connections closed as soon as accepted, \
             the listener having --max-connections open\n\
             # TYPE ringflake_connections_refused_total counter\n\
             ringflake_connections_refused_total{{listener=\"main\"}} {}\n\
             ringflake_connections_refused_total{{listener=\"internal\"}} {}\n\
             # HELP ringflake_large_answers Answers of more than {LARGE_IDS} IDs being written \
             (/ids, segment batches, gRPC Batch, SegmentBatch and Stream)\n\
             # TYPE ringflake_large_answers gauge\n\
             ringflake_large_answers {}\n\
             # HELP ringflake_large_answers_max The most large answers written at once \
             (--max-large-answers)\n\
             # TYPE ringflake_large_answers_max gauge\n\
             ringflake_large_answers_max {}\n\
             # HELP ringflake_large_answers_stalled_total Large answers abandoned after {} s \
             without progress (a client that stopped reading)\n\
             # TYPE ringflake_large_answers_stalled_total counter\n\
             ringflake_large_answers_stalled_total {}\n",
            self.main.open(),
            self.internal.open(),
            self.max_connections,
            self.main.refused(),
            self.internal.refused(),
            self.large_answers(),
            self.max_large_answers,
            STALL.as_secs(),
            self.stalled(),
        );
    }
}

/// A rate limit for one kind of log line, shared by the serving threads: at most one line in
/// `every_ms` milliseconds, saying how many were not logged before it (out of file descriptors,
/// each thread fails an accept every 10 ms; a full listener refuses every connection: hundreds
/// of identical lines a second).
pub struct Throttle {
    every_ms: u64,
    /// Milliseconds since [`started`] from which the next line may be logged.
    next_ms: AtomicU64,
    /// Lines not logged since the last one.
    suppressed: AtomicU64,
}

impl Throttle {
    /// At most a line every `every_ms` milliseconds.
    pub const fn new(every_ms: u64) -> Throttle {
        Throttle {
            every_ms,
            next_ms: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// Whether to log now, and if so how many lines were not logged before this one.
    pub fn allow(&self) -> Option<u64> {
        let now = started().elapsed().as_millis() as u64;
        let next = self.next_ms.load(Ordering::Relaxed);
        if now >= next
            && self
                .next_ms
                .compare_exchange(
                    next,
                    now + self.every_ms,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            return Some(self.suppressed.swap(0, Ordering::Relaxed));
        }
        self.suppressed.fetch_add(1, Ordering::Relaxed);
        None
    }

    /// The lines' period, in seconds.
    pub fn every_s(&self) -> u64 {
        self.every_ms / 1000
    }
}

/// The process's monotonic start, for [`Throttle`].
fn started() -> std::time::Instant {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *START.get_or_init(std::time::Instant::now)
}

/// A large answer's turn (see [`Limits::large_turn`]), given back when dropped.
pub struct Turn(#[allow(dead_code)] OwnedSemaphorePermit);

/// One listener's connections: how many are open, how many were refused.
#[derive(Default)]
pub struct Connections {
    open: AtomicUsize,
    refused: AtomicU64,
}

impl Connections {
    /// Counts a connection in if fewer than `max` are open: the slot is given back when the
    /// returned [`Slot`] is dropped. `None`: the listener is full, and the refusal is counted.
    pub fn admit(self: &Arc<Self>, max: usize) -> Option<Slot> {
        let admitted = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok();
        if admitted {
            Some(Slot(Arc::clone(self)))
        } else {
            self.refused.fetch_add(1, Ordering::Relaxed);
            None
        }
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// Connections refused so far.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}

/// An open connection's place among its listener's ([`Connections::admit`]).
pub struct Slot(Arc<Connections>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_capped_and_given_back() {
        let c = Arc::new(Connections::default());
        let a = c.admit(2).unwrap();
        let b = c.admit(2).unwrap();
        assert!(c.admit(2).is_none());
        assert_eq!((c.open(), c.refused()), (2, 1));
        drop(a);
        let _c = c.admit(2).unwrap();
        assert!(c.admit(2).is_none());
        drop(b);
        assert_eq!((c.open(), c.refused()), (1, 2));
    }

    #[test]
    fn throttled_lines() {
        let t = Throttle::new(60_000);
        assert_eq!(t.allow(), Some(0));
        assert_eq!(t.allow(), None);
        assert_eq!(t.allow(), None);
        assert_eq!(t.suppressed.load(Ordering::Relaxed), 2);
    }

    #[tokio::test]
    async fn large_answers_take_turns() {
        let limits = Limits::new(1, 2);
        let a = limits.large_turn(Duration::ZERO).await.unwrap();
        let _b = limits.large_turn(Duration::ZERO).await.unwrap();
        assert_eq!(limits.large_answers(), 2);
        assert!(limits.large_turn(Duration::from_millis(10)).await.is_none());
        drop(a);
        assert!(limits.large_turn(Duration::ZERO).await.is_some());
        let mut out = String::new();
        limits.render(&mut out);
        assert!(out.contains("\nringflake_large_answers_max 2\n"), "{out}");
        assert!(out.contains("\nringflake_connections_max 1\n"), "{out}");
    }
}
