//! The log: `serve --log-format json` writes one JSON object a line on standard error (timestamp,
//! level, target, message, the event's fields), and the events an operator acts on are there, at
//! their level, naming the cause: a lease extension that fails (with the database's own words and
//! how long the lease still holds), the lease lost, taken over and regained, a release that fails
//! at shutdown (never reported as released), the state file that cannot be written (with the I/O
//! error), the clock stepped (by how much), the time bits near their end, token reloads, and
//! accept errors at most once per 10 s, not once per attempt. Standard output writes nothing in
//! JSON (the start-up lines are events); in text it keeps its start-up lines, each said once.
//!
//! Every test drives the real binary as a subprocess in a temporary directory. The PostgreSQL
//! test needs `RINGFLAKE_POSTGRES_URL` (a throw-away server: `.ci/run` starts one) and the
//! clock-step test libfaketime: both are `#[ignore]`d, and fail without what they need when run
//! with `--include-ignored`. The filler's panic is reachable only through the library (a
//! `StatsSink` of the application's that panics): that test captures the library's events with
//! a subscriber of its own.
#![cfg(unix)]

mod common;

use common::{Serve, events, get, ringflake, text, unix_now, wait_until};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// How long any one awaited log line may take to appear.
const PATIENCE: Duration = Duration::from_secs(30);

/// The first event of `serve` at `level` whose message contains `message`, waited for (at most
/// [`PATIENCE`]); fails the test with everything serve said if none comes.
fn await_event(serve: &Serve, level: &str, message: &str) -> Value {
    await_where(serve, &format!("a {level} line with {message:?}"), |e| {
        text(e, "level") == level && text(e, "message").contains(message)
    })
}

