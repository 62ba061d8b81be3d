//! The JNI side of ringflake's Java library (`bindings/java`): a `CachedUidGenerator` inside the
//! JVM.
//!
//! The Java class `io.github.ringflake.Native` declares the entries below; the jar carries this
//! crate's `cdylib` and loads it itself (`NativeLoader`). The Java side keeps a per-thread buffer
//! of IDs and calls [`fill`](Java_io_github_ringflake_Native_fill) once per block (up to 1,024
//! IDs, one atomic claim on the ring per chunk), so the per-ID path in Java is an array read, an
//! index compare and a volatile read: no JNI call, no lock, no allocation.
//!
//! Every entry runs inside [`entry`]: a panic is caught and a crate error is thrown as a
//! `RingflakeException` naming its cause, so nothing here can crash the JVM.
//!
//! Generators live in a registry of this copy of the library, addressed by a handle (index + 1,
//! never reused, so a handle of a closed generator never reaches another one). One generator per
//! worker id per process, across copies of this library: [`guard`].
#![deny(missing_docs)]

pub mod failure;
pub mod guard;
pub mod settings;

use failure::Failure;
use guard::WorkerGuard;
use jni::JNIEnv;
use jni::objects::{JClass, JLongArray, JObjectArray, JString};
use jni::sys::{jint, jlong, jlongArray, jstring};
use ringflake::{
    CachedUidGenerator, DatabaseAssigner, FieldOrder, Layout, TimeUnit, ZooKeeperAssigner,
};
use settings::{Settings, Source};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

/// The largest block one [`fill`](Java_io_github_ringflake_Native_fill) takes from the ring per
/// call of `next_ids` (the crate's chunk).
pub const CHUNK: usize = 1024;

/// A live generator and the guard on its worker id: the worker id the guard holds, and the guard.
/// A generator that heals onto a new worker id (its lease lost for good) moves the guard to it
/// ([`Live::follow`]).
struct Live {
    generator: CachedUidGenerator,
    /// The worker id the guard holds (read without the lock).
    held: AtomicU64,
    guard: Mutex<WorkerGuard>,
}

impl Live {
    /// Moves the process guard to the generator's worker id if a heal changed it: the new id is
    /// taken before the old one is let go. Called after each take from the ring (so an ID of the
    /// new worker id reaches Java only once the guard holds that id) and by the entries that
    /// report the worker id; one atomic load when nothing changed.
    ///
    /// # Errors
    ///
    /// `WorkerAssignment` if another generator of this process holds the new worker id: the
    /// IDs just taken are not handed out, and every later take fails the same way, since two
    /// generators with one worker id would hand out the same IDs.
    fn follow(&self) -> Result<u64, Failure> {
        let now = self.generator.worker_id();
        if self.held.load(Ordering::Acquire) == now {
            return Ok(now);
        }
        let mut guard = self.guard.lock().unwrap_or_else(PoisonError::into_inner);
        if self.held.load(Ordering::Acquire) != now {
            *guard = WorkerGuard::take(now).map_err(|f| Failure {
                kind: f.kind,
                message: format!("after a heal onto worker id {now}: {}", f.message),
            })?;
            self.held.store(now, Ordering::Release);
        }
        Ok(now)
    }
}

/// One registry slot: the generator until `close`, then nothing. Takes share the read lock (once
/// per block, never per ID); `close` takes the write lock, so it waits for the takes under way.
struct Slot {
    live: RwLock<Option<Live>>,
    layout: Layout,
    worker_id: u64,
    /// IDs per `next_ids` call: [`CHUNK`], or less if the lead cap holds less.
    chunk: usize,
}

/// The generators of this copy of the library; a slot's index + 1 is its handle.
static REGISTRY: RwLock<Vec<Arc<Slot>>> = RwLock::new(Vec::new());

