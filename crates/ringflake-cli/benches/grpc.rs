//! One criterion run for the network side: IDs streamed over gRPC against IDs as JSON over
//! HTTP, against the strongest Rust peer, and the prefetching client against the in-process take.
//!
//! - `wire/stream-1M`: one `IdService.Stream` of 1,000,000 IDs (chunks of 8,192) from
//!   `ringflake serve` into one tonic client, which reads every ID;
//! - `wire/ids-json-100k`: `GET /ids?count=100000` on a keep-alive HTTP/1.1 connection, the JSON
//!   array parsed into numbers (target: `stream-1M` at least 2 x its IDs per second);
//! - `wire/ids-json-100k-twitter`: the same against a service with `--layout twitter`
//!   (millisecond ticks; target: at least 0.95 x `ids-json-100k`);
//! - `wire/ids-json-100k-baseline`: `ids-json-100k` against another build of `ringflake`, the
//!   binary `RINGFLAKE_BENCH_BASELINE` names (an earlier commit's, to compare a change with the
//!   code before it in one run); skipped when unset;
//! - `wire/ferroid-stream-1M`: the same client code against `ferroid-tonic-server` (its
//!   `StreamIds` of 1,000,000 packed IDs), installed with `cargo install ferroid-tonic-server`
//!   and found on `PATH` (or `RINGFLAKE_BENCH_FERROID`); skipped, with a note, when absent;
//! - `server-cpu/*-stream-1M`: the same streams, but the time reported is the CPU time the
//!   server process spent (all its threads, from `/proc/PID/task/*/schedstat`): CPU per million
//!   IDs streamed (target: ringflake's at most ferroid's);
//! - `remote/next_id`: [`RemoteGenerator::next_id`] with IDs buffered (only takes from a buffer
//!   holding the whole batch and more are timed, while no refill runs), against
//!   `remote/take-1-thread`, the in-process [`CachedUidGenerator::next_id`] of `take/1-thread`
//!   (target: at least 0.5 x).
//!
//! Every stream runs within the lead cap's burst: the service runs with `--max-lead 3600`
//! (15 G IDs of borrowing at the default 31/10/22 layout), so no stream waits for the clock;
//! ferroid runs with its defaults and `--num-workers 16`, as its README runs it (each worker
//! issues at most 4,096 IDs a millisecond).
//!
//! Run with `cargo bench --features client --bench grpc` (about two minutes).

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use ringflake::grpc::StreamRequest;
use ringflake::grpc::id_service_client::IdServiceClient;
use ringflake::{CachedUidGenerator, Layout, RemoteGenerator};
use std::hint::black_box;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tonic::transport::Channel;

/// IDs per stream.
const STREAM: u64 = 1_000_000;
/// IDs per `/ids` request (the service's largest).
const JSON_BATCH: u64 = 100_000;

/// A child process killed when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Process {
    /// The CPU time all its threads have spent so far.
    fn cpu(&self) -> Duration {
        let mut ns = 0u64;
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.0.id())) {
            for task in tasks.flatten() {
                let stat =
                    std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
                ns += stat
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        Duration::from_nanos(ns)
    }
}

/// `ringflake serve` (this build's binary) on a free port, within the lead cap's burst.
fn ringflake_serve(dir: &std::path::Path) -> (Process, SocketAddr) {
    ringflake_serve_with(dir, &[])
}

/// [`ringflake_serve`] with more flags (`--layout twitter` for `wire/ids-json-100k-twitter`).
fn ringflake_serve_with(dir: &std::path::Path, extra: &[&str]) -> (Process, SocketAddr) {
    serve_program(env!("CARGO_BIN_EXE_ringflake"), dir, extra)
}

/// `program serve` (a `ringflake` binary) on a free port, within the lead cap's burst.
fn serve_program(program: &str, dir: &std::path::Path, extra: &[&str]) -> (Process, SocketAddr) {
    let mut child = Command::new(program)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--no-state-file",
            "--max-lead",
            "3600",
        ])
        .args(extra)
        .current_dir(dir)
        .env("TZ", "UTC")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start ringflake serve");
    let stdout = child.stdout.take().expect("stdout");
    let process = Process(child);
    let mut lines = BufReader::new(stdout).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("serve exited before listening")
            .expect("serve's output");
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .and_then(|a| a.parse().ok())
                .expect("an address");
        }
    };
    // Keep reading, so that serve never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (process, addr)
}

