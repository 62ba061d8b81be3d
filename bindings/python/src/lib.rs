//! The native side of ringflake's Python package (`bindings/python`): a `CachedUidGenerator`
//! inside CPython, as the module `ringflake._ringflake`, which the package `ringflake`
//! re-exports and dresses (`python/ringflake/__init__.py`: the context manager, the parsed ID as
//! a `datetime`, the layout and stats as named tuples).
//!
//! As the JNI side (`bindings/java/native`) does, this layer only converts and calls the
//! library, which holds every rule; every entry catches panics (none reaches Python) and turns
//! the library's typed errors into exceptions under `ringflake.Error` ([`errors`]).
//!
//! A take ([`Generator::next_id`]) comes from the calling thread's own block of IDs ([`takers`]:
//! the library's `LocalTaker`, no lock, no allocation, no system call, no log line per ID) and
//! holds the GIL only while that block has IDs ready; claiming a new block (which may wait for the
//! filler, or for the clock at the lead cap) runs with the GIL released (`py.detach`), and so does
//! all of [`Generator::next_ids`]. After `fork()` the child never hands out its parent's IDs
//! ([`fork`]): a generator whose worker id came from a table takes a new worker id from the table
//! at the child's first take; one with a fixed worker id raises `ForkError`.
#![deny(missing_docs)]

pub mod errors;
pub mod fork;
pub mod settings;
mod takers;

use arc_swap::ArcSwapOption;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use ringflake::{CachedUidGenerator, FieldOrder, Layout, TimeUnit, TimeZone};
use settings::{Epoch, LayoutArgs, Source, Spec};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The most IDs one `next_ids` call hands out (80 MB of IDs, about 400 MB as Python ints): a
/// larger count is refused with its limit rather than left to the allocator.
const MAX_IDS: usize = 10_000_000;

/// How long `close()` waits for takes under way to return the generator before it leaves the
/// release to the last of them.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Runs `f`, turning a panic into `ringflake.Error` (kind `Panic`).
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(errors::panic(&*p)))
}

/// Numbers the Python generators, for the threads' takers ([`takers`]).
static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

/// A generator built in this process (fork generation [`fork::generation`] at its build).
struct Live {
    generator: CachedUidGenerator,
    /// The fork generation it was built in; another one means this process is a forked child
    /// holding a copy of its parent's generator.
    generation: u64,
    /// Set when its Python object is closed or dropped: threads' takers of it are dropped at
    /// their thread's next slow-path take ([`takers::with`]), so that it does not live on.
    retired: AtomicBool,
}

impl Live {
    fn build(spec: &Spec) -> PyResult<Live> {
        Ok(Live {
            generator: spec.build().map_err(errors::from_lib)?,
            generation: fork::generation(),
            retired: AtomicBool::new(false),
        })
    }

    /// Whether it was built in this process (not inherited through `fork()`).
    #[inline]
    fn is_ours(&self) -> bool {
        self.generation == fork::generation()
    }
}

/// Lets go of a generator inherited through `fork()` without dropping it: its filler thread does
/// not exist in this process and its worker lease is the parent's, so dropping it would join a
/// thread that is not there and give back the parent's lease. Its memory stays (a ring's worth,
/// once per fork).
fn abandon(inherited: Arc<Live>) {
    std::mem::forget(inherited);
}

/// A source of unique, time-ordered 64-bit IDs: the ring of Baidu UidGenerator's
/// CachedUidGenerator, filled ahead of demand by a background thread, with a worker id from a
/// table (SQLite, MariaDB/MySQL, PostgreSQL) or given.
///
/// Generator() with no argument is `ringflake serve`'s default: worker ids from the SQLite file
/// ringflake.db in the working directory, the state file ringflake.state beside it.
/// Keywords: database (a SQLite path, sqlite:PATH, mysql://... or postgres://... URL) or
/// worker_id (fixed); the layout as preset (\"twitter\", \"sonyflake\", ...) or bits=(time,
/// worker, sequence), epoch (unix seconds or \"yyyy-MM-dd\", UTC) and tick (\"s\", \"10ms\",
/// \"ms\"); state_file (a path, True for the default, False for none); max_lead (seconds IDs may
/// run ahead of the clock, default 10) and lead_policy (\"wait\" or \"fail\" at the cap);
/// create_table (create WORKER_NODE on a server); recycle (reuse stopped processes' worker ids).
///
/// After os.fork(), a generator whose worker id came from a table takes a new worker id from the
/// table at the child's first take; one with a fixed worker_id raises ForkError in the child.
#[pyclass(subclass, frozen, module = "ringflake._ringflake", name = "Generator")]
pub struct Generator {
    /// This object's number: which of a thread's takers are its ([`takers`]).
    owner: u64,
    spec: Spec,
    /// The generator; `None` once closed. Swapped, never locked: a take loads it.
    live: ArcSwapOption<Live>,
    closed: AtomicBool,
    /// Held while a forked child builds its own generator (slow path only).
    rebuild: Mutex<()>,
}

