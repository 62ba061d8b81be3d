//! What `ringflake serve` tells about the requests it answers: `/metrics` counts HTTP requests by
//! route, method and status and gRPC calls by method and code, each with a latency histogram, beside the
//! `process_*` series; the access log (target `ringflake::access`) writes a line per request
//! once the filter names it, and none otherwise.
#![cfg(unix)]

mod common;

use common::{Serve, events, get, text};
use ringflake::grpc::NextRequest;
use ringflake::grpc::id_service_client::IdServiceClient;
use std::time::Duration;

/// The value of the series `line_start` (name and labels, exactly) in a scrape.
fn value(scrape: &str, series: &str) -> Option<f64> {
    scrape
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// The status of one `method` request for `path`, on a connection of its own.
fn status_of(addr: std::net::SocketAddr, method: &str, path: &str) -> u16 {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        conn,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = conn.read_to_string(&mut answer);
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"))
}

/// Requests of every kind, counted by route, method and status (an unknown path as `none`), a latency
/// histogram per route whose count is the requests', gRPC calls by method and code, and the
/// process's CPU, memory, descriptors and start time.
#[test]
fn requests_are_counted_by_route_status_and_method() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--no-state-file"]);
    let addr = serve.addr();
    for _ in 0..3 {
        assert_eq!(get(addr, "/id").status, 200);
    }
    assert_eq!(get(addr, "/ids?count=0").status, 400);
    assert_eq!(get(addr, "/no/such/path").status, 404);
    assert_eq!(get(addr, "/livez").status, 200);
    assert_eq!(status_of(addr, "HEAD", "/id"), 200);
    assert_eq!(status_of(addr, "DELETE", "/id"), 405);
    let rt = common::runtime();
    rt.block_on(async {
        let channel = common::grpc_channel(addr).await;
        let mut client = IdServiceClient::new(channel);
        for _ in 0..2 {
            let next = NextRequest {
                generator: String::new(),
            };
            client.next(next).await.unwrap();
        }
        let missing = NextRequest {
            generator: "nope".into(),
        };
        let status = client.next(missing).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::NotFound);
    });
    let scrape = get(addr, "/metrics").body;
    for (series, want) in [
        (
            r#"ringflake_http_requests_total{route="/id",method="GET",status="200"}"#,
            3.0,
        ),
        (
            r#"ringflake_http_requests_total{route="/id",method="HEAD",status="200"}"#,
            1.0,
        ),
        (
            r#"ringflake_http_requests_total{route="/id",method="other",status="405"}"#,
            1.0,
        ),
        (
            r#"ringflake_http_requests_total{route="/ids",method="GET",status="400"}"#,
            1.0,
        ),
        (
            r#"ringflake_http_requests_total{route="none",method="GET",status="404"}"#,
            1.0,
        ),
        (
            r#"ringflake_http_requests_total{route="/livez",method="GET",status="200"}"#,
            1.0,
        ),
        (
            r#"ringflake_http_request_duration_seconds_count{route="/id",method="GET"}"#,
            3.0,
        ),
        (
            r#"ringflake_http_request_duration_seconds_bucket{route="/id",method="GET",le="+Inf"}"#,
            3.0,
        ),
        (
            r#"ringflake_grpc_requests_total{service="ringflake.v1.IdService",method="Next",code="OK"}"#,
            2.0,
        ),
        (
            r#"ringflake_grpc_requests_total{service="ringflake.v1.IdService",method="Next",code="NOT_FOUND"}"#,
            1.0,
        ),
        (
            r#"ringflake_grpc_request_duration_seconds_count{service="ringflake.v1.IdService",method="Next"}"#,
            3.0,
        ),
    ] {
        assert_eq!(value(&scrape, series), Some(want), "{series} in\n{scrape}");
    }
    // A debug build on a busy machine still answers /id within 15 s.
    let within_15s = value(
        &scrape,
        r#"ringflake_http_request_duration_seconds_bucket{route="/id",method="GET",le="15"}"#,
    );
    assert_eq!(within_15s, Some(3.0), "{scrape}");
    assert!(scrape.contains("# TYPE ringflake_http_request_duration_seconds histogram\n"));
    let cpu = value(&scrape, "process_cpu_seconds_total").expect("process_cpu_seconds_total");
    // In ticks of 10 ms: a process this young may not have used one yet.
    assert!(cpu >= 0.0, "{scrape}");
    assert!(value(&scrape, "process_resident_memory_bytes").unwrap_or(0.0) > 1e6);
    assert!(value(&scrape, "process_open_fds").unwrap_or(0.0) >= 3.0);
    let start = value(&scrape, "process_start_time_seconds").unwrap_or(0.0);
    let now = common::unix_now();
    assert!(
        start > now - 300.0 && start <= now + 1.0,
        "{start} vs {now}"
    );
}

/// The access log: off by default (`--log info` writes no line per request), one JSON event per
/// request with `--log info,ringflake::access=info`, with the method, path, route, status,
/// duration and peer.
#[test]
fn the_access_log_is_off_unless_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut quiet = Serve::start(dir.path(), &["--no-state-file", "--log-format", "json"]);
    assert_eq!(get(quiet.addr(), "/id").status, 200);
    assert_eq!(get(quiet.addr(), "/healthz").status, 200);
    std::thread::sleep(Duration::from_millis(300));
    let out = quiet.output();
    assert!(!out.contains("ringflake::access"), "{out}");
    quiet.kill();

    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(
        dir.path(),
        &[
            "--no-state-file",
            "--log-format",
            "json",
            "--log",
            "info,ringflake::access=info",
        ],
    );
    let addr = serve.addr();
    assert_eq!(get(addr, "/id").status, 200);
    assert_eq!(get(addr, "/parse/x").status, 400);
    let mut lines = Vec::new();
    common::wait_until("two access lines", Duration::from_secs(30), || {
        lines = events(&serve.output())
            .into_iter()
            .filter(|e| text(e, "target") == "ringflake::access")
            .collect();
        lines.len() >= 2
    });
    let id = &lines[0];
    assert_eq!(text(id, "level"), "INFO", "{id}");
    assert_eq!(text(id, "method"), "GET", "{id}");
    assert_eq!(text(id, "path"), "/id", "{id}");
    assert_eq!(text(id, "route"), "/id", "{id}");
    assert_eq!(id["status"], 200, "{id}");
    assert!(id["duration_us"].as_u64().is_some(), "{id}");
    assert!(text(id, "peer").starts_with("127.0.0.1:"), "{id}");
    let parse = &lines[1];
    assert_eq!(text(parse, "route"), "/parse/{id}", "{parse}");
    assert_eq!(parse["status"], 400, "{parse}");
}