/// Runs a JNI entry: its failure (or panic) is thrown into Java and `on_error` returned.
fn entry<T>(env: &mut JNIEnv, on_error: T, f: impl FnOnce(&mut JNIEnv) -> Result<T, Failure>) -> T {
    match catch_unwind(AssertUnwindSafe(|| f(env))) {
        Ok(Ok(v)) => v,
        Ok(Err(failure)) => {
            failure.throw(env);
            on_error
        }
        Err(payload) => {
            Failure::panic(&*payload).throw(env);
            on_error
        }
    }
}

/// The slot of `handle`.
fn slot(handle: jlong) -> Result<Arc<Slot>, Failure> {
    let registry = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    usize::try_from(handle)
        .ok()
        .and_then(|h| h.checked_sub(1))
        .and_then(|i| registry.get(i))
        .cloned()
        .ok_or_else(|| Failure::config(format!("no generator has handle {handle}")))
}

/// Runs `f` on the live generator of `handle`, under its slot's read lock (so a `close` waits for
/// it); a `Closed` failure once the generator is closed.
fn with_live<T>(
    handle: jlong,
    f: impl FnOnce(&Live, &Slot) -> Result<T, Failure>,
) -> Result<T, Failure> {
    let slot = slot(handle)?;
    let live = slot.live.read().unwrap_or_else(PoisonError::into_inner);
    f(live.as_ref().ok_or_else(Failure::closed)?, &slot)
}

/// Builds the generator the settings describe. Nothing is claimed when a setting is refused;
/// a worker id claimed from a source and then refused by the process guard is released.
fn build(s: Settings) -> Result<Live, Failure> {
    let layout = s.layout;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    // An expired layout is refused before any source is asked for a worker id.
    layout.check_alive_at(now)?;
    let mut b = CachedUidGenerator::builder(layout);
    if let Some(p) = s.boost_power {
        b = b.boost_power(p);
    }
    if let Some(p) = s.padding_factor {
        b = b.padding_factor(p);
    }
    match s.max_lead {
        Some(Some((lead, policy))) => b = b.max_lead(lead, policy),
        Some(None) => b = b.unbounded_lead(),
        None => {}
    }
    if let Some(path) = &s.state_file {
        b = b.state_file(path);
    }
    if let Some(above) = s.above {
        b = b.above(above);
    }
    let window = |a: DatabaseAssigner| match s.lease_window {
        Some(w) => a.lease_window(w),
        None => a,
    };
    let server = |a: DatabaseAssigner| {
        let a = window(a).create_table(s.create_table);
        match &s.ca_file {
            Some(ca) => a.ca_file(ca),
            None => a,
        }
    };
    let (guard, b) = match &s.source {
        Source::Fixed(id) => {
            if *id > layout.max_worker_id() {
                return Err(ringflake::Error::WorkerIdOutOfRange {
                    worker_id: *id,
                    max: layout.max_worker_id(),
                }
                .into());
            }
            (Some(WorkerGuard::take(*id)?), b.worker_id(*id))
        }
        Source::Sqlite(path) => (
            None,
            b.worker_id_from(&window(DatabaseAssigner::sqlite(path)?).create_table(true)),
        ),
        Source::Mysql(url) => (
            None,
            b.worker_id_from(&server(DatabaseAssigner::mysql(url)?)),
        ),
        Source::Postgres(url) => (
            None,
            b.worker_id_from(&server(DatabaseAssigner::postgres(url)?)),
        ),
        Source::ZooKeeper {
            ensemble,
            name,
            port,
        } => {
            let mut a = ZooKeeperAssigner::new(ensemble, name)?;
            if let Some(p) = port {
                a = a.port(*p);
            }
            (None, b.worker_id_from(&a))
        }
    };
    let generator = b.build()?;
    let guard = match guard {
        Some(g) => g,
        None => match WorkerGuard::take(generator.worker_id()) {
            Ok(g) => g,
            Err(e) => {
                // Give the claimed worker id back before refusing.
                let _ = generator.close();
                return Err(e);
            }
        },
    };
    let worker_id = generator.worker_id();
    Ok(Live {
        generator,
        held: AtomicU64::new(worker_id),
        guard: Mutex::new(guard),
    })
}

