//! The filler: the only writer of the ring, and the only place the time rules live.

use super::shared::Shared;
use super::stats::FILLER_RECORD_INTERVAL;
use super::watch::{self, Watch};
use crate::lock::lock;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Why a filler round stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Round {
    /// The ring is full.
    Full,
    /// The lead cap is reached: wait for the next second.
    LeadCapped,
    /// The time bits are used up.
    Exhausted,
    /// The worker lease's horizon is reached: wait for its extension.
    LeaseCapped,
    /// The state file cannot be written: try again next tick.
    StateCapped,
    /// This node's clock disagrees with the worker table's database's: try again next tick.
    ClockSkewed,
    /// The ring holds enough, and the next second is ahead of the clock (rule 3).
    Enough,
}

impl Shared {
    /// One filler round: sweep stale IDs, then fill the ring up to full, the threshold (for
    /// seconds ahead of the clock), the lead cap, the lease or state horizon, or the end of the
    /// time bits. The rules are numbered in the [module docs](super).
    pub(super) fn pump(&self) -> Round {
        let mut st = lock(&self.filler);
        let now_ms = self.clock.now_millis();
        let now = self.layout.tick_at(now_ms);
        let cursor_seen = self.counters.cursor_seen.load(Ordering::Relaxed);
        if self.ring.cursor() != cursor_seen {
            let second = self.layout.tick_second(now);
            self.counters.demand_second.store(second, Ordering::Relaxed);
        }
        self.heal_if_renewed(&mut st, now);
        let worker_id = self.worker_id.load(Ordering::Relaxed);
        self.sweep_stale(st.tail, now);
        // What was discarded below the tail is counted, not kept as ranges: without this only a
        // stats snapshot folded them, and an idle generator nobody asked for statistics kept
        // one range per second of expired IDs for as long as it ran.
        lock(&self.counters.discards.0).settle(st.tail);
        let cursor_seen = self.ring.cursor();
        self.counters
            .cursor_seen
            .store(cursor_seen, Ordering::Relaxed);
        // After the sweep: per-thread takers see the new second once the stale prefix of the
        // ring is claimed, and judge their own blocks by it.
        self.ring.publish_seen(now);
        // Rule 1 (and the tail of rule 2): never start below the clock.
        if st.next_delta < now {
            if self.layout.unit() != crate::TimeUnit::Seconds {
                // Ticks shorter than a second: the clock's tick replaces the older ticks' unused
                // IDs (expired, as the sweep's are), so that at light load an ID is at most a
                // round old, not up to max_lag (a second). Every ready ID is older: the filler
                // is behind the clock.
                self.discard_ring(st.tail, true);
            }
            st.next_delta = now;
            st.next_seq = 0;
        }
        let cap = self.ring.capacity();
        let k = self.ring.chunk();
        let max_delta = self.layout.max_delta();
        let max_lead = self.max_lead_ticks();
        let max_seq = self.layout.max_sequence();
        // The one chunk whose first taker wakes us when the ring fills up in this round: where the
        // fill level crosses the threshold.
        let full_wake = (self.ring.cursor() + cap - self.threshold).max(st.tail) / k;
        let mut wrote = false;
        // The cursor as last read: only ever behind the real one, so `tail - cursor_read` is an
        // upper bound of the IDs ready. Rule 3 reads the (contended) cursor again only when that
        // bound reaches the threshold: once per round rather than once per tick, which matters
        // at a thousand ticks a second.
        let mut cursor_read = cursor_seen;
        // The wake chunk of the second of ticks being written (ticks shorter than a second).
        let mut group_wake = u64::MAX;
        let outcome = 'round: loop {
            // Only while this node's clock agrees with the worker table's database's (see
            // `worker::db_clock`): else nothing is written, and the ring's ready IDs, made on
            // this clock, are dropped (as a heal drops the old worker id's).
            if let Some(keeper) = &self.keeper
                && keeper.refusal().is_some()
            {
                self.discard_ring(st.tail, false);
                break Round::ClockSkewed;
            }
            if st.next_delta > max_delta {
                // Rule 7: no ID beyond the time bits, ever.
                self.counters.exhausted.store(true, Ordering::Release);
                break Round::Exhausted;
            }
            if st.next_delta > now && st.next_seq == 0 {
                // Rule 3: a second ahead of the clock only while the ring runs low. With ticks
                // shorter than a second, the first tick ahead only while fewer than half a
                // tick's IDs are ready (light load tells the time), further ticks while fewer
                // than half a second's are (the ring keeps a seconds layout's reserve).
                // Beyond the first tick ahead, a second's worth of ticks at a time, as a
                // seconds layout borrows: checked where a second of ticks starts, so that a round
                // leaves the ring as full as a seconds layout's round does (a round stopped at
                // the threshold tick by tick would be woken again at once).
                let first = st.next_delta <= now.saturating_add(1);
                let threshold = if first {
                    self.tick_threshold
                } else if st
                    .next_delta
                    .is_multiple_of(self.layout.unit().per_second())
                {
                    self.threshold
                } else {
                    u64::MAX
                };
                if st.tail.saturating_sub(cursor_read) >= threshold {
                    cursor_read = self.ring.cursor();
                    if st.tail.saturating_sub(cursor_read) >= threshold
                        && !self.next_second_due(st.next_delta, now, now_ms)
                    {
                        break Round::Enough;
                    }
                }
                // Rule 4: never beyond the lead cap (in ticks: 10 s are 10,000 ms ticks).
                if let Some(lead) = max_lead
                    && st.next_delta > now.saturating_add(lead)
                {
                    self.counters
                        .held_next
                        .store(st.next_delta + 1, Ordering::Relaxed);
                    self.counters.lead_capped.store(true, Ordering::Release);
                    break Round::LeadCapped;
                }
            }
            self.counters.lead_capped.store(false, Ordering::Relaxed);
            self.counters.held_next.store(0, Ordering::Relaxed);
            // Rule 5: within the lease and the state file.
            if let Some(keeper) = &self.keeper {
                // The lease reaches whole unix seconds: a tick is within it if its second is.
                let second = self.layout.tick_second(st.next_delta);
                // A lease lost for good (taken over, or a lost write): not one more second.
                if second > keeper.horizon() || keeper.is_taken_over() {
                    self.counters.lease_capped.store(true, Ordering::Release);
                    keeper.request_extension();
                    break Round::LeaseCapped;
                }
                keeper.note_used(second);
            }
            self.counters.lease_capped.store(false, Ordering::Relaxed);
            if !self.reserve(st.next_delta, now) {
                break Round::StateCapped;
            }
            // Each second's own wake-up: where, once it is all written, fewer than the threshold
            // of its IDs are left, so that the next second is borrowed in time (rule 3).
            // The first chunk whose taker sees fewer than the threshold ready (rounded up, so it
            // is below the threshold; within this second's chunks).
            // Ticks shorter than a second borrowed beyond the first wake it once per second of
            // ticks (the ticks up to the next whole second of them), where fewer than the
            // threshold of that second's IDs are left, as a seconds layout's second does.
            let second_end = st.tail + (max_seq + 1 - st.next_seq);
            let second_wake = if st.next_delta <= now.saturating_add(1)
                || self.layout.unit() == crate::TimeUnit::Seconds
            {
                second_end
                    .saturating_sub(self.tick_threshold)
                    .max(st.tail)
                    .div_ceil(k)
                    .min(second_end / k - 1)
            } else {
                let per_second = self.layout.unit().per_second();
                if group_wake == u64::MAX || st.next_delta.is_multiple_of(per_second) {
                    let ticks_left = per_second - st.next_delta % per_second;
                    let group_end = second_end + (ticks_left - 1) * (max_seq + 1);
                    group_wake = group_end
                        .saturating_sub(self.threshold)
                        .max(st.tail)
                        .div_ceil(k)
                        .min(group_end / k - 1);
                }
                group_wake
            };
            while st.next_seq <= max_seq {
                let chunk = st.tail / k;
                let base = self
                    .layout
                    .compose_unchecked(st.next_delta, worker_id, st.next_seq);
                let wake = chunk == full_wake || chunk == second_wake;
                if !self.ring.put(chunk, base, wake) {
                    // Rule 2: keep the rest of this second for the next round.
                    break 'round Round::Full;
                }
                wrote = true;
                st.tail += k;
                st.next_seq += k;
                self.counters
                    .last_delta
                    .store(st.next_delta + 1, Ordering::Relaxed);
            }
            self.ring.publish_tail(st.tail);
            st.next_delta += 1;
            st.next_seq = 0;
        };
        self.ring.publish_tail(st.tail);
        if wrote {
            self.counters.paddings.fetch_add(1, Ordering::Relaxed);
        }
        drop(st);
        // Async takes look again only when there is something new: IDs, or a final answer.
        if wrote || self.failure().is_some() {
            self.notify_async_waiters();
        }
        outcome
    }

    /// Rule 3's one exception, for a layout of seconds: the next second (`next_delta`, the clock's
    /// `now` plus one) is written within a round's interval of its start (`now_ms`, the clock in
    /// milliseconds), behind the current second's IDs, so that the takes at the boundary find
    /// it ready: it is handed out only once the current second's IDs are gone, or stale (at the
    /// boundary, with `max_lag` 1 s). Without it every second began with an empty ring, and the
    /// takes of its first milliseconds waited for this thread to be scheduled (under load, a
    /// wake-up across threads for each of them). Only under a lead cap of 2 s or more (or none):
    /// the second written ahead never brings the newest ID to the cap, which would read as demand
    /// above the rate ([`Stats::at_lead_cap`](crate::Stats::at_lead_cap)).
    fn next_second_due(&self, next_delta: u64, now: u64, now_ms: i64) -> bool {
        let to_next_ms = 1000 - now_ms.rem_euclid(1000);
        let window_ms = (self.tick.as_millis() as i64).saturating_mul(5) / 4;
        self.layout.unit() == crate::TimeUnit::Seconds
            && next_delta == now.saturating_add(1)
            && self.max_lead.is_none_or(|(lead, _)| lead >= 2)
            && to_next_ms <= window_ms
    }

    /// Rule 5: makes sure the state file (if any) records `delta` before an ID of it exists,
    /// raising it a little further than needed so that it is written about once a second.
    /// `false` if it cannot be written: nothing past what it records may be made.
    fn reserve(&self, delta: u64, now: u64) -> bool {
        let Some(reach) = &self.reach else {
            return true;
        };
        // The state file records whole unix seconds: a tick's second.
        let second = self.layout.tick_second(delta);
        if second <= reach.reserved.load(Ordering::Relaxed) {
            return true;
        }
        let now = self.layout.tick_second(now);
        let target = match self.max_lead {
            // Exactly the second about to be used: a restart starts right after the last second
            // used, so crash loops under load cannot climb towards the cap. One write per second
            // used: about once a second, and at most max_lead + 1 in a burst.
            Some(_) => second,
            // Unbounded borrowing runs through seconds fast: double the distance ahead.
            None => second.saturating_add((second - now).max(1)),
        };
        // Under this generator's worker id as of now: a heal switches it under the filler's lock,
        // which every round (and so this call) holds.
        let worker_id = self.worker_id.load(Ordering::Relaxed);
        match reach.file.raise(worker_id, target, now) {
            Ok(recorded) => {
                reach.reserved.store(recorded, Ordering::Relaxed);
                *lock(&reach.error) = None;
                self.counters.state_capped.store(false, Ordering::Release);
                true
            }
            Err(e) => {
                *lock(&reach.error) = Some(e);
                self.counters.state_capped.store(true, Ordering::Release);
                false
            }
        }
    }

    /// Rule 6: claims and drops ready IDs older than `max_lag` (below `tail`, written), counted
    /// as expired. Runs at least every `tick`, which is at most a quarter of `max_lag`, and
    /// whenever a take finds its claim stale (after a pause of the process, before the filler's
    /// next round).
    pub(super) fn sweep_stale(&self, tail: u64, now: u64) {
        // Keep IDs not stale at `now` (`crate::stale`: their second is less than max_lag behind
        // it): until the next sweep (< 1 s away) the clock stays below now + 1, so their lag
        // stays below max_lag.
        let shift = self.layout.time_shift();
        let k = self.ring.chunk();
        loop {
            let c = self.ring.cursor();
            // Stale IDs form a prefix: find where it ends, a chunk at a time.
            let mut end = c;
            while end < tail {
                match self.ring.read(end) {
                    Ok((id, _)) if crate::stale::is_stale(id >> shift, self.max_lag_ticks, now) => {
                        end = (end / k + 1) * k
                    }
                    _ => break,
                }
            }
            let end = end.min(tail);
            if end <= c {
                return;
            }
            self.claim_discarded(c, end - c, true);
        }
    }
}

