//! `DefaultUidGenerator`: one ID at a time under a lock, as UidGenerator's synchronized
//! `DefaultUidGenerator`, with the clock injectable and no wrapped IDs ever.

use crate::boot::{Boot, Limits};
use crate::worker::lease::Keeper;
use crate::{Clock, Error, Layout, SystemClock};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What [`DefaultUidGenerator`] does when the clock moves backwards.
///
/// ```
/// use std::time::Duration;
/// use ringflake::ClockBackwards;
/// assert_ne!(ClockBackwards::Refuse, ClockBackwards::WaitUpTo(Duration::from_secs(1)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockBackwards {
    /// Fail at once with Java's message "Clock moved backwards. Refusing for N seconds".
    Refuse,
    /// Wait for the clock to catch up if it went back by at most this much; refuse otherwise.
    WaitUpTo(Duration),
}

struct State {
    last_delta: u64,
    sequence: u64,
    started: bool,
    /// Seconds below this are not ours to use (an assignment's floor); while the clock is below
    /// it, the generator runs on it, moving it up one second per exhausted sequence.
    floor: u64,
}

/// A generator that makes each ID on demand under a mutex: at most `2^seq_bits` IDs a second.
///
/// # Clock behaviour
///
/// Within a second the sequence counts up; when it wraps the call waits for the next second (as
/// Java busy-spins). A clock that moves backwards is refused or waited out per
/// [`ClockBackwards`]; a second beyond the time bits is [`Error::TimeBitsExhausted`], never a
/// wrapped or negative ID.
///
/// # Java compatibility
///
/// For the same layout, worker id and second it produces the IDs Java's `DefaultUidGenerator`
/// does: sequence 0 at each new second, then 1, 2, ...
///
/// # Examples
///
/// ```
/// use ringflake::{DefaultUidGenerator, Layout, ManualClock};
///
/// let clock = ManualClock::from_seconds(1_800_000_000);
/// let g = DefaultUidGenerator::builder(Layout::default()).worker_id(3).clock(clock.clone()).build()?;
/// let a = g.next_id()?;
/// let b = g.next_id()?;
/// assert_eq!(Layout::default().decompose(b)?.sequence, 1);
/// clock.advance_seconds(-10);
/// assert_eq!(g.next_id().unwrap_err().to_string(), "Clock moved backwards. Refusing for 10 seconds");
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct DefaultUidGenerator {
    layout: Layout,
    worker_id: u64,
    clock: Arc<dyn Clock>,
    backwards: ClockBackwards,
    state: Mutex<State>,
    keeper: Option<Keeper>,
}

impl std::fmt::Debug for DefaultUidGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad("DefaultUidGenerator { .. }")
    }
}

/// Settings for a [`DefaultUidGenerator`]; see [`DefaultUidGenerator::builder`].
///
/// ```
/// use ringflake::{DefaultUidGenerator, Layout};
///
/// let ids = DefaultUidGenerator::builder(Layout::default()).worker_id(3).build()?;
/// let id = ids.next_id()?;
/// assert_eq!(Layout::default().decompose(id)?.worker_id, 3);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct DefaultBuilder {
    layout: Layout,
    assignment: crate::boot::Claim,
    /// Where to take another worker id (see [`WorkerIdAssigner::retaker`]).
    ///
    /// [`WorkerIdAssigner::retaker`]: crate::WorkerIdAssigner::retaker
    retake: Option<Box<dyn crate::WorkerIdAssigner + Send + Sync>>,
    clock: Arc<dyn Clock>,
    backwards: ClockBackwards,
    above: Option<u64>,
}

impl std::fmt::Debug for DefaultBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DefaultBuilder")
            .field("layout", &self.layout)
            .field("assignment", &self.assignment)
            .field("backwards", &self.backwards)
            .field("above", &self.above)
            .finish_non_exhaustive()
    }
}

impl DefaultBuilder {
    crate::boot::start_setters!(DefaultUidGenerator);

    /// What to do when the clock moves backwards (default: refuse, like Java).
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringflake::{ClockBackwards, DefaultUidGenerator, Layout};
    /// let g = DefaultUidGenerator::builder(Layout::default())
    ///     .worker_id(1)
    ///     .on_clock_backwards(ClockBackwards::WaitUpTo(Duration::from_secs(2)))
    ///     .build()?;
    /// assert!(g.next_id()? > 0);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn on_clock_backwards(mut self, policy: ClockBackwards) -> Self {
        self.backwards = policy;
        self
    }

    /// Checks the settings and builds the generator.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerIdOutOfRange`], an assigner's error, or [`Error::TimeBitsExhausted`] if the
    /// layout has expired at the clock's time.
    ///
    /// ```
    /// use ringflake::{DefaultUidGenerator, Layout};
    /// assert!(DefaultUidGenerator::builder(Layout::uid_generator_defaults()).worker_id(1).build().is_err());
    /// ```
    pub fn build(self) -> Result<DefaultUidGenerator, Error> {
        let Boot {
            worker_id,
            floor,
            keeper,
            ..
        } = Boot::start(
            self.assignment,
            self.retake
                .as_deref()
                .map(|r| r as &dyn crate::WorkerIdAssigner),
            &self.layout,
            &self.clock,
            None,
            Limits {
                max_lead: Some(0),
                patience: 0,
            },
            self.above,
        )?;
        if let Some(k) = &keeper {
            // The database as a second clock, as for the cached generator (which has a max_lag
            // of its own; this one warns beyond the default).
            k.watch_database_clock(crate::DEFAULT_MAX_LAG, Some(0));
        }
        Ok(DefaultUidGenerator {
            keeper,
            layout: self.layout,
            worker_id,
            clock: self.clock,
            backwards: self.backwards,
            state: Mutex::new(State {
                last_delta: 0,
                sequence: 0,
                started: false,
                floor,
            }),
        })
    }
}

