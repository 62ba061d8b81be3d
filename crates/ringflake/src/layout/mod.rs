//! Bit packing: UidGenerator's `BitsAllocator`, done safely.
//!
//! An ID is `[sign 1][delta seconds: time_bits][worker id: worker_bits][sequence: seq_bits]`,
//! `id = delta << (worker_bits + seq_bits) | worker << seq_bits | sequence`, bit-exact with Baidu
//! UidGenerator for the same widths and epoch. Unlike Java, nothing here ever spills a value into
//! its neighbouring field or the sign bit: out-of-range input is an [`Error`].

//!
//! The module's rooms: the widths and the packing (here: [`Layout`]), the tick and the field
//! order (`unit`: [`TimeUnit`], [`FieldOrder`]), the layout's time (`ticks`: unix time to ticks
//! and back, its lifetime), and what an ID says (`parsed`: [`Parts`], [`ParsedId`], UidGenerator's
//! `parseUID` text and `epochStr` dates).

mod parsed;
mod ticks;
mod unit;

pub use parsed::{ParsedId, Parts, epoch_from_date};
pub use unit::{FieldOrder, TimeUnit};

use crate::Error;
use jiff::Timestamp;
use jiff::tz::TimeZone;

/// The epoch second of UidGenerator's default `epochStr` "2016-05-20", hard-coded in Java as
/// midnight in UTC+8 (Beijing), not UTC.
///
/// ```
/// use ringflake::{Layout, TimeZone, UID_GENERATOR_EPOCH_SECONDS};
///
/// let beijing = TimeZone::get("Asia/Shanghai").unwrap();
/// let layout = Layout::with_epoch_date(28, 22, 13, "2016-05-20", &beijing)?;
/// assert_eq!(layout.epoch_seconds(), UID_GENERATOR_EPOCH_SECONDS);
/// assert_eq!(layout, Layout::uid_generator_defaults());
/// # Ok::<(), ringflake::Error>(())
/// ```
pub const UID_GENERATOR_EPOCH_SECONDS: i64 = 1_463_673_600;

/// The epoch of [`Layout::default`]: 2025-01-01T00:00:00Z.
///
/// ```
/// use ringflake::{DEFAULT_EPOCH_SECONDS, Layout, TimeZone};
///
/// let layout = Layout::with_epoch_date(31, 10, 22, "2025-01-01", &TimeZone::UTC)?;
/// assert_eq!(layout.epoch_seconds(), DEFAULT_EPOCH_SECONDS);
/// assert_eq!(layout, Layout::default());
/// # Ok::<(), ringflake::Error>(())
/// ```
pub const DEFAULT_EPOCH_SECONDS: i64 = 1_735_689_600;

