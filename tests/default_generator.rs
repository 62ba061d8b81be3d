//! DefaultUidGenerator with a manual clock: Java's sequence behaviour, clock rollback policies,
//! exhaustion.

use ringflake::{ClockBackwards, DefaultUidGenerator, Error, Layout, ManualClock};
use std::time::Duration;

/// 13 sequence bits (8,192 IDs a second): the pre-2026 default, small enough to go through many
/// seconds quickly. Tests that depend on the sequence width say so with this layout.
fn layout13() -> Layout {
    Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap()
}

const T: i64 = 1_800_000_000;

fn gen_with(clock: &ManualClock, policy: ClockBackwards) -> DefaultUidGenerator {
    DefaultUidGenerator::builder(layout13())
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
    let l = layout13();
    let delta = (T - l.epoch_seconds()) as u64;
    for seq in 0..100 {
        assert_eq!(g.next_id().unwrap(), l.compose(delta, 9, seq).unwrap());
    }
    clock.advance_seconds(1);
    assert_eq!(g.next_id().unwrap(), l.compose(delta + 1, 9, 0).unwrap());
}

#[test]
fn sequence_wrap_waits_for_the_next_second() {
    let clock = ManualClock::from_seconds(T);
    let g = gen_with(&clock, ClockBackwards::Refuse);
    for _ in 0..8192 {
        g.next_id().unwrap();
    }
    let mover = {
        let clock = clock.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            clock.advance_seconds(1);
        })
    };
    let id = g.next_id().unwrap();
    mover.join().unwrap();
    let p = layout13().parse(id).unwrap();
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
    let clock = ManualClock::from_seconds(T);
    let g = gen_with(&clock, ClockBackwards::WaitUpTo(Duration::from_secs(2)));
    let before = g.next_id().unwrap();
    clock.advance_seconds(-2);
    let mover = {
        let clock = clock.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            clock.advance_seconds(2);
        })
    };
    let after = g.next_id().unwrap();
    mover.join().unwrap();
    assert!(after > before);
    clock.advance_seconds(-5);
    assert_eq!(
        g.next_id().unwrap_err(),
        Error::ClockMovedBackwards { seconds: 5 }
    );
}

#[test]
fn exhausted_time_bits_are_an_error() {
    let epoch = 1_600_000_000;
    let layout = Layout::new(10, 40, 13, epoch).unwrap();
    let clock = ManualClock::from_seconds(epoch + 1023);
    let g = DefaultUidGenerator::builder(layout)
        .worker_id(1)
        .clock(clock.clone())
        .build()
        .unwrap();
    for _ in 0..8192 {
        let id = g.next_id().unwrap();
        assert!(id <= i64::MAX as u64);
    }
    // The next ID would need second 1024: the wait for the next second ends in an error.
    let mover = {
        let clock = clock.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            clock.advance_seconds(1);
        })
    };
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