impl Drop for Generator {
    fn drop(&mut self) {
        let Some(live) = self.live.swap(None) else {
            return;
        };
        if live.is_ours() {
            live.retired.store(true, Ordering::Release);
            takers::forget(self.owner);
        } else {
            abandon(live);
        }
    }
}

impl Generator {
    /// The generator to take from in this process, built anew if this is a forked child and the
    /// source is a table.
    fn current(&self, py: Python<'_>) -> PyResult<Arc<Live>> {
        if self.closed.load(Ordering::Acquire) {
            takers::forget(self.owner);
            return Err(errors::closed());
        }
        match self.live.load_full() {
            Some(live) if live.is_ours() => Ok(live),
            Some(inherited) => self.after_fork(py, inherited),
            None => Err(errors::closed()),
        }
    }

    /// A forked child's first take: a generator of its own from the table, or `ForkError`.
    fn after_fork(&self, py: Python<'_>, inherited: Arc<Live>) -> PyResult<Arc<Live>> {
        if !self.spec.source.from_table() {
            return Err(errors::forked(inherited.generator.worker_id()));
        }
        drop(inherited);
        py.detach(|| {
            let _one = self.rebuild.lock().unwrap_or_else(PoisonError::into_inner);
            // Another thread of the child may have built it while this one waited.
            if let Some(live) = self.live.load_full()
                && live.is_ours()
            {
                return Ok(live);
            }
            if self.closed.load(Ordering::Acquire) {
                return Err(errors::closed());
            }
            let fresh = Arc::new(Live::build(&self.spec)?);
            if let Some(inherited) = self.live.swap(Some(Arc::clone(&fresh))) {
                abandon(inherited);
            }
            Ok(fresh)
        })
    }

    /// `next_ids`' work, the GIL released: `n` IDs from this thread's taker, strictly
    /// increasing and above every ID the thread took before.
    fn take_many(&self, live: &Arc<Live>, n: usize) -> Result<Vec<u64>, ringflake::Error> {
        takers::with(self.owner, live, |t| {
            let mut ids = Vec::with_capacity(n);
            for _ in 0..n {
                ids.push(t.next_id()?);
            }
            Ok(ids)
        })
    }
}