/// Reads a Java `String[]` of `key, value, key, value, …`.
fn pairs(env: &mut JNIEnv, array: &JObjectArray) -> Result<Vec<(String, String)>, Failure> {
    let n = env.get_array_length(array)?;
    if n % 2 != 0 {
        return Err(Failure::config(format!(
            "{n} settings strings: expected key, value pairs"
        )));
    }
    let mut text = Vec::with_capacity(n as usize);
    for i in 0..n {
        let s = JString::from(env.get_object_array_element(array, i)?);
        if s.is_null() {
            return Err(Failure::config(format!("settings string {i} is null")));
        }
        text.push(String::from(env.get_string(&s)?));
        env.delete_local_ref(s)?;
    }
    Ok(text
        .chunks(2)
        .map(|kv| (kv[0].clone(), kv[1].clone()))
        .collect())
}

/// `Native.open(String[] settings)`: builds a generator, returns its handle.
#[unsafe(no_mangle)] // SAFETY: the JVM finds the entry by this exact name; no other symbol has it.
pub extern "system" fn Java_io_github_ringflake_Native_open<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    settings: JObjectArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let settings = Settings::parse(&pairs(env, &settings)?)?;
        let layout = settings.layout;
        let live = build(settings)?;
        let chunk = live
            .generator
            .max_batch()
            .map_or(CHUNK, |m| (m as usize).min(CHUNK));
        let worker_id = live.generator.worker_id();
        let mut registry = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
        registry.push(Arc::new(Slot {
            live: RwLock::new(Some(live)),
            layout,
            worker_id,
            chunk,
        }));
        Ok(registry.len() as jlong)
    })
}

/// `Native.fill(long handle, long[] out, int offset, int length)`: writes `length` new IDs,
/// strictly increasing, into `out[offset..offset + length]`, and returns the worker id the
/// generator holds after the last of them was taken (the Java side compares it with the one it
/// knows, and on a heal drops every thread's buffered IDs).
#[unsafe(no_mangle)] // SAFETY: the JVM finds the entry by this exact name; no other symbol has it.
pub extern "system" fn Java_io_github_ringflake_Native_fill<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    out: JLongArray<'l>,
    offset: jint,
    length: jint,
) -> jlong {
    entry(&mut env, -1, |env| {
        with_live(handle, |live, slot| {
            fill(env, live, slot.chunk, &out, offset, length)
        })
    })
}

/// [`Java_io_github_ringflake_Native_fill`]'s work: `next_ids` a chunk at a time into a stack
/// buffer, copied into the Java array; returns the worker id [`Live::follow`] last reported.
fn fill(
    env: &mut JNIEnv,
    live: &Live,
    chunk: usize,
    out: &JLongArray,
    offset: jint,
    length: jint,
) -> Result<jlong, Failure> {
    let (Ok(offset), Ok(length)) = (usize::try_from(offset), usize::try_from(length)) else {
        return Err(Failure::config(format!(
            "offset {offset} and length {length}: expected both 0 or more"
        )));
    };
    let mut ids = [0u64; CHUNK];
    let mut java = [0i64; CHUNK];
    let mut done = 0;
    let mut worker = live.held.load(Ordering::Acquire);
    while done < length {
        let n = (length - done).min(chunk);
        live.generator.next_ids(&mut ids[..n])?;
        worker = live.follow()?;
        for (j, id) in java.iter_mut().zip(&ids[..n]) {
            // IDs are below 2^63: the same value as a Java long.
            *j = *id as i64;
        }
        env.set_long_array_region(out, (offset + done) as jint, &java[..n])?;
        done += n;
    }
    // Worker ids fit the layout's worker bits (at most 2^63 - 1 as a Java long).
    Ok(worker as jlong)
}