/// Marks the filler down when its thread ends, even by a panic.
struct FillerUp<'a>(&'a Shared);

impl Drop for FillerUp<'_> {
    fn drop(&mut self) {
        self.0.counters.filler_up.store(false, Ordering::SeqCst);
        self.0.notify_async_waiters();
        if let Some(sink) = &self.0.sink {
            sink.record(&self.0.stats());
        }
    }
}

/// The filler thread: rounds until shutdown, in `span` (the one current when the generator was
/// built). Its end is logged, with the panic's message if it panicked (a [`StatsSink`] of the
/// application's, say), and marked down either way.
///
/// [`StatsSink`]: super::StatsSink
pub(super) fn filler_thread(shared: &Shared, span: &tracing::Span) {
    let _span = span.enter();
    let up = FillerUp(shared);
    let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| filler_loop(shared)));
    watch::filler_ended(shared, ended.as_ref().err().map(|p| &**p));
    drop(up);
}

fn filler_loop(shared: &Shared) {
    let mut watch = Watch::new();
    let mut recorded: Option<std::time::Instant> = None;
    while !shared.counters.shutdown.load(Ordering::Acquire) {
        let round = shared.pump();
        watch.after_round(shared);
        if let Some(sink) = &shared.sink
            && recorded.is_none_or(|t| t.elapsed() >= FILLER_RECORD_INTERVAL)
        {
            sink.record(&shared.stats());
            recorded = Some(std::time::Instant::now());
        }
        let timeout = match round {
            Round::LeadCapped => {
                // Wake when the next tick starts, when the cap moves.
                let unit = shared.layout.unit().millis() as i64;
                let since = shared.clock.now_millis() - shared.layout.epoch_millis();
                let ms = unit - since.rem_euclid(unit);
                Duration::from_millis(ms as u64).min(shared.tick)
            }
            Round::LeaseCapped => Duration::from_millis(10),
            Round::Full
            | Round::Exhausted
            | Round::StateCapped
            | Round::ClockSkewed
            | Round::Enough => shared.tick,
        };
        std::thread::park_timeout(timeout);
    }
}
