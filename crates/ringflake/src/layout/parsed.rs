//! What an ID says: its fields ([`Parts`]) and its time ([`ParsedId`]), rendered as
//! UidGenerator's `parseUID` in Java's own calendar arithmetic, and UidGenerator's `epochStr`
//! dates read strictly ([`epoch_from_date`]).

use super::TimeUnit;
use crate::Error;
use crate::zone::system_time_zone;
use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;

/// The three fields of an ID.
///
/// # Examples
///
/// ```
/// use ringflake::Layout;
///
/// let parts = Layout::default().decompose((1 << 22) + 5)?;
/// assert_eq!((parts.delta_seconds, parts.worker_id, parts.sequence), (0, 1, 5));
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Parts {
    /// Whole seconds since the layout's epoch: the time field for a [`TimeUnit::Seconds`]
    /// layout, the time field's ticks rounded down to seconds otherwise.
    pub delta_seconds: u64,
    /// Ticks since the layout's epoch: the time field itself (equal to `delta_seconds` for a
    /// [`TimeUnit::Seconds`] layout).
    pub delta_ticks: u64,
    /// The worker id.
    pub worker_id: u64,
    /// The sequence within that second and worker.
    pub sequence: u64,
}

/// A parsed ID: what UidGenerator's `parseUID` shows.
///
/// # Java compatibility
///
/// [`ParsedId::to_java_string_in`] renders exactly UidGenerator's `parseUID` output.
///
/// # Examples
///
/// ```
/// use ringflake::{Layout, TimeZone};
///
/// let layout = Layout::new(29, 21, 13, 1_474_329_600)?;
/// let parsed = layout.parse(17_179_877_377)?;
/// assert_eq!(parsed.unix_seconds, 1_474_329_601);
/// assert_eq!(
///     parsed.to_java_string_in(&TimeZone::UTC)?,
///     r#"{"UID":"17179877377","timestamp":"2016-09-20 00:00:01","workerId":"1","sequence":"1"}"#
/// );
/// # Ok::<(), ringflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ParsedId {
    /// The ID itself.
    pub id: u64,
    /// The embedded second, as unix seconds (rounded down for a millisecond layout).
    pub unix_seconds: i64,
    /// The embedded time, as unix milliseconds (where its tick starts).
    pub unix_millis: i64,
    /// The layout's tick: with milliseconds ([`TimeUnit::Millis`], [`TimeUnit::TenMillis`])
    /// the rendered timestamp shows them.
    pub unit: TimeUnit,
    /// The worker id.
    pub worker_id: u64,
    /// The sequence.
    pub sequence: u64,
}

impl ParsedId {
    /// Renders UidGenerator's `parseUID` JSON, with the timestamp in the process's local time zone
    /// (the `TZ` variable, else `/etc/localtime`), as the JVM does with its default zone. The zone
    /// is read with [`system_time_zone`], within its bounds.
    ///
    /// # Errors
    ///
    /// [`Error::TimestampOutOfRange`] if the second lies before the year -9999 (after the year
    /// 9999 it is rendered as Java does, see [`ParsedId::to_java_string_in`]);
    /// [`Error::TimeZone`] if the local time zone is refused (e.g. `TZ=/dev/zero`).
    ///
    /// # Examples
    ///
    /// ```
    /// let parsed = ringflake::Layout::default().parse(42)?;
    /// assert!(parsed.to_java_string()?.starts_with(r#"{"UID":"42","timestamp":""#));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn to_java_string(&self) -> Result<String, Error> {
        self.to_java_string_in(&system_time_zone()?)
    }

    /// Renders UidGenerator's `parseUID` JSON with the timestamp in the given time zone; for a
    /// millisecond or 10 ms layout the timestamp ends in its milliseconds (`.796`).
    ///
    /// After the year 9999 the timestamp is rendered as Java's `SimpleDateFormat` does: the year
    /// with all its digits, in the proleptic Gregorian calendar, with the offset of the zone's
    /// last rule (exact for UTC and fixed zones such as `Asia/Shanghai`). Java's `Date` holds at
    /// most `Long.MAX_VALUE` milliseconds, so a later second (possible only with more than 53
    /// time bits) renders, as in Java, as 292278994-08-17 07:12:55 UTC.
    ///
    /// # Errors
    ///
    /// [`Error::TimestampOutOfRange`] if the second lies before the year -9999.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::{Layout, TimeZone};
    ///
    /// let parsed = Layout::default().parse(0)?;
    /// assert_eq!(
    ///     parsed.to_java_string_in(&TimeZone::get("Asia/Shanghai").unwrap())?,
    ///     r#"{"UID":"0","timestamp":"2025-01-01 08:00:00","workerId":"0","sequence":"0"}"#
    /// );
    ///
    /// // 41 time bits from 2000-01-01 reach the year 71684, which Java prints with five digits.
    /// let layout = Layout::with_epoch_date(41, 10, 12, "2000-01-01", &TimeZone::UTC)?;
    /// assert_eq!(
    ///     layout.parse(i64::MAX as u64)?.to_java_string_in(&TimeZone::UTC)?,
    ///     r#"{"UID":"9223372036854775807","timestamp":"71684-04-09 01:12:31","workerId":"1023","sequence":"4095"}"#
    /// );
    ///
    /// // Discord's documented ID, with its milliseconds.
    /// assert_eq!(
    ///     Layout::discord().parse(175_928_847_299_117_063)?.to_java_string_in(&TimeZone::UTC)?,
    ///     r#"{"UID":"175928847299117063","timestamp":"2016-04-30 11:18:25.796","workerId":"32","sequence":"7"}"#
    /// );
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn to_java_string_in(&self, tz: &TimeZone) -> Result<String, Error> {
        let millis = match self.unit {
            TimeUnit::Seconds => String::new(),
            _ => format!(".{:03}", self.unix_millis.rem_euclid(1000)),
        };
        Ok(format!(
            r#"{{"UID":"{}","timestamp":"{}{millis}","workerId":"{}","sequence":"{}"}}"#,
            self.id,
            format_local(self.unix_seconds, tz)?,
            self.worker_id,
            self.sequence
        ))
    }
}