/// `Native.workerId(long handle)`.
#[unsafe(no_mangle)] // SAFETY: the JVM finds the entry by this exact name; no other symbol has it.
pub extern "system" fn Java_io_github_ringflake_Native_workerId<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jlong {
    entry(&mut env, -1, |_| {
        let slot = slot(handle)?;
        let live = slot.live.read().unwrap_or_else(PoisonError::into_inner);
        match live.as_ref() {
            // The current one: a heal may have moved it.
            Some(l) => Ok(l.follow()? as jlong),
            None => Ok(slot.worker_id as jlong),
        }
    })
}

/// A layout as the Java side keeps it (`UidLayout`): `{timeBits, workerBits, seqBits,
/// epochMillis, tickMillis, order (0: worker above sequence, 1: Sonyflake's), maxWorkerId,
/// lastValidSecond}`.
fn layout_longs(l: &Layout) -> [i64; 8] {
    [
        i64::from(l.time_bits()),
        i64::from(l.worker_bits()),
        i64::from(l.seq_bits()),
        l.epoch_millis(),
        l.unit().millis() as i64,
        i64::from(l.order() == FieldOrder::SequenceAboveWorker),
        l.max_worker_id() as i64,
        l.last_valid_second(),
    ]
}

/// The layout of [`layout_longs`]'s first six values.
fn layout_of(env: &mut JNIEnv, array: &JLongArray) -> Result<Layout, Failure> {
    let mut v = [0i64; 6];
    if env.get_array_length(array)? < 6 {
        return Err(Failure::config("a layout needs 6 values"));
    }
    env.get_long_array_region(array, 0, &mut v)?;
    let width = |x: i64| u32::try_from(x).map_err(|_| Failure::config(format!("bit width {x}")));
    let unit = match v[4] {
        1000 => TimeUnit::Seconds,
        10 => TimeUnit::TenMillis,
        1 => TimeUnit::Millis,
        other => {
            return Err(Failure::config(format!(
                "tick of {other} ms: expected 1000, 10 or 1"
            )));
        }
    };
    let order = if v[5] == 1 {
        FieldOrder::SequenceAboveWorker
    } else {
        FieldOrder::WorkerAboveSequence
    };
    Ok(Layout::with_unit(
        width(v[0])?,
        width(v[1])?,
        width(v[2])?,
        v[3],
        unit,
        order,
    )?)
}

/// `Native.layout(long handle)`: the generator's layout ([`layout_longs`]).
#[unsafe(no_mangle)] // SAFETY: the JVM finds the entry by this exact name; no other symbol has it.
pub extern "system" fn Java_io_github_ringflake_Native_layout<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let l = slot(handle)?.layout;
        longs(env, &layout_longs(&l))
    })
}

/// `Native.preset(String name)`: a preset's layout ([`layout_longs`]).
#[unsafe(no_mangle)] // SAFETY: the JVM finds the entry by this exact name; no other symbol has it.
pub extern "system" fn Java_io_github_ringflake_Native_preset<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    name: JString<'l>,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let name = String::from(env.get_string(&name)?);
        longs(env, &layout_longs(&Layout::preset(&name)?))
    })
}

/// `Native.seconds(int timeBits, int workerBits, int seqBits, long epochSeconds)`: a layout of
/// seconds, checked ([`Layout::new`]).
#[unsafe(no_mangle)] // SAFETY: the JVM finds the entry by this exact name; no other symbol has it.
pub extern "system" fn Java_io_github_ringflake_Native_seconds<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    time_bits: jint,
    worker_bits: jint,
    seq_bits: jint,
    epoch_seconds: jlong,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let width = |x: jint| {
            u32::try_from(x)
                .map_err(|_| Failure::config(format!("bit width {x}: expected 1 or more")))
        };
        let l = Layout::new(
            width(time_bits)?,
            width(worker_bits)?,
            width(seq_bits)?,
            epoch_seconds,
        )?;
        longs(env, &layout_longs(&l))
    })
}

