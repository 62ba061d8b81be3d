//! Time as an injectable seam, as in the `uuid` crate's `ContextV7`/`NoContext`: the generators
//! read the wall clock only through [`Clock`], so tests can move time (backwards included) without
//! sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in unix milliseconds.
///
/// # Examples
///
/// ```
/// use ringflake::{Clock, SystemClock};
///
/// assert!(SystemClock.now_millis() > 1_700_000_000_000);
/// ```
pub trait Clock: Send + Sync + 'static {
    /// The current time, in milliseconds since 1970-01-01T00:00:00Z.
    ///
    /// ```
    /// use ringflake::{Clock, ManualClock};
    ///
    /// let clock = ManualClock::new(1_735_689_600_000);
    /// assert_eq!(clock.now_millis(), 1_735_689_600_000);
    /// ```
    fn now_millis(&self) -> i64;

    /// The current time in whole unix seconds (rounded down).
    ///
    /// ```
    /// use ringflake::{Clock, ManualClock};
    ///
    /// assert_eq!(ManualClock::new(1_999).now_seconds(), 1);
    /// assert_eq!(ManualClock::new(-1).now_seconds(), -1);
    /// ```
    fn now_seconds(&self) -> i64 {
        self.now_millis().div_euclid(1000)
    }
}

/// The operating system's real-time clock.
///
/// ```
/// use ringflake::{Clock, SystemClock};
///
/// let a = SystemClock.now_millis();
/// assert!(SystemClock.now_millis() >= a - 1_000);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> i64 {
        // A take reads this once per ID it claims alone (`try_next_id`): clock_gettime's seconds
        // and nanoseconds taken as they are cost 44 instructions, where `SystemTime`'s checked
        // subtraction from the epoch cost 103 (callgrind). The seconds are negative before 1970,
        // the nanoseconds never: the sum rounds down, as `now_seconds` does.
        // (time_t and long are i32 on some 32-bit targets: the conversions are not useless.)
        #[cfg(unix)]
        #[allow(clippy::useless_conversion)]
        if let Ok(t) = nix::time::clock_gettime(nix::time::ClockId::CLOCK_REALTIME) {
            return i64::from(t.tv_sec()) * 1000 + i64::from(t.tv_nsec()) / 1_000_000;
        }
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_millis() as i64,
            Err(e) => -(e.duration().as_millis() as i64),
        }
    }
}

/// A clock that only moves when told to: for deterministic tests of clock rollback, exhaustion
/// and borrowed-time drift. Clones share the same time.
///
/// ```
/// use ringflake::{Clock, ManualClock};
///
/// let clock = ManualClock::from_seconds(1_800_000_000);
/// let handle = clock.clone();
/// handle.advance_seconds(10);
/// assert_eq!(clock.now_seconds(), 1_800_000_010);
/// handle.advance_seconds(-3600);
/// assert_eq!(clock.now_seconds(), 1_799_996_410);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock standing at `millis` unix milliseconds.
    ///
    /// ```
    /// use ringflake::{Clock, ManualClock};
    /// assert_eq!(ManualClock::new(5).now_millis(), 5);
    /// ```
    pub fn new(millis: i64) -> Self {
        ManualClock(Arc::new(AtomicI64::new(millis)))
    }

    /// A clock standing at `seconds` unix seconds.
    ///
    /// ```
    /// use ringflake::{Clock, ManualClock};
    /// assert_eq!(ManualClock::from_seconds(5).now_millis(), 5_000);
    /// ```
    pub fn from_seconds(seconds: i64) -> Self {
        ManualClock::new(seconds.saturating_mul(1000))
    }

    /// Sets the time to `millis` unix milliseconds.
    ///
    /// ```
    /// use ringflake::{Clock, ManualClock};
    /// let c = ManualClock::new(0);
    /// c.set_millis(42);
    /// assert_eq!(c.now_millis(), 42);
    /// ```
    pub fn set_millis(&self, millis: i64) {
        self.0.store(millis, Ordering::SeqCst);
    }

    /// Moves the time by `seconds` (negative moves it back).
    ///
    /// ```
    /// use ringflake::{Clock, ManualClock};
    /// let c = ManualClock::from_seconds(10);
    /// c.advance_seconds(-1);
    /// assert_eq!(c.now_seconds(), 9);
    /// ```
    pub fn advance_seconds(&self, seconds: i64) {
        self.0
            .fetch_add(seconds.saturating_mul(1000), Ordering::SeqCst);
    }

    /// Moves the time by `millis` milliseconds (negative moves it back).
    ///
    /// ```
    /// use ringflake::{Clock, ManualClock};
    /// let c = ManualClock::new(10);
    /// c.advance_millis(5);
    /// assert_eq!(c.now_millis(), 15);
    /// ```
    pub fn advance_millis(&self, millis: i64) {
        self.0.fetch_add(millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Formats a unix second as RFC 3339 in UTC, for error messages.
pub(crate) fn rfc3339(seconds: i64) -> String {
    match jiff::Timestamp::from_second(seconds) {
        Ok(ts) => ts.to_string(),
        Err(_) => format!("unix second {seconds}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn std_millis() -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .expect("a clock after 1970")
    }

    /// `SystemClock`'s own reading of the clock is the standard library's, to the millisecond.
    #[test]
    fn system_clock_reads_what_system_time_reads() {
        for _ in 0..10_000 {
            let before = std_millis();
            let read = SystemClock.now_millis();
            let after = std_millis();
            assert!(
                before <= read && read <= after,
                "{before} <= {read} <= {after}"
            );
        }
    }
}