/// The first event of `serve` that `wanted` accepts, waited for as [`await_event`] does; `what`
/// names it in the failure.
fn await_where(serve: &Serve, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
    let mut found = None;
    let start = std::time::Instant::now();
    while found.is_none() {
        found = events(&serve.output()).into_iter().find(&wanted);
        if found.is_none() {
            assert!(
                start.elapsed() < PATIENCE,
                "{what}: not within {PATIENCE:?}; output:\n{}",
                serve.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    found.expect("found")
}

/// Sends `signal` (`TERM`, `HUP`) to `serve`.
fn signal(serve: &Serve, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &serve.pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill -{signal} {}", serve.pid);
}

/// SIGTERM, and waits (bounded) for serve to exit; everything it said.
fn stop(serve: &mut Serve) -> String {
    signal(serve, "TERM");
    wait_until("serve exits after SIGTERM", PATIENCE, || !serve.running());
    // The output threads read to the end of the pipes.
    std::thread::sleep(Duration::from_millis(200));
    serve.output()
}

/// After a heal from worker id `lost` to `new`, what a stop said (`out`): `new`'s lease released,
/// `lost`'s never (its row is another node's now).
fn assert_released_after_heal(out: &str, lost: u64, new: u64) {
    let messages: Vec<String> = events(out)
        .iter()
        .map(|e| text(e, "message").to_owned())
        .collect();
    assert!(
        !messages.iter().any(|m| {
            m.starts_with(&format!("lease released: worker id {lost} "))
                || m.ends_with(&format!("lease of worker id {lost} released"))
        }),
        "worker id {lost}'s lease released: {out}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with(&format!("lease released: worker id {new} "))),
        "worker id {new}'s lease not released: {out}"
    );
}

/// The `LEASE_UNTIL` of every row of the SQLite worker table in `dir`.
fn sqlite(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join("ringflake.db")).expect("open the worker table")
}

/// Every line is a JSON object with an RFC 3339 timestamp, a level, a target and a message,
/// standard output writes nothing; the start-up facts, token reloads (good and bad) and the
/// shutdown are events at their level, with fields.
#[test]
fn json_lines_carry_timestamp_level_target_message_and_fields() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        "token-a-0123456789abcdef\ntoken-b-0123456789abcdef\n",
    )
    .unwrap();
    // Readable by its owner only: no start-up warning about it.
    std::fs::set_permissions(&tokens, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let file = tokens.to_str().expect("a UTF-8 path");
    let mut serve = Serve::start(
        dir.path(),
        &["--log-format", "json", "--auth-token-file", file],
    );
    let addr = serve.addr();
    let listening = await_event(&serve, "INFO", "listening on http://");
    assert_eq!(text(&listening, "target"), "ringflake", "{listening}");
    assert_eq!(text(&listening, "address"), addr.to_string(), "{listening}");
    assert_eq!(listening["worker_id"], 1, "{listening}");
    assert_eq!(text(&listening, "source"), "sqlite file ringflake.db");
    // The library's own: the worker id from the table, in the generator's span.
    let acquired = await_event(&serve, "INFO", "worker id 1 acquired: a new row, leased");
    assert_eq!(text(&acquired, "target"), "ringflake::worker::table");
    assert_eq!(acquired["span"]["generator"], "ringflake", "{acquired}");
    assert_eq!(text(&acquired, "database"), "sqlite file ringflake.db");
    // One stream: every line the process writes, standard output included, is JSON; the
    // start-up facts are events (the layout, the state file, the tokens, the address).
    let layout = await_event(&serve, "INFO", "layout 31/10/22 from");
    assert_eq!(text(&layout, "generator"), "ringflake", "{layout}");
    await_event(&serve, "INFO", "state file ");
    await_event(&serve, "INFO", "2 bearer tokens from");
    let out = serve.output();
    for line in out.lines() {
        assert!(
            serde_json::from_str::<Value>(line).is_ok(),
            "not JSON: {line:?} in\n{out}"
        );
    }
    assert!(!out.contains("ringflake: "), "{out}");

    // SIGHUP: a good file, then a missing one (the tokens in use stay).
    std::fs::write(&tokens, "token-c-0123456789abcdef\n").unwrap();
    signal(&serve, "HUP");
    let reloaded = await_event(&serve, "INFO", "SIGHUP: 1 bearer token from");
    assert_eq!(reloaded["tokens"], 1, "{reloaded}");
    std::fs::remove_file(&tokens).unwrap();
    signal(&serve, "HUP");
    let kept = await_event(&serve, "WARN", "SIGHUP: kept the 1 token in use");
    assert!(text(&kept, "error").contains(file), "{kept}");

    let out = stop(&mut serve);
    let stopped = events(&out);
    let released = stopped
        .iter()
        .find(|e| text(e, "message").starts_with("lease released"))
        .unwrap_or_else(|| panic!("no lease released line: {out}"));
    assert_eq!(text(released, "level"), "INFO");
    assert_eq!(text(released, "target"), "ringflake::worker::lease");
    assert!(
        stopped.iter().any(|e| text(e, "message")
            == "stopped; the filler is stopped and the lease of worker id 1 released"),
        "{out}"
    );
    for e in &stopped {
        let ts = text(e, "timestamp");
        assert!(
            ts.len() >= 20 && ts.ends_with('Z') && ts.parse::<jiff::Timestamp>().is_ok(),
            "timestamp {ts:?} in {e}"
        );
        for field in ["level", "target", "message"] {
            assert!(!text(e, field).is_empty(), "no {field} in {e}");
        }
    }
}

/// A worker table that cannot be written (another connection holds SQLite's write lock): each
/// extension fails with SQLite's own words, a warning says how long the lease still holds; when
/// it runs out an error says the lease is lost; once the lock is gone the lease is regained.
#[test]
fn a_locked_table_fails_extensions_loses_the_lease_and_regains_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut serve = Serve::start(
        dir.path(),
        &[
            "--log-format",
            "json",
            "--lease-window",
            "3",
            "--db-timeout",
            "1",
        ],
    );
    assert_eq!(get(serve.addr(), "/id").status, 200);
    let holder = sqlite(dir.path());
    holder
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("the write lock");
    let failed = await_event(&serve, "WARN", "lease extension failed");
    assert_eq!(text(&failed, "target"), "ringflake::worker::lease");
    assert_eq!(failed["worker_id"], 1, "{failed}");
    assert_eq!(text(&failed, "database"), "sqlite file ringflake.db");
    assert!(
        text(&failed, "error").contains("database is locked"),
        "SQLite's own words: {failed}"
    );
    let holds = failed["holds_for_s"].as_i64().expect("holds_for_s");
    assert!((0..=6).contains(&holds), "{failed}");
    assert!(
        text(&failed, "message").contains(&format!("still holds for {holds} s")),
        "{failed}"
    );
    let lost = await_event(&serve, "ERROR", "lease lost");
    assert!(
        text(&lost, "error").contains("database is locked"),
        "{lost}"
    );
    holder.execute_batch("COMMIT").expect("release the lock");
    let regained = await_event(&serve, "INFO", "lease regained");
    assert_eq!(regained["worker_id"], 1, "{regained}");
    assert_eq!(regained["had_expired"], true, "{regained}");
    assert!(
        regained["failures"].as_u64().unwrap_or(0) >= 1,
        "{regained}"
    );
    // One warning for the run of failures with one error text, not one a second.
    let out = serve.output();
    let warnings = events(&out)
        .iter()
        .filter(|e| text(e, "message").starts_with("lease extension failed"))
        .count();
    assert!(warnings <= 2, "{warnings} warnings: {out}");
    stop(&mut serve);
}

