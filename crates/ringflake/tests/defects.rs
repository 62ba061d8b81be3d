//! Defects found by trying the product as a hostile operator would, one test (or a few) each:
//!
//! 1. a SQLite file locked by another process at boot: `timeout` and `retry_for` bound the boot;
//! 2. listing a worker table never creates or alters a database file;
//! 3. `Stats::issued` is monotonic and counts exactly what takers received, also while takes
//!    fail at the lead cap;
//! 4. the time zone named by `TZ` is read within a bound (`TZ=/dev/zero` used to grow without
//!    end).

use ringflake::{CachedUidGenerator, Error, Layout, LeadPolicy, ManualClock};
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// 3. Stats::issued
// ---------------------------------------------------------------------------------------------

/// A generator whose filler runs only when a take asks it to, at a clock that moves only when
/// told, that may never borrow a second ahead (`max_lead` 0, policy `Fail`): 2^13 IDs a second.
fn capped_generator(clock: &ManualClock) -> CachedUidGenerator {
    let layout = Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
    CachedUidGenerator::builder(layout)
        .worker_id(1)
        .clock(clock.clone())
        .background_filler(false)
        .max_lead(Duration::from_secs(0), LeadPolicy::Fail)
        .build()
        .unwrap()
}

/// Records `issued` after every step and checks it never goes down and matches `received`.
struct Watch {
    last: u64,
}

impl Watch {
    fn check(&mut self, g: &CachedUidGenerator, received: u64, when: &str) {
        let s = g.stats();
        assert!(
            s.issued >= self.last,
            "{when}: issued went down from {} to {} ({s:?})",
            self.last,
            s.issued
        );
        assert_eq!(s.issued, received, "{when}: issued vs IDs received ({s:?})");
        self.last = s.issued;
    }
}

#[test]
fn issued_is_monotonic_and_exact_while_takes_fail_at_the_lead_cap() {
    let clock = ManualClock::from_seconds(ringflake::DEFAULT_EPOCH_SECONDS + 1_000);
    let g = capped_generator(&clock);
    let per_second = 1u64 << 13;
    let mut watch = Watch { last: 0 };
    let mut received = 0u64;
    let mut last_id = 0u64;

    // Drain the one second the cap allows.
    for _ in 0..per_second {
        let id = g.next_id().expect("the current second");
        assert!(id > last_id);
        last_id = id;
        received += 1;
    }
    watch.check(&g, received, "after draining the allowed second");

    // Every further take fails: its claim is abandoned beyond the tail.
    let failing = 1_000u64;
    for i in 0..failing {
        assert_eq!(
            g.next_id(),
            Err(Error::LeadLimitReached { max_lead: 0 }),
            "take {i} past the cap"
        );
        if i % 100 == 0 {
            watch.check(&g, received, &format!("after {} failing takes", i + 1));
        }
    }
    // A failing batch abandons its whole claim too.
    let mut batch = [0u64; 100];
    assert_eq!(
        g.next_ids(&mut batch),
        Err(Error::LeadLimitReached { max_lead: 0 })
    );
    watch.check(&g, received, "after a failing batch");
    assert_eq!(g.stats().discarded, failing + 100, "abandoned claims");

    // The next second: the filler writes it over the abandoned claims, which are never handed
    // out; the takes go on above them.
    clock.advance_seconds(1);
    for n in 0..5_000u64 {
        let id = g.next_id().expect("the next second");
        assert!(id > last_id);
        last_id = id;
        received += 1;
        if n % 500 == 0 {
            watch.check(&g, received, &format!("{n} takes into the next second"));
        }
    }
    watch.check(&g, received, "5,000 takes into the next second");
    let s = g.stats();
    assert_eq!(s.discarded, failing + 100);
    // The second's IDs: taken, abandoned, or still ready.
    assert_eq!(5_000 + failing + 100 + s.available, per_second, "{s:?}");

    // Drain that second and fail once more: still exact.
    for _ in 0..s.available {
        g.next_id().expect("the rest of the second");
        received += 1;
    }
    assert!(g.next_id().is_err());
    watch.check(&g, received, "after the second second and one more failure");
    assert_eq!(g.stats().discarded, failing + 101);
}

