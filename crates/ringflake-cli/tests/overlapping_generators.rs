//! `serve --config` never runs two generators that could hand out the same ID: the real binary
//! refuses, at start, generators whose worker ids and layouts meet (a fixed id beside a table's,
//! two tables that each gave worker id 1, two fixed ids whose layouts differ only by their
//! epoch), naming both generators, their worker ids and layouts; the same generators start in
//! namespaces of their own; and a generator that heals into a worker id another generator's IDs
//! meet refuses it and takes another, while every ID is collected.

mod common;

use common::{Serve, ids_for, in_both};
use ringflake::{DatabaseAssigner, Layout, WorkerIdAssigner};
use std::time::{Duration, Instant};

/// A temporary directory holding `ringflake.toml` with `config`.
fn dir_with(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("ringflake.toml"), config).expect("config");
    dir
}

/// The three configurations issue 35 found running (each with the flags of its default
/// generator), and the one they have in common: worker id 1 of the default layout in both.
const OVERLAPPING: [(&str, &str, &[&str]); 3] = [
    // The default generator takes worker id 1 from ringflake.db; orders has it fixed.
    ("orders", "[generators.orders]\nworker-id = 1\n", &[]),
    // Each takes worker id 1 from a table of its own.
    (
        "billing",
        "[generators.billing]\ndb = \"billing.db\"\n",
        &[],
    ),
    // Both fixed at 1, their epochs a second apart: the same bits.
    (
        "b",
        "[generators.a]\nworker-id = 1\nepoch-seconds = 1735689600\n\n\
         [generators.b]\nworker-id = 1\nepoch-seconds = 1735689601\n",
        &["--worker-id", "2"],
    ),
];

/// Each of the three is refused at start (exit 1, nothing served), naming both generators, their
/// worker ids, their sources and their layouts.
#[test]
fn overlapping_generators_are_refused_naming_both() {
    let other = ["default", "default", "a"];
    let sources = [
        ("sqlite file ringflake.db", "fixed worker id 1"),
        ("sqlite file billing.db", "sqlite file ringflake.db"),
        ("fixed worker id 1", "fixed worker id 1"),
    ];
    let layouts = [
        ("31/10/22 from 2025-01-01", "31/10/22 from 2025-01-01"),
        ("31/10/22 from 2025-01-01", "31/10/22 from 2025-01-01"),
        (
            "31/10/22 from 2025-01-01T00:00:01Z",
            "31/10/22 from 2025-01-01",
        ),
    ];
    for (i, (name, config, flags)) in OVERLAPPING.iter().enumerate() {
        let dir = dir_with(config);
        let out = common::refused(common::serve_config(dir.path(), flags));
        // The generator whose worker id came second is the one refused; the message names both.
        let (first, second) = if i == 0 {
            (other[i], *name)
        } else {
            (*name, other[i])
        };
        let expected = format!(
            "generators {first} and {second} could hand out the same IDs: {first} has worker id \
             1 ({}) on layout {}, {second} has worker id 1 ({}) on layout {}, and ID 4194304 is \
             one both can make",
            sources[i].0, layouts[i].0, sources[i].1, layouts[i].1
        );
        assert!(
            out.contains(&expected),
            "{config}: expected {expected:?} in {out}"
        );
        assert!(out.contains("namespace = \"NAME\""), "{out}");
    }
}

