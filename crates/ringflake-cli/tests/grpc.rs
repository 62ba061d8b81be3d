//! gRPC and HTTP/2 on `ringflake serve`'s one port, against the real binary: a third-party client
//! (Python's grpcio) calling every RPC, health and reflection included, in plain text and over
//! TLS; the HTTP routes over HTTP/2; `Stream`'s flow control with a client that stops reading.

mod common;

use common::{Serve, get, grpc_channel as channel, json_int, runtime, tls_data};
use ringflake::grpc::id_service_client::IdServiceClient;
use ringflake::grpc::{NextRequest, StreamRequest};
use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const TOKEN: &str = "grpc-test-token-0123456789abcdef";

/// Runs `tests/python/grpc_client.py` with `args` under `python` (a venv with grpcio); the IDs it
/// received.
fn python_client(python: &str, dir: &Path, args: &[&str]) -> Vec<u64> {
    let script = format!("{}/tests/python/grpc_client.py", env!("CARGO_MANIFEST_DIR"));
    let ids_out = dir.join(format!("ids-{}.txt", args.len()));
    let out = Command::new(python)
        .arg(&script)
        .args(args)
        .arg("--ids-out")
        .arg(&ids_out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{script} {args:?} failed: {said}");
    assert!(said.contains("every RPC answered"), "{said}");
    std::fs::read_to_string(&ids_out)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// Python's grpcio compiles the repository's proto and calls every RPC (from the default and a
/// named generator), health and reflection, and checks the errors: in plain text, then over TLS
/// with a bearer token. Needs `RINGFLAKE_GRPC_PYTHON`, a Python with grpcio, grpcio-tools,
/// grpcio-health-checking and grpcio-reflection (`.ci/run` makes a venv with them); fails
/// without it.
#[test]
#[ignore = "needs RINGFLAKE_GRPC_PYTHON (a Python with grpcio, made by .ci/run)"]
fn python_grpcio_calls_every_rpc() {
    let python = std::env::var("RINGFLAKE_GRPC_PYTHON")
        .expect("RINGFLAKE_GRPC_PYTHON: a Python with grpcio and grpcio-tools");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("generators.toml"),
        "[generators.orders]\nmax-lead = 5\n",
    )
    .unwrap();
    let mut received = Vec::new();
    // A business tag of Leaf's segment mode, in the worker database.
    let added = common::ringflake(dir.path())
        .args(["segments", "add", "py-orders", "--step", "100"])
        .status()
        .unwrap();
    assert!(added.success());

    let serve = Serve::start(
        dir.path(),
        &["--no-state-file", "--config", "generators.toml"],
    );
    let addr = serve.addr().to_string();
    received.extend(python_client(
        &python,
        dir.path(),
        &[
            "--addr",
            &addr,
            "--generator",
            "orders",
            "--segment-tag",
            "py-orders",
        ],
    ));
    drop(serve);

    // TLS (the certificate names localhost) and a token; the same SQLite file, so another
    // worker id.
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("{TOKEN}\n")).unwrap();
    let (cert, key, ca) = (
        tls_data("server.pem"),
        tls_data("server-key.pem"),
        tls_data("ca.pem"),
    );
    let serve = Serve::start(
        dir.path(),
        &[
            "--no-state-file",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "--auth-token-file",
            tokens.to_str().unwrap(),
        ],
    );
    let addr = format!("localhost:{}", serve.addr().port());
    received.extend(python_client(
        &python,
        dir.path(),
        &["--addr", &addr, "--ca", &ca, "--token", TOKEN],
    ));
    let distinct: HashSet<u64> = received.iter().copied().collect();
    assert_eq!(distinct.len(), received.len(), "an ID was received twice");
    assert!(received.len() > 300_000, "{}", received.len());
}

/// An HTTP/2 GET on `conn`; status and body.
async fn h2_get(conn: &mut h2::client::SendRequest<bytes::Bytes>, uri: &str) -> (u16, String) {
    let request = http::Request::get(uri).body(()).unwrap();
    let (answer, _) = conn.send_request(request, true).unwrap();
    let answer = answer.await.unwrap();
    let status = answer.status().as_u16();
    let mut body = answer.into_body();
    let mut text = Vec::new();
    while let Some(data) = body.data().await {
        let data = data.unwrap();
        let _ = body.flow_control().release_capacity(data.len());
        text.extend_from_slice(&data);
    }
    (status, String::from_utf8(text).unwrap())
}