#[pymethods]
impl Generator {
    #[new]
    #[pyo3(signature = (*, database = None, worker_id = None, preset = None, bits = None,
        epoch = None, tick = None, state_file = None, max_lead = None, lead_policy = "wait",
        create_table = false, recycle = true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        database: Option<PathOrUrl>,
        worker_id: Option<i64>,
        preset: Option<String>,
        bits: Option<(i64, i64, i64)>,
        epoch: Option<Epoch>,
        tick: Option<String>,
        state_file: Option<StateFile>,
        max_lead: Option<i64>,
        lead_policy: &str,
        create_table: bool,
        recycle: bool,
    ) -> PyResult<Generator> {
        guarded(|| {
            let width = |x: i64| {
                u32::try_from(x)
                    .map_err(|_| errors::invalid("bits", x, "widths of 1 to 63 bits each"))
            };
            let bits = match bits {
                Some((t, w, s)) => Some((width(t)?, width(w)?, width(s)?)),
                None => None,
            };
            let layout = LayoutArgs {
                preset,
                bits,
                epoch,
                tick,
            }
            .layout()?;
            let source = match (database, worker_id) {
                (Some(_), Some(id)) => {
                    return Err(errors::invalid(
                        "worker_id",
                        id,
                        "either database or worker_id, not both",
                    ));
                }
                (Some(db), None) => Source::database(&db.0)?,
                (None, Some(id)) => Source::Fixed(u64::try_from(id).map_err(|_| {
                    errors::invalid("worker_id", id, "0 or more (a fixed worker id)")
                })?),
                (None, None) => settings::default_source(),
            };
            let state_file = match state_file {
                None | Some(StateFile::Default(true)) => {
                    Some(settings::default_state_file(&source))
                }
                Some(StateFile::Default(false)) => None,
                Some(StateFile::Path(p)) => Some(p),
            };
            let max_lead = match max_lead {
                Some(s) if s < 0 => {
                    return Err(errors::invalid("max_lead", s, "0 or more seconds"));
                }
                other => other.map(|s| s as u64),
            };
            let spec = Spec {
                layout,
                source,
                state_file,
                max_lead: settings::lead(max_lead, lead_policy)?,
                create_table,
                recycle,
            };
            // Claiming a worker id may wait for a database: without the GIL.
            let live = py.detach(|| Live::build(&spec))?;
            Ok(Generator {
                owner: NEXT_OWNER.fetch_add(1, Ordering::Relaxed),
                spec,
                live: ArcSwapOption::new(Some(Arc::new(live))),
                closed: AtomicBool::new(false),
                rebuild: Mutex::new(()),
            })
        })
    }

    /// Takes the next ID: an int, unique, above every ID this thread took before.
    ///
    /// Holds the GIL only while an ID is ready (no lock, no allocation, no system call); waits
    /// for the filler without it. Raises ClosedError after close(), ForkError in a forked child
    /// of a generator with a fixed worker id.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        guarded(|| {
            if !self.closed.load(Ordering::Relaxed)
                && let Some(id) = takers::ready(self.owner)
            {
                return Ok(id);
            }
            let live = self.current(py)?;
            let owner = self.owner;
            py.detach(|| takers::with(owner, &live, |t| t.next_id()))
                .map_err(errors::from_lib)
        })
    }

    /// Takes n IDs at once (0 to 10,000,000): a list of ints, strictly increasing, with the GIL
    /// released while they are taken.
    fn next_ids<'py>(&self, py: Python<'py>, n: i64) -> PyResult<Bound<'py, PyList>> {
        guarded(|| {
            let n = usize::try_from(n)
                .ok()
                .filter(|&n| n <= MAX_IDS)
                .ok_or_else(|| errors::invalid("n", n, "0 to 10,000,000 IDs per call"))?;
            let live = self.current(py)?;
            let ids = py
                .detach(|| self.take_many(&live, n))
                .map_err(errors::from_lib)?;
            PyList::new(py, ids)
        })
    }

    /// The worker id this generator serves with now (a new one after it healed, or in a forked
    /// child after its first take).
    #[getter]
    fn worker_id(&self, py: Python<'_>) -> PyResult<u64> {
        guarded(|| Ok(self.current(py)?.generator.worker_id()))
    }

    /// Whether close() was called.
    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The layout as (time_bits, worker_bits, seq_bits, epoch_millis, tick_millis,
    /// sequence_above_worker, preset_name, max_worker_id, last_valid_second).
    fn _layout(&self) -> LayoutTuple {
        layout_tuple(&self.spec.layout)
    }

    /// The generator's counters and health as a dict (the fields `/healthz` and
    /// `/metrics` report).
    fn _stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let live = self.current(py)?;
            let s = live.generator.stats();
            let d = PyDict::new(py);
            d.set_item("health", s.health(live.generator.layout()).state())?;
            d.set_item("worker_id", s.worker_id)?;
            d.set_item("capacity", s.capacity)?;
            d.set_item("available", s.available)?;
            d.set_item("issued", s.issued)?;
            d.set_item("discarded", s.discarded)?;
            d.set_item("expired", s.expired)?;
            d.set_item("paddings", s.paddings)?;
            d.set_item("take_waits", s.take_waits)?;
            d.set_item("lead_seconds", s.lead_seconds)?;
            d.set_item("lag_seconds", s.lag_seconds)?;
            d.set_item("remaining_seconds", s.remaining_seconds)?;
            d.set_item("heals", s.heals)?;
            d.set_item("filler_up", s.filler_up)?;
            d.set_item("lease_until", s.lease_until)?;
            d.set_item("lease_lost", s.lease_lost)?;
            d.set_item("clock_second", s.clock_second)?;
            d.set_item("max_lag_seconds", s.max_lag_seconds)?;
            d.set_item("max_lead_seconds", s.max_lead_seconds)?;
            d.set_item("state_file_failing", s.state_file_failing)?;
            Ok(d)
        })
    }

    /// Stops the filler and gives the worker id's lease back to the table. Takes under way
    /// finish first (waited for up to 2 s); later ones raise ClosedError. Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        guarded(|| {
            self.closed.store(true, Ordering::Release);
            takers::forget(self.owner);
            let Some(live) = self.live.swap(None) else {
                return Ok(());
            };
            if !live.is_ours() {
                abandon(live);
                return Ok(());
            }
            live.retired.store(true, Ordering::Release);
            py.detach(|| {
                let start = Instant::now();
                let mut live = live;
                loop {
                    match Arc::try_unwrap(live) {
                        Ok(l) => return l.generator.close(),
                        // Takes under way hold it; the last of them drops it (which stops the
                        // filler and releases the lease too, logging a failure).
                        Err(shared) if start.elapsed() >= CLOSE_WAIT => {
                            drop(shared);
                            return Ok(());
                        }
                        Err(shared) => {
                            live = shared;
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                }
            })
            .map_err(errors::from_lib)
        })
    }

    fn __repr__(&self) -> String {
        let worker = match self.live.load().as_ref() {
            Some(l) if l.is_ours() => l.generator.worker_id().to_string(),
            Some(_) => "? (forked)".into(),
            None => "closed".into(),
        };
        let source = match &self.spec.source {
            Source::Fixed(_) => "fixed".to_string(),
            Source::Sqlite(p) => format!("sqlite:{}", p.display()),
            // Never the URL: it may hold a password.
            Source::Mysql(_) => "mysql".into(),
            Source::Postgres(_) => "postgres".into(),
        };
        format!("<ringflake.Generator worker_id={worker} source={source}>")
    }
}

