//! The snowflake family by name: layouts bit-exact with the published definitions of Twitter's
//! snowflake, Meituan Leaf's snowflake mode, Discord, Instagram and Sonyflake, UidGenerator's
//! defaults, and a JavaScript-safe layout of ringflake's own.

use crate::{Error, FieldOrder, Layout, TimeUnit};

/// Twitter's epoch, 2010-11-04T01:42:54.657Z, in unix milliseconds; Leaf's default `twepoch`.
///
/// ```
/// assert_eq!(ringflake::Layout::twitter().epoch_millis(), ringflake::TWITTER_EPOCH_MILLIS);
/// ```
pub const TWITTER_EPOCH_MILLIS: i64 = 1_288_834_974_657;

/// The presets' names, as [`Layout::preset`] and `--layout` take them.
///
/// | name | time / worker / seq bits | unit | epoch | order | IDs reach the end | IDs per tick per worker |
/// |---|---|---|---|---|---|---|
/// | `default` | 31 / 10 / 22 | 1 s | 2025-01-01T00:00:00Z | worker above sequence | 2093-01-19T03:14:07Z | 4,194,304 |
/// | `twitter` | 41 / 10 / 12 | 1 ms | 1288834974657 (2010-11-04T01:42:54.657Z) | worker above sequence | 2080-07-10T17:30:30Z | 4,096 |
/// | `leaf` | 41 / 10 / 12 | 1 ms | 1288834974657 (Twitter's) | worker above sequence | 2080-07-10T17:30:30Z | 4,096 |
/// | `discord` | 42 / 10 / 12 | 1 ms | 1420070400000 (2015-01-01T00:00:00Z) | worker above sequence | **2^63** at 2084-09-06T15:47:35Z | 4,096 |
/// | `instagram` | 41 / 13 / 10 | 1 ms | 1314220021721 (2011-08-24T21:07:01.721Z) | shard above sequence | **2^63** at 2046-06-27T17:00:49Z | 1,024 |
/// | `sonyflake` | 39 / 16 / 8 | 10 ms | 2014-09-01T00:00:00Z | **sequence above machine** | 2188-11-16T03:28:58Z | 256 |
/// | `uidgenerator` | 28 / 22 / 13 | 1 s | 2016-05-20 00:00 UTC+8 | worker above sequence | **expired** 2024-11-20T13:24:15Z | 8,192 |
/// | `js53` | 31 / 6 / 16 | 1 s | 2025-01-01T00:00:00Z | worker above sequence | 2093-01-19T03:14:07Z (IDs < 2^53) | 65,536 |
///
/// - **Discord** splits its 10 worker bits into a 5-bit worker and a 5-bit process: ringflake's
///   worker id is `worker << 5 | process` (Discord's worker 1, process 0 is worker id 32).
/// - **Discord and Instagram** use all 64 bits (no sign bit). ringflake's IDs are non-negative
///   `i64` (as Java's `long`, PostgreSQL's `bigint` and every other member of the family
///   store them), so these layouts end where an ID would reach `2^63`: Discord's 42 time bits
///   hold 2^41 ms, until 2084-09-06T15:47:35Z, Instagram's 41 bits 2^40 ms, until
///   2046-06-27T17:00:49Z. Past that a generator refuses as for any layout whose time bits are
///   used up ([`Error::TimeBitsExhausted`]); such IDs are not parsed ([`Error::NegativeId`]).
/// - **Leaf** starts a new millisecond's sequence at a random 0–99; its IDs are still exactly
///   this layout, and ringflake's (which start at 0) decode in Leaf's tools.
/// - **Sonyflake** puts its 8-bit sequence above its 16-bit machine id, so one worker's
///   consecutive IDs are 2^16 apart. Both generators make that order;
///   [`CachedUidGenerator`](crate::CachedUidGenerator) keeps one ID per ring slot for it (other
///   layouts keep runs of up to 1,024 consecutive IDs per slot), nothing at 25,600 IDs a second.
/// - **js53** is ringflake's: 53 bits in all, so every ID is a safe JavaScript integer
///   (`Number.MAX_SAFE_INTEGER` is 2^53 - 1): JSON clients (browsers, Grafana, admin front ends)
///   read it without losing digits. Seconds, so that 31 time bits last 68 years as the default
///   layout's do; 16 sequence bits are 65,536 IDs a second per worker (bursts borrow future
///   seconds, as always); 6 worker bits are 64 live workers, recycled. A millisecond layout in
///   53 bits would leave too few bits for both (41 ms bits last 69 years, leaving 12 for worker
///   and sequence together).
///
/// ```
/// assert!(ringflake::PRESET_NAMES.contains(&"twitter"));
/// for name in ringflake::PRESET_NAMES {
///     assert!(ringflake::Layout::preset(name).is_ok());
/// }
/// ```
pub const PRESET_NAMES: &[&str] = &[
    "default",
    "twitter",
    "leaf",
    "discord",
    "instagram",
    "sonyflake",
    "uidgenerator",
    "js53",
];

/// [`PRESET_NAMES`] as one string, for messages.
const KNOWN: &str = "default, twitter, leaf, discord, instagram, sonyflake, uidgenerator, js53";