#[test]
fn issued_counts_an_abandoned_batch_remainder_once_the_tail_passes_it() {
    let clock = ManualClock::from_seconds(ringflake::DEFAULT_EPOCH_SECONDS + 1_000);
    let g = capped_generator(&clock);
    let mut watch = Watch { last: 0 };
    // 8,000 of the second's 8,192 IDs, then a batch of 1,000 that gets 192 and fails: the 192
    // written to `out` count as handed out (as next_ids documents), the 808 beyond do not.
    let mut ids = vec![0u64; 8_000];
    g.next_ids(&mut ids).unwrap();
    let mut received = 8_000;
    watch.check(&g, received, "first batch");
    let mut batch = vec![0u64; 1_000];
    assert!(g.next_ids(&mut batch).is_err());
    received += 192;
    watch.check(&g, received, "failing batch");
    assert_eq!(g.stats().discarded, 808);
    clock.advance_seconds(1);
    g.pad();
    watch.check(&g, received, "the tail passed the abandoned claims");
    let id = g.next_id().unwrap();
    assert_eq!(
        Layout::new(30, 20, 13, 0)
            .unwrap()
            .decompose(id)
            .unwrap()
            .sequence,
        808
    );
    received += 1;
    watch.check(&g, received, "one more");
}

// ---------------------------------------------------------------------------------------------
// 1. and 2. SQLite
// ---------------------------------------------------------------------------------------------

#[cfg(feature = "sqlite")]
mod sqlite {
    use ringflake::{DatabaseAssigner, Error, Layout, WorkerIdAssigner};
    use rusqlite::Connection;
    use std::path::Path;
    use std::time::{Duration, Instant};

    /// A worker table with one row, and another connection holding an exclusive lock on it
    /// (no other connection can read or write it until the returned connection ends).
    fn locked_table(path: &Path) -> Connection {
        DatabaseAssigner::sqlite(path)
            .unwrap()
            .recycle(false)
            .assign_worker_id(&Layout::default())
            .unwrap();
        let holder = Connection::open(path).unwrap();
        holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
        holder
    }

    fn assert_locked_error(err: &Error, path: &Path) {
        match err {
            Error::Database {
                database,
                message,
                transient,
                ..
            } => {
                assert!(*transient, "{err}");
                assert!(database.contains(&path.display().to_string()), "{err}");
                assert!(
                    message.contains("locked") || message.contains("busy"),
                    "{err}"
                );
            }
            other => panic!("expected a transient database error, got {other:?}"),
        }
    }

