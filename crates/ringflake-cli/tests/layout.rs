//! The bit packing: round trips for any widths that add up to 63, and a typed error whose message
//! names the refused value and the limit for every kind of bad input.

use proptest::prelude::*;
use ringflake::{Error, Layout, TimeZone, UID_GENERATOR_EPOCH_SECONDS, epoch_from_date};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// 2023-11-14T22:13:20Z: an epoch safely in the past.
const PAST_EPOCH: i64 = 1_700_000_000;

fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

/// Whether `msg` contains `n` as a whole number (not as part of a longer one).
fn names_number(msg: &str, n: impl ToString) -> bool {
    let n = n.to_string();
    msg.split(|c: char| !c.is_ascii_digit())
        .any(|token| token == n)
}

fn shanghai() -> TimeZone {
    TimeZone::get("Asia/Shanghai")
        .expect("Asia/Shanghai from the system time zone database (install tzdata)")
}

/// Widths (time, worker, sequence), each at least 1, adding up to 63.
fn widths() -> impl Strategy<Value = (u32, u32, u32)> {
    (1u32..=61).prop_flat_map(|t| (Just(t), 1u32..=62 - t).prop_map(|(t, w)| (t, w, 63 - t - w)))
}

/// A layout with random widths and a past epoch (negative ones included), and in-range fields.
fn layout_and_parts() -> impl Strategy<Value = (Layout, u64, u64, u64)> {
    (widths(), -2_000_000_000i64..=PAST_EPOCH).prop_flat_map(|((t, w, s), epoch)| {
        let layout = Layout::new(t, w, s, epoch).expect("valid widths and past epoch");
        (
            Just(layout),
            0..=layout.max_delta_seconds(),
            0..=layout.max_worker_id(),
            0..=layout.max_sequence(),
        )
    })
}

/// A layout with random widths and a value one past (or far past) the max of one field.
fn layout_and_excess() -> impl Strategy<Value = (Layout, u64)> {
    widths().prop_flat_map(|(t, w, s)| {
        let layout = Layout::new(t, w, s, PAST_EPOCH).expect("valid layout");
        (Just(layout), 1u64..=u64::MAX)
    })
}

