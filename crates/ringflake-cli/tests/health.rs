//! The health states of `ringflake serve` on the real binary (issue 18, item 5), each reached and
//! shown on `/healthz`, `/status` and the status page: `serving`, `idle` (no demand: unused
//! seconds expire, counted apart from discards), `held at the lead cap` (demand above the rate:
//! `/healthz` stays 200), `lease at risk` (extensions fail, the lease still holds) and
//! `unavailable` (the lease lost, with the reason). (A worker id reserved ahead of the clock, the
//! other reason issue 22 adds, needs a faked clock: `tests/time.rs`.)
#![cfg(unix)]

mod common;

use common::{LAYOUT_30_20_13, Serve, get, json_int, json_str};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// `/healthz`'s status and `state`.
fn health(addr: SocketAddr) -> (u16, String, String) {
    let r = get(addr, "/healthz");
    let state = json_str(&r.body, "state").unwrap_or_default().to_string();
    (r.status, state, r.body)
}

/// Polls `/healthz` (every 100 ms, at most `limit`) until its state is `state`; its body.
fn wait_for_state(serve: &Serve, state: &str, limit: Duration) -> (u16, String) {
    let start = Instant::now();
    loop {
        let (status, now, body) = health(serve.addr());
        if now == state {
            return (status, body);
        }
        assert!(
            start.elapsed() < limit,
            "/healthz not {state:?} within {limit:?}: {status} {body}; output: {}",
            serve.output()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The default generator's part of `/status`.
fn status_json(addr: SocketAddr) -> String {
    get(addr, "/status").body
}

/// Serving while taken from; idle after 5 s without a take, its unused seconds counted as
/// expired (not discarded by takes), shown as such; serving again at the next take.
#[test]
fn serving_then_idle_then_serving() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--worker-id", "3"]);
    let addr = serve.addr();
    assert_eq!(get(addr, "/id").status, 200);
    let (status, state, body) = health(addr);
    assert_eq!((status, state.as_str()), (200, "serving"), "{body}");
    assert!(!body.contains("\"detail\""), "{body}");

    let (status, body) = wait_for_state(&serve, "idle", Duration::from_secs(20));
    assert_eq!(status, 200, "{body}");
    assert!(
        json_str(&body, "detail").is_some_and(|d| d.starts_with("idle: no take for ")),
        "{body}"
    );
    let s = status_of_idle(addr);
    let expired = json_int(&s, "expired").unwrap();
    let discarded = json_int(&s, "discarded").unwrap();
    assert!(expired > 0 && discarded == expired, "{s}");
    // Shown as idle capacity, dimmed, not as a fault.
    assert!(
        json_str(&s, "unused").is_some_and(|u| u.contains(
            "expired untaken (normal below the \
            layout's rate); 0 dropped by takes"
        )),
        "{s}"
    );
    assert_eq!(json_str(&s, "unused_state"), Some("dim"), "{s}");
    let page = get(addr, "/").body;
    assert!(
        page.contains("data-k=\"health\">idle<")
            && page.contains("<th>Idle capacity</th><td><span class=\"dim\""),
        "{page}"
    );

    assert_eq!(get(addr, "/id").status, 200);
    let (status, _) = wait_for_state(&serve, "serving", Duration::from_secs(5));
    assert_eq!(status, 200);
}

/// `/status` once it says `idle` (the sampler and the filler run on their own clocks).
fn status_of_idle(addr: SocketAddr) -> String {
    let start = Instant::now();
    loop {
        let s = status_json(addr);
        if json_str(&s, "state") == Some("idle") {
            return s;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "{s}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Demand above the layout's rate (8,192 IDs a second, a lead cap of 1 s): held at the lead cap,
/// a degraded state in which `/healthz` stays 200, `/status` and the page say so.
#[test]
fn held_at_the_lead_cap_under_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut flags = LAYOUT_30_20_13.to_vec();
    flags.extend(["--worker-id", "4", "--max-lead", "1"]);
    let serve = Serve::start(dir.path(), &flags);
    let addr = serve.addr();
    let stop = AtomicBool::new(false);
    let (status, body, page, status_json) = std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let r = get(addr, "/ids?count=2048");
                    assert!(
                        r.status == 200 || r.status == 503,
                        "{} {}",
                        r.status,
                        r.body
                    );
                }
            });
        }
        let held = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let (status, body) =
                wait_for_state(&serve, "held at the lead cap", Duration::from_secs(20));
            // The page and /status, read while held (each look may fall between two seconds).
            let start = Instant::now();
            let (page, status_json) = loop {
                let page = get(addr, "/").body;
                let s = status_json(addr);
                if page.contains(">held at the lead cap<")
                    && json_str(&s, "state") == Some("held at the lead cap")
                {
                    break (page, s);
                }
                assert!(start.elapsed() < Duration::from_secs(10), "{s}");
            };
            (status, body, page, status_json)
        }));
        stop.store(true, Ordering::Relaxed);
        held.unwrap_or_else(|e| std::panic::resume_unwind(e))
    });
    assert_eq!(status, 200, "{body}");
    assert!(
        json_str(&body, "detail").is_some_and(|d| d.contains("takes wait for the clock")),
        "{body}"
    );
    assert!(page.contains("class=\"warn\""), "{page}");
    assert!(status_json.contains("\"healthy\":true"), "{status_json}");
}