/// A release that cannot reach the table at shutdown is a warning that names the error, and the
/// shutdown line does not say "released".
#[test]
fn a_release_failing_at_shutdown_is_not_reported_as_released() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut serve = Serve::start(dir.path(), &["--db-timeout", "1"]);
    assert_eq!(get(serve.addr(), "/id").status, 200);
    let holder = sqlite(dir.path());
    holder
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("the write lock");
    let out = stop(&mut serve);
    holder.execute_batch("COMMIT").expect("release the lock");
    assert!(
        !out.contains("lease released") && !out.contains("lease of worker id 1 released"),
        "{out}"
    );
    assert!(
        out.contains(
            "WARN ringflake: stopped; the filler is stopped, but the lease of worker id 1 could \
             not be released"
        ) && out.contains("database is locked"),
        "{out}"
    );
    assert!(
        out.contains(
            "WARN generator{generator=ringflake}: ringflake::worker::lease: lease release failed"
        ),
        "{out}"
    );
}

/// Another node takes the row over: one error saying so (not one a second); the node heals with
/// a new worker id (an info line naming both ids, a warning that it serves again), and the
/// shutdown releases the new worker id's lease, never the row the other node holds now.
#[test]
fn a_lease_taken_over_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A short window: the lease is written (and the takeover found) every 2 s, not every 101 s.
    let mut serve = Serve::start(dir.path(), &["--log-format", "json", "--lease-window", "3"]);
    assert_eq!(get(serve.addr(), "/id").status, 200);
    // What a recycler on another node does: the row is its own now.
    let moved = sqlite(dir.path())
        .execute(
            "UPDATE WORKER_NODE SET HOST_NAME = 'thief', PORT = '1', \
             LEASE_UNTIL = LEASE_UNTIL + 1000 WHERE ID = 1",
            [],
        )
        .expect("take the row over");
    assert_eq!(moved, 1);
    let taken = await_event(&serve, "ERROR", "lease taken over by another node");
    assert_eq!(taken["worker_id"], 1, "{taken}");
    assert!(
        text(&taken, "error").contains("worker id 1 in sqlite file ringflake.db was taken over"),
        "{taken}"
    );
    let renewed = await_event(&serve, "INFO", "new worker id 2 taken from the source");
    assert_eq!(
        (
            renewed["old_worker_id"].as_u64(),
            renewed["worker_id"].as_u64()
        ),
        (Some(1), Some(2)),
        "{renewed}"
    );
    let healed = await_event(&serve, "WARN", "serving again with a new worker id");
    assert_eq!(healed["worker_id"], 2, "{healed}");
    std::thread::sleep(Duration::from_millis(2_500)); // extensions of the new lease go on
    let out = stop(&mut serve);
    let all = events(&out);
    let errors = all
        .iter()
        .filter(|e| text(e, "message").starts_with("lease taken over"))
        .count();
    assert_eq!(errors, 1, "{out}");
    assert_released_after_heal(&out, 1, 2);
    let thief: String = sqlite(dir.path())
        .query_row("SELECT HOST_NAME FROM WORKER_NODE WHERE ID = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(thief, "thief", "the release left the row alone");
}

