//! A gRPC load generator for `ringflake serve`, what `scripts/load.sh` runs beside wrk: for a
//! bounded time each, unary `Next` calls from many concurrent tasks on one HTTP/2 connection
//! (calls a second and latency percentiles), then `Stream`s of a million IDs into one client that
//! reads every ID (IDs a second). On 127.0.0.1 only.
//!
//! ```text
//! cargo run --release --features client --example grpc_load -- ADDR [SECONDS] [CONCURRENCY] [next|stream]
//! ```
//!
//! Prints `grpc-next: …` and `grpc-stream: …` (one of them with `next` or `stream`); exits 1 if
//! any call failed.

use ringflake::grpc::id_service_client::IdServiceClient;
use ringflake::grpc::{NextRequest, StreamRequest};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: grpc_load ADDR [SECONDS] [CONCURRENCY] [next|stream]";
    let addr: SocketAddr = match args.first().map(|a| a.parse()) {
        Some(Ok(addr)) => addr,
        _ => exit(usage),
    };
    if !addr.ip().is_loopback() {
        exit(&format!("refusing to load {addr}: only 127.0.0.0/8"));
    }
    let seconds: u64 = args.get(1).map_or(Ok(10), |s| s.parse()).unwrap_or(0);
    let concurrency: usize = args.get(2).map_or(Ok(64), |s| s.parse()).unwrap_or(0);
    if !(1..=300).contains(&seconds) || !(1..=4096).contains(&concurrency) {
        exit(&format!("{usage}: SECONDS 1..=300, CONCURRENCY 1..=4096"));
    }
    let (next, stream) = match args.get(3).map(String::as_str) {
        None => (true, true),
        Some("next") => (true, false),
        Some("stream") => (false, true),
        Some(other) => exit(&format!("{usage}: unknown mode {other:?}")),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| exit(&format!("cannot start a runtime: {e}")));
    let length = Duration::from_secs(seconds);
    runtime.block_on(async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap_or_else(|e| exit(&e.to_string()))
            .connect()
            .await
            .unwrap_or_else(|e| exit(&format!("cannot connect to {addr}: {e}")));
        let client = IdServiceClient::new(channel);
        if next {
            unary(client.clone(), length, concurrency).await;
        }
        if stream {
            streams(client, length).await;
        }
    });
}

fn exit(message: &str) -> ! {
    eprintln!("grpc_load: {message}");
    std::process::exit(1)
}

type Client = IdServiceClient<tonic::transport::Channel>;

/// Unary `Next` from `concurrency` tasks, for `length`.
async fn unary(client: Client, length: Duration, concurrency: usize) {
    let end = Instant::now() + length;
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let mut client = client.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < end {
                let start = Instant::now();
                client.next(NextRequest::default()).await?;
                latencies.push(start.elapsed());
            }
            Ok::<_, tonic::Status>(latencies)
        }));
    }
    let started = Instant::now();
    let mut latencies = Vec::new();
    for task in tasks {
        match task.await {
            Ok(Ok(mine)) => latencies.extend(mine),
            Ok(Err(status)) => exit(&format!("Next failed: {status}")),
            Err(e) => exit(&format!("a task failed: {e}")),
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 - 1.0) * q) as usize;
        latencies.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e6)
    };
    println!(
        "grpc-next: {} calls, {:.0} calls/s p50 {:.0} us p99 {:.0} us ({concurrency} concurrent \
         calls on one HTTP/2 connection)",
        latencies.len(),
        latencies.len() as f64 / elapsed,
        at(0.5),
        at(0.99)
    );
}

/// `Stream`s of a million IDs, one after the other, for `length`.
async fn streams(mut client: Client, length: Duration) {
    let started = Instant::now();
    let (mut ids, mut sink) = (0u64, 0u64);
    while started.elapsed() < length {
        let request = StreamRequest {
            generator: String::new(),
            count: 1_000_000,
            chunk: 8_192,
        };
        let mut stream = match client.stream(request).await {
            Ok(answer) => answer.into_inner(),
            Err(status) => exit(&format!("Stream failed: {status}")),
        };
        loop {
            match stream.message().await {
                Ok(Some(chunk)) => {
                    for id in chunk.ids {
                        sink ^= id;
                        ids += 1;
                    }
                }
                Ok(None) => break,
                Err(status) => exit(&format!("Stream failed: {status}")),
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    std::hint::black_box(sink);
    println!(
        "grpc-stream: {ids} IDs, {:.1} M IDs/s (Stream of 1,000,000 IDs in chunks of 8,192, into \
         one client reading every ID)",
        ids as f64 / elapsed / 1e6
    );
}