/// The widths of the three fields and the epoch they count from.
///
/// # Layout
///
/// An ID is `[sign 1][delta seconds][worker id][sequence]`: one sign bit (always 0), then seconds
/// since the epoch, the worker id and a per-second sequence, the three widths adding up to 63.
/// The time bits decide how long a layout lasts (its last valid second is
/// `epoch + 2^time_bits - 1`); the sequence bits how many IDs one worker makes per second before
/// it borrows from the next second.
///
/// | layout | time / worker / seq bits | epoch | lasts | last valid second | workers | IDs per second per worker |
/// |---|---|---|---|---|---|---|
/// | [`Layout::default`] | 31 / 10 / 22 | 2025-01-01T00:00:00Z | 68 years | 2093-01-19T03:14:07Z | 1,023 live from a table (ids 1 to 1,023, recycled), 1,024 fixed (0 to 1,023) | 4,194,304 |
/// | [`Layout::uid_generator_defaults`] | 28 / 22 / 13 | 2016-05-20 00:00 UTC+8 | 8.5 years | **expired** 2024-11-20T13:24:15Z | 4,194,304 | 8,192 |
/// | UidGenerator's suggestion | 31 / 23 / 9 | 2025-01-01T00:00:00Z | 68 years | 2093-01-19T03:14:07Z | 8,388,608 | 512 |
/// | UidGenerator's suggestion | 30 / 27 / 6 | 2025-01-01T00:00:00Z | 34 years | 2059-01-10T13:37:03Z | 134,217,728 | 64 |
///
/// **Why 31/10/22 by default.** With a bounded lead a worker serves `2^seq_bits` IDs a second
/// without borrowing, so the sequence field must hold a high-rate service's sustained rate: 22
/// bits are 4,194,304 IDs a second. 31 time bits last 68 years from 2025-01-01. That leaves 10
/// worker bits, 1,024 worker ids (0 to 1,023; a worker table hands out 1 to 1,023): enough for
/// 1,023 *live* nodes because
/// [`DatabaseAssigner`](crate::DatabaseAssigner) recycles worker ids by default, where Java burned
/// a new id on every boot. [`plan`](crate::plan) proposes widths for a given demand.
///
/// # Ticks and presets
///
/// The layouts above count seconds. A layout may count 10 ms or milliseconds instead
/// ([`TimeUnit`], [`Layout::with_unit`]), put the sequence above the worker id ([`FieldOrder`]),
/// and use fewer than 63 bits or all 64 (then it ends where IDs reach `2^63`). The rest of the
/// snowflake family, bit for bit, is [`Layout::preset`]: Twitter's, Leaf's, Discord's,
/// Instagram's and Sonyflake's layouts, and `js53` for IDs below `2^53`
/// ([`PRESET_NAMES`](crate::PRESET_NAMES) lists them with their ends).
///
/// ```
/// use ringflake::{Layout, TimeUnit};
///
/// let leaf = Layout::preset("leaf")?;
/// assert_eq!((leaf.unit(), leaf.epoch_millis()), (TimeUnit::Millis, 1_288_834_974_657));
/// assert_eq!(leaf.parse(1_212_161_512_043_450_369)?.unix_millis, 1_577_836_800_000);
/// # Ok::<(), ringflake::Error>(())
/// ```
///
/// # Java compatibility
///
/// For the same widths and epoch an ID is exactly Java's:
/// `delta << (workerBits + seqBits) | workerId << seqBits | sequence`. Java's default `epochStr`
/// "2016-05-20" is hard-coded as midnight in UTC+8 ([`UID_GENERATOR_EPOCH_SECONDS`]); a custom
/// `epochStr` is parsed in the JVM's time zone: pass that zone to [`Layout::with_epoch_date`].
/// [`ParsedId::to_java_string`] renders Java's `parseUID`. What differs on purpose: out-of-range
/// input is an error naming the value and the limit ([`Error::WorkerIdOutOfRange`],
/// [`Error::SequenceOutOfRange`], [`Error::DeltaOutOfRange`]) instead of a silent spill into the
/// next field or the sign bit; `epochStr` is parsed strictly ("2024-13-01" is refused where Java
/// rolls it over); and a layout whose time bits are used up refuses to generate
/// ([`Error::TimeBitsExhausted`]) instead of making negative IDs, though it still parses old IDs.
///
/// ```
/// use ringflake::{Layout, TimeZone};
///
/// // A Java node configured with timeBits 29, workerBits 21, seqBits 13, epochStr "2016-09-20",
/// // running with the JVM time zone UTC.
/// let layout = Layout::with_epoch_date(29, 21, 13, "2016-09-20", &TimeZone::UTC)?;
/// let id = layout.compose(1, 1, 1)?;
/// assert_eq!(id, 17_179_877_377); // the ID Java makes for second 1, worker 1, sequence 1
/// assert_eq!(
///     layout.parse(id)?.to_java_string_in(&TimeZone::UTC)?,
///     r#"{"UID":"17179877377","timestamp":"2016-09-20 00:00:01","workerId":"1","sequence":"1"}"#
/// );
/// assert_eq!(Layout::uid_generator_defaults().last_valid_date(), "2024-11-20T13:24:15Z");
/// # Ok::<(), ringflake::Error>(())
/// ```
///
/// # Examples
///
/// ```
/// use ringflake::Layout;
///
/// let layout = Layout::new(31, 23, 9, 1_463_673_600)?;
/// let id = layout.compose(100, 7, 3)?;
/// let parts = layout.decompose(id)?;
/// assert_eq!((parts.delta_seconds, parts.worker_id, parts.sequence), (100, 7, 3));
/// assert_eq!(layout.max_worker_id(), (1 << 23) - 1);
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    time_bits: u32,
    worker_bits: u32,
    seq_bits: u32,
    /// The epoch in unix seconds, rounded down (exact for a [`TimeUnit::Seconds`] layout).
    epoch_seconds: i64,
    /// The epoch in unix milliseconds: where tick 0 starts.
    epoch_millis: i64,
    unit: TimeUnit,
    order: FieldOrder,
}