/// The worker table forgets the node's row (what a failover to a standby that lacked it
/// leaves): an ERROR saying it is a lost write, not a takeover, once; `/status` and the series
/// count it; the node stops the worker id and serves again under a new one.
#[test]
fn a_row_the_database_forgot_is_a_lost_write() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A 3 s window: the lease is written once per second, so the forgotten row is found within
    // seconds (with the default 300 s, at the write due in about 100 s).
    let mut serve = Serve::start(dir.path(), &["--log-format", "json", "--lease-window", "3"]);
    assert_eq!(get(serve.addr(), "/id").status, 200);
    let gone = sqlite(dir.path())
        .execute("DELETE FROM WORKER_NODE WHERE ID = 1", [])
        .expect("forget the row");
    assert_eq!(gone, 1);
    let lost = await_event(&serve, "ERROR", "lost write: the worker table forgot");
    assert_eq!(lost["worker_id"], 1, "{lost}");
    assert_eq!(text(&lost, "target"), "ringflake::worker::lease");
    let error = text(&lost, "error");
    assert!(error.contains("its row is gone"), "{lost}");
    assert!(
        error.contains("a failover to a standby that lacked it"),
        "{lost}"
    );
    let healed = await_event(&serve, "WARN", "serving again with a new worker id");
    assert_eq!(healed["old_worker_id"], 1, "{healed}");
    let status = get(serve.addr(), "/status").body;
    assert!(status.contains("\"lease_lost_writes\":1"), "{status}");
    let scrape = get(serve.addr(), "/metrics").body;
    assert!(
        scrape.contains("ringflake_lease_lost_writes_total{generator=\"ringflake\"} 1"),
        "{scrape}"
    );
    let out = stop(&mut serve);
    let all = events(&out);
    assert_eq!(
        all.iter()
            .filter(|e| text(e, "message").starts_with("lost write"))
            .count(),
        1,
        "{out}"
    );
    assert!(
        !all.iter()
            .any(|e| text(e, "message").starts_with("lease taken over")),
        "{out}"
    );
}

/// The state file cannot be written (its temporary file's name is taken by a directory, which
/// fails even for root): an error naming the file and the I/O error, once; writable again, an
/// info line.
#[test]
fn a_state_file_that_cannot_be_written_is_an_error_naming_the_io_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut serve = Serve::start(dir.path(), &["--log-format", "json", "--worker-id", "3"]);
    let state = dir.path().join("ringflake.state");
    let blocker = dir.path().join(format!("ringflake.state.tmp{}", serve.pid));
    std::fs::create_dir(&blocker).expect("the blocking directory");
    // The filler raises the state file for each new second.
    let failed = await_event(&serve, "ERROR", "state file write failed");
    // The path as given (the default, in the working directory) and the operating system's words.
    assert!(
        text(&failed, "error").contains("ringflake.state: cannot write it: Is a directory"),
        "{failed}"
    );
    assert!(!state.exists() || state.is_file());
    assert_eq!(failed["worker_id"], 3, "{failed}");
    // More failed writes (the filler tries every round, several a second): no more lines.
    std::thread::sleep(Duration::from_millis(1_500));
    std::fs::remove_dir(&blocker).expect("remove the blocker");
    await_event(&serve, "INFO", "state file written again");
    let out = stop(&mut serve);
    let errors = events(&out)
        .iter()
        .filter(|e| text(e, "message").starts_with("state file write failed"))
        .count();
    assert_eq!(errors, 1, "one error for one cause: {out}");
}

/// A layout with 31 seconds of life: a warning at start (less than a day left, with how much),
/// and an error when an unbounded batch uses the rest up.
#[test]
fn time_bits_near_their_end_warn_and_their_end_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let epoch = (unix_now() as i64 - 10).to_string();
    let mut serve = Serve::start(
        dir.path(),
        &[
            "--log-format",
            "json",
            "--worker-id",
            "9",
            "--time-bits",
            "5",
            "--worker-bits",
            "48",
            "--seq-bits",
            "10",
            "--epoch-seconds",
            &epoch,
            "--max-lag",
            "600",
            "--unbounded-lead",
            "--no-state-file",
        ],
    );
    let near = await_event(&serve, "WARN", "time bits near their end");
    let left = near["left_s"].as_u64().expect("left_s");
    assert!((10..=22).contains(&left), "{near}");
    assert!(
        text(&near, "message").contains(&format!("{left} s left")),
        "{near}"
    );
    assert_eq!(get(serve.addr(), "/ids?count=100000").status, 503);
    let end = await_event(&serve, "ERROR", "time bits exhausted");
    assert_eq!(end["worker_id"], 9, "{end}");
    let out = stop(&mut serve);
    let warnings = events(&out)
        .iter()
        .filter(|e| text(e, "message").starts_with("time bits near their end"))
        .count();
    assert_eq!(warnings, 1, "the lowest threshold crossed, once: {out}");
}

