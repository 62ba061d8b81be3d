//! The database as a second clock: a node that keeps a lease in a server database reads that
//! database's clock every few seconds (a read, never a write), and judges its own clock by it.
//!
//! The skew is measured as NTP's simplest exchange does (RFC 5905 §8, with one timestamp from
//! the server): the database read its clock somewhere during the round trip, so this node's
//! clock at the round trip's midpoint, minus the database's, is the skew, uncertain by half the
//! round trip. [`judge`] is the one rule of what a skew means; [`ClockWatch`] keeps the last
//! reading, logs a change of verdict once, and tells the filler to stop while the node's clock
//! is beyond the bound.
//!
//! SQLite has no clock of its own (it runs in this process, on this node's clock): nothing is
//! read there.

use crate::{Clock, Error};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// One reading of a database's clock: what it said, and how long the call took to answer.
///
/// The database read its clock somewhere within `round_trip`: this node's clock at the middle
/// of the round trip, minus `unix_micros`, is the skew between the two clocks, uncertain by
/// half the round trip.
///
/// ```
/// use ringflake::DatabaseTime;
/// use std::time::Duration;
///
/// let t = DatabaseTime { unix_micros: 1_800_000_000_000_000, round_trip: Duration::from_millis(4) };
/// // This node's clock read 1,800,000,000,012 ms when the answer arrived: at the midpoint
/// // (2 ms earlier) it said 1,800,000,000,010 ms, 10 ms ahead of the database.
/// assert_eq!(t.skew_micros(1_800_000_000_012), 10_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatabaseTime {
    /// The database's clock, in microseconds since the Unix epoch.
    pub unix_micros: i64,
    /// The round trip of the call that read it (this node's monotonic clock).
    pub round_trip: Duration,
}

impl DatabaseTime {
    /// This node's clock minus the database's, in microseconds, round-trip corrected:
    /// `received_millis` is this node's clock (in milliseconds since the epoch) when the answer
    /// arrived. Positive: this node's clock is ahead of the database's.
    ///
    /// ```
    /// use ringflake::DatabaseTime;
    /// use std::time::Duration;
    ///
    /// let t = DatabaseTime { unix_micros: 1_800_000_060_000_000, round_trip: Duration::ZERO };
    /// assert_eq!(t.skew_micros(1_800_000_000_000), -60_000_000); // a minute behind
    /// ```
    pub fn skew_micros(&self, received_millis: i64) -> i64 {
        let half = i64::try_from(self.round_trip.as_micros() / 2).unwrap_or(i64::MAX);
        received_millis
            .saturating_mul(1000)
            .saturating_sub(half)
            .saturating_sub(self.unix_micros)
    }
}

/// How often a node reads its database's clock.
pub(crate) const PROBE_EVERY: Duration = Duration::from_secs(5);

/// The least skew beyond which a node stops serving, whatever its lead cap.
pub(crate) const MIN_STOP_ABOVE: Duration = Duration::from_secs(10);

/// What a skew means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Within `max_lag`.
    Agrees,
    /// Beyond `max_lag`, within the stop bound: served, with a warning.
    Warn,
    /// Beyond the stop bound: nothing served until the clock agrees again.
    Stop,
}

/// The one rule: a skew of `skew_micros` measured over `round_trip` is judged by the least skew
/// it can be (its size less half the round trip), against `warn_above` (`max_lag`) and
/// `stop_above`. A slow answer can make a node look skewed by at most half its round trip, so
/// it never stops a node on its own.
pub(crate) fn judge(
    skew_micros: i64,
    round_trip: Duration,
    warn_above: Duration,
    stop_above: Duration,
) -> Verdict {
    let half = round_trip.as_micros() / 2;
    let least = u128::from(skew_micros.unsigned_abs()).saturating_sub(half);
    if least > stop_above.as_micros() {
        Verdict::Stop
    } else if least > warn_above.as_micros() {
        Verdict::Warn
    } else {
        Verdict::Agrees
    }
}

