//! The real `ringflake serve` against clients that try to make it hold memory, connections or
//! CPU: HTTP/2 connections that open every stream allowed for the largest answers and never read
//! them, gRPC messages declared huge and sent in part, connections that say nothing, that send
//! part of HTTP/2's preface, that read nothing for 30 s, more connections than the cap, and
//! names of 20,000 characters. The service's memory (`VmRSS`, and `VmHWM` for the peak) and CPU
//! time are read from `/proc/<pid>`; every ID a client receives is kept and checked for
//! duplicates.
//!
//! The HTTP/2 clients that misbehave are written frame by frame on a plain socket (what a
//! well-behaved library would not do); the others are the `h2` crate's client.
#![cfg(target_os = "linux")]

mod common;

use common::{Client, Serve, get, json_ids, json_int, metric, wait_until};
use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// What an HTTP/2 client sends first.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The service's limits these tests push against (`serve --help`, `/status`).
const MAX_STREAMS: u32 = 256;
const MAX_LARGE_ANSWERS: i64 = 64;

/// The most the service may hold under 4 connections that ask for every stream's worth of the
/// largest answers and read nothing: a few hundred MiB at most, as the issue asked; measured
/// about 90 MiB for this debug build (70 MiB for a release one), against 1.6 GiB before answers
/// were limited.
const FLOOD_PEAK_MIB: u64 = 200;

/// How far above its resting size the service may stay once the clients are gone: what is
/// freed is given back to the system within seconds (`serve/model/memory.rs`); measured 2 to
/// 4 MiB for this debug build. Before answers were limited, 350 MiB stayed; with them limited
/// but without the give-back, between 13 and 53 MiB, as glibc's arenas happened to be laid out.
const LEFT_AFTER_MIB: u64 = 16;

/// Appends an HTTP/2 frame.
fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// HPACK's integer with an `prefix`-bit prefix, its first byte's other bits `first`.
fn hpack_int(out: &mut Vec<u8>, first: u8, prefix: u8, mut value: usize) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    value -= max;
    while value >= 128 {
        out.push((value % 128) as u8 | 0x80);
        value /= 128;
    }
    out.push(value as u8);
}

fn hpack_str(out: &mut Vec<u8>, s: &str) {
    hpack_int(out, 0, 7, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// A request's header block, every field a literal never indexed: `:method` (GET or POST),
/// `:scheme http`, `:path`, `:authority`, then `extra`.
fn headers(method: &str, path: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut b = vec![if method == "GET" { 0x82 } else { 0x83 }, 0x86];
    hpack_int(&mut b, 0x00, 4, 4);
    hpack_str(&mut b, path);
    hpack_int(&mut b, 0x00, 4, 1);
    hpack_str(&mut b, "localhost");
    for (name, value) in extra {
        b.push(0x00);
        hpack_str(&mut b, name);
        hpack_str(&mut b, value);
    }
    b
}

/// The frames of a gRPC call of `message` to `path`, ended.
fn grpc_call(out: &mut Vec<u8>, stream: u32, path: &str, message: &[u8]) {
    let block = headers(
        "POST",
        path,
        &[("content-type", "application/grpc"), ("te", "trailers")],
    );
    frame(out, 1, 0x4, stream, &block);
    let mut data = vec![0];
    data.extend_from_slice(&(message.len() as u32).to_be_bytes());
    data.extend_from_slice(message);
    frame(out, 0, 0x1, stream, &data);
}

/// An HTTP/2 connection that has sent its preface, settings with the largest windows the
/// protocol allows (so that nothing but the socket holds the server back), and a blind
/// acknowledgement of the server's settings.
fn h2_socket(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    let window = 0x7fff_ffffu32;
    let mut out = PREFACE.to_vec();
    let mut settings = 4u16.to_be_bytes().to_vec();
    settings.extend_from_slice(&window.to_be_bytes());
    frame(&mut out, 4, 0, 0, &settings);
    frame(&mut out, 4, 1, 0, &[]);
    frame(&mut out, 8, 0, 0, &(window - 65_535).to_be_bytes());
    s.write_all(&out).unwrap();
    s
}

/// A field of `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`).
fn vm_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} for {pid}"))
}

