//! The presets end to end, through the real binary: `gen --layout twitter`, `serve --layout
//! leaf` across restarts on one worker table and state file, Leaf's decode route, and a
//! prefetching client of a millisecond service (its `max_lag` in the service's ticks).

#![cfg(unix)]

mod common;

use ringflake::Layout;

/// The real binary: `gen --layout twitter` twice and `serve --layout leaf` twice, killed in
/// between, on one directory (its SQLite worker table and state file): every ID decodes with
/// the preset (worker id and millisecond), all are unique and each run's IDs lie above the
/// previous run's; Leaf's decode route answers with the ID's millisecond.
#[test]
fn binary_gen_and_serve_with_presets_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::twitter();
    let started = (common::unix_now() * 1000.0) as i64;
    let mut runs: Vec<Vec<u64>> = Vec::new();
    for _ in 0..2 {
        let ids = common::gen_ids(dir.path(), &["gen", "--layout", "twitter", "-n", "50000"]);
        assert_eq!(ids.len(), 50_000);
        runs.push(ids);
    }
    for _ in 0..2 {
        let mut serve = common::Serve::start(dir.path(), &["--layout", "leaf"]);
        let addr = serve.addr();
        let mut ids = Vec::new();
        for _ in 0..10 {
            let reply = common::get(addr, "/ids?count=5000");
            assert_eq!(reply.status, 200, "{}", reply.body);
            ids.extend(common::json_ids(&reply.body));
        }
        let last = *ids.last().unwrap();
        let reply = common::get(addr, &format!("/decodeSnowflakeId?snowflakeId={last}"));
        assert_eq!(reply.status, 200, "{}", reply.body);
        let p = layout.parse(last).unwrap();
        let millis = common::json_str(&reply.body, "timestamp").unwrap();
        assert!(
            millis.starts_with(&format!("{}(", p.unix_millis)),
            "{millis} for {p:?}"
        );
        assert!(
            millis.ends_with(&format!(".{:03})", p.unix_millis % 1000)),
            "{millis}"
        );
        serve.kill();
        runs.push(ids);
    }
    let ended = (common::unix_now() * 1000.0) as i64;
    let mut previous = 0;
    let mut all = std::collections::HashSet::new();
    for (run, ids) in runs.iter().enumerate() {
        assert!(
            ids[0] > previous,
            "run {run} starts at {} below {previous}",
            ids[0]
        );
        for w in ids.windows(2) {
            assert!(w[0] < w[1], "run {run}: {} then {}", w[0], w[1]);
        }
        for &id in ids {
            assert!(all.insert(id), "{id} repeated");
            let p = layout.parse(id).unwrap();
            assert_eq!(p.worker_id, 1, "{p:?}");
            // Within the test's time, plus the lead cap.
            assert!(
                (started - 1_000..=ended + 11_000).contains(&p.unix_millis),
                "{p:?} outside {started}..{ended}"
            );
        }
        previous = *ids.last().unwrap();
    }
}

/// At light load a millisecond ID tells the time: `serve --layout twitter` asked for one ID every
/// 37 ms; each carries a millisecond at most 100 ms before the request was sent (the filler's
/// 10 ms rounds, plus a loaded machine's scheduling) and not after the answer came. With
/// 250 ms rounds that kept every tick's IDs up to `max_lag` they were 750 to 995 ms old.
#[test]
fn light_load_ids_carry_a_recent_millisecond() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::twitter();
    let serve = common::Serve::start(dir.path(), &["--layout", "twitter"]);
    let addr = serve.addr();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut ages = Vec::new();
    for _ in 0..30 {
        let sent = (common::unix_now() * 1000.0) as i64;
        let reply = common::get(addr, "/ids?count=1");
        let came = (common::unix_now() * 1000.0).ceil() as i64;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let id = common::json_ids(&reply.body)[0];
        let millis = layout.parse(id).unwrap().unix_millis;
        assert!(millis <= came, "{millis} after the answer at {came}");
        ages.push(sent - millis);
        std::thread::sleep(std::time::Duration::from_millis(37));
    }
    ages.sort_unstable();
    eprintln!("ages (ms, at the request): {ages:?}");
    assert!(
        ages[ages.len() - 1] <= 100,
        "IDs up to {} ms old: {ages:?}",
        ages[ages.len() - 1]
    );
}