/// Formats a unix second as `yyyy-MM-dd HH:mm:ss` in `tz`, the pattern UidGenerator uses.
///
/// Within `jiff`'s range (years -9999 to 9999) `jiff` renders it. After year 9999 the date is
/// computed here, in the proleptic Gregorian calendar, as Java's `SimpleDateFormat` prints it:
/// the year with as many digits as it has (`71684-04-09 01:12:31`), and with the zone's offset
/// under its last rule (see [`far_future_offset`]). Before year -9999 it is an error, as before.
fn format_local(seconds: i64, tz: &TimeZone) -> Result<String, Error> {
    if let Ok(ts) = Timestamp::from_second(seconds) {
        return Ok(ts
            .to_zoned(tz.clone())
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string());
    }
    if seconds < 0 {
        return Err(Error::TimestampOutOfRange { seconds });
    }
    // Java makes a `Date` of `TimeUnit.SECONDS.toMillis(second)`, which saturates at
    // `Long.MAX_VALUE` milliseconds (292278994-08-17T07:12:55.807Z): every later second prints as
    // that one.
    let seconds = seconds.min(JAVA_MAX_DATE_SECONDS);
    let local = seconds + i64::from(far_future_offset(seconds, tz));
    let (year, month, day) = civil_from_days(local.div_euclid(86_400));
    let time = local.rem_euclid(86_400);
    Ok(format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        time / 3600,
        time / 60 % 60,
        time % 60
    ))
}

/// The last second a Java `Date` made from seconds can carry: `Long.MAX_VALUE` milliseconds.
const JAVA_MAX_DATE_SECONDS: i64 = i64::MAX / 1000;

/// Seconds in 400 Gregorian years (146,097 days): the calendar, weekdays included, repeats after
/// them.
const GREGORIAN_CYCLE_SECONDS: i64 = 146_097 * 86_400;

/// The offset of `tz` (in seconds) at a unix second after `jiff`'s range (year 9999).
///
/// Java's `SimpleDateFormat` takes the offset of a far-future instant from the zone's last rule
/// (`ZoneInfo` beyond its transition table: the zone's final `SimpleTimeZone` rule if it still
/// has daylight saving time, else its last standard offset), as a TZif file's POSIX footer
/// describes it. Such a rule ("second Sunday of March at 02:00") falls on the same instants
/// every 400 years, so the offset is the one `jiff` gives at the same instant moved back by
/// whole 400-year cycles into its range: exact for UTC and fixed zones (`Asia/Shanghai`,
/// +08:00), and for zones with daylight saving time the offset of their last rule.
fn far_future_offset(seconds: i64, tz: &TimeZone) -> i32 {
    let limit = Timestamp::MAX.as_second();
    let cycles = (seconds - limit) / GREGORIAN_CYCLE_SECONDS + 1;
    let moved = seconds - cycles * GREGORIAN_CYCLE_SECONDS;
    Timestamp::from_second(moved).map_or(0, |ts| tz.to_offset(ts).seconds())
}