/// The CPU time the process has spent, user and system, in clock ticks (1/100 s).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    // Fields 14 and 15 (utime, stime); fields[0] is field 3.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// The service's limits as `/status` shows them.
fn limits(addr: SocketAddr) -> String {
    let status = get(addr, "/status");
    assert_eq!(status.status, 200, "{}", status.body);
    status
        .body
        .split("\"limits\":")
        .nth(1)
        .unwrap_or_else(|| panic!("no limits in {}", status.body))
        .to_string()
}

/// Keeps `ids` and fails on one seen before.
fn collect(seen: &mut HashSet<u64>, ids: impl IntoIterator<Item = u64>) {
    for id in ids {
        assert!(seen.insert(id), "ID {id} handed out twice");
    }
}

/// 4 connections each open every stream allowed for the largest answers, half `/ids`, half
/// gRPC `Batch`, and never read: the service holds at most `--max-large-answers` of them at once
/// (the others wait their turn, and get a 503 after `--max-wait`), stays within
/// [`FLOOD_PEAK_MIB`], and gives the memory back once the clients leave. Small answers and
/// large ones on their turn go on meanwhile. Then 2 connections of `Batch` alone.
#[test]
fn unread_answers_stay_bounded_and_are_given_back() {
    let dir = tempfile::tempdir().unwrap();
    // The requests that find no turn wait 10 s for one: long enough for the answers on their
    // turn to fill the sockets' buffers (after which none ends), whatever the machine's load.
    let serve = Serve::start(dir.path(), &["--no-state-file", "--max-wait", "10"]);
    let (addr, pid) = (serve.addr(), serve.pid);
    let mut seen = HashSet::new();
    collect(&mut seen, json_ids(&get(addr, "/ids?count=1000").body));
    let resting = vm_kib(pid, "VmRSS");
    let flooding = flood(addr, &[false, true, false, true]);
    wait_until(
        "every large answer's turn taken",
        Duration::from_secs(20),
        || json_int(&limits(addr), "large_answers") == Some(MAX_LARGE_ANSWERS),
    );
    // A small answer is served at once; a large one waits --max-wait for a turn (behind the
    // flood's, which take every turn that comes free), then 503.
    collect(&mut seen, json_ids(&get(addr, "/ids?count=256").body));
    let asked = Instant::now();
    let busy = Client::new(addr, Duration::from_secs(30))
        .get("/ids?count=257")
        .unwrap();
    assert!(
        asked.elapsed() >= Duration::from_secs(9),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(busy.status, 503, "{}", busy.body);
    assert_eq!(busy.header("retry-after"), Some("1"));
    assert!(
        busy.body.contains(
            "no turn for a large answer within 10 s: 64 answers of more than 256 IDs are being \
             written at once (--max-large-answers 64)"
        ),
        "{}",
        busy.body
    );
    let peak = vm_kib(pid, "VmHWM") / 1024;
    eprintln!(
        "resting {} MiB, peak {peak} MiB under the flood",
        resting / 1024
    );
    assert!(
        peak < FLOOD_PEAK_MIB,
        "{peak} MiB under 4 connections that read nothing"
    );
    // The flood's 4, this test's own, and perhaps the last one's, not yet seen closed.
    let open = json_int(&limits(addr), "connections");
    assert!(matches!(open, Some(5 | 6)), "{open:?} connections");
    drop(flooding);
    wait_until("the turns given back", Duration::from_secs(10), || {
        json_int(&limits(addr), "large_answers") == Some(0)
    });
    let given_back = Instant::now();
    let mut after = vm_kib(pid, "VmRSS");
    while after >= resting + LEFT_AFTER_MIB * 1024 && given_back.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(100));
        after = vm_kib(pid, "VmRSS");
    }
    eprintln!("{} MiB after", after / 1024);
    assert!(
        after < resting + LEFT_AFTER_MIB * 1024,
        "{} MiB 10 s after the clients left, {} MiB at rest",
        after / 1024,
        resting / 1024
    );
    let large = get(addr, "/ids?count=100000");
    assert_eq!(large.status, 200, "{:.300}", large.body);
    let ids = json_ids(&large.body);
    assert_eq!(ids.len(), 100_000);
    collect(&mut seen, ids);
    // `Batch` alone: each answer is one 800 KB message, handed to HTTP/2 in pieces, and keeps
    // its turn until its client has read it (handed over whole, it would finish at once, its
    // data unsent, and the next take its turn: 600 MiB in a few seconds).
    let batches = flood(addr, &[true, true]);
    wait_until(
        "every turn taken by an unread Batch",
        Duration::from_secs(20),
        || json_int(&limits(addr), "large_answers") == Some(MAX_LARGE_ANSWERS),
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        json_int(&limits(addr), "large_answers"),
        Some(MAX_LARGE_ANSWERS)
    );
    let held = vm_kib(pid, "VmRSS") / 1024;
    assert!(held < FLOOD_PEAK_MIB, "{held} MiB under 2 Batch floods");
    drop(batches);
}