impl Layout {
    /// A preset by name: one of [`PRESET_NAMES`] (listed with their widths, units and ends at
    /// [`PRESET_NAMES`]). Names are matched exactly, in lower case.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownLayout`] naming the input and the presets.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::Layout;
    ///
    /// assert_eq!(Layout::preset("leaf")?, Layout::leaf());
    /// assert_eq!(Layout::preset("uidgenerator")?, Layout::uid_generator_defaults());
    /// let err = Layout::preset("snowflake").unwrap_err();
    /// assert!(err.to_string().starts_with(r#"unknown layout "snowflake": expected one of default, twitter"#));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn preset(name: &str) -> Result<Layout, Error> {
        Ok(match name {
            "default" => Layout::default(),
            "twitter" => Layout::twitter(),
            "leaf" => Layout::leaf(),
            "discord" => Layout::discord(),
            "instagram" => Layout::instagram(),
            "sonyflake" => Layout::sonyflake(),
            "uidgenerator" => Layout::uid_generator_defaults(),
            "js53" => Layout::js53(),
            _ => {
                return Err(Error::UnknownLayout {
                    name: name.to_string(),
                    known: KNOWN,
                });
            }
        })
    }

    /// The preset's name of this layout, if it is one (`default` for [`Layout::default`]; `leaf`
    /// and `twitter` are the same layout, named `twitter`).
    ///
    /// ```
    /// use ringflake::Layout;
    /// assert_eq!(Layout::leaf().preset_name(), Some("twitter"));
    /// assert_eq!(Layout::new(30, 20, 13, 0)?.preset_name(), None);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn preset_name(&self) -> Option<&'static str> {
        PRESET_NAMES
            .iter()
            .copied()
            .find(|n| Layout::preset(n).is_ok_and(|l| l == *self))
    }

    /// Twitter's snowflake: 41 bits of milliseconds since [`TWITTER_EPOCH_MILLIS`], 10 worker
    /// bits (often 5 datacenter + 5 worker: `datacenter << 5 | worker`), 12 sequence bits.
    ///
    /// ```
    /// use ringflake::Layout;
    /// let t = Layout::twitter();
    /// assert_eq!((t.time_bits(), t.worker_bits(), t.seq_bits()), (41, 10, 12));
    /// assert_eq!(t.compose(1, 1, 1)?, (1 << 22) | (1 << 12) | 1);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const fn twitter() -> Layout {
        Layout::exact(
            41,
            10,
            12,
            TWITTER_EPOCH_MILLIS,
            TimeUnit::Millis,
            FieldOrder::WorkerAboveSequence,
        )
    }

    /// Meituan Leaf's snowflake mode: Twitter's layout and epoch (Leaf's default `twepoch`).
    ///
    /// ```
    /// assert_eq!(ringflake::Layout::leaf(), ringflake::Layout::twitter());
    /// ```
    pub const fn leaf() -> Layout {
        Layout::twitter()
    }

    /// Discord: 42 bits of milliseconds since 2015-01-01T00:00:00Z, a 10-bit worker id (Discord's
    /// 5-bit worker and 5-bit process: `worker << 5 | process`), a 12-bit increment; 64 bits,
    /// so it ends where IDs reach `2^63` (2084-09-06T15:47:35Z).
    ///
    /// ```
    /// use ringflake::Layout;
    /// let d = Layout::discord().parse(175_928_847_299_117_063)?;
    /// assert_eq!((d.worker_id >> 5, d.worker_id & 31, d.sequence), (1, 0, 7));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const fn discord() -> Layout {
        Layout::exact(
            42,
            10,
            12,
            1_420_070_400_000,
            TimeUnit::Millis,
            FieldOrder::WorkerAboveSequence,
        )
    }

    /// Instagram: 41 bits of milliseconds since 1314220021721, a 13-bit shard id, a 10-bit
    /// sequence; 64 bits, so it ends where IDs reach `2^63` (2046-06-27T17:00:49Z).
    ///
    /// ```
    /// use ringflake::Layout;
    /// // The blog's example: 1387263000 ms, shard 1341, sequence 5001 % 1024.
    /// let id = Layout::instagram().compose(1_387_263_000, 1341, 5001 % 1024)?;
    /// assert_eq!(id, (1_387_263_000 << 23) | (1341 << 10) | 905);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub const fn instagram() -> Layout {
        Layout::exact(
            41,
            13,
            10,
            1_314_220_021_721,
            TimeUnit::Millis,
            FieldOrder::WorkerAboveSequence,
        )
    }

    /// Sonyflake: 39 bits of 10 ms units since 2014-09-01T00:00:00Z, then an 8-bit sequence
    /// *above* a 16-bit machine id.
    ///
    /// ```
    /// use ringflake::{FieldOrder, Layout, TimeUnit};
    /// let s = Layout::sonyflake();
    /// assert_eq!((s.unit(), s.order()), (TimeUnit::TenMillis, FieldOrder::SequenceAboveWorker));
    /// assert_eq!((s.time_bits(), s.seq_bits(), s.worker_bits()), (39, 8, 16));
    /// ```
    pub const fn sonyflake() -> Layout {
        Layout::exact(
            39,
            16,
            8,
            1_409_529_600_000,
            TimeUnit::TenMillis,
            FieldOrder::SequenceAboveWorker,
        )
    }

    /// ringflake's JavaScript-safe layout: 31 bits of seconds since 2025-01-01T00:00:00Z (68
    /// years), 6 worker bits (64 live workers), 16 sequence bits (65,536 IDs a second per
    /// worker); 53 bits in all, so every ID is at most `Number.MAX_SAFE_INTEGER`.
    ///
    /// ```
    /// use ringflake::Layout;
    /// let js = Layout::js53();
    /// assert_eq!(js.max_id(), (1 << 53) - 1);
    /// assert_eq!(js.last_valid_date(), Layout::default().last_valid_date());
    /// ```
    pub const fn js53() -> Layout {
        Layout::exact(
            31,
            6,
            16,
            crate::DEFAULT_EPOCH_SECONDS * 1000,
            TimeUnit::Seconds,
            FieldOrder::WorkerAboveSequence,
        )
    }
}