fn now_unix_seconds() -> i64 {
    Timestamp::now().as_second()
}

/// The three widths added up, `None` if one is 0 (every field needs a bit) or the sum overflows.
fn width_sum(time_bits: u32, worker_bits: u32, seq_bits: u32) -> Option<u32> {
    if time_bits == 0 || worker_bits == 0 || seq_bits == 0 {
        return None;
    }
    time_bits.checked_add(worker_bits)?.checked_add(seq_bits)
}

impl Default for Layout {
    /// 31 time bits (68 years), 10 worker bits (1,023 live workers from a worker table, whose ids
    /// start at 1, or 1,024 fixed ids; with recycling, the default
    /// for database assigners, ids of stopped nodes are reused), 22 sequence bits (4,194,304 IDs
    /// a second per worker without borrowing) from 2025-01-01T00:00:00Z: valid until 2093-01-19.
    /// Java-compatible layouts are [`Layout::uid_generator_defaults`] or [`Layout::new`].
    fn default() -> Self {
        Layout::seconds(31, 10, 22, DEFAULT_EPOCH_SECONDS)
    }
}

impl Layout {
    /// A layout with the given widths (which must add up to 63, each at least 1) counting seconds
    /// from `epoch_seconds` (unix seconds; must not lie in the future).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidBitWidths`] or [`Error::EpochInFuture`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::Layout;
    ///
    /// assert!(Layout::new(30, 27, 6, 1_463_673_600).is_ok());
    /// assert!(Layout::new(0, 50, 13, 0).is_err());
    /// assert!(Layout::new(30, 20, 13, i64::MAX).is_err());
    /// ```
    pub fn new(
        time_bits: u32,
        worker_bits: u32,
        seq_bits: u32,
        epoch_seconds: i64,
    ) -> Result<Self, Error> {
        if width_sum(time_bits, worker_bits, seq_bits) != Some(63) {
            return Err(Error::InvalidBitWidths {
                time_bits,
                worker_bits,
                seq_bits,
            });
        }
        let now_seconds = now_unix_seconds();
        if epoch_seconds > now_seconds {
            return Err(Error::EpochInFuture {
                epoch_seconds,
                now_seconds,
            });
        }
        Ok(Layout::seconds(
            time_bits,
            worker_bits,
            seq_bits,
            epoch_seconds,
        ))
    }

    /// A seconds layout of checked widths.
    pub(crate) const fn seconds(
        time_bits: u32,
        worker_bits: u32,
        seq_bits: u32,
        epoch_seconds: i64,
    ) -> Self {
        Layout {
            time_bits,
            worker_bits,
            seq_bits,
            epoch_seconds,
            epoch_millis: epoch_seconds.saturating_mul(1000),
            unit: TimeUnit::Seconds,
            order: FieldOrder::WorkerAboveSequence,
        }
    }