/// The skew bound of a generator: its lead cap, at least [`MIN_STOP_ABOVE`].
///
/// An ID's second may already be up to `max_lead` ahead of the clock by design (borrowed
/// seconds), so a clock off by less than that makes no ID less ordered across the fleet than
/// borrowing does; beyond it, and beyond 10 s whatever the cap, this node's IDs sort where no
/// other node's could.
pub(crate) fn stop_above(max_lead: Option<u64>) -> Duration {
    max_lead
        .map(Duration::from_secs)
        .unwrap_or(MIN_STOP_ABOVE)
        .max(MIN_STOP_ABOVE)
}

/// A generator's view of its database's clock.
pub(crate) struct ClockWatch {
    warn_above: Duration,
    stop_above: Duration,
    /// The last skew measured, in microseconds; `i64::MIN` before the first reading.
    skew_micros: AtomicI64,
    /// The last reading's round trip, in microseconds.
    round_trip_micros: AtomicI64,
    /// The last reading said stop.
    stopped: AtomicBool,
    /// The verdict last logged, and when the database was last read.
    state: Mutex<(Verdict, Option<Instant>)>,
}

impl ClockWatch {
    pub(crate) fn new(max_lag: Duration, max_lead: Option<u64>) -> ClockWatch {
        ClockWatch {
            warn_above: max_lag,
            stop_above: stop_above(max_lead),
            skew_micros: AtomicI64::new(i64::MIN),
            round_trip_micros: AtomicI64::new(0),
            stopped: AtomicBool::new(false),
            state: Mutex::new((Verdict::Agrees, None)),
        }
    }

    /// Whether a reading is due ([`PROBE_EVERY`] after the last).
    pub(crate) fn due(&self) -> bool {
        let state = crate::lock::lock(&self.state);
        state.1.is_none_or(|at| at.elapsed() >= PROBE_EVERY)
    }

    /// Records the outcome of reading the database's clock (`read`), judged by `clock` (this
    /// node's); a failed read is left to the lease keeper's own reports (it uses the same
    /// connection) and keeps the last verdict.
    pub(crate) fn record(
        &self,
        read: Result<Option<DatabaseTime>, Error>,
        clock: &dyn Clock,
        worker_id: u64,
        database: &str,
    ) {
        let mut state = crate::lock::lock(&self.state);
        state.1 = Some(Instant::now());
        let reading = match read {
            Ok(Some(reading)) => reading,
            Ok(None) => return,
            Err(error) => {
                tracing::debug!(worker_id, %error, "cannot read the database's clock");
                return;
            }
        };
        let skew = reading.skew_micros(clock.now_millis());
        let round_trip = i64::try_from(reading.round_trip.as_micros()).unwrap_or(i64::MAX);
        self.skew_micros.store(skew, Ordering::Release);
        self.round_trip_micros.store(round_trip, Ordering::Release);
        let verdict = judge(skew, reading.round_trip, self.warn_above, self.stop_above);
        self.stopped
            .store(verdict == Verdict::Stop, Ordering::Release);
        if verdict == state.0 {
            return;
        }
        let was = std::mem::replace(&mut state.0, verdict);
        let skew_ms = skew / 1000;
        let round_trip_ms = round_trip / 1000;
        let side = if skew >= 0 { "ahead of" } else { "behind" };
        let by = Duration::from_micros(skew.unsigned_abs());
        match verdict {
            Verdict::Stop => tracing::error!(
                worker_id,
                database,
                skew_ms,
                round_trip_ms,
                max_skew_ms = self.stop_above.as_millis() as u64,
                "this node's clock is {by:.3?} {side} the database's, beyond {:?}: no ID is \
                 served until it agrees again (fix the node's time synchronisation)",
                self.stop_above,
            ),
            Verdict::Warn => tracing::warn!(
                worker_id,
                database,
                skew_ms,
                round_trip_ms,
                max_lag_ms = self.warn_above.as_millis() as u64,
                "this node's clock is {by:.3?} {side} the database's, more than max_lag ({:?}); \
                 served on up to {:?}",
                self.warn_above,
                self.stop_above,
            ),
            Verdict::Agrees => tracing::info!(
                worker_id,
                database,
                skew_ms,
                round_trip_ms,
                "this node's clock agrees with the database's again ({by:.3?} {side}){}",
                if was == Verdict::Stop {
                    ": serving again"
                } else {
                    ""
                },
            ),
        }
        if was == Verdict::Stop && verdict == Verdict::Warn {
            tracing::info!(worker_id, database, skew_ms, "serving again");
        }
    }