/// The proleptic Gregorian date `(year, month, day)` of a day counted from 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], from March
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Parses an epoch date `yyyy-MM-dd` strictly (no lenient roll-over: "2024-13-01" is refused, where
/// Java accepts it as 2025-01-01) and returns midnight of that day in `tz` as unix seconds.
///
/// # Errors
///
/// [`Error::InvalidEpoch`] naming the input if it is not exactly a real `yyyy-MM-dd` date.
///
/// # Examples
///
/// ```
/// use ringflake::{epoch_from_date, TimeZone};
///
/// assert_eq!(epoch_from_date("2016-09-20", &TimeZone::UTC)?, 1_474_329_600);
/// let beijing = TimeZone::get("Asia/Shanghai").unwrap();
/// assert_eq!(epoch_from_date("2016-05-20", &beijing)?, ringflake::UID_GENERATOR_EPOCH_SECONDS);
/// assert!(epoch_from_date("2024-13-01", &TimeZone::UTC).is_err());
/// # Ok::<(), ringflake::Error>(())
/// ```
pub fn epoch_from_date(date: &str, tz: &TimeZone) -> Result<i64, Error> {
    let bad = |reason: &str| Error::InvalidEpoch {
        input: date.to_string(),
        reason: reason.to_string(),
    };
    let b = date.as_bytes();
    let shape_ok = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shape_ok {
        return Err(bad("expected the form yyyy-MM-dd"));
    }
    let num = |r: std::ops::Range<usize>| -> i32 {
        b[r].iter()
            .fold(0i32, |acc, c| acc * 10 + i32::from(c - b'0'))
    };
    let (y, m, d) = (num(0..4), num(5..7), num(8..10));
    if !(1..=12).contains(&m) {
        return Err(bad(&format!("month {m} out of range 1..=12")));
    }
    let days = Date::new(y as i16, m as i8, 1)
        .map_err(|_| bad(&format!("year {y} out of range")))?
        .days_in_month();
    if d < 1 || d > i32::from(days) {
        return Err(bad(&format!(
            "day {d} out of range 1..={days} for {y:04}-{m:02}"
        )));
    }
    let date_v = Date::new(y as i16, m as i8, d as i8).map_err(|_| {
        bad(&format!(
            "day {d} out of range 1..={days} for {y:04}-{m:02}"
        ))
    })?;
    let zoned = date_v
        .to_zoned(tz.clone())
        .map_err(|e| bad(&format!("midnight cannot be placed in the time zone: {e}")))?;
    Ok(zoned.timestamp().as_second())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calendar arithmetic against jiff's, over the whole of jiff's range.
    #[test]
    fn civil_from_days_matches_jiff() {
        let unix = jiff::civil::date(1970, 1, 1);
        let first = i64::from(Date::MIN.since(unix).unwrap().get_days());
        let last = i64::from(Date::MAX.since(unix).unwrap().get_days());
        assert!(first < -4_000_000 && last > 2_900_000, "{first}..={last}");
        let mut date = Date::MIN;
        for days in first..=last {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(
                (y, m, d),
                (
                    i64::from(date.year()),
                    date.month() as u32,
                    date.day() as u32
                ),
                "day {days}"
            );
            date = date.tomorrow().unwrap_or(date);
        }
    }

    /// Where jiff stops, the own path goes on without a seam: the last seconds jiff renders and
    /// the first it cannot, in UTC and in Asia/Shanghai.
    #[test]
    fn the_year_9999_seam() {
        let utc = TimeZone::UTC;
        let shanghai = TimeZone::get("Asia/Shanghai").unwrap();
        let max = Timestamp::MAX.as_second();
        assert_eq!(format_local(max, &utc).unwrap(), "9999-12-30 22:00:00");
        assert_eq!(format_local(max + 1, &utc).unwrap(), "9999-12-30 22:00:01");
        assert_eq!(format_local(max, &shanghai).unwrap(), "9999-12-31 06:00:00");
        assert_eq!(
            format_local(max + 1, &shanghai).unwrap(),
            "9999-12-31 06:00:01"
        );
        // 10000-01-01T00:00:00Z, and 8 hours earlier in Shanghai.
        let y10k = 253_402_300_800;
        assert_eq!(format_local(y10k, &utc).unwrap(), "10000-01-01 00:00:00");
        assert_eq!(
            format_local(y10k - 8 * 3600, &shanghai).unwrap(),
            "10000-01-01 00:00:00"
        );
    }

    /// A zone with daylight saving time takes its last rule's offset: New York in July of a
    /// far year is on EDT (-04:00), in January on EST (-05:00), as in 2025.
    #[test]
    fn far_future_uses_the_last_rule() {
        let ny = TimeZone::get("America/New_York").unwrap();
        // 12025-07-01T12:00:00Z and 12025-01-01T12:00:00Z: 2025's instants plus 25 cycles.
        let cycles = 25 * GREGORIAN_CYCLE_SECONDS;
        assert_eq!(
            format_local(1_751_371_200 + cycles, &ny).unwrap(),
            "12025-07-01 08:00:00"
        );
        assert_eq!(
            format_local(1_735_732_800 + cycles, &ny).unwrap(),
            "12025-01-01 07:00:00"
        );
    }

    /// Java's `Date` saturates at `Long.MAX_VALUE` milliseconds; so does the rendering.
    #[test]
    fn java_date_saturation() {
        let utc = TimeZone::UTC;
        let shanghai = TimeZone::get("Asia/Shanghai").unwrap();
        assert_eq!(
            format_local(JAVA_MAX_DATE_SECONDS, &utc).unwrap(),
            "292278994-08-17 07:12:55"
        );
        assert_eq!(
            format_local(i64::MAX, &utc).unwrap(),
            "292278994-08-17 07:12:55"
        );
        assert_eq!(
            format_local(i64::MAX, &shanghai).unwrap(),
            "292278994-08-17 15:12:55"
        );
        assert!(format_local(i64::MIN, &utc).is_err());
    }
}
