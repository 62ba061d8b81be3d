//! The `ringflake` binary driven as a subprocess: `gen` and `parse` against UidGenerator's Java
//! vectors (`tests/data/uidgenerator-vectors-utc.tsv`, TZ=UTC), bad flags and IDs, the
//! planner, `workers`, ten `gen` processes on one SQLite file, the state file across runs, and
//! `serve` on an ephemeral port: its start-up lines, every endpoint, every bad-input status, the
//! lead cap's 400 and 503, and SIGTERM.
#![cfg(unix)]

use ringflake::Layout;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/uidgenerator-vectors-utc.tsv"
);

mod common;
use common::ringflake;

fn run(dir: &Path, args: &[&str]) -> Output {
    ringflake(dir)
        .args(args)
        .output()
        .expect("run the ringflake binary")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs and expects success, returning stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let o = run(dir, args);
    assert!(
        o.status.success(),
        "ringflake {args:?} failed with {}: {}",
        o.status,
        stderr(&o)
    );
    stdout(&o)
}

/// Runs and expects failure with exit code `code` and `needle` in stderr.
fn fails(dir: &Path, args: &[&str], code: i32, needle: &str) -> Output {
    let o = run(dir, args);
    assert_eq!(
        o.status.code(),
        Some(code),
        "ringflake {args:?}: stdout {} stderr {}",
        stdout(&o),
        stderr(&o)
    );
    assert!(
        stderr(&o).contains(needle),
        "ringflake {args:?}: expected {needle:?} in stderr, got {}",
        stderr(&o)
    );
    o
}

struct Vector {
    widths: (String, String, String),
    epoch_date: String,
    epoch_seconds: String,
    uid: String,
    parse: String,
}

fn vectors() -> Vec<Vector> {
    let text = std::fs::read_to_string(VECTORS).unwrap_or_else(|e| {
        panic!("cannot read {VECTORS} ({e}): the vectors are part of the repository")
    });
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("config"))
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            // "A(29,21,13)"
            let inner = &f[0][2..f[0].len() - 1];
            let w: Vec<&str> = inner.split(',').collect();
            Vector {
                widths: (w[0].into(), w[1].into(), w[2].into()),
                epoch_date: f[1].into(),
                epoch_seconds: f[2].into(),
                uid: f[6].into(),
                parse: f[8].into(),
            }
        })
        .collect()
}

/// UidGenerator's Java defaults: 28 time, 22 worker and 13 sequence bits from 2016-05-20.
const JAVA_DEFAULTS: [&str; 8] = [
    "--time-bits",
    "28",
    "--worker-bits",
    "22",
    "--seq-bits",
    "13",
    "--epoch",
    "2016-05-20",
];

fn layout_flags(v: &Vector) -> Vec<String> {
    vec![
        "--time-bits".into(),
        v.widths.0.clone(),
        "--worker-bits".into(),
        v.widths.1.clone(),
        "--seq-bits".into(),
        v.widths.2.clone(),
        "--epoch".into(),
        v.epoch_date.clone(),
    ]
}