/// `database=`: a str or an `os.PathLike`.
struct PathOrUrl(String);

impl<'py> FromPyObject<'_, 'py> for PathOrUrl {
    type Error = PyErr;
    fn extract(ob: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(s) = ob.extract::<String>() {
            return Ok(PathOrUrl(s));
        }
        let p: PathBuf = ob.extract().map_err(|_| {
            errors::invalid(
                "database",
                ob.repr().map_or_else(|_| "?".into(), |r| r.to_string()),
                "a str or os.PathLike",
            )
        })?;
        Ok(PathOrUrl(p.to_string_lossy().into_owned()))
    }
}

impl<'py> FromPyObject<'_, 'py> for Epoch {
    type Error = PyErr;
    fn extract(ob: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(s) = ob.extract::<i64>() {
            return Ok(Epoch::Seconds(s));
        }
        if let Ok(d) = ob.extract::<String>() {
            return Ok(Epoch::Date(d));
        }
        Err(errors::invalid(
            "epoch",
            ob.repr().map_or_else(|_| "?".into(), |r| r.to_string()),
            "unix seconds (int) or a date \"yyyy-MM-dd\" (UTC)",
        ))
    }
}

/// `state_file=`: a path, or `True` (the default file) / `False` (none).
enum StateFile {
    Default(bool),
    Path(PathBuf),
}

impl<'py> FromPyObject<'_, 'py> for StateFile {
    type Error = PyErr;
    fn extract(ob: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(b) = ob.cast::<pyo3::types::PyBool>() {
            return Ok(StateFile::Default(b.is_true()));
        }
        ob.extract::<PathBuf>().map(StateFile::Path).map_err(|_| {
            errors::invalid(
                "state_file",
                ob.repr().map_or_else(|_| "?".into(), |r| r.to_string()),
                "a path, True (ringflake.state beside the database) or False (none)",
            )
        })
    }
}

/// A layout as Python gets it: (time_bits, worker_bits, seq_bits, epoch_millis, tick_millis,
/// sequence_above_worker, preset_name, max_worker_id, last_valid_second).
type LayoutTuple = (
    u32,
    u32,
    u32,
    i64,
    u64,
    bool,
    Option<&'static str>,
    u64,
    i64,
);