/// Lease extensions fail (the test holds the SQLite table's write lock): `lease at risk` while
/// the lease still holds (200, until when), then `unavailable` once the clock passes it (503,
/// `lease lost`), then serving again once the table can be written.
#[test]
fn lease_at_risk_then_lost_then_regained() {
    let dir = tempfile::tempdir().unwrap();
    // A 9 s window: the extension is due below 6 s left, and a locked table fails it after two
    // 1 s tries (the call is retried once on a fresh connection), so the lease is at risk for
    // about 3 s before it expires; with 4 s it was at risk for milliseconds, missed under load.
    let serve = Serve::start(dir.path(), &["--lease-window", "9", "--db-timeout", "1"]);
    let addr = serve.addr();
    assert_eq!(get(addr, "/id").status, 200);
    let lock = rusqlite::Connection::open(dir.path().join("ringflake.db")).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let (status, body) = wait_for_state(&serve, "lease at risk", Duration::from_secs(10));
    assert_eq!(status, 200, "{body}");
    let until = json_int(&body, "until").expect("until");
    assert!(
        json_str(&body, "detail").is_some_and(|d| d.contains(&format!("unix second {until}"))),
        "{body}"
    );
    let s = status_json(addr);
    assert!(
        json_str(&s, "lease").is_some_and(|l| l.starts_with("AT RISK")),
        "{s}"
    );
    let page = get(addr, "/").body;
    assert!(page.contains(">lease at risk<"), "{page}");

    let (status, body) = wait_for_state(&serve, "unavailable", Duration::from_secs(15));
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("\"reason\":\"lease lost: the worker lease of worker id 1"),
        "{body}"
    );
    let r = get(addr, "/id");
    assert_eq!(r.status, 503, "{}", r.body);
    // Either the take saw the ring's end (the lease's expiry) or the filler's verdict first.
    assert!(
        r.body.contains("worker lease expired at ")
            || r.body
                .contains("lease lost: the worker lease of worker id 1"),
        "{}",
        r.body
    );
    let page = get(addr, "/").body;
    assert!(
        page.contains("class=\"bad\" data-g=\"default\" data-k=\"health\">unavailable<"),
        "{page}"
    );

    lock.execute_batch("COMMIT").unwrap();
    let start = Instant::now();
    while get(addr, "/id").status != 200 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no ID 10 s after the table could be written again: {}",
            get(addr, "/healthz").body
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Serving again (once the filler's round has seen the take: it looks once a round).
    let (status, body) = wait_for_state(&serve, "serving", Duration::from_secs(5));
    assert_eq!(status, 200, "{body}");
}