/// `ferroid-tonic-server` on a port of its own, if it is installed.
fn ferroid_server() -> Option<(Process, SocketAddr)> {
    let program =
        std::env::var("RINGFLAKE_BENCH_FERROID").unwrap_or_else(|_| "ferroid-tonic-server".into());
    let addr: SocketAddr = "127.0.0.1:24651".parse().expect("address");
    // As its README runs it: 16 workers (each an async task with its own machine id, at most
    // 4,096 IDs a millisecond with its 12 sequence bits), chunks of 4,096 (its default).
    let child = Command::new(&program)
        .args(["--server-addr", &addr.to_string(), "--num-workers", "16"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(child) = child else {
        eprintln!(
            "wire/ferroid-stream-1M, server-cpu/ferroid-stream-1M: skipped: cannot run {program} \
             (cargo install ferroid-tonic-server, or set RINGFLAKE_BENCH_FERROID)"
        );
        return None;
    };
    let mut process = Process(child);
    let start = Instant::now();
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(status)) = process.0.try_wait() {
            panic!("{program} exited at start: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{program} does not listen on {addr}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Some((process, addr))
}

/// ferroid's request and chunk (`ferroid.IdGenerator/StreamIds`), as its proto defines them.
#[derive(Clone, PartialEq, prost::Message)]
struct StreamIdsRequest {
    #[prost(uint64, tag = "1")]
    count: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct IdChunk {
    #[prost(bytes = "vec", tag = "1")]
    packed_ids: Vec<u8>,
}

/// What the shared client code does with every ID it receives: reads it.
fn consume(ids: impl Iterator<Item = u64>, sink: &mut u64) -> u64 {
    let mut n = 0;
    for id in ids {
        *sink ^= id;
        n += 1;
    }
    n
}

/// One ringflake `Stream` of `STREAM` IDs, every ID read.
async fn ringflake_stream(client: &mut IdServiceClient<Channel>) -> u64 {
    let request = StreamRequest {
        generator: String::new(),
        count: STREAM,
        chunk: 8_192,
    };
    let mut stream = client.stream(request).await.expect("Stream").into_inner();
    let (mut n, mut sink) = (0, 0);
    while let Some(chunk) = stream.message().await.expect("chunk") {
        n += consume(chunk.ids.into_iter(), &mut sink);
    }
    black_box(sink);
    n
}

/// One ferroid `StreamIds` of `STREAM` IDs, every ID read (8 bytes little-endian each).
async fn ferroid_stream(client: &mut tonic::client::Grpc<Channel>) -> u64 {
    client.ready().await.expect("ready");
    let path = http::uri::PathAndQuery::from_static("/ferroid.IdGenerator/StreamIds");
    let request = tonic::Request::new(StreamIdsRequest { count: STREAM });
    let codec = tonic_prost::ProstCodec::<StreamIdsRequest, IdChunk>::default();
    let mut stream = client
        .server_streaming(request, path, codec)
        .await
        .expect("StreamIds")
        .into_inner();
    let (mut n, mut sink) = (0, 0);
    while let Some(chunk) = stream.message().await.expect("chunk") {
        let ids = chunk
            .packed_ids
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
        n += consume(ids, &mut sink);
    }
    black_box(sink);
    n
}

/// `GET /ids?count=100000` on a keep-alive connection; the IDs parsed.
fn json_ids(conn: &mut BufReader<TcpStream>, sink: &mut u64) -> u64 {
    conn.get_mut()
        .write_all(b"GET /ids?count=100000 HTTP/1.1\r\nHost: bench\r\n\r\n")
        .expect("write");
    let mut len = 0;
    loop {
        let mut line = String::new();
        conn.read_line(&mut line).expect("head");
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().expect("length");
        }
    }
    let mut body = vec![0u8; len];
    conn.read_exact(&mut body).expect("body");
    let ids = body.split(|&b| b == b',').map(|s| {
        let digits = s.iter().filter(|b| b.is_ascii_digit());
        digits.fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'))
    });
    consume(ids, sink)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn wire(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (serve, addr) = ringflake_serve(dir.path());
    let ferroid = ferroid_server();
    let rt = runtime();
    let channel = |addr: SocketAddr| {
        rt.block_on(
            tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
                .expect("uri")
                .connect(),
        )
        .expect("connect")
    };
    let mut ids = IdServiceClient::new(channel(addr));
    let mut peer = ferroid
        .as_ref()
        .map(|(_, addr)| tonic::client::Grpc::new(channel(*addr)));

    let mut group = c.benchmark_group("wire");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(6));
    group.throughput(Throughput::Elements(STREAM));
    group.bench_function("stream-1M", |b| {
        b.iter(|| assert_eq!(rt.block_on(ringflake_stream(&mut ids)), STREAM))
    });
    if let Some(peer) = peer.as_mut() {
        group.bench_function("ferroid-stream-1M", |b| {
            b.iter(|| assert_eq!(rt.block_on(ferroid_stream(peer)), STREAM))
        });
    }
    group.throughput(Throughput::Elements(JSON_BATCH));
    let tcp = TcpStream::connect(addr).expect("connect");
    tcp.set_nodelay(true).expect("nodelay");
    let mut conn = BufReader::new(tcp);
    let mut sink = 0;
    group.bench_function("ids-json-100k", |b| {
        b.iter(|| assert_eq!(json_ids(&mut conn, &mut sink), JSON_BATCH))
    });
    // The same against the baseline build, if one is named.
    let baseline_dir = tempfile::tempdir().expect("temporary directory");
    if let Ok(program) = std::env::var("RINGFLAKE_BENCH_BASELINE") {
        let (_baseline, baseline_addr) = serve_program(&program, baseline_dir.path(), &[]);
        let tcp = TcpStream::connect(baseline_addr).expect("connect");
        tcp.set_nodelay(true).expect("nodelay");
        let mut baseline_conn = BufReader::new(tcp);
        group.bench_function("ids-json-100k-baseline", |b| {
            b.iter(|| assert_eq!(json_ids(&mut baseline_conn, &mut sink), JSON_BATCH))
        });
    }
    // The same with Twitter's layout (millisecond ticks), from a service of its own (target: at
    // least 0.95 x `ids-json-100k`).
    let twitter_dir = tempfile::tempdir().expect("temporary directory");
    let (_twitter, twitter_addr) =
        ringflake_serve_with(twitter_dir.path(), &["--layout", "twitter"]);
    let tcp = TcpStream::connect(twitter_addr).expect("connect");
    tcp.set_nodelay(true).expect("nodelay");
    let mut twitter_conn = BufReader::new(tcp);
    group.bench_function("ids-json-100k-twitter", |b| {
        b.iter(|| assert_eq!(json_ids(&mut twitter_conn, &mut sink), JSON_BATCH))
    });
    black_box(sink);
    group.finish();

    // Server CPU per stream of a million IDs: the time criterion reports is the server's.
    let mut group = c.benchmark_group("server-cpu");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(6));
    group.bench_function("ringflake-stream-1M", |b| {
        b.iter_custom(|iters| {
            let before = serve.cpu();
            for _ in 0..iters {
                rt.block_on(ringflake_stream(&mut ids));
            }
            serve.cpu() - before
        })
    });
    if let (Some((process, _)), Some(peer)) = (ferroid.as_ref(), peer.as_mut()) {
        group.bench_function("ferroid-stream-1M", |b| {
            b.iter_custom(|iters| {
                let before = process.cpu();
                for _ in 0..iters {
                    rt.block_on(ferroid_stream(peer));
                }
                process.cpu() - before
            })
        });
    }
    group.finish();
}

fn remote(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (_serve, addr) = ringflake_serve(dir.path());
    let client = RemoteGenerator::builder(format!("http://{addr}"))
        .capacity(1 << 22)
        .build()
        .expect("RemoteGenerator");
    let local = CachedUidGenerator::builder(Layout::default())
        .worker_id(1)
        .unbounded_lead()
        .build()
        .expect("CachedUidGenerator");

    let mut group = c.benchmark_group("remote");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(1));
    group.bench_function("next_id", |b| {
        b.iter_custom(|iters| {
            // Warm takes only: each timed batch of at most 2^18 IDs starts with the buffer
            // holding it and 2^20 more, above the fetcher's refill mark (half its target, at most
            // a quarter of the capacity: 2^20), so no refill starts during the batch and the
            // takes do not share the two cores with a fetch and the service. Between batches,
            // a buffer below that is emptied untimed (which wakes the fetcher and keeps the
            // measured demand, and so the refill, at its largest) and the refill waited for to
            // its end. The waits are
            // not counted; at least 2^20 takes a call, however few criterion asks for, so that
            // a call times takes, not the clock.
            let mut timed = Duration::ZERO;
            let taken = iters.max(1 << 20);
            let mut left = taken;
            while left > 0 {
                let n = left.min(1 << 18);
                let start = Instant::now();
                while client.stats().buffered < n + (1 << 20) {
                    assert!(
                        start.elapsed() < Duration::from_secs(60),
                        "the buffer does not fill: {:?}",
                        client.stats()
                    );
                    while client.try_next_id().is_some() {}
                    black_box(client.next_id().expect("next_id"));
                    // Until the refill is over: enough buffered, and no more arriving.
                    let filling = Instant::now();
                    let mut before = u64::MAX;
                    while filling.elapsed() < Duration::from_millis(500) {
                        std::thread::sleep(Duration::from_millis(2));
                        let now = client.stats().buffered;
                        if now >= n + (1 << 20) && now == before {
                            break;
                        }
                        before = now;
                    }
                }
                let start = Instant::now();
                for _ in 0..n {
                    black_box(client.next_id().expect("next_id"));
                }
                timed += start.elapsed();
                left -= n;
            }
            timed.mul_f64(iters as f64 / taken as f64)
        })
    });
    group.bench_function("take-1-thread", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(local.next_id().expect("next_id"));
            }
            start.elapsed()
        })
    });
    group.finish();
    eprintln!("remote/next_id: {:?}", client.stats());
}

criterion_group!(benches, wire, remote);
criterion_main!(benches);