/// The HTTP routes answer over HTTP/2 in plain text (h2c, prior knowledge) as over HTTP/1.1,
/// and HTTP/1.1 still works on the same port.
#[test]
fn http_routes_over_http2() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--no-state-file"]);
    let addr = serve.addr();
    runtime().block_on(async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut conn, driver) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(async move {
            let _ = driver.await;
        });
        let base = format!("http://{addr}");
        let (status, body) = h2_get(&mut conn, &format!("{base}/id")).await;
        assert_eq!(status, 200, "{body}");
        let first: u64 = body.trim_end().parse().unwrap();
        let (status, body) = h2_get(&mut conn, &format!("{base}/ids?count=3")).await;
        assert_eq!(status, 200, "{body}");
        let ids = common::json_ids(&body);
        assert!(ids.len() == 3 && ids[0] > first, "{body}");
        let (status, body) = h2_get(&mut conn, &format!("{base}/ids?count=0")).await;
        assert_eq!(status, 400, "{body}");
        assert!(body.contains("count 0 out of range"), "{body}");
        let (status, body) = h2_get(&mut conn, &format!("{base}/healthz")).await;
        assert_eq!(status, 200, "{body}");
        let (status, _) = h2_get(&mut conn, &format!("{base}/nope")).await;
        assert_eq!(status, 404);
    });
    let r = get(addr, "/id");
    assert_eq!(r.status, 200, "{}", r.body);
}

/// The IDs the service has handed out, from `/healthz`.
fn issued(addr: SocketAddr) -> i64 {
    let r = get(addr, "/healthz");
    json_int(&r.body, "issued").unwrap_or_else(|| panic!("{}", r.body))
}

/// A client that asks `Stream` for a trillion IDs and then stops reading holds the server to
/// HTTP/2's flow-control windows: the service takes a few hundred thousand IDs ahead at most,
/// then waits; the stream goes on when the client reads again. (Without flow control the
/// producer would take IDs as fast as the ring gives them: tens of millions a second.)
#[test]
fn stream_waits_for_a_slow_reader() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--no-state-file"]);
    let addr = serve.addr();
    runtime().block_on(async {
        let mut client = IdServiceClient::new(channel(addr).await);
        let request = StreamRequest {
            generator: String::new(),
            count: 1_000_000_000_000,
            chunk: 8192,
        };
        let mut stream = client.stream(request).await.unwrap().into_inner();
        let first = stream.message().await.unwrap().unwrap();
        assert_eq!(first.ids.len(), 8192);
        // The client reads nothing more: wait until the service stops taking.
        let mut last = -1;
        let mut still_since = Instant::now();
        let start = Instant::now();
        loop {
            let now = tokio::task::spawn_blocking(move || issued(addr))
                .await
                .unwrap();
            if now != last {
                last = now;
                still_since = Instant::now();
            } else if still_since.elapsed() > Duration::from_millis(1500) {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the service never stopped taking: {now} IDs issued"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            last < 1_000_000,
            "a stalled stream made the service take {last} IDs"
        );
        // Reading again resumes the stream, in order.
        let mut previous = *first.ids.last().unwrap();
        for _ in 0..200 {
            let chunk = stream.message().await.unwrap().unwrap();
            assert!(chunk.ids[0] > previous);
            previous = *chunk.ids.last().unwrap();
        }
        assert!(issued(addr) > last);
        // The service still answers other calls meanwhile.
        let one = client.next(NextRequest::default()).await.unwrap();
        assert!(one.into_inner().id > previous);
    });
}

/// At the lead cap with policy `fail`, a call that finds no ID is UNAVAILABLE with the cap in its
/// message and the retry delay in the trailer `grpc-retry-pushback-ms`; a count above what the
/// cap can ever hold is INVALID_ARGUMENT naming the count and the limit.
#[test]
fn the_lead_cap_says_when_to_retry() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "--no-state-file",
        "--max-lead",
        "0",
        "--lead-policy",
        "fail",
    ];
    args.extend(common::LAYOUT_30_20_13);
    let serve = Serve::start(dir.path(), &args);
    let addr = serve.addr();
    runtime().block_on(async {
        let mut client = IdServiceClient::new(channel(addr).await);
        let batch = |count| ringflake::grpc::BatchRequest {
            generator: String::new(),
            count,
        };
        let status = client.batch(batch(8193)).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        assert!(
            status.message().contains(
                "count 8193 is more than the generator can take at once: at most 8192 IDs \
                 ((max-lead 0 s + 1) x 2^13 IDs a second)"
            ),
            "{status:?}"
        );
        // 8,192 IDs a second and no borrowing: of three quick batches of 8,192, two fall in one
        // second, and the second of those finds the cap.
        let mut refused = None;
        for _ in 0..3 {
            match client.batch(batch(8192)).await {
                Ok(answer) => assert_eq!(answer.into_inner().ids.len(), 8192),
                Err(status) => {
                    refused = Some(status);
                    break;
                }
            }
        }
        let status = refused.expect("three batches of 8192 within a second or two");
        assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
        assert!(
            status
                .message()
                .contains("at most 0 s ahead of the clock; retry in 1 s"),
            "{status:?}"
        );
        let pushback = status.metadata().get("grpc-retry-pushback-ms");
        assert_eq!(
            pushback.and_then(|v| v.to_str().ok()),
            Some("1000"),
            "{status:?}"
        );
    });
}