fn layout_tuple(l: &Layout) -> LayoutTuple {
    (
        l.time_bits(),
        l.worker_bits(),
        l.seq_bits(),
        l.epoch_millis(),
        l.unit().millis(),
        l.order() == FieldOrder::SequenceAboveWorker,
        l.preset_name(),
        l.max_worker_id(),
        l.last_valid_second(),
    )
}

/// The layout of a [`LayoutTuple`]'s first six values.
fn layout_of(t: (u32, u32, u32, i64, u64, bool)) -> PyResult<Layout> {
    let unit = match t.4 {
        1000 => TimeUnit::Seconds,
        10 => TimeUnit::TenMillis,
        1 => TimeUnit::Millis,
        other => return Err(errors::invalid("tick_millis", other, "1000, 10 or 1")),
    };
    let order = if t.5 {
        FieldOrder::SequenceAboveWorker
    } else {
        FieldOrder::WorkerAboveSequence
    };
    Layout::with_unit(t.0, t.1, t.2, t.3, unit, order).map_err(errors::from_lib)
}

/// The layout the keywords describe, as a layout tuple (for `ringflake.layout(...)` and
/// `ringflake.parse(...)`).
#[pyfunction]
#[pyo3(signature = (*, preset = None, bits = None, epoch = None, tick = None))]
fn _layout(
    preset: Option<String>,
    bits: Option<(u32, u32, u32)>,
    epoch: Option<Epoch>,
    tick: Option<String>,
) -> PyResult<LayoutTuple> {
    guarded(|| {
        let l = LayoutArgs {
            preset,
            bits,
            epoch,
            tick,
        }
        .layout()?;
        Ok(layout_tuple(&l))
    })
}

/// `id` as the library takes it: 0 to 2^63 - 1.
fn checked_id(id: i128) -> PyResult<u64> {
    u64::try_from(id)
        .ok()
        .filter(|&i| i <= i64::MAX as u64)
        .ok_or_else(|| errors::invalid("id", id, "0 to 2^63 - 1 (a positive 64-bit ID)"))
}

/// Parses `id` under a layout tuple's first six values: (id, unix_millis, worker_id, sequence).
#[pyfunction]
fn _parse(layout: (u32, u32, u32, i64, u64, bool), id: i128) -> PyResult<(u64, i64, u64, u64)> {
    guarded(|| {
        let l = layout_of(layout)?;
        let p = l.parse(checked_id(id)?).map_err(errors::from_lib)?;
        Ok((p.id, p.unix_millis, p.worker_id, p.sequence))
    })
}

/// UidGenerator's `parseUID` JSON string for `id`, the timestamp in `tz` (an IANA name; the
/// process's local zone, as Java's, when `None`).
#[pyfunction]
#[pyo3(signature = (layout, id, tz = None))]
fn _parse_uid(
    layout: (u32, u32, u32, i64, u64, bool),
    id: i128,
    tz: Option<String>,
) -> PyResult<String> {
    guarded(|| {
        let l = layout_of(layout)?;
        let p = l.parse(checked_id(id)?).map_err(errors::from_lib)?;
        let zone = match tz {
            Some(name) => TimeZone::get(&name)
                .map_err(|e| errors::invalid("tz", format!("{name:?}"), &e.to_string()))?,
            None => ringflake::system_time_zone().map_err(errors::from_lib)?,
        };
        p.to_java_string_in(&zone).map_err(errors::from_lib)
    })
}

/// The module `ringflake._ringflake`.
#[pymodule(gil_used = true)]
fn _ringflake(m: &Bound<'_, PyModule>) -> PyResult<()> {
    fork::register().map_err(|rc| {
        pyo3::exceptions::PyOSError::new_err(format!("pthread_atfork failed: errno {rc}"))
    })?;
    errors::register(m)?;
    m.add_class::<Generator>()?;
    m.add_function(wrap_pyfunction!(_layout, m)?)?;
    m.add_function(wrap_pyfunction!(_parse, m)?)?;
    m.add_function(wrap_pyfunction!(_parse_uid, m)?)?;
    m.add("PRESET_NAMES", ringflake::PRESET_NAMES.to_vec())?;
    m.add("DEFAULT_STATE_FILE", settings::DEFAULT_STATE_FILE)?;
    m.add("DEFAULT_DATABASE", ringflake::DEFAULT_SQLITE_PATH)?;
    Ok(())
}
