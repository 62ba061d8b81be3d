//! The client of `scripts/count-routes.sh`: drives one route of a `ringflake serve` (or of
//! `examples/http_floor`) running under callgrind, over one kept-alive connection, and brackets
//! the measured requests with `callgrind_control --zero` and `--dump`, so that the dump holds
//! the server's instructions for exactly those requests. Then it keeps the connection open and
//! idle for `COUNT_IDLE_WINDOWS` (default 3) times as long as the measured window took,
//! bracketed the same way: the script takes that second dump, divided by as much (the idle
//! threads' own work: the filler's and keepers' wake-ups), off the first. Before zeroing, it
//! leaves the server alone for a second, so that work the previous route left behind is done.
//!
//! ```text
//! cargo build --release -p ringflake-server --example count_routes
//! count_routes PID ADDR ROUTE N [WARMUP]
//! ```
//!
//! `ROUTE` is an HTTP path (`/id`, `/ids?count=1000`, `/api/segment/get/orders`: `N` GETs over one
//! HTTP/1.1 connection), `grpc:next` (`N` unary `Next` calls over one HTTP/2 connection, one
//! after the other) or `grpc:stream` (one `Stream` of `N` IDs). `WARMUP` requests (default 200;
//! for `grpc:stream` a stream of that many IDs) go first, outside the window, so that lazily made
//! state (thread-local caches, the connection's buffers) is made before counting. Every answer
//! must be a 200 (or a gRPC OK) with a body; the program exits 1 otherwise. Prints
//! `count: ROUTE N requests, window S s` on success. On 127.0.0.1 only.
//!
//! `CALLGRIND_CONTROL` names the `callgrind_control` to run (default: the one on `PATH`).

use ringflake::grpc::id_service_client::IdServiceClient;
use ringflake::grpc::{NextRequest, StreamRequest};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: count_routes PID ADDR ROUTE N [WARMUP]";
    let (Some(pid), Some(addr), Some(route), Some(n)) =
        (args.first(), args.get(1), args.get(2), args.get(3))
    else {
        exit(usage)
    };
    let pid: u32 = pid.parse().unwrap_or_else(|_| exit(usage));
    let addr: SocketAddr = addr.parse().unwrap_or_else(|_| exit(usage));
    if !addr.ip().is_loopback() {
        exit(&format!("refusing to load {addr}: only 127.0.0.0/8"));
    }
    let n: u64 = n.parse().unwrap_or_else(|_| exit(usage));
    let warmup: u64 = args
        .get(4)
        .map_or(Ok(200), |w| w.parse())
        .unwrap_or_else(|_| exit(usage));
    if n == 0 {
        exit(&format!("{usage}: N must be at least 1"));
    }
    let window = match route.as_str() {
        "grpc:next" | "grpc:stream" => grpc(pid, addr, route, n, warmup),
        path if path.starts_with('/') => http(pid, addr, path, n, warmup),
        other => exit(&format!("{usage}: unknown route {other:?}")),
    };
    println!(
        "count: {route} {n} requests, window {:.3} s",
        window.as_secs_f64()
    );
}

fn exit(message: &str) -> ! {
    eprintln!("count_routes: {message}");
    std::process::exit(1)
}