/// Connections that each open every stream allowed for the largest answers and never read:
/// `/ids?count=100000` on a connection whose `grpc` is false, gRPC `Batch` of 100,000 where
/// true.
fn flood(addr: SocketAddr, grpc: &[bool]) -> Vec<TcpStream> {
    // count = 100000: field 2, varint.
    let batch = [0x10, 0xa0, 0x8d, 0x06];
    let ids = headers("GET", "/ids?count=100000", &[]);
    grpc.iter()
        .map(|&grpc| {
            let mut s = h2_socket(addr);
            let mut out = Vec::new();
            for i in 0..MAX_STREAMS {
                let stream = 1 + 2 * i;
                if grpc {
                    grpc_call(&mut out, stream, "/ringflake.v1.IdService/Batch", &batch);
                } else {
                    frame(&mut out, 1, 0x5, stream, &ids);
                }
            }
            s.write_all(&out).unwrap();
            s
        })
        .collect()
}

/// The segment mode's batches are large answers too: 2 connections each open every stream
/// allowed for `/api/segment/get/{biz_tag}?count=100000` (HTTP/2) or gRPC `SegmentBatch` of
/// 100,000, and never read. They take the turns of `--max-large-answers` and the service stays
/// within [`FLOOD_PEAK_MIB`] (written whole, 512 answers of about 2 MB each would take 1 GiB).
#[test]
fn unread_segment_batches_take_turns_and_stay_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let added = common::ringflake(dir.path())
        .args(["segments", "add", "flood", "--step", "1000000"])
        .output()
        .unwrap();
    assert!(added.status.success(), "{added:?}");
    let serve = Serve::start(dir.path(), &["--no-state-file", "--max-wait", "10"]);
    let (addr, pid) = (serve.addr(), serve.pid);
    let first = get(addr, "/api/segment/get/flood?count=300");
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(json_ids(&first.body).len(), 300);
    // biz_tag = "flood": field 1; count = 100000: field 2, varint.
    let mut batch = vec![0x0a, 5];
    batch.extend_from_slice(b"flood");
    batch.extend_from_slice(&[0x10, 0xa0, 0x8d, 0x06]);
    let http = headers("GET", "/api/segment/get/flood?count=100000", &[]);
    let flooding: Vec<TcpStream> = [false, true]
        .iter()
        .map(|&grpc| {
            let mut s = h2_socket(addr);
            let mut out = Vec::new();
            for i in 0..MAX_STREAMS {
                let stream = 1 + 2 * i;
                if grpc {
                    grpc_call(
                        &mut out,
                        stream,
                        "/ringflake.v1.IdService/SegmentBatch",
                        &batch,
                    );
                } else {
                    frame(&mut out, 1, 0x5, stream, &http);
                }
            }
            s.write_all(&out).unwrap();
            s
        })
        .collect();
    wait_until(
        "every turn taken by an unread segment batch",
        Duration::from_secs(30),
        || json_int(&limits(addr), "large_answers") == Some(MAX_LARGE_ANSWERS),
    );
    std::thread::sleep(Duration::from_secs(2));
    let held = vm_kib(pid, "VmHWM") / 1024;
    eprintln!("peak {held} MiB under 2 segment floods");
    assert!(held < FLOOD_PEAK_MIB, "{held} MiB under 2 segment floods");
    // A small batch is still served at once.
    let small = get(addr, "/api/segment/get/flood?count=10");
    assert_eq!(small.status, 200, "{}", small.body);
    drop(flooding);
}

