//! How an ID's time field counts ([`TimeUnit`]: seconds, 10 ms or milliseconds) and where its
//! sequence sits ([`FieldOrder`]).

use crate::Error;

/// How long one tick of an ID's time field lasts.
///
/// # Layout
///
/// UidGenerator counts seconds ([`TimeUnit::Seconds`], the default); Twitter, Leaf, Discord and
/// Instagram count milliseconds ([`TimeUnit::Millis`]); Sonyflake counts 10 ms
/// ([`TimeUnit::TenMillis`]). A tick's IDs are `2^seq_bits` per worker; a generator borrows
/// whole future ticks when they run out (see [`CachedUidGenerator`](crate::CachedUidGenerator)).
///
/// ```
/// use ringflake::TimeUnit;
///
/// assert_eq!(TimeUnit::default(), TimeUnit::Seconds);
/// assert_eq!(TimeUnit::TenMillis.millis(), 10);
/// assert_eq!(TimeUnit::Millis.per_second(), 1_000);
/// assert_eq!("10ms".parse::<TimeUnit>()?, TimeUnit::TenMillis);
/// assert_eq!(TimeUnit::Millis.to_string(), "1ms");
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TimeUnit {
    /// Whole seconds: UidGenerator's unit, and ringflake's default.
    #[default]
    Seconds,
    /// 10 milliseconds: Sonyflake's unit.
    TenMillis,
    /// Milliseconds: Twitter's, Leaf's, Discord's and Instagram's unit.
    Millis,
}

impl TimeUnit {
    /// The length of one tick in milliseconds: 1,000, 10 or 1.
    ///
    /// ```
    /// assert_eq!(ringflake::TimeUnit::Seconds.millis(), 1_000);
    /// ```
    pub const fn millis(self) -> u64 {
        match self {
            TimeUnit::Seconds => 1_000,
            TimeUnit::TenMillis => 10,
            TimeUnit::Millis => 1,
        }
    }

    /// Ticks in one second: 1, 100 or 1,000.
    ///
    /// ```
    /// assert_eq!(ringflake::TimeUnit::TenMillis.per_second(), 100);
    /// ```
    pub const fn per_second(self) -> u64 {
        1_000 / self.millis()
    }

    /// The unit's name as flags and files spell it: `1s`, `10ms` or `1ms`.
    ///
    /// ```
    /// assert_eq!(ringflake::TimeUnit::Seconds.name(), "1s");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "1s",
            TimeUnit::TenMillis => "10ms",
            TimeUnit::Millis => "1ms",
        }
    }
}

impl std::fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl std::str::FromStr for TimeUnit {
    type Err = Error;

    /// `1s` (or `s`), `10ms`, `1ms` (or `ms`).
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "1s" | "s" => Ok(TimeUnit::Seconds),
            "10ms" => Ok(TimeUnit::TenMillis),
            "1ms" | "ms" => Ok(TimeUnit::Millis),
            _ => Err(Error::UnknownTimeUnit {
                input: s.to_string(),
            }),
        }
    }
}

/// Which of the two lower fields sits above the other.
///
/// # Layout
///
/// UidGenerator, Twitter, Leaf, Discord and Instagram put the worker id above the sequence:
/// `[time][worker][sequence]` ([`FieldOrder::WorkerAboveSequence`], the default). Sonyflake puts
/// its 8-bit sequence above its 16-bit machine id: `[time][sequence][machine]`
/// ([`FieldOrder::SequenceAboveWorker`]); its IDs of one tick and machine are then `2^16` apart.
///
/// ```
/// use ringflake::{FieldOrder, Layout};
///
/// let sony = Layout::sonyflake();
/// assert_eq!(sony.order(), FieldOrder::SequenceAboveWorker);
/// assert_eq!(sony.compose(1, 2, 3)?, (1 << 24) | (3 << 16) | 2);
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum FieldOrder {
    /// `[time][worker][sequence]`: UidGenerator's and Twitter's order.
    #[default]
    WorkerAboveSequence,
    /// `[time][sequence][worker]`: Sonyflake's order.
    SequenceAboveWorker,
}