proptest! {
    #[test]
    fn compose_then_decompose_gives_the_parts((layout, delta, worker, seq) in layout_and_parts()) {
        let id = layout.compose(delta, worker, seq)?;
        prop_assert!(id <= i64::MAX as u64, "id {id} has the sign bit set");
        prop_assert_eq!(
            id,
            (delta << (layout.worker_bits() + layout.seq_bits())) | (worker << layout.seq_bits()) | seq
        );
        let parts = layout.decompose(id)?;
        prop_assert_eq!(
            (parts.delta_seconds, parts.worker_id, parts.sequence),
            (delta, worker, seq)
        );
    }

    #[test]
    fn parse_gives_epoch_plus_delta((layout, delta, worker, seq) in layout_and_parts()) {
        let id = layout.compose(delta, worker, seq)?;
        let parsed = layout.parse(id)?;
        prop_assert_eq!(
            i128::from(parsed.unix_seconds),
            i128::from(layout.epoch_seconds()) + i128::from(delta)
        );
        prop_assert_eq!((parsed.id, parsed.worker_id, parsed.sequence), (id, worker, seq));
    }

    #[test]
    fn decompose_then_compose_gives_the_id((t, w, s) in widths(), id in 0..=i64::MAX as u64) {
        let layout = Layout::new(t, w, s, PAST_EPOCH)?;
        let p = layout.decompose(id)?;
        prop_assert_eq!(layout.compose(p.delta_seconds, p.worker_id, p.sequence)?, id);
    }

    #[test]
    fn ids_order_as_their_parts(
        (layout, d1, w1, s1) in layout_and_parts(),
        other in any::<(u64, u64, u64)>(),
    ) {
        let (d2, w2, s2) = (
            other.0 % (layout.max_delta_seconds() + 1),
            other.1 % (layout.max_worker_id() + 1),
            other.2 % (layout.max_sequence() + 1),
        );
        let (a, b) = (layout.compose(d1, w1, s1)?, layout.compose(d2, w2, s2)?);
        prop_assert_eq!(a.cmp(&b), (d1, w1, s1).cmp(&(d2, w2, s2)));
    }

    #[test]
    fn delta_beyond_its_field_is_refused((layout, extra) in layout_and_excess()) {
        let max = layout.max_delta_seconds();
        let delta = max.saturating_add(extra);
        let err = layout.compose(delta, 0, 0).unwrap_err();
        prop_assert_eq!(&err, &Error::DeltaOutOfRange { delta, max });
        let msg = err.to_string();
        prop_assert!(names_number(&msg, delta) && names_number(&msg, max), "{}", msg);
    }

    #[test]
    fn worker_beyond_its_field_is_refused((layout, extra) in layout_and_excess()) {
        let max = layout.max_worker_id();
        let worker_id = max.saturating_add(extra);
        let err = layout.compose(0, worker_id, 0).unwrap_err();
        prop_assert_eq!(&err, &Error::WorkerIdOutOfRange { worker_id, max });
        let msg = err.to_string();
        prop_assert!(names_number(&msg, worker_id) && names_number(&msg, max), "{}", msg);
    }

    #[test]
    fn sequence_beyond_its_field_is_refused((layout, extra) in layout_and_excess()) {
        let max = layout.max_sequence();
        let sequence = max.saturating_add(extra);
        let err = layout.compose(0, 0, sequence).unwrap_err();
        prop_assert_eq!(&err, &Error::SequenceOutOfRange { sequence, max });
        let msg = err.to_string();
        prop_assert!(names_number(&msg, sequence) && names_number(&msg, max), "{}", msg);
    }

    #[test]
    fn negative_ids_are_refused((t, w, s) in widths(), low in 0..=i64::MAX as u64) {
        let layout = Layout::new(t, w, s, PAST_EPOCH)?;
        let id = (1u64 << 63) | low;
        let err = layout.decompose(id).unwrap_err();
        prop_assert_eq!(&err, &Error::NegativeId { id });
        prop_assert_eq!(layout.parse(id).unwrap_err(), err.clone());
        let msg = err.to_string();
        prop_assert!(
            msg.contains(&(id as i64).to_string()) && names_number(&msg, i64::MAX),
            "{}", msg
        );
    }

    #[test]
    fn widths_not_adding_up_to_63_are_refused(t in 1u32..=64, w in 1u32..=64, s in 1u32..=64) {
        prop_assume!(t + w + s != 63);
        let err = Layout::new(t, w, s, PAST_EPOCH).unwrap_err();
        prop_assert_eq!(
            &err,
            &Error::InvalidBitWidths { time_bits: t, worker_bits: w, seq_bits: s }
        );
        let msg = err.to_string();
        prop_assert!(names_number(&msg, t + w + s) && names_number(&msg, 63), "{}", msg);
    }
}

#[test]
fn widths_not_adding_up_to_63_name_the_sum_and_63() {
    for (t, w, s) in [(30, 20, 12), (30, 20, 14), (28, 22, 14), (1, 1, 1)] {
        let err = Layout::new(t, w, s, PAST_EPOCH).unwrap_err();
        assert_eq!(
            err,
            Error::InvalidBitWidths {
                time_bits: t,
                worker_bits: w,
                seq_bits: s
            }
        );
        let msg = err.to_string();
        let sum = t + w + s;
        assert!(
            names_number(&msg, sum) && msg.contains("expected 63"),
            "{t}/{w}/{s}: {msg}"
        );
    }
}

/// Widths whose sum overflows `u32` are refused like any other wrong sum, and the message still
/// renders (no arithmetic overflow while formatting it).
#[test]
fn huge_widths_are_refused_without_overflow() {
    for (t, w, s) in [
        (u32::MAX, 1, 1),
        (u32::MAX, u32::MAX, u32::MAX),
        (40, 40, u32::MAX - 50),
    ] {
        let err = Layout::new(t, w, s, PAST_EPOCH).unwrap_err();
        assert!(matches!(err, Error::InvalidBitWidths { .. }), "{err:?}");
        let msg = std::panic::catch_unwind(|| err.to_string())
            .unwrap_or_else(|_| panic!("formatting {err:?} panicked"));
        assert!(
            names_number(&msg, t) && msg.contains("63"),
            "{t}/{w}/{s}: {msg}"
        );
    }
}

