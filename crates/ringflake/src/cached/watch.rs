//! What the filler tells an operator: `tracing` events for the states a generator enters and
//! leaves, looked at after each filler round (never on the per-ID path) and each said once when it
//! begins, not every round: the clock stepped, the state file cannot be written (and can again),
//! the time bits near their end, the filler gone.
//!
//! The events are emitted in the span that was current when the generator was built, so an
//! application that builds each generator inside a span of its own (`ringflake serve` names them
//! `generator`) sees whose they are.

use super::shared::Shared;
use crate::lock::lock;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// How close to the end of the time bits a warning is logged, in seconds left (borrowed seconds
/// counted as used): a year, 30 days, a day. Each once, the lowest one crossed.
pub(super) const TIME_LEFT_WARNINGS: [u64; 3] = [365 * 86_400, 30 * 86_400, 86_400];

/// A clock that jumps back by at least this much, in milliseconds, is reported (NTP slews small
/// errors; a step of a second or more is an operator's or a broken time source's doing).
const STEP_BACK_MS: i64 = 1_000;

/// What the filler has seen and said so far.
pub(super) struct Watch {
    /// The wall clock (unix ms) and the monotonic clock after the last round: a difference in
    /// how far each moved since is a step of the wall clock.
    last: Option<(i64, Instant)>,
    /// The state file's error while it cannot be written, as logged.
    state_error: Option<String>,
    /// How many of [`TIME_LEFT_WARNINGS`] have been logged.
    time_warnings: usize,
    /// The end of the time bits was logged.
    exhausted: bool,
}

impl Watch {
    pub(super) fn new() -> Watch {
        Watch {
            last: None,
            state_error: None,
            time_warnings: 0,
            exhausted: false,
        }
    }

    /// Looks at `shared` after a filler round and logs what changed.
    pub(super) fn after_round(&mut self, shared: &Shared) {
        self.clock(shared);
        self.state_file(shared);
        self.time_left(shared);
    }

    /// A wall clock that moved differently from the monotonic clock since the last round was
    /// stepped: back by a second or more, or forward by more than `max_lag`.
    fn clock(&mut self, shared: &Shared) {
        let wall = shared.clock.now_millis();
        let mono = Instant::now();
        if let Some((wall0, mono0)) = self.last {
            let elapsed = i64::try_from(mono.duration_since(mono0).as_millis()).unwrap_or(i64::MAX);
            let step = wall.saturating_sub(wall0).saturating_sub(elapsed);
            let max_lag_ms = (shared.max_lag_secs as i64).saturating_mul(1000);
            if step <= -STEP_BACK_MS {
                tracing::warn!(
                    worker_id = shared.worker_id.load(Ordering::Relaxed),
                    step_s = step as f64 / 1000.0,
                    now = %crate::clock::rfc3339(wall.div_euclid(1000)),
                    "clock stepped back by {:.1} s: IDs continue above the newest second issued, \
                     ahead of the clock{}",
                    -step as f64 / 1000.0,
                    match shared.max_lead {
                        Some(_) => "; takes wait or fail at the lead cap until it catches up",
                        None => "",
                    },
                );
            } else if step > max_lag_ms {
                tracing::warn!(
                    worker_id = shared.worker_id.load(Ordering::Relaxed),
                    step_s = step as f64 / 1000.0,
                    max_lag_s = shared.max_lag_secs,
                    now = %crate::clock::rfc3339(wall.div_euclid(1000)),
                    "clock stepped forward by {:.1} s, beyond max_lag ({} s): the ready IDs \
                     older than max_lag are discarded",
                    step as f64 / 1000.0,
                    shared.max_lag_secs,
                );
            }
        }
        self.last = Some((wall, mono));
    }

    /// The state file's write failing (with the I/O error) and working again.
    fn state_file(&mut self, shared: &Shared) {
        let Some(reach) = &shared.reach else {
            return;
        };
        let now = lock(&reach.error).as_ref().map(|e| e.to_string());
        match (&self.state_error, &now) {
            (before, Some(error)) if before.as_ref() != Some(error) => tracing::error!(
                worker_id = shared.worker_id.load(Ordering::Relaxed),
                error = %error,
                "state file write failed: no ID past the second it records will be issued until \
                 it can be written"
            ),
            (Some(_), None) => tracing::info!(
                worker_id = shared.worker_id.load(Ordering::Relaxed),
                "state file written again: IDs are issued past the second it recorded"
            ),
            _ => {}
        }
        self.state_error = now;
    }

    /// The time bits running out: a warning at each of [`TIME_LEFT_WARNINGS`], an error at the
    /// end.
    fn time_left(&mut self, shared: &Shared) {
        let c = &shared.counters;
        if c.exhausted.load(Ordering::Acquire) {
            if !self.exhausted {
                self.exhausted = true;
                tracing::error!(
                    worker_id = shared.worker_id.load(Ordering::Relaxed),
                    last_valid = %shared.layout.last_valid_date(),
                    "time bits exhausted: every take fails from now on; move to a layout with \
                     more time bits or a later epoch"
                );
            }
            return;
        }
        let last = c.last_delta.load(Ordering::Relaxed).saturating_sub(1);
        let used = last.max(shared.now_delta());
        let left =
            shared.layout.max_delta().saturating_sub(used) / shared.layout.unit().per_second();
        let crossed = TIME_LEFT_WARNINGS.iter().filter(|&&t| left < t).count();
        if crossed > self.time_warnings {
            self.time_warnings = crossed;
            tracing::warn!(
                worker_id = shared.worker_id.load(Ordering::Relaxed),
                left_s = left,
                last_valid = %shared.layout.last_valid_date(),
                "time bits near their end: {} left (borrowed seconds counted as used), last \
                 valid second {}; plan the move to a layout with more time bits or a later epoch",
                span(left),
                shared.layout.last_valid_date(),
            );
        }
    }
}

/// `left` seconds for a person: days, hours, or seconds.
fn span(left: u64) -> String {
    match left {
        0..3_600 => format!("{left} s"),
        3_600..86_400 => format!("{} h", left / 3_600),
        86_400..172_800 => "1 day".into(),
        _ => format!("{} days", left / 86_400),
    }
}

/// The filler thread's end: an error unless the generator is shutting down, with the panic's
/// message if it panicked.
pub(super) fn filler_ended(shared: &Shared, panic: Option<&(dyn std::any::Any + Send)>) {
    let shutting_down = shared.counters.shutdown.load(Ordering::Acquire);
    match panic {
        Some(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            tracing::error!(
                worker_id = shared.worker_id.load(Ordering::Relaxed),
                panic = %message,
                "filler panicked: the ring is not refilled any more, takes fail once it is \
                 empty; restart the process"
            );
        }
        None if !shutting_down => tracing::error!(
            worker_id = shared.worker_id.load(Ordering::Relaxed),
            "filler stopped: the ring is not refilled any more, takes fail once it is empty; \
             restart the process"
        ),
        None => tracing::debug!(
            worker_id = shared.worker_id.load(Ordering::Relaxed),
            "filler stopped at shutdown"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::span;

    #[test]
    fn spans_read_as_days_hours_or_seconds() {
        assert_eq!(span(400 * 86_400), "400 days");
        assert_eq!(span(86_400), "1 day");
        assert_eq!(span(86_399), "23 h");
        assert_eq!(span(3_600), "1 h");
        assert_eq!(span(3_599), "3599 s");
        assert_eq!(span(0), "0 s");
    }
}