/// Out of file descriptors (EMFILE): every serving thread fails an accept every 10 ms, and the
/// log says so once, not hundreds of times a second.
#[test]
fn accept_errors_are_rate_limited() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The binary's environment (no RINGFLAKE_ variable of the caller's), run by a shell that
    // lowers the descriptor limit first: about 21 are open at idle with 2 serving threads.
    let env = ringflake(dir.path());
    let mut sh = Command::new("sh");
    sh.current_dir(dir.path()).args([
        "-c",
        &format!(
            "ulimit -n 48 && exec {} serve --listen 127.0.0.1:0 --threads 2 --worker-id 1 \
             --no-state-file",
            env!("CARGO_BIN_EXE_ringflake")
        ),
    ]);
    for (k, v) in env.get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    let mut serve = Serve::launch_command(sh);
    let addr = serve.ready(Duration::from_secs(60));
    let mut held = Vec::new();
    for _ in 0..80 {
        if let Ok(c) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            held.push(c);
        }
    }
    wait_until("an accept fails", PATIENCE, || {
        serve.output().contains("accept on ")
    });
    // 2.5 s of failing accepts: without a limit, about 500 lines.
    std::thread::sleep(Duration::from_millis(2_500));
    let out = serve.output();
    let lines = out.lines().filter(|l| l.contains("accept on ")).count();
    assert_eq!(lines, 1, "{out}");
    assert!(
        out.contains("ERROR ringflake: accept on ") && out.contains("Too many open files"),
        "{out}"
    );
    drop(held);
    stop(&mut serve);
}