/// An epoch date (UTC) for a *live* generator with `time_bits`: `vector_epoch` while a layout from
/// it has at least two years left, else New Year's Day two years ago. Java's vector layouts (29
/// time bits from 2016) run out in 2033; a test that makes IDs with their widths must run on any
/// date until the default layout's end (parsing a fixed ID needs no live epoch).
fn live_epoch(time_bits: u32, vector_epoch: &str) -> String {
    let epoch = ringflake::epoch_from_date(vector_epoch, &ringflake::TimeZone::UTC).unwrap();
    let end = epoch + (1i64 << time_bits) - 1;
    if end - now() >= 2 * 366 * 86_400 {
        return vector_epoch.to_string();
    }
    let year = jiff::Timestamp::from_second(now())
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .year();
    format!("{}-01-01", year - 2)
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// The IDs `gen` printed.
fn ids_of(out: &str) -> Vec<u64> {
    out.lines().map(|l| l.parse().unwrap()).collect()
}

/// The worker id of an ID of the default layout.
fn worker_of(id: u64) -> u64 {
    Layout::default().decompose(id).unwrap().worker_id
}

/// The unix second of an ID of the default layout.
fn second_of(id: u64) -> i64 {
    Layout::default().parse(id).unwrap().unix_seconds
}

#[test]
fn parse_matches_java_vectors() {
    let dir = temp();
    let vectors = vectors();
    assert!(vectors.len() >= 20, "too few vectors in {VECTORS}");
    let mut checked = 0;
    for v in &vectors {
        let flags = layout_flags(v);
        let mut args: Vec<&str> = vec!["parse", &v.uid];
        args.extend(flags.iter().map(String::as_str));
        if v.uid.starts_with('-') {
            // Java's spill-over into the sign bit: refused, not parsed.
            fails(dir.path(), &args, 1, "negative");
            continue;
        }
        assert_eq!(ok(dir.path(), &args).trim_end(), v.parse, "uid {}", v.uid);
        // The same with the epoch as seconds.
        let mut by_seconds: Vec<&str> = vec!["parse", &v.uid];
        by_seconds.extend(flags[..6].iter().map(String::as_str));
        by_seconds.extend(["--epoch-seconds", &v.epoch_seconds]);
        assert_eq!(ok(dir.path(), &by_seconds).trim_end(), v.parse);
        checked += 1;
    }
    assert!(checked >= 20);
}

#[test]
fn parse_many_ids_one_line_each_and_bad_ones_fail() {
    let dir = temp();
    let vectors = vectors();
    let a: Vec<&Vector> = vectors
        .iter()
        .filter(|v| v.widths.0 == "29" && !v.uid.starts_with('-'))
        .collect();
    let flags = layout_flags(a[0]);
    let mut args: Vec<&str> = vec!["parse"];
    args.extend(a.iter().map(|v| v.uid.as_str()));
    args.extend(flags.iter().map(String::as_str));
    let out = ok(dir.path(), &args);
    let want: Vec<&str> = a.iter().map(|v| v.parse.as_str()).collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), want);

    // Bad IDs among good ones: the good ones are printed, each bad one named on stderr.
    let bad = [
        "abc",
        "-9223372036854767616",
        "9223372036854775808",
        "12x",
        "99999999999999999999",
    ];
    let mut args: Vec<&str> = vec!["parse", "1"];
    args.extend(bad);
    args.push("8192");
    args.extend(flags.iter().map(String::as_str));
    let o = fails(dir.path(), &args, 1, "5 IDs could not be parsed");
    let lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with(r#"{"UID":"1","#));
    assert!(lines[1].contains(r#""workerId":"1""#));
    let err = stderr(&o);
    assert!(err.contains(r#"ID "abc" is not a decimal number"#), "{err}");
    assert!(err.contains("ID -9223372036854767616 is negative"), "{err}");
    assert!(
        err.contains("ID 9223372036854775808 is out of range"),
        "{err}"
    );
    assert!(err.contains(r#"ID "12x" is not a decimal number"#), "{err}");
    assert!(
        err.contains("ID 99999999999999999999 is out of range"),
        "{err}"
    );
}

#[test]
fn time_zone_for_epoch_and_timestamps() {
    let dir = temp();
    // Java with default zone Asia/Shanghai: epochStr "2016-05-20" is midnight in Beijing, and
    // parseUID prints Beijing time: the default epoch of UidGenerator.
    let flags = JAVA_DEFAULTS;
    let mut args = vec!["parse", "0"];
    args.extend(flags);
    let beijing = ringflake(dir.path())
        .env("TZ", "Asia/Shanghai")
        .args(&args)
        .output()
        .unwrap();
    assert!(beijing.status.success(), "{}", stderr(&beijing));
    assert_eq!(
        stdout(&beijing).trim_end(),
        r#"{"UID":"0","timestamp":"2016-05-20 00:00:00","workerId":"0","sequence":"0"}"#
    );
    // The same through --tz, with TZ=UTC, and as epoch seconds.
    args.extend(["--tz", "Asia/Shanghai"]);
    assert_eq!(
        ok(dir.path(), &args).trim_end(),
        r#"{"UID":"0","timestamp":"2016-05-20 00:00:00","workerId":"0","sequence":"0"}"#
    );
    let java_default = ok(
        dir.path(),
        &[
            "parse",
            "0",
            "--time-bits",
            "28",
            "--worker-bits",
            "22",
            "--seq-bits",
            "13",
            "--epoch-seconds",
            "1463673600",
        ],
    );
    assert!(java_default.contains(r#""timestamp":"2016-05-19 16:00:00""#)); // UTC rendering
    // Java-style offsets.
    let offset = ok(
        dir.path(),
        &[
            "parse",
            "0",
            "--epoch",
            "2016-05-20",
            "--tz",
            "GMT+8",
            "--time-bits",
            "28",
            "--worker-bits",
            "22",
            "--seq-bits",
            "13",
        ],
    );
    assert!(offset.contains(r#""timestamp":"2016-05-20 00:00:00""#));
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[test]
fn gen_makes_ids_of_the_vector_layouts() {
    let vectors = vectors();
    for config in ["29", "28"] {
        // A directory, and so a state file, of its own: the second run with worker id 7 in the
        // same directory would start above the seconds the first one borrowed, ahead of the
        // clock (`gen_twice_with_one_worker_id` checks that).
        let dir = temp();
        let v = vectors.iter().find(|v| v.widths.0 == config).unwrap();
        let flags = layout_flags(v);
        let (time, worker, seq): (u32, u32, u32) = (
            v.widths.0.parse().unwrap(),
            v.widths.1.parse().unwrap(),
            v.widths.2.parse().unwrap(),
        );
        assert_eq!(time + worker + seq, 63);
        let live = live_epoch(time, &v.epoch_date);
        let flags: Vec<String> = flags
            .into_iter()
            .map(|f| if f == v.epoch_date { live.clone() } else { f })
            .collect();
        let epoch = ringflake::epoch_from_date(&live, &ringflake::TimeZone::UTC).unwrap();
        let before = now();
        let mut args = vec!["gen", "-n", "20000", "--worker-id", "7"];
        args.extend(flags.iter().map(String::as_str));
        let out = ok(dir.path(), &args);
        let after = now();
        let ids: Vec<u64> = out.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(ids.len(), 20_000);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "gen's IDs increase");
        for &id in &ids {
            assert_eq!((id >> seq) & ((1 << worker) - 1), 7, "worker field of {id}");
        }
        // The first ID carries the current second (20,000 IDs borrow at most a few seconds).
        let second = epoch + (ids[0] >> (worker + seq)) as i64;
        assert!(
            (before - 1..=after + 1).contains(&second),
            "second {second} not in {before}..={after}"
        );
        // And parse reads gen's IDs back with the same flags: worker 7, UTC timestamp.
        let mut p = vec!["parse".to_string(), ids[0].to_string()];
        p.extend(flags.iter().cloned());
        let p: Vec<&str> = p.iter().map(String::as_str).collect();
        let parsed = ok(dir.path(), &p);
        assert!(
            parsed.contains(r#""workerId":"7","sequence":"0""#),
            "{parsed}"
        );
    }
}

#[test]
fn flags_from_the_environment_and_the_command_line_wins() {
    let dir = temp();
    let env_out = ringflake(dir.path())
        .args(["parse", "17179877377"])
        .env("RINGFLAKE_TIME_BITS", "29")
        .env("RINGFLAKE_WORKER_BITS", "21")
        .env("RINGFLAKE_SEQ_BITS", "13")
        .env("RINGFLAKE_EPOCH", "2016-09-20")
        .output()
        .unwrap();
    assert!(env_out.status.success(), "{}", stderr(&env_out));
    assert_eq!(
        stdout(&env_out).trim_end(),
        r#"{"UID":"17179877377","timestamp":"2016-09-20 00:00:01","workerId":"1","sequence":"1"}"#
    );
    // Two widths given, the third is what makes 63.
    let two = ok(
        dir.path(),
        &[
            "parse",
            "17179877377",
            "--time-bits",
            "29",
            "--seq-bits",
            "13",
            "--epoch",
            "2016-09-20",
        ],
    );
    assert_eq!(two, stdout(&env_out));
    // RINGFLAKE_DB in the environment, --worker-id on the command line: the flag wins.
    let o = ringflake(dir.path())
        .args(["gen", "--worker-id", "5"])
        .env("RINGFLAKE_DB", dir.path().join("env.db"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let id: u64 = stdout(&o).trim().parse().unwrap();
    assert_eq!(worker_of(id), 5);
    assert!(!dir.path().join("env.db").exists());
    // Both on the command line: an error naming both.
    fails(
        dir.path(),
        &["gen", "--worker-id", "5", "--db", "x.db"],
        1,
        "choose one worker id source, got --db and --worker-id",
    );
    // Both from the environment: an error naming both variables.
    let o = ringflake(dir.path())
        .arg("gen")
        .env("RINGFLAKE_DB", "x.db")
        .env("RINGFLAKE_WORKER_ID", "3")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--db (from RINGFLAKE_DB) and --worker-id (from RINGFLAKE_WORKER_ID)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_flags_are_clear_errors() {
    let dir = temp();
    // (arguments, exit code, what stderr must say)
    let cases: &[(&[&str], i32, &str)] = &[
        // Usage errors: exit 2, clap's message.
        (&["gen", "--bogus"], 2, "unexpected argument '--bogus'"),
        (&["frobnicate"], 2, "unrecognized subcommand 'frobnicate'"),
        (
            &["serve", "--listen", "localhost:18088"],
            2,
            "expected IP:PORT like 127.0.0.1:8080",
        ),
        (
            &[
                "layout",
                "--rate",
                "1e6",
                "--restarts-per-day",
                "1",
                "--years",
                "1",
            ],
            2,
            "\"1e6\" is not a whole number: expected digits, like 1000000",
        ),
        (&["gen", "-n", "0"], 2, "0 IDs: give at least 1"),
        (&["gen", "-n", "ten"], 2, "invalid value 'ten'"),
        (&["gen", "-n", "0"], 2, "invalid value '0'"),
        (&["gen", "--time-bits", "0"], 2, "invalid value '0'"),
        (&["workers", "--db-timeout", "0"], 2, "invalid value '0'"),
        (
            &["serve", "--listen", "nowhere"],
            2,
            "invalid value 'nowhere'",
        ),
        (
            &["layout", "--years", "10"],
            2,
            "<--rate <IDS_PER_SEC>|--fleet-rate <IDS_PER_SEC>>",
        ),
        // Values that parse but make no layout: exit 1, the library's message.
        (
            &[
                "gen",
                "--worker-id",
                "1",
                "--time-bits",
                "30",
                "--worker-bits",
                "20",
                "--seq-bits",
                "12",
            ],
            1,
            "invalid bit widths: time 30 + worker 20 + sequence 12 = 62, expected 63",
        ),
        (
            &["gen", "--worker-id", "1", "--epoch", "2024-13-01"],
            1,
            "invalid epoch \"2024-13-01\": month 13 out of range 1..=12",
        ),
        (
            &["gen", "--worker-id", "1", "--epoch", "2999-01-01"],
            1,
            "is in the future",
        ),
        (
            &[
                "gen",
                "--worker-id",
                "1",
                "--epoch",
                "2025-01-01",
                "--epoch-seconds",
                "0",
            ],
            1,
            "give the epoch once",
        ),
        (
            &["parse", "1", "--tz", "Mars/Base"],
            1,
            "unknown time zone \"Mars/Base\"",
        ),
        // The default layout has 10 worker bits.
        (
            &["gen", "--worker-id", "1024"],
            1,
            "worker id 1024 exceeds the max 1023",
        ),
        (
            &["gen", "--worker-id", "1", "--recycle"],
            1,
            "--recycle needs a worker table",
        ),
        (
            &["gen", "--worker-id", "1", "--no-recycle"],
            1,
            "--no-recycle needs a worker table",
        ),
        (
            &["gen", "--worker-id", "1", "--lease-window", "60"],
            1,
            "--lease-window needs a worker table",
        ),
        (
            &["gen", "--no-recycle", "--lease-window", "60"],
            1,
            "--lease-window needs recycling: with --no-recycle there is no lease",
        ),
        (
            &["gen", "--recycle", "--no-recycle"],
            1,
            "choose one recycling setting, got --recycle and --no-recycle",
        ),
        (
            &["gen", "--state-file", "x.state", "--no-state-file"],
            1,
            "choose one state file setting, got --state-file and --no-state-file",
        ),
        (
            &["serve", "--unbounded-lead", "--max-lead", "5"],
            1,
            "choose one lead cap, got --max-lead and --unbounded-lead",
        ),
        (
            &["serve", "--unbounded-lead", "--lead-policy", "fail"],
            1,
            "--lead-policy needs a lead cap",
        ),
        (
            &["serve", "--max-lead", "-1"],
            2,
            "unexpected argument '-1'",
        ),
        (&["serve", "--max-lead", "soon"], 2, "invalid value 'soon'"),
        (
            &["gen", "--recycle", "--lease-window", "0"],
            2,
            "invalid value '0'",
        ),
        (&["gen", "--db-retry", "soon"], 2, "invalid value 'soon'"),
        // UidGenerator's own defaults ran out: refused with the date, never negative IDs.
        (
            &[
                "gen",
                "--worker-id",
                "1",
                "--time-bits",
                "28",
                "--worker-bits",
                "22",
                "--seq-bits",
                "13",
                "--epoch-seconds",
                "1463673600",
            ],
            1,
            "2024-11-20T13:24:15Z",
        ),
        (
            &[
                "layout",
                "--rate",
                "0",
                "--restarts-per-day",
                "1",
                "--years",
                "10",
            ],
            1,
            "invalid rate 0",
        ),
    ];
    for &(args, code, needle) in cases {
        fails(dir.path(), args, code, needle);
    }
}

#[test]
fn layout_planner() {
    let dir = temp();
    // A fleet: a million IDs a second across 500 live nodes, each restarted 20 times a day.
    let fleet = |nodes: &str| {
        ok(
            dir.path(),
            &[
                "layout",
                "--fleet-rate",
                "1_000_000",
                "--nodes",
                nodes,
                "--restarts-per-day",
                "10000",
                "--years",
                "20",
                "--tz",
                "UTC",
                "--today",
                "2026-11-23",
            ],
        )
    };
    let out = fleet("500");
    assert!(
        out.starts_with(
            "demand     1,000,000 IDs/s across the fleet, 2,000 IDs/s on the busiest node, 500 \
             live nodes, 10,000 restarts a day (3,652,500 worker ids a year with --no-recycle), \
             20 years"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "worker 10 bits (535 live worker ids: 500 nodes and 35 restarted within a lease window)"
        ),
        "{out}"
    );
    // The default widths hold the 500 live nodes with recycling; only --no-recycle runs short.
    let default = out
        .split("-  ringflake's default widths 31/10/22")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        default.contains(
            "workers    1,023 worker ids hold the 535 live ones (recycling, the default); with \
             --no-recycle, 3,652,500 used per year: gone in 0.0 years (short of 20 years: keep \
             the default, recycling)"
        ),
        "{out}"
    );
    assert!(
        default.contains(
            "fleet      2,097,152,000 IDs/s across 500 nodes without borrowing (covers the \
             1,000,000 IDs/s demanded)"
        ),
        "{out}"
    );
    assert!(default.contains("(lasts the 20 years)"), "{out}");
    // UidGenerator's 31/23/9 serves 512 IDs/s a node: the fleet borrows, and it runs out early.
    assert!(
        out.contains(
            "fleet      256,000 IDs/s across 500 nodes without borrowing (BELOW: every node \
             borrows, for the 1,000,000 IDs/s demanded)"
        ),
        "{out}"
    );
    // 2,000 live nodes do not fit 10 worker bits: the default says so, the proposals widen it.
    let crowded = fleet("2000");
    assert!(
        crowded.contains("1,023 worker ids TOO FEW for the 2,035 live ones: more worker bits"),
        "{crowded}"
    );
    assert!(
        crowded.contains("worker 11 bits (2,035 live worker ids"),
        "{crowded}"
    );

    let roomy = ok(
        dir.path(),
        &[
            "layout",
            "--rate",
            "10000",
            "--nodes",
            "100000",
            "--restarts-per-day",
            "24",
            "--years",
            "10",
            "--epoch",
            "2025-01-01",
            "--today",
            "2026-11-23",
        ],
    );
    for line in [
        "1. longest life: 32/17/14",
        "2. most worker ids: 29/20/14",
        "3. burst headroom: 29/17/17",
        "4. balanced: 30/18/15",
        "--epoch 2025-01-01",
    ] {
        assert!(roomy.contains(line), "{line:?} missing from\n{roomy}");
    }

    // --today moves the day the lifetimes count from, not the epoch: a year later, the same
    // layout has a year less to live, and its time bits run out on the same day.
    let plan_from = |today: &str| {
        ok(
            dir.path(),
            &[
                "layout",
                "--rate",
                "10000",
                "--restarts-per-day",
                "24",
                "--years",
                "10",
                "--epoch",
                "2025-01-01",
                "--tz",
                "UTC",
                "--today",
                today,
            ],
        )
    };
    let default_line = |out: &str| {
        out.lines()
            .skip_while(|l| !l.contains("default widths 31/10/22"))
            .find(|l| l.trim_start().starts_with("lifetime"))
            .unwrap_or_default()
            .to_string()
    };
    let now = default_line(&plan_from("2030-01-01"));
    let later = default_line(&plan_from("2031-01-01"));
    assert!(
        now.contains("lifetime   63.1 years at 10,000 IDs/s, time bits run out 2093-01-19"),
        "{now}"
    );
    assert!(
        later.contains("lifetime   62.1 years at 10,000 IDs/s, time bits run out 2093-01-19"),
        "{later}"
    );
    fails(
        dir.path(),
        &[
            "layout",
            "--rate",
            "10",
            "--restarts-per-day",
            "1",
            "--years",
            "1",
            "--today",
            "2026-13-01",
        ],
        1,
        "invalid --today",
    );
}

#[test]
fn ten_gen_processes_on_one_sqlite_file() {
    let dir = temp();
    let per_process = 20_000;
    // Java's never-reuse, a new row each: concurrent runs with recycling (the default) start
    // each above the live leases of this host, up to minutes ahead, and wait for the clock
    // under the lead cap. They also share the state file of the directory, ringflake.state.
    let children: Vec<Child> = (0..10)
        .map(|_| {
            ringflake(dir.path())
                .args(["gen", "-n", &per_process.to_string(), "--db", "shared.db"])
                .arg("--no-recycle")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn gen")
        })
        .collect();
    let mut all = HashSet::new();
    let mut workers = HashSet::new();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "gen failed: {}", stderr(&o));
        let ids = ids_of(&stdout(&o));
        assert_eq!(ids.len(), per_process);
        workers.insert(worker_of(ids[0]));
        all.extend(ids);
    }
    assert_eq!(all.len(), 10 * per_process, "IDs repeated across processes");
    assert_eq!(workers.len(), 10, "each process has its own worker id");

    // `workers` lists the ten rows.
    let list = ok(dir.path(), &["workers", "--db", "shared.db"]);
    let lines: Vec<&str> = list.lines().collect();
    assert!(lines[0].starts_with("ID"), "{list}");
    assert!(
        lines[0].contains("HOST_NAME") && lines[0].contains("LEASE_UNTIL"),
        "{list}"
    );
    assert_eq!(lines.len(), 1 + 10 + 1, "{list}");
    assert!(lines[11].starts_with("10 rows in sqlite file shared.db; highest worker id 10"));
}

#[test]
fn workers_on_the_default_file_recycling_by_default() {
    let dir = temp();
    // Without a state file each run takes a row of its own (with one, a run in the same
    // directory takes its gone predecessor's row back: tests/fair.rs).
    ok(dir.path(), &["gen", "--no-state-file"]);
    assert!(dir.path().join("ringflake.db").exists());
    let list = ok(dir.path(), &["workers"]);
    let row = list.lines().nth(1).unwrap();
    assert!(row.starts_with("1 "), "{list}");
    // Recycling is the default: the row holds a lease, shown as a date, not "-".
    assert!(!row.trim_end().ends_with('-'), "{list}");
    // Java's never-reuse: a new row, without a lease.
    ok(dir.path(), &["gen", "--no-recycle", "--no-state-file"]);
    let list = ok(dir.path(), &["workers"]);
    let row = list.lines().nth(2).unwrap();
    assert!(row.starts_with("2 "), "{list}");
    assert!(row.trim_end().ends_with('-'), "{list}");
    // --recycle, the old way to ask for the default, still works.
    ok(dir.path(), &["gen", "--recycle", "--no-state-file"]);
    let leased = |row: usize| {
        let list = ok(dir.path(), &["workers"]);
        let line = list.lines().nth(row).unwrap().to_string();
        assert!(line.starts_with(&format!("{row} ")), "{list}");
        !line.trim_end().ends_with('-')
    };
    assert!(leased(3));
    // The switches read yes/no words from their variables, and the command line wins.
    let gen_with = |var: &str, value: &str, args: &[&str]| {
        let o = ringflake(dir.path())
            .args(["gen", "--no-state-file"])
            .args(args)
            .env(var, value)
            .output()
            .unwrap();
        assert!(o.status.success(), "{var}={value}: {}", stderr(&o));
    };
    gen_with("RINGFLAKE_NO_RECYCLE", "yes", &[]);
    assert!(!leased(4));
    gen_with("RINGFLAKE_NO_RECYCLE", "1", &["--recycle"]);
    assert!(leased(5));
    gen_with("RINGFLAKE_RECYCLE", "off", &[]);
    assert!(!leased(6));
}

/// Two runs of `gen` with one fixed worker id, one right after the other (often in the same
/// second): the second starts above every second the first may have used, which the state file
/// in the working directory records, so no ID repeats. Without the state file the second run
/// would start at the clock's second, sequence 0, which the first run already used if it ran in
/// the same second.
#[test]
fn gen_twice_with_one_worker_id() {
    let dir = temp();
    let run = || ids_of(&ok(dir.path(), &["gen", "-n", "1000", "--worker-id", "7"]));
    let first = run();
    let second = run();
    let last_of_first = second_of(*first.last().unwrap());
    assert!(
        second.iter().all(|&id| second_of(id) > last_of_first),
        "the second run starts above second {last_of_first}: {} and {}",
        first[0],
        second[0]
    );
    let all: HashSet<u64> = first.iter().chain(&second).copied().collect();
    assert_eq!(all.len(), 2000, "IDs repeated");
    let state = std::fs::read_to_string(dir.path().join("ringflake.state")).unwrap();
    assert!(
        state.starts_with("ringflake-reach 2\nworker 7 "),
        "{state:?}"
    );

    // --state-file names another file (RINGFLAKE_STATE_FILE too), and a run starts above what it
    // records: here 5 s ahead of the clock, within the lead cap, so nothing waits.
    let ahead = now() + 5;
    std::fs::write(
        dir.path().join("elsewhere.state"),
        format!("ringflake-reach 1\n{ahead}\n"),
    )
    .unwrap();
    for named in [
        ringflake(dir.path())
            .args(["gen", "-n", "1000", "--worker-id", "7"])
            .args(["--state-file", "elsewhere.state"])
            .output()
            .unwrap(),
        ringflake(dir.path())
            .args(["gen", "-n", "1000", "--worker-id", "7"])
            .env("RINGFLAKE_STATE_FILE", "elsewhere.state")
            .output()
            .unwrap(),
    ] {
        assert!(named.status.success(), "{}", stderr(&named));
        let ids = ids_of(&stdout(&named));
        assert!(second_of(ids[0]) > ahead, "{} not above {ahead}", ids[0]);
    }

    // --no-state-file runs without one, writing none, and says on standard error what a
    // restart of its fixed worker id risks (as serve does at start).
    let bare = temp();
    let out = ringflake(bare.path())
        .args(["gen", "-n", "1000", "--worker-id", "7", "--no-state-file"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "ringflake: no state file (--no-state-file): a restart of worker id 7 within 10 s \
         (max-lead) of this run's end can repeat its IDs\n"
    );
    let ids = ids_of(&stdout(&out));
    assert_eq!(ids.len(), 1000);
    let files: Vec<_> = std::fs::read_dir(bare.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(files.is_empty(), "{files:?}");
}

/// A state file that cannot be read is an error naming it, never ignored.
#[test]
fn gen_refuses_a_damaged_state_file() {
    let dir = temp();
    std::fs::write(dir.path().join("ringflake.state"), "not a state\n").unwrap();
    fails(
        dir.path(),
        &["gen", "--worker-id", "7"],
        1,
        "ringflake.state: it does not hold 'ringflake-reach 2'",
    );
}

// ---------------------------------------------------------------------------------------------
// serve
// ---------------------------------------------------------------------------------------------

/// A running `ringflake serve`, killed if a test fails before stopping it.
struct Server {
    child: Option<Child>,
    addr: SocketAddr,
    pid: u32,
    /// What it printed up to and including the line with its address.
    startup: Vec<String>,
    /// Its standard output, kept open: serve may write to it later.
    _stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Server {
        let mut child = ringflake(dir)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut startup = Vec::new();
        let addr = loop {
            let mut line = String::new();
            if out.read_line(&mut line).unwrap() == 0 {
                // Standard output closed: serve has exited (or is exiting), so its stderr ends.
                child.wait().ok();
                let mut err = String::new();
                child.stderr.take().unwrap().read_to_string(&mut err).ok();
                panic!("no address in {startup:?}; stderr: {err}");
            }
            let line = line.trim_end().to_string();
            let addr = line
                .split("listening on http://")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .map(|a| a.parse::<SocketAddr>().unwrap());
            startup.push(line);
            if let Some(addr) = addr {
                break addr;
            }
        };
        let last = startup.last().unwrap();
        assert!(last.contains("with worker id "), "{last}");
        let pid = child.id();
        Server {
            child: Some(child),
            addr,
            pid,
            startup,
            _stdout: out,
        }
    }

    fn sigterm(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to exit, at most `limit`; returns its status and stderr.
    fn wait(&mut self, limit: Duration) -> (std::process::ExitStatus, String) {
        exit_within(self.child.take().unwrap(), limit)
    }
}

/// Waits for `child` (stderr piped) to exit, at most `limit`, else kills it and fails the test;
/// returns its status and stderr.
fn exit_within(mut child: Child, limit: Duration) -> (std::process::ExitStatus, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).ok();
            return (status, err);
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("serve did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().ok();
            child.wait().ok();
        }
    }
}

struct Reply {
    status: u16,
    headers: String,
    body: String,
}

/// One HTTP/1.1 request on a new connection (`Connection: close`), read to the end.
fn http(addr: SocketAddr, method: &str, path: &str) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    parse_reply(&raw)
}

fn parse_reply(raw: &str) -> Reply {
    let (head, body) = raw.split_once("\r\n\r\n").expect("a complete response");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    Reply {
        status,
        headers: head.to_ascii_lowercase(),
        body: body.to_string(),
    }
}

fn get(addr: SocketAddr, path: &str) -> Reply {
    http(addr, "GET", path)
}

/// Asserts a JSON error with `status` whose message contains `needle`.
fn assert_error(r: &Reply, status: u16, needle: &str) {
    assert_eq!(r.status, status, "{}", r.body);
    assert!(
        r.headers.contains("content-type: application/json"),
        "{}",
        r.headers
    );
    assert!(r.body.starts_with(r#"{"error":""#), "{}", r.body);
    assert!(r.body.contains(needle), "{needle:?} not in {}", r.body);
}

/// The IDs of a `/ids` answer: a JSON array of strings.
fn json_ids(body: &str) -> Vec<u64> {
    let inner = body
        .strip_prefix('[')
        .and_then(|b| b.strip_suffix(']'))
        .expect("a JSON array");
    inner
        .split(',')
        .map(|s| {
            s.strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .expect("IDs as strings")
                .parse()
                .unwrap()
        })
        .collect()
}

#[test]
fn serve_answers_every_endpoint() {
    let dir = temp();
    // Java's vector layout 29/21/13 from 2016-09-20, with an epoch that keeps it alive on any date.
    let epoch = live_epoch(29, "2016-09-20");
    let mut server = Server::start(
        dir.path(),
        &[
            "--time-bits",
            "29",
            "--worker-bits",
            "21",
            "--seq-bits",
            "13",
            "--epoch",
            &epoch,
        ],
    );
    let addr = server.addr;

    let r = get(addr, "/id");
    assert_eq!(r.status, 200);
    assert!(
        r.headers.contains("content-type: text/plain"),
        "{}",
        r.headers
    );
    // The digits and a newline, so that a shell prompt after `curl /id` starts a line.
    assert!(
        r.body.ends_with('\n') && !r.body.ends_with("\n\n"),
        "{:?}",
        r.body
    );
    let first: u64 = r.body.trim_end().parse().expect("a decimal ID");
    assert_eq!(
        (first >> 13) & ((1 << 21) - 1),
        1,
        "worker id 1: the first row of the new file"
    );

    let r = get(addr, "/ids?count=1000");
    assert_eq!(r.status, 200);
    assert!(r.headers.contains("content-type: application/json"));
    let ids = json_ids(&r.body);
    assert_eq!(ids.len(), 1000);
    assert!(ids[0] > first && ids.windows(2).all(|w| w[0] < w[1]));
    // More than the ring holds (65,536) is fine: 1,001 IDs taken so far, and the lead cap
    // (default 10 s) lets this layout hold 11 x 8,192 = 90,112 at once, so 70,000 never wait for
    // the clock.
    let r = get(addr, "/ids?count=70000");
    assert_eq!(r.status, 200, "{}", r.body);
    let batch = json_ids(&r.body);
    assert_eq!(batch.len(), 70_000);
    assert!(batch[0] > ids[999] && batch.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(json_ids(&get(addr, "/ids?count=1").body).len(), 1);
    // More than the cap can ever hold: refused at once, naming the count and the limit.
    let r = get(addr, "/ids?count=100000");
    assert_error(
        &r,
        400,
        "count 100000 is more than the generator can take at once: at most 90112 IDs \
         ((max-lead 10 s + 1) x 2^13 IDs a second); ask for fewer",
    );

    // parseUID, as Java prints it with the JVM zone UTC.
    let r = get(addr, "/parse/17179877377");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        format!(
            r#"{{"UID":"17179877377","timestamp":"{epoch} 00:00:01","workerId":"1","sequence":"1"}}"#
        )
    );
    let r = get(addr, &format!("/parse/{first}"));
    assert!(r.body.contains(r#""workerId":"1""#), "{}", r.body);

    let r = get(addr, "/healthz");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body.starts_with(r#"{"status":"ok","worker_id":1,"#),
        "{}",
        r.body
    );

    let r = get(addr, "/metrics");
    assert_eq!(r.status, 200);
    assert!(
        r.headers
            .contains("content-type: text/plain; version=0.0.4")
    );
    assert!(
        r.body
            .contains(r#"ringflake_worker_id{generator="ringflake"} 1"#),
        "{}",
        r.body
    );
    assert!(r.body.contains("ringflake_ids_issued_total"));

    // Bad input: 4xx with a JSON error saying what was wrong.
    assert_error(
        &get(addr, "/parse/abc"),
        400,
        r#"ID \"abc\" is not a decimal number"#,
    );
    assert_error(&get(addr, "/parse/-5"), 400, "ID -5 is negative");
    assert_error(
        &get(addr, "/parse/9223372036854775808"),
        400,
        "ID 9223372036854775808 is out of range",
    );
    assert_error(
        &get(addr, "/parse/123456789012345678901234567890"),
        400,
        "out of range",
    );
    assert_error(&get(addr, "/parse/"), 400, "missing ID");
    assert_error(&get(addr, "/ids?count=0"), 400, "count 0 out of range");
    assert_error(
        &get(addr, "/ids?count=100001"),
        400,
        "count 100001 out of range",
    );
    assert_error(
        &get(addr, "/ids?count=lots"),
        400,
        r#"count \"lots\" is not a number"#,
    );
    assert_error(&get(addr, "/ids"), 400, "missing query parameter count");
    assert_error(&get(addr, "/nope"), 404, "no route /nope");
    assert_error(&get(addr, "/nope/deeper"), 404, "no route /nope/deeper");
    let r = http(addr, "POST", "/id");
    assert_error(&r, 405, "method POST not allowed on /id");
    assert!(r.headers.contains("allow: get, head"), "{}", r.headers);

    // Keep-alive: many requests on one connection.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut previous = 0;
    for _ in 0..100 {
        write!(s, "GET /id HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let id: u64 = read_one(&mut s).body.trim_end().parse().unwrap();
        assert!(id > previous);
        previous = id;
    }

    server.sigterm();
    let (status, err) = server.wait(Duration::from_secs(5));
    assert!(status.success(), "{status}: {err}");
    assert!(err.contains("SIGTERM: stopping"), "{err}");
}

/// Reads one response with a `content-length` body from a keep-alive connection.
fn read_one(s: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        let n = s.read(&mut byte).unwrap();
        assert_eq!(n, 1, "connection closed mid-response");
        raw.push(byte[0]);
    }
    let head = String::from_utf8(raw).unwrap();
    let len: usize = head
        .to_ascii_lowercase()
        .lines()
        .find_map(|l| {
            l.strip_prefix("content-length: ")
                .map(|v| v.trim().parse().unwrap())
        })
        .expect("content-length");
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    parse_reply(&format!("{head}{}", String::from_utf8(body).unwrap()))
}

/// An idle keep-alive connection does not hold the shutdown up: serve exits at once, not after
/// its grace period. Told apart by what serve says (it names the requests still open when the
/// grace period ends) and by a grace period of 60 s, not by a deadline this machine might miss.
#[test]
fn sigterm_exits_zero_at_once_and_releases_the_lease() {
    let dir = temp();
    let mut server = Server::start(dir.path(), &["--recycle", "--shutdown-timeout", "60"]);
    assert_eq!(get(server.addr, "/id").status, 200);
    // An idle keep-alive connection does not hold the shutdown up.
    let mut idle = TcpStream::connect(server.addr).unwrap();
    write!(idle, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert_eq!(read_one(&mut idle).status, 200);

    let start = Instant::now();
    server.sigterm();
    let (status, err) = server.wait(Duration::from_secs(90));
    let took = start.elapsed();
    assert!(status.success(), "{status}: {err}");
    assert!(
        !err.contains("still open after"),
        "waited out the grace period for the idle connection: {err}"
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert!(err.contains("lease of worker id 1 released"), "{err}");
    // The idle connection was closed, not left hanging.
    idle.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut rest = Vec::new();
    assert_eq!(idle.read_to_end(&mut rest).unwrap_or(0), 0);

    // The next boot takes a new row, above the lease the first one released.
    let list = ok(dir.path(), &["workers"]);
    assert!(list.contains("1 row in sqlite file ringflake.db"), "{list}");
}

#[test]
fn serve_keeps_the_lease_window_it_is_given() {
    let dir = temp();
    let server = Server::start(dir.path(), &["--recycle", "--lease-window", "90"]);
    assert_eq!(get(server.addr, "/id").status, 200);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let rows = ringflake::DatabaseAssigner::sqlite(dir.path().join("ringflake.db"))
        .unwrap()
        .list()
        .unwrap();
    let ahead = rows[0].lease_until - now;
    // 90 s beyond the newest second used; the ring borrows a few seconds at most at start (the
    // default window would put it 300 s ahead).
    assert!(
        (85..=110).contains(&ahead),
        "lease {ahead} s ahead: {rows:?}"
    );
}

#[test]
fn db_retry_bounds_the_wait_for_an_unreachable_server() {
    let dir = temp();
    let start = Instant::now();
    fails(
        dir.path(),
        &[
            "gen",
            "--mysql",
            "mysql://u:p@127.0.0.1:1/ids",
            "--db-retry",
            "1",
        ],
        1,
        "127.0.0.1:1",
    );
    let took = start.elapsed();
    // The default would keep retrying for 30 s.
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(10),
        "gave up after {took:?}"
    );
}

/// One TCP socket of this network namespace, as Linux's `/proc/net/tcp` lists it.
#[cfg(target_os = "linux")]
struct TcpEntry {
    local: SocketAddr,
    remote: SocketAddr,
    /// `0x0A` is LISTEN.
    state: u8,
    /// 0 while no process holds the socket: an accepted connection has one, one still waiting
    /// in a listen queue has not.
    inode: u64,
}

#[cfg(target_os = "linux")]
fn tcp_table() -> Vec<TcpEntry> {
    let text = std::fs::read_to_string("/proc/net/tcp").expect("read /proc/net/tcp");
    let addr = |field: &str| -> SocketAddr {
        // "0100007F:1F90": the IPv4 address as the kernel's 32-bit word in native byte order,
        // then the port.
        let (ip, port) = field.split_once(':').expect("address:port");
        let ip = u32::from_str_radix(ip, 16).expect("hex address");
        let port = u16::from_str_radix(port, 16).expect("hex port");
        SocketAddr::from((std::net::Ipv4Addr::from(ip.to_ne_bytes()), port))
    };
    text.lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            TcpEntry {
                local: addr(f[1]),
                remote: addr(f[2]),
                state: u8::from_str_radix(f[3], 16).expect("hex state"),
                inode: f[9].parse().expect("inode"),
            }
        })
        .collect()
}

/// Polls `done` until it holds; fails, naming `what`, after 30 s.
#[cfg(target_os = "linux")]
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{what}: not within 30 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A request whose headers are still arriving when SIGTERM comes is answered, while new
/// connections are refused. Each step waits for what the kernel shows (the connection accepted
/// by serve, then its listening sockets gone), not for a delay in which serve may not have run.
#[cfg(target_os = "linux")]
#[test]
fn sigterm_finishes_the_request_in_flight() {
    let dir = temp();
    let mut server = Server::start(dir.path(), &[]);
    let addr = server.addr;
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET /id HTTP/1.1\r\nHost: x\r\n").unwrap();
    // In flight: serve has accepted the connection (a connection still in the listen queue when
    // the listener closes is reset, not served).
    let client = s.local_addr().unwrap();
    wait_for("serve accepts the connection", || {
        tcp_table()
            .iter()
            .any(|e| e.local == addr && e.remote == client && e.inode != 0)
    });
    server.sigterm();
    wait_for("serve closes its listening sockets", || {
        !tcp_table()
            .iter()
            .any(|e| e.local.port() == addr.port() && e.state == 0x0A)
    });
    // New connections are refused once the listeners are closed.
    assert!(
        TcpStream::connect(addr).is_err(),
        "still accepting after SIGTERM"
    );
    write!(s, "\r\n").unwrap();
    let r = read_one(&mut s);
    assert_eq!(r.status, 200);
    assert!(r.body.trim_end().parse::<u64>().is_ok(), "{}", r.body);
    let (status, err) = server.wait(Duration::from_secs(5));
    assert!(status.success(), "{status}: {err}");
}

#[test]
fn serve_reports_an_exhausted_lifetime() {
    let dir = temp();
    // 5 time bits: 32 seconds from an epoch that is now, 1,024 IDs each. With --unbounded-lead
    // (Java's borrowing) a batch of 100,000 IDs borrows every second left and runs into the end
    // of the time bits. Nothing goes stale (max lag 10 minutes): this holds as long as serve
    // starts within 31 s of here, however busy the machine.
    let epoch_second = now();
    let epoch = epoch_second.to_string();
    let mut server = Server::start(
        dir.path(),
        &[
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
        ],
    );
    // A lifetime of seconds: its end to the second.
    let last = jiff::Timestamp::from_second(epoch_second + 31).unwrap();
    assert!(
        server.startup[0].contains(&format!(
            "(until {last}): sustains 1,024 IDs/s per worker without borrowing; borrowing is \
             unbounded (--unbounded-lead, Java's behaviour): every 1,024 IDs beyond that rate use \
             up one more second of the layout's lifetime ahead of the clock"
        )),
        "{:?}",
        server.startup
    );
    let addr = server.addr;
    // Without a cap there is no batch limit but the count's own; the IDs run out on the way.
    let drained = get(addr, "/ids?count=100000");
    assert_error(&drained, 503, "time bits exhausted");
    let r = get(addr, "/healthz");
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(
        r.body
            .starts_with(r#"{"status":"unavailable","reason":"lifetime exhausted"#),
        "{}",
        r.body
    );
    assert_error(&get(addr, "/id"), 503, "time bits exhausted");
    server.sigterm();
    let (status, err) = server.wait(Duration::from_secs(5));
    assert!(status.success(), "{status}: {err}");
}

/// What serve says at start: the layout's trade-off in numbers, then the state file, then the
/// address.
#[test]
fn serve_states_its_trade_off_at_start() {
    let dir = temp();
    let server = Server::start(dir.path(), &["--worker-id", "4"]);
    let state = dir.path().canonicalize().unwrap().join("ringflake.state");
    assert_eq!(
        server.startup[..2],
        [
            "ringflake: layout 31/10/22 from 2025-01-01 (until 2093-01-19): sustains 4,194,304 \
             IDs/s per worker without borrowing; borrowing absorbs a burst of 41,943,040 IDs \
             (max-lead 10 s); at the cap, takes wait for the clock (lead-policy wait); \
             /ids?count=N up to 100,000"
                .to_string(),
            format!(
                "ringflake: state file {}: a restart of worker id 4 starts above the last second \
                 it records",
                state.display()
            ),
        ],
        "{:?}",
        server.startup
    );
    assert_eq!(server.startup.len(), 3, "{:?}", server.startup);
    assert!(
        server.startup[2].contains("with worker id 4 (fixed worker id 4); "),
        "{:?}",
        server.startup
    );
    assert_eq!(get(server.addr, "/id").status, 200);
    assert!(state.exists());
}

/// A small layout with a one-second cap: the start-up line's numbers follow, and a batch above
/// what the cap holds is refused before anything is taken.
#[test]
fn serve_refuses_a_batch_the_lead_cap_cannot_hold() {
    let dir = temp();
    let server = Server::start(
        dir.path(),
        &[
            "--worker-id",
            "2",
            "--time-bits",
            "30",
            "--seq-bits",
            "10",
            "--max-lead",
            "1",
            "--no-state-file",
        ],
    );
    assert!(
        server.startup[0].starts_with(
            "ringflake: layout 30/23/10 from 2025-01-01 (until 2059-01-10): sustains 1,024 IDs/s \
             per worker without borrowing; borrowing absorbs a burst of 1,024 IDs (max-lead 1 s); \
             at the cap, takes wait for the clock (lead-policy wait); /ids?count=N up to 2,048"
        ),
        "{:?}",
        server.startup
    );
    assert_eq!(
        server.startup[1],
        "ringflake: no state file (--no-state-file): a restart of worker id 2 within 1 s \
         (max-lead) of this run's end can repeat its IDs"
    );
    let addr = server.addr;
    let issued = || -> u64 {
        let body = get(addr, "/healthz").body;
        let rest = body.split("\"issued\":").nth(1).expect("issued");
        rest.trim_end_matches('}').parse().unwrap()
    };
    let before = issued();
    assert_error(
        &get(addr, "/ids?count=2049"),
        400,
        "count 2049 is more than the generator can take at once: at most 2048 IDs \
         ((max-lead 1 s + 1) x 2^10 IDs a second)",
    );
    assert_eq!(issued(), before, "the refused batch took nothing");
    // The count's own grammar and range come first.
    assert_error(
        &get(addr, "/ids?count=100001"),
        400,
        "count 100001 out of range",
    );
    // One second's worth is always there (the rest of this second, or the next one).
    let r = get(addr, "/ids?count=1000");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(json_ids(&r.body).len(), 1000);
    assert!(!dir.path().join("ringflake.state").exists());
}

/// A take on a generator that cannot serve for longer than `max-lag` gets a 503 at once instead
/// of waiting `--max-wait` (here 2 s) for nothing: a state file (of the first format, one second
/// for every worker id) records a second an hour ahead (as after the clock was set back an hour),
/// so the generator may not make any ID for an hour. The answer names that reason and when it
/// ends, with `Retry-After` until then, not "at its lead cap", which is for demand above the rate.
#[test]
fn serve_answers_503_while_the_lead_cap_holds_it() {
    let dir = temp();
    let ahead = now() + 3600;
    std::fs::write(
        dir.path().join("ahead.state"),
        format!("ringflake-reach 1\n{ahead}\n"),
    )
    .unwrap();
    let mut server = Server::start(
        dir.path(),
        &[
            "--worker-id",
            "3",
            "--state-file",
            "ahead.state",
            "--max-wait",
            "2",
        ],
    );
    let addr = server.addr;
    for path in ["/id", "/ids?count=10"] {
        let start = Instant::now();
        let r = get(addr, path);
        let took = start.elapsed();
        assert_error(
            &r,
            503,
            "worker id 3 reserved ahead of the clock: its IDs may already reach",
        );
        assert!(
            r.body.contains(&format!("(unix second {ahead})")),
            "{}",
            r.body
        );
        let retry: u64 = r
            .headers
            .lines()
            .find_map(|l| l.strip_prefix("retry-after: "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        assert!(
            (3580..=3600).contains(&retry),
            "Retry-After {retry}: {}",
            r.headers
        );
        assert!(
            took < Duration::from_millis(1500),
            "{path} answered after {took:?}, not at once"
        );
    }
    let r = get(addr, "/healthz");
    assert_eq!(r.status, 503, "{}", r.body);
    // Still serving, and stopping cleanly.
    assert_eq!(get(addr, "/parse/1").status, 200);
    server.sigterm();
    let (status, err) = server.wait(Duration::from_secs(10));
    assert!(status.success(), "{status}: {err}");
}

#[test]
fn serve_refuses_a_busy_address() {
    let dir = temp();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    fails(
        dir.path(),
        &["serve", "--worker-id", "1", "--listen", &addr],
        1,
        &format!("cannot listen on {addr}"),
    );
}

/// A start refused for what needs no worker id takes no row of the worker table, and no lease:
/// Java's defaults (whose time bits ran out on 2024-11-20), with recycling and without (under
/// `Restart=on-failure` every such start took a row, until the table was full), an address in
/// use, a `--config` whose second generator's layout has run out (the first takes none either),
/// and `gen` with Java's defaults.
#[test]
fn a_refused_start_takes_no_worker_id() {
    let dir = temp();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().to_string();
    let java = JAVA_DEFAULTS;
    std::fs::write(
        dir.path().join("two.toml"),
        "[generators.orders]\ndb = \"ringflake.db\"\n\n[generators.legacy]\nlayout = \"uidgenerator\"\ndb = \"ringflake.db\"\n",
    )
    .unwrap();
    let refusals: [(Vec<&str>, &str); 6] = [
        (
            [
                &["serve", "--no-recycle", "--listen", "127.0.0.1:0"],
                &java[..],
            ]
            .concat(),
            "time bits exhausted",
        ),
        (
            vec![
                "serve",
                "--layout",
                "uidgenerator",
                "--listen",
                "127.0.0.1:0",
            ],
            "time bits exhausted",
        ),
        (vec!["serve", "--listen", &busy], "address already in use"),
        (
            vec![
                "serve",
                "--worker-id",
                "3",
                "--listen",
                "127.0.0.1:0",
                "--config",
                "two.toml",
            ],
            "[generators.legacy]",
        ),
        (
            [&["gen", "--no-recycle"], &java[..]].concat(),
            "time bits exhausted",
        ),
        (
            vec!["gen", "--layout", "uidgenerator"],
            "time bits exhausted",
        ),
    ];
    let table = ringflake::DatabaseAssigner::sqlite(dir.path().join("ringflake.db")).unwrap();
    for (args, needle) in refusals {
        fails(dir.path(), &args, 1, needle);
        assert_eq!(table.list().unwrap(), [], "ringflake {args:?} took a row");
    }
}

#[test]
fn a_second_serve_on_the_same_port_fails() {
    let dir = temp();
    // Two services with one worker id on one port would hand out the same IDs, half each.
    let first = Server::start(dir.path(), &["--worker-id", "9"]);
    let addr = first.addr.to_string();
    // From another directory: in the same one, the first's hold on worker id 9 and the state
    // file refuses it before it listens.
    let elsewhere = temp();
    let second = ringflake(elsewhere.path())
        .args(["serve", "--worker-id", "9", "--listen", &addr])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the second serve");
    let (status, err) = exit_within(second, Duration::from_secs(5));
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "cannot listen on {addr}: address already in use (is another ringflake serve running?)"
        )),
        "{err}"
    );
    // The first one serves on, every request.
    for _ in 0..20 {
        assert_eq!(get(first.addr, "/id").status, 200);
    }
}

// ---------------------------------------------------------------------------------------------
// Server worker tables (features mysql, postgres)
// ---------------------------------------------------------------------------------------------

/// `gen` twice and `workers` against a real server named by `var` (`.ci/run` starts throw-away
/// ones). The tests that call it are `#[ignore]`d (`-- --include-ignored` runs them), and fail
/// without the variable, naming it.
fn gen_and_workers_on(flag: &str, var: &str) {
    let url = match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => url,
        _ => panic!(
            "{var} is not set: this test needs a real server, whose WORKER_NODE table it writes \
             (give it a throw-away database); `bash .ci/run` starts one and sets {var}"
        ),
    };
    let dir = temp();
    // An explicit layout, so that the worker field is where this test looks for it.
    let layout = common::LAYOUT_30_20_13;
    let worker = |out: &str| -> (u64, Vec<u64>) {
        let ids: Vec<u64> = out.lines().map(|l| l.parse().unwrap()).collect();
        ((ids[0] >> 13) & ((1 << 20) - 1), ids)
    };
    let gen_args = |extra: &[&'static str]| -> Vec<String> {
        // Without a state file: with one, a run takes its gone predecessor's row back (a restart
        // keeps its worker id), and this test is about two runs on two rows.
        [
            "gen",
            "-n",
            "1000",
            flag,
            &url,
            "--create-table",
            "--no-state-file",
        ]
        .iter()
        .chain(&layout)
        .chain(extra)
        .map(|a| a.to_string())
        .collect()
    };
    let run_gen = |extra: &[&'static str]| {
        let args = gen_args(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(dir.path(), &args)
    };
    let (first, a) = worker(&run_gen(&[]));
    let (second, b) = worker(&run_gen(&["--recycle", "--db-timeout", "5"]));
    assert_ne!(first, second, "each run takes its own worker id");
    let all: HashSet<u64> = a.iter().chain(&b).copied().collect();
    assert_eq!(all.len(), 2000);

    let list = ok(dir.path(), &["workers", flag, &url]);
    let ids: HashSet<u64> = list
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    assert!(ids.contains(&first) && ids.contains(&second), "{list}");
    // The table is named without the password.
    let password = url
        .split_once("://")
        .and_then(|(_, rest)| rest.rsplit_once('@'))
        .and_then(|(userinfo, _)| userinfo.split_once(':'))
        .map(|(_, p)| p.to_string())
        .unwrap_or_default();
    assert!(!password.is_empty() && !list.contains(&password), "{list}");
    assert!(
        list.lines()
            .last()
            .unwrap()
            .contains(&format!("{}://", &flag[2..])),
        "{list}"
    );
}

#[test]
#[ignore = "needs RINGFLAKE_MYSQL_URL (a MariaDB/MySQL server; .ci/run starts one)"]
fn gen_and_workers_on_mysql() {
    gen_and_workers_on("--mysql", "RINGFLAKE_MYSQL_URL");
}

#[test]
#[ignore = "needs RINGFLAKE_POSTGRES_URL (a PostgreSQL server; .ci/run starts one)"]
fn gen_and_workers_on_postgres() {
    gen_and_workers_on("--postgres", "RINGFLAKE_POSTGRES_URL");
}

/// HEAD answers what GET would, headers only, and takes no ID (it used to take them: HEAD
/// /ids?count=100000 consumed 100,000 IDs); a bad count is still a 400.
#[test]
fn head_takes_no_ids() {
    let dir = temp();
    let server = Server::start(dir.path(), &["--worker-id", "3", "--no-state-file"]);
    let addr = server.addr;
    let issued = || -> u64 {
        let body = get(addr, "/healthz").body;
        let rest = body.split("\"issued\":").nth(1).expect("issued");
        rest.trim_end_matches('}').parse().unwrap()
    };
    let first = get(addr, "/id");
    assert_eq!(first.status, 200);
    let before = issued();
    assert_eq!(before, 1);
    for path in ["/id", "/ids?count=100000", "/ids?count=5"] {
        let r = http(addr, "HEAD", path);
        assert_eq!(r.status, 200, "HEAD {path}");
        assert!(r.body.is_empty(), "HEAD {path} has a body: {}", r.body);
    }
    assert_eq!(http(addr, "HEAD", "/ids?count=x").status, 400);
    assert_eq!(issued(), before, "HEAD took IDs");
    let next: u64 = get(addr, "/id").body.trim().parse().unwrap();
    assert!(next > first.body.trim().parse::<u64>().unwrap());
    assert_eq!(issued(), before + 1);
}

/// `parse` reads IDs from standard input when given none, or `-`: `gen | parse` works, and a
/// bad line is reported as a bad argument is.
#[test]
fn parse_reads_standard_input() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let ids = stdout(&run(dir.path(), &["gen", "-n", "3", "--worker-id", "5"]));
    for args in [&["parse"][..], &["parse", "-"][..]] {
        let mut child = ringflake(dir.path())
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        write!(input, "{ids}\nnot-an-id\n").unwrap();
        drop(input);
        let o = child.wait_with_output().unwrap();
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        for (line, id) in lines.iter().zip(ids.lines()) {
            assert!(line.starts_with(&format!("{{\"UID\":\"{id}\"")), "{line}");
            assert!(line.contains("\"workerId\":\"5\""), "{line}");
        }
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("ID \"not-an-id\" is not a decimal number"),
            "{}",
            stderr(&o)
        );
    }
}

/// Completion scripts for each shell, man pages for ringflake and its commands, and a version
/// naming the commit and the features.
#[test]
fn completions_man_pages_and_version() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, mark) in [
        ("bash", "complete -F _ringflake"),
        ("zsh", "#compdef ringflake"),
        ("fish", "complete -c ringflake"),
        ("elvish", "ringflake"),
        ("powershell", "ringflake"),
    ] {
        let o = run(dir.path(), &["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        assert!(script.contains(mark), "{shell}: {script}");
        if shell == "bash" {
            assert!(
                script.contains("--max-wait") && script.contains("completions"),
                "{script}"
            );
        }
    }
    fails(
        dir.path(),
        &["completions", "tcsh"],
        2,
        "invalid value 'tcsh'",
    );
    let page = stdout(&run(dir.path(), &["man"]));
    assert!(
        page.starts_with(".ie") && page.contains(".TH ringflake 1"),
        "{page}"
    );
    let serve = stdout(&run(dir.path(), &["man", "serve"]));
    assert!(
        serve.contains(".TH ringflake-serve 1") && serve.contains("max\\-wait"),
        "{serve}"
    );
    assert!(serve.contains("gRPC"), "serve's page names gRPC");
    fails(
        dir.path(),
        &["man", "frobnicate"],
        1,
        "no command \"frobnicate\": expected one of serve",
    );
    let version = stdout(&run(dir.path(), &["--version"]));
    let want = format!("ringflake {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(version.starts_with(&want), "{version}");
    assert!(
        version.contains(", features: ") && version.contains("etcd, grpc"),
        "{version}"
    );
    let commit: String = version[want.len()..]
        .chars()
        .take_while(|c| *c != ',')
        .collect();
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{version}"
    );
    assert_eq!(
        stdout(&run(dir.path(), &["serve", "-V"])),
        version.replacen("ringflake", "ringflake-serve", 1)
    );
}
