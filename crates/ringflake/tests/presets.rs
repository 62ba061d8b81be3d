//! The snowflake family's presets against each project's published definition: the decoders
//! below are transcriptions of the originals' formulas (Leaf's `SnowflakeIDGenImpl`, Discord's
//! documentation, Instagram's engineering blog and its PL/pgSQL function, Sonyflake's
//! `Decompose`), and the vectors are the ones those sources publish. Nothing depends on today's
//! date.

use proptest::prelude::*;
use ringflake::{Error, FieldOrder, Layout, PRESET_NAMES, TWITTER_EPOCH_MILLIS, TimeUnit};

/// Unix milliseconds of an RFC 3339 instant.
fn millis(rfc3339: &str) -> i64 {
    rfc3339
        .parse::<jiff::Timestamp>()
        .expect("a valid instant")
        .as_millisecond()
}

/// Discord's documentation decodes 175928847299117063: 2016-04-30 11:18:25.796 UTC, internal
/// worker 1, internal process 0, increment 7. ringflake's worker id is worker << 5 | process.
#[test]
fn discord_documented_snowflake() {
    let layout = Layout::discord();
    let id = 175_928_847_299_117_063;
    let parsed = layout.parse(id).unwrap();
    assert_eq!(parsed.unix_millis, millis("2016-04-30T11:18:25.796Z"));
    assert_eq!(parsed.unix_seconds, millis("2016-04-30T11:18:25Z") / 1000);
    assert_eq!(parsed.worker_id >> 5, 1, "internal worker");
    assert_eq!(parsed.worker_id & 0x1f, 0, "internal process");
    assert_eq!(parsed.sequence, 7, "increment");
    // Discord's own formulas.
    assert_eq!((id >> 22) as i64 + 1_420_070_400_000, parsed.unix_millis);
    assert_eq!((id & 0x3E0000) >> 17, 1);
    assert_eq!((id & 0x1F000) >> 12, 0);
    assert_eq!(id & 0xFFF, 7);
    // And back.
    let delta = layout.tick_at(parsed.unix_millis);
    assert_eq!(layout.compose(delta, 1 << 5, 7).unwrap(), id);
}

/// Discord's 42 time bits would reach 2^63 in 2084: ringflake stops there, as it stops any
/// layout at the end of its time bits.
#[test]
fn discord_and_instagram_end_below_two_to_the_63() {
    for (layout, end) in [
        (Layout::discord(), "2084-09-06T15:47:35Z"),
        (Layout::instagram(), "2046-06-27T17:00:49Z"),
    ] {
        assert_eq!(layout.last_valid_date(), end);
        let max = layout.max_delta();
        let last = layout
            .compose(max, layout.max_worker_id(), layout.max_sequence())
            .unwrap();
        assert_eq!(last, i64::MAX as u64, "the last ID is 2^63 - 1");
        let err = layout.compose(max + 1, 0, 0).unwrap_err();
        assert_eq!(
            err,
            Error::DeltaOutOfRange {
                delta: max + 1,
                max
            }
        );
        let err = layout
            .check_alive_at(layout.last_valid_second() + 1)
            .unwrap_err();
        assert!(matches!(err, Error::TimeBitsExhausted { .. }), "{err}");
        assert!(err.to_string().contains(end), "{err}");
        assert!(layout.check_alive_at(layout.last_valid_second()).is_ok());
        assert_eq!(
            layout.parse(1 << 63).unwrap_err(),
            Error::NegativeId { id: 1 << 63 }
        );
    }
    // Discord: 2^41 ms from 2015-01-01; Instagram: 2^40 ms from its epoch.
    assert_eq!(Layout::discord().max_delta(), (1 << 41) - 1);
    assert_eq!(Layout::instagram().max_delta(), (1 << 40) - 1);
}

