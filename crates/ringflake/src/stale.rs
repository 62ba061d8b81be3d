//! Rule 6, no stale IDs: when an ID is too old to hand out. One rule for every place that
//! decides it: the ring's takes (`cached::take`), the per-thread takers (`cached::local`), the
//! filler's sweep (`cached::filler`) and the remote client's buffer and thread blocks
//! (`remote::buffer`, `remote::held`).
//!
//! # The boundary
//!
//! Seconds are whole delta seconds, as IDs carry them: the clock's second `now` covers the real
//! times from `now` to just before `now + 1`. An ID of second `s` is stale once
//! `now >= s + max_lag`, that is once its second lies `max_lag` or more behind the clock's. So an
//! ID is handed out only while the real time is below `s + max_lag`: it is never `max_lag` or
//! more older than the clock, as the docs promise ("IDs more than `max_lag` behind the clock are
//! discarded, never handed out"; "an ID is at most `max_lag` older than the clock when handed
//! out"), and with the default `max_lag` of 1 s an ID carries the clock's current second (or a
//! borrowed one ahead of it), never the previous one. The other boundary (`now > s + max_lag`,
//! which the remote client used) would hand out IDs up to `max_lag + 1` s old.
//!
//! # Cost
//!
//! The functions inline to what each place wrote before: one saturating add where the deadline
//! is made (once per chunk, block or batch) and one comparison where it is checked (per ID in
//! the thread-local blocks). No clock is read here.

/// The clock second from which IDs of one second are stale: what a thread that holds a block of
/// IDs keeps, so that handing out an ID costs one comparison ([`StaleFrom::is_stale`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StaleFrom(u64);

impl StaleFrom {
    /// Stale at any clock second: what a thread holding no block keeps.
    pub(crate) const ALWAYS: StaleFrom = StaleFrom(0);

    /// When IDs of delta second `second` become stale under `max_lag_secs`: at clock second
    /// `second + max_lag_secs` (never, past the end of `u64`).
    #[inline(always)]
    pub(crate) const fn of(second: u64, max_lag_secs: u64) -> StaleFrom {
        StaleFrom(second.saturating_add(max_lag_secs))
    }

    /// Whether the IDs are stale at clock second `now`.
    #[inline(always)]
    pub(crate) const fn is_stale(self, now: u64) -> bool {
        now >= self.0
    }
}

/// Whether an ID of delta second `second` is stale at clock second `now` under `max_lag_secs`:
/// its second is `max_lag_secs` or more behind the clock's.
#[inline(always)]
pub(crate) const fn is_stale(second: u64, max_lag_secs: u64, now: u64) -> bool {
    StaleFrom::of(second, max_lag_secs).is_stale(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The boundary: an ID of second 100 under `max_lag` 5 is handed out up to clock second 104
    /// and stale from 105 on.
    #[test]
    fn boundary() {
        assert!(!is_stale(100, 5, 99));
        assert!(!is_stale(100, 5, 100));
        assert!(!is_stale(100, 5, 104));
        assert!(is_stale(100, 5, 105));
        assert!(is_stale(100, 5, 106));
        // The default max_lag, 1 s: only the clock's own second (or a borrowed one) is fresh.
        assert!(!is_stale(100, 1, 100));
        assert!(is_stale(100, 1, 101));
        assert!(!is_stale(101, 1, 100));
    }

    #[test]
    fn deadline_is_the_same_rule() {
        for now in 95..110 {
            assert_eq!(StaleFrom::of(100, 5).is_stale(now), is_stale(100, 5, now));
        }
        assert!(StaleFrom::ALWAYS.is_stale(0));
    }

    /// Near the end of `u64` the deadline saturates: never stale, rather than wrapped round to
    /// stale at once.
    #[test]
    fn saturates() {
        assert!(!is_stale(u64::MAX - 1, 5, u64::MAX - 1));
        assert_eq!(StaleFrom::of(u64::MAX, 1), StaleFrom::of(u64::MAX, 9));
    }
}
