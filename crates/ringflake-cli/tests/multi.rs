//! One `ringflake serve`, several generators: named generators from `--config`, each on its own
//! layout, worker id, filler, state file and metrics label; Meituan Leaf's routes; the status
//! page and `/status`, in a real browser too. Every test runs the real binary as a subprocess, in
//! a temporary directory (its SQLite worker table and state files land there).

mod common;

use common::{Serve, get, json_ids, json_int, ringflake, wait_until};
use ringflake::{DatabaseAssigner, Layout};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The default generator from the flags (the default 31/10/22 layout, worker id from the SQLite
/// table), and two from the file on other layouts: `orders` (32/18/13 from 2020-01-01, from the
/// same table) and `users` (35/8/20, fixed worker id 7, no state file, no borrowing).
const CONFIG: &str = r#"
# Two generators besides the default one.
[generators.orders]
time-bits = 32
worker-bits = 18
seq-bits = 13
epoch = 2020-01-01
tz = "UTC"
lease-window = 120

[generators.users]
time-bits = 35
worker-bits = 8
seq-bits = 20
worker-id = 7
no-state-file = true
max-lead = 0
# Its worker field meets the default generator's worker id 1 (ID 7340032 is both's): its IDs
# are declared a space of their own.
namespace = "users"
"#;

fn layouts() -> [(&'static str, Layout); 3] {
    let epoch_2020 = 1_577_836_800;
    [
        ("default", Layout::default()),
        ("orders", Layout::new(32, 18, 13, epoch_2020).unwrap()),
        (
            "users",
            Layout::new(35, 8, 20, ringflake::DEFAULT_EPOCH_SECONDS).unwrap(),
        ),
    ]
}

fn unix_now() -> i64 {
    common::unix_now() as i64
}

/// A temporary directory with `ringflake.toml` holding `config`.
fn dir_with(config: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ringflake.toml");
    std::fs::write(&path, config).unwrap();
    (dir, path)
}

/// `serve --config ringflake.toml` plus `extra`, ready.
fn serve(dir: &Path, extra: &[&str]) -> Serve {
    let mut args = vec!["--config", "ringflake.toml"];
    args.extend_from_slice(extra);
    Serve::start(dir, &args)
}

/// The string field `name` of a flat JSON object.
fn json_str<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    let rest = body.split(&format!("\"{name}\":\"")).nth(1)?;
    rest.split('"').next()
}

/// SIGTERM, then waits (at most 60 s) for the process to end; its output.
fn sigterm(serve: &mut Serve) -> String {
    let status = Command::new("kill")
        .args(["-TERM", &serve.pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    wait_until("serve exits after SIGTERM", Duration::from_secs(60), || {
        !serve.running()
    });
    // The output threads read to the end of the pipes.
    std::thread::sleep(Duration::from_millis(200));
    serve.output()
}

/// Decodes `id` with `layout`: (unix second, worker id, sequence).
fn decode(layout: &Layout, id: u64) -> (i64, u64, u64) {
    let p = layout.parse(id).unwrap();
    (p.unix_seconds, p.worker_id, p.sequence)
}

/// Each route answers from the generator it names: the IDs decode, with that generator's layout
/// alone, to its worker id and to the current second; `/parse/{name}/{id}` decodes with it.
#[test]
fn three_generators_each_route_from_its_own() {
    let (dir, _) = dir_with(CONFIG);
    let mut serve = serve(dir.path(), &[]);
    let addr = serve.addr();
    let out = serve.output();
    assert!(
        out.contains("ringflake: generator orders: layout 32/18/13 from 2020-01-01"),
        "{out}"
    );
    assert!(out.contains("ringflake-orders.state"), "{out}");
    assert!(
        out.contains("generator users: worker id 7 (fixed worker id 7)"),
        "{out}"
    );
    let [(_, default), (_, orders), (_, users)] = layouts();
    let now = unix_now();
    let near = |second: i64| (now - 5..=now + 15).contains(&second);

    let id = |path: &str| -> u64 {
        let r = get(addr, path);
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        r.body.trim_end().parse().unwrap()
    };
    // default: worker id 1, the first row of the table; orders: the second.
    let (t, w, _) = decode(&default, id("/id"));
    assert!(near(t) && w == 1, "/id: {t} {w}");
    let (t, w, _) = decode(&orders, id("/id/orders"));
    assert!(near(t) && w == 2, "/id/orders: {t} {w}");
    let (t, w, _) = decode(&users, id("/id/users"));
    assert!(near(t) && w == 7, "/id/users: {t} {w}");
    // Decoded with another generator's layout, the same ID says something else: the fields
    // above prove which generator made it.
    let (t, w, _) = decode(&default, id("/id/users"));
    assert!(
        !(near(t) && w == 7),
        "users' ID reads the same in the default layout"
    );

    for (name, layout, worker) in [("orders", &orders, 2), ("users", &users, 7)] {
        let r = get(addr, &format!("/ids/{name}?count=5"));
        assert_eq!(r.status, 200, "{}", r.body);
        let ids = json_ids(&r.body);
        assert_eq!(ids.len(), 5);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        for &i in &ids {
            let (t, w, _) = decode(layout, i);
            assert!(near(t) && w == worker, "{name}: {i} -> {t} {w}");
        }
        // /parse/{name}/{id} decodes with the named generator's layout.
        let r = get(addr, &format!("/parse/{name}/{}", ids[0]));
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(
            json_str(&r.body, "workerId"),
            Some(worker.to_string().as_str()),
            "{}",
            r.body
        );
        let (_, _, seq) = decode(layout, ids[0]);
        assert_eq!(
            json_str(&r.body, "sequence"),
            Some(seq.to_string().as_str())
        );
    }
    // Unnamed routes serve default; /parse/default/ID the same.
    let d = id("/id");
    let r = get(addr, &format!("/parse/default/{d}"));
    assert_eq!(json_str(&r.body, "workerId"), Some("1"), "{}", r.body);
    assert_eq!(get(addr, &format!("/parse/{d}")).body, r.body);

    // An unknown name: 404 naming the known ones.
    for path in ["/id/nope", "/ids/nope?count=1", "/parse/nope/1"] {
        let r = get(addr, path);
        assert_eq!(r.status, 404, "{path}");
        assert!(
            r.body
                .contains(r#"no generator \"nope\": the generators are default, orders, users"#),
            "{path}: {}",
            r.body
        );
    }
    // Each generator's own checks: users has no lead, so one second's IDs at most per batch.
    let r = get(addr, "/ids/users?count=100000");
    assert_eq!(r.status, 200, "{}", r.body);
    let r = get(addr, "/ids/orders?count=100000");
    assert_eq!(r.status, 400, "orders' cap is 11 x 8,192: {}", r.body);
    assert!(r.body.contains("at most 90112 IDs"), "{}", r.body);

    // One generator label per generator on /metrics.
    let metrics = get(addr, "/metrics").body;
    for (label, worker) in [("ringflake", 1), ("orders", 2), ("users", 7)] {
        let series = format!("ringflake_worker_id{{generator=\"{label}\"}} {worker}");
        assert!(metrics.contains(&series), "{series} in {metrics}");
    }
    let labels = metrics
        .lines()
        .filter(|l| l.starts_with("ringflake_worker_id{"))
        .count();
    assert_eq!(labels, 3, "{metrics}");

    // The worker table shows whose row is whose: orders' HOST_NAME is `orders@host`.
    let rows = DatabaseAssigner::sqlite_read_only(dir.path().join("ringflake.db"))
        .unwrap()
        .list()
        .unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let host = ringflake::NodeInfo::detect().host_name;
    assert_eq!(rows[0].host_name, host);
    assert_eq!(rows[1].host_name, format!("orders@{host}"));
    let listing = ringflake(dir.path()).arg("workers").output().unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(listing.contains(&format!("orders@{host}")), "{listing}");

    // Each has its own state file.
    for file in ["ringflake.state", "ringflake-orders.state"] {
        assert!(dir.path().join(file).exists(), "{file}");
    }
    assert!(!dir.path().join("ringflake-users.state").exists());
    serve.kill();
}

/// SIGTERM releases every generator's lease: before, both leased rows reach minutes ahead;
/// after, neither is ahead of the clock.
#[test]
fn sigterm_releases_every_lease() {
    let config = format!("{CONFIG}\n[generators.payments]\nworker-bits = 12\nseq-bits = 20\n");
    let (dir, _) = dir_with(&config);
    let mut serve = serve(dir.path(), &[]);
    let addr = serve.addr();
    for path in ["/id", "/id/orders", "/id/payments", "/id/users"] {
        assert_eq!(get(addr, path).status, 200, "{path}");
    }
    let table = || {
        DatabaseAssigner::sqlite_read_only(dir.path().join("ringflake.db"))
            .unwrap()
            .list()
            .unwrap()
    };
    let before = table();
    assert_eq!(before.len(), 3, "default, orders, payments: {before:?}");
    let now = unix_now();
    for row in &before {
        assert!(row.lease_until > now + 60, "not leased ahead: {row:?}");
    }
    let out = sigterm(&mut serve);
    for line in [
        "ringflake: stopped; the filler is stopped and the lease of worker id 1 released",
        "ringflake: generator orders: stopped; the filler is stopped and the lease of worker id 2 released",
        "ringflake: generator payments: stopped; the filler is stopped and the lease of worker id 3 released",
        "ringflake: generator users: stopped; the filler is stopped (worker id 7)",
    ] {
        assert!(out.contains(line), "{line} in {out}");
    }
    let after = table();
    let now = unix_now();
    for row in &after {
        assert!(row.lease_until <= now + 1, "lease not released: {row:?}");
    }
}

/// Every config error stops the start naming the file, the line, the table, the key and the
/// reason, before any generator boots (no worker row is taken).
#[test]
fn bad_configs_name_the_file_the_key_and_the_reason() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "[generators.orders]\ntime-bits = 30\ntiem-bits = 3\n",
            &[],
            "ringflake.toml:3 [generators.orders] tiem-bits: unknown key: a generator's keys are \
             serve's generator flags: ",
        ),
        (
            "[generators.orders]\nworker-bits = 10\ntime-bits = 99\n",
            &[],
            "ringflake.toml:3 [generators.orders] time-bits: invalid value '99' for \
             '--time-bits <BITS>': 99 is not in 1..=61",
        ),
        (
            "[generators.orders]\nlead-policy = \"later\"\n",
            &[],
            "ringflake.toml:2 [generators.orders] lead-policy: invalid value 'later'",
        ),
        (
            "[generators.orders]\nrecycle = 3\n",
            &[],
            "ringflake.toml:2 [generators.orders] recycle: expected true or false, found integer 3",
        ),
        (
            "[generators.orders]\ntz = \"Mars/Olympus\"\n",
            &[],
            "ringflake.toml:1 [generators.orders]: unknown time zone \"Mars/Olympus\"",
        ),
        (
            "[generators.orders]\nworker-id = 3\ndb = \"x.db\"\n",
            &[],
            "ringflake.toml:1 [generators.orders]: choose one worker id source, got --db and \
             --worker-id",
        ),
        (
            "[generators.a]\nworker-id = 3\n\n[generators.b]\nworker-id = 3\n",
            &[],
            "ringflake.toml:4 [generators.b]: generators b and a could hand out the same IDs: b \
             has worker id 3 (fixed worker id 3) on layout 31/10/22 from 2025-01-01, a has \
             worker id 3 (fixed worker id 3) on layout 31/10/22 from 2025-01-01",
        ),
        // The default generator from the flags shares worker id 3 with a table.
        (
            "[generators.a]\nworker-id = 3\n",
            &["--worker-id", "3"],
            "ringflake.toml:1 [generators.a]: generators a and default could hand out the same \
             IDs",
        ),
        (
            "[generators.orders]\ntime-bits = 30\n\n[generators.orders]\ntime-bits = 31\n",
            &[],
            "ringflake.toml:4: duplicate key",
        ),
        (
            "[generators.\"a b\"]\n",
            &[],
            "[generators.a b]: generator name \"a b\" is not 1 to 24 letters, digits",
        ),
        (
            "listen = \"0.0.0.0:80\"\n",
            &[],
            "ringflake.toml:1: unknown field `listen`, expected `generators`",
        ),
        (
            "[generators.default]\ntime-bits = 30\nworker-bits = 20\n",
            &["--seq-bits", "13"],
            "ringflake.toml:1 [generators.default]: the generator flags --seq-bits conflict \
             with its [generators.default] table",
        ),
        (
            "[generators.ringflake]\n",
            &[],
            "generator ringflake has the name of the default generator's metrics label (--name \
             ringflake)",
        ),
    ];
    for (config, flags, expected) in cases {
        let (dir, _) = dir_with(config);
        let err = common::refused(common::serve_config(dir.path(), flags));
        assert!(
            err.contains("ringflake: error: ") && err.contains(expected),
            "config {config:?}: expected {expected:?} in {err}"
        );
        let db = dir.path().join("ringflake.db");
        if db.exists() {
            // The flags' default source opens the file; no table means no row either.
            let rows = DatabaseAssigner::sqlite_read_only(&db)
                .unwrap()
                .list()
                .unwrap_or_default();
            assert!(
                rows.is_empty(),
                "{config:?}: a worker row was taken before the config was checked: {rows:?}"
            );
        }
    }
    // A file that is not there.
    let dir = tempfile::tempdir().unwrap();
    let err = common::refused(common::serve_config(dir.path(), &[]));
    assert!(
        err.contains("cannot read the config file ringflake.toml"),
        "{err}"
    );
}

/// `[generators.default]` defines the default generator instead of the flags; RINGFLAKE_CONFIG
/// names the file as --config does.
#[test]
fn the_default_table_and_the_environment() {
    let (dir, _) = dir_with(
        "[generators.default]\ntime-bits = 30\nworker-bits = 20\nseq-bits = 13\nworker-id = 5\n",
    );
    let mut cmd = ringflake(dir.path());
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .env("RINGFLAKE_CONFIG", "ringflake.toml");
    let mut serve = Serve::launch_command(cmd);
    let addr = serve.ready(Duration::from_secs(60));
    let id: u64 = get(addr, "/id").body.trim_end().parse().unwrap();
    let (_, worker, _) = decode(
        &Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap(),
        id,
    );
    assert_eq!(worker, 5);
    let r = get(addr, "/id/orders");
    assert_eq!(r.status, 404);
    assert!(
        r.body.contains("the generators are default\""),
        "{}",
        r.body
    );
    serve.kill();
}

/// Meituan Leaf's routes, checked against what Leaf's server does (leaf-server, package
/// `com.sankuai.inf.leaf.server.controller`):
///
/// - `LeafController.getSnowflakeId`: `@RequestMapping("/api/snowflake/get/{key}")` returns
///   `String.valueOf(result.getId())`, the ID as a plain-text body (Spring's
///   `StringHttpMessageConverter`: `text/plain`); an empty key throws `NoKeyException`, a failed
///   generation `LeafServerException` (500). Leaf's snowflake service ignores the key
///   (`SnowflakeIDGenImpl.get(key)` never reads it). Here the key names a generator, and any
///   other key gets `default`'s IDs, as Leaf gives one generator's IDs to every key.
/// - `LeafMonitorController.decodeSnowflakeId`: `@RequestMapping("decodeSnowflakeId")` with
///   `@RequestParam("snowflakeId") String`, answers a `HashMap<String, String>` as JSON:
///   `timestamp` = `(id >> 22) + 1288834974657` rendered `millis + "(" + SimpleDateFormat(
///   "yyyy-MM-dd HH:mm:ss.SSS") + ")"` in the JVM's zone, `workerId` = bits 12..22, `sequenceId`
///   = bits 0..12, each a string. Jackson writes a `HashMap` in its iteration order: with
///   capacity 16, "workerId" hashes to bucket 2, "sequenceId" to 13, "timestamp" to 15, so the
///   body is `{"workerId":…,"sequenceId":…,"timestamp":…}` (Leaf's own comment shows another
///   order, written by hand). `Long.parseLong` failing (not a number) puts the one key `errorMsg`
///   ("snowflake Id反解析发生异常!") in the map, answered with a 200; a missing parameter is
///   Spring's 400. Here the fields are decoded with the `default` generator's layout and zone,
///   the milliseconds are the ID's second times 1000 (`.000`), and a bad or missing value is a
///   400 with `errorMsg` saying what is wrong.
#[test]
fn leaf_routes_answer_as_leaf_does() {
    let (dir, _) = dir_with(CONFIG);
    let mut serve = serve(dir.path(), &["--tz", "Asia/Shanghai"]);
    let addr = serve.addr();
    let [(_, default), (_, orders), _] = layouts();
    let now = unix_now();

    let r = get(addr, "/api/snowflake/get/orders");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.header("content-type").unwrap().starts_with("text/plain"),
        "{}",
        r.headers
    );
    // Leaf's bytes exactly: the digits, no newline (Java clients Long.parseLong the body).
    let (t, w, _) = decode(&orders, r.body.parse().unwrap());
    assert!((now - 5..=now + 15).contains(&t) && w == 2, "{t} {w}");
    // A key that names no generator: default's IDs, as Leaf gives any key its IDs.
    let r = get(addr, "/api/snowflake/get/leaf-segment-test");
    assert_eq!(r.status, 200, "{}", r.body);
    let id: u64 = r.body.parse().unwrap();
    let (t, w, seq) = decode(&default, id);
    assert!((now - 5..=now + 15).contains(&t) && w == 1, "{t} {w}");

    // No key: Spring matches no `{key}` (404); a key with a `/` matches no route either.
    for path in ["/api/snowflake/get/", "/api/snowflake/get/a/b"] {
        assert_eq!(get(addr, path).status, 404, "{path}");
    }

    let r = get(addr, &format!("/decodeSnowflakeId?snowflakeId={id}"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let date = jiff::Timestamp::from_second(t)
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::get("Asia/Shanghai").unwrap())
        .strftime("%Y-%m-%d %H:%M:%S.000")
        .to_string();
    assert_eq!(
        r.body,
        format!(
            r#"{{"workerId":"{w}","sequenceId":"{seq}","timestamp":"{}({date})"}}"#,
            t * 1000
        )
    );
    for (query, reason) in [
        ("snowflakeId=abc", "is not a decimal number"),
        ("snowflakeId=-1", "is negative"),
        ("snowflakeId=", "empty ID"),
        ("id=5", "missing query parameter snowflakeId"),
    ] {
        let r = get(addr, &format!("/decodeSnowflakeId?{query}"));
        assert_eq!(r.status, 400, "{query}: {}", r.body);
        assert!(
            r.body.starts_with("{\"errorMsg\":\""),
            "{query}: {}",
            r.body
        );
        assert!(r.body.contains(reason), "{query}: {}", r.body);
    }
    let r = get(addr, "/decodeSnowflakeId");
    assert_eq!(r.status, 400, "{}", r.body);
    serve.kill();
}

/// `/status` carries every generator's numbers, the same as the page shows, and a sample a
/// second of the IDs issued.
#[test]
fn status_json_has_every_generator() {
    let (dir, _) = dir_with(CONFIG);
    let mut serve = serve(dir.path(), &[]);
    let addr = serve.addr();
    let r = get(addr, "/ids/orders?count=1000");
    assert_eq!(r.status, 200);
    // Three samples make two rates.
    let start = Instant::now();
    let body = loop {
        let body = get(addr, "/status").body;
        let orders = body
            .split("\"name\":\"orders\"")
            .nth(1)
            .unwrap()
            .to_string();
        let rates = orders
            .split("\"rates\":[")
            .nth(1)
            .unwrap()
            .split(']')
            .next()
            .unwrap()
            .to_string();
        if rates.split(',').count() >= 2 {
            break body;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no rates: {body}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let r = get(addr, "/status");
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let generators: Vec<&str> = body.split("{\"name\":").skip(1).collect();
    assert_eq!(generators.len(), 3, "{body}");
    // The service itself: its build, since when it runs, where it listens.
    assert_eq!(
        common::json_str(&body, "version"),
        Some(env!("CARGO_PKG_VERSION")),
        "{body}"
    );
    assert!(
        common::json_str(&body, "commit").is_some_and(|c| c.len() == 12 || c == "unknown"),
        "{body}"
    );
    let started = common::json_int(&body, "started").unwrap();
    let uptime = common::json_int(&body, "uptime_seconds").unwrap();
    let now = common::unix_now() as i64;
    assert!(
        (now - 300..=now).contains(&started) && (0..300).contains(&uptime),
        "{body}"
    );
    assert!(
        body.contains(&format!(
            "\"listen\":[{{\"url\":\"http://{addr}\",\"serves\":\"every route\"}}]"
        )),
        "{body}"
    );
    for (g, (name, layout), worker) in [
        (generators[0], layouts()[0], 1),
        (generators[1], layouts()[1], 2),
        (generators[2], layouts()[2], 7),
    ] {
        assert!(g.starts_with(&format!("\"{name}\"")), "{g}");
        assert_eq!(json_int(g, "worker_id"), Some(worker), "{g}");
        assert_eq!(
            json_int(g, "time_bits"),
            Some(layout.time_bits().into()),
            "{g}"
        );
        assert_eq!(
            json_int(g, "seq_bits"),
            Some(layout.seq_bits().into()),
            "{g}"
        );
        assert_eq!(
            json_int(g, "epoch_seconds"),
            Some(layout.epoch_seconds()),
            "{g}"
        );
        let capacity = json_int(g, "capacity").unwrap();
        let available = json_int(g, "available").unwrap();
        assert!(capacity > 0 && (0..=capacity).contains(&available), "{g}");
        assert!(g.contains("\"healthy\":true,\"reason\":null"), "{g}");
        assert!(g.contains("\"filler_up\":true"), "{g}");
        let remaining = json_int(g, "remaining_seconds").unwrap();
        let lifetime = json_int(g, "lifetime_seconds").unwrap();
        assert!(0 < remaining && remaining < lifetime, "{g}");
        assert_eq!(
            json_str(g, "runs_out"),
            Some(layout.last_valid_date().as_str())
        );
        // The shown text: the same numbers.
        assert_eq!(
            json_str(g, "worker"),
            Some(worker.to_string().as_str()),
            "{g}"
        );
        assert!(
            json_str(g, "remaining")
                .unwrap()
                .contains(&layout.last_valid_date()[..10])
        );
        // Leased from the table, or none for the fixed id.
        let lease = json_str(g, "lease").unwrap();
        if worker == 7 {
            assert!(g.contains("\"lease_until\":null"), "{g}");
            assert!(lease.starts_with("none"), "{lease}");
        } else {
            assert!(json_int(g, "lease_until").unwrap() > unix_now(), "{g}");
            assert!(lease.starts_with("held until "), "{lease}");
        }
        assert!(g.contains("\"points\":\""), "{g}");
    }
    // orders issued its 1,000 IDs and the rates show them.
    assert!(
        json_int(generators[1], "issued").unwrap() >= 1000,
        "{}",
        generators[1]
    );
    let rates: Vec<f64> = generators[1]
        .split("\"rates\":[")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap()
        .split(',')
        .map(|r| r.parse().unwrap())
        .collect();
    assert!(rates.iter().sum::<f64>() >= 900.0, "{rates:?}");
    // The page itself, rendered by the server: every generator's name and worker id, no
    // script or style from elsewhere.
    let page = get(addr, "/");
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    for name in ["default", "orders", "users"] {
        assert!(
            page.body
                .contains(&format!("data-g=\"{name}\" data-k=\"worker\"")),
            "{name}"
        );
    }
    assert!(page.body.contains("<polyline"), "no chart");
    assert!(!page.body.contains("<!--CARDS-->"));
    assert!(!page.body.contains("src=\"http") && !page.body.contains("href=\"http"));
    serve.kill();
}

/// Where the CI keeps what a person looks at after a run: `$CARGO_TARGET_DIR/ci-artefacts`.
fn artefacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("ci-artefacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Headless Debian `chromium` with `args` then `url`; its stdout. Fails the test, saying how to
/// install it, when it is missing.
fn chromium(profile: &Path, args: &[&str], url: &str) -> String {
    let found = Command::new("chromium").arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        panic!("cannot run chromium: apt-get install chromium (the CI installs it)");
    }
    // Bounded: a browser that hangs fails the test instead of holding it up.
    let out = Command::new("timeout")
        .args(["120", "chromium"])
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("run chromium under timeout");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The status page in a real browser: headless chromium loads `/`, runs its script (which polls
/// `/status` and rewrites the values) and the DOM it ends with shows the live state of every
/// generator, and a chart with points; a screenshot goes to the CI's artefacts.
#[test]
#[ignore = "needs chromium (Debian's package; .ci/run installs it and runs ignored tests)"]
fn status_page_in_a_browser() {
    let (dir, _) = dir_with(CONFIG);
    let mut serve = serve(dir.path(), &[]);
    let addr = serve.addr();
    // Some IDs from each generator, then samples enough for a line on every chart.
    for _ in 0..3 {
        assert_eq!(get(addr, "/ids?count=20000").status, 200);
        assert_eq!(get(addr, "/ids/orders?count=5000").status, 200);
        assert_eq!(get(addr, "/ids/users?count=30000").status, 200);
        std::thread::sleep(Duration::from_millis(1100));
    }
    let profile = tempfile::tempdir().unwrap();
    let url = format!("http://{addr}/");
    let dom = chromium(
        profile.path(),
        &["--virtual-time-budget=5000", "--dump-dom"],
        &url,
    );
    // The script ran, reached /status and wrote what it got.
    // (The script's own text is in the DOM too: the marker is the element its answer changed.)
    assert!(
        dom.contains(r#"<span id="live" class="on">live, every second</span>"#),
        "the script did not show an answer of /status: {dom}"
    );
    let issued: Vec<i64> = ["default", "orders", "users"]
        .iter()
        .map(|name| {
            let cell = dom
                .split(&format!("data-g=\"{name}\" data-k=\"issued\">"))
                .nth(1)
                .unwrap_or_else(|| panic!("no issued value of {name}: {dom}"));
            cell.split('<')
                .next()
                .unwrap()
                .replace(',', "")
                .parse()
                .unwrap()
        })
        .collect();
    assert!(
        issued[0] >= 60_000 && issued[1] >= 15_000 && issued[2] >= 90_000,
        "{issued:?}"
    );
    // The service's limits, in the footer.
    assert!(
        dom.contains(r#"<p id="limits">Limits: 1,024 connections per listener ("#)
            && dom.contains("64 large answers (more than 256 IDs) written at once"),
        "no limits in {dom}"
    );
    // The service: its version, uptime and address, kept current by the script.
    let service = dom
        .split("<span class=\"meta\" id=\"service\">")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .unwrap_or_else(|| panic!("no service line: {dom}"));
    assert!(
        service.starts_with(&format!("ringflake {} (commit ", env!("CARGO_PKG_VERSION")))
            && !service.contains("features")
            && service.contains(" · up ")
            && service.contains(&format!("http://{addr} (every route)")),
        "{service}"
    );
    for (name, worker) in [("default", 1), ("orders", 2), ("users", 7)] {
        let shown = format!("data-g=\"{name}\" data-k=\"worker\">{worker}<");
        assert!(dom.contains(&shown), "{shown} in {dom}");
        // The chart's scale, the labelled fill bar, the idle capacity dimmed.
        let scale = dom
            .split(&format!("data-g=\"{name}\" data-k=\"scale\">"))
            .nth(1)
            .and_then(|rest| rest.split('<').next())
            .unwrap_or_else(|| panic!("no scale on {name}'s chart: {dom}"));
        assert!(scale.ends_with(" IDs/s") && scale != "1 IDs/s", "{scale}");
        let fill = format!(
            "<div class=\"barhead\"><span>Ring fill</span><span class=\"ok\" data-g=\"{name}\" \
             data-k=\"fill\">"
        );
        assert!(dom.contains(&fill), "{fill} in {dom}");
        let idle = format!("<span class=\"dim\" data-g=\"{name}\" data-k=\"unused\">");
        assert!(dom.contains(&idle), "{idle} in {dom}");
        let points = dom
            .split(&format!("data-g=\"{name}\" data-k=\"points\" points=\""))
            .nth(1)
            .unwrap_or_else(|| panic!("no chart of {name}: {dom}"))
            .split('"')
            .next()
            .unwrap();
        assert!(
            points.split(' ').filter(|p| p.contains(',')).count() >= 2,
            "{name}'s chart has fewer than 2 points: {points:?}"
        );
    }
    let shot = artefacts().join("status.png");
    let _ = std::fs::remove_file(&shot);
    chromium(
        profile.path(),
        &[
            "--virtual-time-budget=3000",
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,900",
        ],
        &url,
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    eprintln!("status page screenshot: {}", shot.display());
    serve.kill();
}

/// The environment variables are the flags': they define `default` only, never a table's
/// generator; with a `[generators.default]` table they conflict, named as variables.
#[test]
fn environment_variables_define_only_the_default() {
    let (dir, _) = dir_with("[generators.orders]\nworker-id = 4\n");
    let mut cmd = common::serve_config(dir.path(), &[]);
    cmd.env("RINGFLAKE_TIME_BITS", "30")
        .env("RINGFLAKE_WORKER_BITS", "20")
        .env("RINGFLAKE_SEQ_BITS", "13")
        .env("RINGFLAKE_WORKER_ID", "9");
    let mut serve = Serve::launch_command(cmd);
    let addr = serve.ready(Duration::from_secs(60));
    let small = Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
    let id: u64 = get(addr, "/id").body.trim_end().parse().unwrap();
    assert_eq!(decode(&small, id).1, 9);
    let id: u64 = get(addr, "/id/orders").body.trim_end().parse().unwrap();
    let (t, w, _) = decode(&Layout::default(), id);
    assert!(
        w == 4 && (unix_now() - 5..=unix_now() + 15).contains(&t),
        "{t} {w}"
    );
    serve.kill();

    let (dir, _) = dir_with("[generators.default]\nworker-id = 4\n");
    let mut cmd = common::serve_config(dir.path(), &[]);
    cmd.env("RINGFLAKE_MAX_LEAD", "3");
    let err = common::refused(cmd);
    assert!(
        err.contains(
            "ringflake.toml:1 [generators.default]: the generator flags --max-lead (from \
             RINGFLAKE_MAX_LEAD) conflict with its [generators.default] table"
        ),
        "{err}"
    );
}

/// A named generator's `HOST_NAME` (`NAME@host`) must fit Java's `VARCHAR(64)`: a longer one
/// fails the boot naming it, and the generators booted before it release their rows' leases.
#[test]
fn a_host_name_too_long_for_the_column_fails_the_boot() {
    let (dir, _) = dir_with("[generators.orders]\n");
    let host = "h".repeat(60);
    let mut cmd = common::serve_config(dir.path(), &[]);
    cmd.env("JPAAS_HOST", &host);
    let err = common::refused(cmd);
    assert!(
        err.contains(&format!(
            "ringflake.toml:1 [generators.orders]: worker id assignment failed: HOST_NAME \
             \"orders@{host}\" of generator orders is 67 characters, more than the 64 the \
             column holds"
        )),
        "{err}"
    );
    let rows = DatabaseAssigner::sqlite_read_only(dir.path().join("ringflake.db"))
        .unwrap()
        .list()
        .unwrap();
    assert_eq!(rows.len(), 1, "the default generator's row only: {rows:?}");
    assert_eq!(rows[0].host_name, host);
    assert!(
        rows[0].lease_until <= unix_now() + 1,
        "lease not released: {rows:?}"
    );
}

/// A named generator that loses its lease (its worker table out of reach past the lease window:
/// here its own SQLite file, locked by an exclusive transaction) shows it: `/status` and the page
/// say `LOST`, `/healthz` answers 503 naming the generator, and the others serve on. When its row
/// is then taken over in the table, it heals: a new worker id, on `/status` with the heal.
#[test]
fn a_lost_lease_shows_on_status_and_healthz() {
    // A table of its own gives orders worker id 1, as the default's gives the default generator:
    // a space of its own.
    let (dir, _) = dir_with(
        "[generators.orders]\nlease-window = 3\ndb = \"orders.db\"\ndb-timeout = 1\n\
         namespace = \"orders\"\n",
    );
    let mut serve = serve(dir.path(), &[]);
    let addr = serve.addr();
    assert_eq!(get(addr, "/healthz").status, 200);
    assert_eq!(get(addr, "/id/orders").status, 200);
    let conn = rusqlite::Connection::open(dir.path().join("orders.db")).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let start = Instant::now();
    while get(addr, "/healthz").status != 503 {
        if start.elapsed() > Duration::from_secs(30) {
            panic!(
                "/healthz still 200 after 30 s; now {}; /status {}",
                unix_now(),
                get(addr, "/status").body
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let health = get(addr, "/healthz").body;
    assert!(
        health
            .contains("\"reason\":\"generator orders: lease lost: the worker lease of worker id 1"),
        "{health}"
    );
    let status = get(addr, "/status").body;
    let orders = status.split("{\"name\":\"orders\"").nth(1).unwrap();
    assert!(
        orders.contains("\"healthy\":false") && orders.contains("\"lease_lost\":true"),
        "{orders}"
    );
    assert!(
        json_str(orders, "lease").unwrap().starts_with("LOST"),
        "{orders}"
    );
    let page = get(addr, "/").body;
    assert!(
        page.contains("class=\"bad\" data-g=\"orders\" data-k=\"lease\">LOST"),
        "{page}"
    );
    // The default generator serves on.
    assert_eq!(get(addr, "/id").status, 200);
    // What a recycler on another node would do meanwhile: take the row over (its own PORT and
    // lease). Once the table answers, the generator finds it and heals with a new worker id.
    conn.execute(
        "UPDATE WORKER_NODE SET PORT = '1700000000000-1', LEASE_UNTIL = LEASE_UNTIL + 1000",
        [],
    )
    .unwrap();
    conn.execute_batch("COMMIT").unwrap();
    let orders_worker = |body: &str| {
        let orders = body
            .split("{\"name\":\"orders\"")
            .nth(1)
            .unwrap()
            .to_string();
        (json_int(&orders, "worker_id"), json_int(&orders, "heals"))
    };
    let start = Instant::now();
    while orders_worker(&get(addr, "/status").body) != (Some(2), Some(1)) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "not healed: /status {}",
            get(addr, "/status").body
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(get(addr, "/healthz").status, 200);
    let id: u64 = get(addr, "/id/orders").body.trim_end().parse().unwrap();
    assert_eq!(decode(&Layout::default(), id).1, 2, "the new worker id");
    serve.kill();
}