#[test]
fn a_zero_width_field_is_refused() {
    for (t, w, s) in [(0, 50, 13), (50, 0, 13), (50, 13, 0), (0, 0, 63)] {
        let err = Layout::new(t, w, s, PAST_EPOCH).unwrap_err();
        assert_eq!(
            err,
            Error::InvalidBitWidths {
                time_bits: t,
                worker_bits: w,
                seq_bits: s
            }
        );
        let msg = err.to_string();
        assert!(
            names_number(&msg, 0) && msg.contains("at least 1 bit"),
            "{t}/{w}/{s}: {msg}"
        );
    }
}

#[test]
fn an_epoch_in_the_future_is_refused() {
    let before = now_seconds();
    let epoch = before + 3600;
    let err = Layout::new(30, 20, 13, epoch).unwrap_err();
    let after = now_seconds();
    let Error::EpochInFuture {
        epoch_seconds,
        now_seconds: now,
    } = err
    else {
        panic!("expected EpochInFuture, got {err:?}");
    };
    assert_eq!(epoch_seconds, epoch);
    assert!((before..=after).contains(&now), "now {now}");
    let msg = err.to_string();
    assert!(
        names_number(&msg, epoch) && names_number(&msg, now),
        "{msg}"
    );
    // The current second itself is not in the future.
    assert!(Layout::new(30, 20, 13, before).is_ok());
}

#[test]
fn an_epoch_date_in_the_future_is_refused() {
    let err = Layout::with_epoch_date(30, 20, 13, "2999-01-01", &TimeZone::UTC).unwrap_err();
    assert!(matches!(err, Error::EpochInFuture { .. }), "{err:?}");
}

