//! DefaultUidGenerator with a manual clock: Java's sequence behaviour, clock rollback policies,
//! exhaustion.

use ringflake::{Clock, ClockBackwards, DefaultUidGenerator, Error, Layout, ManualClock};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const T: i64 = 1_800_000_000;

/// 13 sequence bits (8,192 IDs a second), whatever `Layout::default()` becomes.
fn layout() -> Layout {
    Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap()
}

/// A [`ManualClock`] that counts how often it is read, so that a test can move it only once the
/// generator is seen waiting on it (reading it again and again), never after a guessed delay.
#[derive(Clone)]
struct WatchedClock {
    clock: ManualClock,
    reads: Arc<AtomicU64>,
}

impl Clock for WatchedClock {
    fn now_millis(&self) -> i64 {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.clock.now_millis()
    }
}

impl WatchedClock {
    fn at(seconds: i64) -> Self {
        WatchedClock {
            clock: ManualClock::from_seconds(seconds),
            reads: Arc::default(),
        }
    }

    fn reads(&self) -> u64 {
        self.reads.load(Ordering::SeqCst)
    }

    /// From another thread: once the clock has been read `n` more times than `since`, moves it
    /// by `seconds`. A generator reads it once per `next_id`, so `n = 2` means a `next_id` read
    /// it, found it short, and read it again while waiting.
    fn advance_once_read(&self, since: u64, n: u64, seconds: i64) -> std::thread::JoinHandle<()> {
        let clock = self.clone();
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            while clock.reads() < since + n {
                assert!(
                    started.elapsed() < Duration::from_secs(30),
                    "the generator never waited on the clock"
                );
                std::thread::yield_now();
            }
            clock.clock.advance_seconds(seconds);
        })
    }
}

fn gen_with(clock: &ManualClock, policy: ClockBackwards) -> DefaultUidGenerator {
    DefaultUidGenerator::builder(layout())
        .worker_id(9)
        .clock(clock.clone())
        .on_clock_backwards(policy)
        .build()
        .unwrap()
}

#[test]
fn sequence_counts_up_then_resets_each_second() {
    let clock = ManualClock::from_seconds(T);
    let g = gen_with(&clock, ClockBackwards::Refuse);
    let l = layout();
    let delta = (T - l.epoch_seconds()) as u64;
    for seq in 0..100 {
        assert_eq!(g.next_id().unwrap(), l.compose(delta, 9, seq).unwrap());
    }
    clock.advance_seconds(1);
    assert_eq!(g.next_id().unwrap(), l.compose(delta + 1, 9, 0).unwrap());
}

#[test]
fn sequence_wrap_waits_for_the_next_second() {
    let clock = WatchedClock::at(T);
    let g = DefaultUidGenerator::builder(layout())
        .worker_id(9)
        .clock(clock.clone())
        .build()
        .unwrap();
    for _ in 0..8192 {
        g.next_id().unwrap();
    }
    // The clock moves only once the next take has read it twice: it is waiting for second T + 1.
    let mover = clock.advance_once_read(clock.reads(), 2, 1);
    let id = g.next_id().unwrap();
    mover.join().unwrap();
    let p = layout().parse(id).unwrap();
    assert_eq!((p.unix_seconds, p.sequence), (T + 1, 0));
}

#[test]
fn clock_backwards_refused_with_java_message() {
    let clock = ManualClock::from_seconds(T);
    let g = gen_with(&clock, ClockBackwards::Refuse);
    g.next_id().unwrap();
    clock.advance_seconds(-3600);
    let err = g.next_id().unwrap_err();
    assert_eq!(err, Error::ClockMovedBackwards { seconds: 3600 });
    assert_eq!(
        err.to_string(),
        "Clock moved backwards. Refusing for 3600 seconds"
    );
}

#[test]
fn clock_backwards_waited_out_within_bound() {
    let clock = WatchedClock::at(T);
    let g = DefaultUidGenerator::builder(layout())
        .worker_id(9)
        .clock(clock.clone())
        .on_clock_backwards(ClockBackwards::WaitUpTo(Duration::from_secs(2)))
        .build()
        .unwrap();
    let before = g.next_id().unwrap();
    clock.clock.advance_seconds(-2);
    // Moved forward again only once the take is seen waiting the jump out.
    let mover = clock.advance_once_read(clock.reads(), 2, 2);
    let after = g.next_id().unwrap();
    mover.join().unwrap();
    assert!(after > before);
    clock.clock.advance_seconds(-5);
    assert_eq!(
        g.next_id().unwrap_err(),
        Error::ClockMovedBackwards { seconds: 5 }
    );
}

#[test]
fn exhausted_time_bits_are_an_error() {
    let epoch = 1_600_000_000;
    let layout = Layout::new(10, 40, 13, epoch).unwrap();
    let clock = WatchedClock::at(epoch + 1023);
    let g = DefaultUidGenerator::builder(layout)
        .worker_id(1)
        .clock(clock.clone())
        .build()
        .unwrap();
    for _ in 0..8192 {
        let id = g.next_id().unwrap();
        assert!(id <= i64::MAX as u64);
    }
    // The next ID would need second 1024: the wait for the next second (seen as a second read
    // of the clock) ends in an error once the clock gets there.
    let mover = clock.advance_once_read(clock.reads(), 2, 1);
    let err = g.next_id().unwrap_err();
    mover.join().unwrap();
    assert!(
        matches!(
            err,
            Error::TimeBitsExhausted {
                delta: 1024,
                max: 1023,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(g.next_id().is_err());
}