/// gRPC messages declared 4 MiB long (just below tonic's own limit, which `Health` and
/// reflection kept), sent in part, 16 calls on each of 4 connections to every service: each is
/// refused from its length prefix (`OUT_OF_RANGE`; reflection ends its stream), before its body
/// is read, and the service holds nothing of them.
#[test]
fn half_sent_grpc_messages_are_refused_from_their_length() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--no-state-file"]);
    let (addr, pid) = (serve.addr(), serve.pid);
    let resting = vm_kib(pid, "VmRSS");
    let declared = (4u32 << 20) - 1024;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let answers = runtime.block_on(async {
        let mut calls = Vec::new();
        for c in 0..4 {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            let (client, driver) = h2::client::handshake(tcp).await.unwrap();
            tokio::spawn(driver);
            for i in 0..16 {
                let path = match (c + i) % 4 {
                    0 | 1 => "/grpc.health.v1.Health/Check",
                    2 => "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                    _ => "/ringflake.v1.IdService/Batch",
                };
                let mut client = client.clone().ready().await.unwrap();
                let request = http::Request::post(format!("http://{addr}{path}"))
                    .header("content-type", "application/grpc")
                    .header("te", "trailers")
                    .body(())
                    .unwrap();
                let (answer, mut body) = client.send_request(request, false).unwrap();
                let mut message = vec![0u8];
                message.extend_from_slice(&declared.to_be_bytes());
                message.resize(5 + 60_000, 7);
                body.send_data(bytes::Bytes::from(message), false).unwrap();
                calls.push(tokio::spawn(async move {
                    let within = Duration::from_secs(10);
                    let answer = tokio::time::timeout(within, answer)
                        .await
                        .expect("an answer within 10 s")
                        .unwrap();
                    // In the headers of a unary call's error; in the trailers of a stream's.
                    let mut fields = answer.headers().clone();
                    if !fields.contains_key("grpc-status") {
                        let mut rest = answer.into_body();
                        while let Some(data) = rest.data().await {
                            let _ = data;
                        }
                        fields = tokio::time::timeout(within, rest.trailers())
                            .await
                            .expect("trailers within 10 s")
                            .unwrap()
                            .unwrap_or_default();
                    }
                    drop(body);
                    let field = |name| fields.get(name).map(|v| v.to_str().unwrap().to_string());
                    (path, field("grpc-status"), field("grpc-message"))
                }));
            }
        }
        let mut answers = Vec::new();
        for call in calls {
            answers.push(call.await.unwrap());
        }
        answers
    });
    assert_eq!(answers.len(), 64);
    for (path, status, message) in answers {
        if path.contains("Reflection") {
            // The reflection service ends its stream when its requests fail to decode (with
            // OK, tonic-reflection's choice): ended, not waiting for 4 MiB, is what counts.
            assert!(status.is_some(), "{path}");
            continue;
        }
        assert_eq!(status.as_deref(), Some("11"), "{path}: {message:?}");
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.contains("the%20limit%20is:%204096%20bytes")),
            "{path}: {message:?}"
        );
    }
    let peak = vm_kib(pid, "VmHWM");
    assert!(
        peak < resting + 20 * 1024,
        "{} MiB after 64 half-sent messages of 4 MiB, {} MiB at rest",
        peak / 1024,
        resting / 1024
    );
}

/// 300 connections that send part of HTTP/2's preface and wait: the service waits for the rest
/// without looking again and again (its CPU time stays flat), and closes a connection as soon
/// as its client ends it. One that sends the rest, however slowly, is served.
#[test]
fn a_partial_preface_neither_spins_nor_outlives_its_client() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--no-state-file"]);
    let (addr, pid) = (serve.addr(), serve.pid);
    let mut slow: Vec<TcpStream> = (0..300)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(&PREFACE[..16]).unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(2));
    let spent = cpu_ticks(pid) - before;
    // Looking every millisecond, as the service did, 300 connections took 40 % of a core (83
    // ticks in 2 s, debug build).
    assert!(
        spent <= 10,
        "{spent} ticks of CPU in 2 s for 300 idle connections"
    );
    // Half end their side: the service closes its own at once.
    let start = Instant::now();
    for s in slow.drain(..150) {
        s.shutdown(std::net::Shutdown::Write).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 64];
        let mut s = s;
        assert_eq!(s.read(&mut buf).unwrap(), 0, "the service wrote to it");
    }
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // One sends the rest of its preface, a byte at a time, and its settings and a request.
    let mut s = slow.pop().unwrap();
    for b in &PREFACE[16..] {
        s.write_all(&[*b]).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = Vec::new();
    frame(&mut out, 4, 0, 0, &[]);
    frame(&mut out, 1, 0x5, 1, &headers("GET", "/healthz", &[]));
    s.write_all(&out).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(9).any(|w| w == b"\"status\":") {
        let n = s.read(&mut buf).expect("an answer");
        assert!(n > 0, "closed: {got:?}");
        got.extend_from_slice(&buf[..n]);
    }
}

