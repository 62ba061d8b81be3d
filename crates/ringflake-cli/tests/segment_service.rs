//! Meituan Leaf's segment mode on `ringflake serve` (the real binary, SQLite): Leaf's route and
//! the batch, errors naming the tag, tags added and deleted while serving, restarts (SIGTERM and
//! SIGKILL) that resume the ranges held, the hidden volume, the gRPC methods, `/status`,
//! `/metrics` and the `segments` command.

mod common;

use common::{Client, Serve, get, json_ids, ringflake, signal, wait_until};
use ringflake::grpc::id_service_client::IdServiceClient;
use ringflake::grpc::{SegmentBatchRequest, SegmentNextRequest};
use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// `ringflake segments ARGS` in `dir`, which must succeed: what it printed.
fn segments(dir: &Path, args: &[&str]) -> String {
    let out = ringflake(dir).arg("segments").args(args).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "segments {args:?}: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// One number of `tag` from `/api/segment/get/{tag}`.
fn next(client: &mut Client, tag: &str) -> i64 {
    let r = client
        .get(&format!("/api/segment/get/{tag}"))
        .unwrap_or_else(|e| panic!("{tag}: {e}"));
    assert_eq!(r.status, 200, "{}", r.body);
    r.body.parse().unwrap_or_else(|_| panic!("{:?}", r.body))
}

/// A number from `/status`'s segment entry of `tag`.
fn status_of(addr: SocketAddr, tag: &str, field: &str) -> i64 {
    let body = get(addr, "/status").body;
    let status: serde_json::Value = serde_json::from_str(&body).unwrap();
    status["segments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["biz_tag"] == tag)
        .and_then(|s| s[field].as_i64())
        .unwrap_or_else(|| panic!("no {field} for {tag} in {body}"))
}

#[test]
fn leafs_route_batches_errors_and_tags_that_come_and_go() {
    let dir = tempfile::tempdir().unwrap();
    let said = segments(dir.path(), &["add", "leaf-segment-test", "--step", "10"]);
    assert!(said.contains("added biz_tag leaf-segment-test"), "{said}");
    let serve = Serve::start(dir.path(), &["--segment-refresh", "1"]);
    let addr = serve.addr();
    assert!(
        serve.output().contains("segments: 1 biz_tag of leaf_alloc"),
        "{}",
        serve.output()
    );
    let mut client = Client::new(addr, Duration::from_secs(10));
    // Leaf's answer: the bare number, text/plain.
    let r = client.get("/api/segment/get/leaf-segment-test").unwrap();
    assert_eq!((r.status, r.body.as_str()), (200, "1"));
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    let numbers: Vec<i64> = (0..100)
        .map(|_| next(&mut client, "leaf-segment-test"))
        .collect();
    assert_eq!(
        numbers,
        (2..102).collect::<Vec<_>>(),
        "dense, across 10 ranges"
    );
    let r = client
        .get("/api/segment/get/leaf-segment-test?count=25")
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let batch: Vec<u64> = json_ids(&r.body);
    assert_eq!(batch, (102..127).collect::<Vec<u64>>());
    // Errors name the tag and the limit.
    for (path, status, says) in [
        (
            "/api/segment/get/nope".to_string(),
            404,
            "no biz_tag \\\"nope\\\" in leaf_alloc",
        ),
        (
            format!("/api/segment/get/{}", "x".repeat(5000)),
            400,
            "5000 bytes long: at most 128",
        ),
        (
            "/api/segment/get/order%20id".into(),
            400,
            "character '%' at byte 5",
        ),
        (
            "/api/segment/get/leaf-segment-test?count=0".into(),
            400,
            "count 0 out of range: use /api/segment/get/{key}[?count=N] with N in 1..=100000",
        ),
        (
            "/api/segment/get/leaf-segment-test?count=100001".into(),
            400,
            "count 100001 out of range",
        ),
        (
            "/api/segment/get/leaf-segment-test?step=5".into(),
            400,
            "unknown query parameter \\\"step\\\"",
        ),
        ("/api/segment/get/".into(), 404, "missing biz_tag"),
    ] {
        let r = client.get(&path).unwrap();
        assert_eq!(r.status, status, "{path}: {}", r.body);
        assert!(r.body.contains(says), "{path}: {}", r.body);
        assert!(
            r.body.len() < 600,
            "{path}: the echo is bounded: {}",
            r.body.len()
        );
    }
    // A tag added while serving is served within the reread (1 s here).
    segments(dir.path(), &["add", "added-later", "--start", "1000"]);
    wait_until("added-later served", Duration::from_secs(10), || {
        client
            .get("/api/segment/get/added-later")
            .is_ok_and(|r| r.status == 200 && r.body == "1000")
    });
    let listed = segments(dir.path(), &["list"]);
    assert!(
        listed.contains("added-later        3000    2000  yes"),
        "{listed}"
    );
    // A tag deleted while serving is refused within the reread, by name.
    let conn = rusqlite::Connection::open(dir.path().join("ringflake.db")).unwrap();
    conn.execute("DELETE FROM leaf_alloc WHERE biz_tag = 'added-later'", [])
        .unwrap();
    wait_until("added-later refused", Duration::from_secs(10), || {
        client
            .get("/api/segment/get/added-later")
            .is_ok_and(|r| r.status == 404 && r.body.contains("added-later"))
    });
    // Added back (from where the operator says): served again, by its new row.
    segments(dir.path(), &["add", "added-later", "--start", "50000"]);
    wait_until("added-later served again", Duration::from_secs(10), || {
        client
            .get("/api/segment/get/added-later")
            .is_ok_and(|r| r.status == 200 && r.body == "50000")
    });
    // /status, the page and /metrics show the tag.
    // Ranges of 10, 10, 20, 40, 80 (Leaf's dynamic step doubles ranges that last under 15 min).
    assert!(status_of(addr, "leaf-segment-test", "claims") >= 5);
    let page = get(addr, "/").body;
    assert!(page.contains("data-s=\"leaf-segment-test\""), "{page}");
    let scrape = get(addr, "/metrics").body;
    for series in [
        "ringflake_segment_current_left{biz_tag=\"leaf-segment-test\"}",
        "ringflake_segment_next_left{biz_tag=\"leaf-segment-test\"}",
        "ringflake_segment_step{biz_tag=\"leaf-segment-test\"}",
        "ringflake_segment_claim_seconds_count{biz_tag=\"leaf-segment-test\"}",
        "ringflake_segment_waits_total{biz_tag=\"leaf-segment-test\"}",
    ] {
        assert!(scrape.contains(series), "{series} not in {scrape}");
    }
}

/// Takes from `tag` until told to stop: every number, in order.
fn take_for(client: &mut Client, tag: &str, n: usize) -> Vec<i64> {
    (0..n).map(|_| next(client, tag)).collect()
}

#[test]
fn restarts_resume_what_was_held_and_kill_9_loses_only_the_marked_chunk() {
    let dir = tempfile::tempdir().unwrap();
    segments(dir.path(), &["add", "orders", "--step", "2000"]);
    let mut seen = HashSet::new();
    let mut last = 0;
    let mut report = Vec::new();
    for round in 0..6 {
        let mut serve = Serve::start(dir.path(), &[]);
        let addr = serve.addr();
        let mut client = Client::new(addr, Duration::from_secs(10));
        let numbers = take_for(&mut client, "orders", 700);
        if round > 0 {
            report.push(numbers[0] - last - 1);
        }
        for x in &numbers {
            assert!(seen.insert(*x), "{x} handed out twice (round {round})");
        }
        last = *numbers.last().unwrap();
        // Let the keeper settle its marks and the prefetch, then stop: SIGTERM or SIGKILL.
        std::thread::sleep(Duration::from_millis(300));
        let at_risk = status_of(addr, "orders", "at_risk");
        let max_id = segments(dir.path(), &["list"])
            .lines()
            .find(|l| l.starts_with("orders"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|m| m.parse::<i64>().ok())
            .unwrap();
        if round % 2 == 0 {
            signal(serve.pid, "TERM");
            wait_until("serve to stop", Duration::from_secs(20), || {
                !serve.running()
            });
            report.push(-1); // marker: the next loss is after a clean stop
        } else {
            serve.kill();
            report.push(-2); // marker: after kill -9
        }
        eprintln!(
            "round {round}: last {last}, at risk {at_risk}, Leaf would lose both segments' rest: \
             {} numbers",
            max_id - last - 1
        );
        report.push(at_risk);
        report.push(max_id - last - 1);
    }
    // Per restart: [kind, at_risk, leaf_loss, lost].
    let per: Vec<&[i64]> = report.chunks(4).collect();
    for r in &per[..per.len() - 1] {
        let (kind, at_risk, leaf, lost) = (r[0], r[1], r[2], r[3]);
        eprintln!(
            "{} restart: lost {lost} numbers (Leaf: {leaf})",
            if kind == -1 { "SIGTERM" } else { "SIGKILL" }
        );
        if kind == -1 {
            assert_eq!(lost, 0, "a clean stop loses nothing: {per:?}");
        } else {
            assert_eq!(
                lost, at_risk,
                "kill -9 loses the marked chunk, no more: {per:?}"
            );
        }
        assert!(lost < leaf, "{per:?}");
    }
}

#[test]
fn hidden_volumes_are_a_permutation_on_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("id.key");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/example-id.key"),
        &key,
    )
    .unwrap();
    segments(dir.path(), &["add", "orders"]);
    segments(dir.path(), &["add", "users"]);
    let serve = Serve::start(
        dir.path(),
        &[
            "--id-key-file",
            key.to_str().unwrap(),
            "--hide-volume",
            "orders",
        ],
    );
    let mut client = Client::new(serve.addr(), Duration::from_secs(10));
    let cipher = ringflake::IdCipher::from_key_file(&key).unwrap();
    let hidden: Vec<i64> = take_for(&mut client, "orders", 50);
    let plain: Vec<u64> = hidden
        .iter()
        .map(|&h| cipher.decrypt(h as u64).unwrap())
        .collect();
    assert_eq!(plain, (1..=50).collect::<Vec<u64>>(), "dense under the key");
    assert!(hidden.iter().all(|&h| h >= 0));
    assert!(hidden.windows(2).any(|w| w[0] > w[1]), "no order shows");
    assert_eq!(
        take_for(&mut client, "users", 3),
        [1, 2, 3],
        "users is not hidden"
    );
    // gRPC hands out the same public numbers.
    let addr = serve.addr();
    let rt = common::runtime();
    rt.block_on(async {
        let channel = common::grpc_channel(addr).await;
        let mut grpc = IdServiceClient::new(channel);
        let one = grpc
            .segment_next(SegmentNextRequest {
                biz_tag: "orders".into(),
            })
            .await
            .unwrap()
            .into_inner()
            .id;
        assert_eq!(cipher.decrypt(one as u64).unwrap(), 51);
        let batch = grpc
            .segment_batch(SegmentBatchRequest {
                biz_tag: "users".into(),
                count: 4,
            })
            .await
            .unwrap()
            .into_inner()
            .ids;
        assert_eq!(batch, [4, 5, 6, 7]);
        let e = grpc
            .segment_next(SegmentNextRequest {
                biz_tag: "nope".into(),
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::NotFound);
        assert!(e.message().contains("no biz_tag \"nope\""), "{e:?}");
        let e = grpc
            .segment_batch(SegmentBatchRequest {
                biz_tag: "users".into(),
                count: 0,
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(e.message().contains("count 0 out of range"), "{e:?}");
    });
}

#[test]
fn flags_that_need_the_segment_mode_say_so() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            vec!["--worker-id", "3", "--segment-refresh", "5"],
            "--segment-refresh needs the segment mode, on the worker database's leaf_alloc",
        ),
        (
            vec!["--no-segments", "--hide-volume", "orders"],
            "--hide-volume needs the segment mode, which --no-segments turns off",
        ),
        (
            vec!["--hide-volume", "orders"],
            "--hide-volume needs --id-key-file",
        ),
    ] {
        let out = ringflake(dir.path())
            .arg("serve")
            .args(&args)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(said.contains(says), "{args:?}: {said}");
    }
    // Listing a file that is not there creates nothing.
    let out = ringflake(dir.path())
        .args(["segments", "list", "--db", "typo.db"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("typo.db: no such file"));
    assert!(!dir.path().join("typo.db").exists());
    let out = ringflake(dir.path())
        .args(["segments", "add", "orders", "--step", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("invalid value '0' for '--step <N>'"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
