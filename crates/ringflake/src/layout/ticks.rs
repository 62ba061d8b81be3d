//! A layout's time: unix time to the ticks of its time field and back, and its lifetime (the
//! last second its time bits hold).

use super::{Layout, TimeUnit};
use crate::Error;

impl Layout {
    /// The tick (since the epoch) that holds unix millisecond `unix_millis`; 0 before the epoch.
    ///
    /// ```
    /// use ringflake::Layout;
    /// assert_eq!(Layout::default().tick_at(1_735_689_601_999), 1);
    /// assert_eq!(Layout::twitter().tick_at(1_288_834_974_657 + 5), 5);
    /// assert_eq!(Layout::sonyflake().tick_at(1_409_529_600_025), 2);
    /// assert_eq!(Layout::twitter().tick_at(0), 0);
    /// ```
    #[inline]
    pub const fn tick_at(&self, unix_millis: i64) -> u64 {
        let since = unix_millis.saturating_sub(self.epoch_millis);
        if since <= 0 {
            0
        } else {
            since as u64 / self.unit.millis()
        }
    }

    /// Where tick `delta` starts, in unix milliseconds (saturating).
    ///
    /// ```
    /// use ringflake::Layout;
    /// assert_eq!(Layout::default().tick_millis(1), 1_735_689_601_000);
    /// assert_eq!(Layout::twitter().tick_millis(5), 1_288_834_974_662);
    /// ```
    pub const fn tick_millis(&self, delta: u64) -> i64 {
        let since = delta.saturating_mul(self.unit.millis());
        let since = if since > i64::MAX as u64 {
            i64::MAX
        } else {
            since as i64
        };
        self.epoch_millis.saturating_add(since)
    }

    /// The unix second tick `delta` starts in (saturating).
    pub(crate) const fn tick_second(&self, delta: u64) -> i64 {
        match self.unit {
            // Exactly as before ticks: seconds saturate, not their milliseconds.
            TimeUnit::Seconds => self
                .epoch_seconds
                .saturating_add(if delta > i64::MAX as u64 {
                    i64::MAX
                } else {
                    delta as i64
                }),
            _ => self.tick_millis(delta).div_euclid(1000),
        }
    }

    /// The first tick that starts after unix second `second` ends (0 before the epoch): what a
    /// restart above a recorded second starts at.
    pub(crate) const fn first_tick_after_second(&self, second: i64) -> u64 {
        self.tick_at(second.saturating_add(1).saturating_mul(1000))
    }

    /// A duration in whole seconds as ticks (saturating).
    pub(crate) const fn seconds_as_ticks(&self, seconds: u64) -> u64 {
        seconds.saturating_mul(self.unit.per_second())
    }

    /// The last second an ID can carry, in unix seconds.
    ///
    /// ```
    /// let layout = ringflake::Layout::default();
    /// assert_eq!(layout.last_valid_second(), 1_735_689_600 + (1 << 31) - 1);
    /// ```
    pub const fn last_valid_second(&self) -> i64 {
        self.tick_second(self.max_delta())
    }

    /// The last valid second as an RFC 3339 date in UTC.
    ///
    /// ```
    /// let java = ringflake::Layout::uid_generator_defaults();
    /// assert_eq!(java.last_valid_date(), "2024-11-20T13:24:15Z");
    /// assert_eq!(ringflake::Layout::discord().last_valid_date(), "2084-09-06T15:47:35Z");
    /// ```
    pub fn last_valid_date(&self) -> String {
        crate::clock::rfc3339(self.last_valid_second())
    }

    /// Checks that IDs can still be made at unix second `now`.
    ///
    /// # Errors
    ///
    /// [`Error::TimeBitsExhausted`] naming the last valid date.
    ///
    /// ```
    /// let layout = ringflake::Layout::default();
    /// assert!(layout.check_alive_at(1_800_000_000).is_ok());
    /// assert!(layout.check_alive_at(layout.last_valid_second() + 1).is_err());
    /// ```
    pub fn check_alive_at(&self, now: i64) -> Result<(), Error> {
        let delta = self.tick_at(now.saturating_mul(1000));
        if delta > self.max_delta() {
            return Err(self.exhausted(delta));
        }
        Ok(())
    }

    pub(crate) fn exhausted(&self, delta: u64) -> Error {
        Error::TimeBitsExhausted {
            delta,
            max: self.max_delta(),
            last_valid: self.last_valid_date(),
        }
    }
}
