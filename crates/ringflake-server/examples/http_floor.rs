//! The physical floor for `ringflake serve`'s `GET /id`: the same HTTP stack set up the same way
//! (one listening socket, one single-threaded Tokio runtime per core each accepting on its own
//! clone of it, hyper's HTTP/1 with `TCP_NODELAY` and a header timeout, from the service's own
//! `listen` module), answering every request with a counter as `text/plain` and doing nothing
//! else. `scripts/load.sh` loads it right after the service with the same request, `GET /id`, so
//! the ratio `/id ÷ floor` holds on a noisy machine.
//!
//! With `--raw` it drops hyper as well: the same sockets and runtimes, but each connection reads
//! bytes and answers every complete header block (`\r\n\r\n`) with a fixed `200` carrying a
//! counter, in one write per read, with no HTTP parsing at all. That is the physical floor of the
//! machine: two system calls per request (one read, one write) and the kernel's loopback TCP. It
//! is not an HTTP server (it answers anything); it only serves to show how much of the cost is the
//! HTTP library and how much the kernel and the load generator.
//!
//! ```text
//! cargo run --release --example http_floor -- [--raw] [ADDR] [THREADS]   (default 127.0.0.1:0, one per core)
//! ```
//!
//! Prints `listening on http://ADDR ` on its first line; stops on SIGTERM or Ctrl-C.

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

// The service's own socket and HTTP/1 set-up.
#[path = "../src/server/listen.rs"]
mod listen;

async fn serve(listener: tokio::net::TcpListener, counter: Arc<AtomicU64>, raw: bool) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        listen::prepare(&stream);
        let counter = Arc::clone(&counter);
        if raw {
            tokio::spawn(answer_raw(stream, counter));
            continue;
        }
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |_req| {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                async move {
                    let mut res = Response::new(Full::new(Bytes::from(n.to_string())));
                    res.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("text/plain"),
                    );
                    Ok::<_, Infallible>(res)
                }
            });
            let _ = listen::http1()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// `--raw`: answers every complete header block on `stream` with a fixed `200`, no parsing.
async fn answer_raw(mut stream: tokio::net::TcpStream, counter: Arc<AtomicU64>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut input = vec![0u8; 16 * 1024];
    let mut have = 0;
    let mut output = Vec::with_capacity(16 * 1024);
    loop {
        let n = match stream.read(&mut input[have..]).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        have += n;
        let mut done = 0;
        while let Some(end) = input[done..have].windows(4).position(|w| w == b"\r\n\r\n") {
            done += end + 4;
            let body = counter.fetch_add(1, Ordering::Relaxed).to_string();
            output.extend_from_slice(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
        if done == 0 && have == input.len() {
            return; // a header block larger than the buffer: not a load generator's request
        }
        input.copy_within(done..have, 0);
        have -= done;
        if !output.is_empty() {
            if stream.write_all(&output).await.is_err() {
                return;
            }
            output.clear();
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).peekable();
    let raw = args.next_if(|a| a == "--raw").is_some();
    let addr: SocketAddr = args.next().as_deref().unwrap_or("127.0.0.1:0").parse()?;
    let threads = match args.next() {
        Some(n) => n.parse()?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let listener = listen::bind(addr)?;
    let addr = listener.local_addr()?;
    let counter = Arc::new(AtomicU64::new(0));
    for i in 0..threads {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let counter = Arc::clone(&counter);
        let listener = listener.try_clone()?;
        std::thread::Builder::new()
            .name(format!("floor-http-{i}"))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a Tokio runtime");
                rt.block_on(async move {
                    let listener = match listen::accept_on(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    serve(listener, counter, raw).await;
                });
            })?;
        ready_rx.recv()??;
    }
    let stack = if raw {
        "no HTTP library (--raw)"
    } else {
        "hyper"
    };
    println!("listening on http://{addr} with {threads} threads, {stack}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        Ok::<_, std::io::Error>(())
    })?;
    Ok(())
}