/// Instagram's blog: "1387263000 milliseconds since the beginning of our epoch … id = 1387263000
/// << (64-41) … shard ID 1341 … id |= 1341 << (64-41-13) … 5001 % 1024"; its PL/pgSQL
/// `next_id` uses `our_epoch bigint := 1314220021721` and the same shifts (23 and 10).
#[test]
fn instagram_blog_example() {
    let layout = Layout::instagram();
    let mut id: u64 = 1_387_263_000 << (64 - 41);
    id |= 1341 << (64 - 41 - 13);
    id |= 5001 % 1024;
    assert_eq!(
        layout.compose(1_387_263_000, 1341, 5001 % 1024).unwrap(),
        id
    );
    let parsed = layout.parse(id).unwrap();
    assert_eq!(parsed.unix_millis, 1_314_220_021_721 + 1_387_263_000);
    assert_eq!((parsed.worker_id, parsed.sequence), (1341, 905));
    assert_eq!(layout.epoch_millis(), 1_314_220_021_721);
}

/// Leaf's `SnowflakeIDGenImpl`: `((timestamp - twepoch) << timestampLeftShift) | (workerId <<
/// workerIdShift) | sequence` with shifts 22 and 12 and `twepoch = 1288834974657L`; its
/// decode route takes the same fields apart.
fn leaf_id(timestamp: i64, worker_id: u64, sequence: u64) -> u64 {
    (((timestamp - 1_288_834_974_657) as u64) << 22) | (worker_id << 12) | sequence
}

fn leaf_decode(id: u64) -> (i64, u64, u64) {
    (
        (id >> 22) as i64 + 1_288_834_974_657,
        (id >> 12) & 0x3ff,
        id & 0xfff,
    )
}

/// A Twitter-style ID from the definition: 2020-01-01T00:00:00Z, worker 1, sequence 1.
#[test]
fn twitter_and_leaf_vectors() {
    assert_eq!(Layout::leaf(), Layout::twitter());
    let layout = Layout::twitter();
    assert_eq!(layout.epoch_millis(), TWITTER_EPOCH_MILLIS);
    assert_eq!(
        TWITTER_EPOCH_MILLIS,
        millis("2010-11-04T01:42:54.657Z"),
        "Twitter's epoch"
    );
    let t = millis("2020-01-01T00:00:00Z");
    let id = layout.compose(layout.tick_at(t), 1, 1).unwrap();
    assert_eq!(id, 1_212_161_512_043_450_369);
    assert_eq!(id, leaf_id(t, 1, 1));
    let parsed = layout.parse(id).unwrap();
    assert_eq!(
        (parsed.unix_millis, parsed.worker_id, parsed.sequence),
        (t, 1, 1)
    );
    assert_eq!(layout.last_valid_date(), "2080-07-10T17:30:30Z");
}

/// Sonyflake's `Decompose`: time = id >> (8 + 16), sequence = id >> 16 & 0xff, machine = id &
/// 0xffff; `toSonyflakeTime` is UnixNano / 1e7 (10 ms) and the start time 2014-09-01 UTC.
#[test]
fn sonyflake_field_order() {
    let layout = Layout::sonyflake();
    assert_eq!(layout.epoch_millis(), millis("2014-09-01T00:00:00Z"));
    let t = millis("2020-01-01T00:00:00.125Z");
    let elapsed = (t - millis("2014-09-01T00:00:00Z")) as u64 / 10;
    let id = layout.compose(layout.tick_at(t), 0xBEEF, 0x12).unwrap();
    assert_eq!(id, (elapsed << 24) | (0x12 << 16) | 0xBEEF);
    assert_eq!(id >> 24, elapsed);
    assert_eq!((id >> 16) & 0xff, 0x12);
    assert_eq!(id & 0xffff, 0xBEEF);
    let parsed = layout.parse(id).unwrap();
    assert_eq!(parsed.unix_millis, t - 5, "a 10 ms tick starts at .120");
    assert_eq!((parsed.worker_id, parsed.sequence), (0xBEEF, 0x12));
    assert_eq!(layout.last_valid_date(), "2188-11-16T03:28:58Z");
}