/// Sonyflake's order (the sequence above the machine id) through the real binary: `gen` and
/// `serve` on one directory, killed in between; every ID parses with the preset to worker 1 and
/// a 10 ms tick of the test's time, each run above the last, none twice, and one worker's IDs
/// of a tick 2^16 apart.
#[test]
fn binary_makes_sonyflake_ids() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::sonyflake();
    let started = (common::unix_now() * 1000.0) as i64;
    let mut runs: Vec<Vec<u64>> = Vec::new();
    runs.push(common::gen_ids(
        dir.path(),
        &["gen", "--layout", "sonyflake", "-n", "3000"],
    ));
    let mut serve = common::Serve::start(dir.path(), &["--layout", "sonyflake"]);
    let reply = common::get(serve.addr(), "/ids?count=3000");
    assert_eq!(reply.status, 200, "{}", reply.body);
    runs.push(common::json_ids(&reply.body));
    serve.kill();
    let ended = (common::unix_now() * 1000.0) as i64;
    let mut previous = 0;
    let mut all = std::collections::HashSet::new();
    for (run, ids) in runs.iter().enumerate() {
        assert_eq!(ids.len(), 3000, "run {run}");
        assert!(
            ids[0] > previous,
            "run {run} starts at {} below {previous}",
            ids[0]
        );
        assert_eq!(
            ids[1] - ids[0],
            1 << 16,
            "run {run}: the sequence above the machine id"
        );
        for w in ids.windows(2) {
            assert!(w[0] < w[1], "run {run}: {} then {}", w[0], w[1]);
        }
        for &id in ids {
            assert!(all.insert(id), "{id} repeated");
            let p = layout.parse(id).unwrap();
            assert_eq!(p.worker_id, 1, "{p:?}");
            assert_eq!(p.unix_millis % 10, 0, "{p:?}");
            assert!(
                (started - 1_000..=ended + 11_000).contains(&p.unix_millis),
                "{p:?} outside {started}..{ended}"
            );
        }
        previous = *ids.last().unwrap();
    }
}

/// A prefetching client of a millisecond service takes the service's tick from its layout: IDs
/// it holds are dropped once 1 s (1,000 ticks) behind the clock, not 1,000 s.
#[test]
fn remote_client_of_a_millisecond_service() {
    let dir = tempfile::tempdir().unwrap();
    let serve = common::Serve::start(dir.path(), &["--layout", "twitter"]);
    let client = ringflake::RemoteGenerator::builder(format!("http://{}", serve.addr()))
        .capacity(1 << 14)
        .max_lag(std::time::Duration::from_secs(1))
        .wait(std::time::Duration::from_secs(10))
        .build()
        .unwrap();
    let layout = Layout::twitter();
    let first = layout.parse(client.next_id().unwrap()).unwrap();
    let now = (common::unix_now() * 1000.0) as i64;
    assert!(
        (now - 2_000..=now + 11_000).contains(&first.unix_millis),
        "{first:?} at {now}"
    );
    // The client holds prefetched IDs of that tick; 1.5 s later they are stale.
    std::thread::sleep(std::time::Duration::from_millis(1_500));
    let later = layout.parse(client.next_id().unwrap()).unwrap();
    let now = (common::unix_now() * 1000.0) as i64;
    // Checked against the tick the fetcher last published (every 20 ms at most): 1 s plus that,
    // with room for scheduling on a busy machine; a client counting seconds hands out IDs 1.5 s
    // old here.
    assert!(
        later.unix_millis > now - 1_200,
        "an ID {} ms old handed out: {later:?}",
        now - later.unix_millis
    );
}

/// A `--config` table takes `layout = "NAME"` as `--layout NAME`, and refuses it beside widths.
#[test]
fn config_tables_take_a_preset() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ids.toml"),
        // Leaf's layout beside the default one: every pair of worker ids meets somewhere, so
        // the two are declared apart.
        "[generators.orders]\nlayout = \"leaf\"\nworker-id = 3\nnamespace = \"orders\"\n",
    )
    .unwrap();
    let serve = common::Serve::start(dir.path(), &["--config", "ids.toml"]);
    let reply = common::get(serve.addr(), "/id/orders");
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id: u64 = reply.body.trim().parse().unwrap();
    let p = Layout::leaf().parse(id).unwrap();
    assert_eq!(p.worker_id, 3, "{p:?}");
    let now = (common::unix_now() * 1000.0) as i64;
    assert!(
        (now - 2_000..=now + 11_000).contains(&p.unix_millis),
        "{p:?}"
    );
    drop(serve);

    std::fs::write(
        dir.path().join("bad.toml"),
        "[generators.orders]\nlayout = \"leaf\"\ntime-bits = 40\nworker-id = 3\n",
    )
    .unwrap();
    let out = common::ringflake(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--config", "bad.toml"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("bad.toml") && err.contains("--layout leaf sets the widths"),
        "{err}"
    );
}