/// A new Java `long[]` holding `values`.
fn longs(env: &mut JNIEnv, values: &[i64]) -> Result<jlongArray, Failure> {
    let array = env.new_long_array(values.len() as jint)?;
    env.set_long_array_region(&array, 0, values)?;
    Ok(array.into_raw())
}

/// `Native.parse(long[] layout, long id)`: `{unixMillis, workerId, sequence}`, or a
/// `RingflakeException` for an ID the layout cannot have made (negative, or a field past its
/// range).
#[unsafe(no_mangle)] // SAFETY: the JVM finds the entry by this exact name; no other symbol has it.
pub extern "system" fn Java_io_github_ringflake_Native_parse<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    layout: JLongArray<'l>,
    id: jlong,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let layout = layout_of(env, &layout)?;
        // The same 64 bits: a negative Java long is refused as NegativeId.
        let p = layout.parse(id as u64)?;
        longs(env, &[p.unix_millis, p.worker_id as i64, p.sequence as i64])
    })
}

/// The order of [`Java_io_github_ringflake_Native_stats`]'s values; `RingflakeStats` reads them
/// in this order.
pub const STATS_FIELDS: &[&str] = &[
    "capacity",
    "available",
    "issued",
    "discarded",
    "expired",
    "paddings",
    "takeWaits",
    "leadSeconds",
    "lagSeconds",
    "leadMillis",
    "lagMillis",
    "remainingSeconds",
    "workerId",
    "fillerUp",
    "leaseUntil",
    "leaseLost",
    "clockSecond",
    "maxLagSeconds",
    "maxLeadSeconds",
    "stateFileFailing",
];

/// `Native.stats(long handle)`: the values of [`STATS_FIELDS`] (booleans as 0/1, a missing
/// lease end or lead cap as -1).
#[unsafe(no_mangle)] // SAFETY: the JVM finds the entry by this exact name; no other symbol has it.
pub extern "system" fn Java_io_github_ringflake_Native_stats<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let s = with_live(handle, |live, _| {
            live.follow()?;
            Ok(live.generator.stats())
        })?;
        let n = |v: u64| v as i64;
        longs(
            env,
            &[
                n(s.capacity),
                n(s.available),
                n(s.issued),
                n(s.discarded),
                n(s.expired),
                n(s.paddings),
                n(s.take_waits),
                n(s.lead_seconds),
                n(s.lag_seconds),
                n(s.lead_millis),
                n(s.lag_millis),
                n(s.remaining_seconds),
                n(s.worker_id),
                i64::from(s.filler_up),
                s.lease_until.unwrap_or(-1),
                i64::from(s.lease_lost),
                s.clock_second,
                n(s.max_lag_seconds),
                s.max_lead_seconds.map_or(-1, n),
                i64::from(s.state_file_failing),
            ],
        )
    })
}

/// `Native.health(long handle)`: the state's name (`serving`, `idle`, `held at the lead cap`,
/// `lease at risk`, `unavailable`), or `closed`.
#[unsafe(no_mangle)] // SAFETY: the JVM finds the entry by this exact name; no other symbol has it.
pub extern "system" fn Java_io_github_ringflake_Native_health<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let slot = slot(handle)?;
        let live = slot.live.read().unwrap_or_else(PoisonError::into_inner);
        let state = match live.as_ref() {
            Some(l) => l.generator.stats().health(&slot.layout).state(),
            None => "closed",
        };
        Ok(env.new_string(state)?.into_raw())
    })
}

/// `Native.close(long handle)`: stops the filler and releases the worker id's lease (and the
/// process guard). Waits for takes under way; later takes fail with `Closed`. Idempotent.
#[unsafe(no_mangle)] // SAFETY: the JVM finds the entry by this exact name; no other symbol has it.
pub extern "system" fn Java_io_github_ringflake_Native_close<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    entry(&mut env, (), |_| {
        let slot = slot(handle)?;
        let live = slot
            .live
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match live {
            Some(l) => Ok(l.generator.close()?),
            None => Ok(()),
        }
    })
}