    #[test]
    fn a_locked_file_fails_the_boot_within_timeout_when_retry_for_is_zero() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workers.db");
        let _holder = locked_table(&path);
        let start = Instant::now();
        let result = DatabaseAssigner::sqlite(&path).and_then(|a| {
            a.timeout(Duration::from_secs(2))
                .retry_for(Duration::ZERO)
                .assign(&Layout::default())
        });
        let took = start.elapsed();
        let err = result.expect_err("the file is locked");
        assert!(took < Duration::from_secs(6), "took {took:?}: {err}");
        assert!(took >= Duration::from_millis(1_900), "took {took:?}: {err}");
        assert_locked_error(&err, &path);
        assert!(err.to_string().contains("2s"), "names the timeout: {err}");
    }

    #[test]
    fn a_locked_file_fails_the_boot_within_retry_for_plus_one_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workers.db");
        let _holder = locked_table(&path);
        let start = Instant::now();
        let result = DatabaseAssigner::sqlite(&path).and_then(|a| {
            a.timeout(Duration::from_millis(500))
                .retry_for(Duration::from_secs(2))
                .assign(&Layout::default())
        });
        let took = start.elapsed();
        let err = result.expect_err("the file is locked");
        // retry_for (2 s) plus at most one call's timeout (0.5 s) plus a pause: well under 6 s.
        assert!(took < Duration::from_secs(6), "took {took:?}: {err}");
        assert!(took >= Duration::from_secs(2), "took {took:?}: {err}");
        assert_locked_error(&err, &path);
    }

    #[test]
    fn a_lock_released_within_retry_for_lets_the_boot_through() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workers.db");
        let holder = locked_table(&path);
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1_500));
            holder.execute_batch("COMMIT").unwrap();
        });
        let id = DatabaseAssigner::sqlite(&path)
            .unwrap()
            .timeout(Duration::from_millis(500))
            .retry_for(Duration::from_secs(20))
            .recycle(false)
            .assign_worker_id(&Layout::default())
            .unwrap();
        assert_eq!(id, 2);
        release.join().unwrap();
    }

    /// What `ringflake workers --db <path>` does to list the table.
    fn list(path: &Path) -> Result<Vec<ringflake::WorkerRow>, Error> {
        DatabaseAssigner::sqlite_read_only(path)?.list()
    }

    #[test]
    fn listing_a_missing_file_fails_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("typo.db");
        let err = list(&path).expect_err("no such file");
        assert!(!path.exists(), "listing created {}", path.display());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "nothing else either"
        );
        match &err {
            Error::Database {
                message, transient, ..
            } => {
                assert!(!transient, "{err}");
                assert!(
                    message.contains("no such file") && message.contains("typo.db"),
                    "{err}"
                );
                assert!(message.contains("first boot"), "{err}");
            }
            other => panic!("expected a database error, got {other:?}"),
        }
    }

    #[test]
    fn listing_an_existing_file_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workers.db");
        let a = DatabaseAssigner::sqlite(&path).unwrap().recycle(false);
        let id = a.assign_worker_id(&Layout::default()).unwrap();
        drop(a);
        let before = std::fs::read(&path).unwrap();
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let rows = list(&path).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].id, id);
        assert_eq!(std::fs::read(&path).unwrap(), before, "the bytes changed");
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            mtime,
            "the mtime changed"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["workers.db"], "no journal or other file left");
    }

    #[test]
    fn listing_a_file_without_the_table_says_so_and_creates_no_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE T (X INT)")
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = list(&path).expect_err("no WORKER_NODE table");
        assert!(err.to_string().contains("WORKER_NODE"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn a_read_only_assigner_refuses_to_assign() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workers.db");
        DatabaseAssigner::sqlite(&path)
            .unwrap()
            .assign_worker_id(&Layout::default())
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = DatabaseAssigner::sqlite_read_only(&path)
            .unwrap()
            .retry_for(Duration::ZERO)
            .assign_worker_id(&Layout::default())
            .expect_err("read-only");
        assert!(err.to_string().contains("read-only"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}

// ---------------------------------------------------------------------------------------------
// 4. The time zone from TZ
// ---------------------------------------------------------------------------------------------

mod time_zone {
    use ringflake::{Error, Layout, MAX_TIME_ZONE_FILE_BYTES, time_zone_from_tz};
    use std::ffi::OsStr;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    const SHANGHAI_FILE: &str = "/usr/share/zoneinfo/Asia/Shanghai";

    fn zone(value: &str) -> Result<ringflake::TimeZone, Error> {
        time_zone_from_tz(Some(OsStr::new(value)))
    }

    /// The offset from UTC, in seconds, of a zone at 2025-01-01T00:00:00Z.
    fn offset(tz: &ringflake::TimeZone) -> i32 {
        let ts = jiff::Timestamp::from_second(ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
        tz.to_offset(ts).seconds()
    }

    fn assert_refused(value: &str, reason: &str) {
        let start = Instant::now();
        let err = zone(value).expect_err(value);
        assert!(start.elapsed() < Duration::from_secs(2), "{value}: slow");
        let text = err.to_string();
        assert!(matches!(err, Error::TimeZone { .. }), "{value}: {err:?}");
        assert!(text.contains(&format!("TZ={value}")), "{text}");
        assert!(text.contains(reason), "{text}");
    }

    #[test]
    fn devices_are_refused_before_any_read() {
        for value in [
            "/dev/zero",
            ":/dev/zero",
            "/dev/urandom",
            ":/dev/urandom",
            "/dev/null",
        ] {
            assert_refused(value, "not a regular file");
        }
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_refused(&dir.path().display().to_string(), "not a regular file");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_naming_its_size_and_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge");
        std::fs::write(&path, vec![0u8; 2 << 20]).unwrap();
        let value = path.display().to_string();
        assert_refused(&value, "2097152 bytes");
        assert_refused(&value, &MAX_TIME_ZONE_FILE_BYTES.to_string());
    }

    #[test]
    fn a_file_that_is_not_tzif_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("text");
        std::fs::write(&path, "Asia/Shanghai\n").unwrap();
        assert_refused(&path.display().to_string(), "TZif");
    }

    #[test]
    fn a_missing_file_is_refused() {
        assert_refused("/nonexistent/zone", "No such file");
    }

    #[test]
    fn names_posix_rules_and_empty_work() {
        let shanghai = zone("Asia/Shanghai").unwrap();
        assert_eq!(offset(&shanghai), 8 * 3600);
        assert_eq!(shanghai.iana_name(), Some("Asia/Shanghai"));
        assert_eq!(offset(&zone(":Asia/Shanghai").unwrap()), 8 * 3600);
        assert_eq!(offset(&zone("CST-8").unwrap()), 8 * 3600);
        assert_eq!(offset(&zone("UTC").unwrap()), 0);
        assert_eq!(zone("").unwrap(), ringflake::TimeZone::UTC);
        assert_refused("Not/A_Zone", "unknown");
        assert_refused("../../../../dev/zero", "unknown");
    }

    #[test]
    fn a_real_zone_file_works() {
        if !std::path::Path::new(SHANGHAI_FILE).is_file() {
            eprintln!("skipped: no {SHANGHAI_FILE} on this machine");
            return;
        }
        for value in [SHANGHAI_FILE.to_string(), format!(":{SHANGHAI_FILE}")] {
            let tz = zone(&value).unwrap();
            assert_eq!(offset(&tz), 8 * 3600, "{value}");
            assert_eq!(tz.iana_name(), Some("Asia/Shanghai"), "{value}");
        }
    }

    #[test]
    fn unset_is_the_machines_zone() {
        // /etc/localtime, or UTC without one: whatever it is, it is read within the bound.
        time_zone_from_tz(None).unwrap();
    }

    /// The child side of `to_java_string_reads_tz_within_a_bound`: run with `TZ` set.
    #[test]
    fn tz_child() {
        if std::env::var_os("RINGFLAKE_TZ_CHILD").is_none() {
            return;
        }
        let parsed = Layout::default().parse(1).unwrap();
        println!("to_java_string: {:?}", parsed.to_java_string());
        println!(
            "system_time_zone: {:?}",
            ringflake::system_time_zone().map(|_| ())
        );
    }

    /// `TZ=/dev/zero ringflake parse 1` grew to 1.9 GB in 5 s: the library read the file to its
    /// end. In a child process limited to 1 GB of address space (where the unbounded read fails
    /// on allocation and jiff falls back to UTC), with a deadline.
    #[test]
    #[cfg(target_os = "linux")]
    fn to_java_string_reads_tz_within_a_bound() {
        // The last: a zone name read from a database directory named by TZDIR.
        for (tz, tzdir) in [
            ("/dev/zero", None),
            ("/dev/urandom", None),
            ("zero", Some("/dev")),
        ] {
            let exe = std::env::current_exe().unwrap();
            let mut child = Command::new("sh");
            if let Some(dir) = tzdir {
                child.env("TZDIR", dir);
            }
            let mut child = child
                .arg("-c")
                .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
                .arg(&exe)
                .args([
                    "--exact",
                    "time_zone::tz_child",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env("RINGFLAKE_TZ_CHILD", "1")
                .env("TZ", tz)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let start = Instant::now();
            let status = loop {
                if let Some(status) = child.try_wait().unwrap() {
                    break Some(status);
                }
                if start.elapsed() > Duration::from_secs(20) {
                    child.kill().unwrap();
                    child.wait().unwrap();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let mut out = String::new();
            std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
            let status = status.unwrap_or_else(|| panic!("TZ={tz}: still running after 20 s"));
            assert!(status.success(), "TZ={tz}: child failed ({status}): {out}");
            for line in ["to_java_string: Err(", "system_time_zone: Err("] {
                assert!(out.contains(line), "TZ={tz}: {out}");
            }
            assert!(
                out.contains(&format!("TZ={tz}")) && out.contains("not a regular file"),
                "TZ={tz}: {out}"
            );
        }
    }
}