/// The clock stepped back and forward under a running serve (libfaketime, monotonic time real):
/// a warning each, with the amount.
#[test]
#[ignore = "needs libfaketime (Debian package faketime; .ci/run installs it)"]
fn clock_steps_are_warnings_with_the_amount() {
    let lib = common::libfaketime().unwrap_or_else(|| {
        panic!(
            "no libfaketime.so.1 under /usr/lib/*/faketime/: install Debian's faketime package \
             (bash .ci/run installs it)"
        )
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let offset = dir.path().join("faketime.offset");
    common::set_offset(&offset, "+0s");
    let mut serve = common::serve_faked(dir.path(), &lib, &offset, &["--log-format", "json"]);
    common::set_offset(&offset, "-30s");
    let back = await_event(&serve, "WARN", "clock stepped back by");
    let step = back["step_s"].as_f64().expect("step_s");
    assert!((-32.0..=-28.0).contains(&step), "{back}");
    assert!(
        text(&back, "message").contains("clock stepped back by 3"),
        "{back}"
    );
    common::set_offset(&offset, "+0s");
    let forward = await_event(&serve, "WARN", "clock stepped forward by");
    let step = forward["step_s"].as_f64().expect("step_s");
    assert!((28.0..=32.0).contains(&step), "{forward}");
    assert_eq!(forward["max_lag_s"], 1, "{forward}");
    stop(&mut serve);
}

/// The filler panics (in an application's `StatsSink`): an error with the panic's message, in the
/// span the generator was built in. Captured with a JSON subscriber of the test's own.
#[test]
fn a_filler_panic_is_an_error_with_its_message() {
    use ringflake::{CachedUidGenerator, Layout, Stats, StatsSink};
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    struct Panics;
    impl StatsSink for Panics {
        fn record(&self, _: &Stats) {
            panic!("the sink broke");
        }
    }

    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_writer(move || writer.clone())
        .finish();
    // Global: the filler's thread logs, not this one. This file's other tests run subprocesses.
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber here");
    let generator = tracing::info_span!("generator", generator = "sinking").in_scope(|| {
        CachedUidGenerator::builder(Layout::default())
            .worker_id(5)
            .record_stats(Panics)
            .build()
            .expect("a generator")
    });
    wait_until("the filler is down", PATIENCE, || {
        !generator.stats().filler_up
    });
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let panicked = events(&log)
        .into_iter()
        .find(|e| text(e, "message").starts_with("filler panicked"))
        .unwrap_or_else(|| panic!("no filler panicked line: {log}"));
    assert_eq!(text(&panicked, "level"), "ERROR");
    assert_eq!(text(&panicked, "panic"), "the sink broke");
    assert_eq!(panicked["worker_id"], 5);
    assert_eq!(panicked["span"]["generator"], "sinking", "{panicked}");
}

/// PostgreSQL stopped under a running `serve --log-format json` (a relay between the two is
/// stopped: connections closed, the port refused): a WARN line that names the lease and carries
/// the driver's connection error; the server back: INFO lease regained; the row taken over by
/// another node: ERROR, then the generator heals under a new worker id, and a stop releases that
/// one, never the lost one.
#[test]
#[ignore = "needs RINGFLAKE_POSTGRES_URL (a throw-away PostgreSQL: bash .ci/run starts one)"]
fn postgres_outage_and_takeover_are_logged() {
    let url = match std::env::var("RINGFLAKE_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => url,
        _ => panic!(
            "RINGFLAKE_POSTGRES_URL is not set: this test needs a throw-away PostgreSQL (it drops \
             WORKER_NODE); bash .ci/run starts one and sets it"
        ),
    };
    let mut client = common::postgres_client(&url);
    client
        .batch_execute("DROP TABLE IF EXISTS WORKER_NODE")
        .expect("drop the table");
    let (head, rest) = url.rsplit_once('@').expect("user:password@host");
    let (hostport, tail) = rest.split_once('/').expect("host:port/database");
    let upstream = std::net::ToSocketAddrs::to_socket_addrs(hostport)
        .expect("the server's address")
        .next()
        .expect("an address");
    let mut relay = common::Relay::start(upstream);
    let relayed = format!("{head}@{}/{tail}", relay.addr());
    let dir = tempfile::tempdir().expect("temp dir");
    let mut serve = Serve::start(
        dir.path(),
        &[
            "--log-format",
            "json",
            "--postgres",
            &relayed,
            "--create-table",
            "--lease-window",
            "30",
            "--db-timeout",
            "2",
        ],
    );
    assert_eq!(get(serve.addr(), "/id").status, 200);
    let database = format!("postgres://ringflake@{}/ringflake", relay.addr());

    relay.stop();
    // The kept connection may be found closed first ("connection closed"); reconnecting is then
    // refused, a new error text and so a new warning: tokio-postgres's own words, and the
    // operating system's under them.
    let failed = await_where(&serve, "a WARN line with the refused connection", |e| {
        text(e, "level") == "WARN"
            && text(e, "message").starts_with("lease extension failed")
            && text(e, "error").contains("error connecting to server")
    });
    eprintln!("PostgreSQL stopped: {failed}");
    assert_eq!(text(&failed, "target"), "ringflake::worker::lease");
    assert_eq!(failed["worker_id"], 1, "{failed}");
    assert_eq!(text(&failed, "database"), database, "{failed}");
    assert!(failed["holds_for_s"].as_i64().unwrap_or(-1) > 0, "{failed}");
    assert!(!text(&failed, "until").is_empty(), "{failed}");
    let error = text(&failed, "error");
    assert!(
        error.contains(&format!("database {database}: cannot connect: ")),
        "{failed}"
    );
    let password = head.rsplit_once(':').map_or("", |(_, p)| p);
    assert!(password.is_empty() || !error.contains(password), "{failed}");

    relay.resume();
    let regained = await_event(&serve, "INFO", "lease regained");
    eprintln!("PostgreSQL back: {regained}");
    assert_eq!(regained["worker_id"], 1, "{regained}");
    assert_eq!(text(&regained, "database"), database, "{regained}");

    client
        .batch_execute(
            "UPDATE WORKER_NODE SET HOST_NAME = 'thief', PORT = '1', \
             LEASE_UNTIL = LEASE_UNTIL + 1000 WHERE ID = 1",
        )
        .expect("take the row over");
    let taken = await_event(&serve, "ERROR", "lease taken over by another node");
    eprintln!("row taken over: {taken}");
    assert!(
        text(&taken, "error").contains("worker id 1 in postgres://"),
        "{taken}"
    );
    // The generator heals by itself: a new row from the source, serving again under it. Waited
    // for, so that the stop below releases worker id 2 (and never worker id 1, not this node's).
    let healed = await_event(&serve, "WARN", "serving again with a new worker id");
    assert_eq!(healed["old_worker_id"], 1, "{healed}");
    let new_id = healed["worker_id"].as_u64().expect("the new worker id");
    assert_ne!(new_id, 1, "{healed}");
    let out = stop(&mut serve);
    assert_released_after_heal(&out, 1, new_id);
}

/// A filter whose bare word is neither a level nor a target (`warning`, `verbose`) is refused
/// with exit 2 naming it, from `--log`, `RINGFLAKE_LOG` or `RUST_LOG`; before, it was taken for a
/// target nothing logs under and the log stayed silent.
#[test]
fn a_filter_typo_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = ringflake(dir.path());
        cmd.arg("serve").args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = common::output_within(cmd, PATIENCE);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (args, env, named) in [
        (&["--log", "warning"][..], &[][..], "\"warning\""),
        (&[][..], &[("RINGFLAKE_LOG", "verbose")][..], "\"verbose\""),
        (
            &[][..],
            &[("RUST_LOG", "warning")][..],
            "RUST_LOG \"warning\"",
        ),
    ] {
        let (code, err) = run(args, env);
        assert_eq!(code, Some(2), "{args:?} {env:?}: {err}");
        assert!(
            err.contains(named) && err.contains("neither a level nor a target"),
            "{args:?} {env:?}: {err}"
        );
    }
    assert!(!dir.path().join("ringflake.db").exists(), "nothing started");
}

/// A fatal error at start reaches standard error whatever the filter: `--log off` in text, and
/// in JSON as a JSON object.
#[test]
fn fatal_errors_are_never_filtered_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (format, json) in [("text", false), ("json", true)] {
        let mut cmd = ringflake(dir.path());
        cmd.args(["serve", "--log", "off", "--log-format", format])
            .args(["--config", "missing.toml"]);
        let out = common::output_within(cmd, PATIENCE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(out.stdout.is_empty(), "{out:?}");
        assert!(err.contains("missing.toml"), "{format}: {err}");
        if json {
            let e: Value = serde_json::from_str(err.trim()).expect("one JSON line");
            assert_eq!(text(&e, "level"), "ERROR", "{e}");
            assert!(text(&e, "message").starts_with("error: "), "{e}");
        } else {
            assert!(err.starts_with("ringflake: error: "), "{err}");
        }
    }
}

/// In text, each start-up fact is said once: the lines on standard output, not again as events
/// on standard error. `RUST_LOG` is honoured when neither `--log` nor `RINGFLAKE_LOG` is given.
#[test]
fn text_says_each_start_up_fact_once_and_rust_log_is_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut serve = Serve::start(dir.path(), &[]);
    let out = stop(&mut serve);
    assert_eq!(out.matches("layout 31/10/22 from").count(), 1, "{out}");
    assert_eq!(out.matches("listening on http://").count(), 1, "{out}");
    assert!(out.contains("worker id 1 acquired"), "{out}");

    // Each run in a directory of its own: a first boot, whose worker id is "acquired".
    let quiet = |env: &[(&str, &str)], args: &[&str]| {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut cmd = ringflake(dir.path());
        cmd.args(["serve", "--listen", "127.0.0.1:0"]).args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut serve = Serve::launch_command(cmd);
        serve.ready(PATIENCE);
        let out = stop(&mut serve);
        !out.contains("acquired")
    };
    assert!(quiet(&[("RUST_LOG", "warn")], &[]), "RUST_LOG=warn read");
    assert!(
        !quiet(&[("RUST_LOG", "warn")], &["--log", "info"]),
        "--log wins"
    );
    assert!(
        !quiet(&[("RUST_LOG", "warn"), ("RINGFLAKE_LOG", "info")], &[]),
        "RINGFLAKE_LOG wins"
    );
}