/// Runs `callgrind_control ARG PID`, which must succeed.
fn control(arg: &str, pid: u32) {
    let program = std::env::var("CALLGRIND_CONTROL").unwrap_or_else(|_| "callgrind_control".into());
    // Its output (and vgdb's "sending command" lines) only when it fails.
    let output = std::process::Command::new(&program)
        .arg(arg)
        .arg(pid.to_string())
        .output()
        .unwrap_or_else(|e| exit(&format!("cannot run {program}: {e}")));
    if !output.status.success() {
        exit(&format!(
            "{program} {arg} {pid} failed: {}: {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
}

/// How long the server is left alone after the warm-up, before the counters are zeroed: the
/// work the previous route left behind (the filler refilling the ring after `/ids` took 300,000
/// IDs) is done outside the window, not charged to the next route.
const SETTLE: Duration = Duration::from_secs(1);

/// The idle window's length in measured windows (`COUNT_IDLE_WINDOWS`, default 3): the idle
/// threads' wake-ups (the filler's second-by-second fills, the keepers') come a few at a time,
/// and a longer idle window averages them better. The script divides the idle dump by it.
fn idle_windows() -> u32 {
    std::env::var("COUNT_IDLE_WINDOWS")
        .ok()
        .and_then(|w| w.parse().ok())
        .filter(|&w| w >= 1)
        .unwrap_or(3)
}

/// How long to stay idle after a window of `window`, the dump's own latency (`spent` so far)
/// counted in.
fn idle_for(window: Duration, spent: Duration) -> Duration {
    (window * idle_windows()).saturating_sub(spent + Duration::from_millis(1))
}

/// Waits [`SETTLE`], zeroes the counters, runs `measured`, dumps: the window's length. Then
/// [`idle_windows`] times that length idle, zeroed and dumped likewise.
fn bracket(pid: u32, label: &str, measured: impl FnOnce()) -> Duration {
    std::thread::sleep(SETTLE);
    let start = Instant::now();
    control("--zero", pid);
    measured();
    control(&format!("--dump={label}"), pid);
    let window = start.elapsed();
    let idle = Instant::now();
    control("--zero", pid);
    std::thread::sleep(idle_for(window, idle.elapsed()));
    // The dump's own latency is in both windows.
    control("--dump=idle", pid);
    window
}

/// `n` GETs of `path` over one HTTP/1.1 connection.
fn http(pid: u32, addr: SocketAddr, path: &str, n: u64, warmup: u64) -> Duration {
    let stream = TcpStream::connect(addr).unwrap_or_else(|e| exit(&format!("connect: {e}")));
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap_or_else(|e| exit(&format!("{e}")));
    let mut reader = BufReader::new(stream);
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let mut get = || {
        writer
            .write_all(request.as_bytes())
            .unwrap_or_else(|e| exit(&format!("write: {e}")));
        read_answer(&mut reader, path);
    };
    for _ in 0..warmup {
        get();
    }
    bracket(pid, path, || {
        for _ in 0..n {
            get();
        }
    })
}

/// Reads one HTTP/1.1 answer, which must be a 200 with a body (by `content-length` or chunked).
fn read_answer(reader: &mut BufReader<TcpStream>, path: &str) {
    let mut line = String::new();
    let mut status = None;
    let (mut length, mut chunked) = (None, false);
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => exit(&format!("{path}: the connection closed")),
            Ok(_) => {}
        }
        let header = line.trim_end();
        if status.is_none() {
            status = Some(header.to_string());
            continue;
        }
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':').unwrap_or((header, ""));
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        }
    }
    let status = status.unwrap_or_default();
    if !status.starts_with("HTTP/1.1 200 ") {
        exit(&format!("{path}: answered {status:?}"));
    }
    let mut body = Vec::new();
    if let Some(length) = length {
        body.resize(length, 0);
        reader
            .read_exact(&mut body)
            .unwrap_or_else(|e| exit(&format!("{path}: body: {e}")));
    } else if chunked {
        loop {
            line.clear();
            reader
                .read_line(&mut line)
                .unwrap_or_else(|e| exit(&format!("{path}: chunk: {e}")));
            let size = usize::from_str_radix(line.trim_end(), 16)
                .unwrap_or_else(|_| exit(&format!("{path}: bad chunk size {line:?}")));
            let mut chunk = vec![0; size + 2];
            reader
                .read_exact(&mut chunk)
                .unwrap_or_else(|e| exit(&format!("{path}: chunk: {e}")));
            body.extend_from_slice(&chunk[..size]);
            if size == 0 {
                break;
            }
        }
    } else {
        exit(&format!(
            "{path}: an answer without content-length or chunks"
        ));
    }
    if body.is_empty() {
        exit(&format!("{path}: an empty body"));
    }
}

/// `grpc:next` (`n` unary calls) or `grpc:stream` (one stream of `n` IDs) over one HTTP/2
/// connection.
fn grpc(pid: u32, addr: SocketAddr, route: &str, n: u64, warmup: u64) -> Duration {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| exit(&format!("cannot start a runtime: {e}")));
    runtime.block_on(async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap_or_else(|e| exit(&e.to_string()))
            .connect()
            .await
            .unwrap_or_else(|e| exit(&format!("cannot connect to {addr}: {e}")));
        let mut client = IdServiceClient::new(channel);
        let stream = route == "grpc:stream";
        if stream {
            stream_ids(&mut client, warmup).await;
        } else {
            for _ in 0..warmup {
                next(&mut client).await;
            }
        }
        tokio::time::sleep(SETTLE).await;
        let start = Instant::now();
        control("--zero", pid);
        if stream {
            stream_ids(&mut client, n).await;
        } else {
            for _ in 0..n {
                next(&mut client).await;
            }
        }
        control(&format!("--dump={route}"), pid);
        let window = start.elapsed();
        let idle = Instant::now();
        control("--zero", pid);
        tokio::time::sleep(idle_for(window, idle.elapsed())).await;
        control("--dump=idle", pid);
        drop(client);
        window
    })
}

type Client = IdServiceClient<tonic::transport::Channel>;

/// One unary `Next`, which must answer an ID.
async fn next(client: &mut Client) {
    match client.next(NextRequest::default()).await {
        Ok(answer) if answer.get_ref().id != 0 => {}
        Ok(_) => exit("Next answered ID 0"),
        Err(status) => exit(&format!("Next failed: {status}")),
    }
}

/// One `Stream` of `n` IDs in the service's default chunks, every ID read.
async fn stream_ids(client: &mut Client, n: u64) {
    let request = StreamRequest {
        generator: String::new(),
        count: n,
        chunk: 0,
    };
    let mut stream = match client.stream(request).await {
        Ok(answer) => answer.into_inner(),
        Err(status) => exit(&format!("Stream failed: {status}")),
    };
    let mut got = 0u64;
    loop {
        match stream.message().await {
            Ok(Some(chunk)) => got += chunk.ids.len() as u64,
            Ok(None) => break,
            Err(status) => exit(&format!("Stream failed: {status}")),
        }
    }
    if got != n {
        exit(&format!("Stream answered {got} IDs of {n}"));
    }
}