/// More connections than `--max-connections`: each is closed as soon as it is accepted, the
/// refusals are counted on `/metrics` and in `/status` (from the internal listener, which has a
/// cap of its own) and said once in the log; a connection that ends frees its place.
#[test]
fn connections_beyond_the_cap_are_closed_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(
        dir.path(),
        &[
            "--no-state-file",
            "--max-connections",
            "4",
            "--metrics-listen",
            "127.0.0.1:0",
        ],
    );
    let addr = serve.addr();
    let internal: SocketAddr = serve
        .output()
        .split("metrics on http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok())
        .expect("the metrics address");
    let mut seen = HashSet::new();
    let mut clients: Vec<Client> = (0..4)
        .map(|_| {
            let mut c = Client::new(addr, Duration::from_secs(5));
            let r = c.get("/id").unwrap();
            collect(&mut seen, [r.body.trim().parse().unwrap()]);
            c
        })
        .collect();
    let start = Instant::now();
    for _ in 0..10 {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.write_all(b"GET /id HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut buf = [0u8; 64];
        match s.read(&mut buf) {
            Ok(0) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            other => panic!("a fifth connection was served: {other:?}"),
        }
    }
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let scrape = get(internal, "/metrics").body;
    assert!(
        scrape.contains("\nringflake_connections_refused_total{listener=\"main\"} 10\n")
            && scrape.contains("\nringflake_connections{listener=\"main\"} 4\n")
            && scrape.contains("\nringflake_connections_max 4\n"),
        "{scrape}"
    );
    let status = limits(internal);
    for field in [
        "\"max_connections\":4,",
        "\"connections\":4,",
        "\"refused_connections\":10,",
    ] {
        assert!(status.contains(field), "{field} not in {status}");
    }
    // The line goes to the server's stderr before the refused connection is closed, but reaches
    // `output()` through the test's reader thread, which may lag behind the scrape above.
    let said = || {
        serve
            .output()
            .matches("connections are open (--max-connections)")
            .count()
    };
    wait_until("the refusal said", Duration::from_secs(5), || said() > 0);
    assert_eq!(said(), 1, "{}", serve.output());
    // A client leaves: its place is free again.
    clients.pop();
    let mut next = Client::new(addr, Duration::from_secs(5));
    wait_until("a place freed", Duration::from_secs(5), || {
        next.get("/id").is_ok_and(|r| {
            collect(&mut seen, [r.body.trim().parse().unwrap()]);
            true
        })
    });
    assert!(metric(&get(internal, "/metrics").body, "ringflake_connections_max").is_some());
}

/// Whatever a client sends, an error shows at most 32 characters of it: a 20,000-character
/// generator name, ID, count or path gets an answer of a few hundred bytes.
#[test]
fn every_echo_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--no-state-file"]);
    let addr = serve.addr();
    let long = "n".repeat(20_000);
    let digits = "7".repeat(20_000);
    for path in [
        format!("/id/{long}"),
        format!("/ids/{long}?count=1"),
        format!("/parse/{long}/1"),
        format!("/parse/{digits}"),
        format!("/ids?count={digits}"),
        format!("/ids?count=1&{long}=1"),
        format!("/ids?count=1&format={long}"),
        format!("/{long}"),
        format!("/decodeSnowflakeId?snowflakeId={digits}"),
    ] {
        let r = get(addr, &path);
        assert!(
            (400..500).contains(&r.status) && r.body.len() < 400,
            "{:.60}: {} {} bytes: {:.500}",
            path,
            r.status,
            r.body.len(),
            r.body
        );
        assert!(r.body.contains(" bytes)"), "{:.60}: {}", path, r.body);
    }
}

/// Reads frames from `s` until the server closes it, answering its pings, for at most 60 s:
/// whether it said `GOAWAY` first, and when it closed (or the 60 s ended).
fn answer_pings_until_closed(mut s: TcpStream) -> (bool, Instant) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut goaway = false;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (goaway, Instant::now());
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return (goaway, Instant::now()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        while buf.len() >= 9 {
            let len = u32::from_be_bytes([0, buf[0], buf[1], buf[2]]) as usize;
            if buf.len() < 9 + len {
                break;
            }
            let (kind, flags) = (buf[3], buf[4]);
            if kind == 7 {
                goaway = true;
            }
            if kind == 6 && flags & 1 == 0 {
                let mut pong = Vec::new();
                frame(&mut pong, 6, 1, 0, &buf[9..9 + len]);
                let _ = s.write_all(&pong);
            }
            buf.drain(..9 + len);
        }
    }
}