/// The same generators, each in a namespace of its own, start and serve from both routes (their
/// IDs may now coincide: that is what the declaration accepts).
#[test]
fn the_same_generators_in_namespaces_of_their_own_start() {
    for (name, config, flags) in OVERLAPPING {
        let config = format!("{config}namespace = \"{name}\"\n");
        let dir = dir_with(&config);
        let serve = Serve::start(
            dir.path(),
            &[&["--config", "ringflake.toml"], flags].concat(),
        );
        for route in [format!("/ids/{name}?count=10"), "/ids?count=10".into()] {
            let ids = ids_for(serve.addr(), &route, Duration::from_millis(100));
            assert!(!ids.is_empty(), "{config} {route}: {}", serve.output());
        }
        // /status and the page say which generator is a space of its own.
        let status = common::get(serve.addr(), "/status").body;
        assert!(
            status.contains(&format!("\"name\":\"{name}\",\"namespace\":\"{name}\""))
                && status.contains("\"name\":\"default\",\"namespace\":null"),
            "{status}"
        );
        let page = common::get(serve.addr(), "/").body;
        assert!(
            page.contains(&format!("namespace {name}: not checked against the others")),
            "{page}"
        );
    }
}

/// The default generator has worker id 3 fixed; billing takes its ids from billing.db, where
/// another node holds row 1, so it starts with 2. Its row taken over (as a recycler on another
/// host would), it
/// heals: the table's next id, 3, is refused (default's IDs meet it), held while billing asks
/// again, and billing serves worker id 4. Every ID collected from both during the heal: none
/// from both, none of billing's under worker id 3.
#[test]
fn a_heal_into_another_generators_worker_id_is_refused() {
    let dir = dir_with("[generators.billing]\ndb = \"billing.db\"\nlease-window = 3\n");
    let billing_db = dir.path().join("billing.db");
    let layout = Layout::default();
    // Another node's row 1, leased for the default window.
    let other = DatabaseAssigner::sqlite(&billing_db).expect("sqlite");
    let held = other.assign(&layout).expect("row 1");
    assert_eq!(held.worker_id, 1);
    let serve = Serve::start(
        dir.path(),
        &["--config", "ringflake.toml", "--worker-id", "3"],
    );
    let addr = serve.addr();
    let worker = |id: u64| layout.parse(id).expect("an ID").worker_id;
    let first = ids_for(addr, "/ids/billing?count=10", Duration::from_millis(50));
    assert_eq!(worker(first[0]), 2, "{}", serve.output());
    let collectors: Vec<_> = ["/ids?count=1000", "/ids/billing?count=1000"]
        .into_iter()
        .map(|route| std::thread::spawn(move || ids_for(addr, route, Duration::from_secs(6))))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let moved = rusqlite::Connection::open(&billing_db)
        .expect("open")
        .execute(
            "UPDATE WORKER_NODE SET HOST_NAME = '192.0.2.9', PORT = '1700000000000-99999', \
             LEASE_UNTIL = LEASE_UNTIL + 1000 WHERE ID = 2",
            [],
        )
        .expect("take over");
    assert_eq!(moved, 1);
    let ids: Vec<Vec<u64>> = collectors
        .into_iter()
        .map(|t| t.join().expect("collector"))
        .collect();
    let start = Instant::now();
    let healed = loop {
        let got = ids_for(addr, "/ids/billing?count=10", Duration::from_millis(50));
        if got.first().is_some_and(|&id| worker(id) != 2) {
            break got;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "billing did not heal: {}",
            serve.output()
        );
    };
    let out = serve.output();
    assert_eq!(worker(healed[0]), 4, "{out}");
    assert!(
        out.contains(
            "new worker id 3 refused: generators billing and default could hand out the same \
             IDs: billing has worker id 3 (sqlite file billing.db) on layout 31/10/22 from \
             2025-01-01, default has worker id 3 (fixed worker id 3) on layout 31/10/22 from \
             2025-01-01"
        ),
        "{out}"
    );
    assert!(out.contains("took worker id 4 instead"), "{out}");
    assert!(ids[0].iter().all(|&id| worker(id) == 3));
    assert!(ids[1].len() > 1000, "billing served {} IDs", ids[1].len());
    assert!(
        ids[1].iter().chain(&healed).all(|&id| worker(id) != 3),
        "billing served under worker id 3"
    );
    assert_eq!(in_both(&ids[0], &ids[1]), 0, "IDs from both generators");
    drop(held);
}