impl DefaultUidGenerator {
    /// Starts configuring a generator for `layout` (system clock, refuse backwards clocks).
    ///
    /// ```
    /// use ringflake::{DefaultUidGenerator, Layout};
    /// assert!(DefaultUidGenerator::builder(Layout::default()).worker_id(1).build().is_ok());
    /// ```
    pub fn builder(layout: Layout) -> DefaultBuilder {
        DefaultBuilder {
            layout,
            retake: None,
            assignment: crate::boot::Claim::none(),
            clock: Arc::new(SystemClock),
            backwards: ClockBackwards::Refuse,
            above: None,
        }
    }

    /// This generator's worker id.
    ///
    /// ```
    /// use ringflake::{DefaultUidGenerator, Layout};
    /// assert_eq!(DefaultUidGenerator::builder(Layout::default()).worker_id(8).build()?.worker_id(), 8);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn worker_id(&self) -> u64 {
        self.worker_id
    }

    /// The clock as ticks since the epoch (seconds for a seconds layout), negative before it.
    fn now_delta(&self) -> i64 {
        let unit = self.layout.unit().millis() as i64;
        self.clock
            .now_millis()
            .saturating_sub(self.layout.epoch_millis())
            .div_euclid(unit)
    }

    /// Makes the next ID.
    ///
    /// # Errors
    ///
    /// [`Error::ClockMovedBackwards`] (policy [`ClockBackwards::Refuse`], or a jump beyond the
    /// wait bound), [`Error::TimeBitsExhausted`] when the clock is past the layout's last second.
    ///
    /// ```
    /// use ringflake::{DefaultUidGenerator, Layout, ManualClock};
    /// let clock = ManualClock::from_seconds(1_800_000_000);
    /// let g = DefaultUidGenerator::builder(Layout::default()).worker_id(1).clock(clock.clone()).build()?;
    /// clock.set_millis((Layout::default().last_valid_second() + 1) * 1000);
    /// assert!(g.next_id().unwrap_err().to_string().contains("time bits exhausted"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn next_id(&self) -> Result<u64, Error> {
        let mut st = crate::lock::lock(&self.state);
        let mut now = self.now_delta().max(st.floor as i64);
        if st.started && now < st.last_delta as i64 {
            let behind = (st.last_delta as i64 - now) as u64;
            match self.backwards {
                ClockBackwards::WaitUpTo(bound)
                    if u128::from(behind)
                        <= bound.as_millis() / u128::from(self.layout.unit().millis()) =>
                {
                    now = self.wait_until(st.last_delta as i64);
                }
                _ => {
                    return Err(Error::ClockMovedBackwards {
                        seconds: behind.div_ceil(self.layout.unit().per_second()),
                    });
                }
            }
        }
        let now = now.max(0) as u64;
        if now > self.layout.max_delta() {
            return Err(self.layout.exhausted(now));
        }
        if st.started && now == st.last_delta {
            st.sequence = (st.sequence + 1) & self.layout.max_sequence();
            if st.sequence == 0 {
                let next = if st.floor > now {
                    now + 1 // running on the floor: use the next second of it
                } else {
                    self.wait_until(now as i64 + 1).max(st.floor as i64) as u64
                };
                st.floor = st.floor.max(next);
                if next > self.layout.max_delta() {
                    return Err(self.layout.exhausted(next));
                }
                st.last_delta = next;
            }
        } else {
            st.sequence = 0;
            st.last_delta = now;
        }
        st.started = true;
        if let Some(k) = &self.keeper {
            if let Some(refused) = k.refusal() {
                return Err(refused);
            }
            let second = self.layout.tick_second(st.last_delta);
            k.note_used(second);
            let mut waited = 0;
            while second > k.horizon() {
                if k.is_lost() || waited >= 5000 {
                    return Err(k.expired());
                }
                k.request_extension();
                std::thread::sleep(Duration::from_millis(1));
                waited += 1;
            }
        }
        Ok(self
            .layout
            .compose_unchecked(st.last_delta, self.worker_id, st.sequence))
    }

    /// Waits until the clock reaches delta `target` and returns the delta then.
    fn wait_until(&self, target: i64) -> i64 {
        loop {
            let now = self.now_delta();
            if now >= target {
                return now;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}