/// Checks that each input is refused with [`Error::InvalidEpoch`] naming the input and the limit it
/// broke (the text given beside it), by [`epoch_from_date`] and [`Layout::with_epoch_date`] alike.
fn assert_refused_dates(cases: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for &(input, limit) in cases {
        let err = match epoch_from_date(input, &TimeZone::UTC) {
            Ok(secs) => {
                failures.push(format!("{input:?} accepted as {secs}"));
                continue;
            }
            Err(e) => e,
        };
        let Error::InvalidEpoch { input: refused, .. } = &err else {
            failures.push(format!("{input:?}: expected InvalidEpoch, got {err:?}"));
            continue;
        };
        assert_eq!(refused, input);
        let msg = err.to_string();
        if !(msg.contains(&format!("{input:?}")) && msg.contains(limit)) {
            failures.push(format!(
                "{input:?}: message {msg:?} must name the input and {limit:?}"
            ));
        }
        assert_eq!(
            Layout::with_epoch_date(30, 20, 13, input, &TimeZone::UTC).unwrap_err(),
            err
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn malformed_epoch_dates_are_refused() {
    assert_refused_dates(&[
        ("20240101", "yyyy-MM-dd"),
        ("2024-1-01", "yyyy-MM-dd"),
        ("", "yyyy-MM-dd"),
        ("2024-01-01 ", "yyyy-MM-dd"),
        ("2024/01/01", "yyyy-MM-dd"),
        ("+024-01-01", "yyyy-MM-dd"),
    ]);
}

#[test]
fn months_beyond_12_are_refused() {
    // Java's lenient SimpleDateFormat would roll "2024-13-01" over to 2025-01-01.
    assert_refused_dates(&[("2024-13-01", "1..=12"), ("2024-00-10", "1..=12")]);
}

/// A day past the end of its month names the month's length: February 2024 has 29 days.
#[test]
fn days_beyond_the_month_are_refused() {
    assert_refused_dates(&[
        ("2024-02-30", "29"),
        ("2023-02-29", "28"),
        ("2024-04-31", "30"),
        ("2024-01-32", "31"),
        ("2024-01-00", "31"),
    ]);
}

#[test]
fn valid_epoch_dates_are_midnight_in_the_zone() {
    assert_eq!(epoch_from_date("1970-01-01", &TimeZone::UTC).unwrap(), 0);
    assert_eq!(
        epoch_from_date("2024-02-29", &TimeZone::UTC).unwrap(),
        1_709_164_800
    );
    assert_eq!(
        epoch_from_date("2025-01-01", &TimeZone::UTC).unwrap(),
        ringflake::DEFAULT_EPOCH_SECONDS
    );
}

#[test]
fn java_default_epoch_is_beijing_midnight() {
    assert_eq!(
        epoch_from_date("2016-05-20", &shanghai()).unwrap(),
        1_463_673_600
    );
    assert_eq!(UID_GENERATOR_EPOCH_SECONDS, 1_463_673_600);
    // Not UTC midnight: eight hours later.
    assert_eq!(
        epoch_from_date("2016-05-20", &TimeZone::UTC).unwrap(),
        1_463_673_600 + 8 * 3600
    );
}

#[test]
fn uid_generator_defaults_parse_old_ids() {
    let java = Layout::uid_generator_defaults();
    assert_eq!(
        (java.time_bits(), java.worker_bits(), java.seq_bits()),
        (28, 22, 13)
    );
    assert_eq!(java.epoch_seconds(), 1_463_673_600);

    // An ID from 2020-01-01T00:00:00Z, worker 5, sequence 7.
    let second = 1_577_836_800;
    let id = java
        .compose((second - java.epoch_seconds()) as u64, 5, 7)
        .unwrap();
    let parsed = java.parse(id).unwrap();
    assert_eq!(
        (parsed.unix_seconds, parsed.worker_id, parsed.sequence),
        (second, 5, 7)
    );
    assert_eq!(
        parsed.to_java_string_in(&shanghai()).unwrap(),
        format!(
            r#"{{"UID":"{id}","timestamp":"2020-01-01 08:00:00","workerId":"5","sequence":"7"}}"#
        )
    );

    // The last ID the layout can hold is its last valid second.
    let last = java
        .compose(
            java.max_delta_seconds(),
            java.max_worker_id(),
            java.max_sequence(),
        )
        .unwrap();
    assert_eq!(last, i64::MAX as u64);
    let parsed = java.parse(last).unwrap();
    assert_eq!(parsed.unix_seconds, java.last_valid_second());
    assert_eq!(
        parsed.to_java_string_in(&TimeZone::UTC).unwrap(),
        r#"{"UID":"9223372036854775807","timestamp":"2024-11-20 13:24:15","workerId":"4194303","sequence":"8191"}"#
    );
}

#[test]
fn uid_generator_defaults_are_expired() {
    let java = Layout::uid_generator_defaults();
    assert_eq!(java.last_valid_second(), 1_732_109_055);
    assert_eq!(java.last_valid_date(), "2024-11-20T13:24:15Z");
    assert!(java.check_alive_at(java.last_valid_second()).is_ok());
    assert!(java.check_alive_at(java.last_valid_second() + 1).is_err());

    let now = now_seconds();
    let err = java.check_alive_at(now).unwrap_err();
    let Error::TimeBitsExhausted {
        delta,
        max,
        ref last_valid,
    } = err
    else {
        panic!("expected TimeBitsExhausted, got {err:?}");
    };
    assert_eq!(max, (1 << 28) - 1);
    assert_eq!(delta, (now - java.epoch_seconds()) as u64);
    assert_eq!(last_valid, "2024-11-20T13:24:15Z");
    let msg = err.to_string();
    assert!(msg.contains("2024-11-20T13:24:15Z"), "{msg}");
    assert!(
        names_number(&msg, delta) && names_number(&msg, max),
        "{msg}"
    );
}

#[test]
fn default_layout_lifetime() {
    let layout = Layout::default();
    assert_eq!(
        (layout.time_bits(), layout.worker_bits(), layout.seq_bits()),
        (31, 10, 22)
    );
    assert_eq!(layout.epoch_seconds(), 1_735_689_600);
    assert_eq!(layout.last_valid_date(), "2093-01-19T03:14:07Z");
    // The issue's three requirements: 60 years, 4 M IDs a second without borrowing, 1,024 workers.
    let years = (layout.last_valid_second() - layout.epoch_seconds()) as f64 / 31_557_600.0;
    assert!(years >= 60.0, "{years}");
    assert!(layout.max_sequence() + 1 >= 4_000_000);
    assert!(layout.max_worker_id() + 1 >= 1_024);
    assert!(layout.check_alive_at(now_seconds()).is_ok());
}

mod common;

/// Meituan Leaf's snowflake: milliseconds since 2010-11-04T01:42:54.657Z, shifted by 22 bits.
fn leaf_id_at(unix_seconds: i64) -> u64 {
    ((unix_seconds as u64) * 1000 - 1_288_834_974_657) << 22
}

/// `epoch_above` moves the epoch to exactly the latest second that works, keeps an epoch that
/// already works, and refuses an ID no epoch can get above with a typed error naming the ID and
/// the limit.
#[test]
fn epoch_above_is_the_latest_epoch_that_works() {
    use ringflake::plan::epoch_above;
    let now = PAST_EPOCH + 10 * 86_400;
    let plain = Layout::new(31, 10, 22, PAST_EPOCH).unwrap();
    let shift = plain.time_shift();
    for above in [0, 1 << 40, leaf_id_at(now), leaf_id_at(now) + 12_345] {
        let moved = epoch_above(&plain, above, now).unwrap();
        let first = |l: &Layout| ((now - l.epoch_seconds()) as u64) << shift;
        assert!(first(&moved) > above, "{above}");
        assert_eq!(moved.epoch_seconds().min(PAST_EPOCH), moved.epoch_seconds());
        if moved.epoch_seconds() < PAST_EPOCH {
            // One second later would not do.
            let later = Layout::new(31, 10, 22, moved.epoch_seconds() + 1).unwrap();
            assert!(first(&later) <= above, "{above}");
        }
    }
    // Already above: the epoch stays.
    assert_eq!(epoch_above(&plain, 5, now).unwrap(), plain);

    let limit = ((1u64 << 31) - 1) << 32;
    for above in [limit, i64::MAX as u64] {
        let err = epoch_above(&plain, above, now).unwrap_err();
        assert_eq!(
            err,
            Error::AboveUnreachable {
                id: above,
                limit,
                time_bits: 31
            }
        );
        let msg = err.to_string();
        assert!(
            names_number(&msg, above) && names_number(&msg, limit),
            "{msg}"
        );
    }
    // One below the limit works, with a single second of life left.
    let moved = epoch_above(&plain, limit - 1, now).unwrap();
    assert_eq!(now - moved.epoch_seconds(), (1 << 31) - 1);
    assert!(matches!(
        epoch_above(&plain, u64::MAX, now),
        Err(Error::NegativeId { .. })
    ));
}

/// The builders' `above`: the first ID (worker id included) must exceed the ID, else the build
/// fails naming both IDs and how far the epoch must move back; both generators, any worker.
#[test]
fn builders_refuse_to_start_below_an_existing_id() {
    use ringflake::{CachedUidGenerator, DefaultUidGenerator, ManualClock};
    let layout = Layout::new(31, 10, 22, PAST_EPOCH).unwrap();
    let now = PAST_EPOCH + 1_000;
    let clock = ManualClock::from_seconds(now);
    let at = |delta: u64, worker: u64| layout.compose(delta, worker, 0).unwrap();
    // Worker 5's first ID at delta 1000 is above worker 4's and below worker 6's.
    for (above, starts) in [
        (at(999, 1023), true),
        (at(1000, 4) + 77, true),
        (at(1000, 5) - 1, true),
        (at(1000, 5), false),
        (at(1000, 6), false),
        (at(1100, 0), false),
    ] {
        let cached = CachedUidGenerator::builder(layout)
            .worker_id(5)
            .clock(clock.clone())
            .above(above)
            .build();
        let default = DefaultUidGenerator::builder(layout)
            .worker_id(5)
            .clock(clock.clone())
            .above(above)
            .build();
        if starts {
            assert!(cached.unwrap().next_id().unwrap() > above);
            assert!(default.unwrap().next_id().unwrap() > above);
            continue;
        }
        let back = (above >> 32) + 1 - 1000;
        for err in [cached.err().unwrap(), default.err().unwrap()] {
            assert_eq!(
                err,
                Error::NotAbove {
                    above,
                    first_id: at(1000, 5),
                    epoch_back_seconds: back
                }
            );
            let msg = err.to_string();
            assert!(
                names_number(&msg, above) && names_number(&msg, at(1000, 5)),
                "{msg}"
            );
        }
    }
}

/// `ringflake layout --above ID` (a Leaf ID of now): every proposal's flags give a layout whose
/// first ID now sorts above it, with the cost in lifetime; an ID no layout can exceed is said
/// to be impossible, with the limit.
#[test]
fn planner_moves_the_epoch_above_an_existing_id() {
    let dir = tempfile::tempdir().unwrap();
    // The planner reads the clock between `before` and `after`.
    let before = now_seconds();
    let leaf = leaf_id_at(before);
    let out = common::ringflake(dir.path())
        .args(["layout", "--rate", "10000", "--nodes", "20000"])
        .args(["--years", "30", "--tz", "UTC", "--above", &leaf.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("every new ID must sort above {leaf}")),
        "{text}"
    );
    let after = now_seconds();
    let mut checked = 0;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(flags) = line.trim().strip_prefix("flags") else {
            continue;
        };
        let f: Vec<&str> = flags.split_whitespace().collect();
        assert_eq!(f.len(), 8, "{line}");
        let (t, w, s) = (
            f[1].parse().unwrap(),
            f[3].parse().unwrap(),
            f[5].parse().unwrap(),
        );
        assert_eq!(f[6], "--epoch", "{line}");
        let layout = Layout::with_epoch_date(t, w, s, f[7], &TimeZone::UTC).unwrap();
        let first = layout
            .compose((after - layout.epoch_seconds()) as u64, 0, 0)
            .unwrap();
        assert!(first > leaf, "{line}: first ID {first} <= {leaf}");
        // The day before would also do; the day after would not: the latest midnight.
        let next_day = layout.epoch_seconds() + 86_400;
        assert!(
            (((before - next_day) as u64) << layout.time_shift()) <= leaf,
            "{line}"
        );
        let above = lines
            .by_ref()
            .find(|l| l.trim().starts_with("above"))
            .unwrap();
        assert!(
            above.contains(&format!("> {leaf}")) && above.contains(" of lifetime ("),
            "{above}"
        );
        checked += 1;
    }
    assert!(checked >= 3, "{text}");
    // The first proposal lasts the 30 years despite the years lost.
    assert!(
        text.split("\n\n")
            .nth(1)
            .unwrap()
            .contains("(lasts the 30 years)"),
        "{text}"
    );

    let out = common::ringflake(dir.path())
        .args(["layout", "--rate", "10000", "--restarts-per-day", "2"])
        .args(["--years", "30", "--time-bits", "31", "--worker-bits", "10"])
        .args(["--above", "9223372036854775807"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(
        stderr.contains("ID 9223372036854775807 is too high")
            && stderr.contains("more time bits raise that limit"),
        "{stderr}"
    );
}

/// `serve --above ID` exits 1 naming both IDs when its first ID would not be above; starts when
/// it would.
#[test]
fn serve_refuses_to_start_below_an_existing_id() {
    let dir = tempfile::tempdir().unwrap();
    let layout = [
        "--time-bits",
        "31",
        "--worker-bits",
        "10",
        "--seq-bits",
        "22",
    ];
    // Default epoch 2025-01-01: an ID of an hour from now is above every ID serve can make now.
    let now = now_seconds();
    let ahead = ((now + 3600 - ringflake::DEFAULT_EPOCH_SECONDS) as u64) << 32;
    let ahead_text = ahead.to_string();
    let mut args = vec!["--worker-id", "3", "--above", &ahead_text];
    args.extend(layout);
    // Bounded: a serve that wrongly starts is killed when the wait fails.
    let mut serve = common::Serve::launch(dir.path(), &args);
    common::wait_until("serve --above exits", Duration::from_secs(60), || {
        !serve.running()
    });
    let status = serve.kill().expect("serve's exit status");
    common::wait_until("serve's error is read", Duration::from_secs(10), || {
        serve.output().contains("ringflake: error:")
    });
    let stderr = serve.output();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("does not sort above the existing ID {ahead}"))
            && stderr.contains("the first ID this generator would issue, ")
            && stderr.contains(&format!("ringflake layout --above {ahead}")),
        "{stderr}"
    );
    let first: u64 = stderr
        .split("would issue, ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(first < ahead && first >> 32 >= ((now - ringflake::DEFAULT_EPOCH_SECONDS) as u64));

    // An ID of an hour ago is below: serve starts and its IDs are above it.
    let behind = ((now - 3600 - ringflake::DEFAULT_EPOCH_SECONDS) as u64) << 32;
    let mut args = vec!["--worker-id", "3", "--above"];
    let behind_text = behind.to_string();
    args.push(&behind_text);
    args.extend(layout);
    let serve = common::Serve::start(dir.path(), &args);
    let reply = common::get(serve.addr(), "/id");
    let id: u64 = reply
        .body
        .trim()
        .trim_matches('"')
        .parse()
        .unwrap_or_else(|_| panic!("{}", reply.body));
    assert!(id > behind);
}