    /// A layout of any tick ([`TimeUnit`]) and field order ([`FieldOrder`]), as the other
    /// members of the snowflake family define theirs: the widths may add up to less than 63
    /// (the high bits then stay 0: 53 keeps IDs within JavaScript's safe integers) or to 64 (the
    /// time field's top bit is then the sign bit, and the layout ends where IDs would reach
    /// `2^63`: [`Layout::max_delta`]). `epoch_millis` (unix milliseconds, not in the future)
    /// must start a tick: a multiple of the unit's milliseconds.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidBitWidths`] if a width is 0 or the three add up to more than 64;
    /// [`Error::EpochNotOnTick`]; [`Error::EpochInFuture`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::{FieldOrder, Layout, TimeUnit};
    ///
    /// // Twitter's snowflake: 41/10/12 bits of milliseconds from 2010-11-04T01:42:54.657Z.
    /// let twitter = Layout::with_unit(41, 10, 12, 1_288_834_974_657, TimeUnit::Millis, FieldOrder::default())?;
    /// assert_eq!(twitter, Layout::twitter());
    /// assert!(Layout::with_unit(42, 10, 13, 0, TimeUnit::Millis, FieldOrder::default()).is_err());
    /// assert!(Layout::with_unit(41, 10, 12, 1_005, TimeUnit::TenMillis, FieldOrder::default()).is_err());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn with_unit(
        time_bits: u32,
        worker_bits: u32,
        seq_bits: u32,
        epoch_millis: i64,
        unit: TimeUnit,
        order: FieldOrder,
    ) -> Result<Self, Error> {
        if width_sum(time_bits, worker_bits, seq_bits).is_none_or(|s| s > 64) {
            return Err(Error::InvalidBitWidths {
                time_bits,
                worker_bits,
                seq_bits,
            });
        }
        if epoch_millis.rem_euclid(unit.millis() as i64) != 0 {
            return Err(Error::EpochNotOnTick {
                epoch_millis,
                tick_millis: unit.millis(),
            });
        }
        let now_millis = Timestamp::now().as_millisecond();
        if epoch_millis > now_millis {
            return Err(Error::EpochInFuture {
                epoch_seconds: epoch_millis.div_euclid(1000),
                now_seconds: now_millis.div_euclid(1000),
            });
        }
        Ok(Layout::exact(
            time_bits,
            worker_bits,
            seq_bits,
            epoch_millis,
            unit,
            order,
        ))
    }

    /// A layout of checked values (the presets' constructor).
    pub(crate) const fn exact(
        time_bits: u32,
        worker_bits: u32,
        seq_bits: u32,
        epoch_millis: i64,
        unit: TimeUnit,
        order: FieldOrder,
    ) -> Self {
        Layout {
            time_bits,
            worker_bits,
            seq_bits,
            epoch_seconds: epoch_millis.div_euclid(1000),
            epoch_millis,
            unit,
            order,
        }
    }

    /// A layout whose epoch is the date `yyyy-MM-dd` at midnight in `tz`, as Java's `epochStr`.
    ///
    /// # Errors
    ///
    /// As [`Layout::new`] and [`epoch_from_date`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::{Layout, TimeZone};
    ///
    /// let layout = Layout::with_epoch_date(29, 21, 13, "2016-09-20", &TimeZone::UTC)?;
    /// assert_eq!(layout.epoch_seconds(), 1_474_329_600);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn with_epoch_date(
        time_bits: u32,
        worker_bits: u32,
        seq_bits: u32,
        date: &str,
        tz: &TimeZone,
    ) -> Result<Self, Error> {
        Layout::new(time_bits, worker_bits, seq_bits, epoch_from_date(date, tz)?)
    }

    /// UidGenerator's defaults: 28/22/13 bits from epoch second 1463673600 (2016-05-20 in UTC+8).
    ///
    /// Those time bits ran out on 2024-11-20T13:24:15Z: this layout still parses old IDs, but a
    /// generator refuses to start with it ([`Layout::check_alive_at`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::Layout;
    ///
    /// let java = Layout::uid_generator_defaults();
    /// assert_eq!(java.last_valid_second(), 1_732_109_055); // 2024-11-20T13:24:15Z
    /// assert!(java.check_alive_at(1_800_000_000).is_err());
    /// ```
    pub const fn uid_generator_defaults() -> Self {
        Layout::seconds(28, 22, 13, UID_GENERATOR_EPOCH_SECONDS)
    }

    /// Width of the time field.
    ///
    /// ```
    /// assert_eq!(ringflake::Layout::default().time_bits(), 31);
    /// ```
    pub const fn time_bits(&self) -> u32 {
        self.time_bits
    }

    /// Width of the worker field.
    ///
    /// ```
    /// assert_eq!(ringflake::Layout::default().worker_bits(), 10);
    /// ```
    pub const fn worker_bits(&self) -> u32 {
        self.worker_bits
    }

    /// Width of the sequence field.
    ///
    /// ```
    /// assert_eq!(ringflake::Layout::default().seq_bits(), 22);
    /// ```
    pub const fn seq_bits(&self) -> u32 {
        self.seq_bits
    }

    /// The epoch, in unix seconds (rounded down when it is not a whole second, as Twitter's
    /// 1288834974657 ms is not).
    ///
    /// ```
    /// assert_eq!(ringflake::Layout::default().epoch_seconds(), 1_735_689_600);
    /// assert_eq!(ringflake::Layout::twitter().epoch_seconds(), 1_288_834_974);
    /// ```
    pub const fn epoch_seconds(&self) -> i64 {
        self.epoch_seconds
    }

    /// The epoch, in unix milliseconds: where tick 0 starts.
    ///
    /// ```
    /// assert_eq!(ringflake::Layout::default().epoch_millis(), 1_735_689_600_000);
    /// assert_eq!(ringflake::Layout::twitter().epoch_millis(), 1_288_834_974_657);
    /// ```
    pub const fn epoch_millis(&self) -> i64 {
        self.epoch_millis
    }

    /// The length of one tick of the time field.
    ///
    /// ```
    /// use ringflake::{Layout, TimeUnit};
    /// assert_eq!(Layout::default().unit(), TimeUnit::Seconds);
    /// assert_eq!(Layout::sonyflake().unit(), TimeUnit::TenMillis);
    /// ```
    pub const fn unit(&self) -> TimeUnit {
        self.unit
    }

    /// Which of worker id and sequence sits above the other.
    ///
    /// ```
    /// use ringflake::{FieldOrder, Layout};
    /// assert_eq!(Layout::default().order(), FieldOrder::WorkerAboveSequence);
    /// ```
    pub const fn order(&self) -> FieldOrder {
        self.order
    }

    /// The largest delta (ticks since the epoch) an ID can carry: `2^time_bits - 1`, or less
    /// when the widths add up to 64 and IDs would reach `2^63` before (Discord's and
    /// Instagram's: ringflake's IDs are non-negative `i64`).
    ///
    /// ```
    /// use ringflake::Layout;
    /// assert_eq!(Layout::default().max_delta(), (1 << 31) - 1);
    /// assert_eq!(Layout::discord().max_delta(), (1 << 41) - 1); // 42 bits, top one the sign
    /// ```
    pub const fn max_delta(&self) -> u64 {
        let field = if self.time_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.time_bits) - 1
        };
        let below_sign = (i64::MAX as u64) >> self.time_shift();
        if field < below_sign {
            field
        } else {
            below_sign
        }
    }

    /// The layout's lifetime in whole seconds: [`Layout::max_delta`] ticks, rounded down to
    /// seconds (the same number for a [`TimeUnit::Seconds`] layout).
    ///
    /// ```
    /// assert_eq!(ringflake::Layout::default().max_delta_seconds(), (1 << 31) - 1);
    /// assert_eq!(ringflake::Layout::twitter().max_delta_seconds(), ((1 << 41) - 1) / 1000);
    /// ```
    pub const fn max_delta_seconds(&self) -> u64 {
        if self.unit.millis() == 1000 {
            self.max_delta()
        } else {
            self.max_delta() / self.unit.per_second()
        }
    }

    /// The largest worker id: `2^worker_bits - 1`.
    ///
    /// ```
    /// assert_eq!(ringflake::Layout::default().max_worker_id(), 1_023);
    /// ```
    pub const fn max_worker_id(&self) -> u64 {
        (1u64 << self.worker_bits) - 1
    }

    /// The largest sequence: `2^seq_bits - 1`.
    ///
    /// ```
    /// assert_eq!(ringflake::Layout::default().max_sequence(), 4_194_303);
    /// ```
    pub const fn max_sequence(&self) -> u64 {
        (1u64 << self.seq_bits) - 1
    }

    /// How far the time field is shifted: `worker_bits + seq_bits`.
    ///
    /// ```
    /// assert_eq!(ringflake::Layout::default().time_shift(), 32);
    /// ```
    pub const fn time_shift(&self) -> u32 {
        self.worker_bits + self.seq_bits
    }

    /// How far the worker field is shifted: `seq_bits`, or 0 with the sequence above it.
    pub(crate) const fn worker_shift(&self) -> u32 {
        match self.order {
            FieldOrder::WorkerAboveSequence => self.seq_bits,
            FieldOrder::SequenceAboveWorker => 0,
        }
    }

    /// How far the sequence field is shifted: 0, or `worker_bits` with the sequence above it.
    pub(crate) const fn seq_shift(&self) -> u32 {
        match self.order {
            FieldOrder::WorkerAboveSequence => 0,
            FieldOrder::SequenceAboveWorker => self.worker_bits,
        }
    }

    /// The largest ID the layout can hold: `2^(sum of widths) - 1`, at most `2^63 - 1`.
    ///
    /// ```
    /// use ringflake::Layout;
    /// assert_eq!(Layout::default().max_id(), i64::MAX as u64);
    /// assert_eq!(Layout::js53().max_id(), (1 << 53) - 1);
    /// ```
    pub const fn max_id(&self) -> u64 {
        let bits = self.time_bits + self.worker_bits + self.seq_bits;
        if bits >= 63 {
            i64::MAX as u64
        } else {
            (1u64 << bits) - 1
        }
    }

    /// Packs the three fields into an ID; `delta` counts the layout's ticks (seconds unless
    /// [`Layout::unit`] says otherwise).
    ///
    /// # Errors
    ///
    /// [`Error::DeltaOutOfRange`], [`Error::WorkerIdOutOfRange`] or [`Error::SequenceOutOfRange`]
    /// when a value does not fit its field (Java would spill it into the next field); a delta
    /// past [`Layout::max_delta`] is out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::Layout;
    ///
    /// let layout = Layout::new(29, 21, 13, 1_474_329_600)?;
    /// assert_eq!(layout.compose(1, 1, 1)?, 17_179_877_377);
    /// assert!(layout.compose(0, 0, 8192).is_err());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn compose(&self, delta: u64, worker_id: u64, sequence: u64) -> Result<u64, Error> {
        if delta > self.max_delta() {
            return Err(Error::DeltaOutOfRange {
                delta,
                max: self.max_delta(),
            });
        }
        if worker_id > self.max_worker_id() {
            return Err(Error::WorkerIdOutOfRange {
                worker_id,
                max: self.max_worker_id(),
            });
        }
        if sequence > self.max_sequence() {
            return Err(Error::SequenceOutOfRange {
                sequence,
                max: self.max_sequence(),
            });
        }
        Ok(self.compose_unchecked(delta, worker_id, sequence))
    }

    /// Packs fields the caller has already checked.
    #[inline]
    pub(crate) const fn compose_unchecked(&self, delta: u64, worker: u64, seq: u64) -> u64 {
        (delta << self.time_shift()) | (worker << self.worker_shift()) | (seq << self.seq_shift())
    }

    /// Splits an ID into its fields.
    ///
    /// # Errors
    ///
    /// [`Error::NegativeId`] if the sign bit is set; [`Error::IdOutOfRange`] if the ID has bits
    /// set above the layout's widths (only for a layout narrower than 63 bits, such as
    /// [`Layout::js53`]).
    ///
    /// ```
    /// let parts = ringflake::Layout::default().decompose(1 << 32)?;
    /// assert_eq!(parts.delta_seconds, 1);
    /// assert!(ringflake::Layout::default().decompose(u64::MAX).is_err());
    /// assert!(ringflake::Layout::js53().decompose(1 << 53).is_err());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn decompose(&self, id: u64) -> Result<Parts, Error> {
        if id > i64::MAX as u64 {
            return Err(Error::NegativeId { id });
        }
        if id > self.max_id() {
            return Err(Error::IdOutOfRange {
                id,
                max: self.max_id(),
            });
        }
        let delta = id >> self.time_shift();
        Ok(Parts {
            delta_seconds: delta / self.unit.per_second(),
            delta_ticks: delta,
            worker_id: (id >> self.worker_shift()) & self.max_worker_id(),
            sequence: (id >> self.seq_shift()) & self.max_sequence(),
        })
    }

    /// Parses an ID: its time as unix seconds and milliseconds, its worker id and its sequence.
    ///
    /// # Errors
    ///
    /// As [`Layout::decompose`].
    ///
    /// ```
    /// use ringflake::Layout;
    ///
    /// let parsed = Layout::default().parse(1 << 32)?;
    /// assert_eq!(parsed.unix_seconds, 1_735_689_601);
    /// // Discord's documented example: 2016-04-30 11:18:25.796 UTC, worker 1 process 0
    /// // (worker id 1 << 5 | 0), increment 7.
    /// let discord = Layout::discord().parse(175_928_847_299_117_063)?;
    /// assert_eq!((discord.unix_millis, discord.worker_id, discord.sequence), (1_462_015_105_796, 32, 7));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn parse(&self, id: u64) -> Result<ParsedId, Error> {
        let p = self.decompose(id)?;
        Ok(ParsedId {
            id,
            unix_seconds: self.tick_second(p.delta_ticks),
            unix_millis: self.tick_millis(p.delta_ticks),
            unit: self.unit,
            worker_id: p.worker_id,
            sequence: p.sequence,
        })
    }
}