/// 30 s of nothing, three ways at once: an HTTP/2 connection with no stream, which answers
/// every ping, is closed after 30 s (`GOAWAY`, then the end); one with a stream open (a health
/// `Watch`) is not; and large answers whose client keeps HTTP/2's window shut are abandoned
/// after 30 s without progress, their turns going to the large answer that waited for one.
#[test]
fn thirty_seconds_of_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(
        dir.path(),
        &[
            "--no-state-file",
            "--max-large-answers",
            "2",
            "--max-wait",
            "60",
        ],
    );
    let addr = serve.addr();
    let start = Instant::now();
    let idle = std::thread::spawn({
        let mut s = TcpStream::connect(addr).unwrap();
        let mut out = PREFACE.to_vec();
        frame(&mut out, 4, 0, 0, &[]);
        s.write_all(&out).unwrap();
        move || answer_pings_until_closed(s)
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut seen = HashSet::new();
    runtime.block_on(async {
        let connect = || async {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            let (client, driver) = h2::client::handshake(tcp).await.unwrap();
            tokio::spawn(driver);
            client
        };
        // Two large answers, never read: the client's windows (64 KiB) stay shut.
        let stalled = connect().await;
        let mut unread = Vec::new();
        for _ in 0..2 {
            let mut client = stalled.clone().ready().await.unwrap();
            let request = http::Request::get(format!("http://{addr}/ids?count=100000"))
                .body(())
                .unwrap();
            let (answer, _) = client.send_request(request, true).unwrap();
            unread.push(answer.await.unwrap());
        }
        // A health Watch: a stream that stays open.
        let watching = connect().await;
        let mut client = watching.clone().ready().await.unwrap();
        let request = http::Request::post(format!("http://{addr}/grpc.health.v1.Health/Watch"))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .unwrap();
        let (watch, mut body) = client.send_request(request, false).unwrap();
        // HealthCheckRequest { service: "" }: an empty message.
        body.send_data(bytes::Bytes::from_static(&[0, 0, 0, 0, 0]), true)
            .unwrap();
        let watch = watch.await.unwrap();
        assert_eq!(watch.status(), 200);
        // A large answer that has to wait for a turn: it gets one when the stalled ones are
        // abandoned.
        let waited = tokio::task::spawn_blocking(move || {
            let asked = Instant::now();
            let r = Client::new(addr, Duration::from_secs(70))
                .get("/ids?count=100000")
                .unwrap();
            (r, asked.elapsed())
        })
        .await
        .unwrap();
        let (r, after) = waited;
        assert_eq!(r.status, 200, "{:.300}", r.body);
        assert!(
            after >= Duration::from_secs(25) && after < Duration::from_secs(50),
            "a turn after {after:?}"
        );
        collect(&mut seen, json_ids(&r.body));
        // The watching connection is still served, after more than 30 s.
        let mut client = watching.ready().await.unwrap();
        let request = http::Request::get(format!("http://{addr}/id"))
            .body(())
            .unwrap();
        let (answer, _) = client.send_request(request, true).unwrap();
        let mut answer = answer.await.unwrap().into_body();
        let id = answer.data().await.unwrap().unwrap();
        let id: u64 = std::str::from_utf8(&id).unwrap().trim().parse().unwrap();
        collect(&mut seen, [id]);
        drop((unread, watch));
    });
    let (goaway, closed) = idle.join().unwrap();
    let idle_for = closed - start;
    assert!(goaway, "no GOAWAY before the end");
    assert!(
        idle_for >= Duration::from_secs(29) && idle_for < Duration::from_secs(45),
        "an idle connection closed after {idle_for:?}"
    );
    let scrape = get(addr, "/metrics").body;
    assert!(
        scrape.contains("\nringflake_large_answers_stalled_total 2\n"),
        "{scrape}"
    );
    assert!(
        serve
            .output()
            .contains("a large answer made no progress for 30 s"),
        "{}",
        serve.output()
    );
}