    /// This node's clock minus the database's at the last reading, in milliseconds (positive:
    /// ahead); `None` before the first reading.
    pub(crate) fn skew_millis(&self) -> Option<i64> {
        let skew = self.skew_micros.load(Ordering::Acquire);
        (skew != i64::MIN).then_some(skew / 1000)
    }

    /// The bound beyond which nothing is served.
    pub(crate) fn max_skew(&self) -> Duration {
        self.stop_above
    }

    /// Why nothing is served, while the last reading was beyond the bound.
    pub(crate) fn refusal(&self) -> Option<Error> {
        if !self.stopped.load(Ordering::Acquire) {
            return None;
        }
        Some(Error::ClockSkew {
            skew_millis: self.skew_millis().unwrap_or(0),
            max_millis: u64::try_from(self.stop_above.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000;

    /// The boundaries of the verdict: beyond `max_lag` warns, beyond the bound stops, and half
    /// the round trip is given the benefit of the doubt.
    #[test]
    fn skews_are_judged_by_the_least_they_can_be() {
        let (lag, stop) = (Duration::from_secs(1), Duration::from_secs(10));
        let rt = |ms| Duration::from_millis(ms);
        assert_eq!(judge(S, rt(0), lag, stop), Verdict::Agrees);
        assert_eq!(judge(S + 1, rt(0), lag, stop), Verdict::Warn);
        assert_eq!(judge(-10 * S, rt(0), lag, stop), Verdict::Warn);
        assert_eq!(judge(-10 * S - 1, rt(0), lag, stop), Verdict::Stop);
        // 10.5 s measured over a 2 s round trip: at least 9.5 s, a warning, not a stop.
        assert_eq!(judge(10 * S + S / 2, rt(2000), lag, stop), Verdict::Warn);
        assert_eq!(judge(11 * S + 1, rt(2000), lag, stop), Verdict::Stop);
    }

    #[test]
    fn the_bound_is_the_lead_cap_and_at_least_ten_seconds() {
        assert_eq!(stop_above(None), Duration::from_secs(10));
        assert_eq!(stop_above(Some(1)), Duration::from_secs(10));
        assert_eq!(stop_above(Some(60)), Duration::from_secs(60));
    }

    /// A reading beyond the bound stops, one within it resumes; the skew is kept.
    #[test]
    fn a_watch_stops_and_resumes() {
        let clock = crate::ManualClock::from_seconds(1_800_000_000);
        let watch = ClockWatch::new(Duration::from_secs(1), Some(10));
        assert_eq!(watch.skew_millis(), None);
        assert!(watch.due());
        let at = |offset_s: i64| {
            Ok(Some(DatabaseTime {
                unix_micros: (1_800_000_000 + offset_s) * S,
                round_trip: Duration::from_millis(2),
            }))
        };
        watch.record(at(60), &clock, 1, "db");
        assert!(!watch.due());
        assert_eq!(watch.skew_millis(), Some(-60_001));
        assert!(matches!(
            watch.refusal(),
            Some(Error::ClockSkew {
                skew_millis: -60_001,
                max_millis: 10_000
            })
        ));
        // A failed read keeps the verdict.
        watch.record(Err(Error::Shutdown), &clock, 1, "db");
        assert!(watch.refusal().is_some());
        watch.record(at(3), &clock, 1, "db");
        assert!(watch.refusal().is_none());
        watch.record(at(0), &clock, 1, "db");
        assert_eq!(watch.skew_millis(), Some(-1));
    }
}