/// The JavaScript-safe preset stays within 2^53 - 1, and refuses IDs above it.
#[test]
fn js53_is_a_safe_integer() {
    let layout = Layout::js53();
    let max = layout
        .compose(
            layout.max_delta(),
            layout.max_worker_id(),
            layout.max_sequence(),
        )
        .unwrap();
    assert_eq!(max, (1 << 53) - 1);
    assert_eq!(
        layout.parse(1 << 53).unwrap_err(),
        Error::IdOutOfRange {
            id: 1 << 53,
            max: (1 << 53) - 1
        }
    );
    assert_eq!(layout.unit(), TimeUnit::Seconds);
    assert_eq!(layout.max_worker_id(), 63);
}

/// Every name resolves, unknown names are refused with the list, and `uidgenerator` is Java's.
#[test]
fn names() {
    for name in PRESET_NAMES {
        let layout = Layout::preset(name).unwrap();
        assert!(layout.max_id() <= i64::MAX as u64);
    }
    assert_eq!(
        Layout::preset("uidgenerator").unwrap(),
        Layout::uid_generator_defaults()
    );
    assert_eq!(Layout::preset("default").unwrap(), Layout::default());
    let err = Layout::preset("Twitter").unwrap_err();
    assert!(matches!(err, Error::UnknownLayout { .. }));
    assert!(err.to_string().contains("\"Twitter\""), "{err}");
    assert!(err.to_string().contains("sonyflake"), "{err}");
}

/// Custom tick layouts: typed errors naming the value and the limit.
#[test]
fn with_unit_errors() {
    let order = FieldOrder::default();
    let err = Layout::with_unit(42, 10, 13, 0, TimeUnit::Millis, order).unwrap_err();
    assert!(matches!(err, Error::InvalidBitWidths { .. }));
    assert!(
        err.to_string().contains("= 65, expected 63 (at most 64"),
        "{err}"
    );
    let err = Layout::with_unit(39, 16, 8, 1_005, TimeUnit::TenMillis, order).unwrap_err();
    assert_eq!(
        err,
        Error::EpochNotOnTick {
            epoch_millis: 1_005,
            tick_millis: 10
        }
    );
    assert!(err.to_string().contains("1005") && err.to_string().contains("10 ms"));
    let err = Layout::with_unit(41, 10, 12, i64::MAX, TimeUnit::Millis, order).unwrap_err();
    assert!(matches!(err, Error::EpochInFuture { .. }), "{err}");
    assert_eq!(
        "2ms".parse::<TimeUnit>().unwrap_err(),
        Error::UnknownTimeUnit {
            input: "2ms".into()
        }
    );
    // A seconds layout made this way is the plain one.
    assert_eq!(
        Layout::with_unit(31, 10, 22, 1_735_689_600_000, TimeUnit::Seconds, order).unwrap(),
        Layout::default()
    );
}

proptest! {
    /// Every preset round-trips its fields, against the original's decoder where there is one.
    #[test]
    fn round_trips(name in prop::sample::select(PRESET_NAMES), d in any::<u64>(), w in any::<u64>(), s in any::<u64>()) {
        let layout = Layout::preset(name).unwrap();
        let (d, w, s) = (d % (layout.max_delta() + 1), w & layout.max_worker_id(), s & layout.max_sequence());
        let id = layout.compose(d, w, s).unwrap();
        let p = layout.decompose(id).unwrap();
        prop_assert_eq!((p.delta_ticks, p.worker_id, p.sequence), (d, w, s));
        let parsed = layout.parse(id).unwrap();
        prop_assert_eq!(parsed.unix_millis, layout.tick_millis(d));
        if name == "twitter" || name == "leaf" {
            prop_assert_eq!(leaf_decode(id), (parsed.unix_millis, w, s));
        }
    }
}
